"""backward and grad: the roots' gradients checked, one walk of the engine, then the gradients
summed into the leaves' `.grad` (backward) or returned (grad); `is_grads_batched` as one walk
at a vmap level. The walk itself is `_engine`'s."""

from __future__ import annotations

import threading
import warnings
import weakref
from collections.abc import Mapping, Sequence
from typing import Any, Literal, overload

from .. import _backend, _batching, _namespace, _rules
from .._node import ZERO, Port, node_of
from .._state import STATE
from .._tensor import Tensor, as_tensor, grad_mode
from . import _batched, graph
from ._engine import _root_grads, execute, runs_on_tensors, zeros_for

np = _backend.np

__all__ = ["backward", "grad"]

_Tensors = Tensor | Sequence[Tensor]
# Gradients given for outputs: a tensor, or per output a tensor or None (ones for a scalar).
_Grads = Tensor | Sequence[Tensor | None] | None


def _seq(x) -> tuple:
    if x is None:
        return ()
    if x.__class__ is Tensor:
        return (x,)
    return tuple(x)


def _inputs(inputs, fn: str) -> tuple:
    """`inputs` as a tuple, and its keys when it is a dict (as PyTorch, a dict of tensors such
    as dict(module.named_parameters()) stands for its values); a graph.GradientEdge stands
    for the tensor it was taken from."""
    if inputs.__class__ is dict:
        return tuple(inputs.values()), tuple(inputs)
    if isinstance(inputs, Mapping):
        raise TypeError(
            f"`inputs` argument to `{fn}()` must be a dict, not {type(inputs).__name__}. "
            "Other Mapping types are not supported."
        )
    if inputs.__class__ is graph.GradientEdge:
        inputs = (inputs,)
    found = tuple(
        graph.edge_input(t) if t.__class__ is graph.GradientEdge else t for t in _seq(inputs)
    )
    return found, None


_NO_RETAIN = "can't retain_grad on Tensor that has requires_grad=False"


def _targets(inputs, what: str, refusal: str):
    """The nodes of `inputs`, each one refused with `refusal` where it does not require
    grad (PyTorch's words differ between grad and backward: backward would retain_grad)."""
    for t in inputs:
        if t.__class__ is not Tensor:
            raise TypeError(f"{what} must be Tensors, got {type(t).__name__}")
        if t._edge is None:
            raise RuntimeError(refusal)
    return {node_of(t._edge) for t in inputs}


def _pick(captured, t: Tensor):
    e = t._edge
    if e.__class__ is Port:
        g = captured.get(e.node)
        return g if g is None or g is ZERO else g[e.index]
    return captured.get(e)


def backward(
    tensors: _Tensors,
    grad_tensors: _Grads = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    inputs: _Tensors | dict[str, Tensor] | None = None,
) -> None:
    """Sum the gradients of `tensors` (weighted by `grad_tensors`) into the `.grad` of the
    leaves that require grad, or only of `inputs` when given."""
    if inputs is not None:  # checked first, as PyTorch
        inputs = _inputs(inputs, "backward")[0]
        if not inputs:
            raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    tensors = _seq(tensors)
    grad_tensors = (None,) * len(tensors) if grad_tensors is None else _seq(grad_tensors)
    if retain_graph is None:
        retain_graph = create_graph
    on_tensors = runs_on_tensors(create_graph)
    roots = _root_grads(tensors, grad_tensors, on_tensors, "tensors")
    if not roots:
        return  # nothing to differentiate, as PyTorch
    targets = None
    if inputs is not None:
        targets = _targets(inputs, "inputs", _NO_RETAIN)
    stored = {id(g) for _, g in roots}

    def accumulate_now(node, g) -> None:
        # A leaf with post-accumulate-grad hooks gets its gradient as soon as it is ready.
        t = node.leaf()
        if t is None:
            return
        _check_shape(t, g)
        with _ACCUMULATE:
            _accumulate(t, g, on_tensors, stored)
        for hook in tuple(node.hooks.accumulated):
            hook(t)

    captured = execute(roots, targets, retain_graph, create_graph, tensors[0]._xp, accumulate_now)
    if inputs is None:
        pairs = [(node.leaf(), g) for node, g in captured.items()]
    else:
        pairs = [(t, _pick(captured, t)) for t in inputs]
    pairs = [
        (t, zeros_for(t, on_tensors) if g is ZERO else g)
        for t, g in pairs
        if t is not None and g is not None
    ]
    # Every gradient is computed and checked before any .grad changes: an error leaves them
    # all as they were. Accumulation itself cannot fail (a .grad that can't be written in
    # place is replaced), and holds a lock: backward calls in several threads add up exactly.
    for t, g in pairs:
        _check_shape(t, g)
    tracer = grad_mode.tracer if grad_mode.extended else None
    if tracer is not None:
        tracer.accumulating(pairs)
    with _ACCUMULATE:
        for t, g in pairs:
            _accumulate(t, g, on_tensors, stored)
    if tracer is not None:
        tracer.accumulated(pairs, roots, create_graph)


_ACCUMULATE = threading.Lock()


def _check_shape(t: Tensor, g) -> None:
    if tuple(g.shape) != t.shape:
        raise RuntimeError(
            f"the gradient computed for a tensor of shape {t.shape} has shape "
            f"{tuple(g.shape)}: a derivative rule returned a gradient of the wrong shape"
        )


# Tensor.grad_dtype, where set: id(leaf) -> (weak reference to it, backend dtype or None).
# Keyed by id: a tensor's == is elementwise, it can't be a dict key.
_GRAD_DTYPES: dict[int, tuple] = {}


def _grad_dtype_of(t: Tensor) -> Any:
    """The backend dtype t's gradient is cast to; None: it keeps its own."""
    entry = _GRAD_DTYPES.get(id(t)) if _GRAD_DTYPES else None
    if entry is None or entry[0]() is not t:
        return t._data.dtype
    return entry[1]


def get_grad_dtype(t: Tensor) -> Any:
    """Tensor.grad_dtype: the dtype a leaf's .grad is accumulated in (its own unless set;
    None: the gradient's)."""
    if not t.is_leaf:
        raise RuntimeError("grad_dtype can only be accessed on leaf tensors.")
    d = _grad_dtype_of(t)
    return None if d is None else _backend.from_backend_dtype(d)


def set_grad_dtype(t: Tensor, dtype: Any) -> None:
    """Set Tensor.grad_dtype: backward casts the gradients it accumulates into t.grad to
    `dtype` (None: keeps their dtype)."""
    if not t.is_leaf:
        raise RuntimeError("grad_dtype can only be set on leaf tensors.")
    d = None if dtype is None else _backend.to_backend_dtype(t._xp, dtype)
    key = id(t)
    _GRAD_DTYPES[key] = (weakref.ref(t, lambda _: _GRAD_DTYPES.pop(key, None)), d)


def _accumulate(t: Tensor, g, on_tensors: bool, stored: set) -> None:
    current = t.grad
    target = _grad_dtype_of(t) if _GRAD_DTYPES else t._data.dtype
    if on_tensors:
        if target is not None and g._data.dtype != target:
            g = _namespace.astype(g, _backend.from_backend_dtype(target))
        if current is None:
            # A gradient object already stored elsewhere gets its own (differentiable) copy.
            t._grad = _namespace.asarray(g, copy=True) if id(g) in stored else g
            stored.add(id(t._grad))
        else:
            t._grad = current + g
        return
    xp = t._xp
    if target is not None and g.dtype != target:
        g = xp.astype(g, target)
    if current is None:
        # Stored as it is only when no one else can hold it: not a view, not a gradient the
        # caller passed in, not already given to another leaf.
        if id(g) in stored or not _backend.owns_memory(g):
            if g.__class__ is np.ndarray and t._data.flags.c_contiguous:
                # Copied in the leaf's memory order, as PyTorch's AccumulateGrad: a Linear's
                # weight gradient (a transposed view) would be Fortran-ordered, and every
                # optimizer kernel that meets it and the C-ordered state goes element by element.
                g = np.array(g, order="C")
            else:
                g = _backend.normalize(xp.asarray(g, copy=True), xp)
        stored.add(id(g))
        t._grad = Tensor(g, xp, None)
    elif current._edge is None and _backend.writable(current._data) and not _aliased(current):
        data = current._data
        try:
            data += g
        except ValueError:
            # Read-only memory the writable() check could not see (a broadcast view inside
            # another library's array): refused before anything was written.
            t._grad = current + Tensor(g, xp, None)
            return
        current._data = data
        vc = getattr(current, "_vc", None)
        if vc is not None:
            vc.value += 1
            STATE.inplace_writes += 1
    else:
        t._grad = current + Tensor(g, xp, None)


def _aliased(t: Tensor) -> bool:
    vc = getattr(t, "_vc", None)
    return vc is not None and vc.alias


# An input that the outputs do not reach gets None only with allow_unused=True and
# materialize_grads=False: the overloads give every other call a tuple of tensors.
@overload
def grad(
    outputs: _Tensors,
    inputs: dict[str, Tensor],
    grad_outputs: _Grads = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
    is_grads_batched: bool = False,
) -> dict[str, Tensor | None]: ...
@overload
def grad(
    outputs: _Tensors,
    inputs: _Tensors,
    grad_outputs: _Grads = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: Literal[False] | None = None,
    materialize_grads: bool = False,
    is_grads_batched: bool = False,
) -> tuple[Tensor, ...]: ...
@overload
def grad(
    outputs: _Tensors,
    inputs: _Tensors,
    grad_outputs: _Grads = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    *,
    materialize_grads: Literal[True],
    is_grads_batched: bool = False,
) -> tuple[Tensor, ...]: ...
@overload
def grad(
    outputs: _Tensors,
    inputs: _Tensors,
    grad_outputs: _Grads = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
    is_grads_batched: bool = False,
) -> tuple[Tensor | None, ...]: ...
def grad(
    outputs: _Tensors,
    inputs: _Tensors | dict[str, Tensor],
    grad_outputs: _Grads = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    only_inputs: bool = True,
    allow_unused: bool | None = None,
    materialize_grads: bool = False,
    is_grads_batched: bool = False,
) -> tuple[Tensor | None, ...] | dict[str, Tensor | None]:
    """The gradients of `outputs` (weighted by `grad_outputs`) with respect to `inputs`, one
    per input (a dict of them for a dict of inputs); `.grad` is left untouched. With
    `is_grads_batched`, the first axis of every grad_output is a batch of weightings: one
    backward walk computes them all (vmap), the gradients get that first axis. only_inputs
    is PyTorch's deprecated argument: ignored (False warns, as PyTorch)."""
    if not only_inputs:
        warnings.warn(
            "only_inputs argument is deprecated and is ignored now (defaults to True). To "
            "accumulate gradient for other parts of the graph, please use "
            "chainrule.autograd.backward.",
            stacklevel=2,
        )
    if is_grads_batched:
        return _batched_grad(
            outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
            materialize_grads,
        )  # fmt: skip
    outputs = _seq(outputs)
    inputs, keys = _inputs(inputs, "grad")
    if materialize_grads and allow_unused is False:
        raise ValueError(
            "Expected allow_unused to be True or not passed when materialize_grads=True, "
            "but got: allow_unused=False."
        )
    if allow_unused is None:
        allow_unused = materialize_grads
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    grad_outputs = (None,) * len(outputs) if grad_outputs is None else _seq(grad_outputs)
    if retain_graph is None:
        retain_graph = create_graph
    # The outputs are checked before the inputs, as PyTorch's: a gradient without a graph
    # differentiated by itself is refused as an output.
    roots = _root_grads(outputs, grad_outputs, runs_on_tensors(create_graph), "outputs")
    targets = _targets(inputs, "inputs", "One of the differentiated Tensors does not require grad")
    captured = execute(roots, targets, retain_graph, create_graph, outputs[0]._xp) if roots else {}
    result: list[Tensor | None] = []
    for t in inputs:
        g = _pick(captured, t)
        if g is ZERO:
            g = zeros_for(t, False)
        if g is None:
            if not allow_unused:
                raise RuntimeError(
                    f"The differentiated Tensor at index {len(result)} appears to not have "
                    "been used in the graph. Set allow_unused=True if this is the desired "
                    "behavior."
                )
            result.append(_namespace.zeros_like(t) if materialize_grads else None)
            continue
        _check_shape(t, g)
        if g.__class__ is not Tensor:
            gxp = t._xp if g.__class__ is not _batching.Batched else _batching.NAMESPACE
            g = Tensor(_backend.normalize(g, gxp), gxp, None)
        if g._data.dtype != t._data.dtype:
            g = _namespace.astype(g, t.dtype)
        result.append(g)
    return tuple(result) if keys is None else dict(zip(keys, result))


def _batched_grad(
    outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused, materialize_grads
):
    """grad with is_grads_batched: the grad_outputs batched along their first axis at a new
    vmap level, one walk, the gradients unbatched."""
    if grad_outputs is None:
        raise RuntimeError("is_grads_batched=True needs grad_outputs with a leading batch axis")
    gs = [None if g is None else as_tensor(g) for g in _seq(grad_outputs)]
    sizes = {g.shape[0] for g in gs if g is not None and g.ndim > 0}
    if len(sizes) != 1 or any(g is not None and g.ndim == 0 for g in gs):
        raise RuntimeError(
            "is_grads_batched=True: every grad_output needs the same leading batch dimension, "
            f"got shapes {[None if g is None else g.shape for g in gs]}"
        )
    (n,) = sizes
    level, prev = _batched.enter(n)
    try:
        batched = [None if g is None else _rules.OPS["batch"](g, (level, n, 0)) for g in gs]
        found = grad(
            outputs, inputs, batched, retain_graph, create_graph,
            allow_unused=allow_unused, materialize_grads=materialize_grads,
        )  # fmt: skip
        keys = list(found) if isinstance(found, dict) else None
        values = list(found.values()) if keys is not None else list(found)
        out = []
        for g in values:
            out.append(None if g is None else _batched.unbatched(g, level, n, 0))
    finally:
        _batched.leave(prev)
    return tuple(out) if keys is None else dict(zip(keys, out))
