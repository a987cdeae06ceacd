"""chainrule.special.zeta(x) without q is Riemann's zeta, continued below x = 1 as SciPy's
(Hurwitz's zeta(x, 1), which it computed before, is NaN there), on every backend; it has no
derivative in x (NotImplementedError in both modes, as zeta(x, q) in x)."""

import numpy as np
import pytest
import scipy.special as ss

import chainrule as cr
from chainrule import func
from chainrule.autograd import forward_ad
from conftest import N, T

# Its "gradient test": the derivative in x is refused (there is none to check).
GRADCHECKED = {"riemann_zeta"}
X = np.array([0.5, -1.0, -2.5, 0.0, 0.9, 1.5, 2.0, 10.0])


def test_zeta_without_q_is_riemanns_continued_below_one():
    np.testing.assert_allclose(N(cr.special.zeta(T(X))), ss.zeta(X), rtol=1e-14)


def test_zeta_with_q_stays_hurwitzs():
    np.testing.assert_allclose(N(cr.special.zeta(T(X), 2.0)), ss.zeta(X, 2.0), rtol=1e-14)


def test_zeta_without_q_of_float32_stays_float32():
    out = cr.special.zeta(T(X.astype(np.float32)))
    assert out.dtype == cr.float32
    np.testing.assert_allclose(N(out), ss.zeta(X), rtol=1e-6)


def test_zeta_without_q_under_vmap_is_per_sample():
    rows = X.reshape(2, 4)
    np.testing.assert_allclose(N(func.vmap(cr.special.zeta)(T(rows))), ss.zeta(rows), rtol=1e-14)


def test_zeta_without_q_has_no_derivative_in_x_in_reverse_mode():
    x = T(X, requires_grad=True)
    with pytest.raises(NotImplementedError, match="derivative of zeta in its argument x"):
        cr.sum(cr.special.zeta(x)).backward()


def test_zeta_without_q_has_no_derivative_in_x_in_forward_mode():
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(T(X), T(np.ones_like(X)))
        with pytest.raises(NotImplementedError, match="derivative of zeta in its argument x"):
            cr.special.zeta(dual)
