"""A view made under no_grad from a base with history, written in place with grad mode on,
raises PyTorch's error (the write changed the base's values but not its history: its
gradients were those of the old values), and detach_() of a view raises PyTorch's error."""

import numpy as np
import pytest

import chainrule as cr
from conftest import N, T

NO_GRAD_VIEW = "A view was created in no_grad mode and is being modified inplace with grad mode"


def _base():
    x = T(np.arange(6.0).reshape(2, 3), requires_grad=True)
    return x, x * 1.0


@pytest.mark.parametrize(
    "write",
    [
        lambda v: v.mul_(2.0),
        lambda v: v.__iadd__(1.0),
        lambda v: v.__setitem__(0, 5.0),
        lambda v: v.fill_(0.0),
        lambda v: v.copy_(T([1.0, 2.0, 3.0], requires_grad=True)),
    ],
)
def test_writing_with_grad_mode_into_a_view_made_under_no_grad_raises(write):
    x, y = _base()
    with cr.no_grad():
        v = y[0]
    with pytest.raises(RuntimeError, match=NO_GRAD_VIEW):
        write(v)
    np.testing.assert_array_equal(N(y), np.arange(6.0).reshape(2, 3))


def test_a_view_made_and_written_under_no_grad_writes_the_base():
    x, y = _base()
    with cr.no_grad():
        v = y[0]
        v.mul_(2.0)
    np.testing.assert_array_equal(N(y), [[0.0, 2.0, 4.0], [3.0, 4.0, 5.0]])


def test_a_view_made_with_grad_mode_written_under_it_rebases_the_base():
    x, y = _base()
    v = y[0]
    v.mul_(2.0)
    (g,) = cr.autograd.grad(cr.sum(y), x)
    np.testing.assert_array_equal(N(g), [[2.0, 2.0, 2.0], [1.0, 1.0, 1.0]])


def test_detach_in_place_of_a_view_raises():
    x, y = _base()
    with pytest.raises(RuntimeError, match="Can't detach views in-place. Use detach"):
        y[0].detach_()
    with pytest.raises(RuntimeError, match="Can't detach views in-place. Use detach"):
        T(np.zeros(3))[1:].detach_()


def test_detach_in_place_of_a_tensor_that_is_no_view_still_cuts_it():
    x, y = _base()
    y.detach_()
    assert y.grad_fn is None and not y.requires_grad
