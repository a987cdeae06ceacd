"""Manipulation functions: shape and order (reshape, permute_dims, expand_dims, squeeze,
broadcast_to, broadcast_arrays, moveaxis, concat, stack, unstack, flip, repeat, roll, tile),
take, take_along_axis, astype and indexing `x[...]`: values against NumPy (array_api_strict
where NumPy lacks the option), first and second derivatives against finite differences,
float32, and the gradients of repeated indices."""

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
from conftest import BACKEND, N, T, examples, fails_on, skip_on
from helpers import (
    MAX_SIZE,
    NONEMPTY,
    SHAPES,
    arrays,
    assert_values,
    axes_of,
    broadcastable,
    check_grads,
    check_unary,
    grads_of,
    leaf,
)

GRADCHECKED = {
    "reshape", "permute_dims", "broadcast_to", "flip", "concat", "stack", "astype",
    "take", "take_add", "getitem", "index_add",
    "repeat", "roll", "tile", "unstack", "take_along_axis", "take_along_add",
}  # fmt: skip

DASK_REPEAT = (
    "a Dask array of counts makes a result of unknown size: its gradient is refused (NumPy "
    "counts are not)"
)


# ----------------------------------------------------------------------------- shape and order


def reshape_targets(shape):
    size = math.prod(shape)
    return st.sampled_from([(-1,), (size,), shape[::-1], shape + (1,), (1,) + shape, ()])


DASK_INDEX_ADD_LIMITS = {
    "integer arrays": "Dask indexes with one integer array of at most one dimension per key",
    "mask": "the gradient of boolean-mask indexing is refused (unknown selection size)",
}


@given(data=st.data())
def test_reshape(data):
    a = data.draw(arrays(data.draw(SHAPES)))
    target = data.draw(reshape_targets(a.shape).filter(lambda s: math.prod(s) in (a.size, -1)))
    check_unary(lambda x: cr.reshape(x, target), lambda v: np.reshape(v, target), a)


@given(data=st.data())
def test_permute_dims(data):
    a = data.draw(arrays(data.draw(SHAPES)))
    axes = tuple(data.draw(st.permutations(range(a.ndim))))
    check_unary(lambda x: cr.permute_dims(x, axes), lambda v: np.permute_dims(v, axes), a)


@given(data=st.data())
def test_expand_dims(data):
    a = data.draw(arrays(data.draw(SHAPES)))
    axis = data.draw(st.integers(-a.ndim - 1, a.ndim))
    check_unary(lambda x: cr.expand_dims(x, axis=axis), lambda v: np.expand_dims(v, axis), a)


@given(data=st.data())
def test_expand_dims_with_a_tuple_of_axes(data):
    a = data.draw(arrays(data.draw(SHAPES)))
    n = a.ndim + data.draw(st.integers(1, 2))
    axis = tuple(
        data.draw(st.lists(st.integers(-n, n - 1), min_size=n - a.ndim, max_size=n - a.ndim,
                           unique_by=lambda v: v % n))
    )  # fmt: skip
    check_unary(lambda x: cr.expand_dims(x, axis=axis), lambda v: np.expand_dims(v, axis), a)


def test_expand_dims_rejects_axes_out_of_bounds_or_repeated():
    x = T([1.0, 2.0])
    with pytest.raises(IndexError, match="out of bounds"):
        cr.expand_dims(x, axis=(0, 3))
    with pytest.raises(ValueError, match="repeated axis"):
        cr.expand_dims(x, axis=(0, -3))


@given(data=st.data())
def test_squeeze_over_drawn_unit_axes(data):
    shape = list(data.draw(SHAPES))
    for position in data.draw(st.lists(st.integers(0, 3), min_size=1, max_size=2)):
        shape.insert(min(position, len(shape)), 1)
    a = data.draw(arrays(tuple(shape)))
    units = [i for i, n in enumerate(shape) if n == 1]
    axis = data.draw(
        st.sampled_from(units)
        | st.lists(st.sampled_from(units), min_size=1, unique=True).map(tuple)
    )
    check_unary(lambda x: cr.squeeze(x, axis=axis), lambda v: np.squeeze(v, axis=axis), a)


@given(data=st.data())
def test_broadcast_to(data):
    shapes = data.draw(broadcastable(1))
    a = data.draw(arrays(shapes.input_shapes[0]))
    target = shapes.result_shape
    check_unary(lambda x: cr.broadcast_to(x, target), lambda v: np.broadcast_to(v, target), a)


@given(data=st.data())
def test_flip_over_drawn_axes(data):
    a = data.draw(arrays(data.draw(SHAPES)))
    axes = st.none()
    if a.ndim:
        one = st.integers(-a.ndim, a.ndim - 1)
        axes = axes | one | st.lists(one, unique_by=lambda i: i % a.ndim).map(tuple)
    axis = data.draw(axes)
    check_unary(lambda x: cr.flip(x, axis=axis), lambda v: np.flip(v, axis=axis), a)


@given(data=st.data())
def test_concat_along_a_drawn_axis(data):
    shape = data.draw(NONEMPTY.filter(lambda s: math.prod(s) <= 4))
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    sizes = data.draw(st.lists(st.integers(1, 3), min_size=1, max_size=3))
    parts = []
    for n in sizes:
        part_shape = list(shape)
        part_shape[axis] = n
        parts.append(data.draw(arrays(tuple(part_shape))))
    assert_values(cr.concat([T(p) for p in parts], axis=axis), np.concat(parts, axis=axis))
    assert_values(cr.concat([T(p) for p in parts], axis=None), np.concat(parts, axis=None))
    check_grads(lambda *xs: cr.concat(xs, axis=axis), *(leaf(p) for p in parts))
    grads = grads_of(lambda *xs: cr.concat(xs, axis=axis), *(leaf(p, "float32") for p in parts))
    assert [(g.dtype, g.shape) for g in grads] == [(cr.float32, p.shape) for p in parts]


@given(data=st.data())
def test_stack_along_a_drawn_axis(data):
    shape = data.draw(SHAPES.filter(lambda s: math.prod(s) <= 4))
    axis = data.draw(st.integers(-len(shape) - 1, len(shape)))
    parts = data.draw(st.lists(arrays(shape), min_size=1, max_size=3))
    assert_values(cr.stack([T(p) for p in parts], axis=axis), np.stack(parts, axis=axis))
    check_grads(lambda *xs: cr.stack(xs, axis=axis), *(leaf(p) for p in parts))
    grads = grads_of(lambda *xs: cr.stack(xs, axis=axis), *(leaf(p, "float32") for p in parts))
    assert [(g.dtype, g.shape) for g in grads] == [(cr.float32, p.shape) for p in parts]


def test_concat_and_stack_send_each_part_its_own_gradient():
    x, y = leaf([1.0, 2.0]), leaf([3.0])
    gx, gy = grads_of(lambda a, b: cr.concat([a, b]) * T([1.0, 2.0, 3.0]), x, y)
    assert_values(gx, [1.0, 2.0], atol=0)
    assert_values(gy, [3.0], atol=0)
    x, y = leaf([1.0, 2.0]), leaf([4.0, 5.0])
    gx, gy = grads_of(lambda a, b: cr.stack([a, b], axis=1) * T([[1.0, 2.0]]), x, y)
    assert_values(gx, [1.0, 1.0], atol=0)
    assert_values(gy, [2.0, 2.0], atol=0)


# ---------------------------------- broadcast_arrays, moveaxis, repeat, roll, tile, unstack


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


# ----------------------------------------------------------------------------- take and astype


@given(data=st.data())
def test_take_with_repeated_indices_along_a_drawn_axis(data):
    a = data.draw(arrays(data.draw(NONEMPTY)))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[axis]
    indices = np.asarray(data.draw(st.lists(st.integers(0, n - 1), min_size=1, max_size=4)))
    idx = T(indices, "int64")
    check_unary(lambda x: cr.take(x, idx, axis=axis), lambda v: np.take(v, indices, axis=axis), a)


def test_take_adds_the_gradients_of_repeated_indices():
    (g,) = grads_of(lambda x: cr.take(x, T([2, 0, 2, 2], "int64")), leaf([1.0, 2.0, 3.0]))
    assert_values(g, [1.0, 0.0, 3.0], atol=0)


@given(data=st.data())
def test_take_add_values_and_derivatives(data):
    shape = data.draw(NONEMPTY)
    axis = data.draw(st.integers(0, len(shape) - 1))
    others = math.prod(shape) // shape[axis]
    index = st.integers(0, shape[axis] - 1)
    indices = np.asarray(data.draw(st.lists(index, min_size=1, max_size=MAX_SIZE // others)))
    g = data.draw(arrays(shape[:axis] + (indices.size,) + shape[axis + 1 :]))
    p = (T(indices, "int64")._data, axis, shape, BACKEND.float64)
    expected = np.zeros(shape)
    np.add.at(expected, (slice(None),) * axis + (indices,), g)
    assert_values(OPS["take_add"](T(g), p), expected)
    check_grads(lambda t: OPS["take_add"](t, p), leaf(g))


@given(a=arrays(SHAPES, st.floats(-3, 3)))
def test_astype_between_float64_and_float32(a):
    assert_values(cr.astype(T(a), cr.float32), a.astype(np.float32), rtol=0, atol=0)
    assert cr.astype(T(a), cr.float32).dtype == cr.float32
    assert cr.astype(T(a, "float32"), cr.float64).dtype == cr.float64
    # Finite differences through a float32 value need a step well above float32's rounding.
    check_grads(lambda x: cr.astype(x, cr.float32), leaf(a), eps=1e-3)
    check_grads(lambda x: cr.astype(x, cr.float64), leaf(a))
    x64, x32 = leaf(a), leaf(a, "float32")
    (g64,) = grads_of(lambda x: cr.astype(x, cr.float32) * 2.0, x64)
    (g32,) = grads_of(lambda x: cr.astype(x, cr.float64) * 2.0, x32)
    assert (g64.dtype, g32.dtype) == (cr.float64, cr.float32)
    assert_values(g64, np.full(a.shape, 2.0), atol=0)
    assert_values(g32, np.full(a.shape, 2.0), atol=0)


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


# ----------------------------------------------------------------------------- indexing
# Keys the Array API standard specifies: one entry per axis (or an Ellipsis), integer arrays
# only alongside integers, a boolean mask only as the sole index.


def axis_keys(n):
    """An integer or a slice for an axis of size n, in bounds as the standard asks."""
    bound = st.none() | st.integers(-n, n - 1)
    steps = st.sampled_from([None, 1, 2, -1, -2])
    return st.integers(-n, n - 1) | st.builds(slice, bound, bound, steps)


def basic_keys(shape):
    keys = st.tuples(*(axis_keys(n) for n in shape))
    with_ellipsis = st.tuples(st.integers(0, len(shape)), keys).map(
        lambda d: (Ellipsis,) + d[1][d[0] :]
    )
    return st.tuples(keys | with_ellipsis, st.integers(-1, len(shape))).map(
        lambda d: d[0] if d[1] < 0 else d[0][: d[1]] + (None,) + d[0][d[1] :]
    )


@given(data=st.data())
def test_basic_indexing_with_slices_integers_ellipsis_and_newaxis(data):
    a = data.draw(arrays(data.draw(SHAPES)))
    key = data.draw(basic_keys(a.shape))
    check_unary(lambda x: x[key], lambda v: v[key], a)


def integer_array_keys(shape):
    """Per axis an integer or an integer array (repeats and negative indices included),
    the arrays all of one drawn shape; at least one array."""
    index_shape = hnp.array_shapes(min_dims=1, max_dims=2, max_side=3).filter(
        lambda s: math.prod(s) <= 4
    )

    def per_axis(index_shape):
        entries = [
            st.integers(-n, n - 1)
            | hnp.arrays(np.int64, index_shape, elements=st.integers(-n, n - 1))
            for n in shape
        ]
        return st.tuples(*entries).filter(lambda k: any(isinstance(i, np.ndarray) for i in k))

    return index_shape.flatmap(per_axis)


@skip_on(
    "dask",
    reason="Dask indexes with one integer array of at most one dimension per key (most drawn "
    "keys have more), and a failing draw shrinks for minutes",
)
@given(data=st.data())
def test_integer_array_indexing_with_repeated_indices(data):
    a = data.draw(arrays(data.draw(NONEMPTY)))
    key = data.draw(integer_array_keys(a.shape))
    tensor_key = tuple(T(k) if isinstance(k, np.ndarray) else k for k in key)
    check_unary(lambda x: x[tensor_key], lambda v: v[key], a)


@fails_on("dask", reason=DASK_INDEX_ADD_LIMITS["integer arrays"])
def test_integer_array_indexing_adds_the_gradients_of_repeated_indices():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    (g,) = grads_of(lambda t: t[T([1, 1, 0], "int64"), T([0, 0, 1], "int64")], x)
    assert_values(g, [[0.0, 1.0], [2.0, 0.0]], atol=0)
    (g,) = grads_of(lambda t: t[[2, 0, 2]], leaf([1.0, 2.0, 3.0]))
    assert_values(g, [1.0, 0.0, 2.0], atol=0)


@fails_on("dask", reason=DASK_INDEX_ADD_LIMITS["mask"])
@given(data=st.data())
def test_boolean_mask_indexing(data):
    a = data.draw(arrays(data.draw(NONEMPTY)))
    mask_ndim = data.draw(st.integers(1, a.ndim))
    mask = data.draw(hnp.arrays(np.bool_, a.shape[:mask_ndim]))
    check_unary(lambda x: x[T(mask)], lambda v: v[mask], a)


INDEX_ADD_KEYS = {
    "basic": (slice(None), 1),
    "ellipsis": (Ellipsis, slice(None, None, -1)),
    "integer arrays": (np.array([1, 1, 0]), np.array([2, 0, 2])),
    "mask": np.array([[True, False, True], [False, False, True]]),
}


def backend_key(key):
    """`key` with its NumPy arrays as arrays of the backend under test."""
    if isinstance(key, tuple):
        return tuple(backend_key(k) for k in key)
    return BACKEND.asarray(key) if isinstance(key, np.ndarray) else key


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=fails_on("dask", reason=DASK_INDEX_ADD_LIMITS[n]))
        if n in DASK_INDEX_ADD_LIMITS
        else n
        for n in INDEX_ADD_KEYS
    ],
)
@examples(10)
@given(g_values=arrays((6,)))
def test_index_add_values_and_derivatives(name, g_values):
    key, shape = INDEX_ADD_KEYS[name], (2, 3)
    out_shape = np.zeros(shape)[key].shape
    g = g_values[: math.prod(out_shape)].reshape(out_shape)
    p = (backend_key(key), shape, BACKEND.float64)
    expected = np.zeros(shape)
    np.add.at(expected, key, g)
    assert_values(OPS["index_add"](T(g), p), expected)
    check_grads(lambda t: OPS["index_add"](t, p), leaf(g))


def test_astype_of_a_tensor_needing_grad_to_complex_records_and_to_integers_drops_the_graph():
    x = T([1.5, -2.0], requires_grad=True)
    z = cr.astype(x, cr.complex128)
    assert z.dtype == cr.complex128 and z.requires_grad
    (g,) = cr.autograd.grad(cr.sum(cr.imag(z * 1j)), x)
    assert g.dtype == cr.float64
    assert_values(g, [1.0, 1.0])
    as_int = cr.astype(x, cr.int64)
    assert as_int.dtype == cr.int64 and not as_int.requires_grad
