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
from conftest import N, T, fails_on, skip_on
from helpers import assert_values, leaf

SLOW_ON_DASK = skip_on("dask", reason="these finite-difference checks take minutes there")

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


@SLOW_ON_DASK
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


@fails_on("dask", reason="Dask's reshape can't split the empty batch (take_along_axis)")
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


# ------------------------------------------------------------------ ctc_loss


@pytest.mark.parametrize("shape", [(5, 0, 3), (0, 2, 3), (5, 2, 0)])
def test_ctc_loss_of_empty_log_probs_raises_as_pytorch(shape):
    batch = shape[1]
    with pytest.raises(RuntimeError, match="^log_probs tensor must not be empty$"):
        F.ctc_loss(
            leaf(np.zeros(shape)),
            cr.zeros((batch, 2), dtype=cr.int64),
            [shape[0]] * batch,
            [0] * batch,
            reduction="sum",
        )


def test_ctc_loss_reads_strided_concatenated_targets_by_their_values():
    # PyTorch 2.13's CPU kernel reads a strided 1-D targets tensor as if contiguous (sample 1
    # gets 6.58004, not 5.63945); chainrule reads the values, as for the contiguous copy
    log_probs = F.log_softmax(T(np.linspace(-2.0, 2.0, 48).reshape(6, 2, 4) ** 2), axis=2)
    strided = T([1, 9, 2, 9, 2, 9, 3, 9, 1], np.int64)[::2]
    contiguous = T([1, 2, 2, 3, 1], np.int64)
    args = ([6, 5], [3, 2])
    a = F.ctc_loss(log_probs, strided, *args, reduction="none")
    b = F.ctc_loss(log_probs, contiguous, *args, reduction="none")
    assert_values(a, N(b))


# ------------------------------------------------------------------ spectral_norm, complex

WEIGHT = [[1 + 2j, 3 - 1j, 0.5j], [2 + 0j, -1j, 1 + 1j]]
U0, V0 = [1 + 1j, 2 + 0j], [1 + 0j, 1j, 2 + 0j]
# PyTorch 2.13, complex128, after setting u and v to U0 and V0 normalised, a training forward
# of |x W^T| summed and its backward: the weight read then (for the parametrization, a second
# power iteration), the stored weight's gradient, and u.
SPECTRAL = {
    "parametrization": (
        [0.22158717487587318 + 0.44317434975174635j, 0.6647615246276195 - 0.22158717487587315j,
         -2.725646157079642e-18 + 0.11079358743793659j,
         0.44317434975174635 + 1.0902584628318568e-17j,
         5.451292314159284e-18 - 0.22158717487587318j,
         0.22158717487587318 + 0.22158717487587318j],
        [0.08732158166481814 - 0.2812451889782352j, 0.30843883689803586 + 0.07441576114500767j,
         -0.046791084682858586 - 0.19111030624224465j,
         -0.1056320152105734 - 0.23805031236529725j,
         0.30291901080256983 - 0.18361894833461184j, -0.1632600108055993 - 0.08927170724419123j],
        [0.19880239534049624 + 0.8193068414032572j, 0.5241154058976719 + 0.12048630020636135j],
    ),
    # the older hook conjugates nothing (W^T u, dot(u, W v)): sigma is complex there
    "hook": (
        [1.1306663753136477 - 0.4214138399637576j, -0.36384610088653113 - 1.667215693431858j,
         0.26827465905910525 + 0.028783869538613227j, 0.11513547815445291 - 1.073098636236421j,
         -0.5365493181182105 - 0.057567739077226454j, 0.594117057195437 - 0.47898157904098404j],
        [-0.708909086765662 - 0.29736425289793506j, 0.44674367990910624 - 0.8441918985147358j,
         -0.9243225392012535 - 0.07315760058811957j, -0.7723870343982712 - 0.3231851413939122j,
         0.09870514303031896 - 1.3560819917708091j, -0.8531982167596601 + 0.1976837483989311j],
        [0.624259496441183 + 0.4631602715531356j, 0.40274806222011794 + 0.4832976746641415j],
    ),
}  # fmt: skip


class _ComplexLinear(cr.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = cr.nn.Parameter(T(WEIGHT))

    def forward(self, x):
        return cr.matmul(x, self.weight.mT)


@pytest.mark.parametrize("form", sorted(SPECTRAL))
def test_spectral_norm_of_a_complex_weight_is_pytorchs(form):
    # registering it raised TypeError: the vectors were drawn by a real-only normal_
    m = _ComplexLinear()
    if form == "hook":
        cr.nn.utils.spectral_norm(m)
        u, v, stored = m.weight_u, m.weight_v, m.weight_orig
    else:
        cr.nn.utils.parametrizations.spectral_norm(m)
        u, v = m.parametrizations.weight[0]._u, m.parametrizations.weight[0]._v
        stored = m.parametrizations.weight.original
    assert u.dtype == v.dtype == cr.complex128
    with cr.no_grad():
        u.copy_(F.normalize(T(U0), dim=0))
        v.copy_(F.normalize(T(V0), dim=0))
    cr.sum(cr.abs(m(T([[1 + 0j, 2 - 1j, 0.5j]])))).backward()
    weight, gradient, u_after = SPECTRAL[form]
    assert_values(m.weight, np.reshape(weight, (2, 3)), rtol=1e-12, atol=1e-15)
    assert_values(stored.grad, np.reshape(gradient, (2, 3)), rtol=1e-12, atol=1e-15)
    assert_values(u, u_after, rtol=1e-12, atol=1e-15)


# ------------------------------------------------------------------ complex, linear pieces

UNPOOL_AT = [[[[0, 3], [8, 11]]] * 2]  # (1, 2, 2, 2) flat places in 3 x 4 planes


@SLOW_ON_DASK
@pytest.mark.parametrize(
    "fn",
    [
        lambda z: F.avg_pool2d(z, 2, padding=1, count_include_pad=False),
        lambda z: F.adaptive_avg_pool2d(z, (2, 3)),
        lambda z: F.interpolate(z, size=(3, 5), mode="bicubic", align_corners=True),
        lambda z: F.interpolate(z, size=(2, 3), mode="bilinear", antialias=True),
        lambda z: F.max_unpool2d(z[:, :, :2, :2], T(UNPOOL_AT), 2, output_size=(3, 4)),
    ],
)  # fmt: skip
def test_linear_pooling_and_resampling_of_complex_values(fn):
    # PyTorch 2.13 raises NotImplementedError here; chainrule maps the real and imaginary
    # parts alike (a linear map), with derivatives of every order
    rng = np.random.default_rng(0)
    re, im = rng.standard_normal((2, 1, 2, 3, 4))
    assert_values(fn(T(re + 1j * im)), N(fn(T(re))) + 1j * N(fn(T(im))))
    z = leaf(re + 1j * im)
    assert gradcheck(lambda z: cr.abs(fn(z)) ** 2, (z,))
    assert gradgradcheck(lambda z: cr.abs(fn(z)) ** 2, (z,))


def test_embedding_bag_max_refuses_complex_weights_as_pytorch():
    # it returned NumPy's lexicographic maxima; sum and mean, linear, take them
    weight = T(np.arange(6.0).reshape(3, 2) * (1 - 1j))
    with pytest.raises(RuntimeError, match="but got CPUComplexDoubleType instead"):
        F.embedding_bag(T([[0, 1]], np.int64), weight, mode="max")
    assert_values(F.embedding_bag(T([[0, 1]], np.int64), weight), [[1 - 1j, 2 - 2j]])
    # integer weights: PyTorch's error in every mode (mean raised a NumPy error, sum and max
    # returned integers)
    for mode in ("sum", "mean", "max"):
        with pytest.raises(RuntimeError, match="but got torch.LongTensor instead"):
            F.embedding_bag(T([[0, 1]], np.int64), T([[1, 2], [3, 4]], np.int64), mode=mode)


@pytest.mark.filterwarnings("ignore:vmap. there is no batching rule")  # take: a loop
def test_max_unpool_under_vmap_is_the_loop_over_samples():
    # it raised vmap's data-dependent control flow error (the indices' range check read one
    # value for the whole batch); PyTorch's vmap runs it (by a loop)
    x = leaf(np.sin(np.arange(48.0)).reshape(3, 1, 4, 4))
    out, indices = F.max_pool2d(x, 2, return_indices=True)
    values = out * T([1.0, 2.0, 3.0]).reshape(3, 1, 1, 1)
    batched = cr.func.vmap(lambda a, b: F.max_unpool2d(a, b, 2))(values, indices)
    looped = cr.stack([F.max_unpool2d(values[k], indices[k], 2) for k in range(3)])
    assert_values(batched, N(looped))
    (g,) = cr.autograd.grad(cr.sum(batched**2), [x], retain_graph=True)
    (expected,) = cr.autograd.grad(cr.sum(looped**2), [x])
    assert_values(g, N(expected))
    bad = T([[[[0, 3]]], [[[0, 99]]]], np.int64)
    with pytest.raises(RuntimeError, match=r"^Found an invalid max index: 99 \(output volumes"):
        cr.func.vmap(lambda a, b: F.max_unpool2d(a, b, 2))(cr.ones((2, 1, 1, 2)), bad)


@pytest.mark.filterwarnings("ignore:vmap. there is no batching rule")
@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_under_vmap_over_indices_is_the_loop_over_samples(mode):
    # it raised vmap's data-dependent control flow error (the indices' range check)
    weight = leaf(np.sin(np.arange(15.0)).reshape(5, 3))
    indices = T([[[0, 1, 1], [2, 2, 2]], [[4, 3, 3], [1, 0, 1]]], np.int64)
    batched = cr.func.vmap(lambda i: F.embedding_bag(i, weight, mode=mode))(indices)
    looped = cr.stack([F.embedding_bag(indices[k], weight, mode=mode) for k in range(2)])
    assert_values(batched, N(looped))
    (g,) = cr.autograd.grad(cr.sum(batched**2), [weight])
    (expected,) = cr.autograd.grad(cr.sum(looped**2), [weight])
    assert_values(g, N(expected))


# ------------------------------------------------------------------ interpolate

GRID = np.arange(1.0, 13.0).reshape(1, 1, 3, 4)
# PyTorch 2.13: an axis whose length stays (3 by 1.1) is copied by its linear and antialiased
# kernels, whatever the scale factor; the rows of a 4-to-6 (by 1.6) resampling of each row.
ROWS_BY_1_6 = [1.0, 1.4375, 2.0625, 2.6875, 3.3125, 3.9375]


@pytest.mark.parametrize(
    "call, expected",
    [
        (lambda x: F.interpolate(x[:, :, 0], scale_factor=1.1, mode="linear"), GRID[:, :, 0]),
        (lambda x: F.interpolate(x, scale_factor=(1.1, 1.6), mode="bilinear"),
         np.array(ROWS_BY_1_6)[None, None, None] + 4.0 * np.arange(3.0)[:, None]),
        (lambda x: F.interpolate(x[None], scale_factor=(1.0, 1.1, 1.6), mode="trilinear"),
         (np.array(ROWS_BY_1_6) + 4.0 * np.arange(3.0)[:, None])[None, None, None]),
        (lambda x: F.interpolate(x, scale_factor=1.1, mode="bilinear", antialias=True), GRID),
        (lambda x: F.interpolate(x, scale_factor=1.1, mode="bicubic", antialias=True), GRID),
        # plain bicubic resamples the axes
        (lambda x: F.interpolate(x, scale_factor=1.1, mode="bicubic"),
         [[[[0.844689143501127, 1.6845182193839219, 2.600582268970699, 3.629061795642374],
            [4.204005447032306, 5.043834522915102, 5.959898572501878, 6.988378099173552],
            [8.27538035311796, 9.115209429000755, 10.03127347858753, 11.0597530052592]]]]),
    ],
)  # fmt: skip
def test_interpolate_copies_an_axis_whose_length_stays_as_pytorch(call, expected):
    # the linear modes resampled such an axis by 1 / scale_factor (row 1 read 4.4545, not 5)
    assert_values(call(T(GRID)), expected, rtol=1e-12, atol=1e-12)


@SLOW_ON_DASK
@pytest.mark.parametrize("mode, antialias", [("bilinear", False), ("bicubic", True)])
def test_interpolate_with_an_axis_that_stays_derivatives(mode, antialias):
    def fn(x):
        return F.interpolate(x, scale_factor=(1.1, 1.6), mode=mode, antialias=antialias)

    x = leaf(np.sin(np.arange(12.0)).reshape(1, 1, 3, 4))
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bicubic"])
def test_interpolate_keeping_every_length_returns_a_new_tensor_a_write_to_which_leaves_x(mode):
    # Every axis copied as it was gave back x itself (nearest before; the linear modes too
    # once an unchanged axis is copied): a write into the result wrote into x. PyTorch 2.13
    # returns a new tensor in each mode.
    x = cr.asarray(np.arange(12.0).reshape(1, 1, 3, 4))
    y = F.interpolate(x, size=(3, 4), mode=mode)
    assert y is not x
    y.add_(1.0)
    np.testing.assert_array_equal(np.asarray(x), np.arange(12.0).reshape(1, 1, 3, 4))
    w = cr.asarray(np.arange(12.0).reshape(1, 1, 3, 4)).requires_grad_()
    cr.sum(F.interpolate(w, scale_factor=1.0, mode=mode) * 2.0).backward()
    np.testing.assert_array_equal(np.asarray(w.grad), np.full((1, 1, 3, 4), 2.0))
