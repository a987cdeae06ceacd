"""Tensor methods with PyTorch's names and keywords (`x.sum(dim=1, keepdim=True)`, `x.view`,
`x.add_`, `x.new_zeros`): composites of chainrule's primitives, so each differentiates to any
order. `_methods` binds this table onto Tensor beside the Array API's operators."""

from __future__ import annotations

import builtins
import numbers
from collections.abc import Sequence
from typing import Any, NamedTuple

from . import _backend, linalg, special
from . import _namespace as ops
from . import random as _random
from ._backend import DType
from ._batching import every_sample
from ._dtypes import TORCH_DTYPE_NAMES
from ._inplace import INPLACE_OPERATORS, setitem
from ._rules import OPS
from ._tensor import Tensor
from ._typing import ArrayLike, Axis, Device, DTypeLike

__all__ = ["TORCH_METHODS", "MaxMin", "TopK"]


class MaxMin(NamedTuple):
    """What `x.max(dim)` and `x.min(dim)` return (PyTorch's torch.return_types.max)."""

    values: Tensor
    indices: Tensor


class TopK(NamedTuple):
    """What `x.topk(k)` returns (PyTorch's torch.return_types.topk)."""

    values: Tensor
    indices: Tensor


# ----------------------------------------------------------------------------- arguments


def _axis(dim: Any, axis: Any, name: str) -> Any:
    """PyTorch's `dim`, or NumPy's `axis` (PyTorch takes both spellings); a list as a tuple."""
    if axis is not None:
        if dim is not None:
            raise TypeError(f"{name}() got both 'dim' and its alias 'axis'")
        dim = axis
    return tuple(dim) if isinstance(dim, list) else dim


def _keep(keepdim: bool, keepdims: bool | None) -> bool:
    return keepdim if keepdims is None else keepdims


def _sizes(sizes: tuple) -> tuple[int, ...]:
    """Sizes given as `f(2, 3)` or `f((2, 3))`."""
    if len(sizes) == 1 and not isinstance(sizes[0], builtins.int):
        sizes = tuple(sizes[0])
    return tuple(builtins.int(n) for n in sizes)


def _dim(dim: int, ndim: int) -> int:
    """A dimension index in [0, ndim), with PyTorch's IndexError for one out of range."""
    lo, hi = -builtins.max(ndim, 1), builtins.max(ndim, 1) - 1
    if not lo <= dim <= hi:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{lo}, {hi}], but got {dim})"
        )
    return dim % builtins.max(ndim, 1)


def _is_dtype(a: Any) -> bool:
    """Whether `a` names a dtype (chainrule's, or a library's dtype or scalar type)."""
    return isinstance(a, (DType, type, _backend.np.dtype))


def _cast(self: Tensor, dtype: DTypeLike) -> Tensor:
    """self in `dtype`: self itself when it has that dtype already (as PyTorch's to())."""
    return self if self.dtype == dtype else ops.astype(self, dtype)


# ----------------------------------------------------------------------------- reductions


def sum(  # noqa: A001
    self: Tensor,
    dim: Axis = None,
    keepdim: bool = False,
    *,
    dtype: DTypeLike = None,
    axis: Axis = None,
    keepdims: bool | None = None,
) -> Tensor:
    """The sum over `dim` (all dimensions when None); `axis`/`keepdims` are accepted as
    PyTorch accepts them (see chainrule.sum)."""
    dim = _axis(dim, axis, "sum")
    return ops.sum(self, axis=dim, keepdims=_keep(keepdim, keepdims), dtype=dtype)


def mean(
    self: Tensor,
    dim: Axis = None,
    keepdim: bool = False,
    *,
    dtype: DTypeLike = None,
    axis: Axis = None,
    keepdims: bool | None = None,
) -> Tensor:
    """The mean over `dim` (all dimensions when None), computed in `dtype` if given (see
    chainrule.mean)."""
    x = self if dtype is None else _cast(self, dtype)
    return ops.mean(x, axis=_axis(dim, axis, "mean"), keepdims=_keep(keepdim, keepdims))


def prod(
    self: Tensor, dim: int | None = None, keepdim: bool = False, *, dtype: DTypeLike = None
) -> Tensor:
    """The product over `dim` (all elements when None) (see chainrule.prod)."""
    return ops.prod(self, axis=dim, keepdims=keepdim, dtype=dtype)


def _spread(name: str, fn: Any) -> Any:
    def method(
        self: Tensor,
        dim: Axis | bool = None,
        unbiased: bool | None = None,
        keepdim: bool = False,
        *,
        correction: float | None = None,
        axis: Axis = None,
        keepdims: bool | None = None,
    ) -> Tensor:
        if isinstance(dim, builtins.bool):  # PyTorch's older form: x.std(False)
            dim, unbiased = None, dim
        if correction is None:
            correction = 0 if unbiased is False else 1
        elif unbiased is not None:
            raise TypeError(f"{name}() got both 'unbiased' and 'correction'")
        return fn(
            self,
            axis=_axis(dim, axis, name),
            correction=correction,
            keepdims=_keep(keepdim, keepdims),
        )

    method.__name__ = name
    method.__doc__ = (
        f"The {'standard deviation' if name == 'std' else 'variance'} over `dim` (all "
        "dimensions when None), with PyTorch's default `correction=1` (Bessel's: the sample "
        f"{name}; `unbiased=False` or `correction=0` for the population one)."
    )
    return method


def _extreme(name: str, pick: Any, arg: Any, elementwise: Any) -> Any:
    def method(self: Tensor, dim: int | Tensor | None = None, keepdim: bool = False) -> Any:
        if dim is None:
            return pick(self)
        if isinstance(dim, Tensor):
            return elementwise(self, dim)
        dim = _dim(dim, self.ndim)
        indices = arg(self, axis=dim, keepdims=True)
        values = ops.take_along_axis(self, indices, axis=dim)
        if not keepdim:
            values = ops.squeeze(values, axis=dim)
            indices = ops.squeeze(indices, axis=dim)
        return MaxMin(values, indices)

    method.__name__ = name
    method.__doc__ = (
        f"As PyTorch's: x.{name}() the {name}imum of all elements (ties share the gradient); "
        f"x.{name}(dim) a (values, indices) pair along dim (the gradient goes to the index "
        f"chosen, the first {name}imum); x.{name}(other) the elementwise {name}imum."
    )
    return method


def _arg(name: str, fn: Any) -> Any:
    def method(self: Tensor, dim: int | None = None, keepdim: bool = False) -> Tensor:
        return fn(self, axis=dim, keepdims=keepdim)

    method.__name__ = name
    method.__doc__ = (
        f"The index of the first {name[3:]}imum along `dim` (of all elements when None)."
    )
    return method


def _extreme_values(name: str, fn: Any) -> Any:
    def method(self: Tensor, dim: Axis = (), keepdim: bool = False) -> Tensor:
        axis = None if dim == () or dim == [] else _axis(dim, None, name)
        return fn(self, axis=axis, keepdims=keepdim)

    method.__name__ = name
    method.__doc__ = (
        f"The {name[1:]}imum over `dim` (all dimensions when empty); ties share the gradient."
    )
    return method


def _logical(name: str, fn: Any) -> Any:
    def method(self: Tensor, dim: Axis = None, keepdim: bool = False) -> Tensor:
        return fn(self, axis=_axis(dim, None, name), keepdims=keepdim)

    method.__name__ = name
    method.__doc__ = f"Whether {name} elements are true over `dim` (all dimensions when None)."
    return method


def cumsum(self: Tensor, dim: int, *, dtype: DTypeLike = None) -> Tensor:
    """Running sums along `dim` (see chainrule.cumulative_sum)."""
    return ops.cumulative_sum(self, axis=dim, dtype=dtype)


def norm(
    self: Tensor,
    p: float | str = "fro",
    dim: Axis = None,
    keepdim: bool = False,
    dtype: DTypeLike = None,
) -> Tensor:
    """The p-norm over `dim` (all elements when None): 'fro' is the 2-norm of the elements;
    'nuc' the nuclear norm of matrices over `dim` (two dimensions)."""
    x = self if dtype is None else _cast(self, dtype)
    dim = _axis(dim, None, "norm")
    if p == "nuc":
        if dim is None or isinstance(dim, builtins.int) or len(dim) != 2:
            raise RuntimeError("norm: the nuclear norm needs dim of two dimensions")
        x = ops.moveaxis(x, tuple(dim), (-2, -1))
        out = linalg.matrix_norm(x, ord="nuc", keepdims=keepdim)
        return ops.moveaxis(out, (-2, -1), tuple(dim)) if keepdim else out
    if isinstance(p, str) and p != "fro":
        raise RuntimeError(f"norm: unsupported p {p!r} (a number, 'fro' or 'nuc')")
    return linalg.vector_norm(x, axis=dim, keepdims=keepdim, ord=2 if p == "fro" else p)


# ----------------------------------------------------------------------------- shapes


def view(self: Tensor, *shape: Any) -> Tensor:
    """This tensor in a new shape (-1 for one size inferred), as reshape. Reinterpreting the
    bytes as another dtype (`view(dtype)`) is not supported."""
    if len(shape) == 1 and _is_dtype(shape[0]):
        raise NotImplementedError(
            "Tensor.view(dtype): reinterpreting a tensor's bytes as another dtype is not "
            "supported (the Array API has no such operation); use astype to convert values"
        )
    return ops.reshape(self, _sizes(shape))


def reshape(self: Tensor, *shape: int | Sequence[int]) -> Tensor:
    """This tensor in a new shape (`t.reshape(2, 3)` or `t.reshape((2, 3))`)."""
    return ops.reshape(self, _sizes(shape))


def view_as(self: Tensor, other: Tensor) -> Tensor:
    """This tensor in `other`'s shape."""
    return ops.reshape(self, other.shape)


def flatten(self: Tensor, start_dim: int = 0, end_dim: int = -1) -> Tensor:
    """The dimensions from `start_dim` to `end_dim` (inclusive) merged into one; a 0-d tensor
    becomes 1-d."""
    if self.ndim == 0:
        return ops.reshape(self, (1,))
    start, end = _dim(start_dim, self.ndim), _dim(end_dim, self.ndim)
    if start > end:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shape = self.shape
    return ops.reshape(self, shape[:start] + (-1,) + shape[end + 1 :])


def squeeze(self: Tensor, dim: int | Sequence[int] | None = None) -> Tensor:
    """This tensor without its dimensions of size 1 (only those in `dim`, when given; a
    dimension in `dim` of another size is kept, as PyTorch)."""
    shape = self.shape
    if dim is None:
        axes = tuple(i for i, n in enumerate(shape) if n == 1)
    else:
        dims = (dim,) if isinstance(dim, builtins.int) else tuple(dim)
        axes = tuple(sorted({_dim(d, self.ndim) for d in dims}))
        axes = tuple(a for a in axes if self.ndim and shape[a] == 1)
    return ops.squeeze(self, axis=axes) if axes else ops.reshape(self, shape)


def unsqueeze(self: Tensor, dim: int) -> Tensor:
    """This tensor with a dimension of size 1 inserted at `dim`."""
    return ops.expand_dims(self, axis=_dim(dim, self.ndim + 1))


def permute(self: Tensor, *dims: int | Sequence[int]) -> Tensor:
    """This tensor with its dimensions in the order `dims`."""
    return ops.permute_dims(self, _sizes(dims))


def transpose(self: Tensor, *axes: Any, dim0: int | None = None, dim1: int | None = None) -> Tensor:
    """PyTorch's `x.transpose(dim0, dim1)`: this tensor with dimensions dim0 and dim1 swapped.
    NumPy's forms too, where two ints can't name them (code written for NumPy arrays, such as
    opt_einsum's, calls them): `x.transpose()` reverses the axes, `x.transpose(axes)` and
    `x.transpose(*axes)` permute them by a whole permutation."""
    named = tuple(d for d in (dim0, dim1) if d is not None)
    if named:
        axes += named
        if len(axes) != 2:
            raise TypeError("transpose() takes two dimensions, dim0 and dim1")
    if len(axes) == 2 and all(isinstance(a, numbers.Integral) for a in axes):
        order = list(range(self.ndim))
        a, b = _dim(axes[0], self.ndim), _dim(axes[1], self.ndim)
        order[a], order[b] = order[b], order[a]
        return ops.permute_dims(self, tuple(order))
    if len(axes) == 1 and axes[0] is not None and not isinstance(axes[0], numbers.Integral):
        axes = tuple(axes[0])
    if not axes or axes == (None,):
        axes = tuple(range(self.ndim))[::-1]
    return ops.permute_dims(self, axes)


def t(self: Tensor) -> Tensor:
    """The transpose of a matrix; a tensor of fewer than 2 dimensions as it is."""
    if self.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {self.ndim}D")
    return ops.permute_dims(self, tuple(range(self.ndim))[::-1])


def contiguous(self: Tensor, memory_format: Any = None) -> Tensor:
    """This tensor: chainrule keeps no strides of its own."""
    return self


def expand(self: Tensor, *sizes: int | Sequence[int]) -> Tensor:
    """This tensor broadcast to `sizes` (-1 keeps a dimension's size; new dimensions go
    first)."""
    sizes = _sizes(sizes)
    lead = len(sizes) - self.ndim
    if lead < 0:
        raise RuntimeError(
            f"expand: the number of sizes provided ({len(sizes)}) must be greater or equal to "
            f"the number of dimensions in the tensor ({self.ndim})"
        )
    shape = tuple(self.shape[i - lead] if n == -1 and i >= lead else n for i, n in enumerate(sizes))
    return ops.broadcast_to(self, shape)


def expand_as(self: Tensor, other: Tensor) -> Tensor:
    """This tensor broadcast to `other`'s shape."""
    return ops.broadcast_to(self, other.shape)


def repeat(self: Tensor, *sizes: int | Sequence[int]) -> Tensor:
    """This tensor tiled `sizes[i]` times along dimension i (PyTorch's repeat, NumPy's tile;
    `sizes` may add leading dimensions)."""
    sizes = _sizes(sizes)
    if len(sizes) < self.ndim:
        raise RuntimeError(
            "Number of dimensions of repeat dims can not be smaller than number of dimensions "
            "of tensor"
        )
    return ops.tile(self, sizes)


def chunk(self: Tensor, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
    """`chunks` pieces along `dim`, each of ceil(size / chunks) but the last (fewer pieces
    when the size runs out first)."""
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0")
    n = self.shape[_dim(dim, self.ndim)]
    return split(self, builtins.max(-(-n // chunks), 1), dim)


def split(self: Tensor, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple:
    """Pieces along `dim`: of `split_size_or_sections` each (the last smaller), or of the
    sizes listed (which must add up to the dimension's size)."""
    dim = _dim(dim, self.ndim)
    n = self.shape[dim]
    if isinstance(split_size_or_sections, builtins.int):
        step = split_size_or_sections
        sizes = [builtins.min(step, n - i) for i in range(0, n, step)] or [0]
    else:
        sizes = list(split_size_or_sections)
        if builtins.sum(sizes) != n:
            raise RuntimeError(
                f"split_with_sizes expects split_sizes to sum exactly to {n} (input tensor's "
                f"size at dimension {dim}), but got split_sizes={sizes}"
            )
    lead = (slice(None),) * dim
    pieces, start = [], 0
    for size in sizes:
        pieces.append(self[lead + (slice(start, start + size),)])
        start += size
    return tuple(pieces)


def narrow(self: Tensor, dim: int, start: int, length: int) -> Tensor:
    """The `length` elements from `start` along `dim` (a negative start counts from the end),
    as a view of this tensor: `x.narrow(0, 1, 2)` is `x[1:3]`."""
    dim = _dim(dim, self.ndim)
    n = self.shape[dim]
    if not -n <= start <= n:
        raise IndexError(
            f"start out of range (expected to be in range of [{-n}, {n}], but got {start})"
        )
    start = start + n if start < 0 else start
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start + length > n:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size ({n}).")
    return self[(slice(None),) * dim + (slice(start, start + length),)]


def unbind(self: Tensor, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices along `dim`, that dimension removed, as a tuple of views of this tensor
    (see chainrule.unstack)."""
    if self.ndim == 0:
        raise IndexError("Dimension specified as 0 but tensor has no dimensions")
    return ops.unstack(self, axis=_dim(dim, self.ndim))


def flip(self: Tensor, *dims: int | Sequence[int], **keywords: Any) -> Tensor:
    """This tensor with its elements in reverse order along `dims` (`x.flip(0)`,
    `x.flip(0, 1)`, `x.flip(dims=(0, 1))`); differentiable."""
    if keywords.keys() - {"dims"} or (dims and keywords):
        raise TypeError(f"flip() takes dims once, positionally or as dims=, got {keywords}")
    if not dims and not keywords:
        raise TypeError('flip() missing 1 required positional arguments: "dims"')
    axes = [_dim(d, self.ndim) for d in _sizes(dims or (keywords["dims"],))]
    for d in axes:
        if axes.count(d) > 1:
            raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return ops.flip(self, axis=tuple(axes))


def gather(self: Tensor, dim: int, index: Tensor) -> Tensor:
    """The elements at `index` along `dim`: out[i][j] = self[index[i][j]][j] for dim 0, and
    so on; index has self's number of dimensions and sizes no larger in the others."""
    dim = _dim(dim, self.ndim)
    if index.ndim != self.ndim:
        raise RuntimeError("Index tensor must have the same number of dimensions as input tensor")
    key = tuple(slice(None) if d == dim else slice(0, index.shape[d]) for d in range(self.ndim))
    for d in range(self.ndim):
        if d != dim and index.shape[d] > self.shape[d]:
            raise RuntimeError(
                f"Size does not match at dimension {d} expected index {list(index.shape)} to "
                f"be no larger than self {list(self.shape)} apart from dimension {dim}"
            )
    raw = index._data if isinstance(index, Tensor) else index
    # Under vmap, every sample's indices at once: no sample may count from the end.
    _backend.check_gather_index(every_sample(raw), self.shape[dim], dim)
    return ops.take_along_axis(self[key], index, axis=dim)


def topk(
    self: Tensor,
    k: int,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,  # noqa: A002
) -> TopK:
    """The k largest (or, unless `largest`, smallest) elements along `dim` and their
    indices, in order from the largest (smallest); equal values in index order. The values
    are differentiable (a gather). `sorted=False` gives them sorted too."""
    dim = _dim(dim, self.ndim)
    n = self.shape[dim] if self.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    order = ops.argsort(self, axis=dim, descending=largest, stable=True)
    indices = order[(slice(None),) * dim + (slice(0, k),)]
    return TopK(ops.take_along_axis(self, indices, axis=dim), indices)


# ----------------------------------------------------------------------------- elementwise


def masked_fill(self: Tensor, mask: Tensor, value: ArrayLike) -> Tensor:
    """This tensor with `value` where `mask` holds (no gradient flows there to self)."""
    if mask.dtype != ops.bool:
        raise RuntimeError(
            f"masked_fill_ only supports boolean masks, but got mask with dtype {mask.dtype}"
        )
    if getattr(value, "ndim", 0):
        raise RuntimeError(
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with "
            f"{value.ndim} dimension(s)."
        )
    return ops.where(mask, _cast(ops.asarray(value, device=self.device), self.dtype), self)


def where(self: Tensor, condition: Tensor, other: ArrayLike) -> Tensor:
    """Elements of this tensor where `condition` holds, else of `other`."""
    return ops.where(condition, self, other)


def clamp(self: Tensor, min: ArrayLike = None, max: ArrayLike = None) -> Tensor:  # noqa: A002
    """This tensor limited to [min, max] (see chainrule.clip)."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    # PyTorch's (and NumPy's) result type: integers clamped to 0.5 become floating, where
    # chainrule.clip keeps the dtype of x (the standard's).
    dtype = ops.result_type(self, *(b for b in (min, max) if b is not None))
    return ops.clip(self if dtype == self.dtype else ops.astype(self, dtype), min, max)


def xlogy(self: Tensor, other: ArrayLike) -> Tensor:
    """self * log(other), 0 where self is 0 (chainrule.special.xlogy, its derivatives too)."""
    return special.xlogy(self, other)


def pow(self: Tensor, exponent: ArrayLike) -> Tensor:  # noqa: A001
    """This tensor to the power `exponent`."""
    return ops.pow(self, exponent)


def sigmoid(self: Tensor) -> Tensor:
    """1 / (1 + exp(-x))."""
    return OPS["sigmoid"](self)


def relu(self: Tensor) -> Tensor:
    """max(x, 0), with gradient 0 at 0 (as PyTorch)."""
    return OPS["relu"](self)


def softmax(self: Tensor, dim: int, *, dtype: DTypeLike = None) -> Tensor:
    """exp(x) normalised to sum to 1 along `dim` (see chainrule.softmax)."""
    return ops.softmax(self if dtype is None else _cast(self, dtype), axis=dim)


def log_softmax(self: Tensor, dim: int, *, dtype: DTypeLike = None) -> Tensor:
    """log(softmax(x)) along `dim`, computed without overflow."""
    return ops.log_softmax(self if dtype is None else _cast(self, dtype), axis=dim)


def _alpha(name: str, op: Any, inplace: str) -> tuple[Any, Any]:
    """`x.add(other, alpha=2)` = x + 2 * other, and its in-place form (which writes as `+=`)."""

    def method(self: Tensor, other: ArrayLike, *, alpha: float = 1) -> Tensor:
        return op(self, other if alpha == 1 else ops.multiply(other, alpha))

    def method_(self: Tensor, other: ArrayLike, *, alpha: float = 1) -> Tensor:
        return INPLACE_OPERATORS[inplace](self, other if alpha == 1 else ops.multiply(other, alpha))

    method.__name__, method_.__name__ = name, name + "_"
    method.__doc__ = f"self {'+' if name == 'add' else '-'} alpha * other."
    method_.__doc__ = (
        f"self {'+' if name == 'add' else '-'}= alpha * other, in place (as the operator)."
    )
    return method, method_


def _binary(name: str, op: Any, inplace: str, symbol: str) -> tuple[Any, Any]:
    def method(self: Tensor, other: ArrayLike) -> Tensor:
        return op(self, other)

    def method_(self: Tensor, other: ArrayLike) -> Tensor:
        return INPLACE_OPERATORS[inplace](self, other)

    method.__name__, method_.__name__ = name, name + "_"
    method.__doc__ = f"self {symbol} other."
    method_.__doc__ = f"self {symbol}= other, in place (as the operator)."
    return method, method_


def mm(self: Tensor, mat2: Tensor) -> Tensor:
    """The product of two matrices."""
    if self.ndim != 2 or mat2.ndim != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {self.ndim}D and {mat2.ndim}D")
    return ops.matmul(self, mat2)


def bmm(self: Tensor, mat2: Tensor) -> Tensor:
    """The products of two batches of matrices (3-D tensors)."""
    if self.ndim != 3 or mat2.ndim != 3:
        raise RuntimeError(f"bmm: expected 3D tensors (batch1 {self.ndim}D, batch2 {mat2.ndim}D)")
    return ops.matmul(self, mat2)


def dot(self: Tensor, other: Tensor) -> Tensor:
    """The inner product of two 1-D tensors."""
    if self.ndim != 1 or other.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {self.ndim}D and {other.ndim}D tensors")
    return ops.matmul(self, other)


# ----------------------------------------------------------------------------- in place


def zero_(self: Tensor) -> Tensor:
    """Fill this tensor with zeros, in place."""
    setitem(self, Ellipsis, 0)
    return self


def fill_(self: Tensor, value: ArrayLike) -> Tensor:
    """Fill this tensor with `value`, in place (a tensor value's gradient is the sum of the
    filled elements' gradient)."""
    setitem(self, Ellipsis, value)
    return self


def copy_(self: Tensor, src: ArrayLike, non_blocking: bool = False) -> Tensor:
    """Write `src` (broadcast to this tensor's shape, cast to its dtype) into this tensor;
    the gradient flows to src."""
    setitem(self, Ellipsis, src)
    return self


def _real(self: Tensor) -> Tensor:
    """The real part: for a complex tensor a view (writes through it reach this tensor; the
    gradient is g + 0i), for a real one the tensor itself (as PyTorch)."""
    return ops.real(self) if self.dtype.kind == "c" else self


def _set_real(self: Tensor, value: ArrayLike) -> None:
    setitem(_real(self), Ellipsis, value)


def _imag(self: Tensor) -> Tensor:
    """The imaginary part of a complex tensor, a view (writes through it reach this tensor;
    the gradient is i g); PyTorch's RuntimeError for a real tensor."""
    if self.dtype.kind != "c":
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return ops.imag(self)


def _set_imag(self: Tensor, value: ArrayLike) -> None:
    setitem(_imag(self), Ellipsis, value)


def clamp_(self: Tensor, min: ArrayLike = None, max: ArrayLike = None) -> Tensor:  # noqa: A002
    """Limit this tensor to [min, max], in place."""
    setitem(self, Ellipsis, clamp(self, min, max))
    return self


def xlogy_(self: Tensor, other: ArrayLike) -> Tensor:
    """self * log(other) written into this tensor, which keeps its shape and dtype."""
    out = xlogy(self, other)
    if out.shape != self.shape:
        raise RuntimeError(
            f"output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(out.shape)}"
        )
    if out.dtype != self.dtype and not ops.isdtype(self.dtype, "real floating"):
        raise RuntimeError(
            f"result type {TORCH_DTYPE_NAMES[out.dtype]} can't be cast to the desired output "
            f"type {TORCH_DTYPE_NAMES[self.dtype]}"
        )
    setitem(self, Ellipsis, out)
    return self


def normal_(
    self: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    *,
    generator: _random.Generator | None = None,
) -> Tensor:
    """Fill this tensor with normal numbers of mean `mean` and standard deviation `std`, in
    place, from `generator` (default: chainrule.random's)."""
    drawn = _random.normal(mean, std, self.shape, dtype=self.dtype, generator=generator)
    setitem(self, Ellipsis, drawn)
    return self


def uniform_(
    self: Tensor,
    low: float = 0.0,
    high: float = 1.0,
    *,
    generator: _random.Generator | None = None,
) -> Tensor:
    """Fill this tensor with numbers uniform in [low, high), in place (PyTorch names the
    bounds `from` and `to`)."""
    drawn = _random.uniform(low, high, self.shape, dtype=self.dtype, generator=generator)
    setitem(self, Ellipsis, drawn)
    return self


# ----------------------------------------------------------------------------- dtypes, copies


def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """This tensor in another dtype and/or on another device: `to(dtype)`, `to(device)`,
    `to(device, dtype)`, `to(other)` (other's dtype and device), `dtype=`, `device=`,
    `copy=`. Itself when nothing changes and no copy is asked for (as PyTorch)."""
    dtype, device = kwargs.pop("dtype", None), kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif _is_dtype(a):
            dtype = a
        elif isinstance(a, builtins.bool):
            copy = a
        else:
            device = a
    out = self
    if device is not None and device != self.device:
        out = out.to_device(device)
    if dtype is not None and out.dtype != dtype:
        out = ops.astype(out, dtype)
    elif copy and out is self:
        out = ops.asarray(self, copy=True)
    return out


def _type(self: Tensor, dtype: DTypeLike = None, non_blocking: bool = False) -> Tensor:
    """This tensor in `dtype` (itself when it has that dtype already), as PyTorch's
    `x.type(torch.long)`. PyTorch's other forms, `x.type()` (the name of the tensor's type)
    and a type name as a string, are not implemented."""
    if dtype is None or isinstance(dtype, str):
        raise NotImplementedError(
            "Tensor.type() takes a dtype here (x.type(chainrule.int64)); the name of a "
            "tensor type (x.type(), x.type('torch.LongTensor')) is PyTorch's own"
        )
    return _cast(self, dtype)


def type_as(self: Tensor, other: Tensor) -> Tensor:
    """This tensor in `other`'s dtype (itself when it has that dtype already)."""
    return _cast(self, other.dtype)


def clone(self: Tensor, *, memory_format: Any = None) -> Tensor:
    """A copy of this tensor that keeps its history (the gradient flows back to it)."""
    return ops.asarray(self, copy=True)


def _to_dtype(name: str, dtype: Any) -> Any:
    def method(self: Tensor) -> Tensor:
        return _cast(self, dtype)

    method.__name__ = name
    method.__doc__ = f"This tensor as {dtype} (itself if it is already)."
    return method


def dim(self: Tensor) -> int:
    """The number of dimensions (ndim)."""
    return self.ndim


def numel(self: Tensor) -> int:
    """The number of elements."""
    return builtins.int(self.size)


def element_size(self: Tensor) -> int:
    """The size of one element in bytes."""
    return self.dtype.itemsize


# ----------------------------------------------------------------------------- new tensors


def _new_full(self: Tensor, shape: tuple, value: Any, dtype: DTypeLike, device: Device) -> Any:
    xp = self._xp
    dt = _backend.to_backend_dtype(xp, self.dtype if dtype is None else dtype)
    where = self.device if device is None else device
    return ops.asarray(xp.full(shape, value, dtype=dt, device=where))


def _new_filled(name: str, value: float) -> Any:
    def method(
        self: Tensor,
        *size: int | Sequence[int],
        dtype: DTypeLike = None,
        device: Device = None,
        requires_grad: bool = False,
    ) -> Tensor:
        return _new_full(self, _sizes(size), value, dtype, device).requires_grad_(requires_grad)

    method.__name__ = name
    method.__doc__ = (
        f"A new tensor of {name[4:]} of `size`, in this tensor's library, dtype and device "
        "unless `dtype`/`device` say otherwise."
    )
    return method


def new_full(
    self: Tensor,
    size: Sequence[int],
    fill_value: Any,
    *,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: bool = False,
) -> Tensor:
    """A new tensor of `size` filled with `fill_value`, in this tensor's library, dtype and
    device unless `dtype`/`device` say otherwise."""
    if fill_value.__class__ is Tensor:  # a 0-d tensor: chainrule.full broadcasts it
        dtype = self.dtype if dtype is None else dtype
        device = self.device if device is None else device
        out = ops.full(_sizes((size,)), fill_value, dtype=dtype, device=device)
    else:
        out = _new_full(self, _sizes((size,)), fill_value, dtype, device)
    return out.requires_grad_(requires_grad)


def new_tensor(
    self: Tensor,
    data: ArrayLike,
    *,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: bool = False,
) -> Tensor:
    """A new leaf holding a copy of `data`, in this tensor's library, dtype (unless `dtype`)
    and device (unless `device`)."""
    values = data.detach() if isinstance(data, Tensor) else data
    dt = _backend.to_backend_dtype(self._xp, self.dtype if dtype is None else dtype)
    raw = self._xp.asarray(
        values._data if isinstance(values, Tensor) else values,
        dtype=dt,
        device=self.device if device is None else device,
        copy=True,
    )
    return ops.asarray(raw).requires_grad_(requires_grad)


def round(self: Tensor, decimals: int = 0) -> Tensor:  # noqa: A001 - PyTorch's name
    """Elements rounded half to even, to `decimals` decimal places (PyTorch's: x 10^decimals
    rounded, then divided back); its gradient is zero."""
    if not decimals:
        return ops.round(self)
    scale = 10.0**decimals
    return ops.round(self * scale) / scale


def rsqrt(self: Tensor) -> Tensor:
    """1 / sqrt(x), elementwise."""
    return ops.reciprocal(ops.sqrt(self))


def logsumexp(self: Tensor, dim: int | Sequence[int], keepdim: bool = False) -> Tensor:
    """log(sum(exp(x))) over `dim`, without overflow."""
    return ops.logsumexp(self, axis=dim, keepdims=keepdim)


def roll(
    self: Tensor, shifts: int | Sequence[int], dims: int | Sequence[int] | None = None
) -> Tensor:
    """Elements shifted by `shifts` places along `dims` (all flattened when None)."""
    return ops.roll(self, shifts, axis=dims)


def diagonal(self: Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1) -> Tensor:
    """The diagonal `offset` (above the main one if positive) of the matrices spanned by
    dimensions dim1 and dim2, as the last dimension of the result (those two removed)."""
    ndim = self.ndim
    dim1, dim2 = _dim(dim1, ndim), _dim(dim2, ndim)
    if dim1 == dim2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    rest = [d for d in range(ndim) if d not in (dim1, dim2)]
    return linalg.diagonal(ops.permute_dims(self, (*rest, dim1, dim2)), offset=offset)


def tril(self: Tensor, diagonal: int = 0) -> Tensor:
    """The lower triangle of the last two dimensions (on and below `diagonal`)."""
    return ops.tril(self, k=diagonal)


def triu(self: Tensor, diagonal: int = 0) -> Tensor:
    """The upper triangle of the last two dimensions (on and above `diagonal`)."""
    return ops.triu(self, k=diagonal)


# PyTorch's elementwise methods that are the namespace's functions under PyTorch's names.
_ELEMENTWISE = {
    "neg": ops.negative, "negative": ops.negative, "reciprocal": ops.reciprocal,
    "square": ops.square, "sign": ops.sign, "signbit": ops.signbit, "floor": ops.floor,
    "ceil": ops.ceil, "trunc": ops.trunc, "log2": ops.log2, "log10": ops.log10,
    "log1p": ops.log1p, "expm1": ops.expm1, "tan": ops.tan, "asin": ops.asin,
    "acos": ops.acos, "atan": ops.atan, "sinh": ops.sinh, "cosh": ops.cosh,
    "asinh": ops.asinh, "acosh": ops.acosh, "atanh": ops.atanh, "isnan": ops.isnan,
    "isinf": ops.isinf, "isfinite": ops.isfinite, "logical_not": ops.logical_not,
    "atan2": ops.atan2, "maximum": ops.maximum, "minimum": ops.minimum, "hypot": ops.hypot,
    "copysign": ops.copysign, "logaddexp": ops.logaddexp, "remainder": ops.remainder,
    "floor_divide": ops.floor_divide, "logical_and": ops.logical_and,
    "logical_or": ops.logical_or, "eq": ops.equal, "ne": ops.not_equal, "lt": ops.less,
    "le": ops.less_equal, "gt": ops.greater, "ge": ops.greater_equal,
}  # fmt: skip

_add, _add_ = _alpha("add", ops.add, "__iadd__")
_sub, _sub_ = _alpha("sub", ops.subtract, "__isub__")
_mul, _mul_ = _binary("mul", ops.multiply, "__imul__", "*")
_div, _div_ = _binary("div", ops.divide, "__itruediv__", "/")

TORCH_METHODS = {
    # reductions
    "sum": sum,
    "mean": mean,
    "prod": prod,
    "std": _spread("std", ops.std),
    "var": _spread("var", ops.var),
    "max": _extreme("max", ops.max, ops.argmax, ops.maximum),
    "min": _extreme("min", ops.min, ops.argmin, ops.minimum),
    "argmax": _arg("argmax", ops.argmax),
    "argmin": _arg("argmin", ops.argmin),
    "amax": _extreme_values("amax", ops.max),
    "amin": _extreme_values("amin", ops.min),
    "all": _logical("all", ops.all),
    "any": _logical("any", ops.any),
    "cumsum": cumsum,
    "norm": norm,
    # shapes
    "view": view,
    "view_as": view_as,
    "reshape": reshape,
    "flatten": flatten,
    "squeeze": squeeze,
    "unsqueeze": unsqueeze,
    "permute": permute,
    "transpose": transpose,
    "t": t,
    "contiguous": contiguous,
    "expand": expand,
    "expand_as": expand_as,
    "repeat": repeat,
    "chunk": chunk,
    "unbind": unbind,
    "diagonal": diagonal,
    "split": split,
    "narrow": narrow,
    "gather": gather,
    "topk": topk,
    "flip": flip,
    # elementwise and products
    "exp": ops.exp,
    "log": ops.log,
    "sin": ops.sin,
    "cos": ops.cos,
    "tanh": ops.tanh,
    "sqrt": ops.sqrt,
    "sigmoid": sigmoid,
    "relu": relu,
    "softmax": softmax,
    "log_softmax": log_softmax,
    "pow": pow,
    "xlogy": xlogy,
    "add": _add,
    "sub": _sub,
    "mul": _mul,
    "div": _div,
    "masked_fill": masked_fill,
    "where": where,
    "clamp": clamp,
    "clip": clamp,
    **_ELEMENTWISE,
    "round": round,
    "rsqrt": rsqrt,
    "logsumexp": logsumexp,
    "roll": roll,
    "tril": tril,
    "triu": triu,
    "matmul": ops.matmul,
    "mm": mm,
    "bmm": bmm,
    "dot": dot,
    # in place
    "add_": _add_,
    "sub_": _sub_,
    "mul_": _mul_,
    "div_": _div_,
    "zero_": zero_,
    "fill_": fill_,
    "copy_": copy_,
    "real": property(_real, _set_real, doc=_real.__doc__),
    "imag": property(_imag, _set_imag, doc=_imag.__doc__),
    "clamp_": clamp_,
    "xlogy_": xlogy_,
    "normal_": normal_,
    "uniform_": uniform_,
    # dtypes, devices, copies, sizes
    "to": to,
    "type": _type,
    "type_as": type_as,
    "clone": clone,
    "float": _to_dtype("float", ops.float32),
    "double": _to_dtype("double", ops.float64),
    "half": _to_dtype("half", ops.float16),
    "long": _to_dtype("long", ops.int64),
    "int": _to_dtype("int", ops.int32),
    "bool": _to_dtype("bool", ops.bool),
    "dim": dim,
    "numel": numel,
    "element_size": element_size,
    # new tensors like this one
    "new_zeros": _new_filled("new_zeros", 0),
    "new_ones": _new_filled("new_ones", 1),
    "new_full": new_full,
    "new_tensor": new_tensor,
}
