"""Third-party Array API code (array-api-extra, einops, opt_einsum, SciPy, scikit-learn) run
under chainrule's transforms (vmap, jacfwd, jacrev, hessian, jvp, vjp, grad and compositions),
forward-mode dual tensors and chainrule.compile: each answer against another path (the loop
over samples, the other mode, finite differences, the eager call) or numbers PyTorch 2.13
gave; where the library leaves the namespace, chainrule's clear error."""

import warnings

import array_api_extra as xpx
import numpy as np
import pytest
import scipy.stats as stats

import chainrule as cr
from chainrule import autograd, func
from conftest import N, T, fails_on

RNG = np.random.default_rng(5)
V = np.array([0.21, 0.35, 0.62, 0.48, 0.77])
A = RNG.normal(size=(5, 4))


def _piecewise(x):
    return xpx.apply_where(x > 0.5, x, lambda a: a**2, lambda a: -a)


def test_jacfwd_and_hessian_through_apply_wheres_masked_writes():
    # apply_where writes each branch through a mask; under jacfwd the mask (of the primal) is
    # one for every tangent, and setitem read it as one bool to see whether it covers the
    # whole array: vmap's data-dependent control flow error.
    jac = func.jacfwd(_piecewise)(T(V))
    hess = func.hessian(lambda x: cr.sum(_piecewise(x)))(T(V))
    slope = np.where(V > 0.5, 2 * V, -1.0)
    np.testing.assert_allclose(N(jac), np.diag(slope), rtol=1e-14)
    np.testing.assert_allclose(N(func.jacrev(_piecewise)(T(V))), np.diag(slope), rtol=1e-14)
    np.testing.assert_allclose(N(hess), np.diag(np.where(V > 0.5, 2.0, 0.0)))
    # Samples along the last axis, each with two elements above 0.5 (x[mask] of one shape)
    batch = np.stack([V, V + 0.01, V - 0.01], axis=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # per-sample masks: a loop over samples
        grads = func.vmap(func.grad(lambda x: cr.sum(_piecewise(x) ** 2)), in_dims=1)(T(batch))
    expected = [2 * np.where(b > 0.5, b**2, -b) * np.where(b > 0.5, 2 * b, -1.0) for b in batch.T]
    np.testing.assert_allclose(N(grads), np.stack(expected), rtol=1e-14)


def test_jacfwd_of_jacfwd_through_scipy_stats_tvar():
    # tvar scales its variance in place (var *= factor) by a factor apply_where computes from
    # counts: under jacfwd of jacfwd the count mask, one row for every sample, was gathered
    # sample by sample into n rows, and the in-place multiply then refused the value.
    def f(x):
        return cr.sum(stats.tvar(x, axis=0) ** 2)

    forward = func.jacfwd(func.jacfwd(f))(T(A))
    reverse = autograd.functional.hessian(f, T(A))
    np.testing.assert_allclose(N(forward), N(reverse), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(N(func.hessian(f)(T(A))), N(reverse), rtol=1e-12, atol=1e-14)


def _via_dlpack(t):
    """What code that leaves for NumPy by DLPack (scikit-learn's, for one) does."""
    return cr.asarray(np.from_dlpack(t)) * t


@fails_on("dask", reason="Dask arrays have no DLPack interface")
def test_values_leaving_by_dlpack_refuse_tangents_vmap_and_compiles_trace():
    # A tangent dropped silently: func.jvp gave a zero tangent (PyTorch's jvp raises).
    x = T([1.0, 2.0])
    with pytest.raises(RuntimeError, match="Can't export tensors that have a forward-mode"):
        func.jvp(_via_dlpack, (x,), (T([1.0, 1.0]),))
    with pytest.raises(RuntimeError, match="Can't export tensors that have a forward-mode"):
        func.jacfwd(_via_dlpack)(x)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):  # AttributeError
        func.vmap(_via_dlpack)(T([[1.0, 2.0]]))
    # compile's replay kept the first call's array: [2., 4.] for x = [2., 2.], not [4., 4.].
    compiled = cr.compile(_via_dlpack)
    with pytest.raises(cr.ConcretizationError, match="__dlpack__ was called"):
        compiled(x)
    # chainrule's own from_dlpack is recorded: made again from each call's values.
    own = cr.compile(lambda t: cr.from_dlpack(t) * t)
    for values in ([1.0, 2.0], [2.0, 2.0], [3.0, -1.0]):
        np.testing.assert_array_equal(N(own(T(values))), np.square(values))
    assert own.traces == 1
