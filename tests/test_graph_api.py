"""The graph API with PyTorch's semantics: tensor hooks, retain_grad, post-accumulate hooks,
grad_fn introspection and node hooks, saved-tensor hooks, multi-gradient hooks, inference
mode, anomaly mode switches, custom Function ctx features, graph summary and DOT export.
Each expectation was checked against PyTorch 2.13."""

import gc

import numpy as np
import pytest

import chainrule as cr
from chainrule import autograd, nn
from chainrule.autograd import Function, grad
from chainrule.autograd.function import once_differentiable
from chainrule.autograd.graph import (
    Node,
    disable_saved_tensors_hooks,
    register_multi_grad_hook,
    save_on_cpu,
    saved_tensors_hooks,
    summary,
    to_dot,
)
from conftest import N, T

# ----------------------------------------------------------------------------- tensor hooks


def test_a_leaf_hook_changes_both_grad_and_what_autograd_grad_returns():
    x = T([1.0, 2.0], requires_grad=True)
    x.register_hook(lambda g: g * 10)
    (g,) = grad(cr.sum(x * 3.0), x)
    np.testing.assert_array_equal(N(g), [30.0, 30.0])
    cr.sum(x * 3.0).backward()
    np.testing.assert_array_equal(N(x.grad), [30.0, 30.0])


def test_a_non_leaf_hook_runs_once_on_its_summed_gradient():
    x = T([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    calls = []
    y.register_hook(lambda g: calls.append(N(g).tolist()))
    cr.sum(y * 3.0 + y * 4.0).backward()
    assert calls == [[7.0, 7.0]]
    np.testing.assert_array_equal(N(x.grad), [14.0, 14.0])


def test_grad_with_respect_to_a_non_leaf_returns_its_hooked_gradient():
    x = T([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    y.register_hook(lambda g: g * 100)
    (g,) = grad(cr.sum(y * 3.0), y)
    np.testing.assert_array_equal(N(g), [300.0, 300.0])


def test_a_removed_hook_no_longer_runs():
    x = T([1.0, 2.0], requires_grad=True)
    handle = x.register_hook(lambda g: g * 10)
    handle.remove()
    handle.remove()
    cr.sum(x * 1.0).backward()
    np.testing.assert_array_equal(N(x.grad), [1.0, 1.0])


def test_hooks_under_create_graph_are_part_of_the_graph():
    x = T([1.0, 2.0], requires_grad=True)
    y = x**2
    y.register_hook(lambda g: g * x)
    (g,) = grad(cr.sum(y), x, create_graph=True)
    np.testing.assert_array_equal(N(g), [2.0, 8.0])  # 2x * x
    (h,) = grad(cr.sum(g), x)
    np.testing.assert_array_equal(N(h), [4.0, 8.0])  # d(2x^2)/dx


def test_a_hook_needs_a_tensor_that_requires_grad_and_must_keep_the_shape():
    with pytest.raises(RuntimeError, match="doesn't require gradient"):
        T([1.0]).register_hook(lambda g: g)
    x = T([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    y.register_hook(lambda g: cr.sum(g))
    with pytest.raises(RuntimeError, match="changed the size"):
        cr.sum(y).backward()


def test_hooks_on_outputs_of_a_node_with_several_outputs_see_their_own_gradient():
    x = T([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    a, b = cr.unstack(x * 1.0)
    b.register_hook(lambda g: g * 10)
    cr.sum(a + b).backward()
    np.testing.assert_array_equal(N(x.grad), [[1.0, 1.0], [10.0, 10.0]])


# ----------------------------------------------------------------------------- retain_grad


def test_retain_grad_keeps_the_gradient_after_every_hook_whatever_the_order():
    x = T([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    y.retain_grad()
    y.register_hook(lambda g: g * 10)
    cr.sum(y * 3.0).backward()
    assert y.retains_grad
    np.testing.assert_array_equal(N(y.grad), [30.0, 30.0])
    np.testing.assert_array_equal(N(x.grad), [60.0, 60.0])


def test_retained_gradients_add_up_over_backward_calls_and_autograd_grad():
    x = T([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    y.retain_grad()
    loss = cr.sum(y * 3.0)
    loss.backward(retain_graph=True)
    loss.backward(retain_graph=True)
    np.testing.assert_array_equal(N(y.grad), [6.0, 6.0])
    z = x * 2.0
    z.retain_grad()
    grad(cr.sum(z * 3.0), x)
    np.testing.assert_array_equal(N(z.grad), [3.0, 3.0])


def test_retain_grad_on_a_leaf_does_nothing():
    x = T([1.0], requires_grad=True)
    x.retain_grad()
    assert not x.retains_grad
    with pytest.raises(RuntimeError, match="requires_grad=False"):
        T([1.0]).retain_grad()


# ----------------------------------------------------------------------------- post-accumulate


def test_post_accumulate_hooks_run_as_each_leaf_is_ready_last_layer_first():
    a = T([1.0], requires_grad=True)
    b = T([2.0], requires_grad=True)
    order = []
    a.register_post_accumulate_grad_hook(lambda t: order.append(("a", t is a, N(t.grad)[0])))
    b.register_post_accumulate_grad_hook(lambda t: order.append(("b", t is b, N(t.grad)[0])))
    cr.sum(cr.exp(a * 3.0) * b).backward()
    assert [o[:2] for o in order] == [("b", True), ("a", True)]
    np.testing.assert_allclose([o[2] for o in order], [np.exp(3.0), 6 * np.exp(3.0)])


def test_post_accumulate_hooks_are_for_leaves():
    x = T([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="non-leaf"):
        (x * 2.0).register_post_accumulate_grad_hook(lambda t: None)


# ----------------------------------------------------------------------------- detach_, _version


def test_detach_in_place_makes_a_leaf_that_needs_no_grad():
    x = T([1.0], requires_grad=True)
    y = x * 2.0
    assert y.detach_() is y
    assert y.is_leaf and not y.requires_grad and y.grad_fn is None


def test_version_counts_writes_and_reading_never_changes_it():
    x = T([1.0, 2.0, 3.0])
    assert x._version == 0 and x._version == 0
    x += 1.0
    assert x._version == 1
    x[0] = 2.0
    assert x._version == 2
    view = x[1:]
    view += 1.0
    assert x._version == 3 and view._version == 3


# ----------------------------------------------------------------------------- grad_fn


def test_next_functions_lead_to_the_same_nodes_as_grad_fn_and_to_shared_accumulators():
    x = T([1.0, 2.0], requires_grad=True)
    c = T([3.0, 4.0])
    y = x * c
    assert y.grad_fn.name() == "MulBackward0"
    (acc, i), (none, j) = y.grad_fn.next_functions
    assert (i, none, j) == (0, None, 0)
    assert acc.name() == "AccumulateGrad" and acc.variable is x and acc.next_functions == ()
    z = x + x
    (a1, _), (a2, _) = z.grad_fn.next_functions
    assert a1 is a2 is acc
    w = cr.exp(y)
    assert w.grad_fn.next_functions[0][0] is y.grad_fn
    assert isinstance(y.grad_fn, Node) and isinstance(acc, Node)


def test_next_functions_of_an_output_of_a_multi_output_node_carry_its_index():
    x = T(np.ones((3, 2)), requires_grad=True)
    parts = cr.unstack(x * 1.0)
    (node, index), (none, _) = (parts[1] * 2.0).grad_fn.next_functions
    assert node is parts[1].grad_fn and index == 1 and none is None


def test_node_metadata_is_a_dict_that_stays():
    y = T([1.0], requires_grad=True) * 2.0
    y.grad_fn.metadata["tag"] = "mine"
    assert y.grad_fn.metadata == {"tag": "mine"}


def test_node_prehooks_run_before_hooks_and_see_none_for_inputs_without_grad():
    x = T([1.0, 2.0], requires_grad=True)
    y = x * T([3.0, 4.0])
    seq = []
    y.grad_fn.register_hook(lambda gi, go: seq.append(("post", [g is None for g in gi])))
    y.grad_fn.register_prehook(lambda go: seq.append(("pre", N(go[0]).tolist())))
    cr.sum(y).backward()
    assert seq == [("pre", [1.0, 1.0]), ("post", [False, True])]


def test_node_hooks_may_replace_gradients():
    x = T([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * 0 + 5.0, None))
    cr.sum(y).backward()
    np.testing.assert_array_equal(N(x.grad), [5.0, 5.0])
    x.grad = None
    y = x * 2.0
    y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
    cr.sum(y).backward()
    np.testing.assert_array_equal(N(x.grad), [20.0, 20.0])
    y = x * 2.0
    y.grad_fn.register_hook(lambda gi, go: (gi[0],))
    with pytest.raises(RuntimeError, match="incorrect number of values"):
        cr.sum(y).backward()


# ----------------------------------------------------------------------------- saved tensors


def _recording_hooks():
    packed, unpacked = [], []

    def pack(t):
        packed.append(t)
        return t

    def unpack(t):
        unpacked.append(t)
        return t

    return packed, unpacked, pack, unpack


def test_saved_tensor_hooks_pack_exactly_what_each_derivative_needs():
    packed, unpacked, pack, unpack = _recording_hooks()
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    w = T([4.0, 5.0, 6.0], requires_grad=True)
    c = T([1.0, 1.0, 1.0])
    with saved_tensors_hooks(pack, unpack):
        y = x * w
        assert len(packed) == 2 and {id(t) for t in packed} == {id(x), id(w)}
        s = cr.sum(y)
        assert len(packed) == 2
        e = cr.exp(x)
        assert len(packed) == 3 and N(packed[-1]).tolist() == N(e).tolist()
        x * c
        assert len(packed) == 4 and packed[-1] is c
    assert unpacked == []
    (s + cr.sum(e)).backward()
    assert len(unpacked) == 3
    np.testing.assert_allclose(N(x.grad), N(w) + np.exp(N(x)))


def test_the_innermost_saved_tensor_hooks_win_and_gradients_are_exact():
    outer = []
    x = T([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(lambda t: outer.append(t) or t, lambda t: t):
        with saved_tensors_hooks(lambda t: ("box", t.numpy().copy()), lambda b: T(b[1])):
            y = cr.sin(x)
    assert outer == []
    cr.sum(y).backward()
    np.testing.assert_allclose(N(x.grad), np.cos([1.0, 2.0]))


def test_nodes_unpack_again_on_each_backward_with_retain_graph():
    packed, unpacked, pack, unpack = _recording_hooks()
    x = T([1.0, 2.0], requires_grad=True)
    with saved_tensors_hooks(pack, unpack):
        loss = cr.sum(cr.sin(x))
    loss.backward(retain_graph=True)
    loss.backward()
    assert len(unpacked) == 2


def test_disable_saved_tensors_hooks_refuses_them_with_its_message():
    with disable_saved_tensors_hooks("not here"):
        with pytest.raises(RuntimeError, match="not here"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        pass


def test_an_output_packed_as_itself_leaves_no_reference_cycle():
    x = T([1.0, 2.0], requires_grad=True)
    gc.disable()
    try:
        with saved_tensors_hooks(lambda t: t, lambda t: t):
            y = cr.exp(x)
        import weakref

        ref = weakref.ref(y.grad_fn)
        del y
        assert ref() is None
    finally:
        gc.enable()


def test_save_on_cpu_keeps_host_values_where_they_are():
    x = T([1.0, 2.0], requires_grad=True)
    with save_on_cpu():
        y = cr.sum(cr.exp(x) * x)
    y.backward()
    np.testing.assert_allclose(N(x.grad), np.exp([1.0, 2.0]) * np.array([2.0, 3.0]))


# ----------------------------------------------------------------------------- multi-grad hooks


def test_a_multi_grad_hook_in_mode_all_sees_one_gradient_per_tensor_once_per_backward():
    a = T([1.0, 1.0], requires_grad=True)
    b = T([1.0, 1.0], requires_grad=True)
    ya, yb = a * 2.0, b * 3.0
    calls = []
    handle = register_multi_grad_hook((ya, yb), lambda grads: calls.append(grads))
    cr.sum(ya).backward(retain_graph=True)
    assert len(calls) == 1 and calls[0][1] is None
    np.testing.assert_array_equal(N(calls[0][0]), [1.0, 1.0])
    (cr.sum(ya) + cr.sum(yb)).backward()
    assert len(calls) == 2 and all(g is not None for g in calls[1])
    handle.remove()


def test_a_multi_grad_hook_in_mode_any_is_called_once_with_one_gradient():
    a = T([1.0, 1.0], requires_grad=True)
    ya, yb = a * 2.0, a * 3.0
    calls = []
    register_multi_grad_hook((ya, yb), lambda g: calls.append(g), mode="any")
    (cr.sum(ya) + cr.sum(yb)).backward()
    assert len(calls) == 1
    with pytest.raises(ValueError):
        register_multi_grad_hook((ya,), print, mode="some")


# ----------------------------------------------------------------------------- inference mode


def test_inference_mode_makes_inference_tensors_that_autograd_refuses_to_save():
    with cr.inference_mode():
        assert cr.is_inference_mode_enabled() and not cr.is_grad_enabled()
        t = cr.ones(2) * 2.0
        with cr.inference_mode(False):
            assert not cr.is_inference_mode_enabled() and cr.is_grad_enabled()
    assert t.is_inference() and not cr.is_inference_mode_enabled()
    assert not T([1.0]).is_inference()
    with pytest.raises(RuntimeError, match="inference tensor outside InferenceMode"):
        t.requires_grad_()
    x = T([1.0, 1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x * t
    assert (x + t).requires_grad
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        t += 1.0


def test_inference_mode_is_a_decorator():
    @cr.inference_mode()
    def f(x):
        return x * 2.0

    y = f(T([1.0], requires_grad=True))
    assert y.is_inference() and not y.requires_grad


# ----------------------------------------------------------------------------- anomaly mode


def test_set_detect_anomaly_sets_at_once_and_restores_as_a_context_manager():
    assert not autograd.is_anomaly_enabled()
    with autograd.set_detect_anomaly(True):
        assert autograd.is_anomaly_enabled()
    assert not autograd.is_anomaly_enabled()
    autograd.set_detect_anomaly(True)
    assert autograd.is_anomaly_enabled()
    autograd.set_detect_anomaly(False)
    assert not autograd.is_anomaly_enabled()


# ----------------------------------------------------------------------------- Function ctx


class AddOneInPlace(Function):
    @staticmethod
    def forward(ctx, x):
        x += 1.0
        ctx.mark_dirty(x)
        return x

    @staticmethod
    def backward(ctx, g):
        return g


def test_mark_dirty_gives_the_written_input_this_node_as_history_and_a_new_version():
    x = T([1.0, 2.0], requires_grad=True)
    y = x * 1.0
    before = y._version
    z = AddOneInPlace.apply(y)
    assert z is y and y._version > before
    assert y.grad_fn.name() == "AddOneInPlaceBackward"
    cr.sum(z * 3.0).backward()
    np.testing.assert_array_equal(N(x.grad), [3.0, 3.0])
    np.testing.assert_array_equal(N(z), [2.0, 3.0])
    with pytest.raises(RuntimeError, match="leaf Variable"):
        AddOneInPlace.apply(x)


def test_mark_non_differentiable_outputs_carry_no_gradient_and_backward_gets_zeros():
    seen = []

    class WithIndex(Function):
        @staticmethod
        def forward(ctx, x):
            index = cr.astype(cr.argmax(x), cr.float64)
            ctx.mark_non_differentiable(index)
            return x * 2.0, index

        @staticmethod
        def backward(ctx, g, g_index):
            seen.append(N(g_index).tolist())
            return g * 2.0

    x = T([1.0, 3.0], requires_grad=True)
    y, index = WithIndex.apply(x)
    assert y.requires_grad and not index.requires_grad
    cr.sum(y).backward()
    assert seen == [0.0]
    np.testing.assert_array_equal(N(x.grad), [2.0, 2.0])


def test_forward_without_ctx_and_setup_context():
    class Scale(Function):
        @staticmethod
        def forward(x, k):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]

        @staticmethod
        def backward(ctx, g):
            return g * ctx.k, None

    x = T([1.0, 2.0], requires_grad=True)
    cr.sum(Scale.apply(x, 3.0)).backward()
    np.testing.assert_array_equal(N(x.grad), [3.0, 3.0])


def test_once_differentiable_backward_runs_without_grad_and_refuses_double_backward():
    modes = []

    class Square(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, g):
            modes.append(cr.is_grad_enabled())
            (x,) = ctx.saved_tensors
            return 2.0 * x * g

    x = T([1.0, 2.0], requires_grad=True)
    (g,) = grad(cr.sum(Square.apply(x)), x, create_graph=True)
    assert modes == [False] and not g.requires_grad
    np.testing.assert_array_equal(N(g), [2.0, 4.0])
    with pytest.raises(RuntimeError, match="does not require grad"):
        cr.sum(g).backward()


# ----------------------------------------------------------------------------- introspection


def test_summary_counts_nodes_and_saved_bytes_by_kind():
    x = T(np.ones(100), requires_grad=True)
    y = cr.sum(cr.sin(x) * cr.exp(x))
    info = summary(y)
    assert info.nodes == 4 and info.leaves == 1
    assert info.by_kind["SinBackward0"] == (1, 800)
    assert info.by_kind["ExpBackward0"] == (1, 800)
    assert info.by_kind["MulBackward0"] == (1, 1600)
    assert info.by_kind["SumBackward0"] == (1, 0)
    assert info.saved_bytes == 3200 and info.largest[0][0] == 800
    assert "MulBackward0" in str(info)


def test_to_dot_writes_every_node_and_edge(tmp_path):
    x = T([1.0, 2.0], requires_grad=True)
    y = cr.sum(cr.exp(x) * 2.0)
    path = tmp_path / "graph.dot"
    text = to_dot(y, path=str(path))
    assert path.read_text() == text
    assert text.startswith("digraph")
    for name in ("SumBackward0", "MulBackward0", "ExpBackward0", "AccumulateGrad"):
        assert name in text
    assert text.count("->") == 4


def test_to_dot_names_the_leaves_given_as_params_and_no_private_class():
    cr.random.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.GELU(), nn.Linear(4, 1))
    loss = cr.sum(model(T(np.ones((2, 3)))))
    text = to_dot(loss, params=dict(model.named_parameters()))
    for name in ("0.weight", "0.bias", "2.weight", "2.bias"):
        assert f'label="{name}\\n' in text
    assert "AccumulateGrad" not in text
    assert "ErfBackward" in text and "_Erf" not in text
    assert "AccumulateGrad" in to_dot(loss)  # without names, as before


@pytest.mark.parametrize("show", [summary, to_dot])
def test_summary_and_to_dot_of_a_module_say_what_they_take(show):
    with pytest.raises(
        TypeError, match=r"takes tensors .* not Linear: call it as \w+\(model\(x\)\)"
    ):
        show(nn.Linear(2, 2))
