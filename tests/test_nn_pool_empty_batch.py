"""Max pooling of an empty batch (N = 0) on every backend (Dask's reshape of an empty array
failed inside take_along_axis): max_pool1d/2d/3d with and without indices and adaptive max
pooling give PyTorch's empty shapes, int64 indices, and empty gradients in both modes;
max_unpool takes the empty indices back."""

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn
from chainrule.autograd import forward_ad as fwAD
from chainrule.autograd import grad
from conftest import T
from helpers import leaf

# (function, input shape, arguments, output shape), shapes as PyTorch 2.13 gives them.
CASES = [
    (F.max_pool1d, (0, 2, 6), (2,), (0, 2, 3)),
    (F.max_pool2d, (0, 2, 4, 5), (2,), (0, 2, 2, 2)),
    (F.max_pool2d, (0, 1, 5, 5), (3, 2, 1), (0, 1, 3, 3)),
    (F.max_pool3d, (0, 2, 4, 4, 4), (2,), (0, 2, 2, 2, 2)),
    (F.adaptive_max_pool1d, (0, 2, 6), (4,), (0, 2, 4)),
    (F.adaptive_max_pool2d, (0, 2, 4, 4), ((2, 3),), (0, 2, 2, 3)),
]
IDS = [f"{fn.__name__}-{len(shape) - 2}d-{i}" for i, (fn, shape, _, _) in enumerate(CASES)]


@pytest.mark.parametrize("indices", [False, True])
@pytest.mark.parametrize(("fn", "shape", "args", "out_shape"), CASES, ids=IDS)
def test_an_empty_batch_pools_to_pytorchs_empty_shape(fn, shape, args, out_shape, indices):
    x = leaf(np.zeros(shape))
    found = fn(x, *args, return_indices=indices)
    out = found[0] if indices else found
    assert out.shape == out_shape and out.dtype == cr.float64
    assert np.asarray(out.numpy()).shape == out_shape
    if indices:
        assert found[1].shape == out_shape and found[1].dtype == cr.int64
        assert np.asarray(found[1].numpy()).shape == out_shape
    (g,) = grad(cr.sum(out), x)
    assert g.shape == shape and np.asarray(g.numpy()).shape == shape
    with fwAD.dual_level():
        result = fn(fwAD.make_dual(T(np.zeros(shape)), T(np.ones(shape))), *args)
        tangent = fwAD.unpack_dual(result).tangent
    assert np.asarray(tangent.numpy()).shape == out_shape


def test_the_modules_and_unpooling_of_an_empty_batch():
    x = leaf(np.zeros((0, 3, 4, 4)))
    out, idx = nn.MaxPool2d(2, return_indices=True)(x)
    assert out.shape == (0, 3, 2, 2)
    back = nn.MaxUnpool2d(2)(out, idx)
    assert back.shape == (0, 3, 4, 4) and np.asarray(back.numpy()).shape == (0, 3, 4, 4)
    (g,) = grad(cr.sum(back), x)
    assert np.asarray(g.numpy()).shape == (0, 3, 4, 4)
    assert nn.AdaptiveMaxPool2d(1)(x).shape == (0, 3, 1, 1)
    assert np.asarray(nn.MaxPool1d(2)(T(np.zeros((0, 2, 4)))).numpy()).shape == (0, 2, 2)
