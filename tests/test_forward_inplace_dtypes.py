"""Forward mode: an in-place operator on a tensor that shares no memory keeps the tangent in
the tensor's dtype, as its values (PyTorch's tangents always have their primal's dtype): a
float32 tensor written with a float64 dual value had a float64 tangent."""

import numpy as np
import pytest

import chainrule as cr
import chainrule.autograd.forward_ad as fwAD
from conftest import N, T, skip_on

MIXED = skip_on(
    "array_api_strict", reason="its in-place operators refuse float64 values into float32"
)

OPERATORS = {
    "iadd": lambda b, v: b.__iadd__(v),
    "isub": lambda b, v: b.__isub__(v),
    "imul": lambda b, v: b.__imul__(v),
    "itruediv": lambda b, v: b.__itruediv__(v),
}


@MIXED
@pytest.mark.parametrize("name", OPERATORS)
def test_a_float32_tensor_written_with_a_float64_dual_keeps_a_float32_tangent(name):
    with fwAD.dual_level():
        v = fwAD.make_dual(T(np.array([1.0, 2.0, 4.0])), T(np.array([0.5, -1.0, 2.0])))
        b = T(np.array([3.0, 5.0, 7.0], dtype=np.float32))
        expected = {
            "iadd": [0.5, -1.0, 2.0],
            "isub": [-0.5, 1.0, -2.0],
            "imul": [1.5, -5.0, 14.0],
            "itruediv": [-1.5, 1.25, -0.875],  # -b t / v^2
        }[name]
        OPERATORS[name](b, v)
        primal, tangent = fwAD.unpack_dual(b)
        assert primal.dtype == cr.float32
        assert tangent.dtype == cr.float32
        np.testing.assert_allclose(N(tangent), expected, rtol=1e-6)


@MIXED
def test_a_float32_dual_multiplied_in_place_by_float64_values_keeps_a_float32_tangent():
    with fwAD.dual_level():
        x = fwAD.make_dual(T(np.ones(3, dtype=np.float32)), T(np.ones(3, dtype=np.float32)))
        y = x * 1.0
        y *= T(np.array([1.0, 2.0, 3.0]))
        primal, tangent = fwAD.unpack_dual(y)
        assert primal.dtype == tangent.dtype == cr.float32
        np.testing.assert_array_equal(N(tangent), np.array([1.0, 2.0, 3.0], dtype=np.float32))


def test_an_integer_tensor_written_with_a_float_dual_raises_type_error():
    with fwAD.dual_level():
        v = fwAD.make_dual(T(np.ones(3)), T(np.ones(3)))
        b = T(np.zeros(3, dtype=np.int64))
        with pytest.raises(TypeError):
            b += v


@MIXED
def test_a_float32_tensor_with_an_alias_written_with_a_float64_dual_keeps_a_float32_tangent():
    with fwAD.dual_level():
        v = fwAD.make_dual(T(np.array([1.0, 2.0])), T(np.array([0.5, -1.0])))
        b = T(np.array([3.0, 5.0], dtype=np.float32))
        alias = b.detach()
        b += v
        tangent = fwAD.unpack_dual(b).tangent
        assert tangent.dtype == cr.float32
        np.testing.assert_array_equal(N(tangent), np.array([0.5, -1.0], dtype=np.float32))
        np.testing.assert_array_equal(N(alias), np.array([4.0, 7.0], dtype=np.float32))


@MIXED
@pytest.mark.parametrize("name", OPERATORS)
def test_an_in_place_operator_keeps_the_dtype_of_the_tensor_written(name):
    # Libraries whose in-place operators make a new array (Dask, JAX) promoted it to float64.
    b = T(np.array([3.0, 5.0, 7.0], dtype=np.float32))
    OPERATORS[name](b, T(np.array([1.0, 2.0, 4.0])))
    assert b.dtype == cr.float32
    expected = {"iadd": [4, 7, 11], "isub": [2, 3, 3], "imul": [3, 10, 28]}
    expected["itruediv"] = [3.0, 2.5, 1.75]
    np.testing.assert_allclose(N(b), np.array(expected[name], dtype=np.float32), rtol=1e-6)
