"""vmap(chunk_size=...) with randomness='same': every chunk draws the same random numbers, as
one vmap over the whole batch does (PyTorch restores the generator's state before each
chunk); with 'different' the chunks' draws differ."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from conftest import N, T


def _dropped(row):
    return cr.nn.functional.dropout(row, 0.5, training=True)


@pytest.mark.parametrize("chunk_size", [1, 2, 3])
def test_same_randomness_is_shared_across_chunks(chunk_size):
    x = T(np.ones((5, 8)))
    cr.manual_seed(3)
    whole = func.vmap(_dropped, randomness="same")(x)
    cr.manual_seed(3)
    chunked = func.vmap(_dropped, randomness="same", chunk_size=chunk_size)(x)
    rows = N(chunked)
    assert all((rows[i] == rows[0]).all() for i in range(5))
    np.testing.assert_array_equal(rows, N(whole))


def test_same_randomness_across_chunks_of_random_draws():
    x = T(np.zeros((4, 3)))
    out = N(func.vmap(lambda r: r + cr.randn(3), randomness="same", chunk_size=1)(x))
    assert all((out[i] == out[0]).all() for i in range(4))


def test_different_randomness_differs_across_chunks():
    x = T(np.zeros((4, 3)))
    out = N(func.vmap(lambda r: r + cr.randn(3), randomness="different", chunk_size=2)(x))
    assert len({tuple(row) for row in out}) == 4
