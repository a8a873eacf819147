"""Shared fixtures: a seeded rng, the parallel-kernel switch, a fresh registry, hypothesis profiles.

Under ``NUMBA_DISABLE_JIT=1`` (numba's debugging mode: the kernels run as plain Python) the
tests marked ``jit_only`` are skipped: they check what only compiled kernels have (dispatchers,
their decorator options and cache, released GIL).  Every other test runs.
"""

import os

import numba
import numpy as np
import pytest

from numba_ta import _config, _registry

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
        "ignore:(invalid value|overflow) encountered in scalar:RuntimeWarning:numba_ta._kernels"
    )
    for item in items:
        mark = item.get_closest_marker("jit_only")
        if mark is not None:
            why = mark.args[0] if mark.args else "needs compiled kernels"
            item.add_marker(pytest.mark.skip(reason=f"NUMBA_DISABLE_JIT=1: {why}"))
        item.add_marker(quiet)
