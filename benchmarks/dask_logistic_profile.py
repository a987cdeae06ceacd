"""Where the logistic regression's gradient spends its time on Dask, chainrule's against the
same gradient written by hand (examples/dask_logistic.py): tasks before and after Dask's
optimization by kind, this process's CPU time to build each graph and to compute it (a local
scheduler runs in this process, or a LocalCluster of 2 worker processes whose CPU time is
added; CPU time is steadier than wall time on a shared machine),
alternating rounds, medians; with --profile, each kind of task's time under Dask's profiler.

    python benchmarks/dask_logistic_profile.py [--rows 2000000] [--rounds 8]
        [--scheduler sync|threads|cluster] [--profile]
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import statistics
import sys
import time

import dask
import numpy as np
import psutil
from dask.diagnostics import Profiler
from dask.distributed import Client, LocalCluster

sys.path.insert(0, str(pathlib.Path(__file__).parent.parent / "examples"))
import dask_logistic  # noqa: E402 - the example's data and both gradients


def _cpu_seconds() -> float:
    """This process's CPU time (run in each worker)."""
    t = psutil.Process().cpu_times()
    return t.user + t.system


def kind(key) -> str:
    """A task's kind: its key's name without the token."""
    name = key[0] if isinstance(key, tuple) else key
    return str(name).rsplit("-", 1)[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--rounds", type=int, default=8)
    parser.add_argument("--scheduler", default="sync", choices=("sync", "threads", "cluster"))
    parser.add_argument("--profile", action="store_true")
    args = parser.parse_args()
    if args.scheduler == "cluster":
        # The example's cluster: CPU time is this process's (client and scheduler) and the
        # workers' together.
        cluster = LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
        scheduler = None
    else:
        client, scheduler = None, args.scheduler

    def cpu_now() -> float:
        workers = sum(client.run(_cpu_seconds).values()) if client is not None else 0.0
        return time.process_time() + workers

    x, signs = dask.persist(*dask_logistic.make_data(args.rows, args.rows // 10))
    w = np.linspace(-0.5, 0.5, dask_logistic.D)
    gradients = {
        "chainrule": lambda: dask_logistic.chainrule_gradient(x, signs, w)[1].array,
        "hand-written": lambda: dask_logistic.handwritten_gradient(x, signs, w),
    }
    for name, gradient in gradients.items():
        g = gradient()
        (optimized,) = dask.optimize(g)
        kinds = collections.Counter(kind(k) for k in dict(optimized.__dask_graph__()))
        print(
            f"{name}: {len(dict(g.__dask_graph__()))} tasks, {len(dict(optimized.dask))} after "
            f"Dask's optimization: {dict(sorted(kinds.items()))}"
        )
    np.testing.assert_allclose(
        gradients["chainrule"]().compute(), gradients["hand-written"]().compute(), rtol=1e-10
    )
    cpu: dict[str, list] = {name: [] for name in gradients}
    for r in range(args.rounds):
        for name in gradients if r % 2 == 0 else reversed(gradients):
            start = time.process_time()
            g = gradients[name]()
            built = time.process_time()
            before = cpu_now()
            g.compute(scheduler=scheduler)
            cpu[name].append((built - start, cpu_now() - before))
    print(f"CPU seconds per gradient, {args.scheduler} scheduler, median of {args.rounds}:")
    for name, times in cpu.items():
        build = statistics.median(b for b, _ in times)
        run = statistics.median(c for _, c in times)
        print(f"  {name}: build {build:.4f}, compute {run:.4f}")
    ratios = [sum(a) / sum(b) for a, b in zip(cpu["chainrule"], cpu["hand-written"], strict=True)]
    print(f"chainrule / hand-written, per round: {', '.join(f'{r:.2f}' for r in ratios)}")
    print(f"median {statistics.median(ratios):.2f}x")
    if client is not None:
        client.close()
        cluster.close()
    if args.profile:
        for name, gradient in gradients.items():
            with Profiler() as profiler:
                gradient().compute(scheduler="sync")
            per_kind: dict[str, float] = collections.defaultdict(float)
            for task in profiler.results:
                per_kind[kind(task.key)] += task.end_time - task.start_time
            top = sorted(per_kind.items(), key=lambda kv: -kv[1])[:6]
            print(f"{name}, seconds by kind of task: {', '.join(f'{k} {v:.3f}' for k, v in top)}")


if __name__ == "__main__":
    main()
