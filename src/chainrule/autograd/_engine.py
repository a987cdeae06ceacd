"""The backward engine: one walk from the roots, each node run once with the sum of its
incoming gradients, then gradients handed to leaves' `.grad` (backward) or returned (grad).
Gradients live in a dict for one call, keyed by node; never on nodes. No recursion. The
invariants every function here relies on are written out below the imports."""

from __future__ import annotations

import gc
import threading
from contextlib import nullcontext

from .. import _backend, _batching, _namespace, _rules
from .._batching import Batched
from .._node import (
    RELEASED,
    ZERO,
    AccumulateGrad,
    ComplexFit,
    Packed,
    Port,
    node_of,
)
from .._state import STATE
from .._tensor import _SCALARS, Tensor, as_tensor, enable_grad, grad_mode, no_grad
from ._namespaces import GRAPH_NAMESPACE
from .forward_ad import saved_with_tangents

_FREED = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward. (The freed node: {name}.)"
)

# ----------------------------------------------------------------------------- invariants
# One backward call (`execute`) keeps these:
# - Order. `_topological` lists every reachable inner node after all the nodes its edges
#   lead to (post-order); the walk runs that list reversed, so a node runs only after every
#   consumer of its output ran: its gradient is complete when the walk reaches it. Each
#   node runs at most once per call.
# - Edges and keys. An edge is a Node (its one output), a Port (a node and an output index,
#   for a node with several outputs), an AccumulateGrad (a leaf), or None (an input that
#   needs no gradient). Gradients are keyed by edge; a Port's gradients collect on their
#   node's key, in a list with one slot per output (None where none arrived).
# - Fan-in. `shared` holds every node that may get gradients from more than one place
#   (several consumers, a root, a leaf's accumulator, a node met twice in the walk): its
#   gradients are summed in the dict `grads`. Any other node has exactly one consumer: its
#   gradient skips the dict and waits in `carry` until the walk reaches the node (a chain,
#   the common case, never touches the dict). One gradient at most is carried; another one
#   meanwhile (a node with several single-consumer inputs) goes into `grads` as it is.
# - Values. A walk carries one kind of gradient: raw arrays of the backend (first order:
#   VJPs run with the raw namespace and no Tensor or Node is made), or tensors (create_graph,
#   or a dual level active: VJPs run with GRAPH_NAMESPACE, recorded under create_graph).
#   ZERO stands for a gradient known to be zero: no VJP runs on it and it is handed on as
#   it is; zeros are made only where a user sees a gradient (zeros_for; the hooks of a node
#   it reaches, _pre_hooks_on_zero, which may replace it).
# - Release. Without retain_graph, a node's saved values become RELEASED right after its
#   VJP ran. A walk that needs a released node, or a node whose saved tensor was written in
#   place since, raises before any VJP runs (_check_runnable): a refused backward changes
#   no gradient.
# - Pruning. With `targets` (grad, backward's inputs), only the nodes that lead to a target
#   (`run`) run their VJPs, and only edges into `reach` get gradients.
# - The cyclic GC is paused while a walk runs: a graph holds no reference cycles (reference
#   counting frees it), and the many short-lived arrays of a walk would otherwise set off
#   collections whose cost grows with everything alive.


# ----------------------------------------------------------------------------- roots


def _root_grads(outputs, grad_outputs, tensors: bool, what: str):
    """(edge, gradient) per output, checked: gradients as tensors when the backward runs on
    tensors (see `runs_on_tensors`), else raw arrays."""
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
            if _backend.dtype_kind(t._data.dtype) == "c":
                raise RuntimeError("grad can be implicitly created only for real scalar outputs")
            g = Tensor(xp.ones_like(t._data), xp, None)
        else:
            g = as_tensor(g)
            if g._xp is not xp and g._xp is not _batching.NAMESPACE:
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
                g_kind, t_kind = (
                    _backend.dtype_kind(g._data.dtype),
                    _backend.dtype_kind(t._data.dtype),
                )
                if g_kind == "c" or (g_kind == "f") != (t_kind == "f"):
                    raise RuntimeError(
                        f"Mismatch in dtype: grad_output[{i}] has a dtype of {g.dtype} and "
                        f"output[{i}] has a dtype of {t.dtype}."
                    )
                g = _namespace.astype(g, t.dtype)
        roots.append((t._edge, g if tensors else g._data))
    return roots


def runs_on_tensors(create_graph: bool) -> bool:
    """Whether a backward runs its VJPs on tensors: under create_graph (recorded), and while
    a dual level is active (not recorded unless create_graph), so that tangents of saved
    values flow into the gradients (forward-over-reverse)."""
    return create_graph or bool(grad_mode.forward)


# ----------------------------------------------------------------------------- the walk


def _topological(roots, with_leaves: bool):
    """Walk the graph from the roots. Returns the inner nodes in post-order (inputs before
    their users; the leaves' accumulators too if `with_leaves`: hooks run on them in that
    order), the leaves' accumulators, the nodes already released, and `shared`: the nodes
    whose gradient may arrive from several places (fan-in, roots, leaves). Every other node
    has one consumer, which hands its gradient straight on. (Nodes with several outputs
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
            if with_leaves:
                order.append(node)
            continue
        if node.saved is RELEASED:
            freed.append(node)
        # The node goes back on the stack under a _DONE marker, its inputs above both: when
        # the marker surfaces, every input is ordered, and the node follows them. (An explicit
        # stack in place of recursion: a chain of a million nodes is walked.)
        stack.append(node)
        stack.append(_DONE)
        edges = node.edges
        if with_leaves:
            # Accumulators first on the stack: ordered last, each runs right after its
            # consumer (post-accumulate hooks run as soon as a leaf's gradient is ready).
            edges = sorted(edges, key=lambda e: e.__class__ is not AccumulateGrad)
        for e in edges:
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


def _check_runnable(order, run, freed) -> None:
    """Refuse to run a released node, or one whose saved tensor was written since."""
    for node in freed:
        if run is None or node in run:
            raise RuntimeError(_FREED.format(name=node.name()) + node.created())
    if STATE.inplace_writes:
        for node in order if run is None else run:
            stale = node.stale()
            if stale is not None:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: a tensor saved by {node.name()} is at version "
                    f"{stale[1].value}; expected version {stale[2]} instead." + node.created()
                )


# ----------------------------------------------------------------------------- running a node


def _rewrap(node, saved, xp) -> tuple:
    """A node's saved slots as tensors for a create_graph backward: an input on its edge (so
    gradients reach its history), an output with this node as grad_fn; with the tangents
    they had when recorded under forward mode."""
    edges = node.edges
    n = len(edges)
    n_out = node.n_out
    multi = node.rule.multi
    out = []
    for i, d in enumerate(saved):
        if d is None or d.__class__ in _SCALARS:
            out.append(d)
        else:
            if d.__class__ is _batching.Batched:
                dxp = _batching.NAMESPACE
            elif xp is _batching.NAMESPACE:
                # A node recorded on plain arrays in a graph that vmap's values reach (a
                # Function's vmap staticmethod): its values are of their own library.
                dxp = _backend.namespace(d)
            else:
                dxp = xp
            if i < n:
                out.append(Tensor(d, dxp, edges[i]))
            elif i < n + n_out:
                out.append(Tensor(d, dxp, Port(node, i - n) if multi else node))
            else:
                out.append(Tensor(d, dxp, None))
    if getattr(node, "fw", None) is not None:
        for d in saved:
            if d.__class__ is _batching.Batched:
                xp = _batching.NAMESPACE
                break
        return saved_with_tangents(node, tuple(out), saved, xp)
    return tuple(out)


def _batched(roots) -> bool:
    """Whether a root gradient is a Batched array (vmap over gradients)."""
    for _, g in roots:
        if (g._data if g.__class__ is Tensor else g).__class__ is _batching.Batched:
            return True
    return False


def _fit(xp, grads, fit) -> tuple:
    """Sum each gradient back to its input's shape and cast it to its dtype (a real input
    gets the real part of a complex gradient)."""
    out = []
    for g, f in zip(grads, fit):
        if g is not None and g is not ZERO and f is not None:
            shape, dtype = f
            if shape is not None:
                g = _backend.sum_to(xp, g, shape)
            if dtype is not None and (g._data if g.__class__ is Tensor else g).dtype != dtype:
                g = _cast(xp, g, dtype)
        out.append(g)
    return tuple(out)


def _cast(xp, g, dtype):
    """Gradient g cast to an input's dtype: a real input gets the real part of a complex g."""
    gd = g._data.dtype if g.__class__ is Tensor else g.dtype
    if _backend.dtype_kind(gd) == "c" and _backend.dtype_kind(dtype) != "c":
        g = xp.real(g)
    return xp.astype(g, dtype)


def apply(node, g, backend, xp, create_graph: bool):
    """Run `node`'s VJP on gradient g: on raw arrays of `backend` with namespace `xp`, or
    (create_graph: the backward runs on tensors, see runs_on_tensors) on tensors with
    chainrule's namespace `xp`."""
    fit = node.fit
    if fit is not None and fit.__class__ is ComplexFit:  # (Node.meets_complex)
        return apply_complex(node, g, backend, xp, create_graph)
    saved = node.saved
    if saved.__class__ is Packed:
        saved = saved.values()
    if create_graph and saved is not None:
        saved = _rewrap(node, saved, backend)
    grads = node.rule.vjp(xp, g, saved, node.params, node.edges)
    return grads if fit is None else _fit(xp, grads, fit)


def _holds_complex(values) -> bool:
    for v in values:
        if v is not None and v.__class__ not in _SCALARS:
            d = v._data.dtype if v.__class__ is Tensor else v.dtype
            if _backend.dtype_kind(d) == "c":
                return True
        elif v.__class__ is complex:
            return True
    return False


def _conj(xp, g):
    return g if g is None or g is ZERO or not _holds_complex((g,)) else xp.conj(g)


def apply_complex(node, g, backend, xp, create_graph: bool):
    """`apply` of a node that met complex values when recorded (Node.meets_complex; its rule
    is not "own"): a holomorphic rule meeting complex values runs as conj(vjp(conj(g))) (its
    formula computes J^T g; PyTorch's convention wants J^H g), a rule for real values only
    raises."""
    rule = node.rule
    many = rule.multi
    saved = node.saved
    if saved.__class__ is Packed:
        saved = saved.values()
    holomorphic = _holds_complex(g if many else (g,)) or (
        saved is not None and _holds_complex(saved)
    )
    if holomorphic and rule.complex != "holomorphic":
        raise NotImplementedError(
            f"{node.name()}: the gradient of {rule.name} through complex values is not implemented"
        )
    if create_graph and saved is not None:
        saved = _rewrap(node, saved, backend)
    if holomorphic:
        g = [_conj(xp, gi) for gi in g] if many else xp.conj(g)
    grads = rule.vjp(xp, g, saved, node.params, node.edges)
    if holomorphic:
        grads = tuple(_conj(xp, gi) for gi in grads)
    fit = node.fit
    return grads if fit is None else _fit(xp, grads, fit)


class _Run(threading.local):
    """The backward calls running in this thread, innermost last: each a list of callbacks
    to call when it ends (multi-grad hooks)."""

    stack: list


_runs = _Run()


def at_end(callback) -> bool:
    """Call `callback()` when the innermost running backward of this thread ends; False if
    none runs."""
    stack = getattr(_runs, "stack", None)
    if not stack:
        return False
    stack[-1].append(callback)
    return True


def current_run() -> object | None:
    """An object that identifies the innermost running backward of this thread."""
    stack = getattr(_runs, "stack", None)
    return stack[-1] if stack else None


def execute(roots, targets, retain_graph: bool, create_graph: bool, backend, accumulate=None):
    """Run the graph backwards from `roots` [(edge, gradient)], on arrays of namespace
    `backend`.

    targets: the nodes whose incoming gradients are wanted, or None for every leaf.
    accumulate: for backward, `accumulate(leaf node, gradient)` stores a leaf's gradient at
    once when the leaf has post-accumulate-grad hooks (others are returned).
    Returns {node: gradient} for the targets (every reached leaf when targets is None);
    a multi-output node's entry is a list, one gradient or None per output."""
    gc_was_enabled = gc.isenabled()
    gc.disable()
    stack = getattr(_runs, "stack", None)
    if stack is None:
        stack = _runs.stack = []
    callbacks: list = []
    stack.append(callbacks)
    try:
        if grad_mode.extended and grad_mode.tracer is not None:
            run = grad_mode.tracer.execute  # compile's trace records the walk
        else:
            run = _execute
        captured = run(roots, targets, retain_graph, create_graph, backend, accumulate)
    finally:
        stack.pop()
        if gc_was_enabled:
            gc.enable()
    for callback in callbacks:
        callback()
    return captured


def _execute(roots, targets, retain_graph, create_graph, backend, accumulate):
    """The walk itself (see the invariants above); `execute`'s arguments."""
    # Read once: while no hook is registered anywhere, no node is asked for its hooks.
    hooked = STATE.live_hooks > 0
    order, leaves, freed, shared = _topological(roots, hooked)
    if targets is None:
        run = reach = None
        wanted = leaves
    else:
        run, reach = _needed(order, targets)
        wanted = targets
    _check_runnable(order, run, freed)
    tensors = runs_on_tensors(create_graph)
    if tensors:
        xp = GRAPH_NAMESPACE
    elif STATE.batched_nodes or grad_mode.vmap or _batched(roots):
        # A graph that may hold vmap's Batched values, on raw arrays: their namespace
        # computes on them and on every library below them.
        xp = _rules.raw_namespace(_batching.NAMESPACE)
    else:
        xp = _rules.raw_namespace(backend)
    grads: dict = {}
    for e, g in roots:
        _add(grads, e, g)
    with enable_grad() if create_graph else no_grad() if tensors else nullcontext():
        # The loop is chosen once per backward: the lean one unless a hook is registered
        # somewhere, anomaly mode is on or the profiler times the nodes.
        if hooked or grad_mode.anomaly or grad_mode.profiler is not None:
            steps = _Steps(backend, xp, tensors, accumulate, hooked, retain_graph)
            captured = walk(order, grads, run, reach, targets, shared, steps)
        else:
            captured = _lean(
                order, grads, run, reach, targets, shared, backend, xp, tensors, retain_graph
            )
    for node in wanted:
        if node not in captured and node in grads:
            captured[node] = grads[node]
    return captured


def _lean(order, grads, run, reach, targets, shared, backend, xp, tensors, retain_graph) -> dict:
    """The walk of the common case (no hook anywhere, no anomaly mode, no profiler): `walk`
    without the hands on its steps. Runs the nodes of `order` (those in `run`, when given)
    from the last, each on the sum of its incoming gradients in `grads`, handing each node's
    input gradients on (to the nodes in `reach`, when given: those that lead to a target); returns
    the gradients reaching `targets` (the rest stay in `grads`)."""
    # A fast path, written out beside `walk`: the backward of W1, W3 and W5 (benchmarks/
    # instructions.py) runs here, about 200 instructions per operation fewer than through
    # walk's hands. A change to one loop is a change to both.
    # A gradient with a single consumer skips the dict: it waits in `carry` for its node.
    carry_node = carry = None
    captured = {}
    direct = not tensors  # (apply's common case, below)
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
        edges = node.edges
        saved = node.saved
        if g is ZERO:
            # Known to be zero (see _node.ZERO): no VJP runs; the node's inputs get it.
            gins = (ZERO,) * len(edges)
        elif direct and node.fit is None and saved.__class__ is not Packed:
            # `apply` written out for the common node (no fit, no complex values, no
            # saved_tensors_hooks) on raw arrays: a frame less per node (W1, W3, W5).
            gins = node.rule.vjp(xp, g, saved, node.params, edges)
        else:
            gins = apply(node, g, backend, xp, tensors)
        if not retain_graph and saved is not None:
            node.saved = RELEASED
        # Indexed, not zipped: the zip and its two iterators cost about 1,000 instructions
        # a node (W1, W3, W5). A VJP returns one gradient per input.
        i = 0
        n = len(edges)
        while i < n:
            e = edges[i]
            gi = gins[i]
            i += 1
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
    return captured


def walk(order, grads, run, reach, targets, shared, steps) -> dict:
    """The walk with a hand on each of its steps, shared by the engine (hooks, anomaly mode:
    see _Steps) and compile's tracer (which records each step on slots). As `_lean`, with
    `steps` giving: hooked (whether nodes may hold hooks), add(grads, edge, g), pre(node,
    hooks, g) (before a node runs), vjp(node, g), post(node, hooks, gins, g), done(node)
    (after it ran), leaf(node, hooks, g, captured) (a leaf's accumulator, in `order` when
    hooked)."""
    hooked = steps.hooked
    add = steps.add
    carry_node = carry = None
    captured = {}
    for node in reversed(order):
        if node is carry_node:
            g = carry
            carry_node = carry = None
        else:
            g = grads.pop(node, None)
            if g is None:
                continue
        hooks = getattr(node, "hooks", None) if hooked else None
        if hooked and node.__class__ is AccumulateGrad:
            steps.leaf(node, hooks, g, captured)
            continue
        if hooks is not None:
            # Hooks run on a gradient known to be zero too (PyTorch's see zeros); one that
            # replaces it gives the node a gradient to run on (see _Steps.pre).
            g = steps.pre(node, hooks, g)
        if run is not None:
            if node in targets:
                captured[node] = g
            if node not in run:
                continue
        gins = (ZERO,) * len(node.edges) if g is ZERO else steps.vjp(node, g)
        if hooks is not None and hooks.post:
            gins = steps.post(node, hooks, gins, g)
        steps.done(node)
        for e, gi in zip(node.edges, gins):
            if e is None or gi is None:
                continue
            if reach is not None and node_of(e) not in reach:
                continue
            if e in shared or e.__class__ is Port:
                add(grads, e, gi)
            elif carry_node is None:
                carry_node = e
                carry = gi
            else:
                grads[e] = gi
    return captured


class _Steps:
    """The engine's hand on `walk`: hooks run, anomaly mode's checks, saved values released
    as the walk goes (unless retain_graph)."""

    __slots__ = ("backend", "xp", "tensors", "accumulate", "hooked", "retain", "apply", "add")

    def __init__(self, backend, xp, tensors, accumulate, hooked, retain) -> None:
        self.add = _add
        self.backend, self.xp, self.tensors = backend, xp, tensors
        self.accumulate, self.hooked, self.retain = accumulate, hooked, retain
        # What runs a node's VJP: apply, or detect_anomaly's or the profiler's wrapping of it.
        self.apply = _apply_noted if grad_mode.anomaly else apply
        if grad_mode.profiler is not None:
            self.apply = grad_mode.profiler.backward_node(self.apply)

    def leaf(self, node, hooks, g, captured) -> None:
        if g is ZERO:
            g = zeros_for(node.leaf(), self.tensors)
        if hooks is not None:
            g = _tensor_hooks(node, hooks, g, self.backend, self.tensors)
        if self.accumulate is not None and hooks is not None and hooks.accumulated:
            self.accumulate(node, g)
        else:
            captured[node] = g

    def pre(self, node, hooks, g):
        if g is ZERO:
            return _pre_hooks_on_zero(node, hooks, self.backend, self.tensors)
        return _pre_hooks(node, hooks, g, self.backend, self.tensors)

    def vjp(self, node, g):
        return self.apply(node, g, self.backend, self.xp, self.tensors)

    def post(self, node, hooks, gins, g):
        return _post_hooks(node, hooks, gins, g, self.backend, self.tensors)

    def done(self, node) -> None:
        if not self.retain and node.saved is not None:
            node.saved = RELEASED


# ----------------------------------------------------------------------------- hooks
# Hooks see gradients as tensors; a first-order backward carries raw arrays, so they are
# wrapped for the hook and unwrapped after.


def _wrap(g, backend):
    return g if g is None or g.__class__ is Tensor else Tensor(g, backend, None)


def _unwrap(g, create_graph: bool):
    if g is None or create_graph:
        return g
    return as_tensor(g)._data


def _checked(fn, old, new, backend, create_graph: bool):
    """A hook's replacement gradient, checked against the one it replaces."""
    if new is None:
        return old
    new = as_tensor(new)
    if old is not None and tuple(new.shape) != tuple(old.shape):
        raise RuntimeError(
            f"hook '{getattr(fn, '__name__', fn)}' has changed the size of value: "
            f"{tuple(old.shape)} to {tuple(new.shape)}"
        )
    return _unwrap(new, create_graph)


def _tensor_hooks(node, hooks, g, backend, create_graph: bool):
    """The hooks registered on the tensors of node's outputs, then retain_grad: per output,
    each hook may replace its gradient; a retaining tensor's .grad gets the final one."""
    many = node.__class__ is not AccumulateGrad and node.rule.multi
    grads = list(g) if many else [g]
    for i, fns in hooks.tensor.items():
        gi = grads[i]
        for fn in tuple(fns):
            if gi is not None:
                gi = _checked(fn, gi, fn(_wrap(gi, backend)), backend, create_graph)
        grads[i] = gi
    for i, ref in hooks.retain.items():
        t = ref()
        if t is not None and grads[i] is not None:
            _retain(t, grads[i], backend, create_graph)
    return grads if many else grads[0]


def _retain(t, g, backend, create_graph: bool) -> None:
    """Add g into the .grad of a non-leaf that retains its gradient (a copy: the engine may
    hand the same buffer on)."""
    if create_graph:
        new = g
    else:
        new = Tensor(_backend.normalize(backend.asarray(g, copy=True), backend), backend, None)
    current = t.grad
    t._grad = new if current is None else current + new


def _pre_hooks(node, hooks, g, backend, create_graph: bool):
    """Tensor hooks and retain_grad, then the node's prehooks `fn(grad_outputs)`."""
    if hooks.tensor or hooks.retain:
        g = _tensor_hooks(node, hooks, g, backend, create_graph)
    if not hooks.pre:
        return g
    many = node.rule.multi
    outs = tuple(_wrap(gi, backend) for gi in (g if many else (g,)))
    for fn in tuple(hooks.pre):
        new = fn(outs)
        if new is not None:
            outs = tuple(
                _wrap(_checked(fn, o, n, backend, True), backend) for o, n in zip(outs, new)
            )
    result = [_unwrap(o, create_graph) for o in outs]
    return result if many else result[0]


def _known_zeros(node, hooks, tensors: bool) -> list:
    """Per output of node, the zeros its known-zero gradient stands for (a tensor when the
    backward runs on tensors, else a raw array), or None where hooks.zeros doesn't say."""
    zeros = []
    for i in range(node.n_out):
        meta = hooks.zeros.get(i)
        if meta is None:
            zeros.append(None)
        else:
            xp, shape, dtype, device = meta
            z = _backend.normalize(xp.zeros(shape, dtype=dtype, device=device), xp)
            zeros.append(Tensor(z, xp, None) if tensors else z)
    return zeros


def _pre_hooks_on_zero(node, hooks, backend, create_graph: bool):
    """`_pre_hooks` on a gradient known to be zero: the hooks see zeros for the outputs whose
    tensor registered a hook or retain_grad (hooks.zeros), None for the others (a node's own
    prehooks only: no tensor told their shape). Outputs whose gradient no hook replaced stay
    known to be zero: ZERO when all do, else None in their place (no gradient)."""
    zeros = _known_zeros(node, hooks, create_graph)
    many = node.rule.multi
    got = _pre_hooks(node, hooks, zeros if many else zeros[0], backend, create_graph)
    got = list(got) if many else [got]
    replaced = [gi if gi is not z else None for gi, z in zip(got, zeros)]
    if all(gi is None for gi in replaced):
        return ZERO
    return replaced if many else replaced[0]


def _post_hooks(node, hooks, gins, g, backend, create_graph: bool):
    """The node's hooks `fn(grad_inputs, grad_outputs)`; one may replace grad_inputs."""
    many = node.rule.multi
    if g is ZERO:
        outs = tuple(_wrap(z, backend) for z in _known_zeros(node, hooks, create_graph))
    else:
        outs = tuple(_wrap(gi, backend) for gi in (g if many else (g,)))
    # A gradient known to be zero reaches the hooks as none; it stays ZERO unless replaced.
    zero = [gi is ZERO for gi in gins]
    ins = tuple(None if z else _wrap(gi, backend) for gi, z in zip(gins, zero))
    for fn in tuple(hooks.post):
        new = fn(ins, outs)
        if new is not None:
            if len(new) != len(ins):
                raise RuntimeError(
                    f"hook '{getattr(fn, '__name__', fn)}' has returned an incorrect number of "
                    f"values (got {len(new)}, but expected {len(ins)})"
                )
            ins = tuple(_wrap(_checked(fn, o, n, backend, True), backend) for o, n in zip(ins, new))
    return tuple(
        ZERO if z and gi is None else _unwrap(gi, create_graph) for gi, z in zip(ins, zero)
    )


def _add(grads, edge, g):
    """Add gradient g into the buffer of `edge`: a node's, or one output's of a Port's node.
    ZERO (a gradient known to be zero) adds nothing; a node reached only by ZERO gets ZERO
    (one for all its outputs)."""
    if edge.__class__ is Port:
        node = edge.node
        buf = grads.get(node)
        if g is ZERO:
            if buf is None:
                grads[node] = ZERO
            return
        if buf is None or buf is ZERO:
            buf = grads[node] = [None] * node.n_out
        i = edge.index
        prev = buf[i]
        buf[i] = g if prev is None else g + prev if g.__class__ is Batched else prev + g
        return
    prev = grads.get(edge)
    # A Batched gradient goes on the left: other libraries' operators may refuse it.
    if prev is None or prev is ZERO:
        grads[edge] = g
    elif g is not ZERO:
        grads[edge] = g + prev if g.__class__ is Batched else prev + g


def zeros_for(t, tensors: bool):
    """The zeros that ZERO stands for as the gradient of tensor t (None once t is gone): a
    tensor when the backward runs on tensors, else a raw array."""
    if t is None:
        return None
    z = _backend.normalize(t._xp.zeros_like(t._data), t._xp)
    return Tensor(z, t._xp, None) if tensors else z


def _apply_noted(node, g, backend, xp, create_graph):
    """apply under detect_anomaly: an error notes where the node was created, and a NaN in
    a gradient it returns raises, naming the node."""
    try:
        gins = apply(node, g, backend, xp, create_graph)
    except Exception as e:
        e.add_note(f"raised by {node.name()}" + node.created())
        raise
    if not grad_mode.anomaly_check_nan:
        return gins
    for i, gi in enumerate(gins):
        if gi is None or gi is ZERO:
            continue
        data = gi._data if gi.__class__ is Tensor else gi
        dxp = _backend.namespace(data)
        if bool(dxp.any(dxp.isnan(data))):
            raise RuntimeError(
                f"Function '{node.name()}' returned nan values in its {i}th output."
                + node.created()
            )
    return gins
