"""Memory and devices, library by library: whether an array may be written in place or owns its
memory, whether two arrays share it, how a library's views alias (memory or values), writable
diagonal views on NumPy, and moving values to NumPy or to another device."""

from __future__ import annotations

import numpy as np

from ._namespaces import compat_module, library, namespace


def writable(a) -> bool:
    """Whether `a` may be written in place (NumPy, array-api-strict: the writeable flag;
    PyTorch: no element stands in two places, as in a broadcast view; others: assumed, as
    their in-place operators return a new array where they can't write)."""
    if a.__class__ is np.ndarray:
        return a.flags.writeable
    lib = library(namespace(a))
    if lib == "torch":
        return all(step != 0 or n < 2 for step, n in zip(a.stride(), a.shape))
    if lib == "array_api_strict":
        return a._array.flags.writeable
    return True


def owns_memory(a) -> bool:
    """Whether `a` is a writable array that is no view of another: a NumPy array, or a
    PyTorch tensor (no base, no lazy conjugate or negation); unknown: False."""
    if a.__class__ is np.ndarray:
        return a.base is None and a.flags.writeable
    if library(namespace(a)) == "torch":
        return a._base is None and not (a.is_conj() or a.is_neg())
    return False


# How a library's arrays alias (see aliasing()), by namespace.
_aliasing: dict[int, str | None] = {}


def aliasing(xp) -> str | None:
    """How arrays of `xp` share memory: "memory" where views share it and are written in place
    (NumPy, PyTorch, CuPy, array-api-strict), "values" where arrays are immutable (JAX) or
    lazy (Dask: a view is a task graph of its own), and for vmap's batched arrays (a write
    gives a new batch, from which the views' values are remade)."""
    kind = _aliasing.get(id(xp), False)
    if kind is False:
        lib = library(xp)
        kind = "values" if lib in ("jax", "dask", "vmap") else "memory"
        _aliasing[id(xp)] = kind
    return kind


def layout_copies(path: tuple, shape: tuple, complex_values: bool, rule, p) -> bool:
    """Whether view rule `rule` (parameters p; a reshape), applied to a view made by the view
    steps `path` from a new array of `shape`, copies where arrays have a layout (NumPy's and
    PyTorch's reshape of a transposed or strided view): replayed on an empty NumPy array, for
    libraries without one (JAX, Dask), where any reshape could be a view. Dask's axes of
    unknown length: False."""
    if not all(isinstance(n, int) for n in shape):
        return False
    a = np.empty(shape, dtype=np.complex128 if complex_values else np.float64)
    for step, q, _ in path:
        a = step.fwd(np, a, q)
    out = rule.fwd(np, a, p)
    return out.size != 0 and not np.may_share_memory(out, a)


def shares_memory(a, b) -> bool:
    """Whether arrays a and b may share memory (a view op's result against its input: NumPy's
    reshape copies where no view can be had). Unknown libraries: assumed."""
    if a.__class__ is np.ndarray and b.__class__ is np.ndarray:
        return np.may_share_memory(a, b)
    lib = library(namespace(a))
    if lib == "array_api_strict":
        return np.may_share_memory(a._array, b._array)
    if lib == "torch":
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()
    return True


def diagonal(xp, x, offset: int):
    """The diagonal `offset` of each matrix of x: a view, writable where x is (NumPy's is
    read-only: made here from x's strides, as PyTorch's, which a write through may reach)."""
    d = xp.linalg.diagonal(x, offset=offset)
    strict = library(xp) == "array_api_strict"
    a = x._array if strict else x
    if a.__class__ is np.ndarray and not writable(d) and a.flags.writeable:
        corner = a[..., max(0, -offset) :, max(0, offset) :]
        step = a.strides[-2] + a.strides[-1]
        d = np.lib.stride_tricks.as_strided(corner, d.shape, a.strides[:-2] + (step,))
        if strict:
            d = xp.asarray(d, copy=False)
    return d


def to_numpy(a):
    """A NumPy array of a's values: copied to the host from a device, computed for Dask (the
    user asked), with PyTorch's lazy conjugate and negative bits resolved."""
    if isinstance(a, np.ndarray):
        return a
    lib = library(namespace(a))
    if lib == "torch":
        return a.detach().resolve_conj().resolve_neg().cpu().numpy()
    if lib == "cupy":
        return a.get()
    if lib == "dask":
        return np.asarray(a.compute())
    try:
        return np.from_dlpack(a)
    except (TypeError, AttributeError, BufferError, RuntimeError):
        return np.asarray(a)


def to_device(a, device, stream=None):
    """a on `device`: the array's own to_device, or array-api-compat's where it has none."""
    kwargs = {} if stream is None else {"stream": stream}
    if hasattr(a, "to_device"):
        return a.to_device(device, **kwargs)
    try:
        return compat_module().to_device(a, device, **kwargs)
    except RuntimeError as e:  # PyTorch's word for a device it does not know
        raise ValueError(str(e)) from e


def device(a):
    """a's device: its own `device` attribute, or array-api-compat's answer."""
    d = getattr(a, "device", None)
    if d is None and compat_module() is not None:
        return compat_module().device(a)
    return "cpu" if d is None else d
