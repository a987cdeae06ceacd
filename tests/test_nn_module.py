"""chainrule.nn.Module with PyTorch's semantics: registration and traversal order, state
dicts, train/eval, zero_grad, requires_grad, repr; and `import chainrule` alone reaches nn,
optim, random and optimize. The layers are tested in test_nn_layers.py."""

import subprocess
import sys

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from conftest import N, T, of_backend


class Block(nn.Module):
    def __init__(self, shared):
        super().__init__()
        self.inner = nn.Linear(2, 3)
        self.scale = nn.Parameter(cr.ones((3,)))
        self.shared = shared

    def forward(self, x):
        return self.shared(self.inner(x) * self.scale)


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        shared = nn.Linear(3, 3)
        self.first = Block(shared)
        self.offset = nn.Parameter(cr.zeros((3,)))
        self.second = shared
        self.plain = cr.ones((2,))  # a plain tensor: not a parameter

    def forward(self, x):
        return self.second(self.first(x)) + self.offset


def test_parameters_come_in_registration_order_own_before_submodules_shared_once():
    net = Net()
    names = [n for n, _ in net.named_parameters()]
    assert names == [
        "offset",
        "first.scale",
        "first.inner.weight",
        "first.inner.bias",
        "first.shared.weight",
        "first.shared.bias",
    ]
    assert len(list(net.parameters())) == 6
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["offset"]
    assert all(isinstance(p, nn.Parameter) for p in net.parameters())
    assert not isinstance(net.plain, nn.Parameter) and not isinstance(T([1.0]), nn.Parameter)


def test_modules_and_children_visit_each_module_once():
    net = Net()
    assert [type(m).__name__ for m in net.modules()] == ["Net", "Block", "Linear", "Linear"]
    assert [n for n, _ in net.named_modules()] == ["", "first", "first.inner", "first.shared"]
    assert [n for n, _ in net.named_children()] == ["first", "second"]
    assert list(net.children()) == [net.first, net.second]


def test_remove_duplicate_false_gives_shared_members_at_each_name_and_memo_skips_modules():
    # The names PyTorch 2.13 gives for the same Net (with the two buffers below).
    net = Net()
    net.register_buffer("b", cr.zeros((1,)))
    net.second.register_buffer("c", cr.zeros((1,)))
    assert [n for n, _ in net.named_parameters(remove_duplicate=False)] == [
        "offset",
        "first.scale",
        "first.inner.weight",
        "first.inner.bias",
        "first.shared.weight",
        "first.shared.bias",
        "second.weight",
        "second.bias",
    ]
    assert [n for n, _ in net.named_buffers(remove_duplicate=False)] == [
        "b",
        "first.shared.c",
        "second.c",
    ]
    assert [n for n, _ in net.named_buffers()] == ["b", "first.shared.c"]
    assert [n for n, _ in net.named_modules(remove_duplicate=False)] == [
        "",
        "first",
        "first.inner",
        "first.shared",
        "second",
    ]
    assert [n for n, _ in net.named_parameters(prefix="m")][:2] == ["m.offset", "m.first.scale"]
    assert [n for n, _ in net.named_modules(prefix="m")][-1] == "m.first.shared"
    memo = {net.first}
    assert [n for n, _ in net.named_modules(memo)] == ["", "second"]
    assert len(memo) == 3


def test_reassigning_and_deleting_attributes_updates_the_registries():
    net = Net()
    net.offset = None
    assert "offset" not in [n for n, _ in net.named_parameters()]
    with pytest.raises(TypeError, match="nn.Parameter or None expected"):
        net.offset = T([1.0])
    del net.second
    assert [n for n, _ in net.named_children()] == ["first"]
    with pytest.raises(AttributeError, match="no attribute 'missing'"):
        net.missing  # noqa: B018


def test_assigning_before_init_raises():
    class Broken(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(cr.ones((1,)))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Broken()


def test_call_runs_forward_and_a_module_without_forward_raises():
    net = Net()
    x = T(np.ones((4, 2)))
    assert net(x).shape == (4, 3)
    with pytest.raises(NotImplementedError, match='missing the required "forward"'):
        nn.Module()(x)


def test_state_dict_holds_plain_array_copies_under_every_name():
    # A module registered twice is there under both names, as in PyTorch's state dict (the
    # second, "second.*", was left out: PyTorch's checkpoints of it did not load strictly).
    net = Net()
    sd = net.state_dict()
    assert list(sd) == [
        "offset",
        "first.scale",
        "first.inner.weight",
        "first.inner.bias",
        "first.shared.weight",
        "first.shared.bias",
        "second.weight",
        "second.bias",
    ]
    assert not isinstance(sd["offset"], cr.Tensor)
    assert of_backend(sd["offset"])
    with cr.no_grad():
        net.offset += 1.0
    assert np.asarray(sd["offset"]).tolist() == [0.0, 0.0, 0.0]


def test_load_state_dict_copies_numpy_arrays_into_the_same_parameters():
    net = Net()
    params = list(net.parameters())
    values = {k: np.full(np.shape(v), 0.5) for k, v in net.state_dict().items()}
    result = net.load_state_dict(values)
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert all(a is b for a, b in zip(net.parameters(), params))
    assert all(np.all(N(p) == 0.5) for p in net.parameters())
    values["offset"][:] = 7.0
    assert N(net.offset).tolist() == [0.5, 0.5, 0.5]
    assert all(p.requires_grad and p.is_leaf for p in net.parameters())


def test_load_state_dict_raises_on_wrong_keys_or_shapes():
    lin = nn.Linear(2, 3)
    good = lin.state_dict()
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "foo"'):
        lin.load_state_dict({**good, "foo": np.zeros(1)})
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "bias"'):
        lin.load_state_dict({"weight": good["weight"]})
    with pytest.raises(RuntimeError, match="size mismatch for weight"):
        lin.load_state_dict({"weight": np.zeros((2, 2)), "bias": good["bias"]}, strict=False)
    result = lin.load_state_dict({"weight": np.zeros((3, 2)), "extra": 1}, strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["extra"]
    assert N(lin.weight).tolist() == [[0.0, 0.0]] * 3


def test_train_and_eval_set_the_mode_everywhere_and_modules_start_training():
    net = nn.Sequential(nn.Linear(2, 2), nn.Dropout(0.5))
    assert all(m.training for m in net.modules())
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    x = T(np.ones((3, 2)))
    np.testing.assert_array_equal(N(net(x)), N(net(x)))
    net.train()
    assert all(m.training for m in net.modules())


def test_zero_grad_sets_none_or_zeroes_in_place():
    lin = nn.Linear(2, 2)
    cr.sum(lin(T(np.ones((1, 2))))).backward()
    g = lin.weight.grad
    lin.zero_grad(set_to_none=False)
    assert lin.weight.grad is g and N(g).tolist() == [[0.0, 0.0], [0.0, 0.0]]
    lin.zero_grad()
    assert lin.weight.grad is None and lin.bias.grad is None


def test_requires_grad_freezes_the_parameters():
    lin = nn.Linear(2, 2).requires_grad_(False)
    assert not any(p.requires_grad for p in lin.parameters())


def test_repr_shows_the_tree():
    net = nn.Sequential(nn.Linear(2, 3), nn.ReLU())
    assert repr(net) == (
        "Sequential(\n  (0): Linear(in_features=2, out_features=3, bias=True)\n  (1): ReLU()\n)"
    )


def test_import_chainrule_alone_reaches_the_toolkit():
    code = (
        "import chainrule as cr; "
        "print(cr.nn.Linear, cr.nn.functional.conv2d, cr.optim.Adam, "
        "cr.optim.lr_scheduler.StepLR, cr.random.randn, cr.optimize.minimize)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_a_state_dict_of_a_module_shared_twice_loads_strictly():
    net = Net()
    values = {k: np.full(np.shape(v), 0.25) for k, v in net.state_dict().items()}
    assert net.load_state_dict(values).missing_keys == []
    assert N(net.second.weight).tolist() == [[0.25] * 3] * 3
    del values["second.bias"]
    with pytest.raises(RuntimeError, match='Missing key.s. in state_dict: "second.bias"'):
        net.load_state_dict(values)


def test_get_submodule_parameter_buffer_and_register_module_as_pytorchs():
    model = nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3))
    assert model.get_submodule("") is model and model.get_submodule("1") is model[1]
    assert model.get_parameter("0.weight") is model[0].weight
    assert model.get_buffer("1.running_mean") is model[1].running_mean
    model.register_module("act", nn.ReLU())
    assert [n for n, _ in model.named_children()] == ["0", "1", "act"]
    for get, target, message in [
        (model.get_submodule, "0.x", "Linear has no attribute `x`"),
        (model.get_parameter, "0.foo", "Linear has no attribute `foo`"),
        (model.get_parameter, "1.running_mean", "`running_mean` is not an nn.Parameter"),
        (model.get_buffer, "0.weight", "`weight` is not a buffer"),
    ]:
        with pytest.raises(AttributeError, match=message):
            get(target)


def test_state_dict_takes_pytorchs_prefix_keep_vars_and_destination():
    lin = nn.Linear(2, 3)
    kept = lin.state_dict(prefix="model.", keep_vars=True)
    assert list(kept) == ["model.weight", "model.bias"]
    assert kept["model.weight"] is lin.weight and kept["model.bias"] is lin.bias
    into = {"step": 3}
    assert lin.state_dict(destination=into) is into
    assert sorted(into) == ["bias", "step", "weight"] and not isinstance(into["bias"], cr.Tensor)
