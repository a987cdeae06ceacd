"""conv3d and the 3-D poolings, unfold/fold, rms_norm, embedding_bag, local_response_norm,
channel_shuffle and bilinear, functional and as layers (Conv3d, MaxPool3d, AvgPool3d,
AdaptiveAvgPool3d, Unfold, Fold, RMSNorm, EmbeddingBag, LocalResponseNorm, Unflatten,
ChannelShuffle, Bilinear): values and gradients against PyTorch's
(fixtures/nn_layers_more_torch.json, made by fixtures/make_nn_layers_more_fixtures.py), state
dict keys and reprs as PyTorch's, finite differences to second order in both modes,
identities drawn by Hypothesis, and PyTorch's errors."""

import json
import math
import pathlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T, examples
from helpers import AWAY_FROM_ZERO, arrays, assert_values, leaf

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "nn_layers_more_torch.json").read_text()
)


def _tuples(kwargs):
    """A record's options, lists back to the tuples PyTorch was given."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in kwargs.items()}


def _argument(entry):
    """A recorded tensor argument: an index tensor, or a differentiable leaf."""
    if entry["index"]:
        return cr.asarray(T(np.array(entry["values"], dtype=np.int64)))
    return leaf(np.array(entry["values"]))


def check_both_modes(fn, *inputs):
    """First and second derivatives of fn against finite differences, by reverse mode and by
    forward mode (JVPs, and forward over reverse)."""
    assert gradcheck(fn, inputs, check_forward_ad=True)
    assert gradgradcheck(fn, inputs, check_fwd_over_rev=True)


# ----------------------------------------------------------------------------- PyTorch's values


@pytest.mark.parametrize("name", sorted(RECORD["cases"]))
def test_functions_match_pytorch_values_and_gradients(name):
    case = RECORD["cases"][name]
    args = [_argument(a) for a in case["args"]]
    by_name = {k: _argument(a) for k, a in case["by_name"].items()}
    out = getattr(F, case["function"])(*args, **by_name, **_tuples(case["kwargs"]))
    assert_values(out, case["output"], rtol=1e-11, atol=1e-13)
    cr.sum(out * T(case["cotangent"])).backward()
    differentiable = [t for t in [*args, *by_name.values()] if t.requires_grad]
    assert len(differentiable) == len(case["grads"])
    for t, expected in zip(differentiable, case["grads"], strict=True):
        assert_values(t.grad, expected, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("name", sorted(RECORD["layers"]))
def test_layers_match_pytorch_state_dict_repr_values_and_gradients(name):
    case = RECORD["layers"][name]
    args = [tuple(a) if isinstance(a, list) else a for a in case["args"]]
    layer = getattr(nn, case["layer"])(*args, **_tuples(case["kwargs"]))
    assert repr(layer) == case["repr"]
    assert list(layer.state_dict()) == list(case["state_dict"])
    for k, p in layer.state_dict().items():
        assert tuple(p.shape) == np.shape(case["state_dict"][k])
    layer.load_state_dict({k: np.asarray(v) for k, v in case["state_dict"].items()})
    x = _argument(case["input"])
    extra = {k: _argument(a) for k, a in case["extra"].items()}
    out = layer(x, **extra)
    assert_values(out, case["output"], rtol=1e-11, atol=1e-13)
    cr.sum(out * T(case["cotangent"])).backward()
    if case["input_grad"] is not None:
        assert_values(x.grad, case["input_grad"], rtol=1e-11, atol=1e-13)
    grads = {k: p.grad for k, p in layer.named_parameters()}
    assert list(grads) == list(case["parameter_grads"])
    for k, expected in case["parameter_grads"].items():
        assert_values(grads[k], expected, rtol=1e-11, atol=1e-13)


# ----------------------------------------------------------------------------- derivatives

RNG = np.random.default_rng(11)


def _normal(*shape):
    return leaf(RNG.normal(size=shape))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"stride": (2, 1, 1), "padding": (1, 0, 1), "dilation": (1, 2, 1)},
        {"groups": 2, "padding": "same"},
    ],
)
def test_conv3d_first_and_second_derivatives_both_modes(kwargs):
    groups = kwargs.get("groups", 1)
    x, w, b = _normal(1, 2, 3, 4, 3), _normal(2, 2 // groups, 2, 2, 2), _normal(2)
    check_both_modes(lambda x, w, b: F.conv3d(x, w, b, **kwargs), x, w, b)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: F.max_pool3d(x, 2, 1, padding=(1, 0, 1), ceil_mode=True),
        lambda x: F.avg_pool3d(x, (2, 2, 3), 2, 1, ceil_mode=True, count_include_pad=False),
        lambda x: F.adaptive_avg_pool3d(x, (2, 3, None)),
    ],
    ids=["max", "avg", "adaptive_avg"],
)
def test_pool3d_first_and_second_derivatives_both_modes(fn):
    # distinct values, spaced wider than the differences' step, so that no maximum is tied
    values = RNG.permutation(40).reshape(1, 1, 2, 4, 5) / 7.0
    check_both_modes(fn, leaf(values))


def test_unfold_and_fold_first_and_second_derivatives_both_modes():
    check_both_modes(lambda x: F.unfold(x, (2, 3), 2, (1, 0), (2, 1)), _normal(1, 2, 4, 5))
    check_both_modes(lambda y: F.fold(y, (4, 5), 2, 1, 1, 2), _normal(1, 8, 9))


def test_rms_norm_first_and_second_derivatives_both_modes():
    check_both_modes(lambda x, w: F.rms_norm(x, (2, 3), w), _normal(3, 2, 3), _normal(2, 3))
    check_both_modes(lambda x: F.rms_norm(x, 3, eps=0.5), _normal(2, 3))


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_first_and_second_derivatives_both_modes(mode):
    indices, offsets = cr.asarray(T([1, 2, 0, 3, 3, 1], "int64")), cr.asarray(T([0, 2, 2], "int64"))
    w = leaf(RNG.permutation(12).reshape(4, 3) / 5.0)
    check_both_modes(lambda w: F.embedding_bag(indices, w, offsets, mode=mode), w)


def test_embedding_bag_per_sample_weights_derivatives_both_modes():
    indices, offsets = cr.asarray(T([1, 2, 0, 3, 3, 1], "int64")), cr.asarray(T([0, 4], "int64"))
    check_both_modes(
        lambda w, p: F.embedding_bag(indices, w, offsets, mode="sum", per_sample_weights=p),
        _normal(4, 3),
        _normal(6),
    )


def test_local_response_norm_first_and_second_derivatives_both_modes():
    check_both_modes(lambda x: F.local_response_norm(x, 3, 0.5, 0.75, 1.5), _normal(1, 4, 3))
    check_both_modes(lambda x: F.local_response_norm(x, 2, 0.3), _normal(1, 3, 2, 2))


def test_bilinear_and_channel_shuffle_first_and_second_derivatives_both_modes():
    check_both_modes(F.bilinear, _normal(3, 2), _normal(3, 3), _normal(2, 2, 3), _normal(2))
    check_both_modes(lambda x: F.channel_shuffle(x, 2), _normal(1, 4, 2))


# ----------------------------------------------------------------------------- identities


@st.composite
def _conv3d_case(draw):
    groups, cin, cout = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kernel = [draw(st.integers(1, 2)) for _ in range(3)]
    dilation = [draw(st.integers(1, 2)) for _ in range(3)]
    stride = [draw(st.integers(1, 2)) for _ in range(3)]
    size = [draw(st.integers(d * (k - 1) + 1, 4)) for k, d in zip(kernel, dilation)]
    x = draw(arrays((1, groups * cin, *size)))
    w = draw(arrays((groups * cout, cin, *kernel)))
    return x, w, {"stride": stride, "dilation": dilation, "groups": groups}


@examples(10)
@given(_conv3d_case())
def test_conv3d_is_the_sum_of_direct_products(case):
    # out[n, o, i, j, l] = sum over c, a, b, e of x[n, g c, s i + d a, ...] w[o, c, a, b, e]
    x, w, kw = case
    out = N(F.conv3d(T(x), T(w), **kw))
    (sd, sh, sw), (dd, dh, dw), groups = kw["stride"], kw["dilation"], kw["groups"]
    cin, cout = w.shape[1], w.shape[0] // groups
    expected = np.zeros(out.shape)
    for o in range(w.shape[0]):
        g = o // cout
        for a, b, e in np.ndindex(*w.shape[2:]):
            patch = x[
                0,
                g * cin : (g + 1) * cin,
                a * dd : a * dd + sd * (out.shape[2] - 1) + 1 : sd,
                b * dh : b * dh + sh * (out.shape[3] - 1) + 1 : sh,
                e * dw : e * dw + sw * (out.shape[4] - 1) + 1 : sw,
            ]
            expected[0, o] += np.einsum("cijl,c->ijl", patch, w[o, :, a, b, e])
    np.testing.assert_allclose(out, expected, rtol=1e-10, atol=1e-10)


@st.composite
def _blocks_case(draw):
    k = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    d = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    p = (draw(st.integers(0, 2)), draw(st.integers(0, 2)))
    s = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    size = tuple(
        draw(st.integers(max(1, di * (ki - 1) + 1 - 2 * pi), 6)) for ki, di, pi in zip(k, d, p)
    )
    blocks = math.prod(
        (n + 2 * pi - di * (ki - 1) - 1) // si + 1 for n, ki, di, pi, si in zip(size, k, d, p, s)
    )
    x = draw(arrays((1, 2, *size)))
    y = draw(arrays((1, 2 * k[0] * k[1], blocks)))
    return x, y, {"dilation": d, "padding": p, "stride": s}, k


@examples(15)
@given(_blocks_case())
def test_fold_is_the_adjoint_of_unfold_and_conv2d_is_a_product_with_unfold(case):
    x, y, kw, kernel = case
    columns = F.unfold(T(x), kernel, **kw)
    folded = F.fold(T(y), x.shape[2:], kernel, **kw)
    assert columns.shape == y.shape and folded.shape == x.shape
    # <unfold(x), y> == <x, fold(y)>
    np.testing.assert_allclose(np.sum(N(columns) * y), np.sum(x * N(folded)), atol=1e-12)
    w = np.arange(2 * 2 * kernel[0] * kernel[1], dtype=float).reshape(2, 2, *kernel) / 10
    direct = N(F.conv2d(T(x), T(w), **kw))
    by_columns = (w.reshape(2, -1) @ N(columns)[0]).reshape(direct.shape)
    np.testing.assert_allclose(direct, by_columns, rtol=1e-10, atol=1e-12)


@examples(15)
@given(st.integers(1, 3).flatmap(lambda n: arrays((2, n, 3), AWAY_FROM_ZERO)))
def test_rms_norm_gives_unit_root_mean_square(x):
    out = N(F.rms_norm(T(x), (x.shape[1], 3), eps=0.0))
    rms = np.sqrt(np.mean(x**2, axis=(1, 2), keepdims=True))
    np.testing.assert_allclose(out, x / rms, rtol=1e-12, atol=1e-300)


def test_rms_norm_default_eps_is_the_dtypes_machine_epsilon():
    # PyTorch's rms_norm of these float32 values, eps=None: [2.8963095e-07, 5.7926189e-07, 0]
    x = T(np.array([[1e-10, 2e-10, 0.0]], dtype=np.float32))
    out = F.rms_norm(x, (3,))
    assert out.dtype == cr.float32
    np.testing.assert_allclose(N(out), [[2.8963095e-07, 5.7926189e-07, 0.0]], rtol=1e-6)
    # with eps 1e-5 instead, the values would be some 1e-7 times smaller
    assert np.max(N(F.rms_norm(x, (3,), eps=1e-5))) < 1e-7


def test_embedding_bag_include_last_offset_ends_the_last_bag_at_the_last_offset():
    # chainrule's documented difference: entries past offsets[-1] belong to no bag in every
    # mode (PyTorch 2.13's CPU kernel stops its sum there, but its mean divides by the count
    # to the end and its max reads to the end).
    weight = T(np.arange(15.0).reshape(5, 3) * (-1.0) ** np.arange(15).reshape(5, 3))
    indices = cr.asarray(T([1, 2, 4, 4, 3, 0, 2, 2], "int64"))
    offsets = cr.asarray(T([0, 2, 5], "int64"))
    table = N(weight)
    for mode, reduce in [("sum", np.sum), ("mean", np.mean), ("max", np.max)]:
        out = F.embedding_bag(indices, weight, offsets, mode=mode, include_last_offset=True)
        expected = [reduce(table[[1, 2]], axis=0), reduce(table[[4, 4, 3]], axis=0)]
        assert_values(out, expected)


def test_embedding_bag_empty_bags_give_zeros_and_max_sends_the_gradient_to_the_first_maximum():
    weight = leaf(np.array([[1.0, 2.0], [1.0, 0.0], [0.0, 2.0]]))
    indices = cr.asarray(T([0, 1, 2], "int64"))
    out = F.embedding_bag(indices, weight, cr.asarray(T([0, 0, 3], "int64")), mode="max")
    assert_values(out, [[0.0, 0.0], [1.0, 2.0], [0.0, 0.0]])
    cr.sum(out).backward()
    assert_values(weight.grad, [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0]])


def test_embedding_bag_max_norm_renormalises_the_rows_looked_up_as_embedding_does():
    # F.embedding's max_norm is checked against PyTorch's (test_nn_embedding_max_norm.py)
    table = np.arange(18.0).reshape(6, 3) / 4
    by_bag, by_embedding = T(table.copy()), T(table.copy())
    indices = cr.asarray(T([0, 2, 3, 2], "int64"))
    F.embedding_bag(indices, by_bag, cr.asarray(T([0, 2], "int64")), max_norm=1.5)
    F.embedding(indices, by_embedding, max_norm=1.5)
    assert_values(by_bag, N(by_embedding))
    assert not np.allclose(N(by_bag), table)


def test_embedding_bag_under_compile_runs_eagerly_with_the_same_values():
    weight = T(np.arange(15.0).reshape(5, 3))
    bags = cr.compile(lambda w, i, o: F.embedding_bag(i, w, o, mode="sum"))
    with pytest.warns(cr.CompileWarning, match="embedding_bag"):
        out = bags(weight, cr.asarray(T([1, 2, 3], "int64")), cr.asarray(T([0, 1], "int64")))
    assert_values(out, [[3, 4, 5], [15, 17, 19]])


def test_max_pool3d_sends_the_gradient_to_the_first_maximum():
    x = leaf(np.zeros((1, 1, 2, 2, 2)))
    cr.sum(F.max_pool3d(x, 2)).backward()
    assert_values(x.grad, np.eye(1, 8).reshape(1, 1, 2, 2, 2))


@pytest.mark.parametrize("size", [1, 2, 3, 4, 5])
@examples(5)
@given(st.integers(2, 4).flatmap(lambda c: arrays((2, c, 3))), st.sampled_from([0.5, 0.75]))
def test_local_response_norm_against_its_definition(size, x, beta):
    out = N(F.local_response_norm(T(x), size, 0.4, beta, 1.5))
    c = x.shape[1]
    window = [
        np.sum(x[:, max(0, i - size // 2) : i + (size - 1) // 2 + 1] ** 2, axis=1) / size
        for i in range(c)
    ]
    expected = x / (1.5 + 0.4 * np.stack(window, axis=1)) ** beta
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-15)


@examples(15)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(1, 3))
def test_channel_shuffle_moves_channel_g_times_width_plus_j_to_j_times_groups_plus_g(g, w, n):
    x = np.arange(2 * g * w * n, dtype=float).reshape(2, g * w, n)
    out = N(F.channel_shuffle(T(x), g))
    for a in range(g):
        for j in range(w):
            np.testing.assert_array_equal(out[:, j * g + a], x[:, a * w + j])


@examples(15)
@given(st.integers(0, 2).flatmap(lambda k: st.tuples(*[st.integers(1, 3)] * k)), st.data())
def test_bilinear_against_einsum(lead, data):
    x1, x2 = data.draw(arrays((*lead, 2))), data.draw(arrays((*lead, 3)))
    w, b = data.draw(arrays((4, 2, 3))), data.draw(arrays((4,)))
    out = N(F.bilinear(T(x1), T(x2), T(w), T(b)))
    expected = np.einsum("...i,oij,...j->...o", x1, w, x2) + b
    np.testing.assert_allclose(out, expected, rtol=1e-12, atol=1e-12)


# ----------------------------------------------------------------------------- layers


def test_conv3d_layer_initialisation_and_padding_modes():
    layer = nn.Conv3d(4, 6, (2, 3, 1), groups=2)
    bound = 1 / math.sqrt(2 * 2 * 3 * 1)
    for p in (layer.weight, layer.bias):
        assert np.all(np.abs(N(p)) <= bound)
        assert np.max(np.abs(N(p))) > bound / 2
    assert layer.kernel_size == (2, 3, 1) and layer.stride == (1, 1, 1)
    with pytest.raises(NotImplementedError, match="padding_mode='reflect'"):
        nn.Conv3d(2, 2, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.Conv3d(3, 2, 3, groups=2)


def test_embedding_bag_layer_initialisation_and_from_pretrained():
    cr.random.manual_seed(0)
    bag = nn.EmbeddingBag(200, 5, padding_idx=-1)
    assert bag.padding_idx == 199
    table = N(bag.weight)
    assert np.all(table[199] == 0)
    assert abs(np.mean(table[:199])) < 0.1 and abs(np.std(table[:199]) - 1) < 0.1
    pretrained = nn.EmbeddingBag.from_pretrained(T(np.arange(6.0).reshape(3, 2)), mode="sum")
    assert not pretrained.weight.requires_grad
    assert_values(pretrained(cr.asarray(T([[0, 1], [2, 2]], "int64"))), [[2, 4], [8, 10]])
    trainable = nn.EmbeddingBag.from_pretrained(T(np.ones((3, 2))), freeze=False)
    assert trainable.weight.requires_grad
    with pytest.raises(AssertionError, match="2-dimensional"):
        nn.EmbeddingBag.from_pretrained(T(np.ones(3)))


def test_rms_norm_layer():
    layer = nn.RMSNorm([2, 3])
    assert layer.eps is None and layer.normalized_shape == (2, 3)
    assert_values(layer.weight, np.ones((2, 3)))
    assert list(nn.RMSNorm(3, elementwise_affine=False).state_dict()) == []


def test_bilinear_layer_initialisation_and_unflatten():
    layer = nn.Bilinear(4, 3, 5)
    assert layer.weight.shape == (5, 4, 3) and layer.bias.shape == (5,)
    for p in (layer.weight, layer.bias):
        assert np.all(np.abs(N(p)) <= 0.5) and np.max(np.abs(N(p))) > 0.25
    assert nn.Bilinear(4, 3, 5, bias=False).bias is None
    assert nn.Unflatten(-1, (2, 5))(cr.zeros((3, 10))).shape == (3, 2, 5)
    with pytest.raises(TypeError, match="unflattened_size must be a tuple of ints"):
        nn.Unflatten(1, 5)
    with pytest.raises(TypeError, match="found element of type float at pos 0"):
        nn.Unflatten(1, (2.0, 5))
    with pytest.raises(RuntimeError, match=r"Provided sizes \[3, 5\] don't multiply up"):
        nn.Unflatten(1, (3, 5))(cr.zeros((3, 10)))


# ----------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: F.conv3d(cr.zeros((2, 2, 2)), cr.zeros((1, 2, 1, 1, 1))), RuntimeError,
         "Expected 4D (unbatched) or 5D (batched) input to conv3d, but got input of size: "
         "[2, 2, 2]"),
        (lambda: F.conv3d(cr.zeros((1, 3, 2, 2, 2)), cr.zeros((1, 2, 1, 1, 1))), RuntimeError,
         "expected input[1, 3, 2, 2, 2] to have 2 channels, but got 3 channels instead"),
        (lambda: F.conv3d(cr.zeros((1, 2, 2, 2, 2)), cr.zeros((1, 2, 3, 1, 1))), RuntimeError,
         "Kernel size can't be greater than actual input size"),
        (lambda: F.conv3d(cr.zeros((1, 2, 2, 2, 2)), cr.zeros((1, 2, 1, 1, 1)), stride=2,
                          padding="same"), RuntimeError,
         "padding='same' is not supported for strided convolutions"),
        (lambda: F.max_pool3d(cr.zeros((2, 2, 2)), 2), RuntimeError,
         "non-empty 4D or 5D (batch mode) tensor expected for input"),
        (lambda: F.max_pool3d(cr.zeros((1, 1, 4, 4, 4)), 2, padding=(2, 0, 0)), RuntimeError,
         "pad should be at most half of effective kernel size, but got pad=2, kernel_size=2 "
         "and dilation=1"),
        (lambda: F.max_pool3d(cr.zeros((1, 1, 9, 9, 9)), 3, dilation=2, padding=2), RuntimeError,
         "pad should be smaller than or equal to half of kernel size, but got kT: 3 kW: 3 kH: "
         "3 padT: 2 padW: 2 padH: 2"),
        (lambda: F.avg_pool3d(cr.zeros((1, 1, 4, 4, 4)), 2, stride=0), RuntimeError,
         "stride should not be zero"),
        (lambda: F.max_pool3d(cr.zeros((1, 1, 4, 4, 4)), 5), RuntimeError,
         "Output size is too small"),
        (lambda: F.adaptive_avg_pool3d(cr.zeros((2, 2, 2)), 2), RuntimeError,
         "adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got [2, 2, 2]"),
        (lambda: F.unfold(cr.zeros((1, 2, 3, 4, 5)), 2), RuntimeError,
         "Expected 3D or 4D (batch mode) tensor"),
        (lambda: F.unfold(cr.zeros((1, 2, 3, 3)), 4), RuntimeError,
         "calculated shape of the array of sliding blocks as (0, 0), but its components must "
         "be at least one."),
        (lambda: F.unfold(cr.zeros((1, 2, 3, 3)), 2, stride=0), RuntimeError,
         "stride should be greater than zero, but got stride_height: 0 stride_width: 0"),
        (lambda: F.unfold(cr.zeros((1, 2, 3, 3)), 2, padding=-1), RuntimeError,
         "padding should be non-negative, but got pad_height: -1 pad_width: -1"),
        (lambda: F.fold(cr.zeros((2, 13, 6)), (3, 4), 2), RuntimeError,
         "Expected size of input's dimension 1 to be divisible by the product of kernel_size, "
         "but got input.size(1)=13 and kernel_size=(2, 2)."),
        (lambda: F.fold(cr.zeros((2, 12, 7)), (3, 4), 2), RuntimeError,
         "expected size of input's dimension 2 to match the calculated number of sliding "
         "blocks 2 * 3 = 6, but got input.size(2)=7."),
        (lambda: F.rms_norm(cr.zeros((2, 3)), (4,)), RuntimeError,
         "Given normalized_shape=[4], expected input with shape [*4], but got input of "
         "size[2, 3]"),
        (lambda: F.rms_norm(cr.zeros((2, 3)), (3,), cr.ones(2)), RuntimeError,
         "Expected weight to be of same shape as normalized_shape, but got weight of shape [2] "
         "and normalized_shape = [3]"),
        (lambda: F.embedding_bag(cr.asarray([1, 2]), cr.zeros((5, 3))), ValueError,
         "offsets has to be a 1D Tensor but got None"),
        (lambda: F.embedding_bag(cr.asarray([[1, 2]]), cr.zeros((5, 3)), cr.asarray([0])),
         ValueError, "if input is 2D, then offsets has to be None"),
        (lambda: F.embedding_bag(cr.asarray([1, 2]), cr.zeros((5, 3)), cr.asarray([1])),
         RuntimeError, "offsets[0] has to be 0"),
        (lambda: F.embedding_bag(cr.asarray([1, 2]), cr.zeros((5, 3)), cr.asarray([0, 3])),
         RuntimeError, "offsets[-1] can not be greater than input's length 2"),
        (lambda: F.embedding_bag(cr.asarray([1, 2]), cr.zeros((5, 3)), cr.asarray([0]),
                                 mode="prod"), ValueError,
         "mode has to be one of sum, mean or max"),
        (lambda: F.embedding_bag(cr.asarray([1, 2]), cr.zeros((5, 3)), cr.asarray([0]),
                                 per_sample_weights=cr.ones(2)), NotImplementedError,
         "per_sample_weights is only supported for mode='sum' (got mode='mean')"),
        (lambda: F.embedding_bag(cr.asarray([1, 5]), cr.zeros((5, 3)), cr.asarray([0])),
         RuntimeError, "which is not in the valid range [0, 5)"),
        (lambda: F.embedding_bag(cr.asarray([1, -1]), cr.zeros((5, 3)), cr.asarray([0])),
         RuntimeError, "which is not in the valid range [0, 5)"),
        (lambda: F.embedding_bag(cr.asarray([1, 2]), cr.zeros((5, 3)), cr.asarray([0]),
                                 padding_idx=5), RuntimeError,
         "padding_idx must be within the number of embeddings, -5 through 4, but got 5"),
        (lambda: F.embedding_bag(cr.asarray([1.0]), cr.zeros((5, 3)), cr.asarray([0])),
         RuntimeError, "Expected tensor for argument #1 'indices' to have one of the following"),
        (lambda: F.local_response_norm(cr.zeros((2, 3)), 2), ValueError,
         "Expected 3D or higher dimensionality input (got 2 dimensions)"),
        (lambda: F.channel_shuffle(cr.zeros((2, 5, 3)), 2), RuntimeError,
         "Number of channels must be divisible by groups. Got 5 channels and 2 groups."),
        (lambda: F.channel_shuffle(cr.zeros((4, 2)), 2), RuntimeError,
         "channel_shuffle expects input with > 2 dims, but got input with sizes [4, 2]"),
        (lambda: F.channel_shuffle(cr.zeros((1, 4, 2)), 0), RuntimeError,
         "Number of groups to divide channels in must be positive. Value of groups:0"),
        (lambda: F.bilinear(cr.zeros((5, 2)), cr.zeros((4, 3)), cr.zeros((4, 2, 3))),
         RuntimeError, "bilinear(): input batch dimensions do not match: got 5 and 4"),
        (lambda: F.bilinear(cr.zeros((5, 2)), cr.zeros((5, 3)), cr.zeros((4, 3, 3))),
         RuntimeError, "bilinear(): input1 size does not match weight size: got 2 but expected 3"),
        (lambda: F.bilinear(cr.zeros((5, 2)), cr.zeros((5, 3)), cr.zeros((4, 2, 4))),
         RuntimeError, "bilinear(): input2 size does not match weight size: got 3 but expected 4"),
        (lambda: F.bilinear(cr.zeros((5, 2)), cr.zeros((5, 3)), cr.zeros((4, 2, 3)),
                            cr.zeros(3)), RuntimeError,
         "bilinear(): bias size does not match weight size: got 3 but expected 4"),
    ],
)  # fmt: skip
def test_bad_arguments_raise_pytorchs_errors(call, error, message):
    with pytest.raises(error) as raised:
        call()
    assert message in str(raised.value)
