"""grad_fn.name() gives PyTorch's names where PyTorch has the op: the calls in
fixtures/grad_fn_cases.py, against the names PyTorch gave them (fixtures/grad_fn_names.json,
recorded by fixtures/make_grad_fn_names.py); and chainrule's own names elsewhere."""

import json
import pathlib

import numpy as np
import pytest

import chainrule as cr
import chainrule.nn.functional as F
from chainrule._grad_fn_names import TORCH_NAMES
from chainrule._rules import RULES
from conftest import T, fails_on
from fixtures.grad_fn_cases import CASES, inputs

RECORD = json.loads((pathlib.Path(__file__).parent / "fixtures" / "grad_fn_names.json").read_text())
DASK_LACKS = ("det", "slogdet", "eigh", "eigvalsh", "pinv")


def _case(source):
    if any(f"linalg.{name}(" in source for name in DASK_LACKS):
        return pytest.param(source, marks=fails_on("dask", reason="Dask's linalg lacks it"))
    return source


def test_the_record_covers_every_case():
    assert set(RECORD["names"]) == set(CASES)


@pytest.mark.parametrize("source", [_case(s) for s in CASES])
def test_grad_fn_is_named_as_pytorch_names_it(source):
    env = {"lib": cr, "F": F}
    for name, value in inputs().items():
        env[name] = T(value, requires_grad=name != "i")
    exec(source, env)
    assert env["out"].grad_fn.name() == RECORD["names"][source]


def test_every_name_in_the_table_is_a_rule():
    assert set(TORCH_NAMES) <= set(RULES)


def test_the_name_stays_once_backward_freed_the_saved_values():
    x = T(np.ones(3), requires_grad=True)
    y = (x**2).sum()
    pow_node = y.grad_fn.next_functions[0][0]
    y.backward()
    assert (y.grad_fn.name(), pow_node.name()) == ("SumBackward0", "PowBackward0")
    assert repr(pow_node) == "<PowBackward0 node>"


def test_ops_pytorch_lacks_keep_chainrules_names_without_a_digit():
    x = T(np.array([1.0, 2.0]), requires_grad=True)
    assert cr.positive(x).grad_fn.name() == "PositiveBackward"
    assert cr.repeat(x, 2).grad_fn.name() == "RepeatBackward"


def test_item_assignment_is_named_copyslices_without_pytorchs_namespace():
    # PyTorch's name() says "torch::autograd::CopySlices" (its class is CopySlices).
    y = T(np.ones(3), requires_grad=True) * 1.0
    y[0] = 2.0
    assert y.grad_fn.name() == "CopySlices"
