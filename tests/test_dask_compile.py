"""chainrule.compile on Dask: a compiled training step replays into a task graph per call and
settles what its optimizer step updated (as the eager step does), so call k's graph is the size
of call 1's; a compiled function without an optimizer step computes nothing."""

import dask
import numpy as np
import pytest

import chainrule as cr
from chainrule import _backend

da = pytest.importorskip("dask.array")


def _refuse(*args, **kwargs):
    raise AssertionError("chainrule made Dask compute behind the user's back")


def _data(rows):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((rows, 5))
    return x, np.sign(x @ np.linspace(-1.0, 1.0, 5) + 0.3 * rng.standard_normal(rows))


# Without amsgrad: its running maximum often equals the second moment, and Dask gives arrays
# settled with equal values one key, so the graphs' sizes would change with the values.
OPTIMIZERS = {
    "sgd": lambda ps: cr.optim.SGD(ps, lr=0.5, momentum=0.9, nesterov=True),
    "adam": lambda ps: cr.optim.Adam(ps, lr=0.05, weight_decay=0.01),
}


def _trainer(x, signs, w0, make_optimizer, compiled, closure):
    """A training step of logistic regression (compiled or not, through opt.step(closure) or
    backward then step) that returns the loss; its weight and optimizer."""
    w = cr.asarray(w0, requires_grad=True)
    opt = make_optimizer([w])
    x, signs = cr.asarray(x), cr.asarray(signs)

    def loss_and_grad():
        opt.zero_grad()
        loss = cr.mean(cr.logaddexp(0.0, -signs * (x @ w))) + 0.01 * cr.sum(w * w)
        loss.backward()
        return loss

    def step():
        if closure:
            return opt.step(loss_and_grad)
        loss = loss_and_grad()
        opt.step()
        return loss

    return (cr.compile(step) if compiled else step), w, opt


@pytest.fixture
def settled_graphs(monkeypatch):
    """The size of each settle's graphs: the tasks of each array settled, counted by itself (in
    one graph, two arrays settled with equal values would share a key)."""
    counts = []
    settle = _backend.settle

    def counted(arrays, small):
        counts.append(sum(len(dict(a.__dask_graph__())) for a in arrays))
        return settle(arrays, small)

    monkeypatch.setattr(_backend, "settle", counted)
    return counts


def _check_compiled_training(x, signs, steps, settled_graphs, closure):
    x0, s0 = (a.compute() for a in (x, signs))
    w0 = np.linspace(0.2, -0.2, 5)
    for name, make in OPTIMIZERS.items():
        settled_graphs.clear()
        step, w, opt = _trainer(x, signs, da.from_array(w0), make, True, closure)
        losses = [step() for _ in range(steps)]
        # Traced on the first call and again on the second (the optimizer's state is made by
        # the first), then replayed: each call settled once, every replay's graph alike.
        assert step.traces == 2, name
        assert len(settled_graphs) == steps and len(set(settled_graphs[2:])) == 1, name
        for t in (w, w.grad, losses[-1], *(v for v in opt.state[w].values() if v is not None)):
            if isinstance(t, cr.Tensor):
                assert len(dict(t.__dask_graph__())) == 1, name
        eager, w_eager, _ = _trainer(x0, s0, w0, make, False, closure)
        expected = [eager().item() for _ in range(steps)]
        np.testing.assert_allclose(w.numpy(), w_eager.numpy(), rtol=1e-12, err_msg=name)
        np.testing.assert_allclose([float(v) for v in losses], expected, rtol=1e-12)


@pytest.mark.parametrize("closure", [False, True], ids=["step", "closure"])
def test_a_compiled_step_on_dask_settles_its_parameters_and_equals_the_eager_step(
    settled_graphs, closure
):
    x, signs = _data(40)
    with dask.config.set(scheduler="sync"):
        _check_compiled_training(
            da.from_array(x, chunks=(10, 5)), da.from_array(signs, chunks=10), 6,
            settled_graphs, closure,
        )  # fmt: skip


@pytest.mark.skipif(
    _backend.library(_backend.default_namespace()) != "dask",
    reason="25 compiled steps of SGD and Adam on a cluster: make test-backends (the suite on Dask)",
)
def test_a_compiled_step_on_a_local_cluster_keeps_its_graph_bounded(settled_graphs):
    distributed = pytest.importorskip("distributed")
    x, signs = _data(2_000)
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        data = client.persist([da.from_array(x, chunks=(200, 5)), da.from_array(signs, chunks=200)])
        _check_compiled_training(*data, 25, settled_graphs, closure=True)


def test_a_compiled_function_without_an_optimizer_step_computes_nothing():
    x, signs = _data(40)
    w = cr.asarray(da.zeros(5), requires_grad=True)
    xs, ss = cr.asarray(da.from_array(x, chunks=(10, 5))), cr.asarray(da.from_array(signs))

    @cr.compile
    def loss_and_grad():
        w.grad = None
        loss = cr.mean(cr.logaddexp(0.0, -ss * (xs @ w)))
        loss.backward()
        return loss

    with dask.config.set(scheduler=_refuse):
        for _ in range(2):
            loss = loss_and_grad()
        traces = loss_and_grad.traces
        for _ in range(2):
            loss = loss_and_grad()
        assert loss_and_grad.traces == traces  # replayed
        assert len(dict(w.grad.__dask_graph__())) > 1 and len(dict(loss.__dask_graph__())) > 1
    expected = np.mean(np.logaddexp(0.0, -signs * 0.0))
    np.testing.assert_allclose(float(loss), expected, rtol=1e-14)
