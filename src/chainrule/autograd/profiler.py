"""The profiler, as PyTorch's `torch.autograd.profiler`: `profile` times every operation and
every backward node of its thread (with shapes and memory on request), `record_function` marks
a range; the events print as PyTorch's table and export as a Chrome trace. Operations report
to it through the features of `_mode` (nothing runs for it while no profile is active)."""

from __future__ import annotations

import functools
import itertools
import json
import math
import os
import threading
import weakref
from collections.abc import Callable, Iterable
from time import perf_counter_ns
from typing import Any, TypeVar

from .. import _backend
from .._batching import every_sample
from .._mode import grad_mode, set_feature
from .._node import node_of
from .._tensor import Tensor

__all__ = [
    "profile",
    "record_function",
    "EventList",
    "FunctionEvent",
    "FunctionEventAvg",
]

_F = TypeVar("_F", bound=Callable[..., Any])

# The keys `table(sort_by=...)` accepts, as PyTorch's (device columns excepted: chainrule
# times the host).
SORT_KEYS = (
    "cpu_time_total",
    "self_cpu_time_total",
    "cpu_time",
    "count",
    "cpu_memory_usage",
    "self_cpu_memory_usage",
)


class Interval:
    """The start and end of an event, in microseconds since its profile began."""

    __slots__ = ("start", "end")

    def __init__(self, start: float, end: float) -> None:
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        """The event's duration in microseconds."""
        return self.end - self.start


class FunctionEvent:
    """One timed event: an operation (`cpu_op`: a primitive's forward, named by the primitive,
    or a backward node, named as its grad_fn), or a `record_function` range
    (`user_annotation`). Times are in microseconds; memory in bytes (`profile_memory`).

    sequence_nr: the number an operation that recorded a node shares with that node's
    backward event (-1 for the others), as PyTorch's. input_shapes: per input, its shape as a
    list ([] for a Python number), when `record_shapes`; a backward node's inputs are the
    gradients it receives."""

    def __init__(self, id: int, name: str, category: str, thread: int, start_ns: int) -> None:
        self.id = id
        self.name = name
        self.category = category
        self.thread = thread
        self._start_ns = start_ns
        self._end_ns = start_ns
        self.input_shapes: list = []
        self.sequence_nr = -1
        self.self_cpu_memory_usage = 0
        self.cpu_memory_usage = 0  # its children's included: set when the profile ends
        self.cpu_parent: FunctionEvent | None = None
        self.cpu_children: list[FunctionEvent] = []
        self.time_range = Interval(0.0, 0.0)

    @property
    def key(self) -> str:
        """The name events are grouped by in key_averages."""
        return self.name

    @property
    def count(self) -> int:
        """1: one call (FunctionEventAvg counts several)."""
        return 1

    @property
    def is_user_annotation(self) -> bool:
        """Whether the event is a record_function range."""
        return self.category == "user_annotation"

    @property
    def cpu_time_total(self) -> float:
        """The event's duration in microseconds, its children's included."""
        return self.time_range.elapsed_us()

    @property
    def cpu_time(self) -> float:
        """The same as cpu_time_total for one event."""
        return self.cpu_time_total

    @property
    def self_cpu_time_total(self) -> float:
        """The event's duration less its children's, in microseconds."""
        return self.cpu_time_total - sum(c.cpu_time_total for c in self.cpu_children)

    def __repr__(self) -> str:
        return (
            f"<FunctionEvent id={self.id} name={self.name} cpu_time_total="
            f"{_format_time(self.cpu_time_total)} sequence_nr={self.sequence_nr} "
            f"input_shapes={self.input_shapes}>"
        )


class FunctionEventAvg:
    """The events of one key (a name, or a name and input shapes) added up, as key_averages
    gives them: count, total and self times (microseconds), memory (bytes)."""

    def __init__(self, key: str, input_shapes: list | None) -> None:
        self.key = key
        self.input_shapes = input_shapes
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.cpu_parent = None

    @property
    def cpu_time(self) -> float:
        """The average duration of one call, in microseconds."""
        return self.cpu_time_total / self.count if self.count else 0.0

    def add(self, e: FunctionEvent | FunctionEventAvg) -> FunctionEventAvg:
        """Add an event (or another average) into this one; returns self."""
        self.count += e.count
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total
        self.cpu_memory_usage += e.cpu_memory_usage
        self.self_cpu_memory_usage += e.self_cpu_memory_usage
        return self

    def __repr__(self) -> str:
        return (
            f"<FunctionEventAvg key={self.key} count={self.count} cpu_time_total="
            f"{_format_time(self.cpu_time_total)}>"
        )


class EventList(list):
    """A list of FunctionEvent (or of FunctionEventAvg, from key_averages) that prints as
    PyTorch's table."""

    def __init__(self, events: Iterable = (), profile_memory: bool = False) -> None:
        super().__init__(events)
        self._profile_memory = profile_memory

    @property
    def self_cpu_time_total(self) -> float:
        """The self times of the events added up, in microseconds."""
        return sum(e.self_cpu_time_total for e in self)

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """The events added up per name (and per input shapes when `group_by_input_shape`),
        in the order each key first appears."""
        groups: dict = {}
        for e in self:
            shapes = e.input_shapes if group_by_input_shape else None
            key = (e.key, str(shapes)) if group_by_input_shape else e.key
            avg = groups.get(key)
            if avg is None:
                avg = groups[key] = FunctionEventAvg(e.key, shapes)
            avg.add(e)
        return EventList(groups.values(), self._profile_memory)

    def total_average(self) -> FunctionEventAvg:
        """Every event added up, under the key 'Total'."""
        total = FunctionEventAvg("Total", None)
        for e in self:
            total.add(e)
        return total

    def table(
        self,
        sort_by: str | None = None,
        row_limit: int = 100,
        max_name_column_width: int = 55,
        max_shapes_column_width: int = 80,
        header: str | None = None,
        top_level_events_only: bool = False,
    ) -> str:
        """The events as PyTorch prints them: one row each (the first `row_limit`), sorted
        by `sort_by` (one of SORT_KEYS, largest first), then the total self time."""
        return _table(
            self,
            sort_by,
            row_limit,
            max_name_column_width,
            max_shapes_column_width,
            header,
            top_level_events_only,
            self._profile_memory,
        )

    def export_chrome_trace(self, path: str | os.PathLike) -> None:
        """Write the events as a Chrome trace (the JSON trace event format that Perfetto and
        chrome://tracing read): one complete event per event, and a flow from each operation
        that recorded a node to that node's backward event."""
        with open(path, "w") as f:
            json.dump(_chrome_trace(self), f)


class profile:
    """Profile the operations of this thread while active (context manager): each
    primitive's forward and each backward node becomes a FunctionEvent, and
    `record_function` ranges hold the events inside them.

    An operation's time runs from the end of the previous event of the profile (or the
    start of an enclosing range) to the end of the operation: it includes the Python that ran
    between them (the calling code, argument conversion), which is most of a small
    operation's cost. A backward node's time is its VJP's.

    :param enabled: False makes the profile do nothing.
    :param record_shapes: record the shapes of each event's inputs.
    :param profile_memory: record the bytes of the arrays each event makes: an operation's
        results (a view's, which shares its input's memory, count none), a backward node's
        gradients. Memory freed is not counted.
    :param with_stack: not implemented (True raises NotImplementedError).
    :param with_flops: not implemented (True raises NotImplementedError).
    :param use_cuda: not implemented (True raises NotImplementedError).
    :param use_device: None or "cpu": the profiler times the host.

    >>> import chainrule as cr
    >>> from chainrule.autograd.profiler import profile
    >>> x = cr.ones(3).requires_grad_()
    >>> with profile() as prof:
    ...     (x * 2).sum().backward()
    >>> [(e.key, e.count) for e in prof.key_averages()]
    [('multiply', 1), ('sum', 1), ('SumBackward0', 1), ('MulBackward0', 1)]"""

    def __init__(
        self,
        enabled: bool = True,
        *,
        record_shapes: bool = False,
        profile_memory: bool = False,
        with_stack: bool = False,
        with_flops: bool = False,
        use_cuda: bool = False,
        use_device: str | None = None,
    ) -> None:
        if use_cuda:
            use_device = "cuda"
        if with_stack or with_flops:
            raise NotImplementedError(
                "chainrule's profiler does not record stacks or FLOPs (with_stack, with_flops)"
            )
        if use_device not in (None, "cpu"):
            raise NotImplementedError(
                f"chainrule's profiler times the host only, not {use_device!r} kernels"
            )
        self.enabled = enabled
        self.record_shapes = record_shapes
        self.profile_memory = profile_memory
        self.function_events: EventList | None = None
        self._events: list[FunctionEvent] = []
        self._stack: list[FunctionEvent] = []
        self._ids = itertools.count()
        self._seqs = itertools.count()
        self._node_seq: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self._thread = threading.get_native_id()
        self._origin = self._mark = 0
        self._running = False
        self._entering = False

    def __enter__(self) -> profile:
        if not self.enabled:
            return self
        if grad_mode.profiler is not None:
            raise RuntimeError("Profiler is already enabled on this thread")
        self._thread = threading.get_native_id()
        self._origin = self._mark = perf_counter_ns()
        self._running = True
        set_feature("profiler", self)
        return self

    def __exit__(self, *exc: object) -> None:
        if not self._running:
            return
        set_feature("profiler", None)
        self._running = False
        end = perf_counter_ns()
        while self._stack:  # ranges left open by an exception end here
            self._close(self._stack[-1], end)
        # A range comes before the events inside it: read backwards, children come first.
        for e in reversed(self._events):
            e.time_range = Interval(
                (e._start_ns - self._origin) / 1000, (e._end_ns - self._origin) / 1000
            )
            e.cpu_memory_usage = e.self_cpu_memory_usage + sum(
                c.cpu_memory_usage for c in e.cpu_children
            )
        self.function_events = EventList(self._events, self.profile_memory)

    # ------------------------------------------------------------------ recording

    def _add(self, e: FunctionEvent) -> None:
        if self._stack:
            parent = self._stack[-1]
            e.cpu_parent = parent
            parent.cpu_children.append(e)
        self._events.append(e)

    def _open(self, name: str, category: str) -> FunctionEvent:
        now = perf_counter_ns()
        e = FunctionEvent(next(self._ids), name, category, self._thread, now)
        self._add(e)
        self._stack.append(e)
        self._mark = now
        return e

    def _close(self, e: FunctionEvent, end: int) -> None:
        stack = self._stack
        while stack:
            top = stack.pop()
            top._end_ns = end
            if top is e:
                break
        self._mark = end

    def operation(self, rule, xs, outs, p, results) -> None:
        """Record an operation that just ran (called by the operation's features)."""
        end = perf_counter_ns()
        e = FunctionEvent(next(self._ids), rule.name, "cpu_op", self._thread, self._mark)
        e._end_ns = end
        if self.record_shapes:
            e.input_shapes = [list(x.shape) if x.__class__ is Tensor else [] for x in xs]
        if self.profile_memory:
            x = xs[0]
            shared = (
                rule.view and x.__class__ is Tensor and _backend.shares_memory(outs[0], x._data)
            )
            e.self_cpu_memory_usage = 0 if shared else sum(_nbytes(o) for o in outs)
        edge = results[0]._edge
        if edge is not None:  # the operation recorded a node: they share a number
            e.sequence_nr = seq = next(self._seqs)
            self._node_seq[node_of(edge)] = seq
        self._add(e)
        self._mark = perf_counter_ns()

    def backward_node(self, apply: Callable) -> Callable:
        """`apply(node, g, backend, xp, create_graph)` (the engine's runner of a node's VJP),
        timed as the node's event."""

        def timed(node, g, backend, xp, create_graph):
            e = self._open(node.name(), "cpu_op")
            e.sequence_nr = self._node_seq.get(node, -1)
            many = node.rule.multi
            if self.record_shapes:
                e.input_shapes = [_shape(gi) for gi in (g if many else (g,))]
            try:
                gins = apply(node, g, backend, xp, create_graph)
            finally:
                self._close(e, perf_counter_ns())
            if self.profile_memory and not create_graph:  # (else its operations count)
                e.self_cpu_memory_usage = sum(_nbytes(gi) for gi in gins)
            return gins

        return timed

    def entering(self) -> bool:
        """Whether Function.apply is called by `function` (once: the flag is then reset)."""
        entering = self._entering
        self._entering = False
        return entering

    def function(self, cls, args: tuple) -> Any:
        """`cls.apply(*args)` for a custom autograd.Function, as a range named by the class
        that holds the operations of its forward, sharing a sequence number with the node it
        records (as PyTorch's profiler shows a Function)."""
        e = self._open(cls.__name__, "cpu_op")
        self._entering = True
        try:
            result = cls.apply(*args)
        finally:
            self._entering = False
            self._close(e, perf_counter_ns())
        for out in result if isinstance(result, tuple) else (result,):
            edge = getattr(out, "_edge", None) if out.__class__ is Tensor else None
            if edge is not None:
                node = node_of(edge)
                if node.name() == cls.__name__ + "Backward" and node not in self._node_seq:
                    e.sequence_nr = seq = next(self._seqs)
                    self._node_seq[node] = seq
                break
        return result

    # ------------------------------------------------------------------ results

    def _finished(self) -> EventList:
        if self.function_events is None:
            raise RuntimeError("Profiler didn't finish running")
        return self.function_events

    def events(self) -> EventList:
        """The events recorded, in the order they ended or began (ranges when they began)."""
        return self._finished()

    def key_averages(self, group_by_input_shape: bool = False) -> EventList:
        """The events added up per name (and per input shapes when `group_by_input_shape`)."""
        return self._finished().key_averages(group_by_input_shape)

    def total_average(self) -> FunctionEventAvg:
        """Every event added up."""
        return self._finished().total_average()

    @property
    def self_cpu_time_total(self) -> float:
        """The self times of every event added up, in microseconds."""
        return self._finished().self_cpu_time_total

    def table(self, sort_by: str | None = None, row_limit: int = 100, **kwargs: Any) -> str:
        """The events' table (see EventList.table), one row per event."""
        return self._finished().table(sort_by=sort_by, row_limit=row_limit, **kwargs)

    def export_chrome_trace(self, path: str | os.PathLike) -> None:
        """Write the events as a Chrome trace (see EventList.export_chrome_trace)."""
        self._finished().export_chrome_trace(path)

    def __str__(self) -> str:
        return self.table()


class record_function:
    """Mark a range (context manager or decorator): while a profile is active in this
    thread, the events inside it become its children, under the name given.

    :param name: the range's name in the table and the trace.
    :param args: ignored (PyTorch's optional string for the range's record)."""

    def __init__(self, name: str, args: str | None = None) -> None:
        self.name = name
        self.args = args
        self._event: list[tuple[profile, FunctionEvent] | None] = []

    def __enter__(self) -> record_function:
        prof = grad_mode.profiler
        self._event.append(
            None if prof is None else (prof, prof._open(self.name, "user_annotation"))
        )
        return self

    def __exit__(self, *exc: object) -> None:
        opened = self._event.pop()
        if opened is not None:
            prof, e = opened
            if prof._running:
                prof._close(e, perf_counter_ns())

    def __call__(self, fn: _F) -> _F:
        name = self.name

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with record_function(name):
                return fn(*args, **kwargs)

        return wrapper  # type: ignore[return-value]


# ----------------------------------------------------------------------------- helpers


def _array(v):
    return v._data if v.__class__ is Tensor else v


def _shape(v) -> list:
    """A gradient's shape as a list ([] for none)."""
    v = _array(v)
    shape = getattr(v, "shape", None)
    return [] if shape is None else list(shape)


def _nbytes(v) -> int:
    """The bytes of an array's values (0 for none, or for a lazy array of unknown size); a
    vmap Batched value's, all of its samples."""
    v = every_sample(_array(v))
    shape = getattr(v, "shape", None)
    if shape is None:
        return 0
    n = math.prod(shape)
    if n != n:  # an unknown (NaN) size: a lazy array's
        return 0
    return int(n) * _backend.from_backend_dtype(v.dtype).itemsize


def _format_time(us: float) -> str:
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


def _format_share(us: float, total: float) -> str:
    if total == 0:
        return "NaN"
    return f"{us * 100.0 / total:.2f}%"


def _format_memory(nbytes: int) -> str:
    for unit, size in (("GB", 1 << 30), ("MB", 1 << 20), ("KB", 1 << 10)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def _table(
    events,
    sort_by,
    row_limit,
    max_name_width,
    max_shapes_width,
    header,
    top_level_only,
    profile_memory,
) -> str:
    """PyTorch's layout: a name column, right-aligned columns 12 wide, two spaces apart, a
    rule of dashes above and below the header and below the rows."""
    if not events:
        return ""
    if sort_by is not None:
        if sort_by not in SORT_KEYS:
            raise ValueError(f"sort_by must be one of {', '.join(SORT_KEYS)}, not {sort_by!r}")
        events = sorted(events, key=lambda e: getattr(e, sort_by), reverse=True)
    name_width = min(max(len(e.key) for e in events) + 4, max_name_width)
    has_shapes = any(e.input_shapes for e in events)
    shapes_width = min(max(len(str(e.input_shapes)) for e in events) + 4, max_shapes_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    if has_shapes:
        headers.append("Input Shapes")
        widths.append(shapes_width)
    row_format = "".join("{:>" + str(w) + "}  " for w in widths)
    rule = "".join("-" * w + "  " for w in widths)
    line_length = sum(w + 2 for w in widths) - 2
    total = sum(e.self_cpu_time_total for e in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [rule, row_format.format(*headers), rule]
    shown = 0
    for e in events:
        if shown == row_limit:
            break
        if top_level_only and e.cpu_parent is not None:
            continue
        shown += 1
        name = e.key
        if len(name) >= max_name_width - 3:
            name = name[: max_name_width - 3] + "..."
        row = [
            name,
            _format_share(e.self_cpu_time_total, total),
            _format_time(e.self_cpu_time_total),
            _format_share(e.cpu_time_total, total),
            _format_time(e.cpu_time_total),
            _format_time(e.cpu_time),
        ]
        if profile_memory:
            row += [_format_memory(e.cpu_memory_usage), _format_memory(e.self_cpu_memory_usage)]
        row.append(e.count)
        if has_shapes:
            shapes = str(e.input_shapes)
            if len(shapes) >= max_shapes_width - 3:
                shapes = shapes[: max_shapes_width - 3] + "..."
            row.append(shapes)
        lines.append(row_format.format(*row))
    lines += [rule, f"Self CPU time total: {_format_time(total)}"]
    return "\n".join(lines) + "\n"


def _chrome_trace(events) -> dict:
    """The events in the JSON trace event format (times in microseconds): complete events
    ("X"), and flow events ("s" at an operation, "f" at its node's backward event) that join
    each operation to its backward by their sequence number, as PyTorch's trace does."""
    pid = os.getpid()
    trace: list[dict] = [
        {"ph": "M", "name": "process_name", "pid": pid, "tid": 0, "args": {"name": "python"}}
    ]
    threads = sorted({e.thread for e in events})
    for tid in threads:
        trace.append(
            {
                "ph": "M",
                "name": "thread_name",
                "pid": pid,
                "tid": tid,
                "args": {"name": f"thread {tid}"},
            }
        )
    # An operation's event comes before its node's backward events (it ends before its node
    # can run): the first event of a number starts the flow, the later ones end it.
    started: set = set()
    for e in events:
        args: dict[str, Any] = {}
        if e.sequence_nr >= 0:
            args["Sequence number"] = e.sequence_nr
        if e.input_shapes:
            args["Input Dims"] = e.input_shapes
        if e.self_cpu_memory_usage:
            args["Bytes"] = e.self_cpu_memory_usage
        start = e.time_range.start
        trace.append(
            {
                "ph": "X",
                "cat": e.category,
                "name": e.name,
                "pid": pid,
                "tid": e.thread,
                "ts": start,
                "dur": e.time_range.elapsed_us(),
                "args": args,
            }
        )
        seq = e.sequence_nr
        if seq < 0:
            continue
        flow = {
            "id": seq,
            "pid": pid,
            "tid": e.thread,
            "ts": start,
            "cat": "fwdbwd",
            "name": "fwdbwd",
        }
        if seq in started:
            trace.append({"ph": "f", "bp": "e", **flow})
        else:
            started.add(seq)
            trace.append({"ph": "s", **flow})
    return {"traceEvents": trace, "displayTimeUnit": "ms", "schemaVersion": 1}
