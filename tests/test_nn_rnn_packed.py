"""Packed sequences (chainrule.nn.utils.rnn) and the recurrent layers on them, and LSTM's
proj_size, against PyTorch (fixtures/rnn_packed_torch.json, made by
fixtures/make_rnn_packed_fixtures.py): packing, padding and their gradients; RNN, LSTM and
GRU outputs, final states and every gradient; a packed batch equal to its sequences run one
by one; first and second derivatives; PyTorch's errors."""

import json
import math
import pathlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
from chainrule.nn.utils import rnn
from conftest import N, T, examples
from helpers import assert_values, leaf

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "rnn_packed_torch.json").read_text()
)


def _indices(t):
    return None if t is None else N(t).tolist()


# ------------------------------------------------------- packing and padding


@pytest.mark.parametrize("name", sorted(RECORD["pack"]))
def test_packing_and_padding_match_pytorch(name):
    case = RECORD["pack"][name]
    x = leaf(case["input"])
    packed = rnn.pack_padded_sequence(
        x, case["lengths"], case["batch_first"], case["enforce_sorted"]
    )
    assert_values(packed.data, case["data"])
    assert packed.batch_sizes.dtype == cr.int64
    assert N(packed.batch_sizes).tolist() == case["batch_sizes"]
    assert _indices(packed.sorted_indices) == case["sorted_indices"]
    assert _indices(packed.unsorted_indices) == case["unsorted_indices"]
    cr.sum(packed.data * T(case["weights"])).backward()
    assert_values(x.grad, case["input_grad"])
    for expected in case["pad_packed"]:
        padded, lengths = rnn.pad_packed_sequence(packed, *expected["options"])
        assert_values(padded, expected["padded"])
        assert lengths.dtype == cr.int64 and N(lengths).tolist() == expected["lengths"]


def test_pad_sequence_matches_pytorch_on_each_side():
    sequences = [T(s) for s in RECORD["pad"]["sequences"]]
    for batch_first in (False, True):
        for side in ("right", "left"):
            out = rnn.pad_sequence(sequences, batch_first, 0.5, side)
            assert_values(out, RECORD["pad"][f"{batch_first}_{side}"])


def test_pack_sequence_unpack_sequence_and_unpad_sequence_give_the_sequences_back():
    rng = np.random.default_rng(0)
    values = [rng.normal(size=(n, 2)) for n in (2, 3, 1)]
    sequences = [leaf(v) for v in values]
    packed = rnn.pack_sequence(sequences, enforce_sorted=False)
    assert N(packed.batch_sizes).tolist() == [3, 2, 1]
    assert N(packed.sorted_indices).tolist() == [1, 0, 2]
    back = rnn.unpack_sequence(packed)
    for got, expected in zip(back, values):
        assert_values(got, expected)
    cr.sum(cr.concat([b * (k + 1) for k, b in enumerate(back)])).backward()
    for k, s in enumerate(sequences):
        assert_values(s.grad, np.full(values[k].shape, k + 1.0))
    padded = rnn.pad_sequence(sequences, batch_first=True)
    lengths = T(np.array([2, 3, 1]), "int64")
    for got, expected in zip(rnn.unpad_sequence(padded, lengths, batch_first=True), values):
        assert_values(got, expected)
    time_major = rnn.unpad_sequence(rnn.pad_sequence(sequences), [2, 3, 1])
    assert [tuple(s.shape) for s in time_major] == [(2, 2), (3, 2), (1, 2)]


def test_packed_sequence_is_pytorchs_named_tuple():
    assert rnn.PackedSequence._fields == (
        "data",
        "batch_sizes",
        "sorted_indices",
        "unsorted_indices",
    )
    data, sizes = T(np.arange(6.0).reshape(3, 2)), T(np.array([2, 1]), "int64")
    # unsorted_indices is sorted_indices' inverse where not given, and (data, batch_sizes)
    # may come as one tuple, as PyTorch accepts.
    packed = rnn.PackedSequence(data, sizes, T(np.array([1, 0]), "int64"))
    assert N(packed.unsorted_indices).tolist() == [1, 0]
    again = rnn.PackedSequence((data, sizes))
    assert again.sorted_indices is None and again.unsorted_indices is None
    assert again.float().data.dtype == cr.float32 and again.double().data.dtype == cr.float64
    assert again.to(cr.float32).batch_sizes is sizes


def test_bad_packing_arguments_raise_pytorchs_errors():
    x = T(np.ones((4, 3, 2)))
    with pytest.raises(RuntimeError, match="`lengths` array must be sorted in decreasing order"):
        rnn.pack_padded_sequence(x, [2, 3, 1])
    with pytest.raises(RuntimeError, match="Length of all samples has to be greater than 0"):
        rnn.pack_padded_sequence(x, [3, 0, 1], enforce_sorted=False)
    with pytest.raises(RuntimeError, match="Expected `len\\(lengths\\)` to be equal to batch_"):
        rnn.pack_padded_sequence(x, [3, 2])
    with pytest.raises(RuntimeError, match="'lengths' argument should be a 1D CPU int64 tensor"):
        rnn.pack_padded_sequence(x, T(np.array([[3, 2, 1]]), "int64"))
    # PyTorch reads past the padded input here; chainrule says so.
    with pytest.raises(RuntimeError, match="at most the padded sequence length 4"):
        rnn.pack_padded_sequence(x, [5, 2, 1])
    with pytest.raises(IndexError, match="Dimension out of range"):
        rnn.pack_padded_sequence(T(np.ones(3)), [3])
    packed = rnn.pack_padded_sequence(x, [3, 2, 1])
    with pytest.raises(ValueError, match="total_length=2 and max sequence length being 3"):
        rnn.pad_packed_sequence(packed, total_length=2)
    with pytest.raises(RuntimeError, match="Expected padding_side to be one of left or right"):
        rnn.pad_sequence([x[0]], padding_side="up")
    with pytest.raises(RuntimeError, match="received an empty list of sequences"):
        rnn.pad_sequence([])


# ------------------------------------------------------- recurrent layers against PyTorch


@pytest.mark.parametrize("name", sorted(RECORD["layers"]))
def test_layer_outputs_and_all_gradients_match_pytorch(name):
    case = RECORD["layers"][name]
    layer = getattr(nn, case["layer"])(*case["args"], **case["kwargs"])
    assert list(layer.state_dict()) == list(case["state_dict"])
    layer.load_state_dict({k: np.asarray(v) for k, v in case["state_dict"].items()})
    x = leaf(case["input"])
    inputs = x
    if case["packing"] is not None:
        lengths, enforce_sorted = case["packing"]
        batch_first = case["kwargs"].get("batch_first", False)
        inputs = rnn.pack_padded_sequence(x, lengths, batch_first, enforce_sorted)
    state = None if case["hx"] is None else [leaf(h) for h in case["hx"]]
    if state is None:
        out, final = layer(inputs)
    else:
        out, final = layer(inputs, state[0] if len(state) == 1 else tuple(state))
    if case["packing"] is not None:
        assert isinstance(out, rnn.PackedSequence)
        assert out.batch_sizes is inputs.batch_sizes
        out = out.data
    outs = [out, *(final if case["layer"] == "LSTM" else [final])]
    for got, expected in zip(outs, case["outputs"], strict=True):
        assert_values(got, expected, rtol=1e-11, atol=1e-13)
    sum(cr.sum(o * T(w)) for o, w in zip(outs, case["weights"])).backward()
    assert_values(x.grad, case["input_grad"], rtol=1e-11, atol=1e-13)
    for h, expected in zip(state or [], case["hx_grads"] or []):
        assert_values(h.grad, expected, rtol=1e-11, atol=1e-13)
    grads = {k: p.grad for k, p in layer.named_parameters()}
    assert list(grads) == list(case["parameter_grads"])
    for k, expected in case["parameter_grads"].items():
        assert_values(grads[k], expected, rtol=1e-11, atol=1e-13)


@examples(4)
@given(
    kind=st.sampled_from(["RNN", "LSTM", "GRU"]),
    lengths=st.lists(st.integers(1, 3), min_size=1, max_size=3),
    bidirectional=st.booleans(),
)
def test_a_packed_batch_runs_as_its_sequences_one_by_one(kind, lengths, bidirectional):
    cr.random.manual_seed(3)
    kwargs = {"proj_size": 1} if kind == "LSTM" else {}
    layer = getattr(nn, kind)(2, 2, num_layers=2, bidirectional=bidirectional, **kwargs)
    rng = np.random.default_rng(len(lengths))
    values = [rng.normal(size=(n, 2)) for n in lengths]
    out, final = layer(rnn.pack_sequence([T(v) for v in values], enforce_sorted=False))
    finals = final if kind == "LSTM" else (final,)
    for b, (got, v) in enumerate(zip(rnn.unpack_sequence(out), values)):
        alone, alone_final = layer(T(v[:, None]))
        assert_values(got, N(alone)[:, 0], rtol=1e-12, atol=1e-14)
        alone_finals = alone_final if kind == "LSTM" else (alone_final,)
        for f, expected in zip(finals, alone_finals):
            assert_values(f[:, b], N(expected)[:, 0], rtol=1e-12, atol=1e-14)


def test_packed_bidirectional_lstm_with_proj_first_derivatives():
    cr.random.manual_seed(4)
    lstm = nn.LSTM(2, 2, bidirectional=True, proj_size=1)
    rng = np.random.default_rng(5)
    x, h0 = leaf(rng.normal(size=(3, 2, 2))), leaf(rng.normal(size=(2, 2, 1)))
    c0 = T(rng.normal(size=(2, 2, 2)))  # its gradient is in the recorded cases

    def fn(x, h0):
        packed = rnn.pack_padded_sequence(x, [1, 3], enforce_sorted=False)
        out, (h, c) = lstm(packed, (h0, c0))
        return cr.concat([out.data.reshape(-1), h.reshape(-1), c.reshape(-1)])

    assert gradcheck(fn, (x, h0), eps=1e-6, check_forward_ad=True)


def test_packed_gru_second_derivatives():
    cr.random.manual_seed(6)
    gru = nn.GRU(1, 2, bidirectional=True)
    x = leaf(np.random.default_rng(7).normal(size=(2, 2, 1)))

    def fn(x):
        out, h = gru(rnn.pack_padded_sequence(x, [2, 1]))
        return cr.concat([out.data.reshape(-1), h.reshape(-1)])

    assert gradgradcheck(fn, (x,), eps=1e-6)


def test_packed_input_ignores_batch_first_and_checks_the_state():
    cr.random.manual_seed(8)
    gru = nn.GRU(2, 3)
    packed = rnn.pack_padded_sequence(T(np.ones((3, 2, 2))), [3, 1])
    out, h = gru(packed)
    gru.batch_first = True
    again, _ = gru(packed)
    assert_values(again.data, N(out.data))
    assert tuple(h.shape) == (1, 2, 3)
    with pytest.raises(RuntimeError, match="Expected hidden size \\(1, 2, 3\\), got \\[2, 3\\]"):
        gru(packed, T(np.zeros((2, 3))))
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        gru(rnn.pack_padded_sequence(T(np.ones((3, 2, 4))), [3, 1]))


# ------------------------------------------------------- proj_size


def test_proj_size_parameters_states_and_repr_are_pytorchs():
    cr.random.manual_seed(9)
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True, proj_size=2)
    shapes = {k: tuple(p.shape) for k, p in lstm.named_parameters()}
    assert list(shapes)[:5] == [
        "weight_ih_l0",
        "weight_hh_l0",
        "bias_ih_l0",
        "bias_hh_l0",
        "weight_hr_l0",
    ]
    assert shapes["weight_hh_l0"] == (16, 2) and shapes["weight_hr_l0_reverse"] == (2, 4)
    assert shapes["weight_ih_l1"] == (16, 4) and len(shapes) == 20
    values = np.concatenate([N(p).ravel() for p in lstm.parameters()])
    assert np.all(np.abs(values) <= 1 / math.sqrt(4))
    out, (h, c) = lstm(T(np.ones((5, 2, 3))))
    assert (out.shape, h.shape, c.shape) == ((5, 2, 4), (4, 2, 2), (4, 2, 4))
    assert repr(lstm) == "LSTM(3, 4, proj_size=2, num_layers=2, bidirectional=True)"
    with pytest.raises(RuntimeError, match="Expected hidden\\[0\\] size \\(4, 2, 2\\), got"):
        lstm(T(np.ones((5, 2, 3))), (T(np.zeros((4, 2, 4))), T(np.zeros((4, 2, 4)))))
