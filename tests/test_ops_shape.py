"""Shape and order ops (reshape, permute_dims, expand_dims, squeeze, broadcast_to, concat,
stack, flip), take, astype and indexing `x[...]`: values against NumPy, first and second
derivatives against finite differences, float32."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
from chainrule._rules import OPS
from conftest import BACKEND, T, examples, fails_on, skip_on
from helpers import (
    MAX_SIZE,
    SHAPES,
    arrays,
    assert_values,
    broadcastable,
    check_grads,
    grads_of,
    leaf,
)

GRADCHECKED = {
    "reshape", "permute_dims", "broadcast_to", "flip", "concat", "stack", "astype",
    "take", "take_add", "getitem", "index_add",
}  # fmt: skip

NONEMPTY = SHAPES.filter(lambda s: len(s) > 0)


def assert_float32_in_and_out(fn, a):
    """fn keeps float32 values float32, and their gradient too."""
    x = leaf(a, "float32")
    assert fn(x).dtype == cr.float32
    (g,) = grads_of(fn, x)
    assert (g.dtype, g.shape) == (cr.float32, x.shape)


def check_unary(fn, np_fn, a):
    """Values against NumPy, both derivatives, and float32 in and out."""
    assert_values(fn(T(a)), np_fn(a))
    check_grads(fn, leaf(a))
    assert_float32_in_and_out(fn, a)


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
