"""The tensors unstack returns are views of its input (its memory, when nothing needs grad):
with history, an in-place write to one raises PyTorch's error for the outputs of a function
that returns several views, where it used to change that tensor alone (the input and NumPy's
answer kept the old values); without history it writes the shared memory, as NumPy's."""

import numpy as np
import pytest

import chainrule as cr
from conftest import N, T, skip_on

A = np.arange(6.0).reshape(2, 3)
WRITES = {
    "setitem": lambda w: w.__setitem__(..., 5.0),
    "iadd": lambda w: w.__iadd__(1.0),
    "imul": lambda w: w.__imul__(2.0),
}


@pytest.mark.parametrize("name", WRITES)
def test_writing_into_an_unstacked_tensor_with_history_raises_as_pytorch(name):
    x = T(A, requires_grad=True)
    w = cr.unstack(x * 1.0)[1]
    with pytest.raises(RuntimeError, match="Output 1 of UnbindBackward0 is a view and is being"):
        WRITES[name](w)


def test_unstacked_tensors_with_history_still_compute_out_of_place():
    x = T(A, requires_grad=True)
    w = cr.unstack(x * 1.0)[1]
    v = w * 2.0
    v += 1.0
    cr.sum(v).backward()
    np.testing.assert_array_equal(N(x.grad), [[0.0, 0.0, 0.0], [2.0, 2.0, 2.0]])


@skip_on("jax", "dask", reason="its arrays share no memory")
def test_writing_into_an_unstacked_tensor_without_history_writes_the_input():
    y = T(A)
    w = cr.unstack(y)[1]
    w[...] = 5.0
    np.testing.assert_array_equal(N(y), [[0.0, 1.0, 2.0], [5.0, 5.0, 5.0]])
