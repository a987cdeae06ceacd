"""nn.Embedding and functional.embedding on indices out of range: a negative index is an
IndexError as in PyTorch (it used to pick a row from the end, as NumPy's take does); indices
not of an integer dtype are PyTorch's RuntimeError (NumPy's cast TypeError before)."""

import numpy as np
import pytest

import chainrule.nn.functional as F
from chainrule import nn
from conftest import LIBRARY, T

UNCHECKED_GATHER = pytest.mark.skipif(
    LIBRARY in ("jax", "dask"),
    reason="JAX and Dask gather out of range without an error (NaN or another row)",
)


@UNCHECKED_GATHER
@pytest.mark.parametrize("index", [-1, -4, 4])
def test_embedding_index_out_of_range_raises_index_error(index):
    weight = T(np.arange(8.0).reshape(4, 2))
    with pytest.raises(IndexError, match="out of bounds"):
        F.embedding(T(np.array([1, index])), weight)
    with pytest.raises(IndexError, match="out of bounds"):
        nn.Embedding(4, 2, padding_idx=-1)(T(np.array([[0, index]])))


def test_embedding_in_range_and_negative_padding_index_still_look_up_their_rows():
    weight = T(np.arange(8.0).reshape(4, 2))
    out = F.embedding(T(np.array([3, 0])), weight, padding_idx=-1)
    np.testing.assert_array_equal(np.asarray(out.numpy()), [[6.0, 7.0], [0.0, 1.0]])


def test_embedding_of_floating_indices_raises_as_pytorch():
    weight = T(np.arange(8.0).reshape(4, 2))
    with pytest.raises(RuntimeError, match="'indices' to have one of the following scalar types"):
        F.embedding(T(np.array([1.0, 2.0])), weight)
