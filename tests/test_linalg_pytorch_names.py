"""PyTorch's linear algebra names that ports met missing: `linalg.solve_triangular`,
`cholesky_solve`, `logdet`, `cdist` and `diagonal` (offset, dim1, dim2): values against NumPy
or explicit formulas, first and second derivatives in both modes against finite differences,
and PyTorch's errors; and dir(chainrule.linalg) lists the API only."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import DASK_LINALG, LIBRARY, N, T, fails_on
from helpers import arrays, assert_values

# The rules this file gradchecks (see test_rule_table.py).
GRADCHECKED = {"linalg_solve_triangular"}
RNG = np.random.default_rng(3)
# Dask's linalg takes 2-D arrays only (no batches of matrices).
BATCH = () if LIBRARY == "dask" else (2,)
A = RNG.normal(size=BATCH + (3, 3)) + 3 * np.eye(3)
B = RNG.normal(size=BATCH + (3, 2))
BL = RNG.normal(size=BATCH + (2, 3))
A0, B0, BL0 = (x[0] if BATCH else x for x in (A, B, BL))


def both_modes(fn, *inputs):
    leaves = tuple(T(x, requires_grad=True) for x in inputs)
    assert gradcheck(fn, leaves, eps=1e-6, check_forward_ad=True)
    assert gradgradcheck(fn, leaves, eps=1e-6, check_fwd_over_rev=True)


def triangle(a, upper, unitriangular):
    k = 1 if unitriangular else 0
    t = np.triu(a, k) if upper else np.tril(a, -k)
    return t + np.eye(a.shape[-1]) if unitriangular else t


@pytest.mark.parametrize("upper", [True, False])
@pytest.mark.parametrize("unitriangular", [True, False])
def test_solve_triangular_reads_only_the_triangle_on_either_side(upper, unitriangular):
    tri = triangle(A, upper, unitriangular)
    kw = {"upper": upper, "unitriangular": unitriangular}
    assert_values(cr.linalg.solve_triangular(T(A), T(B), **kw), np.linalg.solve(tri, B))
    right = cr.linalg.solve_triangular(T(A), T(BL), left=False, **kw)
    assert_values(right, BL @ np.linalg.inv(tri), rtol=1e-10)


def test_solve_triangular_derivatives_in_both_modes():
    both_modes(lambda a, b: cr.linalg.solve_triangular(a, b, upper=True), A0, B0)
    kw = {"upper": False, "left": False, "unitriangular": True}
    both_modes(lambda a, b: cr.linalg.solve_triangular(a, b, **kw), A0, BL0)


def test_solve_triangular_gradient_lies_in_the_triangle_and_batches_broadcast():
    a = T(A0, requires_grad=True)
    x = cr.linalg.solve_triangular(a, T(B), upper=True)
    assert x.grad_fn.name() == "LinalgSolveTriangularBackward0"  # one node, as PyTorch's
    cr.sum(x).backward()  # B's batch broadcasts
    assert np.all(np.tril(N(a.grad), -1) == 0) and np.any(N(a.grad) != 0)
    with pytest.raises(ValueError, match="square matrices"):
        cr.linalg.solve_triangular(T(B), T(B), upper=False)
    with pytest.raises(TypeError):
        cr.linalg.solve_triangular(T(A), T(B))  # upper is required, as PyTorch's


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_solve_solves_with_the_factors_product(upper):
    lower = np.linalg.cholesky(A @ np.swapaxes(A, -1, -2))
    factor = np.swapaxes(lower, -1, -2) if upper else lower
    expected = np.linalg.solve(A @ np.swapaxes(A, -1, -2), B)
    assert_values(cr.cholesky_solve(T(B), T(factor), upper), expected, rtol=1e-10)
    if upper:  # the lower form is the same two solves
        both_modes(lambda b, f: cr.cholesky_solve(b, f, upper), B0, factor[0] if BATCH else factor)


def test_cholesky_solve_of_complex_factors():
    rng = np.random.default_rng(4)  # each test its own draws: the order is random
    lower = np.tril(rng.normal(size=(3, 3)) + 1j * rng.normal(size=(3, 3))) + 3 * np.eye(3)
    b = rng.normal(size=(3, 2)) + 1j * rng.normal(size=(3, 2))
    expected = np.linalg.solve(lower @ lower.conj().T, b)
    assert_values(cr.cholesky_solve(T(b), T(lower)), expected, rtol=1e-10)


@fails_on("dask", reason=DASK_LINALG)
def test_logdet_is_the_log_of_the_determinant_nan_where_it_is_negative():
    rng = np.random.default_rng(5)
    m = rng.normal(size=(6, 3, 3))
    det = np.linalg.det(m)
    out = N(cr.logdet(T(m)))
    assert np.all(np.isnan(out[det < 0])) and (det < 0).any() and (det > 0).any()
    np.testing.assert_allclose(out[det > 0], np.log(det[det > 0]), rtol=1e-12)
    assert N(cr.logdet(T(np.zeros((2, 2))))) == -np.inf
    mc = m + 1j * rng.normal(size=m.shape)
    assert_values(cr.logdet(T(mc)), np.log(np.linalg.det(mc)), rtol=1e-10, atol=1e-12)
    both_modes(cr.logdet, A0)
    negative = T(np.array([[0.0, 1.0], [1.0, 0.0]]), requires_grad=True)
    cr.logdet(negative).backward()
    np.testing.assert_array_equal(N(negative.grad), np.zeros((2, 2)))  # PyTorch's: 0 there


def distances(x1, x2, p):
    diff = np.abs(x1[..., :, None, :] - x2[..., None, :, :])
    return diff.max(-1) if p == np.inf else (diff**p).sum(-1) ** (1 / p)


@settings(max_examples=10, deadline=None)
@given(st.data())
def test_cdist_is_the_norm_of_the_rows_differences(data):
    p = data.draw(st.sampled_from([1.0, 2.0, np.inf, 3.0]))
    batch = data.draw(st.sampled_from([(), (2,)]))
    m = data.draw(st.integers(1, 3))
    x1 = data.draw(arrays(batch + (data.draw(st.integers(1, 3)), m)))
    x2 = data.draw(arrays(batch + (data.draw(st.integers(1, 3)), m)))
    assert_values(cr.cdist(T(x1), T(x2), p), distances(x1, x2, p), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("p", [1.0, 2.0, np.inf])
def test_cdist_derivatives_and_zero_gradient_at_coincident_rows(p):
    rng = np.random.default_rng(6)
    x1, x2 = rng.normal(size=(3, 2)), rng.normal(size=(2, 2))
    both_modes(lambda a, b: cr.cdist(a, b, p), x1, x2)
    same = T(x1, requires_grad=True)
    cr.sum(cr.cdist(same, T(x1[:1]), p)[0]).backward()
    assert np.all(np.isfinite(N(same.grad))) and np.all(N(same.grad)[0] == 0)


def test_cdist_refuses_what_pytorch_refuses():
    with pytest.raises(RuntimeError, match="at least 2D tensors, X1 got: 1D"):
        cr.cdist(T(np.zeros(3)), T(np.zeros((2, 3))))
    with pytest.raises(RuntimeError, match="same number of columns. X1: 3 X2: 4"):
        cr.cdist(T(np.zeros((2, 3))), T(np.zeros((2, 4))))
    with pytest.raises(RuntimeError, match="non-negative p"):
        cr.cdist(T(np.zeros((2, 3))), T(np.zeros((2, 3))), -1.0)


@pytest.mark.parametrize("args", [(), (1,), (-1, 2, 0), (0, -1, 1), (1, 0, 2)])
def test_diagonal_with_offset_and_dims_is_numpys(args):
    x = np.random.default_rng(7).normal(size=(2, 3, 4))
    assert_values(cr.diagonal(T(x), *args), np.diagonal(x, *args))
    assert_values(T(x).diagonal(*args), np.diagonal(x, *args))
    both_modes(lambda t: cr.diagonal(t, *args) ** 2, x)


def test_diagonal_refuses_one_dim_twice_or_out_of_range():
    with pytest.raises(RuntimeError, match="cannot be identical 1, 1"):
        cr.diagonal(T(np.zeros((2, 3))), 0, 1, -1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        T(np.zeros((2, 3))).diagonal(0, 0, 2)


def test_dir_of_linalg_shows_its_api_not_its_imports():
    names = dir(cr.linalg)
    assert names == sorted(cr.linalg.__all__)
    assert {"solve_triangular", "SlogdetResult"} <= set(names)
    assert not {"abs", "builtins", "grad_mode", "max", "Any"} & set(names)
