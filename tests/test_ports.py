"""The three PyTorch ports of examples/ports: each chainrule form differs from its PyTorch
form in its imports only, and at its small size reproduces the PyTorch run's numbers
(tests/fixtures/ports_torch.json, recorded by fixtures/make_ports_fixtures.py from the same
weights and data; the digits CNN with dropout off, as recorded)."""

import difflib
import importlib.util
import json
import pathlib
import re

import numpy as np
import pytest

import chainrule as cr
from conftest import LIBRARY

ROOT = pathlib.Path(__file__).parent.parent
PORTS = ROOT / "examples" / "ports"
RECORD = json.loads((ROOT / "tests" / "fixtures" / "ports_torch.json").read_text())
NAMES = ("digits_cnn", "transformer", "oscillator_lbfgs")
on_numpy = pytest.mark.skipif(LIBRARY != "numpy", reason="the ports run on NumPy storage")


def _run(name: str, **kwargs) -> dict:
    spec = importlib.util.spec_from_file_location(f"port_{name}", PORTS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.run(**kwargs)


@pytest.mark.parametrize("name", NAMES)
def test_a_port_differs_from_its_pytorch_form_in_its_imports_only(name):
    torch_form = (PORTS / f"{name}_torch.py").read_text().splitlines()
    ours = (PORTS / f"{name}.py").read_text().splitlines()
    changed = [
        line[1:]
        for line in difflib.unified_diff(torch_form, ours, lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]
    assert changed, "the two forms are the same file"
    imports = re.compile(r"^(import \S+( as \w+)?|from \S+ import [\w, ]+)?$")
    assert all(imports.match(line) for line in changed), changed
    assert not [line for line in ours if re.match(r"(import|from) torch\b", line)]


@on_numpy
def test_the_digits_cnn_reproduces_pytorchs_losses():
    pytest.importorskip("sklearn")
    got = _run("digits_cnn", size="small", dropout=0.0)
    want = RECORD["digits_cnn"]
    # float32 throughout: the kernels of the two libraries round differently (measured: 1.5e-7
    # at most, against 2.5 to 0.8 over the steps).
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
    np.testing.assert_allclose(got["test_loss"], want["test_loss"], rtol=1e-5)
    assert got["accuracy"] == pytest.approx(want["accuracy"], abs=1e-6)


@on_numpy
def test_the_transformer_reproduces_pytorchs_losses_and_gradient_norms():
    got = _run("transformer", size="small")
    want = RECORD["transformer"]
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-5)
    np.testing.assert_allclose(got["grad_norms"], want["grad_norms"], rtol=1e-5)
    assert got["accuracy"] == pytest.approx(want["accuracy"], abs=1e-6)


@on_numpy
def test_the_lbfgs_fit_reproduces_pytorchs_evaluations():
    got = _run("oscillator_lbfgs", size="small")
    want = RECORD["oscillator_lbfgs"]
    # float64, and every evaluation of the closure: the same line search, step by step.
    assert len(got["evaluations"]) == len(want["evaluations"])
    np.testing.assert_allclose(got["evaluations"], want["evaluations"], rtol=1e-11)
    np.testing.assert_allclose(got["losses"], want["losses"], rtol=1e-11)
    assert got["fitted"].keys() == want["fitted"].keys()
    for name, value in want["fitted"].items():
        assert got["fitted"][name] == pytest.approx(value, rel=1e-11)


@on_numpy
def test_the_digits_cnn_trains_with_dropout_on():
    # Dropout's masks come from chainrule's generator (PyTorch's draws differ): the run is not
    # PyTorch's, but the layer acts, and the network still learns.
    pytest.importorskip("sklearn")
    cr.random.manual_seed(0)
    got = _run("digits_cnn", size="small", dropout=0.5)
    losses = np.array(got["losses"])
    assert np.all(np.isfinite(losses)) and len(losses) == len(RECORD["digits_cnn"]["losses"])
    assert not np.allclose(losses, RECORD["digits_cnn"]["losses"], rtol=1e-3)
    assert losses[-4:].mean() < losses[:4].mean()
