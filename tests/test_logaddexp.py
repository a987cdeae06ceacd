"""logaddexp's derivatives from its inputs (sigmoid of their difference, as PyTorch): right
at infinite inputs, and on Dask a gradient computed without the loss computes no logaddexp."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T


def test_logaddexp_gradients_at_infinite_and_far_apart_inputs_are_pytorchs():
    # PyTorch 2.13: torch.logaddexp(x, y).sum().backward() on these float64 values.
    x = T([np.inf, 800.0, -800.0, 0.0, 1000.0], requires_grad=True)
    y = T([1.0, 0.0, 0.0, 0.0, 1000.0], requires_grad=True)
    with np.errstate(over="ignore"):  # exp(800) overflows to inf: the derivative's limit 0
        cr.sum(cr.logaddexp(x, y)).backward()
    np.testing.assert_array_equal(N(x.grad), [1.0, 1.0, 0.0, 0.5, 0.5])
    np.testing.assert_array_equal(N(y.grad), [0.0, 0.0, 1.0, 0.5, 0.5])


def test_logaddexp_first_and_second_derivatives_with_a_python_number():
    t = T([-3.0, -0.5, 0.0, 0.7, 4.0], requires_grad=True)
    assert gradcheck(lambda t: cr.logaddexp(0.0, t), (t,))
    assert gradgradcheck(lambda t: cr.logaddexp(t, 1.5), (t,))


def test_a_logistic_gradient_on_dask_computes_no_logaddexp():
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(0)
    x, s = rng.standard_normal((40, 3)), np.sign(rng.standard_normal(40))
    w = cr.asarray(da.from_array(np.array([0.5, -1.0, 2.0])), requires_grad=True)
    xs, ss = cr.asarray(da.from_array(x, chunks=(10, 3))), cr.asarray(da.from_array(s, chunks=10))
    cr.mean(cr.logaddexp(0.0, -ss * (xs @ w))).backward()
    keys = [str(k) for k in dict(w.grad.__dask_graph__())]
    assert keys and not [k for k in keys if "logaddexp" in k]
    z = -s * (x @ N(w))
    expected = x.T @ (-s / (1.0 + np.exp(-z))) / 40
    np.testing.assert_allclose(N(w.grad), expected, rtol=1e-13)
