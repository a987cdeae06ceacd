"""A scientific loop: 1,000 steps of gradient descent on a 50-parameter model with small arrays
(16 damped sinusoids plus a line, fitted to 64 samples), compile time included.

    python benchmarks/loop.py [--out loop.json] [--md loop.md] [--repeats 3]

Systems: chainrule eager, chainrule.compile, jax.jit (compile included) and PyTorch eager,
each in its own process with every thread pool pinned to one thread; each figure is the
median of the repeats of process CPU time (each repeat compiles afresh). The final losses
must agree."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
STEPS = 1000
LR = 0.02
N_WAVES = 16  # 3 parameters each (amplitude, frequency, decay), plus slope and offset: 50
SYSTEMS = ("chainrule", "chainrule-compiled", "jax-jit", "torch")


def data() -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Samples t, targets y and the initial parameters (seeded)."""
    rng = np.random.default_rng(7)
    t = np.linspace(0.0, 4.0, 64)
    truth = rng.uniform(0.5, 1.5, 3 * N_WAVES + 2)
    theta = truth + rng.normal(0.0, 0.1, truth.shape)
    return t, model(truth, t, np), theta


def model(theta, t, ops):
    """sum_k a_k sin(w_k t) exp(-d_k t) + slope t + offset, written against `ops`."""
    a = theta[0:N_WAVES][:, None]
    w = theta[N_WAVES : 2 * N_WAVES][:, None]
    d = theta[2 * N_WAVES : 3 * N_WAVES][:, None]
    waves = a * ops.sin(w * t) * ops.exp(-d * t)
    return ops.sum(waves, axis=0) + theta[3 * N_WAVES] * t + theta[3 * N_WAVES + 1]


def loss_of(theta, t, y, ops):
    r = model(theta, t, ops) - y
    return ops.mean(r * r)


def run_chainrule(compiled: bool) -> tuple[float, float]:
    import chainrule as cr

    t_np, y_np, theta_np = data()
    t, y = cr.asarray(t_np), cr.asarray(y_np)

    def step(theta):
        loss = loss_of(theta, t, y, cr)
        (g,) = cr.autograd.grad(loss, theta)
        return (theta - LR * g).detach(), loss.detach()

    start = time.process_time()
    fn = cr.compile(step) if compiled else step
    theta = cr.asarray(theta_np, copy=True)
    for _ in range(STEPS):
        theta, loss = fn(theta.requires_grad_(True))
    return time.process_time() - start, float(loss.item())


def run_jax() -> tuple[float, float]:
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    t_np, y_np, theta_np = data()
    t, y = jnp.asarray(t_np), jnp.asarray(y_np)

    def step(theta):  # a new function each repeat: jax.jit compiles again
        loss, g = jax.value_and_grad(lambda p: loss_of(p, t, y, jnp))(theta)
        return theta - LR * g, loss

    start = time.process_time()
    fn = jax.jit(step)
    theta = jnp.asarray(theta_np)
    for _ in range(STEPS):
        theta, loss = fn(theta)
    loss = float(jax.block_until_ready(loss))
    return time.process_time() - start, loss


def run_torch() -> tuple[float, float]:
    import torch

    torch.set_num_threads(1)
    t_np, y_np, theta_np = data()
    t, y = torch.tensor(t_np), torch.tensor(y_np)
    start = time.process_time()
    theta = torch.tensor(theta_np, requires_grad=True)
    for _ in range(STEPS):
        loss = loss_of(theta, t, y, torch)
        (g,) = torch.autograd.grad(loss, theta)
        theta = (theta - LR * g).detach().requires_grad_(True)
    return time.process_time() - start, float(loss.item())


def worker(system: str, repeats: int) -> dict:
    run = {
        "chainrule": lambda: run_chainrule(False),
        "chainrule-compiled": lambda: run_chainrule(True),
        "jax-jit": run_jax,
        "torch": run_torch,
    }[system]
    times, losses = [], []
    for _ in range(repeats):
        seconds, loss = run()
        times.append(seconds)
        losses.append(loss)
    median = statistics.median(times)
    return {"system": system, "times": times, "seconds": median, "loss": losses[0]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(HERE / "loop.json"))
    parser.add_argument("--md", default=str(HERE / "loop.md"))
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--worker", choices=SYSTEMS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.repeats)))
        return
    sys.path.insert(0, str(HERE))
    from _worker import child_env

    results = {}
    for system in SYSTEMS:
        command = [sys.executable, __file__, "--worker", system, "--repeats", str(args.repeats)]
        done = subprocess.run(
            command, capture_output=True, text=True, env=child_env(os.environ, "1"), check=False
        )
        if done.returncode:
            results[system] = {"error": (done.stderr.strip().splitlines() or ["?"])[-1][:160]}
        else:
            results[system] = json.loads(done.stdout.strip().splitlines()[-1])
        print(system, results[system], file=sys.stderr)
    base = results.get("chainrule", {}).get("seconds")
    lines = [
        f"{STEPS} steps of gradient descent, 50 parameters, 64 samples (1 thread, process CPU "
        f"time, median of {args.repeats}; compile included):",
        "",
        "| system | total (s) | per step (us) | vs chainrule eager | final loss |",
        "|---|---:|---:|---:|---:|",
    ]
    for system, r in results.items():
        if "error" in r:
            lines.append(f"| {system} | - | - | - | failed: {r['error']} |")
            continue
        s = r["seconds"]
        lines.append(
            f"| {system} | {s:.3f} | {s / STEPS * 1e6:.0f} | "
            f"{s / base if base else float('nan'):.2f}x | {r['loss']:.6g} |"
        )
    Path(args.out).write_text(json.dumps(results, indent=1) + "\n")
    Path(args.md).write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
