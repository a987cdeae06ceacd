"""NumPy's functions and ufuncs that chainrule has no function of its own for, written with
chainrule's differentiable functions (so every order and forward mode come with them), with
the NumPy parameters each takes. The tables of `_numpy_functions` map the others; `_interop`
dispatches to the merged TABLES and to UFUNCS here."""

from __future__ import annotations

import itertools
import math
import operator

import numpy as np

from . import _backend, linalg, special
from . import _namespace as ops
from ._backend import normalize_axes
from ._batching import every_sample
from ._einsum import einsum
from ._mode import grad_mode
from ._numpy_functions import LINALG as _LINALG
from ._numpy_functions import TABLES as _TABLES
from ._numpy_functions import _custom, _flat, _ints
from ._rules import OPS
from ._tensor import Tensor


def _axis(axis: int, ndim: int) -> int:
    return normalize_axes(axis, ndim)[0]


def _along(ndim: int, axis: int, key) -> tuple:
    """An index that applies `key` (a slice or an int) along `axis` and takes all of others."""
    return (slice(None),) * axis + (key,) + (slice(None),) * (ndim - axis - 1)


def _indices(like, values):
    """An int64 index tensor of like's array library."""
    xp = like._xp
    return ops.asarray(xp.asarray(list(values), dtype=xp.int64))


def _mask(like, values):
    """A bool tensor of like's array library from nested Python lists."""
    xp = like._xp
    return ops.asarray(xp.asarray(values, dtype=xp.bool))


def _filled(like, shape, value):
    """A tensor of `shape` filled with `value`, of like's array library and dtype."""
    return ops.asarray(like._xp.full(shape, value, dtype=like._data.dtype))


def _beside(like, value):
    """value as a tensor of like's array library (Python data and NumPy scalars converted
    there, not by the default library)."""
    if value.__class__ is Tensor or _backend.is_array(value) and not isinstance(value, np.generic):
        return ops.asarray(value)
    return ops.asarray(like._xp.asarray(value))


def _float(x):
    """x as a tensor of a floating dtype (integers and bools as float64, as NumPy)."""
    x = ops.asarray(x)
    return x if x.dtype.kind in "fc" else ops.astype(x, ops.float64)


# ----------------------------------------------------------------------------- ufuncs


def _deg2rad(x):
    return x * (math.pi / 180)


def _rad2deg(x):
    return x * (180 / math.pi)


def _exp2(x):
    return ops.exp(x * math.log(2))


def _logaddexp2(x1, x2):
    ln2 = math.log(2)
    return ops.logaddexp(x1 * ln2, x2 * ln2) / ln2


def _nan_ignoring(pick: str):
    """fmax, fmin: maximum or minimum, the other operand where one is NaN."""

    def handler(x1, x2):
        x1, x2 = ops.asarray(x1), ops.asarray(x2)
        both = getattr(ops, pick)(x1, x2)
        return ops.where(ops.isnan(x2), x1, ops.where(ops.isnan(x1), x2, both))

    return handler


def _fabs(x):
    x = ops.asarray(x)
    if x.dtype.kind == "c":
        raise TypeError("ufunc 'fabs' not supported for complex inputs")
    return ops.abs(x)


# NumPy ufunc name -> a function of the ufunc's inputs.
UFUNCS = {
    "deg2rad": _deg2rad,
    "radians": _deg2rad,
    "rad2deg": _rad2deg,
    "degrees": _rad2deg,
    "exp2": _exp2,
    "logaddexp2": _logaddexp2,
    "fmax": _nan_ignoring("maximum"),
    "fmin": _nan_ignoring("minimum"),
    "fabs": _fabs,
}


# ----------------------------------------------------------------------------- elementwise


def _angle(z, deg=False):
    out = ops.angle(z)
    return out * (180 / math.pi) if deg else out


def _sinc(x):
    """sin(pi x) / (pi x), 1 at 0 (chainrule.special.sinc, right at 0 to any order)."""
    return special.sinc(_float(x))


def _iscomplex(x):
    x = ops.asarray(x)
    if x.dtype.kind != "c":
        return ops.zeros_like(x, dtype=ops.bool)
    return ops.imag(x) != 0


def _isreal(x):
    x = ops.asarray(x)
    if x.dtype.kind != "c":
        return ops.ones_like(x, dtype=ops.bool)
    return ops.imag(x) == 0


def _nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = ops.asarray(x)
    if x.dtype.kind not in "fc":
        return x
    if x.dtype.kind == "c":
        re, im = (
            _nan_to_num(part, True, nan, posinf, neginf) for part in (ops.real(x), ops.imag(x))
        )
        return ops.astype(re, x.dtype) + im * 1j
    big = ops.finfo(x.dtype).max
    x = ops.where(ops.isnan(x), nan, x)
    x = ops.where(x == math.inf, big if posinf is None else posinf, x)
    return ops.where(x == -math.inf, -big if neginf is None else neginf, x)


def _real_if_close(a, tol=100):
    """The real part where every imaginary part is within tol (machine epsilons when > 1)."""
    a = ops.asarray(a)
    if a.dtype.kind != "c":
        return a
    if tol > 1:
        tol = ops.finfo(a.dtype).eps * tol
    return ops.real(a) if bool(ops.all(ops.abs(ops.imag(a)) < tol)) else a


# ---------------------------------------------------------------------- NaN-ignoring reductions


def _nansum(a, axis=None, dtype=None, keepdims=False):
    a = ops.asarray(a)
    if a.dtype.kind in "fc":
        a = ops.where(ops.isnan(a), 0, a)
    return ops.sum(a, axis=axis, dtype=dtype, keepdims=keepdims)


def _nanmean(a, axis=None, dtype=None, keepdims=False):
    a = _float(a) if dtype is None else ops.astype(ops.asarray(a), dtype)
    known = ops.logical_not(ops.isnan(a))
    count = ops.sum(ops.astype(known, a.dtype), axis=axis, keepdims=keepdims)
    return ops.sum(ops.where(known, a, 0), axis=axis, keepdims=keepdims) / count


def _nan_spread(name: str):
    """nanvar, nanstd: the spread of the values that are not NaN, divided by their count less
    ddof (NaN where that is not positive, as NumPy's)."""

    def handler(a, axis=None, dtype=None, ddof=0, keepdims=False):
        a = _float(a) if dtype is None else ops.astype(ops.asarray(a), dtype)
        known = ops.logical_not(ops.isnan(a))
        count = ops.sum(ops.astype(known, ops.real(a).dtype), axis=axis, keepdims=True)
        mean = ops.sum(ops.where(known, a, 0), axis=axis, keepdims=True) / count
        d = ops.where(known, a - mean, 0)
        sq = ops.real(d * ops.conj(d)) if a.dtype.kind == "c" else d * d
        left = ops.sum(sq, axis=axis, keepdims=keepdims)
        n = count - ddof if keepdims else ops.reshape(count - ddof, left.shape)
        var = ops.where(n > 0, left / ops.where(n > 0, n, 1), math.nan)
        return var if name == "nanvar" else ops.sqrt(var)

    return _custom(handler)


def _ptp(a, axis=None, keepdims=False):
    """The range max - min along `axis` (the gradient: +1 at the maximum, -1 at the minimum)."""
    a = ops.asarray(a)
    return ops.max(a, axis=axis, keepdims=keepdims) - ops.min(a, axis=axis, keepdims=keepdims)


def _nan_extreme(pick: str):
    """nanmax, nanmin: NaN only where a whole slice is NaN, as NumPy."""

    def handler(a, axis=None, keepdims=False):
        a = ops.asarray(a)
        if a.dtype.kind != "f":
            return getattr(ops, pick)(a, axis=axis, keepdims=keepdims)
        nan = ops.isnan(a)
        fill = -math.inf if pick == "max" else math.inf
        out = getattr(ops, pick)(ops.where(nan, fill, a), axis=axis, keepdims=keepdims)
        return ops.where(ops.all(nan, axis=axis, keepdims=keepdims), math.nan, out)

    return _custom(handler)


# ----------------------------------------------------------------------------- complex order


def _extreme(pick: str):
    """max, amax, min, amin: chainrule's for real values; for complex ones NumPy's order
    (lexicographic: real parts, then imaginary ones), as the element NumPy's argmax or argmin
    picks (the first of ties), so the gradient reaches the element chosen."""

    def handler(a, axis=None, keepdims=False):
        a = ops.asarray(a)
        if a.dtype.kind != "c":
            return getattr(ops, pick)(a, axis=axis, keepdims=keepdims)
        if a.size == 0:
            raise ValueError(
                f"zero-size array to reduction operation {pick}imum which has no identity"
            )
        axes = normalize_axes(axis, a.ndim)
        rest = [i for i in range(a.ndim) if i not in axes]
        moved = ops.permute_dims(a, tuple(rest + list(axes)))
        flat = ops.reshape(moved, tuple(a.shape[i] for i in rest) + (-1,))
        index = getattr(ops, f"arg{pick}")(flat, axis=-1, keepdims=True)
        out = ops.take_along_axis(flat, index, axis=-1)[..., 0]
        if keepdims:
            out = ops.reshape(out, tuple(1 if i in axes else n for i, n in enumerate(a.shape)))
        return out

    return _custom(handler)


# ----------------------------------------------------------------------------- shape and order


def _diag(v, k=0):
    """The k-th diagonal of a matrix, or a matrix with a vector on its k-th diagonal."""
    v = ops.asarray(v)
    if v.ndim == 2:
        return linalg.diagonal(v, offset=k)
    if v.ndim != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = v.shape[0] + abs(k)
    pad = _filled(v, (abs(k),), 0)
    shifted = ops.concat([pad, v] if k > 0 else [v, pad])
    on = ops.asarray(v._xp.eye(n, k=k, dtype=v._xp.bool))
    return ops.where(on, shifted[None, :], _filled(v, (), 0))


def _diagflat(v, k=0):
    return _diag(_flat(ops.asarray(v)), k)


def _split_points(n: int, indices_or_sections, equal: bool) -> list[tuple[int, int]]:
    """(start, stop) of each piece of an axis of n elements, as NumPy's array_split cuts it."""
    try:
        sections = operator.index(indices_or_sections)
    except TypeError:
        bounds = [0, *(operator.index(i) for i in indices_or_sections), n]
        return list(zip(bounds[:-1], bounds[1:]))
    if sections <= 0:
        raise ValueError("number sections must be larger than 0.")
    if equal and n % sections:
        raise ValueError("array split does not result in an equal division")
    each, extra = divmod(n, sections)
    sizes = [each + 1] * extra + [each] * (sections - extra)
    starts = [sum(sizes[:i]) for i in range(sections)]
    return [(s, s + size) for s, size in zip(starts, sizes)]


def _splitter(equal: bool, fixed_axis=None, least_ndim=0):
    """split, array_split (any axis); vsplit, hsplit, dsplit (axis 0, 1 or 2)."""

    def cut(a, indices_or_sections, axis):
        a = ops.asarray(a)
        if a.ndim < least_ndim:
            raise ValueError(
                f"{fixed_axis} only works on arrays of {least_ndim} or more dimensions"
            )
        if fixed_axis == "hsplit" and a.ndim == 1:
            axis = 0
        axis = _axis(axis, a.ndim)
        points = _split_points(a.shape[axis], indices_or_sections, equal)
        return [a[_along(a.ndim, axis, slice(lo, hi))] for lo, hi in points]

    if fixed_axis is None:

        def handler(ary, indices_or_sections, axis=0):
            return cut(ary, indices_or_sections, axis)

    else:
        along = {"vsplit": 0, "hsplit": 1, "dsplit": 2}[fixed_axis]

        def handler(ary, indices_or_sections):
            return cut(ary, indices_or_sections, along)

    return _custom(handler)


def _append(arr, values, axis=None):
    arr = ops.asarray(arr)
    values = _beside(arr, values)
    if axis is None:
        return ops.concat([_flat(arr), _flat(values)])
    return ops.concat([arr, values], axis=axis)


def _positions(obj, n: int) -> list[int]:
    """NumPy's index object (an int, a slice, a sequence, a bool mask) as positions in 0..n-1."""
    if isinstance(obj, slice):
        return list(range(*obj.indices(n)))
    try:
        found = [operator.index(obj)]
    except TypeError:
        dtype = getattr(obj, "dtype", None)
        items = obj.tolist() if hasattr(obj, "tolist") else list(obj)
        if dtype is not None and _backend.dtype_kind(dtype) == "b":
            return [i for i, keep in enumerate(items) if keep]
        found = [operator.index(i) for i in items]
    for i in found:
        if not -n <= i < n:
            raise IndexError(f"index {i} is out of bounds for axis 0 with size {n}")
    return [i % n for i in found]


def _delete(arr, obj, axis=None):
    a = ops.asarray(arr)
    if axis is None:
        a, axis = _flat(a), 0
    axis = _axis(axis, a.ndim)
    gone = set(_positions(obj, a.shape[axis]))
    return ops.take(a, _indices(a, (i for i in range(a.shape[axis]) if i not in gone)), axis=axis)


def _insert(arr, obj, values, axis=None):
    """The values placed before the positions `obj` along `axis`, by one gather from arr and
    the values side by side (so both get gradients)."""
    a = ops.asarray(arr)
    if axis is None:
        a, axis = _flat(a), 0
    axis = _axis(axis, a.ndim)
    n = a.shape[axis]
    values = ops.astype(_beside(a, values), a.dtype)
    if isinstance(obj, slice):
        obj = list(range(*obj.indices(n)))
    try:
        at = [operator.index(obj)]
        scalar = True
    except TypeError:
        at = [operator.index(i) for i in (obj.tolist() if hasattr(obj, "tolist") else obj)]
        scalar = False
    for i in at:
        if not -n <= i <= n:
            raise IndexError(f"index {i} is out of bounds for axis {axis} with size {n}")
    at = [i + n if i < 0 else i for i in at]
    if scalar:  # the values' first axis goes along `axis`, as many as it has
        values = ops.reshape(values, (1,) * (a.ndim - values.ndim) + values.shape)
        values = ops.moveaxis(values, 0, axis)
        m = values.shape[axis]
        at = at * m
    else:
        m = len(at)
    shape = a.shape[:axis] + (m,) + a.shape[axis + 1 :]
    values = ops.broadcast_to(values, shape)
    order = sorted(range(m), key=lambda r: at[r])  # stable, as NumPy's mergesort
    source = [None] * (n + m)
    for rank, r in enumerate(order):
        source[at[r] + rank] = n + r
    rest = iter(range(n))
    source = [next(rest) if s is None else s for s in source]
    return ops.take(ops.concat([a, values], axis=axis), _indices(a, source), axis=axis)


def _flipper(axis: int, name: str):
    def handler(m):
        m = ops.asarray(m)
        if m.ndim <= axis:
            raise ValueError(f"Input must be >= {axis + 1}-d.")
        return ops.flip(m, axis=axis)

    handler.__name__ = name
    return _custom(handler)


def _rot90(m, k=1, axes=(0, 1)):
    m = ops.asarray(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == m.ndim:
        raise ValueError("Axes must be different.")
    if not (-m.ndim <= axes[0] < m.ndim and -m.ndim <= axes[1] < m.ndim):
        raise ValueError(f"Axes={axes} out of range for array of ndim={m.ndim}.")
    k %= 4
    if k == 0:
        return m[...]
    if k == 2:
        return ops.flip(ops.flip(m, axis=axes[0]), axis=axes[1])
    order = list(range(m.ndim))
    a0, a1 = axes[0] % m.ndim, axes[1] % m.ndim
    order[a0], order[a1] = order[a1], order[a0]
    if k == 1:
        return ops.permute_dims(ops.flip(m, axis=axes[1]), tuple(order))
    return ops.flip(ops.permute_dims(m, tuple(order)), axis=axes[1])


def _rollaxis(a, axis, start=0):
    a = ops.asarray(a)
    n = a.ndim
    axis = _axis(axis, n)
    if not -n <= start <= n:
        raise ValueError(f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if start < 0:
        start += n
    if axis < start:
        start -= 1
    if axis == start:
        return a[...]
    order = [i for i in range(n) if i != axis]
    order.insert(start, axis)
    return ops.permute_dims(a, tuple(order))


def _pairs(value, ndim: int, what: str) -> list[tuple]:
    """NumPy's pad widths (or constant values) per axis: a scalar, (both,), (before, after),
    ((before, after),) or one pair per axis."""
    if not isinstance(value, (list, tuple)) and getattr(value, "ndim", 0) == 0:
        return [(value, value)] * ndim
    rows = value.tolist() if hasattr(value, "tolist") else list(value)
    if all(not isinstance(r, (list, tuple)) for r in rows):
        rows = [rows]
    pairs = [tuple(r) * (2 if len(r) == 1 else 1) for r in rows]
    if len(pairs) == 1:
        pairs = pairs * ndim
    if len(pairs) != ndim or any(len(p) != 2 for p in pairs):
        raise ValueError(f"{what} cannot be broadcast to ({ndim}, 2)")
    return pairs


def _source(i: int, n: int, mode: str) -> int:
    """The position of axis element i (any integer, negative before the start) that NumPy's pad
    `mode` copies into the padded array."""
    if mode == "edge":
        return min(max(i, 0), n - 1)
    if mode == "wrap":
        return i % n
    if mode == "reflect":  # mirrored about the edge elements: period 2 (n - 1)
        if n == 1:
            return 0
        j = i % (2 * n - 2)
        return j if j < n else 2 * n - 2 - j
    j = i % (2 * n)  # symmetric: mirrored with the edge elements repeated
    return j if j < n else 2 * n - 1 - j


def _pad(array, pad_width, mode="constant", constant_values=0):
    """Constant, edge, reflect, symmetric and wrap padding, axis by axis: constants by
    concatenation, the others by one gather per axis."""
    a = ops.asarray(array)
    if not isinstance(mode, str) or mode not in (
        "constant",
        "edge",
        "reflect",
        "symmetric",
        "wrap",
    ):
        raise NotImplementedError(
            f"chainrule's numpy.pad has the modes constant, edge, reflect, symmetric and wrap, "
            f"not {mode!r}"
        )
    widths = _pairs(pad_width, a.ndim, "pad_width")
    for before, after in widths:
        if operator.index(before) < 0 or operator.index(after) < 0:
            raise ValueError("index can't contain negative values")
    constants = _pairs(constant_values, a.ndim, "constant_values")
    for axis, (before, after) in enumerate(widths):
        if not before and not after:
            continue
        n = a.shape[axis]
        if mode == "constant":
            parts = []
            for width, value in zip((before, after), constants[axis]):
                shape = a.shape[:axis] + (width,) + a.shape[axis + 1 :]
                parts.append(_filled(a, shape, value))
            a = ops.concat([parts[0], a, parts[1]], axis=axis)
            continue
        if n == 0:
            raise ValueError(
                f"can't extend empty axis {axis} using modes other than 'constant' or 'empty'"
            )
        source = [_source(i, n, mode) for i in range(-before, n + after)]
        a = ops.take(a, _indices(a, source), axis=axis)
    return a


def _partition(a, kth, axis=-1, kind="introselect"):
    """A sorted array is a valid partition for every kth (NumPy leaves the order within each
    side unspecified)."""
    a = ops.asarray(a)
    if axis is None:
        a, axis = _flat(a), -1
    n = a.shape[_axis(axis, a.ndim)] if a.ndim else 0
    for k in _ints(kth):
        if not -n <= k < n:
            raise ValueError(f"kth(={k}) out of bounds ({n})")
    return ops.sort(a, axis=axis)


def _apply_along_axis(func1d, axis, arr, args=()):
    """func1d of every 1-D slice of arr along `axis`, in C order of the other axes; the results
    (of one shape) stacked where the axis was, as NumPy's. Differentiable as func1d is."""
    arr = ops.asarray(arr)
    axis = _axis(axis, arr.ndim)
    outer = arr.shape[:axis] + arr.shape[axis + 1 :]
    if 0 in outer:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    moved = ops.permute_dims(arr, (*range(axis), *range(axis + 1, arr.ndim), axis))
    results = [
        _beside(arr, func1d(moved[index], *args))
        for index in itertools.product(*(range(n) for n in outer))
    ]
    shape = results[0].shape
    out = ops.reshape(ops.stack(results), outer + shape)
    # The result's axes go where `axis` was: (outer before axis, result's, outer after).
    n, k = len(outer), len(shape)
    return ops.permute_dims(out, (*range(axis), *range(n, n + k), *range(axis, n)))


def _argpartition(a, kth, axis=-1, kind="introselect"):
    """Indices that sort `a`: a valid partition for every kth, as _partition."""
    a = ops.asarray(a)
    if axis is None:
        a, axis = _flat(a), -1
    _partition(a, kth, axis)  # NumPy's check of kth
    return ops.argsort(a, axis=axis)


def _flatnonzero(a):
    """The flat positions of a's nonzero elements."""
    return ops.nonzero(_flat(ops.asarray(a)))[0]


def _fill_diagonal(a, val, wrap=False):
    """NumPy's in-place fill of a's main diagonal (of a 2-D tensor, rows past the square ones
    too when wrap; of an n-D one whose sides are equal, a[i, ..., i]), through `a.flat`."""
    if a.__class__ is not Tensor:
        raise TypeError("fill_diagonal writes a tensor in place: a must be a chainrule Tensor")
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    end = None
    if a.ndim == 2:
        step = a.shape[1] + 1
        if not wrap:
            end = a.shape[1] * a.shape[1]
    else:
        if len(set(a.shape)) != 1:
            raise ValueError("All dimensions of input must be of equal length")
        step = 1 + sum(math.prod(a.shape[:i]) for i in range(1, a.ndim))
    a.flat[:end:step] = val


def _select(condlist, choicelist, default=0):
    if len(condlist) != len(choicelist):
        raise ValueError("list of cases must be same length as list of conditions")
    if not len(condlist):
        raise ValueError("select with an empty condition list is not possible")
    # A Python number stays one (a weak scalar, as NumPy's: float32 choices stay float32).
    weak = default.__class__ in (int, float, complex)
    out = default if weak else _beside(ops.asarray(choicelist[0]), default)
    for cond, choice in zip(reversed(list(condlist)), reversed(list(choicelist))):
        out = ops.where(ops.asarray(cond), choice, out)
    shape = ops.broadcast_shapes(
        *(ops.asarray(c).shape for c in (*condlist, *choicelist)), out.shape
    )
    return ops.broadcast_to(out, shape)


def _piecewise(x, condlist, funclist, args=()):
    """Each function evaluated on the elements its condition selects only (as NumPy: a function
    need not be defined elsewhere), written into the result by masked assignment."""
    x = ops.asarray(x)
    if not isinstance(condlist, (list, tuple)):
        condlist = [condlist]
    conds = [ops.broadcast_to(ops.asarray(c), x.shape) for c in condlist]
    if len(funclist) == len(conds) + 1:
        rest = ops.logical_not(ops.any(ops.stack(conds), axis=0)) if conds else None
        conds.append(ops.ones_like(x, dtype=ops.bool) if rest is None else rest)
    elif len(funclist) != len(conds):
        raise ValueError(
            f"with {len(conds)} condition(s), either {len(conds)} or {len(conds) + 1} "
            "functions are expected"
        )
    out = ops.zeros_like(x)
    for cond, f in zip(conds, funclist):
        if callable(f):
            out[cond] = f(x[cond], *args)
        else:
            out = ops.where(cond, f, out)
    return out


# ----------------------------------------------------------------------------- creation


def _linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    """Evenly spaced values from start to stop (tensors, broadcast), NumPy's arithmetic."""
    if start.__class__ is Tensor:
        stop = _beside(start, ops.weak_number(stop, start))
    else:
        start = _beside(stop, ops.weak_number(start, stop))
    start, stop = _float(start), _float(stop)
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    div = num - 1 if endpoint else num
    delta = stop - start
    shape = ops.broadcast_shapes(start.shape, stop.shape)
    like = start if start.ndim >= stop.ndim else stop
    steps = ops.astype(
        ops.reshape(ops.asarray(like._xp.arange(num)), (-1,) + (1,) * len(shape)), delta.dtype
    )
    if div > 0:
        step = delta / div
        y = steps * step + start
    else:
        step = delta * math.nan
        y = steps * delta + start
    if endpoint and num > 1:
        last = ops.reshape(ops.broadcast_to(stop, shape), (1,) + shape)
        y = ops.concat([y[:-1], ops.astype(last, y.dtype)], axis=0)
    y = ops.broadcast_to(y, (num,) + shape)
    if axis != 0:
        y = ops.moveaxis(y, 0, axis)
    if dtype is not None:
        y = ops.astype(y, dtype)
    return (y, step) if retstep else y


def _logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    y = _linspace(start, stop, num=num, endpoint=endpoint, axis=axis)
    base = ops.asarray(base) if not isinstance(base, (int, float)) else base
    if not isinstance(base, (int, float)):
        base = ops.expand_dims(base, axis=axis) if base.ndim else base
    out = ops.pow(base, y)
    return out if dtype is None else ops.astype(out, dtype)


# ----------------------------------------------------------------------------- products


def _inner(a, b):
    a, b = ops.asarray(a), ops.asarray(b)
    if a.ndim == 0 or b.ndim == 0:
        return ops.multiply(a, b)
    return ops.tensordot(a, b, axes=((a.ndim - 1,), (b.ndim - 1,)))


def _kron(a, b):
    """Every element of a times all of b, as blocks: interleaved axes multiplied, merged."""
    a, b = ops.asarray(a), ops.asarray(b)
    nd = max(a.ndim, b.ndim)
    sa = (1,) * (nd - a.ndim) + a.shape
    sb = (1,) * (nd - b.ndim) + b.shape
    x = ops.reshape(a, tuple(n for s in sa for n in (s, 1)))
    y = ops.reshape(b, tuple(n for s in sb for n in (1, s)))
    return ops.reshape(x * y, tuple(p * q for p, q in zip(sa, sb)))


def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross products of 2- and 3-vectors along axisa of a and axisb of b (a 2-vector's third
    component is 0; two 2-vectors give the z component alone)."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = ops.asarray(a), ops.asarray(b)
    a, b = ops.moveaxis(a, axisa, -1), ops.moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("incompatible dimensions for cross product\n(dimension must be 2 or 3)")
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return z
    if a.shape[-1] == 3 and b.shape[-1] == 3:
        a2, b2 = a[..., 2], b[..., 2]
        x, y = a1 * b2 - a2 * b1, a2 * b0 - a0 * b2
    elif a.shape[-1] == 2:
        b2 = b[..., 2]
        x, y = a1 * b2, -a0 * b2
    else:
        a2 = a[..., 2]
        x, y = -a2 * b1, a2 * b0
    x, y, z = ops.broadcast_arrays(x, y, z)
    out = ops.stack([x, y, z], axis=-1)
    return ops.moveaxis(out, -1, axisc)


def _windows(a, length: int, width: int, shift: int):
    """The (length, width) matrix of a's elements a[r + c - shift] (0 outside a)."""
    padded = ops.concat([_filled(a, (shift,), 0), a, _filled(a, (width,), 0)])
    index = [r + c for r in range(length) for c in range(width)]
    return ops.reshape(ops.take(padded, _indices(a, index)), (length, width))


def _correlation(a, v, mode: str, convolution: bool):
    """sum_n a[n + k] v[n] over the lags k of `mode`: correlate's (v conjugated), or
    convolve's (v given reversed)."""
    a, v = ops.asarray(a), ops.asarray(v)
    if a.ndim != 1 or v.ndim != 1:
        raise ValueError("object too deep for desired array")
    if a.shape[0] == 0:
        raise ValueError("a cannot be empty")
    if v.shape[0] == 0:
        raise ValueError("v cannot be empty")
    if mode not in ("full", "same", "valid"):
        raise ValueError(f"mode must be one of 'valid', 'same', or 'full' (got {mode!r})")
    n, m = a.shape[0], v.shape[0]
    if convolution:
        v = ops.flip(v)
    else:
        v = ops.conj(v)
    full = ops.matmul(_windows(a, n + m - 1, m, m - 1), v)
    short, long = min(n, m), max(n, m)
    if mode == "full":
        return full
    if mode == "valid":
        return full[short - 1 : long]
    # "same": the middle `long` lags; for a shorter a, correlate's middle is the other half
    # of an even split (its lags run the other way round).
    lo = (short - 1) // 2 if n >= m or convolution else short - 1 - (short - 1) // 2
    return full[lo : lo + long]


def _convolve(a, v, mode="full"):
    return _correlation(a, v, mode, True)


def _correlate(a, v, mode="valid"):
    return _correlation(a, v, mode, False)


def _polyval(p, x):
    """Horner's scheme, as NumPy's: y = y * x + c for each coefficient c, highest first."""
    x = ops.asarray(x)
    if not isinstance(p, (list, tuple)):
        p = ops.asarray(p)
        p = [p[i] for i in range(p.shape[0])]
    y = ops.zeros_like(x)
    for c in p:
        y = y * x + c
    return y


def _interp(x, xp, fp, left=None, right=None):
    """Piecewise-linear interpolation through (xp, fp), fp[0] (or left) before xp[0] and fp[-1]
    (or right) after xp[-1]; differentiable in x, xp and fp."""
    x, xp, fp = _float(x), _float(xp), ops.asarray(fp)
    if xp.ndim != 1 or fp.ndim != 1:
        raise ValueError("object too deep for desired array")
    n = xp.shape[0]
    if n == 0:
        raise ValueError("array of sample points is empty")
    if fp.shape[0] != n:
        raise ValueError("fp and xp are not of the same length.")
    first = fp[0] if left is None else left
    last = fp[-1] if right is None else right
    if n == 1:
        return ops.where(x < xp[0], first, ops.where(x > xp[0], last, fp[0] + 0 * x))
    j = ops.clip(ops.searchsorted(xp, x, side="right") - 1, min=0, max=n - 2)
    x0, x1 = ops.take(xp, j), ops.take(xp, j + 1)
    y0, y1 = ops.take(fp, j), ops.take(fp, j + 1)
    y = (y1 - y0) / (x1 - x0) * (x - x0) + y0
    y = ops.where(x == xp[-1], fp[-1], y)
    return ops.where(x < xp[0], first, ops.where(x > xp[-1], last, y))


def _host(x, what: str):
    """x's values as a NumPy array (a tensor's detached; no graph is kept), read by NumPy's
    `what`: chainrule.compile runs the function eagerly (a replay would keep the first call's
    positions, bins and lengths)."""
    if x.__class__ is not Tensor:
        return np.asarray(x)
    if grad_mode.extended and grad_mode.tracer is not None:
        grad_mode.tracer.unsupported(f"NumPy's {what} (it reads the values)")
    return _backend.to_numpy(x._data)


def _library(t: Tensor):
    """The array library of t's values (under vmap, of the arrays that hold the samples)."""
    return _backend.namespace(every_sample(t._data))


def _sums(w: Tensor, bins, n: int) -> Tensor:
    """The sums of the weights w (a vector) by bin (the NumPy integer array `bins`), over n
    bins: linear in w (take_add, whose VJP is take)."""
    if bins.size == 0:  # zeros, in the weights' graph (a sum of none; Dask takes no empty key)
        return ops.zeros((n,), dtype=w.dtype) + ops.sum(w)
    xp = _library(w)
    return OPS["take_add"](w, (xp.asarray(bins, dtype=xp.int64), 0, (n,), w._data.dtype))


def _bincount(x, weights=None, minlength=0):
    """NumPy's bincount: without weights NumPy's counts on the values (no derivative); with
    weights a float64 tensor of their sums by position, linear in the weights."""
    positions = _host(x, "bincount")
    if weights is None:
        return np.bincount(positions, None, minlength)
    w = ops.asarray(weights)
    # NumPy's checks (1-D, non-negative integers, the weights' length) and its length
    n = np.bincount(positions, np.ones(w.shape), minlength).shape[0]
    return _sums(ops.astype(w, ops.float64), positions, n)


def _histogram(a, bins=10, range=None, density=None, weights=None):
    """NumPy's histogram. Without weights: NumPy's counts and edges on the values (counts
    carry no derivative). With weights: the counts are a tensor, linear in the weights (each
    adds to the bin its sample falls in; those outside the range add nothing); the samples
    and the edges are NumPy's, on the values, and carry no gradient (the bins are piecewise
    constant in them)."""
    bins = _host(bins, "histogram") if bins.__class__ is Tensor else bins
    values = _host(a, "histogram")
    if weights is None:
        return np.histogram(values, bins, range, density)
    w = ops.asarray(weights)
    # NumPy's checks of the weights' shape and of the bins (no estimator for weighted data)
    # and its edges, which depend on the samples, the bins and the range only.
    edges = np.histogram_bin_edges(values, bins, range, np.ones(w.shape))
    values, nbins = values.reshape(-1), edges.shape[0] - 1
    inside = np.flatnonzero((values >= edges[0]) & (values <= edges[-1]))
    # [e_i, e_i+1) for each bin but the last, which holds its right edge, as NumPy's
    which = np.minimum(np.searchsorted(edges, values[inside], side="right") - 1, nbins - 1)
    xp = _library(w)
    kept = _flat(w)[xp.asarray(inside, dtype=xp.int64)] if inside.size else _flat(w)[:0]
    counts = _sums(kept, which, nbins)
    if density:
        widths = ops.asarray(xp.asarray(np.diff(edges)))
        counts = counts / widths / ops.sum(counts)
    return counts, edges


def _trapezoid(y, x=None, dx=1.0, axis=-1):
    y = ops.asarray(y)
    axis = _axis(axis, y.ndim)
    if x is None:
        d = dx
    else:
        x = ops.asarray(x)
        if x.ndim == 1:
            d = ops.diff(x)
            d = ops.reshape(d, tuple(d.shape[0] if i == axis else 1 for i in range(y.ndim)))
        else:
            d = ops.diff(x, axis=axis)
    n = y.shape[axis]
    upper = y[_along(y.ndim, axis, slice(1, None))]
    lower = y[_along(y.ndim, axis, slice(None, max(n - 1, 0)))]
    return ops.sum(d * (upper + lower) / 2.0, axis=axis)


def _spaced(f, ax: int, dx, edge_order: int):
    """The derivative along axis ax of f sampled at points dx apart (a 1-D tensor along ax):
    NumPy's second-order differences for uneven spacing inside, first- or second-order
    one-sided ones at the edges."""
    shape = tuple(-1 if i == ax else 1 for i in range(f.ndim))
    dx = ops.reshape(dx, shape)

    def at(t, key):
        return t[_along(f.ndim, ax, key)]

    hd, hs = at(dx, slice(None, -1)), at(dx, slice(1, None))
    inside = (
        -hs / (hd * (hd + hs)) * at(f, slice(None, -2))
        + (hs - hd) / (hd * hs) * at(f, slice(1, -1))
        + hd / (hs * (hd + hs)) * at(f, slice(2, None))
    )
    d0, d1 = at(dx, slice(0, 1)), at(dx, slice(1, 2))
    e1, e0 = at(dx, slice(-2, -1)), at(dx, slice(-1, None))
    if edge_order == 1:
        head = (at(f, slice(1, 2)) - at(f, slice(0, 1))) / d0
        tail = (at(f, slice(-1, None)) - at(f, slice(-2, -1))) / e0
    else:
        head = (
            -(2 * d0 + d1) / (d0 * (d0 + d1)) * at(f, slice(0, 1))
            + (d0 + d1) / (d0 * d1) * at(f, slice(1, 2))
            - d0 / (d1 * (d0 + d1)) * at(f, slice(2, 3))
        )
        tail = (
            e0 / (e1 * (e1 + e0)) * at(f, slice(-3, -2))
            - (e0 + e1) / (e1 * e0) * at(f, slice(-2, -1))
            + (2 * e0 + e1) / (e0 * (e1 + e0)) * at(f, slice(-1, None))
        )
    return ops.concat([head, inside, tail], axis=ax)


def _uniform(f, ax: int, h, edge_order: int):
    """The derivative along axis ax of f sampled h apart: central differences inside."""

    def at(key):
        return f[_along(f.ndim, ax, key)]

    inside = (at(slice(2, None)) - at(slice(None, -2))) / (2.0 * h)
    if edge_order == 1:
        head = (at(slice(1, 2)) - at(slice(0, 1))) / h
        tail = (at(slice(-1, None)) - at(slice(-2, -1))) / h
    else:
        head = (-1.5 * at(slice(0, 1)) + 2.0 * at(slice(1, 2)) - 0.5 * at(slice(2, 3))) / h
        tail = (0.5 * at(slice(-3, -2)) - 2.0 * at(slice(-2, -1)) + 1.5 * at(slice(-1, None))) / h
    return ops.concat([head, inside, tail], axis=ax)


def _gradient(f, varargs=(), axis=None, edge_order=1):
    """np.gradient: per axis, a scalar spacing or the coordinates of the samples (a 1-D array
    or tensor, differentiable too)."""
    f = _float(f)
    axes = list(range(f.ndim)) if axis is None else [_axis(a, f.ndim) for a in _ints(axis)]
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and getattr(varargs[0], "ndim", 0) == 0:
        spacing = [varargs[0]] * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise TypeError("invalid number of arguments")
    if edge_order not in (1, 2):
        raise ValueError("'edge_order' greater than 2 not supported")
    out = []
    for ax, h in zip(axes, spacing):
        n = f.shape[ax]
        if n < edge_order + 1:
            raise ValueError(
                "Shape of array too small to calculate a numerical gradient, at least "
                "(edge_order + 1) elements are required."
            )
        if getattr(h, "ndim", 0) == 0:
            out.append(_uniform(f, ax, h, edge_order))
            continue
        coordinates = _float(_beside(f, h))
        if coordinates.ndim != 1:
            raise ValueError("distances must be either scalars or 1d")
        if coordinates.shape[0] != n:
            raise ValueError(
                "when 1d, distances must match the length of the corresponding dimension"
            )
        out.append(_spaced(f, ax, ops.diff(coordinates), edge_order))
    return out[0] if len(out) == 1 else tuple(out)


# ----------------------------------------------------------------------------- statistics


def _cov(m, y=None, rowvar=True, bias=False, ddof=None, dtype=None):
    m = ops.asarray(m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is None:
        dtype = ops.result_type(m, ops.float64) if m.dtype.kind != "c" else m.dtype
    x = ops.reshape(m, (1, -1)) if m.ndim < 2 else m
    if not rowvar and x.shape[0] != 1:
        x = x.T
    if x.shape[0] == 0:
        return ops.reshape(ops.astype(x, dtype), (0, 0))
    if y is not None:
        y = ops.asarray(y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
        y = ops.reshape(y, (1, -1)) if y.ndim < 2 else y
        if not rowvar and y.shape[0] != 1:
            y = y.T
        x = ops.concat([x, y], axis=0)
    x = ops.astype(x, dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    fact = max(x.shape[1] - ddof, 0)
    x = x - ops.mean(x, axis=1, keepdims=True)
    c = ops.matmul(x, ops.conj(x.T)) * (1 / fact if fact else math.inf)
    return ops.squeeze(c, axis=tuple(i for i, n in enumerate(c.shape) if n == 1))


def _average(a, axis=None, weights=None, returned=False, keepdims=False):
    """The mean, or the weighted mean sum(a * w) / sum(w) along `axis` (1-D weights along
    one axis, or weights of a's shape); with `returned`, also the sum of the weights (the
    count without weights) in the result's shape. Differentiable in a and the weights."""
    a = _float(a)
    if weights is None:
        avg = ops.mean(a, axis=axis, keepdims=keepdims)
        scale = a.size // max(avg.size, 1)
        return (avg, ops.full_like(avg, scale)) if returned else avg
    w = ops.asarray(weights)
    if a.dtype.kind in "fc" and w.dtype.kind in "fc":
        dtype = ops.result_type(a, w)
    else:
        dtype = ops.result_type(a.dtype, w.dtype, ops.float64)
    a, w = ops.astype(a, dtype), ops.astype(w, dtype)
    if w.shape != a.shape:
        if axis is None:
            raise TypeError("Axis must be specified when shapes of a and weights differ.")
        # In the order given: the weights' axis i runs along a's axis axes[i].
        axes = tuple(normalize_axes(i, a.ndim)[0] for i in _ints(axis))
        if w.shape != tuple(a.shape[i] for i in axes):
            raise ValueError(
                "Shape of weights must be consistent with shape of a along specified axis."
            )
        # The weights' axes laid along a's axes `axes`, the others of size 1.
        order = sorted(range(len(axes)), key=lambda i: axes[i])
        w = ops.permute_dims(w, tuple(order))
        w = ops.reshape(w, tuple(n if i in axes else 1 for i, n in enumerate(a.shape)))
        w = ops.broadcast_to(w, a.shape)
    scale = ops.sum(w, axis=axis, keepdims=keepdims)
    if bool(ops.any(scale == 0)):
        raise ZeroDivisionError("Weights sum to zero, can't be normalized")
    avg = ops.sum(a * w, axis=axis, keepdims=keepdims) / scale
    return (avg, ops.broadcast_to(scale, avg.shape)) if returned else avg


def _continuous(alpha: float, beta: float):
    """The position of NumPy's continuous quantile methods: n q + alpha + q (1 - alpha - beta)
    - 1 (linear: alpha = beta = 1, q (n - 1)), interpolated linearly."""
    return lambda q, n: n * q + alpha + q * (1 - alpha - beta) - 1, None


# NumPy's quantile methods: name -> (the position in the sorted slice of q among n values, the
# weight of the upper neighbour from the position's fraction t; None: t itself).
_QUANTILE_METHODS = {
    "linear": _continuous(1, 1),
    "weibull": _continuous(0, 0),
    "hazen": _continuous(0.5, 0.5),
    "interpolated_inverted_cdf": _continuous(0, 1),
    "median_unbiased": _continuous(1 / 3, 1 / 3),
    "normal_unbiased": _continuous(3 / 8, 3 / 8),
    "inverted_cdf": (lambda q, n: n * q - 1, lambda t: ops.where(t > 0, 1.0, 0.0)),
    "averaged_inverted_cdf": (lambda q, n: n * q - 1, lambda t: ops.where(t == 0, 0.5, 1.0)),
    "lower": (lambda q, n: ops.floor(q * (n - 1)), None),
    "higher": (lambda q, n: ops.ceil(q * (n - 1)), None),
    "nearest": (lambda q, n: ops.round(q * (n - 1)), None),  # halves to the even position
    "midpoint": (lambda q, n: q * (n - 1), lambda t: ops.where(t == 0, 0.0, 0.5)),
}


def _pick(s, q, count, n: int, method: str):
    """The quantiles q (1-D) of the sorted slices s (NaN last; `count` values each that are
    not NaN): shape s's slices, then q's. Positions before the first value or after the last
    take that value, as NumPy's."""
    position, weight = _QUANTILE_METHODS[method]
    v = position(q, count)
    floor = ops.floor(v)
    t = v - floor
    top = ops.clip(count - 1, 0, n - 1)  # the last value of each slice
    lo = ops.minimum(ops.clip(floor, 0, n - 1), top)
    hi = ops.minimum(ops.clip(floor + 1, 0, n - 1), top)
    below = ops.take_along_axis(s, ops.astype(lo, ops.int64), axis=-1)
    above = ops.take_along_axis(s, ops.astype(hi, ops.int64), axis=-1)
    t = t if weight is None else weight(t)
    # NumPy's interpolation, from the nearer neighbour (the same rounding in float32).
    span = above - below
    return ops.where(t >= 0.5, above - span * (1 - t), below + span * t)


def _quantiles(a, q, axis, keepdims: bool, skip_nan: bool, method: str = "linear"):
    """NumPy's quantiles by `method` (see _QUANTILE_METHODS; "linear", its default: the value
    at position q (n - 1) of the sorted slice, interpolated between its neighbours); n counts
    the values that are not NaN when skip_nan (NaN for a slice of none), else a NaN makes the
    result NaN. The result's shape: q's, then a's without the axes reduced (kept as 1 with
    keepdims). Differentiable in a (through sort) and, for continuous methods, in q."""
    if method not in _QUANTILE_METHODS:
        if method == "closest_observation":
            raise NotImplementedError("quantile: chainrule lacks the method 'closest_observation'")
        raise ValueError(
            f"{method!r} is not a valid method. Use one of: {', '.join(_QUANTILE_METHODS)}"
        )
    a = _float(a)
    q = ops.astype(_beside(a, q), a.dtype)
    axes = normalize_axes(axis, a.ndim)
    rest = [i for i in range(a.ndim) if i not in axes]
    n = math.prod(a.shape[i] for i in axes)
    moved = ops.permute_dims(a, tuple(rest + list(axes)))
    flat = ops.reshape(moved, tuple(a.shape[i] for i in rest) + (n,))
    m = math.prod(q.shape)
    if n == 0 and not skip_nan:  # NumPy indexes the empty slice
        raise IndexError("index -1 is out of bounds for axis 0 with size 0")
    if n == 0:  # NumPy's NaN, the mean of an empty slice
        values = _filled(a, flat.shape[:-1] + (m,), math.nan)
    else:
        nan = ops.isnan(flat)
        if skip_nan:
            count = ops.sum(ops.astype(ops.logical_not(nan), a.dtype), axis=-1, keepdims=True)
        else:
            count = _filled(a, flat.shape[:-1] + (1,), n)
        values = _pick(ops.sort(flat, axis=-1), ops.reshape(q, (-1,)), count, n, method)
        empty = count == 0 if skip_nan else ops.any(nan, axis=-1, keepdims=True)
        values = ops.where(empty, math.nan, values)
    # (rest..., m) -> (m, rest...) -> q's shape, then the rest.
    values = ops.permute_dims(values, (values.ndim - 1, *range(values.ndim - 1)))
    kept = tuple(1 if i in axes else a.shape[i] for i in range(a.ndim)) if keepdims else None
    shape = kept if kept is not None else tuple(a.shape[i] for i in rest)
    return ops.reshape(values, tuple(q.shape) + shape)


def _quantile_handler(scale: float, skip_nan: bool):
    """quantile, percentile (q in percent) and their NaN-ignoring forms; median's too."""

    def handler(a, q, axis=None, overwrite_input=False, method="linear", keepdims=False):
        a = ops.asarray(a)
        q = _beside(a, q)
        return _quantiles(a, q / scale if scale != 1 else q, axis, keepdims, skip_nan, method)

    return _custom(handler)


def _nanmedian(a, axis=None, overwrite_input=False, keepdims=False):
    return _quantiles(a, 0.5, axis, keepdims, skip_nan=True)


def _corrcoef(x, y=None, rowvar=True, dtype=None):
    c = _cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = linalg.diagonal(c)
    std = ops.sqrt(ops.real(d))
    c = c / std[:, None] / std[None, :]
    if c.dtype.kind == "c":
        return ops.clip(ops.real(c), min=-1, max=1) + ops.clip(ops.imag(c), min=-1, max=1) * 1j
    return ops.clip(c, min=-1, max=1)


# ----------------------------------------------------------------------------- einsum


_LABELS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _sublist(labels) -> str:
    """NumPy's einsum subscripts as a list (ints for labels, Ellipsis) as a string."""
    out = []
    for label in labels:
        if label is Ellipsis:
            out.append("...")
            continue
        i = operator.index(label)
        if not 0 <= i < len(_LABELS):
            raise ValueError(f"subscript is not within the valid range [0, {len(_LABELS)})")
        out.append(_LABELS[i])
    return "".join(out)


def _einsum(operands, optimize=False, dtype=None):
    """np.einsum with its subscripts as a string or interleaved lists: (a, [0, 1], b, [1, 2],
    [0, 2]). Any `optimize` gives the same values; chainrule contracts in its own order."""
    if not operands:
        raise ValueError("einsum needs subscripts and at least one operand")
    if isinstance(operands[0], str):
        return einsum(operands[0], *operands[1:], dtype=dtype)
    arrays = list(operands[0::2])
    subscripts = ",".join(_sublist(s) for s in operands[1::2])
    if len(operands) % 2:  # the last list is the output's
        subscripts += "->" + _sublist(arrays.pop())
    return einsum(subscripts, *arrays, dtype=dtype)


# ----------------------------------------------------------------------------- numpy.linalg


def _from_triangle(a, upper: bool):
    """The Hermitian matrix that LAPACK's eigh and cholesky read from a's lower (or upper)
    triangle: that triangle, its conjugate mirrored, and the diagonal's real part. NumPy's
    eigh, eigvalsh, cholesky and the hermitian= options compute on this matrix, so their
    derivatives are its."""
    a = ops.asarray(a)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise _backend.np.linalg.LinAlgError("Last 2 dimensions of the array must be square")
    xp = a._xp
    i = xp.arange(a.shape[-1])
    strict = i[None, :] > i[:, None] if upper else i[:, None] > i[None, :]
    mirror = i[:, None] > i[None, :] if upper else i[None, :] > i[:, None]
    diagonal = ops.real(a) if a.dtype.kind == "c" else a
    return ops.where(
        ops.asarray(strict),
        a,
        ops.where(ops.asarray(mirror), ops.conj(linalg.matrix_transpose(a)), diagonal),
    )


def _uplo(u: str) -> bool:
    if u not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return u == "U"


def _eigh(a, UPLO="L"):  # noqa: N803 - NumPy's name
    return linalg.eigh(_from_triangle(a, _uplo(UPLO)))


def _eigvalsh(a, UPLO="L"):  # noqa: N803 - NumPy's name
    return linalg.eigvalsh(_from_triangle(a, _uplo(UPLO)))


def _cholesky(a, upper=False):
    """NumPy's cholesky reads a's lower triangle (upper: its upper one)."""
    return linalg.cholesky(_from_triangle(a, upper), upper=upper)


def _pinv(a, rcond=None, hermitian=False, rtol=None):
    a = _from_triangle(a, False) if hermitian else a
    tol = rtol if rcond is None else rcond
    return linalg.pinv(a, rtol=tol)


def _matrix_rank(A, tol=None, hermitian=False, rtol=None):  # noqa: N803 - NumPy's name
    """The number of singular values (|eigenvalues| when hermitian) above tol, or above rtol
    (default max(M, N) eps) times the largest."""
    A = ops.asarray(A)
    if A.ndim < 2:
        return ops.astype(ops.logical_not(ops.all(A == 0)), ops.int64)
    if hermitian:
        s = ops.abs(linalg.eigvalsh(_from_triangle(A, False)))
    else:
        s = linalg.svdvals(A)
    if tol is None:
        if rtol is None:
            rtol = max(A.shape[-2:]) * ops.finfo(s.dtype).eps
        tol = ops.max(s, axis=-1, keepdims=True) * rtol
    elif not isinstance(tol, (int, float)):
        tol = ops.expand_dims(ops.asarray(tol), axis=-1)
    return ops.count_nonzero(s > tol, axis=-1)


def _lstsq(a, b, rcond=None):
    """The least-squares solution of minimum norm (pinv(a) @ b), the residuals' sums of
    squares (where a has full column rank and more rows than columns), a's rank and its
    singular values, as NumPy's."""
    a, b = ops.asarray(a), ops.asarray(b)
    m, n = a.shape[-2:]
    if b.shape[0] != m:
        raise _backend.np.linalg.LinAlgError("Incompatible dimensions")
    if rcond is None:
        rcond = ops.finfo(ops.result_type(a, ops.float64)).eps * max(m, n)
    x = ops.matmul(linalg.pinv(a, rtol=rcond), b)
    s = linalg.svdvals(a)
    rank = _matrix_rank(a, rtol=rcond)
    if int(rank) == n and m > n:
        r = b - ops.matmul(a, x)
        res = ops.sum(ops.real(r * ops.conj(r)), axis=0)
        res = ops.reshape(res, (1,)) if res.ndim == 0 else res
    else:
        res = ops.reshape(ops.real(b[:0]), (0,))
    return x, res, rank, s


def _tensorinv(a, ind=2):
    a = ops.asarray(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    inv_shape = a.shape[ind:] + a.shape[:ind]
    rows = math.prod(a.shape[ind:])
    return ops.reshape(linalg.inv(ops.reshape(a, (rows, -1))), inv_shape)


def _tensorsolve(a, b, axes=None):
    a, b = ops.asarray(a), ops.asarray(b)
    if axes is not None:
        order = list(range(a.ndim))
        for k in axes:
            order.remove(k)
            order.append(k)
        a = ops.permute_dims(a, tuple(order))
    shape = a.shape[-(a.ndim - b.ndim) :]
    n = math.prod(shape)
    if math.prod(a.shape) != n * n:
        raise _backend.np.linalg.LinAlgError(
            "Input arrays must satisfy the requirement prod(a.shape[b.ndim:]) == "
            "prod(a.shape[:b.ndim])"
        )
    x = linalg.solve(ops.reshape(a, (n, n)), _flat(b))
    return ops.reshape(x, shape)


def _matrix_power(a, n):
    return linalg.matrix_power(a, operator.index(n))


LINALG = {
    "cholesky": _custom(_cholesky),
    "eigh": _custom(_eigh),
    "eigvalsh": _custom(_eigvalsh),
    "pinv": _custom(_pinv),
    "matrix_rank": _custom(_matrix_rank),
    "matrix_power": _custom(_matrix_power),
    "lstsq": _custom(_lstsq),
    "tensorinv": _custom(_tensorinv),
    "tensorsolve": _custom(_tensorsolve),
}

FUNCTIONS = {
    "max": _extreme("max"),
    "amax": _extreme("max"),
    "min": _extreme("min"),
    "amin": _extreme("min"),
    "angle": _custom(_angle),
    "sinc": _custom(_sinc),
    "iscomplex": _custom(_iscomplex),
    "isreal": _custom(_isreal),
    "nan_to_num": _custom(_nan_to_num),
    "real_if_close": _custom(_real_if_close),
    "nansum": _custom(_nansum),
    "nanmean": _custom(_nanmean),
    "nanmax": _nan_extreme("max"),
    "nanmin": _nan_extreme("min"),
    "diag": _custom(_diag),
    "diagflat": _custom(_diagflat),
    "split": _splitter(True),
    "array_split": _splitter(False),
    "vsplit": _splitter(True, "vsplit", 2),
    "hsplit": _splitter(True, "hsplit", 1),
    "dsplit": _splitter(True, "dsplit", 3),
    "append": _custom(_append),
    "insert": _custom(_insert),
    "delete": _custom(_delete),
    "flipud": _flipper(0, "flipud"),
    "fliplr": _flipper(1, "fliplr"),
    "rot90": _custom(_rot90),
    "rollaxis": _custom(_rollaxis),
    "pad": _custom(_pad),
    "partition": _custom(_partition),
    "select": _custom(_select),
    "piecewise": _custom(_piecewise),
    "linspace": _custom(_linspace),
    "logspace": _custom(_logspace),
    "inner": _custom(_inner),
    "kron": _custom(_kron),
    "cross": _custom(_cross),
    "convolve": _custom(_convolve),
    "correlate": _custom(_correlate),
    "polyval": _custom(_polyval),
    "interp": _custom(_interp),
    "histogram": _custom(_histogram),
    "bincount": _custom(_bincount),
    "trapezoid": _custom(_trapezoid),
    "gradient": _custom(_gradient),
    "cov": _custom(_cov),
    "average": _custom(_average),
    "quantile": _quantile_handler(1, skip_nan=False),
    "nanquantile": _quantile_handler(1, skip_nan=True),
    "percentile": _quantile_handler(100, skip_nan=False),
    "nanpercentile": _quantile_handler(100, skip_nan=True),
    "nanmedian": _custom(_nanmedian),
    "nanvar": _nan_spread("nanvar"),
    "nanstd": _nan_spread("nanstd"),
    "ptp": _custom(_ptp),
    "argpartition": _custom(_argpartition),
    "apply_along_axis": _custom(_apply_along_axis),
    "flatnonzero": _custom(_flatnonzero),
    "fill_diagonal": _custom(_fill_diagonal),
    "corrcoef": _custom(_corrcoef),
    "einsum": _custom(_einsum),
}

# Handler tables by NumPy module: `_numpy_functions`' with these added (these win where both
# name a function: NumPy's eigh reads one triangle, chainrule.linalg.eigh takes the matrix).
TABLES = {
    "numpy": {**_TABLES["numpy"], **FUNCTIONS},
    "numpy.linalg": {**_LINALG, **LINALG},
    "numpy.fft": _TABLES["numpy.fft"],
}
