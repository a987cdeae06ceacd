"""The rule table as a whole: every differentiable rule has a gradient test (the test files
name the rules they gradcheck in GRADCHECKED), and the library kernels that stand in for a
derivative formula give that formula's values."""

import importlib
import pathlib

import numpy as np
import pytest

import chainrule as cr
from chainrule._rules import KERNELS, RULES, raw_namespace
from conftest import BACKEND, N


def test_every_rule_has_a_gradient_test():
    # Every test module may declare the rules it gradchecks in a GRADCHECKED set.
    checked = set()
    for path in sorted(pathlib.Path(__file__).parent.glob("test_*.py")):
        checked |= getattr(importlib.import_module(path.stem), "GRADCHECKED", set())
    differentiable = {name for name, rule in RULES.items() if rule.vjp is not None}
    assert sorted(differentiable - checked) == [], "rules without a gradient test"
    assert sorted(checked - set(RULES)) == [], "gradient tests of rules that do not exist"


@pytest.mark.parametrize("name", sorted(KERNELS))
def test_a_library_kernel_for_a_derivative_formula_gives_the_formula_values(name):
    # raw_namespace serves a library's own kernel (PyTorch's tanh_backward) where it has one.
    g, out = np.linspace(-2.0, 2.0, 12).reshape(3, 4), np.linspace(-0.9, 0.9, 12).reshape(3, 4)
    kernel = getattr(raw_namespace(BACKEND), name)
    result = kernel(BACKEND.asarray(g), BACKEND.asarray(out))
    np.testing.assert_allclose(N(cr.asarray(result)), KERNELS[name](g, out), rtol=1e-14)
