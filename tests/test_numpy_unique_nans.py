"""np.unique on tensors counts NaNs as one value, as NumPy's default equal_nan=True does (the
standard's unique_* functions keep each NaN): values, first indices, inverse and counts."""

import numpy as np
import pytest

import chainrule as cr
from conftest import N

FLAGS = [
    {},
    {"return_index": True},
    {"return_inverse": True},
    {"return_counts": True},
    {"return_index": True, "return_inverse": True, "return_counts": True},
    {"return_counts": True, "equal_nan": False},
]
ARRAYS = {
    "two nans": np.array([3.0, np.nan, 1.0, np.nan, 3.0]),
    "matrix": np.array([[np.nan, 2.0], [np.nan, np.nan]]),
    "all nan": np.array([np.nan, np.nan]),
    "complex": np.array([1 + 1j, np.nan, 2 - 1j, np.nan, 1 + 1j]),
    "integers": np.array([3, 1, 3]),
}


@pytest.mark.parametrize("flags", FLAGS, ids=str)
@pytest.mark.parametrize("name", ARRAYS)
def test_numpy_unique_treats_nans_as_numpy_does(name, flags):
    a = ARRAYS[name]
    expected = np.unique(a, **flags)
    out = np.unique(cr.asarray(a), **flags)
    expected = expected if isinstance(expected, tuple) else (expected,)
    out = out if isinstance(out, tuple) else (out,)
    assert len(out) == len(expected)
    for got, want in zip(out, expected):
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(N(got), want)
