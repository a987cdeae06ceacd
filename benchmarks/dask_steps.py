"""Steps of SGD and Adam on Dask parameters on a LocalCluster, eager and compiled: tasks and time
per step, step 1 to the last (optimizer steps settle the parameters, so both should stay flat).

    python benchmarks/dask_steps.py [--steps 50] [--rows 2000000] [--chunks 10] [--md FILE]
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import time
import warnings

import dask.array as da
import numpy as np
from dask.distributed import Client, LocalCluster

import chainrule as cr
from chainrule import _backend

D = 20


def train(x, signs, make_optimizer, steps, compiled):
    """Logistic regression with the ordinary loop (its step compiled or not); tasks and seconds
    of each step (tasks: of the largest graph among the arrays the step settles, the updated
    parameter's, which holds the forward and the backward)."""
    w = cr.asarray(da.zeros(D, chunks=D), requires_grad=True)
    opt = make_optimizer([w])
    x, signs = cr.asarray(x), cr.asarray(signs)
    tasks, seconds = [], []

    def closure():
        opt.zero_grad()
        loss = cr.mean(cr.logaddexp(0.0, -signs * (x @ w)))
        loss.backward()
        return loss

    def step():
        return opt.step(closure)

    settle = _backend.settle

    def counted(arrays, small):
        tasks.append(max(len(dict(a.__dask_graph__())) for a in arrays))
        return settle(arrays, small)

    run = cr.compile(step) if compiled else step
    _backend.settle = counted
    try:
        for _ in range(steps):
            start = time.perf_counter()
            float(run())  # the loss of the step, computed with its gradient
            seconds.append(time.perf_counter() - start)
    finally:
        _backend.settle = settle
    return tasks, seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--chunks", type=int, default=10)
    parser.add_argument("--md", help="also write the table to this file")
    args = parser.parse_args()
    warnings.simplefilter("ignore")  # Dask's notes on graph sizes
    optimizers = {
        "SGD (momentum 0.9)": lambda ps: cr.optim.SGD(ps, lr=0.5, momentum=0.9),
        "Adam": lambda ps: cr.optim.Adam(ps, lr=0.05),
    }
    lines = [
        f"{args.rows:,} x {D} float64 in {args.chunks} chunks, LocalCluster (1 worker, 2 "
        f"threads, in process), {args.steps} steps",
        "",
        "| optimizer | tasks per step (first, last) | s per step, steps 2-11 | s per step, "
        "last 10 | last / first |",
        "|---|---|---:|---:|---:|",
    ]
    with (
        LocalCluster(
            n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        rng = da.random.default_rng(0)
        x = rng.standard_normal((args.rows, D), chunks=(args.rows // args.chunks, D))
        signs = da.sign(x @ np.linspace(-1.0, 1.0, D) + rng.logistic(size=args.rows))
        x, signs = client.persist([x, signs])
        for (name, make), compiled in itertools.product(optimizers.items(), (False, True)):
            tasks, seconds = train(x, signs, make, args.steps, compiled)
            name = f"{name}, compiled" if compiled else name
            first = statistics.median(seconds[1:11])
            last = statistics.median(seconds[-10:])
            lines.append(
                f"| {name} | {tasks[0]}, {tasks[-1]} | {first:.3f} | {last:.3f} | "
                f"{last / first:.2f} |"
            )
    table = "\n".join(lines)
    print(table)
    if args.md:
        with open(args.md, "w") as f:
            f.write(table + "\n")


if __name__ == "__main__":
    main()
