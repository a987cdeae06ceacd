"""Wrong values found by a random hunt over views, in-place writes and indexing (programs run
in PyTorch 2.13 and chainrule, gradients checked by finite differences): each test states
the right answer, worked out by hand."""

import numpy as np

import chainrule as cr
from conftest import N, T
from helpers import assert_values, leaf


def test_unbind_of_a_vector_with_history_gives_views_that_see_a_later_write():
    # unbind of a 1-d tensor gave 0-d copies (NumPy's x[i] is a scalar, not a view): a write
    # into the input left them with the old values and version, and their gradient went to
    # the values before the write.
    b = leaf([1.0, 2.0, 3.0])
    t = b * 2.0
    parts = t.unbind(0)
    t.mul_(3.0)
    assert_values(parts[1], 12.0)
    assert parts[1]._version == t._version == 1
    (parts[1] * 1.0).backward()
    assert_values(b.grad, [0.0, 6.0, 0.0])


def test_unbind_of_a_vector_without_history_shares_its_memory():
    x = T([1.0, 2.0, 3.0])
    parts = cr.unstack(x)
    middle = parts[1]
    middle += 10.0
    assert_values(x, [1.0, 12.0, 3.0])
    x += 1.0
    np.testing.assert_array_equal([N(p) for p in parts], [2.0, 13.0, 4.0])
    assert parts[0]._version == x._version == 2
