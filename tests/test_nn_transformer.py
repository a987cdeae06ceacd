"""nn.TransformerEncoderLayer and nn.TransformerEncoder: outputs and gradients equal to
PyTorch's from the same weights (fixtures/transformer_torch.json, made by
fixtures/make_transformer_fixtures.py), second derivatives by finite differences, structure
and errors as PyTorch's."""

import json
import pathlib

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "transformer_torch.json").read_text()
)
S, BATCH, E, H, FF = RECORD["sizes"]


def build(case):
    layer = nn.TransformerEncoderLayer(E, H, dim_feedforward=FF, **case["layer"])
    if case["encoder"] is None:
        return layer
    layers, with_norm = case["encoder"]
    return nn.TransformerEncoder(layer, layers, norm=nn.LayerNorm(E) if with_norm else None)


def masks(case):
    return {k: T(v) if isinstance(v, list) else v for k, v in case["masks"].items()}


@pytest.mark.parametrize("name", sorted(RECORD["cases"]))
def test_output_and_gradients_match_pytorch(name):
    case = RECORD["cases"][name]
    module = build(case)
    module.load_state_dict({k: np.asarray(v) for k, v in case["state"].items()})
    module.train(case["train"])
    x = T(case["input"], requires_grad=True)
    out = module(x, **masks(case))
    np.testing.assert_allclose(N(out), case["output"], rtol=1e-10, atol=1e-12)
    cr.sum(out * T(case["weights"])).backward()
    np.testing.assert_allclose(N(x.grad), case["input_grad"], rtol=1e-9, atol=1e-11)
    grads = {k: N(p.grad) for k, p in module.named_parameters()}
    assert grads.keys() == case["grads"].keys()
    for k, g in grads.items():
        np.testing.assert_allclose(g, case["grads"][k], rtol=1e-9, atol=1e-11, err_msg=k)


def test_state_dict_names_are_pytorchs():
    case = RECORD["cases"]["encoder_with_norm"]
    assert build(case).state_dict().keys() == case["state"].keys()


@pytest.mark.parametrize("norm_first", [False, True])
def test_layer_second_derivatives_by_finite_differences(norm_first):
    cr.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, norm_first=norm_first)
    mask = T(np.triu(np.ones((3, 3), dtype=bool), k=1))
    x = T(np.random.default_rng(1).normal(size=(3, 2, 4)), requires_grad=True)
    assert gradcheck(lambda v: layer(v, src_mask=mask), (x,))
    assert gradgradcheck(lambda v: layer(v, src_mask=mask), (x,))


def test_unbatched_input_is_the_batch_of_one():
    cr.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0)
    x = T(np.random.default_rng(2).normal(size=(3, 4)))
    np.testing.assert_allclose(N(layer(x)), N(layer(x[:, None]))[:, 0], rtol=1e-12)


def test_encoder_layers_are_independent_copies_of_the_layer():
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6)
    encoder = nn.TransformerEncoder(layer, 2)
    first, second = encoder.layers
    assert first is not layer and first.linear1.weight is not second.linear1.weight
    np.testing.assert_array_equal(N(first.linear1.weight), N(layer.linear1.weight))
    assert len(list(encoder.parameters())) == 2 * len(list(layer.parameters()))


def test_dropout_acts_in_training_mode_only():
    cr.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 1, dim_feedforward=6, dropout=0.5)
    x = T(np.random.default_rng(3).normal(size=(3, 2, 4)))
    layer.eval()
    np.testing.assert_array_equal(N(layer(x)), N(layer(x)))
    layer.train()
    assert not np.allclose(N(layer(x)), N(layer(x)))


def test_activation_takes_a_callable():
    cr.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0, activation=cr.tanh)
    assert layer.activation is cr.tanh
    assert layer(T(np.ones((2, 1, 4)))).shape == (2, 1, 4)


def test_new_layers_take_the_default_dtype():
    cr.set_default_dtype(cr.float32)
    try:
        layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6)
    finally:
        cr.set_default_dtype(cr.float64)
    assert {p.dtype for p in layer.parameters()} == {cr.float32}


def test_bad_arguments_raise_pytorchs_errors():
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerEncoderLayer(4, 2, activation="tanh")
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        layer(T(np.ones((2, 1, 4))), is_causal=True)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        nn.TransformerEncoder(layer, 1)(T(np.ones((2, 1, 4))), is_causal=True)
