"""NumPy's ufuncs and functions on tensors: they dispatch to chainrule (values against NumPy,
gradients against finite differences and chainrule's own), and what chainrule lacks raises
TypeError; __array_namespace__, DLPack exchange and to_device. The dispatch tests build
NumPy-backed tensors themselves, so that both backend runs test the same thing."""

import importlib
import inspect

import numpy as np
import pytest

import chainrule as cr
from chainrule._interop import UFUNCS
from chainrule._numpy_composites import TABLES
from chainrule._numpy_functions import VALUE_FUNCTIONS
from chainrule.autograd import grad, gradcheck, gradgradcheck
from conftest import BACKEND, LIBRARY, N, T, fails_on

RNG = np.random.default_rng(0)


def values(shape):
    """Values in (0.2, 0.9): inside the domain of every function tested here."""
    return RNG.uniform(0.2, 0.9, size=shape)


def np_leaf(a):
    """A NumPy-backed leaf tensor that requires grad, whatever the backend under test."""
    return cr.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


def assert_dispatches(fn, shapes, target):
    """fn on NumPy-backed tensors gives what it gives on arrays, as a tensor whose gradients
    agree with finite differences; if chainrule lacks `target`, fn raises TypeError."""
    arrays = [values(s) for s in shapes]
    xs = [np_leaf(a) for a in arrays]
    if not hasattr(cr, target):
        with pytest.raises(TypeError, match=f"needs chainrule.{target}"):
            fn(*xs)
        return
    out = fn(*xs)
    assert out.__class__ is cr.Tensor
    np.testing.assert_allclose(N(out), fn(*arrays), rtol=1e-13, atol=1e-15)
    if out.dtype.kind == "f":
        assert out.requires_grad
        assert gradcheck(fn, tuple(xs))


# ----------------------------------------------------------------------------- ufuncs

A = np.linspace(0.3, 0.8, 6).reshape(2, 3)

UFUNC_CASES = {
    "sin": (np.sin, [(2, 3)], "sin"),
    "arcsin": (np.arcsin, [(2, 3)], "asin"),
    "absolute": (np.absolute, [(2, 3)], "abs"),
    "exp": (np.exp, [(2, 3)], "exp"),
    "sqrt": (np.sqrt, [(2, 3)], "sqrt"),
    "log": (np.log, [(2, 3)], "log"),
    "tanh": (np.tanh, [(2, 3)], "tanh"),
    "negative": (np.negative, [(2, 3)], "negative"),
    "add": (np.add, [(2, 3), (3,)], "add"),
    "subtract": (np.subtract, [(2, 3), (2, 3)], "subtract"),
    "multiply": (np.multiply, [(2, 3), (1, 3)], "multiply"),
    "true_divide": (np.true_divide, [(2, 3), (2, 3)], "divide"),
    "power": (np.power, [(2, 3), (2, 3)], "pow"),
    "arctan2": (np.arctan2, [(2, 3), (2, 3)], "atan2"),
    "maximum": (np.maximum, [(2, 3), (2, 3)], "maximum"),
    "minimum": (np.minimum, [(2, 3), (2, 3)], "minimum"),
    "matmul": (np.matmul, [(2, 3), (3, 4)], "matmul"),
    "ndarray * t": (lambda x: A * x, [(2, 3)], "multiply"),
    "t * ndarray": (lambda x: x * A, [(2, 3)], "multiply"),
    "ndarray + t": (lambda x: A + x, [(2, 3)], "add"),
    "ndarray - t": (lambda x: A - x, [(2, 3)], "subtract"),
    "ndarray / t": (lambda x: A / x, [(2, 3)], "divide"),
    "ndarray ** t": (lambda x: A**x, [(2, 3)], "pow"),
    "ndarray @ t": (lambda x: A @ x, [(3, 2)], "matmul"),
    "np.float64 * t": (lambda x: np.float64(2.5) * x, [(2, 3)], "multiply"),
    "ufunc(ndarray, t)": (lambda x: np.arctan2(A, x), [(2, 3)], "atan2"),
}


@pytest.mark.parametrize("case", UFUNC_CASES)
def test_numpy_ufuncs_and_operators_on_tensors_dispatch_to_chainrule(case):
    assert_dispatches(*UFUNC_CASES[case])


def test_gradients_through_numpy_ufuncs_equal_chainrules_to_second_order():
    a = values(5)
    x, y = np_leaf(a), np_leaf(a)
    (gx,) = grad(np.sin(x).sum() * np.exp(x).sum(), x, create_graph=True)
    (gy,) = grad(cr.sin(y).sum() * cr.exp(y).sum(), y, create_graph=True)
    np.testing.assert_allclose(N(gx), N(gy), rtol=1e-15)
    (hx,) = grad(np.sum(np.square(gx)), x)
    (hy,) = grad(cr.sum(cr.square(gy)), y)
    np.testing.assert_allclose(N(hx), N(hy), rtol=1e-15)
    assert gradgradcheck(lambda t: np.sum(np.sin(t) * np.maximum(t, 0.5)), np_leaf(a))


def test_comparisons_and_logical_ufuncs_give_tensors_without_gradient():
    x = np_leaf([0.2, 0.5, 0.8])
    for out, expected in [
        (np.equal(x, 0.5), [False, True, False]),
        (A[0] < x, [False, True, True]),
        (np.logical_and(x > 0.3, x < 0.7), [False, True, False]),
        (np.isfinite(x), [True, True, True]),
    ]:
        assert out.__class__ is cr.Tensor and not out.requires_grad
        np.testing.assert_array_equal(N(out), expected)


def test_numpy_ufuncs_dispatch_on_the_backend_under_test():
    t = T([0.25, 0.5])
    out = np.sin(t)
    assert out.__class__ is cr.Tensor and out._xp is BACKEND
    np.testing.assert_allclose(N(out), np.sin([0.25, 0.5]), rtol=1e-15)


@pytest.mark.parametrize(
    "call, what",
    [
        (lambda x: np.add.reduce(x), "numpy.add.reduce"),
        (lambda x: np.add.accumulate(x), "numpy.add.accumulate"),
        (lambda x: np.multiply.outer(x, x), "numpy.multiply.outer"),
        (lambda x: np.multiply.at(x, [0], 2.0), "numpy.multiply.at"),
        (lambda x: np.sin(x, where=np.ones(3, dtype=bool)), "numpy.sin with where= and no out="),
        (lambda x: np.add(x, x, dtype=np.float32), "numpy.add with dtype="),
        (lambda x: np.cbrt(x), "numpy.cbrt"),
        (lambda x: np.spacing(x), "numpy.spacing"),
    ],
)
def test_unsupported_ufunc_calls_raise_type_error_naming_them(call, what):
    with pytest.raises(TypeError, match=f"chainrule does not implement {what} for Tensors"):
        call(np_leaf([0.2, 0.5, 0.8]))


def test_in_place_ndarray_operator_with_a_tensor_that_requires_grad_raises():
    # The array can't hold the graph (tests/test_numpy_ufunc_out.py: ufuncs' out=).
    a = np.ones(3)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires"):
        a += np_leaf([0.2, 0.5, 0.8])
    np.testing.assert_array_equal(a, np.ones(3))


def test_ufuncs_are_looked_up_when_called(monkeypatch):
    x = np_leaf([0.2, 0.5])
    monkeypatch.delattr(cr._namespace, "sin")
    with pytest.raises(TypeError, match="numpy.sin for Tensors; it needs chainrule.sin"):
        np.sin(x)
    monkeypatch.setattr(cr._namespace, "hypot", lambda a, b: "chainrule's hypot")
    assert np.hypot(x, x) == "chainrule's hypot"


# ----------------------------------------------------------------------------- functions

FUNCTION_CASES = {
    "sum": (lambda x: np.sum(x), [(2, 3)], "sum"),
    "sum axis keepdims": (lambda x: np.sum(x, axis=(0, 1), keepdims=True), [(2, 3)], "sum"),
    "sum out=None": (lambda x: np.sum(x, 0, None, None), [(2, 3)], "sum"),
    "mean": (lambda x: np.mean(x, axis=1), [(2, 3)], "mean"),
    "prod": (lambda x: np.prod(x, axis=0), [(2, 3)], "prod"),
    "max": (lambda x: np.max(x, axis=1), [(2, 3)], "max"),
    "amax": (lambda x: np.amax(x), [(2, 3)], "max"),
    "min": (lambda x: np.min(x, 0, keepdims=True), [(2, 3)], "min"),
    "amin": (lambda x: np.amin(x, axis=0), [(2, 3)], "min"),
    "var ddof": (lambda x: np.var(x, axis=0, ddof=1), [(3, 2)], "var"),
    "var correction": (lambda x: np.var(x, correction=1), [(3, 2)], "var"),
    "std": (lambda x: np.std(x, ddof=1, keepdims=True), [(3, 2)], "std"),
    "dot 1-D 1-D": (np.dot, [(3,), (3,)], "matmul"),
    "dot 2-D 1-D": (np.dot, [(2, 3), (3,)], "matmul"),
    "dot 1-D 2-D": (np.dot, [(3,), (3, 2)], "matmul"),
    "dot 2-D 2-D": (np.dot, [(2, 3), (3, 2)], "matmul"),
    "dot 3-D 3-D": (np.dot, [(2, 2, 3), (2, 3, 2)], "tensordot"),
    "dot scalar": (np.dot, [(), (2, 3)], "multiply"),
    "dot ndarray": (lambda x: np.dot(A, x), [(3, 2)], "matmul"),
    "tensordot": (np.tensordot, [(2, 3, 2), (3, 2, 2)], "tensordot"),
    "tensordot axes": (
        lambda x, y: np.tensordot(x, y, axes=([0], [1])),
        [(3, 2), (2, 3)],
        "tensordot",
    ),  # fmt: skip
    "concatenate": (lambda x, y: np.concatenate([x, y], axis=1), [(2, 3), (2, 1)], "concat"),
    "concatenate ndarray": (lambda x: np.concatenate((A, x)), [(1, 3)], "concat"),
    "stack": (lambda x, y: np.stack([x, y], axis=-1), [(2, 3), (2, 3)], "stack"),
    "reshape": (lambda x: np.reshape(x, (3, 2)), [(2, 3)], "reshape"),
    "reshape shape=": (lambda x: np.reshape(x, shape=(-1,)), [(2, 3)], "reshape"),
    "transpose": (np.transpose, [(2, 3, 2)], "permute_dims"),
    "transpose axes": (lambda x: np.transpose(x, (1, 0, 2)), [(2, 3, 2)], "permute_dims"),
    "expand_dims": (lambda x: np.expand_dims(x, 1), [(2, 3)], "reshape"),
    "expand_dims tuple": (lambda x: np.expand_dims(x, (0, -1)), [(2, 3)], "reshape"),
    "squeeze": (np.squeeze, [(1, 3, 1)], "squeeze"),
    "squeeze axis": (lambda x: np.squeeze(x, axis=0), [(1, 3, 1)], "squeeze"),
    "broadcast_to": (lambda x: np.broadcast_to(x, (4, 2, 3)), [(2, 3)], "broadcast_to"),
    "where": (lambda x, y: np.where(x > 0.5, x, y), [(2, 3), (2, 3)], "where"),
    "where scalar": (lambda x: np.where(x > 0.5, x, 0.0), [(2, 3)], "where"),
    "clip": (lambda x: np.clip(x, 0.3, 0.7), [(2, 3)], "clip"),
    "clip min=": (lambda x: np.clip(x, min=0.4), [(2, 3)], "clip"),
    "take": (lambda x: np.take(x, [2, 0, 2], axis=1), [(2, 3)], "take"),
    "take flat": (lambda x: np.take(x, [5, 0]), [(2, 3)], "take"),
    "flip": (np.flip, [(2, 3)], "flip"),
    "flip axis": (lambda x: np.flip(x, axis=0), [(2, 3)], "flip"),
    "sort": (np.sort, [(2, 3)], "sort"),
    "sort flat": (lambda x: np.sort(x, axis=None), [(2, 3)], "sort"),
    "argsort": (lambda x: np.argsort(x, axis=0), [(2, 3)], "argsort"),
    "cumsum": (np.cumsum, [(2, 3)], "cumulative_sum"),
    "cumsum axis": (lambda x: np.cumsum(x, axis=1), [(2, 3)], "cumulative_sum"),
    "cumprod": (lambda x: np.cumprod(x, axis=0), [(2, 3)], "cumulative_prod"),
    "diff": (np.diff, [(2, 4)], "diff"),
    "diff axis n": (lambda x: np.diff(x, n=2, axis=0), [(4, 2)], "diff"),
    "tile": (lambda x: np.tile(x, (2, 1)), [(2, 3)], "tile"),
    "repeat": (lambda x: np.repeat(x, 2, axis=0), [(2, 3)], "repeat"),
    "repeat flat": (lambda x: np.repeat(x, 2), [(2, 3)], "repeat"),
    "roll": (lambda x: np.roll(x, 1, axis=1), [(2, 3)], "roll"),
    "roll flat": (lambda x: np.roll(x, 2), [(2, 3)], "roll"),
    "moveaxis": (lambda x: np.moveaxis(x, 0, -1), [(2, 3, 4)], "moveaxis"),
    "argmax": (lambda x: np.argmax(x, axis=1), [(2, 3)], "argmax"),
    "argmin": (np.argmin, [(2, 3)], "argmin"),
    "all": (lambda x: np.all(x > 0.5, axis=0), [(2, 3)], "all"),
    "any": (lambda x: np.any(x > 0.5), [(2, 3)], "any"),
    "round": (lambda x: np.round(x * 10), [(2, 3)], "round"),
    "matrix_transpose": (np.matrix_transpose, [(2, 3, 4)], "matrix_transpose"),
    "cumulative_sum": (
        lambda x: np.cumulative_sum(x, axis=1, include_initial=True),
        [(2, 3)],
        "cumulative_sum",
    ),  # fmt: skip
    "count_nonzero": (lambda x: np.count_nonzero(x > 0.5, axis=0), [(2, 3)], "count_nonzero"),
    "real": (np.real, [(2, 3)], "real"),
    "copy": (np.copy, [(2, 3)], "asarray"),
    "ravel": (np.ravel, [(2, 3)], "reshape"),
    "concat": (lambda x, y: np.concat([x, y]), [(2, 3), (1, 3)], "concat"),
    "permute_dims": (lambda x: np.permute_dims(x, (2, 0, 1)), [(2, 3, 4)], "permute_dims"),
    "swapaxes": (lambda x: np.swapaxes(x, 0, 2), [(2, 3, 4)], "permute_dims"),
    "unstack": (lambda x: np.unstack(x, axis=1)[2], [(2, 3)], "unstack"),
    "tril": (lambda x: np.tril(x, -1), [(3, 3)], "tril"),
    "triu": (np.triu, [(3, 4)], "triu"),
    "meshgrid": (
        lambda x, y: np.meshgrid(x, y)[0] * np.meshgrid(x, y)[1],
        [(3,), (2,)],
        "meshgrid",
    ),
    "vstack": (lambda x, y: np.vstack([x, y]), [(2, 3), (3,)], "concat"),
    "hstack": (lambda x, y: np.hstack((x, y)), [(2, 3), (2, 1)], "concat"),
    "hstack 1-D": (lambda x, y: np.hstack([x, y]), [(3,), (2,)], "concat"),
    "dstack": (lambda x, y: np.dstack([x, y]), [(2, 3), (2, 3)], "concat"),
    "column_stack": (lambda x, y: np.column_stack([x, y]), [(3,), (3, 2)], "concat"),
    "atleast_1d": (lambda x: np.atleast_1d(x), [()], "reshape"),
    "atleast_2d": (lambda x: np.atleast_2d(x), [(3,)], "reshape"),
    "atleast_3d": (lambda x: np.atleast_3d(x), [(2, 3)], "reshape"),
    "atleast_3d 1-D": (lambda x: np.atleast_3d(x), [(3,)], "reshape"),
    "atleast_2d several": (lambda x, y: np.atleast_2d(x, y)[0] + 1, [(3,), (1, 3)], "reshape"),
    "median odd": (np.median, [(3, 3)], "sort"),
    "median even axis": (lambda x: np.median(x, axis=1), [(3, 4)], "sort"),
    "median axes keepdims": (
        lambda x: np.median(x, axis=(0, 2), keepdims=True),
        [(2, 3, 2)],
        "sort",
    ),  # fmt: skip
    "diagonal": (lambda x: np.diagonal(x, 1, 0, 2), [(3, 2, 4)], "linalg"),
    "trace": (lambda x: np.trace(x, axis1=1, axis2=2), [(2, 3, 3)], "linalg"),
    "outer": (np.outer, [(2, 2), (3,)], "linalg"),
    "einsum matmul": (lambda x, y: np.einsum("ij,jk->ik", x, y), [(2, 3), (3, 4)], "matmul"),
    "einsum implicit": (lambda x, y: np.einsum("ij,jk", x, y), [(2, 3), (3, 4)], "matmul"),
    "einsum trace": (lambda x: np.einsum("ii", x), [(3, 3)], "sum"),
    "einsum diagonal": (lambda x: np.einsum("ii->i", x), [(3, 3)], "sum"),
    "einsum 3-D diagonal": (lambda x: np.einsum("iji->j", x), [(3, 2, 3)], "sum"),
    "einsum transpose": (lambda x: np.einsum("ijk->kij", x), [(2, 3, 4)], "permute_dims"),
    "einsum sum": (lambda x: np.einsum("ij->", x), [(2, 3)], "sum"),
    "einsum dot": (lambda x, y: np.einsum("i,i", x, y), [(3,), (3,)], "matmul"),
    "einsum outer": (lambda x, y: np.einsum("i,j->ij", x, y), [(3,), (2,)], "matmul"),
    "einsum batched": (
        lambda x, y: np.einsum("bij,bjk->bik", x, y),
        [(2, 3, 2), (2, 2, 4)],
        "matmul",
    ),
    "einsum ellipsis": (lambda x, y: np.einsum("...j,j", x, y), [(2, 3, 4), (4,)], "matmul"),
    "einsum ellipsis broadcast": (
        lambda x, y: np.einsum("...ij,...jk->...ik", x, y),
        [(2, 1, 2, 3), (4, 3, 2)],
        "matmul",
    ),  # fmt: skip
    "einsum three operands": (
        lambda x, y, z: np.einsum("ij,jk,k->i", x, y, z),
        [(2, 3), (3, 4), (4,)],
        "matmul",
    ),  # fmt: skip
    "einsum bilinear": (lambda x, y: np.einsum("i,ij,j->", x, y, x), [(3,), (3, 3)], "matmul"),
    "einsum size-1 broadcast": (lambda x, y: np.einsum("ij,jk", x, y), [(2, 1), (3, 2)], "matmul"),
    "einsum dtype": (lambda x: np.einsum("ij->j", x, dtype=np.float64), [(2, 3)], "sum"),
}

LINALG_CASES = {
    "norm": (np.linalg.norm, [(3, 3)], "linalg"),
    "norm of a vector": (lambda x: np.linalg.norm(x, 3), [(4,)], "linalg"),
    "norm over an axis": (lambda x: np.linalg.norm(x, 1, axis=0), [(3, 4)], "linalg"),
    "norm of n-D": (lambda x: np.linalg.norm(x, keepdims=True), [(2, 3, 2)], "linalg"),
    "norm over two axes": (
        lambda x: np.linalg.norm(x, axis=(2, 0), keepdims=True),
        [(2, 3, 4)],
        "linalg",
    ),  # fmt: skip
    "norm nuc": (lambda x: np.linalg.norm(x, "nuc"), [(3, 4)], "linalg"),
    "norm inf": (lambda x: np.linalg.norm(x, np.inf), [(3, 4)], "linalg"),
    "norm -1": (lambda x: np.linalg.norm(x, -1, axis=(0, 1)), [(3, 4)], "linalg"),
    "inv": (lambda x: np.linalg.inv(x + 3 * np.eye(3)), [(3, 3)], "linalg"),
    "det": (lambda x: np.linalg.det(x + 3 * np.eye(3)), [(2, 3, 3)], "linalg"),
    "slogdet": (lambda x: np.linalg.slogdet(x + 3 * np.eye(3))[1], [(3, 3)], "linalg"),
    "solve": (lambda x, y: np.linalg.solve(x + 3 * np.eye(3), y), [(3, 3), (3, 2)], "linalg"),
    "solve vector": (lambda x, y: np.linalg.solve(x + 3 * np.eye(3), y), [(3, 3), (3,)], "linalg"),
    "pinv": (np.linalg.pinv, [(3, 2)], "linalg"),
    "pinv rcond": (lambda x: np.linalg.pinv(x, rcond=1e-10), [(2, 3)], "linalg"),
    "matrix_power": (lambda x: np.linalg.matrix_power(x, 3), [(3, 3)], "linalg"),
    "cholesky": (lambda x: np.linalg.cholesky(x @ x.T + np.eye(3)), [(3, 3)], "linalg"),
    "qr": (lambda x: np.linalg.qr(x)[1], [(4, 3)], "linalg"),
    "eigh": (lambda x: np.linalg.eigh(x + x.T)[0], [(3, 3)], "linalg"),
    "eigvalsh": (lambda x: np.linalg.eigvalsh(x + x.T), [(3, 3)], "linalg"),
    "svd": (lambda x: np.linalg.svd(x, full_matrices=False)[1], [(3, 4)], "linalg"),
    "svd values only": (lambda x: np.linalg.svd(x, compute_uv=False), [(4, 3)], "linalg"),
    "svdvals": (np.linalg.svdvals, [(3, 4)], "linalg"),
    "multi_dot": (lambda x, y: np.linalg.multi_dot([x, y, x.T]), [(2, 3), (3, 3)], "linalg"),
    "cond": (lambda x: np.linalg.cond(x + 3 * np.eye(3)), [(3, 3)], "linalg"),
    "cond 1": (lambda x: np.linalg.cond(x + 3 * np.eye(3), 1), [(3, 3)], "linalg"),
    "matrix_rank": (lambda x: np.linalg.matrix_rank(x), [(3, 4)], "linalg"),
    "trace": (lambda x: np.linalg.trace(x, offset=1), [(2, 3, 3)], "linalg"),
    "diagonal": (np.linalg.diagonal, [(3, 4)], "linalg"),
    "outer": (np.linalg.outer, [(2,), (3,)], "linalg"),
    "cross": (lambda x, y: np.linalg.cross(x, y), [(2, 3), (2, 3)], "linalg"),
    "matmul": (np.linalg.matmul, [(2, 3), (3, 2)], "linalg"),
    "tensordot": (lambda x, y: np.linalg.tensordot(x, y, axes=1), [(2, 3), (3, 2)], "linalg"),
    "vecdot": (np.linalg.vecdot, [(2, 3), (3,)], "linalg"),
    "vector_norm": (lambda x: np.linalg.vector_norm(x, axis=0, ord=1), [(2, 3)], "linalg"),
    "matrix_norm": (lambda x: np.linalg.matrix_norm(x, ord="nuc"), [(3, 2)], "linalg"),
    "matrix_transpose": (np.linalg.matrix_transpose, [(2, 3)], "linalg"),
    "fftshift": (np.fft.fftshift, [(3, 4)], "fft"),
    "ifftshift": (lambda x: np.fft.ifftshift(x, axes=0), [(3, 4)], "fft"),
}


@pytest.mark.parametrize("case", FUNCTION_CASES)
def test_numpy_functions_on_tensors_dispatch_to_chainrule(case):
    assert_dispatches(*FUNCTION_CASES[case])


@pytest.mark.parametrize("case", LINALG_CASES)
def test_numpy_linalg_and_fft_functions_dispatch_to_chainrule(case):
    assert_dispatches(*LINALG_CASES[case])


@pytest.mark.parametrize(
    "fn",
    [np.einsum, lambda s, *xs: np.linalg.norm(np.einsum(s, *xs))],
    ids=["einsum", "norm of einsum"],
)
def test_einsum_differentiates_twice(fn):
    x, y = np_leaf(values((2, 3))), np_leaf(values((3, 3)))
    assert gradgradcheck(lambda a, b: fn("ij,jk,ik->k", a, b, a), (x, y))
    assert gradgradcheck(lambda b: fn("ii->i", b), (y,))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda x: np.einsum("ij,jk->ik", x), ValueError, "name 2 operands, but 1 were given"),
        (lambda x: np.einsum("ijk", x), ValueError, "do not match an operand of 2 dimensions"),
        (lambda x: np.einsum("ij->iz", x), ValueError, "output label 'z'"),
        (lambda x: np.einsum("i1", x), ValueError, "invalid subscripts"),
        (lambda x: np.einsum("ij,ij", x, x[:, :1].T), ValueError, "label 'j' .* sizes 3 and 2"),
        (lambda x: np.einsum("ij", x, order="F"), TypeError, "with argument order"),
        (lambda x: np.einsum("ij", x, dtype=np.float32), TypeError, "float64 to float32"),
    ],
)
def test_einsum_errors_are_clear(call, error, message):
    with pytest.raises(error, match=message):
        call(np_leaf(values((2, 3))))


def test_einsum_with_an_empty_batch_gives_empty_results_and_gradients():
    # The size of a label was taken as the larger of its sizes: 1 (the start) over 0.
    a, b = np_leaf(np.zeros((0, 2, 3))), np_leaf(np.zeros((0, 3, 4)))
    out = np.einsum("bij,bjk->bik", a, b)
    assert out.shape == (0, 2, 4)
    ga, gb = grad(out.sum(), (a, b))
    assert ga.shape == (0, 2, 3) and gb.shape == (0, 3, 4)
    x, y = np_leaf(values((1, 3))), np_leaf(np.zeros((0, 3)))
    np.testing.assert_array_equal(N(np.einsum("ij,ij->i", x, y)), np.zeros(0))


@pytest.mark.parametrize("reps", [2, np.int64(2), (2, 1), [3]], ids=str)
def test_tile_takes_numpys_int_repetitions(reps):
    a = values((2, 3))
    x = np_leaf(a)
    np.testing.assert_array_equal(N(np.tile(x, reps)), np.tile(a, reps))
    assert gradgradcheck(lambda t: np.tile(t, reps), (x,))


@pytest.mark.parametrize("axes", [[1, 0], ([1], [0]), (1, [0]), 1, np.int64(1)], ids=str)
def test_tensordot_takes_numpys_forms_of_axes(axes):
    a, b = values((2, 3)), values((3, 4))
    x, y = np_leaf(a), np_leaf(b)
    np.testing.assert_allclose(N(np.tensordot(x, y, axes=axes)), np.tensordot(a, b, axes=axes))
    assert gradgradcheck(lambda s, t: np.tensordot(s, t, axes), (x, y))


def test_norm_of_a_vector_refuses_a_matrix_order_as_numpy():
    for call in (lambda x: np.linalg.norm(x, "fro"), lambda x: np.linalg.norm(x, "nuc", axis=0)):
        with pytest.raises(ValueError, match="Invalid norm order"):
            call(np_leaf(values(3)))


def test_median_of_a_slice_with_nan_is_nan_as_numpy():
    a = np.array([[0.5, np.nan, 0.2], [0.3, 0.1, 0.2]])
    np.testing.assert_array_equal(N(np.median(np_leaf(a), axis=1)), np.median(a, axis=1))


@pytest.mark.parametrize(
    "fn",
    [np.fft.fft, np.fft.ifft, np.fft.rfft, np.fft.ihfft, np.fft.fft2, np.fft.rfftn,
     lambda x: np.fft.irfft(np.fft.rfft(x), n=4), lambda x: np.fft.hfft(x, n=4),
     lambda x: np.fft.fft(x, n=6, axis=0, norm="ortho"), lambda x: np.fft.ifftn(x, axes=(0,)),
     lambda x: np.fft.irfft2(np.fft.rfft2(x), s=(2, 4))],
)  # fmt: skip
def test_numpy_fft_functions_dispatch_to_chainrule_fft(fn):
    a = values((2, 4))
    out = fn(cr.tensor(a))
    assert out.__class__ is cr.Tensor
    np.testing.assert_allclose(N(out), fn(a), rtol=1e-12, atol=1e-14)
    # Differentiable through complex values (PyTorch's convention), to the second order.
    assert gradcheck(fn, np_leaf(a))
    assert gradgradcheck(fn, np_leaf(a))


def test_numpy_eig_and_eigvals_dispatch_with_the_standards_complex_results():
    a = np.array([[0.0, -2.0], [1.0, 0.5]])
    w, v = np.linalg.eig(cr.tensor(a))
    assert w.dtype == v.dtype == cr.complex128
    np.testing.assert_allclose(a @ N(v), N(v) * N(w), atol=1e-12)
    np.testing.assert_allclose(
        np.sort_complex(N(np.linalg.eigvals(cr.tensor(a)))), np.sort_complex(N(w))
    )
    x = np_leaf(a)
    w = np.linalg.eigvals(x)
    # d tr(A) = the sum of the eigenvalues' changes: the gradient of sum(real(w)) is I.
    (g,) = grad(cr.sum(cr.real(w)), x)
    np.testing.assert_allclose(N(g), np.eye(2), atol=1e-12)


def test_may_share_memory_and_shares_memory_see_the_tensors_values():
    a = np.arange(4.0)
    t = cr.asarray(a)
    assert np.may_share_memory(t, a) and np.shares_memory(t, a)
    assert not np.may_share_memory(cr.asarray(t, copy=True), a)
    assert not np.shares_memory(np_leaf(a), a)


def test_numpy_creation_casting_and_index_functions_dispatch():
    x = np_leaf([[0.2, 0.7], [0.9, 0.1]])
    for out, expected in [
        (np.zeros_like(x), np.zeros((2, 2))),
        (np.ones_like(x, dtype=np.float32), np.ones((2, 2), np.float32)),
        (np.full_like(x, 2.0), np.full((2, 2), 2.0)),
        (np.astype(x, np.float32), N(x).astype(np.float32)),
    ]:
        assert out.__class__ is cr.Tensor
        assert N(out).dtype == expected.dtype
        np.testing.assert_array_equal(N(out), expected)
    assert np.empty_like(x).shape == (2, 2)
    for rows, cols in (np.nonzero(x > 0.5), np.where(x > 0.5)):
        assert (N(rows).tolist(), N(cols).tolist()) == ([0, 1], [1, 0])
    with pytest.raises(ValueError, match="both or neither"):
        np.where(x > 0.5, x)


def test_numpy_dtype_arguments_give_results_of_that_dtype():
    x = np_leaf(values((2, 3)))
    for out in (np.sum(x, dtype=np.float32), np.mean(x, 0, np.float32), np.std(x, dtype="f4")):
        assert out.dtype == cr.float32 and out.requires_grad
        (g,) = grad(cr.sum(out), x)
        assert g.dtype == cr.float64


def test_numpy_unique_dispatches_with_its_flags():
    a = np.array([3.0, 1.0, 3.0, 2.0, 1.0, 3.0])
    x = np_leaf(a)
    np.testing.assert_array_equal(np.sort(N(np.unique(x))), [1.0, 2.0, 3.0])
    values_, counts = np.unique(x, return_counts=True)
    assert dict(zip(N(values_), N(counts))) == {1.0: 2, 2.0: 1, 3.0: 3}
    values_, index, inverse = np.unique(x, return_index=True, return_inverse=True)
    np.testing.assert_array_equal(a[N(index)], N(values_))
    np.testing.assert_array_equal(N(values_)[N(inverse)], a)


@pytest.mark.parametrize(
    "call, what",
    [
        (lambda x: np.lexsort(x), "numpy.lexsort"),
        (lambda x: np.polyfit(x[0], x[1], 1), "numpy.polyfit"),
        (lambda x: np.unwrap(x), "numpy.unwrap"),
    ],
)
def test_numpy_functions_chainrule_lacks_raise_type_error(call, what):
    with pytest.raises(TypeError, match=f"chainrule does not implement {what} for Tensors") as e:
        call(np_leaf(values((2, 2))))
    assert "convert with .numpy() (this drops the graph)" in str(e.value)


@pytest.mark.parametrize(
    "call, argument",
    [
        (lambda x: np.sum(x, where=np.ones((2, 2), dtype=bool)), "where"),
        (lambda x: np.sum(x, initial=1.0), "initial"),
        (lambda x: np.reshape(x, (4,), order="F"), "order"),
        (lambda x: np.concatenate([x, x], dtype=np.float32), "dtype"),
        (lambda x: np.clip(x, 0.3, 0.6, casting="unsafe"), "casting"),
        (lambda x: np.round(x, 2), "decimals"),
        (lambda x: np.unique(x, axis=0), "axis"),
        (lambda x: np.cov(x, fweights=[1, 2]), "fweights"),
        (lambda x: np.vstack([x, x], casting="no"), "casting"),
    ],
)
def test_numpy_arguments_chainrule_lacks_raise_type_error(call, argument):
    with pytest.raises(TypeError, match=f"with argument {argument} for Tensors"):
        call(np_leaf(values((2, 2))))


def test_the_tables_name_numpys_own_ufuncs_and_functions():
    for name in UFUNCS:
        assert isinstance(getattr(np, name), np.ufunc) and getattr(np, name).__name__ == name
    for name in VALUE_FUNCTIONS:
        fn = getattr(np, name)
        assert (fn.__module__, fn.__name__) == ("numpy", name)
    for module, table in TABLES.items():
        namespace = importlib.import_module(module)
        for name, (_, takes) in table.items():
            fn = getattr(namespace, name)
            assert (fn.__module__, fn.__name__) == (module, name)
            params = inspect.signature(fn).parameters
            if not any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
                assert takes <= set(params), name


def test_numpy_functions_are_looked_up_when_called(monkeypatch):
    x = np_leaf(values((2, 3)))
    monkeypatch.delattr(cr._namespace, "flip")
    with pytest.raises(TypeError, match="numpy.flip for Tensors; it needs chainrule.flip"):
        np.flip(x)
    monkeypatch.setattr(cr._namespace, "tile", lambda x, reps: ("chainrule's tile", reps))
    assert np.tile(x, 2) == ("chainrule's tile", (2,))


def test_predicates_and_shapes_are_computed_on_the_values():
    a = values((2, 3))
    x = np_leaf(a)
    assert np.allclose(x, a) and np.array_equal(x, a) and np.array_equiv(x, a)
    assert isinstance(np.isclose(x, a), np.ndarray)
    assert (np.shape(x), np.ndim(x), np.size(x), np.size(x, 1)) == ((2, 3), 2, 6, 3)
    assert np.result_type(x, np.float32) == np.float64
    assert x.requires_grad and x.grad is None


def test_other_libraries_array_function_is_left_to_them():
    class Other:
        def __array_function__(self, func, types, args, kwargs):
            return NotImplemented

    with pytest.raises(TypeError, match="no implementation found for 'numpy.concatenate'"):
        np.concatenate([np_leaf([1.0]), Other()])


# ----------------------------------------------------------------------------- Array API


def test_array_namespace_is_chainrule_for_the_latest_version():
    t = T([1.0, 2.0])
    assert cr.__array_api_version__ == "2025.12"
    assert t.__array_namespace__() is cr
    assert t.__array_namespace__(api_version="2025.12") is cr
    with pytest.raises(ValueError, match="2099.12"):
        t.__array_namespace__(api_version="2099.12")


@pytest.mark.parametrize("version", ["2021.12", "2022.12", "2023.12", "2024.12"])
def test_array_namespace_of_an_earlier_version_returns_lists_where_it_did(version):
    t = T([1.0, 2.0])
    xp = t.__array_namespace__(api_version=version)
    assert xp is t.__array_namespace__(api_version=version)
    assert (xp.__name__, xp.__array_api_version__) == ("chainrule", version)
    assert type(xp.broadcast_arrays(t, T([[1.0], [2.0]]))) is list
    assert type(xp.meshgrid(t, t, indexing="ij")) is list
    assert type(xp.__array_namespace_info__().devices()) is list
    # Everything else is chainrule's own, and still differentiable.
    assert xp.sin is cr.sin and xp.linalg is cr.linalg and xp.float32 == cr.float32
    x = T([0.5, 1.0], requires_grad=True)
    (g,) = grad(cr.sum(xp.broadcast_arrays(x, T([[1.0], [2.0]]))[0]), x)
    np.testing.assert_array_equal(N(g), [2.0, 2.0])


@fails_on("dask", reason="Dask arrays have no DLPack interface")
def test_dlpack_round_trip_with_numpy():
    t = T([1.0, 2.0, 3.0])
    a = np.from_dlpack(t)
    np.testing.assert_array_equal(a, [1.0, 2.0, 3.0])
    assert t.__dlpack_device__() == t._data.__dlpack_device__()
    b = np.arange(4.0)
    u = cr.from_dlpack(b)
    assert u.__class__ is cr.Tensor and u._xp is BACKEND and not u.requires_grad
    b[0] = 7.0
    if LIBRARY == "jax":  # JAX shares a buffer aligned as XLA needs it, else copies
        assert N(u).tolist() in ([7.0, 1.0, 2.0, 3.0], [0.0, 1.0, 2.0, 3.0])
    else:
        np.testing.assert_array_equal(N(u), [7.0, 1.0, 2.0, 3.0])  # shared, not copied
    v = cr.from_dlpack(b, copy=True)
    b[0] = 0.0
    np.testing.assert_array_equal(N(v), [7.0, 1.0, 2.0, 3.0])
    w = cr.from_dlpack(t)
    assert w.__class__ is cr.Tensor
    np.testing.assert_array_equal(N(w), [1.0, 2.0, 3.0])


@fails_on("dask", reason="Dask arrays have no DLPack interface")
def test_dlpack_refuses_tensors_that_require_grad_as_pytorch():
    x = T([1.0, 2.0], requires_grad=True)
    message = "Can't export tensors that require gradient, use tensor.detach()"
    for export in (np.from_dlpack, cr.from_dlpack, lambda t: t.__dlpack__()):
        with pytest.raises(RuntimeError, match=message):
            export(x)
        with pytest.raises(RuntimeError, match=message):
            export(x * 2)
    np.testing.assert_array_equal(np.from_dlpack(x.detach()), [1.0, 2.0])


def test_to_device_on_the_same_device_returns_the_tensor_itself():
    x = T([1.0, 2.0], requires_grad=True)
    y = x.to_device(x.device)
    assert y is x
    (g,) = grad(cr.sum(y * 3.0), x)
    np.testing.assert_array_equal(N(g), [3.0, 3.0])


def test_to_device_rejects_an_unknown_device():
    with pytest.raises(ValueError):
        T([1.0]).to_device("no such device")


def test_to_device_moves_values_but_not_yet_gradients():
    xps = pytest.importorskip("array_api_strict")
    other = xps.Device("device1")
    t = cr.asarray(xps.asarray([1.0, 2.0]))
    moved = t.to_device(other)
    assert moved.device == other and t.device != other
    np.testing.assert_array_equal(N(moved), [1.0, 2.0])
    x = t.requires_grad_()
    with pytest.raises(NotImplementedError, match="move tensor.detach"):
        x.to_device(other)
    with cr.no_grad():
        assert x.to_device(other).device == other


@pytest.mark.parametrize("library", ["numpy", "array_api_strict", "dask", "jax", "torch"])
def test_array_is_the_wrapped_array_and_asarray_wraps_it_back_without_copy(library):
    module = {"dask": "dask.array", "jax": "jax.numpy"}.get(library, library)
    xp = pytest.importorskip(module)
    a = xp.asarray(np.arange(3.0, dtype=np.float32))  # float32: JAX's default without x64
    for copy in (None, False):
        t = cr.asarray(a, copy=copy)
        assert t.array is a
    leaf = cr.asarray(a, requires_grad=True)
    assert leaf.array is a and leaf.requires_grad
    y = leaf * 2
    assert type(y.array) is type(a) and type(y.detach().array) is type(a)
    assert cr.asarray(a, copy=True).array is not a


def test_array_is_refused_inside_vmap_and_compile():
    with pytest.raises(RuntimeError, match="vmap: a tensor's .array"):
        cr.func.vmap(lambda x: x.array)(cr.ones((3, 2)))
    with pytest.raises(cr.ConcretizationError, match=".array"):
        cr.compile(lambda x: x * float(x.array[0]))(cr.ones(3))


def test_asarray_makes_numpy_subclasses_plain_arrays_as_numpy_does():
    for a in (np.matrix([[1.0, 2.0]]), np.ma.masked_array([1.0, 2.0], mask=[False, True])):
        t = cr.asarray(a)
        assert type(t.array) is np.ndarray
        np.testing.assert_array_equal(t.array, np.asarray(a))
