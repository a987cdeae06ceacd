"""The replay build after a trace (benchmarks/compile_trace.py measures its cost), made at the
second call: what a kept replay holds is met by the garbage collector at every collection,
so it keeps one container per instruction; the recording kept until the build holds none of
the call's values; only results large enough are looked at for in-place writes; both tiers
free each value after its last read."""

import gc
import os
import subprocess
import sys
import weakref

import numpy as np
import pytest

import chainrule as cr
from chainrule._compile import _program, _trace
from chainrule._compile._trace import CONST, Tracer
from chainrule._mode import set_feature
from conftest import LIBRARY, N, T


def _chain(x, c):
    h = x
    for _ in range(50):
        h = cr.tanh(h * c + x) / 3.0
    return cr.sum(h)


def _step(x, c):
    x.grad = None
    loss = _chain(x, c)
    loss.backward()
    return loss.detach(), x.grad


def _kept_by(compiled, calls: int, *args) -> tuple[list, int]:
    """The tracked objects that `calls` calls of compiled keep (made by them), and how many
    references the collector follows from them at each collection."""
    gc.collect()
    gc.collect()
    before = {id(o) for o in gc.get_objects()}
    for _ in range(calls):
        compiled(*args)
    gc.collect()  # a tuple of numbers is untracked once the collector has seen it
    gc.collect()  # (a tuple of such tuples, at the next collection)
    made = []
    seen = set()
    stack = [compiled._cache]
    while stack:
        for o in gc.get_referents(stack.pop()):
            if gc.is_tracked(o) and id(o) not in before and id(o) not in seen:
                seen.add(id(o))
                made.append(o)
                stack.append(o)
    return made, sum(len(gc.get_referents(o)) for o in made)


@pytest.mark.parametrize("calls", [1, 2])
def test_a_kept_replay_leaves_the_collector_one_container_per_instruction(calls, monkeypatch):
    monkeypatch.setattr(_program, "SOURCE_AFTER", 10**9)  # the loop tier at the second call
    x = T(np.linspace(-1.0, 1.0, 8), requires_grad=True)
    c = T(np.linspace(0.5, 1.5, 8))
    warm = cr.compile(_step)  # what a first trace in the process makes once
    warm(x, c)
    warm(x, c)
    del warm
    compiled = cr.compile(_step)
    made, references = _kept_by(compiled, calls, x, c)
    (program,) = compiled._cache[next(iter(compiled._cache))]
    if calls == 1:
        # The recording, not built yet (see Replay): a record per instruction.
        kept = len(program._recording[0].code)
        assert program.run is None
    else:
        # Each kept instruction's entry in the loop's program (its fields, then its frees);
        # an entry and the instruction's record were two, with lists of a place per
        # instruction (the frees) and per slot (the initial places) met at every
        # collection as well.
        kept = len(program._pending[1])
    assert kept > 300
    if calls == 2:
        assert len(made) <= kept + 200
        assert references <= 12 * kept + 500
    else:
        # (Before the build, the slots that each backward formula reads are a list: two
        # containers for such an instruction, and its reads followed twice.)
        assert len(made) <= 2 * kept + 200
        assert references <= 14 * kept + 500


def test_the_analysis_lists_as_large_only_the_kept_results_of_in_place_bytes_or_more(
    monkeypatch,
):
    monkeypatch.setattr(_trace, "IN_PLACE_BYTES", 64 * 8)  # (noted by the trace: Tracer.large)
    x = T(np.linspace(-1.0, 1.0, 64))
    tracer = Tracer([x])
    set_feature("tracer", tracer)
    try:
        big = cr.sin(x)
        cr.exp(big)  # read by nothing
        out = cr.sum(cr.tanh(big) * big)
        del big
    finally:
        set_feature("tracer", None)
    rec = tracer.finish([out])
    assert rec.large == (LIBRARY == "numpy")  # (NumPy's arrays only: see _program._in_place)
    keep, _, _, big = _program._analyze(rec, _program._layouts(rec.values, rec.large)[1])
    made = [
        i
        for i, (ins, kept) in enumerate(zip(rec.code, keep))
        if kept
        and rec.writes[i].__class__ is int
        and isinstance(rec.values[rec.writes[i]], np.ndarray)
        and rec.values[rec.writes[i]].nbytes >= 64 * 8
    ]
    if LIBRARY == "numpy":
        assert sorted(big) == made and len(made) == 3  # sin, tanh, the product; not exp
    assert big == sorted(big, reverse=True)
    monkeypatch.setattr(_trace, "IN_PLACE_BYTES", 64 * 8 + 1)
    assert _program._analyze(rec, _program._layouts(rec.values, rec.large)[1])[3] == []
    assert _program._layouts(rec.values, False) == ({}, frozenset())


def _traced(fn, *args):
    tracer = Tracer(list(args))
    set_feature("tracer", tracer)
    try:
        out = fn(*args)
    finally:
        set_feature("tracer", None)
    return tracer.finish([out])


@pytest.mark.skipif(LIBRARY != "numpy", reason="layouts are read of NumPy's arrays only")
def test_the_trace_notes_a_large_array_where_it_enters_and_the_build_reads_layouts_only_then():
    small = T(np.linspace(-1.0, 1.0, 64), requires_grad=True)
    large = T(np.linspace(-1.0, 1.0, 4096), requires_grad=True)  # 32 KiB
    baked = np.ones(4096)

    def backward(x):
        loss = cr.sum(cr.tanh(x) * x)
        loss.backward()
        return loss.detach()

    cases = {
        "small": (backward, small, False),
        "argument": (backward, large, True),
        # made by the forward from small values (an outer product), and a baked array
        "made": (lambda x: cr.sum(x[:, None] * x[None, :]), small, True),
        "baked": (lambda x: cr.sum(x * cr.sum(cr.asarray(baked))), small, True),
    }
    for name, (fn, x, expected) in cases.items():
        rec = _traced(fn, x)
        assert rec.large is expected, name
        layouts, big = _program._layouts(rec.values, rec.large)
        assert bool(layouts) is expected and bool(big) is expected, name
        if expected:  # every NumPy array's layout, the large ones listed
            arrays = {k for k, v in enumerate(rec.values) if isinstance(v, np.ndarray)}
            assert set(layouts) == arrays, name
            assert big == {k for k in arrays if rec.values[k].nbytes >= 16384}, name
        small.grad = large.grad = None


@pytest.mark.parametrize("tier", ["loop", "source"])
def test_both_tiers_replay_a_training_step_equal_to_eager_after_the_lighter_build(
    tier, monkeypatch
):
    monkeypatch.setattr(_program, "SOURCE_AFTER", 10**9 if tier == "loop" else 0)
    c = T(np.linspace(0.5, 1.5, 8))
    compiled = cr.compile(_step)
    for k in range(3):
        x = T(np.linspace(-1.0, 1.0, 8) * (k + 1), requires_grad=True)
        loss, grad = compiled(x, c)
        y = T(np.linspace(-1.0, 1.0, 8) * (k + 1), requires_grad=True)
        eager_loss, eager_grad = _step(y, c)
        np.testing.assert_array_equal(N(loss), N(eager_loss))
        np.testing.assert_array_equal(N(grad), N(eager_grad))
    assert compiled.traces == 1
    if tier == "source":
        assert "def replay(leaves)" in compiled.source()[0]


def _gather(x):
    order = cr.argsort(x)  # an index computed inside: parameters that hold a slot
    return cr.sum(cr.take(x, order) * cr.arange(x.shape[0], dtype=x.dtype))


def test_the_loop_builds_parameters_that_hold_slots_at_each_call(monkeypatch):
    monkeypatch.setattr(_program, "SOURCE_AFTER", 10**9)
    compiled = cr.compile(_gather)
    for values in ([0.3, -1.0, 2.0, 0.5], [2.0, 1.0, -3.0, 0.0], [1.0, 4.0, 2.0, 3.0]):
        x = T(np.array(values))
        np.testing.assert_array_equal(N(compiled(x)), N(_gather(x)))
    assert compiled.traces == 1
    (program,) = compiled._cache[next(iter(compiled._cache))]
    assert program._pending[0].templates


class _Cyclic:
    """An object in a reference cycle (only the cyclic collector frees it)."""

    def __init__(self) -> None:
        self.me = self


def test_cyclic_garbage_made_while_tracing_is_collected_after_and_the_collector_setting_kept():
    made = []

    def fn(x):
        junk = _Cyclic()
        made.append(weakref.ref(junk))
        del junk
        return cr.sum(cr.sin(x))

    x = T(np.array([0.5, 1.0]))
    was = gc.isenabled()
    try:
        for enabled in (True, False):
            (gc.enable if enabled else gc.disable)()
            compiled = cr.compile(fn)
            compiled(x)  # the trace (the collector is paused while it runs)
            assert gc.isenabled() is enabled
            gc.collect()
            assert made[-1]() is None
    finally:
        (gc.enable if was else gc.disable)()


def _large_chain(seen: list):
    def chain(x):
        h = cr.sin(x)
        seen.append(weakref.ref(h._data))  # a value of the call: the recording lets it go
        for _ in range(5):
            h = cr.tanh(h * 1.5 + x)
        return cr.sum(h)

    return chain


@pytest.mark.parametrize("size", [16, 4096])  # (4096 doubles: results written in place)
def test_the_first_call_keeps_the_recording_without_its_values_and_the_second_builds_it(
    size, monkeypatch
):
    monkeypatch.setattr(_program, "SOURCE_AFTER", 10**9)
    seen: list = []
    compiled = cr.compile(_large_chain(seen))
    eager = _large_chain([])
    x = T(np.linspace(-1.0, 1.0, size))
    first = compiled(x)
    (program,) = compiled._cache[next(iter(compiled._cache))]
    # Not built: a function called once pays no build. The recording keeps no value of
    # the call (constants only), only the layouts of NumPy arrays where some are large.
    assert program.run is None and program._recording is not None
    rec, layouts, large = program._recording[:3]
    gc.collect()
    if LIBRARY == "numpy":
        assert seen[0]() is None
    assert all(rec.kinds[s] == CONST for s in rec.values)
    assert bool(large) == (LIBRARY == "numpy" and size == 4096)
    assert all(v.__class__ is tuple for v in layouts.values())
    y = T(np.linspace(-2.0, 0.5, size))
    second = compiled(y)
    assert program._recording is None and program.run is not None
    assert rec.code is None and rec.reads is None  # the loop's program holds what runs
    assert bool(program._pending[4]) == bool(large)  # ufuncs that write into their input
    np.testing.assert_array_equal(N(first), N(eager(x)))
    np.testing.assert_array_equal(N(second), N(eager(y)))
    np.testing.assert_array_equal(N(compiled(x)), N(first))
    assert compiled.traces == 1


def test_the_exit_lets_go_of_a_recording_not_built_and_a_call_after_it_traces_again(
    monkeypatch,
):
    monkeypatch.setattr(_program, "SOURCE_AFTER", 10**9)
    compiled = cr.compile(_step)
    c = T(np.linspace(0.5, 1.5, 8))

    def x():
        return T(np.linspace(-1.0, 1.0, 8), requires_grad=True)

    compiled(x(), c)
    (program,) = compiled._cache[next(iter(compiled._cache))]
    rec = weakref.ref(program._recording[0])
    assert program._exit.atexit and program._exit.alive
    program._exit()  # what weakref.finalize's pass at the interpreter's exit calls
    assert rec() is None  # let go at once, before the exit's collections
    with pytest.raises(RuntimeError, match="let go at the interpreter's exit"):
        program.source()
    loss, grad = compiled(x(), c)
    assert compiled.traces == 2
    eager_loss, eager_grad = _step(x(), c)
    np.testing.assert_array_equal(N(loss), N(eager_loss))
    np.testing.assert_array_equal(N(grad), N(eager_grad))
    loss, grad = compiled(x(), c)  # the new trace replays
    np.testing.assert_array_equal(N(grad), N(eager_grad))
    assert compiled.traces == 2


def test_a_built_replay_leaves_nothing_to_the_exit(monkeypatch):
    monkeypatch.setattr(_program, "SOURCE_AFTER", 10**9)
    compiled = cr.compile(_step)
    x = T(np.linspace(-1.0, 1.0, 8), requires_grad=True)
    c = T(np.linspace(0.5, 1.5, 8))
    compiled(x, c)
    (program,) = compiled._cache[next(iter(compiled._cache))]
    compiled(x, c)  # builds: the recording goes, and the exit's hand on it
    assert program._recording is None and not program._exit.alive


_AT_EXIT = """
import weakref
import numpy as np
import chainrule as cr

def step(x):
    x.grad = None
    loss = cr.sum(cr.tanh(x * 2.0 + x))
    loss.backward()
    return loss.detach()

x = cr.tensor(np.linspace(-1.0, 1.0, 8), requires_grad=True)
compiled = cr.compile(step)
seen = []
# Made before the replay's: weakref.finalize's exit pass runs it after the replay's.
weakref.finalize(step, lambda: print("recording alive:", seen[0]() is not None))
compiled(x)
(program,) = compiled._cache[next(iter(compiled._cache))]
seen.append(weakref.ref(program._recording[0]))
"""


def test_the_recording_is_gone_before_the_interpreter_exits():
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    run = subprocess.run(
        [sys.executable, "-c", _AT_EXIT], env=env, capture_output=True, text=True, check=True
    )
    assert run.stdout.strip() == "recording alive: False", run.stderr


def test_a_failed_build_fails_each_call_alike_and_leaves_the_recording_to_build_again(
    monkeypatch,
):
    monkeypatch.setattr(_program, "SOURCE_AFTER", 10**9)
    compiled = cr.compile(_step)
    c = T(np.linspace(0.5, 1.5, 8))

    def x():
        return T(np.linspace(-1.0, 1.0, 8), requires_grad=True)

    compiled(x(), c)  # the trace: nothing built
    analyze = _program._analyze

    def broken(rec, large):
        raise RuntimeError("a build that fails")

    monkeypatch.setattr(_program, "_analyze", broken)
    enabled = gc.isenabled()
    for _ in range(2):
        with pytest.raises(RuntimeError, match="a build that fails"):
            compiled(x(), c)
        assert gc.isenabled() is enabled  # (paused while building)
    monkeypatch.setattr(_program, "_analyze", analyze)
    loss, grad = compiled(x(), c)
    eager_loss, eager_grad = _step(x(), c)
    np.testing.assert_array_equal(N(loss), N(eager_loss))
    np.testing.assert_array_equal(N(grad), N(eager_grad))
    assert compiled.traces == 1
