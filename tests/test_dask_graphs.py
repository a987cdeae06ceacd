"""The task graphs of gradients on Dask against the same gradient written by hand: a
reduction's gradient spread over the chunks fuses with the elementwise tasks that read it."""

import numpy as np
import pytest

import chainrule as cr

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")


def _names(a):
    """The kinds of task of a Dask array's graph after Dask's optimization, with counts."""
    (optimized,) = dask.optimize(a)
    keys = [k[0] if isinstance(k, tuple) else k for k in dict(optimized.dask)]
    names = [str(k).rsplit("-", 1)[0] for k in keys]
    return {n: names.count(n) for n in names}


def test_a_logistic_gradient_on_dask_runs_about_the_tasks_of_the_hand_written_one():
    rng = np.random.default_rng(0)
    x = da.from_array(rng.standard_normal((1000, 4)), chunks=(100, 4))
    s = da.from_array(np.sign(rng.standard_normal(1000)), chunks=100)
    w0 = np.array([0.5, -1.0, 2.0, 0.1])
    w = cr.asarray(da.from_array(w0), requires_grad=True)
    cr.mean(cr.logaddexp(0.0, -cr.asarray(s) * (cr.asarray(x) @ w))).backward()
    by_hand = x.T @ (-s / (1.0 + np.exp(s * (x @ w0)))) / x.shape[0]
    ours, theirs = _names(w.grad.array), _names(by_hand)
    # The mean's gradient, spread over the 10 chunks, is part of each chunk's fused task: no
    # task of its own per chunk (Dask's broadcast_to made 10), two more tasks in all (the
    # gradient 1 / n and a reshape, on one element).
    assert not [n for n in ours if "broadcast" in n]
    assert sum(ours.values()) <= sum(theirs.values()) + 2, (ours, theirs)
    np.testing.assert_allclose(w.grad.numpy(), by_hand.compute(), rtol=1e-13)


@pytest.mark.parametrize(
    "axis, keepdims", [(0, False), (1, True), (None, False), ((0, 2), False), ((1,), True)]
)
def test_reduction_gradients_on_dask_keep_the_chunks_and_numpys_values(axis, keepdims):
    rng = np.random.default_rng(1)
    values = rng.standard_normal((4, 6, 6))
    for reduce in (cr.sum, cr.mean, cr.var):
        x = cr.asarray(da.from_array(values, chunks=(2, 6, 3)), requires_grad=True)
        y = reduce(x, axis=axis, keepdims=keepdims)
        cr.sum(y * y).backward()
        expected = cr.tensor(values, requires_grad=True)
        z = reduce(expected, axis=axis, keepdims=keepdims)
        cr.sum(z * z).backward()
        assert x.grad.array.chunks == x.array.chunks
        np.testing.assert_allclose(x.grad.numpy(), expected.grad.numpy(), rtol=1e-13)
