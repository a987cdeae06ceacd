"""The Transformer encoder and decoder with PyTorch's parameters, arguments and numbers:
TransformerEncoderLayer (self-attention and a feedforward block, post- or pre-norm, relu or
gelu, dropout), TransformerDecoderLayer (self-attention, attention over the encoder's output
`memory`, a feedforward block), TransformerEncoder / TransformerDecoder (copies of one
layer, then an optional norm), and Transformer (an encoder and a decoder with final norms)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .. import _namespace as ops
from .._tensor import Tensor
from . import functional as F
from .attention import MultiheadAttention, _check_causal
from .containers import ModuleList
from .init import xavier_uniform_
from .layers import Dropout, LayerNorm, Linear
from .module import Module

__all__ = [
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
]

_ACTIVATIONS: dict[str, Callable[[Tensor], Tensor]] = {"relu": F.relu, "gelu": F.gelu}


def _activation(activation: str | Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    """The feedforward block's activation: "relu", "gelu" or a callable."""
    if isinstance(activation, str):
        if activation not in _ACTIVATIONS:
            raise RuntimeError(f"activation should be relu/gelu, not {activation}")
        return _ACTIVATIONS[activation]
    return activation


class TransformerEncoderLayer(Module):
    """Self-attention then a feedforward block (linear1, activation, dropout, linear2), each
    added to its input with dropout: post-norm (`norm1(x + attention)`) by default, pre-norm
    (`x + attention(norm1(x))`) with `norm_first`. `activation` is "relu", "gelu" or a
    callable; inputs are (S, N, E), or (N, S, E) with `batch_first`, or unbatched (S, E)."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        *,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        activation = _activation(activation)
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, dtype=dtype
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = activation

    def _attention(self, x: Tensor, mask: Tensor | None, padding: Tensor | None) -> Tensor:
        out, _ = self.self_attn(
            x, x, x, attn_mask=mask, key_padding_mask=padding, need_weights=False
        )
        return self.dropout1(out)

    def _feedforward(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        """The layer applied to `src`; `src_mask` (S, S) or (N nhead, S, S) and
        `src_key_padding_mask` (N, S) as MultiheadAttention's masks (True: not attended);
        `is_causal` only says that `src_mask` is the causal mask."""
        _check_causal(is_causal, src_mask)
        x = src
        if self.norm_first:
            x = x + self._attention(self.norm1(x), src_mask, src_key_padding_mask)
            return x + self._feedforward(self.norm2(x))
        x = self.norm1(x + self._attention(x, src_mask, src_key_padding_mask))
        return self.norm2(x + self._feedforward(x))

    if TYPE_CHECKING:
        __call__ = forward


class TransformerEncoder(Module):
    """`num_layers` copies of `encoder_layer` (each with its own parameters, starting equal
    to the given layer's) applied in turn, then `norm` if given."""

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        # enable_nested_tensor and mask_check choose PyTorch's fast paths; there are none here.
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        """The layers applied to `src` in turn, with the same masks, then the norm."""
        causal = bool(is_causal)
        _check_causal(causal, mask)
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask, is_causal=causal)
        return x if self.norm is None else self.norm(x)

    if TYPE_CHECKING:
        __call__ = forward


class TransformerDecoderLayer(Module):
    """Self-attention over the target, attention from the target to the encoder's output
    `memory` (multihead_attn), then a feedforward block (linear1, activation, dropout,
    linear2), each added to its input with dropout: post-norm (`norm1(x + block(x))`) by
    default, pre-norm (`x + block(norm1(x))`) with `norm_first`. `activation` is "relu",
    "gelu" or a callable; inputs are (T, N, E), or (N, T, E) with `batch_first`, or
    unbatched (T, E)."""

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        *,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        activation = _activation(activation)
        options = {"dropout": dropout, "bias": bias, "batch_first": batch_first, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, **options)
        self.multihead_attn = MultiheadAttention(d_model, nhead, **options)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, dtype=dtype)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, dtype=dtype)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = activation

    def _self_attention(self, x: Tensor, mask: Tensor | None, padding: Tensor | None) -> Tensor:
        out, _ = self.self_attn(
            x, x, x, attn_mask=mask, key_padding_mask=padding, need_weights=False
        )
        return self.dropout1(out)

    def _memory_attention(
        self, x: Tensor, memory: Tensor, mask: Tensor | None, padding: Tensor | None
    ) -> Tensor:
        out, _ = self.multihead_attn(
            x, memory, memory, attn_mask=mask, key_padding_mask=padding, need_weights=False
        )
        return self.dropout2(out)

    def _feedforward(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool = False,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """The layer applied to `tgt` (T, N, E) attending to `memory` (S, N, E): `tgt_mask`
        (T, T) and `memory_mask` (T, S), or per head (N nhead, ...), and the key padding
        masks (N, T) and (N, S), as MultiheadAttention's masks (True: not attended);
        `tgt_is_causal` and `memory_is_causal` only say that the mask is the causal one."""
        _check_causal(tgt_is_causal, tgt_mask)
        _check_causal(memory_is_causal, memory_mask)
        x = tgt
        if self.norm_first:
            x = x + self._self_attention(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._memory_attention(
                self.norm2(x), memory, memory_mask, memory_key_padding_mask
            )
            return x + self._feedforward(self.norm3(x))
        x = self.norm1(x + self._self_attention(x, tgt_mask, tgt_key_padding_mask))
        x = self.norm2(x + self._memory_attention(x, memory, memory_mask, memory_key_padding_mask))
        return self.norm3(x + self._feedforward(x))

    if TYPE_CHECKING:
        __call__ = forward


class TransformerDecoder(Module):
    """`num_layers` copies of `decoder_layer` (each with its own parameters, starting equal
    to the given layer's) applied in turn to the target, each attending to the same
    `memory`, then `norm` if given."""

    def __init__(
        self,
        decoder_layer: TransformerDecoderLayer,
        num_layers: int,
        norm: Module | None = None,
    ) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(
        self,
        tgt: Tensor,
        memory: Tensor,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """The layers applied to `tgt` in turn, with the same memory and masks, then the
        norm. (PyTorch reads tgt_is_causal=None as "look whether tgt_mask is causal", a hint
        for its fast kernels; the numbers are the same either way, so None is False here.)"""
        causal = bool(tgt_is_causal)
        _check_causal(causal, tgt_mask)
        x = tgt
        for layer in self.layers:
            x = layer(
                x,
                memory,
                tgt_mask=tgt_mask,
                memory_mask=memory_mask,
                tgt_key_padding_mask=tgt_key_padding_mask,
                memory_key_padding_mask=memory_key_padding_mask,
                tgt_is_causal=causal,
                memory_is_causal=memory_is_causal,
            )
        return x if self.norm is None else self.norm(x)

    if TYPE_CHECKING:
        __call__ = forward


class Transformer(Module):
    """An encoder (`num_encoder_layers` TransformerEncoderLayers, then a LayerNorm) and a
    decoder (`num_decoder_layers` TransformerDecoderLayers attending to the encoder's output,
    then a LayerNorm), or the `custom_encoder` / `custom_decoder` given; every parameter of
    two or more dimensions starts Xavier-uniform, as PyTorch's. Inputs are (S, N, E) and
    (T, N, E), or batch first, or unbatched."""

    def __init__(
        self,
        d_model: int = 512,
        nhead: int = 8,
        num_encoder_layers: int = 6,
        num_decoder_layers: int = 6,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        custom_encoder: Module | None = None,
        custom_decoder: Module | None = None,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        layer_args = (
            d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps, batch_first,
            norm_first, bias,
        )  # fmt: skip
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*layer_args, dtype=dtype),
                num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype),
            )
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*layer_args, dtype=dtype),
                num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, dtype=dtype),
            )
        for p in self.parameters():
            if p.ndim > 1:
                xavier_uniform_(p)
        if device is not None:
            self.to(device)
        self.d_model = d_model
        self.nhead = nhead
        self.batch_first = batch_first

    def forward(
        self,
        src: Tensor,
        tgt: Tensor,
        src_mask: Tensor | None = None,
        tgt_mask: Tensor | None = None,
        memory_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        tgt_key_padding_mask: Tensor | None = None,
        memory_key_padding_mask: Tensor | None = None,
        src_is_causal: bool | None = None,
        tgt_is_causal: bool | None = None,
        memory_is_causal: bool = False,
    ) -> Tensor:
        """The decoder's output for `tgt`, attending to the encoder's output for `src`."""
        batch = 0 if self.batch_first else 1
        if src.ndim == 3 and src.shape[batch] != tgt.shape[batch]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(
            src, mask=src_mask, src_key_padding_mask=src_key_padding_mask, is_causal=src_is_causal
        )
        return self.decoder(
            tgt,
            memory,
            tgt_mask=tgt_mask,
            memory_mask=memory_mask,
            tgt_key_padding_mask=tgt_key_padding_mask,
            memory_key_padding_mask=memory_key_padding_mask,
            tgt_is_causal=tgt_is_causal,
            memory_is_causal=memory_is_causal,
        )

    if TYPE_CHECKING:
        __call__ = forward

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """The causal mask of a sequence of `sz`: 0 on and below the diagonal, -inf above
        (position i attends to positions up to i), in the default floating dtype unless
        `dtype`."""
        return ops.triu(ops.full((sz, sz), -ops.inf, dtype=dtype, device=device), k=1)
