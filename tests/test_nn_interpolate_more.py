"""F.interpolate's modes 'area', 'bicubic' and 'lanczos' and its antialias option
(bilinear, bicubic), and nn.Upsample in modes 'area' and 'bicubic', against PyTorch
(fixtures/nn_interpolate_more_torch.json, made by fixtures/make_nn_interpolate_more_fixtures.py):
values and gradients; first and second derivatives in both modes by finite differences;
what every resampling keeps (constants, and an output of the input's size); PyTorch's
errors (compiled against eager: tests/test_nn_resample.py)."""

import json
import pathlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T, examples
from helpers import (
    assert_float32_in_and_out,
    assert_values,
    check_recorded_function,
    check_recorded_layer,
    leaf,
)

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "nn_interpolate_more_torch.json").read_text()
)


@pytest.mark.parametrize("name", sorted(RECORD["functions"]))
def test_values_and_gradients_match_pytorch(name):
    check_recorded_function(RECORD["functions"][name])


@pytest.mark.parametrize("name", sorted(RECORD["layers"]))
def test_upsample_layers_match_pytorch(name):
    check_recorded_layer(RECORD["layers"][name])


# ------------------------------------------------------- derivatives by finite differences


@pytest.mark.parametrize(
    ("shape", "kwargs"),
    [
        ((1, 1, 4), {"size": 3, "mode": "area"}),
        ((1, 1, 2, 3), {"scale_factor": 1.5, "mode": "area"}),
        ((1, 1, 2, 2, 3), {"size": (1, 3, 2), "mode": "area"}),
        ((1, 1, 2, 3), {"size": (3, 2), "mode": "bicubic"}),
        ((1, 1, 3, 2), {"scale_factor": 1.5, "mode": "bicubic", "align_corners": True}),
        ((1, 1, 4, 3), {"size": (2, 2), "mode": "bilinear", "antialias": True}),
        ((1, 1, 3, 4), {"scale_factor": 0.6, "mode": "bicubic", "antialias": True}),
        ((1, 1, 5, 2), {"size": (2, 3), "mode": "lanczos", "antialias": True}),
    ],
)
def test_first_and_second_derivatives_in_both_modes(shape, kwargs):
    a = np.random.default_rng(3).normal(size=shape)
    fn = lambda x: F.interpolate(x, **kwargs)  # noqa: E731
    assert gradcheck(fn, (leaf(a),), check_forward_ad=True)
    assert gradgradcheck(fn, (leaf(a),))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"size": (3, 5), "mode": "bicubic"},
        {"size": (2, 3), "mode": "area"},
        {"scale_factor": 0.5, "mode": "bilinear", "antialias": True},
    ],
)
def test_float32_stays_float32(kwargs):
    assert_float32_in_and_out(lambda x: F.interpolate(x, **kwargs), np.ones((1, 2, 4, 4)))


# ------------------------------------------------------- what every resampling keeps

_KEEPING = [
    {"mode": "area"},
    {"mode": "bicubic"},
    {"mode": "bicubic", "align_corners": True},
    {"mode": "bilinear", "antialias": True},
    {"mode": "bicubic", "antialias": True},
    {"mode": "bicubic", "antialias": True, "align_corners": True},
    {"mode": "lanczos", "antialias": True},
]


@examples(10)
@given(
    st.sampled_from(_KEEPING),
    st.tuples(st.integers(1, 5), st.integers(1, 5)),
    st.tuples(st.integers(1, 6), st.integers(1, 6)),
    st.floats(-3, 3),
)
def test_a_constant_image_stays_constant(kwargs, spatial, size, c):
    # Every output is a weighted mean of inputs: the weights sum to 1 (antialias and
    # lanczos normalise them; the cubic kernel's 4 taps sum to 1 wherever the source lies).
    out = F.interpolate(T(np.full((1, 2, *spatial), c)), size=size, **kwargs)
    assert_values(out, np.full((1, 2, *size), c), rtol=1e-13, atol=1e-13)


@examples(6)
@given(st.sampled_from([{"mode": "area"}, {"mode": "bicubic"}]), st.integers(1, 5))
def test_resampling_to_the_same_size_is_the_identity(kwargs, n):
    a = np.random.default_rng(n).normal(size=(1, 2, n, n + 1))
    assert_values(F.interpolate(T(a), size=(n, n + 1), **kwargs), a, rtol=1e-14, atol=1e-15)


def test_area_averages_whole_blocks_when_the_size_divides():
    a = np.arange(24.0).reshape(1, 1, 4, 6)
    blocks = a.reshape(1, 1, 2, 2, 3, 2).mean(axis=(3, 5))
    assert_values(F.interpolate(T(a), scale_factor=(0.5, 0.5), mode="area"), blocks)


def test_antialias_upscaling_is_linear_interpolation_inside():
    # Both weigh the two nearest inputs by the triangle of half-width 1 (antialias cuts and
    # renormalises it at the edges, where plain bilinear clamps the source position).
    a = np.random.default_rng(4).normal(size=(1, 1, 3, 4))
    aa = N(F.interpolate(T(a), size=(6, 8), mode="bilinear", antialias=True))
    plain = N(F.interpolate(T(a), size=(6, 8), mode="bilinear"))
    np.testing.assert_allclose(aa[..., 1:-1, 1:-1], plain[..., 1:-1, 1:-1], rtol=1e-13)


def test_antialias_downscaling_averages_every_input_an_output_covers():
    # 8 inputs to 2: output 0 is centred at input coordinate 2 (pixel centres at j + 0.5)
    # and weighs input j by the triangle stretched 4 times, 1 - |j + 0.5 - 2| / 4, normalised;
    # plain bilinear mixes inputs 1 and 2 only.
    row = T(np.arange(8.0).reshape(1, 1, 1, 8))
    w = np.maximum(1 - np.abs(np.arange(8) + 0.5 - 2) / 4, 0)
    first = (w * np.arange(8)).sum() / w.sum()
    out = F.interpolate(row, size=(1, 2), mode="bilinear", antialias=True)
    assert_values(out, [[[[first, 7 - first]]]])
    assert_values(F.interpolate(row, size=(1, 2), mode="bilinear"), [[[[1.5, 5.5]]]])


# ------------------------------------------------------- reprs, bad arguments


def test_upsample_reprs_are_pytorchs():
    assert repr(nn.Upsample(scale_factor=0.5, mode="area")) == (
        "Upsample(scale_factor=0.5, mode='area')"
    )
    assert repr(nn.Upsample(size=(3, 4), mode="bicubic", align_corners=True)) == (
        "Upsample(size=(3, 4), mode='bicubic')"
    )


def test_bad_arguments_raise_pytorchs_errors():
    x = T(np.zeros((1, 2, 3, 3)))
    with pytest.raises(ValueError, match="align_corners option can only be set with the interp"):
        F.interpolate(x, size=2, mode="area", align_corners=False)
    with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear, bicubic"):
        F.interpolate(x, size=2, mode="area", antialias=True)
    with pytest.raises(ValueError, match="Anti-alias option is restricted to bilinear, bicubic"):
        F.interpolate(T(np.zeros((1, 2, 3, 3, 3))), size=2, mode="trilinear", antialias=True)
    for shape in [(1, 2, 3), (1, 2, 3, 3, 3)]:
        with pytest.raises(NotImplementedError, match="\\(got bicubic\\)"):
            F.interpolate(T(np.zeros(shape)), size=2, mode="bicubic")
    with pytest.raises(RuntimeError, match="output \\(H: 0, W: 2\\)"):
        F.interpolate(x, size=(0, 2), mode="bicubic")
    with pytest.raises(RuntimeError, match="output \\(H: 0, W: 0\\)"):
        F.interpolate(x, scale_factor=0.1, mode="bicubic", antialias=True)
    with pytest.raises(
        RuntimeError,
        match="adaptive_avg_pool2d\\(\\): Expected input to have non-zero size for non-batch "
        "dimensions, but input has sizes \\[1, 2, 1, 0\\] with dimension 3 being empty",
    ):
        F.interpolate(T(np.zeros((1, 2, 0))), size=2, mode="area")
    with pytest.raises(RuntimeError, match="sizes \\[1, 2, 3, 0, 3\\] with dimension 3 being"):
        F.interpolate(T(np.zeros((1, 2, 3, 0, 3))), size=2, mode="area")
    with pytest.raises(RuntimeError, match="sizes \\[2, 0, 3\\] with dimension 1 being empty"):
        F.adaptive_avg_pool2d(T(np.zeros((2, 0, 3))), 2)


def test_area_to_an_empty_size_is_empty_as_in_pytorch():
    # PyTorch's area mode is adaptive pooling, which allows an output size of 0.
    assert F.interpolate(T(np.ones((2, 3, 7))), scale_factor=0.1, mode="area").shape == (2, 3, 0)
    assert F.interpolate(T(np.ones((1, 1, 3, 4))), size=(2, 0), mode="area").shape == (1, 1, 2, 0)
