"""0-d values at vmap's boundary: the gradient of a captured 0-d value, summed over the batch
by `unbatch`, is a tensor of a 0-d array (not a NumPy scalar), so that a view of it (the
views' bookkeeping holds a weak reference to a tensor's array) can be made."""

import numpy as np

import chainrule as cr
from chainrule import func
from conftest import T
from helpers import assert_values, leaf


def test_create_graph_through_a_captured_0d_value_under_vmap_makes_views_of_its_gradient():
    # s is 0-d and captured by vmap: backward sums its gradient over the batch (unbatch),
    # and sum's VJP reshapes that sum (a view) when the graph is recorded.
    x = leaf([1.0, 2.0])
    s = cr.sum(x)
    out = func.vmap(lambda v: s * v)(T([1.0, 2.0, 3.0]))
    (g,) = cr.autograd.grad(cr.sum(out), x, create_graph=True)
    assert_values(g, [6.0, 6.0])


def test_unbatched_0d_gradient_is_a_0d_array_of_the_library():
    x = leaf(1.5)
    out = func.vmap(lambda v: x * v)(T([1.0, 2.0, 3.0]))
    (g,) = cr.autograd.grad(cr.sum(out), x, create_graph=True)
    assert g.shape == ()
    assert not isinstance(g._data, np.generic)
    assert_values(g, 6.0)
    # The recorded graph is usable: second order through the 0-d gradient (d/dx of 6 is 0).
    (gg,) = cr.autograd.grad(g * x, x)
    assert_values(gg, 6.0)
