"""chainrule.special: values against SciPy's on drawn inputs (0-d and 0-size ones included),
derivatives against finite differences to second order and in forward mode; SciPy's ufuncs
on tensors dispatch to it; it imports without SciPy. NumPy-backed tensors (SciPy's kernels),
whatever the backend under test."""

import math
import subprocess
import sys

import numpy as np
import pytest
import scipy.special as ss
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
import chainrule.special as sp
from chainrule.autograd import grad, gradcheck, gradgradcheck
from conftest import LIBRARY, N, examples

SHAPES = hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=3)


def floats(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


def leaf(a):
    return cr.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


WIDE = floats(-2.5, 2.5)
POSITIVE = floats(0.3, 3)
UNIT = floats(-0.9, 0.9)
PROBABILITY = floats(0.05, 0.95)
AWAY_FROM_ZERO = st.one_of(floats(-2.5, -0.2), floats(0.2, 2.5))

# name -> (chainrule's function, SciPy's, the values drawn for each input)
ONE_INPUT = {
    "erf": (sp.erf, ss.erf, WIDE),
    "erfc": (sp.erfc, ss.erfc, WIDE),
    "erfinv": (sp.erfinv, ss.erfinv, UNIT),
    "erfcinv": (sp.erfcinv, ss.erfcinv, floats(0.1, 1.9)),
    "ndtr": (sp.ndtr, ss.ndtr, WIDE),
    "ndtri": (sp.ndtri, ss.ndtri, PROBABILITY),
    "log_ndtr": (sp.log_ndtr, ss.log_ndtr, floats(-8, 3)),
    "gammaln": (sp.gammaln, ss.gammaln, POSITIVE),
    "digamma": (sp.digamma, ss.digamma, POSITIVE),
    "polygamma": (lambda x: sp.polygamma(2, x), lambda x: ss.polygamma(2, x), POSITIVE),
    "i0": (sp.i0, ss.i0, WIDE),
    "i0e": (sp.i0e, ss.i0e, AWAY_FROM_ZERO),
    "i1": (sp.i1, ss.i1, WIDE),
    "i1e": (sp.i1e, ss.i1e, AWAY_FROM_ZERO),
    "j0": (sp.bessel_j0, ss.j0, WIDE),
    "j1": (sp.bessel_j1, ss.j1, WIDE),
    "jv": (lambda x: sp.jv(1.5, x), lambda x: ss.jv(1.5, x), POSITIVE),
    "iv": (lambda x: sp.iv(0.5, x), lambda x: ss.iv(0.5, x), POSITIVE),
    "ive": (lambda x: sp.ive(2.0, x), lambda x: ss.ive(2.0, x), AWAY_FROM_ZERO),
    "gammainc": (lambda x: sp.gammainc(1.5, x), lambda x: ss.gammainc(1.5, x), POSITIVE),
    "gammaincc": (lambda x: sp.gammaincc(2.5, x), lambda x: ss.gammaincc(2.5, x), POSITIVE),
    "zeta": (lambda q: sp.zeta(3.0, q), lambda q: ss.zeta(3.0, q), POSITIVE),
    "expit": (sp.expit, ss.expit, WIDE),
    "log_expit": (sp.log_expit, ss.log_expit, WIDE),
    "logit": (sp.logit, ss.logit, PROBABILITY),
    "entr": (sp.entr, ss.entr, POSITIVE),
    "sinc": (sp.sinc, np.sinc, AWAY_FROM_ZERO),
    "multigammaln": (
        lambda a: sp.multigammaln(a + 1, 3),
        lambda a: ss.multigammaln(a + 1, 3),
        POSITIVE,
    ),
    "softmax": (sp.softmax, ss.softmax, WIDE),
    "log_softmax": (lambda x: sp.log_softmax(x, -1), lambda x: ss.log_softmax(x, -1), WIDE),
    "logsumexp": (lambda x: sp.logsumexp(x, axis=-1), lambda x: ss.logsumexp(x, axis=-1), WIDE),
}
# Reductions along the last axis: not of a 0-d input; softmax of nothing: SciPy's error.
ALONG_AN_AXIS = {"log_softmax", "logsumexp"}
NOT_EMPTY = {"softmax", "log_softmax"}


@pytest.mark.parametrize("name", ONE_INPUT)
@given(data=st.data())
@examples(8)
def test_special_functions_give_scipys_values_and_derivatives_in_both_modes(name, data):
    fn, reference, elements = ONE_INPUT[name]
    shapes = SHAPES.filter(lambda s: len(s) > 0) if name in ALONG_AN_AXIS else SHAPES
    if name in NOT_EMPTY:
        shapes = shapes.filter(lambda s: math.prod(s) > 0)
    a = data.draw(hnp.arrays(np.float64, shapes, elements=elements))
    x = leaf(a)
    out = fn(x)
    expected = np.asarray(reference(a))
    assert N(out).shape == expected.shape
    np.testing.assert_allclose(N(out), expected, rtol=1e-12, atol=1e-14)
    if a.size:
        assert gradcheck(fn, (x,), check_forward_ad=True)
        assert gradgradcheck(fn, (x,))


TWO_INPUTS = {
    "beta": (sp.beta, ss.beta, POSITIVE, POSITIVE),
    "betaln": (sp.betaln, ss.betaln, POSITIVE, POSITIVE),
    "xlogy": (sp.xlogy, ss.xlogy, WIDE, POSITIVE),
    "xlog1py": (sp.xlog1py, ss.xlog1py, WIDE, floats(-0.5, 2)),
    "kl_div": (sp.kl_div, ss.kl_div, POSITIVE, POSITIVE),
}


@pytest.mark.parametrize("name", TWO_INPUTS)
@given(data=st.data())
@examples(8)
def test_special_functions_of_two_inputs_broadcast_and_differentiate(name, data):
    fn, reference, first, second = TWO_INPUTS[name]
    shapes = data.draw(hnp.mutually_broadcastable_shapes(num_shapes=2, max_dims=2, max_side=3))
    a = data.draw(hnp.arrays(np.float64, shapes.input_shapes[0], elements=first))
    b = data.draw(hnp.arrays(np.float64, shapes.input_shapes[1], elements=second))
    x, y = leaf(a), leaf(b)
    np.testing.assert_allclose(N(fn(x, y)), reference(a, b), rtol=1e-12, atol=1e-14)
    assert gradcheck(fn, (x, y), check_forward_ad=True)
    assert gradgradcheck(fn, (x, y))


# A sample of each primitive of the rule table for the tests over the table (forward mode,
# vmap): a strategy of (fn of tensors of the backend under test, arrays).
_SAMPLE_SHAPES = hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3)
SPECIAL_SAMPLES = {
    **{
        rule: st.builds(
            lambda a, fn=ONE_INPUT[rule][0]: (fn, [a]),
            _SAMPLE_SHAPES.flatmap(
                lambda s, e=ONE_INPUT[rule][2]: hnp.arrays(np.float64, s, elements=e)
            ),
        )
        for rule in (
            "erf",
            "erfc",
            "erfinv",
            "erfcinv",
            "ndtr",
            "ndtri",
            "log_ndtr",
            "gammaln",
            "digamma",
            "polygamma",
            "i0",
            "i0e",
            "i1",
            "i1e",
            "j0",
            "j1",
            "jv",
            "iv",
            "ive",
            "gammainc",
            "gammaincc",
            "zeta",
        )
    },  # fmt: skip
    **{
        rule: st.builds(
            lambda a, b, fn=TWO_INPUTS[rule][0]: (fn, [a, b]),
            hnp.arrays(np.float64, (2, 3), elements=POSITIVE),
            hnp.arrays(np.float64, (3,), elements=POSITIVE),
        )
        for rule in ("beta", "betaln")
    },
}

# The rule table's primitives that the tests above gradcheck.
GRADCHECKED = {
    "erf", "erfc", "erfinv", "erfcinv", "ndtr", "ndtri", "log_ndtr", "gammaln", "digamma",
    "polygamma", "i0", "i0e", "i1", "i1e", "j0", "j1", "jv", "iv", "ive", "gammainc",
    "gammaincc", "zeta", "beta", "betaln",
}  # fmt: skip


def test_derivatives_reach_third_order():
    x = leaf([0.4, 1.3])
    for fn, third in (
        (sp.gammaln, lambda a: ss.polygamma(2, a)),
        (sp.erf, lambda a: (2 / math.sqrt(math.pi)) * np.exp(-a * a) * (4 * a * a - 2)),
    ):
        (g1,) = grad(fn(x).sum(), x, create_graph=True)
        (g2,) = grad(g1.sum(), x, create_graph=True)
        (g3,) = grad(g2.sum(), x)
        np.testing.assert_allclose(N(g3), third(np.array([0.4, 1.3])), rtol=1e-10)


def test_sinc_derivatives_at_and_near_zero():
    # sinc = sum_k (-1)^k (pi x)^(2k) / (2k+1)!: at 0 its derivatives are 1, 0, -pi^2/3, 0,
    # and a finite difference of the second one stays close to the third near 0. The second
    # was 0 at 0 (x = 0 was replaced by a constant) and lost digits near it.
    x = leaf([0.0, 1e-9, 1e-5, 0.3])
    g1 = grad(sp.sinc(x).sum(), x, create_graph=True)[0]
    g2 = grad(g1.sum(), x, create_graph=True)[0]
    g3 = grad(g2.sum(), x)[0]
    y = np.pi * np.array([0.0, 1e-9, 1e-5, 0.3])
    safe = np.where(y == 0, 1.0, y)
    second = np.where(
        y == 0,
        -(np.pi**2) / 3,
        np.pi**2 * (-np.sin(safe) / safe - 2 * np.cos(safe) / safe**2 + 2 * np.sin(safe) / safe**3),
    )
    second[1:3] = -(np.pi**2) / 3 * (1 - 3 * y[1:3] ** 2 / 10)  # the series: no cancellation
    np.testing.assert_allclose(N(g1)[0], 0.0, atol=0)
    np.testing.assert_allclose(N(g2), second, rtol=1e-12)
    np.testing.assert_allclose(N(g3)[:3], np.pi**4 / 5 * y[:3] / np.pi, atol=1e-9)
    np.testing.assert_allclose(N(np.sinc(x)), np.sinc(N(x)), rtol=1e-15)


def test_i1_and_j1_have_derivative_one_half_at_zero():
    x = leaf([0.0])
    for fn in (sp.i1, sp.i1e, sp.bessel_j1):
        (g,) = grad(fn(x).sum(), x)
        assert N(g)[0] == 0.5


def test_xlogy_is_zero_where_x_is_zero_with_pytorchs_gradients():
    a, b = [0.0, 0.0, 0.0, 2.0], [0.0, 2.0, np.inf, 3.0]
    x, y = leaf(a), leaf(b)
    out = sp.xlogy(x, y)
    np.testing.assert_array_equal(N(out), ss.xlogy(a, b))
    gx, gy = grad(out.sum(), (x, y))
    np.testing.assert_allclose(N(gx), [0.0, math.log(2.0), np.inf, math.log(3.0)])
    np.testing.assert_allclose(N(gy), [0.0, 0.0, 0.0, 2 / 3])
    assert math.isnan(float(sp.xlogy(leaf(0.0), leaf(math.nan))))
    np.testing.assert_array_equal(N(sp.xlog1py(x, y - 1)), ss.xlog1py(a, np.array(b) - 1))


def test_riemann_zeta_gives_scipys_values():
    a = np.array([1.5, 2.0, 4.5])
    np.testing.assert_allclose(N(sp.zeta(leaf(a))), ss.zeta(a), rtol=1e-14)
    np.testing.assert_allclose(N(ss.zeta(leaf(a))), ss.zeta(a), rtol=1e-14)


def test_kl_div_and_log_expit_at_scipys_edges_and_through_scipys_ufuncs():
    a = [0.0, 0.0, 1.0, -1.0, 1.0, math.nan, 0.5]
    b = [0.0, 2.0, 0.0, 1.0, -1.0, 1.0, math.nan]
    np.testing.assert_array_equal(N(sp.kl_div(leaf(a), leaf(b))), ss.kl_div(a, b))
    np.testing.assert_array_equal(N(ss.kl_div(leaf(a), leaf(b))), ss.kl_div(a, b))
    x = [-800.0, -1.0, 0.0, 3.0, 800.0]
    np.testing.assert_allclose(N(ss.log_expit(leaf(x))), ss.log_expit(x), rtol=1e-15)
    x0, y0 = leaf([0.0]), leaf([2.0])
    gx, gy = grad(sp.kl_div(x0, y0).sum(), (x0, y0))
    np.testing.assert_array_equal(N(gx), [0.0])  # where x is 0 the value is y
    np.testing.assert_array_equal(N(gy), [1.0])


def test_entr_is_zero_at_zero_and_minus_infinity_below():
    np.testing.assert_array_equal(N(sp.entr(leaf([0.0, -1.0]))), [0.0, -np.inf])


def test_softmax_over_all_elements_when_no_axis_as_scipy():
    a = np.array([[0.1, 2.0], [-1.0, 0.5]])
    np.testing.assert_allclose(N(sp.softmax(leaf(a))), ss.softmax(a), rtol=1e-14)
    np.testing.assert_allclose(N(sp.softmax(leaf(a), 0)), ss.softmax(a, 0), rtol=1e-14)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda x: sp.zeta(x + 2, 1.5), NotImplementedError, "zeta in its argument x"),
        (lambda x: sp.gammainc(x, 1.5), NotImplementedError, "gammainc in its argument a"),
        (lambda x: sp.jv(x, 1.5), TypeError, "the order must be a Python number"),
        (lambda x: sp.polygamma(1.5, x), ValueError, "non-negative integer"),
        (lambda x: sp.erf(x * 1j), TypeError, "takes real values"),
    ],
)
def test_special_functions_refuse_what_they_do_not_differentiate(call, error, message):
    x = leaf([0.5, 1.0])
    with pytest.raises(error, match=message):
        grad(call(x).sum(), x)


# ----------------------------------------------------------------------------- SciPy's ufuncs

SCIPY_CALLS = {
    "expit": lambda t: ss.expit(t),
    "erf": lambda t: ss.erf(t),
    "gammaln": lambda t: ss.gammaln(t),
    "psi": lambda t: ss.psi(t),
    "xlogy": lambda t: ss.xlogy(t, t + 1),
    "ndtr": lambda t: ss.ndtr(t),
    "log_ndtr": lambda t: ss.log_ndtr(t),
    "i0e": lambda t: ss.i0e(t),
    "jv": lambda t: ss.jv(2.5, t),
    "zeta": lambda t: ss.zeta(3.0, t),
    "betaln": lambda t: ss.betaln(t, 2.0),
    "gammaincc": lambda t: ss.gammaincc(2.0, t),
    "expm1": lambda t: ss.expm1(t),
    "log1p": lambda t: ss.log1p(t),
    "round": lambda t: ss.round(t * 3.0) * t,
}


@pytest.mark.parametrize("name", SCIPY_CALLS)
def test_scipys_special_ufuncs_on_tensors_dispatch_to_chainrule_special(name):
    call = SCIPY_CALLS[name]
    a = np.array([0.3, 0.8, 1.7])
    x = leaf(a)
    out = call(x)
    assert out.__class__ is cr.Tensor and out.requires_grad
    np.testing.assert_allclose(N(out), call(a), rtol=1e-13)
    assert gradgradcheck(call, (x,))


@pytest.mark.skipif(
    LIBRARY != "numpy",
    reason="SciPy creates arrays by chainrule.full(device=the tensors' 'cpu'), made by the "
    "default library under test, which may lack that device (array-api-strict)",
)
def test_scipy_entropy_differentiates_on_tensors():
    # scipy.stats.entropy is array-API code over scipy.special.entr/xlogy.
    import scipy.stats

    a = np.array([0.2, 0.5, 0.3])
    x = leaf(a)
    np.testing.assert_allclose(float(scipy.stats.entropy(x)), scipy.stats.entropy(a))
    assert gradgradcheck(lambda t: scipy.stats.entropy(t / cr.sum(t)), (x,))


def test_a_scipy_ufunc_chainrule_lacks_raises_type_error():
    with pytest.raises(TypeError, match="chainrule does not implement the ufunc 'dawsn'"):
        ss.dawsn(leaf([1.5]))


def test_chainrule_special_imports_without_scipy_and_names_it_where_needed():
    code = (
        "import sys; sys.modules['scipy'] = None; sys.modules['scipy.special'] = None\n"
        "import numpy as np, chainrule as cr, chainrule.special as sp\n"
        "x = cr.tensor(np.array([0.5]))\n"
        "assert abs(float(sp.expit(x)) - 1 / (1 + np.exp(-0.5))) < 1e-15\n"
        "try:\n"
        "    sp.erf(x)\n"
        "except ImportError as e:\n"
        "    print(e)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={"PYTHONPATH": "src"}
    )
    assert result.returncode == 0, result.stderr
    assert "chainrule.special.erf on NumPy arrays needs SciPy" in result.stdout
