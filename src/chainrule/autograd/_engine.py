"""The backward engine: one walk from the roots, each node run once with the sum of its
incoming gradients, then gradients handed to leaves' `.grad` (backward) or returned (grad).
Gradients live in a dict for one call, keyed by node; never on nodes. No recursion."""

from __future__ import annotations

import gc
from contextlib import nullcontext

from .. import _backend, _namespace
from .._tensor import (
    AccumulateGrad,
    Port,
    Tensor,
    as_tensor,
    enable_grad,
    grad_mode,
    inplace_writes,
    node_of,
    stale,
)

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
                f"element {i} of tensors does not require grad and does not have a grad_fn"
            )
        xp = t._xp
        if xp is not outputs[0]._xp:
            raise TypeError(
                f"element {i} of {what} is a {_backend.name_of(xp)} tensor but element 0 is a "
                f"{_backend.name_of(outputs[0]._xp)} tensor: one backward walks one library"
            )
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
    """Walk the graph from the roots. Returns the inner nodes in post-order (inputs before
    their users), the leaves' accumulators, the nodes already released, and `shared`: the
    nodes whose gradient may arrive from several places (fan-in, roots, leaves). Every other
    node has one consumer, which hands its gradient straight on. (Nodes with several outputs
    collect their gradients through Ports, in a list.)"""
    order = []
    leaves = []
    freed = []
    shared = {node_of(e) for e, _ in roots}
    seen = set()
    stack = list(shared)
    while stack:
        node = stack.pop()
        if node is _DONE:
            # All of the node below this marker's inputs are ordered: order the node.
            order.append(stack.pop())
            continue
        if node in seen:
            shared.add(node)
            continue
        seen.add(node)
        if node.__class__ is AccumulateGrad:
            leaves.append(node)
            shared.add(node)
            continue
        if node.saved is None:
            freed.append(node)
        stack.append(node)
        stack.append(_DONE)
        for e in node.edges:
            if e is not None:
                child = e.node if e.__class__ is Port else e
                if child in seen:
                    shared.add(child)
                else:
                    stack.append(child)
    return order, leaves, freed, shared


_DONE = object()


def _needed(order, targets):
    """The inner nodes that lead to a target: only they run."""
    reach = set(targets)
    run = set()
    for node in order:
        for e in node.edges:
            if e is not None and node_of(e) in reach:
                run.add(node)
                reach.add(node)
                break
    return run, reach


def execute(roots, targets, retain_graph: bool, create_graph: bool, xp):
    """Run the graph backwards from `roots` [(edge, gradient)], on arrays of namespace `xp`.

    targets: the nodes whose incoming gradients are wanted, or None for every leaf.
    Returns {node: gradient} for the targets (every reached leaf when targets is None);
    a multi-output node's entry is a list, one gradient or None per output."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _execute(roots, targets, retain_graph, create_graph, xp)
    finally:
        if gc_was_enabled:
            gc.enable()


def _execute(roots, targets, retain_graph, create_graph, xp):
    order, leaves, freed, shared = _topological(roots)
    if targets is None:
        run = reach = None
        wanted = leaves
    else:
        run, reach = _needed(order, targets)
        wanted = targets
    for node in freed:
        if run is None or node in run:
            raise RuntimeError(_FREED.format(name=node.rule.backward_name) + node.created())
    if inplace_writes[0]:
        for node in order if run is None else run:
            s = stale(node)
            if s is not None:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: a tensor saved by {node.rule.backward_name} is "
                    f"at version {s.cell[0]}; expected version {s.version} instead."
                    + node.created()
                )

    ns = _namespace if create_graph else None
    grads: dict = {}
    for e, g in roots:
        _add(grads, e, g)
    # A gradient with a single consumer skips the dict: it waits in `carry` for its node.
    carry_node = carry = None
    captured = {}
    check_nan = grad_mode.anomaly
    with enable_grad() if create_graph else nullcontext():
        for node in reversed(order):
            if node is carry_node:
                g = carry
                carry_node = carry = None
            else:
                g = grads.pop(node, None)
                if g is None:
                    continue
            if run is not None:
                if node in targets:
                    captured[node] = g
                if node not in run:
                    continue
            gins = node.apply(g, xp, ns) if not check_nan else _apply_noted(node, g, xp, ns)
            if not retain_graph and node.saved.__class__ is tuple:
                node.saved = None
            if check_nan:
                _check_nan(node, gins)
            for e, gi in zip(node.edges, gins):
                if e is None or gi is None:
                    continue
                if reach is not None and node_of(e) not in reach:
                    continue
                if e in shared or e.__class__ is Port:
                    _add(grads, e, gi)
                elif carry_node is None:
                    carry_node = e
                    carry = gi
                else:
                    grads[e] = gi
    for node in wanted:
        if node not in captured and node in grads:
            captured[node] = grads[node]
    return captured


def _add(grads, edge, g):
    """Add gradient g into the buffer of `edge`: a node's, or one output's of a Port's node."""
    if edge.__class__ is Port:
        node = edge.node
        buf = grads.get(node)
        if buf is None:
            buf = grads[node] = [None] * node.n_out
        i = edge.index
        buf[i] = g if buf[i] is None else buf[i] + g
        return
    prev = grads.get(edge)
    grads[edge] = g if prev is None else prev + g


def _apply_noted(node, g, xp, ns):
    """node.apply, an error from it noting where the node was created (detect_anomaly)."""
    try:
        return node.apply(g, xp, ns)
    except Exception as e:
        e.add_note(f"raised by {node.rule.backward_name}" + node.created())
        raise


def _check_nan(node, gins):
    for i, gi in enumerate(gins):
        if gi is None:
            continue
        data = gi._data if gi.__class__ is Tensor else gi
        xp = _backend.namespace(data)
        if bool(xp.any(xp.isnan(data))):
            raise RuntimeError(
                f"Function '{node.rule.backward_name}' returned nan values in its {i}th output."
                + node.created()
            )
