"""The kernels behind chainrule.special, by SciPy's names: the library's own (torch.special,
jax.scipy.special), or SciPy's through NumPy (exchanged by DLPack, Dask's block by block)."""

from __future__ import annotations

from importlib import import_module

import numpy as np

from ._namespaces import library

_SPECIAL_NAMES = {
    "torch": {"j0": "bessel_j0", "j1": "bessel_j1"},
    "jax": {},
}
_SPECIAL_MODULES = {"torch": "torch.special", "jax": "jax.scipy.special"}
# chainrule's kernel names that are not SciPy's: Riemann's zeta is SciPy's zeta of one
# argument (PyTorch and JAX have no kernel of it: SciPy's through NumPy).
_SCIPY_NAMES = {"riemann_zeta": "zeta"}
_PY_SCALARS = (bool, int, float, complex)
_special_kernels: dict = {}


def special_function(xp, name: str):
    """The kernel of special function `name` (SciPy's name) for arrays of namespace `xp`:
    the library's own, or a namespace's `special_kernel` (vmap's batches them), or SciPy's
    through NumPy where the library has none (by DLPack, for arrays on the CPU; Dask's block
    by block, lazily); ImportError naming SciPy where it is needed and missing,
    NotImplementedError for other libraries."""
    key = (id(xp), name)
    fn = _special_kernels.get(key)
    if fn is not None:
        return fn
    own = getattr(xp, "special_kernel", None)
    lib = library(xp)
    if own is not None:
        fn = own(name)
    elif lib == "array_api_strict":
        fn = _through_numpy(xp, _scipy_special(name))
    elif lib == "dask":
        fn = _blockwise(xp, _scipy_special(name))
    elif lib == "numpy":
        fn = _scipy_special(name)
    elif lib in _SPECIAL_MODULES:
        module = import_module(_SPECIAL_MODULES[lib])
        fn = getattr(module, _SPECIAL_NAMES[lib].get(name, name), None)
        if fn is None:  # SciPy's, for arrays on the CPU
            fn = _through_numpy(xp, _scipy_special(name))
    else:
        raise NotImplementedError(
            f"chainrule.special.{name}: no kernel for {lib} arrays (chainrule uses SciPy's for "
            "NumPy, array-api-strict and Dask, torch.special's and jax.scipy.special's)"
        )
    _special_kernels[key] = fn
    return fn


def _scipy_special(name: str):
    try:
        module = import_module("scipy.special")
    except ImportError as e:
        raise ImportError(
            f"chainrule.special.{name} on NumPy arrays needs SciPy, which is not installed: "
            "pip install scipy"
        ) from e
    return getattr(module, _SCIPY_NAMES.get(name, name))


def _through_numpy(xp, fn):
    """fn (SciPy's, on NumPy arrays) on arrays of xp, exchanged by DLPack."""

    def call(*args):
        return xp.asarray(
            fn(*(a if a.__class__ in _PY_SCALARS else np.from_dlpack(a) for a in args))
        )

    return call


def _blockwise(xp, fn):
    """fn (SciPy's, elementwise) on Dask arrays: block by block, lazily, after broadcasting."""
    dask_array = import_module("dask.array")

    def call(*args):
        arrays = [a for a in args if a.__class__ not in _PY_SCALARS]
        shaped = iter(dask_array.broadcast_arrays(*arrays))
        args = [a if a.__class__ in _PY_SCALARS else next(shaped) for a in args]
        dtype = np.result_type(*(a.dtype for a in arrays), np.float32)
        return dask_array.map_blocks(fn, *args, dtype=dtype)

    return call
