"""chainrule.optimize: SciPy's minimize and least_squares over pytrees of parameters, with
exact gradients, Hessian-vector products and Jacobians from chainrule."""

import sys

import numpy as np
import pytest

import chainrule as cr
from chainrule import optimize
from conftest import N, T


def rosenbrock(p):
    x, y = p["xy"][0], p["xy"][1]
    return (1 - x) ** 2 + 100 * (y - x * x) ** 2


# One method per kind of derivative: gradient, Hessian-vector products, Hessian.
@pytest.mark.parametrize("method", ["BFGS", "Newton-CG", "trust-exact"])
def test_minimize_finds_the_rosenbrock_minimum_with_exact_derivatives(method):
    res = optimize.minimize(rosenbrock, {"xy": np.array([-1.2, 1.0])}, method=method, tol=1e-8)
    assert res.success, res.message
    np.testing.assert_allclose(res.x["xy"], [1.0, 1.0], atol=1e-5)
    assert isinstance(res.x["xy"], np.ndarray) and res.x_flat.shape == (2,)


def test_gradient_methods_need_fewer_evaluations_than_finite_differences():
    import scipy.optimize

    def flat(v):
        return (1 - v[0]) ** 2 + 100 * (v[1] - v[0] ** 2) ** 2

    ours = optimize.minimize(rosenbrock, {"xy": np.array([-1.2, 1.0])}, method="BFGS")
    theirs = scipy.optimize.minimize(flat, np.array([-1.2, 1.0]), method="BFGS")
    assert ours.nfev < theirs.nfev
    assert abs(ours.fun) < 1e-9


def test_the_pytree_keeps_its_structure_and_leaf_kinds():
    x0 = {"a": (T([1.0, 2.0]), 3.0), "b": [np.zeros((2, 2))], "c": None}
    seen = []

    def fun(p, target):
        seen.append(p)
        a, s = p["a"]
        return cr.sum((a - target) ** 2) + (s - 1.0) ** 2 + cr.sum((p["b"][0] + 2.0) ** 2)

    res = optimize.minimize(fun, x0, args=(T([5.0, -1.0]),), method="BFGS")
    assert isinstance(seen[0]["a"][1], cr.Tensor) and seen[0]["a"][1].requires_grad
    assert seen[0]["c"] is None
    a, s = res.x["a"]
    assert isinstance(a, cr.Tensor) and isinstance(s, float) and isinstance(res.x["b"], list)
    np.testing.assert_allclose(N(a), [5.0, -1.0], atol=1e-6)
    assert s == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_allclose(res.x["b"][0], np.full((2, 2), -2.0), atol=1e-6)
    assert res.x["c"] is None


def test_hessian_vector_products_are_exact():
    tree = optimize._Tree({"w": np.array([0.3, -0.7, 1.1])})

    def fun(p):
        w = p["w"]
        return cr.sum(cr.exp(w) * w) + w[0] * w[1] * w[2]

    objective = optimize._Objective(fun, tree, ())
    x = np.array([0.3, -0.7, 1.1])
    h = np.diag(np.exp(x) * (x + 2))
    h += np.array([[0, x[2], x[1]], [x[2], 0, x[0]], [x[1], x[0], 0]])
    for v in np.eye(3):
        np.testing.assert_allclose(objective.hessp(x, v), h @ v, rtol=1e-12)
    np.testing.assert_allclose(objective.hess(x), h, rtol=1e-12)


def test_a_linear_objective_has_zero_hessian_products():
    objective = optimize._Objective(lambda p: cr.sum(p * 2.0), optimize._Tree(np.ones(2)), ())
    assert objective.hessp(np.ones(2), np.ones(2)).tolist() == [0.0, 0.0]


def test_methods_without_derivatives_get_none():
    res = optimize.minimize(lambda p: (p - 2.0) ** 2, 0.0, method="Nelder-Mead")
    assert res.x == pytest.approx(2.0, abs=1e-3) and "njev" not in res


def test_minimize_rejects_a_non_scalar_objective():
    with pytest.raises(ValueError, match="scalar"):
        optimize.minimize(lambda p: p * 2.0, np.ones(2))


def test_least_squares_fits_an_exponential_with_the_exact_jacobian():
    t = np.linspace(0, 2, 30)
    y = 2.5 * np.exp(-1.3 * t) + 0.4
    t_, y_ = T(t), T(y)

    def residuals(p):
        return p["amplitude"] * cr.exp(-p["rate"] * t_) + p["offset"] - y_

    res = optimize.least_squares(residuals, {"amplitude": 1.0, "rate": 0.5, "offset": 0.0})
    assert res.success
    assert res.x == pytest.approx({"amplitude": 2.5, "rate": 1.3, "offset": 0.4}, abs=1e-8)
    j = res.jac
    expected_col = np.exp(-1.3 * t)
    np.testing.assert_allclose(j[:, 0], expected_col, rtol=1e-6)


def test_a_clear_error_without_scipy(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy.optimize", None)
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(ImportError, match=r"pip install 'chainrule\[optimize\]'"):
        optimize.minimize(lambda p: p * p, 1.0)


@pytest.mark.parametrize("m", [2, 5])
def test_the_jacobian_by_rows_and_by_columns(m):
    """Fewer residuals than parameters: by rows; more: by columns (forward products)."""
    x = np.array([0.5, -1.0, 2.0])
    a = np.arange(m * 3.0).reshape(m, 3) / 7

    def residuals(p):
        return cr.sin(T(a) @ p) * p[0]

    objective = optimize._Objective(residuals, optimize._Tree(x), ())
    ax = a @ x
    expected = np.cos(ax)[:, None] * a * x[0]
    expected[:, 0] += np.sin(ax)
    np.testing.assert_allclose(objective.jacobian(x), expected, rtol=1e-12)
