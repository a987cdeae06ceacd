"""unstack of a tensor without history gives views of it, as PyTorch's unbind: a write
through one reaches the input's tangent in forward mode, and a later write into the input
reaches every output (their values stayed the old ones, and forward mode lost the tangent
written). PyTorch 2.13's numbers: the same linear programs, stated exactly."""

import numpy as np
import pytest

import chainrule as cr
import chainrule.autograd.forward_ad as fwAD
from conftest import N, T, skip_on

A = np.arange(12.0).reshape(3, 4)
TA = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
Y = np.array([0.5, -1.0, 2.0, 3.0])
TY = np.array([1.0, 2.0, -3.0, 0.25])


def tangent(t):
    return N(fwAD.unpack_dual(t).tangent)


def test_a_dual_value_written_into_an_unstacked_row_gives_the_input_its_tangent():
    with fwAD.dual_level():
        y = fwAD.make_dual(T(Y), T(TY))
        b = T(np.zeros((3, 4)))
        rows = cr.unstack(b)
        rows[1][...] = y
        expected = np.zeros((3, 4))
        expected[1] = TY
        np.testing.assert_array_equal(N(b), np.stack([np.zeros(4), Y, np.zeros(4)]))
        np.testing.assert_array_equal(tangent(b), expected)
        np.testing.assert_array_equal(tangent(rows[1]), TY)


def test_a_dual_value_written_into_an_unstacked_column_part_reaches_the_input():
    with fwAD.dual_level():
        y = fwAD.make_dual(T(Y[:2]), T(TY[:2]))
        b = T(np.zeros((3, 4)))
        cols = cr.unstack(b, axis=1)
        cols[2][1:] = y
        expected = np.zeros((3, 4))
        expected[1:, 2] = TY[:2]
        np.testing.assert_array_equal(tangent(b), expected)
        np.testing.assert_array_equal(tangent(cols[2]), expected[:, 2])


@pytest.mark.parametrize("write", ["imul", "mul_"])
def test_a_row_of_a_dual_tensor_multiplied_in_place_updates_the_input_tangent(write):
    with fwAD.dual_level():
        x = fwAD.make_dual(T(A), T(TA))
        y = fwAD.make_dual(T(Y), T(TY))
        b = x * 1.0
        rows = cr.unstack(b)
        row = rows[1]
        if write == "imul":
            row *= y
        else:
            row.mul_(y)
        expected = TA.copy()
        expected[1] = TA[1] * Y + A[1] * TY  # the product rule in the row written
        np.testing.assert_allclose(tangent(b), expected, rtol=1e-15)
        np.testing.assert_allclose(tangent(rows[1]), expected[1], rtol=1e-15)
        np.testing.assert_array_equal(tangent(rows[0]), TA[0])


@skip_on("jax", "dask", reason="its arrays share no memory")
def test_an_input_written_after_unstack_shows_in_its_outputs():
    b = T(np.zeros((2, 3)))
    rows = cr.unstack(b)
    b += 1.0
    np.testing.assert_array_equal(N(rows[1]), np.ones(3))


def test_an_input_written_with_history_after_unstack_shows_in_its_outputs():
    # PyTorch shows the new values too (its outputs then refuse backward; ours give the
    # gradient of the value written).
    b = T(np.zeros((2, 3)))
    y = T(np.ones((2, 3)), requires_grad=True)
    rows = cr.unstack(b)
    b.copy_(y * 2.0)
    np.testing.assert_array_equal(N(rows[1]), [2.0, 2.0, 2.0])
    (rows[1] * 3.0).sum().backward()
    np.testing.assert_array_equal(N(y.grad), [[0.0, 0.0, 0.0], [6.0, 6.0, 6.0]])


def test_an_input_with_history_written_after_unstack_shows_in_its_outputs():
    # PyTorch shows the new values too (and then refuses backward through the outputs).
    x = T(np.arange(6.0).reshape(2, 3), requires_grad=True)
    z = x * 1.0
    rows = cr.unstack(z)
    z.mul_(2.0)
    np.testing.assert_array_equal(N(rows[1]), [6.0, 8.0, 10.0])
    (rows[1] * 1.0).sum().backward()
    np.testing.assert_array_equal(N(x.grad), [[0.0, 0.0, 0.0], [2.0, 2.0, 2.0]])


def test_an_unstacked_output_saved_then_its_input_written_makes_backward_raise():
    x = T(np.arange(6.0).reshape(2, 3), requires_grad=True)
    z = x * 1.0
    rows = cr.unstack(z)
    w = rows[0] * rows[0]
    z.add_(1.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        w.sum().backward()


def test_a_write_into_an_unstacked_output_with_history_still_raises():
    x = T(np.arange(6.0).reshape(2, 3), requires_grad=True)
    rows = cr.unstack(x * 1.0)
    with pytest.raises(RuntimeError, match="Output 1 of UnbindBackward0 is a view"):
        rows[1].mul_(2.0)
