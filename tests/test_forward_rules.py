"""Every rule's JVP, over the whole rule table: against finite differences, against its VJP
(<J v, u> == <v, J^T u>), and differentiated again (reverse over forward, forward over
reverse, forward over forward). Each rule has a sample here: a function that runs it, drawn
with Hypothesis (shapes, axes, values away from kinks)."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
import chainrule.linalg as LA
import chainrule.nn.functional as F
from chainrule._node import AccumulateGrad, node_of
from chainrule._rules import OPS, RULES
from chainrule.autograd import forward_ad as fwad
from chainrule.autograd import gradcheck, gradgradcheck
from chainrule.func import vmap
from conftest import LIBRARY, N, T, failing_on_dask
from helpers import (
    AWAY_FROM_ZERO,
    NONEMPTY,
    SHAPES,
    arrays,
    axes_for,
    broadcastable,
    floats,
    leaf,
)
from test_elementwise import BINARY, UNARY
from test_fft import TRANSFORMS
from test_linalg import (
    MATMUL_SHAPES,
    SOLVE_SHAPES,
    _sign_free,
    distinct_singular,
    entries,
    invertible,
    positive_definite,
    symmetric_distinct,
    symmetrized,
)
from test_manipulation import DASK_INDEX_ADD_LIMITS, INDEX_ADD_KEYS, along_axis, backend_key
from test_reductions import REDUCTIONS, SOFTMAXES
from test_special import SPECIAL_SAMPLES

# ----------------------------------------------------------------------------- samples
# SAMPLES[rule]: a strategy of (fn, arrays): fn of tensors, whose graph holds the rule.


def _params(fn, a):
    """The static parameters of the node fn records on a tensor of values a (to call an
    adjoint primitive, which no public function exposes, with its partner's parameters)."""
    return fn(leaf(a)).grad_fn.params


def _unary(name):
    fn, _, elements = UNARY[name]
    return st.builds(lambda a: (fn, [a]), SHAPES.flatmap(lambda s: arrays(s, elements)))


@st.composite
def _binary(draw, name):
    fn, _, x_elements, y_elements = BINARY[name]
    x_shape, y_shape = draw(broadcastable(2)).input_shapes
    return fn, [draw(arrays(x_shape, x_elements)), draw(arrays(y_shape, y_elements))]


@st.composite
def _reduction(draw, name):
    fn, _, values = REDUCTIONS[name]
    a = draw(values(draw(SHAPES)))
    axis, keepdims = draw(axes_for(a.ndim)), draw(st.booleans())
    return (lambda x: fn(x, axis=axis, keepdims=keepdims)), [a]


@st.composite
def _softmax(draw, name):
    a = draw(arrays(draw(NONEMPTY)))
    axis = draw(st.integers(-a.ndim, a.ndim - 1))
    return (lambda x: SOFTMAXES[name][0](x, axis=axis)), [a]


# Values of a cumulative product: zeros allowed, at most one (second derivatives are exact up
# to one zero in a slice).
CUMPROD_CHOICES = [-1.5, -0.75, 0.0, 0.5, 1.25, 2.0]
CUMPROD_VALUES = st.sampled_from(CUMPROD_CHOICES)


@st.composite
def _cumulative(draw, name):
    if name == "cumulative_prod":  # as many elements as distinct values at most
        shape = draw(NONEMPTY.filter(lambda s: math.prod(s) <= len(CUMPROD_CHOICES)))
        a = draw(hnp.arrays(np.float64, shape, elements=CUMPROD_VALUES, unique=True))
        fn = cr.cumulative_prod
    else:
        a, fn = draw(arrays(draw(NONEMPTY))), cr.cumulative_sum
    axis, initial = draw(st.integers(-a.ndim, a.ndim - 1)), draw(st.booleans())
    return (lambda x: fn(x, axis=axis, include_initial=initial)), [a]


@st.composite
def _matmul(draw):
    x_shape, y_shape = draw(st.one_of(*MATMUL_SHAPES.values()))
    return cr.matmul, [draw(arrays(x_shape)), draw(arrays(y_shape))]


@st.composite
def _shape_op(draw, name):
    a = draw(arrays(draw(NONEMPTY)))
    if name == "reshape":
        target = draw(st.sampled_from([(-1,), (-1, 1), (1, -1)]))
        return (lambda x: cr.reshape(x, target)), [a]
    if name == "permute_dims":
        axes = tuple(draw(st.permutations(range(a.ndim))))
        return (lambda x: cr.permute_dims(x, axes)), [a]
    if name == "broadcast_to":
        return (lambda x: cr.broadcast_to(x, (2,) + a.shape)), [a]
    if name == "flip":
        axis = draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
        return (lambda x: cr.flip(x, axis=axis)), [a]
    if name == "astype":  # to its own dtype, recorded: finite differences need float64
        return (lambda x: cr.astype(x, cr.float64)), [a]
    if name == "repeat":
        return (lambda x: cr.repeat(x, 2, axis=0)), [a]
    if name == "roll":
        shift = draw(st.integers(-3, 3))
        return (lambda x: cr.roll(x, shift, axis=-1)), [a]
    if name == "tile":
        return (lambda x: cr.tile(x, (2,) + (1,) * (a.ndim - 1))), [a]
    raise KeyError(name)


@st.composite
def _joined(draw, name):
    shape = draw(NONEMPTY)
    axis = draw(st.integers(-len(shape), len(shape) - 1))
    parts = [draw(arrays(shape)) for _ in range(draw(st.integers(1, 3)))]
    if name == "concat":
        return (lambda *xs: cr.concat(xs, axis=axis)), parts
    return (lambda *xs: cr.stack(xs, axis=axis)), parts


@st.composite
def _unstack(draw):
    a = draw(arrays(draw(NONEMPTY.filter(lambda s: max(s) > 1))))
    axis = draw(st.sampled_from([i for i, n in enumerate(a.shape) if n > 1]))
    return (lambda x: cr.unstack(x, axis=axis)), [a]


@st.composite
def _where(draw):
    c_shape, x_shape, y_shape = draw(broadcastable(3)).input_shapes
    c = T(draw(hnp.arrays(np.bool_, c_shape)))
    return (lambda x, y: cr.where(c, x, y)), [draw(arrays(x_shape)), draw(arrays(y_shape))]


@st.composite
def _setitem(draw):
    a = draw(arrays((3, 2)))
    v = draw(arrays(draw(st.sampled_from([(), (2,), (1, 2)]))))
    row = draw(st.integers(0, 2))

    def write(x, y):
        x = cr.asarray(x, copy=True)
        x[row] = y
        return x

    return write, [a, v]


@st.composite
def _indexing(draw, name):
    a = draw(arrays((2, 3)))
    # Not on Dask the keys it can't index with, or whose selection's size it can't know.
    limits = DASK_INDEX_ADD_LIMITS if LIBRARY == "dask" else {}
    key = INDEX_ADD_KEYS[draw(st.sampled_from(sorted(set(INDEX_ADD_KEYS) - set(limits))))]
    index = backend_key(key)
    if name == "getitem":
        return (lambda x: x[index]), [a]
    p = _params(lambda x: x[index], a)
    return (lambda t: OPS["index_add"](t, p)), [draw(arrays(a[key].shape))]


@st.composite
def _take(draw, name):
    a = draw(arrays(draw(NONEMPTY)))
    axis = draw(st.integers(0, a.ndim - 1))
    idx = T(draw(hnp.arrays(np.int64, (3,), elements=st.integers(0, a.shape[axis] - 1))))
    take = lambda x: cr.take(x, idx, axis=axis)  # noqa: E731
    if name == "take":
        return take, [a]
    p = _params(take, a)
    return (lambda t: OPS["take_add"](t, p)), [draw(arrays(take(T(a)).shape))]


@st.composite
def _along(draw, name):
    x_shape, indices, axis = draw(along_axis())
    idx = T(indices)
    take = lambda x: cr.take_along_axis(x, idx, axis=axis)  # noqa: E731
    a = draw(arrays(x_shape))
    if name == "take_along_axis":
        return take, [a]
    p = _params(take, a)
    return (lambda t: OPS["take_along_add"](t, p)), [draw(arrays(take(T(a)).shape))]


@st.composite
def _diagonal(draw, name):
    shape = draw(hnp.array_shapes(min_dims=2, max_dims=3, min_side=1, max_side=3))
    offset = draw(st.integers(-shape[-2], shape[-1]))
    diagonal = lambda x: LA.diagonal(x, offset=offset)  # noqa: E731
    a = draw(arrays(shape))
    if name == "linalg_diagonal":
        return diagonal, [a]
    p = _params(diagonal, a)
    return (lambda t: OPS["linalg_diagonal_embed"](t, p)), [draw(arrays(diagonal(T(a)).shape))]


@st.composite
def _solve(draw):
    shapes = [c for c in SOLVE_SHAPES.values() if LIBRARY != "dask" or c[:2] == ((), ())]
    a_batch, b_batch, k = draw(st.sampled_from(shapes))  # Dask solves 2-D systems only
    side = draw(st.integers(2, 3))
    a = draw(invertible(st.just(a_batch), st.just(side)))
    b = draw(entries(b_batch + (side,) + (() if k is None else (k,))))
    return LA.solve, [a, b]


@st.composite
def _solve_triangular(draw):
    # Either triangle, unit diagonal or not, on either side, batches broadcast (not on Dask).
    shapes = [c for c in SOLVE_SHAPES.values() if c[2] is not None]
    a_batch, b_batch, k = draw(st.sampled_from(shapes if LIBRARY != "dask" else shapes[:1]))
    side = draw(st.integers(2, 3))
    a = draw(invertible(st.just(a_batch), st.just(side)))
    kw = {"upper": draw(st.booleans()), "unitriangular": draw(st.booleans())}
    kw["left"] = draw(st.booleans())
    b = draw(entries(b_batch + ((side, k) if kw["left"] else (k, side))))
    return (lambda x, y: LA.solve_triangular(x, y, **kw)), [a, b]


SVD_SHAPES = [(3, 3), (3, 2), (2, 3)]


@st.composite
def _decomposition(draw, name):
    if name == "linalg_cholesky":
        return symmetrized(LA.cholesky), [draw(positive_definite())]
    if name == "linalg_eigh":

        def parts(x):
            w, v = LA.eigh(x)
            return w, _sign_free(v, -2)

        return symmetrized(parts), [draw(symmetric_distinct())]
    shape = draw(st.sampled_from(SVD_SHAPES))
    a = draw(distinct_singular(shape))
    if name == "linalg_qr":
        mode = draw(st.sampled_from(["reduced", "complete"])) if shape[0] <= shape[1] else "reduced"
        return (lambda x: tuple(LA.qr(x, mode=mode))), [a]
    if name == "linalg_svd":

        def parts(x):
            r = LA.svd(x, full_matrices=False)
            return _sign_free(r.U, -2), r.S, _sign_free(r.Vh, -1)

        return parts, [a]
    return LA.pinv, [a]


@st.composite
def _conv2d(draw):
    n, c, o = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 2)), draw(st.integers(1, 2))
    stride, padding = draw(st.integers(1, 2)), draw(st.integers(0, 1))
    h, w = (
        draw(st.integers(max(kh - 2 * padding, 1), 3)),
        draw(st.integers(max(kw - 2 * padding, 1), 3)),
    )
    conv = lambda x, k: F.conv2d(x, k, stride=stride, padding=padding)  # noqa: E731
    return conv, [draw(arrays((n, c, h, w))), draw(arrays((o, c, kh, kw)))]


@st.composite
def _vmapped(draw):
    a = draw(arrays(draw(NONEMPTY)))
    axis = draw(st.integers(0, a.ndim - 1))
    out = draw(st.integers(0, a.ndim - 1))
    return vmap(lambda v: v * cr.sin(v), in_dims=axis, out_dims=out), [a]


def _matrix(fn):
    return st.builds(lambda a: (fn, [a]), invertible())


# Complex values (tests/test_complex.py checks every rule on them; these are the rules that
# compute on nothing else, and the transforms).
COMPLEX = st.builds(lambda a, b: a + 1j * b, arrays((2, 3)), arrays((2, 3)))
AWAY_FROM_ORIGIN = st.builds(
    lambda a, b: a + 1j * b, arrays((2, 3)), arrays((2, 3), UNARY["abs"][2])
)


@st.composite
def _eig(draw):
    """eig of a real matrix with distinct eigenvalues (disjoint Gershgorin discs); the
    eigenvectors through a function of theirs free of their phase. The pairs are put in the
    order of their eigenvalues: LAPACK's order can change under a finite difference's step
    (diag(0, 4) gives 0 first, diag(0, 4) with eps below the diagonal 4 first). Entries
    below 1e-100 are made zeros: LAPACK's balancing of [[t, t], [t + eps, 4]] with t = 1e-190
    gives the eigenvector of t as [1, 0], where it is [1, -eps / 4] (the finite differences
    were wrong, not the derivative)."""
    n = draw(st.integers(1, 3))
    a = draw(entries((n, n)))
    a = np.where(np.abs(a) < 1e-100, 0.0, a) * 0.5 + np.diag([0.0, 4.0, 8.0][:n])

    def parts(x):
        w, v = LA.eig(x)
        order = cr.argsort(cr.real(w), axis=-1)
        w = cr.take_along_axis(w, order, axis=-1)
        v = cr.take_along_axis(v, cr.broadcast_to(order[..., None, :], v.shape), axis=-1)
        return w, v * cr.conj(v[..., :1, :])

    return parts, [a]


@st.composite
def _fft(draw, name=None):
    """A transform of chainrule.fft (drawn, or `name`), its arguments and norm drawn, on a
    3 x 4 input (complex or real for the complex-input transforms)."""
    if name is None:
        name = draw(st.sampled_from(sorted(TRANSFORMS)))
    complex_input, kwargs = TRANSFORMS[name]
    kw = dict(
        draw(st.sampled_from(kwargs)), norm=draw(st.sampled_from(["backward", "ortho", "forward"]))
    )
    a = draw(arrays((3, 4)))
    if complex_input and draw(st.booleans()):
        a = a + 1j * draw(arrays((3, 4)))
    fn = getattr(cr.fft, name)
    return (lambda x: fn(x, **kw)), [a]


SAMPLES = {
    **{name: _unary(name) for name in UNARY},
    "reciprocal": st.builds(
        lambda a: (cr.reciprocal, [a]), SHAPES.flatmap(lambda s: arrays(s, UNARY["abs"][2]))
    ),
    **{name: _binary(name) for name in BINARY},
    **{name: _reduction(name) for name in REDUCTIONS},
    **{name: _softmax(name) for name in SOFTMAXES},
    "cumulative_sum": _cumulative("cumulative_sum"),
    "cumulative_prod": _cumulative("cumulative_prod"),
    "matmul": _matmul(),
    "conv2d": _conv2d(),
    **{
        name: _shape_op(name)
        for name in ("reshape", "permute_dims", "broadcast_to", "flip", "astype")
        + ("repeat", "roll", "tile")
    },
    "concat": _joined("concat"),
    "stack": _joined("stack"),
    "unstack": _unstack(),
    "where": _where(),
    # The rule behind cr.bernoulli(p), its draw given: probabilities away from the draws.
    "bernoulli": st.just(
        (
            lambda p, u: OPS["bernoulli"](p, u),
            [np.array([0.2, 0.95, 0.7]), np.array([0.3, 0.9, 0.5])],
        )
    ),
    # binary_cross_entropy's rule: probabilities away from 0 and 1, targets in [0, 1].
    "binary_cross_entropy": SHAPES.flatmap(
        lambda s: st.tuples(arrays(s, st.floats(0.05, 0.95)), arrays(s, st.floats(0.0, 1.0)))
    ).map(lambda pt: (lambda p, t: F.binary_cross_entropy(p, t, reduction="none"), list(pt))),
    "setitem": _setitem(),
    "getitem": _indexing("getitem"),
    "index_add": _indexing("index_add"),
    "take": _take("take"),
    "take_add": _take("take_add"),
    "take_along_axis": _along("take_along_axis"),
    "take_along_add": _along("take_along_add"),
    "linalg_diagonal": _diagonal("linalg_diagonal"),
    "linalg_diagonal_embed": _diagonal("linalg_diagonal_embed"),
    "linalg_inv": _matrix(LA.inv),
    "linalg_det": _matrix(LA.det),
    # matrix_exp: the dominant diagonal scaled down, to 1-norms about 3 (squared once or so).
    "linalg_matrix_exp": st.builds(lambda a: (LA.matrix_exp, [a / a.shape[-1]]), invertible()),
    "linalg_slogdet": _matrix(lambda x: LA.slogdet(x).logabsdet),
    "linalg_solve": _solve(),
    "linalg_solve_triangular": _solve_triangular(),
    "real": st.builds(lambda a: (cr.real, [a]), COMPLEX),
    "imag": st.builds(lambda a: (cr.imag, [a]), COMPLEX),
    "conj": st.builds(lambda a: (cr.conj, [a]), COMPLEX),
    "angle": st.builds(lambda a: (cr.angle, [a]), AWAY_FROM_ORIGIN),
    "erf_series": st.builds(lambda a: (F.gelu, [a]), SHAPES.flatmap(arrays)),
    # softplus's threshold (beta x = 3) and elu's kink (0) kept clear of the differences.
    "softplus": st.builds(
        lambda a: (lambda x: F.softplus(x, beta=2.0, threshold=3.0), [a]),
        SHAPES.flatmap(lambda s: arrays(s, floats(-2.0, 1.4))),
    ),
    "elu": st.builds(
        lambda a: (lambda x: F.celu(x, 0.7), [a]),
        SHAPES.flatmap(lambda s: arrays(s, AWAY_FROM_ZERO)),
    ),
    "log_sigmoid": st.builds(
        lambda a: (F.logsigmoid, [a]), SHAPES.flatmap(lambda s: arrays(s, floats(-3.0, 3.0)))
    ),
    # y kept clear of log's singularity (xlog1py: log1p's)
    "xlogy": st.builds(
        lambda a, b: (cr.special.xlogy, [a, b]), arrays((2, 3)), arrays((3,), floats(0.2, 3.0))
    ),
    "xlog1py": st.builds(
        lambda a, b: (cr.special.xlog1py, [a, b]), arrays((2, 3)), arrays((3,), floats(-0.8, 3.0))
    ),
    "fft": _fft(),
    "linalg_eig": _eig(),
    "batch": _vmapped(),
    "unbatch": _vmapped(),
    **{
        name: _decomposition(name)
        for name in ("linalg_cholesky", "linalg_eigh", "linalg_qr", "linalg_svd", "linalg_pinv")
    },
    **SPECIAL_SAMPLES,
}


# The rules with a derivative (nondiff rules, comparisons and the like, have neither a VJP
# nor a JVP: their results carry no tangent, test_forward_ad checks).
# Rules whose derivative raises NotImplementedError (tests/test_special_riemann_zeta checks it).
REFUSED = {"riemann_zeta"}
DIFFERENTIABLE = sorted(n for n, rule in RULES.items() if rule.vjp is not None and n not in REFUSED)


def test_every_rule_has_a_forward_mode_sample():
    assert sorted(set(DIFFERENTIABLE) - set(SAMPLES)) == [], "rules without a JVP test"
    assert sorted(set(SAMPLES) - set(DIFFERENTIABLE)) == [], "JVP tests of rules that do not exist"


# ----------------------------------------------------------------------------- helpers


def _outputs(result) -> tuple:
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def _rules_recorded(outputs) -> set:
    """The names of the rules in the graph of `outputs`."""
    names, seen = set(), set()
    stack = [node_of(o._edge) for o in outputs if o._edge is not None]
    while stack:
        node = stack.pop()
        if id(node) in seen or node.__class__ is AccumulateGrad:
            continue
        seen.add(id(node))
        names.add(node.rule.name)
        stack.extend(node_of(e) for e in node.edges if e is not None)
    return names


def _random_like(rng, arrays):
    """Random values shaped like `arrays`, complex for complex ones."""
    out = []
    for a in arrays:
        v = rng.standard_normal(np.shape(a))
        out.append(v + 1j * rng.standard_normal(np.shape(a)) if np.iscomplexobj(a) else v)
    return out


def _jvp(fn, xs, vs):
    """(outputs, tangents) of fn at xs along vs, by forward mode (zeros where none)."""
    with fwad.dual_level():
        outs = _outputs(fn(*(fwad.make_dual(x, v) for x, v in zip(xs, vs))))
        pairs = [fwad.unpack_dual(o) for o in outs]
    return (
        [p.primal for p in pairs],
        [cr.zeros_like(p.primal) if p.tangent is None else p.tangent for p in pairs],
    )


def _dot(a, b) -> float:
    """Re<a, b>: the inner product for which the VJP of complex values is the adjoint of the
    JVP (PyTorch's convention)."""
    return float(np.sum(np.real(np.conj(N(a)) * N(b))))


def _draw(data, name):
    fn, values = data.draw(SAMPLES[name])
    return fn, values, np.random.default_rng(data.draw(st.integers(0, 2**16)))


# ----------------------------------------------------------------------------- the checks


@pytest.mark.parametrize("name", failing_on_dask(DIFFERENTIABLE))
@settings(max_examples=5)
@given(data=st.data())
def test_jvp_against_finite_differences_and_the_vjp(name, data):
    fn, values, rng = _draw(data, name)
    xs = [leaf(a) for a in values]
    assert name in _rules_recorded(_outputs(fn(*xs)))
    assert gradcheck(fn, xs, check_forward_ad=True, check_backward_ad=False)
    assert_jvp_matches_vjp(fn, values, rng)


def assert_jvp_matches_vjp(fn, values, rng):
    """<J v, u> == <v, J^T u> (Re<J v, u> == Re<v, J* u> for complex values) for random v, u:
    forward mode and reverse mode give the same derivative."""
    xs = [leaf(a) for a in values]
    vs = [T(v) for v in _random_like(rng, values)]
    outs, tangents = _jvp(fn, [T(a) for a in values], vs)
    us = [T(u) for u in _random_like(rng, [N(o) for o in outs])]
    grads = cr.autograd.grad(_outputs(fn(*xs)), xs, us, allow_unused=True)
    forward = sum(_dot(t, u) for t, u in zip(tangents, us))
    backward = sum(_dot(v, g) for v, g in zip(vs, grads) if g is not None)
    assert math.isclose(forward, backward, rel_tol=1e-9, abs_tol=1e-10)


@pytest.mark.parametrize("name", failing_on_dask(DIFFERENTIABLE))
@settings(max_examples=2)
@given(data=st.data())
def test_jvp_differentiates_again_in_both_modes(name, data):
    fn, values, rng = _draw(data, name)
    n = len(values)

    def tangents(*args):  # J(x) v as a function of x and v
        return tuple(_jvp(fn, args[:n], args[n:])[1])

    xs = [leaf(a) for a in values]
    vs = [leaf(v) for v in _random_like(rng, values)]
    # reverse over forward, and forward over forward (a JVP inside a JVP)
    assert gradcheck(tangents, xs + vs, check_forward_ad=True)
    # forward over reverse: the VJP's tangent
    assert gradgradcheck(fn, xs, check_fwd_over_rev=True, check_rev_over_rev=False)


@pytest.mark.parametrize("name", failing_on_dask(DIFFERENTIABLE))
@settings(max_examples=3)
@given(data=st.data())
def test_the_lean_path_of_dual_operations_gives_the_generic_paths_tangents(name, data):
    # One dual level and no other feature: operations take forward mode's lean path; anomaly
    # mode (another feature) sends them through the generic one.
    fn, values, rng = _draw(data, name)
    xs, vs = [T(a) for a in values], [T(v) for v in _random_like(rng, values)]
    _, lean = _jvp(fn, xs, vs)
    with cr.autograd.detect_anomaly():
        _, generic = _jvp(fn, xs, vs)
    for a, b in zip(lean, generic):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(N(a), N(b), rtol=1e-12, atol=0)
