"""Out-of-range indices of take, take_along_axis and gather: NumPy's IndexError on every backend
that can check them (PyTorch's take_along_dim reads past the axis without a word)."""

import pytest

import chainrule as cr
from conftest import N, T, skip_on

# Dask's values are not read before they are computed; JAX fills or clamps as its arrays do.
lazy_or_jax = skip_on("dask", "jax", reason="out-of-range indices are not checked there")


@lazy_or_jax
@pytest.mark.parametrize("index", [2, 5, -3, -7])
def test_take_along_axis_out_of_range_index_raises_index_error(index):
    x = T([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(IndexError, match=rf"index {index} is out of bounds for axis 1 with size 2"):
        cr.take_along_axis(x, T([[0, index], [1, 0]]), axis=1)


@lazy_or_jax
@pytest.mark.parametrize("index", [2, -3])
def test_take_out_of_range_index_raises_index_error(index):
    x = T([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(IndexError, match=rf"index {index} is out of bounds for axis 1 with size 2"):
        cr.take(x, T([0, index]), axis=1)


@lazy_or_jax
def test_gather_out_of_range_index_raises_index_error():
    x = T([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(IndexError, match="out of bounds"):
        x.gather(0, T([[0, 1], [2, 0]]))


def test_take_along_axis_in_range_negative_indices_count_from_the_end():
    x = T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    out = cr.take_along_axis(x, T([[-1, -3], [0, -2]]), axis=1)
    assert N(out).tolist() == [[3.0, 1.0], [4.0, 5.0]]
    out.sum().backward()
    assert N(x.grad).tolist() == [[1.0, 0.0, 1.0], [1.0, 1.0, 0.0]]
