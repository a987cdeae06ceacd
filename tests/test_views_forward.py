"""Forward mode through views and in-place writes: the random programs of
tests/test_views.py run with their leaf a dual tensor, against PyTorch's recorded
forward-mode outcomes (tests/fixtures/views_forward_torch.json, made by
tests/fixtures/make_views_forward_fixtures.py: values, tangents, versions, which instructions
raise) and against central differences of the program's values along the tangent; and the
cases of a write through a view one by one (the base's tangent takes the view's in the
region written; every view's tangent is the view of its base's)."""

import json
import pathlib

import numpy as np
import pytest

import chainrule as cr
import chainrule.autograd.forward_ad as fwAD
from conftest import N, T
from test_views import PROGRAMS, Chainrule, _differs_here, run

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "views_forward_torch.json"
RECORDED = json.loads(FIXTURES.read_text()) if FIXTURES.exists() else []


class ChainruleForward(Chainrule):
    """chainrule's operations, with a leaf that carries the tangent `tangent` (None: a plain
    leaf, for the finite differences)."""

    def __init__(self, tangent, grad: bool):
        self.tangent = tangent
        self.grad = grad

    def leaf(self, values):
        x = T(np.asarray(values), requires_grad=self.grad)
        if self.tangent is None:
            return x
        return fwAD.make_dual(x, T(np.asarray(self.tangent)))


def tangent_of(v):
    t = fwAD.unpack_dual(v).tangent
    return None if t is None else np.asarray(N(t.detach()))


def test_the_recorded_forward_programs_are_there():
    assert len(RECORDED) == len(PROGRAMS) >= 100


def _values_at(program, x0):
    """The program's values (None where there is none), without forward mode."""
    with cr.no_grad():
        _, values, _ = run(ChainruleForward(None, False), program, x0)
    return [None if v is None else Chainrule.values(v) for v in values]


@pytest.mark.parametrize("variant", ["forward", "both"])
@pytest.mark.parametrize("index", range(len(RECORDED)), ids=str)
def test_forward_mode_through_views_matches_pytorch(index, variant):
    case, want = PROGRAMS[index], RECORDED[index][variant]
    reason = _differs_here(case["program"])
    if reason is not None:
        pytest.skip(reason)
    with fwAD.dual_level():
        lib = ChainruleForward(want["tangent"], variant == "both")
        _, values, outcomes = run(lib, case["program"], case["x"])
        assert outcomes == want["outcomes"]
        for v, value, tangent, version in zip(
            values, want["values"], want["tangents"], want["versions"]
        ):
            assert (v is None) == (value is None)
            if v is None:
                continue
            shape = v.shape
            np.testing.assert_allclose(
                Chainrule.values(v), np.reshape(value, shape), rtol=1e-12, atol=0
            )
            assert v._version == version
            got = tangent_of(v)
            assert (got is None) == (tangent is None)
            if got is not None:
                np.testing.assert_allclose(got, np.reshape(tangent, shape), rtol=1e-12, atol=0)


@pytest.mark.parametrize("index", range(0, len(RECORDED), 2), ids=str)
def test_forward_mode_through_views_matches_central_differences(index):
    case, want = PROGRAMS[index], RECORDED[index]["forward"]
    if _differs_here(case["program"]) is not None or "RuntimeError" in want["outcomes"]:
        pytest.skip("the program can't run here as PyTorch does")
    if any(step[0] == "view" and step[2] in ("detach", "data") for step in case["program"]):
        pytest.skip("detach() and .data carry no tangent: not the derivative of the values")
    x0, direction = np.asarray(case["x"]), np.asarray(want["tangent"])
    h = 1e-6
    plus = _values_at(case["program"], x0 + h * direction)
    minus = _values_at(case["program"], x0 - h * direction)
    with fwAD.dual_level():
        _, values, _ = run(ChainruleForward(direction, False), case["program"], x0)
        for v, p, m in zip(values, plus, minus):
            if v is None:
                continue
            got = tangent_of(v)
            got = np.zeros(v.shape) if got is None else got
            np.testing.assert_allclose(got, (p - m) / (2 * h), rtol=1e-6, atol=1e-7)


# ----------------------------------------------------------------------------- one by one


def _dual(values, tangent):
    return fwAD.make_dual(T(np.asarray(values)), T(np.asarray(tangent)))


def _tangent(t):
    return tangent_of(t).tolist()


def test_a_view_written_with_a_dual_value_gives_its_base_a_tangent_in_that_region():
    with fwAD.dual_level():
        x = _dual([1.0, 2.0, 3.0], [10.0, 20.0, 30.0])
        y = T(np.asarray([1.0, 2.0, 3.0, 4.0]))
        v, w = y[0:2], y[1:3]
        v.copy_(x[0:2])
        assert _tangent(y) == [10.0, 20.0, 0.0, 0.0]
        assert _tangent(v) == [10.0, 20.0]
        assert _tangent(w) == [20.0, 0.0]  # a view made before the base had a tangent


def test_a_view_multiplied_in_place_updates_its_base_and_sibling_tangents():
    with fwAD.dual_level():
        y = _dual([1.0, 2.0, 3.0], [10.0, 20.0, 30.0]) * 1.0
        v, w = y[0:2], y[1:3]
        v *= 2.0
        assert _tangent(y) == [20.0, 40.0, 30.0]
        assert _tangent(w) == [40.0, 30.0]


def test_a_base_written_in_place_gives_its_views_the_new_tangent():
    with fwAD.dual_level():
        x = _dual([1.0, 2.0, 3.0], [10.0, 20.0, 30.0])
        y = x * 1.0
        v = y[0:2]
        y *= x
        assert _tangent(y) == [20.0, 80.0, 180.0]
        assert _tangent(v) == [20.0, 80.0]


def test_a_view_written_with_a_constant_zeroes_its_region_of_the_base_tangent():
    with fwAD.dual_level():
        y = _dual([1.0, 2.0, 3.0], [10.0, 20.0, 30.0]) * 1.0
        v = y[0:2]
        v.copy_(T(np.asarray([5.0, 6.0])))
        assert _tangent(y) == [0.0, 0.0, 30.0]
        assert _tangent(v) == [0.0, 0.0]


def test_detach_and_data_are_not_views_of_the_tangent():
    with fwAD.dual_level():
        x = _dual([1.0, 2.0, 3.0], [10.0, 20.0, 30.0])
        for alias in (lambda t: t.detach(), lambda t: t.data):
            y = x * 1.0
            d = alias(y)
            d.mul_(x)
            assert _tangent(y) == [10.0, 20.0, 30.0]
            assert _tangent(d) == [10.0, 40.0, 90.0]


def test_make_dual_gives_a_tangent_base_of_its_own_and_not_its_primal():
    with fwAD.dual_level():
        p = T(np.asarray([1.0, 2.0, 3.0]))
        d = fwAD.make_dual(p, T(np.ones(3)))
        d.mul_(2.0)
        q = d[0:2]
        q.mul_(3.0)
        assert fwAD.unpack_dual(p).tangent is None
        assert _tangent(d) == [6.0, 6.0, 2.0]
        assert _tangent(q) == [6.0, 6.0]


def test_a_write_through_a_view_of_a_view_and_a_transpose():
    with fwAD.dual_level():
        x = _dual([1.0, 2.0, 3.0], [10.0, 20.0, 30.0])
        y = T(np.zeros((2, 3)))
        row = y[1]
        row[1:].copy_(x[1:])
        assert _tangent(y) == [[0.0, 0.0, 0.0], [0.0, 20.0, 30.0]]
        assert _tangent(row) == [0.0, 20.0, 30.0]
        z = T(np.zeros((2, 3)))
        z.T[1] = cr.stack([x[0], x[1]])
        assert _tangent(z) == [[0.0, 10.0, 0.0], [0.0, 20.0, 0.0]]


def test_a_write_through_real_keeps_the_imaginary_tangent():
    with fwAD.dual_level():
        x = _dual([1.0, 2.0], [10.0, 20.0])
        y = _dual([1 + 2j, 3 + 4j], [1 + 1j, 2 - 1j]) * 1.0
        r = cr.real(y)
        r.mul_(x)
        assert _tangent(y) == [11 + 1j, 64 - 1j]
        assert _tangent(r) == [11.0, 64.0]


def test_a_write_through_a_view_in_grad_mode_gives_tangents_that_differentiate():
    # Forward over reverse: the base's new tangent is recorded, so its gradient is there.
    x = T(np.asarray([1.0, 2.0, 3.0]), requires_grad=True)
    with fwAD.dual_level():
        xd = fwAD.make_dual(x, T(np.asarray([1.0, 1.0, 1.0])))
        y = xd * 1.0
        v = y[0:2]
        v *= xd[0:2]  # tangent of v: 2 x (1 1); y's tangent [2 x0, 2 x1, 1]
        ty = fwAD.unpack_dual(y).tangent
        (g,) = cr.autograd.grad(cr.sum(ty), x)
        assert N(g).tolist() == [2.0, 2.0, 0.0]
