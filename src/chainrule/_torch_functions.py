"""PyTorch's top-level functions that the Array API lacks: seeding and random tensors drawn
from chainrule's default generator (`manual_seed`, `rand`, `randn`, `randint`, `randperm`,
`rand_like`, `randn_like`, `randint_like`, `bernoulli`),
`from_numpy`, `einsum`, the default floating dtype (`get_default_dtype`, `set_default_dtype`),
and the tensor functions PyTorch has at the top level beside its methods (`cat`, `flatten`,
`unsqueeze`, `transpose`, `chunk`, `split`, `unbind`, `sigmoid`, `relu`, `clamp`, `mm`, `bmm`,
`diag`, `topk`, `xlogy`), and the sorting and selection ones (`kthvalue`, `quantile`...; PyTorch's
`median` and `nanmedian` are Tensor methods only: see Tensor.median)."""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from . import _torch_methods as _method
from . import _torch_sorting as _sorting
from . import linalg, special
from . import random as _random
from ._backend import DEFAULT_FLOAT, DType, from_backend_dtype
from ._batching import Batched
from ._dtypes import complex64, complex128, float16, float32, float64
from ._einsum import einsum as _einsum
from ._namespace import (
    asarray,
    broadcast_to,
    concat,
    conj,
    cumulative_sum,
    expand_dims,
    int64,
    log,
    matrix_transpose,
    nan,
    ones_like,
    where,
    zeros_like,
)
from ._namespace import sum as ops_sum
from ._rules import OPS
from ._tensor import Tensor, as_tensor, as_tensors
from ._typing import ArrayLike, Device, DTypeLike

__all__ = [
    "manual_seed", "rand", "randn", "randint", "randperm", "rand_like", "randn_like",
    "randint_like", "bernoulli", "from_numpy", "einsum",
    "get_default_dtype", "set_default_dtype", "cat", "flatten", "unsqueeze", "transpose",
    "chunk", "split", "unbind", "sigmoid", "relu", "clamp", "mm", "bmm", "diagonal", "diag", "topk",
    "cholesky_solve", "logdet", "cdist",
    "msort", "kthvalue", "mode", "cummax", "cummin", "logcumsumexp",
    "aminmax", "nansum", "nanmean", "quantile", "nanquantile", "xlogy",
]  # fmt: skip

_COMPLEX_OF = {float16: complex64, float32: complex64, float64: complex128}
_REAL_OF = {complex64: float32, complex128: float64}


def _sizes(sizes: tuple, size: Sequence[int] | None, name: str) -> tuple:
    """The sizes given as varargs, one sequence, or PyTorch's `size=` keyword."""
    if size is None:
        return sizes
    if sizes:
        raise TypeError(f"{name}() got the sizes both positionally and as size=")
    return (tuple(size),)


def manual_seed(seed: int) -> _random.Generator:
    """Restart chainrule's default generator (layers, dropout, `rand`...) from `seed`; returns
    it. The numbers drawn differ from PyTorch's for the same seed."""
    return _random.manual_seed(seed)


def rand(
    *sizes: int | Sequence[int],
    size: Sequence[int] | None = None,
    generator: _random.Generator | None = None,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: bool = False,
) -> Tensor:
    """Uniform numbers in [0, 1) of the sizes (`rand(2, 3)`, `rand((2, 3))` or
    `rand(size=(2, 3))`), in the default floating dtype unless `dtype`."""
    out = _random.rand(
        *_sizes(sizes, size, "rand"), dtype=dtype, device=device, generator=generator
    )
    return out.requires_grad_(requires_grad)


def randn(
    *sizes: int | Sequence[int],
    size: Sequence[int] | None = None,
    generator: _random.Generator | None = None,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: bool = False,
) -> Tensor:
    """Standard normal numbers of the sizes (`randn(2, 3)`, `randn((2, 3))` or
    `randn(size=(2, 3))`), in the default floating dtype unless `dtype`."""
    out = _random.randn(
        *_sizes(sizes, size, "randn"), dtype=dtype, device=device, generator=generator
    )
    return out.requires_grad_(requires_grad)


def randint(
    *args: int | Sequence[int],
    size: Sequence[int] | None = None,
    generator: _random.Generator | None = None,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: bool = False,
) -> Tensor:
    """Integers uniform in [low, high), as PyTorch's `randint(high, size)` or
    `randint(low, high, size)` (int64 unless `dtype`)."""
    if size is None:
        if not args:
            raise TypeError("randint() missing 1 required argument: 'size'")
        *args, size = args
    if len(args) not in (1, 2):
        raise TypeError(
            "randint() takes (high, size) or (low, high, size), got "
            f"{len(args) + 1} positional arguments"
        )
    low, high = (0, args[0]) if len(args) == 1 else args
    if isinstance(size, int):
        raise TypeError(f"randint(): size must be a tuple of ints, not int ({size})")
    out = _random.randint(
        int(low), int(high), tuple(size), dtype=dtype, device=device, generator=generator
    )
    return out.requires_grad_(requires_grad)


def randperm(
    n: int,
    *,
    generator: _random.Generator | None = None,
    dtype: DTypeLike = int64,
    device: Device = None,
    requires_grad: bool = False,
) -> Tensor:
    """A random permutation of 0, ..., n - 1 (int64 unless `dtype`)."""
    out = _random.permutation(n, dtype=dtype, device=device, generator=generator)
    return out.requires_grad_(requires_grad)


def _floats_like(
    kind: str,
    input: ArrayLike,  # noqa: A002
    generator: _random.Generator | None,
    dtype: DTypeLike,
    device: Device,
    requires_grad: bool,
) -> Tensor:
    """rand or randn of input's shape, in input's dtype and on its device unless given. A
    complex dtype draws its real and imaginary parts apart, as PyTorch: uniform each for
    rand, normal of variance 1/2 each (so that |z|^2 has mean 1) for randn."""
    x = as_tensor(input)
    dtype = x.dtype if dtype is None else from_backend_dtype(dtype)
    device = x.device if device is None else device
    draw = _random.rand if kind == "rand" else _random.randn
    real = _REAL_OF.get(dtype)
    if real is None:
        out = draw(x.shape, dtype=dtype, device=device, generator=generator)
    else:
        re = draw(x.shape, dtype=real, device=device, generator=generator)
        im = draw(x.shape, dtype=real, device=device, generator=generator)
        out = re + 1j * im if kind == "rand" else (re + 1j * im) * (0.5**0.5)
    return out.requires_grad_(requires_grad)


def rand_like(
    input: ArrayLike,  # noqa: A002
    *,
    generator: _random.Generator | None = None,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: bool = False,
) -> Tensor:
    """Uniform numbers in [0, 1) of input's shape, in input's dtype and on its device unless
    `dtype`/`device` (a complex dtype: real and imaginary parts uniform each)."""
    return _floats_like("rand", input, generator, dtype, device, requires_grad)


def randn_like(
    input: ArrayLike,  # noqa: A002
    *,
    generator: _random.Generator | None = None,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: bool = False,
) -> Tensor:
    """Standard normal numbers of input's shape, in input's dtype and on its device unless
    `dtype`/`device` (a complex dtype: real and imaginary parts of variance 1/2 each)."""
    return _floats_like("randn", input, generator, dtype, device, requires_grad)


def randint_like(
    input: ArrayLike,  # noqa: A002
    *args: int,
    generator: _random.Generator | None = None,
    dtype: DTypeLike = None,
    device: Device = None,
    requires_grad: bool = False,
) -> Tensor:
    """Integers uniform in [low, high) of input's shape, as PyTorch's
    `randint_like(input, high)` or `randint_like(input, low, high)`, in input's dtype and on
    its device unless `dtype`/`device`."""
    if len(args) not in (1, 2):
        raise TypeError(
            "randint_like() takes (input, high) or (input, low, high), got "
            f"{len(args) + 1} positional arguments"
        )
    low, high = (0, args[0]) if len(args) == 1 else args
    if high <= low:
        raise RuntimeError(
            f"random_ expects 'from' to be less than 'to', but got from={low} >= to={high}"
        )
    x = as_tensor(input)
    out = _random.randint(
        int(low),
        int(high),
        x.shape,
        dtype=x.dtype if dtype is None else dtype,
        device=x.device if device is None else device,
        generator=generator,
    )
    return out.requires_grad_(requires_grad)


def bernoulli(
    input: ArrayLike,  # noqa: A002
    p: float | None = None,
    *,
    generator: _random.Generator | None = None,
) -> Tensor:
    """1 with probability input (each element, in [0, 1]), else 0, in input's dtype; with
    `p`, of probability p everywhere in input's shape. Of an input that requires grad, the
    result requires grad with a gradient of zeros (as PyTorch's, BernoulliBackward0); with
    `p` it carries none (PyTorch's requires grad, and its backward raises that the derivative
    is not implemented)."""
    x = as_tensor(input)
    if x.dtype not in _COMPLEX_OF:
        raise TypeError(f"bernoulli: input must be of a real floating dtype, not {x.dtype}")
    if p is None:
        # Inside vmap the samples' probabilities are checked at once, in the batched value.
        raw = x._data
        while isinstance(raw, Batched):
            raw = raw.value
        q = asarray(raw)
        if not bool(((q >= 0) & (q <= 1)).all()):
            raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    elif not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    u = _random.rand(x.shape, dtype=x.dtype, device=x.device, generator=generator)
    if p is None:
        return OPS["bernoulli"](x, u)
    return asarray(u < p, dtype=x.dtype)


def from_numpy(ndarray: np.ndarray) -> Tensor:
    """A NumPy tensor that shares memory with `ndarray`, of its dtype: a write to either is
    seen by the other (whatever the default backend)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return asarray(ndarray)


def einsum(equation: str, *operands: Any) -> Tensor:
    """Einstein summation over the operands (given one by one, or as one list), as
    `torch.einsum` and `numpy.einsum`: `einsum("bij,bjk->bik", x, y)`; differentiable."""
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    return _einsum(equation, *operands)


def get_default_dtype() -> DType:
    """The floating dtype new tensors get from Python floats, creation functions, random
    numbers and new layers when no dtype is given (float64 unless set)."""
    return DEFAULT_FLOAT.real


def set_default_dtype(d: DTypeLike) -> None:
    """Make `d` (float16, float32 or float64) the default floating dtype; complex numbers
    then get the complex dtype of its precision."""
    dtype = from_backend_dtype(d)
    if dtype not in _COMPLEX_OF:
        raise TypeError(f"only floating-point types are supported as the default type, got {dtype}")
    DEFAULT_FLOAT.real, DEFAULT_FLOAT.complex = dtype, _COMPLEX_OF[dtype]


# ----------------------------------------------------------------------------- as the methods
# PyTorch's top-level forms of tensor methods that the Array API lacks (its own names, such as
# sum, stack or squeeze, keep the standard's signatures): `torch.cat(xs, 1)` is
# `concat(xs, axis=1)`, `torch.flatten(x, 1)` is `x.flatten(1)`.


def cat(tensors: Sequence[ArrayLike], dim: int = 0) -> Tensor:
    """The tensors joined along `dim` (the standard's `concat`)."""
    return concat(list(tensors), axis=dim)


def flatten(input: ArrayLike, start_dim: int = 0, end_dim: int = -1) -> Tensor:  # noqa: A002
    """`input.flatten(start_dim, end_dim)`."""
    return _method.flatten(as_tensor(input), start_dim, end_dim)


def unsqueeze(input: ArrayLike, dim: int) -> Tensor:  # noqa: A002
    """`input.unsqueeze(dim)`."""
    return _method.unsqueeze(as_tensor(input), dim)


def transpose(input: ArrayLike, *axes: Any) -> Tensor:  # noqa: A002
    """`input.transpose(...)`: `transpose(x, dim0, dim1)` swaps two dimensions (PyTorch's),
    `transpose(x, axes)` permutes them (NumPy's, which opt_einsum calls)."""
    return _method.transpose(as_tensor(input), *axes)


def chunk(input: ArrayLike, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """`input.chunk(chunks, dim)`."""
    return _method.chunk(as_tensor(input), chunks, dim)


def split(
    tensor: ArrayLike, split_size_or_sections: int | Sequence[int], dim: int = 0
) -> tuple[Tensor, ...]:
    """`tensor.split(split_size_or_sections, dim)`."""
    return _method.split(as_tensor(tensor), split_size_or_sections, dim)


def unbind(input: ArrayLike, dim: int = 0) -> tuple[Tensor, ...]:  # noqa: A002
    """`input.unbind(dim)`."""
    return _method.unbind(as_tensor(input), dim)


def sigmoid(input: ArrayLike) -> Tensor:  # noqa: A002
    """1 / (1 + exp(-input)), elementwise."""
    return _method.sigmoid(as_tensor(input))


def relu(input: ArrayLike) -> Tensor:  # noqa: A002
    """max(input, 0), elementwise."""
    return _method.relu(as_tensor(input))


def clamp(input: ArrayLike, min: ArrayLike = None, max: ArrayLike = None) -> Tensor:  # noqa: A002
    """`input.clamp(min, max)`."""
    return _method.clamp(as_tensor(input), min, max)


def xlogy(input: ArrayLike, other: ArrayLike) -> Tensor:  # noqa: A002
    """input * log(other), 0 where input is 0 (chainrule.special.xlogy, its derivatives
    too); one of the two may be a Python number, not both (PyTorch's TypeError)."""
    if isinstance(input, numbers.Number) and isinstance(other, numbers.Number):
        raise TypeError(
            f"xlogy() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(other).__name__}), but expected one of: "
            "(Tensor input, Tensor other), (Number self, Tensor other), "
            "(Tensor input, Number other)"
        )
    return special.xlogy(input, other)


def mm(input: ArrayLike, mat2: ArrayLike) -> Tensor:  # noqa: A002
    """The product of two matrices."""
    return _method.mm(as_tensor(input), as_tensor(mat2))


def bmm(input: ArrayLike, mat2: ArrayLike) -> Tensor:  # noqa: A002
    """The products of two batches of matrices."""
    return _method.bmm(as_tensor(input), as_tensor(mat2))


def diagonal(
    input: ArrayLike,  # noqa: A002
    offset: int = 0,
    dim1: int = 0,
    dim2: int = 1,
) -> Tensor:
    """`input.diagonal(offset, dim1, dim2)`."""
    return _method.diagonal(as_tensor(input), offset, dim1, dim2)


def topk(
    input: ArrayLike,  # noqa: A002
    k: int,
    dim: int = -1,
    largest: bool = True,
    sorted: bool = True,  # noqa: A002
) -> _method.TopK:
    """`input.topk(k, dim, largest, sorted)`: (values, indices) of the k largest elements
    (smallest unless `largest`) along `dim`."""
    return _method.topk(as_tensor(input), k, dim, largest, sorted)


def diag(input: ArrayLike, diagonal: int = 0) -> Tensor:  # noqa: A002
    """PyTorch's two-way diag: of a vector, the square matrix with it on diagonal
    `diagonal` (above the main one when positive, below when negative) and zeros elsewhere;
    of a matrix, that diagonal as a vector. Differentiable."""
    x = as_tensor(input)
    if x.ndim == 2:
        return _method.diagonal(x, diagonal, 0, 1)
    if x.ndim != 1:
        raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {x.ndim}D")
    # Made from x alone, so in x's library whatever the default one: x padded with zeros to
    # n = len(x) + |diagonal|, spread along the other axis, kept where j - i == diagonal
    # (x[i] goes to row i when diagonal >= 0, to column i below the main diagonal).
    n = x.shape[0] + abs(diagonal)
    zero = ops_sum(zeros_like(x))
    padded = concat([x, broadcast_to(zero, (n - x.shape[0],))])
    spread = expand_dims(padded, axis=1 if diagonal >= 0 else 0)
    position = cumulative_sum(ones_like(padded, dtype=int64)) - 1
    on = expand_dims(position, axis=0) - expand_dims(position, axis=1) == diagonal
    return where(on, spread, zero)


# ----------------------------------------------------------------------------- linear algebra
# PyTorch's top-level linear algebra that chainrule.linalg (the standard's) lacks, composed of
# its differentiable functions.


def cholesky_solve(B: ArrayLike, L: ArrayLike, upper: bool = False) -> Tensor:  # noqa: N803
    """X with A X = B, for A = L L^H given by its Cholesky factor L (A = U^H U, U = `L`, when
    `upper`): two triangular solves, reading only L's triangle. Batch dimensions broadcast."""
    L = as_tensor(L)  # noqa: N806
    Lh = conj(matrix_transpose(L)) if L.dtype.kind == "c" else matrix_transpose(L)  # noqa: N806
    first, second = (Lh, L) if upper else (L, Lh)
    y = linalg.solve_triangular(first, B, upper=False)
    return linalg.solve_triangular(second, y, upper=True)


def logdet(input: ArrayLike) -> Tensor:  # noqa: A002
    """log(det(input)) of square matrices: NaN where a real determinant is negative (there its
    gradient is 0, as PyTorch's), -inf where it is 0; complex for complex input."""
    sign, logabsdet = linalg.slogdet(input)
    if sign.dtype.kind == "c":
        return log(sign) + logabsdet
    return where(sign < 0, nan, logabsdet)


def cdist(x1: ArrayLike, x2: ArrayLike, p: float = 2.0) -> Tensor:
    """The p-norm distances between the rows of x1 (..., P, M) and those of x2 (..., R, M),
    of shape (..., P, R) (batch dimensions broadcast), for any p >= 0 (p = 0 counts the
    elements that differ, with a zero gradient), from the rows' differences (PyTorch may use a
    matrix product for p = 2; the values agree to rounding). The gradient where rows coincide
    is 0, as PyTorch's (for p < 1 too, where |d|**p has an infinite slope at 0)."""
    (x1, x2), _ = as_tensors((x1, x2), "cdist")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: {x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(
            f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} X2: {x2.shape[-1]}"
        )
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    diff = _method.unsqueeze(x1, -2) - _method.unsqueeze(x2, -3)
    return linalg.vector_norm(diff, axis=-1, ord=p)


# ----------------------------------------------------------------------------- sorting
# PyTorch's sorting and selection functions (chainrule.sort stays the Array API's: the values
# only; `input.sort()` is PyTorch's pair). Each is its Tensor method (_torch_sorting).


def msort(input: ArrayLike) -> Tensor:  # noqa: A002
    """`input.msort()`: sorted along the first dimension."""
    return _sorting.msort(as_tensor(input))


def kthvalue(
    input: ArrayLike,  # noqa: A002
    k: int,
    dim: int = -1,
    keepdim: bool = False,
) -> _sorting.ValuesIndices:
    """`input.kthvalue(k, dim, keepdim)`: the k-th smallest along `dim` and its index."""
    return _sorting.kthvalue(as_tensor(input), k, dim, keepdim)


def mode(input: ArrayLike, dim: int = -1, keepdim: bool = False) -> _sorting.ValuesIndices:  # noqa: A002
    """`input.mode(dim, keepdim)`: the most frequent value along `dim` and an index of it."""
    return _sorting.mode(as_tensor(input), dim, keepdim)


def cummax(input: ArrayLike, dim: int) -> _sorting.ValuesIndices:  # noqa: A002
    """`input.cummax(dim)`: the running maximum along `dim` and where each was reached."""
    return _sorting.cummax(as_tensor(input), dim)


def cummin(input: ArrayLike, dim: int) -> _sorting.ValuesIndices:  # noqa: A002
    """`input.cummin(dim)`: the running minimum along `dim` and where each was reached."""
    return _sorting.cummin(as_tensor(input), dim)


def logcumsumexp(input: ArrayLike, dim: int) -> Tensor:  # noqa: A002
    """`input.logcumsumexp(dim)`: log(cumsum(exp(input))) along `dim`, computed stably."""
    return _sorting.logcumsumexp(as_tensor(input), dim)


def aminmax(
    input: ArrayLike,  # noqa: A002
    *,
    dim: int | None = None,
    keepdim: bool = False,
) -> _sorting.MinMax:
    """`input.aminmax(dim=, keepdim=)`: (min, max) over `dim` (all elements when None)."""
    return _sorting.aminmax(as_tensor(input), dim=dim, keepdim=keepdim)


def nansum(
    input: ArrayLike,  # noqa: A002
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: DTypeLike = None,
) -> Tensor:
    """`input.nansum(dim, keepdim)`: the sum with NaN counted as 0."""
    return _sorting.nansum(as_tensor(input), dim, keepdim, dtype=dtype)


def nanmean(
    input: ArrayLike,  # noqa: A002
    dim: Any = None,
    keepdim: bool = False,
    *,
    dtype: DTypeLike = None,
) -> Tensor:
    """`input.nanmean(dim, keepdim)`: the mean of the values that are not NaN."""
    return _sorting.nanmean(as_tensor(input), dim, keepdim, dtype=dtype)


def quantile(
    input: ArrayLike,  # noqa: A002
    q: float | Tensor,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Tensor:
    """`input.quantile(q, dim, keepdim, interpolation=)`: PyTorch's quantiles (see
    Tensor.quantile; NumPy's `numpy.quantile(t, q)` on a tensor has NumPy's arguments)."""
    return _sorting.quantile(as_tensor(input), q, dim, keepdim, interpolation=interpolation)


def nanquantile(
    input: ArrayLike,  # noqa: A002
    q: float | Tensor,
    dim: int | None = None,
    keepdim: bool = False,
    *,
    interpolation: str = "linear",
) -> Tensor:
    """`input.nanquantile(q, dim, keepdim, interpolation=)`: quantile, the NaNs left out."""
    return _sorting.nanquantile(as_tensor(input), q, dim, keepdim, interpolation=interpolation)
