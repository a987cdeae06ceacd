"""Reductions (sum, prod, mean, max, min, var, std, logsumexp, all, any), softmax /
log_softmax, cumulative sums and products, and diff: values against NumPy, first and second
derivatives against finite differences over drawn axes and keepdims, float32, ties in max /
min, prod and cumulative_prod at exact zeros, and the reductions' signatures and dtypes as
the standard's."""

import inspect

import array_api_strict as xs
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
import chainrule.nn.functional as F
from chainrule.autograd import grad, gradcheck, gradgradcheck
from conftest import N, T, examples, fails_on
from helpers import (
    NONEMPTY,
    SHAPES,
    SIGNED,
    arrays,
    assert_values,
    axes_for,
    check_grads,
    grads_of,
    leaf,
)

GRADCHECKED = {
    "sum", "prod", "mean", "max", "min", "logsumexp", "softmax", "log_softmax",
    "cumulative_sum", "cumulative_prod",
}  # fmt: skip

FEW = examples(15)

# Distinct values, at least 0.25 apart: no ties, and a variance away from zero.
DISTINCT = st.integers(-24, 24).map(lambda k: k / 4)


def distinct_arrays(shape):
    return hnp.arrays(np.float64, shape, elements=DISTINCT, unique=True)


def reduced_count(shape, axis):
    axes = range(len(shape)) if axis is None else np.atleast_1d(axis)
    return int(np.prod([shape[a] for a in axes]))


def np_logsumexp(a, axis, keepdims):
    return np.log(np.sum(np.exp(a), axis=axis, keepdims=keepdims))


# ----------------------------------------------------------------------------- over drawn axes

REDUCTIONS = {
    "sum": (cr.sum, np.sum, arrays),
    "prod": (cr.prod, np.prod, lambda shape: arrays(shape, SIGNED)),
    "mean": (cr.mean, np.mean, arrays),
    "max": (cr.max, np.max, distinct_arrays),
    "min": (cr.min, np.min, distinct_arrays),
    "logsumexp": (F.logsumexp, np_logsumexp, arrays),
}


@pytest.mark.parametrize("name", REDUCTIONS)
@given(data=st.data())
def test_reduction_values_and_derivatives_over_drawn_axes(name, data):
    fn, np_fn, values = REDUCTIONS[name]
    a = data.draw(values(data.draw(SHAPES)))
    axis = data.draw(axes_for(a.ndim))
    keepdims = data.draw(st.booleans())
    assert_values(fn(T(a), axis=axis, keepdims=keepdims), np_fn(a, axis=axis, keepdims=keepdims))
    check_grads(lambda x: fn(x, axis=axis, keepdims=keepdims), leaf(a))


@pytest.mark.parametrize("name", REDUCTIONS)
@examples(5)
@given(data=st.data())
def test_reduction_of_float32_gives_float32_values_and_gradients(name, data):
    fn, _, values = REDUCTIONS[name]
    x = leaf(data.draw(values(data.draw(SHAPES))), "float32")
    axis = data.draw(axes_for(x.ndim))
    assert fn(x, axis=axis).dtype == cr.float32
    (g,) = grads_of(lambda t: fn(t, axis=axis), x)
    assert (g.dtype, g.shape) == (cr.float32, x.shape)


@pytest.mark.parametrize("fn", [cr.var, cr.std])
@given(data=st.data())
def test_var_and_std_values_and_derivatives_with_correction(fn, data):
    a = data.draw(distinct_arrays(data.draw(SHAPES)))
    axis = data.draw(axes_for(a.ndim))
    keepdims = data.draw(st.booleans())
    correction = data.draw(st.sampled_from([0, 1, 0.5]))
    n = reduced_count(a.shape, axis)
    # std is not differentiable where the variance is 0: at least two distinct values.
    assume(n > correction and (fn is cr.var or n >= 2))
    np_fn = np.var if fn is cr.var else np.std
    expected = np_fn(a, axis=axis, keepdims=keepdims, ddof=correction)
    assert_values(fn(T(a), axis=axis, keepdims=keepdims, correction=correction), expected)
    check_grads(lambda x: fn(x, axis=axis, keepdims=keepdims, correction=correction), leaf(a))
    x = leaf(a, "float32")
    out = fn(x, axis=axis, correction=correction)
    assert out.dtype == cr.float32
    (g,) = grads_of(lambda t: fn(t, axis=axis, correction=correction), x)
    assert (g.dtype, g.shape) == (cr.float32, a.shape)


@pytest.mark.parametrize("fn", [cr.var, cr.std])
@pytest.mark.parametrize("value", [2.0, 0.1, 0.3, -1e-300])
def test_var_and_std_of_a_slice_of_equal_values_are_zero_with_zero_gradient(fn, value):
    # 0.1 and 0.3: the rounded mean differs from the values, leaving deviations of order eps.
    a = np.asarray([[value] * 7, [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0]])
    x = leaf(a)
    assert N(fn(x, axis=1))[0] == 0.0
    (g,) = grads_of(lambda t: fn(t, axis=1), x)
    np.testing.assert_array_equal(N(g)[0], np.zeros(7))
    assert np.all(np.isfinite(N(g)))
    np.testing.assert_allclose(N(g)[1], N(grads_of(fn, leaf(a[1]))[0]))
    (h,) = grad(cr.sum(grad(cr.sum(fn(x, axis=1) ** 2), x, create_graph=True)[0]), x)
    assert np.all(np.isfinite(N(h)))


@pytest.mark.parametrize("fn", [cr.var, cr.std])
def test_var_and_std_differentiate_twice_next_to_a_slice_of_equal_values(fn):
    equal = T([1.5, 1.5, 1.5])
    check_grads(lambda t: fn(cr.stack([equal, t]), axis=1, correction=1), leaf([1.0, 2.0, 4.0]))
    # At the equal values themselves std has a kink (as |t| at 0): first order only.
    assert gradcheck(lambda t: fn(t, axis=1), (leaf([[1.5, 1.5, 1.5], [1.0, 2.0, 4.0]]),))


@pytest.mark.filterwarnings("ignore:invalid value encountered")
def test_var_and_std_of_non_finite_values_stay_nan():
    for value in (np.inf, np.nan):
        for fn in (cr.var, cr.std):
            assert np.isnan(N(fn(T([value, value]))))


def np_softmax(a, axis):
    e = np.exp(a - np.max(a, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


SOFTMAXES = {
    "softmax": (F.softmax, np_softmax),
    "log_softmax": (F.log_softmax, lambda a, axis: np.log(np_softmax(a, axis))),
}


@pytest.mark.parametrize("name", SOFTMAXES)
@given(data=st.data())
def test_softmax_values_and_derivatives_over_a_drawn_axis(name, data):
    fn, np_fn = SOFTMAXES[name]
    a = data.draw(arrays(data.draw(SHAPES.filter(lambda s: len(s) > 0))))
    axis = data.draw(st.integers(-a.ndim, a.ndim - 1))
    assert_values(fn(T(a), axis=axis), np_fn(a, axis))
    check_grads(lambda x: fn(x, axis=axis), leaf(a))
    x = leaf(a, "float32")
    assert fn(x, axis=axis).dtype == cr.float32
    (g,) = grads_of(lambda t: fn(t, axis=axis), x)
    assert (g.dtype, g.shape) == (cr.float32, a.shape)


@fails_on(
    "torch", reason="PyTorch's amax can't reduce an empty axis (some parameters)", strict=False
)
@pytest.mark.parametrize("shape, axis", [((0,), 0), ((0, 3), 0), ((0, 3), 1), ((3, 0), 0)])
@pytest.mark.parametrize("name", ["softmax", "log_softmax", "logsumexp"])
def test_softmax_and_logsumexp_of_empty_tensors_are_empty_with_empty_gradients(name, shape, axis):
    fn = getattr(F, name)
    x = leaf(np.zeros(shape))
    out = fn(x, axis=axis)
    if name == "logsumexp":
        expected = np.full(shape[:axis] + shape[axis + 1 :], -np.inf)  # the log of an empty sum
    else:
        expected = np.zeros(shape)
    assert_values(out, expected)
    (g,) = grad(cr.sum(out), x)
    assert g.shape == shape


def test_logsumexp_does_not_overflow():
    assert_values(F.logsumexp(T([1000.0, 1000.0])), 1000.0 + np.log(2.0))
    (g,) = grads_of(F.logsumexp, leaf([1000.0, 1000.0]))
    assert_values(g, [0.5, 0.5])


# ----------------------------------------------------------------------------- ties and zeros


def test_max_and_min_share_the_gradient_of_ties_evenly():
    (g,) = grads_of(cr.max, leaf([1.0, 3.0, 3.0]))
    assert_values(g, [0.0, 0.5, 0.5], atol=0)
    (g,) = grads_of(cr.min, leaf([2.0, 1.0, 1.0, 1.0]))
    assert_values(g, [0.0, 1 / 3, 1 / 3, 1 / 3])


def test_max_and_min_share_ties_within_each_reduced_slice():
    a = [[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]]
    (g,) = grads_of(lambda t: cr.max(t, axis=1, keepdims=True), leaf(a))
    assert_values(g, [[0.0, 0.5, 0.5], [0.5, 0.5, 0.0]], atol=0)
    (g,) = grads_of(lambda t: cr.min(t, axis=0), leaf([[1.0, 3.0], [1.0, 2.0]]))
    assert_values(g, [[0.5, 0.0], [0.5, 1.0]], atol=0)


def test_prod_gradient_with_one_zero_is_the_product_of_the_others_at_the_zero():
    (g,) = grads_of(cr.prod, leaf([2.0, 0.0, 3.0, -1.5]))
    assert_values(g, [0.0, -9.0, 0.0, 0.0], atol=0)
    (g,) = grads_of(lambda t: cr.prod(t, axis=1), leaf([[2.0, 0.0, 3.0], [1.0, 2.0, 4.0]]))
    assert_values(g, [[0.0, 6.0, 0.0], [8.0, 4.0, 2.0]], atol=0)


def test_prod_gradient_with_two_zeros_is_zero():
    (g,) = grads_of(cr.prod, leaf([0.0, 2.0, 0.0, 3.0]))
    assert_values(g, np.zeros(4), atol=0)
    (g,) = grads_of(lambda t: cr.prod(t, axis=0), leaf([[0.0, 0.0], [0.0, 2.0], [5.0, 3.0]]))
    assert_values(g, [[0.0, 6.0], [0.0, 0.0], [0.0, 0.0]], atol=0)


@examples(15)
@given(data=st.data())
def test_prod_first_derivative_with_zeros_and_second_with_one_zero(data):
    a = data.draw(arrays(data.draw(SHAPES), SIGNED))
    axis = data.draw(axes_for(a.ndim))
    keepdims = data.draw(st.booleans())
    zeros = data.draw(hnp.arrays(np.bool_, a.shape))
    with_zeros = np.where(zeros, 0.0, a)
    one_zero = a.copy()
    one_zero.flat[data.draw(st.integers(0, a.size - 1))] = 0.0

    def fn(x):
        return cr.prod(x, axis=axis, keepdims=keepdims)

    assert_values(fn(T(with_zeros)), np.prod(with_zeros, axis=axis, keepdims=keepdims))
    assert gradcheck(fn, leaf(with_zeros))
    assert gradcheck(fn, leaf(one_zero))
    assert gradgradcheck(fn, leaf(one_zero))


def _second_derivatives_by_every_mode(fn, a):
    """Second derivatives of fn at a against finite differences: reverse over reverse, forward
    over reverse, and forward over forward (the derivatives of a JVP, by forward mode too)."""
    x = leaf(a)
    assert gradgradcheck(fn, x, check_fwd_over_rev=True)
    t = T(np.linspace(-1.0, 1.5, a.size).reshape(a.shape))

    def tangent(y):
        return cr.func.jvp(fn, (y,), (t,))[1]

    assert gradcheck(tangent, leaf(a), check_forward_ad=True)


def test_prod_hessian_at_two_zeros_holds_the_product_of_the_others():
    # At (0, 2, 0) d2(x0 x1 x2)/dx0 dx2 = x1 = 2: it was taken as 0 (every mode); so was the
    # third derivative d3/dx0 dx1 dx2 = 1.
    expected = [[0.0, 0.0, 2.0], [0.0, 0.0, 0.0], [2.0, 0.0, 0.0]]
    x = T([0.0, 2.0, 0.0])
    assert_values(cr.func.hessian(cr.prod)(x), expected, atol=0)
    assert_values(cr.func.jacfwd(cr.func.jacfwd(cr.prod))(x), expected, atol=0)
    third = cr.func.jacrev(cr.func.hessian(cr.prod))(x)
    assert N(third)[0, 1, 2] == N(third)[2, 0, 1] == 1.0


@pytest.mark.xfail(
    strict=True,
    reason="third and higher derivatives of prod at three or more zeros of a slice are taken "
    "as 0 (docs/conventions.md): exact would need the products of the others written without "
    "division (exclusive cumulative products), with cumulative_prod exact at every order",
)
def test_prod_third_derivative_at_three_zeros():
    third = cr.func.jacrev(cr.func.hessian(cr.prod))(T([0.0, 0.0, 0.0]))
    assert N(third)[0, 1, 2] == 1.0


@FEW
@given(data=st.data())
def test_prod_second_derivatives_with_any_zeros(data):
    a = data.draw(arrays(data.draw(NONEMPTY), SIGNED))
    axis = data.draw(axes_for(a.ndim))
    keepdims = data.draw(st.booleans())
    with_zeros = np.where(data.draw(hnp.arrays(np.bool_, a.shape)), 0.0, a)

    def fn(x):
        return cr.prod(x, axis=axis, keepdims=keepdims)

    _second_derivatives_by_every_mode(fn, with_zeros)


# ----------------------------------------------------------------------------- cumulative


def cumulative_args(data, shape):
    """An axis (None allowed for 1-D) and include_initial."""
    axes = st.integers(-len(shape), len(shape) - 1)
    if len(shape) == 1:
        axes = st.none() | axes
    return data.draw(axes), data.draw(st.booleans())


CUMULATIVE = {
    "cumulative_sum": (cr.cumulative_sum, np.cumulative_sum, arrays),
    "cumulative_prod": (cr.cumulative_prod, np.cumulative_prod, lambda s: arrays(s, SIGNED)),
}


@pytest.mark.parametrize("name", CUMULATIVE)
@FEW
@given(data=st.data())
def test_cumulative_values_and_derivatives(name, data):
    fn, np_fn, values = CUMULATIVE[name]
    a = data.draw(values(data.draw(NONEMPTY)))
    axis, initial = cumulative_args(data, a.shape)

    def f(x):
        return fn(x, axis=axis, include_initial=initial)

    assert_values(f(T(a)), np_fn(a, axis=axis, include_initial=initial))
    check_grads(f, leaf(a))
    x = leaf(a, "float32")
    (g,) = grads_of(f, x)
    assert (f(x).dtype, g.dtype, g.shape) == (cr.float32, cr.float32, a.shape)


@FEW
@given(data=st.data())
def test_cumulative_prod_first_derivative_with_zeros_and_second_with_one_zero(data):
    a = data.draw(arrays(data.draw(NONEMPTY), SIGNED))
    axis, initial = cumulative_args(data, a.shape)
    with_zeros = np.where(data.draw(hnp.arrays(np.bool_, a.shape)), 0.0, a)
    one_zero = a.copy()
    one_zero.flat[data.draw(st.integers(0, a.size - 1))] = 0.0

    def f(x):
        return cr.cumulative_prod(x, axis=axis, include_initial=initial)

    expected = np.cumulative_prod(with_zeros, axis=axis, include_initial=initial)
    assert_values(f(T(with_zeros)), expected)
    assert gradcheck(f, leaf(with_zeros))
    assert gradcheck(f, leaf(one_zero))
    assert gradgradcheck(f, leaf(one_zero))


def test_cumulative_prod_hessian_at_two_zeros_is_symmetric():
    # sum(cumulative_prod(x)) at (2, 0, 3, 0, 4): d2/dx1 dx3 = x0 x2 + x0 x2 x4 = 30, both ways;
    # the derivative of the gradient at the second zero was taken as 0 (every mode).
    expected = np.zeros((5, 5))
    expected[0, 1] = expected[1, 0] = 4.0
    expected[1, 2] = expected[2, 1] = 2.0
    expected[1, 3] = expected[3, 1] = 30.0

    def fn(x):
        return cr.sum(cr.cumulative_prod(x))

    x = T([2.0, 0.0, 3.0, 0.0, 4.0])
    assert_values(cr.func.hessian(fn)(x), expected, atol=0)
    assert_values(cr.func.jacfwd(cr.func.jacfwd(fn))(x), expected, atol=0)


@FEW
@given(data=st.data())
def test_cumulative_prod_second_derivatives_with_any_zeros(data):
    a = data.draw(arrays(data.draw(NONEMPTY), SIGNED))
    axis, initial = cumulative_args(data, a.shape)
    with_zeros = np.where(data.draw(hnp.arrays(np.bool_, a.shape)), 0.0, a)

    def fn(x):
        return cr.cumulative_prod(x, axis=axis, include_initial=initial)

    _second_derivatives_by_every_mode(fn, with_zeros)


def test_cumulative_prod_gradient_at_zeros_is_the_product_of_the_others():
    # d/dx_1 sums x_0 (k = 1) and x_0 x_2 (k = 2); beyond the first zero every term holds it.
    (g,) = grads_of(cr.cumulative_prod, leaf([2.0, 0.0, 3.0, 0.0, 5.0]))
    assert_values(g, [1.0, 8.0, 0.0, 0.0, 0.0], atol=0)


@fails_on("torch", reason="PyTorch has no uint64 cumulative sums and products")
@pytest.mark.parametrize("fn", [cr.cumulative_sum, cr.cumulative_prod])
def test_cumulative_dtypes_axis_and_zero_dimensions(fn):
    np_fn = np.cumulative_sum if fn is cr.cumulative_sum else np.cumulative_prod
    for name, expected in (("int16", "int64"), ("uint8", "uint64"), ("bool", "int64")):
        out = fn(T([1, 0, 1], name))
        assert out.dtype == np.dtype(expected)
        assert_values(out, np_fn(np.array([1, 0, 1], dtype=name), dtype=expected))
    x = leaf([1.5, 2.0], "float32")
    assert fn(x, dtype=cr.float64).dtype == cr.float64
    (g,) = grads_of(lambda t: fn(t, dtype=cr.float64), x)
    assert g.dtype == cr.float32
    assert_values(fn(T(3.0)), [3.0])
    with pytest.raises(ValueError, match="axis"):
        fn(T(np.ones((2, 2))))


# ----------------------------------------------------------------------------- diff


@pytest.mark.regression
def test_diff_past_the_length_of_the_axis_is_empty():
    # array_api_strict refused the slice from 1 of an empty axis (found by the smoke profile).
    assert_values(cr.diff(T([0.0]), n=2), np.diff(np.array([0.0]), n=2))
    assert_values(cr.diff(T(np.ones((2, 3))), axis=0, n=3), np.zeros((0, 3)))


@FEW
@given(data=st.data())
def test_diff_values_and_derivatives_with_prepend_and_append(data):
    shape = data.draw(NONEMPTY)
    axis = data.draw(st.integers(-len(shape), len(shape) - 1))
    n = data.draw(st.integers(0, 2))

    def part():
        edge = list(shape)
        edge[axis] = data.draw(st.integers(0, 2))
        return data.draw(st.none() | arrays(tuple(edge)))

    a, before, after = data.draw(arrays(shape)), part(), part()
    kwargs = {} if before is None else {"prepend": before}
    kwargs |= {} if after is None else {"append": after}
    # The standard's length along the axis is that of the parts less n, even for n == 0
    # (where NumPy's diff drops prepend and append): difference the joined parts.
    joined = np.concatenate([p for p in (before, a, after) if p is not None], axis=axis)
    expected = np.diff(joined, axis=axis, n=n)
    out = cr.diff(T(a), axis=axis, n=n, **{k: T(v) for k, v in kwargs.items()})
    assert_values(out, expected)
    names = list(kwargs)

    def f(x, *edges):
        return cr.diff(x, axis=axis, n=n, **dict(zip(names, edges)))

    check_grads(f, leaf(a), *(leaf(kwargs[k]) for k in names))


def test_diff_of_integers_and_booleans_as_numpy():
    a = np.array([[3, 1, 4, 1], [5, 9, 2, 6]], dtype=np.int32)
    out = cr.diff(T(a), n=2)
    assert out.dtype == cr.int32
    np.testing.assert_array_equal(N(out), np.diff(a, n=2))
    b = np.array([True, True, False, True])
    np.testing.assert_array_equal(N(cr.diff(T(b))), np.diff(b))


# ----------------------------------------------------------------------------- all and any


@pytest.mark.parametrize("name", ["all", "any"])
@given(data=st.data())
@examples(15)
def test_all_and_any_over_drawn_axes(name, data):
    shape = data.draw(SHAPES)
    a = data.draw(hnp.arrays(np.bool_, shape) | arrays(shape, st.sampled_from([0.0, 1.5])))
    axis = data.draw(axes_for(len(shape)))
    keepdims = data.draw(st.booleans())
    out = getattr(cr, name)(T(a), axis=axis, keepdims=keepdims)
    assert out.dtype == cr.bool
    np.testing.assert_array_equal(N(out), getattr(np, name)(a, axis=axis, keepdims=keepdims))


# --------------------------------------------------------- the standard's signatures and dtypes


STANDARD_SIGNATURES = [
    "sum", "prod", "mean", "max", "min", "var", "std", "cumulative_sum", "cumulative_prod",
    "diff", "all", "any", "astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type",
    "hypot", "logaddexp", "copysign", "nextafter", "reciprocal", "signbit", "real", "imag",
    "conj", "add", "equal", "isnan",
]  # fmt: skip


def _parameters(fn):
    return [(p.name, p.kind) for p in inspect.signature(fn).parameters.values()]


@pytest.mark.parametrize("name", STANDARD_SIGNATURES)
def test_signatures_name_their_parameters_as_the_standard(name):
    ours, standard = _parameters(getattr(cr, name)), _parameters(getattr(xs, name))
    if name == "diff":
        # The standard's names and order; n and axis also positional, in NumPy's order (below).
        assert [n for n, _ in ours] == ["x", "n", "axis", "prepend", "append"]
        assert sorted(n for n, _ in ours) == sorted(n for n, _ in standard)
        return
    assert ours == standard


@pytest.mark.regression
def test_diff_takes_n_and_axis_positionally_as_numpy():
    # scikit-learn's roc_curve calls xp.diff(fps, 2), NumPy's form (the standard makes n a
    # keyword): chainrule's diff refused it with a TypeError.
    a = np.array([[3.0, 1.0, 4.0, 1.0], [5.0, 9.0, 2.0, 6.0]])
    assert_values(cr.diff(T(a), 2), np.diff(a, 2))
    assert_values(cr.diff(T(a), 1, 0), np.diff(a, 1, 0))
    assert_values(
        cr.diff(T(a), 2, axis=1, prepend=T([[0.0], [1.0]])),
        np.diff(a, 2, axis=1, prepend=[[0.0], [1.0]]),
    )


@pytest.mark.parametrize("fn", [cr.var, cr.std])
def test_var_and_std_are_nan_without_more_values_than_the_correction(fn):
    x = T([1.0, 3.0])
    for correction in (2, 3, 2.5):
        assert np.isnan(N(fn(x, correction=correction)))
    expected = np.var([1.0, 3.0], ddof=1.5)
    assert_values(fn(x, correction=1.5), expected if fn is cr.var else np.sqrt(expected))


@fails_on("torch", reason="PyTorch has no uint64 sums and products")
@pytest.mark.parametrize("fn", [cr.sum, cr.prod])
def test_sum_and_prod_widen_integers_and_take_a_dtype(fn):
    np_fn = np.sum if fn is cr.sum else np.prod
    for name, expected in (("int8", "int64"), ("uint16", "uint64"), ("bool", "int64")):
        out = fn(T(np.ones((2, 3), dtype=name)), axis=1)
        assert out.dtype == np.dtype(expected)
        assert_values(out, np_fn(np.ones((2, 3), dtype=name), axis=1))
    x = leaf([[1.5, 2.0]], "float32")
    assert fn(x, dtype=cr.float64).dtype == cr.float64
    out = fn(x, axis=())
    assert out.shape == (1, 2)
    assert_values(out, [[1.5, 2.0]])
