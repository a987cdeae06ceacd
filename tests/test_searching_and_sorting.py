"""Searching, set and sorting functions: argmax, argmin, count_nonzero, nonzero,
searchsorted, isin, the unique_* functions, argsort and sort: values against NumPy
(array_api_strict where NumPy lacks the option), integer results that carry no gradient, and
sort's first and second derivatives against finite differences."""

import math

import array_api_strict as xs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
from conftest import N, T, fails_on
from helpers import (
    GRID,
    NONEMPTY,
    SHAPES,
    arrays,
    assert_values,
    axes_of,
    check_unary,
    grads_of,
    leaf,
)


def distinct_arrays(shape):
    """Arrays without ties: sort is differentiable there."""
    return hnp.arrays(np.float64, shape, elements=GRID.map(lambda v: v / 3), unique=True)


# ----------------------------------------------------------------------------- searching


def integer_result(t, expected):
    """An integer tensor with `expected` values, cut from the graph."""
    assert t.dtype.kind == "i" and not t.requires_grad
    assert N(t).shape == np.shape(expected)
    np.testing.assert_array_equal(N(t), expected)


@given(data=st.data())
def test_argmax_and_argmin_with_ties_and_keepdims(data):
    a = data.draw(arrays(data.draw(SHAPES), GRID))
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1)) if a.ndim else None
    keepdims = data.draw(st.booleans())
    x = leaf(a)
    integer_result(
        cr.argmax(x, axis=axis, keepdims=keepdims), np.argmax(a, axis, keepdims=keepdims)
    )
    integer_result(
        cr.argmin(x, axis=axis, keepdims=keepdims), np.argmin(a, axis, keepdims=keepdims)
    )


@fails_on(
    "torch", reason="array-api-compat's count_nonzero for PyTorch errs with keepdims", strict=False
)
@given(data=st.data())
def test_count_nonzero(data):
    a = data.draw(arrays(data.draw(SHAPES), GRID))
    axis = data.draw(st.none() | axes_of(a.ndim)) if a.ndim else None
    keepdims = data.draw(st.booleans())
    integer_result(
        cr.count_nonzero(T(a), axis=axis, keepdims=keepdims),
        np.count_nonzero(a, axis=axis, keepdims=keepdims),
    )


@given(a=arrays(NONEMPTY, GRID))
def test_nonzero(a):
    out = cr.nonzero(leaf(a))
    expected = np.nonzero(a)
    assert isinstance(out, tuple) and len(out) == a.ndim
    for t, e in zip(out, expected):
        integer_result(t, e)


@given(data=st.data())
def test_searchsorted_with_side_and_sorter(data):
    values = np.asarray(data.draw(st.lists(GRID, min_size=1, max_size=5)))
    queries = data.draw(arrays(data.draw(SHAPES), GRID))
    side = data.draw(st.sampled_from(["left", "right"]))
    if data.draw(st.booleans()):
        sorter = np.argsort(values, stable=True)
        out = cr.searchsorted(T(values), T(queries), side=side, sorter=T(sorter))
    else:
        sorter = None
        values = np.sort(values)
        out = cr.searchsorted(T(values), T(queries), side=side)
    integer_result(out, np.searchsorted(values, queries, side=side, sorter=sorter))


# ----------------------------------------------------------------------------- sets

WITH_NAN = GRID | st.just(math.nan)


def sorted_unique(a):
    """np.unique's sorted values (NaNs each distinct, last), first indices, inverse (shaped
    like a) and counts."""
    values, index, inverse, counts = np.unique(
        a, return_index=True, return_inverse=True, return_counts=True, equal_nan=False
    )
    return values, index, np.reshape(inverse, a.shape), counts


@given(
    a=hnp.arrays(np.int64, SHAPES, elements=st.integers(-5, 5)),
    b=hnp.arrays(np.int64, SHAPES, elements=st.integers(-5, 5)),
    invert=st.booleans(),
)
def test_isin_against_numpy(a, b, invert):
    out = cr.isin(T(a), T(b), invert=invert)
    assert out.dtype == cr.bool and not out.requires_grad
    np.testing.assert_array_equal(N(out), np.isin(a, b, invert=invert))


def test_isin_with_scalars_floats_nan_complex_and_bool():
    assert N(cr.isin(3, T([1, 3]))).tolist() is True
    np.testing.assert_array_equal(N(cr.isin(T([1, 2, 3]), 2)), [False, True, False])
    np.testing.assert_array_equal(
        N(cr.isin(T([1.0, math.nan, 0.5]), T([math.nan, 0.5, 1.0]))), [True, False, True]
    )
    np.testing.assert_array_equal(N(cr.isin(T([1j, 2.0]), T([2.0 + 0j]))), [False, True])
    np.testing.assert_array_equal(N(cr.isin(T([True, False]), T([False]))), [False, True])
    np.testing.assert_array_equal(N(cr.isin(T([1, 2]), T(np.zeros(0, int)))), [False, False])
    x = leaf([0.5, 1.5])
    assert not cr.isin(x, T([0.5])).requires_grad


def test_searchsorted_with_a_scalar():
    out = cr.searchsorted(T([1.0, 2.0, 3.0]), 2.5)
    assert out.shape == () and int(out) == 2
    assert int(cr.searchsorted(T([1, 2, 3]), 2, side="right")) == 2


@given(a=arrays(SHAPES, WITH_NAN))
def test_unique_functions_against_numpy(a):
    x = leaf(a)
    values, index, inverse, counts = sorted_unique(a)
    out = cr.unique_all(x)
    assert out._fields == ("values", "indices", "inverse_indices", "counts")
    assert type(out).__name__ == "UniqueAllResult"
    assert_values(out.values, values, atol=0)
    assert not out.values.requires_grad
    integer_result(out.indices, index)
    integer_result(out.inverse_indices, inverse)
    integer_result(out.counts, counts)
    out = cr.unique_counts(x)
    assert out._fields == ("values", "counts")
    assert_values(out.values, values, atol=0)
    integer_result(out.counts, counts)
    out = cr.unique_inverse(x)
    assert out._fields == ("values", "inverse_indices")
    assert_values(out.values, values, atol=0)
    integer_result(out.inverse_indices, inverse)
    assert_values(cr.unique_values(x), values, atol=0)


KINDS = ("all", "counts", "inverse")


@pytest.mark.parametrize(
    "dtype",
    [
        "int64",
        "int8",
        pytest.param("uint16", marks=fails_on("torch", reason="PyTorch can't index uint16")),
        "float32",
        "bool",
    ],
)
def test_unique_values_are_sorted_whatever_the_backend_returns(dtype):
    # NumPy >= 2.3 returns the unique integers of unique_values in hash order.
    a = np.asarray([5, 3, 9, 3, 1, 0, 12, 1], dtype=dtype)
    values, index, inverse, counts = sorted_unique(a)
    x = T(a)
    for got in (cr.unique_values(x), *(getattr(cr, f"unique_{k}")(x)[0] for k in KINDS)):
        np.testing.assert_array_equal(N(got), values)
    out = cr.unique_all(x)
    np.testing.assert_array_equal(N(out.values)[N(out.inverse_indices)], a)
    integer_result(out.indices, index)
    integer_result(out.inverse_indices, inverse)
    integer_result(cr.unique_inverse(x).inverse_indices, inverse)
    integer_result(cr.unique_counts(x).counts, counts)


@fails_on("torch", reason="PyTorch's unique takes no complex values")
def test_unique_complex_values_sort_by_real_then_imaginary_part():
    a = np.asarray([1 + 1j, 1 - 1j, -2 + 5j, 1 - 1j])
    out = cr.unique_all(T(a))
    np.testing.assert_array_equal(N(out.values), [-2 + 5j, 1 - 1j, 1 + 1j])
    integer_result(out.inverse_indices, [2, 1, 0, 1])
    integer_result(out.counts, [1, 2, 1])


# ----------------------------------------------------------------------------- sorting


@given(data=st.data())
def test_argsort_and_sort_with_ties_descending_and_stable(data):
    a = data.draw(arrays(data.draw(NONEMPTY), GRID | st.just(math.nan)))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    descending = data.draw(st.booleans())
    reference = xs.asarray(a)
    expected = xs.argsort(reference, axis=axis, descending=descending, stable=True)
    integer_result(cr.argsort(T(a), axis=axis, descending=descending), np.asarray(expected))
    expected = xs.sort(reference, axis=axis, descending=descending, stable=True)
    assert_values(cr.sort(T(a), axis=axis, descending=descending), np.asarray(expected), atol=0)


@given(data=st.data())
def test_sort_derivatives(data):
    a = data.draw(distinct_arrays(data.draw(NONEMPTY)))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    descending = data.draw(st.booleans())
    sign = -1 if descending else 1
    check_unary(
        lambda x: cr.sort(x, axis=axis, descending=descending),
        lambda v: sign * np.sort(sign * v, axis=axis),
        a,
    )


def test_sort_sends_each_gradient_back_to_its_original_position():
    (g,) = grads_of(lambda x: cr.sort(x) * T([1.0, 10.0, 100.0]), leaf([3.0, 1.0, 2.0]))
    assert_values(g, [100.0, 1.0, 10.0], atol=0)
    (g,) = grads_of(
        lambda x: cr.sort(x, descending=True) * T([1.0, 10.0, 100.0]), leaf([3.0, 1.0, 2.0])
    )
    assert_values(g, [1.0, 100.0, 10.0], atol=0)
