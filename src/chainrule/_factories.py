"""The factories that make a rule of the table into an operation on tensors: each runs the
rule's forward on raw arrays and records its Node where grad mode and the inputs ask. A
one-input and a two-input fast path (with a view variant), the generic path for every other
rule, and vmap's boundary; then the features' part of every operation (_features)."""

from __future__ import annotations

import weakref

from . import _backend
from ._backend import ARRAY_TYPES, DEFAULT_FLOAT, FLOAT32, FLOAT64, IS_COMPLEX, KIND, ndarray
from ._batching import Batched, every_sample
from ._mode import grad_mode
from ._node import (
    COMPLEX_ONE,
    COMPLEX_TWO,
    ComplexFit,
    Node,
    Packed,
    Port,
    Rule,
    VersionCounter,
    View,
    node_of,
    remember,
)
from ._state import STATE
from ._tensor import (
    _SCALARS,
    Tensor,
    alias_group,
    as_tensor,
    as_tensors,
    lift,
    operand,
    raw,
    share,
    version_counter,
    view_of,
)

__all__ = [
    "binary_primitive",
    "crossing_primitive",
    "mark_inference",
    "pack_saved",
    "primitive",
    "unary_primitive",
]


def _plain(out, xp, source: Tensor | None) -> Tensor:
    """The result of an op on tensors that need no grad; a view shares its source's counter."""
    t = Tensor(out, xp, None)
    if source is not None:
        t._vc = version_counter(source)
    return t


def _view_of(x: Tensor, res: Tensor, rule: Rule, p) -> None:
    """Make res, the result of view rule `rule` on x, a view of x where it is one: it shares
    x's counter and alias group, and records its base and the steps that make it."""
    view = rule.view
    if view is not True and not view(p):
        return
    kind = _backend.aliasing(x._xp)
    if kind == "memory":
        if res.size and not _backend.shares_memory(res._data, x._data):
            return  # a copy (a reshape that no view can make); an empty result is a view
    elif rule.name == "reshape" and _copies_in_layout(x, rule, p):
        return
    res._vc = version_counter(x)
    if kind is None:
        return
    fit = None
    if res._data.dtype != x._data.dtype:  # real and imag of complex values
        fit = ((None, x._data.dtype),)
    step = ((rule, p, fit),)
    made = view_of(x)
    res._view = View(x, step) if made is None else View(made.base, made.steps + step)
    share(x, res, step)


def _copies_in_layout(x: Tensor, rule: Rule, p) -> bool:
    """Where views are kept by bookkeeping (JAX, Dask, and every library inside vmap), where
    any reshape could be a view: whether this reshape of x copies where arrays have a layout,
    as it does in PyTorch and NumPy (the reshape of a transposed or strided view). The view
    steps from x's alias root are replayed on an empty array of the root's shape (inside
    vmap: one sample's, in the samples' library where it has memory), and the reshape after
    them."""
    group = alias_group(x)
    if group is None or group.root is None:
        return False
    path = group.path(x)
    if not path:
        return False  # x holds the root's values
    root = group.root
    if x._data.__class__ is Batched:
        xp = _backend.namespace(every_sample(x._data))
        if _backend.aliasing(xp) == "memory":
            a = xp.empty(root.shape, dtype=root.dtype)
            for step, q, _ in path:
                a = step.fwd(xp, a, q)
            out = rule.fwd(xp, a, p)
            return 0 not in out.shape and not _backend.shares_memory(out, a)
    cx = _backend.dtype_kind(root.dtype) == "c"
    return _backend.layout_copies(path, root.shape, cx, rule, p)


def _unrecorded(out, xp) -> Tensor:
    """The result of an op that recorded nothing although an input needs grad (grad mode
    off): it may share memory with the graph's values, so it is never written in place."""
    t = Tensor(out, xp, None)
    t._vc = VersionCounter(0, True)
    return t


def _default_floating(xs, out):
    """Where an operation made floating values from integer or boolean tensors alone (true
    division, sqrt, a Python float operand), its result takes the default floating dtype, as
    PyTorch's does, whatever its library's promotion gave (NumPy: float64, or float16 for
    the sqrt of int8; JAX: float32 from int32): the dtype to cast those inputs to first (the
    default real one), or None where `out` is right as it is. Asked only of operations whose
    inputs need no grad (integers never do), where the result's dtype changed."""
    od = out.dtype
    for x in xs:
        if x.__class__ is Tensor:
            d = x._data.dtype
            if d is od or d is FLOAT64 or d is FLOAT32 or KIND[d.__class__][d] in "fc":
                return None
    kind = KIND[od.__class__][od]
    if kind == "f":
        want = DEFAULT_FLOAT.real
    elif kind == "c":
        want = DEFAULT_FLOAT.complex
    else:
        return None
    if _backend.public(od) is want:
        return None
    return DEFAULT_FLOAT.real


def _cast(x, dtype):
    """x (a tensor, or a Python scalar left as it is) cast to `dtype` by the recorded cast."""
    if x.__class__ is not Tensor:
        return x
    return STATE.cast((x,), _backend.to_backend_dtype(x._xp, dtype))


# ----------------------------------------------------------------------------- factories
# Three factories record the same Node: a one-input and a two-input fast path (W1, W3 and W5
# of benchmarks/ are chains of such ops; the dispatch and tuple work of the generic path
# costs them measurably), and the generic path for every other rule. While a feature of
# _mode.FEATURES is on, every operation then runs the features' parts (_features) on its
# results: the fast paths read one flag for them, after making their result (a trace by
# chainrule.compile pays twice an eager step if every operation takes the generic path).
#
# The fast paths make a recorded operation's Node and result Tensor with `_new` (the object
# alone) and set every slot that Node.__init__ and Tensor.__init__ set, in the same order: a
# class call runs __init__ in an interpreter frame entered from C, about 900 instructions
# more per object on CPython 3.11, two objects per operation (benchmarks/instructions.py: W1,
# W3 and W5). tests/test_engine.py checks that both ways make the same objects.
_new = object.__new__


def unary_primitive(rule: Rule):
    """The op function `op(x, p)` of a one-input rule; `p` holds static parameters."""
    fwd = rule.fwd
    (save_x,), save_out = rule.plan((True,))
    saves = save_x or save_out
    if rule.view:
        return _view_primitive(rule)
    own = rule.complex == "own"  # complex values need nothing of the engine (Node.meets_complex)
    given = rule.dtype_given

    def op(x, p=None):
        if x.__class__ is not Tensor:
            x = as_tensor(x)
        xp = x._xp
        xd = x._data
        out = fwd(xp, xd, p)
        if out.__class__ is not ndarray and out.__class__ not in ARRAY_TYPES:
            out = _backend.normalize(out, xp)
        route = grad_mode.route  # (grad mode and the features in one read: see _mode)
        e = x._edge
        if e is None:
            if out.dtype is not xd.dtype and not given:
                to = _default_floating((x,), out)
                if to is not None:  # sqrt of integers: cast them first
                    return op(_cast(x, to), p)
            res = Tensor(out, xp, None)
        elif route is not None and (route is False or not grad_mode.enabled):
            res = _unrecorded(out, xp)
        else:
            # (The node and its result made by _new: see above the factories.)
            node = _new(Node)
            node.rule = rule
            node.edges = (e,)
            node.saved = (xd if save_x else None, out if save_out else None) if saves else None
            node.params = p
            # Node.meets_complex, in fit: the result's dtype tells (for the usual real ones,
            # by identity).
            od = out.dtype
            if od is not FLOAT64 and od is not FLOAT32 and not own and IS_COMPLEX[od.__class__][od]:
                node.fit = COMPLEX_ONE
            else:
                node.fit = None
            node.versions = None
            node.n_out = 1
            res = _new(Tensor)
            res._data = out
            res._xp = xp
            res._edge = node
        if route:  # grad_mode.extended
            if route is not True:  # compile's trace, alone (see _mode.set_feature)
                route.unary(rule, x, out, p, res)
            else:
                level = grad_mode.dual
                if level:
                    STATE.forward_lean(rule, x, None, xd, None, out, p, res, level)
                else:
                    _feature_parts(rule, (x,), (out,), p, (res,))
        return res

    op.__name__ = op.__qualname__ = rule.name
    return op


def _view_primitive(rule: Rule):
    """The op function `op(x, p)` of a one-input view rule (reshape, getitem, ...): as
    unary_primitive's, its result made a view of x (_view_of). Such a rule saves nothing."""
    fwd = rule.fwd
    if rule.saves != ((),):
        raise ValueError(f"view rule {rule.name!r} must save nothing")
    own = rule.complex == "own"  # complex values need nothing of the engine (Node.meets_complex)

    def op(x, p=None):
        if x.__class__ is not Tensor:
            x = as_tensor(x)
        xp = x._xp
        out = fwd(xp, x._data, p)
        if out.__class__ is not ndarray and out.__class__ not in ARRAY_TYPES:
            out = _backend.normalize(out, xp)
        e = x._edge
        if e is None:
            res = Tensor(out, xp, None)
        elif not grad_mode.enabled:
            res = _unrecorded(out, xp)
        else:
            od = out.dtype  # (Node.meets_complex, as unary_primitive's)
            if od is not FLOAT64 and od is not FLOAT32 and not own and IS_COMPLEX[od.__class__][od]:
                res = Tensor(out, xp, Node(rule, (e,), None, p, COMPLEX_ONE))
            else:
                res = Tensor(out, xp, Node(rule, (e,), None, p))
        _view_of(x, res, rule, p)
        extended = grad_mode.extended
        if extended:
            if extended is not True:  # compile's trace, alone (see _mode.set_feature)
                extended.unary(rule, x, out, p, res)
            else:
                level = grad_mode.dual
                if level:
                    STATE.forward_lean(rule, x, None, x._data, None, out, p, res, level)
                else:
                    _feature_parts(rule, (x,), (out,), p, (res,))
        return res

    op.__name__ = op.__qualname__ = rule.name
    return op


def binary_primitive(rule: Rule):
    """The op function `op(x, y)` of a two-input rule without parameters. Python scalars are
    constants: no edge, no broadcasting, saved as they are."""
    fwd = rule.fwd
    plans = tuple(rule.plan(needs) for needs in ((False, False), (True, False), (False, True)))
    plans += (rule.plan((True, True)),)
    elementwise = rule.elementwise
    own = rule.complex == "own"  # complex values need nothing of the engine (Node.meets_complex)

    def op(x, y):
        scalar = False  # one side is a Python scalar: no edge, no broadcasting, no version
        if x.__class__ is Tensor:
            xp = x._xp
            xd = x._data
            ex = x._edge
            if y.__class__ is Tensor:
                if y._xp is not xp:
                    return op(*lift(rule.name, (x, y)))
                yd = y._data
                ey = y._edge
            elif y.__class__ in _SCALARS:
                yd = y
                ey = None
                scalar = True
            else:
                y = operand(y, xp, rule.name)
                if y._xp is not xp:
                    return op(*lift(rule.name, (x, y)))
                yd = y._data
                ey = None
        elif y.__class__ is Tensor:
            xp = y._xp
            yd = y._data
            ey = y._edge
            ex = None
            if x.__class__ in _SCALARS:
                xd = x
                scalar = True
            else:
                x = operand(x, xp, rule.name)
                if x._xp is not xp:
                    return op(*lift(rule.name, (x, y)))
                xd = x._data
        else:
            return op(as_tensor(x), y)
        out = fwd(xp, xd, yd)
        if out.__class__ is not ndarray and out.__class__ not in ARRAY_TYPES:
            out = _backend.normalize(out, xp)
        route = grad_mode.route  # (grad mode and the features in one read: see _mode)
        if ex is None and ey is None:
            # Integers made floating? Not from a floating operand (_default_floating would
            # say None): the result's dtype is read only for others. The array operand (xd is
            # x: x is the Python scalar) found by identity tests: `xd.__class__ in _SCALARS`
            # compared classes by ==. About 1,000 instructions a call less, 66 calls of an
            # Adam step (benchmarks/compile_optimizers.py --instructions).
            d = (yd if scalar and xd is x else xd).dtype
            if d is not FLOAT32 and d is not FLOAT64 and out.dtype is not d:
                to = _default_floating((x, y), out)
                if to is not None:  # integers made floating (true division): cast them first
                    return op(_cast(x, to), _cast(y, to))
            res = Tensor(out, xp, None)
            if route:  # grad_mode.extended
                if route is not True:  # compile's trace, alone (see _mode.set_feature)
                    route.binary(rule, x, y, out, res)
                else:
                    level = grad_mode.dual
                    if level:
                        STATE.forward_lean(rule, x, y, xd, yd, out, None, res, level)
                    else:
                        _feature_parts(rule, (x, y), (out,), None, (res,))
            return res
        if route is not None and (route is False or not grad_mode.enabled):
            res = _unrecorded(out, xp)
            if route:
                _features(rule, (x, y), (out,), None, (res,))
            return res
        (sx, sy), so = plans[(ex is not None) + 2 * (ey is not None)]
        saved = (xd if sx else None, yd if sy else None, out if so else None)
        if not (sx or sy or so):
            saved = None
        versions = None  # one side at most is a saved tensor that needs no grad
        if ex is None:
            if sx and x.__class__ is Tensor:
                versions = _saved_version(0, x)
        elif ey is None and sy and y.__class__ is Tensor:
            versions = _saved_version(1, y)
        # Whether complex values meet the node (Node.meets_complex, kept in fit): the result's
        # dtype tells, known here by identity for the usual real ones.
        fit = None
        if scalar:
            if xd.__class__ is complex or yd.__class__ is complex:
                # A real tensor's gradient through a complex result: its real part.
                fit = _scalar_fit(xd, yd, out)
                if not own:
                    fit = ComplexFit(fit or (None, None))
            else:
                od = out.dtype
                if (
                    od is not FLOAT64
                    and od is not FLOAT32
                    and not own
                    and IS_COMPLEX[od.__class__][od]
                ):
                    fit = COMPLEX_TWO
        else:
            xdt = xd.dtype
            ydt = yd.dtype
            if xdt is not ydt and xdt != ydt:
                fit = (
                    (xd.shape if elementwise else None, xdt),
                    (yd.shape if elementwise else None, ydt),
                )
                od = out.dtype
                if not own and IS_COMPLEX[od.__class__][od]:
                    fit = ComplexFit(fit)
            else:  # the result has the operands' dtype
                if elementwise and xd.shape != yd.shape:
                    fit = ((xd.shape, None), (yd.shape, None))
                if (
                    xdt is not FLOAT64
                    and xdt is not FLOAT32
                    and not own
                    and IS_COMPLEX[xdt.__class__][xdt]
                ):
                    fit = ComplexFit(fit or (None, None))
        # (The node and its result made by _new: see above the factories.)
        node = _new(Node)
        node.rule = rule
        node.edges = (ex, ey)
        node.saved = saved
        node.params = None
        node.fit = fit
        node.versions = versions
        node.n_out = 1
        res = _new(Tensor)
        res._data = out
        res._xp = xp
        res._edge = node
        if route:  # grad_mode.extended
            if route is not True:  # compile's trace, alone (see _mode.set_feature)
                route.binary(rule, x, y, out, res)
            else:
                _feature_parts(rule, (x, y), (out,), None, (res,))
        return res

    op.__name__ = op.__qualname__ = rule.name
    return op


def _scalar_fit(xd, yd, out) -> tuple | None:
    """Node.fit of a binary op of a tensor and a Python complex: the tensor's dtype, where
    the result's differs from it."""
    d = yd.dtype if xd.__class__ is complex else xd.dtype
    if d == out.dtype:
        return None
    return (None, (None, d)) if xd.__class__ is complex else ((None, d), None)


def primitive(rule: Rule):
    """The op function `op(xs, p)` of a rule over a sequence of inputs (tensors, arrays or
    Python scalars); a rule with several outputs returns a tuple of tensors."""
    fwd = rule.fwd
    multi = rule.multi
    # Whether a result made floating from integers takes the default floating dtype
    # (_default_floating): not of a rule without gradient (comparisons, casts) nor of
    # several outputs.
    check = rule.vjp is not None and not multi and not rule.dtype_given

    def op(xs, p=None):
        xs, xp = as_tensors(xs, rule.name)
        out = fwd(xp, tuple(raw(x) for x in xs), p)
        outs = (
            tuple(_backend.normalize(o, xp) for o in out)
            if multi
            else (_backend.normalize(out, xp),)
        )
        # Only where the result's dtype is not the first input's (most calls: one compare).
        x0 = xs[0] if xs else None
        if check and (x0.__class__ is not Tensor or x0._data.dtype is not outs[0].dtype):
            # where(mask, integers, 0.5): cast the integers first
            to = _default_floating(xs, outs[0])
            if to is not None:
                # Only integers: a boolean input of a rule of several may be a mask (where's).
                cast = [
                    _cast(x, to) if x.__class__ is Tensor and x.dtype.kind in "iu" else x
                    for x in xs
                ]
                if any(c is not x for c, x in zip(cast, xs)):
                    return op(cast, p)
        if grad_mode.extended:
            results = _extended(rule, xs, xp, outs, p)
        else:
            results = _results(rule, xs, xp, outs, p)
        return results if multi else results[0]

    op.__name__ = op.__qualname__ = rule.name
    return op


def crossing_primitive(rule: Rule):
    """The op function `op(x, p)` of a one-input rule whose result belongs to another array
    library than its input (vmap's boundary: batch and unbatch): the generic path, the
    result in its own namespace. While such nodes live, backward walks compute with vmap's
    namespace (`STATE.batched_nodes`)."""
    fwd = rule.fwd

    def op(x, p=None):
        if x.__class__ is not Tensor:
            x = as_tensor(x)
        # unbatch's sum over the batch of a 0-d sample is a NumPy scalar: made a 0-d array,
        # as every factory's result (a tensor's data is an array of its library).
        out = fwd(x._xp, x._data, p)
        oxp = _backend.namespace(out)
        out = _backend.normalize(out, oxp)
        if grad_mode.extended:
            result = _extended(rule, (x,), oxp, (out,), p)[0]
        else:
            result = _results(rule, (x,), oxp, (out,), p)[0]
        if result._edge is not None:
            STATE.batched_nodes += 1
            weakref.finalize(result._edge, _forget_batched)
        return result

    op.__name__ = op.__qualname__ = rule.name
    return op


def _forget_batched() -> None:
    STATE.batched_nodes -= 1


def _results(rule: Rule, xs, xp, outs, p) -> tuple:
    """The output tensors of an operation on inputs `xs` (tensors or Python scalars) whose
    forward returned `outs`, with its node recorded where grad mode and the inputs ask."""
    recorded = False
    if rule.vjp is not None:
        for x in xs:
            if x.__class__ is Tensor and x._edge is not None:
                recorded = True
                break
    if not recorded:  # loops, not comprehensions: forward mode's path, on every operation
        if rule.view:
            return tuple([_plain(o, xp, xs[0]) for o in outs])
        if len(outs) == 1:
            return (Tensor(outs[0], xp, None),)
        return tuple([Tensor(o, xp, None) for o in outs])
    if not grad_mode.enabled:
        return tuple([_unrecorded(o, xp) for o in outs])
    edges = tuple([x._edge if x.__class__ is Tensor else None for x in xs])
    return _record(rule, xs, xp, edges, tuple([e is not None for e in edges]), outs, p)


def _extended(rule: Rule, xs, xp, outs, p) -> tuple:
    """_results, then the part of each feature that is on (see _mode.FEATURES)."""
    results = _results(rule, xs, xp, outs, p)
    _features(rule, xs, outs, p, results)
    return results


def _features(rule: Rule, xs, outs, p, results) -> None:
    """The part of each feature that is on (see _mode.FEATURES), for an operation on `xs`
    that made `results`."""
    tracer = grad_mode.lone_tracer
    if tracer is not None:  # compile's trace, alone: the operation is recorded, nothing more
        tracer.record(rule, xs, outs, p, results)
    else:
        _feature_parts(rule, xs, outs, p, results)


def _feature_parts(rule: Rule, xs, outs, p, results) -> None:
    """_features while compile's trace is not the only feature on (the fast paths ask that
    themselves: `grad_mode.extended` is then the tracer, and they hand it their operands as
    they are, Tracer.unary and .binary)."""
    profiler = grad_mode.profiler
    if profiler is not None:  # first: its time for the operation ends here
        profiler.operation(rule, xs, outs, p, results)
    if grad_mode.vmap:
        STATE.vmap(rule, xs, outs, p, results)
    levels = grad_mode.forward
    if levels:  # first: the tensors saved_tensors_hooks see carry their tangents
        STATE.forward(rule, xs, outs, p, results)
    edge = results[0]._edge
    if edge is not None:
        node = node_of(edge)
        if grad_mode.anomaly:
            remember(node)
        if grad_mode.saved_hooks and node.saved is not None:
            pack_saved(node, (*xs, *results))
    if grad_mode.inference:
        mark_inference(results)
    tracer = grad_mode.tracer
    if tracer is not None:
        if levels and _dual_results(results):
            # A replay runs no JVPs: compile falls back to eager, saying why.
            tracer.unsupported("forward-mode AD (an operation on dual tensors)")
        elif grad_mode.vmap:  # nor vmap's Batched arrays
            tracer.unsupported("vmap (an operation on batched tensors)")
        else:
            tracer.record(rule, xs, outs, p, results)


def _dual_results(results) -> bool:
    for r in results:
        if getattr(r, "_fw", None):
            return True
    return False


def mark_inference(tensors) -> None:
    """Make tensors made under inference_mode inference tensors (keeping an alias mark and
    group)."""
    for t in tensors:
        vc = getattr(t, "_vc", None)
        if vc is None:
            t._vc = VersionCounter(0, False, True)
        else:
            t._vc = VersionCounter(0, vc.alias, True, vc.group)


def pack_saved(node: Node, tensors) -> None:
    """Pass node's saved arrays through the innermost saved_tensors_hooks: `tensors` are the
    tensors of its slots (inputs, outputs, extras). An output packed as itself is kept as a
    plain alias of its values: the node must not hold its own output (a cycle)."""
    pack, unpack = grad_mode.saved_hooks[-1]
    slots, packed = [], []
    prev, grad_mode.packing = grad_mode.packing, node  # a hook may ask what saved t
    try:
        for d, t in zip(node.saved, tensors):
            if d is None or d.__class__ in _SCALARS:
                slots.append(d)
                packed.append(False)
                continue
            value = pack(t)
            if value is t and t._edge is not None and node_of(t._edge) is node:
                value = _unrecorded(t._data, t._xp)
            slots.append(value)
            packed.append(True)
    finally:
        grad_mode.packing = prev
    node.saved = Packed(tuple(slots), tuple(packed), unpack)
    # As PyTorch: what the hooks give back is theirs to keep right, no version is checked.
    node.versions = None


def _record(rule: Rule, xs, xp, edges, needs, outs, p) -> tuple:
    """Record the node of a generic primitive and return its output tensors."""
    save_in, save_out = rule.plan(needs)
    saved = None
    if save_out or True in save_in:
        saved = tuple(raw(x) if s else None for x, s in zip(xs, save_in))
        saved += outs if save_out else (None,) * len(outs)
    versions = None
    if True in (s and not n for s, n in zip(save_in, needs)):
        versions = _versions(xs, edges, save_in)
    # Gradients go back in each input's dtype, and shape (elementwise rules broadcast).
    ref = outs[0]
    fit = None
    elementwise = rule.elementwise
    for x, e in zip(xs, edges):
        if e is not None and (
            x._data.dtype != ref.dtype or (elementwise and x._data.shape != ref.shape)
        ):
            fit = tuple(
                None if e is None else (x._data.shape if elementwise else None, x._data.dtype)
                for x, e in zip(xs, edges)
            )
            break
    node = Node(rule, edges, saved, p, fit, versions, len(outs))
    if rule.complex != "own" and _meets_complex(xs, outs):
        node.meets_complex = True
    if not rule.multi:
        return (Tensor(outs[0], xp, node),)
    return tuple(Tensor(o, xp, Port(node, i)) for i, o in enumerate(outs))


def _meets_complex(xs, outs) -> bool:
    """Whether an input (a tensor or a Python scalar) or an output (a raw array) is complex."""
    for o in outs:
        d = o.dtype
        if IS_COMPLEX[d.__class__][d]:
            return True
    for x in xs:
        if x.__class__ is Tensor:
            d = x._data.dtype
            if IS_COMPLEX[d.__class__][d]:
                return True
        elif x.__class__ is complex:
            return True
    return False


def _saved_version(i: int, x: Tensor) -> tuple | None:
    """`Node.versions` for input i, a saved tensor that needs no grad: it may be written in
    place, unless it aliases a graph's memory."""
    vc = version_counter(x)
    if vc.inference:
        raise RuntimeError(
            "Inference tensors cannot be saved for backward. Please do not use Tensors created "
            "in inference mode in computation tracked by autograd. To work around this, you "
            "can make a clone to get a normal tensor and use it in autograd, or use "
            "`no_grad()` instead of `inference_mode()`."
        )
    return None if vc.alias else ((i, vc, vc.value),)


def _versions(xs, edges, save_in) -> tuple | None:
    """`Node.versions` for the saved inputs that are tensors needing no grad."""
    out = ()
    for i, (x, e, s) in enumerate(zip(xs, edges, save_in)):
        if s and e is None and x.__class__ is Tensor:
            out += _saved_version(i, x) or ()
    return out or None
