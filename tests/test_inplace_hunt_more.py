"""In-place writes, views, empty batches and complex values where they meet pooling with
indices and unpooling, nn.utils.rnn, ctc_loss and parametrizations: the answers that were
wrong or unlike PyTorch's (values and errors recorded from PyTorch 2.13 as literals), each
with the derivatives checked by finite differences where the fix touched them."""

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule.autograd import gradcheck, gradgradcheck
from chainrule.nn.utils import rnn
from conftest import N, T
from helpers import assert_values, leaf

# ------------------------------------------------------------------ nn.utils.rnn


def test_unpad_sequence_gives_copies_not_views_of_the_padded_batch():
    # PyTorch's pieces are copies: a write to one leaves the batch as it was
    padded = T(np.arange(12.0).reshape(2, 3, 2))
    pieces = rnn.unpad_sequence(padded, T([3, 2], np.int64), batch_first=True)
    with cr.no_grad():
        pieces[0][0] = 100.0
    assert_values(padded, np.arange(12.0).reshape(2, 3, 2))
    assert_values(pieces[1], np.arange(6.0, 10.0).reshape(2, 2))
    assert padded._version == 0


@pytest.mark.parametrize("unpack", [True, False])
def test_a_write_to_one_unpadded_sequence_leaves_its_siblings_backward_alone(unpack):
    # PyTorch 2.13 runs this backward: the pieces share no version counter
    a = leaf(np.arange(12.0).reshape(3, 2, 2))
    if unpack:
        pieces = rnn.unpack_sequence(rnn.pack_padded_sequence(a, [3, 2]))
    else:
        pieces = rnn.unpad_sequence(a * 1.0, T([3, 2], np.int64))
    loss = cr.sum(pieces[1] ** 2)
    pieces[0].mul_(2.0)
    loss.backward()
    expected = np.zeros((3, 2, 2))
    expected[:2, 1] = 2 * np.arange(12.0).reshape(3, 2, 2)[:2, 1]
    assert_values(a.grad, expected)


def test_unpad_sequence_derivatives():
    def fn(x):
        return cr.concat(rnn.unpad_sequence(x, T([3, 1], np.int64)), axis=0) ** 2

    x = leaf(np.linspace(-1.0, 1.0, 12).reshape(3, 2, 2))
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize(
    "shape, lengths", [((3, 0, 2), []), ((0, 2, 2), [1, 1]), ((3, 2, 0), [3, 2])]
)
def test_packing_an_empty_tensor_raises_as_pytorch(shape, lengths):
    with pytest.raises(RuntimeError, match="^Cannot pack empty tensors.$"):
        rnn.pack_padded_sequence(cr.zeros(shape), lengths)
