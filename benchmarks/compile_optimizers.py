"""A compiled training step against the eager one, per optimizer: an MLP (3-h-h-1, tanh,
batch 64, float32) with MSE loss; the best of several timed runs of each, per step.
Run: `PYTHONPATH=src python benchmarks/compile_optimizers.py [--hidden 16 256]`."""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn, optim

OPTIMIZERS = {
    "sgd": lambda ps: optim.SGD(ps, lr=0.01),
    "sgd-momentum": lambda ps: optim.SGD(ps, lr=0.01, momentum=0.9),
    "adam": lambda ps: optim.Adam(ps, lr=1e-3),
    "adamw": lambda ps: optim.AdamW(ps, lr=1e-3),
    "rmsprop": lambda ps: optim.RMSprop(ps, lr=1e-3),
}


def trainer(hidden: int, make_optimizer):
    cr.random.manual_seed(0)
    f32 = cr.float32
    model = nn.Sequential(
        nn.Linear(3, hidden, dtype=f32), nn.Tanh(), nn.Linear(hidden, hidden, dtype=f32),
        nn.Tanh(), nn.Linear(hidden, 1, dtype=f32),
    )  # fmt: skip
    opt = make_optimizer(list(model.parameters()))

    def step(x, y):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        opt.step()
        return loss.detach()

    return step


def per_step(step, x, y, steps: int, repeats: int) -> float:
    for _ in range(10):  # traces, the switch to compiled source
        step(x, y)
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(steps):
            step(x, y)
        best = min(best, (time.perf_counter() - start) / steps)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hidden", type=int, nargs="+", default=[16, 256])
    parser.add_argument("--optimizers", nargs="+", default=sorted(OPTIMIZERS))
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    rng = np.random.default_rng(0)
    x = cr.asarray(rng.normal(size=(64, 3)).astype(np.float32))
    y = cr.asarray(rng.normal(size=(64, 1)).astype(np.float32))
    print("| MLP | optimizer | eager (us/step) | compiled (us/step) | speedup |")
    print("|---|---|---|---|---|")
    for hidden in args.hidden:
        for name in args.optimizers:
            eager = per_step(trainer(hidden, OPTIMIZERS[name]), x, y, args.steps, args.repeats)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a fallback shows as a speedup near 1
                compiled = cr.compile(trainer(hidden, OPTIMIZERS[name]))
                fast = per_step(compiled, x, y, args.steps, args.repeats)
            print(
                f"| 3-{hidden}-{hidden}-1 | {name} | {eager * 1e6:.0f} | {fast * 1e6:.0f} | "
                f"{eager / fast:.2f}x |"
            )


if __name__ == "__main__":
    main()
