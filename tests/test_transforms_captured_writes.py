"""A function under grad, vjp, jacrev, jvp or hessian that writes in place into a tensor
captured from outside is refused with PyTorch's RuntimeError (as jacfwd's was), and the
tensor is left as it was; writes into arguments (differentiated or not) and into tensors the
function made stay allowed, as in torch.func."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from conftest import N, T

X = [1.0, 2.0, 3.0]
CAPTURED = "would mutate a captured Tensor"


def _transforms():
    def jvp(f, x):
        return func.jvp(f, (x,), (cr.ones_like(x),))

    return {
        "grad": lambda f, x: func.grad(lambda y: cr.sum(f(y)))(x),
        "vjp": lambda f, x: func.vjp(f, x)[0],
        "jacrev": lambda f, x: func.jacrev(f)(x),
        "jvp": jvp,
        "jacfwd": lambda f, x: func.jacfwd(f)(x),
        "hessian": lambda f, x: func.hessian(lambda y: cr.sum(f(y)))(x),
    }


TRANSFORMS = _transforms()


@pytest.mark.parametrize("name", TRANSFORMS)
def test_a_write_of_the_input_into_a_captured_tensor_is_refused_and_undone(name):
    c = T([0.5, 0.5, 0.5])

    def f(x):
        c.add_(x)
        return c * 2.0

    with pytest.raises(RuntimeError, match=CAPTURED):
        TRANSFORMS[name](f, T(X))
    np.testing.assert_array_equal(N(c), [0.5, 0.5, 0.5])
    assert c.grad_fn is None


@pytest.mark.parametrize("name", TRANSFORMS)
def test_a_write_of_a_constant_into_a_captured_tensor_is_refused(name):
    # PyTorch refuses it too: the captured tensor is mutated, whatever the value.
    c = T([0.5, 0.5, 0.5])

    def f(x):
        c[1] = 4.0
        return c * x

    with pytest.raises(RuntimeError, match=CAPTURED):
        TRANSFORMS[name](f, T(X))
    np.testing.assert_array_equal(N(c), [0.5, 0.5, 0.5])


@pytest.mark.parametrize("name", TRANSFORMS)
def test_writes_into_tensors_the_function_made_are_differentiated(name):
    def f(x):
        t = cr.zeros(3, dtype=x.dtype)
        t += x * x
        return t * 1.0

    out = TRANSFORMS[name](f, T(X))
    expected = {
        "grad": [2.0, 4.0, 6.0],
        "vjp": [1.0, 4.0, 9.0],
        "jacrev": np.diag([2.0, 4.0, 6.0]),
        "jvp": None,
        "jacfwd": np.diag([2.0, 4.0, 6.0]),
        "hessian": np.diag([2.0, 2.0, 2.0]),
    }[name]
    if name == "jvp":
        np.testing.assert_allclose(N(out[0]), [1.0, 4.0, 9.0])
        np.testing.assert_allclose(N(out[1]), [2.0, 4.0, 6.0])
    else:
        np.testing.assert_allclose(N(out), expected)


def test_a_returned_view_of_a_tensor_the_function_made_and_wrote_is_allowed():
    def f(x):
        t = cr.zeros(3, dtype=x.dtype)
        t += x
        return t[:2]

    primal, tangent = func.jvp(f, (T(X),), (T([1.0, 1.0, 1.0]),))
    np.testing.assert_array_equal(N(primal), [1.0, 2.0])
    np.testing.assert_array_equal(N(tangent), [1.0, 1.0])
    np.testing.assert_array_equal(N(func.jacrev(f)(T(X))), np.eye(3)[:2])


def test_writes_into_arguments_not_differentiated_stay_allowed():
    # PyTorch: grad gives [1, 1, 1] and jacrev diag(2 c); c keeps the writes.
    c = T([0.0, 0.0, 0.0])

    def f(x, c):
        c.add_(1.0)
        return cr.sum(x * c)

    np.testing.assert_array_equal(N(func.grad(f)(T(X), c)), [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(N(c), [1.0, 1.0, 1.0])
    d = T([1.0, 2.0, 3.0])

    def g(x, d):
        d.mul_(2.0)
        return d * x

    np.testing.assert_array_equal(N(func.jacrev(g)(T(X), d)), np.diag([2.0, 4.0, 6.0]))
    np.testing.assert_array_equal(N(d), [2.0, 4.0, 6.0])


def test_jvp_writes_into_its_primal_as_pytorch():
    x = T(X)

    def f(y):
        y.mul_(2.0)
        return y * 1.0

    primal, tangent = func.jvp(f, (x,), (T([1.0, 1.0, 1.0]),))
    np.testing.assert_array_equal(N(primal), [2.0, 4.0, 6.0])
    np.testing.assert_array_equal(N(tangent), [2.0, 2.0, 2.0])


def test_a_tensor_captured_by_an_inner_transform_is_refused_inside_an_outer_one():
    def outer(x):
        t = x * 1.0  # made by the outer function, captured by the inner one

        def inner(y):
            t.add_(y)
            return t * 1.0

        return func.jvp(inner, (x,), (cr.ones_like(x),))[1]

    with pytest.raises(RuntimeError, match=CAPTURED):
        func.jacrev(outer)(T(X))
