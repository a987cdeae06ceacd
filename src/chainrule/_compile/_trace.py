"""The trace: while a compiled function runs for the first time, every operation, the backward
walks, gradient accumulation, `.grad` assignments and in-place writes are recorded as a flat
program over numbered slots (values). What it cannot follow ends the recording (`abandon`):
the call finishes eagerly and the function stays eager, with the reason."""

from __future__ import annotations

import collections
import functools
import gc
import sys
import weakref
from collections.abc import Callable, Iterable

from .. import _backend
from .._mode import grad_mode, set_feature
from .._node import (
    RELEASED,
    ZERO,
    AccumulateGrad,
    ComplexFit,
    Node,
    Port,
    VersionCounter,
    node_of,
)
from .._rules import raw_namespace
from .._state import STATE
from .._tensor import Tensor, alias_group
from ..autograd import _engine
from ._instructions import (
    ACC,
    ADD,
    FWD1,
    FWD2,
    FWDN,
    HOST,
    NORM,
    SETGRAD,
    STORED,
    VJP,
    WRITE,
    Acc,
    Add,
    Fwd1,
    Fwd2,
    FwdN,
    Host,
    Norm,
    SetGrad,
    Stored,
    Vjp,
    Write,
)

__all__ = [
    "ConcretizationError",
    "Recording",
    "Slot",
    "Template",
    "Tracer",
    "Unsupported",
    "hooks_key",
    "host_arrays",
]

np = _backend.np


# Slot kinds: a value passed in, read from a tensor outside, a constant, or computed.
INPUT, EXTERNAL, CONST, COMPUTED = range(4)

# What the tracer keeps true, and the replay builders (_program) rely on:
# - A slot is written once. An in-place write makes a new slot for the written array
#   (Write.out); `slot_of` maps an array's id to the latest slot that holds it, so an
#   operation reads the values its operand has at that point of the program.
# - Every value and every node met is held until the end of the trace (`values`, `held`):
#   ids are looked up in `slot_of` and `nodes`, and an id is unique only while its object
#   lives.
# - An INPUT slot is loaded from the call's arguments and an EXTERNAL one from a tensor from
#   outside (found by weak reference, its shape, dtype, library and grad flag checked) at
#   each replay; a CONST is baked; a COMPUTED one is made by exactly one instruction. An
#   EXTERNAL slot stands for its tensor alone (see _stands_for).
# - `code`, `reads` and `writes` are parallel lists in the order things ran: what the replay
#   runs is that order (less what nothing needs), with the same kernels, so it computes
#   what the eager call computed, bit for bit.
# - What a replay could not reproduce is never left out: `abandon` records the reason, the
#   call finishes eagerly and `finish` raises Unsupported (the function runs eagerly).
# - Versions: the writes that a replay makes itself (rebound arrays, accumulation into
#   .grad) are counted by it as the eager write counted; the rest of a tensor's version
#   change is added at the end of the replay, once per version counter (views share one).
# - Nothing computed inside is kept outside unless returned (`_unexplained`): a replay
#   updates only the outputs, the tensors from outside it writes, and leaves' .grad.

# A record made from its fields in order, without the named tuple's Python-level __new__
# (Vjp, Fwd1, Fwd2: one per operation recorded).
_make = tuple.__new__
# `needs` of a node none of whose inputs is cut off (by number of inputs).

_ALL_NEEDED = ((), (True,), (True, True), (True, True, True))
# `needs` of a node of two inputs, by [first input cut off][second input cut off].
_PAIR_NEEDS = (((True, True), (True, False)), ((False, True), (False, False)))

# How a rule's forward is called (Rule.form): the instruction that replays it.
_CALLS = {"unary": FWD1, "binary": FWD2, "sequence": FWDN}
_PLAIN = frozenset((int, float, bool, complex, str, type(None), slice, type(Ellipsis)))
# The least result, in bytes, that a replay's ufunc writes into its dying input (see
# _program._in_place): below it a new array costs about what the checks and out= cost
# (measured on NumPy 2: the same up to 16 KiB, a quarter less from 128 KiB, where new memory
# is no longer in the cache). The tracer notes whether the call met a NumPy array that large
# (Tracer.large): if not, the build reads no layout (see _program._layouts).
IN_PLACE_BYTES = 16384
ndarray = np.ndarray
# Operations whose results' shapes depend on the values (with getitem by a boolean mask, see
# Tracer._masked_by_values; repeat_sources: repeat's counts given as a tensor): a replay
# can't follow them, the function runs eagerly.
_SIZED_RULES = frozenset(("nonzero", "unique", "repeat_sources"))
_SIZED_BY_VALUES = (
    "a selection by a boolean mask, nonzero, unique or repeat by a tensor of counts: the "
    "result's size depends on the values, and a replay would keep the first call's sizes"
)


# A node or leaf that only a gradient known to be zero reaches (see Tracer._add): eager hands
# it on without running VJPs and gives the leaves zeros, which the recorded walk does not make.
_ONLY_ZERO = "a gradient known to be zero (a write over every element) and no other"


class ConcretizationError(TypeError):
    """A traced tensor's values were asked for in Python (bool(), float(), item(), numpy(),
    ...) while chainrule.compile traced a function: they are not known when the trace is
    replayed. A TypeError, as JAX's.

    >>> import chainrule as cr
    >>> @cr.compile
    ... def f(x):
    ...     return x if cr.sum(x) > 0 else -x
    >>> try:
    ...     f(cr.ones(2))
    ... except cr.ConcretizationError:
    ...     print("branch on a value: use chainrule.where")
    branch on a value: use chainrule.where"""


class Unsupported(Exception):
    """Raised inside the tracer when it meets something it cannot replay. `transient`: what
    a first call may do and later ones not (make state that is kept outside): worth tracing
    again."""

    def __init__(self, reason: str, transient: bool = False) -> None:
        super().__init__(reason)
        self.transient = transient


class Slot:
    """A slot inside a parameter template: at replay, the slot's value goes there."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"Slot({self.index})"


class Template:
    """Static parameters that hold slot values (an index computed inside): `value` with Slot
    markers, and the slots they read."""

    __slots__ = ("value", "slots")

    def __init__(self, value, slots: tuple) -> None:
        self.value = value
        self.slots = slots


class External:
    """A tensor from outside the function that the trace read (or wrote): by object."""

    __slots__ = (
        "ref", "slot", "entry", "shape", "dtype", "xp", "edge", "version", "vc", "snapshot",
        "writeback", "delta", "replace", "alias", "shares",
    )  # fmt: skip

    def __init__(self, t: Tensor, slot: int | None) -> None:
        self.ref = weakref.ref(t)
        self.slot = slot  # the slot of its values at entry (None: not read as values)
        self.entry = t._data
        self.shape = t._data.shape
        self.dtype = t._data.dtype
        self.xp = t._xp
        self.edge = _edge_kind(t._edge)
        self.version = t._version
        self.vc = getattr(t, "_vc", None)
        self.snapshot = None  # a copy of its entry values, once something writes them
        # What the replay does to it at the end: the slot of its new values (None: the same
        # array), and the change of its version counter.
        self.writeback = None
        self.delta = 0
        self.replace = False
        self.alias = False
        # The external whose array it shared when first read (see Tracer._stands_for): a
        # tensor made inside (a detach() of one from outside) reads that one's array.
        self.shares: int | None = None


def _edge_kind(e) -> int:
    """0: needs no grad; 1: a leaf that requires grad; 2: a computed tensor with history."""
    if e is None:
        return 0
    return 1 if e.__class__ is AccumulateGrad else 2


class Tracer:
    """Records one call. `inputs`: the flattened arguments (tensors, raw arrays or other
    values); tensors and arrays become the input slots, in order."""

    def __init__(self, inputs: list) -> None:
        self.values: list = []  # slot -> value (held: no id is reused while tracing)
        # Whether a value passed in, read from outside, made by the forward or baked is a
        # NumPy array of IN_PLACE_BYTES or more: noted as each is met (the array then in the
        # cache), where the build looked at every value at the end (W1's first call: about
        # 2 M instructions, 0.5 ms). The backward's gradients are not looked at: they have
        # the shapes of those values; should one alone be large, a replay computes it in new
        # memory, as eagerly (see _program._in_place).
        self.large = False
        self.kinds: dict[int, int] = {}  # slot -> INPUT, EXTERNAL or CONST (else COMPUTED)
        self.where: dict[int, int] = {}  # slot -> input position or External index
        self.slot_of: dict[int, int] = {}  # id(array) -> its latest slot
        self.code: list = []
        self.reads: list = []  # per instruction: the slots it reads
        self.writes: list = []  # per instruction: the slots it makes (a number for one)
        self.externals: list[External] = []
        self.external_of: dict[int, int] = {}  # id(tensor) -> index in externals
        self.held: list = []  # tensors kept alive so that ids stay unique
        # The nodes recorded by this trace (kept alive, as `held`; a set: by identity)
        self.nodes: set = set()
        self.arg_of: dict[int, int] = {}  # id(argument tensor) -> input position
        self.arg_refs: list = []
        self.arg_entries: dict[int, External] = {}  # id(argument tensor) -> its state at entry
        self.input_tensor = [x.__class__ is Tensor for x in inputs]
        self.arg_edges = [_edge_kind(x._edge) if x.__class__ is Tensor else -1 for x in inputs]
        # (tensor ref, tensor) whose .grad a backward or an assignment set
        self.leaf_grads: list = []
        self.grad_leaves: list = []  # the leaf (ref) of each Acc and SetGrad recorded
        self.inside_leaves: dict[int, Tensor] = {}  # see _inside_leaves
        self.graph = None  # the backward of outputs with a live graph (see _graph_program)
        self.out_versions: list = []  # see _out_versions
        self.out_same: list = []  # (position, first position) of an output returned again
        self.out_views: list = []  # see _out_views
        self.grad_guards: list = []  # (tensor ref, external index): .grad must be that tensor
        self.hooked_leaves: dict = {}  # id(accumulator) -> weakref to the leaf (a backward
        # reached it: the hooks of those made before the call are guarded)
        # The .grad of leaves, as the trace first saw it: (tensor ref, whether it was None);
        # Python code may have branched on that (an optimizer's zero_grad does).
        self.grad_states: dict[int, tuple] = {}
        # (how the replay finds a tensor, its version counter, bumps): the in-place writes
        # that the replay makes itself (a write it rebinds, an accumulation into .grad); by
        # counter at the end. The rest of a tensor's version change is added at the end of a
        # replay, once per counter (views share one).
        self.rebinds: list = []
        # (how the replay finds a tensor, its counter after the write) of the writes into
        # a tensor that the replay rebinds (see _changes)
        self.own_writes: list = []
        self.replayed: dict[int, list] = {}
        self._counted: set[int] = set()  # ids of the counters whose change is counted
        self.grad_owner: dict[int, tuple] = {}  # id(a leaf's .grad) -> (tensor ref, leaf ref)
        self._grads_before: list = []  # (.grad, its version) before an accumulation
        self.reason: str | None = None
        self.templates = False  # whether an instruction's parameters hold slots (see params)
        # What Python code branched on, checked before each replay: key -> guard(leaves)
        # (true while the trace holds; see guard).
        self.guards: dict = {}
        # Each returns tensors on a lazy library to settle after the call and each replay
        # (an optimizer step's parameters, gradients and state: see settle_after).
        self.settles: list = []
        self.modes: dict = {}  # id(module) -> (module ref, training): set inside (set_mode)
        self.fresh_grads: dict = {}  # id(leaf) -> leaf ref: its .grad made here (_grad_versions)
        self.shared_groups: list = []  # the alias groups whose memory a write went to
        self.watched: dict = {}  # id(raw NumPy argument) -> the WatchedArray the function sees
        self._pending = -1  # the slot an in-place write is about to change
        self._target: tuple = ()  # and how the replay finds the tensor written (see _locate)
        for i, x in enumerate(inputs):
            if x.__class__ is Tensor:
                self.arg_of[id(x)] = i
                self.arg_refs.append(weakref.ref(x))
                self.arg_entries[id(x)] = External(x, self._new(x._data, INPUT, i))
            elif _backend.is_array(x) and not isinstance(x, np.generic):
                s = self._new(x, INPUT, i)
                c = x.__class__
                if (c is np.ndarray or c is _backend.WatchedArray) and id(x) not in self.watched:
                    # The function sees a view that reports what NumPy computes from it
                    # (see _backend.WatchedArray); chainrule's operations on it read slot s.
                    # (A WatchedArray argument: one that a function being traced passed, after
                    # its trace was abandoned, is watched again, for this trace.)
                    w = self.watched[id(x)] = _backend.watched(x, self._raw_use)
                    self.slot_of[id(w)] = s

    # -- slots

    def _new(self, value, kind: int = COMPUTED, where=None) -> int:
        k = len(self.values)
        self.values.append(value)
        if value.__class__ is ndarray and value.nbytes >= IN_PLACE_BYTES:
            self.large = True
        if kind != COMPUTED:
            self.kinds[k] = kind
            self.where[k] = where
        self.slot_of[id(value)] = k
        return k

    def const(self, value) -> int:
        k = len(self.values)
        self.values.append(value)
        self.kinds[k] = CONST
        # Found by its object, a Python number too (held, as every value: its id stays its
        # own): a node that saved an operand number reads the forward's slot (W5, a number
        # per branch, benchmarks/compile_trace.py).
        self.slot_of[id(value)] = k
        if value.__class__ is ndarray and value.nbytes >= IN_PLACE_BYTES:
            self.large = True
        return k

    def emit(self, ins: tuple, reads, writes) -> None:
        self.code.append(ins)
        self.reads.append(reads)
        self.writes.append(writes)

    def _slot(self, t: Tensor) -> int:
        """The slot of tensor t's current values; a tensor from outside becomes external."""
        s = self.slot_of.get(id(t._data))
        if s is None or not self._stands_for(s, t):
            s = self._external(t)
        return s

    def _stands_for(self, s: int, t: Tensor) -> bool:
        """Whether slot s, found by t's array, stands for t. An argument's or an outside
        tensor's slot stands for that tensor alone: two tensors that share one array while
        tracing (one a detach() of the other) may not at the next call (JAX's in-place
        operators give a tensor a new array)."""
        return self.kinds.get(s, COMPUTED) != EXTERNAL or self.externals[self.where[s]].ref() is t

    def _external(self, t: Tensor) -> int:
        i = self.external_of.get(id(t))
        if i is not None:
            ext = self.externals[i]
            if ext.slot is None:
                ext.slot = s = self._new(t._data, EXTERNAL, i)
                return s
            if self.values[ext.slot] is t._data:  # its slot, taken by a tensor sharing it
                return ext.slot
        self._numpy_view(t._data)
        i = len(self.externals)
        self.held.append(t)
        self.external_of[id(t)] = i
        ext = External(t, None)
        shared = self.slot_of.get(id(t._data))
        if shared is not None and self.kinds.get(shared) == EXTERNAL:
            ext.shares = self.where[shared]
        self.externals.append(ext)
        ext.slot = s = self._new(t._data, EXTERNAL, i)
        return s

    def tensor_ref(self, t: Tensor) -> tuple:
        """How the replay finds tensor t: ("arg", position) or ("ext", external index)."""
        i = self.arg_of.get(id(t))
        if i is not None:
            return ("arg", i)
        i = self.external_of.get(id(t))
        if i is None:
            i = len(self.externals)
            self.held.append(t)
            self.external_of[id(t)] = i
            self.externals.append(External(t, None))
        return ("ext", i)

    def value_ref(self, v) -> int:
        """The slot of a raw array or Python scalar (an unknown array is a constant)."""
        if v.__class__ in _PLAIN:
            return self.const(v)
        s = self.slot_of.get(id(v))
        if s is None:
            self._numpy_view(v)
            return self.const(v)
        return s

    def _raw_use(self, what: str) -> None:
        """NumPy used the values of a raw NumPy array argument (see _backend.WatchedArray):
        what it computed would be a constant of the replay."""
        self.abandon(
            f"{what}: NumPy computes it outside chainrule, and a replay would keep the first "
            "call's values; pass a tensor instead (cr.asarray(a) makes no copy) and use "
            "chainrule's operations on it, or compute those values outside the compiled "
            "function"
        )

    def _numpy_view(self, a) -> None:
        """Abandon the trace if array `a`, met for the first time, is a view that NumPy made
        of a raw array argument (a.T, a[0], np.asarray(a)), or a WatchedArray NumPy made of
        one (a copy): it would be baked as a constant, but it changes with the argument."""
        if a.__class__ is not np.ndarray:
            if a.__class__ is _backend.WatchedArray:
                _backend.unwatched(a)
            return
        base = a.base
        while base is not None:
            s = self.slot_of.get(id(base))
            if s is not None and self.kinds.get(s) == INPUT:
                self.abandon(
                    "a view of a raw NumPy array argument made by NumPy (a.T, a[0], "
                    "a.reshape(...)) can't be followed; pass a tensor (cr.asarray(a)) and "
                    "take the view of the tensor"
                )
                return
            base = base.base if base.__class__ is np.ndarray else None

    def params(self, p) -> tuple:
        """(p, ()) when p holds no slot value; else (a template with Slot markers, the slots
        it reads)."""
        if p is None or p.__class__ in _PLAIN:
            return p, ()
        stack = [p]
        slot_of = self.slot_of
        while stack:
            item = stack.pop()
            c = item.__class__
            if c is tuple or c is list:
                stack.extend(item)
            elif c not in _PLAIN and id(item) in slot_of:
                template = _template(p, slot_of)
                slots = tuple(_template_slots(template))
                self.templates = True
                return Template(template, slots), slots
            elif c is _backend.WatchedArray:  # one NumPy made of an argument (a.argsort())
                _backend.unwatched(item)
        return p, ()

    # -- hooks (called by the core while grad_mode.tracer is this tracer)

    # The operations' hooks. The one- and two-input fast paths of _factories call `unary` and
    # `binary` with their operands as they are (no tuple of inputs and results, no loop), and
    # these find an operand's slot inline (as _slot does): a trace's forward is mostly such
    # operations (benchmarks/compile_trace.py, W1, W3, W5).

    def unary(self, rule, x: Tensor, out, p, res: Tensor) -> None:
        """A one-input rule's operation on tensor x made `out`, the array of res."""
        slot_of = self.slot_of
        kinds = self.kinds
        s = slot_of.get(id(x._data))
        if s is None or (
            s in kinds and kinds[s] == EXTERNAL and self.externals[self.where[s]].ref() is not x
        ):
            s = self._external(x)
        if p is None or p.__class__ in _PLAIN:
            reads = (s,)
        else:
            if rule.name == "getitem" and self._masked_by_values(p[0]):
                self.abandon(_SIZED_BY_VALUES)
                return
            p, p_reads = self.params(p)
            reads = (s, *p_reads)
        values = self.values
        k = len(values)
        values.append(out)
        slot_of[id(out)] = k
        if out.__class__ is ndarray and out.nbytes >= IN_PLACE_BYTES:
            self.large = True
        self.code.append(_make(Fwd1, (FWD1, rule.fwd, s, p, k, not out.ndim, res._xp)))
        self.reads.append(reads)
        self.writes.append(k)
        e = res._edge
        if e is not None:
            self.nodes.add(e)

    def binary(self, rule, x, y, out, res: Tensor) -> None:
        """A two-input rule's operation on x and y (tensors or Python numbers: constants, see
        const) made `out`, the array of res."""
        slot_of = self.slot_of
        values = self.values
        kinds = self.kinds
        if x.__class__ is Tensor:
            a = slot_of.get(id(x._data))
            if a is None or (
                a in kinds and kinds[a] == EXTERNAL and self.externals[self.where[a]].ref() is not x
            ):
                a = self._external(x)
        else:
            a = len(values)
            values.append(x)
            kinds[a] = CONST
            slot_of[id(x)] = a
        if y.__class__ is Tensor:
            b = slot_of.get(id(y._data))
            if b is None or (
                b in kinds and kinds[b] == EXTERNAL and self.externals[self.where[b]].ref() is not y
            ):
                b = self._external(y)
        else:
            b = len(values)
            values.append(y)
            kinds[b] = CONST
            slot_of[id(y)] = b
        k = len(values)
        values.append(out)
        slot_of[id(out)] = k
        if out.__class__ is ndarray and out.nbytes >= IN_PLACE_BYTES:
            self.large = True
        self.code.append(_make(Fwd2, (FWD2, rule.fwd, a, b, k, not out.ndim, res._xp)))
        self.reads.append((a, b))
        self.writes.append(k)
        e = res._edge
        if e is not None:
            self.nodes.add(e)

    def _masked_by_values(self, key) -> bool:
        """Whether indexing key holds a boolean array computed inside or passed in: the
        selection's size then changes with the values, and a replay would keep the shapes
        that later operations and gradients took from the first call's (var's count, sum's
        gradient spread back)."""
        for k in key if key.__class__ is tuple else (key,):
            if hasattr(k, "dtype") and _backend.dtype_kind(k.dtype) == "b":
                s = self.slot_of.get(id(k))
                if s is not None and self.kinds.get(s) != CONST:
                    return True
        return False

    def record(self, rule, xs, outs, p, results) -> None:
        """Any rule's operation on `xs` (tensors and other values) made the arrays `outs` of
        `results`."""
        if rule.name in _SIZED_RULES:
            self.abandon(_SIZED_BY_VALUES)
            return
        values = self.values
        kinds = self.kinds
        ins = []
        for x in xs:
            c = x.__class__
            if c is Tensor:
                s = self._slot(x)
            elif c in _PLAIN:  # a Python number: a constant (see const)
                s = len(values)
                values.append(x)
                kinds[s] = CONST
                self.slot_of[id(x)] = s
            else:
                s = self.const(x)
            ins.append(s)
        kind = _CALLS[rule.form]
        xp = results[0]._xp
        if p is not None:
            p, p_reads = self.params(p)
            if p_reads:
                ins += p_reads
        if kind != FWDN:
            o = outs[0]
            k = len(values)
            values.append(o)
            self.slot_of[id(o)] = k
            if o.__class__ is ndarray and o.nbytes >= IN_PLACE_BYTES:
                self.large = True
            if kind == FWD1:
                self.code.append(_make(Fwd1, (FWD1, rule.fwd, ins[0], p, k, o.ndim == 0, xp)))
            else:
                self.code.append(_make(Fwd2, (FWD2, rule.fwd, ins[0], ins[1], k, o.ndim == 0, xp)))
            self.reads.append(tuple(ins))
            self.writes.append(k)
        else:
            out_slots = tuple(self._new(o) for o in outs)
            norms = tuple(getattr(o, "ndim", 1) == 0 for o in outs)
            n = len(xs)
            self.emit(
                FwdN(FWDN, rule.fwd, tuple(ins[:n]), p, out_slots, norms, rule.multi, xp),
                tuple(ins),
                out_slots,
            )
        e = results[0]._edge
        if e is not None:
            self.nodes.add(e.node if e.__class__ is Port else e)

    def guard(self, key, check) -> None:
        """A Python value the traced code branched on (Module.training, an optimizer's
        layout): check(leaves) must hold at a replay, else the call traces again. One guard
        per key."""
        self.guards.setdefault(key, check)

    def settle_after(self, tensors: Callable[[], list]) -> None:
        """An optimizer step on a lazy library (Dask), which settles what it updated when run
        eagerly: tensors() gives them after the call and after each replay, to be settled
        then with the call's tensor outputs, in one computation."""
        self.settles.append(tensors)

    def set_mode(self, module, training: bool) -> None:
        """Module.training set inside the function (train(), eval()): reads of it after this
        are not guarded (the function decides them), and the mode it ends with is set again
        after each replay, which runs no Python (with the settles: see settle_after)."""
        if not self.modes:
            self.settle_after(functools.partial(_set_modes, self.modes))
        self.modes[id(module)] = (weakref.ref(module), training)

    def host(self, fn, args: tuple, like: Tensor) -> list[Tensor]:
        """Python numbers that fn(*args) computes from state kept outside tensors (an
        optimizer's hyperparameters and step count): computed now, and again by each replay
        where the recording meets them (so fn may change that state, as a step count);
        returned as 0-d tensors of like's library and dtype (as NumPy casts a Python number
        met by an array of that dtype)."""
        xp, dtype = like._xp, like._data.dtype
        arrays = host_arrays(fn, args, dtype, xp)
        slots = tuple(self._new(a) for a in arrays)
        self.emit(Host(HOST, fn, args, slots, dtype, xp), (), slots)
        return [Tensor(a, xp, None) for a in arrays]

    def detaching(self, t: Tensor) -> None:
        """Before t.detach(): a tensor the trace has not met is one from outside (a .grad an
        eager backward made, read by an optimizer's step), whose detached twin shares its
        array; it becomes external here, so that the twin reads it at each replay (see
        External.shares) rather than being a constant of the trace."""
        if id(t._data) not in self.slot_of:
            self._external(t)

    def converted(self, src, out: Tensor, fn, p) -> None:
        """out was made as fn(xp, values of src, p) outside the recorded operations (see
        _tensor.converted): recorded as a computation when src is a tensor or an array of
        the trace (an argument, a value computed inside, a tensor from outside)."""
        if src.__class__ is Tensor:
            s = self._slot(src)
        else:
            s = self.slot_of.get(id(src))
            if s is None:  # a constant
                if src.__class__ is list or src.__class__ is tuple:
                    self.sequence(src)
                else:
                    self._numpy_view(src)
                return
        data = out._data
        if data is self.values[s]:  # no copy: the same values
            return
        k = self._new(data)
        self.emit(Fwd1(FWD1, fn, s, p, k, False, out._xp), (s,), (k,))

    def sequence(self, data) -> None:
        """Python data (nested lists and tuples) that NumPy made an array of, a constant:
        abandon the trace if it holds a raw NumPy array argument, or a copy or view NumPy
        made of one (its values would be baked)."""
        stack = [data]
        while stack:
            item = stack.pop()
            c = item.__class__
            if c is list or c is tuple:
                stack.extend(item)
            elif c is _backend.WatchedArray:
                self._raw_use(
                    "an array made by NumPy from a list or tuple that holds a raw NumPy array "
                    "argument (or a copy or a view of one)"
                )
            elif c is np.ndarray:
                self._numpy_view(item)

    def concrete(self, t: Tensor, what: str) -> None:
        raise ConcretizationError(
            f"{what} was called on a tensor while chainrule.compile traced the function: its "
            "values are not known when the trace is replayed, so Python cannot branch on them "
            "or keep them. Pass the value as a static argument (static_argnums / "
            "static_argnames), compute it outside the compiled function, or keep it a tensor "
            "(chainrule.where instead of an if)."
        )

    def unsupported(self, what: str) -> None:
        self.abandon(f"{what} can't be replayed")

    def abandon(self, reason: str) -> None:
        """Stop recording: the call goes on eagerly, and the function stays eager."""
        if self.reason is None:
            self.reason = reason
        self.modes.clear()  # the modes set from now on are not seen (see set_mode)
        if grad_mode.tracer is self:
            set_feature("tracer", None)

    def _locate(self, t: Tensor) -> tuple:
        """How the replay finds tensor t, which an in-place write gives a new array: an
        argument, a tensor from outside (made inside, if nothing holds it at the end), or
        the .grad of a leaf that a backward or an assignment gave it (("grad", leaf ref))."""
        i = self.arg_of.get(id(t))
        if i is not None:
            return ("arg", i)
        i = self.external_of.get(id(t))
        if i is not None:
            return ("ext", i)
        owner = self.grad_owner.get(id(t))
        if owner is not None and getattr(owner[1](), "grad", None) is t:
            return ("grad", owner[0])
        return self.tensor_ref(t)

    def _grad_state(self, t: Tensor) -> None:
        if id(t) not in self.grad_states:
            self.grad_states[id(t)] = (self.tensor_ref(t), getattr(t, "_grad", None) is None)

    def read_grad(self, t: Tensor) -> None:
        """A .grad read while None: Python code branches on that (zero_grad and an
        optimizer's step skip such a tensor), so the replay checks that it is still None.
        Kept for an argument or a tensor from outside (see finish)."""
        self._grad_state(t)

    def accumulating(self, pairs) -> None:
        """Before backward stores gradients into leaves' .grad."""
        for t, _ in pairs:
            self._grad_state(t)
        grads = [t.grad for t, _ in pairs]
        self._grads_before = [(g, 0 if g is None else g._version) for g in grads]

    def set_grad(self, t: Tensor, value) -> None:
        self._grad_state(t)
        if value is not None and value is t.grad:
            return  # `t.grad *= 2` assigns the .grad it wrote: nothing changes
        if value is not None and (value._edge is not None or id(value._data) not in self.slot_of):
            self.abandon("assigning .grad a tensor that was not computed inside")
            return
        ref = self.tensor_ref(t)
        s = None if value is None else self.slot_of[id(value._data)]
        if value is not None:
            self.grad_owner[id(value)] = (ref, weakref.ref(t))
            self.leaf_grads.append((ref, t))
        self.grad_leaves.append(ref)
        self.emit(SetGrad(SETGRAD, ref, s), () if s is None else (s,), ())

    def writing(self, t: Tensor) -> None:
        """Before an in-place write to t's memory: keep the values of a tensor from outside
        as they were (a constant made inside must not carry the write into the next call)."""
        s = self._pending = self._slot(t)
        self._target = self._locate(t)
        root = self._root_slot(s)
        if self.kinds.get(root) == EXTERNAL:
            ext = self.externals[self.where[root]]
            if ext.snapshot is None:
                a = self.values[root]
                ext.snapshot = _backend.namespace(a).asarray(a, copy=True)

    def sharing(self, group, name: str, replayable: bool, records: bool) -> None:
        """Before an in-place write to memory that the live members of alias group `group`
        share (views, detach(), .data): the replay makes it in its own arrays, which share
        memory as these do, where arrays are written in place (not JAX's nor Dask's) and
        each member's array is a slot that stands for it: computed inside (a view, .data), or
        an argument's or a tensor's from outside (read at each call, or a constant made
        inside: a fresh copy at each call) for a write that records nothing (the replay
        changes their history in no way); else the call runs eagerly. replayable: False for
        a key that holds arrays; records: the write is recorded (see _inplace._records)."""
        reason = None
        if not group.mutable:
            reason = "of immutable or lazy arrays"
        elif not replayable:
            reason = "at an index array"
        else:
            for m, _ in group.live():
                s = self.slot_of.get(id(m._data))
                kind = self.kinds.get(s, COMPUTED)
                if kind == COMPUTED and s is not None:
                    continue
                if s is None or records or kind == CONST or not self._stands_for(s, m):
                    reason = "with an argument, a tensor from outside or a constant"
                    break
                if kind == INPUT and self.arg_of.get(id(m)) != self.where[s]:
                    reason = "with an argument that another tensor aliases"
                    break
        if reason is not None:
            self.unsupported(f"an in-place {name} to memory that views or aliases share {reason}")
        elif group not in self.shared_groups:
            self.shared_groups.append(group)

    def adopt(self, nodes: list) -> None:
        """Nodes that an in-place write through a view made (CopySlices, the views' new
        nodes): part of the graph recorded inside."""
        self.nodes.update(nodes)

    def realiased(self, arrays) -> None:
        """The tensors of `arrays` (pairs of a tensor and its array before) that were given new
        array objects of the same memory (after a write to shared memory; `.data`): slots that
        are views of the old ones (an array the trace doesn't know stays unknown)."""
        for t, old in arrays:
            s = self.slot_of.get(id(old))
            if s is not None and t._data is not old:
                k = self._new(t._data)
                self.emit(Fwd1(FWD1, _same_memory, s, None, k, False, t._xp), (s,), (k,))

    def _shared_kept(self, outputs: list, externals: list, persistent: list) -> None:
        """A replay's arrays share memory as the traced ones do only where a slot stands for
        each (see sharing): memory written through an alias can't reach two outputs, nor a
        tensor made inside and kept outside."""
        groups = [id(g) for g in self.shared_groups]
        if not groups:
            return
        seen = []
        for t in outputs:
            vc = getattr(t, "_vc", None) if t.__class__ is Tensor else None
            if vc is not None and id(vc.group) in groups:
                if id(vc.group) in seen:
                    raise Unsupported("returning tensors that share memory written in place")
                seen.append(id(vc.group))
        for t, kept, ext in zip(externals, persistent, self.externals):
            vc = getattr(t, "_vc", None) if kept else None
            read = ext.slot is not None and self.kinds.get(ext.slot) == EXTERNAL
            if vc is not None and id(vc.group) in groups and not read:
                raise Unsupported(
                    "a tensor made inside and kept outside shares memory written in place inside"
                )

    def _root_slot(self, s: int) -> int:
        """The slot whose memory slot s's array is a view of (NumPy), else s."""
        a = self.values[s]
        base = getattr(a, "base", None) if a.__class__ is np.ndarray else None
        while base is not None:
            b = self.slot_of.get(id(base))
            if b is not None:
                return b
            base = getattr(base, "base", None) if base.__class__ is np.ndarray else None
        return s

    def wrote(self, t: Tensor, kind: str, *payload) -> None:
        """After an in-place write to t: the write, as an instruction on slots."""
        before = self._pending
        if kind == "op":
            raw_op, value = payload
            v = self.value_ref(value)
            refs = (raw_op, v)
            reads = (before, v)
        else:
            key, value = payload
            v = self.value_ref(value)
            key, key_reads = self.params(key)
            refs = (key, v)
            reads = (before, v, *key_reads)
        out = self._new(t._data)
        # The replay gives the tensor its new array (a library with immutable arrays makes
        # one) and counts the write, as the eager write did.
        self.rebinds.append((self._target, t._vc, 1))
        self.own_writes.append((self._target, t._vc))
        self.emit(Write(WRITE, kind, before, refs, out, t._xp, self._target), reads, (out,))

    def accumulated(self, pairs, roots, create_graph: bool) -> None:
        """After backward stored gradients into leaves' .grad."""
        if create_graph:
            self.abandon("backward(create_graph=True) (its .grad has a history)")
            return
        roots_slots = tuple(self.value_ref(g) for _, g in roots)
        stored = self._new(None)
        self.emit(Stored(STORED, roots_slots, stored), roots_slots, (stored,))
        grads_before, self._grads_before = self._grads_before, []
        for (t, g), (before, version) in zip(pairs, grads_before):
            s = self.slot_of.get(id(g))
            if s is None:
                self.abandon("a gradient computed outside the trace")
                return
            ref = self.tensor_ref(t)
            out = self._new(t._grad._data)
            self.leaf_grads.append((ref, t))
            self.grad_owner[id(t._grad)] = (ref, weakref.ref(t))
            if before is None and id(t) not in self.fresh_grads:
                # A .grad made by this call: writes into it count on a counter only where
                # one was made (a detach() of it, an optimizer's step), which a replay does
                # not make; its version at the end is set again by each replay.
                if not self.fresh_grads:
                    versions = functools.partial(_grad_versions, self.fresh_grads, [True])
                    self.settle_after(versions)
                self.fresh_grads[id(t)] = weakref.ref(t)
            if before is not None and t._grad is before and before._version != version:
                # Added in place: the replay's accumulation counts the write itself.
                self.rebinds.append((ref, before._vc, before._version - version))
            self.grad_leaves.append(ref)
            self.emit(Acc(ACC, ref, s, stored, out), (s, stored), (out,))
            i = self.external_of.get(id(t._grad))
            if i is not None:  # added into a .grad from before the call: it must be there
                self.grad_guards.append((ref, i))

    # -- backward walks

    def execute(self, roots, targets, retain_graph, create_graph, backend, accumulate):
        """The engine's walk (see autograd._engine._execute), run here on raw arrays and
        recorded; under create_graph the VJPs are operations, recorded as such."""
        if create_graph:
            return _engine._execute(roots, targets, retain_graph, True, backend, accumulate)
        try:
            slots = [(e, self.value_ref(g)) for e, g in roots]
            captured = self._walk(slots, targets, retain_graph, backend, True)
        except Unsupported as e:
            self.abandon(str(e))
            return _engine._execute(roots, targets, retain_graph, False, backend, accumulate)
        return {node: self._captured(g) for node, g in captured.items()}

    def _walk(self, roots, targets, retain_graph, backend, main: bool) -> dict:
        """The engine's walk (autograd._engine.walk) on slots, each step recorded (see
        _Recorded): roots are (edge, slot); returns {node: slot (or a list)}. Tensor hooks
        run as the engine runs them, recorded (see _tensor_hooks); in the backward of outputs
        with a live graph (not `main`) the hooks of the tensors it ends at are left to the
        engine that runs it."""
        order, leaves, freed, shared = _engine._topological(roots, False)
        if targets is None:
            run = reach = None
            wanted = leaves
        else:
            run, reach = _engine._needed(order, targets)
            wanted = targets
        _engine._check_runnable(order, run, freed)
        # As the engine: no node is looked at for hooks while none is registered anywhere.
        # Without hooks, each node is checked as its VJP runs (_check_node): a walk that
        # stops on Unsupported has changed nothing outside the trace. Hooks would have run:
        # every node is checked first.
        hooked = STATE.live_hooks > 0
        if hooked:
            self._check_walk(order if run is None else run, targets if main else None)
        if main:
            for leaf in leaves:
                if hooked:
                    _check_hooks(leaf)
                self.hooked_leaves[id(leaf)] = leaf.leaf
        grads: dict = {}
        for e, g in roots:
            self._add(grads, e, g)
        if not hooked and run is None:  # the common walk: see _lean_walk
            ran: list = []
            self._lean_walk(order, grads, shared, raw_namespace(backend), ran)
            captured: dict = {}
        else:
            steps = _Recorded(self, backend, reach, hooked)
            ran = steps.ran
            captured = _engine.walk(order, grads, run, reach, targets, shared, steps)
            if ZERO in captured.values():  # (the engine's walk hands ZERO on: see _add)
                raise Unsupported(_ONLY_ZERO)
        for node in wanted:
            if node not in captured and node in grads:
                g = grads[node]
                if g is ZERO:  # eager gives zeros, which the walk did not make
                    raise Unsupported(_ONLY_ZERO)
                hooks = getattr(node, "hooks", None) if hooked else None
                if main and node.__class__ is AccumulateGrad and hooks is not None:
                    g = self._tensor_hooks(node, hooks, g, backend)
                captured[node] = g
        # Saved values are released once the walk is done: a walk that stops on Unsupported
        # leaves the graph whole for the engine to run.
        if not retain_graph:
            for node in ran:
                if node.saved is not None:
                    node.saved = RELEASED
        return captured

    def _lean_walk(self, order, grads: dict, shared, xp, ran: list) -> None:
        """The walk of the common case (no hook anywhere, every leaf wanted) on gradient
        slots, recorded, as the engine's `_lean` runs it: over `order` from the gradients in
        `grads` (by node: the roots'), which holds the leaves' at the end; the nodes that
        ran are listed in `ran`. A node of one or two inputs and one output, no gradient to
        fit, is recorded here (as _vjp_any records it, fewer lists and checks); any other
        through _vjp_any."""
        # A fast path, beside the walk with hands (autograd._engine.walk, _Recorded, whose
        # hand is _vjp_any): the backward of W1, W3 and W5 (benchmarks/compile_trace.py). No
        # call per node, no zip, the tracer's lists read once: W1's first call 140.6 ->
        # 133.4 M. It records what _vjp_any records (test_compile_trace's lean-walk test).
        values = self.values
        slot_of = self.slot_of
        nodes = self.nodes
        code = self.code
        reads_of = self.reads
        writes_of = self.writes
        add = self._add
        carry_node = carry = None
        for node in reversed(order):
            if node is carry_node:
                g = carry
                carry_node = carry = None
            else:
                g = grads.pop(node, None)
                if g is None:
                    continue
                if g is ZERO:  # (only ZERO reached it: see _add)
                    raise Unsupported(_ONLY_ZERO)
            ran.append(node)
            edges = node.edges
            n = len(edges)
            if n > 2 or g.__class__ is list or node.fit is not None or node not in nodes:
                outs = self._vjp_any(xp, None, node, g)
            else:
                saved = node.saved
                reads = [g]
                if saved is None:
                    saved_ref = None
                elif saved.__class__ is not tuple:  # (as _check_node)
                    raise Unsupported("saved-tensor hooks")
                else:  # (_saved_slots, written out)
                    refs = []
                    for v in saved:
                        if v is None:
                            refs.append(None)
                            continue
                        s = slot_of.get(id(v))
                        if s is None:
                            if v.__class__ not in _PLAIN:
                                raise Unsupported("a saved value from outside the trace")
                            s = self.const(v)
                        refs.append(s)
                        reads.append(s)
                    saved_ref = tuple(refs)
                needs = (
                    _ALL_NEEDED[1] if n == 1 else _PAIR_NEEDS[edges[0] is None][edges[1] is None]
                )
                rule = node.rule
                vjp = rule.vjp
                params = node.params
                gins = vjp(xp, values[g], saved, params, needs)
                # The input gradients, each given the next slot (a, b: input 0's and 1's).
                a = gins[0] if needs[0] else None
                b = gins[1] if n == 2 and needs[1] else None
                # A gradient known to be zero (the old values of a tensor written over
                # everywhere, as an in-place ReLU does): recorded as none made, handed on
                # as ZERO, which adds nothing where it meets another gradient (see _add).
                zero = None
                if a is ZERO or b is ZERO:
                    zero = a is ZERO, b is ZERO
                    a = None if zero[0] else a
                    b = None if zero[1] else b
                if a is not None:
                    slot_of[id(a)] = ka = len(values)
                    values.append(a)
                    if b is None:
                        outs = (ka,) if n == 1 else (ka, None)
                        made = ka
                    else:
                        slot_of[id(b)] = kb = len(values)
                        values.append(b)
                        made = outs = (ka, kb)
                elif b is not None:
                    slot_of[id(b)] = kb = len(values)
                    values.append(b)
                    outs = (None, kb)
                    made = kb
                else:
                    made = outs = (None,) * n
                if params is not None:
                    params, p_reads = self.params(params)
                    reads += p_reads
                parts = rule.vjp_formulas
                # outs: the record's field and the slots made, one tuple for both.
                code.append(
                    _make(Vjp, (VJP, vjp if parts is None else parts,
                                0 if parts is None else len(parts), g, saved_ref, params, needs,
                                outs, None, xp))
                )  # fmt: skip
                reads_of.append(tuple(reads))  # (see Recording)
                writes_of.append(made)  # (one slot: the number itself, see Recording)
                if zero is not None:
                    outs = tuple([ZERO if z else o for o, z in zip(outs, zero)])
            # Indexed, not zipped (as the engine's _lean).
            i = 0
            while i < n:
                e = edges[i]
                s = outs[i]
                i += 1
                if e is None or s is None:
                    continue
                if e in shared or e.__class__ is Port:
                    add(grads, e, s)
                elif s is ZERO:  # e's one consumer: ZERO is all it gets
                    raise Unsupported(_ONLY_ZERO)
                elif carry_node is None:
                    carry_node = e
                    carry = s
                else:
                    grads[e] = s

    def _check_walk(self, nodes, targets) -> None:
        """Raise Unsupported for what a replay of a walk over `nodes` (ending at `targets`),
        while hooks are registered, could not reproduce."""
        for node in nodes:
            self._check_node(node)
            _check_hooks(node)
        for node in targets if targets is not None else ():
            if node.__class__ is not AccumulateGrad and node not in self.nodes and hooks_key(node):
                raise Unsupported("hooks on a tensor from outside the function with a history")

    def _check_node(self, node) -> None:
        """Raise Unsupported for a node whose VJP a replay could not run as the walk did."""
        if node not in self.nodes:
            raise Unsupported("a backward into a graph recorded outside the function")
        saved = node.saved
        if saved is not None and saved.__class__ is not tuple:
            raise Unsupported("saved-tensor hooks")
        if node.fit.__class__ is ComplexFit and saved is not None:  # (meets_complex)
            # The engine conjugates around holomorphic rules that meet complex values
            # (apply_complex); a replay runs the formulas as written.
            if _engine._holds_complex(saved):
                raise Unsupported("gradients through complex values")

    def _tensor_hooks(self, node, hooks, g, backend):
        """The hooks registered on the tensors of node's outputs, run on gradient slot(s) g:
        what a hook computes is recorded like any operation (a hook's Python side effects
        happen while tracing only, as every Python side effect); the replaced slot(s)."""
        many = node.__class__ is not AccumulateGrad and node.rule.multi
        grads = list(g) if many else [g]
        for i, fns in hooks.tensor.items():
            s = grads[i]
            for fn in tuple(fns):
                if s is None:
                    break
                t = Tensor(self._normalized(s), backend, None)
                new = fn(t)
                if new is None:
                    continue
                data = _engine._checked(fn, t, new, backend, False)
                s = self._slot(new) if new.__class__ is Tensor else self.value_ref(data)
            grads[i] = s
        return grads if many else grads[0]

    def _captured(self, g):
        """The value of a captured gradient slot (a list for a node with several outputs),
        normalized to an array (as autograd.grad would, so that its result is a slot)."""
        if g.__class__ is list:
            return [None if s is None else self._normalized(s) for s in g]
        return self._normalized(g)

    def _normalized(self, s: int):
        v = self.values[s]
        if v.__class__ is np.ndarray or not isinstance(v, np.generic):
            return v
        out = self._new(np.asarray(v))
        self.emit(Norm(NORM, s, out), (s,), (out,))
        return self.values[out]

    def _add(self, grads: dict, edge, g: int) -> None:
        # As the engine's _add: ZERO (a gradient known to be zero) adds nothing; a node it
        # alone reaches holds ZERO, which the walk refuses when it gets there (_ONLY_ZERO).
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
            buf[i] = g if buf[i] is None else self._sum(buf[i], g)
            return
        prev = grads.get(edge)
        if prev is None or prev is ZERO:
            grads[edge] = g
        elif g is not ZERO:
            grads[edge] = self._sum(prev, g)

    def _sum(self, a: int, b: int) -> int:
        values = self.values
        v = values[a] + values[b]
        out = len(values)
        values.append(v)
        self.slot_of[id(v)] = out
        self.code.append(_make(Add, (ADD, a, b, out)))
        self.reads.append((a, b))
        self.writes.append(out)  # (one slot: the number itself, see Recording)
        return out

    def _saved_slots(self, saved: tuple, reads: list) -> tuple:
        """The slots of a node's saved values (None for None), each also added to `reads`:
        a Python number is a constant, a value from outside is refused."""
        slot_of = self.slot_of
        refs = []
        for v in saved:
            if v is None:
                refs.append(None)
                continue
            s = slot_of.get(id(v))
            if s is None:
                if v.__class__ not in _PLAIN:
                    raise Unsupported("a saved value from outside the trace")
                s = self.const(v)
            refs.append(s)
            reads.append(s)
        return tuple(refs)

    def _vjp_any(self, xp, reach, node, g) -> list:
        """Run node's VJP on gradient slot(s) g and record it, in namespace xp; the input
        gradients' slots. Any node: several inputs or outputs, gradients to fit to
        their input's shape or dtype, a walk to some targets (`reach`: the nodes that lead to
        them; None: every leaf). (The hand of the engine's walk, _Recorded.vjp, with both
        bound; the common walk records a simple node itself, see _lean_walk.)"""
        self._check_node(node)
        values = self.values
        slot_of = self.slot_of
        if g.__class__ is list:
            multi = True
            g_ref = tuple(g)
            g_value = tuple([None if s is None else values[s] for s in g])
            reads = [s for s in g if s is not None]
        else:
            multi = False
            g_ref = g
            g_value = values[g]
            reads = [g]
        saved = node.saved
        saved_ref = None if saved is None else self._saved_slots(saved, reads)
        edges = node.edges
        if reach is not None:
            needs = tuple([e is not None and node_of(e) in reach for e in edges])
        elif None in edges:
            needs = tuple([e is not None for e in edges])
        else:
            needs = _ALL_NEEDED[len(edges)] if len(edges) < 4 else (True,) * len(edges)
        rule = node.rule
        vjp = rule.vjp
        params = node.params
        gins = vjp(xp, g_value, saved, params, needs)
        # Rules declared by formula (one per input) are replayed by calling the formulas.
        parts = rule.vjp_formulas
        form = 0 if parts is None or multi else len(parts)
        fit = node.fit
        outs = []
        fits = None  # (see Vjp.fits)
        made = None  # the one slot made, or -1 for several
        zero = False
        i = -1
        for gi in gins:
            i += 1
            if gi is None or not needs[i]:
                outs.append(None)
                continue
            if gi is ZERO:  # recorded as none made, handed on as ZERO (see _lean_walk)
                outs.append(None)
                zero = True
                continue
            shape = dtype = None
            if fit is not None and fit[i] is not None:
                f_shape, f_dtype = fit[i]
                if f_shape is not None and tuple(gi.shape) != tuple(f_shape):
                    shape = f_shape
                    gi = _backend.sum_to(xp, gi, shape)
                if f_dtype is not None and gi.dtype != f_dtype:
                    dtype = f_dtype
                    gi = _engine._cast(xp, gi, dtype)
            if shape is not None or dtype is not None:
                if fits is None:
                    fits = [None] * len(gins)
                fits[i] = (shape, dtype)
            k = len(values)
            values.append(gi)
            slot_of[id(gi)] = k
            outs.append(k)
            made = k if made is None else -1
        if params is not None:
            params, p_reads = self.params(params)
            reads += p_reads
        outs = tuple(outs)
        self.code.append(
            _make(Vjp, (VJP, vjp if form == 0 else parts, form, g_ref, saved_ref, params, needs,
                        outs, None if fits is None else tuple(fits), xp))
        )  # fmt: skip
        self.reads.append(tuple(reads))
        # (one slot: the number itself; else the outs, see Recording)
        self.writes.append(outs if made is None or made < 0 else made)
        if zero:
            return tuple([ZERO if gi is ZERO and w else s for gi, s, w in zip(gins, outs, needs)])
        return outs

    # -- the end of the call

    def finish(self, outputs: list) -> Recording:
        """The recording of the call that returned the flattened `outputs`, or Unsupported
        naming what the replay could not reproduce."""
        if self.reason is not None:
            raise Unsupported(self.reason)
        self._unmet(outputs)
        externals = [e.ref() for e in self.externals]
        persistent = self._persistent(externals, outputs)
        self._shared_kept(outputs, externals, persistent)
        arg_changes = self._arg_changes()
        out_specs = self._outputs(outputs, externals, persistent)
        escaped = self._unexplained(outputs, externals)
        if escaped:
            # Reference cycles made by the call (a hook whose closure holds the tensor whose
            # node it hooks) hold values too, and the cyclic GC is paused while tracing:
            # collect them, keeping the objects of the trace that something else holds.
            refs = [weakref.ref(x) for x in self.held]
            node_refs = [weakref.ref(node) for node in self.nodes]
            self.held, self.nodes = [], set()
            gc.collect()
            self.held = [x for x in (ref() for ref in refs) if x is not None]
            self.nodes = {node for node in (ref() for ref in node_refs) if node is not None}
            escaped = self._unexplained(outputs, externals)
        self.held, self.nodes = [], set()
        hook_guards = self._hook_guards()
        if escaped:
            raise Unsupported(
                "a tensor computed inside is kept outside the function (stored, not returned): "
                "the replay would not update it; return it instead",
                transient=True,
            )
        rec = Recording(
            self.code, self.reads, self.writes, self.values, self.kinds, self.where,
            self.externals, persistent, out_specs,
            self.grad_guards + [(ref, None if none else -1) for ref, none in
                                self.grad_states.values()
                                if ref[0] == "arg" or persistent[ref[1]]],
            self.input_tensor, self.graph,
            hook_guards, arg_changes,
        )  # fmt: skip
        rec.arg_edges = self.arg_edges
        rec.large = self.large
        rec.inside_leaves = self.inside_leaves
        rec.templates = self.templates
        rec.out_versions = self.out_versions
        rec.out_same = self.out_same
        rec.out_views = self.out_views
        rec.guards = list(self.guards.values())
        rec.settles = self.settles
        return rec

    def _holders(self, outputs: list, externals: list) -> list:
        """The ids of the arrays that the outputs, the arguments, tensors from outside and
        leaves' .grad hold, once per reference: not escapes (the first look; see
        _node_holders)."""
        extra = [id(t._data) for t in outputs if t.__class__ is Tensor]
        extra += [id(t._data) for t in externals if t is not None]
        extra += [id(t._data) for t in (ref() for ref in self.arg_refs) if t is not None]
        leaves = {id(t): t for _, t in self.leaf_grads}.values()
        extra += [id(t._grad._data) for t in leaves if t._grad is not None]
        extra += [id(e.entry) for e in self.externals]
        extra += [id(e.entry) for e in self.arg_entries.values()]
        return extra

    def _node_holders(self, outputs: list, externals: list) -> list:
        """The ids of the arrays that the nodes recorded, views' bases and alias groups'
        roots hold, once per reference: not escapes either (a pass over every node, made only
        for the values that _holders doesn't explain)."""
        extra = _node_arrays(self.nodes)
        bases = _view_bases([*outputs, *externals])
        kept = _kept_bases([*outputs, *externals])
        extra += [b for b in bases if b not in kept]
        extra += self._roots(outputs, kept)
        return extra

    def _roots(self, outputs: list, kept: set) -> list:
        """The ids of the root values that the alias groups of the outputs, the arguments
        and the tensors from outside hold where arrays are immutable (JAX's, Dask's; see
        _node.Alias), each group once: those that are an argument's or a tensor's from
        outside as it was at entry, and those of the groups of outputs and of values that
        nodes made inside saved, that no tensor from before the call is a member of (the
        memory of tensors made inside, as a view's base; the replay's outputs are new
        tensors, with a graph of their own). A view that is the same array object
        (JAX's reshape to the same shape) makes its slot one of these. A root that a write
        inside gave other values is not counted: the replay would not update it; nor one that
        is the array of a view's base that is kept outside (`kept`, see _kept_bases)."""
        before = [(e.ref(), e.entry) for e in [*self.externals, *self.arg_entries.values()]]
        ids = {id(t) for t, _ in before}
        out = []
        seen = set()
        for t, entry in before:
            group = alias_group(t) if t is not None else None
            if group is not None and id(group) not in seen and group.root is entry:
                seen.add(id(group))
                out.append(id(entry))
        groups = [alias_group(t) for t in outputs if t.__class__ is Tensor]
        for node in self.nodes:  # the counters of saved values nodes made inside check
            if node.__class__ is Node and node.versions is not None:
                groups += [vc.group for _, vc, _ in node.versions]
        for group in groups:
            if group is None or group.root is None or id(group) in seen:
                continue
            seen.add(id(group))
            if id(group.root) not in kept and not any(id(m) in ids for m, _ in group.live()):
                out.append(id(group.root))
        return out

    def _hook_guards(self) -> list:
        """(tensor ref, hooks_key) of each leaf from before the call (an argument or a tensor
        from outside) that a backward reached; leaves made inside are made again."""
        guards = []
        for ref in self.hooked_leaves.values():
            t = ref()
            if t is None:
                continue
            i = self.arg_of.get(id(t))
            if i is not None:
                guards.append((("arg", i), hooks_key(t._edge)))
                continue
            i = self.external_of.get(id(t))
            if i is not None and i not in self.inside_leaves:
                guards.append((("ext", i), hooks_key(t._edge)))
        self.hooked_leaves = {}
        return guards

    def _outputs(self, outputs: list, externals: list, persistent: list) -> list:
        specs = []
        graph: list = []
        grads = {id(t._grad): ref for ref, t in self.leaf_grads if t._grad is not None}
        counters: dict = {}  # id(version counter) -> [counter, positions of outputs made inside]
        made: dict[int, int] = {}  # id(output made inside) -> its first position
        for t in outputs:
            if t.__class__ is not Tensor:
                s = self.slot_of.get(id(t)) if _backend.is_array(t) else None
                specs.append(("value", t) if s is None else ("raw", s))
                continue
            i = self.arg_of.get(id(t))
            if i is not None:
                specs.append(("arg", i))
                continue
            ref = grads.get(id(t))
            if ref is not None:
                specs.append(("grad", ref))
                continue
            i = self.external_of.get(id(t))
            if i is not None and persistent[i]:
                specs.append(("ext", i))
                continue
            j = made.get(id(t))
            if j is not None:  # returned again: the same object
                specs.append(("same", j))
                continue
            made[id(t)] = len(specs)
            vc = getattr(t, "_vc", None)
            if vc is not None:
                counters.setdefault(id(vc), [vc, []])[1].append(len(specs))
            s = self.slot_of.get(id(t._data))
            if s is None:
                s = self.const(t._data)
            self._private(s, persistent)
            e = t._edge
            if e is None:
                specs.append(("new", s, t._xp))
            elif e.__class__ is AccumulateGrad:
                specs.append(("leaf", s, t._xp))
            else:
                if _reaches_freed(e):
                    specs.append(("stub", s, t._xp, node_of(e).rule))
                else:
                    specs.append(("graph", s, t._xp, len(graph)))
                    graph.append(t)
        if graph:
            self.graph = self._graph_program(graph, externals, persistent)
        kept = [t for t, keep in zip(externals, persistent) if keep]
        self.out_versions = self._out_versions(counters.values(), kept)
        self.out_same = [(i, spec[1]) for i, spec in enumerate(specs) if spec[0] == "same"]
        self.out_views = self._out_views(counters.values(), outputs, externals, persistent)
        return specs

    def _unmet(self, outputs: list) -> None:
        """The returned tensors whose values the trace never met: each is one from outside,
        returned as it is (the same object at each replay), if something beyond the call
        holds it (see _persistent), else a constant made inside. (A method of its own: no
        variable of finish may hold an output while _persistent counts references.)"""
        for t in outputs:
            if t.__class__ is Tensor and id(t._data) not in self.slot_of:
                if id(t) not in self.arg_of:
                    self.tensor_ref(t)

    def _private(self, s: int, persistent: list) -> None:
        """Slot s holds the array of an output made inside from no value of the call (a
        constant, or a tensor made inside that the trace met as one from outside): the caller
        gets that array, so the recording keeps a copy of its own (a write into the output
        must reach no replay), which each replay copies for its outputs."""
        kind = self.kinds.get(s)
        if kind == CONST:
            a = self.values[s]
            self.values[s] = _backend.namespace(a).asarray(a, copy=True)
        elif kind == EXTERNAL:
            i = self.where[s]
            ext = self.externals[i]
            if not persistent[i] and ext.shares is None and ext.snapshot is None:
                ext.snapshot = _backend.namespace(ext.entry).asarray(ext.entry, copy=True)

    def _out_views(self, counters, outputs: list, externals: list, persistent: list) -> list:
        """(position, how the replay finds the tensor, its view steps to the output or None,
        its alias group's path to the output) per output made inside that shares the version
        counter of an argument or a tensor from outside (a view or detach() of it): the
        replay makes it that tensor's view as eager execution does (one counter, one alias
        group, its base)."""
        sources: dict = {}  # id(version counter) -> the tensors from before the call with it
        args = [r() for r in self.arg_refs]
        before = [(("arg", self.arg_of[id(t)]), t) for t in args if t is not None]
        before += [(("ext", i), t) for i, t in enumerate(externals) if persistent[i]]
        for ref, t in before:
            vc = getattr(t, "_vc", None)
            if vc is not None:
                sources.setdefault(id(vc), []).append((ref, t))
        out = []
        for vc, positions in counters:
            for i in positions:
                for ref, t in sources.get(id(vc), ()):
                    steps = _steps_from(t, outputs[i])
                    if steps is not None:
                        out.append((i, ref, *steps))
                        break
                else:
                    if id(vc) in sources:
                        raise Unsupported(
                            "returning a view of an argument or a tensor from outside that "
                            "is not made from it by view operations alone"
                        )
        for _, _, view, path in out:
            for _, p, _ in (*(view or ()), *path):
                if self.params(p)[1]:
                    raise Unsupported(
                        "returning a view of an argument or a tensor from outside made with "
                        "an index computed inside"
                    )
        return out

    def _out_versions(self, counters, kept: list) -> list:
        """(positions, value, alias, inference) per version counter of outputs made inside
        that the replay must give them (the outputs at those positions share it): one
        written, or shared by several outputs. A counter shared with an argument or a tensor
        from outside (`kept`) is left out: its value is not the trace's at the next call."""
        args = [ref() for ref in self.arg_refs]
        outside = {id(t._vc) for t in [*kept, *args] if getattr(t, "_vc", None) is not None}
        return [
            (tuple(positions), vc.value, vc.alias, vc.inference)
            for vc, positions in counters
            if id(vc) not in outside
            and (vc.value or vc.alias or vc.inference or len(positions) > 1)
        ]

    def _graph_program(self, outputs: list, externals: list, persistent: list) -> tuple:
        """The backward of outputs whose graph is alive at the end of the call: recorded by a
        walk from them to the tensors they come from (arguments and tensors from outside
        that require grad), as a program run by one node that the replay's outputs share.
        Returns (program recording, the forward slots it reads, the tensors (refs) whose
        edges the node leads to)."""
        boundary = []  # (tensor ref, edge) of each tensor the outputs may come from
        seen: set = set()
        args = [ref() for ref in self.arg_refs]
        for t in args:
            if t is not None and t._edge is not None and id(t._edge) not in seen:
                seen.add(id(t._edge))
                boundary.append((("arg", self.arg_of[id(t)]), t._edge))
        for i, t in enumerate(externals):
            if t is not None and t._edge is not None and id(t._edge) not in seen:
                if not persistent[i]:
                    raise Unsupported("a returned tensor depends on a leaf made inside")
                seen.add(id(t._edge))
                boundary.append((("ext", i), t._edge))
        main = (self.code, self.reads, self.writes)
        self.code, self.reads, self.writes = [], [], []
        roots = []
        for t in outputs:
            roots.append((t._edge, self._new(_backend.namespace(t._data).ones_like(t._data))))
        try:
            targets = {node_of(e) for _, e in boundary}
            captured = self._walk(roots, targets, True, outputs[0]._xp, False)
        finally:
            code, reads, writes = self.code, self.reads, self.writes
            self.code, self.reads, self.writes = main
        results = []
        for _, e in boundary:
            g = captured.get(node_of(e))
            if g.__class__ is list:
                g = g[e.index]
            results.append(g)
        made = {s for w in writes for s in ((w,) if w.__class__ is int else w)}
        roots_slots = [s for _, s in roots]
        saved = sorted(
            {s for r in reads for s in r}
            - made
            - set(roots_slots)
            - {s for s, k in self.kinds.items() if k == CONST}
        )
        kinds = {s: k for s, k in self.kinds.items() if k == CONST}
        where = {}
        for pos, s in enumerate(roots_slots + saved):
            kinds[s] = INPUT
            where[s] = pos
        consts = [v if kinds.get(k) == CONST else None for k, v in enumerate(self.values)]
        rec = Recording(
            code,
            reads,
            writes,
            consts,
            kinds,
            where,
            [],
            [],
            [],
            [],
            [False] * (len(roots_slots) + len(saved)),
        )
        rec.outputs = [("value", None) if g is None else ("raw", g) for g in results]
        shapes = [(t._data.shape, t._data.dtype, t._xp) for t in outputs]
        return rec, saved, [ref for ref, _ in boundary], shapes

    def _persistent(self, externals: list, outputs: list) -> list:
        """Which tensors from outside the trace exist beyond the call (read at each replay,
        written back), and which were made inside (constants)."""
        counts: dict[int, int] = {}
        for t in outputs:
            counts[id(t)] = counts.get(id(t), 0) + 1
        for _, t in self.leaf_grads:  # references of this trace too
            counts[id(t)] = counts.get(id(t), 0) + 1
        out = []
        probe = [object()]
        t = probe[0]
        beyond = sys.getrefcount(t) - 1  # a variable and getrefcount's argument (measured)
        for i in range(len(externals)):
            t = externals[i]
            if t is None:
                out.append(False)
                continue
            # References: the list `externals`, this trace's (`held`, `leaf_grads`), the
            # outputs; anything more holds t beyond the call.
            out.append(sys.getrefcount(t) - beyond - 2 - counts.get(id(t), 0) > 0)
        # A view holds its base: one that is made inside or returned doesn't keep it beyond.
        by_views = _base_counts([v for v, kept in zip(externals, out) if not kept], outputs)
        for i in range(len(externals)):
            t = externals[i]
            if out[i] and id(t) in by_views:
                held = sys.getrefcount(t) - beyond - 2 - counts.get(id(t), 0)
                out[i] = held - by_views[id(t)] > 0
        t = None
        for target, vc, bumps in self.rebinds:
            if target[0] != "ext" or out[target[1]]:  # else made inside: not rebound
                entry = self.replayed.get(id(vc))
                if entry is None:
                    self.replayed[id(vc)] = [vc, bumps]
                else:
                    entry[1] += bumps
        for i, t in enumerate(externals):
            if out[i]:
                self._changes(t, self.externals[i], "a tensor from outside", ("ext", i))
        self._inside_leaves(externals, outputs, out)
        return out

    def _inside_leaves(self, externals: list, outputs: list, persistent: list) -> None:
        """The leaves made inside that got a .grad (met as tensors from outside, none kept
        beyond the call): the replay gives each a stand-in whose .grad is None at entry, as
        a new leaf's is (see Recording.inside_leaves). Refused where the stand-in would
        differ: a leaf returned (its .grad would not be set), one with hooks or a grad_dtype
        of its own."""
        returned = {id(t) for t in outputs}
        for kind, i in dict.fromkeys(self.grad_leaves):
            if kind != "ext" or persistent[i]:
                continue
            t = externals[i]
            own_dtype = t.is_leaf and t.grad_dtype != t.dtype
            if id(t) in returned or hooks_key(t._edge) is not None or own_dtype:
                raise Unsupported("a leaf tensor made inside the function got a .grad", True)
            self.inside_leaves[i] = Tensor(self.externals[i].entry, t._xp, None)

    def _changes(self, t: Tensor, ext: External, what: str, target: tuple) -> None:
        """What the replay must do at its end to tensor t from before the call (`ext`, its
        state then; `target`, how the replay finds it): the slot of its new values, the
        change of its version counter."""
        if _edge_kind(t._edge) != ext.edge:
            raise Unsupported(f"an in-place operation inside gave {what} a history")
        if t._data is not ext.entry:
            s = self.slot_of.get(id(t._data))
            if s is None:
                raise Unsupported(f"{what} got values not computed inside")
            ext.writeback = s
        vc = getattr(t, "_vc", None)
        if id(vc) in self._counted:  # shared with a tensor whose change is already counted
            ext.delta = 0
        else:
            if vc is not None:
                self._counted.add(id(vc))
            entry = self.replayed.get(id(vc))
            # The writes into t that the replay counts itself under a counter that a later
            # write replaced (a write into a copy, an optimizer's step: a counter of t's
            # own) are in t's version too, and not in the entry of the counter it ends with.
            earlier = sum(1 for tg, c in self.own_writes if tg == target and c is not vc)
            ext.delta = t._version - ext.version - (0 if entry is None else entry[1]) - earlier
        # A counter made where there was none (a value saved for backward makes one) is
        # made by the replay's first write as well.
        ext.replace = vc is not ext.vc and (ext.vc is not None or vc.alias)
        ext.alias = vc is not None and vc.alias

    def _arg_changes(self) -> list:
        """(position, state at entry) of the arguments that the replay changes at its end."""
        out = []
        for i, ext in self.arg_entries.items():
            self._changes(ext.ref(), ext, "an argument", ("arg", self.arg_of[i]))
            if ext.writeback is not None or ext.delta or ext.replace:
                out.append((self.arg_of[i], ext))
        return out

    def _unexplained(self, outputs: list, externals: list) -> list[int]:
        """The computed slots whose arrays something other than this trace and the holders
        it knows of (see _holders, _node_holders) holds: values kept somewhere that a replay
        would not update."""
        values, kinds = self.values, self.kinds
        # A first look, in C, at the computed slots: most values are held by this trace's
        # list alone. The others (arguments, tensors from outside, constants: W5's 4,000
        # numbers) are left out here in one step, where testing each for a number cost
        # about 4 M instructions on W5; their places in the list are counted below, only
        # for what the holders leave (the array of an argument that an operation returned
        # as itself).
        once = next(map(sys.getrefcount, [object()]))  # held by a list, read by map
        counts = np.fromiter(map(sys.getrefcount, values), np.intp, len(values))
        if kinds:
            counts[np.fromiter(kinds, np.intp, len(kinds))] = 0
        suspects = np.flatnonzero(counts > once)
        if not len(suspects):
            return []
        # The list holds some arrays in several slots (the same array is the gradient of
        # both inputs of x + y): each such slot is a suspect, so counting the suspects' ids
        # counts every place of their arrays in computed slots.
        ids = list(map(id, map(values.__getitem__, suspects.tolist())))
        expected = collections.Counter(ids)
        counts = counts[suspects] - np.fromiter(map(expected.__getitem__, ids), np.intp, len(ids))
        out = suspects[counts > once - 1].tolist()
        if not out:
            return []
        # The holders in three looks, each costlier one only for what the others leave
        # (counts only grow: what a look clears stays cleared).
        for holders in (self._holders, self._places, self._node_holders):
            for i in holders(outputs, externals):
                if i in expected:
                    expected[i] += 1
            out = self._held_elsewhere(out, expected)
            if not out:
                return []
        # A view holds its base: counted only where it matters.
        _count_bases(values, expected)
        return self._held_elsewhere(out, expected)

    def _places(self, outputs: list, externals: list) -> Iterable[int]:
        """The ids of the values of the slots that are not computed (arguments, tensors from
        outside, constants), once per slot: their places in the list, which the first look
        of _unexplained leaves out."""
        return map(id, map(self.values.__getitem__, self.kinds))

    def _held_elsewhere(self, slots: list, expected) -> list[int]:
        """Those of the computed `slots` whose arrays have more references than `expected`
        counts (by id), each array once."""
        values, kinds = self.values, self.kinds
        out = []
        seen = set()
        # References beyond the list: a variable and getrefcount's argument (measured).
        probe = [object()]
        v = probe[0]
        beyond = sys.getrefcount(v) - 1
        ndarray = np.ndarray
        for k in slots:
            if k in kinds:
                continue
            v = values[k]
            if id(v) in seen:
                continue
            seen.add(id(v))
            if v.__class__ is not ndarray and (
                v is None or v.__class__ in _PLAIN or isinstance(v, np.generic)
                or not _backend.is_array(v)
            ):  # fmt: skip
                continue
            if sys.getrefcount(v) - beyond > expected[id(v)]:
                out.append(k)
        return out


class _Recorded:
    """The tracer's hand on the engine's walk (autograd._engine.walk): gradients are slots,
    each VJP and sum is recorded (Tracer._vjp_any, _add), tensor hooks on the nodes made
    inside run recorded (the rest was refused by Tracer._check_walk), and the nodes that ran
    are listed (`ran`), their saved values released once the walk is done (unless retain).
    vjp, add and done are bound methods (no frame of this class between the walk and them)."""

    __slots__ = ("tracer", "backend", "hooked", "ran", "vjp", "add", "done")

    def __init__(self, tracer: Tracer, backend, reach, hooked: bool) -> None:
        self.tracer, self.backend = tracer, backend
        self.hooked = hooked
        self.ran: list = []
        self.vjp = functools.partial(tracer._vjp_any, raw_namespace(backend), reach)
        self.add = tracer._add
        self.done = self.ran.append

    def pre(self, node, hooks, g):
        if g is ZERO:  # (only ZERO reached it: see Tracer._add)
            raise Unsupported(_ONLY_ZERO)
        if hooks.tensor and node in self.tracer.nodes:
            return self.tracer._tensor_hooks(node, hooks, g, self.backend)
        return g


def _grad_versions(grads: dict, first: list) -> list:
    """After the trace (first[0]), keep in `grads` (id(leaf) -> leaf ref) the leaves whose
    .grad, made by the call, ends with a version other than 0, with that version; after each
    replay, give the replay's .grad (made by it, version 0 unless counted) that version.
    Nothing to settle."""
    if first[0]:
        first[0] = False
        for key, ref in list(grads.items()):
            t = ref()
            version = 0 if t is None or t._grad is None else t._grad._version
            if version:
                grads[key] = (ref, version)
            else:
                del grads[key]
        return []
    for ref, version in grads.values():
        t = ref()
        g = None if t is None else t._grad
        if g is not None and g._version != version:
            vc = getattr(g, "_vc", None)
            if vc is None:
                g._vc = VersionCounter(version)
            else:
                vc.value = version
    return []


def _set_modes(modes: dict) -> list:
    """Set the modes a traced function left its modules in (see Tracer.set_mode); nothing
    to settle."""
    for ref, training in modes.values():
        m = ref()
        if m is not None:
            m.__dict__["training"] = training
    return []


def _base_counts(inside: list, outputs: list) -> dict:
    """id(base) -> how many of the views among `inside` (tensors made inside) and `outputs`
    (each once) hold it."""
    counts: dict = {}
    for t in [*inside, *{id(o): o for o in outputs}.values()]:
        view = getattr(t, "_view", None) if t.__class__ is Tensor else None
        if view is not None:
            counts[id(view.base)] = counts.get(id(view.base), 0) + 1
    return counts


def _view_bases(tensors: list) -> list:
    """The ids of the arrays of the bases that the views among `tensors` hold (each base
    once, and none of `tensors`: those are counted as they are)."""
    given = {id(t) for t in tensors}
    seen = set()
    out = []
    for t in tensors:
        view = getattr(t, "_view", None) if t.__class__ is Tensor else None
        if view is not None and id(view.base) not in given and id(view.base) not in seen:
            seen.add(id(view.base))
            out.append(id(view.base._data))
    return out


def _steps_from(base: Tensor, t: Tensor) -> tuple | None:
    """(the view steps that make t from `base`, or None where t has none (a detach()); the
    steps of t's path in their alias group after base's), or None where t is not made from
    base that way."""
    view, made = getattr(t, "_view", None), getattr(base, "_view", None)
    steps = None
    if view is not None:
        before = () if made is None else made.steps
        root = base if made is None else made.base
        if view.base is not root or view.steps[: len(before)] != before:
            return None
        steps = view.steps[len(before) :]
    group = alias_group(t)
    if group is None:
        return steps, ()
    path, start = group.path(t), group.path(base)
    if path[: len(start)] != start:
        return None
    return steps, path[len(start) :]


def _kept_bases(tensors: list) -> set:
    """The ids of the arrays of the bases that the views among `tensors` hold, where the base
    tensor is held by more than those views (kept outside the function: its values are not
    the views' to explain)."""
    views: dict = {}  # id(base) -> [base, how many of the views hold it]
    for t in {id(t): t for t in tensors}.values():
        view = getattr(t, "_view", None) if t.__class__ is Tensor else None
        if view is not None:
            views.setdefault(id(view.base), [view.base, 0])[1] += 1
    probe = [object()]
    base = probe[0]
    beyond = sys.getrefcount(base) - 1  # a variable and getrefcount's argument (measured)
    # References to a base: the views' records, the dict's entry, and `base` below.
    kept = set()
    for entry in views.values():
        base = entry[0]
        if sys.getrefcount(base) - beyond - 1 > entry[1]:
            kept.add(id(base._data))
    return kept


def _same_memory(xp, a, p):
    """A new array object of a's memory (see Tracer.realiased)."""
    return a[...]


def host_arrays(fn, args: tuple, dtype, xp, which: tuple | None = None) -> tuple:
    """The numbers fn(*args) returns (those at the positions `which`, if given), as 0-d
    arrays of `dtype` (see Tracer.host)."""
    values = fn(*args)
    if which is not None:
        values = [values[i] for i in which]
    if xp is np:  # np.array makes a 0-d array of a number (asarray's cast), never a scalar
        return tuple([np.array(v, dtype) for v in values])
    return tuple([_backend.normalize(xp.asarray(v, dtype=dtype), xp) for v in values])


def _count_bases(values: list, expected) -> None:
    """Count in `expected` the reference that each view among `values` holds to its base (or
    to an array between them that holds it)."""
    seen: set[int] = set()
    for v in values:
        base = v.base if v.__class__ is np.ndarray else _view_base(v)
        while base is not None:
            if id(base) in expected:
                expected[id(base)] += 1
                break
            if id(base) in seen:
                break
            seen.add(id(base))
            base = base.base if base.__class__ is np.ndarray else _view_base(base)


class Recording:
    """What a finished trace hands to the program builder: the instructions, the slots they
    read and make, the values (constants are needed), slot kinds and places, the
    tensors from outside (which of them persist), the outputs, the guards on .grad, which
    inputs are tensors, the backward program of outputs with a live graph, the hooks on
    the leaves its backward walks reached, and the changes to arguments."""

    def __init__(
        self, code, reads, writes, values, kinds, where, externals, persistent, outputs,
        grad_guards, input_tensor, graph=None, hook_guards=(), arg_changes=(),
    ) -> None:  # fmt: skip
        self.code = code
        # Per instruction, `reads`: the slots it reads; `writes`: the slot it makes, or a
        # tuple of slots (None: a gradient not made; a VJP's is its record's `outs`). Numbers
        # and tuples of numbers, no list nor tuple of tuples: the collector stops tracking
        # them at its first look after the trace, where it met a list at every collection
        # (W5's first call, benchmarks/compile_trace.py: 49,099 tracked objects when the
        # collector resumes, 39,101 now; 28,031 after its first look, 14,032 now).
        self.reads = reads
        self.writes = writes
        self.values = values
        self.slots = len(values)
        self.kinds = kinds
        self.where = where
        self.externals = externals
        self.persistent = persistent
        self.outputs = outputs
        self.grad_guards = grad_guards
        self.input_tensor = input_tensor
        self.graph = graph
        # (tensor ref, hooks_key of its edge at the end of the call) of each leaf that a
        # backward reached: hooks registered or removed since make the next call trace again.
        self.hook_guards = hook_guards
        # (position, External) of the arguments written: their new values and versions.
        self.arg_changes = arg_changes
        # Per argument: its edge kind (see _edge_kind), -1 for one that is no tensor.
        self.arg_edges: list[int] = [-1] * len(input_tensor)
        # guard(leaves) -> bool, each checked before a replay (see _guards).
        self.guards: list = []
        # External index -> the stand-in of a leaf made inside that got a .grad (see
        # Tracer._inside_leaves): the replay's accumulations and assignments go to it, its
        # .grad set to None at entry.
        self.inside_leaves: dict = {}
        # What to settle after a replay (see Tracer.settle_after).
        self.settles: list = []
        # Whether some instruction's parameters may be a Template (see Tracer.params).
        self.templates = True
        # Whether the call met a large NumPy array (see Tracer.large).
        self.large = True
        # The version counters the replay gives its outputs (see Tracer._out_versions),
        # (position, first position) of each output made inside returned again, and the
        # outputs that are views of arguments (see Tracer._out_views).
        self.out_versions: list = []
        self.out_same: list = []
        self.out_views: list = []

    def strip(self) -> None:
        """Let go of the values of the traced call that a replay does not use (everything
        but constants), so that keeping the recording keeps no memory. (The instructions
        are let go once the replay is built: see _program.Replay.)"""
        values = self.values
        # The constants by slot: a dict of numbers and arrays, which the garbage collector
        # does not track (a tuple with a place per slot was met once by its first
        # collection: W1's 5,341 places, benchmarks/compile_trace.py).
        self.values = {k: values[k] for k, kind in self.kinds.items() if kind == CONST}
        for ext, persistent in zip(self.externals, self.persistent):
            if persistent:
                ext.entry = None
                ext.snapshot = None
        for _, ext in self.arg_changes:
            ext.entry = None


def _view_base(v):
    """The array that view v was made from, for arrays other than NumPy's (PyTorch: ._base;
    CuPy: .base), else None."""
    if v is None or v.__class__ in _PLAIN:
        return None
    base = getattr(v, "_base", None)
    if base is None:
        base = getattr(v, "base", None)
    return base if base is not None and _backend.is_array(base) else None


def _reaches_freed(edge) -> bool:
    """Whether the graph behind `edge` holds a node that a backward released (a walk that
    stops at the first: after backward, one is usually next to the root)."""
    stack = [node_of(edge)]
    seen = set()
    while stack:
        node = stack.pop()
        if node.saved is RELEASED:
            return True
        for e in node.edges:
            if e is not None:
                child = node_of(e)
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append(child)
    return False


def _node_arrays(objects: Iterable) -> list:
    """The ids of the arrays that the nodes among `objects` hold (saved values, parameters),
    once per reference."""
    out = []
    for node in objects:
        if node.__class__ is not Node:
            continue
        saved = node.saved
        if saved.__class__ is tuple:
            out.extend(id(v) for v in saved if v is not None)
        params = node.params
        if params is None or params.__class__ in _PLAIN:
            continue
        stack = [params]
        while stack:
            item = stack.pop()
            if item.__class__ is tuple or item.__class__ is list:
                stack.extend(item)
            elif item is not None and item.__class__ not in _PLAIN:
                out.append(id(item))
    return out


def rebuild(p, leaf, container):
    """p with each item that is not a tuple or list replaced by leaf(item), and each tuple or
    list by container(its class, its rebuilt items): post-order, iteratively."""
    stack = [(p, False)]
    done: list = []
    while stack:
        item, ready = stack.pop()
        c = item.__class__
        if c is tuple or c is list:
            if ready:
                start = len(done) - len(item)
                parts = done[start:]
                del done[start:]
                done.append(container(c, parts))
            else:
                stack.append((item, True))
                stack.extend((x, False) for x in reversed(item))
        else:
            done.append(leaf(item))
    return done[0]


def _template(p, slot_of):
    """p rebuilt with Slot markers for its slot values."""

    def leaf(item):
        if item.__class__ not in _PLAIN and id(item) in slot_of:
            return Slot(slot_of[id(item)])
        return item

    return rebuild(p, leaf, lambda c, parts: c(parts))


def _template_slots(p) -> list[int]:
    """The slots a parameter template reads."""
    out = []
    stack = [p]
    while stack:
        item = stack.pop()
        c = item.__class__
        if c is tuple or c is list:
            stack.extend(item)
        elif c is Slot:
            out.append(item.index)
    return out


def _check_hooks(node) -> None:
    """Tensor hooks are replayed (see Tracer._tensor_hooks); other hooks on a node or leaf
    accumulator are not."""
    hooks = getattr(node, "hooks", None)
    if hooks is None:
        return
    for kind, what in _OTHER_HOOKS:
        if getattr(hooks, kind):
            raise Unsupported(f"{what} on the graph")


def hooks_key(node):
    """What a replay depends on in the hooks of a node or leaf accumulator (None: none)."""
    hooks = getattr(node, "hooks", None)
    if hooks is None:
        return None
    fns = tuple([fn for fns in hooks.tensor.values() for fn in fns])
    others = tuple([len(getattr(hooks, kind)) for kind, _ in _OTHER_HOOKS])
    if not fns and not any(others):
        return None
    return fns, others


_OTHER_HOOKS = (
    ("retain", "retain_grad"),
    ("pre", "node prehooks"),
    ("post", "node hooks"),
    ("accumulated", "post-accumulate-grad hooks"),
)
