"""PyTorch's `torch.einsum` as `chainrule.einsum` (operands one by one or as one list), and
`Tensor.transpose` in NumPy's forms beside PyTorch's (two ints swap two dimensions, as
PyTorch's; no argument, a tuple or a whole permutation permute, as NumPy's)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T

RNG = np.random.default_rng(6)
X = RNG.normal(size=(2, 3, 4))
Y = RNG.normal(size=(2, 4, 5))


@pytest.mark.parametrize("as_list", [False, True], ids=["operands", "one list"])
def test_einsum_as_pytorchs_matches_numpy_and_differentiates(as_list):
    def fn(x, y):
        return cr.einsum("bij,bjk->bik", [x, y]) if as_list else cr.einsum("bij,bjk->bik", x, y)

    x, y = T(X, requires_grad=True), T(Y, requires_grad=True)
    np.testing.assert_allclose(N(fn(x, y)), np.einsum("bij,bjk->bik", X, Y), rtol=1e-13)
    assert gradcheck(fn, (x, y))
    assert gradgradcheck(fn, (x, y))


FORMS = {
    "two ints swap (PyTorch)": (lambda t: t.transpose(0, 2), lambda a: np.swapaxes(a, 0, 2)),
    "two NumPy ints swap": (
        lambda t: t.transpose(np.int64(0), np.int64(1)),
        lambda a: np.swapaxes(a, 0, 1),
    ),
    "dim0 and dim1": (lambda t: t.transpose(dim0=1, dim1=2), lambda a: np.swapaxes(a, 1, 2)),
    "no argument reverses (NumPy)": (lambda t: t.transpose(), lambda a: a.transpose()),
    "a tuple (NumPy)": (lambda t: t.transpose((1, 0, 2)), lambda a: a.transpose((1, 0, 2))),
    "a permutation (NumPy)": (lambda t: t.transpose(2, 0, 1), lambda a: a.transpose(2, 0, 1)),
}


@pytest.mark.parametrize("name", FORMS)
def test_transpose_takes_pytorchs_and_numpys_forms(name):
    ours, numpys = FORMS[name]
    x = T(X, requires_grad=True)
    np.testing.assert_array_equal(N(ours(x)), numpys(X))
    assert gradcheck(ours, (x,))


def test_transpose_refuses_one_named_dimension_with_a_permutation():
    with pytest.raises(TypeError, match="two dimensions, dim0 and dim1"):
        T(X).transpose(0, 1, dim1=2)
