"""nn.functional.linear with a 1-D weight (in_features,), which PyTorch takes as one output
feature dropped: x @ weight, of x's shape less its last axis."""

import numpy as np

import chainrule.nn.functional as F
from conftest import T
from helpers import assert_values, check_grads


def test_linear_with_a_vector_weight_is_the_product_with_it():
    rng = np.random.default_rng(3)
    x, w = rng.normal(size=(2, 3, 4)), rng.normal(size=4)
    out = F.linear(T(x), T(w))
    assert out.shape == (2, 3)
    assert_values(out, x @ w)
    assert_values(F.linear(T(x[0, 0]), T(w), T(np.asarray(2.0))), x[0, 0] @ w + 2.0)


def test_linear_with_a_vector_weight_has_first_and_second_derivatives():
    rng = np.random.default_rng(4)
    x = T(rng.normal(size=(3, 4)), requires_grad=True)
    w = T(rng.normal(size=4), requires_grad=True)
    check_grads(lambda a, b: F.linear(a, b), x, w)
