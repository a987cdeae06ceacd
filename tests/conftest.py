"""Shared test set-up: Hypothesis profiles, tensors made in the backend under test (NumPy, or
the one named by CHAINRULE_BACKEND: array_api_strict, dask, jax, torch, cupy), and markers for
what a backend's library can't do. SciPy's Array API support (for the third-party tests) is
switched on before anything imports SciPy."""

import os

os.environ["SCIPY_ARRAY_API"] = "1"

import numpy as np  # noqa: E402 - after the environment is set
import pytest  # noqa: E402
from hypothesis import Phase, settings  # noqa: E402

import chainrule as cr  # noqa: E402
from chainrule import _backend  # noqa: E402

settings.register_profile("default", deadline=None, max_examples=25, derandomize=True)
# The quick run on every other backend in `make test`: each test on a few drawn examples.
settings.register_profile("smoke", deadline=None, max_examples=3, derandomize=True)
# The quicker run on the slowest backends (Dask, JAX): one drawn example per test, not shrunk
# when it fails (a Dask failure could shrink for minutes).
settings.register_profile(
    "quick",
    deadline=None,
    max_examples=1,
    derandomize=True,
    phases=(Phase.explicit, Phase.generate),
)
settings.load_profile("default")


def examples(n: int):
    """Hypothesis settings for a test that draws `n` examples, or fewer where the profile
    loaded (the smoke run's) asks for fewer."""
    return settings(max_examples=min(n, settings().max_examples))


BACKEND = _backend.default_namespace()
LIBRARY = _backend.library(BACKEND)
if LIBRARY == "dask":
    import dask

    # The tests' arrays are tiny: computing them in the calling thread is the quickest.
    dask.config.set(scheduler="synchronous")


def fails_on(*libraries, reason, strict=True):
    """Marks a test that fails on these backends for a reason of their library (listed in the
    README); strict: it must fail there."""
    return pytest.mark.xfail(
        LIBRARY in libraries, reason=f"{'/'.join(libraries)}: {reason}", strict=strict
    )


# Functions Dask's linalg lacks, by the rules that call them (tests over the rule table mark
# these rules on Dask).
DASK_LINALG = "Dask's linalg has no det, slogdet, eigh, eigvalsh, eig, eigvals or pinv"
DASK_LACKS = {"linalg_det", "linalg_slogdet", "linalg_eigh", "linalg_eig", "linalg_pinv"}


def failing_on_dask(names, lacking=DASK_LACKS, reason=DASK_LINALG):
    """`names` as pytest parameters, those in `lacking` marked failing on Dask."""
    return [
        pytest.param(n, marks=fails_on("dask", reason=reason)) if n in lacking else n for n in names
    ]


def skip_on(*libraries, reason):
    """Skips a test on these backends (one that would not end, or can't run there at all)."""
    return pytest.mark.skipif(LIBRARY in libraries, reason=f"{'/'.join(libraries)}: {reason}")


def T(values, dtype=None, requires_grad=False):
    """A leaf tensor in the backend under test, from NumPy-convertible `values`."""
    a = np.asarray(values, dtype=dtype)
    return cr.tensor(BACKEND.asarray(a), requires_grad=requires_grad)


def N(t):
    """A tensor's values as a NumPy array."""
    return np.asarray(t.numpy())


def of_backend(a) -> bool:
    """Whether raw array `a` is an array of the library under test."""
    return _backend.library(_backend.namespace(a)) == LIBRARY
