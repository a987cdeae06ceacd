"""scikit-learn's metrics on chainrule tensors (array_api_dispatch=True): scikit-learn's own
Array API check for every metric it declares Array API support for (on NumPy storage: the
check makes its arrays); the ranking curves and areas, which call NumPy's forms of `diff`
and `where`, values against NumPy inputs; the pairwise kernels and distances, gradients
(first and second order) against finite differences; on the storage library under test."""

from functools import partial

import numpy as np
import pytest
import sklearn
from sklearn import metrics
from sklearn.metrics import pairwise
from sklearn.metrics.tests.test_common import yield_metric_checker_combinations

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import BACKEND, LIBRARY, N, T, fails_on

RNG = np.random.default_rng(4)
# Enough distinct scores for roc_curve to drop the collinear thresholds (drop_intermediate),
# with ties among them.
BINARY = RNG.integers(0, 2, size=30)
SCORES = np.round(RNG.uniform(size=30), 1)
CLASSES = np.array([0, 1, 2] * 10)
PROBA = RNG.dirichlet(np.ones(3), size=30)


@pytest.fixture
def dispatch():
    with sklearn.config_context(array_api_dispatch=True):
        yield


def _numpys(fn, *arrays):
    with sklearn.config_context(array_api_dispatch=False):
        return fn(*arrays)


# On Dask, scikit-learn's ranking metrics select by boolean masks and take unique values, of
# sizes unknown until computed.
DASK_SIZES = fails_on("dask", reason="sizes unknown until computed (masks, unique values)")
# scikit-learn's roc_curve takes logical_or of float differences (NumPy's rule), which
# array-api-strict refuses (below); its one-vs-one AUC indexes by a mask and an integer.
STRICT_FLOATS = fails_on("array_api_strict", reason="logical_or of floats in roc_curve")
STRICT_MIXED_INDEX = fails_on("array_api_strict", reason="a mask and an integer in one index")


@pytest.mark.regression
@DASK_SIZES
@pytest.mark.parametrize("drop_intermediate", [pytest.param(True, marks=STRICT_FLOATS), False])
def test_roc_curve_matches_numpy(drop_intermediate, dispatch):
    # It calls xp.diff(fps, 2) and xp.where(mask): both refused before.
    def fn(y, s):
        return metrics.roc_curve(y, s, drop_intermediate=drop_intermediate)

    got = fn(T(BINARY), T(SCORES))
    for ours, numpys in zip(got, _numpys(fn, BINARY, SCORES)):
        assert ours.__class__ is cr.Tensor
        np.testing.assert_allclose(N(ours), numpys, rtol=1e-14)


RANKING = {
    "roc_auc_score": lambda y, s: metrics.roc_auc_score(y, s),
    "roc_auc_score max_fpr": lambda y, s: metrics.roc_auc_score(y, s, max_fpr=0.5),
    "average_precision_score": lambda y, s: metrics.average_precision_score(y, s),
}
MULTICLASS = {
    "roc_auc_score ovr": lambda y, p: metrics.roc_auc_score(y, p, multi_class="ovr"),
    "roc_auc_score ovo": lambda y, p: metrics.roc_auc_score(y, p, multi_class="ovo"),
    "top_k_accuracy_score": lambda y, p: metrics.top_k_accuracy_score(y, p, k=2),
}


STRICT_MARKS = {
    "roc_auc_score": STRICT_FLOATS,
    "roc_auc_score max_fpr": STRICT_FLOATS,
    "roc_auc_score ovr": STRICT_FLOATS,
    "roc_auc_score ovo": STRICT_MIXED_INDEX,
}


@DASK_SIZES
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=STRICT_MARKS[n]) if n in STRICT_MARKS else n
        for n in [*RANKING, *MULTICLASS]
    ],
)
def test_ranking_areas_match_numpy(name, dispatch):
    fn, y, s = (
        (RANKING[name], BINARY, SCORES) if name in RANKING else (MULTICLASS[name], CLASSES, PROBA)
    )
    # Piecewise constant in the scores: scikit-learn returns Python floats, no gradient.
    got = fn(T(y), T(s, requires_grad=True))
    assert float(got) == pytest.approx(_numpys(fn, y, s), rel=1e-14)


@pytest.mark.skipif(LIBRARY != "array_api_strict", reason="array-api-strict's refusal")
def test_roc_curve_on_array_api_strict_refuses_scikit_learns_logical_or_of_floats(dispatch):
    with pytest.raises(TypeError, match="Only boolean dtypes are allowed in logical_or"):
        metrics.roc_curve(T(BINARY), T(SCORES))


# ----------------------------------------------------------------------------- sklearn's own check


def _name(metric, check):
    fn = metric.func if isinstance(metric, partial) else metric
    keywords = "".join(f"-{k}={v}" for k, v in getattr(metric, "keywords", {}).items())
    return f"{fn.__name__}{keywords}-{check.__name__.removeprefix('check_array_api_')}"


CHECKS = list(yield_metric_checker_combinations())


def test_scikit_learn_declares_array_api_support_for_the_usual_metrics():
    names = {_name(m, c).split("-")[0] for m, c in CHECKS}
    assert {"roc_curve", "log_loss", "r2_score", "rbf_kernel", "confusion_matrix"} <= names


@pytest.mark.skipif(BACKEND is not np, reason="the check makes NumPy-backed tensors")
@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize(("metric", "check"), CHECKS, ids=[_name(m, c) for m, c in CHECKS])
def test_sklearn_check_array_api_metric(metric, check, dtype):
    # Values against NumPy's, with and without sample weights, in chainrule's namespace.
    check(metric, "chainrule", None, dtype)


# ----------------------------------------------------------------------------- gradients

X = RNG.normal(size=(5, 3))
WEIGHTS = RNG.normal(size=25)

PAIRWISE = {
    "linear_kernel": lambda x: pairwise.linear_kernel(x, x + 0.5),
    "sigmoid_kernel": lambda x: pairwise.sigmoid_kernel(x, gamma=0.2),
    "additive_chi2_kernel": lambda x: pairwise.additive_chi2_kernel(x * x, x * x + 0.5),
    "cosine_distances": lambda x: pairwise.cosine_distances(x, x[:2] + 1.0),
    "manhattan_distances": lambda x: pairwise.manhattan_distances(x, x + 0.5),
    "paired_cosine_distances": lambda x: pairwise.paired_cosine_distances(x, x * x),
    "paired_euclidean_distances": lambda x: pairwise.paired_euclidean_distances(x, x * x),
    "paired_manhattan_distances": lambda x: pairwise.paired_manhattan_distances(x, x + 0.5),
    "pairwise_kernels rbf": lambda x: pairwise.pairwise_kernels(x, metric="rbf", gamma=0.3),
    "pairwise_distances cosine": lambda x: pairwise.pairwise_distances(x, x[:2], metric="cosine"),
}


@pytest.mark.parametrize("name", PAIRWISE)
def test_pairwise_metrics_differentiate(name, dispatch):
    fn = PAIRWISE[name]

    def weighted(x):
        out = fn(x)
        return cr.sum(out * T(WEIGHTS[: out.size].reshape(out.shape)))

    x = T(X, requires_grad=True)
    out = fn(x)
    assert out.__class__ is cr.Tensor and out.requires_grad
    np.testing.assert_allclose(N(out), _numpys(fn, X), rtol=1e-12, atol=1e-14)
    assert gradcheck(weighted, (x,))
    assert gradgradcheck(weighted, (x,))
