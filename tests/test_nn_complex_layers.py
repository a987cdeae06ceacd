"""Layers built with a complex dtype, as PyTorch's: every constructor that takes `dtype`
accepts complex64 and complex128 (PyTorch's constructors all do), its parameters drawn as
PyTorch's complex initialisers draw them (real and imaginary parts each uniform in the real
bound, or normal of std / sqrt(2)); the layers whose complex forward and backward PyTorch
runs give its values and gradients (recorded by fixtures/make_nn_complex_fixtures.py into
nn_complex_torch.json), checked by finite differences to second order in both modes."""

import json
import math
import pathlib

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.autograd import grad, gradcheck, gradgradcheck
from conftest import T

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "nn_complex_torch.json").read_text()
)

# Every constructor with a `dtype` argument, as PyTorch 2.13's accept a complex one.
CONSTRUCTORS = {
    "Linear": lambda d: nn.Linear(3, 2, dtype=d),
    "Bilinear": lambda d: nn.Bilinear(3, 2, 4, dtype=d),
    "Conv1d": lambda d: nn.Conv1d(2, 3, 2, dtype=d),
    "Conv2d": lambda d: nn.Conv2d(2, 3, 2, dtype=d),
    "Conv3d": lambda d: nn.Conv3d(2, 3, 2, dtype=d),
    "ConvTranspose1d": lambda d: nn.ConvTranspose1d(2, 3, 2, dtype=d),
    "ConvTranspose2d": lambda d: nn.ConvTranspose2d(2, 3, 2, dtype=d),
    "Embedding": lambda d: nn.Embedding(5, 3, dtype=d),
    "EmbeddingBag": lambda d: nn.EmbeddingBag(5, 3, dtype=d),
    "LayerNorm": lambda d: nn.LayerNorm(3, dtype=d),
    "GroupNorm": lambda d: nn.GroupNorm(1, 2, dtype=d),
    "BatchNorm1d": lambda d: nn.BatchNorm1d(2, dtype=d),
    "BatchNorm2d": lambda d: nn.BatchNorm2d(2, dtype=d),
    "InstanceNorm1d": lambda d: nn.InstanceNorm1d(2, affine=True, dtype=d),
    "RMSNorm": lambda d: nn.RMSNorm(3, dtype=d),
    "RNN": lambda d: nn.RNN(3, 2, dtype=d),
    "LSTM": lambda d: nn.LSTM(3, 2, dtype=d),
    "GRU": lambda d: nn.GRU(3, 2, dtype=d),
    "RNNCell": lambda d: nn.RNNCell(3, 2, dtype=d),
    "LSTMCell": lambda d: nn.LSTMCell(3, 2, dtype=d),
    "GRUCell": lambda d: nn.GRUCell(3, 2, dtype=d),
    "MultiheadAttention": lambda d: nn.MultiheadAttention(4, 2, dtype=d),
    "PReLU": lambda d: nn.PReLU(dtype=d),
    "TransformerEncoderLayer": lambda d: nn.TransformerEncoderLayer(4, 2, 8, dtype=d),
}


@pytest.mark.parametrize("dtype", [cr.complex64, cr.complex128], ids=["c64", "c128"])
@pytest.mark.parametrize("name", CONSTRUCTORS)
def test_every_constructor_makes_complex_parameters(name, dtype):
    layer = CONSTRUCTORS[name](dtype)
    params = dict(layer.named_parameters())
    assert params and all(p.dtype == dtype for p in params.values())


def test_complex_initialisation_is_pytorchs():
    cr.manual_seed(0)
    weight = nn.Linear(200, 300, dtype=cr.complex64).weight
    parts = [np.asarray(cr.real(weight).numpy()), np.asarray(cr.imag(weight).numpy())]
    bound = 1 / math.sqrt(200)  # kaiming_uniform_(a=sqrt(5)): U(-bound, bound), each part
    for part in parts:
        assert part.dtype == np.float32
        assert -bound <= part.min() < -0.95 * bound and 0.95 * bound < part.max() <= bound
    embedding = nn.Embedding(300, 200, dtype=cr.complex128).weight  # normal_: std 1 in all
    for part in (cr.real(embedding), cr.imag(embedding)):
        assert abs(float(cr.std(part)) - math.sqrt(0.5)) < 0.01
        assert abs(float(cr.mean(part))) < 0.01
    t = nn.init.normal_(cr.zeros((300, 200), dtype=cr.complex64), 2.0, 3.0)
    for part in (cr.real(t), cr.imag(t)):  # PyTorch's: mean 2 and std 3 / sqrt(2) each
        assert abs(float(cr.mean(part)) - 2.0) < 0.05
        assert abs(float(cr.std(part)) - 3.0 / math.sqrt(2.0)) < 0.05
    t = nn.init.uniform_(cr.zeros((1000,), dtype=cr.complex64), -1.0, 3.0)
    for part in (cr.real(t), cr.imag(t)):
        assert -1.0 <= float(cr.min(part)) < -0.9 and 2.9 < float(cr.max(part)) < 3.0


def test_trunc_normal_refuses_complex_tensors_as_pytorch():
    with pytest.raises(NotImplementedError, match="\"lt_cpu\" not implemented for 'ComplexFloat'"):
        nn.init.trunc_normal_(cr.zeros((3,), dtype=cr.complex64))


def _complex(parts):
    real, imag = (np.asarray(p, dtype=np.float64) for p in parts)
    return real + 1j * imag


def _layer(name, spec):
    layer = CONSTRUCTORS_RECORDED[name]()
    with cr.no_grad():
        for key, value in spec["params"].items():
            dict(layer.named_parameters())[key].copy_(T(_complex(value)))
    return layer


CONSTRUCTORS_RECORDED = {
    "Linear": lambda: nn.Linear(3, 2, dtype=cr.complex128),
    "Conv1d": lambda: nn.Conv1d(2, 2, 2, dtype=cr.complex128),
    "Conv2d": lambda: nn.Conv2d(1, 2, 2, padding=1, dtype=cr.complex128),
    "Conv3d": lambda: nn.Conv3d(1, 1, 2, dtype=cr.complex128),
    "ConvTranspose1d": lambda: nn.ConvTranspose1d(2, 1, 2, stride=2, dtype=cr.complex128),
    "ConvTranspose2d": lambda: nn.ConvTranspose2d(1, 1, 2, dtype=cr.complex128),
    "RNN": lambda: nn.RNN(2, 2, dtype=cr.complex128),
    "LSTM": lambda: nn.LSTM(2, 1, dtype=cr.complex128),
    "GRU": lambda: nn.GRU(2, 1, dtype=cr.complex128),
    "RNNCell": lambda: nn.RNNCell(2, 2, dtype=cr.complex128),
    "LSTMCell": lambda: nn.LSTMCell(2, 1, dtype=cr.complex128),
    "GRUCell": lambda: nn.GRUCell(2, 1, dtype=cr.complex128),
    "RMSNorm": lambda: nn.RMSNorm(3, dtype=cr.complex128),
}


def _first(y):
    return y[0] if isinstance(y, tuple) else y


def test_the_record_covers_the_layers():
    assert set(RECORD["layers"]) == set(CONSTRUCTORS_RECORDED)


@pytest.mark.parametrize("name", sorted(CONSTRUCTORS_RECORDED))
def test_complex_forward_and_backward_are_pytorchs(name):
    spec = RECORD["layers"][name]
    layer = _layer(name, spec)
    x = T(_complex(spec["input"]), requires_grad=True)
    y = _first(layer(x))
    np.testing.assert_allclose(y.numpy(), _complex(spec["output"]), rtol=1e-10, atol=1e-12)
    params = dict(layer.named_parameters())
    wrt = [x, *params.values()]
    found = grad(cr.sum(cr.real(y * cr.conj(y))), wrt)
    for key, g in zip(["input", *params], found):
        np.testing.assert_allclose(g.numpy(), _complex(spec["grads"][key]), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["Linear", "Conv1d", "GRUCell", "RMSNorm"])
def test_complex_layers_by_finite_differences_to_second_order(name):
    spec = RECORD["layers"][name]
    layer = _layer(name, spec)
    x = T(_complex(spec["input"]), requires_grad=True)

    def f(x):
        return _first(layer(x))

    assert gradcheck(f, (x,), check_forward_ad=True)
    assert gradgradcheck(f, (x,), check_fwd_over_rev=True)
