"""Shared fixtures: a seeded rng, the parallel-kernel switch, TensorFlow, a fresh registry, hypothesis profiles,
the state machines' report.

Under ``NUMBA_DISABLE_JIT=1`` (numba's debugging mode: the kernels run as plain Python) the
tests marked ``jit_only`` are skipped: they check what only compiled kernels have (dispatchers,
their decorator options and cache, released GIL).  Every other test runs.

The ``oracle`` tests compare numba_ta with TensorFlow and skip without it, so that ``pytest``
runs anywhere.  Under ``CI=true`` a skipped oracle must not pass for a green one: when oracle
tests are selected, TensorFlow must import (else the run stops, exit status 4), and an oracle
test that skips fails instead.  Every run that selects oracle tests (and every CI run) ends with
a line counting them: ``oracle tests (TensorFlow 2.21.0): 827 passed, 0 failed, 0 skipped``.
"""

import os
import sys

import numba
import numpy as np
import pytest

from numba_ta.core import config as _config
from numba_ta.tensor_array import registry as _registry

try:
    from hypothesis import HealthCheck, settings

    settings.register_profile(
        "ci", deadline=None, max_examples=200, suppress_health_check=[HealthCheck.too_slow]
    )
    settings.register_profile(
        "long", deadline=None, max_examples=20_000, suppress_health_check=[HealthCheck.too_slow]
    )
    settings.load_profile(os.environ.get("NUMBA_TA_HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # pragma: no cover - hypothesis is a test extra
    pass


@pytest.fixture(scope="session")
def rng():
    """One seeded generator for the session."""
    return np.random.default_rng(20261122)


@pytest.fixture(params=[False, True], ids=["serial", "parallel"])
def parallel(request, monkeypatch):
    """Run a test with the serial kernels, then with the parallel ones forced on tiny inputs."""
    monkeypatch.setattr(_config, "PARALLEL_MIN_ELEMENTS", 0 if request.param else 1 << 62)
    return request.param


@pytest.fixture(scope="module")
def tf():
    """TensorFlow, the oracle, imported on first use (quietly); a test that asks for it skips without it."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    return pytest.importorskip("tensorflow")


@pytest.fixture
def machine_figures(record_property):
    """Check and record what a hypothesis state machine ran: call it as ``machine_figures(counts, prefix)``.

    ``counts`` is the machine's module-level tally (``examples``, ``ops``, ``errors`` ...). The
    test skips when the machine did not run in this session (the test was selected alone); else
    every count is recorded as the property ``<prefix>_<key>``, and the machine must have run
    more ops than examples, some of them failing and not all.
    """

    def check(counts, prefix):
        if not counts["examples"]:
            pytest.skip("the state machine did not run in this session (selected alone)")
        for k, v in counts.items():
            record_property(f"{prefix}_{k}", v)
        assert counts["ops"] > counts["examples"] and 0 < counts["errors"] < counts["ops"], counts

    return check


@pytest.fixture(autouse=True)
def _fresh_registry():
    yield
    _registry._reset()


def pytest_collection_modifyitems(config, items):
    """With the JIT off: skip the ``jit_only`` tests, and let the plain-Python kernels' numpy warn.

    Compiled kernels do IEEE arithmetic silently (``inf + -inf`` is NaN, integer sums wrap, as in
    TF); run as plain Python, the same sums on numpy scalars give the same values but emit
    ``RuntimeWarning: invalid value encountered in scalar add`` (or ``overflow ...``), which the
    suite turns into errors.  Only those warnings, raised in ``_kernels``, are ignored, and only
    in this mode.
    """
    if not numba.config.DISABLE_JIT:
        return
    quiet = pytest.mark.filterwarnings(
        "ignore:(invalid value|overflow) encountered in scalar:RuntimeWarning:numba_ta.core.kernels"
    )
    for item in items:
        mark = item.get_closest_marker("jit_only")
        if mark is not None:
            why = mark.args[0] if mark.args else "needs compiled kernels"
            item.add_marker(pytest.mark.skip(reason=f"NUMBA_DISABLE_JIT=1: {why}"))
        item.add_marker(quiet)


# --------------------------------------------------------------------------- the oracle under CI

_CI = os.environ.get("CI", "").strip().lower() == "true"
_NO_TF_MODULES = set()  # modules skipped at collection for want of TensorFlow (module-level importorskip)


def _is_oracle(item_or_report):
    return "oracle" in getattr(item_or_report, "keywords", ())


def pytest_collectreport(report):
    """Note the test modules that skipped themselves for want of TensorFlow."""
    if report.skipped and "tensorflow" in str(report.longrepr):
        _NO_TF_MODULES.add(report.nodeid)  # (a module collected for its tests and its doctests: once)


def pytest_collection_finish(session):
    """Under CI, with oracle tests selected (or skipped at collection), TensorFlow must import."""
    if not _CI or not (_NO_TF_MODULES or any(_is_oracle(item) for item in session.items)):
        return
    try:
        import tensorflow  # noqa: F401
    except Exception as e:  # ImportError, or a broken install raising anything
        pytest.exit(
            f"CI=true: the oracle tests need TensorFlow (pip install '.[oracle]'), which cannot be imported: {e!r}",
            returncode=pytest.ExitCode.USAGE_ERROR,
        )
    if _NO_TF_MODULES:  # pragma: no cover - TensorFlow imports now, so they should not have skipped
        pytest.exit(f"CI=true: test modules skipped for want of TensorFlow: {sorted(_NO_TF_MODULES)}", returncode=4)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Under CI, an oracle test that skips (TensorFlow missing, or any other reason) fails."""
    outcome = yield
    rep = outcome.get_result()
    if _CI and rep.skipped and _is_oracle(item) and not hasattr(rep, "wasxfail"):
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        rep.outcome = "failed"
        rep.longrepr = f"CI=true: an oracle test may not skip ({reason})"


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    """Count the oracle tests that ran: passed, failed (an error in a phase counts), skipped."""
    seen = {}
    for key in ("passed", "failed", "error", "skipped", "xfailed", "xpassed"):
        for rep in terminalreporter.stats.get(key, []):
            if not hasattr(rep, "when") or not _is_oracle(rep):
                continue
            state = {"error": "failed", "xfailed": "skipped", "xpassed": "passed"}.get(key, key)
            if state == "passed" and rep.when != "call":
                continue
            if seen.get(rep.nodeid) != "failed":  # a failure in any phase is the test's outcome
                seen[rep.nodeid] = state
    if not seen and not _NO_TF_MODULES and not _CI:
        return
    counts = {k: sum(v == k for v in seen.values()) for k in ("passed", "failed", "skipped")}
    tf = sys.modules.get("tensorflow")
    version = "TensorFlow not imported"
    if tf is not None and hasattr(tf, "__version__"):
        version = f"TensorFlow {tf.__version__}"
    n = len(_NO_TF_MODULES)
    modules = f", and {n} test module{'s' * (n != 1)} skipped without TensorFlow" if n else ""
    terminalreporter.write_line(
        f"oracle tests ({version}): {counts['passed']} passed, {counts['failed']} failed, {counts['skipped']} skipped"
        + modules
    )
