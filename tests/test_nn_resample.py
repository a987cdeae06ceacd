"""F.pad, F.interpolate and the Upsample layers against PyTorch (fixtures/nn_resample_torch.json,
made by fixtures/make_nn_families_fixtures.py): values and gradients; first and second
derivatives in both modes by finite differences, on drawn shapes and pads; compiled equals
eager; PyTorch's errors for bad arguments."""

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
    (pathlib.Path(__file__).parent / "fixtures" / "nn_resample_torch.json").read_text()
)
FUNCTIONS = sorted(
    k for k, v in RECORD["functions"].items() if v["function"] in ("pad", "interpolate")
)
LAYERS = sorted(k for k, v in RECORD["layers"].items() if v["layer"].startswith("Upsampl"))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_values_and_gradients_match_pytorch(name):
    check_recorded_function(RECORD["functions"][name])


@pytest.mark.parametrize("name", LAYERS)
def test_upsample_layers_match_pytorch(name):
    check_recorded_layer(RECORD["layers"][name])


# ------------------------------------------------------- derivatives by finite differences


@st.composite
def _padded(draw):
    mode = draw(st.sampled_from(["constant", "reflect", "replicate", "circular"]))
    n = draw(st.integers(1, 2))
    shape = tuple(draw(st.integers(3, 4)) for _ in range(n + 1))
    high = {"reflect": 1, "circular": 2}.get(mode, 2)
    pad = tuple(draw(st.integers(-1, high)) for _ in range(2 * n))  # -1 crops
    return draw(arrays(shape)), pad, mode


@examples(8)
@given(_padded())
def test_pad_first_and_second_derivatives_in_both_modes(case):
    a, pad, mode = case
    fn = lambda x: F.pad(x, pad, mode)  # noqa: E731
    assert gradcheck(fn, (leaf(a),), check_forward_ad=True)
    assert gradgradcheck(fn, (leaf(a),))


@pytest.mark.parametrize(
    ("shape", "kwargs"),
    [
        ((1, 1, 3), {"size": 5, "mode": "nearest"}),
        ((1, 1, 3), {"scale_factor": 1.5, "mode": "linear"}),
        ((1, 1, 2, 3), {"size": (3, 2), "mode": "bilinear", "align_corners": True}),
        ((1, 1, 3, 2), {"scale_factor": 1.5, "mode": "bilinear"}),
        ((1, 1, 2, 2, 2), {"size": 3, "mode": "trilinear"}),
    ],
)
def test_interpolate_first_and_second_derivatives_in_both_modes(shape, kwargs):
    a = np.random.default_rng(1).normal(size=shape)
    fn = lambda x: F.interpolate(x, **kwargs)  # noqa: E731
    assert gradcheck(fn, (leaf(a),), check_forward_ad=True)
    assert gradgradcheck(fn, (leaf(a),))


def test_nearest_gradient_is_its_forwards_derivative_where_pytorchs_is_not():
    # On 3-D (and 5-D) input with a scale_factor whose output has the input's length (or
    # twice it), PyTorch's forward copies floor(i / scale) but its backward routes position
    # i's gradient to i (i // 2): here the forward copies 0, 0, 1 and PyTorch's gradient is
    # [1, 2, 3], not the derivative [3, 3, 0]. chainrule keeps the forward and its derivative.
    x = leaf(np.arange(3.0).reshape(1, 1, 3))
    out = F.interpolate(x, scale_factor=1.1)
    assert_values(out, [[[0.0, 0.0, 1.0]]])
    cr.sum(out * T([[[1.0, 2.0, 3.0]]])).backward()
    assert_values(x.grad, [[[3.0, 3.0, 0.0]]])


# ------------------------------------------------------- compile


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: F.pad(x, (1, 2, 2, 1), mode="reflect"),
        lambda x: F.pad(x, (1, -1, 0, 2), value=0.5),
        lambda x: F.interpolate(x, scale_factor=2, mode="bilinear"),
        nn.Upsample(size=(4, 5)),
        lambda x: F.interpolate(x, scale_factor=1.5, mode="bicubic"),
        lambda x: F.interpolate(x, size=(2, 3), mode="bicubic", antialias=True),
        nn.Upsample(scale_factor=0.6, mode="area"),
    ],
    ids=["reflect", "constant", "bilinear", "upsample", "bicubic", "antialias", "area"],
)
def test_compiled_equals_eager(fn):
    def step(x):
        out = fn(x)
        (g,) = cr.autograd.grad(cr.sum(out * out), [x])
        return out, g

    compiled = cr.compile(step)
    rng = np.random.default_rng(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cr.CompileWarning)
        for _ in range(3):
            x = leaf(rng.normal(size=(1, 2, 3, 4)))
            for got, want in zip(compiled(x), step(x)):
                assert_values(got, N(want), rtol=1e-13, atol=1e-15)
    assert compiled.traces == 1


# ------------------------------------------------------- reprs, bad arguments


def test_upsample_reprs_are_pytorchs():
    assert repr(nn.Upsample(scale_factor=2)) == "Upsample(scale_factor=2.0, mode='nearest')"
    assert (
        repr(nn.Upsample(size=(3, 4), mode="bilinear", align_corners=True))
        == "Upsample(size=(3, 4), mode='bilinear')"
    )
    assert (
        repr(nn.Upsample(scale_factor=(2, 3)))
        == "Upsample(scale_factor=(2.0, 3.0), mode='nearest')"
    )
    assert nn.UpsamplingBilinear2d(scale_factor=2).align_corners is True


def test_bad_pads_raise_pytorchs_errors():
    x = T(np.zeros((1, 2, 3)))
    with pytest.raises(RuntimeError, match="Padding length must be divisible by 2"):
        F.pad(x, (1,))
    with pytest.raises(RuntimeError, match="padding length 8 and input of dimension 3"):
        F.pad(x, (1,) * 8)
    with pytest.raises(RuntimeError, match=r"padding \(3, 3\) at dimension 2 of input \[1, 2, 3\]"):
        F.pad(x, (3, 3), mode="reflect")
    with pytest.raises(RuntimeError, match="wrapping around more than once"):
        F.pad(x, (4, 4), mode="circular")
    with pytest.raises(NotImplementedError, match="Padding size 6 is not supported for 3D input"):
        F.pad(x, (1,) * 6, mode="reflect")
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode foo"):
        F.pad(x, (1, 1), mode="foo")
    with pytest.raises(RuntimeError, match='Padding mode "replicate" doesn\'t take in value'):
        F.pad(x, (1, 1), mode="replicate", value=2.0)
    with pytest.raises(RuntimeError, match="leaves a negative size"):
        F.pad(x, (-2, -2))
    with pytest.raises(RuntimeError, match=r"input \(W: 3\) is too small. Calculated output W: 0"):
        F.pad(x, (-2, -1), mode="reflect")
    with pytest.raises(RuntimeError, match=r"input \(H: 2, W: 3\) is too small. .* H: 0 W: 0"):
        F.pad(T(np.zeros((1, 2, 3))), (-2, -1, -1, -1), mode="replicate")
    with pytest.raises(RuntimeError, match="resulting in an empty dimension"):
        F.pad(x, (-2, -2), mode="circular")
    with pytest.raises(RuntimeError, match="wrapping around more than once"):
        F.pad(x, (-2, 2), mode="circular")
    with pytest.raises(
        RuntimeError, match="other non-zero dimensions for input, but got: \\[2, 0\\]"
    ):
        F.pad(T(np.zeros((2, 0))), (1, 1), mode="replicate")


def test_bad_interpolations_raise_pytorchs_errors():
    x = T(np.zeros((1, 2, 3, 3)))
    with pytest.raises(ValueError, match="only one of size or scale_factor should be defined"):
        F.interpolate(x, size=2, scale_factor=2)
    with pytest.raises(ValueError, match="either size or scale_factor should be defined"):
        F.interpolate(x)
    with pytest.raises(ValueError, match="Input and output must have the same number of spatial"):
        F.interpolate(x, size=(2, 2, 2))
    with pytest.raises(ValueError, match="and scale_factor of shape \\(2, 2, 2\\)"):
        F.interpolate(x, scale_factor=(2, 2, 2))
    with pytest.raises(NotImplementedError, match="Got 3D input, but bilinear mode needs 4D"):
        F.interpolate(T(np.zeros((1, 2, 3))), size=4, mode="bilinear")
    with pytest.raises(NotImplementedError, match="Only 3D, 4D and 5D input Tensors supported"):
        F.interpolate(x, size=4, mode="foo")
    with pytest.raises(NotImplementedError, match="got 2D"):
        F.interpolate(T(np.zeros((2, 3))), size=4)
    with pytest.raises(ValueError, match="align_corners option can only be set with the interp"):
        F.interpolate(x, size=4, align_corners=True)
    with pytest.raises(RuntimeError, match="output \\(H: 0, W: 0\\)"):
        F.interpolate(x, scale_factor=0.1)
    with pytest.raises(ValueError, match="recompute_scale_factor is not meaningful"):
        F.interpolate(x, size=4, recompute_scale_factor=True)
    with pytest.raises(ValueError, match="Anti-alias option is restricted"):
        F.interpolate(x, size=4, antialias=True)
    with pytest.raises(NotImplementedError, match="got 3D\\) for the modes.*\\(got bicubic"):
        F.interpolate(T(np.zeros((1, 2, 3))), size=4, mode="bicubic")
    with pytest.raises(ValueError, match="Lanczos mode requires antialias=True"):
        F.interpolate(x, size=4, mode="lanczos")
    with pytest.raises(ValueError, match="Lanczos mode does not support align_corners=True"):
        F.interpolate(x, size=4, mode="lanczos", align_corners=True, antialias=True)
