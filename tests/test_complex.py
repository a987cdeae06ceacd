"""Complex autograd, PyTorch's convention: the gradient of a real loss L by a complex z = x + iy
is dL/dx + i dL/dy. Every rule that takes complex values, drawn with Hypothesis on complex (and
mixed real and complex) inputs: first and second derivatives against finite differences over
real and imaginary parts, forward mode, and Re<J v, u> == Re<v, J* u>; the rules for real values
only raise; the convention on small programs, against values recorded from PyTorch."""

import json
import math
import pathlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
import chainrule.linalg as LA
from chainrule._rules import OPS, RULES
from chainrule.autograd import forward_ad as fwad
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import BACKEND, N, T, examples, failing_on_dask, skip_on
from helpers import SHAPES, arrays, assert_values, leaf
from test_fft import TRANSFORMS
from test_forward_rules import (
    SAMPLES,
    _fft,
    _outputs,
    _rules_recorded,
    assert_jvp_matches_vjp,
)
from test_linalg import positive_definite, symmetric_distinct
from test_special import GRADCHECKED as SPECIAL

FIXTURES = pathlib.Path(__file__).parent / "fixtures" / "complex_torch.json"

# The rules whose gradients meet complex values (Rule.complex), and the others.
COMPLEX_RULES = sorted(n for n, r in RULES.items() if r.vjp is not None and r.complex)
REAL_ONLY = sorted(n for n, r in RULES.items() if r.vjp is not None and not r.complex)


# ----------------------------------------------------------------------------- samples
# COMPLEX_SAMPLES[rule]: a strategy of (fn, arrays) as test_forward_rules' SAMPLES, with
# complex values: most are those samples with imaginary parts added.


def _imaginary(rng, shape, scale):
    """Imaginary parts of size 0.1 to 0.4 (times scale), either sign: never 0 (where angle,
    abs and sign are not smooth) nor near +-0.5 (where round jumps)."""
    size = rng.uniform(0.1, 0.4, shape) * rng.choice([-1.0, 1.0], shape)
    return scale * size


@st.composite
def _complexified(draw, name, mixed=False, scale=1.0):
    """SAMPLES[name] with imaginary parts added to its arrays (to some of them, if mixed)."""
    fn, values = draw(SAMPLES[name])
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    pick = [True] * len(values)
    if mixed and len(values) > 1:
        pick = [draw(st.booleans()) for _ in values]
        pick[draw(st.integers(0, len(values) - 1))] = True
    out = [
        a + 1j * _imaginary(rng, np.shape(a), scale) if p and np.asarray(a).dtype.kind == "f" else a
        for a, p in zip(values, pick)
    ]
    return fn, out


def _hermitian(x):
    return (x + cr.conj(cr.matrix_transpose(x))) / 2


def _phase_free(v, axis):
    """Each column (axis -2) or row (axis -1) of v times the conjugate of its first entry: the
    same for v and v e^(it), so defined although complex singular vectors and eigenvectors
    have a free phase."""
    first = v[..., :1, :] if axis == -2 else v[..., :, :1]
    return v * cr.conj(first)


@st.composite
def _hermitian_sample(draw, name):
    if name == "linalg_cholesky":
        a = draw(positive_definite())
        return (lambda x: LA.cholesky(_hermitian(x))), [a + 0.1j * _skew(draw, a)]

    def parts(x):
        w, v = LA.eigh(_hermitian(x))
        return w, _phase_free(v, -2)

    a = draw(symmetric_distinct())
    return parts, [a + 0.05j * _skew(draw, a)]


def _skew(draw, a):
    m = np.random.default_rng(draw(st.integers(0, 2**16))).uniform(-1, 1, a.shape)
    return m - np.swapaxes(m, -1, -2)


@st.composite
def _svd(draw):
    fn, (a,) = draw(_complexified("linalg_svd", scale=0.3))

    def parts(x):
        r = LA.svd(x, full_matrices=False)
        return _phase_free(r.U, -2), r.S, _phase_free(r.Vh, -1), r.U @ r.Vh

    return parts, [a]


@st.composite
def _adjoint(draw, name):
    """index_add, take_add, take_along_add and diagonal_embed with complex values: their
    parameters are those of their partner on a complex tensor."""
    partner = {
        "index_add": "getitem",
        "take_add": "take",
        "take_along_add": "take_along_axis",
        "linalg_diagonal_embed": "linalg_diagonal",
    }[name]
    pfn, (a,) = draw(_complexified(partner))
    p = pfn(leaf(a)).grad_fn.params
    shape = N(pfn(T(a))).shape
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    g = rng.uniform(-1, 1, shape) + 1j * _imaginary(rng, shape, 1.0)
    return (lambda t: OPS[name](t, p)), [g]


@st.composite
def _astype(draw):
    a = draw(arrays(draw(SHAPES)))
    if draw(st.booleans()):
        return (lambda x: cr.astype(x, cr.complex128)), [a]
    return (lambda x: cr.astype(x, cr.float64)), [a + 0.5j]


@st.composite
def _slogdet(draw):
    fn, (a,) = draw(_complexified("linalg_inv"))
    return (lambda x: tuple(LA.slogdet(x))), [a]


_ELEMENTWISE = (
    "abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "copy", "cos", "cosh", "exp",
    "expm1", "log", "log10", "log1p", "log2", "negative", "positive", "reciprocal", "round",
    "sigmoid", "sign", "sin", "sinh", "sqrt", "square", "tan", "tanh",
)  # fmt: skip
_LINEAR = (
    "broadcast_to", "concat", "cumulative_sum", "flip", "getitem", "linalg_diagonal", "mean",
    "permute_dims", "repeat", "reshape", "roll", "stack", "sum", "take", "take_along_axis",
    "tile", "unstack", "where",
)  # fmt: skip

COMPLEX_SAMPLES = {
    **{name: _complexified(name) for name in _ELEMENTWISE + _LINEAR},
    **{name: _complexified(name, mixed=True) for name in ("add", "subtract", "multiply")},
    **{name: _complexified(name, mixed=True) for name in ("divide", "pow", "matmul", "conv2d")},
    "prod": _complexified("prod"),
    **{name: _complexified(name) for name in ("logsumexp", "softmax", "log_softmax")},
    "cumulative_prod": _complexified("cumulative_prod"),
    **{name: SAMPLES[name] for name in ("real", "imag", "conj", "angle", "fft")},
    "astype": _astype(),
    "setitem": _complexified("setitem"),
    # vmap's boundary rules, through vmap of a holomorphic function of complex values
    **{
        name: st.builds(lambda s: (s[0], [s[1][0] * (1 + 0.5j)]), SAMPLES[name])
        for name in ("batch", "unbatch")
    },
    **{name: _adjoint(name) for name in ("index_add", "take_add", "take_along_add")},
    "linalg_diagonal_embed": _adjoint("linalg_diagonal_embed"),
    "linalg_inv": _complexified("linalg_inv"),
    "linalg_det": _complexified("linalg_det"),
    "linalg_matrix_exp": _complexified("linalg_matrix_exp"),
    "linalg_slogdet": _slogdet(),
    "linalg_solve": _complexified("linalg_solve", mixed=True),
    "linalg_solve_triangular": _complexified("linalg_solve_triangular", mixed=True),
    "linalg_pinv": _complexified("linalg_pinv", scale=0.3),
    "linalg_qr": _complexified("linalg_qr", scale=0.3),
    "linalg_svd": _svd(),
    "linalg_eig": _complexified("linalg_eig", scale=0.5),
    "linalg_cholesky": _hermitian_sample("linalg_cholesky"),
    "linalg_eigh": _hermitian_sample("linalg_eigh"),
}


def test_every_complex_rule_has_a_complex_sample():
    assert sorted(set(COMPLEX_RULES) - set(COMPLEX_SAMPLES)) == [], "complex rules untested"
    assert sorted(set(COMPLEX_SAMPLES) - set(COMPLEX_RULES)) == [], "samples of no complex rule"


# The rules whose gradients test_rule_table's check finds tested here (they compute on complex
# values only, or are the transforms).
GRADCHECKED = {"real", "imag", "conj", "angle", "fft", "linalg_eig"}


# ----------------------------------------------------------------------------- the checks


@pytest.mark.parametrize("name", failing_on_dask(COMPLEX_RULES))
@examples(4)
@given(data=st.data())
def test_complex_gradients_against_finite_differences(name, data):
    fn, values = data.draw(COMPLEX_SAMPLES[name])
    xs = [leaf(a) for a in values]
    outs = _outputs(fn(*xs))
    assert name in _rules_recorded(outs)
    assert any(o.dtype.kind == "c" for o in outs) or any(x.dtype.kind == "c" for x in xs)
    assert gradcheck(fn, xs, check_forward_ad=True)
    assert gradgradcheck(fn, xs, check_fwd_over_rev=True)


@pytest.mark.parametrize("name", failing_on_dask(COMPLEX_RULES))
@examples(4)
@given(data=st.data())
def test_complex_jvp_against_the_vjp(name, data):
    fn, values = data.draw(COMPLEX_SAMPLES[name])
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    assert_jvp_matches_vjp(fn, values, rng)


def _complex_array(shape):
    """Complex values with imaginary parts away from 0 (norms have kinks at 0)."""
    return st.builds(
        lambda a, seed: a + 1j * _imaginary(np.random.default_rng(seed), shape, 2.0),
        arrays(shape),
        st.integers(0, 2**16),
    )


# Functions built from the rules (checked through them, but checked here too as users meet
# them): name -> (function, input shapes).
COMPOSITES = {
    "vecdot": (lambda a, b: cr.vecdot(a, b), [(2, 3), (3,)]),
    "tensordot": (lambda a, b: cr.tensordot(a, b, axes=1), [(2, 3), (3, 2)]),
    "einsum": (lambda a, b: np.einsum("ij,kj->ik", a, b), [(2, 3), (2, 3)]),
    "outer": (LA.outer, [(2,), (3,)]),
    "cross": (LA.cross, [(3,), (2, 3)]),
    "trace": (LA.trace, [(3, 3)]),
    "matrix_power": (lambda a: LA.matrix_power(a, 3), [(2, 2)]),
    "var": (lambda a: cr.var(a, axis=0), [(3, 2)]),
    "std": (lambda a: cr.std(a), [(4,)]),
    "vector_norm": (LA.vector_norm, [(4,)]),
    "vector_norm_1": (lambda a: LA.vector_norm(a, ord=1, axis=0), [(3, 2)]),
    "vector_norm_3": (lambda a: LA.vector_norm(a, ord=3), [(4,)]),
    "vector_norm_inf": (lambda a: LA.vector_norm(a, ord=math.inf), [(4,)]),
    "matrix_norm_fro": (LA.matrix_norm, [(2, 3)]),
    "matrix_norm_1": (lambda a: LA.matrix_norm(a, ord=1), [(3, 3)]),
    "matrix_norm_nuc": (lambda a: LA.matrix_norm(a, ord="nuc"), [(2, 3)]),
    "matrix_norm_2": (lambda a: LA.matrix_norm(a, ord=2), [(3, 2)]),
    "svdvals": (LA.svdvals, [(3, 2)]),
    "eigvalsh": (lambda a: LA.eigvalsh(_hermitian(a)), [(3, 3)]),
    # distinct eigenvalues (in disjoint Gershgorin discs), whose order then holds
    "eigvals": (lambda a: LA.eigvals(a + T(np.diag([0.0, 6.0, 12.0]))), [(3, 3)]),
}


@pytest.mark.parametrize("name", failing_on_dask(sorted(COMPOSITES), {"eigvals", "eigvalsh"}))
@examples(3)
@given(data=st.data())
def test_composite_functions_differentiate_complex_values(name, data):
    fn, shapes = COMPOSITES[name]
    xs = [leaf(data.draw(_complex_array(s))) for s in shapes]
    if len(xs) == 2 and data.draw(st.booleans()):  # a real operand
        xs[1] = leaf(N(xs[1]).real)
    assert gradcheck(fn, xs, check_forward_ad=True)
    assert gradgradcheck(fn, xs)


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
@examples(3)
@given(data=st.data())
def test_every_transform_differentiates_in_every_norm(name, data):
    fn, values = data.draw(_fft(name))
    xs = [leaf(a) for a in values]
    assert gradcheck(fn, xs, check_forward_ad=True)
    assert gradgradcheck(fn, xs)


@skip_on(
    "array_api_strict",
    "torch",
    reason="no maximum, max or min of complex values",
)
def test_the_rules_for_real_values_only_raise_for_complex_ones():
    z = leaf(np.array([1 + 2j, -0.5 + 0.3j]))
    for fn in (
        lambda z: cr.maximum(z, z * 2),
        lambda z: cr.max(z),
        lambda z: cr.min(z),
    ):
        out = cr.sum(cr.abs(fn(z)))
        with pytest.raises(NotImplementedError, match="through complex values"):
            out.backward()
    with fwad.dual_level():
        d = fwad.make_dual(T(np.array([1 + 1j])), T(np.array([1 + 0j])))
        with pytest.raises(NotImplementedError, match="through complex values"):
            cr.maximum(d, d)


def test_every_rule_says_how_it_meets_complex_values():
    assert {r.complex for r in RULES.values() if r.vjp is not None} <= {None, "holomorphic", "own"}
    assert set(REAL_ONLY) == {
        "atan2", "bernoulli", "binary_cross_entropy", "ceil", "copysign", "elu", "erf_series",
        "floor", "floor_divide", "hypot", "logaddexp", "max", "maximum", "min", "minimum",
        "nextafter", "relu", "remainder", "riemann_zeta", "softplus", "trunc", "log_sigmoid",
        "xlogy", "xlog1py",
    } | SPECIAL  # fmt: skip


# ----------------------------------------------------------------------------- the convention


def test_the_gradient_of_a_real_loss_is_dl_dx_plus_i_dl_dy():
    z = leaf(np.array([1 + 2j, -3 + 0.5j]))
    cr.sum(cr.abs(z) ** 2).backward()  # |z|^2 = x^2 + y^2: gradient 2x + 2iy
    np.testing.assert_allclose(N(z.grad), [2 + 4j, -6 + 1j])
    assert z.grad.dtype == cr.complex128


def test_a_holomorphic_function_sends_back_g_times_the_conjugate_derivative():
    a = np.array([0.3 + 0.2j, -1.0 + 0.7j])
    z = leaf(a)
    g = np.array([1.5 - 0.5j, 0.25 + 2j])
    (gz,) = cr.autograd.grad(cr.sin(z), z, T(g))
    np.testing.assert_allclose(N(gz), g * np.conj(np.cos(a)))


def test_a_real_leaf_through_complex_intermediates_gets_a_real_gradient_of_its_dtype():
    x = leaf(np.array([0.5, -1.0, 2.0], dtype=np.float32))
    w = T(np.array([1 + 2j, 0.5j, -1 + 0j], dtype=np.complex64))
    loss = cr.sum(cr.abs(cr.fft.fft(x * w)) ** 2)
    loss.backward()
    assert x.grad.dtype == cr.float32
    y = x.detach().numpy().astype(np.float64) * np.array([1 + 2j, 0.5j, -1 + 0j])
    # sum |fft(y)|^2 = n sum |y|^2 (Parseval): gradient 2 n x |w|^2
    np.testing.assert_allclose(
        N(x.grad), 2 * 3 * N(x).astype(np.float64) * np.abs(N(w)) ** 2, rtol=1e-5
    )
    assert np.allclose(np.sum(np.abs(np.fft.fft(y)) ** 2), float(loss))


def test_a_real_tensor_times_a_python_complex_differentiates():
    x = leaf(np.array([1.0, -2.0, 0.5]))
    out = x * (1 + 2j)
    assert out.dtype == cr.complex128
    cr.sum(cr.abs(out)).backward()
    np.testing.assert_allclose(N(x.grad), np.sign(N(x)) * math.sqrt(5))
    assert x.grad.dtype == cr.float64
    x32 = leaf(np.array([3.0], dtype=np.float32))
    (g,) = cr.autograd.grad(cr.sum(cr.real((2j + x32) * 1j)), x32)
    assert g.dtype == cr.float32 and N(g)[0] == 0.0


def test_backward_of_a_complex_scalar_needs_an_explicit_gradient():
    z = leaf(np.array([1 + 2j]))
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar"):
        cr.sum(z * z).backward()
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real scalar"):
        cr.autograd.grad(cr.sum(z), z)
    cr.sum(z * z).backward(T(np.array(1.0 + 0j)))
    np.testing.assert_allclose(N(z.grad), [2 * (1 - 2j)])


def test_complex_leaves_require_grad_and_their_parts_differentiate():
    z = leaf(np.array([1 + 2j, -3 - 0.5j]))
    assert z.requires_grad and z.dtype == cr.complex128
    loss = cr.sum(cr.real(z) * 3 + cr.imag(z) * 5 + cr.real(cr.conj(z) * 1j))
    loss.backward()
    # real(conj(z) i) = y: d/dy 1
    np.testing.assert_allclose(N(z.grad), [3 + 6j, 3 + 6j])
    with pytest.raises(RuntimeError, match="floating point and complex"):
        T(np.array([1, 2]), requires_grad=True)


def test_angle_as_pytorch_with_gradient_zero_at_zero_and_for_real_values():
    z = leaf(np.array([1 + 1j, -2 + 0j, 0j]))
    out = cr.angle(z)
    np.testing.assert_allclose(N(out), [math.pi / 4, math.pi, 0.0])
    cr.sum(out).backward()
    # d arg / (dx + i dy) = (-y + i x) / |z|^2
    np.testing.assert_allclose(N(z.grad), [(-1 + 1j) / 2, -0.5j, 0])
    x = leaf(np.array([-1.0, 2.0, 0.0, np.nan]))
    np.testing.assert_array_equal(N(cr.angle(x)), [math.pi, 0.0, 0.0, np.nan])
    cr.sum(cr.angle(x)[:3]).backward()
    np.testing.assert_array_equal(N(x.grad), [0.0, 0.0, 0.0, 0.0])


def test_abs_and_sign_of_complex_zero_have_gradient_zero():
    z = leaf(np.array([0j, 3 + 4j]))
    cr.sum(cr.abs(z) + cr.real(cr.sign(z))).backward()
    # |z| gives z / |z|; Re(z / |z|) gives (1 - Re(s)^2 ... ) / |z| along the circle
    s = (3 + 4j) / 5
    expected = s + (1 - s * np.real(np.conj(s) * 1)) / 5
    np.testing.assert_allclose(N(z.grad), [0, expected])


def test_var_and_std_of_complex_values_are_real_as_numpy():
    a = np.array([1 + 2j, -0.5 + 1j, 2 - 1j])
    for fn, np_fn in ((cr.var, np.var), (cr.std, np.std)):
        out = fn(T(a), correction=1)
        assert out.dtype == cr.float64
        np.testing.assert_allclose(N(out), np_fn(a, ddof=1))


def test_forward_mode_takes_complex_tangents():
    a = np.array([0.5 + 1j, -1 + 0.25j])
    with fwad.dual_level():
        z = fwad.make_dual(T(a), T(np.array([1j, 1 + 0j])))
        out = fwad.unpack_dual(cr.exp(z) * 2)
        mag = fwad.unpack_dual(cr.abs(z))
    np.testing.assert_allclose(N(out.tangent), 2 * np.exp(a) * [1j, 1])
    np.testing.assert_allclose(N(mag.tangent), np.real(np.conj(a / np.abs(a)) * [1j, 1]))
    assert mag.tangent.dtype == cr.float64


def test_compile_runs_gradients_through_complex_values_eagerly():
    def step(z, x):
        loss = cr.sum(cr.abs(cr.sin(z) * x) ** 2)
        return cr.autograd.grad(loss, (z, x))

    z, x = leaf(np.array([1 + 2j, -0.5 + 0.1j])), leaf(np.array([0.3, 2.0]))
    expected = step(z, x)
    compiled = cr.compile(step)
    with pytest.warns(cr.CompileWarning, match="gradients through complex values"):
        got = compiled(z, x)
    for a, b in zip(got, expected):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(N(a), N(b))


def test_func_grad_of_a_complex_input():
    f = cr.func.grad(lambda z: cr.sum(cr.abs(z) ** 2))
    np.testing.assert_allclose(N(f(T(np.array([1 + 2j])))), [2 + 4j])


@pytest.mark.regression
def test_a_real_tensor_that_requires_grad_times_a_complex_gets_a_real_gradient():
    # sum |x (1 + 2i)| = sqrt(5) sum |x|: the gradient is sqrt(5) sign(x), real, as PyTorch.
    for scale in (lambda x: x * (1 + 2j), lambda x: (1 + 2j) * x):
        x = T([1.0, -2.0], requires_grad=True)
        out = scale(x)
        assert out.dtype == cr.complex128
        cr.sum(cr.abs(out)).backward()
        assert x.grad.dtype == cr.float64
        assert_values(x.grad, [2.2360679774997898, -2.2360679774997898])
    x = T([1.0, 2.0], requires_grad=True)
    (g,) = cr.autograd.grad(
        cr.sum(cr.imag(x * cr.asarray(BACKEND.asarray(np.asarray([1j, 2j]))))), x
    )
    assert g.dtype == cr.float64
    assert_values(g, [1.0, 2.0])


# ----------------------------------------------------------------------------- PyTorch fixtures
# Mixed real and complex programs run by PyTorch 2.13 (scripts in the fixture file's "source"
# entries, for the record): the loss, and each leaf's gradient.


def _program(name):
    c = cr
    return {
        "fft_filter": lambda x, w: c.sum(c.abs(c.fft.irfft(c.fft.rfft(x) * w, n=x.shape[-1])) ** 2),
        "complex_linear": lambda x, w: c.sum(c.abs(x @ w) ** 2),
        "phase_and_magnitude": lambda x, z: c.sum(c.angle(z * x) + c.abs(z) * c.real(x * 1j + z)),
        "eigh_hermitian": lambda x, z: c.sum(
            LA.eigh(_hermitian(z) + c.astype(x, c.complex128))[0] ** 2
        ),
        "solve_det": lambda x, z: c.real(
            c.sum(LA.solve(z + c.astype(x, c.complex128), c.conj(z[:, 0]))) + LA.det(z)
        ),
        "svd_nuclear": lambda x, z: c.sum(LA.svdvals(z * x)),
        "eig_general": lambda x, z: _eig_loss(LA.eig(x + z)),
        "logsumexp_scaled": lambda x, z: c.sum(c.abs(c.logsumexp(z * x, axis=-1)) ** 2),
    }[name]


def _eig_loss(result):
    w, v = result
    return cr.sum(cr.abs(w) ** 2 * cr.abs(v[0]) ** 2) + cr.sum(cr.real(w))


def _fixtures():
    return json.loads(FIXTURES.read_text())["programs"]


def _decode(v):
    a = np.asarray(v["re"]) + (1j * np.asarray(v["im"]) if "im" in v else 0)
    return a


@pytest.mark.parametrize(
    "name", failing_on_dask(sorted(_fixtures()), {"eig_general", "eigh_hermitian", "solve_det"})
)
def test_mixed_programs_match_pytorch(name):
    record = _fixtures()[name]
    inputs = [leaf(_decode(v)) for v in record["inputs"]]
    loss = _program(name)(*inputs)
    assert loss.dtype == cr.float64
    np.testing.assert_allclose(float(loss), record["loss"], rtol=1e-10)
    grads = cr.autograd.grad(loss, inputs)
    for g, x, want in zip(grads, inputs, record["grads"]):
        assert g.dtype == x.dtype
        np.testing.assert_allclose(N(g), _decode(want), rtol=1e-9, atol=1e-12)
