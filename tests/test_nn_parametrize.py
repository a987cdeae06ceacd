"""nn.utils.parametrize (register_parametrization, remove_parametrizations, is_parametrized,
cached), parametrizations.weight_norm / spectral_norm and the older hook-based weight_norm /
spectral_norm: state dict keys, outputs, gradients and spectral norm's power-iteration vectors
over training and eval calls against PyTorch's (fixtures/nn_parametrize_torch.json, made by
fixtures/make_nn_parametrize_fixtures.py), finite differences to second order, a compiled
training step against eager, and PyTorch's errors."""

import json
import pathlib
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
from chainrule import nn, optim
from chainrule.autograd import gradcheck, gradgradcheck
from chainrule.nn.utils import parametrizations as P
from chainrule.nn.utils import parametrize
from conftest import N, T, examples, skip_on
from helpers import AWAY_FROM_ZERO, arrays, assert_values, leaf

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "nn_parametrize_torch.json").read_text()
)

REGISTER = {
    "weight_norm": P.weight_norm,
    "spectral_norm": P.spectral_norm,
    "legacy_weight_norm": nn.utils.weight_norm,
    "legacy_spectral_norm": nn.utils.spectral_norm,
}


def _layer(case):
    """The case's layer with PyTorch's weights, parametrized, its buffers PyTorch's."""
    m = getattr(nn, case["layer"])(*case["args"]).double()
    m.load_state_dict({k: T(v) for k, v in case["state"].items()})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        REGISTER[case["how"]](m, **case["options"])
    with cr.no_grad():
        for name, b in m.named_buffers():
            b.copy_(T(case["buffers"][name]))
    return m


class Symmetric(nn.Module):
    def forward(self, x):
        return cr.triu(x) + cr.matrix_transpose(cr.triu(x, k=1))

    def right_inverse(self, a):
        return cr.triu(a)


class Scale(nn.Module):
    def forward(self, x):
        return 2.0 * x

    def right_inverse(self, a):
        return a / 2.0


class Double(nn.Module):
    """No right inverse."""

    def forward(self, x):
        return 2.0 * x


class Split(nn.Module):
    """Stored as two tensors that add up to the weight."""

    def forward(self, a, b):
        return a + b

    def right_inverse(self, w):
        return (w / 4.0, 3.0 * w / 4.0)


# ----------------------------------------------------------------------------- PyTorch's values


@pytest.mark.parametrize("name", sorted(RECORD["cases"]))
def test_parametrized_layers_match_pytorch_over_training_and_eval_calls(name):
    # Three training calls (spectral norm's u and v move at each) and an eval call (they
    # stay): outputs, gradients of every parameter, buffers after each call.
    case = RECORD["cases"][name]
    m = _layer(case)
    assert [[k, list(v.shape)] for k, v in m.state_dict().items()] == case["keys"]
    x, cotangent = T(case["input"]), T(case["cotangent"])
    for i, call in enumerate(case["calls"]):
        m.train(i < 3)
        m.zero_grad()
        y = m(x)
        cr.sum(y * cotangent).backward()
        assert_values(y, call["output"], rtol=1e-12, atol=1e-13)
        grads = {n: p.grad for n, p in m.named_parameters()}
        assert grads.keys() == call["grads"].keys()
        for n, g in grads.items():
            assert_values(g, call["grads"][n], rtol=1e-11, atol=1e-13)
        for n, b in m.named_buffers():
            assert_values(b, call["buffers"][n], rtol=1e-12, atol=1e-13)


def test_a_chain_of_parametrizations_matches_pytorch_and_takes_assignments():
    chain = RECORD["chain"]
    m = nn.Linear(3, 3).double()
    m.load_state_dict({k: T(v) for k, v in chain["state"].items()})
    weight = m.weight
    parametrize.register_parametrization(m, "weight", Symmetric())
    parametrize.register_parametrization(m, "weight", Scale())
    assert list(m.state_dict()) == chain["keys"]
    original = m.parametrizations.weight.original
    assert original is weight  # the same tensor object: an optimizer keeps updating it
    assert_values(original, chain["original"])
    assert_values(m.weight, chain["weight"])
    m.weight = T(chain["assigned"])  # through Scale's right inverse, then Symmetric's
    assert m.parametrizations.weight.original is weight
    assert_values(original, chain["original_after"])
    assert_values(m.weight, chain["assigned"], rtol=1e-14, atol=1e-15)


# ----------------------------------------------------------------------------- layout


def test_registration_layout_class_and_removal():
    m = nn.Linear(3, 2)
    weight = m.weight
    assert not parametrize.is_parametrized(m)
    parametrize.register_parametrization(m, "weight", Scale())
    assert type(m).__name__ == "ParametrizedLinear" and isinstance(m, nn.Linear)
    assert parametrize.type_before_parametrizations(m) is nn.Linear
    assert parametrize.is_parametrized(m) and parametrize.is_parametrized(m, "weight")
    assert not parametrize.is_parametrized(m, "bias")
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]
    assert repr(m).startswith("ParametrizedLinear(") and "(0): Scale()" in repr(m)
    # Other Linears are untouched.
    assert type(nn.Linear(3, 2)) is nn.Linear and not hasattr(nn.Linear, "parametrizations")
    parametrize.register_parametrization(m, "bias", Scale())
    parametrize.remove_parametrizations(m, "bias", leave_parametrized=False)
    assert type(m).__name__ == "ParametrizedLinear"
    expected = 2.0 * N(weight)
    parametrize.remove_parametrizations(m, "weight")
    assert type(m) is nn.Linear and "parametrizations" not in m._modules
    assert m.weight is weight and nn.Parameter.__instancecheck__(m.weight)
    assert_values(m.weight, expected)
    assert list(m.state_dict()) == ["bias", "weight"]


def test_a_buffer_is_parametrized_as_a_buffer():
    m = nn.BatchNorm1d(2)
    parametrize.register_parametrization(m, "running_var", Scale())
    assert "parametrizations.running_var.original" in dict(m.named_buffers())
    assert_values(m.running_var, np.ones(2))
    assert not m.running_var.requires_grad


def test_a_right_inverse_giving_a_sequence_stores_original0_original1():
    m = nn.Linear(3, 2).double()
    w = N(m.weight).copy()
    parametrize.register_parametrization(m, "weight", Split())
    lst = m.parametrizations.weight
    assert [n for n, _ in m.named_parameters()][1:] == [
        "parametrizations.weight.original0",
        "parametrizations.weight.original1",
    ]
    assert_values(lst.original0, w / 4.0)
    assert_values(m.weight, w)
    m.weight = T(np.ones((2, 3)))
    assert_values(lst.original1, np.full((2, 3), 0.75))
    with pytest.raises(ValueError, match="Cannot leave unparametrized"):
        parametrize.remove_parametrizations(m, "weight", leave_parametrized=False)
    parametrize.remove_parametrizations(m, "weight")
    assert_values(m.weight, np.ones((2, 3)))
    assert m.weight.requires_grad and isinstance(m.weight, nn.Parameter)


def test_cached_computes_once_per_block():
    m = nn.Linear(3, 2)
    calls = []

    class Counted(nn.Module):
        def forward(self, x):
            calls.append(1)
            return x * 1.0

    parametrize.register_parametrization(m, "weight", Counted(), unsafe=True)
    calls.clear()
    with parametrize.cached():
        first = m.weight
        with parametrize.cached():
            assert m.weight is first
        assert m.weight is first
    assert len(calls) == 1
    assert m.weight is not first and len(calls) == 2


@st.composite
def _weight_and_dim(draw):
    shape = draw(st.lists(st.integers(1, 3), min_size=1, max_size=3).map(tuple))
    return draw(arrays(shape, AWAY_FROM_ZERO)), draw(st.integers(-1, len(shape) - 1))


@examples(10)
@given(_weight_and_dim())
def test_weight_norm_keeps_the_weight_and_splits_it_into_norms_and_directions(case):
    # Registered, the weight reads as before; assigned, g holds its norms over every axis but
    # dim (all of them with -1) and the weight reads as assigned.
    w, dim = case
    m = nn.Linear(1, 1).double()
    m.register_buffer("w", T(w))
    P.weight_norm(m, "w", dim=dim)
    assert_values(m.w, w, rtol=1e-13, atol=1e-15)
    m.w = T(2.0 * w)
    axes = tuple(a for a in range(w.ndim) if dim == -1 or a != dim % w.ndim)
    norms = np.sqrt(np.sum(4.0 * w * w, axis=axes, keepdims=dim != -1))
    assert_values(m.parametrizations.w.original0, norms, rtol=1e-13, atol=1e-15)
    assert_values(m.w, 2.0 * w, rtol=1e-13, atol=1e-15)


# ----------------------------------------------------------------------------- derivatives


def test_weight_norm_first_and_second_derivatives():
    # Through a parametrized Linear: d loss / d (g, v, input), first and second order.
    m = nn.Linear(3, 2).double()
    P.weight_norm(m, dim=0)
    lst = m.parametrizations.weight
    x = leaf(np.linspace(-1.0, 1.0, 6).reshape(2, 3))

    def f(g, v, x):
        lst._parameters["original0"], lst._parameters["original1"] = g, v
        return cr.tanh(m(x))

    g, v = leaf(N(lst.original0)), leaf(N(lst.original1))
    assert gradcheck(f, (g, v, x))
    assert gradgradcheck(f, (g, v, x))


def test_spectral_norm_first_and_second_derivatives_in_eval():
    # In eval mode u and v stay: the weight's derivative through sigma = u . (W v).
    m = nn.Linear(3, 4).double()
    P.spectral_norm(m)
    m.eval()
    lst = m.parametrizations.weight

    def f(w):
        lst._parameters["original"] = w
        return m.weight

    w = leaf(N(lst.original))
    assert gradcheck(f, (w,))
    assert gradgradcheck(f, (w,))


# ----------------------------------------------------------------------------- compile


@skip_on("jax", "dask", reason="compile runs the optimizer's in-place writes eagerly there")
@pytest.mark.parametrize("how", ["weight_norm", "spectral_norm", "legacy_spectral_norm"])
def test_a_compiled_training_step_gives_eager_values(how):
    # Three steps, spectral norm's u and v moving at each. The older forms keep the weight
    # computed by their hook on the module, which a replay would not update: compile runs
    # the step eagerly, and says so.
    def make():
        cr.random.manual_seed(5)
        model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 1)).double()
        REGISTER[how](model[0])
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            return loss

        return model, step

    (eager_model, eager), (model, step) = make(), make()
    compiled = cr.compile(step)
    rng = np.random.default_rng(3)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(3):
            x = T(rng.normal(size=(5, 3)))
            assert N(compiled(x)).tobytes() == N(eager(x)).tobytes()
            for (n, a), b in zip(model.state_dict().items(), eager_model.state_dict().values()):
                assert np.asarray(a).tobytes() == np.asarray(b).tobytes(), n
    messages = [str(w.message) for w in caught if issubclass(w.category, cr.CompileWarning)]
    if how.startswith("legacy"):
        assert len(messages) == 1 and "kept outside the function" in messages[0]
    else:
        assert messages == [] and compiled.traces == 2  # (.grad None at the first call)


# ----------------------------------------------------------------------------- legacy forms


def test_legacy_weight_norm_warns_and_is_removed():
    m = nn.Linear(3, 2).double()
    w = N(m.weight).copy()
    with pytest.warns(FutureWarning, match="parametrizations.weight_norm"):
        nn.utils.weight_norm(m)
    assert not isinstance(m.weight, nn.Parameter) and m.weight.requires_grad
    with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match="two weight_norm hooks"):
        nn.utils.weight_norm(m)
    nn.utils.remove_weight_norm(m)
    assert [n for n, _ in m.named_parameters()] == ["bias", "weight"]
    assert_values(m.weight, w)
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found"):
        nn.utils.remove_weight_norm(m)


def test_legacy_spectral_norm_is_removed():
    m = nn.Linear(3, 2).double()
    nn.utils.spectral_norm(m)
    assert list(m.state_dict()) == ["bias", "weight_orig", "weight_u", "weight_v"]
    with pytest.raises(RuntimeError, match="two spectral_norm hooks"):
        nn.utils.spectral_norm(m)
    m.eval()
    y = m(T(np.ones((1, 3))))
    weight = N(m.weight).copy()
    nn.utils.remove_spectral_norm(m)
    assert list(m.state_dict()) == ["bias", "weight"] and isinstance(m.weight, nn.Parameter)
    assert_values(m.weight, weight)
    assert_values(m(T(np.ones((1, 3)))), N(y))
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found"):
        nn.utils.remove_spectral_norm(m)


# ----------------------------------------------------------------------------- errors


def test_errors_as_pytorch():
    m = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a parametr"):
        parametrize.register_parametrization(m, "foo", Scale())
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(m, "weight", nn.Flatten(0))
    with pytest.raises(ValueError, match="does not have a parametrization on weight"):
        parametrize.remove_parametrizations(m, "weight")
    parametrize.register_parametrization(m, "weight", Double())
    with pytest.raises(RuntimeError, match="Double does not implement right_inverse"):
        m.weight = T(np.ones((2, 2)), "float32")
    with pytest.raises(KeyError, match="attribute 'weight' already exists"):
        m.weight = nn.Parameter(np.ones((2, 2)))
    with pytest.raises(ValueError, match="may not change the shape"):
        parametrize.register_parametrization(m, "weight", nn.Flatten(0))
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        P.spectral_norm(nn.Linear(2, 2), n_power_iterations=0)
    with pytest.raises(IndexError, match=r"range of \[-2, 1\] but got 3"):
        P.spectral_norm(nn.Linear(2, 2), dim=3)
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'foo'"):
        P.spectral_norm(nn.Linear(2, 2), name="foo")
    with pytest.raises(IndexError, match="Dimension out of range"):
        P.weight_norm(nn.Linear(2, 2), dim=2)
