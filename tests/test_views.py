"""Views and aliases, as PyTorch's: detach() and .data share their source's memory (detach()
also its version counter), view operations (basic indexing, reshape, permute_dims, .T, .mT,
expand_dims, squeeze, broadcast_to, diagonal, real, imag) share their base's memory, and an
in-place write through a view writes the base and rebases its history (CopySlices). Random
programs of views and in-place writes through them (in grad mode, under no_grad, with values
that need grad), replayed from PyTorch's recorded outcomes (fixtures/views_torch.json, made by
fixtures/make_views_fixtures.py, which runs this file's interpreter in PyTorch): the values and
version of every tensor, which instructions raise, and the gradient of a loss over all of them,
first order and under create_graph."""

import gc
import json
import operator
import pathlib
import weakref

import numpy as np
import pytest

import chainrule as cr
from chainrule._tensor import view_of
from chainrule.autograd import grad, gradcheck, gradgradcheck
from conftest import LIBRARY, N, T, fails_on

# ----------------------------------------------------------------------------- detach and .data


def test_detach_shares_memory_and_version_counter():
    w = T([1.0, 2.0], requires_grad=True)
    d = w.detach()
    d += 1.0
    np.testing.assert_array_equal(N(w.detach()), [2.0, 3.0])
    assert w._version == d._version == 1
    assert w.is_leaf and w.requires_grad


def test_data_shares_memory_with_a_version_counter_of_its_own():
    w = T([1.0, 2.0], requires_grad=True)
    w.data[0] = 5.0
    np.testing.assert_array_equal(N(w.detach()), [5.0, 2.0])
    assert w._version == 0


@fails_on("jax", "dask", reason="backward reads the immutable values saved, not the new ones")
def test_a_write_through_data_is_seen_by_no_version_check():
    w = T([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    w.data *= 2.0
    loss.backward()  # as PyTorch: the saved w is the new one, silently
    np.testing.assert_array_equal(N(w.grad), [4.0, 8.0])


def test_data_setter_gives_the_tensor_the_values_and_keeps_it_a_leaf():
    w = T([1.0, 2.0], requires_grad=True)
    w.data = T([7.0, 8.0, 9.0])
    assert w.is_leaf and w.requires_grad and w.shape == (3,)
    (w * w).sum().backward()
    np.testing.assert_array_equal(N(w.grad), [14.0, 16.0, 18.0])
    with pytest.raises(TypeError, match="Variable data has to be a tensor"):
        w.data = 3.0


def test_classic_training_code_through_data_updates_the_parameter():
    p = T([1.0, -2.0], requires_grad=True)
    ema = T([0.0, 0.0])
    want_p, want_ema = np.array([1.0, -2.0]), np.zeros(2)
    for _ in range(3):
        p.grad = None
        (p * p).sum().backward()
        p.data -= 0.25 * p.grad
        e = ema.data
        e *= 0.5
        e += 0.5 * p.data
        want_p -= 0.25 * 2.0 * want_p
        want_ema = 0.5 * want_ema + 0.5 * want_p
    np.testing.assert_allclose(N(p.detach()), want_p)
    np.testing.assert_allclose(N(ema), want_ema)
    assert p.is_leaf and p._version == 0


def test_a_saved_tensor_written_through_detach_makes_backward_raise():
    w = T([1.0, 2.0], requires_grad=True)
    loss = (w * w).sum()
    d = w.detach()
    d[1] = 0.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        loss.backward()


def test_a_saved_output_written_through_detach_makes_backward_raise():
    x = T([1.0, 2.0], requires_grad=True)
    y = cr.exp(x)  # saves its output
    alias = y.detach()
    alias += 1.0
    with pytest.raises(RuntimeError, match="ExpBackward0 is at version 1; expected version 0"):
        y.sum().backward()


def test_a_node_made_after_the_write_runs():
    w = T([1.0, 2.0], requires_grad=True)
    d = w.detach()
    d += 1.0
    (w * w).sum().backward()
    np.testing.assert_array_equal(N(w.grad), [4.0, 6.0])


# ----------------------------------------------------------------------------- basic indexing


def test_a_write_through_a_slice_writes_the_base_and_rebases_its_history():
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1.0
    v = y[0:2]
    v *= 2.0
    np.testing.assert_array_equal(N(y.detach()), [2.0, 4.0, 3.0])
    assert y.grad_fn.name() == "CopySlices"
    assert y._version == v._version == 1
    (g,) = grad((y * y).sum(), x)
    np.testing.assert_array_equal(N(g), [8.0, 16.0, 6.0])


def test_a_write_to_the_base_is_seen_by_its_views_values_and_gradients():
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1.0
    v = y[1:]
    y *= 3.0
    np.testing.assert_array_equal(N(v.detach()), [6.0, 9.0])
    (g,) = grad(v.sum(), x)
    np.testing.assert_array_equal(N(g), [0.0, 3.0, 3.0])


def test_other_views_of_the_base_become_views_of_the_new_base():
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1.0
    a, b = y[0:2], y[1:3]
    a *= x[0:2]  # y = [x0^2, x1^2, x2]
    np.testing.assert_array_equal(N(b.detach()), [4.0, 3.0])
    (g,) = grad(b.sum(), x)
    np.testing.assert_array_equal(N(g), [0.0, 4.0, 1.0])


def test_a_view_of_a_view_writes_the_root_base():
    x = T([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = x * 1.0
    w = y[1:][::2]
    w *= 5.0
    np.testing.assert_array_equal(N(y.detach()), [1.0, 10.0, 3.0, 20.0])
    (g,) = grad((y * y).sum(), x)
    np.testing.assert_array_equal(N(g), [2.0, 100.0, 6.0, 200.0])


def test_an_integer_index_is_a_zero_dimensional_view():
    x = T([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    e = y[1]
    e *= 4.0
    np.testing.assert_array_equal(N(y.detach()), [1.0, 8.0])
    (g,) = grad(y.sum(), x)
    np.testing.assert_array_equal(N(g), [1.0, 4.0])


def test_a_value_with_history_written_into_a_view_of_a_constant_gives_the_base_history():
    x = T([1.0, 2.0], requires_grad=True)
    b = T(np.zeros(3))
    v = b[1:]
    v += x * x
    assert b.requires_grad and b.grad_fn.name() == "CopySlices"
    (g,) = grad((b * T([1.0, 2.0, 3.0])).sum(), x)
    np.testing.assert_array_equal(N(g), [4.0, 12.0])


def test_advanced_indexing_copies():
    y = T([1.0, 2.0, 3.0])
    c = y[T([0, 2])]
    c *= 10.0
    np.testing.assert_array_equal(N(y), [1.0, 2.0, 3.0])


def test_a_view_of_a_leaf_that_requires_grad_can_be_written_only_under_no_grad():
    w = T([1.0, 2.0, 3.0], requires_grad=True)
    v = w[0:2]
    with pytest.raises(
        RuntimeError,
        match="a view of a leaf Variable that requires grad is being used in an in-place",
    ):
        v *= 2.0
    np.testing.assert_array_equal(N(w.detach()), [1.0, 2.0, 3.0])
    with cr.no_grad():
        v *= 2.0
        w[2] = 0.0
    np.testing.assert_array_equal(N(w.detach()), [2.0, 4.0, 0.0])
    assert w._version == 2 and w.is_leaf


def test_a_saved_base_written_through_a_view_makes_backward_raise():
    x = T([1.0, 2.0], requires_grad=True)
    y = cr.exp(x)
    v = y[0:1]
    v *= 2.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def _through_views(x, v):
    y = x * x
    y[0:2] *= v
    y[1:][0:1] = v[0:1] * x[2]
    return y


def test_writes_through_views_gradients_first_and_second_order():
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    v = T([0.5, -1.5], requires_grad=True)
    assert gradcheck(_through_views, (x, v))
    assert gradgradcheck(_through_views, (x, v))


def test_writes_through_views_under_create_graph():
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    y = x * 1.0
    v = y[0:2]
    v *= x[1:]  # y = [x0 x1, x1 x2, x2]
    (g,) = grad((y * y).sum(), x, create_graph=True)
    (h,) = grad(g[1], x)
    # d/dx of g1 = 2 x0^2 x1 + 2 x1 x2^2
    np.testing.assert_allclose(N(h), [4.0 * 1.0 * 2.0, 2.0 * 1.0 + 2.0 * 9.0, 4.0 * 2.0 * 3.0])


def test_gradients_of_a_broadcast_write_through_a_view_reach_both():
    x = T([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    s = T([10.0], requires_grad=True)
    y = x * 1.0
    row = y[1]
    row += s
    (gx, gs) = grad(y.sum(), (x, s))
    np.testing.assert_array_equal(N(gx), np.ones((2, 2)))
    np.testing.assert_array_equal(N(gs), [2.0])


# ----------------------------------------------------------------------------- other views


VIEWS = {
    "reshape": (lambda t: cr.reshape(t, (3, 2)), lambda a: a.reshape(3, 2)),
    "permute_dims": (lambda t: cr.permute_dims(t, (1, 0)), lambda a: a.transpose(1, 0)),
    "T": (lambda t: t.T, lambda a: a.T),
    "mT": (lambda t: t.mT, lambda a: a.T),
    "expand_dims": (lambda t: cr.expand_dims(t, axis=1), lambda a: a[:, None]),
    "squeeze": (lambda t: cr.squeeze(t[0:1], axis=0), lambda a: a[0]),
    "diagonal": (lambda t: cr.linalg.diagonal(t, offset=1), lambda a: a[[0, 1], [1, 2]]),
    "slice": (lambda t: t[:, ::2], lambda a: a[:, ::2]),
}


@pytest.mark.parametrize("name", list(VIEWS))
def test_each_view_op_writes_its_base(name):
    view, expected = VIEWS[name]
    values = np.arange(6.0).reshape(2, 3) + 1.0
    x = T(values, requires_grad=True)
    y = x * 1.0
    v = view(y)
    assert view_of(v).base is y
    v *= 3.0
    # The region the view reaches: the flat positions that NumPy's view of a layout selects.
    hit = np.zeros(6, dtype=bool)
    hit[np.asarray(expected(np.arange(6).reshape(2, 3))).ravel()] = True
    region = hit.reshape(2, 3)
    want = np.where(region, 3.0 * values, values)
    np.testing.assert_array_equal(N(y.detach()), want)
    (g,) = grad((y * y).sum(), x)
    np.testing.assert_array_equal(N(g), np.where(region, 18.0, 2.0) * values)

    def f(x):
        y = x * x
        w = view(y)
        w *= x[0, 0]
        return y

    assert gradcheck(f, (T(values, requires_grad=True),))


def test_a_reshape_that_needs_a_copy_is_no_view():
    y = T(np.arange(6.0).reshape(2, 3)).T
    r = cr.reshape(y, (6,))
    r *= 0.0
    assert float(cr.sum(y)) == 15.0


def test_a_write_through_broadcast_to_raises_as_pytorch():
    y = T([1.0, 2.0], requires_grad=True) * 1.0
    b = cr.broadcast_to(y, (3, 2))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        b += 1.0


@pytest.mark.skipif(LIBRARY == "array_api_strict", reason="real/imag copy on array-api-strict")
def test_real_and_imag_are_views_of_a_complex_base():
    z = T(np.array([1.0 + 2.0j, 3.0 - 1.0j]), requires_grad=True)
    y = z * 1.0
    re, im = cr.real(y), cr.imag(y)
    re *= 2.0
    im += 10.0
    np.testing.assert_array_equal(N(y.detach()), [2.0 + 12.0j, 6.0 + 9.0j])
    (g,) = grad(cr.sum(cr.abs(y) ** 2), z)
    # |y|^2 = (2 Re z)^2 + (Im z + 10)^2: the gradient 8 Re z + 2 (Im z + 10) i
    np.testing.assert_allclose(N(g), [8.0 + 24.0j, 24.0 + 18.0j])


def test_views_and_a_rebased_base_are_freed_without_the_cyclic_gc():
    gc.disable()
    try:
        x = T([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1.0
        v = y[0:2]
        d = y.detach()
        v *= x[1:]
        refs = [weakref.ref(t) for t in (y, v, d)] + [weakref.ref(y.grad_fn)]
        del y, v, d
        assert all(r() is None for r in refs)
    finally:
        gc.enable()


# ---------------------------------------------- random programs against PyTorch (views_torch.json)

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "views_torch.json"

# Each instruction: [kind, source index, arguments...]; every result is appended to the list
# of values. Keys: per entry ["i", k], ["s", start, stop, step], ["n"] (None) or ["e"] (...).
IOPS = {"mul": operator.imul, "add": operator.iadd, "sub": operator.isub}


def key_of(entries):
    out = []
    for e in entries:
        if e[0] == "i":
            out.append(e[1])
        elif e[0] == "s":
            out.append(slice(e[1], e[2], e[3]))
        elif e[0] == "n":
            out.append(None)
        else:
            out.append(Ellipsis)
    return tuple(out)


class Chainrule:
    """The operations of a program, in chainrule."""

    no_grad = staticmethod(cr.no_grad)

    @staticmethod
    def leaf(values):
        return T(np.asarray(values), requires_grad=True)

    @staticmethod
    def constant(values):
        return T(np.asarray(values))

    @staticmethod
    def view(t, kind, arg):
        if kind == "index":
            return t[key_of(arg)]
        if kind == "reshape":
            return cr.reshape(t, tuple(arg))
        if kind == "permute":
            return cr.permute_dims(t, tuple(arg))
        if kind == "T":
            return t.T
        if kind == "mT":
            return t.mT
        if kind == "expand_dims":
            return cr.expand_dims(t, axis=arg)
        if kind == "squeeze":
            return cr.squeeze(t, axis=arg)
        if kind == "diagonal":
            return cr.linalg.diagonal(t, offset=arg)
        if kind == "detach":
            return t.detach()
        return t.data

    @staticmethod
    def exp(t):
        return cr.exp(t)

    @staticmethod
    def total(t):
        return cr.sum(t)

    @staticmethod
    def grad(loss, x, create_graph):
        return cr.autograd.grad(loss, x, retain_graph=True, create_graph=create_graph)[0]

    @staticmethod
    def values(t):
        return np.asarray(N(t.detach()), dtype=np.float64)


def run(lib, program, x0):
    """Run `program` with library adapter `lib` from the leaf values x0: the leaf, the list
    of values (one per instruction: its result, None for a write or an error) and per
    instruction "ok" or "RuntimeError" (what it raised)."""
    x = lib.leaf(x0)
    values = [x]
    outcomes = []
    for kind, src, *args in program:
        t = values[src]
        out = None
        try:
            if kind == "mul":
                out = t * args[0]
            elif kind == "exp":
                out = lib.exp(t)
            elif kind == "view":
                out = lib.view(t, args[0], args[1])
            elif kind in ("iop", "iop_nograd", "iop_grad"):
                op, c = IOPS[args[0]], args[1]
                if kind == "iop_grad":
                    c = lib.total(x) * c  # a value that needs grad
                if kind == "iop_nograd":
                    with lib.no_grad():
                        op(t, c)
                else:
                    op(t, c)
            elif kind == "setitem":
                t[key_of(args[0])] = args[1]
            else:
                raise ValueError(kind)
            outcomes.append("ok")
        except RuntimeError:
            outcomes.append("RuntimeError")
        values.append(out)
    return x, values, outcomes


def loss_of(lib, values, weights):
    total = None
    for v, w in zip(values, weights):
        if v is None or w is None:
            continue
        term = lib.total(v * v * lib.constant(np.reshape(w, tuple(v.shape))))
        total = term if total is None else total + term
    return total


def outcome_of(fn):
    try:
        return fn(), "ok"
    except RuntimeError as e:
        return None, "RuntimeError" if "inplace" in str(e) or "in-place" in str(e) else repr(e)


def _programs():
    if not FIXTURES.exists():
        return []
    return json.loads(FIXTURES.read_text())


PROGRAMS = _programs()


def test_the_recorded_programs_are_there():
    assert len(PROGRAMS) >= 100


def _differs_here(program) -> str | None:
    """Why this backend can't give PyTorch's outcome of `program`, if it can't."""
    writes = {
        step[1] for step in program if step[0] in ("iop", "iop_nograd", "iop_grad", "setitem")
    }
    data = {i + 1 for i, step in enumerate(program) if step[0] == "view" and step[2] == "data"}
    if LIBRARY in ("jax", "dask") and writes & data:
        return "a write through .data: backward reads the immutable values saved, not the new"
    keys = [step[-1] if step[0] == "view" else step[2:3] and step[2] for step in program]
    none = any(isinstance(k, list) and ["n"] in k for k in keys)
    if LIBRARY == "array_api_strict" and none:
        return "array-api-strict refuses None in a key of integers and slices"
    if LIBRARY == "dask" and none:
        return "Dask's item assignment (a write through a view) refuses None in a key"
    return None


@pytest.mark.parametrize("case", PROGRAMS, ids=[str(i) for i in range(len(PROGRAMS))])
def test_views_and_in_place_writes_match_pytorch(case):
    reason = _differs_here(case["program"])
    if reason is not None:
        pytest.skip(reason)
    x, values, outcomes = run(Chainrule, case["program"], case["x"])
    assert outcomes == case["outcomes"]
    for v, want, shape, version in zip(values, case["values"], case["shapes"], case["versions"]):
        assert (v is None) == (want is None)
        if v is not None:
            want = np.asarray(want, dtype=np.float64).reshape(shape)
            np.testing.assert_allclose(Chainrule.values(v), want, rtol=1e-12)
            assert v._version == version
    loss = loss_of(Chainrule, values, case["weights"])
    g, outcome = outcome_of(lambda: Chainrule.grad(loss, x, False))
    assert outcome == case["grad_outcome"]
    if outcome == "ok":
        np.testing.assert_allclose(Chainrule.values(g), np.asarray(case["grad"]), rtol=1e-10)
        g = Chainrule.grad(loss, x, True)
        h = Chainrule.grad(Chainrule.total(g * g), x, False)
        np.testing.assert_allclose(Chainrule.values(h), np.asarray(case["grad2"]), rtol=1e-10)
