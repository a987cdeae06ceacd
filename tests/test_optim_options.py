"""chainrule.optim takes the options of PyTorch 2.13's optimizers that choose how a step is
computed (foreach, fused, capturable) and keeps them in the groups as PyTorch does, with the
same numbers whatever they say; refuses differentiable=True; takes Adam's
decoupled_weight_decay, and named parameters ((name, tensor) pairs, as
model.named_parameters() gives them)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim
from conftest import N, T

# Each optimizer's group keys (besides "params"), as PyTorch 2.13 writes them.
TORCH_GROUP_KEYS = {
    "SGD": ["dampening", "differentiable", "foreach", "fused", "lr", "maximize", "momentum",
            "nesterov", "weight_decay"],
    "Adam": ["amsgrad", "betas", "capturable", "decoupled_weight_decay", "differentiable", "eps",
             "foreach", "fused", "lr", "maximize", "weight_decay"],
    "AdamW": ["amsgrad", "betas", "capturable", "decoupled_weight_decay", "differentiable",
              "eps", "foreach", "fused", "lr", "maximize", "weight_decay"],
    "RMSprop": ["alpha", "capturable", "centered", "differentiable", "eps", "foreach", "lr",
                "maximize", "momentum", "weight_decay"],
    "Adagrad": ["differentiable", "eps", "foreach", "fused", "initial_accumulator_value", "lr",
                "lr_decay", "maximize", "weight_decay"],
    "Adamax": ["betas", "capturable", "differentiable", "eps", "foreach", "lr", "maximize",
               "weight_decay"],
    "NAdam": ["betas", "capturable", "decoupled_weight_decay", "differentiable", "eps",
              "foreach", "lr", "maximize", "momentum_decay", "weight_decay"],
    "RAdam": ["betas", "capturable", "decoupled_weight_decay", "differentiable", "eps",
              "foreach", "lr", "maximize", "weight_decay"],
    "ASGD": ["alpha", "capturable", "differentiable", "foreach", "lambd", "lr", "maximize", "t0",
             "weight_decay"],
    "Rprop": ["capturable", "differentiable", "etas", "foreach", "lr", "maximize",
              "step_sizes"],
}  # fmt: skip

# The implementation options each optimizer takes, with a value other than its default.
OPTIONS = {
    "SGD": {"foreach": True, "fused": False},
    "Adam": {"foreach": False, "fused": True, "capturable": True},
    "AdamW": {"foreach": True, "capturable": True},
    "RMSprop": {"foreach": True, "capturable": True},
    "Adagrad": {"foreach": False, "fused": True},
    "Adamax": {"foreach": True, "capturable": True},
    "NAdam": {"foreach": True, "capturable": True},
    "RAdam": {"foreach": False, "capturable": True},
}


def _trajectory(cls, steps=5, **kwargs):
    rng = np.random.default_rng(7)
    x, y = T(rng.normal(size=(6, 3))), T(rng.normal(size=(6, 2)))
    w = T(rng.normal(size=(3, 2)), requires_grad=True)
    b = T(rng.normal(size=(2,)), requires_grad=True)
    opt = getattr(optim, cls)([w, b], lr=0.05, weight_decay=0.1, **kwargs)
    for _ in range(steps):
        opt.zero_grad()
        cr.mean((cr.tanh(x @ w + b) - y) ** 2).backward()
        opt.step()
    return opt, [N(w), N(b)]


@pytest.mark.parametrize("cls", sorted(TORCH_GROUP_KEYS))
def test_groups_have_pytorchs_keys(cls):
    p = T([1.0, 2.0], requires_grad=True)
    opt = getattr(optim, cls)([p], lr=0.1)
    assert sorted(k for k in opt.param_groups[0] if k != "params") == TORCH_GROUP_KEYS[cls]
    saved = opt.state_dict()["param_groups"][0]
    assert sorted(k for k in saved if k != "params") == TORCH_GROUP_KEYS[cls]


@pytest.mark.parametrize("cls", sorted(OPTIONS))
def test_implementation_options_are_kept_and_change_no_number(cls):
    _, plain = _trajectory(cls)
    opt, given = _trajectory(cls, **OPTIONS[cls])
    for k, v in OPTIONS[cls].items():
        assert opt.param_groups[0][k] == v
    for a, b in zip(plain, given):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("cls", sorted(OPTIONS))
def test_differentiable_steps_are_refused(cls):
    p = T([1.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        getattr(optim, cls)([p], lr=0.1, differentiable=True)
    opt = getattr(optim, cls)([p], lr=0.1)
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        opt.add_param_group({"params": [T([2.0], requires_grad=True)], "differentiable": True})


def test_fused_with_foreach_or_differentiable_raises_pytorchs_errors():
    p = T([1.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="`fused` and `foreach` cannot be `True` together."):
        optim.SGD([p], lr=0.1, foreach=True, fused=True)
    with pytest.raises(RuntimeError, match="`fused` does not support `differentiable`"):
        optim.Adam([p], fused=True, differentiable=True)


@pytest.mark.parametrize("amsgrad", [False, True])
def test_adam_with_decoupled_weight_decay_is_adamw(amsgrad):
    # PyTorch's AdamW is its Adam with decoupled_weight_decay=True (AdamW's trajectory is
    # checked against PyTorch's in test_optim).
    opt, adam = _trajectory("Adam", amsgrad=amsgrad, decoupled_weight_decay=True)
    assert opt.param_groups[0]["decoupled_weight_decay"] is True
    _, adamw = _trajectory("AdamW", amsgrad=amsgrad)
    _, l2 = _trajectory("Adam", amsgrad=amsgrad)
    for a, b, c in zip(adam, adamw, l2):
        np.testing.assert_array_equal(a, b)
        assert not np.array_equal(a, c)
    assert optim.AdamW([T([1.0], requires_grad=True)]).defaults["decoupled_weight_decay"]


def test_named_parameters_are_optimized_and_their_names_kept():
    cr.random.manual_seed(0)
    model = nn.Linear(3, 2)
    opt = optim.SGD(model.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.param_groups[0]["params"] == [model.weight, model.bias]
    before = N(model.weight).copy()
    cr.sum(model(T(np.ones((4, 3))))).backward()
    opt.step()
    np.testing.assert_allclose(N(model.weight), before - 0.1 * N(model.weight.grad))
    assert opt.state_dict()["param_groups"][0]["param_names"] == ["weight", "bias"]


def test_named_and_unnamed_parameters_do_not_mix():
    a, b = T([1.0], requires_grad=True), T([2.0], requires_grad=True)
    with pytest.raises(ValueError, match="Some param names are missing"):
        optim.SGD([("a", a), b], lr=0.1)
    opt = optim.SGD([("a", a)], lr=0.1)
    with pytest.raises(ValueError, match="all optimizer param groups should be with/without"):
        opt.add_param_group({"params": [b]})


def test_a_group_given_a_set_of_parameters_is_refused():
    opt = optim.SGD([T([1.0], requires_grad=True)], lr=0.1)
    with pytest.raises(TypeError, match="ordered collections"):
        opt.add_param_group({"params": {T([2.0], requires_grad=True)}})


def test_the_state_of_a_parameter_not_yet_stepped_reads_as_empty():
    # As PyTorch's defaultdict: an optimizer subclass may read self.state[p] before the
    # first step (a KeyError before); the state dict leaves such parameters out.
    p, q = T([1.0, 2.0], requires_grad=True), T([3.0], requires_grad=True)
    opt = optim.Adam([p, q], lr=0.1)
    assert opt.state[q] == {}
    cr.sum(p * p).backward()
    opt.step()
    assert sorted(opt.state_dict()["state"]) == [0]
    opt.load_state_dict(opt.state_dict())
    assert opt.state[q] == {} and opt.state[p]["step"] == 1


def _as_arrays(state_dict):
    """A state dict as PyTorch saves it: numbers (step, NAdam's mu_product) as 0-d arrays."""
    return {
        "state": {
            i: {k: np.asarray(v) if isinstance(v, (int, float)) else N(v) for k, v in s.items()}
            for i, s in state_dict["state"].items()
        },
        "param_groups": state_dict["param_groups"],
    }


@pytest.mark.parametrize("cls", ["Adam", "NAdam", "RMSprop"])
def test_a_step_saved_as_a_0d_array_loads_as_a_number(cls):
    # Loaded from 0-d arrays, step (and mu_product) are the Python numbers chainrule keeps
    # (they became float tensors, and every later step's scalars with them), and the
    # trajectory goes on as if uninterrupted.
    _, expected = _trajectory(cls, steps=5)
    rng = np.random.default_rng(7)
    x, y = T(rng.normal(size=(6, 3))), T(rng.normal(size=(6, 2)))
    w = T(rng.normal(size=(3, 2)), requires_grad=True)
    b = T(rng.normal(size=(2,)), requires_grad=True)
    opt = getattr(optim, cls)([w, b], lr=0.05, weight_decay=0.1)
    for i in range(5):
        if i == 3:
            saved = _as_arrays(opt.state_dict())
            opt = getattr(optim, cls)([w, b], lr=0.05, weight_decay=0.1)
            opt.load_state_dict(saved)
            assert type(opt.state[w]["step"]) is int and opt.state[w]["step"] == 3
            if cls == "NAdam":
                assert type(opt.state[w]["mu_product"]) is float
        opt.zero_grad()
        cr.mean((cr.tanh(x @ w + b) - y) ** 2).backward()
        opt.step()
    for a, e in zip((N(w), N(b)), expected):
        np.testing.assert_array_equal(a, e)
