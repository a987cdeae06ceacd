"""np.histogram on tensors with tensor weights: the counts are linear in the weights, so the
weights get a gradient (each the cotangent of the bin its sample falls in, 0 outside the
range); the sample positions and the edges carry none (the bins are piecewise constant)."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T, examples
from helpers import leaf

SAMPLES = np.array([0.1, 0.5, 0.9, 0.3, -1.0, 1.0, 0.5, 2.0])
WEIGHTS = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0])


def test_histogram_weights_get_the_cotangent_of_their_bin():
    w = leaf(WEIGHTS)
    counts, edges = np.histogram(T(SAMPLES), bins=3, range=(0.0, 1.0), weights=w)
    expected, expected_edges = np.histogram(SAMPLES, bins=3, range=(0.0, 1.0), weights=WEIGHTS)
    np.testing.assert_allclose(N(counts), expected, rtol=1e-15)
    np.testing.assert_array_equal(np.asarray(edges), expected_edges)
    cot = np.array([10.0, 20.0, 30.0])
    (g,) = cr.autograd.grad(counts, w, grad_outputs=T(cot))
    # bins [0, 1/3), [1/3, 2/3), [2/3, 1]; -1 and 2 fall outside; 1.0 is in the last bin
    np.testing.assert_array_equal(N(g), [10.0, 20.0, 30.0, 10.0, 0.0, 30.0, 20.0, 0.0])


@pytest.mark.parametrize("density", [False, True])
@pytest.mark.parametrize("bins", [4, [0.0, 0.2, 0.5, 1.5], "range"])
def test_histogram_weights_gradients_agree_with_finite_differences(bins, density):
    kwargs = {"range": (0.0, 1.0)} if bins == "range" else {"bins": bins}
    a = T(SAMPLES)

    def fn(w):
        return np.histogram(a, weights=w, density=density, **kwargs)[0]

    w = leaf(WEIGHTS)
    expected = np.histogram(SAMPLES, weights=WEIGHTS, density=density, **kwargs)[0]
    np.testing.assert_allclose(N(fn(w)), expected, rtol=1e-13)
    assert gradcheck(fn, (w,), check_forward_ad=True)
    assert gradgradcheck(fn, (w,))


@given(
    hnp.arrays(np.float64, st.integers(0, 10), elements=st.integers(-8, 8).map(lambda k: k / 4)),
    st.integers(1, 5),
)
@examples(30)
def test_histogram_weights_values_and_gradient_on_drawn_samples(a, bins):
    weights = np.arange(1.0, a.size + 1.0)
    w = leaf(weights)
    counts, edges = np.histogram(T(a), bins=bins, range=(-1.0, 1.0), weights=w)
    expected, expected_edges = np.histogram(a, bins=bins, range=(-1.0, 1.0), weights=weights)
    np.testing.assert_allclose(N(counts), expected, rtol=1e-14)
    np.testing.assert_array_equal(np.asarray(edges), expected_edges)
    cot = np.arange(1.0, bins + 1.0) * 10
    (g,) = cr.autograd.grad(counts, w, grad_outputs=T(cot), allow_unused=True)
    inside = (a >= -1.0) & (a <= 1.0)
    which = np.clip(np.searchsorted(expected_edges, a, side="right") - 1, 0, bins - 1)
    want = np.where(inside, cot[which], 0.0)
    np.testing.assert_array_equal(N(g) if g is not None else np.zeros(a.shape), want)


def test_histogram_float32_weights_keep_float32():
    w = leaf(WEIGHTS, "float32")
    counts, _ = np.histogram(T(SAMPLES), bins=3, weights=w)
    assert counts.dtype == cr.float32
    assert np.histogram(SAMPLES, bins=3, weights=WEIGHTS.astype(np.float32))[0].dtype == np.float32


def test_histogram_weights_of_2d_samples_are_flattened_as_numpy():
    a, weights = SAMPLES.reshape(2, 4), WEIGHTS.reshape(2, 4)
    w = leaf(weights)
    counts, _ = np.histogram(T(a), bins=2, weights=w)
    np.testing.assert_allclose(N(counts), np.histogram(a, bins=2, weights=weights)[0])
    assert gradgradcheck(lambda w: np.histogram(T(a), bins=2, weights=w)[0], (w,))


def test_histogram_weights_of_another_shape_raise_numpys_error():
    with pytest.raises(ValueError, match="weights should have the same shape as a"):
        np.histogram(T(SAMPLES), bins=2, weights=leaf(WEIGHTS[:3]))


def test_histogram_without_weights_still_gives_numpys_arrays():
    counts, edges = np.histogram(T(SAMPLES), bins=3)
    expected = np.histogram(SAMPLES, bins=3)
    assert isinstance(counts, np.ndarray)
    np.testing.assert_array_equal(counts, expected[0])
    np.testing.assert_array_equal(edges, expected[1])


def test_histogram_under_vmap_over_weights_gives_each_samples_counts():
    batch = np.stack([WEIGHTS, WEIGHTS[::-1]])

    def fn(w):
        return np.histogram(T(SAMPLES), bins=3, range=(0.0, 1.0), weights=w)[0]

    out = cr.func.vmap(fn)(T(batch))
    expected = [np.histogram(SAMPLES, bins=3, range=(0.0, 1.0), weights=b)[0] for b in batch]
    np.testing.assert_allclose(N(out), expected, rtol=1e-15)
