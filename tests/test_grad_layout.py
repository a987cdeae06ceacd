"""The memory order of a gradient accumulated into .grad: a copied gradient is made in its
leaf's order (C for a C-ordered leaf), as PyTorch's AccumulateGrad gives a gradient its
parameter's strides, so that the optimizers' kernels meet arrays of one order."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from conftest import LIBRARY, N, T

pytestmark = pytest.mark.skipif(LIBRARY != "numpy", reason="memory order: NumPy's arrays")


def test_a_linear_weight_gradient_is_c_ordered_as_its_weight():
    layer = nn.Linear(3, 4)
    x = T(np.arange(6.0).reshape(2, 3))
    cr.sum(layer(x) ** 2).backward()
    # The gradient reaches the weight as the transpose of (x^T g): a Fortran-ordered view.
    assert layer.weight._data.flags.c_contiguous
    assert layer.weight.grad._data.flags.c_contiguous
    expected = 2 * N(layer(x)).T @ N(x)
    np.testing.assert_allclose(N(layer.weight.grad), expected, rtol=1e-12)


def test_a_transposed_gradient_of_a_c_ordered_leaf_is_copied_in_c_order():
    w = T(np.arange(6.0).reshape(2, 3), requires_grad=True)
    g = np.asfortranarray(np.arange(6.0).reshape(2, 3) + 0.5)
    w.backward(cr.asarray(g))
    assert w.grad._data.flags.c_contiguous
    np.testing.assert_array_equal(N(w.grad), g)


def test_a_fortran_ordered_leaf_keeps_the_gradient_s_order():
    w = cr.asarray(np.asfortranarray(np.arange(6.0).reshape(2, 3))).requires_grad_()
    cr.sum(cr.permute_dims(w, (1, 0)) * 2.0).backward()
    assert w.grad._data.flags.f_contiguous  # a copy of the transposed view, in its order
    np.testing.assert_array_equal(N(w.grad), np.full((2, 3), 2.0))
