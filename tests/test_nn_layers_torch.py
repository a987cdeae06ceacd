"""Conv1d, MaxPool2d, AvgPool2d, AdaptiveAvgPool2d and MultiheadAttention against PyTorch:
outputs and input gradients from the same weights and inputs, recorded from PyTorch
(fixtures/layers_torch.json, made by fixtures/make_layer_fixtures.py); second derivatives
by finite differences; bad arguments."""

import json
import pathlib

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import T
from helpers import assert_values

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
