"""Creation functions: values, dtype and shape against NumPy's functions of the same name, and
results that do not require grad (even when made like a tensor that does)."""

import numpy as np
import pytest

import chainrule as cr
from conftest import N
from helpers import leaf

CREATIONS = {
    "zeros": lambda xp: xp.zeros((2, 3)),
    "zeros float32": lambda xp: xp.zeros(4, dtype=xp.float32),
    "ones": lambda xp: xp.ones((3,)),
    "ones int32": lambda xp: xp.ones((2, 2), dtype=xp.int32),
    "full float": lambda xp: xp.full((2,), 3.5),
    "full int": lambda xp: xp.full((2, 2), 7),
    "full bool": lambda xp: xp.full((3,), True),
    "full float32": lambda xp: xp.full((1, 2), 0.1, dtype=xp.float32),
    "arange stop": lambda xp: xp.arange(5),
    "arange start stop step": lambda xp: xp.arange(1, 8, 2),
    "arange float": lambda xp: xp.arange(0.0, 1.0, 0.25),
    "arange float32": lambda xp: xp.arange(3, dtype=xp.float32),
    "linspace": lambda xp: xp.linspace(0, 1, 5),
    "linspace no endpoint": lambda xp: xp.linspace(-1, 1, 4, endpoint=False),
    "linspace float32": lambda xp: xp.linspace(0, 1, 3, dtype=xp.float32),
    "eye": lambda xp: xp.eye(3),
    "eye rectangular offset": lambda xp: xp.eye(2, 4, k=1),
    "eye below float32": lambda xp: xp.eye(3, k=-1, dtype=xp.float32),
}


@pytest.mark.parametrize("name", CREATIONS)
def test_creation_matches_numpy_and_needs_no_grad(name):
    out, expected = CREATIONS[name](cr), CREATIONS[name](np)
    assert out.dtype == expected.dtype
    assert out.shape == expected.shape
    np.testing.assert_array_equal(N(out), expected)
    assert not out.requires_grad


LIKE = {
    "zeros_like": lambda xp, x: xp.zeros_like(x),
    "zeros_like float32": lambda xp, x: xp.zeros_like(x, dtype=xp.float32),
    "ones_like": lambda xp, x: xp.ones_like(x),
    "ones_like int64": lambda xp, x: xp.ones_like(x, dtype=xp.int64),
    "full_like": lambda xp, x: xp.full_like(x, 2.5),
    "full_like float32": lambda xp, x: xp.full_like(x, -1.0, dtype=xp.float32),
}


@pytest.mark.parametrize("name", LIKE)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_like_creation_matches_numpy_and_needs_no_grad(name, dtype):
    values = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=dtype)
    out, expected = LIKE[name](cr, leaf(values)), LIKE[name](np, values)
    assert out.dtype == expected.dtype
    assert out.shape == expected.shape
    np.testing.assert_array_equal(N(out), expected)
    assert not out.requires_grad
