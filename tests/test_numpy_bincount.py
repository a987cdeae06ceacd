"""np.bincount on tensors: without weights NumPy's counts (no derivative); with tensor
weights the sums are a float64 tensor, linear in the weights, so each weight gets the
cotangent of its bin (it raised before)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T
from helpers import leaf

POSITIONS = np.array([0, 3, 1, 3, 3, 0])
WEIGHTS = np.array([0.5, 1.0, 2.0, -1.0, 4.0, 3.0])


def test_bincount_weights_get_the_cotangent_of_their_bin():
    w = leaf(WEIGHTS)
    sums = np.bincount(T(POSITIONS), weights=w, minlength=6)
    np.testing.assert_allclose(N(sums), np.bincount(POSITIONS, weights=WEIGHTS, minlength=6))
    (g,) = cr.autograd.grad(sums, w, grad_outputs=T(np.arange(6.0) * 10))
    np.testing.assert_array_equal(N(g), [0.0, 30.0, 10.0, 30.0, 30.0, 0.0])


def test_bincount_weights_gradients_agree_with_finite_differences():
    def fn(w):
        return np.bincount(T(POSITIONS), weights=w)

    assert gradcheck(fn, (leaf(WEIGHTS),), check_forward_ad=True)
    assert gradgradcheck(fn, (leaf(WEIGHTS),))


def test_bincount_float32_weights_give_float64_as_numpy():
    sums = np.bincount(T(POSITIONS), weights=leaf(WEIGHTS, "float32"))
    assert sums.dtype == cr.float64
    assert np.bincount(POSITIONS, weights=WEIGHTS.astype(np.float32)).dtype == np.float64


def test_bincount_of_no_positions_gives_minlength_zeros():
    w = leaf(np.zeros(0))
    sums = np.bincount(T(np.zeros(0, dtype=np.int64)), weights=w, minlength=2)
    np.testing.assert_array_equal(N(sums), [0.0, 0.0])
    (g,) = cr.autograd.grad(cr.sum(sums), w)
    assert N(g).shape == (0,)


def test_bincount_without_weights_gives_numpys_counts():
    counts = np.bincount(T(POSITIONS), minlength=5)
    assert isinstance(counts, np.ndarray)
    np.testing.assert_array_equal(counts, np.bincount(POSITIONS, minlength=5))


def test_bincount_errors_are_numpys():
    with pytest.raises(ValueError, match="The weights and list don't have the same length."):
        np.bincount(T(POSITIONS), weights=leaf(WEIGHTS[:2]))
    with pytest.raises(ValueError, match="negative"):
        np.bincount(T(np.array([1, -1])), weights=leaf(np.ones(2)))


def test_bincount_under_vmap_over_weights_gives_each_samples_sums():
    batch = np.stack([WEIGHTS, 2 * WEIGHTS[::-1]])
    out = cr.func.vmap(lambda w: np.bincount(T(POSITIONS), weights=w))(T(batch))
    np.testing.assert_allclose(N(out), [np.bincount(POSITIONS, weights=b) for b in batch])
