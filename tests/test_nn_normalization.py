"""GroupNorm, InstanceNorm1d/2d/3d and F.group_norm / F.instance_norm against PyTorch
(fixtures/nn_normalization_torch.json, made by fixtures/make_nn_families_fixtures.py): values,
gradients of the input and the parameters, running statistics; first and second derivatives
in both modes by finite differences; compiled training steps equal eager ones; PyTorch's
parameters, reprs and errors."""

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

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "nn_normalization_torch.json").read_text()
)
FUNCTIONS = sorted(
    k for k, v in RECORD["functions"].items() if v["function"] in ("group_norm", "instance_norm")
)
LAYERS = sorted(k for k, v in RECORD["layers"].items() if "Norm" in v["layer"])


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functions_match_pytorch(name):
    check_recorded_function(RECORD["functions"][name])


@pytest.mark.parametrize("name", LAYERS)
def test_layers_match_pytorch_with_their_running_statistics(name):
    check_recorded_layer(RECORD["layers"][name])


# ------------------------------------------------------- derivatives by finite differences


@st.composite
def _grouped(draw):
    groups = draw(st.integers(1, 2))
    channels = groups * draw(st.integers(1, 2))
    shape = (draw(st.integers(1, 2)), channels) + tuple(
        draw(st.integers(1, 3)) for _ in range(draw(st.integers(0, 2)))
    )
    if np.prod(shape[2:]) * channels // groups < 2:  # one value per group: variance 0
        shape = shape[:2] + (2,)
    x = draw(arrays(shape))
    weight, bias = draw(arrays((channels,))), draw(arrays((channels,)))
    return x, weight, bias, groups


@examples(6)
@given(_grouped())
def test_group_norm_first_and_second_derivatives_in_both_modes(case):
    x, weight, bias, groups = case
    if np.ptp(x.reshape(x.shape[0], groups, -1), axis=-1).min() < 1e-2:
        return  # a group of (nearly) equal values: the division by its spread is ill-posed
    fn = lambda x, w, b: F.group_norm(x, groups, w, b, eps=1e-3)  # noqa: E731
    inputs = (leaf(x), leaf(weight), leaf(bias))
    assert gradcheck(fn, inputs, check_forward_ad=True)
    assert gradgradcheck(fn, inputs)


def test_instance_norm_first_and_second_derivatives_in_both_modes():
    rng = np.random.default_rng(3)
    x, weight, bias = rng.normal(size=(2, 2, 3)), rng.normal(size=2), rng.normal(size=2)
    fn = lambda x, w, b: F.instance_norm(x, weight=w, bias=b, eps=1e-3)  # noqa: E731
    inputs = (leaf(x), leaf(weight), leaf(bias))
    assert gradcheck(fn, inputs, check_forward_ad=True)
    assert gradgradcheck(fn, inputs)


# ------------------------------------------------------- compile


@pytest.mark.parametrize(
    "make",
    [
        lambda: nn.GroupNorm(2, 4),
        lambda: nn.InstanceNorm1d(4, affine=True, track_running_stats=True),
    ],
    ids=["group", "instance"],
)
def test_compiled_training_step_equals_eager(make):
    rng = np.random.default_rng(4)
    batches = [T(rng.normal(size=(2, 4, 5))) for _ in range(4)]

    def run(compiled):
        cr.random.manual_seed(0)
        layer = make()
        opt = cr.optim.SGD(layer.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = cr.sum(layer(x) ** 3)
            loss.backward()
            opt.step()
            return loss

        fn = cr.compile(step) if compiled else step
        losses = [N(fn(x)).item() for x in batches]
        return losses, [N(cr.asarray(v)) for v in layer.state_dict().values()]

    eager_losses, eager_state = run(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cr.CompileWarning)
        losses, state = run(True)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-12)
    for got, expected in zip(state, eager_state):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------- parameters, reprs, bad arguments


def test_parameters_buffers_and_reprs_are_pytorchs():
    group = nn.GroupNorm(2, 4)
    assert [k for k, _ in group.named_parameters()] == ["weight", "bias"]
    assert_values(group.weight, np.ones(4))
    assert_values(group.bias, np.zeros(4))
    assert repr(group) == "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"
    assert repr(nn.GroupNorm(2, 4, affine=False)).endswith("affine=False, bias=False)")
    assert nn.GroupNorm(1, 3, bias=False).bias is None
    instance = nn.InstanceNorm2d(3, track_running_stats=True)
    assert list(instance.state_dict()) == ["running_mean", "running_var", "num_batches_tracked"]
    assert repr(nn.InstanceNorm1d(3)) == (
        "InstanceNorm1d(3, eps=1e-05, momentum=0.1, affine=False, bias=False, "
        "track_running_stats=False)"
    )
    affine = nn.InstanceNorm1d(3, affine=True)
    assert [k for k, _ in affine.named_parameters()] == ["weight", "bias"]
    assert not list(nn.InstanceNorm1d(3).parameters())


def test_instance_norm_eval_uses_the_running_statistics():
    layer = nn.InstanceNorm1d(2, track_running_stats=True, momentum=0.5)
    x = T(np.random.default_rng(5).normal(size=(3, 2, 4)))
    layer(x)
    mean, var = N(layer.running_mean), N(layer.running_var)
    layer.eval()
    expected = (N(x) - mean[:, None]) / np.sqrt(var[:, None] + 1e-5)
    assert_values(layer(x), expected)
    # untracked: eval still normalises each instance by its own statistics
    own = nn.InstanceNorm1d(2).eval()(x)
    assert_values(own, N(F.instance_norm(x)))


def test_bad_arguments_raise_pytorchs_errors():
    with pytest.raises(ValueError, match="num_channels \\(4\\) must be divisible by num_groups"):
        nn.GroupNorm(3, 4)
    with pytest.raises(RuntimeError, match="input of shape \\[2, 5, 3\\] and num_groups=2"):
        F.group_norm(T(np.zeros((2, 5, 3))), 2)
    with pytest.raises(RuntimeError, match="Expected at least 2 dimensions for input tensor"):
        F.group_norm(T(np.zeros(5)), 5)
    with pytest.raises(RuntimeError, match="weight of shape \\[4\\] and input of shape"):
        nn.GroupNorm(2, 4)(T(np.zeros((2, 6, 3))))
    with pytest.raises(ValueError, match="Expected more than 1 spatial element when training"):
        nn.InstanceNorm1d(3)(T(np.zeros((2, 3, 1))))
    with pytest.raises(ValueError, match="expected 2D or 3D input \\(got 4D input\\)"):
        nn.InstanceNorm1d(3)(T(np.zeros((2, 3, 3, 3))))
    with pytest.raises(ValueError, match="expected 3D or 4D input \\(got 2D input\\)"):
        nn.InstanceNorm2d(3)(T(np.zeros((2, 3))))
    with pytest.raises(ValueError, match="dim=1 to match num_features \\(3\\), but got: 4"):
        nn.InstanceNorm1d(3, affine=True)(T(np.zeros((2, 4, 3))))
    with pytest.warns(UserWarning, match="input's size at dim=1 does not match num_features"):
        nn.InstanceNorm1d(3)(T(np.ones((2, 4, 3))))
