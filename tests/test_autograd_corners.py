"""The corners of PyTorch's autograd that library authors reach (issue 23, section 3), each
against PyTorch's documented behaviour: autograd.Function under vmap (its vmap staticmethod,
generate_vmap_rule), backward's trailing Nones and its alias vjp; anomaly mode's check_nan;
gradient edges, version bumps and mutation of saved tensors."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from chainrule.autograd import Function, functional, gradcheck, gradgradcheck
from chainrule.autograd.graph import (
    GradientEdge,
    allow_mutation_on_saved_tensors,
    get_gradient_edge,
    increment_version,
)
from conftest import N, T
from helpers import assert_values, leaf

X = np.linspace(-1.0, 1.0, 6).reshape(2, 3)


class NumpyExp(Function):
    """exp computed by NumPy (the forward leaves chainrule), its backward in chainrule's
    operations; under vmap, its vmap staticmethod runs it on the whole batch at once."""

    seen: list = []

    @staticmethod
    def forward(ctx, x):
        y = x.new_tensor(np.exp(x.numpy()))  # in x's library
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, g):
        (y,) = ctx.saved_tensors
        return g * y

    @staticmethod
    def vmap(info, in_dims, x):
        NumpyExp.seen.append((info.batch_size, info.randomness, in_dims, x.shape))
        return NumpyExp.apply(x), in_dims[0]


class LoopedExp(NumpyExp):
    """The same, with chainrule generating the vmap rule (one forward per sample)."""

    generate_vmap_rule = True
    vmap = Function.vmap


class PlainExp(NumpyExp):
    vmap = Function.vmap


@pytest.mark.parametrize("cls", [NumpyExp, LoopedExp])
def test_a_function_whose_forward_leaves_chainrule_is_vmapped(cls):
    x = leaf(X)
    y = func.vmap(cls.apply)(x)
    assert_values(y, np.exp(X))
    cr.sum(y * y).backward()
    assert_values(x.grad, 2 * np.exp(2 * X), rtol=1e-12)
    # Nested vmap and per-sample gradients (vmap of grad), with x requiring grad outside.
    assert_values(func.vmap(func.vmap(cls.apply))(x), np.exp(X))
    per_sample = func.vmap(func.grad(lambda v: cr.sum(cls.apply(v))))(x)
    assert_values(per_sample, np.exp(X), rtol=1e-12)


@pytest.mark.parametrize("cls", [NumpyExp, LoopedExp])
def test_a_vmapped_numpy_function_passes_gradcheck_to_second_order(cls):
    x = leaf(X)
    assert gradcheck(func.vmap(cls.apply), (x,))
    assert gradgradcheck(func.vmap(cls.apply), (x,))


def test_the_vmap_staticmethod_gets_the_batch_and_the_in_dims():
    NumpyExp.seen.clear()
    func.vmap(NumpyExp.apply, in_dims=1, randomness="same")(T(X))
    # Batched along axis 1 (size 3): the staticmethod sees the batch first.
    assert NumpyExp.seen == [(3, "same", (0,), (3, 2))]


def test_without_a_vmap_rule_a_forward_that_leaves_chainrule_cannot_be_vmapped():
    with pytest.raises(RuntimeError, match="vmap"):
        func.vmap(PlainExp.apply)(T(X))


class Scale(Function):
    """x * s with s a Python number, two outputs; the vmap staticmethod returns out_dims."""

    @staticmethod
    def forward(ctx, x, s):
        ctx.s = s
        return x * s, x * (2 * s)

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 * ctx.s + g2 * (2 * ctx.s), None

    @staticmethod
    def vmap(info, in_dims, x, s):
        assert in_dims == (0, None)
        a, b = Scale.apply(cr.moveaxis(x, 0, 1), s)
        return (a, b), (1, 1)


def test_a_vmap_staticmethod_with_several_outputs_and_out_dims():
    x = leaf(X)
    a, b = func.vmap(Scale.apply, in_dims=(0, None))(x, 3.0)
    assert_values(a, 3 * X)
    assert_values(b, 6 * X)
    cr.sum(a + b).backward()
    assert_values(x.grad, np.full(X.shape, 9.0))


def test_a_vmap_staticmethod_and_generate_vmap_rule_together_raise_as_pytorch():
    class Both(NumpyExp):
        generate_vmap_rule = True

    with pytest.raises(RuntimeError, match="has both generate_vmap_rule=True and an overridden"):
        func.vmap(Both.apply)(T(X))


def test_out_dims_that_do_not_match_the_outputs_raise():
    class Bad(NumpyExp):
        @staticmethod
        def vmap(info, in_dims, x):
            return NumpyExp.apply(x), (0,)

    with pytest.raises(RuntimeError, match="incompatible \\(output, out_dims\\)"):
        func.vmap(Bad.apply)(T(X))


# ----------------------------------------------------------------------------- backward


class Double(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2, None, None


def test_a_backward_may_return_trailing_nones_beyond_its_inputs():
    x = leaf([1.0, 2.0])
    cr.sum(Double.apply(x)).backward()
    assert_values(x.grad, [2.0, 2.0])


def test_a_trailing_gradient_that_is_not_none_still_raises_as_pytorch():
    class Extra(Double):
        @staticmethod
        def backward(ctx, g):
            return g * 2, g

    with pytest.raises(RuntimeError, match="ExtraBackward returned an incorrect number of"):
        cr.sum(Extra.apply(leaf([1.0]))).backward()


def test_vjp_is_the_alias_of_backward():
    assert Function.vjp is Function.backward

    class Triple(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 3

        @staticmethod
        def vjp(ctx, g):
            return g * 3

    x = leaf([1.0, 2.0])
    cr.sum(Triple.apply(x)).backward()
    assert_values(x.grad, [3.0, 3.0])

    class Twice(Triple):
        @staticmethod
        def backward(ctx, g):
            return g * 3

    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        cr.sum(Twice.apply(leaf([1.0]))).backward()
    assert N(Twice.apply(T([1.0]))) == 3.0


# ----------------------------------------------------------------------------- anomaly mode


def test_detect_anomaly_without_check_nan_lets_nan_through_but_still_notes_errors():
    z = leaf([0.0, 1.0])
    with np.errstate(invalid="ignore"), cr.autograd.detect_anomaly(check_nan=False):
        assert cr.autograd.is_anomaly_enabled()
        assert not cr.autograd.is_anomaly_check_nan_enabled()
        (cr.sqrt(z) * 0.0).sum().backward()
        y = cr.exp(z).sum()
        y.backward()
        with pytest.raises(RuntimeError) as freed:
            y.backward()
    assert np.isnan(N(z.grad)[0])
    assert "ExpBackward0 was created by" in str(freed.value)
    assert cr.autograd.is_anomaly_check_nan_enabled() and not cr.autograd.is_anomaly_enabled()
    with np.errstate(invalid="ignore"), cr.autograd.detect_anomaly(check_nan=True):
        with pytest.raises(RuntimeError, match="returned nan values"):
            (cr.sqrt(z) * 0.0).sum().backward()


def test_set_detect_anomaly_takes_check_nan_and_restores_both():
    z = leaf([0.0])
    with cr.autograd.set_detect_anomaly(True, check_nan=False):
        with np.errstate(invalid="ignore"):
            (cr.sqrt(z) * 0.0).sum().backward()
        assert not cr.autograd.is_anomaly_check_nan_enabled()
    assert cr.autograd.is_anomaly_check_nan_enabled() and not cr.autograd.is_anomaly_enabled()

    @cr.autograd.detect_anomaly(check_nan=False)
    def run():
        return cr.autograd.is_anomaly_check_nan_enabled()

    assert run() is False


# ----------------------------------------------------------------------------- graph


def test_grad_by_a_gradient_edge_is_grad_by_its_tensor():
    x = leaf([0.5, -1.0, 2.0])
    h = cr.exp(x)
    a, b, c = cr.unstack(h * 2.0)  # b: output 1 of a node with three outputs
    edge_h, edge_x, edge_b = get_gradient_edge(h), get_gradient_edge(x), get_gradient_edge(b)
    assert isinstance(edge_h, GradientEdge) and edge_h.node is h.grad_fn
    assert edge_h.output_nr == 0 and len(edge_h) == 2 and edge_b.output_nr == 1
    loss = a**2 + b**3 + c
    by_tensor = cr.autograd.grad(loss, [h, x, b], retain_graph=True)
    by_edge = cr.autograd.grad(loss, [edge_h, edge_x, edge_b], retain_graph=True)
    for t, e in zip(by_tensor, by_edge):
        assert_values(e, N(t))
    # One edge alone, as PyTorch: the tensor itself may be gone.
    del h
    (g,) = cr.autograd.grad(loss, edge_h)
    assert_values(g, N(by_tensor[0]))
    with pytest.raises(RuntimeError, match="not possible to get the gradient edge"):
        get_gradient_edge(T([1.0]))


def test_backward_into_a_leafs_gradient_edge_fills_its_grad():
    x, w = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    cr.sum(x * w).backward(inputs=[get_gradient_edge(x)])
    assert_values(x.grad, [3.0, 4.0])
    assert w.grad is None


def test_increment_version_makes_backward_refuse_a_value_saved_before():
    x = leaf([1.0, 2.0])
    y = T([3.0, 4.0])
    v = y._version
    out = cr.sum(x * y)  # saves y
    increment_version(y)
    increment_version([y])
    assert y._version == v + 2
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_allow_mutation_on_saved_tensors_lets_backward_use_the_saved_values():
    x, y = leaf([1.0, 2.0]), T([3.0, 4.0])
    with allow_mutation_on_saved_tensors():
        out = cr.sum(x * y)  # saves y
        y[0] = 10.0  # written after it was saved
        out.backward()
    assert_values(x.grad, [3.0, 4.0])
    with pytest.raises(RuntimeError, match="cannot be nested"):
        with allow_mutation_on_saved_tensors(), allow_mutation_on_saved_tensors():
            pass
    # Outside the context, the same program raises as PyTorch.
    out = cr.sum(x * y)
    y[0] = 20.0
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        out.backward()


def test_saved_tensors_hooks_take_over_the_version_check_as_pytorch():
    # What the unpack hook gives back is used as it is: a value written in place after it
    # was packed is the hook's business (PyTorch checks no version then either).
    x, y = leaf([1.0, 2.0]), T([3.0, 4.0])
    with cr.autograd.graph.saved_tensors_hooks(lambda t: t * 1.0, lambda t: t):
        out = cr.sum(x * y)
    y[0] = 10.0
    out.backward()
    assert_values(x.grad, [3.0, 4.0])


# ----------------------------------------------------------------------------- functional API


def two_by_two(x, y):
    return cr.sin(x) * cr.sum(y), y @ x


XY = (T([0.3, 1.2]), T([[1.0, 2.0], [3.0, -0.5]]))


def test_jacobian_by_forward_mode_is_the_reverse_mode_jacobian():
    rev = functional.jacobian(two_by_two, XY)
    fwd = functional.jacobian(two_by_two, XY, vectorize=True, strategy="forward-mode")
    for row_r, row_f in zip(rev, fwd):
        for a, b in zip(row_r, row_f):
            assert a.shape == b.shape
            assert_values(b, N(a), rtol=1e-14)
    assert_values(
        functional.jacobian(cr.sin, XY[0], vectorize=True, strategy="forward-mode"),
        np.diag(np.cos(N(XY[0]))),
    )


def test_jacobian_strategies_refuse_what_pytorch_refuses():
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        functional.jacobian(cr.sin, XY[0], strategy="forward-mode")
    with pytest.raises(NotImplementedError, match="create_graph=True"):
        functional.jacobian(cr.sin, XY[0], True, vectorize=True, strategy="forward-mode")
    with pytest.raises(RuntimeError, match='`strict=True` and `strategy="forward-mode"`'):
        functional.jacobian(cr.sin, XY[0], strict=True, vectorize=True, strategy="forward-mode")
    with pytest.raises(RuntimeError, match="`strict=True` and `vectorized=True`"):
        functional.jacobian(cr.sin, XY[0], strict=True, vectorize=True)
    with pytest.raises(ValueError, match="Expected strategy to be either"):
        functional.jacobian(cr.sin, XY[0], strategy="sideways")


def test_strict_mode_refuses_outputs_independent_of_inputs_in_pytorchs_words():
    x = XY[0]
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not"):
        functional.jacobian(lambda x: cr.ones(2), x, strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is indep"):
        functional.jacobian(lambda x, y: x * 2, (x, x), strict=True)
    with pytest.raises(RuntimeError, match="The output of the user-provided function is indep"):
        functional.vjp(lambda x, y: x * 2, (x, x), cr.ones(2), strict=True)
    with pytest.raises(RuntimeError, match="independent of input 1"):
        functional.jvp(lambda x, y: x * 2, (x, x), (x, x), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not"):
        functional.jvp(lambda x: cr.ones(2), x, x, strict=True)
    with pytest.raises(RuntimeError, match="jacobian of the user-provided function with resp"):
        functional.hessian(lambda x: cr.sum(x), x, strict=True)
    with pytest.raises(RuntimeError, match="The output of the user-provided function is indep"):
        functional.vhp(lambda x, y: cr.sum(x**3), (x, x), (x, x), strict=True)
    # Not strict: zeros, as before.
    _, (gx, gy) = functional.vjp(lambda x, y: x * 2, (x, x), cr.ones(2))
    assert_values(gy, [0.0, 0.0])
    # Strict and dependent: the same numbers as without.
    assert_values(functional.jacobian(cr.sin, x, strict=True), N(functional.jacobian(cr.sin, x)))
    _, jv = functional.jvp(cr.sin, x, x, strict=True)
    assert_values(jv, np.cos(N(x)) * N(x))


def test_hessian_by_forward_over_reverse_and_vectorized():
    def f(x, y):
        return cr.sum(x**3) * cr.sum(y * y)

    plain = functional.hessian(f, XY)
    for kwargs in (
        {"vectorize": True},
        {"vectorize": True, "outer_jacobian_strategy": "forward-mode"},
    ):
        other = functional.hessian(f, XY, **kwargs)
        for row_p, row_o in zip(plain, other):
            for a, b in zip(row_p, row_o):
                assert_values(b, N(a), rtol=1e-12, atol=1e-12)
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        functional.hessian(f, XY, outer_jacobian_strategy="forward-mode")
    with pytest.raises(RuntimeError, match="should return a single Tensor"):
        functional.hessian(lambda x: (x, x), XY[0])
    with pytest.raises(RuntimeError, match="should contain a single element"):
        functional.hessian(lambda x: x * 2, XY[0])


# ----------------------------------------------------------------------------- small names


def test_grad_takes_only_inputs_positionally_and_warns_when_false_as_pytorch():
    x = leaf([1.0, 2.0])
    # PyTorch's order: outputs, inputs, grad_outputs, retain_graph, create_graph,
    # only_inputs, allow_unused.
    (g,) = cr.autograd.grad(cr.sum(x * x), x, None, None, False, True, True)
    assert_values(g, [2.0, 4.0])
    with pytest.warns(UserWarning, match="only_inputs argument is deprecated"):
        cr.autograd.grad(cr.sum(x * x), x, only_inputs=False)


def test_set_multithreading_enabled_is_accepted_and_changes_no_result():
    x = leaf([1.0, 2.0])
    with cr.autograd.set_multithreading_enabled(False):
        (g,) = cr.autograd.grad(cr.sum(cr.sin(x)), x)
    cr.autograd.set_multithreading_enabled(True)
    assert_values(g, np.cos([1.0, 2.0]))


def test_grad_dtype_casts_what_backward_accumulates_into_a_leaf():
    x = cr.ones(2, dtype=cr.float32).requires_grad_()
    assert x.grad_dtype == cr.float32
    x.grad_dtype = cr.float64
    assert x.grad_dtype == cr.float64
    cr.sum(x * 2.0).backward()
    cr.sum(x * 3.0).backward()
    assert x.grad.dtype == cr.float64
    assert_values(x.grad, [5.0, 5.0])
    x.grad_dtype = None
    assert x.grad_dtype is None
    with pytest.raises(RuntimeError, match="grad_dtype can only be accessed on leaf tensors"):
        getattr(x * 2.0, "grad_dtype")  # noqa: B009
    with pytest.raises(RuntimeError, match="grad_dtype can only be set on leaf tensors"):
        (x * 2.0).grad_dtype = cr.float64
    # Other tensors keep their own dtype.
    y = cr.ones(2, dtype=cr.float32).requires_grad_()
    cr.sum(y * 2.0).backward()
    assert y.grad.dtype == cr.float32 and y.grad_dtype == cr.float32


def test_grad_fn_saved_attributes_as_pytorch_names_them():
    x, y = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    node = (x * y).grad_fn
    assert_values(node._saved_self, [1.0, 2.0])
    assert_values(node._saved_other, [3.0, 4.0])
    assert node._saved_self.requires_grad  # on the input's edge, as PyTorch's is the input
    assert (x * 2.0).grad_fn._saved_other == 2.0
    assert_values(cr.sin(x).grad_fn._saved_self, [1.0, 2.0])
    z = cr.exp(x)
    assert_values(z.grad_fn._saved_result, np.exp([1.0, 2.0]))
    with pytest.raises(AttributeError, match="_saved_result"):
        getattr(cr.sin(x).grad_fn, "_saved_result")  # noqa: B009
    cr.sum(z).backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        getattr(z.grad_fn, "_saved_result")  # noqa: B009
