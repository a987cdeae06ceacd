"""Item assignment whose index arrays name one position several times: as NumPy, the value
written last is the one left there, so it alone gets that position's gradient (the values
written before it and overwritten get none), in both modes and to second order."""

import array_api_extra as xpx
import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import grad, gradcheck, gradgradcheck
from conftest import N, T, fails_on

pytestmark = fails_on(
    "array_api_strict", reason="array_api_strict has no assignment by index arrays"
)

W = np.array([0.5, -1.5, 2.0, 3.0])


def written(x, v, key):
    y = x * 1.0
    y[key] = v
    return y


@pytest.mark.parametrize(
    "key",
    [[0, 2, 2], np.array([2, 0, 2]), (np.array([1, 1, 3]),)],
    ids=["list", "array", "tuple"],
)
def test_setitem_sends_a_repeated_position_gradient_to_the_value_written_last(key):
    x = T([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    v = T([10.0, 20.0, 30.0], requires_grad=True)
    y = written(x, v, key)
    expected = np.array([1.0, 2.0, 3.0, 4.0])
    expected[key] = [10.0, 20.0, 30.0]
    np.testing.assert_allclose(N(y), expected)
    gx, gv = grad(cr.sum(y * T(W)), (x, v))
    # The numbers NumPy's own assignment gives: each value's gradient is the weight of the
    # position it is left at, or 0 where a later value overwrote it.
    positions = np.asarray(key[0] if isinstance(key, tuple) else key)
    last = [i == max(j for j, p in enumerate(positions) if p == q) for i, q in enumerate(positions)]
    np.testing.assert_allclose(N(gv), np.where(last, W[positions], 0.0))
    np.testing.assert_allclose(N(gx), np.where(np.isin(np.arange(4), positions), 0.0, W))


@fails_on("dask", reason="Dask assigns by 1-D index arrays only")
def test_setitem_with_repeated_positions_passes_gradcheck_to_second_order():
    x = T([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    v = T([[10.0, 20.0, 30.0], [5.0, 6.0, 7.0]], requires_grad=True)
    key = ([[0, 2, 2], [1, 1, 3]],)

    def fn(x, v):
        return written(x, v, key) ** 2

    assert gradcheck(fn, (x, v), check_forward_ad=True)
    assert gradgradcheck(fn, (x, v))


def test_augmented_assignment_with_repeated_positions_differentiates_what_it_computes():
    # y[[0, 2, 2]] -= 1 subtracts once at 2 (NumPy's buffered assignment): dy/dx = 1 there,
    # not 2 (array-api-extra's at(...).subtract writes so).
    x = T([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    y = xpx.at(x)[[0, 2, 2]].subtract(1.0, copy=True)
    np.testing.assert_allclose(N(y), [0.0, 2.0, 2.0, 4.0])
    (g,) = grad(cr.sum(y * T(W)), (x,))
    np.testing.assert_allclose(N(g), W)


def test_augmented_assignment_by_a_tensor_with_repeated_positions_passes_gradcheck():
    def fn(x):
        y = x * 1.0
        y[[0, 2, 2]] += x[:3] ** 2
        return y

    x = T([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.filterwarnings("ignore:vmap")
@fails_on("dask", reason="vmap gathers by batched index arrays: Dask has no n-d fancy indexing")
def test_setitem_with_repeated_positions_under_vmap_of_grad_as_per_sample():
    def fn(x):
        y = x * 1.0
        y[[0, 2, 2]] = x[:3] ** 2
        return cr.sum(y * T(W))

    xs = T(np.arange(8.0).reshape(2, 4))
    batched = cr.func.vmap(cr.func.grad(fn))(xs)
    for row, expected in zip(N(batched), [cr.func.grad(fn)(xs[i]) for i in range(2)]):
        np.testing.assert_allclose(row, N(expected))
    np.testing.assert_allclose(N(batched)[1], [2 * 4.0 * 0.5, -1.5, 2 * 6.0 * 2.0, 3.0])


def test_setitem_with_repeated_positions_compiled_gives_eagers_gradient():
    def step(x):
        y = x * 1.0
        y[[0, 2, 2]] = x[:3] ** 2
        (g,) = grad(cr.sum(y * T(W)), (x,))
        return g

    compiled = cr.compile(step)
    x = T([1.0, 2.0, 3.0, 4.0], requires_grad=True)
    for _ in range(2):  # the trace, then a replay
        np.testing.assert_allclose(N(compiled(x)), [1.0, -1.5, 12.0, 3.0])
