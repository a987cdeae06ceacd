"""torch.func's ensembling and chunking: stack_module_state with functional_call and vmap
against a loop over the models, jacrev(chunk_size=) against the unchunked Jacobian,
jvp(strict=), jacfwd(randomness=), and the transforms' first parameter named `func`."""

import inspect

import numpy as np
import pytest

import chainrule as cr
from chainrule import func, nn
from conftest import N, T
from helpers import assert_values, leaf


class Scaled(nn.Module):
    """A linear layer followed by a buffer that scales it: parameters and a buffer."""

    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(3, 2)
        self.register_buffer("scale", cr.random.rand(2))

    def forward(self, x):
        return cr.tanh(self.lin(x)) * self.scale


def models(n: int) -> list:
    cr.random.manual_seed(0)
    return [Scaled() for _ in range(n)]


def test_stack_module_state_stacks_parameters_and_buffers_by_name():
    ms = models(4)
    params, buffers = func.stack_module_state(ms)
    assert list(params) == ["lin.weight", "lin.bias"] and list(buffers) == ["scale"]
    assert params["lin.weight"].shape == (4, 2, 3)
    for i, m in enumerate(ms):
        assert_values(params["lin.weight"][i], N(m.lin.weight))
        assert_values(buffers["scale"][i], N(m.scale))
    # New leaves, cut from the models' parameters; buffers stay plain tensors.
    assert params["lin.bias"].is_leaf and params["lin.bias"].requires_grad
    assert not buffers["scale"].requires_grad


def test_vmap_of_functional_call_over_stacked_state_is_the_ensemble():
    ms = models(3)
    params, buffers = func.stack_module_state(ms)
    x = T(np.linspace(-1, 1, 15).reshape(5, 3))

    def run(p, b, x):
        return func.functional_call(ms[0], (p, b), (x,))

    out = func.vmap(run, in_dims=(0, 0, None))(params, buffers, x)
    assert out.shape == (3, 5, 2)
    for i, m in enumerate(ms):
        assert_values(out[i], N(m(x)), rtol=1e-12)
    # The ensemble's gradients are each model's own, stacked.
    cr.sum(out**2).backward()
    for i, m in enumerate(ms):
        cr.sum(m(x) ** 2).backward()
        assert_values(params["lin.weight"].grad[i], N(m.lin.weight.grad), rtol=1e-10)
        assert_values(params["lin.bias"].grad[i], N(m.lin.bias.grad), rtol=1e-10)
    # The first model's parameters were only borrowed by functional_call.
    assert ms[0].lin.weight is ms[0]._modules["lin"]._parameters["weight"]


def test_grad_of_an_ensemble_by_vmap_of_grad():
    ms = models(2)
    params, buffers = func.stack_module_state(ms)
    x = T(np.linspace(-1, 1, 6).reshape(2, 3))

    def loss(p, b, x):
        return cr.sum(func.functional_call(ms[0], (p, b), (x,)) ** 2)

    grads = func.vmap(func.grad(loss), in_dims=(0, 0, None))(params, buffers, x)
    for i, m in enumerate(ms):
        cr.sum(m(x) ** 2).backward()
        assert_values(grads["lin.weight"][i], N(m.lin.weight.grad), rtol=1e-10)


def test_stack_module_state_refuses_unlike_models_as_pytorch():
    with pytest.raises(RuntimeError, match="Expected at least one model, got 0"):
        func.stack_module_state([])
    a, b = models(2)
    b.eval()
    with pytest.raises(RuntimeError, match="same training/eval mode"):
        func.stack_module_state([a, b])
    with pytest.raises(RuntimeError, match="same class"):
        func.stack_module_state([nn.Linear(3, 2), nn.Tanh()])
    a, b = models(2)
    b.lin.bias.requires_grad_(False)
    with pytest.raises(RuntimeError, match="Expected lin.bias from each model to have the same"):
        func.stack_module_state([a, b])


# ----------------------------------------------------------------------------- jacrev chunks


def two_outputs(x, y):
    return {"p": cr.exp(x) * cr.sum(y), "q": cr.tanh(x[:2]) * y[0] ** 2}


@pytest.mark.parametrize("chunk_size", [1, 2, 3, 5, 100])
def test_jacrev_in_chunks_is_the_same_jacobian(chunk_size):
    x, y = T([0.3, -0.7, 1.1, 0.2, 0.5]), T([[1.5, -0.5], [0.25, 2.0]])
    whole = func.jacrev(two_outputs, argnums=(0, 1))(x, y)
    chunked = func.jacrev(two_outputs, argnums=(0, 1), chunk_size=chunk_size)(x, y)
    for k in ("p", "q"):
        for a, b in zip(whole[k], chunked[k]):
            assert a.shape == b.shape
            np.testing.assert_array_equal(N(a), N(b))


def test_jacrev_in_chunks_differentiates_again():
    x = leaf([0.3, -0.7, 1.1])
    jac = func.jacrev(lambda x: cr.sin(x) * cr.sum(x**2), chunk_size=2)(x)
    (g,) = cr.autograd.grad(cr.sum(jac), x)
    full = func.jacrev(lambda x: cr.sin(x) * cr.sum(x**2))(x)
    (h,) = cr.autograd.grad(cr.sum(full), x)
    assert_values(g, N(h), rtol=1e-12)


@pytest.mark.parametrize("chunk_size", [0, -1])
def test_jacrev_chunk_size_must_be_positive(chunk_size):
    with pytest.raises(ValueError, match="jacrev: `chunk_size` should be greater than 0"):
        func.jacrev(cr.sin, chunk_size=chunk_size)


# ----------------------------------------------------------------------------- jvp, jacfwd


def test_jvp_strict_refuses_an_output_independent_of_the_inputs():
    x = T([1.0, 2.0])
    _, t = func.jvp(lambda x: cr.ones(2), (x,), (x,))
    assert_values(t, [0.0, 0.0])
    with pytest.raises(RuntimeError, match="The output of f is independent of the inputs"):
        func.jvp(lambda x: cr.ones(2), (x,), (x,), strict=True)
    _, t = func.jvp(cr.sin, (x,), (x,), strict=True)
    assert_values(t, np.cos([1.0, 2.0]) * [1.0, 2.0])


def test_jacfwd_randomness_is_its_vmaps():
    x = T([1.0, 2.0, 3.0])

    def noisy(x):
        return x * 2.0 + cr.random.rand(3) * 0.0

    with pytest.raises(RuntimeError, match="randomness"):
        func.jacfwd(noisy)(x)
    for mode in ("same", "different"):
        assert_values(func.jacfwd(noisy, randomness=mode)(x), 2.0 * np.eye(3))


def test_jacfwd_takes_has_aux_by_position_as_pytorch():
    jac, aux = func.jacfwd(lambda x: (cr.sin(x), cr.cos(x)), 0, True)(T([0.5]))
    assert_values(jac, [[np.cos(0.5)]])
    assert_values(aux, [np.cos(0.5)])


@pytest.mark.parametrize(
    "name", ["grad", "grad_and_value", "vjp", "jvp", "jacrev", "jacfwd", "hessian", "vmap"]
)
def test_transforms_first_parameter_is_named_func_as_torch_func(name):
    assert next(iter(inspect.signature(getattr(func, name)).parameters)) == "func"


def test_transforms_take_func_by_keyword():
    assert_values(func.grad(func=cr.sin)(T(0.0)), 1.0)
    assert_values(func.jacrev(func=cr.sin, chunk_size=1)(T([0.0])), [[1.0]])


# ----------------------------------------------------------------------------- functionalize


def test_functionalize_gives_the_same_results_under_transforms():
    def bumped(x):
        y = x * 1.0
        y.add_(1.0)
        y[0] = y[0] * 3.0
        return cr.sum(y**2)

    x = T([0.5, -1.0, 2.0])
    f = func.functionalize(bumped)
    assert_values(f(x), N(bumped(x)))
    assert_values(func.grad(f)(x), [6 * 3 * 1.5, 2 * 0.0, 2 * 3.0])
    batch = T([[0.5, -1.0, 2.0], [1.0, 1.0, 1.0]])
    assert_values(
        func.vmap(func.functionalize(bumped, remove="mutations_and_views"))(batch),
        [N(bumped(batch[0])), N(bumped(batch[1]))],
    )
    with pytest.raises(RuntimeError, match="received invalid argument for remove=everything"):
        func.functionalize(bumped, remove="everything")
