"""The softmax family of chainrule.nn.functional and its layers (Softmax, LogSoftmax, Softmin)
take PyTorch's `dim` (positional or keyword) as well as the Array API's `axis`, and without
either PyTorch's implicit axis: values against NumPy's formulas, both derivatives against
finite differences."""

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
import chainrule.nn.functional as F
from conftest import T, examples
from helpers import arrays, assert_values, check_grads, floats, leaf


def np_softmax(a, axis):
    e = np.exp(a - np.max(a, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


EXPECTED = {
    "softmax": np_softmax,
    "log_softmax": lambda a, axis: np.log(np_softmax(a, axis)),
    "softmin": lambda a, axis: np_softmax(-a, axis),
}
LAYERS = {"softmax": cr.nn.Softmax, "log_softmax": cr.nn.LogSoftmax, "softmin": cr.nn.Softmin}


@pytest.mark.parametrize("name", sorted(EXPECTED))
@examples(20)
@given(a=arrays((3, 4), floats(-5, 5)), axis=st.integers(-2, 1))
def test_softmax_family_takes_dim_positionally_by_keyword_and_as_axis(name, a, axis):
    fn, expected = getattr(F, name), EXPECTED[name](a, axis)
    assert_values(fn(T(a), axis), expected, rtol=1e-12, atol=1e-12)
    assert_values(fn(T(a), dim=axis), expected, rtol=1e-12, atol=1e-12)
    assert_values(fn(T(a), axis=axis), expected, rtol=1e-12, atol=1e-12)
    assert_values(LAYERS[name](axis)(T(a)), expected, rtol=1e-12, atol=1e-12)
    assert_values(LAYERS[name](dim=axis)(T(a)), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_softmax_family_refuses_both_dim_and_axis(name):
    with pytest.raises(TypeError, match="both 'dim' and 'axis'"):
        getattr(F, name)(T(np.ones((2, 3))), 0, axis=0)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_softmax_family_dtype_casts_the_input_first(name):
    a = np.linspace(-1, 1, 6).reshape(2, 3)
    out = getattr(F, name)(T(a, "float32"), 1, dtype=cr.float64)
    assert out.dtype == cr.float64
    assert_values(out, EXPECTED[name](a.astype(np.float32).astype(np.float64), 1))


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_family_gradients_along_dim_match_finite_differences(name, dim):
    a = np.array([[0.3, -1.2, 0.5, 2.0], [1.1, 0.0, -0.4, 0.7], [-0.9, 0.2, 1.6, -0.1]])
    fn = getattr(F, name)
    check_grads(lambda x: fn(x, dim), leaf(a))


def test_softmax_layer_prints_its_dim():
    assert repr(cr.nn.Softmin(dim=1)) == "Softmin(dim=1)"


@pytest.mark.parametrize("name", sorted(EXPECTED))
@pytest.mark.parametrize("ndim, axis", [(1, 0), (2, 1), (3, 0), (4, 1)])
def test_without_a_dim_the_axis_is_pytorchs_implicit_choice_with_its_warning(name, ndim, axis):
    # PyTorch's deprecated implicit dim: 0 for 0, 1 or 3 dimensions, else 1 (the last axis
    # before, a different number for 3 and 4 dimensions).
    a = np.random.default_rng(ndim).normal(size=(2, 3, 4, 5)[:ndim])
    message = f"Implicit dimension choice for {name} has been deprecated"
    with pytest.warns(UserWarning, match=message):
        assert_values(getattr(F, name)(T(a)), EXPECTED[name](a, axis), rtol=1e-12, atol=1e-12)
    with pytest.warns(UserWarning, match=message):
        assert_values(LAYERS[name]()(T(a)), EXPECTED[name](a, axis), rtol=1e-12, atol=1e-12)
