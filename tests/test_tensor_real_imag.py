"""Tensor.real and Tensor.imag, PyTorch's properties: views of a complex tensor's parts that
writes go through (also by assigning to the property), gradients by PyTorch's complex
convention to second order in both modes; a real tensor's .real is itself and its .imag is
PyTorch's RuntimeError."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T

Z = np.array([[1.0 + 2.0j, -0.5 + 0.3j], [3.0 - 1.0j, 0.25 - 2.0j]])


def test_real_and_imag_of_a_complex_tensor_hold_its_parts():
    z = T(Z)
    assert z.real.dtype == cr.float64 and z.imag.dtype == cr.float64
    np.testing.assert_array_equal(N(z.real), Z.real)
    np.testing.assert_array_equal(N(z.imag), Z.imag)


def test_real_of_a_real_tensor_is_the_tensor_itself():
    x = T([1.0, 2.0])
    assert x.real is x


def test_imag_of_a_real_tensor_raises_pytorchs_runtime_error():
    with pytest.raises(RuntimeError, match="imag is not implemented for tensors with non-compl"):
        _ = T([1.0, 2.0]).imag
    with pytest.raises(RuntimeError, match="imag is not implemented"):
        T([1.0, 2.0]).imag = 1.0


def test_writes_through_real_and_imag_reach_the_complex_tensor():
    z = T(Z)
    z.real[0, 1] = 7.0
    z.imag[1] = 0.5
    expected = Z.copy()
    expected[0, 1] = 7.0 + 0.3j
    expected[1] = expected[1].real + 0.5j
    np.testing.assert_array_equal(N(z), expected)


def test_assigning_to_real_and_imag_writes_the_parts():
    z = T(Z)
    z.real = T([[1.0, 2.0], [3.0, 4.0]])
    z.imag = -1.0
    np.testing.assert_array_equal(N(z), np.array([[1, 2], [3, 4]]) - 1j)
    x = T([1.0, 2.0])
    x.real = T([5.0, 6.0])
    np.testing.assert_array_equal(N(x), [5.0, 6.0])


def test_real_and_imag_gradients_follow_pytorchs_complex_convention():
    # L = sum(re^2 + 3 im): dL/dz = dL/dre + i dL/dim = 2 re + 3i (PyTorch's x.grad).
    z = T(Z, requires_grad=True)
    w = z * 1
    cr.sum(w.real * w.real + 3 * w.imag).backward()
    np.testing.assert_allclose(N(z.grad), 2 * Z.real + 3j)


def test_real_and_imag_match_finite_differences_to_second_order_in_both_modes():
    def fn(z):
        return z.real * z.imag + z.real**3

    z = T(Z, requires_grad=True)
    assert gradcheck(fn, (z,), check_forward_ad=True)
    assert gradgradcheck(fn, (z,), check_fwd_over_rev=True)


def test_a_write_through_real_is_recorded_for_gradients():
    # z.real[...] = y * 2 makes the real part 2y: dL/dy = 2 dL/dre; the old real part gets none.
    z0 = T(Z, requires_grad=True)
    y = T([[0.1, 0.2], [0.3, 0.4]], requires_grad=True)
    z = z0 * 1
    z.real[...] = y * 2
    cr.sum(z.real * z.real + z.imag * z.imag).backward()
    np.testing.assert_allclose(N(y.grad), 8 * N(y))
    np.testing.assert_allclose(N(z0.grad), 2j * Z.imag)
