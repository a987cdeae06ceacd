"""gradcheck's and gradgradcheck's options as PyTorch documents them: nondet_tol (reentrant
backward), check_undefined_grad, check_batched_grad, fast_mode, and those chainrule refuses."""

import itertools

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import Function, GradcheckError, gradcheck, gradgradcheck
from helpers import leaf

X = np.array([0.3, -0.8, 1.2])


class NoisyBackward(Function):
    """2x, whose backward adds a different tiny amount at every call (not reentrant)."""

    calls = itertools.count()

    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * (2 + 1e-10 * next(NoisyBackward.calls))


def test_a_backward_that_is_not_reentrant_fails_unless_within_nondet_tol():
    with pytest.raises(GradcheckError, match="Backward is not reentrant"):
        gradcheck(NoisyBackward.apply, (leaf(X),))
    assert not gradcheck(NoisyBackward.apply, (leaf(X),), raise_exception=False)
    assert gradcheck(NoisyBackward.apply, (leaf(X),), nondet_tol=1e-6)


class TwoOutputs(Function):
    """(2x, 3x) with set_materialize_grads(False): backward gets None for an output that
    received no gradient. `bias` is added to the gradient: a backward that is not linear in
    the output gradients gives nonzero gradients when they are zero."""

    bias = 0.0

    @staticmethod
    def forward(ctx, x):
        ctx.set_materialize_grads(False)
        return x * 2, x * 3

    @classmethod
    def backward(cls, ctx, g1, g2):
        parts = [g * k for g, k in ((g1, 2), (g2, 3)) if g is not None]
        return sum(parts[1:], parts[0]) + cls.bias


class Biased(TwoOutputs):
    bias = 1.0


def test_check_undefined_grad_finds_gradients_where_the_output_gradients_are_zero():
    assert gradcheck(TwoOutputs.apply, (leaf(X),))
    with pytest.raises(GradcheckError, match="Expected all input grads to be undefined or zero"):
        gradcheck(Biased.apply, (leaf(X),))
    # Without it, the Jacobian's check finds the same backward wrong, later.
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(Biased.apply, (leaf(X),), check_undefined_grad=False)


class Unbatchable(Function):
    """x^2, whose backward reads a Python number off the gradient: not vmappable."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * x

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return 2 * x * g if float(cr.sum(g * 0)) == 0 else None


def test_check_batched_grad_runs_backward_under_vmap():
    assert gradcheck(lambda x: cr.sin(x) * cr.sum(x), (leaf(X),), check_batched_grad=True)
    assert gradcheck(Unbatchable.apply, (leaf(X),))
    with pytest.raises(GradcheckError, match="While computing batched gradients"):
        gradcheck(Unbatchable.apply, (leaf(X),), check_batched_grad=True)


class WrongBackward(Function):
    """sin, with the derivative off by 1%."""

    @staticmethod
    def forward(x):
        return cr.sin(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * cr.cos(x) * 1.01

    @staticmethod
    def jvp(ctx, t):
        return t * cr.cos(ctx.x) * 1.01

    @staticmethod
    def setup_context(ctx, inputs, output):
        ctx.x = inputs[0]
        ctx.save_for_backward(inputs[0])


def test_fast_mode_checks_projections_of_the_jacobian():
    def two(x, y):
        return cr.exp(x) * cr.sum(y), cr.tanh(y) * x[0]

    x, y = leaf(X), leaf([[0.5, -0.25], [1.5, 0.1]])
    assert gradcheck(two, (x, y), fast_mode=True, check_forward_ad=True)
    assert gradgradcheck(two, (x, y), fast_mode=True)
    with pytest.raises(GradcheckError, match="fast mode.*analytical gradient"):
        gradcheck(WrongBackward.apply, (leaf(X),), fast_mode=True)
    with pytest.raises(GradcheckError, match="fast mode.*forward-mode derivative"):
        gradcheck(
            WrongBackward.apply,
            (leaf(X),),
            fast_mode=True,
            check_backward_ad=False,
            check_forward_ad=True,
        )
    assert not gradcheck(WrongBackward.apply, (leaf(X),), fast_mode=True, raise_exception=False)


def test_fast_mode_on_complex_values():
    z = cr.asarray(np.array([0.5 + 1j, -0.3 + 0.2j])).requires_grad_()
    assert gradcheck(lambda z: cr.exp(z) * cr.conj(z), (z,), fast_mode=True)
    with pytest.raises(GradcheckError, match="fast mode"):
        gradcheck(lambda z: WrongBackward.apply(cr.real(z)), (z,), fast_mode=True)


def test_gradgradcheck_passes_its_options_to_the_check_of_the_first_derivative():
    assert gradgradcheck(
        lambda x: cr.sin(x) ** 2,
        (leaf(X),),
        nondet_tol=0.0,
        check_undefined_grad=True,
        check_batched_grad=True,
        gen_non_contig_grad_outputs=True,
        check_grad_dtypes=True,
    )
    # The first derivative of WrongBackward, g cos(x) 1.01, is itself right: the check of
    # the second derivative passes only because it differentiates that formula.
    assert gradgradcheck(WrongBackward.apply, (leaf(X),), fast_mode=True)


def test_options_chainrule_does_not_have_raise_clearly():
    with pytest.raises(NotImplementedError, match="sparse"):
        gradcheck(cr.sin, (leaf(X),), masked=True)
    with pytest.raises(NotImplementedError, match="check_batched_forward_grad"):
        gradcheck(cr.sin, (leaf(X),), check_batched_forward_grad=True)


class TimesSum(Function):
    """x * sum(x), its backward with a reduction."""

    @staticmethod
    def forward(ctx, x):
        ctx.save_for_backward(x)
        return x * cr.sum(x)

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * cr.sum(x) + cr.sum(g * x, axis=-1, keepdims=True)


def test_a_function_gets_a_batch_of_gradients_on_any_library():
    # The backward's gradient was wrapped as a tensor of the Function's library, not of
    # vmap's: on array_api_strict, its first reduction failed.
    xps = pytest.importorskip("array_api_strict")
    x = cr.asarray(xps.asarray([0.3, -0.8, 1.2])).requires_grad_()
    y = TimesSum.apply(x)
    gs = cr.asarray(xps.asarray([[1.0, 0.0, 0.0], [0.5, 1.0, -1.0]]))
    (found,) = cr.autograd.grad(y, x, gs, retain_graph=True, is_grads_batched=True)
    expected = [cr.autograd.grad(y, x, g, retain_graph=True)[0] for g in gs]
    np.testing.assert_allclose(np.asarray(found.numpy()), np.stack([e.numpy() for e in expected]))
    assert gradcheck(TimesSum.apply, (x,), check_batched_grad=True)
