"""Loss modules with PyTorch's names and arguments: each holds its settings and calls its
function in `nn.functional` (class weights and pos_weight are held as buffers)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from .._tensor import Tensor
from . import functional as F
from .module import Module

__all__ = [
    "BCELoss",
    "BCEWithLogitsLoss",
    "CrossEntropyLoss",
    "HuberLoss",
    "KLDivLoss",
    "L1Loss",
    "MSELoss",
    "NLLLoss",
    "SmoothL1Loss",
]

Reduction = Literal["none", "mean", "sum"]


class _Loss(Module):
    def __init__(
        self,
        reduction: str = "mean",
        size_average: bool | None = None,
        reduce: bool | None = None,
    ) -> None:
        super().__init__()
        # PyTorch's deprecated flags become the reduction once, here (with its warning).
        self.reduction = F._legacy_reduction(size_average, reduce, reduction)

    def extra_repr(self) -> str:
        """The reduction."""
        return f"reduction={self.reduction!r}"


class L1Loss(_Loss):
    """The absolute differences |input - target|, reduced (see functional.l1_loss)."""

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
    ) -> None:
        super().__init__(reduction, size_average, reduce)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss of input against target."""
        return F.l1_loss(input, target, reduction=self.reduction)

    if TYPE_CHECKING:
        __call__ = forward


class MSELoss(_Loss):
    """The squared differences, reduced (see functional.mse_loss)."""

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
    ) -> None:
        super().__init__(reduction, size_average, reduce)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss of input against target."""
        return F.mse_loss(input, target, reduction=self.reduction)

    if TYPE_CHECKING:
        __call__ = forward


class SmoothL1Loss(_Loss):
    """Quadratic below `beta`, linear beyond (see functional.smooth_l1_loss)."""

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
        beta: float = 1.0,
    ) -> None:
        super().__init__(reduction, size_average, reduce)
        self.beta = beta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss of input against target."""
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)

    if TYPE_CHECKING:
        __call__ = forward


class HuberLoss(_Loss):
    """Quadratic below `delta`, linear with slope delta beyond (see functional.huber_loss)."""

    def __init__(self, reduction: Reduction = "mean", delta: float = 1.0) -> None:
        super().__init__(reduction)
        self.delta = delta

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss of input against target."""
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)

    if TYPE_CHECKING:
        __call__ = forward


class _WeightedLoss(_Loss):
    def __init__(
        self,
        weight: Tensor | None,
        reduction: str,
        size_average: bool | None = None,
        reduce: bool | None = None,
    ) -> None:
        super().__init__(reduction, size_average, reduce)
        self.register_buffer("weight", weight)


class BCELoss(_WeightedLoss):
    """Binary cross-entropy of probabilities (see functional.binary_cross_entropy)."""

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
    ) -> None:
        super().__init__(weight, reduction, size_average, reduce)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss of probabilities input against target."""
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)

    if TYPE_CHECKING:
        __call__ = forward


class BCEWithLogitsLoss(_WeightedLoss):
    """Binary cross-entropy of logits (see functional.binary_cross_entropy_with_logits)."""

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
        pos_weight: Tensor | None = None,
    ) -> None:
        super().__init__(weight, reduction, size_average, reduce)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss of logits input against target."""
        return F.binary_cross_entropy_with_logits(
            input, target, self.weight, reduction=self.reduction, pos_weight=self.pos_weight
        )

    if TYPE_CHECKING:
        __call__ = forward


class NLLLoss(_WeightedLoss):
    """Negative log-likelihood of class labels under log-probabilities (see
    functional.nll_loss)."""

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
    ) -> None:
        super().__init__(weight, reduction, size_average, reduce)
        self.ignore_index = ignore_index

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss of log-probabilities input against labels target."""
        return F.nll_loss(
            input, target, self.weight, ignore_index=self.ignore_index, reduction=self.reduction
        )

    if TYPE_CHECKING:
        __call__ = forward


class CrossEntropyLoss(_WeightedLoss):
    """Cross-entropy of logits against class labels or class probabilities, with label
    smoothing (see functional.cross_entropy)."""

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        ignore_index: int = -100,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
        label_smoothing: float = 0.0,
    ) -> None:
        super().__init__(weight, reduction, size_average, reduce)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss of logits input against target."""
        return F.cross_entropy(
            input,
            target,
            self.weight,
            ignore_index=self.ignore_index,
            reduction=self.reduction,
            label_smoothing=self.label_smoothing,
        )

    if TYPE_CHECKING:
        __call__ = forward


class KLDivLoss(_Loss):
    """The Kullback-Leibler divergence of the target from log-probabilities (see
    functional.kl_div)."""

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: Literal["none", "mean", "sum", "batchmean"] = "mean",
        log_target: bool = False,
    ) -> None:
        super().__init__(reduction, size_average, reduce)
        self.log_target = log_target

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The divergence of target from log-probabilities input."""
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)

    if TYPE_CHECKING:
        __call__ = forward
