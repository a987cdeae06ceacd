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


# ------------------------------------------------------------------ pooling and unpooling


@pytest.mark.parametrize("spatial", [1, 2, 3])
def test_max_pool_with_indices_and_unpool_of_an_empty_batch_backward_as_pytorch(spatial):
    # PyTorch 2.13: the unpooled zeros require grad, and x gets a zero gradient of its shape
    pool = [F.max_pool1d, F.max_pool2d, F.max_pool3d][spatial - 1]
    unpool = [F.max_unpool1d, F.max_unpool2d, F.max_unpool3d][spatial - 1]
    x = leaf(np.zeros((0, 2) + (4,) * spatial))
    out, indices = pool(x, 2, return_indices=True)
    unpooled = unpool(out, indices, 2)
    assert out.shape == (0, 2) + (2,) * spatial and indices.dtype == cr.int64
    assert unpooled.shape == x.shape and unpooled.requires_grad
    cr.sum(unpooled * unpooled).backward()
    assert N(x.grad).shape == x.shape


def test_avg_pool3d_and_adaptive_max_pool2d_take_an_empty_batch():
    x = leaf(np.zeros((0, 2, 4, 4, 4)))
    cr.sum(F.avg_pool3d(x, 2)).backward()
    assert N(x.grad).shape == x.shape
    y = leaf(np.zeros((0, 2, 4, 4)))
    out, indices = F.adaptive_max_pool2d(y, 2, return_indices=True)
    assert out.shape == indices.shape == (0, 2, 2, 2)
    cr.sum(out).backward()
    assert N(y.grad).shape == y.shape


NONBATCH_2D = "Expected 3D or 4D (batch mode) tensor with optional 0 dim batch size for input"
NONBATCH_3D = "Expected input's non-batch dimensions to have positive length"
NONBATCH_ADAPTIVE = "(): Expected input to have non-zero size for non-batch dimensions"
NONBATCH_UNPOOL = "_forward_out_cpu(): Expected input to have non-zero size for non-batch"


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: F.max_pool2d(cr.zeros((2, 0, 4, 4)), 2), NONBATCH_2D + ", but got:[2, 0, 4, 4]"),
        (lambda: F.avg_pool2d(cr.zeros((0, 4, 4)), 2), NONBATCH_2D + ", but got:[0, 4, 4]"),
        (lambda: F.max_pool2d(cr.zeros((2, 2, 0, 4)), 2), NONBATCH_2D + ", but got:[2, 2, 0, 4]"),
        (lambda: F.max_pool1d(cr.zeros((2, 0, 4)), 2), "max_pool1d: " + NONBATCH_2D[:9]),
        (lambda: F.max_pool3d(cr.zeros((2, 0, 4, 4, 4)), 2),
         "max_pool3d_with_indices_out_cpu_template(): " + NONBATCH_3D),
        (lambda: F.avg_pool3d(cr.zeros((0, 4, 4, 4)), 2), "avg_pool3d(): " + NONBATCH_3D),
        (lambda: F.max_pool3d(cr.zeros((2, 2)), 2),
         "non-empty 4D or 5D (batch mode) tensor expected for input"),
        (lambda: F.adaptive_max_pool2d(cr.zeros((2, 0, 4, 4)), 2),
         "adaptive_max_pool2d" + NONBATCH_ADAPTIVE + ", but input has sizes [2, 0, 4, 4] with "
         "dimension 1 being empty"),
        (lambda: F.adaptive_max_pool1d(cr.zeros((2, 2, 0)), 2),
         "adaptive_max_pool1d" + NONBATCH_ADAPTIVE),
        (lambda: F.max_unpool2d(cr.zeros((2, 0, 3, 3)), cr.zeros((2, 0, 3, 3), dtype=cr.int64), 2),
         "max_unpooling2d" + NONBATCH_UNPOOL + " dimensions, but got [2, 0, 3, 3] with dimension "
         "1 being empty."),
        (lambda: F.max_unpool1d(cr.zeros((2, 3, 0)), cr.zeros((2, 3, 0), dtype=cr.int64), 2),
         "max_unpooling2d" + NONBATCH_UNPOOL + " dimensions, but got [2, 3, 0, 1]"),
    ],
)  # fmt: skip
def test_pooling_an_empty_axis_but_the_batch_raises_as_pytorch(call, message):
    with pytest.raises(RuntimeError) as caught:
        call()
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda z: F.max_pool2d(z, 2), '"max_pool2d" not implemented for \'ComplexDouble\''),
        (lambda z: F.max_pool1d(z[0], 2),
         '"max_pool1d_impl" not implemented for \'ComplexDouble\''),
        (lambda z: F.max_pool3d(z, 2), '"max_pool3d" not implemented for \'ComplexDouble\''),
        (lambda z: F.adaptive_max_pool2d(z, 2),
         '"adaptive_max_pool2d" not implemented for \'ComplexDouble\''),
        (lambda z: F.adaptive_max_pool1d(z[0], 2),
         '"adaptive_max_pool2d" not implemented for \'ComplexDouble\''),
    ],
)  # fmt: skip
def test_max_pooling_refuses_complex_values_as_pytorch(call, message):
    # complex numbers have no order: NumPy's lexicographic one picked a meaningless maximum
    z = cr.asarray(np.full((1, 2, 4, 4), 1 - 1j)) + cr.asarray(np.arange(32.0).reshape(1, 2, 4, 4))
    with pytest.raises(NotImplementedError, match=f"^{message}$"):
        call(z)
