"""np.linalg.qr on tensors takes NumPy's modes: 'reduced' and 'complete' give Q and R,
'r' gives R alone (it raised the standard's ValueError), differentiable; 'raw' (LAPACK's
Householder form) raises NotImplementedError."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck
from conftest import N

A = np.random.default_rng(4).standard_normal((4, 3))


def test_numpy_qr_mode_r_is_numpys_r_and_differentiates():
    r = np.linalg.qr(cr.asarray(A), mode="r")
    np.testing.assert_allclose(N(r), np.linalg.qr(A, mode="r"), atol=1e-12)
    x = cr.tensor(A, requires_grad=True)
    assert gradcheck(lambda a: np.linalg.qr(a, mode="r"), (x,))


@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_numpy_qr_modes_with_q_still_give_both(mode):
    q, r = np.linalg.qr(cr.asarray(A), mode=mode)
    np.testing.assert_allclose(N(q) @ N(r), A, atol=1e-12)
    assert N(q).shape == np.linalg.qr(A, mode=mode).Q.shape


def test_numpy_qr_raw_mode_is_not_implemented():
    with pytest.raises(NotImplementedError, match="mode='raw'"):
        np.linalg.qr(cr.asarray(A), mode="raw")
