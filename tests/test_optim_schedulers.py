"""chainrule.optim.lr_scheduler against PyTorch 2.13 (fixtures/schedulers_torch.json, made
by fixtures/make_scheduler_fixtures.py): MultiplicativeLR, ConstantLR, PolynomialLR, CyclicLR
(and its momenta) and ChainedScheduler alone, together, in SequentialLR and stepped to
epochs; every scheduler made with `last_epoch` to resume a schedule; state dict round trips;
the errors."""

import json
import pathlib

import numpy as np
import pytest

from chainrule import optim
from chainrule.optim import lr_scheduler as S
from conftest import T

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "schedulers_torch.json").read_text()
)
SEQUENCES, RESUMED = RECORD["sequences"], RECORD["resumed"]


def _optimizer():
    a, b = T(np.zeros(2), requires_grad=True), T(np.zeros(3), requires_grad=True)
    return optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.05}], lr=0.1, momentum=0.9)


def _lrs(opt):
    return [g["lr"] for g in opt.param_groups] + [g["momentum"] for g in opt.param_groups]


def _schedulers(sources, opt):
    env = {"S": S, "opt": opt}
    return [eval(source, env) for source in sources]


def _run(case, steps, resume_at=None):
    opt = _optimizer()
    schedulers = _schedulers(case["sources"], opt)
    out = []
    for i in range(steps):
        if i == resume_at:  # a new optimizer and new schedulers, then their state dicts
            saved = [s.state_dict() for s in schedulers]
            state = opt.state_dict()
            opt = _optimizer()
            schedulers = _schedulers(case["sources"], opt)
            opt.load_state_dict(state)
            for s, sd in zip(schedulers, saved):
                s.load_state_dict(sd)
        out.append(_lrs(opt))
        opt.step()
        epochs = case["epochs"]
        for s in schedulers:
            s.step() if epochs is None else s.step(epochs[i])
    out.append(_lrs(opt))
    return out, schedulers


@pytest.mark.parametrize("name", sorted(SEQUENCES))
def test_schedules_match_pytorch(name):
    case = SEQUENCES[name]
    out, schedulers = _run(case, case["steps"])
    np.testing.assert_allclose(out, case["lrs"], rtol=1e-13, atol=0)
    np.testing.assert_allclose(schedulers[-1].get_last_lr(), case["last_lr"], rtol=1e-13)


@pytest.mark.parametrize(
    "name", sorted(n for n, case in SEQUENCES.items() if case["epochs"] is None)
)
def test_a_schedule_resumed_from_state_dicts_is_the_same(name):
    case = SEQUENCES[name]
    uninterrupted, _ = _run(case, case["steps"])
    resumed, _ = _run(case, case["steps"], resume_at=4)
    assert resumed == uninterrupted
    np.testing.assert_allclose(resumed, case["lrs"], rtol=1e-13, atol=0)


@pytest.mark.parametrize("name", sorted(RESUMED))
def test_a_scheduler_made_with_last_epoch_resumes_as_pytorchs(name):
    # ExponentialLR and LinearLR made with last_epoch changed the lr on construction (one
    # factor too many: PyTorch keeps the lrs of the step made on construction).
    source = RESUMED[name]["source"]
    opt = _optimizer()
    env = {"S": S, "opt": opt}
    first = eval(source.format(""), env)
    for _ in range(4):
        opt.step()
        first.step()
    second = eval(source.format(", last_epoch=3"), env)
    out = [_lrs(opt)]
    for _ in range(8):
        opt.step()
        second.step()
        out.append(_lrs(opt))
    np.testing.assert_allclose(out, RESUMED[name]["lrs"], rtol=1e-13, atol=0)


def test_the_new_schedulers_check_their_arguments_with_pytorchs_words():
    opt = _optimizer()
    with pytest.raises(ValueError, match="Constant multiplicative factor expected to be"):
        S.ConstantLR(opt, factor=1.5)
    with pytest.raises(ValueError, match="Expected 2 lr_lambdas, but got 1"):
        S.MultiplicativeLR(opt, [lambda e: 0.9])
    with pytest.raises(ValueError, match="expects at least one scheduler to be chained"):
        S.ChainedScheduler([])
    with pytest.raises(ValueError, match="does not support `ReduceLROnPlateau`"):
        S.ChainedScheduler([S.ReduceLROnPlateau(opt)])
    with pytest.raises(ValueError, match="expects all schedulers to belong to the same optimizer"):
        S.ChainedScheduler([S.ExponentialLR(opt, 0.9), S.ExponentialLR(_optimizer(), 0.9)])


def test_cyclic_lr_checks_its_arguments_and_keeps_its_scale_function_out_of_its_state():
    opt = _optimizer()
    with pytest.raises(ValueError, match="mode is invalid and scale_fn is None"):
        S.CyclicLR(opt, 0.01, 0.1, mode="sine")
    adagrad = optim.Adagrad([T(np.zeros(2), requires_grad=True)])
    with pytest.raises(ValueError, match="optimizer must support momentum or beta1"):
        S.CyclicLR(adagrad, 0.01, 0.1)
    scheduler = S.CyclicLR(opt, 0.01, 0.1, scale_fn=lambda x: 0.5, cycle_momentum=False)
    state = scheduler.state_dict()
    assert state["_scale_fn_custom"] is None
    again = S.CyclicLR(_optimizer(), 0.01, 0.1, scale_fn=lambda x: 0.5, cycle_momentum=False)
    again.load_state_dict(state)
    assert again.scale_fn(3) == 0.5


def test_sequential_and_chained_schedulers_take_no_epoch_as_pytorchs():
    # SequentialLR.step(epoch) ignored the epoch; PyTorch's takes none.
    opt = _optimizer()
    sequential = S.SequentialLR(opt, [S.ConstantLR(opt), S.ExponentialLR(opt, 0.9)], [2])
    with pytest.raises(TypeError):
        sequential.step(5)
    with pytest.raises(TypeError):
        S.ChainedScheduler([S.ExponentialLR(opt, 0.9)]).step(5)


def test_state_dicts_leave_out_the_functions():
    opt = _optimizer()
    state = S.MultiplicativeLR(opt, lambda e: 0.9).state_dict()
    assert "lr_lambdas" not in state and "optimizer" not in state
    chained = S.ChainedScheduler([S.ConstantLR(opt), S.MultiplicativeLR(opt, lambda e: 0.5)])
    assert [sorted(s) for s in chained.state_dict()["_schedulers"]] == [
        sorted(s.state_dict()) for s in chained._schedulers
    ]
