"""Third-party Array API code (array-api-extra, einops, opt_einsum, SciPy, scikit-learn) run
under chainrule's transforms (vmap, jacfwd, jacrev, hessian, jvp, vjp, grad and compositions),
forward-mode dual tensors and chainrule.compile: each answer against another path (the loop
over samples, the other mode, finite differences, the eager call) or numbers PyTorch 2.13
gave; where the library leaves the namespace, chainrule's clear error."""

import warnings

import array_api_extra as xpx
import einops
import numpy as np
import opt_einsum
import pytest
import scipy.integrate as integrate
import scipy.ndimage as ndimage
import scipy.special as special
import scipy.stats as stats
import sklearn
from sklearn.metrics import pairwise
from sklearn.preprocessing import StandardScaler

import chainrule as cr
from chainrule import CompileWarning, autograd, func
from chainrule.autograd import forward_ad
from conftest import BACKEND, LIBRARY, N, T, fails_on, skip_on

V = np.array([0.21, 0.35, 0.62, 0.48, 0.77])
A = np.random.default_rng(5).normal(size=(5, 4))
# On Dask, selections by boolean masks (apply_where's, SciPy's) have sizes unknown until
# computed.
MASKS_ON_DASK = fails_on("dask", reason="selections by masks have sizes unknown until computed")
# Eager with a CompileWarning: tvar's masks (apply_where); on JAX and Dask, whose arrays are
# not written in place, the in-place multiply of a view.
# Thousands of small dispatches (nested transforms, finite differences): minutes on JAX.
SLOW_ON_JAX = skip_on("jax", reason="thousands of small dispatches: minutes on JAX")
EAGER = {"scipy.stats.tvar"} | ({"xpx.at multiply"} if LIBRARY in ("jax", "dask") else set())


def _stack(tensors):
    return np.stack([N(t) for t in tensors])


def _piecewise(x):
    return xpx.apply_where(x > 0.5, x, lambda a: a**2, lambda a: -a)


@MASKS_ON_DASK
@SLOW_ON_JAX
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


@MASKS_ON_DASK
@SLOW_ON_JAX
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


# Functions of one matrix; each is right under every transform below (values of the loop over
# samples, of the other mode, of finite differences, of the eager call).
SMOOTH = {
    "xpx.cov": lambda x: xpx.cov(x),
    "xpx.kron": lambda x: xpx.kron(x, x[:2, :2]),
    "xpx.sinc": lambda x: xpx.sinc(x),
    "xpx.atleast_nd": lambda x: xpx.atleast_nd(x, ndim=4) * x,
    "xpx.at multiply": lambda x: xpx.at(x * 1.0, (slice(None), 1)).multiply(x[:, 0]),
    "einops.rearrange": lambda x: einops.rearrange(x, "a b -> b a 1") ** 2,
    "einops.reduce max": lambda x: einops.reduce(x, "a b -> b", "max"),
    "einops.einsum": lambda x: einops.einsum(x, x, "a b, a c -> b c"),
    "opt_einsum.contract": lambda x: opt_einsum.contract("ij,kj,kl->il", x, x, x),
    "scipy.special.logsumexp": lambda x: special.logsumexp(x, axis=1),
    "scipy.stats.skew": lambda x: stats.skew(x, axis=0),
    "scipy.stats.tvar": lambda x: stats.tvar(x, axis=0),
    "scipy.integrate.cumulative_trapezoid": lambda x: integrate.cumulative_trapezoid(x, axis=1),
}


@SLOW_ON_JAX
@pytest.mark.filterwarnings("ignore:vmap")
@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=MASKS_ON_DASK)
        if n in ("scipy.special.logsumexp", "scipy.stats.tvar")
        else n
        for n in SMOOTH
    ],
)
def test_thirdparty_functions_under_every_transform(name):
    rng = np.random.default_rng(11)
    f = SMOOTH[name]
    a = rng.normal(size=(3, 4))
    x = T(a)
    jac = func.jacrev(f)(x)
    np.testing.assert_allclose(N(func.jacfwd(f)(x)), N(jac), rtol=1e-10, atol=1e-10)
    assert autograd.gradcheck(f, (T(a, requires_grad=True),))
    v = rng.normal(size=a.shape)
    out, tangent = func.jvp(f, (x,), (T(v),))
    np.testing.assert_allclose(N(out), N(f(x)), rtol=1e-13)
    by_jacobian = np.tensordot(N(jac), v, axes=2)
    np.testing.assert_allclose(N(tangent), by_jacobian, rtol=1e-10, atol=1e-12)
    with forward_ad.dual_level():
        dual = forward_ad.make_dual(x, T(v))
        np.testing.assert_allclose(N(forward_ad.unpack_dual(f(dual)).tangent), N(tangent))
    # Samples along the last axis; the gradient of a sum of squares per sample.
    batch = np.stack([a, 2 * a - 0.3, a[::-1]], axis=-1)
    loss = func.grad(lambda y: cr.sum(f(y) ** 2))
    batched = func.vmap(f, in_dims=-1)(T(batch))
    np.testing.assert_allclose(N(batched), _stack([f(T(batch[..., i])) for i in range(3)]))
    grads = func.vmap(loss, in_dims=-1, out_dims=-1)(T(batch))
    each = np.stack([N(loss(T(batch[..., i]))) for i in range(3)], axis=-1)
    np.testing.assert_allclose(N(grads), each, rtol=1e-12, atol=1e-14)

    # A compiled step, called with new values and a new shape: the eager answers.
    def step(y):
        out = f(y)
        cr.sum(out**2).backward()
        return out.detach()

    compiled = cr.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore" if name in EAGER else "error", CompileWarning)
        for b in (a, a + 1.0, rng.normal(size=(4, 3)), a * 0.5):
            y = T(b, requires_grad=True)
            np.testing.assert_allclose(N(compiled(y)), N(f(T(b))), rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(N(y.grad), N(loss(T(b))), rtol=1e-12, atol=1e-14)


@SLOW_ON_JAX
def test_hessians_of_thirdparty_code_agree_across_modes():
    # forward over reverse (func.hessian), reverse over reverse, forward over forward
    def f(x):
        return cr.sum(opt_einsum.contract("ij,kj->ik", x, x) ** 2) + cr.sum(stats.skew(x, axis=0))

    x = T(A)
    expected = N(autograd.functional.hessian(f, x))
    for hessian in (func.hessian, lambda g: func.jacrev(func.jacrev(g))):
        np.testing.assert_allclose(N(hessian(f)(x)), expected, rtol=1e-10, atol=1e-12)
    forward = func.jacfwd(func.jacfwd(f))(x)
    np.testing.assert_allclose(N(forward), expected, rtol=1e-10, atol=1e-12)


def test_complex_inputs_through_opt_einsum_and_kron_as_pytorch():
    rng = np.random.default_rng(12)
    # f(z) = z z^T is holomorphic: jvp is f'(z) v and, as PyTorch's, vjp the conjugate
    # derivative applied to u (u conj(z) + u^T conj(z)).
    z = rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))
    v = rng.normal(size=(2, 3)) + 1j * rng.normal(size=(2, 3))
    u = rng.normal(size=(2, 2)) + 1j * rng.normal(size=(2, 2))

    def f(w):
        return opt_einsum.contract("ij,kj->ik", w, w)

    _, tangent = func.jvp(f, (T(z),), (T(v),))
    np.testing.assert_allclose(N(tangent), v @ z.T + z @ v.T, rtol=1e-13)
    _, pull = func.vjp(f, T(z))
    np.testing.assert_allclose(N(pull(T(u))[0]), u @ z.conj() + u.T @ z.conj(), rtol=1e-13)
    # vmap over the first axis of z (in_dims=1 of its transpose) and of the kron's factor
    rows = func.vmap(lambda r, s: xpx.kron(r, s), in_dims=(1, 0))(T(z.T), T(v))
    np.testing.assert_allclose(N(rows), np.stack([np.kron(z[i], v[i]) for i in range(2)]))


@SLOW_ON_JAX
def test_thirdparty_code_leaving_the_namespace_or_branching_on_values_raises_clearly():
    # ndimage computes in NumPy (np.asarray of the tensor); hmean branches on the values (a
    # check for negative ones): each transform raises, rather than drop a derivative.
    def leaves(y):
        return ndimage.uniform_filter(y, 2)

    def branches(y):
        return stats.hmean(y * y + 1.0, axis=0)

    x = T(A)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that has a forward"):
        func.jvp(leaves, (x,), (x,))
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires grad"):
        func.grad(lambda y: cr.sum(leaves(y)))(x)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that has a forward"):
        func.jacfwd(leaves)(x)
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        func.jacfwd(branches)(x)
    for f in (leaves, branches):
        with pytest.raises(RuntimeError, match="data-dependent control flow"):
            func.vmap(f)(x)
        with pytest.raises(cr.ConcretizationError, match="while chainrule.compile traced"):
            cr.compile(f)(x)
    # Reverse mode runs through hmean's branch: d/dy of n / sum(1 / (y^2 + 1)).
    s = np.sum(1 / (A * A + 1), axis=0)
    expected = A.shape[0] * 2 * A / (A * A + 1) ** 2 / s**2
    np.testing.assert_allclose(N(func.grad(lambda y: cr.sum(branches(y)))(x)), expected)


@pytest.mark.skipif(BACKEND is not np, reason="scikit-learn mixes NumPy-backed tensors in")
@pytest.mark.filterwarnings("ignore:invalid value")  # a branch of where that is not taken
def test_scikit_learn_pipeline_under_jvp_and_jacrev_and_its_checks_under_vmap():
    rng = np.random.default_rng(13)
    # Scaling then an RBF kernel: jvp and jacrev against central differences of the NumPy
    # run; scikit-learn checks its input's values (finite), which vmap and compile refuse.
    x = rng.normal(size=(6, 3))
    v = rng.normal(size=x.shape)

    def f(a):
        return pairwise.rbf_kernel(StandardScaler().fit_transform(a), gamma=0.3)

    eps = 1e-6
    expected = (f(x + eps * v) - f(x - eps * v)) / (2 * eps)
    with sklearn.config_context(array_api_dispatch=True):
        _, tangent = func.jvp(f, (T(x),), (T(v),))
        jac = func.jacrev(f)(T(x))
        with pytest.raises(RuntimeError, match="data-dependent control flow"):
            func.vmap(f)(T(np.stack([x, x])))
        with pytest.raises(cr.ConcretizationError, match="while chainrule.compile traced"):
            cr.compile(f)(T(x))
    np.testing.assert_allclose(N(tangent), expected, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(np.tensordot(N(jac), v, axes=2), expected, rtol=1e-7, atol=1e-9)
