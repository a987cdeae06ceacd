"""chainrule.nn: Module registration and traversal order, state dicts, train/eval, zero_grad,
and the layers' shapes, default initialisations and gradients (PyTorch's semantics)."""

import math
import subprocess
import sys

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
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
    net = Net()
    sd = net.state_dict()
    assert list(sd) == [
        "offset",
        "first.scale",
        "first.inner.weight",
        "first.inner.bias",
        "first.shared.weight",
        "first.shared.bias",
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


# ----------------------------------------------------------------------------- layers


def test_linear_default_init_is_uniform_within_one_over_sqrt_fan_in():
    cr.random.manual_seed(0)
    lin = nn.Linear(25, 400)
    bound = 1 / math.sqrt(25)
    for p in (lin.weight, lin.bias):
        v = N(p)
        assert p.dtype == cr.float64 and v.min() >= -bound and v.max() <= bound
        assert v.max() > 0.9 * bound and v.min() < -0.9 * bound
    assert lin.weight.shape == (400, 25) and lin.bias.shape == (400,)
    assert nn.Linear(2, 3, bias=False).bias is None
    assert nn.Linear(2, 3, dtype=cr.float32).weight.dtype == cr.float32


def test_linear_given_an_input_of_the_wrong_width_names_itself_and_the_shape():
    lin = nn.Linear(3, 16)
    with pytest.raises(ValueError, match=r"Linear\(3, 16\) got input of shape \(64, 5\)"):
        lin(T(np.ones((64, 5))))
    with pytest.raises(ValueError, match=r"got input of shape \(\)"):
        lin(T(1.0))
    assert lin(T(np.ones((2, 4, 3)))).shape == (2, 4, 16)


def test_conv2d_layer_init_shapes_and_output():
    cr.random.manual_seed(0)
    conv = nn.Conv2d(3, 8, 3, stride=2, padding=1)
    bound = 1 / math.sqrt(3 * 3 * 3)
    assert conv.weight.shape == (8, 3, 3, 3) and conv.bias.shape == (8,)
    for p in (conv.weight, conv.bias):
        assert N(p).min() >= -bound and N(p).max() <= bound
    assert conv(T(np.ones((2, 3, 7, 6)))).shape == (2, 8, 4, 3)
    assert nn.Conv2d(1, 2, (3, 1), bias=False).bias is None
    assert nn.Conv2d(1, 2, (3, 1)).weight.shape == (2, 1, 3, 1)
    assert repr(conv) == (
        "Conv2d(3, 8, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), bias=True)"
    )


def test_initialisation_is_reproducible_from_the_seed():
    cr.random.manual_seed(42)
    a = N(nn.Linear(3, 3).weight)
    cr.random.manual_seed(42)
    assert np.array_equal(a, N(nn.Linear(3, 3).weight))


def test_embedding_starts_standard_normal_and_looks_up_rows():
    cr.random.manual_seed(0)
    emb = nn.Embedding(200, 50)
    w = N(emb.weight)
    assert abs(w.mean()) < 0.02 and abs(w.std() - 1.0) < 0.02
    idx = T([[1, 0], [1, 3]], np.int64)
    out = emb(idx)
    assert out.shape == (2, 2, 50)
    np.testing.assert_array_equal(N(out)[1, 1], w[3])
    cr.sum(out).backward()
    counts = np.zeros(200)
    counts[[0, 1, 3]] = [1, 2, 1]
    np.testing.assert_array_equal(N(emb.weight.grad)[:, 0], counts)


def test_layer_norm_starts_at_ones_and_zeros_and_normalises():
    ln = nn.LayerNorm((2, 3))
    assert N(ln.weight).tolist() == [[1.0] * 3] * 2 and N(ln.bias).tolist() == [[0.0] * 3] * 2
    x = np.arange(12.0).reshape(2, 2, 3) ** 2
    y = N(ln(T(x)))
    np.testing.assert_allclose(y.reshape(2, -1).mean(axis=1), 0.0, atol=1e-12)
    np.testing.assert_allclose(y.reshape(2, -1).var(axis=1), 1.0, rtol=1e-3)
    assert nn.LayerNorm(3, elementwise_affine=False).weight is None
    assert list(dict(nn.LayerNorm(3, bias=False).named_parameters())) == ["weight"]


def test_activation_modules_apply_their_functions():
    x = T([-1.0, 0.5, 2.0])
    for module, fn in [
        (nn.ReLU(), F.relu),
        (nn.Tanh(), cr.tanh),
        (nn.Sigmoid(), F.sigmoid),
        (nn.GELU(), F.gelu),
        (nn.GELU("tanh"), lambda v: F.gelu(v, approximate="tanh")),
    ]:
        np.testing.assert_array_equal(N(module(x)), N(fn(x)))


def test_flatten_and_sequential():
    x = T(np.ones((2, 3, 4, 5)))
    assert nn.Flatten()(x).shape == (2, 60)
    assert nn.Flatten(0, 1)(x).shape == (6, 4, 5)
    seq = nn.Sequential(nn.Flatten(), nn.Linear(60, 4), nn.Tanh())
    assert seq(x).shape == (2, 4) and len(seq) == 3 and isinstance(seq[1], nn.Linear)
    assert [type(m).__name__ for m in seq] == ["Flatten", "Linear", "Tanh"]
    seq.append(nn.ReLU())
    assert [n for n, _ in seq.named_children()][-1] == "3"


def test_dropout_module_scales_in_training_and_is_identity_in_eval():
    drop = nn.Dropout(0.5)
    x = T(np.ones(1000))
    y = N(drop(x))
    assert set(np.unique(y)) == {0.0, 2.0}
    assert drop.eval()(x) is x
    with pytest.raises(ValueError, match="between 0 and 1"):
        nn.Dropout(-0.1)


def test_a_network_differentiates_twice_through_its_parameters():
    cr.random.manual_seed(1)
    net = nn.Sequential(nn.Linear(2, 3), nn.GELU(), nn.LayerNorm(3), nn.Linear(3, 1))
    x = T(np.array([[0.3, -0.2], [1.0, 0.4]]))

    def fn(*ps):
        w0, b0, w2, b2, w3, b3 = ps
        h = F.linear(x, w0, b0)
        h = F.layer_norm(F.gelu(h), 3, w2, b2)
        return F.linear(h, w3, b3)

    params = [p.detach().requires_grad_(True) for p in net.parameters()]
    assert gradcheck(fn, params)
    assert gradgradcheck(fn, params)


def test_import_chainrule_alone_reaches_the_toolkit():
    code = (
        "import chainrule as cr; "
        "print(cr.nn.Linear, cr.nn.functional.conv2d, cr.optim.Adam, "
        "cr.optim.lr_scheduler.StepLR, cr.random.randn, cr.optimize.minimize)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
