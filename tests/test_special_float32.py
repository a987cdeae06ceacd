"""chainrule.special keeps float32 values float32 where a Python number joins them (a weak
scalar, as NumPy's and PyTorch's: xlogy(x, 2.0), zeta(x, 2.0)) and in entr, whose constants
made its result float64; their gradients are float32 too."""

import math

import numpy as np
import pytest

import chainrule as cr
from helpers import assert_float32_in_and_out

POSITIVE = np.array([0.3, 0.7, 1.5])
FUNCTIONS = {
    "entr": cr.special.entr,
    "xlogy number": lambda x: cr.special.xlogy(x, 2.0),
    "xlogy of a number": lambda x: cr.special.xlogy(2, x),
    "xlog1py number": lambda x: cr.special.xlog1py(x, 0.5),
    "zeta number": lambda x: cr.special.zeta(3.0, x),
    "gammainc number": lambda x: cr.special.gammainc(2.0, x),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_special_functions_keep_float32_with_python_numbers(name):
    assert_float32_in_and_out(FUNCTIONS[name], POSITIVE)


def test_entr_values_at_zero_below_and_nan():
    x = cr.asarray(np.array([0.5, 0.0, -1.0, math.nan], dtype=np.float32))
    out = cr.special.entr(x)
    assert out.dtype == cr.float32
    np.testing.assert_array_equal(
        out.numpy(), np.array([0.5 * math.log(2), 0.0, -math.inf, math.nan], dtype=np.float32)
    )
