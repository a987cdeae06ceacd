"""Memory: with the cyclic GC off, a graph and its arrays go the moment nothing refers to them;
nodes keep only what their derivative needs; .grad buffers are never shared."""

import gc
import weakref

import numpy as np
import pytest

import chainrule as cr
from chainrule._tensor import alias_group
from conftest import N, T


@pytest.fixture(autouse=True)
def no_cyclic_gc():
    """Objects must be freed by reference counting alone: a cycle would leak here."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def array_of(t):
    """The raw backend array a tensor holds (what a node may save)."""
    return t._data


def test_graph_and_its_arrays_go_with_its_last_tensor():
    x = T([0.5, 1.0], requires_grad=True)
    h = cr.exp(x)
    y = cr.sin(h * 2.0).sum()
    refs = [weakref.ref(h.grad_fn), weakref.ref(y.grad_fn), weakref.ref(array_of(h))]
    del h
    assert all(r() is not None for r in refs)
    del y
    assert all(r() is None for r in refs)


def test_activations_are_gone_after_backward_and_del_loss():
    x = T(np.ones((2, 3)), requires_grad=True)
    w = T(np.full((3, 4), 0.1), requires_grad=True)
    pre = x @ w
    h = cr.tanh(pre)
    loss = (h * h).sum()
    refs = [weakref.ref(t) for t in (pre, h)]
    refs += [weakref.ref(array_of(t)) for t in (pre, h)]
    refs += [weakref.ref(t.grad_fn) for t in (pre, h, loss)]
    del pre, h
    loss.backward()
    del loss
    assert all(r() is None for r in refs)
    assert x.grad.shape == (2, 3) and w.grad.shape == (3, 4)


def test_backward_releases_saved_activations_while_the_loss_lives():
    x = T([0.5, 1.0], requires_grad=True)
    h = cr.tanh(x * 3.0)
    loss = (h * h).sum()
    activation = weakref.ref(array_of(h))
    del h
    assert activation() is not None
    loss.backward()
    assert activation() is None


def test_multiply_by_a_constant_keeps_the_constant_not_the_other_input():
    a = T([1.0, 2.0], requires_grad=True)
    c = T([3.0, 4.0])
    x = a + 1.0
    y = x * c
    x_array, c_array = weakref.ref(array_of(x)), weakref.ref(array_of(c))
    del x, c
    assert x_array() is None
    assert c_array() is not None
    y.sum().backward()
    np.testing.assert_array_equal(N(a.grad), [3.0, 4.0])


def test_exp_keeps_its_output_not_its_input():
    a = T([0.5, 1.0], requires_grad=True)
    u = a * 2.0
    v = cr.exp(u)
    loss = v.sum()
    u_array, v_array = weakref.ref(array_of(u)), weakref.ref(array_of(v))
    del u, v
    assert u_array() is None
    assert v_array() is not None
    loss.backward()
    np.testing.assert_allclose(N(a.grad), 2.0 * np.exp([1.0, 2.0]), rtol=1e-15)


def test_power_keeps_its_output_only_when_the_exponent_needs_a_gradient():
    a = T([1.0, 2.0], requires_grad=True)
    power = (a + 1.0) ** T([2.0, 3.0])
    loss = power.sum()
    power_array = weakref.ref(array_of(power))
    del power
    assert power_array() is None
    loss.backward()
    np.testing.assert_array_equal(N(a.grad), [4.0, 27.0])


@pytest.mark.parametrize(
    "f",
    [cr.exp, cr.sin, lambda t: t * t, lambda t: t**3],
    ids=["exp", "sin", "square", "cube"],
)
def test_a_leaf_goes_when_dropped_even_after_backward_with_create_graph(f):
    x = T([0.5, 1.0], requires_grad=True)
    loss = f(x).sum()
    loss.backward(create_graph=True)
    assert x.grad.grad_fn is not None
    leaf, grad = weakref.ref(x), weakref.ref(x.grad)
    del x, loss
    assert leaf() is None
    assert grad() is None


def test_a_graph_does_not_keep_a_dropped_leaf_alive():
    x = T([0.5, 1.0], requires_grad=True)
    w = T([2.0, 3.0], requires_grad=True)
    loss = (cr.exp(x) * w).sum()
    leaf = weakref.ref(x)
    del x
    assert leaf() is None
    loss.backward()
    np.testing.assert_allclose(N(w.grad), np.exp([0.5, 1.0]), rtol=1e-15)


def test_grad_is_not_shared_between_two_leaves():
    x = T([1.0, 2.0], requires_grad=True)
    y = T([3.0, 4.0], requires_grad=True)
    (x + y).sum().backward()
    assert x.grad is not y.grad
    x.sum().backward()
    np.testing.assert_array_equal(N(x.grad), [2.0, 2.0])
    np.testing.assert_array_equal(N(y.grad), [1.0, 1.0])


def test_grad_is_not_the_gradient_passed_by_the_user():
    x = T([1.0, 2.0], requires_grad=True)
    y = T([3.0, 4.0], requires_grad=True)
    gradient = T([5.0, 6.0])
    (x + y).backward(gradient)
    assert x.grad is not gradient and y.grad is not gradient
    (x * 1.0).sum().backward()
    np.testing.assert_array_equal(N(gradient), [5.0, 6.0])
    np.testing.assert_array_equal(N(x.grad), [6.0, 7.0])
    np.testing.assert_array_equal(N(y.grad), [5.0, 6.0])


def test_grads_written_with_create_graph_are_not_shared():
    x = T([1.0, 2.0], requires_grad=True)
    y = T([3.0, 4.0], requires_grad=True)
    (x + y).sum().backward(create_graph=True)
    assert x.grad is not y.grad
    x.sum().backward()
    np.testing.assert_array_equal(N(x.grad), [2.0, 2.0])
    np.testing.assert_array_equal(N(y.grad), [1.0, 1.0])


def test_a_loop_of_dying_views_keeps_the_alias_group_small():
    # y[1:3] = x[0:2] in a loop: each step's view of x joins x's alias group and dies. The
    # group kept an entry per view ever made (and each new view passed over all of them:
    # quadratic in the steps); it now drops the dead ones as it grows.
    x = T(np.ones((4, 4)))
    x.requires_grad_()
    y = x * 1.0
    for _ in range(1000):
        y[1:3] = x[0:2]
    group = alias_group(x)
    assert group is not None
    assert len(group.members) <= 40
    assert len(group.arrays) <= 40
    y.sum().backward()
    np.testing.assert_array_equal(N(x.grad), np.repeat([[2.0], [1.0], [0.0], [1.0]], 4, axis=1))
