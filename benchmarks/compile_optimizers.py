"""A compiled training step against the eager one, per optimizer: an MLP (3-h-h-1, tanh,
batch 64, float32) with MSE loss; the best of several timed runs of each, per step.
Run: `PYTHONPATH=src python benchmarks/compile_optimizers.py [--hidden 16 256]`.

With --instructions, the instructions of one step instead (callgrind, one BLAS thread, as
benchmarks/instructions.py counts): each step runs twice under callgrind after ten warm-up
steps, followed by one and by three measured steps; half the difference is one step. The
compiled steps replay the source tier (--tier loop: the loop over the instructions). Needs
valgrind; a few minutes per row."""

from __future__ import annotations

import argparse
import gc
import os
import re
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

import numpy as np

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn, optim
from chainrule._compile import _program

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


def data() -> tuple:
    rng = np.random.default_rng(0)
    x = cr.asarray(rng.normal(size=(64, 3)).astype(np.float32))
    y = cr.asarray(rng.normal(size=(64, 1)).astype(np.float32))
    return x, y


def measured(hidden: int, name: str, mode: str, steps: int) -> None:
    """The program that callgrind counts: ten warm-up steps, then `steps` steps."""
    x, y = data()
    step = trainer(hidden, OPTIMIZERS[name])
    if mode != "eager":
        _program.SOURCE_AFTER = 2 if mode == "source" else 10**9
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            step = cr.compile(step)
    for _ in range(10):
        step(x, y)
    # The heap so far left out of the cyclic GC's full collections (see instructions.py).
    gc.collect()
    gc.freeze()
    for _ in range(steps):
        step(x, y)


def count(hidden: int, name: str, mode: str, steps: int) -> int:
    """Total instructions of one run of the measured program under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        env = {
            **os.environ,
            "PYTHONHASHSEED": "0",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
        }
        command = [sys.executable, __file__, "--measured", name, str(hidden), mode, str(steps)]
        subprocess.run(
            ["setarch", "-R", "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"]
            + command,
            env=env,
            check=True,
            capture_output=True,
        )
        return int(re.search(r"^summary:\s+(\d+)", out.read_text(), re.MULTILINE).group(1))


def per_step_instructions(hidden: int, name: str, mode: str) -> float:
    return (count(hidden, name, mode, 3) - count(hidden, name, mode, 1)) / 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--hidden", type=int, nargs="+", default=[16, 256])
    parser.add_argument("--optimizers", nargs="+", default=sorted(OPTIMIZERS))
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--instructions", action="store_true")
    parser.add_argument("--tier", choices=("source", "loop"), default="source")
    parser.add_argument("--measured", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measured:
        name, hidden, mode, steps = args.measured
        measured(int(hidden), name, mode, int(steps))
        return
    if args.instructions:
        print("| MLP | optimizer | eager (M instructions) | compiled | speedup |")
        print("|---|---|---|---|---|")
        for hidden in args.hidden:
            for name in args.optimizers:
                eager = per_step_instructions(hidden, name, "eager")
                fast = per_step_instructions(hidden, name, args.tier)
                print(
                    f"| 3-{hidden}-{hidden}-1 | {name} | {eager / 1e6:.3f} | {fast / 1e6:.3f} | "
                    f"{eager / fast:.2f}x |",
                    flush=True,
                )
        return
    x, y = data()
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
