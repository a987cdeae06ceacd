"""Tensor, defined here once, and the conversion of Python data and arrays to tensors (the
recording factories that make operations of the rules are in _factories).

A tensor holds a raw backend array, its namespace, and `_edge`: None when it needs no
gradient, else where its gradient goes: the node that made it (a Port for output i of a node
with several outputs), or for a leaf its AccumulateGrad. In forward mode, `_fw` (set only on
dual tensors) maps dual levels to tangents. Operators and array methods that
need the namespace layer are bound from the one table in `_methods`."""

from __future__ import annotations

import copy
import weakref
from typing import TYPE_CHECKING, Any

from . import _backend
from ._backend import ndarray
from ._mode import enable_grad, grad_mode, is_grad_enabled, no_grad, set_grad_enabled
from ._node import (
    AccumulateGrad,
    Alias,
    Node,
    Port,
    RemovableHandle,
    VersionCounter,
    View,
    hooks_of,
    node_of,
)
from ._state import STATE

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

    from . import _interop, _numpy_methods, _torch_methods, _torch_sorting
    from ._typing import ArrayLike, Axis, Device, DTypeLike, IndexKey

__all__ = [
    "Tensor",
    "alias_group",
    "as_tensor",
    "as_tensors",
    "constant",
    "converted",
    "dual",
    "enable_grad",
    "grad_mode",
    "is_grad_enabled",
    "lift",
    "mixed_error",
    "no_grad",
    "operand",
    "raw",
    "set_grad_enabled",
    "share",
    "version_counter",
    "view_of",
]

# Python's numbers, for `x.__class__ in _SCALARS`: a set finds a class by its hash (its
# address); a tuple compared each class before it by == (object_richcompare both ways):
# about 250 instructions for a float, 500 for an array (an Adam step's 36 ops with a Python
# number, benchmarks/compile_optimizers.py --instructions).
_SCALARS = frozenset((bool, int, float, complex))


# ----------------------------------------------------------------------------- versions


def version_counter(t: Tensor) -> VersionCounter:
    """t's version counter, made on first use (most tensors never need one)."""
    vc = getattr(t, "_vc", None)
    if vc is None:
        vc = t._vc = VersionCounter()
    return vc


# ----------------------------------------------------------------------------- aliases
# A view (a view rule's result that shares its input's memory), detach() and .data join their
# source's Alias group, kept on the version counter; a view also records how it is made from
# its base (View). Only in-place writes read either (see _inplace): an operation that is no
# view pays nothing for them.


def alias_group(t: Tensor) -> Alias | None:
    """The Alias group of the tensors that share t's memory, or None."""
    vc = getattr(t, "_vc", None)
    return None if vc is None else vc.group


def view_of(t: Tensor) -> View | None:
    """How t is made from its base, if t is a view of a tensor (PyTorch's `_base`)."""
    return getattr(t, "_view", None)


def share(source: Tensor, t: Tensor, step: tuple = ()) -> None:
    """Make t, whose counter is set, a member of source's alias group (made on first use):
    its values made from source's by the view `step`, or the same values."""
    kind = _backend.aliasing(source._xp)
    if kind is None:
        return
    group = alias_group(source)
    if group is None:
        group = Alias(kind == "memory")
        version_counter(source)
        group.add(source, ())
    path = group.path(source)
    if step and not group.mutable and group.root is None:
        group.root = source._data  # path is (): source holds the root values
    group.add(t, path + step)


def same_values(source: Tensor, t: Tensor) -> None:
    """t, a new tensor of source's array, made one with it in memory: one version counter (a
    write to either counts for both) and source's place in its alias group (where views are
    bookkeeping, JAX's and Dask's, a view of t replays source's steps from the root)."""
    t._vc = version_counter(source)
    share(source, t)


def dual(t: Tensor) -> bool:
    """Whether t may carry a tangent that forward mode sees: functions that compute a result
    outside the rule table when nothing needs a gradient must take the recorded path then."""
    return bool(grad_mode.forward) and getattr(t, "_fw", None) is not None


def _has_tangent(t: Tensor) -> bool:
    """Whether t carries a tangent at a forward-mode level that operations see now."""
    fw = getattr(t, "_fw", None)
    if fw:
        for level in grad_mode.forward:
            if fw.get(level) is not None:
                return True
    return False


# ----------------------------------------------------------------------------- conversion


def raw(x):
    """The raw array of a tensor; Python scalars pass as they are."""
    return x._data if x.__class__ is Tensor else x


def mixed_error(name: str, xp, other) -> None:
    raise TypeError(
        f"{name}: cannot mix arrays of different libraries in one operation: "
        f"{_backend.name_of(xp)} and {_backend.name_of(other)}"
    )


def as_tensors(xs, name: str):
    """Tensors of one namespace from a sequence of tensors, arrays and Python scalars (which
    stay as they are), and that namespace."""
    xs = tuple(xs)
    xp = None
    for x in xs:
        if x.__class__ is Tensor:
            oxp = x._xp
        elif x.__class__ in _SCALARS or x.__class__ is ndarray or not _backend.is_array(x):
            continue
        else:  # a raw array of another library than NumPy counts as a tensor of it would
            oxp = _backend.namespace(x)
            if oxp is _backend.np:
                continue
        if xp is None:
            xp = oxp
        elif oxp is not xp:
            xp = _joint(name, xp, oxp)
    if xp is None:
        xp = _backend.default_namespace()
    return tuple(
        x if x.__class__ in _SCALARS or x.__class__ is Tensor and x._xp is xp else constant(x, xp)
        for x in xs
    ), xp


def _joint(name: str, xp, other):
    """The namespace of an operation on arrays of `xp` and `other`: one of them where that
    library takes the other's arrays as operands (Dask takes NumPy's), else a TypeError."""
    joint = _backend.joint_namespace(xp, other)
    if joint is None:
        mixed_error(name, xp, other)
    return joint


def lift(name: str, xs):
    """Tensors of two libraries, one of which takes the other's arrays, in that one."""
    xp = _joint(name, xs[0]._xp, xs[1]._xp)
    return tuple(constant(x, xp) for x in xs)


def operand(obj, xp, name: str) -> Tensor:
    """A raw operand (array or Python data) of an operation on `xp` tensors, as a tensor that
    needs no grad: one of a library that takes xp's arrays stays in it (a Dask array next to
    NumPy tensors: the operation is lifted to Dask, and stays lazy), else constant(obj, xp)."""
    if obj.__class__ is not ndarray and _backend.is_array(obj):
        oxp = _backend.namespace(obj)
        if oxp is not xp and oxp is not _backend.np and _joint(name, xp, oxp) is oxp:
            return Tensor(obj, oxp, None)
    return constant(obj, xp)


def constant(obj, xp) -> Tensor:
    """A tensor that needs no gradient, from an array or Python data, in namespace `xp`
    (a tensor of that namespace as it is; one of another library that `xp` takes, wrapped)."""
    if obj.__class__ is Tensor:
        if obj._xp is xp:
            return obj
        # One that requires grad or carries a tangent is lifted (vmap's samples: its
        # derivatives go through the lift) or refused, never taken as a constant.
        if obj._edge is not None or _has_tangent(obj):
            lifted = STATE.lift(obj, xp) if STATE.lift is not None else None
            if lifted is not None:
                return lifted
            what = "requires grad" if obj._edge is not None else "carries a forward-mode tangent"
            raise TypeError(
                f"a {_backend.name_of(obj._xp)} tensor that {what} can't join an "
                f"operation on {_backend.name_of(xp)} arrays (its derivative would be of the "
                f"other library): make it a {_backend.name_of(xp)} array first"
            )
        obj = obj._data
    if _backend.is_array(obj) and not isinstance(obj, _backend.np.generic):
        if obj.__class__ is not ndarray:  # a traced function's NumPy argument: the argument
            obj = _backend.unwatched(obj)
        oxp = _backend.namespace(obj)
        _backend.checked(obj)
        if oxp is not xp:
            _joint("constant", xp, oxp)
            return Tensor(_backend.normalize(xp.asarray(obj), xp), xp, None)
        return Tensor(_backend.normalize(obj, xp), xp, None)
    if obj.__class__ is list or obj.__class__ is tuple:
        _sequence(obj)
    return Tensor(_backend.checked(_backend.normalize(xp.asarray(obj), xp)), xp, None)


def as_tensor(obj) -> Tensor:
    """`obj` as a tensor: tensors as they are, arrays wrapped without copy, Python data
    converted by the default namespace."""
    if obj.__class__ is Tensor:
        return obj
    if _backend.is_array(obj):
        if obj.__class__ is not ndarray:
            obj = _backend.unwatched(obj)
        xp = _backend.namespace(obj)
        return Tensor(_backend.checked(_backend.normalize(obj, xp)), xp, None)
    xp = _backend.default_namespace()
    return Tensor(_backend.checked(_backend.normalize(xp.asarray(obj), xp)), xp, None)


# ----------------------------------------------------------------------------- Tensor

_NON_LEAF_FLAG = (
    "you can only change requires_grad flags of leaf variables. If you want to use a "
    "computed variable in a subgraph that doesn't require differentiation use "
    "var_no_grad = var.detach()."
)


class ElementCount(int):
    """A tensor's number of elements, an int (the Array API's `x.size`) that can be called as
    PyTorch's `x.size()`: the shape, or `x.size(dim)` the length of one dimension."""

    def __new__(cls, n: int, shape: tuple) -> ElementCount:
        count = super().__new__(cls, n)
        count.shape = tuple(shape)
        return count

    def __call__(self, dim: int | None = None) -> Any:
        shape = self.shape
        if dim is None:
            return shape
        n = len(shape)
        if n == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        if not -n <= dim < n:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
                f"{dim})"
            )
        return shape[dim]

    def __reduce__(self) -> tuple:
        return int, (int(self),)


class Tensor:
    """An array of any Array API library that records the operations applied to it.

    Defined here: autograd attributes, array attributes, conversions, copying and pickling.
    Operators, in-place operators, indexing, `backward` and the array methods are bound from
    the one table in `chainrule._methods`."""

    __slots__ = ("_data", "_xp", "_edge", "_grad", "_vc", "_fw", "_view", "__weakref__")
    __array_priority__ = 1000.0

    def __init__(self, data: Any, xp: Any, edge: Any) -> None:
        self._data = data
        self._xp = xp
        self._edge = edge

    # -- autograd attributes

    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this tensor (a leaf that requires grad, or a result)."""
        return self._edge is not None

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        e = self._edge
        if e is not None and e.__class__ is not AccumulateGrad:
            if flag:
                return
            raise RuntimeError(_NON_LEAF_FLAG)
        if not flag:
            self._edge = None
        elif e is None:
            if self.is_inference() and not grad_mode.inference:
                raise RuntimeError(
                    "Setting requires_grad=True on inference tensor outside InferenceMode is "
                    "not allowed."
                )
            kind = _backend.dtype_kind(self._data.dtype)
            if kind not in "fc":
                raise RuntimeError(
                    "only Tensors of floating point and complex dtype can require gradients "
                    f"(this tensor has dtype {self.dtype})"
                )
            self._edge = AccumulateGrad(self)
            group = alias_group(self)
            if group is not None:
                group.graph = True

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set requires_grad in place (leaves; True on a non-leaf is allowed) and return self."""
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self) -> Node | None:
        """The node that computed this tensor; None for leaves."""
        e = self._edge
        if e is None or e.__class__ is AccumulateGrad:
            return None
        return node_of(e)

    @property
    def is_leaf(self) -> bool:
        """True for tensors not computed by a recorded operation."""
        e = self._edge
        return e is None or e.__class__ is AccumulateGrad

    @property
    def grad(self) -> Tensor | None:
        """The gradient accumulated by backward (None until one arrives)."""
        # `_grad` is left unset until a gradient arrives: one assignment less per op.
        g = getattr(self, "_grad", None)
        if g is None and grad_mode.extended and grad_mode.tracer is not None:
            grad_mode.tracer.read_grad(self)  # a branch on it is baked: the replay checks it
        return g

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if value.__class__ is not Tensor:
                raise TypeError(
                    "assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value._xp is not self._xp:
                raise RuntimeError(
                    "assigned grad has data of a different array library: "
                    f"{_backend.name_of(value._xp)} for a {_backend.name_of(self._xp)} tensor"
                )
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value.dtype}' to a tensor "
                    f"with dtype '{self.dtype}'. The gradient must match the tensor's dtype."
                )
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a "
                    f"tensor of size '{list(self.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size"
                )
        if grad_mode.extended and grad_mode.tracer is not None:
            grad_mode.tracer.set_grad(self, value)
        self._grad = value

    @property
    def _version(self) -> int:
        """How many times this tensor's memory was written in place."""
        vc = getattr(self, "_vc", None)
        return 0 if vc is None else vc.value

    def detach(self) -> Tensor:
        """The same memory, cut from the graph: a write to either is seen by both and counts
        as a write to both (one version counter), as PyTorch's."""
        if grad_mode.extended and grad_mode.tracer is not None:
            grad_mode.tracer.detaching(self)
        t = Tensor(self._data, self._xp, None)
        same_values(self, t)
        return t

    def detach_(self) -> Tensor:
        """Cut this tensor from the graph in place: it becomes a leaf that needs no grad. A
        view can't be (PyTorch's error): its history is its base's."""
        if getattr(self, "_view", None) is not None:
            raise RuntimeError("Can't detach views in-place. Use detach() instead.")
        if self._edge is not None:
            self._edge = None
            self._vc = VersionCounter(self._version, True)
        return self

    # -- hooks (see _node.Hooks; the engine runs them)

    def _hook_site(self) -> tuple:
        """(node or accumulator, output index) where this tensor's gradient arrives."""
        e = self._edge
        if e is None:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if e.__class__ is Port:
            return e.node, e.index
        return e, 0

    def _note_zeros(self, hooks: Any, index: int) -> None:
        """Note in a node's hooks what this output's zeros are made of: its hooks and
        retain_grad see zeros when its gradient is known to be zero (see _node.ZERO)."""
        if self._edge.__class__ is not AccumulateGrad:  # a leaf's zeros come from the leaf
            data = self._data
            hooks.zeros[index] = (self._xp, tuple(data.shape), data.dtype, _backend.device(data))

    def register_hook(self, hook: Any) -> RemovableHandle:
        """Call `hook(grad)` when this tensor's gradient is computed (for a leaf, before it is
        accumulated); a tensor it returns replaces the gradient. Returns a handle whose
        remove() takes the hook away."""
        node, index = self._hook_site()
        hooks = hooks_of(node)
        self._note_zeros(hooks, index)
        return RemovableHandle(hooks.tensor.setdefault(index, []), hook)

    def register_post_accumulate_grad_hook(self, hook: Any) -> RemovableHandle:
        """Call `hook(tensor)` on this leaf as soon as backward accumulated its .grad."""
        if not self.is_leaf:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        node, _ = self._hook_site()
        return RemovableHandle(hooks_of(node).accumulated, hook)

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in its .grad (after its hooks), adding up over
        backward calls; a no-op on a leaf."""
        if self._edge is None:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.is_leaf or self.retains_grad:
            return
        node, index = self._hook_site()
        hooks = hooks_of(node)
        self._note_zeros(hooks, index)
        hooks.retain[index] = weakref.ref(self)
        STATE.live_hooks += 1
        weakref.finalize(self, _forget_retained)

    @property
    def retains_grad(self) -> bool:
        """Whether retain_grad() was called on this non-leaf (for its current grad_fn)."""
        e = self._edge
        if e is None or e.__class__ is AccumulateGrad:
            return False
        node, index = (e.node, e.index) if e.__class__ is Port else (e, 0)
        hooks = getattr(node, "hooks", None)
        ref = None if hooks is None else hooks.retain.get(index)
        return ref is not None and ref() is self

    def is_inference(self) -> bool:
        """Whether this tensor was made under inference_mode."""
        vc = getattr(self, "_vc", None)
        return vc is not None and vc.inference

    # -- array attributes

    @property
    def shape(self) -> tuple[int, ...]:
        """The size of each axis, a tuple of ints."""
        return tuple(self._data.shape)

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return self._data.ndim

    @property
    def size(self) -> ElementCount | None:
        """The number of elements (an int, as the Array API's `size`); called, as PyTorch's
        `size()`: the shape, or `size(dim)` one dimension's length. None where a length is
        unknown before computing (Dask after a boolean mask), as the Array API says."""
        n = 1
        for s in self._data.shape:
            if s is None or s != s:  # NaN: Dask's unknown length
                return None
            n *= s
        return ElementCount(n, self._data.shape)

    @property
    def dtype(self) -> _backend.DType:
        """chainrule's data type of the values (chainrule.float64, ...)."""
        return _backend.public(self._data.dtype)

    @property
    def device(self) -> Any:
        """The device the values live on (the backend's device object; 'cpu' for NumPy)."""
        return _backend.device(self._data)

    @property
    def data(self) -> Tensor:
        """The same memory without history and with a version counter of its own, as PyTorch's
        `.data`: a write through it (`p.data -= lr * p.grad`) changes this tensor and is seen
        by no version check."""
        d = self._data
        # An array object of its own: the version checks tell saved arrays apart by object
        # (JAX's and Dask's d[...] is d itself).
        kind = _backend.aliasing(self._xp)
        if kind is not None:
            d = d[...] if kind == "memory" else self._xp.asarray(d, copy=True)
        t = Tensor(d, self._xp, None)
        t._vc = VersionCounter()
        share(self, t)
        tracer = grad_mode.tracer if grad_mode.extended else None
        if tracer is not None:  # chainrule.compile: the same values, in a slot of their own
            tracer.realiased(((t, self._data),))
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        """Make this tensor hold `value`'s memory (its history, .grad and counter stay)."""
        if value.__class__ is not Tensor:
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if value._xp is not self._xp:
            mixed_error("data =", self._xp, value._xp)
        self._data = value._data
        # Out of the group of its former memory: a counter of its own, version kept.
        former = alias_group(self)
        if former is not None:
            former.drop(self)
        self._vc = VersionCounter(self._version)
        self._view = None
        share(value, self)

    # -- conversion

    @property
    def array(self) -> Any:
        """The array this tensor wraps, of its own library (a NumPy, Dask, JAX, PyTorch, ...
        array), as it is: not copied, not computed, without history. `chainrule.asarray(a)`
        wraps one back without copying. Writing into it in place goes unseen by autograd."""
        if grad_mode.extended:
            if _backend.library(self._xp) == "vmap":
                raise RuntimeError(
                    "vmap: a tensor's .array inside vmap would be every sample's at once; "
                    "use operations on the tensor, or take .array outside vmap"
                )
            _concrete(self, ".array")
        return self._data

    def numpy(self) -> Any:
        """The values as a NumPy array: a NumPy-backed tensor that needs no grad is not copied;
        other libraries' arrays are copied to the host (a Dask array is computed)."""
        if grad_mode.extended:
            _concrete(self, "numpy()")
        d = self._data
        if isinstance(d, ndarray):
            return d.copy() if self._edge is not None else d
        return _backend.to_numpy(d)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any:
        # As PyTorch: NumPy's conversion (np.asarray, code compiled against NumPy) would
        # silently cut the graph, so a tensor that requires grad refuses it.
        if self._edge is not None:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead (NumPy's conversion drops the graph: no gradient would reach it)."
            )
        if grad_mode.forward and _has_tangent(self):  # forward mode's equivalent
            raise RuntimeError(
                "Can't call numpy() on Tensor that has a forward-mode tangent. Use "
                "tensor.detach().numpy() instead (NumPy's conversion drops the tangent: what "
                "is computed from it would get a zero tangent)."
            )
        a = self.numpy()
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        if copy:
            a = a.copy()
        return a

    def item(self) -> Any:
        """The value of a one-element tensor as a Python scalar."""
        if grad_mode.extended:
            _concrete(self, "item()")
        if self.size != 1:
            raise ValueError(
                f"a Tensor with {self.size} elements cannot be converted to a Python scalar"
            )
        d = self._data
        if isinstance(d, ndarray):
            return d.item()
        kind = _backend.dtype_kind(d.dtype)
        d = self._xp.reshape(d, ())
        return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[kind](d)

    def tolist(self) -> Any:
        """The values as nested Python lists of Python scalars (a scalar for a 0-d
        tensor)."""
        return self.numpy().tolist()

    def __float__(self) -> float:
        if grad_mode.extended:
            _concrete(self, "float()")
        return float(self.item())

    def __int__(self) -> int:
        if grad_mode.extended:
            _concrete(self, "int()")
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __bool__(self) -> bool:
        if grad_mode.extended:
            _concrete(self, "bool()")
        if self.size != 1:
            raise ValueError(f"the truth value of a Tensor with {self.size} elements is ambiguous")
        return bool(self.item())

    def __index__(self) -> int:
        if grad_mode.extended:
            _concrete(self, "__index__()")
        if _backend.dtype_kind(self._data.dtype) not in "iu":
            raise TypeError("only integer tensors with one element can be used as an index")
        return int(self.item())

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __hash__(self) -> int:
        return id(self)

    def __format__(self, spec: str) -> str:
        if self.size == 1 and spec:
            return format(self.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def __repr__(self) -> str:
        np = _backend.np
        extra = []
        # A lazy array is described, not computed (its values may not fit in memory).
        values = _backend.lazy_summary(self._data)
        if values is None:
            try:
                values = np.array2string(
                    np.asarray(self.numpy()), separator=", ", prefix="tensor(", threshold=200
                )
            except Exception:
                values = repr(self._data)
            if self.size == 0 and self.ndim != 1:
                extra.append(f"size={self.shape}")
            dt = self.dtype
            if dt not in (np.dtype("float64"), np.dtype("int64"), np.dtype("bool")):
                extra.append(f"dtype={dt}")
            if self._xp is not np:
                extra.append(f"backend={_backend.name_of(self._xp)}")
        fn = self.grad_fn
        if fn is not None:
            extra.append(f"grad_fn=<{fn.name()}>")
        elif self._edge is not None:
            extra.append("requires_grad=True")
        return "tensor(" + ", ".join([values] + extra) + ")"

    __str__ = __repr__

    # -- copying and pickling: the values, requires_grad and .grad travel; a graph does not.

    def __reduce_ex__(self, protocol: Any) -> tuple:
        xp = self._xp
        state = (self.requires_grad, self.grad)
        # A lazy array travels as its task graph: pickling computes nothing.
        values = self._data if _backend.is_lazy(self._data) else self.numpy()
        return _rebuild, (_backend.name_of(xp), values, state)

    def __copy__(self) -> Tensor:
        """A new leaf with the same data (and requires_grad), no .grad: as PyTorch."""
        t = Tensor(self._data, self._xp, None)
        t._vc = version_counter(self) if self._edge is None else VersionCounter(0, True)
        if self._edge is not None:
            t.requires_grad_(True)
        return t

    def __deepcopy__(self, memo: dict) -> Tensor:
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment."
            )
        t = Tensor(self._xp.asarray(self._data, copy=True), self._xp, None)
        converted(self, t, _deepcopied, None)
        memo[id(self)] = t
        if self._edge is not None:
            t.requires_grad_(True)
        grad = self.grad
        if grad is not None:
            t._grad = copy.deepcopy(grad, memo)
        return t

    # -- bound from the table in _methods, declared here for type checkers only
    # Operators and methods are bound onto Tensor by setattr from one table when chainrule is
    # imported (the operators are the primitives themselves: no wrapper on the hot path),
    # which a type checker cannot follow. This block, which does not exist at run time,
    # declares them: a method that is a function of _torch_methods, _numpy_methods or
    # _interop as that very function (its signature and docstring are written there, once);
    # the others (primitives, methods made by factories, methods with both PyTorch's and
    # NumPy's meaning) by a signature here. A name bound there and missing here is only
    # untyped (tests/test_typing.py checks that both list the same names).
    if TYPE_CHECKING:

        def __add__(self, other: ArrayLike, /) -> Tensor: ...
        def __sub__(self, other: ArrayLike, /) -> Tensor: ...
        def __mul__(self, other: ArrayLike, /) -> Tensor: ...
        def __truediv__(self, other: ArrayLike, /) -> Tensor: ...
        def __floordiv__(self, other: ArrayLike, /) -> Tensor: ...
        def __mod__(self, other: ArrayLike, /) -> Tensor: ...
        def __pow__(self, other: ArrayLike, /) -> Tensor: ...
        def __matmul__(self, other: ArrayLike, /) -> Tensor: ...
        def __and__(self, other: ArrayLike, /) -> Tensor: ...
        def __or__(self, other: ArrayLike, /) -> Tensor: ...
        def __xor__(self, other: ArrayLike, /) -> Tensor: ...
        def __lshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __rshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __radd__(self, other: ArrayLike, /) -> Tensor: ...
        def __rsub__(self, other: ArrayLike, /) -> Tensor: ...
        def __rmul__(self, other: ArrayLike, /) -> Tensor: ...
        def __rtruediv__(self, other: ArrayLike, /) -> Tensor: ...
        def __rfloordiv__(self, other: ArrayLike, /) -> Tensor: ...
        def __rmod__(self, other: ArrayLike, /) -> Tensor: ...
        def __rpow__(self, other: ArrayLike, /) -> Tensor: ...
        def __rmatmul__(self, other: ArrayLike, /) -> Tensor: ...
        def __rand__(self, other: ArrayLike, /) -> Tensor: ...
        def __ror__(self, other: ArrayLike, /) -> Tensor: ...
        def __rxor__(self, other: ArrayLike, /) -> Tensor: ...
        def __rlshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __rrshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __iadd__(self, other: ArrayLike, /) -> Tensor: ...
        def __isub__(self, other: ArrayLike, /) -> Tensor: ...
        def __imul__(self, other: ArrayLike, /) -> Tensor: ...
        def __itruediv__(self, other: ArrayLike, /) -> Tensor: ...
        def __ifloordiv__(self, other: ArrayLike, /) -> Tensor: ...
        def __imod__(self, other: ArrayLike, /) -> Tensor: ...
        def __ipow__(self, other: ArrayLike, /) -> Tensor: ...
        def __imatmul__(self, other: ArrayLike, /) -> Tensor: ...
        def __iand__(self, other: ArrayLike, /) -> Tensor: ...
        def __ior__(self, other: ArrayLike, /) -> Tensor: ...
        def __ixor__(self, other: ArrayLike, /) -> Tensor: ...
        def __ilshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __irshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __neg__(self) -> Tensor: ...
        def __pos__(self) -> Tensor: ...
        def __abs__(self) -> Tensor: ...
        def __invert__(self) -> Tensor: ...
        # Comparisons give bool tensors, not bool: object's == is overridden, as NumPy's.
        def __eq__(self, other: ArrayLike, /) -> Tensor: ...  # type: ignore[override]
        def __ne__(self, other: ArrayLike, /) -> Tensor: ...  # type: ignore[override]
        def __lt__(self, other: ArrayLike, /) -> Tensor: ...
        def __le__(self, other: ArrayLike, /) -> Tensor: ...
        def __gt__(self, other: ArrayLike, /) -> Tensor: ...
        def __ge__(self, other: ArrayLike, /) -> Tensor: ...
        def __getitem__(self, key: IndexKey, /) -> Tensor: ...
        def __setitem__(self, key: IndexKey, value: ArrayLike, /) -> None: ...
        def __array_ufunc__(
            self, ufunc: Any, method: str, /, *inputs: Any, **kwargs: Any
        ) -> Any: ...
        def __array_function__(
            self, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any: ...
        def __array_namespace__(self, /, *, api_version: str | None = None) -> ModuleType: ...
        def __dlpack__(
            self,
            /,
            *,
            stream: Any = None,
            max_version: tuple[int, int] | None = None,
            dl_device: Any = None,
            copy: bool | None = None,
        ) -> Any: ...
        def __dlpack_device__(self, /) -> Any: ...
        # The named methods repeat their docstrings for editors, which read these declarations.
        def backward(
            self,
            gradient: Tensor | None = None,
            retain_graph: bool | None = None,
            create_graph: bool = False,
            inputs: Tensor | Sequence[Tensor] | None = None,
        ) -> None:
            """Accumulate the gradient of this tensor into the leaves' `.grad` (see
            chainrule.autograd.backward)."""

        def abs(self) -> Tensor:
            """Elementwise abs of x (as the Array API standard); differentiable: gradient 0
            at 0."""

        # PyTorch's named methods (the table in _torch_methods)
        def std(
            self,
            dim: Axis | bool = None,
            unbiased: bool | None = None,
            keepdim: bool = False,
            *,
            correction: float | None = None,
            axis: Axis = None,
            keepdims: bool | None = None,
            ddof: float = 0,
            dtype: DTypeLike = None,
            out: Any = None,
        ) -> Tensor:
            """The standard deviation over `dim` (all dimensions when None), with PyTorch's default
            `correction=1` (Bessel's: the sample std; `unbiased=False` or `correction=0` for the
            population one). With NumPy's keywords (axis=, ddof=, keepdims=, out=) and none of
            PyTorch's, NumPy's method."""

        def var(
            self,
            dim: Axis | bool = None,
            unbiased: bool | None = None,
            keepdim: bool = False,
            *,
            correction: float | None = None,
            axis: Axis = None,
            keepdims: bool | None = None,
            ddof: float = 0,
            dtype: DTypeLike = None,
            out: Any = None,
        ) -> Tensor:
            """The variance over `dim` (all dimensions when None), with PyTorch's default
            `correction=1` (Bessel's: the sample var; `unbiased=False` or `correction=0` for the
            population one). With NumPy's keywords (axis=, ddof=, keepdims=, out=) and none of
            PyTorch's, NumPy's method."""

        def max(
            self,
            dim: int | Tensor | None = None,
            keepdim: bool = False,
            *,
            axis: Axis = None,
            out: Any = None,
            keepdims: bool = False,
        ) -> Any:
            """As PyTorch's: x.max() the maximum of all elements (ties share the gradient);
            x.max(dim) a (values, indices) pair along dim (the gradient goes to the index chosen,
            the first maximum); x.max(other) the elementwise maximum. With NumPy's
            keywords (axis=, ddof=, keepdims=, out=) and none of PyTorch's, NumPy's method."""

        def min(
            self,
            dim: int | Tensor | None = None,
            keepdim: bool = False,
            *,
            axis: Axis = None,
            out: Any = None,
            keepdims: bool = False,
        ) -> Any:
            """As PyTorch's: x.min() the minimum of all elements (ties share the gradient);
            x.min(dim) a (values, indices) pair along dim (the gradient goes to the index chosen,
            the first minimum); x.min(other) the elementwise minimum. With NumPy's
            keywords (axis=, ddof=, keepdims=, out=) and none of PyTorch's, NumPy's method."""

        def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
            """The index of the first maximum along `dim` (of all elements when None)."""

        def argmin(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
            """The index of the first minimum along `dim` (of all elements when None)."""

        def amax(self, dim: Axis = (), keepdim: bool = False) -> Tensor:
            """The maximum over `dim` (all dimensions when empty); ties share the gradient."""

        def amin(self, dim: Axis = (), keepdim: bool = False) -> Tensor:
            """The minimum over `dim` (all dimensions when empty); ties share the gradient."""

        def all(
            self,
            dim: Axis = None,
            keepdim: bool = False,
            *,
            axis: Axis = None,
            out: Any = None,
            keepdims: bool = False,
        ) -> Tensor:
            """Whether all elements are true over `dim` (all dimensions when None). With NumPy's
            keywords (axis=, ddof=, keepdims=, out=) and none of PyTorch's, NumPy's method."""

        def any(
            self,
            dim: Axis = None,
            keepdim: bool = False,
            *,
            axis: Axis = None,
            out: Any = None,
            keepdims: bool = False,
        ) -> Tensor:
            """Whether any elements are true over `dim` (all dimensions when None). With NumPy's
            keywords (axis=, ddof=, keepdims=, out=) and none of PyTorch's, NumPy's method."""

        def squeeze(self, dim: int | Sequence[int] | None = None, *, axis: Axis = None) -> Tensor:
            """This tensor without its dimensions of size 1 (only those in `dim`, when given; a
            dimension in `dim` of another size is kept, as PyTorch). With NumPy's keywords
            (axis=, ddof=, keepdims=, out=) and none of PyTorch's, NumPy's method."""

        def exp(self) -> Tensor:
            """Elementwise exp of x (as the Array API standard); differentiable."""

        def log(self) -> Tensor:
            """Elementwise log of x (as the Array API standard); differentiable."""

        def sin(self) -> Tensor:
            """Elementwise sin of x (as the Array API standard); differentiable."""

        def cos(self) -> Tensor:
            """Elementwise cos of x (as the Array API standard); differentiable."""

        def tanh(self) -> Tensor:
            """Elementwise tanh of x (as the Array API standard); differentiable."""

        def sqrt(self) -> Tensor:
            """Elementwise sqrt of x (as the Array API standard); differentiable."""

        def add(self, other: ArrayLike, *, alpha: float = 1) -> Tensor:
            """self + alpha * other."""

        def sub(self, other: ArrayLike, *, alpha: float = 1) -> Tensor:
            """self - alpha * other."""

        def mul(self, other: ArrayLike) -> Tensor:
            """self * other."""

        def div(self, other: ArrayLike) -> Tensor:
            """self / other."""

        def clip(self, min: ArrayLike = None, max: ArrayLike = None) -> Tensor:
            """This tensor limited to [min, max] (see chainrule.clip)."""

        def matmul(self, other: ArrayLike, /) -> Tensor:
            """The matrix product of x1 and x2 (as the Array API standard); differentiable."""

        def add_(self, other: ArrayLike, *, alpha: float = 1) -> Tensor:
            """self += alpha * other, in place (as the operator)."""

        def sub_(self, other: ArrayLike, *, alpha: float = 1) -> Tensor:
            """self -= alpha * other, in place (as the operator)."""

        def mul_(self, other: ArrayLike) -> Tensor:
            """self *= other, in place (as the operator)."""

        def div_(self, other: ArrayLike) -> Tensor:
            """self /= other, in place (as the operator)."""

        def float(self) -> Tensor:
            """This tensor as float32 (itself if it is already)."""

        def double(self) -> Tensor:
            """This tensor as float64 (itself if it is already)."""

        def half(self) -> Tensor:
            """This tensor as float16 (itself if it is already)."""

        def long(self) -> Tensor:
            """This tensor as int64 (itself if it is already)."""

        def int(self) -> Tensor:
            """This tensor as int32 (itself if it is already)."""

        def bool(self) -> Tensor:
            """This tensor as bool (itself if it is already)."""

        def new_zeros(
            self,
            *size: int | Sequence[int],
            dtype: DTypeLike = None,
            device: Device = None,
            requires_grad: bool = False,
        ) -> Tensor:
            """A new tensor of zeros of `size`, in this tensor's library, dtype and device unless
            `dtype`/`device` say otherwise."""

        def new_ones(
            self,
            *size: int | Sequence[int],
            dtype: DTypeLike = None,
            device: Device = None,
            requires_grad: bool = False,
        ) -> Tensor:
            """A new tensor of ones of `size`, in this tensor's library, dtype and device unless
            `dtype`/`device` say otherwise."""

        # The transposes, and Dask's compute and persist (chainrule._lazy).
        @property
        def T(self) -> Tensor:
            """This tensor with its axes reversed (the transpose of a matrix)."""

        @property
        def mT(self) -> Tensor:
            """This tensor with its last two axes swapped (stacked transposes)."""

        # PyTorch's real and imag (_torch_methods): views of a complex tensor's parts.
        @property
        def real(self) -> Tensor:
            """The real part: for a complex tensor a view (writes through it reach this tensor;
            the gradient is g + 0i), for a real one the tensor itself (as PyTorch)."""

        @real.setter
        def real(self, value: ArrayLike) -> None:
            """The real part: for a complex tensor a view (writes through it reach this tensor;
            the gradient is g + 0i), for a real one the tensor itself (as PyTorch)."""

        @property
        def imag(self) -> Tensor:
            """The imaginary part of a complex tensor, a view (writes through it reach this
            tensor; the gradient is i g); PyTorch's RuntimeError for a real tensor."""

        @imag.setter
        def imag(self, value: ArrayLike) -> None:
            """The imaginary part of a complex tensor, a view (writes through it reach this
            tensor; the gradient is i g); PyTorch's RuntimeError for a real tensor."""

        # NumPy's flat iterator (_numpy_methods.FlatIter).
        @property
        def flat(self) -> _numpy_methods.FlatIter:
            """NumPy's flat iterator of this tensor (see FlatIter); `t.flat = v` writes every
            element."""

        @flat.setter
        def flat(self, value: ArrayLike) -> None:
            """NumPy's flat iterator of this tensor (see FlatIter); `t.flat = v` writes every
            element."""

        @property
        def grad_dtype(self) -> Any:
            """Tensor.grad_dtype: the dtype a leaf's .grad is accumulated in (its own unless set;
            None: the gradient's)."""

        @grad_dtype.setter
        def grad_dtype(self, dtype: Any) -> None:
            """Tensor.grad_dtype: the dtype a leaf's .grad is accumulated in (its own unless set;
            None: the gradient's)."""

        def compute(self, **kwargs: Any) -> Tensor:
            """The values computed, as a tensor of the library of the chunks (NumPy for most
            Dask arrays) without history: the same as `dask.compute(t)[0]`. `kwargs` go to
            Dask (e.g. `scheduler=`). A tensor of a library that is not lazy is returned as it
            is."""

        def persist(self, **kwargs: Any) -> Tensor:
            """The same tensor with its values computed and kept by the scheduler (on a
            cluster's workers), so later operations start from them instead of recomputing its
            task graph: the same as `dask.persist(t)[0]`. Its place in the graph stays: a
            result keeps its grad_fn (gradients flow on to the history it came from), a leaf is
            a new leaf with the same requires_grad. A tensor of a library that is not lazy is
            returned as it is."""

        # The Dask collection protocol (chainrule._lazy): a tensor is a Dask collection
        # where it wraps a Dask array; elsewhere __dask_graph__() is None.
        def __dask_graph__(self) -> Any: ...
        def __dask_keys__(self) -> Any: ...
        def __dask_layers__(self) -> Any: ...
        def __dask_tokenize__(self) -> Any: ...
        def __dask_postcompute__(self) -> tuple[Any, tuple[Any, ...]]: ...
        def __dask_postpersist__(self) -> tuple[Any, tuple[Any, ...]]: ...
        @staticmethod
        def __dask_scheduler__(dsk: Any, keys: Any, **kwargs: Any) -> Any: ...
        @staticmethod
        def __dask_optimize__(dsk: Any, keys: Any, **kwargs: Any) -> Any: ...

        # PyTorch's elementwise methods that are the namespace's functions (see
        # _torch_methods._ELEMENTWISE).
        def acos(self) -> Tensor:
            """Elementwise acos of x (as the Array API standard); differentiable."""

        def acosh(self) -> Tensor:
            """Elementwise acosh of x (as the Array API standard); differentiable."""

        def asin(self) -> Tensor:
            """Elementwise asin of x (as the Array API standard); differentiable."""

        def asinh(self) -> Tensor:
            """Elementwise asinh of x (as the Array API standard); differentiable."""

        def atan(self) -> Tensor:
            """Elementwise atan of x (as the Array API standard); differentiable."""

        def atan2(self, other: ArrayLike, /) -> Tensor:
            """Elementwise atan2 of x1 and x2, broadcast together (as the Array API standard);
            differentiable."""

        def atanh(self) -> Tensor:
            """Elementwise atanh of x (as the Array API standard); differentiable."""

        def ceil(self) -> Tensor:
            """Elementwise ceil of x (as the Array API standard); differentiable: gradient 0."""

        def copysign(self, other: ArrayLike, /) -> Tensor:
            """Elementwise copysign of x1 and x2, broadcast together (as the Array API standard);
            differentiable: d/dx1 is 0 at x1 == 0, d/dx2 is 0."""

        def cosh(self) -> Tensor:
            """Elementwise cosh of x (as the Array API standard); differentiable."""

        def eq(self, other: ArrayLike, /) -> Tensor:
            """Elementwise equal (as the Array API standard); the result carries no gradient."""

        def expm1(self) -> Tensor:
            """Elementwise expm1 of x (as the Array API standard); differentiable."""

        def floor(self) -> Tensor:
            """Elementwise floor of x (as the Array API standard); differentiable: gradient 0."""

        def floor_divide(self, other: ArrayLike, /) -> Tensor:
            """Elementwise floor_divide of x1 and x2, broadcast together (as the Array API
            standard); differentiable: gradient 0."""

        def ge(self, other: ArrayLike, /) -> Tensor:
            """Elementwise greater_equal (as the Array API standard); the result carries no
            gradient."""

        def gt(self, other: ArrayLike, /) -> Tensor:
            """Elementwise greater (as the Array API standard); the result carries no gradient."""

        def hypot(self, other: ArrayLike, /) -> Tensor:
            """Elementwise hypot of x1 and x2, broadcast together (as the Array API standard);
            differentiable: gradient 0 where x1 and x2 are 0."""

        def isfinite(self) -> Tensor:
            """Elementwise isfinite (as the Array API standard); the result carries no gradient."""

        def isinf(self) -> Tensor:
            """Elementwise isinf (as the Array API standard); the result carries no gradient."""

        def isnan(self) -> Tensor:
            """Elementwise isnan (as the Array API standard); the result carries no gradient."""

        def le(self, other: ArrayLike, /) -> Tensor:
            """Elementwise less_equal (as the Array API standard); the result carries no
            gradient."""

        def log10(self) -> Tensor:
            """Elementwise log10 of x (as the Array API standard); differentiable."""

        def log1p(self) -> Tensor:
            """Elementwise log1p of x (as the Array API standard); differentiable."""

        def log2(self) -> Tensor:
            """Elementwise log2 of x (as the Array API standard); differentiable."""

        def logaddexp(self, other: ArrayLike, /) -> Tensor:
            """Elementwise logaddexp of x1 and x2, broadcast together (as the Array API standard);
            differentiable."""

        def logical_and(self, other: ArrayLike, /) -> Tensor:
            """Elementwise logical_and (as the Array API standard); the result carries no
            gradient."""

        def logical_not(self) -> Tensor:
            """Elementwise logical_not (as the Array API standard); the result carries no
            gradient."""

        def logical_or(self, other: ArrayLike, /) -> Tensor:
            """Elementwise logical_or (as the Array API standard); the result carries no
            gradient."""

        def lt(self, other: ArrayLike, /) -> Tensor:
            """Elementwise less (as the Array API standard); the result carries no gradient."""

        def maximum(self, other: ArrayLike, /) -> Tensor:
            """Elementwise maximum of x1 and x2, broadcast together (as the Array API standard);
            differentiable: tied elements share the gradient evenly."""

        def minimum(self, other: ArrayLike, /) -> Tensor:
            """Elementwise minimum of x1 and x2, broadcast together (as the Array API standard);
            differentiable: tied elements share the gradient evenly."""

        def ne(self, other: ArrayLike, /) -> Tensor:
            """Elementwise not_equal (as the Array API standard); the result carries no gradient."""

        def neg(self) -> Tensor:
            """Elementwise negative of x (as the Array API standard); differentiable."""

        def negative(self) -> Tensor:
            """Elementwise negative of x (as the Array API standard); differentiable."""

        def reciprocal(self) -> Tensor:
            """Elementwise reciprocal of x (as the Array API standard); differentiable."""

        def remainder(self, other: ArrayLike, /) -> Tensor:
            """Elementwise remainder of x1 and x2, broadcast together (as the Array API standard);
            differentiable: d/dx1 is 1, d/dx2 is -floor(x1 / x2)."""

        def sign(self) -> Tensor:
            """Elementwise sign of x (as the Array API standard); differentiable: gradient 0."""

        def signbit(self) -> Tensor:
            """Elementwise signbit (as the Array API standard); the result carries no gradient."""

        def sinh(self) -> Tensor:
            """Elementwise sinh of x (as the Array API standard); differentiable."""

        def square(self) -> Tensor:
            """Elementwise square of x (as the Array API standard); differentiable."""

        def tan(self) -> Tensor:
            """Elementwise tan of x (as the Array API standard); differentiable."""

        def trunc(self) -> Tensor:
            """Elementwise trunc of x (as the Array API standard); differentiable: gradient 0."""

        # The named methods that are functions of the layers above, declared as those
        # functions: type checkers and editors take their signatures and docstrings.
        to_device = _interop.to_device
        sum = _torch_methods.sum
        logsumexp = _torch_methods.logsumexp
        roll = _torch_methods.roll
        round = _torch_methods.round
        rsqrt = _torch_methods.rsqrt
        tril = _torch_methods.tril
        triu = _torch_methods.triu
        mean = _torch_methods.mean
        prod = _torch_methods.prod
        cumsum = _torch_methods.cumsum
        norm = _torch_methods.norm
        view = _torch_methods.view
        view_as = _torch_methods.view_as
        reshape = _torch_methods.reshape
        flatten = _torch_methods.flatten
        unsqueeze = _torch_methods.unsqueeze
        permute = _torch_methods.permute
        transpose = _torch_methods.transpose
        t = _torch_methods.t
        contiguous = _torch_methods.contiguous
        expand = _torch_methods.expand
        expand_as = _torch_methods.expand_as
        repeat = _torch_methods.repeat
        flip = _torch_methods.flip
        chunk = _torch_methods.chunk
        unbind = _torch_methods.unbind
        diagonal = _torch_methods.diagonal
        split = _torch_methods.split
        narrow = _torch_methods.narrow
        gather = _torch_methods.gather
        topk = _torch_methods.topk
        sort = _torch_sorting.sort
        msort = _torch_sorting.msort
        kthvalue = _torch_sorting.kthvalue
        median = _torch_sorting.median
        nanmedian = _torch_sorting.nanmedian
        mode = _torch_sorting.mode
        cummax = _torch_sorting.cummax
        cummin = _torch_sorting.cummin
        logcumsumexp = _torch_sorting.logcumsumexp
        aminmax = _torch_sorting.aminmax
        nansum = _torch_sorting.nansum
        nanmean = _torch_sorting.nanmean
        quantile = _torch_sorting.quantile
        nanquantile = _torch_sorting.nanquantile
        sigmoid = _torch_methods.sigmoid
        relu = _torch_methods.relu
        softmax = _torch_methods.softmax
        log_softmax = _torch_methods.log_softmax
        pow = _torch_methods.pow
        xlogy = _torch_methods.xlogy
        masked_fill = _torch_methods.masked_fill
        where = _torch_methods.where
        clamp = _torch_methods.clamp
        mm = _torch_methods.mm
        bmm = _torch_methods.bmm
        zero_ = _torch_methods.zero_
        fill_ = _torch_methods.fill_
        copy_ = _torch_methods.copy_
        clamp_ = _torch_methods.clamp_
        xlogy_ = _torch_methods.xlogy_
        normal_ = _torch_methods.normal_
        uniform_ = _torch_methods.uniform_
        to = _torch_methods.to
        type = _torch_methods._type
        type_as = _torch_methods.type_as
        clone = _torch_methods.clone
        dim = _torch_methods.dim
        numel = _torch_methods.numel
        element_size = _torch_methods.element_size
        new_full = _torch_methods.new_full
        new_tensor = _torch_methods.new_tensor
        ravel = _numpy_methods.ravel
        astype = _numpy_methods.astype
        conj = _numpy_methods.conj
        conjugate = _numpy_methods.conj
        dot = _numpy_methods.dot
        copy = _numpy_methods.copy
        fill = _numpy_methods.fill


def _forget_retained() -> None:
    STATE.live_hooks -= 1


def _concrete(t: Tensor, what: str) -> None:
    """A conversion of t's values to Python while a feature is on: compile's trace refuses it
    (the values are not known when the trace is replayed)."""
    tracer = grad_mode.tracer
    if tracer is not None:
        tracer.concrete(t, what)


def _sequence(data: Any) -> None:
    """A list or tuple made into an array outside the recorded operations: compile's trace
    checks that it holds no raw array argument (see Tracer.sequence)."""
    if grad_mode.extended and grad_mode.tracer is not None:
        grad_mode.tracer.sequence(data)


def exportable(t: Tensor) -> None:
    """Refuses to hand t's array to another library by DLPack where the values would leave
    without what makes them differentiable: a graph (PyTorch's error) or, as numpy(), a
    forward-mode tangent (func.jvp of np.from_dlpack(t) gave a zero tangent)."""
    if t._edge is not None:
        raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
    if grad_mode.forward and _has_tangent(t):
        raise RuntimeError(
            "Can't export tensors that have a forward-mode tangent, use tensor.detach() (the "
            "consumer would see the values without their tangent)"
        )


def converted(src: Any, out: Tensor, fn: Any, p: Any) -> None:
    """`out` was made outside the recorded operations, as fn(xp, values of src, p) (a copy
    or a conversion of a tensor or an array): compile's trace records it as a computation,
    so that a replay makes it again from src's values at that call."""
    if grad_mode.extended and grad_mode.tracer is not None:
        grad_mode.tracer.converted(src, out, fn, p)


def _deepcopied(xp: Any, a: Any, p: Any) -> Any:
    return xp.asarray(a, copy=True)


def _rebuild(library: str, values: Any, state: tuple) -> Tensor:
    """Unpickle a tensor: values in the array library named, requires_grad, .grad."""
    xp = _backend.namespace_named(library)
    t = Tensor(_backend.normalize(xp.asarray(values), xp), xp, None)
    requires_grad, grad = state
    if requires_grad:
        t.requires_grad_(True)
    if grad is not None:
        t._grad = grad
    return t
