"""Function transforms, PyTorch's names and arguments: vjp, jacobian, hessian, hvp and vhp
built on grad; jvp, and jacobian's forward-mode strategy, on forward mode. `strict=True`
refuses outputs that do not depend on the inputs, in PyTorch's words."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from .. import _namespace, _rules
from .._tensor import Tensor, as_tensor
from .._typing import ArrayLike
from . import _batched, forward_ad
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


def _grads_or_none(outputs, inputs, vs, create_graph, retain_graph=None) -> tuple:
    """The gradients of outputs (weighted by vs) with respect to inputs, None where an input
    gets none. An output that does not require grad contributes nothing, as in PyTorch's
    functional API (a gradient that carries no graph, as ReLU's, has a Hessian of zeros,
    where autograd.grad of it would raise)."""
    kept = [k for k, o in enumerate(outputs) if o.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    if len(kept) < len(outputs):
        outputs = [outputs[k] for k in kept]
        vs = None if vs is None else [vs[k] for k in kept]
    return grad(outputs, inputs, vs, retain_graph, create_graph=create_graph, allow_unused=True)


def _grad(outputs, inputs, vs, create_graph, retain_graph=None, strict=False):
    if strict:
        _differentiable(outputs)
    gs = _grads_or_none(outputs, inputs, vs, create_graph, retain_graph)
    if strict:
        for i, g in enumerate(gs):
            if g is None:
                raise RuntimeError(
                    f"The output of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode."
                )
    return tuple(_namespace.zeros_like(x) if g is None else g for x, g in zip(inputs, gs))


def _differentiable(outputs) -> None:
    """strict mode: every output must depend on the inputs."""
    for i, o in enumerate(outputs):
        if not o.requires_grad:
            raise RuntimeError(
                f"Output {i} of the user-provided function does not require gradients. The "
                "outputs must be computed in a differentiable manner from the input when "
                "running in strict mode."
            )


def vjp(
    func: Callable[..., Any],
    inputs: _Inputs,
    v: _Inputs | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """(func(inputs), v^T J). strict: an output or input that the other does not depend on
    raises (else its products are zeros)."""
    xs = _leaves(inputs, create_graph)
    res = func(*xs)
    outs = _tuple(res)
    vs = None if v is None else _tuple(v)
    gs = _grad(outs, xs, vs, create_graph, strict=strict)
    return _unpack(_detach(outs, create_graph), res), _unpack(gs, inputs)


def _tangents(func, xs, vs) -> tuple:
    """(func's result, its outputs' (primal, tangent) pairs) along tangents vs."""
    with forward_ad.dual_level():
        res = func(*(x if u is None else forward_ad.make_dual(x, u) for x, u in zip(xs, vs)))
        return res, [forward_ad.unpack_dual(o) for o in _tuple(res)]


def jvp(
    func: Callable[..., Any],
    inputs: _Inputs,
    v: _Inputs | None = None,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Any, Any]:
    """(func(inputs), J v), by forward mode: one evaluation of func, which sees the inputs
    as tensors that need no grad (connected to their graph under create_graph). strict: an
    output that depends on no input, or an input no output depends on, raises (one more
    evaluation of func per input finds those)."""
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
    res, pairs = _tangents(func, xs, vs)
    if strict:
        for i, p in enumerate(pairs):
            if p.tangent is None:
                raise RuntimeError(
                    f"Output {i} of the user-provided function does not require gradients. "
                    "The outputs must be computed in a differentiable manner from the input "
                    "when running in strict mode."
                )
        for i, u in enumerate(vs):
            alone = [u if j == i else None for j in range(len(xs))]
            if all(p.tangent is None for p in _tangents(func, xs, alone)[1]):
                raise RuntimeError(
                    f"The output of the user-provided function is independent of input {i}. "
                    "This is not allowed in strict mode."
                )
    outs = tuple(p.primal for p in pairs)
    jv = tuple(
        _namespace.zeros_like(o) if p.tangent is None else p.tangent for o, p in zip(outs, pairs)
    )
    return _unpack(_detach(outs, create_graph), res), _unpack(_detach(jv, create_graph), res)


def _detach(ts, create_graph):
    return ts if create_graph else tuple(t.detach() for t in ts)


def jacobian(
    func: Callable[..., Any],
    inputs: _Inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    strategy: str = "reverse-mode",
) -> Any:
    """The Jacobian of func at inputs: for one input and one output, a tensor of shape
    output.shape + input.shape; else nested tuples, `result[output][input]`. One backward
    walk per output element, or with `vectorize` one per output (the rows batched: grad's
    is_grads_batched); with strategy="forward-mode" (and vectorize, as PyTorch requires),
    one forward pass per input (its columns batched by vmap). strict: an output that does
    not depend on an input raises (reverse mode, not vectorized, as PyTorch)."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise ValueError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more '
            'performant. Otherwise, prefer to use "reverse-mode".'
        )
    if strategy == "forward-mode":
        if strict:
            raise RuntimeError(
                'torch.autograd.functional.jacobian: `strict=True` and `strategy="forward-mode"`'
                " are not supported together (yet). Please either set `strict=False` or "
                '`strategy="reverse-mode"`.'
            )
        if not vectorize:
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
                "implemented for `vectorize=True`."
            )
        if create_graph:
            raise NotImplementedError(
                'torch.autograd.functional.jacobian: `create_graph=True` and `strategy="forward-'
                'mode"` are not supported together (yet). Please either set `create_graph=False`'
                ' or `strategy="reverse-mode"`.'
            )
        return _forward_jacobian(func, inputs)
    if strict and vectorize:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
            "supported together. Please either set `strict=False` or `vectorize=False`."
        )
    xs = _leaves(inputs, create_graph)
    res = func(*xs)
    outs = _tuple(res)
    if strict:
        _differentiable(outs)
    rows = []
    for i, o in enumerate(outs):
        flat = _namespace.reshape(o, (-1,))
        if not o.requires_grad:  # no input reaches it: zeros (strict has raised)
            blocks = [_namespace.zeros((o.size,) + x.shape, dtype=x.dtype) for x in xs]
        elif vectorize and o.size:
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
            reached = [False] * len(xs)
            for r in range(o.size):
                gs = _grads_or_none((flat[r],), xs, None, create_graph, retain_graph=True)
                for k, (g, x) in enumerate(zip(gs, xs)):
                    reached[k] = reached[k] or g is not None
                    per_input[k].append(_namespace.zeros_like(x) if g is None else g)
            if strict and False in reached:
                raise RuntimeError(
                    f"Output {i} of the user-provided function is independent of input "
                    f"{reached.index(False)}. This is not allowed in strict mode."
                )
            blocks = [_stack(gl, x) for gl, x in zip(per_input, xs)]
        rows.append(tuple(_namespace.reshape(b, o.shape + x.shape) for b, x in zip(blocks, xs)))
    if not isinstance(inputs, (list, tuple)):
        rows = [r[0] for r in rows]
    return _unpack(tuple(rows), res)


def _forward_jacobian(func: Callable[..., Any], inputs: _Inputs, inside: bool = False) -> Any:
    """jacobian by forward mode: the JVPs along every one-hot of every input's elements at
    once (one vmap level over the one-hots of all inputs together, so func runs once, as
    PyTorch's), the columns moved last. inside: see _batched_tangents (forward over
    reverse)."""
    xs = tuple(as_tensor(x).detach() for x in _tuple(inputs))
    sizes = [x.size for x in xs]
    total = sum(sizes)
    if total:
        bases, start = [], 0
        for x, n in zip(xs, sizes):
            eye = _namespace.eye(total, dtype=x.dtype)[:, start : start + n]
            bases.append(_namespace.reshape(eye, (total, *x.shape)))
            start += n
        res, found = _batched_tangents(func, xs, bases, inside)
    else:  # no column: one evaluation gives the outputs' shapes
        res = func(*xs)
        found = [(o, None) for o in _tuple(res)]
    cols: list[list] = []  # [output][input]: output.shape + input.shape
    for o, t in found:
        if t is None:
            cols.append([_namespace.zeros(o.shape + x.shape, dtype=o.dtype) for x in xs])
            continue
        # t: (total, *o.shape), the columns first: moved after the output's axes, split per
        # input. Detached: forward over reverse records the inner backward's graph.
        t = _namespace.permute_dims(t, (*range(1, o.ndim + 1), 0))
        row, start = [], 0
        for x, n in zip(xs, sizes):
            block = t[..., start : start + n]
            row.append(_namespace.reshape(block, o.shape + x.shape).detach())
            start += n
        cols.append(row)
    rows = [tuple(c) for c in cols]
    if not isinstance(inputs, (list, tuple)):
        rows = [r[0] for r in rows]
    return _unpack(tuple(rows), res)


def _batched_tangents(func, xs, bases: list, inside: bool = False) -> tuple:
    """func's result, and per output (its primal, its tangents along each one-hot of
    `bases` (one per input, stacked one-hots first), computed at once at a vmap level:
    (total, *output.shape), or None). inside: the inputs are moved into the level first
    (the same for every one-hot), so that a gradient func takes with respect to them is one
    per one-hot (of a value from below, vmap sums it)."""
    n = bases[0].shape[0]
    level, prev = _batched.enter(n)
    try:
        if inside:
            xs = tuple(_rules.OPS["batch"](x, (level, n, None)) for x in xs)
        vs = [_rules.OPS["batch"](b, (level, n, 0)) for b in bases]
        res, pairs = _tangents(func, xs, vs)
        return res, [
            (
                p.primal,
                None if p.tangent is None else _batched.unbatched(p.tangent, level, n, 0),
            )
            for p in pairs
        ]
    finally:
        _batched.leave(prev)


def _stack(grads, x: Tensor):
    if not grads:
        return _namespace.zeros((0,) + x.shape, dtype=x.dtype)
    return _namespace.stack(grads)


def _jacobian_depends(gs) -> None:
    """strict mode of hessian, vhp and hvp: every gradient must depend on the inputs."""
    for i, g in enumerate(gs):
        if not g.requires_grad:
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example)."
            )


def hessian(
    func: Callable[..., Any],
    inputs: _Inputs,
    create_graph: bool = False,
    strict: bool = False,
    vectorize: bool = False,
    outer_jacobian_strategy: str = "reverse-mode",
) -> Any:
    """The Hessian of scalar func at inputs: the jacobian of its gradient (reverse over
    reverse, or forward over reverse with outer_jacobian_strategy="forward-mode", which
    needs vectorize as PyTorch: one forward pass per input, its columns batched by vmap).
    strict: a gradient that does not depend on the inputs (a linear func) raises."""
    if outer_jacobian_strategy == "forward-mode" and not vectorize:
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is only "
            "implemented for `vectorize=True`."
        )

    def gradient(*xs):
        out = func(*xs)
        if not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.size != 1:
            raise RuntimeError(
                "The Tensor returned by the function given to hessian should contain a single "
                "element"
            )
        gs = _grad((out,), xs, None, True, strict=strict)
        if strict:
            _jacobian_depends(gs)
        return _unpack(gs, inputs)

    if outer_jacobian_strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                'hessian: `create_graph=True` and `outer_jacobian_strategy="forward-mode"` are '
                "not supported together"
            )
        # Forward over reverse: the inputs, dual tensors carrying the one-hots, are made
        # leaves that require grad for the inner backward, inside the vmap level (else the
        # inner gradient would be summed over the one-hots).
        return _forward_jacobian(
            lambda *xs: gradient(*(x.requires_grad_() for x in xs)), inputs, inside=True
        )
    return jacobian(gradient, inputs, create_graph=create_graph, vectorize=vectorize)


def vhp(
    func: Callable[..., Any],
    inputs: _Inputs,
    v: _Inputs,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Tensor, Any]:
    """(func(inputs), v^T H) for scalar func, by grad of grad. strict: an input the output
    does not depend on raises, and so does a gradient that does not depend on the inputs (a
    linear func)."""
    xs = _leaves(inputs, create_graph)
    out = func(*xs)
    gs = _grad((out,), xs, None, True, strict=strict)
    if strict:
        _jacobian_depends(gs)
    dots = [_namespace.sum(g * as_tensor(u)) for g, u in zip(gs, _tuple(v))]
    total = dots[0]
    for d in dots[1:]:
        total = total + d
    hv = _grad((total,), xs, None, create_graph)
    return (out if create_graph else out.detach()), _unpack(hv, inputs)


def hvp(
    func: Callable[..., Any],
    inputs: _Inputs,
    v: _Inputs,
    create_graph: bool = False,
    strict: bool = False,
) -> tuple[Tensor, Any]:
    """(func(inputs), H v) for scalar func; H is symmetric, so this is vhp."""
    return vhp(func, inputs, v, create_graph, strict)
