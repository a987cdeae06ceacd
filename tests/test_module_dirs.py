"""dir() of chainrule's public modules lists each one's API (its __all__), not the names it
imports (numpy, math, typing names, other modules' functions): what editors complete."""

import importlib

import pytest

import chainrule as cr

MODULES = [
    "fft", "special", "random", "optimize", "nn.functional", "nn.init", "autograd", "linalg",
]  # fmt: skip


@pytest.mark.parametrize("name", MODULES)
def test_dir_of_a_module_is_its_api(name):
    module = importlib.import_module(f"chainrule.{name}")
    assert dir(module) == sorted(module.__all__)
    assert all(hasattr(module, n) for n in module.__all__)


def test_dir_leaves_out_imports():
    assert not {"np", "math", "copy", "NAMESPACE"} & set(dir(cr.random))
    assert not {"builtins", "math", "numbers", "Tensor", "sum"} & set(dir(cr.special))
    assert not {"linalg", "ops", "struct", "math"} & set(dir(cr.nn.functional))
    assert {"forward_ad", "Function", "grad"} <= set(dir(cr.autograd))
    assert "annotations" not in dir(cr.autograd)
