"""Tensors on a lazy library (Dask): the Dask collection protocol, so that `dask.compute`,
`dask.persist` and `dask.visualize` take tensors as they take Dask arrays, and
`Tensor.compute` / `Tensor.persist`. A tensor of any other library is no Dask collection
(its `__dask_graph__()` is None), and `compute` / `persist` return it as it is."""

from __future__ import annotations

from typing import Any

from . import _backend
from ._tensor import Tensor

__all__ = ["DASK_PROTOCOL", "SMALL_STEP_BYTES", "compute", "persist", "settle"]


def compute(self: Tensor, **kwargs: Any) -> Tensor:
    """The values computed, as a tensor of the library of the chunks (NumPy for most Dask
    arrays) without history: the same as `dask.compute(t)[0]`. `kwargs` go to Dask (e.g.
    `scheduler=`). A tensor of a library that is not lazy is returned as it is."""
    if not _backend.is_lazy(self._data):
        return self
    return _wrap(self._data.compute(**kwargs))


def persist(self: Tensor, **kwargs: Any) -> Tensor:
    """The same tensor with its values computed and kept by the scheduler (on a cluster's
    workers), so later operations start from them instead of recomputing its task graph: the
    same as `dask.persist(t)[0]`. Its place in the graph stays: a result keeps its grad_fn
    (gradients flow on to the history it came from), a leaf is a new leaf with the same
    requires_grad. A tensor of a library that is not lazy is returned as it is."""
    if not _backend.is_lazy(self._data):
        return self
    return _rebuilt(self._data.persist(**kwargs), self)


# Optimizer steps settle parameters, gradients and state whose arrays hold this many bytes at
# most by computing them here (one round trip, and the values at hand); larger ones stay on the
# workers, persisted.
SMALL_STEP_BYTES = 1 << 20


def settle(tensors: list[Tensor]) -> None:
    """Give the tensors on a lazy library their values computed, in place (one computation
    for all): same values, so no version bump, and graphs that saved the old arrays stay
    valid; their next operations start from the values instead of the whole task graph."""
    lazy = [t for t in tensors if _backend.is_lazy(t._data)]
    if lazy:
        for t, a in zip(lazy, _backend.settle([t._data for t in lazy], SMALL_STEP_BYTES)):
            t._data = a


def _wrap(a: Any) -> Tensor:
    """A tensor without history of computed values (NumPy's scalars made 0-d arrays)."""
    xp = _backend.namespace(a)
    return Tensor(_backend.normalize(a, xp), xp, None)


def _rebuilt(a: Any, like: Tensor) -> Tensor:
    """A tensor of the persisted array `a` in `like`'s place in the graph."""
    e = like._edge
    if e is None or like.is_leaf:
        t = Tensor(a, like._xp, None)
        if e is not None:
            t.requires_grad_(True)
        return t
    return Tensor(a, like._xp, e)


# ----------------------------------------------------------------------------- the protocol
# Each method hands on to the wrapped Dask array; dask.compute's results and dask.persist's
# come back as tensors (the finalize step of a computation runs on a worker: workers need
# chainrule installed, as they need xarray for its objects).


def _graph(self: Tensor) -> Any:
    a = self._data
    return a.__dask_graph__() if _backend.is_lazy(a) else None


def _keys(self: Tensor) -> Any:
    return self._data.__dask_keys__()


def _layers(self: Tensor) -> Any:
    return self._data.__dask_layers__()


def _tokenize(self: Tensor) -> Any:
    return ("chainrule.Tensor", _backend.dask_token(self._data))


def _postcompute(self: Tensor) -> tuple:
    finalize, args = self._data.__dask_postcompute__()
    return _finalized, (finalize, args)


def _finalized(results: Any, finalize: Any, args: tuple) -> Tensor:
    return _wrap(finalize(results, *args))


def _postpersist(self: Tensor) -> tuple:
    rebuild, args = self._data.__dask_postpersist__()
    return _persisted, (rebuild, args, self)


def _persisted(dsk: Any, rebuild: Any, args: tuple, like: Tensor, rename: Any = None) -> Tensor:
    return _rebuilt(rebuild(dsk, *args, rename=rename), like)


class _DaskArrays:
    """A class attribute that is Dask arrays' own (their default scheduler, their graph
    optimization), read when Dask asks for it: on the class or on a tensor alike, and the same
    object as the arrays', so that Dask sees one scheduler for tensors and arrays."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, cls: Any = None) -> Any:
        return _backend.dask_array_attribute(self.name)


DASK_PROTOCOL = {
    "__dask_graph__": _graph,
    "__dask_keys__": _keys,
    "__dask_layers__": _layers,
    "__dask_tokenize__": _tokenize,
    "__dask_postcompute__": _postcompute,
    "__dask_postpersist__": _postpersist,
    "__dask_scheduler__": _DaskArrays("__dask_scheduler__"),
    "__dask_optimize__": _DaskArrays("__dask_optimize__"),
}
