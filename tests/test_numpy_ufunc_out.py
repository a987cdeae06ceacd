"""NumPy's ufuncs and functions with `out=` on tensors: the result is written in place into a
tensor (its version bumped, views and their base see it, recorded like `x.add_` so gradients
flow, a leaf that requires grad refuses it in PyTorch's words), or its values into a NumPy
array (refused when the result needs grad); NumPy's broadcasting and casting rules. And
np.add.at / np.subtract.at: unbuffered in-place sums."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T

RNG = np.random.default_rng(0)
A = RNG.uniform(0.2, 0.9, size=(2, 3))
B = RNG.uniform(0.2, 0.9, size=(2, 3))


def leaf(a):
    return T(a, np.float64, requires_grad=True)


def np_tensor(a, requires_grad=False):
    """A NumPy-backed tensor whatever the backend under test (NumPy arrays meet it)."""
    return cr.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def test_out_tensor_is_written_in_place_and_returned():
    t = T(A)
    version = t._version
    got = np.add(t, T(B), out=t)
    assert got is t
    np.testing.assert_array_equal(N(t), A + B)
    assert t._version > version


def test_out_tensor_receives_a_broadcast_result_in_its_dtype():
    t = T(np.zeros((2, 3)), np.float32)
    np.multiply(T(A[0]), 2.0, out=t)
    assert t.dtype == cr.float32
    np.testing.assert_allclose(N(t), np.broadcast_to(2 * A[0], (2, 3)), rtol=1e-6)


def test_ndarray_augmented_assignment_with_a_tensor_writes_the_array():
    a = np.ones((2, 3))
    a += np_tensor(A)  # ndarray.__iadd__: np.add(a, t, out=(a,))
    assert a.__class__ is np.ndarray
    np.testing.assert_array_equal(a, 1 + A)
    out = np.empty((2, 3))
    assert np.exp(np_tensor(A), out=out) is out
    np.testing.assert_array_equal(out, np.exp(A))


def test_out_ndarray_refuses_a_result_that_requires_grad():
    a = np.ones((2, 3))
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        a += np_tensor(A, requires_grad=True)
    np.testing.assert_array_equal(a, np.ones((2, 3)))


def test_out_leaf_that_requires_grad_raises_as_pytorch():
    x = leaf(A)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        np.add(x, 1.0, out=x)
    with cr.no_grad():  # an optimizer-style update is allowed
        np.subtract(x, 0.5, out=x)
    np.testing.assert_allclose(N(x.detach()), A - 0.5)


def written_into_copy(ufunc):
    def fn(x, y):
        z = x * 1.0
        ufunc(z, y, out=z)
        return z

    return fn


def written_into_view(ufunc):
    def fn(x, y):
        z = x * 1.0
        row = z[1]  # a view: the write reaches its base
        ufunc(row, y[0], out=row)
        return z

    return fn


@pytest.mark.parametrize("ufunc", [np.add, np.multiply, np.divide, np.hypot])
@pytest.mark.parametrize("into", [written_into_copy, written_into_view])
def test_writes_through_out_differentiate_in_both_modes(ufunc, into):
    fn = into(ufunc)
    x, y = leaf(A), leaf(B)
    expected = A.copy()
    if into is written_into_copy:
        expected = ufunc(expected, B)
    else:
        expected[1] = ufunc(expected[1], B[0])
    np.testing.assert_allclose(N(fn(x, y).detach()), expected, rtol=1e-15)
    assert gradcheck(fn, (x, y), check_forward_ad=True)
    assert gradgradcheck(fn, (x, y), check_fwd_over_rev=True)


def test_out_of_another_tensor_sends_the_gradient_to_the_inputs_only():
    x = leaf(A)
    z = T(np.full((2, 3), np.nan), requires_grad=True) * 1.0
    np.sin(x, out=z)
    cr.sum(z).backward()
    np.testing.assert_allclose(N(x.grad), np.cos(A), rtol=1e-15)


def test_out_that_the_result_does_not_broadcast_to_raises_numpys_error():
    with pytest.raises(ValueError, match=r"output operand with shape \(3,\) doesn't match the "):
        np.add(T(A), 1.0, out=T(np.zeros(3)))
    with pytest.raises(ValueError, match=r"could not be broadcast together with shapes \(2,3\)"):
        np.add(T(A), 1.0, out=T(np.zeros((2, 2))))


def test_out_of_another_kind_raises_numpys_casting_error():
    with pytest.raises(TypeError, match="Cannot cast ufunc 'add' output from dtype\\('float64'\\)"):
        np.add(T(A), 0.5, out=T(np.zeros((2, 3), np.int64)))


def test_where_writes_out_only_where_true_as_numpy():
    # The idiom np.divide(a, b, out=np.zeros_like(a), where=b != 0).
    a, b = np.array([1.0, 2.0, 3.0, 4.0]), np.array([2.0, 0.0, 4.0, 0.0])
    expected = np.divide(a, b, out=np.full(4, -1.0), where=b != 0)
    t = T(np.full(4, -1.0))
    assert np.divide(T(a), T(b), out=t, where=T(b) != 0) is t
    np.testing.assert_array_equal(N(t), expected)
    n = np.full(4, -1.0)
    np.divide(np_tensor(a), np_tensor(b), out=n, where=b != 0)
    np.testing.assert_array_equal(n, expected)


def test_where_differentiates_through_the_elements_written():
    def fn(x, y):
        z = x * 0.5
        np.divide(x, y, out=z, where=T([[True, False, True], [False, True, True]]))
        return z

    x, y = leaf(A), leaf(B)
    assert gradcheck(fn, (x, y), check_forward_ad=True)
    assert gradgradcheck(fn, (x, y))


# ----------------------------------------------------------------------------- functions' out=


def clipped_in_place(x):
    losses = x - 0.5
    np.clip(losses, 0, None, out=losses)  # as scikit-learn's hinge_loss
    return losses


def test_function_out_tensor_is_written_in_place_and_differentiates():
    t = T(A - 0.5)
    version = t._version
    assert np.clip(t, 0, None, out=t) is t
    np.testing.assert_array_equal(N(t), np.clip(A - 0.5, 0, None))
    assert t._version > version
    x = leaf(A)
    assert gradcheck(clipped_in_place, (x,), check_forward_ad=True)
    assert gradgradcheck(clipped_in_place, (x,), check_fwd_over_rev=True)


def test_function_out_casts_as_numpys_functions_do():
    total = T(np.zeros(3, dtype=np.int64))
    np.sum(T(A + 2.0), axis=0, out=total)
    np.testing.assert_array_equal(N(total), np.sum(A + 2.0, axis=0).astype(np.int64))
    out = np.empty(())
    assert np.nansum(np_tensor(A), out=out) is out
    np.testing.assert_allclose(out, np.nansum(A), rtol=1e-15)
    spectrum = np.empty((2, 3), complex)
    np.fft.fft(np_tensor(A), out=spectrum)
    np.testing.assert_allclose(spectrum, np.fft.fft(A), rtol=1e-13)


def test_function_out_ndarray_refuses_a_result_that_requires_grad():
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        np.max(np_tensor(A, requires_grad=True), out=np.empty(()))


# ----------------------------------------------------------------------------- ufunc.at

INDEX = ([0, 1, 0, 0], [1, 2, 1, 1])  # (0, 1) three times
VALUES = np.array([1.0, 2.0, 3.0, 4.0])


@pytest.mark.parametrize(
    "call",
    [
        lambda a, b: np.add.at(a, INDEX, b),
        lambda a, b: np.subtract.at(a, [0, 0, 1], 1.5),
        lambda a, b: np.add.at(a, (slice(None), [1, 1]), b[:2, None]),
    ],
)
def test_add_at_sums_repeated_positions_in_place_as_numpy(call):
    t = T(A)
    version = t._version
    assert call(t, T(VALUES)) is None
    expected = A.copy()
    call(expected, VALUES)
    np.testing.assert_allclose(N(t), expected, rtol=1e-15)
    assert t._version > version


def test_add_at_differentiates_and_refuses_a_leaf_that_requires_grad():
    def fn(x, y):
        z = x * 1.0
        np.add.at(z, INDEX, y)
        return z

    x, y = leaf(A), leaf(VALUES)
    assert gradcheck(fn, (x, y), check_forward_ad=True)
    assert gradgradcheck(fn, (x, y))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        np.add.at(x, [0], 1.0)


def test_add_at_into_a_numpy_array_takes_the_values_of_tensors():
    # As scikit-learn's dcg: np.add.at(ranked, inverse, y_true) into np.zeros.
    a = np.zeros(3)
    np.add.at(a, np_tensor([0, 0, 2]).astype(cr.int64), np_tensor([1.0, 2.0, 3.0]))
    np.testing.assert_array_equal(a, [3.0, 0.0, 3.0])
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        np.add.at(a, [0], np_tensor([1.0], requires_grad=True))
