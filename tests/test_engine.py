"""Engine semantics of autograd.backward, autograd.grad and Tensor.backward (PyTorch's), grad
mode, anomaly detection, the iterative walk of very long graphs, and backward from several
threads into one leaf."""

import gc
import threading
import weakref

import numpy as np
import pytest

import chainrule as cr
from chainrule import autograd
from chainrule._mode import grad_mode
from chainrule._node import Node
from chainrule._rules import RULES
from chainrule._tensor import Tensor
from conftest import BACKEND, N, T

FREED = r"(?s)(?=.*backward through the graph a second time)(?=.*retain_graph=True)"
IMPLICIT = "grad can be implicitly created only for scalar outputs"
UNUSED = (
    r"appears to not have been used in the graph\. "
    r"Set allow_unused=True if this is the desired behavior\."
)


def count_runs(monkeypatch, rule_name):
    """Wrap the VJP of a rule; returns a list whose length counts its runs."""
    rule = RULES[rule_name]
    wrapped = rule.vjp
    runs = []

    def counted(*args):
        runs.append(1)
        return wrapped(*args)

    monkeypatch.setattr(rule, "vjp", counted)
    return runs


# ----------------------------------------------------------------------------- backward


def test_backward_sums_into_grad_of_every_leaf_that_requires_grad():
    x = T([1.0, 2.0], requires_grad=True)
    w = T([3.0, 4.0], requires_grad=True)
    c = T([5.0, 6.0])
    autograd.backward((x * w * c).sum())
    np.testing.assert_array_equal(N(x.grad), [15.0, 24.0])
    np.testing.assert_array_equal(N(w.grad), [5.0, 12.0])
    assert c.grad is None


def test_backward_takes_single_tensors_or_sequences():
    x = T([1.0, 2.0], requires_grad=True)
    w = T([3.0, 4.0], requires_grad=True)
    autograd.backward(x * w, grad_tensors=T([1.0, 10.0]), inputs=x)
    autograd.backward((x * w,), grad_tensors=[T([1.0, 10.0])], inputs=(x, w))
    np.testing.assert_array_equal(N(x.grad), [6.0, 80.0])
    np.testing.assert_array_equal(N(w.grad), [1.0, 20.0])


def test_backward_writes_no_grad_on_intermediate_tensors():
    x = T([1.0, 2.0], requires_grad=True)
    h = x * 2.0
    (h * h).sum().backward()
    assert h.grad is None
    np.testing.assert_array_equal(N(x.grad), [8.0, 16.0])


def test_backward_with_inputs_writes_only_their_grad():
    x = T([1.0, 2.0], requires_grad=True)
    w = T([3.0, 4.0], requires_grad=True)
    autograd.backward((x * w).sum(), inputs=[w])
    assert x.grad is None
    np.testing.assert_array_equal(N(w.grad), [1.0, 2.0])


def test_backward_with_a_non_leaf_in_inputs_writes_its_grad():
    x = T([1.0, 2.0], requires_grad=True)
    h = x * 2.0
    autograd.backward((h * h).sum(), inputs=[h])
    np.testing.assert_array_equal(N(h.grad), [4.0, 8.0])
    assert x.grad is None


def test_backward_with_an_unused_input_leaves_its_grad_none():
    x = T([1.0, 2.0], requires_grad=True)
    unused = T([1.0], requires_grad=True)
    autograd.backward((x * x).sum(), inputs=[x, unused])
    np.testing.assert_array_equal(N(x.grad), [2.0, 4.0])
    assert unused.grad is None


def test_backward_with_empty_inputs_raises():
    x = T([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="inputs"):
        autograd.backward(x.sum(), inputs=[])


def test_backward_of_several_tensors_sums_their_gradients():
    x = T([1.0, 2.0], requires_grad=True)
    autograd.backward([(x * x).sum(), x * 3.0], [None, T([1.0, 10.0])])
    np.testing.assert_array_equal(N(x.grad), [2.0 + 3.0, 4.0 + 30.0])


def test_repeated_backward_accumulates_into_grad():
    x = T([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    (x * 3.0).sum().backward()
    np.testing.assert_array_equal(N(x.grad), [2.0 + 3.0, 4.0 + 3.0])


def test_backward_adds_to_a_grad_set_by_the_user():
    x = T([1.0, 2.0], requires_grad=True)
    x.grad = T([10.0, 20.0])
    (x * x).sum().backward()
    np.testing.assert_array_equal(N(x.grad), [12.0, 24.0])


def test_tensor_backward_is_autograd_backward_of_self():
    x = T([1.0, 2.0], requires_grad=True)
    w = T([3.0, 4.0], requires_grad=True)
    (x * w).backward(gradient=T([1.0, -1.0]), inputs=[x])
    np.testing.assert_array_equal(N(x.grad), [3.0, -4.0])
    assert w.grad is None
    y = (x * x * w).sum()
    y.backward(retain_graph=True)
    y.backward(create_graph=True)
    assert x.grad.grad_fn is not None
    np.testing.assert_array_equal(N(x.grad), [3.0 + 2 * 6.0, -4.0 + 2 * 16.0])


# ----------------------------------------------------------------------------- grad


def test_grad_returns_a_tuple_with_one_gradient_per_input():
    x = T([1.0, 2.0], requires_grad=True)
    w = T([3.0, 4.0], requires_grad=True)
    grads = autograd.grad((x * w).sum(), [w, x])
    assert isinstance(grads, tuple) and len(grads) == 2
    np.testing.assert_array_equal(N(grads[0]), [1.0, 2.0])
    np.testing.assert_array_equal(N(grads[1]), [3.0, 4.0])


def test_grad_takes_single_tensors_or_sequences():
    x = T([1.0, 2.0], requires_grad=True)
    (gx,) = autograd.grad((x * x).sum(), x)
    np.testing.assert_array_equal(N(gx), [2.0, 4.0])
    (gx,) = autograd.grad(outputs=[(x * x).sum()], inputs=(x,), grad_outputs=[T(2.0)])
    np.testing.assert_array_equal(N(gx), [4.0, 8.0])


def test_grad_leaves_every_grad_untouched():
    x = T([1.0, 2.0], requires_grad=True)
    w = T([3.0, 4.0], requires_grad=True)
    (x * 5.0).sum().backward()
    before = x.grad
    autograd.grad((x * w).sum(), [x])
    assert x.grad is before
    np.testing.assert_array_equal(N(x.grad), [5.0, 5.0])
    assert w.grad is None


def test_grad_with_respect_to_an_intermediate_tensor():
    x = T([1.0, 2.0], requires_grad=True)
    h = x * 2.0
    (gh,) = autograd.grad((h * h).sum(), h)
    np.testing.assert_array_equal(N(gh), [4.0, 8.0])
    assert h.grad is None and x.grad is None


def test_grad_outputs_weight_the_gradient():
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    (gx,) = autograd.grad(x * x, x, grad_outputs=T([1.0, 0.0, -2.0]))
    np.testing.assert_array_equal(N(gx), [2.0, 0.0, -12.0])


def test_grad_of_the_same_input_twice():
    x = T([1.0, 2.0], requires_grad=True)
    first, second = autograd.grad((x * x).sum(), [x, x])
    np.testing.assert_array_equal(N(first), [2.0, 4.0])
    np.testing.assert_array_equal(N(second), [2.0, 4.0])


def test_grad_without_create_graph_returns_tensors_without_history():
    x = T([1.0, 2.0], requires_grad=True)
    (gx,) = autograd.grad((x * x).sum(), x)
    assert not gx.requires_grad and gx.grad_fn is None


# ----------------------------------------------------------------------------- output gradients


@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_one_element_outputs_get_an_implicit_gradient_of_one(shape):
    x = T(np.full(shape, 3.0), requires_grad=True)
    (x * x).backward()
    np.testing.assert_array_equal(N(x.grad), np.full(shape, 6.0))
    (gx,) = autograd.grad(x * x, x)
    np.testing.assert_array_equal(N(gx), np.full(shape, 6.0))


def test_other_outputs_need_an_explicit_gradient():
    x = T([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=IMPLICIT):
        (x * x).backward()
    with pytest.raises(RuntimeError, match=IMPLICIT):
        autograd.grad(x * x, x)
    assert x.grad is None


def test_none_is_accepted_in_grad_tensors_for_scalar_outputs():
    x = T([1.0, 2.0], requires_grad=True)
    autograd.backward([(x * x).sum(), x * 1.0], [None, T([5.0, 7.0])])
    np.testing.assert_array_equal(N(x.grad), [7.0, 11.0])
    (gx,) = autograd.grad([(x * x).sum()], x, grad_outputs=[None])
    np.testing.assert_array_equal(N(gx), [2.0, 4.0])


def test_gradient_of_the_wrong_shape_names_the_index_and_both_shapes():
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    message = r"Mismatch in shape(?=.*\[1\])(?=.*\(2,\))(?=.*\(3,\))"
    with pytest.raises(RuntimeError, match=message):
        autograd.backward([x.sum(), x * 2.0], [None, T([1.0, 1.0])])
    with pytest.raises(RuntimeError, match=message):
        autograd.grad([x.sum(), x * 2.0], x, [None, T([1.0, 1.0])])


@pytest.mark.parametrize("n_gradients", [2, 4])
def test_count_mismatch_between_outputs_and_gradients_names_both_counts(n_gradients):
    x = T([1.0], requires_grad=True)
    outputs = [x * 1.0, x * 2.0, x * 3.0]
    gradients = [None] * n_gradients
    message = rf"(?=.*\b3\b)(?=.*\b{n_gradients}\b)"
    with pytest.raises(RuntimeError, match=message):
        autograd.backward(outputs, gradients)
    with pytest.raises(RuntimeError, match=message):
        autograd.grad(outputs, x, gradients)
    assert x.grad is None


def test_backward_of_an_output_that_does_not_require_grad_raises():
    x = T([1.0, 2.0], requires_grad=True)
    message = "element 0 of tensors does not require grad and does not have a grad_fn"
    with pytest.raises(RuntimeError, match=message):
        autograd.backward(T([1.0]).sum())
    with pytest.raises(RuntimeError, match=message):
        x.detach().sum().backward()
    with pytest.raises(RuntimeError, match="element 1 of tensors does not require grad"):
        autograd.backward([x.sum(), T([1.0]).sum()])
    assert x.grad is None


def test_grad_of_an_output_that_does_not_require_grad_raises():
    x = T([1.0, 2.0], requires_grad=True)
    message = "element 0 of tensors does not require grad and does not have a grad_fn"
    with pytest.raises(RuntimeError, match=message):
        autograd.grad(T([1.0]).sum(), x)


@pytest.mark.regression
def test_a_complex_gradient_for_a_real_output_raises():
    x = T([1.0, 2.0], requires_grad=True)
    y = cr.sum(x * 2.0)
    with pytest.raises(RuntimeError, match="dtype"):
        y.backward(cr.asarray(BACKEND.asarray(np.asarray(1 + 2j))))
    assert x.grad is None


# ----------------------------------------------------------------------------- retain_graph


def test_second_backward_through_saved_values_raises_without_retain_graph():
    x = T([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match=FREED):
        y.backward()
    np.testing.assert_array_equal(N(x.grad), [2.0, 4.0])


def test_grad_also_frees_the_graph_without_retain_graph():
    x = T([1.0, 2.0], requires_grad=True)
    y = cr.exp(x).sum()
    autograd.grad(y, x)
    with pytest.raises(RuntimeError, match=FREED):
        autograd.grad(y, x)


def test_a_node_freed_by_one_backward_fails_another_graph_through_it():
    x = T([1.0, 2.0], requires_grad=True)
    shared = cr.exp(x)
    shared.sum().backward()
    with pytest.raises(RuntimeError, match=FREED):
        (shared * 2.0).sum().backward()


def test_graph_whose_nodes_saved_nothing_may_run_again():
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    y = (-(x + 1.0))[1:].reshape(2, 1).sum()
    y.backward()
    y.backward()
    np.testing.assert_array_equal(N(x.grad), [0.0, -2.0, -2.0])


def test_multiply_by_a_python_constant_saves_it_and_frees_it_as_pytorch_does():
    x = T([1.0, 2.0], requires_grad=True)
    y = (x * 2.0).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="backward through the graph a second time"):
        y.backward()
    np.testing.assert_array_equal(N(x.grad), [2.0, 2.0])


def test_retain_graph_allows_repeated_backward_that_accumulates():
    x = T([1.0, 2.0], requires_grad=True)
    y = cr.sin(x * x).sum()
    for _ in range(3):
        y.backward(retain_graph=True)
    np.testing.assert_allclose(N(x.grad), 3 * 2 * N(x) * np.cos(N(x) ** 2), rtol=1e-14)
    (gx,) = autograd.grad(y, x, retain_graph=True)
    (gx_again,) = autograd.grad(y, x)
    np.testing.assert_array_equal(N(gx), N(gx_again))


def test_retain_graph_defaults_to_create_graph():
    x = T([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    y.backward(create_graph=True)
    y.backward(create_graph=True, retain_graph=False)
    np.testing.assert_array_equal(N(x.grad), [4.0, 8.0])
    with pytest.raises(RuntimeError, match=FREED):
        y.backward()


# ----------------------------------------------------------------------------- create_graph

POINTS = [0.3, -1.2, 2.0]


def derivatives(f, values, order):
    """The first `order` derivatives of elementwise `f` at `values`, by nested grad calls."""
    x = T(values, requires_grad=True)
    out = f(x)
    result = []
    for _ in range(order):
        (out,) = autograd.grad(out.sum(), x, create_graph=True)
        result.append(N(out))
    return result


def test_derivatives_of_x_to_the_fourth_to_third_order():
    x = np.array(POINTS)
    d1, d2, d3 = derivatives(lambda t: t**4, POINTS, 3)
    np.testing.assert_allclose(d1, 4 * x**3, rtol=1e-14)
    np.testing.assert_allclose(d2, 12 * x**2, rtol=1e-14)
    np.testing.assert_allclose(d3, 24 * x, rtol=1e-14)


def test_derivatives_of_sin_to_third_order():
    x = np.array(POINTS)
    d1, d2, d3 = derivatives(cr.sin, POINTS, 3)
    np.testing.assert_allclose(d1, np.cos(x), rtol=1e-14)
    np.testing.assert_allclose(d2, -np.sin(x), rtol=1e-14)
    np.testing.assert_allclose(d3, -np.cos(x), rtol=1e-14)


def test_derivatives_of_exp_times_tanh_to_third_order():
    x = np.array(POINTS)
    e, t = np.exp(x), np.tanh(x)
    s = 1 - t * t
    d1, d2, d3 = derivatives(lambda v: cr.exp(v) * cr.tanh(v), POINTS, 3)
    np.testing.assert_allclose(d1, e * (t + s), rtol=1e-13)
    np.testing.assert_allclose(d2, e * (t + 2 * s - 2 * t * s), rtol=1e-13)
    np.testing.assert_allclose(
        d3, e * (t + 3 * s - 6 * t * s - 2 * s * s + 4 * t * t * s), rtol=1e-13
    )


def test_grad_with_create_graph_returns_differentiable_gradients():
    x = T([1.0, 2.0], requires_grad=True)
    (gx,) = autograd.grad((x**3).sum(), x, create_graph=True)
    assert gx.requires_grad and gx.grad_fn is not None


def test_grad_written_by_backward_with_create_graph_is_differentiable():
    x = T([1.0, 2.0], requires_grad=True)
    (x**3).sum().backward(create_graph=True)
    assert x.grad.grad_fn is not None
    np.testing.assert_array_equal(N(x.grad), [3.0, 12.0])
    (second,) = autograd.grad(x.grad.sum(), x)
    np.testing.assert_array_equal(N(second), [6.0, 12.0])


def test_backward_with_create_graph_accumulates_differentiably():
    x = T([1.0, 2.0], requires_grad=True)
    (x**3).sum().backward(create_graph=True)
    (x * x).sum().backward(create_graph=True)
    np.testing.assert_array_equal(N(x.grad), [3.0 + 2.0, 12.0 + 4.0])
    (second,) = autograd.grad(x.grad.sum(), x)
    np.testing.assert_array_equal(N(second), [6.0 + 2.0, 12.0 + 2.0])


def test_a_grad_stored_as_a_broadcast_gradient_accumulates_out_of_place():
    # Under create_graph a sum's gradient reaches the leaf as a broadcast of its seed (on
    # PyTorch storage a view whose elements share memory), stored as .grad as it is.
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    cr.sum(cr.positive(x)).backward(create_graph=True)
    (x * x).sum().backward()
    np.testing.assert_array_equal(N(x.grad), [3.0, 5.0, 7.0])


@pytest.mark.regression
@pytest.mark.parametrize("how", ["concat", "stack", "setitem"])
def test_create_graph_gives_a_float32_leaf_a_float32_grad_whatever_float64_data_it_met(how):
    x = T([1.0, 2.0], dtype="float32", requires_grad=True)
    other = T([3.0, 4.0])
    if how == "concat":
        y = cr.concat([x, other])
    elif how == "stack":
        y = cr.stack([x, other])
    else:
        y = other * 1.0
        y[...] = x
    cr.sum(y * y).backward(create_graph=True)
    assert x.grad.dtype == cr.float32
    np.testing.assert_allclose(N(x.grad), [2.0, 4.0])


# ----------------------------------------------------------------------------- unused inputs


def test_unused_input_raises_by_default():
    x = T([1.0, 2.0], requires_grad=True)
    unused = T([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match=UNUSED):
        autograd.grad((x * x).sum(), [x, unused])


def test_unused_input_gives_none_with_allow_unused():
    x = T([1.0, 2.0], requires_grad=True)
    unused = T([1.0], requires_grad=True)
    gx, gu = autograd.grad((x * x).sum(), [x, unused], allow_unused=True)
    np.testing.assert_array_equal(N(gx), [2.0, 4.0])
    assert gu is None


def test_materialize_grads_gives_zeros_of_the_input_shape_and_dtype():
    x = T([1.0, 2.0], requires_grad=True)
    unused = T([[1.0, 2.0, 3.0]], dtype="float32", requires_grad=True)
    gx, gu = autograd.grad((x * x).sum(), [x, unused], materialize_grads=True)
    np.testing.assert_array_equal(N(gx), [2.0, 4.0])
    assert gu.shape == (1, 3) and gu.dtype == cr.float32
    np.testing.assert_array_equal(N(gu), np.zeros((1, 3)))


def test_materialize_grads_with_allow_unused_false_raises():
    x = T([1.0, 2.0], requires_grad=True)
    with pytest.raises(ValueError, match="allow_unused"):
        autograd.grad((x * x).sum(), x, materialize_grads=True, allow_unused=False)


def test_input_that_does_not_require_grad_raises():
    x = T([1.0, 2.0], requires_grad=True)
    c = T([1.0, 2.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        autograd.grad((x * c).sum(), [x, c])
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_gr"):
        autograd.backward((x * c).sum(), inputs=[c])  # PyTorch's words for backward
    assert x.grad is None


def test_grad_with_integer_tensors_raises():
    x = T([1.0, 2.0], requires_grad=True)
    integers = T([1, 2], dtype="int64")
    with pytest.raises(RuntimeError):
        autograd.grad((x * x).sum(), [integers])
    with pytest.raises(RuntimeError):
        autograd.grad(integers.sum(), [x])
    with pytest.raises(RuntimeError):
        integers.sum().backward()


@pytest.mark.regression
def test_backward_of_no_tensors_does_nothing_and_grad_of_no_outputs_finds_nothing_used():
    x = T([1.0], requires_grad=True)
    autograd.backward([])
    assert x.grad is None
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        autograd.grad([], [x])
    assert autograd.grad([], [x], allow_unused=True) == (None,)


# ----------------------------------------------------------------------------- shapes, dtypes


def test_broadcast_gradients_are_summed_back_to_each_shape():
    x = T(np.arange(3.0).reshape(3, 1), requires_grad=True)
    y = T(np.arange(4.0), requires_grad=True)
    (x + y).sum().backward()
    np.testing.assert_array_equal(N(x.grad), np.full((3, 1), 4.0))
    np.testing.assert_array_equal(N(y.grad), np.full(4, 3.0))
    gx, gy = autograd.grad((x * y).sum(), [x, y])
    np.testing.assert_array_equal(N(gx), np.full((3, 1), 6.0))
    np.testing.assert_array_equal(N(gy), np.full(4, 3.0))


def test_gradients_keep_the_dtype_of_their_tensor():
    x32 = T([1.0, 2.0], dtype="float32", requires_grad=True)
    y64 = T([3.0, 4.0], dtype="float64", requires_grad=True)
    out = (x32 * y64).sum()
    assert out.dtype == cr.float64
    gx, gy = autograd.grad(out, [x32, y64], retain_graph=True)
    assert gx.dtype == cr.float32 and gy.dtype == cr.float64
    out.backward()
    assert x32.grad.dtype == cr.float32 and y64.grad.dtype == cr.float64
    np.testing.assert_array_equal(N(x32.grad), [3.0, 4.0])


def test_float32_graph_gives_float32_gradients_at_every_order():
    x = T([0.5, 1.5], dtype="float32", requires_grad=True)
    (g1,) = autograd.grad(cr.exp(x * 2.0).sum(), x, create_graph=True)
    (g2,) = autograd.grad(g1.sum(), x)
    assert g1.dtype == cr.float32 and g2.dtype == cr.float32
    np.testing.assert_allclose(N(g2), 4 * np.exp(2 * np.array([0.5, 1.5])), rtol=1e-6)


# ----------------------------------------------------------------------------- graph walk


def test_a_tensor_used_many_times_gets_the_sum_of_its_gradients():
    x = T([1.0, 2.0], requires_grad=True)
    (x + x + x * x + x * 3.0).sum().backward()
    np.testing.assert_array_equal(N(x.grad), [1 + 1 + 2 + 3, 1 + 1 + 4 + 3])


def test_diamond_graph_runs_each_node_once(monkeypatch):
    runs = count_runs(monkeypatch, "exp")
    x = T([0.5, 1.0], requires_grad=True)
    top = cr.exp(x)
    (top * 2.0 + top * 3.0).sum().backward()
    assert len(runs) == 1
    np.testing.assert_allclose(N(x.grad), 5.0 * np.exp([0.5, 1.0]), rtol=1e-15)


def test_ladder_of_diamonds_runs_each_node_once(monkeypatch):
    runs = count_runs(monkeypatch, "multiply")
    x = T([1.0], requires_grad=True)
    y = x
    for _ in range(25):
        y = y * 0.5 + y * 0.5
    y.backward()
    assert len(runs) == 2 * 25
    np.testing.assert_array_equal(N(x.grad), [1.0])


def test_grad_skips_branches_that_lead_to_no_requested_input():
    a = T([1.0, 2.0], requires_grad=True)
    b = T([0.5], requires_grad=True)
    branch = cr.exp(b)
    branch.sum().backward()
    b_grad = N(b.grad).copy()
    y = (a * 3.0).sum() + branch.sum()
    with pytest.raises(RuntimeError, match=FREED):
        autograd.grad(y, [b], retain_graph=True)
    (ga,) = autograd.grad(y, [a], retain_graph=True)
    np.testing.assert_array_equal(N(ga), [3.0, 3.0])
    y.backward(inputs=[a])
    np.testing.assert_array_equal(N(a.grad), [3.0, 3.0])
    np.testing.assert_array_equal(N(b.grad), b_grad)


def test_grad_does_not_run_the_derivatives_of_an_unrequested_branch(monkeypatch):
    a = T([1.0, 2.0], requires_grad=True)
    b = T([0.5], requires_grad=True)
    y = (a * 3.0).sum() + cr.exp(cr.exp(b)).sum()
    runs = count_runs(monkeypatch, "exp")
    (ga,) = autograd.grad(y, [a])
    assert runs == []
    np.testing.assert_array_equal(N(ga), [3.0, 3.0])
    assert b.grad is None


def test_failed_backward_of_two_roots_changes_no_grad():
    x = T([1.0, 2.0], requires_grad=True)
    freed = cr.exp(x).sum()
    freed.backward()
    before = N(x.grad).copy()
    with pytest.raises(RuntimeError, match=FREED):
        autograd.backward([(x * x).sum(), freed])
    np.testing.assert_array_equal(N(x.grad), before)


def test_bad_gradient_for_the_second_root_changes_no_grad():
    x = T([1.0, 2.0], requires_grad=True)
    w = T([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        autograd.backward([(x * x).sum(), w * 2.0], [None, T([1.0, 2.0, 3.0])])
    assert x.grad is None and w.grad is None


def test_backward_failing_midway_changes_no_grad():
    x = T([1.0, 2.0], requires_grad=True)
    z = T([0.0], requires_grad=True)
    (x * 3.0).sum().backward()
    before = N(x.grad).copy()
    loss = (x * x).sum() + (cr.sqrt(z) * 0.0).sum()
    with np.errstate(invalid="ignore"), autograd.detect_anomaly(), pytest.raises(RuntimeError):
        loss.backward()
    np.testing.assert_array_equal(N(x.grad), before)
    assert z.grad is None


def test_chain_of_a_million_ops_differentiates_and_is_freed():
    # NumPy-backed whatever the backend under test: this checks the walk, not the arrays,
    # and array_api_strict would take a minute.
    x = cr.tensor(np.array([1.0]), requires_grad=True)
    y = x * 1.0000001
    first = weakref.ref(y.grad_fn)
    for _ in range(999_999):
        y = y * 1.0000001
    y.backward()
    np.testing.assert_allclose(N(x.grad), [1.0000001**1_000_000], rtol=1e-9)
    gc.disable()
    try:
        del y
        assert first() is None
    finally:
        gc.enable()


# ----------------------------------------------------------------------------- grad mode


def test_grad_is_enabled_by_default():
    assert cr.is_grad_enabled()


def test_no_grad_results_do_not_require_grad():
    x = T([1.0, 2.0], requires_grad=True)
    with cr.no_grad():
        assert not cr.is_grad_enabled()
        y = x * 2.0
        z = cr.exp(x) + x
    assert cr.is_grad_enabled()
    assert not y.requires_grad and y.grad_fn is None
    assert not z.requires_grad
    assert (x * 2.0).requires_grad


def test_enable_grad_inside_no_grad_records_again():
    x = T([1.0], requires_grad=True)
    with cr.no_grad():
        with cr.enable_grad():
            assert cr.is_grad_enabled()
            y = x * 2.0
        assert not cr.is_grad_enabled()
    assert y.requires_grad


def test_grad_mode_is_restored_when_the_block_raises():
    with pytest.raises(KeyError), cr.no_grad():
        raise KeyError
    assert cr.is_grad_enabled()


def test_set_grad_enabled_as_a_context_manager():
    with cr.set_grad_enabled(False):
        assert not cr.is_grad_enabled()
        with cr.set_grad_enabled(True):
            assert cr.is_grad_enabled()
        assert not cr.is_grad_enabled()
    assert cr.is_grad_enabled()


def test_set_grad_enabled_called_alone_sets_the_mode():
    try:
        cr.set_grad_enabled(False)
        assert not cr.is_grad_enabled()
        assert not (T([1.0], requires_grad=True) * 2.0).requires_grad
    finally:
        cr.set_grad_enabled(True)
    assert cr.is_grad_enabled()


def test_grad_mode_decorators():
    x = T([1.0], requires_grad=True)

    @cr.no_grad()
    def without_grad():
        assert not cr.is_grad_enabled()
        return x * 2.0

    @cr.enable_grad()
    def with_grad():
        assert cr.is_grad_enabled()
        return x * 2.0

    @cr.set_grad_enabled(False)
    def disabled():
        assert not cr.is_grad_enabled()
        return x * 2.0

    assert cr.is_grad_enabled()
    assert not without_grad().requires_grad
    assert not disabled().requires_grad
    with cr.no_grad():
        assert with_grad().requires_grad
        assert not cr.is_grad_enabled()
    assert cr.is_grad_enabled()
    assert without_grad.__name__ == "without_grad"


def test_grad_mode_is_thread_local():
    entered, release = threading.Event(), threading.Event()
    seen = {}

    def other_thread():
        with cr.no_grad():
            entered.set()
            release.wait(10)
            seen["other"] = cr.is_grad_enabled()

    worker = threading.Thread(target=other_thread)
    worker.start()
    try:
        assert entered.wait(10)
        assert cr.is_grad_enabled()
        assert (T([1.0], requires_grad=True) * 2.0).requires_grad
    finally:
        release.set()
        worker.join()
    assert seen["other"] is False


def test_a_new_thread_starts_with_grad_enabled():
    seen = []
    with cr.no_grad():
        worker = threading.Thread(target=lambda: seen.append(cr.is_grad_enabled()))
        worker.start()
        worker.join()
    assert seen == [True]


# ----------------------------------------------------------------------------- anomaly mode


def test_detect_anomaly_names_the_node_that_made_nan():
    z = T([0.0, 1.0], requires_grad=True)
    with np.errstate(invalid="ignore"), autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match=r"(?=.*SqrtBackward)(?=.*nan)"):
            (cr.sqrt(z) * 0.0).sum().backward()


def test_nan_gradients_pass_outside_anomaly_mode():
    with autograd.detect_anomaly():
        pass
    z = T([0.0, 1.0], requires_grad=True)
    with np.errstate(invalid="ignore"):
        (cr.sqrt(z) * 0.0).sum().backward()
    assert np.isnan(N(z.grad)[0]) and N(z.grad)[1] == 0.0


def test_a_rule_returning_a_gradient_of_the_wrong_shape_is_caught_before_any_grad_changes(
    monkeypatch,
):
    rule = RULES["sin"]
    monkeypatch.setattr(rule, "vjp", lambda xp, g, s, p, needs: (xp.sum(g * xp.cos(s[0])),))
    a = T([1.0, 2.0], requires_grad=True)
    b = T([3.0], requires_grad=True)
    loss = (b * 2.0).sum() + cr.sin(a).sum()
    with pytest.raises(RuntimeError, match="has shape"):
        loss.backward()
    assert a.grad is None and b.grad is None


def test_detect_anomaly_shows_where_the_failing_node_was_created():
    x = T([0.0, 1.0], requires_grad=True)
    with autograd.detect_anomaly():
        y = cr.sqrt(x) * 0.0  # the line the message must show
        with pytest.raises(RuntimeError) as nan_error:
            y.sum().backward()
        z = cr.exp(x).sum()
        z.backward()
        with pytest.raises(RuntimeError) as freed_error:
            z.backward()
    assert "SqrtBackward0 was created by" in str(nan_error.value)
    assert "the line the message must show" in str(nan_error.value)
    assert "ExpBackward0 was created by" in str(freed_error.value)
    assert not cr.sqrt(x).grad_fn.created()


def test_one_backward_over_outputs_of_two_libraries_is_a_type_error():
    import array_api_strict as xs

    a = cr.tensor(np.asarray([1.0]), requires_grad=True)
    b = cr.tensor(xs.asarray([2.0]), requires_grad=True)
    with pytest.raises(TypeError, match="array_api_strict"):
        autograd.backward([a.sum(), b.sum()])
    assert a.grad is None and b.grad is None


# --------------------------------------------------------------------- threads and accumulation


@pytest.mark.regression
def test_backward_in_several_threads_accumulates_every_gradient_exactly():
    # Large enough that NumPy releases the GIL inside its additions.
    x = T(np.ones(200_000), requires_grad=True)
    rounds, threads = 100, 4
    barrier = threading.Barrier(threads)

    def work():
        barrier.wait()
        for _ in range(rounds):
            cr.sum(x * 1.0).backward()

    pool = [threading.Thread(target=work) for _ in range(threads)]
    for t in pool:
        t.start()
    for t in pool:
        t.join()
    np.testing.assert_array_equal(N(x.grad), np.full(200_000, float(rounds * threads)))


@pytest.mark.regression
@pytest.mark.skipif(BACKEND is not np, reason="read-only arrays are NumPy's")
def test_a_read_only_grad_is_replaced_and_every_leaf_gets_its_gradient():
    a = T([1.0, 2.0], requires_grad=True)
    b = T([3.0], requires_grad=True)
    frozen = np.zeros(2)
    frozen.flags.writeable = False
    a.grad = cr.asarray(frozen)
    (cr.sum(a * 2.0) + cr.sum(b * 3.0)).backward()
    np.testing.assert_array_equal(N(a.grad), [2.0, 2.0])
    np.testing.assert_array_equal(N(b.grad), [3.0])
    np.testing.assert_array_equal(frozen, [0.0, 0.0])


# ----------------------------------------------------------------------------- recording


def _slots(obj, names):
    """The slots of obj that are set, with their values."""
    return {s: getattr(obj, s) for s in names if s != "__weakref__" and hasattr(obj, s)}


def test_the_fast_paths_make_the_objects_that_node_and_tensor_make():
    # The one- and two-input factories make a recorded Node and its Tensor without their
    # __init__ (_factories._new): every slot __init__ sets must be set alike.
    x = T([1.0, 2.0], requires_grad=True)
    w = T([[3.0], [4.0]], requires_grad=True)
    c = T([5.0, 6.0])
    z = T([1.0 + 2.0j, 3.0 - 1.0j], requires_grad=True)
    results = [
        cr.sin(x),  # one input, saves its input
        cr.exp(x),  # saves its output
        cr.sin(z),  # meets complex values
        x * c,  # saves a tensor that needs no grad (a version)
        x + w,  # broadcast: a fit
        x / 1.5,  # a Python scalar
        z * x,  # promoted: a complex fit
    ]
    for res in results:
        node = res.grad_fn
        made = Node(
            node.rule, node.edges, node.saved, node.params, node.fit, node.versions, node.n_out
        )
        assert _slots(node, Node.__slots__) == _slots(made, Node.__slots__), node
        again = Tensor(res._data, res._xp, res._edge)
        assert _slots(res, Tensor.__slots__) == _slots(again, Tensor.__slots__), node


def _expected_route():
    extended = grad_mode.extended
    return extended if extended else None if grad_mode.enabled else False


def test_the_fast_paths_route_follows_grad_mode_and_the_features():
    # grad_mode.route holds `enabled` and `extended` in the one read of the fast paths.
    x = T([1.0, 2.0], requires_grad=True)
    seen = []

    def check(recorded):
        seen.append(grad_mode.route)
        assert grad_mode.route == _expected_route()
        assert cr.is_grad_enabled() is recorded
        assert (cr.sin(x).grad_fn is not None) is recorded
        assert ((x * x).grad_fn is not None) is recorded
        assert ((x * 2.0).grad_fn is not None) is recorded

    check(True)
    with cr.no_grad():
        check(False)
        with cr.enable_grad():
            check(True)
            with cr.set_grad_enabled(False):
                check(False)
            check(True)
        with cr.inference_mode():
            check(False)
            with cr.inference_mode(False):
                check(True)  # grad mode on again, as inference_mode(False) has it
        check(False)
    with cr.inference_mode():
        with cr.inference_mode(False):
            check(True)
    with autograd.detect_anomaly():
        check(True)
        with cr.no_grad():
            check(False)
    cr.set_grad_enabled(False)
    try:
        check(False)
    finally:
        cr.set_grad_enabled(True)
    check(True)
    assert None in seen and False in seen and True in seen
