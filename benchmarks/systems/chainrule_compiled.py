"""chainrule.compile: the chainrule steps (loss.backward() inside, double backward for W4)
compiled. The first call traces; the program is then compiled to source at once (at build),
so that the timed steps replay the source. Build records, per step, one eager step, the
tracing call and the compilation to source, in seconds of process CPU time, each the least
of a few tries where a step is short (one try on a loaded machine is noise) (COMPILE, read by
the worker)."""

import time

import chainrule as cr
from systems import _tape
from systems.chainrule_ad import BACKEND, setup, to_numpy  # noqa: F401 - the adapter API

COMPILE: dict = {}
TRIES_BELOW_S = 0.05  # steps shorter than this are timed (eager, trace, source) 3 times


def _cpu(fn):
    start = time.process_time()
    out = fn()
    return time.process_time() - start, out


def build(work, data) -> dict:
    COMPILE.clear()
    steps = {}
    for name, step in _tape.build(work, data, BACKEND).items():
        step()  # warm-up
        eager = min(_cpu(step)[0] for _ in range(2))
        tries = 3 if eager < TRIES_BELOW_S else 1
        traced = source = float("inf")
        for _ in range(tries):
            compiled = cr.compile(step)
            traced = min(traced, _cpu(compiled)[0])
            source = min(source, _cpu(compiled.source)[0])
        COMPILE[name] = {"eager_s": eager, "trace_s": traced, "source_s": source}
        steps[name] = compiled
    return steps
