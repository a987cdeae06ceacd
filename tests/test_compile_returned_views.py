"""Views returned by a compiled function, and their bases: a base made inside and kept outside
(stored, not returned) makes the function run eagerly on every backend, whichever view of it
is returned."""

import numpy as np
import pytest

import chainrule as cr
from chainrule._tensor import alias_group
from conftest import N, T, fails_on

RNG = np.random.default_rng(8)

VIEWS = {
    "slice": lambda y: y[1:],
    "element": lambda y: y[0],
    "transpose": lambda y: y.reshape((2, 3)).T,
    "detach": lambda y: y.detach(),
}
CHAIN = "a view of a view of the stored base (PyTorch's views hold more references to it)"
STORED = [
    pytest.param(fn, id=name, marks=fails_on("torch", reason=CHAIN) if name == "transpose" else ())
    for name, fn in VIEWS.items()
]


@pytest.mark.parametrize("view", STORED)
def test_a_stored_base_of_a_returned_view_makes_the_function_run_eagerly(view):
    store = []

    def fn(x):
        y = cr.sin(x)
        store.append(y)  # kept outside, not returned: a replay would not update it
        return view(y)

    compiled = cr.compile(fn)
    with pytest.warns(cr.CompileWarning, match="kept outside"):
        for _ in range(3):
            x = RNG.normal(size=6)
            compiled(T(x))
    assert len(store) == 3
    np.testing.assert_allclose(N(store[-1]), np.sin(x), rtol=1e-12)


@pytest.mark.parametrize("view", VIEWS.values(), ids=VIEWS.keys())
def test_a_returned_view_of_a_base_made_inside_and_dropped_replays(view):
    compiled = cr.compile(lambda x: view(cr.sin(x)))
    for _ in range(3):
        x = RNG.normal(size=6)
        np.testing.assert_allclose(N(compiled(T(x))), N(view(cr.sin(T(x)))), rtol=1e-12)
    assert compiled.traces == 1


ARG_VIEWS = {
    "slice": lambda x: x[1:],
    "reshape-transpose": lambda x: x.reshape((2, 2)).T,
    "detach": lambda x: x.detach(),
    "detach-of-a-slice": lambda x: x[1:].detach(),
    "after-an-operation": lambda x: (x * 2, x[::2]),
}


def _last(out):
    return out[-1] if isinstance(out, tuple) else out


@pytest.mark.parametrize("fn", ARG_VIEWS.values(), ids=ARG_VIEWS.keys())
def test_a_returned_view_of_an_argument_is_its_view_after_a_replay(fn):
    compiled = cr.compile(fn)
    for _ in range(3):
        x, x_eager = T(np.arange(4.0)), T(np.arange(4.0))
        out, out_eager = _last(compiled(x)), _last(fn(x_eager))
        out.add_(1.0)  # a write through the view is a write to the argument, and counted so
        out_eager.add_(1.0)
        assert (x._version, out._version) == (x_eager._version, out_eager._version)
        x.mul_(2.0)
        x_eager.mul_(2.0)
        assert out._version == out_eager._version
        np.testing.assert_array_equal(N(x), N(x_eager))
        np.testing.assert_array_equal(N(out), N(out_eager))
    assert compiled.traces == 1


def test_a_write_to_an_argument_is_seen_by_the_backward_that_saved_its_returned_view():
    compiled = cr.compile(lambda x: x[1:])
    for _ in range(3):
        x = T(np.ones(4))
        w = T(np.ones(3)).requires_grad_()
        loss = cr.sum(w * compiled(x))  # saves the view for w's gradient
        x.add_(1.0)
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            loss.backward()


OUTSIDE_VIEWS = {
    "slice": lambda p: p[1:],
    "detach": lambda p: p.detach(),
    "reshape-transpose": lambda p: p.reshape((2, 2)).T,
}


@pytest.mark.parametrize("view", OUTSIDE_VIEWS.values(), ids=OUTSIDE_VIEWS.keys())
def test_a_returned_view_of_a_tensor_from_outside_is_its_view_after_a_replay(view):
    p, p_eager = T(np.arange(4.0)), T(np.arange(4.0))
    compiled = cr.compile(lambda x: (cr.sum(x * p), view(p)))
    for _ in range(3):
        out, out_eager = compiled(T(np.ones(4)))[1], view(p_eager)
        out.mul_(2.0)  # a write through the view is a write to p, and counted so
        out_eager.mul_(2.0)
        assert (p._version, out._version) == (p_eager._version, out_eager._version)
        np.testing.assert_array_equal(N(p), N(p_eager))
    assert compiled.traces == 1


def test_a_view_of_an_argument_returned_twice_joins_its_group_once():
    # The replay makes a returned view a member of its argument's alias group; the same
    # view at two positions is one tensor, made a member once (as eagerly).
    def fn(x):
        v = x[1:3]
        return v, v

    compiled = cr.compile(fn)
    for _ in range(3):
        x, x_eager = T(np.arange(4.0)), T(np.arange(4.0))
        (a, b), (a_eager, b_eager) = compiled(x), fn(x_eager)
        assert a is b
        members = [t for t, _ in alias_group(x).live()]
        assert sum(t is a for t in members) == 1
        assert len(members) == len(alias_group(x_eager).live())
        a.add_(1.0)
        a_eager.add_(1.0)
        np.testing.assert_array_equal(N(x), N(x_eager))
        np.testing.assert_array_equal(N(b), N(b_eager))
        assert (x._version, b._version) == (x_eager._version, b_eager._version)
        del members
    assert compiled.traces == 1
