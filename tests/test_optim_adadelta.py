"""optim.Adadelta, which the port of pytorch/examples' mnist needed: trajectories (losses and
parameters, two parameter groups) against PyTorch's (fixtures/ports_gaps_torch.json,
recorded by fixtures/make_ports_gaps_fixtures.py), its groups' keys, its checks, and a
compiled step equal to the eager one."""

import json
import pathlib

import numpy as np
import pytest

import chainrule as cr
from chainrule import optim
from conftest import N, T

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "ports_gaps_torch.json").read_text()
)["adadelta"]


def _loss(x, y, w, b):
    return cr.mean((cr.tanh(x @ w + b) - y) ** 2)


@pytest.mark.parametrize("name", RECORD)
def test_adadelta_trajectory_matches_pytorch(name):
    case = RECORD[name]
    x, y = T(case["x"]), T(case["y"])
    w, b = T(case["w"], requires_grad=True), T(case["b"], requires_grad=True)
    opt = optim.Adadelta([{"params": [w]}, {"params": [b], "lr": 0.3}], **case["kwargs"])
    losses = []
    for _ in case["losses"]:
        opt.zero_grad()
        loss = _loss(x, y, w, b)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    np.testing.assert_allclose(losses, case["losses"], rtol=1e-12)
    np.testing.assert_allclose(N(w.detach()), case["w_after"], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(N(b.detach()), case["b_after"], rtol=1e-10, atol=1e-13)


def test_adadelta_groups_state_and_checks():
    p = T(np.zeros(2), requires_grad=True)
    opt = optim.Adadelta([p])
    group = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
    assert group == {
        "lr": 1.0, "rho": 0.9, "eps": 1e-6, "weight_decay": 0.0, "foreach": None,
        "capturable": False, "maximize": False, "differentiable": False,
    }  # fmt: skip
    p.grad = T(np.ones(2))
    opt.step()
    assert sorted(opt.state[p]) == ["acc_delta", "square_avg", "step"]
    with pytest.raises(ValueError, match="Invalid rho value: 1.5"):
        optim.Adadelta([p], rho=1.5)
    with pytest.raises(ValueError, match="Invalid learning rate: -1.0"):
        optim.Adadelta([p], lr=-1.0)
    with pytest.raises(NotImplementedError, match="differentiable=True"):
        optim.Adadelta([p], differentiable=True)


def test_a_compiled_adadelta_step_equals_the_eager_one():
    case = RECORD["options"]
    x, y = T(case["x"]), T(case["y"])
    runs = []
    for compiled in (False, True):
        w, b = T(case["w"], requires_grad=True), T(case["b"], requires_grad=True)
        opt = optim.Adadelta([w, b], **case["kwargs"])

        def step(x, y, w=w, b=b, opt=opt):
            opt.zero_grad()
            loss = _loss(x, y, w, b)
            loss.backward()
            opt.step()
            return loss

        step = cr.compile(step) if compiled else step
        runs.append([step(x, y).item() for _ in range(4)] + N(w.detach()).ravel().tolist())
    np.testing.assert_allclose(runs[1], runs[0], rtol=1e-13, atol=1e-15)
