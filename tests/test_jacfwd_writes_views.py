"""jacfwd of a function that writes into a tensor it made while a view of that tensor lives:
PyTorch gives the Jacobian; chainrule raises TypeError (the write would lift the tensor into
jacfwd's vmap level, which is done for a tensor alone but not yet for an alias group)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from conftest import N, T


@pytest.mark.xfail(
    strict=True,
    raises=TypeError,
    reason="a write of values with tangents into a constant with live views inside jacfwd "
    "does not lift the alias group into the vmap level yet",
)
def test_jacfwd_of_a_write_into_a_made_tensor_with_a_live_view():
    def g(x):
        t = cr.asarray([1.0, 2.0, 3.0], dtype=x.dtype) * 1.0
        v = t[:2]
        t += x
        return t * 1.0 + cr.sum(v)

    jac = func.jacfwd(g)(T([0.5, -1.0, 2.0]))
    np.testing.assert_allclose(N(jac), np.eye(3) + np.array([[1.0, 1.0, 0.0]] * 3))
