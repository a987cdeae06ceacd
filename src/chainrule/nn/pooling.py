"""The 1-D and 3-D pooling layers, the adaptive ones that `layers` lacks (MaxPool1d,
AvgPool1d, AdaptiveAvgPool1d, AdaptiveMaxPool1d/2d, MaxPool3d, AvgPool3d, AdaptiveAvgPool3d)
and the unpooling ones (MaxUnpool1d/2d/3d), with PyTorch's names, arguments and reprs; the
arithmetic is in `functional`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._tensor import Tensor
from . import functional as F
from .layers import _AvgPool, _MaxPool, _Pool2d
from .module import Module

__all__ = [
    "MaxPool1d",
    "AvgPool1d",
    "AdaptiveAvgPool1d",
    "AdaptiveMaxPool1d",
    "AdaptiveMaxPool2d",
    "MaxPool3d",
    "AvgPool3d",
    "AdaptiveAvgPool3d",
    "MaxUnpool1d",
    "MaxUnpool2d",
    "MaxUnpool3d",
]


class MaxPool1d(_MaxPool):
    """The maximum of each kernel window along the last axis (see functional.max_pool1d)."""

    pool = staticmethod(F.max_pool1d)


class AvgPool1d(_Pool2d):
    """The mean of each kernel window along the last axis (see functional.avg_pool1d); as
    PyTorch's, the sizes are kept as 1-tuples."""

    pool = staticmethod(F.avg_pool1d)
    options = ("ceil_mode", "count_include_pad")
    shown = ()

    def __init__(
        self,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
        ceil_mode: bool = False,
        count_include_pad: bool = True,
    ) -> None:
        kernel = F._tuple(kernel_size, 1, "kernel_size", "AvgPool1d")
        step = kernel if stride is None else F._tuple(stride, 1, "stride", "AvgPool1d")
        super().__init__(kernel, step, F._tuple(padding, 1, "padding", "AvgPool1d"))
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad


class _Adaptive(Module):
    """Pooling to a fixed `output_size` by the class's function `pool`."""

    pool: staticmethod[..., Tensor]

    def __init__(self, output_size: int | Sequence[int | None] | None) -> None:
        super().__init__()
        self.output_size = output_size

    def forward(self, x: Tensor) -> Tensor:
        """The pooled x."""
        return self.pool(x, self.output_size)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The output size."""
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_Adaptive):
    """The means of `output_size` bins along the last axis (see
    functional.adaptive_avg_pool1d)."""

    pool = staticmethod(F.adaptive_avg_pool1d)


class _AdaptiveMax(_Adaptive):
    """Adaptive max pooling by the class's `pool`, with PyTorch's option return_indices (the
    maxima and their flat indices; not in the repr)."""

    def __init__(
        self, output_size: int | Sequence[int | None], return_indices: bool = False
    ) -> None:
        super().__init__(output_size)
        self.return_indices = return_indices

    def forward(self, x: Tensor) -> Tensor | tuple[Tensor, Tensor]:  # type: ignore[override]
        """The pooled x, and with return_indices the maxima's flat indices."""
        return self.pool(x, self.output_size, self.return_indices)

    if TYPE_CHECKING:
        __call__ = forward


class AdaptiveMaxPool1d(_AdaptiveMax):
    """The maxima of `output_size` bins along the last axis (see
    functional.adaptive_max_pool1d)."""

    pool = staticmethod(F.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMax):
    """The maxima of an `output_size` grid of bins over the last two axes (see
    functional.adaptive_max_pool2d)."""

    pool = staticmethod(F.adaptive_max_pool2d)


class MaxPool3d(_MaxPool):
    """The maximum of each kernel window over the last three axes (see
    functional.max_pool3d)."""

    pool = staticmethod(F.max_pool3d)


class AvgPool3d(_AvgPool):
    """The mean of each kernel window over the last three axes (see functional.avg_pool3d)."""

    pool = staticmethod(F.avg_pool3d)


class AdaptiveAvgPool3d(_Adaptive):
    """The means of an `output_size` grid of bins over the last three axes (see
    functional.adaptive_avg_pool3d)."""

    pool = staticmethod(F.adaptive_avg_pool3d)


class _MaxUnpool(Module):
    """The partial inverse of max pooling by the class's function `unpool` (see
    functional.max_unpool2d) over `spatial` axes, with PyTorch's arguments and repr (the
    sizes kept as tuples)."""

    unpool: staticmethod[..., Tensor]
    spatial: int

    def __init__(
        self,
        kernel_size: int | Sequence[int],
        stride: int | Sequence[int] | None = None,
        padding: int | Sequence[int] = 0,
    ) -> None:
        super().__init__()
        name = type(self).__name__
        self.kernel_size = F._tuple(kernel_size, self.spatial, "kernel_size", name)
        self.stride = (
            self.kernel_size if stride is None else F._tuple(stride, self.spatial, "stride", name)
        )
        self.padding = F._tuple(padding, self.spatial, "padding", name)

    def forward(
        self, x: Tensor, indices: Tensor, output_size: Sequence[int] | None = None
    ) -> Tensor:
        """x placed at `indices` of zeros of the unpooled size (or `output_size`)."""
        return self.unpool(x, indices, self.kernel_size, self.stride, self.padding, output_size)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """Kernel size, stride and padding."""
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    """max_pool1d's maxima put back in place, zeros elsewhere (see functional.max_unpool1d)."""

    unpool = staticmethod(F.max_unpool1d)
    spatial = 1


class MaxUnpool2d(_MaxUnpool):
    """max_pool2d's maxima put back in place, zeros elsewhere (see functional.max_unpool2d)."""

    unpool = staticmethod(F.max_unpool2d)
    spatial = 2


class MaxUnpool3d(_MaxUnpool):
    """max_pool3d's maxima put back in place, zeros elsewhere (see functional.max_unpool3d)."""

    unpool = staticmethod(F.max_unpool3d)
    spatial = 3
