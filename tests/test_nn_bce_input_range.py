"""binary_cross_entropy on an input outside [0, 1] (or NaN): PyTorch's RuntimeError (a NaN or
a wrong finite loss before); 0 and 1 themselves stay finite."""

import numpy as np
import pytest

import chainrule.nn.functional as F
from chainrule import nn
from conftest import LIBRARY, N, T


@pytest.mark.parametrize("bad", [1.5, -0.1, np.nan])
def test_binary_cross_entropy_of_an_input_outside_0_1_raises_as_pytorch(bad):
    if LIBRARY == "dask":  # not read on a lazy library (it would compute the input): a NaN
        assert np.isnan(N(F.binary_cross_entropy(T(np.array([0.5, bad])), T([1.0, 0.0]))))
        return
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        F.binary_cross_entropy(T(np.array([0.5, bad])), T(np.array([1.0, 0.0])))
    with pytest.raises(RuntimeError, match="all elements of input should be between 0 and 1"):
        nn.BCELoss()(T(np.array([[bad]])), T(np.array([[1.0]])))


def test_binary_cross_entropy_takes_the_ends_and_an_empty_input():
    out = F.binary_cross_entropy(T(np.array([0.0, 1.0])), T(np.array([1.0, 0.0])))
    assert float(out.item()) == 100.0
    empty = F.binary_cross_entropy(T(np.zeros(0)), T(np.zeros(0)), reduction="sum")
    assert float(empty.item()) == 0.0
