"""chainrule.compile against eager execution on training steps that use the newer pieces
(ASGD, Rprop, RAdam, packed sequences, parametrizations, ctc_loss, interpolate's modes,
pooling indices, embedding options): each compiled call (the trace, then replays, with input
values, shapes, lengths, modes, learning rates and the module's structure changed between
calls) gives eager's outputs, parameters, gradients, optimizer state and versions, or runs
eagerly with a CompileWarning."""

import copy
import warnings

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import func, nn, optim
from chainrule._compile import _program
from chainrule.nn.utils import parametrizations as PZ
from chainrule.nn.utils import parametrize as P
from chainrule.nn.utils import rnn as R
from conftest import N, T

RNG = np.random.default_rng(11)


@pytest.fixture(params=["loop", "source"])
def tier(request, monkeypatch):
    """The replay tier of the calls after the first: the loop, or the Python source."""
    monkeypatch.setattr(_program, "SOURCE_AFTER", 10**9 if request.param == "loop" else 0)
    return request.param


def _state(model, opt) -> dict:
    """What a step changes: parameters (values, .grad, versions), buffers, optimizer state."""
    out = {}
    for k, p in model.named_parameters():
        out[f"param {k}"] = N(p.detach())
        out[f"grad {k}"] = None if p.grad is None else N(p.grad)
        out[f"version {k}"] = p._version
    for k, b in model.named_buffers():
        out[f"buffer {k}"] = N(b)
    if opt is not None:
        for i, state in enumerate(opt.state.values()):
            for k, v in state.items():
                out[f"state {i} {k}"] = N(v) if isinstance(v, cr.Tensor) else v
    return out


def _same_state(got: dict, want: dict) -> None:
    assert got.keys() == want.keys()
    for k, w in want.items():
        if isinstance(w, np.ndarray):
            np.testing.assert_array_equal(got[k], w, err_msg=k)
        else:
            assert got[k] == w, k


def _same_outputs(got, want) -> None:
    got, want = (got,) if got is None else got, (want,) if want is None else want
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(N(g), N(w))
        assert g._version == w._version


def _compare(make, inputs, between=None, eager_warning=None) -> int:
    """make() -> (model, optimizer or None, step): runs each argument tuple of `inputs` through
    an eager step and a compiled one on two copies, comparing outputs and state after each
    call (`between(i, model, opt)` runs before call i on both). eager_warning: the reason the
    compiled step must give for running eagerly (else: no CompileWarning). The traces."""
    (m1, o1, eager), (m2, o2, compiled) = make(), make()
    compiled = cr.compile(compiled)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", cr.CompileWarning)
        for i, args in enumerate(inputs):
            if between is not None:
                between(i, m1, o1)
                between(i, m2, o2)
            _same_outputs(compiled(*args), eager(*args))
            _same_state(_state(m2, o2), _state(m1, o1))
    reasons = [str(w.message) for w in caught if w.category is cr.CompileWarning]
    if eager_warning is None:
        assert reasons == []
    else:
        assert reasons and all(eager_warning in r for r in reasons), reasons
    return compiled.traces


def _trainer(model, opt, loss):
    def step(*args):
        opt.zero_grad()
        value = loss(model, *args)
        value.backward()
        opt.step()
        return value.detach()

    return step


# ----------------------------------------------------------------- versions of a tensor


@pytest.mark.parametrize("scale_grad_by_freq", [False, True])
def test_embedding_max_norm_then_an_optimizer_step_keeps_eagers_versions(tier, scale_grad_by_freq):
    # max_norm renormalizes the table in place (a write the replay counts itself), then the
    # step writes it again with a counter of its own: the replay counted the first write twice
    # (the table's version went 3 a call, eagerly 2).
    def make():
        cr.random.manual_seed(0)
        m = nn.Embedding(6, 3, max_norm=1.0, scale_grad_by_freq=scale_grad_by_freq).double()
        opt = optim.SGD(m.parameters(), lr=0.5)
        return m, opt, _trainer(m, opt, lambda m, i: cr.sum(m(i) ** 2))

    batches = [[[1, 2, 2], [3, 3, 3]], [[0, 4, 5], [5, 0, 2]], [[1, 1, 1], [1, 1, 1]]] * 2
    # (scale_grad_by_freq is a custom Function, which a replay can't follow: eagerly.)
    _compare(
        make,
        [(T(b),) for b in batches],
        eager_warning="_LookupGradient" if scale_grad_by_freq else None,
    )


def test_a_write_then_a_write_with_a_counter_of_its_own_counts_two_versions(tier):
    w = T(np.arange(4.0), requires_grad=True)
    opt = optim.SGD([w], lr=0.1)

    def step(x):
        opt.zero_grad()
        with cr.no_grad():
            w[...] = w * 0.5
        cr.sum(w * x).backward()
        opt.step()

    compiled = cr.compile(step)
    for i in range(4):
        compiled(T(np.ones(4)))
        assert w._version == 2 * (i + 1)


# ------------------------------------------------------------- the structure of modules


def test_a_layer_appended_to_a_sequential_after_the_trace_is_run(tier):
    m = nn.Sequential(nn.Linear(2, 2).double(), nn.Tanh())
    compiled = cr.compile(lambda x: m(x).detach())
    x = T(RNG.normal(size=(3, 2)))
    compiled(x)
    compiled(x)
    m.append(nn.Linear(2, 1).double())
    np.testing.assert_array_equal(N(compiled(x)), N(m(x)))
    assert compiled.traces == 2


class _Reshaped(nn.Module):
    """A module whose setting is a list."""

    def __init__(self, shape):
        super().__init__()
        self.shape = shape

    def forward(self, x):
        return cr.reshape(x, self.shape)


_TUPLE_SETTINGS = {
    "MaxPool2d.kernel_size": (lambda: nn.MaxPool2d((2, 2)), "kernel_size", (4, 4)),
    "AvgPool2d.stride": (lambda: nn.AvgPool2d((2, 2)), "stride", (1, 1)),
    "AdaptiveMaxPool2d.output_size": (
        lambda: nn.AdaptiveMaxPool2d((2, 3), return_indices=True),
        "output_size",
        (3, 2),
    ),
    "Upsample.size": (lambda: nn.Upsample(size=(3, 5), mode="bicubic"), "size", (4, 6)),
    "Upsample.scale_factor": (
        lambda: nn.Upsample(scale_factor=(0.5, 0.5), mode="area"),
        "scale_factor",
        (0.25, 0.5),
    ),
    "Conv2d.padding": (lambda: nn.Conv2d(2, 2, 3, padding=(1, 1)).double(), "padding", (0, 1)),
    "a list written in place": (lambda: _Reshaped([16, 8]), "shape", 32),
}


@pytest.mark.parametrize("case", list(_TUPLE_SETTINGS))
def test_a_modules_tuple_setting_changed_after_the_trace_traces_again(tier, case):
    # Only plain Python values were checked: a kernel_size, stride or size held as a tuple
    # and changed after the trace kept the traced one (shapes included) without a word.
    make, name, value = _TUPLE_SETTINGS[case]
    m = make()
    compiled = cr.compile(lambda x: m(x))
    x = T(RNG.normal(size=(1, 2, 8, 8)))
    compiled(x)
    compiled(x)
    if isinstance(getattr(m, name), list):
        getattr(m, name)[0] = value  # written in place
        getattr(m, name)[1] = 4
    else:
        setattr(m, name, value)
    got, want = compiled(x), m(x)
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        np.testing.assert_array_equal(N(g.detach()), N(w.detach()))
    assert compiled.traces == 2


class _Symmetric(nn.Module):
    def forward(self, w):
        return w + w.T


class _Scaled(nn.Module):
    def __init__(self, factor):
        super().__init__()
        self.factor = factor

    def forward(self, w):
        return w * self.factor


@pytest.mark.parametrize("change", ["register_another", "set_factor", "assign", "remove"])
def test_parametrizations_changed_between_calls_give_eagers_steps(tier, change):
    # A second parametrization registered on the tensor after the trace was left out of the
    # replays (its ParametrizationList's modules were not checked).
    def make():
        cr.random.manual_seed(0)
        layer = nn.Linear(3, 3).double()
        P.register_parametrization(layer, "weight", _Symmetric())
        P.register_parametrization(layer, "weight", _Scaled(2.0))
        m = nn.Sequential(layer, nn.Tanh(), nn.Linear(3, 1).double())
        opt = optim.Rprop(m.parameters(), lr=0.05)
        return m, opt, _trainer(m, opt, lambda m, x: cr.sum(m(x) ** 2))

    def between(i, m, opt):
        if i != 3:
            return
        if change == "register_another":
            P.register_parametrization(m[0], "weight", _Scaled(-0.5))
        elif change == "set_factor":
            m[0].parametrizations.weight[1].factor = 3.0
        elif change == "assign":
            m[0].parametrizations.weight.original.data = T(np.eye(3) * 0.25)
        else:
            P.remove_parametrizations(m[0], "weight")
            opt.param_groups[0]["params"] = list(m.parameters())
            opt.state.clear()

    traces = _compare(make, [(T(RNG.normal(size=(4, 3))),) for _ in range(6)], between)
    assert traces == (2 if change == "assign" else 3)


@pytest.mark.parametrize("kind", ["weight_norm", "spectral_norm"])
def test_weight_and_spectral_norm_steps_across_train_and_eval(tier, kind):
    def make():
        cr.random.manual_seed(0)
        layer = nn.Linear(3, 4).double()
        layer = PZ.weight_norm(layer) if kind == "weight_norm" else PZ.spectral_norm(layer)
        m = nn.Sequential(layer, nn.Tanh(), nn.Linear(4, 1).double())
        opt = optim.ASGD(m.parameters(), lr=0.05, t0=2)

        def loss(m, x):
            with P.cached():
                return cr.sum(m(x) ** 2) + cr.sum(m(x))

        return m, opt, _trainer(m, opt, loss)

    def between(i, m, opt):
        if i == 3:
            m.eval()
        if i == 5:
            m.train()

    _compare(make, [(T(RNG.normal(size=(4, 3))),) for _ in range(7)], between)


# ------------------------------------------------------------------ optimizers


@pytest.mark.parametrize(
    "make_opt",
    [
        lambda ps: optim.ASGD(ps, lr=0.05, t0=2, weight_decay=0.1),
        lambda ps: optim.Rprop(ps, lr=0.05),
        lambda ps: optim.RAdam(ps, lr=0.05, weight_decay=0.1, decoupled_weight_decay=True),
    ],
    ids=["ASGD", "Rprop", "RAdam"],
)
def test_new_optimizers_with_a_scheduler_and_one_tensor_passed_twice(tier, make_opt):
    def make():
        cr.random.manual_seed(0)
        m = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 3)).double()
        opt = make_opt(m.parameters())
        sched = optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5)
        return m, opt, sched, _trainer(m, opt, lambda m, x, y: F.mse_loss(m(x), y))

    (m1, o1, s1, eager), (m2, o2, s2, compiled) = make(), make()
    compiled = cr.compile(compiled)
    for i in range(7):
        x = T(RNG.normal(size=(5, 3)))
        y = x if i % 3 == 0 else T(RNG.normal(size=(5, 3)))  # the same tensor for both
        if i == 4:
            for o in (o1, o2):
                o.param_groups[0]["lr"] = 0.02
        _same_outputs(compiled(x, y), eager(x, y))
        _same_state(_state(m2, o2), _state(m1, o1))
        s1.step()
        s2.step()
    assert compiled.traces == 3  # state made at the first call; then y is x or not


# ------------------------------------------------------------------ packed sequences


@pytest.mark.parametrize("lengths_as", ["list", "tensor", "packed_argument"])
@pytest.mark.parametrize("cell", ["LSTM", "GRU"])
def test_packed_sequences_run_eagerly_with_a_warning(lengths_as, cell):
    # The packing reads the lengths: a replay would keep the first call's. Both raised
    # ConcretizationError while tracing (the list case, inside the layer).
    def make():
        cr.random.manual_seed(0)
        kw = {"proj_size": 2} if cell == "LSTM" else {}
        m = getattr(nn, cell)(3, 4, batch_first=True, **kw).double()
        opt = optim.Adam(m.parameters(), lr=0.01)

        def loss(m, x, lengths):
            if lengths_as != "packed_argument":
                x = R.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
            out, _ = m(x)
            padded, _ = R.pad_packed_sequence(out, batch_first=True)
            return cr.sum(padded**2)

        return m, opt, _trainer(m, opt, loss)

    inputs = []
    for lengths in ([4, 2, 3], [4, 2, 3], [1, 4, 4], [3, 3, 2]):
        x = T(RNG.normal(size=(3, 4, 3)))
        if lengths_as == "packed_argument":
            packed = R.pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
            inputs.append((packed, None))
        else:
            inputs.append((x, T(lengths) if lengths_as == "tensor" else lengths))
    _compare(make, inputs, eager_warning="the sequences' lengths")


# ------------------------------------------------- losses, resampling, pooling, lookups


@pytest.mark.parametrize("targets_as", ["padded", "concatenated"])
def test_ctc_loss_steps_with_lengths_changed_between_calls(tier, targets_as):
    def make():
        cr.random.manual_seed(0)
        m = nn.Linear(4, 5).double()
        opt = optim.SGD(m.parameters(), lr=0.1, momentum=0.9)

        def loss(m, x, targets, input_lengths, target_lengths):
            log_probs = F.log_softmax(m(x), dim=-1)
            return F.ctc_loss(log_probs, targets, input_lengths, target_lengths)

        return m, opt, _trainer(m, opt, loss)

    inputs = []
    # the same shapes at each call: only the lengths' values change (the last two split the
    # concatenated targets differently)
    for il, tl in (([6, 5, 4], [3, 2, 1]), ([6, 6, 2], [1, 3, 2]), ([6, 5, 4], [3, 1, 2])):
        x = T(RNG.normal(size=(6, 3, 4)))
        shape = (3, 3) if targets_as == "padded" else (6,)
        inputs.append((x, T(RNG.integers(1, 5, size=shape)), T(il), T(tl)))
    assert _compare(make, inputs) == 2


@pytest.mark.parametrize(
    "targets, input_lengths, target_lengths",
    [
        ([[1, 2], [3, 1]], [6, 4], [2, 2]),  # an input longer than the steps
        ([[1, 2], [3, 1]], [-1, 4], [2, 2]),
        ([[1, 2], [3, 1]], [5, 4], [-1, 2]),
        ([[1, -1], [3, 1]], [5, 4], [2, 2]),  # a label below 0
        ([1, 2, 3, 1], [5, 4], [1, 2]),  # concatenated labels the lengths don't add up to
    ],
    ids=["input_too_long", "input_negative", "target_negative", "label_negative", "sum"],
)
def test_ctc_loss_values_a_replay_cant_check_give_nan(tier, targets, input_lengths, target_lengths):
    # Eagerly these raise; a replay runs no check, and gave a finite loss (or one from a
    # wrapped negative index) without a word: the sample's loss is now NaN.
    loss = cr.compile(lambda *a: F.ctc_loss(*a, reduction="none"))
    log_probs = F.log_softmax(T(RNG.normal(size=(5, 2, 4))), dim=-1)
    good = T([[1, 2], [3, 1]] if np.ndim(targets) == 2 else [1, 2, 3, 1])
    for _ in range(2):  # the trace, then a replay
        want = N(F.ctc_loss(log_probs, good, T([5, 4]), T([2, 2]), reduction="none"))
        np.testing.assert_array_equal(N(loss(log_probs, good, T([5, 4]), T([2, 2]))), want)
    got = N(loss(log_probs, T(targets), T(input_lengths), T(target_lengths)))
    bad = [True, True] if np.ndim(targets) == 1 else [True, False]
    assert np.isnan(got[bad]).all() and not np.isnan(got[~np.array(bad)]).any()


def test_resampling_pooling_and_lookups_in_one_step_across_shapes(tier):
    def make():
        cr.random.manual_seed(0)
        m = nn.Module()
        m.conv = nn.Conv2d(2, 2, 1).double()
        m.table = nn.Embedding(5, 2, padding_idx=0).double()
        opt = optim.Adam(m.parameters(), lr=0.01)

        def loss(m, x, i):
            y = m.conv(x)
            a = F.interpolate(y, size=(3, 5), mode="bicubic", antialias=True)
            b = F.interpolate(y, scale_factor=0.5, mode="area")
            c = F.interpolate(y, scale_factor=1.5, mode="bilinear", align_corners=True)
            c = c + cr.mean(F.interpolate(y, size=(5, 3), mode="lanczos", antialias=True))
            p, where = F.max_pool2d(y, 2, return_indices=True)
            e = m.table(i)
            return (
                cr.sum(a**2) + cr.sum(b**3) + cr.sum(c) + cr.sum(p * cr.astype(where, p.dtype))
            ) + cr.sum(e**2)

        return m, opt, _trainer(m, opt, loss)

    def call(shape, indices):
        return T(RNG.normal(size=shape)), T(indices)

    inputs = [
        call((1, 2, 6, 6), [[1, 2, 2], [3, 3, 0]]),
        call((1, 2, 6, 6), [[4, 4, 4], [1, 0, 0]]),
        call((1, 2, 6, 6), [[1, 2, 3], [4, 0, 1]]),
        call((2, 2, 4, 8), [[1, 1, 1], [1, 1, 1]]),  # a new shape: a new trace
        call((2, 2, 4, 8), [[2, 3, 4], [2, 2, 0]]),
    ]
    assert _compare(make, inputs) == 3


def test_max_unpool_runs_eagerly_with_a_warning():
    def make():
        cr.random.manual_seed(0)
        m = nn.Conv1d(2, 2, 1).double()
        opt = optim.SGD(m.parameters(), lr=0.1)

        def loss(m, x):
            y, where = F.max_pool1d(m(x), 2, return_indices=True)
            return cr.sum(F.max_unpool1d(y, where, 2) ** 2)

        return m, opt, _trainer(m, opt, loss)

    _compare(make, [(T(RNG.normal(size=(1, 2, 6))),) for _ in range(3)], eager_warning="unpool")


# ------------------------------------------------------ transforms of a compiled function


def _ctc_of_logits(x):
    targets, lengths = T([[1, 2], [3, 3], [2, 1]]), T([5, 4, 3])
    return F.ctc_loss(F.log_softmax(x, dim=-1), targets, lengths, T([2, 2, 1]))


def _resampled(x):
    return cr.sum(F.interpolate(x, size=(3, 2), mode="bicubic", antialias=True) ** 2)


@pytest.mark.parametrize(
    "fn, shape",
    [(_ctc_of_logits, (5, 3, 4)), (_resampled, (1, 1, 5, 4))],
    ids=["ctc_loss", "interpolate"],
)
def test_grad_and_vmap_of_a_compiled_function_are_eagers(fn, shape):
    compiled = cr.compile(fn)
    for _ in range(2):
        x = T(RNG.normal(size=shape))
        np.testing.assert_array_equal(N(func.grad(compiled)(x)), N(func.grad(fn)(x)))
        xs = cr.stack([x, x * 2.0])
        np.testing.assert_array_equal(N(func.vmap(compiled)(xs)), N(func.vmap(fn)(xs)))


def test_copies_of_an_optimizer_state_loaded_between_calls(tier):
    def make():
        cr.random.manual_seed(0)
        m = nn.Linear(3, 1).double()
        opt = optim.Rprop(m.parameters(), lr=0.05)
        return m, opt, _trainer(m, opt, lambda m, x: cr.sum(m(x) ** 2))

    saved = {}

    def between(i, m, opt):
        if i == 2:
            saved[id(opt)] = copy.deepcopy(opt.state_dict())
        if i == 4:
            opt.load_state_dict(saved[id(opt)])

    _compare(make, [(T(RNG.normal(size=(4, 3))),) for _ in range(6)], between)
