"""scipy.signal on chainrule tensors (SCIPY_ARRAY_API=1): the common filters give NumPy's
values; those SciPy computes with FFTs in the tensors' namespace (fftconvolve, oaconvolve,
convolve and correlate with method="fft", hilbert, resample) differentiate, first and second
order, against finite differences; those it computes in compiled code (lfilter, filtfilt,
sosfilt, direct convolution, welch, ...) refuse a tensor that requires grad. SciPy refuses
to mix NumPy arrays with tensors in one call: filter coefficients go in as tensors."""

import numpy as np
import pytest
import scipy.signal as signal

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import BACKEND, N

pytestmark = pytest.mark.skipif(
    BACKEND is not np, reason="SciPy mixes NumPy-backed tensors into its computations"
)

RNG = np.random.default_rng(2)
X = RNG.normal(size=24)
B, A = signal.butter(2, 0.3)
SOS = signal.butter(2, 0.3, output="sos")
H = np.array([0.2, 0.5, 0.3])
WEIGHTS = RNG.normal(size=64)


def weighted(fn):
    def scalar(x):
        out = fn(x)
        return cr.sum(out * cr.asarray(WEIGHTS[: out.size].reshape(out.shape)))

    return scalar


def coefficients(*arrays):
    """The arrays as tensors when x is one (SciPy takes one namespace per call)."""
    return lambda x: [cr.asarray(a) if x.__class__ is cr.Tensor else a for a in arrays]


FILTERS = {
    "lfilter": lambda x: signal.lfilter(*coefficients(B, A)(x), x),
    "filtfilt": lambda x: signal.filtfilt(*coefficients(B, A)(x), x),
    "sosfilt": lambda x: signal.sosfilt(*coefficients(SOS)(x), x),
    "sosfiltfilt": lambda x: signal.sosfiltfilt(*coefficients(SOS)(x), x),
    "convolve": lambda x: signal.convolve(x, *coefficients(H)(x)),
    "correlate": lambda x: signal.correlate(x, *coefficients(H)(x)),
    "fftconvolve": lambda x: signal.fftconvolve(x, *coefficients(H)(x)),
    "fftconvolve same": lambda x: signal.fftconvolve(x, *coefficients(H)(x), mode="same"),
    "oaconvolve": lambda x: signal.oaconvolve(x, *coefficients(H)(x)),
    "convolve fft": lambda x: signal.convolve(x, *coefficients(H)(x), method="fft"),
    "correlate fft": lambda x: signal.correlate(x, *coefficients(H)(x), method="fft"),
    "hilbert envelope": lambda x: abs(signal.hilbert(x)),
    "resample": lambda x: signal.resample(x, 16),
    "welch": lambda x: signal.welch(x, nperseg=8)[1],
    "savgol_filter": lambda x: signal.savgol_filter(x, 7, 2),
    "detrend": lambda x: signal.detrend(x),
}
DIFFERENTIABLE = (
    "fftconvolve", "fftconvolve same", "oaconvolve", "convolve fft", "correlate fft",
    "hilbert envelope", "resample",
)  # fmt: skip


@pytest.mark.parametrize("name", FILTERS)
def test_scipy_signal_on_tensors_gives_numpys_values(name):
    fn = FILTERS[name]
    out = fn(cr.asarray(X))
    # SciPy's spectral estimates convert their input and return NumPy arrays.
    assert out.__class__ is (np.ndarray if name == "welch" else cr.Tensor)
    np.testing.assert_allclose(N(cr.asarray(out)), fn(X), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_scipy_signal_through_ffts_differentiates(name):
    fn = FILTERS[name]
    x = cr.tensor(X, requires_grad=True)
    assert fn(x).requires_grad
    assert gradcheck(weighted(fn), (x,))
    assert gradgradcheck(weighted(fn), (x,))


@pytest.mark.parametrize("name", sorted(set(FILTERS) - set(DIFFERENTIABLE)))
def test_scipy_signal_in_compiled_code_refuses_a_tensor_that_requires_grad(name):
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        FILTERS[name](cr.tensor(X, requires_grad=True))


def test_scipy_signal_refuses_numpy_coefficients_with_a_tensor():
    # SciPy's rule (the same for any other library's arrays): one namespace per call.
    with pytest.raises(TypeError, match="Multiple namespaces for array inputs"):
        signal.lfilter(B, A, cr.asarray(X))
