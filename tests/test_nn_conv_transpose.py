"""ConvTranspose1d/2d and F.conv_transpose1d/2d against PyTorch
(fixtures/nn_conv_transpose_torch.json, made by fixtures/make_nn_families_fixtures.py):
values and the gradients of input, weight and bias; the adjoint of conv2d on drawn options;
first and second derivatives in both modes by finite differences; a compiled training step
equals the eager one; PyTorch's parameter shapes, initialisation, reprs, output_size and
errors."""

import json
import math
import pathlib
import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T, examples
from helpers import arrays, check_recorded_function, check_recorded_layer, leaf

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "nn_conv_transpose_torch.json").read_text()
)
FUNCTIONS = sorted(k for k in RECORD["functions"] if k.startswith("conv_transpose"))
LAYERS = sorted(k for k, v in RECORD["layers"].items() if v["layer"].startswith("ConvTranspose"))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functions_match_pytorch(name):
    check_recorded_function(RECORD["functions"][name])


@pytest.mark.parametrize("name", LAYERS)
def test_layers_match_pytorch(name):
    check_recorded_layer(RECORD["layers"][name])


@st.composite
def _options(draw):
    groups = draw(st.integers(1, 2))
    stride, padding = draw(st.integers(1, 3)), draw(st.integers(0, 1))
    dilation, kernel = draw(st.integers(1, 2)), draw(st.integers(1, 3))
    extra = draw(st.integers(0, stride - 1))
    x = draw(arrays((1, groups * draw(st.integers(1, 2)), draw(st.integers(1, 3)), 2)))
    weight = draw(arrays((x.shape[1], draw(st.integers(1, 2)), kernel, 1)))
    kwargs = dict(stride=(stride, 1), padding=(padding, 0), dilation=dilation, groups=groups)
    assume((x.shape[2] - 1) * stride - 2 * padding + dilation * (kernel - 1) + extra >= 0)
    return x, weight, kwargs, extra


@examples(10)
@given(_options(), st.data())
def test_conv_transpose2d_is_the_adjoint_of_conv2d(case, data):
    # <conv_transpose2d(x, w), y> = <x, conv2d(y, w)> for every y of the output's shape, with
    # the same stride, padding, dilation and groups; output_padding (below the stride) only
    # adds rows that conv2d does not read.
    x, weight, kwargs, extra = case
    h, w = x.shape[2:]
    out = F.conv_transpose2d(T(x), T(weight), output_padding=(extra, 0), **kwargs)
    (s, _), (p, _), d, k = kwargs["stride"], kwargs["padding"], kwargs["dilation"], weight.shape[2]
    assert out.shape[2:] == ((h - 1) * s - 2 * p + d * (k - 1) + extra + 1, 2)
    y = data.draw(arrays(tuple(out.shape)))
    # conv2d's weight (O, C / groups, ...) is laid out as the transposed one's (C, O / groups,
    # ...) with the roles of input and output swapped: the very same tensor.
    back = F.conv2d(T(y), T(weight), **kwargs)
    assert back.shape == x.shape
    np.testing.assert_allclose(np.sum(N(out) * y), np.sum(x * N(back)), rtol=1e-10, atol=1e-10)


def test_first_and_second_derivatives_in_both_modes():
    rng = np.random.default_rng(1)
    x, weight, bias = (
        rng.normal(size=(1, 2, 2, 2)),
        rng.normal(size=(2, 1, 2, 2)),
        rng.normal(size=2),
    )

    def fn(x, w, b):
        return F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1, groups=2)

    inputs = (leaf(x), leaf(weight), leaf(bias))
    assert gradcheck(fn, inputs, check_forward_ad=True)
    assert gradgradcheck(fn, inputs)
    x1, w1 = rng.normal(size=(1, 1, 3)), rng.normal(size=(1, 2, 2))
    fn1 = lambda x, w: F.conv_transpose1d(x, w, stride=2, dilation=2)  # noqa: E731
    assert gradcheck(fn1, (leaf(x1), leaf(w1)), check_forward_ad=True)
    assert gradgradcheck(fn1, (leaf(x1), leaf(w1)))


def test_compiled_training_step_equals_eager():
    rng = np.random.default_rng(2)
    batches = [T(rng.normal(size=(2, 2, 3, 3))) for _ in range(4)]

    def run(compiled):
        cr.random.manual_seed(0)
        layer = nn.ConvTranspose2d(2, 3, 3, stride=2, padding=1, output_padding=1)
        opt = cr.optim.SGD(layer.parameters(), lr=0.01)

        def step(x):
            opt.zero_grad()
            loss = cr.mean(layer(x) ** 2)
            loss.backward()
            opt.step()
            return loss

        fn = cr.compile(step) if compiled else step
        return [N(fn(x)).item() for x in batches], [N(p) for p in layer.parameters()]

    eager_losses, eager_params = run(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cr.CompileWarning)
        losses, params = run(True)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-12)
    for got, expected in zip(params, eager_params):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


# ------------------------------------------------------- parameters, reprs, bad arguments


def test_parameter_shapes_initialisation_and_reprs_are_pytorchs():
    cr.random.manual_seed(3)
    layer = nn.ConvTranspose2d(16, 8, 3, groups=2)
    assert layer.weight.shape == (16, 4, 3, 3) and layer.bias.shape == (8,)
    bound = 1 / math.sqrt(4 * 9)  # fan-in: out_channels / groups * kh * kw
    values = np.concatenate([N(p).ravel() for p in layer.parameters()])
    assert np.all(np.abs(values) <= bound) and np.abs(values).max() > 0.9 * bound
    assert repr(nn.ConvTranspose2d(4, 2, 3)) == (
        "ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(1, 1))"
    )
    assert repr(
        nn.ConvTranspose2d(
            4, 2, (3, 2), stride=2, padding=1, output_padding=1, groups=2, bias=False, dilation=2
        )
    ) == (
        "ConvTranspose2d(4, 2, kernel_size=(3, 2), stride=(2, 2), padding=(1, 1), "
        "dilation=(2, 2), output_padding=(1, 1), groups=2, bias=False)"
    )
    assert repr(nn.ConvTranspose1d(4, 2, 3, padding=1)) == (
        "ConvTranspose1d(4, 2, kernel_size=(3,), stride=(1,), padding=(1,))"
    )


def test_output_size_picks_the_output_padding():
    layer = nn.ConvTranspose2d(1, 1, 3, stride=2)
    x = T(np.ones((1, 1, 5, 5)))
    assert layer(x).shape == (1, 1, 11, 11)
    assert layer(x, output_size=(12, 11)).shape == (1, 1, 12, 11)
    assert layer(x, output_size=(1, 1, 12, 12)).shape == (1, 1, 12, 12)
    with pytest.raises(ValueError, match="valid sizes range from \\[11, 11\\] to \\[12, 12\\]"):
        layer(x, output_size=(13, 13))
    with pytest.raises(ValueError, match="output_size must have 2 or 4 elements \\(got 1\\)"):
        layer(x, output_size=(12,))


def test_bad_arguments_raise_pytorchs_errors():
    w = T(np.zeros((4, 2, 3, 3)))
    with pytest.raises(RuntimeError, match="expected input\\[1, 3, 5, 5\\] to have 4 channels"):
        F.conv_transpose2d(T(np.zeros((1, 3, 5, 5))), w)
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\)"):
        F.conv_transpose2d(T(np.zeros((5, 5))), w)
    with pytest.raises(RuntimeError, match="output padding must be smaller than either stride"):
        F.conv_transpose2d(T(np.zeros((1, 4, 5, 5))), w, output_padding=1)
    with pytest.raises(RuntimeError, match="Output size is too small"):
        F.conv_transpose2d(T(np.zeros((1, 4, 1, 1))), w, padding=2)
    with pytest.raises(RuntimeError, match="expected weight to be divisible by 3 at dimension 0"):
        F.conv_transpose2d(T(np.zeros((1, 4, 5, 5))), w, groups=3)
    with pytest.raises(RuntimeError, match="non-positive stride is not supported"):
        F.conv_transpose2d(T(np.zeros((1, 4, 5, 5))), w, stride=0)
    with pytest.raises(RuntimeError, match="negative padding is not supported"):
        F.conv_transpose2d(T(np.zeros((1, 4, 5, 5))), w, padding=-1)
    with pytest.raises(RuntimeError, match="expected bias to be 1-dimensional with 2 elements"):
        F.conv_transpose2d(T(np.zeros((1, 4, 5, 5))), w, bias=T(np.zeros(3)))
    with pytest.raises(RuntimeError, match="Expected 2D \\(unbatched\\) or 3D \\(batched\\)"):
        F.conv_transpose1d(T(np.zeros((4, 5, 5, 5))), T(np.zeros((4, 2, 3))))
    with pytest.raises(ValueError, match='Only "zeros" padding mode is supported'):
        nn.ConvTranspose2d(4, 2, 3, padding_mode="reflect")
    with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
        nn.ConvTranspose2d(3, 2, 3, groups=2)
