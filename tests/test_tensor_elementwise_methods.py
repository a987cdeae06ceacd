"""PyTorch's elementwise tensor methods under PyTorch's names (x.neg(), x.sign(), x.floor(),
x.log1p(), x.eq(y), x.maximum(y), x.logsumexp(dim), x.round(decimals=), x.roll, x.triu, ...):
a port writes them as PyTorch does (they raised AttributeError); values against NumPy's,
gradients (first and second order) against finite differences."""

import numpy as np
import pytest

from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T

RNG = np.random.default_rng(7)
X = RNG.uniform(0.2, 0.8, size=(3, 4)) * RNG.choice([-1, 1], size=(3, 4))
Y = RNG.uniform(0.3, 0.9, size=(3, 4))
P = RNG.uniform(1.2, 2.0, size=(3, 4))

UNARY = {
    "neg": (lambda t: t.neg(), np.negative, X),
    "negative": (lambda t: t.negative(), np.negative, X),
    "reciprocal": (lambda t: t.reciprocal(), np.reciprocal, X),
    "rsqrt": (lambda t: t.rsqrt(), lambda a: 1 / np.sqrt(a), Y),
    "square": (lambda t: t.square(), np.square, X),
    "log2": (lambda t: t.log2(), np.log2, Y),
    "log10": (lambda t: t.log10(), np.log10, Y),
    "log1p": (lambda t: t.log1p(), np.log1p, X),
    "expm1": (lambda t: t.expm1(), np.expm1, X),
    "tan": (lambda t: t.tan(), np.tan, X),
    "asin": (lambda t: t.asin(), np.arcsin, X),
    "acos": (lambda t: t.acos(), np.arccos, X),
    "atan": (lambda t: t.atan(), np.arctan, X),
    "sinh": (lambda t: t.sinh(), np.sinh, X),
    "cosh": (lambda t: t.cosh(), np.cosh, X),
    "asinh": (lambda t: t.asinh(), np.arcsinh, X),
    "acosh": (lambda t: t.acosh(), np.arccosh, P),
    "atanh": (lambda t: t.atanh(), np.arctanh, X),
    "logsumexp": (lambda t: t.logsumexp(1), lambda a: np.log(np.exp(a).sum(1)), X),
    "logsumexp keepdim": (
        lambda t: t.logsumexp(dim=0, keepdim=True),
        lambda a: np.log(np.exp(a).sum(0, keepdims=True)),
        X,
    ),
    "roll": (lambda t: t.roll(1, 1), lambda a: np.roll(a, 1, 1), X),
    "roll flattened": (lambda t: t.roll(5), lambda a: np.roll(a, 5), X),
    "roll two dims": (lambda t: t.roll((1, -1), (0, 1)), lambda a: np.roll(a, (1, -1), (0, 1)), X),
    "tril": (lambda t: t.tril(-1), lambda a: np.tril(a, -1), X),
    "triu": (lambda t: t.triu(diagonal=1), lambda a: np.triu(a, 1), X),
}
BINARY = {
    "atan2": (lambda t, u: t.atan2(u), np.arctan2),
    "maximum": (lambda t, u: t.maximum(u), np.maximum),
    "minimum": (lambda t, u: t.minimum(u), np.minimum),
    "hypot": (lambda t, u: t.hypot(u), np.hypot),
    "logaddexp": (lambda t, u: t.logaddexp(u), np.logaddexp),
    "remainder": (lambda t, u: t.remainder(u), np.remainder),
    "copysign": (lambda t, u: t.copysign(u), np.copysign),
}
STEPS = {
    "sign": (lambda t: t.sign(), np.sign),
    "floor": (lambda t: (t * 3).floor(), lambda a: np.floor(a * 3)),
    "ceil": (lambda t: (t * 3).ceil(), lambda a: np.ceil(a * 3)),
    "trunc": (lambda t: (t * 3).trunc(), lambda a: np.trunc(a * 3)),
    "round": (lambda t: (t * 3).round(), lambda a: np.round(a * 3)),
    "round decimals": (lambda t: t.round(decimals=1), lambda a: np.round(a * 10) / 10),
    "floor_divide": (lambda t: t.floor_divide(0.3), lambda a: np.floor_divide(a, 0.3)),
}
PREDICATES = {
    "eq": (lambda t, u: t.eq(u), np.equal),
    "ne": (lambda t, u: t.ne(u), np.not_equal),
    "lt": (lambda t, u: t.lt(u), np.less),
    "le": (lambda t, u: t.le(u), np.less_equal),
    "gt": (lambda t, u: t.gt(u), np.greater),
    "ge": (lambda t, u: t.ge(u), np.greater_equal),
    "logical_and": (lambda t, u: (t > 0).logical_and(u > 0.5), lambda a, b: (a > 0) & (b > 0.5)),
    "logical_or": (lambda t, u: (t > 0).logical_or(u > 0.5), lambda a, b: (a > 0) | (b > 0.5)),
    "logical_not": (lambda t, u: (t > 0).logical_not(), lambda a, b: ~(a > 0)),
    "isnan": (lambda t, u: (t / (t - t)).isnan(), lambda a, b: np.isnan(a / (a - a))),
    "isinf": (lambda t, u: (t / 0).isinf(), lambda a, b: np.isinf(a / np.zeros_like(a))),
    "isfinite": (lambda t, u: (t / 0).isfinite(), lambda a, b: np.isfinite(a / np.zeros_like(a))),
    "signbit": (lambda t, u: t.signbit(), lambda a, b: np.signbit(a)),
}


@pytest.mark.parametrize("name", UNARY)
def test_unary_methods_match_numpy_and_differentiate(name):
    ours, numpys, values = UNARY[name]
    x = T(values, requires_grad=True)
    np.testing.assert_allclose(N(ours(x)), numpys(values), rtol=1e-13, atol=1e-15)
    assert gradcheck(ours, (x,))
    assert gradgradcheck(ours, (x,))


@pytest.mark.parametrize("name", BINARY)
def test_binary_methods_match_numpy_and_differentiate(name):
    ours, numpys = BINARY[name]
    x, y = T(X, requires_grad=True), T(Y, requires_grad=True)
    np.testing.assert_allclose(N(ours(x, y)), numpys(X, Y), rtol=1e-13, atol=1e-15)
    assert gradcheck(ours, (x, y))


@pytest.mark.parametrize("name", STEPS)
def test_step_methods_match_numpy_with_zero_gradient(name):
    ours, numpys = STEPS[name]
    x = T(X, requires_grad=True)
    # To rounding: JAX divides by a constant as a product with its reciprocal.
    np.testing.assert_allclose(N(ours(x)), numpys(X), rtol=1e-15, atol=0)
    (ours(x) * x).sum().backward()
    # d(f(x) x)/dx = f(x) where f' = 0
    np.testing.assert_allclose(N(x.grad), numpys(X), rtol=1e-15, atol=0)


@pytest.mark.parametrize("name", PREDICATES)
def test_comparison_and_predicate_methods_match_numpy(name):
    ours, numpys = PREDICATES[name]
    with np.errstate(divide="ignore", invalid="ignore"):
        want = numpys(X, Y)
        got = ours(T(X), T(Y))
    np.testing.assert_array_equal(N(got), want)
    assert str(N(got).dtype) == "bool"
