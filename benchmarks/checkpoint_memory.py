"""Memory of a 50-layer tanh MLP (width 512, batch 1024, float32) with and without activation
checkpointing (checkpoint_sequential), measured with tracemalloc (NumPy reports its array
allocations to it): what the graph holds after forward, and the peak of forward + backward
(which includes the 50 MiB of weight gradients). Prints a Markdown table.

    python benchmarks/checkpoint_memory.py
"""

from __future__ import annotations

import time
import tracemalloc

import numpy as np

import chainrule as cr
from chainrule.utils.checkpoint import checkpoint_sequential

LAYERS, WIDTH, BATCH = 50, 512, 1024


def main() -> None:
    rng = np.random.default_rng(0)
    weights = [
        cr.tensor(rng.standard_normal((WIDTH, WIDTH), dtype=np.float32) / WIDTH**0.5,
                  requires_grad=True)
        for _ in range(LAYERS)
    ]  # fmt: skip
    x = cr.tensor(rng.standard_normal((BATCH, WIDTH), dtype=np.float32))
    layers = [lambda h, w=w: cr.tanh(h @ w) for w in weights]

    def plain(h):
        for f in layers:
            h = f(h)
        return h

    rows = [("no checkpointing", plain)]
    for segments in (5, 7, 10):
        rows.append(
            (f"checkpoint_sequential, {segments} segments",
             lambda h, s=segments: checkpoint_sequential(layers, s, h))
        )  # fmt: skip
    reference = None
    print(
        "| run | held after forward (MiB) | peak (MiB) | peak vs plain | time (s) | max grad diff |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for name, forward in rows:
        for w in weights:
            w.grad = None
        tracemalloc.start()
        start = time.perf_counter()
        loss = cr.mean(forward(x) ** 2)
        held, _ = tracemalloc.get_traced_memory()
        loss.backward()
        del loss
        seconds = time.perf_counter() - start
        _, peak = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        grads = [w.grad.numpy().copy() for w in weights]
        if reference is None:
            reference = (peak, grads)
        diff = max(float(np.abs(a - b).max()) for a, b in zip(grads, reference[1]))
        print(
            f"| {name} | {held / 2**20:.1f} | {peak / 2**20:.1f} | {peak / reference[0]:.2f}x "
            f"| {seconds:.2f} | {diff:.1e} |"
        )


if __name__ == "__main__":
    main()
