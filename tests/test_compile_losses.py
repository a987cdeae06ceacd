"""Classification losses inside compiled training steps: the labels' values are not known to
Python while tracing, so cross_entropy and nll_loss must not branch on them (they raised
ConcretizationError from a bounds check), and a replay must honour labels that the traced call
did not have (an ignored label, one out of bounds)."""

import warnings

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn, optim
from conftest import BACKEND, N, T


def _trainer(loss_fn, **loss_kwargs):
    cr.random.manual_seed(0)
    model = nn.Linear(4, 3)
    opt = optim.SGD(model.parameters(), lr=0.1)

    def step(x, y):
        opt.zero_grad()
        loss = loss_fn(model(x), y, **loss_kwargs)
        loss.backward()
        opt.step()
        return loss.detach()

    return model, step


LABELS = [
    np.array([0, 1, 2, 0, 1, 2, 0, 1]),
    np.array([2, 2, 1, 0, 0, 1, 2, 0]),
    np.array([0, -100, 2, 1, -100, 2, 0, 1]),  # ignored labels, met first at a replay
]


@pytest.mark.parametrize("raw", [False, True], ids=["tensor-labels", "raw-labels"])
@pytest.mark.parametrize(
    "loss_fn, kwargs",
    [
        (F.cross_entropy, {}),
        (F.cross_entropy, {"label_smoothing": 0.1}),
        (lambda z, y, **k: F.nll_loss(F.log_softmax(z, axis=1), y, **k), {}),
    ],
    ids=["cross_entropy", "label_smoothing", "nll_loss"],
)
def test_a_compiled_classification_step_equals_eager(loss_fn, kwargs, raw):
    rng = np.random.default_rng(0)
    xs = [T(rng.normal(size=(8, 4))) for _ in LABELS]
    ys = [BACKEND.asarray(y) if raw else T(y) for y in LABELS]
    eager_model, eager_step = _trainer(loss_fn, **kwargs)
    model, step = _trainer(loss_fn, **kwargs)
    compiled = cr.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cr.CompileWarning)
        for _ in range(3):
            for x, y in zip(xs, ys):
                want, got = eager_step(x, y), compiled(x, y)
                np.testing.assert_allclose(N(got), N(want), rtol=1e-13, atol=0)
    assert compiled.traces <= 2  # the first call made .grad; the rest replay
    for p, q in zip(model.parameters(), eager_model.parameters()):
        np.testing.assert_allclose(N(p.detach()), N(q.detach()), rtol=1e-12)


@pytest.mark.parametrize("bad", [3, -1])
def test_a_label_out_of_bounds_fails_at_a_replay(bad):
    f = cr.compile(lambda z, y: F.cross_entropy(z, y))
    z = T(np.ones((4, 3)))
    f(z, T([0, 1, 2, 0]))
    f(z, T([0, 1, 2, 1]))
    assert f.traces == 1
    with pytest.raises(IndexError):  # the gather's bounds check, on every library
        N(f(z, T([0, bad, 2, 1])))  # (Dask's raises when computed)
