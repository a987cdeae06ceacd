"""Batched arrays, the values vmap computes with, and NAMESPACE, the Array API namespace that
computes on them. A Batched holds every sample of one vmap level at once: `value`, an array of
the library below (or a Batched of an outer level) whose axis 0 is the batch (of size `n`, or 1
for a value that is the same for every sample). Each function of NAMESPACE runs once on the
whole batch, so every rule's forward, VJP and JVP, written against `xp`, batches as written."""

from __future__ import annotations

import math
import types
import warnings
from typing import Any

from . import _backend
from ._mode import grad_mode

__all__ = ["NAMESPACE", "Batched", "batch", "every_sample", "level_of", "unbatch"]

_SCALARS = (bool, int, float, complex)


class Batched:
    """An array of vmap level `level`: `value` holds the samples along axis 0 (n of them, or
    one shared by all); its shape, dtype and operators are those of one sample."""

    __slots__ = ("value", "level", "n", "__weakref__")
    __array_ufunc__ = None  # NumPy's operators defer to ours
    __array_priority__ = 2000.0

    def __init__(self, value: Any, level: int, n: int) -> None:
        self.value = value
        self.level = level
        self.n = n

    @property
    def shape(self) -> tuple:
        return tuple(self.value.shape[1:])

    @property
    def ndim(self) -> int:
        return self.value.ndim - 1

    @property
    def size(self) -> int:
        return math.prod(self.value.shape[1:])

    @property
    def dtype(self) -> Any:
        return self.value.dtype

    @property
    def device(self) -> Any:
        return _backend.device(self.value)

    @property
    def mT(self) -> Batched:  # noqa: N802
        return NAMESPACE.matrix_transpose(self)

    @property
    def T(self) -> Batched:  # noqa: N802
        return NAMESPACE.permute_dims(self, tuple(range(self.ndim))[::-1])

    def __array_namespace__(self, *, api_version: str | None = None) -> Any:
        return NAMESPACE

    def __getitem__(self, key: Any) -> Any:
        return getitem(self, key)

    def __setitem__(self, key: Any, v: Any) -> None:
        out = assign(self, key, v)
        self.value = out.value

    def __len__(self) -> int:
        return self.value.shape[1]

    def __repr__(self) -> str:
        return f"Batched(level={self.level}, n={self.n}, value={self.value!r})"

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(
            "vmap: It looks like you're attempting to use a Tensor in some data-dependent "
            "control flow (or convert it to a Python number or a NumPy array). We don't "
            "support that: rewrite it with operations (where, ...) or move it out of vmap."
        )

    __bool__ = __float__ = __int__ = __index__ = __complex__ = __array__ = _refuse
    __dlpack__ = __dlpack_device__ = _refuse


def level_of(a: Any) -> int:
    """The vmap level of a raw value (0: not batched)."""
    return a.level if a.__class__ is Batched else 0


def every_sample(a: Any) -> Any:
    """The values of every sample of every level of `a` at once, as an array of the library
    below all levels (batch axes first): for checks on values that no sample may fail."""
    while a.__class__ is Batched:
        a = a.value
    return a


# ----------------------------------------------------------------------------- helpers


def _top(args) -> Batched | None:
    """The Batched of the innermost level among args (None if there is none)."""
    best = None
    for a in args:
        if a.__class__ is Batched and (best is None or a.level > best.level):
            best = a
    return best


def _library(args) -> Any:
    """The namespace to compute with on values below a level: the Batched one if any is
    a Batched (of an outer level), else the library of the first array, else the default."""
    for a in args:
        if a.__class__ is Batched:
            return NAMESPACE
    for a in args:
        if a is not None and a.__class__ not in _SCALARS and _backend.is_array(a):
            return _backend.namespace(a)
    return _backend.default_namespace()


def _ndim(a) -> int:
    return a.ndim if a.__class__ is Batched or hasattr(a, "ndim") else 0


def _phys(a, top: Batched, nd: int, pad: bool = False):
    """a's array at top's level with its sample axes right-aligned to `nd`: a Batched of that
    level gives its value (axes padded after the batch axis); anything else is the same for
    every sample: as it is (it broadcasts from the right), or with `pad` a leading axis of 1
    and padded too."""
    if a.__class__ is Batched and a.level == top.level:
        v = a.value
        if v.ndim - 1 < nd:
            xp = _library((v,))
            v = xp.reshape(v, (v.shape[0],) + (1,) * (nd - v.ndim + 1) + tuple(v.shape[1:]))
        return v
    if not pad or a is None or a.__class__ in _SCALARS:
        return a
    xp = _library((a,))
    return xp.reshape(a, (1,) * (nd - _ndim(a) + 1) + tuple(a.shape))


def _full(v, n: int):
    """A physical array (batch axis first) with its batch axis of size n."""
    if v.shape[0] == n:
        return v
    xp = _library((v,))
    return xp.broadcast_to(v, (n,) + tuple(v.shape[1:]))


def _wrap(out, top: Batched):
    if isinstance(out, (tuple, list)):
        return type(out)(Batched(o, top.level, top.n) for o in out)
    return Batched(out, top.level, top.n)


def _axes(axis, nd: int) -> tuple:
    """Sample axes as physical axes (shifted past the batch axis); None: every sample axis."""
    if axis is None:
        return tuple(range(1, nd + 1))
    if isinstance(axis, int):
        return (_one(axis, nd) + 1,)
    return tuple(_one(a, nd) + 1 for a in axis)


def _one(axis: int, nd: int) -> int:
    if not -nd <= axis < max(nd, 1):
        raise IndexError(f"axis {axis} is out of bounds for a tensor of dimension {nd}")
    return axis % nd if nd else 0


# ----------------------------------------------------------------------------- the fallback

_WARNED: set = set()


def _loop(name: str, get):
    """A function without a batching rule: once per sample, results stacked (warned once)."""

    def looped(*args, **kwargs):
        values = list(args) + list(kwargs.values())
        top = _top(_flat(values))
        if top is None:
            return get(_library(_flat(values)))(*args, **kwargs)
        n = _rows(_flat(values), top)
        if n > 1 and name not in _WARNED:
            _WARNED.add(name)
            warnings.warn(
                f"vmap: there is no batching rule for {name}: it runs once per sample, in a "
                "Python loop",
                stacklevel=3,
            )
        keys = list(kwargs)
        outs = []
        for i in range(n):
            sample = [_sample(a, top, i) for a in values]
            xp = _library(_flat(sample))
            outs.append(get(xp)(*sample[: len(args)], **dict(zip(keys, sample[len(args) :]))))
        xp = _library(_flat([outs[0]]) if not isinstance(outs[0], tuple) else outs[0])
        if isinstance(outs[0], tuple):
            shapes = {tuple(tuple(o.shape) for o in row) for row in outs}
        else:
            shapes = {tuple(o.shape) for o in outs}
        if len(shapes) > 1:
            raise RuntimeError(
                f"vmap: {name} gives results of different shapes for different samples (a "
                "shape that depends on the values): it can't be batched"
            )
        if isinstance(outs[0], tuple):
            return tuple(
                Batched(xp.stack([o[k] for o in outs]), top.level, top.n)
                for k in range(len(outs[0]))
            )
        return Batched(xp.stack(outs), top.level, top.n)

    looped.__name__ = name.rsplit(".", 1)[-1]
    return looped


def _rows(values, top: Batched) -> int:
    """How many samples a loop over `values` runs: top.n, or one where each of top's level
    is one row (the same for every sample): its result is one row too, where n rows would make
    an in-place write of it into a one-row tensor fail (jacfwd's lifted primals)."""
    if any(
        a.__class__ is Batched and a.level == top.level and a.value.shape[0] != 1 for a in values
    ):
        return top.n
    return 1


def _flat(values) -> list:
    out = []
    for v in values:
        if isinstance(v, (tuple, list)):
            out.extend(_flat(v))
        else:
            out.append(v)
    return out


def _sample(a, top: Batched, i: int):
    if isinstance(a, (tuple, list)):
        return type(a)(_sample(v, top, i) for v in a)
    if a.__class__ is Batched and a.level == top.level:
        return a.value[i if a.value.shape[0] != 1 else 0, ...]
    return a


# ----------------------------------------------------------------------------- elementwise


def _elementwise(name: str):
    def fn(*args, **kwargs):
        top = _top(args)
        if top is None:
            return getattr(_library(args), name)(*args, **kwargs)
        nd = max(_ndim(a) for a in args)
        phys = [_phys(a, top, nd) for a in args]
        return Batched(getattr(_library(phys), name)(*phys, **kwargs), top.level, top.n)

    fn.__name__ = name
    return fn


def _special_kernel(name: str):
    """chainrule.special's kernel `name` on Batched arrays: elementwise (its fixed orders are
    Python numbers), so it runs once on the whole batch."""

    def fn(*args):
        top = _top(args)
        if top is None:
            return _backend.special_function(_library(args), name)(*args)
        nd = max(_ndim(a) for a in args)
        phys = [_phys(a, top, nd) for a in args]
        return Batched(_backend.special_function(_library(phys), name)(*phys), top.level, top.n)

    fn.__name__ = name
    return fn


_ELEMENTWISE = (
    "abs", "acos", "acosh", "add", "asin", "asinh", "atan", "atan2", "atanh", "bitwise_and",
    "bitwise_left_shift", "bitwise_invert", "bitwise_or", "bitwise_right_shift", "bitwise_xor",
    "ceil", "conj", "copysign", "cos", "cosh", "divide", "equal", "exp", "expm1", "floor",
    "floor_divide", "greater", "greater_equal", "hypot", "imag", "isfinite", "isinf", "isnan",
    "less", "less_equal", "log", "log1p", "log2", "log10", "logaddexp", "logical_and",
    "logical_not", "logical_or", "logical_xor", "maximum", "minimum", "multiply", "negative",
    "nextafter", "not_equal", "positive", "pow", "real", "reciprocal", "remainder", "round",
    "sign", "signbit", "sin", "sinh", "square", "sqrt", "subtract", "tan", "tanh", "trunc",
    "where",
)  # fmt: skip


def clip(x, /, min=None, max=None):  # noqa: A002
    top = _top((x, min, max))
    if top is None:
        return _library((x,)).clip(x, min=min, max=max)
    nd = builtins_max(_ndim(a) for a in (x, min, max) if a is not None)
    px, pmin, pmax = (_phys(a, top, nd) for a in (x, min, max))
    return Batched(_library((px, pmin, pmax)).clip(px, min=pmin, max=pmax), top.level, top.n)


builtins_max = max


def astype(x, dtype, /, *, copy: bool = True, device: Any = None):
    if x.__class__ is not Batched:
        return _library((x,)).astype(x, dtype, copy=copy)
    return Batched(_library((x.value,)).astype(x.value, dtype, copy=copy), x.level, x.n)


def _like(name: str):
    def fn(x, /, *args, **kwargs):
        if x.__class__ is not Batched:
            return getattr(_library((x,)), name)(x, *args, **kwargs)
        return Batched(getattr(_library((x.value,)), name)(x.value, *args, **kwargs), x.level, x.n)

    fn.__name__ = name
    return fn


def asarray(obj, /, *, dtype=None, device=None, copy=None):
    """A Batched array; other values (constants joining an operation inside vmap) as arrays of
    the innermost active level, the same for every sample: so a Batched array is never the
    right operand of another library's operator (array_api_strict's refuse it)."""
    if obj.__class__ is Batched:
        xp = _library((obj.value,))
        return Batched(xp.asarray(obj.value, dtype=dtype, copy=copy), obj.level, obj.n)
    xp = _library((obj,))
    kwargs = {} if device is None else {"device": device}
    out = xp.asarray(obj, dtype=dtype, copy=copy, **kwargs)
    levels = grad_mode.vmap
    if not levels:
        return out
    level, n, _ = levels[-1]
    return Batched(xp.expand_dims(out, axis=0), level, n)


def result_type(*args):
    return _library(()).result_type(*(a.value if a.__class__ is Batched else a for a in args))


def can_cast(from_, to, /):
    return _library(()).can_cast(from_.value if from_.__class__ is Batched else from_, to)


# ----------------------------------------------------------------------------- reductions


def _reduction(name: str):
    def fn(x, /, *, axis=None, keepdims=False, **kwargs):
        if x.__class__ is not Batched:
            return getattr(_library((x,)), name)(x, axis=axis, keepdims=keepdims, **kwargs)
        axes = _axes(axis, x.ndim)
        v = getattr(_library((x.value,)), name)(x.value, axis=axes, keepdims=keepdims, **kwargs)
        return Batched(v, x.level, x.n)

    fn.__name__ = name
    return fn


def _flat_axis(name: str):
    """argmax/argmin: over one axis, or the flattened sample when axis is None."""

    def fn(x, /, *, axis=None, keepdims=False):
        if x.__class__ is not Batched:
            return getattr(_library((x,)), name)(x, axis=axis, keepdims=keepdims)
        xp = _library((x.value,))
        v = x.value
        if axis is None:
            flat = xp.reshape(v, (v.shape[0], -1))
            out = getattr(xp, name)(flat, axis=1, keepdims=keepdims)
            if keepdims:
                out = xp.reshape(out, (v.shape[0],) + (1,) * x.ndim)
            return Batched(out, x.level, x.n)
        out = getattr(xp, name)(v, axis=_one(axis, x.ndim) + 1, keepdims=keepdims)
        return Batched(out, x.level, x.n)

    fn.__name__ = name
    return fn


def _along_axis(name: str, default):
    """cumulative_sum/prod, sort, argsort: along one sample axis."""

    def fn(x, /, *, axis=default, **kwargs):
        if x.__class__ is not Batched:
            return getattr(_library((x,)), name)(x, axis=axis, **kwargs)
        a = 1 if axis is None else _one(axis, x.ndim) + 1
        return Batched(getattr(_library((x.value,)), name)(x.value, axis=a, **kwargs), x.level, x.n)

    fn.__name__ = name
    return fn


# ----------------------------------------------------------------------------- shapes


def reshape(x, /, shape, *, copy=None):
    if x.__class__ is not Batched:
        return _library((x,)).reshape(x, shape, copy=copy)
    v = x.value
    out = _library((v,)).reshape(v, (v.shape[0], *shape), copy=copy)
    return Batched(out, x.level, x.n)


def permute_dims(x, /, axes):
    if x.__class__ is not Batched:
        return _library((x,)).permute_dims(x, axes)
    nd = x.ndim
    phys = (0,) + tuple(_one(a, nd) + 1 for a in axes)
    return Batched(_library((x.value,)).permute_dims(x.value, phys), x.level, x.n)


def matrix_transpose(x, /):
    if x.__class__ is not Batched:
        return _library((x,)).matrix_transpose(x)
    if x.ndim < 2:
        raise ValueError("matrix_transpose needs an array of at least 2 dimensions")
    return Batched(_library((x.value,)).matrix_transpose(x.value), x.level, x.n)


def broadcast_to(x, /, shape):
    if x.__class__ is not Batched:
        return _library((x,)).broadcast_to(x, shape)
    v = _phys(x, x, len(shape))
    return Batched(_library((v,)).broadcast_to(v, (v.shape[0], *shape)), x.level, x.n)


def expand_dims(x, /, axis=0):
    if x.__class__ is not Batched:
        return _library((x,)).expand_dims(x, axis=axis)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    nd = x.ndim + len(axes)
    shape = list(x.shape)
    for a in sorted(_one(a, nd) for a in axes):
        shape.insert(a, 1)
    return reshape(x, tuple(shape))


def squeeze(x, /, axis):
    if x.__class__ is not Batched:
        return _library((x,)).squeeze(x, axis=axis)
    return Batched(_library((x.value,)).squeeze(x.value, axis=_axes(axis, x.ndim)), x.level, x.n)


def flip(x, /, *, axis=None):
    if x.__class__ is not Batched:
        return _library((x,)).flip(x, axis=axis)
    return Batched(_library((x.value,)).flip(x.value, axis=_axes(axis, x.ndim)), x.level, x.n)


def roll(x, /, shift, *, axis=None):
    if x.__class__ is not Batched:
        return _library((x,)).roll(x, shift, axis=axis)
    xp = _library((x.value,))
    if axis is None:
        flat = xp.reshape(x.value, (x.value.shape[0], -1))
        return reshape(Batched(xp.roll(flat, shift, axis=1), x.level, x.n), x.shape)
    return Batched(xp.roll(x.value, shift, axis=_axes(axis, x.ndim)), x.level, x.n)


def moveaxis(x, source, destination, /):
    if x.__class__ is not Batched:
        return _library((x,)).moveaxis(x, source, destination)
    xp = _library((x.value,))
    return Batched(
        xp.moveaxis(x.value, _axes(source, x.ndim), _axes(destination, x.ndim)), x.level, x.n
    )


def _joined(arrays, top: Batched, nd: int) -> list:
    """The arrays' physical values with n samples each, sample axes padded to nd."""
    out = []
    for a in arrays:
        v = _phys(a, top, nd, pad=True)
        out.append(_full(v, top.n))
    return out


def concat(arrays, /, *, axis=0):
    top = _top(arrays)
    if top is None:
        return _library(arrays).concat(arrays, axis=axis)
    if axis is None:
        flat = [reshape(a, (-1,)) if a.__class__ is Batched else _library((a,)).reshape(a, (-1,))
                for a in arrays]  # fmt: skip
        return concat(flat, axis=0)
    nd = _ndim(arrays[0])
    phys = _joined(arrays, top, nd)
    return Batched(_library(phys).concat(phys, axis=_one(axis, nd) + 1), top.level, top.n)


def stack(arrays, /, *, axis=0):
    top = _top(arrays)
    if top is None:
        return _library(arrays).stack(arrays, axis=axis)
    nd = _ndim(arrays[0])
    phys = _joined(arrays, top, nd)
    return Batched(_library(phys).stack(phys, axis=_one(axis, nd + 1) + 1), top.level, top.n)


def unstack(x, /, *, axis=0):
    if x.__class__ is not Batched:
        return _library((x,)).unstack(x, axis=axis)
    parts = _library((x.value,)).unstack(x.value, axis=_one(axis, x.ndim) + 1)
    return tuple(Batched(p, x.level, x.n) for p in parts)


def tile(x, repetitions, /):
    if x.__class__ is not Batched:
        return _library((x,)).tile(x, repetitions)
    nd = builtins_max(x.ndim, len(repetitions))
    v = _phys(x, x, nd)
    reps = (1,) + (1,) * (nd - len(repetitions)) + tuple(repetitions)
    return Batched(_library((v,)).tile(v, reps), x.level, x.n)


def repeat(x, repeats, /, *, axis=None):
    top = _top((x, repeats))
    if top is None:
        return _library((x,)).repeat(x, repeats, axis=axis)
    if repeats.__class__ is Batched:
        return _loop("repeat", lambda xp: xp.repeat)(x, repeats, axis=axis)
    xp = _library((x.value,))
    if axis is None:
        flat = xp.reshape(x.value, (x.value.shape[0], -1))
        return Batched(xp.repeat(flat, repeats, axis=1), x.level, x.n)
    return Batched(xp.repeat(x.value, repeats, axis=_one(axis, x.ndim) + 1), x.level, x.n)


def tril(x, /, *, k=0):
    if x.__class__ is not Batched:
        return _library((x,)).tril(x, k=k)
    return Batched(_library((x.value,)).tril(x.value, k=k), x.level, x.n)


def triu(x, /, *, k=0):
    if x.__class__ is not Batched:
        return _library((x,)).triu(x, k=k)
    return Batched(_library((x.value,)).triu(x.value, k=k), x.level, x.n)


# ----------------------------------------------------------------------------- products


def matmul(x1, x2, /):
    top = _top((x1, x2))
    if top is None:
        return _library((x1, x2)).matmul(x1, x2)
    d1, d2 = _ndim(x1), _ndim(x2)
    if d1 == 0 or d2 == 0:
        raise ValueError("matmul: both operands need at least one dimension")
    b1 = x1.__class__ is Batched and x1.level == top.level
    b2 = x2.__class__ is Batched and x2.level == top.level
    # One GEMM where one side is the same for every sample and a single matrix: the samples
    # of the other side become rows (or columns).
    if b1 and d1 <= 2 and d2 == 2 and (not b2 or x2.value.shape[0] == 1):
        w = x2.value[0, ...] if b2 else x2
        v = x1.value
        xp = _library((v, w))
        rows = xp.reshape(v, (-1, v.shape[-1]))
        out = xp.matmul(rows, w)
        return Batched(xp.reshape(out, tuple(v.shape[:-1]) + (w.shape[-1],)), top.level, top.n)
    if b2 and d2 == 1 and d1 == 2 and (not b1 or x1.value.shape[0] == 1):
        a = x1.value[0, ...] if b1 else x1
        v = x2.value
        xp = _library((v, a))
        return Batched(xp.matmul(v, xp.matrix_transpose(a)), top.level, top.n)
    a = x1 if d1 > 1 else expand_dims(x1, axis=0)
    b = x2 if d2 > 1 else expand_dims(x2, axis=-1)
    nd = builtins_max(_ndim(a), _ndim(b))
    pa, pb = _phys(a, top, nd, pad=True), _phys(b, top, nd, pad=True)
    xp = _library((pa, pb))
    out = xp.matmul(pa, pb)
    if d1 == 1:
        out = xp.squeeze(out, axis=-2)
    if d2 == 1:
        out = xp.squeeze(out, axis=-1)
    return Batched(out, top.level, top.n)


def vecdot(x1, x2, /, *, axis=-1):
    top = _top((x1, x2))
    if top is None:
        return _library((x1, x2)).vecdot(x1, x2, axis=axis)
    nd = builtins_max(_ndim(x1), _ndim(x2))
    a = _one(axis, nd) - nd
    p1, p2 = _phys(x1, top, nd), _phys(x2, top, nd)
    return Batched(_library((p1, p2)).vecdot(p1, p2, axis=a), top.level, top.n)


# ----------------------------------------------------------------------------- indexing


def _is_array(k) -> bool:
    """Whether key part k is an index array or a Python bool (NumPy's 0-d mask: advanced)."""
    if k is None or k is Ellipsis or isinstance(k, slice):
        return False
    return not isinstance(k, int) or k.__class__ is bool


def _split_advanced(keys) -> bool:
    """Whether the advanced entries (arrays, and ints next to arrays) are not adjacent: NumPy
    then puts their axes first, before the batch axis."""
    if not any(_is_array(k) for k in keys):
        return False
    where = [i for i, k in enumerate(keys) if _is_array(k) or isinstance(k, int)]
    return where[-1] - where[0] + 1 != len(where)


def _shared_keys(keys: tuple) -> tuple:
    """keys with each Batched index array that is the same for every sample (one row, as a
    mask computed from jacfwd's lifted primal) replaced by that row: it indexes every sample
    alike, with no per-sample gather or loop (whose result, of n rows, an in-place write into
    a tensor of one row then refused)."""
    return tuple(
        k.value[0, ...] if k.__class__ is Batched and k.value.shape[0] == 1 else k for k in keys
    )


def getitem(a, key):
    keys = _shared_keys(key if isinstance(key, tuple) else (key,))
    top = _top((a, *keys))
    if top is None:
        return _backend.getitem(_library((a,)), a, keys)
    if any(k.__class__ is Batched and k.level == top.level for k in keys):
        return _gather(a, keys, top)
    if _split_advanced(keys):
        return _loop("getitem with separated array indices", _getitem_of)(a, keys)
    v = a.value
    try:
        # Index arrays of an outer level (vmap of hessian) index with that level's getitem.
        out = _backend.getitem(_library((v, *keys)), v, (slice(None), *keys))
    except IndexError:
        # A library whose indexing refuses the batch axis's slice beside arrays or masks
        # (array_api_strict): per sample.
        return _loop("getitem with array indices (on this library)", _getitem_of)(a, keys)
    return Batched(out, top.level, top.n)


def _getitem_of(xp):
    return lambda a, keys: _backend.getitem(xp, a, keys)


def _gather(a, keys, top: Batched):
    """a[key] where the key holds Batched index arrays: a sample index joins them, first."""
    arrays = [k for k in keys if _is_array(k)]
    first = next(i for i, k in enumerate(keys) if _is_array(k) or isinstance(k, int))
    if (
        first != 0
        or _split_advanced(keys)
        or any(k.__class__ is bool or _backend.dtype_kind(k.dtype) == "b" for k in arrays)
    ):
        return _loop("getitem with per-sample index arrays", _getitem_of)(a, keys)
    nd = builtins_max(_ndim(k) for k in arrays)
    phys = tuple(_phys(k, top, nd, pad=True) if _is_array(k) else k for k in keys)
    if a.__class__ is Batched and a.level == top.level:
        v = _full(a.value, top.n)
    else:
        xp = _library((a,))
        v = xp.broadcast_to(xp.expand_dims(a, axis=0), (top.n, *a.shape))
    xp = _library((v,))
    samples = xp.reshape(xp.arange(top.n), (top.n,) + (1,) * nd)
    return Batched(v[(samples, *phys)], top.level, top.n)


def assign(a, key, v):
    """`a` with a[key] = v (a new Batched where `a` is not one of v's level)."""
    keys = _shared_keys(key if isinstance(key, tuple) else (key,))
    top = _top((a, v, *keys))
    if top is None:
        return _backend.assign(_library((a,)), a, keys, v)
    # Index arrays of an outer level (vmap of hessian) index with that level's assign.
    per_sample_keys = _split_advanced(keys) or any(
        k.__class__ is Batched and k.level == top.level for k in keys
    )
    if a.__class__ is Batched and a.level == top.level:
        target = a.value
        # A value the same for every sample (one row) keeps a target of one row one row: in
        # its memory, which other tensors may share (jacfwd's lifted views, _inplace).
        every = per_sample_keys or (
            v.__class__ is Batched and v.level == top.level and v.value.shape[0] != 1
        )
        n = top.n if every else target.shape[0]
        if target.shape[0] != n:
            xp = _library((target,))
            target = xp.asarray(_full(target, n), copy=True)
    else:
        xp = _library((a,))
        target = xp.asarray(
            xp.broadcast_to(xp.expand_dims(a, axis=0), (top.n, *a.shape)), copy=True
        )
    xp = _library((target,))
    if per_sample_keys:  # no one write for every sample
        return _assign_each(target, keys, v, top)
    phys_key = (slice(None), *keys)
    try:
        depth = _backend.getitem(_library((target, *keys)), target, phys_key).ndim - 1
    except IndexError:  # as in getitem: per sample
        return _assign_each(target, keys, v, top)
    if v.__class__ is Batched and v.level == top.level:
        pv = v.value
        if v.ndim > depth:  # leading axes of 1 beyond the selection's, as NumPy drops them
            pv = _library((pv,)).reshape(pv, (pv.shape[0],) + v.shape[v.ndim - depth :])
        else:
            pv = _phys(v, top, depth)
    else:
        pv = v
    # A value of an outer level (a gradient inside nested transforms) written into a target
    # that is the same for every outer sample: the outer level's assign lifts the target.
    target = _backend.assign(_library((target, pv)), target, phys_key, pv)
    return Batched(target, top.level, top.n)


def _assign_each(target, keys, v, top: Batched):
    """assign, one sample at a time (warned once, as every loop)."""
    n = top.n if target.shape[0] != 1 else _rows([v, *keys], top)
    if n > 1 and "item assignment" not in _WARNED:
        _WARNED.add("item assignment")
        warnings.warn(
            "vmap: there is no batching rule for item assignment with per-sample index "
            "arrays, array indices separated by slices, or array indices on this library: it "
            "runs once per sample, in a Python loop",
            stacklevel=3,
        )
    xp = _library((target,))
    rows = []
    for i in range(n):
        row = xp.asarray(target[i if target.shape[0] != 1 else 0, ...], copy=True)
        sv = _sample(v, top, i)
        rows.append(_backend.assign(_library((row, sv)), row, _sample(keys, top, i), sv))
    return Batched(_library(rows).stack(rows), top.level, top.n)


def take(x, indices, /, *, axis=None):
    top = _top((x, indices))
    if top is None:
        return _library((x, indices)).take(x, indices, axis=axis)
    if indices.__class__ is Batched and indices.level == top.level:
        return _loop("take with per-sample indices", lambda xp: xp.take)(x, indices, axis=axis)
    a = 1 if axis is None else _one(axis, x.ndim) + 1
    # Indices of an outer level (vmap of hessian): that level's take, on x's samples.
    return Batched(_library((x.value, indices)).take(x.value, indices, axis=a), top.level, top.n)


def take_along_axis(x, indices, /, *, axis=-1):
    top = _top((x, indices))
    if top is None:
        return _backend.take_along_axis(_library((x, indices)), x, indices, axis)
    nd = builtins_max(_ndim(x), _ndim(indices))
    px = _phys(x, top, nd, pad=True)
    pi = _phys(indices, top, nd, pad=True)
    if px.shape[0] != pi.shape[0]:
        px, pi = _full(px, top.n), _full(pi, top.n)
    xp = _library((px, pi))
    return Batched(_backend.take_along_axis(xp, px, pi, _one(axis, nd) + 1), top.level, top.n)


def scatter_add(positions, values, size: int, dtype):
    """_backend.scatter_add per sample: each sample's positions offset into its own block."""
    top = _top((positions, values))
    if top is None:
        return _backend.scatter_add(_library((positions, values)), positions, values, size, dtype)
    n = top.n
    pp = _full(_phys(positions, top, 1, pad=True), n)
    pv = _full(_phys(values, top, 1, pad=True), n)
    xp = _library((pp, pv))
    offsets = pp + xp.reshape(xp.arange(n) * size, (n, 1))
    flat = _backend.scatter_add(
        xp, xp.reshape(offsets, (-1,)), xp.reshape(pv, (-1,)), n * size, dtype
    )
    return Batched(xp.reshape(flat, (n, size)), top.level, n)


def searchsorted(x1, x2, /, *, side="left", sorter=None):
    top = _top((x1, x2, sorter))
    if top is None:
        return _library((x1, x2)).searchsorted(x1, x2, side=side, sorter=sorter)
    if x1.__class__ is Batched or sorter.__class__ is Batched:
        return _loop("searchsorted of per-sample sorted arrays", lambda xp: xp.searchsorted)(
            x1, x2, side=side, sorter=sorter
        )
    return Batched(
        _library((x1,)).searchsorted(x1, x2.value, side=side, sorter=sorter), top.level, top.n
    )


# ----------------------------------------------------------------------------- extensions


def _stacked(name: str, module: str):
    """A function of an extension that computes over the last axes and batches over the
    leading ones (linalg.inv, det, ...): one call on the whole batch."""

    def fn(x, /, *args, **kwargs):
        ext = getattr(_library((x,) if x.__class__ is not Batched else (x.value,)), module)
        if x.__class__ is not Batched:
            return getattr(ext, name)(x, *args, **kwargs)
        out = getattr(ext, name)(x.value, *args, **kwargs)
        return _wrap(tuple(out) if isinstance(out, tuple) else out, x)

    fn.__name__ = name
    return fn


def _matrix_exp(x, /):
    """chainrule's own matrix exponential (_backend's, no library's): one call on the batch."""
    if x.__class__ is not Batched:
        return _backend.matrix_exp(_library((x,)), x)
    return Batched(_backend.matrix_exp(_library((x.value,)), x.value), x.level, x.n)


def _solve(x1, x2, /):
    top = _top((x1, x2))
    if top is None:
        return _library((x1, x2)).linalg.solve(x1, x2)
    vector = _ndim(x2) == 1
    b = expand_dims(x2, axis=-1) if vector and x2.__class__ is Batched else x2
    if vector and x2.__class__ is not Batched:
        b = _library((x2,)).expand_dims(x2, axis=-1)
    nd = builtins_max(_ndim(x1), _ndim(b))
    pa, pb = _phys(x1, top, nd, pad=True), _phys(b, top, nd, pad=True)
    if pa.shape[0] != pb.shape[0]:
        pa, pb = _full(pa, top.n), _full(pb, top.n)
    out = _library((pa, pb)).linalg.solve(pa, pb)
    if vector:
        out = out[..., 0]
    return Batched(out, top.level, top.n)


def _vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    if x.__class__ is not Batched:
        return _library((x,)).linalg.vector_norm(x, axis=axis, keepdims=keepdims, ord=ord)
    out = _library((x.value,)).linalg.vector_norm(
        x.value, axis=_axes(axis, x.ndim), keepdims=keepdims, ord=ord
    )
    return Batched(out, x.level, x.n)


def _fft_axis(name: str):
    def fn(x, /, *args, axis=-1, **kwargs):
        fft = _library((x,) if x.__class__ is not Batched else (x.value,)).fft
        if x.__class__ is not Batched:
            return getattr(fft, name)(x, *args, axis=axis, **kwargs)
        out = getattr(fft, name)(x.value, *args, axis=_one(axis, x.ndim) + 1, **kwargs)
        return Batched(out, x.level, x.n)

    fn.__name__ = name
    return fn


def _fft_axes(name: str):
    def fn(x, /, *args, axes=None, **kwargs):
        fft = _library((x,) if x.__class__ is not Batched else (x.value,)).fft
        if x.__class__ is not Batched:
            return getattr(fft, name)(x, *args, axes=axes, **kwargs)
        if axes is None:
            s = kwargs.get("s") if not args else args[0]
            nd = x.ndim
            axes = tuple(range(nd - len(s), nd)) if s is not None else tuple(range(nd))
        out = getattr(fft, name)(x.value, *args, axes=_axes(axes, x.ndim), **kwargs)
        return Batched(out, x.level, x.n)

    fn.__name__ = name
    return fn


class _Extension(types.ModuleType):
    """linalg or fft of NAMESPACE: functions without a batching rule loop (see _loop)."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        ext = self.__name__.rsplit(".", 1)[-1]
        fn = _loop(f"{ext}.{name}", lambda xp: getattr(getattr(xp, ext), name))
        setattr(self, name, fn)
        return fn


def _linalg() -> types.ModuleType:
    ns = _Extension("vmap.linalg")
    for name in (
        "inv", "det", "slogdet", "cholesky", "qr", "eigh", "eigvalsh", "svd", "svdvals", "pinv",
        "matrix_rank", "matrix_power", "matrix_norm", "diagonal", "trace", "eig", "eigvals",
    ):  # fmt: skip
        setattr(ns, name, _stacked(name, "linalg"))
    ns.solve = _solve
    ns.matrix_exp = _matrix_exp
    ns.vector_norm = _vector_norm
    ns.matmul = matmul
    ns.matrix_transpose = matrix_transpose
    ns.vecdot = vecdot
    return ns


def _fft() -> types.ModuleType:
    ns = _Extension("vmap.fft")
    for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft"):
        setattr(ns, name, _fft_axis(name))
    for name in ("fftn", "ifftn", "rfftn", "irfftn", "fftshift", "ifftshift"):
        setattr(ns, name, _fft_axes(name))
    return ns


# ----------------------------------------------------------------------------- the namespace


class _Namespace(types.ModuleType):
    """NAMESPACE: the functions above; other names are the default library's (dtypes,
    creation functions on Python data) or, for a function given Batched arrays, a loop."""

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        value = getattr(_backend.default_namespace(), name)
        if callable(value) and not isinstance(value, type):
            value = _loop(name, lambda xp: getattr(xp, name))
        setattr(self, name, value)
        return value


def _build() -> _Namespace:
    ns = _Namespace("vmap")
    ns.__doc__ = "The Array API namespace of Batched arrays (vmap's)."
    for name in _ELEMENTWISE:
        setattr(ns, name, _elementwise(name))
    for name in ("sum", "prod", "mean", "max", "min", "std", "var", "all", "any", "count_nonzero"):
        setattr(ns, name, _reduction(name))
    for name in ("argmax", "argmin"):
        setattr(ns, name, _flat_axis(name))
    for name, default in (
        ("cumulative_sum", None), ("cumulative_prod", None), ("sort", -1), ("argsort", -1),
    ):  # fmt: skip
        setattr(ns, name, _along_axis(name, default))
    for name in ("zeros_like", "ones_like", "empty_like", "full_like"):
        setattr(ns, name, _like(name))
    for fn in (
        clip, astype, asarray, result_type, can_cast, reshape, permute_dims, matrix_transpose,
        broadcast_to, expand_dims, squeeze, flip, roll, moveaxis, concat, stack, unstack, tile,
        repeat, tril, triu, matmul, vecdot, take, take_along_axis, searchsorted,
    ):  # fmt: skip
        setattr(ns, fn.__name__, fn)
    # Library gaps that _backend fills for vmap (names apart from the rule table's EXTRAS,
    # which share the namespaces VJPs run with).
    ns.vmap_getitem = getitem
    ns.vmap_assign = assign
    ns.vmap_scatter_add = scatter_add
    ns.special_kernel = _special_kernel
    ns.linalg = _linalg()
    ns.fft = _fft()
    return ns


NAMESPACE = _build()
_backend.register_namespace(Batched, NAMESPACE)


# ----------------------------------------------------------------------------- vmap's boundary


def batch(x, level: int, n: int, axis: int | None):
    """x (an array of the level below) as a Batched of `level`: its axis `axis` is the batch
    (moved to the front), or with axis None the same value for every sample. A value of
    higher levels (a graph recorded inside vmap, run again inside another vmap) is batched
    under them: levels stay nested, the higher outside."""
    outer = []
    while x.__class__ is Batched and x.level > level:
        outer.append(x)
        x = x.value
        axis = None if axis is None else axis + 1
    xp = _library((x,))
    if axis is None:
        # A value that already differs per sample (a tangent or gradient) stays as it is.
        if x.__class__ is Batched and x.level == level:
            return _rewrapped(x, outer)
        out = Batched(xp.expand_dims(x, axis=0), level, n)
    else:
        out = Batched(x if axis == 0 else xp.moveaxis(x, axis, 0), level, n)
    return _rewrapped(out, outer)


def unbatch(x, level: int, n: int, axis: int | None):
    """The adjoint of batch: a Batched of `level` as an array of the level below with the
    batch at `axis`; with axis None, the sum over the batch. Levels above `level` stay."""
    outer = []
    while x.__class__ is Batched and x.level > level:
        outer.append(x)
        x = x.value
        axis = None if axis is None else axis + 1
    if x.__class__ is not Batched or x.level != level:
        # The same for every sample (a value of the level below).
        xp = _library((x,))
        if axis is None:
            out = x * n
        else:
            out = xp.broadcast_to(xp.expand_dims(x, axis=axis), _inserted(x.shape, axis, n))
        return _rewrapped(out, outer)
    v = x.value
    xp = _library((v,))
    if axis is None:
        s = xp.sum(v, axis=0)
        out = s * n if v.shape[0] != n else s
    else:
        v = _full(v, n)
        out = v if axis == 0 else xp.moveaxis(v, 0, axis)
    return _rewrapped(out, outer)


def _rewrapped(value, outer: list):
    """value inside the levels `outer` (outermost first) again."""
    for b in reversed(outer):
        value = Batched(value, b.level, b.n)
    return value


def _inserted(shape, axis: int, n: int) -> tuple:
    shape = list(shape)
    shape.insert(axis, n)
    return tuple(shape)


_OPERATORS = (
    ("add", "__add__", "__radd__"), ("subtract", "__sub__", "__rsub__"),
    ("multiply", "__mul__", "__rmul__"), ("divide", "__truediv__", "__rtruediv__"),
    ("floor_divide", "__floordiv__", "__rfloordiv__"), ("remainder", "__mod__", "__rmod__"),
    ("pow", "__pow__", "__rpow__"), ("matmul", "__matmul__", "__rmatmul__"),
    ("bitwise_and", "__and__", "__rand__"), ("bitwise_or", "__or__", "__ror__"),
    ("bitwise_xor", "__xor__", "__rxor__"), ("bitwise_left_shift", "__lshift__", "__rlshift__"),
    ("bitwise_right_shift", "__rshift__", "__rrshift__"),
    ("equal", "__eq__", None), ("not_equal", "__ne__", None), ("less", "__lt__", None),
    ("less_equal", "__le__", None), ("greater", "__gt__", None),
    ("greater_equal", "__ge__", None),
)  # fmt: skip


def _bind_operators() -> None:
    for name, dunder, reflected in _OPERATORS:
        fn = getattr(NAMESPACE, name)
        setattr(Batched, dunder, lambda a, b, fn=fn: fn(a, b))
        if reflected is not None:
            setattr(Batched, reflected, lambda a, b, fn=fn: fn(b, a))
    for name, dunder in (
        ("negative", "__neg__"), ("positive", "__pos__"), ("abs", "__abs__"),
        ("bitwise_invert", "__invert__"),
    ):  # fmt: skip
        fn = getattr(NAMESPACE, name)
        setattr(Batched, dunder, lambda a, fn=fn: fn(a))
    Batched.__hash__ = object.__hash__  # type: ignore[method-assign]


_bind_operators()
