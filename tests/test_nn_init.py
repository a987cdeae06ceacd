"""chainrule.nn.init: each initialisation fills its tensor in place without recording a
gradient, with PyTorch's distributions, gains and fan conventions (checked on the statistics
of large draws, and exactly for bounds, constants and orthogonality)."""

import math

import numpy as np
import pytest

import chainrule as cr
from chainrule import nn
from chainrule.nn import init
from conftest import N, T


def weight(*shape):
    return nn.Parameter(T(np.zeros(shape)))


def test_gains_are_pytorchs():
    assert init.calculate_gain("linear") == 1.0 and init.calculate_gain("conv2d") == 1.0
    assert init.calculate_gain("sigmoid") == 1.0
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01**2)))
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("selu") == 0.75
    with pytest.raises(ValueError, match="Unsupported nonlinearity"):
        init.calculate_gain("swish")


def test_fills_write_in_place_and_record_nothing():
    w = weight(3, 4)
    assert init.constant_(w, 0.5) is w
    assert w.is_leaf and w.requires_grad and w.grad_fn is None
    assert N(w.detach()).tolist() == [[0.5] * 4] * 3
    assert N(init.ones_(w).detach()).sum() == 12 and N(init.zeros_(w).detach()).sum() == 0


def test_uniform_and_normal_draw_their_distributions():
    w = weight(200, 100)
    values = N(init.uniform_(w, -0.5, 1.5).detach())
    assert values.min() >= -0.5 and values.max() < 1.5 and abs(values.mean() - 0.5) < 0.02
    values = N(init.normal_(w, 2.0, 0.5).detach())
    assert abs(values.mean() - 2.0) < 0.01 and abs(values.std() - 0.5) < 0.01


def test_xavier_bounds_and_spread_follow_both_fans():
    w = weight(64, 32, 3, 3)  # fan_in 288, fan_out 576
    values = N(init.xavier_uniform_(w, gain=2.0).detach())
    bound = 2.0 * math.sqrt(6 / (288 + 576))
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.99 * bound
    values = N(init.xavier_normal_(w).detach())
    assert values.std() == pytest.approx(math.sqrt(2 / (288 + 576)), rel=0.03)


def test_kaiming_uses_the_gain_of_the_nonlinearity_and_the_fan_of_the_mode():
    w = weight(64, 32, 3, 3)
    values = N(init.kaiming_uniform_(w).detach())  # leaky_relu with slope 0: sqrt(2)
    bound = math.sqrt(2) * math.sqrt(3 / 288)
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.99 * bound
    values = N(init.kaiming_uniform_(w, a=math.sqrt(5)).detach())  # nn.Linear's own choice
    assert np.abs(values).max() <= 1 / math.sqrt(288)
    values = N(init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu").detach())
    assert values.std() == pytest.approx(math.sqrt(2 / 576), rel=0.03)
    with pytest.raises(ValueError, match="Mode fan_avg not supported"):
        init.kaiming_normal_(w, mode="fan_avg")
    with pytest.raises(ValueError, match="fewer than 2 dimensions"):
        init.xavier_uniform_(weight(5))


def test_trunc_normal_stays_within_its_bounds():
    w = weight(300, 100)
    values = N(init.trunc_normal_(w, mean=0.5, std=1.0, a=-0.5, b=1.0).detach())
    assert values.min() >= -0.5 and values.max() <= 1.0
    # The truncated normal's mean: mu + sigma (phi(alpha) - phi(beta)) / (Phi(beta) - Phi(alpha))
    phi = lambda z: math.exp(-z * z / 2) / math.sqrt(2 * math.pi)  # noqa: E731
    cdf = lambda z: (1 + math.erf(z / math.sqrt(2))) / 2  # noqa: E731
    expected = 0.5 + (phi(-1.0) - phi(0.5)) / (cdf(0.5) - cdf(-1.0))
    assert values.mean() == pytest.approx(expected, abs=0.01)


@pytest.mark.parametrize("shape", [(3, 5), (5, 3), (4, 2, 3)])
def test_orthogonal_rows_or_columns_are_orthonormal_times_the_gain(shape):
    w = weight(*shape)
    q = N(init.orthogonal_(w, gain=2.0).detach()).reshape(shape[0], -1)
    small = q @ q.T if q.shape[0] <= q.shape[1] else q.T @ q
    np.testing.assert_allclose(small, 4.0 * np.eye(min(q.shape)), atol=1e-12)


def test_a_generator_makes_the_draw_reproducible():
    a, b = weight(4, 5), weight(4, 5)
    init.kaiming_normal_(a, generator=cr.random.Generator(7))
    init.kaiming_normal_(b, generator=cr.random.Generator(7))
    np.testing.assert_array_equal(N(a.detach()), N(b.detach()))


def test_apply_with_an_init_reinitialises_a_model():
    model = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))

    def reset(m):
        if isinstance(m, nn.Linear):
            init.xavier_uniform_(m.weight)
            init.zeros_(m.bias)

    model.apply(reset)
    assert all(N(m.bias.detach()).sum() == 0 for m in (model[0], model[2]))
