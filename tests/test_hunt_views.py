"""Wrong values found by a random hunt over views, in-place writes and indexing (programs run
in PyTorch 2.13 and chainrule, gradients checked by finite differences): each test states
the right answer, worked out by hand."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from conftest import N, T, fails_on, skip_on
from helpers import assert_values, leaf


def test_unbind_of_a_vector_with_history_gives_views_that_see_a_later_write():
    # unbind of a 1-d tensor gave 0-d copies (NumPy's x[i] is a scalar, not a view): a write
    # into the input left them with the old values and version, and their gradient went to
    # the values before the write.
    b = leaf([1.0, 2.0, 3.0])
    t = b * 2.0
    parts = t.unbind(0)
    t.mul_(3.0)
    assert_values(parts[1], 12.0)
    assert parts[1]._version == t._version == 1
    (parts[1] * 1.0).backward()
    assert_values(b.grad, [0.0, 6.0, 0.0])


def test_unbind_of_a_vector_without_history_shares_its_memory():
    x = T([1.0, 2.0, 3.0])
    parts = cr.unstack(x)
    middle = parts[1]
    middle += 10.0
    assert_values(x, [1.0, 12.0, 3.0])
    x += 1.0
    np.testing.assert_array_equal([N(p) for p in parts], [2.0, 13.0, 4.0])
    assert parts[0]._version == x._version == 2


MASK2 = np.array([True, True])
NO_BOOL = fails_on("dask", "array_api_strict", reason="no Python bool in an index key there")
NO_TWO_MASKS = fails_on("dask", "array_api_strict", reason="one mask in a key, alone, there")


@pytest.mark.parametrize(
    "shape, key",
    [
        pytest.param((1, 2, 3), False, marks=NO_BOOL),
        pytest.param((2, 2, 3), False, marks=NO_BOOL),
        pytest.param((1, 2, 3), (False, slice(None)), marks=NO_BOOL),
        pytest.param((2, 2, 3), (MASK2, MASK2), marks=NO_TWO_MASKS),
    ],
    ids=["False-one", "False", "False-slice", "two-masks"],
)
def test_a_write_by_a_key_that_covers_only_part_leaves_the_rest_its_gradient(shape, key):
    # covers_all read a Python bool as an integer (False on an axis of one element "covered"
    # it) and two masks as covering each their axes, where they select elements pairwise:
    # the gradient of the elements not written was dropped (zeros).
    c = np.linspace(-1.0, 1.0, 12)[: np.prod(shape)].reshape(shape)
    written = np.zeros(shape, dtype=bool)
    written[key] = True
    assert not written.all()
    x = leaf(np.arange(c.size, dtype=float).reshape(shape))
    y = x * 1.0
    parts = key if isinstance(key, tuple) else (key,)
    y[tuple(T(k) if isinstance(k, np.ndarray) else k for k in parts)] = 5.0
    cr.sum(y * T(c)).backward()
    assert_values(x.grad, np.where(written, 0.0, c))


@fails_on("dask", "array_api_strict", reason="no Python bool in an index key there")
@pytest.mark.filterwarnings("ignore:vmap. there is no batching rule")
@pytest.mark.parametrize(
    "key",
    [(1, slice(0, 2), False), (0, slice(None), True), (Ellipsis, False), (1, Ellipsis, True)],
    ids=str,
)
def test_vmap_of_a_key_with_a_python_bool_apart_from_an_integer(key):
    # NumPy reads a Python bool as a 0-d mask, an advanced index: beside an integer with a
    # slice between them, their axes go first, before the batch axis. vmap took the bool for
    # an integer and indexed the batch as a whole (ValueError, or the batch axis moved).
    b = np.arange(2 * 4 * 3 * 4.0).reshape(2, 4, 3, 4)
    expected = np.stack([s[key] for s in b])
    assert_values(func.vmap(lambda t: t[key])(T(b)), expected)

    def write(t):
        t = t * 1.0
        t[key] = -1.0
        return t

    written = b.copy()
    for s in written:
        s[key] = -1.0
    assert_values(func.vmap(write)(T(b)), written)


def test_masked_fill_refuses_a_mask_of_integers_and_a_value_of_one_dimension():
    # Both were taken (a nonzero integer as True; the value broadcast), where PyTorch refuses.
    x = T([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="masked_fill_ only supports boolean masks, but got"):
        x.masked_fill(T([1, 0, 1]), 9.0)
    with pytest.raises(RuntimeError, match="only supports a 0-dimensional value tensor, but got"):
        x.masked_fill(T([True, False, True]), T([2.0]))
    assert_values(x.masked_fill(T([True, False, True]), T(2.0)), [2.0, 2.0, 2.0])


def _zeroed_through_reshape(y, shape):
    r = cr.reshape(y, shape)
    r *= 0.0
    return r


@pytest.mark.parametrize("library", ["jax", "dask"])
def test_a_reshape_that_copies_in_pytorch_copies_on_arrays_without_layout(library):
    # JAX and Dask keep views by bookkeeping, where every reshape was taken for a view: a
    # write into the reshape of a transposed tensor reached the tensor (PyTorch's and
    # NumPy's reshape copies there, and a write leaves it alone).
    lib = pytest.importorskip(f"{library}.numpy" if library == "jax" else "dask.array")
    make = lib.asarray if library == "jax" else lib.from_array
    a = np.arange(6.0).reshape(2, 3)
    y = cr.asarray(make(a)).T
    _zeroed_through_reshape(y, (6,))
    np.testing.assert_array_equal(N(y), a.T)
    assert y._version == 0
    # A reshape that PyTorch makes a view of still is one: the write reaches its base.
    z = cr.asarray(make(a))[:, 1:]
    _zeroed_through_reshape(z[0], (2, 1))
    np.testing.assert_array_equal(N(z), [[0.0, 0.0], [4.0, 5.0]])
    # With history: the gradient of the values read, not those written through the copy.
    x = cr.asarray(make(a), requires_grad=True)
    t = x * 1.0
    _zeroed_through_reshape(t.T, (6,))
    cr.sum(t * t).backward()
    np.testing.assert_array_equal(N(x.grad), 2 * a)


def test_an_index_array_of_two_dimensions_after_an_ellipsis_is_bounds_checked_on_its_axis():
    # JAX clamps an index out of bounds without a word, so chainrule checks bounds: the axis
    # of an integer array after `...` was counted from the end by the array's rank (two
    # axes, not one), so [[4]] was checked against axis 0 (size 5) and JAX read element 2.
    jnp = pytest.importorskip("jax.numpy")
    x = cr.asarray(jnp.arange(15.0).reshape(5, 3))
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with size 3"):
        x[..., cr.asarray(jnp.asarray([[4]]))]
    y = x * 1.0
    with pytest.raises(IndexError, match="index 4 is out of bounds for axis 1 with size 3"):
        y[..., cr.asarray(jnp.asarray([[4]]))] = -1.0
    a = np.arange(15.0).reshape(5, 3)
    assert_values(x[..., cr.asarray(jnp.asarray([[2, 0]]))], a[..., [[2, 0]]])
    # A Python bool (a 0-d mask) indexes no axis of its own.
    assert_values(x[False, ..., 2], a[False, ..., 2])
    with pytest.raises(IndexError, match="index 3 is out of bounds for axis 1 with size 3"):
        x[True, ..., 3]


@pytest.mark.parametrize(
    "key",
    [(1, slice(0, 2), False), (0, slice(None), True), (1, Ellipsis, True)],
    ids=str,
)
def test_a_python_bool_apart_from_an_integer_on_pytorch_storage(key):
    # chainrule indexes as NumPy on every library: a Python bool is an advanced index (a 0-d
    # mask), whose axis goes first with the integer's when a slice parts them. On PyTorch's
    # storage the bool was read as an integer: PyTorch's order (the result's axes permuted).
    torch = pytest.importorskip("torch")
    b = np.arange(2 * 4 * 3 * 4.0).reshape(2, 4, 3, 4)
    assert_values(cr.asarray(torch.asarray(b))[key], b[key])


def test_a_python_bool_in_a_key_is_refused_on_dask_storage():
    # Dask reads x[False] as x[0] (NumPy: a new axis of no element): a silently wrong value.
    da = pytest.importorskip("dask.array")
    x = cr.asarray(da.from_array(np.arange(6.0).reshape(2, 3)))
    for key in (False, (True, 1), (0, Ellipsis, False)):
        with pytest.raises(NotImplementedError, match="Python bool in an index key"):
            x[key]


@skip_on("dask", reason="its index values are checked when computed")
@pytest.mark.parametrize("index", [-1, -3])
def test_gather_refuses_a_negative_index_as_pytorch(index):
    # gather reads through take_along_axis, which counts a negative index from the end: a
    # value where PyTorch's gather raises.
    x = T([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    with pytest.raises(IndexError, match=rf"index {index} is out of bounds for axis 1 with size 3"):
        x.gather(1, T([[0, index], [1, 2]]))
    assert_values(x.gather(1, T([[2, 0], [1, 1]])), [[3.0, 1.0], [5.0, 5.0]])
