"""chainrule.nn's containers (ModuleList, ModuleDict, ParameterList, ParameterDict, Identity),
buffers (register_buffer: in state_dict, loaded, moved by `to`), `apply` and `Module.to`, with
PyTorch's registration names and orders."""

from collections import OrderedDict

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from conftest import N, T


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(2, 3), nn.Linear(3, 1)])
        self.heads = nn.ModuleDict({"a": nn.Identity(), "b": nn.Tanh()})
        self.scales = nn.ParameterList([T(np.ones(2))])
        self.shifts = nn.ParameterDict({"s": T(np.zeros(1))})
        self.register_buffer("running", T(np.zeros(3)))
        self.register_buffer("scratch", T(np.zeros(1)), persistent=False)

    def forward(self, x):
        for layer in self.layers:
            x = self.heads["b"](layer(x))
        return x * self.scales[0][0] + self.shifts["s"]


def test_containers_register_what_they_hold_under_positions_and_keys():
    m = Model()
    assert [n for n, _ in m.named_parameters()] == [
        "layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias",
        "scales.0", "shifts.s",
    ]  # fmt: skip
    assert [n for n, _ in m.named_modules()] == [
        "", "layers", "layers.0", "layers.1", "heads", "heads.a", "heads.b", "scales", "shifts"
    ]  # fmt: skip
    assert isinstance(m.scales[0], nn.Parameter) and isinstance(m.shifts["s"], nn.Parameter)
    m(T(np.ones((4, 2)))).sum().backward()
    assert all(p.grad is not None for p in m.parameters())


def test_module_list_indexing_and_editing():
    layers = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    layers.append(nn.Sigmoid()).extend([nn.Identity()])
    layers.insert(0, nn.GELU())
    assert [type(m).__name__ for m in layers] == ["GELU", "ReLU", "Tanh", "Sigmoid", "Identity"]
    assert isinstance(layers[-1], nn.Identity) and len(layers[1:3]) == 2
    layers[0] = nn.ReLU()
    del layers[1]
    assert [n for n, _ in layers.named_children()] == ["0", "1", "2", "3"]
    with pytest.raises(IndexError):
        layers[4]


def test_module_dict_and_parameter_dict_behave_as_ordered_dicts():
    d = nn.ModuleDict([("x", nn.ReLU())])
    d["y"] = nn.Tanh()
    assert list(d) == ["x", "y"] and "y" in d and len(d) == 2
    assert isinstance(d.pop("x"), nn.ReLU) and d.keys() == ["y"]
    p = nn.ParameterDict()
    p["w"] = T(np.ones(2), requires_grad=True)
    p.update({"v": nn.Parameter(T(np.zeros(1)))})
    assert p.keys() == ["w", "v"] and [n for n, _ in p.named_parameters()] == ["w", "v"]


def test_identity_returns_its_input_and_ignores_constructor_arguments():
    x = T(np.ones(2))
    assert nn.Identity(3, bias=False)(x) is x


def test_buffers_are_in_the_state_dict_unless_not_persistent_and_load_back():
    m = Model()
    keys = list(m.state_dict())
    assert keys[0] == "running" and "scratch" not in keys
    assert [n for n, _ in m.named_buffers()] == ["running", "scratch"]
    state = m.state_dict()
    state["running"] = np.array([1.0, 2.0, 3.0])
    running = m.running
    m.load_state_dict(state)
    assert m.running is running and N(m.running).tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(TypeError, match="cannot assign 'int' as buffer"):
        m.running = 3
    with pytest.raises(KeyError, match="already exists"):
        m.register_buffer("layers", T(np.zeros(1)))


def test_apply_visits_children_before_parents():
    seen = []
    Model().apply(lambda module: seen.append(type(module).__name__))
    assert seen == [
        "Linear", "Linear", "ModuleList", "Identity", "Tanh", "ModuleDict", "ParameterList",
        "ParameterDict", "Model",
    ]  # fmt: skip


def test_to_casts_floating_parameters_buffers_and_grads_in_place():
    m = Model()
    m.register_buffer("steps", T(np.array(0)))
    weight = m.layers[0].weight
    m(T(np.ones((1, 2)))).sum().backward()
    assert m.to(cr.float32) is m
    assert m.layers[0].weight is weight and weight.dtype == cr.float32 and weight.is_leaf
    assert weight.grad.dtype == cr.float32
    assert m.running.dtype == cr.float32 and m.steps.dtype == cr.int64
    assert m.double().layers[1].bias.dtype == cr.float64
    m.to(T(np.zeros(1), np.float32))
    assert m.shifts["s"].dtype == cr.float32
    m.to(device=m.running.device)
    with pytest.raises(TypeError, match="unexpected keyword"):
        m.to(cr.float32, memory_format=None)


def _names(seq):
    return [(k, type(m).__name__) for k, m in seq._modules.items()]


def test_sequential_edits_as_pytorchs():
    # Each state below is PyTorch 2.13's after the same calls on torch.nn.Sequential.
    s = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
    assert _names(s[1:]) == [("1", "Tanh"), ("2", "Linear")]  # a slice keeps the names
    assert type(s[-1]).__name__ == "Linear"
    s[1] = nn.Sigmoid()
    assert _names(s) == [("0", "Linear"), ("1", "Sigmoid"), ("2", "Linear")]
    del s[0]  # the rest numbered again
    assert _names(s) == [("0", "Sigmoid"), ("1", "Linear")]
    s.insert(0, nn.ReLU())
    s.insert(-1, nn.Tanh())
    assert _names(s) == [("0", "ReLU"), ("1", "Sigmoid"), ("2", "Tanh"), ("3", "Linear")]
    s.extend([nn.ReLU(), nn.Tanh()])
    assert type(s.pop(1)).__name__ == "Sigmoid"
    assert _names(s) == [("0", "ReLU"), ("1", "Tanh"), ("2", "Linear"), ("3", "ReLU"),
                         ("4", "Tanh")]  # fmt: skip
    del s[1:3]
    assert _names(s) == [("0", "ReLU"), ("1", "ReLU"), ("2", "Tanh")]
    with pytest.raises(IndexError, match="^index 7 is out of range$"):
        s[7]
    with pytest.raises(IndexError, match="^index -9 is out of range$"):
        s[-9] = nn.ReLU()
    with pytest.raises(IndexError, match="^Index out of range: 9$"):
        s.insert(9, nn.ReLU())
    with pytest.raises(AssertionError, match="module should be of type"):
        s.insert(0, 3)


def test_sequential_of_an_ordered_dict_keeps_its_names():
    d = nn.Sequential(OrderedDict([("a", nn.Linear(2, 2)), ("b", nn.Tanh())]))
    assert _names(d) == [("a", "Linear"), ("b", "Tanh")]
    assert list(d.state_dict()) == ["a.weight", "a.bias"]  # (PyTorch's keys)
    assert _names(d[::-1]) == [("b", "Tanh"), ("a", "Linear")]
    x = cr.asarray([[0.5, -1.0]])
    np.testing.assert_array_equal(np.asarray(d(x).detach()), np.asarray(cr.tanh(d.a(x)).detach()))
