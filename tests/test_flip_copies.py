"""flip returns new memory, as PyTorch's (the Array API lets it be either): a write into the
result leaves the input alone, so code written for the Array API that writes into a flipped
array (scikit-learn's PCA with svd_solver="covariance_eigh") neither changes the input nor
invalidates what the input's history saved."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import DASK_LINALG, LIBRARY, N, T, fails_on
from helpers import leaf


@pytest.mark.parametrize(
    "flip",
    [
        lambda t: cr.flip(t, axis=0),
        lambda t: t.flip(0),
        lambda t: np.flip(t, axis=0),
        np.flipud,
        np.fliplr,
    ],
    ids=["cr.flip", "Tensor.flip", "np.flip", "np.flipud", "np.fliplr"],
)
def test_a_write_into_a_flipped_tensor_leaves_its_input_alone(flip):
    x = T(np.arange(6.0).reshape(2, 3))
    f = flip(x)
    f[0, 0] = 100.0
    np.testing.assert_array_equal(N(x), np.arange(6.0).reshape(2, 3))
    assert f[0, 0] == 100.0


@fails_on("dask", reason=DASK_LINALG)
def test_a_write_into_the_flip_of_a_saved_output_keeps_its_gradient():
    # scikit-learn's covariance_eigh: eigenvalues flipped to descending order, then those
    # below zero set to zero in place; eigh saved its outputs for its backward.
    def fn(c):
        c = (c + c.mT) / 2
        w = cr.flip(cr.linalg.eigvalsh(c), axis=0)
        w[w < 0.0] = 0.0
        return w

    c = leaf([[2.0, 1.0, 0.0], [1.0, 3.0, 0.5], [0.0, 0.5, -1.0]])
    np.testing.assert_allclose(N(fn(c)), [3.6, 1.4, 0.0], atol=0.1)
    assert gradcheck(fn, (c,))
    assert gradgradcheck(fn, (c,))


def test_flip_gradient_is_the_flipped_cotangent():
    x = leaf(np.arange(6.0).reshape(2, 3))
    assert gradcheck(lambda t: cr.flip(t, axis=1), (x,), check_forward_ad=True)
    assert gradgradcheck(lambda t: cr.flip(t), (x,))


@pytest.mark.skipif(LIBRARY != "numpy", reason="scikit-learn's array API run on NumPy storage")
def test_sklearn_pca_covariance_eigh_on_tensors_gives_numpys_values_and_a_gradient():
    sklearn = pytest.importorskip("sklearn")
    decomposition = pytest.importorskip("sklearn.decomposition")
    X = np.random.default_rng(0).normal(size=(12, 3))
    expected = decomposition.PCA(2, svd_solver="covariance_eigh").fit_transform(X)
    with sklearn.config_context(array_api_dispatch=True):
        Y = decomposition.PCA(2, svd_solver="covariance_eigh").fit_transform(T(X))
        np.testing.assert_allclose(N(Y), expected, rtol=1e-10, atol=1e-12)

        def fn(x):
            pca = decomposition.PCA(2, svd_solver="covariance_eigh")
            return pca.fit_transform(x)[:, 0] ** 2  # the square: free of the sign choice

        assert gradcheck(fn, (leaf(X),))
