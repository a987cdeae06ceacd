"""The losses on options test_nn_losses.py leaves out, against PyTorch: N-d inputs, 0-size
batches, every label ignored (fixtures/loss_option_cases.py, recorded by
fixtures/make_loss_option_fixtures.py into loss_options_torch.json); second derivatives by
finite differences; targets of another shape."""

import json
import pathlib

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import grad, gradgradcheck
from conftest import T
from fixtures.loss_option_cases import CASES, inputs
from helpers import assert_values

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "loss_options_torch.json").read_text()
)
INTEGERS = ("lab4", "ign4", "allign")


def _env():
    env = {"F": F, "nn": nn}
    for name, value in inputs().items():
        env[name] = T(value, np.int64 if name in INTEGERS else None)
    env["a"].requires_grad_(True)
    env["a4"].requires_grad_(True)
    return env


def _recorded(entry):
    flat = [np.nan if v is None else v for v in entry["flat"]]
    return np.asarray(flat, dtype=np.float64).reshape(entry["shape"])


def test_the_record_covers_every_case():
    assert set(RECORD["cases"]) == set(CASES)


@pytest.mark.parametrize("source", CASES)
def test_loss_option_value_and_gradients_are_pytorchs(source):
    env = _env()
    out = eval(source, env)
    g, g4 = grad(cr.sum(out), (env["a"], env["a4"]), allow_unused=True, materialize_grads=True)
    expected = RECORD["cases"][source]
    assert_values(out, _recorded(expected["value"]), rtol=1e-12, atol=1e-14)
    assert_values(g, _recorded(expected["grad_a"]), rtol=1e-10, atol=1e-14)
    assert_values(g4, _recorded(expected["grad_a4"]), rtol=1e-10, atol=1e-14)


@pytest.mark.parametrize(
    "source",
    [
        "F.cross_entropy(a4, ign4, weight=cw, label_smoothing=0.2)",
        "F.cross_entropy(a4, probs4, weight=cw, label_smoothing=0.1)",
        "F.binary_cross_entropy_with_logits(a4, p4, weight=p4, pos_weight=pw4)",
        "F.nll_loss(a4.log_softmax(1), ign4, weight=cw, reduction='sum')",
    ],
)
def test_loss_option_second_derivatives(source):
    env = _env()
    a4 = env.pop("a4")
    assert gradgradcheck(lambda x: eval(source, {**env, "a4": x}), (a4,), eps=1e-6)


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_of_an_empty_batch_are_pytorchs(reduction):
    # PyTorch: a 'mean' over nothing is NaN, a 'sum' 0, 'none' empty; the gradient is empty
    a = T(np.zeros((0, 4))).requires_grad_(True)
    labels = T(np.zeros((0,)), np.int64)
    for out, unreduced in (
        (F.cross_entropy(a, labels, reduction=reduction, label_smoothing=0.1), (0,)),
        (F.binary_cross_entropy_with_logits(a, a.detach(), reduction=reduction), (0, 4)),
        (F.mse_loss(a, a.detach(), reduction=reduction), (0, 4)),
    ):
        expected = {"mean": np.nan, "sum": 0.0, "none": np.zeros(unreduced)}[reduction]
        np.testing.assert_array_equal(np.asarray(out.detach().numpy()), expected)
        (g,) = grad(cr.sum(out), a)
        assert g.shape == (0, 4)


def test_binary_cross_entropy_with_logits_takes_a_target_of_the_input_size_only():
    a = T(np.zeros((3, 4)))
    with pytest.raises(ValueError, match=r"Target size \(\(4,\)\) must be the same as input size"):
        F.binary_cross_entropy_with_logits(a, T(np.zeros(4)), pos_weight=T(np.ones(4)))
    with pytest.raises(ValueError, match="must be the same as input size"):
        nn.BCEWithLogitsLoss()(a, T(np.zeros((1, 4))))
