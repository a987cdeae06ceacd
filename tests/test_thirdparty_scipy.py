"""SciPy's Array API code paths (SCIPY_ARRAY_API=1, set in conftest before SciPy is imported)
on chainrule tensors: scipy.special's logsumexp / softmax / log_softmax, scipy.stats' moments
and means, and scipy.fft, with values against NumPy inputs and gradients (first and second
order) against finite differences. Functions SciPy computes through NumPy refuse tensors that
require grad, rather than return results cut from the graph. On the storage library under
test (not yet Dask)."""

import numpy as np
import pytest
import scipy
import scipy.cluster.vq
import scipy.fft as sfft
import scipy.integrate
import scipy.optimize
import scipy.special as special
import scipy.stats as stats
from scipy._lib._array_api import SCIPY_ARRAY_API

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import LIBRARY, N, T

# On the storage library under test; not yet on Dask: 10 of these 72 fail there (SciPy's
# masked writes and reductions over sizes unknown until computed), and a run takes minutes.
pytestmark = pytest.mark.skipif(LIBRARY == "dask", reason="not sorted out on Dask yet")

RNG = np.random.default_rng(1)
A = RNG.normal(size=(5, 4))
POSITIVE = RNG.uniform(0.5, 2.0, size=(5, 4))
WEIGHTS = RNG.normal(size=20)


def test_scipy_array_api_support_is_on():
    assert SCIPY_ARRAY_API, "SCIPY_ARRAY_API=1 must be set before scipy is imported"
    assert scipy.__version__ >= "1.15"


def weighted(fn):
    def scalar(*xs):
        out = fn(*xs)
        return cr.sum(out * T(WEIGHTS[: out.size].reshape(out.shape)))

    return scalar


def assert_matches_numpy_and_differentiates(fn, *arrays, second_order=True):
    xs = [T(a, requires_grad=True) for a in arrays]
    out = fn(*xs)
    assert out.__class__ is cr.Tensor and out.requires_grad
    np.testing.assert_allclose(N(out), np.asarray(fn(*arrays)), rtol=1e-10, atol=1e-12)
    assert gradcheck(weighted(fn), tuple(xs))
    if second_order:
        assert gradgradcheck(weighted(fn), tuple(xs))


SPECIAL = {
    "logsumexp": lambda a: special.logsumexp(a),
    "logsumexp axis keepdims": lambda a: special.logsumexp(a, axis=1, keepdims=True),
    "logsumexp b": lambda a: special.logsumexp(a, axis=0, b=POSITIVE),
    "softmax": lambda a: special.softmax(a, axis=1),
    "softmax all": lambda a: special.softmax(a),
    "log_softmax": lambda a: special.log_softmax(a, axis=0),
}


@pytest.mark.parametrize("name", SPECIAL)
def test_scipy_special(name):
    fn = SPECIAL[name]

    def on_tensors(a):
        # The constant b as a tensor when a is one (SciPy needs one namespace).
        if name == "logsumexp b" and a.__class__ is cr.Tensor:
            return special.logsumexp(a, axis=0, b=T(POSITIVE))
        return fn(a)

    assert_matches_numpy_and_differentiates(on_tensors, A)


def test_scipy_logsumexp_differentiates_in_b_too():
    # logsumexp(a, b=...) copied a with asarray(copy=True): the gradient used to vanish.
    def fn(a, b):
        return special.logsumexp(a, axis=1, b=b)

    assert_matches_numpy_and_differentiates(fn, A, POSITIVE)


STATS = {
    "moment 2": lambda a: stats.moment(a, order=2, axis=0),
    "moment 3": lambda a: stats.moment(a, order=3, axis=1),
    "moment 4 center": lambda a: stats.moment(a, order=4, axis=0, center=0.5),
    "skew": lambda a: stats.skew(a, axis=0),
    "skew unbiased": lambda a: stats.skew(a, axis=1, bias=False),
    "kurtosis": lambda a: stats.kurtosis(a, axis=0),
    "kurtosis pearson unbiased": lambda a: stats.kurtosis(a, axis=0, fisher=False, bias=False),
    "zscore": lambda a: stats.zscore(a, axis=0),
    "zscore ddof": lambda a: stats.zscore(a, axis=1, ddof=1),
    "variation": lambda a: stats.variation(a + 5.0, axis=0),
    "sem": lambda a: stats.sem(a, axis=0),
    "tmean": lambda a: stats.tmean(a),
    "tvar": lambda a: stats.tvar(a, axis=0),
    "tstd": lambda a: stats.tstd(a, axis=1),
    "describe mean": lambda a: stats.describe(a, axis=0).mean,
    "describe variance": lambda a: stats.describe(a, axis=0).variance,
    "describe skewness": lambda a: stats.describe(a, axis=0).skewness,
    "trim_mean": lambda a: stats.trim_mean(a, 0.2, axis=0),
    "iqr": lambda a: stats.iqr(a, axis=0),
    "quantile": lambda a: stats.quantile(a, 0.3, axis=0),
    "median_abs_deviation": lambda a: stats.median_abs_deviation(a, axis=0),
    "circmean": lambda a: stats.circmean(a, axis=0),
    "circvar": lambda a: stats.circvar(a, axis=1),
    "circstd": lambda a: stats.circstd(a, axis=0),
    "differential_entropy": lambda a: stats.differential_entropy(a, axis=0),
    "kstat": lambda a: stats.kstat(a[:, 0], 2),
    "kstatvar": lambda a: stats.kstatvar(a[:, 1]),
    "tmin": lambda a: stats.tmin(a, axis=0),
    "tsem": lambda a: stats.tsem(a, axis=0),
    "bartlett": lambda a: stats.bartlett(a[:, 0], a[:, 1]).statistic,
}
POSITIVE_STATS = {
    "gmean": lambda a: stats.gmean(a, axis=0),
    "hmean": lambda a: stats.hmean(a, axis=1),
    "pmean": lambda a: stats.pmean(a, 2.5, axis=0),
    "gstd": lambda a: stats.gstd(a, axis=0),
    "chisquare": lambda a: stats.chisquare(a[:, 0] * 10).statistic,
    "power_divergence": (
        lambda a: stats.power_divergence(a[:, 0] * 10, lambda_="log-likelihood").statistic
    ),
}
INTEGRATE = {
    "trapezoid": lambda a: scipy.integrate.trapezoid(a, axis=0),
    "cumulative_trapezoid": lambda a: scipy.integrate.cumulative_trapezoid(a, dx=0.5, axis=0),
    "cumulative_simpson": lambda a: scipy.integrate.cumulative_simpson(a, axis=0),
    "cluster.vq.whiten": lambda a: scipy.cluster.vq.whiten(a),
    "special.log_expit": lambda a: special.log_expit(a),
    "special.kl_div": lambda a: special.kl_div(a * a + 0.5, a * a + 1.0),
}


@pytest.mark.parametrize("name", INTEGRATE)
def test_scipy_integrate_cluster_and_special_functions(name):
    assert_matches_numpy_and_differentiates(INTEGRATE[name], A)


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("name", STATS)
def test_scipy_stats(name):
    # moment, skew and kurtosis copied their input: their gradients used to be wrong.
    assert_matches_numpy_and_differentiates(STATS[name], A)


@pytest.mark.parametrize("name", POSITIVE_STATS)
def test_scipy_stats_of_positive_values(name):
    assert_matches_numpy_and_differentiates(POSITIVE_STATS[name], POSITIVE)


def test_scipy_zmap_differentiates_in_both_arguments():
    def fn(scores, compare):
        return stats.zmap(scores, compare, axis=0)

    assert_matches_numpy_and_differentiates(fn, A[:2], A, second_order=False)


FFT = {
    "fft": lambda a: sfft.fft(a, axis=0),
    "ifft": lambda a: sfft.ifft(a, n=6),
    "rfft": lambda a: sfft.rfft(a),
    "irfft": lambda a: sfft.irfft(sfft.rfft(a, axis=0), n=5, axis=0),
    "fftn": lambda a: sfft.fftn(a),
    "rfftn norm": lambda a: sfft.rfftn(a, norm="ortho"),
    "fft2": lambda a: sfft.fft2(a),
    "hfft": lambda a: sfft.hfft(a, n=6),
    "ihfft": lambda a: sfft.ihfft(a),
}


@pytest.mark.parametrize("name", FFT)
def test_scipy_fft_values(name):
    fn = FFT[name]
    out = fn(T(A))
    assert out.__class__ is cr.Tensor
    np.testing.assert_allclose(N(out), fn(A), rtol=1e-12, atol=1e-13)
    # Differentiable through complex values (PyTorch's convention).
    assert gradcheck(fn, T(A, requires_grad=True))


@pytest.mark.parametrize(
    "fn", [sfft.fftshift, lambda a: sfft.ifftshift(a, axes=0)], ids=["fftshift", "ifftshift"]
)
def test_scipy_fft_shifts_differentiate(fn):
    assert_matches_numpy_and_differentiates(fn, A)


def test_scipy_fftfreq_in_chainrules_namespace():
    out = sfft.fftfreq(8, d=0.5, xp=cr)
    assert out.__class__ is cr.Tensor
    np.testing.assert_allclose(N(out), np.fft.fftfreq(8, d=0.5))


# SciPy's special ufuncs on tensors dispatch to chainrule.special, so what SciPy builds on
# them differentiates (they refused a tensor that requires grad before chainrule.special).
THROUGH_SPECIAL = {
    "expit": lambda a: special.expit(a),
    "erf": lambda a: special.erf(a),
    "entropy": lambda a: stats.entropy(a * a + 1.0, axis=0),
}


@pytest.mark.parametrize("name", THROUGH_SPECIAL)
def test_scipy_special_functions_and_what_uses_them_differentiate(name):
    assert_matches_numpy_and_differentiates(THROUGH_SPECIAL[name], A)


THROUGH_NUMPY = {
    "dct": lambda a: sfft.dct(a, axis=0),
    "pearsonr": lambda a: stats.pearsonr(a[:, 0], a[:, 1]).statistic,
}


def test_scipy_spearmanr_on_tensors_gives_numpys_values_without_a_graph():
    # Ranks (np.apply_along_axis of rankdata on tensors) are piecewise constant in the data:
    # the statistic and its p-value are integers' functions, with no gradient to give.
    x = T(A, requires_grad=True)
    got = stats.spearmanr(x[:, 0], x[:, 1])
    expected = stats.spearmanr(A[:, 0], A[:, 1])
    for ours, theirs in ((got.statistic, expected.statistic), (got.pvalue, expected.pvalue)):
        assert ours.__class__ is cr.Tensor and not ours.requires_grad
        np.testing.assert_allclose(N(ours), theirs, rtol=1e-12)


@pytest.mark.parametrize("name", THROUGH_NUMPY)
def test_scipy_functions_computed_by_numpy_refuse_tensors_that_require_grad(name):
    fn = THROUGH_NUMPY[name]
    out = fn(T(A))
    np.testing.assert_allclose(N(T(out)), fn(A), rtol=1e-12)
    # Their result would carry no gradient: as PyTorch, the conversion to NumPy raises.
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        fn(T(A, requires_grad=True))


@pytest.mark.parametrize("name", THROUGH_NUMPY)
def test_scipy_functions_computed_by_numpy_refuse_tensors_with_a_tangent(name):
    # Forward mode as reverse mode: the result's tangent would be 0, silently.
    fn = THROUGH_NUMPY[name]
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that has a forward"):
        cr.func.jvp(lambda a: cr.asarray(fn(a)), (T(A),), (cr.ones_like(T(A)),))


def test_scipy_minimize_with_chainrules_gradient_and_hessian_products():
    # SciPy's own optimizer on NumPy vectors, its derivatives from chainrule: a smooth convex
    # loss whose minimum solves  W (w - c) + 0.4 w^3 = 0.
    weights, center = T([1.0, 10.0]), T([1.0, 2.0])

    def loss(w):
        return cr.sum(weights * (w - center) ** 2) / 2 + cr.sum(w**4) / 10

    def fun(w):
        x = T(w, requires_grad=True)
        value = loss(x)
        (g,) = cr.autograd.grad(value, x)
        return float(value), N(g)

    def hessp(w, p):
        return N(cr.autograd.functional.hvp(loss, T(w), T(p))[1])

    res = scipy.optimize.minimize(fun, np.zeros(2), jac=True, hessp=hessp, method="trust-ncg")
    assert res.success
    w = res.x
    np.testing.assert_allclose([1.0, 10.0] * (w - [1.0, 2.0]) + 0.4 * w**3, 0.0, atol=1e-7)
    assert res.njev < 30  # second-order steps: few iterations
