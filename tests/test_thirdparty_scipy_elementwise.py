"""SciPy's elementwise iterative methods (SCIPY_ARRAY_API=1) on chainrule tensors:
scipy.differentiate's derivative, jacobian and hessian, scipy.optimize.elementwise's
find_root and bracket_root, scipy.integrate.tanhsinh; values against the NumPy run, gradients
through the iterations against finite differences. They start by `xp.full(n,
xp.asarray(number), dtype=...)`, which chainrule's full refused before it took a 0-d tensor.
On the storage library under test."""

import numpy as np
import pytest
import scipy.differentiate as sd
import scipy.integrate as si
from scipy.optimize import elementwise as oe

import chainrule as cr
from chainrule.autograd import gradcheck
from conftest import BACKEND, LIBRARY, N, T, fails_on, skip_on

# SciPy makes its finite-difference weights with xp.asarray(numpy_array): NumPy tensors, which
# PyTorch's functions don't take (JAX's do). array-api-strict and Dask refuse SciPy's writes
# through integer index arrays (and Dask's arrays have sizes unknown until computed).
ELSEWHERE = fails_on("array_api_strict", "dask", reason="SciPy's writes by index arrays")
WEIGHTS_MIX = fails_on("torch", reason="SciPy's NumPy weights with PyTorch tensors")
SLOW_ON_JAX = skip_on("jax", reason="thousands of small dispatches: over 30 s on JAX")
MARKS = {
    "derivative": WEIGHTS_MIX,
    "derivative of a parameter": WEIGHTS_MIX,
    "jacobian": WEIGHTS_MIX,
    "hessian": (WEIGHTS_MIX, SLOW_ON_JAX),
    "tanhsinh": SLOW_ON_JAX,
}

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


@ELSEWHERE
@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=MARKS[n]) if n in MARKS else n for n in CASES]
)
def test_scipy_elementwise_methods_match_numpy_and_differentiate(name):
    fn = CASES[name]
    x = T(X, requires_grad=True)
    out = fn(x)
    assert out.__class__ is cr.Tensor and out.requires_grad
    # Another library rounds otherwise: its zeros (off-diagonal derivatives) differ by 1e-11.
    atol = 1e-14 if BACKEND is np else 1e-10
    np.testing.assert_allclose(N(out), fn(X), rtol=1e-12, atol=atol)

    if LIBRARY == "jax":
        return  # each finite difference reruns the iterations op by op on JAX: minutes

    def weighted(t):
        y = fn(t)
        return cr.sum(y * T(WEIGHTS[: y.size].reshape(y.shape)))

    # The methods stop at a tolerance: the differences see a function smooth to about 1e-10.
    assert gradcheck(weighted, (x,), atol=1e-5, rtol=1e-4)
