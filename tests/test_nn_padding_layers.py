"""The padding layers (ReflectionPad, ReplicationPad, CircularPad, ZeroPad, ConstantPad in
1, 2 and 3 dimensions) and PixelShuffle / PixelUnshuffle with F.pixel_shuffle and
F.pixel_unshuffle, which the ports of fast_neural_style and super_resolution needed: values,
input gradients and reprs against PyTorch (fixtures/ports_gaps_torch.json, recorded by
fixtures/make_ports_gaps_fixtures.py), second derivatives by finite differences, PyTorch's
errors."""

import json
import pathlib

import numpy as np
import pytest

import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import T
from helpers import assert_values, check_recorded_function, check_recorded_layer

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "ports_gaps_torch.json").read_text()
)


@pytest.mark.parametrize("name", RECORD["functions"])
def test_pixel_shuffle_functions_match_pytorch(name):
    check_recorded_function(RECORD["functions"][name])


@pytest.mark.parametrize("name", RECORD["layers"])
def test_padding_and_pixel_shuffle_layers_match_pytorch(name):
    case = RECORD["layers"][name]
    check_recorded_layer(case)
    args = [tuple(a) if isinstance(a, list) else a for a in case["args"]]
    assert repr(getattr(nn, name)(*args)) == case["repr"]


def test_pixel_shuffle_moves_each_channel_to_its_place_in_the_block():
    # out[c, h r + i, w r + j] = x[c r^2 + i r + j, h, w], and unshuffle undoes it.
    r, x = 3, np.random.default_rng(5).normal(size=(2, 18, 2, 3))
    expected = np.empty((2, 2, 6, 9))
    for c in range(2):
        for i in range(r):
            for j in range(r):
                expected[:, c, i::r, j::r] = x[:, c * r * r + i * r + j]
    assert_values(F.pixel_shuffle(T(x), r), expected)
    assert_values(F.pixel_unshuffle(T(expected), r), x)


@pytest.mark.parametrize(
    "fn",
    [
        lambda t: F.pixel_shuffle(t, 2) ** 2,
        lambda t: F.pixel_unshuffle(t, 2) ** 2,
        lambda t: nn.ReflectionPad2d((1, 2, 2, 0))(t) ** 2,
        lambda t: nn.ReplicationPad1d(2)(t[0]) ** 2,
        lambda t: nn.CircularPad2d(1)(t) ** 2,
        lambda t: nn.ConstantPad2d(1, 0.5)(t) ** 2,
    ],
)
def test_second_derivatives_by_finite_differences(fn):
    x = T(np.random.default_rng(6).normal(size=(1, 4, 4, 4)), requires_grad=True)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_pixel_shuffle_bad_input_raises_pytorchs_errors():
    with pytest.raises(RuntimeError, match=r"input.size\(-3\)=5 is not divisible by 4"):
        F.pixel_shuffle(T(np.zeros((2, 5, 3, 3))), 2)
    with pytest.raises(RuntimeError, match="at least 3 dimensions, but got input with 2"):
        nn.PixelShuffle(2)(T(np.zeros((4, 3))))
    with pytest.raises(RuntimeError, match="expects a positive upscale_factor, but got 0"):
        F.pixel_shuffle(T(np.zeros((1, 4, 3, 3))), 0)
    with pytest.raises(
        RuntimeError, match=r"height to be divisible by downscale_factor, but input.size\(-2\)=3"
    ):
        F.pixel_unshuffle(T(np.zeros((1, 1, 3, 4))), 2)
    with pytest.raises(
        RuntimeError, match=r"width to be divisible by downscale_factor, but input.size\(-1\)=3"
    ):
        nn.PixelUnshuffle(2)(T(np.zeros((1, 1, 4, 3))))
