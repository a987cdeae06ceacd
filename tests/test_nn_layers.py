"""chainrule.nn's layers: shapes, default initialisations (PyTorch's) and gradients, first and
second order; Conv1d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d and MultiheadAttention against
PyTorch: outputs and input gradients from the same weights and inputs, recorded from PyTorch
(fixtures/layers_torch.json, made by fixtures/make_layer_fixtures.py); bad arguments."""

import json
import math
import pathlib

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T
from helpers import assert_values

# ------------------------------------------------------- shapes, default initialisations, gradients


def test_linear_default_init_is_uniform_within_one_over_sqrt_fan_in():
    cr.random.manual_seed(0)
    lin = nn.Linear(25, 400)
    bound = 1 / math.sqrt(25)
    for p in (lin.weight, lin.bias):
        v = N(p)
        assert p.dtype == cr.float64 and v.min() >= -bound and v.max() <= bound
        assert v.max() > 0.9 * bound and v.min() < -0.9 * bound
    assert lin.weight.shape == (400, 25) and lin.bias.shape == (400,)
    assert nn.Linear(2, 3, bias=False).bias is None
    assert nn.Linear(2, 3, dtype=cr.float32).weight.dtype == cr.float32


def test_linear_given_an_input_of_the_wrong_width_names_itself_and_the_shape():
    lin = nn.Linear(3, 16)
    with pytest.raises(ValueError, match=r"Linear\(3, 16\) got input of shape \(64, 5\)"):
        lin(T(np.ones((64, 5))))
    with pytest.raises(ValueError, match=r"got input of shape \(\)"):
        lin(T(1.0))
    assert lin(T(np.ones((2, 4, 3)))).shape == (2, 4, 16)


def test_linear_takes_device_and_dtype_positionally_as_pytorchs():
    # mnist_forward_forward's Layer(nn.Linear) calls
    # super().__init__(in_features, out_features, bias, device, dtype): it raised TypeError.
    layer = nn.Linear(3, 2, False, None, cr.float32)
    assert layer.weight.dtype == cr.float32 and layer.bias is None
    device = cr.ones(1).device  # the default library's device
    layer = nn.Linear(3, 2, True, device, dtype=cr.float64)
    assert layer.weight.device == layer.bias.device == device
    assert (layer.weight.dtype, layer.bias.dtype) == (cr.float64, cr.float64)


def test_embedding_and_attention_take_a_device_keyword():
    # minGPT passes device= to nn.Embedding and nn.MultiheadAttention: it raised TypeError.
    device = cr.ones(1).device
    emb = nn.Embedding(5, 3, device=device, dtype=cr.float32)
    assert (emb.weight.device, emb.weight.dtype) == (device, cr.float32)
    attn = nn.MultiheadAttention(4, 2, batch_first=True, device=device, dtype=cr.float64)
    assert all(p.device == device for p in attn.parameters())


def test_conv2d_layer_init_shapes_and_output():
    cr.random.manual_seed(0)
    conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
    bound = 1 / math.sqrt(3 * 3 * 3)
    assert conv.weight.shape == (8, 3, 3, 3) and conv.bias.shape == (8,)
    for p in (conv.weight, conv.bias):
        assert N(p).min() >= -bound and N(p).max() <= bound
    assert conv(T(np.ones((2, 3, 7, 6)))).shape == (2, 8, 4, 3)
    assert nn.Conv2d(1, 2, (3, 1), bias=False).bias is None
    assert nn.Conv2d(1, 2, (3, 1)).weight.shape == (2, 1, 3, 1)
    assert repr(conv) == "Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1))"


def test_initialisation_is_reproducible_from_the_seed():
    cr.random.manual_seed(42)
    a = N(nn.Linear(3, 3).weight)
    cr.random.manual_seed(42)
    assert np.array_equal(a, N(nn.Linear(3, 3).weight))


def test_embedding_starts_standard_normal_and_looks_up_rows():
    cr.random.manual_seed(0)
    emb = nn.Embedding(200, 50)
    w = N(emb.weight)
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1.0) < 0.02
    idx = T([[1, 0], [1, 3]], np.int64)
    out = emb(idx)
    assert out.shape == (2, 2, 50)
    np.testing.assert_array_equal(N(out)[1, 1], w[3])
    cr.sum(out).backward()
    counts = np.zeros(200)
    counts[[0, 1, 3]] = [1, 2, 1]
    np.testing.assert_array_equal(N(emb.weight.grad)[:, 0], counts)


def test_layer_norm_starts_at_ones_and_zeros_and_normalises():
    ln = nn.LayerNorm((2, 3))
    assert N(ln.weight).tolist() == [[1.0] * 3] * 2 and N(ln.bias).tolist() == [[0.0] * 3] * 2
    x = np.arange(12.0).reshape(2, 2, 3) ** 2
    y = N(ln(T(x)))
    np.testing.assert_allclose(y.reshape(2, -1).mean(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.reshape(2, -1).var(axis=1), 1.0, rtol=1e-3)
    assert nn.LayerNorm(3, elementwise_affine=False).weight is None
    assert list(dict(nn.LayerNorm(3, bias=False).named_parameters())) == ["weight"]


def test_activation_modules_apply_their_functions():
    x = T([-1.0, 0.5, 2.0])
    for module, fn in [
        (nn.ReLU(), F.relu),
        (nn.Tanh(), cr.tanh),
        (nn.Sigmoid(), F.sigmoid),
        (nn.GELU(), F.gelu),
        (nn.GELU("tanh"), lambda v: F.gelu(v, approximate="tanh")),
    ]:
        np.testing.assert_array_equal(N(module(x)), N(fn(x)))


def test_flatten_and_sequential():
    x = T(np.ones((2, 3, 4, 5)))
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 1)(x).shape == (6, 4, 5)
    seq = nn.Sequential(nn.Flatten(), nn.Linear(60, 4), nn.Tanh())
    assert seq(x).shape == (2, 4) and len(seq) == 3 and isinstance(seq[1], nn.Linear)
    assert [type(m).__name__ for m in seq] == ["Flatten", "Linear", "Tanh"]
    seq.append(nn.ReLU())
    assert [n for n, _ in seq.named_children()][-1] == "3"


def test_dropout_module_scales_in_training_and_is_identity_in_eval():
    drop = nn.Dropout(0.5)
    x = T(np.ones(1000))
    y = N(drop(x))
    assert set(np.unique(y)) == {0.0, 2.0}
    assert drop.eval()(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(-0.1)


def test_a_network_differentiates_twice_through_its_parameters():
    cr.random.manual_seed(1)
    net = nn.Sequential(nn.Linear(2, 3), nn.GELU(), nn.LayerNorm(3), nn.Linear(3, 1))
    x = T(np.array([[0.3, -0.2], [1.0, 0.4]]))

    def fn(*ps):
        w0, b0, w2, b2, w3, b3 = ps
        h = F.linear(x, w0, b0)
        h = F.layer_norm(F.gelu(h), 3, w2, b2)
        return F.linear(h, w3, b3)

    params = [p.detach().requires_grad_(True) for p in net.parameters()]
    assert gradcheck(fn, params)
    assert gradgradcheck(fn, params)


# ------------------------------ Conv1d, pools and attention against PyTorch (layers_torch.json)

RECORD = json.loads((pathlib.Path(__file__).parent / "fixtures" / "layers_torch.json").read_text())


def _extra(values):
    out = {}
    for key, v in values.items():
        if isinstance(v, list):
            a = np.asarray(v)
            v = T(a, bool if a.dtype == bool else None)
        out[key] = v
    return out


@pytest.mark.parametrize("name", sorted(RECORD["cases"]))
def test_layer_output_and_input_gradients_match_pytorch(name):
    case = RECORD["cases"][name]
    layer = getattr(nn, case["layer"])(*case["args"], **case["kwargs"])
    layer.load_state_dict({k: np.asarray(v) for k, v in case["state"].items()})
    inputs = [T(v, requires_grad=True) for v in case["inputs"]]
    out = layer(*inputs, **_extra(case["extra"]))
    outs = out if isinstance(out, tuple) else (out,)
    for got, expected in zip(outs, case["outputs"]):
        assert_values(got, expected, rtol=1e-10, atol=1e-12)
    cr.sum(outs[0] * T(case["weights"])).backward()
    for x, expected in zip(inputs, case["grads"]):
        assert_values(x.grad, expected, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: F.max_pool2d(x, 2, 1),
        lambda x: F.avg_pool2d(x, (2, 3), 1, (1, 1)),
        lambda x: F.adaptive_avg_pool2d(x, (2, 3)),
        lambda x: F.conv1d(
            x[:, :, 0], T(np.arange(12.0).reshape(2, 3, 2) / 10), stride=2, padding=1
        ),
    ],
    ids=["max_pool2d", "avg_pool2d", "adaptive_avg_pool2d", "conv1d"],
)
def test_pooling_and_conv1d_second_derivatives(fn):
    rng = np.random.default_rng(1)
    x = T(rng.permutation(2 * 3 * 4 * 5).reshape(2, 3, 4, 5) / 7.0, requires_grad=True)
    assert gradcheck(fn, (x,), eps=1e-6)
    assert gradgradcheck(fn, (x,), eps=1e-6)


def test_attention_second_derivatives_and_need_weights():
    rng = np.random.default_rng(2)
    layer = nn.MultiheadAttention(4, 2)
    q = T(rng.normal(size=(3, 2, 4)), requires_grad=True)
    out, weights = layer(q, q, q, need_weights=False)
    assert weights is None and out.shape == (3, 2, 4)
    assert gradcheck(lambda x: layer(x, x, x)[0], (q,), eps=1e-6)
    assert gradgradcheck(lambda x: layer(x, x, x)[1], (q,), eps=1e-6)


def test_bad_pooling_and_attention_arguments():
    x = T(np.zeros((1, 1, 4, 4)))
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool2d(x, 2, padding=2)
    with pytest.raises(RuntimeError, match="expected 3D or 4D input"):
        F.avg_pool2d(T(np.zeros((4, 4))), 2)
    with pytest.raises(AssertionError, match="divisible by num_heads"):
        nn.MultiheadAttention(5, 2)
    assert F.max_pool2d(x[0], 2).shape == (1, 2, 2)


def test_layer_norm_prints_its_affine_parts_as_pytorch():
    assert repr(nn.LayerNorm(3)) == "LayerNorm((3,), eps=1e-05, elementwise_affine=True, bias=True)"
    assert repr(nn.LayerNorm([2, 3], elementwise_affine=False)) == (
        "LayerNorm((2, 3), eps=1e-05, elementwise_affine=False, bias=False)"
    )


def test_embedding_from_pretrained_as_pytorchs():
    table = np.arange(12.0).reshape(4, 3)
    cr.random.manual_seed(3)
    frozen = nn.Embedding.from_pretrained(T(table), padding_idx=1)
    after = N(cr.random.randn(2))
    cr.random.manual_seed(3)
    np.testing.assert_array_equal(after, N(cr.random.randn(2)))  # no number drawn
    assert not frozen.weight.requires_grad and frozen.padding_idx == 1
    np.testing.assert_array_equal(N(frozen.weight), table)  # the padding row kept as given
    np.testing.assert_array_equal(N(frozen(T([[1, 3]], np.int64))), table[[[1, 3]]])
    trained = nn.Embedding.from_pretrained(T(table), freeze=False, padding_idx=1)
    cr.sum(trained(T([1, 2, 2], np.int64))).backward()
    np.testing.assert_array_equal(N(trained.weight.grad)[:, 0], [0.0, 0.0, 2.0, 0.0])
    with pytest.raises(AssertionError, match="expected to be 2-dimensional"):
        nn.Embedding.from_pretrained(T(np.zeros(3)))
    with pytest.raises(AssertionError, match="Shape of weight does not match"):
        nn.Embedding(3, 3, _weight=T(table))


@pytest.mark.parametrize(
    ("layer", "shape"),
    [
        (nn.Dropout1d, (40, 3, 5)),
        (nn.Dropout1d, (3, 5)),
        (nn.Dropout2d, (40, 3, 2, 2)),
        (nn.Dropout3d, (40, 3, 2, 1, 2)),
        (nn.Dropout3d, (3, 2, 1, 2)),
    ],
)
def test_channel_dropout_zeroes_whole_channels_and_scales_the_rest(layer, shape):
    cr.manual_seed(3)
    drop = layer(0.25)
    out = N(drop(T(np.ones(shape))))
    batched = out if shape[0] == 40 else out[None]
    per_channel = batched.reshape(batched.shape[0], batched.shape[1], -1)
    assert (per_channel.std(axis=-1) == 0).all()  # each channel all kept or all zero
    assert set(np.unique(per_channel)) <= {0.0, 1 / 0.75}
    drop.eval()
    x = T(np.ones(shape))
    assert drop(x) is x
    assert layer(0.0)(x) is x


def test_channel_dropout_in_place_gradient_and_errors():
    cr.manual_seed(4)
    x = T(np.random.default_rng(2).normal(size=(6, 4, 3)), requires_grad=True)
    out = F.dropout1d(x, 0.5)
    cr.sum(out * 2.0).backward()
    kept = N(out) != 0
    np.testing.assert_allclose(N(x.grad), np.where(kept, 4.0, 0.0))
    y = T(np.ones((2, 3, 2, 2)))
    assert F.dropout2d(y, 0.5, inplace=True) is y
    with pytest.raises(
        ValueError, match="dropout probability has to be between 0 and 1, but got 1.5"
    ):
        nn.Dropout2d(1.5)
    with pytest.raises(
        RuntimeError, match="dropout1d: Expected 2D or 3D input, but received a 4D input"
    ):
        F.dropout1d(T(np.ones((1, 2, 3, 4))))
    with pytest.warns(UserWarning, match="dropout2d: Received a 2-D input to dropout2d"):
        F.dropout2d(T(np.ones((3, 4))))
    with pytest.warns(UserWarning, match="assuming that channel-wise 1D dropout"):
        F.dropout2d(T(np.ones((2, 3, 4))))
    assert repr(nn.Dropout3d(0.1, True)) == "Dropout3d(p=0.1, inplace=True)"
