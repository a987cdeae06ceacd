"""Logistic regression on a Dask cluster, trained by gradient descent with chainrule gradients.

    python examples/dask_logistic.py [--check] [--steps N] [--rows N] [--big-rows N]

Starts a dask.distributed LocalCluster (2 worker processes), then:
1. 2,000,000 x 20 float64 rows in chunks of 200,000, held by the workers: chainrule's
   gradient against a hand-written Dask gradient (same model, same steps) and against chainrule
   on plain NumPy arrays in this process; time, peak worker memory, tasks per step.
2. Data larger than a worker's memory limit (1 GiB each), generated lazily chunk by chunk at
   every step: it still trains.
--check exits non-zero unless both trainings lower the loss and the gradients agree.
"""

from __future__ import annotations

import argparse
import resource
import threading
import time

import dask
import dask.array as da
import numpy as np
import psutil
from dask.distributed import Client, LocalCluster, wait

import chainrule as cr

D = 20
CHUNK = 200_000


def make_data(rows: int, chunk: int, seed: int = 0):
    """Features and labels (+1/-1) drawn lazily, chunk by chunk, from a logistic model."""
    w_true = np.linspace(-1.0, 1.0, D)
    x = da.random.default_rng(seed).standard_normal((rows, D), chunks=(chunk, D))
    noise = da.random.default_rng(seed + 1).logistic(size=rows, chunks=chunk)
    signs = 2.0 * ((x @ w_true + noise) > 0) - 1.0
    return x, signs


def loss_of(x, signs, w):
    """Mean logistic loss log(1 + exp(-s (x @ w))), on chainrule tensors."""
    return cr.mean(cr.logaddexp(0.0, -signs * (x @ w)))


def chainrule_gradient(x, signs, w_np):
    """The loss and its gradient in w as lazy Dask arrays: nothing is computed here."""
    w = cr.asarray(da.from_array(w_np), requires_grad=True)
    loss = loss_of(cr.asarray(x), cr.asarray(signs), w)
    loss.backward()
    return loss, w.grad


def handwritten_gradient(x, signs, w_np):
    """The same gradient written by hand with Dask: -x^T (s sigmoid(-s z)) / n."""
    z = x @ w_np
    return x.T @ (-signs / (1.0 + np.exp(signs * z))) / x.shape[0]


def _tasks(a) -> str:
    """A Dask array's task count, before and after Dask's optimization (which fuses each
    chunk's elementwise tasks into one): the second is what runs."""
    (optimized,) = dask.optimize(a)
    return f"{len(dict(a.__dask_graph__()))}, {len(dict(optimized.__dask_graph__()))}"


def train_chainrule(x, signs, steps, lr, count=False):
    """The ordinary training loop, with a Dask parameter: optim.SGD settles it after each
    step (20 weights: computed and wrapped back), so every step's graph is step 1's size."""
    w = cr.asarray(da.zeros(D, chunks=D), requires_grad=True)
    opt = cr.optim.SGD([w], lr=lr)
    x, signs = cr.asarray(x), cr.asarray(signs)
    tasks = ""
    for _ in range(steps):
        opt.zero_grad()
        loss_of(x, signs, w).backward()
        tasks = _tasks(w.grad.array) if count else tasks
        opt.step()  # the one computation of the step
    return w.numpy(), tasks


def train_handwritten(x, signs, steps, lr, count=False):
    w = np.zeros(D)
    tasks = ""
    for _ in range(steps):
        grad = handwritten_gradient(x, signs, w)
        tasks = _tasks(grad) if count else tasks
        w = w - lr * grad.compute()
    return w, tasks


def train_numpy(x, signs, steps, lr):
    """chainrule on NumPy arrays in this process."""
    x, signs = cr.asarray(x), cr.asarray(signs)
    w = cr.zeros(D).requires_grad_()
    for _ in range(steps):
        w.grad = None
        loss_of(x, signs, w).backward()
        with cr.no_grad():
            w -= lr * w.grad
    return w.numpy()


def loss_value(x, signs, w_np) -> float:
    return float(da.mean(np.logaddexp(0.0, -signs * (x @ w_np))).compute())


def _reset_peak(dask_worker):
    """In each worker: the peak resident memory restarts from now, kept up by a sampling
    thread (started on first use, and again in a worker that was restarted)."""
    proc = psutil.Process()
    dask_worker.peak_rss = proc.memory_info().rss
    if getattr(dask_worker, "peak_sampler", None) is None:

        def sample():
            while True:
                dask_worker.peak_rss = max(dask_worker.peak_rss, proc.memory_info().rss)
                time.sleep(0.005)

        dask_worker.peak_sampler = threading.Thread(target=sample, daemon=True)
        dask_worker.peak_sampler.start()


def _peak(dask_worker):
    return dask_worker.peak_rss / 2**20


def peak_worker_mib(client) -> int:
    """The largest of the workers' peak resident memory since the last reset (MiB)."""
    return round(max(client.run(_peak).values()))


def compare(client, rows, steps, lr):
    data_mib = rows * (D + 1) * 8 / 2**20
    print(
        f"\n{rows:,} x {D} float64 in {rows // CHUNK} chunks of {CHUNK:,} rows "
        f"({data_mib:.0f} MiB with the labels), held by the workers; {steps} steps"
    )
    x, signs = client.persist(list(make_data(rows, CHUNK)))
    wait([x, signs])
    results = {}
    for name, fn in (("chainrule", train_chainrule), ("hand-written Dask", train_handwritten)):
        # Warm-up (the first graph and computation pay one-time costs), counting the tasks.
        _, tasks = fn(x, signs, 1, 0.0, count=True)
        client.run(_reset_peak)
        start = time.perf_counter()
        w, _ = fn(x, signs, steps, lr)
        seconds = time.perf_counter() - start
        results[name] = (w, seconds, peak_worker_mib(client), tasks)
    local_x, local_signs = dask.compute(x, signs)
    start = time.perf_counter()
    w_numpy = train_numpy(local_x, local_signs, steps, lr)
    numpy_s = time.perf_counter() - start
    numpy_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        "| gradient | time per step (s) | peak worker memory (MiB) | tasks per step (graph, run) |"
    )
    print("|---|---:|---:|---:|")
    for name, (_, seconds, peaks, tasks) in results.items():
        print(f"| {name} | {seconds / steps:.3f} | {peaks} | {tasks} |")
    print(
        f"| chainrule on NumPy, one process | {numpy_s / steps:.3f} | {numpy_mib:.0f} (client) | |"
    )
    ratio = results["chainrule"][1] / results["hand-written Dask"][1]
    print(f"chainrule / hand-written time: {ratio:.2f}x")
    w_cr, w_hand = results["chainrule"][0], results["hand-written Dask"][0]
    agree = np.allclose(w_cr, w_hand, rtol=1e-10, atol=1e-12) and np.allclose(
        w_cr, w_numpy, rtol=1e-10, atol=1e-12
    )
    start_loss, end_loss = loss_value(x, signs, np.zeros(D)), loss_value(x, signs, w_cr)
    print(f"loss {start_loss:.4f} -> {end_loss:.4f}; weights agree: {agree}")
    return agree and end_loss < start_loss


def larger_than_memory(client, rows, steps, lr, limit):
    chunk = 500_000
    x, signs = make_data(rows, chunk, seed=7)
    gib = rows * (D + 1) * 8 / 2**30
    print(
        f"\n{rows:,} x {D} float64 ({gib:.1f} GiB with the labels) generated lazily at each "
        f"step in chunks of {chunk:,} rows; worker memory limit {limit}; {steps} steps"
    )
    client.run(_reset_peak)
    w = np.zeros(D)
    start = time.perf_counter()
    losses = []
    for _ in range(steps):
        loss, grad = chainrule_gradient(x, signs, w)
        loss_now, g = dask.compute(loss, grad)  # one pass: the tasks they share run once
        losses.append(float(loss_now))
        w = w - lr * g.numpy()
    seconds = time.perf_counter() - start
    print(
        f"loss by step: {', '.join(f'{v:.4f}' for v in losses)}; {seconds / steps:.1f} s per "
        f"step; peak worker memory {peak_worker_mib(client)} MiB"
    )
    return losses[-1] < losses[0]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 unless all went well")
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--big-rows", type=int, default=20_000_000)
    parser.add_argument("--big-steps", type=int, default=3)
    parser.add_argument("--memory-limit", default="1GiB")
    args = parser.parse_args()
    with (
        LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            memory_limit=args.memory_limit,
            dashboard_address=None,
        ) as cluster,
        Client(cluster) as client,
    ):
        ok = compare(client, args.rows, args.steps, lr=1.0)
        ok = (
            larger_than_memory(client, args.big_rows, args.big_steps, 1.0, args.memory_limit) and ok
        )
    if args.check and not ok:
        raise SystemExit("the trainings did not agree or did not lower the loss")


if __name__ == "__main__":
    main()
