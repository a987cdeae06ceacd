"""PyTorch's top-level forms of tensor methods that the Array API lacks (`torch.cat(xs, 1)`,
`torch.flatten(x, 1)`, `torch.sigmoid(x)`, ...): a port calls them so (they raised
AttributeError); each equals its method, and `cat` the standard's `concat`; gradients
through cat and the others."""

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import N, T
from helpers import assert_values

RNG = np.random.default_rng(8)
X = RNG.normal(size=(2, 3, 4))

FUNCTIONS = {
    "cat": (lambda t: cr.cat([t, 2 * t], 1), lambda a: np.concatenate([a, 2 * a], 1)),
    "cat default dim": (lambda t: cr.cat((t, t)), lambda a: np.concatenate([a, a])),
    "flatten": (lambda t: cr.flatten(t, 1), lambda a: a.reshape(2, 12)),
    "flatten all": (lambda t: cr.flatten(t), lambda a: a.reshape(-1)),
    "unsqueeze": (lambda t: cr.unsqueeze(t, -1), lambda a: a[..., None]),
    "transpose": (lambda t: cr.transpose(t, 0, 2), lambda a: np.swapaxes(a, 0, 2)),
    "transpose axes": (lambda t: cr.transpose(t, (1, 2, 0)), lambda a: a.transpose(1, 2, 0)),
    "chunk": (lambda t: cr.chunk(t, 2, 2)[1], lambda a: a[:, :, 2:]),
    "split": (lambda t: cr.split(t, [1, 2], 1)[1], lambda a: a[:, 1:]),
    "sigmoid": (lambda t: cr.sigmoid(t), lambda a: 1 / (1 + np.exp(-a))),
    "relu": (lambda t: cr.relu(t), lambda a: np.maximum(a, 0)),
    "clamp": (lambda t: cr.clamp(t, -0.5, 0.5), lambda a: np.clip(a, -0.5, 0.5)),
    "clamp min": (lambda t: cr.clamp(t, min=0.1), lambda a: np.maximum(a, 0.1)),
    "mm": (lambda t: cr.mm(t[0], t[1].T), lambda a: a[0] @ a[1].T),
    "bmm": (lambda t: cr.bmm(t, cr.transpose(t, 1, 2)), lambda a: a @ a.transpose(0, 2, 1)),
}


@pytest.mark.parametrize("name", FUNCTIONS)
def test_pytorchs_top_level_functions_match_numpy_and_differentiate(name):
    ours, numpys = FUNCTIONS[name]
    x = T(X, requires_grad=True)
    np.testing.assert_allclose(N(ours(x)), numpys(X), rtol=1e-13, atol=1e-15)
    assert gradcheck(ours, (x,))
    assert gradgradcheck(ours, (x,))


def test_the_standards_functions_keep_their_signatures():
    # sum, stack and squeeze are the standard's: axis keyword-only, PyTorch's dim refused.
    x = T(X)
    with pytest.raises(TypeError):
        cr.sum(x, dim=1)
    with pytest.raises(TypeError):
        cr.stack([x, x], dim=1)


def test_pytorchs_other_dtype_names_are_the_same_dtypes():
    # A port's `torch.zeros(n, m, dtype=torch.double)` (time_sequence_prediction) raised
    # AttributeError.
    aliases = {"double": "float64", "float": "float32", "half": "float16", "long": "int64"}
    aliases |= {"int": "int32", "short": "int16", "cfloat": "complex64", "cdouble": "complex128"}
    for name, dtype in aliases.items():
        assert getattr(cr, name) is getattr(cr, dtype), name
    assert cr.zeros(2, 3, dtype=cr.double).dtype == cr.float64
    assert cr.ones(2, dtype=cr.long).dtype == cr.int64


def test_diag_builds_a_matrix_from_a_vector_and_takes_a_diagonal_of_a_matrix():
    # gcn's and gat's load_cora scale by `torch.diag(vector)`: it raised AttributeError.
    v = RNG.normal(size=3)
    for k in (0, 1, -2):
        assert_values(cr.diag(T(v), k), np.diag(v, k))
    m = RNG.normal(size=(3, 4))
    for k in (0, 1, -2):
        assert_values(cr.diag(T(m), k), np.diag(m, k))
    # An infinite entry stays on its diagonal (no inf * 0 = nan off it).
    assert_values(cr.diag(T(np.array([1.0, np.inf])), -1), np.diag([1.0, np.inf], -1))
    for k in (0, 2, -1):
        assert gradcheck(lambda t, k=k: cr.diag(t, k) ** 2, (T(v, requires_grad=True),))
        assert gradgradcheck(lambda t, k=k: cr.diag(t, k) ** 2, (T(v, requires_grad=True),))
    assert gradgradcheck(lambda t: cr.diag(t, 1) ** 2, (T(m, requires_grad=True),))
    with pytest.raises(RuntimeError, match=r"diag\(\): Supports 1D or 2D tensors. Got 3D"):
        cr.diag(T(X))


def test_topk_gives_the_k_largest_or_smallest_with_their_indices():
    # minGPT's generate takes `torch.topk(probs, k=1, dim=-1)`: it raised AttributeError.
    a = np.array([[1.0, 3.0, 3.0, 2.0], [0.5, -1.0, 4.0, 0.0]])
    values, indices = cr.topk(T(a), 2)
    assert N(indices).tolist() == [[1, 2], [2, 0]]  # equal values in index order, as PyTorch
    assert_values(values, [[3.0, 3.0], [4.0, 0.5]])
    low = T(a).topk(3, dim=1, largest=False)
    assert N(low.indices).tolist() == [[0, 3, 1], [1, 3, 0]]
    assert N(cr.topk(T(a), 1, dim=0).indices).tolist() == [[0, 0, 1, 0]]
    x = T(RNG.normal(size=(3, 5)), requires_grad=True)
    assert gradcheck(lambda t: cr.topk(t, 2, dim=1).values ** 2, (x,))
    assert gradgradcheck(lambda t: cr.topk(t, 2, dim=1).values ** 2, (x,))
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        cr.topk(T(a), 5)


def test_diag_stays_in_its_inputs_library():
    # A NumPy tensor's diag where the default library is another (PyTorch, JAX) was made
    # with zeros and eye of the default library and raised TypeError (libraries mixed).
    v = cr.from_numpy(np.array([1.0, 2.0]))
    out = cr.diag(v, 1) @ cr.from_numpy(np.ones((3, 1)))
    assert_values(out, [[1.0], [2.0], [0.0]])
