"""The backward engine: one walk from the roots, each node run once with the sum of its
incoming gradients, then gradients handed to leaves' `.grad` (backward) or returned (grad).
Gradients live in a dict for one call, keyed by node; never on nodes. No recursion."""

from __future__ import annotations

import gc
import threading
from contextlib import nullcontext

from .. import _backend, _namespace
from .._tensor import AccumulateGrad, Tensor, as_tensor, enable_grad


class _Anomaly(threading.local):
    enabled = False


anomaly = _Anomaly()

_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward. (The freed node: {name}.)"
)


def _root_grads(outputs, grad_outputs, create_graph: bool, what: str):
    """(edge, gradient) per output, checked: gradients as tensors under create_graph,
    else raw arrays."""
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(
            f"Mismatch in number of gradients: got {len(grad_outputs)} gradients "
            f"for {len(outputs)} {what}"
        )
    roots = []
    for i, (t, g) in enumerate(zip(outputs, grad_outputs)):
        if t.__class__ is not Tensor:
            raise TypeError(f"element {i} of {what} is a {type(t).__name__}, not a Tensor")
        if t._edge is None:
            raise RuntimeError(
                f"element {i} of {what} does not require grad and does not have a grad_fn"
            )
        xp = t._xp
        if g is None:
            if t.size != 1:
                raise RuntimeError(
                    "grad can be implicitly created only for scalar outputs "
                    f"(output {i} has shape {t.shape}): pass a gradient of that shape, "
                    "or differentiate its .sum()"
                )
            g = Tensor(xp.ones_like(t._data), xp, None)
        else:
            g = as_tensor(g)
            if g._xp is not xp:
                raise TypeError(
                    f"grad_output[{i}] is a {_backend.name_of(g._xp)} array but output[{i}] "
                    f"is a {_backend.name_of(xp)} array"
                )
            if g.shape != t.shape:
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and "
                    f"output[{i}] has a shape of {t.shape}."
                )
            if g._data.dtype != t._data.dtype:
                if _backend.is_floating(g._data.dtype) != _backend.is_floating(t._data.dtype):
                    raise RuntimeError(
                        f"Mismatch in dtype: grad_output[{i}] has dtype {g.dtype} and "
                        f"output[{i}] has dtype {t.dtype}"
                    )
                g = _namespace.astype(g, t.dtype)
        roots.append((t._edge, g if create_graph else g._data))
    return roots


def _topological(roots):
    """Nodes reachable from the roots, inner nodes in post-order (inputs before users),
    and the leaves' accumulators apart."""
    order = []
    leaves = []
    seen = set()
    stack = [(e[0], False) for e, _ in roots]
    while stack:
        node, expanded = stack.pop()
        if expanded:
            order.append(node)
            continue
        if node in seen:
            continue
        seen.add(node)
        if node.__class__ is AccumulateGrad:
            leaves.append(node)
            continue
        stack.append((node, True))
        for e in node.edges:
            if e is not None and e[0] not in seen:
                stack.append((e[0], False))
    return order, leaves


def _needed(order, targets):
    """The inner nodes that lead to a target: only they run."""
    reach = set(targets)
    run = set()
    for node in order:
        for e in node.edges:
            if e is not None and e[0] in reach:
                run.add(node)
                reach.add(node)
                break
    return run, reach


def execute(roots, targets, retain_graph: bool, create_graph: bool):
    """Run the graph backwards from `roots` [(edge, gradient)].

    targets: the nodes whose incoming gradients are wanted, or None for every leaf.
    Returns {node: gradient} for the targets (every reached leaf when targets is None);
    a multi-output node's entry is a list, one gradient or None per output."""
    order, leaves = _topological(roots)
    if targets is None:
        run = reach = None
        wanted = leaves
    else:
        run, reach = _needed(order, targets)
        wanted = targets
    for node in order if run is None else run:
        if node.saved is None:
            raise RuntimeError(_FREED.format(name=node.rule.backward_name))

    ns = _namespace if create_graph else None
    grads: dict = {}
    for (node, i), g in roots:
        _add(grads, node, i, g)
    captured = {}
    check_nan = anomaly.enabled
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        with enable_grad() if create_graph else nullcontext():
            for node in reversed(order):
                g = grads.pop(node, None)
                if g is None:
                    continue
                if run is not None:
                    if node in targets:
                        captured[node] = g
                    if node not in run:
                        continue
                gins = node.apply(g, ns)
                if not retain_graph:
                    node.release()
                if check_nan:
                    _check_nan(node, gins)
                for e, gi in zip(node.edges, gins):
                    if e is None or gi is None:
                        continue
                    child = e[0]
                    if reach is not None and child not in reach:
                        continue
                    if child.n_out == 1:
                        prev = grads.get(child)
                        grads[child] = gi if prev is None else prev + gi
                    else:
                        _add(grads, child, e[1], gi)
    finally:
        if gc_was_enabled:
            gc.enable()
    for node in wanted:
        if node not in captured and node in grads:
            captured[node] = grads[node]
    return captured


def _add(grads, node, index, g):
    if node.n_out == 1:
        prev = grads.get(node)
        grads[node] = g if prev is None else prev + g
        return
    buf = grads.get(node)
    if buf is None:
        buf = grads[node] = [None] * node.n_out
    buf[index] = g if buf[index] is None else buf[index] + g


def _check_nan(node, gins):
    for i, gi in enumerate(gins):
        if gi is None:
            continue
        data = gi._data if gi.__class__ is Tensor else gi
        xp = _backend.namespace(data)
        if bool(xp.any(xp.isnan(data))):
            raise RuntimeError(
                f"Function '{node.rule.backward_name}' returned nan values in its {i}th output."
            )
