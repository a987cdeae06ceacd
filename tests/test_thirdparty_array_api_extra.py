"""array-api-extra's functions on chainrule tensors (it finds chainrule through
`__array_namespace__`): values against NumPy inputs, gradients (first and second order)
against finite differences; `at` updates, set functions and index helpers."""

import math

import array_api_extra as xpx
import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T, fails_on

RNG = np.random.default_rng(3)
V = np.array([0.21, 0.35, 0.62, 0.48, 0.77, 0.88])
A = RNG.uniform(0.2, 0.9, size=(3, 4))
WITH_NAN = A.copy()
WITH_NAN[0, 1] = WITH_NAN[2, 3] = math.nan

# On Dask: array-api-extra selects by boolean masks, and unique values, whose sizes are unknown
# until computed (nunique and union1d compute them: they pass).
DASK_MASKS = "a Dask selection by a boolean mask has a size unknown until computed"
DASK_UNIQUE = "Dask's unique values have a size unknown until computed"
DASK_FAILS = {
    "apply_where": DASK_MASKS,
    "apply_where fill_value": DASK_MASKS,
    "at add mask copy": DASK_MASKS,
    "isclose": DASK_MASKS,
    "setdiff1d": DASK_UNIQUE,
}


def marked(names):
    """`names` as pytest parameters, those in DASK_FAILS marked failing on Dask."""
    return [
        pytest.param(n, marks=fails_on("dask", reason=DASK_FAILS[n])) if n in DASK_FAILS else n
        for n in names
    ]


DIFFERENTIABLE = {
    "angle": (lambda x: xpx.angle(x), V),
    "apply_where": (lambda x: xpx.apply_where(x > 0.5, x, lambda a: a**2, lambda a: -a), V),
    "apply_where fill_value": (
        lambda x: xpx.apply_where(x > 0.5, (x, x), lambda a, b: a * b, fill_value=0.0),
        V,
    ),
    "atleast_nd": (lambda x: xpx.atleast_nd(x, ndim=3), V),
    "cov": (lambda x: xpx.cov(x), A),
    "create_diagonal": (lambda x: xpx.create_diagonal(x, offset=1), V),
    "deg2rad": (lambda x: xpx.deg2rad(x), V),
    "rad2deg": (lambda x: xpx.rad2deg(x), V),
    "kron": (lambda x: xpx.kron(x, x[:2, :2]), A),
    "nan_to_num": (lambda x: xpx.nan_to_num(cr.log(x - 0.5)), V),
    "nanmax": (lambda x: xpx.nanmax(x, axis=0), WITH_NAN),
    "nanmin": (lambda x: xpx.nanmin(x, axis=1), WITH_NAN),
    "nanmean": (lambda x: xpx.nanmean(x, axis=1), WITH_NAN),
    "nansum": (lambda x: xpx.nansum(x, axis=0), WITH_NAN),
    "pad": (lambda x: xpx.pad(x, 2, constant_values=0.5), A),
    "partition": (lambda x: xpx.partition(x, 2), V),
    "sinc": (lambda x: xpx.sinc(x), V),
    "at set copy": (lambda x: xpx.at(x)[1:3].set(0.0, copy=True), V),
    "at add mask copy": (lambda x: xpx.at(x)[x > 0.5].add(x[x > 0.5] * 2, copy=True), V),
    "at multiply": (lambda x: xpx.at(x * 1.0, (slice(None), 1)).multiply(x[:, 2]), A),
    "at min": (lambda x: xpx.at(x * 1.0)[1:].min(0.5), V),
    "at power": (lambda x: xpx.at(x * 1.0)[1:].power(x[:5]), V),
    "at divide copy": (lambda x: xpx.at(x, 2).divide(x[1], copy=True), V),
}


@pytest.mark.filterwarnings("ignore:invalid value")
@pytest.mark.parametrize("name", marked(DIFFERENTIABLE))
def test_array_api_extra_matches_numpy_and_differentiates(name):
    fn, a = DIFFERENTIABLE[name]
    x = T(a, requires_grad=True)
    out = fn(x)
    assert out.__class__ is cr.Tensor and out.requires_grad
    np.testing.assert_allclose(N(out), fn(a.copy()), rtol=1e-13, equal_nan=True)
    if name in ("nanmax", "nanmin", "nanmean", "nansum"):
        # Finite differences need finite values: differentiate where the data is.
        assert np.all(np.isfinite(N(cr.autograd.grad(cr.sum(out), x)[0])))
        return
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.regression
def test_a_power_written_through_a_view_then_written_back_differentiates():
    # at(y)[1:].power(e) runs `v = y[1:]; v **= e; y[1:] = v`. The power's node saves its
    # result; on JAX and Dask (no memory to write) y's view held that very array, so the
    # write back marked it stale: "modified by an inplace operation" (NumPy's got a copy).
    def fn(x):
        y = x * 1.0
        v = y[1:]
        v **= x[:5]
        y[1:] = v
        return y

    x = T(V, requires_grad=True)
    np.testing.assert_allclose(N(fn(x)), np.concatenate([V[:1], V[1:] ** V[:5]]), rtol=1e-14)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_at_on_a_leaf_that_requires_grad_needs_copy_as_in_pytorch():
    # With copy=None array-api-extra writes in place where it can: on a leaf that requires
    # grad that is PyTorch's in-place error; copy=True gives a new, differentiable result.
    x = T(V, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        xpx.at(x)[1].set(0.0)
    y = xpx.at(x)[1].set(0.0, copy=True)
    cr.sum(y * y).backward()
    np.testing.assert_allclose(N(x.grad), np.where(np.arange(6) == 1, 0.0, 2 * V))


NOT_DIFFERENTIABLE = {
    "isclose": lambda x: xpx.isclose(x, x + 1e-12),
    "isin": lambda x: xpx.isin(x, x[:2]),
    "nunique": lambda x: xpx.nunique(x),
    "argpartition": lambda x: cr.sort(x[xpx.argpartition(x, 2)][:3]),
    "setdiff1d": lambda x: xpx.setdiff1d(x, x[:2]),
    "union1d": lambda x: xpx.union1d(x[3:], x[:4]),
    "searchsorted": lambda x: xpx.searchsorted(x[:3], x[3:]),
    "one_hot": lambda x: xpx.one_hot(cr.astype(x * 3, cr.int64), 3),
}


@pytest.mark.parametrize("name", marked(NOT_DIFFERENTIABLE))
def test_array_api_extra_set_and_index_functions_match_numpy(name):
    fn = NOT_DIFFERENTIABLE[name]
    a = np.sort(V) if name == "searchsorted" else V
    got = fn(T(a))
    expected = {
        "isclose": lambda: np.isclose(a, a + 1e-12),
        "isin": lambda: np.isin(a, a[:2]),
        "nunique": lambda: np.unique(a).size,
        "argpartition": lambda: np.sort(a)[:3],
        "setdiff1d": lambda: np.setdiff1d(a, a[:2]),
        "union1d": lambda: np.union1d(a[3:], a[:4]),
        "searchsorted": lambda: np.searchsorted(a[:3], a[3:]),
        "one_hot": lambda: np.eye(3)[(a * 3).astype(int)],
    }[name]()
    np.testing.assert_allclose(N(cr.asarray(got)), expected)


def test_array_api_extra_creation_helpers_in_chainrules_namespace():
    rows, cols = xpx.tril_indices(3, xp=cr)
    np.testing.assert_array_equal(N(rows), np.tril_indices(3)[0])
    np.testing.assert_array_equal(N(cols), np.tril_indices(3)[1])
    i, j = xpx.unravel_index(cr.asarray([5, 7]), (3, 4))
    assert (N(i).tolist(), N(j).tolist()) == ([1, 1], [1, 3])
    assert xpx.default_dtype(cr) == cr.float64


def test_array_api_extra_index_helpers_in_chainrules_namespace():
    pairs = (
        (xpx.diag_indices(3, xp=cr), np.diag_indices(3)),
        (xpx.triu_indices(3, offset=1, m=4, xp=cr), np.triu_indices(3, 1, 4)),
    )
    for ours, numpys in pairs:
        assert [N(i).tolist() for i in ours] == [i.tolist() for i in numpys]


def test_lazy_apply_runs_numpy_code_on_the_tensors_and_differentiates():
    # lazy_apply hands the tensors themselves to the function for an eager namespace: NumPy's
    # functions on them dispatch to chainrule.
    def fn(x):
        return xpx.lazy_apply(lambda a: np.sin(a) * np.linalg.norm(a), x, shape=x.shape)

    x = cr.tensor(A, requires_grad=True)
    np.testing.assert_allclose(N(fn(x)), np.sin(A) * np.linalg.norm(A), rtol=1e-14)
    assert gradcheck(fn, (x,), check_forward_ad=True)
    assert gradgradcheck(fn, (x,))
    # as_numpy=True asks for NumPy arrays: a tensor that requires grad refuses the conversion.
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        xpx.lazy_apply(np.sin, x, shape=x.shape, dtype=x.dtype, as_numpy=True)
