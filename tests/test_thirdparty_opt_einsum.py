"""opt_einsum on chainrule tensors: `opt_einsum.contract` finds chainrule as the tensors'
backend and calls its `tensordot`, `einsum` and NumPy-style `x.transpose(axes)` (the last two
were missing: contract raised); values against NumPy's, gradients (first and second order)
against finite differences."""

import numpy as np
import pytest

from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T

oe = pytest.importorskip("opt_einsum")

RNG = np.random.default_rng(5)
A, B, C = RNG.normal(size=(3, 4)), RNG.normal(size=(4, 5)), RNG.normal(size=(5, 3))
D = RNG.normal(size=(2, 3, 4))

CASES = {
    "matmul": ("ij,jk->ik", (A, B)),
    "chain": ("ij,jk,kl->il", (A, B, C)),
    "trace of a product": ("ij,jk,ki->", (A, B, C)),
    "row dots": ("ij,ij->i", (A, A)),
    "diagonal": ("ii->i", (A[:, :3],)),
    "batched": ("abc,cd->abd", (D, B)),
    "implicit output": ("ij,jk", (A, B)),
}


@pytest.mark.parametrize("name", CASES)
def test_opt_einsum_contract_matches_numpy_and_differentiates(name):
    equation, arrays = CASES[name]
    xs = tuple(T(a, requires_grad=True) for a in arrays)
    out = oe.contract(equation, *xs)
    np.testing.assert_allclose(N(out), oe.contract(equation, *arrays), rtol=1e-12, atol=1e-13)
    assert gradcheck(lambda *z: oe.contract(equation, *z), xs)
    assert gradgradcheck(lambda *z: oe.contract(equation, *z), xs)
