"""max_pool2d's ceil_mode and dilation, avg_pool2d's ceil_mode, count_include_pad and
divisor_override, functional and as layers: values and gradients against PyTorch's
(fixtures/conv_pool_torch.json, made by fixtures/make_conv_pool_fixtures.py), finite
differences to second order, and the options left out."""

import json
import pathlib

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from conftest import N, T
from helpers import check_grads, leaf

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "conv_pool_torch.json").read_text()
)["cases"]
POOL_CASES = [name for name, case in RECORD.items() if "pool" in case["function"]]


@pytest.mark.parametrize("name", POOL_CASES)
def test_pool_options_match_pytorch_values_and_gradients(name):
    case = RECORD[name]
    (x,) = (leaf(np.array(v)) for v in case["inputs"])
    out = getattr(F, case["function"])(x, **case["kwargs"])
    np.testing.assert_allclose(N(out), np.array(case["output"]), rtol=1e-12, atol=1e-14)
    cr.sum(out * T(np.array(case["cotangent"]))).backward()
    np.testing.assert_allclose(N(x.grad), np.array(case["grads"][0]), rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("name", POOL_CASES)
def test_pool_layers_match_their_functions(name):
    case = RECORD[name]
    kwargs = dict(case["kwargs"])
    layer = {"max_pool2d": nn.MaxPool2d, "avg_pool2d": nn.AvgPool2d}[case["function"]](**kwargs)
    x = T(np.array(case["inputs"][0]))
    np.testing.assert_array_equal(
        N(layer(x)), np.array(N(getattr(F, case["function"])(x, **kwargs)))
    )


@pytest.mark.parametrize(
    ("fn", "kwargs"),
    [
        (F.max_pool2d, {"kernel_size": 2, "stride": 2, "ceil_mode": True, "dilation": (1, 2)}),
        (F.avg_pool2d, {"kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": True}),
        (F.avg_pool2d, {"kernel_size": 2, "padding": 1, "count_include_pad": False}),
        (F.avg_pool2d, {"kernel_size": 2, "ceil_mode": True, "divisor_override": 5}),
    ],
)
def test_pool_options_have_first_and_second_derivatives(fn, kwargs):
    # distinct values, so that the maximum of each window is unique
    x = leaf(np.random.default_rng(3).permutation(50).reshape(1, 2, 5, 5) / 7.0)
    check_grads(lambda x: fn(x, **kwargs), x)


def test_avg_pool2d_ceil_mode_divides_by_the_window_inside_the_padded_input():
    x = T(np.arange(9.0).reshape(1, 1, 3, 3))
    # windows of 2 by stride 2 over 3: the last row and column hold one element each
    out = N(F.avg_pool2d(x, 2, ceil_mode=True))[0, 0]
    np.testing.assert_allclose(out, [[(0 + 1 + 3 + 4) / 4, (2 + 5) / 2], [(6 + 7) / 2, 8.0]])


def test_pool_layers_repr_as_pytorch():
    assert repr(nn.MaxPool2d(2)) == (
        "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)"
    )
    assert repr(nn.AvgPool2d(2, ceil_mode=True)) == "AvgPool2d(kernel_size=2, stride=2, padding=0)"


def test_pool_options_left_out_raise_clear_errors():
    x = T(np.ones((1, 1, 4, 4)))
    with pytest.raises(RuntimeError, match="divisor must be not zero"):
        F.avg_pool2d(x, 2, divisor_override=0)
    with pytest.raises(RuntimeError, match="pad should be at most half"):
        F.max_pool2d(x, 2, padding=2)
