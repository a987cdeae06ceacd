"""Cholesky factors as NumPy and PyTorch define them: the upper factor of a complex Hermitian
matrix is L^H (x = U^H U), and NumPy's np.linalg.cholesky on tensors reads one triangle of x
(the lower, or the upper with upper=True) as NumPy's does, in values and in derivatives;
chainrule.linalg.cholesky keeps PyTorch's Hermitian gradient."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import grad, gradcheck, gradgradcheck
from conftest import N, T

RNG = np.random.default_rng(11)
Q = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
HERMITIAN = Q @ Q.conj().T + 3 * np.eye(3)
SYMMETRIC = Q.real @ Q.real.T + 3 * np.eye(3)
# Positive definite in either triangle, not symmetric: NumPy reads one triangle only.
LOPSIDED = SYMMETRIC + np.triu(np.full((3, 3), 0.4), 1) - np.tril(np.full((3, 3), 0.2), -1)


def test_upper_cholesky_of_a_complex_hermitian_matrix_is_the_conjugate_transpose():
    u = N(cr.linalg.cholesky(T(HERMITIAN), upper=True))
    np.testing.assert_allclose(u.conj().T @ u, HERMITIAN, atol=1e-12)
    np.testing.assert_allclose(u, np.linalg.cholesky(HERMITIAN, upper=True), atol=1e-12)
    np.testing.assert_allclose(np.triu(u), u)


def test_upper_cholesky_of_a_complex_matrix_differentiates():
    def fn(a):
        h = a @ cr.conj(cr.linalg.matrix_transpose(a)) + 3 * cr.eye(3, dtype=a.dtype)
        return cr.linalg.cholesky(h, upper=True)

    x = T(Q, requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("upper", [False, True], ids=["lower", "upper"])
@pytest.mark.parametrize("a", [LOPSIDED, HERMITIAN], ids=["real", "complex"])
def test_numpy_cholesky_computes_on_the_triangle_numpy_reads(a, upper):
    out = np.linalg.cholesky(T(a), upper=upper)
    np.testing.assert_allclose(N(out), np.linalg.cholesky(a, upper=upper), atol=1e-12)


@pytest.mark.parametrize("upper", [False, True], ids=["lower", "upper"])
def test_numpy_cholesky_differentiates_what_numpy_computes_along_any_direction(upper):
    x = T(LOPSIDED, requires_grad=True)
    assert gradcheck(lambda a: np.linalg.cholesky(a, upper=upper), (x,))
    assert gradgradcheck(lambda a: np.linalg.cholesky(a, upper=upper), (x,))
    (g,) = grad(cr.sum(np.linalg.cholesky(x, upper=upper)), (x,))
    unread = np.tril(N(g), -1) if upper else np.triu(N(g), 1)
    assert np.all(unread == 0)


def test_chainrules_cholesky_keeps_the_symmetric_gradient():
    x = T(SYMMETRIC, requires_grad=True)
    (g,) = grad(cr.sum(cr.linalg.cholesky(x)), (x,))
    np.testing.assert_allclose(N(g), N(g).T)
