"""Worker of ``tests/test_fork.py``'s process pool: importable by name in a forkserver worker.

A worker function must be importable in the worker process, which does not run the test
module; it lives here, in a module of its own that imports only numpy and numba_ta.
"""

from __future__ import annotations

import os

import numpy as np

import numba_ta
from numba_ta import raw_ops


def expected(seed, n=6, width=4):
    """The rows that :func:`build` writes for ``seed``: an ``(n, width)`` float32 array."""
    return (np.arange(n * width, dtype=np.float32).reshape(n, width) + 100 * seed).astype(np.float32)


def build(seed, n=6, width=4):
    """Create arrays in this process, write, stack, scatter, gather and sum into a gradient array.

    Even seeds run the parallel (``prange``) kernels (threshold 0), odd seeds the serial ones.
    Returns ``(pid, stacked, gathered, grad_row, size)``.
    """
    numba_ta.set_parallel_threshold(0 if seed % 2 == 0 else 1 << 62)
    rows = expected(seed, n, width)
    h, f = raw_ops.TensorArrayV3(size=n, dtype=np.float32, element_shape=[width])
    for i in range(n):
        f = raw_ops.TensorArrayWriteV3(handle=h, index=i, value=rows[i], flow_in=f)
    stacked = raw_ops.TensorArrayGatherV3(handle=h, indices=np.arange(n), flow_in=f, dtype=np.float32)

    h2, f2 = raw_ops.TensorArrayV3(size=n, dtype=np.float32, element_shape=[width])
    f2 = raw_ops.TensorArrayScatterV3(handle=h2, indices=np.arange(n)[::-1], value=rows, flow_in=f2)
    gathered = raw_ops.TensorArrayGatherV3(handle=h2, indices=[0, n - 1], flow_in=f2, dtype=np.float32)

    g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="pool")
    for _ in range(2):
        gf = raw_ops.TensorArrayWriteV3(handle=g, index=1, value=rows[1], flow_in=gf)
    grad_row = raw_ops.TensorArrayReadV3(handle=g, index=1, flow_in=gf, dtype=np.float32)
    size = int(raw_ops.TensorArraySizeV3(handle=h, flow_in=f))
    return os.getpid(), stacked, gathered, grad_row, size
