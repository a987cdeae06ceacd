"""The default initialisation of layers with weights: PyTorch's bounds, and layers without
inputs (no fan-in) built as PyTorch builds them."""

import math

import pytest

import chainrule as cr
from chainrule import nn


@pytest.mark.parametrize(
    "make, fan_in",
    [
        (lambda: nn.Linear(5, 3), 5),
        (lambda: nn.Conv1d(2, 3, 4), 8),
        (lambda: nn.Conv2d(2, 3, (2, 3)), 12),
    ],
)
def test_weight_and_bias_start_within_one_over_the_square_root_of_the_fan_in(make, fan_in):
    cr.random.manual_seed(0)
    layer = make()
    bound = 1 / math.sqrt(fan_in)
    for p in (layer.weight, layer.bias):
        assert bool(cr.all(cr.abs(p) <= bound))
        assert float(cr.max(cr.abs(p))) > bound / 2  # drawn, not zeros


@pytest.mark.parametrize(
    "make", [lambda: nn.Linear(0, 3), lambda: nn.Conv1d(0, 3, 2), lambda: nn.Conv2d(0, 3, 2)]
)
def test_layers_without_inputs_are_built_with_a_zero_bias(make):
    layer = make()
    assert layer.weight.shape[1] == 0
    assert bool(cr.all(layer.bias == 0))
