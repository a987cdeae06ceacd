"""Module.register_full_backward_pre_hook with PyTorch's semantics: the hook sees the
gradients of this call's outputs before those of its inputs, may replace them (the input and
parameter gradients and the full backward hooks then follow the new ones), runs in
registration order (prepend= first), and goes away with its handle."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from conftest import N, T
from helpers import assert_values


def _linear():
    layer = nn.Linear(3, 2)
    layer.load_state_dict({"weight": np.arange(6.0).reshape(2, 3) / 10, "bias": np.full(2, 0.5)})
    return layer


def test_backward_pre_hook_sees_the_output_gradient_of_this_call():
    layer, seen = _linear(), []
    layer.register_full_backward_pre_hook(lambda m, go: seen.append((m, N(go[0]).copy())))
    x = T(np.ones((4, 3)), requires_grad=True)
    y = layer(x)
    cr.sum(y * 3.0 + y[:, :1]).backward()
    ((module, grad_output),) = seen
    assert module is layer
    # 3 everywhere, and 2 more in column 0: y[:, :1] broadcasts over both columns
    np.testing.assert_array_equal(grad_output, np.tile([5.0, 3.0], (4, 1)))


def test_backward_pre_hook_replaces_the_gradient_that_flows_on():
    # PyTorch 2.13 gives these numbers for the same layer, input and hook.
    layer, full = _linear(), []
    layer.register_full_backward_pre_hook(lambda m, go: (go[0] * 2.0,))
    layer.register_full_backward_hook(lambda m, gi, go: full.append(N(go[0]).copy()))
    x = T(np.ones((4, 3)), requires_grad=True)
    cr.sum(layer(x)).backward()
    assert_values(x.grad, np.tile([0.6, 1.0, 1.4], (4, 1)))
    assert_values(layer.weight.grad, np.full((2, 3), 8.0))
    assert_values(layer.bias.grad, [8.0, 8.0])
    np.testing.assert_array_equal(full[0], np.full((4, 2), 2.0))


def test_backward_pre_hook_runs_when_no_input_needs_a_gradient():
    layer, seen = _linear(), []
    layer.register_full_backward_pre_hook(lambda m, go: seen.append(go[0].shape))
    cr.sum(layer(T(np.ones((5, 3))))).backward()
    assert seen == [(5, 2)]
    assert_values(layer.bias.grad, [5.0, 5.0])


def test_backward_pre_hooks_run_in_order_prepend_first_and_handles_remove_them():
    layer, order = _linear(), []
    first = layer.register_full_backward_pre_hook(lambda m, go: order.append("a"))
    layer.register_full_backward_pre_hook(lambda m, go: order.append("b"))
    layer.register_full_backward_pre_hook(lambda m, go: order.append("c"), prepend=True)
    cr.sum(layer(T(np.ones((1, 3))))).backward()
    assert order == ["c", "a", "b"]
    first.remove()
    order.clear()
    cr.sum(layer(T(np.ones((1, 3))))).backward()
    assert order == ["c", "b"]


def test_backward_pre_hook_returning_the_wrong_number_of_gradients_is_an_error():
    layer = _linear()
    layer.register_full_backward_pre_hook(lambda m, go: (go[0], go[0]))
    with pytest.raises(RuntimeError, match="invalid number of grad_output, got 2, but expected 1"):
        cr.sum(layer(T(np.ones((1, 3)), requires_grad=True))).backward()
