"""PyTorch's sorting and selection methods (`x.sort`, `median`, `kthvalue`, `mode`, `cummax`,
`cummin`, `logcumsumexp`, `aminmax`, `nansum`, `nanmean`, `quantile`...): composites of
chainrule's primitives. The indices come from a stable argsort or a scan on detached values;
the values are gathered from the input at them, so gradients go to the elements chosen and
every result differentiates to any order, in both modes. `_methods` binds them onto Tensor;
`_torch_functions` gives their function forms."""

from __future__ import annotations

import builtins
import math
from typing import Any, NamedTuple

from . import _namespace as ops
from ._batching import every_sample
from ._tensor import Tensor, dual
from ._torch_methods import _dim
from ._typing import DTypeLike

__all__ = ["SORTING_METHODS", "ValuesIndices", "MinMax"]


class ValuesIndices(NamedTuple):
    """A (values, indices) pair, as PyTorch's torch.return_types.sort, median, kthvalue,
    mode, cummax... (indices int64)."""

    values: Tensor
    indices: Tensor


class MinMax(NamedTuple):
    """What `x.aminmax()` returns (PyTorch's torch.return_types.aminmax)."""

    min: Tensor
    max: Tensor


_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


# ----------------------------------------------------------------------------- helpers


def _line(self: Tensor, dim: int) -> tuple[Tensor, int, int]:
    """self with at least one dimension (a 0-d tensor as one element, which PyTorch's
    selections take along dim 0 or -1), `dim` in range, and the size along it."""
    dim = _dim(dim, self.ndim)
    x = self if self.ndim else ops.reshape(self, (1,))
    return x, dim, x.shape[dim]


def _nonempty(name: str, n: int, dim: int) -> None:
    if n == 0:
        raise IndexError(f"{name}(): Expected reduction dim {dim} to have non-zero size.")


def _pick(
    x: Tensor, order: Tensor, position: Tensor, dim: int, keepdim: bool, ndim: int
) -> ValuesIndices:
    """The element at `position` (int64, size 1 along dim) of x's sorted `order` along dim:
    its index, and its value gathered from x (so the gradient goes there)."""
    indices = ops.take_along_axis(order, position, axis=dim)
    values = ops.take_along_axis(x, indices, axis=dim)
    if ndim == 0:
        return ValuesIndices(ops.reshape(values, ()), ops.reshape(indices, ()))
    if not keepdim:
        values, indices = ops.squeeze(values, axis=dim), ops.squeeze(indices, axis=dim)
    return ValuesIndices(values, indices)


def _count_known(x: Tensor, dim: int | None, keepdim: bool) -> Tensor:
    """How many elements along dim are not NaN (int64)."""
    known = ops.logical_not(ops.isnan(x))
    return ops.sum(ops.astype(known, ops.int64), axis=dim, keepdims=keepdim)


def _shared(x: Tensor, value: Tensor) -> Tensor:
    """`value` (one of x's elements, a NaN when x holds one) with its gradient shared evenly
    by the elements of x equal to it (the NaNs when it is NaN), as PyTorch's median() and
    nanmedian(). The value itself stays exact: x - x.detach() is 0 with derivative 1."""
    if x.dtype.kind not in "fc" or not (x.requires_grad or dual(x)):
        return value
    same = ops.logical_or(x == value, ops.logical_and(ops.isnan(x), ops.isnan(value)))
    count = ops.sum(ops.astype(same, x.dtype))
    return value + ops.sum(ops.where(same, x - x.detach(), 0.0)) / count


def _scan(x: tuple[Tensor, ...], combine: Any) -> tuple[Tensor, ...]:
    """The inclusive prefix scan along the last axis of the tensors x (of one shape) by the
    associative `combine(left, right)` of such tuples: log2(n) rounds, each combining every
    element with the one `step` before it (Hillis and Steele's scan), in any library."""
    n = x[0].shape[-1]
    step = 1
    while step < n:
        left = tuple(a[..., : n - step] for a in x)
        right = tuple(a[..., step:] for a in x)
        joined = combine(left, right)
        x = tuple(ops.concat([a[..., :step], b], axis=-1) for a, b in zip(x, joined))
        step *= 2
    return x


# ----------------------------------------------------------------------------- sorting


def sort(
    self: Tensor, dim: int = -1, descending: bool = False, *, stable: bool = False
) -> ValuesIndices:
    """(values, indices): this tensor sorted along `dim` (ascending unless `descending`; NaN
    counts as the largest value) and where each value came from. Equal values keep their
    order (the sort is always stable, as PyTorch's on CPU; `stable` is accepted). The
    gradient goes back to each value's original position. Unlike `chainrule.sort` (the
    Array API's: the values only, `axis=`), this is PyTorch's.

    >>> import chainrule as cr
    >>> cr.asarray([3.0, 1.0, 2.0]).sort()
    ValuesIndices(values=tensor([1., 2., 3.]), indices=tensor([1, 2, 0]))
    """
    x, dim, _ = _line(self, dim)
    order = ops.argsort(x, axis=dim, descending=descending, stable=True)
    values = ops.take_along_axis(x, order, axis=dim)
    if self.ndim == 0:
        return ValuesIndices(ops.reshape(values, ()), ops.reshape(order, ()))
    return ValuesIndices(values, order)


def msort(self: Tensor) -> Tensor:
    """This tensor sorted along its first dimension (`x.sort(dim=0).values`)."""
    return sort(self, 0).values


def kthvalue(self: Tensor, k: int, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """(values, indices) of the k-th smallest element along `dim` (k from 1; NaN the
    largest); the gradient goes to the index. Among equal values the index is the k-th in a
    stable sort; PyTorch's may be another of them (it leaves that unspecified).

    >>> import chainrule as cr
    >>> cr.asarray([4.0, 1.0, 3.0]).kthvalue(2)
    ValuesIndices(values=tensor(3.), indices=tensor(2))
    """
    x, dim, n = _line(self, dim)
    _nonempty("kthvalue", n, dim)
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {dim}")
    order = ops.argsort(x, axis=dim, stable=True)
    position = ops.full(_kept(x.shape, dim), k - 1, dtype=ops.int64, device=x.device)
    return _pick(x, order, position, dim, keepdim, self.ndim)


def _kept(shape: tuple, dim: int) -> tuple:
    return shape[:dim] + (1,) + shape[dim + 1 :]


def _median(name: str, skip_nan: bool) -> Any:
    def method(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Any:
        if dim is None:
            return _median_all(self, skip_nan)
        x, dim, n = _line(self, dim)
        _nonempty(name, n, dim)
        order = ops.argsort(x, axis=dim, stable=True)
        if x.dtype.kind not in "fc":
            position = ops.full(_kept(x.shape, dim), (n - 1) // 2, dtype=ops.int64, device=x.device)
        else:
            # NaN sorts last: the first NaN sits at the count of values that are not NaN.
            known = _count_known(x, dim, True)
            if skip_nan:  # the lower middle of the known values; the first NaN if none
                position = ops.maximum((known - 1) // 2, 0)
            else:  # the lower middle, or the first NaN where there is one
                position = ops.where(known < n, known, (n - 1) // 2)
        return _pick(x, order, position, dim, keepdim, self.ndim)

    method.__name__ = name
    return method


def _median_all(self: Tensor, skip_nan: bool) -> Tensor:
    flat = ops.reshape(self, (-1,))
    n = flat.shape[0]
    if n == 0:
        if self.dtype.kind not in "fc":
            raise RuntimeError("median() of an empty integer tensor has no value")
        return ops.full((), math.nan, dtype=self.dtype, device=self.device)
    s = ops.sort(flat.detach())
    if self.dtype.kind not in "fc":
        return s[(n - 1) // 2]
    known = _count_known(flat, None, True)
    if skip_nan:
        position = ops.maximum((known - 1) // 2, 0)
    else:
        position = ops.where(known < n, known, (n - 1) // 2)
    value = ops.reshape(ops.take_along_axis(s, position, axis=0), ())
    return _shared(flat, value)


median = _median("median", skip_nan=False)
median.__doc__ = """The median: of all elements (dim None), the lower of the two middle values
for an even count, NaN if there is one, its gradient shared by the elements equal to it, as
PyTorch's; along `dim`, a (values, indices) pair whose gradient goes to the index (the first
NaN where the slice holds one). Among equal values the index is the one a stable sort puts in
the middle; PyTorch's may be another of them (it leaves that unspecified). NumPy's median
(`numpy.median(t)`) is the mean of the two middle values instead.

>>> import chainrule as cr
>>> cr.asarray([4.0, 1.0, 3.0, 2.0]).median()
tensor(2.)
"""

nanmedian = _median("nanmedian", skip_nan=True)
nanmedian.__doc__ = """As median, the NaNs left out (NaN where a slice holds only NaN, with
the index of its first)."""


def mode(self: Tensor, dim: int = -1, keepdim: bool = False) -> ValuesIndices:
    """(values, indices) of the most frequent value along `dim` (the smallest of the most
    frequent ones) and the index of its last occurrence; the gradient goes to that index.
    PyTorch's index may be another occurrence (it sorts unstably); NaNs count as equal to
    each other here, where PyTorch's answer with NaN is unspecified.

    >>> import chainrule as cr
    >>> cr.asarray([2.0, 1.0, 2.0, 1.0, 3.0]).mode()
    ValuesIndices(values=tensor(1.), indices=tensor(3))
    """
    x, dim, n = _line(self, dim)
    _nonempty("mode", n, dim)
    order = ops.argsort(x, axis=dim, stable=True)
    s = ops.moveaxis(ops.take_along_axis(x.detach(), order, axis=dim), dim, -1)
    # Runs of equal values in the sorted slice; the length of each run at its last place.
    same = s[..., 1:] == s[..., :-1]
    if x.dtype.kind in "fc":
        same = ops.logical_or(same, ops.logical_and(ops.isnan(s[..., 1:]), ops.isnan(s[..., :-1])))
    last = ops.concat([ops.logical_not(same), ops.ones_like(s[..., :1], dtype=ops.bool)], axis=-1)
    place = ops.broadcast_to(ops.arange(n, dtype=ops.int64, device=x.device), s.shape)
    ends = ops.where(last, place, -1)
    # The last place of the run before: ends shifted by one, scanned for their maximum.
    before = ops.concat([ops.full_like(ends[..., :1], -1), ends[..., :-1]], axis=-1)
    (before,) = _scan((before,), lambda a, b: (ops.maximum(a[0], b[0]),))
    length = ops.where(last, place - before, 0)
    # argmax takes the first longest run: the smallest of the most frequent values.
    position = ops.moveaxis(ops.argmax(length, axis=-1, keepdims=True), -1, dim)
    return _pick(x, order, position, dim, keepdim, self.ndim)


# ----------------------------------------------------------------------------- running


def _running(name: str, wins: Any) -> Any:
    def method(self: Tensor, dim: int) -> ValuesIndices:
        x, dim, n = _line(self, dim)
        data = ops.moveaxis(x.detach(), dim, -1)
        place = ops.broadcast_to(ops.arange(n, dtype=ops.int64, device=x.device), data.shape)
        floating = x.dtype.kind in "fc"

        def combine(left: tuple, right: tuple) -> tuple:
            # The later element wins ties and NaN beats all, so a NaN stays with the index
            # of the latest NaN (PyTorch's): an associative choice, as a scan needs.
            later = wins(right[0], left[0])
            if floating:
                later = ops.logical_or(
                    ops.isnan(right[0]), ops.logical_and(later, ops.logical_not(ops.isnan(left[0])))
                )
            return tuple(ops.where(later, r, l) for l, r in zip(left, right))

        _, indices = _scan((data, place), combine)
        indices = ops.moveaxis(indices, -1, dim)
        values = ops.take_along_axis(x, indices, axis=dim)
        if self.ndim == 0:
            return ValuesIndices(ops.reshape(values, ()), ops.reshape(indices, ()))
        return ValuesIndices(values, indices)

    method.__name__ = name
    return method


cummax = _running("cummax", ops.greater_equal)
cummax.__doc__ = """(values, indices): the running maximum along `dim` and the index where
each was reached (the latest of equal values; NaN, once met, stays with the latest NaN's
index), as PyTorch's. The gradient goes to those indices.

>>> import chainrule as cr
>>> cr.asarray([1.0, 3.0, 2.0, 3.0]).cummax(0)
ValuesIndices(values=tensor([1., 3., 3., 3.]), indices=tensor([0, 1, 1, 3]))
"""

cummin = _running("cummin", ops.less_equal)
cummin.__doc__ = """(values, indices): the running minimum along `dim`, as cummax."""


def logcumsumexp(self: Tensor, dim: int) -> Tensor:
    """log(cumsum(exp(x))) along `dim`, without overflow or underflow (a scan of logaddexp),
    for values of any size and for -inf and inf. Where an output is infinite by two equal
    infinite terms (a prefix of -inf only, or two inf), the gradient is split evenly between
    them; PyTorch's is NaN there.

    >>> import chainrule as cr
    >>> cr.asarray([0.0, 0.0, 2.0]).logcumsumexp(0)
    tensor([0.        , 0.69314718, 2.23954477])
    """
    if self.dtype.kind not in "fc":
        raise NotImplementedError(
            f"logcumsumexp(): not implemented for {self.dtype} (a floating point tensor only)"
        )
    x, dim, _ = _line(self, dim)
    moved = ops.moveaxis(x, dim, -1)
    (out,) = _scan((moved,), lambda a, b: (_logaddexp(a[0], b[0]),))
    out = ops.moveaxis(out, -1, dim)
    return ops.reshape(out, ()) if self.ndim == 0 else out


def _logaddexp(a: Tensor, b: Tensor) -> Tensor:
    """logaddexp, whose gradient where a and b are the same infinity is split evenly (the
    limit along a = b) rather than NaN (inf - inf), which would reach every element the scan
    combined with it, finite ones too."""
    both = ops.logical_and(a == b, ops.isinf(a))
    safe = ops.logaddexp(ops.where(both, 0.0, a), ops.where(both, 0.0, b))
    half = (ops.where(both, a, 0.0) + ops.where(both, b, 0.0)) / 2  # no inf - inf anywhere
    return ops.where(both, half, safe)


# ----------------------------------------------------------------------------- reductions


def aminmax(self: Tensor, *, dim: int | None = None, keepdim: bool = False) -> MinMax:
    """(min, max) over `dim` (all elements when None), NaN where there is one; equal
    extremes share the gradient, as PyTorch's amin and amax."""
    if dim is not None:
        dim = _dim(dim, self.ndim)
    n = self.size if dim is None or self.ndim == 0 else self.shape[dim]
    if n == 0:
        raise RuntimeError(
            "aminmax(): cannot compute aminmax over an empty dimension as the operation has "
            "no identity."
        )
    axis = None if self.ndim == 0 else dim
    return MinMax(
        ops.min(self, axis=axis, keepdims=keepdim), ops.max(self, axis=axis, keepdims=keepdim)
    )


def nansum(
    self: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: DTypeLike = None
) -> Tensor:
    """The sum over `dim` (all dimensions when None) with NaN counted as 0 (and given no
    gradient)."""
    x = ops.where(ops.isnan(self), 0, self) if self.dtype.kind in "fc" else self
    return ops.sum(x, axis=_dims(dim, x.ndim), keepdims=keepdim, dtype=dtype)


def nanmean(
    self: Tensor, dim: Any = None, keepdim: bool = False, *, dtype: DTypeLike = None
) -> Tensor:
    """The mean over `dim` (all dimensions when None) of the values that are not NaN (NaN
    where there are none); NaN gets no gradient."""
    if self.dtype.kind not in "fc":
        raise RuntimeError(
            "nanmean(): expected input to have floating point or complex dtype but got "
            f"{self.dtype}"
        )
    x = self if dtype is None else ops.astype(self, dtype)
    count = _count_known(x, _dims(dim, x.ndim), keepdim)
    return nansum(x, dim, keepdim) / ops.astype(count, x.dtype)


def _dims(dim: Any, ndim: int) -> Any:
    """PyTorch's dim of a reduction (an int, a list or tuple, None for all) as an axis, each
    in range (PyTorch's IndexError otherwise); a 0-d tensor reduces over dim 0 or -1."""
    if dim is None:
        return None
    dims = tuple(_dim(d, ndim) for d in ((dim,) if isinstance(dim, builtins.int) else dim))
    return dims if ndim else None


# ----------------------------------------------------------------------------- quantiles


def _quantile(name: str, skip_nan: bool) -> Any:
    def method(
        self: Tensor,
        q: float | Tensor,
        dim: int | None = None,
        keepdim: bool = False,
        *,
        interpolation: str = "linear",
    ) -> Tensor:
        if self.dtype not in (ops.float32, ops.float64):
            raise RuntimeError("quantile() input tensor must be either float or double dtype")
        if isinstance(q, Tensor):
            if q.ndim > 1:
                raise RuntimeError("quantile() q must be a scalar or 1D tensor")
            if q.dtype != self.dtype:
                raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
        if self.size == 0:
            raise RuntimeError("quantile() input tensor must be non-empty")
        if interpolation not in _INTERPOLATIONS:
            raise RuntimeError(
                f"quantile() interpolation must be one of linear, lower, higher, midpoint or "
                f"nearest, but got {interpolation}"
            )
        if isinstance(q, Tensor):
            every = ops.asarray(every_sample(q._data))  # inside vmap, every sample's q
            if every.size and not builtins.bool(ops.all((every >= 0) & (every <= 1))):
                raise RuntimeError("quantile() q values must be in the range [0, 1]")
            qs = ops.reshape(q, (-1,))
        else:
            if not 0 <= q <= 1:
                raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q}")
            qs = ops.full((1,), q, dtype=self.dtype, device=self.device)
        if dim is None:
            x = ops.reshape(self, (-1,))
            kept = (1,) * self.ndim
        else:
            dim = _dim(dim, self.ndim)
            x = ops.moveaxis(self, dim, -1) if self.ndim else ops.reshape(self, (1,))
            kept = _kept(self.shape, dim) if self.ndim else ()
        out = _ranked(ops.sort(x, axis=-1), qs, skip_nan, interpolation)
        # (rest..., len(q)) -> (len(q), rest...), the reduced dimension kept as 1 if asked.
        out = ops.moveaxis(out, -1, 0)
        rest = kept if keepdim else out.shape[1:]
        scalar = not isinstance(q, Tensor) or q.ndim == 0
        return ops.reshape(out, rest if scalar else out.shape[:1] + rest)

    method.__name__ = name
    return method


def _ranked(s: Tensor, q: Tensor, skip_nan: bool, interpolation: str) -> Tensor:
    """PyTorch's quantiles q (1-D) of the sorted slices s (NaN last), shape (rest..., len(q)):
    the value at rank q (n - 1) among the n values (those that are not NaN when skip_nan),
    interpolated between its neighbours. A NaN in a slice (every value NaN, when skip_nan)
    puts the rank on a NaN, so the result is NaN and its gradient goes there."""
    n = s.shape[-1]
    if skip_nan:  # an all-NaN slice has rank -q: 0 instead, q's gradient 0 there
        known = ops.astype(_count_known(s, -1, True), s.dtype)
        live = q * (known - 1)
        live = ops.where(live < 0, 0.0, live)
    else:
        has_nan = ops.any(ops.isnan(s), axis=-1, keepdims=True)
        live = ops.where(has_nan, float(n - 1), q * (n - 1))
    # The rank picks the neighbours without gradient; linear interpolation's weight keeps q's
    # (the slope between the two neighbours, times n - 1, as PyTorch's).
    rank = live.detach()
    if interpolation == "lower":
        rank = ops.floor(rank)
    elif interpolation == "higher":
        rank = ops.ceil(rank)
    elif interpolation == "nearest":
        rank = ops.round(rank)  # halves to the even rank, as PyTorch's round
    rank = ops.broadcast_to(rank, s.shape[:-1] + (q.shape[0],))
    below = ops.take_along_axis(s, ops.astype(ops.floor(rank), ops.int64), axis=-1)
    if interpolation not in ("linear", "midpoint"):
        return below
    above = ops.take_along_axis(s, ops.astype(ops.ceil(rank), ops.int64), axis=-1)
    # PyTorch's lerp: from the nearer end, so weight 1 gives `above` exactly (and weight 0.5,
    # the midpoint, is reckoned from `above`).
    span = above - below
    if interpolation == "midpoint":
        return above - span * 0.5
    weight = ops.broadcast_to(live, rank.shape) - ops.floor(rank)
    return ops.where(weight < 0.5, below + weight * span, above - span * (1 - weight))


quantile = _quantile("quantile", skip_nan=False)
quantile.__doc__ = """The q-th quantiles (q a number or a 1-D tensor, in [0, 1]) over `dim`
(all elements when None), as PyTorch's: the value at rank q (n - 1) in the sorted slice,
interpolated by `interpolation` (linear, lower, higher, midpoint, nearest); NaN where the
slice holds a NaN. A 1-D q adds a first dimension. The gradient goes to the values
interpolated (through sort), and to a q that requires grad with linear interpolation: the
slope between the two values, times n - 1 (none with the other interpolations).

>>> import chainrule as cr
>>> cr.asarray([4.0, 1.0, 3.0, 2.0]).quantile(0.5)
tensor(2.5)
"""

nanquantile = _quantile("nanquantile", skip_nan=True)
nanquantile.__doc__ = """As quantile, the NaNs left out (NaN where a slice holds only NaN)."""


SORTING_METHODS = {
    "sort": sort,
    "msort": msort,
    "kthvalue": kthvalue,
    "median": median,
    "nanmedian": nanmedian,
    "mode": mode,
    "cummax": cummax,
    "cummin": cummin,
    "logcumsumexp": logcumsumexp,
    "aminmax": aminmax,
    "nansum": nansum,
    "nanmean": nanmean,
    "quantile": quantile,
    "nanquantile": nanquantile,
}
