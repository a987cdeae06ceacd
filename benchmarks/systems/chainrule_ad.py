"""chainrule: loss.backward(); double backward via cr.autograd.grad. With storage="torch",
chainrule's graph over torch.Tensor arrays (PyTorch's kernels, chainrule's autograd)."""

from types import SimpleNamespace

import numpy as np

import chainrule as cr
import chainrule.nn.functional as F
from systems import _tape


def _clear(leaves):
    for p in leaves:
        p.grad = None


def _hvp(f, x, v):
    (g,) = cr.autograd.grad(f, [x], create_graph=True)
    (hv,) = cr.autograd.grad(cr.sum(g * v), [x])
    return hv


BACKEND = SimpleNamespace(
    ops=SimpleNamespace(
        sin=cr.sin,
        exp=cr.exp,
        tanh=cr.tanh,
        relu=F.relu,
        log_softmax=lambda z: F.log_softmax(z, axis=-1),
        sum=cr.sum,
        mean=cr.mean,
    ),
    leaf=lambda a: cr.tensor(a, requires_grad=True),
    const=cr.tensor,
    index=np.asarray,
    clear=_clear,
    grads=lambda leaves: [p.grad for p in leaves],
    hvp=_hvp,
)


def _on(storage: str):
    """The backend namespace whose leaves, constants and indices are arrays of `storage`."""
    if storage == "numpy":
        return BACKEND
    if storage == "torch":
        import torch

        array = torch.tensor
    else:
        import cupy

        array = cupy.asarray
    return SimpleNamespace(
        **{
            **vars(BACKEND),
            "leaf": lambda a: cr.asarray(array(a), requires_grad=True),
            "const": lambda a: cr.asarray(array(a)),
            "index": array,
        }
    )


def setup(one_thread: bool, storage: str = "numpy") -> dict:
    info = {"version": getattr(cr, "__version__", "unknown")}
    if storage == "torch":
        import torch

        if one_thread:
            torch.set_num_threads(1)
            torch.set_num_interop_threads(1)
        info["storage"] = f"torch {torch.__version__}"
    elif storage == "cupy":
        import cupy

        info["storage"] = f"cupy {cupy.__version__}"
    return info


def build(work, data, storage: str = "numpy") -> dict:
    steps = _tape.build(work, data, _on(storage))
    if storage != "cupy":
        return steps
    import cupy

    def synchronized(step):
        # GPU kernels run asynchronously: a step ends when the device is done.
        def run():
            out = step()
            cupy.cuda.get_current_stream().synchronize()
            return out

        return run

    return {name: synchronized(step) for name, step in steps.items()}


def to_numpy(grads) -> list:
    return [g.numpy() for g in grads]
