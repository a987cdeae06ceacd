"""Values that NumPy computes from a raw NumPy array argument of a compiled function, outside
chainrule (np.sum(a), a * 2, a.copy(), float(a[0, 0]), ...), are not baked (issue 20): the
function runs eagerly, with a CompileWarning that says why, and every call gives eager's
answer. What chainrule itself does with such an argument is replayed."""

import copy
import warnings

import numpy as np
import pytest
import scipy.special

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import CompileWarning
from conftest import BACKEND

pytestmark = pytest.mark.skipif(
    BACKEND is not np, reason="raw NumPy arrays next to tensors of the NumPy backend"
)


def _arrays() -> list:
    """Three arguments of one kind with other values (and other orders) at each call."""
    rng = np.random.default_rng(0)
    return [rng.normal(size=(3, 3)) for _ in range(3)]


def _plain(r) -> list:
    """A result (a tensor, raw array or number, or a tuple of them) as a list of arrays."""
    items = r if isinstance(r, tuple) else (r,)
    return [t.numpy() if t.__class__ is cr.Tensor else np.asarray(t) for t in items]


def _compare(fn, compiled, x, arrays) -> tuple[list, list]:
    got = [_plain(compiled(x, a)) for a in arrays]
    expected = [_plain(fn(x, a)) for a in arrays]
    return got, expected


COMPUTED = {
    "np.sum": lambda x, a: cr.sum(x * np.sum(a)),
    "operator": lambda x, a: cr.sum(x * (a * 2)),
    "reflected-operator": lambda x, a: cr.sum(x * (2.0 - a)),
    "method": lambda x, a: cr.sum(x * a.sum()),
    "reduction-method": lambda x, a: cr.sum(x * a.max(axis=0)),
    "ufunc": lambda x, a: cr.sum(x * np.exp(a)),
    "scipy-ufunc": lambda x, a: cr.sum(x * scipy.special.expit(a)),
    "copy": lambda x, a: cr.sum(x * a.copy()),
    "astype": lambda x, a: cr.sum(x * a.astype(np.float32)),
    "deepcopy": lambda x, a: cr.sum(x * copy.deepcopy(a)),
    "copy-of-a-view": lambda x, a: cr.sum(x * a.T.copy()),
    "element": lambda x, a: cr.sum(x * a[0, 1]),
    "float": lambda x, a: cr.sum(x * float(a[1][2])),
    "item": lambda x, a: cr.sum(x * a.item(4)),
    "tolist": lambda x, a: cr.sum(x * a.tolist()[2][0]),
    "iteration": lambda x, a: cr.sum(x * sum(row[0] for row in a)),
    "argmax": lambda x, a: cr.sum(x[:, int(a[1].argmax())]),
    "argsort-as-index": lambda x, a: cr.sum(x[:, a[0].argsort()] * cr.arange(3.0)),
    "asarray-of-a-list": lambda x, a: cr.sum(x * cr.asarray([a, a])),
    "tensor-of-a-tuple": lambda x, a: cr.sum(x * cr.tensor((a, a.T))),
    "list-operand": lambda x, a: cr.sum(x * [a, a]),
    "returned": lambda x, a: (cr.sum(x), a * 2),
    "returned-view": lambda x, a: (cr.sum(x), a.T),
    "returned-number": lambda x, a: (cr.sum(x), np.sum(a)),
}


@pytest.mark.parametrize("fn", COMPUTED.values(), ids=COMPUTED.keys())
def test_numpy_computing_from_a_raw_array_argument_runs_eagerly_with_the_current_values(fn):
    x = cr.asarray(np.arange(9.0).reshape(3, 3))
    compiled = cr.compile(fn)
    with pytest.warns(CompileWarning, match="raw NumPy array argument"):
        got, expected = _compare(fn, compiled, x, _arrays())
    for g, e in zip(got, expected):
        for gi, ei in zip(g, e, strict=True):
            np.testing.assert_array_equal(gi, ei)
    assert any(not np.array_equal(e0, e1) for e0, e1 in zip(expected[0], expected[1]))


def test_a_numpy_write_into_a_raw_array_argument_is_made_at_every_call():
    def fn(x, a):
        a[0, 0] = 5.0
        return cr.sum(x * cr.asarray(a))

    compiled = cr.compile(fn)
    x = cr.ones((3, 3), dtype=cr.float64)
    arrays = _arrays()
    expected = [float(fn(x, a.copy())) for a in arrays]
    with pytest.warns(CompileWarning, match="raw NumPy array argument"):
        got = [float(compiled(x, a)) for a in arrays]
    assert got == expected
    assert [a[0, 0] for a in arrays] == [5.0] * 3


REPLAYED = {
    "asarray": lambda x, a: cr.sum(x @ cr.asarray(a)),
    "asarray-dtype": lambda x, a: cr.sum(x * cr.asarray(a, dtype=cr.float32)),
    "tensor": lambda x, a: cr.sum(x * cr.tensor(a)),
    "from_dlpack": lambda x, a: cr.sum(x * cr.from_dlpack(a)),
    "tensor-times-array": lambda x, a: cr.sum(x * a),
    "array-times-tensor": lambda x, a: cr.sum(a * x),
    "array-minus-tensor": lambda x, a: cr.sum(a - x),
    "matmul": lambda x, a: cr.sum(x @ a),
    "reflected-matmul": lambda x, a: cr.sum(a @ x.T),
    "numpy-function-of-a-tensor": lambda x, a: np.sum(x * a),
    "numpy-ufunc-with-a-tensor": lambda x, a: cr.sum(np.multiply(a, x)),
    "numpy-function-with-a-tensor": lambda x, a: cr.sum(np.concatenate([a, x])),
    "shape": lambda x, a: cr.sum(x * a.shape[0] * len(a) * a.ndim * np.shape(a)[1]),
    "returned-argument": lambda x, a: (cr.sum(x @ a), a),
    "where": lambda x, a: cr.sum(cr.where(x > 0.5, a, x)),
    "stack": lambda x, a: cr.sum(cr.stack([x, a]) * cr.arange(3.0)),
    "mse_loss": lambda x, a: F.mse_loss(x, a),
    "printed": lambda x, a: (print(a, repr(a), f"{a}"), cr.sum(x * a))[1],
}


@pytest.mark.parametrize("fn", REPLAYED.values(), ids=REPLAYED.keys())
def test_chainrule_using_a_raw_array_argument_is_replayed_with_the_current_values(fn):
    x = cr.ones((3, 3))
    compiled = cr.compile(fn)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        got, expected = _compare(fn, compiled, x, _arrays())
    for g, e in zip(got, expected):
        for gi, ei in zip(g, e, strict=True):
            np.testing.assert_array_equal(gi, ei)
    assert compiled.traces == 1


def test_a_returned_raw_array_argument_is_the_argument_itself():
    compiled = cr.compile(lambda x, a: (x * 2, a))
    for a in _arrays():
        out = compiled(cr.ones(3), a)
        assert out[1] is a


def test_an_index_array_argument_is_read_at_every_call():
    fn = lambda x, i: cr.sum(x[i] * cr.arange(3.0))  # noqa: E731
    compiled = cr.compile(fn)
    x = cr.asarray(np.arange(5.0))
    indices = [np.array([0, 1, 2]), np.array([4, 3, 2]), np.array([1, 1, 0])]
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        got = [float(compiled(x, i)) for i in indices]
    assert got == [float(fn(x, i)) for i in indices]
    assert compiled.traces == 1


def test_the_traced_function_sees_an_ndarray():
    seen = []

    @cr.compile
    def fn(x, a):
        seen.append(isinstance(a, np.ndarray))
        return cr.sum(x * a)

    fn(cr.ones(3), np.ones(3))
    assert seen == [True]


def test_an_argument_kept_by_the_function_is_an_ordinary_array_after_the_trace():
    kept = []

    @cr.compile
    def fn(x, a):
        kept.append(a)
        return cr.sum(x * a)

    a = np.arange(3.0)
    fn(cr.ones(3), a)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        assert float(np.sum(kept[0] * 2)) == 6.0
        assert kept[0].tolist() == [0.0, 1.0, 2.0]
    assert np.shares_memory(kept[0], a)


def test_the_same_raw_array_for_two_arguments_is_replayed():
    fn = lambda x, a, b: cr.sum(x * a - b)  # noqa: E731
    compiled = cr.compile(fn)
    x = cr.ones((3, 3), dtype=cr.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        for a in _arrays():
            assert float(compiled(x, a, a)) == float(fn(x, a, a))
    assert compiled.traces == 1


def test_a_compiled_function_given_the_argument_of_an_abandoned_trace_reads_it_at_every_call():
    inner = cr.compile(lambda x, a: cr.sum(x * cr.asarray(a)))
    inner_of_view = cr.compile(lambda x, a: cr.sum(x * cr.asarray(a)))

    def outer(x, a, c):
        np.sum(a)  # NumPy on the argument: outer runs eagerly, its trace abandoned
        return (inner(x, a) + inner_of_view(x, a.T)) * c

    compiled = cr.compile(outer)
    x = cr.ones(3, dtype=cr.float64)
    with pytest.warns(CompileWarning, match="raw NumPy array argument"):
        for c in (1.0, 2.0, 3.0):  # c is a new kind for outer each time, traced again
            a = np.full(3, c)
            assert float(compiled(x, a, c)) == float(outer(x, a, c))


def test_an_in_place_numpy_operator_on_a_raw_array_argument_is_made_at_every_call():
    def fn(x, a):
        a += 1.0  # NumPy writes the argument: each call does
        return cr.sum(x * cr.asarray(a)), a

    compiled = cr.compile(fn)
    x = cr.ones(3, dtype=cr.float64)
    arrays = [np.full(3, v) for v in (1.0, 2.0, 3.0)]
    with pytest.warns(CompileWarning, match="numpy.add on a raw NumPy array argument"):
        results = [compiled(x, a) for a in arrays]
    assert [float(r[0]) for r in results] == [6.0, 9.0, 12.0]
    assert all(r[1] is a for r, a in zip(results, arrays))


def test_arrays_that_numpy_made_of_a_raw_argument_are_returned_as_plain_ndarrays():
    compiled = cr.compile(lambda x, a: (x * 2, a * 2, a.T))
    a = np.arange(4.0).reshape(2, 2)
    with pytest.warns(CompileWarning, match="raw NumPy array argument"):
        for _ in range(2):
            _, doubled, transposed = compiled(cr.ones(2), a)
            assert type(doubled) is np.ndarray and type(transposed) is np.ndarray
            assert np.shares_memory(transposed, a)
            np.testing.assert_array_equal(transposed, a.T)
