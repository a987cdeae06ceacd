"""The activations PyTorch has beyond tests/test_nn_activations.py's, and the precision of
softplus, mish, elu and selu at special points: values, first and second derivatives in
reverse and forward mode against PyTorch 2.13's (float64, recorded here as literals) and
against finite differences."""

import math

import numpy as np
import pytest
from hypothesis import given

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import func
from chainrule.autograd import grad, gradcheck, gradgradcheck
from conftest import T, examples
from helpers import SHAPES, arrays, assert_values, floats, leaf

GRADCHECKED = {"softplus", "elu"}

INF = math.inf


def _both_modes(fn, *inputs):
    """First and second derivatives against finite differences, reverse and forward mode."""
    assert gradcheck(fn, inputs, check_forward_ad=True)
    assert gradgradcheck(fn, inputs, check_fwd_over_rev=True)


def _elementwise_derivatives(fn, points):
    """fn's values at points, its first and second derivatives by reverse mode (grad of
    grad) and by forward mode (jvp of jvp), for an elementwise fn."""
    x = leaf(points)
    out = fn(x)
    (g,) = grad(cr.sum(out), x, create_graph=True)
    (gg,) = grad(cr.sum(g), x)
    ones = T(np.ones(len(points)))

    def first(v):
        return func.jvp(fn, (v,), (ones,))[1]

    forward = first(T(points))
    forward2 = func.jvp(first, (T(points),), (ones,))[1]
    return out, g, gg, forward, forward2


# ------------------------------------------------ precision at special points (PyTorch's)

# name: (function, points, PyTorch's values, first and second derivatives there).
SPECIAL_POINTS = {
    "softplus": (
        F.softplus,
        [-INF, -800.0, -40.0, -1.0, 0.0, 19.5, 20.0, 20.5, 800.0, INF],
        [0.0, 0.0, 4.248354255291589e-18, 0.31326168751822286, 0.6931471805599453,
         19.500000003398267, 20.000000002061153, 20.5, 800.0, INF],
        [0.0, 0.0, 4.248354255291589e-18, 0.2689414213699951, 0.5, 0.9999999966017322,
         0.9999999979388464, 1.0, 1.0, 1.0],
        [0.0, 0.0, 4.248354255291589e-18, 0.19661193324148185, 0.25, 3.3982678777614116e-09,
         0.0, 0.0, 0.0, 0.0],
    ),
    "softplus(beta=2, threshold=5)": (
        lambda x: F.softplus(x, beta=2.0, threshold=5.0),
        [-400.0, -1.0, 2.25, 2.5, 2.75],
        [0.0, 0.06346400552148625, 2.255523872424297, 2.503357674244559, 2.75],
        [0.0, 0.11920292202211755, 0.9890130573694068, 0.9933071490757152, 1.0],
        [0.0, 0.209987170807013, 0.021732459444450486, 0.0, 0.0],
    ),
    "softplus(beta=0.5, threshold=1)": (
        lambda x: F.softplus(x, beta=0.5, threshold=1.0),
        [-1600.0, 1.0, 2.0, 3.0],
        [0.0, 1.9481539683602134, 2.6265233750364456, 3.0],
        [0.0, 0.6224593312018546, 0.7310585786300049, 1.0],
        [0.0, 0.11750185610079725, 0.0, 0.0],
    ),
    # (PyTorch's second derivative at 800 is NaN, 0 * inf in its formula; see below.)
    "mish": (
        F.mish,
        [-800.0, -40.0, -1.0, 0.0, 1.5],
        [-0.0, -1.6993417021166355e-16, -0.30340146137410895, 0.0, 1.4033782663958028],
        [0.0, -1.6568581595637197e-16, 0.059216755877395, 0.6, 1.0884879850078475],
        [0.0, -1.6143746170108038e-16, 0.34970567367064487, 0.64, -0.0021502385832350805],
    ),
    "elu": (
        F.elu,
        [-INF, -800.0, -40.0, -1e-20, -1.0, 0.5, 800.0, INF],
        [-1.0, -1.0, -1.0, -1e-20, -0.6321205588285577, 0.5, 800.0, INF],
        [0.0, 0.0, 4.248354255291589e-18, 1.0, 0.36787944117144233, 1.0, 1.0, 1.0],
        [0.0, 0.0, 4.248354255291589e-18, 1.0, 0.36787944117144233, 0.0, 0.0, 0.0],
    ),
    "elu(alpha=0.5)": (
        lambda x: F.elu(x, 0.5),
        [-800.0, -40.0, -1e-20, -1.0, 0.5],
        [-0.5, -0.5, -5e-21, -0.31606027941427883, 0.5],
        [0.0, 2.1241771276457944e-18, 0.5, 0.18393972058572117, 1.0],
        [0.0, 2.1241771276457944e-18, 0.5, 0.18393972058572117, 0.0],
    ),
    "selu": (
        F.selu,
        [-INF, -800.0, -40.0, -1e-20, -1.0, 0.5, 800.0, INF],
        [-1.7580993408473766, -1.7580993408473766, -1.7580993408473766,
         -1.7580993408473765e-20, -1.1113307378125625, 0.5253504936777402, 840.5607898843843,
         INF],
        [0.0, 0.0, 7.46902881591429e-18, 1.7580993408473766, 0.646768603034814,
         1.0507009873554805, 1.0507009873554805, 1.0507009873554805],
        [0.0, 0.0, 7.46902881591429e-18, 1.7580993408473766, 0.646768603034814, 0.0, 0.0, 0.0],
    ),
}  # fmt: skip


@pytest.mark.regression
@pytest.mark.parametrize("name", list(SPECIAL_POINTS))
def test_values_and_two_derivatives_at_special_points_are_pytorchs(name):
    # softplus's second derivative was NaN at -800 and -inf (logaddexp's gradient 1 / (1 +
    # exp(-x)) differentiated: inf / inf), and s (1 - s), not PyTorch's 0, at and above its
    # threshold; mish's was NaN at -800 through it. elu's and selu's first derivative was 0
    # from x ~ -37 on (expm1's out + 1), where PyTorch's exp(x) is 4.2e-18 at -40.
    fn, points, values, first, second = SPECIAL_POINTS[name]
    out, g, gg, forward, forward2 = _elementwise_derivatives(fn, points)
    # No absolute tolerance: a 0 is exactly 0, a 4e-18 is not.
    assert_values(out, values, rtol=1e-14, atol=0.0)
    for derivative, expected in ((g, first), (forward, first), (gg, second), (forward2, second)):
        assert_values(derivative, expected, rtol=1e-12, atol=0.0)


def test_mish_second_derivative_far_right_is_zero():
    # PyTorch's is NaN at x = 800 (tanh(softplus(x)) = 1 meets an infinite exp in its
    # formula); mish is x there, whose second derivative is 0 (docs/from-pytorch.md).
    _, g, gg, forward, forward2 = _elementwise_derivatives(F.mish, [800.0])
    assert_values(g, [1.0])
    assert_values(gg, [0.0])
    assert_values(forward2, [0.0])


@pytest.mark.parametrize(
    "fn",
    [
        F.softplus,
        lambda x: F.softplus(x, beta=2.0, threshold=3.0),
        lambda x: F.softplus(x, beta=-1.5, threshold=2.0),
        F.mish,
        F.elu,
        lambda x: F.elu(x, 0.3),
        F.selu,
    ],
    ids=["softplus", "softplus_beta", "softplus_negative_beta", "mish", "elu", "elu_alpha", "selu"],
)
@examples(10)
@given(a=SHAPES.filter(len).flatmap(lambda s: arrays(s, floats(-6, 6))))
def test_first_and_second_derivatives_in_both_modes(fn, a):
    # Off the kinks (0; softplus's threshold 3 / 2 and -4 / 3), where finite differences of
    # 1e-6 would straddle them.
    for kink in (0.0, 1.5, -4 / 3):
        a = np.where(np.abs(a - kink) < 1e-3, a + 2e-3, a)
    _both_modes(fn, leaf(a))


def test_softplus_and_elu_keep_float32():
    x = leaf([-3.0, 0.5, 30.0], "float32")
    for fn in (F.softplus, F.elu, F.selu):
        out = fn(x)
        (g,) = grad(cr.sum(out), x)
        assert (out.dtype, g.dtype) == (cr.float32, cr.float32)


def test_softplus_and_elu_nodes_have_pytorchs_names():
    x = leaf([1.0])
    assert F.softplus(x).grad_fn.name() == "SoftplusBackward0"
    assert F.elu(x).grad_fn.name() == "EluBackward0"
    assert F.selu(x).grad_fn.name() == "EluBackward0"
