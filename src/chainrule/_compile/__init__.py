"""chainrule.compile: trace a function once per kind of input, then replay what it did (the
forward kernels, the backward walks, gradient accumulation, in-place updates) as straight-line
code on raw arrays, without Tensor or Node objects. Semantics as jax.jit: see `compile`."""

from __future__ import annotations

import collections
import functools
import gc
import warnings
from collections.abc import Callable
from typing import Any

from .. import _backend, _lazy
from .._mode import grad_mode, set_feature
from .._node import node_of
from .._tensor import Tensor, alias_group
from ._guards import alias_guard, path_guard
from ._program import RETRACE, Replay, Rerun
from ._trace import ConcretizationError, Tracer, Unsupported, _edge_kind

__all__ = ["CompileWarning", "CompiledFunction", "ConcretizationError", "compile"]

np = _backend.np


class CompileWarning(UserWarning):
    """chainrule.compile runs a function eagerly (it can't replay it), or traces it again
    and again. The message names the reason; turn it into an error to make sure a function
    replays:

    >>> import warnings
    >>> import chainrule as cr
    >>> @cr.compile
    ... def f(x):
    ...     return cr.sum(x**2)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error", cr.CompileWarning)
    ...     print(f(cr.ones(3)), f(cr.ones(3)))
    tensor(3.) tensor(3.)"""


# ----------------------------------------------------------------------------- pytrees
# Arguments and results are trees of tuples, lists, dicts and namedtuples; anything else is a
# leaf. A tree is flattened, without recursion, into its leaves and a hashable description.


def _flatten(tree) -> tuple[list, tuple]:
    leaves: list = []
    spec: list = []
    stack = [tree]
    while stack:
        node = stack.pop()
        c = node.__class__
        if c is tuple or c is list:
            spec.append((c, len(node)))
            stack.extend(reversed(node))
        elif c is dict:
            keys = tuple(node)
            spec.append((dict, keys))
            stack.extend(node[k] for k in reversed(keys))
        elif isinstance(node, tuple) and hasattr(c, "_fields"):
            spec.append((c, len(node)))
            stack.extend(reversed(node))
        else:
            spec.append(None)
            leaves.append(node)
    return leaves, tuple(spec)


def _unflatten(spec: tuple, leaves: list):
    """The tree of `spec` with `leaves` (the inverse of _flatten)."""
    built: list = []
    it = reversed(leaves)
    for entry in reversed(spec):
        if entry is None:
            built.append(next(it))
            continue
        c, n = entry
        if c is dict:
            items = [built.pop() for _ in n]
            built.append(dict(zip(n, items)))
            continue
        items = [built.pop() for _ in range(n)]
        if c is tuple:
            built.append(tuple(items))
        elif c is list:
            built.append(items)
        else:
            built.append(c(*items))
    return built[0]


def _leaf_key(x) -> tuple:
    """What a trace depends on in an argument: a tensor's shape, dtype, library, device and
    whether it needs grad; an array's type, shape, dtype and device; any other value itself.
    (The device: a replay's constants and new arrays are made on the trace's.)"""
    if x.__class__ is Tensor:
        d = x._data
        return (0, d.shape, d.dtype, id(x._xp), _edge_kind(x._edge), getattr(d, "device", None))
    if _backend.is_array(x) and not isinstance(x, np.generic):
        return (1, type(x), tuple(x.shape), x.dtype, getattr(x, "device", None))
    c = x.__class__
    if c is float:  # by its bits: -0.0 == 0.0 (and math.copysign tells them apart), nan != nan
        return (3, x.hex())
    if c is complex:
        return (4, x.real.hex(), x.imag.hex())
    try:
        hash(x)
    except TypeError:
        raise TypeError(
            f"chainrule.compile: an argument of type {type(x).__name__} is neither a tensor, "
            "an array, a tuple, list or dict of them, nor hashable: the trace is kept per "
            "value of such arguments"
        ) from None
    return (2, type(x), x)


def _static_key(item: tuple) -> tuple:
    """A static argument (name or position, value) as a key: a float by its bits."""
    v = item[1]
    c = v.__class__
    return (item[0], _leaf_key(v)) if c is float or c is complex else item


def _aliasing(leaves: list) -> tuple | None:
    """Which tensor and array arguments hold one array (the same tensor passed twice, or a
    tensor and its detach()), and, for libraries whose arrays are not written in place
    (JAX's, Dask's), which tensors share an alias group with another live tensor (views of
    one base, a view of a tensor from outside): a write reaches the group's other members
    through the group, which a replay does not follow (NumPy's and PyTorch's replays write
    the memory those share). None when none do, else per leaf (the position of the first
    that holds its array, of the first in its alias group there). A trace made with
    distinct arrays reads and writes them as distinct: these are other kinds of input."""
    ids = []
    grouped = False
    xp = values = None  # the last tensor's namespace, and whether its arrays are "values"
    for x in leaves:
        if x.__class__ is Tensor:
            ids.append(id(x._data))
            if x._xp is not xp:
                xp = x._xp
                values = _backend.aliasing(xp) == "values"
            if values and not grouped:
                grouped = _shared_group(x) is not None
        elif _backend.is_array(x):
            ids.append(id(x))
    if not grouped and len(set(ids)) == len(ids):
        return None
    arrays = [
        x._data if x.__class__ is Tensor else x if _backend.is_array(x) else None for x in leaves
    ]
    groups = [
        _shared_group(x)
        if x.__class__ is Tensor and _backend.aliasing(x._xp) == "values"
        else None
        for x in leaves
    ]  # fmt: skip
    first: dict[int, int] = {}
    first_group: dict[int, int] = {}
    return tuple(
        (
            -1 if a is None else first.setdefault(id(a), i),
            -1 if g is None else first_group.setdefault(id(g), i),
        )
        for a, g, i in zip(arrays, groups, range(len(leaves)))
    )


def _shared_group(t: Tensor):
    """t's alias group where another live tensor is in it (a view, a base, a detach()), else
    None."""
    group = alias_group(t)
    return group if group is not None and len(group.live()) > 1 else None


def _watching(watched: dict, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    """The arguments a traced function is called with: each raw NumPy array in them as the
    WatchedArray that `watched` maps its id to (the containers that hold one are new ones)."""

    def swap(tree):
        leaves, spec = _flatten(tree)
        if not any(id(x) in watched for x in leaves):
            return tree
        return _unflatten(spec, [watched.get(id(x), x) for x in leaves])

    return tuple(map(swap, args)), {k: swap(v) for k, v in kwargs.items()}


# ----------------------------------------------------------------------------- compiled functions


class _Call:
    """A replayed call whose outputs have a live graph, kept as the parameters of the node
    they share: what running it again eagerly needs, for create_graph through those outputs
    (see _program.Rerun)."""

    __slots__ = ("fn", "args", "kwargs", "leaves", "tensors", "versions")

    @staticmethod
    def attach(rerun: Rerun, out, fn: Callable, args: tuple, kwargs: dict, leaves: list) -> None:
        call = _Call()
        call.fn, call.args, call.kwargs, call.leaves = fn, args, kwargs, leaves
        call.tensors, call.versions = rerun.snapshot(leaves)
        node_of(_flatten(out)[0][rerun.positions[0]]._edge).params = call

    def outputs(self) -> list:
        """The flattened outputs of the call run again (eagerly: its operations recorded)."""
        return _flatten(self.fn(*self.args, **self.kwargs))[0]


_EAGER = object()  # a cache entry: this signature runs eagerly
_RETRIES = 3  # traces of one signature that may fail for a transient reason
_PROGRAMS = 4  # programs kept per signature


class CompiledFunction:
    """`fn` compiled: traced once per signature (see `compile`), then replayed."""

    def __init__(
        self,
        fn: Callable,
        static_argnums: tuple[int, ...] = (),
        static_argnames: tuple[str, ...] = (),
        cache_size: int = 8,
    ) -> None:
        self.fn = fn
        self.static_argnums = static_argnums
        self.static_argnames = static_argnames
        self.cache_size = cache_size
        self._cache: collections.OrderedDict = collections.OrderedDict()
        self.traces = 0  # how many times fn was traced
        self._warned: set[str] = set()
        self._failures: dict = {}  # signature -> traces in a row that could not be replayed
        functools.update_wrapper(self, fn)

    def __get__(self, obj, objtype=None):
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if grad_mode.extended:
            # Inside another trace (its operations are recorded there), or with a feature on
            # that a replay does not have (detect_anomaly): eagerly.
            return self.fn(*args, **kwargs)
        key, leaves = self._signature(args, kwargs)
        entry = self._cache.get(key)
        if entry is not None:
            # The programs of this signature, latest first: one whose guards hold replays.
            for program in entry:
                if program is _EAGER:
                    return self.fn(*args, **kwargs)
                out = program(leaves)
                if out is not RETRACE:
                    if program.rerun is not None:
                        _Call.attach(program.rerun, out, self.fn, args, kwargs, leaves)
                    if program.settles:
                        _settle(program.settles, _flatten(out)[0])
                    return out
        return self._trace(key, leaves, args, kwargs)

    def _signature(self, args: tuple, kwargs: dict) -> tuple[tuple, list]:
        static = self.static_argnums
        statics = []
        traced = []
        for i, a in enumerate(args):
            if i in static or i - len(args) in static:
                statics.append((i, a))
            else:
                traced.append(a)
        named = []
        for name in sorted(kwargs):
            if name in self.static_argnames:
                statics.append((name, kwargs[name]))
            else:
                named.append((name, kwargs[name]))
        leaves, spec = _flatten((traced, named))
        key = (
            spec, tuple(map(_leaf_key, leaves)), tuple(map(_static_key, statics)),
            grad_mode.enabled, _aliasing(leaves),
        )  # fmt: skip
        try:
            hash(key)
        except TypeError:
            raise TypeError(
                "chainrule.compile: static arguments must be hashable (the trace is kept per "
                "value of them)"
            ) from None
        return key, leaves

    def _trace(self, key: tuple, leaves: list, args: tuple, kwargs: dict) -> Any:
        self.traces += 1
        if self.traces == self.cache_size + 1:
            self._warn(
                f"{self._name()} was traced {self.traces} times: its arguments keep changing "
                "shapes, dtypes, requires_grad or static values (each new kind is traced "
                f"again; the {self.cache_size} latest are kept)"
            )
        # The cyclic GC is paused while tracing, as the engine does for its walk: the trace
        # keeps every value and node of the call alive until its end.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            tracer = Tracer(leaves)
            if tracer.watched:
                args, kwargs = _watching(tracer.watched, args, kwargs)
            set_feature("tracer", tracer)
            try:
                result = self.fn(*args, **kwargs)
            finally:
                if grad_mode.tracer is tracer:
                    set_feature("tracer", None)
            outputs, spec = _flatten(result)
            if tracer.watched:
                # A raw NumPy argument returned is the argument; an array NumPy made of one
                # (a.T, a * 2 after the trace was abandoned) a plain ndarray.
                outputs = [_backend.unwatched(o) for o in outputs]
            del result, args, kwargs
            try:
                recording = tracer.finish(outputs)
                refs = {
                    i: ext.ref for i, ext in enumerate(recording.externals)
                    if recording.persistent[i]
                }  # fmt: skip
                # Tensor arguments the function could also read from outside: see path_guard.
                args = tuple(i for i, x in enumerate(leaves) if x.__class__ is Tensor)
                where = path_guard(self.fn, leaves, refs, args) if refs or args else None
                if where is not None:
                    recording.guards.append(where)
                shared = alias_guard(leaves, key[-1], refs)
                if shared is not None:
                    recording.guards.append(shared)
                program = Replay(recording, spec, _unflatten)
                self._failures.pop(key, None)
            except Unsupported as e:
                # What only a first call does (state made and kept outside) is traced again
                # on the next calls, a few times.
                failures = self._failures[key] = self._failures.get(key, 0) + 1
                if e.transient and failures < _RETRIES:
                    program = None
                else:
                    self._warn(f"{self._name()} runs eagerly: {e}")
                    program = _EAGER
            settles = tracer.settles
            del tracer
        finally:
            if gc_was_enabled:
                gc.enable()
        if settles:
            _settle(settles, outputs)
        if program is not None:
            # A signature keeps a few programs, for Python values that change back and forth
            # (train() and eval()); one that can't be replayed runs eagerly once the others'
            # guards fail.
            programs = self._cache.get(key, [])
            if program is _EAGER:
                self._cache[key] = [*programs, _EAGER]
            else:
                self._cache[key] = [program, *programs[: _PROGRAMS - 1]]
            self._cache.move_to_end(key)
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return _unflatten(spec, outputs)

    def _name(self) -> str:
        return f"chainrule.compile({getattr(self.fn, '__qualname__', repr(self.fn))})"

    def _warn(self, message: str) -> None:
        if message not in self._warned:
            self._warned.add(message)
            warnings.warn(message, CompileWarning, stacklevel=4)

    def source(self) -> list[str]:
        """The generated source of each cached trace (for inspection)."""
        return [p.source() for ps in self._cache.values() for p in ps if p is not _EAGER]


def _settle(settles: list, outputs: list) -> None:
    """After a call that ran an optimizer step on a lazy library (Dask): its parameters,
    gradients and state, with the call's tensor outputs (the loss), settled in one
    computation as the eager step settles them, so that the next replay's task graph starts
    from their values (left lazy, call k would carry the graphs of all k calls)."""
    tensors = [t for tensors in settles for t in tensors()]
    if not tensors:  # (nothing stepped, as eagerly; or only Python state set again, which
        return  # settles nothing: see Tracer.set_mode)
    tensors += [t for t in outputs if t.__class__ is Tensor]
    _lazy.settle([t for t in tensors if t.__class__ is Tensor])


def compile(  # noqa: A001 - chainrule.compile, as torch.compile and jax.jit's role
    fn: Callable | None = None,
    *,
    static_argnums: int | tuple[int, ...] = (),
    static_argnames: str | tuple[str, ...] = (),
    cache_size: int = 8,
) -> Any:
    """Compile `fn` (a decorator, with or without arguments): its first call for a kind of
    input runs it eagerly while recording every operation, backward walk, gradient
    accumulation and in-place update; later calls with inputs of the same kind replay the
    recording as straight-line code on raw arrays.

    Semantics as jax.jit: a trace must not depend on tensor values (bool(t), float(t),
    t.item(), t.numpy() raise ConcretizationError); Python values (numbers, other objects,
    static arguments) are constants of the trace, and Python side effects happen only while
    tracing. A kind of input is: the tree of arguments; each tensor's shape, dtype, library
    and whether it requires grad (a new kind is traced again); which arguments hold the same
    array; each other value (and the arguments named by `static_argnums` /
    `static_argnames`), by equality (floats by their bits). Copies and conversions of
    arguments are made at each call. Tensors the function reads from outside (parameters)
    are read at each call, where it finds them (one replaced there traces again); an
    optimizer's hyperparameters and step count are read at each call; Module.training is
    checked. What it can't replay runs eagerly, with a CompileWarning saying why (see
    docs/compile.md).

    :param fn: the function; without it, `compile(...)` returns a decorator.
    :param static_argnums: positions of arguments whose values (not only their kind) key the
        trace, as constants of it.
    :param static_argnames: the same, by keyword name.
    :param cache_size: how many kinds of input keep their trace (the latest ones).
    :returns: a `CompiledFunction`, called as `fn`.

    >>> import chainrule as cr
    >>> @cr.compile
    ... def f(x):
    ...     return cr.sum(cr.sin(x) ** 2)
    >>> f(cr.zeros(3))  # traces
    tensor(0.)
    >>> round(f(cr.ones(3) * 0.5).item(), 6)  # replays
    0.689547"""
    if isinstance(static_argnums, int):
        static_argnums = (static_argnums,)
    if isinstance(static_argnames, str):
        static_argnames = (static_argnames,)

    def wrap(f: Callable) -> CompiledFunction:
        return CompiledFunction(f, tuple(static_argnums), tuple(static_argnames), cache_size)

    return wrap if fn is None else wrap(fn)
