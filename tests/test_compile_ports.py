"""chainrule.compile on the training steps of PyTorch's example programs
(fixtures/example_programs.py): the whole step (forward, backward, optimizer step, zero_grad),
the forward alone and the loss alone, compiled as a user would, give eager's losses,
parameters, gradients, optimizer state and versions bit for bit over several calls, and
across what a user changes between calls (train/eval, a scheduler step, a new batch shape,
the same tensor for two arguments)."""

import copy
import functools
import pathlib
import sys
import types
import warnings

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import distributions, nn, optim
from conftest import LIBRARY, N, T, skip_on
from helpers import InDefaultLibrary

# In-place writes run eagerly on JAX's and Dask's arrays (docs/compile.md), which these
# steps make (in-place activations, optimizers' updates through .data); the programs' steps
# take minutes there.
pytestmark = skip_on("jax", "dask", reason="compile runs these steps' in-place writes eagerly")

RNG = np.random.default_rng(20)


def _state(objects) -> list:
    """What a step leaves behind, to compare: each parameter's and buffer's values, version,
    grad flag and .grad (values and version), each module's mode, each optimizer's groups
    and state values (eager replaces its state tensors, compile writes them in place: their
    versions differ by design, see optim._Update), and any other tensor."""

    def tensor(t):
        grad = None if t.grad is None else (N(t.grad).copy(), t.grad._version)
        return (N(t).copy(), t._version, t.requires_grad, grad)

    out: list = []
    for o in objects:
        if isinstance(o, nn.Module):
            out += [(n, tensor(p)) for n, p in o.named_parameters()]
            out += [(n, tensor(b)) for n, b in o.named_buffers()]
            out.append(("training", [m.training for m in o.modules()]))
        elif isinstance(o, optim.Optimizer):
            for group in o.param_groups:
                out.append({k: v for k, v in group.items() if k != "params"})
                for p in group["params"]:
                    for k, v in sorted(o.state.get(p, {}).items()):
                        out.append((k, _values(v)))
        elif isinstance(o, cr.Tensor):
            out.append(tensor(o))
    return out


def _values(x):
    """Tensors (in lists and tuples) as their values."""
    if isinstance(x, cr.Tensor):
        return N(x).copy()
    if isinstance(x, (tuple, list)):
        return [_values(y) for y in x]
    return x


def _result(x):
    if isinstance(x, cr.Tensor):
        return (N(x).copy(), x._version, x.requires_grad)
    if isinstance(x, (tuple, list)):
        return [_result(y) for y in x]
    return x


def _same(got, want, where: str) -> None:
    """Equal bit for bit: arrays by their bytes (-0.0 is not 0.0; NaNs by their bits)."""
    if isinstance(want, np.ndarray):
        assert got.dtype == want.dtype and got.shape == want.shape, where
        assert got.tobytes() == want.tobytes(), f"{where}: {got} != {want}"
    elif isinstance(want, (tuple, list)):
        assert len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            _same(g, w, f"{where}[{i}]")
    elif isinstance(want, dict):
        assert got.keys() == want.keys(), where
        for k in want:
            _same(got[k], want[k], f"{where}[{k}]")
    else:
        assert got == want, f"{where}: {got!r} != {want!r}"


def _compare(make, calls, between=None, warns=()) -> cr.CompiledFunction:
    """Build a trainer twice (`make() -> (objects, step)`), run `step` eagerly on one and
    compiled on the other over `calls` (argument tuples, or functions that make them anew
    for each run); `between(i, objects)` changes both
    before call i. Check the results and the state after each call; the CompileWarnings
    must be `warns` (substrings, in order). The compiled function is returned."""
    eager_objects, eager = make()
    objects, step = make()
    compiled = cr.compile(step)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for i, args in enumerate(calls):
            if between is not None:
                between(i, eager_objects)
                between(i, objects)
            args2 = None
            if callable(args):  # arguments the step writes into: one set for each run
                args, args2 = args(), args()
            want = _result(eager(*args))
            got = _result(compiled(*(args if args2 is None else args2)))
            _same(got, want, f"call {i}: the result")
            _same(_state(objects), _state(eager_objects), f"call {i}: the state")
    messages = [str(w.message) for w in caught if issubclass(w.category, cr.CompileWarning)]
    assert len(messages) == len(warns), messages
    for message, part in zip(messages, warns):
        assert part in message
    return compiled


# ----------------------------------------------------------------------------- in-place ReLU


def _conv_relu(inplace_relu):
    def make():
        cr.random.manual_seed(3)
        model = nn.Sequential(
            nn.Conv2d(2, 3, 3), nn.BatchNorm2d(3), inplace_relu(), nn.Conv2d(3, 1, 2)
        ).double()
        opt = optim.Adam(model.parameters(), lr=0.1)

        def step(x):
            opt.zero_grad()
            loss = model(x).square().mean()
            loss.backward()
            opt.step()
            return loss

        return [model, opt], step

    return make


@pytest.fixture(params=[False, True], ids=["", "a hook elsewhere"])
def hook_elsewhere(request):
    """Whether a tensor hook is registered on an unrelated tensor meanwhile: the trace then
    walks the backward with the engine's hands (Tracer._vjp_any) instead of its lean walk."""
    if not request.param:
        yield
        return
    handle = T(np.ones(1), requires_grad=True).register_hook(lambda g: g)
    yield
    handle.remove()


@pytest.mark.parametrize(
    "inplace_relu",
    [lambda: nn.ReLU(inplace=True), lambda: nn.LeakyReLU(0.2, inplace=True)],
    ids=["ReLU", "LeakyReLU"],
)
def test_an_inplace_activation_replays(inplace_relu, hook_elsewhere):
    # dcgan's and fast_neural_style's networks: an in-place activation rebases its input's
    # history on a write over every element, whose backward hands the old values a gradient
    # known to be zero beside the activation's own. The trace refused it: the whole step ran
    # eagerly ("a gradient known to be zero (a write over every element)").
    calls = [(T(RNG.normal(size=(2, 2, 5, 5))),) for _ in range(4)]
    compiled = _compare(_conv_relu(inplace_relu), calls)
    assert compiled.traces == 2  # .grad None at the first call


def test_a_gradient_only_known_to_be_zero_still_runs_eagerly(hook_elsewhere):
    # The old values of a tensor written over everywhere get a gradient known to be zero and
    # nothing else: eager gives w a .grad of zeros; the trace does not make those zeros.
    def make():
        w = T(np.array([1.0, -2.0, 3.0]), requires_grad=True)

        def step(x):
            y = w * x
            y[...] = x
            (y * x).sum().backward()
            return w.grad.clone()

        return [w], step

    x = T(np.array([0.5, 1.5, -1.0]))
    _compare(make, [(x,), (x,)], warns=["a gradient known to be zero"])


# ----------------------------------------------------------------------------- distributions


def _actor_critic_loss(validate_args):
    """actor_critic's finish_episode as one compiled step: the policy's Categorical over
    the episode's states, log_prob of the actions taken, the value loss; Adam."""

    def make():
        cr.random.manual_seed(4)
        body = nn.Linear(4, 8).double()
        action_head, value_head = nn.Linear(8, 2).double(), nn.Linear(8, 1).double()
        params = [*body.parameters(), *action_head.parameters(), *value_head.parameters()]
        opt = optim.Adam(params, lr=3e-2)

        def step(states, actions, returns):
            x = F.relu(body(states))
            probs, values = F.softmax(action_head(x), dim=-1), value_head(x).squeeze(1)
            m = distributions.Categorical(probs, validate_args=validate_args)
            advantage = returns - values.detach()
            loss = (-m.log_prob(actions) * advantage).sum() + F.smooth_l1_loss(
                values, returns, reduction="sum"
            )
            opt.zero_grad()
            loss.backward()
            opt.step()
            return loss

        return [body, action_head, value_head, opt], step

    return make


def _episode(n):
    returns = RNG.normal(size=n)
    returns = (returns - returns.mean()) / returns.std()
    return T(RNG.uniform(-0.05, 0.05, (n, 4))), T(RNG.integers(0, 2, n)), T(returns)


def test_a_distributions_argument_checks_run_the_step_eagerly():
    # Categorical's checks (validate_args, on by default) read its parameters' and the
    # value's values: the trace raised ConcretizationError out of the user's step, where
    # other library code that reads values (F.one_hot, LBFGS) makes it run eagerly.
    calls = [_episode(9), _episode(9), _episode(12)]
    _compare(_actor_critic_loss(None), calls, warns=["a distribution's argument checks"])


def test_a_distribution_without_argument_checks_replays():
    calls = [_episode(9), _episode(9), _episode(9), _episode(12), _episode(9)]
    compiled = _compare(_actor_critic_loss(False), calls)
    assert compiled.traces == 3  # .grad None at the first call; 12 steps


# ----------------------------------------------------------------------------- the programs


def _models_of(name, monkeypatch) -> list:
    """The models a program of fixtures/example_programs.py builds (those it gives its
    `init` or calls `apply` on, in order), after the program ran."""
    sys.path.insert(0, str(pathlib.Path(__file__).parent / "fixtures"))
    import example_programs

    made = []

    def init(L, model, seed, scale=0.3):
        made.append(model)
        return _init(L, model, seed, scale)

    def apply(model, fn):
        made.append(model)
        return _apply(model, fn)

    _init, _apply = example_programs.init, nn.Module.apply
    monkeypatch.setattr(example_programs, "init", init)
    monkeypatch.setattr(nn.Module, "apply", apply)
    t = cr if LIBRARY == "numpy" else InDefaultLibrary()  # (as test_ports_example_programs)
    L = types.SimpleNamespace(t=t, nn=nn, F=F, optim=optim, distributions=distributions)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        example_programs.PROGRAMS[name](L)
    monkeypatch.undo()
    return made


def test_mnist_rnn_across_train_eval_a_scheduler_step_and_a_new_batch(monkeypatch):
    (model,) = _models_of("mnist_rnn", monkeypatch)

    def make():
        net = copy.deepcopy(model)
        opt = optim.Adadelta(net.parameters(), lr=0.1)
        sched = optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.7)

        def step(x, y):
            opt.zero_grad()
            loss = F.nll_loss(net(x), y)
            loss.backward()
            opt.step()
            return loss

        return [net, opt, sched], step

    def between(i, objects):
        if i == 2:
            objects[2].step()
        objects[0].train(i not in (3, 4))  # eval: BatchNorm1d's running statistics

    calls = [(T(RNG.uniform(size=(5, 1, 6, 6))), T(RNG.integers(0, 10, 5))) for _ in range(6)]
    calls.insert(5, (T(RNG.uniform(size=(3, 1, 6, 6))), T(RNG.integers(0, 10, 3))))
    compiled = _compare(make, calls, between)
    assert compiled.traces == 3  # train, eval, the batch of 3


def test_a_grad_accumulated_after_an_optimizer_step_keeps_eagers_version():
    # An optimizer's step (p.grad.detach()) gives .grad a version counter eagerly, which a
    # replay does not make: the accumulation after it was not counted (dcgan: the
    # discriminator's .grad._version 0 where eager's is 1).
    def make():
        w = T(np.array([1.0, 2.0]), requires_grad=True)
        opt = optim.SGD([w], lr=0.1)

        def step(x):
            opt.zero_grad()
            (w * x).sum().backward()
            opt.step()
            (w * w).sum().backward()  # accumulated in place into the stepped .grad

        return [w], step

    x = T(np.array([3.0, 4.0]))
    _compare(make, [(x,)] * 4)


def test_dcgan_discriminator_and_generator_steps(monkeypatch):
    # ConvTranspose2d, BatchNorm2d in training mode, ReLU(True) and LeakyReLU(inplace=True),
    # BCELoss on labels written by fill_, two backward calls into D's gradients, a third
    # through D into G's, two Adam optimizers: all in one compiled call.
    netG, netD = [m for m in _models_of("dcgan", monkeypatch) if type(m).__name__ != "Sequential"]

    def make():
        G, D = copy.deepcopy(netG), copy.deepcopy(netD)
        criterion = nn.BCELoss()
        optD = optim.Adam(D.parameters(), lr=2e-3, betas=(0.5, 0.999))
        optG = optim.Adam(G.parameters(), lr=2e-3, betas=(0.5, 0.999))

        def step(real, noise):
            D.zero_grad()
            label = cr.full((real.shape[0],), 1, dtype=real.dtype)
            errD_real = criterion(D(real), label)
            errD_real.backward()
            fake = G(noise)
            label.fill_(0)
            errD_fake = criterion(D(fake.detach()), label)
            errD_fake.backward()
            optD.step()
            G.zero_grad()
            label.fill_(1)
            output = D(fake)
            errG = criterion(output, label)
            errG.backward()
            optG.step()
            return errD_real + errD_fake, errG, output.mean()

        return [G, D, optD, optG], step

    calls = [(T(np.tanh(RNG.normal(size=(2, 1, 64, 64)))), T(RNG.normal(size=(2, 3, 1, 1))))]
    calls += [(T(np.tanh(RNG.normal(size=(2, 1, 64, 64)))), T(RNG.normal(size=(2, 3, 1, 1))))]
    compiled = _compare(make, calls + calls)
    assert compiled.traces == 1


@pytest.mark.parametrize("variant", ["word_language_model_lstm", "word_language_model_gru"])
def test_word_language_model_carries_its_hidden_state(variant, monkeypatch):
    # Tied encoder and decoder weights, the hidden state returned and passed back in (and
    # detached inside, as repackage_hidden), clip_grad_norm_ and SGD by p.data.add_; a
    # shorter last batch (a new kind of input).
    (model,) = _models_of(variant, monkeypatch)
    lstm = variant.endswith("lstm")
    runs = []
    for compiled in (False, True):
        net = copy.deepcopy(model)
        criterion = nn.NLLLoss()

        def step(data, targets, hidden, net=net, criterion=criterion):
            net.zero_grad()
            hidden = tuple(h.detach() for h in hidden) if lstm else hidden.detach()
            output, hidden = net(data, hidden)
            loss = criterion(output, targets)
            loss.backward()
            nn.utils.clip_grad_norm_(net.parameters(), 0.25)
            for p in net.parameters():
                p.data.add_(p.grad, alpha=-2.0)
            return loss, hidden

        fn = cr.compile(step) if compiled else step
        hidden, got = net.init_hidden(3), []
        rng = np.random.default_rng(5)
        for length in (4, 4, 4, 4, 2, 4):
            data, targets = rng.integers(0, 9, (length, 3)), rng.integers(0, 9, 3 * length)
            loss, hidden = fn(T(data), T(targets), hidden)
            got.append(_result((loss, hidden)) + _state([net]))
        runs.append(got)
    _same(runs[1], runs[0], variant)
    assert fn.traces == 3  # the first hidden state (no history), then one per length


def test_a_hidden_state_kept_outside_runs_eagerly(monkeypatch):
    # The same, the hidden state stored outside between calls instead of returned: the
    # replay could not update it (the documented fallback, with its warning).
    (model,) = _models_of("word_language_model_gru", monkeypatch)

    def make():
        net = copy.deepcopy(model)
        hidden = [net.init_hidden(3)]

        def step(data, targets):
            net.zero_grad()
            output, hidden[0] = net(data, hidden[0].detach())
            loss = F.nll_loss(output, targets)
            loss.backward()
            for p in net.parameters():
                p.data.add_(p.grad, alpha=-2.0)
            return loss

        return [net], step

    calls = [(T(RNG.integers(0, 9, (4, 3))), T(RNG.integers(0, 9, 12))) for _ in range(3)]
    _compare(make, calls, warns=["is kept outside the function"])


def test_fast_neural_style_writes_its_argument_in_place(monkeypatch):
    # normalize_batch divides the batch in place (batch.div_(255.0)): the argument and the
    # transformer's output; InstanceNorm2d, reflection padding, interpolate, a frozen
    # feature network with ReLU(inplace=True), Gram matrices by bmm.
    transformer, vgg = _models_of("fast_neural_style", monkeypatch)

    def gram(y):
        b, ch, h, w = y.shape
        features = y.view(b, ch, w * h)
        return features.bmm(features.transpose(1, 2)) / (ch * h * w)

    def normalize(batch):
        mean = batch.new_tensor([0.485, 0.456, 0.406]).view(-1, 1, 1)
        std = batch.new_tensor([0.229, 0.224, 0.225]).view(-1, 1, 1)
        return (batch.div_(255.0) - mean) / std

    def make():
        net, features = copy.deepcopy(transformer), copy.deepcopy(vgg)
        opt = optim.Adam(net.parameters(), 1e-2)
        mse = nn.MSELoss()
        style = [gram(y) for y in features(normalize(T(np.full((2, 3, 16, 16), 100.0))))]

        def step(x):
            opt.zero_grad()
            features_y, features_x = features(normalize(net(x))), features(normalize(x))
            content = mse(features_y.relu2_2, features_x.relu2_2)
            style_loss = 0.0
            for ft_y, gm_s in zip(features_y, style):
                style_loss += mse(gram(ft_y), gm_s)
            (content + 10.0 * style_loss).backward()
            opt.step()
            return content, style_loss, x

        return [net, features, opt], step

    images = [RNG.uniform(0, 255, (2, 3, 16, 16)) for _ in range(3)]
    calls = [lambda a=a: (T(a.copy()),) for a in images]
    compiled = _compare(make, calls)
    assert compiled.traces == 1


@skip_on("array_api_strict", reason="the program assigns by an index array (x_[range(n), y])")
def test_forward_forward_layers_with_the_same_tensor_for_both_arguments(monkeypatch):
    layers = _models_of("forward_forward", monkeypatch)

    def make():
        own = copy.deepcopy(layers)
        opts = [optim.Adam(layer.parameters(), lr=0.03) for layer in own]

        def step(x_pos, x_neg):
            losses = []
            for layer, opt in zip(own, opts):
                g_pos = layer(x_pos).pow(2).mean(1)
                g_neg = layer(x_neg).pow(2).mean(1)
                loss = cr.log1p(cr.exp(cr.cat([-g_pos + 2.0, g_neg - 2.0]))).mean()
                opt.zero_grad()
                loss.backward()
                opt.step()
                losses.append(loss.detach())
                x_pos, x_neg = layer(x_pos).detach(), layer(x_neg).detach()
            return losses

        return [*own, *opts], step

    x, y = T(RNG.uniform(size=(8, 12))), T(RNG.uniform(size=(8, 12)))
    compiled = _compare(make, [(x, y), (x, y), (x, x), (x, y), (x, x)])
    assert compiled.traces == 2  # one for (x, y), one for (x, x)


@skip_on("array_api_strict", reason="the program asks for device 'cpu', which it lacks")
def test_min_gpt_two_adamw_groups_clipping_and_the_eval_forward(monkeypatch):
    model = _models_of("min_gpt", monkeypatch)[-1]

    def make():
        gpt = copy.deepcopy(model)
        names = dict(gpt.named_parameters())
        decay = [p for n, p in names.items() if n.endswith("weight") and ".ln" not in n]
        decay = [p for p in decay if p.dim() > 1 and p is not gpt.emb_stem.tok_emb.weight]
        rest = [p for p in names.values() if all(p is not q for q in decay)]
        opt = optim.AdamW(
            [{"params": decay, "weight_decay": 0.1}, {"params": rest, "weight_decay": 0.0}],
            lr=1e-2, betas=(0.9, 0.95),
        )  # fmt: skip

        def step(source, targets):
            gpt.train()
            _, loss = gpt(source, targets)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            norm = nn.utils.clip_grad_norm_(gpt.parameters(), 1.0)
            opt.step()
            gpt.eval()
            with cr.no_grad():
                logits, _ = gpt(source)
            return loss, norm, logits

        return [gpt, opt], step

    def batch():
        chunk = RNG.integers(0, 11, (3, 9))
        targets = chunk[:, 1:].copy()
        targets[0, -2:] = -1
        return T(chunk[:, :-1]), T(targets)

    compiled = _compare(make, [batch() for _ in range(4)])
    assert compiled.traces == 1


def test_time_sequence_prediction_lbfgs_calls_a_compiled_closure(monkeypatch):
    # LBFGS reads the loss's values (its step runs eagerly) but may call a compiled closure:
    # zero_grad, the LSTMCell sequence, MSELoss, backward.
    (model,) = _models_of("time_sequence_prediction", monkeypatch)
    data = T(np.sin(np.arange(12)[None, :] / 3.0 + RNG.uniform(size=(3, 1))))
    runs = []
    for compiled in (False, True):
        seq = copy.deepcopy(model)
        opt = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=3)

        def closure(x, y, seq=seq, opt=opt):
            opt.zero_grad()
            loss = F.mse_loss(seq(x), y)
            loss.backward()
            return loss

        fn = cr.compile(closure) if compiled else closure
        call = functools.partial(fn, data[:, :-1], data[:, 1:])
        losses = [opt.step(call) for _ in range(3)]
        runs.append(_result(losses) + _state([seq, opt]))
    _same(runs[1], runs[0], "LBFGS")
    assert fn.traces == 1


# ----------------------------------------------------------------------------- train() inside


def _train_then_evaluate(set_mode):
    def make():
        cr.random.manual_seed(6)
        model = nn.Sequential(nn.Linear(3, 8), nn.BatchNorm1d(8), nn.Linear(8, 1)).double()
        opt = optim.SGD(model.parameters(), lr=0.1)

        def step(x, y):
            set_mode(model, True)
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
            set_mode(model, False)
            with cr.no_grad():
                return loss, F.mse_loss(model(x), y)

        return [model, opt], step

    return make


@pytest.mark.parametrize(
    "set_mode",
    [lambda m, mode: m.train(mode), lambda m, mode: setattr(m[1], "training", mode)],
    ids=["train", "assigned"],
)
def test_a_step_that_sets_train_and_eval_itself_replays(set_mode):
    # minGPT's and many training loops' pattern: model.train() at the start of the step,
    # model.eval() for an evaluation at its end. The guard kept the value read after
    # train() (True) and the call began in eval mode (the last call's): every call traced
    # again (4x eager's time), with a warning blaming the arguments' shapes.
    calls = [(T(RNG.normal(size=(6, 3))), T(RNG.normal(size=(6, 1)))) for _ in range(5)]
    compiled = _compare(_train_then_evaluate(set_mode), calls)
    assert compiled.traces == 2  # .grad None at the first call (5 before the fix)


def test_a_mode_set_inside_is_set_again_by_each_replay():
    # A replay runs no Python: the mode the function leaves is set after it, as eagerly.
    def between(i, objects):
        objects[0].train(i % 2 == 0)  # the mode at entry alternates: the step sets its own

    calls = [(T(RNG.normal(size=(6, 3))), T(RNG.normal(size=(6, 1)))) for _ in range(5)]
    only_train = _train_then_evaluate(lambda m, mode: m.train() if mode else None)
    compiled = _compare(only_train, calls, between)
    assert compiled.traces == 2  # .grad None at the first call (3 before: guarded)


def test_a_mode_set_after_the_trace_gave_up_is_kept():
    # The trace stops recording at F.one_hot (it reads the labels): the eval() after it is
    # not seen, and the mode set before it must not be set again at the end of the call.
    model = nn.Linear(3, 2).double()

    def step(x, labels):
        model.train()
        y = model(x) * F.one_hot(labels, 2).double()
        model.eval()
        return y

    compiled = cr.compile(step)
    with pytest.warns(cr.CompileWarning, match="F.one_hot"):
        compiled(T(RNG.normal(size=(4, 3))), T(np.array([0, 1, 1, 0])))
    assert not model.training


def test_modes_and_versions_set_again_compute_nothing_on_dask():
    # What each replay sets again (the modes, a .grad's version) settles no tensor: on Dask
    # the outputs were computed after each call (as an optimizer's step settles them).
    da = pytest.importorskip("dask.array")
    dask = pytest.importorskip("dask")
    model = nn.Linear(3, 1).double()
    x = cr.asarray(da.from_array(RNG.normal(size=(8, 3)), chunks=(4, 3)))
    model.weight = nn.Parameter(cr.asarray(da.from_array(N(model.weight))))
    model.bias = nn.Parameter(cr.asarray(da.from_array(N(model.bias))))

    @cr.compile
    def step(x):
        model.train()
        for p in model.parameters():
            p.grad = None
        loss = model(x).square().mean()
        loss.backward()
        model.eval()
        return loss

    def refuse(*args, **kwargs):
        raise AssertionError("chainrule made Dask compute behind the user's back")

    with dask.config.set(scheduler=refuse):
        for _ in range(4):
            loss = step(x)
    assert step.traces == 2 and not model.training  # .grad None at the first call
    assert len(dict(loss.__dask_graph__())) > 1
