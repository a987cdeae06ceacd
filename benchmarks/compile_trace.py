"""The cost of chainrule.compile's first call (the trace) against one eager step of W1, W3 and
W5, in instructions (callgrind, as benchmarks/instructions.py counts) and in CPU time.

Runs under callgrind: a warm-up eager step alone, then followed by one eager step, then
followed by the first call of the step compiled; the differences are the eager step's and the
trace's cost, with start-up and imports cancelled out. Two ends, each measured for all three:
"call" ends with one full collection and then leaves at once (os._exit), so it counts the call
and the collector's walk over what the call keeps; "process" ends as a program does, so it
also counts the release of the kept replay at the interpreter's exit (an eager step frees its
graph inside the step). CPU time: the least of a few tries of each, in this process, around the
call alone. With --second, also the first two calls against two eager steps (call end): the
second call builds the replay that the first call's recording becomes (see
chainrule._compile._program.Replay), so this shows where that cost went. Needs valgrind.

    python benchmarks/compile_trace.py --src src --workloads W1 W5
    python benchmarks/compile_trace.py --src src --workloads W1 --second
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SIZES = {"W1": 2000, "W3": 10_000, "W5": 1000}

# The measured program: a warm-up step, then nothing, one eager step, or one traced call.
STEP = """
import gc
import os
import sys
import chainrule as cr
import workloads as w
from chainrule._compile import _program

# The second call runs the loop tier, as at normal speed; under callgrind (about 50x slower)
# the rent-or-buy rule would compile the source at once (a first call never looks at this).
_program.SOURCE_AFTER = 10**9
key, size, what, end = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
work = w.get(f"{key}@{size}") if key != "W5" else w.get("W5")
data = w.make_data(work)
x = cr.tensor(data["x"], requires_grad=True)
if work.kind == "chain":
    c = cr.tensor(data["c"])
    def step():
        x.grad = None
        loss = w.chain(x, c, data["n_ops"], cr)
        loss.backward()
        return loss.detach()
else:
    def step():
        x.grad = None
        loss = w.fanout(x, data["a"], data["b"], cr)
        loss.backward()
        return loss.detach()
step()  # the warm-up step
compiled = cr.compile(step)
gc.collect()
gc.freeze()
if what == "eager":
    step()
elif what == "trace":
    compiled()
elif what == "eager2":
    step()
    step()
elif what == "trace2":  # the trace, then the first replay (which builds the replay)
    compiled()
    compiled()
if end == "call":
    gc.collect()
    os._exit(0)
"""


def count(src: Path, key: str, what: str, end: str) -> int:
    """Total instructions of one run of the measured program under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(src), str(HERE)]),
            "PYTHONHASHSEED": "0",
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
        }
        subprocess.run(
            ["setarch", "-R", "valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
             sys.executable, "-c", STEP, key, str(SIZES[key]), what, end],
            env=env, check=True, capture_output=True,
        )  # fmt: skip
        summary = re.search(r"^summary:\s+(\d+)", out.read_text(), re.MULTILINE)
        return int(summary.group(1))


def cpu_times(src: Path, key: str, tries: int) -> tuple[float, float]:
    """(eager step, traced call) in CPU seconds, the least of `tries` of each."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(src), str(HERE)])}
    code = STEP.replace("step()  # the warm-up step", "step()").split("if what ==")[0]
    code += f"""
import time
def cpu(fn):
    start = time.process_time()
    fn()
    return time.process_time() - start
eager = min(cpu(step) for _ in range({tries}))
traced = min(cpu(cr.compile(step)) for _ in range({tries}))
print(eager, traced)
"""
    run = subprocess.run(
        [sys.executable, "-c", code, key, str(SIZES[key]), "none", "process"],
        env=env, check=True, capture_output=True, text=True,
    )  # fmt: skip
    eager, traced = map(float, run.stdout.split())
    return eager, traced


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=HERE.parent / "src")
    parser.add_argument("--workloads", nargs="+", default=list(SIZES), choices=list(SIZES))
    parser.add_argument("--tries", type=int, default=5)
    parser.add_argument("--no-callgrind", action="store_true")
    parser.add_argument("--second", action="store_true", help="also the first two calls")
    args = parser.parse_args()
    for key in args.workloads:
        line = f"{key}:"
        for end in () if args.no_callgrind else ("call", "process"):
            base = count(args.src, key, "none", end)
            eager = count(args.src, key, "eager", end) - base
            trace = count(args.src, key, "trace", end) - base
            line += f" {end}: eager {eager:,}, trace {trace:,} ({trace / eager:.2f}x);"
            if args.second and end == "call":
                eager2 = count(args.src, key, "eager2", end) - base
                trace2 = count(args.src, key, "trace2", end) - base
                line += (
                    f" two calls: eager {eager2:,}, trace and replay {trace2:,} "
                    f"({trace2 / eager2:.2f}x; the second call {trace2 - trace:,});"
                )
        eager_s, trace_s = cpu_times(args.src, key, args.tries)
        line += f" CPU eager {eager_s * 1e3:.1f} ms, trace {trace_s * 1e3:.1f} ms"
        line += f" ({trace_s / eager_s:.2f}x)"
        print(line, flush=True)


if __name__ == "__main__":
    main()
