"""chainrule.compile against eager execution on training loops as users write them: each
compiled call (the trace, then replays with values, modes and Python state changed between
calls) gives eager's values, gradients and module state, or runs eagerly with a warning."""

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn, optim
from chainrule._compile import _program
from conftest import LIBRARY, N, T

RNG = np.random.default_rng(5)


@pytest.fixture(params=["loop", "source"])
def tier(request, monkeypatch):
    """The replay tier the calls after the first run: the loop, or the source compiled at the
    first replay."""
    monkeypatch.setattr(_program, "SOURCE_AFTER", 10**9 if request.param == "loop" else 0)
    return request.param


def _grads(params) -> list:
    return [None if p.grad is None else N(p.grad) for p in params]


def _same_grads(got: list, want: list) -> None:
    assert [g is None for g in got] == [w is None for w in want]
    for g, w in zip(got, want):
        if w is not None:
            np.testing.assert_array_equal(g, w)


def _two_leaves():
    return T(np.array([1.0, -2.0, 0.5]), requires_grad=True), T(
        np.array([0.25, 3.0, -1.0]), requires_grad=True
    )


def test_zero_grad_of_a_gradient_given_outside_after_the_trace_resets_it(tier):
    # At the trace b.grad is None (the backward inside does not reach b): zero_grad skips it.
    # A gradient given to b outside before a replay must be reset to None as eagerly.
    def trainer():
        w, b = _two_leaves()
        opt = optim.SGD([w, b], lr=0.1)

        def step(x):
            opt.zero_grad()
            cr.sum(w * x).backward()
            opt.step()

        return (w, b), step

    (params, eager), (params2, compiled) = trainer(), trainer()
    compiled = cr.compile(compiled)
    for i in range(5):
        if i == 3:
            for ps in (params, params2):
                cr.sum(ps[1] * 2.0).backward()
        x = T(RNG.normal(size=3))
        eager(x)
        compiled(x)
        _same_grads(_grads(params2), _grads(params))
        np.testing.assert_array_equal(N(params2[0].detach()), N(params[0].detach()))


def test_an_optimizer_step_skipping_a_none_gradient_steps_it_once_it_has_one(tier):
    # At the trace b.grad is None (skipped by the step); later calls are given a gradient for
    # b outside: the step must update b as eagerly.
    def trainer():
        w, b = _two_leaves()
        opt = optim.SGD([w, b], lr=0.1)
        return (w, b), opt.step

    (params, eager), (params2, compiled) = trainer(), trainer()
    compiled = cr.compile(compiled)
    for i in range(5):
        x = T(RNG.normal(size=3))
        for ps in (params, params2):
            cr.sum(ps[0] * x).backward()
            if i >= 2:
                cr.sum(ps[1] * x).backward()
        eager()
        compiled()
        for p, q in zip(params2, params):
            np.testing.assert_array_equal(N(p.detach()), N(q.detach()))


def test_requires_grad_toggled_on_a_layer_between_calls_gives_eagers_gradients(tier):
    def trainer():
        cr.random.manual_seed(0)
        m = nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1))
        opt = optim.SGD(m.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            cr.sum(m(x) ** 2).backward()
            opt.step()

        return m, step

    (m, eager), (m2, compiled) = trainer(), trainer()
    compiled = cr.compile(compiled)
    for i in range(8):
        for model in (m, m2):
            model[0].requires_grad_(i % 4 < 2)
        x = T(RNG.normal(size=(4, 2)))
        eager(x)
        compiled(x)
        _same_grads(_grads(m2.parameters()), _grads(m.parameters()))
        for p, q in zip(m2.parameters(), m.parameters()):
            np.testing.assert_array_equal(N(p.detach()), N(q.detach()))


def _batchnorm_trainer(momentum, dtype=np.float64):
    cr.random.manual_seed(0)
    m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4, momentum=momentum), nn.Linear(4, 1))
    if dtype == np.float32:
        m.float()
    opt = optim.SGD(m.parameters(), lr=0.1)

    def step(x):
        opt.zero_grad()
        loss = cr.sum(m(x) ** 2)
        loss.backward()
        opt.step()
        return loss.detach()

    return m, step


@pytest.mark.parametrize("momentum", [0.1, None])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_batchnorm_running_statistics_of_a_compiled_step_are_eagers(tier, momentum, dtype):
    # momentum=None: the cumulative average, 1 / batches seen, a different factor at each call
    (m, eager), (m2, compiled) = (
        _batchnorm_trainer(momentum, dtype),
        _batchnorm_trainer(momentum, dtype),
    )
    compiled = cr.compile(compiled)
    for _ in range(5):
        x = T(RNG.normal(size=(6, 3)).astype(dtype))
        np.testing.assert_array_equal(N(compiled(x)), N(eager(x)))
        for (k, a), (_, b) in zip(m2.state_dict().items(), m.state_dict().items()):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=k)
    assert compiled.traces == 2


@pytest.mark.parametrize("make_opt", [optim.SGD, optim.Adam], ids=["SGD", "Adam"])
@pytest.mark.parametrize("change", ["add_param_group", "append_param"])
def test_parameters_given_to_the_optimizer_after_the_trace_are_stepped(tier, make_opt, change):
    def trainer():
        w, b = _two_leaves()
        opt = make_opt([w], lr=0.1)

        def step(x):
            opt.zero_grad()
            cr.sum(w * x + b * b).backward()
            opt.step()

        return (w, b), opt, step

    (params, opt, eager), (params2, opt2, compiled) = trainer(), trainer()
    compiled = cr.compile(compiled)
    for i in range(5):
        if i == 3:
            for o, (_, b) in ((opt, params), (opt2, params2)):
                if change == "add_param_group":
                    o.add_param_group({"params": [b], "lr": 0.01})
                else:
                    o.param_groups[0]["params"].append(b)
        x = T(RNG.normal(size=3))
        eager(x)
        compiled(x)
        for p, q in zip(params2, params):
            np.testing.assert_array_equal(N(p.detach()), N(q.detach()))


@pytest.mark.parametrize("kind", ["forward", "forward_pre", "full_backward", "full_backward_pre"])
def test_module_hooks_added_or_removed_between_calls_run_as_eagerly(tier, kind):
    def double_output(module, inputs, output):
        return output * 2.0

    def double_input(module, inputs):
        return (inputs[0] * 2.0,)

    def double_grad_input(module, grad_input, grad_output):
        return (grad_input[0] * 2.0,)

    def double_grad_output(module, grad_output):
        return (grad_output[0] * 2.0,)

    hook = {
        "forward": double_output,
        "forward_pre": double_input,
        "full_backward": double_grad_input,
        "full_backward_pre": double_grad_output,
    }[kind]

    def trainer():
        cr.random.manual_seed(0)
        m = nn.Linear(3, 2)

        def step(x):
            y = m(x)
            (gx,) = cr.autograd.grad(cr.sum(y * y), (x,))
            return y.detach(), gx

        return m, step

    (m, eager), (m2, compiled) = trainer(), trainer()
    compiled = cr.compile(compiled)
    handles = []
    for i in range(6):
        if i == 2:
            handles = [getattr(mod, f"register_{kind}_hook")(hook) for mod in (m, m2)]
        if i == 4:
            for h in handles:
                h.remove()
        x = T(RNG.normal(size=(2, 3)), requires_grad=True)
        for got, want in zip(compiled(x), eager(x)):
            np.testing.assert_array_equal(N(got), N(want))


_weights = None  # a global tensor, read by the functions below


def _scaled(t):
    return t * _weights


def _plus_weights(t):
    return t + _weights


def test_a_global_tensor_replaced_while_the_old_one_lives_is_read_anew(tier):
    global _weights
    _weights = T(np.ones(3))
    old = _weights  # alive: its weak reference still answers
    scaled = cr.compile(_scaled)
    np.testing.assert_array_equal(N(scaled(T(np.ones(3)))), np.ones(3))
    _weights = T(np.full(3, 2.0))
    np.testing.assert_array_equal(N(scaled(T(np.ones(3)))), np.full(3, 2.0))
    np.testing.assert_array_equal(N(old), np.ones(3))


def test_a_global_tensor_passed_as_the_argument_of_the_trace_is_not_the_next_argument(tier):
    global _weights
    _weights = T(np.ones(3))
    plus = cr.compile(_plus_weights)
    np.testing.assert_array_equal(N(plus(_weights)), np.full(3, 2.0))
    np.testing.assert_array_equal(N(plus(T(np.zeros(3)))), np.ones(3))
    np.testing.assert_array_equal(N(plus(_weights)), np.full(3, 2.0))


def test_a_closure_tensor_passed_as_the_argument_of_the_trace_is_written_after(tier):
    # Traced with x the closure's w: w.mul_ and x read one tensor. Later calls pass another
    # x: w is written, not x.
    def run(compiled: bool) -> tuple:
        w = T(np.arange(3.0) + 1)

        def step(x):
            w.mul_(2.0)
            return x * 1.0

        f = cr.compile(step) if compiled else step
        outs = [N(f(w if i == 0 else T(np.ones(3)))) for i in range(4)]
        return outs, N(w)

    (got, got_w), (want, want_w) = run(True), run(False)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got_w, want_w)


def _eager_and_compiled(make_step, make_args, calls: int = 5) -> None:
    """make_step(w) (w a tensor from outside) run eagerly and compiled on make_args(i, w):
    the same outputs, and the same w, at every call."""
    results = []
    for compiled in (False, True):
        w = T(np.arange(4.0) + 1.0)
        step = make_step(w)
        f = cr.compile(step) if compiled else step
        results.append(([N(f(*make_args(i, w))) for i in range(calls)], N(w)))
    (got, got_w), (want, want_w) = results
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
    np.testing.assert_array_equal(got_w, want_w)


def _write_outside_read_argument(w):
    def step(x):
        w.mul_(2.0)
        return x * 1.0

    return step


def _write_argument_read_outside(w):
    def step(x):
        x.mul_(2.0)
        return w * 1.0

    return step


@pytest.mark.parametrize("step", [_write_outside_read_argument, _write_argument_read_outside])
def test_an_argument_that_becomes_a_view_of_a_tensor_from_outside_sees_its_writes(tier, step):
    # Traced with a distinct argument; later calls pass a view of w (on JAX and Dask the write
    # reaches the view through their alias group, not through memory).
    _eager_and_compiled(step, lambda i, w: (w[1:3] if i >= 2 else T(np.ones(2)),))


def test_arguments_that_become_views_of_one_base_see_each_others_writes(tier):
    def step(w):
        def write_first_read_second(a, b):
            a.mul_(2.0)
            return b * 1.0

        return write_first_read_second

    def views(i, w):
        base = T(np.arange(4.0))
        return (base[:3], base[1:]) if i >= 2 else (T(np.ones(3)), T(np.ones(3)))

    _eager_and_compiled(step, views)


def test_an_argument_on_another_device_is_another_kind_of_input(tier):
    xps = pytest.importorskip("array_api_strict")
    devices = (xps.Device("CPU_DEVICE"), xps.Device("device1"))

    def f(x):
        return x * 2.0 + cr.ones(3, dtype=x.dtype, device=x.device)

    compiled = cr.compile(f)
    for i in range(4):
        x = cr.tensor(xps.asarray(np.arange(3.0), device=devices[i % 2]))
        got, want = compiled(x), f(x)
        assert got.device == want.device == devices[i % 2]
        np.testing.assert_array_equal(N(got), N(want))
    assert compiled.traces == 2


def test_a_tensor_from_outside_returned_untouched_is_that_tensor(tier):
    w = T(np.arange(3.0), requires_grad=True)

    def weights_and_twice(x):
        return w, x * 2.0

    compiled = cr.compile(weights_and_twice)
    for i in range(3):
        out, _ = compiled(T(np.ones(3)))
        assert out is w
        cr.sum(out * float(i + 1)).backward()  # into w, as eagerly
    np.testing.assert_array_equal(N(w.grad), np.full(3, 6.0))


def test_a_constant_returned_by_the_first_call_and_written_by_the_caller_stays_private(tier):
    # The first call's output holds the array the recording keeps as a constant: a write
    # into it must not reach the replays' outputs, nor the operations that read it.
    def zeros_and_sum(x):
        z = cr.zeros(3, dtype=x.dtype)
        return z, z + x

    compiled = cr.compile(zeros_and_sum)
    for _ in range(3):
        z, s = compiled(T(np.ones(3)))
        np.testing.assert_array_equal(N(z), np.zeros(3))
        np.testing.assert_array_equal(N(s), np.ones(3))
        with cr.no_grad():
            z += 5.0


def test_clip_grad_norm_checking_for_non_finite_norms_runs_eagerly_with_a_warning(tier):
    def trainer():
        cr.random.manual_seed(0)
        m = nn.Linear(3, 1)
        opt = optim.SGD(m.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            cr.sum(m(x) ** 2).backward()
            norm = nn.utils.clip_grad_norm_(m.parameters(), 0.5, error_if_nonfinite=True)
            opt.step()
            return norm

        return m, step

    (m, eager), (m2, compiled) = trainer(), trainer()
    compiled = cr.compile(compiled)
    with pytest.warns(cr.CompileWarning, match="error_if_nonfinite"):
        for _ in range(3):
            x = T(RNG.normal(size=(4, 3)))
            np.testing.assert_array_equal(N(compiled(x)), N(eager(x)))
    for p, q in zip(m2.parameters(), m.parameters()):
        np.testing.assert_array_equal(N(p.detach()), N(q.detach()))


def test_one_hot_of_labels_inside_a_compiled_step_runs_eagerly_with_a_warning(tier):
    # one_hot checks the labels' values (a label >= num_classes raises, as eagerly)
    w = T(np.ones((3, 4)), requires_grad=True)

    def loss(x, labels):
        target = cr.astype(F.one_hot(labels, 4), x.dtype)
        return cr.sum((x @ w - target) ** 2)

    compiled = cr.compile(loss)
    with pytest.warns(cr.CompileWarning, match="one_hot"):
        for _ in range(3):
            x, labels = T(RNG.normal(size=(5, 3))), T(RNG.integers(0, 4, size=5))
            np.testing.assert_array_equal(N(compiled(x, labels)), N(loss(x, labels)))
    with pytest.raises(RuntimeError, match="smaller than num_classes"):
        compiled(T(RNG.normal(size=(5, 3))), T(np.array([0, 1, 2, 3, 4])))


def test_a_compiled_lbfgs_step_runs_eagerly_with_a_warning(tier):
    def trainer():
        w = T(np.array([1.0, -2.0, 0.5]), requires_grad=True)
        opt = optim.LBFGS([w], lr=0.5, max_iter=3)

        def closure():
            opt.zero_grad()
            loss = cr.sum((w - 3.0) ** 2 * T(np.array([1.0, 2.0, 3.0])))
            loss.backward()
            return loss

        return w, lambda: opt.step(closure)

    (w, eager), (w2, compiled) = trainer(), trainer()
    compiled = cr.compile(compiled)
    with pytest.warns(cr.CompileWarning, match="LBFGS"):
        for _ in range(3):
            np.testing.assert_array_equal(N(compiled().detach()), N(eager().detach()))
            np.testing.assert_array_equal(N(w2.detach()), N(w.detach()))


def test_a_module_setting_changed_between_calls_is_not_baked(tier):
    # A module's Python settings (a BatchNorm's eps and momentum) are read by its forward:
    # one changed after the trace traces again, as train() / eval() does.
    def trainer():
        cr.random.manual_seed(0)
        m = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 1))
        return m, lambda x: m(x)

    (m, eager), (m2, compiled) = trainer(), trainer()
    compiled = cr.compile(compiled)
    for i in range(6):
        if i == 2:
            m[1].eps = m2[1].eps = 0.5
        if i == 4:
            m[1].momentum = m2[1].momentum = 0.9
        x = T(RNG.normal(size=(5, 3)))
        np.testing.assert_array_equal(N(compiled(x)), N(eager(x)))
        for (k, a), (_, b) in zip(m2.state_dict().items(), m.state_dict().items()):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b), err_msg=k)
    assert compiled.traces == 3


def test_an_argument_viewing_another_tensor_than_at_the_trace_sees_the_writes_to_it(tier):
    # On JAX and Dask the call's kind said that an argument shares an alias group with another
    # live tensor, not with which: traced as a view of an unrelated tensor, a replay with a
    # view of a tensor from outside that the function writes missed the write (their replays
    # follow the groups they traced; NumPy's and PyTorch's share the memory).
    data = T(np.arange(6.0))  # an unrelated base: the trace's argument is a view of it

    def views(i, w):
        return (data[1:3] if i == 0 else w[1:3],)

    _eager_and_compiled(_write_outside_read_argument, views)


def test_arguments_viewing_the_same_tensors_at_each_call_are_traced_once_per_base(tier):
    # The check that an argument shares its alias group with the same tensors from outside
    # (JAX, Dask) is by base: a new view of the same base at each call replays.
    w, other = T(np.arange(4.0) + 1.0), T(np.arange(6.0))

    def step(x):
        return x * 2.0 + w[:2]

    compiled = cr.compile(step)
    for i in range(8):
        x = other[1:3] if i % 4 == 3 else w[1:3]
        np.testing.assert_array_equal(N(compiled(x)), N(step(x)))
    # NumPy's and PyTorch's replays share the memory: one trace serves both bases.
    assert compiled.traces == (2 if LIBRARY in ("jax", "dask") else 1)


@pytest.mark.parametrize("how", ["backward", "backward twice", "assigned", "scaled in place"])
def test_a_leaf_made_inside_that_gets_a_grad_is_traced_a_few_times_only(tier, how):
    # Tracer._persistent counted the reference Tracer.leaf_grads holds as one from beyond the
    # call: the leaf made inside was guarded as a tensor from outside, whose weak reference
    # died after each call, so every call traced again.
    def input_gradient(x):
        x = x.detach().requires_grad_()
        if how == "assigned":
            x.grad = cr.cos(x.detach()) * 2
            return x.grad
        cr.sum(cr.sin(x)).backward()
        if how == "backward twice":
            cr.sum(x * x).backward()
        elif how == "scaled in place":
            x.grad *= 3
        return x.grad

    compiled = cr.compile(input_gradient)
    got = []
    for i in range(6):
        x = T(np.arange(3.0) + i)
        g, want = compiled(x), input_gradient(x)
        np.testing.assert_array_equal(N(g), N(want))
        assert g._version == want._version
        assert g.grad_fn is None and not g.requires_grad
        got.append((g, N(want)))
    for g, want in got:  # later calls left the earlier results alone
        np.testing.assert_array_equal(N(g), want)
    assert compiled.traces == 1


@pytest.mark.parametrize("how", ["returned", "grad_dtype"])
def test_a_leaf_made_inside_that_the_replay_cannot_stand_for_runs_eagerly(tier, how):
    # The replay's stand-in for a leaf made inside is no output (it would have no .grad) and
    # accumulates in the leaf's dtype: refused, the values still eager's.
    def leaf_and_grad(x):
        x = x.detach().requires_grad_()
        if how == "grad_dtype":
            x.grad_dtype = cr.float32
        cr.sum(cr.sin(x)).backward()
        return x, x.grad

    compiled = cr.compile(leaf_and_grad)
    with pytest.warns(cr.CompileWarning, match="leaf tensor made inside"):
        for i in range(4):
            x = T(np.arange(3.0) + i)
            leaf, g = compiled(x)
            want = cr.cos(x)
            if how == "grad_dtype":
                want = cr.astype(want, cr.float32)
            np.testing.assert_array_equal(N(leaf.grad), N(want))
            assert leaf.grad is g and g.dtype == want.dtype


@pytest.mark.skipif(
    LIBRARY == "dask",
    reason="Dask: a selection's size is unknown until computed (NaN chunks); these gradients, "
    "unique's slicing and repeat by tensor counts are refused eagerly too",
)
@pytest.mark.parametrize(
    "name",
    [
        "var of a selection",
        "gradient of a selection",
        "backward through a selection",
        "unique",
        "repeat by counts",
    ],
)
def test_a_selection_whose_size_changes_with_the_values_runs_eagerly_with_a_warning(tier, name):
    # A replay kept the first call's sizes: var of x[x > 0] (of unique values, of a repeat by
    # counts) was wrong from the second call on, and the gradient of a sum over x[x > 0]
    # raised NumPy's broadcast error.
    def run(x):
        if name == "var of a selection":
            return cr.var(x[x > 0])
        if name == "gradient of a selection":
            return cr.autograd.grad(cr.sum(x[x > 0] ** 2), x)[0]
        if name == "backward through a selection":
            cr.sum(x[x > 0] ** 2).backward()
            return x.grad
        if name == "unique":
            return cr.var(cr.unique_values(cr.abs(x)))
        return cr.var(cr.repeat(x, cr.astype(cr.abs(x), cr.int64)))

    compiled = cr.compile(run)
    values = [[1.0, -2.0, 3.0, 4.0, -5.0], [1.0, 1.0, -3.0, -3.0, -5.0], [2.0, 2.0, 2.0, 4.0, 5.0]]
    with pytest.warns(cr.CompileWarning, match="depends on the values"):
        for v in values:
            got = compiled(T(v, requires_grad=True))
            np.testing.assert_array_equal(N(got), N(run(T(v, requires_grad=True))))


@pytest.mark.skipif(LIBRARY != "numpy", reason="NumPy's functions on tensors of NumPy arrays")
@pytest.mark.parametrize("name", ["bincount", "histogram"])
def test_numpys_bincount_and_histogram_of_tensors_run_eagerly_with_a_warning(tier, name):
    # They read the values on the host: a replay kept the first call's length (bincount of
    # [0, 0] had 6 places after [1, 5, 5]) and bins (histogram's edges).
    def run(x, w):
        if name == "bincount":
            return np.bincount(cr.astype(x, cr.int64), weights=w)
        return np.histogram(x, bins=3, weights=w)[0]

    compiled = cr.compile(run)
    values = [[1.0, 5.0, 5.0], [0.0, 0.0, 1.0], [2.0, 9.0, 4.0]]
    with pytest.warns(cr.CompileWarning, match=f"NumPy's {name}"):
        for v in values:
            w = T([0.5, 2.0, -1.0], requires_grad=True)
            got = compiled(T(v), w)
            np.testing.assert_array_equal(N(got), N(run(T(v), w)))
