"""autograd.functional: vjp, jvp, jacobian, hessian, hvp and vhp against closed forms."""

import numpy as np

import chainrule as cr
from chainrule.autograd import functional
from conftest import N, T


def cube_sum(x):
    return cr.sum(x**3)


def test_vjp_is_v_times_the_jacobian():
    x = T([1.0, 2.0, 3.0])
    v = T([1.0, 0.5, -1.0])
    out, g = functional.vjp(cr.sin, x, v)
    np.testing.assert_allclose(N(out), np.sin([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(N(g), np.cos([1.0, 2.0, 3.0]) * [1.0, 0.5, -1.0])
    assert not out.requires_grad and not g.requires_grad


def test_jvp_is_the_jacobian_times_v():
    x = T([1.0, 2.0])
    v = T([0.5, -2.0])
    out, jv = functional.jvp(lambda a: a * a * 3.0, x, v)
    np.testing.assert_allclose(N(jv), 6.0 * np.array([1.0, 2.0]) * [0.5, -2.0])


def test_jacobian_of_one_input_and_output_has_shape_out_by_in():
    x = T([1.0, 2.0, 3.0])
    jac = functional.jacobian(lambda a: cr.exp(a[0:2]) * a[2], x)
    expected = np.array([[np.e * 3.0, 0.0, np.e], [0.0, np.e**2 * 3.0, np.e**2]])
    assert jac.shape == (2, 3)
    np.testing.assert_allclose(N(jac), expected)


def test_jacobian_of_several_inputs_gives_one_block_per_input():
    a, b = T([1.0, 2.0]), T([3.0])
    ja, jb = functional.jacobian(lambda p, q: p * q, (a, b))
    np.testing.assert_allclose(N(ja), np.diag([3.0, 3.0]))
    np.testing.assert_allclose(N(jb), [[1.0], [2.0]])


def test_hessian_of_a_cubic():
    x = T([1.0, -2.0])
    np.testing.assert_allclose(N(functional.hessian(cube_sum, x)), np.diag([6.0, -12.0]))


def test_hvp_and_vhp_of_a_cubic():
    x = T([1.0, -2.0])
    v = T([1.0, 1.0])
    value, hv = functional.hvp(cube_sum, x, v)
    np.testing.assert_allclose(value.item(), -7.0)
    np.testing.assert_allclose(N(hv), [6.0, -12.0])
    _, vh = functional.vhp(cube_sum, x, v)
    np.testing.assert_allclose(N(vh), N(hv))


def test_create_graph_keeps_the_result_differentiable():
    x = T([0.5, 1.5], requires_grad=True)
    _, g = functional.vjp(lambda a: a**3, x, T([1.0, 1.0]), create_graph=True)
    (gg,) = cr.autograd.grad(cr.sum(g), x)
    np.testing.assert_allclose(N(gg), 6.0 * np.array([0.5, 1.5]))
