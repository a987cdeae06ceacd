"""scikit-learn's metrics on chainrule tensors (array_api_dispatch=True): the ranking curves and
areas, which call NumPy's forms of `diff` and `where`, values against NumPy inputs."""

import numpy as np
import pytest
import sklearn
from sklearn import metrics

import chainrule as cr
from conftest import BACKEND, N

pytestmark = pytest.mark.skipif(
    BACKEND is not np, reason="scikit-learn mixes NumPy-backed tensors into its computations"
)

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


@pytest.mark.regression
@pytest.mark.parametrize("drop_intermediate", [True, False])
def test_roc_curve_matches_numpy(drop_intermediate, dispatch):
    # It calls xp.diff(fps, 2) and xp.where(mask): both refused before.
    def fn(y, s):
        return metrics.roc_curve(y, s, drop_intermediate=drop_intermediate)

    got = fn(cr.asarray(BINARY), cr.asarray(SCORES))
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


@pytest.mark.parametrize("name", [*RANKING, *MULTICLASS])
def test_ranking_areas_match_numpy(name, dispatch):
    fn, y, s = (
        (RANKING[name], BINARY, SCORES) if name in RANKING else (MULTICLASS[name], CLASSES, PROBA)
    )
    # Piecewise constant in the scores: scikit-learn returns Python floats, no gradient.
    got = fn(cr.asarray(y), cr.tensor(s, requires_grad=True))
    assert float(got) == pytest.approx(_numpys(fn, y, s), rel=1e-14)
