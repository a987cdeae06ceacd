"""Benchmark chainrule against a hand-written NumPy limit and other autodiff systems.

    python benchmarks/run.py [--quick] [--cpu-time] [--out results.json] [--md results.md]

Each system runs every workload in its own worker process (``_worker.py``).
Gradients are compared with the NumPy limit before anything is timed; a
system that disagrees is reported as a mismatch and not timed. Timed steps
alternate between systems, round-robin over the repeats, after a warm-up, and
each figure is the median of the repeats. Every workload runs with every
thread pool pinned to one thread, and (unless --quick) with the default
thread count. Systems that are not installed are skipped with a note.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import queue
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from importlib.util import find_spec
from pathlib import Path

import numpy as np

import workloads as wl
from _worker import child_env
from systems import SYSTEMS

HERE = Path(__file__).resolve().parent
WORKER = HERE / "_worker.py"
MEMORY_FIGURES = ("peak_mib", "after_backward_mib", "after_drop_mib", "after_trim_mib")
PARALLEL_STARTS = 2  # workers starting at once (the reference machine has 2 cores)
SETTLE_S = 0.3  # pause before each timed batch, seconds
PIP_NAMES = {"torch": "torch", "autograd": "autograd", "mygrad": "mygrad", "jax": "'jax[cpu]'"}


@dataclass(frozen=True)
class Profile:
    """How much time a run may spend."""

    threads: tuple  # thread settings, "1" and/or "default"
    repeats: int  # timed repeats per figure
    min_repeat_s: float  # a repeat loops the step until it takes this long
    step_budget_s: float  # time for warm-up + repeats of one system's step
    max_step_s: float  # skip a system whose single step would take longer
    max_compile_s: float  # ... or whose jit compilation would take longer
    setup_timeout_s: float  # import + build + first step of a worker
    memory_repeats: int  # fresh processes per W6 figure
    scaling: dict  # W7: base workload -> lengths


FULL = Profile(
    threads=("1", "default"),
    repeats=5,
    min_repeat_s=0.1,
    step_budget_s=5.0,
    max_step_s=20.0,
    max_compile_s=45.0,
    setup_timeout_s=180.0,
    memory_repeats=2,
    scaling={"W1": (2000, 20_000, 200_000), "W3": (10_000, 100_000, 1_000_000)},
)
QUICK = Profile(
    threads=("1",),
    repeats=3,
    min_repeat_s=0.03,
    step_budget_s=1.0,
    max_step_s=4.0,
    max_compile_s=20.0,
    setup_timeout_s=90.0,
    memory_repeats=1,
    scaling={"W1": (2000, 20_000), "W3": (10_000, 100_000)},
)


class WorkerError(Exception):
    """A worker died, timed out or could not start."""


class Worker:
    """One system's worker process for one workload."""

    def __init__(self, system: str, key: str, threads: str, grads: Path, memory=False):
        self.log = tempfile.TemporaryFile("w+")
        command = [sys.executable, str(WORKER), system, key, threads, "--grads", str(grads)]
        self.proc = subprocess.Popen(
            command + (["--memory"] if memory else []),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.log,
            env=child_env(os.environ, threads),
            text=True,
        )
        self.lines: queue.Queue = queue.Queue()
        self.failure: str | None = None
        threading.Thread(target=self._pump, daemon=True).start()

    def _pump(self) -> None:
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(None)

    def _fail(self, message: str) -> None:
        self.failure = message
        self.close(kill=True)
        raise WorkerError(message)

    def receive(self, timeout: float) -> dict:
        if self.failure:
            raise WorkerError(self.failure)
        try:
            line = self.lines.get(timeout=timeout)
        except queue.Empty:
            self._fail(f"timed out after {timeout:.0f} s")
        if line is None:
            code = self.proc.wait()
            self.log.seek(0)
            tail = " ".join([s for s in self.log.read().splitlines() if s.strip()][-1:])
            how = f"killed by signal {-code}" if code < 0 else f"exited with code {code}"
            self._fail(f"worker {how}: {tail[:160]}")
        return json.loads(line)

    def request(self, step: str, number: int, timeout: float) -> dict:
        if not self.failure:
            try:
                self.proc.stdin.write(json.dumps({"step": step, "number": number}) + "\n")
                self.proc.stdin.flush()
            except OSError:
                pass  # the worker has exited: receive() reports how
        return self.receive(timeout)

    def close(self, kill: bool = False) -> None:
        if self.proc.poll() is None:
            if kill:
                self.proc.kill()
            else:
                self.proc.stdin.close()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def rotated(items: list, k: int) -> list:
    """The list started at position k (mod its length), for round-robin orders."""
    k = k % len(items) if items else 0
    return items[k:] + items[:k]


def available_systems(requested: list) -> dict:
    """System name -> None if it can run, else the reason it is skipped."""
    notes = {}
    for name in requested:
        dist = SYSTEMS[name][1]
        found = find_spec(dist) is not None or (HERE.parent / "src" / dist).is_dir()
        pip = PIP_NAMES.get(dist, dist)
        notes[name] = None if found else f"not installed (pip install {pip})"
    return notes


def compare(work: wl.Workload, ref: dict, got: dict, step: str) -> tuple:
    """Check a step's gradients against the NumPy limit.

    Returns (problem or None, largest absolute error over the largest |gradient|).
    """
    worst = 0.0
    for key in sorted(k for k in ref if k.startswith(step + "_")):
        r, g = ref[key], got.get(key)
        if g is None or g.shape != r.shape:
            shape = None if g is None else g.shape
            return f"gradient mismatch: shape {shape} != {r.shape}", None
        if g.dtype != r.dtype:
            return f"gradient mismatch: dtype {g.dtype} != {r.dtype}", None
        if not np.all(np.isfinite(g)):
            return "gradient mismatch: non-finite values", None
        scale = float(np.max(np.abs(r))) or 1.0
        worst = max(worst, float(np.max(np.abs(g - r))) / scale)
        if not np.allclose(g, r, rtol=work.rtol, atol=work.rtol * scale):
            return f"gradient mismatch: error {worst:.1e} (relative to the largest)", worst
    return None, worst


class Runner:
    """Runs the workloads and collects the results."""

    def __init__(self, profile: Profile, systems: dict, tmp: Path, cpu_time: bool = False):
        self.profile, self.systems, self.tmp = profile, systems, tmp
        self.clock = "cpu" if cpu_time else "wall"  # what a timed repeat reports
        self.per_op: dict = {}  # (system, "step" | "compile") -> seconds per chain op
        self.meta: dict = {}  # system -> version and thread-pool information
        self.started = time.perf_counter()

    def log(self, text: str) -> None:
        print(f"[{time.perf_counter() - self.started:5.0f} s] {text}", file=sys.stderr, flush=True)

    def _start(self, work: wl.Workload, threads: str, systems: list, memory: bool = False):
        """Start the workers, two at a time; yields (system, worker, first report).

        Starting (import, build, gradient check) or a W6 measurement is not
        timed, so two workers may share the CPUs; timing comes later, one
        worker at a time. The report is None for a worker that failed.
        """
        pending: list = []
        for i, system in enumerate(systems):
            self.log(f"  {work.key} threads={threads}: start {system}")
            grads = self.tmp / f"{system}.npz"
            pending.append((system, Worker(system, work.key, threads, grads, memory)))
            while pending and (len(pending) == PARALLEL_STARTS or i == len(systems) - 1):
                system, worker = pending.pop(0)
                try:
                    report = worker.receive(self.profile.setup_timeout_s)
                except WorkerError as exc:
                    report = {"ok": False, "error": str(exc)}
                if not report["ok"]:
                    worker.close()
                yield system, worker, report

    def run_timed(self, work: wl.Workload, threads: str) -> dict:
        """Check every system's gradients, then time them round-robin."""
        results, workers, entries, start = {}, {}, [], []
        for system, missing in self.systems.items():
            if missing or (reason := self._too_slow(system, work)):
                results[system] = {"status": "skipped", "note": missing or reason}
            else:
                results[system] = {}
                start.append(system)
        for system, worker, ready in self._start(work, threads, start):
            if not ready["ok"]:
                results[system] = {"status": "failed", "note": f"failed: {ready['error']}"}
                continue
            self._remember(system, threads, ready)
            build_s = ready["build_s"]
            if "compile" in ready:
                # chainrule.compile: a longer step's build makes one try, not the three that
                # short steps make (see systems/chainrule_compiled.py).
                build_s = sum(c["trace_s"] + c["source_s"] + 3 * c["eager_s"]
                              for c in ready["compile"].values())  # fmt: skip
            self._per_op(system, "compile", build_s, work)
            results[system] = {"status": "ok", "build_s": ready["build_s"], "steps": {}}
            if "compile" in ready:
                results[system]["compile"] = ready["compile"]
            workers[system] = worker
            for step, first in ready["steps"].items():
                results[system]["steps"][step] = first
                if "error" in first:
                    first.update(status="failed", note=f"failed: {first['error']}")
                else:
                    entries.append((system, step))
        entries = self._check(work, results, entries)
        self._time(work, results, workers, entries)
        for worker in workers.values():
            worker.close()
        return results

    def _too_slow(self, system: str, work: wl.Workload) -> str | None:
        """Predict one step (and a jit compile) from the per-op cost seen so far."""
        step = self.per_op.get((system, "step"), 0.0) * work.graph_ops
        compile_s = self.per_op.get((system, "compile"), 0.0) * work.graph_ops
        if step > self.profile.max_step_s:
            return f"skipped: a step would take ~{step:.0f} s"
        if compile_s > self.profile.max_compile_s:
            return f"skipped: compiling would take ~{compile_s:.0f} s"
        return None

    def _remember(self, system: str, threads: str, ready: dict) -> None:
        self.meta.setdefault(system, {"info": ready["info"], "threadpools": {}})
        self.meta[system]["threadpools"][threads] = ready["threadpools"]

    def _per_op(self, system: str, what: str, seconds: float, work: wl.Workload) -> None:
        if work.graph_ops:
            key = (system, what)
            self.per_op[key] = max(self.per_op.get(key, 0.0), seconds / work.graph_ops)

    def _check(self, work: wl.Workload, results: dict, entries: list) -> list:
        """Compare gradients with the NumPy limit; returns the entries to time."""
        ref_path = self.tmp / "numpy.npz"
        ref = dict(np.load(ref_path)) if results.get("numpy", {}).get("status") == "ok" else {}
        kept = []
        for system, step in entries:
            got = dict(np.load(self.tmp / f"{system}.npz"))
            entry = results[system]["steps"][step]
            if not ref:
                entry["note"] = "gradients unchecked: the NumPy limit failed"
            else:
                problem, entry["grad_error"] = compare(work, ref, got, step)
                if problem:
                    entry.update(status="mismatch", note=problem)
                    self.log(f"  !! {system} {work.key} {step}: {problem}")
                    continue
            kept.append((system, step))
        return kept

    def _time(self, work: wl.Workload, results: dict, workers: dict, entries: list) -> None:
        plan = {}
        for system, step in entries:
            entry = results[system]["steps"][step]
            # The check run was the first warm-up; this second one calibrates.
            try:
                reply = workers[system].request(step, 1, 10 * entry["first_s"] + 60)
            except WorkerError as exc:
                entry.update(status="failed", note=f"failed: {exc}")
                continue
            warm = reply["wall"]
            if 2 * warm > self.profile.step_budget_s:
                entry.update(status="ok", times=[warm], cpu=[reply["cpu"] / warm], number=1)
                continue
            number = max(1, math.ceil(self.profile.min_repeat_s / warm))
            repeats = int(self.profile.step_budget_s // (warm * number))
            plan[(system, step)] = (number, max(1, min(self.profile.repeats, repeats)), warm)
            entry.update(status="ok", times=[], cpu=[], number=number)
        for round_ in range(self.profile.repeats):
            for system, step in rotated(list(plan), round_):
                number, repeats, warm = plan[(system, step)]
                entry = results[system]["steps"][step]
                if round_ >= repeats or entry["status"] != "ok":
                    continue
                # Let the previous worker's BLAS threads stop spinning (OpenBLAS busy-waits
                # after a call): with default threads they would take the cores of this one.
                time.sleep(SETTLE_S)
                try:
                    reply = workers[system].request(step, number, 10 * warm * number + 60)
                except WorkerError as exc:
                    entry.update(status="failed", note=f"failed: {exc}")
                    continue
                entry["times"].append(reply[self.clock] / number)
                entry["cpu"].append(reply["cpu"] / reply["wall"])
        for system, step in entries:
            entry = results[system]["steps"][step]
            if entry["status"] == "ok":
                seconds = statistics.median(entry["times"])
                entry["median"] = seconds / work.per * work.scale
                self._per_op(system, "step", seconds, work)
                if entry.get("cpu"):
                    entry["cpu_per_wall"] = statistics.median(entry["cpu"])
                if len(entry["times"]) < self.profile.repeats and "note" not in entry:
                    entry["note"] = f"n={len(entry['times'])}"

    def run_memory(self, work: wl.Workload, threads: str) -> dict:
        """W6: a fresh process per measurement; medians over the repeats."""
        results = {}
        for system, missing in self.systems.items():
            if find_spec("psutil") is None:
                missing = missing or "skipped: needs psutil (pip install psutil)"
            results[system] = {"status": "skipped", "note": missing} if missing else {}
        active = [s for s, r in results.items() if not r]
        samples: dict = {s: [] for s in active}
        for round_ in range(self.profile.memory_repeats if active else 0):
            order = rotated(active, round_)
            for system, worker, report in self._start(work, threads, order, memory=True):
                worker.close()
                if not report["ok"]:
                    results[system] = {"status": "failed", "note": f"failed: {report['error']}"}
                    continue
                self._remember(system, threads, report)
                samples[system].append(report)
            if round_ == 0:
                self._check_memory(work, results, samples)
            active = [s for s in active if not results[s]]
            if not active:
                break
        for system, reports in samples.items():
            if results[system] or not reports:
                continue
            results[system] = {"status": "ok", "grad_error": reports[0].get("grad_error")}
            results[system]["samples"] = reports
            for key in MEMORY_FIGURES:
                results[system][key] = statistics.median(r[key] for r in reports)
            if len(reports) < self.profile.memory_repeats:
                results[system]["note"] = f"n={len(reports)}"
        return results

    def _check_memory(self, work: wl.Workload, results: dict, samples: dict) -> None:
        if not samples.get("numpy"):
            return
        ref = dict(np.load(self.tmp / "numpy.npz"))
        for system, reports in samples.items():
            if reports and system != "numpy":
                got = dict(np.load(self.tmp / f"{system}.npz"))
                problem, error = compare(work, ref, got, "step")
                if problem:
                    results[system] = {"status": "mismatch", "note": problem}
                    self.log(f"  !! {system} {work.key}: {problem}")
                reports[0]["grad_error"] = error


# ---------------------------------------------------------------- reporting
def fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}" if value >= 0.01 else f"{value:.2e}"


def ratio(value: float | None, ref: float | None) -> str:
    if value is None or not ref:
        return "-"
    return f"{value / ref:.2f}x"


def step_of(result: dict, step: str) -> dict:
    return result.get("steps", {}).get(step, result)


def median_of(result: dict, step: str) -> float | None:
    entry = step_of(result, step)
    return entry.get("median") if entry.get("status") == "ok" else None


def note_of(system: str, result: dict, steps: tuple) -> str:
    notes = []
    if system == "jax-jit" and "build_s" in result:
        notes.append(f"jit; compile {result['build_s']:.1f} s excluded")
    for step, c in result.get("compile", {}).items():
        # chainrule.compile: its first call (the trace) and the compilation to source, in
        # eager steps of the same process (CPU time).
        prefix = f"{step}: " if len(result["compile"]) > 1 else ""
        notes.append(
            f"{prefix}trace {c['trace_s'] / c['eager_s']:.1f}x, "
            f"source {c['source_s'] / c['eager_s']:.1f}x an eager step (CPU; excluded)"
        )
    for step in steps:
        entry = step_of(result, step)
        if "steps" in result and step not in result["steps"]:
            notes.append(f"{step}: not supported")
        elif entry.get("note"):
            prefix = f"{step}: " if len(steps) > 1 and entry is not result else ""
            notes.append(prefix + entry["note"])
    return "; ".join(dict.fromkeys(notes))


def row(system: str, cells: list) -> str:
    """A Markdown table row; pipes inside cells (error messages) are escaped."""
    return "| " + " | ".join(c.replace("|", "\\|") for c in [system, *cells]) + " |"


def table_timed(work: wl.Workload, results: dict) -> list:
    base = {k: median_of(results.get(k, {}), "step") for k in ("numpy", "torch")}
    lines = [
        f"| system | time ({work.unit}) | vs numpy | vs torch | cpu/wall | note |",
        "|---|---:|---:|---:|---:|---|",
    ]
    for system, result in results.items():
        value = median_of(result, "step")
        cpu = step_of(result, "step").get("cpu_per_wall")
        cells = [fmt(value), ratio(value, base["numpy"]), ratio(value, base["torch"])]
        cells += [fmt(cpu), note_of(system, result, ("step",))]
        lines.append(row(system, cells))
    return lines


def table_hvp(results: dict) -> list:
    base = {k: median_of(results.get(k, {}), "hvp") for k in ("numpy", "torch")}
    lines = [
        "| system | grad (ms) | HVP (ms) | HVP / grad | HVP vs numpy | HVP vs torch | note |",
        "|---|---:|---:|---:|---:|---:|---|",
    ]
    for system, result in results.items():
        grad, hvp = median_of(result, "grad"), median_of(result, "hvp")
        cells = [fmt(grad), fmt(hvp), ratio(hvp, grad), ratio(hvp, base["numpy"])]
        cells += [ratio(hvp, base["torch"]), note_of(system, result, ("grad", "hvp"))]
        lines.append(row(system, cells))
    return lines


def table_memory(results: dict) -> list:
    def peak(system):
        return results.get(system, {}).get("peak_mib")

    lines = [
        "| system | peak (MiB) | after backward | after drop | after drop + malloc_trim"
        " | peak vs numpy | peak vs torch | note |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for system, result in results.items():
        cells = [fmt(result.get(k)) for k in MEMORY_FIGURES]
        cells += [ratio(peak(system), peak("numpy")), ratio(peak(system), peak("torch"))]
        lines.append(row(system, [*cells, result.get("note", "")]))
    return lines


def table_scaling(sizes: tuple, runs: dict) -> list:
    """W7: per-op cost of one chain at each length, and the growth."""
    head = " | ".join(f"{n:,} ops" for n in sizes)
    lines = [
        f"| system | {head} | {sizes[-1]:,} / {sizes[0]:,} | note |",
        "|---|" + "---:|" * (len(sizes) + 1) + "---|",
    ]
    for system in runs[sizes[0]]:
        values = [median_of(runs[n].get(system, {}), "step") for n in sizes]
        notes = [note_of(system, runs[n].get(system, {}), ("step",)) for n in sizes]
        if len(set(notes)) == 1:  # the same for every length: say it once
            notes = notes[:1]
        else:
            notes = [f"{n:,}: {note}" for n, note in zip(sizes, notes) if note]
        known = [v for v in values if v is not None]
        growth = ratio(values[-1], values[0]) if len(known) == len(values) else "-"
        cells = [fmt(v) for v in values] + [growth, "; ".join(notes)]
        lines.append(row(system, cells))
    return lines


def threads_label(threads: str) -> str:
    return "1 thread" if threads == "1" else f"default threads ({os.cpu_count()} cores)"


def markdown(report: dict) -> str:
    meta = report["meta"]
    out = [
        "# chainrule benchmarks",
        "",
        f"{meta['date']}, {meta['mode']} run, {meta['duration_s']:.0f} s. "
        f"{meta['cpu']}, {meta['cores']} cores, Python {meta['python']}.",
        "",
        "Times are medians of the timed repeats, after a warm-up. numpy is the "
        "hand-written forward + backward limit; the 'vs' columns divide by its figure "
        "and by PyTorch's (lower is better). n=K: fewer repeats than planned, to stay "
        "within the time budget. cpu/wall is the worker's CPU time over wall time "
        "while timing: about 1 for one busy thread, more with several, less when it "
        "waited for a CPU (other load on the machine). Every system's gradients agree "
        "with the numpy limit (rtol 1e-8 for float64, 1e-4 for float32, relative to the "
        "largest gradient) unless its row says 'gradient mismatch'; a mismatch is not "
        "timed. W6 is resident memory (MiB) above the baseline with parameters and input "
        "built, in a fresh process: the peak during forward + backward, after backward "
        "(loss and gradients alive), after the loss and graph are dropped (gradients "
        "kept), and the same after malloc_trim(0) hands free heap pages back to the OS. "
        "W7 runs with one thread. XLA (jax) pins its own pool through XLA_FLAGS, which "
        "threadpoolctl cannot see: cpu/wall is the check there.",
        "",
        "| system | version | thread pools, 1 thread | thread pools, default |",
        "|---|---|---|---|",
    ]
    for system, info in meta["systems"].items():
        pools = [
            ", ".join(
                f"{p['api']} ({p['lib']})={p['threads']}" if "threads" in p else p["api"]
                for p in found
            )
            or "-"
            for found in (info["threadpools"].get(t, []) for t in ("1", "default"))
        ]
        out.append(row(system, [info["info"].get("version", "-"), *pools]))
    for run in report["runs"]:
        work = wl.get(run["workload"])
        out += ["", f"## {work.key} {work.title} ({threads_label(run['threads'])})", ""]
        if work.kind == "hvp":
            out += table_hvp(run["results"])
        elif work.kind == "memory":
            out += table_memory(run["results"])
        else:
            out += table_timed(work, run["results"])
    for scaling in report["scaling"]:
        runs = scaling["runs"]
        out += ["", f"## W7 scaling of {scaling['base']} (us/op, 1 thread)", ""]
        out += table_scaling(tuple(sorted(runs)), runs)
    return "\n".join(out) + "\n"


def cpu_name() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="1 thread, fewer repeats, shorter W7")
    parser.add_argument("--out", default=str(HERE / "results.json"), help="raw results (JSON)")
    parser.add_argument("--md", default=str(HERE / "results.md"), help="tables (Markdown)")
    parser.add_argument(
        "--systems",
        nargs="+",
        choices=list(SYSTEMS),
        default=[s for s in SYSTEMS if s != "chainrule-cupy"],  # a GPU's: make test-gpu
    )
    parser.add_argument(
        "--workloads", nargs="+", choices=[*wl.WORKLOADS, "W7"], default=[*wl.WORKLOADS, "W7"]
    )
    parser.add_argument(
        "--cpu-time",
        action="store_true",
        help="time by the worker's CPU time, not wall time: for one thread on a loaded machine",
    )
    args = parser.parse_args()
    profile = QUICK if args.quick else FULL
    systems = available_systems(["numpy"] + [s for s in args.systems if s != "numpy"])
    started = time.perf_counter()
    report = {"runs": [], "scaling": []}
    with tempfile.TemporaryDirectory(prefix="chainrule-bench-") as tmp:
        runner = Runner(profile, systems, Path(tmp), args.cpu_time)
        for threads in profile.threads:
            for key in args.workloads:
                if key == "W7":
                    continue
                work = wl.get(key)
                runner.log(f"{work.key} {work.title}, {threads_label(threads)}")
                run = runner.run_memory if work.kind == "memory" else runner.run_timed
                results = run(work, threads)
                report["runs"].append(
                    {"workload": key, "unit": work.unit, "threads": threads, "results": results}
                )
        if "W7" in args.workloads:
            for base, sizes in profile.scaling.items():
                runs = {}
                for n in sizes:
                    reuse = [
                        r["results"]
                        for r in report["runs"]
                        if r["threads"] == "1" and r["workload"] == base and wl.get(base).size == n
                    ]
                    if reuse:
                        runs[n] = reuse[0]
                        continue
                    work = wl.get(f"{base}@{n}")
                    runner.log(f"W7 {work.title}, 1 thread")
                    runs[n] = runner.run_timed(work, "1")
                report["scaling"].append({"base": base, "runs": runs})
    report["meta"] = {
        "date": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "mode": ("quick" if args.quick else "full") + (", CPU time" if args.cpu_time else ""),
        "duration_s": time.perf_counter() - started,
        "cpu": cpu_name(),
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "systems": runner.meta,
    }
    Path(args.out).write_text(json.dumps(report, indent=1, default=str) + "\n")
    text = markdown(report)
    Path(args.md).write_text(text)
    print(text)


if __name__ == "__main__":
    main()
