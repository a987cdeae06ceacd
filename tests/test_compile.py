"""chainrule.compile: a compiled function gives what the eager one gives, call after call, on
new values (the first call traces; the next ones replay, first as closures, then as
compiled source): the rule table, random programs, second order, in-place updates, .grad
accumulation, a training step. jax.jit's semantics (traced values refuse conversion to
Python, static arguments, re-tracing), and what runs eagerly, with a warning, instead."""

import copy
import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import CompileWarning, ConcretizationError, func, nn, optim
from chainrule._compile import _EAGER, _program
from conftest import LIBRARY, N, T, fails_on
from helpers import arrays
from test_elementwise import BINARY, UNARY

RNG = np.random.default_rng(2026)


@pytest.fixture(autouse=True)
def source_early(monkeypatch):
    """Programs become source after one replay, so that a few calls run both tiers; any
    CompileWarning fails a test that does not expect it."""
    monkeypatch.setattr(_program, "SOURCE_AFTER", 1)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        yield


# ----------------------------------------------------------------------------- helpers


def tensors(arrays_, grad):
    """Fresh tensors of the backend under test; those marked in `grad` require grad."""
    return [T(a, requires_grad=g) for a, g in zip(arrays_, grad)]


def leaves(tree) -> list:
    out, stack = [], [tree]
    while stack:
        x = stack.pop()
        if isinstance(x, (tuple, list)):
            stack.extend(reversed(x))
        elif isinstance(x, dict):
            stack.extend(x[k] for k in reversed(list(x)))
        else:
            out.append(x)
    return out


def assert_same(got, expected, rtol=1e-12, atol=1e-13):
    got, expected = leaves(got), leaves(expected)
    assert len(got) == len(expected)
    for g, e in zip(got, expected):
        if isinstance(e, cr.Tensor):
            assert isinstance(g, cr.Tensor)
            assert g.shape == e.shape and g.dtype == e.dtype
            assert g.requires_grad == e.requires_grad
            np.testing.assert_allclose(N(g.detach()), N(e.detach()), rtol=rtol, atol=atol)
        elif e is None:
            assert g is None
        else:
            assert g == e


def check(fn, draws, grad, rtol=1e-12, atol=1e-13):
    """fn(*tensors) compiled returns what it returns eagerly, and leaves the same .grad, on
    each draw of input arrays (tensors made afresh for both); it is traced once."""
    compiled = cr.compile(fn)
    for arrays_ in draws:
        eager_in, compiled_in = tensors(arrays_, grad), tensors(arrays_, grad)
        expected, got = fn(*eager_in), compiled(*compiled_in)
        assert_same(got, expected, rtol, atol)
        for a, b in zip(compiled_in, eager_in):
            assert_same(a.grad, b.grad, rtol, atol)
    assert compiled.traces == 1
    return compiled


def weights(shape):
    return T(RNG.uniform(0.5, 1.5, shape))


def value_and_grad(op, n_inputs, shape):
    """fn(*xs): op's value and the gradients of a weighted sum of it, by autograd.grad."""
    w = weights(shape)

    def fn(*xs):
        y = op(*xs)
        return y, cr.autograd.grad(cr.sum(y * w), xs[:n_inputs])

    return fn


# ----------------------------------------------------------------------------- the rule table


@pytest.mark.parametrize("name", sorted(UNARY))
@settings(max_examples=3)
@given(data=st.data())
def test_unary_rules_compiled_equal_eager(name, data):
    op, _, elements = UNARY[name]
    shape = data.draw(st.sampled_from([(3,), (2, 3)]))
    draws = [[data.draw(arrays(shape, elements))] for _ in range(4)]
    check(value_and_grad(op, 1, shape), draws, [True])


@pytest.mark.parametrize("name", sorted(BINARY))
@settings(max_examples=3)
@given(data=st.data())
def test_binary_rules_compiled_equal_eager(name, data):
    op, _, ex, ey = BINARY[name]
    shapes = data.draw(st.sampled_from([((3,), (3,)), ((2, 3), (3,)), ((2, 1), (1, 3))]))
    out = np.broadcast_shapes(*shapes)
    draws = [[data.draw(arrays(shapes[0], ex)), data.draw(arrays(shapes[1], ey))] for _ in range(4)]
    check(value_and_grad(op, 2, out), draws, [True, True])


def test_python_scalar_operands_are_constants_of_the_trace():
    fn = value_and_grad(lambda x: 2.0 * x - x / 3 + x**2 - 1, 1, (4,))
    check(fn, [[RNG.normal(size=4)] for _ in range(4)], [True])


SPD = np.array([[4.0, 1.0, 0.5], [1.0, 3.0, 0.2], [0.5, 0.2, 2.0]])

# Programs over the other rules: reductions, shapes, indexing, linear algebra, and results
# without gradient (comparisons, argsort, masks), each with its input shape.
PROGRAMS = {
    "sum_mean_keepdims": (
        lambda x: cr.sum(x, axis=1) + cr.mean(x, axis=0, keepdims=True).T[:, 0][:2],
        (2, 3),
    ),  # noqa: E501
    "max_min_prod": (lambda x: cr.max(x, axis=0) * cr.min(x, axis=0) + cr.prod(x, axis=0), (2, 3)),  # noqa: E501
    "softmax_family": (
        lambda x: F.softmax(x, axis=-1) + F.log_softmax(x, axis=0) + cr.logsumexp(x),
        (2, 3),
    ),  # noqa: E501
    "var_std": (lambda x: cr.var(x, axis=1) + cr.std(x, axis=0)[:2], (2, 3)),
    "cumulative": (lambda x: cr.cumulative_sum(x, axis=1) * cr.cumulative_prod(x, axis=1), (2, 3)),  # noqa: E501
    "reshape_permute_flip": (
        lambda x: cr.flip(cr.permute_dims(cr.reshape(x, (3, 2)), (1, 0)), axis=0),
        (2, 3),
    ),  # noqa: E501
    "broadcast_expand_squeeze": (
        lambda x: cr.squeeze(cr.expand_dims(x, axis=0), axis=0) + cr.broadcast_to(x[:1], (2, 3)),
        (2, 3),
    ),  # noqa: E501
    "concat_stack_unstack": (
        lambda x: cr.concat([x, x * 2], axis=0)[1:3] + cr.stack(cr.unstack(x, axis=0), axis=0),
        (2, 3),
    ),  # noqa: E501
    "getitem_basic_and_fancy": (
        lambda x: x[1:, ::2] * x[T(np.array([0, 1])), T(np.array([2, 0]))][:, None],
        (2, 3),
    ),  # noqa: E501
    "take_and_take_along_axis": (
        lambda x: (
            cr.take(x, T(np.array([2, 0, -1])), axis=1)
            + cr.take_along_axis(x, T(np.array([[1, 0, 2], [2, 2, 0]])), axis=1)
        ),
        (2, 3),
    ),  # noqa: E501
    "where_of_a_comparison": (
        lambda x: cr.where(x > 0.1, x * x, -x) + cr.clip(x, -0.5, 0.5),
        (2, 3),
    ),  # noqa: E501
    "sort_by_values": (
        lambda x: cr.sort(x, axis=1) * cr.astype(cr.argsort(x, axis=0), x.dtype),
        (2, 3),
    ),  # noqa: E501
    "relu_mask_and_maximum": (
        lambda x: F.relu(x) + cr.maximum(x, 0.2) + cr.astype(x > 0, x.dtype),
        (2, 3),
    ),  # noqa: E501
    "repeat_roll_tile": (
        lambda x: cr.repeat(x, 2, axis=1)[:, :3] + cr.roll(x, 1, axis=1) + cr.tile(x[:1], (2, 1)),
        (2, 3),
    ),  # noqa: E501
    "matmul_shapes": (lambda x: (x @ x.T) @ x + x[0] @ x.T @ x, (2, 3)),
    "tensordot_vecdot": (
        lambda x: cr.tensordot(x, x, axes=([1], [1])) + cr.vecdot(x, x)[:, None],
        (2, 3),
    ),  # noqa: E501
    "setitem_recorded": (lambda x: _written(x), (2, 3)),
    "linalg_solve_inv_det": (
        lambda a: (
            cr.linalg.solve(a + T(SPD), a[:, :1]).T
            + cr.linalg.inv(a + T(SPD)) * cr.linalg.det(a + T(SPD))
        ),
        (3, 3),
    ),  # noqa: E501
    "linalg_eigh_svd": (
        lambda a: (
            cr.linalg.eigh(a + a.T + T(SPD)).eigenvalues
            + cr.linalg.svdvals(a + T(SPD))
            + cr.linalg.svd(a + T(SPD), full_matrices=False).S
        ),
        (3, 3),
    ),  # noqa: E501
    "linalg_slogdet_cholesky_qr": (
        lambda a: (
            cr.linalg.slogdet(a @ a.T + T(SPD)).logabsdet
            + cr.sum(cr.linalg.cholesky(a @ a.T + T(SPD)))
            + cr.sum(cr.linalg.qr(a + T(SPD)).R)
        ),
        (3, 3),
    ),  # noqa: E501
}


def _written(x):
    y = cr.zeros((2, 3), dtype=x.dtype)
    y[0] = x[1] * 2
    y[1, 1:] = x[0, :2]
    return y * x


# What Dask's arrays can't do, compiled or not (see the README's backend limits).
DASK_NO_ND_INDEX = "Dask indexes with one integer array of at most one dimension per key"
DASK_NO_LINALG = "Dask's linalg has no det, slogdet or eigh"
DASK_LIMITS = {
    "getitem_basic_and_fancy": DASK_NO_ND_INDEX,
    "linalg_eigh_svd": DASK_NO_LINALG,
    "linalg_slogdet_cholesky_qr": DASK_NO_LINALG,
    "linalg_solve_inv_det": DASK_NO_LINALG,
}


@pytest.mark.parametrize(
    "name",
    [
        pytest.param(n, marks=fails_on("dask", reason=DASK_LIMITS[n])) if n in DASK_LIMITS else n
        for n in sorted(PROGRAMS)
    ],
)
def test_programs_over_the_rule_table_compiled_equal_eager(name):
    op, shape = PROGRAMS[name]
    y = op(T(RNG.uniform(-1, 1, shape)))
    check(value_and_grad(op, 1, y.shape), [[RNG.uniform(-1, 1, shape)] for _ in range(4)], [True])


def test_second_order_inside_the_compiled_function():
    W = T(RNG.normal(size=(4, 4)) / 2)

    def hvp(x, v):
        (g,) = cr.autograd.grad(cr.sum(cr.tanh(W @ x) ** 2), x, create_graph=True)
        (hv,) = cr.autograd.grad(cr.sum(g * v), x)
        return g.detach(), hv

    check(hvp, [[RNG.normal(size=4), RNG.normal(size=4)] for _ in range(4)], [True, False])


def test_gradient_with_respect_to_an_intermediate_and_a_subset_of_inputs():
    def fn(x, y):
        h = cr.sin(x) * y
        z = cr.exp(h) + y
        gh, gx = cr.autograd.grad(cr.sum(z * z), (h, x), retain_graph=True)
        (gy,) = cr.autograd.grad(cr.sum(z), y)
        return gh, gx, gy

    check(fn, [[RNG.normal(size=3), RNG.normal(size=3)] for _ in range(4)], [True, True])


def test_backward_accumulates_into_leaves_and_returns_their_grad():
    def fn(x, y):
        loss = cr.sum(cr.sin(x) * y + x * x)
        loss.backward()
        cr.sum(y * y).backward()
        return x.grad, y.grad, loss.detach()

    compiled = check(fn, [[RNG.normal(size=3), RNG.normal(size=3)] for _ in range(4)], [True] * 2)
    x = T(RNG.normal(size=3), requires_grad=True)
    gx, _, _ = compiled(x, T(RNG.normal(size=3), requires_grad=True))
    assert gx is x.grad


# ----------------------------------------------------------------------------- random programs

_UNARY_STEPS = [cr.sin, cr.tanh, cr.exp, lambda h: h * h, F.sigmoid, F.relu, cr.negative]
_BINARY_STEPS = [cr.add, cr.multiply, cr.subtract, lambda a, b: a / (1 + b * b), cr.maximum]


@settings(max_examples=15)
@given(program=st.deferred(lambda: _PROGRAMS), grad=st.tuples(st.booleans(), st.booleans()))
def test_random_programs_compiled_equal_eager(program, grad):
    """Programs drawn at random: elementwise ops, broadcasting binary ops, reductions with
    kept axes, matrix products and comparisons over a growing list of values."""

    def fn(x, y):
        out = _run_program(program, x, y)
        if not out.requires_grad:
            return out
        wanted = [t for t in (x, y) if t.requires_grad]
        return out, cr.autograd.grad(cr.sum(out * out), wanted, allow_unused=True)

    draws = [[RNG.uniform(-1, 1, (2, 3)), RNG.uniform(-1, 1, (2, 3))] for _ in range(3)]
    check(fn, draws, list(grad))


_PROGRAMS = st.lists(
    st.tuples(st.integers(0, 4), st.integers(0, 6), st.integers(0, 10), st.integers(0, 10)),
    min_size=1,
    max_size=12,
)


def _run_program(program, x, y):
    """The random program's last value, from inputs x and y."""
    values = [x, y]
    for kind, which, i, j in program:
        a, b = values[i % len(values)], values[j % len(values)]
        if kind == 0:
            values.append(_UNARY_STEPS[which](a))
        elif kind == 1:
            values.append(_BINARY_STEPS[which % len(_BINARY_STEPS)](a, b))
        elif kind == 2:
            values.append(cr.sum(a, axis=which % 2, keepdims=True) * b)
        elif kind == 3:
            values.append(cr.tanh(a @ b.T) @ b)
        else:
            values.append(cr.where(a > b, a, b * 0.5))
    return values[-1]


@settings(max_examples=10)
@given(program=_PROGRAMS, backward=st.booleans())
def test_random_programs_second_order_compiled_equal_eager(program, backward):
    """The same random programs differentiated twice inside the compiled function: a
    gradient with create_graph=True, then the gradient of its product with a vector (by
    autograd.grad, or by backward into .grad)."""

    def fn(x, y, v):
        out = _run_program(program, x, y)
        gx, gy = cr.autograd.grad(
            cr.sum(out * out), (x, y), create_graph=True, allow_unused=True, materialize_grads=True
        )
        inner = cr.sum(gx * v) + cr.sum(gy * gy)
        if backward:
            inner.backward()
            return out.detach(), gx.detach(), x.grad, y.grad
        return out.detach(), gx.detach(), cr.autograd.grad(inner, (x, y), allow_unused=True)

    draws = [[RNG.uniform(-1, 1, (2, 3)) for _ in range(3)] for _ in range(3)]
    check(fn, draws, [True, True, False])


def test_gradcheck_and_second_derivatives_through_compiled_functions():
    """gradcheck (finite differences) of a compiled function, whose outputs' backward is the
    recorded one; and of a compiled function that differentiates inside with
    create_graph=True (its results' backward: second derivatives)."""

    def fn(x, y):
        return cr.sin(x) * y + cr.tanh(x @ y.T) @ y, cr.sum(cr.exp(x * y))

    compiled = cr.compile(fn)
    x = T(RNG.uniform(-1, 1, (2, 3)), requires_grad=True)
    y = T(RNG.uniform(-1, 1, (2, 3)), requires_grad=True)
    assert cr.autograd.gradcheck(compiled, (x, y))

    def first_derivative(x, y, v):
        return cr.autograd.grad(cr.sum(fn(x, y)[0] * v), (x, y), create_graph=True)

    v = T(RNG.uniform(-1, 1, (2, 3)))
    compiled_grad = cr.compile(first_derivative)
    assert cr.autograd.gradcheck(compiled_grad, (x, y, v))
    assert compiled.traces >= 1 and compiled_grad.traces >= 1
    for out in compiled(x, y) + compiled_grad(x, y, v):
        assert out.grad_fn.name() == "CompiledBackward"


# ----------------------------------------------------------------------------- training


def _regression_data():
    x = RNG.normal(size=(8, 3))
    return x, x @ np.array([[1.0], [-2.0], [0.5]]) + 0.1


def test_training_step_with_nn_and_optim_equals_eager():
    cr.random.manual_seed(0)
    f64 = cr.float64
    model = nn.Sequential(nn.Linear(3, 5, dtype=f64), nn.Tanh(), nn.Linear(5, 1, dtype=f64))
    twin = copy.deepcopy(model)
    x, y = (T(a) for a in _regression_data())

    def trainer(m):
        opt = optim.SGD(m.parameters(), lr=0.05)

        def step(x, y):
            opt.zero_grad()
            loss = F.mse_loss(m(x), y)
            loss.backward()
            opt.step()
            return loss.detach()

        return step

    eager, compiled = trainer(model), cr.compile(trainer(twin))
    for _ in range(6):
        assert_same(compiled(x, y), eager(x, y))
    for p, q in zip(twin.parameters(), model.parameters()):
        assert_same(p, q)
        assert_same(p.grad, q.grad)
    # Traced twice: zero_grad branches on whether .grad is None, None only before step one.
    assert compiled.traces == 2


@pytest.mark.parametrize(
    "make_optimizer, traces",
    [
        (lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9), 2),
        (lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9, nesterov=True, weight_decay=0.01), 2),
        (lambda ps: optim.Adam(ps, lr=0.05), 2),
        (lambda ps: optim.Adam(ps, lr=0.05, weight_decay=0.1, amsgrad=True), 2),
        (lambda ps: optim.AdamW(ps, lr=0.05, betas=(0.3, 0.9)), 2),
        (lambda ps: optim.RMSprop(ps, lr=0.01), 2),
        (lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True), 2),
        (lambda ps: optim.Adagrad(ps, lr=0.05, lr_decay=0.01, weight_decay=0.1), 2),
        (lambda ps: optim.Adamax(ps, lr=0.05, weight_decay=0.1), 2),
        (lambda ps: optim.NAdam(ps, lr=0.05, weight_decay=0.1, decoupled_weight_decay=True), 2),
        # RAdam's update depends on its step count (rectified from step 6): picked by a
        # number, no guard, no new trace.
        (lambda ps: optim.RAdam(ps, lr=0.05, weight_decay=0.1), 2),
        # ASGD's average starts at step 5 (t0=2): picked by a number, no guard, no new trace.
        (lambda ps: optim.ASGD(ps, lr=0.05, t0=2, weight_decay=0.1), 2),
        (lambda ps: optim.Rprop(ps, lr=0.01), 2),
    ],
    ids=["sgd-momentum", "sgd-nesterov", "adam", "adam-amsgrad", "adamw", "rmsprop",
         "rmsprop-centered", "adagrad", "adamax", "nadam", "radam", "asgd", "rprop"],
)  # fmt: skip
def test_training_step_with_optimizer_state_made_by_the_first_call_equals_eager(
    make_optimizer, traces
):
    """The optimizer's state is made by the first step (SGD's momentum buffer, Adam's and
    RMSprop's moments and step count), written in place afterwards: replayed from the second
    call on (traced again: the state and the .grad that zero_grad keeps did not exist before
    the first), the step count and the numbers made from it computed at each call. Every
    step equals eager."""
    cr.random.manual_seed(1)
    f64 = cr.float64
    model = nn.Sequential(nn.Linear(3, 4, dtype=f64), nn.Tanh(), nn.Linear(4, 1, dtype=f64))
    twin = copy.deepcopy(model)
    x, y = (T(a) for a in _regression_data())

    def trainer(m):
        opt = make_optimizer(list(m.parameters()))

        def step(x, y):
            opt.zero_grad(set_to_none=False)
            loss = F.mse_loss(m(x), y)
            loss.backward()
            opt.step()
            return loss.detach()

        return step

    eager, compiled = trainer(model), cr.compile(trainer(twin))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", CompileWarning)
        for _ in range(6):
            assert_same(compiled(x, y), eager(x, y))
            for p, q in zip(twin.parameters(), model.parameters()):
                assert_same((p, p.grad), (q, q.grad))
    fell_back = [w for w in caught if "runs eagerly" in str(w.message)]
    assert not fell_back
    assert compiled.traces == traces
    assert all(_EAGER not in ps for ps in compiled._cache.values())


def test_gradient_descent_on_arguments_returns_new_values():
    def step(w, b, x, y):
        loss = cr.mean((x @ w + b - y) ** 2)
        gw, gb = cr.autograd.grad(loss, (w, b))
        return w.detach() - 0.1 * gw, b.detach() - 0.1 * gb, loss.detach()

    x, y = _regression_data()
    compiled = cr.compile(step)
    w, b = np.zeros((3, 1)), np.zeros(1)
    ew, eb = T(w, requires_grad=True), T(b, requires_grad=True)
    cw, cb = T(w, requires_grad=True), T(b, requires_grad=True)
    for _ in range(5):
        ew, eb, eloss = step(ew.requires_grad_(), eb.requires_grad_(), T(x), T(y))
        cw, cb, closs = compiled(cw.requires_grad_(), cb.requires_grad_(), T(x), T(y))
        assert_same((cw, cb, closs), (ew, eb, eloss))
    assert compiled.traces == 1


def test_gradients_accumulate_across_calls_without_zero_grad():
    w = T(RNG.normal(size=3), requires_grad=True)
    w2 = T(N(w), requires_grad=True)

    def make(w):
        def step(x):
            cr.sum(cr.sin(w * x)).backward()
            return w.grad

        return step

    eager, compiled = make(w), cr.compile(make(w2))
    for _ in range(4):
        x = RNG.normal(size=3)
        assert_same(compiled(T(x)), eager(T(x)))


def test_zero_grad_in_place_and_parameter_updates_under_no_grad():
    def make():
        w = T(RNG.normal(size=3) * 0 + 0.5, requires_grad=True)
        w.grad = T(np.ones(3))
        mean = T(np.zeros(3))

        def step(x):
            w.grad[...] = 0.0  # zero_grad(set_to_none=False)
            loss = cr.sum(cr.tanh(w * x))
            loss.backward()
            with cr.no_grad():
                w.__isub__(0.1 * w.grad)
                mean.__imul__(0.9)  # a running statistic, written in place
                mean.__iadd__(0.1 * x)
            return loss.detach(), mean

        return w, mean, step

    assert_steps_match(make, lambda w, mean: (w, w.grad, mean), 5)


def versions(ts) -> list[int]:
    return [t._version for t in ts]


def assert_steps_match(make, state, calls: int):
    """make() -> (*objects, step). Runs one step eagerly and one compiled, `calls` times on
    the same inputs: the same results, and the same values and versions of state(*objects).
    Returns the compiled step."""
    *objects, eager = make()
    *objects2, compiled = make()
    compiled = cr.compile(compiled)
    for _ in range(calls):
        x = RNG.normal(size=3)
        assert_same(compiled(T(x)), eager(T(x)))
        assert_same(state(*objects2), state(*objects))
        assert versions(state(*objects2)) == versions(state(*objects))
    return compiled


def test_a_replay_on_dask_arrays_computes_once_per_step_to_settle_the_parameters():
    """A training step on Dask storage, traced and replayed (loop and source): task graphs
    only, but for one computation per call, where the optimizer step settles the parameters
    as it does eagerly (tests/test_dask_compile.py); the values of NumPy's eager steps."""
    dask = pytest.importorskip("dask")
    da = pytest.importorskip("dask.array")
    computations = []

    def counted(dsk, keys, **kwargs):
        computations.append(keys)
        return dask.get(dsk, keys, **kwargs)

    def trainer(w):
        opt = optim.SGD([w], lr=0.1, momentum=0.9)

        def step(x):
            opt.zero_grad(set_to_none=False)
            loss = cr.sum(cr.tanh(w * x) ** 2)
            loss.backward()
            opt.step()
            return loss.detach()

        return step

    w0 = np.array([0.5, -0.3, 0.2, 0.9])
    xs = [RNG.normal(size=4) for _ in range(6)]
    w = cr.asarray(da.from_array(w0, chunks=2), requires_grad=True)
    compiled = cr.compile(trainer(w))
    with dask.config.set(scheduler=counted):
        losses = [compiled(cr.asarray(da.from_array(x, chunks=2))) for x in xs]
        assert all(isinstance(t._data, da.Array) for t in [*losses, w, w.grad])
    assert len(computations) == len(xs)
    assert compiled.traces == 2  # the first call makes .grad and the momentum buffer
    got = dask.compute([t._data for t in losses], w._data, w.grad._data, scheduler="sync")
    w_np = cr.tensor(w0, requires_grad=True)
    eager = trainer(w_np)
    expected = [N(eager(cr.tensor(x))) for x in xs]
    np.testing.assert_allclose(np.array(got[0]), np.array(expected), rtol=1e-12)
    np.testing.assert_allclose(got[1], N(w_np.detach()), rtol=1e-12)
    np.testing.assert_allclose(got[2], N(w_np.grad), rtol=1e-12)


def test_in_place_writes_to_arguments_are_replayed_on_the_argument():
    """An argument written in place (under no_grad) has the written values and version after
    the call, as eagerly (on every library: JAX's writes give the tensor a new array)."""

    def step(x, w):
        with cr.no_grad():
            x *= 2.0
            x[0] = 5.0
            w -= 0.1 * x
        return cr.sum(x * w)

    compiled = cr.compile(step)
    for _ in range(4):
        a, b = RNG.normal(size=3), RNG.normal(size=3)
        (x, w), (x2, w2) = (T(a), T(b, requires_grad=True)), (T(a), T(b, requires_grad=True))
        assert_same(compiled(x2, w2), step(x, w))
        assert_same((x2, w2), (x, w))
        assert versions((x2, w2)) == versions((x, w))
    assert compiled.traces == 1


def test_in_place_writes_to_a_grad_made_inside_are_replayed_on_the_leaf():
    """A .grad made by a backward (or assigned) inside, then written in place and
    accumulated into again: the leaf's .grad has those values and version after each call."""

    def make():
        w = T(RNG.normal(size=3) * 0 + 0.5, requires_grad=True)
        v = T(np.arange(3.0), requires_grad=True)

        def step(x):
            w.grad = v.grad = None
            cr.sum(cr.sin(w * x)).backward()
            with cr.no_grad():
                w.grad *= 3.0
                w.grad[1] = 0.0
            cr.sum(cr.cos(w * x)).backward()
            v.grad = x * 2.0
            with cr.no_grad():
                v.grad += 1.0
                w.__isub__(0.1 * w.grad)
            return w.grad * 1.0

        return w, v, step

    compiled = assert_steps_match(make, lambda w, v: (w, w.grad, v.grad), 4)
    assert compiled.traces == 2  # .grad is None before the first call only


@fails_on("dask", reason=DASK_NO_LINALG)
def test_multi_output_nodes():
    def fn(a):
        parts = cr.unstack(a, axis=1)
        w, v = cr.linalg.eigh(a @ a.T + T(SPD))
        sign, logdet = cr.linalg.slogdet(a + T(SPD))
        loss = cr.sum(parts[0] * parts[2]) + cr.sum(w) + cr.sum(v[:, 0] ** 2) + logdet
        loss.backward()
        return loss.detach(), sign

    check(fn, [[RNG.uniform(-1, 1, (3, 3))] for _ in range(4)], [True])


def test_returned_tensor_whose_graph_a_backward_freed_refuses_a_second_backward():
    def fn(x):
        loss = cr.sum(cr.sin(x) ** 2)
        loss.backward()
        return loss

    compiled = cr.compile(fn)
    for _ in range(3):
        loss = compiled(T(RNG.normal(size=3), requires_grad=True))
        assert loss.requires_grad and loss.grad_fn.name() == "SumBackward0"
        with pytest.raises(RuntimeError, match="backward through the graph a second time"):
            loss.backward()


def test_outputs_keep_their_structure_and_python_values():
    def fn(x, n):
        return {"a": (x * 2, [x + n, n]), "b": None, "c": "text"}

    compiled = cr.compile(fn)
    for _ in range(3):
        x = RNG.normal(size=2)
        assert_same(compiled(T(x), 3), fn(T(x), 3))
        assert isinstance(compiled(T(x), 3)["a"], tuple)


def test_compiled_methods_and_nested_compiled_functions():
    class Scaler:
        def __init__(self):
            self.scale = T(np.array([2.0, 3.0]))

        @cr.compile
        def apply(self, x):
            return inner(x) * self.scale

    @cr.compile
    def inner(x):
        return cr.exp(x)

    s = Scaler()
    for _ in range(3):
        x = RNG.normal(size=2)
        assert_same(s.apply(T(x)), cr.exp(T(x)) * s.scale)


def test_tensors_from_outside_are_read_at_each_call():
    w = T(np.array([1.0, 2.0]))
    compiled = cr.compile(lambda x: x * w)
    x = T(np.array([1.0, 1.0]))
    assert_same(compiled(x), T(np.array([1.0, 2.0])))
    w[...] = 5.0
    assert_same(compiled(x), T(np.array([5.0, 5.0])))
    assert compiled.traces == 1


def test_tensors_from_outside_sharing_one_array_are_read_each_as_itself():
    w = T(np.array([1.0, 2.0]))
    v = w.detach()  # the same array while tracing
    compiled = cr.compile(lambda x: x * w + v)
    x = T(np.array([1.0, 1.0]))
    assert_same(compiled(x), T(np.array([2.0, 4.0])))
    with cr.no_grad():
        v += 1.0  # in place: on JAX v gets a new array and w keeps the old one
    assert_same(compiled(x), x * w + v)
    assert compiled.traces == 1


# ----------------------------------------------------------------------------- semantics


@pytest.mark.parametrize(
    "convert, name",
    [
        (bool, "bool()"),
        (float, "float()"),
        (int, "int()"),
        (lambda t: t.item(), "item()"),
        (lambda t: t.numpy(), "numpy()"),
        (lambda t: t.tolist(), "numpy()"),
        (lambda t: np.asarray(t), "numpy()"),
        (lambda t: [0, 1, 2][t], "__index__()"),
    ],
)
def test_python_conversions_of_traced_values_raise(convert, name):
    @cr.compile
    def fn(x):
        n = cr.astype(cr.sum(x > 0), cr.int64)
        return x * convert(n)

    with pytest.raises(ConcretizationError, match=name.replace("(", r"\(").replace(")", r"\)")):
        fn(T(np.array([0.5, -1.0])))
    with pytest.raises(ConcretizationError, match="static_argnums"):
        fn(T(np.array([0.5, -1.0])))
    assert cr.sum(T(np.array([1.0]))).item() == 1.0  # the tracer is gone


def test_static_arguments_are_traced_once_per_value():
    def fn(x, n, *, mode):
        return x**n if mode == "power" else x * n

    compiled = cr.compile(fn, static_argnums=1, static_argnames="mode")
    x = T(np.array([1.5, 2.0]))
    for n, mode in [(2, "power"), (3, "power"), (2, "power"), (3, "times")]:
        assert_same(compiled(x, n, mode=mode), fn(x, n, mode=mode))
    assert compiled.traces == 3


def test_new_shapes_dtypes_and_grad_flags_trace_again_and_warn_when_it_keeps_happening():
    compiled = cr.compile(lambda x: cr.sum(cr.sin(x)), cache_size=3)
    for n in (2, 3, 2, 3):
        assert_same(compiled(T(np.ones(n))), cr.sum(cr.sin(T(np.ones(n)))))
    compiled(T(np.ones(3), requires_grad=True))
    assert compiled.traces == 3
    with pytest.warns(CompileWarning, match="traced 4 times"):
        compiled(T(np.ones(3, dtype=np.float32)))


# ----------------------------------------------------------------------------- eager fallback


def _falls_back(fn, *args, match):
    compiled = cr.compile(fn)
    with pytest.warns(CompileWarning, match=match):
        first = compiled(*args)
    assert_same(first, fn(*args))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)  # warned once only
        assert_same(compiled(*args), fn(*args))


def test_custom_function_runs_eagerly_with_a_warning():
    class Cube(cr.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x * x

        @staticmethod
        def backward(ctx, g):
            (x,) = ctx.saved_tensors
            return 3 * x * x * g

    _falls_back(lambda x: Cube.apply(x) + 1, T(np.array([1.0, 2.0])), match="Function Cube")


def test_an_argument_given_a_history_in_place_runs_eagerly_with_a_warning():
    w = T(np.array([1.0, 2.0]), requires_grad=True)

    def fn(x):
        x *= w  # x needs no grad: the write gives it w's history
        return x + 1

    compiled = cr.compile(fn)
    for k in range(3):
        x, x2 = T(np.array([1.0, -1.0]) * k), T(np.array([1.0, -1.0]) * k)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", CompileWarning)
            assert_same(compiled(x2), fn(x))
        caught = [w for w in caught if issubclass(w.category, CompileWarning)]
        messages = [str(w.message).split(": ", 1)[1] for w in caught]
        warned = ["an in-place operation inside gave an argument a history"]
        assert messages == (warned if k == 0 else [])  # once
        assert_same(x2, x)
        assert x2.grad_fn is not None and x2._version == x._version


def test_random_numbers_run_eagerly_with_a_warning():
    def fn(x):
        cr.random.manual_seed(1)
        return x + cr.random.rand(2, dtype=x.dtype)

    _falls_back(fn, T(np.array([1.0, 2.0])), match="random numbers")


class _OutOfPlace:
    """A running mean kept outside, replaced by a new tensor at each step."""

    def __init__(self, w):
        self.w = w
        self.mean = cr.zeros_like(w)

    def step(self, x):
        loss = cr.sum((self.w * x) ** 2)
        (g,) = cr.autograd.grad(loss, self.w)
        self.mean = self.mean * 0.9 + 0.1 * g
        with cr.no_grad():
            self.w -= 0.1 * self.mean
        return self.w.detach()


def test_state_replaced_at_each_step_runs_eagerly_with_a_warning():
    w = T(np.array([1.0, -1.0]), requires_grad=True)
    w2 = T(np.array([1.0, -1.0]), requires_grad=True)

    def make(w):
        return _OutOfPlace(w).step

    eager, compiled = make(w), cr.compile(make(w2))
    with pytest.warns(CompileWarning, match="kept outside the function"):
        for _ in range(3):  # a first call may make state: traced again twice before giving up
            x = RNG.normal(size=2)
            assert_same(compiled(T(x)), eager(T(x)))
    for _ in range(3):
        x = RNG.normal(size=2)
        assert_same(compiled(T(x)), eager(T(x)))
    assert compiled.traces == 3


def test_state_made_by_the_first_call_and_updated_in_place_later_is_replayed():
    class Running:
        def __init__(self):
            self.mean = None

        def __call__(self, x):
            if self.mean is None:
                self.mean = x.detach() * 1.0
            else:
                with cr.no_grad():
                    self.mean.__imul__(0.9)
                    self.mean.__iadd__(0.1 * x.detach())
            return self.mean * 2.0

    eager, compiled_state = Running(), Running()
    compiled = cr.compile(compiled_state)
    for _ in range(5):
        x = RNG.normal(size=3)
        assert_same(compiled(T(x)), eager(T(x)))
        assert_same(compiled_state.mean, eager.mean)
    assert compiled.traces == 2


def test_returned_tensors_with_a_live_graph_share_one_node_that_runs_their_backward():
    w = T(np.array([1.5, -0.5]), requires_grad=True)
    w2 = T(N(w), requires_grad=True)

    def make(w):
        def forward(x, h):
            y = cr.tanh(x * w) + h
            return y * 2, cr.sum(y * y), x.detach()

        return forward

    eager, compiled = make(w), cr.compile(make(w2))
    names = []
    for _ in range(4):
        x, h = RNG.normal(size=2), RNG.normal(size=2)
        # h has a history from before the call: the gradient goes on into it.
        ex, eh0 = T(x, requires_grad=True), T(h, requires_grad=True)
        cx, ch0 = T(x, requires_grad=True), T(h, requires_grad=True)
        e, c = eager(ex, eh0 * 3), compiled(cx, ch0 * 3)
        assert_same(c, e)
        names.append(c[0].grad_fn.name())
        cr.sum(c[0] * c[0]).backward(retain_graph=True)
        c[1].backward()
        cr.sum(e[0] * e[0]).backward(retain_graph=True)
        e[1].backward()
        assert_same((cx.grad, ch0.grad, w2.grad), (ex.grad, eh0.grad, w.grad))
    assert compiled.traces == 1
    assert names == ["MulBackward0"] + ["CompiledBackward"] * 3


def test_tensor_hooks_registered_before_tracing_and_inside_are_replayed():
    """A hook on a parameter (registered before tracing) and one on an intermediate
    (registered inside) run as recorded operations at every replay; a hook registered or
    removed after tracing makes the next call trace again."""

    def make():
        w = T(np.array([0.5, -1.0, 2.0]), requires_grad=True)
        handle = w.register_hook(lambda g: cr.clip(g, -0.3, 0.3) * 2.0)

        def step(x):
            w.grad = None
            h = cr.sin(w * x)
            h.register_hook(lambda g: g * cr.exp(-h.detach()))  # a cycle: h's node holds it
            cr.sum(h * h).backward()
            return w.grad

        return w, handle, step

    (w, handle, eager), (w2, handle2, compiled) = make(), make()
    compiled = cr.compile(compiled)
    for _ in range(4):
        x = RNG.normal(size=3)
        assert_same(compiled(T(x)), eager(T(x)))
    assert compiled.traces == 2  # the second: w.grad is no longer None at entry
    handle.remove()
    handle2.remove()
    w.register_hook(lambda g: -g)
    w2.register_hook(lambda g: -g)
    for _ in range(3):
        x = RNG.normal(size=3)
        assert_same(compiled(T(x)), eager(T(x)))
    assert compiled.traces == 3


def test_hooks_on_a_parameter_apply_to_a_gradient_taken_by_autograd_grad():
    w = T(np.array([0.5, -1.0]), requires_grad=True)
    w.register_hook(lambda g: g * 3.0)

    @cr.compile
    def grad_of(x):
        return cr.autograd.grad(cr.sum(cr.tanh(w * x)), w)

    for _ in range(3):
        x = RNG.normal(size=2)
        (expected,) = cr.autograd.grad(cr.sum(cr.tanh(w * T(x))), w)
        assert_same(grad_of(T(x))[0], expected)
    assert grad_of.traces == 1


@pytest.mark.parametrize(
    "hook, match",
    [
        (lambda y: y.retain_grad(), "retain_grad"),
        (lambda y: y.grad_fn.register_prehook(lambda gs: gs), "node prehooks"),
        (lambda y: y.grad_fn.register_hook(lambda gi, go: gi), "node hooks"),
    ],
    ids=["retain_grad", "prehook", "node-hook"],
)
def test_other_hooks_on_the_graph_run_eagerly_with_a_warning(hook, match):
    def fn(x):
        y = cr.sin(x)
        hook(y)
        cr.sum(y * y).backward()
        return x.grad

    x = T(np.array([0.5, 1.0]), requires_grad=True)
    x2 = T(np.array([0.5, 1.0]), requires_grad=True)
    compiled = cr.compile(fn)
    with pytest.warns(CompileWarning, match=match):
        compiled(x2)
    assert_same(x2.grad, fn(x))


def test_compile_under_detect_anomaly_runs_eagerly():
    compiled = cr.compile(lambda x: cr.sin(x))
    with cr.autograd.detect_anomaly():
        assert_same(compiled(T(np.array([0.5]))), cr.sin(T(np.array([0.5]))))
    assert compiled.traces == 0


def test_an_error_while_tracing_leaves_eager_execution_as_it_was():
    @cr.compile
    def fn(x):
        raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        fn(T(np.ones(2)))
    x = T(np.ones(2), requires_grad=True)
    cr.sum(x * x).backward()
    assert_same(x.grad, T(2 * np.ones(2)))
    assert math.isclose(cr.sum(x).item(), 2.0)


def test_the_replay_is_straight_line_code_on_raw_arrays():
    w = T(np.array([1.0, 2.0]), requires_grad=True)

    @cr.compile
    def step(x):
        w.grad = None
        loss = cr.sum(cr.tanh(w * x) ** 2)
        loss.backward()
        return loss.detach()

    for _ in range(3):
        step(T(RNG.normal(size=2)))
    source = step.source()[0]  # the latest (the first call's, with w.grad None, is kept)
    body = source.splitlines()[1:-1]
    assert not any("TENSOR(" in line or "Node" in line for line in body)
    assert "for " not in source and "while " not in source


# ----------------------------------------------------------------------------- chainrule.func

_W = RNG.normal(size=(3, 3))


def _loss(x, y):
    return cr.sum(cr.tanh(T(_W) @ x) * y)


REVERSE_TRANSFORMS = {
    "grad": lambda x, y: func.grad(_loss)(x, y),
    "grad_argnums_and_value": lambda x, y: func.grad_and_value(_loss, argnums=(0, 1))(x, y),
    "vjp": lambda x, y: func.vjp(lambda a: cr.tanh(T(_W) @ a) * y, x)[1](y),
    "grad_of_grad": lambda x, y: func.grad(lambda a: cr.sum(func.grad(_loss)(a, y) ** 2))(x),
}


@pytest.mark.parametrize("name", sorted(REVERSE_TRANSFORMS))
@pytest.mark.parametrize("outer_grad", [False, True], ids=["plain", "requires-grad"])
def test_reverse_mode_function_transforms_inside_are_replayed(name, outer_grad):
    """chainrule.func's reverse-mode transforms inside a compiled function: replayed (one
    trace), equal to eager; with inputs that require grad their results keep a graph, whose
    backward (run outside) equals eager's too."""
    fn = REVERSE_TRANSFORMS[name]
    draws = [[RNG.normal(size=3), RNG.normal(size=3)] for _ in range(4)]
    compiled = check(fn, draws, [outer_grad, False])
    if outer_grad:
        x, x2 = T(draws[0][0], requires_grad=True), T(draws[0][0], requires_grad=True)
        y = T(draws[0][1])
        sum(cr.sum(t * t) for t in leaves(fn(x, y))).backward()
        sum(cr.sum(t * t) for t in leaves(compiled(x2, y))).backward()
        assert_same(x2.grad, x.grad)


@pytest.mark.parametrize(
    "fn",
    [
        lambda x, y: func.jvp(lambda a: cr.tanh(a * y), (x,), (y,)),
        lambda x, y: func.jacfwd(lambda a: cr.sin(a * y))(x),
        lambda x, y: func.hessian(lambda a: _loss(a, y))(x),
    ],
    ids=["jvp", "jacfwd", "hessian"],
)
def test_forward_mode_transforms_inside_run_eagerly_with_a_warning(fn):
    x, y = T(RNG.normal(size=3)), T(RNG.normal(size=3))
    _falls_back(fn, x, y, match="forward-mode AD|vmap")  # jacfwd: its vmap is met first


# ----------------------------------------------------------------------------- nothing stale

CONVERSIONS = {
    "asarray-dtype": lambda a: cr.asarray(a, dtype=cr.float64),
    "asarray-copy": lambda a: cr.asarray(a, copy=True),
    "tensor": lambda a: cr.tensor(a),
    "from_dlpack": lambda a: cr.from_dlpack(a),
    "deepcopy": lambda a: copy.deepcopy(a),
}


@pytest.mark.parametrize("name", sorted(CONVERSIONS))
@pytest.mark.parametrize("raw", [False, True], ids=["tensor", "array"])
def test_copies_and_conversions_of_an_argument_are_made_at_every_call(name, raw):
    """A copy or conversion of an argument (not an operation of the graph) is made again
    from each call's values: it was a constant of the first call's values."""
    if name == "deepcopy" and raw:
        pytest.skip("copy.deepcopy of a raw array runs in the array's library, unseen")
    if name == "from_dlpack" and LIBRARY != "numpy":
        pytest.skip("from_dlpack makes a NumPy tensor (the default namespace)")
    convert = CONVERSIONS[name]

    def fn(x, a):
        return cr.sum(x * cr.astype(convert(a), cr.float64))

    compiled = cr.compile(fn)
    x = T(np.ones(3))
    for scale in (1.0, 2.0, 3.0):
        a = T(scale * np.ones(3, np.float32))
        a = a._data if raw else a
        assert_same(compiled(x, a), fn(x, a))
    assert compiled.traces == 1


def test_numpy_functions_on_a_tensor_argument_are_traced():
    fn = cr.compile(lambda x, a: cr.sum(x * np.sum(a)))
    x = T(np.ones(3))
    for scale in (1.0, 2.0):
        a = T(scale * np.ones(3))
        assert_same(fn(x, a), 3 * 3 * scale)


def test_minus_zero_is_another_value_than_zero():
    compiled = cr.compile(lambda x, c: x * math.copysign(1.0, c))
    static = cr.compile(lambda x, c: x * math.copysign(1.0, c), static_argnums=1)
    x = T(np.ones(2))
    for fn in (compiled, static):
        assert_same(fn(x, 0.0), x)
        assert_same(fn(x, -0.0), -x)
        assert fn.traces == 2
    nan = cr.compile(lambda x, c: x * c)
    for _ in range(3):
        assert np.isnan(N(nan(x, math.nan))).all()
    assert nan.traces == 1  # nan != nan, but the same bits are the same kind


def test_the_same_tensor_for_two_arguments_is_another_kind_of_input():
    """Traced with two tensors, called with one twice: the write to `a` reaches the value
    saved for `b`'s backward, which raises as it does eagerly (a replay of the distinct
    case would not see it)."""
    w = T(np.array([1.0, 2.0]), requires_grad=True)

    def fn(a, b):
        loss = cr.sum(w * b)
        with cr.no_grad():
            a += 1.0
        loss.backward()
        return loss.detach()

    compiled = cr.compile(fn)
    for _ in range(3):  # traced twice: w.grad is None at the first call only
        assert_same(compiled(T(np.ones(2)), T(np.ones(2))), 3.0)
    traces = compiled.traces
    for same in (lambda t: t, lambda t: t.detach()):  # a detach() shares t's array
        t = T(np.ones(2))
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            fn(t, same(t))
        t = T(np.ones(2))
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            compiled(t, same(t))
    assert compiled.traces == traces + 2  # the first error left no trace


def test_a_write_in_place_to_an_input_saved_by_a_compiled_output_fails_its_backward():
    """The node of a compiled output's graph checks the versions of the inputs it saved, as
    eager nodes do."""
    cr.random.manual_seed(3)
    model = nn.Linear(3, 1, dtype=cr.float64)
    compiled = cr.compile(lambda x: cr.sum(model(x) ** 2))
    for _ in range(3):
        x = T(np.ones((2, 3)))
        out = compiled(x)
        with cr.no_grad():
            x *= 2.0
        with pytest.raises(RuntimeError, match="modified by an inplace operation"):
            out.backward()
    x = T(np.ones((2, 3)))
    compiled(x).backward()  # unwritten: runs
    assert compiled.traces == 1


def _batched_fn(x):
    m = cr.reshape(cr.sin(x), (2, 2)) @ T(np.array([[1.0, 2.0], [3.0, 4.0]]))
    return cr.sum(m, axis=0) * m[1]


def test_jacrev_of_a_compiled_function_at_every_call():
    compiled = cr.compile(_batched_fn)
    jac, expected = func.jacrev(compiled), func.jacrev(_batched_fn)
    for _ in range(4):
        x = T(RNG.normal(size=4))
        assert_same(jac(x), expected(x))
    assert compiled.traces == 1


def test_batched_gradients_through_a_compiled_function_at_every_call():
    compiled = cr.compile(_batched_fn)
    for _ in range(4):
        a = RNG.normal(size=4)
        x, x2 = T(a, requires_grad=True), T(a, requires_grad=True)
        basis = T(np.eye(2))
        (got,) = cr.autograd.grad(compiled(x2), x2, basis, is_grads_batched=True)
        (expected,) = cr.autograd.grad(_batched_fn(x), x, basis, is_grads_batched=True)
        assert_same(got, expected)
    assert compiled.traces == 1


class _Scaled:
    def __init__(self, w):
        self.w = w

    @cr.compile
    def apply(self, x):
        return cr.sum(self.w * x)


def test_a_tensor_from_outside_replaced_where_the_function_finds_it_is_read_anew():
    """A tensor from outside replaced (in a dict, a closure, a module, an object that is an
    argument) while the old one lives on: the next call reads the new one (it read the old
    one, which its guards only checked for being alive)."""
    x = T(np.ones(3))
    holder = {"w": T(np.ones(3))}
    in_dict = cr.compile(lambda x: cr.sum(holder["w"] * x))
    w = T(np.ones(3))
    in_closure = cr.compile(lambda x: cr.sum(w * x))
    cr.random.manual_seed(4)
    model = nn.Linear(3, 1, bias=False, dtype=cr.float64)
    in_module = cr.compile(lambda x: cr.sum(model(x)))
    obj = _Scaled(T(np.ones(3)))
    olds = [holder["w"], w, model.weight, obj.w]
    for fn in (in_dict, in_closure, in_module, obj.apply):
        fn(x), fn(x)
    holder["w"] = T(np.full(3, 2.0))
    w = T(np.full(3, 3.0))
    model.weight = nn.Parameter(T(np.full((1, 3), 4.0)))
    obj.w = T(np.full(3, 5.0))
    for fn, expected in zip((in_dict, in_closure, in_module, obj.apply), (6.0, 9.0, 12.0, 15.0)):
        for _ in range(2):
            assert_same(fn(x), expected)
    assert [in_dict.traces, in_closure.traces, in_module.traces] == [2, 2, 2]
    assert all(t._data is not None for t in olds)


OPTIMIZERS = {
    "sgd": lambda ps: optim.SGD(ps, lr=0.05),
    "sgd-momentum-wd": lambda ps: optim.SGD(ps, lr=0.05, momentum=0.9, weight_decay=0.01),
    "adam": lambda ps: optim.Adam(ps, lr=0.01),
    "adam-amsgrad": lambda ps: optim.Adam(ps, lr=0.01, weight_decay=0.1, amsgrad=True),
    "adamw": lambda ps: optim.AdamW(ps, lr=0.01),
    "rmsprop": lambda ps: optim.RMSprop(ps, lr=0.01, momentum=0.5, centered=True),
    "adagrad": lambda ps: optim.Adagrad(ps, lr=0.05),
    "adamax": lambda ps: optim.Adamax(ps, lr=0.01),
    "nadam": lambda ps: optim.NAdam(ps, lr=0.01),
    # betas[1] = 0.9: the rectified branch starts at step 6, inside the test's steps.
    "radam": lambda ps: optim.RAdam(ps, lr=0.01, betas=(0.9, 0.9)),
    # t0=3: the average starts at step 6, inside the test's steps.
    "asgd": lambda ps: optim.ASGD(ps, lr=0.05, t0=3),
    "rprop": lambda ps: optim.Rprop(ps, lr=0.01),
    "adadelta": lambda ps: optim.Adadelta(ps, lr=0.5, weight_decay=0.01),
}
SCHEDULERS = {
    "none": None,
    "step": lambda opt: optim.lr_scheduler.StepLR(opt, step_size=2, gamma=0.5),
    "cosine": lambda opt: optim.lr_scheduler.CosineAnnealingLR(opt, T_max=3),
}


@pytest.mark.parametrize("scheduler", sorted(SCHEDULERS))
@pytest.mark.parametrize("name", sorted(OPTIMIZERS))
def test_every_optimizer_compiles_bit_for_bit_with_a_scheduler_between_steps(name, scheduler):
    """A float32 MLP training step with each optimizer, its learning rate changed between
    steps by a scheduler: the compiled step gives eager's parameters bit for bit at every
    step, traced twice (the first step makes the state) and replayed after."""
    cr.random.manual_seed(5)
    f32 = cr.float32
    model = nn.Sequential(nn.Linear(3, 8, dtype=f32), nn.Tanh(), nn.Linear(8, 1, dtype=f32))
    twin = copy.deepcopy(model)
    x, y = (T(a, dtype=np.float32) for a in _regression_data())

    def trainer(m):
        opt = OPTIMIZERS[name](list(m.parameters()))
        sched = None if SCHEDULERS[scheduler] is None else SCHEDULERS[scheduler](opt)

        def step(x, y):
            opt.zero_grad()
            loss = F.mse_loss(m(x), y)
            loss.backward()
            opt.step()
            return loss.detach()

        return step, sched

    (eager, eager_sched), (compiled, compiled_sched) = trainer(model), trainer(twin)
    compiled = cr.compile(compiled)
    for _ in range(7):
        assert np.array_equal(N(compiled(x, y)), N(eager(x, y)))
        for p, q in zip(twin.parameters(), model.parameters()):
            assert np.array_equal(N(p), N(q))
        for s in (eager_sched, compiled_sched):
            if s is not None:
                s.step()
    assert compiled.traces <= 3  # zero_grad's None .grad, the state made by step one


def test_a_learning_rate_changed_between_calls_is_read_at_each_call():
    w, w2 = (
        T(np.array([1.0, -2.0]), requires_grad=True),
        T(np.array([1.0, -2.0]), requires_grad=True),
    )

    def make(w):
        opt = optim.SGD([w], lr=0.1)

        def step(x):
            w.grad = None
            cr.sum((w * x) ** 2).backward()
            opt.step()
            return w.detach()

        return opt, step

    (opt, eager), (opt2, compiled) = make(w), make(w2)
    compiled = cr.compile(compiled)
    for lr in (0.1, 0.1, 0.01, 0.2):
        opt.param_groups[0]["lr"] = opt2.param_groups[0]["lr"] = lr
        x = T(RNG.normal(size=2))
        assert_same(compiled(x), eager(x))
    assert compiled.traces == 2  # .grad is None at the first call only


def test_an_optimizer_state_loaded_between_calls_is_the_one_updated():
    w, w2 = (
        T(np.array([1.0, -2.0]), requires_grad=True),
        T(np.array([1.0, -2.0]), requires_grad=True),
    )

    def make(w):
        opt = optim.Adam([w], lr=0.1)

        def step(x):
            opt.zero_grad()
            cr.sum((w * x) ** 2).backward()
            opt.step()
            return w.detach()

        return opt, step

    (opt, eager), (opt2, compiled) = make(w), make(w2)
    compiled = cr.compile(compiled)
    for i in range(8):
        if i == 4:
            saved = opt.state_dict()
            saved["state"][0]["step"] = 1
            opt.load_state_dict(saved)
            opt2.load_state_dict(saved)
        if i == 6:  # a new state dict holding the same tensors
            opt.state[w] = dict(opt.state[w])
            opt2.state[w2] = dict(opt2.state[w2])
        x = T(RNG.normal(size=2))
        assert_same(compiled(x), eager(x))
        assert opt2.state[w2]["step"] == opt.state[w]["step"]


class _Doubling(nn.Module):
    def forward(self, x):
        return x * 2.0 if self.training else x


def test_a_module_mode_changed_after_compiling_traces_again():
    model = _Doubling().eval()
    compiled = cr.compile(lambda x: model(x))
    x = T(np.ones(2))
    for training, expected in ((False, 1.0), (False, 1.0), (True, 2.0), (True, 2.0), (False, 1.0)):
        model.train(training)
        assert_same(compiled(x), x * expected)
    assert compiled.traces == 2

    cr.random.manual_seed(6)
    dropout = nn.Dropout(0.5).eval()
    compiled = cr.compile(lambda x: dropout(x))
    x = T(np.ones(1000))
    assert_same(compiled(x), x)
    assert_same(compiled(x), x)
    dropout.train()
    with pytest.warns(CompileWarning, match="random numbers"):
        out = compiled(x)
    assert 0 < np.count_nonzero(N(out)) < 1000  # dropped out, eagerly
    assert 0 < np.count_nonzero(N(compiled(x))) < 1000
    dropout.eval()
    assert_same(compiled(x), x)  # the replay of eval mode
    assert compiled.traces == 2


# ----------------------------------------------------------------------------- differential

# A random program is a list of these steps on `h` (first x * w), inside a training step with
# an optimizer; its calls change values, shapes, aliasing, a float argument and the lr.
PROGRAM_STEPS = ("sin", "tanh", "mul_w", "add_a", "mul_a", "scale_c", "buffer", "write_a",
                 "copy_a", "grad_w")  # fmt: skip


class _World:
    """What a random program reads and writes from outside: a parameter, a buffer, an
    optimizer (its kind and the steps drawn)."""

    def __init__(self, steps: list, optimizer: str):
        self.w = T(np.array([0.7]), requires_grad=True)
        self.b = T(np.array([0.0]))
        self.opt = OPTIMIZERS[optimizer]([self.w])
        self.steps = steps

    def __call__(self, x, a, c):
        w, b = self.w, self.b
        self.opt.zero_grad()
        h = x * w
        for name in self.steps:
            if name == "sin":
                h = cr.sin(h)
            elif name == "tanh":
                h = cr.tanh(h)
            elif name == "mul_w":
                h = h * w
            elif name == "add_a":
                h = h + a
            elif name == "mul_a":
                h = h * a
            elif name == "scale_c":
                h = h * c + math.copysign(0.5, c)
            elif name == "buffer":
                with cr.no_grad():
                    b *= 0.5
                    b += cr.sum(h.detach())
            elif name == "write_a":
                with cr.no_grad():
                    a += 1.0
            elif name == "copy_a":
                h = h + cr.tensor(a) * 0.5
            else:  # grad_w: a gradient taken inside, used as a value
                (g,) = cr.autograd.grad(cr.sum(h), w, retain_graph=True)
                h = h + g
        loss = cr.sum(h * h)
        loss.backward()
        self.opt.step()
        return loss.detach(), h.detach()


def _outcome(fn, *args):
    try:
        return fn(*args), None
    except (RuntimeError, ValueError, TypeError) as e:
        return None, (type(e), str(e).splitlines()[0])


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
@pytest.mark.parametrize("seed", range(24))
def test_random_programs_with_changing_inputs_and_hyperparameters_equal_eager(seed):
    """A random training-step program, compiled and eager on twin worlds, over calls that
    change values, shapes, aliasing (the same tensor for x and a), a float argument (-0.0
    against 0.0) and the learning rate: the same results or the same error, the same
    parameter, .grad, buffer and arguments, values and versions, at every call (both replay
    tiers: a loop, then source)."""
    rng = np.random.default_rng(seed)
    steps = [str(s) for s in rng.choice(PROGRAM_STEPS, size=rng.integers(1, 6))]
    optimizer = str(rng.choice(["sgd", "sgd-momentum-wd", "adam", "rmsprop"]))
    eager, twin = _World(steps, optimizer), _World(steps, optimizer)
    compiled = cr.compile(twin)
    n = 3
    for _ in range(8):
        if rng.random() < 0.2:
            n = 5 - n
        values = rng.normal(size=(2, n))
        alias = rng.random() < 0.3
        c = float(rng.choice([0.5, -0.0, 0.0, 2.0]))
        lr = float(rng.choice([0.1, 0.05]))
        for world in (eager, twin):
            world.opt.param_groups[0]["lr"] = lr
        args = []
        for _world in range(2):
            x = T(values[0])
            args.append((x, x if alias else T(values[1]), c))
        expected, error = _outcome(eager, *args[0])
        got, got_error = _outcome(compiled, *args[1])
        assert got_error == error, (steps, optimizer)
        if error is None:
            assert_same(got, expected)
        for world, (x, a, _) in ((twin, args[1]), (eager, args[0])):
            world.state = (world.w, world.w.grad, world.b, x, a)
        assert_same(twin.state, eager.state)
        assert versions(twin.state[:1] + twin.state[2:]) == versions(
            eager.state[:1] + eager.state[2:]
        )


def test_a_write_over_every_element_runs_eagerly_and_its_zeros_reach_the_grad():
    # The walk stops at the gradient known to be zero; the graph it leaves is whole, so the
    # engine's walk that follows gives the overwritten tensor its zeros.
    w = T([0.5, -1.0], requires_grad=True)

    def step(x):
        y = w * 1.0
        y[:] = x * 2.0
        cr.sum(y * y).backward()
        return y.detach()

    compiled = cr.compile(step)
    with pytest.warns(CompileWarning, match="a gradient known to be zero"):
        compiled(T([1.0, 2.0], requires_grad=True))
    np.testing.assert_array_equal(N(w.grad), [0.0, 0.0])
