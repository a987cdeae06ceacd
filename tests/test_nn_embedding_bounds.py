"""nn.Embedding and functional.embedding on indices out of range: a negative index is an
IndexError as in PyTorch (it used to pick a row from the end, as NumPy's take does)."""

import numpy as np
import pytest

import chainrule.nn.functional as F
from chainrule import nn
from conftest import LIBRARY, T

pytestmark = pytest.mark.skipif(
    LIBRARY in ("jax", "dask"),
    reason="JAX and Dask gather out of range without an error (NaN or another row)",
)


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
