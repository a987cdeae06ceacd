"""Elementwise functions, where, clip and Tensor's arithmetic operators: values against NumPy,
first and second derivatives against finite differences, dtypes, broadcasting, Python scalars
as weak operands, the conventions at non-differentiable points (PyTorch's), and the standard's
special cases that NumPy misses."""

import math
import operator

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
import chainrule.nn.functional as F
from chainrule._rules import OPS
from conftest import N, T, examples, fails_on
from helpers import (
    AWAY_FROM_JUMPS,
    AWAY_FROM_ZERO,
    DIVIDEND,
    DIVISOR,
    GRID,
    OFF_GRID,
    POSITIVE,
    SHAPES,
    UNIT,
    WIDE,
    arrays,
    assert_values,
    broadcastable,
    check_grads,
    floats,
    grads_of,
    leaf,
)

FEW = examples(15)


# ----------------------------------------------------------------------------- one input

UNARY = {
    "negative": (cr.negative, np.negative, WIDE),
    "positive": (cr.positive, np.positive, WIDE),
    "copy": (lambda t: cr.asarray(t, copy=True), np.copy, WIDE),
    "abs": (cr.abs, np.abs, AWAY_FROM_ZERO),
    "square": (cr.square, np.square, WIDE),
    "sqrt": (cr.sqrt, np.sqrt, POSITIVE),
    "exp": (cr.exp, np.exp, WIDE),
    "expm1": (cr.expm1, np.expm1, WIDE),
    "log": (cr.log, np.log, POSITIVE),
    "log1p": (cr.log1p, np.log1p, floats(-0.5, 2)),
    "log2": (cr.log2, np.log2, POSITIVE),
    "log10": (cr.log10, np.log10, POSITIVE),
    "sin": (cr.sin, np.sin, WIDE),
    "cos": (cr.cos, np.cos, WIDE),
    "tan": (cr.tan, np.tan, floats(-1.2, 1.2)),
    "asin": (cr.asin, np.asin, UNIT),
    "acos": (cr.acos, np.acos, UNIT),
    "atan": (cr.atan, np.atan, WIDE),
    "sinh": (cr.sinh, np.sinh, WIDE),
    "cosh": (cr.cosh, np.cosh, WIDE),
    "tanh": (cr.tanh, np.tanh, WIDE),
    "asinh": (cr.asinh, np.asinh, WIDE),
    "acosh": (cr.acosh, np.acosh, floats(1.5, 3)),
    "atanh": (cr.atanh, np.atanh, UNIT),
    "sigmoid": (F.sigmoid, lambda a: 1 / (1 + np.exp(-a)), WIDE),
    "relu": (F.relu, lambda a: np.maximum(a, 0.0), AWAY_FROM_ZERO),
    "sign": (cr.sign, np.sign, AWAY_FROM_JUMPS),
    "floor": (cr.floor, np.floor, AWAY_FROM_JUMPS),
    "ceil": (cr.ceil, np.ceil, AWAY_FROM_JUMPS),
    "trunc": (cr.trunc, np.trunc, AWAY_FROM_JUMPS),
    "round": (cr.round, np.round, AWAY_FROM_JUMPS),
}
PIECEWISE_CONSTANT = ["sign", "floor", "ceil", "trunc", "round"]


@pytest.mark.parametrize("name", UNARY)
@given(data=st.data())
def test_unary_values_and_derivatives(name, data):
    fn, np_fn, elements = UNARY[name]
    a = data.draw(arrays(data.draw(SHAPES), elements))
    assert_values(fn(T(a)), np_fn(a))
    check_grads(fn, leaf(a))


@pytest.mark.parametrize("name", UNARY)
@examples(5)
@given(data=st.data())
def test_unary_float32_gives_float32_values_and_gradients(name, data):
    fn, _, elements = UNARY[name]
    x = leaf(data.draw(arrays(data.draw(SHAPES), elements)), "float32")
    out = fn(x)
    assert out.dtype == cr.float32
    cr.sum(out).backward()
    assert x.grad.dtype == cr.float32
    assert x.grad.shape == x.shape


@pytest.mark.parametrize("name", PIECEWISE_CONSTANT)
def test_piecewise_constant_functions_have_zero_gradient(name):
    fn = UNARY[name][0]
    (g,) = grads_of(fn, leaf([-1.5, -0.5, 0.0, 0.5, 1.0, 2.5]))
    assert_values(g, np.zeros(6), atol=0)


# ----------------------------------------------------------------------------- two inputs

BINARY = {
    "add": (cr.add, np.add, WIDE, WIDE),
    "subtract": (cr.subtract, np.subtract, WIDE, WIDE),
    "multiply": (cr.multiply, np.multiply, WIDE, WIDE),
    "divide": (cr.divide, np.divide, WIDE, AWAY_FROM_ZERO),
    "pow": (cr.pow, np.pow, POSITIVE, WIDE),
    "atan2": (cr.atan2, np.atan2, AWAY_FROM_ZERO, WIDE),
    "maximum": (cr.maximum, np.maximum, GRID, OFF_GRID),
    "minimum": (cr.minimum, np.minimum, GRID, OFF_GRID),
    "floor_divide": (cr.floor_divide, np.floor_divide, DIVIDEND, DIVISOR),
    "remainder": (cr.remainder, np.remainder, DIVIDEND, DIVISOR),
    # hypot: away from x == y == 0, where it has a kink.
    "hypot": (cr.hypot, np.hypot, AWAY_FROM_ZERO, WIDE),
    "logaddexp": (cr.logaddexp, np.logaddexp, WIDE, WIDE),
    # copysign: kinks at x == 0 and jumps at y == 0.
    "copysign": (cr.copysign, np.copysign, AWAY_FROM_ZERO, AWAY_FROM_ZERO),
    # nextafter: jumps where x == y; the two grids never meet.
    "nextafter": (cr.nextafter, np.nextafter, GRID, OFF_GRID),
}


@pytest.mark.parametrize("name", BINARY)
@given(data=st.data())
def test_binary_values_and_derivatives_with_broadcasting(name, data):
    fn, np_fn, x_elements, y_elements = BINARY[name]
    x_shape, y_shape = data.draw(broadcastable(2)).input_shapes
    a = data.draw(arrays(x_shape, x_elements))
    b = data.draw(arrays(y_shape, y_elements))
    assert_values(fn(T(a), T(b)), np_fn(a, b))
    check_grads(fn, leaf(a), leaf(b))
    x, y = leaf(a), leaf(b)
    gx, gy = grads_of(fn, x, y)
    assert gx.shape == x_shape
    assert gy.shape == y_shape


@pytest.mark.parametrize("name", BINARY)
@examples(5)
@given(data=st.data())
def test_binary_with_a_python_scalar_on_either_side(name, data):
    fn, np_fn, x_elements, y_elements = BINARY[name]
    shape = data.draw(SHAPES)
    a = data.draw(arrays(shape, x_elements))
    b = data.draw(arrays(shape, y_elements))
    s, r = data.draw(x_elements), data.draw(y_elements)
    assert_values(fn(T(a), r), np_fn(a, r))
    assert_values(fn(s, T(b)), np_fn(s, b))
    check_grads(lambda x: fn(x, r), leaf(a))
    check_grads(lambda y: fn(s, y), leaf(b))


@pytest.mark.parametrize("name", BINARY)
@examples(5)
@given(data=st.data())
def test_binary_float32_gives_float32_values_and_gradients(name, data):
    fn, _, x_elements, y_elements = BINARY[name]
    x_shape, y_shape = data.draw(broadcastable(2)).input_shapes
    x = leaf(data.draw(arrays(x_shape, x_elements)), "float32")
    y = leaf(data.draw(arrays(y_shape, y_elements)), "float32")
    r = data.draw(y_elements)
    assert fn(x, y).dtype == cr.float32
    assert fn(x, r).dtype == cr.float32
    assert fn(r, y).dtype == cr.float32
    gx, gy = grads_of(fn, x, y)
    assert gx.dtype == cr.float32
    assert gy.dtype == cr.float32


@fails_on(
    "torch",
    reason="PyTorch promotes float32 with a 0-d float64 to float32 (0-d tensors count as scalars)",
    strict=False,
)
@pytest.mark.parametrize("name", BINARY)
@examples(5)
@given(data=st.data())
def test_binary_float32_with_float64_promotes_and_keeps_each_gradient_dtype(name, data):
    fn, _, x_elements, y_elements = BINARY[name]
    x_shape, y_shape = data.draw(broadcastable(2)).input_shapes
    x = leaf(data.draw(arrays(x_shape, x_elements)), "float32")
    y = leaf(data.draw(arrays(y_shape, y_elements)), "float64")
    assert fn(x, y).dtype == cr.float64
    gx, gy = grads_of(fn, x, y)
    assert (gx.dtype, gx.shape) == (cr.float32, x_shape)
    assert (gy.dtype, gy.shape) == (cr.float64, y_shape)


# ----------------------------------------------------------------------------- Tensor operators

OPERATORS = {
    "+": (operator.add, WIDE, WIDE),
    "-": (operator.sub, WIDE, WIDE),
    "*": (operator.mul, WIDE, WIDE),
    "/": (operator.truediv, WIDE, AWAY_FROM_ZERO),
    "//": (operator.floordiv, DIVIDEND, DIVISOR),
    "%": (operator.mod, DIVIDEND, DIVISOR),
    "**": (operator.pow, POSITIVE, WIDE),
}


@pytest.mark.parametrize("symbol", OPERATORS)
@examples(10)
@given(data=st.data())
def test_operators_on_tensors_and_python_scalars_on_either_side(symbol, data):
    op, x_elements, y_elements = OPERATORS[symbol]
    x_shape, y_shape = data.draw(broadcastable(2)).input_shapes
    a = data.draw(arrays(x_shape, x_elements))
    b = data.draw(arrays(y_shape, y_elements))
    s, r = data.draw(x_elements), data.draw(y_elements)
    assert_values(op(T(a), T(b)), op(a, b))
    assert_values(op(T(a), r), op(a, r))
    assert_values(op(s, T(b)), op(s, b))
    check_grads(op, leaf(a), leaf(b))
    check_grads(lambda x: op(x, r), leaf(a))
    check_grads(lambda y: op(s, y), leaf(b))


@pytest.mark.parametrize("symbol", OPERATORS)
def test_operators_keep_float32_with_python_scalars(symbol):
    op = OPERATORS[symbol][0]
    x = leaf([0.75, 1.5, 2.25], "float32")
    for out in (op(x, 2.0), op(2.0, x), op(x, 2), op(2, x)):
        assert out.dtype == cr.float32
    (g,) = grads_of(lambda t: op(t, 2.0) + op(2.0, t), x)
    assert g.dtype == cr.float32


@given(a=arrays(SHAPES, AWAY_FROM_ZERO))
def test_unary_operators_negate_keep_and_take_absolute_values(a):
    assert_values(-T(a), -a)
    assert_values(+T(a), +a)
    assert_values(abs(T(a)), np.abs(a))
    check_grads(operator.neg, leaf(a))
    check_grads(operator.pos, leaf(a))
    check_grads(abs, leaf(a))


# ----------------------------------------------------------------------------- where and clip


@given(data=st.data())
def test_where_values_and_derivatives_with_broadcasting(data):
    c_shape, x_shape, y_shape = data.draw(broadcastable(3)).input_shapes
    c = data.draw(hnp.arrays(np.bool_, c_shape))
    a = data.draw(arrays(x_shape))
    b = data.draw(arrays(y_shape))
    assert_values(cr.where(T(c), T(a), T(b)), np.where(c, a, b))
    check_grads(lambda x, y: cr.where(T(c), x, y), leaf(a), leaf(b))
    x, y = leaf(a), leaf(b)
    gx, gy = grads_of(lambda x, y: cr.where(T(c), x, y), x, y)
    assert gx.shape == x_shape
    assert gy.shape == y_shape


@examples(10)
@given(a=arrays(SHAPES), c=st.booleans())
def test_where_with_a_python_scalar_branch_keeps_float32(a, c):
    cond = T(np.full(a.shape, c))
    x = leaf(a, "float32")
    assert_values(cr.where(cond, x, 0.5), np.where(c, a.astype(np.float32), 0.5))
    assert cr.where(cond, x, 0.5).dtype == cr.float32
    (g,) = grads_of(lambda t: cr.where(cond, 0.5, t), x)
    assert g.dtype == cr.float32
    check_grads(lambda t: cr.where(cond, t, 0.5), leaf(a))


@pytest.mark.regression
def test_where_of_the_condition_alone_gives_its_nonzero_indices_as_numpy():
    # scikit-learn's roc_curve calls xp.where(mask)[0] (NumPy's and PyTorch's form): chainrule's
    # where refused it with a TypeError.
    c = np.array([[True, False, True], [False, False, True]])
    got = cr.where(T(c))
    assert len(got) == 2
    for ours, numpys in zip(got, np.where(c)):
        np.testing.assert_array_equal(N(ours), numpys)
    with pytest.raises(ValueError, match="either both or neither of x1 and x2"):
        cr.where(T(c), T(np.ones(3)))


@given(
    a=arrays(SHAPES, OFF_GRID),
    lo=st.none() | st.integers(-4, 0).map(lambda k: k / 2),
    hi=st.none() | st.integers(1, 4).map(lambda k: k / 2),
)
def test_clip_with_scalar_bounds(a, lo, hi):
    expected = a if lo is None else np.maximum(a, lo)
    expected = expected if hi is None else np.minimum(expected, hi)
    assert_values(cr.clip(T(a), lo, hi), expected)
    assert cr.clip(T(a, "float32"), lo, hi).dtype == cr.float32
    check_grads(lambda x: cr.clip(x, lo, hi), leaf(a))


@given(data=st.data())
def test_clip_with_tensor_bounds_broadcast_to_x(data):
    shapes = data.draw(broadcastable(2))
    lo_shape, hi_shape = shapes.input_shapes
    a = data.draw(arrays(shapes.result_shape, OFF_GRID))
    lo = data.draw(arrays(lo_shape, st.integers(-4, 0).map(lambda k: k / 2)))
    hi = data.draw(arrays(hi_shape, st.integers(1, 4).map(lambda k: k / 2)))
    assert_values(cr.clip(T(a), T(lo), T(hi)), np.minimum(np.maximum(a, lo), hi))
    check_grads(cr.clip, leaf(a), leaf(lo), leaf(hi))
    x, tlo, thi = leaf(a), leaf(lo), leaf(hi)
    gx, glo, ghi = grads_of(cr.clip, x, tlo, thi)
    assert (gx.shape, glo.shape, ghi.shape) == (a.shape, lo_shape, hi_shape)


# ------------------------------------------------- hypot, reciprocal, signbit, complex parts


@pytest.mark.parametrize("name", BINARY)
@examples(5)
@given(data=st.data())
def test_binary_python_scalars_are_weak_on_either_side(name, data):
    fn, np_fn, x_elements, y_elements = BINARY[name]
    shape = data.draw(SHAPES)
    a = data.draw(arrays(shape, x_elements)).astype(np.float32)
    b = data.draw(arrays(shape, y_elements)).astype(np.float32)
    s, r = data.draw(x_elements), data.draw(y_elements)
    x, y = leaf(a, "float32"), leaf(b, "float32")
    for out, expected in ((fn(x, r), np_fn(a, r)), (fn(s, y), np_fn(s, b))):
        assert out.dtype == cr.float32
        assert_values(out, expected, rtol=1e-6, atol=1e-7)
    gx, gy = grads_of(lambda x, y: fn(x, r) + fn(s, y), x, y)
    assert (gx.dtype, gy.dtype) == (cr.float32, cr.float32)
    check_grads(lambda t: fn(t, r), leaf(a))
    check_grads(lambda t: fn(s, t), leaf(b))


def test_nextafter_steps_one_float32_place():
    a = np.array([1.0, -2.0, 0.0], dtype=np.float32)
    b = np.array([2.0, -3.0, -1.0], dtype=np.float32)
    out = cr.nextafter(T(a), T(b))
    assert out.dtype == cr.float32
    np.testing.assert_array_equal(N(out), np.nextafter(a, b))


def test_hypot_has_gradient_zero_at_the_origin():
    gx, gy = grads_of(cr.hypot, leaf([0.0, 3.0]), leaf([0.0, -4.0]))
    assert_values(gx, [0.0, 0.6])
    assert_values(gy, [0.0, -0.8])


def test_copysign_gradient_is_the_sign_agreement_and_zero_in_y():
    x, y = leaf([1.5, 1.5, -2.0, -2.0, 0.0]), leaf([3.0, -3.0, 1.0, -1.0, -1.0])
    gx, gy = grads_of(cr.copysign, x, y)
    assert_values(gx, [1.0, -1.0, -1.0, 1.0, 0.0], atol=0)
    assert_values(gy, np.zeros(5), atol=0)


@given(a=arrays(SHAPES, AWAY_FROM_ZERO))
@FEW
def test_reciprocal_values_and_derivatives(a):
    assert_values(cr.reciprocal(T(a)), 1 / a)
    check_grads(cr.reciprocal, leaf(a))
    x = leaf(a, "float32")
    (g,) = grads_of(cr.reciprocal, x)
    assert (cr.reciprocal(x).dtype, g.dtype) == (cr.float32, cr.float32)


def test_signbit_sees_negative_zero_and_carries_no_gradient():
    a = np.array([-0.0, 0.0, -1.5, 2.0, -np.inf, np.inf])
    out = cr.signbit(leaf(a))
    assert out.dtype == cr.bool
    assert not out.requires_grad
    np.testing.assert_array_equal(N(out), np.signbit(a))


def test_real_imag_conj_of_complex_tensors():
    z = np.array([1 + 2j, -3 - 0.5j, 0j], dtype=np.complex64)
    t = T(z)
    for fn, np_fn in ((cr.real, np.real), (cr.imag, np.imag), (cr.conj, np.conj)):
        out = fn(t)
        assert out.dtype == np_fn(z).dtype
        np.testing.assert_array_equal(N(out), np_fn(z))


def test_parts_of_complex_tensors_carry_a_gradient_where_the_tensor_requires_one():
    z = T(np.array([1 + 2j]))
    for fn, want in ((cr.real, 1.0), (cr.imag, 2.0), (cr.conj, 1 - 2j)):
        assert N(fn(z))[0] == want and not fn(z).requires_grad
    z = T(np.array([1 + 2j]), requires_grad=True)
    for fn in (cr.real, cr.imag, cr.conj):
        assert fn(z).requires_grad


@given(a=arrays(SHAPES))
@examples(5)
def test_real_and_conj_of_a_real_tensor_are_differentiable_identities(a):
    for fn in (cr.real, cr.conj):
        assert_values(fn(T(a)), a, atol=0, rtol=0)
        assert fn(T(a, "float32")).dtype == cr.float32
        check_grads(fn, leaf(a))


# ------------------------------------------------------------------- non-differentiable points
# PyTorch's conventions: the subgradient of least norm, ties split evenly.


def test_abs_has_gradient_zero_at_zero():
    (g,) = grads_of(cr.abs, leaf([0.0, -2.0, 3.0]))
    assert_values(g, [0.0, -1.0, 1.0], atol=0)


def test_relu_has_gradient_zero_at_zero():
    (g,) = grads_of(F.relu, leaf([0.0, -2.0, 3.0]))
    assert_values(g, [0.0, 0.0, 1.0], atol=0)


@pytest.mark.parametrize("fn", [cr.maximum, cr.minimum])
def test_maximum_and_minimum_split_the_gradient_of_ties_evenly(fn):
    x, y = leaf([1.0, 2.0, 3.0]), leaf([1.0, 5.0, 0.0])
    gx, gy = grads_of(fn, x, y)
    win = [0.0, 0.0, 1.0] if fn is cr.maximum else [0.0, 1.0, 0.0]
    assert_values(gx, [0.5] + win[1:], atol=0)
    assert_values(gy, [0.5] + win[:0:-1], atol=0)


@pytest.mark.parametrize("fn", [cr.maximum, cr.minimum])
def test_maximum_and_minimum_split_ties_with_a_broadcast_or_scalar_operand(fn):
    x, y = leaf([2.0, 2.0, 2.0]), leaf([2.0])
    gx, gy = grads_of(fn, x, y)
    assert_values(gx, [0.5, 0.5, 0.5], atol=0)
    assert_values(gy, [1.5], atol=0)
    (gx,) = grads_of(lambda t: fn(t, 2.0), leaf([2.0, 1.0, 3.0]))
    expected = [0.5, 0.0, 1.0] if fn is cr.maximum else [0.5, 1.0, 0.0]
    assert_values(gx, expected, atol=0)


def test_clip_passes_the_gradient_at_the_bounds_inclusive():
    (g,) = grads_of(lambda t: cr.clip(t, 1.0, 2.0), leaf([0.5, 1.0, 1.5, 2.0, 2.5]))
    assert_values(g, [0.0, 1.0, 1.0, 1.0, 0.0], atol=0)


def test_clip_sends_the_gradient_to_a_tensor_bound_only_beyond_it():
    x = leaf([0.5, 1.0, 1.5, 2.0, 2.5])
    lo, hi = leaf([1.0] * 5), leaf([2.0] * 5)
    gx, glo, ghi = grads_of(cr.clip, x, lo, hi)
    assert_values(gx, [0.0, 1.0, 1.0, 1.0, 0.0], atol=0)
    assert_values(glo, [1.0, 0.0, 0.0, 0.0, 0.0], atol=0)
    assert_values(ghi, [0.0, 0.0, 0.0, 0.0, 1.0], atol=0)


def test_floor_divide_has_zero_gradient_even_at_its_jumps():
    x, y = leaf([2.0, 3.0, -1.0]), leaf([1.0, 1.5, 0.5])
    gx, gy = grads_of(cr.floor_divide, x, y)
    assert_values(gx, np.zeros(3), atol=0)
    assert_values(gy, np.zeros(3), atol=0)


def test_bernoulli_rule_has_zero_gradient_for_the_probabilities_and_the_draw():
    # The rule behind cr.bernoulli(p): 1 where the draw is below p; piecewise constant.
    draw = T([0.3, 0.9, 0.5])
    check_grads(lambda p: OPS["bernoulli"](p, draw), leaf([0.2, 0.95, 0.7]))
    check_grads(lambda u: OPS["bernoulli"](T([0.2, 0.95, 0.7]), u), leaf([0.3, 0.9, 0.5]))
    assert N(OPS["bernoulli"](T([0.2, 0.95, 0.7]), draw)).tolist() == [0.0, 1.0, 1.0]


def test_pow_at_zero_base_has_finite_gradients():
    x, y = leaf([0.0, 0.0, 0.0]), leaf([0.0, 1.0, 2.5])
    assert_values(cr.pow(x, y), [1.0, 0.0, 0.0])
    gx, gy = grads_of(cr.pow, x, y)
    assert_values(gx, [0.0, 1.0, 0.0], atol=0)
    assert_values(gy, [0.0, 0.0, 0.0], atol=0)


def test_pow_at_zero_base_with_python_scalars_has_finite_gradients():
    (gx,) = grads_of(lambda t: t**0.0 + t**0, leaf([0.0, 2.0]))
    assert_values(gx, [0.0, 0.0], atol=0)
    (gy,) = grads_of(lambda t: 0.0**t, leaf([0.0, 1.0, 2.5]))
    assert_values(gy, [0.0, 0.0, 0.0], atol=0)


# ----------------------------------------------------------------------------- special cases
# The standard's special cases that NumPy misses; chainrule gets them right on every backend.

INF, NAN = math.inf, math.nan


def same_value(got, expected):
    """Equal values, NaN matching NaN and zeros matching in sign, for each real part."""
    for g, e in zip(np.ravel(got).view(np.float64), np.ravel(expected).view(np.float64)):
        assert (math.isnan(g) and math.isnan(e)) or (
            g == e and math.copysign(1, g) == math.copysign(1, e)
        ), (got, expected)


@pytest.mark.filterwarnings("ignore:invalid value|divide by zero")
def test_floor_divide_with_infinite_operands_is_ieee_division():
    x = [INF, -INF, INF, -INF, 1.5, -1.5, 1.5, -1.5, INF, 7.0, -7.0]
    y = [2.0, 2.0, -2.0, -2.0, INF, INF, -INF, -INF, INF, 2.0, 0.0]
    expected = [INF, -INF, -INF, INF, 0.0, -0.0, -0.0, 0.0, NAN, 3.0, -INF]
    same_value(N(cr.floor_divide(T(x), T(y))), expected)
    same_value(N(T(x) // T(y)), expected)
    same_value(N(T([INF, 3.0]) // 2.0), [INF, 1.0])
    same_value(N(-1.0 // T([INF, -INF])), [-0.0, 0.0])
    assert N(cr.floor_divide(T([7, -7]), T([2, 2]))).tolist() == [3, -4]


@pytest.mark.filterwarnings("ignore:invalid value")
def test_in_place_floor_divide_with_infinite_operands():
    x = T([INF, 1.5, -1.5])
    x //= T([2.0, -INF, INF])
    same_value(N(x), [INF, -0.0, -0.0])


@pytest.mark.filterwarnings("ignore:invalid value")
def test_complex_expm1_special_cases():
    cases = [  # (input, result); a dict would merge the signed zeros
        (complex(0.0, 0.0), complex(0.0, 0.0)),
        (complex(-0.0, 0.0), complex(0.0, 0.0)),
        (complex(0.0, -0.0), complex(0.0, -0.0)),
        (complex(INF, 0.0), complex(INF, 0.0)),
        (complex(INF, INF), complex(INF, NAN)),
        (complex(INF, NAN), complex(INF, NAN)),
        (complex(-INF, INF), complex(-1.0, 0.0)),
        (complex(-INF, NAN), complex(-1.0, 0.0)),
        (complex(NAN, 0.0), complex(NAN, 0.0)),
        (complex(NAN, 2.0), complex(NAN, NAN)),
        (complex(1.0, INF), complex(NAN, NAN)),
    ]
    got = N(cr.expm1(T([z for z, _ in cases], "complex128")))
    same_value(got, np.array([r for _, r in cases]))
    z = np.array([0.5 + 0.25j, -1e-10 + 1e-10j])
    np.testing.assert_allclose(N(cr.expm1(T(z))), np.expm1(z), rtol=1e-15)


def test_complex_tanh_at_infinite_real_part():
    z = [complex(INF, 0.5), complex(INF, 2.0), complex(INF, -2.0), complex(-INF, 2.0)]
    same_value(
        N(cr.tanh(T(z, "complex128"))), np.array([1 + 0j, 1 + 0j, complex(1, -0.0), -1 + 0j])
    )
    w = np.array([0.3 + 0.2j, -2 + 1j])
    np.testing.assert_allclose(N(cr.tanh(T(w, "complex64"))), np.tanh(w.astype(np.complex64)))


# ------------------------------------------------------------------- rules gradchecked here

# The rules that the gradient tests of this file check (each name of UNARY and BINARY is
# gradchecked by name above); each test file names its own in GRADCHECKED (see
# test_rule_table.py).
GRADCHECKED = set(UNARY) | set(BINARY) | {"where", "reciprocal", "bernoulli"}
