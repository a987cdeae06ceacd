"""PyTorch's forms of xlogy: the top-level `chainrule.xlogy`, `Tensor.xlogy` and the in-place
`Tensor.xlogy_`, the same op as `chainrule.special.xlogy`: values, gradients and the scalar
forms as PyTorch 2.13's (recorded below), broadcasting, the derivatives at x = 0 to second
order in both modes, and PyTorch's errors."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import grad, gradcheck, gradgradcheck
from conftest import N, T
from helpers import assert_values, leaf

X = [[0.0, 0.0, 0.0, 1.5], [2.0, 0.0, 3.0, 0.5]]
Y = [2.0, -1.0, 0.5, 3.0]
# torch.xlogy(X, Y) (float64) and the gradients of its sum.
VALUE = [
    [0.0, 0.0, 0.0, 1.6479184330021646],
    [1.3862943611198906, 0.0, -2.0794415416798357, 0.5493061443340549],
]
GRAD_X = [[0.6931471805599453, 0.0, -0.6931471805599453, 1.0986122886681098]] * 2
GRAD_Y = [1.0, 0.0, 6.0, 0.6666666666666666]


def test_the_forms_are_special_xlogy_with_pytorchs_values_and_gradients():
    x, y = leaf(X), leaf(Y)
    for out in (cr.xlogy(x, y), x.xlogy(y), cr.special.xlogy(x, y)):
        assert_values(out, VALUE)
        gx, gy = grad(cr.sum(out), (x, y))
        assert_values(gx, GRAD_X)
        assert_values(gy, GRAD_Y)
    assert cr.xlogy(x, y).grad_fn.name() == "XlogyBackward0"


def test_a_python_number_on_either_side():
    y = leaf(Y)
    out = cr.xlogy(2.0, y)  # PyTorch: [log 4, nan, -log 4, log 9], gradient 2 / y
    assert_values(out, [1.3862943611198906, np.nan, -1.3862943611198906, 2.1972245773362196])
    assert_values(grad(cr.sum(out), y)[0], [1.0, -2.0, 4.0, 0.6666666666666666])
    x = leaf(X)
    out = cr.xlogy(x, 3.0)
    assert_values(out, np.asarray(X) * np.log(3.0))
    assert_values(grad(cr.sum(out), x)[0], np.full((2, 4), np.log(3.0)))
    assert_values(x.xlogy(3.0), np.asarray(X) * np.log(3.0))
    f32 = T([1.0, 2.0], np.float32)
    assert cr.xlogy(2, f32).dtype == cr.float32 and cr.xlogy(f32, 2).dtype == cr.float32


def test_two_python_numbers_are_pytorchs_type_error():
    with pytest.raises(TypeError, match=r"xlogy\(\) received an invalid combination"):
        cr.xlogy(2, 3.0)


def test_the_derivatives_at_x_0_in_both_modes_to_second_order():
    # At x = 0 with y > 0 the function is smooth: finite differences are the oracle.
    x, y = leaf([0.0, 0.0, 1.0]), leaf([0.5, 2.0, 3.0])
    assert gradcheck(cr.xlogy, (x, y), check_forward_ad=True)
    assert gradgradcheck(cr.xlogy, (x, y), check_fwd_over_rev=True)
    assert gradcheck(lambda x, y: x.xlogy(y), (x, y), check_forward_ad=True)


def test_the_conventions_at_x_0_where_y_is_not_positive():
    # PyTorch's: the x-gradient is 0 at (0, -1) and (0, 0), the y-gradient 0 at (0, -1);
    # at (0, 0) PyTorch's y-gradient is 0 / 0 = NaN, chainrule's 0 (docs/from-pytorch.md).
    x, y = leaf([0.0, 0.0]), leaf([-1.0, 0.0])
    gx, gy = grad(cr.sum(cr.xlogy(x, y)), (x, y), create_graph=True)
    assert_values(gx, [0.0, 0.0])
    assert_values(gy, [0.0, 0.0])
    assert_values(grad(cr.sum(gy), x)[0], [-1.0, 0.0])  # 1 / y, 0 at (0, 0)
    with cr.autograd.forward_ad.dual_level():
        dual = cr.autograd.forward_ad.make_dual
        out = cr.xlogy(dual(T([0.0, 0.0]), T([1.0, 1.0])), dual(T([-1.0, 0.0]), T([1.0, 1.0])))
        assert_values(cr.autograd.forward_ad.unpack_dual(out).tangent, [0.0, 0.0])


def test_broadcasting_as_pytorch():
    out = cr.xlogy(T([[1.0], [2.0]]), T([1.0, 2.0, 4.0]))
    assert_values(out, [[0.0, np.log(2.0), np.log(4.0)], [0.0, 2 * np.log(2.0), 2 * np.log(4.0)]])


def test_xlogy_in_place():
    t = T([0.0, 2.0, 1.0])
    assert t.xlogy_(T([3.0, 0.0, np.e])) is t
    np.testing.assert_allclose(N(t), [0.0, -np.inf, 1.0])
    t = T([[1.0, 2.0], [3.0, 4.0]])
    t.xlogy_(2.0)
    assert_values(t, np.log(2.0) * np.asarray([[1.0, 2.0], [3.0, 4.0]]))
    # Recorded: the gradient of sum(a * xlogy(a, b)) through the write.
    a, b = leaf([0.5, 2.0]), leaf([3.0, 0.5])
    c = a * 1.0
    c.xlogy_(b)
    ga, gb = grad(cr.sum(c), (a, b))
    assert_values(ga, np.log([3.0, 0.5]))
    assert_values(gb, [0.5 / 3.0, 4.0])


def test_xlogy_in_place_errors_are_pytorchs():
    with pytest.raises(RuntimeError, match="result type Double can't be cast to the desired "):
        T([1, 2]).xlogy_(2.0)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the broad"):
        T([1.0, 2.0, 3.0]).xlogy_(T(np.ones((2, 3))))
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        leaf([1.0]).xlogy_(2.0)
