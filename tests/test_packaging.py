"""The package as a user gets it: the wheel that `make dist` builds installs into a fresh
virtual environment (NumPy its one dependency) and runs the README's first example there,
printing what the README shows."""

import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import venv

import numpy as np
import pytest

from conftest import BACKEND

ROOT = pathlib.Path(__file__).parent.parent


def readme_example() -> tuple[str, str]:
    """The README's first Python block and the text block that shows what it prints."""
    text = (ROOT / "README.md").read_text()
    m = re.search(
        r"^```python\n(.*?)^```\n(?:\s*\n|prints\n)*^```text\n(.*?)^```", text, re.S | re.M
    )
    assert m, "README.md has no Python example followed by its output"
    return m[1], m[2]


@pytest.mark.skipif(BACKEND is not np, reason="packaging is checked once, in the NumPy run")
@pytest.mark.skipif(importlib.util.find_spec("build") is None, reason="needs build (dev extra)")
def test_the_wheel_installs_in_a_fresh_venv_and_runs_the_readme_example(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
        check=True,
        capture_output=True,
    )
    (wheel,) = dist.glob("chainrule-*.whl")
    venv.create(tmp_path / "venv", with_pip=True)
    python = tmp_path / "venv" / "bin" / "python"
    # Nothing of the checkout on the path (PYTHONPATH=src would make pip skip the install).
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTHON")}
    subprocess.run(
        [str(python), "-m", "pip", "install", "-q", str(wheel)],
        check=True,
        capture_output=True,
        env=env,
    )
    code, expected = readme_example()
    # Run outside the checkout, so that only the installed package can be imported.
    run = subprocess.run(
        [str(python), "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.rstrip() == expected.rstrip()
    listed = subprocess.run(
        [str(python), "-m", "pip", "list", "--format=freeze"],
        capture_output=True,
        text=True,
        env=env,
    ).stdout
    installed = {line.split("==")[0].lower() for line in listed.split()}
    assert installed - {"pip", "setuptools"} == {"chainrule", "numpy"}
