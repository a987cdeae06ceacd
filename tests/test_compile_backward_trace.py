"""The trace of a backward (Tracer._lean_walk, _vjp_any and the walks): each node's VJP
recorded on the fast path (one or two inputs, one output, nothing to fit) or the general
one, bit for bit equal to eager at every replay; nodes a replay can't reproduce refused as
the walk meets them, with the graph left whole for the eager backward that runs instead."""

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import CompileWarning
from chainrule._compile import _program
from conftest import N, T

RNG = np.random.default_rng(7)


@pytest.fixture(autouse=True)
def source_early(monkeypatch):
    """Programs become source after one replay: a few calls run both replay tiers."""
    monkeypatch.setattr(_program, "SOURCE_AFTER", 1)


def _step(body):
    """A training step: body(*xs)'s sum backward into the xs' .grad, its value out."""

    def step(*xs):
        loss = cr.sum(body(*xs))
        loss.backward()
        return loss.detach()

    return step


def _grads(tensors) -> list:
    return [None if t.grad is None else N(t.grad) for t in tensors]


def _same_as_eager(body, shapes, grad, calls=4):
    """body's step compiled and eager, on fresh values at each call: equal losses and .grad
    (bit for bit); the function traced once."""
    step = _step(body)
    compiled = cr.compile(step)
    for _ in range(calls):
        values = [RNG.uniform(0.5, 1.5, s) for s in shapes]
        a = [T(v, requires_grad=g) for v, g in zip(values, grad)]
        b = [T(v, requires_grad=g) for v, g in zip(values, grad)]
        with warnings.catch_warnings():
            warnings.simplefilter("error", CompileWarning)
            got = compiled(*a)
        expected = step(*b)
        np.testing.assert_array_equal(N(got), N(expected))
        for g, e in zip(_grads(a), _grads(b)):
            if e is None:
                assert g is None
            else:
                np.testing.assert_array_equal(g, e)
    assert compiled.traces == 1


def test_two_input_nodes_replay_each_pattern_of_needed_inputs():
    # x * c, c * x (the first input or the second cut off), x * y (both), a chain of them
    def body(x, c, y):
        h = x * c
        h = c * h
        h = h * y
        return cr.sin(h) / c

    _same_as_eager(body, [(5,), (5,), (5,)], [True, False, True])


def test_a_saved_python_number_replays_as_a_constant():
    def body(x):
        h = x
        for k in range(6):
            h = cr.tanh(h / 3.0) * (k + 0.5)
        return h

    _same_as_eager(body, [(4,)], [True])


def test_nodes_off_the_fast_path_replay_as_eager():
    # broadcasting (a gradient fit to its input's shape), a dtype cast, three inputs (where),
    # several outputs (a node whose gradients arrive as a list), no saved values (add)
    def body(x, b, m):
        h = x * b  # b broadcasts: its gradient is summed to (1, 3)
        h = cr.where(m > 1.0, h, cr.exp(h)) + cr.astype(b, cr.float32)
        parts = cr.unstack(h, axis=0)
        return parts[0] * parts[1] + parts[3] + b

    _same_as_eager(body, [(4, 3), (1, 3), (4, 3)], [True, True, False])


def test_a_gradient_to_some_inputs_replays_on_the_general_path():
    def step(x, y):
        out = cr.sum(cr.sin(x) * cr.exp(y) * x)
        (gx,) = cr.autograd.grad(out, [x])  # walks to x only (`reach`)
        return out.detach(), gx

    compiled = cr.compile(step)
    for _ in range(3):
        v, w = RNG.uniform(0.5, 1.5, 3), RNG.uniform(0.5, 1.5, 3)
        got = compiled(T(v, requires_grad=True), T(w, requires_grad=True))
        expected = step(T(v, requires_grad=True), T(w, requires_grad=True))
        for g, e in zip(got, expected):
            np.testing.assert_array_equal(N(g), N(e))
    assert compiled.traces == 1


def test_a_backward_into_a_graph_from_outside_stops_the_walk_and_runs_eagerly():
    # The walk records the function's own nodes first, then meets the graph made before
    # the call: refused there, the whole backward runs eagerly on the graph left whole.
    w = T(np.array([0.5, 1.0, 2.0]), requires_grad=True)
    outside = cr.tanh(w) * 3.0

    def step(x):
        loss = cr.sum(cr.exp(cr.sin(x) * outside) * x)
        loss.backward(retain_graph=True)
        return loss.detach()

    compiled = cr.compile(step)
    x = T(np.array([0.1, 0.2, 0.3]), requires_grad=True)
    with pytest.warns(CompileWarning, match="a backward into a graph recorded outside"):
        got = compiled(x)
    x2 = T(np.array([0.1, 0.2, 0.3]), requires_grad=True)
    w_grad = N(w.grad)
    w.grad = None
    expected = step(x2)
    np.testing.assert_array_equal(N(got), N(expected))
    np.testing.assert_array_equal(N(x.grad), N(x2.grad))
    np.testing.assert_array_equal(w_grad, N(w.grad))  # once each, not twice


def test_saved_tensor_hooks_inside_the_function_run_it_eagerly():
    packed = []

    def pack(t):
        packed.append(1)
        return t

    def step(x):
        with cr.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
            loss = cr.sum(cr.sin(x) * cr.exp(x))
        loss.backward()
        return loss.detach()

    compiled = cr.compile(step)
    x = T(np.array([0.1, 0.2, 0.3]), requires_grad=True)
    with pytest.warns(CompileWarning, match="saved-tensor hooks"):
        got = compiled(x)
    x2 = T(np.array([0.1, 0.2, 0.3]), requires_grad=True)
    expected = step(x2)
    np.testing.assert_array_equal(N(got), N(expected))
    np.testing.assert_array_equal(N(x.grad), N(x2.grad))


def test_a_hook_that_runs_a_backward_of_its_own_inside_the_traced_backward_replays():
    # The inner walk runs while the outer one is midway; both are recorded.
    def step(x, w):
        h = cr.sin(x) * w

        def hook(g):
            cr.sum(cr.exp(w) * w).backward()
            return g * 2.0

        h.register_hook(hook)
        loss = cr.sum(cr.tanh(h) * x)
        loss.backward()
        return loss.detach()

    compiled = cr.compile(step)
    for _ in range(3):
        v, u = RNG.uniform(-1.0, 1.0, 3), RNG.uniform(0.5, 1.5, 3)
        a = [T(v, requires_grad=True), T(u, requires_grad=True)]
        b = [T(v, requires_grad=True), T(u, requires_grad=True)]
        with warnings.catch_warnings():
            warnings.simplefilter("error", CompileWarning)
            got = compiled(*a)
        expected = step(*b)
        np.testing.assert_array_equal(N(got), N(expected))
        for g, e in zip(_grads(a), _grads(b)):
            np.testing.assert_array_equal(g, e)
    assert compiled.traces == 1
