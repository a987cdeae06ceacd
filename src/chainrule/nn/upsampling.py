"""Upsampling layers: Upsample and its two fixed-mode forms, with PyTorch's names, arguments
and reprs; the resampling itself is functional.interpolate (padding is functional.pad)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """x (N, C, *spatial) resampled to `size`, or by `scale_factor`, with `mode` 'nearest',
    'nearest-exact', 'linear', 'bilinear', 'bicubic', 'trilinear' or 'area' (see
    functional.interpolate). As PyTorch's, scale factors are kept as floats."""

    def __init__(
        self,
        size: int | Sequence[int] | None = None,
        scale_factor: float | Sequence[float] | None = None,
        mode: str = "nearest",
        align_corners: bool | None = None,
        recompute_scale_factor: bool | None = None,
    ) -> None:
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor: float | tuple[float, ...] | None = tuple(
                float(f) for f in scale_factor
            )
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, x: Tensor) -> Tensor:
        """x resampled."""
        return F.interpolate(
            x,
            self.size,
            self.scale_factor,
            self.mode,
            self.align_corners,
            recompute_scale_factor=self.recompute_scale_factor,
        )

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The scale factor (or else the size) and the mode."""
        if self.scale_factor is not None:
            return f"scale_factor={self.scale_factor!r}, mode={self.mode!r}"
        return f"size={self.size!r}, mode={self.mode!r}"


class UpsamplingNearest2d(Upsample):
    """Upsample of 4-D input with mode 'nearest'."""

    def __init__(
        self, size: int | Sequence[int] | None = None, scale_factor: float | None = None
    ) -> None:
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Upsample of 4-D input with mode 'bilinear' and align_corners=True."""

    def __init__(
        self, size: int | Sequence[int] | None = None, scale_factor: float | None = None
    ) -> None:
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
