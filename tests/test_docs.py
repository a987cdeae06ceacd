"""The documentation: every public callable of chainrule (everything reachable from
`chainrule.__all__` and its submodules' `__all__`, with the public methods and properties of
the classes there, Tensor's included) has a docstring; the user guide's pages and mkdocs.yml
agree, and the code of each page runs; py.typed ships."""

import inspect
import pathlib
import re

import numpy as np
import pytest

import chainrule as cr
from conftest import BACKEND

ROOT = pathlib.Path(__file__).parent.parent


def public_modules() -> list:
    """chainrule and every chainrule module reachable through the `__all__` lists."""
    found = [cr]
    todo = [cr]
    while todo:
        module = todo.pop()
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.ismodule(obj) and obj.__name__.startswith("chainrule.") and obj not in found:
                found.append(obj)
                todo.append(obj)
    return found


def public_callables():
    for module in public_modules():
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not callable(obj):
                continue
            yield f"{module.__name__}.{name}", obj
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if isinstance(member, (staticmethod, classmethod)):
                        member = member.__func__
                    if not attr.startswith("_") and (
                        callable(member) or isinstance(member, property)
                    ):
                        yield f"{module.__name__}.{name}.{attr}", member


CALLABLES = dict(public_callables())


def test_the_walk_reaches_every_public_module_and_tensor_methods():
    names = {m.__name__ for m in public_modules()}
    assert {"chainrule.autograd.functional", "chainrule.nn.functional", "chainrule.linalg"} <= names
    assert {"chainrule.Tensor.backward", "chainrule.Tensor.shape", "chainrule.Tensor.T"} <= set(
        CALLABLES
    )


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_every_public_callable_has_a_docstring(name):
    assert inspect.getdoc(CALLABLES[name]), f"{name} has no docstring"


def test_the_guide_and_its_navigation_agree():
    config = (ROOT / "mkdocs.yml").read_text()
    listed = set(re.findall(r":\s*([\w/.-]+\.md)\s*$", config, flags=re.MULTILINE))
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert listed == pages


PAGES_WITH_CODE = sorted(
    p.relative_to(ROOT / "docs").as_posix()
    for p in (ROOT / "docs").rglob("*.md")
    if "```python" in p.read_text()
)


@pytest.mark.skipif(BACKEND is not np, reason="the guide's examples make NumPy tensors")
@pytest.mark.parametrize("page", PAGES_WITH_CODE)
def test_the_code_of_each_page_runs_in_order(page, capsys):
    if page == "dask.md":
        pytest.importorskip("distributed")  # the page starts a LocalCluster
    text = (ROOT / "docs" / page).read_text()
    namespace: dict = {"__name__": "__docs__"}
    for i, block in enumerate(re.findall(r"```python\n(.*?)```", text, flags=re.DOTALL)):
        exec(compile(block, f"docs/{page}, code block {i + 1}", "exec"), namespace)


def test_the_package_is_marked_as_typed():
    assert (pathlib.Path(cr.__file__).parent / "py.typed").exists()
