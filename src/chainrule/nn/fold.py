"""The im2col layers Unfold and Fold, with PyTorch's names, arguments and reprs; the
arithmetic is in `functional` (unfold, fold)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from .._tensor import Tensor
from . import functional as F
from .module import Module

__all__ = ["Unfold", "Fold"]


class Unfold(Module):
    """The sliding blocks of an image as columns (see functional.unfold)."""

    def __init__(
        self,
        kernel_size: int | Sequence[int],
        dilation: int | Sequence[int] = 1,
        padding: int | Sequence[int] = 0,
        stride: int | Sequence[int] = 1,
    ) -> None:
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        """The columns of x (N, C, H, W) or (C, H, W)."""
        return F.unfold(x, self.kernel_size, self.dilation, self.padding, self.stride)

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The options, as PyTorch prints them."""
        return (
            f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
            f"padding={self.padding}, stride={self.stride}"
        )


class Fold(Module):
    """Columns summed back into an image of `output_size` (see functional.fold)."""

    def __init__(
        self,
        output_size: int | Sequence[int],
        kernel_size: int | Sequence[int],
        dilation: int | Sequence[int] = 1,
        padding: int | Sequence[int] = 0,
        stride: int | Sequence[int] = 1,
    ) -> None:
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, x: Tensor) -> Tensor:
        """The image that the columns x (N, C kh kw, L) or (C kh kw, L) fold into."""
        return F.fold(
            x, self.output_size, self.kernel_size, self.dilation, self.padding, self.stride
        )

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """The options, as PyTorch prints them."""
        return (
            f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
            f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}"
        )
