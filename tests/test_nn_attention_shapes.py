"""nn.MultiheadAttention on queries of other features and masks of other shapes: PyTorch's
errors and words (a matmul ValueError, a reshape's, or a silent broadcast before)."""

import numpy as np
import pytest

from chainrule import nn
from conftest import T


def _qkv(length=3, batch=2, source=5, e=4):
    rng = np.random.default_rng(0)
    return (
        T(rng.normal(size=(length, batch, e))),
        T(rng.normal(size=(source, batch, e))),
        T(rng.normal(size=(source, batch, e))),
    )


def test_attention_of_other_embedding_size_raises_as_pytorch():
    mha = nn.MultiheadAttention(4, 2).double()
    with pytest.raises(AssertionError, match="expecting embedding dimension of 4, but got 6"):
        mha(*_qkv(e=6))


@pytest.mark.parametrize(
    ("shape", "message"),
    [
        ((1, 5), r"2D attn_mask is \(1, 5\), but should be \(3, 5\)"),
        ((3, 1), r"2D attn_mask is \(3, 1\), but should be \(3, 5\)"),
        ((1, 3, 5), r"3D attn_mask is \(1, 3, 5\), but should be \(4, 3, 5\)"),
        ((3,), "attn_mask's dimension 1 is not supported"),
    ],
)
def test_attention_mask_of_another_shape_raises_as_pytorch(shape, message):
    mha = nn.MultiheadAttention(4, 2).double()
    with pytest.raises(RuntimeError, match=message):
        mha(*_qkv(), attn_mask=T(np.zeros(shape, dtype=bool)))


@pytest.mark.parametrize("shape", [(2, 4), (1, 5), (5,)])
def test_key_padding_mask_of_another_shape_raises_as_pytorch(shape):
    mha = nn.MultiheadAttention(4, 2).double()
    with pytest.raises(AssertionError, match=r"expecting key_padding_mask shape of \(2, 5\)"):
        mha(*_qkv(), key_padding_mask=T(np.zeros(shape, dtype=bool)))


def test_masks_of_the_right_shapes_are_taken():
    mha = nn.MultiheadAttention(4, 2).double()
    out, weights = mha(
        *_qkv(),
        attn_mask=T(np.zeros((4, 3, 5), dtype=bool)),
        key_padding_mask=T(np.zeros((2, 5), dtype=bool)),
    )
    assert out.shape == (3, 2, 4) and weights.shape == (2, 3, 5)
