"""Views returned by a compiled function, and their bases: a base made inside and kept outside
(stored, not returned) makes the function run eagerly on every backend, whichever view of it
is returned."""

import numpy as np
import pytest

import chainrule as cr
from conftest import N, T, fails_on

RNG = np.random.default_rng(8)

VIEWS = {
    "slice": lambda y: y[1:],
    "element": lambda y: y[0],
    "transpose": lambda y: y.reshape((2, 3)).T,
    "detach": lambda y: y.detach(),
}
CHAIN = "a view of a view of the stored base (PyTorch's views hold more references to it)"
STORED = [
    pytest.param(fn, id=name, marks=fails_on("torch", reason=CHAIN) if name == "transpose" else ())
    for name, fn in VIEWS.items()
]


@pytest.mark.parametrize("view", STORED)
def test_a_stored_base_of_a_returned_view_makes_the_function_run_eagerly(view):
    store = []

    def fn(x):
        y = cr.sin(x)
        store.append(y)  # kept outside, not returned: a replay would not update it
        return view(y)

    compiled = cr.compile(fn)
    with pytest.warns(cr.CompileWarning, match="kept outside"):
        for _ in range(3):
            x = RNG.normal(size=6)
            compiled(T(x))
    assert len(store) == 3
    np.testing.assert_allclose(N(store[-1]), np.sin(x), rtol=1e-12)


@pytest.mark.parametrize("view", VIEWS.values(), ids=VIEWS.keys())
def test_a_returned_view_of_a_base_made_inside_and_dropped_replays(view):
    compiled = cr.compile(lambda x: view(cr.sin(x)))
    for _ in range(3):
        x = RNG.normal(size=6)
        np.testing.assert_allclose(N(compiled(T(x))), N(view(cr.sin(T(x)))), rtol=1e-12)
    assert compiled.traces == 1
