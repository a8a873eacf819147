"""Two Python threads on two different arrays against the same work one after the other.

The kernels are compiled ``nogil``: two threads gathering from two large arrays
should take less wall time than the two gathers in sequence.  Each job
gathers 32768 random rows of 256 float32 (32 MiB) from its own 16 MiB array,
with the serial kernels (one core per thread).  ``time_two_jobs`` is the wall
time of both jobs; ``track_threads_over_serial`` is the ratio of the two modes'
medians in one process (below 1: the threads overlap).
"""

import statistics
import threading
import time

import numpy as np

from numba_ta import raw_ops

try:
    from numba_ta.core import config as _config
except ImportError:  # a commit before the layout by folders (the suite times old commits too)
    from numba_ta import _config

F0 = np.float32(0.0)
N, WIDTH, M = 1 << 14, 256, 1 << 15


def _arrays():
    out = []
    for s in range(2):
        h, f = raw_ops.TensorArrayV3(size=N, dtype=np.float32, element_shape=[WIDTH], clear_after_read=False)
        value = np.random.default_rng(s).random((N, WIDTH), dtype=np.float32)
        raw_ops.TensorArrayScatterV3(handle=h, indices=np.arange(N), value=value, flow_in=f)
        out.append((h, np.random.default_rng(10 + s).integers(0, N, M)))
    return out


def _job(array):
    h, idx = array
    raw_ops.TensorArrayGatherV3(handle=h, indices=idx, flow_in=F0, dtype=np.float32)


def _run(arrays, mode):
    if mode == "serial":
        for a in arrays:
            _job(a)
        return
    threads = [threading.Thread(target=_job, args=(a,)) for a in arrays]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


class TwoThreads:
    params = [["serial", "two_threads"]]
    param_names = ["mode"]

    def setup(self, mode):
        self._threshold = _config.PARALLEL_MIN_ELEMENTS
        _config.PARALLEL_MIN_ELEMENTS = 1 << 62  # serial kernels: one core per thread
        self.arrays = _arrays()
        _run(self.arrays, mode)  # compile, fault in

    def teardown(self, mode):
        _config.PARALLEL_MIN_ELEMENTS = self._threshold

    def time_two_jobs(self, mode):
        _run(self.arrays, mode)


class TwoThreadsRatio:
    unit = "ratio"

    def setup(self):
        self._threshold = _config.PARALLEL_MIN_ELEMENTS
        _config.PARALLEL_MIN_ELEMENTS = 1 << 62
        self.arrays = _arrays()
        _run(self.arrays, "serial")

    def teardown(self):
        _config.PARALLEL_MIN_ELEMENTS = self._threshold

    def track_threads_over_serial(self):
        times = {"serial": [], "two_threads": []}
        for _ in range(7):
            for mode, ts in times.items():
                t = time.perf_counter()
                _run(self.arrays, mode)
                ts.append(time.perf_counter() - t)
        return statistics.median(times["two_threads"]) / statistics.median(times["serial"])
