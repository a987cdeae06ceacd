"""Index keys given as Python lists, as NumPy and PyTorch read them: an empty list selects
nothing (an integer index of no elements), in reads and writes, with gradients."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import grad
from conftest import N, T, fails_on

STRICT = "array_api_strict takes index arrays only on every axis, and assigns by none"

A = np.arange(12.0).reshape(3, 4)


@pytest.mark.parametrize(
    "key",
    [
        pytest.param([], marks=fails_on("array_api_strict", reason=STRICT), id="list"),
        pytest.param(([],), marks=fails_on("array_api_strict", reason=STRICT), id="tuple"),
        pytest.param(
            (slice(None), []), marks=fails_on("array_api_strict", reason=STRICT), id="axis 1"
        ),
        pytest.param(
            ([], []), marks=fails_on("dask", reason="Dask has no n-d fancy indexing"), id="two"
        ),
    ],
)
def test_an_empty_list_selects_nothing_and_sends_zero_gradients(key):
    x = T(A, requires_grad=True)
    y = x[key]
    assert y.shape == A[key].shape
    assert y.dtype == x.dtype
    (g,) = grad(cr.sum(y * 2.0), (x,), allow_unused=True)
    np.testing.assert_array_equal(N(g), np.zeros_like(A))


@fails_on("array_api_strict", reason=STRICT)
def test_assigning_through_an_empty_list_changes_nothing():
    x = T(A, requires_grad=True)
    y = x * 1.0
    y[[]] = 5.0
    np.testing.assert_array_equal(N(y), A)
    (g,) = grad(cr.sum(y * 3.0), (x,))
    np.testing.assert_array_equal(N(g), np.full_like(A, 3.0))


@fails_on("dask", reason="Dask has no n-d fancy indexing")
def test_a_range_indexes_as_its_list():
    # mnist_forward_forward writes `x_[range(x.shape[0]), y] = x.max()`: on PyTorch's and
    # array_api_strict's storage chainrule passed the range on and failed.
    x = T(A, requires_grad=True)
    picked = x[range(3), [0, 1, 3]]
    np.testing.assert_array_equal(N(picked), A[[0, 1, 2], [0, 1, 3]])
    (g,) = grad(cr.sum(picked * 2.0), x)
    expected = np.zeros_like(A)
    expected[[0, 1, 2], [0, 1, 3]] = 2.0
    np.testing.assert_array_equal(N(g), expected)
    assert x[range(0), 1].shape == (0,)


@fails_on("array_api_strict", reason=STRICT)
@fails_on("dask", reason="Dask has no n-d fancy indexing")
def test_a_range_key_writes_as_its_list():
    x = T(A.copy())
    x[range(3), T(np.array([0, 1, 3]))] = -1.0
    expected = A.copy()
    expected[[0, 1, 2], [0, 1, 3]] = -1.0
    np.testing.assert_array_equal(N(x), expected)
