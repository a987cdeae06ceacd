"""Hooks behind a write over every element (`y[...] = v`): the values written over get a
gradient known to be zero (_node.ZERO), on which no backward function runs; the hooks of the
tensors behind the write still run, on zeros, as PyTorch's do (PyTorch 2.13's answers are
written into each test)."""

import math

import numpy as np

import chainrule as cr
from conftest import N, T
from helpers import leaf

X = [1.0, 2.0, 3.0]


def overwritten(h):
    """h times one, every element then written over: h's gradient is known to be zero."""
    y = h * 1.0
    y[...] = 0.0
    return y


def test_a_hook_on_a_tensor_behind_a_write_over_every_element_runs_on_zeros():
    x = leaf(X)
    h = x * 2.0
    seen = []
    h.register_hook(lambda g: seen.append(N(g)))
    (overwritten(h) * T([1.0, 2.0, 3.0])).sum().backward()
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0], np.zeros(3))
    np.testing.assert_array_equal(N(x.grad), np.zeros(3))


def test_retain_grad_behind_a_write_over_every_element_keeps_zeros():
    x = leaf(X)
    h = x * 2.0
    h.retain_grad()
    overwritten(h).sum().backward()
    assert h.grad is not None
    assert h.grad.shape == (3,) and h.grad.dtype == h.dtype
    np.testing.assert_array_equal(N(h.grad), np.zeros(3))


def test_a_hook_that_replaces_a_known_zero_gradient_sends_its_gradient_on():
    # PyTorch: x.grad == [2, 2, 2] (the hook's ones, through h = 2 x)
    x = leaf(X)
    h = x * 2.0
    h.register_hook(lambda g: g + 1.0)
    overwritten(h).sum().backward()
    np.testing.assert_array_equal(N(x.grad), [2.0, 2.0, 2.0])


def test_a_hook_that_keeps_a_known_zero_gradient_keeps_it_from_backward_functions():
    # No backward function runs on it: log's 1 / 0 can't make the gradient NaN (PyTorch's is
    # [nan, 0, 0] here).
    x = leaf([0.0, 2.0, 3.0])
    with np.errstate(divide="ignore"):
        h = cr.log(x)
    seen = []
    h.register_hook(lambda g: seen.append(N(g)))
    overwritten(h).sum().backward()
    assert len(seen) == 1
    np.testing.assert_array_equal(N(x.grad), np.zeros(3))


def test_a_nodes_hooks_run_on_a_known_zero_gradient():
    # PyTorch: the prehook gets (zeros,), the hook (zeros, None) and (zeros,). chainrule's
    # node knows its output's shape from the tensor's hook; the grad inputs it hands on
    # unrun are None.
    x = leaf(X)
    h = x * 2.0
    h.register_hook(lambda g: None)
    pre, post = [], []
    h.grad_fn.register_prehook(lambda outs: pre.append([N(o) for o in outs]))
    h.grad_fn.register_hook(lambda ins, outs: post.append((ins, [N(o) for o in outs])))
    overwritten(h).sum().backward()
    assert len(pre) == 1 and len(post) == 1
    np.testing.assert_array_equal(pre[0][0], np.zeros(3))
    assert post[0][0] == (None, None)
    np.testing.assert_array_equal(post[0][1][0], np.zeros(3))


def test_a_nodes_prehook_alone_runs_on_a_known_zero_gradient_as_none():
    x = leaf(X)
    h = x * 2.0
    pre = []
    h.grad_fn.register_prehook(lambda outs: pre.append(outs))
    overwritten(h).sum().backward()
    assert pre == [(None,)]
    np.testing.assert_array_equal(N(x.grad), np.zeros(3))


def test_a_nodes_prehook_can_replace_a_known_zero_gradient():
    x = leaf(X)
    h = x * 2.0
    h.grad_fn.register_prehook(lambda outs: (cr.ones_like(h),))
    overwritten(h).sum().backward()
    np.testing.assert_array_equal(N(x.grad), [2.0, 2.0, 2.0])


def test_grad_runs_the_hooks_behind_a_write_over_every_element():
    # PyTorch: the hook sees zeros, grad returns zeros (allow_unused or not)
    x = leaf(X)
    h = x * 2.0
    seen = []
    h.register_hook(lambda g: seen.append(N(g)))
    (gx,) = cr.autograd.grad(overwritten(h).sum(), [x], allow_unused=True)
    assert len(seen) == 1
    np.testing.assert_array_equal(seen[0], np.zeros(3))
    np.testing.assert_array_equal(N(gx), np.zeros(3))


def test_a_hook_on_a_known_zero_gradient_under_create_graph_sees_a_tensor_and_differentiates():
    x = leaf(X)
    h = x * x
    seen = []

    def hook(g):
        seen.append(g)
        return g + h  # a replacement with history: d/dx of sum(h) through h = x * x

    h.register_hook(hook)
    (gx,) = cr.autograd.grad(overwritten(h).sum(), [x], create_graph=True)
    assert isinstance(seen[0], cr.Tensor) and not seen[0].requires_grad
    # PyTorch: gx = [2, 16, 54]; its gradient [8, 40, 108] (the hook runs again in the
    # second backward: 6 x^2 + 2 x^3)
    np.testing.assert_allclose(N(gx), [2.0, 16.0, 54.0], rtol=1e-15)
    (gxx,) = cr.autograd.grad(gx.sum(), [x])
    np.testing.assert_allclose(N(gxx), [8.0, 40.0, 108.0], rtol=1e-15)


def test_hooks_on_the_outputs_of_a_node_with_several_run_on_zeros():
    # PyTorch: each hook of an output behind the write runs on zeros
    x = leaf(X)
    a, b, c = cr.unstack(x * 2.0)
    seen = {}
    a.register_hook(lambda g: seen.update(a=N(g)))
    b.register_hook(lambda g: seen.update(b=N(g)))
    overwritten(cr.stack([a, b, c])).sum().backward()
    assert sorted(seen) == ["a", "b"]
    assert seen["a"].shape == () and seen["a"] == 0.0 and seen["b"] == 0.0
    np.testing.assert_array_equal(N(x.grad), np.zeros(3))
    assert not math.isnan(float(N(x.grad).sum()))
