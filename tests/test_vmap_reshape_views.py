"""Inside vmap, a reshape is a view of its input exactly where it is one outside vmap on each
sample: where the samples' library copies (NumPy's reshape of a transposed or strided view),
a write into the result leaves its input alone, as the same program run sample by sample
(vmap keeps views by bookkeeping, where any reshape could be one)."""

import numpy as np
import pytest

import chainrule as cr
from chainrule import func
from conftest import N, T

A = np.arange(12.0).reshape(2, 2, 3) / 7.0 - 0.5


def _transposed(y):
    return cr.reshape(cr.permute_dims(y, (1, 0)), (-1,))


def _strided(y):
    return cr.reshape(y[:, ::2], (-1,))


def _contiguous(y):
    return cr.reshape(y, (-1,))


def _rows(y):
    return cr.reshape(y[1:], (-1,))


def _program(view):
    def g(x):
        y = x * 1.0
        z = view(y)
        z *= cr.sin(z * 1.0)
        return y * 1.0, z * 1.0

    return g


def _per_sample(g, xs):
    outs = [g(xs[i]) for i in range(xs.shape[0])]
    return [cr.stack([o[k] for o in outs]) for k in range(len(outs[0]))]


@pytest.mark.parametrize(
    "view", [_transposed, _strided, _contiguous, _rows], ids=lambda f: f.__name__
)
def test_a_write_into_a_reshape_reaches_its_input_under_vmap_as_sample_by_sample(view):
    g = _program(view)
    got = func.vmap(g)(T(A))
    expected = _per_sample(g, T(A))
    for a, b in zip(got, expected):
        np.testing.assert_allclose(N(a), N(b), rtol=1e-14)


@pytest.mark.parametrize("view", [_transposed, _contiguous], ids=lambda f: f.__name__)
def test_gradients_through_a_written_reshape_under_vmap_as_sample_by_sample(view):
    g = _program(view)

    def loss(x):
        y, z = g(x)
        return cr.sum(cr.sin(y)) + cr.sum(z * z)

    got = func.vmap(func.grad(loss))(T(A))
    expected = cr.stack([func.grad(loss)(T(a)) for a in A])
    np.testing.assert_allclose(N(got), N(expected), rtol=1e-12)
