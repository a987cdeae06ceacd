"""NumPy's flat iterator on tensors (`t.flat`): reads by every kind of key NumPy takes (as
NumPy gives them, differentiable), writes in place (`k.flat[:: n + 1] += alpha` as
scikit-learn's kernel ridge does; values repeated in order as NumPy's), the `t.flat = v`
setter, iteration, and gradients against finite differences, first and second order, both
modes."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T

A = np.arange(12.0).reshape(3, 4) / 7.0


def leaf(a):
    return T(a, np.float64, requires_grad=True)


KEYS = {
    "int": 3,
    "negative int": -1,
    "slice": slice(None, None, 5),
    "ellipsis": Ellipsis,
    "list": [0, 5, 7, 5],
    "2-d integer array": np.array([[1, 2], [3, 11]]),
    "boolean mask": A.ravel() > 0.7,
}


@pytest.mark.parametrize("name", KEYS)
def test_flat_reads_what_numpy_reads(name):
    key = KEYS[name]
    got = T(A).flat[key]
    expected = A.flat[key]
    assert got.__class__ is cr.Tensor and got.shape == np.shape(expected)
    np.testing.assert_array_equal(N(got), expected)


def test_flat_reads_a_copy_and_takes_tensor_keys():
    t = T(A)
    got = t.flat[cr.asarray([2, 0])]
    np.testing.assert_array_equal(N(got), A.flat[[2, 0]])
    got = t.flat[1:3]
    got[0] = -1.0  # as NumPy's: the tensor does not see it
    np.testing.assert_array_equal(N(t), A)


@pytest.mark.parametrize(
    "write",
    [
        lambda a: a.flat.__setitem__(slice(None, None, 5), -1.0),
        lambda a: a.flat.__setitem__([0, 1, 2, 3, 4], [9.0, 8.0]),  # repeated in order
        lambda a: a.flat.__setitem__(A.ravel() > 0.7, [[5.0], [6.0]]),
        lambda a: a.flat.__setitem__(4, 2.5),
        lambda a: setattr(a, "flat", [1.0, 2.0, 3.0]),
    ],
)
def test_flat_writes_what_numpy_writes(write):
    expected = A.copy()
    write(expected)
    t = T(A)
    version = t._version
    write(t)
    np.testing.assert_array_equal(N(t), expected)
    assert t._version > version


def test_flat_augmented_assignment_adds_to_the_diagonal_as_kernel_ridge_does():
    k = T(A[:, :3] @ A[:, :3].T)
    expected = A[:, :3] @ A[:, :3].T
    k.flat[::4] += 0.5
    expected.flat[::4] += 0.5
    np.testing.assert_allclose(N(k), expected, rtol=1e-15)


def test_flat_writes_through_a_view_reach_its_base():
    t = T(A)
    expected = A.copy()
    t[:, 1:3].flat[1] = -1.0
    expected[:, 1:3].flat[1] = -1.0
    np.testing.assert_array_equal(N(t), expected)


def test_flat_length_iteration_and_copy():
    t = T(A[:2, :2])
    assert len(t.flat) == 4
    assert [float(v) for v in t.flat] == list(A[:2, :2].ravel())
    np.testing.assert_array_equal(N(t.flat.copy()), A[:2, :2].ravel())


def test_flat_write_to_a_leaf_that_requires_grad_raises_as_pytorch():
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        leaf(A).flat[0] = 1.0


def with_diagonal_added(x, alpha):
    k = x @ x.T
    k.flat[:: k.shape[0] + 1] += alpha  # alpha: a 1-element tensor
    return k


def with_positions_read_and_written(x, v):
    y = x * 1.0
    y.flat[[1, 4, 6, 9]] = v * y.flat[0]  # two values for four positions: repeated in order
    return y.flat[2:]


@pytest.mark.parametrize(
    "fn, shapes",
    [(with_diagonal_added, ((3, 4), (1,))), (with_positions_read_and_written, ((3, 4), (2,)))],
)
def test_flat_reads_and_writes_differentiate_in_both_modes(fn, shapes):
    rng = np.random.default_rng(0)
    inputs = tuple(leaf(rng.uniform(0.2, 0.9, size=s)) for s in shapes)
    assert gradcheck(fn, inputs, check_forward_ad=True)
    assert gradgradcheck(fn, inputs, check_fwd_over_rev=True)
