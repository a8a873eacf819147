"""Thread control and the parallel threshold."""

import os
import subprocess
import sys

import numba
import numpy as np
import pytest

import numba_ta
from numba_ta.core import config as _config


def test_num_threads_restores_even_on_error():
    before = numba.get_num_threads()
    with numba_ta.num_threads(1) as old:
        assert old == before
        assert numba.get_num_threads() == 1
    assert numba.get_num_threads() == before
    with pytest.raises(RuntimeError), numba_ta.num_threads(1):
        raise RuntimeError("boom")
    assert numba.get_num_threads() == before


def test_num_threads_rejects_too_many():
    with pytest.raises(ValueError), numba_ta.num_threads(numba.config.NUMBA_NUM_THREADS + 1):
        pass  # pragma: no cover


def test_parallel_threshold_roundtrip_and_errors():
    old = numba_ta.set_parallel_threshold(5)
    try:
        assert numba_ta.get_parallel_threshold() == 5 == _config.PARALLEL_MIN_ELEMENTS
    finally:
        numba_ta.set_parallel_threshold(old)
    assert numba_ta.get_parallel_threshold() == old
    with pytest.raises(ValueError):
        numba_ta.set_parallel_threshold(-1)
    with pytest.raises(TypeError):
        numba_ta.set_parallel_threshold(1.5)


def test_parallel_kernels_give_the_same_results(rng):
    value = rng.random((64, 33))
    results = []
    for threshold in (1 << 62, 0):
        old = numba_ta.set_parallel_threshold(threshold)
        try:
            ta = numba_ta.TensorArray(np.float64, size=64, clear_after_read=False).unstack(value)
            results.append((ta.stack(), ta.gather(np.arange(63, -1, -1)), ta.concat()))
        finally:
            numba_ta.set_parallel_threshold(old)
    for a, b in zip(*results, strict=True):
        np.testing.assert_array_equal(a, b)


def test_threshold_from_environment():
    env = dict(os.environ, NUMBA_TA_PARALLEL_MIN_ELEMENTS="123")
    out = subprocess.run(
        [sys.executable, "-c", "import numba_ta; print(numba_ta.get_parallel_threshold())"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.strip() == "123"
    env["NUMBA_TA_PARALLEL_MIN_ELEMENTS"] = "lots"
    bad = subprocess.run([sys.executable, "-c", "import numba_ta"], env=env, capture_output=True, text=True)
    assert bad.returncode != 0 and "NUMBA_TA_PARALLEL_MIN_ELEMENTS must be an integer" in bad.stderr
