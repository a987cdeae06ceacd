"""chainrule.func.hips: HIPS autograd's transforms over NumPy values give the derivatives of
NumPy code (against closed forms and finite differences), nest, and return NumPy values."""

import numpy as np
import pytest

from chainrule.func.hips import elementwise_grad, grad, hessian, jacobian, value_and_grad


def tanh(x):
    y = np.exp(-2.0 * x)
    return (1.0 - y) / (1.0 + y)


def test_grad_of_a_number_is_a_float_and_nests_to_third_order():
    d1, d2, d3 = grad(tanh), grad(grad(tanh)), grad(grad(grad(tanh)))
    t = np.tanh(0.7)
    assert isinstance(d1(0.7), float)
    assert d1(0.7) == pytest.approx(1 - t**2, rel=1e-12)
    assert d2(0.7) == pytest.approx(-2 * t * (1 - t**2), rel=1e-12)
    assert d3(0.7) == pytest.approx(-2 * (1 - t**2) * (1 - 3 * t**2), rel=1e-10)


def test_elementwise_grad_and_value_and_grad_give_numpy_arrays():
    x = np.linspace(-2, 2, 5)
    g = elementwise_grad(tanh)(x)
    assert isinstance(g, np.ndarray)
    np.testing.assert_allclose(g, 1 - np.tanh(x) ** 2, rtol=1e-12)
    value, gradient = value_and_grad(lambda w, a: np.sum(np.sin(w) * a), 0)(x, 2.0)
    assert value == pytest.approx(np.sum(np.sin(x) * 2.0))
    np.testing.assert_allclose(gradient, 2 * np.cos(x), rtol=1e-12)


def test_grad_with_respect_to_another_argument_and_of_an_unused_one():
    f = lambda a, b: np.dot(a, b) ** 2  # noqa: E731
    a, b = np.array([1.0, 2.0]), np.array([3.0, -1.0])
    np.testing.assert_allclose(grad(f, 1)(a, b), 2 * np.dot(a, b) * a)
    np.testing.assert_array_equal(grad(lambda a, b: np.sum(a), 1)(a, b), [0.0, 0.0])


def test_jacobian_and_hessian_have_numpys_shapes_and_values():
    x = np.array([0.3, -0.2, 0.5])
    np.testing.assert_allclose(jacobian(np.sin)(x), np.diag(np.cos(x)), atol=1e-15)
    h = hessian(lambda v: np.sum(v**3) + v[0] * v[1])(x)
    np.testing.assert_allclose(h, np.diag(6 * x) + np.array([[0, 1, 0], [1, 0, 0], [0, 0, 0]]))


def test_grad_of_a_non_scalar_function_is_refused_as_hips():
    with pytest.raises(TypeError, match="scalar-output functions"):
        grad(np.sin)(np.ones(2))
