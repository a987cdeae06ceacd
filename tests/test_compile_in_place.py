"""chainrule.compile's replays write a NumPy ufunc's result into an input that dies there
(`_program._in_place`): the same values as eager execution, bit for bit, in both tiers, and
never into an array that something else still reads (a returned value, a view of it, a
value saved for the backward, one whose layout or shape differs from the trace's)."""

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import CompileWarning
from chainrule._compile import _program, _trace
from conftest import LIBRARY, N, T

RNG = np.random.default_rng(7)
numpy_only = pytest.mark.skipif(LIBRARY != "numpy", reason="writes into inputs on NumPy only")


@pytest.fixture(autouse=True)
def source_early(monkeypatch):
    """Programs become source after one replay, so that a few calls run both tiers; results
    of any size are written into inputs."""
    monkeypatch.setattr(_program, "SOURCE_AFTER", 1)
    monkeypatch.setattr(_trace, "IN_PLACE_BYTES", 0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        yield


@pytest.fixture
def writes(monkeypatch):
    """The calls of the ufuncs that write into an input, counted per tier (each ufunc of
    _UFUNCS wrapped: compiles made after this fixture use the wrappers)."""
    counts = {"loop": 0, "source": 0}
    tier = {"now": "loop"}

    def counted(ufunc):
        def call(*args):
            counts[tier["now"]] += 1
            return ufunc(*args)

        return call

    wrapped = {fn: counted(ufunc) for fn, ufunc in _program._UFUNCS.items()}
    monkeypatch.setattr(_program, "_UFUNCS", wrapped)
    return counts, tier


def _same(got, want) -> None:
    for g, w in zip(got, want):
        np.testing.assert_array_equal(N(g), N(w))
        assert N(g).dtype == N(w).dtype


def _compare(fn, calls, tensor=T) -> None:
    """fn compiled against fn eager over the calls (tuples of NumPy arrays, made tensors by
    `tensor` for each)."""
    compiled = cr.compile(fn)
    for args in calls:
        got = compiled(*[tensor(a) for a in args])
        want = fn(*[tensor(a) for a in args])
        _same(got, want)


def _values(*shape):
    return RNG.normal(size=shape).astype(np.float32)


@numpy_only
def test_ufunc_results_are_written_into_inputs_that_die_in_both_tiers(writes):
    counts, tier = writes

    def f(x, b):
        h = cr.tanh(x * 2.0 + b)  # x * 2.0 dies at + b, the sum at tanh
        return cr.sqrt(h * h + 1.0)

    compiled = cr.compile(f)
    data = [(_values(4, 3), _values(3)) for _ in range(4)]
    for k, (x, b) in enumerate(data):
        tier["now"] = "loop" if k < 2 else "source"
        got = compiled(cr.asarray(x), cr.asarray(b))
        np.testing.assert_array_equal(N(got), N(f(cr.asarray(x), cr.asarray(b))))
    assert "REFS(" in "".join(compiled.source())
    # Per replay: + b, tanh, h * h, + 1.0, sqrt (x * 2.0 reads an argument).
    assert counts == {"loop": 5, "source": 10}


def test_a_returned_intermediate_is_not_overwritten():
    def f(x):
        a = x * 2.0
        b = a + 1.0
        return a, cr.tanh(b) * 3.0

    _compare(f, [(_values(5),) for _ in range(4)])


def test_a_view_of_a_temporary_kept_in_the_outputs_is_not_overwritten():
    def f(x):
        t = x * 2.0
        v = t[1:]  # a view of t, returned
        w = cr.permute_dims(t, (1, 0))
        u = t + 1.0  # t's last read
        return v, w, u * u

    _compare(f, [(_values(3, 4),) for _ in range(4)])


@numpy_only
def test_a_reshape_that_was_a_copy_when_traced_and_is_a_view_now_is_not_overwritten():
    # Traced on a Fortran-ordered argument, x * 2.0 is Fortran-ordered and its reshape a copy;
    # replayed on C-ordered ones, the reshape is a view of x * 2.0, which dies at + 1.0.
    def f(x):
        t = x * 2.0
        flat = cr.reshape(t, (-1,))
        return flat, cr.tanh(t + 1.0)

    calls = [(np.asfortranarray(_values(3, 4)),)] + [(_values(3, 4),) for _ in range(3)]
    _compare(f, calls, cr.asarray)


def test_values_saved_for_the_backward_are_not_overwritten():
    def f(x, w):
        h = cr.tanh(x * w)  # tanh saves its result
        y = h * 3.0
        loss = cr.sum(cr.sqrt(y * y + 1.0))
        loss.backward()
        return loss.detach(), w.grad

    def step(x, w):
        w.grad = None
        return f(x, w)

    x, w = _values(4, 3), _values(4, 3)
    compiled = cr.compile(step)
    w1, w2 = T(w, requires_grad=True), T(w, requires_grad=True)
    for _ in range(4):
        _same(compiled(T(x), w1), step(T(x), w2))
        x = _values(4, 3)


def test_shapes_that_change_with_the_values_are_broadcast_as_eagerly():
    # a dies at a + m: traced with equal shapes; called where a has one element and m three
    # (broadcast into a new array), or the other way round. A selection by a mask makes the
    # function run eagerly (test_compile_hunt: a replay kept the first call's sizes).
    def f(x, y):
        a = x[x > 0.0] * 2.0
        m = y[y > 0.0]
        return (a + m,)

    calls = [
        ([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]),
        ([1.0, -2.0, -3.0], [1.0, 2.0, 3.0]),
        ([1.0, 2.0, 3.0], [-1.0, 2.0, -3.0]),
        ([4.0, 5.0, 6.0], [1.0, 2.0, 3.0]),
    ]
    with pytest.warns(cr.CompileWarning, match="depends on the values"):
        _compare(f, calls)


def test_memory_orders_that_change_with_the_arguments_sum_as_eagerly():
    # x * 2.0 takes x's order; written into the sum with y, the sum would take it, and a
    # reduction over all elements adds in memory order.
    def f(x, y):
        t = x * 2.0
        return (cr.sum(y + t), cr.sum(t * 3.0 + y))

    def arg(order):
        values = RNG.normal(size=(64, 65)) * 10.0 ** RNG.integers(-8, 8, size=(64, 65))
        return np.asarray(values, order=order)

    # Traced on C-ordered arguments; then each order.
    calls = [(arg("C"), arg("C")), (arg("F"), arg("C")), (arg("C"), arg("F")), (arg("F"), arg("F"))]
    _compare(f, calls, cr.asarray if LIBRARY == "numpy" else T)
