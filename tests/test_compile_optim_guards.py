"""chainrule.compile's guard on a traced optimizer step (one per parameter group): a change
between calls to what any parameter's update branches on (a weight decay turned on, maximize,
a state replaced) traces again, and the compiled steps stay eager's, bit for bit."""

import numpy as np

import chainrule as cr
from chainrule import optim
from conftest import N, T

RNG = np.random.default_rng(11)


def _pair(make_opt):
    """Two trainers of the same two parameters (one group): eager, and compiled."""

    def trainer():
        w = T(np.array([1.0, -2.0, 0.5]), requires_grad=True)
        b = T(np.array([0.25]), requires_grad=True)
        opt = make_opt([w, b])

        def step(x):
            opt.zero_grad()
            cr.sum((w * x + b) ** 2).backward()
            opt.step()
            return w.detach(), b.detach()

        return opt, (w, b), step

    (opt, params, eager), (opt2, params2, compiled) = trainer(), trainer()
    return (opt, params, eager), (opt2, params2, cr.compile(compiled))


def _same_step(eager, compiled) -> None:
    x = RNG.normal(size=3)
    for got, want in zip(compiled(T(x)), eager(T(x))):
        np.testing.assert_array_equal(N(got), N(want))


def test_a_group_setting_changed_between_calls_traces_again():
    (opt, _, eager), (opt2, _, compiled) = _pair(lambda ps: optim.Adam(ps, lr=0.1))
    for i in range(10):
        if i == 4:  # the update now adds weight_decay * p
            opt.param_groups[0]["weight_decay"] = opt2.param_groups[0]["weight_decay"] = 0.1
        if i == 6:  # the gradients are negated
            opt.param_groups[0]["maximize"] = opt2.param_groups[0]["maximize"] = True
        if i == 8:  # as at first: the first replayed recording holds again
            for o in (opt, opt2):
                o.param_groups[0].update(weight_decay=0.0, maximize=False)
        _same_step(eager, compiled)
    assert compiled.traces == 4  # .grad None, the state made, weight decay, maximize


def test_the_state_of_the_last_parameter_of_a_group_replaced_traces_again():
    (opt, (_, b), eager), (opt2, (_, b2), compiled) = _pair(lambda ps: optim.Adam(ps, lr=0.1))
    for i in range(7):
        if i == 4:  # a new state dict for b only: the replay would update the old one
            opt.state[b] = dict(opt.state[b])
            opt2.state[b2] = dict(opt2.state[b2])
        _same_step(eager, compiled)
        assert opt2.state[b2]["step"] == opt.state[b]["step"]
    assert compiled.traces == 3
