"""NumPy's functions on tensors of degenerate shapes give NumPy's answers: np.median over
slices of no elements (NaN, or an empty result), np.tril / np.triu of a 1-D tensor (the
triangle of its rows broadcast to a square); chainrule's tril and triu refuse fewer than two
dimensions as PyTorch."""

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T

EMPTY_MEDIANS = [
    ((0, 3), {"axis": 1}),
    ((0, 3), {"axis": 0}),
    ((0, 3), {}),
    ((2, 0), {"axis": 1, "keepdims": True}),
    ((2, 0, 3), {"axis": (0, 1)}),
]


@pytest.mark.parametrize("dtype", ["float64", "float32", "int64"])
@pytest.mark.parametrize(("shape", "kwargs"), EMPTY_MEDIANS, ids=str)
def test_numpy_median_over_empty_slices_is_numpys(shape, kwargs, dtype):
    a = np.zeros(shape, dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy's "Mean of empty slice"
        expected = np.median(a, **kwargs)
    out = np.median(T(a), **kwargs)
    assert out.shape == np.shape(expected)
    assert out.dtype == np.asarray(expected).dtype
    np.testing.assert_array_equal(N(out), expected)


def test_numpy_median_still_differentiates_where_slices_have_elements():
    x = T(np.arange(12.0).reshape(3, 4) ** 1.5, requires_grad=True)
    assert gradcheck(lambda a: np.median(a, axis=1), (x,))


@pytest.mark.parametrize("k", [-1, 0, 2])
@pytest.mark.parametrize("fn", [np.tril, np.triu], ids=["tril", "triu"])
def test_numpy_tril_and_triu_of_a_vector_are_numpys_square_matrices(fn, k):
    v = np.array([1.5, -2.0, 3.0])
    out = fn(T(v), k=k)
    np.testing.assert_array_equal(N(out), fn(v, k=k))
    x = T(v, requires_grad=True)
    assert gradcheck(lambda a: fn(a, k=k), (x,))
    assert gradgradcheck(lambda a: fn(a, k=k), (x,))


@pytest.mark.parametrize("fn", [cr.tril, cr.triu], ids=["tril", "triu"])
def test_chainrules_tril_and_triu_refuse_fewer_than_two_dimensions(fn):
    with pytest.raises(ValueError, match="must have at least 2 dimensions, got 1"):
        fn(T([1.0, 2.0]))
