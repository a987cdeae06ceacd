"""The losses on options test_nn_losses.py leaves out, against PyTorch; here 0-size batches."""

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule.autograd import grad
from conftest import T


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_losses_of_an_empty_batch_are_pytorchs(reduction):
    # PyTorch: a 'mean' over nothing is NaN, a 'sum' 0, 'none' empty; the gradient is empty
    a = T(np.zeros((0, 4))).requires_grad_(True)
    labels = T(np.zeros((0,)), np.int64)
    for out, unreduced in (
        (F.cross_entropy(a, labels, reduction=reduction, label_smoothing=0.1), (0,)),
        (F.binary_cross_entropy_with_logits(a, a.detach(), reduction=reduction), (0, 4)),
        (F.mse_loss(a, a.detach(), reduction=reduction), (0, 4)),
    ):
        expected = {"mean": np.nan, "sum": 0.0, "none": np.zeros(unreduced)}[reduction]
        np.testing.assert_array_equal(np.asarray(out.detach().numpy()), expected)
        (g,) = grad(cr.sum(out), a)
        assert g.shape == (0, 4)
