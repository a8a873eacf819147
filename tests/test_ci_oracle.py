"""Under ``CI=true`` the oracle cannot be skipped quietly (tests/conftest.py, "the oracle under CI").

Each case runs pytest in a subprocess on a small test file of its own, with this directory's
``conftest.py`` as a plugin, and TensorFlow either blocked (a ``tensorflow`` package that raises
``ModuleNotFoundError`` first on the path) or present.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))

_FIXTURE_STYLE = """
import pytest

@pytest.fixture(scope="module")
def tf():
    return pytest.importorskip("tensorflow")

@pytest.mark.oracle
def test_against_tf(tf):
    assert tf.constant(1).numpy() == 1

def test_without_tf():
    pass
"""

_FALLBACK_STYLE = """
import pytest
try:
    import tensorflow as tf
except ImportError:
    tf = None

@pytest.mark.oracle
@pytest.mark.skipif(tf is None, reason="needs tensorflow")
def test_against_tf():
    pass
"""

_MODULE_STYLE = """
import pytest
tf = pytest.importorskip("tensorflow")

@pytest.mark.oracle
def test_against_tf():
    pass
"""

_ONE_SKIPS = """
import pytest

@pytest.mark.oracle
def test_runs():
    import tensorflow  # noqa: F401

@pytest.mark.oracle
def test_skips():
    pytest.skip("no reason at all")
"""


def _pytest(tmp_path, body, ci, block_tf):
    (tmp_path / "test_case.py").write_text(textwrap.dedent(body))
    path = [HERE]
    if block_tf:
        fake = tmp_path / "blocked" / "tensorflow"
        fake.mkdir(parents=True)
        blocked = 'raise ModuleNotFoundError("No module named tensorflow", name="tensorflow")\n'
        (fake / "__init__.py").write_text(blocked)
        path.insert(0, str(fake.parent))
    env = {k: v for k, v in os.environ.items() if k != "CI"}
    env["PYTHONPATH"] = os.pathsep.join(path + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    if ci:
        env["CI"] = "true"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "conftest", "-p", "no:cacheprovider", "-q", "-rs",
         "-W", "ignore::pytest.PytestUnknownMarkWarning", "test_case.py"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


STYLES = pytest.mark.parametrize(
    "body", [_FIXTURE_STYLE, _FALLBACK_STYLE, _MODULE_STYLE], ids=["fixture", "fallback", "module"]
)


@STYLES
def test_without_tensorflow_ci_fails(tmp_path, body):
    r = _pytest(tmp_path, body, ci=True, block_tf=True)
    out = r.stdout + r.stderr
    assert r.returncode == 4, out
    assert "CI=true: the oracle tests need TensorFlow" in out and "cannot be imported" in out


@STYLES
def test_without_tensorflow_outside_ci_the_oracle_skips_and_says_so(tmp_path, body):
    r = _pytest(tmp_path, body, ci=False, block_tf=True)
    assert r.returncode in (0, 5), r.stdout + r.stderr  # 5: the module skipped, nothing else to run
    line = next(x for x in r.stdout.splitlines() if x.startswith("oracle tests"))
    assert line.startswith("oracle tests (TensorFlow not imported): 0 passed, 0 failed"), line
    assert ("1 skipped" in line) or ("1 test module skipped without TensorFlow" in line), line


@pytest.mark.oracle
def test_under_ci_an_oracle_test_may_not_skip_and_the_count_is_printed(tmp_path):
    pytest.importorskip("tensorflow")
    r = _pytest(tmp_path, _ONE_SKIPS, ci=True, block_tf=False)
    out = r.stdout + r.stderr
    assert r.returncode == 1, out
    assert "CI=true: an oracle test may not skip (Skipped: no reason at all)" in out
    line = next(x for x in r.stdout.splitlines() if x.startswith("oracle tests"))
    assert line.startswith("oracle tests (TensorFlow 2.") and line.endswith(": 1 passed, 1 failed, 0 skipped"), line
