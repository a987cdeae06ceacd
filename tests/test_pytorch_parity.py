"""Small differences from PyTorch 2.13 found by comparing the two: where chainrule's answer
differed, the right one (PyTorch's, or the mathematics' where the two part, as
docs/from-pytorch.md says) is written here as literals, worked out by hand."""

import math

import array_api_strict as strict
import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import func, special
from chainrule.autograd import grad, gradcheck, gradgradcheck
from conftest import T, skip_on
from helpers import assert_values, leaf


@skip_on("dask", reason="its index values are checked when computed")
@pytest.mark.parametrize("index", [-1, -3])
def test_gather_under_vmap_refuses_a_negative_index_as_outside_it(index):
    # vmap's gather counted a negative index from the end (only the eager path checked).
    x = T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    indices = T([[[0, 1]], [[index, 2]]])
    with pytest.raises(IndexError, match=rf"index {index} is out of bounds for axis 1 with size 3"):
        func.vmap(lambda i: x.gather(1, i))(indices)
    with pytest.raises(IndexError, match=rf"index {index} is out of bounds for axis 0 with size 2"):
        func.vmap(lambda i: x.gather(0, i), in_dims=1)(T([[[0, 1], [index, 0]]]))
    assert_values(
        func.vmap(lambda i: x.gather(1, i))(T([[[0, 1]], [[2, 2]]])), [[[1.0, 2.0]], [[3.0, 3.0]]]
    )


@pytest.mark.parametrize(
    "key", [strict.asarray(2), strict.asarray([2]), (strict.asarray([1, 2]), Ellipsis)]
)
@pytest.mark.parametrize("wrap", [False, True])
def test_an_index_array_of_another_library_is_refused_as_in_arithmetic(key, wrap):
    # NumPy read a one-element array of another library as the integer it holds (x[a] with
    # a = [2] gave x[2], of the wrong shape); arithmetic with such an array raises TypeError.
    x = cr.tensor(np.arange(6.0))
    if wrap:
        key = (cr.asarray(key[0]), Ellipsis) if isinstance(key, tuple) else cr.asarray(key)
    message = "indexing: cannot mix arrays of different libraries in one operation"
    with pytest.raises(TypeError, match=message):
        x[key]
    with pytest.raises(TypeError, match=message):
        x[key] = 5.0
    assert_values(x, np.arange(6.0))
    # NumPy's arrays and integers index every library's tensors, as before.
    assert_values(x[np.array([2])], [2.0])
    assert_values(x[np.int64(2)], 2.0)


def test_xlogy_is_zero_where_x_is_zero_and_y_negative_as_scipy_and_pytorch():
    # log(-1) is NaN, and 0 * NaN gave NaN where SciPy's and PyTorch's xlogy(0, y) is 0 for
    # every y that is not NaN (and the x-gradient NaN where PyTorch's is 0).
    x, y = leaf([0.0, 0.0]), leaf([-1.0, -math.inf])
    assert_values(special.xlogy(x, y), [0.0, 0.0])
    assert_values(special.xlog1py(x, y - 1.0), [0.0, 0.0])
    gx, gy = grad(special.xlogy(x, y).sum(), (x, y))
    assert_values(gx, [0.0, 0.0])
    assert_values(gy, [0.0, 0.0])


def _both_modes(fn, *inputs):
    assert gradcheck(fn, inputs, check_forward_ad=True)
    assert gradgradcheck(fn, inputs, check_fwd_over_rev=True)


@pytest.mark.parametrize("fn, shift", [(special.xlogy, 0.0), (special.xlog1py, -1.0)])
def test_xlogy_y_gradient_where_x_is_zero_is_the_functions_zero(fn, shift):
    # xlogy(0, y) is 0 for every y: its y-derivative there is 0, at y = 0 too, where PyTorch's
    # formula x / y gives 0 / 0 = NaN (a documented difference, docs/from-pytorch.md).
    zero = T([0.0, 0.0, 0.0])
    y = leaf([0.0 + shift, -1.0 + shift, 2.0 + shift])
    (gy,) = grad(fn(zero, y).sum(), y, create_graph=True)
    assert_values(gy, [0.0, 0.0, 0.0])
    (gyy,) = grad(gy.sum(), y)
    assert_values(gyy, [0.0, 0.0, 0.0])
    _both_modes(lambda y: fn(zero, y), y)
    # Away from x = 0: log(y) and x / y, to first and second order, both modes.
    _both_modes(fn, leaf([2.0, -0.5, 1e-3]), leaf([3.0 + shift, 0.25 + shift, 2.0 + shift]))


# PyTorch 2.13's gradients (float64) at NaN, inf, -inf, -800, 800 and the kinks, recorded.
_NAN_INF = [math.nan, math.inf, -math.inf, -800.0, 800.0]
_SCALE, _SCALE_ALPHA = 1.0507009873554805, 1.7580993408473766
_ACTIVATIONS = {
    "relu": (F.relu, [0.0], [1.0, 1.0, 0.0, 0.0, 1.0, 0.0]),
    "hardtanh": (F.hardtanh, [-1.0, 1.0], [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]),
    "hardtanh(0, 6)": (
        lambda x: F.hardtanh(x, 0.0, 6.0),
        [0.0, 6.0, 3.0],
        [1.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0],
    ),
    "elu": (F.elu, [0.0], [1.0, 1.0, 0.0, 0.0, 1.0, 1.0]),
    "elu(0.5)": (lambda x: F.elu(x, 0.5), [0.0], [1.0, 1.0, 0.0, 0.0, 1.0, 0.5]),
    "selu": (F.selu, [0.0], [_SCALE, _SCALE, 0.0, 0.0, _SCALE, _SCALE_ALPHA]),
    "leaky_relu": (F.leaky_relu, [0.0], [0.01, 1.0, 0.01, 0.01, 1.0, 0.01]),
    # relu6's mask is 0 < x < 6: 0 at a NaN x, unlike hardtanh(x, 0, 6)'s.
    "relu6": (F.relu6, [0.0, 6.0, 3.0], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0]),
    # PyTorch's 1 / 6 is rounded to float32 (0.16666667163...) in float64 too.
    "hardsigmoid": (F.hardsigmoid, [-3.0, 3.0, 1.0], [0.0] * 7 + [1 / 6]),
    "hardswish": (F.hardswish, [-3.0, 3.0, 1.0], [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 1.0, 5 / 6]),
    "threshold": (
        lambda x: F.threshold(x, 1.0, -2.0),
        [1.0, 0.5, 2.0],
        [1.0, 1.0, 0.0, 0.0, 1.0, 0.0, 0.0, 1.0],
    ),
}


@pytest.mark.parametrize("name", list(_ACTIVATIONS))
def test_activation_gradients_at_nan_inf_and_kinks_are_pytorchs(name):
    # relu and hardtanh gave 0 at a NaN x and elu and selu NaN, where PyTorch passes the
    # gradient on (its masks test x <= 0, which a NaN is not): 1, or selu's scale.
    fn, kinks, expected = _ACTIVATIONS[name]
    points = _NAN_INF + kinks
    x = leaf(points)
    out = fn(x)
    assert_values(out[:1], [math.nan])
    (g,) = grad(out.sum(), x)
    assert_values(g, expected)
    _, tangent = func.jvp(fn, (T(points),), (T([1.0] * len(points)),))
    assert_values(tangent, expected)


def test_kl_div_target_gradient_at_zero_is_the_slope_of_t_log_t():
    # The pointwise loss t (log t - input) has t-derivative log t + 1 - input: -inf at t = 0
    # (second derivative 1 / t, +inf). It was -input (the masked log dropped the log t);
    # PyTorch's is NaN (0 / 0), a documented difference (docs/from-pytorch.md).
    x = T([-1.0, -2.0, -0.5])
    t = leaf([0.0, 0.5, 0.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        (g,) = grad(F.kl_div(x, t, reduction="sum"), t, create_graph=True)
        (gg,) = grad(g.sum(), t)
        _, tangent = func.jvp(
            lambda t: F.kl_div(x, t, reduction="sum"), (T([0.0, 0.5, 0.0]),), (T([1.0, 1.0, 1.0]),)
        )
    assert_values(g, [-math.inf, math.log(0.5) + 3.0, -math.inf])
    assert_values(gg, [math.inf, 2.0, math.inf])
    assert_values(tangent, -math.inf)
    # The loss, and the input's gradient, are as they were: 0 and -t at t = 0.
    xs = leaf([-1.0, -2.0, -0.5])
    loss = F.kl_div(xs, t, reduction="none")
    assert_values(loss, [0.0, 0.5 * (math.log(0.5) + 2.0), 0.0])
    (gx,) = grad(loss.sum(), xs)
    assert_values(gx, [0.0, -0.5, 0.0])
    # Away from t = 0, first and second order in both modes, in input and target.
    _both_modes(lambda x, t: F.kl_div(x, t, reduction="sum"), leaf([-1.0, -0.3]), leaf([0.4, 2.0]))


def test_hardswish_is_zero_at_minus_infinity():
    # 0 for every x <= -3, so 0 at -inf too (PyTorch's x * relu6(x + 3) / 6 gives -inf * 0,
    # NaN: a documented difference), with gradient 0 there.
    x = leaf([-math.inf, -3.0, 3.0])
    out = F.hardswish(x)
    assert_values(out, [0.0, 0.0, 3.0])
    (g,) = grad(out.sum(), x)
    assert_values(g, [0.0, 0.0, 1.0])


def test_maximum_and_minimum_pass_the_gradient_to_both_inputs_where_one_is_nan():
    # Each input gets the gradient unless it loses (PyTorch's); a NaN loses to nothing. Both
    # got 0 there. Ties still split it.
    a, b = [math.nan, 1.0, 2.0, 3.0], [0.0, math.nan, 2.0, 1.0]
    for fn, expected_a, expected_b in (
        (cr.maximum, [1.0, 1.0, 0.5, 1.0], [1.0, 1.0, 0.5, 0.0]),
        (cr.minimum, [1.0, 1.0, 0.5, 0.0], [1.0, 1.0, 0.5, 1.0]),
    ):
        x, y = leaf(a), leaf(b)
        gx, gy = grad(fn(x, y).sum(), (x, y))
        assert_values(gx, expected_a)
        assert_values(gy, expected_b)


@pytest.mark.parametrize(
    "bounds, expected",
    [
        ({"min": 0.0, "max": 1.0}, [0.0, 0.0, 0.0, 1.0, 1.0, 0.0]),
        ({"min": 0.0}, [0.0, 1.0, 0.0, 1.0, 1.0, 1.0]),
        ({"max": 1.0}, [0.0, 0.0, 1.0, 1.0, 1.0, 0.0]),
    ],
)
def test_clip_gives_no_gradient_to_a_nan_input(bounds, expected):
    # PyTorch's clamp passes the gradient where min <= x <= max, which a NaN is not (it
    # went through); the bounds themselves pass it, as before.
    points = [math.nan, math.inf, -math.inf, 0.0, 1.0, 2.0]
    x = leaf(points)
    out = cr.clip(x, **bounds)
    assert_values(out[:1], [math.nan])
    (g,) = grad(out.sum(), x)
    assert_values(g, expected)
    _, tangent = func.jvp(lambda x: cr.clip(x, **bounds), (T(points),), (T([1.0] * 6),))
    assert_values(tangent, expected)
