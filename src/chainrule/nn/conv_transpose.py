"""Transposed convolution layers, ConvTranspose1d and ConvTranspose2d, with PyTorch's names,
arguments, parameter shapes, initialisation and reprs; the arithmetic is
functional.conv_transpose1d / conv_transpose2d."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import random as _random
from .._tensor import Tensor
from . import functional as F
from .layers import _conv_repr
from .module import Module, Parameter

__all__ = ["ConvTranspose1d", "ConvTranspose2d"]


class _ConvTranspose(Module):
    """A transposed convolution over `_dims` spatial axes: weight (in_channels, out_channels
    / groups, *kernel_size) and bias (out_channels,), both uniform in +-1/sqrt(out_channels
    / groups prod(kernel_size)) (PyTorch's fan-in of this weight layout)."""

    _dims = 2
    _function = staticmethod(F.conv_transpose2d)

    def __init__(
        self,
        in_channels: int,
        out_channels: int,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] = 1,
        padding: int | Sequence[int] = 0,
        output_padding: int | Sequence[int] = 0,
        groups: int = 1,
        bias: bool = True,
        dilation: int | Sequence[int] = 1,
        padding_mode: str = "zeros",
        *,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for {name}')
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            raise NotImplementedError(f"{name}: padding={padding!r}: only numbers are supported")
        n = self._dims
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = F._tuple(kernel_size, n, "kernel_size", name)
        self.stride = F._tuple(stride, n, "stride", name)
        self.padding = F._tuple(padding, n, "padding", name)
        self.output_padding = F._tuple(output_padding, n, "output_padding", name)
        self.dilation = F._tuple(dilation, n, "dilation", name)
        self.groups = groups
        self.padding_mode = padding_mode
        shape = (in_channels, out_channels // groups, *self.kernel_size)
        fan_in = out_channels // groups * math.prod(self.kernel_size)
        bound = 1 / math.sqrt(fan_in) if fan_in else 0.0
        self.weight = Parameter(_random.uniform(-bound, bound, shape, dtype=dtype))
        if bias:
            self.bias = Parameter(_random.uniform(-bound, bound, (out_channels,), dtype=dtype))
        else:
            self.register_parameter("bias", None)

    def _output_padding(self, x: Tensor, output_size: Sequence[int] | None) -> tuple[int, ...]:
        """output_padding, or, for a requested `output_size` (the spatial sizes, optionally
        after the batch and channel sizes), the padding that gives it, as PyTorch's."""
        if output_size is None:
            return self.output_padding
        n = self._dims
        lead = 2 if x.ndim == n + 2 else 1
        sizes = tuple(output_size)
        if len(sizes) == lead + n:
            sizes = sizes[lead:]
        if len(sizes) != n:
            raise ValueError(
                f"ConvTranspose{n}D: for {x.ndim}D input, output_size must have {n} or "
                f"{lead + n} elements (got {len(sizes)})"
            )
        smallest = [
            (x.shape[lead + i] - 1) * self.stride[i]
            - 2 * self.padding[i]
            + self.dilation[i] * (self.kernel_size[i] - 1)
            + 1
            for i in range(n)
        ]
        largest = [m + s - 1 for m, s in zip(smallest, self.stride)]
        for size, low, high in zip(sizes, smallest, largest):
            if not low <= size <= high:
                raise ValueError(
                    f"requested an output size of {tuple(output_size)}, but valid sizes range "
                    f"from {smallest} to {largest} (for an input of {tuple(x.shape[lead:])})"
                )
        return tuple(size - low for size, low in zip(sizes, smallest))

    def forward(self, x: Tensor, output_size: Sequence[int] | None = None) -> Tensor:
        """The transposed convolution of x; `output_size` picks the output_padding."""
        return self._function(
            x,
            self.weight,
            self.bias,
            self.stride,
            self.padding,
            self._output_padding(x, output_size),
            self.groups,
            self.dilation,
        )

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """As PyTorch prints it (see layers._conv_repr)."""
        return _conv_repr(self)


class ConvTranspose2d(_ConvTranspose):
    """2-D transposed convolution of (N, C, H, W) or (C, H, W) input (see
    functional.conv_transpose2d)."""

    _dims = 2
    _function = staticmethod(F.conv_transpose2d)


class ConvTranspose1d(_ConvTranspose):
    """1-D transposed convolution of (N, C, L) or (C, L) input (see
    functional.conv_transpose1d)."""

    _dims = 1
    _function = staticmethod(F.conv_transpose1d)
