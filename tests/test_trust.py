"""Regression tests for cases that once gave a silently wrong answer or an odd error in the
engine and Tensor: threads, atomic accumulation, dtypes under create_graph, assignment to
.grad, complex operands, empty inputs, custom Functions returning non-tensors, copying and
pickling, formatting."""

import copy
import pickle
import threading

import numpy as np
import pytest

import chainrule as cr
from chainrule import autograd
from chainrule.autograd import Function
from conftest import BACKEND, N, T
from helpers import assert_values

# ----------------------------------------------------------------------------- threads


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


# ----------------------------------------------------------------------------- atomicity


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


def test_assigning_a_grad_of_another_dtype_shape_or_type_raises_at_assignment():
    x = T([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="dtype"):
        x.grad = T([1.0, 2.0], dtype="float32")
    with pytest.raises(RuntimeError, match="size"):
        x.grad = T([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="expected to be a Tensor or None"):
        x.grad = [1.0, 2.0]
    assert x.grad is None


def test_assigning_a_grad_of_another_array_library_raises():
    import array_api_strict

    other = np if BACKEND is not np else array_api_strict
    x = T([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="library"):
        x.grad = cr.asarray(other.asarray([1.0, 2.0]))


# ----------------------------------------------------------------------------- dtypes


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


# ----------------------------------------------------------------------------- complex


def test_a_complex_gradient_for_a_real_output_raises():
    x = T([1.0, 2.0], requires_grad=True)
    y = cr.sum(x * 2.0)
    with pytest.raises(RuntimeError, match="dtype"):
        y.backward(cr.asarray(BACKEND.asarray(np.asarray(1 + 2j))))
    assert x.grad is None


def test_a_real_tensor_that_requires_grad_times_a_complex_gets_a_real_gradient():
    # sum |x (1 + 2i)| = sqrt(5) sum |x|: the gradient is sqrt(5) sign(x), real, as PyTorch.
    for scale in (lambda x: x * (1 + 2j), lambda x: (1 + 2j) * x):
        x = T([1.0, -2.0], requires_grad=True)
        out = scale(x)
        assert out.dtype == cr.complex128
        cr.sum(cr.abs(out)).backward()
        assert x.grad.dtype == cr.float64
        assert_values(x.grad, [2.2360679774997898, -2.2360679774997898])
    x = T([1.0, 2.0], requires_grad=True)
    (g,) = cr.autograd.grad(
        cr.sum(cr.imag(x * cr.asarray(BACKEND.asarray(np.asarray([1j, 2j]))))), x
    )
    assert g.dtype == cr.float64
    assert_values(g, [1.0, 2.0])


# ----------------------------------------------------------------------------- empty inputs


def test_backward_of_no_tensors_does_nothing_and_grad_of_no_outputs_finds_nothing_used():
    x = T([1.0], requires_grad=True)
    autograd.backward([])
    assert x.grad is None
    with pytest.raises(RuntimeError, match="appears to not have been used"):
        autograd.grad([], [x])
    assert autograd.grad([], [x], allow_unused=True) == (None,)


# ----------------------------------------------------------------------------- Function


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


# ----------------------------------------------------------------------------- copy and pickle


def test_a_leaf_pickles_with_its_values_requires_grad_and_grad():
    x = T([1.0, 2.0], requires_grad=True)
    cr.sum(x * 3.0).backward()
    y = pickle.loads(pickle.dumps(x))
    assert y.is_leaf and y.requires_grad
    np.testing.assert_array_equal(N(y), [1.0, 2.0])
    np.testing.assert_array_equal(N(y.grad), [3.0, 3.0])
    assert type(y._xp) is type(x._xp) and y._xp is x._xp


def test_containers_of_tensors_pickle_and_deepcopy():
    state = {"w": T([1.0], requires_grad=True), "b": [T([2, 3])]}
    for clone in (pickle.loads(pickle.dumps(state)), copy.deepcopy(state)):
        assert clone["w"].requires_grad and clone["w"] is not state["w"]
        assert N(clone["b"][0]).tolist() == [2, 3]


def test_deepcopy_of_a_leaf_copies_values_and_grad_and_refuses_a_non_leaf():
    x = T([1.0, 2.0], requires_grad=True)
    cr.sum(x * 3.0).backward()
    y = copy.deepcopy(x)
    assert y.requires_grad and y.is_leaf
    np.testing.assert_array_equal(N(y.grad), [3.0, 3.0])
    y.grad = None
    assert x.grad is not None
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(x * 2.0)


def test_copy_of_a_leaf_is_an_independent_leaf():
    x = T([1.0, 2.0], requires_grad=True)
    y = copy.copy(x)
    assert y is not x and y.is_leaf and y.requires_grad and y.grad is None
    cr.sum(y * 2.0).backward()
    assert x.grad is None
    np.testing.assert_array_equal(N(y.grad), [2.0, 2.0])


def test_format_of_a_one_element_tensor_formats_its_value():
    assert format(T(1.23456), ".3f") == "1.235"
    assert f"{T([2.5]):.1f}" == "2.5"
    assert f"{T([1.0, 2.0])}" == repr(T([1.0, 2.0]))
    with pytest.raises(TypeError, match="format"):
        format(T([1.0, 2.0]), ".3f")


def test_repr_of_an_empty_tensor_shows_its_shape():
    assert "size=(0, 3)" in repr(cr.zeros((0, 3)))
    assert repr(cr.zeros((0,))).startswith("tensor([]")
