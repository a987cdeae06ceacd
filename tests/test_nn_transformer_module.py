"""nn.Transformer (an encoder and a decoder with their final norms), which the ports of
word_language_model's TransformerModel and language_translation's Translator needed: the
output and the gradients of the inputs and of every parameter against PyTorch's, post-norm
with padding masks and batch-first pre-norm with gelu (fixtures/ports_gaps_torch.json,
recorded by fixtures/make_ports_gaps_fixtures.py); generate_square_subsequent_mask;
PyTorch's errors; second derivatives by finite differences."""

import json
import pathlib

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T
from helpers import assert_values

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "ports_gaps_torch.json").read_text()
)["transformer"]


@pytest.mark.parametrize("name", RECORD)
def test_transformer_matches_pytorch(name):
    case = RECORD[name]
    module = nn.Transformer(**case["kwargs"])
    assert list(module.state_dict()) == list(case["state_dict"])
    module.load_state_dict({k: np.asarray(v) for k, v in case["state_dict"].items()})
    src, tgt = T(case["src"], requires_grad=True), T(case["tgt"], requires_grad=True)
    length = tgt.shape[1] if case["kwargs"].get("batch_first") else tgt.shape[0]
    call = {"tgt_mask": nn.Transformer.generate_square_subsequent_mask(length)}
    if case["padding"] is not None:
        call["src_key_padding_mask"] = T(np.asarray(case["padding"]))
        call["memory_key_padding_mask"] = T(np.asarray(case["padding"]))
    out = module(src, tgt, **call)
    assert_values(out, np.asarray(case["output"]), rtol=1e-11, atol=1e-13)
    cr.sum(out * T(case["weights"])).backward()
    assert_values(src.grad, np.asarray(case["src_grad"]), rtol=1e-10, atol=1e-12)
    assert_values(tgt.grad, np.asarray(case["tgt_grad"]), rtol=1e-10, atol=1e-12)
    grads = {k: p.grad for k, p in module.named_parameters()}
    assert list(grads) == list(case["parameter_grads"])
    for k, expected in case["parameter_grads"].items():
        assert_values(grads[k], np.asarray(expected), rtol=1e-10, atol=1e-12)


def test_square_subsequent_mask_is_zero_up_to_the_diagonal_and_minus_inf_above():
    mask = N(nn.Transformer.generate_square_subsequent_mask(4))
    np.testing.assert_array_equal(mask, np.triu(np.full((4, 4), -np.inf), 1))
    assert nn.Transformer.generate_square_subsequent_mask(2, dtype=cr.float32).dtype == cr.float32


def test_parameters_of_two_or_more_axes_start_xavier_uniform_and_norms_at_one():
    cr.manual_seed(0)
    module = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=1, num_decoder_layers=1)
    w = N(module.encoder.layers[0].linear1.weight)  # 2048 x 8: bound sqrt(6 / (2048 + 8))
    bound = np.sqrt(6 / (2048 + 8))
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound
    assert_values(module.encoder.norm.weight, np.ones(8))
    assert_values(module.decoder.norm.bias, np.zeros(8))


def test_custom_encoder_and_bad_inputs_raise_pytorchs_errors():
    custom = nn.Identity()
    module = nn.Transformer(8, 2, 1, 1, 12, 0.0, custom_encoder=custom)
    assert module.encoder is custom
    x = T(np.zeros((3, 2, 8)))
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        module(x, T(np.zeros((3, 1, 8))))
    with pytest.raises(RuntimeError, match="the feature number of src and tgt must be equal"):
        module(x, T(np.zeros((3, 2, 4))))


def test_transformer_second_derivatives_by_finite_differences():
    cr.manual_seed(1)
    module = nn.Transformer(4, 2, 1, 1, 6, 0.0).double()
    tgt = T(np.random.default_rng(2).normal(size=(2, 1, 4)))
    mask = nn.Transformer.generate_square_subsequent_mask(2)

    def fn(src):
        return module(src, tgt, tgt_mask=mask)

    src = T(np.random.default_rng(3).normal(size=(3, 1, 4)), requires_grad=True)
    assert gradcheck(fn, (src,))
    assert gradgradcheck(fn, (src,))
