"""The training programs of fixtures/training_programs.py (truncated backpropagation through
time, a GAN step, a gradient penalty, meta-learning, in-place residual blocks, gradient
accumulation), written once for PyTorch and chainrule, reproduce on chainrule the PyTorch
run's losses and gradient norms step by step (fixtures/training_programs_torch.json, recorded
by fixtures/make_training_programs_fixtures.py)."""

import json
import pathlib
import sys
import types

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import nn, optim
from conftest import LIBRARY
from helpers import InDefaultLibrary

HERE = pathlib.Path(__file__).parent / "fixtures"
sys.path.insert(0, str(HERE))
from training_programs import PROGRAMS  # noqa: E402

RECORD = json.loads((HERE / "training_programs_torch.json").read_text())
# On another library than NumPy the data are made in it (they run on every one).
T = cr if LIBRARY == "numpy" else InDefaultLibrary()
CHAINRULE = types.SimpleNamespace(t=T, nn=nn, F=F, optim=optim)


@pytest.mark.parametrize("name", PROGRAMS)
def test_a_training_program_reproduces_pytorchs_numbers(name):
    got = PROGRAMS[name](CHAINRULE)
    want = RECORD[name]
    assert got.keys() == want.keys()
    for key, values in want.items():
        # float64, the same operations: the runs agree to rounding (measured: 2e-14 relative).
        np.testing.assert_allclose(got[key], values, rtol=1e-10, atol=1e-13, err_msg=key)
