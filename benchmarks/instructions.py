"""Instructions per operation of chainrule's eager forward and backward on W1, W3 and W5,
counted by callgrind: the steady measure of a hot-path change on a shared machine.

Each workload runs twice under callgrind, with one and with three measured steps after a
warm-up step; the difference, divided by the operations of two steps, is the cost of one
operation with interpreter start-up and imports cancelled out. W3 runs at 10,000 operations
(its cost per operation does not depend on the length). Needs valgrind.

    python benchmarks/instructions.py                  # this checkout's chainrule
    python benchmarks/instructions.py --src ../other/src --workloads W1
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

# The measured program: a warm-up step, then `steps` forward and backward steps of one workload,
# written against chainrule's public API with the shared workload definitions.
STEP = """
import gc
import sys
import numpy as np
import chainrule as cr
import workloads as w

key, size, steps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
work = w.get(f"{key}@{size}") if key != "W5" else w.get("W5")
data = w.make_data(work)
ops = cr
x = cr.tensor(data["x"], requires_grad=True)
if work.kind == "chain":
    c = cr.tensor(data["c"])
    step = lambda: w.chain(x, c, data["n_ops"], ops)
else:
    step = lambda: w.fanout(x, data["a"], data["b"], ops)
x.grad = None
step().backward()  # the warm-up step
# The heap so far (imports, warm-up) left out of the cyclic GC's full collections: one landing
# in the measured steps or not would swing the count by more than a change measures.
gc.collect()
gc.freeze()
for _ in range(steps):
    x.grad = None
    step().backward()
"""


def count(src: Path, key: str, steps: int) -> int:
    """Total instructions of one run of the measured program under callgrind."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "callgrind.out"
        # A fixed hash seed: dict layouts (and so instruction counts) vary with it.
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(src), str(HERE)]),
            "PYTHONHASHSEED": "0",
            # One BLAS thread: idle BLAS threads spin, and their instructions are counted.
            "OPENBLAS_NUM_THREADS": "1",
            "OMP_NUM_THREADS": "1",
        }
        subprocess.run(
            [
                # Addresses fixed too (no ASLR): dicts keyed by id() and the allocator's
                # choices then repeat from run to run.
                "setarch",
                "-R",
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={out}",
                sys.executable,
                "-c",
                STEP,
                key,
                str(SIZES[key]),
                str(steps),
            ],
            env=env,
            check=True,
            capture_output=True,
        )
        summary = re.search(r"^summary:\s+(\d+)", out.read_text(), re.MULTILINE)
        return int(summary.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=HERE.parent / "src")
    parser.add_argument("--workloads", nargs="+", default=list(SIZES), choices=list(SIZES))
    args = parser.parse_args()
    for key in args.workloads:
        per_step = (count(args.src, key, 3) - count(args.src, key, 1)) / 2
        ops = SIZES[key] * (6 if key == "W5" else 1)
        print(f"{key}: {per_step / ops:,.0f} instructions per operation (forward and backward)")


if __name__ == "__main__":
    main()
