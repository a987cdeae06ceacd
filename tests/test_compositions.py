"""The composition matrix: every transform pair and the triples users write (grad, jacrev,
jacfwd, hessian, vmap, jvp, vjp, compile) over one function of each rule family, each result
against an independent oracle: a loop over samples, central differences in float64, or the
same transform computed another way."""

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from conftest import N, T
from helpers import leaf

RNG = np.random.default_rng(18)
X = RNG.uniform(-1.0, 1.0, 6)  # one input: every family function maps (6,) -> (k,)
XS = RNG.uniform(-1.0, 1.0, (3, 6))  # a batch of three samples
XSS = RNG.uniform(-1.0, 1.0, (2, 2, 6))  # a batch of batches
V = RNG.uniform(-1.0, 1.0, 6)  # a tangent
VS = RNG.uniform(-1.0, 1.0, (3, 6))

# ----------------------------------------------------------------------------- families


def elementwise(x):
    y = cr.sin(x) * cr.exp(0.3 * x) + x**3 / (1.0 + x * x) - cr.tanh(x) * cr.abs(x - 2.0)
    return y + cr.where(x > 0.2, x * x, 0.5)


def reductions(x):
    m = cr.reshape(x, (2, 3))
    return cr.concat(
        [
            cr.sum(m * m, axis=0),
            cr.prod(m + 2.0, axis=1),
            cr.max(m, axis=0),
            cr.mean(cr.exp(m), axis=1),
            cr.logsumexp(m, axis=1),
            cr.cumulative_sum(x, axis=0),
        ]
    )


def indexing(x):
    return cr.concat([x[1:4] * x[0], x[::-1] ** 2, x[cr.asarray([2, 0, 5])] * x[-1]])


def item_assignment(x):
    y = x * 1.0
    y[1:3] = x[:2] ** 2
    y[4] = cr.sin(x[5])
    return y * x


def inplace_into_constant(x):
    # issue 18, section 2: jacfwd of this raised "vmap: in-place mul is not possible"
    t = cr.asarray([0.5, -1.0, 2.0], dtype=x.dtype) * 1.0
    t *= cr.sin(x[3:])
    t[1:] += x[:2] ** 2
    return t * x[1:4]


def shape(x):
    m = cr.permute_dims(cr.reshape(x, (2, 3)), (1, 0))
    s = cr.stack([x[:3], x[3:]], axis=1)
    c = cr.asarray([3.0, 4.0], dtype=x.dtype)  # an operand without a tangent
    r = cr.flip(cr.expand_dims(x, axis=0), axis=1)[0]
    return cr.concat([cr.reshape(m * s, (-1,)), r, c]) * cr.concat([x, x, c])


def linalg(x):
    a = cr.reshape(x[:4], (2, 2)) + 2.0 * cr.eye(2, dtype=x.dtype)
    b = x[4:]
    return cr.concat(
        [cr.reshape(cr.linalg.inv(a), (-1,)), cr.linalg.solve(a, b), cr.matmul(a, b) * b]
    )


def fft(x):
    z = cr.fft.rfft(x * x)
    return cr.concat([cr.real(z), cr.imag(z), cr.fft.irfft(z * z, n=6)])


def complex_(x):
    # The first complex value of the program comes from a real leaf (issue 18, section 1).
    i = cr.asarray(1j, dtype=cr.complex128)
    z = cr.astype(x[:3], cr.complex128) + cr.astype(x[3:], cr.complex128) * i
    w = z * z * cr.exp(z) / (z + 3.0)
    return cr.concat([cr.real(w), cr.imag(w), cr.abs(z) ** 2])


FAMILIES = {
    "elementwise": elementwise,
    "reductions": reductions,
    "indexing": indexing,
    "item_assignment": item_assignment,
    "inplace_into_constant": inplace_into_constant,
    "shape": shape,
    "linalg": linalg,
    "fft": fft,
    "complex": complex_,
}


def scalar(f):
    """A real scalar function of x through family function f (for grad and hessian)."""
    return lambda x: cr.sum(cr.sin(f(x)))


# ----------------------------------------------------------------------------- oracles


def value(f, a):
    """f evaluated eagerly at NumPy array a, as a NumPy array."""
    return N(f(T(a)))


def num_jacobian(f, a, h=1e-6):
    """Central differences: d f / d a, of shape f(a).shape + a.shape."""
    cols = []
    for i in range(a.size):
        e = np.zeros(a.size)
        e[i] = h
        e = e.reshape(a.shape)
        cols.append((value(f, a + e) - value(f, a - e)) / (2 * h))
    out = np.stack(cols, axis=-1)
    return out.reshape(out.shape[:-1] + a.shape)


def num_hessian(f, a, h=1e-4):
    """Second-order central differences: d^2 f / da da, of shape f(a).shape + (n, n)."""
    n = a.size
    rows = []
    for i in range(n):
        for j in range(n):
            ei, ej = np.zeros(n), np.zeros(n)
            ei[i], ej[j] = h, h
            d = (
                value(f, a + ei + ej)
                - value(f, a + ei - ej)
                - value(f, a - ei + ej)
                + value(f, a - ei - ej)
            )
            rows.append(d / (4 * h * h))
    out = np.stack(rows, axis=-1)
    return out.reshape(out.shape[:-1] + (n, n))


def per_sample(f):
    """f applied to each sample of a batch in a Python loop, the results stacked."""
    return lambda xs: cr.stack([f(xs[i]) for i in range(xs.shape[0])])


def loop(oracle, arrays):
    """The oracle of each sample, stacked: what vmap must give."""
    return np.stack([oracle(*args) for args in zip(*arrays)])


FIRST = dict(rtol=1e-6, atol=1e-7)  # tolerance against first-order differences
SECOND = dict(rtol=1e-5, atol=1e-5)  # against second-order differences
EXACT = dict(rtol=1e-10, atol=1e-12)  # against the same transform computed another way


def compiled(fn):
    """fn compiled, called twice (a trace, then a replay) on the same arguments; both calls
    must agree. CompileWarning (a function run eagerly) is allowed."""
    c = cr.compile(fn)

    def call(*args):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", cr.CompileWarning)
            first = c(*args)
            second = c(*args)
        np.testing.assert_allclose(N(second), N(first), **EXACT)
        return second

    return call


# ----------------------------------------------------------------------------- compositions
# Each composition maps a family function f to (result tensor, expected array, tolerance).


def c_grad(f):
    g = scalar(f)
    return func.grad(g)(T(X)), num_jacobian(g, X), FIRST


def c_vjp(f):
    out, pullback = func.vjp(f, T(X))
    u = RNG_FIXED(out.shape)
    (got,) = pullback(T(u))
    return got, np.tensordot(u, num_jacobian(f, X), axes=u.ndim), FIRST


def c_jvp(f):
    _, tangent = func.jvp(f, (T(X),), (T(V),))
    return tangent, num_jacobian(f, X) @ V, FIRST


def c_jacrev(f):
    return func.jacrev(f)(T(X)), num_jacobian(f, X), FIRST


def c_jacfwd(f):
    return func.jacfwd(f)(T(X)), num_jacobian(f, X), FIRST


def c_hessian(f):
    g = scalar(f)
    return func.hessian(g)(T(X)), num_hessian(g, X), SECOND


def c_hessian_is_jacfwd_jacrev(f):
    g = scalar(f)
    return func.hessian(g)(T(X)), N(func.jacfwd(func.jacrev(g))(T(X))), EXACT


def c_jacrev_jacrev(f):
    return func.jacrev(func.jacrev(f))(T(X)), num_hessian(f, X), SECOND


def c_jacfwd_jacfwd(f):
    return func.jacfwd(func.jacfwd(f))(T(X)), num_hessian(f, X), SECOND


def c_jacrev_jacfwd(f):
    g = scalar(f)
    return func.jacrev(func.jacfwd(g))(T(X)), num_hessian(g, X), SECOND


def c_jvp_grad(f):
    # forward over reverse: the Hessian-vector product
    g = scalar(f)
    _, hv = func.jvp(func.grad(g), (T(X),), (T(V),))
    return hv, num_hessian(g, X) @ V, SECOND


def c_vjp_grad(f):
    g = scalar(f)
    _, pullback = func.vjp(func.grad(g), T(X))
    (hv,) = pullback(T(V))
    return hv, V @ num_hessian(g, X), SECOND


def c_grad_jvp(f):
    # reverse over forward
    g = scalar(f)
    got = func.grad(lambda x: func.jvp(g, (x,), (T(V),))[1])(T(X))
    return got, num_hessian(g, X) @ V, SECOND


def c_grad_grad(f):
    # grad of a function of grad: d/dx sum(grad g(x) * v)
    g = scalar(f)
    got = func.grad(lambda x: cr.sum(func.grad(g)(x) * T(V)))(T(X))
    return got, num_hessian(g, X) @ V, SECOND


def c_vmap(f):
    return func.vmap(f)(T(XS)), loop(lambda a: value(f, a), [XS]), EXACT


def c_vmap_vmap(f):
    got = func.vmap(func.vmap(f))(T(XSS))
    expected = np.stack([loop(lambda a: value(f, a), [xs]) for xs in XSS])
    return got, expected, EXACT


def c_vmap_grad(f):
    g = scalar(f)
    return func.vmap(func.grad(g))(T(XS)), loop(lambda a: num_jacobian(g, a), [XS]), FIRST


def c_vmap_vmap_grad(f):
    g = scalar(f)
    got = func.vmap(func.vmap(func.grad(g)))(T(XSS))
    expected = np.stack([loop(lambda a: num_jacobian(g, a), [xs]) for xs in XSS])
    return got, expected, FIRST


def c_vmap_jacrev(f):
    return func.vmap(func.jacrev(f))(T(XS)), loop(lambda a: num_jacobian(f, a), [XS]), FIRST


def c_vmap_jacfwd(f):
    return func.vmap(func.jacfwd(f))(T(XS)), loop(lambda a: num_jacobian(f, a), [XS]), FIRST


def c_vmap_hessian(f):
    g = scalar(f)
    return func.vmap(func.hessian(g))(T(XS)), loop(lambda a: num_hessian(g, a), [XS]), SECOND


def c_vmap_jacfwd_jacrev(f):
    g = scalar(f)
    got = func.vmap(func.jacfwd(func.jacrev(g)))(T(XS))
    return got, loop(lambda a: num_hessian(g, a), [XS]), SECOND


def c_vmap_jvp(f):
    got = func.vmap(lambda x, v: func.jvp(f, (x,), (v,))[1])(T(XS), T(VS))
    return got, loop(lambda a, v: num_jacobian(f, a) @ v, [XS, VS]), FIRST


def c_vmap_vjp(f):
    us = RNG_FIXED((3,) + value(f, X).shape)
    got = func.vmap(lambda x, u: func.vjp(f, x)[1](u)[0])(T(XS), T(us))
    return got, loop(lambda a, u: u @ num_jacobian(f, a), [XS, us]), FIRST


def c_jacrev_vmap(f):
    got = func.jacrev(func.vmap(f))(T(XS))
    return got, num_jacobian(per_sample(f), XS), FIRST


def c_jacfwd_vmap(f):
    got = func.jacfwd(func.vmap(f))(T(XS))
    return got, num_jacobian(per_sample(f), XS), FIRST


def c_grad_vmap(f):
    g = scalar(f)
    got = func.grad(lambda xs: cr.sum(func.vmap(g)(xs)))(T(XS))
    return got, loop(lambda a: num_jacobian(g, a), [XS]), FIRST


def c_compile(f):
    return compiled(f)(T(X)), value(f, X), EXACT


def c_compile_grad(f):
    g = scalar(f)
    return compiled(func.grad(g))(T(X)), num_jacobian(g, X), FIRST


def c_grad_compile(f):
    g = scalar(f)
    c = cr.compile(g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cr.CompileWarning)
        c(T(X))  # the trace; the gradient below goes through the replay
        got = func.grad(c)(T(X))
    return got, num_jacobian(g, X), FIRST


def c_backward_compile(f):
    g = scalar(f)
    c = cr.compile(g)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cr.CompileWarning)
        c(leaf(X))
        x = leaf(X)
        c(x).backward()
    return x.grad, num_jacobian(g, X), FIRST


def c_compile_jvp(f):
    got = compiled(lambda x: func.jvp(f, (x,), (T(V),))[1])(T(X))
    return got, num_jacobian(f, X) @ V, FIRST


def c_compile_jacrev(f):
    return compiled(func.jacrev(f))(T(X)), num_jacobian(f, X), FIRST


def c_compile_hessian(f):
    g = scalar(f)
    return compiled(func.hessian(g))(T(X)), num_hessian(g, X), SECOND


def c_compile_vmap(f):
    return compiled(func.vmap(f))(T(XS)), loop(lambda a: value(f, a), [XS]), EXACT


def c_compile_vmap_grad(f):
    g = scalar(f)
    got = compiled(func.vmap(func.grad(g)))(T(XS))
    return got, loop(lambda a: num_jacobian(g, a), [XS]), FIRST


def RNG_FIXED(shape):
    """A cotangent of this shape, the same whatever ran before (seeded by the shape)."""
    return np.random.default_rng(sum(shape) + 7 * len(shape)).uniform(-1.0, 1.0, shape)


COMPOSITIONS = {
    name[2:]: fn for name, fn in list(globals().items()) if name.startswith("c_") and callable(fn)
}


def cases():
    for family in FAMILIES:
        for comp in COMPOSITIONS:
            if family == "inplace_into_constant" and "vmap" in comp:
                # vmap over x writes a per-sample value into an unbatched constant: the
                # documented RuntimeError, as in torch.func (tests/test_vmap.py checks it)
                continue
            yield pytest.param(family, comp, id=f"{family}-{comp}")


@pytest.mark.parametrize("family, composition", list(cases()))
def test_composition_matches_its_oracle(family, composition):
    got, expected, tolerance = COMPOSITIONS[composition](FAMILIES[family])
    assert N(got).shape == expected.shape
    np.testing.assert_allclose(N(got), expected, **tolerance)
