"""The Array API elementwise functions that came late (hypot, logaddexp, copysign,
nextafter, reciprocal, signbit, real, imag, conj), chainrule's dtypes, the data type functions
and namespace info, cumulative sums and products, diff, all and any, the signatures of the
reductions, and the standard's special cases NumPy misses: values against NumPy and
array_api_strict, first and second derivatives against finite differences, dtypes, and Python
scalars as weak operands."""

import inspect
import itertools
import math
import pickle

import array_api_strict as xs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
from chainrule import _backend, func
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import BACKEND, N, T, examples, fails_on, skip_on
from helpers import (
    AWAY_FROM_ZERO,
    SHAPES,
    SIGNED,
    arrays,
    assert_values,
    axes_for,
    check_grads,
    grads_of,
    leaf,
)
from test_ops import BINARY

GRADCHECKED = {"reciprocal", "cumulative_sum", "cumulative_prod"}

FEW = examples(15)
NONEMPTY = SHAPES.filter(lambda s: len(s) > 0)
DTYPE_NAMES = _backend.DTYPE_NAMES
STANDARD_DTYPE_NAMES = tuple(n for n in DTYPE_NAMES if n != "float16")  # the reference's


def dtype_of(d):
    """A dtype of array_api_strict (or any backend) as chainrule's."""
    return _backend.from_backend_dtype(d)


# ----------------------------------------------------------------------------- elementwise


@pytest.mark.parametrize("name", BINARY)
@examples(5)
@given(data=st.data())
def test_binary_python_scalars_are_weak_on_either_side(name, data):
    fn, np_fn, x_elements, y_elements = BINARY[name]
    shape = data.draw(SHAPES)
    a = data.draw(arrays(shape, x_elements)).astype(np.float32)
    b = data.draw(arrays(shape, y_elements)).astype(np.float32)
    s, r = data.draw(x_elements), data.draw(y_elements)
    x, y = leaf(a, "float32"), leaf(b, "float32")
    for out, expected in ((fn(x, r), np_fn(a, r)), (fn(s, y), np_fn(s, b))):
        assert out.dtype == cr.float32
        assert_values(out, expected, rtol=1e-6, atol=1e-7)
    gx, gy = grads_of(lambda x, y: fn(x, r) + fn(s, y), x, y)
    assert (gx.dtype, gy.dtype) == (cr.float32, cr.float32)
    check_grads(lambda t: fn(t, r), leaf(a))
    check_grads(lambda t: fn(s, t), leaf(b))


def test_nextafter_steps_one_float32_place():
    a = np.array([1.0, -2.0, 0.0], dtype=np.float32)
    b = np.array([2.0, -3.0, -1.0], dtype=np.float32)
    out = cr.nextafter(T(a), T(b))
    assert out.dtype == cr.float32
    np.testing.assert_array_equal(N(out), np.nextafter(a, b))


def test_hypot_has_gradient_zero_at_the_origin():
    gx, gy = grads_of(cr.hypot, leaf([0.0, 3.0]), leaf([0.0, -4.0]))
    assert_values(gx, [0.0, 0.6])
    assert_values(gy, [0.0, -0.8])


def test_copysign_gradient_is_the_sign_agreement_and_zero_in_y():
    x, y = leaf([1.5, 1.5, -2.0, -2.0, 0.0]), leaf([3.0, -3.0, 1.0, -1.0, -1.0])
    gx, gy = grads_of(cr.copysign, x, y)
    assert_values(gx, [1.0, -1.0, -1.0, 1.0, 0.0], atol=0)
    assert_values(gy, np.zeros(5), atol=0)


@given(a=arrays(SHAPES, AWAY_FROM_ZERO))
@FEW
def test_reciprocal_values_and_derivatives(a):
    assert_values(cr.reciprocal(T(a)), 1 / a)
    check_grads(cr.reciprocal, leaf(a))
    x = leaf(a, "float32")
    (g,) = grads_of(cr.reciprocal, x)
    assert (cr.reciprocal(x).dtype, g.dtype) == (cr.float32, cr.float32)


def test_signbit_sees_negative_zero_and_carries_no_gradient():
    a = np.array([-0.0, 0.0, -1.5, 2.0, -np.inf, np.inf])
    out = cr.signbit(leaf(a))
    assert out.dtype == cr.bool
    assert not out.requires_grad
    np.testing.assert_array_equal(N(out), np.signbit(a))


def test_real_imag_conj_of_complex_tensors():
    z = np.array([1 + 2j, -3 - 0.5j, 0j], dtype=np.complex64)
    t = T(z)
    for fn, np_fn in ((cr.real, np.real), (cr.imag, np.imag), (cr.conj, np.conj)):
        out = fn(t)
        assert out.dtype == np_fn(z).dtype
        np.testing.assert_array_equal(N(out), np_fn(z))


def test_parts_of_complex_tensors_carry_a_gradient_where_the_tensor_requires_one():
    z = T(np.array([1 + 2j]))
    for fn, want in ((cr.real, 1.0), (cr.imag, 2.0), (cr.conj, 1 - 2j)):
        assert N(fn(z))[0] == want and not fn(z).requires_grad
    z = T(np.array([1 + 2j]), requires_grad=True)
    for fn in (cr.real, cr.imag, cr.conj):
        assert fn(z).requires_grad


@given(a=arrays(SHAPES))
@examples(5)
def test_real_and_conj_of_a_real_tensor_are_differentiable_identities(a):
    for fn in (cr.real, cr.conj):
        assert_values(fn(T(a)), a, atol=0, rtol=0)
        assert fn(T(a, "float32")).dtype == cr.float32
        check_grads(fn, leaf(a))


# ----------------------------------------------------------------------------- data types


def test_dtypes_constants_and_version_are_namespace_attributes():
    for name in DTYPE_NAMES:
        assert getattr(cr, name) == np.dtype(name)
    assert (cr.e, cr.pi) == (np.e, np.pi)
    assert cr.inf == np.inf and np.isnan(cr.nan)
    assert cr.newaxis is None
    assert cr.__array_api_version__ == "2025.12"


@fails_on("torch", reason="PyTorch has no uint16, uint32 and uint64 promotion")
def test_result_type_agrees_with_the_reference_wherever_the_standard_promotes():
    for a, b in itertools.product(STANDARD_DTYPE_NAMES, repeat=2):
        try:
            expected = xs.result_type(getattr(xs, a), getattr(xs, b))
        except TypeError:
            continue
        assert cr.result_type(getattr(cr, a), getattr(cr, b)) == dtype_of(expected), (a, b)


def test_result_type_of_tensors_and_weak_python_scalars():
    x32 = T([1.0], "float32")
    assert cr.result_type(x32, 2.0) == cr.float32
    assert cr.result_type(2.0, x32, 1) == cr.float32
    assert cr.result_type(cr.int8, 1) == cr.int8
    assert cr.result_type(cr.float32, 1j) == cr.complex64
    assert cr.result_type(x32, cr.float64) == cr.float64
    assert cr.result_type(T([1], "int16"), cr.int32, T([1], "int8")) == cr.int32
    with pytest.raises(ValueError):
        cr.result_type(1.0, 2)


def test_can_cast_agrees_with_the_reference_within_each_kind():
    kinds = [["bool"], [n for n in DTYPE_NAMES if "int" in n], ["float32", "float64"]]
    kinds.append(["float32", "float64", "complex64", "complex128"])
    for names in kinds:
        for a, b in itertools.product(names, repeat=2):
            expected = xs.can_cast(getattr(xs, a), getattr(xs, b))
            assert cr.can_cast(getattr(cr, a), getattr(cr, b)) == expected, (a, b)
    assert cr.can_cast(T([1.0], "float32"), cr.float64)
    assert not cr.can_cast(T([1.0], "float64"), cr.float32)


def test_can_cast_follows_the_promotion_rules_across_kinds():
    # The promotion rules have no path from complex to real values.
    for source in ("complex64", "complex128"):
        for target in ("float32", "float64", "int64"):
            assert not cr.can_cast(getattr(cr, source), getattr(cr, target)), (source, target)


def test_dtypes_stand_for_numpys_but_are_not_equal_to_none():
    # NumPy's float64 dtype equals None (its default dtype): a check `dtype != None` would
    # skip float64. chainrule's dtypes don't, and are otherwise NumPy's.
    for name in DTYPE_NAMES:
        d = getattr(cr, name)
        assert d != None and not d == None and not None == d  # noqa: E711
        assert d == np.dtype(name) and np.dtype(name) == d and d == name
        assert hash(d) == hash(np.dtype(name))
        assert {d: 1}[np.dtype(name)] == 1 and {np.dtype(name): 1}[d] == 1
        assert (d.name, d.kind, d.itemsize) == (name, np.dtype(name).kind, np.dtype(name).itemsize)
        assert np.zeros(1, dtype=d).dtype == np.dtype(name)
        assert pickle.loads(pickle.dumps(d)) is d
        assert repr(d) == f"chainrule.{name}" and str(d) == name
    assert cr.float32 != cr.float64 and cr.float32 == cr.float32
    assert T([1.0], "float32").dtype == cr.float32
    assert cr.result_type(cr.float32, cr.float64) is cr.float64
    assert cr.__array_namespace_info__().dtypes()["float64"] is cr.float64


class _Shown:
    """An object that prints as `text` (a pytest parameter, a report's field)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


def test_comparing_a_dtype_with_anything_answers_and_never_raises():
    # NumPy parses a str() with a comma as a structured dtype spec, and raised on some
    # (ValueError, SyntaxError): array-api-tests' JSON report compares dtypes so.
    others = [
        _Shown(","), _Shown("x,(1"), _Shown("f8, (-1)f8"), _Shown("(2,)f8"), _Shown("a, b"),
        _Shown("spam"), _Shown("f8, f8"), _Shown("O"), ",", "x,(1", "f8, (-1)f8", "a, b",
        [1, 2], {}, object(),
        np.dtype("f8,f8"), 3.0,
    ]  # fmt: skip
    for other in others:
        for d in (cr.float64, cr.int32):
            assert (d == other) is False and (other == d) is False, other
            assert (d != other) is True, other
    assert cr.float64 in [_Shown("a, b"), cr.float64]
    assert cr.float64 == "float64" and cr.float64 == xs.float64


HALF_FUNCTIONS = {
    "sin": cr.sin,
    "exp": cr.exp,
    "tanh": cr.tanh,
    "cube": lambda x: x**3,
    "reciprocal": lambda x: 1.0 / (x + 3.0),
    "sqrt": lambda x: cr.sqrt(x * x + 1.0),
    "sum": cr.sum,
    "mean": cr.mean,
    "std": cr.std,
    "matmul": lambda x: cr.reshape(x, (2, 2)) @ cr.reshape(x, (2, 2)),
    "getitem": lambda x: x[1:] * x[0],
    "sort": cr.sort,
    "where": lambda x: cr.where(x > 0, x, -2.0 * x),
    "cumulative_sum": cr.cumulative_sum,
    "softmax": lambda x: cr.softmax(x, axis=0),
    "logsumexp": lambda x: cr.logsumexp(x, axis=0),
    "atan2": lambda x: cr.atan2(x, x + 2.0),
}


@skip_on("array_api_strict", reason="array_api_strict has no float16")
@pytest.mark.parametrize("fn", HALF_FUNCTIONS.values(), ids=HALF_FUNCTIONS.keys())
def test_float16_computes_in_float16_with_values_and_gradients_close_to_float64s(fn):
    # As PyTorch's half: results and gradients stay float16 (finite differences in float16
    # mean nothing: float64 from the same values is the reference, within float16's precision).
    a = np.array([0.3, -1.2, 0.7, 1.5], dtype=np.float16)
    x16, x64 = T(a, requires_grad=True), T(a.astype(np.float64), requires_grad=True)
    assert x16.dtype == cr.float16 and x16.requires_grad
    y16, y64 = fn(x16), fn(x64)
    (g16,) = cr.autograd.grad(cr.sum(y16 * y16), [x16])
    (g64,) = cr.autograd.grad(cr.sum(y64 * y64), [x64])
    assert y16.dtype == g16.dtype == cr.float16
    np.testing.assert_allclose(N(y16).astype(np.float64), N(y64), rtol=1e-2, atol=1e-2)
    np.testing.assert_allclose(N(g16).astype(np.float64), N(g64), rtol=2e-2, atol=2e-2)
    h16 = func.hessian(lambda x: cr.sum(fn(x)))(T(a))
    h64 = func.hessian(lambda x: cr.sum(fn(x)))(T(a.astype(np.float64)))
    assert h16.dtype == cr.float16
    np.testing.assert_allclose(N(h16).astype(np.float64), N(h64), rtol=2e-2, atol=2e-2)


@skip_on("array_api_strict", reason="array_api_strict has no float16")
def test_float16_is_a_real_floating_dtype_that_promotes_as_numpy():
    assert cr.float16 == np.float16 and str(cr.float16) == "float16"
    assert cr.isdtype(cr.float16, "real floating") and not cr.isdtype(cr.float16, "integral")
    assert cr.result_type(cr.float16, cr.float32) is cr.float32
    assert cr.result_type(T([1.0], "float16"), 2.0) is cr.float16
    assert cr.finfo(cr.float16).eps == float(np.finfo(np.float16).eps)
    assert cr.astype(T([1.5, -2.0]), cr.float16).dtype is cr.float16
    assert func.grad(lambda x: cr.sum(x * x))(T([1.0, 2.0], "float16")).dtype is cr.float16


def test_a_tensors_dtype_is_chainrules_and_not_equal_to_none():
    t = T([1.0, 2.0])
    assert t.dtype is cr.float64
    assert t.dtype != None  # noqa: E711


def test_finfo_and_iinfo_agree_with_the_reference_for_dtypes_and_tensors():
    for name in ("float32", "float64", "complex64", "complex128"):
        ref = xs.finfo(getattr(xs, name))
        for arg in (getattr(cr, name), T(np.zeros(1, dtype=name))):
            info = cr.finfo(arg)
            assert (info.bits, info.eps, info.max, info.min, info.smallest_normal) == (
                ref.bits, ref.eps, ref.max, ref.min, ref.smallest_normal
            )  # fmt: skip
            assert info.dtype == dtype_of(ref.dtype)
            assert isinstance(info.eps, float)
    for name in (n for n in DTYPE_NAMES if "int" in n):
        ref = xs.iinfo(getattr(xs, name))
        for arg in (getattr(cr, name), T(np.zeros(1, dtype=name))):
            info = cr.iinfo(arg)
            assert (info.bits, info.max, info.min) == (ref.bits, ref.max, ref.min)
            assert info.dtype == getattr(cr, name)


KINDS = [
    "bool", "signed integer", "unsigned integer", "integral", "real floating",
    "complex floating", "numeric", ("integral", "real floating"), "float32",
    ("bool", "complex64"),
]  # fmt: skip


def test_isdtype_agrees_with_the_reference():
    def kind_in(module, kind):
        if isinstance(kind, tuple):
            return tuple(kind_in(module, k) for k in kind)
        return getattr(module, kind) if kind in DTYPE_NAMES else kind

    for name, kind in itertools.product(STANDARD_DTYPE_NAMES, KINDS):
        expected = xs.isdtype(getattr(xs, name), kind_in(xs, kind))
        assert cr.isdtype(getattr(cr, name), kind_in(cr, kind)) == expected, (name, kind)
    with pytest.raises(ValueError):
        cr.isdtype(cr.float32, "floating")


@fails_on("torch", reason="PyTorch's Array API namespace lacks uint16, uint32 and uint64")
def test_namespace_info_reports_the_default_backend_with_chainrule_dtypes():
    info = cr.__array_namespace_info__()
    ref = BACKEND.__array_namespace_info__()
    expected = {k: dtype_of(d) for k, d in ref.default_dtypes().items()}
    assert info.default_dtypes() == expected
    assert set(info.dtypes()) == set(ref.dtypes())
    assert info.dtypes(kind="integral") == {n: getattr(cr, n) for n in DTYPE_NAMES if "int" in n}
    assert info.dtypes(kind=("bool", "real floating")) == {
        n: getattr(cr, n) for n in ("bool", "float32", "float64")
    }
    assert {"boolean indexing", "data-dependent shapes"} <= set(info.capabilities())
    assert info.default_device() in info.devices()
    assert isinstance(info.devices(), tuple)  # a list before 2025.12


@fails_on("jax", reason="JAX arrays are immutable: astype to the same dtype returns the array")
def test_astype_copies_unless_told_not_to_and_the_dtype_matches():
    for requires_grad in (False, True):
        x = leaf([1.0, 2.0]) if requires_grad else T([1.0, 2.0])
        assert cr.astype(x, cr.float64, copy=False) is x
        y = cr.astype(x, cr.float64)
        assert y is not x and y._data is not x._data
        assert cr.astype(x, cr.float32, copy=False).dtype == cr.float32
    x = leaf([1.0, 2.0], "float32")
    (g,) = grads_of(lambda t: cr.astype(t, cr.float64) * 3.0, x)
    assert g.dtype == cr.float32
    assert_values(g, [3.0, 3.0])


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


# ----------------------------------------------------------------------------- reductions


STANDARD_SIGNATURES = [
    "sum", "prod", "mean", "max", "min", "var", "std", "cumulative_sum", "cumulative_prod",
    "diff", "all", "any", "astype", "can_cast", "finfo", "iinfo", "isdtype", "result_type",
    "hypot", "logaddexp", "copysign", "nextafter", "reciprocal", "signbit", "real", "imag",
    "conj", "add", "equal", "isnan",
]  # fmt: skip


@pytest.mark.parametrize("name", STANDARD_SIGNATURES)
def test_signatures_name_their_parameters_as_the_standard(name):
    def parameters(fn):
        return [(p.name, p.kind) for p in inspect.signature(fn).parameters.values()]

    assert parameters(getattr(cr, name)) == parameters(getattr(xs, name))


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


# ----------------------------------------------------------------------------- special cases
# The standard's special cases that NumPy misses; chainrule gets them right on every backend.

INF, NAN = math.inf, math.nan


def same_value(got, expected):
    """Equal values, NaN matching NaN and zeros matching in sign, for each real part."""
    for g, e in zip(np.ravel(got).view(np.float64), np.ravel(expected).view(np.float64)):
        assert (math.isnan(g) and math.isnan(e)) or (
            g == e and math.copysign(1, g) == math.copysign(1, e)
        ), (got, expected)


@pytest.mark.filterwarnings("ignore:invalid value|divide by zero")
def test_floor_divide_with_infinite_operands_is_ieee_division():
    x = [INF, -INF, INF, -INF, 1.5, -1.5, 1.5, -1.5, INF, 7.0, -7.0]
    y = [2.0, 2.0, -2.0, -2.0, INF, INF, -INF, -INF, INF, 2.0, 0.0]
    expected = [INF, -INF, -INF, INF, 0.0, -0.0, -0.0, 0.0, NAN, 3.0, -INF]
    same_value(N(cr.floor_divide(T(x), T(y))), expected)
    same_value(N(T(x) // T(y)), expected)
    same_value(N(T([INF, 3.0]) // 2.0), [INF, 1.0])
    same_value(N(-1.0 // T([INF, -INF])), [-0.0, 0.0])
    assert N(cr.floor_divide(T([7, -7]), T([2, 2]))).tolist() == [3, -4]


@pytest.mark.filterwarnings("ignore:invalid value")
def test_in_place_floor_divide_with_infinite_operands():
    x = T([INF, 1.5, -1.5])
    x //= T([2.0, -INF, INF])
    same_value(N(x), [INF, -0.0, -0.0])


@pytest.mark.filterwarnings("ignore:invalid value")
def test_complex_expm1_special_cases():
    cases = [  # (input, result); a dict would merge the signed zeros
        (complex(0.0, 0.0), complex(0.0, 0.0)),
        (complex(-0.0, 0.0), complex(0.0, 0.0)),
        (complex(0.0, -0.0), complex(0.0, -0.0)),
        (complex(INF, 0.0), complex(INF, 0.0)),
        (complex(INF, INF), complex(INF, NAN)),
        (complex(INF, NAN), complex(INF, NAN)),
        (complex(-INF, INF), complex(-1.0, 0.0)),
        (complex(-INF, NAN), complex(-1.0, 0.0)),
        (complex(NAN, 0.0), complex(NAN, 0.0)),
        (complex(NAN, 2.0), complex(NAN, NAN)),
        (complex(1.0, INF), complex(NAN, NAN)),
    ]
    got = N(cr.expm1(T([z for z, _ in cases], "complex128")))
    same_value(got, np.array([r for _, r in cases]))
    z = np.array([0.5 + 0.25j, -1e-10 + 1e-10j])
    np.testing.assert_allclose(N(cr.expm1(T(z))), np.expm1(z), rtol=1e-15)


def test_complex_tanh_at_infinite_real_part():
    z = [complex(INF, 0.5), complex(INF, 2.0), complex(INF, -2.0), complex(-INF, 2.0)]
    same_value(
        N(cr.tanh(T(z, "complex128"))), np.array([1 + 0j, 1 + 0j, complex(1, -0.0), -1 + 0j])
    )
    w = np.array([0.3 + 0.2j, -2 + 1j])
    np.testing.assert_allclose(N(cr.tanh(T(w, "complex64"))), np.tanh(w.astype(np.complex64)))
