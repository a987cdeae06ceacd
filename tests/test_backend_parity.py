"""The same program on every storage library (the backend under test) gives NumPy's values,
dtypes and gradients: the differences a probe across NumPy, array-api-strict, PyTorch, JAX and
Dask found, each checked against NumPy's own answer."""

import numpy as np

import chainrule as cr
from conftest import N, T

A = np.arange(12.0).reshape(3, 4) - 5.0


def test_masked_assignment_of_a_scalar_writes_numpys_values_and_gradient():
    x = T(A, requires_grad=True)
    y = x * 2.0
    y[y < 0] = 0.0
    (y * y).sum().backward()
    want = np.where(A < 0, 0.0, 2 * A)
    np.testing.assert_allclose(N(y), want)
    np.testing.assert_allclose(N(x.grad), 2 * want * 2)


def test_masked_assignment_of_a_one_element_tensor_broadcasts_as_numpy():
    y = T(A)
    y[y < 0] = T([7.0])
    np.testing.assert_array_equal(N(y), np.where(A < 0, 7.0, A))


def test_searchsorted_answers_the_default_index_dtype_int64():
    sorted_ = T([1.0, 2.0, 2.0, 5.0])
    for side in ("left", "right"):
        found = cr.searchsorted(sorted_, T([0.0, 2.0, 6.0]), side=side)
        assert found.dtype == cr.int64
        np.testing.assert_array_equal(
            N(found), np.searchsorted([1.0, 2.0, 2.0, 5.0], [0.0, 2.0, 6.0], side=side)
        )
