"""batch_norm / BatchNorm on an input whose channels are not the running statistics': PyTorch's
RuntimeError (a statistic of one element used to broadcast over every channel in eval)."""

import numpy as np
import pytest

import chainrule.nn.functional as F
from chainrule import nn
from conftest import T


@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("features", [1, 4])
def test_batchnorm_of_other_channels_raises_as_pytorch(training, features):
    bn = nn.BatchNorm1d(features).double().train(training)
    with pytest.raises(
        RuntimeError, match=f"running_mean should contain 5 elements not {features}"
    ):
        bn(T(np.ones((3, 5))))


def test_batch_norm_checks_the_running_variance_too():
    x = T(np.ones((3, 2, 4)))
    with pytest.raises(RuntimeError, match="running_var should contain 2 elements not 3"):
        F.batch_norm(x, T(np.zeros(2)), T(np.ones(3)))
