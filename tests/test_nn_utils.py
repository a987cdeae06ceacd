"""chainrule.nn.utils: gradient clipping by joint norm (PyTorch's min(1, max / (norm + 1e-6))
scale, any norm order, 'inf' spelled as a string too; also as get_total_norm then
clip_grads_with_norm_) and by value; PyTorch's `foreach` taken; parameters to one vector and
back."""

import math

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.nn.utils import (
    clip_grad_norm_,
    clip_grad_value_,
    clip_grads_with_norm_,
    get_total_norm,
    parameters_to_vector,
    vector_to_parameters,
)
from conftest import N, T
from helpers import assert_values


def _params():
    a, b = nn.Parameter(T(np.ones(3))), nn.Parameter(T(np.ones((2, 2))))
    a.grad, b.grad = T([3.0, 4.0, 0.0]), T(np.full((2, 2), 2.0))
    return a, b


def test_clip_grad_norm_scales_all_gradients_by_their_joint_norm():
    a, b = _params()
    grad_a = a.grad
    total = clip_grad_norm_([a, b], 1.0)
    norm = math.sqrt(9 + 16 + 4 * 4)
    assert_values(total, norm)
    scale = 1.0 / (norm + 1e-6)
    assert_values(a.grad, np.array([3.0, 4.0, 0.0]) * scale)
    assert_values(b.grad, np.full((2, 2), 2.0 * scale))
    assert a.grad is grad_a  # in place


def test_clip_grad_norm_of_other_orders_and_below_the_limit():
    a, b = _params()
    assert_values(clip_grad_norm_([a, b], 1.0, norm_type=math.inf), 4.0)
    assert_values(a.grad, np.array([3.0, 4.0, 0.0]) / (4.0 + 1e-6))
    a, b = _params()
    assert_values(clip_grad_norm_((p for p in (a, b)), 100.0, norm_type=1), 15.0)
    assert_values(a.grad, [3.0, 4.0, 0.0])  # within the limit: unchanged
    assert_values(clip_grad_norm_(nn.Parameter(T(np.ones(2))), 1.0), 0.0)  # no gradient


def test_clip_grad_norm_takes_inf_as_a_string_and_foreach():
    # PyTorch reads norm_type with float(): 'inf' is the largest magnitude (a TypeError before).
    a, b = _params()
    assert_values(clip_grad_norm_([a, b], 1.0, norm_type="inf", foreach=True), 4.0)
    assert_values(a.grad, np.array([3.0, 4.0, 0.0]) / (4.0 + 1e-6))
    a, b = _params()
    clip_grad_value_([a, b], 2.5, foreach=False)
    assert_values(a.grad, [2.5, 2.5, 0.0])


def test_get_total_norm_then_clip_grads_with_norm_is_clip_grad_norm_():
    a, b = _params()
    total = get_total_norm([a.grad, b.grad], norm_type=1.0)
    assert_values(total, 15.0)
    clip_grads_with_norm_([a, b], 3.0, total)
    assert_values(a.grad, np.array([3.0, 4.0, 0.0]) * 3.0 / (15.0 + 1e-6))
    assert_values(b.grad, np.full((2, 2), 2.0 * 3.0 / (15.0 + 1e-6)))
    assert_values(get_total_norm([]), 0.0)
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        get_total_norm([T([np.nan])], error_if_nonfinite=True)


def test_clip_grad_norm_can_refuse_a_non_finite_norm():
    a, b = _params()
    a.grad = T([np.inf, 0.0, 0.0])
    with pytest.raises(RuntimeError, match="is non-finite, so it cannot be clipped"):
        clip_grad_norm_([a, b], 1.0, error_if_nonfinite=True)


def test_clip_grad_value_clamps_each_element():
    a, b = _params()
    clip_grad_value_([a, b], 2.5)
    assert_values(a.grad, [2.5, 2.5, 0.0])
    assert_values(b.grad, np.full((2, 2), 2.0))


def test_parameters_to_vector_and_back():
    model = nn.Linear(3, 2)
    vec = parameters_to_vector(model.parameters())
    assert vec.shape == (8,) and vec.requires_grad
    assert_values(vec[:6], N(model.weight.detach()).ravel())
    weight = model.weight
    vector_to_parameters(T(np.arange(8.0)), model.parameters())
    assert model.weight is weight and weight.is_leaf and weight.requires_grad
    assert_values(model.weight.detach(), np.arange(6.0).reshape(2, 3))
    assert_values(model.bias.detach(), [6.0, 7.0])
    with pytest.raises(TypeError, match="expected torch.Tensor"):
        vector_to_parameters(np.zeros(8), model.parameters())


def test_clipping_inside_a_training_step():
    model = nn.Linear(4, 1)
    loss = cr.sum(model(T(np.full((8, 4), 10.0))) ** 2)
    loss.backward()
    clip_grad_norm_(model.parameters(), 0.5)
    grads = [N(p.grad) for p in model.parameters()]
    assert math.sqrt(sum((g**2).sum() for g in grads)) == pytest.approx(0.5, rel=1e-5)
