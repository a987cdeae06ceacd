"""binary_cross_entropy on an input outside [0, 1] (or NaN): PyTorch's RuntimeError (a NaN or
a wrong finite loss before); 0 and 1 themselves stay finite, and so do their gradients
(PyTorch's (p - t) / max(p (1 - p), 1e-12); they were NaN). Its rule, binary_cross_entropy,
against finite differences to second order."""

import warnings

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from conftest import LIBRARY, N, T
from helpers import check_grads, leaf

GRADCHECKED = {"binary_cross_entropy"}


@pytest.mark.parametrize("bad", [1.5, -0.1, np.nan])
def test_binary_cross_entropy_of_an_input_outside_0_1_raises_as_pytorch(bad):
    if LIBRARY == "dask":  # not read on a lazy library (it would compute the input): a NaN
        assert np.isnan(N(F.binary_cross_entropy(T(np.array([0.5, bad])), T([1.0, 0.0]))))
        return
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(T(np.array([0.5, bad])), T(np.array([1.0, 0.0])))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        nn.BCELoss()(T(np.array([[bad]])), T(np.array([[1.0]])))


def test_binary_cross_entropy_takes_the_ends_and_an_empty_input():
    out = F.binary_cross_entropy(T(np.array([0.0, 1.0])), T(np.array([1.0, 0.0])))
    assert float(out.item()) == 100.0
    empty = F.binary_cross_entropy(T(np.zeros(0)), T(np.zeros(0)), reduction="sum")
    assert float(empty.item()) == 0.0


def test_binary_cross_entropy_gradients_at_the_ends_are_pytorchs():
    p = T(np.array([0.0, 0.0, 0.0, 1.0, 1.0, 0.25]), requires_grad=True)
    t = T(np.array([1.0, 0.0, 0.3, 0.0, 1.0, 0.5]), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # log(0), as PyTorch takes it
        loss = F.binary_cross_entropy(p, t, reduction="none")
        cr.sum(loss).backward()
    np.testing.assert_allclose(N(loss)[:5], [100.0, 0.0, 30.0, 100.0, 0.0])
    # d/dp = (p - t) / max(p (1 - p), 1e-12); d/dt = -logit(p) (PyTorch's values, infinite
    # at the ends).
    np.testing.assert_allclose(N(p.grad), [-1e12, 0.0, -0.3e12, 1e12, 0.0, -4.0 / 3.0])
    np.testing.assert_allclose(N(t.grad), [np.inf, np.inf, np.inf, -np.inf, -np.inf, np.log(3)])


def test_a_saturated_float32_sigmoid_gives_finite_gradients():
    # sigmoid(20) is 1 in float32 and sigmoid(-120) is 0: PyTorch's gradients are 0 there.
    x = T(np.array([20.0, -120.0, 0.5], dtype=np.float32), requires_grad=True)
    target = T(np.array([0.0, 1.0, 1.0], dtype=np.float32))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        loss = nn.BCELoss(reduction="sum")(cr.sigmoid(x), target)
        loss.backward()
    np.testing.assert_allclose(float(loss.item()), 200.0 - np.log(1 / (1 + np.exp(-0.5))), 1e-6)
    np.testing.assert_allclose(N(x.grad), [0.0, 0.0, 1 / (1 + np.exp(-0.5)) - 1], rtol=1e-6)


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_binary_cross_entropy_first_and_second_derivatives(reduction):
    rng = np.random.default_rng(3)
    p, t = rng.uniform(0.05, 0.95, (3, 4)), rng.uniform(0.0, 1.0, (3, 4))
    w = T(rng.uniform(0.5, 2.0, (4,)))
    check_grads(lambda a, b: F.binary_cross_entropy(a, b, w, reduction=reduction), leaf(p), leaf(t))
