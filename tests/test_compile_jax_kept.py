"""chainrule.compile's check for values computed inside and kept outside, through a returned
view's base: neither the alias group's root value (JAX's and Dask's immutable arrays) nor the
view's hold on its base (NumPy) is taken for a holder that explains the base kept outside."""

import numpy as np
import pytest

import chainrule as cr
from conftest import N, T

RNG = np.random.default_rng(7)


def test_a_kept_base_of_a_returned_same_shape_view_makes_the_function_run_eagerly():
    store = []

    def fn(x):
        y = cr.sin(x)
        store.append(y)  # kept outside, not returned: a replay would not update it
        return y.reshape((3,))  # a view of y (on JAX the same array object)

    compiled = cr.compile(fn)
    with pytest.warns(cr.CompileWarning, match="kept outside"):
        for _ in range(3):
            x = RNG.normal(size=3)
            compiled(T(x))
    assert len(store) == 3  # each call ran the function: the stored value is each call's
    np.testing.assert_allclose(N(store[-1]), np.sin(x), rtol=1e-12)
