"""BatchNorm1d/2d against PyTorch: outputs of training and eval steps, the first step's
gradients, and the running statistics after each step, recorded from PyTorch
(fixtures/batchnorm_torch.json, made by fixtures/make_batchnorm_fixtures.py); second
derivatives by finite differences; the shape checks."""

import json
import pathlib

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T
from helpers import assert_values

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "batchnorm_torch.json").read_text()
)


@pytest.mark.parametrize("name", sorted(RECORD["cases"]))
def test_batchnorm_steps_match_pytorch(name):
    case = RECORD["cases"][name]
    layer = getattr(nn, case["layer"])(len(case["batches"][0][0]), **case["kwargs"])
    if layer.affine:
        layer.load_state_dict(
            {
                **layer.state_dict(),
                "weight": np.array(case["weight"]),
                "bias": np.array(case["bias"]),
            }
        )
    for step, batch in enumerate(case["batches"]):
        layer.train(step < 2)
        x = T(batch, requires_grad=True)
        out = layer(x)
        if step == 0:
            cr.sum(out * T(case["weights"])).backward()
            assert_values(x.grad, case["grad_input"], rtol=1e-10, atol=1e-12)
            if layer.affine:
                assert_values(layer.weight.grad, case["grad_weight"], rtol=1e-10, atol=1e-12)
                assert_values(layer.bias.grad, case["grad_bias"], rtol=1e-10, atol=1e-12)
        assert_values(out, case["outputs"][step], rtol=1e-10, atol=1e-12)
        state = layer.state_dict()
        assert list(state) == list(case["buffers"][step])
        for key, value in case["buffers"][step].items():
            np.testing.assert_allclose(N(T(state[key])), value, rtol=1e-12, atol=1e-14)


def test_batch_norm_first_and_second_derivatives_in_training_and_eval():
    rng = np.random.default_rng(0)
    x = T(rng.normal(size=(4, 3, 2)), requires_grad=True)
    w = T(rng.uniform(0.5, 1.5, 3), requires_grad=True)
    b = T(rng.normal(size=3), requires_grad=True)

    def train(x, w, b):
        return F.batch_norm(x, None, None, w, b, training=True)

    mean, var = T(rng.normal(size=3)), T(rng.uniform(0.5, 2.0, 3))

    def evaluate(x, w, b):
        return F.batch_norm(x, mean, var, w, b, training=False)

    for fn in (train, evaluate):
        assert gradcheck(fn, (x, w, b), eps=1e-6)
        assert gradgradcheck(fn, (x, w, b), eps=1e-6)


def test_batchnorm_checks_the_input_rank_and_the_batch_size():
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(T(np.zeros((2, 3, 4, 4))))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
        nn.BatchNorm2d(3)(T(np.zeros((2, 3))))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel"):
        nn.BatchNorm1d(3)(T(np.zeros((1, 3))))
    assert nn.BatchNorm1d(3).eval()(T(np.zeros((1, 3)))).shape == (1, 3)


def test_batchnorm_buffers_move_with_to_and_are_not_parameters():
    layer = nn.BatchNorm2d(2)
    assert [n for n, _ in layer.named_parameters()] == ["weight", "bias"]
    assert [n for n, _ in layer.named_buffers()] == [
        "running_mean", "running_var", "num_batches_tracked"
    ]  # fmt: skip
    layer.to(cr.float32)
    assert layer.running_var.dtype == cr.float32 and layer.num_batches_tracked.dtype == cr.int64


def test_batchnorm_without_bias_scales_only_as_pytorch():
    # PyTorch 2.13's bias=False: a weight, no bias (a TypeError before); it prints as PyTorch.
    layer = nn.BatchNorm1d(3, bias=False)
    assert layer.bias is None and sorted(layer.state_dict()) == [
        "num_batches_tracked", "running_mean", "running_var", "weight"
    ]  # fmt: skip
    assert repr(layer) == (
        "BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, bias=False, track_running_stats=True)"
    )
    layer.load_state_dict({**layer.state_dict(), "weight": np.array([1.0, 2.0, 3.0])})
    a = np.random.default_rng(0).normal(size=(5, 3))
    expected = (a - a.mean(0)) / np.sqrt(a.var(0) + 1e-5) * [1.0, 2.0, 3.0]
    assert_values(layer(T(a)), expected, rtol=1e-10)
    assert gradgradcheck(lambda x: nn.BatchNorm1d(3, bias=False)(x), (T(a, requires_grad=True),))


def test_a_state_dict_without_num_batches_tracked_loads_as_in_pytorch():
    # PyTorch's checkpoints from before num_batches_tracked lack it: it keeps its value.
    model = nn.Sequential(nn.BatchNorm1d(3), nn.InstanceNorm1d(3, track_running_stats=True))
    model(T(np.random.default_rng(1).normal(size=(4, 3, 5))))
    saved = {k: v for k, v in model.state_dict().items() if not k.endswith("num_batches_tracked")}
    assert len(saved) == len(model.state_dict()) - 2
    result = model.load_state_dict(saved)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert [int(m.num_batches_tracked.item()) for m in model] == [1, 0]  # as PyTorch's
    with pytest.raises(RuntimeError, match='Missing key.s. in state_dict: "0.running_mean"'):
        model.load_state_dict({k: v for k, v in saved.items() if k != "0.running_mean"})
