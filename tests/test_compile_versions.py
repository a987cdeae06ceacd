"""chainrule.compile reproduces eager's version counters on the tensors it returns: one made
inside and written in place there has eager's `_version` after a replay (both tiers: the loop
and the compiled source), and outputs that share one counter eagerly share one after it."""

import numpy as np
import pytest

import chainrule as cr
from chainrule._compile import _program
from conftest import LIBRARY, N, T


@pytest.fixture(params=["loop", "source"])
def tier(request, monkeypatch):
    """The replay tier the calls after the first run: the loop, or the source compiled at the
    first replay."""
    monkeypatch.setattr(_program, "SOURCE_AFTER", 10**9 if request.param == "loop" else 0)
    return request.param


def _flat(out) -> tuple:
    return out if isinstance(out, tuple) else (out,)


def _versions_match(fn, make_args, calls: int = 4) -> list:
    """fn compiled and called `calls` times on fresh arguments: each call's outputs have the
    values and versions of fn's eager outputs; the last call's outputs."""
    compiled = cr.compile(fn)
    for _ in range(calls):
        got, want = _flat(compiled(*make_args())), _flat(fn(*make_args()))
        assert [g._version for g in got] == [w._version for w in want]
        for g, w in zip(got, want):
            np.testing.assert_array_equal(N(g.detach()), N(w.detach()))
    assert compiled.traces == 1
    return list(got)


def _x(requires_grad: bool = False):
    return lambda: (T(np.array([1.0, 2.0, 3.0]), requires_grad=requires_grad),)


def test_an_output_written_inside_keeps_its_version_after_a_replay(tier):
    def f(x):
        y = x * 1.0
        y += 1
        return y

    (y,) = _versions_match(f, _x())
    assert y._version == 1


def test_an_output_written_twice_inside_counts_both_writes(tier):
    def f(x):
        y = x * 2.0
        y.mul_(2)
        y.add_(1)
        return y

    (y,) = _versions_match(f, _x())
    assert y._version == 2


def test_a_written_output_with_a_graph_keeps_its_version_and_gradient(tier):
    def f(x):
        y = x * 2.0
        y.add_(1)
        return y

    (y,) = _versions_match(f, _x(requires_grad=True))
    assert y._version == 1
    y.sum().backward()  # the replay's node checks no saved version it does not hold


@pytest.mark.skipif(
    LIBRARY in ("jax", "dask"), reason="a view returned keeps its base: the call runs eagerly"
)
def test_a_view_of_a_written_tensor_returned_has_its_base_version(tier):
    def f(x):
        y = x * 1.0
        y.add_(1)
        return y[1:]

    (v,) = _versions_match(f, _x())
    assert v._version == 1


def test_two_outputs_sharing_a_counter_share_one_after_a_replay(tier):
    def f(x):
        y = x * 1.0
        y.add_(1)
        return y, y[0], y

    y, v, same = _versions_match(f, _x())
    y.add_(1)  # a write to one counts for the others, as eagerly
    assert (y._version, v._version, same._version) == (2, 2, 2)


def test_an_output_not_written_gets_no_version_work(tier):
    def f(x):
        return x * 2.0, x + 1.0

    compiled = cr.compile(f)
    for _ in range(3):
        outs = compiled(*_x()())
    assert [getattr(t, "_vc", None) for t in outs] == [None, None]
    assert "FIX_OUTPUTS" not in compiled.source()[0]


def test_a_tensor_returned_twice_is_one_object_after_a_replay(tier):
    def f(x):
        y = x * 2.0
        y.add_(1)
        return y, y, x * 3.0

    compiled = cr.compile(f)
    for _ in range(3):
        x = _x(requires_grad=True)()[0]
        a, b, c = compiled(x)
        assert a is b and a is not c
        assert a._version == 1 and c._version == 0
        (a.sum() + b.sum()).backward()
        np.testing.assert_array_equal(N(x.grad), [4.0, 4.0, 4.0])
    assert compiled.traces == 1
