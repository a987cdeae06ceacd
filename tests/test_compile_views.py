"""chainrule.compile of functions that write through views and aliases (detach(), .data): the
replay makes the writes in its own arrays, which share memory as the traced ones did, and
rebases the base's history (CopySlices) as eager execution does. The random programs of
tests/test_views.py run as compiled training steps against eager execution: values,
.grad and versions at every call; what can't be replayed runs eagerly, with a
CompileWarning."""

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import CompileWarning
from chainrule._compile import _program
from conftest import LIBRARY, N, T
from test_views import PROGRAMS, Chainrule, _differs_here, loss_of, run

pytestmark = pytest.mark.skipif(
    LIBRARY in ("jax", "dask"), reason="writes to shared memory replay on mutable arrays only"
)


@pytest.fixture(autouse=True)
def source_early(monkeypatch):
    """Programs become source after one replay, so that a few calls run both tiers."""
    monkeypatch.setattr(_program, "SOURCE_AFTER", 1)


class _Given(Chainrule):
    """chainrule's operations, with the leaf given (the compiled function's argument)."""

    def __init__(self, x):
        self.x = x

    def leaf(self, values):
        return self.x


def _step(program, weights):
    """A training step that runs `program` on its argument x: the loss's value, and a copy
    of every value (copies: a returned view would share memory with another output)."""

    def step(x):
        _, values, _ = run(_Given(x), program, None)
        loss = loss_of(Chainrule, values, weights)
        loss.backward()
        return loss.detach(), [None if v is None else v.detach() * 1.0 for v in values]

    return step


def _same(got, want):
    (loss, values), (loss_e, values_e) = got, want
    np.testing.assert_array_equal(N(loss), N(loss_e))
    for v, e in zip(values, values_e):
        assert (v is None) == (e is None)
        if v is not None:
            np.testing.assert_array_equal(N(v), N(e))


def _calls(case, seed):
    """The leaves' values of four calls: the recorded one, then others."""
    rng = np.random.default_rng(seed)
    x0 = np.asarray(case["x"])
    return [x0] + [rng.uniform(-1.0, 1.0, x0.shape) for _ in range(3)]


def _compare(case, seed) -> bool:
    """Run the program compiled and eagerly over several calls, comparing; whether the
    compiled function replayed (else it ran eagerly, with a CompileWarning)."""
    step = _step(case["program"], case["weights"])
    compiled = cr.compile(step)
    fell_back = False
    for values in _calls(case, seed):
        x, x_e = T(values, requires_grad=True), T(values, requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CompileWarning)
            try:
                got, error = compiled(x), None
            except RuntimeError as e:
                got, error = None, str(e)
        fell_back |= any(w.category is CompileWarning for w in caught)
        try:
            want, error_e = step(x_e), None
        except RuntimeError as e:
            want, error_e = None, str(e)
        assert error == error_e
        if error is None:
            _same(got, want)
        assert (x.grad is None) == (x_e.grad is None)
        if x.grad is not None:
            np.testing.assert_array_equal(N(x.grad), N(x_e.grad))
        assert x._version == x_e._version
    return not fell_back and compiled.traces == 1


CASES = [i for i, case in enumerate(PROGRAMS) if _differs_here(case["program"]) is None]


@pytest.mark.parametrize("index", CASES, ids=str)
def test_random_view_programs_compiled_equal_eager(index):
    _compare(PROGRAMS[index], index)


def test_most_random_view_programs_replay():
    # Those whose writes are recorded into memory an argument shares run eagerly.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        replayed = sum(_compare(PROGRAMS[i], i) for i in CASES[:60])
    assert replayed >= 42  # 48 when written


# ----------------------------------------------------------------------------- one by one


def _replays(fn, *calls):
    """fn compiled, called with each argument tuple in turn (no CompileWarning), equals fn."""
    compiled = cr.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        for args in calls:
            got, want = compiled(*args[0]), fn(*args[1])
            for g, w in zip(got, want):
                np.testing.assert_array_equal(N(g), N(w))
    assert compiled.traces == 1


def test_a_write_through_a_view_is_replayed_with_its_gradient():
    def step(x):
        y = x * 1.0
        v = y[0:2]
        v *= 2.0
        cr.sum(y * y).backward()
        return y.detach() * 1.0, x.grad

    calls = []
    for values in ([1.0, 2.0, 3.0], [0.5, -1.0, 4.0], [2.0, 0.0, -3.0]):
        calls.append(tuple((T(values, requires_grad=True),) for _ in range(2)))
    _replays(step, *calls)
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    y, g = cr.compile(step)(x)
    assert N(y).tolist() == [2.0, 4.0, 3.0]
    assert N(g).tolist() == [8.0, 16.0, 6.0]


def test_a_write_to_the_base_is_seen_by_its_view_in_a_replay():
    def fn(x):
        y = x * 1.0
        tail = y[1:]
        y *= x
        return (tail * 1.0,)

    calls = [((T([1.0, 2.0, 3.0]),), (T([1.0, 2.0, 3.0]),)), ((T([2.0, 3.0, 4.0]),),) * 2]
    _replays(fn, *calls)


def test_writes_through_detach_and_data_under_no_grad_are_replayed():
    def fn(x):
        y = x * 1.0
        with cr.no_grad():
            d = y.detach()
            d[0] = 5.0
            y.data[1:] *= 3.0
        return (y * 1.0,)

    calls = [((T([1.0, 2.0, 3.0]),),) * 2, ((T([4.0, 5.0, 6.0]),),) * 2]
    _replays(fn, *calls)


def test_a_view_written_with_a_value_that_needs_grad_routes_its_gradient():
    w = T([0.5, -1.0], requires_grad=True)
    w_e = T([0.5, -1.0], requires_grad=True)

    def make(w):
        def step(x):
            y = x * 1.0
            y[1:3].copy_(w * x[0:2])
            cr.sum(y * y).backward()
            return (y.detach() * 1.0,)

        return step

    compiled = cr.compile(make(w))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        for values in ([1.0, 2.0, 3.0], [-1.0, 0.5, 2.0], [2.0, -2.0, 1.0]):
            got, want = compiled(T(values)), make(w_e)(T(values))
            np.testing.assert_array_equal(N(got[0]), N(want[0]))
            np.testing.assert_array_equal(N(w.grad), N(w_e.grad))
    assert compiled.traces == 2  # w.grad was None, then a tensor (accumulated into)


def test_a_write_through_a_view_of_an_argument_is_replayed_on_the_argument():
    def fn(x):
        with cr.no_grad():
            x[0:1] *= 2.0  # the view's write, then `x[0:1] =` it: two versions
        return (x * 1.0,)

    compiled = cr.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        for values in ([1.0, 2.0], [3.0, -1.0], [0.5, 0.5]):
            x, x_e = T(values), T(values)
            got, want = compiled(x), fn(x_e)
            np.testing.assert_array_equal(N(got[0]), N(want[0]))
            np.testing.assert_array_equal(N(x), N(x_e))
            assert x._version == x_e._version == 2
    assert compiled.traces == 1


def test_a_training_step_that_updates_a_parameter_through_data_is_replayed():
    def make():
        p = T([0.5, -1.0, 2.0], requires_grad=True)

        def step(x):
            loss = cr.sum((p * x) ** 2)
            loss.backward()
            p.data -= 0.1 * p.grad  # the classic update, through .data
            p.grad = None
            return loss.detach()

        return p, step

    (p, step), (p_e, eager) = make(), make()
    compiled = cr.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        for i in range(4):
            x = T(np.arange(3.0) + i)
            np.testing.assert_array_equal(N(compiled(x)), N(eager(x)))
            np.testing.assert_array_equal(N(p.detach()), N(p_e.detach()))
            assert p._version == p_e._version
    assert compiled.traces == 1


def test_a_write_through_a_view_of_a_constant_made_inside_starts_from_the_constant():
    def fn(x):
        buf = cr.zeros(3)
        buf[0:2].copy_(x)
        tail = buf[1:]
        tail *= 3.0
        return (buf * 1.0,)

    calls = [((T([1.0, 2.0]),),) * 2, ((T([2.0, 4.0]),),) * 2, ((T([3.0, 6.0]),),) * 2]
    _replays(fn, *calls)


def test_a_write_through_detach_of_an_argument_runs_eagerly_with_a_warning():
    # detach() gives the argument's own array object: no slot stands for it alone.
    def fn(x):
        with cr.no_grad():
            d = x.detach()
            d *= 2.0
        return x * 1.0

    compiled = cr.compile(fn)
    with pytest.warns(CompileWarning, match="with an argument"):
        compiled(T([1.0, 2.0]))
    x = T([1.0, 2.0])
    out = compiled(x)
    assert N(x).tolist() == N(out).tolist() == [2.0, 4.0]
    assert x._version == 1


def test_a_recorded_write_into_memory_an_argument_shares_runs_eagerly_with_a_warning():
    w = T([2.0], requires_grad=True)

    def fn(x):
        v = x[0:1]
        v *= w  # v needs no grad, w does: the write is recorded
        return x * 1.0

    compiled = cr.compile(fn)
    with pytest.warns(CompileWarning, match="with an argument"):
        compiled(T([1.0, 2.0]))
    out = compiled(T([1.0, 2.0]))
    assert N(out).tolist() == [2.0, 2.0]


def test_returning_two_tensors_that_share_written_memory_runs_eagerly_with_a_warning():
    def fn(x):
        y = x * 1.0
        v = y[0:1]
        v *= 2.0
        return y, v

    compiled = cr.compile(fn)
    with pytest.warns(CompileWarning, match="share memory"):
        compiled(T([1.0, 2.0]))
    y, v = compiled(T([1.0, 2.0]))
    v *= 3.0  # still eager: the two share memory
    assert N(y).tolist() == [6.0, 2.0]
