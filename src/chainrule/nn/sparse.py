"""EmbeddingBag, with PyTorch's names, arguments, initialisation, parameter and repr; the
arithmetic is functional.embedding_bag. (Embedding lives in `layers`.)"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from .. import random as _random
from .._tensor import Tensor, no_grad
from . import functional as F
from .module import Module, Parameter

__all__ = ["EmbeddingBag"]


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of rows of a table `weight` (num_embeddings,
    embedding_dim), which starts standard normal, its row `padding_idx` (if given; negative
    counts from the end) at zeros (see functional.embedding_bag for the bags, offsets and
    options).

    >>> import chainrule as cr
    >>> bag = cr.nn.EmbeddingBag(10, 3, mode="sum")
    >>> bag(cr.asarray([1, 2, 4, 5, 4, 3]), cr.asarray([0, 4])).shape
    (2, 3)
    """

    def __init__(
        self,
        num_embeddings: int,
        embedding_dim: int,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: Literal["sum", "mean", "max"] = "mean",
        sparse: bool = False,
        _weight: Tensor | None = None,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
        *,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if sparse:
            raise NotImplementedError(
                "EmbeddingBag: sparse=True (a sparse gradient) is not implemented"
            )
        if padding_idx is not None:
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise AssertionError("padding_idx must be within num_embeddings")
            padding_idx %= num_embeddings
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset
        self.padding_idx = padding_idx
        if _weight is not None:
            if tuple(_weight.shape) != (num_embeddings, embedding_dim):
                raise AssertionError(
                    "Shape of weight does not match num_embeddings and embedding_dim"
                )
            self.weight = Parameter(_weight)
            return
        self.weight = Parameter(_random.randn(num_embeddings, embedding_dim, dtype=dtype))
        if padding_idx is not None:
            with no_grad():
                self.weight[padding_idx] = 0.0

    @classmethod
    def from_pretrained(
        cls,
        embeddings: Tensor,
        freeze: bool = True,
        max_norm: float | None = None,
        norm_type: float = 2.0,
        scale_grad_by_freq: bool = False,
        mode: Literal["sum", "mean", "max"] = "mean",
        sparse: bool = False,
        include_last_offset: bool = False,
        padding_idx: int | None = None,
    ) -> EmbeddingBag:
        """An EmbeddingBag whose table is the 2-D `embeddings` (kept as given), frozen (no
        gradient) unless `freeze` is False."""
        if embeddings.ndim != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(
            rows, cols, max_norm, norm_type, scale_grad_by_freq, mode, sparse, embeddings,
            include_last_offset, padding_idx,
        )  # fmt: skip
        bag.weight.requires_grad_(not freeze)
        return bag

    def forward(
        self,
        input: Tensor,  # noqa: A002
        offsets: Tensor | None = None,
        per_sample_weights: Tensor | None = None,
    ) -> Tensor:
        """The bags' reductions, (B, embedding_dim) (see functional.embedding_bag)."""
        return F.embedding_bag(
            input, self.weight, offsets, self.max_norm, self.norm_type,
            self.scale_grad_by_freq, self.mode, self.sparse, per_sample_weights,
            self.include_last_offset, self.padding_idx,
        )  # fmt: skip

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """Table size, then max_norm, norm_type, scale_grad_by_freq, mode and padding_idx as
        PyTorch prints them."""
        out = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            out += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            out += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq:
            out += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        out += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            out += f", padding_idx={self.padding_idx}"
        return out
