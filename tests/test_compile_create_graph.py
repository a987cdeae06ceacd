"""create_graph through the outputs of a compiled function (issue 20): the replayed call is run
again eagerly and its graph differentiated, so higher-order gradients are eager's; a call with
side effects, or whose inputs changed since, raises."""

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import CompileWarning, autograd, nn, optim
from chainrule._compile import _program
from conftest import N, T


@pytest.fixture(autouse=True, params=["loop", "source"])
def tier(request, monkeypatch):
    """Each test on both replay tiers (the loop, or source from the first replay on); any
    CompileWarning fails a test."""
    monkeypatch.setattr(_program, "SOURCE_AFTER", 0 if request.param == "source" else 10**9)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        yield


def close(got, expected):
    np.testing.assert_allclose(N(got), N(expected), rtol=1e-12, atol=1e-13)


def loss(x, w):
    return cr.sum(cr.tanh(x @ w) ** 2)


def test_grad_of_grad_through_a_compiled_function_equals_eager_at_every_call():
    rng = np.random.default_rng(0)
    compiled = cr.compile(loss)
    w = T(rng.normal(size=(3, 2)), requires_grad=True)
    for _ in range(4):
        x = rng.normal(size=(4, 3))
        results = []
        for f in (loss, compiled):
            xt = T(x, requires_grad=True)
            y = f(xt, w)
            (gx,) = autograd.grad(y, (xt,), create_graph=True)
            hx, hw = autograd.grad(cr.sum(gx * gx), (xt, w))
            results.append((y, gx, hx, hw))
        for got, expected in zip(results[1], results[0]):
            close(got, expected)
    assert compiled.traces == 1
    assert results[1][0].grad_fn.name() == "CompiledBackward"


def test_gradgradcheck_of_a_compiled_function_by_finite_differences():
    rng = np.random.default_rng(1)
    compiled = cr.compile(lambda x, w: cr.sin(x @ w) * cr.exp(w[0]))
    for _ in range(3):  # the first call traces, the others replay
        x = T(rng.normal(size=(2, 3)), requires_grad=True)
        w = T(rng.normal(size=(3, 2)), requires_grad=True)
        assert autograd.gradcheck(compiled, (x, w))
        assert autograd.gradgradcheck(compiled, (x, w))
    assert compiled.traces == 1


def test_hessian_vector_product_through_a_compiled_loss_equals_eager():
    """Newton-CG's use: the gradient with create_graph, then its product with a vector
    differentiated again."""
    rng = np.random.default_rng(2)
    a = T(rng.normal(size=(5, 3)))

    def rosen_like(p):
        return cr.sum((a @ p) ** 4) + cr.sum(cr.cos(p))

    compiled = cr.compile(rosen_like)
    for _ in range(3):
        p0, v = rng.normal(size=3), T(rng.normal(size=3))
        hvps = []
        for f in (rosen_like, compiled):
            p = T(p0, requires_grad=True)
            (g,) = autograd.grad(f(p), (p,), create_graph=True)
            (hv,) = autograd.grad(cr.sum(g * v), (p,))
            hvps.append(hv)
        close(hvps[1], hvps[0])


def test_gradient_penalty_training_with_a_compiled_forward_equals_eager():
    """A WGAN-GP-style step: the model's forward compiled, the penalty on the input gradient
    (create_graph) and the step outside; the weights follow eager's."""

    def make():
        cr.random.manual_seed(0)
        return nn.Sequential(nn.Linear(3, 8), nn.Tanh(), nn.Linear(8, 1))

    rng = np.random.default_rng(3)
    data = [rng.normal(size=(6, 3)) for _ in range(4)]
    weights = []
    for compiled in (False, True):
        model = make()
        forward = cr.compile(model) if compiled else model
        opt = optim.SGD(model.parameters(), lr=0.1)
        for x in data:
            xt = T(x, requires_grad=True)
            out = forward(xt)
            (gx,) = autograd.grad(cr.sum(out), (xt,), create_graph=True)
            penalty = cr.mean((cr.sqrt(cr.sum(gx * gx, axis=1)) - 1.0) ** 2)
            opt.zero_grad()
            (cr.mean(out) + 10.0 * penalty).backward()
            opt.step()
        weights.append([p.detach() for p in model.parameters()])
        if compiled:
            assert forward.traces == 1
    for got, expected in zip(weights[1], weights[0]):
        close(got, expected)


def test_create_graph_through_outputs_of_which_one_got_no_gradient():
    rng = np.random.default_rng(4)

    def two(x):
        return cr.sin(x) * 2, cr.sum(x**3)

    compiled = cr.compile(two)
    for _ in range(3):
        x0 = rng.normal(size=3)
        results = []
        for f in (two, compiled):
            x = T(x0, requires_grad=True)
            _, s = f(x)
            (g,) = autograd.grad(s, (x,), create_graph=True)
            (h,) = autograd.grad(cr.sum(g), (x,))
            results.append((g, h))
        close(results[1][0], results[0][0])
        close(results[1][1], results[0][1])


def test_create_graph_through_a_compiled_function_with_side_effects_raises():
    """A call that writes a tensor from outside would write it twice if run again."""
    count = T(np.zeros(()))

    def counting(x):
        with cr.no_grad():
            count.add_(1.0)
        return cr.sum(x * x)

    compiled = cr.compile(counting)
    for _ in range(2):
        x = T(np.ones(2), requires_grad=True)
        y = compiled(x)
    with pytest.raises(NotImplementedError, match="writes in place"):
        autograd.grad(y, (x,), create_graph=True)
    assert float(count) == 2.0
    (g,) = autograd.grad(compiled(x), (x,))  # first order replays the recorded backward
    close(g, T(np.full(2, 2.0)))


def test_create_graph_after_an_input_was_written_in_place_raises():
    compiled = cr.compile(lambda x, w: cr.sum(x * w))
    w = T(np.ones(2), requires_grad=True)
    for _ in range(2):
        x = T(np.arange(2.0))
        y = compiled(x, w)
    with cr.no_grad():
        x.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        autograd.grad(y, (w,), create_graph=True)


def test_create_graph_after_a_tensor_from_outside_was_replaced_raises():
    state = {"w": T(np.ones(2), requires_grad=True)}
    compiled = cr.compile(lambda x: cr.sum(state["w"] * x * x))
    for _ in range(2):
        x = T(np.arange(2.0), requires_grad=True)
        y = compiled(x)
    state["w"] = T(np.full(2, 2.0), requires_grad=True)
    with pytest.raises(RuntimeError, match="replaced"):
        autograd.grad(y, (x,), create_graph=True)


def test_create_graph_after_a_tensor_from_outside_was_written_in_place_raises():
    """A function of no tensor argument: the tensor it reads from outside holds the first
    slot of its recording."""
    w = T(np.array([1.0, 2.0]), requires_grad=True)
    compiled = cr.compile(lambda: cr.sum(w**3))
    for _ in range(2):
        y = compiled()
    with cr.no_grad():
        w.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        autograd.grad(y, (w,), create_graph=True)
