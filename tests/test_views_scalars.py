"""0-d values at vmap's boundary: the gradient of a captured 0-d value, summed over the batch
by `unbatch`, is a tensor of a 0-d array (not a NumPy scalar), so that a view of it (the
views' bookkeeping holds a weak reference to a tensor's array) can be made."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from chainrule.autograd import functional
from conftest import N, T
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


# hessian(outer_jacobian_strategy="forward-mode"): forward over reverse, every column of an
# input in one forward pass at a vmap level (0-d values inside: reductions, views, writes).
HESSIAN_FUNCTIONS = [
    lambda x: cr.sum(x**3),
    lambda x: cr.exp(cr.reshape(x, (-1,))[0] * cr.reshape(x, (-1,))[-1]),
    lambda x: cr.sum(cr.reshape(x, (-1,))) * cr.sum(cr.sin(x)),
    lambda x: cr.sum(x.clone().mul_(x)),
    lambda x: cr.sum(cr.reshape(x.clone(), (-1,))[:1].mul_(cr.sum(x))) * cr.sum(x),
]


@pytest.mark.parametrize("shape", [(), (3,), (2, 2)], ids=str)
@pytest.mark.parametrize("index", range(len(HESSIAN_FUNCTIONS)), ids=str)
def test_forward_over_reverse_hessian_is_the_reverse_mode_hessian(index, shape):
    f = HESSIAN_FUNCTIONS[index]
    x = T(np.linspace(0.3, 1.1, int(np.prod(shape))).reshape(shape))
    plain = functional.hessian(f, x)
    fwd = functional.hessian(f, x, vectorize=True, outer_jacobian_strategy="forward-mode")
    assert fwd.shape == shape + shape
    assert not fwd.requires_grad
    assert_values(fwd, N(plain), rtol=1e-12, atol=1e-12)


def test_forward_over_reverse_hessian_batches_the_columns_of_each_input():
    calls = []

    def f(x, y):
        calls.append(None)
        return cr.sum(x**3) * cr.sum(y * y)

    xy = (T([0.3, 1.2]), T([[1.0, 2.0], [3.0, -0.5]]))
    plain = functional.hessian(f, xy)
    calls.clear()
    fwd = functional.hessian(f, xy, vectorize=True, outer_jacobian_strategy="forward-mode")
    # One forward pass for the columns of every input (not per element: 7), as PyTorch.
    assert len(calls) == 1
    for row_p, row_f in zip(plain, fwd):
        for a, b in zip(row_p, row_f):
            assert not b.requires_grad
            assert_values(b, N(a), rtol=1e-12, atol=1e-12)
