"""scipy.special.zeta on tensors without q is Riemann's zeta, which SciPy continues below 1
(zeta(0.5) = -1.4603545), as chainrule.special.zeta(x) does (Hurwitz's zeta(x, 1) is NaN
there)."""

import numpy as np
import pytest
import scipy.special

import chainrule as cr
from conftest import BACKEND, N

pytestmark = pytest.mark.skipif(BACKEND is not np, reason="SciPy's functions on NumPy tensors")


def test_scipy_zeta_above_one_is_riemanns():
    x = np.array([1.5, 2.0, 4.0])
    np.testing.assert_allclose(N(scipy.special.zeta(cr.asarray(x))), scipy.special.zeta(x))


def test_scipy_zeta_below_one_is_riemanns_continuation():
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(N(scipy.special.zeta(cr.asarray(x))), scipy.special.zeta(x))
