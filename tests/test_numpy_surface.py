"""NumPy functions that chainrule writes as composites (_numpy_composites) on tensors: values
against NumPy's on drawn inputs (0-d and 0-size ones where NumPy takes them), gradients
against finite differences to second order, forward mode for the elementwise ones, and
NumPy's errors. The tests build NumPy-backed tensors, whatever the backend under test."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import chainrule as cr
from chainrule.autograd import grad, gradcheck, gradgradcheck
from conftest import N, examples

MAX_SIZE = 12


def floats(lo, hi):
    return st.floats(lo, hi, allow_nan=False, allow_infinity=False)


WIDE = floats(-2, 2)
AWAY_FROM_ZERO = st.one_of(floats(-2, -0.1), floats(0.1, 2))
# Two grids a quarter apart: a value of one never equals one of the other (no ties).
GRID = st.integers(-4, 4).map(lambda k: k / 2)
OFF_GRID = st.integers(-4, 4).map(lambda k: k / 2 + 0.25)


def shapes(min_dims=0, max_dims=3, min_side=0):
    return hnp.array_shapes(
        min_dims=min_dims, max_dims=max_dims, min_side=min_side, max_side=3
    ).filter(lambda s: math.prod(s) <= MAX_SIZE)


def arrays(shape, elements=WIDE):
    return hnp.arrays(np.float64, shape, elements=elements)


def inputs(*parts):
    """A strategy of a tuple of arrays, one per (shape strategy or shape, elements)."""
    return st.tuples(
        *(
            (shape if isinstance(shape, st.SearchStrategy) else st.just(shape)).flatmap(
                lambda s, e=elements: arrays(s, e)
            )
            for shape, elements in parts
        )
    )


def distinct(*shape_list):
    """A strategy of a tuple of arrays of these shapes, each of distinct values (no constant
    rows: correlations are defined)."""
    return st.tuples(
        *(hnp.arrays(np.float64, s, elements=GRID | OFF_GRID, unique=True) for s in shape_list)
    )


def leaf(a):
    return cr.tensor(np.asarray(a, dtype=np.float64), requires_grad=True)


def as_tuple(out):
    return tuple(out) if isinstance(out, (list, tuple)) else (out,)


def assert_like_numpy(fn, arrays_, *, order=2, forward=False, rtol=1e-12):
    """fn on NumPy-backed leaves gives NumPy's values (tensors, of NumPy's shapes); where they
    are floating, their gradients agree with finite differences to `order`, and with forward
    mode's JVPs if `forward`."""
    xs = [leaf(a) for a in arrays_]
    outs, expected = as_tuple(fn(*xs)), as_tuple(fn(*arrays_))
    assert len(outs) == len(expected)
    for out, e in zip(outs, expected):
        assert out.__class__ is cr.Tensor
        assert N(out).shape == np.shape(e)
        np.testing.assert_allclose(N(out), e, rtol=rtol, atol=1e-13)
    differentiable = [o for o in outs if o.dtype.kind in "fc"]
    if not order or not differentiable or all(math.prod(o.shape) == 0 for o in differentiable):
        return

    def fn_tuple(*ts):
        return tuple(o for o in as_tuple(fn(*ts)) if o.dtype.kind in "fc")

    assert gradcheck(fn_tuple, tuple(xs), check_forward_ad=forward)
    if order > 1:
        assert gradgradcheck(fn_tuple, tuple(xs))


# ----------------------------------------------------------------------------- elementwise

ELEMENTWISE = {
    "deg2rad": (np.deg2rad, inputs((shapes(), WIDE))),
    "radians": (np.radians, inputs((shapes(), WIDE))),
    "rad2deg": (np.rad2deg, inputs((shapes(), WIDE))),
    "degrees": (np.degrees, inputs((shapes(), WIDE))),
    "exp2": (np.exp2, inputs((shapes(), WIDE))),
    "fabs": (np.fabs, inputs((shapes(), AWAY_FROM_ZERO))),
    "sinc": (np.sinc, inputs((shapes(), AWAY_FROM_ZERO))),
    "angle deg": (lambda x: np.angle(x, deg=True), inputs((shapes(), AWAY_FROM_ZERO))),
    "logaddexp2": (np.logaddexp2, inputs((shapes(), WIDE), (shapes(max_dims=1), WIDE))),
    "fmax": (np.fmax, inputs(((2, 3), GRID), ((3,), OFF_GRID))),
    "fmin": (np.fmin, inputs(((3,), GRID), ((2, 3), OFF_GRID))),
    "nan_to_num": (np.nan_to_num, inputs((shapes(), WIDE))),
}


@pytest.mark.parametrize("name", ELEMENTWISE)
@given(data=st.data())
@examples(8)
def test_elementwise_numpy_functions_give_numpys_values_and_derivatives_both_modes(name, data):
    fn, draw = ELEMENTWISE[name]
    xs = data.draw(draw)
    if name == "logaddexp2":  # broadcastable: the second input's last axis is the first's
        assume_shape = xs[0].shape[-1:] if xs[0].ndim else ()
        xs = (xs[0], np.resize(xs[1], assume_shape))
    assert_like_numpy(fn, xs, forward=True)


def test_sinc_is_one_at_zero_with_derivative_zero():
    x = leaf([0.0, 0.5])
    y = np.sinc(x)
    np.testing.assert_allclose(N(y), np.sinc([0.0, 0.5]))
    (g,) = grad(y.sum(), x)
    assert N(g)[0] == 0.0


def test_fmax_and_fmin_take_the_other_operand_where_one_is_nan():
    a, b = np.array([1.0, np.nan, np.nan, 2.0]), np.array([np.nan, 3.0, np.nan, 1.0])
    x, y = leaf(a), leaf(b)
    for fn in (np.fmax, np.fmin):
        out = fn(x, y)
        np.testing.assert_array_equal(N(out), fn(a, b))
        gx, gy = grad(cr.sum(cr.where(cr.isnan(out), 0.0, out)), (x, y))
        np.testing.assert_array_equal(N(gx), [1.0, 0.0, 0.0, 1.0 if fn is np.fmax else 0.0])
        np.testing.assert_array_equal(N(gy), [0.0, 1.0, 0.0, 0.0 if fn is np.fmax else 1.0])


def test_fabs_refuses_complex_as_numpy():
    with pytest.raises(TypeError, match="'fabs' not supported"):
        np.fabs(cr.asarray(np.array([1 + 1j])))


def test_nan_to_num_replaces_nan_and_infinities_with_the_values_given():
    a = np.array([np.nan, np.inf, -np.inf, 1.5])
    x = leaf(a)
    np.testing.assert_array_equal(N(np.nan_to_num(x)), np.nan_to_num(a))
    np.testing.assert_array_equal(
        N(np.nan_to_num(x, nan=1.0, posinf=2.0, neginf=-2.0)),
        np.nan_to_num(a, nan=1.0, posinf=2.0, neginf=-2.0),
    )
    (g,) = grad(np.nan_to_num(x).sum(), x)
    np.testing.assert_array_equal(N(g), [0.0, 0.0, 0.0, 1.0])
    z = np.array([np.nan + 1j * np.inf, 2 - 1j])
    np.testing.assert_array_equal(N(np.nan_to_num(cr.asarray(z))), np.nan_to_num(z))


def test_iscomplex_isreal_and_real_if_close_as_numpy():
    z = np.array([1 + 0j, 2 + 1e-20j, 3 + 1j])
    t = cr.asarray(z)
    np.testing.assert_array_equal(N(np.iscomplex(t)), np.iscomplex(z))
    np.testing.assert_array_equal(N(np.isreal(t)), np.isreal(z))
    r = leaf([1.0, 2.0])
    np.testing.assert_array_equal(N(np.iscomplex(r)), [False, False])
    np.testing.assert_array_equal(N(np.isreal(r)), [True, True])
    close = cr.asarray(z[:2])
    assert np.real_if_close(close).dtype == cr.float64
    assert np.real_if_close(t).dtype == cr.complex128
    assert np.real_if_close(r) is r


# ----------------------------------------------------------------------------- NaN-ignoring


def with_nans(a, where):
    a = a.copy()
    a[where[: a.size].reshape(a.shape)] = np.nan
    return a


NAN_REDUCTIONS = {
    "nansum": lambda x, axis: np.nansum(x, axis=axis),
    "nansum keepdims": lambda x, axis: np.nansum(x, axis=axis, keepdims=True),
    "nanmean": lambda x, axis: np.nanmean(x, axis=axis),
    "nanmax": lambda x, axis: np.nanmax(x, axis=axis),
    "nanmin": lambda x, axis: np.nanmin(x, axis=axis, keepdims=True),
}


@pytest.mark.parametrize("name", NAN_REDUCTIONS)
@given(
    a=hnp.arrays(np.float64, (3, 4), elements=st.integers(-8, 8).map(lambda k: k / 4), unique=True),
    mask=hnp.arrays(bool, 12),
    axis=st.sampled_from([None, 0, 1, -1]),
)
@examples(8)
def test_nan_ignoring_reductions_give_numpys_values_and_derivatives(name, a, mask, axis):
    mask[0] = False  # every slice keeps a number: NumPy warns on all-NaN ones
    mask[3] = mask[5] = mask[10] = False
    b = with_nans(a, np.array([m and i % 4 != 0 for i, m in enumerate(mask)]))
    assert_like_numpy(lambda x: NAN_REDUCTIONS[name](x, axis), (b,))


def test_nanmax_of_an_all_nan_slice_is_nan_as_numpy():
    a = np.array([[np.nan, np.nan], [1.0, np.nan]])
    with pytest.warns(RuntimeWarning):
        expected = np.nanmax(a, axis=1)
    np.testing.assert_array_equal(N(np.nanmax(leaf(a), axis=1)), expected)


# ----------------------------------------------------------------------------- shape and order

ANY = shapes()
NONEMPTY_1D = shapes(1, 1, 1)
MATRIX = shapes(2, 2)
AT_LEAST_1D = shapes(1)
AT_LEAST_2D = shapes(2)
AT_LEAST_3D = shapes(3, 3)

SHAPE_CASES = {
    "diag of a vector": (np.diag, inputs((shapes(1, 1), WIDE))),
    "diag k=1": (lambda x: np.diag(x, 1), inputs((shapes(1, 1), WIDE))),
    "diag k=-2": (lambda x: np.diag(x, k=-2), inputs((shapes(1, 1), WIDE))),
    "diag of a matrix": (lambda x: np.diag(x, -1), inputs((MATRIX, WIDE))),
    "diagflat": (lambda x: np.diagflat(x, 1), inputs((ANY, WIDE))),
    "array_split": (lambda x: np.array_split(x, 2), inputs((AT_LEAST_1D, WIDE))),
    "array_split axis": (lambda x: np.array_split(x, 3, axis=-1), inputs((AT_LEAST_1D, WIDE))),
    "split indices": (lambda x: np.split(x, [1, 2], axis=0), inputs((AT_LEAST_1D, WIDE))),
    "split sections": (lambda x: np.split(x, 2, axis=1), inputs(((3, 4), WIDE))),
    "hsplit": (lambda x: np.hsplit(x, [1]), inputs((AT_LEAST_1D, WIDE))),
    "vsplit": (lambda x: np.vsplit(x, [2]), inputs((AT_LEAST_2D, WIDE))),
    "dsplit": (lambda x: np.dsplit(x, [1]), inputs((AT_LEAST_3D, WIDE))),
    "append": (np.append, inputs((ANY, WIDE), (ANY, WIDE))),
    "append axis": (lambda x, y: np.append(x, y, axis=1), inputs(((2, 1), WIDE), ((2, 3), WIDE))),
    "insert scalar": (lambda x: np.insert(x, 1, 7.0), inputs((shapes(1, min_side=1), WIDE))),
    "insert values": (
        lambda x, y: np.insert(x, 0, y, axis=1),
        inputs(((2, 3), WIDE), ((2,), WIDE)),
    ),
    "insert sequence": (
        lambda x, y: np.insert(x, [2, 0, 2], y, axis=0),
        inputs(((2, 3), WIDE), ((3, 1), WIDE)),
    ),
    "insert slice": (lambda x, y: np.insert(x, slice(0, 2), y), inputs(((3,), WIDE), ((2,), WIDE))),
    "delete": (lambda x: np.delete(x, [0, -1]), inputs((shapes(1, 3, 2), WIDE))),
    "delete axis slice": (
        lambda x: np.delete(x, slice(None, None, 2), axis=-1),
        inputs((AT_LEAST_1D, WIDE)),
    ),
    "flipud": (np.flipud, inputs((AT_LEAST_1D, WIDE))),
    "fliplr": (np.fliplr, inputs((AT_LEAST_2D, WIDE))),
    "rot90": (np.rot90, inputs((AT_LEAST_2D, WIDE))),
    "rot90 k=3 axes": (lambda x: np.rot90(x, 3, axes=(2, 0)), inputs((AT_LEAST_3D, WIDE))),
    "rot90 k=2": (lambda x: np.rot90(x, -2), inputs((AT_LEAST_2D, WIDE))),
    "rollaxis": (lambda x: np.rollaxis(x, 2), inputs((AT_LEAST_3D, WIDE))),
    "rollaxis start": (lambda x: np.rollaxis(x, 0, 3), inputs((AT_LEAST_3D, WIDE))),
    "moveaxis": (lambda x: np.moveaxis(x, [0, 1], [-1, 0]), inputs((AT_LEAST_3D, WIDE))),
    "pad constant": (lambda x: np.pad(x, 1), inputs((ANY, WIDE))),
    "pad constant values": (
        lambda x: np.pad(x, ((1, 0), (2, 1)), constant_values=((0.5, 1.0), (2.0, 3.0))),
        inputs((MATRIX, WIDE)),
    ),
    "pad edge": (lambda x: np.pad(x, (2, 1), mode="edge"), inputs((shapes(1, 3, 1), WIDE))),
    "pad reflect": (lambda x: np.pad(x, 2, mode="reflect"), inputs((shapes(1, 2, 2), WIDE))),
    "pad reflect wide": (lambda x: np.pad(x, (5, 4), mode="reflect"), inputs(((3,), WIDE))),
    "pad symmetric": (lambda x: np.pad(x, (4, 1), mode="symmetric"), inputs(((2, 3), WIDE))),
    "pad wrap": (lambda x: np.pad(x, ((3,), (1,)), mode="wrap"), inputs((shapes(2, 2, 1), WIDE))),
    "sort kind": (lambda x: np.sort(x, kind="quicksort"), inputs((AT_LEAST_1D, GRID))),
    "kron": (np.kron, inputs((ANY, WIDE), (ANY, WIDE))),
    "inner": (np.inner, inputs(((2, 3), WIDE), ((4, 3), WIDE))),
    "inner 0-d": (np.inner, inputs(((), WIDE), ((2,), WIDE))),
    "cross": (np.cross, inputs(((2, 3), WIDE), ((3,), WIDE))),
    "cross 2-D vectors": (np.cross, inputs(((2, 2), WIDE), ((2,), WIDE))),
    "cross 2 and 3": (np.cross, inputs(((2,), WIDE), ((2, 3), WIDE))),
    "cross axes": (
        lambda x, y: np.cross(x, y, axisa=0, axisb=1, axisc=0),
        inputs(((3, 2), WIDE), ((2, 3), WIDE)),
    ),
    "einsum lists": (
        lambda x, y: np.einsum(x, [0, 1], y, [1, 2], [0, 2], optimize=True),
        inputs(((2, 3), WIDE), ((3, 2), WIDE)),
    ),
    "einsum lists implicit": (
        lambda x, y: np.einsum(x, [Ellipsis, 0], y, [0], optimize="greedy"),
        inputs(((2, 3), WIDE), ((3,), WIDE)),
    ),
}


@pytest.mark.parametrize("name", SHAPE_CASES)
@given(data=st.data())
@examples(6)
def test_shape_functions_give_numpys_values_and_derivatives(name, data):
    fn, draw = SHAPE_CASES[name]
    assert_like_numpy(fn, data.draw(draw))


def test_partition_puts_the_kth_element_in_place_and_sorts_around_it():
    a = np.array([[3.0, 1.0, 2.0, 0.5], [0.0, -1.0, 4.0, 2.0]])
    x = leaf(a)
    out = np.partition(x, 2, axis=1)
    np.testing.assert_array_equal(N(out)[:, 2], np.partition(a, 2, axis=1)[:, 2])
    assert (N(out)[:, :2] <= N(out)[:, 2:3]).all() and (N(out)[:, 3:] >= N(out)[:, 2:3]).all()
    assert gradgradcheck(lambda t: np.partition(t, (0, 3)), (x,))


@pytest.mark.parametrize(
    "call, error, message",
    [
        (lambda x: np.split(x, 4), ValueError, "does not result in an equal division"),
        (lambda x: np.array_split(x, 0), ValueError, "number sections must be larger than 0"),
        (lambda x: np.dsplit(x, 2), ValueError, "dsplit only works on arrays of 3 or more"),
        (lambda x: np.diag(x[None]), ValueError, "Input must be 1- or 2-d."),
        (lambda x: np.fliplr(x[0]), ValueError, "Input must be >= 2-d."),
        (lambda x: np.rot90(x, axes=(0, 0)), ValueError, "Axes must be different."),
        (lambda x: np.pad(x, 1, mode="median"), NotImplementedError, "modes constant, edge"),
        (lambda x: np.pad(x, -1), ValueError, "negative values"),
        (lambda x: np.pad(x[:0], 1, mode="wrap"), ValueError, "can't extend empty axis 0"),
        (lambda x: np.insert(x, 10, 1.0), IndexError, "index 10 is out of bounds for axis 0"),
        (lambda x: np.delete(x, 3, axis=1), IndexError, "index 3 is out of bounds"),
        (lambda x: np.cross(x[:, :1], x), ValueError, "incompatible dimensions for cross product"),
        (lambda x: np.partition(x, 3), ValueError, r"kth\(=3\) out of bounds"),
        (lambda x: np.average(x, weights=x[0]), TypeError, "Axis must be specified"),
        (lambda x: np.average(x, 1, x[0] * 0), ZeroDivisionError, "Weights sum to zero"),
        (lambda x: np.average(x, 1, x[0, :2]), ValueError, "Shape of weights must be consistent"),
    ],
)
def test_shape_functions_raise_numpys_errors(call, error, message):
    with pytest.raises(error, match=message):
        call(leaf(np.ones((3, 3))))


# ----------------------------------------------------------------------------- selection


@given(
    a=arrays(shapes(), OFF_GRID),
    b=arrays(shapes(max_dims=1), GRID),
)
@examples(8)
def test_select_and_piecewise_give_numpys_values_and_derivatives(a, b):
    b = np.resize(b, a.shape[-1:] if a.ndim else ())

    def select(x, y):
        return np.select([x < 0, x > 1], [x * y, np.sin(x)], default=y)

    def piecewise(x):
        return np.piecewise(x, [x < 0, x > 1], [lambda t: t**2, np.sqrt, 0.5])

    assert_like_numpy(select, (a, b))
    assert_like_numpy(piecewise, (a,))


def test_piecewise_evaluates_each_function_on_its_elements_only():
    a = np.array([-1.0, 4.0, 9.0])
    x = leaf(a)
    out = np.piecewise(x, [x >= 0], [np.sqrt, lambda t: -t])
    np.testing.assert_allclose(N(out), [1.0, 2.0, 3.0])
    (g,) = grad(out.sum(), x)  # no NaN from sqrt below 0
    np.testing.assert_allclose(N(g), [-1.0, 0.25, 1 / 6])


def test_select_refuses_lists_of_different_lengths():
    x = leaf([1.0])
    with pytest.raises(ValueError, match="same length"):
        np.select([x > 0], [x, x])


# ----------------------------------------------------------------------------- creation


@given(
    ends=inputs((shapes(max_dims=2, min_side=1), WIDE), (shapes(max_dims=1, min_side=1), WIDE)),
    num=st.integers(0, 5),
    endpoint=st.booleans(),
)
@examples(10)
def test_linspace_and_logspace_with_tensor_endpoints(ends, num, endpoint):
    lo, hi = ends
    hi = np.resize(hi, lo.shape[-1:] if lo.ndim else ())
    assert_like_numpy(lambda s, t: np.linspace(s, t, num, endpoint=endpoint), (lo, hi))
    assert_like_numpy(lambda s, t: np.linspace(s, t, num, endpoint=endpoint, axis=-1), (lo, hi))
    assert_like_numpy(lambda s, t: np.logspace(s, t, num, endpoint=endpoint, base=2.0), (lo, hi))


def test_linspace_retstep_and_one_sample():
    s, t = leaf(1.0), leaf(3.0)
    y, step = np.linspace(s, t, 5, retstep=True)
    np.testing.assert_allclose(N(y), np.linspace(1.0, 3.0, 5))
    assert float(step) == 0.5
    np.testing.assert_array_equal(N(np.linspace(s, t, 1)), [1.0])


# ----------------------------------------------------------------------------- products, signals

SIGNAL_CASES = {
    "convolve": (np.convolve, inputs((NONEMPTY_1D, WIDE), (NONEMPTY_1D, WIDE))),
    "convolve same": (
        lambda a, v: np.convolve(a, v, "same"),
        inputs((NONEMPTY_1D, WIDE), (NONEMPTY_1D, WIDE)),
    ),
    "convolve valid": (
        lambda a, v: np.convolve(a, v, mode="valid"),
        inputs((NONEMPTY_1D, WIDE), (NONEMPTY_1D, WIDE)),
    ),
    "correlate": (np.correlate, inputs((NONEMPTY_1D, WIDE), (NONEMPTY_1D, WIDE))),
    "correlate same": (
        lambda a, v: np.correlate(a, v, "same"),
        inputs((NONEMPTY_1D, WIDE), (NONEMPTY_1D, WIDE)),
    ),
    "correlate full": (
        lambda a, v: np.correlate(a, v, "full"),
        inputs((NONEMPTY_1D, WIDE), (NONEMPTY_1D, WIDE)),
    ),
    "polyval": (np.polyval, inputs((shapes(1, 1), WIDE), (ANY, WIDE))),
    "trapezoid": (np.trapezoid, inputs((AT_LEAST_1D, WIDE))),
    "trapezoid dx axis": (
        lambda y: np.trapezoid(y, dx=0.5, axis=0),
        inputs((AT_LEAST_1D, WIDE)),
    ),
    "trapezoid x": (lambda y, x: np.trapezoid(y, x), inputs(((2, 3), WIDE), ((3,), WIDE))),
    "gradient": (np.gradient, inputs((shapes(1, 3, 2), WIDE))),
    "gradient spacing axis": (
        lambda f: np.gradient(f, 0.5, axis=-1, edge_order=2),
        inputs((shapes(1, 2, 3), WIDE)),
    ),
    "gradient spacings": (
        lambda f: np.gradient(f, 2.0, 0.5),
        inputs(((3, 4), WIDE)),
    ),
    "gradient coordinates": (
        lambda f, x: np.gradient(f, np.cumsum(np.exp(x)), axis=0),
        inputs(((4, 2), WIDE), ((4,), WIDE)),
    ),
    "gradient coordinates edge_order=2": (
        lambda f, x, y: np.gradient(f, np.cumsum(np.exp(x)), np.cumsum(np.exp(y)), edge_order=2),
        inputs(((3, 4), WIDE), ((3,), WIDE), ((4,), WIDE)),
    ),
    "cov": (np.cov, inputs(((3, 4), WIDE))),
    "cov rowvar y": (
        lambda m, y: np.cov(m, y, rowvar=False, ddof=0),
        inputs(((4, 2), WIDE), ((4,), WIDE)),
    ),
    "cov 1-D bias": (lambda m: np.cov(m, bias=True), inputs(((4,), WIDE))),
    "corrcoef": (np.corrcoef, distinct((3, 4))),
    "corrcoef y": (np.corrcoef, distinct((4,), (4,))),
    # scikit-learn's hinge_loss and others average with np.average.
    "average": (np.average, inputs((shapes(1, 3, 1), WIDE))),
    "average axes returned": (
        lambda a: np.average(a, axis=(0, 2), keepdims=True, returned=True),
        inputs(((2, 3, 2), WIDE)),
    ),
    "average weights": (
        lambda a, w: np.average(a, weights=w, returned=True),
        inputs(((2, 3), WIDE), ((2, 3), floats(0.5, 2))),
    ),
    "average weights along axes": (
        lambda a, w: np.average(a, axis=(2, 0), weights=w),
        inputs(((2, 3, 2), WIDE), ((2, 2), floats(0.5, 2))),
    ),
}


@pytest.mark.parametrize("name", SIGNAL_CASES)
@given(data=st.data())
@examples(6)
def test_products_and_signal_functions_give_numpys_values_and_derivatives(name, data):
    fn, draw = SIGNAL_CASES[name]
    assert_like_numpy(fn, data.draw(draw), rtol=1e-10)


@given(
    x=arrays(shapes(max_dims=2), st.integers(-12, 12).map(lambda k: k / 4 + 0.1)),
    fp=arrays((5,), WIDE),
)
@examples(10)
def test_interp_gives_numpys_values_and_derivatives(x, fp):
    xp = np.array([-2.0, -1.0, 0.0, 0.5, 1.5])
    assert_like_numpy(np.interp, (x, xp, fp))
    assert_like_numpy(lambda s, f: np.interp(s, xp, f, left=-5.0, right=5.0), (x, fp))


def test_polyval_takes_a_list_of_tensor_coefficients():
    c, x = leaf(2.0), leaf([1.0, 3.0])
    out = np.polyval([c, 1.0, c], x)
    np.testing.assert_allclose(N(out), [5.0, 23.0])
    assert gradgradcheck(lambda c, x: np.polyval([c, 1.0, c], x), (c, x))


def test_histogram_gives_numpys_values():
    a = np.array([0.1, 0.4, 0.45, 0.9])
    counts, edges = np.histogram(leaf(a), bins=3)
    expected = np.histogram(a, bins=3)
    np.testing.assert_array_equal(np.asarray(counts), expected[0])
    np.testing.assert_array_equal(np.asarray(edges), expected[1])


# ----------------------------------------------------------------------------- linalg

RNG = np.random.default_rng(1)


def square(n=3, batch=()):
    return RNG.uniform(-1, 1, size=batch + (n, n))


LINALG_CASES = {
    "eigh lower": (lambda a: np.linalg.eigh(a)[0], (square(),)),
    "eigh upper vectors": (
        lambda a: np.abs(np.linalg.eigh(a, UPLO="U")[1]),
        (square(batch=(2,)),),
    ),  # fmt: skip
    "eigvalsh": (lambda a: np.linalg.eigvalsh(a, UPLO="U"), (square(),)),
    "lstsq": (
        lambda a, b: np.linalg.lstsq(a, b)[0],
        (RNG.uniform(size=(4, 3)), RNG.uniform(size=4)),
    ),
    "lstsq residuals": (
        lambda a, b: np.linalg.lstsq(a, b)[1],
        (RNG.uniform(size=(4, 2)), RNG.uniform(size=(4, 2))),
    ),
    "lstsq wide": (
        lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0],
        (RNG.uniform(size=(2, 3)), RNG.uniform(size=(2, 2))),
    ),
    "tensorinv": (
        lambda a: np.linalg.tensorinv(a + np.eye(6).reshape(6, 2, 3), ind=1),
        (RNG.uniform(size=(6, 2, 3)) / 4,),
    ),
    "tensorsolve": (
        lambda a, b: np.linalg.tensorsolve(a + np.eye(6).reshape(2, 3, 6), b),
        (RNG.uniform(size=(2, 3, 6)) / 4, RNG.uniform(size=(2, 3))),
    ),
    "tensorsolve axes": (
        lambda a, b: np.linalg.tensorsolve(a + np.eye(6).reshape(6, 2, 3), b, axes=(0,)),
        (RNG.uniform(size=(6, 2, 3)) / 4, RNG.uniform(size=(2, 3))),
    ),
    "matrix_power -2": (
        lambda a: np.linalg.matrix_power(a + 3 * np.eye(3), -2),
        (square(),),
    ),
    "pinv hermitian": (lambda a: np.linalg.pinv(a, hermitian=True), (square() + 3 * np.eye(3),)),
}


@pytest.mark.parametrize("name", LINALG_CASES)
def test_numpy_linalg_functions_give_numpys_values_and_derivatives(name):
    fn, xs = LINALG_CASES[name]
    assert_like_numpy(fn, xs, rtol=1e-10)


def test_numpy_eigh_differentiates_what_numpy_computes_along_any_direction():
    # NumPy's eigh reads one triangle: a change of the other changes nothing.
    a = square()
    x = leaf(a)
    (g_lower,) = grad(np.linalg.eigvalsh(x).sum() + np.linalg.eigh(x)[0][0], x)
    assert np.all(np.triu(N(g_lower), 1) == 0)
    (g_upper,) = grad(np.linalg.eigvalsh(x, UPLO="U")[-1], x)
    assert np.all(np.tril(N(g_upper), -1) == 0)
    # chainrule.linalg.eigh is PyTorch's: the symmetric gradient.
    (g_sym,) = grad(cr.linalg.eigvalsh(x).sum(), x)
    np.testing.assert_allclose(N(g_sym), N(g_sym).T)


def test_matrix_rank_hermitian_and_tol_as_numpy():
    a = np.diag([3.0, 1e-3, 0.0]) + np.tril(np.ones((3, 3)), -1) * 1e-9
    x = leaf(a)
    for kwargs in ({}, {"hermitian": True}, {"tol": 1e-2}, {"rtol": 1e-2, "hermitian": True}):
        assert int(np.linalg.matrix_rank(x, **kwargs)) == np.linalg.matrix_rank(a, **kwargs)


def test_lstsq_gives_numpys_rank_and_singular_values():
    a, b = RNG.uniform(size=(4, 3)), RNG.uniform(size=(4,))
    _, res, rank, s = np.linalg.lstsq(leaf(a), leaf(b))
    expected = np.linalg.lstsq(a, b)
    np.testing.assert_allclose(N(res), expected[1])
    assert int(rank) == expected[2]
    np.testing.assert_allclose(N(s), expected[3])


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda x: np.linalg.eigh(x, UPLO="X"), "UPLO argument must be 'L' or 'U'"),
        (lambda x: np.linalg.tensorinv(x, ind=0), "Invalid ind argument."),
        (lambda x: np.linalg.tensorsolve(x[:, :2], x[0]), "prod\\(a.shape\\[b.ndim:\\]\\)"),
    ],
)
def test_numpy_linalg_functions_raise_numpys_errors(call, message):
    with pytest.raises((ValueError, np.linalg.LinAlgError), match=message):
        call(leaf(square()))


# ----------------------------------------------------------------------------- Tensor methods

METHOD_CASES = {
    "ravel": (lambda x: x.ravel(), lambda a: a.ravel()),
    "flatten": (lambda x: x.flatten(), lambda a: a.flatten()),
    "squeeze": (lambda x: x.squeeze(), lambda a: a.squeeze()),
    "squeeze axis": (lambda x: x[None].squeeze(0), lambda a: a[None].squeeze(0)),
    "astype": (lambda x: x.astype(cr.float32), lambda a: a.astype(np.float32)),
    "conj": (lambda x: x.conj(), lambda a: a.conj()),
    "conjugate": (lambda x: x.conjugate(), lambda a: a.conjugate()),  # scipy.linalg's
    "reshape *shape": (lambda x: x.reshape(-1, 1), lambda a: a.reshape(-1, 1)),
    "sum axis": (lambda x: x.sum(axis=0), lambda a: a.sum(axis=0)),
    "mean axis keepdims": (
        lambda x: x.mean(axis=-1, keepdims=True),
        lambda a: a.mean(axis=-1, keepdims=True),
    ),
    "std": (lambda x: x.std(axis=None), lambda a: a.std()),
    "std axis ddof": (lambda x: x.std(axis=0, ddof=1), lambda a: a.std(axis=0, ddof=1)),
    "var axis": (lambda x: x.var(axis=-1, keepdims=True), lambda a: a.var(axis=-1, keepdims=True)),
    "max axis": (lambda x: x.max(axis=0), lambda a: a.max(axis=0)),
    "min": (lambda x: x.min(), lambda a: a.min()),
    "dot": (lambda x: x.dot(x.T), lambda a: a.dot(a.T)),
    "dot scalar": (lambda x: x.dot(2.0), lambda a: a.dot(2.0)),
    "copy": (lambda x: x.copy() * 2, lambda a: a.copy() * 2),
    "clip": (lambda x: x.clip(-0.5, 0.5), lambda a: a.clip(-0.5, 0.5)),
    "clip max=": (lambda x: x.clip(max=0.5), lambda a: a.clip(max=0.5)),
}


@pytest.mark.parametrize("name", METHOD_CASES)
@given(a=arrays(shapes(2, 2, 2), OFF_GRID).filter(lambda a: len(np.unique(a)) == a.size))
@examples(5)
def test_numpy_methods_on_tensors_give_ndarrays_values_and_derivatives(name, a):
    method, on_array = METHOD_CASES[name]
    x = leaf(a)
    out = method(x)
    expected = on_array(a)
    assert N(out).shape == expected.shape and out.dtype == expected.dtype
    np.testing.assert_allclose(N(out), expected, rtol=1e-6 if name == "astype" else 1e-13)
    if name != "astype":
        assert gradcheck(method, (x,)) and gradgradcheck(method, (x,))


def test_numpy_methods_all_any_fill_tolist_and_item():
    a = np.array([[0.5, -1.0], [2.0, 0.0]])
    x = leaf(a)
    np.testing.assert_array_equal(N((x > 0).all(axis=1)), (a > 0).all(axis=1))
    np.testing.assert_array_equal(
        N((x > 0).any(axis=0, keepdims=True)), (a > 0).any(axis=0, keepdims=True)
    )
    assert x.tolist() == a.tolist() and x[1, 0].item() == 2.0
    y = x * 1.0
    y.fill(3.0)
    np.testing.assert_array_equal(N(y), np.full((2, 2), 3.0))
    (g,) = grad(y.sum(), x, allow_unused=True)  # filled: nothing of x is left
    assert g is None or not N(g).any()
    with pytest.raises(TypeError, match="with out="):
        x.max(out=np.empty(()))


# ----------------------------------------------------------------------------- complex order

COMPLEX_GRID = st.builds(complex, st.integers(-2, 2), st.integers(-2, 2))


@given(
    a=hnp.arrays(np.complex128, shapes(1, 3, 1), elements=COMPLEX_GRID, unique=True),
    data=st.data(),
)
@examples(10)
def test_max_and_min_of_complex_values_take_numpys_order_and_differentiate(a, data):
    axis = data.draw(st.none() | st.integers(-a.ndim, a.ndim - 1))
    keepdims = data.draw(st.booleans())
    x = cr.tensor(a, requires_grad=True)
    # Distinct real parts a step apart, for finite differences (ties in the real parts are
    # ordered by the imaginary ones: a jump there).
    spread = a + np.arange(a.size).reshape(a.shape) * 10
    y = cr.tensor(spread, requires_grad=True)
    for fn in (np.max, np.min, np.amax, np.amin):
        out = fn(x, axis=axis, keepdims=keepdims)
        np.testing.assert_array_equal(N(out), fn(a, axis=axis, keepdims=keepdims))
        assert gradcheck(lambda t, fn=fn: fn(t, axis=axis, keepdims=keepdims), (y,))
