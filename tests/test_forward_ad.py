"""Forward mode (chainrule.autograd.forward_ad) with PyTorch's semantics: dual levels, make_dual
and unpack_dual, tangents through every kind of operation (under no_grad too), custom
Functions' jvp, in-place writes, and forward mode combined with reverse mode to any order.
Every rule's JVP is checked in test_forward_rules."""

import gc
import threading
import weakref

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule.autograd import Function, gradcheck
from chainrule.autograd import forward_ad as fwad
from conftest import BACKEND, DASK_LINALG, N, T, fails_on
from helpers import assert_values, leaf


def tangent_of(fn, x, v):
    """The tangent of fn(x) along v, by forward mode."""
    with fwad.dual_level():
        return fwad.unpack_dual(fn(fwad.make_dual(x, v))).tangent


# ----------------------------------------------------------------------------- levels and duals


def test_make_dual_outside_a_dual_level_raises():
    with pytest.raises(RuntimeError, match="no level exists"):
        fwad.make_dual(T([1.0]), T([1.0]))


def test_unpack_dual_gives_a_named_primal_and_tangent():
    x, v = T([1.0, 2.0]), T([0.5, -1.0])
    with fwad.dual_level():
        d = fwad.make_dual(x, v)
        unpacked = fwad.unpack_dual(d)
        assert isinstance(unpacked, fwad.UnpackedDualTensor)
        primal, tangent = unpacked
        assert unpacked.primal is primal and unpacked.tangent is tangent
        assert tangent is v
        assert_values(primal, [1.0, 2.0])
        assert fwad.unpack_dual(primal).tangent is None


def test_a_plain_tensor_has_no_tangent_and_is_its_own_primal():
    x = T([1.0, 2.0])
    with fwad.dual_level():
        assert fwad.unpack_dual(x) == (x, None)
    assert fwad.unpack_dual(x).tangent is None


def test_tangents_are_gone_once_their_level_exits():
    with fwad.dual_level():
        y = cr.sin(fwad.make_dual(T([1.0]), T([1.0])))
        assert fwad.unpack_dual(y).tangent is not None
    assert fwad.unpack_dual(y).tangent is None
    with fwad.dual_level():  # a new level does not see an old level's tangent
        assert fwad.unpack_dual(y).tangent is None
        assert fwad.unpack_dual(cr.exp(y)).tangent is None


def test_tangents_flow_under_no_grad():
    x, v = T([0.5, 1.0, 2.0]), T([1.0, -2.0, 0.5])
    with fwad.dual_level(), cr.no_grad():
        d = fwad.make_dual(x, v)
        y = cr.exp(d) * d
        assert not y.requires_grad
        t = fwad.unpack_dual(y).tangent
    a, b = N(x), N(v)
    assert_values(t, (np.exp(a) * a + np.exp(a)) * b)


def test_make_dual_checks_shape_and_dtype_and_casts_the_tangent():
    with fwad.dual_level():
        with pytest.raises(RuntimeError, match="different size"):
            fwad.make_dual(T([1.0, 2.0]), T([1.0]))
        with pytest.raises(ValueError, match="floating point"):
            fwad.make_dual(T([1, 2]), T([1.0, 2.0]))
        d = fwad.make_dual(T([1.0, 2.0]), T([1.0, 2.0], "float32"))
        assert fwad.unpack_dual(d).tangent.dtype == cr.float64
        assert fwad.unpack_dual(cr.sin(d)).tangent.dtype == cr.float64


def test_dual_operations_take_the_lean_path_at_one_level_with_no_other_feature():
    from chainrule._mode import grad_mode

    assert grad_mode.dual == 0
    with fwad.dual_level() as level:
        assert grad_mode.dual == level
        with fwad.dual_level():
            assert grad_mode.dual == 0
        with cr.autograd.detect_anomaly():
            assert grad_mode.dual == 0
        assert grad_mode.dual == level
    assert grad_mode.dual == 0


def test_levels_exit_innermost_first():
    outer = fwad.enter_dual_level()
    inner = fwad.enter_dual_level()
    try:
        with pytest.raises(RuntimeError, match="not the last one"):
            fwad.exit_dual_level(level=outer)
    finally:
        fwad.exit_dual_level(level=inner)
        fwad.exit_dual_level(level=outer)
    with pytest.raises(RuntimeError):
        fwad.exit_dual_level()


def test_detach_drops_the_tangent():
    with fwad.dual_level():
        d = fwad.make_dual(T([1.0]), T([1.0]))
        assert fwad.unpack_dual(d.detach()).tangent is None


def test_a_dual_level_is_local_to_its_thread():
    seen = []
    with fwad.dual_level():
        d = fwad.make_dual(T([1.0]), T([2.0]))
        worker = threading.Thread(target=lambda: seen.append(fwad.unpack_dual(cr.sin(d))))
        worker.start()
        worker.join()
    assert seen[0].tangent is None


# ----------------------------------------------------------------------------- propagation


def test_tangent_of_a_composite_function():
    x, v = T([0.5, 1.0, 2.0]), T([1.0, 0.0, 2.0])
    t = tangent_of(lambda d: cr.sum(cr.sin(d) * d**2), x, v)
    a, b = N(x), N(v)
    assert_values(t, np.sum((np.cos(a) * a**2 + 2 * np.sin(a) * a) * b))


def test_tangents_broadcast_and_promote_as_the_values_do():
    x = T(np.ones((3, 1)), "float32")
    y = T(np.arange(4.0).reshape(1, 4))  # float64, no tangent
    with fwad.dual_level():
        out = fwad.make_dual(x, T(np.ones((3, 1)), "float32")) * y
        t = fwad.unpack_dual(out).tangent
    assert (t.shape, t.dtype) == ((3, 4), cr.float64)
    assert_values(t, np.broadcast_to(np.arange(4.0), (3, 4)))


def test_piecewise_constant_functions_have_a_zero_tangent():
    assert_values(tangent_of(cr.floor, T([0.5, 1.5]), T([1.0, 1.0])), [0.0, 0.0], atol=0)


@fails_on("dask", reason=DASK_LINALG)
def test_astype_eigvalsh_and_svdvals_of_dual_tensors_carry_tangents():
    v = T([[1.0, 0.5], [0.5, 2.0]])
    a = T([[2.0, 0.0], [0.0, 1.0]])
    assert_values(tangent_of(lambda d: cr.astype(d, cr.float32), T([1.0]), T([3.0])), [3.0])
    assert tangent_of(lambda d: cr.astype(d, cr.int64), T([1.0]), T([3.0])) is None
    assert_values(tangent_of(cr.linalg.eigvalsh, a, v), [2.0, 1.0])
    assert_values(tangent_of(cr.linalg.svdvals, a, v), [1.0, 2.0])


def test_results_without_a_derivative_carry_no_tangent():
    with fwad.dual_level():
        d = fwad.make_dual(T([-1.0, 2.0]), T([1.0, 1.0]))
        for out in (d > 0, cr.argmax(d), cr.isnan(d), cr.astype(d, cr.int64), cr.sign(d) == 1):
            assert fwad.unpack_dual(out).tangent is None


# Integer and boolean operands are constants: their tangent is zero (they once carried their
# values as tangents through the linear JVPs: concat gave [v0, v1, 3, 4]). PyTorch's numbers.
X_INT, V_INT = [1.0, 2.0], [0.5, -1.0]


def jvp_at(fn):
    return cr.func.jvp(fn, (T(X_INT),), (T(V_INT),))[1]


@fails_on("array_api_strict", reason="the standard promotes no integer array with a float one")
def test_integer_and_boolean_operands_of_concat_and_stack_have_a_zero_tangent():
    assert_values(jvp_at(lambda d: cr.concat([d, T([3, 4])])), [0.5, -1.0, 0.0, 0.0], atol=0)
    assert_values(jvp_at(lambda d: cr.concat([T([True]), d])), [0.0, 0.5, -1.0], atol=0)
    assert_values(jvp_at(lambda d: cr.stack([d, T([3, 4])])), [[0.5, -1.0], [0.0, 0.0]], atol=0)


def test_python_numbers_in_where_have_a_zero_tangent():
    assert_values(jvp_at(lambda d: cr.where(d > 1.5, d, 5)), [0.0, -1.0], atol=0)
    assert_values(jvp_at(lambda d: cr.where(d > 1.5, 5.0, d)), [0.5, 0.0], atol=0)


@fails_on("array_api_strict", reason="the standard promotes no integer array with a float one")
def test_integer_values_written_by_item_assignment_have_a_zero_tangent():
    def write(d, key, value):
        y = d * 1.0
        y[key] = value
        return y

    assert_values(jvp_at(lambda d: write(d, 0, 7)), [0.0, -1.0], atol=0)
    assert_values(jvp_at(lambda d: write(d, slice(0, 2), T([7, 8]))), [0.0, 0.0], atol=0)
    assert_values(jvp_at(lambda d: write(d, 1, T(True))), [0.5, 0.0], atol=0)


@pytest.mark.skipif(BACKEND is not np, reason="NumPy's functions on NumPy-backed tensors")
def test_integer_operands_of_numpy_functions_have_a_zero_tangent():
    assert_values(jvp_at(lambda d: np.where(d > 1.5, d, 5)), [0.0, -1.0], atol=0)
    assert_values(jvp_at(lambda d: np.concatenate([d, [3, 4]])), [0.5, -1.0, 0.0, 0.0], atol=0)
    assert_values(jvp_at(lambda d: np.stack([d, np.array([3, 4])])), [[0.5, -1], [0, 0]], atol=0)


def test_complex_results_of_dual_tensors_carry_complex_tangents():
    with fwad.dual_level():
        d = fwad.make_dual(T([1.0]), T([2.0]))
        assert fwad.unpack_dual(cr.astype(d, cr.complex128)).tangent.dtype == cr.complex128
        assert_values(fwad.unpack_dual(cr.fft.fft(d * 1j)).tangent, [2j])
        z = fwad.make_dual(T([1.0 + 1j]), T([1.0 + 0j]))
        assert_values(fwad.unpack_dual(z * z).tangent, [2.0 + 2j])


def test_in_place_operators_and_item_assignment_update_the_tangent():
    with fwad.dual_level():
        d = fwad.make_dual(T([1.0, 2.0]), T([1.0, 1.0]))
        d *= 3.0
        d += fwad.make_dual(T([1.0, 1.0]), T([0.0, 5.0]))
        assert_values(fwad.unpack_dual(d).tangent, [3.0, 8.0])
        y = T([0.0, 0.0, 0.0])
        y[1:] = d
        assert_values(y, [0.0, 4.0, 7.0])
        assert_values(fwad.unpack_dual(y).tangent, [0.0, 3.0, 8.0])


def test_gelu_a_custom_function_inside_has_a_tangent():
    x = leaf([-1.0, 0.25, 2.0])
    assert gradcheck(F.gelu, x, check_forward_ad=True)


# ----------------------------------------------------------------------------- custom Functions


class Cube(Function):
    @staticmethod
    def forward(ctx, x, scale, k):
        ctx.save_for_backward(x)
        ctx.save_for_forward(x)
        ctx.k = k
        return x**3 * scale * k

    @staticmethod
    def backward(ctx, g):
        (x,) = ctx.saved_tensors
        return g * 3 * x**2 * ctx.k, None, None

    @staticmethod
    def jvp(ctx, tx, tscale, tk):
        (x,) = ctx.saved_tensors
        assert tk is None  # a Python number gets None
        assert tscale is not None  # a tensor without a tangent gets zeros
        return (3 * x**2 * tx + x**3 * tscale) * ctx.k


def test_custom_function_jvp_gives_the_tangent():
    x, scale = T([1.0, 2.0]), T([1.0, 1.0])
    t = tangent_of(lambda d: Cube.apply(d, scale, 2.0), x, T([1.0, 0.5]))
    assert_values(t, [6.0, 12.0])


def test_custom_function_jvp_differentiates_again():
    x, v = leaf([1.0, 2.0]), leaf([1.0, 0.5])
    scale = T([1.0, 1.0])

    def jvp(x, v):
        return tangent_of(lambda d: Cube.apply(d, scale, 1.0), x, v)

    assert gradcheck(jvp, (x, v), check_forward_ad=True)


def test_custom_function_without_jvp_raises_in_forward_mode():
    class Twice(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2

    with pytest.raises(NotImplementedError, match="You must implement the jvp function"):
        tangent_of(Twice.apply, T([1.0]), T([1.0]))
    assert_values(Twice.apply(T([1.0])), [2.0])  # reverse mode needs no jvp


def test_custom_function_forward_sees_no_tangents():
    seen = []

    class Spy(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * 2
            seen.append(fwad.unpack_dual(y).tangent)
            return y

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    assert_values(tangent_of(Spy.apply, T([1.0]), T([3.0])), [6.0])
    assert seen == [None]


# ----------------------------------------------------------------------------- with reverse mode


def test_make_dual_of_a_leaf_is_a_view_that_gradients_reach():
    x = leaf([1.0, 2.0])
    with fwad.dual_level():
        d = fwad.make_dual(x, T([1.0, 1.0]))
        assert not d.is_leaf
        cr.sum(d * d).backward()
    assert_values(x.grad, [2.0, 4.0])


def test_reverse_over_forward_differentiates_the_tangent():
    # f = sum(x^3): tangent 3 x^2 v, whose gradient is 6 x v.
    x, v = leaf([1.0, 2.0]), T([0.5, -1.0])
    with fwad.dual_level():
        t = fwad.unpack_dual(cr.sum(fwad.make_dual(x, v) ** 3)).tangent
    (g,) = cr.autograd.grad(t, x)
    assert_values(g, 6 * N(x) * N(v))


@pytest.mark.parametrize("create_graph", [False, True])
def test_forward_over_reverse_gives_a_hessian_vector_product(create_graph):
    # f = sum(sin(x) * x): the gradient's tangent along v is H v.
    a, b = np.array([0.5, 1.0, 2.0]), np.array([1.0, -1.0, 0.5])
    x = leaf(a)
    with fwad.dual_level():
        d = fwad.make_dual(x, T(b))
        (g,) = cr.autograd.grad(cr.sum(cr.sin(d) * d), x, create_graph=create_graph)
        hv = fwad.unpack_dual(g).tangent
    assert g.requires_grad == create_graph
    assert_values(g, np.cos(a) * a + np.sin(a))
    assert_values(hv, (2 * np.cos(a) - np.sin(a) * a) * b)


def test_nested_levels_give_second_derivatives():
    # d/de2 d/de1 exp(x + e1 v1 + e2 v2) = exp(x) v1 v2.
    x = T([0.5])
    with fwad.dual_level() as outer:
        d1 = fwad.make_dual(x, T([2.0]), level=outer)
        with fwad.dual_level() as inner:
            d2 = fwad.make_dual(d1, T([3.0]), level=inner)
            t_inner = fwad.unpack_dual(cr.exp(d2), level=inner).tangent
        second = fwad.unpack_dual(t_inner, level=outer).tangent
    assert_values(second, np.exp([0.5]) * 6.0)


def test_nested_levels_do_not_confuse_their_perturbations():
    # D(x -> x * D(y -> x + y)(1))(1) = 1: the inner derivative is 1, whatever x is.
    def inner_derivative(x):
        with fwad.dual_level():
            y = fwad.make_dual(T([1.0]), T([1.0]))
            return fwad.unpack_dual(x + y).tangent

    assert_values(tangent_of(lambda x: x * inner_derivative(x), T([1.0]), T([1.0])), [1.0])


def test_forward_mode_leaves_no_reference_cycles():
    gc.disable()
    try:
        x = leaf([1.0, 2.0])
        with fwad.dual_level():
            d = fwad.make_dual(x, leaf([1.0, 1.0]))
            y = cr.exp(cr.sin(d) * d)
            (g,) = cr.autograd.grad(cr.sum(y), x, create_graph=True)
            t = fwad.unpack_dual(g).tangent
            refs = [weakref.ref(o) for o in (d, y, g, t)]
            del d, y, g, t
        assert all(r() is None for r in refs)
    finally:
        gc.enable()


def test_compile_runs_forward_mode_eagerly_with_a_warning():
    # A compiled replay runs no JVPs: a function that meets dual tensors falls back to eager.
    def jvp_of_sin(x):
        return cr.func.jvp(cr.sin, (x,), (cr.ones_like(x),))[1]

    compiled = cr.compile(jvp_of_sin)
    x = T([0.5, 1.0])
    with pytest.warns(cr.CompileWarning, match="forward-mode AD"):
        first = compiled(x)
    assert_values(first, np.cos([0.5, 1.0]))
    assert_values(compiled(x), np.cos([0.5, 1.0]))
