"""Tensor, defined here once, and the primitive factories that run a rule's forward on raw
arrays and record its Node.

A tensor holds a raw backend array, its namespace, and `_edge`: None when it needs no
gradient, else where its gradient goes: the node that made it (a Port for output i of a node
with several outputs), or for a leaf its AccumulateGrad. In forward mode, `_fw` (set only on
dual tensors) maps dual levels to tangents. Operators and array methods that
need the namespace layer are bound from the one table in `_methods`."""

from __future__ import annotations

import copy
import weakref
from typing import TYPE_CHECKING, Any

from . import _backend
from ._backend import ARRAY_TYPES, FLOAT32, FLOAT64, IS_COMPLEX, ndarray
from ._mode import enable_grad, grad_mode, is_grad_enabled, no_grad, set_grad_enabled
from ._node import (
    AccumulateGrad,
    Alias,
    Node,
    Packed,
    Port,
    RemovableHandle,
    Rule,
    VersionCounter,
    View,
    hooks_of,
    live_hooks,
    node_of,
    remember,
)

if TYPE_CHECKING:
    from collections.abc import Sequence
    from types import ModuleType

    from ._typing import ArrayLike, Axis, Device, DTypeLike, IndexKey
    from .random import Generator

__all__ = [
    "Tensor",
    "alias_group",
    "as_tensor",
    "as_tensors",
    "batched_nodes",
    "binary_primitive",
    "constant",
    "crossing_primitive",
    "dual",
    "enable_grad",
    "grad_mode",
    "is_grad_enabled",
    "mixed_error",
    "no_grad",
    "primitive",
    "raw",
    "set_grad_enabled",
    "share",
    "unary_primitive",
    "version_counter",
    "view_of",
]

_SCALARS = (bool, int, float, complex)


# ----------------------------------------------------------------------------- versions


def version_counter(t: Tensor) -> VersionCounter:
    """t's version counter, made on first use (most tensors never need one)."""
    vc = getattr(t, "_vc", None)
    if vc is None:
        vc = t._vc = VersionCounter()
    return vc


def _plain(out, xp, source: Tensor | None) -> Tensor:
    """The result of an op on tensors that need no grad; a view shares its source's counter."""
    t = Tensor(out, xp, None)
    if source is not None:
        t._vc = version_counter(source)
    return t


# ----------------------------------------------------------------------------- aliases
# A view (a view rule's result that shares its input's memory), detach() and .data join their
# source's Alias group, kept on the version counter; a view also records how it is made from
# its base (View). Only in-place writes read either (see _inplace): an operation that is no
# view pays nothing for them.


def alias_group(t: Tensor) -> Alias | None:
    """The Alias group of the tensors that share t's memory, or None."""
    vc = getattr(t, "_vc", None)
    return None if vc is None else vc.group


def view_of(t: Tensor) -> View | None:
    """How t is made from its base, if t is a view of a tensor (PyTorch's `_base`)."""
    return getattr(t, "_view", None)


def share(source: Tensor, t: Tensor, step: tuple = ()) -> None:
    """Make t, whose counter is set, a member of source's alias group (made on first use):
    its values made from source's by the view `step`, or the same values."""
    kind = _backend.aliasing(source._xp)
    if kind is None:
        return
    group = alias_group(source)
    if group is None:
        group = Alias(kind == "memory")
        version_counter(source)
        group.add(source, ())
    path = group.path(source)
    if step and not group.mutable and group.root is None:
        group.root = source._data  # path is (): source holds the root values
    group.add(t, path + step)


def _view_of(x: Tensor, res: Tensor, rule: Rule, p) -> None:
    """Make res, the result of view rule `rule` on x, a view of x where it is one: it shares
    x's counter and alias group, and records its base and the steps that make it."""
    view = rule.view
    if view is not True and not view(p):
        return
    kind = _backend.aliasing(x._xp)
    if kind == "memory" and res.size and not _backend.shares_memory(res._data, x._data):
        return  # a copy (a reshape that no view can make); an empty result is a view
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


def _unrecorded(out, xp) -> Tensor:
    """The result of an op that recorded nothing although an input needs grad (grad mode
    off): it may share memory with the graph's values, so it is never written in place."""
    t = Tensor(out, xp, None)
    t._vc = VersionCounter(0, True)
    return t


# ----------------------------------------------------------------------------- factories
# Three factories record the same Node: a one-input and a two-input fast path (W1, W3 and W5
# of benchmarks/ are chains of such ops; the dispatch and tuple work of the generic path
# costs them measurably), and the generic path for every other rule. While a feature of
# _mode.FEATURES is on, every operation then runs the features' parts (_features) on its
# results: the fast paths read one flag for them, after making their result (a trace by
# chainrule.compile pays twice an eager step if every operation takes the generic path).


def unary_primitive(rule: Rule):
    """The op function `op(x, p)` of a one-input rule; `p` holds static parameters."""
    fwd = rule.fwd
    (save_x,), save_out = rule.plan((True,))
    saves = save_x or save_out
    if rule.view:
        return _view_primitive(rule)
    own = rule.complex == "own"  # complex values need nothing of the engine (Node.meets_complex)

    def op(x, p=None):
        if x.__class__ is not Tensor:
            x = as_tensor(x)
        xp = x._xp
        xd = x._data
        out = fwd(xp, xd, p)
        if out.__class__ is not ndarray and out.__class__ not in ARRAY_TYPES:
            out = _backend.normalize(out, xp)
        e = x._edge
        if e is None:
            res = Tensor(out, xp, None)
        elif not grad_mode.enabled:
            res = _unrecorded(out, xp)
        else:
            saved = (xd if save_x else None, out if save_out else None) if saves else None
            node = Node(rule, (e,), saved, p)
            if not own:  # (see Node.meets_complex: the result's dtype tells)
                od = out.dtype
                if od is not FLOAT64 and od is not FLOAT32 and IS_COMPLEX[od]:
                    node.meets_complex = True
            res = Tensor(out, xp, node)
        if grad_mode.extended:
            level = grad_mode.dual
            if level:
                DUAL[0](rule, x, None, xd, None, out, p, res, level)
            else:
                _features(rule, (x,), (out,), p, (res,))
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
            node = Node(rule, (e,), None, p)
            if not own:  # (see Node.meets_complex: the result's dtype tells)
                od = out.dtype
                if od is not FLOAT64 and od is not FLOAT32 and IS_COMPLEX[od]:
                    node.meets_complex = True
            res = Tensor(out, xp, node)
        _view_of(x, res, rule, p)
        if grad_mode.extended:
            level = grad_mode.dual
            if level:
                DUAL[0](rule, x, None, x._data, None, out, p, res, level)
            else:
                _features(rule, (x,), (out,), p, (res,))
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
        if ex is None and ey is None:
            res = Tensor(out, xp, None)
            if grad_mode.extended:
                level = grad_mode.dual
                if level:
                    DUAL[0](rule, x, y, xd, yd, out, None, res, level)
                else:
                    _features(rule, (x, y), (out,), None, (res,))
            return res
        if not grad_mode.enabled:
            res = _unrecorded(out, xp)
            if grad_mode.extended:
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
        # Whether complex values meet the node (see Node.meets_complex): the result's dtype
        # tells, known here by identity for the usual real ones.
        fit = None
        if scalar:
            if xd.__class__ is complex or yd.__class__ is complex:
                # A real tensor's gradient through a complex result: its real part.
                cx = True
                fit = _scalar_fit(xd, yd, out)
            else:
                od = out.dtype
                cx = od is not FLOAT64 and od is not FLOAT32 and IS_COMPLEX[od]
        else:
            xdt = xd.dtype
            ydt = yd.dtype
            if xdt is not ydt and xdt != ydt:
                cx = IS_COMPLEX[out.dtype]
                fit = (
                    (xd.shape if elementwise else None, xdt),
                    (yd.shape if elementwise else None, ydt),
                )
            else:  # the result has the operands' dtype
                cx = xdt is not FLOAT64 and xdt is not FLOAT32 and IS_COMPLEX[xdt]
                if elementwise and xd.shape != yd.shape:
                    fit = ((xd.shape, None), (yd.shape, None))
        node = Node(rule, (ex, ey), saved, None, fit, versions)
        if cx and not own:
            node.meets_complex = True
        res = Tensor(out, xp, node)
        if grad_mode.extended:
            _features(rule, (x, y), (out,), None, (res,))
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

    def op(xs, p=None):
        xs, xp = as_tensors(xs, rule.name)
        out = fwd(xp, tuple(raw(x) for x in xs), p)
        outs = (
            tuple(_backend.normalize(o, xp) for o in out)
            if multi
            else (_backend.normalize(out, xp),)
        )
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
    namespace (`batched_nodes`)."""
    fwd = rule.fwd

    def op(x, p=None):
        if x.__class__ is not Tensor:
            x = as_tensor(x)
        out = fwd(x._xp, x._data, p)
        oxp = _backend.namespace(out)
        if grad_mode.extended:
            result = _extended(rule, (x,), oxp, (out,), p)[0]
        else:
            result = _results(rule, (x,), oxp, (out,), p)[0]
        if result._edge is not None:
            batched_nodes[0] += 1
            weakref.finalize(result._edge, _forget_batched)
        return result

    op.__name__ = op.__qualname__ = rule.name
    return op


# The number of live nodes of vmap's boundary (see crossing_primitive).
batched_nodes = [0]


def _forget_batched() -> None:
    batched_nodes[0] -= 1


# vmap's part of every operation, installed by chainrule.func: `(rule, xs, results)` routes
# an input of a lower vmap level than its result through a lift (see func._vmap).
VMAP: list = [None]

# vmap's lift, installed by chainrule.func: `(tensor)` gives a tensor that requires grad,
# of a library below vmap's, as a tensor of the innermost vmap level (the same value for
# every sample, its gradient summed over the batch), or None outside vmap.
LIFT: list = [None]


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
    if grad_mode.vmap:
        VMAP[0](rule, xs, results)
    levels = grad_mode.forward
    if levels:  # first: the tensors saved_tensors_hooks see carry their tangents
        FORWARD[0](rule, xs, results[0]._xp, outs, results, p, levels)
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
    node.saved = Packed(tuple(slots), tuple(packed), unpack)


# Forward mode's lean path, installed by autograd.forward_ad: `(rule, x, y, xd, yd, out, p,
# res, level)` gives the result of a one- or two-input fast path (y, yd None for one) its
# tangent, while grad_mode.dual says that forward mode at one level is the only feature on.
DUAL: list = [None]

# Forward mode's part of _extended, installed by autograd.forward_ad (it runs JVPs with
# chainrule's namespace): `(rule, xs, xp, outs, results, p, levels)` gives the results their
# tangents at the visible dual levels.
FORWARD: list = [None]


def dual(t: Tensor) -> bool:
    """Whether t may carry a tangent that forward mode sees: functions that compute a result
    outside the rule table when nothing needs a gradient must take the recorded path then."""
    return bool(grad_mode.forward) and getattr(t, "_fw", None) is not None


def _has_tangent(t: Tensor) -> bool:
    """Whether t carries a tangent at a forward-mode level that operations see now."""
    fw = getattr(t, "_fw", None)
    if fw:
        for level in grad_mode.forward:
            if fw.get(level) is not None:
                return True
    return False


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
        if IS_COMPLEX[o.dtype]:
            return True
    for x in xs:
        if x.__class__ is Tensor:
            if IS_COMPLEX[x._data.dtype]:
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


# ----------------------------------------------------------------------------- conversion


def raw(x):
    """The raw array of a tensor; Python scalars pass as they are."""
    return x._data if x.__class__ is Tensor else x


def mixed_error(name: str, xp, other) -> None:
    raise TypeError(
        f"{name}: cannot mix arrays of different libraries in one operation: "
        f"{_backend.name_of(xp)} and {_backend.name_of(other)}"
    )


def as_tensors(xs, name: str):
    """Tensors of one namespace from a sequence of tensors, arrays and Python scalars (which
    stay as they are), and that namespace."""
    xs = tuple(xs)
    xp = None
    for x in xs:
        if x.__class__ is Tensor:
            oxp = x._xp
        elif x.__class__ in _SCALARS or x.__class__ is ndarray or not _backend.is_array(x):
            continue
        else:  # a raw array of another library than NumPy counts as a tensor of it would
            oxp = _backend.namespace(x)
            if oxp is _backend.np:
                continue
        if xp is None:
            xp = oxp
        elif oxp is not xp:
            xp = _joint(name, xp, oxp)
    if xp is None:
        xp = _backend.default_namespace()
    return tuple(
        x if x.__class__ in _SCALARS or x.__class__ is Tensor and x._xp is xp else constant(x, xp)
        for x in xs
    ), xp


def _joint(name: str, xp, other):
    """The namespace of an operation on arrays of `xp` and `other`: one of them where that
    library takes the other's arrays as operands (Dask takes NumPy's), else a TypeError."""
    joint = _backend.joint_namespace(xp, other)
    if joint is None:
        mixed_error(name, xp, other)
    return joint


def lift(name: str, xs):
    """Tensors of two libraries, one of which takes the other's arrays, in that one."""
    xp = _joint(name, xs[0]._xp, xs[1]._xp)
    return tuple(constant(x, xp) for x in xs)


def operand(obj, xp, name: str) -> Tensor:
    """A raw operand (array or Python data) of an operation on `xp` tensors, as a tensor that
    needs no grad: one of a library that takes xp's arrays stays in it (a Dask array next to
    NumPy tensors: the operation is lifted to Dask, and stays lazy), else constant(obj, xp)."""
    if obj.__class__ is not ndarray and _backend.is_array(obj):
        oxp = _backend.namespace(obj)
        if oxp is not xp and oxp is not _backend.np and _joint(name, xp, oxp) is oxp:
            return Tensor(obj, oxp, None)
    return constant(obj, xp)


def constant(obj, xp) -> Tensor:
    """A tensor that needs no gradient, from an array or Python data, in namespace `xp`
    (a tensor of that namespace as it is; one of another library that `xp` takes, wrapped)."""
    if obj.__class__ is Tensor:
        if obj._xp is xp:
            return obj
        if obj._edge is not None:
            lifted = LIFT[0](obj, xp) if LIFT[0] is not None else None
            if lifted is not None:
                return lifted
            raise TypeError(
                f"a {_backend.name_of(obj._xp)} tensor that requires grad can't join an "
                f"operation on {_backend.name_of(xp)} arrays (its gradient would be of the "
                f"other library): make it a {_backend.name_of(xp)} array first"
            )
        obj = obj._data
    if _backend.is_array(obj) and not isinstance(obj, _backend.np.generic):
        oxp = _backend.namespace(obj)
        _backend.checked(obj)
        if oxp is not xp:
            _joint("constant", xp, oxp)
            return Tensor(_backend.normalize(xp.asarray(obj), xp), xp, None)
        return Tensor(_backend.normalize(obj, xp), xp, None)
    return Tensor(_backend.checked(_backend.normalize(xp.asarray(obj), xp)), xp, None)


def as_tensor(obj) -> Tensor:
    """`obj` as a tensor: tensors as they are, arrays wrapped without copy, Python data
    converted by the default namespace."""
    if obj.__class__ is Tensor:
        return obj
    if _backend.is_array(obj):
        xp = _backend.namespace(obj)
        return Tensor(_backend.checked(_backend.normalize(obj, xp)), xp, None)
    xp = _backend.default_namespace()
    return Tensor(_backend.checked(_backend.normalize(xp.asarray(obj), xp)), xp, None)


# ----------------------------------------------------------------------------- Tensor

_NON_LEAF_FLAG = (
    "you can only change requires_grad flags of leaf variables. If you want to use a "
    "computed variable in a subgraph that doesn't require differentiation use "
    "var_no_grad = var.detach()."
)


class ElementCount(int):
    """A tensor's number of elements, an int (the Array API's `x.size`) that can be called as
    PyTorch's `x.size()`: the shape, or `x.size(dim)` the length of one dimension."""

    def __new__(cls, n: int, shape: tuple) -> ElementCount:
        count = super().__new__(cls, n)
        count.shape = tuple(shape)
        return count

    def __call__(self, dim: int | None = None) -> Any:
        shape = self.shape
        if dim is None:
            return shape
        n = len(shape)
        if n == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        if not -n <= dim < n:
            raise IndexError(
                f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], but got "
                f"{dim})"
            )
        return shape[dim]

    def __reduce__(self) -> tuple:
        return int, (int(self),)


class Tensor:
    """An array of any Array API library that records the operations applied to it.

    Defined here: autograd attributes, array attributes, conversions, copying and pickling.
    Operators, in-place operators, indexing, `backward` and the array methods are bound from
    the one table in `chainrule._methods`."""

    __slots__ = ("_data", "_xp", "_edge", "_grad", "_vc", "_fw", "_view", "__weakref__")
    __array_priority__ = 1000.0

    def __init__(self, data: Any, xp: Any, edge: Any) -> None:
        self._data = data
        self._xp = xp
        self._edge = edge

    # -- autograd attributes

    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this tensor (a leaf that requires grad, or a result)."""
        return self._edge is not None

    @requires_grad.setter
    def requires_grad(self, flag: bool) -> None:
        e = self._edge
        if e is not None and e.__class__ is not AccumulateGrad:
            if flag:
                return
            raise RuntimeError(_NON_LEAF_FLAG)
        if not flag:
            self._edge = None
        elif e is None:
            if self.is_inference() and not grad_mode.inference:
                raise RuntimeError(
                    "Setting requires_grad=True on inference tensor outside InferenceMode is "
                    "not allowed."
                )
            kind = _backend.dtype_kind(self._data.dtype)
            if kind not in "fc":
                raise RuntimeError(
                    "only Tensors of floating point and complex dtype can require gradients "
                    f"(this tensor has dtype {self.dtype})"
                )
            self._edge = AccumulateGrad(self)
            group = alias_group(self)
            if group is not None:
                group.graph = True

    def requires_grad_(self, requires_grad: bool = True) -> Tensor:
        """Set requires_grad in place (leaves; True on a non-leaf is allowed) and return self."""
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self) -> Node | None:
        """The node that computed this tensor; None for leaves."""
        e = self._edge
        if e is None or e.__class__ is AccumulateGrad:
            return None
        return node_of(e)

    @property
    def is_leaf(self) -> bool:
        """True for tensors not computed by a recorded operation."""
        e = self._edge
        return e is None or e.__class__ is AccumulateGrad

    @property
    def grad(self) -> Tensor | None:
        """The gradient accumulated by backward (None until one arrives)."""
        # `_grad` is left unset until a gradient arrives: one assignment less per op.
        return getattr(self, "_grad", None)

    @grad.setter
    def grad(self, value: Tensor | None) -> None:
        if value is not None:
            if value.__class__ is not Tensor:
                raise TypeError(
                    "assigned grad expected to be a Tensor or None but got grad of type "
                    f"{type(value).__name__}"
                )
            if value._xp is not self._xp:
                raise RuntimeError(
                    "assigned grad has data of a different array library: "
                    f"{_backend.name_of(value._xp)} for a {_backend.name_of(self._xp)} tensor"
                )
            if value._data.dtype != self._data.dtype:
                raise RuntimeError(
                    f"attempting to assign a gradient with dtype '{value.dtype}' to a tensor "
                    f"with dtype '{self.dtype}'. The gradient must match the tensor's dtype."
                )
            if value.shape != self.shape:
                raise RuntimeError(
                    f"attempting to assign a gradient of size '{list(value.shape)}' to a "
                    f"tensor of size '{list(self.shape)}'. Please ensure that the gradient "
                    "and the tensor are the same size"
                )
        if grad_mode.extended and grad_mode.tracer is not None:
            grad_mode.tracer.set_grad(self, value)
        self._grad = value

    @property
    def _version(self) -> int:
        """How many times this tensor's memory was written in place."""
        vc = getattr(self, "_vc", None)
        return 0 if vc is None else vc.value

    def detach(self) -> Tensor:
        """The same memory, cut from the graph: a write to either is seen by both and counts
        as a write to both (one version counter), as PyTorch's."""
        t = Tensor(self._data, self._xp, None)
        t._vc = version_counter(self)
        share(self, t)
        return t

    def detach_(self) -> Tensor:
        """Cut this tensor from the graph in place: it becomes a leaf that needs no grad."""
        if self._edge is not None:
            self._edge = None
            self._vc = VersionCounter(self._version, True)
        return self

    # -- hooks (see _node.Hooks; the engine runs them)

    def _hook_site(self) -> tuple:
        """(node or accumulator, output index) where this tensor's gradient arrives."""
        e = self._edge
        if e is None:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
        if e.__class__ is Port:
            return e.node, e.index
        return e, 0

    def register_hook(self, hook: Any) -> RemovableHandle:
        """Call `hook(grad)` when this tensor's gradient is computed (for a leaf, before it is
        accumulated); a tensor it returns replaces the gradient. Returns a handle whose
        remove() takes the hook away."""
        node, index = self._hook_site()
        return RemovableHandle(hooks_of(node).tensor.setdefault(index, []), hook)

    def register_post_accumulate_grad_hook(self, hook: Any) -> RemovableHandle:
        """Call `hook(tensor)` on this leaf as soon as backward accumulated its .grad."""
        if not self.is_leaf:
            raise RuntimeError(
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            )
        node, _ = self._hook_site()
        return RemovableHandle(hooks_of(node).accumulated, hook)

    def retain_grad(self) -> None:
        """Keep this non-leaf's gradient in its .grad (after its hooks), adding up over
        backward calls; a no-op on a leaf."""
        if self._edge is None:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self.is_leaf or self.retains_grad:
            return
        node, index = self._hook_site()
        hooks_of(node).retain[index] = weakref.ref(self)
        live_hooks[0] += 1
        weakref.finalize(self, _forget_retained)

    @property
    def retains_grad(self) -> bool:
        """Whether retain_grad() was called on this non-leaf (for its current grad_fn)."""
        e = self._edge
        if e is None or e.__class__ is AccumulateGrad:
            return False
        node, index = (e.node, e.index) if e.__class__ is Port else (e, 0)
        hooks = getattr(node, "hooks", None)
        ref = None if hooks is None else hooks.retain.get(index)
        return ref is not None and ref() is self

    def is_inference(self) -> bool:
        """Whether this tensor was made under inference_mode."""
        vc = getattr(self, "_vc", None)
        return vc is not None and vc.inference

    # -- array attributes

    @property
    def shape(self) -> tuple[int, ...]:
        """The size of each axis, a tuple of ints."""
        return tuple(self._data.shape)

    @property
    def ndim(self) -> int:
        """The number of axes."""
        return self._data.ndim

    @property
    def size(self) -> ElementCount | None:
        """The number of elements (an int, as the Array API's `size`); called, as PyTorch's
        `size()`: the shape, or `size(dim)` one dimension's length. None where a length is
        unknown before computing (Dask after a boolean mask), as the Array API says."""
        n = 1
        for s in self._data.shape:
            if s is None or s != s:  # NaN: Dask's unknown length
                return None
            n *= s
        return ElementCount(n, self._data.shape)

    @property
    def dtype(self) -> _backend.DType:
        """chainrule's data type of the values (chainrule.float64, ...)."""
        return _backend.public(self._data.dtype)

    @property
    def device(self) -> Any:
        """The device the values live on (the backend's device object; 'cpu' for NumPy)."""
        return _backend.device(self._data)

    @property
    def data(self) -> Tensor:
        """The same memory without history and with a version counter of its own, as PyTorch's
        `.data`: a write through it (`p.data -= lr * p.grad`) changes this tensor and is seen
        by no version check."""
        d = self._data
        # An array object of its own: the version checks tell saved arrays apart by object
        # (JAX's and Dask's d[...] is d itself).
        kind = _backend.aliasing(self._xp)
        if kind is not None:
            d = d[...] if kind == "memory" else self._xp.asarray(d, copy=True)
        t = Tensor(d, self._xp, None)
        t._vc = VersionCounter()
        share(self, t)
        tracer = grad_mode.tracer if grad_mode.extended else None
        if tracer is not None:  # chainrule.compile: the same values, in a slot of their own
            tracer.realiased(((t, self._data),))
        return t

    @data.setter
    def data(self, value: Tensor) -> None:
        """Make this tensor hold `value`'s memory (its history, .grad and counter stay)."""
        if value.__class__ is not Tensor:
            raise TypeError(f"Variable data has to be a tensor, but got {type(value).__name__}")
        if value._xp is not self._xp:
            mixed_error("data =", self._xp, value._xp)
        self._data = value._data
        # Out of the group of its former memory: a counter of its own, version kept.
        self._vc = VersionCounter(self._version)
        self._view = None
        share(value, self)

    # -- conversion

    @property
    def array(self) -> Any:
        """The array this tensor wraps, of its own library (a NumPy, Dask, JAX, PyTorch, ...
        array), as it is: not copied, not computed, without history. `chainrule.asarray(a)`
        wraps one back without copying. Writing into it in place goes unseen by autograd."""
        if grad_mode.extended:
            if _backend.library(self._xp) == "vmap":
                raise RuntimeError(
                    "vmap: a tensor's .array inside vmap would be every sample's at once; "
                    "use operations on the tensor, or take .array outside vmap"
                )
            _concrete(self, ".array")
        return self._data

    def numpy(self) -> Any:
        """The values as a NumPy array: a NumPy-backed tensor that needs no grad is not copied;
        other libraries' arrays are copied to the host (a Dask array is computed)."""
        if grad_mode.extended:
            _concrete(self, "numpy()")
        d = self._data
        if isinstance(d, ndarray):
            return d.copy() if self._edge is not None else d
        return _backend.to_numpy(d)

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> Any:
        # As PyTorch: NumPy's conversion (np.asarray, code compiled against NumPy) would
        # silently cut the graph, so a tensor that requires grad refuses it.
        if self._edge is not None:
            raise RuntimeError(
                "Can't call numpy() on Tensor that requires grad. Use tensor.detach().numpy() "
                "instead (NumPy's conversion drops the graph: no gradient would reach it)."
            )
        if grad_mode.forward and _has_tangent(self):  # forward mode's equivalent
            raise RuntimeError(
                "Can't call numpy() on Tensor that has a forward-mode tangent. Use "
                "tensor.detach().numpy() instead (NumPy's conversion drops the tangent: what "
                "is computed from it would get a zero tangent)."
            )
        a = self.numpy()
        if dtype is not None:
            a = a.astype(dtype, copy=False)
        if copy:
            a = a.copy()
        return a

    def item(self) -> Any:
        """The value of a one-element tensor as a Python scalar."""
        if grad_mode.extended:
            _concrete(self, "item()")
        if self.size != 1:
            raise ValueError(
                f"a Tensor with {self.size} elements cannot be converted to a Python scalar"
            )
        d = self._data
        if isinstance(d, ndarray):
            return d.item()
        kind = _backend.dtype_kind(d.dtype)
        d = self._xp.reshape(d, ())
        return {"b": bool, "i": int, "u": int, "f": float, "c": complex}[kind](d)

    def tolist(self) -> Any:
        """The values as nested Python lists of Python scalars (a scalar for a 0-d
        tensor)."""
        return self.numpy().tolist()

    def __float__(self) -> float:
        if grad_mode.extended:
            _concrete(self, "float()")
        return float(self.item())

    def __int__(self) -> int:
        if grad_mode.extended:
            _concrete(self, "int()")
        return int(self.item())

    def __complex__(self) -> complex:
        return complex(self.item())

    def __bool__(self) -> bool:
        if grad_mode.extended:
            _concrete(self, "bool()")
        if self.size != 1:
            raise ValueError(f"the truth value of a Tensor with {self.size} elements is ambiguous")
        return bool(self.item())

    def __index__(self) -> int:
        if grad_mode.extended:
            _concrete(self, "__index__()")
        if _backend.dtype_kind(self._data.dtype) not in "iu":
            raise TypeError("only integer tensors with one element can be used as an index")
        return int(self.item())

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return (self[i] for i in range(self._data.shape[0]))

    def __hash__(self) -> int:
        return id(self)

    def __format__(self, spec: str) -> str:
        if self.size == 1 and spec:
            return format(self.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def __repr__(self) -> str:
        np = _backend.np
        extra = []
        # A lazy array is described, not computed (its values may not fit in memory).
        values = _backend.lazy_summary(self._data)
        if values is None:
            try:
                values = np.array2string(
                    np.asarray(self.numpy()), separator=", ", prefix="tensor(", threshold=200
                )
            except Exception:
                values = repr(self._data)
            if self.size == 0 and self.ndim != 1:
                extra.append(f"size={self.shape}")
            dt = self.dtype
            if dt not in (np.dtype("float64"), np.dtype("int64"), np.dtype("bool")):
                extra.append(f"dtype={dt}")
            if self._xp is not np:
                extra.append(f"backend={_backend.name_of(self._xp)}")
        fn = self.grad_fn
        if fn is not None:
            extra.append(f"grad_fn=<{fn.name()}>")
        elif self._edge is not None:
            extra.append("requires_grad=True")
        return "tensor(" + ", ".join([values] + extra) + ")"

    __str__ = __repr__

    # -- copying and pickling: the values, requires_grad and .grad travel; a graph does not.

    def __reduce_ex__(self, protocol: Any) -> tuple:
        xp = self._xp
        state = (self.requires_grad, self.grad)
        # A lazy array travels as its task graph: pickling computes nothing.
        values = self._data if _backend.is_lazy(self._data) else self.numpy()
        return _rebuild, (_backend.name_of(xp), values, state)

    def __copy__(self) -> Tensor:
        """A new leaf with the same data (and requires_grad), no .grad: as PyTorch."""
        t = Tensor(self._data, self._xp, None)
        t._vc = version_counter(self) if self._edge is None else VersionCounter(0, True)
        if self._edge is not None:
            t.requires_grad_(True)
        return t

    def __deepcopy__(self, memo: dict) -> Tensor:
        if not self.is_leaf:
            raise RuntimeError(
                "Only Tensors created explicitly by the user (graph leaves) support the "
                "deepcopy protocol at the moment."
            )
        t = Tensor(self._xp.asarray(self._data, copy=True), self._xp, None)
        converted(self, t, _deepcopied, None)
        memo[id(self)] = t
        if self._edge is not None:
            t.requires_grad_(True)
        grad = self.grad
        if grad is not None:
            t._grad = copy.deepcopy(grad, memo)
        return t

    # -- bound from the table in _methods, declared here for type checkers only
    # The operators are the primitives themselves, bound onto Tensor by setattr from one
    # table when chainrule is imported (no wrapper on the hot path), which a type checker
    # cannot follow. Their signatures are declared in this block, which does not exist at run
    # time: the table stays the one definition, and a name bound there and missing here is
    # only untyped (tests/test_typing.py checks that both list the same names).
    if TYPE_CHECKING:

        def __add__(self, other: ArrayLike, /) -> Tensor: ...
        def __sub__(self, other: ArrayLike, /) -> Tensor: ...
        def __mul__(self, other: ArrayLike, /) -> Tensor: ...
        def __truediv__(self, other: ArrayLike, /) -> Tensor: ...
        def __floordiv__(self, other: ArrayLike, /) -> Tensor: ...
        def __mod__(self, other: ArrayLike, /) -> Tensor: ...
        def __pow__(self, other: ArrayLike, /) -> Tensor: ...
        def __matmul__(self, other: ArrayLike, /) -> Tensor: ...
        def __and__(self, other: ArrayLike, /) -> Tensor: ...
        def __or__(self, other: ArrayLike, /) -> Tensor: ...
        def __xor__(self, other: ArrayLike, /) -> Tensor: ...
        def __lshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __rshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __radd__(self, other: ArrayLike, /) -> Tensor: ...
        def __rsub__(self, other: ArrayLike, /) -> Tensor: ...
        def __rmul__(self, other: ArrayLike, /) -> Tensor: ...
        def __rtruediv__(self, other: ArrayLike, /) -> Tensor: ...
        def __rfloordiv__(self, other: ArrayLike, /) -> Tensor: ...
        def __rmod__(self, other: ArrayLike, /) -> Tensor: ...
        def __rpow__(self, other: ArrayLike, /) -> Tensor: ...
        def __rmatmul__(self, other: ArrayLike, /) -> Tensor: ...
        def __rand__(self, other: ArrayLike, /) -> Tensor: ...
        def __ror__(self, other: ArrayLike, /) -> Tensor: ...
        def __rxor__(self, other: ArrayLike, /) -> Tensor: ...
        def __rlshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __rrshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __iadd__(self, other: ArrayLike, /) -> Tensor: ...
        def __isub__(self, other: ArrayLike, /) -> Tensor: ...
        def __imul__(self, other: ArrayLike, /) -> Tensor: ...
        def __itruediv__(self, other: ArrayLike, /) -> Tensor: ...
        def __ifloordiv__(self, other: ArrayLike, /) -> Tensor: ...
        def __imod__(self, other: ArrayLike, /) -> Tensor: ...
        def __ipow__(self, other: ArrayLike, /) -> Tensor: ...
        def __imatmul__(self, other: ArrayLike, /) -> Tensor: ...
        def __iand__(self, other: ArrayLike, /) -> Tensor: ...
        def __ior__(self, other: ArrayLike, /) -> Tensor: ...
        def __ixor__(self, other: ArrayLike, /) -> Tensor: ...
        def __ilshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __irshift__(self, other: ArrayLike, /) -> Tensor: ...
        def __neg__(self) -> Tensor: ...
        def __pos__(self) -> Tensor: ...
        def __abs__(self) -> Tensor: ...
        def __invert__(self) -> Tensor: ...
        # Comparisons give bool tensors, not bool: object's == is overridden, as NumPy's.
        def __eq__(self, other: ArrayLike, /) -> Tensor: ...  # type: ignore[override]
        def __ne__(self, other: ArrayLike, /) -> Tensor: ...  # type: ignore[override]
        def __lt__(self, other: ArrayLike, /) -> Tensor: ...
        def __le__(self, other: ArrayLike, /) -> Tensor: ...
        def __gt__(self, other: ArrayLike, /) -> Tensor: ...
        def __ge__(self, other: ArrayLike, /) -> Tensor: ...
        def __getitem__(self, key: IndexKey, /) -> Tensor: ...
        def __setitem__(self, key: IndexKey, value: ArrayLike, /) -> None: ...
        def __array_ufunc__(
            self, ufunc: Any, method: str, /, *inputs: Any, **kwargs: Any
        ) -> Any: ...
        def __array_function__(
            self, func: Any, types: Any, args: tuple[Any, ...], kwargs: dict[str, Any]
        ) -> Any: ...
        def __array_namespace__(self, /, *, api_version: str | None = None) -> ModuleType: ...
        def __dlpack__(
            self,
            /,
            *,
            stream: Any = None,
            max_version: tuple[int, int] | None = None,
            dl_device: Any = None,
            copy: bool | None = None,
        ) -> Any: ...
        def __dlpack_device__(self, /) -> Any: ...
        # The named methods repeat their docstrings for editors, which read these declarations.
        def to_device(self, device: Device, /, *, stream: Any = None) -> Tensor:
            """The tensor on `device`: itself when it is there already (so it stays
            differentiable); the backend rejects devices it does not know (ValueError)."""

        def backward(
            self,
            gradient: Tensor | None = None,
            retain_graph: bool | None = None,
            create_graph: bool = False,
            inputs: Tensor | Sequence[Tensor] | None = None,
        ) -> None:
            """Accumulate the gradient of this tensor into the leaves' `.grad` (see
            chainrule.autograd.backward)."""

        def abs(self) -> Tensor:
            """Elementwise abs of x (as the Array API standard); differentiable: gradient 0
            at 0."""

        # PyTorch's named methods (the table in _torch_methods)
        def sum(
            self,
            dim: Axis = None,
            keepdim: bool = False,
            *,
            dtype: DTypeLike = None,
            axis: Axis = None,
            keepdims: bool | None = None,
        ) -> Tensor:
            """The sum over `dim` (all dimensions when None); `axis`/`keepdims` are accepted as
            PyTorch accepts them (see chainrule.sum)."""

        def mean(
            self,
            dim: Axis = None,
            keepdim: bool = False,
            *,
            dtype: DTypeLike = None,
            axis: Axis = None,
            keepdims: bool | None = None,
        ) -> Tensor:
            """The mean over `dim` (all dimensions when None), computed in `dtype` if given (see
            chainrule.mean)."""

        def prod(
            self, dim: int | None = None, keepdim: bool = False, *, dtype: DTypeLike = None
        ) -> Tensor:
            """The product over `dim` (all elements when None) (see chainrule.prod)."""

        def std(
            self,
            dim: Axis | bool = None,
            unbiased: bool | None = None,
            keepdim: bool = False,
            *,
            correction: float | None = None,
            axis: Axis = None,
            keepdims: bool | None = None,
            ddof: float = 0,
            dtype: DTypeLike = None,
            out: Any = None,
        ) -> Tensor:
            """The standard deviation over `dim` (all dimensions when None), with PyTorch's default
            `correction=1` (Bessel's: the sample std; `unbiased=False` or `correction=0` for the
            population one). With NumPy's keywords (axis=, ddof=, keepdims=, out=) and none of
            PyTorch's, NumPy's method."""

        def var(
            self,
            dim: Axis | bool = None,
            unbiased: bool | None = None,
            keepdim: bool = False,
            *,
            correction: float | None = None,
            axis: Axis = None,
            keepdims: bool | None = None,
            ddof: float = 0,
            dtype: DTypeLike = None,
            out: Any = None,
        ) -> Tensor:
            """The variance over `dim` (all dimensions when None), with PyTorch's default
            `correction=1` (Bessel's: the sample var; `unbiased=False` or `correction=0` for the
            population one). With NumPy's keywords (axis=, ddof=, keepdims=, out=) and none of
            PyTorch's, NumPy's method."""

        def max(
            self,
            dim: int | Tensor | None = None,
            keepdim: bool = False,
            *,
            axis: Axis = None,
            out: Any = None,
            keepdims: bool = False,
        ) -> Any:
            """As PyTorch's: x.max() the maximum of all elements (ties share the gradient);
            x.max(dim) a (values, indices) pair along dim (the gradient goes to the index chosen,
            the first maximum); x.max(other) the elementwise maximum. With NumPy's
            keywords (axis=, ddof=, keepdims=, out=) and none of PyTorch's, NumPy's method."""

        def min(
            self,
            dim: int | Tensor | None = None,
            keepdim: bool = False,
            *,
            axis: Axis = None,
            out: Any = None,
            keepdims: bool = False,
        ) -> Any:
            """As PyTorch's: x.min() the minimum of all elements (ties share the gradient);
            x.min(dim) a (values, indices) pair along dim (the gradient goes to the index chosen,
            the first minimum); x.min(other) the elementwise minimum. With NumPy's
            keywords (axis=, ddof=, keepdims=, out=) and none of PyTorch's, NumPy's method."""

        def argmax(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
            """The index of the first maximum along `dim` (of all elements when None)."""

        def argmin(self, dim: int | None = None, keepdim: bool = False) -> Tensor:
            """The index of the first minimum along `dim` (of all elements when None)."""

        def amax(self, dim: Axis = (), keepdim: bool = False) -> Tensor:
            """The maximum over `dim` (all dimensions when empty); ties share the gradient."""

        def amin(self, dim: Axis = (), keepdim: bool = False) -> Tensor:
            """The minimum over `dim` (all dimensions when empty); ties share the gradient."""

        def all(
            self,
            dim: Axis = None,
            keepdim: bool = False,
            *,
            axis: Axis = None,
            out: Any = None,
            keepdims: bool = False,
        ) -> Tensor:
            """Whether all elements are true over `dim` (all dimensions when None). With NumPy's
            keywords (axis=, ddof=, keepdims=, out=) and none of PyTorch's, NumPy's method."""

        def any(
            self,
            dim: Axis = None,
            keepdim: bool = False,
            *,
            axis: Axis = None,
            out: Any = None,
            keepdims: bool = False,
        ) -> Tensor:
            """Whether any elements are true over `dim` (all dimensions when None). With NumPy's
            keywords (axis=, ddof=, keepdims=, out=) and none of PyTorch's, NumPy's method."""

        def cumsum(self, dim: int, *, dtype: DTypeLike = None) -> Tensor:
            """Running sums along `dim` (see chainrule.cumulative_sum)."""

        def norm(
            self,
            p: float | str = "fro",
            dim: Axis = None,
            keepdim: bool = False,
            dtype: DTypeLike = None,
        ) -> Tensor:
            """The p-norm over `dim` (all elements when None): 'fro' is the 2-norm of the elements;
            'nuc' the nuclear norm of matrices over `dim` (two dimensions)."""

        def view(self, *shape: Any) -> Tensor:
            """This tensor in a new shape (-1 for one size inferred), as reshape. Reinterpreting the
            bytes as another dtype (`view(dtype)`) is not supported."""

        def view_as(self, other: Tensor) -> Tensor:
            """This tensor in `other`'s shape."""

        def reshape(self, *shape: int | Sequence[int]) -> Tensor:
            """This tensor in a new shape (`t.reshape(2, 3)` or `t.reshape((2, 3))`)."""

        def flatten(self, start_dim: int = 0, end_dim: int = -1) -> Tensor:
            """The dimensions from `start_dim` to `end_dim` (inclusive) merged into one; a 0-d
            tensor becomes 1-d."""

        def squeeze(self, dim: int | Sequence[int] | None = None, *, axis: Axis = None) -> Tensor:
            """This tensor without its dimensions of size 1 (only those in `dim`, when given; a
            dimension in `dim` of another size is kept, as PyTorch). With NumPy's keywords
            (axis=, ddof=, keepdims=, out=) and none of PyTorch's, NumPy's method."""

        def unsqueeze(self, dim: int) -> Tensor:
            """This tensor with a dimension of size 1 inserted at `dim`."""

        def permute(self, *dims: int | Sequence[int]) -> Tensor:
            """This tensor with its dimensions in the order `dims`."""

        def transpose(self, dim0: int, dim1: int) -> Tensor:
            """This tensor with dimensions `dim0` and `dim1` swapped."""

        def t(self) -> Tensor:
            """The transpose of a matrix; a tensor of fewer than 2 dimensions as it is."""

        def contiguous(self, memory_format: Any = None) -> Tensor:
            """This tensor: chainrule keeps no strides of its own."""

        def expand(self, *sizes: int | Sequence[int]) -> Tensor:
            """This tensor broadcast to `sizes` (-1 keeps a dimension's size; new dimensions go
            first)."""

        def expand_as(self, other: Tensor) -> Tensor:
            """This tensor broadcast to `other`'s shape."""

        def repeat(self, *sizes: int | Sequence[int]) -> Tensor:
            """This tensor tiled `sizes[i]` times along dimension i (PyTorch's repeat, NumPy's tile;
            `sizes` may add leading dimensions)."""

        def chunk(self, chunks: int, dim: int = 0) -> tuple[Tensor, ...]:
            """`chunks` pieces along `dim`, each of ceil(size / chunks) but the last (fewer pieces
            when the size runs out first)."""

        def split(self, split_size_or_sections: int | Sequence[int], dim: int = 0) -> tuple:
            """Pieces along `dim`: of `split_size_or_sections` each (the last smaller), or of the
            sizes listed (which must add up to the dimension's size)."""

        def gather(self, dim: int, index: Tensor) -> Tensor:
            """The elements at `index` along `dim`: out[i][j] = self[index[i][j]][j] for dim 0, and
            so on; index has self's number of dimensions and sizes no larger in the others."""

        def exp(self) -> Tensor:
            """Elementwise exp of x (as the Array API standard); differentiable."""

        def log(self) -> Tensor:
            """Elementwise log of x (as the Array API standard); differentiable."""

        def sin(self) -> Tensor:
            """Elementwise sin of x (as the Array API standard); differentiable."""

        def cos(self) -> Tensor:
            """Elementwise cos of x (as the Array API standard); differentiable."""

        def tanh(self) -> Tensor:
            """Elementwise tanh of x (as the Array API standard); differentiable."""

        def sqrt(self) -> Tensor:
            """Elementwise sqrt of x (as the Array API standard); differentiable."""

        def sigmoid(self) -> Tensor:
            """1 / (1 + exp(-x))."""

        def relu(self) -> Tensor:
            """max(x, 0), with gradient 0 at 0 (as PyTorch)."""

        def softmax(self, dim: int, *, dtype: DTypeLike = None) -> Tensor:
            """exp(x) normalised to sum to 1 along `dim` (see chainrule.softmax)."""

        def log_softmax(self, dim: int, *, dtype: DTypeLike = None) -> Tensor:
            """log(softmax(x)) along `dim`, computed without overflow."""

        def pow(self, exponent: ArrayLike) -> Tensor:
            """This tensor to the power `exponent`."""

        def add(self, other: ArrayLike, *, alpha: float = 1) -> Tensor:
            """self + alpha * other."""

        def sub(self, other: ArrayLike, *, alpha: float = 1) -> Tensor:
            """self - alpha * other."""

        def mul(self, other: ArrayLike) -> Tensor:
            """self * other."""

        def div(self, other: ArrayLike) -> Tensor:
            """self / other."""

        def masked_fill(self, mask: Tensor, value: ArrayLike) -> Tensor:
            """This tensor with `value` where `mask` holds (no gradient flows there to self)."""

        def where(self, condition: Tensor, other: ArrayLike) -> Tensor:
            """Elements of this tensor where `condition` holds, else of `other`."""

        def clamp(self, min: ArrayLike = None, max: ArrayLike = None) -> Tensor:
            """This tensor limited to [min, max] (see chainrule.clip)."""

        def clip(self, min: ArrayLike = None, max: ArrayLike = None) -> Tensor:
            """This tensor limited to [min, max] (see chainrule.clip)."""

        def matmul(self, other: ArrayLike, /) -> Tensor:
            """The matrix product of x1 and x2 (as the Array API standard); differentiable."""

        def mm(self, mat2: Tensor) -> Tensor:
            """The product of two matrices."""

        def bmm(self, mat2: Tensor) -> Tensor:
            """The products of two batches of matrices (3-D tensors)."""

        def add_(self, other: ArrayLike, *, alpha: float = 1) -> Tensor:
            """self += alpha * other, in place (as the operator)."""

        def sub_(self, other: ArrayLike, *, alpha: float = 1) -> Tensor:
            """self -= alpha * other, in place (as the operator)."""

        def mul_(self, other: ArrayLike) -> Tensor:
            """self *= other, in place (as the operator)."""

        def div_(self, other: ArrayLike) -> Tensor:
            """self /= other, in place (as the operator)."""

        def zero_(self) -> Tensor:
            """Fill this tensor with zeros, in place."""

        def fill_(self, value: ArrayLike) -> Tensor:
            """Fill this tensor with `value`, in place (a tensor value's gradient is the sum of the
            filled elements' gradient)."""

        def copy_(self, src: ArrayLike, non_blocking: bool = False) -> Tensor:
            """Write `src` (broadcast to this tensor's shape, cast to its dtype) into this tensor;
            the gradient flows to src."""

        def clamp_(self, min: ArrayLike = None, max: ArrayLike = None) -> Tensor:
            """Limit this tensor to [min, max], in place."""

        def normal_(
            self, mean: float = 0.0, std: float = 1.0, *, generator: Generator | None = None
        ) -> Tensor:
            """Fill this tensor with normal numbers of mean `mean` and standard deviation `std`, in
            place, from `generator` (default: chainrule.random's)."""

        def uniform_(
            self, low: float = 0.0, high: float = 1.0, *, generator: Generator | None = None
        ) -> Tensor:
            """Fill this tensor with numbers uniform in [low, high), in place (PyTorch names the
            bounds `from` and `to`)."""

        def to(self, *args: Any, **kwargs: Any) -> Tensor:
            """This tensor in another dtype and/or on another device: `to(dtype)`, `to(device)`,
            `to(device, dtype)`, `to(other)` (other's dtype and device), `dtype=`, `device=`,
            `copy=`. Itself when nothing changes and no copy is asked for (as PyTorch)."""

        def clone(self, *, memory_format: Any = None) -> Tensor:
            """A copy of this tensor that keeps its history (the gradient flows back to it)."""

        def float(self) -> Tensor:
            """This tensor as float32 (itself if it is already)."""

        def double(self) -> Tensor:
            """This tensor as float64 (itself if it is already)."""

        def half(self) -> Tensor:
            """This tensor as float16 (itself if it is already)."""

        def long(self) -> Tensor:
            """This tensor as int64 (itself if it is already)."""

        def int(self) -> Tensor:
            """This tensor as int32 (itself if it is already)."""

        def bool(self) -> Tensor:
            """This tensor as bool (itself if it is already)."""

        def dim(self) -> int:
            """The number of dimensions (ndim)."""

        def numel(self) -> int:
            """The number of elements."""

        def element_size(self) -> int:
            """The size of one element in bytes."""

        def new_zeros(
            self,
            *size: int | Sequence[int],
            dtype: DTypeLike = None,
            device: Device = None,
            requires_grad: bool = False,
        ) -> Tensor:
            """A new tensor of zeros of `size`, in this tensor's library, dtype and device unless
            `dtype`/`device` say otherwise."""

        def new_ones(
            self,
            *size: int | Sequence[int],
            dtype: DTypeLike = None,
            device: Device = None,
            requires_grad: bool = False,
        ) -> Tensor:
            """A new tensor of ones of `size`, in this tensor's library, dtype and device unless
            `dtype`/`device` say otherwise."""

        def new_full(
            self,
            size: Sequence[int],
            fill_value: Any,
            *,
            dtype: DTypeLike = None,
            device: Device = None,
            requires_grad: bool = False,
        ) -> Tensor:
            """A new tensor of `size` filled with `fill_value`, in this tensor's library, dtype and
            device unless `dtype`/`device` say otherwise."""

        def new_tensor(
            self,
            data: ArrayLike,
            *,
            dtype: DTypeLike = None,
            device: Device = None,
            requires_grad: bool = False,
        ) -> Tensor:
            """A new leaf holding a copy of `data`, in this tensor's library, dtype (unless `dtype`)
            and device (unless `device`)."""

        # NumPy's ndarray methods (_numpy_methods).
        def ravel(self, order: str = "C") -> Tensor:
            """The elements as a 1-D tensor (NumPy's ravel)."""

        def astype(self, dtype: DTypeLike, copy: bool = True) -> Tensor:
            """This tensor in `dtype` (see chainrule.astype)."""

        def conj(self) -> Tensor:
            """The complex conjugate (see chainrule.conj)."""

        def dot(self, b: ArrayLike) -> Tensor:
            """numpy.dot(self, b): a product with a scalar, matmul up to a 2-D `b`, else the
            sum over the last axis of self and the second-to-last of b."""

        def copy(self) -> Tensor:
            """A copy of this tensor that keeps its history (the gradient flows back to it)."""

        def fill(self, value: ArrayLike) -> None:
            """Fill this tensor with `value`, in place (NumPy's fill; written as item
            assignment)."""

        @property
        def T(self) -> Tensor:
            """This tensor with its axes reversed (the transpose of a matrix)."""

        @property
        def mT(self) -> Tensor:
            """This tensor with its last two axes swapped (stacked transposes)."""

        def compute(self, **kwargs: Any) -> Tensor:
            """The values computed, as a tensor of the library of the chunks (NumPy for most
            Dask arrays) without history: the same as `dask.compute(t)[0]`. `kwargs` go to
            Dask (e.g. `scheduler=`). A tensor of a library that is not lazy is returned as it
            is."""

        def persist(self, **kwargs: Any) -> Tensor:
            """The same tensor with its values computed and kept by the scheduler (on a
            cluster's workers), so later operations start from them instead of recomputing its
            task graph: the same as `dask.persist(t)[0]`. Its place in the graph stays: a
            result keeps its grad_fn (gradients flow on to the history it came from), a leaf is
            a new leaf with the same requires_grad. A tensor of a library that is not lazy is
            returned as it is."""

        # The Dask collection protocol (chainrule._lazy): a tensor is a Dask collection
        # where it wraps a Dask array; elsewhere __dask_graph__() is None.
        def __dask_graph__(self) -> Any: ...
        def __dask_keys__(self) -> Any: ...
        def __dask_layers__(self) -> Any: ...
        def __dask_tokenize__(self) -> Any: ...
        def __dask_postcompute__(self) -> tuple[Any, tuple[Any, ...]]: ...
        def __dask_postpersist__(self) -> tuple[Any, tuple[Any, ...]]: ...
        @staticmethod
        def __dask_scheduler__(dsk: Any, keys: Any, **kwargs: Any) -> Any: ...
        @staticmethod
        def __dask_optimize__(dsk: Any, keys: Any, **kwargs: Any) -> Any: ...


def _forget_retained() -> None:
    live_hooks[0] -= 1


def _concrete(t: Tensor, what: str) -> None:
    """A conversion of t's values to Python while a feature is on: compile's trace refuses it
    (the values are not known when the trace is replayed)."""
    tracer = grad_mode.tracer
    if tracer is not None:
        tracer.concrete(t, what)


def converted(src: Any, out: Tensor, fn: Any, p: Any) -> None:
    """`out` was made outside the recorded operations, as fn(xp, values of src, p) (a copy
    or a conversion of a tensor or an array): compile's trace records it as a computation,
    so that a replay makes it again from src's values at that call."""
    if grad_mode.extended and grad_mode.tracer is not None:
        grad_mode.tracer.converted(src, out, fn, p)


def _deepcopied(xp: Any, a: Any, p: Any) -> Any:
    return xp.asarray(a, copy=True)


def _rebuild(library: str, values: Any, state: tuple) -> Tensor:
    """Unpickle a tensor: values in the array library named, requires_grad, .grad."""
    xp = _backend.namespace_named(library)
    t = Tensor(_backend.normalize(xp.asarray(values), xp), xp, None)
    requires_grad, grad = state
    if requires_grad:
        t.requires_grad_(True)
    if grad is not None:
        t._grad = grad
    return t
