"""Module hooks with PyTorch's semantics: forward pre-hooks (may replace the arguments),
forward hooks (may replace the output), full backward hooks (the gradients of this call's
inputs and outputs; may replace grad_input), and their handles."""

import numpy as np

import chainrule as cr
from chainrule import nn
from conftest import T
from helpers import assert_values


def _linear():
    layer = nn.Linear(3, 2)
    layer.load_state_dict({"weight": np.arange(6.0).reshape(2, 3) / 10, "bias": np.full(2, 0.5)})
    return layer


def test_forward_pre_hook_and_forward_hook_see_and_may_replace_arguments_and_output():
    layer, seen = _linear(), []
    layer.register_forward_pre_hook(lambda m, args: seen.append(("pre", m, args[0].shape)))
    handle = layer.register_forward_pre_hook(lambda m, args: args[0] * 0.0)
    layer.register_forward_hook(lambda m, args, out: seen.append(("post", out.shape)))
    layer.register_forward_hook(lambda m, args, out: out + 1.0)
    out = layer(T(np.ones((4, 3))))
    assert seen == [("pre", layer, (4, 3)), ("post", (4, 2))]
    assert_values(out, np.full((4, 2), 1.5))  # zero input, bias 0.5, plus the hook's 1
    handle.remove()
    handle.remove()  # again: nothing
    assert_values(layer(T(np.ones((1, 3)))), [[1.8, 2.7]])


def test_full_backward_hook_gets_this_calls_gradients_only():
    # The numbers PyTorch 2.13 gives for the same layer and loss.
    layer, calls = _linear(), []
    layer.register_full_backward_hook(lambda m, gi, go: calls.append((m, gi, go)))
    x = T(np.ones((4, 3)), requires_grad=True)
    y = layer(x)
    cr.sum(y * x[:, :2]).backward()  # x is also used outside the layer
    ((module, grad_input, grad_output),) = calls
    assert module is layer
    assert_values(grad_input[0], np.tile([0.3, 0.5, 0.7], (4, 1)))
    assert_values(grad_output[0], np.ones((4, 2)))
    assert_values(x.grad, np.tile([1.1, 2.2, 0.7], (4, 1)))


def test_full_backward_hook_may_replace_grad_input():
    layer = _linear()
    layer.register_full_backward_hook(lambda m, gi, go: (gi[0] * 0.0,))
    x = T(np.ones((2, 3)), requires_grad=True)
    cr.sum(layer(x)).backward()
    assert_values(x.grad, np.zeros((2, 3)))
    assert layer.weight.grad is not None  # parameters still get theirs


def test_full_backward_hook_without_inputs_needing_grad_gets_none_for_them():
    layer, calls = _linear(), []
    with layer.register_full_backward_hook(lambda m, gi, go: calls.append((gi, go))):
        cr.sum(layer(T(np.ones((1, 3))))).backward()
    ((grad_input, grad_output),) = calls
    assert grad_input == (None,)
    assert_values(grad_output[0], [[1.0, 1.0]])
    cr.sum(layer(T(np.ones((1, 3))))).backward()  # the context removed the hook
    assert len(calls) == 1


def test_hooks_on_a_submodule_run_inside_the_parent():
    model = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1))
    shapes = []
    model[1].register_forward_hook(lambda m, args, out: shapes.append(out.shape))
    model[2].register_full_backward_hook(lambda m, gi, go: shapes.append(gi[0].shape))
    cr.sum(model(T(np.ones((5, 3)), requires_grad=True))).backward()
    assert shapes == [(5, 3), (5, 3)]
