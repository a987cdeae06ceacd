"""Function transforms, PyTorch's names and arguments (without `strict`): vjp, jacobian,
hessian, hvp and vhp built on grad; jvp on forward mode."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import _namespace
from .._tensor import Tensor, as_tensor
from .._typing import ArrayLike
from . import forward_ad
from ._backward import grad

__all__ = ["vjp", "jvp", "jacobian", "hessian", "hvp", "vhp"]

# Inputs: a tensor, or a tuple or list of them; results follow the structure of the inputs
# and of func's outputs (a tensor, or a tuple of tensors), so they are typed Any.
_Inputs = ArrayLike | Sequence[ArrayLike]


def _tuple(x) -> tuple:
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def _leaves(inputs, create_graph: bool) -> tuple:
    """Inputs as leaves that require grad (attached to their history under create_graph)."""
    out = []
    for x in _tuple(inputs):
        x = as_tensor(x)
        if create_graph and x.requires_grad:
            out.append(_namespace.positive(x))
        else:
            out.append(x.detach().requires_grad_(True))
    return tuple(out)


def _unpack(values, like):
    return values if isinstance(like, (list, tuple)) else values[0]


def _grad(outputs, inputs, vs, create_graph, retain_graph=None):
    gs = grad(outputs, inputs, vs, retain_graph, create_graph=create_graph, allow_unused=True)
    return tuple(_namespace.zeros_like(x) if g is None else g for x, g in zip(inputs, gs))


def vjp(
    func: Callable[..., Any], inputs: _Inputs, v: _Inputs | None = None, create_graph: bool = False
) -> tuple[Any, Any]:
    """(func(inputs), v^T J)."""
    xs = _leaves(inputs, create_graph)
    res = func(*xs)
    outs = _tuple(res)
    vs = None if v is None else _tuple(v)
    gs = _grad(outs, xs, vs, create_graph)
    return _unpack(_detach(outs, create_graph), res), _unpack(gs, inputs)


def jvp(
    func: Callable[..., Any], inputs: _Inputs, v: _Inputs | None = None, create_graph: bool = False
) -> tuple[Any, Any]:
    """(func(inputs), J v), by forward mode: one evaluation of func, which sees the inputs
    as tensors that need no grad (connected to their graph under create_graph)."""
    xs = tuple(as_tensor(x) for x in _tuple(inputs))
    if not create_graph:
        xs = tuple(x.detach() for x in xs)
    if v is None:
        if any(x.size != 1 for x in xs):
            raise RuntimeError("jvp: v can be omitted only when every input has one element")
        vs = tuple(_namespace.ones_like(x) for x in xs)
    else:
        vs = tuple(as_tensor(u) for u in _tuple(v))
        if len(vs) != len(xs):
            raise RuntimeError(
                f"jvp: v has {len(vs)} tensors but there are {len(xs)} inputs: one each"
            )
    with forward_ad.dual_level():
        res = func(*(forward_ad.make_dual(x, u) for x, u in zip(xs, vs)))
        pairs = [forward_ad.unpack_dual(o) for o in _tuple(res)]
    outs = tuple(p.primal for p in pairs)
    jv = tuple(
        _namespace.zeros_like(o) if p.tangent is None else p.tangent for o, p in zip(outs, pairs)
    )
    return _unpack(_detach(outs, create_graph), res), _unpack(_detach(jv, create_graph), res)


def _detach(ts, create_graph):
    return ts if create_graph else tuple(t.detach() for t in ts)


def jacobian(
    func: Callable[..., Any], inputs: _Inputs, create_graph: bool = False, vectorize: bool = False
) -> Any:
    """The Jacobian of func at inputs: for one input and one output, a tensor of shape
    output.shape + input.shape; else nested tuples, `result[output][input]`. One backward
    walk per output element, or with `vectorize` one per output (the rows batched: grad's
    is_grads_batched)."""
    xs = _leaves(inputs, create_graph)
    res = func(*xs)
    outs = _tuple(res)
    rows = []
    for o in outs:
        flat = _namespace.reshape(o, (-1,))
        if vectorize and o.size:
            eye = _namespace.eye(o.size, dtype=o.dtype)
            gs = grad(
                (flat,), xs, (eye,), retain_graph=True, create_graph=create_graph,
                allow_unused=True, is_grads_batched=True,
            )  # fmt: skip
            blocks = [
                _namespace.zeros((o.size,) + x.shape, dtype=x.dtype) if g is None else g
                for g, x in zip(gs, xs)
            ]
        else:
            per_input: list[list] = [[] for _ in xs]
            for r in range(o.size):
                gs = _grad((flat[r],), xs, None, create_graph, retain_graph=True)
                for k, g in enumerate(gs):
                    per_input[k].append(g)
            blocks = [_stack(gl, x) for gl, x in zip(per_input, xs)]
        rows.append(tuple(_namespace.reshape(b, o.shape + x.shape) for b, x in zip(blocks, xs)))
    if not isinstance(inputs, (list, tuple)):
        rows = [r[0] for r in rows]
    return _unpack(tuple(rows), res)


def _stack(grads, x: Tensor):
    if not grads:
        return _namespace.zeros((0,) + x.shape, dtype=x.dtype)
    return _namespace.stack(grads)


def hessian(func: Callable[..., Any], inputs: _Inputs, create_graph: bool = False) -> Any:
    """The Hessian of scalar func at inputs."""

    def gradient(*xs):
        out = func(*xs)
        return _unpack(_grad((out,), xs, None, True), inputs)

    return jacobian(gradient, inputs, create_graph=create_graph)


def vhp(
    func: Callable[..., Any], inputs: _Inputs, v: _Inputs, create_graph: bool = False
) -> tuple[Tensor, Any]:
    """(func(inputs), v^T H) for scalar func, by grad of grad."""
    xs = _leaves(inputs, create_graph)
    out = func(*xs)
    gs = _grad((out,), xs, None, True)
    dots = [_namespace.sum(g * as_tensor(u)) for g, u in zip(gs, _tuple(v))]
    total = dots[0]
    for d in dots[1:]:
        total = total + d
    hv = _grad((total,), xs, None, create_graph)
    return (out if create_graph else out.detach()), _unpack(hv, inputs)


def hvp(
    func: Callable[..., Any], inputs: _Inputs, v: _Inputs, create_graph: bool = False
) -> tuple[Tensor, Any]:
    """(func(inputs), H v) for scalar func; H is symmetric, so this is vhp."""
    return vhp(func, inputs, v, create_graph)
