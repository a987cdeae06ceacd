"""`inplace=` of F.relu, F.dropout, nn.ReLU and nn.Dropout, as PyTorch's: the result is the
input, written in place, with autograd's checks on in-place writes (a leaf that requires grad
refuses; the version counter goes up), and gradients as the out-of-place functions give."""

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
from chainrule.random import Generator
from conftest import N, T

A = np.array([[0.5, -1.25, 2.0], [-0.3, 0.7, -2.2]])


def test_relu_inplace_writes_the_input_and_returns_it():
    x = T(A)
    for out in (F.relu(x, inplace=True), nn.ReLU(inplace=True)(T(A))):
        np.testing.assert_array_equal(N(out), np.maximum(A, 0))
    assert F.relu(x, inplace=True) is x
    np.testing.assert_array_equal(N(x), np.maximum(A, 0))
    y = T(A)
    assert nn.ReLU(True)(y) is y and nn.ReLU()(y) is not y


def test_relu_inplace_gradients_are_relus_through_the_write():
    def fn(a):
        h = a * 1.5
        return F.relu(h, inplace=True) ** 2

    a = T(A, requires_grad=True)
    assert gradcheck(fn, (a,))
    assert gradgradcheck(fn, (a,))
    cr.sum(fn(a)).backward()
    np.testing.assert_allclose(N(a.grad), 2 * np.maximum(1.5 * A, 0) * 1.5, rtol=1e-15)


def test_inplace_on_a_leaf_that_requires_grad_is_pytorchs_runtime_error():
    x = T(A, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        F.relu(x, inplace=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used"):
        F.dropout(x, 0.5, inplace=True)


def test_an_inplace_write_counts_as_a_write():
    # The version counter that autograd's saved-value checks read goes up, as PyTorch's.
    x = T(A)
    v = x._version
    nn.ReLU(inplace=True)(x)
    F.dropout(x, 0.5, inplace=True, generator=Generator(seed=1))
    assert x._version == v + 2
    F.relu(x)
    assert x._version == v + 2


def test_dropout_inplace_gives_the_out_of_place_result_in_the_input():
    expected = F.dropout(T(A), 0.4, generator=Generator(seed=3))
    x = T(A)
    out = F.dropout(x, 0.4, True, True, generator=Generator(seed=3))
    assert out is x
    np.testing.assert_array_equal(N(x), N(expected))
    layer = nn.Dropout(0.4, inplace=True)
    y = T(A)
    assert layer(y) is y
    layer.eval()
    z = T(A)
    assert layer(z) is z
    np.testing.assert_array_equal(N(z), A)


def test_dropout_inplace_gradients_are_the_mask_scaled():
    a = T(A, requires_grad=True)
    h = a * 1.0
    out = F.dropout(h, 0.5, inplace=True, generator=Generator(seed=7))
    cr.sum(out).backward()
    kept = N(out) != 0
    np.testing.assert_array_equal(N(a.grad), np.where(kept, 2.0, 0.0))


def test_layers_print_inplace_as_pytorch():
    assert repr(nn.ReLU()) == "ReLU()"
    assert repr(nn.ReLU(inplace=True)) == "ReLU(inplace=True)"
    assert repr(nn.Dropout(0.1)) == "Dropout(p=0.1, inplace=False)"
