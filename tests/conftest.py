"""Shared fixtures: a seeded rng, the parallel-kernel switch, a fresh registry, hypothesis profiles."""

import os

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
