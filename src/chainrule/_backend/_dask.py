"""Dask, the lazy library: whether an array is lazy, computing or persisting a group of arrays
at once, Dask's token of an array's values, and what a lazy array is (its chunks, a summary
for repr) without computing it."""

from __future__ import annotations

from importlib import import_module

import numpy as np

from ._namespaces import library, namespace, ndarray


def is_lazy(a) -> bool:
    """Whether `a` is an array of a lazy library (Dask's): values computed only when asked."""
    return a.__class__ is not ndarray and library(namespace(a)) == "dask"


def settle(arrays: list, small: int) -> list:
    """Dask arrays with their values computed, by one call (the tasks they share run once):
    brought here and wrapped back in their chunks when together they hold at most `small`
    bytes, else persisted (on a cluster's workers, where a client is set) and waited for."""
    dask = import_module("dask")
    if sum(a.nbytes for a in arrays) <= small:
        from_array = import_module("dask.array").from_array
        values = dask.compute(*arrays)
        return [from_array(np.asarray(v), chunks=a.chunks) for v, a in zip(values, arrays)]
    arrays = list(dask.persist(*arrays))
    # Waiting keeps the next computation from being sent while this one runs: both would
    # share tasks, which Dask's fused graphs may give different specs (dask issue 9888).
    # Without a distributed client, persist has computed them already.
    try:
        import_module("distributed").wait(arrays)
    except (ImportError, ValueError):
        pass
    return arrays


def dask_token(a) -> str:
    """Dask's token of the values of `a` (its graph's name for a Dask array)."""
    if is_lazy(a):
        return a.__dask_tokenize__()
    return import_module("dask.base").tokenize(a)


def dask_array_attribute(name: str):
    """An attribute of Dask's array class (its default scheduler, its graph optimization);
    AttributeError where Dask is not installed (so that nothing takes a tensor for a Dask
    collection there)."""
    try:
        return getattr(import_module("dask.array").Array, name)
    except ImportError as e:
        raise AttributeError(f"{name}: Dask is not installed") from e


def layout(a):
    """How `a` is laid out where a gradient spread over its shape should follow it: a Dask
    array's chunks; None for every other library."""
    if a.__class__ is ndarray or library(namespace(a)) != "dask":
        return None
    return a.chunks


def lazy_summary(a) -> str | None:
    """What a lazy (Dask) array is without computing it: its library, shape, dtype and chunks
    (None for arrays of the other libraries, whose values are at hand)."""
    if a.__class__ is ndarray or library(namespace(a)) != "dask":
        return None
    chunks = ", ".join(_axis_chunks(c) for c in a.chunks)
    if len(a.chunks) == 1:
        chunks += ","
    return f"dask.array<shape={tuple(a.shape)}, dtype={a.dtype}, chunks=({chunks})>"


def _axis_chunks(sizes: tuple) -> str:
    """One axis's chunk sizes, short: (1000,) * 4 + (200,) for 4 chunks of 1000 and one of
    200; a long irregular axis by its ends and count."""
    first, n = sizes[0], len(sizes)
    body = sizes[:-1] if n > 1 and sizes[-1] != first else sizes
    if n > 2 and all(s == first for s in body):
        text = f"({first},) * {len(body)}"
        return text if body is sizes else f"{text} + ({sizes[-1]},)"
    if n <= 6:
        return repr(tuple(sizes))
    return f"({sizes[0]}, {sizes[1]}, ..., {sizes[-1]}) [{n} chunks]"
