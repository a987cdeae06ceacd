"""Custom differentiable operations, with PyTorch's interface: subclass `Function`, write
`forward(ctx, *args)` and `backward(ctx, *grads)` (or its alias `vjp`; for forward mode
`jvp(ctx, *tangents)`; for vmap, optionally `vmap(info, in_dims, *args)`) as static methods,
call `apply`.
backward is written with chainrule operations, so it differentiates again under
create_graph (the engine calls it with grad mode on there, off otherwise). Each apply records
one Node whose rule's VJP calls the class's backward."""

from __future__ import annotations

import functools
from contextlib import nullcontext
from typing import Any, NamedTuple

from .. import _backend, _namespace, _rules
from .._batching import NAMESPACE, Batched, level_of
from .._factories import pack_saved
from .._inplace import check_dirty, rebase_dirty
from .._mode import set_feature
from .._node import Node, Port, Rule, remember
from .._state import STATE
from .._tensor import Tensor, enable_grad, grad_mode, no_grad, version_counter
from . import forward_ad
from ._namespaces import GRAPH_NAMESPACE

__all__ = ["Function", "FunctionCtx", "VmapInfo", "once_differentiable"]


class FunctionCtx:
    """What forward hands to backward: `save_for_backward(*tensors)`, then `saved_tensors`;
    `needs_input_grad`; `set_materialize_grads(False)` to get None instead of zeros for outputs
    that received no gradient; `mark_dirty(*inputs)` for inputs forward wrote in place (and
    returns); `mark_non_differentiable(*outputs)` for outputs that carry no gradient; any
    other attribute may be set freely."""

    materialize_grads = True

    def __init__(self) -> None:
        self.to_save: tuple[Tensor | None, ...] = ()
        self.dirty: tuple[Tensor, ...] = ()
        self.non_differentiable: tuple[Tensor, ...] = ()
        self.needs_input_grad: tuple[bool, ...] = ()
        self._saved_tensors: tuple[Any, ...] = ()

    def set_materialize_grads(self, value: bool) -> None:
        """False: backward gets None, not zeros, for outputs that received no gradient."""
        self.materialize_grads = bool(value)

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep `tensors` (or None) for backward, which reads them from `saved_tensors`."""
        for t in tensors:
            if t is not None and t.__class__ is not Tensor:
                raise TypeError(f"save_for_backward takes tensors or None, not {type(t)}")
        self.to_save = tensors

    def save_for_forward(self, *tensors: Tensor | None) -> None:
        """Keep `tensors` for jvp, which reads them from `saved_tensors` (forward mode)."""
        self.saved_for_forward = tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare the inputs that forward wrote in place (and returns)."""
        self.dirty = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that carry no gradient (integer results, masks)."""
        self.non_differentiable = tensors

    @property
    def saved_tensors(self) -> tuple[Tensor, ...]:
        """The tensors given to save_for_backward, in order (None where None was saved:
        typed as tensors, as PyTorch does, since saving None is rare)."""
        return self._saved_tensors


def once_differentiable(backward: Any) -> Any:
    """Decorate a Function's backward that is not itself differentiable: it runs with grad
    mode off, so a double backward through it finds no graph (and raises)."""

    @functools.wraps(backward)
    def wrapper(ctx: Any, *grads: Any) -> Any:
        with no_grad():
            return backward(ctx, *grads)

    return wrapper


def _function_vjp(xp, g, saved, p, needs):
    """The VJP of every Function node: calls the class's backward on tensors."""
    cls, ctx, slots, shapes, outputs, backend, many = p
    # On tensors under create_graph (recorded), or under forward mode (not recorded).
    tensors = xp is GRAPH_NAMESPACE
    create_graph = tensors and grad_mode.enabled
    grads = g if many else (g,)
    outs = []
    for gi, meta in zip(grads, outputs):
        if meta is None:  # a non-tensor output: no gradient
            outs.append(None)
            continue
        shape, dtype = meta
        if gi is None:
            if ctx.materialize_grads:
                gi = Tensor(backend.zeros(shape, dtype=dtype), backend, None)
        else:
            if gi.__class__ is not Tensor:
                # A batch of gradients (is_grads_batched, jacrev) computes as vmap's values.
                gi = Tensor(gi, NAMESPACE if gi.__class__ is Batched else backend, None)
            if gi._data.dtype != dtype:
                gi = (
                    xp.astype(gi, dtype)
                    if tensors
                    else Tensor(backend.astype(gi._data, dtype), backend, None)
                )
        outs.append(gi)
    values = saved if saved is not None else ()
    if not tensors:
        values = tuple(None if v is None else Tensor(v, backend, None) for v in values)
    ctx._saved_tensors = tuple(None if s is None else values[s] for s in slots)
    with enable_grad() if create_graph else no_grad():
        result = _backward_of(cls)(ctx, *outs)
    ctx._saved_tensors = ()
    result = result if isinstance(result, tuple) else (result,)
    name = cls.__name__ + "Backward"
    if len(result) > len(shapes) and all(r is None for r in result[len(shapes) :]):
        result = result[: len(shapes)]  # trailing Nones beyond the inputs, as PyTorch allows
    if len(result) != len(shapes):
        raise RuntimeError(
            f"function {name} returned an incorrect number of gradients "
            f"(expected {len(shapes)}, got {len(result)})"
        )
    gins = []
    for i, (r, shape, need) in enumerate(zip(result, shapes, needs)):
        if not need or r is None:
            gins.append(None)
            continue
        if r.__class__ is not Tensor:
            r = Tensor(_backend.normalize(backend.asarray(r), backend), backend, None)
        if r.shape != shape:
            raise RuntimeError(
                f"Function {name} returned an invalid gradient at index {i} - got "
                f"{list(r.shape)} but expected shape compatible with {list(shape)}"
            )
        gins.append(r if tensors else r._data)
    return tuple(gins)


def _backward_of(cls: type) -> Any:
    """The backward a Function subclass wrote: `backward`, or its alias `vjp` (not both)."""
    backward, vjp = cls.backward, cls.vjp
    if backward is not Function.backward and vjp is not Function.vjp:
        raise RuntimeError(
            "Implementing both 'backward' and 'vjp' for a custom Function is not allowed. You "
            "should only implement one of them."
        )
    return vjp if vjp is not Function.vjp else backward


class VmapInfo(NamedTuple):
    """What a Function's vmap staticmethod learns of the vmap it runs under."""

    batch_size: int
    randomness: str


class Function:
    """Base class of custom operations; see the module docstring. forward may also be written
    without ctx, `forward(*args)`, with a `setup_context(ctx, inputs, output)` staticmethod
    that fills ctx.

    Under vmap, forward and backward run once on the whole batch: the batched values pass
    through chainrule's operations. A forward that leaves chainrule (NumPy, SciPy) instead
    writes a `vmap(info, in_dims, *args)` staticmethod, as PyTorch's: it gets the arguments
    with their batch axis (at `in_dims`, None for an argument not batched) and returns
    `(outputs, out_dims)`, typically by calling `apply` on the whole batch; or it sets
    `generate_vmap_rule = True`, and apply runs once per sample (a loop) and stacks."""

    generate_vmap_rule = False

    @staticmethod
    def forward(ctx: Any, *args: Any) -> Any:
        """The operation on its inputs, run without recording (under no_grad); save what
        backward needs on ctx. Written by subclasses as a static method."""
        raise NotImplementedError("a Function subclass must define forward(ctx, *args)")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> None:
        """Optional: fill ctx from the inputs and output when forward is written without
        ctx, `forward(*args)`."""
        raise NotImplementedError("setup_context is optional: see Function's docstring")

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        """The gradients of the inputs (one per input, None for those that need none)
        from the gradients of the outputs. Written with chainrule operations, it
        differentiates again under create_graph."""
        raise NotImplementedError("a Function subclass must define backward(ctx, *grads)")

    vjp = backward  # PyTorch's alias: a subclass defines one of them

    @staticmethod
    def vmap(info: VmapInfo, in_dims: tuple, *args: Any) -> Any:
        """Optional: the operation on a batch, `(outputs, out_dims)` from the arguments with
        their batch axis at `in_dims` (None: not batched); see the class docstring."""
        raise NotImplementedError("the vmap staticmethod is optional: see Function's docstring")

    @staticmethod
    def jvp(ctx: Any, *tangents: Any) -> Any:
        """Forward mode: the outputs' tangents from the inputs' (zeros for a floating tensor
        input without one, None for other inputs); `ctx.saved_tensors` holds what forward gave
        `ctx.save_for_forward`. Written with chainrule operations, it differentiates again."""
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it with "
            "forward mode AD."
        )

    @classmethod
    def apply(cls, *args: Any) -> Any:
        """Run forward (not recorded, no tangents) and record one node whose VJP is backward;
        in forward mode, jvp gives the outputs' tangents."""
        profiler = grad_mode.profiler
        if profiler is not None and not profiler.entering():  # a range around this call
            return profiler.function(cls, args)
        if grad_mode.extended and grad_mode.tracer is not None:
            grad_mode.tracer.unsupported(f"the custom autograd.Function {cls.__name__}")
        levels = grad_mode.vmap
        if levels and (cls.vmap is not Function.vmap or cls.generate_vmap_rule):
            top = levels[-1][0]
            if any(a.__class__ is Tensor and level_of(a._data) == top for a in args):
                return _apply_vmap_rule(cls, args, levels)
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(a.__class__ is Tensor and a._edge is not None for a in args)
        levels = grad_mode.forward
        with no_grad(), forward_ad.shown(()) if levels else nullcontext():
            if cls.setup_context is not Function.setup_context:
                result = cls.forward(*args)
                cls.setup_context(ctx, args, result)
            else:
                result = cls.forward(ctx, *args)
        many = isinstance(result, tuple)
        outputs = result if many else (result,)
        records = grad_mode.enabled and True in ctx.needs_input_grad
        for t in ctx.dirty:
            if records:
                check_dirty(t)
            version_counter(t).value += 1
            STATE.inplace_writes += 1
        if records:
            result, node = _record(cls, ctx, args, outputs, many)
            outputs = result if many else (result,)
        if levels:
            if not records:  # outputs that are inputs get tangents of their own: new tensors
                outputs = tuple(
                    Tensor(o._data, o._xp, o._edge)
                    if any(o is a for a in args) and not any(o is t for t in ctx.dirty)
                    else o
                    for o in outputs
                )
                result = outputs if many else outputs[0]
            forward_ad.function_tangents(cls, ctx, args, outputs)
            if records:
                forward_ad.keep_saved_tangents(node, args, outputs)
        ctx.__dict__.pop("saved_for_forward", None)  # jvp ran: hold nothing more
        return result


def _apply_vmap_rule(cls: type, args: tuple, levels: tuple) -> Any:
    """apply under vmap for a Function with a vmap staticmethod (or generate_vmap_rule, which
    makes one: apply per sample): it runs with the innermost level taken off, on the
    arguments of that level with their batch axis first (recorded: gradients flow through),
    and its outputs are put back into the level."""
    if cls.generate_vmap_rule and cls.vmap is not Function.vmap:
        raise RuntimeError(
            f"You tried to vmap over {cls.__name__}, but it has both generate_vmap_rule=True "
            "and an overridden vmap staticmethod. Please set generate_vmap_rule=False or "
            "delete the overridden vmap staticmethod to avoid ambiguity."
        )
    level, n, randomness = levels[-1]
    in_dims = tuple(
        0 if a.__class__ is Tensor and level_of(a._data) == level else None for a in args
    )
    physical = tuple(
        a if d is None else _rules.OPS["unbatch"](a, (level, n, 0)) for a, d in zip(args, in_dims)
    )
    set_feature("vmap", levels[:-1])
    try:
        if cls.vmap is Function.vmap:
            found = _per_sample(cls, in_dims, physical, n)
        else:
            found = cls.vmap(VmapInfo(n, randomness), in_dims, *physical)
    finally:
        set_feature("vmap", levels)
    if not (isinstance(found, tuple) and len(found) == 2):
        raise RuntimeError(
            f"The vmap staticmethod of {cls.__name__} must return a tuple (output, out_dims), "
            f"got {type(found).__name__}"
        )
    out, out_dims = found
    many = isinstance(out, tuple)
    outputs = out if many else (out,)
    dims = out_dims if isinstance(out_dims, tuple) else (out_dims,) * len(outputs)
    if isinstance(out_dims, tuple) != many or len(dims) != len(outputs):
        raise RuntimeError(
            f"The autograd.Function's vmap staticmethod returned an incompatible (output, "
            f"out_dims) tuple. Expected out_dims={out_dims} to be compatible with the "
            f"structure of `output` ({len(outputs)} output(s), tuple: {many})."
        )
    results = []
    for o, d in zip(outputs, dims):
        if d is None or o.__class__ is not Tensor:
            results.append(o)
            continue
        if not -o.ndim <= d < o.ndim or o.shape[d] != n:
            raise RuntimeError(
                f"The vmap staticmethod of {cls.__name__} returned an output of shape "
                f"{o.shape} with out_dim {d}: that axis must hold the batch of {n}"
            )
        results.append(_rules.OPS["batch"](o, (level, n, d % o.ndim)))
    return tuple(results) if many else results[0]


def _per_sample(cls: type, in_dims: tuple, physical: tuple, n: int) -> tuple:
    """The vmap rule generate_vmap_rule stands for: apply on each sample, the results
    stacked along a new first axis (an output that is not a tensor: the first sample's)."""
    if not n:
        raise NotImplementedError("generate_vmap_rule: vmap over a batch of 0 samples")
    per_sample = []
    for i in range(n):
        one = cls.apply(*(a if d is None else a[i] for a, d in zip(physical, in_dims)))
        per_sample.append(one if isinstance(one, tuple) else (one,))
    outputs = []
    for outs in zip(*per_sample):
        tensor = outs[0].__class__ is Tensor
        outputs.append(_namespace.stack(outs) if tensor else outs[0])
    out_dims = tuple(0 if o.__class__ is Tensor else None for o in outputs)
    if isinstance(one, tuple):  # the samples' results, all of one structure
        return tuple(outputs), out_dims
    return outputs[0], out_dims[0]


def _record(cls, ctx: FunctionCtx, args: tuple, outputs: tuple, many: bool) -> tuple:
    """Record the node of one Function.apply; returns its outputs on the node, and the
    node."""
    xp = next(a._xp for a in args if a.__class__ is Tensor and a._edge is not None)
    n = len(args)
    edges = tuple(a._edge if a.__class__ is Tensor else None for a in args)
    # Saved slots: the inputs, then the outputs, then saved values that are neither.
    tensors = [a if a.__class__ is Tensor else None for a in args]
    tensors += [o if o.__class__ is Tensor else None for o in outputs]
    used = [False] * len(tensors)
    slots = []
    for t in ctx.to_save:
        if t is None:
            slots.append(None)
            continue
        slot = next((n + j for j, o in enumerate(outputs) if o is t), None)
        if slot is None:
            slot = next((i for i, a in enumerate(args) if a is t), None)
        if slot is None:
            slot = len(tensors)
            tensors.append(t)
            used.append(True)
        used[slot] = True
        slots.append(slot)
    ctx.to_save = ()
    saved = tuple(t._data if u else None for t, u in zip(tensors, used))
    params = (
        cls,
        ctx,
        tuple(slots),
        tuple(a.shape if a.__class__ is Tensor else () for a in args),
        tuple((o._data.shape, o._data.dtype) if o.__class__ is Tensor else None for o in outputs),
        xp,
        many,
    )
    # A custom backward computes what the user wrote: complex gradients pass as they are.
    rule = Rule(cls.__name__, cls.forward, _function_vjp, (), multi=many, complex="own")
    rule.backward_name = cls.__name__ + "Backward"
    # A node that saved no tensor keeps its ctx after a backward: it can run again.
    node = Node(rule, edges, saved if True in used else None, params, n_out=len(outputs))
    if grad_mode.anomaly:
        remember(node)
    wrapped = []
    for i, out in enumerate(outputs):
        if out.__class__ is not Tensor:
            wrapped.append(out)  # passed through, as PyTorch: no gradient
            continue
        edge = None
        differentiable = not any(out is t for t in ctx.non_differentiable)
        if differentiable and _backend.dtype_kind(out._data.dtype) == "f":
            edge = node if not many else Port(node, i)
        if any(out is t for t in ctx.dirty):
            rebase_dirty(out, edge)  # written in place by forward: its history is now this node
            wrapped.append(out)
        else:
            wrapped.append(Tensor(out._data, xp, edge))
    if grad_mode.saved_hooks and node.saved is not None:
        pack_saved(node, (*tensors[:n], *wrapped, *tensors[n + len(outputs) :]))
    return (tuple(wrapped) if many else wrapped[0]), node
