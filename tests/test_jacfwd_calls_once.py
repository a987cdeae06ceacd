"""func.jacfwd (and hessian, its forward over reverse) evaluates the function once, all
columns of all differentiated inputs in one batched pass, as PyTorch's: a function that
writes into its argument (or counts its calls) did so once per input plus once more, and its
Jacobian was that of the function applied to the already written values."""

import numpy as np

import chainrule as cr
from chainrule import func
from conftest import N, T

A = np.array([[1.0, 2.0], [3.0, 4.0]])


def test_jacfwd_of_a_function_that_writes_its_argument_in_place():
    def f(x):
        x *= 2.0
        return cr.sin(x)

    x = T(A)
    jac = func.jacfwd(f)(x)
    expected = np.zeros((2, 2, 2, 2))
    for i in range(2):
        for j in range(2):
            expected[i, j, i, j] = 2.0 * np.cos(2.0 * A[i, j])  # d sin(2 x) / dx
    np.testing.assert_allclose(N(jac), expected, rtol=1e-14)


def test_jacfwd_of_a_write_through_a_view_of_its_argument():
    def f(x):
        cr.linalg.diagonal(x)[...] *= 0.5
        return cr.sin(x)

    jac = func.jacfwd(f)(T(A))
    scale = np.where(np.eye(2, dtype=bool), 0.5, 1.0)
    expected = np.zeros((2, 2, 2, 2))
    for i in range(2):
        for j in range(2):
            expected[i, j, i, j] = scale[i, j] * np.cos(scale[i, j] * A[i, j])
    np.testing.assert_allclose(N(jac), expected, rtol=1e-14)


def test_jacfwd_by_several_arguments_calls_the_function_once():
    calls = []

    def f(x, y, scale):
        calls.append(1)
        return cr.sin(x) * y[0] + cr.sum(y) * scale

    x, y = T([0.5, -1.0]), T([2.0, 3.0, 4.0])
    jx, jy = func.jacfwd(f, argnums=(0, 1))(x, y, 2.0)
    assert len(calls) == 1
    np.testing.assert_allclose(N(jx), np.diag(2.0 * np.cos([0.5, -1.0])))
    expected_y = np.stack([np.array([np.sin(v) + 2.0, 2.0, 2.0]) for v in (0.5, -1.0)])
    np.testing.assert_allclose(N(jy), expected_y)


def test_hessian_calls_the_function_once_and_keeps_aux():
    calls = []

    def f(x):
        calls.append(1)
        return cr.sum(x**3), {"n": x.shape[0], "sq": x * x}

    x = T([1.0, 2.0])
    h, aux = func.jacfwd(func.jacrev(f, has_aux=True), has_aux=True)(x)
    assert len(calls) == 1
    np.testing.assert_allclose(N(h), np.diag([6.0, 12.0]))
    assert aux["n"] == 2
    np.testing.assert_allclose(N(aux["sq"]), [1.0, 4.0])


def test_forward_mode_jacobian_and_hessian_of_autograd_functional_call_the_function_once():
    calls = []

    def f(x, y):
        calls.append(1)
        return cr.sin(x) * cr.sum(y)

    x, y = T([0.5, 1.0]), T([2.0, 3.0, 1.0])
    jx, jy = cr.autograd.functional.jacobian(f, (x, y), vectorize=True, strategy="forward-mode")
    assert len(calls) == 1
    np.testing.assert_allclose(N(jx), np.diag(6.0 * np.cos([0.5, 1.0])))
    np.testing.assert_allclose(N(jy), np.repeat(np.sin([0.5, 1.0])[:, None], 3, axis=1))
    calls.clear()
    (hxx, hxy), (hyx, hyy) = cr.autograd.functional.hessian(
        lambda x, y: cr.sum(f(x, y)), (x, y), vectorize=True, outer_jacobian_strategy="forward-mode"
    )
    assert len(calls) == 1
    np.testing.assert_allclose(N(hxx), np.diag(-6.0 * np.sin([0.5, 1.0])))
    np.testing.assert_allclose(N(hxy), np.repeat(np.cos([0.5, 1.0])[:, None], 3, axis=1))
    np.testing.assert_allclose(N(hyy), np.zeros((3, 3)))


def test_forward_mode_jacobian_of_a_function_that_writes_its_argument():
    def f(x):
        x *= 2.0
        return cr.sin(x)

    jac = cr.autograd.functional.jacobian(f, T([0.5, 1.0]), vectorize=True, strategy="forward-mode")
    np.testing.assert_allclose(N(jac), np.diag(2.0 * np.cos([1.0, 2.0])))


def test_linearize_of_a_function_that_writes_its_argument_is_taken_where_it_was_called():
    def f(x):
        x *= 2.0
        return cr.sin(x)

    x = T([0.5, 1.0])
    out, jvp_fn = func.linearize(f, x)
    np.testing.assert_allclose(N(out), np.sin([1.0, 2.0]))
    for _ in range(2):  # each call linearizes at the arguments as given, not as written
        np.testing.assert_allclose(N(jvp_fn(T([1.0, 1.0]))), 2.0 * np.cos([1.0, 2.0]))
