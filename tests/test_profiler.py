"""chainrule.autograd.profiler: every operation and backward node becomes an event (with
shapes and memory on request), ranges nest, the table has PyTorch's layout, the Chrome trace
is valid JSON with flows from operations to their backward nodes, and nothing is recorded (or
changed) outside a profile."""

import json

import numpy as np
import pytest

import chainrule as cr
from chainrule._mode import grad_mode
from chainrule.autograd.profiler import (
    EventList,
    FunctionEvent,
    FunctionEventAvg,
    profile,
    record_function,
)
from conftest import BACKEND, N, T


def _step(x, w):
    return cr.tanh(x @ w).sum()


def _leaves():
    x = T(np.arange(12.0).reshape(3, 4) / 10, requires_grad=True)
    w = T(np.linspace(-1, 1, 8).reshape(4, 2), requires_grad=True)
    return x, w


def test_every_operation_and_backward_node_is_an_event_in_order():
    x, w = _leaves()
    with profile() as prof:
        _step(x, w).backward()
    names = [e.name for e in prof.events()]
    assert names == ["matmul", "tanh", "sum", "SumBackward0", "TanhBackward0", "MmBackward0"]
    assert all(isinstance(e, FunctionEvent) for e in prof.events())
    assert all(e.cpu_time_total >= 0 for e in prof.events())


def test_operations_and_their_backward_nodes_share_a_sequence_number():
    x, w = _leaves()
    with profile() as prof:
        y = x * 2.0
        _step(y, w).backward()
    seq = {e.name: e.sequence_nr for e in prof.events()}
    assert seq["multiply"] == seq["MulBackward0"] >= 0
    assert seq["matmul"] == seq["MmBackward0"] >= 0
    assert seq["tanh"] == seq["TanhBackward0"] >= 0
    assert len({seq["multiply"], seq["matmul"], seq["tanh"], seq["sum"]}) == 4


def test_an_operation_that_records_no_node_has_no_sequence_number():
    x = T([1.0, 2.0])
    with profile() as prof:
        cr.sin(x)
    (e,) = prof.events()
    assert e.name == "sin" and e.sequence_nr == -1


def test_a_node_recorded_before_the_profile_has_no_sequence_number():
    x, w = _leaves()
    y = _step(x, w)
    with profile() as prof:
        y.backward()
    assert [e.sequence_nr for e in prof.events()] == [-1, -1, -1]


def test_record_shapes_gives_each_inputs_shape():
    x, w = _leaves()
    with profile(record_shapes=True) as prof:
        (x @ w) * 3.0
    shapes = [e.input_shapes for e in prof.events()]
    assert shapes == [[[3, 4], [4, 2]], [[3, 2], []]]


def test_shapes_are_not_recorded_unless_asked():
    x, w = _leaves()
    with profile() as prof:
        x @ w
    assert prof.events()[0].input_shapes == []


def test_a_backward_nodes_shapes_are_those_of_the_gradients_it_receives():
    x, w = _leaves()
    with profile(record_shapes=True) as prof:
        _step(x, w).backward()
    shapes = {e.name: e.input_shapes for e in prof.events()}
    assert shapes["SumBackward0"] == [[]]
    assert shapes["MmBackward0"] == [[3, 2]]


def test_profile_memory_counts_the_bytes_of_the_arrays_made():
    x, w = _leaves()
    with profile(profile_memory=True) as prof:
        _step(x, w).backward()
    mem = {e.name: e.self_cpu_memory_usage for e in prof.events()}
    assert mem["matmul"] == mem["tanh"] == 3 * 2 * 8
    assert mem["sum"] == 8
    # Mm's gradients: one per input, 3x4 and 4x2 float64 values.
    assert mem["MmBackward0"] == (12 + 8) * 8


@pytest.mark.skipif(BACKEND is not np, reason="NumPy's reshape of a contiguous array is a view")
def test_a_view_takes_no_memory():
    x = T(np.ones((2, 3)), requires_grad=True)
    with profile(profile_memory=True) as prof:
        x.reshape((3, 2))
    assert prof.events()[0].self_cpu_memory_usage == 0


def test_a_range_holds_the_events_inside_it():
    x, w = _leaves()
    with profile(profile_memory=True) as prof:
        with record_function("forward"):
            y = _step(x, w)
        y.backward()
    events = prof.events()
    forward = events[0]
    assert forward.name == "forward" and forward.is_user_annotation
    assert [c.name for c in forward.cpu_children] == ["matmul", "tanh", "sum"]
    assert all(c.cpu_parent is forward for c in forward.cpu_children)
    inner = sum(c.cpu_time_total for c in forward.cpu_children)
    assert forward.self_cpu_time_total == pytest.approx(forward.cpu_time_total - inner)
    assert forward.cpu_time_total >= inner
    assert forward.self_cpu_memory_usage == 0
    assert forward.cpu_memory_usage == 6 * 8 + 6 * 8 + 8
    assert events[-1].cpu_parent is None


def test_record_function_is_a_decorator_and_does_nothing_outside_a_profile():
    @record_function("double")
    def double(t):
        return t * 2.0

    x = T([1.0, 2.0], requires_grad=True)
    np.testing.assert_allclose(N(double(x)), [2.0, 4.0])
    with profile() as prof:
        double(x)
    (outer,) = [e for e in prof.events() if e.cpu_parent is None]
    assert outer.name == "double" and [c.name for c in outer.cpu_children] == ["multiply"]


def test_a_create_graph_backward_records_its_operations_inside_the_nodes_event():
    x = T([0.5, 1.0], requires_grad=True)
    y = cr.sin(x).sum()
    with profile() as prof:
        (g,) = cr.autograd.grad(y, x, create_graph=True)
    node = next(e for e in prof.events() if e.name == "SinBackward0")
    assert "cos" in [c.name for c in node.cpu_children]
    np.testing.assert_allclose(N(g), np.cos([0.5, 1.0]))


def test_key_averages_adds_up_calls_per_name_and_per_shapes():
    a = T(np.ones(3), requires_grad=True)
    b = T(np.ones(4), requires_grad=True)
    with profile(record_shapes=True) as prof:
        for t in (a, a, b):
            cr.exp(t)
    (avg,) = prof.key_averages()
    assert isinstance(avg, FunctionEventAvg)
    assert avg.key == "exp" and avg.count == 3
    assert avg.cpu_time == pytest.approx(avg.cpu_time_total / 3)
    by_shape = {str(e.input_shapes): e.count for e in prof.key_averages(group_by_input_shape=True)}
    assert by_shape == {"[[3]]": 2, "[[4]]": 1}
    assert prof.total_average().count == 3
    assert prof.self_cpu_time_total == pytest.approx(sum(e.cpu_time_total for e in prof.events()))


# PyTorch 2.13's table for a profile_memory run whose longest name is "TanhBackward0" (the
# name column is 4 wider than the longest name): its header and rule lines.
TORCH_RULE = "-----------------  " + "------------  " * 8
TORCH_HEADER = (
    "             Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg"
    "       CPU Mem  Self CPU Mem    # of Calls  "
)


def test_the_table_has_pytorchs_layout():
    x, w = _leaves()
    with profile(profile_memory=True) as prof:
        _step(x, w).backward()
    lines = prof.key_averages().table(sort_by="self_cpu_time_total").splitlines()
    assert lines[0] == lines[2] == lines[-2] == TORCH_RULE
    assert lines[1] == TORCH_HEADER
    assert lines[-1].startswith("Self CPU time total: ")
    rows = lines[3:-2]
    assert len(rows) == 6
    assert rows[0].split()[0] in {"matmul", "tanh", "sum", "SumBackward0", "TanhBackward0"} | {
        "MmBackward0"
    }
    assert all(row.rstrip().endswith(" 1") for row in rows)


def test_the_table_is_sorted_by_the_key_asked_and_limited():
    x = T(np.ones(3), requires_grad=True)
    with profile() as prof:
        for _ in range(3):
            cr.exp(x)
        cr.sin(x)
    rows = prof.key_averages().table(sort_by="count", row_limit=1).splitlines()[3:-2]
    assert len(rows) == 1 and rows[0].split()[0] == "exp" and rows[0].split()[-1] == "3"
    averages = prof.key_averages()
    ordered = sorted(averages, key=lambda e: e.self_cpu_time_total, reverse=True)
    rows = averages.table(sort_by="self_cpu_time_total").splitlines()[3:-2]
    assert [r.split()[0] for r in rows] == [e.key for e in ordered]


def test_the_table_refuses_an_unknown_sort_key():
    x = T([1.0])
    with profile() as prof:
        cr.exp(x)
    with pytest.raises(ValueError, match="sort_by must be one of"):
        prof.key_averages().table(sort_by="cuda_time_total")


def test_the_table_shows_shapes_when_grouped_by_them():
    x, w = _leaves()
    with profile(record_shapes=True) as prof:
        x @ w
    lines = prof.key_averages(group_by_input_shape=True).table().splitlines()
    assert lines[1].rstrip().endswith("Input Shapes")
    assert lines[3].rstrip().endswith("[[3, 4], [4, 2]]")


def test_the_chrome_trace_has_an_event_per_event_and_flows_to_backward_nodes(tmp_path):
    x, w = _leaves()
    with profile(record_shapes=True) as prof:
        with record_function("step"):
            _step(x, w).backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(path)
    trace = json.loads(path.read_text())
    events = trace["traceEvents"]
    complete = [e for e in events if e["ph"] == "X"]
    assert [e["name"] for e in complete] == [e.name for e in prof.events()]
    assert {e["cat"] for e in complete} == {"cpu_op", "user_annotation"}
    for e in complete:
        assert e["dur"] >= 0 and isinstance(e["ts"], float) and {"pid", "tid"} <= set(e)
    by_name = {e["name"]: e for e in complete}
    assert by_name["matmul"]["args"]["Input Dims"] == [[3, 4], [4, 2]]
    starts = {e["id"]: e for e in events if e["ph"] == "s"}
    ends = {e["id"]: e for e in events if e["ph"] == "f"}
    assert (
        set(starts)
        == set(ends)
        == {by_name[n]["args"]["Sequence number"] for n in ("matmul", "tanh", "sum")}
    )
    for seq, end in ends.items():
        assert end["bp"] == "e" and end["cat"] == starts[seq]["cat"] == "fwdbwd"
        forward = next(e for e in complete if e["args"].get("Sequence number") == seq)
        backward = [e for e in complete if e["args"].get("Sequence number") == seq][1]
        assert starts[seq]["ts"] == forward["ts"] and end["ts"] == backward["ts"]
        assert backward["name"].endswith("Backward0")


def test_nothing_is_recorded_and_the_features_are_off_outside_a_profile():
    x, w = _leaves()
    with profile() as prof:
        pass
    assert grad_mode.profiler is None and not grad_mode.extended
    _step(x, w).backward()
    assert isinstance(prof.events(), EventList) and len(prof.events()) == 0


def test_profiling_changes_no_number():
    x, w = _leaves()
    _step(x, w).backward()
    expected = N(x.grad), N(w.grad)
    x.grad = w.grad = None
    with profile(record_shapes=True, profile_memory=True):
        _step(x, w).backward()
    np.testing.assert_array_equal(N(x.grad), expected[0])
    np.testing.assert_array_equal(N(w.grad), expected[1])


def test_a_profile_inside_a_profile_is_refused():
    with profile(), pytest.raises(RuntimeError, match="already enabled"), profile():
        pass
    assert grad_mode.profiler is None


def test_a_disabled_profile_records_nothing_and_has_no_results():
    x = T([1.0])
    with profile(enabled=False) as prof:
        cr.exp(x)
    assert grad_mode.profiler is None
    with pytest.raises(RuntimeError, match="didn't finish"):
        prof.key_averages()


def test_stacks_flops_and_devices_are_not_implemented():
    with pytest.raises(NotImplementedError, match="stacks or FLOPs"):
        profile(with_stack=True)
    with pytest.raises(NotImplementedError, match="host only"):
        profile(use_device="cuda")
    with pytest.raises(NotImplementedError, match="host only"):
        profile(use_cuda=True)


def test_a_range_left_open_by_an_exception_ends_with_the_profile():
    x = T([1.0])
    with pytest.raises(KeyError), profile() as prof:
        r = record_function("open")
        r.__enter__()
        cr.exp(x)
        raise KeyError
    (outer,) = [e for e in prof.events() if e.cpu_parent is None]
    assert outer.name == "open" and outer.cpu_time_total >= outer.cpu_children[0].cpu_time_total


class _Square(cr.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, g):
        (a,) = ctx.saved_tensors
        return 2.0 * a * g


class _Fails(cr.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        a * 2.0
        raise ValueError("forward failed")

    @staticmethod
    def backward(ctx, g):
        return g


def test_a_custom_function_is_a_range_linked_to_its_backward_node():
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    with profile() as prof:
        _Square.apply(x).sum().backward()
    events = {e.name: e for e in prof.events() if e.cpu_parent is None}
    function, backward = events["_Square"], events["_SquareBackward"]
    assert [c.name for c in function.cpu_children] == ["multiply"]
    assert function.sequence_nr == backward.sequence_nr >= 0
    np.testing.assert_allclose(N(x.grad), [2.0, 4.0, 6.0])


def test_a_custom_function_that_raises_closes_its_range():
    x = T([1.0], requires_grad=True)
    with profile() as prof:
        with pytest.raises(ValueError, match="forward failed"):
            _Fails.apply(x)
        cr.exp(x)
    assert [(e.name, e.cpu_parent is None) for e in prof.events()] == [
        ("_Fails", True),
        ("multiply", False),
        ("exp", True),
    ]


def test_an_in_place_write_is_an_event_linked_to_its_backward_node():
    x = T([1.0, 2.0], requires_grad=True)
    with profile() as prof:
        y = x * 1.0
        y.add_(2.0)
        y.sum().backward()
    seq = {e.name: e.sequence_nr for e in prof.events()}
    assert seq["add"] == seq["AddBackward0"] >= 0


def test_a_compiled_function_runs_eagerly_inside_a_profile_and_shows_its_operations():
    x = T([1.0, 2.0], requires_grad=True)

    @cr.compile
    def step(x):
        return (cr.sin(x) * 2.0).sum()

    with profile() as prof:
        for _ in range(2):
            step(x)
    assert step.traces == 0
    assert [e.name for e in prof.events()] == ["sin", "multiply", "sum"] * 2


def test_memory_under_vmap_counts_every_sample():
    x = T(np.ones((4, 3)))
    with profile(profile_memory=True) as prof:
        cr.func.vmap(cr.sin)(x)
    (sin,) = [e for e in prof.events() if e.name == "sin"]
    assert sin.self_cpu_memory_usage == 4 * 3 * 8
