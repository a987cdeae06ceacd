"""Views and in-place writes inside vmap and the transforms built on it (jacfwd, hessian): a
write through a view reaches its base, and a write to the base its views, per sample. The
random programs of tests/test_views.py run under vmap against a loop over the samples,
and their jacfwd against jacrev (itself checked against PyTorch there)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from conftest import N, T
from test_views import PROGRAMS, Chainrule, _differs_here, loss_of, run


class _Given(Chainrule):
    """chainrule's operations, with the leaf given (a function's argument)."""

    def __init__(self, x):
        self.x = x

    def leaf(self, values):
        return self.x


def _values(program):
    """The program as a function of x: its values (those that are not None) and outcomes."""

    def fn(x):
        _, values, outcomes = run(_Given(x), program, None)
        return [v for v in values if v is not None], outcomes

    return fn


CASES = [i for i, case in enumerate(PROGRAMS) if _differs_here(case["program"]) is None]


@pytest.mark.parametrize("index", CASES[::2], ids=str)
def test_random_view_programs_under_vmap_equal_a_loop_over_samples(index):
    case = PROGRAMS[index]
    rng = np.random.default_rng(index)
    xs = rng.uniform(-1.0, 1.0, (3, *np.shape(case["x"])))
    fn = _values(case["program"])
    outcomes = []

    def batched(x):
        values, seen = fn(x)
        outcomes.append(seen)
        return values

    got = func.vmap(batched)(T(xs))
    for i in range(3):
        want, seen = fn(T(xs[i]))
        assert outcomes[0] == seen
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_allclose(N(g)[i], N(w), rtol=1e-13, atol=1e-15)


def _same_function_in_both_modes(case) -> bool:
    """Whether the program's loss is one function for jacfwd and jacrev: no instruction
    raised (x requiring grad), and no tangent is cut where a gradient is not (detach(),
    .data; forward mode ignores no_grad)."""
    if "RuntimeError" in case["outcomes"] or case["grad_outcome"] != "ok":
        return False
    for step in case["program"]:
        if step[0] == "iop_nograd" or step[0] == "view" and step[2] in ("detach", "data"):
            return False
    return True


@pytest.mark.parametrize("index", CASES, ids=str)
def test_random_view_programs_jacfwd_equals_jacrev(index):
    case = PROGRAMS[index]
    if not _same_function_in_both_modes(case):
        pytest.skip("not one function in both modes")
    fn = _values(case["program"])
    weights = [w for w in case["weights"] if w is not None]

    def loss(x):
        return loss_of(Chainrule, fn(x)[0], weights)

    x = T(np.asarray(case["x"]))
    np.testing.assert_allclose(
        N(func.jacfwd(loss)(x)), N(func.jacrev(loss)(x)), rtol=1e-12, atol=1e-14
    )


def _write_through_a_view(x):
    y = x * 1.0
    v = y[1:]
    v *= x[:2]
    w = y[0:2]
    w.copy_(cr.exp(w))
    return cr.sum(y * y)


def test_vmap_of_a_write_through_a_view_reaches_the_base():
    def fn(x):
        y = x * 1.0
        tail = y[1:]
        tail *= 2.0
        return y

    xs = T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert N(func.vmap(fn)(xs)).tolist() == [[1.0, 4.0, 6.0], [4.0, 10.0, 12.0]]


def test_vmap_of_a_write_to_the_base_reaches_its_views():
    def fn(x):
        y = x * 1.0
        tail = y[1:]
        y *= 3.0
        return tail

    xs = T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    assert N(func.vmap(fn)(xs)).tolist() == [[6.0, 9.0], [15.0, 18.0]]


def test_jacfwd_hessian_and_jacfwd_of_jacfwd_through_writes_to_views():
    x = T([0.3, -0.2, 0.5])
    h = N(func.jacrev(func.jacrev(_write_through_a_view))(x))
    g = func.grad(_write_through_a_view)
    eps = 1e-6
    columns = []
    for i in range(3):
        e = np.zeros(3)
        e[i] = eps
        plus, minus = N(g(T(N(x) + e))), N(g(T(N(x) - e)))
        columns.append((plus - minus) / (2 * eps))
    np.testing.assert_allclose(h, np.stack(columns, -1), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(N(func.hessian(_write_through_a_view)(x)), h, rtol=1e-12)
    jj = func.jacfwd(func.jacfwd(_write_through_a_view))(x)
    np.testing.assert_allclose(N(jj), h, rtol=1e-12)
