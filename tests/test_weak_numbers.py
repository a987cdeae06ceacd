"""Python numbers beside float32 tensors are weak (the result stays float32) and NumPy scalars
are strong (np.float64 promotes to float64), as in NumPy 2's promotion, in chainrule.special's
two-argument functions and in NumPy's linspace on tensors alike: one helper decides."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import _namespace
from conftest import T, fails_on

F32 = np.ones(2, dtype=np.float32)
# PyTorch's own promotion (a 0-d float64 tensor leaves a float32 one as it is) decides there.
TORCH_0D = fails_on("torch", reason="its promotion: a 0-d float64 tensor leaves float32 as it is")
NUMBERS = [
    (2.0, cr.float32),
    (2, cr.float32),
    pytest.param(np.float64(2.0), cr.float64, marks=TORCH_0D),
    (np.float32(2.0), cr.float32),
]


@pytest.mark.parametrize(("number", "dtype"), NUMBERS)
def test_special_two_argument_functions_promote_numbers_as_numpy(number, dtype):
    x = T(F32)
    assert cr.special.xlogy(x, number).dtype == dtype
    assert cr.special.xlogy(number, x).dtype == dtype


@pytest.mark.parametrize(("number", "dtype"), NUMBERS)
def test_numpy_linspace_on_tensors_promotes_numbers_as_numpy(number, dtype):
    x = T(F32)
    assert np.linspace(x, number, 3).dtype == dtype
    assert np.linspace(number, x, 3).dtype == dtype


def test_weak_number_leaves_bools_numpy_scalars_and_integer_partners_as_they_are():
    f32, i64 = T(F32), T(np.ones(2, dtype=np.int64))
    assert _namespace.weak_number(True, f32) is True
    scalar = np.float64(2.0)
    assert _namespace.weak_number(scalar, f32) is scalar
    assert _namespace.weak_number(2.0, i64) == 2.0
    assert _namespace.weak_number(2.0, F32) == 2.0  # a NumPy array partner: NumPy promotes
    weak = _namespace.weak_number(2.0, f32)
    assert weak.dtype == f32.array.dtype
