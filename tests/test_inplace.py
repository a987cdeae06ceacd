"""In-place operators and item assignment: in place on tensors that need no grad (views see
the write), recorded on tensors that need grad, refused on leaves that require grad, and never
a silently wrong gradient (a node whose saved tensor was written refuses to run)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import forward_ad as fwAD
from chainrule.autograd import grad, gradcheck, gradgradcheck
from conftest import N, T, fails_on
from helpers import assert_values, leaf

GRADCHECKED = {"setitem"}


@fails_on("jax", reason="JAX arrays are immutable: an in-place operator makes a new array")
@fails_on("dask", reason="a Dask array is a task graph: an in-place operator makes a new one")
def test_in_place_operators_on_a_tensor_without_grad_write_its_array():
    x = T([1.0, 2.0, 3.0])
    data = x._data
    x += 1.0
    x *= T([2.0, 2.0, 2.0])
    x -= 1
    x /= 2.0
    assert x._data is data
    np.testing.assert_allclose(N(x), [1.5, 2.5, 3.5])


def test_item_assignment_writes_through_views():
    x = T(np.zeros((2, 3)))
    row = x[0]
    row[1] = 5.0
    x[1, :] = T([1.0, 2.0, 3.0])
    np.testing.assert_allclose(N(x), [[0.0, 5.0, 0.0], [1.0, 2.0, 3.0]])


def test_in_place_on_a_leaf_that_requires_grad_raises():
    x = T([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        x += 1.0
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        x[0] = 3.0
    np.testing.assert_allclose(N(x), [1.0, 2.0])


def test_in_place_on_a_leaf_under_no_grad_updates_it_and_keeps_it_a_leaf():
    x = T([1.0, 2.0], requires_grad=True)
    (x * x).sum().backward()
    with cr.no_grad():
        x -= 0.5 * x.grad
    assert x.requires_grad and x.is_leaf
    np.testing.assert_allclose(N(x), [0.0, 0.0])


def test_a_write_after_a_node_saved_the_tensor_makes_backward_raise():
    x = T([1.0, 2.0], requires_grad=True)
    c = T([3.0, 4.0])
    y = (x * c).sum()
    c[0] = 10.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()
    assert x.grad is None


def test_a_write_through_a_view_is_seen_by_the_version_check():
    x = T([1.0, 2.0], requires_grad=True)
    c = T([3.0, 4.0])
    y = (x * c).sum()
    view = c[0:1]
    view += 1.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_a_write_before_the_node_saved_the_tensor_is_fine():
    x = T([1.0, 2.0], requires_grad=True)
    c = T([3.0, 4.0])
    c += 1.0
    (x * c).sum().backward()
    np.testing.assert_allclose(N(x.grad), [4.0, 5.0])


def test_writing_a_detached_alias_writes_the_graph_values_and_backward_raises():
    x = T([1.0, 2.0], requires_grad=True)
    y = cr.exp(x)  # saves its output
    alias = y.detach()
    alias += 100.0
    np.testing.assert_allclose(N(y.detach()), np.exp([1.0, 2.0]) + 100.0)
    assert y._version == alias._version == 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()


def test_in_place_on_a_non_leaf_is_recorded():
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    h = x * 2.0
    h *= x
    h[1] = x[0] * 10.0
    assert h.grad_fn is not None
    (g,) = grad(h.sum(), x)
    # h = [2 x0^2, 10 x0, 2 x2^2]
    np.testing.assert_allclose(N(g), [4.0 * 1.0 + 10.0, 0.0, 4.0 * 3.0])


def test_item_assignment_of_a_grad_value_into_a_constant_makes_it_a_non_leaf():
    w = T([1.0, 2.0, 3.0], requires_grad=True)
    c = T(np.zeros(3))
    c[1:] = w[1:] * 2.0
    assert c.requires_grad and not c.is_leaf
    (g,) = grad(c.sum(), w)
    np.testing.assert_allclose(N(g), [0.0, 2.0, 2.0])


def _assign(x, v):
    t = x * x
    t[0:2] = v * v
    t *= x
    return t


def test_setitem_gradients_first_and_second_order():
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    v = T([0.5], requires_grad=True)
    assert gradcheck(_assign, (x, v))
    assert gradgradcheck(_assign, (x, v))


def test_in_place_must_keep_the_shape():
    x = T([1.0, 2.0])
    with pytest.raises((ValueError, RuntimeError)):
        x += T([[1.0, 2.0], [3.0, 4.0]])


def test_in_place_cannot_turn_floats_into_integers():
    x = T([1, 2])
    with pytest.raises(TypeError):
        x += 1.5


@pytest.mark.filterwarnings("ignore:invalid value")
@pytest.mark.parametrize(
    "key",
    [
        Ellipsis,
        slice(None),
        pytest.param(
            np.asarray(True),
            marks=fails_on("dask", reason="Dask doesn't assign through a 0-d boolean key"),
        ),
    ],
    ids=["...", ":", "True"],
)
def test_a_write_over_every_element_keeps_a_nan_it_replaced_out_of_the_gradient(key):
    # The pattern of scikit-learn's _incremental_mean_and_var: compute 0/0, then overwrite.
    x = T([1.0, 4.0], requires_grad=True)
    y = cr.sqrt(x - 2.0) * 1.0  # NaN at x = 1
    y[T(key) if isinstance(key, np.ndarray) else key] = x * 3.0
    (g,) = grad(cr.sum(y), x)
    np.testing.assert_array_equal(N(g), [3.0, 3.0])


# A write over every element leaves the overwritten tensor a gradient known to be zero: it is
# still used (PyTorch gives zeros), and no VJP runs on it (the NaN protection above).


def test_a_tensor_overwritten_everywhere_gets_zeros_not_unused():
    # The case: autograd.grad raised "appears to not have been used" for w.
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    w = T([0.5, -1.0, 2.0], requires_grad=True)
    y = w * 1.0
    y[0:3] = x * 2.0
    gx, gw = grad(cr.sum(y * y), [x, w])
    np.testing.assert_array_equal(N(gx), [8.0, 16.0, 24.0])
    np.testing.assert_array_equal(N(gw), [0.0, 0.0, 0.0])
    assert gw.shape == w.shape and gw.dtype == w.dtype
    y = w * 1.0
    y[...] = x * 2.0
    cr.sum(y * y).backward()
    np.testing.assert_array_equal(N(w.grad), [0.0, 0.0, 0.0])


@pytest.mark.filterwarnings("ignore:invalid value")
def test_a_nan_overwritten_everywhere_gives_zeros_not_nan_to_what_made_it():
    # PyTorch would give NaN (0 * NaN through the square root's VJP); scikit-learn needs 0.
    w = T([1.0, 4.0], requires_grad=True)
    x = T([0.5, 2.0], requires_grad=True)
    y = cr.sqrt(w - 2.0) * 1.0  # NaN at w = 1
    y[:] = x * 3.0
    gw, gx = grad(cr.sum(y), [w, x])
    np.testing.assert_array_equal(N(gw), [0.0, 0.0])
    np.testing.assert_array_equal(N(gx), [3.0, 3.0])


def test_zeros_of_an_overwritten_tensor_add_to_its_other_uses():
    x = T([1.0, 2.0], requires_grad=True)
    w = T([0.5, -1.0], requires_grad=True)
    y = w * 1.0
    y[:] = x * 2.0
    (gw,) = grad(cr.sum(y * y) + cr.sum(w * w * 3.0), w)
    np.testing.assert_array_equal(N(gw), [3.0, -6.0])


def test_an_overwritten_output_of_a_several_output_op_gives_zeros():
    w = T(np.arange(6.0).reshape(2, 3), requires_grad=True)
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    first, _ = cr.unstack(w)
    y = first * 1.0
    y[:] = x
    (gw,) = grad(cr.sum(y * y), w)
    np.testing.assert_array_equal(N(gw), np.zeros((2, 3)))


def test_an_overwritten_tensor_gets_zeros_under_create_graph_and_hooks_see_them():
    x = T([1.0, 2.0], requires_grad=True)
    w = T([0.5, -1.0], requires_grad=True)
    seen = []
    w.register_hook(lambda g: seen.append(N(g)) or g + 1.0)
    y = w * 1.0
    y[:] = x * w
    gx, gw = grad(cr.sum(y * y), [x, w], create_graph=True)
    np.testing.assert_array_equal(N(gw), 2 * N(x) ** 2 * N(w) + 1.0)
    (ggx,) = grad(cr.sum(gw), x)
    np.testing.assert_array_equal(N(ggx), 4 * N(x) * N(w))
    np.testing.assert_array_equal(seen[0], 2 * N(x) ** 2 * N(w))
    z = w * 1.0
    z[:] = x
    cr.sum(z * z).backward()
    np.testing.assert_array_equal(seen[-1], [0.0, 0.0])  # a leaf's hook sees the zeros
    np.testing.assert_array_equal(N(w.grad), [1.0, 1.0])


@pytest.mark.filterwarnings("ignore:invalid value")
def test_a_partial_write_still_sends_zero_gradient_to_the_replaced_elements():
    x = T([1.0, 4.0, 9.0], requires_grad=True)
    y = x * 2.0
    y[0] = 7.0
    (g,) = grad(cr.sum(y * y), x)
    np.testing.assert_array_equal(N(g), [0.0, 32.0, 72.0])


def test_a_python_int_written_into_a_float_tensor_takes_its_dtype_with_history_and_tangent():
    # array_api_strict refused it ("float64 and int64 cannot be type promoted together")
    # where the write is recorded (grad) or carries a tangent (forward mode).
    x = leaf([1.0, 2.0, 3.0])
    y = x * 1.0
    y[0] = 7
    assert_values(y, [7.0, 2.0, 3.0])
    (g,) = grad(cr.sum(y * y), x)
    assert_values(g, [0.0, 4.0, 6.0])
    with fwAD.dual_level():
        z = fwAD.make_dual(T([1.0, 2.0, 3.0]), T([1.0, 1.0, 1.0]))
        z[1] = 5
        assert_values(fwAD.unpack_dual(z).tangent, [1.0, 0.0, 1.0])
