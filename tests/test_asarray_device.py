"""`device=` of asarray and the creation functions puts the values in the library that owns the
device (PyTorch's, JAX's, array-api-strict's device objects), whatever the input's library or
the default backend: as scikit-learn's `xp.asarray(numpy_array, device=device(A))` needs for
a tensor A on PyTorch or JAX storage (PCA's randomized solver)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import _backend
from conftest import LIBRARY, N, T

# float32 values: JAX's default without 64-bit types (on when JAX is the backend under test).
VALUES = np.array([0.0, 1.0, 2.5], dtype=np.float32)
MODULES = {"dask": "dask.array", "jax": "jax.numpy"}
LIBRARIES = ["numpy", "array_api_strict", "dask", "jax", "torch"]
# Libraries whose device object names them (NumPy's and Dask's device is the string "cpu").
OWNING = ["array_api_strict", "jax", "torch"]


def _stored_in(library):
    """A tensor on `library`'s storage."""
    xp = pytest.importorskip(MODULES.get(library, library))
    return cr.asarray(xp.asarray(VALUES))


def _library(t):
    return _backend.library(_backend.namespace(t.array))


@pytest.mark.parametrize("library", LIBRARIES)
def test_asarray_of_a_numpy_array_on_a_tensors_device_is_in_that_tensors_library(library):
    t = _stored_in(library)
    out = cr.asarray(VALUES, device=t.device)
    # "cpu" names no one library: a NumPy array stays NumPy's (Dask takes it as an operand).
    assert _library(out) == ("numpy" if library == "dask" else library)
    assert out.device == t.device
    np.testing.assert_array_equal(N(out), VALUES)


@pytest.mark.parametrize("library", OWNING)
def test_asarray_of_python_data_on_a_device_is_in_the_devices_library(library):
    t = _stored_in(library)
    out = cr.asarray([0.0, 1.0, 2.5], device=t.device, dtype=cr.float32)
    assert _library(out) == library and out.device == t.device
    np.testing.assert_array_equal(N(out), VALUES)


# The libraries' own words on each other's arrays: PyTorch shares JAX's read-only buffer, JAX
# compares array-api-strict's dtype with NumPy's.
@pytest.mark.filterwarnings("ignore:The given buffer is not writable")
@pytest.mark.filterwarnings("ignore:You are comparing a array_api_strict dtype")
@pytest.mark.parametrize("library", OWNING)
def test_asarray_of_another_librarys_array_on_a_device_is_in_the_devices_library(library):
    t = _stored_in(library)
    other = "numpy" if LIBRARY == library else LIBRARY  # the backend under test, or NumPy
    source = _stored_in(other).array if other != "dask" else np.asarray(VALUES)
    out = cr.asarray(source, device=t.device, requires_grad=True)
    assert _library(out) == library and out.requires_grad
    np.testing.assert_array_equal(N(out.detach()), VALUES)


CREATIONS = {
    "zeros": (lambda d: cr.zeros((3,), device=d), np.zeros(3)),
    "ones": (lambda d: cr.ones(2, 2, device=d), np.ones((2, 2))),
    "empty": (lambda d: cr.empty((2,), device=d), None),
    "full": (lambda d: cr.full((2,), 1.5, device=d), np.full(2, 1.5)),
    "arange": (lambda d: cr.arange(4, device=d), np.arange(4)),
    "linspace": (lambda d: cr.linspace(0, 1, 3, device=d), np.linspace(0, 1, 3)),
    "eye": (lambda d: cr.eye(2, 3, k=1, device=d), np.eye(2, 3, k=1)),
}


@pytest.mark.parametrize("name", CREATIONS)
@pytest.mark.parametrize("library", OWNING)
def test_creation_functions_on_a_device_make_values_in_the_devices_library(library, name):
    t = _stored_in(library)
    make, expected = CREATIONS[name]
    out = make(t.device)
    assert _library(out) == library and out.device == t.device
    if expected is None:
        assert tuple(out.shape) == (2,)
    else:
        np.testing.assert_array_equal(N(out), expected)


def test_a_device_of_no_library_is_left_to_the_library_that_takes_the_data():
    with pytest.raises(ValueError):
        cr.asarray(VALUES, device="no such device")


@pytest.mark.filterwarnings("ignore:Array API does not support LU factorization")
def test_sklearn_randomized_pca_on_the_backend_under_test_matches_numpy():
    sklearn = pytest.importorskip("sklearn")
    decomposition = pytest.importorskip("sklearn.decomposition")
    x = np.random.default_rng(0).normal(size=(12, 4))

    def pca():
        return decomposition.PCA(n_components=2, svd_solver="randomized", random_state=0)

    expected = pca().fit_transform(x)
    with sklearn.config_context(array_api_dispatch=True):
        out = pca().fit_transform(T(x))
    assert isinstance(out, cr.Tensor)
    np.testing.assert_allclose(N(out), expected, atol=1e-12)


@pytest.mark.filterwarnings("ignore:The given buffer is not writable")
@pytest.mark.filterwarnings("ignore:You are comparing a array_api_strict dtype")
@pytest.mark.parametrize("library", OWNING)
def test_asarray_of_a_tensor_on_another_librarys_device_moves_its_values(library):
    t = _stored_in(library)
    source = T(VALUES)
    out = cr.asarray(source, device=t.device, dtype=cr.float64 if library == "torch" else None)
    assert _library(out) == library and out.device == t.device
    np.testing.assert_array_equal(N(out), VALUES)
    assert cr.asarray(t, device=t.device) is t  # already there: the tensor itself


@pytest.mark.parametrize("library", OWNING)
def test_asarray_refuses_to_move_a_tensor_that_requires_grad_to_another_library(library):
    t = _stored_in(library)
    if LIBRARY == library:
        pytest.skip("the backend under test is that library: nothing moves")
    x = T(VALUES, requires_grad=True)
    with pytest.raises(NotImplementedError, match="detach"):
        cr.asarray(x, device=t.device)
    with cr.no_grad():
        assert _library(cr.asarray(x, device=t.device)) == library


@pytest.mark.filterwarnings("ignore:The given buffer is not writable")
@pytest.mark.filterwarnings("ignore:You are comparing a array_api_strict dtype")
@pytest.mark.parametrize("library", OWNING)
def test_compiled_asarray_onto_another_librarys_device_moves_each_calls_values(library):
    device = _stored_in(library).device
    f = cr.compile(lambda x: cr.asarray(x, device=device) * 2)
    for values in (VALUES, VALUES + 1):
        out = f(T(values))
        assert _library(out) == library
        np.testing.assert_array_equal(N(out), values * 2)


def test_asarray_onto_another_device_of_the_same_library_is_to_device():
    xps = pytest.importorskip("array_api_strict")
    other = xps.Device("device1")
    t = cr.asarray(xps.asarray(VALUES))
    moved = cr.asarray(t, device=other)
    assert moved.device == other and t.device != other
    np.testing.assert_array_equal(N(moved), VALUES)
    with pytest.raises(NotImplementedError, match="detach"):
        cr.asarray(t.requires_grad_(), device=other)


LIKE = {
    "zeros_like": (lambda x, d: cr.zeros_like(x, device=d), np.zeros(3)),
    "ones_like": (lambda x, d: cr.ones_like(x, device=d), np.ones(3)),
    "empty_like": (lambda x, d: cr.empty_like(x, device=d), None),
    "full_like": (lambda x, d: cr.full_like(x, 2.5, device=d), np.full(3, 2.5)),
}


@pytest.mark.parametrize("name", LIKE)
@pytest.mark.parametrize("library", OWNING)
def test_like_functions_on_another_librarys_device_make_values_there(library, name):
    t = _stored_in(library)
    make, expected = LIKE[name]
    x = cr.asarray(VALUES) if LIBRARY == library else T(VALUES)  # of another library if any
    out = make(x, t.device)
    assert _library(out) == library and out.device == t.device and out.dtype == x.dtype
    assert tuple(out.shape) == (3,)
    if expected is not None:
        np.testing.assert_array_equal(N(out), expected)


def test_asarray_of_python_floats_on_a_torch_device_takes_the_default_floating_dtype():
    # PyTorch's own default is float32 (unless PyTorch storage is the backend under test):
    # asarray follows chainrule's default, as the creation functions do.
    device = _stored_in("torch").device
    before = cr.get_default_dtype()
    try:
        for default, complex_default in ((cr.float64, cr.complex128), (cr.float32, cr.complex64)):
            cr.set_default_dtype(default)
            assert cr.asarray([1.5], device=device).dtype == default
            assert cr.asarray(2.5, device=device).dtype == default
            assert cr.asarray([1.5 + 1j], device=device).dtype == complex_default
            assert cr.zeros(1, device=device).dtype == default
            assert cr.asarray([1], device=device).dtype == cr.int64
            assert cr.asarray([True], device=device).dtype == cr.bool
            assert cr.asarray([1.5], device=device, dtype=cr.float32).dtype == cr.float32
    finally:
        cr.set_default_dtype(before)
