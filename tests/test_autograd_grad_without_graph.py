"""autograd.grad and backward of a gradient that has no graph (the first derivative of a
linear function taken with create_graph=True), with allow_unused, materialize_grads, batched
grad_outputs, backward's inputs=, and inside func.hessian, jacrev of grad and
autograd.functional: each case raises or returns as torch.autograd does (PyTorch 2.13's
outcome recorded beside it: the error's type and first words, or the values)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import autograd
from chainrule.func import grad as func_grad
from chainrule.func import hessian, jacfwd, jacrev
from conftest import T

A = autograd
NO_GRAPH = "element 0 of tensors does not require grad and does not have a grad_fn"
LINEAR = (
    "While computing the hessian, found that the jacobian of the user-provided function with "
    "respect to input 0 is independent of the input. This is not allowed in strict mode."
)


def X():
    return T([1.0, 2.0], requires_grad=True)


def lin():
    """x and the gradient of sum(3 x), taken with create_graph: 3s, with no graph."""
    x = X()
    (g,) = A.grad(cr.sum(3 * x), x, create_graph=True)
    return x, g


def f(x):
    return cr.sum(3 * x)


def _backward_then():
    x = X()
    cr.sum(3 * x).backward(create_graph=True)
    return A.grad(cr.sum(x.grad), x)


def _third_of_quadratic():
    x = X()
    (g,) = A.grad(cr.sum(x * x), x, create_graph=True)
    (h,) = A.grad(cr.sum(g), x, create_graph=True)  # 2s, no graph
    return A.grad(cr.sum(h), x, allow_unused=True, materialize_grads=True)


def _grad_inside_func_grad():
    def h(x):
        (g,) = A.grad(f(x), x, create_graph=True)
        return cr.sum(g)

    return func_grad(h)(T([1.0, 2.0]))


def _grad_of_grad_of_a_detached_leaf():
    x = T([1.0, 2.0]).requires_grad_(True)
    (g,) = A.grad(f(x), x, create_graph=True)
    return A.grad(cr.sum(g), x, allow_unused=True, materialize_grads=True)


def _gradient_of(x):
    return A.grad(f(x), x, create_graph=True)[0]


def _backward(*args, **kwargs):
    A.backward(*args, **kwargs)


# name: (call, PyTorch's outcome: an exception type and its message's start, or values)
CASES = {
    "grad": (lambda: A.grad(cr.sum(lin()[1]), X()), (RuntimeError, NO_GRAPH)),
    "grad_allow_unused": (
        lambda: (lambda x, g: A.grad(cr.sum(g), x, allow_unused=True))(*lin()),
        (RuntimeError, NO_GRAPH),
    ),
    "grad_materialize_grads": (
        lambda: (lambda x, g: A.grad(cr.sum(g), x, materialize_grads=True))(*lin()),
        (RuntimeError, NO_GRAPH),
    ),
    "grad_allow_unused_materialize_grads": (
        lambda: (lambda x, g: A.grad(cr.sum(g), x, allow_unused=True, materialize_grads=True))(
            *lin()
        ),
        (RuntimeError, NO_GRAPH),
    ),
    "grad_create_graph": (
        lambda: (lambda x, g: A.grad(cr.sum(g), x, create_graph=True))(*lin()),
        (RuntimeError, NO_GRAPH),
    ),
    "grad_of_the_vector": (
        lambda: (lambda x, g: A.grad(g, x, grad_outputs=cr.ones((2,))))(*lin()),
        (RuntimeError, NO_GRAPH),
    ),
    "grad_of_the_vector_implicit": (
        lambda: (lambda x, g: A.grad(g, x))(*lin()),
        (RuntimeError, NO_GRAPH),
    ),
    # the outputs are checked before the inputs (chainrule checked the inputs first)
    "grad_by_itself": (
        lambda: (lambda x, g: A.grad(cr.sum(g), g))(*lin()),
        (RuntimeError, NO_GRAPH),
    ),
    "grad_by_itself_allow_unused": (
        lambda: (lambda x, g: A.grad(cr.sum(g), g, allow_unused=True))(*lin()),
        (RuntimeError, NO_GRAPH),
    ),
    "grad_batched": (
        lambda: (lambda x, g: A.grad(g, x, grad_outputs=cr.eye(2), is_grads_batched=True))(*lin()),
        (RuntimeError, NO_GRAPH),
    ),
    "grad_second_of_two_outputs": (
        lambda: (lambda x, g: A.grad([cr.sum(x * x), cr.sum(g)], x))(*lin()),
        (RuntimeError, "element 1 of tensors does not require grad and does not have a"),
    ),
    # PyTorch's words for no inputs (chainrule's were its own)
    "grad_no_inputs": (
        lambda: A.grad(cr.sum(lin()[1]), []),
        (RuntimeError, "`inputs` argument to `grad()` cannot be empty."),
    ),
    "grad_no_inputs_with_graph": (
        lambda: A.grad(cr.sum(X() * 2), []),
        (RuntimeError, "`inputs` argument to `grad()` cannot be empty."),
    ),
    "backward": (lambda: cr.sum(lin()[1]).backward(), (RuntimeError, NO_GRAPH)),
    "backward_inputs": (
        lambda: (lambda x, g: _backward(cr.sum(g), inputs=[x]))(*lin()),
        (RuntimeError, NO_GRAPH),
    ),
    # backward's empty inputs are refused first (chainrule refused the output first)
    "backward_no_inputs": (
        lambda: _backward(cr.sum(lin()[1]), inputs=[]),
        (RuntimeError, "`inputs` argument to `backward()` cannot be empty."),
    ),
    "backward_input_without_grad": (
        lambda: _backward(cr.sum(X() * 2), inputs=[T([1.0, 2.0])]),
        (RuntimeError, "can't retain_grad on Tensor that has requires_grad=False"),
    ),
    "grad_input_without_grad": (
        lambda: A.grad(cr.sum(X() * 2), T([1.0, 2.0]), allow_unused=True),
        (RuntimeError, "One of the differentiated Tensors does not require grad"),
    ),
    "grad_of_x.grad_after_backward_create_graph": (_backward_then, (RuntimeError, NO_GRAPH)),
    "third_derivative_of_a_quadratic": (_third_of_quadratic, (RuntimeError, NO_GRAPH)),
    "autograd_grad_of_a_leaf_inside": (
        _grad_of_grad_of_a_detached_leaf,
        (RuntimeError, NO_GRAPH),
    ),
    "func_hessian": (lambda: hessian(f)(T([1.0, 2.0])), np.zeros((2, 2))),
    "func_jacrev_of_grad": (lambda: jacrev(func_grad(f))(T([1.0, 2.0])), np.zeros((2, 2))),
    "func_jacfwd_of_grad": (lambda: jacfwd(func_grad(f))(T([1.0, 2.0])), np.zeros((2, 2))),
    "func_grad_of_grad": (lambda: func_grad(func_grad(lambda x: 3 * x))(T(1.0)), 0.0),
    "func_grad_of_autograd_grad": (_grad_inside_func_grad, np.zeros(2)),
    "functional_hessian": (lambda: A.functional.hessian(f, T([1.0, 2.0])), np.zeros((2, 2))),
    "functional_hessian_strict": (
        lambda: A.functional.hessian(f, T([1.0, 2.0]), strict=True),
        (RuntimeError, LINEAR),
    ),
    "functional_hvp": (
        lambda: A.functional.hvp(f, T([1.0, 2.0]), cr.ones((2,)))[1],
        np.zeros(2),
    ),
    # strict vhp and hvp refuse a linear function as hessian does (chainrule gave zeros)
    "functional_hvp_strict": (
        lambda: A.functional.hvp(f, T([1.0, 2.0]), cr.ones((2,)), strict=True),
        (RuntimeError, LINEAR),
    ),
    "functional_vhp_strict": (
        lambda: A.functional.vhp(f, T([1.0, 2.0]), cr.ones((2,)), strict=True),
        (RuntimeError, LINEAR),
    ),
    "functional_jacobian_of_the_gradient": (
        lambda: A.functional.jacobian(_gradient_of, X()),
        np.zeros((2, 2)),
    ),
    "functional_jacobian_of_the_gradient_strict": (
        lambda: A.functional.jacobian(_gradient_of, X(), strict=True),
        (RuntimeError, "Output 0 of the user-provided function does not require gradients."),
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_pytorchs_outcome(name):
    call, expected = CASES[name]
    if isinstance(expected, tuple):
        kind, words = expected
        with pytest.raises(kind) as caught:
            call()
        assert str(caught.value).startswith(words)
        return
    found = call()
    if isinstance(found, tuple):
        (found,) = found
    np.testing.assert_array_equal(np.asarray(found.numpy()), expected)


def test_the_gradient_has_no_graph_as_pytorchs():
    _, g = lin()
    assert not g.requires_grad and g.grad_fn is None and g.is_leaf
