"""scikit-learn's Array API code paths on chainrule tensors (array_api_dispatch=True): its own
`check_array_api_input` estimator check for every estimator that declares Array API support,
then values against NumPy inputs and gradients (first and second order) against finite
differences for scalers, PCA, Ridge and ridge classifiers, LinearDiscriminantAnalysis, kernels
and distances, the predictions of fitted LogisticRegression, PoissonRegressor and
GaussianMixture models, LabelEncoder's sorted classes, and metrics; the clear refusals where
scikit-learn's code leaves the namespace."""

from functools import partial

import numpy as np
import pytest
import sklearn
from sklearn import metrics
from sklearn.covariance import MinCovDet
from sklearn.decomposition import PCA, FactorAnalysis
from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
from sklearn.feature_selection import VarianceThreshold
from sklearn.kernel_approximation import Nystroem
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import (
    LogisticRegression,
    PoissonRegressor,
    Ridge,
    RidgeClassifier,
    RidgeClassifierCV,
    RidgeCV,
)
from sklearn.metrics import pairwise
from sklearn.mixture import GaussianMixture
from sklearn.naive_bayes import GaussianNB
from sklearn.preprocessing import (
    KernelCenterer,
    LabelEncoder,
    MaxAbsScaler,
    MinMaxScaler,
    Normalizer,
    PolynomialFeatures,
    StandardScaler,
)
from sklearn.utils._tags import get_tags
from sklearn.utils._test_common.instance_generator import (
    _get_expected_failed_checks,
    _tested_estimators,
    _yield_instances_for_check,
)
from sklearn.utils.estimator_checks import check_array_api_input

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import BACKEND, N

# Third-party code turns NumPy arrays into tensors (xp.asarray), which stay NumPy-backed:
# with another backend under test they would meet tensors of that library.
pytestmark = pytest.mark.skipif(
    BACKEND is not np, reason="scikit-learn mixes NumPy-backed tensors into its computations"
)

RNG = np.random.default_rng(0)
X = RNG.normal(size=(12, 3))
Y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * RNG.normal(size=12)
LABELS = np.array([0, 1, 2] * 4)
WEIGHTS = RNG.normal(size=(12, 12))


@pytest.fixture
def dispatch():
    """scikit-learn's Array API dispatch on (its own checks switch it on where they need it)."""
    with sklearn.config_context(array_api_dispatch=True):
        yield


# ----------------------------------------------------------------------------- sklearn's own check


def _array_api_estimators():
    """The estimators of scikit-learn's common tests that declare Array API support and take
    2-D input (as those tests choose them), each with the parameters its tests use."""
    check = partial(check_array_api_input, array_namespace="chainrule")
    found = []
    for estimator in _tested_estimators():
        tags = get_tags(estimator)
        if tags.array_api_support and tags.input_tags.two_d_array and not tags._skip_test:
            found.extend(_yield_instances_for_check(check, estimator))
    return found


ESTIMATORS = _array_api_estimators()


def _name(estimator):
    return type(estimator).__name__ + "".join(
        f"-{k}={v}" for k, v in sorted(estimator.get_params(deep=False).items())
        if k in ("solver", "svd_solver", "whiten", "method", "estimator")
    )  # fmt: skip


def test_scikit_learn_declares_array_api_support_for_the_usual_estimators():
    names = {type(e).__name__ for e in ESTIMATORS}
    assert {"StandardScaler", "MinMaxScaler", "PCA", "Ridge", "LinearDiscriminantAnalysis"} <= names


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_name)
def test_sklearn_check_array_api_input(estimator, dtype):
    # Attributes and method outputs in chainrule's namespace, of the right shapes and dtypes.
    check_array_api_input(type(estimator).__name__, estimator, "chainrule", dtype_name=dtype)


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("estimator", ESTIMATORS, ids=_name)
def test_sklearn_check_array_api_input_values(estimator):
    if "check_array_api_input" in _get_expected_failed_checks(estimator):
        pytest.skip("scikit-learn expects this estimator's values check to fail on any namespace")
    check_array_api_input(
        type(estimator).__name__, estimator, "chainrule", dtype_name="float64", check_values=True
    )


# ----------------------------------------------------------------------------- gradients


def weighted(fn):
    """sum(fn(x) * W): a scalar whose gradient weighs every output element differently."""

    def scalar(x):
        out = fn(x)
        w = WEIGHTS.ravel()[: out.size].reshape(out.shape)
        return cr.sum(out * cr.asarray(w))

    return scalar


def labels():
    return cr.asarray(LABELS)


ESTIMATOR_FUNCTIONS = {
    "StandardScaler": lambda x: StandardScaler().fit(x).transform(x),
    "StandardScaler.partial_fit": (
        lambda x: StandardScaler().partial_fit(x[:5]).partial_fit(x[5:]).transform(x)
    ),
    "StandardScaler.inverse_transform": (
        lambda x: StandardScaler().fit(x).inverse_transform(x * 0.5)
    ),
    "MinMaxScaler": lambda x: MinMaxScaler().fit_transform(x),
    "MaxAbsScaler": lambda x: MaxAbsScaler().fit_transform(x),
    "Normalizer": lambda x: Normalizer().fit_transform(x),
    "KernelCenterer": lambda x: KernelCenterer().fit_transform(x @ x.T),
    "PolynomialFeatures": lambda x: PolynomialFeatures(2).fit_transform(x),
    # Principal axes are defined up to sign: squares and transformed squares are not.
    "PCA.fit_transform": lambda x: PCA(n_components=2).fit_transform(x) ** 2,
    "PCA.components_": lambda x: PCA(n_components=2).fit(x).components_ ** 2,
    "PCA.explained_variance_": lambda x: PCA(n_components=2).fit(x).explained_variance_,
    "PCA whiten": lambda x: PCA(n_components=2, whiten=True).fit_transform(x) ** 2,
    "Ridge.coef_": lambda x: Ridge(alpha=0.5).fit(x, cr.asarray(Y)).coef_,
    "Ridge.predict": lambda x: Ridge(alpha=0.5).fit(x, cr.asarray(Y)).predict(x),
    "Ridge in y": lambda x: Ridge(alpha=0.5).fit(cr.asarray(X), x[:, 0]).coef_,
    "RidgeCV.coef_": lambda x: RidgeCV(alphas=(0.1, 1.0)).fit(x, cr.asarray(Y)).coef_,
    "RidgeClassifier": lambda x: RidgeClassifier(alpha=0.5).fit(x, labels()).decision_function(x),
    "RidgeClassifierCV": (
        lambda x: RidgeClassifierCV(alphas=(0.1, 1.0)).fit(x, labels()).decision_function(x)
    ),
    "Binarizer": lambda x: sklearn.preprocessing.Binarizer(threshold=0.1).fit_transform(x * x),
    "LinearDiscriminantAnalysis.predict_proba": (
        lambda x: LinearDiscriminantAnalysis().fit(x, labels()).predict_proba(x)
    ),
    "LinearDiscriminantAnalysis.transform": (
        lambda x: LinearDiscriminantAnalysis().fit(x, labels()).transform(x) ** 2
    ),
    "GaussianNB.predict_proba": lambda x: GaussianNB().fit(x, labels()).predict_proba(x),
    "Nystroem": lambda x: Nystroem(n_components=5, random_state=0).fit_transform(x),
    "euclidean_distances": lambda x: pairwise.euclidean_distances(x, x[:4] + 1.0),
    "rbf_kernel": lambda x: pairwise.rbf_kernel(x, gamma=0.3),
    "cosine_similarity": lambda x: pairwise.cosine_similarity(x),
    "polynomial_kernel": lambda x: pairwise.polynomial_kernel(x, degree=2),
    "laplacian_kernel": lambda x: pairwise.laplacian_kernel(x, x + 0.5),
    "chi2_kernel": lambda x: pairwise.chi2_kernel(x * x, x * x + 0.5),
    "pairwise_distances manhattan": (
        lambda x: pairwise.pairwise_distances(x, x + 0.5, metric="manhattan")
    ),
    # Through NumPy's nanpercentile / interp, nanvar, fill_diagonal on tensors.
    "QuantileTransformer": (  # part of x: its second derivatives are slow to check
        lambda x: sklearn.preprocessing.QuantileTransformer(n_quantiles=4).fit_transform(x[:6, :2])
    ),
    "VarianceThreshold": lambda x: VarianceThreshold(0.5).fit_transform(x),
    "nan_euclidean_distances": lambda x: pairwise.nan_euclidean_distances(x[:6], x[:2] + 0.5),
    "normalize": lambda x: sklearn.preprocessing.normalize(x),
    "minmax_scale": lambda x: sklearn.preprocessing.minmax_scale(x),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", ESTIMATOR_FUNCTIONS)
def test_sklearn_values_match_numpy_and_gradients_match_finite_differences(name, dispatch):
    fn = ESTIMATOR_FUNCTIONS[name]
    x = cr.tensor(X, requires_grad=True)
    out = fn(x)
    assert out.__class__ is cr.Tensor and out.requires_grad
    with sklearn.config_context(array_api_dispatch=False):
        expected = np.asarray(fn(X))
    np.testing.assert_allclose(N(out), expected, rtol=1e-10, atol=1e-12)
    assert gradcheck(weighted(fn), (x,))
    assert gradgradcheck(weighted(fn), (x,))


# Models fitted once (iterative solvers: refitting at every finite difference is slow), on
# tensors and on NumPy arrays; their predictions differentiate in the data predicted.
FITTED = {
    "LogisticRegression.predict_proba": (
        lambda: LogisticRegression(),
        (X, LABELS),
        "predict_proba",
    ),
    "LogisticRegression.decision_function": (
        lambda: LogisticRegression(C=0.5),
        (X, LABELS),
        "decision_function",
    ),
    "PoissonRegressor.predict": (lambda: PoissonRegressor(), (X, np.abs(Y)), "predict"),
    "GaussianMixture.score_samples": (
        lambda: GaussianMixture(2, init_params="random_from_data", random_state=0),
        (X,),
        "score_samples",
    ),
    "GaussianMixture.predict_proba": (
        lambda: GaussianMixture(2, init_params="random_from_data", random_state=0),
        (X,),
        "predict_proba",
    ),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", FITTED)
def test_fitted_models_predictions_match_numpy_and_differentiate(name, dispatch):
    make, data, method = FITTED[name]
    on_tensors = getattr(make().fit(*map(cr.asarray, data)), method)
    with sklearn.config_context(array_api_dispatch=False):
        expected = getattr(make().fit(*data), method)(X)
    x = cr.tensor(X, requires_grad=True)
    out = on_tensors(x)
    assert out.__class__ is cr.Tensor and out.requires_grad
    np.testing.assert_allclose(N(out), expected, rtol=1e-6, atol=1e-9)  # solvers' tolerances
    assert gradcheck(weighted(on_tensors), (x,))
    assert gradgradcheck(weighted(on_tensors), (x,))


def test_fits_by_scipys_optimizers_refuse_data_that_requires_grad(dispatch):
    # scikit-learn hands the data to SciPy's L-BFGS, which takes NumPy arrays (by DLPack):
    # PyTorch's refusal, rather than a fit cut from the graph.
    x = cr.tensor(X, requires_grad=True)
    for model, y in ((LogisticRegression(), LABELS), (PoissonRegressor(), np.abs(Y))):
        with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
            model.fit(x, cr.asarray(y))


def test_gaussian_mixture_fit_on_data_that_requires_grad_fails_as_on_pytorch(dispatch):
    # Its M step divides by the component weights, then writes them in place: PyTorch's
    # tensors fail the same way. Its default k-means initialisation is refused by
    # scikit-learn under Array API dispatch.
    model = GaussianMixture(2, init_params="random_from_data", random_state=0, max_iter=2)
    x = cr.tensor(X, requires_grad=True)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        cr.sum(model.fit(x).means_).backward()
    with pytest.raises(NotImplementedError, match="init_params"):
        GaussianMixture(2).fit(cr.asarray(X))


def test_standard_scaler_fit_overwrites_nan_without_nan_gradients(dispatch):
    # _incremental_mean_and_var computes 0/0 on a first fit, then overwrites the whole
    # result by item assignment: the NaN it held must not reach the gradient.
    x = cr.tensor(X, requires_grad=True)
    cr.sum(StandardScaler().fit(x).scale_).backward()
    assert np.all(np.isfinite(N(x.grad)))


# ----------------------------------------------------------------------------- labels and metrics


def test_label_encoder_classes_are_sorted_and_round_trip(dispatch):
    y = cr.asarray([30, 10, 20, 10, 30, 40])
    encoder = LabelEncoder().fit(y)
    np.testing.assert_array_equal(N(encoder.classes_), [10, 20, 30, 40])
    codes = encoder.transform(y)
    np.testing.assert_array_equal(N(codes), [2, 0, 1, 0, 2, 3])
    np.testing.assert_array_equal(N(encoder.inverse_transform(codes)), N(y))


def test_classifiers_predict_the_classes_numpy_predicts(dispatch):
    # Unsorted unique values scrambled the classes of these estimators.
    y = np.array([7, 3, 5] * 4)
    for estimator in (LinearDiscriminantAnalysis(), GaussianNB()):
        got = estimator.fit(cr.asarray(X), cr.asarray(y)).predict(cr.asarray(X))
        with sklearn.config_context(array_api_dispatch=False):
            expected = estimator.fit(X, y).predict(X)
        np.testing.assert_array_equal(N(got), expected)


METRICS = {
    "r2_score": lambda t, p: metrics.r2_score(t, p),
    "mean_squared_error": lambda t, p: metrics.mean_squared_error(t, p),
    "mean_absolute_error": lambda t, p: metrics.mean_absolute_error(t, p),
    "explained_variance_score": lambda t, p: metrics.explained_variance_score(t, p),
    "mean_tweedie_deviance": lambda t, p: metrics.mean_tweedie_deviance(
        t * t + 1, p * p + 1, power=1.5
    ),
}


@pytest.mark.parametrize("name", METRICS)
def test_regression_metrics_match_numpy(name, dispatch):
    fn = METRICS[name]
    predicted = Y + 0.3 * RNG.normal(size=Y.shape)
    got = fn(cr.asarray(Y), cr.asarray(predicted))
    with sklearn.config_context(array_api_dispatch=False):
        expected = fn(Y, predicted)
    # scikit-learn returns metrics as Python floats.
    assert got.__class__ is float and got == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize("name", METRICS)
def test_regression_metrics_of_predictions_that_require_grad_are_floats_of_numpys_value(
    name, dispatch
):
    # scikit-learn ends a metric with float(...): the value, without the graph (as PyTorch's
    # float(t)). multioutput="raw_values" keeps the tensor (below).
    fn = METRICS[name]
    predicted = Y + 0.3 * RNG.normal(size=Y.shape)
    got = fn(cr.asarray(Y), cr.tensor(predicted, requires_grad=True))
    with sklearn.config_context(array_api_dispatch=False):
        expected = fn(Y, predicted)
    assert got.__class__ is float and got == pytest.approx(expected, rel=1e-12)


TARGETS = X[:, :2] + 2.0  # positive, for the logarithmic and percentage errors
PER_OUTPUT = {
    name: partial(getattr(metrics, name), multioutput="raw_values")
    for name in (
        "mean_squared_error", "root_mean_squared_error", "mean_absolute_error", "r2_score",
        "explained_variance_score", "mean_squared_log_error", "mean_absolute_percentage_error",
        "mean_pinball_loss", "d2_absolute_error_score", "d2_pinball_score",
    )
}  # fmt: skip


@pytest.mark.parametrize("name", PER_OUTPUT)
def test_regression_metrics_per_output_differentiate(name, dispatch):
    # multioutput="raw_values": the metric of each output, computed in the namespace, is the
    # tensor returned; its gradient in the predictions against finite differences.
    fn = PER_OUTPUT[name]
    predicted = TARGETS + 0.3 * RNG.normal(size=TARGETS.shape)
    x = cr.tensor(predicted, requires_grad=True)
    out = fn(cr.asarray(TARGETS), x)
    assert out.__class__ is cr.Tensor and out.requires_grad
    with sklearn.config_context(array_api_dispatch=False):
        expected = fn(TARGETS, predicted)
    np.testing.assert_allclose(N(out), expected, rtol=1e-12)
    assert gradcheck(lambda p: fn(cr.asarray(TARGETS), p), (x,))
    assert gradgradcheck(lambda p: fn(cr.asarray(TARGETS), p), (x,))


def test_median_absolute_error_refuses_predictions_that_require_grad(dispatch):
    # scikit-learn moves the values to NumPy by DLPack (chainrule has no median of the
    # standard's), which a tensor that requires grad refuses as PyTorch's does.
    with pytest.raises(RuntimeError, match="Can't export tensors that require gradient"):
        metrics.median_absolute_error(cr.asarray(Y), cr.tensor(Y + 0.1, requires_grad=True))
    got = metrics.median_absolute_error(cr.asarray(Y), cr.asarray(Y + 0.1))
    assert got == pytest.approx(0.1, rel=1e-12)


def test_hinge_loss_clips_its_losses_in_place(dispatch):
    # np.clip(losses, 0, None, out=losses): a NumPy function's out= on a tensor.
    y = np.array([1, -1, 1, 1, -1, -1, 1])
    decision = RNG.normal(size=7)
    got = metrics.hinge_loss(cr.asarray(y), cr.tensor(decision, requires_grad=True))
    with sklearn.config_context(array_api_dispatch=False):
        assert got == pytest.approx(metrics.hinge_loss(y, decision), rel=1e-12)


def test_classification_metrics_match_numpy(dispatch):
    y_true = np.array([0, 1, 2, 2, 1, 0, 1])
    y_pred = np.array([0, 2, 2, 2, 1, 0, 0])
    proba = cr.softmax(cr.asarray(RNG.normal(size=(7, 3))), axis=1)
    for fn in (metrics.accuracy_score, partial(metrics.f1_score, average="macro")):
        got = fn(cr.asarray(y_true), cr.asarray(y_pred))
        with sklearn.config_context(array_api_dispatch=False):
            assert got == pytest.approx(fn(y_true, y_pred), rel=1e-12)
    got = metrics.log_loss(cr.asarray(y_true), proba)
    with sklearn.config_context(array_api_dispatch=False):
        assert got == pytest.approx(metrics.log_loss(y_true, N(proba)), rel=1e-12)


def test_ranking_metrics_match_numpy(dispatch):
    # dcg sums tied scores with np.add.at into a NumPy array.
    scores = RNG.uniform(size=(8, 3))
    relevance = RNG.uniform(size=(8, 3))
    for fn in (metrics.ndcg_score, metrics.dcg_score):
        got = fn(cr.asarray(relevance), cr.asarray(scores))
        with sklearn.config_context(array_api_dispatch=False):
            assert got == pytest.approx(fn(relevance, scores), rel=1e-12)


def test_numpy_only_functions_refuse_tensors_that_require_grad(dispatch):
    # scale() converts with np.asarray: a clear error, not a result cut from the graph.
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        sklearn.preprocessing.scale(cr.tensor(X, requires_grad=True))
    np.testing.assert_allclose(
        sklearn.preprocessing.scale(cr.tensor(X)), sklearn.preprocessing.scale(X)
    )


# ----------------------------------------------------------------------------- NumPy-only paths
# Estimators whose code calls NumPy and SciPy's compiled functions on the tensors (scikit-learn
# declares no Array API support for them): NumPy's protocols run them on tensors that need no
# grad; a tensor that requires grad is refused where compiled code would take its values.


@pytest.mark.parametrize("params", [{"alpha": 0.5}, {"alpha": 0.5, "kernel": "rbf", "gamma": 0.3}])
def test_kernel_ridge_on_tensors_predicts_what_numpy_predicts(params, dispatch):
    # It writes its kernel's diagonal through K.flat[:: n + 1] += alpha.
    got = KernelRidge(**params).fit(cr.asarray(X), cr.asarray(Y)).predict(cr.asarray(X))
    with sklearn.config_context(array_api_dispatch=False):
        expected = KernelRidge(**params).fit(X, Y).predict(X)
    assert got.__class__ is cr.Tensor
    np.testing.assert_allclose(N(got), expected, rtol=1e-10, atol=1e-12)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        KernelRidge(**params).fit(cr.tensor(X, requires_grad=True), cr.asarray(Y))


NUMPY_VALUES = {
    "RobustScaler": lambda x: sklearn.preprocessing.RobustScaler().fit_transform(x),
    "FactorAnalysis": lambda x: FactorAnalysis(2, random_state=0).fit(x).components_ ** 2,
    "MinCovDet": lambda x: MinCovDet(random_state=0).fit(x).covariance_,
    # np.percentile(method="averaged_inverted_cdf"), its default quantile method.
    "KBinsDiscretizer": (
        lambda x: sklearn.preprocessing.KBinsDiscretizer(3, encode="ordinal").fit_transform(x)
    ),
}


@pytest.mark.filterwarnings("ignore")
@pytest.mark.parametrize("name", NUMPY_VALUES)
def test_numpy_code_paths_give_numpys_values_on_tensors(name, dispatch):
    # NumPy's nanmedian / nanpercentile, ravel(order=), argpartition on tensors; SciPy's
    # compiled linear algebra then refuses a tensor that requires grad.
    fn = NUMPY_VALUES[name]
    got = fn(cr.asarray(X))
    with sklearn.config_context(array_api_dispatch=False):
        expected = fn(X)
    np.testing.assert_allclose(N(cr.asarray(got)), expected, rtol=1e-9, atol=1e-12)


def test_cython_code_refuses_tensors_with_cythons_error(dispatch):
    # Estimators without declared Array API support that hand the data to compiled
    # functions of several array types (Cython's fused types): Cython finds no type for a
    # tensor. Pass NumPy arrays (t.numpy()) to them.
    y = cr.asarray(LABELS[:, None])
    with pytest.raises(TypeError, match="Function call with ambiguous argument types"):
        sklearn.preprocessing.TargetEncoder().fit_transform(y, cr.asarray(Y))


@pytest.mark.parametrize("solver", ["eigen", "lsqr"])
def test_linear_discriminant_analysis_numpy_solvers_fail_clearly(solver, dispatch):
    # Their `cov += tensor` on a NumPy array (ufunc out=) takes the values of a tensor that
    # needs no grad; then SciPy refuses to mix that NumPy array with tensors in one call.
    lda = LinearDiscriminantAnalysis(solver=solver)
    with pytest.raises(TypeError, match="Multiple namespaces for array inputs"):
        lda.fit(cr.asarray(X), labels())
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        lda.fit(cr.tensor(X, requires_grad=True), labels())
