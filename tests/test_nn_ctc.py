"""nn.functional.ctc_loss, nn.CTCLoss and nn.AdaptiveLogSoftmaxWithLoss: values and gradients
against PyTorch's (recorded by fixtures/make_ctc_fixtures.py into ctc_torch.json), first and
second derivatives by finite differences, the loss against a sum over every alignment, and
PyTorch's errors."""

import itertools
import json
import math
import pathlib

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T, examples, skip_on
from helpers import assert_values, grads_of, leaf

# On Dask each finite-difference check computes its lazy graph (for CTC, one more piece per
# step of the recursion) hundreds of times: minutes; values and gradients are checked there.
SLOW_ON_DASK = skip_on("dask", reason="these finite-difference checks take minutes there")

RECORD = json.loads((pathlib.Path(__file__).parent / "fixtures" / "ctc_torch.json").read_text())
CTC = RECORD["ctc"]
ASM = RECORD["asm"]


def _ctc_call(case, log_probs, reduction, as_lists=False):
    if as_lists:
        lengths = case["input_lengths"], tuple(case["target_lengths"])
    else:
        shape = () if log_probs.ndim == 2 else (-1,)
        lengths = (
            T(np.reshape(case["input_lengths"], shape)),
            T(np.reshape(case["target_lengths"], shape)),
        )
    options = {k: case[k] for k in ("blank", "zero_infinity") if k in case}
    return F.ctc_loss(log_probs, T(case["targets"]), *lengths, reduction=reduction, **options)


# ----------------------------------------------------------------------------- ctc_loss


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("name", sorted(CTC))
def test_ctc_loss_values_and_gradients_are_pytorchs(name, reduction):
    case = CTC[name]
    x = leaf(case["logits"])
    loss = _ctc_call(case, F.log_softmax(x, dim=-1), reduction, as_lists=name == "padded")
    assert_values(loss, case["values"][reduction], rtol=1e-12, atol=1e-13)
    cr.sum(loss).backward()
    if name == "blank_label":  # see the test below
        return
    # PyTorch's gradient of an infinite loss is NaN; chainrule's is 0 (see ctc_loss).
    expected = np.nan_to_num(np.asarray(case["grads"][reduction]), nan=0.0)
    assert_values(x.grad, expected, rtol=1e-10, atol=1e-13)


@SLOW_ON_DASK
def test_ctc_loss_gradient_with_the_blank_among_the_labels_is_the_derivative():
    """PyTorch's loss (compared above), and a gradient that finite differences confirm:
    PyTorch's differs from it (torch.autograd.gradcheck fails on PyTorch's own there)."""
    case = CTC["blank_label"]
    x = leaf(case["logits"])
    fn = lambda x: _ctc_call(case, F.log_softmax(x, dim=-1), "sum")  # noqa: E731
    assert gradcheck(fn, (x,))
    assert np.abs(N(grads_of(fn, x)[0]) - case["grads"]["sum"]).max() > 1e-3


FAIR = [n for n in sorted(CTC) if CTC[n]["raw_grad"] is not None and n != "blank_label"]


@pytest.mark.parametrize("name", FAIR)
def test_ctc_loss_gradient_is_pytorchs_less_exp_log_probs(name):
    """PyTorch's kernel returns the gradient plus exp(log_probs) at the steps each sample
    uses (a term a log_softmax before it cancels), and 0 for a loss zero_infinity zeroed:
    chainrule returns the gradient itself."""
    case = CTC[name]
    lp = leaf(N(F.log_softmax(T(case["logits"]), dim=-1)))
    _ctc_call(case, lp, "sum").backward()
    possible = np.isfinite(N(_ctc_call({**case, "zero_infinity": False}, lp, "none")))
    steps = np.arange(lp.shape[0]).reshape((-1,) + (1,) * (lp.ndim - 1))
    lengths = np.reshape(case["input_lengths"], (1, -1, 1) if lp.ndim == 3 else ())
    used = (steps < lengths) & np.reshape(possible, np.shape(lengths))
    assert_values(lp.grad, np.asarray(case["raw_grad"]) - np.exp(N(lp)) * used, atol=1e-12)


def _both_modes(fn, *inputs):
    assert gradcheck(fn, inputs, check_forward_ad=True)
    assert gradgradcheck(fn, inputs, check_fwd_over_rev=True)


@SLOW_ON_DASK
@pytest.mark.parametrize(
    "options", [{"reduction": "mean"}, {"reduction": "none", "zero_infinity": True}]
)
def test_ctc_loss_first_and_second_derivatives_in_both_modes(options):
    """A repeated label, a target as long as its input allows, an impossible one (zeroed),
    an input shorter than the others."""
    rng = np.random.default_rng(3)
    lp = leaf(N(F.log_softmax(T(rng.normal(size=(3, 3, 3))), dim=-1)))
    targets = T(np.array([[1, 1], [2, 1], [2, 2]]))
    fn = lambda x: F.ctc_loss(x, targets, [3, 2, 3], [2, 2, 2], **options)  # noqa: E731
    _both_modes(fn, lp)


def test_ctc_loss_of_empty_targets_only_is_every_step_blank():
    lp = leaf(N(F.log_softmax(T(np.random.default_rng(4).normal(size=(3, 2, 3))), dim=-1)))
    loss = F.ctc_loss(lp, T(np.zeros((0,), dtype=np.int64)), [3, 2], [0, 0], reduction="none")
    assert_values(loss, [-N(lp)[:3, 0, 0].sum(), -N(lp)[:2, 1, 0].sum()], rtol=1e-12)
    cr.sum(loss).backward()
    expected = np.zeros((3, 2, 3))
    expected[:3, 0, 0] = expected[:2, 1, 0] = -1.0
    assert_values(lp.grad, expected)


def _every_alignment(lp, labels, blank):
    """-log of the sum over every path of classes whose collapse (repeats merged, blanks
    dropped) is `labels`: CTC's definition, by enumeration."""
    steps, classes = lp.shape
    total = 0.0
    for path in itertools.product(range(classes), repeat=steps):
        merged = [c for i, c in enumerate(path) if i == 0 or c != path[i - 1]]
        if [c for c in merged if c != blank] == list(labels):
            total += math.exp(sum(lp[t, c] for t, c in enumerate(path)))
    return -math.log(total) if total else math.inf


@examples(12)
@given(
    steps=st.integers(1, 4),
    labels=st.lists(st.integers(1, 2), max_size=3),
    data=st.data(),
)
def test_ctc_loss_is_the_sum_over_every_alignment(steps, labels, data):
    logits = data.draw(st.lists(st.floats(-2, 2), min_size=steps * 3, max_size=steps * 3))
    lp = N(F.log_softmax(T(np.reshape(logits, (steps, 3))), dim=-1))
    padded = T(np.array(labels + [1] * (3 - len(labels))))
    loss = F.ctc_loss(T(lp), padded, [steps], [len(labels)], reduction="sum")
    expected = _every_alignment(lp, labels, 0)
    assert N(loss) == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_ctc_loss_module_holds_its_settings():
    case = CTC["last_blank"]
    lp = F.log_softmax(T(case["logits"]), dim=-1)
    loss = nn.CTCLoss(blank=3, reduction="sum", zero_infinity=True)
    assert (loss.blank, loss.reduction, loss.zero_infinity) == (3, "sum", True)
    out = loss(lp, T(case["targets"]), case["input_lengths"], case["target_lengths"])
    assert_values(out, case["values"]["sum"], rtol=1e-12)


LP = np.log(np.full((5, 2, 4), 0.25))
GOOD = dict(targets=[[1, 2], [1, 1]], input_lengths=[5, 5], target_lengths=[2, 2])


def _bad(**changes):
    call = {**GOOD, **changes}
    lp = call.pop("lp", LP)
    targets = call.pop("targets")
    return lambda: F.ctc_loss(T(lp), T(np.array(targets)), **call)


@pytest.mark.parametrize(
    "call, error, message",
    [
        (_bad(lp=LP[None]), RuntimeError, "Expected 3-dimensional tensor, but got 4-dim"),
        (_bad(lp=LP[0, 0]), RuntimeError, "Expected 3-dimensional tensor, but got 1-dim"),
        (_bad(blank=4), RuntimeError, "blank must be in label range"),
        (_bad(blank=-1), RuntimeError, "blank must be in label range"),
        (_bad(input_lengths=[5]), RuntimeError, "input_lengths must be of size batch_size"),
        (_bad(target_lengths=[2] * 3), RuntimeError, "target_lengths must be of size batch_size"),
        (_bad(targets=[[1, 2]] * 3), RuntimeError, "have size 2 at dimension 0, but got size 3"),
        (_bad(targets=[[[1, 2]] * 2]), RuntimeError, "Expected 1 to 2 dimensions, but got 3"),
        (_bad(reduction="x"), ValueError, "x is not a valid value for reduction"),
        (_bad(input_lengths=5), TypeError, "must be a tensor, list or tuple of integers"),
        (_bad(lp=LP[:, 0], targets=[[1, 2]]), RuntimeError, "1-D targets"),
    ],
)
def test_bad_ctc_arguments_raise_as_pytorch(call, error, message):
    with pytest.raises(error, match=message):
        call()


@skip_on("dask", reason="values are not read on lazy storage (docs/from-pytorch.md)")
@pytest.mark.parametrize(
    "call, error, message",
    [
        (_bad(input_lengths=[6, 5]), RuntimeError, "input_lengths to have value at most 5, but"),
        (_bad(input_lengths=[-1, 5]), RuntimeError, "input_lengths to have value at least 0"),
        (_bad(target_lengths=[-1, 2]), RuntimeError, "target_lengths to have value at least 0"),
        (_bad(target_lengths=[3, 2]), RuntimeError, "size at least 3 at dimension 1, but got"),
        (_bad(targets=[1, 2, 1]), RuntimeError, "have size 4 at dimension 0, but got size 3"),
        (_bad(targets=[[1, 7], [1, 1]]), IndexError, r"target labels must lie in \[0, 4\)"),
    ],
)
def test_bad_ctc_length_and_label_values_raise_as_pytorch(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_ctc_loss_reads_floating_labels_as_integers_and_lengths_as_tensors():
    lp = F.log_softmax(T(CTC["padded"]["logits"]), dim=-1)
    case = CTC["padded"]
    loss = F.ctc_loss(
        lp,
        T(np.asarray(case["targets"], dtype=np.float64)),
        T(np.asarray(case["input_lengths"])),
        T(np.asarray(case["target_lengths"])),
        reduction="none",
    )
    assert_values(loss, case["values"]["none"], rtol=1e-12)


# ------------------------------------------------------------------ AdaptiveLogSoftmaxWithLoss


def _layer(case):
    layer = nn.AdaptiveLogSoftmaxWithLoss(*case["args"], **case["kwargs"])
    assert list(layer.state_dict()) == list(case["state_dict"])
    layer.load_state_dict({k: np.asarray(v) for k, v in case["state_dict"].items()})
    return layer


@pytest.mark.parametrize("name", sorted(ASM))
def test_adaptive_log_softmax_is_pytorchs(name):
    case = ASM[name]
    layer = _layer(case)
    x = leaf(case["input"])
    out = layer(x, T(case["targets"]))
    assert out._fields == ("output", "loss")
    assert_values(out.output, case["output"], rtol=1e-12)
    assert_values(out.loss, case["loss"], rtol=1e-12)
    out.loss.backward()
    assert_values(x.grad, case["grads"]["input"], rtol=1e-10, atol=1e-13)
    for key, p in layer.named_parameters():
        expected = case["grads"][key]
        assert (p.grad is None) == (expected is None), key
        if expected is not None:
            assert_values(p.grad, expected, rtol=1e-10, atol=1e-13)
    if case["log_prob"] is not None:
        assert_values(layer.log_prob(x), case["log_prob"], rtol=1e-12)
        assert N(layer.predict(x)).tolist() == case["predict"]


def test_adaptive_log_softmax_predicts_the_most_probable_class_in_clusters_too():
    layer = nn.AdaptiveLogSoftmaxWithLoss(3, 8, [2, 5], div_value=1.0)
    x = T(np.random.default_rng(1).normal(size=(16, 3)) * 3)
    best = N(layer.log_prob(x)).argmax(axis=1)
    assert (best >= 2).any() and (best < 2).any()
    assert N(layer.predict(x)).tolist() == best.tolist()
    assert np.allclose(np.exp(N(layer.log_prob(x))).sum(axis=1), 1.0)


@SLOW_ON_DASK
def test_adaptive_log_softmax_first_and_second_derivatives_in_both_modes():
    layer = nn.AdaptiveLogSoftmaxWithLoss(3, 6, [2, 4], div_value=1.0, head_bias=True)
    target = T(np.array([0, 3, 5, 2]))
    x = leaf(np.random.default_rng(2).normal(size=(4, 3)))
    fn = lambda x: layer(x, target).loss  # noqa: E731
    _both_modes(fn, x)
    w = layer.tail[1][1].weight
    assert gradgradcheck(lambda x, w: layer(x, target).output, (x, w))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda: nn.AdaptiveLogSoftmaxWithLoss(4, 6, [3, 2]), ValueError, "cutoffs should be"),
        (lambda: nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 6]), ValueError, "cutoffs should be"),
        (lambda: nn.AdaptiveLogSoftmaxWithLoss(4, 6, [0, 2]), ValueError, "cutoffs should be"),
        (lambda: nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 2]), ValueError, "cutoffs should be"),
        (lambda: nn.AdaptiveLogSoftmaxWithLoss(4, 6, []), ValueError, "cutoffs should be"),
    ],
)
def test_bad_adaptive_log_softmax_cutoffs_raise_as_pytorch(call, error, message):
    with pytest.raises(error, match=message):
        call()


@pytest.mark.parametrize(
    "shape, target, message",
    [
        ((3, 4), [0, 6, 1], r"Target values should be in \[0, 5\], but values in range \[0, 6\]"),
        ((3, 4), [0, 1], "same size in the batch dimension"),
        ((3, 4), [[0, 1, 2]], "0D or 1D target tensor expected"),
        ((3, 2, 4), [0, 1, 2], "1D target tensor expects 2D input tensors"),
        ((3, 4), 1, "0D target tensor expects 1D input tensors"),
    ],
)
def test_bad_adaptive_log_softmax_inputs_raise_as_pytorch(shape, target, message):
    layer = nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 4])
    with pytest.raises(RuntimeError, match=message):
        layer(T(np.zeros(shape)), T(np.array(target)))
