"""How an operation reaches compile's tracer: while the trace is the only feature on,
`grad_mode.extended` is the tracer and the one- and two-input fast paths hand it their
operands (Tracer.unary, Tracer.binary), one instruction each, on the slots it keeps."""

import numpy as np

import chainrule as cr
from chainrule._compile._instructions import FWD1, FWD2, VJP
from chainrule._compile._trace import CONST, EXTERNAL, INPUT, Tracer
from chainrule._mode import grad_mode, set_feature
from conftest import N, T


def test_extended_is_the_lone_tracer_and_true_while_another_feature_is_on():
    x = T([0.5, 1.0])
    tracer = Tracer([x])
    set_feature("tracer", tracer)
    try:
        seen = [grad_mode.extended is tracer]
        with cr.autograd.detect_anomaly():
            seen.append(grad_mode.extended is True)
        seen.append(grad_mode.extended is tracer)
    finally:
        set_feature("tracer", None)
    assert seen == [True, True, True]
    assert grad_mode.extended is False


def test_the_fast_paths_record_one_instruction_per_operation_on_the_tracers_slots():
    x = T([0.5, 1.0, 2.0], requires_grad=True)
    c = T([2.0, 3.0, 4.0])  # from outside: an external slot
    tracer = Tracer([x])
    set_feature("tracer", tracer)
    try:
        s = cr.sin(x)
        m = s * 2.0
        y = m + c
        z = 3.0 - y  # a number on the left
    finally:
        set_feature("tracer", None)
    sin, mul, add, sub = tracer.code
    assert [ins.op for ins in tracer.code] == [FWD1, FWD2, FWD2, FWD2]
    assert tracer.kinds[sin.x] == INPUT
    assert (mul.x, tracer.kinds[mul.y], tracer.values[mul.y]) == (sin.out, CONST, 2.0)
    assert add.x == mul.out and tracer.kinds[add.y] == EXTERNAL
    assert tracer.values[add.y] is c._data
    assert (tracer.kinds[sub.x], tracer.values[sub.x], sub.y) == (CONST, 3.0, add.out)
    assert tracer.reads == [(sin.x,), (sin.out, mul.y), (mul.out, add.y), (sub.x, add.out)]
    assert tracer.writes == [sin.out, mul.out, add.out, sub.out]
    outs = [tracer.values[ins.out] for ins in tracer.code]
    assert all(a is t._data for a, t in zip(outs, (s, m, y, z)))
    # The nodes made inside are the trace's (a backward may walk them), by identity.
    assert {t.grad_fn for t in (s, m, y, z)} <= tracer.nodes


def test_a_detached_twin_of_a_tensor_from_outside_reads_that_tensor_at_each_call():
    c = T([1.0, 2.0, 3.0])

    def fn(x):
        return x * c.detach() + c

    compiled = cr.compile(fn)
    x = T([0.5, -1.0, 2.0])
    np.testing.assert_array_equal(N(compiled(x)), N(fn(x)))
    with cr.no_grad():
        c.mul_(3.0)
    np.testing.assert_array_equal(N(compiled(x)), N(fn(x)))
    assert compiled.traces == 1


def test_a_number_an_operation_saved_is_read_by_its_backward_from_the_forwards_slot():
    # x * 2.5 saves the number for its backward: the recorded VJP reads the slot the
    # forward made for it, not a second constant (Tracer.const finds a number by its object).
    x = T([0.5, 1.0, 2.0], requires_grad=True)
    tracer = Tracer([x])
    set_feature("tracer", tracer)
    try:
        y = cr.sum(x * 2.5)
        y.backward()
    finally:
        set_feature("tracer", None)
    mul = tracer.code[0]
    vjps = [ins for ins in tracer.code if ins.op == VJP and mul.y in (ins.saved or ())]
    assert mul.op == FWD2 and tracer.kinds[mul.y] == CONST and tracer.values[mul.y] == 2.5
    assert len(vjps) == 1
    numbers = [s for s, k in tracer.kinds.items() if k == CONST and tracer.values[s] == 2.5]
    assert numbers == [mul.y]
    np.testing.assert_array_equal(N(x.grad), [2.5, 2.5, 2.5])
