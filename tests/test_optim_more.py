"""optim.ASGD and optim.Rprop: trajectories, state and a state dict saved half way, against
PyTorch's (fixtures/optim_more_torch.json, recorded by fixtures/make_optim_more_fixtures.py),
complex parameters, their groups' keys and checks, hand-checked steps (Rprop's step sizes,
ASGD's average), and compiled training steps equal to eager ones bit for bit, with a
scheduler between calls and two steps in one call (RAdam's too, whose rectification starts
at a step count)."""

import json
import pathlib
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import optim
from conftest import N, T

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "optim_more_torch.json").read_text()
)
CASES = RECORD["cases"]


def _kwargs(case):
    return {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}


def _trainer(case, w, b):
    """The recorded optimizer of w and b (b's group at half the learning rate) and its
    training step."""
    kwargs = _kwargs(case)
    groups = [{"params": [w]}, {"params": [b], "lr": kwargs["lr"] / 2}]
    opt = getattr(optim, case["class"])(groups, **kwargs)
    x, y = T(RECORD["x"]), T(RECORD["y"])

    def step():
        opt.zero_grad()
        loss = cr.mean((cr.tanh(x @ w + b) - y) ** 2)
        loss.backward()
        opt.step()
        return loss.item()

    return opt, step


def _check_state(opt, params, recorded):
    for i, p in enumerate(params):
        state = opt.state[p]
        assert list(state) == list(recorded[str(i)])  # PyTorch's keys, in its order
        for k, v in recorded[str(i)].items():
            got = N(state[k]) if isinstance(state[k], cr.Tensor) else state[k]
            np.testing.assert_allclose(got, v, rtol=1e-10, atol=1e-13, err_msg=k)


@pytest.mark.parametrize("name", sorted(CASES))
def test_trajectory_and_state_match_pytorch(name):
    case = CASES[name]
    w, b = T(RECORD["w"], requires_grad=True), T(RECORD["b"], requires_grad=True)
    opt, step = _trainer(case, w, b)
    losses = [step() for _ in range(RECORD["steps"])]
    np.testing.assert_allclose(losses, case["losses"], rtol=1e-12)
    np.testing.assert_allclose(N(w.detach()), case["w"], rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(N(b.detach()), case["b"], rtol=1e-10, atol=1e-13)
    _check_state(opt, (w, b), case["state"])
    assert type(opt.state[w]["step"]) is int


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_pytorch_state_dict_saved_half_way_continues_its_trajectory(name):
    # PyTorch's state dict (its step, eta and mu as 0-d arrays) loads, and the steps after it
    # are PyTorch's.
    case, half = CASES[name], CASES[name]["half"]
    w, b = T(half["w"], requires_grad=True), T(half["b"], requires_grad=True)
    opt, step = _trainer(case, w, b)
    saved = opt.state_dict()
    saved["state"] = {
        int(i): {k: np.asarray(v) for k, v in s.items()} for i, s in half["state"].items()
    }
    opt.load_state_dict(saved)
    assert opt.state[w]["step"] == RECORD["half"] and type(opt.state[w]["step"]) is int
    losses = [step() for _ in range(RECORD["steps"] - RECORD["half"])]
    np.testing.assert_allclose(losses, case["losses"][RECORD["half"] :], rtol=1e-12)
    np.testing.assert_allclose(N(w.detach()), case["w"], rtol=1e-10, atol=1e-13)
    _check_state(opt, (w, b), case["state"])


@pytest.mark.parametrize("name", sorted(RECORD["complex"]))
def test_a_complex_parameter_steps_as_pytorchs(name):
    # Stepped as real pairs (PyTorch's view_as_real), the state holding pairs.
    case = RECORD["complex"][name]
    z0 = np.array(RECORD["z0"][0]) + 1j * np.array(RECORD["z0"][1])
    c = T(np.array(RECORD["c"][0]) + 1j * np.array(RECORD["c"][1]))
    z = T(z0, requires_grad=True)
    opt = getattr(optim, case["class"])([z], **_kwargs(case))
    for _ in range(RECORD["steps"]):
        opt.zero_grad()
        d = z - c
        cr.sum(cr.real(d * cr.conj(d)) + 0.1 * cr.real(d) ** 3 + 0.05 * cr.imag(d) ** 4).backward()
        opt.step()
    expected = np.array(case["real"]) + 1j * np.array(case["imag"])
    np.testing.assert_allclose(N(z.detach()), expected, rtol=1e-13)
    key = "ax" if case["class"] == "ASGD" else "step_size"
    assert opt.state[z][key].shape == (2, 2, 2)


GROUP_KEYS = {
    "ASGD": ["alpha", "capturable", "differentiable", "foreach", "lambd", "lr", "maximize", "t0",
             "weight_decay"],
    "Rprop": ["capturable", "differentiable", "etas", "foreach", "lr", "maximize",
              "step_sizes"],
}  # fmt: skip


@pytest.mark.parametrize("cls", sorted(GROUP_KEYS))
def test_groups_have_pytorchs_keys_and_defaults(cls):
    p = T([1.0, 2.0], requires_grad=True)
    opt = getattr(optim, cls)([p])
    group = {k: v for k, v in opt.param_groups[0].items() if k != "params"}
    assert sorted(group) == GROUP_KEYS[cls]
    common = {"lr": 1e-2, "foreach": None, "maximize": False, "differentiable": False}
    if cls == "ASGD":
        assert group == common | {
            "lambd": 1e-4, "alpha": 0.75, "t0": 1e6, "weight_decay": 0.0, "capturable": False,
        }  # fmt: skip
    else:
        assert group == common | {"etas": (0.5, 1.2), "step_sizes": (1e-6, 50), "capturable": False}


def test_bad_hyperparameters_get_pytorchs_errors():
    p = [T([1.0], requires_grad=True)]
    with pytest.raises(ValueError, match="Invalid learning rate: -0.1"):
        optim.ASGD(p, lr=-0.1)
    with pytest.raises(ValueError, match="Invalid weight_decay value: -1"):
        optim.ASGD(p, weight_decay=-1)
    with pytest.raises(ValueError, match="Invalid learning rate: -0.1"):
        optim.Rprop(p, lr=-0.1)
    for etas in [(0.0, 1.2), (0.5, 1.0), (1.2, 0.5)]:
        with pytest.raises(ValueError, match=f"Invalid eta values: {etas[0]}, {etas[1]}"):
            optim.Rprop(p, etas=etas)
    with pytest.raises(
        TypeError, match="takes from 2 to 5 positional"
    ):  # Rprop's options by keyword
        optim.Rprop(p, 0.1, (0.5, 1.2), (1e-6, 50), True)
    for cls in (optim.ASGD, optim.Rprop):
        with pytest.raises(NotImplementedError, match="differentiable=True"):
            cls(p, differentiable=True)


@pytest.mark.parametrize("cls", ["ASGD", "Rprop"])
def test_foreach_and_capturable_are_kept_and_change_no_number(cls):
    runs = []
    for options in ({}, {"foreach": True, "capturable": True}):
        w = T([0.5, -1.5, 2.0], requires_grad=True)
        opt = getattr(optim, cls)([w], lr=0.05, **options)
        for _ in range(4):
            opt.zero_grad()
            cr.sum(cr.sin(w) * w).backward()
            opt.step()
        assert all(opt.param_groups[0][k] == v for k, v in options.items())
        runs.append(N(w.detach()))
    np.testing.assert_array_equal(runs[0], runs[1])


def test_rprop_step_sizes_follow_the_gradients_signs():
    # Hand-worked: lr 0.1, etas (0.5, 1.2); the gradients' signs per step, per element.
    p = T([0.0, 0.0, 0.0], requires_grad=True)
    opt = optim.Rprop([p], lr=0.1, step_sizes=(0.04, 0.11))
    grads = [[1.0, 1.0, 0.0], [2.0, -1.0, 3.0], [1.0, 5.0, -3.0], [-1.0, 1.0, 1.0]]
    sizes, moves = [], []
    for g in grads:
        before = N(p.detach()).copy()
        p.grad = T(g)
        opt.step()
        sizes.append(N(opt.state[p]["step_size"]).tolist())
        moves.append((N(p.detach()) - before).tolist())
    # Element 0: same sign twice, 0.1 * 1.2 = 0.12 limited to 0.11; then 0.11 (max); then a
    # sign change: 0.055, no move. Element 1: a sign change at step 2 (0.05, no move, prev
    # taken as 0), so step 3 keeps 0.05; then the same sign: 0.06. Element 2: 0 at step 1
    # (factor 1, no move), then 3 and -3 (0.05 after 0.1, no move), then 1 after the 0 kept.
    np.testing.assert_allclose(
        sizes,
        [[0.1, 0.1, 0.1], [0.11, 0.05, 0.1], [0.11, 0.05, 0.05], [0.055, 0.06, 0.05]],
        rtol=1e-15,
    )
    np.testing.assert_allclose(
        moves,
        [[-0.1, -0.1, 0.0], [-0.11, 0.0, -0.1], [-0.11, -0.05, 0.0], [0.0, -0.06, -0.05]],
        rtol=1e-13,
    )
    assert N(opt.state[p]["prev"]).tolist() == [0.0, 1.0, 1.0]
    assert opt.state[p]["step"] == 4


def test_asgd_averages_the_parameters_from_step_t0_plus_2():
    # mu = 1 / max(1, t - t0) after step t: ax copies p through step t0 + 2, then is the mean
    # of the parameters since that step.
    w = T([1.0, -2.0], requires_grad=True)
    opt = optim.ASGD([w], lr=0.1, t0=2)
    seen = []
    for t in range(1, 8):
        opt.zero_grad()
        cr.sum(w**4).backward()
        opt.step()
        seen.append(N(w.detach()).copy())
        assert opt.state[w]["mu"] == 1 / max(1, t - 2)
        assert opt.state[w]["eta"] == 0.1 / (1 + 1e-4 * 0.1 * t) ** 0.75
        expected = seen[-1] if t <= 4 else np.mean(seen[3:], axis=0)
        np.testing.assert_allclose(N(opt.state[w]["ax"]), expected, rtol=1e-14)
    assert not np.allclose(seen[-1], N(opt.state[w]["ax"]))  # the parameters are not averaged


# --------------------------------------------------------------------- compiled training steps

COMPILED = {
    # t0=2: the average starts at step 5, inside the calls (one or two steps a call).
    "asgd": lambda ps: optim.ASGD(ps, lr=0.05, lambd=0.01, t0=2, weight_decay=0.1),
    "asgd-maximize": lambda ps: optim.ASGD(ps, lr=0.02, t0=3, maximize=True),
    "rprop": lambda ps: optim.Rprop(ps, lr=0.02, etas=(0.4, 1.3), step_sizes=(1e-3, 0.05)),
    # Rectified from step 6 (betas[1] = 0.9): with two steps a call, between the two steps of
    # call 3, which a guard checked before the call missed (a stale unrectified step).
    "radam": lambda ps: optim.RAdam(ps, lr=0.02, betas=(0.9, 0.9)),
}


@pytest.mark.parametrize("steps", [1, 2], ids=["one step a call", "two steps a call"])
@pytest.mark.parametrize("name", sorted(COMPILED))
def test_a_compiled_training_step_equals_eagers_bit_for_bit(name, steps):
    """float32 parameters; the learning rate changed by a scheduler between calls (ASGD's eta
    follows it, Rprop's sizes do not); parameters, losses and every state entry equal eager's
    after each call, and nothing runs eagerly."""
    rng = np.random.default_rng(3)
    x, y = rng.normal(size=(6, 3)), rng.normal(size=(6, 2))
    w0, b0 = rng.normal(size=(3, 2)), rng.normal(size=(2,))
    x, y = T(x, dtype=np.float32), T(y, dtype=np.float32)

    def trainer():
        w = T(w0, dtype=np.float32, requires_grad=True)
        b = T(b0, dtype=np.float32, requires_grad=True)
        opt = COMPILED[name]([w, b])
        sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)

        def step(x, y):
            for _ in range(steps):
                opt.zero_grad()
                loss = cr.mean((cr.tanh(x @ w + b) - y) ** 2)
                loss.backward()
                opt.step()
            return loss.detach()

        return (w, b), opt, sched, step

    (params, opt, sched, eager), (params2, opt2, sched2, compiled) = trainer(), trainer()
    compiled = cr.compile(compiled)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cr.CompileWarning)
        for _ in range(6):
            assert np.array_equal(N(compiled(x, y)), N(eager(x, y)))
            for p, q in zip(params2, params):
                assert np.array_equal(N(p), N(q))
                assert opt2.state[p].keys() == opt.state[q].keys()
                for k, v in opt.state[q].items():
                    got = opt2.state[p][k]
                    assert np.array_equal(N(got), N(v)) if isinstance(v, cr.Tensor) else got == v
            sched.step()
            sched2.step()
    assert compiled.traces == 2  # .grad None at the first call; the state made by it
