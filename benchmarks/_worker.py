"""Benchmark worker: runs one workload on one system in its own process.

    python benchmarks/_worker.py SYSTEM WORKLOAD THREADS --grads FILE [--memory]

THREADS is "1" (every thread pool pinned to one thread) or "default". The
worker imports the system, builds the workload, runs every step once and saves
the gradients to FILE (an .npz) for the cross-system check, then prints one
JSON line and serves timing requests, one JSON line each, from stdin:
``{"step": NAME, "number": N}`` runs the step N times back to back and answers
``{"wall": seconds, "cpu": seconds}``. With --memory it instead measures the
resident memory of one forward + backward pass and exits.

The launcher gives it ``child_env(os.environ, threads)`` as its environment.
"""

from __future__ import annotations

import argparse
import gc
import importlib
import importlib.util
import inspect
import json
import os
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
THREAD_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
XLA_ONE_THREAD = "--xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1"
# Set on some machines for old OpenBLAS builds; they slow a current NumPy down.
OPENBLAS_OVERRIDES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def child_env(base: dict, threads: str) -> dict:
    """Environment of a worker: thread counts pinned or left at the default."""
    env = {k: v for k, v in base.items() if k not in OPENBLAS_OVERRIDES}
    for var in (*THREAD_VARS, "XLA_FLAGS"):
        env.pop(var, None)
    if threads == "1":
        env.update(dict.fromkeys(THREAD_VARS, "1"), XLA_FLAGS=XLA_ONE_THREAD)
    return env


def _error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".splitlines()[0]
    return text[:160]


def _load_system(name: str):
    """Import the adapter; returns (module, build options)."""
    from systems import SYSTEMS

    module_name, dist, options = SYSTEMS[name]
    if importlib.util.find_spec(dist) is None and (HERE.parent / "src" / dist).is_dir():
        sys.path.insert(0, str(HERE.parent / "src"))  # an uninstalled checkout
    return importlib.import_module(f"systems.{module_name}"), options


def _pin_threads(one_thread: bool) -> list:
    """Limit native thread pools to one thread; report what they now use."""
    try:
        import threadpoolctl
    except ImportError:
        return [{"api": "unverified (threadpoolctl not installed)"}]
    if one_thread:
        threadpoolctl.threadpool_limits(1)
    return [
        {
            "api": p["internal_api"],
            "lib": p["filepath"].rpartition("site-packages/")[2].split("/")[0],
            "threads": p["num_threads"],
        }
        for p in threadpoolctl.threadpool_info()
    ]


def _save(path: str, arrays: dict) -> None:
    import numpy as np

    np.savez(path, **arrays)


def _check_run(work, module, steps: dict) -> tuple[dict, dict]:
    """Run each step once; returns per-step reports and the arrays to check."""
    import workloads

    reports, arrays = {}, {}
    for name, fn in steps.items():
        start = time.perf_counter()
        try:
            _, grads = fn()
            grads = workloads.checked(work, module.to_numpy(grads))
        except Exception as exc:  # noqa: BLE001 - reported
            reports[name] = {"error": _error(exc)}
            continue
        reports[name] = {"first_s": time.perf_counter() - start}
        for i, g in enumerate(grads):
            arrays[f"{name}_{i}"] = g
    return reports, arrays


def _serve(steps: dict, out) -> None:
    for line in sys.stdin:
        request = json.loads(line)
        fn, number = steps[request["step"]], request["number"]
        gc.collect()
        cpu, wall = time.process_time(), time.perf_counter()
        for _ in range(number):
            fn()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        print(json.dumps({"wall": wall, "cpu": cpu}), file=out, flush=True)


def _rss() -> int:
    import psutil

    return psutil.Process().memory_info().rss


def _malloc_trim() -> None:
    """Hand the C heap's free pages back to the OS (glibc only)."""
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass


def _measure_memory(work, module, steps: dict, path: str) -> dict:
    """Peak and retained RSS above the baseline (parameters and input built)."""
    import resource

    import workloads

    gc.collect()
    baseline = _rss()
    peak = [baseline]
    done = threading.Event()

    def sample():
        while not done.is_set():
            peak[0] = max(peak[0], _rss())
            time.sleep(0.001)

    sampler = threading.Thread(target=sample, daemon=True)
    max_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    sampler.start()
    aux, grads = steps["step"]()
    done.set()
    sampler.join()
    max_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    if max_after > max_before:  # the lifetime maximum was reached in the step
        peak[0] = max(peak[0], max_after * 1024)
    after_backward = _rss()
    del aux
    gc.collect()
    after_drop = _rss()
    _malloc_trim()
    after_trim = _rss()
    checked = workloads.checked(work, module.to_numpy(grads))
    _save(path, {f"step_{i}": g for i, g in enumerate(checked)})
    mib = 2.0**-20
    return {
        "peak_mib": (peak[0] - baseline) * mib,
        "after_backward_mib": (after_backward - baseline) * mib,
        "after_drop_mib": (after_drop - baseline) * mib,
        "after_trim_mib": (after_trim - baseline) * mib,
        "baseline_mib": baseline * mib,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("system")
    parser.add_argument("workload")
    parser.add_argument("threads", choices=("1", "default"))
    parser.add_argument("--grads", required=True, help=".npz file for the gradients")
    parser.add_argument("--memory", action="store_true", help="measure RSS instead")
    args = parser.parse_args()
    # JSON goes to the real stdout; anything the libraries print goes to stderr.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    report: dict = {"ok": False}
    try:
        import workloads

        work = workloads.get(args.workload)
        start = time.perf_counter()
        module, options = _load_system(args.system)
        accepted = inspect.signature(module.setup).parameters
        setup_options = {k: v for k, v in options.items() if k in accepted}
        report["info"] = module.setup(args.threads == "1", **setup_options)
        report["threadpools"] = _pin_threads(args.threads == "1")
        report["import_s"] = time.perf_counter() - start
        data = workloads.make_data(work)
        start = time.perf_counter()
        steps = module.build(work, data, **options)
        report["build_s"] = time.perf_counter() - start
        if getattr(module, "COMPILE", None):
            report["compile"] = dict(module.COMPILE)
        del data
        if args.memory:
            report.update(_measure_memory(work, module, steps, args.grads), ok=True)
        else:
            report["steps"], arrays = _check_run(work, module, steps)
            _save(args.grads, arrays)
            report["ok"] = True
    except Exception as exc:  # noqa: BLE001 - reported
        report["error"] = _error(exc)
    print(json.dumps(report), file=out, flush=True)
    if report["ok"] and not args.memory:
        _serve(steps, out)


if __name__ == "__main__":
    main()
