"""chainrule.distributions.Categorical, which the ports of reinforcement_learning's REINFORCE
and actor-critic needed: probs, logits, log_prob (values broadcast with the batch), entropy,
mode and the parameter's gradient against PyTorch (fixtures/ports_gaps_torch.json, recorded
by fixtures/make_ports_gaps_fixtures.py); first and second derivatives by finite
differences; samples' shapes and frequencies; PyTorch's argument checks and errors."""

import json
import pathlib

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from chainrule.distributions import Categorical, Distribution
from conftest import LIBRARY, N, T
from helpers import assert_values

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "ports_gaps_torch.json").read_text()
)["categorical"]


@pytest.mark.parametrize("name", RECORD)
def test_categorical_matches_pytorch(name):
    case = RECORD[name]
    param = T(np.asarray(case["param"]), requires_grad=True)
    m = Categorical(**{case["by"]: param})
    log_prob, entropy = m.log_prob(T(np.asarray(case["value"]))), m.entropy()
    for got, key in ((m.probs, "probs"), (m.logits, "logits"), (log_prob, "log_prob")):
        assert_values(got, np.asarray(case[key]), rtol=1e-11, atol=1e-13)
    assert_values(entropy, np.asarray(case["entropy"]), rtol=1e-11, atol=1e-13)
    assert N(m.mode).tolist() == case["mode"]
    assert m.batch_shape == param.shape[:-1] and m.event_shape == ()
    loss = cr.sum(log_prob * T(case["weights_log_prob"]))
    (loss + cr.sum(entropy * T(case["weights_entropy"]))).backward()
    assert_values(param.grad, np.asarray(case["grad"]), rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("by", ["probs", "logits"])
def test_log_prob_and_entropy_second_derivatives_by_finite_differences(by):
    values = T(np.array([[2, 0], [1, 1]]))

    def fn(p):
        m = Categorical(**{by: p})
        return m.log_prob(values) * 1.5 + m.entropy() ** 2

    p = T(np.random.default_rng(3).uniform(0.2, 1.0, (2, 3)), requires_grad=True)
    assert gradcheck(fn, (p,))
    assert gradgradcheck(fn, (p,))


def test_samples_have_the_batch_shape_and_the_probabilities_frequencies():
    cr.manual_seed(0)
    m = Categorical(T(np.array([[0.1, 0.6, 0.3], [0.0, 0.0, 1.0]])))
    draws = m.sample((4000,))
    assert draws.shape == (4000, 2) and draws.dtype == cr.int64
    counts = np.bincount(N(draws[:, 0]), minlength=3) / 4000
    np.testing.assert_allclose(counts, [0.1, 0.6, 0.3], atol=0.03)
    assert (N(draws[:, 1]) == 2).all()  # never a category of probability 0
    assert m.sample().shape == (2,)
    p = T(np.array([0.5, 0.5]), requires_grad=True)
    assert not Categorical(p).sample().requires_grad


def test_mean_variance_and_support():
    m = Categorical(logits=T(np.zeros((2, 4))))
    assert np.isnan(N(m.mean)).all() and m.mean.shape == (2,)
    assert np.isnan(N(m.variance)).all()
    assert m.param_shape == (2, 4)
    assert N(m.enumerate_support()).tolist() == [[0, 0], [1, 1], [2, 2], [3, 3]]
    assert m.enumerate_support(expand=False).shape == (4, 1)
    assert_values(m.perplexity(), np.full(2, 4.0))
    assert repr(Categorical(logits=T(np.zeros((2, 4))))) == "Categorical(logits: (2, 4))"
    assert repr(m) == "Categorical(probs: (2, 4), logits: (2, 4))"  # probs made on first use


def test_bad_arguments_raise_pytorchs_errors():
    with pytest.raises(
        ValueError, match="Either `probs` or `logits` must be specified, but not both"
    ):
        Categorical()
    with pytest.raises(ValueError, match="`probs` parameter must be at least one-dimensional"):
        Categorical(T(1.0))
    with pytest.raises(
        ValueError,
        match=r"parameter probs \(Tensor of shape \(2,\)\) of distribution "
        r"Categorical\(probs: \(2,\)\) to satisfy the constraint Simplex\(\)",
    ):
        Categorical(T(np.array([-0.5, 1.5])))
    with pytest.raises(ValueError, match="constraint IndependentConstraint"):
        Categorical(logits=T(np.array([np.nan, 1.0])))
    m = Categorical(T(np.array([0.5, 0.5])))
    with pytest.raises(
        ValueError,
        match=r"to be within the support \(IntegerInterval\(lower_bound=0, upper_bound=1\)\)",
    ):
        m.log_prob(T(2))
    with pytest.raises(ValueError, match="The value argument to log_prob must be a Tensor"):
        m.log_prob([1])
    with pytest.raises(
        ValueError,
        match=r"Value is not broadcastable with batch_shape\+event_shape: \(3,\) vs \(2,\)",
    ):
        Categorical(T(np.ones((2, 3)))).log_prob(T(np.zeros(3, dtype=np.int64)))


def test_validate_args_false_skips_the_checks():
    m = Categorical(T(np.array([-0.5, 1.5])), validate_args=False)
    assert_values(m.probs, [-0.5, 1.5])
    Distribution.set_default_validate_args(False)
    try:
        Categorical(T(np.array([-0.5, 1.5])))
    finally:
        Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="Simplex"):
        Categorical(T(np.array([-0.5, 1.5])))


@pytest.mark.skipif(LIBRARY != "numpy", reason="the error's printed values are NumPy's")
def test_the_error_shows_the_invalid_values():
    with pytest.raises(ValueError, match=r"found invalid values:\ntensor\(\[-0.5"):
        Categorical(T(np.array([-0.5, 1.5])))
