"""Adagrad, Adamax, NAdam, RAdam and the schedulers LambdaLR, MultiStepLR, ExponentialLR,
LinearLR, OneCycleLR, CosineAnnealingWarmRestarts, SequentialLR and ReduceLROnPlateau against
PyTorch: trajectories from the same weights, and each step's learning rates and momenta,
recorded from PyTorch (fixtures/optim_torch.json, made by fixtures/make_optim_fixtures.py)."""

import json
import math
import pathlib
import types

import numpy as np
import pytest

import chainrule as cr
from chainrule import optim
from conftest import N, T

RECORD = json.loads((pathlib.Path(__file__).parent / "fixtures" / "optim_torch.json").read_text())
# The schedulers' sources name torch.optim.lr_scheduler: here that is chainrule's.
TORCH = types.SimpleNamespace(optim=optim)


@pytest.mark.parametrize("name", sorted(RECORD["optimizers"]))
def test_optimizer_trajectory_matches_pytorch(name):
    case = RECORD["optimizers"][name]
    params = {k: T(v, requires_grad=True) for k, v in RECORD["init"].items()}
    kwargs = {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}
    opt = getattr(optim, case["class"])(list(params.values()), **kwargs)
    x, y = T(RECORD["x"]), T(RECORD["y"])
    losses = []
    for _ in range(len(case["losses"])):
        opt.zero_grad()
        h = cr.tanh(x @ params["w1"].T + params["b1"])
        loss = cr.mean((h @ params["w2"].T + params["b2"] - y) ** 2)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    np.testing.assert_allclose(losses, case["losses"], rtol=1e-12)
    for k, v in case["params"].items():
        np.testing.assert_allclose(N(params[k].detach()), v, rtol=1e-10, atol=1e-13)


@pytest.mark.parametrize("name", sorted(RECORD["schedulers"]))
def test_scheduler_lrs_and_momenta_match_pytorch(name):
    case = RECORD["schedulers"][name]
    a, b = T(np.zeros(2), requires_grad=True), T(np.zeros(3), requires_grad=True)
    kwargs = {"momentum": 0.9} if case["optimizer"] == "SGD" else {}
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    opt = getattr(optim, case["optimizer"])(groups, lr=0.1, **kwargs)
    scheduler = eval(case["source"], {"torch": TORCH, "opt": opt, "math": math})
    for lrs, momenta in zip(case["lrs"], case["momenta"]):
        assert [g["lr"] for g in opt.param_groups] == pytest.approx(lrs, rel=1e-13, abs=1e-16)
        got = [g["betas"][0] if "betas" in g else g["momentum"] for g in opt.param_groups]
        assert got == pytest.approx(momenta, rel=1e-13)
        opt.step()
        scheduler.step()


def test_reduce_on_plateau_matches_pytorch():
    a = T(np.zeros(2), requires_grad=True)
    opt = optim.SGD([a], lr=1.0)
    scheduler = optim.lr_scheduler.ReduceLROnPlateau(
        opt, factor=0.5, patience=2, cooldown=1, min_lr=0.1
    )
    lrs = []
    for m in RECORD["plateau"]["metrics"]:
        scheduler.step(T(m))
        lrs.append(opt.param_groups[0]["lr"])
    assert lrs == pytest.approx(RECORD["plateau"]["lrs"], rel=1e-15)
    assert scheduler.get_last_lr() == [lrs[-1]]


def test_new_optimizers_and_schedulers_check_their_arguments():
    p = [T(np.zeros(1), requires_grad=True)]
    with pytest.raises(ValueError, match="Invalid learning rate"):
        optim.Adagrad(p, lr=-1.0)
    with pytest.raises(ValueError, match="Invalid beta parameter at index 1"):
        optim.NAdam(p, betas=(0.9, 1.0))
    opt = optim.SGD(p, lr=0.1)
    with pytest.raises(ValueError, match="must support momentum or beta1"):
        optim.lr_scheduler.OneCycleLR(optim.Adagrad(p), max_lr=1.0, total_steps=3)
    one_cycle = optim.lr_scheduler.OneCycleLR(opt, max_lr=1.0, total_steps=2, cycle_momentum=False)
    one_cycle.step()
    one_cycle.step()
    with pytest.raises(ValueError, match="Tried to step 3 times"):
        one_cycle.step()
    with pytest.raises(ValueError, match="one more than the number of milestone"):
        optim.lr_scheduler.SequentialLR(opt, [optim.lr_scheduler.ExponentialLR(opt, 0.5)], [1])
    with pytest.raises(ValueError, match="Factor should be < 1.0"):
        optim.lr_scheduler.ReduceLROnPlateau(opt, factor=1.0)


def test_state_dict_round_trip_of_a_new_optimizer_continues_the_trajectory():
    def run(opt_steps, params, opt):
        for _ in range(opt_steps):
            opt.zero_grad()
            cr.sum(cr.sin(params[0]) * params[0]).backward()
            opt.step()

    first = [T(np.linspace(-1, 1, 5), requires_grad=True)]
    opt = optim.NAdam(first, lr=0.1)
    run(3, first, opt)
    second = [T(N(first[0].detach()), requires_grad=True)]
    resumed = optim.NAdam(second, lr=0.1)
    resumed.load_state_dict(opt.state_dict())
    run(3, first, opt)
    run(3, second, resumed)
    np.testing.assert_array_equal(N(first[0].detach()), N(second[0].detach()))


@pytest.mark.parametrize("name", sorted(RECORD["lbfgs"]["cases"]))
def test_lbfgs_matches_pytorch_on_rosenbrock(name):
    case = RECORD["lbfgs"]["cases"][name]
    p = T(RECORD["lbfgs"]["start"], requires_grad=True)
    opt = optim.LBFGS([p], **case["kwargs"])

    def closure():
        opt.zero_grad()
        loss = cr.sum(100 * (p[1:] - p[:-1] ** 2) ** 2 + (1 - p[:-1]) ** 2)
        loss.backward()
        return loss

    for loss, point in zip(case["losses"], case["points"]):
        assert float(opt.step(closure)) == pytest.approx(loss, rel=1e-9)
        np.testing.assert_allclose(N(p.detach()), point, rtol=1e-8, atol=1e-10)
    assert opt.state[p]["func_evals"] == case["func_evals"]


def test_lbfgs_needs_a_closure_and_one_parameter_group():
    p = T(np.zeros(2), requires_grad=True)
    with pytest.raises(RuntimeError, match="needs a closure"):
        optim.LBFGS([p]).step()
    with pytest.raises(RuntimeError, match="only 'strong_wolfe'"):
        optim.LBFGS([p], line_search_fn="armijo")
    with pytest.raises(ValueError, match="parameter groups"):
        optim.LBFGS([{"params": [p]}, {"params": [T(np.zeros(1), requires_grad=True)]}])
