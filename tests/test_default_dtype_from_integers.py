"""Integer and boolean tensors made floating by an operation alone (true division, a Python
float or complex operand, sqrt, exp, where with a float, a transform) give the default
floating dtype, as PyTorch's do: float32 after `set_default_dtype(float32)` (the dtypes
below are those torch 2 gives there), float64 otherwise on every backend (NumPy's sqrt of
int8 is float16, JAX's division of int32 float32). The values are those of the integers
cast first. Also: creation functions given a device of a library whose own default is
float32 (PyTorch's) take the default floating dtype."""

import numpy as np
import pytest

import chainrule as cr
from conftest import N, T, fails_on

STRICT = fails_on(
    "array_api_strict",
    reason="the standard leaves integers made floating undefined: array-api-strict refuses them",
)

# name: (the operation, NumPy's float64 values, the kind of result: 'f' real, 'c' complex)
CASES = {
    "int / int": (lambda: cr.arange(5) / 2, np.arange(5) / 2, "f"),
    "int * float": (lambda: cr.arange(5) * 1.5, np.arange(5) * 1.5, "f"),
    "float - int": (lambda: 0.5 - cr.arange(3), 0.5 - np.arange(3), "f"),
    "bool * float": (lambda: cr.asarray([True, False]) * 2.5, np.array([2.5, 0.0]), "f"),
    "int / int tensor": (
        lambda: cr.arange(4) / cr.arange(1, 5),
        np.arange(4) / np.arange(1, 5),
        "f",
    ),
    "int * complex": (lambda: cr.arange(3) * 1j, np.arange(3) * 1j, "c"),
    "sqrt of int": (lambda: cr.sqrt(cr.arange(4)), np.sqrt(np.arange(4)), "f"),
    "exp of int8": (lambda: cr.exp(cr.astype(cr.arange(3), cr.int8)), np.exp(np.arange(3.0)), "f"),
    "where int, float": (
        lambda: cr.where(cr.arange(3) > 0, cr.arange(3), 0.5),
        np.array([0.5, 1.0, 2.0]),
        "f",
    ),
}


@pytest.fixture
def float32_default():
    cr.set_default_dtype(cr.float32)
    try:
        yield
    finally:
        cr.set_default_dtype(cr.float64)


@STRICT
@pytest.mark.parametrize("name", CASES)
def test_integers_made_floating_take_the_default_dtype(name, float32_default):
    op, expected, kind = CASES[name]
    out = op()
    assert out.dtype == (cr.float32 if kind == "f" else cr.complex64)
    np.testing.assert_allclose(N(out), expected, rtol=1e-6)


@STRICT
@pytest.mark.parametrize("name", CASES)
def test_integers_made_floating_are_float64_by_default(name):
    op, expected, kind = CASES[name]
    out = op()
    assert out.dtype == (cr.float64 if kind == "f" else cr.complex128)
    np.testing.assert_allclose(N(out), expected, rtol=1e-15)


@STRICT
@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.bool_])
def test_small_integers_made_floating_are_float64_on_every_backend(dtype):
    # NumPy: float16 (int8, uint8, bool) and float32 (int16) for sqrt; JAX: float32 for all.
    a, b = np.array([1, 0, 1], dtype=dtype), np.array([2, 1, 2], dtype=dtype)
    assert cr.sqrt(T(a)).dtype == cr.float64
    q = T(a) / T(b)
    assert q.dtype == cr.float64
    np.testing.assert_array_equal(N(q), a.astype(np.float64) / b.astype(np.float64))


@STRICT
def test_a_compiled_function_replays_the_default_dtype(float32_default):
    w = T([1.0, 2.0, 3.0], dtype=np.float32, requires_grad=True)

    @cr.compile
    def f(a, w):
        return cr.sum((cr.sqrt(a) + a / 3) * w)

    for shift in range(3):
        a = cr.arange(1, 4) + shift
        w.grad = None
        out = f(a, w)
        out.backward()
        assert out.dtype == cr.float32 and w.grad.dtype == cr.float32
        a64 = np.arange(1, 4) + shift
        np.testing.assert_allclose(N(w.grad), np.sqrt(a64) + a64 / 3, rtol=1e-6)


def test_astype_keeps_the_dtype_it_names(float32_default):
    # astype names its result's dtype: integers are not cast to float32 on the way.
    big = 2**40 + 1
    out = cr.astype(cr.asarray([big]), cr.float64)
    assert out.dtype == cr.float64 and N(out)[0] == float(big)


def test_creation_on_a_pytorch_device_takes_the_default_dtype():
    torch = pytest.importorskip("torch")
    cpu = torch.device("cpu")
    for t in (cr.zeros(2, device=cpu), cr.ones(2, device=cpu), cr.full(2, 0.5, device=cpu)):
        assert t.dtype == cr.float64 and t.device == cpu


OWN_CASTS = {
    "fft of int": (lambda: cr.fft.fft(cr.arange(4)), np.fft.fft(np.arange(4)), "c"),
    "inv of int": (
        lambda: cr.linalg.inv(cr.asarray([[2, 0], [0, 4]])),
        np.linalg.inv([[2.0, 0.0], [0.0, 4.0]]),
        "f",
    ),
    "norm of int": (lambda: cr.linalg.vector_norm(cr.arange(3)), np.linalg.norm(np.arange(3)), "f"),
}


@pytest.mark.parametrize("name", OWN_CASTS)
def test_transforms_and_inverses_of_integers_take_the_default_dtype(name, float32_default):
    # chainrule casts integers itself there (NumPy's complex128 and float64 before).
    op, expected, kind = OWN_CASTS[name]
    out = op()
    assert out.dtype == (cr.float32 if kind == "f" else cr.complex64)
    np.testing.assert_allclose(N(out), expected, rtol=1e-6)
