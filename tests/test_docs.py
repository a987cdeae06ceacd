"""The documentation: every public callable of chainrule (everything reachable from
`chainrule.__all__` and its submodules' `__all__`, with the public methods and properties of
the classes there, Tensor's included) has a docstring and a place in the API reference; the
user guide's pages and mkdocs.yml agree; every Python code block of the README and the guide
runs on its own and prints what the text shows, and every docstring example runs as a
doctest; py.typed ships."""

import doctest
import importlib.util
import inspect
import os
import pathlib
import re
import subprocess
import sys

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


DOCTESTS = {name: obj for name, obj in CALLABLES.items() if ">>>" in (inspect.getdoc(obj) or "")}


def test_the_entry_points_a_newcomer_meets_first_have_docstring_examples():
    first = {"compile", "no_grad", "enable_grad", "set_grad_enabled", "inference_mode"}
    first |= {"ConcretizationError", "CompileWarning"}
    assert {f"chainrule.{name}" for name in first} <= set(DOCTESTS)


@pytest.mark.skipif(BACKEND is not np, reason="the examples show tensors of the default library")
@pytest.mark.parametrize("name", sorted(DOCTESTS))
def test_each_docstring_example_runs_as_a_doctest(name):
    obj = DOCTESTS[name]
    obj = obj.fget if isinstance(obj, property) else obj
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report: list[str] = []
    for test in doctest.DocTestFinder(recurse=False).find(obj, name, globs={}):
        runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)
    assert runner.tries > 0


def test_the_guide_and_its_navigation_agree():
    config = (ROOT / "mkdocs.yml").read_text()
    listed = set(re.findall(r":\s*([\w/.-]+\.md)\s*$", config, flags=re.MULTILINE))
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert listed == pages


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    """The HTML site, built as `make docs` builds it (strict: a warning fails the build)."""
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("needs mkdocs (the docs extra)")
    out = tmp_path_factory.mktemp("site")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    build = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-d", str(out)]
    run = subprocess.run(build, cwd=ROOT, env=env, capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    return out


def test_the_api_reference_has_every_public_name(site):
    """Each name of every public module's __all__ (but modules) has an entry rendered from its
    docstring in the reference (found by its anchor), or, for the names the renderer can't
    document from source (the generated elementwise functions, constants, dtypes), a row or
    mention in chainrule's reference page."""
    pages = [p.read_text() for p in (site / "reference").rglob("*.html")]
    anchors = set().union(*(re.findall(r'id="(chainrule[\w.]*)"', p) for p in pages))
    reference = ROOT / "docs" / "reference"
    listed = set(re.findall(r"`(\w+)`", (reference / "chainrule.md").read_text()))
    missing = []
    for module in public_modules():
        for name in module.__all__:
            if inspect.ismodule(getattr(module, name)):
                continue
            found = any(a.startswith(module.__name__) and a.endswith("." + name) for a in anchors)
            # A name that is chainrule's own (linalg.matmul is matmul) counts where that is.
            own = getattr(cr, name, None) is getattr(module, name)
            # Or a row of its module's page (chainrule.special's rules, like chainrule's).
            page = reference / f"{module.__name__.removeprefix('chainrule.')}.md"
            rows = set(re.findall(r"^\| `(\w+)`", page.read_text(), re.M)) if page.exists() else ()
            if not found and not (own and name in listed) and name not in rows:
                missing.append(f"{module.__name__}.{name}")
    assert not missing, f"not in the API reference: {missing}"


# A ```python block at the start of a line, and the ```text block after it (blank lines or a
# line "prints" between them), if any: what the block prints.
BLOCK = re.compile(
    r"^```python\n(?P<code>.*?)^```\n(?:\s*\n|prints\n)*(?:^```text\n(?P<out>.*?)^```)?",
    flags=re.DOTALL | re.MULTILINE,
)
# Libraries beyond NumPy that a block may import: without them it is skipped.
OPTIONAL = {
    "array_api_strict",
    "autograd",
    "cupy",
    "dask",
    "distributed",
    "jax",
    "matplotlib",
    "scipy",
    "sklearn",
    "torch",
}


def code_blocks():
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    for page in pages:
        name = page.relative_to(ROOT).as_posix()
        for i, m in enumerate(BLOCK.finditer(page.read_text())):
            yield pytest.param(m["code"], m["out"], id=f"{name}:{i + 1}")


BLOCKS = list(code_blocks())


def test_the_readme_and_the_guide_have_code_blocks_with_outputs_shown():
    names = [b.id for b in BLOCKS]
    assert "README.md:1" in names and any(n.startswith("docs/compile.md") for n in names)
    assert all(b.values[1] is not None for b in BLOCKS if b.id.startswith("README.md"))


@pytest.mark.skipif(BACKEND is not np, reason="the examples make tensors of the default library")
@pytest.mark.parametrize(("code", "expected"), BLOCKS)
def test_each_code_block_runs_on_its_own_and_prints_what_the_text_shows(code, expected, tmp_path):
    imported = set(re.findall(r"^\s*(?:import|from)\s+(\w+)", code, flags=re.MULTILINE))
    for library in sorted(imported & OPTIONAL):
        if importlib.util.find_spec(library) is None:
            pytest.skip(f"needs {library}, which is not installed")
    env = {k: v for k, v in os.environ.items() if k != "CHAINRULE_BACKEND"}
    # The chainrule under test, wherever the block runs (a relative PYTHONPATH would not do).
    package_dir = str(pathlib.Path(cr.__file__).parent.parent)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [package_dir, env.get("PYTHONPATH")]))
    # A fresh interpreter per block: a block sees no names, seeds or settings of another.
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, env=env, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    if expected is not None:
        assert run.stdout.rstrip() == expected.rstrip()


def test_the_package_is_marked_as_typed():
    assert (pathlib.Path(cr.__file__).parent / "py.typed").exists()
