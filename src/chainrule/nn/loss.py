"""Loss modules with PyTorch's names and arguments: each holds its settings and calls its
function in `nn.functional` (class weights and pos_weight are held as buffers)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
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
    "CosineEmbeddingLoss",
    "GaussianNLLLoss",
    "HingeEmbeddingLoss",
    "MarginRankingLoss",
    "MultiLabelMarginLoss",
    "MultiLabelSoftMarginLoss",
    "MultiMarginLoss",
    "PoissonNLLLoss",
    "SoftMarginLoss",
    "TripletMarginLoss",
    "TripletMarginWithDistanceLoss",
    "CTCLoss",
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


class PoissonNLLLoss(_Loss):
    """The Poisson negative log-likelihood of counts (see functional.poisson_nll_loss)."""

    def __init__(
        self,
        log_input: bool = True,
        full: bool = False,
        size_average: bool | None = None,
        eps: float = 1e-8,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
    ) -> None:
        super().__init__(reduction, size_average, reduce)
        self.log_input = log_input
        self.full = full
        self.eps = eps

    def forward(self, log_input: Tensor, target: Tensor) -> Tensor:
        """The loss of (log-)rates against counts target."""
        return F.poisson_nll_loss(
            log_input,
            target,
            log_input=self.log_input,
            full=self.full,
            eps=self.eps,
            reduction=self.reduction,
        )

    if TYPE_CHECKING:
        __call__ = forward


class GaussianNLLLoss(_Loss):
    """The normal negative log-likelihood of a target under means and variances (see
    functional.gaussian_nll_loss)."""

    def __init__(
        self, *, full: bool = False, eps: float = 1e-6, reduction: Reduction = "mean"
    ) -> None:
        super().__init__(reduction)
        self.full = full
        self.eps = eps

    def forward(self, input: Tensor, target: Tensor, var: Tensor | float) -> Tensor:  # noqa: A002
        """The loss of target under means input and variances var."""
        return F.gaussian_nll_loss(
            input, target, var, full=self.full, eps=self.eps, reduction=self.reduction
        )

    if TYPE_CHECKING:
        __call__ = forward


class SoftMarginLoss(_Loss):
    """The logistic loss of +1 / -1 targets (see functional.soft_margin_loss)."""

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
    ) -> None:
        super().__init__(reduction, size_average, reduce)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss of input against target."""
        return F.soft_margin_loss(input, target, reduction=self.reduction)

    if TYPE_CHECKING:
        __call__ = forward


class _MarginLoss(_Loss):
    def __init__(
        self, margin: float, size_average: bool | None, reduce: bool | None, reduction: str
    ) -> None:
        super().__init__(reduction, size_average, reduce)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    """The hinge loss of ranking input1 against input2 (see functional.margin_ranking_loss)."""

    def __init__(
        self,
        margin: float = 0.0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
    ) -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        """The loss of ranking input1 against input2 as target says."""
        return F.margin_ranking_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )

    if TYPE_CHECKING:
        __call__ = forward


class HingeEmbeddingLoss(_MarginLoss):
    """The hinge loss of distances against +1 / -1 targets (see
    functional.hinge_embedding_loss)."""

    def __init__(
        self,
        margin: float = 1.0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
    ) -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss of distances input against target."""
        return F.hinge_embedding_loss(input, target, margin=self.margin, reduction=self.reduction)

    if TYPE_CHECKING:
        __call__ = forward


class CosineEmbeddingLoss(_MarginLoss):
    """The cosine loss of pairs against +1 / -1 targets (see
    functional.cosine_embedding_loss)."""

    def __init__(
        self,
        margin: float = 0.0,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
    ) -> None:
        super().__init__(margin, size_average, reduce, reduction)

    def forward(self, input1: Tensor, input2: Tensor, target: Tensor) -> Tensor:
        """The loss of the pairs (input1, input2) against target."""
        return F.cosine_embedding_loss(
            input1, input2, target, margin=self.margin, reduction=self.reduction
        )

    if TYPE_CHECKING:
        __call__ = forward


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """The per-class logistic loss, averaged over classes (see
    functional.multilabel_soft_margin_loss)."""

    def __init__(
        self,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
    ) -> None:
        super().__init__(weight, reduction, size_average, reduce)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss of scores input against targets in [0, 1]."""
        return F.multilabel_soft_margin_loss(input, target, self.weight, reduction=self.reduction)

    if TYPE_CHECKING:
        __call__ = forward


class MultiMarginLoss(_WeightedLoss):
    """The multi-class hinge loss of class labels (see functional.multi_margin_loss)."""

    def __init__(
        self,
        p: int = 1,
        margin: float = 1.0,
        weight: Tensor | None = None,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
    ) -> None:
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.ndim != 1:
            raise ValueError(
                f"MultiMarginLoss: expected weight to be None or 1D tensor, got {weight.ndim}D "
                "instead"
            )
        super().__init__(weight, reduction, size_average, reduce)
        self.p = p
        self.margin = margin

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss of scores input against class labels target."""
        return F.multi_margin_loss(
            input, target, self.p, self.margin, self.weight, reduction=self.reduction
        )

    if TYPE_CHECKING:
        __call__ = forward


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss of listed classes (see functional.multilabel_margin_loss)."""

    def __init__(
        self,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
    ) -> None:
        super().__init__(reduction, size_average, reduce)

    def forward(self, input: Tensor, target: Tensor) -> Tensor:  # noqa: A002
        """The loss of scores input against the classes listed in target."""
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)

    if TYPE_CHECKING:
        __call__ = forward


class TripletMarginLoss(_MarginLoss):
    """The triplet loss of p-norm distances (see functional.triplet_margin_loss)."""

    def __init__(
        self,
        margin: float = 1.0,
        p: float = 2.0,
        eps: float = 1e-6,
        swap: bool = False,
        size_average: bool | None = None,
        reduce: bool | None = None,
        reduction: Reduction = "mean",
    ) -> None:
        if margin <= 0:
            raise ValueError(
                f"TripletMarginLoss: expected margin to be greater than 0, got {margin} instead"
            )
        super().__init__(margin, size_average, reduce, reduction)
        self.p = p
        self.eps = eps
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        """The loss of the triplets."""
        return F.triplet_margin_loss(
            anchor,
            positive,
            negative,
            margin=self.margin,
            p=self.p,
            eps=self.eps,
            swap=self.swap,
            reduction=self.reduction,
        )

    if TYPE_CHECKING:
        __call__ = forward


class TripletMarginWithDistanceLoss(_Loss):
    """The triplet loss of any distance (see functional.triplet_margin_with_distance_loss)."""

    def __init__(
        self,
        *,
        distance_function: Callable[[Tensor, Tensor], Tensor] | None = None,
        margin: float = 1.0,
        swap: bool = False,
        reduction: Reduction = "mean",
    ) -> None:
        if margin <= 0:
            raise ValueError(
                "TripletMarginWithDistanceLoss: expected margin to be greater than 0, got "
                f"{margin} instead"
            )
        super().__init__(reduction)
        self.distance_function = distance_function
        self.margin = margin
        self.swap = swap

    def forward(self, anchor: Tensor, positive: Tensor, negative: Tensor) -> Tensor:
        """The loss of the triplets."""
        return F.triplet_margin_with_distance_loss(
            anchor,
            positive,
            negative,
            distance_function=self.distance_function,
            margin=self.margin,
            swap=self.swap,
            reduction=self.reduction,
        )

    if TYPE_CHECKING:
        __call__ = forward


class CTCLoss(_Loss):
    """The Connectionist Temporal Classification loss of label sequences under per-step
    log-probabilities, `blank` the label that emits nothing (see functional.ctc_loss)."""

    def __init__(
        self, blank: int = 0, reduction: Reduction = "mean", zero_infinity: bool = False
    ) -> None:
        super().__init__(reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(
        self,
        log_probs: Tensor,
        targets: Tensor,
        input_lengths: Tensor | Sequence[int],
        target_lengths: Tensor | Sequence[int],
    ) -> Tensor:
        """The loss of `targets` under `log_probs` (T, N, C)."""
        return F.ctc_loss(
            log_probs,
            targets,
            input_lengths,
            target_lengths,
            self.blank,
            self.reduction,
            self.zero_infinity,
        )

    if TYPE_CHECKING:
        __call__ = forward
