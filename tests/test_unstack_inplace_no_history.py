"""A write of a value that requires grad into an output of unstack of a tensor with no
history raises PyTorch's error (torch 2.13: such a view may not be modified in place with
grad mode on), where it changed that output alone and left the input its old values."""

import numpy as np
import pytest

import chainrule as cr
from conftest import N, T, skip_on

A = np.arange(6.0).reshape(2, 3)
MESSAGE = "This view is the output of a function that returns multiple views"
WRITES = {
    "setitem": lambda w, v: w.__setitem__(..., v),
    "setitem_part": lambda w, v: w.__setitem__(0, v[0]),
    "iadd": lambda w, v: w.__iadd__(v),
    "imul": lambda w, v: w.__imul__(v),
}


@pytest.mark.parametrize("name", WRITES)
def test_writing_a_value_that_requires_grad_into_an_unstacked_tensor_raises(name):
    y = T(A)
    w = cr.unstack(y)[1]
    v = T(np.ones(3), requires_grad=True)
    with pytest.raises(RuntimeError, match=MESSAGE):
        WRITES[name](w, v)
    np.testing.assert_array_equal(N(y), A)
    np.testing.assert_array_equal(N(w), A[1])


def test_writing_a_value_that_requires_grad_under_no_grad_writes_the_input():
    y = T(A)
    w = cr.unstack(y)[0]
    with cr.no_grad():
        w += T(np.ones(3), requires_grad=True)
    assert N(w).tolist() == [1.0, 2.0, 3.0]


@skip_on("jax", "dask", reason="its arrays share no memory")
def test_writing_a_value_without_grad_still_writes_the_input():
    y = T(A)
    w = cr.unstack(y)[1]
    w += T(np.ones(3))
    np.testing.assert_array_equal(N(y), [[0.0, 1.0, 2.0], [4.0, 5.0, 6.0]])
