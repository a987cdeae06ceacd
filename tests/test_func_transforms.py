"""chainrule.func with torch.func's semantics: grad, grad_and_value, vjp, jvp, linearize,
jacrev, jacfwd, hessian over pytrees, composed to any order, against closed forms and finite
differences; functional_call on nn modules; autograd.grad with a dict of inputs."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule as cr
from chainrule import func, nn
from chainrule.autograd import functional, gradcheck
from conftest import N, T, fails_on, skip_on
from helpers import SHAPES, arrays, assert_values, leaf

FEW = settings(max_examples=10)


def f_scalar(x):
    """sum(sin(x) * x^2): gradient cos(x) x^2 + 2 x sin(x)."""
    return cr.sum(cr.sin(x) * x**2)


def f_grad(a):
    return np.cos(a) * a**2 + 2 * a * np.sin(a)


def f_hess(a):
    return np.diag(-np.sin(a) * a**2 + 4 * a * np.cos(a) + 2 * np.sin(a))


def f_vector(x, y):
    """A function of two inputs with two outputs, for Jacobians."""
    return {"p": cr.exp(x) * cr.sum(y), "q": cr.tanh(x[..., :1]) * y[0]}


# ----------------------------------------------------------------------------- grad


@FEW
@given(a=arrays(SHAPES))
def test_grad_is_the_gradient(a):
    assert_values(func.grad(f_scalar)(T(a)), f_grad(a), rtol=1e-10)


def test_grad_over_argnums_and_pytrees():
    params = {"w": T([1.0, 2.0]), "b": [T(0.5), None]}
    x = T([3.0, -1.0])

    def loss(params, x):
        return cr.sum((params["w"] * x + params["b"][0]) ** 2)

    g = func.grad(loss)(params, x)
    r = N(params["w"]) * N(x) + 0.5
    assert list(g) == ["w", "b"] and g["b"][1] is None
    assert_values(g["w"], 2 * r * N(x))
    assert_values(g["b"][0], np.sum(2 * r))
    gp, gx = func.grad(loss, argnums=(0, 1))(params, x)
    assert_values(gx, 2 * r * N(params["w"]))
    assert_values(func.grad(loss, argnums=-1)(params, x), gx)


def test_grad_of_an_unused_input_is_zeros():
    gx, gy = func.grad(lambda x, y: cr.sum(x), argnums=(0, 1))(T([1.0, 2.0]), T([3.0]))
    assert_values(gx, [1.0, 1.0])
    assert_values(gy, [0.0], atol=0)


def test_grad_and_value_and_aux():
    x = T([1.0, 2.0])
    g, value = func.grad_and_value(lambda x: cr.sum(x**2))(x)
    assert_values(g, [2.0, 4.0])
    assert_values(value, 5.0)
    g, (value, aux) = func.grad_and_value(lambda x: (cr.sum(x**2), {"m": x * 2}), has_aux=True)(x)
    assert_values(aux["m"], [2.0, 4.0])
    g, aux = func.grad(lambda x: (cr.sum(x**2), x[0]), has_aux=True)(x)
    assert_values(g, [2.0, 4.0])
    assert_values(aux, 1.0)
    assert not value.requires_grad and not aux.requires_grad


def test_grad_errors():
    x = T([1.0, 2.0])
    with pytest.raises(RuntimeError, match="Expected f\\(\\*args\\) to return a scalar Tensor"):
        func.grad(cr.sin)(x)
    with pytest.raises(RuntimeError, match="to return a Tensor"):
        func.grad(lambda x: 3.0)(x)
    with pytest.raises(RuntimeError, match="Got argnum=2, but only 1 positional inputs"):
        func.grad(cr.sum, argnums=2)(x)
    with pytest.raises(RuntimeError, match="floating point"):
        func.grad(cr.sum)(T([1, 2]))
    with pytest.raises(ValueError, match="must be Tensor"):
        func.grad(lambda x: x)(3.0)
    with pytest.raises(RuntimeError, match="tuple: \\(output, aux\\)"):
        func.grad(cr.sum, has_aux=True)(x)


def test_grad_ignores_an_outer_no_grad_and_respects_one_inside():
    x = T([1.0, 2.0])
    with cr.no_grad():
        g = func.grad(lambda x: cr.sum(x**3))(x)
    assert_values(g, [3.0, 12.0])

    def stopped(x):
        with cr.no_grad():
            y = x * 2
        return cr.sum(y * x)

    assert_values(func.grad(stopped)(x), N(x) * 2)


def test_grad_leaves_dot_grad_alone_and_its_result_backpropagates_to_captured_tensors():
    w = leaf([1.0, -2.0])
    x = leaf([0.5, 3.0])
    g = func.grad(lambda x: cr.sum(w * cr.sin(x)))(x)
    assert x.grad is None and w.grad is None
    assert g.requires_grad
    cr.sum(g).backward()
    assert_values(w.grad, np.cos(N(x)))
    assert x.grad is not None  # x requires grad: the gradient is a function of x too
    assert_values(x.grad, -N(w) * np.sin(N(x)))


def test_grad_result_needs_no_grad_when_nothing_outside_does():
    g = func.grad(lambda x: cr.sum(x**3))(T([1.0, 2.0]))
    assert not g.requires_grad
    w = leaf([1.0])
    with cr.no_grad():
        g = func.grad(lambda x: cr.sum(w * x**3))(T([1.0, 2.0]))
    assert not g.requires_grad


# ----------------------------------------------------------------------------- vjp


def test_vjp_function_returns_a_tuple_and_can_be_called_again():
    x = T([0.5, 1.0])
    out, vjp_fn = func.vjp(cr.sin, x)
    assert_values(out, np.sin(N(x)))
    for _ in range(2):
        result = vjp_fn(T([1.0, 2.0]))
        assert isinstance(result, tuple) and len(result) == 1
        assert_values(result[0], np.cos(N(x)) * [1.0, 2.0])


def test_vjp_over_pytrees_with_aux():
    x, y = T([1.0, 2.0]), T([3.0])
    out, vjp_fn, aux = func.vjp(lambda x, y: ((x * y, {"s": cr.sum(x)}), y * 2), x, y, has_aux=True)
    gx, gy = vjp_fn((T([1.0, 1.0]), {"s": T(1.0)}))
    assert_values(gx, [4.0, 4.0])
    assert_values(gy, [3.0])
    assert_values(aux, [6.0])
    with pytest.raises(RuntimeError, match="pytree structure of cotangents"):
        vjp_fn(T([1.0, 1.0]))
    with pytest.raises(RuntimeError, match="Mismatch in shape"):
        vjp_fn((T([1.0]), {"s": T(1.0)}))


def test_vjp_errors_on_non_tensor_outputs():
    with pytest.raises(RuntimeError, match="to return only tensors"):
        func.vjp(lambda x: (x, 1.0), T([1.0]))


# ----------------------------------------------------------------------------- jvp, linearize


@FEW
@given(a=arrays(SHAPES), v=arrays(SHAPES))
def test_jvp_is_the_directional_derivative(a, v):
    v = np.broadcast_to(v, a.shape) if v.size == 1 else np.resize(v, a.shape)
    out, t = func.jvp(f_scalar, (T(a),), (T(v),))
    assert_values(out, np.sum(np.sin(a) * a**2))
    assert_values(t, np.sum(f_grad(a) * v), rtol=1e-10, atol=1e-12)


def test_jvp_over_pytrees_with_zero_tangents_for_constant_outputs():
    x, y = T([1.0, 2.0]), T([3.0, 4.0])
    (out, const), (t, t_const) = func.jvp(
        lambda d: (d["x"] * d["y"], cr.ones(3)),
        ({"x": x, "y": y},),
        ({"x": T([1.0, 0.0]), "y": T([0.0, 1.0])},),
    )
    assert_values(out, [3.0, 8.0])
    assert_values(t, [3.0, 2.0])
    assert_values(t_const, np.zeros(3), atol=0)
    out, t, aux = func.jvp(lambda x: (x * 2, x + 1), (x,), (T([1.0, 1.0]),), has_aux=True)
    assert_values(t, [2.0, 2.0])
    assert_values(aux, [2.0, 3.0])


def test_jvp_errors():
    x = T([1.0, 2.0])
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        func.jvp(cr.sin, x, (x,))
    with pytest.raises(RuntimeError, match="same python structure"):
        func.jvp(cr.sin, (x,), (x, x))
    with pytest.raises(RuntimeError, match="different size"):
        func.jvp(cr.sin, (x,), (T([1.0]),))


def test_linearize_gives_the_value_and_a_reusable_jvp_function():
    x = T([0.5, 1.0])
    out, jvp_fn = func.linearize(cr.sin, x)
    assert_values(out, np.sin(N(x)))
    for v in ([1.0, 0.0], [2.0, -1.0]):
        assert_values(jvp_fn(T(v)), np.cos(N(x)) * v)


def test_autograd_functional_jvp_runs_forward_mode_and_differentiates_under_create_graph():
    x, v = leaf([0.5, 1.0]), T([1.0, 2.0])
    out, jv = functional.jvp(lambda a: cr.exp(a) * a, x, v)
    assert not jv.requires_grad
    assert_values(jv, (np.exp(N(x)) * (N(x) + 1)) * N(v))
    assert gradcheck(
        lambda a: functional.jvp(lambda b: cr.exp(b) * b, a, v, create_graph=True)[1], x
    )


# ----------------------------------------------------------------------------- Jacobians


@FEW
@given(data=st.data())
def test_jacrev_and_jacfwd_agree_with_finite_differences(data):
    shape = data.draw(SHAPES.filter(lambda s: len(s) > 0))
    x, y = T(data.draw(arrays(shape))), T(data.draw(arrays(shape)))
    rev = func.jacrev(f_vector, argnums=(0, 1))(x, y)
    fwd = func.jacfwd(f_vector, argnums=(0, 1))(x, y)
    expected = functional.jacobian(lambda a, b: tuple(f_vector(a, b).values()), (x, y))
    for key, rows in zip(("p", "q"), expected):
        for k in range(2):
            out = f_vector(x, y)[key]
            assert rev[key][k].shape == out.shape + shape
            assert_values(rev[key][k], N(rows[k]), atol=1e-12)
            assert_values(fwd[key][k], N(rows[k]), atol=1e-12)


def test_jacobians_over_dict_inputs_and_single_argnums():
    d = {"a": T([1.0, 2.0, 3.0]), "b": T([0.5, -1.0])}

    def fn(d):
        return {"o": d["a"] * cr.sum(d["b"])}

    for jac in (func.jacrev, func.jacfwd):
        j = jac(fn)(d)
        assert list(j) == ["o"] and list(j["o"]) == ["a", "b"]
        assert_values(j["o"]["a"], np.eye(3) * -0.5)
        assert_values(j["o"]["b"], np.tile(N(d["a"])[:, None], (1, 2)))


def test_jacobians_with_aux_and_of_scalars():
    x = T([1.0, 2.0])
    for jac in (func.jacrev, func.jacfwd):
        j, aux = jac(lambda x: (x**2, x.shape[0]), has_aux=True)(x)
        assert_values(j, np.diag([2.0, 4.0]))
        assert aux == 2
        assert jac(cr.sum)(x).shape == (2,)


@FEW
@given(a=arrays(SHAPES.filter(lambda s: len(s) == 1)))
def test_hessian_of_every_composition_order(a):
    x = T(a)
    expected = f_hess(a)
    for hess in (
        func.hessian(f_scalar),
        func.jacfwd(func.jacrev(f_scalar)),
        func.jacrev(func.jacrev(f_scalar)),
        func.jacfwd(func.jacfwd(f_scalar)),
        func.jacrev(func.jacfwd(f_scalar)),
        func.jacrev(func.grad(f_scalar)),
        func.jacfwd(func.grad(f_scalar)),
    ):
        h = hess(x)
        assert not h.requires_grad
        assert_values(h, expected, rtol=1e-10, atol=1e-12)
    assert_values(functional.hessian(f_scalar, x), expected, rtol=1e-10, atol=1e-12)


def test_grad_of_grad_and_hessian_vector_products_both_ways():
    a = np.array([0.5, -1.0, 2.0])
    v = T([1.0, 0.5, -2.0])
    x = T(a)
    hv = N(T(f_hess(a)) @ v)
    _, fwd_over_rev = func.jvp(func.grad(f_scalar), (x,), (v,))
    rev_over_fwd = func.grad(lambda x: func.jvp(f_scalar, (x,), (v,))[1])(x)
    rev_over_rev = func.grad(lambda x: cr.sum(func.grad(f_scalar)(x) * v))(x)
    for got in (fwd_over_rev, rev_over_fwd, rev_over_rev):
        assert_values(got, hv, rtol=1e-10)
    g2 = func.grad(func.grad(lambda s: s**4))(T(2.0))
    assert_values(g2, 48.0)


def test_third_derivatives_in_every_mode():
    # f = sum(exp(x) * x): d3 f / dx3 = exp(x) (x + 3) on the diagonal.
    def f(x):
        return cr.sum(cr.exp(x) * x)

    a = np.array([0.5, -0.25])
    x = T(a)
    expected = np.zeros((2, 2, 2))
    expected[[0, 1], [0, 1], [0, 1]] = np.exp(a) * (a + 3)
    for third in (
        func.jacfwd(func.hessian(f)),
        func.jacrev(func.hessian(f)),
        func.jacrev(func.jacrev(func.jacrev(f))),
        func.jacfwd(func.jacfwd(func.jacfwd(f))),
    ):
        assert_values(third(x), expected, rtol=1e-10, atol=1e-12)


def test_nested_jvps_do_not_confuse_their_perturbations():
    one = T(1.0)

    def outer(x):
        return x * func.jvp(lambda y: x + y, (one,), (one,))[1]

    assert_values(func.jvp(outer, (one,), (one,))[1], 1.0)
    assert_values(func.grad(lambda x: x * func.grad(lambda y: x * y)(one))(T(3.0)), 6.0)


def test_a_transformed_function_backpropagates_through_an_outer_graph():
    x = leaf([0.5, 1.5])
    h = func.hessian(f_scalar)(x)
    assert h.requires_grad
    (g,) = cr.autograd.grad(cr.sum(h), x)
    a = N(x)
    third = (
        -np.cos(a) * a**2 - 2 * a * np.sin(a) + 4 * np.cos(a) - 4 * a * np.sin(a) + 2 * np.cos(a)
    )
    assert_values(g, third, rtol=1e-10)


# Indexing under second-order transforms: f(x) = sum(x[key] ** 3), whose Hessian is 6 x_e on
# the diagonal for each element e that key selects (added up where it selects e again).
NOT_STANDARD = skip_on(
    "array_api_strict", reason="array_api_strict refuses this key (beyond the standard)"
)
DASK_KEY = fails_on(
    "dask", reason="Dask has no n-d fancy indexing; a boolean mask gives an unknown size"
)
INDEX_KEYS = [
    pytest.param(key, id=name, marks=marks)
    for name, key, marks in (
        ("int", (1,), ()),
        ("negative int", (-1,), ()),
        ("slice", (slice(1, None),), ()),
        ("negative step", (slice(None, None, -1),), ()),
        ("ellipsis", (Ellipsis, 0), ()),
        ("newaxis", (None, 1), ()),
        ("int, newaxis, slice", (1, None, slice(None)), ()),
        ("repeated array", (np.array([0, 1, 0]),), NOT_STANDARD),
        ("slice, array", (slice(None), np.array([2, 0, 2])), NOT_STANDARD),
        ("two arrays", (np.array([1, 0]), np.array([2, 2])), DASK_KEY),
        ("mask", (np.array([[True, False, True], [False, True, True]]),), DASK_KEY),
        ("int, mask", (0, np.array([True, False, True])), (NOT_STANDARD, DASK_KEY)),
        (
            "slice, newaxis, array",
            (slice(None), None, np.array([1, 2, 1])),
            (NOT_STANDARD, DASK_KEY),
        ),
        ("2-d array", (slice(None), np.array([[0, 1], [2, 2]])), (NOT_STANDARD, DASK_KEY)),
    )
]
INDEXED = np.array([[0.3, -1.2, 0.7], [1.1, 0.4, -0.6]])


def _key(entries):
    return tuple(T(e) if isinstance(e, np.ndarray) else e for e in entries)


def _cubes_hessian(a, entries):
    picked = np.arange(a.size).reshape(a.shape)[entries].ravel()
    h = np.zeros((a.size, a.size))
    np.add.at(h, (picked, picked), 6 * a.ravel()[picked])
    return h.reshape(a.shape + a.shape)


def _cubes_gradient(a, entries):
    picked = np.arange(a.size).reshape(a.shape)[entries].ravel()
    g = np.zeros(a.size)
    np.add.at(g, picked, 3 * a.ravel()[picked] ** 2)
    return g.reshape(a.shape)


@pytest.mark.parametrize("entries", INDEX_KEYS)
def test_second_order_transforms_of_indexing_match_the_closed_form(entries):
    key = _key(entries)

    def f(x):
        return cr.sum(x[key] ** 3)

    expected = _cubes_hessian(INDEXED, entries)
    for second in (
        func.hessian(f),
        func.jacfwd(func.jacrev(f)),
        func.jacrev(func.jacfwd(f)),
        func.jacrev(func.jacrev(f)),
        func.jacfwd(func.jacfwd(f)),
    ):
        assert_values(second(T(INDEXED)), expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("entries", INDEX_KEYS)
def test_batched_gradients_of_indexing_match_a_loop(entries):
    key = _key(entries)

    def f(x):
        return cr.sum(x[key] ** 3)

    samples = np.stack([INDEXED, -2.0 * INDEXED, INDEXED + 0.5])
    expected = np.stack([_cubes_gradient(a, entries) for a in samples])
    for per_sample in (func.vmap(func.jacrev(f)), func.vmap(func.grad(f))):
        assert_values(per_sample(T(samples)), expected, rtol=1e-12, atol=1e-12)
    assert_values(func.vmap(func.jacfwd(f))(T(samples)), expected, rtol=1e-12, atol=1e-12)
    twice = np.stack([samples, samples[::-1]])
    assert_values(
        func.vmap(func.vmap(func.grad(f)))(T(twice)),
        np.stack([expected, expected[::-1]]),
        rtol=1e-12,
        atol=1e-12,
    )


def test_hessian_of_an_element_is_what_torch_func_gives():
    # torch.func.hessian(lambda x: x[1] ** 3)(torch.tensor([.3, -1.2, .7], dtype=float64))
    h = func.hessian(lambda x: x[1] ** 3)(T([0.3, -1.2, 0.7]))
    assert_values(h, [[0.0, 0.0, 0.0], [0.0, -7.2, 0.0], [0.0, 0.0, 0.0]], atol=1e-14)


# ----------------------------------------------------------------------------- functional_call


class TwoLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.first = nn.Linear(3, 2)
        self.second = nn.Linear(2, 1)

    def forward(self, x):
        return self.second(cr.tanh(self.first(x)))


def test_functional_call_swaps_parameters_for_the_call_only():
    cr.random.manual_seed(0)
    model = TwoLayers()
    x = T(np.ones((4, 3)))
    params = {k: cr.zeros_like(v) for k, v in model.named_parameters()}
    before = {k: N(v).copy() for k, v in model.named_parameters()}
    assert_values(func.functional_call(model, params, (x,)), np.zeros((4, 1)), atol=0)
    assert_values(func.functional_call(model, params, x), np.zeros((4, 1)), atol=0)
    for k, v in model.named_parameters():
        assert_values(v, before[k], atol=0)


def test_grad_by_a_dict_of_parameters_matches_backward():
    cr.random.manual_seed(1)
    model = TwoLayers()
    x = T(np.linspace(-1, 1, 12).reshape(4, 3))
    params = {k: v.detach() for k, v in model.named_parameters()}

    def loss(params):
        return cr.mean(func.functional_call(model, params, (x,)) ** 2)

    grads = func.grad(loss)(params)
    cr.mean(model(x) ** 2).backward()
    for k, p in model.named_parameters():
        assert_values(grads[k], N(p.grad), rtol=1e-10)


def test_functional_call_strict_and_tied_weights():
    model = TwoLayers()
    with pytest.raises(RuntimeError, match="Missing key\\(s\\): .*'second.bias'"):
        func.functional_call(
            model, {"first.weight": cr.zeros((2, 3))}, (T(np.ones(3)),), strict=True
        )
    shared = nn.Linear(2, 2)
    both = nn.Sequential(shared, shared)
    w = cr.zeros((2, 2))
    out = func.functional_call(both, {"0.weight": w, "0.bias": cr.ones(2)}, (T([1.0, 1.0]),))
    assert_values(out, [1.0, 1.0])  # both layers (one module) used the given weight and bias
    with pytest.raises(ValueError, match="tied"):
        func.functional_call(
            both, [{"0.weight": w}, {"1.weight": cr.ones((2, 2))}], (T([1.0, 1.0]),)
        )


# ----------------------------------------------------------------------------- autograd.grad


def test_autograd_grad_and_backward_take_a_dict_of_inputs():
    w, b = leaf([1.0, 2.0]), leaf(0.5)
    loss = cr.sum(w * 3.0 + b)
    g = cr.autograd.grad(loss, {"w": w, "b": b}, retain_graph=True)
    assert list(g) == ["w", "b"]
    assert_values(g["w"], [3.0, 3.0])
    assert_values(g["b"], 2.0)
    cr.autograd.backward(loss, inputs={"w": w})
    assert_values(w.grad, [3.0, 3.0]) and b.grad is None
    from collections import OrderedDict

    with pytest.raises(TypeError, match="must be a dict, not OrderedDict"):
        cr.autograd.grad(loss, OrderedDict(w=w))
