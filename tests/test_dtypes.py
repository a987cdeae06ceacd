"""Data types: chainrule's dtypes (NumPy's, never equal to None), the data type functions
(result_type, can_cast, finfo, iinfo, isdtype) against array_api_strict, namespace info,
float16 computation, and astype's copies and gradients."""

import itertools
import pickle

import array_api_strict as xs
import numpy as np
import pytest

import chainrule as cr
from chainrule import _backend, func
from conftest import BACKEND, N, T, fails_on, skip_on
from helpers import (
    assert_values,
    grads_of,
    leaf,
)

DTYPE_NAMES = _backend.DTYPE_NAMES
STANDARD_DTYPE_NAMES = tuple(n for n in DTYPE_NAMES if n != "float16")  # the reference's


def dtype_of(d):
    """A dtype of array_api_strict (or any backend) as chainrule's."""
    return _backend.from_backend_dtype(d)


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
