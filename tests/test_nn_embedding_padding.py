"""nn.Embedding's padding_idx, as PyTorch's: its row starts at zeros, its lookups give the row
as it is but send it no gradient (first and second order, against finite differences), a
negative one counts from the end, one outside the table is PyTorch's AssertionError."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from chainrule.func import functional_call
from conftest import N, T

INDICES = np.array([[0, 3, 1], [3, 3, 2]])


def expected_grad(w, indices, padding_idx):
    """d sum(out^2) / d weight: 2 w[i] added to row i per lookup, none to padding_idx's."""
    g = np.zeros_like(w)
    np.add.at(g, indices.reshape(-1), 2 * w[indices.reshape(-1)])
    g[padding_idx] = 0.0
    return g


@pytest.mark.parametrize("padding_idx", [3, -1])
def test_the_padding_row_starts_at_zeros_and_negative_counts_from_the_end(padding_idx):
    e = cr.nn.Embedding(4, 3, padding_idx)
    assert e.padding_idx == 3
    np.testing.assert_array_equal(N(e.weight)[3], np.zeros(3))
    assert np.all(N(e.weight)[:3] != 0)
    assert repr(e) == "Embedding(4, 3, padding_idx=3)"


def test_lookups_of_the_padding_row_give_it_but_send_it_no_gradient():
    e = cr.nn.Embedding(4, 3, padding_idx=3)
    with cr.no_grad():
        e.weight[3] = 1.5  # a padding row written later still gets no gradient (as PyTorch)
    w = N(e.weight).copy()
    out = e(T(INDICES))
    np.testing.assert_array_equal(N(out), w[INDICES])
    cr.sum(out * out).backward()
    np.testing.assert_allclose(N(e.weight.grad), expected_grad(w, INDICES, 3), rtol=1e-15)


def test_without_padding_idx_every_row_gets_its_gradient():
    e = cr.nn.Embedding(4, 3)
    w = N(e.weight).copy()
    cr.sum(e(T(INDICES)) ** 2).backward()
    g = np.zeros_like(w)
    np.add.at(g, INDICES.reshape(-1), 2 * w[INDICES.reshape(-1)])
    np.testing.assert_allclose(N(e.weight.grad), g, rtol=1e-15)


def test_the_other_rows_gradients_match_finite_differences_to_second_order():
    # The padding row's gradient is 0 by design (not its derivative): finite differences are
    # taken over the other rows, with the padding row a constant looked up among them.
    e = cr.nn.Embedding(4, 3, padding_idx=1)
    pad_row = T([[0.5, -0.2, 0.3]])
    indices = T(np.array([1, 0, 1, 2, 3, 0]))

    def fn(rest):
        w = cr.concat([rest[:1], pad_row, rest[1:]], axis=0)
        return functional_call(e, {"weight": w}, (indices,)) ** 3

    rest = T(np.delete(N(e.weight), 1, axis=0), requires_grad=True)
    assert gradcheck(fn, (rest,), check_forward_ad=True)
    assert gradgradcheck(fn, (rest,))


def test_the_padding_row_gets_no_gradient_to_second_order():
    e = cr.nn.Embedding(4, 3, padding_idx=1)
    w = T(N(e.weight) + 1.0, requires_grad=True)
    out = cr.sum(functional_call(e, {"weight": w}, (T(np.array([1, 0, 1])),)) ** 3)
    (g,) = cr.autograd.grad(out, w, create_graph=True)
    (gg,) = cr.autograd.grad(cr.sum(g * g), w)
    assert np.all(N(g)[1] == 0) and np.all(N(gg)[1] == 0)
    assert np.all(N(g)[0] != 0) and np.all(N(gg)[0] != 0)


def test_a_padding_idx_outside_the_table_is_pytorchs_assertion_error():
    for padding_idx in (4, -5):
        with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
            cr.nn.Embedding(4, 3, padding_idx)
