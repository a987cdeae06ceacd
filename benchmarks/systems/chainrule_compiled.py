"""chainrule.compile: the chainrule steps (loss.backward() inside, double backward for W4)
compiled. The first call traces; the program is then compiled to source at once (at build),
so that the timed steps replay the source. Build records, per step, one eager step, the
tracing call and the compilation to source, in seconds (COMPILE, read by the worker)."""

import time

import chainrule as cr
from systems import _tape
from systems.chainrule_ad import BACKEND, setup, to_numpy  # noqa: F401 - the adapter API

COMPILE: dict = {}


def build(work, data) -> dict:
    COMPILE.clear()
    steps = {}
    for name, step in _tape.build(work, data, BACKEND).items():
        step()  # warm-up
        eager = []
        for _ in range(2):
            start = time.perf_counter()
            step()
            eager.append(time.perf_counter() - start)
        compiled = cr.compile(step)
        start = time.perf_counter()
        compiled()
        traced = time.perf_counter() - start
        start = time.perf_counter()
        compiled.source()
        source = time.perf_counter() - start
        COMPILE[name] = {"eager_s": min(eager), "trace_s": traced, "source_s": source}
        steps[name] = compiled
    return steps
