"""Wrong values found where two features meet (forward mode, vmap, transforms): each test
checks a value against one computed by hand or by another path."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from chainrule.autograd import forward_ad as fwAD


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
