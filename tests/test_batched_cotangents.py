"""Every rule's VJP under a batch of cotangents (grad with is_grads_batched, as jacrev and
vmap of a VJP run it) and its JVP under a batch of tangents (vmap of jvp): each against the
same derivative taken one row at a time, on the samples of tests/test_forward_rules.py."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule as cr
from chainrule.func import vmap
from conftest import DASK_LACKS, DASK_LINALG, N, T, fails_on
from helpers import leaf
from test_forward_rules import DIFFERENTIABLE, _draw, _jvp, _outputs, _random_like

EXACT = dict(rtol=1e-10, atol=1e-12)
# Dask's linalg takes 2-D arrays only: under vmap these rules meet a batch of matrices (some
# in one direction only, depending on the drawn sample: not strict).
DASK_2D = {"linalg_inv", "linalg_solve", "linalg_cholesky", "linalg_qr", "linalg_svd"}
DASK_REASON = f"{DASK_LINALG}, and takes 2-D arrays only"
NAMES = [
    pytest.param(n, marks=fails_on("dask", reason=DASK_REASON, strict=False))
    if n in DASK_2D | DASK_LACKS
    else n
    for n in DIFFERENTIABLE
]
K = 3  # rows in a batch


def _stacked(rows):
    """Tensors of the backend under test, each the stack of one position of every row."""
    return [T(np.stack(parts)) for parts in zip(*rows)]


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=3)
@given(data=st.data())
def test_a_batch_of_cotangents_gives_each_rows_vjp(name, data):
    fn, values, rng = _draw(data, name)
    xs = [leaf(a) for a in values]
    outs = [o for o in _outputs(fn(*xs)) if o.requires_grad]
    rows = [_random_like(rng, [N(o) for o in outs]) for _ in range(K)]
    got = cr.autograd.grad(
        outs, xs, _stacked(rows), is_grads_batched=True, allow_unused=True, retain_graph=True
    )
    for i, row in enumerate(rows):
        want = cr.autograd.grad(outs, xs, [T(u) for u in row], allow_unused=True, retain_graph=True)
        for g, w in zip(got, want):
            assert (g is None) == (w is None)
            if w is not None:
                np.testing.assert_allclose(N(g)[i], N(w), **EXACT)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=3)
@given(data=st.data())
def test_a_batch_of_tangents_gives_each_rows_jvp(name, data):
    fn, values, rng = _draw(data, name)
    xs = [T(a) for a in values]
    rows = [_random_like(rng, values) for _ in range(K)]
    got = vmap(lambda *vs: tuple(_jvp(fn, xs, list(vs))[1]))(*_stacked(rows))
    for i, row in enumerate(rows):
        want = _jvp(fn, xs, [T(v) for v in row])[1]
        for g, w in zip(got, want):
            np.testing.assert_allclose(N(g)[i], N(w), **EXACT)
