"""MultiheadAttention with PyTorch's parameters, arguments and results: packed input
projection (in_proj_weight, in_proj_bias), or one per input where keys and values have other
sizes (kdim, vdim), out_proj, add_bias_kv and add_zero_attn, boolean or additive attention
masks, key padding masks, head-averaged weights; (L, N, E) inputs, or (N, L, E) with
batch_first."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

from .. import _namespace as ops
from .._tensor import Tensor
from . import functional as F
from . import init
from .layers import Linear
from .module import Module, Parameter

__all__ = ["MultiheadAttention"]


def _additive(mask: Tensor, dtype: Any) -> Tensor:
    """A mask as a term added to the scores: -inf where a boolean mask holds, else its
    (float) values."""
    if mask.dtype == ops.bool:
        return ops.where(mask, -math.inf, ops.zeros_like(mask, dtype=dtype))
    return ops.astype(mask, dtype)


def _check_causal(is_causal: bool, mask: Tensor | None) -> None:
    # As PyTorch, is_causal is a hint that `mask` is the causal mask, never a mask itself.
    if is_causal and mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
            "module method `generate_square_subsequent_mask` to create this mask."
        )


class MultiheadAttention(Module):
    """Attention over `num_heads` heads of embed_dim // num_heads features each: the
    projections' weights start Glorot-uniform (in_proj, or q_proj, k_proj and v_proj where
    `kdim` or `vdim` differ from embed_dim) and as a Linear's (out_proj), the biases at
    zero; with `add_bias_kv`, bias_k and bias_v (1, 1, embed_dim) start Glorot-normal and
    are attended as one more key and value, and `add_zero_attn` adds a key and value of
    zeros, as PyTorch's."""

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        *,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        if embed_dim % num_heads:
            raise AssertionError("embed_dim must be divisible by num_heads")
        self.embed_dim = embed_dim
        self.kdim = embed_dim if kdim is None else kdim
        self.vdim = embed_dim if vdim is None else vdim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        # As PyTorch's: one packed (3 E, E) projection where keys and values have the
        # query's features, else one weight per input (q, k, v _proj_weight).
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(ops.empty((3 * embed_dim, embed_dim), dtype=dtype))
            init.xavier_uniform_(self.in_proj_weight)
            for name in ("q_proj_weight", "k_proj_weight", "v_proj_weight"):
                self.register_parameter(name, None)
        else:
            for name, features in (("q", embed_dim), ("k", self.kdim), ("v", self.vdim)):
                weight = Parameter(ops.empty((embed_dim, features), dtype=dtype))
                init.xavier_uniform_(weight)
                setattr(self, f"{name}_proj_weight", weight)
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(ops.zeros((3 * embed_dim,), dtype=dtype))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, dtype=dtype)
        if bias:
            init.zeros_(self.out_proj.bias)
        if add_bias_kv:
            self.bias_k = Parameter(ops.empty((1, 1, embed_dim), dtype=dtype))
            self.bias_v = Parameter(ops.empty((1, 1, embed_dim), dtype=dtype))
            init.xavier_normal_(self.bias_k)
            init.xavier_normal_(self.bias_v)
        else:
            self.register_parameter("bias_k", None)
            self.register_parameter("bias_v", None)
        self.add_zero_attn = add_zero_attn
        if device is not None:
            self.to(device)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        """(attention output, attention weights or None): the output has the query's
        shape; the weights are (N, L, S), or (N, H, L, S) unless averaged over the heads.
        attn_mask (L, S) or (N H, L, S) and key_padding_mask (N, S) are boolean (True: not
        attended) or added to the scores. `is_causal` is PyTorch's hint that attn_mask is
        the causal mask (which is then given too): the mask is what is applied."""
        _check_causal(is_causal, attn_mask)
        single = query.ndim == 2
        if single:
            query, key, value = (ops.expand_dims(t, axis=1) for t in (query, key, value))
            if key_padding_mask is not None:
                key_padding_mask = ops.expand_dims(key_padding_mask, axis=0)
        elif self.batch_first:
            query, key, value = (ops.permute_dims(t, (1, 0, 2)) for t in (query, key, value))
        length, n, e = query.shape
        source = key.shape[0]
        h, d = self.num_heads, self.head_dim
        _check_shapes(e, self.embed_dim, (length, source, n, h), attn_mask, key_padding_mask)
        _check_features(key, value, self.kdim, self.vdim)
        b = self.in_proj_bias
        weights_qkv = (
            [self.in_proj_weight[i * e : (i + 1) * e] for i in range(3)]
            if self._qkv_same_embed_dim
            else [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        )
        q, k, v = (
            F.linear(t, w, None if b is None else b[i * e : (i + 1) * e])
            for i, (t, w) in enumerate(zip((query, key, value), weights_qkv))
        )

        def heads(t: Tensor, rows: int) -> Tensor:  # (rows, N, E) -> (N H, rows, d)
            return ops.permute_dims(ops.reshape(t, (rows, n * h, d)), (1, 0, 2))

        q, k, v = heads(q, length), heads(k, source), heads(v, source)
        # Extra keys and values attended by every query, as PyTorch's: bias_k / bias_v (one
        # per batch element), then zeros (add_zero_attn); the masks gain 0 for them. Joined
        # after the split into heads (the same numbers): Dask can't split the features of
        # rows joined from chunks of unequal lengths.
        extra = 0
        if self.bias_k is not None and self.bias_v is not None:
            k = ops.concat([k, heads(ops.broadcast_to(self.bias_k, (1, n, e)), 1)], axis=1)
            v = ops.concat([v, heads(ops.broadcast_to(self.bias_v, (1, n, e)), 1)], axis=1)
            extra += 1
        if self.add_zero_attn:
            zeros = ops.zeros((n * h, 1, d), dtype=k.dtype)
            k, v = ops.concat([k, zeros], axis=1), ops.concat([v, zeros], axis=1)
            extra += 1
        scores = (q @ ops.permute_dims(k, (0, 2, 1))) / math.sqrt(d)
        if attn_mask is not None:
            mask = F.pad(_additive(attn_mask, scores.dtype), (0, extra))
            scores = scores + (mask if mask.ndim == 3 else ops.expand_dims(mask, axis=0))
        source += extra
        if key_padding_mask is not None:
            padding = F.pad(_additive(key_padding_mask, scores.dtype), (0, extra))  # (N, S)
            padding = ops.reshape(
                ops.broadcast_to(ops.reshape(padding, (n, 1, 1, source)), (n, h, 1, source)),
                (n * h, 1, source),
            )
            scores = scores + padding
        weights = ops.softmax(scores, axis=-1)
        if self.training and self.dropout > 0:
            weights = F.dropout(weights, self.dropout)
        out = weights @ v  # (N H, L, d)
        out = ops.reshape(ops.permute_dims(out, (1, 0, 2)), (length, n, e))
        out = self.out_proj(out)
        if single:
            out = out[:, 0]
        elif self.batch_first:
            out = ops.permute_dims(out, (1, 0, 2))
        if not need_weights:
            return out, None
        weights = ops.reshape(weights, (n, h, length, source))
        if average_attn_weights:
            weights = ops.mean(weights, axis=1)
        return out, weights[0] if single else weights

    if TYPE_CHECKING:
        __call__ = forward

    def extra_repr(self) -> str:
        """Sizes."""
        return f"embed_dim={self.embed_dim}, num_heads={self.num_heads}"


def _check_features(key: Tensor, value: Tensor, kdim: int, vdim: int) -> None:
    """The keys' and values' features are kdim and vdim (else a matrix product would fail
    with NumPy's words)."""
    if key.shape[-1] != kdim or value.shape[-1] != vdim:
        raise RuntimeError(
            f"MultiheadAttention: expected keys of {kdim} features and values of {vdim}, but "
            f"got key of shape {tuple(key.shape)} and value of shape {tuple(value.shape)}"
        )


def _check_shapes(
    e: int,
    embed_dim: int,
    sizes: tuple[int, int, int, int],
    attn_mask: Tensor | None,
    key_padding_mask: Tensor | None,
) -> None:
    """PyTorch's checks, in its words and error types, on the query's features and the
    masks' shapes (which would otherwise broadcast, or fail inside a reshape); `sizes` is
    (L, S, N, H)."""
    length, source, n, h = sizes
    if e != embed_dim:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim}, but got {e}")
    if attn_mask is not None:
        if attn_mask.ndim not in (2, 3):
            raise RuntimeError(f"attn_mask's dimension {attn_mask.ndim} is not supported")
        want = (length, source) if attn_mask.ndim == 2 else (n * h, length, source)
        if tuple(attn_mask.shape) != want:
            raise RuntimeError(
                f"The shape of the {attn_mask.ndim}D attn_mask is {tuple(attn_mask.shape)}, "
                f"but should be {want}."
            )
    if key_padding_mask is not None and tuple(key_padding_mask.shape) != (n, source):
        raise AssertionError(
            f"expecting key_padding_mask shape of {(n, source)}, but got "
            f"{tuple(key_padding_mask.shape)}"
        )
