"""chainrule.optimize.minimize without a method picks SciPy's default for the problem, as
scipy.optimize.minimize does: L-BFGS-B with bounds, SLSQP with constraints, BFGS otherwise
(it always used BFGS, which ignores bounds and constraints with a warning)."""

import numpy as np
import pytest

import chainrule as cr

so = pytest.importorskip("scipy.optimize")


def _objective(x):
    return cr.sum((x - 3.0) ** 2)


def _numpy_objective(x):
    return np.sum((x - 3.0) ** 2)


def test_minimize_with_bounds_and_no_method_keeps_the_bounds_as_scipy():
    bounds = [(0.0, 1.0), (0.0, 2.0)]
    res = cr.optimize.minimize(_objective, np.zeros(2), bounds=bounds)
    expected = so.minimize(_numpy_objective, np.zeros(2), bounds=bounds)
    np.testing.assert_allclose(res.x, expected.x, atol=1e-8)
    np.testing.assert_allclose(res.x, [1.0, 2.0], atol=1e-8)


def test_minimize_with_constraints_and_no_method_keeps_the_constraints_as_scipy():
    constraint = {"type": "ineq", "fun": lambda x: 1.0 - x[0] - x[1]}
    res = cr.optimize.minimize(_objective, np.zeros(2), constraints=constraint)
    expected = so.minimize(_numpy_objective, np.zeros(2), constraints=constraint)
    np.testing.assert_allclose(res.x, expected.x, atol=1e-6)
    np.testing.assert_allclose(res.x, [0.5, 0.5], atol=1e-6)


def test_minimize_without_method_bounds_or_constraints_uses_bfgs_with_the_gradient():
    res = cr.optimize.minimize(_objective, np.zeros(2))
    np.testing.assert_allclose(res.x, [3.0, 3.0], atol=1e-6)
    assert res.njev >= 1 and res.nfev == res.njev  # jac=True: value and gradient together
