"""A custom autograd.Function that writes an input in place (mark_dirty) where the input shares
memory with other tensors: the written view's base, and the live views of the tensor written,
take the Function's history as a recorded in-place write gives it (CopySlices), with the
gradients PyTorch gives."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import Function, gradcheck, gradgradcheck
from conftest import N, T


class DoubleInPlace(Function):
    @staticmethod
    def forward(ctx, x):
        x *= 2.0
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return 2.0 * g


class AddInto(Function):
    @staticmethod
    def forward(ctx, x, w):
        x += w
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g, g


X = [1.0, 2.0, 3.0, 4.0]


def test_writing_a_view_gives_its_base_the_functions_gradient():
    x = T(X, requires_grad=True)
    h = x * 1.0
    v = h[1:3]
    y = DoubleInPlace.apply(v)
    assert y is v
    assert h.grad_fn.name() == "CopySlices"
    np.testing.assert_array_equal(N(h), [1.0, 4.0, 6.0, 4.0])
    (g,) = cr.autograd.grad(cr.sum(h * h), x)
    # d/dx of x0^2 + (2 x1)^2 + (2 x2)^2 + x3^2 (PyTorch: [2, 16, 24, 8])
    np.testing.assert_allclose(N(g), [2.0, 16.0, 24.0, 8.0])


def test_writing_a_base_gives_its_live_views_the_functions_gradient():
    x = T(X, requires_grad=True)
    h = x * 1.0
    v = h[1:3]
    DoubleInPlace.apply(h)
    np.testing.assert_array_equal(N(v), [4.0, 6.0])
    (g,) = cr.autograd.grad(cr.sum(v * v), x)
    np.testing.assert_allclose(N(g), [0.0, 16.0, 24.0, 0.0])


def test_writing_a_value_with_history_through_a_view_of_a_constant_records_the_base():
    x = T(X, requires_grad=True)
    h = cr.zeros(4, dtype=x.dtype)
    v = h[1:3]
    AddInto.apply(v, x[:2] * 1.0)
    assert h.grad_fn.name() == "CopySlices"
    (g,) = cr.autograd.grad(cr.sum(h * cr.arange(4.0, dtype=x.dtype)), x)
    np.testing.assert_allclose(N(g), [1.0, 2.0, 0.0, 0.0])


def test_writing_a_view_of_a_leaf_that_requires_grad_raises():
    x = T(X, requires_grad=True)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        DoubleInPlace.apply(x[1:3])


def test_gradient_through_a_dirty_view_matches_finite_differences_to_second_order():
    def f(x):
        h = x * 1.0
        AddInto.apply(h[1:3], cr.sin(x[:2]))
        return cr.sin(h) * h

    x = T([0.3, -0.7, 1.1, 0.5], requires_grad=True)
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))
