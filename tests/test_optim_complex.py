"""Optimizers and complex parameters, as PyTorch steps them: SGD's update is linear in the
gradient, so it runs on the complex values as written; the others step the real and imaginary
parts as separate real numbers (view_as_real), their state holding real pairs. Checked against
PyTorch's recorded steps (tests/fixtures/optim_complex_torch.json) and against the same
optimizer on the pairs as a real parameter (LBFGS: tests/test_optim_lbfgs_complex.py)."""

import json
import pathlib
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import optim
from conftest import N, T, fails_on

REC = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "optim_complex_torch.json").read_text()
)
Z0 = np.array(REC["z0"][0]) + 1j * np.array(REC["z0"][1])
C = np.array(REC["c"][0]) + 1j * np.array(REC["c"][1])
CASES = [(case["optimizer"], case["kwargs"]) for case in REC["cases"]]


def loss(z, c):
    """tests/fixtures/make_optim_complex_fixtures.py's loss, in chainrule."""
    d = z - c
    return cr.sum(cr.real(d * cr.conj(d)) + 0.1 * cr.real(d) ** 3 + 0.05 * cr.imag(d) ** 4)


def stepped(name, kwargs, z0, steps):
    z = T(z0, requires_grad=True)
    opt = getattr(optim, name)([z], **kwargs)
    c = T(C.astype(z0.dtype))
    for _ in range(steps):
        opt.zero_grad()
        loss(z, c).backward()
        opt.step()
    return z, opt


@pytest.mark.parametrize("case", REC["cases"], ids=lambda c: f"{c['optimizer']}-{c['kwargs']}")
def test_a_complex_parameter_steps_as_pytorchs(case):
    z, _ = stepped(case["optimizer"], case["kwargs"], Z0, REC["steps"])
    expected = np.array(case["real"]) + 1j * np.array(case["imag"])
    # NAdam's real steps differ from PyTorch's by ~1e-9 already (its momentum products).
    atol = 2e-9 if case["optimizer"] == "NAdam" else 0
    np.testing.assert_allclose(N(z), expected, rtol=1e-13, atol=atol)


@pytest.mark.parametrize(("name", "kwargs"), CASES, ids=[f"{n}-{k}" for n, k in CASES])
def test_a_complex_parameter_steps_as_its_real_pairs_would(name, kwargs):
    z, _ = stepped(name, kwargs, Z0, 4)
    pairs = T(np.stack([Z0.real, Z0.imag], axis=-1), requires_grad=True)
    opt = getattr(optim, name)([pairs], **kwargs)
    c = T(C)
    for _ in range(4):
        opt.zero_grad()
        loss(pairs[..., 0] + 1j * pairs[..., 1], c).backward()
        opt.step()
    np.testing.assert_allclose(N(z), N(pairs[..., 0]) + 1j * N(pairs[..., 1]), rtol=1e-13)


def test_the_state_of_a_complex_parameter_holds_real_pairs_of_its_precision():
    z, opt = stepped("Adam", {"lr": 0.1, "amsgrad": True}, Z0.astype(np.complex64), 2)
    assert z.dtype == cr.complex64
    for key in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
        assert (opt.state[z][key].dtype, opt.state[z][key].shape) == (cr.float32, (2, 2, 2))


def test_a_complex_parameter_keeps_its_identity_and_graphs_that_saved_it_stay_valid():
    z = T(Z0, requires_grad=True)
    opt = optim.Adam([z], lr=0.1)
    saved = cr.sum(z * z)
    loss(z, T(C)).backward()
    opt.step()
    assert opt.param_groups[0]["params"][0] is z
    (g,) = cr.autograd.grad(saved, z, grad_outputs=cr.tensor(1.0 + 0j))
    np.testing.assert_allclose(N(g), 2 * np.conj(Z0))


_PAIRS_ON_IMMUTABLE = fails_on(
    "jax",
    "dask",
    reason="a complex parameter's real pairs are new arrays there (no views), kept in the "
    "optimizer's state: the step runs eagerly with a CompileWarning",
)


@pytest.mark.parametrize(
    "name",
    [
        pytest.param("Adam", marks=_PAIRS_ON_IMMUTABLE),
        pytest.param("RMSprop", marks=_PAIRS_ON_IMMUTABLE),
        pytest.param("RAdam", marks=_PAIRS_ON_IMMUTABLE),
        "SGD",
    ],
)
def test_a_compiled_step_of_a_complex_parameter_equals_eager(name):
    # The gradients come from eager backward passes (compile runs gradients through complex
    # values eagerly), accumulated into the same .grad tensor; the compiled function is the
    # optimizer's step.
    kwargs = dict(REC["cases"][[c["optimizer"] for c in REC["cases"]].index(name)]["kwargs"])
    z_eager, _ = stepped(name, kwargs, Z0, 7)
    z = T(Z0, requires_grad=True)
    opt = getattr(optim, name)([z], **kwargs)
    c = T(C)
    step = cr.compile(opt.step)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cr.CompileWarning)
        for _ in range(7):
            opt.zero_grad(set_to_none=False)
            loss(z, c).backward()
            step()
    np.testing.assert_array_equal(N(z), N(z_eager))


def test_a_saved_state_of_a_complex_parameter_loads_as_real_pairs():
    z, opt = stepped("Adam", {"lr": 0.1}, Z0, 2)
    saved = opt.state_dict()
    again = optim.Adam([z], lr=0.1)
    again.load_state_dict(saved)
    for key in ("exp_avg", "exp_avg_sq"):
        loaded = again.state[z][key]
        assert (loaded.dtype, loaded.shape) == (cr.float64, (2, 2, 2))
        np.testing.assert_array_equal(N(loaded), N(opt.state[z][key]))
    # PyTorch's state of a complex parameter is complex: loaded as its real pairs.
    m = opt.state[z]["exp_avg"]
    saved["state"][0]["exp_avg"] = N(m)[..., 0] + 1j * N(m)[..., 1]
    again.load_state_dict(saved)
    np.testing.assert_array_equal(N(again.state[z]["exp_avg"]), N(m))
