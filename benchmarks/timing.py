"""Timing shared by benchmarks/jvp.py and benchmarks/vmap.py: one thread for every library
(import this module before NumPy), seconds per call by wall or CPU time, medians of repeats
that alternate between the variants, and their common command-line options."""

from __future__ import annotations

import argparse
import os
import statistics
import time
from collections.abc import Callable

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

__all__ = ["arguments", "clock_note", "medians", "timed"]

# CPU time (process_time: this process's user and system time) is the measure that survives
# a machine shared with other work; wall time is what a user waits on an idle one.
CLOCKS = {"wall": time.perf_counter, "cpu": time.process_time}


def timed(step: Callable[[], object], min_s: float, clock: str = "wall") -> float:
    """Seconds per call of step, calling it until min_s passed on `clock`."""
    now = CLOCKS[clock]
    n, start = 0, now()
    while True:
        step()
        n += 1
        elapsed = now() - start
        if elapsed >= min_s:
            return elapsed / n


def medians(
    variants: dict[str, Callable[[], object]], repeats: int, min_s: float, clock: str = "wall"
) -> dict[str, float]:
    """The median seconds per call of each variant: one warm-up call each, then `repeats`
    rounds in which every variant is timed once, in turn."""
    for step in variants.values():
        step()
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(repeats):
        for name, step in variants.items():
            times[name].append(timed(step, min_s, clock))
    return {name: statistics.median(t) for name, t in times.items()}


def arguments(doc: str, md: str) -> argparse.Namespace:
    """The options both scripts take: --quick, --cpu-time, --md (default `md`)."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer, shorter repeats")
    parser.add_argument(
        "--cpu-time", action="store_true", help="time by CPU time (a machine shared with others)"
    )
    parser.add_argument("--md", default=md)
    return parser.parse_args()


def clock_note(clock: str) -> str:
    """How the figures were timed, for a report."""
    return "CPU time (user + system) of this process" if clock == "cpu" else "wall time"
