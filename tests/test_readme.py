"""Every ``python`` block of README.md runs alone, and prints what the ``text`` block after it shows.

Each block runs in a fresh interpreter (``sys.executable -c``), in an empty directory, so it
can rely on nothing but its own imports and the installed package.  Where the README shows the
output (a ``text`` block after the code, with only prose between), the printed output must be
exactly that.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
with open(os.path.join(ROOT, "README.md"), encoding="utf-8") as _f:
    README = _f.read()

_FENCE = re.compile(r"^```(\w*)\n(.*?)^```\n", re.S | re.M)


def _blocks():
    """``(python code, expected output or None)`` for each python block, in order."""
    fences = [(m.group(1), m.group(2), m.start(), m.end()) for m in _FENCE.finditer(README)]
    out = []
    for k, (lang, code, _, end) in enumerate(fences):
        if lang != "python":
            continue
        expected = None
        if k + 1 < len(fences) and fences[k + 1][0] == "text" and "```" not in README[end : fences[k + 1][2]]:
            expected = fences[k + 1][1]
        out.append((code, expected))
    return out


BLOCKS = _blocks()


def _id(code):
    first = next(line for line in code.splitlines() if line and not line.startswith(("import", "from")))
    return re.sub(r"\W+", "_", first)[:40]


def _params():
    for code, expected in BLOCKS:
        marks = [pytest.mark.slow] if "@numba.njit" in code else []  # compiles a function: ~10-30 s
        yield pytest.param(code, expected, id=_id(code), marks=marks)


def test_the_readme_has_its_examples():
    assert len(BLOCKS) >= 4
    assert sum(expected is not None for _, expected in BLOCKS) >= 3


@pytest.mark.parametrize(("code", "expected"), list(_params()))
def test_readme_block_runs_alone(code, expected, tmp_path):
    env = dict(os.environ)
    env.setdefault("NUMBA_NUM_THREADS", "2")
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env,
                       timeout=600)  # fmt: skip
    assert r.returncode == 0, f"the block fails when run as its own file:\n{r.stderr[-3000:]}"
    if expected is not None:
        assert r.stdout == expected
