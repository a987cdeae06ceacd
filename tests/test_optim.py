"""chainrule.optim: the same trajectories as PyTorch's optimizers from the same initial
weights, and each step's learning rates and momenta of the schedulers, recorded from PyTorch
(fixtures/torch_reference.npz, made by fixtures/make_torch_fixtures.py, and
fixtures/optim_torch.json, made by fixtures/make_optim_fixtures.py); parameter groups, skipped
parameters, zero_grad, state dicts, closures and the constructors' errors."""

import json
import math
import pathlib
import types

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import optim
from chainrule.optim import lr_scheduler
from conftest import N, T

# ---------------------------------------- SGD, Adam, AdamW, RMSprop and schedulers (.npz record)

REF = np.load(pathlib.Path(__file__).parent / "fixtures" / "torch_reference.npz")
CONFIGS = json.loads(str(REF["opt/configs"]))
NAMES = ("w1", "b1", "w2", "b2")


def _model_params():
    return {k: T(REF[f"opt/init/{k}"], requires_grad=True) for k in NAMES}


def _loss(params):
    x, y = T(REF["opt/x"]), T(REF["opt/y"])
    h = cr.tanh(x @ params["w1"].T + params["b1"])
    return F.mse_loss(h @ params["w2"].T + params["b2"], y)


def _train(opt, params, steps):
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = _loss(params)
        losses.append(loss.item())
        loss.backward()
        opt.step()
    return losses


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_trajectory_matches_pytorch(name):
    cls, kwargs = CONFIGS[name]
    if "betas" in kwargs:
        kwargs["betas"] = tuple(kwargs["betas"])
    params = _model_params()
    originals = dict(params)
    opt = getattr(optim, cls)(list(params.values()), **kwargs)
    losses = _train(opt, params, len(REF[f"opt/{name}/losses"]))
    np.testing.assert_allclose(losses, REF[f"opt/{name}/losses"], rtol=1e-12)
    for k in NAMES:
        assert params[k] is originals[k] and params[k].is_leaf
        np.testing.assert_allclose(N(params[k]), REF[f"opt/{name}/{k}"], rtol=1e-10, atol=1e-13)


def test_adamw_defaults_to_weight_decay_one_hundredth():
    p = T([1.0], requires_grad=True)
    assert optim.AdamW([p]).param_groups[0]["weight_decay"] == 0.01
    assert optim.Adam([p]).param_groups[0]["weight_decay"] == 0.0


def test_param_groups_override_defaults_and_get_their_own_lr():
    params = _model_params()
    opt = optim.SGD(
        [{"params": [params["w1"], params["b1"]]}, {"params": [params["w2"]], "lr": 0.0}],
        lr=0.1,
    )
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.0]
    before = N(params["w2"]).copy()
    w1_before = N(params["w1"]).copy()
    _train(opt, params, 1)
    np.testing.assert_array_equal(N(params["w2"]), before)
    assert not np.array_equal(N(params["w1"]), w1_before)
    assert params["b2"].grad is not None  # b2 is in no group: it has a gradient, not an update
    np.testing.assert_array_equal(N(params["b2"]), REF["opt/init/b2"])


def test_parameters_whose_grad_is_none_are_skipped():
    used, unused = T([1.0, 2.0], requires_grad=True), T([3.0], requires_grad=True)
    opt = optim.Adam([used, unused], lr=0.1, weight_decay=0.5)
    cr.sum(used * used).backward()
    opt.step()
    assert N(unused).tolist() == [3.0]
    assert unused not in opt.state and "exp_avg" in opt.state[used]


@pytest.mark.parametrize("cls", [optim.SGD, optim.Adam, optim.AdamW, optim.RMSprop])
def test_zero_grad_sets_none_or_zeroes_the_same_gradient_in_place(cls):
    p = T([1.0, 2.0], requires_grad=True)
    opt = cls([p], lr=0.1)
    cr.sum(p * p).backward()
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and N(g).tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


def test_state_dict_round_trip_continues_the_same_trajectory_and_restores_lr():
    params = _model_params()
    opt = optim.Adam(list(params.values()), lr=0.05, amsgrad=True)
    _train(opt, params, 3)
    saved = opt.state_dict()
    saved_values = {k: N(p).copy() for k, p in params.items()}
    assert saved["param_groups"][0]["params"] == [0, 1, 2, 3]
    assert saved["state"][0]["step"] == 3
    _train(opt, params, 3)
    continued = {k: N(p).copy() for k, p in params.items()}

    fresh = {k: T(v, requires_grad=True) for k, v in saved_values.items()}
    opt2 = optim.Adam(list(fresh.values()), lr=123.0)
    opt2.load_state_dict(saved)
    assert opt2.param_groups[0]["lr"] == 0.05
    assert opt2.param_groups[0]["params"][0] is fresh["w1"]
    _train(opt2, fresh, 3)
    for k in NAMES:
        np.testing.assert_allclose(N(fresh[k]), continued[k], rtol=1e-13)


def test_a_saved_state_dict_does_not_change_with_later_steps():
    p = T([1.0, -1.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.1, momentum=0.9)
    for _ in range(2):
        opt.zero_grad()
        cr.sum(p * p).backward()
        opt.step()
    saved = opt.state_dict()
    buf = N(saved["state"][0]["momentum_buffer"]).copy()
    opt.zero_grad()
    cr.sum(p * p).backward()
    opt.step()
    np.testing.assert_array_equal(N(saved["state"][0]["momentum_buffer"]), buf)


def test_load_state_dict_accepts_numpy_state_and_checks_group_sizes():
    p = T([1.0, 2.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.1, momentum=0.5)
    opt.load_state_dict(
        {
            "state": {0: {"momentum_buffer": np.array([1.0, 1.0])}},
            "param_groups": [{"lr": 0.2, "momentum": 0.5, "dampening": 0.0,
                              "weight_decay": 0.0, "nesterov": False, "maximize": False,
                              "params": [0]}],
        }
    )  # fmt: skip
    p.grad = cr.zeros_like(p)
    opt.step()  # b = 0.5 * 1 + 0 = 0.5, p -= 0.2 * 0.5
    np.testing.assert_allclose(N(p), [0.9, 1.9])
    with pytest.raises(ValueError, match="doesn't match the size"):
        opt.load_state_dict({"state": {}, "param_groups": [{"lr": 0.1, "params": [0, 1]}]})
    with pytest.raises(ValueError, match="different number of parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})


def test_constructor_errors_are_pytorchs():
    p = T([1.0], requires_grad=True)
    with pytest.raises(ValueError, match="empty parameter list"):
        optim.SGD([])
    with pytest.raises(TypeError, match="iterable of Tensors"):
        optim.SGD(p)
    with pytest.raises(ValueError, match="Invalid learning rate: -1"):
        optim.Adam([p], lr=-1)
    with pytest.raises(ValueError, match="Nesterov momentum requires"):
        optim.SGD([p], nesterov=True)
    with pytest.raises(ValueError, match="more than one parameter group"):
        optim.SGD([{"params": [p]}, {"params": [p]}])
    with pytest.raises(ValueError, match="non-leaf"):
        optim.SGD([p * 2])
    with pytest.raises(ValueError, match="beta parameter at index 1"):
        optim.Adam([p], betas=(0.9, 1.0))


def test_step_with_a_closure_returns_its_loss():
    p = T([3.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.25)

    def closure():
        opt.zero_grad()
        loss = cr.sum(p * p)
        loss.backward()
        return loss

    assert opt.step(closure).item() == 9.0
    assert N(p).tolist() == [1.5]


@pytest.mark.parametrize("name", ["step", "cosine"])
def test_schedulers_write_the_lr_pytorch_does(name):
    p = T([0.0], requires_grad=True)
    opt = optim.SGD([p], lr=0.1)
    if name == "step":
        sched = lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
    else:
        sched = lr_scheduler.CosineAnnealingLR(opt, T_max=5, eta_min=0.01)
    lrs = []
    for _ in range(len(REF[f"lr/{name}"])):
        opt.step()
        sched.step()
        lrs.append(opt.param_groups[0]["lr"])
        assert sched.get_last_lr() == [lrs[-1]]
    np.testing.assert_allclose(lrs, REF[f"lr/{name}"], rtol=1e-14)


def test_a_scheduler_state_dict_resumes_the_schedule():
    p = T([0.0], requires_grad=True)
    opt = optim.SGD([p], lr=1.0)
    sched = lr_scheduler.StepLR(opt, step_size=2, gamma=0.1)
    sched.step()
    saved = sched.state_dict()
    assert "optimizer" not in saved
    sched.step()
    opt2 = optim.SGD([p], lr=1.0)
    sched2 = lr_scheduler.StepLR(opt2, step_size=5)
    sched2.load_state_dict(saved)
    opt2.param_groups[0]["lr"] = 1.0
    sched2.step()
    assert opt2.param_groups[0]["lr"] == pytest.approx(0.1)


# ---------------------- Adagrad, Adamax, NAdam, RAdam, LBFGS and more schedulers (optim_torch.json)

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
