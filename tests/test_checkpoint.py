"""Activation checkpointing: the same gradients (to second order) as the plain block, the
block run once in forward and once more per backward, nothing saved inside the block, the
same random numbers on recomputation, checkpoint_sequential, and checkpoint under transforms."""

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule.autograd import grad, gradcheck, gradgradcheck
from chainrule.autograd.graph import summary
from chainrule.utils.checkpoint import CheckpointError, checkpoint, checkpoint_sequential
from conftest import N, T

RNG = np.random.default_rng(7)
W1 = RNG.normal(size=(4, 4)) * 0.5
W2 = RNG.normal(size=(4, 3)) * 0.5


def block(h, w1, w2):
    return cr.tanh(cr.tanh(h @ w1) @ w2) * cr.exp(h[..., :3])


def test_checkpointed_gradients_equal_plain_ones_to_second_order():
    x = T(RNG.normal(size=(2, 4)), requires_grad=True)
    w1, w2 = T(W1, requires_grad=True), T(W2, requires_grad=True)
    plain = grad(cr.sum(block(x, w1, w2) ** 2), [x, w1, w2], create_graph=True)
    checked = grad(cr.sum(checkpoint(block, x, w1, w2) ** 2), [x, w1, w2], create_graph=True)
    for a, b in zip(plain, checked):
        np.testing.assert_allclose(N(a), N(b), rtol=1e-12)
    second_plain = grad(cr.sum(plain[0]), [x, w1])
    second_checked = grad(cr.sum(checked[0]), [x, w1])
    for a, b in zip(second_plain, second_checked):
        np.testing.assert_allclose(N(a), N(b), rtol=1e-12)


def test_checkpoint_passes_the_finite_difference_checks():
    x = T(RNG.normal(size=(1, 4)), requires_grad=True)
    w1, w2 = T(W1, requires_grad=True), T(W2, requires_grad=True)
    gradcheck(lambda *a: checkpoint(block, *a), (x, w1, w2))
    gradgradcheck(lambda *a: checkpoint(block, *a), (x, w1, w2))


def test_the_block_runs_once_in_forward_and_once_more_in_each_backward():
    calls = []

    def counted(h):
        calls.append(1)
        return cr.sin(h) * h

    x = T([0.5, 1.0], requires_grad=True)
    loss = cr.sum(checkpoint(counted, x))
    assert len(calls) == 1
    loss.backward(retain_graph=True)
    assert len(calls) == 2
    loss.backward()
    assert len(calls) == 3
    np.testing.assert_allclose(
        N(x.grad), 2 * (np.cos([0.5, 1.0]) * [0.5, 1.0] + np.sin([0.5, 1.0]))
    )


def test_a_checkpointed_graph_holds_no_saved_values_of_the_block():
    x = T(RNG.normal(size=(8, 4)), requires_grad=True)
    w1, w2 = T(W1, requires_grad=True), T(W2, requires_grad=True)
    assert summary(cr.sum(block(x, w1, w2))).saved_bytes > 0
    assert summary(cr.sum(checkpoint(block, x, w1, w2))).saved_bytes == 0


def test_recomputation_draws_the_same_random_numbers():
    x = T(np.ones(50), requires_grad=True)
    cr.random.manual_seed(3)
    cr.sum(F.dropout(x * 2.0, 0.5) * x).backward()
    plain = N(x.grad).copy()
    x.grad = None
    cr.random.manual_seed(3)
    cr.sum(checkpoint(lambda h: F.dropout(h * 2.0, 0.5) * h, x)).backward()
    np.testing.assert_array_equal(N(x.grad), plain)


def test_checkpoint_sequential_equals_running_the_functions_in_order():
    fs = [lambda h: cr.tanh(h * 1.5), cr.sin, lambda h: h * h, cr.exp, lambda h: h / 3.0]
    x = T(RNG.normal(size=5), requires_grad=True)
    (expected,) = grad(cr.sum(fs[4](fs[3](fs[2](fs[1](fs[0](x)))))), x)
    for segments in (1, 2, 3, 5):
        (got,) = grad(cr.sum(checkpoint_sequential(fs, segments, x)), x)
        np.testing.assert_allclose(N(got), N(expected), rtol=1e-12)


def test_forward_over_reverse_through_a_checkpoint_equals_the_plain_block():
    # hessian (jacfwd of jacrev) and jvp of grad: the first run saved the tangents'
    # operations' values too; the recomputation, given its inputs without their tangents,
    # saved fewer (CheckpointError).
    x = T(RNG.normal(size=(2, 4)))
    w1, w2 = T(W1), T(W2)

    def loss(w, check):
        out = checkpoint(block, x, w, w2) if check else block(x, w, w2)
        return cr.sum(out**2)

    for transform in (
        cr.func.hessian,
        lambda f: lambda w: cr.func.jvp(cr.func.grad(f), (w,), (w2 @ w2.mT,))[1],
    ):
        plain = transform(lambda w: loss(w, False))(w1)
        checked = transform(lambda w: loss(w, True))(w1)
        np.testing.assert_allclose(N(checked), N(plain), rtol=1e-12)


def test_a_recomputation_outside_the_transform_of_the_first_run_raises_checkpoint_error():
    x = T(RNG.normal(size=(2, 4)))
    w1, w2 = T(W1, requires_grad=True), T(W2)
    loss = cr.sum(cr.func.vmap(lambda h: checkpoint(block, h, w1, w2))(x))
    with pytest.raises(CheckpointError, match="vmap that has exited"):
        loss.backward()  # TypeError from inside the block, mixing vmap's arrays with w1
    with pytest.raises(CheckpointError, match="forward-mode level"):
        cr.func.jacrev(cr.func.jacfwd(lambda w: cr.sum(checkpoint(block, x, w, w2))))(w1)
