"""The same program on every storage library (the backend under test) gives NumPy's values,
dtypes and gradients: the differences a probe across NumPy, array-api-strict, PyTorch, JAX and
Dask found, each checked against NumPy's own answer."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import _backend
from conftest import LIBRARY, N, T, fails_on

A = np.arange(12.0).reshape(3, 4) - 5.0


def test_masked_assignment_of_a_scalar_writes_numpys_values_and_gradient():
    x = T(A, requires_grad=True)
    y = x * 2.0
    y[y < 0] = 0.0
    (y * y).sum().backward()
    want = np.where(A < 0, 0.0, 2 * A)
    np.testing.assert_allclose(N(y), want)
    np.testing.assert_allclose(N(x.grad), 2 * want * 2)


def test_masked_assignment_of_a_one_element_tensor_broadcasts_as_numpy():
    y = T(A)
    y[y < 0] = T([7.0])
    np.testing.assert_array_equal(N(y), np.where(A < 0, 7.0, A))


def test_searchsorted_answers_the_default_index_dtype_int64():
    sorted_ = T([1.0, 2.0, 2.0, 5.0])
    for side in ("left", "right"):
        found = cr.searchsorted(sorted_, T([0.0, 2.0, 6.0]), side=side)
        assert found.dtype == cr.int64
        np.testing.assert_array_equal(
            N(found), np.searchsorted([1.0, 2.0, 2.0, 5.0], [0.0, 2.0, 6.0], side=side)
        )


STRICT_ARRAYS = "array-api-strict takes integer arrays only beside other integer arrays"
DASK_ARRAYS = "Dask has no indexing by several integer arrays (nd fancy indexing)"
DASK_NONE = "Dask's getitem fails (AssertionError) on None, an integer and a Dask integer array"


@pytest.mark.parametrize(
    "index",
    [
        pytest.param(lambda x: x[5], id="int"),
        pytest.param(lambda x: x[-4], id="negative-int"),
        pytest.param(lambda x: x[..., 4], id="after-ellipsis"),
        pytest.param(
            lambda x: x[T([0, 5], dtype=np.int64), T([1, 1], dtype=np.int64)],
            id="arrays",
            marks=fails_on("dask", reason=DASK_ARRAYS),
        ),
        pytest.param(lambda x: x[1][T([0, 5], dtype=np.int64)], id="array"),
        pytest.param(
            lambda x: x[:, T([-5], dtype=np.int64)],
            id="array-after-slice",
            marks=fails_on("array_api_strict", reason=STRICT_ARRAYS),
        ),
        pytest.param(
            lambda x: x[None, 1, T([2, 9], dtype=np.int64)],
            id="array-after-none",
            marks=fails_on("dask", reason=DASK_NONE),
        ),
        pytest.param(lambda x: cr.take(x, T([4], dtype=np.int64), axis=1), id="take"),
        pytest.param(
            lambda x: cr.take_along_axis(x, T([[0], [1], [4]], dtype=np.int64), axis=1),
            id="take_along_axis",
        ),
    ],
)
def test_an_index_out_of_bounds_raises_numpys_index_error(index):
    # Dask's raises when computed (its index values are unknown before).
    with pytest.raises(IndexError, match="out of bounds"):
        N(index(T(A)))


def test_an_integer_assignment_out_of_bounds_raises_and_writes_nothing():
    y = T(A)
    with pytest.raises(IndexError, match="out of bounds"):
        y[0, 4] = 0.0
        N(y)
    np.testing.assert_array_equal(N(T(A)), A)


@fails_on("array_api_strict", reason="array-api-strict has no item assignment by integer arrays")
def test_an_array_assignment_out_of_bounds_raises_and_writes_nothing():
    y = T(A)
    with pytest.raises(IndexError, match="out of bounds"):
        y[T([1, 3], dtype=np.int64)] = 0.0
        N(y)  # Dask's raises when computed
    if LIBRARY != "dask":  # Dask's y holds the failing write, as a NumPy array would not
        np.testing.assert_array_equal(N(y), A)


def test_in_bounds_negative_and_ellipsis_indices_read_numpys_elements():
    x = T(A)
    np.testing.assert_array_equal(N(x[2][T([-4, 3], dtype=np.int64)]), A[2][[-4, 3]])
    np.testing.assert_array_equal(N(x[..., -1]), A[..., -1])
    np.testing.assert_array_equal(N(x[None, ..., 3]), A[None, ..., 3])
    np.testing.assert_array_equal(
        N(cr.take(x, T([3, 0], dtype=np.int64), axis=1)), np.take(A, [3, 0], axis=1)
    )


@fails_on("array_api_strict", reason="array-api-strict refuses true division of integers")
def test_true_division_of_int32_gives_numpys_float64():
    q = T([1, 2], dtype=np.int32) / T([2, 2], dtype=np.int32)
    assert q.dtype == cr.float64
    np.testing.assert_array_equal(N(q), [0.5, 1.0])


def test_the_gradient_of_a_reversed_row_after_an_integer_index_reaches_each_element():
    # x[0, ::-1, ...]: Dask's item assignment failed on this key (an internal IndexError).
    x = T(np.arange(6.0).reshape(2, 3), requires_grad=True)
    y = x[0, ::-1, ...]
    cr.sum(y * T([1.0, 2.0, 3.0])).backward()
    np.testing.assert_array_equal(N(x.grad), [[3.0, 2.0, 1.0], [0.0, 0.0, 0.0]])


@pytest.mark.parametrize(
    "op",
    [cr.linalg.inv, lambda a: cr.linalg.solve(a, cr.ones_like(a[..., 0]))],
    ids=["inv", "solve"],
)
def test_a_singular_matrix_raises_numpys_linalg_error(op):
    # JAX returned inf and NaN without a word. PyTorch raises its own LinAlgError (a
    # RuntimeError); Dask raises NumPy's when computed.
    a = T([[1.0, 2.0], [2.0, 4.0]])
    error = RuntimeError if LIBRARY == "torch" else np.linalg.LinAlgError
    with pytest.raises(error, match="[Ss]ingular"):
        N(op(a))


@pytest.mark.parametrize("counts", [[3, 0, 1], [2]], ids=["each", "one for all"])
def test_repeat_by_numpy_counts_and_its_gradient(counts):
    # Dask's repeat takes one integer count: it raised NotImplementedError. NumPy counts give
    # a result of known size there, and a gradient (other libraries take counts of their own).
    a = np.array([1.0, 2.0, 3.0])
    x = T(a, requires_grad=True)
    y = cr.repeat(x, np.asarray(counts) if LIBRARY == "dask" else T(counts))
    assert y.shape == np.repeat(a, counts).shape
    np.testing.assert_array_equal(N(y), np.repeat(a, counts))
    cr.sum(y * y).backward()
    np.testing.assert_array_equal(N(x.grad), 2 * a * np.broadcast_to(counts, a.shape))


def test_repeat_by_a_tensor_of_counts():
    # On Dask the result's size is unknown until the counts are computed: its values are
    # right, its gradient refused with a clear error (no error of Dask's internals).
    a, counts = np.array([1.0, 2.0, 3.0]), np.array([3, 0, 1])
    np.testing.assert_array_equal(N(cr.repeat(T(a), T(counts))), np.repeat(a, counts))
    if LIBRARY == "dask":
        with pytest.raises(NotImplementedError, match="unknown until the counts are computed"):
            cr.repeat(T(a, requires_grad=True), T(counts))


@pytest.mark.regression
def test_numpy_tensors_that_need_no_grad_join_jax_operations():
    # Array-API code makes its constants with xp.asarray(numpy_array), a NumPy tensor
    # (SciPy's differentiation weights: "matmul: cannot mix arrays of different libraries").
    jnp = pytest.importorskip("jax.numpy")
    w = cr.asarray(jnp.asarray([1.0, 2.0]), requires_grad=True)
    c = cr.asarray(np.array([3.0, 4.0]))
    for y in (w * c, c - w, cr.stack([c, w]), c @ w, cr.where(c > 3.5, w, c)):
        assert y.requires_grad and _backend.library(_backend.namespace(y.array)) == "jax"
    (g,) = cr.autograd.grad(cr.sum(w * c) + c @ w, [w])
    np.testing.assert_array_equal(N(g), [6.0, 8.0])
    # One that requires grad is refused: its gradient would be a JAX array.
    with pytest.raises(TypeError, match="numpy tensor that requires grad can't join"):
        cr.asarray(np.array([3.0, 4.0]), requires_grad=True) * cr.asarray(jnp.ones(2))
