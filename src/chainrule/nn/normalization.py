"""Group, instance and RMS normalisation layers with PyTorch's names, arguments, parameters,
buffers and reprs; the arithmetic is functional.group_norm / instance_norm. (LayerNorm and
the BatchNorm layers live in `layers`.)"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import _namespace as ops
from .._tensor import Tensor
from . import functional as F
from .layers import _norm_state
from .module import Module, Parameter

__all__ = [
    "GroupNorm",
    "InstanceNorm1d",
    "InstanceNorm2d",
    "InstanceNorm3d",
    "RMSNorm",
    "LocalResponseNorm",
]


class GroupNorm(Module):
    """Normalisation of each sample over groups of num_channels / num_groups channels (see
    functional.group_norm), then a per-channel affine map whose weight starts at ones and
    bias at zeros (with `affine`; `bias=False` leaves out the shift)."""

    def __init__(
        self,
        num_groups: int,
        num_channels: int,
        eps: float = 1e-5,
        affine: bool = True,
        *,
        bias: bool = True,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if num_channels % num_groups:
            raise ValueError(
                f"num_channels ({num_channels}) must be divisible by num_groups ({num_groups})"
            )
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        if affine:
            self.weight = Parameter(ops.ones((num_channels,), dtype=dtype))
        else:
            self.register_parameter("weight", None)
        if affine and bias:
            self.bias = Parameter(ops.zeros((num_channels,), dtype=dtype))
        else:
            self.register_parameter("bias", None)

    def forward(self, x: Tensor) -> Tensor:
        """x (N, C, ...) normalised per group, scaled and shifted per channel."""
        return F.group_norm(x, self.num_groups, self.weight, self.bias, self.eps)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """Groups, channels, eps, affine and bias."""
        return (
            f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
            f"bias={self.bias is not None}"
        )


class _InstanceNorm(Module):
    """Normalisation of each channel of each sample over its spatial axes (see
    functional.instance_norm). With `affine`, a per-channel weight (ones) and bias (zeros;
    none with `bias=False`); with `track_running_stats`, the buffers running_mean (zeros),
    running_var (ones) and num_batches_tracked, moved by `momentum` in training and used in
    eval mode. Input without its batch axis is taken as a batch of one."""

    _spatial = 1  # spatial axes
    _optional_buffers = ("num_batches_tracked",)

    def __init__(
        self,
        num_features: int,
        eps: float = 1e-5,
        momentum: float | None = 0.1,
        affine: bool = False,
        track_running_stats: bool = False,
        *,
        bias: bool = True,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        _norm_state(self, num_features, eps, momentum, affine, bias, track_running_stats, dtype)

    def forward(self, x: Tensor) -> Tensor:
        """x normalised per sample and channel: by its own statistics in training (or
        without running statistics), by the running statistics in eval mode."""
        n = self._spatial
        if x.ndim not in (n + 1, n + 2):
            raise ValueError(f"expected {n + 1}D or {n + 2}D input (got {x.ndim}D input)")
        feature_dim = x.ndim - n - 1
        if x.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(
                    f"expected input's size at dim={feature_dim} to match num_features "
                    f"({self.num_features}), but got: {x.shape[feature_dim]}."
                )
            warnings.warn(
                f"input's size at dim={feature_dim} does not match num_features. You can "
                "silence this warning by not passing in num_features, which is not used "
                "because affine=False",
                stacklevel=2,
            )
        single = x.ndim == n + 1
        if single:
            x = ops.expand_dims(x, axis=0)
        out = F.instance_norm(
            x,
            self.running_mean,
            self.running_var,
            self.weight,
            self.bias,
            self.training or not self.track_running_stats,
            0.0 if self.momentum is None else self.momentum,
            self.eps,
        )
        return out[0] if single else out

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """Features and settings."""
        return (
            f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
            f"affine={self.affine}, bias={self.bias is not None}, "
            f"track_running_stats={self.track_running_stats}"
        )


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or (C, L) input."""

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or (C, H, W) input."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or (C, D, H, W) input."""

    _spatial = 3


class RMSNorm(Module):
    """Division by the root mean square over the trailing `normalized_shape` axes (see
    functional.rms_norm; eps=None is the dtype's machine epsilon), then, with
    `elementwise_affine`, an elementwise scale `weight` that starts at ones."""

    def __init__(
        self,
        normalized_shape: int | Sequence[int],
        eps: float | None = None,
        elementwise_affine: bool = True,
        *,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        shape = (
            (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
        )
        self.normalized_shape = shape
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(ops.ones(shape, dtype=dtype))
        else:
            self.register_parameter("weight", None)

    def forward(self, x: Tensor) -> Tensor:
        """x over its root mean square on the trailing axes, scaled."""
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """Shape, eps and elementwise_affine, as PyTorch prints them."""
        return (
            f"{self.normalized_shape}, eps={self.eps}, elementwise_affine={self.elementwise_affine}"
        )


class LocalResponseNorm(Module):
    """Each channel divided by a power of its neighbours' mean square (see
    functional.local_response_norm); no parameters."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75, k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, x: Tensor) -> Tensor:
        """x (N, C, *) normalised across channels."""
        return F.local_response_norm(x, self.size, self.alpha, self.beta, self.k)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """Size, alpha, beta and k, as PyTorch prints them."""
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
