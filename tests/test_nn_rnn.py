"""The recurrent layers RNNCell, LSTMCell, GRUCell, RNN, LSTM and GRU against PyTorch
(fixtures/rnn_torch.json, made by fixtures/make_rnn_fixtures.py): the same weights loaded, every
output, and the gradients of the input, the initial state and every parameter; parameter names,
shapes and initialisation; first and second derivatives; dropout; bad arguments; compile."""

import json
import math
import pathlib
import warnings

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T
from helpers import assert_values, leaf

RECORD = json.loads((pathlib.Path(__file__).parent / "fixtures" / "rnn_torch.json").read_text())
CELLS = sorted(k for k, v in RECORD["layers"].items() if v["layer"].endswith("Cell"))
MODULES = sorted(k for k, v in RECORD["layers"].items() if not v["layer"].endswith("Cell"))


def _flat(out):
    return [out] if not isinstance(out, tuple) else [t for o in out for t in _flat(o)]


def _check_against_pytorch(name):
    case = RECORD["layers"][name]
    layer = getattr(nn, case["layer"])(*case["args"], **case["kwargs"])
    assert list(layer.state_dict()) == list(case["state_dict"])
    layer.load_state_dict({k: np.asarray(v) for k, v in case["state_dict"].items()})
    x = leaf(case["input"])
    state = None if case["hx"] is None else [leaf(h) for h in case["hx"]]
    if state is None:
        out = layer(x)
    else:
        out = layer(x, state[0] if len(state) == 1 else tuple(state))
    outs = _flat(out)
    assert len(outs) == len(case["outputs"])
    for got, expected in zip(outs, case["outputs"]):
        assert_values(got, expected, rtol=1e-11, atol=1e-13)
    total = sum(cr.sum(o * T(w)) for o, w in zip(outs, case["weights"]))
    total.backward()
    assert_values(x.grad, case["input_grad"], rtol=1e-11, atol=1e-13)
    for h, expected in zip(state or [], case["hx_grads"] or []):
        assert_values(h.grad, expected, rtol=1e-11, atol=1e-13)
    grads = {k: p.grad for k, p in layer.named_parameters()}
    assert list(grads) == list(case["parameter_grads"])
    for k, expected in case["parameter_grads"].items():
        assert_values(grads[k], expected, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("name", CELLS)
def test_cell_outputs_and_all_gradients_match_pytorch(name):
    _check_against_pytorch(name)


@pytest.mark.parametrize("name", MODULES)
def test_multi_layer_outputs_and_all_gradients_match_pytorch(name):
    _check_against_pytorch(name)


# ------------------------------------------------------- parameters and initialisation


def test_parameter_names_and_shapes_are_pytorchs():
    lstm = nn.LSTM(3, 5, num_layers=2, bidirectional=True)
    shapes = {k: tuple(p.shape) for k, p in lstm.named_parameters()}
    assert list(shapes)[:4] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    assert shapes["weight_ih_l0"] == (20, 3)
    assert shapes["weight_ih_l0_reverse"] == (20, 3)
    assert shapes["weight_ih_l1"] == (20, 10) and shapes["weight_hh_l1_reverse"] == (20, 5)
    assert len(shapes) == 16
    gru = nn.GRU(2, 4, bias=False)
    assert {k: tuple(p.shape) for k, p in gru.named_parameters()} == {
        "weight_ih_l0": (12, 2),
        "weight_hh_l0": (12, 4),
    }
    cell = nn.RNNCell(2, 3, bias=False)
    assert cell.bias_ih is None and [k for k, _ in cell.named_parameters()] == [
        "weight_ih",
        "weight_hh",
    ]


@pytest.mark.parametrize(
    "make", [lambda: nn.LSTMCell(6, 16), lambda: nn.GRU(6, 16, num_layers=2)], ids=["cell", "gru"]
)
def test_parameters_start_uniform_within_one_over_sqrt_hidden(make):
    cr.random.manual_seed(0)
    values = np.concatenate([N(p).ravel() for p in make().parameters()])
    assert np.all(np.abs(values) <= 1 / math.sqrt(16))
    assert np.abs(values).max() > 0.9 / math.sqrt(16) and abs(values.mean()) < 0.02


def test_reprs_print_pytorchs_options():
    assert repr(nn.LSTM(3, 4)) == "LSTM(3, 4)"
    assert (
        repr(nn.GRU(3, 4, num_layers=2, batch_first=True, dropout=0.5, bidirectional=True))
        == "GRU(3, 4, num_layers=2, batch_first=True, dropout=0.5, bidirectional=True)"
    )
    assert repr(nn.RNNCell(2, 3, nonlinearity="relu")) == "RNNCell(2, 3, nonlinearity=relu)"


# ------------------------------------------------------- derivatives by finite differences


@pytest.mark.parametrize("kind", ["RNNCell", "LSTMCell", "GRUCell"])
def test_cell_first_and_second_derivatives_in_both_modes(kind):
    cr.random.manual_seed(1)
    cell = getattr(nn, kind)(2, 2)
    rng = np.random.default_rng(3)
    x, h = leaf(rng.normal(size=(2, 2))), leaf(rng.normal(size=(2, 2)))
    names = [k for k, _ in cell.named_parameters()]
    params = [leaf(N(p)) for p in cell.parameters()]

    def fn(x, h, *ps):
        state = (h, h * 0.5) if kind == "LSTMCell" else h
        out = cr.func.functional_call(cell, dict(zip(names, ps)), (x, state))
        return _flat(out)[-1]

    assert gradcheck(fn, (x, h, *params), eps=1e-6, check_forward_ad=True)
    assert gradgradcheck(fn, (x, h, *params), eps=1e-6)


def test_bidirectional_lstm_first_and_second_derivatives_in_both_modes():
    cr.random.manual_seed(2)
    lstm = nn.LSTM(2, 2, bidirectional=True)
    x = leaf(np.random.default_rng(4).normal(size=(3, 1, 2)))

    def fn(x):
        out, (h, c) = lstm(x)
        return cr.concat([cr.reshape(out, (-1,)), cr.reshape(c, (-1,))])

    assert gradcheck(fn, (x,), eps=1e-6, check_forward_ad=True)
    assert gradgradcheck(fn, (x,), eps=1e-6)


# ------------------------------------------------------- dropout, modes, bad arguments


def test_dropout_applies_between_layers_in_training_only():
    cr.random.manual_seed(5)
    gru = nn.GRU(3, 4, num_layers=2, dropout=0.5)
    x = T(np.random.default_rng(6).normal(size=(4, 2, 3)))
    gru.eval()
    first, _ = gru(x)
    again, _ = gru(x)
    assert_values(first, N(again))
    gru.train()
    cr.random.manual_seed(7)
    a, _ = gru(x)
    cr.random.manual_seed(8)
    b, _ = gru(x)
    assert not np.allclose(N(a), N(b))
    # The last layer's output is not dropped: one layer, dropout has nothing to act on (and
    # PyTorch's warning says so).
    with pytest.warns(UserWarning, match="non-zero dropout expects num_layers greater than 1"):
        single = nn.GRU(3, 4, dropout=0.5)
    assert_values(single(x)[0], N(single.eval()(x)[0]))


def test_unbatched_input_matches_a_batch_of_one():
    cr.random.manual_seed(9)
    lstm = nn.LSTM(3, 2, num_layers=2, bidirectional=True)
    x = np.random.default_rng(10).normal(size=(5, 3))
    out, (h, c) = lstm(T(x))
    batch_out, (batch_h, batch_c) = lstm(T(x[:, None]))
    assert out.shape == (5, 4) and h.shape == (4, 2)
    assert_values(out, N(batch_out)[:, 0])
    assert_values(c, N(batch_c)[:, 0])


def test_flatten_parameters_is_accepted():
    lstm = nn.LSTM(2, 3)
    lstm.flatten_parameters()
    assert lstm(T(np.ones((2, 1, 2))))[0].shape == (2, 1, 3)


def test_bad_recurrent_arguments_raise_pytorchs_errors():
    with pytest.raises(ValueError, match="proj_size has to be smaller than hidden_size"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(ValueError, match="proj_size should be a positive integer or zero"):
        nn.LSTM(3, 4, proj_size=-1)
    with pytest.raises(ValueError, match="Unknown nonlinearity 'sigmoid'"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="Unknown nonlinearity: sigmoid"):
        nn.RNNCell(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="dropout should be a number in range"):
        nn.GRU(3, 4, dropout=1.5)
    with pytest.raises(ValueError, match="hidden_size must be greater than zero"):
        nn.LSTMCell(3, 0)
    with pytest.raises(ValueError, match="num_layers must be greater than zero"):
        nn.RNN(3, 4, num_layers=0)
    rnn = nn.RNN(3, 4, num_layers=2)
    with pytest.raises(ValueError, match="RNN: Expected input to be 2D or 3D, got 4D"):
        rnn(T(np.ones((1, 2, 3, 3))))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        rnn(T(np.ones((2, 1, 5))))
    with pytest.raises(RuntimeError, match="Expected hidden size \\(2, 1, 4\\), got \\[1, 1, 4\\]"):
        rnn(T(np.ones((2, 1, 3))), T(np.zeros((1, 1, 4))))
    with pytest.raises(RuntimeError, match="For unbatched 2-D input, hx should also be 2-D but"):
        rnn(T(np.ones((2, 3))), T(np.zeros((2, 1, 4))))
    with pytest.raises(ValueError, match="LSTMCell: Expected input to be 1D or 2D, got 3D"):
        nn.LSTMCell(3, 4)(T(np.ones((1, 2, 3))))


# ------------------------------------------------------- compile


def test_compiled_lstm_training_step_replays_equal_to_eager():
    # No CompileWarning (an error here): the program is replayed, not run eagerly.
    def make():
        cr.random.manual_seed(11)
        return nn.LSTM(3, 4, num_layers=2), nn.Linear(4, 1)

    rng = np.random.default_rng(12)
    batches = [(T(rng.normal(size=(5, 2, 3))), T(rng.normal(size=(2, 1)))) for _ in range(5)]

    def run(compiled):
        lstm, head = make()
        params = list(lstm.parameters()) + list(head.parameters())
        opt = cr.optim.SGD(params, lr=0.1)

        def step(x, y):
            opt.zero_grad()
            out, (h, c) = lstm(x)
            loss = cr.mean((head(out[-1]) - y) ** 2)
            loss.backward()
            opt.step()
            return loss

        fn = cr.compile(step) if compiled else step
        losses = [N(fn(x, y)).item() for x, y in batches]
        return losses, [N(p) for p in params], fn

    eager_losses, eager_params, _ = run(False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cr.CompileWarning)
        losses, params, compiled = run(True)
    # Traced at the first two calls (as a training step of one Linear layer is: the optimizer's
    # first step changes what the second call finds), replayed for the last three.
    assert compiled.traces == 2
    np.testing.assert_allclose(losses, eager_losses, rtol=1e-13)
    for got, expected in zip(params, eager_params):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)


def test_float32_layers_keep_float32_outputs_and_states():
    lstm = nn.LSTM(3, 4, num_layers=2, dtype="float32")
    out, (h, c) = lstm(T(np.ones((2, 1, 3)), "float32"))
    assert (out.dtype, h.dtype, c.dtype) == (cr.float32,) * 3
    assert nn.GRUCell(3, 4).to(cr.float32)(T(np.ones((1, 3)), "float32")).dtype == cr.float32
