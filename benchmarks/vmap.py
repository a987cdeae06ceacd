"""Per-sample gradients with vmap: `vmap(grad(loss))` against one batched gradient of the
summed loss (the same arithmetic without the per-sample results), against a Python loop
over the samples, and against the floor: NumPy alone writing the first layer's per-sample
weight gradients (98.6% of the per-sample numbers).

    python benchmarks/vmap.py [--quick] [--cpu-time] [--md vmap-results.md]

Workload: the cross-entropy loss of a 784-256-10 ReLU MLP, batch 256, float32, one thread.
Per-sample gradients hold 256 copies of the parameters' shapes (203,530 numbers each): the
batched gradient sums them inside its matrix products, vmap writes them all out. Each figure
is the median of several repeats, the variants alternating; the three agree before timing.
"""

from __future__ import annotations

import platform
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import timing  # noqa: E402  (first: one thread for NumPy)

if not (HERE.parent / "src" / "chainrule").is_dir():
    raise SystemExit("run from a chainrule checkout")
sys.path.insert(0, str(HERE.parent / "src"))

import numpy as np  # noqa: E402

import chainrule as cr  # noqa: E402
import chainrule.nn.functional as F  # noqa: E402
from chainrule.func import grad, vmap  # noqa: E402

SIZES = (784, 256, 10)
BATCH = 256


def loss(params: dict, x: cr.Tensor, onehot: cr.Tensor) -> cr.Tensor:
    """Cross-entropy of one sample (x: (784,), onehot: (10,)), or the sum over a batch (x:
    (n, 784), onehot: (n, 10))."""
    h = F.relu(F.linear(x, params["w1"], params["b1"]))
    logits = F.linear(h, params["w2"], params["b2"])
    return -cr.sum(F.log_softmax(logits, axis=-1) * onehot)


def data():
    rng = np.random.default_rng(0)
    f32 = np.float32
    params = {
        "w1": cr.tensor((rng.standard_normal((256, 784)) / 28).astype(f32)),
        "b1": cr.tensor(np.zeros(256, f32)),
        "w2": cr.tensor((rng.standard_normal((10, 256)) / 16).astype(f32)),
        "b2": cr.tensor(np.zeros(10, f32)),
    }
    x = cr.tensor(rng.standard_normal((BATCH, 784)).astype(f32))
    onehot = cr.tensor(np.eye(10, dtype=f32)[rng.integers(0, 10, BATCH)])
    return params, x, onehot


def per_sample_vmap(params, x, onehot):
    return vmap(grad(loss), in_dims=(None, 0, 0))(params, x, onehot)


def batched(params, x, onehot):
    return grad(loss)(params, x, onehot)


def per_sample_loop(params, x, onehot):
    leaves = {k: p.detach().requires_grad_(True) for k, p in params.items()}
    rows = []
    for i in range(x.shape[0]):
        out = loss(leaves, x[i], onehot[i])
        rows.append(dict(zip(leaves, cr.autograd.grad(out, list(leaves.values())))))
    return {k: cr.stack([r[k] for r in rows]) for k in leaves}


def torch_variants(params, x, onehot) -> dict:
    """The same two computations with PyTorch's torch.func, where PyTorch is installed (the
    bench extra): a reference for the ratio, on this machine."""
    try:
        import torch
        import torch.nn.functional as TF
        from torch.func import grad as tgrad
        from torch.func import vmap as tvmap
    except ImportError:
        return {}
    torch.set_num_threads(1)
    tp = {k: torch.from_numpy(v.numpy().copy()) for k, v in params.items()}
    tx, toh = torch.from_numpy(x.numpy().copy()), torch.from_numpy(onehot.numpy().copy())

    def tloss(p, x, onehot):
        h = TF.relu(TF.linear(x, p["w1"], p["b1"]))
        return -(TF.log_softmax(TF.linear(h, p["w2"], p["b2"]), dim=-1) * onehot).sum()

    return {
        "PyTorch: batched gradient of the summed loss": lambda: tgrad(tloss)(tp, tx, toh),
        "PyTorch: torch.func.vmap(grad(loss))": lambda: tvmap(tgrad(tloss), in_dims=(None, 0, 0))(
            tp, tx, toh
        ),
    }


def floor_variants(params, x) -> dict:
    """NumPy alone computing the first layer's per-sample weight gradients, (256, 784, 256)
    float32 (205 MB of new memory), from the same inputs: as vmap's VJP of matmul does (one
    broadcast multiply, the outer product of each sample's input and gradient), and by one
    np.matmul of (256, 784, 1) by (256, 1, 256)."""
    xs = x.numpy()
    g = np.random.default_rng(1).standard_normal((BATCH, SIZES[1])).astype(np.float32)
    return {
        "NumPy: broadcast multiply": lambda: xs[:, :, None] * g[:, None, :],
        "NumPy: matmul": lambda: np.matmul(xs[:, :, None], g[:, None, :]),
    }


def measure(repeats: int, min_s: float, clock: str) -> dict:
    params, x, onehot = data()
    fast, slow, summed = (
        per_sample_vmap(params, x, onehot),
        per_sample_loop(params, x, onehot),
        batched(params, x, onehot),
    )
    for k in params:
        if not np.allclose(fast[k].numpy(), slow[k].numpy(), rtol=1e-4, atol=1e-5):
            raise SystemExit(f"vmap and the loop disagree on {k}")
        if not np.allclose(fast[k].numpy().sum(0), summed[k].numpy(), rtol=1e-3, atol=1e-4):
            raise SystemExit(f"the per-sample gradients of {k} do not add up to the batched one")
    variants = {
        "batched gradient of the summed loss": lambda: batched(params, x, onehot),
        "vmap(grad(loss))": lambda: per_sample_vmap(params, x, onehot),
        "Python loop over samples": lambda: per_sample_loop(params, x, onehot),
        **floor_variants(params, x),
        **torch_variants(params, x, onehot),
    }
    return timing.medians(variants, repeats, min_s, clock)


def report(r: dict, clock: str) -> str:
    base = r["batched gradient of the summed loss"]
    fast = r["vmap(grad(loss))"]
    loop = r["Python loop over samples"]
    floor = r["NumPy: broadcast multiply"]
    lines = [
        "# vmap: per-sample gradients",
        "",
        f"{platform.processor() or platform.machine()}, Python {platform.python_version()}, "
        f"NumPy {np.__version__}, one thread, {timing.clock_note(clock)}. MLP 784-256-10 "
        f"(ReLU, cross-entropy), batch {BATCH}, float32. Medians, in ms.",
        "",
        "| variant | ms | vmap / it | it / vmap |",
        "|---|---:|---:|---:|",
        f"| batched gradient of the summed loss (no per-sample results) | {base * 1e3:.1f} "
        f"| {fast / base:.2f}x | |",
        f"| vmap(grad(loss)): per-sample gradients | {fast * 1e3:.1f} | | |",
        f"| Python loop over samples: per-sample gradients | {loop * 1e3:.1f} | "
        f"| {loop / fast:.1f}x |",
        f"| floor: NumPy writing the first layer's per-sample weight gradients, one broadcast "
        f"multiply | {floor * 1e3:.1f} | {fast / floor:.2f}x | |",
        f"| the same by one np.matmul | {r['NumPy: matmul'] * 1e3:.1f} | | |",
    ]
    tb = r.get("PyTorch: batched gradient of the summed loss")
    tv = r.get("PyTorch: torch.func.vmap(grad(loss))")
    if tb is not None and tv is not None:
        lines += [
            f"| PyTorch 2.13: batched gradient of the summed loss | {tb * 1e3:.1f} | | |",
            f"| PyTorch 2.13: torch.func.vmap(grad(loss)) | {tv * 1e3:.1f} | {tv / tb:.2f}x "
            f"of PyTorch's batched | {tv / fast:.2f}x (PyTorch's / chainrule's) |",
        ]
    return "\n".join(lines) + "\n"


def main() -> None:
    args = timing.arguments(__doc__, str(HERE / "vmap-results.md"))
    repeats, min_s = (3, 0.2) if args.quick else (7, 1.0)
    clock = "cpu" if args.cpu_time else "wall"
    text = report(measure(repeats, min_s, clock), clock)
    Path(args.md).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
