"""nn.Flatten's axes against PyTorch: start_dim after end_dim is PyTorch's RuntimeError (it
used to insert an axis of length 1); negative axes count from the end."""

import numpy as np
import pytest

from chainrule import nn
from conftest import T


@pytest.mark.parametrize(("start", "end"), [(2, 1), (-1, -2), (3, 0)])
def test_flatten_with_start_after_end_raises_as_pytorch(start, end):
    with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
        nn.Flatten(start, end)(T(np.ones((2, 3, 4, 5))))


@pytest.mark.parametrize(
    ("start", "end", "shape"),
    [(1, -1, (2, 60)), (0, 2, (24, 5)), (-3, -2, (2, 12, 5)), (2, 2, (2, 3, 4, 5))],
)
def test_flatten_merges_the_axes_from_start_to_end(start, end, shape):
    x = np.arange(120.0).reshape(2, 3, 4, 5)
    out = nn.Flatten(start, end)(T(x))
    np.testing.assert_array_equal(np.asarray(out.numpy()), x.reshape(shape))
