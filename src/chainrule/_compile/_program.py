"""A recording made runnable, in two tiers. First a loop over the instructions, on a list
with a place per value: nothing to compile, so that a compile costs about one traced call.
Once that pays, straight-line Python source with one line per kernel call, compiled once
with `exec`: no loop, each value in a local variable. Both free each value after its last
use (the source reuses its variable) and drop instructions whose results are never used. No
Tensor or Node is made, except the outputs."""

from __future__ import annotations

import copy
import gc
import operator
import re
import sys
import time
import weakref
from collections.abc import Callable
from itertools import compress

from .. import _backend, _inplace
from .._node import (
    RELEASED,
    AccumulateGrad,
    Node,
    Port,
    Rule,
    VersionCounter,
    View,
)
from .._rules import RULES
from .._state import STATE
from .._tensor import Tensor, share, version_counter, view_of
from ..autograd._backward import _ACCUMULATE, _accumulate
from ..autograd._backward import grad as autograd_grad
from ..autograd._engine import _cast
from ..autograd._namespaces import GRAPH_NAMESPACE
from . import _trace
from ._instructions import (
    ACC,
    ADD,
    FWD1,
    FWD2,
    FWDN,
    HOST,
    KERNELS,
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
from ._trace import (
    CONST,
    EXTERNAL,
    INPUT,
    Recording,
    Slot,
    Template,
    hooks_key,
    host_arrays,
    rebuild,
)

__all__ = ["RETRACE", "Replay", "Rerun"]

np = _backend.np

# What both tiers keep true (on top of the recording's invariants, see _trace):
# - Guards first: every check (guards on Python state, tensors from outside still alive and
#   of the same kind, .grad and hooks as traced) runs before any instruction, so a replay
#   that returns RETRACE has changed nothing and the call can be traced again.
# - An instruction runs only if a later one (or the end: outputs, write-backs, the shared
#   node) reads what it makes, or if it acts outside (ACC, SETGRAD, WRITE, HOST): `_analyze`.
# - A value is let go after its last read (`_analyze`'s frees, or the source's variable reuse), so a
#   replay holds no more memory than the eager call held.
# - The loop's list has a place per slot, then places for the tensors it touches and for
#   the node that outputs with a live graph share (`_LoopPlan.place`); the source has a
#   local variable per live value instead. Both run the same instructions in the same
#   order, with the same kernels and the same casts, so they agree bit for bit.
# - A NumPy ufunc whose input dies there and has the result's shape and dtype writes its result
#   into that input (`_in_place`), when at that call nothing else holds the input's array:
#   the same kernel, the same bits, no new array.
# - Outputs are new tensors at each call; an array baked into the recording (made inside
#   from nothing the call passes) is copied before it is handed out, so that a caller
#   writing into an output can't change the next replay.


# When a program becomes source: by default once the loop's time adds up to what compiling
# the source is expected to cost (a rent-or-buy rule: at most twice the best choice in
# hindsight); the expected cost per instruction is measured at each compilation. A number
# of calls instead, when set (tests).
SOURCE_AFTER: int | None = None


class _Retrace:
    __slots__ = ()

    def __repr__(self) -> str:
        return "RETRACE"


RETRACE = _Retrace()  # a replay's guards failed: trace again


class Replay:
    """The replay of a recording: `replay(leaves)` returns the outputs, or RETRACE when a
    guard fails. Made at the first call (the trace), which keeps the recording only (less
    the values of the call: see Recording.strip); built into a loop over the instructions at
    the first replay, so that a function called once never pays the build (W1's first call
    in benchmarks/compile_trace.py: about 17 M instructions of 140 M); becomes compiled
    source once the loop pays that (see SOURCE_AFTER). `settles`: what to settle after it
    (see Tracer.settle_after). A recording not built when the interpreter exits is let go
    then (see __init__)."""

    __slots__ = (
        "run", "calls", "spent", "cost", "settles", "_pending", "rerun", "_recording", "_exit",
        "__weakref__",
    )  # fmt: skip

    def __init__(self, rec: Recording, treedef, unflatten) -> None:
        # What the build reads of the values (the NumPy arrays' layouts), then the values let
        # go: the recording keeps no array of the call until the build.
        self._recording = [rec, *_layouts(rec.values, rec.large), treedef, unflatten]
        rec.strip()
        # At the interpreter's exit (weakref.finalize's pass, before the exit's collections)
        # the recording is let go unless built: each of those collections would walk its
        # objects (W5's first call, then exit: 392 -> 358 M instructions, the process end of
        # benchmarks/compile_trace.py). A call after that (from an exit handler) traces again.
        self._exit = weakref.finalize(self, self._recording.clear)
        # What create_graph through the outputs with a live graph needs (None: none has one;
        # set by the build).
        self.rerun = None
        self.run = None
        self.calls = 0
        self.spent = 0.0
        self.cost = 0.0
        self.settles = rec.settles
        self._pending = ()  # the loop tier (see _build); None once the source runs

    def _build(self) -> None:
        """The loop replay of the recording, made at the first replay. A failure leaves the
        recording as it was: the next call builds again (and fails the same way)."""
        rec, layouts, large, treedef, unflatten = self._recording
        graph = rec.graph
        # The cyclic GC is paused, as while tracing: the build makes a few objects per
        # instruction, all kept (W1's second call: 23.6 M instructions for the build with
        # collections, against 18 M without).
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            keep, last, frees, big = _analyze(rec, large)
            inplace = _in_place(rec, last, big, layouts)
            if graph is not None:
                sub, saved, refs, outputs = graph
                self.rerun = Rerun(rec, keep, refs)
                spec = ((tuple, len(refs)),) + (None,) * len(refs)
                rule = _graph_rule(sub, spec, unflatten, outputs, self.rerun)
                rec.graph = (rule, saved, refs)
            self.run, program = _loop(rec, keep, last, frees, inplace, treedef, unflatten)
            # (While paused: the objects it makes would start a collection of all that the
            # build made, inside the call; W5's second call 8 M instructions.)
            self._exit.detach()
        except BaseException:
            rec.graph = graph
            self.rerun = None
            raise
        finally:
            if gc_was_enabled:
                gc.enable()
        self._recording = None
        # The instructions: the loop's program holds what runs (see _instructions).
        rec.code = rec.reads = rec.writes = None
        self.cost = len(program) * STATE.source_cost
        # (Each instruction's frees are the last item of its entry in the loop's program.)
        self._pending = (rec, program, keep, last, inplace, treedef, unflatten)

    def __call__(self, leaves):
        if self._pending is None:
            return self.run(leaves)
        if self._recording is not None:
            if not self._recording:  # let go at the exit (see __init__)
                return RETRACE
            self._build()
        self.calls += 1
        if SOURCE_AFTER is not None:
            if self.calls > SOURCE_AFTER:
                self._compile()
            return self.run(leaves)
        start = time.perf_counter()
        out = self.run(leaves)
        self.spent += time.perf_counter() - start
        if self.spent >= self.cost:
            self._compile()
        return out

    def _compile(self) -> None:
        start = time.perf_counter()
        self.run = _source(*self._pending)
        n = max(1, len(self._pending[1]))
        self._pending = None
        # The measured cost, averaged with what was expected (compile times are noisy).
        measured = (time.perf_counter() - start) / n
        STATE.source_cost = (STATE.source_cost + measured) / 2

    def source(self) -> str:
        """The program as Python source (building and compiling it now if it is not yet)."""
        if self._recording is not None:
            if not self._recording:
                raise RuntimeError("the recording was let go at the interpreter's exit")
            self._build()
        if self._pending is not None:
            self._compile()
        return self.run.source


# ----------------------------------------------------------------------------- helpers


def _acc(t: Tensor, g, stored: set):
    """backward's accumulation of g into t.grad (see autograd._backward); t.grad's array."""
    with _ACCUMULATE:
        _accumulate(t, g, False, stored)
    return t._grad._data


def _leaf(data, xp) -> Tensor:
    t = Tensor(data, xp, None)
    t.requires_grad_(True)
    return t


def _stub(rule) -> Node:
    """A node freed by a backward inside the function: a backward through it raises the
    engine's error, as it does through the eager result."""
    return Node(rule, (), RELEASED, None)


def _bump(t: Tensor, delta: int, replace: bool, alias: bool) -> None:
    """The version change the trace saw on a tensor from outside."""
    if replace:
        t._vc = VersionCounter(t._version + delta, alias)
    else:
        vc = getattr(t, "_vc", None)
        if vc is None:
            vc = t._vc = VersionCounter()
        vc.value += delta
    STATE.inplace_writes += delta


def _rebind(t: Tensor, data, copied: bool) -> None:
    """An in-place write's result given to the tensor written, counted as the eager write
    counts it (copied: written into a copy, which gets a version counter of its own)."""
    t._data = data
    if copied:
        t._vc = VersionCounter(t._version + 1)
        STATE.inplace_writes += 1
    else:
        _inplace._bump(t)


def _graph_rule(rec: Recording, treedef, unflatten, outputs: list, rerun: Rerun) -> Rule:
    """The rule of the node that the outputs of a replay with a live graph share: its VJP
    runs the recorded backward of those outputs (first order), in the namespace the engine
    gives it: the recorded one, or vmap's over batched gradients (func.jacrev,
    is_grads_batched), for which the same formulas are replayed in that namespace. Under
    create_graph (chainrule's namespace, on tensors) the call is run again eagerly (see
    Rerun); the node's parameters are that call (see CompiledFunction.__call__)."""
    programs: dict = {}  # id(namespace) -> the program that runs in it

    def vjp(xp, g, saved, p, needs):
        if xp is GRAPH_NAMESPACE:
            return rerun.grads(p, g if multi else (g,), needs)
        program = programs.get(id(xp))
        if program is None:
            program = programs[id(xp)] = Replay(_in_namespace(rec, xp), treedef, unflatten)
        gs = list(g) if multi else [g]
        for i, gi in enumerate(gs):
            if gi is None:  # an output that received no gradient
                shape, dtype, bxp = outputs[i]
                gs[i] = bxp.zeros(shape, dtype=dtype)
        return program(gs + list(saved))

    multi = len(outputs) > 1
    return Rule("compiled", None, vjp, ((),), variadic=True, multi=multi)


class Rerun:
    """create_graph through the outputs of a replay: the recorded backward is first-order
    formulas on raw arrays, with no history, so the call is run again eagerly (the function
    on the same arguments, reading the same tensors from outside at the same versions: the
    same values, bit for bit) and its eager graph differentiated with create_graph, as
    torch.utils.checkpoint recomputes a forward. Only for a call without side effects that
    running it again would repeat (in-place writes to tensors it did not make, .grad,
    an optimizer's step); Python side effects (printing) do happen again."""

    __slots__ = ("positions", "refs", "externals", "reads", "guards", "reason")

    def __init__(self, rec: Recording, keep: list, refs: list) -> None:
        # The positions of the outputs with a live graph among the flattened outputs, by
        # their index at the shared node.
        graph = sorted((spec[3], k) for k, spec in enumerate(rec.outputs) if spec[0] == "graph")
        self.positions = [k for _, k in graph]
        self.refs = refs  # how the tensors at the node's edges are found
        self.externals = [ext.ref for ext in rec.externals]
        # The tensors from outside whose values the call reads: the same at the run again.
        self.reads = [
            ext.ref
            for i, ext in enumerate(rec.externals)
            if rec.persistent[i] and ext.slot is not None
        ]
        self.guards = rec.guards
        self.reason = _side_effect(rec, keep)

    def snapshot(self, leaves: list) -> tuple[list, list]:
        """The tensors that a call with arguments `leaves` reads, and their versions."""
        tensors = [x for x in leaves if x.__class__ is Tensor]
        tensors += [ref() for ref in self.reads]
        return tensors, [t._version for t in tensors]

    def grads(self, call, g: tuple, needs: tuple) -> tuple:
        """The gradients (tensors with a history) of the node's edges: the call run again
        eagerly, differentiated with create_graph from its outputs' gradients g."""
        if self.reason is not None:
            raise NotImplementedError(
                f"create_graph through the outputs of a compiled function that {self.reason}: "
                "running it again to record its graph would repeat that; take the derivatives "
                "inside the compiled function (autograd.grad(..., create_graph=True)) or call "
                "it uncompiled"
            )
        leaves = call.leaves
        for t, version in zip(call.tensors, call.versions):
            if t is None or t._version != version:
                raise RuntimeError(
                    "one of the variables needed for gradient computation has been modified "
                    "by an inplace operation: a tensor that a compiled function read was "
                    "written since the call (create_graph through its outputs runs it again)"
                )
        for guard in self.guards:
            if not guard(leaves):
                raise RuntimeError(
                    "create_graph through the outputs of a compiled function: the function "
                    "now finds other tensors or Python state than at the call (replaced "
                    "since), so running it again would not give the outputs differentiated"
                )
        outs = call.outputs()
        roots, grads = [], []
        for k, gi in zip(self.positions, g):
            t = outs[k] if k < len(outs) else None
            if t.__class__ is not Tensor or t._edge is None:
                raise RuntimeError(
                    "create_graph through the outputs of a compiled function: running it "
                    "again did not return the same outputs"
                )
            if gi is not None:  # an output that received no gradient adds none
                roots.append(t)
                grads.append(gi)
        inputs = []
        for ref, e in zip(self.refs, needs):
            if e is not None:
                inputs.append(leaves[ref[1]] if ref[0] == "arg" else self.externals[ref[1]]())
        found = iter(
            autograd_grad(roots, inputs, grads, create_graph=True, allow_unused=True)
            if inputs
            else ()
        )
        return tuple([None if e is None else next(found) for e in needs])


def _side_effect(rec: Recording, keep: list) -> str | None:
    """What a call does beyond computing its outputs, that running it again would repeat
    (None: nothing)."""
    effects = {ACC: "accumulates into .grad", SETGRAD: "assigns .grad", HOST: "steps an optimizer"}
    for ins, kept in zip(rec.code, keep):
        if not kept:
            continue
        if ins.op in effects:
            return effects[ins.op]
        if ins.op == WRITE and (ins.target[0] != "ext" or rec.persistent[ins.target[1]]):
            return "writes in place into a tensor it did not make"
    for i, ext in enumerate(rec.externals):
        if rec.persistent[i] and (ext.writeback is not None or ext.delta or ext.replace):
            return "changes a tensor from outside"
    if rec.arg_changes:
        return "changes an argument"
    return None


def _in_namespace(rec: Recording, xp) -> Recording:
    """A copy of `rec` whose kernels run in namespace xp."""
    code = []
    for ins in rec.code:
        code.append(ins._replace(xp=xp) if ins.op in KERNELS else ins)
    out = copy.copy(rec)
    out.code = code
    return out


def _saved_tensors(rec: Recording, saved: list) -> list[tuple]:
    """(index in `saved`, tensor ref) of the values that the node of outputs with a live
    graph saves and that are the arrays of arguments or of tensors from outside that need
    no grad: as eager nodes, it checks their versions (a write in place since makes its
    backward raise)."""
    out = []
    for j, s in enumerate(saved):
        kind = rec.kinds.get(s)
        if kind == INPUT:
            pos = rec.where[s]
            if rec.input_tensor[pos] and rec.arg_edges[pos] == 0:
                out.append((j, ("arg", pos)))
        elif kind == EXTERNAL:
            i = rec.where[s]
            if rec.persistent[i] and rec.externals[i].edge == 0:
                out.append((j, ("ext", i)))
    return out


def _versions(tensors: list, slots: list) -> tuple | None:
    """Node.versions for saved values that are the arrays of `tensors` (slots: their places
    among the node's saved values), at their versions now."""
    out = []
    for t, j in zip(tensors, slots):
        vc = version_counter(t)
        if not vc.alias:
            out.append((j, vc, vc.value))
    return tuple(out) or None


def _edge_kind(e) -> int:
    if e is None:
        return 0
    return 1 if e.__class__ is AccumulateGrad else 2


_VALUE_OUTPUTS = ("raw", "new", "leaf", "stub", "graph")
_NOTHING2 = (None, None)
_NOTHING3 = (None, None, None)


# ----------------------------------------------------------------------------- analysis


def _epilogue_slots(rec: Recording) -> list[int]:
    slots = [spec[1] for spec in rec.outputs if spec[0] in _VALUE_OUTPUTS]
    if rec.graph is not None:
        slots += rec.graph[1]
    for i, ext in enumerate(rec.externals):
        if rec.persistent[i] and ext.writeback is not None:
            slots.append(ext.writeback)
    slots += [ext.writeback for _, ext in rec.arg_changes if ext.writeback is not None]
    return slots


def _layouts(values, large: bool) -> tuple[dict, frozenset]:
    """What the build reads of a recording's values, kept in their place from the first call
    to the build (see Replay): the NumPy arrays, by slot, as (shape, dtype, strides), and the
    slots of those of _trace.IN_PLACE_BYTES or more; both empty where the trace met no value
    that large (`large`, see Tracer.large: nothing to write in place, see _in_place)."""
    if not large:
        return {}, frozenset()
    least = _trace.IN_PLACE_BYTES
    ndarray = np.ndarray
    layouts = {
        s: (v.shape, v.dtype, v.strides) for s, v in enumerate(values) if v.__class__ is ndarray
    }
    return layouts, frozenset(s for s in layouts if values[s].nbytes >= least)


def _analyze(rec: Recording, large: frozenset) -> tuple[tuple, tuple, tuple, list[int]]:
    """Which instructions are needed (their results are used, or they act on something
    outside); per slot, the index of its last use (len(code) for the end; -1: unused); per
    instruction, the computed slots to clear after it (None: none): what it read for the
    last time, what it made for nothing; and the kept instructions that make one NumPy
    array of _trace.IN_PLACE_BYTES or more (a slot of `large`, see _layouts: the only ones
    `_in_place` looks at), last first.
    What a replay keeps of this is tuples of numbers, which the garbage collector stops
    tracking once it has seen them, where lists are met at every collection (W1's first
    call in benchmarks/compile_trace.py: its kept lists cost the collector about 4,000
    instructions per operation); the recording's `reads` are not kept (see _source), nor
    the frees (the loop's program holds them)."""
    code, reads, writes, kinds = rec.code, rec.reads, rec.writes, rec.kinds
    n = len(code)
    keep = [False] * n
    frees: list = [None] * n
    big = []
    # One backward pass: a slot is needed once a later kept instruction (or the end) reads
    # it, and the first such read met is its last use. Every slot is written once.
    last = [-1] * rec.slots
    for s in _epilogue_slots(rec):
        last[s] = n
    effects = _EFFECTS
    for i in range(n - 1, -1, -1):
        made = writes[i]
        if made.__class__ is int:  # (most instructions make one slot: see Recording)
            if last[made] >= 0:
                free = None
                if made in large:
                    big.append(i)
            elif code[i].op in effects:
                free = (made,)  # made for nothing
            else:
                continue
        else:  # (None: a gradient not made, see Recording)
            for s in made:
                if s is not None and last[s] >= 0:
                    break
            else:
                if code[i].op not in effects:
                    continue
            free = None
            for s in made:
                if s is not None and last[s] < 0:  # made for nothing
                    free = (s,) if free is None else free + (s,)
        keep[i] = True
        for s in reads[i]:
            if last[s] < 0:
                last[s] = i
                if s not in kinds:  # computed: read here for the last time
                    free = (s,) if free is None else free + (s,)
        frees[i] = free
    return tuple(keep), tuple(last), tuple(frees), big


_EFFECTS = frozenset((ACC, SETGRAD, WRITE, HOST))  # instructions that act outside


def _used(outs: tuple, last: list) -> tuple:
    """The positions of the slots among `outs` that something reads."""
    return tuple(k for k, s in enumerate(outs) if last[s] >= 0)


# The rules whose forward, on NumPy arrays, is one call of a ufunc (an operator of ndarray
# calls the same ufunc): given out=, it writes the same values into an array it is given.
_UFUNCS = {
    RULES[name].fwd: ufunc
    for name, ufunc in (
        ("add", np.add), ("subtract", np.subtract), ("multiply", np.multiply),
        ("divide", np.divide), ("maximum", np.maximum), ("minimum", np.minimum),
        ("negative", np.negative), ("sqrt", np.sqrt), ("exp", np.exp), ("log", np.log),
        ("tanh", np.tanh), ("abs", np.absolute),
    )
}  # fmt: skip


def _solo() -> tuple[int, int] | None:
    """What sys.getrefcount says of an array that nothing holds but one local variable (the
    source's replay), and but one place of a list (the loop's): (variable, list). None where
    the count can't tell that (no getrefcount; a build without the GIL)."""
    gil = getattr(sys, "_is_gil_enabled", None)
    if not hasattr(sys, "getrefcount") or (gil is not None and not gil()):
        return None
    v = np.empty(1)
    held = [np.empty(1)]
    return sys.getrefcount(v), sys.getrefcount(held[0])


_SOLO = _solo()


def _in_place(rec: Recording, last, big: list[int], layouts: dict) -> dict[int, tuple]:
    """The instructions that may write their result into an input: a NumPy ufunc (FWD1,
    FWD2 of a rule of _UFUNCS; ADD) with an input that was made inside (not an argument, a
    tensor from outside, a constant, a tensor's array), is read there for the last time and
    has the result's shape, dtype and strides (its memory order: a later reduction sums in
    it). Index -> (ufunc, its inputs, the input written, the result, layout): layout is (the
    other input, its shape and strides, the written one's) where the other is an array of 1
    or more dimensions, else None. At each call the input is written only if its array is no
    view and nothing else holds it (a view of it, a tensor, a value returned or saved:
    `_SOLO`), and, given layout, both inputs are laid out as traced: shapes may change with
    the values (a boolean mask) and strides with the arguments' (which NumPy follows when it
    makes a result), numbers of dimensions and dtypes may not. A one-input ufunc, or one
    whose other input has no dimensions, makes its result in its input's order. `big`: the
    kept instructions with a result large enough (see _analyze); none in a program of small
    arrays, which costs nothing here then. `layouts`: the NumPy arrays' (see _layouts)."""
    if _SOLO is None or not big:
        return {}
    kinds, code = rec.kinds, rec.code
    # Arrays of tensors (an in-place write's result, .grad's array): never free to write.
    # ADD has no namespace: its operands are NumPy's where every kernel runs in NumPy (not
    # a copy run in vmap's namespace, see _in_namespace); its finds are kept only then.
    held = set()
    numpy = True
    for ins in code:
        op = ins.op
        if op in KERNELS and ins.xp is not np:
            numpy = False
        if op == WRITE or op == ACC:
            held.add(ins.out)
    found: dict[int, tuple] = {}
    for i in reversed(big):
        ins = code[i]
        op = ins.op
        if op != FWD1 and op != FWD2 and op != ADD:
            continue
        res = layouts[ins.out]  # (shape, dtype, strides)
        if not res[0]:
            continue
        if op == FWD1 or op == FWD2:
            ufunc = _UFUNCS.get(ins.fn)
            if ufunc is None or ins.xp is not np or ins.norm or (op == FWD1 and ins.p is not None):
                continue
            xs = (ins.x,) if op == FWD1 else (ins.x, ins.y)
        elif op == ADD and numpy:
            ufunc, xs = np.add, (ins.a, ins.b)
            if any(x not in layouts for x in xs):
                continue
        else:
            continue
        for s in xs:
            v = layouts.get(s)
            if last[s] != i or s in kinds or s in held or v != res:
                continue
            layout = None
            for other in xs:
                w = layouts.get(other)
                if other != s and w is not None and w[0]:
                    layout = (other, (w[0], w[2]), (v[0], v[2]))
            found[i] = (ufunc, xs, s, ins.out, layout)
            break
    return found


def _vjp_parts(ins) -> list:
    """A VJP instruction as calls, one per gradient made: (function, form, input index,
    output slot, shape to sum to, dtype to cast to); form 0 is the rule's VJP (one call,
    indexed per input)."""
    _, fn, form, _, _, _, _, outs, fits, _ = ins
    parts = []
    for k, s in enumerate(outs):
        if s is not None:
            shape, dtype = (None, None) if fits is None or fits[k] is None else fits[k]
            f = fn if form == 0 else fn[0 if form == 1 else k]
            parts.append((f, form, k, s, shape, dtype))
    return parts


# ----------------------------------------------------------------------------- the loop


def _loop(rec: Recording, keep, last, frees, inplace, treedef, unflatten) -> tuple:
    """The replay as a loop over the instructions, on a list with a place per slot (each
    cleared after its last use), and its program (see _LoopPlan). Nothing to compile: cheap
    to build."""
    plan = _LoopPlan(rec, keep, last, frees, inplace)
    getters = plan.getters
    enter, execute, leave = plan.enter, plan.execute, plan.leave

    def replay(leaves):
        r = enter(leaves)
        if r is None:
            return RETRACE
        execute(r)
        leave(r)
        return unflatten(treedef, [g(leaves, r) for g in getters])

    same, out_versions, views = rec.out_same, rec.out_versions, rec.out_views
    if not same and not out_versions and not views:
        return replay, plan.program
    bases = plan.bases

    def replay_fixed(leaves):
        r = enter(leaves)
        if r is None:
            return RETRACE
        execute(r)
        leave(r)
        outs = [g(leaves, r) for g in getters]
        fixed = _fix_outputs(outs, same, out_versions, views, [r[k] for k in bases])
        return unflatten(treedef, fixed)

    return replay_fixed, plan.program


def _fix_outputs(outs: list, same: list, out_versions: list, views: list, bases: list) -> list:
    """outs with each output made inside that was returned again the same object (`same`:
    (position, first position)), the outputs made inside given the version counters they
    had at the end of the trace (see Tracer._out_versions): a new one per counter, shared as
    it was, and the views of arguments and tensors from outside made views of them, `bases`
    (see Tracer._out_views)."""
    for i, j in same:
        outs[i] = outs[j]
    for positions, value, alias, inference in out_versions:
        vc = VersionCounter(value, alias, inference)
        for i in positions:
            outs[i]._vc = vc
    for (i, _, steps, path), base in zip(views, bases):
        _as_view(base, outs[i], steps, path)
    return outs


def _as_view(base: Tensor, t: Tensor, steps: tuple | None, path: tuple) -> None:
    """Make t the view of `base` that `steps` make (None: a detach()), at `path` from it in
    their alias group, as _factories' _view_of and Tensor.detach do: one version counter,
    one alias group, its base."""
    t._vc = version_counter(base)
    if steps is not None and _backend.aliasing(base._xp) is not None:
        made = view_of(base)
        t._view = View(base, steps) if made is None else View(made.base, made.steps + steps)
    share(base, t, path)


# The opcodes whose loop entry is more than the instruction (see _LoopPlan._instruction):
# always, and where parameters are a Template; the place of those in the instruction.
_SPECIALS = re.compile(b"[" + re.escape(bytes((ACC, SETGRAD, WRITE, HOST))) + b"]")
_SPECIALS_T = re.compile(
    b"[" + re.escape(bytes((ACC, SETGRAD, WRITE, HOST, FWD1, FWDN, VJP))) + b"]"
)
_OPCODE = operator.itemgetter(0)
_PARAMS = {
    FWD1: Fwd1._fields.index("p"),
    FWDN: FwdN._fields.index("p"),
    VJP: Vjp._fields.index("p"),
}


class _LoopPlan:
    """The loop replay's data: the list of places it starts from (constants; then places for
    tensors and the shared node), what it checks and loads on entry (enter), the program it
    runs (execute), what it writes back on exit (leave), and a getter per output."""

    def __init__(self, rec: Recording, keep, last, frees, inplace: dict) -> None:
        self.rec = rec
        self.init: list = [None] * rec.slots
        self.guards = rec.guards
        # (place, ref, edge kind, whether its values are read, shape, dtype, namespace)
        self.checks: list = []
        self.ext_place: dict[int, int] = {}
        for i, ext in enumerate(rec.externals):
            if rec.persistent[i]:
                k = self.ext_place[i] = self.place()
                item = (k, ext.ref, ext.edge, ext.slot is not None, ext.shape, ext.dtype, ext.xp)
                self.checks.append(item)
        self.inside = tuple(rec.inside_leaves.values())  # their .grad is None at entry
        for i, t in rec.inside_leaves.items():
            k = self.ext_place[i] = self.place()
            self.init[k] = t
        self.arg_place: dict[int, int] = {}
        # (place, leaf position, read ._data) or (place, -1 - external place, True)
        self.loads: list = []
        self.fresh: list = []  # (place, namespace, values to copy)
        init, values = self.init, rec.values
        for s, kind in rec.kinds.items():
            if kind == CONST:
                init[s] = values[s]
            elif last[s] >= 0:
                self._load(s, kind)
        # (tensor place, what its .grad must be: None, anything but None (-1), an external's
        # place)
        self.grad_guards = [
            (self.tensor_place(ref), None if i is None else -1 if i < 0 else self.ext_place[i])
            for ref, i in rec.grad_guards
        ]
        self.hook_guards = [(self.tensor_place(ref), key) for ref, key in rec.hook_guards]
        self.hooked = any(key is not None for _, key in rec.hook_guards)
        # The program: per kept instruction, its fields then the slots to clear after it,
        # one tuple (the instruction records are not kept: the source is built from these,
        # see _instructions); one with more to run than its fields (parameters to build, a
        # tensor's place, numbers read, an in-place write) is (_SPECIAL or _IN_PLACE, what
        # it needs, the slots to clear). One tuple per instruction: what a replay keeps is
        # met by the garbage collector at every collection (the one after the trace, four
        # at exit), where an entry and its record were two (W1's first call in
        # benchmarks/compile_trace.py).
        # Made in C, then the few entries to change found by their opcodes (a pass in
        # Python cost W1's first call about 1,400 instructions per instruction): those that
        # act on tensors or read numbers, and where the trace made parameters that hold
        # slots (rec.templates), those that may have such parameters. The entries are
        # joined by operator.add, a builtin: tuple.__add__, a slot wrapper, made a bound
        # method per call and cost twice as much (W1's first call: 4.6 M instructions
        # against 2.3 M, benchmarks/compile_trace.py).
        code = list(compress(rec.code, keep))
        ops = bytes(map(_OPCODE, code))
        kept_frees = list(compress(frees, keep))
        self.program = program = list(map(operator.add, code, zip(kept_frees)))
        params = _PARAMS
        for found in (_SPECIALS_T if rec.templates else _SPECIALS).finditer(ops):
            j = found.start()
            ins = code[j]
            at = params.get(ins[0])
            if at is None or ins[at].__class__ is Template:
                program[j] = (_SPECIAL, self._instruction(ins, last), kept_frees[j])
        if inplace:
            j = 0
            for i, kept in enumerate(keep):
                if kept:
                    if i in inplace:
                        program[j] = (_IN_PLACE, (rec.code[i], inplace[i]), frees[i])
                    j += 1
        self.tail = self._tail()
        self.graph = None
        self.node_place = 0
        if rec.graph is not None:
            rule, saved, refs = rec.graph
            self.node_place = self.place()
            n_out = sum(spec[0] == "graph" for spec in rec.outputs)
            versioned = [(j, self.tensor_place(ref)) for j, ref in _saved_tensors(rec, saved)]
            edges = [self.tensor_place(ref) for ref in refs]
            self.graph = (rule, saved, edges, n_out, versioned)
        self.getters = [
            _output_getter(spec, int, self.tensor_place, self.ext_place, rec.kinds, self.node_place)
            for spec in rec.outputs
        ]
        # The places of the tensors that outputs are views of (see _fix_outputs).
        self.bases = [self.tensor_place(ref) for _, ref, _, _ in rec.out_views]
        # Every place is given: a tuple of constants and Nones, which the garbage collector
        # stops tracking once it has seen it (a list is met at every collection).
        self.init = tuple(self.init)

    def place(self) -> int:
        self.init.append(None)
        return len(self.init) - 1

    def tensor_place(self, ref) -> int:
        """The place of a tensor (("arg", position) or ("ext", index)), loaded on entry."""
        kind, i = ref
        if kind == "ext":
            return self.ext_place[i]
        k = self.arg_place.get(i)
        if k is None:
            k = self.arg_place[i] = self.place()
            self.loads.append((k, i, False))
        return k

    def _load(self, s: int, kind: int) -> None:
        rec = self.rec
        if kind == INPUT:
            pos = rec.where[s]
            self.loads.append((s, pos, rec.input_tensor[pos]))
            return
        i = rec.where[s]
        ext = rec.externals[i]
        if ext.shares is not None and not rec.persistent[i] and rec.persistent[ext.shares]:
            i = ext.shares  # made inside from a tensor from outside: that one's array
        if rec.persistent[i]:
            self.loads.append((s, -1 - self.ext_place[i], True))
        elif ext.snapshot is not None:  # written inside: a fresh copy at each call
            self.fresh.append((s, ext.xp, ext.snapshot))
        else:
            self.init[s] = ext.entry

    def _instruction(self, ins, last) -> tuple:
        """(opcode, instruction, its parameters' builder, extra): extra is
        the place of the tensor written (WRITE: with whether it is a .grad; ACC, SETGRAD), the
        numbers read (HOST)."""
        op = ins.op
        p = ins.p if op == FWD1 or op == FWDN or op == VJP else None
        extra = None
        if op == WRITE:
            if ins.kind != "op":
                p = ins.how_value[0]
            target = ins.target
            if target[0] == "grad":
                extra = (self.tensor_place(target[1]), True)
            elif target[0] == "ext" and not self.rec.persistent[target[1]]:
                extra = None  # made inside: only its values (slots) are read later
            else:
                extra = (self.tensor_place(target), False)
        elif op == ACC or op == SETGRAD:
            extra = self.tensor_place(ins.leaf)
        elif op == HOST:
            extra = _used(ins.outs, last)
        pf = _param_builder(p.value, int) if p.__class__ is Template else None
        return (op, ins, pf, extra)

    def _tail(self) -> list:
        """(tensor place, slot of its new values or -1, version change, replace, alias) of
        the tensors the replay changes at its end."""
        rec = self.rec
        tail = []
        for i, ext in enumerate(rec.externals):
            if rec.persistent[i]:
                wb = -1 if ext.writeback is None else ext.writeback
                if wb >= 0 or ext.delta or ext.replace:
                    tail.append((self.ext_place[i], wb, ext.delta, ext.replace, ext.alias))
        for pos, ext in rec.arg_changes:
            wb = -1 if ext.writeback is None else ext.writeback
            k = self.tensor_place(("arg", pos))
            tail.append((k, wb, ext.delta, ext.replace, ext.alias))
        return tail

    # -- at each call

    def enter(self, leaves) -> list | None:
        """The places, loaded; None when a guard fails."""
        for guard in self.guards:
            if not guard(leaves):
                return None
        r = list(self.init)
        for k, ref, edge, has_values, shape, dtype, xp in self.checks:
            t = ref()
            if t is None or _edge_kind(t._edge) != edge:
                return None
            if has_values:
                d = t._data
                if d.shape != shape or d.dtype != dtype or t._xp is not xp:
                    return None
            r[k] = t
        for k, pos, data in self.loads:
            if pos >= 0:
                r[k] = leaves[pos]._data if data else leaves[pos]
            else:
                r[k] = r[-1 - pos]._data
        if not _grads_hold(self.grad_guards, r):
            return None
        if self.hook_guards and (STATE.live_hooks or self.hooked):
            for kt, key in self.hook_guards:
                if hooks_key(r[kt]._edge) != key:
                    return None
        for k, xp, a in self.fresh:
            r[k] = xp.asarray(a, copy=True)
        for t in self.inside:
            t._grad = None
        return r

    def execute(self, r: list) -> None:
        # No local variable holds a value past its instruction (see _run_in_place). An
        # entry is an instruction's fields, then its frees (see __init__).
        for ins in self.program:
            op = ins[0]
            if op == FWD1:
                _, f, a, p, o, norm, xp, free = ins
                r[o] = f(xp, r[a], p)
                if norm:
                    r[o] = _backend.normalize(r[o], xp)
            elif op == VJP:
                _run_vjp(ins, r, None)
                free = ins[_VJP_FREES]
            elif op == FWD2:
                _, f, a, b, o, norm, xp, free = ins
                r[o] = f(xp, r[a], r[b])
                if norm:
                    r[o] = _backend.normalize(r[o], xp)
            elif op == ADD:
                _, a, b, o, free = ins
                r[o] = r[a] + r[b]
            elif op == FWDN:
                _run_fwdn(ins, r, None)
                free = ins[_FWDN_FREES]
            elif op == _IN_PLACE:
                _, (instruction, spec), free = ins
                _run_in_place(instruction, r, spec)
            elif op == _SPECIAL:
                _, special, free = ins
                _run_special(special, r)
            elif op == NORM:
                _, x, o, free = ins
                r[o] = np.asarray(r[x])
            else:  # STORED
                _, roots, o, free = ins
                r[o] = {id(r[s]) for s in roots}
            if free is not None:
                for s in free:
                    r[s] = None

    def leave(self, r: list) -> None:
        for k, wb, delta, replace, alias in self.tail:
            t = r[k]
            if wb >= 0:
                t._data = r[wb]
            if delta or replace:
                _bump(t, delta, replace, alias)
        if self.graph is not None:
            rule, saved, edges, n_out, versioned = self.graph
            edges = tuple([r[k]._edge for k in edges])
            versions = _versions([r[k] for _, k in versioned], [j for j, _ in versioned])
            saved = tuple([r[s] for s in saved])
            r[self.node_place] = Node(rule, edges, saved, None, None, versions, n_out)


def _grads_hold(grad_guards: list, r: list) -> bool:
    """Whether each tensor's .grad is as the trace saw it (see _LoopPlan.grad_guards)."""
    for kt, kg in grad_guards:
        grad = r[kt].grad
        if kg is None:
            if grad is not None:
                return False
        elif kg < 0:
            if grad is None:
                return False
        elif grad is not r[kg]:
            return False
    return True


# The loop's opcodes of an instruction that may write its result into an input (_in_place),
# and of one with more to run than its fields (see _LoopPlan._instruction).
_IN_PLACE = -1
_SPECIAL = -2
# Where the frees are in the loop's entry of a VJP, an FWDN (after the fields).
_VJP_FREES = len(Vjp._fields)
_FWDN_FREES = len(FwdN._fields)
_NO_FREES = (None,)
# The record of each opcode (see _instructions).
_RECORDS = {
    FWD1: Fwd1, FWD2: Fwd2, FWDN: FwdN, VJP: Vjp, ADD: Add, NORM: Norm, STORED: Stored,
    ACC: Acc, SETGRAD: SetGrad, WRITE: Write, HOST: Host,
}  # fmt: skip


def _instructions(program: list) -> list:
    """The instructions (records) of a loop program, in order."""
    out = []
    for entry in program:
        op = entry[0]
        if op == _SPECIAL:
            out.append(entry[1][1])
        elif op == _IN_PLACE:
            out.append(entry[1][0])
        else:
            out.append(_RECORDS[op]._make(entry[:-1]))
    return out


def _run_special(entry: tuple, r: list) -> None:
    op, ins, pf, extra = entry
    if op == FWD1:
        _, f, a, p, o, norm, xp = ins
        r[o] = f(xp, r[a], pf(r))
        if norm:
            r[o] = _backend.normalize(r[o], xp)
    elif op == VJP:  # (the record, with no frees: the loop's entry's layout)
        _run_vjp(ins + _NO_FREES, r, pf)
    elif op == FWDN:
        _run_fwdn(ins + _NO_FREES, r, pf)
    else:
        _run_other(op, ins, r, pf, extra)


def _run_in_place(ins, r: list, spec: tuple) -> None:
    """A ufunc's result written into its input s (spec: see _in_place) when nothing but its
    place holds that array, else the instruction as recorded."""
    ufunc, xs, s, o, layout = spec
    if (
        r[s].base is None
        and sys.getrefcount(r[s]) == _SOLO[1]
        and (layout is None or (_layout(r[layout[0]]) == layout[1] and _layout(r[s]) == layout[2]))
    ):
        if len(xs) == 1:
            r[o] = ufunc(r[s], r[s])
        else:
            r[o] = ufunc(r[xs[0]], r[xs[1]], r[s])
    elif ins.op == ADD:
        r[o] = r[xs[0]] + r[xs[1]]
    elif ins.op == FWD1:
        r[o] = ins.fn(ins.xp, r[s], None)
    else:
        r[o] = ins.fn(ins.xp, r[xs[0]], r[xs[1]])


def _layout(a) -> tuple:
    return a.shape, a.strides


def _run_fwdn(ins, r, pf) -> None:
    _, f, xs, p, outs, norms, multi, xp, _ = ins  # the loop's entry: fields, frees
    res = f(xp, tuple([r[s] for s in xs]), p if pf is None else pf(r))
    if not multi:
        res = (res,)
    for k, o in enumerate(outs):
        r[o] = _backend.normalize(res[k], xp) if norms[k] else res[k]


def _run_vjp(ins, r, pf) -> None:
    _, fn, form, g, saved, p, needs, outs, fits, xp, _ = ins  # the loop's entry: fields, frees
    g = r[g] if g.__class__ is not tuple else tuple([None if s is None else r[s] for s in g])
    if pf is not None:
        p = pf(r)
    if form == 0:
        res = fn(
            xp,
            g,
            None if saved is None else tuple([None if s is None else r[s] for s in saved]),
            p,
            needs,
        )
    elif form == 1:
        x, out = (None, None) if saved is None else (_get(r, saved[0]), _get(r, saved[1]))
    else:
        x, y, out = (None,) * 3 if saved is None else tuple([_get(r, s) for s in saved])
    k = -1
    for o in outs:
        k += 1
        if o is None:
            continue
        if form == 0:
            gi = res[k]
        elif form == 1:
            gi = fn[0](xp, g, x, out, p)
        else:
            gi = fn[k](xp, g, x, y, out)
        if fits is not None and fits[k] is not None:
            shape, dtype = fits[k]
            if shape is not None:
                gi = _backend.sum_to(xp, gi, shape)
            if dtype is not None:
                gi = _cast(xp, gi, dtype)
        r[o] = gi


def _get(r, s):
    return None if s is None else r[s]


def _run_other(op, ins, r, pf, extra) -> None:
    """The instructions that act outside: accumulate, assignments of .grad, in-place writes,
    numbers computed in Python (HOST); extra: see _LoopPlan._instruction."""
    if op == ACC:
        r[ins.out] = _acc(r[extra], r[ins.g], r[ins.stored])
    elif op == HOST:
        outs = ins.outs
        for k, a in zip(extra, host_arrays(ins.fn, ins.args, ins.dtype, ins.xp, extra)):
            r[outs[k]] = a
    elif op == SETGRAD:
        t = r[extra]
        t._grad = None if ins.value is None else Tensor(r[ins.value], t._xp, None)
    else:  # WRITE
        _, kind, before, (how, value), o, xp, _ = ins
        if kind == "op":
            out = r[o] = how(r[before], r[value])
        else:
            key = how if pf is None else pf(r)
            a = r[before] if kind == "setitem" else xp.asarray(r[before], copy=True)
            out = r[o] = _backend.assign(xp, a, key, r[value])
        if extra is not None:
            t = r[extra[0]]
            _rebind(t._grad if extra[1] else t, out, kind == "setitem_copy")


def _output_getter(spec, r_of, tensor_reg, ext_reg, kinds, node_reg) -> Callable:
    kind = spec[0]
    if kind == "value":
        v = spec[1]
        return lambda leaves, r: v
    if kind == "same":  # set by _fix_outputs
        return lambda leaves, r: None
    if kind == "raw":
        k = r_of(spec[1])
        return lambda leaves, r: r[k]
    if kind == "arg":
        i = spec[1]
        return lambda leaves, r: leaves[i]
    if kind == "ext":
        k = ext_reg[spec[1]]
        return lambda leaves, r: r[k]
    if kind == "grad":
        k = tensor_reg(spec[1])
        return lambda leaves, r: r[k].grad
    s, xp = spec[1], spec[2]
    k = r_of(s)
    copy = kinds.get(s) == CONST  # made inside: a new array at each call

    def value(r):
        return xp.asarray(r[k], copy=True) if copy else r[k]

    if kind == "new":
        return lambda leaves, r: Tensor(value(r), xp, None)
    if kind == "leaf":
        return lambda leaves, r: _leaf(value(r), xp)
    if kind == "graph":
        index = spec[3]
        return lambda leaves, r: Tensor(value(r), xp, _port(r[node_reg], index))
    rule = spec[3]
    return lambda leaves, r: Tensor(value(r), xp, _stub(rule))


def _port(node: Node, index: int):
    """The edge of output `index` of a replay's node."""
    return Port(node, index) if node.n_out > 1 else node


def _param_builder(p, r_of) -> Callable:
    """A function of the registers that builds template p with its slots' values."""
    stack = [(p, False)]
    ops: list = []  # post-order: (0, value) | (1, register) | (2, n, is_tuple)
    while stack:
        item, ready = stack.pop()
        c = item.__class__
        if c is tuple or c is list:
            if ready:
                ops.append((2, len(item), c is tuple))
            else:
                stack.append((item, True))
                stack.extend((x, False) for x in reversed(item))
        elif c is Slot:
            ops.append((1, r_of(item.index)))
        else:
            ops.append((0, item))

    def build_p(r):
        done: list = []
        for op in ops:
            if op[0] == 0:
                done.append(op[1])
            elif op[0] == 1:
                done.append(r[op[1]])
            else:
                n = op[1]
                parts = done[len(done) - n :] if n else []
                del done[len(done) - n :]
                done.append(tuple(parts) if op[2] else parts)
        return done[0]

    return build_p


# ----------------------------------------------------------------------------- source


class _Source:
    """Source lines and the globals they name."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.globals: dict = {
            "RETRACE": RETRACE,
            "ACC": AccumulateGrad,
            "TENSOR": Tensor,
            "NORMALIZE": _backend.normalize,
            "SUM_TO": _backend.sum_to,
            "ASSIGN": _backend.assign,
            "ASARRAY": np.asarray,
            "ACCUMULATE": _acc,
            "LEAF": _leaf,
            "STUB": _stub,
            "BUMP": _bump,
            "REBIND": _rebind,
            "NOTHING2": _NOTHING2,
            "NOTHING3": _NOTHING3,
            "NODE": Node,
            "PORT": _port,
            "HOOKS_KEY": hooks_key,
            "STATE": STATE,
            "VERSIONS": _versions,
            "FIX_OUTPUTS": _fix_outputs,
            "HOST": host_arrays,
            "REFS": sys.getrefcount,
        }
        self._names: dict[int, str] = {}

    def name(self, obj, prefix: str = "K") -> str:
        """A global name for obj (one per object)."""
        n = self._names.get(id(obj))
        if n is None:
            n = f"{prefix}{len(self._names)}"
            self._names[id(obj)] = n
            self.globals[n] = obj
        return n

    def emit(self, line: str) -> None:
        self.lines.append("    " + line)


_EDGE_CHECKS = (
    "{t}._edge is not None",
    "{t}._edge.__class__ is not ACC",
    "{t}._edge is None or {t}._edge.__class__ is ACC",
)


def _source(rec: Recording, program: list, keep, last, inplace, treedef, unflatten) -> Callable:
    """The replay as straight-line source, compiled once. Each instruction's emitter is given
    the slots it reads for the last time, whose variables it may reuse after it: the computed
    ones (_analyze's frees, the last item of the instruction's entry in the loop's
    `program`), the others (arguments', tensors' from outside, constants) found here by their
    last use."""
    ends: dict[int, tuple] = {}
    n = len(keep)
    for s in rec.kinds:
        i = last[s]
        if 0 <= i < n:
            ends[i] = ends.get(i, ()) + (s,)
    b = _SourceBuilder(rec, last, inplace)
    b.prologue()
    emitters = b.emitters()
    for i, entry, ins in zip(compress(range(n), keep), program, _instructions(program)):
        emitters[ins.op](ins, (entry[-1] or ()) + ends.get(i, ()), i)
    b.epilogue()
    src = b.src
    src.globals["UNFLATTEN"] = unflatten
    src.globals["TREEDEF"] = treedef
    outs = f"[{', '.join(b.outputs())}]"
    if rec.out_same or rec.out_versions or rec.out_views:  # else no work
        fix = f"{src.name(rec.out_same, 'V')}, {src.name(rec.out_versions, 'V')}, "
        fix += f"{src.name(rec.out_views, 'V')}, "
        fix += f"[{', '.join(b.tensor(view[1]) for view in rec.out_views)}]"
        outs = f"FIX_OUTPUTS({outs}, {fix})"
    src.emit(f"return UNFLATTEN(TREEDEF, {outs})")
    text = "def replay(leaves):\n" + "\n".join(src.lines) + "\n"
    namespace = src.globals
    exec(compile(text, "<chainrule.compile>", "exec"), namespace)  # noqa: S102 - our own source
    replay = namespace["replay"]
    replay.source = text
    return replay


class _SourceBuilder:
    """Writes the source of a replay: the guards and loads (prologue), one emitter per
    opcode, the write-backs and the outputs (epilogue). Each value lives in a local variable
    from the line that makes it to its last use (`last`); variables are reused after."""

    def __init__(self, rec: Recording, last: list, inplace: dict) -> None:
        self.rec = rec
        self.last = last
        self.inplace = inplace
        self.src = _Source()
        self.names: dict[int, str] = {}  # slot -> its variable (or a constant's global)
        self.free: list[str] = []  # variables free for reuse
        self.count = 0
        self.ext_names: dict[int, str] = {}  # external index -> the variable of its tensor

    # -- names

    def var(self) -> str:
        if self.free:
            return self.free.pop()
        self.count += 1
        return f"v{self.count}"

    def ref(self, s) -> str:
        if s is None:
            return "None"
        n = self.names.get(s)
        if n is None:  # a constant
            n = self.names[s] = self.src.name(self.rec.values[s], "C")
        return n

    def refs(self, slots) -> str:
        return "(" + "".join(f"{self.ref(s)}, " for s in slots) + ")"

    def param(self, p) -> str:
        if p is None:
            return "None"
        if p.__class__ is not Template:
            return self.src.name(p, "P")
        return _param_source(p.value, self.ref, self.src)

    def release(self, slots, i: int) -> None:
        """Free the variables of `slots` whose last use is instruction i."""
        names, last = self.names, self.last
        for s in slots:
            if s is not None and last[s] == i and s in names:
                n = names.pop(s)
                if n[0] == "v":  # a local variable (not a constant)
                    self.free.append(n)

    def out(self, s) -> str:
        """The variable that slot s is made into ("_" when nothing reads it)."""
        if self.last[s] < 0:
            return "_"
        n = self.names[s] = self.var()
        return n

    def tensor(self, ref_) -> str:
        kind, i = ref_
        return f"leaves[{i}]" if kind == "arg" else self.ext_names[i]

    def emit(self, line: str) -> None:
        self.src.emit(line)

    # -- before the instructions

    def prologue(self) -> None:
        rec, src = self.rec, self.src
        for guard in rec.guards:
            self.emit(f"if not {src.name(guard, 'G')}(leaves): return RETRACE")
        for i, ext in enumerate(rec.externals):
            if rec.persistent[i]:
                self._external_check(i, ext)
        for i, t in rec.inside_leaves.items():  # a new leaf's .grad is None
            self.ext_names[i] = src.name(t, "L")
            self.emit(f"{self.ext_names[i]}._grad = None")
        for ref_, i in rec.grad_guards:
            what = "None" if i is None or i < 0 else self.ext_names[i]
            op = "is not" if i is None or i >= 0 else "is"
            self.emit(f"if {self.tensor(ref_)}.grad {op} {what}: return RETRACE")
        for ref_, key in rec.hook_guards:
            t = self.tensor(ref_)
            if key is None:  # no hook registered anywhere: none on this leaf
                self.emit(
                    f"if STATE.live_hooks and HOOKS_KEY({t}._edge) is not None: return RETRACE"
                )
            else:
                self.emit(f"if HOOKS_KEY({t}._edge) != {src.name(key, 'H')}: return RETRACE")
        for s, kind in rec.kinds.items():
            if self.last[s] >= 0 and kind != CONST:
                self._load(s, kind)

    def _external_check(self, i: int, ext) -> None:
        src = self.src
        t = self.ext_names[i] = f"t{i}"
        self.emit(f"{t} = {src.name(ext.ref, 'E')}()")
        cond = [f"{t} is None", _EDGE_CHECKS[ext.edge].format(t=t)]
        if ext.slot is not None:
            cond.append(f"{t}._data.shape != {src.name(ext.shape, 'S')}")
            cond.append(f"{t}._data.dtype != {src.name(ext.dtype, 'D')}")
            cond.append(f"{t}._xp is not {src.name(ext.xp, 'X')}")
        self.emit(f"if {' or '.join(cond)}: return RETRACE")

    def _load(self, s: int, kind: int) -> None:
        """The line that reads slot s, an argument's or a tensor from outside's values."""
        rec, src = self.rec, self.src
        if kind == INPUT:
            pos = rec.where[s]
            n = self.names[s] = self.var()
            self.emit(f"{n} = leaves[{pos}]" + ("._data" if rec.input_tensor[pos] else ""))
            return
        i = rec.where[s]
        ext = rec.externals[i]
        if ext.shares is not None and not rec.persistent[i] and rec.persistent[ext.shares]:
            i = ext.shares  # made inside from a tensor from outside: that one's array
        if rec.persistent[i]:
            n = self.names[s] = self.var()
            self.emit(f"{n} = {self.ext_names[i]}._data")
        elif ext.snapshot is not None:  # written inside: a fresh copy at each call
            n = self.names[s] = self.var()
            x, c = src.name(ext.xp, "X"), src.name(ext.snapshot, "C")
            self.emit(f"{n} = {x}.asarray({c}, copy=True)")
        else:
            self.names[s] = src.name(ext.entry, "C")

    # -- the instructions: emitter(instruction, the slots it reads for the last time, its
    #    index)

    def emitters(self) -> dict:
        return {
            FWD1: self.fwd1, FWD2: self.fwd2, FWDN: self.fwdn, VJP: self.vjp, ADD: self.add,
            NORM: self.norm, STORED: self.stored, ACC: self.acc, HOST: self.host,
            SETGRAD: self.setgrad, WRITE: self.write,
        }  # fmt: skip

    def _result(self, o, line: str, norm: bool, x: str) -> None:
        self.emit(f"{self.out(o)} = " + (f"NORMALIZE({line}, {x})" if norm else line))

    def _in_place(self, i: int, reads, line: str) -> bool:
        """The line of instruction i that writes its result into its input when nothing
        else holds that array (see _in_place), `line` otherwise; False if it can't."""
        spec = self.inplace.get(i)
        if spec is None:
            return False
        ufunc, xs, s, o, layout = spec
        n = self.names[s]
        args = ", ".join(self.ref(x) for x in xs)
        cond = f"{n}.base is None and REFS({n}) == {_SOLO[0]}"
        if layout is not None:
            other, (shape, strides), (own, own_strides) = layout
            w = self.ref(other)
            cond += (
                f" and {w}.shape == {shape!r} and {w}.strides == {strides!r}"
                f" and {n}.shape == {own!r} and {n}.strides == {own_strides!r}"
            )
        self.release(reads, i)
        self.free.remove(n)  # the result takes the variable of the input it is written into
        self.names[o] = n
        self.emit(f"{n} = {self.src.name(ufunc, 'UF')}({args}, {n}) if {cond} else {line}")
        return True

    def fwd1(self, ins, reads, i: int) -> None:
        _, f, a, p, o, norm, xp = ins
        x = self.src.name(xp, "X")
        line = f"{self.src.name(f, 'F')}({x}, {self.ref(a)}, {self.param(p)})"
        if not self._in_place(i, reads, line):
            self.release(reads, i)
            self._result(o, line, norm, x)

    def fwd2(self, ins, reads, i: int) -> None:
        _, f, a, b, o, norm, xp = ins
        x = self.src.name(xp, "X")
        line = f"{self.src.name(f, 'F')}({x}, {self.ref(a)}, {self.ref(b)})"
        if not self._in_place(i, reads, line):
            self.release(reads, i)
            self._result(o, line, norm, x)

    def fwdn(self, ins, reads, i: int) -> None:
        _, f, xs, p, outs, norms, multi, xp = ins
        x = self.src.name(xp, "X")
        line = f"{self.src.name(f, 'F')}({x}, {self.refs(xs)}, {self.param(p)})"
        self.release(reads, i)
        if not multi:
            self._result(outs[0], line, norms[0], x)
            return
        r = self.var()
        self.emit(f"{r} = {line}")
        for k, (s, norm) in enumerate(zip(outs, norms)):
            n = self.out(s)
            if n != "_":
                self.emit(f"{n} = NORMALIZE({r}[{k}], {x})" if norm else f"{n} = {r}[{k}]")
        self.free.append(r)

    def vjp(self, ins, reads, i: int) -> None:
        _, fn, form, g, saved, p, needs, _, _, xp = ins
        src = self.src
        x = src.name(xp, "X")
        gs = self.refs(g) if g.__class__ is tuple else self.ref(g)
        pv = self.param(p)
        r = None
        if form == 0:  # one call of the rule's VJP, indexed per input
            sv = "None" if saved is None else self.refs(saved)
            whole = f"{src.name(fn, 'V')}({x}, {gs}, {sv}, {pv}, {src.name(needs, 'N')})"
            self.release(reads, i)
            calls = _vjp_parts(ins)
            if len(calls) == 1 and calls[0][4] is None and calls[0][5] is None:
                self.emit(f"{self.out(calls[0][3])} = {whole}[{calls[0][2]}]")
                return
            r = self.var()
            self.emit(f"{r} = {whole}")
            exprs = [(s, f"{r}[{k}]", shape, dtype) for _, _, k, s, shape, dtype in calls]
        else:  # one formula per input
            if saved is None:
                args = "None, None" if form == 1 else "None, None, None"
            else:
                args = ", ".join(self.ref(s) for s in saved)
            exprs = []
            for f, fm, _, s, shape, dtype in _vjp_parts(ins):
                tail = f", {pv}" if fm == 1 else ""
                exprs.append((s, f"{src.name(f, 'U')}({x}, {gs}, {args}{tail})", shape, dtype))
            if len(exprs) == 1:
                self.release(reads, i)
        targets = [self.out(s) for s, _, _, _ in exprs]
        for n, (_, expr, shape, dtype) in zip(targets, exprs):
            if shape is not None:
                expr = f"SUM_TO({x}, {expr}, {src.name(shape, 'S')})"
            if dtype is not None:
                expr = f"{x}.astype({expr}, {src.name(dtype, 'D')})"
            self.emit(f"{n} = {expr}")
        if r is not None:
            self.free.append(r)
        elif len(exprs) > 1:  # the inputs stay bound until every formula ran
            self.release(reads, i)

    def add(self, ins, reads, i: int) -> None:
        line = f"{self.ref(ins.a)} + {self.ref(ins.b)}"
        if not self._in_place(i, reads, line):
            self.release(reads, i)
            self.emit(f"{self.out(ins.out)} = {line}")

    def norm(self, ins, reads, i: int) -> None:
        line = f"ASARRAY({self.ref(ins.x)})"
        self.release(reads, i)
        self.emit(f"{self.out(ins.out)} = {line}")

    def stored(self, ins, reads, i: int) -> None:
        line = "{" + ", ".join(f"id({self.ref(s)})" for s in ins.roots) + "}"
        self.release(reads, i)
        self.emit(f"{self.out(ins.out)} = {line}")

    def acc(self, ins, reads, i: int) -> None:
        line = f"ACCUMULATE({self.tensor(ins.leaf)}, {self.ref(ins.g)}, {self.ref(ins.stored)})"
        self.release(reads, i)
        self.emit(f"{self.out(ins.out)} = {line}")

    def host(self, ins, reads, i: int) -> None:
        _, fn, args, outs, dtype, xp = ins
        src = self.src
        which = _used(outs, self.last)
        targets = "".join(f"{self.out(outs[k])}, " for k in which)
        call = f"{src.name(fn, 'F')}, {src.name(args, 'A')}, {src.name(dtype, 'D')}"
        line = f"HOST({call}, {src.name(xp, 'X')}, {which!r})"
        self.emit(f"{targets}= {line}" if targets else line)  # the call counts steps

    def setgrad(self, ins, reads, i: int) -> None:
        t = self.tensor(ins.leaf)
        value = "None" if ins.value is None else f"TENSOR({self.ref(ins.value)}, {t}._xp, None)"
        self.release(reads, i)
        self.emit(f"{t}._grad = {value}")

    def write(self, ins, reads, i: int) -> None:
        _, kind, before, (how, value), o, xp, target = ins
        b, v = self.ref(before), self.ref(value)
        if kind == "op":
            line = f"{self.src.name(how, 'F')}({b}, {v})"
        else:
            x = self.src.name(xp, "X")
            a = b if kind == "setitem" else f"{x}.asarray({b}, copy=True)"
            line = f"ASSIGN({x}, {a}, {self.param(how)}, {v})"
        self.release(reads, i)
        if target[0] == "ext" and not self.rec.persistent[target[1]]:
            self.emit(f"{self.out(o)} = {line}")  # made inside: only its values are read
            return
        n = self.out(o)
        if n == "_":
            n = self.var()
            self.free.append(n)
        self.emit(f"{n} = {line}")
        t = self.tensor(target[1]) + "._grad" if target[0] == "grad" else self.tensor(target)
        self.emit(f"REBIND({t}, {n}, {kind == 'setitem_copy'})")

    # -- after the instructions

    def epilogue(self) -> None:
        """The new values and versions of the tensors written; the node of outputs with a
        live graph."""
        rec = self.rec
        changed = [
            (self.ext_names[i], ext) for i, ext in enumerate(rec.externals) if rec.persistent[i]
        ]
        changed += [(f"leaves[{pos}]", ext) for pos, ext in rec.arg_changes]
        for t, ext in changed:
            if ext.writeback is not None:
                self.emit(f"{t}._data = {self.ref(ext.writeback)}")
            if ext.delta or ext.replace:
                self.emit(f"BUMP({t}, {ext.delta}, {ext.replace}, {ext.alias})")
        if rec.graph is None:
            return
        rule, saved, refs = rec.graph
        n_out = sum(spec[0] == "graph" for spec in rec.outputs)
        edges = "".join(f"{self.tensor(ref_)}._edge, " for ref_ in refs)
        versioned = _saved_tensors(rec, saved)
        versions = "None"
        if versioned:
            ts = "".join(f"{self.tensor(ref_)}, " for _, ref_ in versioned)
            versions = f"VERSIONS(({ts}), {tuple(j for j, _ in versioned)!r})"
        self.emit(
            f"node = NODE({self.src.name(rule, 'R')}, ({edges}), {self.refs(saved)}, None, "
            f"None, {versions}, {n_out})"
        )

    def outputs(self) -> list[str]:
        """An expression per output leaf."""
        return [self._output(spec) for spec in self.rec.outputs]

    def _output(self, spec) -> str:
        src = self.src
        kind = spec[0]
        if kind == "same":  # set by FIX_OUTPUTS
            return "None"
        if kind == "value":
            return src.name(spec[1], "C")
        if kind == "raw":
            return self.ref(spec[1])
        if kind == "arg":
            return f"leaves[{spec[1]}]"
        if kind == "ext":
            return self.ext_names[spec[1]]
        if kind == "grad":
            return f"{self.tensor(spec[1])}.grad"
        s, x = spec[1], src.name(spec[2], "X")
        value = self.ref(s)
        if self.rec.kinds.get(s) == CONST:  # made inside: a new array at each call
            value = f"{x}.asarray({value}, copy=True)"
        if kind == "new":
            return f"TENSOR({value}, {x}, None)"
        if kind == "leaf":
            return f"LEAF({value}, {x})"
        if kind == "graph":
            return f"TENSOR({value}, {x}, PORT(node, {spec[3]}))"
        return f"TENSOR({value}, {x}, STUB({src.name(spec[3], 'R')}))"


def _param_source(p, ref, src: _Source) -> str:
    """Source that builds template p with its slots' values (tuples and lists)."""

    def leaf(item) -> str:
        if item.__class__ is Slot:
            return ref(item.index)
        if item is None or item.__class__ in (int, bool):
            return repr(item)
        return src.name(item, "P")

    def container(c, parts) -> str:
        inner = "".join(f"{x}, " for x in parts)
        return f"({inner})" if c is tuple else f"[{inner}]"

    return rebuild(p, leaf, container)
