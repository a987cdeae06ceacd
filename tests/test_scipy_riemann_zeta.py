"""scipy.special.zeta on tensors without q is Riemann's zeta, which SciPy continues below 1
(zeta(0.5) = -1.4603545); chainrule computes Hurwitz's zeta(x, 1), NaN there."""

import numpy as np
import pytest
import scipy.special

import chainrule as cr
from conftest import BACKEND, N

pytestmark = pytest.mark.skipif(BACKEND is not np, reason="SciPy's functions on NumPy tensors")


def test_scipy_zeta_above_one_is_riemanns():
    x = np.array([1.5, 2.0, 4.0])
    np.testing.assert_allclose(N(scipy.special.zeta(cr.asarray(x))), scipy.special.zeta(x))


@pytest.mark.xfail(
    strict=True,
    reason="chainrule.special.zeta(x) is Hurwitz's zeta(x, 1) (PyTorch's), NaN below 1: "
    "Riemann's continuation needs a kernel of its own (torch.special has none)",
)
def test_scipy_zeta_below_one_is_riemanns_continuation():
    x = np.array([0.5, -1.0])
    np.testing.assert_allclose(N(scipy.special.zeta(cr.asarray(x))), scipy.special.zeta(x))
