"""chainrule.func.vmap with torch.func's semantics (in_dims and out_dims over pytrees, None for
unbatched values, errors in PyTorch's words, randomness, chunk_size, nesting), composed with
grad, jvp, jacrev, jacfwd and hessian; autograd.grad(is_grads_batched=True) and
functional.jacobian(vectorize=True). Over the whole rule table: vmap(f)(x) equals f on each
sample stacked, each primitive running once on the whole batch, and gradients through vmap
match finite differences, first and second order."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import _batching, func
from chainrule.autograd import functional, gradcheck, gradgradcheck
from chainrule.func import grad, vmap
from conftest import BACKEND, N, T, examples, failing_on_dask, fails_on, skip_on
from helpers import assert_values, leaf
from test_forward_rules import DIFFERENTIABLE, SAMPLES, _outputs

# The batch and unbatch rules (vmap's boundary) are gradchecked here.
GRADCHECKED = {"batch", "unbatch"}

RNG = np.random.default_rng(0)


def rand(*shape):
    return T(RNG.standard_normal(shape))


# ----------------------------------------------------------------------------- in_dims, out_dims


def test_vmap_maps_over_the_first_axis_by_default():
    x = rand(4, 3)
    assert_values(vmap(cr.sin)(x), np.sin(N(x)))
    assert_values(vmap(lambda r: cr.sum(r * r))(x), np.sum(N(x) ** 2, axis=1))


def test_in_dims_per_argument_and_none_for_an_unbatched_one():
    x, y = rand(3, 5), rand(3)
    out = vmap(lambda a, b: a * b, in_dims=(1, None))(x, y)
    assert out.shape == (5, 3)
    assert_values(out, N(x).T * N(y))


def test_in_dims_as_a_tree_matching_the_arguments():
    xs = {"a": rand(2, 4), "b": rand(4)}
    out = vmap(lambda d: d["a"] + d["b"], in_dims=({"a": 1, "b": 0},))(xs)
    assert_values(out, N(xs["a"]).T + N(xs["b"])[:, None])


def test_negative_in_dims_and_out_dims():
    x = rand(2, 3, 4)
    out = vmap(lambda a: a * 2, in_dims=-1, out_dims=-1)(x)
    assert_values(out, N(x) * 2)


def test_out_dims_per_output_and_trees_of_outputs():
    x = rand(3, 2)
    out = vmap(lambda a: (a, {"s": cr.sum(a)}), out_dims=(1, 0))(x)
    assert_values(out[0], N(x).T)
    assert_values(out[1]["s"], N(x).sum(axis=1))


def test_an_output_that_is_the_same_for_every_sample_is_expanded():
    out = vmap(lambda a: cr.ones(3), in_dims=0, out_dims=1)(rand(2))
    assert out.shape == (3, 2)
    assert_values(out, np.ones((3, 2)))


def test_out_dims_none_returns_an_unbatched_output():
    c = rand(3)
    out, same = vmap(lambda a: (a + 1, c * 2), out_dims=(0, None))(rand(4, 3))
    assert out.shape == (4, 3)
    assert_values(same, N(c) * 2)


def test_keyword_arguments_are_not_mapped():
    out = vmap(lambda a, scale: a * scale)(rand(3, 2), scale=T(np.array([1.0, 10.0])))
    assert out.shape == (3, 2)


def test_python_scalars_and_none_pass_through_with_in_dim_none():
    out = vmap(lambda a, k, nothing: a * k, in_dims=(0, None, None))(rand(3), 2.0, None)
    assert out.shape == (3,)


# ----------------------------------------------------------------------------- errors


def test_mismatched_batch_sizes_raise_value_error():
    with pytest.raises(ValueError, match=r"same size in the mapped dimension, got sizes \[2, 3\]"):
        vmap(lambda a, b: a + b)(rand(2), rand(3))


def test_in_dim_out_of_range_raises():
    with pytest.raises(ValueError, match="expected in_dim to satisfy -1 <= in_dim < 1"):
        vmap(lambda a: a, in_dims=1)(rand(2))


def test_in_dims_of_the_wrong_type_or_structure_raise():
    with pytest.raises(ValueError, match="expected `in_dims` to be int or a"):
        vmap(lambda a: a, in_dims=None)(rand(2))
    with pytest.raises(ValueError, match="in_dims is not compatible with the structure"):
        vmap(lambda a: a, in_dims=(0, 0))(rand(2))


def test_mapping_a_non_tensor_raises():
    with pytest.raises(ValueError, match="We cannot vmap over non-Tensor arguments"):
        vmap(lambda a, b: a, in_dims=0)(rand(2), 3)


def test_no_inputs_raises():
    with pytest.raises(ValueError, match="got no inputs"):
        vmap(lambda: T(1.0))()


def test_returning_a_non_tensor_or_a_batched_output_with_out_dim_none_raises():
    with pytest.raises(ValueError, match="must only return Tensors, got type <class 'int'>"):
        vmap(lambda a: 3)(rand(2))
    with pytest.raises(ValueError, match="can not return a BatchedTensor when out_dim is None"):
        vmap(lambda a: a, out_dims=None)(rand(2))


def test_writing_a_batched_value_into_an_unbatched_tensor_raises():
    def write(a):
        out = cr.zeros(3)
        out[0] = a[0]
        return out

    with pytest.raises(RuntimeError, match="in-place setitem is not possible"):
        vmap(write)(rand(2, 3))

    def write_into_batched(a):
        out = a * 1.0
        out[0] = 5.0
        return out

    assert_values(vmap(write_into_batched)(T(np.ones((2, 3)))), [[5.0, 1.0, 1.0]] * 2)


def test_jacfwd_of_in_place_writes_into_a_constant_matches_torch_func():
    # The constant takes the written value and its tangents (one per basis vector).
    a = np.array([0.3, -1.2, 0.7])
    c = np.array([0.5, -1.0, 2.0])

    def scaled(x):
        t = T(c) * 1.0
        t *= cr.sin(x)
        return t

    def written(x):
        t = cr.zeros(3)
        t[1] = x[0] ** 2
        t[0:2] += x[1:]
        return t

    assert_values(func.jacfwd(scaled)(T(a)), np.diag(c * np.cos(a)), atol=1e-15)
    assert_values(func.jacrev(scaled)(T(a)), np.diag(c * np.cos(a)), atol=1e-15)
    # torch.func.jacfwd and torch.func.hessian of the same programs:
    by_torch = [[0.0, 1.0, 0.0], [0.6, 0.0, 1.0], [0.0, 0.0, 0.0]]
    assert_values(func.jacfwd(written)(T(a)), by_torch, atol=1e-15)
    hess = func.hessian(lambda x: cr.sum(written(x)))(T(a))
    assert_values(hess, [[2.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], atol=1e-15)
    assert_values(func.jvp(scaled, (T(a),), (T(np.ones(3)),))[1], c * np.cos(a), atol=1e-15)


FANCY_SETITEM = skip_on(
    "array_api_strict", reason="array_api_strict has no item assignment by arrays"
)
WRITES = [
    pytest.param(lambda t, v: t.__iadd__(v), id="add"),
    pytest.param(lambda t, v: t.__imul__(v), id="mul"),
    pytest.param(lambda t, v: t.__setitem__(1, v[0]), id="setitem int"),
    pytest.param(lambda t, v: t.__setitem__(slice(0, 2), v[1:]), id="setitem slice"),
    pytest.param(
        lambda t, v: t.__setitem__(T(np.array([0, 2])), v[1:]),
        id="setitem array",
        marks=FANCY_SETITEM,
    ),
    pytest.param(
        lambda t, v: t.__setitem__(T(np.array([True, False, True])), v[1:]),
        id="setitem mask",
        marks=fails_on("dask", reason="Dask's boolean masks give sizes unknown until computed"),
    ),
]


@pytest.mark.parametrize("write", WRITES)
def test_writing_per_sample_values_into_a_constant_raises_the_runtime_error_in_every_transform(
    write,
):
    # PyTorch refuses these too; the error was once NumPy's TypeError on a Batched operand
    # where the write was recorded (grad inside vmap, forward over reverse).
    def f(x):
        t = cr.zeros(3)
        write(t, x * x)
        return cr.sum(t * x)

    x = T([0.3, -1.2, 0.7])
    xs = T(np.stack([N(x), 2 * N(x)]))
    for transformed in (vmap(f), vmap(grad(f)), vmap(func.jacfwd(f)), vmap(func.jacrev(f))):
        with pytest.raises(RuntimeError, match="is not possible"):
            transformed(xs)
    # Without vmap over the values written, each transform runs (a shared value is lifted).
    expected = func.jacrev(func.jacrev(f))(x)
    for second in (func.hessian(f), func.jacrev(func.jacfwd(f)), func.jacfwd(func.jacfwd(f))):
        assert_values(second(x), N(expected), atol=1e-14)


@FANCY_SETITEM
@fails_on("dask", reason="Dask's item assignment takes no n-d integer-array keys")
def test_item_assignment_with_per_sample_or_separated_array_indices_runs_per_sample():
    a = RNG.standard_normal((2, 2, 3, 4))
    rows = np.array([[0, 2], [1, 1]])

    def by_rows(x, i):
        t = x * 1.0
        t[0, i] = -x[1, 0] * 10.0
        return t

    def separated(x):
        t = x * 1.0
        t[0, :, [1, 3]] = x[1, :, [0, 2]] * 2.0
        return t

    def expected_rows(b, i):
        t = b.copy()
        t[0, i] = -b[1, 0] * 10.0
        return t

    def expected_separated(b):
        t = b.copy()
        t[0, :, [1, 3]] = b[1, :, [0, 2]] * 2.0
        return t

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the loop's warning
        got = vmap(by_rows)(T(a), T(rows))
        assert_values(got, np.stack([expected_rows(a[k], rows[k]) for k in range(2)]))
        got = vmap(separated)(T(a))
        assert_values(got, np.stack([expected_separated(b) for b in a]))
        loss = grad(lambda x: cr.sum(separated(x) ** 2))
        assert_values(vmap(loss)(T(a)), np.stack([N(loss(T(b))) for b in a]), rtol=1e-12)


def test_a_batched_array_converted_to_numpy_raises_the_runtime_error_whatever_the_arguments():
    b = _batching.Batched(np.ones((2, 3)), 1, 2)
    for convert in (np.asarray, lambda v: np.asarray(v, copy=True), lambda v: np.array(v, float)):
        with pytest.raises(RuntimeError, match="data-dependent control flow"):
            convert(b)


def test_data_dependent_control_flow_inside_vmap_raises():
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        vmap(lambda a: a if a.sum() > 0 else -a)(rand(3, 2))
    with pytest.raises(RuntimeError, match="data-dependent control flow"):
        vmap(lambda a: T(float(a)))(rand(3))


def test_a_result_whose_shape_depends_on_the_values_raises():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the loop's warning
        with pytest.raises(RuntimeError, match="nonzero gives results of different shapes"):
            vmap(lambda a: cr.nonzero(a > 0)[0])(T(np.array([[1.0, -1.0], [1.0, 1.0]])))


@fails_on("dask", reason="Dask's unique values have a size unknown until computed")
def test_a_function_without_a_batching_rule_loops_and_warns_once():
    _batching._WARNED.discard("unique_values")  # warned once per process: forget earlier ones
    x = T(np.array([[3.0, 1.0, 3.0], [2.0, 2.0, 5.0]]))
    with pytest.warns(UserWarning, match="no batching rule for unique_values"):
        out = vmap(cr.unique_values)(x)
    assert_values(out, [[1.0, 3.0], [2.0, 5.0]])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        vmap(cr.unique_values)(x)
    assert not [w for w in caught if "no batching rule" in str(w.message)]  # warned once only


def test_bad_randomness_or_chunk_size_raise():
    with pytest.raises(RuntimeError, match="Only allowed values for randomness"):
        vmap(cr.sin, randomness="x")
    with pytest.raises(ValueError, match="chunk_size should be None or greater than 0"):
        vmap(cr.sin, chunk_size=0)


# ----------------------------------------------------------------------------- randomness, chunks


def test_random_numbers_inside_vmap_follow_randomness():
    x = rand(3, 2)
    with pytest.raises(RuntimeError, match="randomness error mode"):
        vmap(lambda a: a + cr.random.rand(2))(x)
    same = vmap(lambda a: a * 0 + cr.random.rand(2), randomness="same")(x)
    assert_values(same[0], N(same[1]))
    different = vmap(lambda a: a * 0 + cr.random.randn(2), randomness="different")(x)
    assert not np.allclose(N(different[0]), N(different[1]))


def test_dropout_draws_a_mask_per_sample_with_randomness_different():
    x = T(np.ones((64, 8)))
    out = vmap(lambda a: F.dropout(a, 0.5), randomness="different")(x)
    rows = {tuple(r) for r in N(out)}
    assert len(rows) > 1
    assert set(np.unique(N(out))) <= {0.0, 2.0}


def test_chunk_size_gives_the_same_result():
    x, w = rand(7, 3), rand(3, 2)
    fn = lambda a: cr.tanh(a @ w)  # noqa: E731
    assert_values(vmap(fn, chunk_size=3)(x), N(vmap(fn)(x)))


# ----------------------------------------------------------------------------- nesting, composition


def test_nested_vmap_gives_an_outer_product_of_batches():
    x, y = rand(3), rand(4)
    out = vmap(lambda a: vmap(lambda b: a * b)(y))(x)
    assert_values(out, np.outer(N(x), N(y)))


def test_vmap_of_grad_gives_per_sample_gradients():
    w = rand(3, 2)
    x = rand(5, 3)

    def loss(w, x):
        return cr.sum(cr.sin(x @ w))

    per_sample = vmap(grad(loss), in_dims=(None, 0))(w, x)
    assert per_sample.shape == (5, 3, 2)
    for i in range(5):
        assert_values(per_sample[i], N(grad(loss)(w, x[i])))


def test_vmap_of_grad_of_an_nn_module_with_functional_call():
    model = cr.nn.Sequential(cr.nn.Linear(4, 3), cr.nn.Tanh(), cr.nn.Linear(3, 1))
    params = dict(model.named_parameters())
    x = rand(6, 4)

    def loss(p, sample):
        return cr.sum(func.functional_call(model, p, (sample,)) ** 2)

    grads = vmap(grad(loss), in_dims=(None, 0))(params, x)
    for name, p in params.items():
        assert grads[name].shape == (6, *p.shape)
    expect = grad(loss)(params, x[2])
    for name in params:
        assert_values(grads[name][2], N(expect[name]))


def test_per_sample_cross_entropy_with_integer_labels():
    logits, labels = rand(4, 3), T(np.array([0, 2, 1, 1]))
    per_sample = vmap(F.cross_entropy)(logits, labels)
    assert_values(per_sample, N(F.cross_entropy(logits, labels, reduction="none")))
    with pytest.raises(IndexError, match="Target 3 is out of bounds"):
        vmap(F.cross_entropy)(logits, T(np.array([0, 3, 1, 1])))


def test_grad_of_vmap_and_gradients_through_vmap_reach_captured_tensors():
    w = leaf(RNG.standard_normal((3, 2)))
    x = leaf(RNG.standard_normal((4, 3)))
    out = vmap(lambda r: cr.exp(r @ w))(x)
    cr.sum(out).backward()
    expect_w, expect_x = cr.autograd.grad(cr.sum(cr.exp(x @ w)), (w, x))
    assert_values(w.grad, N(expect_w))
    assert_values(x.grad, N(expect_x))


def test_jacobians_and_hessians_by_vmap_match_closed_forms():
    a = np.array([0.5, -0.25, 1.5])
    x = T(a)

    def f(x):
        return cr.sum(cr.exp(x) * x)

    hess = np.diag(np.exp(a) * (a + 2))
    for h in (func.hessian(f), func.jacrev(func.jacrev(f)), func.jacfwd(func.jacfwd(f))):
        assert_values(h(x), hess, rtol=1e-10)
    per_sample = vmap(func.hessian(f))(T(np.stack([a, 2 * a])))
    assert_values(per_sample[1], np.diag(np.exp(2 * a) * (2 * a + 2)), rtol=1e-10)
    assert_values(
        vmap(func.jacrev(cr.sin))(T(np.stack([a, a]))), np.stack([np.diag(np.cos(a))] * 2)
    )


def test_vmap_of_jvp_and_jvp_of_vmap():
    x = rand(3, 2)
    t = rand(3, 2)
    per_row = vmap(lambda a, v: func.jvp(cr.sin, (a,), (v,))[1])(x, t)
    assert_values(per_row, np.cos(N(x)) * N(t))
    _, whole = func.jvp(vmap(cr.sin), (x,), (t,))
    assert_values(whole, np.cos(N(x)) * N(t))


def test_grads_batched_gives_one_gradient_per_weighting():
    x = leaf([0.5, 1.0, 2.0])
    y = cr.sin(x) * x
    (g,) = cr.autograd.grad(y, x, cr.eye(3, dtype=cr.float64), is_grads_batched=True)
    a = np.array([0.5, 1.0, 2.0])
    assert_values(g, np.diag(np.cos(a) * a + np.sin(a)))
    with pytest.raises(RuntimeError, match="same leading batch dimension"):
        cr.autograd.grad(cr.stack([y, y]), x, T(1.0), is_grads_batched=True)


def test_vectorized_jacobian_equals_the_row_by_row_one():
    x, y = rand(3), rand(3, 2)

    def f(x, y):
        return cr.sin(x)[:, None] * y, cr.sum(x * x)

    rows = functional.jacobian(f, (x, y))
    vectorized = functional.jacobian(f, (x, y), vectorize=True)
    for r1, r2 in zip(rows, vectorized):
        for a, b in zip(r1, r2):
            assert_values(b, N(a))


# ----------------------------------------------------------------------------- the rule table
# Every differentiable rule, through the samples of test_forward_rules: vmap over a batch of
# three scaled copies of each input (scaling keeps the samples' constraints: invertible,
# positive definite, distinct values), each input batched along its first or last axis or not
# at all.

SCALES = (1.0, 1.05, 0.95)
# Rules whose batched forward still runs a loop over the samples (a warning names them): on
# NumPy none; array_api_strict's indexing takes no integer arrays beside a slice, nor masks
# beside other indices, so there indexing with arrays and its adjoint loop.
LOOPED = set() if BACKEND is np else {"getitem", "index_add", "setitem", "take_along_add"}


def _batched_call(data, name):
    fn, values = data.draw(SAMPLES[name])
    dims = data.draw(
        st.lists(st.sampled_from([0, -1, None]), min_size=len(values), max_size=len(values)).filter(
            lambda ds: any(d is not None for d in ds)
        )
    )
    if name == "setitem":  # writing a batched value into an unbatched tensor is refused
        dims = (0, *dims[1:])
    samples = [[a * s for a in values] for s in SCALES]
    inputs = []
    for k, (a, d) in enumerate(zip(values, dims)):
        if d is None:
            samples = [[*row[:k], a, *row[k + 1 :]] for row in samples]
            inputs.append(a)
        else:
            inputs.append(np.stack([row[k] for row in samples], axis=d))
    return fn, tuple(dims), inputs, samples


# Dask's linalg takes 2-D arrays only: a batch of matrices is beyond it.
DASK_BATCHED = "Dask's linalg takes 2-D arrays only (vmap batches the matrices)"
DASK_LINALG_RULES = {
    "linalg_cholesky", "linalg_det", "linalg_eig", "linalg_eigh", "linalg_inv", "linalg_pinv",
    "linalg_qr", "linalg_slogdet", "linalg_solve", "linalg_svd",
}  # fmt: skip


@pytest.mark.parametrize("name", failing_on_dask(DIFFERENTIABLE, DASK_LINALG_RULES, DASK_BATCHED))
@examples(4)
@given(data=st.data())
def test_vmap_equals_each_sample_stacked_in_one_pass(name, data):
    fn, dims, inputs, samples = _batched_call(data, name)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        got = _outputs(vmap(fn, in_dims=dims)(*(T(a) for a in inputs)))
    looped = [w for w in caught if "no batching rule" in str(w.message)]
    assert not looped or name in LOOPED, [str(w.message) for w in looped]
    expected = [_outputs(fn(*(T(a) for a in row))) for row in samples]
    for k, g in enumerate(got):
        assert_values(g, np.stack([N(e[k]) for e in expected]), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", failing_on_dask(DIFFERENTIABLE, DASK_LINALG_RULES, DASK_BATCHED))
@examples(2)
@given(data=st.data())
def test_gradients_through_vmap_match_finite_differences(name, data):
    fn, dims, inputs, _ = _batched_call(data, name)
    batched = vmap(fn, in_dims=dims)
    assert gradcheck(batched, [leaf(a) for a in inputs])


@pytest.mark.parametrize(
    "name",
    failing_on_dask(
        ["multiply", "matmul", "logsumexp", "linalg_solve", "getitem"],
        DASK_LINALG_RULES,
        DASK_BATCHED,
    ),
)
@examples(2)
@given(data=st.data())
def test_second_order_through_vmap(name, data):
    fn, dims, inputs, _ = _batched_call(data, name)
    assert gradgradcheck(vmap(fn, in_dims=dims), [leaf(a) for a in inputs])


@examples(5)
@given(data=st.data())
def test_vmap_of_grad_matches_a_loop_over_the_rule_table_samples(data):
    name = data.draw(st.sampled_from(["sin", "multiply", "matmul", "logsumexp", "softmax"]))
    fn, values = data.draw(SAMPLES[name])
    loss = lambda *xs: cr.sum(cr.stack([cr.sum(o) for o in _outputs(fn(*xs))]))  # noqa: E731
    batch = [np.stack([a * s for s in SCALES]) for a in values]
    got = vmap(grad(loss, argnums=tuple(range(len(values)))))(*(T(b) for b in batch))
    for i in range(len(SCALES)):
        expect = grad(loss, argnums=tuple(range(len(values))))(*(T(b[i]) for b in batch))
        for g, e in zip(got, expect):
            assert_values(g[i], N(e), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x: vmap(cr.sin)(x),
        lambda x: func.jacrev(lambda a: cr.sin(a * a))(x),
        lambda x: cr.autograd.grad(cr.sin(x), x, cr.eye(3), is_grads_batched=True)[0],
    ],
    ids=["vmap", "jacrev", "is_grads_batched"],
)
def test_compile_runs_vmap_eagerly_with_a_warning(fn):
    # A compiled replay runs no batched operations: a function that uses vmap runs eagerly.
    compiled = cr.compile(fn)
    x = leaf(RNG.standard_normal(3))
    with pytest.warns(cr.CompileWarning, match="vmap"):
        first = compiled(x)
    assert_values(first, N(fn(x)))
    assert_values(compiled(x), N(fn(x)))
