"""Parameter initialisations with PyTorch's names (`nn.init.kaiming_uniform_(w)`): each fills a
tensor in place, without recording a gradient, from chainrule.random's default generator or
the one given; the same distributions, gains and fan conventions as PyTorch's."""

from __future__ import annotations

import math
from typing import Literal

from .. import _namespace as ops
from .. import linalg
from .. import random as _random
from .._dtypes import TORCH_DTYPE_NAMES
from .._tensor import Tensor, no_grad

__all__ = [
    "calculate_gain",
    "constant_",
    "ones_",
    "zeros_",
    "uniform_",
    "normal_",
    "trunc_normal_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
]


def __dir__() -> list[str]:
    """The API only (dir() and editors' completion), not the names this module imports."""
    return sorted(__all__)


Mode = Literal["fan_in", "fan_out"]


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for a nonlinearity: 1 for linear ones and sigmoid, 5/3 for tanh,
    sqrt(2) for relu, sqrt(2 / (1 + slope^2)) for leaky_relu, 3/4 for selu."""
    linear = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "sigmoid")  # fmt: skip
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _fans(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out): a weight (out, in, *kernel) has fan_in = in * kernel size and
    fan_out = out * kernel size."""
    if tensor.ndim < 2:
        raise ValueError(
            "Fan in and fan out can not be computed for tensor with fewer than 2 dimensions"
        )
    receptive = math.prod(tensor.shape[2:])
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _fans(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(
    tensor: Tensor, a: float = 0.0, b: float = 1.0, generator: _random.Generator | None = None
) -> Tensor:
    """Fill `tensor` with numbers uniform in [a, b)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    generator: _random.Generator | None = None,
) -> Tensor:
    """Fill `tensor` with normal numbers of mean `mean` and standard deviation `std`."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


def trunc_normal_(
    tensor: Tensor,
    mean: float = 0.0,
    std: float = 1.0,
    a: float = -2.0,
    b: float = 2.0,
    generator: _random.Generator | None = None,
) -> Tensor:
    """Fill `tensor` with normal numbers of mean `mean` and standard deviation `std`
    conditioned on [a, b] (drawn again where they fall outside, until none does)."""
    if not a < b:
        raise ValueError(f"trunc_normal_: expected a < b, got a={a}, b={b}")
    if tensor.dtype.kind == "c":  # complex numbers have no order to truncate by
        raise NotImplementedError(
            f"\"lt_cpu\" not implemented for '{TORCH_DTYPE_NAMES[tensor.dtype]}'"
        )
    gen = _random.default_generator if generator is None else generator
    with no_grad():
        values = gen.normal(mean, std, tensor.shape, dtype=tensor.dtype)
        outside = (values < a) | (values > b)
        while bool(ops.any(outside)):
            values = ops.where(
                outside, gen.normal(mean, std, tensor.shape, dtype=tensor.dtype), values
            )
            outside = (values < a) | (values > b)
        return tensor.copy_(values)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill `tensor` with `val`."""
    with no_grad():
        return tensor.fill_(val)


def ones_(tensor: Tensor) -> Tensor:
    """Fill `tensor` with ones."""
    return constant_(tensor, 1.0)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill `tensor` with zeros."""
    return constant_(tensor, 0.0)


def xavier_uniform_(
    tensor: Tensor, gain: float = 1.0, generator: _random.Generator | None = None
) -> Tensor:
    """Glorot's uniform: U(-r, r) with r = gain sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(
    tensor: Tensor, gain: float = 1.0, generator: _random.Generator | None = None
) -> Tensor:
    """Glorot's normal: N(0, s^2) with s = gain sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _fans(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)), generator)


def kaiming_uniform_(
    tensor: Tensor,
    a: float = 0.0,
    mode: Mode = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: _random.Generator | None = None,
) -> Tensor:
    """He's uniform: U(-r, r) with r = gain sqrt(3 / fan), gain for `nonlinearity` (with
    negative slope `a` for leaky_relu), fan by `mode`."""
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(
    tensor: Tensor,
    a: float = 0.0,
    mode: Mode = "fan_in",
    nonlinearity: str = "leaky_relu",
    generator: _random.Generator | None = None,
) -> Tensor:
    """He's normal: N(0, s^2) with s = gain / sqrt(fan)."""
    std = calculate_gain(nonlinearity, a) / math.sqrt(_fan(tensor, mode))
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(
    tensor: Tensor, gain: float = 1.0, generator: _random.Generator | None = None
) -> Tensor:
    """A (semi-)orthogonal matrix times `gain`, of the tensor's first dimension by the rest
    flattened: the Q of the QR decomposition of a normal matrix, its columns' signs fixed
    by R's diagonal (so the distribution is uniform over orthogonal matrices)."""
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.size == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.size // rows
    gen = _random.default_generator if generator is None else generator
    with no_grad():
        flat = gen.normal(0.0, 1.0, (rows, cols), dtype=tensor.dtype)
        if rows < cols:
            flat = flat.T
        q, r = linalg.qr(flat)
        q = q * ops.sign(linalg.diagonal(r))
        if rows < cols:
            q = q.T
        return tensor.copy_(ops.reshape(q, tensor.shape) * gain)
