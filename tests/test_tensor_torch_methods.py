"""Tensor's methods with PyTorch's names and keywords (`x.sum(dim=1, keepdim=True)`, `x.view`,
`x.size(0)`, `x.add_`, `x.new_zeros`): values against NumPy, PyTorch's documented behaviour
where it differs from NumPy's, and first and second derivatives against finite differences."""

import pickle

import numpy as np
import pytest

import chainrule as cr
from chainrule.autograd import gradcheck, gradgradcheck
from conftest import LIBRARY, N, T, skip_on
from helpers import assert_values

RNG = np.random.default_rng(0)
A = RNG.normal(size=(3, 4))
B3 = RNG.normal(size=(2, 3, 4))

# ----------------------------------------------------------------------------- sizes


def test_size_is_the_element_count_and_called_gives_the_shape_or_one_length():
    x = T(B3)
    assert x.size == 24 and isinstance(x.size, int)
    assert x.size() == (2, 3, 4)
    assert x.size(0) == 2 and x.size(-1) == 4
    assert x.numel() == 24 and x.dim() == 3
    assert x.element_size() == 8 and T(A, np.float32).element_size() == 4


def test_the_element_count_pickles_and_copies_as_a_plain_int():
    count = pickle.loads(pickle.dumps(T(B3).size))
    assert count == 24 and type(count) is int


def test_size_of_a_dimension_out_of_range_raises_index_error():
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range of"):
        T(A).size(2)
    with pytest.raises(IndexError, match="tensor has no dimensions"):
        T(1.0).size(0)


# ----------------------------------------------------------------------------- reductions


def test_reductions_take_dim_and_keepdim_and_numpys_spellings():
    x = T(A)
    assert_values(x.sum(1), A.sum(1))
    assert_values(x.sum(dim=(0, 1), keepdim=True), A.sum(keepdims=True))
    assert_values(x.sum(axis=0, keepdims=True), A.sum(0, keepdims=True))
    assert_values(x.mean(dim=[0]), A.mean(0))
    assert_values(x.prod(1, keepdim=True), A.prod(1, keepdims=True))
    assert_values(x.cumsum(1), A.cumsum(1))
    assert_values(x.amax(1), A.max(1))
    assert_values(x.amin(), A.min())
    assert_values(x.argmax(), np.argmax(A))
    assert_values(x.argmin(dim=0, keepdim=True), np.argmin(A, 0)[None])
    assert_values((x > 0).all(1), (A > 0).all(1))
    assert_values((x > 0).any(), (A > 0).any())
    with pytest.raises(TypeError, match="both 'dim' and its alias 'axis'"):
        x.sum(0, axis=1)


def test_std_and_var_default_to_the_sample_estimate_as_pytorch():
    x = T(A)
    assert_values(x.std(), A.std(ddof=1))
    assert_values(x.var(1), A.var(1, ddof=1))
    assert_values(x.var(0, False), A.var(0))
    assert_values(x.std(False), A.std())
    assert_values(x.std(dim=1, correction=0, keepdim=True), A.std(1, keepdims=True))
    with pytest.raises(TypeError, match="both 'unbiased' and 'correction'"):
        x.var(0, True, correction=1)


def test_norm_of_elements_along_dims_and_nuclear():
    x = T(A)
    assert_values(x.norm(), np.linalg.norm(A))
    assert_values(x.norm(1, dim=1), np.abs(A).sum(1))
    assert_values(
        x.norm(p=3, dim=0, keepdim=True), (np.abs(A) ** 3).sum(0, keepdims=True) ** (1 / 3)
    )
    assert_values(x.norm("nuc", dim=(0, 1)), np.linalg.norm(A, "nuc"), rtol=1e-10)


def test_max_along_a_dim_gives_values_and_indices_and_the_gradient_goes_to_the_index():
    values = np.array([[1.0, 3.0, 3.0], [2.0, 0.0, -1.0]])
    x = T(values, requires_grad=True)
    out = x.max(1)
    assert_values(out.values, [3.0, 2.0])
    assert_values(out.indices, [1, 0])
    values_, indices = x.min(dim=0, keepdim=True)
    assert_values(values_, [[1.0, 0.0, -1.0]])
    assert_values(indices, [[0, 1, 1]])
    out.values.sum().backward()
    # The first maximum of a tie gets it all (PyTorch's choice on CPU); x.max() shares it.
    assert_values(x.grad, [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]])
    x.grad = None
    x.max().backward()
    assert_values(x.grad, [[0.0, 0.5, 0.5], [0.0, 0.0, 0.0]])


def test_max_with_a_tensor_is_the_elementwise_maximum():
    x = T(A)
    assert_values(x.max(T(0.0)), np.maximum(A, 0.0))
    assert_values(x.min(T(A[::-1].copy())), np.minimum(A, A[::-1]))


# ----------------------------------------------------------------------------- shapes


def test_view_reshape_flatten_and_their_errors():
    x = T(B3)
    assert x.view(6, -1).shape == (6, 4) and x.view((4, 6)).shape == (4, 6)
    assert x.reshape(-1).shape == (24,) and x.reshape(4, 6).shape == (4, 6)
    assert x.flatten().shape == (24,)
    assert x.flatten(1).shape == (2, 12) and x.flatten(0, 1).shape == (6, 4)
    assert T(2.0).flatten().shape == (1,)
    with pytest.raises(NotImplementedError, match="view\\(dtype\\)"):
        x.view(cr.float32)
    with pytest.raises(RuntimeError, match="start_dim cannot come after end_dim"):
        x.flatten(2, 1)


def test_view_as_takes_the_other_tensors_shape():
    assert T(np.arange(12.0)).view_as(T(A)).shape == (3, 4)


def test_squeeze_keeps_a_named_dimension_that_is_not_of_size_one():
    x = T(np.zeros((2, 1, 3, 1)))
    assert x.squeeze().shape == (2, 3)
    assert x.squeeze(1).shape == (2, 3, 1)
    assert x.squeeze(0).shape == (2, 1, 3, 1)
    assert x.squeeze((1, -1)).shape == (2, 3)
    assert x.unsqueeze(0).shape == (1, 2, 1, 3, 1)
    assert x.unsqueeze(-1).shape == (2, 1, 3, 1, 1)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.unsqueeze(6)


def test_permute_transpose_t_contiguous():
    x = T(B3)
    assert_values(x.permute(2, 0, 1), B3.transpose(2, 0, 1))
    assert_values(x.permute((1, 2, 0)), B3.transpose(1, 2, 0))
    assert_values(x.transpose(0, -1), B3.swapaxes(0, -1))
    assert_values(T(A).t(), A.T)
    assert T(A[0]).t().shape == (4,)
    assert x.contiguous() is x
    with pytest.raises(RuntimeError, match=r"t\(\) expects a tensor with <= 2 dimensions"):
        x.t()


def test_expand_repeat_chunk_split():
    row = T(A[:1])
    assert_values(row.expand(3, -1), np.broadcast_to(A[:1], (3, 4)))
    assert_values(row.expand(2, 3, 4), np.broadcast_to(A[:1], (2, 3, 4)))
    assert_values(row.expand_as(T(A)), np.broadcast_to(A[:1], (3, 4)))
    assert_values(T(A).repeat(2, 1, 2), np.tile(A, (2, 1, 2)))
    with pytest.raises(RuntimeError, match="repeat dims can not be smaller"):
        T(A).repeat(2)
    x = T(np.arange(5.0))
    assert [N(c).tolist() for c in x.chunk(3)] == [[0.0, 1.0], [2.0, 3.0], [4.0]]
    assert [c.shape for c in T(A).chunk(4, dim=1)] == [(3, 1)] * 4
    assert [N(c).tolist() for c in x.split(2)] == [[0.0, 1.0], [2.0, 3.0], [4.0]]
    assert [c.shape for c in T(A).split([1, 3], dim=1)] == [(3, 1), (3, 3)]
    with pytest.raises(RuntimeError, match="split_with_sizes expects split_sizes to sum"):
        x.split([1, 2])


def test_unbind_gives_the_slices_along_a_dim_as_views():
    parts = T(B3).unbind(2)
    assert len(parts) == 4
    for i, part in enumerate(parts):
        assert_values(part, B3[:, :, i])
    assert [N(p).tolist() for p in cr.unbind(T(A[:, :1]), dim=-1)] == [A[:, 0].tolist()]
    x = T(np.zeros((2, 3)))
    x.unbind()[1][...] = 5.0  # a view: the write reaches x
    np.testing.assert_array_equal(N(x), [[0.0, 0.0, 0.0], [5.0, 5.0, 5.0]])


def test_unbind_of_an_empty_dim_is_an_empty_tuple_and_a_bad_dim_raises_index_error():
    assert T(np.zeros((2, 0))).unbind(1) == ()
    assert cr.unstack(T(np.zeros((0, 3)))) == ()
    with pytest.raises(IndexError, match="Dimension out of range"):
        T(A).unbind(2)
    with pytest.raises(IndexError, match="tensor has no dimensions"):
        T(1.0).unbind()


def test_unbind_derivatives_in_both_modes():
    def fn(x):
        a, b, c = cr.unbind(x, 0)
        return a * b + c**2

    x = T(A, requires_grad=True)
    assert gradcheck(fn, (x,), eps=1e-6, check_forward_ad=True)
    assert gradgradcheck(fn, (x,), eps=1e-6, check_fwd_over_rev=True)


def test_gather_picks_along_a_dim_with_an_index_smaller_in_the_others():
    x = T(A)
    index = T(np.array([[0, 3], [1, 1]]))
    expected = np.take_along_axis(A[:2, :], np.array([[0, 3], [1, 1]]), axis=1)
    assert_values(x.gather(1, index), expected)
    assert_values(x.gather(0, T(np.array([[2, 0, 1, 0]]))), [[A[2, 0], A[0, 1], A[1, 2], A[0, 3]]])
    with pytest.raises(RuntimeError, match="same number of dimensions"):
        x.gather(0, T(np.array([0])))


# ----------------------------------------------------------------------------- elementwise


def test_elementwise_methods_match_numpy():
    x, p = T(A), T(np.abs(A) + 0.5)
    assert_values(x.exp(), np.exp(A))
    assert_values(p.log(), np.log(np.abs(A) + 0.5))
    assert_values(x.sin(), np.sin(A))
    assert_values(x.cos(), np.cos(A))
    assert_values(x.tanh(), np.tanh(A))
    assert_values(p.sqrt(), np.sqrt(np.abs(A) + 0.5))
    assert_values(x.sigmoid(), 1 / (1 + np.exp(-A)))
    assert_values(x.relu(), np.maximum(A, 0))
    assert_values(x.abs(), np.abs(A))
    assert_values(p.pow(1.5), (np.abs(A) + 0.5) ** 1.5)
    assert_values(x.add(p, alpha=2), A + 2 * (np.abs(A) + 0.5))
    assert_values(x.sub(1.0), A - 1)
    assert_values(x.mul(p), A * (np.abs(A) + 0.5))
    assert_values(x.div(p), A / (np.abs(A) + 0.5))
    assert_values(x.clamp(-0.5, 0.5), np.clip(A, -0.5, 0.5))
    assert_values(x.clamp(min=0.0), np.maximum(A, 0.0))
    assert_values(x.masked_fill(x > 0, -1.0), np.where(A > 0, -1.0, A))
    assert_values(x.where(x > 0, 0.0), np.where(A > 0, A, 0.0))
    with pytest.raises(RuntimeError, match="At least one of 'min' or 'max'"):
        x.clamp()


def test_matrix_products_check_their_ranks():
    x, y = T(A), T(A.T.copy())
    assert_values(x.mm(y), A @ A.T)
    assert_values(x.matmul(y), A @ A.T)
    assert_values(T(B3).bmm(T(B3.transpose(0, 2, 1).copy())), B3 @ B3.transpose(0, 2, 1))
    assert_values(T(A[0]).dot(T(A[1])), A[0] @ A[1])
    with pytest.raises(RuntimeError, match="mm: expected 2D"):
        T(B3).mm(y)
    with pytest.raises(RuntimeError, match="bmm: expected 3D"):
        x.bmm(y)
    # x.dot is NumPy's (PyTorch's on 1-D tensors, where both agree): of matrices, their product.
    assert_values(x.dot(y), A @ A.T)


def test_masked_fill_keeps_the_dtype():
    x = T(A, np.float32)
    assert x.masked_fill(x > 0, 2.0).dtype == cr.float32


# ----------------------------------------------------------------------------- gradients

# name -> a function of one float64 tensor of A's shape (3, 4), through the method
GRADIENT_SAMPLES = {
    "sum": lambda x: x.sum(dim=1, keepdim=True),
    "mean": lambda x: x.mean(0),
    "prod": lambda x: x.prod(1),
    "std": lambda x: x.std(1),
    "var": lambda x: x.var(),
    "max_dim": lambda x: x.max(1).values,
    "min_dim": lambda x: x.min(0, keepdim=True)[0],
    "amax": lambda x: x.amax(0),
    "cumsum": lambda x: x.cumsum(1),
    "norm": lambda x: x.norm(dim=1),
    "norm_p": lambda x: x.norm(3, dim=0),
    "view": lambda x: x.view(2, 6) * T(np.arange(12.0).reshape(2, 6)),
    "flatten": lambda x: x.flatten() ** 2,
    "squeeze_unsqueeze": lambda x: x.unsqueeze(1).squeeze() ** 2,
    "permute": lambda x: x.permute(1, 0) * T(np.arange(12.0).reshape(4, 3)),
    "transpose_t": lambda x: x.transpose(0, 1).t() ** 2,
    "expand": lambda x: x[:1].expand(3, -1) * x,
    "repeat": lambda x: x.repeat(2, 1) ** 2,
    "chunk": lambda x: x.chunk(2, 1)[1] ** 2,
    "split": lambda x: x.split([1, 2])[1] ** 3,
    "unbind": lambda x: x.unbind(1)[2] * x.unbind(1)[0],
    "gather": lambda x: x.gather(1, T(np.array([[0, 3], [1, 1], [2, 0]]))) ** 2,
    "masked_fill": lambda x: x.masked_fill(T(A > 0), 1.0) ** 2,
    "where": lambda x: x.where(T(A > 0), x**2),
    "clamp": lambda x: x.clamp(-0.5, 0.5) * x,
    "exp_log_sqrt": lambda x: (x.exp() + 1).log().sqrt(),
    "sin_cos_tanh": lambda x: x.sin() * x.cos() + x.tanh(),
    "sigmoid_pow": lambda x: x.sigmoid().pow(3),
    "add_sub_mul_div": lambda x: x.add(x, alpha=2).sub(x**2).mul(x).div(x.exp()),
    "mm": lambda x: x.mm(x.t()),
    "dot": lambda x: x[0].dot(x[1]),
    "clone": lambda x: x.clone() ** 2,
    "to": lambda x: x.to(cr.float64, copy=True) ** 2,
}


@pytest.mark.parametrize("name", sorted(GRADIENT_SAMPLES))
def test_method_first_and_second_derivatives(name):
    x = T(A, requires_grad=True)
    fn = GRADIENT_SAMPLES[name]
    assert gradcheck(fn, (x,), eps=1e-6)
    assert gradgradcheck(fn, (x,), eps=1e-6)


def test_clone_is_a_recorded_copy():
    x = T(A, requires_grad=True)
    y = x.clone()
    assert y is not x and y.requires_grad and not y.is_leaf
    (y * 2).sum().backward()
    assert_values(x.grad, np.full(A.shape, 2.0))


# ----------------------------------------------------------------------------- dtypes, devices


def test_to_converts_dtype_and_returns_itself_when_nothing_changes():
    x = T(A)
    assert x.to(cr.float32).dtype == cr.float32
    assert x.to(x) is x and x.to(x.device) is x and x.to(dtype=cr.float64) is x
    assert x.to(T(A, np.float32)).dtype == cr.float32
    assert x.to(x.device, cr.float32).dtype == cr.float32
    copied = x.to(cr.float64, copy=True)
    assert copied is not x
    assert_values(copied, A)
    with pytest.raises(TypeError, match="unexpected keyword"):
        x.to(cr.float32, memory_format=None)


def test_dtype_shorthands():
    x = T(np.array([1.5, -2.0]))
    assert x.float().dtype == cr.float32
    assert x.double() is x
    assert x.long().dtype == cr.int64 and N(x.long()).tolist() == [1, -2]
    assert x.int().dtype == cr.int32
    assert x.bool().dtype == cr.bool
    if LIBRARY == "array_api_strict":  # the standard has no float16: neither has its library
        with pytest.raises(TypeError, match="array_api_strict has no dtype float16"):
            x.half()
    else:
        assert x.half().dtype == cr.float16 and N(x.half()).tolist() == [1.5, -2.0]


def test_new_tensors_take_this_tensors_library_and_dtype():
    x = T(A, np.float32)
    zeros = x.new_zeros(2, 3)
    assert zeros.shape == (2, 3) and zeros.dtype == cr.float32 and not zeros.requires_grad
    assert isinstance(zeros._data, type(x._data))
    assert_values(x.new_ones((2,)), [1.0, 1.0])
    assert x.new_ones(2, dtype=cr.float64).dtype == cr.float64
    full = x.new_full((2, 2), 7.0, requires_grad=True)
    assert full.requires_grad and full.is_leaf and N(full.detach()).tolist() == [[7.0] * 2] * 2
    made = x.new_tensor([1, 2])
    assert made.dtype == cr.float32 and N(made).tolist() == [1.0, 2.0]
    source = T(A, requires_grad=True)
    copy = x.new_tensor(source)
    assert copy.is_leaf and not copy.requires_grad and copy.dtype == cr.float32


# ----------------------------------------------------------------------------- in place


def test_arithmetic_in_place_methods_write_the_tensor_itself():
    x = T(np.ones(3))
    assert x.add_(T([1.0, 2.0, 3.0]), alpha=2) is x
    assert_values(x, [3.0, 5.0, 7.0])
    x.sub_(1.0).mul_(2.0).div_(T([2.0, 4.0, 6.0]))
    assert_values(x, [2.0, 2.0, 2.0])
    assert x._version == 4


def test_in_place_methods_on_a_leaf_that_requires_grad_raise_unless_under_no_grad():
    w = T(A, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w.add_(1.0)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        w.zero_()
    with cr.no_grad():
        w.mul_(0.0).add_(T(np.ones(A.shape)), alpha=0.5)
    assert w.is_leaf and w.requires_grad
    assert_values(w, np.full(A.shape, 0.5))


def test_in_place_methods_on_a_result_are_recorded():
    x = T(A, requires_grad=True)
    y = x * 1.0
    y.mul_(3.0).add_(x, alpha=2.0)
    y.sum().backward()
    assert_values(x.grad, np.full(A.shape, 5.0))


def test_zero_fill_and_clamp_in_place():
    x = T(A)
    assert_values(x.clamp_(-0.1, 0.1), np.clip(A, -0.1, 0.1))
    assert_values(x.fill_(2.5), np.full(A.shape, 2.5))
    assert_values(x.zero_(), np.zeros(A.shape))


def test_copy_writes_a_broadcast_source_and_the_gradient_flows_to_it():
    src = T(A[0], requires_grad=True)
    x = T(np.zeros((3, 4)))
    x.copy_(src)
    assert_values(x, np.broadcast_to(A[0], (3, 4)))
    (x * T(np.arange(12.0).reshape(3, 4))).sum().backward()
    assert_values(src.grad, np.arange(12.0).reshape(3, 4).sum(0))


def test_fill_of_a_result_sends_no_gradient_to_its_old_value():
    x = T(A, requires_grad=True)
    y = x * 2.0
    y.fill_(1.0)
    (y * x).sum().backward()
    assert_values(x.grad, np.ones(A.shape))


@skip_on("jax", reason="the draw is compared against a generator of the same seed, not values")
def test_normal_and_uniform_in_place_draw_from_a_seeded_generator():
    with cr.no_grad():
        w = T(np.zeros((200, 50)), requires_grad=True)
        w.normal_(1.0, 0.5, generator=cr.random.Generator(3))
        drawn = N(w.detach()).copy()
        w.normal_(1.0, 0.5, generator=cr.random.Generator(3))
    np.testing.assert_array_equal(N(w.detach()), drawn)
    assert abs(drawn.mean() - 1.0) < 0.02 and abs(drawn.std() - 0.5) < 0.02
    u = T(np.zeros(1000))
    u.uniform_(-2.0, 3.0, generator=cr.random.Generator(1))
    values = N(u)
    assert values.min() >= -2.0 and values.max() < 3.0 and values.std() > 1.0
    assert w.requires_grad and w.is_leaf


def test_methods_keep_the_backend_library():
    x = T(A)
    for out in (x.view(-1), x.sum(1), x.clone(), x.new_zeros(2), x.float(), x.max(1).values):
        assert cr._backend.library(cr._backend.namespace(out._data)) == LIBRARY


def test_narrow_is_a_view_of_length_elements_from_start_along_dim():
    x = T(B3.copy())
    part = x.narrow(2, 1, 2)
    assert_values(part, B3[:, :, 1:3])
    assert_values(x.narrow(-1, -2, 2), B3[..., 2:])  # a negative start counts from the end
    assert x.narrow(0, 2, 0).shape == (0, 3, 4)
    if LIBRARY == "numpy":  # memory shared with the tensor, as a view's
        part[0, 0, 0] = 7.0
        assert N(x)[0, 0, 1] == 7.0
    check = lambda t: t.narrow(1, 1, 2) * t.narrow(1, 0, 2)  # noqa: E731
    assert gradcheck(check, (T(A, requires_grad=True),))
    assert gradgradcheck(check, (T(A, requires_grad=True),))


def test_narrow_out_of_range_raises_pytorchs_errors():
    x = T(np.arange(6.0))
    with pytest.raises(
        RuntimeError, match=r"start \(5\) \+ length \(2\) exceeds dimension size \(6\)"
    ):
        x.narrow(0, 5, 2)
    with pytest.raises(
        IndexError, match=r"start out of range \(expected to be in range of \[-6, 6\], but got 7\)"
    ):
        x.narrow(0, 7, 0)
    with pytest.raises(IndexError, match="Dimension out of range"):
        x.narrow(1, 0, 1)


def test_type_and_type_as_cast_as_pytorchs():
    # language_translation's `mask.type(torch.bool)` and `.type_as(src)` raised AttributeError.
    x = T(np.array([[0.0, -np.inf], [1.5, 0.0]]))
    assert N(x.type(cr.bool)).tolist() == [[False, True], [True, False]]
    assert x.type(cr.float64) is x
    assert T(A).type_as(T(np.arange(2))).dtype == cr.int64
    g = T(A, requires_grad=True)
    assert gradcheck(lambda t: t.type(cr.float64) * t.type_as(t), (g,))
    with pytest.raises(NotImplementedError, match="takes a dtype here"):
        x.type()
