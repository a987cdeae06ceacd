"""Forward-mode automatic differentiation, with PyTorch's interface: inside `dual_level()`,
`make_dual(primal, tangent)` gives a dual tensor; every operation on dual tensors computes its
outputs' tangents with the rule table's JVPs, under no_grad too; `unpack_dual(t)` returns
(primal, tangent). Levels nest (unlike PyTorch's): chainrule.func.jvp opens one per call."""

from __future__ import annotations

import itertools
from collections import namedtuple
from typing import Any

from .. import _backend, _factories, _inplace, _namespace, _rules, _tensor
from .._backend import FLOAT32, FLOAT64, KIND, ndarray
from .._batching import NAMESPACE, Batched, level_of
from .._mode import set_feature
from .._node import Port
from .._state import STATE
from .._tensor import Tensor, as_tensor, grad_mode
from ._batched import lift
from ._namespaces import GRAPH_NAMESPACE

__all__ = [
    "UnpackedDualTensor",
    "dual_level",
    "enter_dual_level",
    "exit_dual_level",
    "make_dual",
    "unpack_dual",
]

# A tensor's tangents are `t._fw`: {level: tangent}, None, or unset. A tangent is a tensor,
# or (computed on raw arrays, where nothing differentiates it) a raw array of the tensor's
# library, made a tensor when first read as one (_wrapped). Levels are numbers never reused;
# grad_mode.forward holds the active ones, outermost first. A tangent of a level that has
# exited stays on its tensor but is never read again.
_LEVELS = itertools.count(1)

UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
"""`unpack_dual`'s result, a named pair: `primal`, and `tangent` (None for a tensor without one
at the current level)."""
UnpackedDualTensor.__doc__ = (
    "unpack_dual's result, a named pair: primal, and tangent (None for a tensor without one at "
    "the current level)."
)


def enter_dual_level() -> int:
    """Open a new forward-mode level, inside the active ones, and return it."""
    level = next(_LEVELS)
    set_feature("forward", grad_mode.forward + (level,))
    return level


def exit_dual_level(*, level: int | None = None) -> None:
    """Close the innermost level (`level`, if given, must be it): its tangents are gone."""
    levels = grad_mode.forward
    if not levels or (level is not None and level != levels[-1]):
        raise RuntimeError(
            "Trying to exit a forward AD level that was not the last one that was created. "
            "This is not supported."
        )
    set_feature("forward", levels[:-1])


class dual_level:
    """Context manager of a forward-mode level: dual tensors made inside it carry tangents
    until it exits. `with dual_level() as level:` gives the level."""

    def __enter__(self) -> int:
        self.level = enter_dual_level()
        return self.level

    def __exit__(self, *exc: object) -> None:
        exit_dual_level(level=self.level)


class _Shown:
    """Context manager that lets operations see only the forward levels `levels`."""

    __slots__ = ("levels", "prev")

    def __init__(self, levels: tuple) -> None:
        self.levels = levels

    def __enter__(self) -> None:
        self.prev = grad_mode.forward
        set_feature("forward", self.levels)

    def __exit__(self, *exc: object) -> None:
        set_feature("forward", self.prev)


def shown(levels: tuple) -> _Shown:
    """While computing the tangent of level L, operations see only the levels outside L: so
    that tangent carries tangents of the outer levels only (no perturbation confusion)."""
    return _Shown(levels)


def _level(level: int | None, what: str) -> int | None:
    levels = grad_mode.forward
    if level is None:
        return levels[-1] if levels else None
    if level not in levels:
        raise RuntimeError(f"{what}: forward AD level {level} is not active")
    return level


def _wrapped(fw: dict, level: int, xp) -> Tensor:
    """The tangent fw[level] as a tensor (of namespace xp), kept so."""
    v = fw[level]
    if v.__class__ is not Tensor:
        v = fw[level] = Tensor(v, xp, None)
    return v


def _tangents_of(t: Any) -> dict:
    """t's tangents (as tensors) at the levels that operations see now."""
    fw = getattr(t, "_fw", None) if t.__class__ is Tensor else None
    if not fw:
        return {}
    levels = grad_mode.forward
    return {k: _wrapped(fw, k, t._xp) for k in list(fw) if k in levels}


def make_dual(tensor: Tensor, tangent: Tensor, *, level: int | None = None) -> Tensor:
    """A view of `tensor` carrying `tangent` at `level` (the innermost active one by default).
    A tangent of another floating dtype is cast to the tensor's."""
    level = _level(level, "make_dual")
    if level is None:
        raise RuntimeError(
            "Trying to create a dual Tensor for forward AD but no level exists, make sure to "
            "enter_dual_level() first."
        )
    tensor = as_tensor(tensor)
    tangent = as_tensor(tangent)
    for what, t in (("primal", tensor), ("tangent", tangent)):
        kind = _backend.dtype_kind(t._data.dtype)
        if kind not in "fc":
            raise ValueError(f"Expected {what} to be floating point or complex, but got: {t.dtype}")
    if tangent._xp is not tensor._xp:
        top = max(level_of(tensor._data), level_of(tangent._data))
        if not top:
            _tensor.mixed_error("make_dual", tensor._xp, tangent._xp)
        # Inside vmap, a tangent per sample makes the primal one too (the same value each).
        if level_of(tensor._data) < top:
            tensor = lift(tensor, top)
        if level_of(tangent._data) < top:
            tangent = lift(tangent, top)
    if tangent.shape != tensor.shape:
        raise RuntimeError(
            "Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size {list(tensor.shape)} "
            f"while the given forward gradient is of size {list(tangent.shape)}."
        )
    if tangent._data.dtype != tensor._data.dtype:
        tangent = _namespace.astype(tangent, tensor.dtype)
    fw = _tangents_of(tensor)
    # The dual is a view of the primal (recorded when it needs grad, so gradients reach it),
    # with the primal's tangents at the other levels.
    with shown(()):
        dual = _rules.OPS["reshape"](tensor, (tensor.shape, tensor.shape))
    fw[level] = tangent
    dual._fw = fw
    _inplace.dual_bases[id(dual)] = dual  # its views' tangents are views of its own
    return dual


def unpack_dual(tensor: Tensor, *, level: int | None = None) -> UnpackedDualTensor:
    """(primal, tangent) of `tensor` at `level` (the innermost active one by default): the
    primal a view without that tangent; the tangent None where there is none (a plain tensor,
    a level that has exited)."""
    level = _level(level, "unpack_dual")
    fw = getattr(tensor, "_fw", None) if tensor.__class__ is Tensor else None
    if fw is None or level is None or fw.get(level) is None:
        return UnpackedDualTensor(tensor, None)
    tangent = _wrapped(fw, level, tensor._xp)
    primal = Tensor(tensor._data, tensor._xp, tensor._edge)
    _tensor.same_values(tensor, primal)
    rest = _tangents_of(tensor)
    del rest[level]
    if rest:
        primal._fw = rest
    return UnpackedDualTensor(primal, tangent)


# ----------------------------------------------------------------------------- propagation


def _tangents(rule, xs, outs, p, results) -> None:
    """Forward mode's part of every operation (`STATE.forward`): the results'
    tangents at the visible dual levels, and on a recorded node what a VJP run on tensors needs
    to carry tangents on. One level and raw arrays (nothing differentiates the tangent) has
    a path of its own: every operation of a JVP takes it (benchmarks/jvp.py)."""
    xp = results[0]._xp
    levels = grad_mode.forward
    if rule.jvp is None:  # a rule without derivative (nondiff): its results carry none
        for r in results:
            r._fw = None
        return
    if len(levels) != 1 or rule.multi:
        _propagate(rule, xs, xp, outs, results, p, levels)
    else:
        level = levels[0]
        ts = None
        differentiable = False
        n = len(xs)
        for i in range(n):
            x = xs[i]
            if x.__class__ is Tensor:
                try:
                    fw = x._fw
                except AttributeError:
                    x._fw = fw = None
                if x._edge is not None:
                    differentiable = True
                if fw is not None:
                    t = fw.get(level)
                    if t is not None:
                        if ts is None:
                            ts = [None] * n
                        if t.__class__ is Tensor:
                            if t._edge is not None:
                                differentiable = True
                            t = t._data
                        ts[i] = t
        r = results[0]
        if ts is None:
            r._fw = None
        elif differentiable and grad_mode.enabled:
            _push(rule, xs, xp, outs, results, p, (), level, _tangents_at(xs, level), True)
        else:
            ns = _RAW_NAMESPACES.get(id(xp)) or _rules.raw_namespace(xp)
            if xp is NAMESPACE:
                ts = _batched_tangents(ts, xs)
            if n == 1:
                t = rule.jvp(ns, (ts[0],), (xs[0]._data,), outs, p)
            elif n == 2:
                x0, x1 = xs
                t = rule.jvp(
                    ns,
                    (ts[0], ts[1]),
                    (
                        x0._data if x0.__class__ is Tensor else x0,
                        x1._data if x1.__class__ is Tensor else x1,
                    ),
                    outs,
                    p,
                )
            else:
                rxs = tuple([x._data if x.__class__ is Tensor else x for x in xs])
                t = rule.jvp(ns, tuple(ts), rxs, outs, p)
            data = r._data
            # A NumPy tangent as the JVP returned it, when it is r's dtype (a floating one)
            # and shape (same rank and size, for a shape that broadcasts to r's); else fitted.
            if (
                t.__class__ is ndarray
                and t.dtype is data.dtype
                and t.dtype.kind == "f"
                and t.ndim == data.ndim
                and t.size == data.size
            ):
                r._fw = {level: t}
            else:
                _attach(rule, r, t, level, False, True)
    e = results[0]._edge
    if e is not None:
        node = e.node if e.__class__ is Port else e
        if node.saved is not None:
            keep_saved_tangents(node, xs)


_RAW_NAMESPACES = _rules.RAW_NAMESPACES


def _lean(rule, x, y, xd, yd, out, p, res, level) -> None:
    """Forward mode's lean path (`STATE.forward_lean`) for the result `res` of a one-input (y, yd
    None) or two-input fast path: one level, no other feature on, a result not recorded and
    tangents that nothing differentiates; anything else takes `_tangents`. The chains of tiny
    operations of benchmarks/jvp.py (W1, W3) need it: the generic path's tuples, dispatch and
    checks cost more than a plain operation."""
    tx = ty = None
    if x.__class__ is Tensor:
        try:
            fw = x._fw
        except AttributeError:
            x._fw = fw = None
        if fw is not None:
            tx = fw.get(level)
    if y.__class__ is Tensor:
        try:
            fw = y._fw
        except AttributeError:
            y._fw = fw = None
        if fw is not None:
            ty = fw.get(level)
    jvp = rule.jvp
    if tx is None and ty is None or jvp is None:
        res._fw = None
        return
    xp = res._xp
    if tx.__class__ is Tensor:  # a tangent given to make_dual
        tx = tx._data if tx._edge is None else _GENERIC
    if ty.__class__ is Tensor:
        ty = ty._data if ty._edge is None else _GENERIC
    if res._edge is not None or tx is _GENERIC or ty is _GENERIC or xp is NAMESPACE:
        xs = (x,) if y is None and yd is None else (x, y)
        _factories._features(rule, xs, (out,), p, (res,))
        return
    ns = _RAW_NAMESPACES.get(id(xp)) or _rules.raw_namespace(xp)
    parts = rule.jvp_formulas
    if y is None and yd is None:
        t = parts[0](ns, tx, xd, out, p) if parts else jvp(ns, (tx,), (xd,), (out,), p)
    elif not parts:
        t = jvp(ns, (tx, ty), (xd, yd), (out,), p)
    else:
        t = None if tx is None else parts[0](ns, tx, xd, yd, out)
        if ty is not None:
            t2 = parts[1](ns, ty, xd, yd, out)
            t = t2 if t is None else t + t2
    # A NumPy tangent as the JVP returned it, when it is the result's dtype (a floating one)
    # and shape; else fitted.
    if t.__class__ is ndarray and t.dtype is out.dtype and t.shape == out.shape:
        d = out.dtype
        if d is FLOAT64 or d is FLOAT32 or KIND[d.__class__][d] == "f":
            res._fw = {level: t}
            return
    _attach(rule, res, t, level, False, True)


_GENERIC = object()  # a tangent that something differentiates: the generic path


def _fw_of(x: Tensor):
    """x's tangents, or None. A tensor made outside forward mode has no `_fw` yet: it gets
    None, once (reading a missing slot raises, which costs more than the rest of an op)."""
    try:
        return x._fw
    except AttributeError:
        x._fw = None
        return None


def _propagate(rule, xs, xp, outs, results, p, levels) -> None:
    """The results' tangents at each visible level where an input has one, outer levels
    first (so that a tangent computed on tensors sees the outputs' outer tangents)."""
    n = len(xs)
    fws = [_fw_of(x) if x.__class__ is Tensor else None for x in xs]
    fresh = True  # the results have no tangents yet
    for k, level in enumerate(levels):
        ts = None
        for i in range(n):
            fw = fws[i]
            if fw is not None:
                t = fw.get(level)
                if t is not None:
                    if ts is None:
                        ts = [None] * n
                    ts[i] = t
        if ts is not None:
            _push(rule, xs, xp, outs, results, p, levels[:k], level, ts, fresh)
            fresh = False
    if fresh:
        for r in results:
            r._fw = None


def _batched_tangents(ts, xs) -> list:
    """Inside vmap, where an input is a Batched array, tangents of another library as Batched
    arrays (the same for every sample): a JVP's operators then meet Batched arrays only (see
    _batching.asarray)."""
    for x in xs:
        if x.__class__ is Tensor and x._data.__class__ is Batched:
            return [t if t is None or t.__class__ is Batched else NAMESPACE.asarray(t) for t in ts]
    return ts


def _tangents_at(xs, level: int) -> list:
    """The inputs' tangents at `level`, as tensors (None where an input has none)."""
    out = []
    for x in xs:
        fw = _fw_of(x) if x.__class__ is Tensor else None
        out.append(None if fw is None or fw.get(level) is None else _wrapped(fw, level, x._xp))
    return out


def _on_tensors(xs, ts, outer: tuple) -> bool:
    """Whether a tangent must be computed on tensors, so that it is differentiable: when it
    would be recorded (grad mode on, an input or tangent needs grad), or when an input or
    tangent carries a tangent of an outer level."""
    if grad_mode.enabled:
        for v in xs:
            if v.__class__ is Tensor and v._edge is not None:
                return True
        for v in ts:
            if v.__class__ is Tensor and v._edge is not None:
                return True
    if outer:
        for v in (*xs, *ts):
            fw = _fw_of(v) if v.__class__ is Tensor else None
            if fw is not None and any(k in fw for k in outer):
                return True
    return False


def _push(rule, xs, xp, outs, results, p, outer, level, ts, fresh) -> None:
    """The results' tangents at `level`, from the inputs' tangents `ts`; `outer`: the
    visible levels outside it; `fresh`: the results have no tangent yet."""
    if _on_tensors(xs, ts, outer):
        ts = tuple([t if t is None or t.__class__ is Tensor else Tensor(t, xp, None) for t in ts])
        with shown(outer):
            touts = rule.jvp(GRAPH_NAMESPACE, ts, xs, results, p)
        tensors = True
    else:
        # On raw arrays: nothing differentiates this tangent.
        rts = tuple([t._data if t.__class__ is Tensor else t for t in ts])
        if xp is NAMESPACE:
            rts = _batched_tangents(rts, xs)
        rxs = tuple([x._data if x.__class__ is Tensor else x for x in xs])
        touts = rule.jvp(_rules.raw_namespace(xp), rts, rxs, outs, p)
        tensors = False
    if not rule.multi:
        touts = (touts,)
    for r, t in zip(results, touts):
        _attach(rule, r, t, level, tensors, fresh)


def _attach(rule, r: Tensor, t, level: int, tensors: bool, fresh: bool) -> None:
    """Give result r the tangent t at `level`: fitted to r's shape and dtype; none for a
    result that is not floating. A complex result of a rule for real values only raises."""
    d = r._data.dtype
    kind = KIND[d.__class__][d]
    if t is None or kind != "f":
        if t is None or kind != "c":
            if fresh:
                r._fw = None
            return
        if rule.complex is None:
            raise NotImplementedError(
                f"{rule.name}: the forward-mode derivative through complex values is not "
                "implemented"
            )
    t = _fitted(t, r, tensors)
    if fresh:
        r._fw = {level: t}
        return
    fw = r._fw
    if fw is None:
        r._fw = {level: t}
    else:
        fw[level] = t


def _fitted(t, r: Tensor, tensors: bool):
    """Tangent t of r's shape and dtype (a JVP term may broadcast later, or keep an input's
    dtype): a tensor from a JVP run on tensors, else a raw array."""
    if tensors:
        if t.__class__ is not Tensor:
            t = _tensor.constant(t, r._xp)
        if t.shape != r.shape:
            t = _namespace.broadcast_to(t, r.shape)
        if t._data.dtype != r._data.dtype:
            t = _namespace.astype(t, r.dtype)
        return t
    xp = r._xp
    t = _backend.normalize(t, xp) if _backend.is_array(t) else xp.asarray(t)
    if tuple(t.shape) != tuple(r._data.shape):
        t = xp.broadcast_to(t, r._data.shape)
    if t.dtype != r._data.dtype:
        t = xp.astype(t, r._data.dtype)
    return t


# Forward over reverse: a VJP run on tensors must see the tangents of the values its node
# saved. A node recorded while its inputs had tangents keeps, in `node.fw`, (the raw inputs,
# the inputs' tangents, None); a saved output's tangent is computed again from them when the
# node's saved values are unpacked, with the output on its node (keeping it on the node would
# make a cycle: the tangent's own graph can lead back to the node). A custom Function's node
# keeps (None, the inputs' tangents, its outputs' tangents cut from any graph) instead.


def keep_saved_tangents(node, xs, outputs=None) -> None:
    """Note on `node` what its saved values' tangents are made of (see above)."""
    fws = tuple(_fw_of(x) if x.__class__ is Tensor else None for x in xs)
    if outputs is None:
        if any(fw is not None for fw in fws):
            node.fw = (tuple(x._data if x.__class__ is Tensor else x for x in xs), fws, None)
        return
    outs = tuple(_cut(o) if o.__class__ is Tensor else None for o in outputs)
    if any(fw is not None for fw in fws + outs):
        node.fw = (None, fws, outs)


def _cut(o: Tensor):
    """A copy of o's tangents (and theirs, to every depth) without reverse-mode edges."""
    fw = _fw_of(o)
    if fw is None:
        return None
    top = {}
    stack = [(fw, top)]
    while stack:
        src, dst = stack.pop()
        for level, t in src.items():
            if t.__class__ is not Tensor:
                dst[level] = t
                continue
            copy = Tensor(t._data, t._xp, None)
            inner = getattr(t, "_fw", None)
            if inner is not None:
                copy._fw = {}
                stack.append((inner, copy._fw))
            dst[level] = copy
    return top


def saved_with_tangents(node, saved: tuple, raw: tuple, backend) -> tuple:
    """`saved`, a node's saved values as tensors (see the engine's _rewrap; `raw`: as arrays),
    with the tangents they had when the node was recorded."""
    raws, in_fws, out_fws = node.fw
    edges = node.edges
    n, n_out = len(edges), node.n_out
    saved = list(saved)
    xs = []
    for i, fw in enumerate(in_fws):
        x = saved[i]
        if x is None and raws is not None:
            r = raws[i]
            x = r if not _backend.is_array(r) else Tensor(r, backend, edges[i])
        if fw is not None and x.__class__ is Tensor:
            x._fw = fw
        xs.append(x)
    outs = saved[n : n + n_out]
    if out_fws is not None:
        for o, fw in zip(outs, out_fws):
            if o is not None and fw is not None:
                o._fw = fw
    elif outs and outs[0] is not None and grad_mode.forward:
        raw_outs = tuple(raw[n : n + n_out])
        _propagate(
            node.rule, tuple(xs), backend, raw_outs, tuple(outs), node.params, grad_mode.forward
        )
    return tuple(saved)


def function_tangents(cls, ctx, args, outputs) -> None:
    """The tangents of a custom Function's outputs, by its jvp, at each visible level where an
    argument has one. jvp gets one tangent per argument: zeros for a floating tensor without
    one, None for anything else (as PyTorch); `ctx.saved_tensors` are those of
    `ctx.save_for_forward`."""
    levels = grad_mode.forward
    for i, level in enumerate(levels):
        tangents = _tangents_at(args, level)
        if all(t is None for t in tangents):
            continue
        ts = []
        for a, t in zip(args, tangents):
            if t is None and a.__class__ is Tensor and _backend.dtype_kind(a._data.dtype) == "f":
                t = _namespace.zeros_like(a)
            ts.append(t)
        ctx._saved_tensors = getattr(ctx, "saved_for_forward", ())
        try:
            with shown(levels[:i]):
                touts = cls.jvp(ctx, *ts)
        finally:
            ctx._saved_tensors = ()
        touts = touts if isinstance(touts, tuple) else (touts,)
        if len(touts) != len(outputs):
            raise RuntimeError(
                f"function {cls.__name__}.jvp returned an incorrect number of tangents "
                f"(expected {len(outputs)}, got {len(touts)})"
            )
        for k, (o, t) in enumerate(zip(outputs, touts)):
            if t is None or o.__class__ is not Tensor:
                continue
            if _backend.dtype_kind(o._data.dtype) != "f":
                continue
            t = t if t.__class__ is Tensor else _tensor.constant(t, o._xp)
            if t.shape != o.shape:
                raise RuntimeError(
                    f"Function {cls.__name__}.jvp returned an invalid tangent at index {k} - got "
                    f"{list(t.shape)} but expected shape compatible with {list(o.shape)}"
                )
            fw = getattr(o, "_fw", None)
            if fw is None:
                o._fw = fw = {}
            fw[level] = _fitted(t, o, True)


STATE.forward = _tangents
STATE.forward_lean = _lean
