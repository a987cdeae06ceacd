"""The deprecated size_average / reduce arguments of every loss that PyTorch gives them:
mapped to a reduction with PyTorch's warning (in chainrule's words), positional as PyTorch's."""

import warnings

import numpy as np
import pytest

import chainrule.nn.functional as F
from chainrule import nn
from conftest import N, T
from helpers import assert_values

LEGACY = "size_average and reduce are deprecated"


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


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss", "kl_div"])
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
    ],
)
def test_loss_modules_turn_the_deprecated_arguments_into_their_reduction(make):
    with pytest.warns(UserWarning, match=LEGACY):
        loss = make()
    assert loss.reduction == "none"
