"""MaxPool1d, AvgPool1d, AdaptiveAvgPool1d, AdaptiveMaxPool2d and their functional forms
against PyTorch (fixtures/nn_pool_torch.json, made by fixtures/make_nn_families_fixtures.py):
values and gradients; ties send the gradient to the first maximum; first and second
derivatives in both modes by finite differences on drawn shapes; compiled equals eager;
PyTorch's reprs and errors."""

import json
import pathlib
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T, examples
from helpers import arrays, assert_values, check_recorded_function, check_recorded_layer, leaf

RECORD = json.loads((pathlib.Path(__file__).parent / "fixtures" / "nn_pool_torch.json").read_text())
POOLS = ("max_pool1d", "avg_pool1d", "adaptive_avg_pool1d", "adaptive_max_pool2d")
FUNCTIONS = sorted(k for k, v in RECORD["functions"].items() if v["function"] in POOLS)
LAYERS = sorted(
    k
    for k, v in RECORD["layers"].items()
    if v["layer"] in ("MaxPool1d", "AvgPool1d", "AdaptiveAvgPool1d", "AdaptiveMaxPool2d")
)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functions_match_pytorch(name):
    check_recorded_function(RECORD["functions"][name])


@pytest.mark.parametrize("name", LAYERS)
def test_layers_match_pytorch(name):
    check_recorded_layer(RECORD["layers"][name])


def test_ties_send_the_gradient_to_the_first_maximum():
    x = leaf(np.ones((1, 1, 2, 3)))
    cr.sum(F.adaptive_max_pool2d(x, 1)).backward()
    assert_values(x.grad, [[[[1.0, 0.0, 0.0], [0.0, 0.0, 0.0]]]])
    y = leaf(np.ones((1, 4)))
    cr.sum(F.max_pool1d(y, 2)).backward()
    assert_values(y.grad, [[1.0, 0.0, 1.0, 0.0]])


# ------------------------------------------------------- derivatives by finite differences

# Values at least 0.1 apart (a permutation, scaled): no ties, so the maxima are differentiable.
_DISTINCT = st.integers(2, 7).flatmap(
    lambda n: st.permutations(range(n)).map(lambda p: np.array(p, dtype=float) * 0.1)
)


@examples(8)
@given(
    _DISTINCT,
    st.sampled_from(
        [
            lambda x: F.max_pool1d(x, 2, padding=1),
            lambda x: F.avg_pool1d(x, 2, stride=1, ceil_mode=True),
            lambda x: F.adaptive_avg_pool1d(x, 3),
            lambda x: F.adaptive_max_pool2d(x, (1, 2)),
        ]
    ),
)
def test_first_and_second_derivatives_in_both_modes(values, fn):
    x = leaf(values.reshape(1, 1, -1) if len(values) % 2 else values.reshape(1, 2, -1))
    assert gradcheck(fn, (x,), check_forward_ad=True)
    assert gradgradcheck(fn, (x,))


@examples(5)
@given(arrays((1, 2, 5, 4)))
def test_adaptive_max_pool2d_of_distinct_values_has_finite_difference_derivatives(a):
    a = a + np.arange(a.size).reshape(a.shape) * 10.0  # distinct, whatever was drawn
    fn = lambda x: F.adaptive_max_pool2d(x, (3, 2))  # noqa: E731
    assert gradcheck(fn, (leaf(a),), check_forward_ad=True)


# ------------------------------------------------------- compile


@pytest.mark.parametrize(
    "layer",
    [nn.MaxPool1d(3, 2, 1), nn.AvgPool1d(2), nn.AdaptiveAvgPool1d(3), nn.AdaptiveMaxPool2d(2)],
    ids=["max1d", "avg1d", "adaptive_avg1d", "adaptive_max2d"],
)
def test_compiled_equals_eager(layer):
    def step(x):
        out = layer(x)
        (g,) = cr.autograd.grad(cr.sum(out * out), [x])
        return out, g

    compiled = cr.compile(step)
    rng = np.random.default_rng(6)
    shape = (2, 3, 4, 5) if isinstance(layer, nn.AdaptiveMaxPool2d) else (2, 3, 7)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cr.CompileWarning)
        for _ in range(3):
            x = leaf(rng.normal(size=shape))
            for got, want in zip(compiled(x), step(x)):
                assert_values(got, N(want), rtol=1e-13, atol=1e-15)
    assert compiled.traces == 1


# ------------------------------------------------------- reprs, bad arguments


def test_reprs_are_pytorchs():
    assert repr(nn.MaxPool1d(3)) == (
        "MaxPool1d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)"
    )
    assert repr(nn.AvgPool1d(3, 2, 1, True, False)) == (
        "AvgPool1d(kernel_size=(3,), stride=(2,), padding=(1,))"
    )
    assert repr(nn.AdaptiveAvgPool1d(3)) == "AdaptiveAvgPool1d(output_size=3)"
    assert repr(nn.AdaptiveMaxPool2d((3, None))) == "AdaptiveMaxPool2d(output_size=(3, None))"


def test_bad_arguments_raise_pytorchs_errors():
    with pytest.raises(RuntimeError, match="max_pool1d: Expected 2D or 3D \\(batch mode\\)"):
        F.max_pool1d(T(np.zeros((1, 2, 3, 4))), 2)
    with pytest.raises(RuntimeError, match="padding should be at most half of kernel size"):
        F.max_pool1d(T(np.zeros((1, 2, 5))), 2, padding=2)
    with pytest.raises(RuntimeError, match="max_pool1d\\(\\) stride must be greater than zero"):
        F.max_pool1d(T(np.zeros((1, 2, 5))), 2, stride=0)
    with pytest.raises(RuntimeError, match="Invalid computed output size: 0"):
        F.max_pool1d(T(np.zeros((1, 2, 1))), 3)
    with pytest.raises(RuntimeError, match="Expected 2 to 3 dimensions, but got 4-dimensional"):
        F.avg_pool1d(T(np.zeros((1, 2, 3, 4))), 2)
    with pytest.raises(RuntimeError, match="pad should be at most half of effective kernel size"):
        F.avg_pool1d(T(np.zeros((1, 2, 5))), 2, padding=2)
    with pytest.raises(RuntimeError, match="'output_size' should contain one int \\(got 2\\)"):
        F.adaptive_avg_pool1d(T(np.zeros((2, 5))), (3, 2))
    with pytest.raises(RuntimeError, match="Expected 3D or 4D tensor, but got: \\[2, 5\\]"):
        F.adaptive_max_pool2d(T(np.zeros((2, 5))), 3)
