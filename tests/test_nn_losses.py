"""The loss functions and modules against PyTorch: values and input gradients of the calls in
fixtures/loss_cases.py, recorded from PyTorch (fixtures/losses_torch.json, made by
fixtures/make_loss_fixtures.py); second derivatives by finite differences; bad settings."""

import json
import pathlib

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import grad, gradcheck, gradgradcheck
from conftest import N, T
from fixtures.loss_cases import CASES, inputs
from helpers import assert_values

RECORD = json.loads((pathlib.Path(__file__).parent / "fixtures" / "losses_torch.json").read_text())
INTEGERS = ("labels", "ignored", "padded")


def _env():
    env = {"F": F, "nn": nn}
    for name, value in inputs().items():
        env[name] = T(value, np.int64 if name in INTEGERS else None)
    env["a"].requires_grad_(True)
    return env


def test_the_record_covers_every_case():
    assert set(RECORD["cases"]) == set(CASES)


@pytest.mark.parametrize("source", CASES)
def test_loss_value_and_gradient_are_pytorchs(source):
    env = _env()
    out = eval(source, env)
    (g,) = grad(cr.sum(out), env["a"])
    expected = RECORD["cases"][source]
    assert_values(out, expected["value"], rtol=1e-12, atol=1e-14)
    assert_values(g, expected["grad"], rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize(
    "source",
    [
        "F.l1_loss(a, t)",
        "F.smooth_l1_loss(a, t, beta=0.3)",
        "F.huber_loss(a, t, delta=0.4)",
        "F.binary_cross_entropy(a.sigmoid(), p)",
        "nn.BCEWithLogitsLoss(weight=w, pos_weight=pw)(a, p)",
        "F.kl_div(a.log_softmax(1), probs, reduction='batchmean')",
        "nn.CrossEntropyLoss(weight=cw, label_smoothing=0.3)(a, padded)",
        "nn.CrossEntropyLoss(label_smoothing=0.25)(a, probs)",
    ],
)
def test_loss_second_derivatives(source):
    env = _env()
    a = env.pop("a")
    assert gradgradcheck(lambda x: eval(source, {**env, "a": x}), (a,), eps=1e-6)


def test_huber_and_smooth_l1_second_derivative_where_input_equals_target():
    # The quadratic piece's curvature (1, and 1 / beta) reaches d = 0, as PyTorch's; through
    # abs(d) squared it was 0 there.
    a, t = np.array([0.0, 0.1, 2.0]), np.zeros(3)
    for f, curvature in (
        (lambda x: F.huber_loss(x, T(t), delta=0.5, reduction="sum"), [1.0, 1.0, 0.0]),
        (lambda x: F.smooth_l1_loss(x, T(t), beta=0.5, reduction="sum"), [2.0, 2.0, 0.0]),
    ):
        x = T(a, requires_grad=True)
        (g,) = grad(f(x), x, create_graph=True)
        (gg,) = grad(cr.sum(g), x)
        assert_values(gg, curvature)


def test_loss_modules_hold_their_settings_and_weights_as_buffers():
    weights = T(np.ones(3))
    loss = nn.CrossEntropyLoss(weight=weights, label_smoothing=0.1)
    assert loss.weight is weights and "weight" in loss.state_dict()
    assert loss.reduction == "mean" and loss.ignore_index == -100
    assert repr(nn.MSELoss(reduction="sum")) == "MSELoss(reduction='sum')"


def test_bad_loss_settings_raise_as_pytorch():
    x, t = T(np.full(3, 0.5)), T(np.zeros(3))
    with pytest.raises(RuntimeError, match="negative values for beta"):
        F.smooth_l1_loss(x, t, beta=-1.0)
    with pytest.raises(RuntimeError, match="non-positive values for delta"):
        F.huber_loss(x, t, delta=0.0)
    with pytest.raises(ValueError, match="target size"):
        F.binary_cross_entropy(x, T(np.zeros(2)))
    with pytest.raises(RuntimeError, match="weight tensor should be defined"):
        F.cross_entropy(T(np.zeros((2, 3))), T(np.array([0, 1])), T(np.ones(2)))
    with pytest.raises(IndexError, match="Target 5 is out of bounds"):
        F.cross_entropy(T(np.zeros((2, 3))), T(np.array([5, -100])))


def test_binary_cross_entropy_is_finite_at_certain_predictions():
    p = T(np.array([0.0, 1.0]), requires_grad=True)
    loss = F.binary_cross_entropy(p, T(np.array([1.0, 0.0])), reduction="none")
    assert_values(loss, [100.0, 100.0])


def test_kl_div_of_a_negative_target_is_nan_as_pytorchs():
    # PyTorch's pointwise loss is xlogy(t, t) - t input: NaN where t < 0 (a finite -t input
    # before), 0 where t = 0.
    x = T(np.array([0.2, 0.2, 0.2]), requires_grad=True)
    t = T(np.array([-0.5, 0.0, 0.3]), requires_grad=True)
    with np.errstate(invalid="ignore"):
        loss = F.kl_div(x, t, reduction="none")
        cr.sum(loss).backward()
    np.testing.assert_allclose(N(loss), [np.nan, 0.0, 0.3 * (np.log(0.3) - 0.2)])
    np.testing.assert_allclose(N(x.grad), [0.5, 0.0, -0.3])
    assert np.isnan(N(t.grad)[0])
    np.testing.assert_allclose(N(t.grad)[2], np.log(0.3) + 1 - 0.2)
    with np.errstate(invalid="ignore"):
        assert np.isnan(N(nn.KLDivLoss(reduction="batchmean")(x, t)))


def _huber(d, delta):
    return np.where(np.abs(d) < delta, 0.5 * d * d, delta * (np.abs(d) - 0.5 * delta))


# PyTorch 2.13's weighted pointwise losses: 'mean' is the weighted sum over the weights' sum
# for mse_loss and l1_loss, the weighted losses' mean for huber_loss.
WEIGHTED = {
    "mse_loss": (lambda d: d * d, True),
    "l1_loss": (np.abs, True),
    "huber_loss": (lambda d: _huber(d, 1.0), False),
}


@pytest.mark.parametrize("name", sorted(WEIGHTED))
@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
def test_pointwise_losses_take_pytorchs_weight(name, reduction):
    rng = np.random.default_rng(4)
    a, b, w = rng.normal(size=(3, 4)), rng.normal(size=(3, 4)), rng.uniform(0.1, 2, (3, 4))
    pointwise, by_weight = WEIGHTED[name]
    expected = pointwise(a - b) * w
    if reduction == "sum":
        expected = expected.sum()
    elif reduction == "mean":
        expected = expected.sum() / (w.sum() if by_weight else w.size)
    fn = getattr(F, name)
    assert_values(fn(T(a), T(b), reduction=reduction, weight=T(w)), expected)
    weighted = lambda x, y, v: fn(x, y, reduction=reduction, weight=v)  # noqa: E731
    assert gradcheck(weighted, _leaves(a, b, w))
    assert gradgradcheck(weighted, _leaves(a, b, w))
    with pytest.raises(ValueError, match="Weights and input must have the same size."):
        fn(T(a), T(b), weight=T(w[0]))


def _leaves(*arrays):
    return tuple(T(x, requires_grad=True) for x in arrays)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "huber_loss", "smooth_l1_loss"])
def test_a_target_broadcast_against_the_input_warns_as_pytorch(name):
    with pytest.warns(UserWarning, match=r"Using a target size \(\(3, 1\)\) that is different"):
        out = getattr(F, name)(T(np.zeros((3, 4))), T(np.ones((3, 1))))
    assert_values(out, 0.5 if name in ("huber_loss", "smooth_l1_loss") else 1.0)
