"""The package is typed: ``py.typed`` ships, ``mypy numba_ta`` is clean, and ``numba-ta --version`` works.

The mypy test runs ``python -m mypy numba_ta`` from the repository root, with the configuration
of ``pyproject.toml`` (``[tool.mypy]``); it is skipped when mypy is not installed (the
``typing`` extra).
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

import numba_ta
from numba_ta.cli import main

ROOT = Path(__file__).resolve().parents[1]


def _run_module(*args, timeout):
    """``python -m <args>`` from the repository root, its output captured as text."""
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True, text=True, timeout=timeout)


def test_version_option_in_process(capsys):
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"numba-ta {numba_ta.__version__}"


def test_version_command():
    proc = _run_module("numba_ta", "--version", timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"numba-ta {numba_ta.__version__}" in proc.stdout
    assert numba_ta.__version__ in proc.stdout


def test_py_typed_marker_in_package():
    marker = Path(numba_ta.__file__).resolve().parent / "py.typed"
    assert marker.is_file()


def test_py_typed_listed_as_package_data():
    """``pyproject.toml`` ships the marker in the wheel (``[tool.setuptools.package-data]``)."""
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    with open(ROOT / "pyproject.toml", "rb") as f:
        config = tomllib.load(f)
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["numba_ta"]


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is not installed (the typing extra)")
def test_mypy_numba_ta_is_clean():
    proc = _run_module("mypy", "numba_ta", timeout=900)
    assert proc.returncode == 0, proc.stdout + proc.stderr
