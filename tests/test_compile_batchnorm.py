"""BatchNorm layers inside compiled training steps: with momentum=None (the cumulative moving
average) the layer's factor is 1 / num_batches_tracked, a buffer the step itself counts, so a
replay must read it at every call (the layer used to turn it into a Python int, which compile
refused with ConcretizationError)."""

import warnings

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn, optim
from conftest import N, T


def _trainer(layer, dtype):
    cr.random.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), layer(4, momentum=None), nn.ReLU(), nn.Linear(4, 2))
    model = model.float() if dtype == "float32" else model.double()
    opt = optim.SGD(model.parameters(), lr=0.1, momentum=0.5)

    def step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    return model, step


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_a_compiled_step_with_a_cumulative_batchnorm_equals_eager(dtype):
    rng = np.random.default_rng(0)
    batches = [
        (T(rng.normal(size=(6, 3)), dtype=dtype), T(rng.normal(size=(6, 2)), dtype=dtype))
        for _ in range(5)
    ]
    eager_model, eager_step = _trainer(nn.BatchNorm1d, dtype)
    model, step = _trainer(nn.BatchNorm1d, dtype)
    compiled = cr.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cr.CompileWarning)
        for x, y in batches:
            np.testing.assert_array_equal(N(compiled(x, y)), N(eager_step(x, y)))
    assert compiled.traces == 2  # the first call makes .grad and SGD's momentum buffers
    bn, eager_bn = model[1], eager_model[1]
    assert int(bn.num_batches_tracked) == int(eager_bn.num_batches_tracked) == len(batches)
    for name in ("running_mean", "running_var"):
        got, want = getattr(bn, name), getattr(eager_bn, name)
        assert got.dtype == want.dtype == getattr(cr, dtype)
        np.testing.assert_array_equal(N(got), N(want))


def test_a_cumulative_batchnorm_averages_every_batch_equally():
    # momentum=None: the running mean is the plain mean of the batches' means.
    rng = np.random.default_rng(1)
    layer = nn.BatchNorm2d(2, momentum=None).double()
    means = []
    for _ in range(4):
        x = rng.normal(size=(3, 2, 2, 2)) + rng.normal(size=(1, 2, 1, 1))
        layer(T(x))
        means.append(x.mean(axis=(0, 2, 3)))
    np.testing.assert_allclose(N(layer.running_mean), np.mean(means, axis=0), rtol=1e-14)
