"""Inverses of integer (and bool) matrices, as NumPy computes them: in float64, never cut
back to integers (np.linalg.inv of an int32 matrix was int32 zeros); np.linalg.pinv of
integers no longer fails inside the library."""

import numpy as np
import pytest

import chainrule as cr
from conftest import DASK_LINALG, N, T, fails_on

NO_DASK_PINV = fails_on("dask", reason=DASK_LINALG)

M = np.array([[3, 1], [1, 2]], dtype=np.int32)
INVERSES = {
    "np.linalg.inv": lambda la, a: la.inv(a),
    "np.linalg.pinv": lambda la, a: la.pinv(a),
    "np.linalg.matrix_power -2": lambda la, a: la.matrix_power(a, -2),
    "np.linalg.tensorinv": lambda la, a: la.tensorinv(a, ind=1),
}


@pytest.mark.parametrize(
    "name",
    [pytest.param(n, marks=NO_DASK_PINV) if "pinv" in n else n for n in INVERSES],
)
def test_numpy_inverses_of_integer_matrices_are_numpys_float64_ones(name):
    fn = INVERSES[name]
    out, expected = fn(np.linalg, T(M)), fn(np.linalg, M)
    assert out.dtype == expected.dtype == np.float64
    np.testing.assert_allclose(N(out), expected, rtol=1e-12)


@pytest.mark.parametrize(
    "fn",
    [
        pytest.param(cr.linalg.inv, id="inv"),
        pytest.param(cr.linalg.pinv, marks=NO_DASK_PINV, id="pinv"),
    ],
)
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.bool_], ids=["int32", "int64", "bool"])
def test_chainrules_inv_and_pinv_of_integers_are_float64(fn, dtype):
    a = np.eye(2, dtype=dtype) if dtype is np.bool_ else M.astype(dtype)
    out = fn(T(a))
    assert out.dtype == cr.float64
    np.testing.assert_allclose(N(out), np.linalg.pinv(a.astype(np.float64)), rtol=1e-12)
