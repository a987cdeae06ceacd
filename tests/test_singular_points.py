"""Derivatives at points where a function is not differentiable, where chainrule takes
PyTorch's subgradient rather than a 0/0: atan2 at the origin (0, as angle at z == 0), in
both modes, and np.arctan2 on tensors the same."""

import numpy as np

import chainrule as cr
from chainrule.autograd import grad
from conftest import N, T


def test_atan2_at_the_origin_has_gradient_zero_and_elsewhere_its_derivative():
    y = T([0.0, 1.0, 0.0], requires_grad=True)
    x = T([0.0, 2.0, -3.0], requires_grad=True)
    gy, gx = grad(cr.sum(cr.atan2(y, x)), (y, x))
    r2 = np.array([1.0, 5.0, 9.0])  # x^2 + y^2, 1 where both are 0
    np.testing.assert_allclose(N(gy), np.array([0.0, 2.0, -3.0]) / r2)
    np.testing.assert_allclose(N(gx), -np.array([0.0, 1.0, 0.0]) / r2)


def test_numpy_arctan2_of_a_zero_vector_keeps_the_gradient_finite():
    v = T([[0.0, 0.0], [3.0, 4.0]], requires_grad=True)
    (g,) = grad(cr.sum(np.arctan2(v[:, 1], v[:, 0])), (v,))
    np.testing.assert_allclose(N(g), [[0.0, 0.0], [-4.0 / 25.0, 3.0 / 25.0]])


def test_atan2_forward_mode_at_the_origin_is_zero():
    y, x = T([0.0, 1.0]), T([0.0, 1.0])
    _, tangent = cr.func.jvp(cr.atan2, (y, x), (T([1.0, 1.0]), T([1.0, 0.0])))
    np.testing.assert_allclose(N(tangent), [0.0, 0.5])
