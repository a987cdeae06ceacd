"""matmul (and `@`), tensordot and vecdot: values against NumPy, first and second derivatives
against finite differences, gradient shapes under broadcasting batch dimensions, float32."""

import math
import operator
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
from conftest import T, examples
from helpers import MAX_SIZE, SHAPES, arrays, assert_values, check_grads, grads_of, leaf

GRADCHECKED = {"matmul"}

SIDE = st.integers(1, 3)
BATCHES = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=2)


def _small(shapes):
    return all(math.prod(s) <= MAX_SIZE for s in shapes)


MATMUL_SHAPES = {
    "1-D @ 1-D": st.builds(lambda k: ((k,), (k,)), SIDE),
    "1-D @ 2-D": st.builds(lambda k, m: ((k,), (k, m)), SIDE, SIDE),
    "2-D @ 1-D": st.builds(lambda n, k: ((n, k), (k,)), SIDE, SIDE),
    "2-D @ 2-D": st.builds(lambda n, k, m: ((n, k), (k, m)), SIDE, SIDE, SIDE),
    "batched": st.builds(
        lambda b, n, k, m: (b.input_shapes[0] + (n, k), b.input_shapes[1] + (k, m)),
        BATCHES, SIDE, SIDE, SIDE,
    ).filter(_small),
    "1-D @ batched": st.builds(
        lambda b, k, m: ((k,), b + (k, m)), BATCHES.map(lambda b: b.result_shape), SIDE, SIDE
    ).filter(_small),
    "batched @ 1-D": st.builds(
        lambda b, n, k: (b + (n, k), (k,)), BATCHES.map(lambda b: b.result_shape), SIDE, SIDE
    ).filter(_small),
}  # fmt: skip


@pytest.mark.parametrize("case", MATMUL_SHAPES)
@given(data=st.data())
def test_matmul_values_and_derivatives(case, data):
    x_shape, y_shape = data.draw(MATMUL_SHAPES[case])
    a, b = data.draw(arrays(x_shape)), data.draw(arrays(y_shape))
    assert_values(cr.matmul(T(a), T(b)), np.matmul(a, b))
    assert_values(T(a) @ T(b), a @ b)
    check_grads(cr.matmul, leaf(a), leaf(b))
    gx, gy = grads_of(operator.matmul, leaf(a), leaf(b))
    assert (gx.shape, gy.shape) == (x_shape, y_shape)


@pytest.mark.parametrize("case", MATMUL_SHAPES)
@examples(5)
@given(data=st.data())
def test_matmul_of_float32_gives_float32_values_and_gradients(case, data):
    x_shape, y_shape = data.draw(MATMUL_SHAPES[case])
    x = leaf(data.draw(arrays(x_shape)), "float32")
    y = leaf(data.draw(arrays(y_shape)), "float32")
    assert (x @ y).dtype == cr.float32
    gx, gy = grads_of(operator.matmul, x, y)
    assert (gx.dtype, gy.dtype) == (cr.float32, cr.float32)


def test_matmul_of_float32_with_float64_keeps_each_gradient_dtype():
    x = leaf([[1.0, 2.0], [3.0, 4.0]], "float32")
    y = leaf([0.5, -1.0], "float64")
    assert (x @ y).dtype == cr.float64
    gx, gy = grads_of(operator.matmul, x, y)
    assert (gx.dtype, gy.dtype) == (cr.float32, cr.float64)
    assert_values(gx, [[0.5, -1.0], [0.5, -1.0]], atol=0)
    assert_values(gy, [4.0, 6.0], atol=0)


TENSORDOT = [
    ((2,), (3,), 0),
    ((2, 3), (3, 2), 1),
    ((2, 2, 3), (2, 3, 1), 2),
    ((2, 3), (3, 2), ([1], [0])),
    ((3, 2, 2), (2, 1, 3), ((0, 2), (2, 0))),
    ((2, 3), (2, 4), ((-2,), (0,))),
]


@pytest.mark.parametrize("x_shape, y_shape, axes", TENSORDOT)
@examples(10)
@given(data=st.data())
def test_tensordot_values_and_derivatives(x_shape, y_shape, axes, data):
    a, b = data.draw(arrays(x_shape)), data.draw(arrays(y_shape))
    assert_values(cr.tensordot(T(a), T(b), axes=axes), np.tensordot(a, b, axes=axes))
    check_grads(lambda x, y: cr.tensordot(x, y, axes=axes), leaf(a), leaf(b))
    x, y = leaf(a, "float32"), leaf(b, "float32")
    assert cr.tensordot(x, y, axes=axes).dtype == cr.float32
    gx, gy = grads_of(lambda x, y: cr.tensordot(x, y, axes=axes), x, y)
    assert (gx.dtype, gx.shape, gy.dtype, gy.shape) == (cr.float32, x_shape, cr.float32, y_shape)


@given(batches=BATCHES, k=SIDE, data=st.data())
def test_vecdot_over_the_last_axis_with_broadcasting(batches, k, data):
    x_shape, y_shape = (s + (k,) for s in batches.input_shapes)
    a, b = data.draw(arrays(x_shape)), data.draw(arrays(y_shape))
    assert_values(cr.vecdot(T(a), T(b)), np.vecdot(a, b))
    check_grads(cr.vecdot, leaf(a), leaf(b))
    gx, gy = grads_of(cr.vecdot, leaf(a), leaf(b))
    assert (gx.shape, gy.shape) == (x_shape, y_shape)


@examples(10)
@given(data=st.data())
def test_vecdot_over_a_drawn_axis(data):
    shape = data.draw(SHAPES.filter(lambda s: len(s) > 0))
    axis = data.draw(st.integers(-len(shape), -1))
    a, b = data.draw(arrays(shape)), data.draw(arrays(shape))
    assert_values(cr.vecdot(T(a), T(b), axis=axis), np.vecdot(a, b, axis=axis))
    check_grads(lambda x, y: cr.vecdot(x, y, axis=axis), leaf(a), leaf(b))
    x, y = leaf(a, "float32"), leaf(b, "float32")
    assert cr.vecdot(x, y, axis=axis).dtype == cr.float32


@pytest.mark.parametrize(
    ("x_shape", "y_shape", "problem"),
    [
        ((64, 3), (16, 2), "the last axis of the first (3) must match the second-to-last of "
                           "the second (16)"),
        ((2, 5, 3), (4,), "the last axis of the first (3) must match the first of the second (4)"),
        ((), (3,), "matmul takes arrays of at least one axis, not 0-d ones"),
    ],
)  # fmt: skip
def test_matmul_of_shapes_that_do_not_fit_names_both_shapes(x_shape, y_shape, problem):
    x, y = T(np.ones(x_shape)), T(np.ones(y_shape))
    expected = f"matmul: {x_shape} @ {y_shape}: {problem}"
    with pytest.raises(ValueError, match=re.escape(expected)):
        x @ y
    with pytest.raises(ValueError, match=re.escape(expected)):
        cr.matmul(x, y)
