"""NumPy's functions on tensors (NEP 18): for each NumPy function chainrule supports, a handler
that takes NumPy's parameters by name and calls chainrule's functions (main namespace, linalg,
fft), so the result stays differentiable. `_interop` dispatches to these tables."""

from __future__ import annotations

import inspect
import math
import operator

from . import _namespace, fft, linalg, special
from ._backend import normalize_axes


class _Missing(LookupError):
    """chainrule lacks the function that a NumPy function or ufunc maps to."""


# Where the handlers' targets live, by the prefix a target carries ("sum", "linalg.inv"):
# chainrule's main namespace and its submodules, each with its public names.
_NAMESPACES = {"": _namespace, "linalg": linalg, "fft": fft, "special": special}
_PUBLIC = {prefix: frozenset(module.__all__) for prefix, module in _NAMESPACES.items()}


def _fn(name: str):
    """chainrule's public function `name` ('sum', 'linalg.inv')."""
    prefix, _, attr = name.rpartition(".")
    public = attr in _PUBLIC.get(prefix, ())
    fn = getattr(_NAMESPACES[prefix], attr, None) if public else None
    if fn is None:
        raise _Missing(name)
    return fn


# ----------------------------------------------------------------------------- functions (NEP 18)
# Each handler takes NumPy's parameters by name (those the call gave) and calls chainrule.
# A parameter that a handler does not take must keep its NumPy default.


def _rename(target: str, **params):
    """A handler calling chainrule.<target>: each NumPy parameter becomes an argument at a
    position (int) or a keyword (str)."""

    def handler(**args):
        pos, kw = {}, {}
        for name, value in args.items():
            to = params[name]
            if to.__class__ is int:
                pos[to] = value
            else:
                kw[to] = value
        return _fn(target)(*(pos[i] for i in sorted(pos)), **kw)

    return handler, frozenset(params)


def _custom(handler):
    """A handler written out: its parameters are the NumPy parameters it takes."""
    return handler, frozenset(inspect.signature(handler).parameters)


def _reduction(target: str, dtype: bool = False):
    if dtype:
        return _rename(target, a=0, axis="axis", dtype="dtype", keepdims="keepdims")
    return _rename(target, a=0, axis="axis", keepdims="keepdims")


def _flat(a):
    return _fn("reshape")(a, (-1,))


def _mean(a, axis=None, dtype=None, keepdims=False):
    if dtype is not None:
        a = _fn("astype")(a, dtype)
    return _fn("mean")(a, axis=axis, keepdims=keepdims)


def _moment(target: str):
    """var or std; NumPy's `ddof` is the standard's `correction` (NumPy 2 takes either)."""

    def handler(a, axis=None, dtype=None, ddof=0, keepdims=False, correction=None):
        if dtype is not None:
            a = _fn("astype")(a, dtype)
        correction = ddof if correction is None else correction
        return _fn(target)(a, axis=axis, correction=correction, keepdims=keepdims)

    return _custom(handler)


def _cumulative(target: str):
    """cumsum, cumprod: axis None means the flattened array, as in NumPy."""

    def handler(a, axis=None, dtype=None):
        if axis is None:
            a, axis = _flat(a), 0
        return _fn(target)(a, axis=axis, dtype=dtype)

    return _custom(handler)


def _sorting(target: str):
    """sort, argsort. chainrule sorts stably, a valid result for every `kind`."""

    def handler(a, axis=-1, kind=None, stable=None):
        if axis is None:
            a, axis = _flat(a), -1
        return _fn(target)(a, axis=axis)

    return _custom(handler)


def _dot(a, b):
    """np.dot: a product with a scalar, matmul up to a 2-D `b`, else the sum over the last
    axis of `a` and the second-to-last of `b`."""
    a, b = _fn("asarray")(a), _fn("asarray")(b)
    if a.ndim == 0 or b.ndim == 0:
        return _fn("multiply")(a, b)
    if b.ndim <= 2:
        return _fn("matmul")(a, b)
    return _fn("tensordot")(a, b, axes=((-1,), (-2,)))


def _ints(v) -> tuple:
    """An int (NumPy's too) as a tuple of one, a sequence of ints as a tuple."""
    try:
        return (operator.index(v),)
    except TypeError:
        return tuple(v)


def _tensordot(a, b, axes=2):
    """np.tensordot: `axes` an int, or a pair of axes or of sequences of axes ([1, 0] sums
    axis 1 of a against axis 0 of b)."""
    try:
        axes = operator.index(axes)
    except TypeError:
        ax_a, ax_b = axes
        axes = (_ints(ax_a), _ints(ax_b))
    return _fn("tensordot")(a, b, axes=axes)


def _tile(A, reps):  # noqa: N803 - NumPy's name
    return _fn("tile")(A, _ints(reps))


def _transpose(a, axes=None):
    if axes is None:
        axes = tuple(range(a.ndim))[::-1]
    return _fn("permute_dims")(a, axes)


def _expand_dims(a, axis):
    """One or several new axes of size 1, at their positions in the result."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    n = a.ndim + len(axes)
    new = normalize_axes(axes, n)
    sizes = iter(a.shape)
    return _fn("reshape")(a, tuple(1 if i in new else next(sizes) for i in range(n)))


def _squeeze(a, axis=None):
    if axis is None:
        axis = tuple(i for i, n in enumerate(a.shape) if n == 1)
    return _fn("squeeze")(a, axis=axis)


def _take(a, indices, axis=None):
    if axis is None:
        a = _flat(a)
    return _fn("take")(a, indices, axis=axis)


def _take_along_axis(arr, indices, axis=-1):
    if axis is None:
        arr, axis = _flat(arr), 0
    return _fn("take_along_axis")(arr, _fn("asarray")(indices), axis=axis)


def _where(condition, x=None, y=None):
    if x is None and y is None:
        return _fn("nonzero")(condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    return _fn("where")(condition, x, y)


def _clip(a, a_min=None, a_max=None, min=None, max=None):  # noqa: A002 - NumPy's names
    """In the dtype of a and the bounds promoted together, as NumPy's (chainrule's clip keeps
    a's, the standard's: integers clipped to 0.5 would be cut to 0)."""
    lo = min if a_min is None else a_min
    hi = max if a_max is None else a_max
    a = _fn("asarray")(a)
    dtype = _fn("result_type")(a, *(b for b in (lo, hi) if b is not None))
    if dtype != a.dtype:
        a = _fn("astype")(a, dtype)
    return _fn("clip")(a, min=lo, max=hi)


def _unique(ar, return_index=False, return_inverse=False, return_counts=False, equal_nan=True):
    """NumPy's unique, where NaNs are one value (equal_nan, its default; the standard's
    unique_all, NaNs last, keeps each NaN)."""
    values, index, inverse, counts = _fn("unique_all")(ar)
    nans = int(_fn("count_nonzero")(_fn("isnan")(values))) if equal_nan else 0
    if nans > 1:
        k = values.shape[0] - nans  # the first NaN's place
        values = values[: k + 1]
        index = _fn("concat")([index[:k], _fn("min")(index[k:], keepdims=True)])
        inverse = _fn("minimum")(inverse, k)
        counts = _fn("concat")([counts[:k], _fn("sum")(counts[k:], keepdims=True)])
    if not (return_index or return_inverse or return_counts):
        return values
    wanted = (True, return_index, return_inverse, return_counts)
    return tuple(out for out, w in zip((values, index, inverse, counts), wanted) if w)


def _like(target: str, first: str):
    return _rename(target, **{first: 0}, dtype="dtype", device="device")


def _atleast(ndim: int):
    """atleast_1d/2d/3d: size-1 axes added as NumPy places them (a 1-D (n,) becomes (1, n)
    and (1, n, 1); a 2-D one gains a last axis). One result, or a tuple of them."""

    def one(a):
        a = _fn("asarray")(a)
        if a.ndim >= ndim:
            return a
        shape = a.shape
        if ndim == 3 and a.ndim == 2:
            shape = shape + (1,)
        elif ndim == 3 and a.ndim == 1:
            shape = (1,) + shape + (1,)
        else:
            shape = (1,) * (ndim - a.ndim) + shape
        return _fn("reshape")(a, shape)

    def handler(arys):
        out = tuple(one(a) for a in arys)
        return out[0] if len(out) == 1 else out

    return _custom(handler)


def _stacker(axis: int, ndim: int):
    """vstack (axis 0 of 2-D), hstack (axis 1, or 0 for 1-D), dstack (axis 2 of 3-D)."""
    lift = _atleast(ndim)[0]

    def handler(tup, dtype=None):
        arrays = [lift((a,)) for a in tup]
        if dtype is not None:
            arrays = [_fn("astype")(a, dtype) for a in arrays]
        along = 0 if axis == 1 and arrays and arrays[0].ndim == 1 else axis
        return _fn("concat")(arrays, axis=along)

    return handler, frozenset(("tup", "dtype") if axis < 2 else ("tup",))  # dstack: no dtype


def _column_stack(tup):
    """1-D inputs become columns; others are concatenated along axis 1."""
    cols = []
    for a in tup:
        a = _fn("asarray")(a)
        cols.append(_fn("reshape")(a, (-1, 1)) if a.ndim < 2 else a)
    return _fn("concat")(cols, axis=1)


def _median(a, axis=None, keepdims=False, overwrite_input=False):
    """The middle of the sorted values (the mean of the two middle ones for an even count),
    differentiable through sort; NaN where a slice holds a NaN, as NumPy."""
    a = _fn("asarray")(a)
    ndim = a.ndim
    axes = normalize_axes(axis, ndim)
    rest = [i for i in range(ndim) if i not in axes]
    moved = _fn("permute_dims")(a, tuple(rest + list(axes)))
    n = math.prod(a.shape[i] for i in axes)
    # The slice's length given (reshape can't infer a -1 among zero elements).
    flat = _fn("reshape")(moved, tuple(a.shape[i] for i in rest) + (n,))
    if a.dtype.kind not in "fc":
        flat = _fn("astype")(flat, _fn("float64"))
    if n == 0:  # NumPy's NaN, the mean of an empty slice
        mid = _fn("full_like")(_fn("sum")(flat, axis=-1), _fn("nan"))
    else:
        s = _fn("sort")(flat, axis=-1)
        mid = s[..., n // 2] if n % 2 else (s[..., n // 2 - 1] + s[..., n // 2]) / 2
        mid = _fn("where")(_fn("any")(_fn("isnan")(flat), axis=-1), _fn("nan"), mid)
    if keepdims:
        mid = _fn("reshape")(mid, tuple(1 if i in axes else a.shape[i] for i in range(ndim)))
    return mid


def _triangle(target: str):
    """tril, triu; a 1-D m is NumPy's rows of a square matrix (its triangle of m broadcast)."""

    def handler(m, k=0):
        m = _fn("asarray")(m)
        if m.ndim == 1:
            m = _fn("broadcast_to")(m, m.shape * 2)
        return _fn(target)(m, k=k)

    return _custom(handler)


def _axis_pair(a, axis1: int, axis2: int):
    """a with axes axis1 and axis2 moved last, in that order (for diagonal and trace)."""
    a = _fn("asarray")(a)
    return _fn("moveaxis")(a, (axis1, axis2), (-2, -1))


def _diagonal(a, offset=0, axis1=0, axis2=1):
    return _fn("linalg.diagonal")(_axis_pair(a, axis1, axis2), offset=offset)


def _trace(a, offset=0, axis1=0, axis2=1, dtype=None):
    return _fn("linalg.trace")(_axis_pair(a, axis1, axis2), offset=offset, dtype=dtype)


def _outer(a, b):
    return _fn("linalg.outer")(_flat(_fn("asarray")(a)), _flat(_fn("asarray")(b)))


def _copy(a, order="K"):
    """np.copy: a new array (for a tensor that requires grad, a recorded copy). Any memory
    order gives the same values (chainrule shows no strides)."""
    return _fn("asarray")(a, copy=True)


def _ravel(a, order="C"):
    """The elements in C order, or in Fortran order ("F": the first index changing fastest).
    "A" and "K" are C's: a tensor's elements are laid out in C order."""
    a = _fn("asarray")(a)
    if order == "F":
        a = _fn("permute_dims")(a, tuple(range(a.ndim))[::-1])
    elif order not in ("C", "A", "K"):
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    return _flat(a)


def _meshgrid(xi, copy=True, indexing="xy"):
    grids = _fn("meshgrid")(*xi, indexing=indexing)
    return tuple(_fn("asarray")(g, copy=True) for g in grids) if copy else tuple(grids)


def _swapaxes(a, axis1, axis2):
    a = _fn("asarray")(a)
    order = list(range(a.ndim))
    order[axis1], order[axis2] = order[axis2], order[axis1]
    return _fn("permute_dims")(a, tuple(order))


# ----------------------------------------------------------------------------- numpy.linalg


def _norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002 - NumPy's name
    """numpy.linalg.norm: a vector norm over one axis (or of a 1-D x, or of any x flattened
    when ord is None), a matrix norm over two."""
    x = _fn("asarray")(x)
    vector = axis is None and (ord is None or x.ndim == 1) or isinstance(axis, int)
    if vector and isinstance(ord, str):
        raise ValueError(f"Invalid norm order {ord!r} for vectors")
    if axis is None:
        if ord is None or x.ndim == 1:
            out = _fn("linalg.vector_norm")(x, ord=2 if ord is None else ord)
            return _fn("reshape")(out, (1,) * x.ndim) if keepdims else out
        if x.ndim != 2:
            raise ValueError("Improper number of dimensions to norm.")
        axis = (0, 1)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    if len(axes) == 1:
        return _fn("linalg.vector_norm")(
            x, axis=axes[0], keepdims=keepdims, ord=2 if ord is None else ord
        )
    if len(axes) != 2:
        raise ValueError("Improper number of dimensions to norm.")
    a1, a2 = normalize_axes(axes[0], x.ndim)[0], normalize_axes(axes[1], x.ndim)[0]
    out = _fn("linalg.matrix_norm")(
        _axis_pair(x, a1, a2), keepdims=False, ord="fro" if ord is None else ord
    )
    if keepdims:
        out = _fn("reshape")(out, tuple(1 if i in (a1, a2) else n for i, n in enumerate(x.shape)))
    return out


def _qr(a, mode="reduced"):
    """NumPy's modes: 'reduced' and 'complete' (Q and R), 'r' (R alone); not 'raw' (LAPACK's
    Householder form)."""
    if mode == "r":
        return _fn("linalg.qr")(a).R
    if mode == "raw":
        raise NotImplementedError(
            "numpy.linalg.qr with mode='raw' (LAPACK's Householder reflectors) is not "
            "implemented for Tensors; mode='reduced', 'complete' or 'r' are"
        )
    return _fn("linalg.qr")(a, mode=mode)


def _svd(a, full_matrices=True, compute_uv=True):
    if not compute_uv:
        return _fn("linalg.svdvals")(a)
    return _fn("linalg.svd")(a, full_matrices=full_matrices)


def _multi_dot(arrays):
    arrays = list(arrays)
    if len(arrays) < 2:
        raise ValueError("multi_dot needs at least two arrays")
    out = arrays[0]
    for a in arrays[1:]:
        out = _fn("matmul")(out, a)
    return out


def _cond(x, p=None):
    """The condition number: a ratio of singular values for p None, 2, -2; else
    norm(x, p) * norm(inv(x), p)."""
    if p in (None, 2, -2):
        s = _fn("linalg.svdvals")(x)
        big, small = s[..., 0], s[..., -1]
        return big / small if p != -2 else small / big
    return _norm(x, p, axis=(-2, -1)) * _norm(_fn("linalg.inv")(x), p, axis=(-2, -1))


def _same(target: str, *positional: str, **keywords):
    """A handler for a NumPy function whose parameters chainrule's function takes by the
    same names (positional ones in this order)."""
    return _rename(target, **{n: i for i, n in enumerate(positional)}, **keywords)


# numpy.linalg name -> (handler, the NumPy parameters it takes).
LINALG = {
    "norm": _custom(_norm),
    "inv": _rename("linalg.inv", a=0),
    "det": _rename("linalg.det", a=0),
    "slogdet": _rename("linalg.slogdet", a=0),
    "solve": _rename("linalg.solve", a=0, b=1),
    "qr": _custom(_qr),
    # Complex results always (the standard's), where NumPy gives real ones if it can.
    "eig": _rename("linalg.eig", a=0),
    "eigvals": _rename("linalg.eigvals", a=0),
    "svd": _custom(_svd),
    "multi_dot": _custom(_multi_dot),
    "cond": _custom(_cond),
    "svdvals": _same("linalg.svdvals", "x"),
    "matrix_transpose": _same("linalg.matrix_transpose", "x"),
    "diagonal": _same("linalg.diagonal", "x", offset="offset"),
    "trace": _same("linalg.trace", "x", offset="offset", dtype="dtype"),
    "outer": _same("linalg.outer", "x1", "x2"),
    "cross": _same("linalg.cross", "x1", "x2", axis="axis"),
    "matmul": _same("linalg.matmul", "x1", "x2"),
    "tensordot": _same("linalg.tensordot", "x1", "x2", axes="axes"),
    "vecdot": _same("linalg.vecdot", "x1", "x2", axis="axis"),
    "vector_norm": _same("linalg.vector_norm", "x", axis="axis", keepdims="keepdims", ord="ord"),
    "matrix_norm": _same("linalg.matrix_norm", "x", keepdims="keepdims", ord="ord"),
}


# ----------------------------------------------------------------------------- numpy.fft


def _fft1(name: str):
    """A 1-D transform; NumPy's norm=None is the standard's 'backward'."""

    def handler(a, n=None, axis=-1, norm=None):
        return _fn(f"fft.{name}")(a, n=n, axis=axis, norm=norm or "backward")

    return _custom(handler)


def _fftn(name: str, axes_default=None):
    """An n-D transform (axes_default (-2, -1) for the 2-D ones, as NumPy's fft2)."""

    def handler(a, s=None, axes=axes_default, norm=None):
        return _fn(f"fft.{name}")(a, s=s, axes=axes, norm=norm or "backward")

    return _custom(handler)


# numpy.fft name -> (handler, the NumPy parameters it takes).
FFT = {
    **{name: _fft1(name) for name in ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")},
    **{name: _fftn(name) for name in ("fftn", "ifftn", "rfftn", "irfftn")},
    **{f"{n}2": _fftn(f"{n}n", (-2, -1)) for n in ("fft", "ifft", "rfft", "irfft")},
    "fftshift": _same("fft.fftshift", "x", axes="axes"),
    "ifftshift": _same("fft.ifftshift", "x", axes="axes"),
}


# NumPy function name (in the `numpy` module) -> (handler, the NumPy parameters it takes).
FUNCTIONS = {
    "sum": _reduction("sum", dtype=True),
    "prod": _reduction("prod", dtype=True),
    "mean": _custom(_mean),
    "var": _moment("var"),
    "std": _moment("std"),
    "all": _reduction("all"),
    "any": _reduction("any"),
    "argmax": _reduction("argmax"),
    "argmin": _reduction("argmin"),
    "count_nonzero": _reduction("count_nonzero"),
    "cumsum": _cumulative("cumulative_sum"),
    "cumprod": _cumulative("cumulative_prod"),
    "cumulative_sum": _rename(
        "cumulative_sum", x=0, axis="axis", dtype="dtype", include_initial="include_initial"
    ),
    "cumulative_prod": _rename(
        "cumulative_prod", x=0, axis="axis", dtype="dtype", include_initial="include_initial"
    ),
    "dot": _custom(_dot),
    "tensordot": _custom(_tensordot),
    "matrix_transpose": _rename("matrix_transpose", x=0),
    "concatenate": _rename("concat", arrays=0, axis="axis"),
    "stack": _rename("stack", arrays=0, axis="axis"),
    "reshape": _rename("reshape", a=0, shape=1, copy="copy"),
    "transpose": _custom(_transpose),
    "expand_dims": _custom(_expand_dims),
    "squeeze": _custom(_squeeze),
    "broadcast_to": _rename("broadcast_to", array=0, shape=1),
    "flip": _rename("flip", m=0, axis="axis"),
    "moveaxis": _rename("moveaxis", a=0, source=1, destination=2),
    "roll": _rename("roll", a=0, shift=1, axis="axis"),
    "tile": _custom(_tile),
    "repeat": _rename("repeat", a=0, repeats=1, axis="axis"),
    "take": _custom(_take),
    "take_along_axis": _custom(_take_along_axis),
    "where": _custom(_where),
    "nonzero": _rename("nonzero", a=0),
    "clip": _custom(_clip),
    "sort": _sorting("sort"),
    "argsort": _sorting("argsort"),
    "diff": _rename("diff", a=0, n="n", axis="axis", prepend="prepend", append="append"),
    "unique": _custom(_unique),
    "unique_values": _rename("unique_values", x=0),
    "unique_counts": _rename("unique_counts", x=0),
    "unique_inverse": _rename("unique_inverse", x=0),
    "unique_all": _rename("unique_all", x=0),
    "round": _rename("round", a=0),
    "around": _rename("round", a=0),
    "real": _rename("real", val=0),
    "imag": _rename("imag", val=0),
    "astype": _rename("astype", x=0, dtype=1, copy="copy", device="device"),
    "zeros_like": _like("zeros_like", "a"),
    "ones_like": _like("ones_like", "a"),
    "empty_like": _like("empty_like", "prototype"),
    "full_like": _rename("full_like", a=0, fill_value=1, dtype="dtype", device="device"),
    "copy": _custom(_copy),
    "ravel": _custom(_ravel),
    "unstack": _rename("unstack", x=0, axis="axis"),
    "swapaxes": _custom(_swapaxes),
    "searchsorted": _rename("searchsorted", a=0, v=1, side="side", sorter="sorter"),
    "tril": _triangle("tril"),
    "triu": _triangle("triu"),
    "meshgrid": _custom(_meshgrid),
    "atleast_1d": _atleast(1),
    "atleast_2d": _atleast(2),
    "atleast_3d": _atleast(3),
    "vstack": _stacker(0, 2),
    "hstack": _stacker(1, 1),
    "dstack": _stacker(2, 3),
    "column_stack": _custom(_column_stack),
    "median": _custom(_median),
    "diagonal": _custom(_diagonal),
    "trace": _custom(_trace),
    "outer": _custom(_outer),
}

# Handler tables by NumPy module.
TABLES = {"numpy": FUNCTIONS, "numpy.linalg": LINALG, "numpy.fft": FFT}

# Functions whose results carry no gradient (predicates, shapes): NumPy computes them on the
# tensors' values, so no graph is lost.
VALUE_FUNCTIONS = frozenset(
    ("allclose", "isclose", "array_equal", "array_equiv", "shape", "ndim", "size",
     "result_type", "iscomplexobj", "isrealobj", "may_share_memory", "shares_memory")
)  # fmt: skip
