"""retain_grad on a tensor then written in place: as PyTorch, the tensor keeps retaining,
and its .grad is the gradient of the value it holds after the write (retain_grad moves to its
new grad_fn), whether the write is an in-place operator, item assignment, a write through a
view of it, a write to the base of a view that retains, or a custom Function's mark_dirty."""

import numpy as np

import chainrule as cr
from chainrule.autograd import Function
from conftest import N, T

X = np.array([0.5, -1.0, 2.0, 1.5])


def test_in_place_operator_keeps_retain_grad_on_the_new_value():
    x = T(X, requires_grad=True)
    h = x * 2.0
    h.retain_grad()
    h *= 3.0
    assert h.retains_grad
    cr.sum(h * h).backward()
    np.testing.assert_allclose(N(h.grad), 12.0 * X)  # d/dh of sum(h^2), h = 6 x
    np.testing.assert_allclose(N(x.grad), 72.0 * X)


def test_item_assignment_keeps_retain_grad_on_the_new_value():
    x = T(X, requires_grad=True)
    h = x * 2.0
    h.retain_grad()
    h[0] = x[1] * 5.0
    cr.sum(h * h).backward()
    np.testing.assert_allclose(N(h.grad), 2.0 * N(h))


def test_write_through_a_view_keeps_the_bases_retain_grad_on_its_new_value():
    x = T(X, requires_grad=True)
    h = x * 2.0
    v = h[:2]
    h.retain_grad()
    v.retain_grad()
    v *= 3.0
    cr.sum(h * h).backward()
    np.testing.assert_allclose(N(h.grad), 2.0 * N(h))
    # v's new history is a view of h's: no gradient reaches it from a loss of h (PyTorch's)
    assert v.retains_grad and v.grad is None


def test_write_to_the_base_keeps_a_views_retain_grad_on_its_new_value():
    x = T(X, requires_grad=True)
    h = x * 2.0
    v = h[1:3]
    v.retain_grad()
    h *= 3.0
    cr.sum(v * v).backward()
    np.testing.assert_allclose(N(v.grad), 2.0 * N(v))
    np.testing.assert_allclose(N(x.grad), [0.0, 72.0 * X[1], 72.0 * X[2], 0.0])


def test_a_functions_dirty_output_keeps_retain_grad():
    class Double(Function):
        @staticmethod
        def forward(ctx, a):
            a *= 2.0
            ctx.mark_dirty(a)
            return a

        @staticmethod
        def backward(ctx, g):
            return 2.0 * g

    x = T(X, requires_grad=True)
    h = x * 2.0
    h.retain_grad()
    Double.apply(h)
    cr.sum(h * h).backward()
    np.testing.assert_allclose(N(h.grad), 2.0 * N(h))
    np.testing.assert_allclose(N(x.grad), 32.0 * X)
