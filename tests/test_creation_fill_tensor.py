"""`full`, `full_like` and `Tensor.new_full` with a 0-d tensor as the fill value, as NumPy and
PyTorch take one (SciPy's elementwise iterative methods pass `xp.asarray(number)`; the
backend's `full` handed the tensor to NumPy's copyto, which refused it): values and dtypes
against NumPy's, a writable result, the gradient of a fill value that requires grad."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T

FILLS = {
    "full": (lambda v: cr.full((2, 3), v), lambda a: np.full((2, 3), a)),
    "full int shape": (lambda v: cr.full(4, v), lambda a: np.full(4, a)),
    "full dtype": (
        lambda v: cr.full(3, v, dtype=cr.int32),
        lambda a: np.full(3, a, dtype=np.int32),
    ),
    "full_like": (
        lambda v: cr.full_like(T(np.zeros((2, 2), np.float32)), v),
        lambda a: np.full_like(np.zeros((2, 2), np.float32), a),
    ),
    "new_full": (
        lambda v: T(np.zeros(1, np.float32)).new_full((3,), v),
        lambda a: np.full(3, a, dtype=np.float32),
    ),
}


@pytest.mark.parametrize("value", [2.5, -0.0, 7])
@pytest.mark.parametrize("name", FILLS)
def test_a_zero_d_tensor_fills_as_its_number(name, value):
    make, expected = FILLS[name]
    want = expected(np.asarray(value))
    out = make(T(value))
    assert out.__class__ is cr.Tensor and not out.requires_grad
    np.testing.assert_array_equal(N(out), want)
    assert str(N(out).dtype) == str(want.dtype)
    assert np.array_equal(np.signbit(N(out)), np.signbit(want))


def test_a_tensor_filled_by_a_tensor_is_writable():
    out = cr.full(3, T(1))
    out[0] = 5
    np.testing.assert_array_equal(N(out), [5, 1, 1])


def test_a_fill_value_that_requires_grad_gets_the_results_sum():
    def fn(v):
        return cr.full((2, 3), v) * T(np.arange(6.0).reshape(2, 3))

    v = T(0.5, requires_grad=True)
    assert gradcheck(fn, (v,))
    assert gradgradcheck(fn, (v,))
    cr.sum(fn(v)).backward()
    np.testing.assert_allclose(N(v.grad), 15.0)


def test_a_fill_value_of_more_than_one_element_is_a_type_error():
    with pytest.raises(TypeError, match="fill_value must be a number or a 0-d tensor"):
        cr.full(2, T([1.0, 2.0]))
