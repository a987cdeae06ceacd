"""Cholesky factors as NumPy and PyTorch define them: the upper factor of a complex Hermitian
matrix is L^H (x = U^H U)."""

import numpy as np

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T

RNG = np.random.default_rng(11)
Q = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
HERMITIAN = Q @ Q.conj().T + 3 * np.eye(3)


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
