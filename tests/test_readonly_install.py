"""numba_ta installed read-only, run by a user who can write neither there nor in HOME.

:func:`test_readonly_install_runs_every_op` installs the project (non-editable, from a copy
of this source tree) into a fresh venv that sees this interpreter's packages
(``--system-site-packages``: numpy and numba come from there, nothing is downloaded), makes
the venv read-only (``chmod -R a-w``) and runs a script with HOME set to a read-only
directory and no ``NUMBA_CACHE_DIR``, so Numba has no directory to cache compiled kernels
in.  The script imports numba_ta from the venv, runs every op (the parallel kernels too)
and checks the results.  It must succeed and print ``OK``: built as ``pip install .`` builds
it, loading every kernel from the compiled code shipped in the package, without a warning;
built with ``NUMBA_TA_PRECOMPILE=0``, compiling the kernels without the cache, with exactly
one warning from numba_ta.  (Numba raises ``RuntimeError: cannot
cache function ...: no locator available`` at decoration time there; without numba_ta's
fallback the import fails.)

The script runs unprivileged: as the current user when that is not root; as root, as user
``nobody`` (``runuser -m``, or ``setpriv`` with uid 65534) when ``nobody`` can run this
interpreter, else as uid 0 with every capability dropped (``setpriv --bounding-set=-all``),
for which file permission bits apply as for any user (the interpreter may live under a
directory that only root can enter, such as ``/root``).  Skipped when none of these works.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import stat
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import numba
import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = [
    pytest.mark.slow,  # builds and installs the package twice: about two minutes on 2 cores
    pytest.mark.skipif(not hasattr(os, "geteuid"), reason="needs POSIX users and permissions"),
    pytest.mark.skipif(numba.config.DISABLE_JIT, reason="NUMBA_DISABLE_JIT=1: nothing is compiled or cached"),
]

#: Left out of the copy of the source tree that is installed.
_IGNORE = shutil.ignore_patterns(
    ".git",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    "*.pyc",
    "*.nbi",
    "*.nbc",
    ".hypothesis",
    ".benchmarks",
    ".pytest_cache",
    ".ruff_cache",
    "_build",
    ".asv",
    "_compiled",
)

SCRIPT = textwrap.dedent(
    """
    import sys

    import numpy as np

    import numba_ta
    from numba_ta import raw_ops
    from numba_ta.core import kernels as _kernels

    assert numba_ta.__file__.startswith(sys.prefix), (numba_ta.__file__, sys.prefix)
    print("numba_ta from", numba_ta.__file__)
    print("kernel cache", type(_kernels.copy_run._cache).__name__)

    f32 = np.float32
    rows = np.arange(12, dtype=f32).reshape(4, 3)
    for threshold in (1 << 62, 0):  # serial kernels, then the parallel ones
        numba_ta.set_parallel_threshold(threshold)
        h, f = raw_ops.TensorArrayV3(size=4, dtype=f32, element_shape=[3], clear_after_read=False)
        for i in range(2):
            f = raw_ops.TensorArrayWriteV3(handle=h, index=i, value=rows[i], flow_in=f)
        f = raw_ops.TensorArrayScatterV3(handle=h, indices=[3, 2], value=rows[[3, 2]], flow_in=f)
        assert (raw_ops.TensorArrayReadV3(handle=h, index=1, flow_in=f, dtype=f32) == rows[1]).all()
        assert (raw_ops.TensorArrayGatherV3(handle=h, indices=[3, 0], flow_in=f, dtype=f32) == rows[[3, 0]]).all()
        value, lengths = raw_ops.TensorArrayConcatV3(handle=h, flow_in=f, dtype=f32)
        assert (value == rows.reshape(-1)).all() and list(lengths) == [3, 3, 3, 3]
        assert raw_ops.TensorArraySizeV3(handle=h, flow_in=f) == 4

        s, sf = raw_ops.TensorArrayV3(size=0, dtype=f32, dynamic_size=True)
        sf = raw_ops.TensorArraySplitV3(handle=s, value=np.arange(6, dtype=f32), lengths=[1, 2, 3], flow_in=sf)
        assert raw_ops.TensorArraySizeV3(handle=s, flow_in=sf) == 3
        assert (raw_ops.TensorArrayReadV3(handle=s, index=2, flow_in=sf, dtype=f32) == [3, 4, 5]).all()

        g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="ro")
        for _ in range(2):
            gf = raw_ops.TensorArrayScatterV3(handle=g, indices=[0, 1, 2, 3], value=rows, flow_in=gf)
        assert (raw_ops.TensorArrayGatherV3(handle=g, indices=[0, 1, 2, 3], flow_in=gf, dtype=f32) == 2 * rows).all()
        for a in (g, s, h):
            raw_ops.TensorArrayCloseV3(handle=a)

    ta = numba_ta.TensorArray(np.float64, size=0, dynamic_size=True)
    for t in range(3):
        ta = ta.write(t, np.full(2, t, np.float64))
    assert ta.stack().shape == (3, 2)

    from numba.core.registry import CPUDispatcher
    from numba_ta.core import state
    from numba_ta.tensor_array import engine
    from numba_ta.tensor_list import listengine, store
    compiled = loaded = 0
    for module in (state, engine, _kernels, listengine, store):
        for obj in vars(module).values():
            if isinstance(obj, CPUDispatcher):
                loaded += sum(obj.stats.cache_hits.values())
                compiled += sum(obj.stats.cache_misses.values())
    print(f"loaded {loaded} compiled {compiled}")
    print("OK")
    """
)


def _make_writable(top):
    """Give the owner write permission on everything under ``top`` again (for cleanup)."""
    for dirpath, _, filenames in os.walk(top):
        for p in [dirpath, *(os.path.join(dirpath, n) for n in filenames)]:
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode | stat.S_IWUSR)


def _make_read_only(top):
    """``chmod -R a-w top`` (symlinks left alone)."""
    for dirpath, _, filenames in os.walk(top, topdown=False):
        for p in [*(os.path.join(dirpath, n) for n in filenames), dirpath]:
            if not os.path.islink(p):
                os.chmod(p, os.stat(p).st_mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def _unprivileged_runners():
    """Command prefixes that run a program without write access to root-owned files, best first."""
    if os.geteuid() != 0:
        return [("the current user", [])]
    runners = []
    if shutil.which("runuser"):
        runners.append(("user nobody (runuser)", ["runuser", "-m", "-u", "nobody", "--"]))
    if shutil.which("setpriv"):
        runners.append(("uid 65534 (setpriv)", ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--"]))
        runners.append(
            (
                "uid 0 without capabilities (setpriv)",
                ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--"],
            )
        )
    return runners


def _run(argv, cwd, env, **kw):
    """``subprocess.run(argv)`` in ``cwd`` with the environment ``env``, its output captured as text."""
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, **kw)


@pytest.fixture
def workdir():
    """A fresh directory that every user can enter (pytest's tmp_path is private to root)."""
    path = Path(tempfile.mkdtemp(prefix="numba_ta-readonly-"))
    path.chmod(0o755)
    yield path
    _make_writable(path)
    shutil.rmtree(path, ignore_errors=True)


@pytest.mark.parametrize("shipped", [True, False], ids=["compiled-at-install", "NUMBA_TA_PRECOMPILE=0"])
def test_readonly_install_runs_every_op(workdir, shipped):
    """Import and every op work from a read-only install with no writable Numba cache directory.

    Built as ``pip install .`` builds it, the package holds its compiled engine and kernels
    (``numba_ta/_compiled``): every op loads them, none is compiled, and nothing warns.
    Built with ``NUMBA_TA_PRECOMPILE=0``, every op compiles in the process, with one warning.
    """
    src = workdir / "src"
    shutil.copytree(ROOT, src, ignore=_IGNORE)
    venv = workdir / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", "--without-pip", str(venv)], check=True)
    py = str(venv / "bin" / "python")
    if sys.prefix != sys.base_prefix:  # this interpreter is itself a venv: make its packages visible too
        purelib = subprocess.run(
            [py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
        Path(purelib, "_outer_site.pth").write_text("\n".join(site.getsitepackages()) + "\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NUMBA_CACHE", "PYTHON", "XDG_CACHE"))}
    env.update(PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1")
    env["NUMBA_TA_PRECOMPILE"] = "1" if shipped else "0"
    install = _run([py, "-m", "pip", "install", "-q", "--no-deps", "--no-build-isolation", str(src)], workdir, env)
    assert install.returncode == 0, f"pip install failed:\n{install.stdout}\n{install.stderr}"

    home = workdir / "home"
    home.mkdir()
    (workdir / "script.py").write_text(SCRIPT)
    _make_read_only(venv)
    _make_read_only(home)
    _make_read_only(workdir / "script.py")
    env = {k: v for k, v in env.items() if not k.startswith("PIP_")}
    env["HOME"] = str(home)
    # -I: no PYTHONPATH, no user site, and not the current directory on the import path
    cmd = [py, "-I", str(workdir / "script.py")]

    reasons = []
    for who, prefix in _unprivileged_runners():
        probe = _run([*prefix, py, "-I", "-c", "import numba, os, sys; os.listdir(sys.prefix)"], home, env)
        if probe.returncode != 0:
            last = (probe.stderr.strip().splitlines() or [f"exit status {probe.returncode}"])[-1]
            reasons.append(f"{who}: {last}")
            continue
        writable = "import os, sys; print(os.access(sys.prefix, os.W_OK))"
        if _run([*prefix, py, "-I", "-c", writable], home, env).stdout.strip() != "False":
            reasons.append(f"{who}: can still write into the read-only venv")
            continue
        break
    else:
        pytest.skip("no way to run a process without write access here: " + "; ".join(reasons))

    run = _run([*prefix, *cmd], home, env, timeout=1800)
    report = f"ran as {who}\nstdout:\n{run.stdout}\nstderr:\n{run.stderr}"
    assert run.returncode == 0, report
    assert run.stdout.splitlines()[-1:] == ["OK"], report
    assert f"numba_ta from {venv}" in run.stdout, report  # the installed copy, not the source tree
    assert "kernel cache KernelCache" in run.stdout, report
    ours = [line for line in run.stderr.splitlines() if "Warning:" in line and "numba_ta" in line]
    counts = next(line for line in run.stdout.splitlines() if line.startswith("loaded "))
    if shipped:
        assert (venv / "lib").is_dir() and list(venv.glob("lib/*/site-packages/numba_ta/_compiled/*.nbi")), report
        manifests = list(venv.glob("lib/*/site-packages/numba_ta/_compiled/manifest.json"))
        assert len(manifests) == 1, report  # what the shipped code was built for (checked when a kernel misses it)
        assert json.loads(manifests[0].read_text())["numba"] == numba.__version__, report
        assert counts.endswith(" compiled 0") and counts != "loaded 0 compiled 0", report  # all loaded
        assert ours == [], report
    else:
        assert not list(venv.glob("lib/*/site-packages/numba_ta/_compiled")), report
        assert counts.startswith("loaded 0 "), report  # Numba really had nowhere to cache
        assert len(ours) == 1, report  # one warning per process, not one per kernel
        assert "NUMBA_CACHE_DIR" in ours[0], report  # and it says what to do
