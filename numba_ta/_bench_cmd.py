"""``numba-ta bench``: find the benchmark suite of a numba_ta source checkout and run its report.

The benchmarks are not part of the installed package: the workloads, their
baselines, the timing, the table, the JSON and the chart live in the source
repository's ``asv_bench/`` folder (``benchmarks/workloads.py`` and
``benchmarks/report.py``), beside the asv suite that times the same workloads.
This module only finds that folder and hands the options over to
``benchmarks.report.main``, which parses them.

Where it looks, first match wins:

1. ``--bench-dir DIR`` (the ``asv_bench`` folder, or the checkout that holds it);
2. the environment variable ``NUMBA_TA_BENCH_DIR`` (the same);
3. the checkout numba_ta is imported from (a clone, or an editable install of one);
4. the current directory and its parents (a clone with numba_ta installed from it).

Without a suite (numba_ta installed from a wheel, outside a clone) it prints how
to get one and exits with status 1.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

#: Environment variable naming the suite's folder.
ENV_VAR = "NUMBA_TA_BENCH_DIR"

#: Printed when no suite is found (after the places looked in).
HOW_TO = """\
The benchmarks live in the asv_bench/ folder of numba_ta's source repository, not in the installed
package. Run them from a clone:

    git clone <numba_ta repository URL> numba_ta && cd numba_ta
    pip install -e ".[bench]"
    numba-ta bench --quick

or point this command at a clone's asv_bench folder: numba-ta bench --bench-dir PATH/asv_bench
(or NUMBA_TA_BENCH_DIR=PATH/asv_bench)."""


def _is_suite(path):
    return (path / "asv.conf.json").is_file() and (path / "benchmarks" / "report.py").is_file()


def _suite_in(path):
    """Return the suite at `path` (an ``asv_bench`` folder or a checkout holding one), or None."""
    path = Path(path).expanduser().resolve()
    for candidate in (path, path / "asv_bench"):
        if _is_suite(candidate):
            return candidate
    return None


def _checkout_root():
    """Return the folder that holds the numba_ta package being run (a checkout's root, or site-packages)."""
    return Path(__file__).resolve().parent.parent


def find_suite(bench_dir=None):
    """Locate the benchmark suite.

    Parameters
    ----------
    bench_dir : str or os.PathLike, optional
        The ``--bench-dir`` option.

    Returns
    -------
    suite : pathlib.Path or None
        The ``asv_bench`` folder found.
    looked : list of str
        Where it looked, for the message when nothing is found.

    Raises
    ------
    ValueError
        If `bench_dir` or ``NUMBA_TA_BENCH_DIR`` is given but holds no suite.
    """
    for source, value in (("--bench-dir", bench_dir), (ENV_VAR, os.environ.get(ENV_VAR) or None)):
        if value is not None:
            suite = _suite_in(value)
            if suite is None:
                raise ValueError(
                    f"{source}: no benchmark suite in {value} (expected an asv_bench folder with "
                    "asv.conf.json and benchmarks/report.py, or a numba_ta checkout holding one)"
                )
            return suite, [str(value)]
    looked = []
    try:
        cwd = Path.cwd().resolve()
        here = [cwd, *cwd.parents]
    except OSError:  # the current directory was deleted
        here = []
    for place in (_checkout_root(), *here):
        if str(place) in looked:
            continue
        looked.append(str(place))
        suite = _suite_in(place)
        if suite is not None:
            return suite, looked
    return None, looked


def _split_bench_dir(argv):
    """``(value of --bench-dir or None, the other arguments)``; raises ValueError without a value."""
    rest, bench_dir = [], None
    it = iter(argv)
    for arg in it:
        if arg == "--":  # everything after it belongs to the report
            rest.append(arg)
            rest.extend(it)
        elif arg == "--bench-dir":
            bench_dir = next(it, None)
            if bench_dir is None:
                raise ValueError("--bench-dir: expected a directory")
        elif arg.startswith("--bench-dir="):
            bench_dir = arg.split("=", 1)[1]
        else:
            rest.append(arg)
    return bench_dir, rest


def load_report(suite):
    """Import the suite's ``benchmarks.report`` module (``benchmarks`` as asv imports it)."""
    package = suite / "benchmarks"
    loaded = sys.modules.get("benchmarks")
    if loaded is not None:
        where = [Path(p).resolve() for p in getattr(loaded, "__path__", [])]
        if package.resolve() not in where:
            found = where[0] if where else getattr(loaded, "__file__", "?")
            raise ImportError(f"another module named 'benchmarks' is already imported (from {found})")
    if str(suite) not in sys.path:
        sys.path.insert(0, str(suite))
    return importlib.import_module("benchmarks.report")


def run(argv, out, prog="numba-ta bench"):
    """Run ``numba-ta bench`` with the options `argv`; return the exit status.

    0 on success; 1 if a case failed or no benchmark suite was found; 2 for bad
    options (one ``numba-ta bench: error: ...`` line on stderr).
    """
    try:
        bench_dir, rest = _split_bench_dir(list(argv))
        suite, looked = find_suite(bench_dir)
    except ValueError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2
    if suite is None:
        print(
            f"{prog}: error: no benchmark suite found (looked for asv_bench/ in: {', '.join(looked)})\n\n{HOW_TO}",
            file=sys.stderr,
        )
        return 1
    try:
        report = load_report(suite)
    except ImportError as e:
        print(f"{prog}: error: cannot load the benchmark suite in {suite}: {e}", file=sys.stderr)
        return 1
    return report.main(
        rest,
        prog=prog,
        out=out,
        epilog=f"benchmark suite in use: {suite}",
        bench_dir_help=(
            f"the asv_bench folder to use (default: ${ENV_VAR}, else the checkout numba_ta is imported from, "
            "else the current directory or one of its parents)"
        ),
    )
