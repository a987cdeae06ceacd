"""Custom operations with autograd.Function: first and second derivatives, several outputs
(non-tensor ones pass through), saved tensors, the output gradient's dtype, and the errors for
a backward that returns the wrong gradients."""

import gc
import weakref

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import Function, grad, gradcheck, gradgradcheck
from conftest import N, T


class Exp(Function):
    @staticmethod
    def forward(ctx, x):
        out = cr.exp(x)
        ctx.save_for_backward(out)
        return out

    @staticmethod
    def backward(ctx, g):
        (out,) = ctx.saved_tensors
        return g * out


class ScaledProductAndSum(Function):
    """(k x y, x + y) for a Python number k: two outputs, a non-tensor argument."""

    @staticmethod
    def forward(ctx, x, y, k):
        ctx.k = k
        ctx.save_for_backward(x, y)
        return x * y * k, x + y

    @staticmethod
    def backward(ctx, g_product, g_sum):
        x, y = ctx.saved_tensors
        gx = g_product * y * ctx.k + g_sum
        gy = g_product * x * ctx.k + g_sum
        return gx, gy, None


class Double(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2.0

    @staticmethod
    def backward(ctx, g):
        return g * 2.0


def test_a_function_saving_its_output_differentiates_to_second_order():
    x = T([0.5, 1.0, -0.3], requires_grad=True)
    assert gradcheck(Exp.apply, (x,))
    assert gradgradcheck(Exp.apply, (x,))
    assert Exp.apply(x).grad_fn.name() == "ExpBackward"


def test_a_function_with_two_outputs_and_a_number_argument():
    x, y = T([0.5, 1.0], requires_grad=True), T([2.0, -1.0], requires_grad=True)

    def both(a, b):
        return ScaledProductAndSum.apply(a, b, 3.0)

    assert gradcheck(both, (x, y))
    assert gradgradcheck(both, (x, y))


@pytest.mark.parametrize("materialize", [True, False])
def test_an_output_that_receives_no_gradient_gets_zeros_or_none(materialize):
    seen = []

    class Pair(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(materialize)
            return x * 1.0, x * 2.0

        @staticmethod
        def backward(ctx, g1, g2):
            seen.append(g1)
            return g2 * 2.0

    x = T([1.0, 2.0], requires_grad=True)
    (g,) = grad(Pair.apply(x)[1].sum(), x)
    np.testing.assert_array_equal(N(g), [2.0, 2.0])
    if materialize:
        np.testing.assert_array_equal(N(seen[0]), [0.0, 0.0])
    else:
        assert seen == [None]


def test_needs_input_grad_and_no_node_when_nothing_needs_grad():
    flags = []

    class Record(Function):
        @staticmethod
        def forward(ctx, x, y):
            flags.append(ctx.needs_input_grad)
            return x + y

        @staticmethod
        def backward(ctx, g):
            return g, g

    x, c = T([1.0], requires_grad=True), T([2.0])
    assert Record.apply(x, c).grad_fn is not None
    assert Record.apply(c, c).grad_fn is None
    assert flags == [(True, False), (False, False)]


def test_saved_tensors_are_freed_by_backward_but_a_function_that_saved_none_runs_again():
    x = T([1.0, 2.0], requires_grad=True)
    y = Exp.apply(x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    z = Double.apply(x).sum()
    z.backward()
    z.backward()


def test_a_backward_returning_a_wrong_shape_or_count_raises():
    class WrongShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return cr.sum(g)

    class WrongCount(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            return g, g

    x = T([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="invalid gradient at index 0"):
        WrongShape.apply(x).sum().backward()
    with pytest.raises(RuntimeError, match="incorrect number of gradients"):
        WrongCount.apply(x).sum().backward()
    assert x.grad is None


def test_a_function_node_keeps_no_reference_cycle():
    gc.disable()
    try:
        x = T([0.5], requires_grad=True)
        out = Exp.apply(x)
        node = weakref.ref(out.grad_fn)
        del out
        assert node() is None
    finally:
        gc.enable()


@pytest.mark.regression
def test_a_function_may_return_non_tensors_which_pass_through_without_gradient():
    class WithCount(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2.0, 7, "label"

        @staticmethod
        def backward(ctx, g, g_count, g_label):
            assert g_count is None and g_label is None
            return g * 2.0

    x = T([1.0, 2.0], requires_grad=True)
    y, count, label = WithCount.apply(x)
    assert (count, label) == (7, "label")
    cr.sum(y).backward()
    np.testing.assert_array_equal(N(x.grad), [2.0, 2.0])


@pytest.mark.regression
def test_a_function_receives_its_output_gradient_in_the_output_dtype():
    seen = []

    class Identity(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1.0

        @staticmethod
        def backward(ctx, g):
            seen.append(g.dtype)
            return g

    x = T([1.0, 2.0], dtype="float32", requires_grad=True)
    y = cr.concat([Identity.apply(x), T([5.0])])
    cr.sum(y * y).backward(create_graph=True)
    assert seen == [cr.float32]
