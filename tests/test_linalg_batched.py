"""The linalg functions under a batch of cotangents or tangents: jacrev, grad with
is_grads_batched, vmap of a VJP, jacfwd and second derivatives, each against central
differences or the same derivative taken row by row. The cases reach every branch of each
rule's VJP: some factors unused, tall and wide matrices, vector right sides, complex values."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
import chainrule.linalg as LA
from chainrule import func
from conftest import N, T, examples, skip_on
from helpers import leaf
from test_compositions import num_jacobian
from test_linalg import (
    distinct_singular,
    entries,
    invertible,
    positive_definite,
    symmetric_distinct,
)

pytestmark = skip_on("dask", reason="Dask's linalg takes 2-D arrays only (vmap stacks them)")

FEW = examples(3)
FIRST = dict(rtol=1e-6, atol=1e-7)  # against first-order central differences
SECOND = dict(rtol=1e-5, atol=1e-5)  # against second-order central differences
EXACT = dict(rtol=1e-10, atol=1e-12)  # against the same derivative taken row by row


def flat(*parts):
    """The parts' entries in one real vector (real and imaginary parts of complex ones)."""
    pieces = []
    for p in parts:
        if p.dtype in (cr.complex64, cr.complex128):
            pieces += [cr.real(p), cr.imag(p)]
        else:
            pieces.append(p)
    return cr.concat([cr.reshape(p, (-1,)) for p in pieces])


def phase_free(v, axis):
    """Each column (axis -2) or row (axis -1) of v times its first entry's conjugate: the same
    for v and v e^(i phi), so defined although eigen- and singular vectors have a free sign
    (phase)."""
    first = v[..., :1, :] if axis == -2 else v[..., :, :1]
    return v * cr.conj(first)


def hermitian(x):
    """(x + x^H) / 2: cholesky and eigh read one triangle; this makes them functions of every
    entry, as finite differences need."""
    return (x + cr.conj(cr.matrix_transpose(x))) / 2


def svd_factors(x, u=True, s=True, vh=True):
    usv = LA.svd(x, full_matrices=False)
    return flat(
        *([phase_free(usv.U, -2)] if u else []),
        *([usv.S] if s else []),
        *([phase_free(usv.Vh, -1)] if vh else []),
    )


def eig_factors(x):
    w, v = LA.eig(x)
    return flat(w, phase_free(v, -2))


def eigh_factors(x):
    w, v = LA.eigh(hermitian(x))
    return flat(w, phase_free(v, -2))


SQUARE = invertible(batch=st.just(()), side=st.just(3))
# Real matrices with distinct eigenvalues (disjoint Gershgorin discs), never triangular (LAPACK
# may order the eigenvalues of a triangular matrix otherwise when it is perturbed).
GENERIC = np.random.default_rng(3).uniform(-0.3, 0.3, (3, 3))
EIG_INPUT = st.builds(lambda a: a * 0.5 + GENERIC + np.diag([0.0, 6.0, 12.0]), entries((3, 3)))
TALL, WIDE = distinct_singular((3, 2)), distinct_singular((2, 3))

# name: (strategy of a real matrix, function of a matrix into a real vector).
CASES = {
    "inv": (SQUARE, lambda x: flat(LA.inv(x))),
    "det": (SQUARE, lambda x: flat(cr.reshape(LA.det(x), (1,)))),
    "slogdet": (SQUARE, lambda x: flat(cr.reshape(LA.slogdet(x).logabsdet, (1,)))),
    "solve_matrix": (SQUARE, lambda x: flat(LA.solve(x, x[:, :2] * 0.5 + 1.0))),
    "solve_vector": (SQUARE, lambda x: flat(LA.solve(x, x[0] + 1.0))),
    "matrix_power": (SQUARE, lambda x: flat(LA.matrix_power(x, -2))),
    "cholesky": (positive_definite(), lambda x: flat(LA.cholesky(hermitian(x)))),
    "eigvalsh": (symmetric_distinct(), lambda x: flat(LA.eigvalsh(hermitian(x)))),
    "eigh": (symmetric_distinct(), eigh_factors),
    "eigvals": (EIG_INPUT, lambda x: flat(LA.eigvals(x))),
    "eig": (EIG_INPUT, eig_factors),
    "qr_square": (distinct_singular((3, 3)), lambda x: flat(*LA.qr(x))),
    "qr_tall": (TALL, lambda x: flat(*LA.qr(x))),
    "qr_wide": (WIDE, lambda x: flat(*LA.qr(x))),
    "qr_wide_q_only": (WIDE, lambda x: flat(LA.qr(x).Q)),
    "qr_tall_r_only": (TALL, lambda x: flat(LA.qr(x).R)),
    "svdvals": (WIDE, lambda x: flat(LA.svdvals(x))),
    "svd_tall": (TALL, svd_factors),
    "svd_wide": (WIDE, svd_factors),
    "svd_tall_u_only": (TALL, lambda x: svd_factors(x, s=False, vh=False)),
    "svd_wide_vh_only": (WIDE, lambda x: svd_factors(x, u=False, s=False)),
    "pinv_tall": (TALL, lambda x: flat(LA.pinv(x))),
    "pinv_wide": (WIDE, lambda x: flat(LA.pinv(x))),
    "matrix_norm_nuc": (WIDE, lambda x: flat(cr.reshape(LA.matrix_norm(x, ord="nuc"), (1,)))),
    "diagonal": (SQUARE, lambda x: flat(LA.diagonal(x, offset=1))),
}


def complex_of(strategy):
    """A drawn real matrix plus a small drawn imaginary part."""
    return strategy.flatmap(lambda a: entries(a.shape).map(lambda b: a + 0.1j * b))


def hermitian_pd(a):
    return a @ np.conj(a.T) + 3 * np.eye(a.shape[0])


# Complex inputs, real results: against the row-by-row derivative only (the rules' complex
# formulas are checked against differences in test_complex.py).
COMPLEX_CASES = {
    "inv": (complex_of(SQUARE), CASES["inv"][1]),
    "slogdet": (
        complex_of(SQUARE),
        lambda x: flat(*[cr.reshape(p, (1,)) for p in LA.slogdet(x)]),
    ),
    "cholesky": (
        complex_of(SQUARE).map(hermitian_pd),
        lambda x: flat(LA.cholesky(hermitian(x))),
    ),
    "eigh": (complex_of(symmetric_distinct()), eigh_factors),
    "qr_wide": (complex_of(WIDE), CASES["qr_wide"][1]),
    "svd_tall": (complex_of(TALL), svd_factors),
    "svd_wide": (complex_of(WIDE), svd_factors),
    "pinv_wide": (complex_of(WIDE), CASES["pinv_wide"][1]),
}


def rows_one_by_one(fn, a, us):
    """The VJP of fn at a with each row of us, one backward at a time, stacked."""
    x = leaf(a)
    y = fn(x)
    return np.stack([N(cr.autograd.grad(y, x, T(u), retain_graph=True)[0]) for u in us])


def cotangents(fn, a, k=4):
    m = N(fn(T(a))).shape[0]
    return np.random.default_rng(m).standard_normal((k, m))


# ----------------------------------------------------------------------------- real inputs


def first(fn, a) -> dict:
    """FIRST, with the absolute tolerance grown for large values: a central difference of step
    h loses about eps |f| / h to rounding, and an LU-based value (det) carries several ulps
    (a det of 244 drawn: 1.2e-7 off by differences, its cofactor exact)."""
    scale = float(np.max(np.abs(N(fn(T(a))))))
    return {**FIRST, "atol": max(FIRST["atol"], 4e-9 * scale)}


@pytest.mark.parametrize("name", sorted(CASES))
@FEW
@given(data=st.data())
def test_jacrev_of_a_linalg_function_matches_central_differences(name, data):
    strategy, fn = CASES[name]
    a = data.draw(strategy)
    np.testing.assert_allclose(N(func.jacrev(fn)(T(a))), num_jacobian(fn, a), **first(fn, a))


@pytest.mark.parametrize("name", sorted(CASES))
@FEW
@given(data=st.data())
def test_jacfwd_of_a_linalg_function_matches_central_differences(name, data):
    strategy, fn = CASES[name]
    a = data.draw(strategy)
    np.testing.assert_allclose(N(func.jacfwd(fn)(T(a))), num_jacobian(fn, a), **first(fn, a))


@pytest.mark.parametrize("name", sorted(CASES))
@FEW
@given(data=st.data())
def test_grad_with_batched_grad_outputs_of_a_linalg_function_is_the_row_by_row_grad(name, data):
    strategy, fn = CASES[name]
    a = data.draw(strategy)
    us = cotangents(fn, a)
    x = leaf(a)
    (got,) = cr.autograd.grad(fn(x), x, T(us), is_grads_batched=True)
    np.testing.assert_allclose(N(got), rows_one_by_one(fn, a, us), **EXACT)


@pytest.mark.parametrize("name", sorted(CASES))
@FEW
@given(data=st.data())
def test_vmap_of_the_vjp_of_a_linalg_function_is_the_row_by_row_vjp(name, data):
    strategy, fn = CASES[name]
    a = data.draw(strategy)
    us = cotangents(fn, a)
    _, pullback = func.vjp(fn, T(a))
    (got,) = func.vmap(pullback)(T(us))
    np.testing.assert_allclose(N(got), rows_one_by_one(fn, a, us), **EXACT)


def hessian_by_differences(scalar, a, h=1e-5):
    """Central differences of the gradient of `scalar` (each taken by one plain backward)."""

    def gradient(values):
        x = leaf(values)
        return N(cr.autograd.grad(scalar(x), x)[0])

    cols = []
    for i in range(a.size):
        e = np.zeros(a.size)
        e[i] = h
        e = e.reshape(a.shape)
        cols.append((gradient(a + e) - gradient(a - e)) / (2 * h))
    return np.stack(cols, axis=-1).reshape(a.shape + a.shape)


@pytest.mark.parametrize("name", sorted(CASES))
@examples(1)
@given(data=st.data())
def test_second_derivatives_of_a_linalg_function_match_differences_of_its_gradient(name, data):
    # jacrev of jacrev records the inner VJP (create_graph) under a batch of cotangents;
    # hessian (jacfwd of jacrev) takes the VJP's JVP under a batch of tangents.
    strategy, fn = CASES[name]
    a = data.draw(strategy)

    def scalar(x):
        return cr.sum(cr.sin(fn(x)))

    expected = hessian_by_differences(scalar, a)
    np.testing.assert_allclose(N(func.jacrev(func.jacrev(scalar))(T(a))), expected, **SECOND)
    np.testing.assert_allclose(N(func.hessian(scalar)(T(a))), expected, **SECOND)


# ----------------------------------------------------------------------------- complex inputs


@pytest.mark.parametrize("name", sorted(COMPLEX_CASES))
@FEW
@given(data=st.data())
def test_batched_grad_outputs_of_a_linalg_function_of_complex_values_are_row_by_row(name, data):
    strategy, fn = COMPLEX_CASES[name]
    a = data.draw(strategy)
    us = cotangents(fn, a)
    x = leaf(a)
    (got,) = cr.autograd.grad(fn(x), x, T(us), is_grads_batched=True)
    np.testing.assert_allclose(N(got), rows_one_by_one(fn, a, us), **EXACT)
    _, pullback = func.vjp(fn, T(a))
    (got,) = func.vmap(pullback)(T(us))
    np.testing.assert_allclose(N(got), rows_one_by_one(fn, a, us), **EXACT)
