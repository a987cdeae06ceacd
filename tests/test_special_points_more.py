"""Values and derivatives at special points, against PyTorch 2.13's (recorded as literals):
p = 0 norms and distances (a zero gradient), logsigmoid's node, xlogy and xlog1py at x = 0,
y in {0, inf, NaN}, and quantile's gradient with respect to q; finite differences nearby."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import linalg, special
from chainrule.autograd import forward_ad as fwad
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T, examples
from helpers import AWAY_FROM_ZERO, arrays, assert_values, floats, leaf

inf, nan = math.inf, math.nan
# The rule table's primitives that the tests below gradcheck.
GRADCHECKED = {"log_sigmoid", "xlogy", "xlog1py"}
TORCH_NAMES = {"xlogy": "XlogyBackward0", "xlog1py": "SpecialXlog1PyBackward0"}


def both_modes(fn, *leaves):
    """First and second derivatives by finite differences, reverse and forward mode."""
    assert gradcheck(fn, leaves, eps=1e-6, check_forward_ad=True)
    assert gradgradcheck(fn, leaves, eps=1e-6, check_fwd_over_rev=True)


def tangent_of(fn, x, t):
    """fn(x)'s tangent along t, by forward mode."""
    with fwad.dual_level():
        return fwad.unpack_dual(fn(fwad.make_dual(x, t))).tangent


# ----------------------------------------------------------------------------- p = 0

A = [[0.0, 1.0], [2.0, 2.0]]
B = [[0.0, 3.0], [2.0, 2.0]]
P0 = {  # PyTorch's values; each result needs grad, its gradient is 0
    "vector_norm": (lambda a, b: linalg.vector_norm(a, ord=0), 3.0),
    "pairwise_distance": (lambda a, b: F.pairwise_distance(a, b, p=0, eps=0.0), [1.0, 0.0]),
    "pdist": (lambda a, b: F.pdist(a, p=0), [2.0]),
    "cdist": (lambda a, b: cr.cdist(a, b, p=0), [[1.0, 2.0], [2.0, 0.0]]),
}


@pytest.mark.parametrize("name", sorted(P0))
def test_p0_distances_have_a_zero_gradient(name):
    fn, expected = P0[name]
    a, b = leaf(A), leaf(B)
    out = fn(a, b)
    assert_values(out, expected)
    assert out.requires_grad
    ga, gb = cr.autograd.grad(cr.sum(out), (a, b), allow_unused=True, materialize_grads=True)
    assert np.all(N(ga) == 0) and np.all(N(gb) == 0)
    tangent = tangent_of(lambda x: fn(x, T(B)), T(A), T(np.ones((2, 2))))
    assert np.all(N(tangent) == 0)


@examples(8)
@given(data=arrays((2, 3), AWAY_FROM_ZERO))
def test_p0_norm_derivatives_are_zero_by_finite_differences(data):
    both_modes(lambda x: linalg.vector_norm(x, axis=-1, ord=0), leaf(data))
    both_modes(lambda x: cr.cdist(x, x[:1] + 5.0, p=0), leaf(data))


def test_cdist_below_1_is_pytorchs():
    out = cr.cdist(T(A), T(B), p=0.5)
    assert_values(out, [[2.0000000000000004, 5.82842712474619], [5.82842712474619, 0.0]])


@examples(8)
@given(data=arrays((2, 3), floats(0.5, 2)), p=st.sampled_from([0.5, 0.75]))
def test_cdist_below_1_derivatives(data, p):
    # rows of x - 3 and x differ in every element: the norm is smooth there
    both_modes(
        lambda x: cr.cdist(x, x - 3.0, p=p) + cr.cdist(x, x[:1] * 2.0 + 3.0, p=p), leaf(data)
    )


# ----------------------------------------------------------------------------- logsigmoid

X_LOGSIGMOID = [-800.0, -1.0, 0.0, 2.0, 40.0]
# PyTorch's values, first and second derivatives at X_LOGSIGMOID
LOGSIGMOID = [-800.0, -1.3132616875182228, -0.6931471805599453, -0.1269280110429725]
LOGSIGMOID += [-4.248354255291589e-18]
D1 = [1.0, 0.7310585786300049, 0.5, 0.11920292202211755, 4.248354255291589e-18]
D2 = [-0.0, -0.19661193324148185, -0.25, -0.10499358540350662, 0.0]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # sigmoid's exp(800) overflows to inf
def test_logsigmoid_is_one_node_with_pytorchs_derivatives():
    x = leaf(X_LOGSIGMOID)
    out = F.logsigmoid(x)
    assert out.grad_fn.name() == "LogSigmoidBackward0"
    assert_values(out, LOGSIGMOID, 1e-15)
    (g,) = cr.autograd.grad(cr.sum(out), x, create_graph=True)
    assert_values(g, D1, 1e-15)
    (h,) = cr.autograd.grad(cr.sum(g), x)
    # exact to the right, where PyTorch's is 0 from x ~ 37 on (docs/from-pytorch.md)
    assert_values(h, D2, 1e-15, atol=1e-17)
    assert_values(tangent_of(F.logsigmoid, T(X_LOGSIGMOID), T(np.ones(5))), D1, 1e-15)


@examples(10)
@given(data=arrays((3,), floats(-5, 5)))
def test_logsigmoid_derivatives(data):
    both_modes(F.logsigmoid, leaf(data))


# ----------------------------------------------------------------------------- xlogy, xlog1py

# (x, y): value, (d/dx, d/dy), ((d2/dx2, d2/dxdy), (d2/dydx, d2/dy2)): PyTorch's, except at
# (0, 0) (marked; docs/conventions.md), for xlogy; xlog1py at (x, y - 1).
XLOGY = {
    (0.0, inf): (0.0, (inf, 0.0), ((0.0, 0.0), (0.0, 0.0))),
    (0.0, 0.0): (0.0, (0.0, 0.0), ((0.0, 0.0), (0.0, 0.0))),  # PyTorch: d/dy NaN, NaN rows
    (0.0, nan): (nan, (nan, nan), ((0.0, nan), (nan, nan))),
    (nan, 1.0): (nan, (0.0, nan), ((0.0, 1.0), (1.0, nan))),
    (nan, 0.0): (nan, (-inf, nan), ((0.0, inf), (inf, nan))),
    (0.0, -1.0): (0.0, (0.0, 0.0), ((0.0, 0.0), (-1.0, 0.0))),
    (0.0, -inf): (0.0, (0.0, 0.0), ((0.0, 0.0), (0.0, 0.0))),
    (1.0, inf): (inf, (inf, 0.0), ((0.0, 0.0), (0.0, 0.0))),
    (1.0, 0.0): (-inf, (-inf, inf), ((0.0, inf), (inf, -inf))),
    (0.0, 2.0): (0.0, (math.log(2), 0.0), ((0.0, 0.5), (0.5, 0.0))),
}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # log(0), 0 / 0 on the way
@pytest.mark.parametrize("name", ["xlogy", "xlog1py"])
@pytest.mark.parametrize("point", sorted(XLOGY, key=repr))
def test_xlogy_at_special_points(name, point):
    fn = getattr(special, name)
    value, d1, d2 = XLOGY[point]
    x0, y0 = point
    x, y = leaf(x0), leaf(y0 - 1.0 if name == "xlog1py" else y0)
    out = fn(x, y)
    assert out.grad_fn.name() == TORCH_NAMES[name]
    assert_values(out, value)
    grads = cr.autograd.grad(out, (x, y), create_graph=True)
    assert_values(cr.stack(grads), d1)
    for g, row in zip(grads, d2):
        second = cr.autograd.grad(
            g, (x, y), allow_unused=True, materialize_grads=True, retain_graph=True
        )
        assert_values(cr.stack(second), row)
    with fwad.dual_level():
        tx = fwad.unpack_dual(fn(fwad.make_dual(T(x0), T(1.0)), T(y.numpy()))).tangent
    assert_values(tx, d1[0])


@examples(10)
@given(x=arrays((3,), floats(-2, 2)), y=arrays((3,), floats(0.2, 3)))
def test_xlogy_derivatives(x, y):
    both_modes(special.xlogy, leaf(x), leaf(y))
    both_modes(special.xlog1py, leaf(x), leaf(y))


# ----------------------------------------------------------------------------- quantile

X_QUANTILE = [[3.0, 1.0, 4.0, 1.5], [2.0, nan, 7.0, 5.0]]
WEIGHTS = [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
# PyTorch's sum(quantiles * WEIGHTS) gradient with respect to q = [0.2, 0.5, 1.0] (dim 1)
Q_GRADIENT = {"quantile": [1.5, 13.5, 0.0], "nanquantile": [13.5, 13.5, 0.0]}


@pytest.mark.parametrize("name", sorted(Q_GRADIENT))
@pytest.mark.parametrize("interpolation", ["linear", "lower", "higher", "midpoint", "nearest"])
def test_quantile_gradient_with_respect_to_q(name, interpolation):
    q = leaf([0.2, 0.5, 1.0])
    out = getattr(cr, name)(leaf(X_QUANTILE), q, dim=1, interpolation=interpolation)
    (g,) = cr.autograd.grad(cr.sum(out * T(WEIGHTS)), q, allow_unused=True)
    if interpolation == "linear":
        assert_values(g, Q_GRADIENT[name])
    else:  # a step function of q: no gradient, as PyTorch's
        assert g is None


def test_quantile_tangent_of_q_is_pytorchs():
    tangent = tangent_of(lambda q: cr.quantile(T(X_QUANTILE[0]), q), T([0.3, 0.5]), T([1.0, 2.0]))
    assert_values(tangent, [1.5, 9.0])


@examples(6)
@given(
    order=st.permutations(range(8)),
    q=arrays((2,), st.sampled_from([0.1, 0.45, 0.6, 0.9])),
)
def test_quantile_derivatives(order, q):
    # values 0.5 apart and ranks q (n - 1) off the integers: quantile is smooth there
    data = np.reshape(np.array(order, dtype=np.float64) * 0.5 - 2.0, (2, 4))
    for fn in (cr.quantile, cr.nanquantile):
        both_modes(lambda x, p, fn=fn: fn(x, p, dim=1), leaf(data), leaf(q))
