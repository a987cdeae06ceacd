"""Linear algebra: matmul (and `@`), tensordot, vecdot and chainrule.linalg. Values against
NumPy; first and second derivatives against finite differences on well-conditioned inputs
drawn by Hypothesis (batched, sizes 2-4; matmul's gradient shapes under broadcasting batch
dimensions); the conventions of norms at zero; the gradients that raise NotImplementedError;
float32 results."""

import math
import operator
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
from chainrule import linalg as LA
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import DASK_LINALG, LIBRARY, N, T, examples, fails_on
from helpers import MAX_SIZE, SHAPES, arrays, assert_values, check_grads, floats, grads_of, leaf

GRADCHECKED = {
    "matmul", "linalg_diagonal", "linalg_diagonal_embed", "linalg_inv", "linalg_det",
    "linalg_slogdet", "linalg_solve", "linalg_cholesky", "linalg_qr", "linalg_eigh", "linalg_svd",
    "linalg_pinv",
}  # fmt: skip

FEW = examples(6)
SIDE = st.integers(2, 4)
# Dask's linalg takes 2-D arrays only: on Dask the drawn matrices are never batched.
BATCH = st.sampled_from([()] if LIBRARY == "dask" else [(), (2,)])
DASK_2D = "Dask's linalg takes 2-D arrays only (no batches of matrices)"
DASK_FULL = "Dask's svd and qr give reduced factors only (no full_matrices, no mode='complete')"
UNIT = floats(-1, 1)


def entries(shape):
    return hnp.arrays(np.float64, shape, elements=UNIT)


@st.composite
def invertible(draw, batch=BATCH, side=SIDE):
    """Strictly diagonally dominant matrices: entries in [-1, 1] plus 2n on the diagonal."""
    b, n = draw(batch), draw(side)
    return draw(entries(b + (n, n))) + 2 * n * np.eye(n)


@st.composite
def positive_definite(draw):
    b, n = draw(BATCH), draw(SIDE)
    m = draw(entries(b + (n, n)))
    return m @ np.swapaxes(m, -1, -2) + n * np.eye(n)


def orthogonal(draw, n):
    """A drawn orthogonal matrix, never close to a permutation: the drawn entries shift a fixed
    generic matrix (QR's signs jump at triangular inputs)."""
    generic = np.random.default_rng(n).standard_normal((n, n))
    return np.linalg.qr(draw(entries((n, n))) + generic).Q


def spread(draw, k, start):
    """k values, at least 0.5 apart, ascending from about `start`."""
    gaps = draw(st.lists(floats(0.5, 1.5), min_size=k, max_size=k))
    return start + np.cumsum(gaps)


@st.composite
def symmetric_distinct(draw):
    """Q diag(w) Q^T with eigenvalues w at least 0.5 apart."""
    n = draw(SIDE)
    q = orthogonal(draw, n)
    return (q * spread(draw, n, -2.0)) @ q.T


@st.composite
def distinct_singular(draw, shape):
    """U diag(s) V^T of `shape` with singular values s in [1.5, 7], at least 0.5 apart."""
    m, n = shape
    k = min(m, n)
    u, v = orthogonal(draw, m)[:, :k], orthogonal(draw, n)[:, :k]
    return (u * spread(draw, k, 1.0)[::-1]) @ v.T


def symmetrized(fn):
    """fn of (a + a^T) / 2: a function of every entry, as finite differences need (cholesky and
    eigh read one triangle only)."""
    return lambda a: fn((a + cr.matrix_transpose(a)) / 2)


# ------------------------------------------------------------------ matmul, tensordot, vecdot

# The sizes of matmul's, tensordot's and vecdot's operands: 1 to 3.
DIM = st.integers(1, 3)
BATCHES = hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=2, max_side=2)


def _small(shapes):
    return all(math.prod(s) <= MAX_SIZE for s in shapes)


MATMUL_SHAPES = {
    "1-D @ 1-D": st.builds(lambda k: ((k,), (k,)), DIM),
    "1-D @ 2-D": st.builds(lambda k, m: ((k,), (k, m)), DIM, DIM),
    "2-D @ 1-D": st.builds(lambda n, k: ((n, k), (k,)), DIM, DIM),
    "2-D @ 2-D": st.builds(lambda n, k, m: ((n, k), (k, m)), DIM, DIM, DIM),
    "batched": st.builds(
        lambda b, n, k, m: (b.input_shapes[0] + (n, k), b.input_shapes[1] + (k, m)),
        BATCHES, DIM, DIM, DIM,
    ).filter(_small),
    "1-D @ batched": st.builds(
        lambda b, k, m: ((k,), b + (k, m)), BATCHES.map(lambda b: b.result_shape), DIM, DIM
    ).filter(_small),
    "batched @ 1-D": st.builds(
        lambda b, n, k: (b + (n, k), (k,)), BATCHES.map(lambda b: b.result_shape), DIM, DIM
    ).filter(_small),
}  # fmt: skip


@pytest.mark.parametrize("case", MATMUL_SHAPES)
@given(data=st.data())
def test_matmul_values_and_derivatives(case, data):
    x_shape, y_shape = data.draw(MATMUL_SHAPES[case])
    a, b = data.draw(arrays(x_shape)), data.draw(arrays(y_shape))
    assert_values(cr.matmul(T(a), T(b)), np.matmul(a, b))
    assert_values(T(a) @ T(b), a @ b)
    check_grads(cr.matmul, leaf(a), leaf(b))
    gx, gy = grads_of(operator.matmul, leaf(a), leaf(b))
    assert (gx.shape, gy.shape) == (x_shape, y_shape)


@pytest.mark.parametrize("case", MATMUL_SHAPES)
@examples(5)
@given(data=st.data())
def test_matmul_of_float32_gives_float32_values_and_gradients(case, data):
    x_shape, y_shape = data.draw(MATMUL_SHAPES[case])
    x = leaf(data.draw(arrays(x_shape)), "float32")
    y = leaf(data.draw(arrays(y_shape)), "float32")
    assert (x @ y).dtype == cr.float32
    gx, gy = grads_of(operator.matmul, x, y)
    assert (gx.dtype, gy.dtype) == (cr.float32, cr.float32)


def test_matmul_of_float32_with_float64_keeps_each_gradient_dtype():
    x = leaf([[1.0, 2.0], [3.0, 4.0]], "float32")
    y = leaf([0.5, -1.0], "float64")
    assert (x @ y).dtype == cr.float64
    gx, gy = grads_of(operator.matmul, x, y)
    assert (gx.dtype, gy.dtype) == (cr.float32, cr.float64)
    assert_values(gx, [[0.5, -1.0], [0.5, -1.0]], atol=0)
    assert_values(gy, [4.0, 6.0], atol=0)


TENSORDOT = [
    ((2,), (3,), 0),
    ((2, 3), (3, 2), 1),
    ((2, 2, 3), (2, 3, 1), 2),
    ((2, 3), (3, 2), ([1], [0])),
    ((3, 2, 2), (2, 1, 3), ((0, 2), (2, 0))),
    ((2, 3), (2, 4), ((-2,), (0,))),
]


@pytest.mark.parametrize("x_shape, y_shape, axes", TENSORDOT)
@examples(10)
@given(data=st.data())
def test_tensordot_values_and_derivatives(x_shape, y_shape, axes, data):
    a, b = data.draw(arrays(x_shape)), data.draw(arrays(y_shape))
    assert_values(cr.tensordot(T(a), T(b), axes=axes), np.tensordot(a, b, axes=axes))
    check_grads(lambda x, y: cr.tensordot(x, y, axes=axes), leaf(a), leaf(b))
    x, y = leaf(a, "float32"), leaf(b, "float32")
    assert cr.tensordot(x, y, axes=axes).dtype == cr.float32
    gx, gy = grads_of(lambda x, y: cr.tensordot(x, y, axes=axes), x, y)
    assert (gx.dtype, gx.shape, gy.dtype, gy.shape) == (cr.float32, x_shape, cr.float32, y_shape)


@given(batches=BATCHES, k=DIM, data=st.data())
def test_vecdot_over_the_last_axis_with_broadcasting(batches, k, data):
    x_shape, y_shape = (s + (k,) for s in batches.input_shapes)
    a, b = data.draw(arrays(x_shape)), data.draw(arrays(y_shape))
    assert_values(cr.vecdot(T(a), T(b)), np.vecdot(a, b))
    check_grads(cr.vecdot, leaf(a), leaf(b))
    gx, gy = grads_of(cr.vecdot, leaf(a), leaf(b))
    assert (gx.shape, gy.shape) == (x_shape, y_shape)


@examples(10)
@given(data=st.data())
def test_vecdot_over_a_drawn_axis(data):
    shape = data.draw(SHAPES.filter(lambda s: len(s) > 0))
    axis = data.draw(st.integers(-len(shape), -1))
    a, b = data.draw(arrays(shape)), data.draw(arrays(shape))
    assert_values(cr.vecdot(T(a), T(b), axis=axis), np.vecdot(a, b, axis=axis))
    check_grads(lambda x, y: cr.vecdot(x, y, axis=axis), leaf(a), leaf(b))
    x, y = leaf(a, "float32"), leaf(b, "float32")
    assert cr.vecdot(x, y, axis=axis).dtype == cr.float32


@pytest.mark.parametrize(
    ("x_shape", "y_shape", "problem"),
    [
        ((64, 3), (16, 2), "the last axis of the first (3) must match the second-to-last of "
                           "the second (16)"),
        ((2, 5, 3), (4,), "the last axis of the first (3) must match the first of the second (4)"),
        ((), (3,), "matmul takes arrays of at least one axis, not 0-d ones"),
    ],
)  # fmt: skip
def test_matmul_of_shapes_that_do_not_fit_names_both_shapes(x_shape, y_shape, problem):
    x, y = T(np.ones(x_shape)), T(np.ones(y_shape))
    expected = f"matmul: {x_shape} @ {y_shape}: {problem}"
    with pytest.raises(ValueError, match=re.escape(expected)):
        x @ y
    with pytest.raises(ValueError, match=re.escape(expected)):
        cr.matmul(x, y)


# ----------------------------------------------------------------------------- reused functions


def test_linalg_reuses_the_main_namespace_functions():
    assert LA.matmul is cr.matmul
    assert LA.matrix_transpose is cr.matrix_transpose
    assert LA.tensordot is cr.tensordot
    assert LA.vecdot is cr.vecdot
    assert cr.linalg is LA


# ----------------------------------------------------------------------------- inverses


@fails_on("dask", reason=DASK_LINALG)
@FEW
@given(a=invertible())
def test_inv_det_and_slogdet_values_and_derivatives(a):
    assert_values(LA.inv(T(a)), np.linalg.inv(a), rtol=1e-10)
    assert_values(LA.det(T(a)), np.linalg.det(a), rtol=1e-10)
    sign, logabsdet = LA.slogdet(T(a))
    assert_values(sign, np.linalg.slogdet(a).sign)
    assert_values(logabsdet, np.linalg.slogdet(a).logabsdet, rtol=1e-10)
    check_grads(LA.inv, leaf(a))
    check_grads(LA.det, leaf(a))
    check_grads(lambda x: LA.slogdet(x).logabsdet, leaf(a))


@fails_on("dask", reason=DASK_LINALG)
def test_slogdet_sign_carries_no_gradient():
    x = leaf([[0.0, 2.0], [1.0, 0.0]])
    result = LA.slogdet(x)
    assert isinstance(result, LA.SlogdetResult)
    assert result.sign.item() == -1.0
    (g,) = cr.autograd.grad(result.sign, [x], allow_unused=True)
    assert g is None


SOLVE_SHAPES = {
    "vector": ((), (), None),
    "matrix": ((), (), 2),
    "batched vector": ((2,), (), None),
    "batched matrix": ((2,), (2,), 2),
    "broadcast batches": ((2, 1), (3,), 1),
    "matrix for a stack": ((), (2,), 3),
}


@pytest.mark.parametrize(
    "case",
    [
        pytest.param(c, marks=fails_on("dask", reason=DASK_2D))
        if SOLVE_SHAPES[c][:2] != ((), ())
        else c
        for c in SOLVE_SHAPES
    ],
)
@FEW
@given(side=SIDE, data=st.data())
def test_solve_values_and_derivatives(case, side, data):
    a_batch, b_batch, k = SOLVE_SHAPES[case]
    a = data.draw(invertible(st.just(a_batch), st.just(side)))
    b = data.draw(entries(b_batch + (side,) + (() if k is None else (k,))))
    expected = np.linalg.solve(a, b if k is not None else b[..., None])
    assert_values(LA.solve(T(a), T(b)), expected if k is not None else expected[..., 0], 1e-10)
    check_grads(LA.solve, leaf(a), leaf(b))
    ga, gb = grads_of(LA.solve, leaf(a), leaf(b))
    assert (ga.shape, gb.shape) == (a.shape, b.shape)


def test_solve_promotes_dtypes_and_keeps_each_gradient_dtype():
    a = leaf([[2.0, 1.0], [0.0, 3.0]], "float32")
    b = leaf([1.0, 3.0], "float64")
    assert LA.solve(a, b).dtype == cr.float64
    ga, gb = grads_of(LA.solve, a, b)
    assert (ga.dtype, gb.dtype) == (cr.float32, cr.float64)


@fails_on("dask", reason=DASK_LINALG)
@FEW
@given(data=st.data())
def test_pinv_values_and_derivatives(data):
    shape = data.draw(st.tuples(SIDE, SIDE))
    a = data.draw(distinct_singular(shape))
    assert_values(LA.pinv(T(a)), np.linalg.pinv(a), rtol=1e-9, atol=1e-12)
    check_grads(LA.pinv, leaf(a))


@fails_on("dask", reason=DASK_LINALG)
def test_pinv_gradient_holds_for_repeated_singular_values():
    # An orthogonal matrix times 2: all singular values equal, where an svd route fails.
    check_grads(LA.pinv, leaf(2 * np.linalg.qr(np.arange(9.0).reshape(3, 3) + np.eye(3)).Q))


@pytest.mark.parametrize("n", [-3, -1, 0, 1, 2, 3])
@FEW
@given(a=invertible())
def test_matrix_power_values_and_derivatives(n, a):
    assert_values(LA.matrix_power(T(a), n), np.linalg.matrix_power(a, n), rtol=1e-10)
    if n != 0:
        check_grads(lambda x: LA.matrix_power(x, n), leaf(a))


def test_matrix_power_zero_is_a_constant_identity_and_one_a_new_tensor():
    x = leaf([[1.0, 2.0], [3.0, 4.0]])
    assert not LA.matrix_power(x, 0).requires_grad
    assert_values(LA.matrix_power(x, 0), np.eye(2))
    assert LA.matrix_power(x, 1) is not x


# ----------------------------------------------------------------------------- decompositions


@pytest.mark.parametrize("upper", [False, True])
@FEW
@given(a=positive_definite())
def test_cholesky_values_and_symmetric_derivatives(upper, a):
    expected = np.linalg.cholesky(a, upper=upper)
    assert_values(LA.cholesky(T(a), upper=upper), expected, rtol=1e-10)
    check_grads(symmetrized(lambda x: LA.cholesky(x, upper=upper)), leaf(a))
    (g,) = grads_of(lambda x: LA.cholesky(x, upper=upper), leaf(a))
    assert_values(g, np.swapaxes(N(g), -1, -2), atol=1e-12)


def _sign_free(v, axis):
    """Products of each column (axis -2) or row (axis -1) of v with its first entry: the same
    for v and -v, so defined although eigenvectors and singular vectors have a free sign."""
    first = v[..., :1, :] if axis == -2 else v[..., :, :1]
    return v * first


@fails_on("dask", reason=DASK_LINALG)
@FEW
@given(a=symmetric_distinct())
def test_eigh_and_eigvalsh_values_and_derivatives(a):
    w, v = np.linalg.eigh(a)
    result = LA.eigh(T(a))
    assert isinstance(result, LA.EighResult)
    assert_values(result.eigenvalues, w, rtol=1e-10, atol=1e-12)
    # Each eigenvector's sign is free: LAPACK builds differ (PyTorch's from NumPy's).
    assert_values(_sign_free(result.eigenvectors, -2), _sign_free(v, -2), rtol=1e-9, atol=1e-12)
    assert_values(LA.eigvalsh(T(a)), w, rtol=1e-10, atol=1e-12)

    def parts(x):
        w, v = LA.eigh(x)
        return w, _sign_free(v, -2)

    check_grads(symmetrized(parts), leaf(a))
    check_grads(symmetrized(lambda x: _sign_free(LA.eigh(x).eigenvectors, -2)), leaf(a))
    check_grads(symmetrized(LA.eigvalsh), leaf(a))


@fails_on("dask", reason=DASK_LINALG)
@pytest.mark.filterwarnings("ignore:.*encountered in:RuntimeWarning")
def test_eigvalsh_gradient_is_finite_for_repeated_eigenvalues_but_eigenvectors_are_not():
    # sum of eigenvalues = trace: gradient I. Eigenvectors of I are not unique: inf/NaN.
    (g,) = grads_of(LA.eigvalsh, leaf(np.eye(3)))
    assert_values(g, np.eye(3), atol=1e-12)
    (g,) = grads_of(lambda x: LA.eigh(x).eigenvectors[..., 0], leaf(np.eye(3)))
    assert not np.isfinite(N(g)).all()


@fails_on("dask", reason=DASK_LINALG)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_eig_and_eigvals_are_complex_and_reconstruct_the_matrix(dtype):
    a = np.array([[[0.0, -2.0, 0.5], [1.0, 0.5, 0.0], [0.0, 0.3, 1.5]], np.eye(3) * 2.0])
    x = T(a, dtype)
    result = LA.eig(x)
    assert isinstance(result, LA.EigResult)
    complex_dtype = cr.complex64 if dtype == "float32" else cr.complex128
    assert result.eigenvalues.dtype == result.eigenvectors.dtype == complex_dtype
    w, v = N(result.eigenvalues), N(result.eigenvectors)
    # A V = V diag(w), also where the eigenvalues are real (the second matrix).
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(a @ v, v * w[..., None, :], atol=tolerance)
    np.testing.assert_allclose(
        np.sort_complex(N(LA.eigvals(x)).ravel()), np.sort_complex(w.ravel())
    )
    assert LA.eigvals(x).dtype == complex_dtype


@fails_on("dask", reason=DASK_LINALG)
def test_eigvals_of_a_real_matrix_send_back_a_real_gradient():
    # d tr(A) = sum of d eigenvalues: the gradient of sum(real(eigvals)) is I.
    a = np.array([[0.0, -2.0, 0.5], [1.0, 0.5, 0.0], [0.0, 0.3, 1.5]])
    x = leaf(a)
    cr.sum(cr.real(LA.eigvals(x))).backward()
    assert x.grad.dtype == cr.float64
    assert_values(x.grad, np.eye(3), atol=1e-12)
    with cr.no_grad():
        assert LA.eig(x)[0].dtype == cr.complex128


SVD_SHAPES = [(3, 3), (4, 2), (2, 4), (3, 2)]


@pytest.mark.parametrize("shape", SVD_SHAPES)
@FEW
@given(data=st.data())
def test_svd_and_svdvals_values_and_derivatives(shape, data):
    a = data.draw(distinct_singular(shape))
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    result = LA.svd(T(a), full_matrices=False)
    assert isinstance(result, LA.SVDResult)
    # Singular vectors have a free sign, chosen differently by different LAPACK builds.
    assert_values(_sign_free(result.U, -2), _sign_free(u, -2), rtol=1e-9, atol=1e-12)
    assert_values(result.S, s, rtol=1e-9, atol=1e-12)
    assert_values(_sign_free(result.Vh, -1), _sign_free(vh, -1), rtol=1e-9, atol=1e-12)
    assert_values(LA.svdvals(T(a)), s, rtol=1e-10)

    def parts(x):
        r = LA.svd(x, full_matrices=False)
        return _sign_free(r.U, -2), r.S, _sign_free(r.Vh, -1)

    check_grads(parts, leaf(a))
    check_grads(lambda x: _sign_free(LA.svd(x, full_matrices=False).U, -2), leaf(a))
    check_grads(lambda x: _sign_free(LA.svd(x, full_matrices=False).Vh, -1), leaf(a))
    check_grads(LA.svdvals, leaf(a))


@fails_on("dask", reason=DASK_FULL)
@pytest.mark.parametrize("shape", [(3, 3), (3, 2)])
def test_svd_with_full_matrices(shape):
    a = np.arange(1.0, 1.0 + shape[0] * shape[1]).reshape(shape) ** 1.5
    u, s, vh = np.linalg.svd(a)
    for got, expected in zip(LA.svd(T(a)), (u, s, vh)):
        assert_values(got, expected, rtol=1e-9, atol=1e-12)
    if shape[0] == shape[1]:
        check_grads(lambda x: (LA.svd(x).S, _sign_free(LA.svd(x).U, -2)), leaf(a))
        return
    # Non-square: U and Vh have extra columns that are not unique. S has a first derivative;
    # anything through U or Vh (including S's second derivative) raises.
    assert gradcheck(lambda x: LA.svd(x).S, leaf(a))
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        grads_of(lambda x: LA.svd(x).U, leaf(a))
    with pytest.raises(NotImplementedError, match="full_matrices=False"):
        gradgradcheck(lambda x: LA.svd(x).S, leaf(a))


QR_SHAPES = [(3, 3), (4, 2), (2, 4), (3, 2)]


# On Dask one drawn example: each takes minutes there (a task graph computed per finite
# difference of a QR), six would pass the suite's per-test timeout.
@pytest.mark.parametrize("shape", QR_SHAPES)
@examples(1 if LIBRARY == "dask" else 6)
@given(data=st.data())
def test_qr_values_and_derivatives(shape, data):
    a = data.draw(distinct_singular(shape))
    q, r = np.linalg.qr(a)
    result = LA.qr(T(a))
    assert isinstance(result, LA.QRResult)
    assert_values(result.Q, q, rtol=1e-10, atol=1e-12)
    assert_values(result.R, r, rtol=1e-10, atol=1e-12)
    check_grads(LA.qr, leaf(a))
    check_grads(lambda x: LA.qr(x).Q, leaf(a))
    check_grads(lambda x: LA.qr(x).R, leaf(a))
    if shape[0] <= shape[1]:
        check_grads(lambda x: LA.qr(x, mode="complete"), leaf(a))


@fails_on("dask", reason=DASK_FULL)
def test_qr_complete_of_a_tall_matrix_has_values_but_no_gradient():
    a = np.arange(1.0, 7.0).reshape(3, 2) ** 1.5
    q, r = LA.qr(T(a), mode="complete")
    assert_values(q, np.linalg.qr(a, mode="complete").Q, atol=1e-12)
    with pytest.raises(NotImplementedError, match="mode='reduced'"):
        grads_of(lambda x: LA.qr(x, mode="complete").R, leaf(a))


# ----------------------------------------------------------------------------- diagonal, trace


@FEW
@given(shape=hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=4), data=st.data())
def test_diagonal_and_trace_values_and_derivatives(shape, data):
    offset = data.draw(st.integers(-shape[-2], shape[-1]))
    a = data.draw(entries(shape))
    expected = np.diagonal(a, offset=offset, axis1=-2, axis2=-1)
    assert_values(LA.diagonal(T(a), offset=offset), expected)
    assert_values(LA.trace(T(a), offset=offset), expected.sum(axis=-1))
    check_grads(lambda x: LA.diagonal(x, offset=offset), leaf(a))
    check_grads(lambda x: LA.trace(x, offset=offset), leaf(a))


def test_trace_with_a_dtype_and_of_integers():
    x = T(np.arange(9).reshape(3, 3))
    assert LA.trace(x).item() == 12
    assert LA.trace(x, dtype=cr.float32).dtype == cr.float32


# ----------------------------------------------------------------------------- products


CROSS = [
    ((3,), (3,), -1),
    ((2, 3), (3,), -1),
    ((2, 1, 3), (2, 3), -1),
    ((3, 2), (3, 1), -2),
    ((2, 3, 2), (3, 2), -2),
]


@pytest.mark.parametrize("x_shape, y_shape, axis", CROSS)
@FEW
@given(data=st.data())
def test_cross_values_and_derivatives_with_broadcasting(x_shape, y_shape, axis, data):
    a, b = data.draw(entries(x_shape)), data.draw(entries(y_shape))
    assert_values(LA.cross(T(a), T(b), axis=axis), np.cross(a, b, axis=axis), atol=1e-14)
    check_grads(lambda x, y: LA.cross(x, y, axis=axis), leaf(a), leaf(b))


@FEW
@given(a=entries((3,)), b=entries((2,)))
def test_outer_values_and_derivatives(a, b):
    assert_values(LA.outer(T(a), T(b)), np.outer(a, b))
    check_grads(LA.outer, leaf(a), leaf(b))


# ----------------------------------------------------------------------------- norms

VECTOR_ORDS = [2, 1, 3, 0.5, -1, np.inf, -np.inf, 0]


@pytest.mark.parametrize("ord", VECTOR_ORDS)
@FEW
@given(shape=hnp.array_shapes(min_dims=1, max_dims=3, max_side=3), data=st.data())
def test_vector_norm_values_and_derivatives(ord, shape, data):
    # Distinct magnitudes away from 0, where abs, max and min are smooth.
    magnitudes = data.draw(hnp.arrays(np.float64, shape, elements=floats(0.2, 2), unique=True))
    a = magnitudes * data.draw(hnp.arrays(np.float64, shape, elements=st.sampled_from([-1, 1])))
    axis = data.draw(st.sampled_from([None, -1, tuple(range(len(shape)))]))
    keepdims = data.draw(st.booleans())

    def norm(x):
        return LA.vector_norm(x, axis=axis, ord=ord, keepdims=keepdims)

    expected = np.linalg.vector_norm(a, axis=axis, ord=ord, keepdims=keepdims)
    assert_values(norm(T(a)), expected, 1e-12)
    check_grads(norm, leaf(a))  # ord 0: a zero derivative, as PyTorch's


MATRIX_ORDS = ["fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf]


@pytest.mark.parametrize("ord", MATRIX_ORDS)
@FEW
@given(shape=st.sampled_from([(3, 3), (2, 4), (4, 2)]), keepdims=st.booleans(), data=st.data())
def test_matrix_norm_values_and_derivatives(ord, shape, keepdims, data):
    a = data.draw(distinct_singular(shape))
    expected = np.linalg.matrix_norm(a, ord=ord, keepdims=keepdims)
    assert_values(LA.matrix_norm(T(a), ord=ord, keepdims=keepdims), expected, 1e-10)
    check_grads(lambda x: LA.matrix_norm(x, ord=ord, keepdims=keepdims), leaf(a))


@fails_on("dask", reason=DASK_2D)
def test_matrix_norm_of_a_batch():
    a = np.arange(12.0).reshape(3, 2, 2) - 5
    for ord in MATRIX_ORDS:
        assert_values(LA.matrix_norm(T(a), ord=ord), np.linalg.matrix_norm(a, ord=ord), 1e-12)


@pytest.mark.parametrize(
    "norm",
    [LA.vector_norm]
    + [lambda x, o=o: LA.vector_norm(x, ord=o) for o in (1, 3, np.inf)]
    + [lambda x, o=o: LA.matrix_norm(x, ord=o) for o in ("fro", "nuc", 2, 1, np.inf)],
)
def test_norm_gradient_at_zero_is_zero(norm):
    (g,) = grads_of(norm, leaf(np.zeros((2, 3))))
    assert_values(g, np.zeros((2, 3)), atol=0)


@pytest.mark.parametrize("ord", [0.5, 0.25, -1, -0.5])
def test_vector_norm_below_order_one_gives_zero_elements_gradient_0(ord):
    # |x|**ord has an infinite slope at 0: PyTorch's gradient is 0 there, and the other
    # elements' is the formula's (all 0 for ord < 0, where the norm is 0). It was NaN.
    a = np.array([1.0, 0.0, -3.0, 2.0])
    if ord > 0:
        s = np.sum(np.abs(a) ** ord)
        safe = np.where(a == 0, 1.0, np.abs(a))
        expected = np.where(a == 0, 0.0, s ** (1 / ord - 1) * safe ** (ord - 1) * np.sign(a))
    else:
        expected = np.zeros_like(a)
    (g,) = grads_of(lambda x: LA.vector_norm(x, ord=ord), leaf(a))
    assert_values(g, expected, 1e-12)
    _, tangent = cr.func.jvp(lambda x: LA.vector_norm(x, ord=ord), (T(a),), (T(np.ones(4)),))
    assert_values(tangent, np.sum(expected), 1e-12)


@pytest.mark.parametrize("norm", [LA.vector_norm, LA.matrix_norm])
def test_complex_two_norm_second_derivatives_at_a_zero_entry(norm):
    # |z|**2 is smooth at z = 0: the Hessian of ||a + ib|| in (a, b) is (I - u u^T) / ||v||,
    # u = v / ||v||, zero entries included. It was taken through abs, whose kink at 0 gave
    # the zero entries' rows and columns 0.
    a, b = np.array([0.0, 1.0, 2.0, 0.5]), np.array([0.0, -1.0, 0.5, 0.0])
    v = np.concatenate([a, b])
    u = v / np.linalg.norm(v)
    expected = (np.eye(8) - np.outer(u, u)) / np.linalg.norm(v)

    def f(parts):
        z = parts[:4] + 1j * parts[4:]
        return norm(cr.reshape(z, (2, 2)) if norm is LA.matrix_norm else z)

    assert_values(cr.func.hessian(f)(T(v)), expected, 1e-12)


def test_nuclear_norm_gradient_of_a_rank_deficient_matrix_skips_the_zero_singular_value():
    # The subgradient of minimum norm: U1 V1^T over the nonzero singular values.
    (g,) = grads_of(lambda x: LA.matrix_norm(x, ord="nuc"), leaf(np.diag([2.0, 0.0])))
    assert_values(g, np.diag([1.0, 0.0]), atol=1e-12)


# ----------------------------------------------------------------------------- no gradient


def test_matrix_rank_and_value_only_functions_carry_no_gradient():
    a = np.array([[1.0, 2.0], [2.0, 4.0]])
    assert LA.matrix_rank(T(a)).item() == 1
    assert LA.matrix_rank(T(np.eye(3)), rtol=0.5).item() == 3
    assert LA.matrix_rank(T(np.diag([1.0, 0.1, 0.01])), rtol=T(0.05)).item() == 2
    assert not LA.matrix_rank(leaf(a)).requires_grad
    with cr.no_grad():
        assert not LA.svdvals(leaf(a)).requires_grad
    assert_values(LA.svdvals(T(a)), np.linalg.svd(a, compute_uv=False), atol=1e-12)


@fails_on("dask", reason=DASK_LINALG)
def test_eigvalsh_under_no_grad_carries_no_gradient():
    with cr.no_grad():
        assert not LA.eigvalsh(leaf(np.eye(2))).requires_grad


def test_linalg_raises_for_inputs_that_are_not_matrices():
    for fn in (LA.inv, LA.det, LA.cholesky, LA.eigh, LA.diagonal, LA.svd):
        with pytest.raises(ValueError, match="matrices"):
            fn(T([1.0, 2.0]))
    with pytest.raises(ValueError, match="square"):
        LA.inv(T(np.ones((2, 3))))


# ----------------------------------------------------------------------------- float32

FLOAT32 = {
    "inv": LA.inv,
    "det": LA.det,
    "solve": lambda x: LA.solve(x, x[..., 0]),
    "cholesky": LA.cholesky,
    "eigh": lambda x: LA.eigh(x).eigenvectors,
    "eigvalsh": LA.eigvalsh,
    "qr": lambda x: LA.qr(x).R,
    "svd": lambda x: LA.svd(x).U,
    "svdvals": LA.svdvals,
    "pinv": LA.pinv,
    "trace": LA.trace,
    "vector_norm": LA.vector_norm,
    "matrix_norm": lambda x: LA.matrix_norm(x, ord="nuc"),
    "matrix_power": lambda x: LA.matrix_power(x, -2),
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=fails_on("dask", reason=DASK_LINALG))
        if n in ("det", "eigh", "eigvalsh", "pinv")
        else pytest.param(n, marks=fails_on("dask", reason=DASK_FULL))
        if n == "svd"
        else n
        for n in FLOAT32
    ],
)
def test_float32_gives_float32_values_and_gradients(name):
    x = leaf([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]], "float32")
    out = FLOAT32[name](x)
    assert out.dtype == cr.float32
    cr.sum(out).backward()
    assert (x.grad.dtype, x.grad.shape) == (cr.float32, x.shape)


@pytest.mark.parametrize("ord", [2, 1, -1, float("inf"), 3])
def test_vector_norm_of_complex_values_is_real_of_the_same_precision(ord):
    z = np.array([1 + 2j, 3 - 1j, 0.5j], dtype=np.complex64)
    out = cr.linalg.vector_norm(T(z), ord=ord)
    assert out.dtype == cr.float32
    np.testing.assert_allclose(N(out), np.linalg.norm(z, ord=ord), rtol=1e-5)


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, 1, float("inf")])
def test_matrix_norm_of_complex_values_is_real_of_the_same_precision(ord):
    z = np.array([[1 + 2j, 3 - 1j], [0.5j, 2]], dtype=np.complex64)
    out = cr.linalg.matrix_norm(T(z), ord=ord)
    assert out.dtype == cr.float32
    np.testing.assert_allclose(N(out), np.linalg.norm(z, ord=ord), rtol=1e-5)
