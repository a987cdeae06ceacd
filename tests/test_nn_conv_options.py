"""conv1d/conv2d's dilation, groups and "same"/"valid" padding, functional and as layers:
values and gradients against PyTorch's (fixtures/conv_pool_torch.json, made by
fixtures/make_conv_pool_fixtures.py), finite differences to second order, and PyTorch's
errors."""

import json
import pathlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import gradcheck
from conftest import N, T, examples
from helpers import arrays, check_grads, leaf

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "conv_pool_torch.json").read_text()
)["cases"]
CONV_CASES = [name for name, case in RECORD.items() if case["function"].startswith("conv")]


@pytest.mark.parametrize("name", CONV_CASES)
def test_conv_options_match_pytorch_values_and_gradients(name):
    case = RECORD[name]
    inputs = [leaf(np.array(v)) for v in case["inputs"]]
    out = getattr(F, case["function"])(*inputs, **case["kwargs"])
    np.testing.assert_allclose(N(out), np.array(case["output"]), rtol=1e-10, atol=1e-12)
    cr.sum(out * T(np.array(case["cotangent"]))).backward()
    for x, expected in zip(inputs, case["grads"], strict=True):
        np.testing.assert_allclose(N(x.grad), np.array(expected), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"dilation": 2, "stride": (1, 2), "padding": 1},
        {"groups": 2},
        {"padding": "same", "dilation": (1, 2)},
    ],
)
def test_conv2d_options_have_first_and_second_derivatives(kwargs):
    rng = np.random.default_rng(5)
    x, w, b = (
        leaf(rng.normal(size=s))
        for s in [(1, 2, 5, 5), (2, 2 // kwargs.get("groups", 1), 2, 3), (2,)]
    )
    check_grads(lambda x, w, b: F.conv2d(x, w, b, **kwargs), x, w, b)


def test_conv1d_same_with_groups_has_first_and_second_derivatives():
    rng = np.random.default_rng(6)
    x, w = leaf(rng.normal(size=(2, 4, 6))), leaf(rng.normal(size=(2, 2, 4)))
    check_grads(lambda x, w: F.conv1d(x, w, padding="same", dilation=2, groups=2), x, w)


@st.composite
def _grouped_dilated_conv(draw):
    groups, cin, cout = draw(st.integers(1, 2)), draw(st.integers(1, 2)), draw(st.integers(1, 2))
    kh, kw = draw(st.integers(1, 3)), draw(st.integers(1, 2))
    dh, dw = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    same = draw(st.booleans())
    h = draw(st.integers(1 if same else dh * (kh - 1) + 1, 5))
    w = draw(st.integers(1 if same else dw * (kw - 1) + 1, 5))
    x = draw(arrays((1, groups * cin, h, w)))
    weight = draw(arrays((groups * cout, cin, kh, kw)))
    kwargs = {"dilation": (dh, dw), "groups": groups, "padding": "same" if same else 0}
    return x, weight, kwargs


@examples(10)
@given(_grouped_dilated_conv())
def test_conv2d_groups_dilation_same_against_the_composition_and_in_forward_mode(case):
    x, weight, kwargs = case
    groups, (dh, dw) = kwargs["groups"], kwargs["dilation"]
    kh, kw = weight.shape[2:]
    # the composition: each group's convolution by the zero-filled (dilated) kernel, after
    # padding by hand as PyTorch's "same" does (the odd zero after)
    spread = np.zeros((*weight.shape[:2], dh * (kh - 1) + 1, dw * (kw - 1) + 1))
    spread[:, :, ::dh, ::dw] = weight
    padded = x
    if kwargs["padding"] == "same":
        th, tw = dh * (kh - 1), dw * (kw - 1)
        padded = np.pad(x, ((0, 0), (0, 0), (th // 2, th - th // 2), (tw // 2, tw - tw // 2)))
    cin, cout = x.shape[1] // groups, weight.shape[0] // groups
    parts = [
        N(F.conv2d(T(padded[:, g * cin : (g + 1) * cin]), T(spread[g * cout : (g + 1) * cout])))
        for g in range(groups)
    ]
    np.testing.assert_allclose(
        N(F.conv2d(T(x), T(weight), **kwargs)), np.concatenate(parts, axis=1), atol=1e-12
    )
    assert gradcheck(
        lambda a, b: F.conv2d(a, b, **kwargs),
        (leaf(x), leaf(weight)),
        check_forward_ad=True,
        check_backward_ad=False,
    )


def test_conv2d_dilated_equals_the_convolution_by_the_zero_filled_kernel():
    rng = np.random.default_rng(7)
    x, w = T(rng.normal(size=(1, 2, 7, 7))), rng.normal(size=(3, 2, 2, 3))
    spread = np.zeros((3, 2, 3, 7))
    spread[:, :, ::2, ::3] = w
    np.testing.assert_allclose(
        N(F.conv2d(x, T(w), dilation=(2, 3))), N(F.conv2d(x, T(spread))), rtol=1e-12
    )


def test_conv_layers_take_pytorch_options_and_shapes():
    cr.manual_seed(0)
    conv = nn.Conv2d(4, 6, 3, padding="same", dilation=2, groups=2, dtype=cr.float64)
    assert tuple(conv.weight.shape) == (6, 2, 3, 3)
    assert tuple(conv(T(np.ones((1, 4, 5, 7)))).shape) == (1, 6, 5, 7)
    assert repr(conv) == (
        "Conv2d(4, 6, kernel_size=(3, 3), stride=(1, 1), padding=same, dilation=(2, 2), groups=2)"
    )
    conv1 = nn.Conv1d(3, 3, 4, padding="valid", groups=3, bias=False, dtype=cr.float64)
    assert tuple(conv1.weight.shape) == (3, 1, 4)
    assert tuple(conv1(T(np.ones((2, 3, 9)))).shape) == (2, 3, 6)
    x = T(np.arange(27.0).reshape(1, 3, 9))
    np.testing.assert_allclose(N(conv1(x)), N(F.conv1d(x, conv1.weight, groups=3)), rtol=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"groups": 3}, ValueError, "in_channels must be divisible by groups"),
        ({"groups": 2, "in_channels": 2, "out_channels": 3}, ValueError, "out_channels must be"),
        ({"padding": "same", "stride": 2}, ValueError, "not supported for strided"),
        ({"padding": "full"}, ValueError, "Invalid padding string 'full'"),
        ({"padding_mode": "reflect"}, NotImplementedError, "padding_mode='reflect'"),
        ({"padding_mode": "mirror"}, ValueError, "padding_mode must be one of"),
    ],
)
def test_conv_layer_rejects_bad_options_as_pytorch(kwargs, error, match):
    kwargs = {"in_channels": 4, "out_channels": 4, "kernel_size": 3, **kwargs}
    with pytest.raises(error, match=match):
        nn.Conv2d(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"padding": "same", "stride": 2}, "padding='same' is not supported for strided"),
        ({"padding": "full"}, "Invalid padding string: 'full'"),
        ({"dilation": 0}, r"dilation should be greater than zero, but got \[0, 0\]"),
        ({"groups": 0}, "non-positive groups is not supported"),
        ({"groups": 3}, "Given groups=3, weight of size"),
    ],
)
def test_conv2d_rejects_bad_options_as_pytorch(kwargs, match):
    with pytest.raises(RuntimeError, match=match):
        F.conv2d(T(np.ones((1, 2, 5, 5))), T(np.ones((2, 2, 3, 3))), **kwargs)
