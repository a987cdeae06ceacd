"""Views and in-place writes against PyTorch: random programs of views (basic indexing,
reshape, permute_dims, .T, .mT, expand_dims, squeeze, diagonal, detach(), .data) and in-place
writes through them (in grad mode, under no_grad, with values that need grad), replayed from
PyTorch's recorded outcomes (tests/fixtures/views_torch.json, made by
tests/fixtures/make_views_fixtures.py): the values and version of every tensor, which
instructions raise, and the gradient of a loss over all of them, first order and under
create_graph (second order)."""

import json
import operator
import pathlib

import numpy as np
import pytest

import chainrule as cr
from conftest import LIBRARY, N, T

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
