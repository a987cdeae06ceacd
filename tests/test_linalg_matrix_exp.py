"""linalg.matrix_exp: values against PyTorch 2.13's torch.linalg.matrix_exp (recorded below:
real, complex, batched, float32, a norm that needs squaring), against exp(A) exp(-A) = I,
gradients against PyTorch's, first and second derivatives in both modes against finite
differences, vmap and compile of it, and PyTorch's errors. linalg.householder_product (which
parametrizations.orthogonal uses too): values against PyTorch's, derivatives, errors."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
from chainrule import func
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import LIBRARY, N, T, examples, skip_on
from helpers import arrays, assert_values

# The rules this file gradchecks (see test_rule_table.py).
GRADCHECKED = {"linalg_matrix_exp"}
DASK_2D = "Dask's linalg takes 2-D arrays only (no batches of matrices)"
dask = pytest.importorskip("dask") if LIBRARY == "dask" else None

# Inputs, and torch.linalg.matrix_exp of them (PyTorch 2.13, float64 / complex128).
A = np.array(
    [[0.5, -1.25, 2.0], [3.0, 0.25, -4.5], [-6.0, 1.5, 1.0]]
)  # 1-norm 9.5: scaled, squared twice
EXP_A = np.array([
    [0.5311832191356316, 0.6375873632113507, -1.4687209066177302],
    [-2.8167064844033636, 0.48378226549027487, 2.5605134119324315],
    [3.6021022119181128, -1.2108646963930665, 0.3297523077134331],
])  # fmt: skip
B = np.array([[[0.01, 0.02], [-0.03, 0.0]], [[1.0, 2.0], [0.5, -1.0]]])
EXP_B = np.array([
    [[1.0097481746541257, 0.02009832419856933], [-0.030147486297853986, 0.9996990125548407]],
    [[3.5464824286171623, 2.7365977440171814], [0.6841494360042953, 0.80988468459998]],
])  # fmt: skip
C = np.array([[0.3 + 1.2j, -0.7 + 0.1j], [2.0 - 0.5j, -0.4 - 0.9j]])
EXP_C = np.array([
    [-0.12695508443771553 + 1.08886735352977j, -0.4314790984686296 - 0.11641595356330406j],
    [1.2862141716280169 + 0.20816253579299304j, -0.010022242605170262 - 0.3052812037490589j],
])  # fmt: skip
# Gradients in PyTorch of sum(W * exp(A)), and of sum(|W[:2, :2] * exp(C)|).
W = np.array([[1.0, -2.0, 0.5], [0.0, 3.0, -1.0], [2.5, 1.0, -0.5]])
GRAD_A = np.array([
    [2.0822852026604215, 0.01154844087380675, 1.561895185642375],
    [0.41156260212521173, 0.17662793505907262, 0.0318653540770881],
    [-2.1482429538906156, 0.7868021688251056, 2.783082965768456],
])  # fmt: skip
GRAD_C = np.array([
    [1.551346242399857 + 0.546001931259028j, -0.16494575645656717 - 0.641453634542522j],
    [-0.34170427593063646 + 0.31818212889537023j, 1.355050509242224 - 0.5460019312590261j],
])  # fmt: skip


def both_modes(fn, *inputs):
    leaves = tuple(T(x, requires_grad=True) for x in inputs)
    assert gradcheck(fn, leaves, eps=1e-6, check_forward_ad=True)
    assert gradgradcheck(fn, leaves, eps=1e-6, check_fwd_over_rev=True)


def test_values_are_pytorchs_real_complex_and_float32():
    assert_values(cr.linalg.matrix_exp(T(A)), EXP_A, rtol=1e-13, atol=1e-14)
    assert_values(cr.linalg.matrix_exp(T(C)), EXP_C, rtol=1e-13, atol=1e-14)
    single = cr.linalg.matrix_exp(T(A, dtype=np.float32))
    assert single.dtype == cr.float32
    np.testing.assert_allclose(N(single), EXP_A, rtol=2e-6, atol=2e-6)


@skip_on("dask", reason=DASK_2D)
def test_values_of_a_batch_are_pytorchs_each_matrix_its_own_scaling():
    # One matrix of the batch needs no squaring, the other does (at degree 13).
    big = np.stack([B[0], 20 * B[1]])
    assert_values(cr.linalg.matrix_exp(T(B)), EXP_B, rtol=1e-13, atol=1e-14)
    out = N(cr.linalg.matrix_exp(T(big)))
    np.testing.assert_allclose(out[0], EXP_B[0], rtol=1e-14)
    np.testing.assert_allclose(out[1], N(cr.linalg.matrix_exp(T(big[1]))), rtol=1e-13)


@examples(8)
@given(st.integers(1, 3), st.sampled_from([0.05, 1.0, 8.0]), st.data())
def test_exp_of_a_matrix_times_exp_of_its_negative_is_the_identity(n, scale, data):
    a = data.draw(arrays((n, n))) / 10 * scale
    product = cr.matmul(cr.linalg.matrix_exp(T(a)), cr.linalg.matrix_exp(T(-a)))
    np.testing.assert_allclose(N(product), np.eye(n), atol=1e-9 * max(1.0, np.abs(a).sum()))


@skip_on("array_api_strict", reason="array-api-strict has no float16")
def test_float16_is_computed_in_float32_and_given_back_in_float16():
    half = cr.linalg.matrix_exp(T(A / 4, dtype=np.float16))
    assert half.dtype == cr.float16
    single = N(cr.linalg.matrix_exp(T(A / 4, dtype=np.float32)))
    np.testing.assert_allclose(N(half).astype(np.float32), single, rtol=2e-3, atol=2e-3)


def test_jacfwd_is_jacrev():
    a = T(A / 3)
    forward = func.jacfwd(cr.linalg.matrix_exp)(a)
    assert_values(forward, N(func.jacrev(cr.linalg.matrix_exp)(a)), rtol=1e-12, atol=1e-14)


def test_diagonal_and_empty_matrices():
    d = np.diag([-1.0, 0.0, 2.5])
    assert_values(cr.linalg.matrix_exp(T(d)), np.diag(np.exp([-1.0, 0.0, 2.5])), rtol=1e-14)
    assert cr.linalg.matrix_exp(T(np.zeros((0, 0)))).shape == (0, 0)
    assert_values(cr.linalg.matrix_exp(T([[40.0]])), np.array([[np.exp(40.0)]]), rtol=1e-13)


def test_gradients_are_pytorchs_real_and_complex():
    a = T(A, requires_grad=True)
    y = cr.linalg.matrix_exp(a)
    assert y.grad_fn.name() == "LinalgMatrixExpBackward0"
    cr.sum(y * T(W)).backward()
    assert_values(a.grad, GRAD_A, rtol=1e-12, atol=1e-13)
    c = T(C, requires_grad=True)
    cr.sum(cr.abs(cr.linalg.matrix_exp(c) * T(W[:2, :2]))).backward()
    assert_values(c.grad, GRAD_C, rtol=1e-12, atol=1e-13)


def test_first_and_second_derivatives_in_both_modes():
    both_modes(cr.linalg.matrix_exp, A / 2)
    both_modes(cr.linalg.matrix_exp, C)


@skip_on("dask", reason=DASK_2D)
def test_derivatives_of_a_batch_in_both_modes():
    both_modes(cr.linalg.matrix_exp, B)


def test_third_derivative_is_the_derivative_of_the_second():
    # d^3/dt^3 exp(tA)[i, j] at t = 0 is (A^3)[i, j]: three nested grads of a scalar path.
    t = T(0.0, requires_grad=True)
    y = cr.linalg.matrix_exp(t * T(A / 4))[0, 2]
    (d1,) = cr.autograd.grad(y, t, create_graph=True)
    (d2,) = cr.autograd.grad(d1, t, create_graph=True)
    (d3,) = cr.autograd.grad(d2, t)
    np.testing.assert_allclose(N(d3), np.linalg.matrix_power(A / 4, 3)[0, 2], rtol=1e-10)


@skip_on("dask", reason=DASK_2D)
def test_vmap_of_matrix_exp_and_of_its_gradient_is_the_batched_one():
    x = np.stack([A / 3, -A / 5])
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a batching rule: no loop over the samples
        batched = func.vmap(cr.linalg.matrix_exp)(T(x))
    assert_values(batched, N(cr.linalg.matrix_exp(T(x))))

    def loss(a):
        return cr.sum(cr.linalg.matrix_exp(a) * T(W))

    rows = [N(func.grad(loss)(T(m))) for m in x]
    assert_values(func.vmap(func.grad(loss))(T(x)), np.stack(rows), rtol=1e-13)


def test_compiled_step_gives_the_eager_values_and_gradients_for_any_norm():
    def step(a):
        y = cr.linalg.matrix_exp(a)
        (g,) = cr.autograd.grad(cr.sum(y * T(W)), a)
        return y, g

    compiled = cr.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cr.CompileWarning)
        for scale in (0.01, 1.0, 4.0):  # Padé degrees 3 to 13, with and without squaring
            a = T(A * scale, requires_grad=True)
            for got, expected in zip(compiled(a), step(a)):
                np.testing.assert_allclose(N(got), N(expected), rtol=1e-14, atol=1e-15)


def test_errors_are_pytorchs():
    with pytest.raises(RuntimeError, match="must have at least 2 dimensions"):
        cr.linalg.matrix_exp(T([1.0, 2.0]))
    with pytest.raises(RuntimeError, match="square matrices, but they are 2 by 3 matrices"):
        cr.linalg.matrix_exp(T(np.zeros((2, 3))))
    with pytest.raises(RuntimeError, match="floating point or complex tensor as input. Got Long"):
        cr.linalg.matrix_exp(T(np.zeros((2, 2), dtype=np.int64)))
    with pytest.raises(RuntimeError, match="Got Bool"):
        cr.linalg.matrix_exp(T(np.zeros((2, 2), dtype=bool)))


def _refuse(*args, **kwargs):
    raise AssertionError("a Dask graph was computed")


@pytest.mark.skipif(LIBRARY != "dask", reason="Dask's laziness")
def test_on_dask_forward_and_backward_compute_nothing_until_asked():
    a = T(A, requires_grad=True)
    with dask.config.set(scheduler=_refuse):
        y = cr.linalg.matrix_exp(a)
        cr.sum(y * T(W)).backward()
    assert_values(y, EXP_A, rtol=1e-13, atol=1e-14)
    assert_values(a.grad, GRAD_A, rtol=1e-12, atol=1e-13)


# ----------------------------------------------------------------------------- householder_product

HA = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5], [-2.0, 1.0, 0.75], [0.5, 3.0, -1.25]])
HTAU = np.array([1.2, 0.4])
# torch.linalg.householder_product(HA, HTAU), and of the complex pair below (PyTorch 2.13).
HOUSEHOLDER = np.array([
    [-0.19999999999999996, -1.3199999999999998, 2.8800000000000003],
    [-1.7999999999999998, -1.38, 3.9200000000000004],
    [2.4, 2.2399999999999998, -5.160000000000001],
    [-0.6, -1.86, 0.24],
])  # fmt: skip
HC = np.array([[1.0 + 0.5j, 0.2 - 1.0j], [0.3 - 0.7j, -0.4 + 0.1j], [-1.1 + 0.2j, 0.6 + 0.9j]])
HCTAU = np.array([0.8 - 0.3j, 1.1 + 0.2j])
HOUSEHOLDER_C = np.array([
    [0.19999999999999996 + 0.3j, -0.6889 - 0.8248000000000001j],
    [-0.030000000000000013 + 0.65j, -0.8840300000000001 + 0.03478999999999991j],
    [0.8200000000000002 - 0.49000000000000005j, 0.4427500000000001 - 0.3404999999999999j],
])  # fmt: skip


def test_householder_product_values_are_pytorchs():
    assert_values(cr.linalg.householder_product(T(HA), T(HTAU)), HOUSEHOLDER, rtol=1e-14)
    assert_values(cr.linalg.householder_product(T(HC), T(HCTAU)), HOUSEHOLDER_C, rtol=1e-14)
    batch = cr.linalg.householder_product(T(np.stack([HA, -HA])), T(np.stack([HTAU, HTAU])))
    assert_values(batch[0], HOUSEHOLDER, rtol=1e-14)


def test_householder_product_derivatives_in_both_modes():
    both_modes(cr.linalg.householder_product, HA, HTAU)
    both_modes(cr.linalg.householder_product, HC, HCTAU)


def test_householder_product_errors_are_pytorchs():
    hp = cr.linalg.householder_product
    with pytest.raises(RuntimeError, match="input must have at least 2 dimensions"):
        hp(T(np.ones(3)), T(np.ones(1)))
    with pytest.raises(RuntimeError, match=r"input.shape\[-2\] must be greater than or equal"):
        hp(T(np.ones((2, 3))), T(np.ones(1)))
    with pytest.raises(RuntimeError, match=r"input.shape\[-1\] must be greater than or equal"):
        hp(T(np.ones((3, 2))), T(np.ones(3)))
    with pytest.raises(RuntimeError, match="tau.ndim equal to 2 and input.ndim is equal to 2"):
        hp(T(np.ones((3, 2))), T(np.ones((2, 2))))
    with pytest.raises(RuntimeError, match=r"equal to input.shape\[:-2\], but got \[3\]"):
        hp(T(np.ones((2, 3, 2))), T(np.ones((3, 2))))
    with pytest.raises(NotImplementedError, match="not implemented for 'Long'"):
        hp(T(np.ones((3, 2), dtype=np.int64)), T(np.ones(2, dtype=np.int64)))
