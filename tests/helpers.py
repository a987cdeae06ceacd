"""What the test files share: Hypothesis strategies for shapes and values, and the checks of
values and of first and second derivatives. The backend under test and the tensors made in it
(T, N, BACKEND, markers for a library's gaps) are in conftest.py."""

import math
import operator

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T

MAX_SIZE = 12


def floats(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


WIDE = floats(-2, 2)
POSITIVE = floats(0.5, 3)
UNIT = floats(-0.8, 0.8)
AWAY_FROM_ZERO = st.one_of(floats(-3, -0.1), floats(0.1, 3))
# Either sign, at least 0.5 from zero.
SIGNED = st.one_of(POSITIVE, POSITIVE.map(lambda v: -v))
# Away from integers and half-integers: where sign, floor, ceil, trunc and round jump.
AWAY_FROM_JUMPS = st.builds(operator.add, st.integers(-3, 2), floats(0.1, 0.4))
# Two grids a quarter apart: a value of one never equals a value of the other.
GRID = st.integers(-4, 4).map(lambda k: k / 2)
OFF_GRID = st.integers(-4, 4).map(lambda k: k / 2 + 0.25)
# x / y stays at least 0.15 from an integer: floor_divide and remainder are smooth there.
DIVIDEND = st.builds(operator.add, st.integers(-3, 3), floats(0.3, 0.45))
DIVISOR = st.sampled_from([-2.0, -1.0, -0.5, 0.5, 1.0, 2.0])

SHAPES = hnp.array_shapes(min_dims=0, max_dims=3, min_side=1, max_side=3).filter(
    lambda s: math.prod(s) <= MAX_SIZE
)
NONEMPTY = SHAPES.filter(lambda s: len(s) > 0)


def broadcastable(n):
    """n shapes that broadcast together and with result_shape, which has at most MAX_SIZE
    elements (drawn around a base shape, for a mix of sizes)."""
    return SHAPES.flatmap(
        lambda base: hnp.mutually_broadcastable_shapes(
            num_shapes=n, base_shape=base, min_dims=0, max_dims=3, min_side=1, max_side=3
        )
    ).filter(lambda b: math.prod(b.result_shape) <= MAX_SIZE)


def axes_for(ndim):
    """An `axis` argument for a tensor of ndim dimensions: None, an int or a tuple."""
    if ndim == 0:
        return st.sampled_from([None, ()])
    one = st.integers(-ndim, ndim - 1)
    several = st.lists(one, max_size=ndim, unique_by=lambda a: a % ndim).map(tuple)
    return st.none() | one | several


def axes_of(ndim, min_size=0):
    """Distinct axes of a tensor of `ndim` dimensions, negative ones included, in any order."""
    return st.lists(
        st.integers(-ndim, ndim - 1), min_size=min_size, max_size=ndim, unique_by=lambda a: a % ndim
    ).map(tuple)


def arrays(shape, elements=WIDE):
    return hnp.arrays(np.float64, shape, elements=elements)


def leaf(values, dtype=None):
    return T(values, dtype, requires_grad=True)


def assert_values(t, expected, rtol=1e-12, atol=1e-14):
    """Tensor t holds `expected` (same shape, values within tolerance)."""
    expected = np.asarray(expected)
    assert N(t).shape == expected.shape
    np.testing.assert_allclose(N(t), expected, rtol=rtol, atol=atol)


def check_grads(fn, *inputs, eps=1e-6):
    """First and second derivatives of fn at inputs agree with finite differences."""
    assert gradcheck(fn, inputs, eps=eps)
    assert gradgradcheck(fn, inputs, eps=eps)


def grads_of(fn, *inputs):
    """The gradients of sum(fn(*inputs)) by backward, one per input."""
    cr.sum(fn(*inputs)).backward()
    return [x.grad for x in inputs]


def assert_float32_in_and_out(fn, a):
    """fn keeps float32 values float32, and their gradient too."""
    x = leaf(a, "float32")
    assert fn(x).dtype == cr.float32
    (g,) = grads_of(fn, x)
    assert (g.dtype, g.shape) == (cr.float32, x.shape)


def check_unary(fn, np_fn, a):
    """Values against NumPy, both derivatives, and float32 in and out."""
    assert_values(fn(T(a)), np_fn(a))
    check_grads(fn, leaf(a))
    assert_float32_in_and_out(fn, a)


# ------------------------------------------- the records of fixtures/make_nn_families_fixtures.py


def recorded_kwargs(case):
    """A record's keyword arguments, lists back to the tuples PyTorch was given."""
    return {k: tuple(v) if isinstance(v, list) else v for k, v in case["kwargs"].items()}


def check_recorded_function(case):
    """A recorded call of torch.nn.functional (make_nn_families_fixtures.py) made with
    chainrule.nn.functional: the output and every input's gradient of its weighted sum."""
    inputs = [leaf(a) for a in case["inputs"]]
    first = len(inputs) - len(case["by_name"])
    named = dict(zip(case["by_name"], inputs[first:]))
    fn = getattr(cr.nn.functional, case["function"])
    out = fn(*inputs[:first], **recorded_kwargs(case), **named)
    assert_values(out, np.reshape(case["output"], case["shape"]), rtol=1e-11, atol=1e-13)
    cr.sum(out * T(case["weights"])).backward()
    for x, expected in zip(inputs, case["grads"]):
        assert_values(x.grad, np.reshape(expected, x.shape), rtol=1e-11, atol=1e-13)


def check_recorded_layer(case):
    """A recorded call of a torch.nn layer made with chainrule.nn's, its state dict loaded:
    the output, the input's and every parameter's gradient, the state dict after the call."""
    layer = getattr(cr.nn, case["layer"])(*case["args"], **recorded_kwargs(case))
    assert list(layer.state_dict()) == list(case["state_dict"])
    layer.load_state_dict({k: np.asarray(v) for k, v in case["state_dict"].items()})
    layer.train(case["training"])
    x = leaf(case["input"])
    out = layer(x)
    assert_values(out, np.reshape(case["output"], case["shape"]), rtol=1e-11, atol=1e-13)
    cr.sum(out * T(case["weights"])).backward()
    assert_values(x.grad, np.reshape(case["input_grad"], x.shape), rtol=1e-11, atol=1e-13)
    grads = {k: p.grad for k, p in layer.named_parameters()}
    assert list(grads) == list(case["parameter_grads"])
    for k, expected in case["parameter_grads"].items():
        assert_values(grads[k], np.reshape(expected, grads[k].shape), rtol=1e-11, atol=1e-13)
    after = {k: cr.asarray(v) for k, v in layer.state_dict().items()}
    for k, expected in case["state_dict_after"].items():
        assert_values(after[k], np.reshape(expected, after[k].shape), rtol=1e-11, atol=1e-13)


# ------------------------------------------ the ported programs (fixtures/*_programs.py)


class InDefaultLibrary:
    """chainrule as a ported program's `torch`, but `from_numpy` makes a tensor of the
    default library (PyTorch's, array_api_strict's storage...) from the NumPy data, so that
    the programs run on every library the suite runs on."""

    def __getattr__(self, name):
        return getattr(cr, name)

    @staticmethod
    def from_numpy(a):
        a = np.asarray(a)
        dtype = {"f": cr.float64, "i": cr.int64, "u": cr.int64, "b": cr.bool}[a.dtype.kind]
        return cr.asarray(a.tolist(), dtype=dtype)
