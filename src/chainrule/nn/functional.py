"""Neural-network functions with PyTorch's names and semantics: activations, losses,
normalisation, dropout, linear and one-hot; differentiable to any order. Axes are the Array API
spelling (`axis=`); class scores sit on axis 1, as in PyTorch."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

from .. import _namespace as ops
from .. import random as _random
from .._batching import Batched, every_sample
from .._namespace import logsumexp
from .._rules import OPS
from .._tensor import Tensor, as_tensor
from ..autograd.function import Function, FunctionCtx

__all__ = [
    "logsumexp",
    "softmax",
    "log_softmax",
    "sigmoid",
    "relu",
    "tanh",
    "gelu",
    "silu",
    "softplus",
    "linear",
    "conv2d",
    "layer_norm",
    "dropout",
    "one_hot",
    "mse_loss",
    "nll_loss",
    "cross_entropy",
    "binary_cross_entropy_with_logits",
]

Reduction = Literal["none", "mean", "sum"]


def sigmoid(x: Tensor, /) -> Tensor:
    """1 / (1 + exp(-x))."""
    return OPS["sigmoid"](x)


def relu(x: Tensor, /) -> Tensor:
    """max(x, 0), with gradient 0 at 0 (as PyTorch)."""
    return OPS["relu"](x)


def tanh(x: Tensor, /) -> Tensor:
    """The hyperbolic tangent."""
    return ops.tanh(x)


def softmax(x: Tensor, /, *, axis: int = -1) -> Tensor:
    """exp(x) / sum(exp(x)) along `axis`, computed without overflow."""
    return ops.softmax(x, axis=axis)


def log_softmax(x: Tensor, /, *, axis: int = -1) -> Tensor:
    """x - logsumexp(x) along `axis`, computed without overflow."""
    return ops.log_softmax(x, axis=axis)


# ----------------------------------------------------------------------------- erf and gelu
# erf as a composite: for |x| <= 2 the series erf(x) = 2/sqrt(pi) exp(-x^2) sum_k (2x^2)^k x /
# (1 3 5 ... (2k+1)) (positive terms, no cancellation), beyond it 1 - erfc(x) with erfc's
# continued fraction exp(-x^2)/sqrt(pi) / (x + (1/2)/(x + 1/(x + (3/2)/(x + ...)))). 32 terms
# and 42 levels give float64 erf within 2e-15 (relative) everywhere. Its derivative is exact:
# 2/sqrt(pi) exp(-x^2), written with chainrule operations, so it differentiates again.

_SERIES_TERMS = 32
_FRACTION_LEVELS = 42
_SERIES_LIMIT = 2.0


class Erf(Function):
    """erf as a custom Function (its graph node: ErfBackward); `gelu` calls it."""

    @staticmethod
    def forward(ctx: FunctionCtx, x: Tensor) -> Tensor:
        # On the raw arrays: some 80 elementwise steps, no graph to record.
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        xp, v = x._xp, x._data
        a = xp.abs(v)
        s = xp.minimum(a, _SERIES_LIMIT)
        twice_square = 2.0 * s * s
        term = s
        total = s
        for k in range(1, _SERIES_TERMS):
            term = term * twice_square / (2 * k + 1)
            total = total + term
        series = (2 / math.sqrt(math.pi)) * xp.exp(-s * s) * total
        c = xp.maximum(a, _SERIES_LIMIT)
        fraction = c
        for k in range(_FRACTION_LEVELS, 0, -1):
            fraction = c + (k / 2) / fraction
        tail = 1.0 - xp.exp(-c * c) / (math.sqrt(math.pi) * fraction)
        return ops.asarray(xp.sign(v) * xp.where(a <= _SERIES_LIMIT, series, tail))

    @staticmethod
    def backward(ctx: FunctionCtx, g: Tensor) -> Tensor:
        (x,) = ctx.saved_tensors
        return g * ((2 / math.sqrt(math.pi)) * ops.exp(-x * x))

    # erf' is a scalar function of x: the JVP is the same product.
    jvp = backward


def _erf(x: Tensor) -> Tensor:
    return Erf.apply(as_tensor(x))


def gelu(x: Tensor, /, approximate: Literal["none", "tanh"] = "none") -> Tensor:
    """x * Phi(x), Phi the standard normal CDF: exact (erf) by default, or PyTorch's tanh
    approximation with `approximate='tanh'`."""
    if approximate == "none":
        return 0.5 * x * (1.0 + _erf(x * (1 / math.sqrt(2))))
    if approximate == "tanh":
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * (x * x * x))
        return 0.5 * x * (1.0 + ops.tanh(inner))
    raise ValueError(f"approximate argument must be either none or tanh, got {approximate!r}")


def silu(x: Tensor, /) -> Tensor:
    """x * sigmoid(x)."""
    return x * sigmoid(x)


def softplus(x: Tensor, /, beta: float = 1.0, threshold: float = 20.0) -> Tensor:
    """log(1 + exp(beta x)) / beta, and x itself where beta x > threshold (as PyTorch)."""
    bx = x * beta if beta != 1.0 else x
    smooth = ops.logaddexp(bx, 0.0)
    if beta != 1.0:
        smooth = smooth / beta
    return ops.where(bx > threshold, x, smooth)


# ----------------------------------------------------------------------------- layers


def linear(x: Tensor, weight: Tensor, bias: Tensor | None = None) -> Tensor:
    """x @ weight.T + bias; weight has shape (out_features, in_features)."""
    out = ops.matmul(x, ops.matrix_transpose(weight))
    return out if bias is None else out + bias


def _pair(v: int | Sequence[int], name: str) -> tuple[int, int]:
    pair = (v, v) if isinstance(v, int) else tuple(v)
    if len(pair) != 2 or not all(isinstance(k, int) for k in pair):
        raise TypeError(f"conv2d: {name} must be an int or a pair of ints, got {v!r}")
    return pair  # type: ignore[return-value]


def conv2d(
    x: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    stride: int | Sequence[int] = 1,
    padding: int | Sequence[int] = 0,
) -> Tensor:
    """2-D cross-correlation (PyTorch's conv2d, groups=1, no dilation) of x (N, C, H, W), or
    (C, H, W) for one image, with weight (O, C, kh, kw), then + bias (O,): output (N, O, Ho,
    Wo), Ho = (H + 2 pad_h - kh) // stride_h + 1. `stride` and `padding` (zeros) are ints or
    (height, width) pairs. One primitive, differentiable to any order."""
    x, weight = as_tensor(x), as_tensor(weight)
    single = x.ndim == 3
    if single:
        x = ops.expand_dims(x, axis=0)
    if x.ndim != 4:
        raise RuntimeError(
            "Expected 3D (unbatched) or 4D (batched) input to conv2d, but got input of size: "
            f"{list(x.shape)}"
        )
    if weight.ndim != 4 or weight.shape[1] != x.shape[1]:
        raise RuntimeError(
            f"Given groups=1, weight of size {list(weight.shape)}, expected input"
            f"{list(x.shape)} to have {weight.shape[1] if weight.ndim == 4 else '?'} "
            f"channels, but got {x.shape[1]} channels instead"
        )
    stride, padding = _pair(stride, "stride"), _pair(padding, "padding")
    if min(stride) <= 0:
        raise RuntimeError("non-positive stride is not supported")
    if min(padding) < 0:
        raise RuntimeError("negative padding is not supported")
    kh, kw = weight.shape[2:]
    h, w = x.shape[2:]
    hp, wp = h + 2 * padding[0], w + 2 * padding[1]
    if hp < kh or wp < kw:
        raise RuntimeError(
            f"Calculated padded input size per channel: ({hp} x {wp}). Kernel size: "
            f"({kh} x {kw}). Kernel size can't be greater than actual input size"
        )
    p = (stride, padding, (kh, kw), (h, w), x._data.dtype)
    out = OPS["conv2d"]((x, weight), p)
    if bias is not None:
        out = out + ops.reshape(bias, (1, -1, 1, 1))
    return out[0] if single else out


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


def dropout(
    x: Tensor,
    p: float = 0.5,
    training: bool = True,
    *,
    generator: _random.Generator | None = None,
) -> Tensor:
    """In training, zero each element with probability `p` (a new mask per call, from
    `generator` or the default one) and scale the kept ones by 1 / (1 - p); else x itself."""
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    keep = _random.bernoulli(1.0 - p, x.shape, dtype=x.dtype, generator=generator)
    return x * (keep * (1.0 / (1.0 - p)))


def one_hot(x: Tensor, /, num_classes: int = -1) -> Tensor:
    """Integer class labels as one-hot vectors on a new last axis (int64), of length
    `num_classes` (-1: the largest label plus one)."""
    x = as_tensor(x)
    if ops.isdtype(x.dtype, "real floating") or x.dtype == ops.bool:
        raise TypeError("one_hot is only applicable to index tensor of integer dtype")
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


def mse_loss(input: Tensor, target: Tensor, reduction: Reduction = "mean") -> Tensor:  # noqa: A002
    """The squared differences, reduced by `reduction` ('mean', 'sum' or 'none')."""
    diff = input - target
    return _reduce(diff * diff, reduction)


def _pick_class(logp: Tensor, target: Tensor) -> Tensor:
    """logp[n, target[n], ...]: the entries of the target classes (class axis 1)."""
    target = as_tensor(target)
    if not ops.isdtype(target.dtype, "integral"):
        raise RuntimeError(
            f"expected target dtype to be an integer dtype (class indices), but got "
            f"{target.dtype}; class probabilities are a floating target of the input's shape"
        )
    n_classes = logp.shape[1]
    if target.size:
        labels = target
        if target._data.__class__ is Batched:  # inside vmap: every sample's labels
            labels = as_tensor(every_sample(target._data))
        low, high = ops.min(labels).item(), ops.max(labels).item()
        if low < 0 or high >= n_classes:
            raise IndexError(f"Target {low if low < 0 else high} is out of bounds.")
    picked = ops.take_along_axis(logp, ops.expand_dims(target, axis=1), axis=1)
    return ops.squeeze(picked, axis=1)


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
    """A single sample (C,) with a 0-d target as a batch of one."""
    _check_class_indices(input, target)
    if input.ndim == 1:
        return ops.expand_dims(input, axis=0), ops.reshape(as_tensor(target), (1,)), True
    return input, target, False


def nll_loss(input: Tensor, target: Tensor, reduction: Reduction = "mean") -> Tensor:  # noqa: A002
    """The negative log-likelihood of integer class labels `target` (N, ...) under
    log-probabilities `input` (N, C, ...) or (C,)."""
    logp, labels, single = _batched(input, target)
    loss = -_pick_class(logp, labels)
    return _reduce(loss[0] if single else loss, reduction)


def cross_entropy(
    input: Tensor,  # noqa: A002
    target: Tensor,
    reduction: Reduction = "mean",
    label_smoothing: float = 0.0,
) -> Tensor:
    """Cross-entropy between logits `input` (N, C, ...) or (C,) and `target`: integer class
    labels (N, ...) or (), or class probabilities of the input's shape (a floating tensor), as
    PyTorch takes them; with `label_smoothing` e the target is (1 - e) target + e / C uniform.
    Computed with log_softmax: finite for any finite logits."""
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    target = as_tensor(target)
    if tuple(target.shape) == tuple(input.shape) and input.ndim >= 1:
        if not ops.isdtype(target.dtype, "real floating"):
            raise RuntimeError(
                "Expected floating point type for target with class probabilities, "
                f"got {target.dtype}"
            )
        axis = 0 if input.ndim == 1 else 1
        if label_smoothing:
            target = (1.0 - label_smoothing) * target + label_smoothing / input.shape[axis]
        loss = -ops.sum(log_softmax(input, axis=axis) * target, axis=axis)
        return _reduce(loss, reduction)
    logits, labels, single = _batched(input, target)
    logp = log_softmax(logits, axis=1)
    loss = -_pick_class(logp, labels)
    if label_smoothing:
        uniform = -ops.mean(logp, axis=1)
        loss = (1.0 - label_smoothing) * loss + label_smoothing * uniform
    return _reduce(loss[0] if single else loss, reduction)


def binary_cross_entropy_with_logits(
    input: Tensor,  # noqa: A002
    target: Tensor,
    reduction: Reduction = "mean",
) -> Tensor:
    """Binary cross-entropy of targets in [0, 1] under probabilities sigmoid(input),
    as log(1 + exp(x)) - x t: finite and exact for logits of any size."""
    return _reduce(ops.logaddexp(input, 0.0) - input * target, reduction)
