"""AdaptiveLogSoftmaxWithLoss (Grave et al.'s adaptive softmax), with PyTorch's names,
arguments, parameters and state dict keys; its layers are `Linear`s in `Sequential`s."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

from .. import _namespace as ops
from .._tensor import Tensor, as_tensor
from . import functional as F
from .containers import ModuleList
from .layers import Linear, Sequential
from .module import Module

__all__ = ["AdaptiveLogSoftmaxWithLoss"]


class _ASMoutput(NamedTuple):
    """What AdaptiveLogSoftmaxWithLoss returns: each sample's log-probability of its target
    class, and the mean of their negatives."""

    output: Tensor
    loss: Tensor


class AdaptiveLogSoftmaxWithLoss(Module):
    """The log-probabilities of `n_classes` classes split by `cutoffs` into a shortlist (the
    classes below cutoffs[0]) and clusters (cutoffs[i] to cutoffs[i + 1], the last ending at
    n_classes). The `head` (a Linear to the shortlist plus one score per cluster, with a bias
    if `head_bias`) scores the shortlist and the clusters; cluster i's classes are scored by
    `tail[i]`, a Linear to in_features // div_value ** (i + 1) features and a Linear from
    them to the cluster's classes (neither with a bias). A class in a cluster has the
    cluster's head log-probability plus its own within the cluster.

    >>> import chainrule as cr
    >>> asm = cr.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4, 7])
    >>> out = asm(cr.ones((3, 8)), cr.asarray([0, 5, 9]))
    >>> out.output.shape, out.loss.shape, asm.log_prob(cr.ones((3, 8))).shape
    ((3,), (), (3, 10))
    """

    def __init__(
        self,
        in_features: int,
        n_classes: int,
        cutoffs: Sequence[int],
        div_value: float = 4.0,
        head_bias: bool = False,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        cutoffs = list(cutoffs)
        if (
            not cutoffs
            or cutoffs != sorted(cutoffs)
            or min(cutoffs) <= 0
            or max(cutoffs) > n_classes - 1
            or len(set(cutoffs)) != len(cutoffs)
            or any(int(c) != c for c in cutoffs)
        ):
            raise ValueError(
                "cutoffs should be a sequence of unique, positive integers sorted in an "
                "increasing order, where each value is between 1 and n_classes-1"
            )
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, device=device, dtype=dtype)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hidden = int(in_features // (div_value ** (i + 1)))
            size = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(
                Sequential(
                    Linear(in_features, hidden, bias=False, device=device, dtype=dtype),
                    Linear(hidden, size, bias=False, device=device, dtype=dtype),
                )
            )

    def forward(self, input: Tensor, target: Tensor) -> _ASMoutput:  # noqa: A002
        """Each sample's log-probability of its class in `target` (N,) under `input`
        (N, in_features), or of a 0-d target under a 1-D input; and the mean negative of
        them, the loss. Only the clusters some target falls in are computed, on those
        samples only."""
        target = as_tensor(target)
        if target.ndim == 1:
            if input.shape[0] != target.shape[0]:
                raise RuntimeError(
                    "Input and target should have the same size in the batch dimension."
                )
            if input.ndim != 2:
                raise RuntimeError(
                    "1D target tensor expects 2D input tensors, but found inputs with size "
                    f"{list(input.shape)}"
                )
        elif target.ndim == 0:
            if input.ndim != 1:
                raise RuntimeError(
                    "0D target tensor expects 1D input tensors, but found inputs with size "
                    f"{list(input.shape)}"
                )
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = target.ndim == 1
        rows = input if batched else ops.expand_dims(input, axis=0)
        labels = target if batched else ops.reshape(target, (1,))
        values = labels.tolist()
        if values and (min(values) < 0 or max(values) >= self.n_classes):
            raise RuntimeError(
                f"Target values should be in [0, {self.n_classes - 1}], but values in range "
                f"[{min(values)}, {max(values)}] were found. "
            )
        head = F.log_softmax(self.head(rows), dim=1)
        # A shortlist class is read from the head. A class of cluster i adds the head's score
        # of the cluster to the class's log-probability within the cluster, which is
        # computed on the cluster's samples only and then put back in their places.
        head_column = list(values)
        shortlist = [n for n, v in enumerate(values) if v < self.shortlist_size]
        parts, places = [], []
        for i, layers in enumerate(self.tail):
            low, high = self.cutoffs[i], self.cutoffs[i + 1]
            chosen = [n for n, v in enumerate(values) if low <= v < high]
            if not chosen:
                continue
            for n in chosen:
                head_column[n] = self.shortlist_size + i
            where = as_tensor(chosen)
            scores = F.log_softmax(layers(ops.take(rows, where, axis=0)), dim=1)
            within = ops.expand_dims(ops.take(labels, where) - low, axis=1)
            parts.append(ops.squeeze(ops.take_along_axis(scores, within, axis=1), axis=1))
            places.extend(chosen)
        index = ops.expand_dims(ops.astype(as_tensor(head_column), labels.dtype), axis=1)
        output = ops.squeeze(ops.take_along_axis(head, index, axis=1), axis=1)
        if parts:
            # The shortlist's samples add 0; argsort puts every sample back in its row.
            within = ops.concat([ops.zeros_like(output[: len(shortlist)]), *parts], axis=0)
            output = output + ops.take(within, ops.argsort(as_tensor(shortlist + places)))
        loss = ops.mean(-output)
        return _ASMoutput(output if batched else output[0], loss)

    if TYPE_CHECKING:
        __call__ = forward

    def _full_log_prob(self, rows: Tensor, head: Tensor) -> Tensor:
        """The log-probabilities of every class, (N, n_classes), from the head's scores."""
        head = F.log_softmax(head, dim=1)
        columns = [head[:, : self.shortlist_size]]
        for i, layers in enumerate(self.tail):
            cluster = head[:, self.shortlist_size + i : self.shortlist_size + i + 1]
            columns.append(F.log_softmax(layers(rows), dim=1) + cluster)
        return ops.concat(columns, axis=1)

    def _check_batch(self, input: Tensor, name: str) -> None:  # noqa: A002
        if input.ndim != 2:
            raise RuntimeError(
                f"AdaptiveLogSoftmaxWithLoss.{name} takes a batch (N, {self.in_features}), "
                f"but got input of shape {list(input.shape)}"
            )

    def log_prob(self, input: Tensor) -> Tensor:  # noqa: A002
        """The log-probabilities of every class, (N, n_classes), for `input`
        (N, in_features)."""
        self._check_batch(input, "log_prob")
        return self._full_log_prob(input, self.head(input))

    def predict(self, input: Tensor) -> Tensor:  # noqa: A002
        """The most probable class of each sample, (N,), for `input` (N, in_features): the
        head's best class where it is in the shortlist (no class of a cluster can beat it),
        the best of every class elsewhere."""
        self._check_batch(input, "predict")
        rows = input
        head = self.head(rows)
        best = ops.argmax(head, axis=1)
        elsewhere = [n for n, b in enumerate(best.tolist()) if b >= self.shortlist_size]
        if not elsewhere:
            return best
        where = as_tensor(elsewhere)
        full = self._full_log_prob(ops.take(rows, where, axis=0), ops.take(head, where, axis=0))
        classes = best.tolist()
        for n, c in zip(elsewhere, ops.argmax(full, axis=1).tolist()):
            classes[n] = c
        return ops.astype(as_tensor(classes), best.dtype)
