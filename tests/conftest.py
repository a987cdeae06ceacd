"""Shared test set-up: Hypothesis profile, and tensors made in the backend under test
(NumPy, or the one named by CHAINRULE_BACKEND, e.g. array_api_strict). SciPy's Array API
support (for the third-party tests) is switched on before anything imports SciPy."""

import os

os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np  # noqa: E402 - after the environment is set
from hypothesis import settings  # noqa: E402

import chainrule as cr  # noqa: E402
from chainrule import _backend  # noqa: E402

settings.register_profile("default", deadline=None, max_examples=25, derandomize=True)
settings.load_profile("default")

BACKEND = _backend.default_namespace()


def T(values, dtype=None, requires_grad=False):
    """A leaf tensor in the backend under test, from NumPy-convertible `values`."""
    a = np.asarray(values, dtype=dtype)
    return cr.tensor(BACKEND.asarray(a), requires_grad=requires_grad)


def N(t):
    """A tensor's values as a NumPy array."""
    return np.asarray(t.numpy())
