"""Padding layers with PyTorch's names, arguments and reprs: reflection, replication,
circular, zero and constant padding of the last 1, 2 or 3 axes. The padding itself is
functional.pad; pixel shuffling (the other reshaping layers of super-resolution models) and
channel shuffling are here too."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._tensor import Tensor
from . import functional as F
from .module import Module

__all__ = [
    "ReflectionPad1d", "ReflectionPad2d", "ReflectionPad3d",
    "ReplicationPad1d", "ReplicationPad2d", "ReplicationPad3d",
    "CircularPad1d", "CircularPad2d", "CircularPad3d",
    "ZeroPad1d", "ZeroPad2d", "ZeroPad3d",
    "ConstantPad1d", "ConstantPad2d", "ConstantPad3d",
    "PixelShuffle", "PixelUnshuffle", "ChannelShuffle",
]  # fmt: skip


class _Pad(Module):
    """F.pad with `mode` of the last `axes` axes: `padding` an int (the same on every side)
    or PyTorch's (before, after) pairs from the last axis backwards."""

    mode = "constant"
    axes = 1

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__()
        if isinstance(padding, int):
            padding = (padding,) * (2 * self.axes)
        self.padding = tuple(padding)

    def forward(self, x: Tensor) -> Tensor:
        """x padded."""
        return F.pad(x, self.padding, self.mode)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The padding."""
        return f"{self.padding}"


class ReflectionPad1d(_Pad):
    """Pads the last axis with its mirror image about the edge (the edge not repeated)."""

    mode = "reflect"


class ReflectionPad2d(ReflectionPad1d):
    """Pads the last two axes with their mirror images about the edges."""

    axes = 2


class ReflectionPad3d(ReflectionPad1d):
    """Pads the last three axes with their mirror images about the edges."""

    axes = 3


class ReplicationPad1d(_Pad):
    """Pads the last axis by repeating its edge values."""

    mode = "replicate"


class ReplicationPad2d(ReplicationPad1d):
    """Pads the last two axes by repeating their edge values."""

    axes = 2


class ReplicationPad3d(ReplicationPad1d):
    """Pads the last three axes by repeating their edge values."""

    axes = 3


class CircularPad1d(_Pad):
    """Pads the last axis by wrapping it around."""

    mode = "circular"


class CircularPad2d(CircularPad1d):
    """Pads the last two axes by wrapping them around."""

    axes = 2


class CircularPad3d(CircularPad1d):
    """Pads the last three axes by wrapping them around."""

    axes = 3


class ConstantPad1d(_Pad):
    """Pads the last axis with `value`."""

    def __init__(self, padding: int | Sequence[int], value: float) -> None:
        super().__init__(padding)
        self.value = value

    def forward(self, x: Tensor) -> Tensor:
        """x padded with the value."""
        return F.pad(x, self.padding, "constant", self.value)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The padding and the value."""
        return f"padding={self.padding}, value={self.value}"


class ConstantPad2d(ConstantPad1d):
    """Pads the last two axes with `value`."""

    axes = 2


class ConstantPad3d(ConstantPad1d):
    """Pads the last three axes with `value`."""

    axes = 3


class ZeroPad1d(ConstantPad1d):
    """Pads the last axis with zeros."""

    def __init__(self, padding: int | Sequence[int]) -> None:
        super().__init__(padding, 0.0)

    def extra_repr(self) -> str:
        """The padding."""
        return f"{self.padding}"


class ZeroPad2d(ZeroPad1d):
    """Pads the last two axes with zeros."""

    axes = 2


class ZeroPad3d(ZeroPad1d):
    """Pads the last three axes with zeros."""

    axes = 3


class PixelShuffle(Module):
    """(*, C r^2, H, W) to (*, C, H r, W r), r the `upscale_factor` (F.pixel_shuffle)."""

    def __init__(self, upscale_factor: int) -> None:
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, x: Tensor) -> Tensor:
        """x's channels spread over its height and width."""
        return F.pixel_shuffle(x, self.upscale_factor)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The factor."""
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """(*, C, H r, W r) to (*, C r^2, H, W), r the `downscale_factor` (F.pixel_unshuffle)."""

    def __init__(self, downscale_factor: int) -> None:
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, x: Tensor) -> Tensor:
        """x's height and width blocks gathered into channels."""
        return F.pixel_unshuffle(x, self.downscale_factor)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The factor."""
        return f"downscale_factor={self.downscale_factor}"


class ChannelShuffle(Module):
    """x (N, C, *) with its channels shuffled across `groups` (see
    functional.channel_shuffle)."""

    def __init__(self, groups: int) -> None:
        super().__init__()
        self.groups = groups

    def forward(self, x: Tensor) -> Tensor:
        """x's channels shuffled."""
        return F.channel_shuffle(x, self.groups)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The groups."""
        return f"groups={self.groups}"
