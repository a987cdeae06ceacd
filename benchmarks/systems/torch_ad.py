"""PyTorch (eager, CPU): loss.backward(); double backward via autograd.grad."""

from types import SimpleNamespace

import torch

from systems import _tape


def _clear(leaves):
    for p in leaves:
        p.grad = None


def _hvp(f, x, v):
    (g,) = torch.autograd.grad(f, [x], create_graph=True)
    (hv,) = torch.autograd.grad(torch.sum(g * v), [x])
    return hv


BACKEND = SimpleNamespace(
    ops=SimpleNamespace(
        sin=torch.sin,
        exp=torch.exp,
        tanh=torch.tanh,
        relu=torch.relu,
        log_softmax=lambda z: torch.log_softmax(z, dim=-1),
        sum=torch.sum,
        mean=torch.mean,
    ),
    leaf=lambda a: torch.tensor(a, requires_grad=True),
    const=torch.tensor,
    index=torch.tensor,
    clear=_clear,
    grads=lambda leaves: [p.grad for p in leaves],
    hvp=_hvp,
)


def setup(one_thread: bool) -> dict:
    if one_thread:
        torch.set_num_threads(1)
        torch.set_num_interop_threads(1)
    return {"version": torch.__version__, "torch_threads": torch.get_num_threads()}


def build(work, data) -> dict:
    return _tape.build(work, data, BACKEND)


def to_numpy(grads) -> list:
    return [g.detach().numpy() for g in grads]
