"""Programs of PyTorch's example collection (time_sequence_prediction, vae,
word_language_model, dcgan, reinforcement_learning, mnist_forward_forward, regression,
super_resolution, fast_neural_style, mnist, mnist_rnn, gat, gcn), ported in
fixtures/example_programs.py with the smallest diff and written once for both libraries,
reproduce on chainrule the PyTorch run's losses, gradient norms and parameters step by step
(fixtures/example_programs_torch.json, recorded by fixtures/make_example_programs_fixtures.py)."""

import json
import pathlib
import sys
import types

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule import distributions, nn, optim
from conftest import LIBRARY, fails_on
from helpers import InDefaultLibrary

HERE = pathlib.Path(__file__).parent / "fixtures"
sys.path.insert(0, str(HERE))
from example_programs import PROGRAMS  # noqa: E402

RECORD = json.loads((HERE / "example_programs_torch.json").read_text())


T = cr if LIBRARY == "numpy" else InDefaultLibrary()
CHAINRULE = types.SimpleNamespace(t=T, nn=nn, F=F, optim=optim, distributions=distributions)

# What array_api_strict refuses (the standard's limits, as tests/test_index_keys.py says).
STRICT = {
    "forward_forward": "array_api_strict assigns by no index array (x_[range(n), y] = ...)",
    "gat": "array_api_strict takes index arrays only on every axis (output[mask])",
    "gcn": "array_api_strict takes index arrays only on every axis (output[mask])",
    "language_translation": "array_api_strict compares no bool array with a Python int",
    "min_gpt": "array_api_strict has no device 'cpu' (the example's default)",
}


def _marks(name):
    if name in STRICT:
        return [fails_on("array_api_strict", reason=STRICT[name])]
    return []


# mnist_rnn applies Dropout2d to (N, C) input, which PyTorch's warns about in the same words.
@pytest.mark.filterwarnings("ignore:dropout2d. Received a 2-D input")
@pytest.mark.parametrize("name", [pytest.param(n, marks=_marks(n)) for n in PROGRAMS])
def test_an_example_program_reproduces_pytorchs_numbers(name):
    got = PROGRAMS[name](CHAINRULE)
    want = RECORD[name]
    assert got.keys() == want.keys()
    for key, values in want.items():
        # float64, the same operations: the runs agree to rounding (measured: at most 0.18 of
        # this tolerance, on gradients of biases that an instance norm cancels, which are
        # rounding noise of size 1e-17; 0.41 of it on PyTorch's storage).
        np.testing.assert_allclose(got[key], values, rtol=1e-10, atol=1e-13, err_msg=key)
