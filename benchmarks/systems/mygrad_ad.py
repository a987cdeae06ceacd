"""MyGrad: loss.backward(); it has no higher-order derivatives (no W4 HVP)."""

from types import SimpleNamespace

import mygrad as mg
import numpy as np

from systems import _tape

BACKEND = SimpleNamespace(
    ops=SimpleNamespace(
        sin=mg.sin,
        exp=mg.exp,
        tanh=mg.tanh,
        relu=mg.nnet.relu,
        log_softmax=lambda z: mg.nnet.logsoftmax(z, axis=-1),
        sum=mg.sum,
        mean=mg.mean,
    ),
    leaf=mg.tensor,
    const=np.asarray,
    index=np.asarray,
    # MyGrad drops a tensor's gradient when it enters a new operation.
    clear=lambda leaves: None,
    grads=lambda leaves: [p.grad for p in leaves],
    hvp=None,
)


def setup(one_thread: bool) -> dict:
    return {"version": mg.__version__}


def build(work, data) -> dict:
    return _tape.build(work, data, BACKEND)


def to_numpy(grads) -> list:
    return list(grads)
