"""PyTorch's sorting and selection methods and functions (`sort`, `msort`, `median`,
`nanmedian`, `kthvalue`, `mode`, `cummax`, `cummin`, `logcumsumexp`, `aminmax`, `nansum`,
`nanmean`, `quantile`, `nanquantile`): values, indices and gradients against PyTorch 2.13's
(CPU, float64), written here as literals; finite differences of first and second order in
both modes; Hypothesis against NumPy with ties and NaN."""

import contextlib
import math
import warnings

import array_api_strict as strict
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T, examples
from helpers import NONEMPTY, assert_values, leaf

nan, inf = math.nan, math.inf

X = [[3.0, 1, 2, 1, 3, nan], [2.0, 2, 5, 1, 1, 0], [0.5, -1, 4, 2, nan, nan]]
# Rows without ties, so that PyTorch's index is the only one.
D = [[0.3, -1.2, 2.5, 0.7, 1.1], [4.0, nan, -2.0, 1.0, 0.0], [nan, 0.5, nan, -0.5, 2.0]]
C = [[1.0, 3, 3, 2, nan, 5, nan], [2.0, 1, 1, 0, 4, 4, -1]]
G = [[0.3, -1.2, 2.5, 0.7, 1.1], [4.0, 2.0, -2.0, 1.0, 0.0]]
Q = [[4.0, 1, 3, 2, 7], [0.5, -1, nan, 2, 3], [nan, nan, nan, nan, nan]]


def _weighted_grad(fn, values):
    """fn's output (the values of a pair) and the gradient of its sum weighted by
    sin(1), sin(2)... (as the literals were made with PyTorch)."""
    x = leaf(values)
    out = fn(x)
    out = out if isinstance(out, cr.Tensor) else out[0]
    weights = cr.sin(cr.reshape(cr.arange(1.0, out.size + 1), out.shape))
    cr.sum(out * T(N(weights))).backward()
    return out.detach(), x.grad


def _pair(result, values, indices):
    assert_values(result[0], values)
    assert N(result[1]).tolist() == indices
    assert result[1].dtype == cr.int64


# ----------------------------------------------------------------------------- PyTorch's answers


def test_sort_gives_pytorchs_values_and_indices():
    x = T(X)
    _pair(
        x.sort(1),
        [[1.0, 1, 2, 3, 3, nan], [0.0, 1, 1, 2, 2, 5], [-1.0, 0.5, 2, 4, nan, nan]],
        [[1, 3, 2, 0, 4, 5], [5, 3, 4, 0, 1, 2], [1, 0, 3, 2, 4, 5]],
    )
    _pair(
        x.sort(dim=1, descending=True, stable=True),
        [[nan, 3.0, 3, 2, 1, 1], [5.0, 2, 2, 1, 1, 0], [nan, nan, 4.0, 2, 0.5, -1]],
        [[5, 0, 4, 2, 1, 3], [2, 0, 1, 3, 4, 5], [4, 5, 2, 3, 0, 1]],
    )
    s0 = [[0.5, -1.0, 2, 1, 1, 0], [2.0, 1, 4, 1, 3, nan], [3.0, 2, 5, 2, nan, nan]]
    _pair(x.sort(0), s0, [[2, 2, 0, 0, 1, 1], [1, 0, 2, 1, 0, 0], [0, 1, 1, 2, 2, 2]])
    assert_values(x.msort(), s0)
    assert_values(cr.msort(x), s0)
    values, indices = T(3.0).sort()
    assert (N(values).shape, N(indices).tolist()) == ((), 0)
    # chainrule.sort stays the Array API's: the values only.
    assert_values(cr.sort(x, axis=1), x.sort(1).values)


def test_median_and_nanmedian_along_a_dim_give_pytorchs_element():
    d = T(D)
    _pair(d.median(1), [0.7, nan, nan], [3, 1, 0])
    _pair(d.median(0, keepdim=True), [[nan, nan, nan, 0.7, 1.1]], [[2, 1, 2, 0, 0]])
    _pair(d.nanmedian(1), [0.7, 0.0, 0.5], [3, 4, 1])
    _pair(d.nanmedian(0, True), [[0.3, -1.2, -2.0, 0.7, 1.1]], [[0, 0, 1, 0, 0]])
    _pair(T([1.0, 2, nan, nan]).median(0), nan, 2)
    _pair(T([nan, nan]).nanmedian(0), nan, 0)
    _pair(T(3.0).median(0), 3.0, 0)


def test_median_of_all_elements_is_the_lower_middle_its_gradient_shared_by_ties():
    assert_values(T([4.0, 1, 3, 1, 4, 4, 2, 3]).median(), 3.0)
    out, g = _weighted_grad(lambda x: x.median(), [1.0, 3, 4, 2])
    assert_values(out, 2.0)
    assert_values(g, [0.0, 0, 0, math.sin(1)])
    s = 0.2804903282692988  # sin(1) / 3
    out, g = _weighted_grad(lambda x: x.median(), [1.0, 2, 2, 0, 2, 3])
    assert_values(out, 2.0)
    assert_values(g, [0.0, s, s, 0.0, s, 0.0])
    out, g = _weighted_grad(lambda x: x.median(), [1.0, nan, 2, nan])
    assert_values(out, nan)
    assert_values(g, [0.0, 0.42073549240394825, 0.0, 0.42073549240394825])
    out, g = _weighted_grad(lambda x: x.nanmedian(), [1.0, nan, 2, nan, 1])
    assert_values(out, 1.0)
    assert_values(g, [0.42073549240394825, 0.0, 0.0, 0.0, 0.42073549240394825])
    assert_values(T([]).median(), nan)
    assert_values(T([nan, nan]).nanmedian(), nan)
    # No chainrule.median: array-API code (scikit-learn's median_absolute_error) calls
    # xp.median(x, axis=...) where the namespace has one, expecting NumPy's median (the mean
    # of the two middle values), which PyTorch's is not.
    assert not hasattr(cr, "median") and not hasattr(cr, "nanmedian")


def test_median_differs_from_numpys_which_averages_the_middle_two():
    x = T([4.0, 1, 3, 2])
    assert_values(x.median(), 2.0)
    assert_values(np.median(x), 2.5)


def test_kthvalue_gives_pytorchs_element():
    d = T(D)
    _pair(d.kthvalue(2, 1), [0.3, 0.0, 0.5], [0, 4, 1])
    _pair(cr.kthvalue(d, 4), [1.1, 4.0, nan], [4, 0, 0])
    _pair(d.kthvalue(3, 0, True), [[nan, nan, nan, 1.0, 2.0]], [[2, 1, 2, 1, 2]])


def test_among_ties_the_index_is_the_stable_sorts():
    # PyTorch leaves it unspecified (its quickselect gives index 2 for the 2nd smallest of
    # [1, 1, 1, 0, 2, 1]); chainrule's is the stable sort's: the k-th in index order.
    x = T([1.0, 1, 1, 0, 2, 1])
    _pair(x.kthvalue(2), 1.0, 0)
    _pair(x.kthvalue(3), 1.0, 1)
    _pair(x.median(0), 1.0, 1)


def test_mode_gives_the_smallest_most_frequent_value_and_its_last_index():
    m = T([[1.0, 2, 2, 1, 3, 0], [5.0, 4, 4, 5, 5, 4], [7.0, 7, 7, 7, 7, 7], [0.0, 1, 2, 3, 4, 5]])
    _pair(m.mode(1), [1.0, 4.0, 7.0, 0.0], [3, 5, 5, 0])
    _pair(cr.mode(m, 0, keepdim=True), [[0.0, 1, 2, 1, 3, 0]], [[3, 3, 3, 0, 0, 0]])
    _pair(T(3.0).mode(), 3.0, 0)
    # NaNs count as one value (PyTorch's answer with NaN is unspecified).
    _pair(T([nan, nan, 1.0]).mode(), nan, 1)


def test_cummax_and_cummin_give_pytorchs_values_and_indices():
    c = T(C)
    _pair(
        c.cummax(1),
        [[1.0, 3, 3, 3, nan, nan, nan], [2.0, 2, 2, 2, 4, 4, 4]],
        [[0, 1, 2, 2, 4, 4, 6], [0, 0, 0, 0, 4, 5, 5]],
    )
    _pair(
        cr.cummin(c, 1),
        [[1.0, 1, 1, 1, nan, nan, nan], [2.0, 1, 1, 0, 0, 0, -1]],
        [[0, 0, 0, 0, 4, 4, 6], [0, 1, 2, 3, 3, 3, 6]],
    )
    _pair(
        c.cummax(0),
        [[1.0, 3, 3, 2, nan, 5, nan], [2.0, 3, 3, 2, nan, 5, nan]],
        [[0, 0, 0, 0, 0, 0, 0], [1, 0, 0, 0, 0, 0, 0]],
    )
    _pair(
        cr.cummin(c, -2),
        [[1.0, 3, 3, 2, nan, 5, nan], [1.0, 1, 1, 0, nan, 4, nan]],
        [[0, 0, 0, 0, 0, 0, 0], [0, 1, 1, 1, 0, 1, 0]],
    )
    _pair(T(3.0).cummax(0), 3.0, 0)
    values, indices = T([]).cummin(0)
    assert N(values).shape == N(indices).shape == (0,)


def test_integer_inputs_as_pytorch():
    i = T([[3, 1, 2, 1], [0, 5, 5, 2]])
    _pair(i.sort(1), [[1, 1, 2, 3], [0, 2, 5, 5]], [[1, 3, 2, 0], [0, 3, 1, 2]])
    assert N(i.median(1).values).tolist() == [1, 2]
    assert N(i.median()).tolist() == 2 and i.median().dtype == cr.int64
    _pair(i.cummax(1), [[3, 3, 3, 3], [0, 5, 5, 5]], [[0, 0, 0, 0], [0, 1, 2, 2]])
    _pair(i.mode(1), [1, 5], [3, 2])
    assert N(i.kthvalue(3, 1).values).tolist() == [2, 5]
    assert N(i.nansum(1)).tolist() == [7, 12] and i.nansum().dtype == cr.int64
    assert N(cr.aminmax(i).min).tolist() == 0


def test_gradients_go_to_the_selected_elements_as_pytorchs():
    sin = [math.sin(k) for k in range(1, 11)]
    _, g = _weighted_grad(lambda x: x.sort(1, descending=True), G)
    assert_values(
        g, [[sin[3], sin[4], sin[0], sin[2], sin[1]], [sin[5], sin[6], sin[9], sin[7], sin[8]]]
    )
    _, g = _weighted_grad(lambda x: x.median(1), G)
    assert_values(g, [[0.0, 0, 0, sin[0], 0], [0.0, 0, 0, sin[1], 0]])
    _, g = _weighted_grad(lambda x: x.kthvalue(2, 0), G)
    assert_values(g, [[0.0, 0, sin[2], 0, sin[4]], [sin[0], sin[1], 0, sin[3], 0]])
    _, g = _weighted_grad(lambda x: x.mode(1), [[1.0, 2, 2, 1, 3, 0], [5.0, 4, 4, 5, 5, 4.5]])
    assert_values(g, [[0.0, 0, 0, sin[0], 0, 0], [0.0, 0, 0, 0, sin[1], 0]])
    _, g = _weighted_grad(lambda x: x.cummax(1), C)
    assert_values(
        g,
        [
            [sin[0], sin[1], -0.615682487248061, 0, -1.2383397728620644, 0, sin[6]],
            [-0.1425345855749348, 0, 0, 0, -0.5365729180004349, 1.4107743925215113, 0],
        ],
    )
    _, g = _weighted_grad(lambda x: x.cummin(0), C)
    assert_values(
        g,
        [
            [
                1.8308292314312782,
                sin[1],
                sin[2],
                sin[3],
                -1.4954971926635734,
                sin[5],
                1.6475939544136593,
            ],
            [0.0, sin[8], sin[9], -0.9999902065507035, 0, 0.4201670368266409, 0],
        ],
    )


def test_aminmax_nansum_nanmean_as_pytorch():
    x = T(X)
    assert_values(x[1].aminmax().min, 0.0)
    result = cr.aminmax(x, dim=1, keepdim=True)
    assert_values(result.min, [[nan], [0.0], [nan]])
    assert_values(result.max, [[nan], [5.0], [nan]])
    out, g = _weighted_grad(lambda t: t.aminmax().max * 2 + t.aminmax().min, [1.0, 3, 3, 1, 0, 0])
    assert_values(out, 6.0)
    assert_values(
        g,
        [0.0, 0.8414709848078965, 0.8414709848078965, 0, 0.42073549240394825, 0.42073549240394825],
    )
    assert_values(x.nansum(), 26.5)
    assert_values(x.nanmean(1), [2.0, 1.8333333333333333, 1.375])
    out, g = _weighted_grad(lambda t: cr.nansum(t, 1), [[1.0, nan, 1], [nan, 2, 3]])
    assert_values(out, [2.0, 5.0])
    assert_values(
        g,
        [[0.8414709848078965, 0, 0.8414709848078965], [0, 0.9092974268256817, 0.9092974268256817]],
    )
    out, g = _weighted_grad(lambda t: cr.nanmean(t, 0, keepdim=True), [[1.0, nan, 1], [nan, 2, 3]])
    assert_values(out, [[1.0, 2.0, 2.0]])
    assert_values(
        g,
        [[0.8414709848078965, 0, 0.0705600040299336], [0, 0.9092974268256817, 0.0705600040299336]],
    )
    assert_values(T([nan]).nanmean(), nan)
    assert_values(T([]).nansum(), 0.0)


def test_logcumsumexp_is_stable_for_large_values_as_pytorch():
    values = [[1000.0, -1000, 1000, 3, -inf], [-3.0, 0.5, 2, -1, 7]]
    out, g = _weighted_grad(lambda x: x.logcumsumexp(1), values)
    assert_values(
        out,
        [
            [1000.0, 1000.0, 1000.6931471805599, 1000.6931471805599, 1000.6931471805599],
            [-3.0, 0.5297504182726206, 2.2069069336734133, 2.2465906475097994, 7.008585289459158],
        ],
    )
    assert_values(
        g,
        [
            [0.9634650306778746, 0.0, -0.7873033809556429, 0.0, 0.0],
            [
                -0.2525919664978946,
                0.888273375407962,
                1.1228626345479276,
                0.01585320210026728,
                -0.5393705240626305,
            ],
        ],
        rtol=1e-11,
    )
    assert_values(T([-inf, -inf, 0.0, inf, 1.0]).logcumsumexp(0), [-inf, -inf, 0.0, inf, inf])
    assert_values(
        cr.logcumsumexp(T([[-inf, inf], [1.0, -inf], [inf, inf]]), 0),
        [[-inf, inf], [1.0, inf], [inf, inf]],
    )
    assert_values(T(2.0).logcumsumexp(0), 2.0)


def test_logcumsumexp_gradient_at_infinite_outputs_is_finite():
    # PyTorch's: [nan, 0.847, 0, -0.553], NaN where the output is -inf (x[0] alone); the
    # derivative of an output that is its input alone is 1 (sin(1) here).
    _, g = _weighted_grad(lambda x: x.logcumsumexp(0), [-inf, 1.0, -inf, 2])
    assert_values(g, [math.sin(1), 0.8468818961010758, 0.0, -0.5532669565234549])
    # Two equal infinite terms split the gradient; a finite one after inf gets 0 (PyTorch's 0;
    # a plain logaddexp scan gave NaN, inf - inf reaching it).
    _, g = _weighted_grad(lambda x: x.logcumsumexp(0), [-inf, 1.0, inf, inf, 1.0])
    assert np.all(np.isfinite(N(g)))
    assert_values(g[1], math.sin(2))
    assert_values(g[4], 0.0)


_QS = [0.0, 0.1, 0.25, 0.5, 0.625, 1.0]
_QUANTILES = {  # PyTorch's quantile and nanquantile of Q along dim 1 at _QS
    "linear": (
        [
            [1.0, nan, nan],
            [1.4, nan, nan],
            [2.0, nan, nan],
            [3.0, nan, nan],
            [3.5, nan, nan],
            [7.0, nan, nan],
        ],
        [
            [1.0, -1.0, nan],
            [1.4, -0.55, nan],
            [2.0, 0.125, nan],
            [3.0, 1.25, nan],
            [3.5, 1.8125, nan],
            [7.0, 3.0, nan],
        ],
    ),
    "lower": (
        [
            [1.0, nan, nan],
            [1.0, nan, nan],
            [2.0, nan, nan],
            [3.0, nan, nan],
            [3.0, nan, nan],
            [7.0, nan, nan],
        ],
        [
            [1.0, -1.0, nan],
            [1.0, -1.0, nan],
            [2.0, -1.0, nan],
            [3.0, 0.5, nan],
            [3.0, 0.5, nan],
            [7.0, 3.0, nan],
        ],
    ),
    "higher": (
        [
            [1.0, nan, nan],
            [2.0, nan, nan],
            [2.0, nan, nan],
            [3.0, nan, nan],
            [4.0, nan, nan],
            [7.0, nan, nan],
        ],
        [
            [1.0, -1.0, nan],
            [2.0, 0.5, nan],
            [2.0, 0.5, nan],
            [3.0, 2.0, nan],
            [4.0, 2.0, nan],
            [7.0, 3.0, nan],
        ],
    ),
    "midpoint": (
        [
            [1.0, nan, nan],
            [1.5, nan, nan],
            [2.0, nan, nan],
            [3.0, nan, nan],
            [3.5, nan, nan],
            [7.0, nan, nan],
        ],
        [
            [1.0, -1.0, nan],
            [1.5, -0.25, nan],
            [2.0, -0.25, nan],
            [3.0, 1.25, nan],
            [3.5, 1.25, nan],
            [7.0, 3.0, nan],
        ],
    ),
    "nearest": (
        [
            [1.0, nan, nan],
            [1.0, nan, nan],
            [2.0, nan, nan],
            [3.0, nan, nan],
            [3.0, nan, nan],
            [7.0, nan, nan],
        ],
        [
            [1.0, -1.0, nan],
            [1.0, -1.0, nan],
            [2.0, 0.5, nan],
            [3.0, 2.0, nan],
            [3.0, 2.0, nan],
            [7.0, 3.0, nan],
        ],
    ),
}
# PyTorch's gradients of the weighted quantiles at [0.3, 0.5, 0.9] along dim 1: of quantile
# on Q's first two rows, of nanquantile on Q.
_QUANTILE_GRADS = {
    "linear": (
        [
            [-0.3835697098652553, 0, 0.30941420502144645, 0.6731767878463173, -0.5753545647978832],
            [0, 0, -0.12692056668117235, 0, 0],
        ],
        [
            [0.2627946394875156, 0, -0.588508298346349, 0.6731767878463173, 0.3941919592312735],
            [0.3389055468115442, 0.09092974268256825, 0, -0.18265466334455488, 0.6925507726363674],
            [0.2738229951026979, 0, 0, 0, 0],
        ],
    ),
    "lower": (
        [
            [-0.9589242746631385, 0, 0.1411200080598672, 0.8414709848078965, 0],
            [0, 0, -0.12692056668117235, 0, 0],
        ],
        [
            [0.6569865987187891, 0, -0.7568024953079282, 0.8414709848078965, 0],
            [-0.9589242746631385, 0.9092974268256817, 0, 0.9893582466233818, 0],
            [0.2738229951026979, 0, 0, 0, 0],
        ],
    ),
    "higher": (
        [[0, 0, 0.9825909928677637, 0, -0.9589242746631385], [0, 0, -0.12692056668117235, 0, 0]],
        [
            [0, 0, 0.0846684894999683, 0, 0.6569865987187891],
            [0.9092974268256817, 0, 0, -0.9589242746631385, 0.9893582466233818],
            [0.2738229951026979, 0, 0, 0, 0],
        ],
    ),
    "midpoint": (
        [
            [-0.4794621373315692, 0, 0.5618555004638155, 0.42073549240394825, -0.4794621373315692],
            [0, 0, -0.12692056668117235, 0, 0],
        ],
        [
            [
                0.32849329935939453,
                0,
                -0.33606700290397995,
                0.42073549240394825,
                0.32849329935939453,
            ],
            [
                -0.024813423918728372,
                0.45464871341284085,
                0,
                0.015216985980121667,
                0.4946791233116909,
            ],
            [0.2738229951026979, 0, 0, 0, 0],
        ],
    ),
    "nearest": (
        [
            [0, 0, 0.1411200080598672, 0.8414709848078965, -0.9589242746631385],
            [0, 0, -0.12692056668117235, 0, 0],
        ],
        [
            [0, 0, -0.7568024953079282, 0.8414709848078965, 0.6569865987187891],
            [0.9092974268256817, 0, 0, -0.9589242746631385, 0.9893582466233818],
            [0.2738229951026979, 0, 0, 0, 0],
        ],
    ),
}


@pytest.mark.parametrize("interpolation", list(_QUANTILES))
def test_quantile_and_nanquantile_give_pytorchs_values_and_gradients(interpolation):
    q = T(_QS)
    plain, skip = _QUANTILES[interpolation]
    assert_values(T(Q).quantile(q, 1, interpolation=interpolation), plain)
    assert_values(cr.nanquantile(T(Q), q, dim=1, interpolation=interpolation), skip)
    qs = T([0.3, 0.5, 0.9])
    grad_plain, grad_skip = _QUANTILE_GRADS[interpolation]
    _, g = _weighted_grad(lambda x: x.quantile(qs, 1, interpolation=interpolation), Q[:2])
    assert_values(g, grad_plain)
    _, g = _weighted_grad(lambda x: x.nanquantile(qs, 1, interpolation=interpolation), Q)
    assert_values(g, grad_skip)


def test_quantile_shapes_as_pytorch():
    assert_values(T(Q[:1]).quantile(0.4), 2.6)
    assert_values(cr.nanquantile(T(Q), 0.4), 2.0)
    assert_values(
        T(Q).nanquantile(0.4, dim=0, keepdim=True), [[1.9, -0.2, 3.0, 2.0, 4.6]], rtol=1e-11
    )
    assert T(Q).nanquantile(T([0.4, 0.2]), dim=0, keepdim=True).shape == (2, 1, 5)
    assert T([[1.0, 2, 3]]).quantile(T([0.5, 0.2]), keepdim=True).shape == (2, 1, 1)
    assert_values(T([1.0, 2]).quantile(T(0.2)), 1.2)
    assert_values(T(3.0).quantile(T([0.2])), [3.0])


_ERRORS = [
    (
        lambda: T(X).sort(3),
        IndexError,
        r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 3\)",
    ),
    (
        lambda: T([1.0, 2]).median(1),
        IndexError,
        r"Dimension out of range \(expected to be in range of \[-1, 0\], but got 1\)",
    ),
    (lambda: T([1.0, 2]).mode(-2), IndexError, "Dimension out of range"),
    (lambda: T([1.0, 2]).cummax(1), IndexError, "Dimension out of range"),
    (lambda: T([1.0, 2]).logcumsumexp(2), IndexError, "Dimension out of range"),
    (lambda: cr.aminmax(T([1.0, 2]), dim=1), IndexError, "Dimension out of range"),
    (lambda: T([1.0, 2]).quantile(0.5, dim=1), IndexError, "Dimension out of range"),
    (
        lambda: T([]).median(0),
        IndexError,
        r"median\(\): Expected reduction dim 0 to have non-zero size.",
    ),
    (
        lambda: T([[]]).nanmedian(1),
        IndexError,
        r"nanmedian\(\): Expected reduction dim 1 to have non-zero size.",
    ),
    (
        lambda: T([]).mode(0),
        IndexError,
        r"mode\(\): Expected reduction dim 0 to have non-zero size.",
    ),
    (
        lambda: T([]).kthvalue(1),
        IndexError,
        r"kthvalue\(\): Expected reduction dim 0 to have non-zero size.",
    ),
    (
        lambda: T([1.0]).kthvalue(2),
        RuntimeError,
        r"kthvalue\(\): selected number k out of range for dimension 0",
    ),
    (lambda: T([1.0]).kthvalue(0), RuntimeError, "selected number k out of range"),
    (
        lambda: T([]).aminmax(),
        RuntimeError,
        r"aminmax\(\): cannot compute aminmax over an empty dimension",
    ),
    (
        lambda: T([1, 2]).nanmean(),
        RuntimeError,
        r"nanmean\(\): expected input to have floating point or complex dtype",
    ),
    (
        lambda: T([1, 2]).logcumsumexp(0),
        NotImplementedError,
        r"logcumsumexp\(\): not implemented for int64",
    ),
    (
        lambda: T([1, 2]).quantile(0.5),
        RuntimeError,
        r"quantile\(\) input tensor must be either float or double dtype",
    ),
    (lambda: T([]).nanquantile(0.5), RuntimeError, r"quantile\(\) input tensor must be non-empty"),
    (
        lambda: T([1.0, 2]).quantile(1.5),
        RuntimeError,
        r"quantile\(\) q must be in the range \[0, 1\] but got 1.5",
    ),
    (
        lambda: T([1.0, 2]).quantile(T([0.5, -1.0])),
        RuntimeError,
        r"quantile\(\) q values must be in the range \[0, 1\]",
    ),
    (
        lambda: T([1.0, 2]).quantile(T([[0.5]])),
        RuntimeError,
        r"quantile\(\) q must be a scalar or 1D tensor",
    ),
    (
        lambda: T([1.0, 2]).quantile(T([0.5], "float32")),
        RuntimeError,
        r"quantile\(\) q tensor must be same dtype as the input tensor",
    ),
    (
        lambda: T([1.0, 2]).nanquantile(0.5, interpolation="x"),
        RuntimeError,
        r"quantile\(\) interpolation must be one of linear, lower, higher, midpoint or "
        "nearest, but got x",
    ),
]


@pytest.mark.parametrize("call, kind, message", _ERRORS)
def test_bad_input_raises_pytorchs_error(call, kind, message):
    with pytest.raises(kind, match=message):
        call()


# ----------------------------------------------------------------------------- derivatives


def _distinct(shape, draw):
    """Values of `shape` at least 0.3 apart (no ties for finite differences to cross)."""
    n = math.prod(shape)
    order = draw(st.permutations(range(n)))
    jitter = draw(hnp.arrays(np.float64, (n,), elements=st.floats(0, 0.2)))
    return (np.asarray(order, dtype=np.float64) * 0.5 - n / 4 + jitter).reshape(shape)


def _selections(ndim):
    dim = st.integers(-max(ndim, 1), max(ndim, 1) - 1)
    return st.sampled_from(
        [
            lambda x, d: x.sort(d).values,
            lambda x, d: x.sort(d, descending=True).values,
            lambda x, d: x.median(d).values,
            lambda x, d: x.nanmedian(d, keepdim=True).values,
            lambda x, d: x.kthvalue(1, d).values,
            lambda x, d: x.mode(d).values,
            lambda x, d: x.cummax(d).values,
            lambda x, d: x.cummin(d).values,
            lambda x, d: x.logcumsumexp(d),
            lambda x, d: x.aminmax(dim=d).max,
            lambda x, d: x.nansum(d),
            lambda x, d: x.nanmean(d),
            lambda x, d: x.quantile(0.3, d),
            lambda x, d: x.nanquantile(T([0.0, 0.45, 1.0]), d, interpolation="midpoint"),
            lambda x, d: x.quantile(0.7, d, interpolation="nearest"),
        ]
    ), dim


@examples(40)
@given(data=st.data())
def test_derivatives_match_finite_differences_in_both_modes(data):
    shape = data.draw(hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3))
    fns, dims = _selections(len(shape))
    fn, dim = data.draw(fns), data.draw(dims)
    x = leaf(_distinct(shape, data.draw))
    assert gradcheck(lambda t: fn(t, dim) ** 2, (x,), check_forward_ad=True)
    assert gradgradcheck(lambda t: fn(t, dim) ** 2, (x,), check_fwd_over_rev=True)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: x.median() ** 2,
        lambda x: x.nanmedian() ** 2,
        lambda x: x.quantile(T([0.2, 0.8])) ** 2,
        lambda x: x.logcumsumexp(1) ** 2,
        lambda x: x.nansum() ** 2,
    ],
)
def test_reductions_of_all_elements_match_finite_differences(fn):
    x = leaf([[0.3, -1.2, 2.5], [0.7, 1.1, -0.4]])
    assert gradcheck(fn, (x,), check_forward_ad=True)
    assert gradgradcheck(fn, (x,), check_fwd_over_rev=True)


def test_forward_mode_gives_the_tangent_of_the_selected_element():
    x = T([[0.3, -1.2, 2.5], [0.7, 1.1, -0.4]])
    tangent = T([[1.0, 2, 3], [4, 5, 6]])
    _, t = cr.func.jvp(lambda a: a.median(1).values, (x,), (tangent,))
    assert_values(t, [1.0, 4.0])  # PyTorch's jvp
    _, t = cr.func.jvp(lambda a: a.median(), (x,), (tangent,))
    assert_values(t, 1.0)
    _, t = cr.func.jvp(lambda a: a.cummax(1).values, (x,), (tangent,))
    assert_values(t, [[1.0, 1, 3], [4, 5, 5]])


# ----------------------------------------------------------------------------- against NumPy


@contextlib.contextmanager
def _quiet():
    """NumPy's warnings for an all-NaN slice or NaN arithmetic, off."""
    with warnings.catch_warnings(), np.errstate(invalid="ignore"):
        warnings.simplefilter("ignore", RuntimeWarning)
        yield


# A small grid with NaN: ties are common.
_TIED = st.sampled_from([-1.0, 0.0, 0.5, 2.0, nan])


def _tied(shape_strategy=NONEMPTY):
    return shape_strategy.flatmap(lambda s: hnp.arrays(np.float64, s, elements=_TIED))


def _stable_descending(a, axis):
    key = np.where(np.isnan(a), -np.inf, -a)  # NaN first, as PyTorch's
    return np.argsort(key, axis=axis, kind="stable")


@examples(60)
@given(a=_tied(), data=st.data())
def test_sort_is_a_stable_sort_with_nan_largest(a, data):
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    values, indices = T(a).sort(dim)
    order = np.argsort(a, axis=dim, kind="stable")
    assert N(indices).tolist() == order.tolist()
    assert_values(values, np.take_along_axis(a, order, axis=dim))
    values, indices = T(a).sort(dim, descending=True)
    assert N(indices).tolist() == _stable_descending(a, dim).tolist()


@examples(60)
@given(a=_tied(), data=st.data())
def test_selections_pick_an_element_with_numpys_value(a, data):
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    n = a.shape[dim]
    s = np.sort(a, axis=dim)  # NaN last
    lower = np.take(s, (n - 1) // 2, axis=dim)
    has_nan = np.isnan(a).any(axis=dim)
    k = data.draw(st.integers(1, n))
    known = np.sort(np.where(np.isnan(a), np.inf, a), axis=dim)
    count = (~np.isnan(a)).sum(axis=dim)
    nanlower = np.take_along_axis(
        known, np.expand_dims(np.maximum((count - 1) // 2, 0), dim), axis=dim
    ).squeeze(dim)
    nanlower = np.where(count == 0, nan, nanlower)
    cases = [
        (T(a).median(dim), np.where(has_nan, nan, lower)),
        (T(a).nanmedian(dim), nanlower),
        (T(a).kthvalue(k, dim), np.take(s, k - 1, axis=dim)),
    ]
    for (values, indices), expected in cases:
        assert_values(values, expected)
        at = np.take_along_axis(a, np.expand_dims(N(indices), dim), axis=dim).squeeze(dim)
        np.testing.assert_array_equal(at, expected)
    assert_values(
        T(a).median(), np.nan if np.isnan(a).any() else np.sort(a, axis=None)[(a.size - 1) // 2]
    )
    flat = a[~np.isnan(a)]
    assert_values(T(a).nanmedian(), np.sort(flat)[(flat.size - 1) // 2] if flat.size else nan)


def _mode_of(row):
    """The smallest most frequent value of a row (NaNs one value) and its last index."""
    keys = ["nan" if math.isnan(v) else v for v in row]
    counts = {k: keys.count(k) for k in keys}
    best = max(counts.values())
    finite = [k for k in counts if k != "nan" and counts[k] == best]
    key = min(finite) if finite else "nan"
    return (nan if key == "nan" else key), max(i for i, k in enumerate(keys) if k == key)


def _running_of(row, wins):
    """PyTorch's running extreme: the later element wins ties and NaN beats all."""
    best, at, out = None, None, []
    for i, v in enumerate(row):
        if best is None or math.isnan(v) or (not math.isnan(best) and wins(v, best)):
            best, at = v, i
        out.append((best, at))
    return out


@examples(60)
@given(a=_tied(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=6)), data=st.data())
def test_mode_and_running_extremes_match_a_reference(a, data):
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    rows = np.moveaxis(a, dim, -1).reshape(-1, a.shape[dim])
    values, indices = T(a).mode(dim)
    expected = [_mode_of(list(r)) for r in rows]
    np.testing.assert_array_equal(np.reshape(N(values), -1), [v for v, _ in expected])
    assert np.reshape(N(indices), -1).tolist() == [i for _, i in expected]
    for method, wins in (("cummax", lambda v, b: v >= b), ("cummin", lambda v, b: v <= b)):
        values, indices = getattr(T(a), method)(dim)
        got_v = np.moveaxis(N(values), dim, -1).reshape(rows.shape)
        got_i = np.moveaxis(N(indices), dim, -1).reshape(rows.shape)
        for r, v, i in zip(rows, got_v, got_i):
            ref = _running_of(list(r), wins)
            np.testing.assert_array_equal(v, [b for b, _ in ref])
            assert i.tolist() == [k for _, k in ref]


@examples(60)
@given(
    a=_tied(hnp.array_shapes(min_dims=1, max_dims=2, min_side=1, max_side=5)),
    q=st.lists(st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.6, 0.75, 1.0]), min_size=1, max_size=3),
    interpolation=st.sampled_from(["linear", "lower", "higher", "midpoint", "nearest"]),
    data=st.data(),
)
def test_quantiles_match_numpys(a, q, interpolation, data):
    dim = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    qs = T(q)
    expected = np.quantile(a, q, axis=dim, method=interpolation)
    assert_values(T(a).quantile(qs, dim, interpolation=interpolation), expected)
    with _quiet():
        expected = np.nanquantile(a, q, axis=dim, method=interpolation)
    assert_values(T(a).nanquantile(qs, dim, interpolation=interpolation), expected)


@examples(60)
@given(
    a=NONEMPTY.flatmap(
        lambda s: hnp.arrays(
            np.float64, s, elements=st.sampled_from([-inf, -700.0, -1.0, 0.0, 2.5, 700.0, nan])
        )
    ),
    data=st.data(),
)
def test_logcumsumexp_nansum_nanmean_match_numpys(a, data):
    dim = data.draw(st.integers(-a.ndim, a.ndim - 1))
    with _quiet():
        assert_values(T(a).logcumsumexp(dim), np.logaddexp.accumulate(a, axis=dim), rtol=1e-13)
        assert_values(T(a).nansum(dim), np.nansum(a, axis=dim))
        assert_values(T(a).nanmean(dim, keepdim=True), np.nanmean(a, axis=dim, keepdims=True))


def test_a_tensor_of_another_library_than_the_default_stays_in_its_library():
    # The positions were made in the default library for integer input (median(dim) raised
    # TypeError: cannot mix arrays of different libraries) on a tensor of another one.
    i = cr.asarray(strict.asarray([[3, 1, 2], [0, 5, 4]]))
    x = cr.asarray(strict.asarray([[3.0, 1, 2], [0, 5, 4]]))
    _pair(i.median(1), [2, 4], [2, 2])
    _pair(i.kthvalue(1), [1, 0], [1, 0])
    _pair(x.mode(1), [1.0, 0.0], [1, 0])
    _pair(x.cummax(1), [[3.0, 3, 3], [0, 5, 5]], [[0, 0, 0], [0, 1, 1]])
    assert_values(x.median(), 2.0)
    assert_values(cr.asarray(strict.asarray(np.zeros(0))).median(), nan)
    assert_values(x.quantile(0.5, 1), [2.0, 4.0])
    assert_values(x.logcumsumexp(1)[1, 0], 0.0)
