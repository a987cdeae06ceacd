"""The toolkit's documentation: every public callable of chainrule.nn, optim, random and
optimize has a docstring; the user guide's pages and mkdocs.yml agree; py.typed ships."""

import inspect
import pathlib
import re

import pytest

import chainrule as cr
from chainrule.nn import functional as F
from chainrule.optim import lr_scheduler

ROOT = pathlib.Path(__file__).parent.parent
MODULES = [cr.nn, F, cr.optim, lr_scheduler, cr.random, cr.optimize]


def public_callables():
    for module in MODULES:
        for name in module.__all__:
            obj = getattr(module, name)
            if inspect.ismodule(obj) or not callable(obj):
                continue
            yield f"{module.__name__}.{name}", obj
            if inspect.isclass(obj):
                for attr, member in vars(obj).items():
                    if not attr.startswith("_") and callable(member):
                        yield f"{module.__name__}.{name}.{attr}", member


CALLABLES = dict(public_callables())


@pytest.mark.parametrize("name", sorted(CALLABLES))
def test_every_public_callable_has_a_docstring(name):
    assert inspect.getdoc(CALLABLES[name]), f"{name} has no docstring"


def test_the_guide_and_its_navigation_agree():
    config = (ROOT / "mkdocs.yml").read_text()
    listed = set(re.findall(r":\s*([\w/.-]+\.md)\s*$", config, flags=re.MULTILINE))
    pages = {p.relative_to(ROOT / "docs").as_posix() for p in (ROOT / "docs").rglob("*.md")}
    assert listed == pages


def test_the_package_is_marked_as_typed():
    assert (pathlib.Path(cr.__file__).parent / "py.typed").exists()
