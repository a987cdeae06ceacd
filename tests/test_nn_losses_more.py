"""The losses added after the first set (poisson_nll_loss, gaussian_nll_loss, the margin and
embedding losses, the triplet losses) and the deprecated size_average / reduce arguments of
every loss that PyTorch gives them: values, gradients and warnings against PyTorch (the calls
of fixtures/loss_more_cases.py, recorded by fixtures/make_loss_more_fixtures.py into
loss_more_torch.json), both modes of differentiation to second order by finite differences,
PyTorch's errors, and the values at edges."""

import json
import math
import pathlib
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import grad, gradcheck, gradgradcheck
from conftest import N, T, skip_on
from fixtures.loss_more_cases import CASES, GRAD, INTEGERS, inputs, used
from helpers import arrays, assert_values, broadcastable, floats, leaf

RECORD = json.loads(
    (pathlib.Path(__file__).parent / "fixtures" / "loss_more_torch.json").read_text()
)
LEGACY = "size_average and reduce are deprecated"


def _env():
    env = {"F": F, "nn": nn}
    for name, value in inputs().items():
        env[name] = T(value, np.int64 if name in INTEGERS else None)
        if name in GRAD:
            env[name].requires_grad_(True)
    return env


def _recorded(value):
    return np.asarray(np.where(np.equal(value, None), np.nan, value), dtype=np.float64)


def _both_modes(fn, *inputs):
    assert gradcheck(fn, inputs, check_forward_ad=True)
    assert gradgradcheck(fn, inputs, check_fwd_over_rev=True)


def test_the_record_covers_every_case():
    assert set(RECORD["cases"]) == set(CASES)


@pytest.mark.parametrize("source", CASES)
def test_loss_value_gradients_and_warning_are_pytorchs(source):
    env = _env()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = eval(source, env)
    names = used(source)
    grads = grad(cr.sum(out), [env[n] for n in names], allow_unused=True, materialize_grads=True)
    expected = RECORD["cases"][source]
    assert_values(out, _recorded(expected["value"]), rtol=1e-12, atol=1e-14)
    for name, g in zip(names, grads):
        assert_values(g, _recorded(expected["grads"][name]), rtol=1e-10, atol=1e-14)
    warned = [w for w in caught if LEGACY in str(w.message)]
    assert bool(warned) == expected["warns"]
    assert all(w.category is UserWarning for w in warned)


# Calls away from every kink and clamp, in the inputs that finite differences move.
SMOOTH = [
    ("F.poisson_nll_loss(a, k, full=True, reduction='none')", ("a",)),
    ("F.poisson_nll_loss(r, k, log_input=False, full=True, eps=0.1)", ("r",)),
    ("F.gaussian_nll_loss(a, b, v + 0.5, full=True, reduction='none')", ("a", "b", "v")),
    ("F.gaussian_nll_loss(a, b, v3, reduction='sum')", ("a", "b", "v3")),
    ("F.gaussian_nll_loss(a, b, v31, eps=0.1, reduction='none')", ("a", "v31")),
    ("F.soft_margin_loss(a, s, reduction='none')", ("a",)),
    ("F.margin_ranking_loss(a, b, s, margin=0.5, reduction='none')", ("a", "b")),
    ("F.hinge_embedding_loss(a, odd, margin=0.5, reduction='none')", ("a",)),
    ("F.cosine_embedding_loss(a, b, s3, margin=-0.5, reduction='none')", ("a", "b")),
    ("F.cosine_embedding_loss(a[0], b[0], s3[0])", ("a", "b")),
    ("F.multilabel_soft_margin_loss(a, bits, weight=cw, reduction='none')", ("a",)),
    ("F.multi_margin_loss(a, y, p=2, margin=0.7, weight=cw, reduction='none')", ("a",)),
    ("F.multi_margin_loss(a, y, reduction='sum')", ("a",)),
    ("F.multilabel_margin_loss(a, ml, reduction='none')", ("a",)),
    ("F.triplet_margin_loss(a, b, c, margin=2.0, reduction='none')", ("a", "b", "c")),
    ("F.triplet_margin_loss(a, b, c, margin=3.0, p=3, swap=True)", ("a", "b", "c")),
    ("F.triplet_margin_with_distance_loss(a, b, c, margin=3.0, swap=True)", ("a", "b", "c")),
]


@pytest.mark.parametrize("source, names", SMOOTH)
def test_loss_first_and_second_derivatives_in_both_modes(source, names):
    env = _env()
    fn = lambda *xs: eval(source, {**env, **dict(zip(names, xs))})  # noqa: E731
    _both_modes(fn, *(env[n] for n in names))


# ----------------------------------------------------------------- size_average and reduce

LEGACY_MAP = [
    (None, None, "mean"),
    (True, None, "mean"),
    (False, None, "sum"),
    (None, True, "mean"),
    (True, True, "mean"),
    (False, True, "sum"),
    (None, False, "none"),
    (True, False, "none"),
    (False, False, "none"),
]

# Each loss that PyTorch gives the deprecated arguments, with arguments of its own.
TAKES_LEGACY = {
    "mse_loss": lambda x, t: (x, t),
    "l1_loss": lambda x, t: (x, t),
    "smooth_l1_loss": lambda x, t: (x, t),
    "binary_cross_entropy": lambda x, t: (x.sigmoid(), t.sigmoid()),
    "binary_cross_entropy_with_logits": lambda x, t: (x, t.sigmoid()),
    "kl_div": lambda x, t: (x, t.sigmoid()),
    "nll_loss": lambda x, t: (x, T(np.array([0, 2]))),
    "cross_entropy": lambda x, t: (x, T(np.array([1, 0]))),
    "poisson_nll_loss": lambda x, t: (x, t.abs()),
    "soft_margin_loss": lambda x, t: (x, t.sign()),
    "hinge_embedding_loss": lambda x, t: (x, t.sign()),
    "multilabel_soft_margin_loss": lambda x, t: (x, t.sigmoid()),
    "multi_margin_loss": lambda x, t: (x, T(np.array([1, 2]))),
    "multilabel_margin_loss": lambda x, t: (x, T(np.array([[2, -1, 0], [0, 1, -1]]))),
    "margin_ranking_loss": lambda x, t: (x, t, t.sign()),
    "cosine_embedding_loss": lambda x, t: (x, t, T(np.array([1.0, -1.0]))),
    "triplet_margin_loss": lambda x, t: (x, t, t * 2.0),
}


@pytest.mark.parametrize("name", sorted(TAKES_LEGACY))
@pytest.mark.parametrize("size_average, reduce, reduction", LEGACY_MAP)
def test_deprecated_size_average_and_reduce_map_to_a_reduction_with_a_warning(
    name, size_average, reduce, reduction
):
    rng = np.random.default_rng(5)
    args = TAKES_LEGACY[name](T(rng.normal(size=(2, 3))), T(rng.normal(size=(2, 3))))
    fn = getattr(F, name)
    expected = fn(*args, reduction=reduction)
    if size_average is None and reduce is None:
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            out = fn(*args, size_average=size_average, reduce=reduce)
    else:
        with pytest.warns(UserWarning, match=rf"{LEGACY} .*use reduction='{reduction}'"):
            out = fn(*args, size_average=size_average, reduce=reduce)
    assert_values(out, N(expected))


Y = np.array([0, 2])

# (legacy call, reduction it maps to, the same call with that reduction)
POSITIONAL = [
    ("F.mse_loss(a, b, None, False)", "none", "F.mse_loss(a, b, reduction='none')"),
    ("F.l1_loss(a, b, False)", "sum", "F.l1_loss(a, b, reduction='sum')"),
    (
        "F.smooth_l1_loss(a, b, False, True, 'none', 0.5)",
        "sum",
        "F.smooth_l1_loss(a, b, reduction='sum', beta=0.5)",
    ),
    ("F.kl_div(a, p, None, False)", "none", "F.kl_div(a, p, reduction='none')"),
    ("F.nll_loss(a, y, w, False)", "sum", "F.nll_loss(a, y, w, reduction='sum')"),
    (
        "F.cross_entropy(a, y, None, None, 1, False, 'mean', 0.1)",
        "none",
        "F.cross_entropy(a, y, ignore_index=1, reduction='none', label_smoothing=0.1)",
    ),
    (
        "F.binary_cross_entropy(p, q, w3, None, False)",
        "none",
        "F.binary_cross_entropy(p, q, w3, reduction='none')",
    ),
    (
        "F.binary_cross_entropy_with_logits(a, q, None, False, True, 'none', w3)",
        "sum",
        "F.binary_cross_entropy_with_logits(a, q, reduction='sum', pos_weight=w3)",
    ),
]


@pytest.mark.parametrize("legacy, reduction, modern", POSITIONAL)
def test_deprecated_arguments_take_pytorchs_positions(legacy, reduction, modern):
    rng = np.random.default_rng(6)
    env = {
        "F": F,
        "a": T(rng.normal(size=(2, 3))),
        "b": T(rng.normal(size=(2, 3))),
        "p": T(rng.uniform(0.1, 0.9, size=(2, 3))),
        "q": T(rng.uniform(size=(2, 3))),
        "y": T(Y),
        "w": T(rng.uniform(0.5, 2, size=(3,))),
        "w3": T(rng.uniform(0.5, 2, size=(2, 3))),
    }
    with pytest.warns(UserWarning, match=f"use reduction='{reduction}'"):
        out = eval(legacy, env)
    assert_values(out, N(eval(modern, env)))


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "kl_div", "soft_margin_loss"])
def test_a_reduction_passed_where_size_average_stands_is_refused(name):
    # PyTorch reads a string there as a true size_average (a 'mean', whatever it says);
    # chainrule's mse_loss took the reduction third before it took size_average.
    a = T(np.ones((2, 2)))
    with pytest.raises(TypeError, match=r"pass reduction='sum' by keyword"):
        getattr(F, name)(a, a, "sum")
    with pytest.raises(TypeError, match=r"reduce is a deprecated flag"):
        getattr(F, name)(a, a, None, "none")


@pytest.mark.parametrize(
    "make",
    [
        lambda: nn.MSELoss(False, False),
        lambda: nn.L1Loss(reduce=False),
        lambda: nn.CrossEntropyLoss(None, True, -100, False),
        lambda: nn.NLLLoss(None, None, -100, False),
        lambda: nn.BCEWithLogitsLoss(None, None, False),
        lambda: nn.KLDivLoss(True, False),
        lambda: nn.MultiMarginLoss(reduce=False),
        lambda: nn.PoissonNLLLoss(True, False, None, 1e-8, False),
        lambda: nn.TripletMarginLoss(1.0, 2.0, 1e-6, False, None, False),
    ],
)
def test_loss_modules_turn_the_deprecated_arguments_into_their_reduction(make):
    with pytest.warns(UserWarning, match=LEGACY):
        loss = make()
    assert loss.reduction == "none"


# ----------------------------------------------------------------------- edges and errors


def test_poisson_nll_loss_at_zero_counts_and_zero_rates():
    # full=True adds Stirling's term only where t > 1, so a count of 0 costs nothing
    # there; log(0) of a rate of 0 is kept finite by eps. PyTorch's target gradient at t = 0
    # with full=True is NaN (0 * log 0 in its backward); chainrule's is the term's, 0.
    x = leaf([0.0, 0.0, 2.0])
    t = leaf([0.0, 1.0, 3.0])
    out = F.poisson_nll_loss(x, t, log_input=False, full=True, reduction="none")
    stirling = 3 * math.log(3) - 3 + 0.5 * math.log(2 * math.pi * 3)
    assert_values(out, [0.0, -math.log(1e-8), 2.0 - 3 * math.log(2 + 1e-8) + stirling])
    gx, gt = grad(cr.sum(out), (x, t))
    assert_values(gx, [1.0, 1.0 - 1.0 / 1e-8, 1.0 - 3 / (2 + 1e-8)])
    assert_values(gt, [-math.log(1e-8), -math.log(1e-8), -math.log(2 + 1e-8) + math.log(3) + 1 / 6])
    out = F.poisson_nll_loss(T([0.0, -1.0]), T([0.0, 0.0]), full=True, reduction="none")
    assert_values(out, [1.0, math.exp(-1.0)])


def test_gaussian_nll_loss_clamps_var_but_passes_its_gradient():
    # PyTorch raises var to eps without recording it: the value uses eps, and the gradient
    # is d/dvar at eps, as if var were eps.
    x, t = T([1.0, 1.0]), T([0.0, 0.0])
    var = leaf([0.0, 4.0])
    out = F.gaussian_nll_loss(x, t, var, eps=0.5, reduction="none")
    assert_values(out, [0.5 * (math.log(0.5) + 2.0), 0.5 * (math.log(4.0) + 0.25)])
    (g,) = grad(cr.sum(out), var)
    assert_values(g, [0.5 * (1 / 0.5 - 1 / 0.25), 0.5 * (1 / 4.0 - 1 / 16.0)])


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda x: F.gaussian_nll_loss(x, x, -1.0), ValueError, "negative entry"),
        (lambda x: F.gaussian_nll_loss(x, x, T(np.ones((2, 4)))), ValueError, "incorrect size"),
        (lambda x: F.gaussian_nll_loss(x, x, T(np.ones(4))), ValueError, "incorrect size"),
        (lambda x: F.gaussian_nll_loss(x, x, 1.0, reduction="bad"), ValueError, "bad is not valid"),
        (lambda x: F.poisson_nll_loss(x, x, reduction="bad"), ValueError, "bad is not a valid"),
        (
            lambda x: F.margin_ranking_loss(x, x, T(np.ones(3))),
            RuntimeError,
            r"All input tensors should have same dimension but got sizes: input1: \(3, 4\)",
        ),
        (
            lambda x: F.cosine_embedding_loss(x, x, T(np.ones((3, 1)))),
            RuntimeError,
            "0D or 1D target tensor expected, multi-target not supported",
        ),
        (
            lambda x: F.cosine_embedding_loss(x, x, T(1.0)),
            RuntimeError,
            r"0D target tensor expects 1D input tensors, but found inputs with sizes \[3, 4\]",
        ),
        (
            lambda x: F.cosine_embedding_loss(x[0], x[0], T(np.ones(3))),
            RuntimeError,
            r"1D target tensor expects 2D input tensors, but found inputs with sizes \[4\]",
        ),
        (
            lambda x: F.multilabel_soft_margin_loss(x, x, reduction="bad"),
            ValueError,
            "bad is not valid",
        ),
        (
            lambda x: F.multi_margin_loss(x, T([0, 1])),
            RuntimeError,
            r"Expected target size \[3\], but got \[2\]. Input has shape \[3, 4\].",
        ),
        (lambda x: F.multi_margin_loss(x, T([0, 1, 2]), p=3), ValueError, "only p == 1 and p"),
        (
            lambda x: F.multi_margin_loss(x, T([0, 1, 2]), weight=T(np.ones(3))),
            RuntimeError,
            r"inconsistent weight size, expected 4 but got \[3\]",
        ),
        (
            lambda x: F.multi_margin_loss(x, T([0, 1, 2]), weight=T(np.ones((4, 1)))),
            ValueError,
            "weight must be one-dimensional",
        ),
        (
            lambda x: F.multi_margin_loss(x, T([0.0, 1.0, 2.0])),
            RuntimeError,
            "expected scalar type Long but found",
        ),
        (
            lambda x: F.multi_margin_loss(T(np.ones((2, 3, 4))), T([1, 1])),
            RuntimeError,
            r"Expected non-empty vector or matrix with optional 0-dim batch size, but got: "
            r"\[2, 3, 4\]",
        ),
        (
            lambda x: F.multilabel_margin_loss(x, T([[0, 1, -1]] * 3)),
            RuntimeError,
            r"inconsistent target size: \[3, 3\] for input of size: \[3, 4\]",
        ),
        (
            lambda x: F.triplet_margin_loss(x, x[0], x),
            RuntimeError,
            "expected to have the same number of dimensions, but got: anchor 2D, positive 1D",
        ),
        (lambda x: F.triplet_margin_loss(x, x, x, margin=0), ValueError, "greater than 0, got 0"),
        (
            lambda x: F.triplet_margin_with_distance_loss(x, x, x, margin=-1.0),
            ValueError,
            "margin must be greater than 0, got -1.0",
        ),
        (lambda x: nn.MultiMarginLoss(p=3), ValueError, "only p == 1 and p == 2 supported"),
        (lambda x: nn.TripletMarginLoss(margin=0.0), ValueError, "greater than 0"),
    ],
)
def test_bad_loss_arguments_raise_as_pytorch(call, error, message):
    with pytest.raises(error, match=message):
        call(T(np.zeros((3, 4))))


@skip_on("dask", reason="values are not read on lazy storage (docs/from-pytorch.md)")
@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda x: F.gaussian_nll_loss(x, x, T(-np.ones((3, 4)))), ValueError, "negative entry"),
        (lambda x: F.multi_margin_loss(x, T([0, 1, 4])), RuntimeError, "target out of range"),
        (lambda x: F.multi_margin_loss(x, T([0, -1, 1])), RuntimeError, "target out of range"),
        (
            lambda x: F.multilabel_margin_loss(x, T([[0, 4, -1, 2]] * 3)),
            RuntimeError,
            "argument #2 'target' is out of range",
        ),
        (
            lambda x: F.multilabel_margin_loss(x, T([[0, -2, -1, 2]] * 3)),
            RuntimeError,
            "argument #2 'target' is out of range",
        ),
    ],
)
def test_bad_label_and_variance_values_raise_as_pytorch(call, error, message):
    with pytest.raises(error, match=message):
        call(T(np.zeros((3, 4))))


def test_labels_after_the_first_minus_one_are_not_read():
    # PyTorch's multilabel_margin_loss stops at the first -1: what follows may be anything.
    x = T(np.array([[0.5, -0.2, 0.1]]))
    out = F.multilabel_margin_loss(x, T([[1, -1, 7]]))
    assert_values(out, ((1 - (-0.2) + 0.5) + (1 - (-0.2) + 0.1)) / 3)


def test_margin_losses_of_an_empty_batch_are_pytorchs():
    # PyTorch's mean over no samples is 0 here (NaN for the pointwise losses).
    x = leaf(np.zeros((0, 4)))
    for out in (
        F.multi_margin_loss(x, T(np.zeros(0, np.int64))),
        F.multilabel_margin_loss(x, T(np.zeros((0, 4), np.int64))),
    ):
        assert_values(out, 0.0)
        (g,) = grad(out, x)
        assert g.shape == (0, 4)


def test_soft_margin_loss_stays_finite_where_pytorchs_overflows():
    # PyTorch's log1p(exp(800)) is inf; the loss is 800 (documented in docs/from-pytorch.md).
    x = leaf([-800.0, 800.0])
    out = F.soft_margin_loss(x, T([1.0, 1.0]), reduction="none")
    assert_values(out, [800.0, 0.0])
    (g,) = grad(cr.sum(out), x)
    assert_values(g, [-1.0, 0.0])


def test_multi_margin_loss_second_derivative_exists():
    # PyTorch has no double backward for multi_margin_loss; chainrule's is the composition's:
    # 2 for each squared hinge that counts (p=2), with the target's entry the negative sum.
    x = leaf([[0.2, 0.5, -0.3]])
    (g,) = grad(F.multi_margin_loss(x, T([0]), p=2, reduction="sum"), x, create_graph=True)
    (gg,) = grad(cr.sum(g), x, retain_graph=True)
    # both other classes count (z = 1.3 and 0.5): d2/dx2 of (z1^2 + z2^2) / 3, summed by rows
    assert_values(gg, [[0.0, 0.0, 0.0]], atol=1e-14)
    h = grad(g[0, 1], x)[0]
    assert_values(h, [[-2 / 3, 2 / 3, 0.0]])


def test_loss_modules_hold_their_settings():
    weight = T(np.ones(3))
    loss = nn.MultiMarginLoss(p=2, margin=0.5, weight=weight)
    assert (loss.p, loss.margin, loss.reduction) == (2, 0.5, "mean")
    assert loss.weight is weight and "weight" in loss.state_dict()
    assert "weight" in nn.MultiLabelSoftMarginLoss(weight=weight).state_dict()
    assert repr(nn.SoftMarginLoss(reduction="sum")) == "SoftMarginLoss(reduction='sum')"
    triplet = nn.TripletMarginLoss(margin=2.0, p=1.0, swap=True)
    assert (triplet.margin, triplet.p, triplet.eps, triplet.swap) == (2.0, 1.0, 1e-6, True)
    poisson = nn.PoissonNLLLoss(log_input=False, full=True, eps=0.1)
    assert (poisson.log_input, poisson.full, poisson.eps) == (False, True, 0.1)
    assert nn.GaussianNLLLoss(full=True).full


# ------------------------------------------------------------------------------ Hypothesis

POINTWISE = {
    "poisson": (
        lambda x, t: F.poisson_nll_loss(x, t * t, reduction="none"),
        lambda x, t: np.exp(x) - t * t * x,
    ),
    "gaussian": (
        lambda x, t: F.gaussian_nll_loss(x, t, 0.7, reduction="none"),
        lambda x, t: 0.5 * (math.log(0.7) + (x - t) ** 2 / 0.7),
    ),
    "soft_margin": (
        lambda x, t: F.soft_margin_loss(x, t, reduction="none"),
        lambda x, t: np.log1p(np.exp(-x * t)),
    ),
}


@given(
    name=st.sampled_from(sorted(POINTWISE)),
    data=st.data(),
    shapes=broadcastable(2),
)
def test_pointwise_losses_on_drawn_shapes_and_values(name, data, shapes):
    a = data.draw(arrays(shapes.input_shapes[0]))
    b = data.draw(arrays(shapes.input_shapes[1]))
    fn, reference = POINTWISE[name]
    shape = np.broadcast_shapes(a.shape, b.shape)
    assert_values(fn(T(a), T(b)), reference(a, b) + np.zeros(shape), rtol=1e-11)
    _both_modes(fn, leaf(a), leaf(b))


@given(
    rows=st.integers(1, 3),
    classes=st.integers(2, 4),
    data=st.data(),
)
def test_multi_margin_loss_on_drawn_scores_matches_its_definition(rows, classes, data):
    # Scores on a grid a quarter apart from margin - x[y] + x[i], so no hinge sits at 0.
    x = data.draw(arrays((rows, classes), floats(-2, 2).map(lambda v: round(v * 4) / 4)))
    y = np.array(data.draw(st.lists(st.integers(0, classes - 1), min_size=rows, max_size=rows)))
    margin = 0.9
    z = margin - x[np.arange(rows), y][:, None] + x
    z[np.arange(rows), y] = 0.0
    expected = (np.maximum(z, 0.0) ** 2).sum(1) / classes
    fn = lambda s: F.multi_margin_loss(s, T(y), p=2, margin=margin, reduction="none")  # noqa: E731
    assert_values(fn(T(x)), expected)
    _both_modes(fn, leaf(x))


# -------------------------------------------------------------------- vmap and compile

PER_SAMPLE = {
    "multi_margin_loss": lambda x, y, ml, v: F.multi_margin_loss(x, y, p=2),
    "multilabel_margin_loss": lambda x, y, ml, v: F.multilabel_margin_loss(x, ml),
    "gaussian_nll_loss": lambda x, y, ml, v: F.gaussian_nll_loss(x, 0.5 * x, v),
    "triplet_margin_loss": lambda x, y, ml, v: F.triplet_margin_loss(x, v, 2.0 * x, swap=True),
    "cosine_embedding_loss": lambda x, y, ml, v: F.cosine_embedding_loss(x, v, T([1.0, -1.0, 1.0])),
}


@pytest.mark.parametrize("name", sorted(PER_SAMPLE))
def test_losses_under_vmap_and_compile_equal_a_loop(name):
    # The label and variance checks read every sample's values under vmap, and nothing while
    # compile traces (a replay runs on other labels).
    rng = np.random.default_rng(1)
    batch = (
        T(rng.normal(size=(4, 3, 5))),
        T(rng.integers(0, 5, size=(4, 3))),
        T(np.array([[[0, 2, -1, 1, 4]] * 3, [[3, 3, 0, -1, 0]] * 3] * 2)),
        T(rng.uniform(0.5, 1.0, size=(4, 3, 5))),
    )
    fn = PER_SAMPLE[name]
    loop = [fn(*(t[i] for t in batch)) for i in range(4)]
    assert_values(cr.func.vmap(fn)(*batch), np.stack([N(v) for v in loop]))
    compiled = cr.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", cr.CompileWarning)
        for i in range(4):
            assert_values(compiled(*(t[i] for t in batch)), N(loop[i]))
