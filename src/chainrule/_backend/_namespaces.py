"""Which array library a value belongs to: its namespace (looked up once per array type, through
array-api-compat for libraries without `__array_namespace__`), the library's name, the default
backend that creation functions use, and the normalization of NumPy's scalars to 0-d arrays."""

from __future__ import annotations

import importlib
import os
import re

import numpy as np

ndarray = np.ndarray
_SCALAR_TYPES = (bool, int, float, complex)

# Backend namespaces by array type: namespace() is on the hot path.
_namespaces: dict[type, object] = {np.ndarray: np}

# The array types of libraries other than NumPy met so far: their operations return arrays,
# never NumPy's scalars, so normalize() leaves them as they are and the one- and two-input
# factories of _tensor skip the call (W1 on PyTorch storage: one call less per operation).
ARRAY_TYPES: set[type] = set()


def namespace(a) -> object:
    """The Array API namespace of raw array `a`."""
    t = a.__class__
    xp = _namespaces.get(t)
    if xp is None:
        xp = _lookup_namespace(a)
        register_namespace(t, xp)
    return xp


def register_namespace(t: type, xp) -> None:
    """Make `xp` the namespace of arrays of type `t` (vmap's Batched arrays)."""
    _namespaces[t] = xp
    if xp is not np and not issubclass(t, (np.generic, *_SCALAR_TYPES)):
        ARRAY_TYPES.add(t)


def _lookup_namespace(a):
    if isinstance(a, (np.ndarray, np.generic)):
        return np
    compat = compat_module()
    if compat is not None:
        # array-api-compat answers for every library, wrapping those without a namespace of
        # their own (PyTorch, Dask, CuPy) and passing the others' `__array_namespace__` on.
        try:
            return compat.array_namespace(a)
        except TypeError:
            pass
    else:
        get = getattr(a, "__array_namespace__", None)
        if get is not None:
            return get()
    kind = f"{type(a).__module__}.{type(a).__qualname__}"
    if compat is None and type(a).__module__.split(".")[0] in _NEEDS_COMPAT:
        raise TypeError(
            f"chainrule needs the package array-api-compat to wrap a {kind}: "
            "pip install array-api-compat (or chainrule[backends])"
        )
    raise TypeError(
        f"chainrule cannot wrap an object of type {kind}: "
        "it is not an array of a library implementing the Python Array API standard"
    )


# Array libraries whose arrays have no `__array_namespace__`: array-api-compat serves them.
_NEEDS_COMPAT = ("torch", "dask", "cupy", "sparse", "ndonnx")
_compat_found: list = []


def compat_module():
    """The array_api_compat module, or None when it is not installed (looked up once)."""
    if not _compat_found:
        try:
            import array_api_compat
        except ImportError:
            array_api_compat = None
        _compat_found.append(array_api_compat)
    return _compat_found[0]


# Libraries whose operations take NumPy's arrays as operands: Dask (wrapped lazily), JAX (its
# functions convert them). Array-API code written for one namespace makes constants with
# xp.asarray(numpy_array), which chainrule wraps as NumPy's (SciPy's differentiation weights).
_TAKE_NUMPYS = ("dask", "jax")


def joint_namespace(xp, other):
    """The namespace that holds the result of an operation on arrays of `xp` and `other`
    where one library takes the other's arrays as operands (Dask and JAX take NumPy's), else
    None."""
    libs = (library(xp), library(other))
    if "vmap" in libs:  # vmap's Batched arrays take those of the libraries below them
        return xp if libs[0] == "vmap" else other
    if libs[1] == "numpy" and libs[0] in _TAKE_NUMPYS:
        return xp
    if libs[0] == "numpy" and libs[1] in _TAKE_NUMPYS:
        return other
    return None


def is_array(a) -> bool:
    if a.__class__ in _namespaces:
        return True
    try:
        namespace(a)
    except TypeError:
        return False
    return not isinstance(a, _SCALAR_TYPES)


def normalize(out, xp):
    """NumPy returns scalars from 0-d arithmetic and reductions: make them 0-d arrays."""
    if isinstance(out, np.generic):
        return np.asarray(out)
    if xp is np and not isinstance(out, np.ndarray):
        return np.asarray(out)
    return out


def name_of(xp) -> str:
    name = getattr(xp, "__name__", None) or type(xp).__name__
    return name


def namespace_named(name: str):
    """The namespace whose name_of() is `name` (unpickling a tensor)."""
    return importlib.import_module(name)


# ----------------------------------------------------------------------------- default backend


# CHAINRULE_BACKEND names the library that creation functions and Python data use (NumPy
# unless set; the tests run under each): a short name below, or a namespace module's name.
BACKENDS = {
    "numpy": ("numpy", "numpy"),
    "array_api_strict": ("array_api_strict", "array-api-strict"),
    "dask": ("array_api_compat.dask.array", "dask[array] array-api-compat"),
    "jax": ("jax.numpy", "jax"),
    "torch": ("array_api_compat.torch", "torch array-api-compat"),
    "cupy": ("array_api_compat.cupy", "cupy array-api-compat"),
}


def load_backend(name: str):
    """The namespace module of backend `name` (a short name of BACKENDS or a module name).
    JAX gets 64-bit types enabled and PyTorch float64 as its default floating dtype, as NumPy
    and chainrule's own default have."""
    module, packages = BACKENDS.get(name, (name, name.split(".")[0]))
    if module.split(".")[0] == "jax":
        import jax

        jax.config.update("jax_enable_x64", True)
    if name == "torch":
        import torch

        torch.set_default_dtype(torch.float64)
    try:
        return importlib.import_module(module)
    except ImportError as e:
        raise ImportError(
            f"the chainrule backend {name!r} needs the module {module}: pip install {packages}"
        ) from e


_DEFAULT = load_backend(os.environ.get("CHAINRULE_BACKEND", "numpy"))


def default_namespace():
    """The namespace that creation functions use for new arrays."""
    return _DEFAULT


# The library that owns a device object, by the top module of the device's type: PyTorch's
# torch.device, JAX's Device (jaxlib's), array-api-strict's Device, CuPy's cuda Device.
_DEVICE_OWNERS = {
    "torch": "torch",
    "jaxlib": "jax",
    "jax": "jax",
    "array_api_strict": "array_api_strict",
    "cupy": "cupy",
}
_device_namespaces: dict[type, object] = {str: None}


def device_namespace(device):
    """The namespace of the library that owns `device`, or None for a device that names no
    one library (a string: NumPy's "cpu", which Dask's arrays report too). Looked up once per
    device type; the library is imported already, since one of its devices exists."""
    t = device.__class__
    if t in _device_namespaces:
        return _device_namespaces[t]
    owner = _DEVICE_OWNERS.get(t.__module__.split(".")[0])
    xp = None if owner is None else importlib.import_module(BACKENDS[owner][0])
    _device_namespaces[t] = xp
    return xp


# ----------------------------------------------------------------------------- library names

# First match wins: "jax.numpy" is JAX, "array_api_compat.dask.array" Dask; "vmap" is
# chainrule's own namespace of batched arrays (_batching), whose gaps are filled here too.
_KNOWN = ("vmap", "dask", "jax", "torch", "cupy", "array_api_strict", "numpy")
_libraries: dict[int, str] = {id(np): "numpy"}


def library(xp) -> str:
    """The array library behind namespace `xp` (a backend's, or the namespace a rule runs
    with, named after it): one of _KNOWN, else its top module's name."""
    lib = _libraries.get(id(xp))
    if lib is None:
        name = name_of(xp)
        found = [k for k in _KNOWN if re.search(rf"\b{k}\b", name)]
        lib = found[0] if found else name.split(".")[0]
        _libraries[id(xp)] = lib
    return lib
