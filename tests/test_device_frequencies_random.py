"""`device=` of fft.fftfreq / fft.rfftfreq and of chainrule.random's functions: the values are
made in the library that owns the device, on that device, as the creation functions make them
(a device string such as "cpu" stays with the default backend)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import _backend
from conftest import N

MODULES = {"jax": "jax.numpy"}
# Libraries whose device object names them (NumPy's device is the string "cpu").
OWNING = ["array_api_strict", "jax", "torch"]


def _device_of(library):
    """A device of `library` (its second one where it has several: array-api-strict's)."""
    xp = pytest.importorskip(MODULES.get(library, library))
    if library == "array_api_strict":
        return xp.Device("device1")
    return xp.asarray([0.0]).device


def _library(t):
    return _backend.library(_backend.namespace(t.array))


FREQUENCIES = {
    "fftfreq": (lambda **kw: cr.fft.fftfreq(4, d=0.5, **kw), np.fft.fftfreq(4, d=0.5)),
    "rfftfreq": (lambda **kw: cr.fft.rfftfreq(5, **kw), np.fft.rfftfreq(5)),
}


@pytest.mark.parametrize("name", FREQUENCIES)
@pytest.mark.parametrize("library", OWNING)
def test_fft_frequencies_on_a_device_are_in_the_devices_library(library, name):
    device = _device_of(library)
    make, expected = FREQUENCIES[name]
    out = make(device=device, dtype=cr.float32)
    assert _library(out) == library and out.device == device
    assert out.dtype == cr.float32
    np.testing.assert_allclose(N(out), expected, rtol=1e-7)


@pytest.mark.parametrize("name", FREQUENCIES)
def test_fft_frequencies_take_the_default_dtype_without_one(name):
    make, expected = FREQUENCIES[name]
    before = cr.get_default_dtype()
    cr.set_default_dtype(cr.float32)
    try:
        out = make()
    finally:
        cr.set_default_dtype(before)
    assert out.dtype == cr.float32
    np.testing.assert_allclose(N(out), expected, rtol=1e-7)


DRAWS = {
    "rand": lambda g, d: g.rand(3, dtype=cr.float32, device=d),
    "randn": lambda g, d: g.randn(2, 2, dtype=cr.float32, device=d),
    "uniform": lambda g, d: g.uniform(-1.0, 2.0, (3,), dtype=cr.float32, device=d),
    "normal": lambda g, d: g.normal(1.0, 3.0, (3,), dtype=cr.float32, device=d),
    "randint": lambda g, d: g.randint(0, 10, (4,), device=d),
    "permutation": lambda g, d: g.permutation(5, device=d),
}


@pytest.mark.filterwarnings("ignore:Explicitly requested dtype int64")  # JAX without 64 bits
@pytest.mark.parametrize("name", DRAWS)
@pytest.mark.parametrize("library", OWNING)
def test_random_draws_on_a_device_are_the_same_draw_in_the_devices_library(library, name):
    device = _device_of(library)
    draw = DRAWS[name]
    here = draw(cr.random.Generator(7, xp=np), None)
    there = draw(cr.random.Generator(7, xp=np), device)
    assert _library(there) == library and there.device == device
    np.testing.assert_allclose(N(there), N(here), rtol=1e-6)


@pytest.mark.parametrize("library", OWNING)
def test_module_level_random_functions_take_a_device(library):
    device = _device_of(library)
    out = cr.random.rand(2, dtype=cr.float32, device=device, generator=cr.random.Generator(0))
    assert _library(out) == library and out.device == device
