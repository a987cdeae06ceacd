"""tril, triu and meshgrid: values against NumPy, first and second derivatives."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T


@pytest.mark.parametrize("k", [-1, 0, 2])
def test_tril_and_triu_match_numpy_and_differentiate(k):
    values = np.arange(1.0, 13.0).reshape(3, 4) / 7.0
    x = T(values, requires_grad=True)
    np.testing.assert_array_equal(N(cr.tril(x, k=k)), np.tril(values, k))
    np.testing.assert_array_equal(N(cr.triu(x, k=k)), np.triu(values, k))
    for f in (cr.tril, cr.triu):
        assert gradcheck(lambda t, f=f: f(t, k=k) * t, (x,))
        assert gradgradcheck(lambda t, f=f: f(t, k=k) * t, (x,))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_matches_numpy_and_differentiates(indexing):
    a, b, c = T([1.0, 2.0], requires_grad=True), T([3.0, 4.0, 5.0], requires_grad=True), T([6.0])
    grids = cr.meshgrid(a, b, c, indexing=indexing)
    expected = np.meshgrid([1.0, 2.0], [3.0, 4.0, 5.0], [6.0], indexing=indexing)
    for got, want in zip(grids, expected):
        np.testing.assert_array_equal(N(got), want)

    def product(p, q):
        gp, gq = cr.meshgrid(p, q, indexing=indexing)
        return gp * gq * gq

    assert gradcheck(product, (a, b))
    assert gradgradcheck(product, (a, b))


def test_meshgrid_rejects_an_unknown_indexing():
    with pytest.raises(ValueError, match="indexing"):
        cr.meshgrid(T([1.0]), indexing="xz")
