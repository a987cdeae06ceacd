"""jacfwd of a function that writes into a tensor it made while views of that tensor live:
the write lifts the whole alias group into jacfwd's vmap level (each member a view of the
same memory, one sample for all), so every member sees the values and tangents written, as
PyTorch's jacfwd gives (it raised TypeError: numpy and vmap mixed; then lost the values a
view wrote once the base was written again). Checked against the Jacobians by hand, jacrev
and central differences."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from conftest import N, T

X = np.array([1.0, 2.0, 3.0])


def test_jacfwd_of_a_write_into_a_made_tensor_with_a_live_view():
    def g(x):
        t = cr.asarray([1.0, 2.0, 3.0], dtype=x.dtype) * 1.0
        v = t[:2]
        t += x
        return t * 1.0 + cr.sum(v)

    jac = func.jacfwd(g)(T([0.5, -1.0, 2.0]))
    np.testing.assert_allclose(N(jac), np.eye(3) + np.array([[1.0, 1.0, 0.0]] * 3))


def _writes_through_views(x):
    b = cr.zeros((2, 3), dtype=x.dtype)
    v = b[1]
    t = b.T
    v[1:].copy_(x[:2] * x[2])
    t[0].add_(x[1:] ** 2)
    v.mul_(x)
    return b


def _view_then_base(x):
    b = cr.zeros((2, 3), dtype=x.dtype)
    r = b[0]
    r.copy_(x)
    b[1] = x * 2.0
    return r * cr.sum(b)


def _central_differences(fn, x, eps=1e-6):
    cols = []
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = eps
        cols.append((N(fn(T(x + e))) - N(fn(T(x - e)))) / (2 * eps))
    return np.stack(cols, axis=-1)


@pytest.mark.parametrize("fn", [_writes_through_views, _view_then_base])
def test_jacfwd_of_writes_through_views_matches_jacrev_and_differences(fn):
    jac = N(func.jacfwd(fn)(T(X)))
    np.testing.assert_allclose(jac, N(func.jacrev(fn)(T(X))), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jac, _central_differences(fn, X), rtol=1e-7, atol=1e-7)


def test_jacfwd_of_a_view_written_then_its_base_written_keeps_both_writes():
    # r * sum(b) with b = [x, 2x]: d/dx_j of r_i * 3 sum(x) is delta_ij 3 sum(x) + 3 x_i.
    jac = N(func.jacfwd(_view_then_base)(T(X)))
    np.testing.assert_allclose(jac, 3 * X.sum() * np.eye(3) + 3 * X[:, None], rtol=1e-14)


def test_second_order_jacfwd_of_writes_through_views_matches_differences():
    jac = func.jacfwd(_writes_through_views)
    hess = N(func.jacfwd(jac)(T(X)))
    np.testing.assert_allclose(hess, _central_differences(jac, X), rtol=1e-6, atol=1e-6)


def test_jacfwd_of_a_write_through_a_view_of_a_captured_tensor_raises_and_leaves_it():
    captured = T(np.zeros((2, 3)))
    outside = captured[1]

    def g(x):
        captured[0].copy_(x)
        return x * 1.0

    with pytest.raises(RuntimeError, match="mutate a captured Ten"):
        func.jacfwd(g)(T(X))
    np.testing.assert_array_equal(N(captured), np.zeros((2, 3)))
    captured[1] = 5.0  # still a NumPy tensor that shares its memory with its view
    np.testing.assert_array_equal(N(outside), [5.0, 5.0, 5.0])


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
