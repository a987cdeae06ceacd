"""Tensor, graph nodes, the primitive factories that record them, and grad mode.

A tensor holds a raw backend array, its namespace, and `_edge`: None when it needs no gradient,
else where its gradient goes: the node that made it (a Port for output i of a node with several
outputs), or for a leaf its AccumulateGrad.
Derivative rules live in `_rules`; the engine that walks nodes lives in `autograd._engine`."""

from __future__ import annotations

import os
import threading
import traceback
import weakref

from . import _backend
from ._backend import ndarray

_SCALARS = (bool, int, float, complex)


# ----------------------------------------------------------------------------- grad mode


class _GradMode(threading.local):
    enabled = True
    anomaly = False  # detect_anomaly: nodes remember where they were created


grad_mode = _GradMode()


class _ModeContext:
    """Context manager and decorator that sets grad mode to `mode` for its duration."""

    __slots__ = ("mode", "prev")

    def __init__(self, mode: bool) -> None:
        self.mode = mode
        self.prev: list[bool] = []

    def __enter__(self):
        self.prev.append(grad_mode.enabled)
        grad_mode.enabled = self.mode

    def __exit__(self, *exc) -> None:
        grad_mode.enabled = self.prev.pop()

    def __call__(self, fn):
        mode = self.mode

        def wrapper(*args, **kwargs):
            with _ModeContext(mode):
                return fn(*args, **kwargs)

        wrapper.__name__ = getattr(fn, "__name__", "wrapper")
        wrapper.__qualname__ = getattr(fn, "__qualname__", "wrapper")
        wrapper.__doc__ = getattr(fn, "__doc__", None)
        wrapper.__wrapped__ = fn
        return wrapper


class no_grad(_ModeContext):
    """Disable recording of operations (context manager or decorator)."""

    def __init__(self) -> None:
        super().__init__(False)


class enable_grad(_ModeContext):
    """Enable recording of operations (context manager or decorator)."""

    def __init__(self) -> None:
        super().__init__(True)


class set_grad_enabled(_ModeContext):
    """Set grad mode to `mode`: at once when called, and as a context manager or decorator."""

    def __init__(self, mode: bool) -> None:
        super().__init__(bool(mode))
        self.prev.append(grad_mode.enabled)
        grad_mode.enabled = self.mode

    def __enter__(self):
        return None

    def __call__(self, fn):
        grad_mode.enabled = self.prev.pop()
        return super().__call__(fn)


def is_grad_enabled() -> bool:
    return grad_mode.enabled


# ----------------------------------------------------------------------------- nodes


class Node:
    """One recorded primitive: edges to its inputs' nodes and what its rule saved.

    `saved` is a tuple laid out by the node kind, or None once released by a backward
    without retain_graph (nodes that saved nothing share a NOTHING_SAVED tuple, which is
    never released: they can run again, as in PyTorch).
    A saved input is its raw array, never the tensor object: under create_graph it is
    rewrapped as a tensor on the input's edge (so gradients reach its history), and no node
    keeps a leaf alive (no leaf -> .grad -> node -> leaf cycle). A saved output is the raw
    array, wrapped on demand with this node as its grad_fn (no out -> node cycle). Saved
    tuples of arrays hold no node, so the cyclic GC soon stops tracking them.

    `apply(g, xp, ns)` returns one gradient (or None) per edge: with `ns` None it runs the rule
    on raw arrays of namespace `xp`; else on tensors, with `ns` (chainrule) as namespace."""

    __slots__ = ("rule", "edges", "saved", "params", "trace", "__weakref__")

    def __init__(self, rule, edges, saved, params) -> None:
        self.rule = rule
        self.edges = edges
        self.saved = saved
        self.params = params

    def name(self) -> str:
        return self.rule.backward_name

    def __repr__(self) -> str:
        return f"<{self.rule.backward_name} node>"

    def created(self) -> str:
        """Where the node was recorded (under detect_anomaly), else ''."""
        trace = getattr(self, "trace", None)
        if trace is None:
            return ""
        return f"\n{self.rule.backward_name} was created by:\n" + "".join(trace)


_PACKAGE = os.path.dirname(os.path.abspath(__file__))


def remember(node: Node) -> Node:
    """Keep the user's frames that recorded `node` (detect_anomaly only)."""
    frames = [f for f in traceback.extract_stack()[:-2] if not f.filename.startswith(_PACKAGE)]
    node.trace = traceback.format_list(frames[-6:])
    return node


class Unreleased(tuple):
    """A saved tuple the engine never releases: that of nodes that saved nothing (one shared
    instance per layout), or of a Function that saved no tensor (its ctx only)."""

    __slots__ = ()


NOTHING_SAVED = Unreleased((None, None))
NOTHING_SAVED_BINARY = Unreleased((None, None, None, None))

# Versions: a tensor that needs no grad is written in place (NumPy semantics), so a node that
# saved one keeps a Snapshot of its version cell (shared with views of it) and refuses to run
# once it moved. Tensors that need grad, and their unrecorded aliases (detach(), results under
# no_grad: marked ALIAS), are never written in place: they get a new array instead.
ALIAS = "alias"
inplace_writes = [0]


class Snapshot:
    """The version of a saved tensor that needs no grad, taken when it was saved."""

    __slots__ = ("cell", "version")

    def __init__(self, cell: list, version: int) -> None:
        self.cell = cell
        self.version = version


def version_cell(t: Tensor):
    """t's version cell, made on first use; ALIAS for tensors never written in place."""
    cell = getattr(t, "_version", None)
    if cell is None:
        cell = t._version = [0]
    return cell


def _snapshot(t):
    cell = version_cell(t)
    return None if cell is ALIAS else Snapshot(cell, cell[0])


def stale(node) -> Snapshot | None:
    """A snapshot in `node`'s saved inputs whose tensor was written since, if any."""
    saved = node.saved
    if node.__class__ is BinaryNode:
        slots = () if saved[3] is None else saved[3]
    elif node.__class__ is NaryNode or node.__class__ is MultiNode:
        slots = () if saved[0] is None else [e for _, e in saved[0]]
    else:
        return None
    for s in slots:
        if s.__class__ is Snapshot and s.cell[0] != s.version:
            return s
    return None


def _rewrap(d, e, xp):
    """A saved input as a tensor on its original edge; Python scalars and None stay."""
    if d is None or d.__class__ in _SCALARS:
        return d
    return Tensor(d, xp, None if e.__class__ is Snapshot else e)


def _save_pair(x, e):
    """(array, edge) of a saved input of an n-ary node; a snapshot for a constant tensor."""
    if e is None and x.__class__ is Tensor:
        return x._data, _snapshot(x)
    return raw(x), e


def _unrecorded(out, xp):
    """The result of an op that recorded nothing although an input needs grad (grad mode
    off): an alias of the graph's values, never written in place."""
    t = Tensor(out, xp, None)
    t._version = ALIAS
    return t


def _plain(out, xp, view_of):
    """The result of an op on tensors that need no grad; a view shares its source's cell."""
    t = Tensor(out, xp, None)
    if view_of is not None:
        t._version = version_cell(view_of)
    return t


class UnaryNode(Node):
    """Saved: (x array, out array), None where not needed."""

    __slots__ = ()

    def apply(self, g, xp, ns):
        xd, out = self.saved
        if ns is None:
            return (self.rule.vjp(xp, g, xd, out, self.params),)
        if out is not None:
            out = Tensor(out, xp, self)
        return (self.rule.vjp(ns, g, _rewrap(xd, self.edges[0], xp), out, self.params),)


class BinaryNode(Node):
    """Saved: (x, y, out, snapshots), None where not needed; x or y may be a Python scalar;
    snapshots, where an input is a saved tensor that needs no grad, replace `edges` when
    rewrapping. `params` is None when both inputs share shape and dtype, else their shapes
    and dtypes: the one generic place where broadcasting and promotion are undone."""

    __slots__ = ()

    def apply(self, g, xp, ns):
        x, y, out, snapshots = self.saved
        if ns is not None:
            xe, ye = self.edges if snapshots is None else snapshots
            x = _rewrap(x, xe, xp)
            y = _rewrap(y, ye, xp)
            if out is not None:
                out = Tensor(out, xp, self)
            xp = ns
        ex, ey = self.edges
        rule = self.rule
        gx = None if ex is None else rule.dx(xp, g, x, y, out)
        gy = None if ey is None else rule.dy(xp, g, x, y, out)
        meta = self.params
        if meta is not None:
            if gx is not None:
                gx = fit(xp, gx, meta[0], meta[1])
            if gy is not None:
                gy = fit(xp, gy, meta[2], meta[3])
        return gx, gy


def _saved_inputs(pairs, xp, ns):
    """The inputs an n-ary node saved, as raw arrays (ns None) or rewrapped tensors."""
    if pairs is None:
        return None
    if ns is None:
        return tuple(d for d, _ in pairs)
    return tuple(_rewrap(d, e, xp) for d, e in pairs)


class NaryNode(Node):
    """Saved: (inputs as (array, edge) pairs, out), None where not needed. For elementwise
    rules `params` is (rule params, input shapes and dtypes) and results are fitted to them."""

    __slots__ = ()

    def apply(self, g, xp, ns):
        pairs, out = self.saved
        xs = _saved_inputs(pairs, xp, ns)
        if ns is not None:
            if out is not None:
                out = Tensor(out, xp, self)
            xp = ns
        needs = tuple(e is not None for e in self.edges)
        rule = self.rule
        if rule.elementwise:
            p, metas = self.params
            grads = rule.vjp(xp, g, xs, out, p, needs)
            return tuple(
                None if gi is None else fit(xp, gi, *meta) for gi, meta in zip(grads, metas)
            )
        return rule.vjp(xp, g, xs, out, self.params, needs)


class MultiNode(Node):
    """A primitive with several outputs; `g` is a list with None for outputs that got none."""

    __slots__ = ("n_out",)

    def __init__(self, rule, edges, saved, params, n_out: int) -> None:
        super().__init__(rule, edges, saved, params)
        self.n_out = n_out

    def apply(self, g, xp, ns):
        pairs, outs = self.saved
        xs = _saved_inputs(pairs, xp, ns)
        if ns is not None:
            if outs is not None:
                outs = tuple(Tensor(o, xp, Port(self, i)) for i, o in enumerate(outs))
            xp = ns
        needs = tuple(e is not None for e in self.edges)
        return self.rule.vjp(xp, g, xs, outs, self.params, needs)


class Port:
    """Output `index` of a node with several outputs, as the edge of that output's tensor."""

    __slots__ = ("node", "index")

    def __init__(self, node: MultiNode, index: int) -> None:
        self.node = node
        self.index = index


def node_of(edge):
    """The node an edge leads to."""
    return edge.node if edge.__class__ is Port else edge


class AccumulateGrad:
    """Where a leaf's gradient arrives. Holds its leaf weakly: the leaf holds it strongly."""

    __slots__ = ("leaf", "__weakref__")
    edges = ()
    saved = NOTHING_SAVED

    def __init__(self, leaf: Tensor) -> None:
        self.leaf = weakref.ref(leaf)

    def name(self) -> str:
        return "AccumulateGrad"

    def __repr__(self) -> str:
        return "<AccumulateGrad>"


def fit(xp, g, shape, dtype):
    """Undo broadcasting and promotion of an input: sum to `shape`, cast to `dtype`.
    Non-elementwise rules (matmul) undo their own broadcasting: they pass shape None."""
    if shape is not None:
        g = _backend.sum_to(xp, g, shape)
    if raw(g).dtype != dtype:
        g = xp.astype(g, dtype)
    return g


# ----------------------------------------------------------------------------- rules


class Rule:
    """A primitive: forward on raw arrays and its VJPs, written against a namespace `xp`."""

    __slots__ = (
        "name", "fwd", "vjp", "dx", "dy", "save", "elementwise", "view", "backward_name",
    )  # fmt: skip

    def __init__(
        self, name, fwd, save, *, vjp=None, dx=None, dy=None, elementwise=False, view=False
    ):
        self.name = name
        self.view = view  # the forward may return a view of its input's memory
        self.fwd = fwd
        self.vjp = vjp
        self.dx = dx
        self.dy = dy
        self.save = save
        self.elementwise = elementwise
        self.backward_name = "".join(w.capitalize() for w in name.split("_")) + "Backward"

    def __repr__(self) -> str:
        return f"<rule {self.name}>"


def unary_save(save: str) -> tuple[bool, bool]:
    return "x" in save, "out" in save


def binary_save(dx_needs: str, dy_needs: str) -> tuple:
    """The (save x, save y, save out) flags for each (x needs grad, y needs grad) case."""

    def flags(needs: str) -> tuple[bool, bool, bool]:
        return "x" in needs, "y" in needs, "out" in needs

    fx, fy = flags(dx_needs), flags(dy_needs)
    none = (False, False, False)
    both = tuple(a or b for a, b in zip(fx, fy))
    return (none, fx, fy, both)


def unary_primitive(rule: Rule):
    """The op function `op(x, p)` of a one-input rule; `p` holds static parameters."""
    fwd = rule.fwd
    save_x, save_out = rule.save
    view = rule.view

    def op(x, p=None):
        if x.__class__ is not Tensor:
            x = as_tensor(x)
        xp = x._xp
        xd = x._data
        out = fwd(xp, xd, p)
        if out.__class__ is not ndarray:
            out = _backend.normalize(out, xp)
        e = x._edge
        if e is None:
            return Tensor(out, xp, None) if not view else _plain(out, xp, x)
        if not grad_mode.enabled:
            return _unrecorded(out, xp)
        if save_x:
            saved = (xd, out if save_out else None)
        else:
            saved = (None, out) if save_out else NOTHING_SAVED
        node = UnaryNode(rule, (e,), saved, p)
        return Tensor(out, xp, node if not grad_mode.anomaly else remember(node))

    op.__name__ = op.__qualname__ = rule.name
    return op


def binary_primitive(rule: Rule):
    """The op function `op(x, y)` of a two-input elementwise rule. Python scalars are
    constants: no edge, no broadcasting, saved as they are."""
    fwd = rule.fwd
    save = rule.save
    elementwise = rule.elementwise

    def op(x, y):
        scalar = False  # one side is a Python scalar: no edge, no broadcasting, no snapshot
        if x.__class__ is Tensor:
            xp = x._xp
            xd = x._data
            ex = x._edge
            if y.__class__ is Tensor:
                if y._xp is not xp:
                    mixed_error(rule.name, xp, y._xp)
                yd = y._data
                ey = y._edge
            elif y.__class__ in _SCALARS:
                yd = y
                ey = None
                scalar = True
            else:
                y = constant(y, xp)
                yd = y._data
                ey = None
        elif y.__class__ is Tensor:
            xp = y._xp
            yd = y._data
            ey = y._edge
            ex = None
            if x.__class__ in _SCALARS:
                xd = x
                scalar = True
            else:
                x = constant(x, xp)
                xd = x._data
        else:
            x = as_tensor(x)
            return op(x, y)
        out = fwd(xp, xd, yd)
        if out.__class__ is not ndarray:
            out = _backend.normalize(out, xp)
        if ex is None and ey is None:
            return Tensor(out, xp, None)
        if not grad_mode.enabled:
            return _unrecorded(out, xp)
        sx, sy, so = save[(ex is not None) + 2 * (ey is not None)]
        # A saved tensor that needs no grad is saved with a snapshot of its version.
        kx = _snapshot(x) if ex is None and sx and x.__class__ is Tensor else ex
        ky = _snapshot(y) if ey is None and sy and y.__class__ is Tensor else ey
        snapshots = None if kx is ex and ky is ey else (kx, ky)
        if sx or sy or so:
            saved = (xd if sx else None, yd if sy else None, out if so else None, snapshots)
        else:
            saved = NOTHING_SAVED_BINARY
        meta = None
        if scalar:
            pass
        elif xd.dtype is not yd.dtype and xd.dtype != yd.dtype:
            meta = (xd.shape if elementwise else None, xd.dtype,
                    yd.shape if elementwise else None, yd.dtype)  # fmt: skip
        elif elementwise and xd.shape != yd.shape:
            meta = (xd.shape, xd.dtype, yd.shape, yd.dtype)
        node = BinaryNode(rule, (ex, ey), saved, meta)
        return Tensor(out, xp, node if not grad_mode.anomaly else remember(node))

    op.__name__ = op.__qualname__ = rule.name
    return op


def nary_primitive(rule: Rule):
    """The op function `op(xs, p)` of a rule over a sequence of tensors."""
    fwd = rule.fwd
    save_inputs, save_out = rule.save
    elementwise = rule.elementwise

    def op(xs, p=None):
        xs, xp = as_tensors(xs, rule.name)
        out = fwd(xp, tuple(raw(x) for x in xs), p)
        if out.__class__ is not ndarray:
            out = _backend.normalize(out, xp)
        edges = tuple(x._edge if x.__class__ is Tensor else None for x in xs)
        if all(e is None for e in edges):
            return Tensor(out, xp, None)
        if not grad_mode.enabled:
            return _unrecorded(out, xp)
        params = p
        if elementwise:
            params = (
                p,
                tuple((x._data.shape, x._data.dtype) if e else None for x, e in zip(xs, edges)),
            )
        pairs = tuple(map(_save_pair, xs, edges)) if save_inputs else None
        saved = (pairs, out if save_out else None) if save_inputs or save_out else NOTHING_SAVED
        node = NaryNode(rule, edges, saved, params)
        return Tensor(out, xp, node if not grad_mode.anomaly else remember(node))

    op.__name__ = op.__qualname__ = rule.name
    return op


def multi_primitive(rule: Rule):
    """The op function `op(xs, p)` of a rule with several outputs; returns a tuple of tensors."""
    fwd = rule.fwd
    save_inputs, save_out = rule.save
    view = rule.view

    def op(xs, p=None):
        xs, xp = as_tensors(xs, rule.name)
        outs = tuple(_backend.normalize(o, xp) for o in fwd(xp, tuple(raw(x) for x in xs), p))
        edges = tuple(x._edge if x.__class__ is Tensor else None for x in xs)
        if all(e is None for e in edges):
            return tuple(_plain(o, xp, xs[0] if view else None) for o in outs)
        if not grad_mode.enabled:
            return tuple(_unrecorded(o, xp) for o in outs)
        pairs = tuple(map(_save_pair, xs, edges)) if save_inputs else None
        saved = (pairs, outs if save_out else None) if save_inputs or save_out else NOTHING_SAVED
        node = MultiNode(rule, edges, saved, p, len(outs))
        if grad_mode.anomaly:
            remember(node)
        return tuple(Tensor(o, xp, Port(node, i)) for i, o in enumerate(outs))

    op.__name__ = op.__qualname__ = rule.name
    return op


def raw(x):
    """The raw array of a tensor; Python scalars pass as they are."""
    return x._data if x.__class__ is Tensor else x


def mixed_error(name: str, xp, other):
    raise TypeError(
        f"{name}: cannot mix arrays of different libraries in one operation: "
        f"{_backend.name_of(xp)} and {_backend.name_of(other)}"
    )


def as_tensors(xs, name: str):
    """Tensors of one namespace from a sequence of tensors and arrays."""
    xs = tuple(xs)
    xp = None
    for x in xs:
        if x.__class__ is Tensor:
            if xp is None:
                xp = x._xp
            elif x._xp is not xp:
                mixed_error(name, xp, x._xp)
    if xp is None:
        xp = _backend.default_namespace()
    return tuple(
        x if x.__class__ is Tensor or x.__class__ in _SCALARS else constant(x, xp) for x in xs
    ), xp


def constant(obj, xp) -> Tensor:
    """A tensor that needs no gradient, from an array or Python data, in namespace `xp`."""
    if obj.__class__ is Tensor:
        return obj
    if _backend.is_array(obj) and not isinstance(obj, _backend.np.generic):
        oxp = _backend.namespace(obj)
        if oxp is not xp:
            mixed_error("constant", xp, oxp)
        return Tensor(_backend.normalize(obj, xp), xp, None)
    return Tensor(_backend.normalize(xp.asarray(obj), xp), xp, None)


def as_tensor(obj) -> Tensor:
    """`obj` as a tensor: tensors as they are, arrays wrapped without copy, Python data
    converted by the default namespace."""
    if obj.__class__ is Tensor:
        return obj
    if _backend.is_array(obj):
        xp = _backend.namespace(obj)
        return Tensor(_backend.normalize(obj, xp), xp, None)
    xp = _backend.default_namespace()
    return Tensor(_backend.normalize(xp.asarray(obj), xp), xp, None)


# ----------------------------------------------------------------------------- Tensor


class Tensor:
    """An array of any Array API library that records the operations applied to it."""

    __slots__ = ("_data", "_xp", "_edge", "_grad", "_version", "__weakref__")
    __array_priority__ = 1000.0

    def __init__(self, data, xp, edge) -> None:
        self._data = data
        self._xp = xp
        self._edge = edge

    # -- autograd attributes

    @property
    def requires_grad(self) -> bool:
        return self._edge is not None

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        e = self._edge
        if e is not None and e.__class__ is not AccumulateGrad:
            raise RuntimeError(
                "you can only change requires_grad flags of leaf variables. If you want to "
                "use a computed variable in a subgraph that doesn't require differentiation "
                "use var_no_grad = var.detach()."
            )
        if not flag:
            self._edge = None
        elif e is None:
            if _backend.dtype_kind(self._data.dtype) != "f":
                raise RuntimeError(
                    "only Tensors of real floating point dtype can require gradients "
                    f"(this tensor has dtype {self.dtype}; complex gradients are not supported)"
                )
            self._edge = AccumulateGrad(self)

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        e = self._edge
        if e is None or e.__class__ is AccumulateGrad:
            return None
        return node_of(e)

    @property
    def is_leaf(self) -> bool:
        e = self._edge
        return e is None or e.__class__ is AccumulateGrad

    @property
    def grad(self):
        # `_grad` is left unset until a gradient arrives: one assignment less per op.
        return getattr(self, "_grad", None)

    @grad.setter
    def grad(self, value) -> None:
        if value is not None:
            if value.__class__ is not Tensor:
                raise TypeError(f"assigned grad must be a Tensor or None, not {type(value)}")
            if value.shape != self.shape:
                raise RuntimeError(
                    f"assigned grad has data of a different size: {value.shape} "
                    f"for a tensor of shape {self.shape}"
                )
        self._grad = value

    def detach(self) -> Tensor:
        """The same data, cut from the graph."""
        if self._edge is None:
            return _plain(self._data, self._xp, self)
        return _unrecorded(self._data, self._xp)

    # -- array attributes

    @property
    def shape(self) -> tuple:
        return tuple(self._data.shape)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> int:
        n = 1
        for s in self._data.shape:
            n *= s
        return n

    @property
    def dtype(self):
        return _backend.from_backend_dtype(self._data.dtype)

    @property
    def device(self):
        return getattr(self._data, "device", "cpu")

    @property
    def data(self) -> Tensor:
        return self.detach()

    # -- conversion

    def numpy(self):
        """The values as a NumPy array: a NumPy-backed tensor that needs no grad is not copied."""
        np = _backend.np
        d = self._data
        if isinstance(d, ndarray):
            return d.copy() if self._edge is not None else d
        try:
            return np.from_dlpack(d)
        except (TypeError, AttributeError, BufferError, RuntimeError):
            return np.asarray(d)

    def __array__(self, dtype=None, copy=None):
        # As PyTorch: NumPy's conversion (np.asarray, code compiled against NumPy) would
        # silently cut the graph, so a tensor that requires grad refuses it.
        if self._edge is not None:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead (NumPy's conversion drops the graph: no gradient would reach it)."
            )
        a = self.numpy()
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        if copy:
            a = a.copy()
        return a

    def item(self):
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

    def tolist(self):
        return self.numpy().tolist()

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(f"the truth value of a Tensor with {self.size} elements is ambiguous")
        return bool(self.item())

    def __index__(self) -> int:
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

    def __repr__(self) -> str:
        np = _backend.np
        try:
            values = np.array2string(
                np.asarray(self.numpy()), separator=", ", prefix="tensor(", threshold=200
            )
        except Exception:
            values = repr(self._data)
        extra = []
        dt = self.dtype
        if dt not in (np.dtype("float64"), np.dtype("int64"), np.dtype("bool")):
            extra.append(f"dtype={dt}")
        if self._xp is not np:
            extra.append(f"backend={_backend.name_of(self._xp)}")
        fn = self.grad_fn
        if fn is not None:
            extra.append(f"grad_fn=<{fn.rule.backward_name}>")
        elif self._edge is not None:
            extra.append("requires_grad=True")
        return "tensor(" + ", ".join([values] + extra) + ")"

    __str__ = __repr__
