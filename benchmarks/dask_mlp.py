"""An MLP (20-256-256-1, float32, mean squared error) trained by Adam on rows held by a Dask
cluster, data parallel over the row chunks: chainrule on Dask against the same model written by
hand in Dask (forward and backward by hand, Adam in NumPy) and against chainrule on NumPy in one
process. Time per step (wall and this process's CPU: the cluster runs in this process), tasks.

    python benchmarks/dask_mlp.py [--rows 200000] [--chunks 10] [--steps 5] [--md FILE]
"""

from __future__ import annotations

import argparse
import statistics
import time
import warnings

import dask
import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster, wait

import chainrule as cr

SIZES = (20, 256, 256, 1)
LR, BETAS, EPS = 1e-3, (0.9, 0.999), 1e-8


def initial_parameters() -> list[np.ndarray]:
    """W1, b1, W2, b2, W3, b3 (float32), drawn once for every system."""
    rng = np.random.default_rng(0)
    params = []
    for fan_in, fan_out in zip(SIZES[:-1], SIZES[1:]):
        bound = 1 / np.sqrt(fan_in)
        params.append(rng.uniform(-bound, bound, (fan_in, fan_out)).astype(np.float32))
        params.append(rng.uniform(-bound, bound, fan_out).astype(np.float32))
    return params


def make_data(rows: int, chunk: int):
    """Features and a smooth target, float32, drawn chunk by chunk."""
    rng = da.random.default_rng(1)
    x = rng.standard_normal((rows, SIZES[0]), chunks=(chunk, SIZES[0]), dtype=np.float32)
    a = np.linspace(-1.0, 1.0, SIZES[0], dtype=np.float32)
    y = da.sin(x @ a)[:, None] + 0.1 * x[:, :1]
    return x, y


def mlp_loss(x, y, params):
    """Mean squared error of the MLP, on chainrule tensors."""
    w1, b1, w2, b2, w3, b3 = params
    h1 = cr.nn.functional.relu(x @ w1 + b1)
    h2 = cr.nn.functional.relu(h1 @ w2 + b2)
    return cr.mean((h2 @ w3 + b3 - y) ** 2)


def train_chainrule(x, y, steps: int, seconds: list, cpu: list, tasks: list, on_dask: bool):
    """The ordinary loop, with parameters of the data's library (Dask: opt.step settles them)."""
    wrap = da.from_array if on_dask else np.asarray
    params = [cr.asarray(wrap(p), requires_grad=True) for p in initial_parameters()]
    opt = cr.optim.Adam(params, lr=LR, betas=BETAS, eps=EPS)
    x, y = cr.asarray(x), cr.asarray(y)

    def closure():
        opt.zero_grad()
        loss = mlp_loss(x, y, params)
        loss.backward()
        if on_dask:
            tasks.append(sum(len(dict(p.grad.__dask_graph__())) for p in params[:1]))
        return loss

    for _ in range(steps):
        start, start_cpu = time.perf_counter(), time.process_time()
        float(opt.step(closure))
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return [p.numpy() for p in params]


def hand_gradients(x, y, params):
    """The loss and the gradients of the MLP, written by hand in Dask (lazy). The parameters
    become Dask arrays of one chunk first: one task each, not a NumPy array in every task."""
    w1, b1, w2, b2, w3, b3 = (da.from_array(p) for p in params)
    h1 = da.maximum(x @ w1 + b1, 0)
    h2 = da.maximum(h1 @ w2 + b2, 0)
    r = h2 @ w3 + b3 - y
    d = r * np.float32(2 / x.shape[0])
    # relu's derivative from its output: the pre-activation then has one consumer, and Dask
    # fuses it into the relu's task (masks from it kept it as a task and an array of its own).
    dh2 = (d @ w3.T) * (h2 > 0)
    dh1 = (dh2 @ w2.T) * (h1 > 0)
    grads = [x.T @ dh1, dh1.sum(0), h1.T @ dh2, dh2.sum(0), h2.T @ d, d.sum(0)]
    return (r * r).mean(), grads


def train_hand(x, y, steps: int, seconds: list, cpu: list, tasks: list):
    """Gradients computed on the cluster, Adam in NumPy here (PyTorch's update)."""
    params = initial_parameters()
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    b1, b2 = BETAS
    for k in range(1, steps + 1):
        start, start_cpu = time.perf_counter(), time.process_time()
        loss, grads = hand_gradients(x, y, params)
        tasks.append(len(dict(grads[0].__dask_graph__())))
        loss, *grads = dask.compute(loss, *grads)
        for i, g in enumerate(grads):
            m[i] = b1 * m[i] + (1 - b1) * g
            v[i] = b2 * v[i] + (1 - b2) * g * g
            denom = np.sqrt(v[i]) / np.sqrt(1 - b2**k) + EPS
            params[i] = params[i] - (LR / (1 - b1**k)) * m[i] / denom
        seconds.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return params


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--md", help="also write the table to this file")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # Dask's notes on graph sizes
    chunk = args.rows // args.chunks
    results = {}
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        x, y = client.persist(list(make_data(args.rows, chunk)))
        wait([x, y])
        local_x, local_y = dask.compute(x, y)
        runs = {
            "chainrule on Dask": lambda *a: train_chainrule(x, y, *a, on_dask=True),
            "hand-written Dask": lambda *a: train_hand(x, y, *a),
            "chainrule on NumPy, one process": lambda *a: train_chainrule(
                local_x, local_y, *a, on_dask=False
            ),
        }
        for name, run in runs.items():
            seconds, cpu, tasks = [], [], []
            weights = run(args.steps + 1, seconds, cpu, tasks)  # step 1: the warm-up
            results[name] = (weights, seconds[1:], cpu[1:], tasks[-1] if tasks else None)
    base = statistics.median(results["hand-written Dask"][1])
    lines = [
        f"{args.rows:,} rows x {SIZES[0]} float32 in {args.chunks} chunks, MLP "
        f"{'-'.join(map(str, SIZES))}, Adam; LocalCluster (1 worker, 2 threads, in process); "
        f"median of {args.steps} steps after one",
        "",
        "| system | s per step (wall) | CPU s per step | vs hand-written | tasks (W1's gradient) |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, (_, seconds, cpu, tasks) in results.items():
        wall = statistics.median(seconds)
        lines.append(
            f"| {name} | {wall:.3f} | {statistics.median(cpu):.3f} | {wall / base:.2f}x | "
            f"{'' if tasks is None else tasks} |"
        )
    reference = results["hand-written Dask"][0]
    for name, (weights, *_) in results.items():
        for got, want in zip(weights, reference):
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-5, err_msg=name)
    lines.append("")
    lines.append("The three trainings' weights agree (rtol 2e-3, float32).")
    table = "\n".join(lines)
    print(table)
    if args.md:
        with open(args.md, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
