"""The trace's cheaper paths (benchmarks/compile_trace.py measures their cost): operations go
straight to the tracer only while it is the only feature on, and the replay build's liveness
pass keeps, drops and frees what the replay needs."""

import numpy as np

import chainrule as cr
from chainrule._compile import _program
from chainrule._compile._trace import Tracer
from chainrule._mode import grad_mode, set_feature
from chainrule._rules import RULES
from chainrule._state import STATE
from conftest import N, T


def test_lone_tracer_is_the_tracer_only_while_no_other_feature_is_on_and_both_paths_replay():
    seen = []

    def fn(x):
        if grad_mode.tracer is not None:
            seen.append(grad_mode.lone_tracer is grad_mode.tracer)
            with cr.autograd.detect_anomaly():  # another feature: the general path records
                seen.append(grad_mode.lone_tracer is None)
                y = cr.sin(x) * x
        else:
            y = cr.sin(x) * x
        return cr.sum(cr.exp(y) * x)

    compiled = cr.compile(fn)
    for values in ([0.5, 1.0], [2.0, -1.0], [0.1, 0.3]):
        x = T(np.array(values))
        np.testing.assert_array_equal(N(compiled(x)), N(fn(x)))
    assert compiled.traces == 1
    assert seen == [True, True]
    assert grad_mode.lone_tracer is None


def test_the_liveness_pass_drops_what_nothing_reads_and_frees_each_value_after_its_last_read():
    x = T(np.array([0.5, 1.0, 2.0]))
    tracer = Tracer([x])
    set_feature("tracer", tracer)
    try:
        a = cr.sin(x)
        cr.exp(a)  # read by nothing
        out = cr.tanh(a) * a
        del a  # (kept, it would be a value kept outside: see Tracer._unexplained)
    finally:
        set_feature("tracer", None)
    rec = tracer.finish([out])
    keep, last, frees, _ = _program._analyze(rec, frozenset())
    dropped = [ins for ins, kept in zip(rec.code, keep) if not kept]
    assert len(dropped) == 1 and dropped[0].fn is RULES["exp"].fwd
    freed = [s for free in frees if free for s in free]
    assert len(freed) == len(set(freed))  # each value once
    for i, free in enumerate(frees):
        assert free is None or keep[i]
        for s in free or ():
            assert s not in rec.kinds  # the argument's values are the caller's
            assert last[s] == i  # right after its last read
    # The output is read by the end (len(code)), never freed; sin's result is read last by
    # the multiplication.
    assert last[rec.outputs[0][1]] == len(rec.code)
    assert rec.code[last[rec.code[0].out]].op == _program.FWD2


def _recorded_backward(hooked: bool, monkeypatch) -> tuple:
    """The recording of a backward through nodes of one and two inputs (a saved Python
    number, gradients meeting at a leaf and inside, parameters) and of several outputs, and
    whether the tracer's lean walk ran it; `hooked`: a hook registered on a tensor the walk
    never meets (the walk with hands runs then)."""
    lean = []
    walk = Tracer._lean_walk
    monkeypatch.setattr(Tracer, "_lean_walk", lambda self, *a: lean.append(1) or walk(self, *a))
    x = T(np.array([0.5, 1.0, 2.0]), requires_grad=True)
    y = T(np.array([1.5, -1.0, 0.5]), requires_grad=True)
    other = T(np.ones(2), requires_grad=True)
    handle = other.register_hook(lambda g: g) if hooked else None
    tracer = Tracer([x, y])
    set_feature("tracer", tracer)
    try:
        h = cr.sin(x) * y + x / 2.5
        u, v = cr.unstack(cr.reshape(h * h, (3, 1)), axis=1)[0], cr.exp(h)[1:]
        loss = cr.sum(u) + cr.sum(v * x[:2])
        loss.backward()
        out = loss.detach()
        del h, u, v, loss  # (kept, they would be values kept outside)
    finally:
        set_feature("tracer", None)
        if handle is not None:
            handle.remove()
    rec = tracer.finish([out, x.grad, y.grad])
    return rec.code, [tuple(r) for r in rec.reads], rec.writes, bool(lean)


def test_the_lean_walk_records_what_the_walk_with_hands_records(monkeypatch):
    # No hook anywhere (one that an earlier test left alive would send the walk through
    # the hands): the count of live hooks from here.
    monkeypatch.setattr(STATE, "live_hooks", 0)
    code, reads, writes, lean = _recorded_backward(False, monkeypatch)
    hands = _recorded_backward(True, monkeypatch)
    assert lean and not hands[3]
    assert sum(ins.op == _program.VJP for ins in code) >= 8
    assert code == hands[0] and reads == hands[1] and writes == hands[2]
