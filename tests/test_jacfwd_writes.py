"""func.jacfwd of functions that write in place: into a tensor captured from outside (refused
with PyTorch's RuntimeError, the tensor left as it was), into an argument it is not
differentiated by (written once, as by one call) and into a tensor it made. PyTorch 2.13's
answers are written into each test."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from conftest import N, T, fails_on

X = [0.5, 1.0, 2.0]
C = [1.0, 2.0, 3.0]
CAPTURED = "attempted to call in-place operation on a Tensor that would mutate a captured Tensor"


def _mul_(c, x):
    c.mul_(cr.sin(x))


def _setitem(c, x):
    c[1] = x[0] ** 2


def _copy_(c, x):
    c.copy_(x)


def _add_constant(c, x):
    c += 1.0  # a value the same for every column: jacfwd would write it once per pass


WRITES = {"mul_": _mul_, "setitem": _setitem, "copy_": _copy_, "add_constant": _add_constant}


@pytest.mark.parametrize("name", sorted(WRITES))
def test_jacfwd_refuses_a_write_into_a_captured_tensor_and_leaves_it_as_it_was(name):
    c = T(C)
    kept = c

    def f(x):
        WRITES[name](c, x)
        return c * x

    with pytest.raises(RuntimeError, match=CAPTURED):
        func.jacfwd(f)(T(X))
    assert c is kept and c.grad_fn is None and not c.requires_grad
    assert isinstance(N(c), np.ndarray)
    np.testing.assert_array_equal(N(c), C)


def test_hessian_refuses_a_write_into_a_captured_tensor():
    c = T(C)

    def f(x):
        c[1] = x[0] ** 2
        return cr.sum(c * x * x)

    with pytest.raises(RuntimeError, match=CAPTURED):
        func.hessian(f)(T(X))
    np.testing.assert_array_equal(N(c), C)


def test_a_refused_write_leaves_a_captured_tensors_version_as_it_was():
    c = T(C)
    w = T([1.0, 1.0, 1.0], requires_grad=True)
    y = w * c  # saves c at its version now

    def f(x):
        c.mul_(2.0)
        return c * x

    with pytest.raises(RuntimeError, match=CAPTURED):
        func.jacfwd(f)(T(X))
    cr.sum(y).backward()  # c's saved version still holds
    np.testing.assert_array_equal(N(w.grad), C)


@fails_on("jax", "dask", reason="views are remade from their base at a write, not at its undo")
def test_a_refused_write_leaves_the_views_of_a_captured_tensor_as_they_were():
    c = T(C)
    view = c[:2]

    def f(x):
        c.mul_(2.0)
        return c * x

    with pytest.raises(RuntimeError, match=CAPTURED):
        func.jacfwd(f)(T(X))
    np.testing.assert_array_equal(N(view), C[:2])
    np.testing.assert_array_equal(N(c), C)


def test_jacfwd_writes_an_argument_it_does_not_differentiate_by_once():
    # PyTorch: the Jacobian diag(2 c), c written once: [2, 4, 6]
    c = T(C)

    def f(x, c):
        c.mul_(2.0)
        return c * x

    jac = func.jacfwd(f)(T(X), c)
    np.testing.assert_array_equal(N(jac), np.diag([2.0, 4.0, 6.0]))
    np.testing.assert_array_equal(N(c), [2.0, 4.0, 6.0])


def test_jacfwd_of_a_function_writing_into_tensors_it_made_is_its_jacobian():
    # PyTorch: [[0, 0, 0], [1, 0.25, 0], [0, 0, 0]], and [[0, 0, 0], [0, 1, 0], [0, 0, 1]]
    def made_zeros(x):
        t = cr.zeros(3, dtype=x.dtype)
        t[1] = x[0] ** 2
        return t * x

    def made_copy(x):
        t = x * 1.0
        t[0] = 5.0
        return t

    x = T(X)
    np.testing.assert_array_equal(
        N(func.jacfwd(made_zeros)(x)), [[0.0, 0.0, 0.0], [1.0, 0.25, 0.0], [0.0, 0.0, 0.0]]
    )
    np.testing.assert_array_equal(N(func.jacfwd(made_copy)(x)), np.diag([0.0, 1.0, 1.0]))
