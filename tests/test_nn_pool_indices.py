"""Max pooling's indices (return_indices and the *_with_indices names, 1-D to 3-D and
adaptive), max_unpool1d/2d/3d and their layers, and scale_grad_by_freq of embedding and
embedding_bag: values and indices against literals recorded from PyTorch 2.13 (ties, NaN,
windows of -inf, padding, dilation, ceil_mode), unpooling round trips, gradients by finite
differences to second order, PyTorch's errors and reprs."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import grad, gradcheck
from conftest import N, T, examples
from helpers import assert_values, check_grads, leaf

nan, inf = math.nan, math.inf

# Inputs with ties, NaN (x1's second channel) and windows of -inf alone (x2's corner).
X = {
    "x1": np.array([[[2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 2.0], [1.0, 0.0, nan, 0.0, 1.0, nan, 1.0]]]),
    "x2": np.array(
        [
            [
                [
                    [-inf, -inf, 2.0, 2.0, 0.0],
                    [-inf, -inf, 1.0, 3.0, 2.0],
                    [1.0, 1.0, 2.0, 2.0, 0.0],
                    [2.0, 3.0, 3.0, 3.0, 1.0],
                    [1.0, 2.0, 2.0, 2.0, 3.0],
                ]
            ]
        ]
    ),
    "x3": np.array(
        [
            [
                [
                    [[0.0, 2.0, 0.0, 0.0], [2.0, 2.0, 0.0, 0.0], [0.0, 0.0, 2.0, 1.0]],
                    [[1.0, 0.0, 1.0, 0.0], [2.0, 1.0, 0.0, 0.0], [2.0, 1.0, 1.0, 0.0]],
                    [[0.0, 1.0, 1.0, 1.0], [2.0, 2.0, 0.0, 1.0], [1.0, 0.0, 0.0, 1.0]],
                ]
            ]
        ]
    ),
}
# (pooling, input, options, PyTorch's output, PyTorch's indices)
POOL_CASES = [
    (
        "max_pool1d",
        "x1",
        {"kernel_size": 3, "stride": 2, "padding": 1},
        [[[2.0, 0.0, 2.0, 2.0], [1.0, nan, nan, nan]]],
        [[[0, 1, 5, 5], [0, 2, 5, 5]]],
    ),
    (
        "max_pool1d",
        "x1",
        {"kernel_size": 2, "dilation": 2, "ceil_mode": True},
        [[[2.0, 0.0, 2.0], [nan, nan, 1.0]]],
        [[[0, 2, 6], [2, 2, 4]]],
    ),
    (
        "max_pool2d",
        "x2",
        {"kernel_size": 2, "stride": 1},
        [
            [
                [
                    [-inf, 2.0, 3.0, 3.0],
                    [1.0, 2.0, 3.0, 3.0],
                    [3.0, 3.0, 3.0, 3.0],
                    [3.0, 3.0, 3.0, 3.0],
                ]
            ]
        ],
        [[[[0, 2, 8, 8], [10, 12, 8, 8], [16, 16, 17, 18], [16, 16, 17, 18]]]],
    ),
    (
        "max_pool2d",
        "x2",
        {"kernel_size": (3, 2), "stride": 2, "padding": 1, "ceil_mode": True},
        [[[[-inf, 2.0, 3.0], [2.0, 3.0, 3.0], [2.0, 3.0, 3.0]]]],
        [[[[0, 2, 8], [15, 16, 8], [15, 16, 18]]]],
    ),
    (
        "max_pool2d",
        "x2",
        {"kernel_size": 2, "stride": 2, "dilation": 2, "padding": 1},
        [[[[-inf, 3.0, 3.0], [3.0, 3.0, 3.0], [3.0, 3.0, 3.0]]]],
        [[[[6, 8, 8], [16, 8, 8], [16, 16, 18]]]],
    ),
    (
        "max_pool3d",
        "x3",
        {"kernel_size": 2, "stride": 1},
        [[[[[2.0, 2.0, 1.0], [2.0, 2.0, 2.0]], [[2.0, 2.0, 1.0], [2.0, 2.0, 1.0]]]]],
        [[[[[1, 1, 14], [4, 5, 10]], [[16, 29, 14], [16, 29, 22]]]]],
    ),
    (
        "max_pool3d",
        "x3",
        {"kernel_size": (2, 3, 2), "stride": 2, "padding": (1, 1, 0), "ceil_mode": True},
        [[[[[2.0, 0.0], [2.0, 2.0]], [[2.0, 1.0], [2.0, 1.0]]]]],
        [[[[[1, 2], [4, 10]], [[16, 14], [16, 22]]]]],
    ),
    (
        "adaptive_max_pool1d",
        "x1",
        {"output_size": 3},
        [[[2.0, 0.0, 2.0], [nan, nan, nan]]],
        [[[0, 2, 5], [2, 2, 5]]],
    ),
    (
        "adaptive_max_pool2d",
        "x2",
        {"output_size": (2, 3)},
        [[[[1.0, 3.0, 3.0], [3.0, 3.0, 3.0]]]],
        [[[[10, 8, 8], [16, 16, 18]]]],
    ),
    (
        "adaptive_max_pool2d",
        "x2",
        {"output_size": (4, None)},
        [
            [
                [
                    [-inf, -inf, 2.0, 3.0, 2.0],
                    [1.0, 1.0, 2.0, 3.0, 2.0],
                    [2.0, 3.0, 3.0, 3.0, 1.0],
                    [2.0, 3.0, 3.0, 3.0, 3.0],
                ]
            ]
        ],
        [[[[0, 1, 2, 8, 9], [10, 11, 12, 8, 9], [15, 16, 17, 18, 19], [15, 16, 17, 18, 24]]]],
    ),
]

# max_unpool2d of max_pool2d(x2, 2, stride=1) (PyTorch 2.13), with output_size given or not
_UNPOOLED_2D = [
    [
        [
            [-inf, 0.0, 2.0, 0.0, 0.0],
            [0.0, 0.0, 0.0, 3.0, 0.0],
            [1.0, 0.0, 2.0, 0.0, 0.0],
            [0.0, 3.0, 3.0, 3.0, 0.0],
            [0.0, 0.0, 0.0, 0.0, 0.0],
        ]
    ]
]

# (pooling, input, options, unpooling, output_size, PyTorch's unpooled maxima)
UNPOOL_CASES = [
    (
        "max_pool1d",
        "x1",
        {"kernel_size": 3, "stride": 2, "padding": 1},
        "max_unpool1d",
        None,
        [[[2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0], [1.0, 0.0, nan, 0.0, 0.0, nan, 0.0]]],
    ),
    (
        "max_pool1d",
        "x1",
        {"kernel_size": 3, "stride": 2, "padding": 1},
        "max_unpool1d",
        [7],
        [[[2.0, 0.0, 0.0, 0.0, 0.0, 2.0, 0.0], [1.0, 0.0, nan, 0.0, 0.0, nan, 0.0]]],
    ),
    (
        "max_pool2d",
        "x2",
        {"kernel_size": 2, "stride": 1},
        "max_unpool2d",
        None,
        _UNPOOLED_2D,
    ),
    (
        "max_pool2d",
        "x2",
        {"kernel_size": 2, "stride": 1},
        "max_unpool2d",
        [5, 5],
        _UNPOOLED_2D,
    ),
    (
        "max_pool3d",
        "x3",
        {"kernel_size": 2, "stride": 2},
        "max_unpool3d",
        None,
        [
            [
                [
                    [[0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
                    [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]],
                ]
            ]
        ],
    ),
    (
        "max_pool3d",
        "x3",
        {"kernel_size": 2, "stride": 2},
        "max_unpool3d",
        [3, 3, 4],
        [
            [
                [
                    [[0.0, 2.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
                    [[0.0, 0.0, 1.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
                    [[0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0]],
                ]
            ]
        ],
    ),
]


def _options(options):
    return {k: v for k, v in options.items() if k != "output_size"}


@pytest.mark.parametrize("case", POOL_CASES, ids=lambda c: f"{c[0]}-{c[2]}")
def test_values_and_indices_are_pytorchs(case):
    name, source, options, values, indices = case
    x = T(X[source])
    out, where = getattr(F, name)(x, **options, return_indices=True)
    np.testing.assert_array_equal(N(out), np.array(values))  # NaN equal to NaN
    assert where.dtype == cr.int64
    np.testing.assert_array_equal(N(where), np.array(indices))
    named = getattr(F, f"{name}_with_indices")(x, **options)
    np.testing.assert_array_equal(N(named[1]), np.array(indices))
    np.testing.assert_array_equal(N(getattr(F, name)(x, **options)), np.array(values))
    # one sample (no batch axis): the same planes
    single = getattr(F, name)(T(X[source][0]), **options, return_indices=True)
    np.testing.assert_array_equal(N(single[1]), np.array(indices)[0])


@pytest.mark.parametrize("case", UNPOOL_CASES, ids=lambda c: f"{c[3]}-{c[4]}")
def test_unpooling_is_pytorchs(case):
    name, source, options, unpool, size, expected = case
    values, indices = getattr(F, name)(T(X[source]), **options, return_indices=True)
    out = getattr(F, unpool)(values, indices, **options, output_size=size)
    np.testing.assert_array_equal(N(out), np.array(expected))


def test_the_values_gradient_is_unchanged_by_return_indices():
    a = np.random.default_rng(0).permutation(30).reshape(1, 2, 3, 5) / 7.0
    plain, with_indices = leaf(a), leaf(a)
    F.max_pool2d(plain, 2, 1, 1, ceil_mode=True).sum().backward()
    F.max_pool2d(with_indices, 2, 1, 1, ceil_mode=True, return_indices=True)[0].sum().backward()
    np.testing.assert_array_equal(N(with_indices.grad), N(plain.grad))


@pytest.mark.parametrize(
    "pool",
    [
        lambda x: F.max_pool1d(x, 2, 1, 1, return_indices=True)[0],
        lambda x: F.max_pool2d(x, 2, 1, dilation=(1, 2), return_indices=True)[0],
        lambda x: F.max_pool3d(x[:, None], (1, 2, 2), return_indices=True)[0],
        lambda x: F.adaptive_max_pool1d(x, 2, return_indices=True)[0],
        lambda x: F.adaptive_max_pool2d(x, (2, 1), return_indices=True)[0],
    ],
)
def test_pooled_values_differentiate_to_second_order(pool):
    # distinct values: no window holds a tie that finite differences could cross
    x = leaf(np.array([[[0.3, -1.2, 2.5, 0.7], [1.1, -0.4, 0.2, 1.9], [0.8, 1.4, -2.0, 0.5]]]))
    check_grads(pool, x)


def test_unpooling_differentiates_in_the_values():
    indices = T(np.array([[[[0, 3], [9, 14]]]]), np.int64)
    values = leaf(np.array([[[[0.5, -1.0], [2.0, 3.0]]]]))
    check_grads(lambda v: F.max_unpool2d(v, indices, 2, output_size=(4, 4)), values)
    out = F.max_unpool2d(values, indices, 2)
    (out * T(np.arange(16.0).reshape(1, 1, 4, 4))).sum().backward()
    assert_values(values.grad, [[[[0.0, 3.0], [9.0, 14.0]]]])


def test_a_repeated_index_keeps_the_last_value_and_its_gradient():
    values = leaf(np.array([[[1.0, 2.0, 3.0]]]))
    out = F.max_unpool1d(values, T(np.array([[[1, 1, 3]]]), np.int64), 2)
    assert_values(out, [[[0.0, 2.0, 0.0, 3.0, 0.0, 0.0]]])  # PyTorch's values
    (out * T(np.arange(6.0))).sum().backward()
    # the derivative: the value overwritten gets none (PyTorch's gives it 1.0 there)
    assert_values(values.grad, [[[0.0, 1.0, 3.0]]])


@examples(6)
@given(st.integers(1, 3), st.integers(1, 3), st.integers(0, 2**31 - 1))
def test_unpooling_puts_each_maximum_back_in_place(kh, kw, seed):
    a = np.random.default_rng(seed).permutation(2 * 6 * 5).reshape(2, 1, 6, 5).astype(float)
    values, indices = F.max_pool2d(T(a), (kh, kw), return_indices=True)
    out = N(F.max_unpool2d(values, indices, (kh, kw), output_size=a.shape))
    kept = out != 0
    assert kept.sum() == N(values).size - (N(values) == 0).sum()
    np.testing.assert_array_equal(out[kept], a[kept])
    np.testing.assert_array_equal(N(F.max_pool2d(T(out), (kh, kw))), N(values))


def test_layers_return_indices_and_unpool():
    x = T(X["x2"])
    pool = nn.MaxPool2d(2, stride=1, return_indices=True)
    assert (
        repr(pool) == "MaxPool2d(kernel_size=2, stride=1, padding=0, dilation=1, ceil_mode=False)"
    )
    values, indices = pool(x)
    np.testing.assert_array_equal(N(indices), np.array(POOL_CASES[2][4]))
    unpool = nn.MaxUnpool2d(2, stride=1)
    assert repr(unpool) == "MaxUnpool2d(kernel_size=(2, 2), stride=(1, 1), padding=(0, 0))"
    np.testing.assert_array_equal(N(unpool(values, indices)), np.array(UNPOOL_CASES[2][5]))
    assert repr(nn.MaxUnpool1d(2)) == "MaxUnpool1d(kernel_size=(2,), stride=(2,), padding=(0,))"
    assert repr(nn.MaxUnpool3d((2, 1, 2), 1)) == (
        "MaxUnpool3d(kernel_size=(2, 1, 2), stride=(1, 1, 1), padding=(0, 0, 0))"
    )
    _, where = nn.MaxPool1d(3, 2, 1, return_indices=True)(T(X["x1"]))
    np.testing.assert_array_equal(N(where), np.array(POOL_CASES[0][4]))
    _, where = nn.MaxPool3d(2, 1, return_indices=True)(T(X["x3"]))
    np.testing.assert_array_equal(N(where), np.array(POOL_CASES[5][4]))
    adaptive = nn.AdaptiveMaxPool1d(3, return_indices=True)
    assert repr(adaptive) == "AdaptiveMaxPool1d(output_size=3)"
    np.testing.assert_array_equal(N(adaptive(T(X["x1"]))[1]), np.array(POOL_CASES[7][4]))
    _, where = nn.AdaptiveMaxPool2d((2, 3), return_indices=True)(T(X["x2"]))
    np.testing.assert_array_equal(N(where), np.array(POOL_CASES[8][4]))
    out = nn.MaxUnpool3d(2)(*F.max_pool3d(T(X["x3"]), 2, return_indices=True), (3, 3, 4))
    np.testing.assert_array_equal(N(out), np.array(UNPOOL_CASES[5][5]))


def _unpool_args(shape=(1, 1, 2, 2), index=0, dtype=np.int64):
    return T(np.ones(shape)), T(np.full(shape, index), dtype)


@pytest.mark.parametrize(
    "call, error, match",
    [
        (lambda: F.max_unpool2d(*_unpool_args(), 2, output_size=(3, 3, 3)), ValueError,
         "output_size should be a sequence containing 2 or 4 elements, but it has a length of '3'"),
        (lambda: F.max_unpool2d(*_unpool_args(), 2, output_size=(9, 9)), ValueError,
         'invalid output_size "\\(9, 9\\)" \\(dim 0 must be between 2 and 6\\)'),
        (lambda: F.max_unpool2d(*_unpool_args(index=99), 2), RuntimeError,
         "Found an invalid max index: 99 \\(output volumes are of size 4x4\\)"),
        (lambda: F.max_unpool1d(*_unpool_args((2, 2), -1), 2), RuntimeError,
         "Found an invalid max index: -1 \\(output volumes are of size 4x1\\)"),
        (lambda: F.max_unpool3d(*_unpool_args((1, 1, 2, 2, 2), 99), 2), RuntimeError,
         "Found an invalid max index: 99 \\(output volumes are of size 4x4x4\\)"),
        (lambda: F.max_unpool2d(*_unpool_args(dtype=np.int32), 2), RuntimeError,
         "^elements in indices should be type int64 but got: Int$"),
        (lambda: F.max_unpool3d(*_unpool_args((1, 1, 2, 2, 2), dtype=np.float64), 2),
         RuntimeError, "^elements in indices should be type int64$"),
        (lambda: F.max_unpool2d(T(np.ones((1, 1, 2, 2))), T(np.zeros((1, 1, 2, 3)), np.int64), 2),
         RuntimeError, "Expected shape of indices to be same as that of the input tensor "
         "\\(\\[1, 1, 2, 2\\]\\) but got indices tensor with shape: \\[1, 1, 2, 3\\]"),
        (lambda: F.max_unpool2d(*_unpool_args((2, 2)), 2), RuntimeError,
         "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with 2 "
         "dimensions."),
        (lambda: F.max_unpool1d(*_unpool_args((1, 1, 1, 2)), 2), RuntimeError,
         "Input to max_unpooling2d should be a 3d or 4d Tensor, but got a tensor with 5"),
        (lambda: F.max_unpool3d(*_unpool_args((2, 2, 2)), 2), RuntimeError,
         "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with 3"),
        (lambda: F.max_unpool2d(*_unpool_args(), 1, padding=2), ValueError,
         "output_size must contain non-negative spatial dimensions, but got output_size\\[0\\]=-2"),
        (lambda: F.embedding_bag(T(np.array([[0, 1]]), np.int64), T(np.ones((2, 1))), mode="max",
                                 scale_grad_by_freq=True), ValueError,
         "max mode does not support scaling the gradient by the frequency"),
        (lambda: F.embedding(T(np.array([0]), np.int64), T(np.ones((3, 2))), sparse=True),
         NotImplementedError, "sparse=True \\(a sparse gradient\\) is not implemented"),
        (lambda: nn.EmbeddingBag(3, 2, sparse=True), NotImplementedError, "sparse=True"),
    ],
)  # fmt: skip
def test_bad_arguments_raise_pytorchs_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_unpooling_to_an_empty_plane_is_empty():
    assert N(F.max_unpool2d(*_unpool_args(), 2, padding=2)).shape == (1, 1, 0, 0)


INDICES = np.array([[0, 1, 1], [4, 1, 0]])


def _check_scaled_vjp(lookup):
    """The scaled gradient is by design not the lookup's derivative (finite differences of
    the lookup give the unscaled one); what is checked by them is the gradient of a loss as a
    function of the weight, by forward mode (a Hessian by forward over reverse). Reverse over
    reverse gives its transpose, as PyTorch's, whose double backward leaves the counts out
    (tests/test_nn_transforms_hunt.py)."""
    weight = leaf(np.arange(10.0).reshape(5, 2) / 10)
    coefficients = T(np.linspace(-1.0, 1.0, math.prod(lookup(weight).shape)))

    def gradient(w):
        loss = cr.sum(cr.reshape(cr.tanh(lookup(w)), (-1,)) * coefficients)
        return grad(loss, w, create_graph=True)[0]

    assert gradcheck(gradient, (weight,), check_forward_ad=True, check_backward_ad=False)


def test_embedding_scales_each_rows_gradient_by_its_count_as_pytorch():
    weight = leaf(np.arange(10.0).reshape(5, 2))
    out = F.embedding(T(INDICES, np.int64), weight, scale_grad_by_freq=True)
    assert_values(out, np.arange(10.0).reshape(5, 2)[INDICES])
    (out * T(np.arange(12.0).reshape(2, 3, 2))).sum().backward()
    # PyTorch's (float32 there): row 0 twice, row 1 three times, row 4 once
    assert_values(weight.grad, [[5.0, 6.0], [14 / 3, 17 / 3], [0.0, 0.0], [0.0, 0.0], [6.0, 7.0]])
    _check_scaled_vjp(lambda w: F.embedding(T(INDICES, np.int64), w, scale_grad_by_freq=True))
    layer = nn.Embedding(5, 2, padding_idx=1, scale_grad_by_freq=True)
    assert repr(layer) == "Embedding(5, 2, padding_idx=1, scale_grad_by_freq=True)"
    layer(T(INDICES, np.int64)).sum().backward()
    assert_values(layer.weight.grad, [[1.0, 1.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [1.0, 1.0]])


def test_embedding_keeps_values_exactly_where_it_scales_gradients():
    table = np.array([[-0.0, 1e300], [inf, -inf], [nan, 0.1]])
    weight = leaf(table)
    indices = T(np.array([0, 1, 1, 2, 2, 2]), np.int64)
    out = F.embedding(indices, weight, scale_grad_by_freq=True)
    np.testing.assert_array_equal(N(out), table[[0, 1, 1, 2, 2, 2]])
    assert np.signbit(N(out)[0, 0])
    out.backward(T(np.ones((6, 2))))
    assert_values(weight.grad, np.ones((3, 2)))


@pytest.mark.parametrize("mode", ["sum", "mean"])
def test_embedding_bag_scales_as_embedding_does(mode):
    # each row's gradient divided by its own count, as embedding's (see embedding_bag's note
    # on PyTorch's CPU kernel, which divides some rows by another row's count)
    reduce = cr.sum if mode == "sum" else cr.mean
    indices = T(INDICES, np.int64)
    weight = leaf(np.arange(10.0).reshape(5, 2))

    def bag(w):
        return F.embedding_bag(indices, w, mode=mode, scale_grad_by_freq=True)

    def composed(w):
        return reduce(F.embedding(indices, w, scale_grad_by_freq=True), axis=1)

    assert_values(bag(weight), N(composed(weight)))
    bag(weight).sum().backward()
    expected = weight.grad
    weight.grad = None
    composed(weight).sum().backward()
    assert_values(expected, N(weight.grad))
    _check_scaled_vjp(bag)
    layer = nn.EmbeddingBag(5, 2, mode=mode, scale_grad_by_freq=True)
    assert repr(layer) == f"EmbeddingBag(5, 2, scale_grad_by_freq=True, mode='{mode}')"
