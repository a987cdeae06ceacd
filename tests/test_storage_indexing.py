"""Indexing and item assignment on other storage libraries against NumPy storage: random
programs (keys of integers, slices of any step, None, Ellipsis, integer and boolean arrays,
Python lists; reads and writes, values and gradients to second order) give on PyTorch storage
(and JAX's, when it is the backend under test) what they give on NumPy's."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
from chainrule import autograd
from conftest import LIBRARY, examples

# Libraries whose arrays follow NumPy's indexing rules once chainrule has filled their gaps.
# JAX only as the backend under test: its 64-bit types are switched on then, not here.
STORAGES = ["torch"] + (["jax"] if LIBRARY == "jax" else [])
_MODULES = {"torch": "torch", "jax": "jax.numpy"}


def _storage(name: str):
    """The function that makes an array of library `name` from a NumPy array."""
    module = pytest.importorskip(_MODULES[name])
    return module.asarray


def _entries(data, shape: tuple, unique: bool) -> list:
    """A key for an array of `shape`, as data: ints, slices, None, Ellipsis, and ("int",
    values), ("bool", values) or ("list", values) for arrays and lists. Integer arrays
    share one length (they broadcast); `unique`: no position twice (writes)."""
    used = data.draw(st.integers(min(1, len(shape)), len(shape)), label="axes indexed")
    length = data.draw(st.integers(1, 3), label="array length")
    # Arrays (where libraries differ most) drawn more often than the rest.
    kinds = ["array", "int", "slice", "array", "list", "bool", "bool2", "0-d"]
    out: list = []
    arrays = masks = False
    axis = 0
    while axis < used:
        n = shape[axis]
        kind = data.draw(st.sampled_from(kinds), label="entry")
        if kind == "bool2" and (axis + 1 >= used or arrays or masks):
            kind = "int"
        if kind in ("bool", "bool2") and (arrays or masks) or kind in ("array", "list") and masks:
            kind = "slice"
        if kind == "int":
            out.append(data.draw(st.integers(-n, n - 1)))
        elif kind == "0-d":
            out.append(("int", np.array(data.draw(st.integers(-n, n - 1)))))
        elif kind == "slice":
            ends = st.none() | st.integers(-n - 1, n + 1)
            step = data.draw(st.sampled_from([None, 1, 2, -1, -2]))
            out.append(slice(data.draw(ends), data.draw(ends), step))
        elif kind in ("array", "list"):
            arrays = True
            if unique:
                length = min(length, n)
                values = np.array(data.draw(st.permutations(range(n)))[:length])
            else:
                values = np.array(data.draw(st.lists(st.integers(-n, n - 1), min_size=length,
                                                     max_size=length)))  # fmt: skip
            out.append(("int" if kind == "array" else "list", values))
        else:
            masks = True
            mask_shape = shape[axis : axis + (2 if kind == "bool2" else 1)]
            cells = st.lists(st.booleans(), min_size=int(np.prod(mask_shape)),
                             max_size=int(np.prod(mask_shape)))  # fmt: skip
            out.append(("bool", np.array(data.draw(cells), dtype=bool).reshape(mask_shape)))
            axis += len(mask_shape) - 1
        axis += 1
    if data.draw(st.booleans(), label="newaxis"):
        out.insert(data.draw(st.integers(0, len(out))), None)
    if used < len(shape) and data.draw(st.booleans(), label="ellipsis"):
        out.insert(data.draw(st.integers(0, len(out))), Ellipsis)
    return out


def _key(entries: list, make) -> tuple:
    """The key of `entries` with arrays of the library `make` makes."""
    out = []
    for e in entries:
        if isinstance(e, tuple):
            out.append(e[1].tolist() if e[0] == "list" else cr.asarray(make(e[1])))
        else:
            out.append(e)
    return tuple(out)


def _numpy_key(entries: list) -> tuple:
    return tuple(e[1] if isinstance(e, tuple) else e for e in entries)


def _read(a, entries, weights, make) -> list:
    """x[key] weighted and summed: its values, gradient and a second-order gradient."""
    x = cr.asarray(make(a), requires_grad=True)
    y = x[_key(entries, make)]
    (g,) = autograd.grad(cr.sum(y * cr.asarray(make(weights))), [x], create_graph=True)
    (gg,) = autograd.grad(cr.sum(g * g * x), [x])
    return [y.detach(), g.detach(), gg]


def _write(a, entries, v, weights, make) -> list:
    """t = x * 1 with t[key] = 2 v: its values and the gradients of a loss of it by x and v
    (v may have another floating dtype than x)."""
    x = cr.asarray(make(a), requires_grad=True)
    value = cr.asarray(make(v), requires_grad=True)
    t = x * 1.0
    t[_key(entries, make)] = value * 2.0
    loss = cr.sum(t * t * cr.asarray(make(weights)))
    gx, gv = autograd.grad(loss, [x, value], materialize_grads=True)
    return [t.detach(), gx, gv]


def _draw_program(data, write: bool):
    """A read (write=False) or write program of a drawn key, as a function of the library's
    array maker; None for a key NumPy refuses."""
    shape = tuple(data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=4), label="shape"))
    dtype = data.draw(st.sampled_from([np.float32, np.float64]), label="dtype")
    entries = _entries(data, shape, unique=write)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), label="seed"))
    a = rng.standard_normal(shape).astype(dtype)
    try:
        picked = a[_numpy_key(entries)]
    except IndexError:  # a key NumPy refuses (an index out of range after all)
        return None
    if not write:
        weights = rng.standard_normal(picked.shape).astype(dtype)
        return lambda make: _read(a, entries, weights, make)
    drop = data.draw(st.integers(0, picked.ndim), label="value axes dropped")
    value_dtype = data.draw(st.sampled_from([np.float64, np.float32]), label="value dtype")
    v = rng.standard_normal(picked.shape[drop:]).astype(value_dtype)
    weights = rng.standard_normal(shape).astype(dtype)
    return lambda make: _write(a, entries, v, weights, make)


@pytest.mark.parametrize("storage", STORAGES)
@examples(60)
@given(data=st.data())
def test_indexing_programs_give_numpys_values_and_gradients_on_other_storage(storage, data):
    make = _storage(storage)
    for write in (False, True):
        program = _draw_program(data, write)
        if program is None:
            continue
        expected = program(np.asarray)
        got = program(make)
        for g, e in zip(got, expected):
            g, e = np.asarray(g.numpy()), np.asarray(e.numpy())
            assert g.shape == e.shape
            assert g.dtype == e.dtype
            np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("storage", STORAGES)
def test_integers_and_arrays_apart_put_the_array_axes_first_on_other_storage(storage):
    # The standard's and NumPy's rule: [1, 2, 1] and 0 are advanced indices separated by a
    # slice, so their axis goes first. PyTorch selects by 0 first and kept (2, 3, 2).
    make = _storage(storage)
    a = np.arange(12.0).reshape(2, 3, 2, 1)
    x = cr.asarray(make(a), requires_grad=True)
    y = x[:, [1, 2, 1], ::-1, 0]
    assert y.shape == (3, 2, 2)
    np.testing.assert_array_equal(np.asarray(y.detach().numpy()), a[:, [1, 2, 1], ::-1, 0])
    weights = np.arange(12.0).reshape(3, 2, 2)
    cr.sum(y * cr.asarray(make(weights))).backward()
    expected = np.zeros_like(a)
    np.add.at(expected, (slice(None), [1, 2, 1], slice(None, None, -1), 0), weights)
    np.testing.assert_array_equal(np.asarray(x.grad.numpy()), expected)
    t = cr.asarray(make(np.zeros((2, 3, 2, 1))))
    t[:, [2, 0], ::-1, 0] = cr.asarray(make(np.arange(8.0).reshape(2, 2, 2)))
    expected = np.zeros((2, 3, 2, 1))
    expected[:, [2, 0], ::-1, 0] = np.arange(8.0).reshape(2, 2, 2)
    np.testing.assert_array_equal(np.asarray(t.numpy()), expected)


@pytest.mark.parametrize("storage", STORAGES)
def test_item_assignment_casts_a_value_of_another_floating_dtype_on_other_storage(storage):
    # PyTorch's index_put refused it ("Index put requires the source and destination dtypes
    # match"); NumPy casts the value to the array's dtype.
    make = _storage(storage)
    w = cr.asarray(make(np.ones(4, dtype=np.float32)), requires_grad=True)
    v = cr.asarray(make(np.array([2.0, 3.0])), requires_grad=True)
    t = w * 1.0
    t[cr.asarray(make(np.array([0, 2])))] = v
    assert t.dtype == cr.float32
    np.testing.assert_array_equal(np.asarray(t.detach().numpy()), [2.0, 1.0, 3.0, 1.0])
    cr.sum(t * t).backward()
    np.testing.assert_array_equal(np.asarray(v.grad.numpy()), [4.0, 6.0])
    assert v.grad.dtype == cr.float64


@pytest.mark.regression
@pytest.mark.parametrize("storage", STORAGES)
def test_a_0d_mask_writes_a_0d_tensor_on_other_storage(storage):
    # SciPy's stats functions write `x[mask] = nan` with a 0-d x and mask: the bounds check
    # looked up the length of an axis the 0-d array lacks (IndexError, tuple index).
    make = _storage(storage)
    x = cr.asarray(make(np.array(2.0)), requires_grad=True)
    for mask, expected in ((True, 5.0), (False, 2.0)):
        t = x * 1.0
        t[cr.asarray(make(np.array(mask)))] = 5.0
        assert t.shape == () and float(t) == expected
        (g,) = autograd.grad(t, [x])
        assert float(g) == (0.0 if mask else 1.0)


def test_a_numpy_write_with_a_mask_before_an_ellipsis_runs():
    # The check whether a write covers every element looked the Ellipsis up with ==, which
    # compared it with the mask: "The truth value of an array ... is ambiguous".
    x = cr.asarray(np.ones((2, 2, 4)), requires_grad=True)
    t = x * 1.0
    t[cr.asarray(np.array([True, True])), ..., :2, None] = cr.asarray(np.full((2, 1), 3.0))
    expected = np.ones((2, 2, 4))
    expected[:, :, :2] = 3.0
    np.testing.assert_array_equal(t.detach().numpy(), expected)
    (g,) = autograd.grad(cr.sum(t), [x])
    np.testing.assert_array_equal(g.numpy(), (expected == 1.0).astype(float))
