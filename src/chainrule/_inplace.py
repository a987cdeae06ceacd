"""In-place operators and item assignment on tensors.

A write to a tensor that needs no grad happens in place, as the standard says (views see it),
and bumps its version, so that a node that saved it refuses to run. A write that involves a
tensor needing grad is recorded as an operation: the tensor gets a new value and grad_fn, and
the gradient flows to both its old value and the written one. A leaf that requires grad can't
be written while grad mode is on; under no_grad (an optimizer step) it gets a new array. So
does a tensor whose memory a graph holds (an alias): copy-on-write. In forward mode a write
gives the tensor the tangent of the value written (through a view: its base's tangent in that
region, and every view of the base the view of that). Inside
vmap, a value of a higher level the same for every sample (jacfwd's primals) lifts the tensor
written into that level; one that differs per sample can't be written (RuntimeError). Inside
func.jacfwd's passes each tensor written is noted first (note_write), so that jacfwd can undo
the writes between passes (undo_writes).

A tensor whose memory other tensors share (views, detach(), .data: an Alias group) is written
in that memory instead, as PyTorch's: every member sees the write; a write through a view
rebases the base's history (CopySlices) and makes every view of it a view of the new base."""

from __future__ import annotations

import functools
import operator
import weakref

from . import _backend, _rules, _special_cases
from ._batching import NAMESPACE, Batched, batch, level_of
from ._namespace import (
    UNSTACKED,
    _index_key,
    add,
    astype,
    bitwise_and,
    bitwise_left_shift,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    divide,
    floor_divide,
    matmul,
    multiply,
    pow,
    remainder,
    subtract,
)
from ._node import (
    AccumulateGrad,
    Node,
    Port,
    Rule,
    VersionCounter,
    hooks_of,
    written_arrays,
)
from ._rules import OPS
from ._state import STATE
from ._tensor import _SCALARS, Tensor, constant, dual, grad_mode, mixed_error, no_grad

__all__ = [
    "INPLACE_OPERATORS",
    "check_dirty",
    "note_write",
    "rebase_dirty",
    "setitem",
    "undo_writes",
    "write_out",
]

_LEAF = "a leaf Variable that requires grad is being used in an in-place operation."


_INFERENCE = (
    "Inplace update to inference tensor outside InferenceMode is not allowed. You can make a "
    "clone to get a normal tensor before doing inplace update."
)


def _records(t: Tensor, value) -> bool:
    """Whether writing `value` into `t` must be recorded; raises for a leaf needing grad and
    for an inference tensor outside inference mode."""
    vc = getattr(t, "_vc", None)
    if vc is not None and vc.inference and not grad_mode.inference:
        raise RuntimeError(_INFERENCE)
    if not grad_mode.enabled:
        return False
    e = t._edge
    if e is not None and e.__class__ is AccumulateGrad:
        raise RuntimeError(_LEAF)
    return e is not None or (value.__class__ is Tensor and value._edge is not None)


def note_write(t: Tensor) -> None:
    """Inside func.jacfwd's batched passes (grad_mode.writes): keep what tensor t is before
    its first write there (a copy of its values too), so that jacfwd can undo the write and
    refuse one to a tensor captured from outside (undo_writes)."""
    writes = grad_mode.writes
    if id(t) not in writes:
        data = t._data
        copy = t._xp.asarray(data, copy=True)
        vc = getattr(t, "_vc", None)
        state = (t._xp, t._edge, getattr(t, "_fw", None), vc, None if vc is None else vc.value)
        writes[id(t)] = (weakref.ref(t), data, copy, state)


def undo_writes(writes: dict) -> list:
    """Give each tensor noted in `writes` that is still alive its values and state from
    before its first write (in its own memory where arrays share it: views see them), and
    forget them all; returns those tensors."""
    alive = []
    for ref, data, copy, (xp, edge, fw, vc, version) in writes.values():
        t = ref()
        if t is None:
            continue
        if _backend.aliasing(xp) == "memory":
            _backend.write_into(xp, data, Ellipsis, copy)
        else:  # Dask's __setitem__ changes the array object itself: its copy is the values
            data = copy
        t._data, t._xp, t._edge, t._fw = data, xp, edge, fw
        if vc is None:
            t._vc = VersionCounter()
        else:
            t._vc = vc
            vc.value = version  # the nodes that saved t see it unwritten
        alive.append(t)
    writes.clear()
    return alive


def _in_place_ok(t: Tensor) -> bool:
    """Whether t's array may be written in place: t needs no grad and aliases no graph."""
    if t._edge is not None:
        return False
    vc = getattr(t, "_vc", None)
    return vc is None or not vc.alias


def _bump(t: Tensor) -> None:
    """Count a write to t's memory (shared with its views)."""
    vc = getattr(t, "_vc", None)
    if vc is None:
        vc = t._vc = VersionCounter()
    vc.value += 1
    STATE.inplace_writes += 1


def _same_library(t: Tensor, value, name: str) -> None:
    if value.__class__ is Tensor and value._xp is not t._xp and t._xp is not NAMESPACE:
        mixed_error(f"in-place {name}", t._xp, value._xp)


def _lifts(t: Tensor, value, name: str) -> bool:
    """Whether writing `value` makes t a tensor of a vmap level above its own: value is of
    such a level but the same for every sample there (a primal lifted only to carry tangents
    per sample, as jacfwd's are). A value that differs per sample can't be written (t would
    need more elements): PyTorch's RuntimeError."""
    if value.__class__ is not Tensor or value._xp is not NAMESPACE:
        return False
    low = level_of(t._data)
    d = value._data
    if level_of(d) <= low:
        return False
    while d.__class__ is Batched and d.level > low:
        if d.value.shape[0] != 1:
            raise RuntimeError(
                f"vmap: in-place {name} is not possible: the value written is vmapped over but "
                "the tensor written is not (it would need more elements). Please use "
                "out-of-place operations instead."
            )
        d = d.value
    return True


def _fitted(t: Tensor, new: Tensor, name: str) -> Tensor:
    """`new`, the value to write into t, in t's dtype; it must keep t's shape and dtype kind."""
    if new.shape != t.shape:
        raise ValueError(
            f"in-place {name}: the result has shape {new.shape}, "
            f"but the tensor written has shape {t.shape}"
        )
    if new._data.dtype != t._data.dtype:
        if not _backend.np.can_cast(new.dtype, t.dtype, casting="same_kind"):
            raise TypeError(
                f"in-place {name}: the result dtype {new.dtype} can't be cast to {t.dtype}"
            )
        new = astype(new, t.dtype)
    return new


def _site(edge) -> tuple:
    """(node, output index) of a history edge: where the gradient of its tensor arrives."""
    return (edge.node, edge.index) if edge.__class__ is Port else (edge, 0)


def _set_history(t: Tensor, edge) -> None:
    """t's history after an in-place write is `edge`. A tensor that retains its gradient
    keeps doing so for its new value (PyTorch moves retain_grad to the new grad_fn, so .grad
    is the gradient of what t holds now); its other hooks stay with the old value's node."""
    if STATE.live_hooks and t.retains_grad:
        node, index = _site(t._edge)
        ref = hooks_of(node).retain.pop(index)
        if edge is not None:
            node, index = _site(edge)
            hooks_of(node).retain[index] = ref
    t._edge = edge


def _refuse_multiple_views(edge: Port) -> None:
    """A recorded write into one of several views one node made (unstack's): PyTorch refuses
    it (its history is that node's, which a write could not rebase)."""
    raise RuntimeError(
        f"Output {edge.index} of {edge.node.name()} is a view and is being modified "
        "inplace. This view is the output of a function that returns multiple views. Such "
        "functions do not allow the output views to be modified inplace. You should "
        "replace the inplace operation by an out-of-place one."
    )


_UNSTACKED = (
    "A view was created in no_grad mode and is being modified inplace with grad mode "
    "enabled. This view is the output of a function that returns multiple views. Such "
    "functions do not allow the output views to be modified inplace. You should "
    "replace the inplace operation by an out-of-place one."
)


def _take_value(t: Tensor, new: Tensor, name: str, recorded: bool = True) -> None:
    """Give t the value of `new` (and its history when recorded), which must keep t's shape
    and dtype kind. t's memory is new: it gets a counter of its own, one version on."""
    edge = t._edge
    if recorded and edge.__class__ is Port and edge.node.rule.view:
        _refuse_multiple_views(edge)
    if recorded and id(t) in UNSTACKED:
        raise RuntimeError(_UNSTACKED)
    new = _fitted(t, new, name)
    t._data = new._data
    t._xp = new._xp  # another only where t is lifted into a vmap level (_lifts)
    if recorded:
        _set_history(t, new._edge)
    if grad_mode.forward:
        t._fw = getattr(new, "_fw", None)
    t._vc = VersionCounter(t._version + 1)
    STATE.inplace_writes += 1


_KIND_RANK = {"b": 0, "i": 1, "u": 1, "f": 2, "c": 3}
_SCALAR_KIND = {bool: "b", int: "i", float: "f", complex: "c"}


def _check_kind(t: Tensor, value, name: str) -> None:
    """An in-place operator can't write floats into integers, nor complex into reals (checked
    here: not every library says TypeError)."""
    kind = _SCALAR_KIND.get(value.__class__) or _backend.dtype_kind(value.dtype)
    if _KIND_RANK[kind] > _KIND_RANK[t.dtype.kind]:
        what = value.__class__.__name__ if value.__class__ in _SCALARS else value.dtype
        raise TypeError(f"in-place {name}: can't write a {what} value into a tensor of {t.dtype}")


# ----------------------------------------------------------------------------- shared memory

_VIEW_OF_LEAF = (
    "a view of a leaf Variable that requires grad is being used in an in-place operation."
)
_NO_GRAD_VIEW = (
    "A view was created in no_grad mode and is being modified inplace with grad mode enabled. "
    "Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify "
    "your code by moving both the view and the inplace either both inside the no_grad block "
    "(if you don't want the inplace to be tracked) or both outside (if you want the inplace "
    "to be tracked)."
)
_OVERLAP = (
    "unsupported operation: more than one element of the written-to tensor refers to a single "
    "memory location. Please clone() the tensor before performing the operation."
)


def _copy_slices_vjp(xp, g, s, p, needs):
    """The base's gradient split at the region a view wrote (p: the view's steps): the value
    written gets the view of g, the old base g less that region (V^T V g, so that the real
    part of a complex base written through real() keeps its imaginary part's gradient)."""
    region = g
    for rule, q, _ in p:
        region = xp.primitive(rule.name, region, q)
    back = region
    for rule, q, _ in reversed(p):
        back = rule.vjp(xp, back, None, q, (True,))[0]
    return (g - back if needs[0] else None, region if needs[1] else None)


def _copy_slices_jvp(xp, ts, xs, outs, p):
    """The base's tangent after a write through its view (p: the view's steps): the old
    tangent outside the region, the tangent of the value written in it (V^T of it)."""
    tb, tv = ts
    out = None
    if tb is not None:
        region = tb
        for rule, q, _ in p:
            region = xp.primitive(rule.name, region, q)
        for rule, q, _ in reversed(p):
            region = rule.vjp(xp, region, None, q, (True,))[0]
        out = tb - region
    if tv is not None:
        for rule, q, _ in reversed(p):
            tv = rule.vjp(xp, tv, None, q, (True,))[0]
        out = tv if out is None else out + tv
    return out


# PyTorch's CopySlices: the node a base gets when a view of it is written with history. Its
# inputs: the base's old history, the value written; p: the view's steps (View.steps). Its
# JVP gives the base's tangent after such a write, in forward mode (_share_tangents).
COPY_SLICES = Rule(
    "copy_slices", None, _copy_slices_vjp, ((), ()), jvp=_copy_slices_jvp, complex="own"
)
COPY_SLICES.backward_name = "CopySlices"


def _shared(t: Tensor):
    """t's alias group when the write must go to memory that other tensors share: while
    another member lives, or (mutable arrays) a graph may hold the memory's arrays; else None
    (t alone: the writes of an unshared tensor, and t leaves the group)."""
    vc = getattr(t, "_vc", None)
    group = None if vc is None else vc.group
    if group is None:
        return None
    if len(group.live()) > 1:
        return group
    # Alone, t writes its memory in place only if it needs no grad (else it gets a new array,
    # which leaves the memory as it was): then a graph may hold the arrays of former members.
    if group.mutable and group.graph and t._edge is None:
        return group
    vc.group = None
    return None


def _write_shared(t: Tensor, group, name: str, value, compute, write, replay) -> None:
    """Write into the memory t shares with its alias group. `compute(src)` gives the new value
    of t from src (t's values, with its history) as a recorded operation; `write(array)`
    writes the value raw into t's array (in place where arrays are mutable) and returns the
    array written; `replay()`: (how, raw value), the write as chainrule.compile replays it,
    how(array, raw value) in the array's memory (how None where a key holds traced values).
    Recorded (grad mode, and t or the value needs grad): the new value is
    computed on a copy of t (PyTorch's original self: the memory is about to change) and
    copied in; t's base gets a CopySlices node, and every view of the base is made a view of
    the new base. Immutable and lazy arrays: every member's values are remade (_remake)."""
    view = getattr(t, "_view", None)
    path = group.path(t)
    if grad_mode.enabled and view is not None and view.base._edge.__class__ is AccumulateGrad:
        raise RuntimeError(_VIEW_OF_LEAF)
    if grad_mode.enabled and view is not None and t._edge is None and view.base._edge is not None:
        # Made under no_grad from a base with history: the write would change the base's
        # values but not its history, so PyTorch refuses it.
        raise RuntimeError(_NO_GRAD_VIEW)
    records = _records(t, value)
    if records and id(t) in UNSTACKED:
        raise RuntimeError(_UNSTACKED)
    if records and t._edge.__class__ is Port and t._edge.node.rule.view:
        _refuse_multiple_views(t._edge)
    if not _backend.writable(t._data) or _broadcast(path):
        # NumPy's read-only views are broadcasts (broadcast_to), as PyTorch's unwritable ones.
        raise RuntimeError(_OVERLAP)
    if _lifts(t, value, name):
        _lift_members(group, value)
    tracer = grad_mode.tracer if grad_mode.extended else None
    if tracer is not None:
        replay = replay()
        tracer.sharing(group, name, replay[0] is not None, records)
        tracer = grad_mode.tracer  # None where it can't be replayed
    _same_library(t, value, name)
    xp = t._xp
    if records:
        src = Tensor(xp.asarray(t._data, copy=True), xp, t._edge)
        if tracer is not None:
            tracer.converted(t, src, _copy, None)
        if grad_mode.forward:
            src._fw = getattr(t, "_fw", None)
        new = _fitted(t, compute(src), name)
        if group.mutable:
            if tracer is not None:
                tracer.writing(t)
            _backend.write_into(xp, t._data, Ellipsis, new._data)
            if tracer is not None:
                tracer.wrote(t, "op", functools.partial(_replay_key, xp, Ellipsis), new._data)
        else:
            # t gets an array of its own, as on mutable arrays (where new's is copied into
            # the memory): new's is the one the write's node may have saved (pow's `out`),
            # which a later write through the group must not mark stale.
            _remake(t, group, path, xp.asarray(new._data, copy=True))
        tangents = new if grad_mode.forward else None
    else:
        tangents = _fitted(t, compute(t), name) if dual(t) or dual(value) else None
        if tracer is not None:
            tracer.writing(t)
        out = write(t._data)
        if tracer is not None:
            tracer.wrote(t, "op", *replay)
        if not group.mutable:
            _remake(t, group, path, out)
    vc = t._vc
    vc.value += 1
    STATE.inplace_writes += 1
    arrays = [(m, m._data) for m, _ in group.live()] if tracer is not None else ()
    _stale(group, vc)
    if records:
        made = _rebase(t, view, group, new._edge)
        if tracer is not None:
            tracer.adopt(made)
    if tracer is not None:
        tracer.realiased(arrays)
    if tangents is not None:
        _share_tangents(t, group, tangents)


def _lift_members(group, value: Tensor) -> None:
    """Make every member of `group` a tensor of the vmap levels of `value` above its own, the
    same for every sample (as _lifts finds the value: jacfwd's primals): each member's array
    gets a batch axis of one element per level, a view of its memory, so that the members
    still share it and the write reaches them all. Inside jacfwd's pass each member is
    noted as written (note_write): jacfwd refuses and undoes a lift of a captured tensor."""
    for m, _ in group.live():
        if grad_mode.writes is not None:
            note_write(m)
        low = level_of(m._data)
        levels = []
        d = value._data
        while d.__class__ is Batched and d.level > low:
            levels.append((d.level, d.n))
            d = d.value
        a = m._data
        for level, n in reversed(levels):  # the lowest level first: levels nest outwards
            a = batch(a, level, n, None)
        m._data, m._xp = a, NAMESPACE


# Forward mode (PyTorch's forward AD): the tangents of a tensor and of its views share memory
# as their values do. A tensor's tangent base is the tensor its view record starts from, or
# the nearest make_dual result on the way (make_dual gives a view of the primal whose tangent
# is its own; the primal gets none): make_dual's results, by id while they live.
dual_bases: weakref.WeakValueDictionary = weakref.WeakValueDictionary()


def _tangent_base(m: Tensor, members: list) -> tuple:
    """(m's tangent base, the view steps from it to m), among the live `members` of m's
    alias group."""
    view = getattr(m, "_view", None)
    if view is None or id(m) in dual_bases:
        return m, ()
    best, steps = view.base, view.steps
    for d, _ in members:
        made = getattr(d, "_view", None)
        if id(d) not in dual_bases or made is None or made.base is not view.base:
            continue
        k = len(made.steps)
        if k <= len(view.steps) and len(view.steps) - k < len(steps):
            if all(a is b for a, b in zip(made.steps, view.steps)):
                best, steps = d, view.steps[k:]
    return best, steps


def _share_tangents(t: Tensor, group, new: Tensor) -> None:
    """Forward mode, after a write through t whose new value (as an operation's result) is
    `new`: t's tangent base takes new's tangent in t's region (the rest of its tangent stays;
    zeros where it had none), and it and every view of it get the view of that tangent, as
    PyTorch's forward AD updates a base's tangent in place (a view's is a view of it)."""
    members = group.live()
    base, path = _tangent_base(t, members)
    forward = STATE.forward
    xp = base._xp
    if path:
        res = Tensor(base._data, xp, None)
        forward(COPY_SLICES, (base, new), (base._data,), path, (res,))
        new = res
    _set_tangents(base, getattr(new, "_fw", None))
    raw = _rules.raw_namespace(xp)
    for m, _ in members:
        b, steps = _tangent_base(m, members)
        if b is not base or m is base:
            continue
        src = base
        for rule, q, _ in steps:
            out = Tensor(rule.fwd(raw, src._data, q), xp, None)
            forward(rule, (src,), (out._data,), q, (out,))
            src = out
        _set_tangents(m, src._fw)


def _set_tangents(m: Tensor, fw) -> None:
    """Give m the tangents `fw` at the levels operations see now (it keeps the others)."""
    old = getattr(m, "_fw", None)
    if old:
        levels = grad_mode.forward
        kept = {k: v for k, v in old.items() if k not in levels}
        if kept:
            fw = {**kept, **fw} if fw else kept
    m._fw = fw


def _broadcast(path: tuple) -> bool:
    """Whether a view made by `path` from its memory is a broadcast (elements repeated)."""
    for rule, q, _ in path:
        if rule.name == "broadcast_to" and q[0] != q[1]:
            return True
    return False


def _remake(t: Tensor, group, path: tuple, out) -> None:
    """Where arrays can't be written in place (JAX, Dask): after t, made by `path` from the
    group's root values, took the values `out`, the root takes them in that region, and every
    member's values are remade from the root, as if they shared its memory."""
    xp = _rules.raw_namespace(t._xp)
    if out is t._data:  # a write of nothing (an empty key): still a new array object
        out = t._xp.asarray(out, copy=True)
    if path:
        values = [group.root]
        for rule, q, _ in path[:-1]:
            values.append(rule.fwd(xp, values[-1], q))
        written = out
        for (rule, q, _), a in zip(reversed(path), reversed(values)):
            written = _put(xp, rule, q, a, written)
        group.root = written
    elif group.root is not None:
        group.root = out
    for m, p in group.live():
        if m is t:
            m._data = out
            continue
        values = out if group.root is None else group.root
        for rule, q, _ in p:
            values = rule.fwd(xp, values, q)
        m._data = values


def _put(xp, rule: Rule, q, a, b):
    """`a` with the part that view rule `rule` (parameters q) selects replaced by `b`: the
    inverse of a view, for arrays that can't be written in place."""
    name = rule.name
    if name == "getitem":
        return _backend.assign(xp, xp.asarray(a, copy=True), q[0], b)
    if name == "reshape":
        return xp.reshape(b, q[1])
    if name == "permute_dims":
        return xp.permute_dims(b, tuple(sorted(range(len(q)), key=q.__getitem__)))
    if name == "flip":
        return xp.flip(b, axis=q)
    if name == "linalg_diagonal":  # q[2]: True on the diagonal
        return xp.where(q[2], rule.vjp(xp, b, None, q, (True,))[0], a)
    if name == "real":
        im = xp.imag(a)
        return _backend.complex_from_parts(xp, xp.astype(b, im.dtype), im)
    if name == "imag":
        re = xp.real(a)
        return _backend.complex_from_parts(xp, re, xp.astype(b, re.dtype))
    raise NotImplementedError(f"a write through a view made by {name} on immutable arrays")


def _stale(group, vc: VersionCounter) -> None:
    """After a write through a member with counter vc: the arrays of such members held so far
    are stale (a node that saved one refuses to run); the live ones get new array objects (of
    the same memory, where arrays are mutable), which nodes made from now on save."""
    before = vc.value - 1
    for ref, c in group.arrays:
        a = ref()
        if a is not None and c is vc and id(a) not in written_arrays:
            written_arrays[id(a)] = (ref, vc, before)
            weakref.finalize(a, written_arrays.pop, id(a), None)  # ids are reused
    for m, _ in group.live():
        if m._vc is vc or not group.mutable:
            if group.mutable:
                m._data = m._data[...]
            group.held(m)


def _rebase(t: Tensor, view, group, edge) -> list:
    """t's history after a recorded write of a value with history `edge` (None: none): t's
    own, or, for a view, its base's is CopySlices(old base, value) and every view of the base
    is a view of that. The nodes made."""
    nodes: list = []
    if view is None:
        base = t
        _set_history(t, edge)
    else:
        base = view.base
        if base._edge is None and edge is None:
            return nodes
        _set_history(base, Node(COPY_SLICES, (base._edge, edge), None, view.steps))
        nodes.append(base._edge)
    group.graph = True
    cx = _backend.dtype_kind(base._data.dtype) == "c"  # see Node.meets_complex
    for m, _ in group.live():
        made = getattr(m, "_view", None)
        if made is not None and made.base is base:
            e = base._edge
            if e is not None:
                for rule, q, fit in made.steps:
                    e = Node(rule, (e,), None, q, fit)
                    e.meets_complex = cx and rule.complex != "own"
                    nodes.append(e)
            _set_history(m, e)
    return nodes


def check_dirty(t: Tensor) -> None:
    """A tensor a custom Function wrote in place (mark_dirty), in a recorded apply: it must not
    be a leaf that requires grad, nor a view of one (PyTorch's errors)."""
    if t._edge.__class__ is AccumulateGrad:
        raise RuntimeError(
            "a leaf Variable that requires grad has been used in an in-place operation."
        )
    view = getattr(t, "_view", None)
    if view is not None and view.base._edge.__class__ is AccumulateGrad:
        raise RuntimeError(_VIEW_OF_LEAF)


def rebase_dirty(t: Tensor, edge) -> None:
    """The history of a tensor a custom Function wrote in place (mark_dirty) and returned with
    the history `edge`: as a recorded write's, a view's base gets a CopySlices node and every
    live view of the tensor written (or of its base) is made a view of the new history."""
    group = _shared(t)
    if group is None:
        _set_history(t, edge)
        return
    _rebase(t, getattr(t, "_view", None), group, edge)


# ----------------------------------------------------------------------------- writes


def _inplace_operator(op, raw_op, name: str):
    def method(self: Tensor, other):
        if grad_mode.writes is not None:
            note_write(self)
        group = _shared(self)
        if group is not None:
            _write_shared(
                self, group, name, other, lambda src: op(src, other),
                lambda a: _raw_write(a, raw_op, other, self, name, group.mutable),
                lambda: (functools.partial(_replay_op, raw_op), _raw_value(other, self)),
            )  # fmt: skip
            return self
        records = _records(self, other)
        lifted = _lifts(self, other, name)
        if records:
            _take_value(self, op(self, other), name)
            return self
        if lifted or not _in_place_ok(self):
            with no_grad():
                _take_value(self, op(self, other), name, recorded=False)
            return self
        _same_library(self, other, name)
        tangents = None
        if dual(self) or dual(other):  # the tangent in self's dtype, as its values
            tangents = _fitted(self, op(self, other), name)
        value = other if other.__class__ in _SCALARS else constant(other, self._xp)._data
        _check_kind(self, value, name)
        tracer = grad_mode.tracer if grad_mode.extended else None
        if tracer is not None:
            tracer.writing(self)
        out = raw_op(self._data, value)
        if out.shape != self._data.shape:
            # Libraries whose arrays are immutable (JAX) compute `a op b`, which broadcasts.
            raise ValueError(
                f"in-place {name}: the result has shape {tuple(out.shape)}, "
                f"but the tensor written has shape {self.shape}"
            )
        if out.dtype != self._data.dtype:  # and promotes: the tensor keeps its dtype
            out = self._xp.astype(out, self._data.dtype)
        self._data = out
        _bump(self)
        if tracer is not None:
            tracer.wrote(self, "op", raw_op, value)
        if tangents is not None:
            self._fw = getattr(tangents, "_fw", None)
        return self

    method.__name__ = f"__i{name}__"
    return method


def _raw_value(other, t: Tensor):
    """The raw value of an in-place operator's operand, for t's array."""
    return other if other.__class__ in _SCALARS else constant(other, t._xp)._data


def _raw_write(a, raw_op, other, t: Tensor, name: str, mutable: bool):
    """`a op= other` on t's raw array a: in place where arrays are mutable; the array."""
    value = _raw_value(other, t)
    _check_kind(t, value, name)
    out = raw_op(a, value)
    if out.shape != a.shape:  # immutable arrays compute `a op b`, which broadcasts
        raise ValueError(
            f"in-place {name}: the result has shape {tuple(out.shape)}, "
            f"but the tensor written has shape {t.shape}"
        )
    if out.dtype != a.dtype:  # and promotes: the tensor keeps its dtype
        out = t._xp.astype(out, a.dtype)
    if out is not a and mutable:  # a library that made a new array
        _backend.write_into(t._xp, a, Ellipsis, out)
        return a
    return out


def _copy(xp, a, p):
    """A copy of array a (as chainrule.compile replays the copy a recorded write computes on)."""
    return xp.asarray(a, copy=True)


def _replay_op(raw_op, a, v):
    """`a op= v` in a's memory, as chainrule.compile replays a write to shared memory."""
    out = raw_op(a, v)
    if out is not a:
        _backend.write_into(_backend.namespace(a), a, Ellipsis, out)
    return a


def _replay_key(xp, key, a, v):
    """a[key] = v in a's memory, as chainrule.compile replays a write to shared memory."""
    _backend.write_into(xp, a, key, v)
    return a


def _traced_key(key) -> bool:
    """Whether an index key holds arrays (whose values a compiled replay would recompute)."""
    keys = key if key.__class__ is tuple else (key,)
    return any(_backend.is_array(k) for k in keys)


def _write_key(xp, a, key, v, mutable: bool):
    """a[key] = v: in a's memory where arrays are mutable; the array. Else a new array (vmap's
    assignment writes the batch's array in place, which the other members' share)."""
    if mutable:
        _backend.write_into(xp, a, key, v)
        return a
    if a.__class__ is Batched:
        a = xp.asarray(a, copy=True)
    return _backend.assign(xp, a, key, v)


def _written(t: Tensor, value) -> Tensor:
    """The tensor of a value written into t: a Python number in t's dtype, as the standard
    casts a scalar written into an array (array_api_strict refused int64 into float64)."""
    if value.__class__ in _NUMBERS:
        try:
            return constant(t._xp.asarray(value, dtype=t._data.dtype), t._xp)
        except (TypeError, ValueError, OverflowError):
            pass  # another kind (a float into integers): refused where kinds are checked
    return constant(value, t._xp)


_NUMBERS = (bool, int, float, complex)


def write_out(out: Tensor, value: Tensor, name: str) -> Tensor:
    """An op's `out=` argument given its result `value` (in place, as copy_), as PyTorch's:
    refused where a gradient or a tangent would flow (out= functions have neither), and not
    noted for the func transforms (grad_mode.writes): PyTorch's refusal of a write into a
    captured tensor covers in-place ops, not out= ones (its spectral_norm writes its power
    iteration's vectors through out= inside torch.func's transforms)."""
    if dual(value) or dual(out):
        raise NotImplementedError(
            f"Trying to use forward AD with {name}_out that does not support it because it is "
            "an out= function"
        )
    if grad_mode.enabled and (value._edge is not None or out._edge is not None):
        raise RuntimeError(
            f"{name}(): functions with out=... arguments don't support automatic "
            "differentiation, but one of the arguments requires grad."
        )
    if out.shape != value.shape:
        raise NotImplementedError(
            f"{name}(out=...): an out of shape {list(out.shape)} for a result of shape "
            f"{list(value.shape)} (PyTorch resizes it) is not supported"
        )
    outer, grad_mode.writes = grad_mode.writes, None
    try:
        setitem(out, Ellipsis, value)
    finally:
        grad_mode.writes = outer
    return out


def setitem(self: Tensor, key, value) -> None:
    """`t[key] = value`: in place, recorded, or copy-on-write (see the module docstring)."""
    if grad_mode.writes is not None:
        note_write(self)
    key = _index_key(key, self._xp)
    group = _shared(self)
    if group is not None:

        def compute(src):
            v = value if value.__class__ is Tensor else _written(self, value)
            covered = _backend.covers_all(self._data.shape, key)
            return OPS["setitem"]((src, v), (key, v.shape, covered))

        raw = value._data if value.__class__ is Tensor else value
        how = None if _traced_key(key) else functools.partial(_replay_key, self._xp, key)
        _write_shared(
            self, group, "setitem", value, compute,
            lambda a: _write_key(self._xp, a, key, raw, group.mutable), lambda: (how, raw),
        )  # fmt: skip
        return
    records = _records(self, value)
    lifted = _lifts(self, value, "setitem")
    if records or lifted:
        v = value if value.__class__ is Tensor else _written(self, value)
        covered = _backend.covers_all(self._data.shape, key)
        new = OPS["setitem"]((self, v), (key, v.shape, covered))
        _take_value(self, new, "setitem", recorded=records)
        return
    _same_library(self, value, "setitem")
    if dual(self) or dual(value):
        v = value if value.__class__ is Tensor else _written(self, value)
        covered = _backend.covers_all(self._data.shape, key)
        self._fw = getattr(OPS["setitem"]((self, v), (key, v.shape, covered)), "_fw", None)
    v = value._data if value.__class__ is Tensor else value
    tracer = grad_mode.tracer if grad_mode.extended else None
    if tracer is not None:
        tracer.writing(self)
    if not _in_place_ok(self):
        self._data = _backend.assign(self._xp, self._xp.asarray(self._data, copy=True), key, v)
        self._vc = VersionCounter(self._version + 1)
        STATE.inplace_writes += 1
        if tracer is not None:
            tracer.wrote(self, "setitem_copy", key, v)
        return
    self._data = _backend.assign(self._xp, self._data, key, v)
    _bump(self)
    if tracer is not None:
        tracer.wrote(self, "setitem", key, v)


def _ifloordiv(a, b):
    """a //= b on raw arrays with floor_divide's special cases (infinite operands)."""
    out = _special_cases.floor_divide(_backend.namespace(a), a, b)
    if out.dtype != a.dtype:
        return operator.ifloordiv(a, b)  # the library's own casting error
    try:
        a[...] = out
    except TypeError:  # immutable arrays (JAX): the tensor takes the new one
        return out
    return a


INPLACE_OPERATORS = {
    f"__i{name}__": _inplace_operator(op, raw_op, name)
    for name, op, raw_op in (
        ("add", add, operator.iadd),
        ("sub", subtract, operator.isub),
        ("mul", multiply, operator.imul),
        ("truediv", divide, operator.itruediv),
        ("floordiv", floor_divide, _ifloordiv),
        ("mod", remainder, operator.imod),
        ("pow", pow, operator.ipow),
        ("matmul", matmul, operator.imatmul),
        ("and", bitwise_and, operator.iand),
        ("or", bitwise_or, operator.ior),
        ("xor", bitwise_xor, operator.ixor),
        ("lshift", bitwise_left_shift, operator.ilshift),
        ("rshift", bitwise_right_shift, operator.irshift),
    )
}
