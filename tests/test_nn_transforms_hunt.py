"""Last stop's nn functions (pooling indices and unpooling, quantile's q, CTC loss, adaptive
log-softmax, embeddings, weight and spectral norm, cdist, xlogy) under the transforms: jvp,
jacfwd against jacrev, vmap against a loop over samples, Hessians; each test checks a value
against another path or numbers PyTorch 2.13 gave."""

import warnings

import numpy as np

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import func
from conftest import T


def _stack(tensors):
    return np.stack([t.numpy() for t in tensors])


def test_vmap_of_max_unpool_with_each_samples_indices():
    # Pooling's indices differ per sample: their range check read the batched indices as one
    # number (vmap's data-dependent control flow error) where PyTorch runs.
    rng = np.random.default_rng(0)
    for k, size in ((1, (1, 2, 4)), (2, (1, 4, 4)), (3, (1, 2, 4, 4))):
        pool, unpool = getattr(F, f"max_pool{k}d"), getattr(F, f"max_unpool{k}d")

        def f(z, pool=pool, unpool=unpool):
            return unpool(*pool(z, 2, return_indices=True), 2)

        batch = T(rng.standard_normal((3, *size)))
        loop = _stack([f(batch[i]) for i in range(3)])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the gather by per-sample indices is a loop
            np.testing.assert_array_equal(func.vmap(f)(batch).numpy(), loop)
        jac = func.jacfwd(f)(batch[0])
        np.testing.assert_array_equal(jac.numpy(), func.jacrev(f)(batch[0]).numpy())


def test_vmap_and_jacfwd_over_quantiles_q():
    # A batched q met quantile's range check as one number (vmap's error) where PyTorch runs;
    # jacfwd over q is vmap's too.
    data = T([0.3, -1.2, 2.0, 0.7, 1.1])
    qs = T([[0.1, 0.5], [0.25, 0.9], [0.0, 1.0]])
    loop = _stack([cr.quantile(data, qs[i]) for i in range(3)])
    np.testing.assert_allclose(func.vmap(lambda q: cr.quantile(data, q))(qs).numpy(), loop)
    # d/dq of linear interpolation: (n - 1) times the slope between the ranks' neighbours
    # (sorted: -1.2, 0.3, 0.7, 1.1, 2.0; ranks 0.4 and 3.6).
    jac = func.jacfwd(lambda q: cr.quantile(data, q))(T([0.1, 0.9]))
    np.testing.assert_allclose(jac.numpy(), np.diag([4 * 1.5, 4 * 0.9]), rtol=1e-12)
    nan_jac = func.jacfwd(lambda q: cr.nanquantile(data, q))(T([0.1, 0.9]))
    np.testing.assert_allclose(nan_jac.numpy(), jac.numpy(), rtol=1e-12)
