"""PyTorch's spellings of creation and randomness at the top level: `zeros(2, 3)`, `rand`,
`randn`, `randint`, `randperm`, `manual_seed`, `from_numpy`, the default floating dtype, and
`Tensor.flip(dims)`."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import chainrule as cr
from conftest import BACKEND, N, T
from helpers import arrays, axes_of, check_grads, leaf


@pytest.fixture
def float32_default():
    cr.set_default_dtype(cr.float32)
    yield
    cr.set_default_dtype(cr.float64)


# ----------------------------------------------------------------------------- flip


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_flip_method_reverses_the_dims_given_and_differentiates(data):
    a = data.draw(arrays(data.draw(st.sampled_from([(3,), (2, 3), (2, 1, 3)]))))
    dims = data.draw(axes_of(a.ndim, min_size=1))
    dims = dims if isinstance(dims, tuple) else (dims,)
    np.testing.assert_array_equal(N(T(a).flip(*dims)), np.flip(a, dims))
    np.testing.assert_array_equal(N(T(a).flip(dims=list(dims))), np.flip(a, dims))
    check_grads(lambda x: x.flip(dims), leaf(a))


def test_flip_method_of_no_dims_is_a_copy_of_the_same_values():
    x = T([[1.0, 2.0], [3.0, 4.0]])
    np.testing.assert_array_equal(N(x.flip(())), N(x))


def test_flip_method_refuses_what_pytorch_refuses():
    x = T([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError, match='missing 1 required positional arguments: "dims"'):
        x.flip()
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        x.flip(0, -2)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.flip(2)


# ----------------------------------------------------------------------------- varargs sizes


@pytest.mark.parametrize("make", [cr.zeros, cr.ones, cr.empty])
def test_creation_takes_sizes_as_varargs_or_one_tuple(make):
    assert make(2, 3).shape == make((2, 3)).shape == (2, 3)
    assert make(4).shape == (4,)
    assert make(2, 3, dtype=cr.float32).dtype == cr.float32
    assert make(shape=(1, 2)).shape == (1, 2)


@pytest.mark.parametrize("make", [cr.zeros, cr.ones, cr.empty])
def test_creation_takes_pytorchs_size_keyword(make):
    # gat's `torch.empty(size=(in_features, n_hidden * n_heads))` raised TypeError.
    assert make(size=(2, 3)).shape == make(size=[2, 3]).shape == (2, 3)
    assert make(size=(2,), dtype=cr.float32).dtype == cr.float32
    with pytest.raises(TypeError, match="got multiple values for argument 'size'"):
        make((2,), size=(2,))
    with pytest.raises(TypeError, match='missing 1 required positional arguments: "size"'):
        make()


@pytest.mark.parametrize("make", [cr.zeros, cr.ones, cr.empty])
def test_creation_takes_requires_grad(make):
    # `torch.zeros(n, requires_grad=True)` (a leaf made to be learned) raised TypeError.
    x = make(2, 3, requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    assert not make(size=(2,)).requires_grad
    with pytest.raises(RuntimeError, match="only Tensors of floating point and complex dtype"):
        make(2, dtype=cr.int64, requires_grad=True)


MADE = {
    "full": lambda **kw: cr.full((2, 3), 1.5, **kw),
    "full of a 0-d tensor": lambda **kw: cr.full((2, 3), cr.asarray(1.5), **kw),
    "arange": lambda **kw: cr.arange(0.0, 3.0, 1.0, **kw),
    "linspace": lambda **kw: cr.linspace(0.0, 1.0, 5, **kw),
    "eye": lambda **kw: cr.eye(3, **kw),
    "zeros_like": lambda **kw: cr.zeros_like(T(np.ones((2, 3))), **kw),
    "ones_like": lambda **kw: cr.ones_like(T(np.ones((2, 3))), **kw),
    "empty_like": lambda **kw: cr.empty_like(T(np.ones((2, 3))), **kw),
    "full_like": lambda **kw: cr.full_like(T(np.ones((2, 3))), 2.0, **kw),
}


@pytest.mark.parametrize("name", sorted(MADE))
def test_every_creation_function_takes_requires_grad(name):
    # PyTorch's `torch.full(..., requires_grad=True)`, `torch.eye(n, requires_grad=True)`...
    # raised TypeError here (only zeros, ones, empty and the random ones took it).
    make = MADE[name]
    x = make(requires_grad=True)
    assert x.requires_grad and x.is_leaf and x.grad_fn is None
    assert not make().requires_grad
    (x * 2.0).sum().backward()
    np.testing.assert_array_equal(N(x.grad), np.full(tuple(x.shape), 2.0))
    with pytest.raises(RuntimeError, match="floating point and complex dtype can require"):
        make(dtype=cr.int64, requires_grad=True)


def test_creation_values_from_varargs_sizes():
    np.testing.assert_array_equal(N(cr.zeros(2, 3)), np.zeros((2, 3)))
    np.testing.assert_array_equal(N(cr.ones(1, 2)), np.ones((1, 2)))
    np.testing.assert_array_equal(N(cr.full((2, 3), 7.0)), np.full((2, 3), 7.0))


def test_creation_refuses_a_tuple_mixed_with_more_sizes():
    with pytest.raises(TypeError, match="one tuple of ints or several ints"):
        cr.zeros((2, 3), 4)


# ----------------------------------------------------------------------------- randomness


def test_rand_randn_take_varargs_sizes_and_draw_as_chainrule_random():
    cr.manual_seed(3)
    a = cr.rand(2, 3)
    cr.random.manual_seed(3)
    b = cr.random.rand((2, 3))
    assert a.shape == (2, 3) and a.dtype == cr.float64
    np.testing.assert_array_equal(N(a), N(b))
    cr.manual_seed(3)
    c = cr.randn(2, 3, requires_grad=True)
    cr.random.manual_seed(3)
    np.testing.assert_array_equal(N(c.detach()), N(cr.random.randn(2, 3)))
    assert c.requires_grad and c.is_leaf


def test_rand_randn_take_pytorchs_size_keyword():
    assert cr.rand(size=(2, 3)).shape == (2, 3)
    assert cr.randn(size=(4,)).shape == (4,)
    with pytest.raises(TypeError, match="both positionally and as size="):
        cr.rand(2, size=(2,))


def test_manual_seed_repeats_the_draws_and_returns_the_default_generator():
    assert cr.manual_seed(11) is cr.random.default_generator
    first = N(cr.randn(5))
    cr.manual_seed(11)
    np.testing.assert_array_equal(N(cr.randn(5)), first)


def test_rand_with_a_generator_leaves_the_default_one_alone():
    g = cr.random.Generator(5)
    cr.manual_seed(0)
    expected = N(cr.rand(3))
    cr.manual_seed(0)
    drawn = cr.rand(4, generator=g)
    np.testing.assert_array_equal(N(cr.rand(3)), expected)
    np.testing.assert_array_equal(N(drawn), N(cr.random.Generator(5).rand(4)))


def test_randint_takes_pytorchs_high_size_and_low_high_size_forms():
    cr.manual_seed(1)
    a = cr.randint(3, 7, (1000,))
    assert a.dtype == cr.int64 and a.shape == (1000,)
    assert set(N(a).tolist()) == {3, 4, 5, 6}
    b = cr.randint(4, (2, 5))
    assert b.shape == (2, 5) and N(b).min() >= 0 and N(b).max() < 4
    c = cr.randint(0, 2, size=(3,), dtype=cr.int32)
    assert c.dtype == cr.int32 and c.shape == (3,)


def test_randint_refuses_a_missing_or_bare_int_size():
    with pytest.raises(TypeError, match="size"):
        cr.randint(5)
    with pytest.raises(TypeError, match="size must be a tuple of ints"):
        cr.randint(0, 5, 3)


def test_randperm_is_a_permutation_of_int64():
    cr.manual_seed(2)
    p = cr.randperm(10)
    assert p.dtype == cr.int64
    assert sorted(N(p).tolist()) == list(range(10))


def test_rand_and_randn_like_take_the_inputs_shape_dtype_and_library():
    x = T(np.zeros((2, 3), np.float32))
    for like, draw in ((cr.rand_like, cr.rand), (cr.randn_like, cr.randn)):
        cr.manual_seed(4)
        a = like(x)
        cr.manual_seed(4)
        b = draw(2, 3, dtype=cr.float32)
        assert a.shape == (2, 3) and a.dtype == cr.float32 and not a.requires_grad
        assert type(N(a)) is np.ndarray and type(a._data) is type(x._data)
        np.testing.assert_array_equal(N(a), N(b))
        c = like(x, dtype=cr.float64, generator=cr.random.Generator(5), requires_grad=True)
        assert c.dtype == cr.float64 and c.requires_grad and c.is_leaf
        np.testing.assert_array_equal(
            N(c.detach()), N(draw(2, 3, generator=cr.random.Generator(5)))
        )
    assert cr.rand_like(T(1.0)).shape == ()
    with pytest.raises(TypeError, match="floating"):
        cr.randn_like(T(np.arange(3)))


def test_complex_rand_and_randn_like_draw_the_parts_apart():
    z = T(np.zeros(4000, np.complex128))
    cr.manual_seed(6)
    u = N(cr.rand_like(z))
    assert u.dtype == np.complex128 and 0 <= u.real.min() and u.imag.max() < 1
    assert abs(u.real.mean() - 0.5) < 0.03 and abs(u.imag.mean() - 0.5) < 0.03
    n = N(cr.randn_like(z))
    assert abs(np.mean(np.abs(n) ** 2) - 1) < 0.1 and abs(n.real.var() - 0.5) < 0.05


def test_randint_like_takes_high_or_low_high_in_the_inputs_dtype():
    x = T(np.zeros((500,), np.float32))
    cr.manual_seed(1)
    a = cr.randint_like(x, 3, 7)
    assert a.dtype == cr.float32 and a.shape == (500,)
    assert set(N(a).tolist()) == {3.0, 4.0, 5.0, 6.0}
    b = cr.randint_like(x, 2, dtype=cr.int64)
    assert b.dtype == cr.int64 and set(N(b).tolist()) == {0, 1}
    with pytest.raises(RuntimeError, match="'from' to be less than 'to'"):
        cr.randint_like(x, 5, 3)
    with pytest.raises(TypeError, match="takes"):
        cr.randint_like(x)


def test_bernoulli_draws_with_the_inputs_probabilities_or_p():
    p = T(np.repeat([0.0, 1.0, 0.25], 2000).reshape(3, 2000), requires_grad=True)
    cr.manual_seed(2)
    b = cr.bernoulli(p)
    assert b.dtype == cr.float64 and b.shape == (3, 2000)
    d = N(b)
    assert set(np.unique(d).tolist()) <= {0.0, 1.0}
    assert d[0].sum() == 0 and d[1].sum() == 2000 and abs(d[2].mean() - 0.25) < 0.03
    q = N(cr.bernoulli(T(np.zeros(2000, np.float32)), 0.75, generator=cr.random.Generator(1)))
    assert q.dtype == np.float32 and abs(q.mean() - 0.75) < 0.03


def test_bernoulli_of_probabilities_that_require_grad_has_a_zero_gradient_as_pytorchs():
    # PyTorch 2.13: torch.bernoulli(p) requires grad (BernoulliBackward0), its gradient and
    # forward tangent are zeros; with a number p the result has no gradient here (PyTorch's
    # requires grad, but its backward raises "derivative for aten::bernoulli is not
    # implemented").
    p = leaf([0.2, 0.7, 0.5])
    b = cr.bernoulli(p)
    assert b.requires_grad and b.grad_fn.name() == "BernoulliBackward0"
    (g,) = cr.autograd.grad(cr.sum(b * T([1.0, 2.0, 3.0])), p)
    assert N(g).tolist() == [0.0, 0.0, 0.0]
    _, tangent = cr.func.jvp(cr.bernoulli, (T([0.2, 0.7]),), (T([1.0, 1.0]),))
    assert N(tangent).tolist() == [0.0, 0.0]
    assert not cr.bernoulli(p, 0.5).requires_grad
    with cr.no_grad():
        assert not cr.bernoulli(p).requires_grad


def test_bernoulli_refuses_probabilities_out_of_range_and_integers():
    with pytest.raises(RuntimeError, match="p_in >= 0 && p_in <= 1"):
        cr.bernoulli(T([0.5, 1.5]))
    with pytest.raises(RuntimeError, match="p_in >= 0 && p_in <= 1"):
        cr.bernoulli(T([np.nan]))
    with pytest.raises(RuntimeError, match="expects p to be in"):
        cr.bernoulli(T([0.5]), -0.1)
    with pytest.raises(TypeError, match="real floating"):
        cr.bernoulli(T([0, 1]))


def test_bernoulli_and_randn_like_under_vmap_draw_per_sample_and_check_every_sample():
    draw = cr.func.vmap(lambda r: cr.bernoulli(r) + cr.randn_like(r), randomness="different")
    out = N(draw(T(np.zeros((3, 200)))))
    assert out.shape == (3, 200) and len({tuple(row) for row in out}) == 3
    with pytest.raises(RuntimeError, match="p_in >= 0 && p_in <= 1"):
        draw(T(np.array([[0.5], [2.0]])))


# ----------------------------------------------------------------------------- from_numpy


def test_from_numpy_shares_memory_both_ways_and_keeps_the_dtype():
    a = np.arange(4, dtype=np.float32)
    t = cr.from_numpy(a)
    assert t.dtype == cr.float32
    a[0] = 10.0
    assert t[0].item() == 10.0
    t[1] = -1.0
    assert a[1] == -1.0


def test_from_numpy_refuses_what_is_no_ndarray():
    with pytest.raises(TypeError, match=r"expected np.ndarray \(got list\)"):
        cr.from_numpy([1.0, 2.0])


# ----------------------------------------------------------------------------- default dtype


def test_default_dtype_is_float64():
    assert cr.get_default_dtype() == cr.float64
    assert cr.tensor(1.0).dtype == cr.float64
    assert cr.nn.Linear(2, 3).weight.dtype == cr.float64


def test_float32_default_reaches_python_floats_creation_random_and_layers(float32_default):
    assert cr.get_default_dtype() == cr.float32
    assert cr.tensor(1.5).dtype == cr.float32
    assert cr.asarray([1.0, 2.0]).dtype == cr.float32
    assert cr.tensor(1j).dtype == cr.complex64
    assert cr.zeros(2, 3).dtype == cr.ones(2).dtype == cr.empty(1).dtype == cr.float32
    assert cr.eye(2).dtype == cr.linspace(0, 1, 3).dtype == cr.arange(0.0, 1.0).dtype
    assert cr.eye(2).dtype == cr.float32
    assert cr.full((2,), 0.5).dtype == cr.float32
    assert cr.rand(2).dtype == cr.randn(2).dtype == cr.float32
    for module in (cr.nn.Linear(2, 3), cr.nn.LayerNorm(3), cr.nn.Embedding(4, 2)):
        assert {p.dtype for p in module.parameters()} == {cr.float32}


def test_float32_default_leaves_integers_arrays_and_explicit_dtypes(float32_default):
    assert cr.tensor([1, 2]).dtype == cr.int64
    assert cr.arange(3).dtype == cr.int64
    assert cr.full((2,), 1).dtype == cr.int64
    assert cr.zeros(2, dtype=cr.float64).dtype == cr.float64
    assert cr.tensor(1.0, dtype=cr.float64).dtype == cr.float64
    assert cr.asarray(BACKEND.asarray([1.0, 2.0], dtype=BACKEND.float64)).dtype == cr.float64
    assert cr.from_numpy(np.zeros(2)).dtype == cr.float64


def test_float32_default_keeps_a_tensor_dtype_in_arithmetic_with_floats(float32_default):
    x = cr.tensor([1.0, 2.0], dtype=cr.float64)
    assert (x * 2.5).dtype == cr.float64


def test_set_default_dtype_refuses_non_floating_dtypes():
    with pytest.raises(TypeError, match="only floating-point types are supported"):
        cr.set_default_dtype(cr.int64)
    assert cr.get_default_dtype() == cr.float64


def test_tensor_of_a_list_of_tensors_holds_their_values():
    # actor_critic's `torch.tensor([R])`, R an element of a tensor: on PyTorch's storage
    # chainrule raised TypeError (torch.asarray asked the 0-d tensor its len()).
    r = list(cr.asarray([1.5, 2.5]))
    np.testing.assert_array_equal(N(cr.tensor([r[1]])), [2.5])
    nested = cr.tensor([[r[0], 3.0], (r[1], 4.0)])
    np.testing.assert_array_equal(N(nested), [[1.5, 3.0], [2.5, 4.0]])
    assert nested.dtype == cr.float64 and not nested.requires_grad
