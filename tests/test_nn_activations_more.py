"""The activations and distances PyTorch has beyond tests/test_nn_activations.py's (celu,
rrelu, prelu, glu, the shrinks, logsigmoid; cosine_similarity, pairwise_distance, pdist; their
layers), and the precision of softplus, mish, elu and selu at special points: values, first
and second derivatives in reverse and forward mode against PyTorch 2.13's (float64, recorded
here as literals) and against finite differences."""

import math

import numpy as np
import pytest
from hypothesis import given

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import func, nn
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


# ------------------------------------------------ the activations PyTorch has beyond ours

_POINTS = [math.nan, INF, -INF, -800.0, -40.0, -0.5, 0.0, 0.25, 0.5, 40.0, 800.0]

# name: (function, PyTorch's values, first and second derivatives at _POINTS), but for
# two second derivatives, marked, that are chainrule's (docs/from-pytorch.md).
NEW_AT_POINTS = {
    "celu": (
        F.celu,
        [math.nan, INF, -1.0, -1.0, -1.0, -0.3934693402873666, 0.0, 0.25, 0.5, 40.0, 800.0],
        [1.0, 1.0, 0.0, 0.0, 4.248354255291589e-18, 0.6065306597126334, 1.0, 1.0, 1.0, 1.0, 1.0],
        # At 0 the left branch's, alpha exp(0) / alpha (PyTorch's is 0), as elu's.
        [0.0, 0.0, 0.0, 0.0, 4.248354255291589e-18, 0.6065306597126334, 1.0, 0.0, 0.0, 0.0,
         0.0],
    ),
    "celu(alpha=2)": (
        lambda x: F.celu(x, 2.0),
        [math.nan, INF, -2.0, -2.0, -1.9999999958776928, -0.44239843385719024, 0.0, 0.25, 0.5,
         40.0, 800.0],
        [1.0, 1.0, 0.0, 1.9151695967140057e-174, 2.061153622438558e-09, 0.7788007830714049, 1.0,
         1.0, 1.0, 1.0, 1.0],
        [0.0, 0.0, 0.0, 9.575847983570028e-175, 1.030576811219279e-09, 0.38940039153570244, 0.5,
         0.0, 0.0, 0.0, 0.0],
    ),
    "rrelu": (
        F.rrelu,
        [math.nan, INF, -INF, -183.33333333333331, -9.166666666666666, -0.11458333333333333, 0.0,
         0.25, 0.5, 40.0, 800.0],
        [0.22916666666666666, 1.0] + [0.22916666666666666] * 5 + [1.0] * 4,
        [0.0] * 11,
    ),
    "hardshrink": (
        F.hardshrink,
        [math.nan, INF, -INF, -800.0, -40.0, 0.0, 0.0, 0.0, 0.0, 40.0, 800.0],
        [0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0],
        [0.0] * 11,
    ),
    "hardshrink(0.25)": (
        lambda x: F.hardshrink(x, 0.25),
        [math.nan, INF, -INF, -800.0, -40.0, -0.5, 0.0, 0.0, 0.5, 40.0, 800.0],
        [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0],
        [0.0] * 11,
    ),
    "softshrink": (
        F.softshrink,
        [math.nan, INF, -INF, -799.5, -39.5, 0.0, 0.0, 0.0, 0.0, 39.5, 799.5],
        [0.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0],
        [0.0] * 11,
    ),
    "softshrink(0.25)": (
        lambda x: F.softshrink(x, 0.25),
        [math.nan, INF, -INF, -799.75, -39.75, -0.25, 0.0, 0.0, 0.25, 39.75, 799.75],
        [0.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.0, 0.0, 1.0, 1.0, 1.0],
        [0.0] * 11,
    ),
    "tanhshrink": (
        F.tanhshrink,
        [math.nan, INF, -INF, -799.0, -39.0, -0.03788284273999021, 0.0, 0.005081337596290869,
         0.03788284273999021, 39.0, 799.0],
        [math.nan, 1.0, 1.0, 1.0, 1.0, 0.2135522670340726, 0.0, 0.05998515119362202,
         0.2135522670340726, 1.0, 1.0],
        [math.nan, 0.0, 0.0, 0.0, 0.0, -0.7268619813835874, 0.0, 0.46045435881856595,
         0.7268619813835874, 0.0, 0.0],
    ),
    "logsigmoid": (
        F.logsigmoid,
        [math.nan, 0.0, -INF, -800.0, -40.0, -0.9740769841801067, -0.6931471805599453,
         -0.5759394198788436, -0.4740769841801067, -4.248354255291589e-18, 0.0],
        [math.nan, 0.0, 1.0, 1.0, 1.0, 0.6224593312018545, 0.5, 0.4378234991142019,
         0.37754066879814546, 4.248354255291589e-18, 0.0],
        # -sigmoid(x) sigmoid(-x) is -4.2e-18 at -40 and 40; chainrule's, s (1 - s) of
        # s = sigmoid(-x), gives 0 at -40 (s rounds to 1) and PyTorch's 0 at 40.
        [math.nan, 0.0, 0.0, 0.0, 0.0, -0.2350037122015945, -0.25,
         -0.24613408273759835, -0.2350037122015945, -4.248354255291589e-18, 0.0],
    ),
}  # fmt: skip


def _second_or_zero(g, x):
    """The gradient of sum(g) in x, or zeros where g does not depend on x (a piecewise
    linear function's first derivative)."""
    if not g.requires_grad:
        return g * 0.0
    return grad(cr.sum(g), x)[0]


@pytest.mark.parametrize("name", list(NEW_AT_POINTS))
def test_new_activations_at_nan_inf_and_kinks_are_pytorchs(name):
    fn, values, first, second = NEW_AT_POINTS[name]
    x = leaf(_POINTS)
    out = fn(x)
    (g,) = grad(cr.sum(out), x, create_graph=True)
    gg = _second_or_zero(g, x)
    ones = T(np.ones(len(_POINTS)))
    forward = func.jvp(fn, (T(_POINTS),), (ones,))[1]
    assert_values(out, values, rtol=1e-14, atol=0.0)
    for derivative in (g, forward):
        assert_values(derivative, first, rtol=1e-13, atol=0.0)
    assert_values(gg, second, rtol=1e-13, atol=0.0)


ELEMENTWISE = {
    "celu": F.celu,
    "celu_alpha": lambda x: F.celu(x, 0.4),
    "rrelu": lambda x: F.rrelu(x, 0.1, 0.4),
    "hardshrink": F.hardshrink,
    "softshrink": lambda x: F.softshrink(x, 0.3),
    "tanhshrink": F.tanhshrink,
    "logsigmoid": F.logsigmoid,
}
# The kinks, where finite differences of 1e-6 would straddle one.
KINKS = (0.0, 0.5, -0.5, 0.3, -0.3)


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
@examples(10)
@given(a=SHAPES.flatmap(lambda s: arrays(s, floats(-4, 4))))
def test_new_activations_first_and_second_derivatives_in_both_modes(name, a):
    for kink in KINKS:
        a = np.where(np.abs(a - kink) < 1e-3, a + 2e-3, a)
    _both_modes(ELEMENTWISE[name], leaf(a))


def test_logsigmoid_is_exact_far_out():
    # -softplus(-x): x - exp(x) far to the left, -exp(-x) far to the right, no overflow.
    x = leaf([-700.0, -30.0, 30.0, 700.0])
    out = F.logsigmoid(x)
    assert_values(out, [-700.0, -30.0 - math.exp(-30.0), -math.exp(-30.0), -math.exp(-700.0)])
    (g,) = grad(cr.sum(out), x)
    assert_values(g, [1.0, 1.0 - math.exp(-30.0), math.exp(-30.0), math.exp(-700.0)], atol=0.0)


# x of shape (2, 3, 2), one slope per channel (axis 1), and the weights of the sum whose
# gradients PyTorch gave.
PRELU_X = [[[-1.5, 0.3], [2.0, -0.7], [-0.2, 0.9]], [[0.4, -2.5], [-1.1, 1.3], [0.6, -0.05]]]
PRELU_W = [0.25, -0.1, 0.6]
PRELU_WEIGHTS = [[[1.0, -2.0], [0.5, 3.0], [-1.5, 0.25]], [[2.0, 1.0], [-0.5, 0.75], [1.25, -1.0]]]


def test_prelu_values_and_gradients_are_pytorchs():
    x, w = leaf(PRELU_X), leaf(PRELU_W)
    out = F.prelu(x, w)
    assert_values(
        out,
        [[[-0.375, 0.3], [2.0, 0.07], [-0.12, 0.9]], [[0.4, -0.625], [0.11, 1.3], [0.6, -0.03]]],
    )
    gx, gw = grad(cr.sum(out * T(PRELU_WEIGHTS)), (x, w))
    assert_values(
        gx, [[[0.25, -2.0], [0.5, -0.3], [-0.9, 0.25]], [[2.0, 0.25], [0.05, 0.75], [1.25, -0.6]]]
    )
    assert_values(gw, [-4.0, -1.55, 0.35])


@examples(10)
@given(a=arrays((2, 3, 2), floats(-3, 3).filter(lambda v: abs(v) > 1e-3)))
def test_prelu_first_and_second_derivatives_in_both_modes(a):
    _both_modes(F.prelu, leaf(a), leaf(PRELU_W))
    _both_modes(F.prelu, leaf(a[0, 0]), leaf([0.3]))  # one slope, a 1-D x


@pytest.mark.parametrize(
    "x_shape, w_shape, error, message",
    [
        ((2, 3), (4,), RuntimeError, "Found parameter numbers = 4 and channel size = 3."),
        ((3,), (3,), RuntimeError, "Found parameter numbers = 3 and channel size = 1."),
        ((), (2,), RuntimeError, "Not allow zero-dim input tensor."),
        ((2, 3), (1, 3), RuntimeError, "Expected `weight` to be a scalar or 1D tensor"),
    ],
)
def test_prelu_refuses_what_pytorch_refuses(x_shape, w_shape, error, message):
    with pytest.raises(error, match=message.replace("(", r"\(").replace(")", r"\)")):
        F.prelu(T(np.ones(x_shape)), T(np.ones(w_shape)))


def test_prelu_takes_one_slope_of_any_shape_of_one_element():
    assert_values(F.prelu(T([[-2.0, 1.0]]), T(0.5)), [[-1.0, 1.0]])
    assert_values(F.prelu(T(-2.0), T([0.5])), -1.0)


GLU_X = [[-1.5, 0.3, 2.0, -0.7], [-0.2, 0.9, 0.4, -2.5]]
# dim: (PyTorch's values, its gradient of the sum weighted by linspace(-1, 1.5, size)).
GLU_RECORDED = {
    -1: (
        [[-1.3211956169668235, 0.09954366834955017], [-0.1197375320224904, 0.0682723620191192]],
        [[-0.8807970779778823, -0.055302037971972307, 0.15749037810525993, -0.01108564366465545],
         [0.39912510674163465, 0.11378727003186531, -0.03203476609887055, 0.09464001733589601]],
    ),
    0: (
        [[-0.6752490040312833, 0.21328485078750117, 1.197375320224904, -0.05310072601487048]],
        [[-0.45016600268752216, -0.11849158377083395, 0.39912510674163465, 0.11378727003186531],
         [0.3712748590677899, -0.010275015367113172, 0.3203476609887055, -0.07360890237236356]],
    ),
}  # fmt: skip


@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_glu_values_and_gradients_are_pytorchs(dim):
    values, expected = GLU_RECORDED[-1 if dim == 1 else dim]
    x = leaf(GLU_X)
    out = F.glu(x, dim)
    assert_values(out, values)
    weights = np.linspace(-1.0, 1.5, 4).reshape(np.shape(values))
    (g,) = grad(cr.sum(out * T(weights)), x)
    assert_values(g, expected)


@examples(10)
@given(a=SHAPES.filter(lambda s: len(s) and s[-1] % 2 == 0).flatmap(arrays))
def test_glu_first_and_second_derivatives_in_both_modes(a):
    _both_modes(F.glu, leaf(a))


@pytest.mark.parametrize(
    "shape, dim, error, message",
    [
        ((2, 3), -1, RuntimeError, "Halving dimension must be even, but dimension 1 is size 3"),
        ((3,), 0, RuntimeError, "Halving dimension must be even, but dimension 0 is size 3"),
        ((), -1, RuntimeError, "glu does not support scalars because halving size must be even"),
        ((2, 4), 2, IndexError, r"expected to be in range of \[-2, 1\], but got 2"),
    ],
)
def test_glu_refuses_what_pytorch_refuses(shape, dim, error, message):
    with pytest.raises(error, match=message):
        F.glu(T(np.ones(shape)), dim)


def test_celu_softshrink_and_rrelu_refuse_what_pytorch_refuses():
    x = T([1.0, -1.0])
    with pytest.raises(RuntimeError, match="alpha cannot be 0 for CELU"):
        F.celu(x, 0.0)
    with pytest.raises(
        RuntimeError,
        match=r"lambda must be in range \[0, 1.79769e\+308\] for input dtype Double, but found -1",
    ):
        F.softshrink(x, -1.0)
    with pytest.raises(RuntimeError, match=r"\[0, 3.40282e\+38\] for input dtype Float"):
        F.softshrink(T([1.0], "float32"), -0.5)
    with pytest.raises(RuntimeError, match="Lower bound should be less than or equal to the upper"):
        F.rrelu(x, 0.5, 0.2)
    # hardshrink takes a negative lambd (PyTorch's too): the identity.
    assert_values(F.hardshrink(T([-0.5, 0.0, 2.0]), -1.0), [-0.5, 0.0, 2.0])


def test_rrelu_in_training_draws_a_slope_per_element_in_its_bounds():
    cr.random.manual_seed(3)
    values = -np.linspace(0.5, 3.0, 400)
    x = leaf(np.concatenate([values, [0.0, 2.0]]))
    out = F.rrelu(x, 0.1, 0.3, training=True)
    (g,) = grad(cr.sum(out), x)
    slopes = out.detach().numpy()[:400] / values
    assert slopes.min() >= 0.1 and slopes.max() < 0.3
    assert len(np.unique(slopes)) > 350 and abs(slopes.mean() - 0.2) < 0.01
    # The gradient is each element's slope (1 right of 0).
    assert_values(g[:400], slopes)
    assert_values(g[401:], [1.0])
    cr.random.manual_seed(3)
    assert_values(F.rrelu(x.detach(), 0.1, 0.3, training=True), out.detach().numpy())


@pytest.mark.parametrize(
    "fn", [F.celu, F.rrelu, lambda x, inplace: F.rrelu(x, training=True, inplace=inplace)]
)
def test_inplace_writes_into_the_input_and_returns_it(fn):
    values = np.array([-2.0, -0.3, 0.4, 3.0])
    cr.random.manual_seed(0)
    expected = fn(T(values), inplace=False).numpy()
    x = T(values)
    cr.random.manual_seed(0)
    assert fn(x, inplace=True) is x
    assert_values(x, expected)


# ----------------------------------------------------------------------------- layers


def test_layer_reprs_are_pytorchs():
    assert repr(nn.CELU()) == "CELU(alpha=1.0)"
    assert repr(nn.CELU(2.0, inplace=True)) == "CELU(alpha=2.0, inplace=True)"
    assert repr(nn.RReLU()) == "RReLU(lower=0.125, upper=0.3333333333333333)"
    assert repr(nn.RReLU(0.1, 0.3, inplace=True)) == "RReLU(lower=0.1, upper=0.3, inplace=True)"
    assert repr(nn.PReLU()) == "PReLU(num_parameters=1)"
    assert repr(nn.GLU()) == "GLU(dim=-1)"
    assert repr(nn.Hardshrink()) == "Hardshrink(0.5)"
    assert repr(nn.Softshrink(0.2)) == "Softshrink(0.2)"
    assert repr(nn.Tanhshrink()) == "Tanhshrink()"
    assert repr(nn.LogSigmoid()) == "LogSigmoid()"


@pytest.mark.parametrize(
    "layer, fn",
    [
        (nn.CELU(0.5), lambda x: F.celu(x, 0.5)),
        (nn.GLU(0), lambda x: F.glu(x, 0)),
        (nn.Hardshrink(0.3), lambda x: F.hardshrink(x, 0.3)),
        (nn.Softshrink(0.3), lambda x: F.softshrink(x, 0.3)),
        (nn.Tanhshrink(), F.tanhshrink),
        (nn.LogSigmoid(), F.logsigmoid),
        (nn.RReLU(0.1, 0.2).eval(), lambda x: F.leaky_relu(x, 0.15)),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, nn.Module) else "",
)
def test_layers_apply_their_function_and_hold_no_state(layer, fn):
    x = T([[-2.0, -0.25, 0.1, 3.0], [0.5, -0.5, 1.5, -1.0]])
    assert_values(layer(x), fn(x).numpy())
    assert list(layer.state_dict()) == []


def test_rrelu_layer_draws_slopes_in_training_only():
    layer = nn.RReLU(0.1, 0.3)
    x = T(-np.linspace(1.0, 2.0, 50))
    slopes = layer(x).numpy() / x.numpy()
    assert len(np.unique(slopes)) > 40 and slopes.min() >= 0.1 and slopes.max() < 0.3
    layer.eval()
    assert_values(layer(x), x.numpy() * 0.2)


def test_prelu_layer_has_pytorchs_parameter_and_learns_it():
    layer = nn.PReLU(3, init=0.1)
    assert list(layer.state_dict()) == ["weight"]
    assert [name for name, _ in layer.named_parameters()] == ["weight"]
    assert_values(layer.weight, [0.1, 0.1, 0.1])
    layer.load_state_dict({"weight": np.array(PRELU_W)})
    x = leaf(PRELU_X)
    out = layer(x)
    cr.sum(out * T(PRELU_WEIGHTS)).backward()
    assert_values(layer.weight.grad, [-4.0, -1.55, 0.35])
    one = nn.PReLU()
    assert_values(one.weight, [0.25])
    assert_values(one(T([[-4.0, 2.0]])), [[-1.0, 2.0]])
    assert nn.PReLU(dtype=cr.float32).weight.dtype == cr.float32


# ----------------------------------------------------------------------------- distances

# Rows: ordinary, a zero vector, norms below eps (1e-9 and 3e-9), equal rows.
DIST_A = [[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [1e-9, 0.0, 0.0], [-1.0, 0.5, 2.0]]
DIST_B = [[0.5, -1.0, 2.0], [1.0, 2.0, 3.0], [0.0, 3e-9, 0.0], [-1.0, 0.5, 2.0]]


@pytest.mark.parametrize(
    "dim, weights, values, grad_a, grad_b",
    [
        (
            1,
            [1.0, 1.0, 1.0, 1.0],
            [0.524890659167824, 0.0, 0.0, 1.0],
            [[0.02082899441142158, -0.19162674858507858, 0.12080816758624519],
             [26726124.191242438, 53452248.382484876, 80178372.57372732],
             [0.0, 30000000.0, 0.0], [0.0, 0.0, 0.0]],
            [[0.06665278211654907, 0.33326391058274535, 0.1499687597622354], [0.0, 0.0, 0.0],
             [10000000.0, 0.0, 0.0], [0.0, 0.0, 0.0]],
        ),
        (
            0,
            [1.0, -2.0, 0.5],
            [0.7071067811865475, -0.3704792868174742, 0.6726727939963124],
            [[-0.11785113019775786, 0.07471851162705367, -0.01034881221532788],
             [0.4714045207910316, -0.8468097984399411, 0.10090091909944687],
             [-3.5355339059327367e-10, -1.2702146976599116e-09, 0.0],
             [-0.11785113019775795, -0.2988740465082145, 0.015523218322991826]],
            [[0.3142696805273544, -0.7056748320332842, 0.06133193121731084],
             [-0.31426968052735443, -0.2822699328133137, -0.059353481823204046],
             [4.714045207910317e-10, -4.2340489921997056e-10, 0.0],
             [-0.1571348402636772, -0.2822699328133137, 0.027698291517495213]],
        ),
    ],
)  # fmt: skip
def test_cosine_similarity_values_and_gradients_are_pytorchs(dim, weights, values, grad_a, grad_b):
    a, b = leaf(DIST_A), leaf(DIST_B)
    out = F.cosine_similarity(a, b, dim)
    assert_values(out, values)
    ga, gb = grad(cr.sum(out * T(weights)), (a, b))
    assert_values(ga, grad_a, rtol=1e-12, atol=1e-15)
    assert_values(gb, grad_b, rtol=1e-12, atol=1e-15)


def test_cosine_similarity_gradient_goes_through_a_clamped_norm_as_pytorchs():
    # |a| = 1.4e-9 is clamped to eps = 1e-8 in the value; the gradient is still the
    # norm's, as PyTorch's (which clamps outside autograd): not b / eps alone.
    a, b = leaf([[1e-9, 1e-9, 0.0]]), leaf([[1.0, 0.0, 0.0]])
    out = F.cosine_similarity(a, b)
    assert_values(out, [0.1])
    ga, gb = grad(cr.sum(out), (a, b))
    assert_values(ga, [[92928932.18813452, -7071067.811865476, 0.0]])
    assert_values(gb, [[0.0, 0.1, 0.0]])


def test_cosine_similarity_broadcasts_and_refuses_as_pytorch():
    assert_values(F.cosine_similarity(T(np.ones((2, 3))), T([1.0, 1.0, 1.0])), [1.0, 1.0])
    assert_values(F.cosine_similarity(T([3.0, 4.0]), T([4.0, 3.0]), dim=-1), 0.96)
    with pytest.raises(RuntimeError, match=r"size of tensor a \(3\) must match the size of"):
        F.cosine_similarity(T(np.ones((2, 3))), T(np.ones(4)))
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1"):
        F.cosine_similarity(T(np.ones(3)), T(np.ones(3)))


@examples(10)
@given(
    a=arrays((2, 3), floats(-2, 2).filter(lambda v: abs(v) > 0.2)),
    b=arrays((2, 3), floats(-2, 2).filter(lambda v: abs(v) > 0.2)),
)
def test_cosine_similarity_first_and_second_derivatives_in_both_modes(a, b):
    _both_modes(F.cosine_similarity, leaf(a), leaf(b))
    _both_modes(lambda x, y: F.cosine_similarity(x, y, dim=0), leaf(a), leaf(b[0]))


@pytest.mark.parametrize(
    "kwargs, values, grad_a",
    [
        (
            {},
            [3.2015635242804414, 3.741655783206547, 1.7308986105488675e-06,
             1.7320508075688771e-06],
            [[0.15617400567192444, 0.9370424722946133, 0.31234769899646214],
             [-0.2672610891916452, -0.5345224456446469, -0.8017838020976484],
             [0.5783123251122047, 0.5760013867501179, 0.577734590521683],
             [0.5773502691896258, 0.5773502691896258, 0.5773502691896258]],
        ),
        (
            {"p": 1.0, "keepdim": True},
            [[4.500003], [5.9999970000000005], [2.998e-06], [3e-06]],
            [[1.0, 1.0, 1.0], [-1.0, -1.0, -1.0], [1.0, 1.0, 1.0], [1.0, 1.0, 1.0]],
        ),
        (
            {"p": 3.0, "eps": 0.0},
            [3.0411009977867, 3.3019272488946263, 3.036588971875666e-09, 0.0],
            [[0.02703200886921511, 0.973152319291744, 0.10812803547686044],
             [-0.0917202013581841, -0.3668808054327364, -0.8254818122236569],
             [0.10844960613841628, -0.9760464552457464, 0.0], [0.0, 0.0, 0.0]],
        ),
        (
            {"p": math.inf},
            [3.000001, 2.999999, 1.001e-06, 1e-06],
            [[0.0, 1.0, 0.0], [0.0, 0.0, -1.0], [1.0, 0.0, 0.0],
             [1 / 3, 1 / 3, 1 / 3]],
        ),
    ],
)  # fmt: skip
def test_pairwise_distance_values_and_gradients_are_pytorchs(kwargs, values, grad_a):
    a, b = leaf(DIST_A), leaf(DIST_B)
    out = F.pairwise_distance(a, b, **kwargs)
    assert_values(out, values)
    ga, gb = grad(cr.sum(out), (a, b))
    assert_values(ga, grad_a)
    assert_values(gb, -np.array(grad_a))


def test_pairwise_distance_of_vectors_and_scalars():
    assert_values(F.pairwise_distance(T([1.0, 1.0]), T([0.0, 0.0])), math.sqrt(2) * 1.000001)
    assert_values(F.pairwise_distance(T([1.0]), T([0.0]), keepdim=True), [1.000001])
    assert_values(F.pairwise_distance(T(1.0), T(0.0)), 1.000001)


@pytest.mark.parametrize("p", [2.0, 1.0, 3.0])
@examples(10)
@given(
    a=arrays((2, 3), floats(-2, 2)),
    b=arrays((2, 3), floats(-2, 2)),
)
def test_pairwise_distance_first_and_second_derivatives_in_both_modes(p, a, b):
    # Differences kept at least 0.1 from 0, where |d| and the p-norm kink.
    d = a - b
    b = np.where(np.abs(d) < 0.1, a - np.where(d < 0, -0.2, 0.2), b)
    _both_modes(lambda x, y: F.pairwise_distance(x, y, p=p), leaf(a), leaf(b))


PDIST_X = [[1.0, 2.0], [1.0, 2.0], [0.0, -1.0], [3.0, 0.5]]
# p: (PyTorch's values, its gradient of the sum weighted by linspace(-1, 1, 6)); rows 0 and
# 1 are equal: distance 0, whose gradient is 0.
PDIST_RECORDED = {
    2.0: (
        [0.0, 3.1622776601683795, 2.5, 3.1622776601683795, 2.5, 3.3541019662496847],
        [[-0.029736659610102772, -0.6892099788303082], [-0.4167544467966324, 0.5497366596101027],
         [-0.7679360845931806, -0.06774027627975238], [1.2144271909999158, 0.2072135954999579]],
    ),
    1.0: (
        [0.0, 4.0, 3.5, 4.0, 3.5, 4.5],
        [[-0.4, -0.8], [-0.4, 0.8], [-0.6, -0.6], [1.4, 0.6]],
    ),
    3.0: (
        [0.0, 3.0365889718756622, 2.2489707226377074, 3.0365889718756622, 2.2489707226377074,
         3.120125734577856],
        [[0.09309960582114046, -0.6745981434935563], [-0.45281818728488793, 0.462120102087471],
         [-0.8811018566788129, 0.1592981573147546], [1.2408204381425603, 0.053179884091330676]],
    ),
    math.inf: (
        [0.0, 3.0, 2.0, 3.0, 2.0, 3.0],
        [[0.2, -0.6], [-0.6, 0.2], [-1.0, 0.4], [1.4, 0.0]],
    ),
}  # fmt: skip


@pytest.mark.parametrize("p", list(PDIST_RECORDED))
def test_pdist_values_and_gradients_are_pytorchs(p):
    values, expected = PDIST_RECORDED[p]
    x = leaf(PDIST_X)
    out = F.pdist(x, p)
    assert_values(out, values)
    (g,) = grad(cr.sum(out * T(np.linspace(-1.0, 1.0, 6))), x)
    assert_values(g, expected)


@examples(10)
@given(a=arrays((4, 2), floats(-2, 2)))
def test_pdist_first_and_second_derivatives_in_both_modes(a):
    a = a + np.array([[0.0, 0.0], [3.0, 0.0], [0.0, 5.0], [6.0, 7.0]])  # rows kept apart
    _both_modes(F.pdist, leaf(a))
    _both_modes(lambda x: F.pdist(x, 3.0), leaf(a))


def test_pdist_refuses_what_pytorch_refuses():
    assert F.pdist(T(np.ones((1, 3)))).shape == (0,)
    with pytest.raises(RuntimeError, match="pdist only supports 2D tensors, got: 3D"):
        F.pdist(T(np.ones((2, 3, 4))))
    with pytest.raises(RuntimeError, match="pdist only supports non-negative p values"):
        F.pdist(T(np.ones((3, 2))), -1.0)
    with pytest.raises(RuntimeError, match="pdist only supports floating-point dtypes"):
        F.pdist(T(np.ones((3, 2), dtype=np.int64)))


def test_distance_layers_are_pytorchs():
    layer = nn.PairwiseDistance(p=1.0, eps=0.0, keepdim=True)
    assert (layer.norm, layer.eps, layer.keepdim) == (1.0, 0.0, True)
    assert repr(layer) == "PairwiseDistance()" and list(layer.state_dict()) == []
    assert_values(layer(T([[1.0, -2.0]]), T([[0.0, 0.0]])), [[3.0]])
    cosine = nn.CosineSimilarity(dim=0)
    assert (cosine.dim, cosine.eps) == (0, 1e-8)
    assert repr(cosine) == "CosineSimilarity()" and list(cosine.state_dict()) == []
    assert_values(cosine(T([3.0, 4.0]), T([4.0, 3.0])), 0.96)
