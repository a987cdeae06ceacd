"""einops on chainrule tensors: its main API (rearrange, reduce, repeat, einsum, pack and
unpack, parse_shape), which finds chainrule's backend, and `einops.array_api`, which calls the
tensors' namespace; values against NumPy, gradients (first and second order) against finite
differences."""

import einops
import einops.array_api as ea
import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T

A = np.random.default_rng(2).uniform(0.2, 0.9, size=(2, 3, 4))

CASES = {
    "rearrange merge": lambda t: einops.rearrange(t, "a b c -> (a c) b"),
    "rearrange split": lambda t: einops.rearrange(t, "a b (c d) -> a d b c", d=2),
    "rearrange ellipsis": lambda t: einops.rearrange(t, "a ... -> ... a"),
    "reduce sum": lambda t: einops.reduce(t, "a b c -> b", "sum"),
    "reduce mean": lambda t: einops.reduce(t, "a b c -> a c", "mean"),
    "reduce max": lambda t: einops.reduce(t, "a b c -> a 1 c", "max"),
    "reduce min": lambda t: einops.reduce(t, "a b c -> c", "min"),
    "reduce prod": lambda t: einops.reduce(t, "a b c -> a b", "prod"),
    "reduce pooling": lambda t: einops.reduce(t, "a b (c h) -> a b c", "mean", h=2),
    "repeat new axis": lambda t: einops.repeat(t, "a b c -> a b c d", d=2),
    "repeat tile": lambda t: einops.repeat(t, "a b c -> (r a) b c", r=2),
    "einsum": lambda t: einops.einsum(t, t, "a b c, a d c -> b d"),
    "array_api rearrange": lambda t: ea.rearrange(t, "a b c -> c (a b)"),
    "array_api reduce": lambda t: ea.reduce(t, "a b c -> a", "max"),
    "array_api repeat": lambda t: ea.repeat(t, "a b c -> a b c r", r=3),
    # A callable reduction: NumPy's var of the tensor dispatches to chainrule's.
    "reduce callable": lambda t: einops.reduce(t, "a b c -> a b", lambda u, axis: np.var(u, axis)),
    "array_api pack": lambda t: ea.pack([t, t[:, :, :1] * 2.0], "a b *")[0],
    "array_api unpack": lambda t: ea.unpack(t, [[1], [3]], "a b *")[1],
}


@pytest.mark.parametrize("name", CASES)
def test_einops_on_tensors_matches_numpy_and_differentiates(name):
    fn = CASES[name]
    x = T(A, requires_grad=True)
    out = fn(x)
    assert out.__class__ is cr.Tensor and out.requires_grad
    np.testing.assert_allclose(N(out), fn(A), rtol=1e-13)
    assert gradcheck(fn, (x,))
    assert gradgradcheck(fn, (x,))


def test_einops_pack_and_unpack_round_trip_with_gradients():
    def fn(x, y):
        packed, shapes = einops.pack([x, y], "a *")
        u, v = einops.unpack(packed * 2.0, shapes, "a *")
        return cr.sum(u) + cr.sum(v * v)

    x, y = T(A, requires_grad=True), T(A[:, 0], requires_grad=True)
    assert gradcheck(fn, (x, y))
    assert gradgradcheck(fn, (x, y))


def test_einops_parse_shape_and_list_input():
    assert einops.parse_shape(T(A), "a b c") == {"a": 2, "b": 3, "c": 4}
    xs = [T(A[i], requires_grad=True) for i in range(2)]
    out = einops.rearrange(xs, "n b c -> b (n c)")
    np.testing.assert_allclose(N(out), einops.rearrange(list(A), "n b c -> b (n c)"))
    cr.sum(out * out).backward()
    np.testing.assert_allclose(N(xs[1].grad), 2 * A[1])


def test_einops_reduce_of_integer_tensors():
    x = T(np.arange(24).reshape(2, 3, 4))
    np.testing.assert_array_equal(
        N(einops.reduce(x, "a b c -> c", "sum")), np.arange(24).reshape(2, 3, 4).sum((0, 1))
    )
