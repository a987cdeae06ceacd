"""chainrule.fft: every transform's values, dtypes and shapes against NumPy and array_api_strict on
the same data in each normalisation mode; the sample frequencies; fftshift and ifftshift against
NumPy with first and second derivatives; transforms of tensors that require grad (their
gradients: tests/test_complex.py)."""

import array_api_strict as xs
import numpy as np
import pytest

import chainrule as cr
from chainrule._backend import from_backend_dtype
from conftest import BACKEND, N, T, fails_on
from helpers import assert_values, check_grads, leaf

RNG = np.random.default_rng(0)
REAL = RNG.standard_normal((3, 4))
COMPLEX = REAL + 1j * RNG.standard_normal((3, 4))
NORMS = ["backward", "ortho", "forward"]

# name: (takes complex input, keyword arguments tried); s always comes with its axes here, so
# that NumPy and array_api_strict read it as chainrule does.
ONE_AXIS = [{}, {"n": 6}, {"n": 3, "axis": 0}, {"axis": -2}]
MANY_AXES = [{}, {"axes": (0,)}, {"s": (2, 5), "axes": (1, 0)}, {"s": (4, 3), "axes": (-2, -1)}]
TRANSFORMS = {
    "fft": (True, ONE_AXIS),
    "ifft": (True, ONE_AXIS),
    "fftn": (True, MANY_AXES),
    "ifftn": (True, MANY_AXES),
    "rfft": (False, ONE_AXIS),
    "irfft": (True, ONE_AXIS),
    "rfftn": (False, MANY_AXES),
    "irfftn": (True, MANY_AXES),
    "hfft": (True, ONE_AXIS),
    "ihfft": (False, ONE_AXIS),
}
CASES = [
    (name, k, norm)
    for name, (_, kwargs) in TRANSFORMS.items()
    for k in range(len(kwargs))
    for norm in NORMS
]
# The precision pairs the standard asks for: input dtype, complex and real of its precision.
PRECISIONS = {"64": ("float64", "complex128"), "32": ("float32", "complex64")}


def _input(name, bits):
    real_dtype, complex_dtype = PRECISIONS[bits]
    if TRANSFORMS[name][0]:
        return COMPLEX.astype(complex_dtype)
    return REAL.astype(real_dtype)


@pytest.mark.parametrize("bits", PRECISIONS)
@pytest.mark.parametrize(("name", "k", "norm"), CASES)
def test_transform_matches_numpy_and_array_api_strict(name, k, norm, bits):
    a = _input(name, bits)
    kwargs = dict(TRANSFORMS[name][1][k], norm=norm)
    out = getattr(cr.fft, name)(T(a), **kwargs)
    strict = getattr(xs.fft, name)(xs.asarray(a), **kwargs)
    expected = getattr(np.fft, name)(a, **kwargs)
    assert out.dtype == from_backend_dtype(strict.dtype)
    assert out.dtype == expected.dtype
    assert not out.requires_grad
    tol = 1e-12 if bits == "64" else 2e-5
    assert_values(out, np.asarray(strict), rtol=tol, atol=tol)
    assert_values(out, expected, rtol=tol, atol=tol)


@pytest.mark.parametrize("name", ["fft", "ifft", "fftn", "ifftn", "irfft", "irfftn", "hfft"])
@pytest.mark.parametrize("bits", PRECISIONS)
def test_a_real_input_is_taken_as_complex_of_its_precision(name, bits):
    real_dtype, complex_dtype = PRECISIONS[bits]
    a = REAL.astype(real_dtype)
    fn = getattr(cr.fft, name)
    out = fn(T(a))
    assert_values(out, N(fn(T(a.astype(complex_dtype)))), rtol=0, atol=0)
    assert out.dtype == getattr(np.fft, name)(a).dtype


def test_s_without_axes_transforms_the_last_axes():
    x = T(COMPLEX)
    assert_values(cr.fft.fftn(x, s=(5,)), np.fft.fftn(COMPLEX, s=(5,), axes=(1,)))
    assert_values(cr.fft.ifftn(x, s=(2, 2)), np.fft.ifftn(COMPLEX, s=(2, 2), axes=(0, 1)))


def test_a_size_of_minus_one_uses_the_whole_input_along_its_axis():
    x, r, both = T(COMPLEX), T(REAL), (0, 1)
    assert_values(cr.fft.fftn(x, s=(-1, 6), axes=both), np.fft.fftn(COMPLEX, s=(3, 6), axes=both))
    assert_values(cr.fft.rfftn(r, s=(2, -1), axes=both), np.fft.rfftn(REAL, s=(2, 4), axes=both))
    # irfftn: all 4 inputs of the half spectrum make 2 * (4 - 1) outputs, as with s None.
    out = cr.fft.irfftn(x, s=(-1, -1), axes=both)
    assert_values(out, np.fft.irfftn(COMPLEX, s=(3, 6), axes=both))
    assert_values(out, N(cr.fft.irfftn(x)))


def test_round_trips_give_back_the_input():
    x, r = T(COMPLEX), T(REAL)
    assert_values(cr.fft.ifft(cr.fft.fft(x)), COMPLEX)
    assert_values(cr.fft.ifftn(cr.fft.fftn(x, norm="ortho"), norm="ortho"), COMPLEX)
    assert_values(cr.fft.irfft(cr.fft.rfft(r), n=4), REAL)
    assert_values(cr.fft.irfftn(cr.fft.rfftn(r), s=(3, 4), axes=(0, 1)), REAL)
    assert_values(cr.fft.hfft(cr.fft.ihfft(r), n=4), REAL)


@fails_on("torch", reason="PyTorch's MKL FFT rejects irfft with n=1")
def test_transforms_of_tiny_and_zero_dimensional_inputs():
    one = T([2.0 + 1.0j])
    assert_values(cr.fft.fft(one), [2.0 + 1.0j])
    assert_values(cr.fft.rfft(T([3.0])), [3.0 + 0.0j])
    assert_values(cr.fft.irfft(one, n=1), [2.0])
    assert_values(cr.fft.fftn(T(2.0 + 1.0j)), 2.0 + 1.0j)
    assert cr.fft.fft(T(np.ones((2, 0, 3), complex)), axis=0).shape == (2, 0, 3)


def test_invalid_arguments_are_rejected():
    with pytest.raises(ValueError, match="differ in length"):
        cr.fft.fftn(T(COMPLEX), s=(2, 2), axes=(0,))
    with pytest.raises(IndexError):
        cr.fft.fftn(T(COMPLEX), axes=(2,))
    with pytest.raises(ValueError):
        cr.fft.fft(T(COMPLEX), norm="sideways")


@pytest.mark.parametrize("name", list(TRANSFORMS))
def test_norm_none_is_the_default_as_numpy_and_pytorch_read_it(name):
    # NumPy's and PyTorch's transforms take norm=None for "backward"; it raised ValueError.
    x = T(COMPLEX if TRANSFORMS[name][0] else REAL)
    fn = getattr(cr.fft, name)
    np.testing.assert_array_equal(N(fn(x, norm=None)), N(fn(x)))
    np.testing.assert_array_equal(N(np.fft.__dict__[name](x, norm=None)), N(fn(x)))


# ----------------------------------------------------------------------------- gradients


@pytest.mark.parametrize("name", TRANSFORMS)
def test_a_transform_of_an_input_that_requires_grad_records_the_same_values(name):
    fn = getattr(cr.fft, name)
    x = leaf(REAL)
    out = fn(x)
    assert out.requires_grad and out.grad_fn.name() == "FftBackward"
    assert_values(out, N(fn(x.detach())), rtol=0, atol=0)
    with cr.no_grad():
        assert not fn(x).requires_grad


@pytest.mark.parametrize("shape", [(1,), (5,), (4, 3), (2, 3, 1)])
@pytest.mark.parametrize("axes", [None, 0, -1, (0, -1)])
@pytest.mark.parametrize("name", ["fftshift", "ifftshift"])
def test_shifts_match_numpy_and_differentiate_twice(name, shape, axes):
    a = RNG.standard_normal(shape)
    fn = getattr(cr.fft, name)
    out = fn(T(a), axes=axes)
    assert_values(out, getattr(np.fft, name)(a, axes=axes), rtol=0, atol=0)
    assert_values(out, np.asarray(getattr(xs.fft, name)(xs.asarray(a), axes=axes)), rtol=0, atol=0)
    check_grads(lambda x: fn(x, axes=axes), leaf(a))


def test_shifts_undo_each_other_and_keep_dtypes():
    a = np.arange(15.0).reshape(3, 5)
    x = T(a)
    assert_values(cr.fft.ifftshift(cr.fft.fftshift(x)), a, rtol=0, atol=0)
    assert_values(cr.fft.fftshift(cr.fft.ifftshift(x, axes=1), axes=(1,)), a, rtol=0, atol=0)
    assert cr.fft.fftshift(T(a, "float32")).dtype == cr.float32
    assert cr.fft.ifftshift(T(COMPLEX)).dtype == cr.complex128
    assert_values(cr.fft.fftshift(T(COMPLEX)), np.fft.fftshift(COMPLEX), rtol=0, atol=0)
    assert_values(cr.fft.fftshift(T(7.0)), 7.0, rtol=0, atol=0)
    x = leaf(a)
    cr.sum(cr.fft.fftshift(x) * T(a)).backward()
    assert_values(x.grad, np.fft.ifftshift(a), rtol=0, atol=0)


# ----------------------------------------------------------------------------- frequencies


@pytest.mark.parametrize("n", [1, 4, 5])
@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
def test_frequencies_match_numpy_in_the_default_backend(name, n):
    out = getattr(cr.fft, name)(n, d=0.5)
    assert isinstance(out._data, type(BACKEND.asarray(0.0)))
    assert out.dtype == cr.float64
    assert not out.requires_grad
    assert_values(out, getattr(np.fft, name)(n, d=0.5))
    assert_values(out, np.asarray(getattr(xs.fft, name)(n, d=0.5)))
    small = getattr(cr.fft, name)(n, dtype=cr.float32)
    assert small.dtype == cr.float32
    assert_values(small, getattr(np.fft, name)(n).astype(np.float32))
    with pytest.raises(ValueError, match="real floating"):
        getattr(cr.fft, name)(n, dtype=cr.int64)


def test_fft_is_the_namespace_extension():
    assert T(REAL).__array_namespace__().fft is cr.fft
    assert sorted(cr.fft.__all__) == sorted(xs.fft.__all__)
