"""A function vmap maps that writes its argument in place writes the mapped tensor, as the
same function run on each sample x[i] (a view) does, and as PyTorch's batched tensors do:
with any in_dims, in chunks, nested, through a view, with gradients through the write."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from conftest import N, T

A = np.arange(6.0).reshape(2, 3) / 3.0 - 0.4
C = np.array([1.0, -2.0, 0.5])


def _scaled(r):
    r *= 2.0
    return cr.sum(r)


@pytest.mark.parametrize("chunk_size", [None, 1])
def test_a_sample_written_in_place_writes_the_mapped_tensor(chunk_size):
    x = T(A)
    out = func.vmap(_scaled, chunk_size=chunk_size)(x)
    np.testing.assert_allclose(N(x), 2.0 * A)
    np.testing.assert_allclose(N(out), 2.0 * A.sum(axis=1))


def test_writes_along_another_axis_nested_and_through_a_view():
    x = T(A)
    func.vmap(lambda col: col.__iadd__(1.0), in_dims=1)(x)
    np.testing.assert_allclose(N(x), A + 1.0)
    y = T(A)
    func.vmap(func.vmap(lambda s: s.__imul__(3.0)))(y)
    np.testing.assert_allclose(N(y), 3.0 * A)
    z = T(A)

    def tail(r):
        r[1:] *= 10.0
        return r[0] * 1.0

    func.vmap(tail)(z)
    np.testing.assert_allclose(N(z), A * np.array([1.0, 10.0, 10.0]))


@pytest.mark.parametrize("chunk_size", [None, 1])
def test_gradient_through_a_write_into_the_mapped_tensor(chunk_size):
    w = T(A, requires_grad=True)
    x = w * 1.0
    c = T(C)

    def f(r):
        r *= c
        return cr.sum(r)

    out = func.vmap(f, chunk_size=chunk_size)(x)
    (g,) = cr.autograd.grad(cr.sum(x * T(A)) + cr.sum(out**2), w)
    # x = w * c per row, out_i = sum_j w_ij c_j
    expected = A * C + 2.0 * (A * C).sum(axis=1, keepdims=True) * C
    np.testing.assert_allclose(N(g), expected, rtol=1e-12)


def test_writing_a_mapped_leaf_that_requires_grad_raises():
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        func.vmap(_scaled)(T(A, requires_grad=True))
