"""Creation functions: zeros, ones, full, arange, linspace, eye and the *_like ones (values,
dtype and shape against NumPy's, results that need no grad even when made like a tensor that
does); asarray and tensor (copies that stay differentiable, clear errors for data that is no
number); tril, triu and meshgrid (values against NumPy, first and second derivatives)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T
from helpers import leaf

# ----------------------------------------------------------------------------- from a shape

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


# ----------------------------------------------------------------------------- asarray copies


def test_a_copy_of_a_tensor_that_requires_grad_is_recorded():
    x = T([1.0, 2.0, 3.0], requires_grad=True)
    y = cr.asarray(x, copy=True)
    assert y.requires_grad and y.grad_fn is not None
    cr.sum(y * x).backward()
    np.testing.assert_array_equal(N(x.grad), [2.0, 4.0, 6.0])


def test_a_copy_mixed_with_its_original_gets_every_gradient():
    # The pattern of SciPy's logsumexp(b=...) and scikit-learn's scalers: copy, then combine.
    x = T([0.5, 1.5], requires_grad=True)

    def f(t):
        c = cr.asarray(t, copy=True)
        return cr.sum(c * c) - cr.sum(t)

    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


@pytest.mark.parametrize("dtype", [None, "float64", "float32"])
def test_asarray_with_dtype_and_copy_stays_differentiable(dtype):
    x = T([0.25, 0.5], requires_grad=True)
    y = cr.asarray(x, dtype=None if dtype is None else getattr(cr, dtype), copy=True)
    assert y.requires_grad
    cr.sum(y * 3.0).backward()
    np.testing.assert_allclose(N(x.grad), [3.0, 3.0])


def test_a_copy_does_not_share_memory_and_no_copy_is_the_tensor_itself():
    x = T([1.0, 2.0])
    y = cr.asarray(x, copy=True)
    y[0] = 5.0
    assert N(x)[0] == 1.0
    assert cr.asarray(x) is x
    assert cr.asarray(x, copy=False) is x


def test_asarray_refuses_a_cast_without_copy():
    with pytest.raises(ValueError, match="copy=False"):
        cr.asarray(T([1.0]), dtype=cr.float32, copy=False)


def test_reshape_with_copy_copies_and_stays_differentiable():
    x = T([[1.0, 2.0], [3.0, 4.0]])
    y = cr.reshape(x, (4,), copy=True)
    y[0] = 9.0
    assert N(x)[0, 0] == 1.0
    leaf = T([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    assert gradcheck(lambda t: cr.reshape(t, (4,), copy=True) * t[0, 0], (leaf,))


# ----------------------------------------------------------------------------- bad data


@pytest.mark.parametrize("make", [cr.tensor, cr.asarray])
@pytest.mark.parametrize(
    "data, what",
    [([1, "a"], "str: 'a' at index \\[1\\]"), ([1.0, None], "NoneType: None at index \\[1\\]"),
     ([[1, 2], [3, b"x"]], "bytes: b'x' at index \\[1, 1\\]")],
)  # fmt: skip
def test_data_that_is_no_number_is_a_type_error(make, data, what):
    with pytest.raises(TypeError, match=f"a tensor holds numbers, not {what}"):
        make(data)


@pytest.mark.parametrize("make", [cr.tensor, cr.asarray])
@pytest.mark.parametrize("data", [[1, 2**70], 2**70, [[0], [-(2**64)]]])
def test_an_integer_no_dtype_holds_is_an_overflow_error(make, data):
    with pytest.raises(OverflowError, match="out of the range of every integer dtype"):
        make(data)


def test_integers_at_the_ends_of_the_integer_dtypes_convert():
    assert cr.tensor([2**64 - 1]).dtype == cr.uint64
    assert cr.tensor([-(2**63)]).dtype == cr.int64


def test_a_numpy_array_of_strings_is_a_type_error():
    with pytest.raises(TypeError, match="chainrule has no dtype <U1"):
        cr.asarray(np.asarray(["a"]))


@pytest.mark.skipif(np.dtype(np.longdouble) == np.float64, reason="longdouble is float64 here")
@pytest.mark.parametrize("dtype", [np.longdouble, np.clongdouble])
def test_an_array_of_longdouble_is_refused_at_creation_naming_the_dtypes(dtype):
    # It was accepted, then .dtype, requires_grad and func.grad raised KeyError.
    a = np.ones(3, dtype=dtype)
    names = "bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64, float16, float32"
    for make in (
        cr.asarray, cr.tensor, lambda a: cr.asarray([1.0], dtype=dtype), cr.sin,
        lambda a: cr.ones(3) + a, lambda a: cr.asarray(a, requires_grad=True),
    ):  # fmt: skip
        with pytest.raises(TypeError, match=f"chainrule has no dtype .*: its dtypes are {names}"):
            make(a)


# ----------------------------------------------------------------------------- triangles, grids


@pytest.mark.parametrize("k", [-1, 0, 2])
def test_tril_and_triu_match_numpy_and_differentiate(k):
    values = np.arange(1.0, 13.0).reshape(3, 4) / 7.0
    x = T(values, requires_grad=True)
    np.testing.assert_array_equal(N(cr.tril(x, k=k)), np.tril(values, k))
    np.testing.assert_array_equal(N(cr.triu(x, k=k)), np.triu(values, k))
    for f in (cr.tril, cr.triu):
        assert gradcheck(lambda t, f=f: f(t, k=k) * t, (x,))
        assert gradgradcheck(lambda t, f=f: f(t, k=k) * t, (x,))


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid_matches_numpy_and_differentiates(indexing):
    a, b, c = T([1.0, 2.0], requires_grad=True), T([3.0, 4.0, 5.0], requires_grad=True), T([6.0])
    grids = cr.meshgrid(a, b, c, indexing=indexing)
    assert isinstance(grids, tuple)  # a tuple in 2025.12, a list before
    expected = np.meshgrid([1.0, 2.0], [3.0, 4.0, 5.0], [6.0], indexing=indexing)
    for got, want in zip(grids, expected):
        np.testing.assert_array_equal(N(got), want)

    def product(p, q):
        gp, gq = cr.meshgrid(p, q, indexing=indexing)
        return gp * gq * gq

    assert gradcheck(product, (a, b))
    assert gradgradcheck(product, (a, b))


def test_meshgrid_rejects_an_unknown_indexing():
    with pytest.raises(ValueError, match="indexing"):
        cr.meshgrid(T([1.0]), indexing="xz")
