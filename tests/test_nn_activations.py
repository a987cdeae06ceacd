"""The small activations (SiLU, Mish, Softplus, Softsign, LeakyReLU, ELU, SELU, Hardtanh) and
F.normalize against PyTorch (fixtures/rnn_torch.json, made by fixtures/make_rnn_fixtures.py):
values and weighted input gradients, kinks included; first and second derivatives by finite
differences, inplace, reprs and bad arguments."""

import json
import pathlib

import numpy as np
import pytest
from hypothesis import given

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import gradcheck
from conftest import T
from helpers import AWAY_FROM_ZERO, SHAPES, arrays, assert_values, check_grads, leaf

RECORD = json.loads((pathlib.Path(__file__).parent / "fixtures" / "rnn_torch.json").read_text())


@pytest.mark.parametrize("name", sorted(RECORD["activations"]))
def test_activation_module_values_and_gradients_match_pytorch(name):
    case = RECORD["activations"][name]
    x = leaf(case["input"])
    out = getattr(nn, case["layer"])(**case["kwargs"])(x)
    assert_values(out, case["output"])
    cr.sum(out * T(case["weights"])).backward()
    assert_values(x.grad, case["grad"])


@pytest.mark.parametrize("name", sorted(RECORD["normalize"]))
def test_normalize_values_and_gradients_match_pytorch(name):
    case = RECORD["normalize"][name]
    x = leaf(case["input"])
    out = F.normalize(x, **case["kwargs"])
    assert_values(out, case["output"])
    cr.sum(out * T(case["weights"])).backward()
    assert_values(x.grad, case["grad"])


FUNCTIONS = {
    "silu": F.silu,
    "mish": F.mish,
    "softplus_beta": lambda x: F.softplus(x, beta=2.0, threshold=3.0),
    "softsign": F.softsign,
    "leaky_relu": lambda x: F.leaky_relu(x, 0.2),
    "elu": lambda x: F.elu(x, 0.5),
    "selu": F.selu,
    "hardtanh": lambda x: F.hardtanh(x, -0.5, 1.5),
    "relu6": F.relu6,
    "hardsigmoid": F.hardsigmoid,
    "hardswish": F.hardswish,
    "threshold": lambda x: F.threshold(x, 0.5, -2.0),
    "normalize": lambda x: F.normalize(x, dim=-1),
    "normalize_p3": lambda x: F.normalize(x, p=3.0, dim=0),
}


# Where a function jumps or kinks away from zero: hardtanh's edges, softplus's threshold
# (beta x = 3, a jump of 0.024 between x and the smooth branch, as PyTorch's).
EDGES = {
    "hardtanh": (-0.5, 1.5),
    "softplus_beta": (1.5,),
    "relu6": (6.0,),
    "hardsigmoid": (-3.0, 3.0),
    "hardswish": (-3.0, 3.0),
    "threshold": (0.5,),
}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
@given(a=SHAPES.filter(lambda s: len(s) >= 1).flatmap(lambda s: arrays(s, AWAY_FROM_ZERO)))
def test_activation_first_and_second_derivatives_in_both_modes(name, a):
    # Away from zero: the kinks of leaky_relu, elu, selu and softsign; values drawn on an edge
    # are moved off it, where finite differences of 1e-6 do not straddle it.
    for edge in EDGES.get(name, ()):
        a = np.where(np.abs(a - edge) < 1e-3, a + 2e-3, a)
    check_grads(FUNCTIONS[name], leaf(a))
    assert gradcheck(FUNCTIONS[name], (leaf(a),), eps=1e-6, check_forward_ad=True)


@pytest.mark.parametrize(
    "layer",
    [
        nn.SiLU,
        nn.Mish,
        nn.LeakyReLU,
        nn.ELU,
        nn.SELU,
        nn.Hardtanh,
        nn.ReLU6,
        nn.Hardsigmoid,
        nn.Hardswish,
    ],
    ids=lambda c: c.__name__,
)
def test_inplace_activation_writes_into_its_input_and_returns_it(layer):
    values = np.array([-2.0, -0.3, 0.4, 3.0])
    expected = layer()(T(values))
    x = T(values)
    out = layer(inplace=True)(x)
    assert out is x
    assert_values(x, expected.numpy())


def test_inplace_activation_of_a_leaf_that_requires_grad_raises():
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        nn.ELU(inplace=True)(leaf([1.0, -1.0]))


def test_activation_reprs_print_pytorchs_options():
    assert repr(nn.LeakyReLU(0.2)) == "LeakyReLU(negative_slope=0.2)"
    assert repr(nn.ELU(inplace=True)) == "ELU(alpha=1.0, inplace=True)"
    assert repr(nn.Softplus()) == "Softplus(beta=1.0, threshold=20.0)"
    assert repr(nn.Hardtanh()) == "Hardtanh(min_val=-1.0, max_val=1.0)"
    assert repr(nn.Softsign()) == "Softsign()"
    assert repr(nn.SiLU()) == "SiLU()"
    assert repr(nn.ReLU6(inplace=True)) == "ReLU6(inplace=True)"
    assert repr(nn.Hardswish()) == "Hardswish()"
    assert repr(nn.Threshold(0.1, 20.0)) == "Threshold(threshold=0.1, value=20.0)"


def test_elu_and_selu_gradients_stay_finite_for_large_inputs():
    x = leaf([800.0, -800.0])
    cr.sum(F.elu(x) + F.selu(x)).backward()
    assert np.all(np.isfinite(x.grad.numpy()))


def test_elu_and_selu_slope_at_zero_is_the_left_one():
    # PyTorch's first derivative: alpha (scale * alpha for selu); it was half of that (the
    # tie of minimum(x, 0) at 0 shared the gradient), though elu with alpha = 1 is smooth
    # there. The second derivative is the same branch's, alpha (PyTorch's is 0 there: a
    # documented difference, docs/from-pytorch.md).
    for f, slope in (
        (lambda x: F.elu(x, alpha=2.0), 2.0),
        (lambda x: F.elu(x), 1.0),
        (F.selu, 1.0507009873554805 * 1.6732632423543772),
    ):
        x = leaf([0.0])
        (g,) = cr.autograd.grad(cr.sum(f(x)), x, create_graph=True)
        assert_values(g, [slope])
        (gg,) = cr.autograd.grad(cr.sum(g), x)
        assert_values(gg, [slope])


def test_hardtanh_with_min_above_max_raises():
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        nn.Hardtanh(1.0, -1.0)
    with pytest.raises(ValueError, match="min_val cannot be greater than max_val"):
        F.hardtanh(T([0.0]), 1.0, -1.0)
