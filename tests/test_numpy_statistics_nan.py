"""NumPy's quantiles (quantile, percentile, nanquantile, nanpercentile, nanmedian), nanvar,
nanstd, ptp, argpartition, flatnonzero, take_along_axis, fill_diagonal, apply_along_axis and
the memory orders of ravel and copy on tensors (scikit-learn's QuantileTransformer, RobustScaler,
KBinsDiscretizer, VarianceThreshold, MinCovDet, NearestCentroid, nan_euclidean_distances call
them): NumPy's values, shapes and dtypes, NaN handling, and gradients against finite
differences, first and second order, both modes. NumPy-backed tensors, whatever the backend
under test."""

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N

RNG = np.random.default_rng(3)
A = RNG.normal(size=(2, 3, 4))
HOLES = np.zeros(A.shape, dtype=bool)  # where NaNs go: one element, a column, a whole row
HOLES[0, 1, 2] = HOLES[1, :, 3] = True
HOLES[1, 2, :] = True
WITH_NAN = np.where(HOLES, np.nan, A)


def tensor(a):
    return cr.tensor(np.asarray(a))


def with_holes(x):
    """x with NaN at HOLES (for gradients: finite differences can't perturb a NaN input)."""
    return cr.where(tensor(HOLES), cr.nan, x) if x.__class__ is cr.Tensor else WITH_NAN


CASES = {
    "quantile": (lambda a: np.quantile(a, 0.3), A),
    "quantile of several q along an axis": (lambda a: np.quantile(a, [0.1, 0.5, 1.0], axis=1), A),
    "quantile 2-D q, axes, keepdims": (
        lambda a: np.quantile(a, [[0.1], [0.9]], axis=(0, 2), keepdims=True),
        A,
    ),
    "quantile of slices with NaN": (lambda a: np.quantile(with_holes(a), 0.3, axis=2), A),
    "percentile": (lambda a: np.percentile(a, 40), A),
    "percentile along an axis": (
        lambda a: np.percentile(a, [40, 90], axis=0),
        np.arange(12.0).reshape(3, 4),
    ),
    "nanquantile": (lambda a: np.nanquantile(with_holes(a), [0.0, 0.3, 1.0], axis=2), A),
    "nanpercentile": (lambda a: np.nanpercentile(with_holes(a), [25, 75], axis=0), A),
    "nanmedian": (lambda a: np.nanmedian(with_holes(a), axis=1), A),
    "nanmedian of all": (lambda a: np.nanmedian(with_holes(a)), A),
    "nanmedian keepdims": (lambda a: np.nanmedian(with_holes(a), (0, 1), keepdims=True), A),
    "nanvar": (lambda a: np.nanvar(with_holes(a), axis=1), A),
    "nanvar ddof keepdims": (
        lambda a: np.nanvar(with_holes(a), axis=(0, 2), ddof=1, keepdims=True),
        A,
    ),
    "nanstd": (lambda a: np.nanstd(with_holes(a)), A),
    "nanstd with ddof past the count": (lambda a: np.nanstd(with_holes(a), axis=2, ddof=3), A),
    "ptp": (lambda a: np.ptp(a, axis=1), A),
    "ravel F": (lambda a: np.ravel(a, order="F"), A),
    "copy F": (lambda a: np.copy(a, order="F"), A),
}


@pytest.mark.parametrize("name", CASES)
def test_statistics_give_numpys_values_and_differentiate(name):
    fn, a = CASES[name]
    x = cr.tensor(a, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # NumPy: slices of NaN only
        out, expected = fn(x), fn(a)
    assert out.__class__ is cr.Tensor
    assert N(out).shape == np.shape(expected) and N(out).dtype == np.asarray(expected).dtype
    np.testing.assert_allclose(N(out), expected, rtol=1e-12, atol=1e-14)
    assert gradcheck(finite(fn), (x,), check_forward_ad=True)
    assert gradgradcheck(finite(fn), (x,))


def finite(fn):
    """fn with its NaN results as 0 (a slice of NaN has no derivative to check)."""

    def nan_free(x):
        out = fn(x)
        return cr.where(cr.isnan(out), 0.0, out)

    return nan_free


def test_quantile_differentiates_in_q_too():
    x = cr.tensor(A[0], requires_grad=True)
    q = cr.tensor(np.array([0.35, 0.6]), requires_grad=True)
    assert gradcheck(lambda x, q: np.quantile(x, q, axis=0), (x, q), check_forward_ad=True)


def test_quantiles_of_integers_and_float32_keep_numpys_dtypes():
    assert np.quantile(tensor(np.arange(5)), 0.5).dtype == cr.float64
    out = np.quantile(tensor(A.astype(np.float32)), 0.3, axis=0)
    assert out.dtype == cr.float32
    expected = np.quantile(A.astype(np.float32), 0.3, axis=0)
    np.testing.assert_allclose(N(out), expected, rtol=1e-6, atol=1e-6)  # float32 rounding


def test_quantiles_of_empty_slices_as_numpy():
    with pytest.raises(IndexError, match="index -1 is out of bounds"):
        np.quantile(tensor(np.zeros((2, 0))), 0.5, axis=1)
    np.testing.assert_array_equal(
        N(np.nanquantile(tensor(np.zeros((2, 0))), 0.5, axis=1)), [np.nan] * 2
    )


def test_argpartition_flatnonzero_and_take_along_axis():
    a = A[0]
    order = np.argpartition(tensor(a), 2, axis=1)
    picked = np.take_along_axis(tensor(a), order, axis=1)
    np.testing.assert_array_equal(N(picked)[:, 2], np.partition(a, 2, axis=1)[:, 2])
    np.testing.assert_array_equal(
        N(np.take_along_axis(tensor(a), np.argsort(tensor(a), axis=None), axis=None)),
        np.sort(a, axis=None),
    )
    with pytest.raises(ValueError, match=r"kth\(=5\) out of bounds"):
        np.argpartition(tensor(a), 5)
    np.testing.assert_array_equal(N(np.flatnonzero(tensor(a > 0.5))), np.flatnonzero(a > 0.5))


@pytest.mark.parametrize(
    "shape, wrap", [((4, 4), False), ((7, 3), False), ((7, 3), True), ((3, 3, 3), False)]
)
def test_fill_diagonal_writes_in_place_as_numpy(shape, wrap):
    a = RNG.normal(size=shape)
    t = tensor(a)
    assert np.fill_diagonal(t, 7.0, wrap=wrap) is None
    np.fill_diagonal(a, 7.0, wrap=wrap)
    np.testing.assert_array_equal(N(t), a)


def test_fill_diagonal_differentiates_and_raises_numpys_errors():
    def filled(x, v):
        y = x * 1.0
        np.fill_diagonal(y, v)
        return y

    x, v = cr.tensor(A[0], requires_grad=True), cr.tensor(np.array([2.0, 3.0]), requires_grad=True)
    assert gradcheck(filled, (x, v), check_forward_ad=True)
    assert gradgradcheck(filled, (x, v))
    with pytest.raises(ValueError, match="at least 2-d"):
        np.fill_diagonal(tensor(np.zeros(3)), 1.0)
    with pytest.raises(ValueError, match="equal length"):
        np.fill_diagonal(tensor(np.zeros((2, 2, 3))), 1.0)
    with pytest.raises(ValueError, match="order must be one of"):
        np.ravel(tensor(A), order="X")


@pytest.mark.parametrize(
    "axis, func1d",
    [
        (0, lambda v: np.sort(v)[1:3] * 2),
        (1, lambda v: np.sum(v**2)),
        (2, lambda v: np.outer(v, v[:2])),
        (-1, lambda v: np.sum(np.sin(v)) * v[:2]),
    ],
)
def test_apply_along_axis_gives_numpys_values_and_differentiates(axis, func1d):
    def fn(x):
        return np.apply_along_axis(func1d, axis, x)

    x = cr.tensor(A, requires_grad=True)
    out, expected = fn(x), fn(A)
    assert N(out).shape == expected.shape
    np.testing.assert_allclose(N(out), expected, rtol=1e-14)
    assert gradcheck(fn, (x,), check_forward_ad=True)
    assert gradgradcheck(fn, (x,))


def test_apply_along_axis_passes_extra_arguments_and_refuses_empty_iterations():
    out = np.apply_along_axis(lambda v, k: v[:k], 0, tensor(A[0]), 2)
    np.testing.assert_array_equal(N(out), np.apply_along_axis(lambda v, k: v[:k], 0, A[0], 2))
    with pytest.raises(ValueError, match="any iteration dimensions are 0"):
        np.apply_along_axis(np.sum, 0, tensor(np.zeros((3, 0))))


METHODS = [
    "linear", "weibull", "hazen", "interpolated_inverted_cdf", "median_unbiased",
    "normal_unbiased", "inverted_cdf", "averaged_inverted_cdf", "lower", "higher", "nearest",
    "midpoint",
]  # fmt: skip
# Positions on and between the values of a slice of 7, and both ends.
QS = np.array([0.0, 0.01, 0.1, 0.25, 0.5, 0.5 + 1 / 14, 0.9, 0.99, 1.0])


@pytest.mark.parametrize("method", METHODS)
def test_quantile_methods_give_numpys_values(method):
    a = RNG.normal(size=(3, 7))
    with_nan = np.where(a > 1.0, np.nan, a)
    for fn, values in ((np.quantile, a), (np.nanquantile, with_nan)):
        for axis in (1, None):
            got = fn(tensor(values), QS, axis=axis, method=method)
            expected = fn(values, QS, axis=axis, method=method)
            np.testing.assert_allclose(N(got), expected, rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("method", ["hazen", "averaged_inverted_cdf", "nearest"])
def test_quantile_methods_differentiate(method):
    def fn(x):
        return np.percentile(x, [10.0, 35.0, 80.0], axis=0, method=method)

    x = cr.tensor(A[0], requires_grad=True)
    assert gradcheck(fn, (x,), check_forward_ad=True)
    assert gradgradcheck(fn, (x,))


def test_quantile_methods_numpy_lacks_or_chainrule_lacks_raise():
    with pytest.raises(ValueError, match="'foo' is not a valid method"):
        np.quantile(tensor(A), 0.5, method="foo")
    with pytest.raises(NotImplementedError, match="closest_observation"):
        np.quantile(tensor(A), 0.5, method="closest_observation")
