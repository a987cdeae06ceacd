"""autograd.functional: vjp, jvp, jacobian, hessian, hvp and vhp against closed forms."""

import numpy as np
import pytest

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


def relu_sum(x):
    return cr.sum(cr.nn.functional.relu(x))


def test_a_gradient_that_carries_no_graph_has_zero_second_derivatives_as_in_pytorch():
    # ReLU's gradient is a constant mask: it carries no graph, and autograd.grad of it raises.
    # PyTorch's functional API leaves such an output out: its Hessian, hvp and vhp are zeros,
    # and a Jacobian of a function whose output does not depend on the input is zeros too
    # (PyTorch 2.13 gives these zeros for each call below).
    x = T([1.0, -2.0, 3.0])
    v = T([1.0, 1.0, 1.0])
    zeros = np.zeros((3, 3))
    for vectorize in (False, True):
        np.testing.assert_array_equal(
            N(functional.hessian(relu_sum, x, vectorize=vectorize)), zeros
        )
        jac = functional.jacobian(lambda a: a.detach() * 2.0, x, vectorize=vectorize)
        np.testing.assert_array_equal(N(jac), zeros)
    np.testing.assert_array_equal(N(functional.hvp(relu_sum, x, v)[1]), np.zeros(3))
    np.testing.assert_array_equal(N(functional.vhp(relu_sum, x, v)[1]), np.zeros(3))
    np.testing.assert_array_equal(
        N(functional.vjp(lambda a: a.detach() * 2.0, x, v)[1]), np.zeros(3)
    )
    # Two inputs, one reaching the gradient through the other's mask: the blocks PyTorch gives.
    (haa, hab), (hba, hbb) = functional.hessian(
        lambda a, b: cr.sum(cr.nn.functional.relu(a) * b), (x, v)
    )
    mask = np.diag([1.0, 0.0, 1.0])
    for block, expected in ((haa, zeros), (hab, mask), (hba, mask), (hbb, zeros)):
        np.testing.assert_array_equal(N(block), expected)
    # strict still refuses an output that does not require grad, with PyTorch's message.
    with pytest.raises(RuntimeError, match="does not require gradients"):
        functional.jacobian(lambda a: a.detach() * 2.0, x, strict=True)
