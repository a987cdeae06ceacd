"""A compiled function that reads gradients an eager backward made outside it (the common
`step = cr.compile(opt.step)` between eager `loss.backward()` calls): each call must step with
that call's gradients. A `.grad` read through `detach()` (as every optimizer reads it) was a
constant of the trace: every replay stepped with the first call's gradients, silently."""

import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import optim
from conftest import N, T

OPTIMIZERS = {
    "adam": lambda ps: optim.Adam(ps, lr=0.05),
    "sgd-momentum": lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9),
    "rmsprop": lambda ps: optim.RMSprop(ps, lr=0.01),
}


def _train(make, compiled: bool, set_to_none, manual: str | None = None):
    w = T([0.5, -1.0, 2.0], requires_grad=True)
    target = T([1.0, 2.0, -1.0])
    opt = make([w])

    def by_hand():
        with cr.no_grad():
            if manual == "data":
                w.data -= 0.1 * w.grad.data
            else:
                w.sub_(0.1 * w.grad.detach())

    fn = opt.step if manual is None else by_hand
    step = cr.compile(fn) if compiled else fn
    for i in range(6):
        opt.zero_grad(set_to_none=set_to_none(i))
        loss = cr.sum((w - target) ** 2 * (i + 1))
        loss.backward()
        step()
    return N(w.detach())


SET_TO_NONE = {
    "set-to-none": lambda i: True,
    "zeroed-in-place": lambda i: False,
    "alternating": lambda i: i % 2 == 0,
}


@pytest.mark.parametrize("zeroing", list(SET_TO_NONE))
@pytest.mark.parametrize("name", list(OPTIMIZERS))
def test_a_compiled_optimizer_step_uses_each_calls_gradients(name, zeroing):
    make, how = OPTIMIZERS[name], SET_TO_NONE[zeroing]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cr.CompileWarning)
        got = _train(make, True, how)
    np.testing.assert_array_equal(got, _train(make, False, how))


@pytest.mark.parametrize("manual", ["detach", "data"])
@pytest.mark.parametrize("zeroing", list(SET_TO_NONE))
def test_a_compiled_update_by_hand_uses_each_calls_gradients(manual, zeroing):
    make, how = OPTIMIZERS["adam"], SET_TO_NONE[zeroing]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", cr.CompileWarning)
        got = _train(make, True, how, manual)
    np.testing.assert_array_equal(got, _train(make, False, how, manual))
