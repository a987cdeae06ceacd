"""Wrong values found where two features meet (forward mode, vmap, transforms): each test
checks a value against one computed by hand or by another path."""

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from chainrule.autograd import forward_ad as fwAD
from conftest import N, T, fails_on


def _data():
    x = cr.asarray(np.arange(6.0).reshape(3, 2))
    w = cr.asarray(np.array([1.0, 2.0]))
    t = cr.asarray(np.array([1.0, -1.0]))
    return x, w, t


def test_jvp_through_vmap_of_an_unmapped_input():
    # d/dw sum(w * x_i) along t is t . x_i: the tangent of w, passed with in_dims=None, was
    # dropped where w joined the batched samples (a zero tangent).
    x, w, t = _data()
    expected = x.numpy() @ t.numpy()
    for in_dims, f in (
        ((None, 0), lambda w, x: cr.sum(w * x)),
        ((0, None), lambda x, w: cr.sum(x * w)),
    ):

        def g(w, f=f, in_dims=in_dims):
            args = (w, x) if in_dims[0] is None else (x, w)
            return func.vmap(f, in_dims=in_dims)(*args)

        _, tangent = func.jvp(g, (w,), (t,))
        np.testing.assert_allclose(tangent.numpy(), expected)


def test_dual_tensor_closed_over_by_vmap():
    x, w, t = _data()
    with fwAD.dual_level():
        dual = fwAD.make_dual(w, t)
        out = func.vmap(lambda xi: cr.sin(dual) * xi)(x)
        tangent = fwAD.unpack_dual(out).tangent
    assert tangent is not None
    np.testing.assert_allclose(tangent.numpy(), np.cos(w.numpy()) * t.numpy() * x.numpy())


def test_jacfwd_of_vmap_with_an_unmapped_input():
    x, w, _ = _data()
    jac = func.jacfwd(
        lambda w: func.vmap(lambda xi, w: cr.sum(w**2 * xi), in_dims=(0, None))(x, w)
    )(w)
    np.testing.assert_allclose(jac.numpy(), 2 * w.numpy() * x.numpy())


def test_dual_numpy_tensor_joining_dask_arrays_is_refused():
    da = pytest.importorskip("dask.array")
    _, w, t = _data()
    lazy = cr.asarray(da.from_array(np.array([3.0, 4.0])))
    with fwAD.dual_level():
        dual = fwAD.make_dual(w, t)
        with pytest.raises(TypeError, match="forward-mode tangent"):
            dual * lazy  # its tangent was dropped: a zero derivative


@fails_on("dask", reason="vmap gathers per-sample indices by nd fancy indexing, which Dask lacks")
def test_vmap_over_indices_into_a_tensor_the_same_for_every_sample():
    # Per-sample token ids into one embedding table (per-sample gradients of a model with an
    # embedding): the indices' batch reached the table's library (RuntimeError, as for
    # data-dependent control flow).
    table = np.arange(20.0).reshape(4, 5) / 10
    ids = np.array([[0, 2], [1, 1], [3, 0]])
    w = T(table)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a per-sample loop where there is no rule
        row = T(table[0])  # indexed on every axis: the standard's form of an index array
        for f, expected in (
            (lambda i: row[i], table[0][ids]),
            (lambda i: cr.take(w, i, axis=0), table[ids]),
            (lambda i: cr.take(w, i, axis=1), table[:, ids].transpose(1, 0, 2)),
            (lambda i: cr.nn.functional.embedding(i, w), table[ids]),
        ):
            np.testing.assert_allclose(N(func.vmap(f)(T(ids))), expected)

        def loss(w, i):
            return cr.sum(cr.nn.functional.embedding(i, w) ** 2)

        grads = func.vmap(func.grad(loss), in_dims=(None, 0))(w, T(ids))
        for sample, i in zip(N(grads), ids):
            hand = np.zeros_like(table)
            np.add.at(hand, i, 2 * table[i])
            np.testing.assert_allclose(sample, hand)
        leaf = T(table[0], requires_grad=True)
        cr.sum(func.vmap(lambda i: leaf[i])(T(ids)) ** 3).backward()
    hand = np.zeros_like(table[0])
    np.add.at(hand, ids.ravel(), 3 * table[0][ids.ravel()] ** 2)
    np.testing.assert_allclose(N(leaf.grad), hand)


@fails_on("dask", reason="vmap gathers per-sample indices by nd fancy indexing, which Dask lacks")
def test_vmap_of_hessian_indexing_by_the_mapped_indices():
    # The Hessian's inner levels batch the table; the indices belong to the outer vmap: they
    # reached the inner level's library (RuntimeError). d2/dw2 of sum(sin(w[i])) * w[0]...
    w = np.arange(5.0) / 3
    ids = np.array([[0, 4], [2, 2], [1, 3]])

    def f(w, i):
        return cr.sum(cr.sin(w[i])) + cr.sum(cr.sin(cr.take(w, i, axis=0)) ** 2)

    for transform in (func.hessian, lambda g: func.jacrev(func.jacrev(g))):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a per-sample loop where there is no rule
            got = N(func.vmap(transform(f), in_dims=(None, 0))(T(w), T(ids)))
        for sample, i in zip(got, ids):
            hand = np.zeros((5, 5))
            for k in i:  # sin(w_k)'' = -sin(w_k); (sin(w_k)^2)'' = 2 cos(2 w_k)
                hand[k, k] += -np.sin(w[k]) + 2 * np.cos(2 * w[k])
            np.testing.assert_allclose(sample, hand, atol=1e-12)
