"""Argument forms NumPy's functions take that chainrule's own lack in the standard: Python's
scalar types as dtypes (float, int, bool, complex, as NumPy and PyTorch read them) and scalars
for np.diff's prepend and append; values against NumPy's, gradients against finite
differences."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T, fails_on

A = np.random.default_rng(5).standard_normal((3, 4))


@pytest.mark.parametrize("kind", [float, int, bool, complex], ids=lambda t: t.__name__)
def test_python_scalar_types_name_the_dtypes_numpy_gives_them(kind):
    expected = np.dtype(kind)
    assert cr.zeros(3, dtype=kind).dtype == expected
    assert cr.asarray([1, 0], dtype=kind).dtype == expected
    assert cr.astype(T([1.0, 0.0]), kind).dtype == expected
    assert T([1.0, 0.0]).astype(kind).dtype == expected
    assert cr.isdtype(kind, "bool") == (kind is bool)


@pytest.mark.parametrize("kind", [float, int, bool], ids=lambda t: t.__name__)
def test_numpy_functions_take_python_scalar_types_as_dtypes(kind):
    ints = np.arange(6).reshape(2, 3)
    x = T(ints)
    for fn in (
        lambda a: np.sum(a, axis=0, dtype=kind),
        lambda a: np.zeros_like(a, dtype=kind),
        lambda a: np.full_like(a, 1, dtype=kind),
        lambda a: np.astype(a, kind),
        lambda a: np.cumsum(a, dtype=kind if kind is not bool else int),  # PyTorch: no bool
    ):
        out, expected = fn(x), fn(ints)
        assert out.dtype == expected.dtype
        np.testing.assert_array_equal(N(out), expected)


def test_python_float_as_dtype_keeps_the_graph():
    x = T(A, requires_grad=True)
    assert gradcheck(lambda a: np.sum(a * a, axis=1, dtype=float), (x,))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"prepend": 0.0},
        pytest.param(
            {"append": 2},
            marks=fails_on("array_api_strict", reason="it promotes no int64 with float64"),
        ),
        {"prepend": 0.5, "append": [[1.0], [2.0], [3.0]]},
        {"prepend": 1.5, "axis": 0, "n": 2},
    ],
    ids=["prepend", "append", "both", "axis 0"],
)
def test_numpy_diff_takes_scalars_for_prepend_and_append(kwargs):
    out = np.diff(T(A), **kwargs)
    expected = np.diff(A, **kwargs)
    assert out.dtype == expected.dtype
    np.testing.assert_allclose(N(out), expected, rtol=1e-14)


def test_diff_differentiates_in_a_0d_prepend_and_in_x():
    x, p = T(A, requires_grad=True), T(0.3, requires_grad=True)

    def fn(x, p):
        return cr.diff(x, n=2, axis=0, prepend=p, append=1.0)

    assert gradcheck(fn, (x, p))
    assert gradgradcheck(fn, (x, p))
