"""Types: `mypy --strict` on typical user code (tests/typecheck/user_code.py) reports nothing,
the code runs, and Tensor's type-only declarations match the method table bound at import."""

import ast
import importlib
import inspect
import pathlib
import runpy
import subprocess
import sys

import numpy as np
import pytest

from chainrule import _methods, _tensor
from conftest import BACKEND

ROOT = pathlib.Path(__file__).parent.parent
USER_CODE = ROOT / "tests" / "typecheck" / "user_code.py"

# The check is static: once, in the NumPy run of the suite. The user code itself mixes NumPy
# arrays into its tensors, as NumPy users do.
numpy_only = pytest.mark.skipif(BACKEND is not np, reason="typical NumPy user code, checked once")


@numpy_only
def test_mypy_strict_reports_nothing_on_typical_user_code():
    # The cache (in .mypy_cache) makes reruns take about a second; the first takes ten.
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-error-summary", str(USER_CODE)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout == ""


@numpy_only
def test_the_typed_user_code_runs(capsys):
    runpy.run_path(str(USER_CODE), run_name="user_code")
    assert capsys.readouterr().out.startswith("loss ")


def _declared_for_type_checkers() -> dict[str, ast.FunctionDef]:
    """The declarations of Tensor's class body under `if TYPE_CHECKING:`, by name."""
    tree = ast.parse(inspect.getsource(_tensor))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Tensor")
    block = next(
        n
        for n in cls.body
        if isinstance(n, ast.If) and isinstance(n.test, ast.Name) and n.test.id == "TYPE_CHECKING"
    )
    functions = {n.name: n for n in block.body if isinstance(n, ast.FunctionDef)}
    return functions | {n.targets[0].id: n for n in block.body if isinstance(n, ast.Assign)}


def test_tensor_declares_the_type_of_every_method_bound_from_the_table():
    assert set(_declared_for_type_checkers()) == set(_methods.METHODS)


def test_the_declared_docstrings_are_those_of_the_bound_methods():
    declared = {
        name: ast.get_docstring(node)
        for name, node in _declared_for_type_checkers().items()
        if not name.startswith("_") and isinstance(node, ast.FunctionDef)
    }
    assert None not in declared.values()
    for name, doc in declared.items():
        bound = inspect.getdoc(getattr(_tensor.Tensor, name))
        assert " ".join(doc.split()) == " ".join(bound.split()), name


def test_methods_declared_as_functions_are_the_bound_functions_themselves():
    # `sum = _torch_methods.sum` in the block: the function that the table binds, so its
    # signature and docstring are those the type checker reads.
    assigned = {
        name: node.value
        for name, node in _declared_for_type_checkers().items()
        if isinstance(node, ast.Assign)
    }
    assert len(assigned) >= 40
    for name, value in assigned.items():
        module = importlib.import_module(f"chainrule.{value.value.id}")
        assert getattr(module, value.attr) is getattr(_tensor.Tensor, name), name
