"""Rules whose results carry no gradient (comparisons, predicates, argmax and argsort,
counts, unique, integer results, matrix rank, ...): computed on raw arrays, still operations
of the table so that compile's trace sees them."""

from __future__ import annotations

from .. import _backend
from .._state import STATE
from ._declare import nondiff

# ----------------------------------------------------------------------------- without gradient
# Results that carry no gradient, computed on raw arrays. Every computation on a tensor's
# values goes through a rule: a value computed beside the table would be invisible to
# compile's trace, and a replay would reuse the traced value.


def _backend_function(name):
    return lambda xp, xs, p: getattr(xp, name)(*xs)


for _name in (
    "equal", "not_equal", "less", "less_equal", "greater", "greater_equal", "isnan", "isinf",
    "isfinite", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
    "bitwise_or", "bitwise_xor", "bitwise_invert", "bitwise_left_shift", "bitwise_right_shift",
    "signbit",
):  # fmt: skip
    nondiff(_name, _backend_function(_name))
# p = (axes, keepdims)
nondiff("all", lambda xp, xs, p: xp.all(xs[0], axis=p[0], keepdims=p[1]))
nondiff("any", lambda xp, xs, p: xp.any(xs[0], axis=p[0], keepdims=p[1]))
nondiff("argmax", lambda xp, xs, p: xp.argmax(xs[0], axis=p[0], keepdims=p[1]))
nondiff("argmin", lambda xp, xs, p: xp.argmin(xs[0], axis=p[0], keepdims=p[1]))
nondiff("count_nonzero", lambda xp, xs, p: xp.count_nonzero(xs[0], axis=p[0], keepdims=p[1]))
nondiff("nonzero", lambda xp, xs, p: tuple(xp.nonzero(xs[0])), multi=True)
# cast: astype to a dtype without gradient (or of a tensor that needs none); p = dtype.
STATE.cast = nondiff("cast", lambda xp, xs, p: xp.astype(xs[0], p))


def _integer_reduction(xp, xs, p):
    # sum, prod, cumulative_sum or cumulative_prod accumulated in integer dtype p[1] (bools
    # cast first); p = (name, dtype, keyword arguments as pairs).
    name, dtype, kwargs = p
    x = xs[0]
    if _backend.dtype_kind(x.dtype) == "b":
        x = xp.astype(x, dtype)
    return getattr(xp, name)(x, dtype=dtype, **dict(kwargs))


nondiff("integer_reduction", _integer_reduction)


def _searchsorted(xp, xs, p):
    # xs = (sorted 1-D x1, values[, sorter]); p = side.
    x1, v = xs[0], xs[1]
    sorter = xs[2] if len(xs) > 2 else None
    if not _backend.is_array(v):
        v = xp.asarray(v, dtype=x1.dtype)
    return _backend.searchsorted(xp, x1, v, p, sorter)


nondiff("searchsorted", _searchsorted)


def _isin(xp, xs, p):
    # Whether each element of xs[0] equals some element of xs[1] (none of them if p), shaped
    # like xs[0]: by sorting xs[1] and searching.
    a, b = xs
    dtype = xp.result_type(a, b)
    av = xp.reshape(xp.astype(a, dtype), (-1,))
    bv = xp.reshape(xp.astype(b, dtype), (-1,))
    kind = _backend.dtype_kind(dtype)
    if bv.shape[0] == 0:
        found = xp.zeros(av.shape, dtype=xp.bool)
    elif kind == "c":  # no order to search in: compare every pair
        found = xp.any(xp.expand_dims(av, axis=1) == xp.expand_dims(bv, axis=0), axis=1)
    else:
        if kind == "b":
            av, bv = xp.astype(av, xp.int8), xp.astype(bv, xp.int8)
        s = xp.sort(bv)
        at = xp.searchsorted(s, av)
        at = xp.where(at < s.shape[0], at, xp.zeros_like(at))
        found = xp.take(s, at) == av
    if p:
        found = xp.logical_not(found)
    return xp.reshape(found, a.shape)


nondiff("isin", _isin)


def argsort(xp, a, axis: int, descending: bool, stable: bool):
    """The order that sorts raw array `a` along `axis`, equal values in their original order
    when stable (descending too)."""
    if not descending:
        return xp.argsort(a, axis=axis, stable=stable)
    # Descending, equal values in their original order: sort the reversed axis ascending,
    # reverse the result, and map positions in the reversed axis back.
    order = xp.flip(xp.argsort(xp.flip(a, axis=axis), axis=axis, stable=stable), axis=axis)
    return (a.shape[axis] - 1) - order


# p = (axis, descending, stable)
nondiff("argsort", lambda xp, xs, p: argsort(xp, xs[0], *p))


# The standard leaves the order of unique values open, and NumPy >= 2.3 no longer sorts them;
# chainrule sorts (NaNs last, complex values by real then imaginary part), as the libraries
# users meet do and as code such as scikit-learn's label encoding relies on.


def _ascending(xp, values):
    """The order that sorts the 1-D `values`."""
    kind = _backend.dtype_kind(values.dtype)
    if kind == "b":
        values = xp.astype(values, xp.int8)
    if kind != "c":
        return xp.argsort(values, stable=True)
    order = xp.argsort(xp.imag(values), stable=True)
    return xp.take(order, xp.argsort(xp.take(xp.real(values), order), stable=True))


def _unique(xp, xs, p):
    """unique_<p> of x with its values sorted (and indices, inverse, counts to match)."""
    found, ordered = _backend.unique(xp, xs[0], p)
    if ordered:
        return found
    order = _ascending(xp, found[0])
    if p == "values":
        return (xp.take(found[0], order),)
    at = {"all": 2, "inverse": 1}.get(p)  # where the inverse indices are
    out = [r if i == at else xp.take(r, order) for i, r in enumerate(found)]
    if at is not None:
        inverse = found[at]
        # Each element's new index: the position of its old index in `order`.
        rank = xp.astype(xp.argsort(order), inverse.dtype)
        out[at] = xp.reshape(xp.take(rank, xp.reshape(inverse, (-1,))), inverse.shape)
    return tuple(out)


nondiff("unique", _unique, multi=True)  # p = "all", "counts", "inverse" or "values"


def _wrap_indices(xp, xs, p):
    # Indices along an axis of length p, negative ones counted from the end; one below -p
    # stays as it is (out of bounds: wrapped once, it would pass the library's check).
    idx = xs[0]
    return xp.where((idx < 0) & (idx >= -p), idx + p, idx)


nondiff("wrap_indices", _wrap_indices)
# repeat by counts: the source position along the axis of each output element; p = length.
nondiff("repeat_sources", lambda xp, xs, p: _backend.repeat_indices(xp, xs[0], p))


def _var_rounding(xp, xs, p):
    # var's deviations d of x where a slice along axes p holds equal values (else 0): the
    # rounding error of the mean, which var subtracts so that such a slice has variance 0.
    x, d = xs
    equal = xp.max(x, axis=p, keepdims=True) == xp.min(x, axis=p, keepdims=True)
    return xp.where(equal, d, xp.zeros_like(d))


nondiff("var_rounding", _var_rounding)
nondiff(  # xs = (x[, rtol])
    "linalg_matrix_rank",
    lambda xp, xs, p: _backend.matrix_rank(xp, xs[0], xs[1] if len(xs) > 1 else None),
)
nondiff("linalg_eigvalsh", lambda xp, xs, p: xp.linalg.eigvalsh(xs[0]))
nondiff("linalg_svdvals", lambda xp, xs, p: _backend.svdvals(xp, xs[0]))
