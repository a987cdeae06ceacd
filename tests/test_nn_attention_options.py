"""MultiheadAttention's kdim / vdim, add_bias_kv and add_zero_attn, TransformerDecoderLayer and
TransformerDecoder against PyTorch (fixtures/nn_attention_torch.json, made by
fixtures/make_nn_families_fixtures.py): outputs, the gradients of every input and parameter,
parameter names; first and second derivatives in both modes by finite differences; a compiled
training step equals the eager one; PyTorch's errors."""

import json
import pathlib
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T
from helpers import assert_values, leaf, recorded_kwargs

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "nn_attention_torch.json").read_text()
)


def _build(case):
    layer = getattr(nn, case["layer"])(*case["args"], **recorded_kwargs(case))
    if case["decoder"] is not None:
        num_layers, with_norm = case["decoder"]
        norm = nn.LayerNorm(case["args"][0]) if with_norm else None
        layer = nn.TransformerDecoder(layer, num_layers, norm=norm)
    return layer


@pytest.mark.parametrize("name", sorted(RECORD["layers"]))
def test_outputs_and_all_gradients_match_pytorch(name):
    case = RECORD["layers"][name]
    layer = _build(case)
    assert list(layer.state_dict()) == list(case["state_dict"])
    layer.load_state_dict({k: np.asarray(v) for k, v in case["state_dict"].items()})
    inputs = [leaf(a) for a in case["inputs"]]
    masks = {k: T(v) if isinstance(v, list) else v for k, v in case["masks"].items()}
    out = layer(*inputs, **masks)
    out = out[0] if isinstance(out, tuple) else out
    assert_values(out, case["output"], rtol=1e-11, atol=1e-13)
    cr.sum(out * T(case["weights"])).backward()
    for x, expected in zip(inputs, case["input_grads"]):
        assert_values(x.grad, expected, rtol=1e-11, atol=1e-13)
    grads = {k: p.grad for k, p in layer.named_parameters()}
    assert list(grads) == list(case["parameter_grads"])
    for k, expected in case["parameter_grads"].items():
        assert_values(grads[k], expected, rtol=1e-11, atol=1e-12)


def test_attention_weights_include_the_extra_keys():
    mha = nn.MultiheadAttention(4, 2, add_bias_kv=True, add_zero_attn=True, kdim=3, vdim=5)
    q, k, v = T(np.ones((2, 1, 4))), T(np.ones((3, 1, 3))), T(np.ones((3, 1, 5)))
    out, weights = mha(q, k, v)
    assert out.shape == (2, 1, 4) and weights.shape == (1, 2, 5)
    np.testing.assert_allclose(N(cr.sum(weights, axis=-1)), 1.0)
    names = [k for k, _ in mha.named_parameters()]
    assert names == [
        "q_proj_weight",
        "k_proj_weight",
        "v_proj_weight",
        "in_proj_bias",
        "bias_k",
        "bias_v",
        "out_proj.weight",
        "out_proj.bias",
    ]
    assert mha.in_proj_weight is None and mha.k_proj_weight.shape == (4, 3)


def test_first_and_second_derivatives_in_both_modes():
    cr.random.manual_seed(1)
    mha = nn.MultiheadAttention(2, 1, add_bias_kv=True, add_zero_attn=True, kdim=1, vdim=3)
    rng = np.random.default_rng(2)
    q, k, v = (leaf(rng.normal(size=s)) for s in ((2, 1, 2), (2, 1, 1), (2, 1, 3)))

    def fn(q, k, v):
        return mha(q, k, v)[0]

    assert gradcheck(fn, (q, k, v), check_forward_ad=True)
    assert gradgradcheck(fn, (q, k, v))
    layer = nn.TransformerDecoderLayer(2, 1, dim_feedforward=3, dropout=0.0)
    tgt, memory = leaf(rng.normal(size=(2, 1, 2))), leaf(rng.normal(size=(3, 1, 2)))
    assert gradcheck(lambda t, m: layer(t, m), (tgt, memory), check_forward_ad=True)
    assert gradgradcheck(lambda t, m: layer(t, m), (tgt, memory))


def test_compiled_decoder_training_step_equals_eager():
    rng = np.random.default_rng(3)
    mask = T(np.triu(np.ones((3, 3), dtype=bool), k=1))
    batches = [(T(rng.normal(size=(3, 2, 4))), T(rng.normal(size=(4, 2, 4)))) for _ in range(4)]

    def run(compiled):
        cr.random.manual_seed(4)
        layer = nn.TransformerDecoderLayer(4, 2, dim_feedforward=6, dropout=0.0)
        decoder = nn.TransformerDecoder(layer, 2, norm=nn.LayerNorm(4))
        opt = cr.optim.SGD(decoder.parameters(), lr=0.1)

        def step(tgt, memory):
            opt.zero_grad()
            loss = cr.mean(decoder(tgt, memory, tgt_mask=mask, tgt_is_causal=True) ** 2)
            loss.backward()
            opt.step()
            return loss

        fn = cr.compile(step) if compiled else step
        return [N(fn(t, m)).item() for t, m in batches], [N(p) for p in decoder.parameters()]

    eager_losses, eager_params = run(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cr.CompileWarning)
        losses, params = run(True)
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-12)
    for got, expected in zip(params, eager_params):
        np.testing.assert_allclose(got, expected, rtol=1e-11, atol=1e-13)


def test_bad_arguments_raise_clear_errors():
    mha = nn.MultiheadAttention(4, 2, kdim=3, vdim=5)
    with pytest.raises(RuntimeError, match="expected keys of 3 features and values of 5"):
        mha(T(np.ones((2, 1, 4))), T(np.ones((3, 1, 4))), T(np.ones((3, 1, 5))))
    layer = nn.TransformerDecoderLayer(4, 2, dim_feedforward=6)
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        layer(T(np.ones((2, 1, 4))), T(np.ones((3, 1, 4))), tgt_is_causal=True)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        nn.TransformerDecoderLayer(4, 2, activation="tanh")


def test_is_causal_is_a_hint_that_needs_the_mask_as_pytorchs():
    # PyTorch's MultiheadAttention takes is_causal (a TypeError before): the mask given is
    # applied; without one it raises PyTorch's RuntimeError.
    cr.random.manual_seed(0)
    mha = nn.MultiheadAttention(4, 2)
    x = T(np.random.default_rng(0).normal(size=(3, 2, 4)))
    causal = T(np.triu(np.ones((3, 3), bool), 1))
    hinted, weights = mha(x, x, x, attn_mask=causal, is_causal=True)
    plain, expected = mha(x, x, x, attn_mask=causal)
    np.testing.assert_array_equal(N(hinted), N(plain))
    np.testing.assert_array_equal(N(weights), N(expected))
    assert np.all(N(weights)[:, 0, 1:] == 0)  # the first query attends to itself only
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        mha(x, x, x, is_causal=True)
