"""SciPy's elementwise iterative methods (SCIPY_ARRAY_API=1) on chainrule tensors:
scipy.differentiate's derivative, jacobian and hessian, scipy.optimize.elementwise's
find_root and bracket_root, scipy.integrate.tanhsinh; values against the NumPy run, gradients
through the iterations against finite differences. They start by `xp.full(n,
xp.asarray(number), dtype=...)`, which chainrule's full refused before it took a 0-d tensor."""

import numpy as np
import pytest
import scipy.differentiate as sd
import scipy.integrate as si
from scipy.optimize import elementwise as oe

import chainrule as cr
from chainrule.autograd import gradcheck
from conftest import BACKEND, N

pytestmark = pytest.mark.skipif(
    BACKEND is not np, reason="SciPy mixes NumPy-backed tensors into its computations"
)

X = np.array([0.3, 0.7, 1.2])
WEIGHTS = np.array([0.7, -1.3, 0.4, 2.1, -0.6, 1.5, -0.2, 0.9, 1.1])


def _exp_sin(x):
    return x.__array_namespace__().exp(x) * x.__array_namespace__().sin(x)


CASES = {
    "derivative": lambda a: sd.derivative(_exp_sin, a).df,
    "derivative of a parameter": lambda a: sd.derivative(lambda x: (x * a[0]) ** 3, a[1:]).df,
    "jacobian": lambda a: sd.jacobian(lambda x: x * x[::-1], a).df,
    "hessian": lambda a: sd.hessian(lambda x: (x**3).sum(axis=0), a).ddf,
    "find_root": lambda a: oe.find_root(lambda x, c: x**3 - c, (a * 0, a + 2), args=(a,)).x,
    "bracket_root": lambda a: oe.bracket_root(lambda x, c: x - c, a * 0.5, args=(a,)).f_bracket[1],
    "tanhsinh": lambda a: si.tanhsinh(lambda x: x * x, a * 0, a).integral,
}


@pytest.mark.parametrize("name", CASES)
def test_scipy_elementwise_methods_match_numpy_and_differentiate(name):
    fn = CASES[name]
    x = cr.tensor(X, requires_grad=True)
    out = fn(x)
    assert out.__class__ is cr.Tensor and out.requires_grad
    np.testing.assert_allclose(N(out), fn(X), rtol=1e-12, atol=1e-14)

    def weighted(t):
        y = fn(t)
        return cr.sum(y * cr.asarray(WEIGHTS[: y.size].reshape(y.shape)))

    # The methods stop at a tolerance: the differences see a function smooth to about 1e-10.
    assert gradcheck(weighted, (x,), atol=1e-5, rtol=1e-4)
