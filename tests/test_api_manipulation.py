"""Array API manipulation, indexing, searching, set and sorting functions: values against NumPy
(array_api_strict where NumPy lacks the option), first and second derivatives of the
differentiable ones against finite differences, and integer results that carry no gradient."""

import math

import array_api_strict as xs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
from chainrule import _backend
from chainrule._rules import OPS
from conftest import BACKEND, N, T, fails_on
from helpers import GRID, SHAPES, arrays, assert_values, broadcastable, check_grads, grads_of, leaf
from test_ops_shape import check_unary

GRADCHECKED = {"repeat", "roll", "tile", "unstack", "take_along_axis", "take_along_add"}

NONEMPTY = SHAPES.filter(lambda s: len(s) > 0)
DASK_REPEAT = "Dask's repeat takes one integer count, not an array of counts"
DASK_UNIQUE = (
    "Dask's unique values have an unknown size until computed (NaN chunks): they can't be "
    "sorted by a gather"
)


def axes_of(ndim, min_size=0):
    """Distinct axes of a tensor of `ndim` dimensions, negative ones included, in any order."""
    return st.lists(
        st.integers(-ndim, ndim - 1), min_size=min_size, max_size=ndim, unique_by=lambda a: a % ndim
    ).map(tuple)


def distinct_arrays(shape):
    """Arrays without ties: sort is differentiable there."""
    return hnp.arrays(np.float64, shape, elements=GRID.map(lambda v: v / 3), unique=True)


# ----------------------------------------------------------------------------- manipulation


@given(data=st.data())
def test_broadcast_arrays(data):
    shapes = data.draw(broadcastable(data.draw(st.integers(1, 3))))
    parts = [data.draw(arrays(s)) for s in shapes.input_shapes]
    out = cr.broadcast_arrays(*(T(p) for p in parts))
    assert isinstance(out, tuple)  # a tuple in 2025.12, a list before
    for t, expected in zip(out, np.broadcast_arrays(*parts)):
        assert_values(t, expected)
    check_grads(lambda *xs: cr.broadcast_arrays(*xs), *(leaf(p) for p in parts))


def test_broadcast_arrays_and_broadcast_to_keep_bool_and_integer_dtypes():
    b, i = T([True, False]), T([[1], [2]], "int64")
    out_b, out_i = cr.broadcast_arrays(b, i)
    assert (out_b.dtype, out_i.dtype) == (cr.bool, cr.int64)
    assert N(out_b).tolist() == [[True, False], [True, False]]
    assert N(cr.broadcast_to(b, (2,))).tolist() == [True, False]
    assert cr.broadcast_arrays() == ()


@given(shapes=broadcastable(4).map(lambda b: b.input_shapes))
def test_broadcast_shapes(shapes):
    assert cr.broadcast_shapes(*shapes) == np.broadcast_shapes(*shapes)


def test_broadcast_shapes_of_nothing_unknown_sizes_and_mismatches():
    assert cr.broadcast_shapes() == ()
    assert cr.broadcast_shapes((0, 1), (3,)) == (0, 3)
    assert cr.broadcast_shapes((None, 1), (2, 4)) == (None, 4)
    assert cr.broadcast_shapes((2, None), (1,)) == (2, None)
    with pytest.raises(ValueError, match="do not broadcast"):
        cr.broadcast_shapes((2, 3), (4, 3))


@given(data=st.data())
def test_moveaxis(data):
    a = data.draw(arrays(data.draw(NONEMPTY)))
    source = data.draw(axes_of(a.ndim))
    destination = data.draw(axes_of(a.ndim, len(source)).filter(lambda d: len(d) == len(source)))
    if len(source) == 1 and data.draw(st.booleans()):
        source, destination = source[0], destination[0]
    check_unary(
        lambda x: cr.moveaxis(x, source, destination),
        lambda v: np.moveaxis(v, source, destination),
        a,
    )


def test_moveaxis_rejects_unmatched_or_repeated_axes():
    x = T(np.zeros((2, 3, 4)))
    with pytest.raises(ValueError):
        cr.moveaxis(x, (0, 1), (2,))
    with pytest.raises(ValueError):
        cr.moveaxis(x, (0, -3), (1, 2))
    with pytest.raises(IndexError):
        cr.moveaxis(x, 3, 0)


@given(data=st.data())
def test_repeat_by_a_count(data):
    a = data.draw(arrays(data.draw(SHAPES)))
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1)) if a.ndim else None
    repeats = data.draw(st.integers(0, 2))
    check_unary(
        lambda x: cr.repeat(x, repeats, axis=axis), lambda v: np.repeat(v, repeats, axis=axis), a
    )


@fails_on("dask", reason=DASK_REPEAT)
@given(data=st.data())
def test_repeat_by_an_array_of_counts(data):
    a = data.draw(arrays(data.draw(SHAPES)))
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1)) if a.ndim else None
    n = a.size if axis is None else a.shape[axis]
    counts = np.asarray(data.draw(st.lists(st.integers(0, 2), min_size=1, max_size=1) | (
        st.lists(st.integers(0, 2), min_size=n, max_size=n)
    )))  # fmt: skip
    c = T(counts, "int64")
    check_unary(lambda x: cr.repeat(x, c, axis=axis), lambda v: np.repeat(v, counts, axis=axis), a)


@fails_on("dask", reason=DASK_REPEAT)
def test_repeat_sums_the_gradients_of_the_copies():
    (g,) = grads_of(
        lambda x: cr.repeat(x, T([3, 0, 1], "int64")) * T([1.0, 2, 3, 4]), leaf([1.0, 2, 3])
    )
    assert_values(g, [6.0, 0.0, 4.0], atol=0)


@given(data=st.data())
def test_roll(data):
    a = data.draw(arrays(data.draw(SHAPES)))
    shifts = st.integers(-4, 4)
    if a.ndim and data.draw(st.booleans()):
        axis = data.draw(axes_of(a.ndim, 1))
        shift = data.draw(
            shifts | st.lists(shifts, min_size=len(axis), max_size=len(axis)).map(tuple)
        )
        if len(axis) == 1 and data.draw(st.booleans()):
            axis = axis[0]
    else:
        axis, shift = None, data.draw(shifts)
    check_unary(lambda x: cr.roll(x, shift, axis=axis), lambda v: np.roll(v, shift, axis=axis), a)


def test_roll_rejects_shifts_that_do_not_match_the_axes():
    x = T(np.zeros((2, 3)))
    with pytest.raises(ValueError):
        cr.roll(x, (1, 2), axis=(0,))
    with pytest.raises(ValueError):
        cr.roll(x, (1, 2))


@given(data=st.data())
def test_tile(data):
    a = data.draw(arrays(data.draw(SHAPES.filter(lambda s: math.prod(s) <= 4))))
    reps = tuple(data.draw(st.lists(st.integers(0, 2), max_size=3)))
    check_unary(lambda x: cr.tile(x, reps), lambda v: np.tile(v, reps), a)


@given(data=st.data())
def test_unstack(data):
    a = data.draw(arrays(data.draw(NONEMPTY)))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    out = cr.unstack(T(a), axis=axis)
    expected = np.unstack(a, axis=axis)
    assert isinstance(out, tuple) and len(out) == len(expected)
    for t, e in zip(out, expected):
        assert_values(t, e)
    check_grads(lambda x: cr.unstack(x, axis=axis), leaf(a))
    # Only some outputs used: the others contribute zeros, to every order.
    check_grads(lambda x: cr.unstack(x, axis=axis)[-1] ** 2, leaf(a))


def test_unstack_is_one_node_and_unused_slices_get_zero_gradient():
    x = leaf([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    parts = cr.unstack(x, axis=0)
    assert len({p.grad_fn for p in parts}) == 1
    (g,) = grads_of(lambda t: cr.unstack(t, axis=1)[1] * T([1.0, 2.0, 3.0]), x)
    assert_values(g, [[0.0, 1.0], [0.0, 2.0], [0.0, 3.0]], atol=0)
    with pytest.raises(IndexError):
        cr.unstack(T(1.0))


# ----------------------------------------------------------------------------- take_along_axis


@st.composite
def along_axis(draw):
    """(x shape, indices, axis): off the axis each of x and the indices has the broadcast
    size or 1; indices in [-n, n) with repeats."""
    base = draw(NONEMPTY.filter(lambda s: math.prod(s) <= 6))
    axis = draw(st.integers(0, len(base) - 1))
    n = base[axis]
    x_shape = tuple(k if d == axis or draw(st.booleans()) else 1 for d, k in enumerate(base))
    m = draw(st.integers(1, 3))
    i_shape = tuple(
        m if d == axis else (k if draw(st.booleans()) else 1) for d, k in enumerate(base)
    )
    indices = draw(hnp.arrays(np.int64, i_shape, elements=st.integers(-n, n - 1)))
    return x_shape, indices, axis


@given(data=st.data())
def test_take_along_axis_with_broadcasting_and_negative_indices(data):
    x_shape, indices, axis = data.draw(along_axis())
    a = data.draw(arrays(x_shape))
    negative_axis = data.draw(st.booleans())
    ax = axis - a.ndim if negative_axis else axis
    idx = T(indices)
    check_unary(
        lambda x: cr.take_along_axis(x, idx, axis=ax),
        lambda v: np.take_along_axis(v, indices, axis=ax),
        a,
    )


def test_take_along_axis_adds_the_gradients_of_repeated_indices():
    x = leaf([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    (g,) = grads_of(lambda t: cr.take_along_axis(t, T([[2, 2, -1], [0, 1, 0]], "int64")), x)
    assert_values(g, [[0.0, 0.0, 3.0], [2.0, 1.0, 0.0]], atol=0)
    with pytest.raises(ValueError):
        cr.take_along_axis(x, T([0, 1], "int64"), axis=1)


def gathered_shape(x_shape, indices, axis):
    """The shape of take_along_axis's result."""
    return tuple(
        indices.shape[axis] if d == axis else max(k, indices.shape[d])
        for d, k in enumerate(x_shape)
    )


def scatter_expected(g, indices, axis, x_shape):
    """take_along_add by NumPy: add g at indices along axis, then sum x's broadcast axes."""
    out = np.zeros(g.shape[:axis] + (x_shape[axis],) + g.shape[axis + 1 :])
    grid = list(np.indices(g.shape, sparse=True))
    grid[axis] = np.broadcast_to(indices % x_shape[axis], g.shape)
    np.add.at(out, tuple(grid), g)
    summed = tuple(d for d, k in enumerate(x_shape) if k == 1 and out.shape[d] != 1)
    return out.sum(axis=summed, keepdims=True)


@given(data=st.data())
def test_take_along_add_values_and_derivatives(data):
    x_shape, indices, axis = data.draw(along_axis())
    g = data.draw(arrays(gathered_shape(x_shape, indices, axis)))
    p = (T(indices % x_shape[axis])._data, axis, x_shape, BACKEND.float64)
    expected = scatter_expected(g, indices, axis, x_shape)
    assert_values(OPS["take_along_add"](T(g), p), expected)
    check_grads(lambda t: OPS["take_along_add"](t, p), leaf(g))


@given(data=st.data())
def test_scatter_along_axis_is_the_same_on_numpy_and_generic_backends(data):
    x_shape, indices, axis = data.draw(along_axis())
    g = data.draw(arrays(gathered_shape(x_shape, indices, axis)))
    idx = indices % x_shape[axis]
    on_numpy = _backend.take_along_add(np, g, (idx, axis, x_shape, np.float64))
    generic = _backend.take_along_add(
        xs, xs.asarray(g), (xs.asarray(idx), axis, x_shape, xs.float64)
    )
    expected = scatter_expected(g, indices, axis, x_shape)
    np.testing.assert_allclose(on_numpy, expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(np.asarray(generic), expected, rtol=1e-12, atol=1e-14)


def test_take_with_negative_indices_sends_their_gradient_back():
    (g,) = grads_of(lambda x: cr.take(x, T([-1, 0, -1], "int64")), leaf([1.0, 2.0, 3.0]))
    assert_values(g, [1.0, 0.0, 2.0], atol=0)


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


@fails_on("torch", reason="PyTorch has no unique_all (array-api-compat raises)")
@fails_on("dask", reason=DASK_UNIQUE)
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


@fails_on("torch", reason="PyTorch has no unique_all (array-api-compat raises)")
@fails_on("dask", reason=DASK_UNIQUE)
@pytest.mark.parametrize("dtype", ["int64", "int8", "uint16", "float32", "bool"])
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


@fails_on("torch", reason="PyTorch has no unique_all (array-api-compat raises)")
@fails_on("dask", reason=DASK_UNIQUE)
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
