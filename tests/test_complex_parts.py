"""Complex values built from real and imaginary parts keep each part as it is, infinities and
NaNs included: an optimizer's step of a complex parameter (its real pairs made complex again)
and writes through a complex tensor's `.real` / `.imag` (remade from the parts where arrays
are immutable: JAX, Dask). `re + 1j * im` would turn (1, inf) into (nan, inf)."""

import math

import numpy as np

import chainrule as cr
from chainrule import _backend, optim
from chainrule.optim.optimizer import _from_pairs
from conftest import BACKEND, N, T

INF, NAN = math.inf, math.nan
RE = [INF, 1.0, NAN, 0.0, -0.0, 2.0]
IM = [0.0, INF, 0.0, NAN, -0.0, -INF]


def _same(actual, re, im):
    """Equal parts, NaN for NaN and the sign of each zero."""
    np.testing.assert_array_equal(actual.real, re)
    np.testing.assert_array_equal(actual.imag, im)
    np.testing.assert_array_equal(np.signbit(actual.real), np.signbit(re))
    np.testing.assert_array_equal(np.signbit(actual.imag), np.signbit(im))


def test_backend_complex_from_parts_keeps_infinite_and_nan_parts():
    re, im = BACKEND.asarray(np.array(RE)), BACKEND.asarray(np.array(IM))
    out = _backend.to_numpy(_backend.complex_from_parts(BACKEND, re, im))
    _same(out, RE, IM)


def test_from_pairs_keeps_infinite_and_nan_parts():
    out = _from_pairs(T(np.stack([RE, IM], axis=-1)))
    assert out.dtype == cr.complex128
    _same(N(out), RE, IM)


def test_from_pairs_of_float32_pairs_is_complex64():
    out = _from_pairs(T(np.array([[1.0, INF]], dtype=np.float32)))
    assert out.dtype == cr.complex64
    _same(N(out), [1.0], [INF])


def _complex(re, im):
    out = np.empty(len(IM), dtype=complex)
    out.real, out.imag = re, im
    return out


def test_a_write_through_imag_keeps_the_real_part():
    z = T(_complex(RE, 0.0))
    z.imag[...] = T(IM)
    _same(N(z), RE, IM)


def test_a_write_through_real_keeps_the_imaginary_part():
    z = T(_complex(0.0, IM))
    z.real[...] = T(RE)
    _same(N(z), RE, IM)


def test_an_adam_step_of_a_complex_parameter_keeps_an_infinite_imaginary_part():
    z = T(np.array([1.0 + 0j]), requires_grad=True)
    with cr.no_grad():
        z.imag[...] = INF
    z.grad = T(np.array([0.5 + 0.5j]))
    optim.Adam([z], lr=0.1).step()
    # Adam's first step moves each finite part by lr against its gradient's sign.
    np.testing.assert_allclose(N(z).real, [0.9], rtol=1e-7)
    assert N(z).imag[0] == INF
