"""jacfwd of a function that writes into a tensor it made while a view of that tensor lives:
the Jacobian, as PyTorch's (the write lifts the whole alias group, base and views, into
jacfwd's vmap level; it raised TypeError, mixed numpy and vmap arrays)."""

import numpy as np

import chainrule as cr
from chainrule import func
from conftest import N, T


def test_jacfwd_of_a_write_into_a_made_tensor_with_a_live_view():
    def g(x):
        t = cr.asarray([1.0, 2.0, 3.0], dtype=x.dtype) * 1.0
        v = t[:2]
        t += x
        return t * 1.0 + cr.sum(v)

    jac = func.jacfwd(g)(T([0.5, -1.0, 2.0]))
    np.testing.assert_allclose(N(jac), np.eye(3) + np.array([[1.0, 1.0, 0.0]] * 3))


def test_jacfwd_of_a_write_through_a_view_of_a_made_tensor():
    # PyTorch's torch.func.jacfwd of the same function at the same point.
    expected = [[2.0, -3.0, 4.0], [0.0, 4.0, 0.0], [0.0, -2.0, 7.0]]

    def g(x):
        t = cr.asarray([1.0, 2.0, 3.0], dtype=x.dtype) * 1.0
        v = t[:2]
        v += x[1:] ** 2
        return t * x + cr.sum(v)

    x = T([0.5, -1.0, 2.0])
    np.testing.assert_allclose(N(func.jacfwd(g)(x)), expected)
    np.testing.assert_allclose(N(func.jacrev(g)(x)), expected)
