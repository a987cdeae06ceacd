"""nn.utils.parametrizations.orthogonal against PyTorch 2.13 (fixtures/nn_orthogonal_torch.json,
made by fixtures/make_nn_orthogonal_fixtures.py): every map, square, tall, wide, batched and
complex weights, with and without trivialization: the stored tensor, base and weight after
registration, over three SGD steps (losses, gradients, weights) and after an assignment; the
maps' first and second derivatives in both modes against finite differences, a compiled
training step against eager, and PyTorch's errors."""

import json
import pathlib
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn, optim
from chainrule.autograd import gradcheck, gradgradcheck
from chainrule.nn.utils import parametrizations as P
from chainrule.nn.utils import parametrize
from conftest import N, T, skip_on
from helpers import assert_values

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "nn_orthogonal_torch.json").read_text()
)
CASES = sorted(k for k in RECORD if k != "torch_version")
CLOSE = {"rtol": 1e-10, "atol": 1e-12}
pytestmark = skip_on(
    "dask",
    reason="Dask's qr and solve take 2-D matrices in chunks of their own shape (a matrix "
    "joined from parts, as the maps and the base's completion make, has several)",
)


def decode(value, complex_values):
    """A recorded array (complex ones as [real parts, imaginary parts])."""
    if value is None:
        return None
    if complex_values:
        return np.asarray(value[0]) + 1j * np.asarray(value[1])
    return np.asarray(value)


def _module(case):
    """A module whose parameter `weight` is the case's, parametrized as the case says, with
    PyTorch's base where it was completed by random columns."""
    m = nn.Module()
    m.weight = nn.Parameter(T(decode(case["weight"], case["complex"])))
    P.orthogonal(m, orthogonal_map=case["map"], use_trivialization=case["use_trivialization"])
    _copy_base(m, case, case["base"])
    return m


def _copy_base(m, case, base):
    if base is not None and case["shape"][-1] != case["shape"][-2]:
        m.parametrizations.weight[0].base = T(decode(base, case["complex"]))


def _orthonormal(w, complex_values):
    """Whether the columns (rows, of a wide matrix) of each matrix of w are orthonormal."""
    q = np.swapaxes(w, -1, -2) if w.shape[-2] < w.shape[-1] else w
    gram = np.swapaxes(q.conj() if complex_values else q, -1, -2) @ q
    return np.allclose(gram, np.eye(q.shape[-1]), atol=1e-12)


@pytest.mark.parametrize("name", CASES)
def test_registration_steps_and_assignment_match_pytorch(name):
    case = RECORD[name]
    c = case["complex"]
    m = _module(case)
    stored = m.parametrizations.weight.original
    assert_values(stored, decode(case["original"], c), **CLOSE)
    if case["base"] is not None:
        assert_values(m.parametrizations.weight[0].base, decode(case["base"], c), **CLOSE)
    assert_values(m.weight, decode(case["parametrized"], c), **CLOSE)
    cotangent = T(decode(case["cotangent"], c))
    opt = optim.SGD(m.parameters(), lr=0.1)
    for step in case["steps"]:
        opt.zero_grad()
        w = m.weight
        loss = cr.sum(cr.real(cotangent * w)) + cr.sum(cr.real(w) ** 3)
        loss.backward()
        np.testing.assert_allclose(float(N(loss)), step["loss"], rtol=1e-10)
        assert_values(stored.grad, decode(step["grad"], c), rtol=1e-9, atol=1e-11)
        opt.step()
        weight = N(m.weight.detach())
        np.testing.assert_allclose(weight, decode(step["parametrized"], c), rtol=1e-9, atol=1e-11)
        assert _orthonormal(weight, c)
    assigned = case["assigned"]
    value = T(decode(assigned["value"], c))
    if "error" in assigned:
        with pytest.raises(NotImplementedError, match="not possible to assign"):
            m.weight = value
        return
    m.weight = value
    assert_values(stored, decode(assigned["original"], c), **CLOSE)
    _copy_base(m, case, assigned["base"])
    assert_values(m.weight, decode(assigned["parametrized"], c), **CLOSE)


def test_registration_layout_and_the_default_map():
    m = P.orthogonal(nn.Linear(3, 3, bias=False))
    assert parametrize.is_parametrized(m, "weight")
    assert sorted(m.state_dict()) == [
        "parametrizations.weight.0.base",
        "parametrizations.weight.original",
    ]
    assert m.parametrizations.weight[0].orthogonal_map == "matrix_exp"
    assert P.orthogonal(nn.Linear(3, 5)).parametrizations.weight[0].orthogonal_map == (
        "householder"
    )
    plain = P.orthogonal(nn.Linear(2, 3), "weight", "cayley", use_trivialization=False)
    assert sorted(plain.state_dict()) == ["bias", "parametrizations.weight.original"]


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "cayley", "householder"])
@pytest.mark.parametrize("shape", [(3, 3), (3, 2), (2, 3)])
def test_maps_first_and_second_derivatives_in_both_modes(orthogonal_map, shape):
    rng = np.random.default_rng(5)
    orth = P._Orthogonal(T(np.zeros(shape)), orthogonal_map, use_trivialization=False)
    x = T(rng.normal(size=shape) * 0.5, requires_grad=True)
    assert gradcheck(orth, (x,), eps=1e-6, check_forward_ad=True)
    assert gradgradcheck(orth, (x,), eps=1e-6, check_fwd_over_rev=True)


def test_complex_maps_first_derivatives():
    rng = np.random.default_rng(6)
    for orthogonal_map in ("matrix_exp", "cayley"):
        orth = P._Orthogonal(T(np.zeros((2, 2), complex)), orthogonal_map, use_trivialization=False)
        x = T(rng.normal(size=(2, 2)) + 1j * rng.normal(size=(2, 2)), requires_grad=True)
        assert gradcheck(orth, (x,), eps=1e-6, check_forward_ad=True)


@pytest.mark.parametrize("orthogonal_map", ["matrix_exp", "householder"])
def test_a_compiled_training_step_gives_eager_values(orthogonal_map):
    def make():
        model = nn.Sequential(nn.Linear(3, 3), nn.Tanh(), nn.Linear(3, 1))
        with cr.no_grad():
            model[0].weight.copy_(T(np.arange(9.0).reshape(3, 3) / 10 - 0.3))
            model[2].weight.copy_(T([[0.5, -0.25, 1.0]]))
            model[0].bias.copy_(T([0.1, 0.0, -0.2]))
            model[2].bias.copy_(T([0.3]))
        P.orthogonal(model[0], orthogonal_map=orthogonal_map)
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
    with warnings.catch_warnings():
        warnings.simplefilter("error", cr.CompileWarning)
        for _ in range(3):
            x = T(rng.normal(size=(5, 3)))
            np.testing.assert_allclose(N(compiled(x)), N(eager(x)), rtol=1e-13)
    for (n, a), b in zip(model.state_dict().items(), eager_model.state_dict().values()):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-13, atol=1e-15, err_msg=n)


def test_errors_as_pytorch():
    with pytest.raises(
        ValueError, match="Expected a matrix or batch of matrices. Got a tensor of 1"
    ):
        P.orthogonal(nn.Linear(3, 2), "bias")
    with pytest.raises(ValueError, match='has to be one of "matrix_exp", "cayley", "householder"'):
        P.orthogonal(nn.Linear(3, 2), orthogonal_map="qr")
    with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
        P.orthogonal(nn.Linear(3, 2), "w")
    m = nn.Module()
    m.weight = nn.Parameter(T(np.eye(2, dtype=complex)))
    with pytest.raises(ValueError, match="householder parametrization does not support complex"):
        P.orthogonal(m, orthogonal_map="householder")
    m = P.orthogonal(nn.Linear(3, 3))
    with pytest.raises(ValueError, match=r"Expected a matrix or batch of matrices of shape"):
        m.weight = T(np.eye(2))
