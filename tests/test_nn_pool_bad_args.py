"""max_pool2d / avg_pool2d on a zero or negative stride or a negative padding: PyTorch's
RuntimeError and words (a ZeroDivisionError, a 'too small' output or NumPy's ValueError
before)."""

import numpy as np
import pytest

import chainrule.nn.functional as F
from chainrule import nn
from conftest import T


@pytest.mark.parametrize("pool", [F.max_pool2d, F.avg_pool2d])
@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"kernel_size": 2, "stride": 0}, "stride should not be zero"),
        ({"kernel_size": 0}, "stride should not be zero"),
        ({"kernel_size": 2, "stride": (1, 0)}, "stride should not be zero"),
        ({"kernel_size": 2, "stride": -1}, "stride should be greater than zero, but got dH: -1"),
        ({"kernel_size": 2, "padding": -1}, "pad must be non-negative, but got pad: -1"),
    ],
)
def test_pooling_with_bad_stride_or_padding_raises_as_pytorch(pool, options, message):
    with pytest.raises(RuntimeError, match=message):
        pool(T(np.ones((1, 1, 4, 4))), **options)


def test_pooling_modules_check_their_stride_too():
    with pytest.raises(RuntimeError, match="stride should not be zero"):
        nn.MaxPool2d(2, stride=0)(T(np.ones((1, 1, 4, 4))))
    with pytest.raises(RuntimeError, match="stride should not be zero"):
        nn.AvgPool2d(2, stride=0)(T(np.ones((1, 1, 4, 4))))


@pytest.mark.parametrize(
    ("kernel", "padding", "dilation"), [(3, 2, 2), ((3, 2), (1, 2), (1, 3)), (2, (0, 2), 3)]
)
def test_max_pool_padding_past_half_the_undilated_kernel_raises_as_pytorch(
    kernel, padding, dilation
):
    # within half the dilated kernel, but PyTorch's kernel checks the undilated one
    with pytest.raises(RuntimeError, match="pad should be smaller than or equal to half of"):
        F.max_pool2d(T(np.ones((1, 1, 8, 8))), kernel, 1, padding, dilation)
