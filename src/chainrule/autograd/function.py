"""Custom differentiable operations, with PyTorch's interface: subclass `Function`, write
`forward(ctx, *args)` and `backward(ctx, *grads)` as static methods, call `apply`.
backward is written with chainrule operations, so it differentiates again under
create_graph (the engine calls it with grad mode on there, off otherwise)."""

from __future__ import annotations

from .. import _backend
from .._tensor import (
    Node,
    Port,
    Tensor,
    Unreleased,
    enable_grad,
    grad_mode,
    no_grad,
    remember,
)


class FunctionCtx:
    """What forward hands to backward: `save_for_backward(*tensors)`, then `saved_tensors`;
    `needs_input_grad`; `set_materialize_grads(False)` to get None instead of zeros for outputs
    that received no gradient; any other attribute may be set freely."""

    materialize_grads = True

    def set_materialize_grads(self, value: bool) -> None:
        self.materialize_grads = bool(value)

    def save_for_backward(self, *tensors) -> None:
        for t in tensors:
            if t is not None and t.__class__ is not Tensor:
                raise TypeError(f"save_for_backward takes tensors or None, not {type(t)}")
        self.to_save = tensors

    @property
    def saved_tensors(self) -> tuple:
        return self._saved_tensors


class _FunctionRule:
    """Names a Function's node in errors and reprs, as the rules of primitives do."""

    __slots__ = ("name", "backward_name")

    def __init__(self, cls) -> None:
        self.name = cls.__name__
        self.backward_name = cls.__name__ + "Backward"


class FunctionNode(Node):
    """The node of one Function.apply. Saved: (pairs, ctx); a pair is (array, edge) for a saved
    input and (array, output index) for a saved output (no node -> itself reference)."""

    __slots__ = ("n_out", "cls", "shapes", "outputs")

    def apply(self, g, xp, ns):
        pairs, ctx = self.saved
        grads = g if self.n_out > 1 else [g]
        outs = [None if gi is None else _as_tensor(gi, xp) for gi in grads]
        if ctx.materialize_grads:
            outs = [
                Tensor(xp.zeros(shape, dtype=dtype), xp, None) if o is None else o
                for o, (shape, dtype) in zip(outs, self.outputs)
            ]
        ctx._saved_tensors = tuple(_unpack(self, pair, xp) for pair in pairs)
        with enable_grad() if ns is not None else no_grad():
            result = self.cls.backward(ctx, *outs)
        ctx._saved_tensors = ()
        result = result if isinstance(result, tuple) else (result,)
        if len(result) != len(self.shapes):
            raise RuntimeError(
                f"function {self.rule.backward_name} returned an incorrect number of gradients "
                f"(expected {len(self.shapes)}, got {len(result)})"
            )
        gins = []
        for i, (r, shape, e) in enumerate(zip(result, self.shapes, self.edges)):
            if e is None or r is None:
                gins.append(None)
                continue
            if r.__class__ is not Tensor:
                r = Tensor(_backend.normalize(xp.asarray(r), xp), xp, None)
            if r.shape != shape:
                raise RuntimeError(
                    f"Function {self.rule.backward_name} returned an invalid gradient at index "
                    f"{i} - got {list(r.shape)} but expected shape compatible with {list(shape)}"
                )
            gins.append(r if ns is not None else r._data)
        return tuple(gins)


def _as_tensor(g, xp):
    return g if g.__class__ is Tensor else Tensor(g, xp, None)


def _unpack(node, pair, xp):
    if pair is None:
        return None
    data, where = pair
    if where.__class__ is int:
        return Tensor(data, xp, Port(node, where) if node.n_out > 1 else node)
    return Tensor(data, xp, where)


class Function:
    """Base class of custom operations; see the module docstring."""

    @staticmethod
    def forward(ctx, *args):
        raise NotImplementedError("a Function subclass must define forward(ctx, *args)")

    @staticmethod
    def backward(ctx, *grads):
        raise NotImplementedError("a Function subclass must define backward(ctx, *grads)")

    @classmethod
    def apply(cls, *args):
        ctx = FunctionCtx()
        ctx.to_save = ()
        ctx.needs_input_grad = tuple(a.__class__ is Tensor and a._edge is not None for a in args)
        with no_grad():
            result = cls.forward(ctx, *args)
        many = isinstance(result, tuple)
        outputs = result if many else (result,)
        if not (grad_mode.enabled and any(ctx.needs_input_grad)):
            return result
        tensors = [a for a in args if a.__class__ is Tensor]
        xp = tensors[0]._xp
        node = FunctionNode(
            _FunctionRule(cls),
            tuple(a._edge if a.__class__ is Tensor else None for a in args),
            None,
            None,
        )
        if grad_mode.anomaly:
            remember(node)
        node.cls = cls
        node.n_out = len(outputs)
        node.shapes = tuple(a.shape if a.__class__ is Tensor else () for a in args)
        node.outputs = tuple((o._data.shape, o._data.dtype) for o in outputs)
        wrapped = []
        for i, out in enumerate(outputs):
            if out.__class__ is not Tensor:
                raise TypeError(f"{cls.__name__}.forward must return tensors, got {type(out)}")
            edge = node if not many else Port(node, i)
            if _backend.dtype_kind(out._data.dtype) != "f":
                edge = None
            wrapped.append(Tensor(out._data, xp, edge))
        pairs = []
        for t in ctx.to_save:
            if t is None:
                pairs.append(None)
                continue
            index = next((i for i, o in enumerate(outputs) if o is t), None)
            pairs.append((t._data, t._edge) if index is None else (t._data, index))
        # A node that saved no tensor keeps its ctx after a backward: it can run again.
        node.saved = (tuple(pairs), ctx) if pairs else Unreleased(((), ctx))
        del ctx.to_save
        return tuple(wrapped) if many else wrapped[0]
