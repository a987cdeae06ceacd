"""Neural-network functions with PyTorch's names and semantics: activations, losses,
normalisation, dropout, linear and one-hot; differentiable to any order. The softmax family
takes PyTorch's `dim` or the Array API's `axis`; class scores sit on axis 1, as in PyTorch."""

from __future__ import annotations

import math
import struct
import warnings
from collections.abc import Callable, Sequence
from typing import Literal

from .. import _backend, linalg
from .. import _namespace as ops
from .. import random as _random
from .._batching import Batched, every_sample
from .._dtypes import TORCH_DTYPE_NAMES
from .._inplace import write_out
from .._mode import grad_mode
from .._namespace import logsumexp
from .._rules import OPS
from .._tensor import Tensor, as_tensor, dual, no_grad
from .._typing import DTypeLike
from ..autograd.function import Function, FunctionCtx

__all__ = [
    "logsumexp",
    "softmax",
    "log_softmax",
    "softmin",
    "sigmoid",
    "relu",
    "tanh",
    "gelu",
    "silu",
    "softplus",
    "leaky_relu",
    "elu",
    "selu",
    "hardtanh",
    "relu6",
    "hardsigmoid",
    "hardswish",
    "threshold",
    "softsign",
    "mish",
    "celu",
    "rrelu",
    "prelu",
    "glu",
    "hardshrink",
    "softshrink",
    "tanhshrink",
    "logsigmoid",
    "normalize",
    "cosine_similarity",
    "pairwise_distance",
    "pdist",
    "linear",
    "bilinear",
    "conv2d",
    "conv1d",
    "conv3d",
    "conv_transpose1d",
    "conv_transpose2d",
    "max_pool2d",
    "avg_pool2d",
    "adaptive_avg_pool2d",
    "max_pool1d",
    "avg_pool1d",
    "adaptive_avg_pool1d",
    "adaptive_max_pool2d",
    "adaptive_max_pool2d_with_indices",
    "adaptive_max_pool1d",
    "adaptive_max_pool1d_with_indices",
    "max_pool1d_with_indices",
    "max_pool2d_with_indices",
    "max_pool3d_with_indices",
    "max_unpool1d",
    "max_unpool2d",
    "max_unpool3d",
    "max_pool3d",
    "avg_pool3d",
    "adaptive_avg_pool3d",
    "unfold",
    "fold",
    "pad",
    "pixel_shuffle",
    "pixel_unshuffle",
    "channel_shuffle",
    "interpolate",
    "layer_norm",
    "rms_norm",
    "local_response_norm",
    "batch_norm",
    "group_norm",
    "instance_norm",
    "dropout",
    "dropout1d",
    "dropout2d",
    "dropout3d",
    "one_hot",
    "embedding",
    "embedding_bag",
    "mse_loss",
    "nll_loss",
    "cross_entropy",
    "binary_cross_entropy_with_logits",
    "binary_cross_entropy",
    "l1_loss",
    "smooth_l1_loss",
    "huber_loss",
    "kl_div",
    "poisson_nll_loss",
    "gaussian_nll_loss",
    "soft_margin_loss",
    "margin_ranking_loss",
    "hinge_embedding_loss",
    "cosine_embedding_loss",
    "multilabel_soft_margin_loss",
    "multi_margin_loss",
    "multilabel_margin_loss",
    "triplet_margin_loss",
    "triplet_margin_with_distance_loss",
    "ctc_loss",
]


def __dir__() -> list[str]:
    """The API only (dir() and editors' completion), not the names this module imports."""
    return sorted(__all__)


Reduction = Literal["none", "mean", "sum"]


def sigmoid(x: Tensor, /) -> Tensor:
    """1 / (1 + exp(-x))."""
    return OPS["sigmoid"](x)


def relu(x: Tensor, /, inplace: bool = False) -> Tensor:
    """max(x, 0), with gradient 0 at 0 (as PyTorch); with `inplace`, written into x (with
    autograd's checks on in-place writes) and x returned."""
    return _written_into(x, OPS["relu"](x), inplace)


def tanh(x: Tensor, /) -> Tensor:
    """The hyperbolic tangent."""
    return ops.tanh(x)


def _dim_or_axis(dim: int | None, axis: int | None, name: str, ndim: int) -> int:
    """The axis a softmax-like function works along: PyTorch's `dim` or the Array API's `axis`
    (one of them). Where neither is given, PyTorch's implicit choice, with its deprecation
    warning: axis 0 of a tensor of 0, 1 or 3 dimensions, else axis 1."""
    if dim is not None and axis is not None:
        raise TypeError(f"{name}() got both 'dim' and 'axis'; pass one of them")
    if dim is None and axis is None:
        warnings.warn(
            f"Implicit dimension choice for {name} has been deprecated. Change the call to "
            "include dim=X as an argument.",
            UserWarning,
            stacklevel=3,
        )
        return 0 if ndim in (0, 1, 3) else 1
    return dim if axis is None else axis


def _as_dtype(x: Tensor, dtype: DTypeLike) -> Tensor:
    """x cast to `dtype` first (PyTorch's `dtype=` argument of the softmax family)."""
    return x if dtype is None else ops.astype(x, dtype)


def softmax(
    x: Tensor, /, dim: int | None = None, *, axis: int | None = None, dtype: DTypeLike = None
) -> Tensor:
    """exp(x) / sum(exp(x)) along `dim` (or `axis`; PyTorch's implicit choice, with a
    warning, where neither is given), computed without overflow; `dtype` casts x first, as
    PyTorch."""
    return ops.softmax(_as_dtype(x, dtype), axis=_dim_or_axis(dim, axis, "softmax", x.ndim))


def log_softmax(
    x: Tensor, /, dim: int | None = None, *, axis: int | None = None, dtype: DTypeLike = None
) -> Tensor:
    """x - logsumexp(x) along `dim` (or `axis`; PyTorch's implicit choice, with a warning,
    where neither is given), computed without overflow; `dtype` casts x first, as PyTorch."""
    return ops.log_softmax(_as_dtype(x, dtype), axis=_dim_or_axis(dim, axis, "log_softmax", x.ndim))


def softmin(
    x: Tensor, /, dim: int | None = None, *, axis: int | None = None, dtype: DTypeLike = None
) -> Tensor:
    """softmax(-x) along `dim` (or `axis`; PyTorch's implicit choice, with a warning, where
    neither is given), as PyTorch's softmin."""
    x = _as_dtype(x, dtype)
    return ops.softmax(ops.negative(x), axis=_dim_or_axis(dim, axis, "softmin", x.ndim))


# ----------------------------------------------------------------------------- gelu
# The exact form's erf is the rule table's erf_series (no SciPy needed, any library), so
# that compile replays it.


def gelu(x: Tensor, /, approximate: Literal["none", "tanh"] = "none") -> Tensor:
    """x * Phi(x), Phi the standard normal CDF: exact (erf) by default, or PyTorch's tanh
    approximation with `approximate='tanh'`."""
    if approximate == "none":
        return 0.5 * x * (1.0 + OPS["erf_series"](x * (1 / math.sqrt(2))))
    if approximate == "tanh":
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * (x * x * x))
        return 0.5 * x * (1.0 + ops.tanh(inner))
    raise ValueError(f"approximate argument must be either none or tanh, got {approximate!r}")


def silu(x: Tensor, /, inplace: bool = False) -> Tensor:
    """x * sigmoid(x); with `inplace`, written into x."""
    return _written_into(x, x * sigmoid(x), inplace)


def softplus(x: Tensor, /, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (as PyTorch); the
    derivatives are PyTorch's on both sides of the threshold (the second is 0 from it on)
    and stay finite far to the left."""
    return OPS["softplus"](x, (beta, threshold))


def _written_into(x: Tensor, out: Tensor, inplace: bool) -> Tensor:
    """out, or (with `inplace`) out written into x and x returned, as PyTorch's inplace=True."""
    if not inplace:
        return out
    x[...] = out
    return x


def leaky_relu(x: Tensor, /, negative_slope: float = 0.01, inplace: bool = False) -> Tensor:
    """x where x > 0, negative_slope * x elsewhere (the slope's gradient at 0, as PyTorch)."""
    return _written_into(x, ops.where(x > 0, x, x * negative_slope), inplace)


def elu(x: Tensor, /, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, alpha * (exp(x) - 1) where x <= 0 (with expm1); the gradient at 0 is
    alpha, at a NaN x 1 (as PyTorch), exact far to the left (alpha exp(x))."""
    return _written_into(x, OPS["elu"](x, (alpha, 1.0, 1.0)), inplace)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x: Tensor, /, inplace: bool = False) -> Tensor:
    """scale * elu(x, alpha) with the self-normalising constants of Klambauer et al."""
    return _written_into(x, OPS["elu"](x, (_SELU_ALPHA, _SELU_SCALE, 1.0)), inplace)


def hardtanh(
    x: Tensor, /, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Tensor:
    """x clipped to [min_val, max_val]; the gradient is 1 strictly inside (and at a NaN x), 0
    on the edges and outside (as PyTorch)."""
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    inside = ops.logical_not((x <= min_val) | (x >= max_val))
    return _written_into(x, ops.where(inside, x, ops.clip(x.detach(), min_val, max_val)), inplace)


def relu6(x: Tensor, /, inplace: bool = False) -> Tensor:
    """min(max(x, 0), 6); the gradient is 1 strictly inside (0, 6), 0 on the edges, outside
    and at a NaN x (as PyTorch's, whose mask here is 0 < x < 6, unlike hardtanh's)."""
    inside = (x > 0.0) & (x < 6.0)
    return _written_into(x, ops.where(inside, x, ops.clip(x.detach(), 0.0, 6.0)), inplace)


def hardsigmoid(x: Tensor, /, inplace: bool = False) -> Tensor:
    """x / 6 + 1 / 2 clipped to [0, 1]; the gradient is 1 / 6 strictly inside (-3, 3), 0 on
    the edges, outside and at a NaN x (as PyTorch's)."""
    inside = (x > -3.0) & (x < 3.0)
    line = x / 6.0 + 0.5
    return _written_into(x, ops.where(inside, line, ops.clip(line.detach(), 0.0, 1.0)), inplace)


def hardswish(x: Tensor, /, inplace: bool = False) -> Tensor:
    """x * hardsigmoid(x): 0 for x <= -3, x for x >= 3, x (x + 3) / 6 between; gradients
    as PyTorch's (0 at -3, 1 at 3 and at a NaN x); 0 at x = -inf (PyTorch's is -inf * 0,
    NaN)."""
    middle = (x > -3.0) & (x < 3.0)
    # The quadratic sees 0 outside the middle: its zero gradient there stays finite.
    m = ops.where(middle, x, 0.0)
    out = ops.where(x <= -3.0, 0.0, ops.where(middle, m * (m + 3.0) / 6.0, x))
    return _written_into(x, out, inplace)


def threshold(x: Tensor, threshold: float, value: float, inplace: bool = False) -> Tensor:
    """x where x > threshold, `value` elsewhere; the gradient is 0 where x <= threshold, 1
    elsewhere (a NaN x included), as PyTorch's."""
    return _written_into(x, ops.where(x <= threshold, value, x), inplace)


def softsign(x: Tensor, /) -> Tensor:
    """x / (1 + |x|)."""
    return x / (1.0 + ops.abs(x))


def mish(x: Tensor, /, inplace: bool = False) -> Tensor:
    """x * tanh(softplus(x))."""
    return _written_into(x, x * ops.tanh(softplus(x)), inplace)


def celu(x: Tensor, /, alpha: float = 1.0, inplace: bool = False) -> Tensor:
    """x where x > 0, alpha * (exp(x / alpha) - 1) where x <= 0 (elu with its input scaled by
    1 / alpha, as PyTorch's); with `inplace`, written into x."""
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _written_into(x, OPS["elu"](x, (alpha, 1.0, 1.0 / alpha)), inplace)


def rrelu(
    x: Tensor,
    /,
    lower: float = 1.0 / 8.0,
    upper: float = 1.0 / 3.0,
    training: bool = False,
    inplace: bool = False,
) -> Tensor:
    """Randomised leaky relu: x where x > 0, a * x elsewhere. In training, a is drawn for
    each element, uniform in [lower, upper), from chainrule.random's default generator (so
    never PyTorch's numbers); else a = (lower + upper) / 2. With `inplace`, written into x."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    if not training:
        return leaky_relu(x, (lower + upper) / 2.0, inplace)
    slopes = _random.uniform(lower, upper, x.shape, dtype=x.dtype)
    return _written_into(x, ops.where(x > 0, x, x * slopes), inplace)


def prelu(x: Tensor, weight: Tensor) -> Tensor:
    """x where x > 0, weight * x elsewhere; `weight` holds one slope, or one per channel
    (axis 1; a 1-D x is one channel), as PyTorch's."""
    if weight.ndim > 1:
        raise RuntimeError(
            f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: ndim = {weight.ndim}"
        )
    count = math.prod(weight.shape)
    if count != 1:
        if x.ndim == 0:
            raise RuntimeError("Not allow zero-dim input tensor.")
        channels = x.shape[1] if x.ndim >= 2 else 1
        if count != channels:
            raise RuntimeError(
                "Mismatch of parameter numbers and input channel size. Found parameter "
                f"numbers = {count} and channel size = {channels}."
            )
        if x.ndim >= 2:
            weight = ops.reshape(weight, (count,) + (1,) * (x.ndim - 2))
    elif weight.ndim == 1:
        weight = ops.reshape(weight, ())
    return ops.where(x > 0, x, weight * x)


def glu(x: Tensor, /, dim: int = -1) -> Tensor:
    """The gated linear unit a * sigmoid(b), a and b the first and second halves of x along
    `dim`."""
    if x.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    if not -x.ndim <= dim < x.ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-x.ndim}, {x.ndim - 1}], "
            f"but got {dim})"
        )
    size = x.shape[dim]
    if size % 2:
        raise RuntimeError(
            f"Halving dimension must be even, but dimension {dim % x.ndim} is size {size}"
        )
    axis = dim % x.ndim
    half = size // 2
    first = x[(slice(None),) * axis + (slice(0, half),)]
    second = x[(slice(None),) * axis + (slice(half, size),)]
    return first * sigmoid(second)


def hardshrink(x: Tensor, /, lambd: float = 0.5) -> Tensor:
    """0 where -lambd <= x <= lambd, x elsewhere; the gradient is 1 where |x| > lambd, 0
    elsewhere (at a NaN x too, whose value stays NaN), as PyTorch's."""
    outside = (x < -lambd) | (x > lambd)
    inside = (x >= -lambd) & (x <= lambd)
    return ops.where(outside, x, ops.where(inside, 0.0, x.detach()))


def _real_only(x: Tensor, name: str) -> None:
    """PyTorch's refusal of complex values where a maximum is taken (complex numbers have no
    order; NumPy's lexicographic one would pick a meaningless element); `name` is the kernel
    PyTorch's message names."""
    if ops.isdtype(x.dtype, "complex floating"):
        raise NotImplementedError(f"\"{name}\" not implemented for '{TORCH_DTYPE_NAMES[x.dtype]}'")


def _check_lambda(x: Tensor, lambd: float) -> None:
    if lambd < 0:
        largest = ops.finfo(x.dtype).max
        raise RuntimeError(
            f"lambda must be in range [0, {largest:g}] for input dtype "
            f"{TORCH_DTYPE_NAMES.get(x.dtype, x.dtype)}, but found {lambd:g}"
        )


def softshrink(x: Tensor, /, lambd: float = 0.5) -> Tensor:
    """x - lambd where x > lambd, x + lambd where x < -lambd, 0 between; the gradient is 1
    outside, 0 between (at a NaN x too, whose value stays NaN), as PyTorch's. lambd must not
    be negative."""
    _check_lambda(x, lambd)
    shifted = ops.where(x > lambd, x - lambd, x + lambd)
    inside = (x >= -lambd) & (x <= lambd)
    outside = (x < -lambd) | (x > lambd)
    return ops.where(outside, shifted, ops.where(inside, 0.0, x.detach()))


def tanhshrink(x: Tensor, /) -> Tensor:
    """x - tanh(x)."""
    return x - ops.tanh(x)


def logsigmoid(x: Tensor, /) -> Tensor:
    """log(sigmoid(x)) = -softplus(-x), computed without overflow or cancellation: x itself
    far to the left, -exp(-x) far to the right; derivatives sigmoid(-x) and its own."""
    return OPS["log_sigmoid"](x, None)


def normalize(
    x: Tensor, /, p: float = 2.0, dim: int = 1, eps: float = 1e-12, out: Tensor | None = None
) -> Tensor:
    """x divided by its p-norm along `dim` (kept as an axis of size 1), the norm clamped below
    at eps so that a zero vector stays zero. With `out`, the result is written into it (no
    gradient flows then; its shape must be the result's) and it is returned."""
    norm = linalg.vector_norm(x, axis=dim, keepdims=True, ord=p)
    result = x / ops.maximum(norm, eps)
    return result if out is None else write_out(out, result, "div")


def _broadcast_pair(a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
    """a and b broadcast to their common shape, with PyTorch's error where they don't."""
    ndim = max(a.ndim, b.ndim)
    sa, sb = (1,) * (ndim - a.ndim) + a.shape, (1,) * (ndim - b.ndim) + b.shape
    shape = []
    for axis, (m, n) in enumerate(zip(sa, sb)):
        if m != n and m != 1 and n != 1:
            raise RuntimeError(
                f"The size of tensor a ({m}) must match the size of tensor b ({n}) at "
                f"non-singleton dimension {axis}"
            )
        shape.append(n if m == 1 else m)
    return ops.broadcast_to(a, tuple(shape)), ops.broadcast_to(b, tuple(shape))


def _clamped_norm(x: Tensor, dim: int, eps: float) -> Tensor:
    # PyTorch clamps the norm below at eps in place, outside autograd: the value is
    # max(norm, eps), the gradient the norm's own even where the clamp took effect. Where it
    # did, eps plus the norm minus its detached self (exactly 0) carries that gradient.
    norm = linalg.vector_norm(x, axis=dim, keepdims=True)
    return ops.where(norm < eps, (norm - norm.detach()) + eps, norm)


def cosine_similarity(x1: Tensor, x2: Tensor, dim: int = 1, eps: float = 1e-8) -> Tensor:
    """The cosine of the angle between x1 and x2 along `dim` (of their broadcast shape,
    removed): sum((x1 / |x1|) * (x2 / |x2|)), each norm clamped below at eps as PyTorch's
    (whose gradient stays the norm's where the clamp takes effect)."""
    x1, x2 = _broadcast_pair(x1, x2)
    ndim = max(x1.ndim, 1)
    if not -ndim <= dim < ndim:
        raise IndexError(
            f"Dimension out of range (expected to be in range of [{-ndim}, {ndim - 1}], but got "
            f"{dim})"
        )
    if x1.ndim == 0:  # one element: its axis 0, summed away
        x1, x2, dim = ops.reshape(x1, (1,)), ops.reshape(x2, (1,)), 0
    unit1 = x1 / _clamped_norm(x1, dim, eps)
    unit2 = x2 / _clamped_norm(x2, dim, eps)
    return ops.sum(unit1 * unit2, axis=dim)


def pairwise_distance(
    x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6, keepdim: bool = False
) -> Tensor:
    """The p-norm of x1 - x2 + eps along the last axis of their broadcast shape (kept with
    `keepdim`), as PyTorch's; p = 0 counts the nonzero elements (with a zero gradient), p = inf
    takes the largest."""
    diff = x1 - x2 + eps
    if diff.ndim == 0:
        return linalg.vector_norm(diff, ord=p)
    return linalg.vector_norm(diff, axis=-1, keepdims=keepdim, ord=p)


def pdist(input: Tensor, p: float = 2.0) -> Tensor:  # noqa: A002
    """The p-norm distances between the rows of a matrix of N rows, pair (i, j) for i < j in
    row-major order: N (N - 1) / 2 of them, as PyTorch's (p = 0, the number of elements that
    differ, has a zero gradient)."""
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not ops.isdtype(input.dtype, "real floating"):
        raise RuntimeError("pdist only supports floating-point dtypes")
    if p < 0:
        raise RuntimeError("pdist only supports non-negative p values")
    n = input.shape[0]
    first = [i for i in range(n) for _ in range(i + 1, n)]
    second = [j for i in range(n) for j in range(i + 1, n)]
    diff = _gather(input, first, 0) - _gather(input, second, 0)
    return linalg.vector_norm(diff, axis=-1, ord=p)


# ----------------------------------------------------------------------------- layers


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ weight.T + bias; weight has shape (out_features, in_features), or (in_features,)
    for one output feature without its axis (as PyTorch)."""
    out = ops.matmul(x, weight if weight.ndim == 1 else ops.matrix_transpose(weight))
    return out if bias is None else out + bias


def bilinear(input1: Tensor, input2: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """y[..., o] = sum_ij input1[..., i] weight[o, i, j] input2[..., j] + bias[o]: input1
    (*, in1), input2 (*, in2) with the same leading axes, weight (out, in1, in2), bias
    (out,); output (*, out)."""
    x1, x2, weight = as_tensor(input1), as_tensor(input2), as_tensor(weight)
    if x1.ndim != x2.ndim:
        raise RuntimeError(
            f"bilinear(): input dimensions do not match: got {x1.ndim} and {x2.ndim}"
        )
    for axis, (a, b) in enumerate(zip(x1.shape[:-1], x2.shape[:-1])):
        if a != b:
            raise RuntimeError(
                f"bilinear(): input batch dimensions do not match: got {a} and {b} at dim {axis}"
            )
    if weight.ndim != 3:
        raise RuntimeError(
            f"bilinear(): weight must be three-dimensional, but got {weight.ndim} dimensions"
        )
    if x1.shape[-1] != weight.shape[1]:
        raise RuntimeError(
            "bilinear(): input1 size does not match weight size: got "
            f"{x1.shape[-1]} but expected {weight.shape[1]}"
        )
    if x2.shape[-1] != weight.shape[2]:
        raise RuntimeError(
            "bilinear(): input2 size does not match weight size: got "
            f"{x2.shape[-1]} but expected {weight.shape[2]}"
        )
    if bias is not None and tuple(bias.shape) != (weight.shape[0],):
        raise RuntimeError(
            "bilinear(): bias size does not match weight size: got "
            f"{bias.shape[-1] if bias.ndim else 1} but expected {weight.shape[0]}"
        )
    # (*, 1, 1, in1) @ (out, in1, in2) -> (*, out, 1, in2), then dotted with input2
    left = ops.matmul(ops.expand_dims(ops.expand_dims(x1, axis=-2), axis=-3), weight)
    out = ops.sum(ops.squeeze(left, axis=-2) * ops.expand_dims(x2, axis=-2), axis=-1)
    return out if bias is None else out + bias


def _pair(v: int | Sequence[int], name: str) -> tuple[int, int]:
    pair = (v, v) if isinstance(v, int) else tuple(v)
    if len(pair) != 2 or not all(isinstance(k, int) for k in pair):
        raise TypeError(f"conv2d: {name} must be an int or a pair of ints, got {v!r}")
    return pair  # type: ignore[return-value]


def _same_padding(kernel: Sequence[int], dilation: Sequence[int]) -> tuple[tuple[int, int], ...]:
    """PyTorch's padding="same": per spatial axis, (before, after) zeros summing to
    dilation (k - 1), the odd one after."""
    totals = [d * (k - 1) for k, d in zip(kernel, dilation, strict=True)]
    return tuple((t // 2, t - t // 2) for t in totals)


def _zero_pad_after(x: Tensor, extra: Sequence[int]) -> Tensor:
    """x (N, C, *spatial) with extra[i] zeros appended along spatial axis i."""
    for axis, e in enumerate(extra, start=2):
        if e:
            shape = list(x.shape)
            shape[axis] = e
            x = ops.concat([x, ops.zeros(tuple(shape), dtype=x.dtype)], axis=axis)
    return x


def _conv_padding(
    padding: int | Sequence[int] | str, stride: tuple[int, ...], kernel, dilation, name: str
) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(symmetric padding, extra zeros after) per spatial axis, from an int, a tuple, "valid"
    or "same"."""
    n = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return (0,) * n, (0,) * n
        if padding != "same":
            raise RuntimeError(f"Invalid padding string: {padding!r}")
        if any(s != 1 for s in stride):
            raise RuntimeError("padding='same' is not supported for strided convolutions")
        same = _same_padding(kernel, dilation)
        return tuple(b for b, _ in same), tuple(a - b for b, a in same)
    return _tuple(padding, n, "padding", name), (0,) * n


def _tuple(v: int | Sequence[int], n: int, what: str, name: str) -> tuple[int, ...]:
    out = (v,) * n if isinstance(v, int) else tuple(v)
    if len(out) != n or not all(isinstance(k, int) for k in out):
        raise TypeError(f"{name}: {what} must be an int or {n} ints, got {v!r}")
    return out


def _image_batch(x: Tensor, groups: int, name: str) -> tuple[Tensor, bool]:
    """x (C, H, W) or (N, C, H, W) as a batch (a 3-D input is a batch of one), and whether it
    had no batch axis; PyTorch's errors for another rank or a groups that is not positive."""
    single = x.ndim == 3
    if single:
        x = ops.expand_dims(x, axis=0)
    if x.ndim != 4:
        raise RuntimeError(
            f"Expected 3D (unbatched) or 4D (batched) input to {name}, but got input of size: "
            f"{list(x.shape)}"
        )
    if not isinstance(groups, int) or groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    return x, single


def conv2d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] | str = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
) -> Tensor:
    """2-D cross-correlation (PyTorch's conv2d) of x (N, C, H, W), or (C, H, W) for one image,
    with weight (O, C / groups, kh, kw), then + bias (O,): output (N, O, Ho, Wo), Ho = (H + 2
    pad_h - dil_h (kh - 1) - 1) // stride_h + 1. `stride`, `padding` (zeros) and `dilation`
    are ints or (height, width) pairs; padding may be "valid" (none) or "same" (stride 1
    only; an odd total puts the extra zero after, as PyTorch). `groups` splits the input and
    output channels into that many independent convolutions. One primitive per group,
    differentiable to any order."""
    x, single = _image_batch(as_tensor(x), groups, "conv2d")
    weight = as_tensor(weight)
    if weight.ndim != 4 or weight.shape[1] * groups != x.shape[1]:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
            f"{list(x.shape)} to have "
            f"{weight.shape[1] * groups if weight.ndim == 4 else '?'} "
            f"channels, but got {x.shape[1]} channels instead"
        )
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size {list(weight.shape)} instead"
        )
    stride, dilation = _pair(stride, "stride"), _pair(dilation, "dilation")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    kh, kw = weight.shape[2:]
    padding, after = _conv_padding(padding, stride, (kh, kw), dilation, "conv2d")
    if min(padding) < 0:
        raise RuntimeError("negative padding is not supported")
    x = _zero_pad_after(x, after)
    h, w = x.shape[2:]
    hp, wp = h + 2 * padding[0], w + 2 * padding[1]
    eh, ew = dilation[0] * (kh - 1) + 1, dilation[1] * (kw - 1) + 1
    if hp < eh or wp < ew:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({hp} x {wp}). Kernel size: "
            f"({eh} x {ew}). Kernel size can't be greater than actual input size"
        )
    p = (stride, padding, (kh, kw), (h, w), x._data.dtype, dilation)
    if groups == 1:
        out = OPS["conv2d"]((x, weight), p)
    else:
        cin, cout = x.shape[1] // groups, weight.shape[0] // groups
        out = ops.concat(
            [
                OPS["conv2d"]((x[:, g * cin : (g + 1) * cin], weight[g * cout : (g + 1) * cout]), p)
                for g in range(groups)
            ],
            axis=1,
        )
    if bias is not None:
        out = out + ops.reshape(bias, (1, -1, 1, 1))
    return out[0] if single else out


def conv1d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] | str = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
) -> Tensor:
    """1-D cross-correlation of x (N, C, L), or (C, L), with weight (O, C / groups, k), then +
    bias: conv2d on a height of 1, with the same stride, padding, dilation and groups."""
    x, weight = as_tensor(x), as_tensor(weight)
    if x.ndim not in (2, 3) or weight.ndim != 3:
        raise RuntimeError(
            "Expected 2D (unbatched) or 3D (batched) input to conv1d and a 3D weight, but got "
            f"input of size: {list(x.shape)} and weight of size {list(weight.shape)}"
        )
    (s,) = _tuple(stride, 1, "stride", "conv1d")
    (d,) = _tuple(dilation, 1, "dilation", "conv1d")
    pad = padding if isinstance(padding, str) else (0, *_tuple(padding, 1, "padding", "conv1d"))
    out = conv2d(
        ops.expand_dims(x, axis=-2),
        ops.expand_dims(weight, axis=-2),
        bias,
        (1, s),
        pad,
        (1, d),
        groups,
    )
    return ops.squeeze(out, axis=-2)


def conv3d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] | str = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
) -> Tensor:
    """3-D cross-correlation of x (N, C, D, H, W), or (C, D, H, W), with weight (O, C /
    groups, kd, kh, kw), then + bias (O,): output (N, O, Do, Ho, Wo), each size as conv2d's.
    `stride`, `padding` (zeros; or "valid", or "same" with stride 1) and `dilation` are ints
    or triples. Made of conv2d: for each depth offset of the kernel, the depth slices it
    reads are stacked into the batch and convolved with that kernel plane, and the kd
    results summed."""
    x, weight = as_tensor(x), as_tensor(weight)
    name = "conv3d"
    single = x.ndim == 4
    if single:
        x = ops.expand_dims(x, axis=0)
    if x.ndim != 5:
        raise RuntimeError(
            f"Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input of size: "
            f"{list(x.shape)}"
        )
    if not isinstance(groups, int) or groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    if weight.ndim != 5 or weight.shape[1] * groups != x.shape[1]:
        raise RuntimeError(
            f"Given groups={groups}, weight of size {list(weight.shape)}, expected input"
            f"{list(x.shape)} to have "
            f"{weight.shape[1] * groups if weight.ndim == 5 else '?'} "
            f"channels, but got {x.shape[1]} channels instead"
        )
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size {list(weight.shape)} instead"
        )
    stride = _tuple(stride, 3, "stride", name)
    dilation = _tuple(dilation, 3, "dilation", name)
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    kernel = weight.shape[2:]
    padding, after = _conv_padding(padding, stride, kernel, dilation, name)
    if min(padding) < 0:
        raise RuntimeError("negative padding is not supported")
    x = _zero_pad_after(x, after)
    padded = [n + 2 * p for n, p in zip(x.shape[2:], padding)]
    spans = [d * (k - 1) + 1 for d, k in zip(dilation, kernel)]
    if any(n < e for n, e in zip(padded, spans)):
        raise RuntimeError(
            f"Calculated padded input size per channel: ({' x '.join(map(str, padded))}). "
            f"Kernel size: ({' x '.join(map(str, spans))}). Kernel size can't be greater than "
            "actual input size"
        )
    (sd, *s2), (pd, *p2), (dd, *d2) = stride, padding, dilation
    x = _pad_axis(x, 2, pd, pd, 0.0)
    n, c, depth_out = x.shape[0], x.shape[1], (padded[0] - spans[0]) // sd + 1
    out = None
    for i in range(kernel[0]):
        # the depth slices that kernel plane i meets, one per output depth, as a batch
        planes = x[:, :, i * dd : i * dd + sd * (depth_out - 1) + 1 : sd]
        planes = ops.reshape(ops.permute_dims(planes, (0, 2, 1, 3, 4)), (-1, c, *x.shape[3:]))
        term = conv2d(planes, weight[:, :, i], None, s2, p2, d2, groups)
        out = term if out is None else out + term
    out = ops.permute_dims(ops.reshape(out, (n, depth_out, *out.shape[1:])), (0, 2, 1, 3, 4))
    if bias is not None:
        out = out + ops.reshape(bias, (1, -1, 1, 1, 1))
    return out[0] if single else out


# ----------------------------------------------------------------------------- transposed conv
# conv_transpose2d is the adjoint of conv2d in its input, written as a conv2d: the input
# spread out by the stride (stride - 1 zeros between neighbours), padded by dilation (k - 1)
# - padding on each side (cropped where that is negative) and by output_padding after, then
# cross-correlated, stride 1, with the kernel flipped and its channel axes swapped per group.
# The zeros cost stride^2 times the work of a direct scatter; in exchange the whole is made of
# differentiable operations (to any order, both modes, vmap and compile).


def _spread(x: Tensor, axis: int, stride: int) -> Tensor:
    """x with stride - 1 zeros between neighbours along `axis`."""
    if stride == 1 or x.shape[axis] <= 1:
        return x
    n = x.shape[axis]
    parts = [x] + [ops.zeros(x.shape, dtype=x.dtype)] * (stride - 1)
    stacked = ops.stack(parts, axis=axis + 1)
    shape = x.shape[:axis] + (n * stride,) + x.shape[axis + 1 :]
    return ops.reshape(stacked, shape)[_along(axis, slice(0, (n - 1) * stride + 1))]


def conv_transpose2d(
    input: Tensor,  # noqa: A002
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    output_padding: int | Sequence[int] = 0,
    groups: int = 1,
    dilation: int | Sequence[int] = 1,
) -> Tensor:
    """2-D transposed convolution (PyTorch's conv_transpose2d) of x (N, C, H, W), or (C, H,
    W), by weight (C, O / groups, kh, kw), then + bias (O,): the adjoint of conv2d with the
    same stride, padding, dilation and groups. Output (N, O, Ho, Wo), Ho = (H - 1) stride_h
    - 2 pad_h + dil_h (kh - 1) + output_padding_h + 1; `output_padding` (smaller than the
    stride or the dilation) picks among the sizes a strided conv2d maps to H."""
    x, single = _image_batch(as_tensor(input), groups, "conv_transpose2d")
    weight = as_tensor(weight)
    if weight.ndim != 4:
        raise RuntimeError(
            f"conv_transpose2d: expected a 4-D weight (in_channels, out_channels / groups, kh, "
            f"kw), but got weight of size {list(weight.shape)}"
        )
    if weight.shape[0] % groups:
        raise RuntimeError(
            f"Given groups={groups}, expected weight to be divisible by {groups} at dimension "
            f"0, but got weight of size [{list(weight.shape)}] instead"
        )
    if weight.shape[0] != x.shape[1]:
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected input"
            f"{list(x.shape)} to have {weight.shape[0]} channels, but got {x.shape[1]} "
            "channels instead"
        )
    name = "conv_transpose2d"
    stride, padding = _tuple(stride, 2, "stride", name), _tuple(padding, 2, "padding", name)
    extra = _tuple(output_padding, 2, "output_padding", name)
    dilation = _tuple(dilation, 2, "dilation", name)
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(padding) < 0:
        raise RuntimeError("negative padding is not supported")
    if min(dilation) <= 0:
        raise RuntimeError(
            "dilation should be greater than zero, but got dilation_height: "
            f"{dilation[0]}, dilation_width: {dilation[1]}"
        )
    if any(e < 0 or (e >= s and e >= d) for e, s, d in zip(extra, stride, dilation)):
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            f"output_padding_height: {extra[0]} output_padding_width: {extra[1]} "
            f"stride_height: {stride[0]} stride_width: {stride[1]} dilation_height: "
            f"{dilation[0]} dilation_width: {dilation[1]}"
        )
    kernel = weight.shape[2:]
    out_size = [
        (n - 1) * s - 2 * p + d * (k - 1) + e + 1
        for n, s, p, d, k, e in zip(x.shape[2:], stride, padding, dilation, kernel, extra)
    ]
    if min(out_size) <= 0:
        raise RuntimeError(
            f"Given input size per channel: ({x.shape[2]} x {x.shape[3]}). Calculated output "
            f"size per channel: ({out_size[0]} x {out_size[1]}). Output size is too small"
        )
    cout = weight.shape[1] * groups
    if bias is not None and tuple(bias.shape) != (cout,):
        raise RuntimeError(
            f"Given transposed=1, weight of size {list(weight.shape)}, expected bias to be "
            f"1-dimensional with {cout} elements, but got bias of size {list(bias.shape)} "
            "instead"
        )
    spread = _spread(_spread(x, 2, stride[0]), 3, stride[1])
    edges = [d * (k - 1) - p for d, k, p in zip(dilation, kernel, padding)]
    spread = pad(spread, (edges[1], edges[1] + extra[1], edges[0], edges[0] + extra[0]))
    cin = weight.shape[0] // groups
    flipped = ops.reshape(weight, (groups, cin, weight.shape[1], *kernel))
    flipped = ops.permute_dims(flipped, (0, 2, 1, 3, 4))
    flipped = ops.flip(ops.reshape(flipped, (cout, cin, *kernel)), axis=(2, 3))
    out = conv2d(spread, flipped, bias, 1, 0, dilation, groups)
    return out[0] if single else out


def conv_transpose1d(
    input: Tensor,  # noqa: A002
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    output_padding: int | Sequence[int] = 0,
    groups: int = 1,
    dilation: int | Sequence[int] = 1,
) -> Tensor:
    """1-D transposed convolution of x (N, C, L), or (C, L), by weight (C, O / groups, k),
    then + bias: conv_transpose2d on a height of 1, with the same options."""
    x, weight = as_tensor(input), as_tensor(weight)
    if x.ndim not in (2, 3):
        raise RuntimeError(
            "Expected 2D (unbatched) or 3D (batched) input to conv_transpose1d, but got input "
            f"of size: {list(x.shape)}"
        )
    if weight.ndim != 3:
        raise RuntimeError(
            "conv_transpose1d: expected a 3-D weight (in_channels, out_channels / groups, k), "
            f"but got weight of size {list(weight.shape)}"
        )
    name = "conv_transpose1d"
    (s,) = _tuple(stride, 1, "stride", name)
    (p,) = _tuple(padding, 1, "padding", name)
    (e,) = _tuple(output_padding, 1, "output_padding", name)
    (d,) = _tuple(dilation, 1, "dilation", name)
    out = conv_transpose2d(
        ops.expand_dims(x, axis=-2),
        ops.expand_dims(weight, axis=-2),
        bias,
        (1, s),
        (0, p),
        (0, e),
        groups,
        (1, d),
    )
    return ops.squeeze(out, axis=-2)


def _pool_size(n: int, k: int, s: int, p: int, d: int, ceil_mode: bool) -> int:
    """PyTorch's pooled length of n: with ceil_mode a last, partial window is kept if it
    starts inside the input or its left padding."""
    span = n + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= n + p:
        out -= 1
    return out


def _pad_axis(x: Tensor, axis: int, before: int, after: int, value) -> Tensor:
    """x with `before` and `after` slices of `value` around it along `axis` (2 or 3)."""
    if not before and not after:
        return x
    shape = list(x.shape)
    parts = []
    for length in (before, after):
        shape[axis] = length
        parts.append(ops.full(tuple(shape), value, dtype=x.dtype))
    return ops.concat([parts[0], x, parts[1]], axis=axis)


def _windows(
    x: Tensor,
    kernel: tuple[int, int],
    stride: tuple[int, int],
    padding: tuple[int, int],
    fill,
    ceil_mode: bool = False,
    dilation: tuple[int, int] = (1, 1),
    overhang=None,
) -> list[Tensor]:
    """The kernel's views of x (N, C, H, W), one (N, C, Ho, Wo) tensor per kernel position
    (row-major), after padding with `fill`, and, under ceil_mode, past the padding where the
    last window overhangs it, with `overhang` (default: `fill`)."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel, stride, padding, dilation
    if ph > (dh * (kh - 1) + 1) // 2 or pw > (dw * (kw - 1) + 1) // 2:
        raise RuntimeError("pad should be at most half of effective kernel size")
    if ph > kh // 2 or pw > kw // 2:  # PyTorch's kernel checks the undilated size too
        raise RuntimeError(
            "pad should be smaller than or equal to half of kernel size, but got "
            f"padW = {pw}, padH = {ph}, kW = {kw}, kH = {kh}"
        )
    h, w = x.shape[2:]
    ho = _pool_size(h, kh, sh, ph, dh, ceil_mode)
    wo = _pool_size(w, kw, sw, pw, dw, ceil_mode)
    if ho <= 0 or wo <= 0:
        raise RuntimeError(f"Output size is too small: input {h}x{w}, kernel {kh}x{kw}")
    overhang = fill if overhang is None else overhang
    extra_h = max(0, (ho - 1) * sh + dh * (kh - 1) + 1 - h - 2 * ph)
    extra_w = max(0, (wo - 1) * sw + dw * (kw - 1) + 1 - w - 2 * pw)
    # the overhang last, so that it spans the padding too
    x = _pad_axis(_pad_axis(x, 2, ph, ph, fill), 3, pw, pw, fill)
    x = _pad_axis(_pad_axis(x, 2, 0, extra_h, overhang), 3, 0, extra_w, overhang)
    return [
        x[:, :, i * dh : i * dh + sh * (ho - 1) + 1 : sh, j * dw : j * dw + sw * (wo - 1) + 1 : sw]
        for i in range(kh)
        for j in range(kw)
    ]


def _pool_args(x: Tensor, kernel_size, stride, padding, name: str) -> tuple:
    if x.ndim not in (3, 4):
        raise RuntimeError(f"{name}: expected 3D or 4D input, got {x.ndim}D")
    if 0 in x.shape[-3:]:  # only a batch (of 4-D input) may be empty
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input, "
            f"but got:{list(x.shape)}"
        )
    kernel = _pair(kernel_size, "kernel_size")
    if stride is None or (not isinstance(stride, int) and len(stride) == 0):
        step = kernel
    else:
        step = _pair(stride, "stride")
    pad = _pair(padding, "padding")
    # PyTorch's checks and words (a kernel of 0 is, as there, a stride of 0 by default)
    if 0 in step:
        raise RuntimeError("stride should not be zero")
    if min(step) < 0:
        raise RuntimeError(
            f"stride should be greater than zero, but got dH: {step[0]} dW: {step[1]}"
        )
    if min(pad) < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(pad)}")
    return kernel, step, pad


def max_pool2d(
    x: Tensor,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """The maximum of each kernel window of x (N, C, H, W) or (C, H, W); stride defaults to
    the kernel size; padding counts as -inf; `dilation` spaces the window's elements;
    `ceil_mode` keeps a last, partial window (PyTorch's rule). The gradient goes to the first
    maximum of each window (row-major), as PyTorch's. With return_indices, also each
    maximum's int64 flat index into its (H, W) plane (see max_pool2d_with_indices)."""
    x = as_tensor(x)
    kernel, step, pad = _pool_args(x, kernel_size, stride, padding, "max_pool2d")
    _real_only(x, "max_pool2d")
    dilation = _pair(dilation, "dilation")
    if min(dilation) <= 0:
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    return _max_pool(x, 2, kernel, step, pad, dilation, ceil_mode, return_indices)


def max_pool2d_with_indices(
    x: Tensor,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = True,
) -> tuple[Tensor, Tensor]:
    """max_pool2d's maxima and their int64 flat indices into each (H, W) plane of x, as
    PyTorch's: ties go to the first in row-major order, a window holding NaN reports its last
    NaN, a window of -inf alone its first element inside x (never the padding)."""
    out = max_pool2d(x, kernel_size, stride, padding, dilation, ceil_mode, True)
    return out if return_indices else out[0]


def _spatial_windows(
    x: Tensor, kernel, stride, padding, fill, ceil_mode: bool, dilation=None, overhang=None
) -> list[Tensor]:
    """_windows (two spatial axes) or _windows3d (three), by the kernel's length."""
    dilation = (1,) * len(kernel) if dilation is None else dilation
    if len(kernel) == 2:
        return _windows(x, kernel, stride, padding, fill, ceil_mode, dilation, overhang)
    return _windows3d(x, kernel, stride, padding, fill, ceil_mode, dilation, overhang)


def _scan_choice(stacked: Tensor, first: Tensor) -> Tensor:
    """Which element PyTorch's max pooling reports, along the last axis of the candidates
    `stacked`, given the first maximum `first` (keepdims): its scan keeps the first maximum
    but moves on to every NaN it meets, so a run holding NaN reports its last NaN."""
    positions = ops.arange(stacked.shape[-1], dtype=first.dtype)
    nan_at = ops.where(ops.isnan(stacked), positions, -1)
    last_nan = ops.max(nan_at, axis=-1, keepdims=True)
    return ops.where(last_nan >= 0, last_nan, first)


def _max_pool(
    x: Tensor, spatial: int, kernel, step, pad, dilation, ceil_mode: bool, return_indices: bool
) -> Tensor | tuple[Tensor, Tensor]:
    """max_pool2d and max_pool3d after their checks: x (N, C, *plane) or (C, *plane) with
    `spatial` plane axes; the maxima, and with return_indices their flat plane indices."""
    single = x.ndim == spatial + 1
    if single:
        x = ops.expand_dims(x, axis=0)
    stacked = ops.stack(
        _spatial_windows(x, kernel, step, pad, -math.inf, ceil_mode, dilation), axis=-1
    )
    first = ops.argmax(stacked, axis=-1, keepdims=True)
    out = ops.squeeze(ops.take_along_axis(stacked, first, axis=-1), axis=-1)
    if not return_indices:
        return out[0] if single else out
    # The same windows over the plane's flat positions (-1 in the padding) name the element
    # each window chose.
    plane = x.shape[2:]
    count = math.prod(plane)
    positions = ops.reshape(ops.arange(count, dtype=ops.int64), (1, 1, *plane))
    spots = ops.stack(
        _spatial_windows(positions, kernel, step, pad, -1, ceil_mode, dilation), axis=-1
    )
    chosen = ops.take_along_axis(
        ops.broadcast_to(spots, stacked.shape), _scan_choice(stacked, first), axis=-1
    )
    # A window of -inf alone chose its first element, which may lie in the padding; PyTorch
    # reports the window's first element inside x (the smallest of its flat positions).
    inside = ops.min(ops.where(spots < 0, count, spots), axis=-1, keepdims=True)
    indices = ops.squeeze(ops.where(chosen < 0, inside, chosen), axis=-1)
    return (out[0], indices[0]) if single else (out, indices)


def avg_pool2d(
    x: Tensor,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean of each kernel window of x (N, C, H, W) or (C, H, W); stride defaults to the
    kernel size. As PyTorch's: the divisor counts the window's elements inside the padded
    input (count_include_pad, the default) or inside x only, or is `divisor_override`;
    `ceil_mode` keeps a last, partial window, whose overhang past the padding never counts."""
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x = as_tensor(x)
    kernel, step, pad = _pool_args(x, kernel_size, stride, padding, "avg_pool2d")
    return _avg_pool(x, 2, kernel, step, pad, ceil_mode, count_include_pad, divisor_override)


def _avg_pool(
    x: Tensor,
    spatial: int,
    kernel,
    step,
    pad,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Tensor:
    """avg_pool2d and avg_pool3d after their checks: x (N, C, *plane) or (C, *plane) with
    `spatial` plane axes."""
    single = x.ndim == spatial + 1
    if single:
        x = ops.expand_dims(x, axis=0)
    windows = _spatial_windows(x, kernel, step, pad, 0.0, ceil_mode)
    total = windows[0]
    for w in windows[1:]:
        total = total + w
    if divisor_override is not None:
        out = total / divisor_override
    elif not ceil_mode and (count_include_pad or not any(pad)):
        out = total / len(windows)
    else:
        out = total / _window_counts(x, kernel, step, pad, ceil_mode, count_include_pad)
    return out[0] if single else out


def _window_counts(
    x: Tensor, kernel, stride, padding, ceil_mode: bool, count_include_pad: bool
) -> Tensor:
    """(1, 1, *output plane): how many elements of each window lie in x, or in padded x
    where count_include_pad; a constant, with no gradient."""
    ones = ops.ones((1, 1, *x.shape[2:]), dtype=x.dtype)
    pad_counts = 1.0 if count_include_pad else 0.0
    counts = _spatial_windows(ones, kernel, stride, padding, pad_counts, ceil_mode, overhang=0.0)
    total = counts[0]
    for c in counts[1:]:
        total = total + c
    return total


def _check_adaptive_input(shape: Sequence[int], name: str, spatial: int) -> None:
    """PyTorch's error for adaptive pooling over an empty spatial axis; `shape` is the one
    PyTorch's message names (for 1-D pooling, the input's with a height of 1 inserted)."""
    for axis in range(len(shape) - spatial, len(shape)):
        if shape[axis] == 0:
            raise RuntimeError(
                f"{name}(): Expected input to have non-zero size for non-batch dimensions, "
                f"but input has sizes {list(shape)} with dimension {axis} being empty"
            )


def _adaptive_mean(x: Tensor, size: int, axis: int) -> Tensor:
    """Means of `size` bins along `axis` (PyTorch's adaptive bins, _adaptive_bins)."""
    n = x.shape[axis]
    lead = (slice(None),) * (axis % x.ndim)
    parts = []
    for start, end in _adaptive_bins(n, size):
        parts.append(ops.mean(x[lead + (slice(start, end),)], axis=axis, keepdims=True))
    return ops.concat(parts, axis=axis) if parts else x[lead + (slice(0, 0),)]


def adaptive_avg_pool2d(x: Tensor, output_size: int | Sequence[int | None]) -> Tensor:
    """The means of an output_size grid of bins over the last two axes of x (N, C, H, W) or
    (C, H, W); None in output_size keeps that axis' size."""
    x = as_tensor(x)
    if x.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d: expected 3D or 4D input, got {x.ndim}D")
    _check_adaptive_input(x.shape, "adaptive_avg_pool2d", 2)
    sizes = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    oh = x.shape[-2] if sizes[0] is None else sizes[0]
    ow = x.shape[-1] if sizes[1] is None else sizes[1]
    return _adaptive_mean(_adaptive_mean(x, oh, -2), ow, -1)


def _pool1d_args(x: Tensor, kernel_size, stride, padding, dilation, name: str) -> tuple:
    """A 1-D pooling's options as the (1, k) pairs of its 2-D form, with PyTorch's checks."""
    (k,) = _tuple(kernel_size, 1, "kernel_size", name)
    if stride is None or (not isinstance(stride, int) and len(stride) == 0):
        s = k
    else:
        (s,) = _tuple(stride, 1, "stride", name)
    (p,) = _tuple(padding, 1, "padding", name)
    (d,) = _tuple(dilation, 1, "dilation", name)
    if s <= 0:
        raise RuntimeError(f"{name}() stride must be greater than zero, but got {s}")
    return (1, k), (1, s), (0, p), (1, d)


def max_pool1d(
    x: Tensor,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor:
    """The maximum of each kernel window along the last axis of x (N, C, L) or (C, L):
    max_pool2d on a height of 1, with the same options and the gradient to each window's
    first maximum; with return_indices, also each maximum's int64 position along L."""
    x = as_tensor(x)
    if x.ndim not in (2, 3) or 0 in x.shape[-2:]:
        raise RuntimeError(
            "max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size "
            f"for input, but got:{list(x.shape)}"
        )
    _real_only(x, "max_pool1d_impl")
    kernel, step, pad_, dil = _pool1d_args(x, kernel_size, stride, padding, dilation, "max_pool1d")
    if pad_[1] > kernel[1] // 2:
        raise RuntimeError(
            "max_pool1d() padding should be at most half of kernel size, but got "
            f"padding={pad_[1]} and kernel_size={kernel[1]}"
        )
    length = _pool_size(x.shape[-1], kernel[1], step[1], pad_[1], dil[1], ceil_mode)
    if length <= 0:
        raise RuntimeError(f"max_pool1d() Invalid computed output size: {length}")
    out = max_pool2d(
        ops.expand_dims(x, axis=-2), kernel, step, pad_, dil, ceil_mode, return_indices
    )
    if return_indices:  # a height of 1: the plane's flat index is the position along L
        return ops.squeeze(out[0], axis=-2), ops.squeeze(out[1], axis=-2)
    return ops.squeeze(out, axis=-2)


def max_pool1d_with_indices(
    x: Tensor,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = True,
) -> tuple[Tensor, Tensor]:
    """max_pool1d's maxima and their int64 positions along the last axis of x (the choice
    of max_pool2d_with_indices)."""
    out = max_pool1d(x, kernel_size, stride, padding, dilation, ceil_mode, True)
    return out if return_indices else out[0]


def avg_pool1d(
    x: Tensor,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Tensor:
    """The mean of each kernel window along the last axis of x (N, C, L) or (C, L):
    avg_pool2d on a height of 1, with the same options."""
    x = as_tensor(x)
    if x.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for argument #1 "
            "'self' (while checking arguments for avg_pool1d)"
        )
    kernel, step, pad_, _ = _pool1d_args(x, kernel_size, stride, padding, 1, "avg_pool1d")
    if pad_[1] > kernel[1] // 2:
        raise RuntimeError(
            f"pad should be at most half of effective kernel size, but got pad={pad_[1]}, "
            f"kernel_size={kernel[1]} and dilation=1"
        )
    out = avg_pool2d(ops.expand_dims(x, axis=-2), kernel, step, pad_, ceil_mode, count_include_pad)
    return ops.squeeze(out, axis=-2)


def _adaptive_bins(n: int, size: int) -> list[tuple[int, int]]:
    """PyTorch's adaptive bins of an axis of length n: bin i spans [floor(i n / size),
    ceil((i + 1) n / size)) (they overlap when size does not divide n)."""
    return [((i * n) // size, -((-(i + 1) * n) // size)) for i in range(size)]


def _adaptive_1d(x, output_size: int | Sequence[int], kind: str) -> tuple[Tensor, int]:
    """x as a tensor and the output length of adaptive_{kind}_pool1d, with PyTorch's checks
    and words (kind: "avg" or "max")."""
    x = as_tensor(x)
    if x.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 2 to 3 dimensions, but got {x.ndim}-dimensional tensor for argument #1 "
            f"'self' (while checking arguments for adaptive_{kind}_pool1d)"
        )
    sizes = (output_size,) if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != 1:
        raise RuntimeError(
            f"adaptive_{kind}_pool1d() argument 'output_size' should contain one int (got "
            f"{len(sizes)})"
        )
    if kind == "max":  # PyTorch's max pooling refuses an empty axis but the batch's
        _check_adaptive_input(x.shape, "adaptive_max_pool1d", x.ndim - 1)
    _check_adaptive_input((*x.shape[:-1], 1, x.shape[-1]), f"adaptive_{kind}_pool2d", 2)
    return x, sizes[0]


def adaptive_avg_pool1d(x: Tensor, output_size: int | Sequence[int]) -> Tensor:
    """The means of `output_size` bins along the last axis of x (N, C, L) or (C, L)."""
    x, size = _adaptive_1d(x, output_size, "avg")
    return _adaptive_mean(x, size, -1)


def _pool3d_args(x: Tensor, kernel_size, stride, padding, dilation, name: str) -> tuple:
    """A 3-D pooling's options as triples, with PyTorch's checks and words."""
    if x.ndim not in (4, 5):
        raise RuntimeError("non-empty 4D or 5D (batch mode) tensor expected for input")
    if 0 in x.shape[-4:]:  # only a batch (of 5-D input) may be empty
        kernel_name = "max_pool3d_with_indices_out_cpu_template" if name == "max_pool3d" else name
        raise RuntimeError(
            f"{kernel_name}(): Expected input's non-batch dimensions to have positive length, "
            f"but input has a shape of {list(x.shape)} and non-batch dimension "
            f"{x.shape[-4:].index(0)} has length zero!"
        )
    kernel = _tuple(kernel_size, 3, "kernel_size", name)
    if stride is None or (not isinstance(stride, int) and len(stride) == 0):
        step = kernel
    else:
        step = _tuple(stride, 3, "stride", name)
    pad = _tuple(padding, 3, "padding", name)
    dil = _tuple(dilation, 3, "dilation", name)
    if 0 in step:
        raise RuntimeError("stride should not be zero")
    if min(step) < 0:
        raise RuntimeError(f"stride should be greater than zero, but got {list(step)}")
    if min(pad) < 0:
        raise RuntimeError(f"pad must be non-negative, but got pad: {min(pad)}")
    if min(dil) <= 0:
        raise RuntimeError(
            "dilation should be greater than zero, but got dilationT: {} dilationH: {} "
            "dilationW: {}".format(*dil)
        )
    for k, p, d in zip(kernel, pad, dil):
        if p > (d * (k - 1) + 1) // 2:
            raise RuntimeError(
                f"pad should be at most half of effective kernel size, but got pad={p}, "
                f"kernel_size={k} and dilation={d}"
            )
    if any(p > k // 2 for k, p in zip(kernel, pad)):
        raise RuntimeError(
            "pad should be smaller than or equal to half of kernel size, but got kT: {} kW: {} "
            "kH: {} padT: {} padW: {} padH: {}".format(*kernel, *pad)
        )
    return kernel, step, pad, dil


def _windows3d(
    x: Tensor, kernel, stride, padding, fill, ceil_mode: bool, dilation=(1, 1, 1), overhang=None
) -> list[Tensor]:
    """The kernel's views of x (N, C, D, H, W), one (N, C, Do, Ho, Wo) tensor per kernel
    position (depth-major, then row-major), as _windows (whose conventions they follow)
    with a depth axis: the padded depth slices go into the batch for _windows' rows and
    columns, and each depth offset takes its strided slices back out."""
    (kd, *k2), (sd, *s2), (pd, *p2), (dd, *d2) = kernel, stride, padding, dilation
    depth = x.shape[2]
    do = _pool_size(depth, kd, sd, pd, dd, ceil_mode)
    ho, wo = (
        _pool_size(n, k, s, p, d, ceil_mode) for n, k, s, p, d in zip(x.shape[3:], k2, s2, p2, d2)
    )
    if min(do, ho, wo) <= 0:
        raise RuntimeError(
            f"Given input size: ({'x'.join(map(str, x.shape[1:]))}). Calculated output size: "
            f"({x.shape[1]}x{do}x{ho}x{wo}). Output size is too small"
        )
    overhang = fill if overhang is None else overhang
    extra = max(0, (do - 1) * sd + dd * (kd - 1) + 1 - depth - 2 * pd)
    x = _pad_axis(_pad_axis(x, 2, pd, pd, fill), 2, 0, extra, overhang)
    n, c, dp = x.shape[:3]
    flat = ops.reshape(ops.permute_dims(x, (0, 2, 1, 3, 4)), (n * dp, c, *x.shape[3:]))
    planes = [
        ops.reshape(p, (n, dp, c, ho, wo))
        for p in _windows(
            flat, tuple(k2), tuple(s2), tuple(p2), fill, ceil_mode, tuple(d2), overhang
        )
    ]
    return [
        ops.permute_dims(p[:, i * dd : i * dd + sd * (do - 1) + 1 : sd], (0, 2, 1, 3, 4))
        for i in range(kd)
        for p in planes
    ]


def max_pool3d(
    x: Tensor,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Tensor | tuple[Tensor, Tensor]:
    """The maximum of each kernel window of x (N, C, D, H, W) or (C, D, H, W), with
    max_pool2d's options as triples (or ints); the gradient goes to the first maximum of
    each window (depth, then row-major), as PyTorch's. With return_indices, also each
    maximum's int64 flat index into its (D, H, W) volume (see max_pool2d_with_indices)."""
    x = as_tensor(x)
    kernel, step, pad_, dil = _pool3d_args(x, kernel_size, stride, padding, dilation, "max_pool3d")
    _real_only(x, "max_pool3d")
    return _max_pool(x, 3, kernel, step, pad_, dil, ceil_mode, return_indices)


def max_pool3d_with_indices(
    x: Tensor,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = True,
) -> tuple[Tensor, Tensor]:
    """max_pool3d's maxima and their int64 flat indices into each (D, H, W) volume of x
    (the choice of max_pool2d_with_indices)."""
    out = max_pool3d(x, kernel_size, stride, padding, dilation, ceil_mode, True)
    return out if return_indices else out[0]


def avg_pool3d(
    x: Tensor,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Tensor:
    """The mean of each kernel window of x (N, C, D, H, W) or (C, D, H, W), with avg_pool2d's
    options (sizes as triples or ints) and its divisor rules."""
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    x = as_tensor(x)
    kernel, step, pad_, _ = _pool3d_args(x, kernel_size, stride, padding, 1, "avg_pool3d")
    return _avg_pool(x, 3, kernel, step, pad_, ceil_mode, count_include_pad, divisor_override)


def adaptive_avg_pool3d(x: Tensor, output_size: int | Sequence[int | None]) -> Tensor:
    """The means of an output_size grid of bins (PyTorch's adaptive bins) over the last three
    axes of x (N, C, D, H, W) or (C, D, H, W); None in output_size keeps that axis' size."""
    x = as_tensor(x)
    if x.ndim not in (4, 5):
        raise RuntimeError(
            f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got {list(x.shape)}"
        )
    sizes = (output_size,) * 3 if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != 3:
        raise RuntimeError("adaptive_avg_pool3d: output_size must be 3")
    _check_adaptive_input(x.shape, "adaptive_avg_pool3d", 3)
    for axis, size in zip((-3, -2, -1), sizes):
        x = _adaptive_mean(x, x.shape[axis] if size is None else size, axis)
    return x


# ----------------------------------------------------------------------------- unfold and fold
# unfold (im2col) gathers each sliding block of a padded image as one column; fold is its
# adjoint, summing each column back into the block it came from (overlaps add up). Both are
# slices, stacks, zero spreads and pads, so differentiable to any order in both modes.


def _sliding_args(kernel_size, dilation, padding, stride, name: str) -> tuple:
    """unfold's and fold's options as pairs, with PyTorch's checks and words."""
    k = _tuple(kernel_size, 2, "kernel_size", name)
    d = _tuple(dilation, 2, "dilation", name)
    p = _tuple(padding, 2, "padding", name)
    s = _tuple(stride, 2, "stride", name)
    for values, what, bound in (
        (k, "kernel size", "greater than zero"),
        (s, "stride", "greater than zero"),
        (d, "dilation", "greater than zero"),
        (p, "padding", "non-negative"),
    ):
        if min(values) < (0 if what == "padding" else 1):
            short = "pad" if what == "padding" else what.replace(" size", "")
            raise RuntimeError(
                f"{what} should be {bound}, but got {short.replace(' ', '_')}_height: "
                f"{values[0]} {short.replace(' ', '_')}_width: {values[1]}"
            )
    return k, d, p, s


def _block_counts(size: Sequence[int], k, d, p, s) -> tuple[int, int]:
    """How many sliding blocks fit along the height and the width of a padded image."""
    bh, bw = (
        (n + 2 * pi - di * (ki - 1) - 1) // si + 1 for n, ki, di, pi, si in zip(size, k, d, p, s)
    )
    return bh, bw


def unfold(
    input: Tensor,  # noqa: A002
    kernel_size: int | Sequence[int],
    dilation: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    stride: int | Sequence[int] = 1,
) -> Tensor:
    """The sliding blocks of x (N, C, H, W), or (C, H, W), as columns (im2col): output (N, C
    kh kw, L), row c kh kw + i kw + j holding channel c at kernel offset (i, j), column l the
    l-th block (row-major); zero `padding`, `dilation` and `stride` as conv2d's, so that
    conv2d(x, w) is w.reshape(O, -1) @ unfold(x) reshaped."""
    x = as_tensor(input)
    if x.ndim not in (3, 4):
        raise RuntimeError(
            "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero "
            f"dimensions for input, but got: {list(x.shape)}"
        )
    k, d, p, s = _sliding_args(kernel_size, dilation, padding, stride, "unfold")
    single = x.ndim == 3
    if single:
        x = ops.expand_dims(x, axis=0)
    bh, bw = _block_counts(x.shape[2:], k, d, p, s)
    if bh < 1 or bw < 1:
        raise RuntimeError(
            f"Given input with spatial size ({x.shape[2]}, {x.shape[3]}), kernel_size={k}, "
            f"dilation={d}, padding={p}, calculated shape of the array of sliding blocks as "
            f"({bh}, {bw}), but its components must be at least one."
        )
    x = pad(x, (p[1], p[1], p[0], p[0]))
    columns = [
        x[
            :,
            :,
            i * d[0] : i * d[0] + s[0] * (bh - 1) + 1 : s[0],
            j * d[1] : j * d[1] + s[1] * (bw - 1) + 1 : s[1],
        ]
        for i in range(k[0])
        for j in range(k[1])
    ]
    n, c = x.shape[:2]
    out = ops.reshape(ops.stack(columns, axis=2), (n, c * k[0] * k[1], bh * bw))
    return out[0] if single else out


def fold(
    input: Tensor,  # noqa: A002
    output_size: int | Sequence[int],
    kernel_size: int | Sequence[int],
    dilation: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
    stride: int | Sequence[int] = 1,
) -> Tensor:
    """The adjoint of unfold (col2im): columns (N, C kh kw, L), or (C kh kw, L), summed back
    into an image (N, C, *output_size), each column added to the block it would have been
    read from (overlapping blocks add up; what lands in the padding is dropped)."""
    x = as_tensor(input)
    if x.ndim not in (2, 3):
        raise RuntimeError(
            "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and "
            f"non-zero dimensions for input, but got: {list(x.shape)}"
        )
    size = _tuple(output_size, 2, "output_size", "fold")
    k, d, p, s = _sliding_args(kernel_size, dilation, padding, stride, "fold")
    single = x.ndim == 2
    if single:
        x = ops.expand_dims(x, axis=0)
    if x.shape[1] % (k[0] * k[1]):
        raise RuntimeError(
            "Expected size of input's dimension 1 to be divisible by the product of "
            f"kernel_size, but got input.size(1)={x.shape[1]} and kernel_size={k}."
        )
    bh, bw = _block_counts(size, k, d, p, s)
    if x.shape[2] != bh * bw or bh < 1 or bw < 1:
        raise RuntimeError(
            f"Given output_size={size}, kernel_size={k}, dilation={d}, padding={p}, "
            f"stride={s}, expected size of input's dimension 2 to match the calculated number "
            f"of sliding blocks {bh} * {bw} = {bh * bw}, but got input.size(2)={x.shape[2]}."
        )
    n, c = x.shape[0], x.shape[1] // (k[0] * k[1])
    blocks = ops.reshape(x, (n, c, k[0], k[1], bh, bw))
    hp, wp = size[0] + 2 * p[0], size[1] + 2 * p[1]
    out = None
    for i in range(k[0]):
        for j in range(k[1]):
            # offset (i, j) of every block, its values stride apart, placed in the padded image
            part = _spread(_spread(blocks[:, :, i, j], 2, s[0]), 3, s[1])
            top, left = i * d[0], j * d[1]
            part = pad(part, (left, wp - left - part.shape[3], top, hp - top - part.shape[2]))
            out = part if out is None else out + part
    out = out[:, :, p[0] : p[0] + size[0], p[1] : p[1] + size[1]]
    return out[0] if single else out


def adaptive_max_pool2d(
    x: Tensor, output_size: int | Sequence[int | None], return_indices: bool = False
) -> Tensor | tuple[Tensor, Tensor]:
    """The maxima of an output_size grid of bins (PyTorch's adaptive bins) over the last two
    axes of x (N, C, H, W) or (C, H, W); None in output_size keeps that axis' size. The
    gradient goes to the first maximum of each bin (row-major), as PyTorch's. With
    return_indices, also each maximum's int64 flat index into its (H, W) plane, chosen as
    max_pool2d_with_indices chooses."""
    x = as_tensor(x)
    if x.ndim not in (3, 4):
        raise RuntimeError(
            f"adaptive_max_pool2d(): Expected 3D or 4D tensor, but got: {list(x.shape)}"
        )
    _real_only(x, "adaptive_max_pool2d")
    _check_adaptive_input(x.shape, "adaptive_max_pool2d", x.ndim - 1)  # all but the batch
    sizes = (output_size, output_size) if isinstance(output_size, int) else tuple(output_size)
    if len(sizes) != 2:
        raise RuntimeError("adaptive_max_pool2d(): internal error: output_size.size() must be 2")
    h, w = x.shape[-2:]
    oh, ow = (n if s is None else s for n, s in zip((h, w), sizes))
    if oh < 0 or ow < 0:
        raise RuntimeError(
            f"Trying to create tensor with negative dimension {min(oh, ow)}: "
            f"{list(x.shape[:-2]) + [oh, ow]}"
        )
    lead = x.shape[:-2]
    positions = ops.reshape(ops.arange(h * w, dtype=ops.int64), (h, w))
    cells, spots = [], []
    for top, bottom in _adaptive_bins(h, oh):
        for left, right in _adaptive_bins(w, ow):
            cell_size = (bottom - top) * (right - left)  # not -1: the batch may be empty
            cell = ops.reshape(x[..., top:bottom, left:right], lead + (cell_size,))
            first = ops.argmax(cell, axis=-1, keepdims=True)
            cells.append(ops.take_along_axis(cell, first, axis=-1))
            if return_indices:
                places = ops.reshape(positions[top:bottom, left:right], (-1,))
                places = ops.broadcast_to(places, cell.shape)
                spots.append(ops.take_along_axis(places, _scan_choice(cell, first), axis=-1))
    if not cells:
        out = ops.zeros(lead + (oh, ow), dtype=x.dtype)
        return (out, ops.zeros(out.shape, dtype=ops.int64)) if return_indices else out
    out = ops.reshape(ops.concat(cells, axis=-1), lead + (oh, ow))
    if return_indices:
        return out, ops.reshape(ops.concat(spots, axis=-1), lead + (oh, ow))
    return out


def adaptive_max_pool2d_with_indices(
    x: Tensor, output_size: int | Sequence[int | None], return_indices: bool = True
) -> tuple[Tensor, Tensor]:
    """adaptive_max_pool2d's maxima and their int64 flat indices into each (H, W) plane."""
    out = adaptive_max_pool2d(x, output_size, True)
    return out if return_indices else out[0]


def adaptive_max_pool1d(
    x: Tensor, output_size: int | Sequence[int], return_indices: bool = False
) -> Tensor | tuple[Tensor, Tensor]:
    """The maxima of `output_size` bins (PyTorch's adaptive bins) along the last axis of x
    (N, C, L) or (C, L): adaptive_max_pool2d on a height of 1; with return_indices, also
    each maximum's int64 position along L."""
    x, size = _adaptive_1d(x, output_size, "max")
    out = adaptive_max_pool2d(ops.expand_dims(x, axis=-2), (1, size), return_indices)
    if return_indices:
        return ops.squeeze(out[0], axis=-2), ops.squeeze(out[1], axis=-2)
    return ops.squeeze(out, axis=-2)


def adaptive_max_pool1d_with_indices(
    x: Tensor, output_size: int | Sequence[int], return_indices: bool = True
) -> tuple[Tensor, Tensor]:
    """adaptive_max_pool1d's maxima and their int64 positions along the last axis."""
    out = adaptive_max_pool1d(x, output_size, True)
    return out if return_indices else out[0]


def _unpool_size(
    x: Tensor, kernel: tuple[int, ...], step: tuple[int, ...], pad: tuple[int, ...], output_size
) -> list[int]:
    """The unpooled plane's size: the pooled one's inverse, or `output_size` (the plane's
    sizes, or the full shape) where it is one of the sizes that pooling maps to x's, as
    PyTorch's checks (and their words) allow."""
    spatial = len(kernel)
    default = [(n - 1) * s + k - 2 * p for n, k, s, p in zip(x.shape[-spatial:], kernel, step, pad)]
    if output_size is None:
        size = default
    else:
        size = list(output_size)
        if len(size) == spatial + 2:
            size = size[2:]
        if len(size) != spatial:
            raise ValueError(
                f"output_size should be a sequence containing {spatial} or {spatial + 2} "
                f"elements, but it has a length of '{len(size)}'"
            )
        for d, (n, s) in enumerate(zip(default, step)):
            if not n - s < size[d] < n + s:
                raise ValueError(
                    f'invalid output_size "{output_size}" (dim {d} must be between {n - s} '
                    f"and {n + s})"
                )
    for d, n in enumerate(size):
        if n < 0:
            raise ValueError(
                "max_unpooling: output_size must contain non-negative spatial dimensions, but "
                f"got output_size[{d}]={n}"
            )
    return size


def _written_last(spots: Tensor) -> Tensor:
    """Whether each of the 1-D `spots` is the last that names its place: in a stable sort
    the last of each run of equal spots, scattered back to the spots' order."""
    order = ops.argsort(spots, stable=True)
    ordered = ops.take(spots, order)
    last = ops.concat([ordered[1:] != ordered[:-1], ops.ones((1,), dtype=ops.bool)])
    flags = ops.astype(last, ops.int64)
    back = OPS["take_add"](flags, (order._data, 0, flags.shape, flags._data.dtype))
    return back == 1


def _max_unpool(x: Tensor, indices: Tensor, size: list[int], name: str) -> Tensor:
    """x (N, C, *plane) or (C, *plane) written into zeros of plane size `size` at the flat
    `indices` (int64, x's shape) of each plane; where an index repeats, the last write stays
    (NumPy's setitem, PyTorch's CPU loop). Differentiable in x: each value's gradient is the
    gradient at its index, and zero for a value overwritten (PyTorch gives that one the
    gradient at its index too, which is not the derivative of its output)."""
    spatial = len(size)
    if x.ndim not in (spatial + 1, spatial + 2):
        raise RuntimeError(
            f"Input to {name} should be a {spatial + 1}d or {spatial + 2}d Tensor, but got a "
            f"tensor with {x.ndim} dimensions."
        )
    if indices.dtype != ops.int64:
        got = "" if spatial == 3 else f" but got: {TORCH_DTYPE_NAMES.get(indices.dtype)}"
        raise RuntimeError(f"elements in indices should be type int64{got}")
    if tuple(indices.shape) != tuple(x.shape):
        raise RuntimeError(
            f"Expected shape of indices to be same as that of the input tensor "
            f"({list(x.shape)}) but got indices tensor with shape: {list(indices.shape)}"
        )
    for axis in range(1, x.ndim):  # PyTorch's unpooling: all but the first axis nonempty
        if x.shape[axis] == 0:
            raise RuntimeError(
                f"{name}_forward_out_cpu(): Expected input to have non-zero size for non-batch "
                f"dimensions, but got {list(x.shape)} with dimension {axis} being empty."
            )
    single = x.ndim == spatial + 1
    if single:
        x, indices = ops.expand_dims(x, axis=0), ops.expand_dims(indices, axis=0)
    planes, count = x.shape[0] * x.shape[1], math.prod(size)
    # The output where x or a plane is empty: zeros, joined to x's graph (by x's empty
    # slice) so that it requires grad as x does and sends x a zero gradient, as PyTorch's.
    # (x's empty slice taken by indexing: Dask can't reshape an empty batch)
    nothing = x[(slice(0, 0),) + (0,) * (x.ndim - 1)]
    out = ops.concat([nothing, ops.zeros((planes * count,), dtype=x.dtype)])
    if x.size and count:
        if grad_mode.extended and grad_mode.tracer is not None:
            # the indices' range is read: chainrule.compile runs it eagerly (named without
            # its dimension: max_unpool1d unpools a width of 1 here)
            grad_mode.tracer.unsupported("F.max_unpool1d/2d/3d (it reads the indices)")
        every = _every_value(indices)  # inside vmap, every sample's
        low, high = ops.min(every).item(), ops.max(every).item()
        if low < 0 or high >= count:
            raise RuntimeError(
                f"Found an invalid max index: {low if low < 0 else high} (output volumes are "
                f"of size {'x'.join(map(str, size))})"
            )
        # each plane's indices moved to its place in the flat output
        offsets = ops.reshape(ops.arange(planes, dtype=ops.int64) * count, (-1, 1))
        spots = ops.reshape(ops.reshape(indices, (planes, -1)) + offsets, (-1,))
        # The output as a gather: each place reads the value written there last (its number
        # + 1, scattered as an integer) or, at 0, a zero put in front of the values; so the
        # values are copied exactly, and each one's gradient is read back from its place.
        numbers = ops.arange(1, spots.shape[0] + 1, dtype=ops.int64)
        numbers = ops.where(_written_last(spots), numbers, 0)
        source = OPS["take_add"](numbers, (spots._data, 0, (planes * count,), numbers._data.dtype))
        values = ops.concat([ops.zeros((1,), dtype=x.dtype), ops.reshape(x, (-1,))])
        out = ops.take(values, source, axis=0)
    out = ops.reshape(out, (*x.shape[:2], *size))
    return out[0] if single else out


def max_unpool1d(
    x: Tensor,
    indices: Tensor,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """A partial inverse of max_pool1d: x (N, C, L) or (C, L) placed at the positions
    `indices` (max_pool1d's with return_indices) of zeros of the length max_pool1d with
    these options maps to L (or `output_size`, when it is one of those lengths)."""
    x, indices = as_tensor(x), as_tensor(indices)
    kernel = _tuple(kernel_size, 1, "kernel_size", "max_unpool1d")
    step = kernel if stride is None else _tuple(stride, 1, "stride", "max_unpool1d")
    pad = _tuple(padding, 1, "padding", "max_unpool1d")
    size = _unpool_size(x, kernel, step, pad, output_size)
    # PyTorch unpools a width of 1 (hence its messages' words)
    out = _max_unpool(
        ops.expand_dims(x, axis=-1),
        ops.expand_dims(indices, axis=-1),
        size + [1],
        "max_unpooling2d",
    )
    return ops.squeeze(out, axis=-1)


def max_unpool2d(
    x: Tensor,
    indices: Tensor,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """A partial inverse of max_pool2d: x (N, C, H, W) or (C, H, W) placed at the flat
    plane indices `indices` (max_pool2d's with return_indices) of zeros of the plane size
    max_pool2d with these options maps to (H, W) (or `output_size`, when it is one of those
    sizes); the rest is zero."""
    x, indices = as_tensor(x), as_tensor(indices)
    kernel = _tuple(kernel_size, 2, "kernel_size", "max_unpool2d")
    step = kernel if stride is None else _tuple(stride, 2, "stride", "max_unpool2d")
    pad = _tuple(padding, 2, "padding", "max_unpool2d")
    size = _unpool_size(x, kernel, step, pad, output_size)
    return _max_unpool(x, indices, size, "max_unpooling2d")


def max_unpool3d(
    x: Tensor,
    indices: Tensor,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    output_size: Sequence[int] | None = None,
) -> Tensor:
    """A partial inverse of max_pool3d: x (N, C, D, H, W) or (C, D, H, W) placed at the flat
    volume indices `indices` (max_pool3d's with return_indices) of zeros, as max_unpool2d."""
    x, indices = as_tensor(x), as_tensor(indices)
    kernel = _tuple(kernel_size, 3, "kernel_size", "max_unpool3d")
    step = kernel if stride is None else _tuple(stride, 3, "stride", "max_unpool3d")
    pad = _tuple(padding, 3, "padding", "max_unpool3d")
    size = _unpool_size(x, kernel, step, pad, output_size)
    return _max_unpool(x, indices, size, "max_unpooling3d")


# ----------------------------------------------------------------------------- padding
# pad's tuple lists (before, after) pairs from the last axis backwards, as PyTorch's. Each
# mode is built from slices, flips and concatenations, so it differentiates (to any order, in
# both modes) as they do; the axes are padded one after the other, which gives the corners of
# reflect, replicate and circular padding exactly PyTorch's values.

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def pad(
    input: Tensor,  # noqa: A002
    pad: Sequence[int],
    mode: Literal["constant", "reflect", "replicate", "circular"] = "constant",
    value: float | None = None,
) -> Tensor:
    """x padded on its last len(pad) // 2 axes; `pad` lists (before, after) per axis from the
    last axis backwards: (left, right) pads the last axis, (left, right, top, bottom) the
    last two. `mode` 'constant' fills with `value` (0 by default) and crops where a pad is
    negative; 'reflect' mirrors the input about its edge (the edge itself not repeated),
    'replicate' repeats the edge, 'circular' wraps around. As PyTorch, the other modes pad
    the last 1, 2 or 3 axes of an input with one or two axes more (a batch axis optional)."""
    x = as_tensor(input)
    pad = tuple(pad)
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    n = len(pad) // 2
    if n > x.ndim:
        raise RuntimeError(
            "Padding length should be less than or equal to two times the input dimension but "
            f"got padding length {len(pad)} and input of dimension {x.ndim}"
        )
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    pairs = [(x.ndim - 1 - i, pad[2 * i], pad[2 * i + 1]) for i in range(n)]
    if mode == "constant":
        fill = 0.0 if value is None else value
        for axis, before, after in pairs:
            x = _crop_or_fill(x, axis, before, after, fill)
        return x
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    _check_edge_padding(x, pairs, mode)
    # A negative pad crops, as PyTorch's: circular wraps what is left after the crop,
    # reflect and replicate pad from the input's own edges, then crop.
    for axis, before, after in pairs:
        if mode == "circular":
            x = _circular(_crop(x, axis, before, after), axis, max(before, 0), max(after, 0))
        else:
            x = _EDGE_PADS[mode](x, axis, max(before, 0), max(after, 0))
            x = _crop(x, axis, before, after)
    return x


def _check_pixel_factor(x: Tensor, factor: int, name: str, what: str) -> None:
    if x.ndim < 3:
        raise RuntimeError(
            f"{name} expects input to have at least 3 dimensions, but got input with "
            f"{x.ndim} dimension(s)"
        )
    if factor <= 0:
        raise RuntimeError(f"{name} expects a positive {what}, but got {factor}")


def pixel_shuffle(input: Tensor, upscale_factor: int) -> Tensor:  # noqa: A002
    """x of shape (*, C r^2, H, W) rearranged to (*, C, H r, W r), r = upscale_factor: the
    r^2 channels of each output channel become an r-by-r block of pixels (channel c r^2 +
    i r + j goes to row offset i, column offset j), as PyTorch's; differentiable."""
    x, r = as_tensor(input), upscale_factor
    _check_pixel_factor(x, r, "pixel_shuffle", "upscale_factor")
    *lead, c, h, w = x.shape
    if c % (r * r):
        raise RuntimeError(
            "pixel_shuffle expects its input's 'channel' dimension to be divisible by the "
            f"square of upscale_factor, but input.size(-3)={c} is not divisible by {r * r}"
        )
    n = len(lead)
    x = x.reshape((*lead, c // (r * r), r, r, h, w))
    x = ops.permute_dims(x, (*range(n), n, n + 3, n + 1, n + 4, n + 2))
    return x.reshape((*lead, c // (r * r), h * r, w * r))


def pixel_unshuffle(input: Tensor, downscale_factor: int) -> Tensor:  # noqa: A002
    """The inverse of pixel_shuffle: x of shape (*, C, H r, W r) to (*, C r^2, H, W), each
    r-by-r block of pixels gathered into r^2 channels; differentiable."""
    x, r = as_tensor(input), downscale_factor
    _check_pixel_factor(x, r, "pixel_unshuffle", "downscale_factor")
    *lead, c, h, w = x.shape
    for side, size, axis in (("height", h, -2), ("width", w, -1)):
        if size % r:
            raise RuntimeError(
                f"pixel_unshuffle expects {side} to be divisible by downscale_factor, but "
                f"input.size({axis})={size} is not divisible by {r}"
            )
    n = len(lead)
    x = x.reshape((*lead, c, h // r, r, w // r, r))
    x = ops.permute_dims(x, (*range(n), n, n + 2, n + 4, n + 1, n + 3))
    return x.reshape((*lead, c * r * r, h // r, w // r))


def channel_shuffle(input: Tensor, groups: int) -> Tensor:  # noqa: A002
    """x (N, C, *) with its channels, seen as a (groups, C / groups) grid, transposed:
    output channel j groups + g is input channel g (C / groups) + j, as PyTorch's
    (ShuffleNet's shuffle)."""
    x = as_tensor(input)
    if x.ndim <= 2:
        raise RuntimeError(
            f"channel_shuffle expects input with > 2 dims, but got input with sizes {list(x.shape)}"
        )
    if not isinstance(groups, int) or groups <= 0:
        raise RuntimeError(
            f"Number of groups to divide channels in must be positive. Value of groups:{groups}"
        )
    n, c, *rest = x.shape
    if c % groups:
        raise RuntimeError(
            f"Number of channels must be divisible by groups. Got {c} channels and {groups} groups."
        )
    grid = ops.reshape(x, (n, groups, c // groups, *rest))
    return ops.reshape(ops.permute_dims(grid, (0, 2, 1, *range(3, grid.ndim))), x.shape)


def _crop(x: Tensor, axis: int, before: int, after: int) -> Tensor:
    """x along `axis` without its first -before and last -after elements, where negative."""
    if before >= 0 and after >= 0:
        return x
    start, stop = max(-before, 0), x.shape[axis] - max(-after, 0)
    return x[(slice(None),) * axis + (slice(start, stop),)]


def _crop_or_fill(x: Tensor, axis: int, before: int, after: int, fill) -> Tensor:
    """x along `axis` with `before` / `after` slices of `fill` added, or, where negative, that
    many elements cropped."""
    if x.shape[axis] + min(before, 0) + min(after, 0) < 0:
        raise RuntimeError(
            f"pad: cropping {max(-before, 0)} and {max(-after, 0)} elements of axis {axis} "
            f"of input of size {list(x.shape)} leaves a negative size"
        )
    x = _crop(x, axis, before, after)
    return _pad_axis(x, axis, max(before, 0), max(after, 0), fill)


def _check_edge_padding(x: Tensor, pairs: list, mode: str) -> None:
    """PyTorch's checks of a reflect, replicate or circular padding, in its words."""
    n = len(pairs)
    if not 1 <= n <= 3 or x.ndim not in (n + 1, n + 2):
        raise NotImplementedError(
            f"Padding size {2 * n} is not supported for {x.ndim}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)"
        )
    if mode != "circular":
        _check_output_size(x, pairs)
    for axis, before, after in pairs:
        size = x.shape[axis]
        if mode == "circular":
            kept = size + min(before, 0) + min(after, 0)  # what the crop leaves to wrap
            if kept < 0:
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
            if before > kept or after > kept:
                raise RuntimeError("Padding value causes wrapping around more than once.")
        if size == 0 and (mode != "circular" or before or after):
            raise RuntimeError(
                f"Expected {n + 1}D or {n + 2}D (batch mode) tensor with possibly 0 batch size "
                f"and other non-zero dimensions for input, but got: {list(x.shape)}"
            )
        if mode == "reflect" and (before >= size or after >= size):
            raise RuntimeError(
                "Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({before}, {after}) at dimension {axis} of input "
                f"{list(x.shape)}"
            )


def _check_output_size(x: Tensor, pairs: list) -> None:
    """PyTorch's check of a reflect or replicate padding's output size (negative pads crop):
    an error where one is negative or none is positive, in its words."""
    names = "DHW"[-len(pairs) :]
    sizes = [x.shape[axis] for axis, _, _ in reversed(pairs)]
    out = [x.shape[axis] + before + after for axis, before, after in reversed(pairs)]
    if min(out) < 0 or max(out) < 1:
        given = ", ".join(f"{k}: {n}" for k, n in zip(names, sizes))
        made = " ".join(f"{k}: {n}" for k, n in zip(names, out))
        raise RuntimeError(f"input ({given}) is too small. Calculated output {made}")


def _along(axis: int, key: slice) -> tuple:
    return (slice(None),) * axis + (key,)


def _reflect(x: Tensor, axis: int, before: int, after: int) -> Tensor:
    n = x.shape[axis]
    parts = [x]
    if before:
        parts.insert(0, ops.flip(x[_along(axis, slice(1, before + 1))], axis=axis))
    if after:
        parts.append(ops.flip(x[_along(axis, slice(n - 1 - after, n - 1))], axis=axis))
    return parts[0] if len(parts) == 1 else ops.concat(parts, axis=axis)


def _replicate(x: Tensor, axis: int, before: int, after: int) -> Tensor:
    n = x.shape[axis]
    parts = [x]
    for count, key, where in ((before, slice(0, 1), 0), (after, slice(n - 1, n), 2)):
        if count:
            shape = list(x.shape)
            shape[axis] = count
            parts.insert(where, ops.broadcast_to(x[_along(axis, key)], tuple(shape)))
    return parts[0] if len(parts) == 1 else ops.concat(parts, axis=axis)


def _circular(x: Tensor, axis: int, before: int, after: int) -> Tensor:
    n = x.shape[axis]
    parts = [x]
    if before:
        parts.insert(0, x[_along(axis, slice(n - before, n))])
    if after:
        parts.append(x[_along(axis, slice(0, after))])
    return parts[0] if len(parts) == 1 else ops.concat(parts, axis=axis)


_EDGE_PADS = {"reflect": _reflect, "replicate": _replicate, "circular": _circular}


# ----------------------------------------------------------------------------- resampling
# interpolate resamples one spatial axis after the other: 'nearest' (and 'nearest-exact')
# gathers one source element per output element, the linear modes two, weighted, 'bicubic'
# four, antialias (and 'lanczos', always antialiased) a window that widens with the
# downscaling; gathers are `take`, whose gradient scatters back (summing where sources
# repeat). The source positions are PyTorch's: nearest's are computed in float32 as its
# kernel does (so that the same element is picked), the others' in float64. 'area' is
# adaptive average pooling to the output size.

_LINEAR_MODES = {"linear": 3, "bilinear": 4, "trilinear": 5}
_NEAREST_MODES = ("nearest", "nearest-exact")
_ALL_MODES = "nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact"
# Keys' cubic convolution parameter: PyTorch's bicubic uses -0.75 (as OpenCV), its
# antialiased bicubic -0.5 (as PIL).
_CUBIC_A = -0.75
_ANTIALIAS_CUBIC_A = -0.5


def _float32(v: float) -> float:
    """v rounded to the nearest float32, as a Python float."""
    return struct.unpack("f", struct.pack("f", v))[0]


def _nearest_sources(
    n_in: int, n_out: int, scale: float | None, exact: bool, shortcut: bool
) -> list[int]:
    """For each output position, the input position 'nearest' ('nearest-exact') copies.
    With `shortcut` (PyTorch's kernel for 4-D input), an output of the input's length, or
    of twice it, copies positions i or i // 2 whatever the scale_factor that gave it."""
    if shortcut and n_out == n_in:
        return list(range(n_out))
    if shortcut and n_out == 2 * n_in:
        return [i // 2 for i in range(n_out)]
    step = _float32(1.0 / scale if scale else n_in / n_out)
    shift = 0.5 if exact else 0.0
    return [min(math.floor(_float32((i + shift) * step)), n_in - 1) for i in range(n_out)]


def _source_step(n_in: int, n_out: int, scale: float | None, align_corners: bool) -> float:
    """The distance in input positions between neighbouring output positions: with
    align_corners the corner centres line up; else 1 / scale_factor when one was given (and
    not recomputed), else the ratio of the sizes."""
    if align_corners:
        return (n_in - 1) / (n_out - 1) if n_out > 1 else 0.0
    return 1.0 / scale if scale else n_in / n_out


def _linear_sources(
    n_in: int, n_out: int, scale: float | None, align_corners: bool
) -> tuple[list[int], list[int], list[float]]:
    """For each output position, the two input positions the linear modes mix, and the
    weight of the second."""
    step = _source_step(n_in, n_out, scale, align_corners)
    low, high, weights = [], [], []
    for i in range(n_out):
        src = step * i if align_corners else max(step * (i + 0.5) - 0.5, 0.0)
        first = min(math.floor(src), n_in - 1)
        low.append(first)
        high.append(first + 1 if first < n_in - 1 else first)
        weights.append(min(max(src - first, 0.0), 1.0))
    return low, high, weights


def _cubic(d: float, a: float) -> float:
    """Keys' cubic convolution kernel at distance d: 1 at 0, 0 at the other integers and
    from 2 on."""
    d = abs(d)
    if d < 1.0:
        return ((a + 2.0) * d - (a + 3.0)) * d * d + 1.0
    if d < 2.0:
        return ((d - 5.0) * d + 8.0) * d * a - 4.0 * a
    return 0.0


def _antialias_cubic(d: float) -> float:
    """The cubic kernel of antialiased 'bicubic' (a = -0.5)."""
    return _cubic(d, _ANTIALIAS_CUBIC_A)


def _triangle(d: float) -> float:
    """The linear interpolation kernel at distance d."""
    return max(1.0 - abs(d), 0.0)


def _sinc(d: float) -> float:
    return math.sin(math.pi * d) / (math.pi * d) if d else 1.0


def _lanczos3(d: float) -> float:
    """The Lanczos kernel of 3 lobes: sinc(d) windowed by the wider sinc(d / 3)."""
    return _sinc(d) * _sinc(d / 3.0) if abs(d) < 3.0 else 0.0


# Antialiased modes: the kernel and the distance from its centre where it ends.
_ANTIALIAS_KERNELS = {
    "bilinear": (_triangle, 1.0),
    "bicubic": (_antialias_cubic, 2.0),
    "lanczos": (_lanczos3, 3.0),
}


_Taps = list[tuple[list[int], list[float]]]


def _cubic_taps(n_in: int, n_out: int, scale: float | None, align_corners: bool) -> _Taps:
    """'bicubic' along one axis: each output mixes the 4 inputs around its source position
    (which, unlike the linear modes', is not clamped at 0), positions past an edge read the
    edge element."""
    step = _source_step(n_in, n_out, scale, align_corners)
    taps: _Taps = [([], []) for _ in range(4)]
    for i in range(n_out):
        src = step * i if align_corners else step * (i + 0.5) - 0.5
        first = math.floor(src)
        for k, (positions, weights) in enumerate(taps):
            positions.append(min(max(first - 1 + k, 0), n_in - 1))
            weights.append(_cubic(src - (first - 1 + k), _CUBIC_A))
    return taps


def _antialias_taps(
    n_in: int,
    n_out: int,
    scale: float | None,
    align_corners: bool,
    kernel: Callable[[float], float],
    reach: float,
) -> _Taps:
    """Antialiased resampling along one axis (PyTorch's, after PIL): output i is centred at
    input coordinate step * (i + 0.5) (pixel centres at j + 0.5); when downscaling the
    kernel (nonzero within `reach`) is stretched by step, so each output averages all the
    inputs it covers. The weights of the inputs in the window are normalised to sum to 1,
    and windows are cut at the edges. Tap k holds each output's k-th window element (weight
    0 past a shorter window's end)."""
    step = _source_step(n_in, n_out, scale, align_corners)
    stretch = max(step, 1.0)
    rows = []
    for i in range(n_out):
        centre = step * (i + 0.5)
        # int() truncates towards 0, as PyTorch's kernel; max() then clamps at 0.
        start = max(int(centre - reach * stretch + 0.5), 0)
        stop = min(int(centre + reach * stretch + 0.5), n_in)
        weights = [kernel((j + 0.5 - centre) / stretch) for j in range(start, stop)]
        total = sum(weights)
        rows.append((start, [w / total for w in weights] if total else weights))
    width = max(len(w) for _, w in rows)
    return [
        (
            [min(start + k, n_in - 1) for start, _ in rows],
            [w[k] if k < len(w) else 0.0 for _, w in rows],
        )
        for k in range(width)
    ]


def _gather(x: Tensor, positions: list[int], axis: int) -> Tensor:
    if positions == list(range(x.shape[axis])):
        return x
    return ops.take(x, ops.asarray(positions, dtype=ops.int64), axis=axis)


def _mix(x: Tensor, axis: int, taps: _Taps) -> Tensor:
    """The sum over taps of x gathered at the tap's positions along `axis`, each output
    position scaled by its weight; taps whose weights are all 0 are left out."""
    shape = (len(taps[0][0]),) + (1,) * (x.ndim - 1 - axis)
    terms = []
    for positions, weights in [tap for tap in taps if any(tap[1])] or taps[:1]:
        term = _gather(x, positions, axis)
        if any(w != 1.0 for w in weights):
            term = term * ops.reshape(ops.asarray(weights, dtype=x.dtype), shape)
        terms.append(term)
    out = terms[0]
    for term in terms[1:]:
        out = out + term
    return out


def _resample_axis(
    x: Tensor,
    axis: int,
    n_out: int,
    scale: float | None,
    mode: str,
    align_corners: bool,
    antialias: bool,
) -> Tensor:
    n_in = x.shape[axis]
    if mode in _NEAREST_MODES:
        exact = mode == "nearest-exact"
        shortcut = not exact and x.ndim == 4
        return _gather(x, _nearest_sources(n_in, n_out, scale, exact, shortcut), axis)
    if n_out == n_in and (antialias or mode != "bicubic"):
        # PyTorch's linear and antialiased kernels copy an axis whose length stays, whatever
        # scale_factor says (1.1 on a length of 3); its plain bicubic one resamples it.
        return x
    if antialias:
        kernel, reach = _ANTIALIAS_KERNELS[mode]
        return _mix(x, axis, _antialias_taps(n_in, n_out, scale, align_corners, kernel, reach))
    if mode == "bicubic":
        return _mix(x, axis, _cubic_taps(n_in, n_out, scale, align_corners))
    low, high, weights = _linear_sources(n_in, n_out, scale, align_corners)
    if not any(weights):
        return _gather(x, low, axis)
    shape = (n_out,) + (1,) * (x.ndim - 1 - axis)
    w = ops.reshape(ops.asarray(weights, dtype=x.dtype), shape)
    first = _gather(x, low, axis)
    return first + (_gather(x, high, axis) - first) * w


def _spatial(v, dim: int, what: str, x: Tensor) -> list:
    """`size` or `scale_factor` as one value per spatial axis, checked as PyTorch's."""
    if isinstance(v, (list, tuple)):
        if len(v) != dim:
            scale = what == "scale_factor"
            shape, letter, other = ("shape ", "s", what) if scale else ("", "o", "output")
            raise ValueError(
                f"Input and {other} must have the same number of spatial dimensions, but got "
                f"input with spatial dimensions of {list(x.shape[2:])} and {what} of "
                f"{shape}{tuple(v)}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                f"format and {what} in ({letter}1, {letter}2, ...,{letter}K) format."
            )
        return list(v)
    return [v] * dim


_ADAPTIVE_AVG_POOLS = {3: adaptive_avg_pool1d, 4: adaptive_avg_pool2d, 5: adaptive_avg_pool3d}


def _check_interpolation_mode(x: Tensor, mode: str, align_corners: bool, antialias: bool) -> None:
    """PyTorch's errors for a mode that does not take x's number of axes or these options."""
    if antialias and not (mode in ("bilinear", "bicubic", "lanczos") and x.ndim == 4):
        raise ValueError(
            "Anti-alias option is restricted to bilinear, bicubic, and lanczos modes and "
            "requires a 4-D tensor as input"
        )
    if mode in _LINEAR_MODES and x.ndim in (3, 4, 5) and x.ndim != _LINEAR_MODES[mode]:
        raise NotImplementedError(
            f"Got {x.ndim}D input, but {mode} mode needs {_LINEAR_MODES[mode]}D input"
        )
    if not (
        (mode in _NEAREST_MODES + ("area",) and x.ndim in (3, 4, 5))
        or _LINEAR_MODES.get(mode) == x.ndim
        or (mode in ("bicubic", "lanczos") and x.ndim == 4)
    ):
        raise NotImplementedError(
            f"Input Error: Only 3D, 4D and 5D input Tensors supported (got {x.ndim}D) for the "
            f"modes: {_ALL_MODES} (got {mode})"
        )
    if mode == "lanczos":
        if align_corners:
            raise ValueError("Lanczos mode does not support align_corners=True")
        if not antialias:
            raise ValueError("Lanczos mode requires antialias=True")


def interpolate(
    input: Tensor,  # noqa: A002
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Tensor:
    """x (N, C, *spatial) resampled to `size`, or to floor(spatial * scale_factor), over its
    1, 2 or 3 spatial axes, as PyTorch's interpolate. Modes: 'nearest' (PyTorch's legacy
    rule: source floor(i * in / out)), 'nearest-exact' (floor((i + 0.5) * in / out)),
    'linear', 'bilinear', 'trilinear' for 3-D, 4-D, 5-D input and 'bicubic' (Keys' cubic
    convolution, a = -0.75, edge elements repeated) for 4-D input (with `align_corners` the
    corner pixels' centres line up, else their outer edges do), and 'area' (adaptive
    average pooling to the output size) for 3-D, 4-D, 5-D input. A given scale_factor,
    unless `recompute_scale_factor` (or mode 'area'), sets the source positions (step
    1 / scale_factor), as in PyTorch. `antialias` (bilinear and bicubic, 4-D input) widens
    the kernel by the downscaling factor, so that every input counts (bicubic then uses
    a = -0.5, as PIL and PyTorch); 'lanczos' (4-D input, antialias=True and
    align_corners=False, as PyTorch requires) resamples with the 3-lobe Lanczos kernel,
    widened likewise."""
    x = as_tensor(input)
    if mode in _NEAREST_MODES + ("area",):
        if align_corners is not None:
            raise ValueError(
                "align_corners option can only be set with the interpolating modes: "
                "linear | bilinear | bicubic | trilinear"
            )
    elif align_corners is None:
        align_corners = False
    dim = x.ndim - 2
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is None and scale_factor is None:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if size is not None:
        sizes, scales = _spatial(size, dim, "output size", x), [None] * max(dim, 0)
    else:
        scales = _spatial(scale_factor, dim, "scale_factor", x)
        sizes = [math.floor(float(n) * s) for n, s in zip(x.shape[2:], scales, strict=True)]
        if recompute_scale_factor:
            scales = [None] * dim
    _check_interpolation_mode(x, mode, bool(align_corners), antialias)
    if mode == "area":
        return _ADAPTIVE_AVG_POOLS[x.ndim](x, sizes)
    if min(x.shape[2:]) <= 0 or min(sizes) <= 0:
        names = "DHW"[3 - dim :]
        given = ", ".join(f"{a}: {n}" for a, n in zip(names, x.shape[2:], strict=True))
        wanted = ", ".join(f"{a}: {n}" for a, n in zip(names, sizes, strict=True))
        joint = " and" if dim == 1 else ""
        raise RuntimeError(
            "Input and output sizes should be greater than 0, but got input "
            f"({given}){joint} output ({wanted})"
        )
    out = x
    for axis, (n_out, scale) in enumerate(zip(sizes, scales, strict=True), start=2):
        out = _resample_axis(out, axis, n_out, scale, mode, align_corners, antialias)
    # A new tensor always, as PyTorch's (every axis copied as it was: x itself, which a write
    # into the result would change)
    return out.clone() if out is x else out


def layer_norm(
    x: Tensor,
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise over the trailing axes `normalized_shape` to mean 0 and variance 1 (the
    biased variance, plus `eps`), then scale by `weight` and shift by `bias`."""
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if len(shape) > x.ndim or tuple(x.shape[x.ndim - len(shape) :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*, {', '.join(map(str, shape))}], but got input of size {list(x.shape)}"
        )
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    centred = x - ops.mean(x, axis=axes, keepdims=True)
    var = ops.mean(centred * centred, axis=axes, keepdims=True)
    out = centred / ops.sqrt(var + eps)
    if weight is not None:
        out = out * weight
    if bias is not None:
        out = out + bias
    return out


def rms_norm(
    input: Tensor,  # noqa: A002
    normalized_shape: int | Sequence[int],
    weight: Tensor | None = None,
    eps: float | None = None,
) -> Tensor:
    """x divided by the root mean square over its trailing axes `normalized_shape` (plus
    `eps` under the root; None: the machine epsilon of x's dtype, as PyTorch), then scaled
    by `weight` (of shape normalized_shape). No centring, no shift."""
    x = as_tensor(input)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    if len(shape) > x.ndim or tuple(x.shape[x.ndim - len(shape) :]) != shape:
        raise RuntimeError(
            f"Given normalized_shape={list(shape)}, expected input with shape "
            f"[*{', '.join(map(str, shape))}], but got input of size{list(x.shape)}"
        )
    if weight is not None and tuple(weight.shape) != shape:
        raise RuntimeError(
            f"Expected weight to be of same shape as normalized_shape, but got weight of shape "
            f"{list(weight.shape)} and normalized_shape = {list(shape)}"
        )
    if eps is None:
        eps = ops.finfo(x.dtype).eps
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    out = x / ops.sqrt(ops.mean(x * x, axis=axes, keepdims=True) + eps)
    return out if weight is None else out * weight


def local_response_norm(
    input: Tensor,  # noqa: A002
    size: int,
    alpha: float = 1e-4,
    beta: float = 0.75,
    k: float = 1.0,
) -> Tensor:
    """x (N, C, *) divided by (k + alpha mean of x^2 over a window of `size` neighbouring
    channels) ** beta, the window zero-padded at the channel ends (size // 2 channels
    before, (size - 1) // 2 after, the mean always over `size`), as PyTorch's."""
    x = as_tensor(input)
    if x.ndim < 3:
        raise ValueError(f"Expected 3D or higher dimensionality input (got {x.ndim} dimensions)")
    if x.size == 0:
        return x
    c = x.shape[1]
    squares = _pad_axis(x * x, 1, size // 2, (size - 1) // 2, 0.0)
    total = squares[:, :c]
    for i in range(1, size):
        total = total + squares[:, i : i + c]
    return x / (k + alpha * (total / size)) ** beta


def batch_norm(
    input: Tensor,  # noqa: A002
    running_mean: Tensor | None,
    running_var: Tensor | None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    training: bool = False,
    momentum: float | Tensor = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel (axis 1) of `input` (N, C, ...) to mean 0 and variance 1, then
    scale by `weight` and shift by `bias`. In training: by the batch's statistics (the
    biased variance), and the running statistics, when given, move towards the batch's
    (the unbiased variance) by `momentum` (a number, or a 0-d tensor), in place; else by the
    running statistics."""
    channels = input.shape[1] if input.ndim > 1 else None
    for name, stat in (("running_mean", running_mean), ("running_var", running_var)):
        if channels is not None and stat is not None and stat.size != channels:
            # PyTorch's words; a statistic of one element would broadcast silently
            raise RuntimeError(f"{name} should contain {channels} elements not {stat.size}")
    axes = (0,) + tuple(range(2, input.ndim))
    shape = (1, -1) + (1,) * (input.ndim - 2)
    if training:
        count = math.prod(input.shape[a] for a in axes)
        if count <= 1:
            raise ValueError(
                "Expected more than 1 value per channel when training, got input size "
                f"{tuple(input.shape)}"
            )
        mean = ops.mean(input, axis=axes)
        centred = input - ops.reshape(mean, shape)
        var = ops.mean(centred * centred, axis=axes)
        if running_mean is not None and running_var is not None:
            m = momentum
            keep, unbiased = 1 - m, m * count / (count - 1)
            if m.__class__ is Tensor:
                # Computed in float64 and rounded once to the statistics' dtype, as the
                # Python numbers are.
                dtype = running_mean.dtype
                keep, m, unbiased = (ops.astype(v, dtype) for v in (keep, m, unbiased))
            with no_grad():
                running_mean.mul_(keep).add_(mean.detach() * m)
                running_var.mul_(keep).add_(var.detach() * unbiased)
        out = centred / ops.sqrt(ops.reshape(var, shape) + eps)
    else:
        if running_mean is None or running_var is None:
            raise ValueError("batch_norm: running_mean and running_var are needed in eval")
        scale = 1.0 / ops.sqrt(running_var + eps)
        out = (input - ops.reshape(running_mean, shape)) * ops.reshape(scale, shape)
    if weight is not None:
        out = out * ops.reshape(weight, shape)
    if bias is not None:
        out = out + ops.reshape(bias, shape)
    return out


def _per_channel(v: Tensor, ndim: int) -> Tensor:
    """A (C,) vector shaped to multiply (N, C, ...) input of `ndim` axes along its channels."""
    return ops.reshape(v, (1, -1) + (1,) * (ndim - 2))


def _check_channel_vector(v: Tensor | None, name: str, x: Tensor) -> None:
    if v is not None and (v.ndim != 1 or v.shape[0] != x.shape[1]):
        raise RuntimeError(
            f"Expected {name} to be a vector of size equal to the number of channels in "
            f"input, but got {name} of shape {list(v.shape)} and input of shape {list(x.shape)}"
        )


def group_norm(
    input: Tensor,  # noqa: A002
    num_groups: int,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each sample of `input` (N, C, ...) per group of C / num_groups consecutive
    channels (with their spatial axes) to mean 0 and variance 1 (the biased variance, plus
    `eps`), then scale by `weight` (C,) and shift by `bias` (C,), per channel."""
    x = as_tensor(input)
    if x.ndim < 2:
        raise RuntimeError(f"Expected at least 2 dimensions for input tensor but received {x.ndim}")
    if x.shape[1] % num_groups:
        raise RuntimeError(
            "Expected number of channels in input to be divisible by num_groups, but got "
            f"input of shape {list(x.shape)} and num_groups={num_groups}"
        )
    _check_channel_vector(weight, "weight", x)
    _check_channel_vector(bias, "bias", x)
    grouped = ops.reshape(x, (x.shape[0], num_groups, -1))
    centred = grouped - ops.mean(grouped, axis=-1, keepdims=True)
    var = ops.mean(centred * centred, axis=-1, keepdims=True)
    out = ops.reshape(centred / ops.sqrt(var + eps), x.shape)
    if weight is not None:
        out = out * _per_channel(weight, x.ndim)
    if bias is not None:
        out = out + _per_channel(bias, x.ndim)
    return out


def instance_norm(
    input: Tensor,  # noqa: A002
    running_mean: Tensor | None = None,
    running_var: Tensor | None = None,
    weight: Tensor | None = None,
    bias: Tensor | None = None,
    use_input_stats: bool = True,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> Tensor:
    """Normalise each channel of each sample of `input` (N, C, ...) over its spatial axes to
    mean 0 and variance 1 (the biased variance, plus `eps`), then scale by `weight` and
    shift by `bias` (C,). With `use_input_stats` (the default) the statistics are the
    input's own, and the running statistics, when given, move by `momentum` towards their
    means over the batch (the unbiased variance), in place; else the running statistics
    normalise, as batch_norm's in eval mode."""
    x = as_tensor(input)
    axes = tuple(range(2, x.ndim))
    if not use_input_stats:
        return batch_norm(x, running_mean, running_var, weight, bias, False, momentum, eps)
    count = math.prod(x.shape[2:])
    if count <= 1:
        raise ValueError(
            f"Expected more than 1 spatial element when training, got input size {tuple(x.shape)}"
        )
    centred = x - ops.mean(x, axis=axes, keepdims=True)
    var = ops.mean(centred * centred, axis=axes, keepdims=True)
    if running_mean is not None and running_var is not None:
        # PyTorch's: the batch's mean of each sample's statistics, by momentum.
        with no_grad():
            mean_nc = ops.mean(x.detach(), axis=axes)
            var_nc = ops.reshape(var.detach(), mean_nc.shape) * (count / (count - 1))
            running_mean.mul_(1 - momentum).add_(ops.mean(mean_nc, axis=0) * momentum)
            running_var.mul_(1 - momentum).add_(ops.mean(var_nc, axis=0) * momentum)
    out = centred / ops.sqrt(var + eps)
    if weight is not None:
        out = out * _per_channel(weight, x.ndim)
    if bias is not None:
        out = out + _per_channel(bias, x.ndim)
    return out


def dropout(
    x: Tensor,
    p: float = 0.5,
    training: bool = True,
    inplace: bool = False,
    *,
    generator: _random.Generator | None = None,
) -> Tensor:
    """In training, zero each element with probability `p` (a new mask per call, from
    `generator` or the default one) and scale the kept ones by 1 / (1 - p); else x itself.
    With `inplace`, the result is written into x (with autograd's checks on in-place writes)
    and x returned."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        out = x * 0.0
    else:
        keep = _random.bernoulli(1.0 - p, x.shape, dtype=x.dtype, generator=generator)
        out = x * (keep * (1.0 / (1.0 - p)))
    if not inplace:
        return out
    x[...] = out
    return x


def _feature_dropout(
    x: Tensor, p: float, training: bool, inplace: bool, generator: _random.Generator | None
) -> Tensor:
    """Dropout of whole channels: x (N, C, *) times a mask of shape (N, C, 1, ...), each
    entry kept with probability 1 - p and scaled by 1 / (1 - p)."""
    if not training or p == 0.0:
        return x
    if x.ndim < 2:
        raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
    if p == 1.0:
        out = x * 0.0
    else:
        shape = tuple(x.shape[:2]) + (1,) * (x.ndim - 2)
        keep = _random.bernoulli(1.0 - p, shape, dtype=x.dtype, generator=generator)
        out = x * (keep * (1.0 / (1.0 - p)))
    if not inplace:
        return out
    x[...] = out
    return x


def _channel_dropout(
    x: Tensor,
    p: float,
    training: bool,
    inplace: bool,
    generator: _random.Generator | None,
    spatial: int,
) -> Tensor:
    """dropout1d / dropout2d / dropout3d (`spatial` axes after the channel's), with
    PyTorch's checks: 1d and 3d take unbatched input (C, *spatial) too; 2d treats 3-D input as
    (N, C, L) and warns, as PyTorch's does."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    name, expected = f"dropout{spatial}d", (spatial + 1, spatial + 2)
    inputs = f"{expected[0]}D or {expected[1]}D inputs"
    note = (
        f"Note that {name} exists to provide channel-wise dropout on inputs with {spatial} "
        f"spatial dimension{'s' if spatial > 1 else ''}, a channel dimension, and an optional "
        f"batch dimension (i.e. {inputs})."
    )
    if x.ndim not in expected:
        if spatial == 1:
            raise RuntimeError(
                f"{name}: Expected 2D or 3D input, but received a {x.ndim}D input. {note}"
            )
        warnings.warn(
            f"{name}: Received a {x.ndim}-D input to {name}, which is deprecated and will "
            "result in an error in a future release. To retain the behavior and silence this "
            f"warning, please use dropout instead. {note}",
            stacklevel=3,
        )
    if not training or p == 0.0:
        return x
    if spatial == 2:
        if x.ndim == 3:
            warnings.warn(
                "dropout2d: Received a 3D input to dropout2d and assuming that channel-wise 1D "
                "dropout behavior is desired - input is interpreted as shape (N, C, L), where "
                "C is the channel dim. This behavior will change in a future release to "
                "interpret the input as one without a batch dimension, i.e. shape (C, H, W). "
                "To maintain the 1D channel-wise dropout behavior, please switch to using "
                "dropout1d instead.",
                stacklevel=3,
            )
        return _feature_dropout(x, p, training, inplace, generator)
    if x.ndim == expected[1]:
        return _feature_dropout(x, p, training, inplace, generator)
    # Unbatched: one sample of C channels (its mask drawn as for a batch of one).
    out = _feature_dropout(ops.expand_dims(x, axis=0), p, training, False, generator)[0]
    if not inplace:
        return out
    x[...] = out
    return x


def dropout1d(
    input: Tensor,  # noqa: A002
    p: float = 0.5,
    training: bool = True,
    inplace: bool = False,
    *,
    generator: _random.Generator | None = None,
) -> Tensor:
    """In training, zero each channel of x (N, C, L) or (C, L), all of its L values, with
    probability `p`, and scale the kept ones by 1 / (1 - p); else x itself."""
    return _channel_dropout(input, p, training, inplace, generator, 1)


def dropout2d(
    input: Tensor,  # noqa: A002
    p: float = 0.5,
    training: bool = True,
    inplace: bool = False,
    *,
    generator: _random.Generator | None = None,
) -> Tensor:
    """In training, zero each channel of x (N, C, H, W), all of its H W values, with
    probability `p`, and scale the kept ones by 1 / (1 - p); else x itself. As PyTorch's,
    3-D input is taken as (N, C, L), and other than 3-D or 4-D input warns."""
    return _channel_dropout(input, p, training, inplace, generator, 2)


def dropout3d(
    input: Tensor,  # noqa: A002
    p: float = 0.5,
    training: bool = True,
    inplace: bool = False,
    *,
    generator: _random.Generator | None = None,
) -> Tensor:
    """In training, zero each channel of x (N, C, D, H, W) or (C, D, H, W), all of its
    values, with probability `p`, and scale the kept ones by 1 / (1 - p); else x itself."""
    return _channel_dropout(input, p, training, inplace, generator, 3)


def _renorm_rows(weight: Tensor, indices: Tensor, max_norm: float, norm_type: float) -> None:
    """PyTorch's embedding_renorm_: each row of weight that indices look up, of norm_type
    norm above max_norm, scaled in place (no gradient) by max_norm / (norm + 1e-7). One
    write of the whole table (every backend can make it; the other rows are scaled by
    exactly 1)."""
    with no_grad():
        looked_up = ops.isin(ops.arange(weight.shape[0], dtype=indices.dtype), indices)
        norms = linalg.vector_norm(weight, ord=norm_type, axis=-1, keepdims=True)
        over = ops.expand_dims(looked_up, axis=-1) & (norms > max_norm)
        weight[...] = weight * ops.where(over, max_norm / (norms + 1e-7), ops.ones_like(norms))


class _LookupGradient(Function):
    """Rows looked up, unchanged, whose gradient is multiplied by `scale` (one factor per row,
    shape (n, 1): 1 / its index's count for scale_grad_by_freq, 0 at padding_idx), by design
    not the derivative, as PyTorch's. Forward mode keeps the derivative (the tangent
    unchanged), as PyTorch's embedding does; a composite could not, its JVP being its VJP's
    transpose."""

    @staticmethod
    def forward(ctx: FunctionCtx, rows: Tensor, scale: Tensor) -> Tensor:
        ctx.save_for_backward(scale)
        return rows.clone()  # the values exactly (-0.0, inf, NaN included)

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> tuple:
        (scale,) = ctx.saved_tensors
        return _ScaledGradient.apply(g, scale), None

    @staticmethod
    def jvp(ctx: FunctionCtx, t: Tensor, _: Tensor | None) -> Tensor:
        return t


class _ScaledGradient(Function):
    """_LookupGradient's backward: g * scale (0 where scale is, even where g is inf or NaN).
    Its own gradient only zeroes the padding rows, unscaled by the counts, as PyTorch's double
    backward of embedding: the scaling then enters a second derivative once, so a Hessian by
    reverse over reverse is the derivative of the (scaled) gradient, as by forward over
    reverse; the forward mode is g's scaled, the map being linear."""

    @staticmethod
    def forward(ctx: FunctionCtx, g: Tensor, scale: Tensor) -> Tensor:
        ctx.save_for_backward(scale)
        ctx.save_for_forward(scale)
        return ops.where(scale == 0, 0.0, g * scale)

    @staticmethod
    def backward(ctx: FunctionCtx, v: Tensor) -> tuple:
        (scale,) = ctx.saved_tensors
        return ops.where(scale == 0, 0.0, v), None

    @staticmethod
    def jvp(ctx: FunctionCtx, t: Tensor, _: Tensor | None) -> Tensor:
        (scale,) = ctx.saved_tensors
        return ops.where(scale == 0, 0.0, t * scale)


def _frequency_scale(indices: Tensor, dtype: DTypeLike) -> Tensor:
    """1 / how often each of the 1-D `indices` occurs in them, shape (n, 1): the length of its
    run in the sorted indices (found by searching, which vmap runs per sample)."""
    ordered = ops.sort(indices)
    ends = ops.searchsorted(ordered, indices, side="right")
    counts = ends - ops.searchsorted(ordered, indices, side="left")
    return ops.expand_dims(1 / ops.astype(counts, dtype), axis=-1)


def embedding(
    indices: Tensor,
    weight: Tensor,
    padding_idx: int | None = None,
    max_norm: float | None = None,
    norm_type: float = 2.0,
    scale_grad_by_freq: bool = False,
    sparse: bool = False,
) -> Tensor:
    """weight[indices], of shape indices.shape + (embedding_dim,). As PyTorch's: the lookups
    of padding_idx send no gradient to its row; with max_norm, the rows looked up whose
    norm_type norm exceeds it are first scaled down to it, in place in weight; with
    scale_grad_by_freq, each row's gradient is divided by how often its index occurs in
    `indices`. sparse=True (a sparse gradient) is not implemented."""
    if sparse:
        raise NotImplementedError("embedding: sparse=True (a sparse gradient) is not implemented")
    indices = ops.asarray(indices)
    if not ops.isdtype(indices.dtype, "integral"):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {indices.dtype} instead"
        )
    # A negative index is out of range (PyTorch's IndexError), not a row from the end: it is
    # sent past the last row, where the gather fails on the libraries that check bounds.
    flat_indices = ops.reshape(indices, (-1,))
    flat_indices = ops.where(flat_indices < 0, weight.shape[0], flat_indices)
    if max_norm is not None:
        _renorm_rows(weight, flat_indices, max_norm, norm_type)
    flat = ops.take(weight, flat_indices, axis=0)
    if padding_idx is not None and padding_idx < 0:
        padding_idx += weight.shape[0]
    if scale_grad_by_freq or (padding_idx is not None and grad_mode.forward):
        scale = ops.ones((flat.shape[0], 1), dtype=flat.dtype)
        if scale_grad_by_freq:
            scale = _frequency_scale(flat_indices, flat.dtype)
        if padding_idx is not None:
            scale = ops.where(ops.expand_dims(flat_indices == padding_idx, axis=-1), 0.0, scale)
        flat = _LookupGradient.apply(flat, scale)
    elif padding_idx is not None:
        # Without forward mode (which keeps the derivative at a padding row, as PyTorch's,
        # where this composite gives a zero tangent) the padding rows detached give the same
        # gradients to every order, and chainrule.compile replays it (not a Function).
        padding = ops.expand_dims(flat_indices == padding_idx, axis=-1)
        flat = ops.where(padding, flat.detach(), flat)
    return ops.reshape(flat, indices.shape + (weight.shape[-1],))


def _bag_bounds(
    indices: Tensor, offsets: Tensor | None, include_last_offset: bool
) -> tuple[Tensor, list[int], list[int]]:
    """The indices flattened, and each bag's [start, end) in them, from a 2-D input (a bag
    per row) or a 1-D one and its offsets, with PyTorch's checks of the offsets' values."""
    if indices.ndim == 2:
        if offsets is not None:
            raise ValueError(
                "if input is 2D, then offsets has to be None, as input is treated is a "
                "mini-batch of fixed length sequences. However, found offsets of type "
                f"{type(offsets)}"
            )
        bags, length = indices.shape
        starts = [b * length for b in range(bags)]
        return ops.reshape(indices, (-1,)), starts, [s + length for s in starts]
    if indices.ndim != 1:
        raise ValueError(
            f"input has to be 1D or 2D Tensor, but got Tensor of dimension {indices.ndim}"
        )
    if offsets is None:
        raise ValueError("offsets has to be a 1D Tensor but got None")
    if offsets.ndim != 1:
        raise ValueError("offsets has to be a 1D Tensor")
    cuts = [int(v) for v in offsets.tolist()]
    n = indices.shape[0]
    if cuts and cuts[0] != 0:
        raise RuntimeError(
            "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start "
            f"from position 0. However, got {cuts[0]}"
        )
    if cuts and cuts[-1] > n:
        raise RuntimeError(
            f"offsets[-1] can not be greater than input's length {n} but got offsets[-1] of "
            f"{cuts[-1]}"
        )
    if any(a > b for a, b in zip(cuts, cuts[1:])):
        raise RuntimeError(f"embedding_bag: offsets must be non-decreasing, got {cuts}")
    ends = cuts[1:] if include_last_offset else cuts[1:] + [n]
    return indices, cuts[: len(ends)], ends


def embedding_bag(
    input: Tensor,  # noqa: A002
    weight: Tensor,
    offsets: Tensor | None = None,
    max_norm: float | None = None,
    norm_type: float = 2,
    scale_grad_by_freq: bool = False,
    mode: Literal["sum", "mean", "max"] = "mean",
    sparse: bool = False,
    per_sample_weights: Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> Tensor:
    """The sums, means or maxima of bags of rows of `weight` (num_embeddings, dim), without
    the rows' intermediate (B, L, dim) lookup tensor of embedding: output (B, dim). The bags
    are the rows of a 2-D `input`, or, for a 1-D one, its runs that start at `offsets` (the
    last one running to the end, or, with include_last_offset, ending at offsets[-1]). As
    PyTorch's: an empty bag gives zeros; entries equal to `padding_idx` are left out of
    their bag (not counted by the mean, no gradient); `per_sample_weights` (input's shape,
    mode "sum" only) scale each row; max_norm renormalises the rows looked up, in place;
    mode "max" sends the gradient to each bag's first maximum; scale_grad_by_freq (modes
    "sum" and "mean") divides each row's gradient by how often it occurs in the input. The
    offsets and the indices' range are read (a device-to-host copy), so chainrule.compile
    runs it eagerly.

    A deliberate difference: with include_last_offset and offsets[-1] short of the input's
    length, the last bag ends at offsets[-1] in every mode (PyTorch 2.13's CPU kernel stops
    its sum there, but its mean divides by the count to the input's end and its max reads
    to the end). Another: with scale_grad_by_freq, each row's gradient is divided by its own
    count (PyTorch 2.13's CPU kernel divides some rows' by another row's count; its
    embedding divides as here)."""
    if sparse:
        raise NotImplementedError(
            "embedding_bag: sparse=True (a sparse gradient) is not implemented"
        )
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if scale_grad_by_freq and mode == "max":
        raise ValueError("max mode does not support scaling the gradient by the frequency")
    indices, weight = ops.asarray(input), as_tensor(weight)
    # PyTorch takes real floating weights only; complex ones are taken where the bags are
    # linear in them (sum, mean), not by "max" (no order)
    if not ops.isdtype(weight.dtype, "real floating") and (
        mode == "max" or not ops.isdtype(weight.dtype, "complex floating")
    ):
        name = TORCH_DTYPE_NAMES.get(weight.dtype, weight.dtype)
        got = f"CPU{name}Type" if weight.dtype.kind == "c" else f"torch.{name}Tensor"
        raise RuntimeError(
            "Expected tensor for argument #1 'weight' to have one of the following scalar types: "
            f"Half, BFloat16, Float, Double; but got {got} instead (while checking arguments "
            "for embedding_bag)"
        )
    if not ops.isdtype(indices.dtype, "integral"):
        raise RuntimeError(
            "Expected tensor for argument #1 'indices' to have one of the following scalar "
            f"types: Long, Int; but got {indices.dtype} instead (while checking arguments for "
            "embedding_bag)"
        )
    if per_sample_weights is not None:
        if mode != "sum":
            raise NotImplementedError(
                "embedding_bag: per_sample_weights was not None. per_sample_weights is only "
                f"supported for mode='sum' (got mode='{mode}'). Please open a feature request "
                "on GitHub."
            )
        if tuple(per_sample_weights.shape) != tuple(indices.shape):
            raise ValueError(
                f"embedding_bag: If per_sample_weights ({list(per_sample_weights.shape)}) is not "
                f"None, then it must have the same shape as the input ({list(indices.shape)})"
            )
        per_sample_weights = ops.reshape(per_sample_weights, (-1,))
    rows = weight.shape[0]
    if padding_idx is not None:
        if not -rows <= padding_idx < rows:
            raise RuntimeError(
                f"padding_idx must be within the number of embeddings, {-rows} through "
                f"{rows - 1}, but got {padding_idx}"
            )
        padding_idx %= rows
    if grad_mode.extended and grad_mode.tracer is not None:
        # the bags' bounds and the indices' range are read: chainrule.compile runs it eagerly
        grad_mode.tracer.unsupported("F.embedding_bag (it reads the offsets and indices)")
    flat, starts, ends = _bag_bounds(indices, offsets, include_last_offset)
    n = flat.shape[0]
    if n:
        every = _every_value(flat)  # inside vmap: every sample's
        low, high = ops.min(every).item(), ops.max(every).item()
        if low < 0 or high >= rows:
            raise RuntimeError(
                f"Index of input takes value {low if low < 0 else high} which is not in the "
                f"valid range [0, {rows})"
            )
    if max_norm is not None:
        _renorm_rows(weight, flat, max_norm, norm_type)
    # member[b, j]: entry j of the flat input belongs to bag b (and is not padding)
    position = ops.arange(n, dtype=flat.dtype)
    first = ops.reshape(ops.asarray(starts, dtype=flat.dtype), (-1, 1))
    last = ops.reshape(ops.asarray(ends, dtype=flat.dtype), (-1, 1))
    member = (position >= first) & (position < last)
    if padding_idx is not None:
        member = member & (flat != padding_idx)
    looked_up = ops.take(weight, flat, axis=0)
    if scale_grad_by_freq:
        looked_up = _LookupGradient.apply(looked_up, _frequency_scale(flat, weight.dtype))
    if mode == "max":
        if not n:
            return ops.zeros((len(starts), weight.shape[1]), dtype=weight.dtype)
        candidates = ops.where(ops.expand_dims(member, axis=-1), looked_up, -math.inf)
        top = ops.argmax(candidates, axis=1, keepdims=True)
        out = ops.squeeze(ops.take_along_axis(candidates, top, axis=1), axis=1)
        filled = ops.any(member, axis=1, keepdims=True)
        return ops.where(filled, out, ops.zeros_like(out))
    coefficients = ops.astype(member, weight.dtype)
    if per_sample_weights is not None:
        coefficients = coefficients * per_sample_weights
    out = ops.matmul(coefficients, looked_up)
    if mode == "mean":
        # real counts (maximum takes no complex values), of the weight's precision
        counts = ops.sum(ops.astype(member, ops.finfo(weight.dtype).dtype), axis=1, keepdims=True)
        out = out / ops.maximum(counts, ops.ones_like(counts))
    return out


def one_hot(x: Tensor, /, num_classes: int = -1) -> Tensor:
    """Integer class labels as one-hot vectors on a new last axis (int64), of length
    `num_classes` (-1: the largest label plus one)."""
    x = as_tensor(x)
    if ops.isdtype(x.dtype, "real floating") or x.dtype == ops.bool:
        raise TypeError("one_hot is only applicable to index tensor of integer dtype")
    if grad_mode.extended and grad_mode.tracer is not None:
        # The labels' values are checked (and give the length): chainrule.compile runs the
        # function eagerly.
        grad_mode.tracer.unsupported("F.one_hot (it checks the labels' values)")
    if x.size and ops.min(x).item() < 0:
        raise RuntimeError("Class values must be non-negative.")
    largest = ops.max(x).item() if x.size else -1
    if num_classes == -1:
        num_classes = largest + 1
    elif largest >= num_classes:
        raise RuntimeError("Class values must be smaller than num_classes.")
    classes = ops.arange(num_classes, dtype=x.dtype)
    return ops.astype(ops.expand_dims(x, axis=-1) == classes, ops.int64)


# ----------------------------------------------------------------------------- losses


def _reduce(loss: Tensor, reduction: str) -> Tensor:
    if reduction == "mean":
        return ops.mean(loss)
    if reduction == "sum":
        return ops.sum(loss)
    if reduction == "none":
        return loss
    raise ValueError(f"{reduction} is not a valid value for reduction")


def _legacy_reduction(size_average: bool | None, reduce: bool | None, reduction: str) -> str:
    """`reduction` from PyTorch's deprecated `size_average` and `reduce` where either is given
    (None stands for True): both true is 'mean', only `reduce` 'sum', `reduce` false 'none';
    with a warning naming the reduction to pass instead. A string there (the reduction passed
    positionally into their place) is refused, not read as true (PyTorch's 'mean')."""
    if size_average is None and reduce is None:
        return reduction
    for name, value in (("size_average", size_average), ("reduce", reduce)):
        if isinstance(value, str):
            raise TypeError(
                f"{name} is a deprecated flag (True, False or None), not a reduction: pass "
                f"reduction={value!r} by keyword"
            )
    if reduce is None or reduce:
        chosen = "mean" if size_average is None or size_average else "sum"
    else:
        chosen = "none"
    warnings.warn(
        f"size_average and reduce are deprecated and will be removed; use reduction='{chosen}'.",
        UserWarning,
        stacklevel=3,
    )
    return chosen


def _check_target_size(input: Tensor, target: Tensor) -> None:  # noqa: A002
    """PyTorch's warning for a target broadcast against the input of a pointwise loss."""
    shape = tuple(as_tensor(target).shape)
    if shape != tuple(input.shape):
        warnings.warn(
            f"Using a target size ({shape}) that is different to the input size "
            f"({tuple(input.shape)}). This will likely lead to incorrect results due to "
            "broadcasting. Please ensure they have the same size.",
            UserWarning,
            stacklevel=3,
        )


def _reduce_weighted(
    loss: Tensor,
    input: Tensor,  # noqa: A002
    weight: Tensor | None,
    reduction: str,
    by_weight: bool,
) -> Tensor:
    """A pointwise loss times `weight` (of the input's shape, as PyTorch requires), reduced;
    'mean' divides by the sum of the weights where `by_weight` (PyTorch's mse_loss and
    l1_loss), by the number of elements otherwise (its huber_loss)."""
    if weight is None:
        return _reduce(loss, reduction)
    weight = as_tensor(weight)
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(
            f"Invalid reduction mode: {reduction}. Expected one of 'none', 'mean', 'sum'."
        )
    loss = loss * weight
    if reduction == "mean" and by_weight:
        return ops.sum(loss) / ops.sum(weight)
    return _reduce(loss, reduction)


def mse_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """The squared differences, reduced by `reduction` ('mean', 'sum' or 'none'); with
    `weight` (of the input's shape) each is weighted, and 'mean' divides by the weights'
    sum, as PyTorch. `size_average` and `reduce` are PyTorch's deprecated flags (mapped to a
    reduction with a warning), as in every loss that PyTorch gives them."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_target_size(input, target)
    diff = input - target
    return _reduce_weighted(diff * diff, input, weight, reduction, True)


def _pick_class(
    logp: Tensor, target: Tensor, ignore_index: int = -100
) -> tuple[Tensor, Tensor | None]:
    """logp[n, target[n], ...]: the entries of the target classes (class axis 1); and, where
    some label is `ignore_index`, the mask of the others (else None: every label counts)."""
    target = as_tensor(target)
    if not ops.isdtype(target.dtype, "integral"):
        raise RuntimeError(
            f"expected target dtype to be an integer dtype (class indices), but got "
            f"{target.dtype}; class probabilities are a floating target of the input's shape"
        )
    n_classes = logp.shape[1]
    valid = None
    if target.size and grad_mode.extended and grad_mode.tracer is not None:
        return _pick_class_traced(logp, target, ignore_index)
    if target.size:
        labels = target
        if target._data.__class__ is Batched:  # inside vmap: every sample's labels
            labels = as_tensor(every_sample(target._data))
        low, high = ops.min(labels).item(), ops.max(labels).item()
        if ignore_index >= 0 or low == ignore_index or high == ignore_index:
            valid = target != ignore_index
            target = ops.where(valid, target, 0)
            kept = ops.where(labels != ignore_index, labels, 0)
            low, high = ops.min(kept).item(), ops.max(kept).item()
        if low < 0 or high >= n_classes:
            raise IndexError(f"Target {low if low < 0 else high} is out of bounds.")
    picked = ops.take_along_axis(logp, ops.expand_dims(target, axis=1), axis=1)
    return ops.squeeze(picked, axis=1), valid


def _pick_class_traced(logp: Tensor, target: Tensor, ignore_index: int) -> tuple[Tensor, Tensor]:
    """_pick_class while chainrule.compile traces: the labels' values are not known to Python
    (a replay runs on other labels), so nothing branches on them. Every label is masked by
    `ignore_index` (the same values as the unmasked path when none is ignored), and a label
    out of bounds is sent past the last class, so that the gather itself fails on it at every
    call where the library checks bounds (NumPy's IndexError); where it does not (PyTorch's
    take_along_dim, JAX, Dask), that label's loss is NaN, never another class's."""
    n_classes = logp.shape[1]
    valid = target != ignore_index
    kept = ops.where(valid, target, 0)
    outside = (kept < 0) | (kept >= n_classes)
    index = ops.where(outside, n_classes, kept)
    picked = ops.take_along_axis(logp, ops.expand_dims(index, axis=1), axis=1)
    picked = ops.where(ops.expand_dims(outside, axis=1), math.nan, picked)
    return ops.squeeze(picked, axis=1), valid


def _check_class_indices(input: Tensor, target: Tensor) -> None:  # noqa: A002
    """Class indices `target` of the shape input (N, C, d1, ...) or (C,) asks for, in PyTorch's
    words (N,) or (N, d1, ...), or 0-d; the dtype is _pick_class's to check."""
    shape, want = tuple(target.shape), tuple(input.shape)
    if input.ndim == 1:
        if target.size != 1 or target.ndim > 1:
            raise ValueError(
                f"For 1D input, 1D target must have size 1, but got target size: {target.size}"
            )
        return
    if input.ndim == 2 and target.ndim != 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if target.ndim >= 1 and shape[0] != want[0]:
        raise ValueError(
            f"Expected input batch_size ({want[0]}) to match target batch_size ({shape[0]})."
        )
    if shape != want[:1] + want[2:]:
        expected = list(want[:1] + want[2:])
        raise RuntimeError(f"Expected target size {expected}, got {list(shape)}")


def _batched(input: Tensor, target: Tensor) -> tuple[Tensor, Tensor, bool]:  # noqa: A002
    """A single sample (C,) with its target (a 0-d label, or (C,) probabilities) as a batch
    of one."""
    if input.ndim == 1:
        target = as_tensor(target)
        return ops.expand_dims(input, axis=0), ops.reshape(target, (1,) + target.shape), True
    return input, target, False


def _class_weights(logp: Tensor, weight: Tensor | None) -> Tensor | None:
    """`weight` (C,) shaped to multiply logp (N, C, ...) along the class axis."""
    if weight is None:
        return None
    if weight.shape != (logp.shape[1],):
        raise RuntimeError(
            f"weight tensor should be defined either for all {logp.shape[1]} classes or no "
            "classes but got weight tensor of shape: " + str(list(weight.shape))
        )
    return ops.reshape(weight, (1, -1) + (1,) * (logp.ndim - 2))


def _weighted_nll(
    logp: Tensor,
    target: Tensor,
    weight: Tensor | None,
    ignore_index: int,
    reduction: str,
    label_smoothing: float = 0.0,
) -> Tensor:
    """The cross-entropy of integer labels under log-probabilities logp (N, C, ...), as
    PyTorch: each sample weighted by its class's weight, ignored labels weighing 0, a
    'mean' divided by the total weight (the count of labels, unweighted); with label
    smoothing e, (1 - e) of it plus e times the mean over classes of the weighted terms."""
    picked, valid = _pick_class(logp, target, ignore_index)
    w = _class_weights(logp, weight)
    loss = -picked
    sample_weight = None
    if weight is not None:
        sample_weight = ops.take(weight, ops.reshape(_labels_kept(target, valid), (-1,)))
        sample_weight = ops.reshape(sample_weight, loss.shape)
    if valid is not None:
        mask = ops.astype(valid, loss.dtype)
        sample_weight = mask if sample_weight is None else sample_weight * mask
    if sample_weight is not None:
        loss = loss * sample_weight
    if label_smoothing:
        terms = logp if w is None else logp * w
        smooth = -ops.sum(terms, axis=1) / logp.shape[1]
        if valid is not None:
            smooth = smooth * mask
        loss = (1.0 - label_smoothing) * loss + label_smoothing * smooth
    if reduction == "mean" and sample_weight is not None:
        # Every label ignored (total weight 0): NaN, as PyTorch, but a gradient of 0, not
        # the 0 / 0 a plain division would send back.
        total = ops.sum(sample_weight)
        nothing = total == 0
        return ops.where(nothing, math.nan, ops.sum(loss) / ops.where(nothing, 1.0, total))
    return _reduce(loss, reduction)


def _labels_kept(target: Tensor, valid: Tensor | None) -> Tensor:
    target = as_tensor(target)
    return target if valid is None else ops.where(valid, target, 0)


def nll_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
) -> Tensor:
    """The negative log-likelihood of integer class labels `target` (N, ...) under
    log-probabilities `input` (N, C, ...) or (C,); `weight` per class, labels equal to
    `ignore_index` left out (as PyTorch, a 'mean' is divided by the total weight)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_class_indices(input, as_tensor(target))
    logp, labels, single = _batched(input, target)
    loss = _weighted_nll(logp, labels, weight, ignore_index, reduction)
    return loss[0] if single and reduction == "none" else loss


def cross_entropy(
    input: Tensor,  # noqa: A002
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    ignore_index: int = -100,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross-entropy between logits `input` (N, C, ...) or (C,) and `target`: integer class
    labels (N, ...), or class probabilities of input's shape. With `label_smoothing` e the
    target is mixed with the uniform one: (1 - e) target + e / C. `weight` per class;
    labels equal to `ignore_index` left out. Computed with log_softmax: finite for any
    finite logits."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    # As PyTorch: a target of the input's shape holds class probabilities, any other class
    # indices.
    target = as_tensor(target)
    if tuple(target.shape) == tuple(input.shape):
        if not ops.isdtype(target.dtype, "real floating"):
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, "
                f"got {target.dtype}"
            )
        if ignore_index != -100:
            raise RuntimeError("ignore_index is not supported for floating point target")
    elif not ops.isdtype(target.dtype, "integral"):
        raise RuntimeError(
            f"expected target dtype to be an integer dtype (class indices), but got "
            f"{target.dtype}; class probabilities are a floating target of the input's shape"
        )
    else:
        _check_class_indices(input, target)
    logits, labels, single = _batched(input, target)
    logp = log_softmax(logits, axis=1)
    labels = as_tensor(labels)
    if ops.isdtype(labels.dtype, "real floating"):  # probabilities (checked above)
        if label_smoothing:
            labels = (1.0 - label_smoothing) * labels + label_smoothing / logp.shape[1]
        w = _class_weights(logp, weight)
        terms = labels * logp if w is None else labels * logp * w
        loss = _reduce(-ops.sum(terms, axis=1), reduction)
    else:
        loss = _weighted_nll(logp, labels, weight, ignore_index, reduction, label_smoothing)
    return loss[0] if single and reduction == "none" else loss


def binary_cross_entropy_with_logits(
    input: Tensor,  # noqa: A002
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
    pos_weight: Tensor | None = None,
) -> Tensor:
    """Binary cross-entropy of targets in [0, 1] under probabilities sigmoid(input), as
    log(1 + exp(x)) - x t: finite and exact for logits of any size.
    `pos_weight` scales the positive term (per class, broadcast), `weight` each element."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if tuple(as_tensor(target).shape) != tuple(input.shape):
        raise ValueError(
            f"Target size ({tuple(as_tensor(target).shape)}) must be the same as input size "
            f"({tuple(input.shape)})"
        )
    if pos_weight is None:
        loss = ops.logaddexp(input, 0.0) - input * target
    else:
        loss = (1.0 - target) * input + (1.0 + (pos_weight - 1.0) * target) * ops.logaddexp(
            -input, 0.0
        )
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def _check_probabilities(p: Tensor) -> None:
    """PyTorch's check that binary_cross_entropy's input lies in [0, 1] (outside, its log
    terms are NaN); skipped while chainrule.compile traces, where the values are not known
    to Python, and on a lazy library (Dask), where reading them would compute the input's
    whole graph once more than the loss does (there a bad input shows as a NaN loss)."""
    if not p.size or (grad_mode.extended and grad_mode.tracer is not None):
        return
    if _backend.is_lazy(p._data):
        return
    values = as_tensor(every_sample(p._data)) if p._data.__class__ is Batched else p
    if not ops.all((values >= 0) & (values <= 1)).item():
        raise RuntimeError("all elements of input should be between 0 and 1")


def binary_cross_entropy(
    input: Tensor,  # noqa: A002
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
) -> Tensor:
    """Binary cross-entropy of targets in [0, 1] under probabilities `input` in [0, 1]:
    -(t log(p) + (1 - t) log(1 - p)), each log clamped at -100, with PyTorch's gradient
    (p - t) / max(p (1 - p), 1e-12) in p: finite at 0 and 1. Prefer
    binary_cross_entropy_with_logits on logits."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if input.shape != as_tensor(target).shape:
        raise ValueError(
            f"Using a target size ({as_tensor(target).shape}) that is different to the input "
            f"size ({input.shape}) is deprecated. Please ensure they have the same size."
        )
    _check_probabilities(input)
    loss = OPS["binary_cross_entropy"](input, as_tensor(target))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss, reduction)


def l1_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
    weight: Tensor | None = None,
) -> Tensor:
    """The absolute differences, reduced by `reduction`; with `weight` (of the input's shape)
    each is weighted, and 'mean' divides by the weights' sum, as PyTorch."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_target_size(input, target)
    return _reduce_weighted(ops.abs(input - target), input, weight, reduction, True)


def smooth_l1_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
    beta: float = 1.0,
) -> Tensor:
    """0.5 d^2 / beta where |d| < beta, else |d| - 0.5 beta (d = input - target): quadratic
    near 0, linear beyond; beta = 0 is the L1 loss."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _check_target_size(input, target)
    diff = input - target
    d = ops.abs(diff)
    if beta == 0:
        return _reduce(d, reduction)
    # The square of diff, not of d: abs's kink at 0 would make the second derivative 0 there.
    return _reduce(ops.where(d < beta, (0.5 / beta) * diff * diff, d - 0.5 * beta), reduction)


def huber_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    reduction: Reduction = "mean",
    delta: float = 1.0,
    weight: Tensor | None = None,
) -> Tensor:
    """0.5 d^2 where |d| < delta, else delta (|d| - 0.5 delta): smooth_l1_loss times delta
    (with beta = delta); with `weight` (of the input's shape) each is weighted, and 'mean'
    is the weighted losses' mean, as PyTorch."""
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _check_target_size(input, target)
    diff = input - target
    d = ops.abs(diff)  # squared as diff (see smooth_l1_loss)
    loss = ops.where(d < delta, 0.5 * diff * diff, delta * (d - 0.5 * delta))
    return _reduce_weighted(loss, input, weight, reduction, False)


def kl_div(
    input: Tensor,  # noqa: A002
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: Literal["none", "mean", "sum", "batchmean"] = "mean",
    log_target: bool = False,
) -> Tensor:
    """The Kullback-Leibler divergence of `target` from log-probabilities `input`, pointwise
    t (log t - input) (0 where t = 0; NaN where t < 0, as PyTorch's), or exp(t) (t - input)
    with `log_target`. 'batchmean' divides the sum by the batch size (the divergence proper);
    'mean' divides by the number of elements, as PyTorch."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    target = as_tensor(target)
    if log_target:
        loss = ops.exp(target) * (target - input)
    else:
        zero = target == 0
        log_t = ops.log(ops.where(zero, 1.0, target))
        loss = target * (log_t - input)
        if target.requires_grad or dual(target):
            # The t-derivative log t + 1 - input is -inf at t = 0 (the slope of t log t
            # there), which the `where` above drops (it gave -input): add a term of value 0
            # whose derivative is -inf where t = 0 and 0 elsewhere (PyTorch's is 0 / 0, NaN).
            r = ops.sqrt(ops.where(zero, target, 1.0))
            loss = loss + (r.detach() - r)
    if reduction == "batchmean":
        return ops.sum(loss) / (input.shape[0] if input.ndim else 1)
    return _reduce(loss, reduction)


def _check_reduction(
    reduction: str, message: str = "{} is not a valid value for reduction"
) -> None:
    """PyTorch's check of `reduction`, made before the loss is computed."""
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(message.format(reduction))


def _values_known(x: Tensor) -> bool:
    """Whether a check may read x's values: not while chainrule.compile traces (a replay runs
    on other values) and not on a lazy library (Dask: it would compute x's graph once more);
    there a bad value shows in the loss instead."""
    if grad_mode.extended and grad_mode.tracer is not None:
        return False
    return not _backend.is_lazy(x._data)


def _every_value(x: Tensor) -> Tensor:
    """x, or inside vmap every sample's values (for a check of them)."""
    return as_tensor(every_sample(x._data)) if x._data.__class__ is Batched else x


def _check_long_target(target: Tensor) -> None:
    if not ops.isdtype(target.dtype, "integral"):
        raise RuntimeError(f"expected scalar type Long but found {target.dtype}")


def poisson_nll_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    log_input: bool = True,
    full: bool = False,
    size_average: bool | None = None,
    eps: float = 1e-8,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
) -> Tensor:
    """The negative log-likelihood of counts `target` under Poisson distributions of rate
    exp(input) (`log_input`, pointwise exp(input) - target input) or of rate input
    (input - target log(input + eps)), less log(target!). With `full`, Stirling's
    approximation of log(target!), t log t - t + log(2 pi t) / 2, is added where t > 1 (0
    elsewhere); as PyTorch. Its target-derivative where t <= 1 is that of 0: 0 (PyTorch's is
    NaN at t = 0)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    target = as_tensor(target)
    if log_input:
        loss = ops.exp(input) - target * input
    else:
        loss = input - target * ops.log(input + eps)
    if full:
        counted = target > 1
        # The term's logs read 1 where it is not used: finite values and derivatives.
        t = ops.where(counted, target, 1.0)
        stirling = t * ops.log(t) - t + 0.5 * ops.log((2 * math.pi) * t)
        loss = loss + ops.where(counted, stirling, 0.0)
    return _reduce(loss, reduction)


def _gaussian_var(input: Tensor, var: Tensor | float) -> Tensor:  # noqa: A002
    """`var` checked and shaped as PyTorch's gaussian_nll_loss: non-negative; of the input's
    shape, or of its shape less the last axis (one variance per vector), or of its shape
    with one axis of size 1."""
    if isinstance(var, (int, float)):
        if var < 0:
            raise ValueError("var has negative entry/entries")
        return ops.full_like(input, float(var))
    var = as_tensor(var)
    if var.size and _values_known(var) and ops.any(_every_value(var) < 0).item():
        raise ValueError("var has negative entry/entries")
    if var.shape == input.shape:
        return var
    if input.shape[:-1] == var.shape:
        return ops.expand_dims(var, axis=-1)
    differ = [v for i, v in zip(input.shape, var.shape) if i != v]
    if input.ndim == var.ndim and sum(differ) == 1:
        return var
    raise ValueError("var is of incorrect size")


def gaussian_nll_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    var: Tensor | float,
    full: bool = False,
    eps: float = 1e-6,
    reduction: Reduction = "mean",
) -> Tensor:
    """The negative log-likelihood of `target` under normal distributions of mean `input`
    and variance `var`: (log(var) + (input - target)^2 / var) / 2, plus log(2 pi) / 2 with
    `full`. As PyTorch, var is raised to at least `eps` for the value, while its gradient
    is taken as if it were not (the clamp is not differentiated)."""
    var = _gaussian_var(input, var)
    _check_reduction(reduction, "{} is not valid")
    # PyTorch clamps a copy of var without recording it: the clamped value, var's gradient.
    var = var + (ops.clip(var.detach(), min=eps) - var.detach())
    diff = input - target
    loss = 0.5 * (ops.log(var) + diff * diff / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def soft_margin_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
) -> Tensor:
    """The logistic loss log(1 + exp(-target input)) of targets +1 / -1, as
    logaddexp(0, -target input): finite for any finite input (PyTorch's overflows to inf
    where -target input > 709)."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return _reduce(ops.logaddexp(-input * target, 0.0), reduction)


def margin_ranking_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
) -> Tensor:
    """max(0, margin - target (input1 - input2)): target 1 asks input1 to rank above input2
    by the margin, -1 below. At the kink (the bracket 0) the gradient is the linear
    piece's, as PyTorch's."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    target = as_tensor(target)
    if input1.ndim != input2.ndim or input1.ndim != target.ndim:
        raise RuntimeError(
            "margin_ranking_loss : All input tensors should have same dimension but got "
            f"sizes: input1: {tuple(input1.shape)}, input2: {tuple(input2.shape)}, "
            f"target: {tuple(target.shape)}"
        )
    return _reduce(ops.clip(margin - target * (input1 - input2), min=0.0), reduction)


def hinge_embedding_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    margin: float = 1.0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
) -> Tensor:
    """input where target is 1, max(0, margin - input) where it is -1 (input a distance);
    as PyTorch, a target that is neither gets both terms."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    target = as_tensor(target)
    hinge = ops.where(target != 1, ops.clip(margin - input, min=0.0), 0.0)
    return _reduce(hinge + ops.where(target != -1, input, 0.0), reduction)


def cosine_embedding_loss(
    input1: Tensor,
    input2: Tensor,
    target: Tensor,
    margin: float = 0,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
) -> Tensor:
    """1 - cos(input1, input2) where target is 1, max(0, cos - margin) where it is -1 (0
    elsewhere); vectors (D,) with a 0-d target or rows (N, D) with a target (N,). The cosine
    is PyTorch's: x.y / sqrt((|x|^2 + 1e-12) (|y|^2 + 1e-12))."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    target = as_tensor(target)
    if target.ndim > 1:
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    want = target.ndim + 1
    if input1.ndim != want or input2.ndim != want:
        raise RuntimeError(
            f"{target.ndim}D target tensor expects {want}D input tensors, but found inputs "
            f"with sizes {list(input1.shape)} and {list(input2.shape)}."
        )
    axis = -1
    dot = ops.sum(input1 * input2, axis=axis)
    norms = (ops.sum(input1 * input1, axis=axis) + 1e-12) * (
        ops.sum(input2 * input2, axis=axis) + 1e-12
    )
    cos = dot / ops.sqrt(norms)
    loss = ops.where(target == 1, 1.0 - cos, 0.0) + ops.where(
        target == -1, ops.clip(cos - margin, min=0.0), 0.0
    )
    return _reduce(loss, reduction)


def multilabel_soft_margin_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
) -> Tensor:
    """The binary cross-entropy of sigmoid(input) against targets in [0, 1], each class
    weighted by `weight`, averaged over the classes (the last axis): one loss per sample,
    then reduced. Computed from logaddexp: finite for any finite input."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction, "{} is not valid")
    loss = target * ops.logaddexp(-input, 0.0) + (1.0 - target) * ops.logaddexp(input, 0.0)
    if weight is not None:
        loss = loss * weight
    return _reduce(ops.sum(loss, axis=-1) / input.shape[-1], reduction)


def _margin_rows(input: Tensor) -> Tensor:  # noqa: A002
    """input (N, C), (C,) or 0-d as rows (N, C): PyTorch's shapes for the margin losses."""
    if input.ndim > 2 or (input.ndim and input.shape[-1] == 0):
        raise RuntimeError(
            "Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            f"{list(input.shape)}"
        )
    return ops.reshape(input, (-1, input.shape[-1] if input.ndim else 1))


def _batch_mean(loss: Tensor, reduction: str) -> Tensor:
    """_reduce, but the 'mean' of an empty batch is 0 (PyTorch's margin losses), not NaN."""
    if reduction == "mean" and not loss.size:
        return ops.sum(loss)
    return _reduce(loss, reduction)


def multi_margin_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    p: int = 1,
    margin: float = 1.0,
    weight: Tensor | None = None,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
) -> Tensor:
    """The multi-class hinge loss of class labels `target` (N,) under scores `input` (N, C)
    (or (C,) with one label): the sum over the other classes i of max(0, margin - x[y] +
    x[i])^p (p is 1 or 2), times weight[y] with a class `weight`, over C. At the kink
    (margin - x[y] + x[i] = 0) the gradient is 0, as PyTorch's."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.ndim != 1:
        raise ValueError("weight must be one-dimensional")
    target = as_tensor(target)
    rows = _margin_rows(input)
    n, c = rows.shape
    if (input.ndim == 2 and target.shape != (n,)) or (input.ndim < 2 and target.size != 1):
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}."
        )
    _check_long_target(target)
    if weight is not None and weight.shape != (c,):
        raise RuntimeError(f"inconsistent weight size, expected {c} but got {list(weight.shape)}")
    labels = ops.reshape(target, (n,))
    if n and _values_known(labels):
        seen = _every_value(labels)
        if ops.min(seen).item() < 0 or ops.max(seen).item() >= c:
            raise RuntimeError("target out of range")
    flat, labels = labels, ops.expand_dims(labels, axis=1)
    z = margin - ops.take_along_axis(rows, labels, axis=1) + rows
    # Strictly positive z counts (the kernel's test), so the kink's gradient is 0.
    h = ops.where(z > 0, z if p == 1 else z * z, 0.0)
    h = ops.where(labels == ops.arange(c, dtype=labels.dtype), 0.0, h)
    if weight is not None:
        h = h * ops.expand_dims(ops.take(weight, flat), axis=1)
    loss = ops.sum(h, axis=1) / c
    return _batch_mean(ops.reshape(loss, target.shape if input.ndim < 2 else (n,)), reduction)


def multilabel_margin_loss(
    input: Tensor,  # noqa: A002
    target: Tensor,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
) -> Tensor:
    """The multi-label hinge loss: each row of `target` (the input's shape (N, C) or (C,))
    lists a sample's classes, up to the first -1; the loss is the sum over listed classes j
    and unlisted classes i of max(0, 1 - (x[j] - x[i])), over C (a class listed twice counts
    twice, as PyTorch). At the kink the gradient is 0, as PyTorch's."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    target = as_tensor(target)
    rows = _margin_rows(input)
    if target.shape != input.shape:
        raise RuntimeError(
            f"inconsistent target size: {list(target.shape)} for input of size: {list(input.shape)}"
        )
    _check_long_target(target)
    n, c = rows.shape
    labels = ops.reshape(target, (n, c))
    # A label counts while no -1 came before it (or at it).
    listed = ops.cumulative_sum(ops.astype(labels == -1, ops.int64), axis=1) == 0
    if labels.size and _values_known(labels):
        seen = _every_value(ops.where(listed, labels, 0))
        if ops.min(seen).item() < 0 or ops.max(seen).item() >= c:
            raise RuntimeError("argument #2 'target' is out of range")
    labels = ops.where(listed, labels, 0)
    classes = ops.arange(c, dtype=labels.dtype)
    # is_label[n, i]: class i is listed for sample n.
    hits = (ops.expand_dims(labels, axis=2) == classes) & ops.expand_dims(listed, axis=2)
    is_label = ops.any(hits, axis=1)
    picked = ops.take_along_axis(rows, labels, axis=1)  # x[n, label j]
    z = 1.0 - ops.expand_dims(picked, axis=2) + ops.expand_dims(rows, axis=1)
    counts = ops.expand_dims(listed, axis=2) & ops.expand_dims(~is_label, axis=1)
    h = ops.where(counts & (z > 0), z, 0.0)
    loss = ops.sum(h, axis=(1, 2)) / c
    return _batch_mean(loss if input.ndim == 2 else ops.reshape(loss, ()), reduction)


def _pairwise_distance(x1: Tensor, x2: Tensor, p: float = 2.0, eps: float = 1e-6) -> Tensor:
    """PyTorch's pairwise_distance: the p-norm of x1 - x2 + eps over the last axis."""
    return linalg.vector_norm(x1 - x2 + eps, ord=p, axis=-1)


def _check_triplet(anchor: Tensor, positive: Tensor, negative: Tensor, margin: float) -> None:
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {anchor.ndim}D, positive {positive.ndim}D, and "
            f"negative {negative.ndim}D inputs"
        )


def _triplet(
    d_pos: Tensor, d_neg: Tensor, d_swap: Tensor | None, margin: float, reduction: str
) -> Tensor:
    """max(0, margin + d(a, p) - d(a, n)); with the swap, d(a, n) is min(d(a, n), d(p, n))
    (a tie splits the gradient between the two, as PyTorch's minimum). At the kink the
    gradient is the linear piece's, as PyTorch's."""
    if d_swap is not None:
        d_neg = ops.minimum(d_neg, d_swap)
    return _reduce(ops.clip(margin + d_pos - d_neg, min=0.0), reduction)


def triplet_margin_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    margin: float = 1.0,
    p: float = 2,
    eps: float = 1e-6,
    swap: bool = False,
    size_average: bool | None = None,
    reduce: bool | None = None,
    reduction: Reduction = "mean",
) -> Tensor:
    """max(0, margin + d(anchor, positive) - d(anchor, negative)), d the p-norm of x - y + eps
    over the last axis (PyTorch's pairwise_distance); with `swap`, d(positive, negative)
    stands for d(anchor, negative) where it is smaller."""
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_triplet(anchor, positive, negative, margin)
    d_pos = _pairwise_distance(anchor, positive, p, eps)
    d_neg = _pairwise_distance(anchor, negative, p, eps)
    d_swap = _pairwise_distance(positive, negative, p, eps) if swap else None
    return _triplet(d_pos, d_neg, d_swap, margin, reduction)


def triplet_margin_with_distance_loss(
    anchor: Tensor,
    positive: Tensor,
    negative: Tensor,
    *,
    distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
    margin: float = 1.0,
    swap: bool = False,
    reduction: Reduction = "mean",
) -> Tensor:
    """triplet_margin_loss with any `distance_function(x, y)` (default: the Euclidean
    pairwise distance, with eps 1e-6)."""
    _check_reduction(reduction)
    _check_triplet(anchor, positive, negative, margin)
    distance = _pairwise_distance if distance_function is None else distance_function
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    d_swap = distance(positive, negative) if swap else None
    return _triplet(d_pos, d_neg, d_swap, margin, reduction)


# ----------------------------------------------------------------------------- CTC


def _ctc_lengths(lengths: Tensor | Sequence[int], name: str, batch: int) -> Tensor:
    """Lengths given as a tensor of integers, a list or a tuple, as a 1-D integer tensor of
    one length per sample (a 0-d tensor or one-element list where the input is unbatched)."""
    if isinstance(lengths, (list, tuple)):
        lengths = as_tensor(list(lengths)) if lengths else ops.zeros((0,), dtype=ops.int64)
    elif lengths.__class__ is not Tensor:
        raise TypeError(
            f"ctc_loss(): {name} must be a tensor, list or tuple of integers, "
            f"not {type(lengths).__name__}"
        )
    if not ops.isdtype(lengths.dtype, "integral") or lengths.ndim > 1:
        raise TypeError(f"ctc_loss(): {name} must hold integers, in at most one dimension")
    lengths = ops.reshape(lengths, (-1,))
    if lengths.shape[0] != batch:
        raise RuntimeError(f"{name} must be of size batch_size")
    return lengths


def _ctc_check_values(lengths: Tensor, name: str, high: int | None) -> None:
    """PyTorch's checks of the lengths' values (where they may be read: see _values_known)."""
    if not lengths.shape[0] or not _values_known(lengths):
        return
    lengths = _every_value(lengths)  # inside vmap, every sample's
    low_seen = ops.min(lengths).item()
    if low_seen < 0:
        raise RuntimeError(
            f"Expected {name} to have value at least 0, but got value {low_seen} "
            "(while checking arguments for ctc_loss)"
        )
    high_seen = ops.max(lengths).item()
    if high is not None and high_seen > high:
        raise RuntimeError(
            f"Expected {name} to have value at most {high}, but got value {high_seen} "
            "(while checking arguments for ctc_loss)"
        )


def _ctc_labels(targets: Tensor, target_lengths: Tensor, batch: int) -> Tensor:
    """The targets as a padded (N, S) integer tensor, from padded (N, S) targets or the 1-D
    concatenation of every sample's (S the longest target; entries past a sample's length are
    whatever the padding holds)."""
    if targets.ndim == 2:
        if targets.shape[0] != batch:
            raise RuntimeError(
                f"Expected tensor to have size {batch} at dimension 0, but got size "
                f"{targets.shape[0]} for argument #2 'targets' (while checking arguments for "
                "ctc_loss)"
            )
        if _values_known(target_lengths) and batch:
            longest = ops.max(target_lengths).item()
            if longest > targets.shape[1]:
                raise RuntimeError(
                    f"Expected tensor to have size at least {longest} at dimension 1, but got "
                    f"size {targets.shape[1]} for argument #2 'targets' (while checking "
                    "arguments for ctc_loss)"
                )
        return targets
    if targets.ndim != 1:
        raise RuntimeError(
            f"Expected 1 to 2 dimensions, but got {targets.ndim}-dimensional tensor for "
            "argument #2 'targets' (while checking arguments for ctc_loss)"
        )
    total = targets.shape[0]
    if _values_known(target_lengths):
        needed = ops.sum(target_lengths).item() if batch else 0
        if needed != total:
            raise RuntimeError(
                f"Expected tensor to have size {needed} at dimension 0, but got size {total} "
                "for argument #2 'targets' (while checking arguments for ctc_loss)"
            )
        width = ops.max(target_lengths).item() if batch else 0
    else:  # the longest target is at most all of them
        width = total
    if not width:
        return ops.zeros((batch, 0), dtype=targets.dtype)
    # Sample n's labels start where the ones before it end.
    starts = ops.cumulative_sum(target_lengths) - target_lengths
    positions = ops.expand_dims(starts, axis=1) + ops.arange(width, dtype=starts.dtype)
    positions = ops.reshape(ops.clip(positions, max=total - 1), (-1,))
    return ops.reshape(ops.take(targets, positions, axis=0), (batch, width))


def _ctc_logsumexp3(a: Tensor, b: Tensor, c: Tensor) -> Tensor:
    """log(exp(a) + exp(b) + exp(c)) elementwise, -inf where all three are, with first and
    second derivatives that stay finite there (0: such states are unreachable, and no
    gradient flows to them). The shift by the largest term is held constant: the result does
    not depend on it."""
    terms = ops.stack([a, b, c], axis=0)
    m = ops.max(terms.detach(), axis=0)
    m = ops.where(ops.isfinite(m), m, 0.0)
    total = ops.sum(ops.exp(terms - m), axis=0)
    reached = total > 0
    return ops.where(reached, ops.log(ops.where(reached, total, 1.0)) + m, -math.inf)


def ctc_loss(
    log_probs: Tensor,
    targets: Tensor,
    input_lengths: Tensor | Sequence[int],
    target_lengths: Tensor | Sequence[int],
    blank: int = 0,
    reduction: Reduction = "mean",
    zero_infinity: bool = False,
) -> Tensor:
    """The Connectionist Temporal Classification loss: minus the log of the total probability,
    under per-step log-probabilities `log_probs` (T, N, C) (or unbatched (T, C)), of every
    alignment of each sample's first `input_lengths[n]` steps that collapses (repeats merged,
    then `blank` dropped) to its first `target_lengths[n]` labels of `targets` (padded (N, S),
    or the 1-D concatenation of every sample's labels). 'mean' divides each loss by its target
    length (at least 1) and averages over the batch. An impossible alignment costs inf;
    `zero_infinity` makes such a loss 0, with a gradient of 0.

    Built from differentiable operations (the forward recursion over time in log space), so
    derivatives of every order are autograd's: the true gradient with respect to log_probs,
    where PyTorch's kernel returns it plus exp(log_probs) (the same gradient once it passes
    through a log_softmax, as it does when log_probs come from one), and 0, not NaN, for a
    sample whose loss is inf."""
    _check_reduction(reduction)
    targets = as_tensor(targets)
    if log_probs.ndim not in (2, 3):
        raise RuntimeError(
            f"Expected 3-dimensional tensor, but got {log_probs.ndim}-dimensional tensor for "
            "argument #1 'log_probs' (while checking arguments for ctc_loss)"
        )
    if not ops.isdtype(log_probs.dtype, "real floating"):
        raise RuntimeError(f'"ctc_loss" not implemented for {log_probs.dtype}')
    if log_probs.size == 0:  # an empty batch too ('mean' of no losses would be NaN)
        raise RuntimeError("log_probs tensor must not be empty")
    unbatched = log_probs.ndim == 2
    if unbatched:
        log_probs = ops.expand_dims(log_probs, axis=1)
        if targets.ndim != 1:
            raise RuntimeError(
                "ctc_loss: unbatched log_probs (T, C) take 1-D targets (S,), but got targets "
                f"of shape {list(targets.shape)}"
            )
        targets = ops.expand_dims(targets, axis=0)
    steps, batch, classes = log_probs.shape
    if not 0 <= blank < classes:
        raise RuntimeError("blank must be in label range")
    input_lengths = _ctc_lengths(input_lengths, "input_lengths", batch)
    target_lengths = _ctc_lengths(target_lengths, "target_lengths", batch)
    _ctc_check_values(input_lengths, "input_lengths", steps)
    _ctc_check_values(target_lengths, "target_lengths", None)
    if not ops.isdtype(targets.dtype, "integral"):
        targets = ops.astype(targets, ops.int64)  # PyTorch reads floating labels as integers
    labels = _ctc_labels(targets, target_lengths, batch)
    width = labels.shape[1]
    lengths = ops.expand_dims(target_lengths, axis=1)
    used = ops.arange(width, dtype=lengths.dtype) < lengths
    if labels.size and _values_known(labels):
        seen = _every_value(ops.where(used, labels, blank))  # inside vmap, every sample's
        if ops.min(seen).item() < 0 or ops.max(seen).item() >= classes:
            raise IndexError(
                f"ctc_loss: target labels must lie in [0, {classes}), got values in "
                f"[{ops.min(seen).item()}, {ops.max(seen).item()}]"
            )
    # Where the checks above can't read the values (a compiled replay, Dask), a sample with a
    # value they refuse gets a NaN loss: the recursion would give it a number, or wrap a
    # negative index, without a word.
    refused = []
    if not _values_known(input_lengths):
        refused.append((input_lengths < 0) | (input_lengths > steps))
    if not _values_known(target_lengths):
        refused.append(target_lengths < 0)
        if targets.ndim == 1:  # the lengths must add up to the labels given
            refused.append(ops.sum(target_lengths) != targets.shape[0])
    if labels.size and not _values_known(labels):
        refused.append(ops.any(used & ((labels < 0) | (labels >= classes)), axis=1))
    labels = ops.where(used, labels, blank)

    # The extended labels: blank, l1, blank, l2, ..., blank (2S + 1 states per sample). State s
    # is reached from s (stay), s - 1 (advance) and, for a label unlike the one two states
    # back, s - 2 (skip the blank between them).
    extended = ops.astype(ops.zeros_like(lengths), labels.dtype) + blank  # the last blank
    if width:
        pairs = ops.stack([ops.zeros_like(labels) + blank, labels], axis=2)
        extended = ops.concat([ops.reshape(pairs, (batch, 2 * width)), extended], axis=1)
    states = extended.shape[1]
    state = ops.arange(states, dtype=extended.dtype)
    first = extended[:, :1]  # the label two states back, or (before state 2) a stand-in
    skips = ops.concat([first, first, extended], axis=1)[:, :states]
    may_skip = (state % 2 == 1) & (state >= 3) & (extended != skips)

    # emitted[t, n, s]: the log-probability of state s's label at step t.
    emitted = ops.take_along_axis(
        log_probs,
        ops.broadcast_to(ops.expand_dims(extended, axis=0), (steps, batch, states)),
        axis=2,
    )
    # alpha[n, s]: the log-probability of the alignments of the steps so far that end in
    # state s; before step 0 every alignment sits in state 0 at no cost. A sample's alpha stops
    # changing once its input ends.
    zero = ops.zeros((batch, 1), dtype=log_probs.dtype)
    none = zero - math.inf
    alpha = ops.where(state == 0, zero, none)
    running = ops.expand_dims(input_lengths, axis=1)
    for t in range(steps):
        advance = ops.concat([none, alpha], axis=1)[:, :states]
        skip = ops.where(may_skip, ops.concat([none, none, alpha], axis=1)[:, :states], -math.inf)
        step = _ctc_logsumexp3(alpha, advance, skip) + emitted[t]
        alpha = ops.where(t < running, step, alpha)
    # Every alignment ends in the last state (a final blank) or the one before (the last label).
    last = 2 * ops.expand_dims(target_lengths, axis=1)
    end = ops.take_along_axis(alpha, last, axis=1)
    before = ops.take_along_axis(alpha, ops.clip(last - 1, min=0), axis=1)
    before = ops.where(last > 0, before, -math.inf)
    loss = -ops.squeeze(_ctc_logsumexp3(end, before, ops.zeros_like(end) - math.inf), axis=1)
    for samples in refused:
        loss = ops.where(samples, math.nan, loss)
    if zero_infinity:
        loss = ops.where(ops.isinf(loss), 0.0, loss)
    if reduction == "mean":
        divisor = ops.astype(ops.clip(target_lengths, min=1), loss.dtype)
        return ops.mean(loss / divisor)
    if unbatched and reduction == "none":
        return loss[0]
    return _reduce(loss, reduction)
