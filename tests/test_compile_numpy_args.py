"""Raw NumPy array arguments of a compiled function (issue 20): used by chainrule's operations
they are read at every call; a view NumPy makes of one (a.T, a[0]) is not baked: the function
runs eagerly, with a CompileWarning that says why."""

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import CompileWarning
from conftest import BACKEND

pytestmark = pytest.mark.skipif(
    BACKEND is not np, reason="raw NumPy arrays next to tensors of the NumPy backend"
)


def values(f, fn, x, arrays):
    """f's and fn's results over calls with each array of `arrays`."""
    got = [float(f(x, a)) for a in arrays]
    expected = [float(fn(x, a)) for a in arrays]
    return got, expected


ARRAYS = [np.full((3, 3), v) for v in (1.0, 2.0, 3.0)]


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, a: cr.sum(x @ a.T),
        lambda x, a: cr.sum(x * a[0]),
        lambda x, a: cr.sum(x * cr.asarray(a[1], copy=True)),
        lambda x, a: cr.sum(x @ a.reshape(3, 3)[::-1]),
    ],
    ids=["transpose", "index", "asarray-of-index", "reshape-and-slice"],
)
def test_a_numpy_view_of_a_raw_array_argument_runs_eagerly_with_the_current_values(fn):
    x = cr.ones((2, 3))
    compiled = cr.compile(fn)
    with pytest.warns(CompileWarning, match="view of a raw NumPy array argument"):
        got, expected = values(compiled, fn, x, ARRAYS)
    assert got == expected
    assert expected[0] != expected[1]


def test_a_raw_array_argument_used_by_chainrule_is_replayed_without_a_warning():
    def fn(x, a):
        return cr.sum(x @ a) + cr.sum(cr.asarray(a, copy=True) * 2)

    x = cr.ones((2, 3))
    compiled = cr.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        got, expected = values(compiled, fn, x, ARRAYS)
    assert got == expected
    assert compiled.traces == 1
