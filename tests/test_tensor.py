"""Tensor: construction, attributes (assignment to .grad), conversions, operators and
indexing, and their gradients; copying, pickling and formatting. The engine's semantics
(backward, grad, grad mode) are tested in test_engine.py."""

import copy
import pickle
import re

import array_api_compat
import array_api_strict
import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import forward_ad as fwad
from conftest import BACKEND, N, T, fails_on, skip_on

# ----------------------------------------------------------------------------- construction


@skip_on("jax", reason="arrays are immutable: nothing can write into the source")
def test_tensor_copies_its_data():
    source = BACKEND.asarray(np.array([1.0, 2.0]))
    t = cr.tensor(source)
    source[0] = 9.0
    assert N(t).tolist() == [1.0, 2.0]


def test_tensor_of_a_tensor_is_a_new_leaf_with_its_own_data():
    x = T([1.0, 2.0], requires_grad=True)
    t = cr.tensor(x * 2.0)
    assert t.is_leaf and not t.requires_grad and t.grad_fn is None
    assert N(t).tolist() == [2.0, 4.0]


def test_tensor_takes_dtype_and_requires_grad():
    t = cr.tensor([1, 2], dtype=cr.float32, requires_grad=True)
    assert t.dtype == cr.float32
    assert t.requires_grad and t.is_leaf


def test_asarray_shares_numpy_memory_unless_copy_is_requested():
    a = np.array([1.0, 2.0])
    assert np.shares_memory(cr.asarray(a).numpy(), a)
    assert not np.shares_memory(cr.asarray(a, copy=True).numpy(), a)


def test_asarray_converts_dtype():
    t = cr.asarray([1, 2], dtype=cr.float32)
    assert t.dtype == cr.float32
    assert N(t).tolist() == [1.0, 2.0]


# ----------------------------------------------------------------------------- attributes


def test_array_attributes():
    t = T(np.zeros((2, 3)), dtype="float32")
    assert t.shape == (2, 3) and isinstance(t.shape, tuple)
    assert t.ndim == 2
    assert t.size == 6
    assert t.dtype == cr.float32
    assert t.device == array_api_compat.device(BACKEND.asarray(np.zeros(1)))


def test_T_reverses_axes_and_mT_swaps_the_last_two():
    values = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(N(T(values).T), values.T)
    stacked = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(N(T(stacked).mT), np.swapaxes(stacked, -1, -2))


def test_gradient_flows_through_T_and_mT():
    x = T(np.arange(6.0).reshape(2, 3), requires_grad=True)
    weights = T(np.arange(6.0).reshape(3, 2))
    ((x.T * weights).sum() + (x.mT * weights).sum()).backward()
    np.testing.assert_array_equal(N(x.grad), 2 * N(weights).T)


def test_leaf_and_result_autograd_attributes():
    x = T([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    assert x.is_leaf and x.grad_fn is None and x.grad is None
    assert not y.is_leaf and y.grad_fn is not None and y.requires_grad


def test_tensor_that_needs_no_grad_is_a_leaf():
    c = T([1.0, 2.0])
    assert not c.requires_grad and c.is_leaf and c.grad_fn is None
    assert (c * 2.0).is_leaf


def test_requires_grad_is_settable_on_leaves():
    x = T([1.0, 2.0])
    x.requires_grad = True
    assert x.requires_grad
    x.requires_grad = False
    assert not x.requires_grad
    assert x.requires_grad_() is x and x.requires_grad
    assert x.requires_grad_(False) is x and not x.requires_grad


def test_requires_grad_of_a_non_leaf_can_be_set_true_but_not_false():
    # As PyTorch: True is a no-op that returns the tensor, False raises.
    y = T([1.0, 2.0], requires_grad=True) * 2.0
    assert y.requires_grad_(True) is y
    y.requires_grad = True
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad = False
    with pytest.raises(RuntimeError, match="leaf"):
        y.requires_grad_(False)
    assert y.grad_fn is not None


@pytest.mark.parametrize("dtype", ["int64", "int32", "bool"])
def test_only_floating_tensors_may_require_grad(dtype):
    with pytest.raises(RuntimeError, match="floating point"):
        cr.tensor(BACKEND.asarray(np.ones(2, dtype=dtype)), requires_grad=True)
    t = T(np.ones(2, dtype=dtype))
    with pytest.raises(RuntimeError, match="floating point"):
        t.requires_grad_()
    with pytest.raises(RuntimeError, match="floating point"):
        t.requires_grad = True
    assert not t.requires_grad


def test_detach_keeps_values_and_drops_history():
    x = T([1.0, 2.0], requires_grad=True)
    d = (x * 3.0).detach()
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert N(d).tolist() == [3.0, 6.0]


@pytest.mark.regression
def test_assigning_a_grad_of_another_dtype_shape_or_type_raises_at_assignment():
    x = T([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="dtype"):
        x.grad = T([1.0, 2.0], dtype="float32")
    with pytest.raises(RuntimeError, match="size"):
        x.grad = T([1.0, 2.0, 3.0])
    with pytest.raises(TypeError, match="expected to be a Tensor or None"):
        x.grad = [1.0, 2.0]
    assert x.grad is None


@pytest.mark.regression
def test_assigning_a_grad_of_another_array_library_raises():
    other = np if BACKEND is not np else array_api_strict
    x = T([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="library"):
        x.grad = cr.asarray(other.asarray([1.0, 2.0]))


# ----------------------------------------------------------------------------- conversions


def test_item_float_and_bool_of_one_element():
    t = T([[2.5]])
    assert t.item() == 2.5 and isinstance(t.item(), float)
    assert float(t) == 2.5
    assert bool(T(1.0)) is True and bool(T([0.0])) is False
    assert T([3], dtype="int64").item() == 3


@pytest.mark.parametrize("convert", [lambda t: t.item(), float, bool])
def test_scalar_conversions_of_several_elements_raise(convert):
    with pytest.raises((ValueError, RuntimeError)):
        convert(T([1.0, 2.0]))


def test_numpy_of_a_numpy_tensor_without_grad_shares_memory():
    a = np.array([1.0, 2.0, 3.0])
    t = cr.asarray(a)
    assert np.shares_memory(t.numpy(), a)


def test_numpy_and_np_asarray_give_the_values():
    t = T([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    np.testing.assert_array_equal(t.numpy(), [[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(np.asarray(t.detach()), [[1.0, 2.0], [3.0, 4.0]])
    assert np.asarray(T([1, 2], dtype="int32")).dtype == np.int32


@pytest.mark.parametrize("convert", [np.asarray, np.array, lambda t: np.asarray([t, t])])
def test_numpy_conversion_of_a_tensor_that_requires_grad_raises_as_pytorch(convert):
    # A silent detached copy would lose the gradient, e.g. through SciPy's compiled functions.
    t = T([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        convert(t)
    with pytest.raises(RuntimeError, match="requires grad"):
        np.asarray(t * 2.0)


_LISTS_THROUGH_NUMPY = pytest.mark.skipif(
    BACKEND is not np, reason="lists of tensors convert through NumPy on NumPy storage only"
)


@pytest.mark.parametrize(
    "convert",
    [
        np.asarray,
        np.array,
        pytest.param(lambda t: np.append([t], [3.0]), marks=_LISTS_THROUGH_NUMPY),
        pytest.param(lambda t: [t[0], t[1]], marks=_LISTS_THROUGH_NUMPY),
    ],
)
def test_numpy_conversion_of_a_tensor_with_a_tangent_raises_as_reverse_mode_does(convert):
    # The result would carry no tangent: forward mode gave a JVP of exactly 0 silently.
    def through_numpy(d):
        return cr.sum(cr.asarray(convert(d)))

    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that has a forward"):
        cr.func.jvp(through_numpy, (T([1.0, 2.0]),), (T([1.0, 1.0]),))
    with fwad.dual_level():
        d = fwad.make_dual(T([1.0, 2.0]), T([1.0, 1.0]))
        with pytest.raises(RuntimeError, match="forward-mode tangent"):
            np.asarray(d * 2.0)
        np.testing.assert_array_equal(np.asarray(d.detach()), [1.0, 2.0])
    np.testing.assert_array_equal(np.asarray(d), [1.0, 2.0])  # its level has exited


@skip_on("dask", reason="a lazy tensor's repr shows no values (test_backend_dask checks it)")
def test_repr_shows_values_dtype_and_grad_fn():
    assert re.search(r"1\.5.*2\.5", repr(T([1.5, 2.5])))
    assert "dtype" not in repr(T([1.5, 2.5]))
    assert "float32" in repr(T([1.5], dtype="float32"))
    y = T([1.5], requires_grad=True) * 2.0
    assert re.search(r"grad_fn=<\w*Backward", repr(y))


def test_len_and_iter_go_over_the_first_axis():
    x = T([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    assert len(x) == 3
    rows = list(x)
    assert [N(r).tolist() for r in rows] == [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]
    (rows[0].sum() + 2.0 * rows[2].sum()).backward()
    np.testing.assert_array_equal(N(x.grad), [[1.0, 1.0], [0.0, 0.0], [2.0, 2.0]])


def test_len_of_a_0d_tensor_raises_type_error():
    with pytest.raises(TypeError):
        len(T(1.0))


# ----------------------------------------------------------------------------- operators

X = np.array([[1.5, -2.0], [3.0, 0.5]])
Y = np.array([[0.5, 4.0], [-1.5, 2.0]])

OPERATORS = {
    "+": (lambda a, b: a + b),
    "-": (lambda a, b: a - b),
    "*": (lambda a, b: a * b),
    "/": (lambda a, b: a / b),
    "//": (lambda a, b: a // b),
    "%": (lambda a, b: a % b),
    "**": (lambda a, b: abs(a) ** b),
    "@": (lambda a, b: a @ b),
}


@pytest.mark.parametrize("name", OPERATORS)
def test_binary_operator_values_match_numpy(name):
    op = OPERATORS[name]
    np.testing.assert_allclose(N(op(T(X), T(Y))), op(X, Y), rtol=1e-14)


@pytest.mark.parametrize("name", ["+", "-", "*", "/", "//", "%", "**"])
def test_binary_operators_mix_with_python_scalars_on_either_side(name):
    op = OPERATORS[name]
    np.testing.assert_allclose(N(op(T(X), 2.0)), op(X, 2.0), rtol=1e-14)
    np.testing.assert_allclose(N(op(2.0, T(X))), op(2.0, X), rtol=1e-14)


def test_unary_operators_and_abs():
    np.testing.assert_array_equal(N(-T(X)), -X)
    np.testing.assert_array_equal(N(+T(X)), X)
    np.testing.assert_array_equal(N(abs(T(X))), np.abs(X))
    np.testing.assert_array_equal(N(T(X).abs()), np.abs(X))


def _grads(op, x_values, y_values):
    x = T(x_values, requires_grad=True)
    y = T(y_values, requires_grad=True)
    op(x, y).sum().backward()
    return N(x.grad), N(y.grad)


def test_arithmetic_operator_gradients():
    gx, gy = _grads(lambda a, b: a - b, X, Y)
    np.testing.assert_array_equal(gx, np.ones_like(X))
    np.testing.assert_array_equal(gy, -np.ones_like(Y))
    gx, gy = _grads(lambda a, b: a * b, X, Y)
    np.testing.assert_array_equal(gx, Y)
    np.testing.assert_array_equal(gy, X)
    gx, gy = _grads(lambda a, b: a / b, X, Y)
    np.testing.assert_allclose(gx, 1 / Y, rtol=1e-14)
    np.testing.assert_allclose(gy, -X / Y**2, rtol=1e-14)


def test_power_operator_gradients():
    base = np.abs(X)
    gx, gy = _grads(lambda a, b: a**b, base, Y)
    np.testing.assert_allclose(gx, Y * base ** (Y - 1), rtol=1e-14)
    np.testing.assert_allclose(gy, base**Y * np.log(base), rtol=1e-14)


def test_matmul_operator_gradients():
    gx, gy = _grads(lambda a, b: a @ b, X, Y)
    np.testing.assert_allclose(gx, np.ones((2, 2)) @ Y.T, rtol=1e-14)
    np.testing.assert_allclose(gy, X.T @ np.ones((2, 2)), rtol=1e-14)


def test_floor_divide_and_remainder_gradients():
    gx, gy = _grads(lambda a, b: a // b, X, Y)
    np.testing.assert_array_equal(gx, np.zeros_like(X))
    np.testing.assert_array_equal(gy, np.zeros_like(Y))
    gx, gy = _grads(lambda a, b: a % b, X, Y)
    np.testing.assert_array_equal(gx, np.ones_like(X))
    np.testing.assert_array_equal(gy, -np.floor(X / Y))


def test_unary_operator_gradients():
    x = T(X, requires_grad=True)
    (-x + 3.0 * (+x) + abs(x)).sum().backward()
    np.testing.assert_array_equal(N(x.grad), 2.0 + np.sign(X))


@pytest.mark.parametrize(
    "compare",
    [
        lambda a, b: a < b,
        lambda a, b: a <= b,
        lambda a, b: a > b,
        lambda a, b: a >= b,
        lambda a, b: a == b,
        lambda a, b: a != b,
    ],
)
def test_comparisons_give_bool_tensors_without_grad(compare):
    x = T(X, requires_grad=True)
    result = compare(x, T(Y))
    assert result.dtype == cr.bool
    assert not result.requires_grad and result.grad_fn is None
    np.testing.assert_array_equal(N(result), compare(X, Y))


def test_comparison_with_a_python_scalar():
    np.testing.assert_array_equal(N(T(X) > 1.0), X > 1.0)


@pytest.mark.parametrize(
    "op",
    [
        lambda t: t * 2.0,
        lambda t: 2.0 * t,
        lambda t: t + 1,
        lambda t: t / 3.0,
        lambda t: t**2.0,
        lambda t: 1.0 - t,
    ],
)
def test_python_scalars_do_not_promote_float32(op):
    x = T([1.0, 2.0], dtype="float32", requires_grad=True)
    y = op(x)
    assert y.dtype == cr.float32
    y.sum().backward()
    assert x.grad.dtype == cr.float32


def test_python_int_keeps_an_integer_tensor_dtype():
    assert (T([1, 2], dtype="int32") + 1).dtype == cr.int32


def test_mixing_arrays_of_two_libraries_raises_type_error_naming_both():
    from_numpy = cr.tensor(np.array([1.0, 2.0]), requires_grad=True)
    from_strict = cr.tensor(array_api_strict.asarray([1.0, 2.0]))
    for op in (
        lambda: from_numpy + from_strict,
        lambda: from_strict * from_numpy,
        lambda: from_numpy @ from_strict,
        lambda: cr.stack([from_numpy, from_strict]),
    ):
        with pytest.raises(TypeError, match=r"(?=.*numpy)(?=.*array_api_strict)"):
            op()


# ----------------------------------------------------------------------------- methods


def test_sum_and_mean_methods_with_axis_and_keepdims():
    values = np.arange(6.0).reshape(2, 3)
    t = T(values)
    assert N(t.sum()).item() == 15.0
    np.testing.assert_array_equal(N(t.sum(axis=0)), values.sum(axis=0))
    assert t.sum(axis=1, keepdims=True).shape == (2, 1)
    np.testing.assert_array_equal(N(t.mean(axis=1)), values.mean(axis=1))


def test_sum_and_mean_gradients_spread_over_the_reduced_axes():
    x = T(np.arange(6.0).reshape(2, 3), requires_grad=True)
    (x.sum(axis=0) * T([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(N(x.grad), [[1.0, 2.0, 3.0]] * 2)
    x.grad = None
    x.mean(axis=1, keepdims=True).sum().backward()
    np.testing.assert_allclose(N(x.grad), np.full((2, 3), 1 / 3), rtol=1e-15)


def test_reshape_method_takes_a_tuple_or_separate_sizes():
    x = T(np.arange(6.0), requires_grad=True)
    assert x.reshape(2, 3).shape == (2, 3)
    assert x.reshape((3, 2)).shape == (3, 2)
    assert x.reshape(-1).shape == (6,)
    (x.reshape(2, 3) * T([[1.0, 2.0, 3.0]])).sum().backward()
    np.testing.assert_array_equal(N(x.grad), [1.0, 2.0, 3.0, 1.0, 2.0, 3.0])


# ----------------------------------------------------------------------------- indexing

M = np.arange(12.0).reshape(3, 4)


def test_basic_slicing_values_and_gradient():
    x = T(M, requires_grad=True)
    part = x[1:, ::2]
    np.testing.assert_array_equal(N(part), M[1:, ::2])
    part.sum().backward()
    expected = np.zeros_like(M)
    expected[1:, ::2] = 1.0
    np.testing.assert_array_equal(N(x.grad), expected)


def test_slicing_fewer_axes_than_the_tensor_has():
    x = T(M, requires_grad=True)
    np.testing.assert_array_equal(N(x[1:]), M[1:])
    np.testing.assert_array_equal(N(x[2]), M[2])
    (x[1:].sum() + x[2].sum()).backward()
    np.testing.assert_array_equal(N(x.grad), [[0.0] * 4, [1.0] * 4, [2.0] * 4])


def test_integer_and_none_and_ellipsis_indexing_gradient():
    x = T(M, requires_grad=True)
    picked = x[2, ..., None]
    assert picked.shape == (4, 1)
    (picked * T([[1.0], [2.0], [3.0], [4.0]])).sum().backward()
    expected = np.zeros_like(M)
    expected[2] = [1.0, 2.0, 3.0, 4.0]
    np.testing.assert_array_equal(N(x.grad), expected)


def test_integer_array_indexing_values_and_gradient_add_up_repeats():
    x = T([10.0, 20.0, 30.0], requires_grad=True)
    picked = x[T([2, 0, 2], dtype="int64")]
    np.testing.assert_array_equal(N(picked), [30.0, 10.0, 30.0])
    (picked * T([1.0, 2.0, 3.0])).sum().backward()
    np.testing.assert_array_equal(N(x.grad), [2.0, 0.0, 4.0])


@fails_on("dask", reason="the gradient of boolean-mask indexing is refused (unknown size)")
def test_boolean_mask_indexing_values_and_gradient():
    x = T(M, requires_grad=True)
    mask = x > 4.0
    picked = x[mask]
    np.testing.assert_array_equal(N(picked), M[M > 4.0])
    (picked * picked).sum().backward()
    np.testing.assert_array_equal(N(x.grad), np.where(M > 4.0, 2 * M, 0.0))


# ---------------------------------------------------------------------- copy, pickle and format


@pytest.mark.regression
def test_a_leaf_pickles_with_its_values_requires_grad_and_grad():
    x = T([1.0, 2.0], requires_grad=True)
    cr.sum(x * 3.0).backward()
    y = pickle.loads(pickle.dumps(x))
    assert y.is_leaf and y.requires_grad
    np.testing.assert_array_equal(N(y), [1.0, 2.0])
    np.testing.assert_array_equal(N(y.grad), [3.0, 3.0])
    assert type(y._xp) is type(x._xp) and y._xp is x._xp


@pytest.mark.regression
def test_containers_of_tensors_pickle_and_deepcopy():
    state = {"w": T([1.0], requires_grad=True), "b": [T([2, 3])]}
    for clone in (pickle.loads(pickle.dumps(state)), copy.deepcopy(state)):
        assert clone["w"].requires_grad and clone["w"] is not state["w"]
        assert N(clone["b"][0]).tolist() == [2, 3]


@pytest.mark.regression
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


@pytest.mark.regression
def test_copy_of_a_leaf_is_an_independent_leaf():
    x = T([1.0, 2.0], requires_grad=True)
    y = copy.copy(x)
    assert y is not x and y.is_leaf and y.requires_grad and y.grad is None
    cr.sum(y * 2.0).backward()
    assert x.grad is None
    np.testing.assert_array_equal(N(y.grad), [2.0, 2.0])


@pytest.mark.regression
def test_format_of_a_one_element_tensor_formats_its_value():
    assert format(T(1.23456), ".3f") == "1.235"
    assert f"{T([2.5]):.1f}" == "2.5"
    assert f"{T([1.0, 2.0])}" == repr(T([1.0, 2.0]))
    with pytest.raises(TypeError, match="format"):
        format(T([1.0, 2.0]), ".3f")


@pytest.mark.regression
@skip_on("dask", reason="a lazy tensor's repr shows no values (test_backend_dask checks it)")
def test_repr_of_an_empty_tensor_shows_its_shape():
    assert "size=(0, 3)" in repr(cr.zeros((0, 3)))
    assert repr(cr.zeros((0,))).startswith("tensor([]")
