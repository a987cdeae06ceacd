"""The dtype tables the record paths ask (_backend.IS_COMPLEX, KIND) with NumPy's and
array-api-strict's dtypes in one process: array_api_strict's dtypes hash as their NumPy twins,
and comparing the two warns, so the tables keep each class's dtypes apart."""

import os
import subprocess
import sys
import textwrap

import pytest

import chainrule as cr

pytest.importorskip("array_api_strict")

# NumPy and array-api-strict tensors of the same dtypes through every record path that asks
# the tables: unary, binary (same and mixed dtypes), a view, an n-ary rule, forward mode.
PROGRAM = textwrap.dedent(
    """
    import warnings
    warnings.simplefilter("error")
    import numpy as np
    import array_api_strict
    import chainrule as cr
    from chainrule.autograd import forward_ad as fwad

    for lib in (np, array_api_strict, np):
        for name in ("complex128", "complex64", "float64", "float32", "int64", "int32"):
            dtype = getattr(lib, name)
            floating = name[0] in "cf"
            x = cr.tensor(lib.asarray([1.0, 2.0], dtype=dtype), requires_grad=floating)
            y = cr.sin(x) * x if floating else x * 2
            other = lib.float64 if floating else lib.int64  # mixed dtypes
            y = y + cr.tensor(lib.asarray([1, 3], dtype=other))
            y = cr.reshape(y, (2, 1))[0]
            y = cr.concat([y, y])
            if floating:
                with fwad.dual_level():
                    d = fwad.make_dual(cr.tensor(lib.asarray([1.0, 2.0], dtype=dtype)), x)
                    fwad.unpack_dual(cr.exp(d) * 2.0 + d)
    print("done")
    """
)


def test_numpy_and_array_api_strict_dtypes_meet_the_dtype_tables_without_a_warning():
    # A fresh interpreter (the tables learn once per process), with the chainrule this one
    # imported.
    src = os.path.dirname(os.path.dirname(os.path.abspath(cr.__file__)))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([src, os.environ.get("PYTHONPATH", "")]))
    run = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, timeout=120
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "done"
