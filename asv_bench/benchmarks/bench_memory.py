"""Memory that follows the data: bytes allocated by arrays much larger than what is written.

``track_bytes`` reports the peak bytes ``tracemalloc`` traces (numpy reports its
buffers to it) while the workload runs, after a warm-up run of the same ops on a
small array; ``time_ops`` times the same workloads.  Cases (the documentation's
Performance page, "Memory"):

``size1e6_one_write``
    ``TensorArrayV3(size=10**6, float32)`` and one write of 100,000 float32 at
    index 0 (a dense buffer would be 400 GB).
``dynamic_far_write``
    A dynamic array written at index 0 and at index ``2**20``, 1,000 float32
    each (a dense buffer grown to the far index would be 4 GiB).
``reverse_large``
    1,000 elements of 32,768 float32 written from the last index down, as a
    backward pass does (125 MiB of data, more than the dense layout's 64 MiB
    slack: the array turns ragged).
``forward_large``
    The same elements written in order (the dense layout, for comparison).

The baseline is the bytes written (``written``, a parameter of the report):
``track_ratio`` divides the peak by them plus 16 bytes per slot, the budget of
the documented goal (a ratio below 2 meets it).
"""

import gc
import tracemalloc

import numpy as np

from numba_ta import raw_ops

CASES = ["size1e6_one_write", "dynamic_far_write", "reverse_large", "forward_large"]


def _run(case, small=False):
    """Run ``case`` (a small version for the warm-up); return (handle, bytes written, slots)."""
    if case == "size1e6_one_write":
        size, v = (10, np.ones(10, np.float32)) if small else (10**6, np.ones(100_000, np.float32))
        h, f = raw_ops.TensorArrayV3(size=size, dtype=np.float32)
        raw_ops.TensorArrayWriteV3(handle=h, index=0, value=v, flow_in=f)
        return h, v.nbytes, size
    if case == "dynamic_far_write":
        far, v = (100 if small else 2**20), np.ones(1000, np.float32)
        h, f = raw_ops.TensorArrayV3(size=0, dtype=np.float32, dynamic_size=True)
        f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=v, flow_in=f)
        raw_ops.TensorArrayWriteV3(handle=h, index=far, value=v, flow_in=f)
        return h, 2 * v.nbytes, far + 1
    n = 4 if small else 1000
    row = np.ones(32768, np.float32)
    h, f = raw_ops.TensorArrayV3(size=n, dtype=np.float32, element_shape=[32768])
    order = range(n - 1, -1, -1) if case == "reverse_large" else range(n)
    for i in order:
        f = raw_ops.TensorArrayWriteV3(handle=h, index=i, value=row, flow_in=f)
    return h, n * row.nbytes, n


def _peak(case):
    _run(case, small=True)
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        h, written, slots = _run(case)
        peak = tracemalloc.get_traced_memory()[1]
        del h
    finally:
        tracemalloc.stop()
    return peak, written, slots


class MemoryPolicy:
    params = [CASES]
    param_names = ["case"]
    timeout = 300

    def setup(self, case):
        _run(case, small=True)  # kernels compiled or loaded, outside the timing

    def time_ops(self, case):
        _run(case)

    def track_bytes(self, case):
        return _peak(case)[0]

    track_bytes.unit = "bytes"

    def track_ratio(self, case):
        peak, written, slots = _peak(case)
        return peak / (written + 16 * slots)

    track_ratio.unit = "ratio"
