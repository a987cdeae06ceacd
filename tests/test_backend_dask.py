"""Dask arrays under chainrule: forward and backward build task graphs and compute nothing
until the user asks; gradients of chunked data equal NumPy's; NumPy operands join Dask ones."""

import pickle

import numpy as np
import pytest

import chainrule as cr
from chainrule import _backend

dask = pytest.importorskip("dask")
da = pytest.importorskip("dask.array")


def _refuse(*args, **kwargs):
    raise AssertionError("chainrule made Dask compute behind the user's back")


def _loss(x, w, labels):
    # A mix of elementwise ops, reductions, matmul, indexing and joins along chunked axes.
    z = x @ w
    p = cr.nn.functional.softmax(z, axis=-1)
    picked = cr.take_along_axis(p, labels, axis=-1)
    h = cr.concat([cr.tanh(x[:, :2]), cr.sin(x[::2, 2:]).T.T[:1] * 0 + x[:1, 2:]], axis=0)
    return -cr.mean(cr.log(picked)) + cr.sum(h**2) + cr.logsumexp(cr.reshape(x, (-1,)))


def _inputs(module):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((40, 4)), rng.standard_normal((4, 3))
    labels = rng.integers(0, 3, size=(40, 1))
    if module is np:
        return cr.tensor(x, requires_grad=True), cr.tensor(w, requires_grad=True), labels
    return (
        cr.asarray(da.from_array(x, chunks=(10, 4)), requires_grad=True),
        cr.asarray(da.from_array(w), requires_grad=True),
        da.from_array(labels, chunks=(10, 1)),
    )


def test_forward_and_backward_compute_nothing_until_asked():
    x, w, labels = _inputs(da)
    with dask.config.set(scheduler=_refuse):
        loss = _loss(x, w, labels)
        loss.backward()
        gx, gw = x.grad, w.grad
        (hx,) = cr.autograd.grad(cr.sum(cr.exp(x) * x), x, create_graph=True)
        (hh,) = cr.autograd.grad(cr.sum(hx), x)
        assert isinstance(gx._data, da.Array) and isinstance(hh._data, da.Array)
        assert gx.shape == (40, 4) and gw.shape == (4, 3)
        with pytest.raises(AssertionError, match="behind the user's back"):
            float(loss)  # the guard itself: asking for a value computes
    # One computation, on the user's call, gives NumPy's gradients.
    values = dask.compute(loss._data, gx._data, gw._data, hh._data, scheduler="sync")
    x0, w0, labels0 = _inputs(np)
    expected = _loss(x0, w0, labels0)
    expected.backward()
    np.testing.assert_allclose(values[0], expected.numpy(), rtol=1e-12)
    np.testing.assert_allclose(values[1], x0.grad.numpy(), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(values[2], w0.grad.numpy(), rtol=1e-12, atol=1e-14)
    xv = x0.detach().numpy()
    np.testing.assert_allclose(values[3], np.exp(xv) * (xv + 2), rtol=1e-12)


def test_gradients_stay_chunked_like_their_tensors():
    x, w, labels = _inputs(da)
    _loss(x, w, labels).backward()
    assert x.grad._data.chunks == x._data.chunks


def test_numpy_arrays_and_constant_tensors_join_dask_operations():
    x = cr.asarray(da.from_array(np.arange(6.0).reshape(3, 2), chunks=(1, 2)), requires_grad=True)
    weights = np.array([2.0, 3.0])
    y = cr.sum(x * weights) + cr.sum(x @ cr.asarray(weights)) + cr.sum(cr.asarray(np.ones(1)) * x)
    assert isinstance(y._data, da.Array)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.tile(2 * weights + 1, (3, 1)))


def test_a_numpy_tensor_that_requires_grad_is_refused_with_dask_data():
    x = cr.asarray(da.ones((3, 2), chunks=(1, 2)))
    w = cr.asarray(np.array([1.0, 2.0]), requires_grad=True)
    with pytest.raises(TypeError, match="requires grad"):
        x @ w
    with pytest.raises(TypeError, match="requires grad"):
        cr.stack([x[0], w])


def test_boolean_mask_gradients_are_refused_clearly():
    x = cr.asarray(da.from_array(np.arange(6.0) - 2, chunks=3), requires_grad=True)
    y = x[x._data > 0]
    assert y.size is None or np.isnan(y.size)
    with pytest.raises(NotImplementedError, match="boolean-mask"):
        cr.sum(y).backward()


def test_cholesky_factor_is_the_lower_one_with_numpys_gradient():
    # Dask's cholesky returns the upper factor unless asked (array-api-compat passes it on).
    a = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])
    x, x0 = cr.asarray(da.from_array(a), requires_grad=True), cr.tensor(a, requires_grad=True)
    for upper in (False, True):
        np.testing.assert_allclose(
            cr.linalg.cholesky(x, upper=upper).numpy(), np.linalg.cholesky(a, upper=upper)
        )
    cr.sum(cr.linalg.cholesky(x) ** 2).backward()
    cr.sum(cr.linalg.cholesky(x0) ** 2).backward()
    np.testing.assert_allclose(x.grad.numpy(), x0.grad.numpy(), rtol=1e-12)


def test_a_gradient_spread_over_a_chunked_tensor_takes_its_chunks_on_every_axis():
    # The gradient reaching the sum (through a product with one chunk of columns) has other
    # chunks along the kept axis than x.
    a, b = np.arange(16.0).reshape(2, 8), np.array([[1.0], [2.0], [3.0], [4.0]])
    x = cr.asarray(da.from_array(a, chunks=(2, 2)), requires_grad=True)
    cr.sum(cr.reshape(cr.sum(x, axis=0), (2, 4)) @ cr.asarray(da.from_array(b))).backward()
    assert x.grad._data.chunks == x._data.chunks
    np.testing.assert_allclose(x.grad.numpy(), np.tile(b[:, 0], (2, 2)))


def test_complex_gradients_of_repeated_gathers_add_up():
    # The scatter-add behind take's gradient (Dask's bincount) weighs by real numbers only.
    a, c = np.array([1.0 + 2.0j, 3.0 - 1.0j, 0.5j]), np.array([1.0j, 2.0, 3.0])
    grads = []
    for wrap in (da.from_array, np.asarray):
        x = cr.asarray(wrap(a), requires_grad=True)
        y = cr.take(x, cr.asarray(wrap(np.array([0, 2, 0]))), axis=0)
        cr.sum(cr.real(y * cr.asarray(wrap(c)))).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1])
    np.testing.assert_allclose(grads[1], [3.0 - 1.0j, 0.0, 2.0])  # conj(c) summed, as PyTorch


def test_fft_gradients_of_chunked_signals_equal_numpys():
    # Dask transforms an axis in one chunk only; the signal and its gradient come in several.
    a, w = np.linspace(-1.0, 1.0, 12).reshape(2, 6), np.array([1.0, 0.5, 0.25, 2.0])
    grads = []
    for wrap in (lambda v: da.from_array(v, chunks=2), np.asarray):
        x = cr.asarray(wrap(a), requires_grad=True)
        y = cr.fft.irfft(cr.fft.rfft(x) * cr.asarray(wrap(w)), n=6)
        cr.sum(cr.abs(cr.fft.fft(y)) ** 2).backward()
        grads.append(x.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_singular_values_without_a_gradient():
    # array-api-compat's Dask svdvals asks for full matrices, which Dask refuses.
    a = np.arange(8.0).reshape(2, 4) ** 1.5
    x = cr.asarray(da.from_array(a))
    np.testing.assert_allclose(cr.linalg.svdvals(x).numpy(), np.linalg.svd(a)[1], rtol=1e-12)


def test_a_selection_by_a_one_element_index_array_has_its_own_shape():
    # Dask gives x[i] for an integer array i of one element x's shape (its values are right).
    values = np.arange(12.0).reshape(3, 4)
    x = cr.asarray(da.from_array(values, chunks=(2, 2)), requires_grad=True)
    i = cr.asarray(da.from_array(np.array([1])))
    for key in [(i,), (i, slice(None)), (slice(None), i), (0, i), (slice(1, 3), i)]:
        picked = x[key]
        expected = values[tuple(np.array([1]) if k is i else k for k in key)]
        assert picked.shape == expected.shape
        np.testing.assert_array_equal(picked.detach().numpy(), expected)
    taken = cr.take(x, i, axis=1)
    assert taken.shape == (3, 1)
    (2.0 * cr.sum(taken) + cr.sum(x[i])).backward()
    expected_grad = np.zeros((3, 4))
    expected_grad[:, 1] += 2.0
    expected_grad[1, :] += 1.0
    np.testing.assert_array_equal(x.grad.numpy(), expected_grad)


def test_repr_describes_a_lazy_tensor_without_computing_it():
    x = cr.asarray(da.ones((4200, 20), chunks=(1000, 20)), requires_grad=True)
    with dask.config.set(scheduler=_refuse):
        y = x * 2.0
        assert repr(x) == (
            "tensor(dask.array<shape=(4200, 20), dtype=float64, "
            "chunks=((1000,) * 4 + (200,), (20,))>, requires_grad=True)"
        )
        assert str(y) == f"{y}" == repr(y)
        assert repr(y).endswith("grad_fn=<MulBackward0>)")
        short = cr.asarray(da.ones(6, chunks=(1, 2, 3), dtype="float32"))
        assert repr(short) == ("tensor(dask.array<shape=(6,), dtype=float32, chunks=((1, 2, 3),)>)")
        irregular = cr.asarray(da.ones(36, chunks=(1, 2, 3, 4, 5, 6, 7, 8)))
        assert "chunks=((1, 2, ..., 8) [8 chunks],)" in repr(irregular)
        masked = cr.asarray(da.ones((10, 3), chunks=(5, 3)))[cr.asarray(da.ones(10, chunks=5)) > 0]
        assert "shape=(nan, 3)" in repr(masked) and "chunks=((nan, nan), (3,))" in repr(masked)
    # The values stay one explicit call away.
    assert float(cr.sum(y)) == 4200 * 20 * 2.0


def test_a_numpy_tensor_that_requires_grad_is_refused_with_a_raw_dask_array():
    w = cr.asarray(np.array([1.0, 2.0]), requires_grad=True)
    raw = da.ones((3, 2), chunks=(1, 2))
    with dask.config.set(scheduler=_refuse):
        for join in (
            lambda: w * raw,
            lambda: raw * w,
            lambda: raw @ w,
            lambda: cr.stack([raw[0], w]),
            lambda: cr.where(raw[0] > 0, w, 0.0),
        ):
            with pytest.raises(TypeError, match="numpy tensor that requires grad can't join"):
                join()
        # One that needs no grad joins the Dask operation, which stays lazy.
        c = cr.asarray(np.array([1.0, 2.0]))
        for y in (c * raw, raw - c, cr.stack([raw[0], c])):
            assert isinstance(y.array, da.Array)
    np.testing.assert_array_equal((raw - c).numpy(), np.ones((3, 2)) - [1.0, 2.0])


def _counted_chunks(values, chunks, loads):
    """A Dask array of `values` whose chunks count in `loads` each time they are made."""

    def load(block):
        loads.append(block.shape)
        return block

    a = da.from_array(values, chunks=chunks)
    return a.map_blocks(load, meta=np.empty((0,) * a.ndim, dtype=a.dtype))


def test_tensors_on_dask_are_dask_collections_and_others_are_not():
    x = cr.asarray(da.ones(4, chunks=2), requires_grad=True)
    y = x * 2.0
    for t in (x, y):
        assert dask.is_dask_collection(t)
        assert t.__dask_graph__() is t.array.__dask_graph__()
        assert t.__dask_keys__() == t.array.__dask_keys__()
        assert t.__dask_layers__() == t.array.__dask_layers__()
    assert cr.Tensor.__dask_scheduler__ is da.Array.__dask_scheduler__ is y.__dask_scheduler__
    assert y.__dask_optimize__ is da.Array.__dask_optimize__
    assert dask.base.tokenize(y) == dask.base.tokenize(y) != dask.base.tokenize(x)
    numpy_tensor = cr.asarray(np.ones(3), requires_grad=True)
    assert not dask.is_dask_collection(numpy_tensor) and numpy_tensor.__dask_graph__() is None
    assert dask.compute(numpy_tensor)[0] is numpy_tensor  # left as it is, as any other object
    assert numpy_tensor.compute() is numpy_tensor and numpy_tensor.persist() is numpy_tensor
    ones, zeros = cr.asarray(np.ones(3)), cr.asarray(np.zeros(3))
    assert dask.base.tokenize(ones) == dask.base.tokenize(cr.asarray(np.ones(3)))
    assert dask.base.tokenize(ones) != dask.base.tokenize(zeros)


def test_dask_compute_gives_the_loss_and_gradient_in_one_pass_sharing_their_tasks():
    values, loads = np.arange(12.0).reshape(6, 2), []
    x = cr.asarray(_counted_chunks(values, (2, 2), loads))
    w = cr.asarray(da.from_array(np.array([0.5, -1.0])), requires_grad=True)
    loss = cr.mean(cr.logaddexp(0.0, x @ w))
    loss.backward()
    with dask.config.set(scheduler="sync"):
        value, grad = dask.compute(loss, w.grad)
        assert len(loads) == 3  # each chunk of x made once for both
        assert isinstance(value, cr.Tensor) and isinstance(grad.array, np.ndarray)
        assert not value.requires_grad and value.shape == () and grad.shape == (2,)
        assert loss.compute().item() == value.item()
    z = values @ np.array([0.5, -1.0])
    np.testing.assert_allclose(value.item(), np.mean(np.logaddexp(0.0, z)), rtol=1e-14)
    np.testing.assert_allclose(grad.numpy(), values.T @ (1 / (1 + np.exp(-z))) / 6, rtol=1e-14)


def test_dask_persist_returns_persisted_tensors_in_their_place_in_the_graph():
    values, loads = np.arange(6.0), []
    w = cr.asarray(_counted_chunks(values, 2, loads), requires_grad=True)
    y = cr.exp(w) * 2.0
    with dask.config.set(scheduler="sync"):
        wp, yp = dask.persist(w, y)
        assert len(loads) == 3
        assert yp.persist().grad_fn is yp.grad_fn is y.grad_fn  # a result keeps its history
        assert wp.is_leaf and wp.requires_grad and wp is not w  # a leaf: a new leaf
        for t in (wp, yp):
            assert isinstance(t, cr.Tensor) and dask.is_dask_collection(t)
            assert len(dict(t.__dask_graph__())) == 3  # one task per chunk: the values
        np.testing.assert_allclose(yp.numpy(), 2.0 * np.exp(values))
        cr.sum(yp * wp).backward()  # through yp to w, and into wp's own .grad
        assert len(loads) == 3  # nothing in the persisted values was made again
    np.testing.assert_allclose(w.grad.numpy(), 2.0 * np.exp(values) * values)
    np.testing.assert_allclose(wp.grad.numpy(), 2.0 * np.exp(values))


def test_dask_visualize_draws_a_tensors_graph(tmp_path):
    pytest.importorskip("graphviz")
    y = cr.exp(cr.asarray(da.ones(4, chunks=2), requires_grad=True))
    dask.visualize(y, filename=str(tmp_path / "graph.png"))
    assert (tmp_path / "graph.png").stat().st_size > 0


# ----------------------------------------------------------------------------- training loops
# Optimizer steps on Dask parameters settle parameters, gradients and state (computed here when
# small, else persisted on the workers): the task graph of a step stays the size of step 1's.


def _training_data(rows):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((rows, 5))
    return x, np.sign(x @ np.linspace(-1.0, 1.0, 5) + 0.3 * rng.standard_normal(rows))


def _train(x, signs, w0, make_optimizer, steps):
    """Logistic regression by an optimizer: the weights, and the task count of each step's
    loss on Dask (None on NumPy)."""
    w = cr.asarray(w0, requires_grad=True)
    opt = make_optimizer([w])
    x, signs = cr.asarray(x), cr.asarray(signs)
    tasks = []
    for _ in range(steps):
        opt.zero_grad()
        loss = cr.mean(cr.logaddexp(0.0, -signs * (x @ w))) + 0.01 * cr.sum(w * w)
        loss.backward()
        tasks.append(len(dict(loss.__dask_graph__())) if dask.is_dask_collection(loss) else None)
        opt.step()
    return w, opt, tasks


OPTIMIZERS = {
    "sgd": lambda ps: cr.optim.SGD(ps, lr=0.5, momentum=0.9, nesterov=True),
    "adam": lambda ps: cr.optim.Adam(ps, lr=0.05, weight_decay=0.01, amsgrad=True),
}


def _check_steady_training(client, rows, chunk, steps):
    x, signs = _training_data(rows)
    data = client.persist([da.from_array(x, chunks=(chunk, 5)), da.from_array(signs, chunks=chunk)])
    w0 = np.linspace(0.2, -0.2, 5)
    for name, make in OPTIMIZERS.items():
        w, opt, tasks = _train(*data, da.from_array(w0), make, steps)
        assert len(set(tasks)) == 1, (name, tasks)  # step k's graph is step 1's size
        for t in (w, w.grad, *(v for v in opt.state[w].values() if isinstance(v, cr.Tensor))):
            assert dask.is_dask_collection(t) and len(dict(t.__dask_graph__())) == 1
        expected, _, _ = _train(x, signs, w0, make, steps)
        np.testing.assert_allclose(w.numpy(), expected.numpy(), rtol=1e-12, err_msg=name)


@pytest.fixture
def local_cluster():
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client


def test_optimizer_steps_on_a_local_cluster_keep_the_graph_bounded(local_cluster):
    _check_steady_training(local_cluster, rows=400, chunk=100, steps=4)


def test_large_optimizer_state_is_persisted_on_the_workers(local_cluster, monkeypatch):
    distributed = pytest.importorskip("distributed")
    monkeypatch.setattr(cr._lazy, "SMALL_STEP_BYTES", 0)  # every step's arrays count as large
    x, signs = _training_data(40)
    w, opt, _ = _train(
        da.from_array(x, chunks=(10, 5)), da.from_array(signs, chunks=10),
        da.from_array(np.zeros(5)), OPTIMIZERS["adam"], 3,
    )  # fmt: skip
    for t in (w, w.grad, opt.state[w]["exp_avg"]):
        assert distributed.futures_of(t)  # held by the workers, not brought here
    expected, _, _ = _train(x, signs, np.zeros(5), OPTIMIZERS["adam"], 3)
    np.testing.assert_allclose(w.numpy(), expected.numpy(), rtol=1e-12)


@pytest.mark.skipif(
    _backend.library(_backend.default_namespace()) != "dask",
    reason="50 steps of SGD and Adam on a cluster: make test-backends (the whole suite on Dask)",
)
def test_fifty_optimizer_steps_on_a_local_cluster_keep_the_graph_bounded(local_cluster):
    _check_steady_training(local_cluster, rows=200_000, chunk=20_000, steps=50)


def _closure_steps(x, signs, w, steps, after_step):
    """Steps of SGD with a closure that returns the loss; after_step(step, loss) each time."""
    opt = cr.optim.SGD([w], lr=0.5)

    def closure():
        opt.zero_grad()
        loss = cr.mean(cr.logaddexp(0.0, -signs * (x @ w)))
        loss.backward()
        return loss

    losses = []
    for step in range(1, steps + 1):
        loss = opt.step(closure)
        after_step(step, loss)
        losses.append(float(loss))
    return losses


def test_a_step_with_a_closure_computes_the_loss_in_the_pass_of_the_gradients():
    x, signs = _training_data(40)
    loads = []

    def check(step, loss):
        assert len(loads) == 4 * step  # x's 4 chunks made once in the step
        assert len(dict(loss.__dask_graph__())) == 1 and loss.grad_fn is not None

    with dask.config.set(scheduler="sync"):
        xs = cr.asarray(_counted_chunks(x, (10, 5), loads))
        w = cr.asarray(da.zeros(5), requires_grad=True)
        losses = _closure_steps(xs, cr.asarray(da.from_array(signs)), w, 2, check)
    assert len(loads) == 8  # float(loss) computed nothing more
    w0 = cr.asarray(np.zeros(5), requires_grad=True)
    expected = _closure_steps(cr.asarray(x), cr.asarray(signs), w0, 2, lambda *_: None)
    np.testing.assert_allclose(losses, expected, rtol=1e-14)


def test_a_cluster_client_computes_and_persists_tensors(local_cluster):
    distributed = pytest.importorskip("distributed")
    w = cr.asarray(da.from_array(np.arange(4.0), chunks=2), requires_grad=True)
    y = cr.exp(w)
    for kept in (local_cluster.persist(y), dask.persist(y)[0], y.persist()):
        assert len(distributed.futures_of(kept)) == 2 and kept.grad_fn is y.grad_fn
    total = local_cluster.compute(cr.sum(y)).result()
    assert isinstance(total, cr.Tensor)
    np.testing.assert_allclose(total.item(), np.exp(np.arange(4.0)).sum())


def test_a_tensor_on_dask_pickles_as_its_task_graph_without_computing():
    w = cr.asarray(da.from_array(np.arange(4.0), chunks=2), requires_grad=True)
    cr.sum(w * w).backward()
    with dask.config.set(scheduler=_refuse):
        back = pickle.loads(pickle.dumps(w))
        assert isinstance(back.array, da.Array) and isinstance(back.grad.array, da.Array)
        assert back.requires_grad and back.array.chunks == ((2, 2),)
    np.testing.assert_array_equal(back.numpy(), np.arange(4.0))
    np.testing.assert_array_equal(back.grad.numpy(), 2 * np.arange(4.0))
