"""Where NumPy promotes inputs together, NumPy's functions on tensors do too: np.clip of integers
to floating bounds is floating (chainrule.clip keeps x's dtype, the standard's), as are the
Tensor.clamp and Tensor.clip (PyTorch's); np.select's default, np.linspace's ends: weak scalars.
NumPy-backed tensors whatever the backend under test: the bounds are NumPy's."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck
from conftest import N

BOUNDS = [
    (0.5, 3.5),
    (1, 2),
    (np.float32(0.5), None),
    (None, np.array([1.0, 2.5, 0.0])),
    (np.int64(1), 2),
]


@pytest.mark.parametrize("dtype", ["int64", "int8", "float32", "bool"])
@pytest.mark.parametrize(("lo", "hi"), BOUNDS, ids=str)
def test_numpy_clip_promotes_x_with_its_bounds_as_numpy(lo, hi, dtype):
    a = np.array([3, 4, 0]).astype(dtype)
    expected = np.clip(a, lo, hi)
    out = np.clip(cr.asarray(a), lo, hi)
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(N(out), expected)


def test_chainrules_clip_keeps_the_dtype_of_x():
    assert cr.clip(cr.asarray(np.array([3, 4, 0])), 0.5, 3.5).dtype == cr.int64


def test_numpy_clip_with_tensor_bounds_differentiates_in_all_three():
    x = cr.tensor(np.array([0.3, -1.2, 2.5, 0.9]), requires_grad=True)
    lo = cr.tensor(np.array([0.0, -1.0, 0.5, 1.0]), requires_grad=True)
    hi = cr.tensor(np.array(2.0), requires_grad=True)
    assert gradcheck(lambda a, b, c: np.clip(a, b, c), (x, lo, hi))


@pytest.mark.parametrize("method", ["clamp", "clip"])
def test_tensor_clamp_and_clip_methods_promote_as_pytorch_and_numpy(method):
    t = cr.asarray(np.array([3, 4, 0]))
    out = getattr(t, method)(0.5, 3.5)
    assert out.dtype == cr.float64
    np.testing.assert_array_equal(N(out), [3.0, 3.5, 0.5])
    assert getattr(t, method)(1, 2).dtype == cr.int64


@pytest.mark.parametrize("default", [0, 1.5, 2j, np.float64(1.0)], ids=repr)
@pytest.mark.parametrize("dtype", ["float32", "int32", "bool"])
def test_numpy_select_promotes_its_choices_with_the_default_as_numpy(dtype, default):
    a = np.array([1.5, -2.0, 0.0, 3.0]).astype(dtype)
    expected = np.select([a > 0, a == 0], [a, a * 2], default)
    t = cr.asarray(a)
    out = np.select([t > 0, t == 0], [t, t * 2], default)
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(N(out), expected)


@pytest.mark.parametrize("fn", [np.linspace, np.logspace], ids=["linspace", "logspace"])
@pytest.mark.parametrize(
    ("start", "stop"),
    [(np.float32(0.5), 2.0), (1.0, np.array([1.0, 2.0], np.float32)), (np.int64(1), 2.5)],
    ids=["f32 start", "f32 stop", "int start"],
)
def test_numpy_linspace_and_logspace_take_python_ends_as_weak_scalars(fn, start, stop):
    expected = fn(start, stop, 4)
    as_tensor = [
        cr.asarray(np.asarray(v)) if isinstance(v, (np.ndarray, np.generic)) else v
        for v in (start, stop)
    ]
    out = fn(*as_tensor, 4)
    assert out.dtype == expected.dtype
    np.testing.assert_allclose(N(out), expected, rtol=1e-6)
