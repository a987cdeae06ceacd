"""linalg.det's derivatives at singular matrices: the gradient is the adjugate's transpose (its
conjugate for complex values), in reverse and forward mode, batched with invertible matrices;
the second derivative at rank n - 1 and at invertible matrices, by hessian and by
jacfwd(jacrev). The reference is the adjugate made of cofactors (minors' determinants)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from chainrule import linalg as LA
from conftest import DASK_LINALG, N, T, fails_on
from helpers import leaf

pytestmark = fails_on("dask", reason=DASK_LINALG)


def adjugate(a):
    """The adjugate of each matrix of a, entry (i, j) the cofactor of entry (j, i)."""
    n = a.shape[-1]
    out = np.empty_like(a)
    for i in range(n):
        for j in range(n):
            minor = np.delete(np.delete(a, j, axis=-2), i, axis=-1)
            out[..., i, j] = (-1) ** (i + j) * np.linalg.det(minor)
    return out


RANK_2_OF_3 = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0], [7.0, 8.0, 9.0]])
SINGULAR = {
    "rank 1 of 2": np.array([[1.0, 2.0], [2.0, 4.0]]),
    "rank 2 of 3": RANK_2_OF_3,
    "zero row": np.array([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0], [2.0, -1.0, 0.5]]),
    "rank 1 of 3": np.outer([1.0, 2.0, -1.0], [0.5, 1.0, 3.0]),
    "zero 2x2": np.zeros((2, 2)),
    "rank 3 of 4": np.array(
        [[2.0, 1.0, 0.0, 3.0], [1.0, 1.0, 1.0, 2.0], [3.0, 2.0, 1.0, 5.0], [0.0, 1.0, 4.0, 1.0]]
    ),
    "batch with invertible": np.stack([RANK_2_OF_3, np.eye(3) * 2 + RANK_2_OF_3 / 10]),
}
COMPLEX_RANK_1 = np.outer([1.0 + 1.0j, 2.0 - 0.5j], [0.5j, 1.0 + 2.0j])


@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_det_gradient_at_a_singular_matrix_is_the_adjugate_transpose(name):
    a = SINGULAR[name]
    x = leaf(a)
    (g,) = cr.autograd.grad(cr.sum(LA.det(x)), x)
    np.testing.assert_allclose(N(g), np.swapaxes(adjugate(a), -1, -2), atol=1e-12)


@pytest.mark.parametrize("name", sorted(SINGULAR))
def test_det_jvp_at_a_singular_matrix_is_the_trace_of_the_adjugate_times_the_tangent(name):
    a = SINGULAR[name]
    t = np.random.default_rng(0).standard_normal(a.shape)
    _, tangent = func.jvp(LA.det, (T(a),), (T(t),))
    expected = np.trace(adjugate(a) @ t, axis1=-2, axis2=-1)
    np.testing.assert_allclose(N(tangent), expected, atol=1e-12)


def test_det_gradient_and_jvp_at_a_complex_singular_matrix():
    # Holomorphic: the gradient of a real loss is g times the conjugate derivative.
    x = leaf(COMPLEX_RANK_1)
    y = LA.det(x)
    (g,) = cr.autograd.grad(y, x, T(1.0 + 0.0j))
    np.testing.assert_allclose(N(g), np.conj(adjugate(COMPLEX_RANK_1)).T, atol=1e-12)
    t = np.array([[1.0, 2.0j], [0.5 - 1.0j, -1.0]])
    _, tangent = func.jvp(LA.det, (T(COMPLEX_RANK_1),), (T(t),))
    np.testing.assert_allclose(N(tangent), np.trace(adjugate(COMPLEX_RANK_1) @ t), atol=1e-12)


def det_hessian_by_differences(a, h=1e-4):
    """Central differences of the adjugate's transpose (a polynomial: exact up to h^2)."""
    cols = []
    for k in range(a.size):
        e = np.zeros(a.size)
        e[k] = h
        e = e.reshape(a.shape)
        cols.append((adjugate(a + e) - adjugate(a - e)).T / (2 * h))
    return np.stack(cols, axis=-1).reshape(a.shape + a.shape)


# Rank n - 1 with distinct singular values (the SVD's derivative is defined), and invertible.
SECOND_ORDER = {
    "rank 1 of 2": SINGULAR["rank 1 of 2"],
    "rank 2 of 3": RANK_2_OF_3,
    "rank 3 of 4": SINGULAR["rank 3 of 4"],
    "invertible": np.eye(3) + RANK_2_OF_3 / 10,
    "identity": np.eye(3),
}


# PyTorch's and JAX's det of these is 0 where their inverse does not fail (finite, or inf from
# JAX under vmap); the tensors of create_graph and vmap's arrays are not read on the host, so
# det A^-1 is taken there (see _backend.zero_read_on_host).
UNREAD = "det 0 with an inverse that did not fail, under create_graph or vmap"
SECOND_ORDER_GAPS = {"rank 1 of 2": ("jax",), "rank 2 of 3": ("torch", "jax")}
SECOND_ORDER_GAPS["rank 3 of 4"] = SECOND_ORDER_GAPS["rank 2 of 3"]


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=fails_on(*SECOND_ORDER_GAPS.get(n, ()), reason=UNREAD))
        for n in sorted(SECOND_ORDER)
    ],
)
def test_det_hessian_by_hessian_and_by_jacfwd_of_jacrev(name):
    a = SECOND_ORDER[name]
    expected = det_hessian_by_differences(a)
    by_hessian = N(func.hessian(LA.det)(T(a)))
    np.testing.assert_allclose(by_hessian, expected, atol=1e-7)
    np.testing.assert_allclose(N(func.jacfwd(func.jacrev(LA.det))(T(a))), by_hessian, atol=1e-10)


def test_slogdet_gradient_at_a_singular_matrix_still_raises():
    # log|det| has no finite derivative where det is 0.
    x = leaf(SINGULAR["rank 1 of 2"])
    with pytest.raises((np.linalg.LinAlgError, RuntimeError), match="[Ss]ingular"):
        cr.autograd.grad(LA.slogdet(x).logabsdet, x)
