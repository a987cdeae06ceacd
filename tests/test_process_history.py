"""Numerics must not depend on what ran earlier in the process. Complex and forward-mode
programs run each in a fresh interpreter (checked against finite differences, both modes),
then together after a warm-up that uses every feature with process-wide state: the results
must agree bit for bit, with each other and with this process's (whatever ran before)."""

import functools
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import chainrule as cr
from chainrule import autograd, func
from conftest import BACKEND, LIBRARY, N, T

# Each program defines f: a real vector x (length 4) -> a real scalar. The first complex
# value of the complex ones comes from the real leaf (a cast, a complex constant, rfft,
# SciPy's fftconvolve): the engine must conjugate around the holomorphic rules after it in
# a fresh interpreter too. The forward-mode ones meet integer and boolean operands, whose
# tangents are zero.
PROGRAMS = {
    "fftconvolve": """
import scipy.signal

def f(x):
    y = scipy.signal.fftconvolve(x, cr.asarray([0.5, -1.0, 2.0]))
    return cr.sum(y * y)
""",
    "astype_complex128": """
def f(x):
    z = cr.astype(x, cr.complex128)
    w = cr.sqrt(z - 1.5) * cr.exp(z)
    return cr.sum(cr.real(w * w) + cr.abs(w))
""",
    "complex_constant": """
def f(x):
    z = x * cr.asarray([1 + 2j, 2 - 1j, 0.5j, 1.5 + 0j])
    return cr.sum(cr.abs(z * z + z))
""",
    "rfft": """
def f(x):
    z = cr.fft.rfft(x)
    return cr.sum(cr.real(z * z) + cr.imag(z) ** 2)
""",
    "concat_integers": """
def f(x):
    return cr.sum(cr.concat([x, cr.asarray([3, 4]), cr.asarray([True, False])]) ** 2)
""",
    "stack_integers": """
def f(x):
    return cr.sum(cr.sin(cr.stack([x[:2], cr.asarray([3, 4])])))
""",
    "where_scalar": """
def f(x):
    return cr.sum(cr.where(x > 0.7, x, 5) ** 2 + cr.where(x < 0.7, 2, x * x))
""",
    "setitem_integers": """
def f(x):
    y = x * 1.0
    y[1] = 7
    y[2:4] = cr.asarray([1, 2])
    return cr.sum(y * y * x)
""",
}
NUMPY_ONLY = {"fftconvolve"}  # SciPy mixes NumPy arrays into its computations
# The standard promotes no integer or boolean array with a floating one (array_api_strict
# refuses these programs' forward).
MIXED_KINDS = {"concat_integers", "stack_integers", "setitem_integers"}
X0 = [1.0, 2.0, 0.5, -1.0]
V = [0.3, -0.7, 1.1, 0.4]

# What a child interpreter runs: `warm-up code` (or nothing), then each program named in
# argv; it prints {name: {"grad": reverse mode's gradient, "jvp": forward mode's along V}}.
CHILD = """
import json, sys
import numpy as np
import chainrule as cr
from chainrule import autograd, func

{warm_up}

X0, V = {x0}, {v}
out = {{}}
for name, source in json.loads(sys.argv[1]).items():
    scope = {{"cr": cr, "np": np}}
    exec(source, scope)
    f = scope["f"]
    x = cr.tensor(X0, requires_grad=True)
    (g,) = autograd.grad(f(x), [x])
    _, t = func.jvp(f, (cr.tensor(X0),), (cr.tensor(V),))
    out[name] = {{"grad": g.tolist(), "jvp": t.item()}}
print(json.dumps(out))
"""

# Uses every feature that keeps process-wide state: a complex leaf differentiated, hooks,
# in-place writes, saved-tensor hooks, anomaly mode, forward mode, vmap (a batched node
# kept alive), compile.
WARM_UP = """
z = cr.tensor([1 + 2j, -0.5j], requires_grad=True)
cr.sum(cr.abs(z * z)).backward()
w = cr.tensor([1.0, 2.0], requires_grad=True)
handle = w.register_hook(lambda g: g * 2)
y = w * 3.0
y[0] = 1.0
y += 1.0
with autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
    with autograd.detect_anomaly():
        cr.sum(y * y * w).backward()
handle.remove()
func.jvp(cr.sin, (cr.tensor([0.5]),), (cr.tensor([1.0]),))
kept = func.vmap(lambda r: r * w)(cr.tensor([[1.0, 2.0], [3.0, 4.0]]))
step = cr.compile(lambda a: cr.sum(cr.tanh(a) * a))
for _ in range(3):
    step(cr.tensor([0.1, 0.2], requires_grad=True)).backward()
"""


def _run_child(names, warm_up: str = "") -> dict:
    """Run the programs `names` in a fresh interpreter (after `warm_up`), with the chainrule
    this process imported, on the backend under test."""
    src = os.path.dirname(os.path.dirname(os.path.abspath(cr.__file__)))
    env = dict(os.environ, SCIPY_ARRAY_API="1")
    env["PYTHONPATH"] = os.pathsep.join([src, env.get("PYTHONPATH", "")])
    code = CHILD.format(warm_up=warm_up, x0=X0, v=V)
    done = subprocess.run(
        [sys.executable, "-c", code, json.dumps({n: PROGRAMS[n] for n in names})],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@functools.cache
def _fresh(name: str) -> dict:
    """Program `name`'s results in an interpreter of its own (the same every time: kept)."""
    return _run_child([name])[name]


def _program(name: str):
    scope = {"cr": cr, "np": np}
    exec(PROGRAMS[name], scope)
    return scope["f"]


def _finite_differences(f, h: float = 1e-6) -> np.ndarray:
    """f's gradient at X0 by central differences."""
    grad = []
    for i in range(len(X0)):
        step = np.zeros(len(X0))
        step[i] = h
        up, down = f(T(np.add(X0, step))), f(T(np.subtract(X0, step)))
        grad.append((up.item() - down.item()) / (2 * h))
    return np.array(grad)


def _names() -> list:
    names = [n for n in PROGRAMS if BACKEND is np or n not in NUMPY_ONLY]
    return [n for n in names if LIBRARY != "array_api_strict" or n not in MIXED_KINDS]


@pytest.mark.parametrize("name", _names())
def test_a_program_in_a_fresh_interpreter_matches_finite_differences_in_both_modes(name):
    result = _fresh(name)
    expected = _finite_differences(_program(name))
    np.testing.assert_allclose(result["grad"], expected, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(result["jvp"], expected @ np.array(V), rtol=1e-6, atol=1e-6)


@pytest.mark.skipif(BACKEND is not np, reason="SciPy mixes NumPy arrays into its computations")
def test_scipy_fftconvolve_in_a_fresh_interpreter_gives_pytorchs_gradient():
    # The issue's numbers (PyTorch's and finite differences'); a fresh interpreter gave
    # [12.5, -9, 2.25, 2.5] while complex gradients were switched on process-wide.
    result = _fresh("fftconvolve")
    np.testing.assert_allclose(result["grad"], [1.5, 11.5, 2.25, -9.0], rtol=1e-12, atol=1e-12)


def test_no_process_history_changes_a_result():
    names = _names()
    fresh = {name: _fresh(name) for name in names}
    assert _run_child(names, WARM_UP) == fresh
    # And in this process, after whatever the suite ran before.
    for name in names:
        f = _program(name)
        x = T(X0, requires_grad=True)
        (g,) = autograd.grad(f(x), [x])
        _, t = func.jvp(f, (T(X0),), (T(V),))
        assert N(g).tolist() == fresh[name]["grad"], name
        assert t.item() == fresh[name]["jvp"], name
