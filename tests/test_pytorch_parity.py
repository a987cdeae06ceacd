"""Small differences from PyTorch 2.13 found by comparing the two: where chainrule's answer
differed, the right one (PyTorch's, or the mathematics' where the two part, as
docs/from-pytorch.md says) is written here as literals, worked out by hand."""

import pytest

from chainrule import func
from conftest import T, skip_on
from helpers import assert_values


@skip_on("dask", reason="its index values are checked when computed")
@pytest.mark.parametrize("index", [-1, -3])
def test_gather_under_vmap_refuses_a_negative_index_as_outside_it(index):
    # vmap's gather counted a negative index from the end (only the eager path checked).
    x = T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    indices = T([[[0, 1]], [[index, 2]]])
    with pytest.raises(IndexError, match=rf"index {index} is out of bounds for axis 1 with size 3"):
        func.vmap(lambda i: x.gather(1, i))(indices)
    with pytest.raises(IndexError, match=rf"index {index} is out of bounds for axis 0 with size 2"):
        func.vmap(lambda i: x.gather(0, i), in_dims=1)(T([[[0, 1], [index, 0]]]))
    assert_values(
        func.vmap(lambda i: x.gather(1, i))(T([[[0, 1]], [[2, 2]]])), [[[1.0, 2.0]], [[3.0, 3.0]]]
    )
