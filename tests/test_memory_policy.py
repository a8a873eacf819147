"""Memory follows the data: bytes allocated (``tracemalloc``, which sees numpy's buffers) by arrays
whose size or capacity is far larger than what is written.

The budget (``docs/performance.rst``, "Memory"): the bytes of the elements written, times a
small factor for geometric growth, plus the per-slot metadata (13 bytes: a uint8 state, an
int32 shape id, an int64 offset), whatever ``size`` or the capacity is.  Each test first runs
its ops once on a small array (kernels compiled or loaded, numpy's caches filled), then
measures the peak of traced bytes while the real ops run; the inputs exist before the
measurement starts.  No timing here.
"""

from __future__ import annotations

import gc
import pickle
import tracemalloc

import numpy as np
import pytest

import numba_ta
from numba_ta import raw_ops
from numba_ta.core import config as _config
from numba_ta.core.state import DENSE, RAGGED

META_PER_SLOT = 13  # bytes of metadata per slot (uint8 + int32 + int64)
SLOT_BUDGET = 16  # bytes per slot allowed in the budget of the targets


def peak_bytes(run, *args):
    """Peak bytes traced while ``run(*args)`` runs (its result is dropped inside the measurement)."""
    gc.collect()
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        out = run(*args)
        peak = tracemalloc.get_traced_memory()[1]
        del out
    finally:
        tracemalloc.stop()
    return peak


def test_large_size_one_large_write():
    """size 10**6, one write of 100,000 float32: < 2x the element's bytes + 16 bytes per slot."""
    value = np.ones(100_000, np.float32)

    def run(size, v):
        h, f = raw_ops.TensorArrayV3(size=size, dtype=np.float32)
        raw_ops.TensorArrayWriteV3(handle=h, index=0, value=v, flow_in=f)
        return h

    run(10, value)
    peak = peak_bytes(run, 10**6, value)
    assert peak < 2 * value.nbytes + SLOT_BUDGET * 10**6, peak
    h = run(10**6, value)
    np.testing.assert_array_equal(raw_ops.TensorArrayReadV3(handle=h, index=0, flow_in=0.0, dtype=np.float32), value)


def test_dynamic_writes_far_apart():
    """A dynamic array written at 0 and at 2**20 (1,000 float32 each): < 32 MB (dense: 4 GiB)."""
    value = np.arange(1000, dtype=np.float32)

    def run(far, v):
        h, f = raw_ops.TensorArrayV3(size=0, dtype=np.float32, dynamic_size=True)
        f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=v, flow_in=f)
        raw_ops.TensorArrayWriteV3(handle=h, index=far, value=2 * v, flow_in=f)
        return h

    run(100, value)
    peak = peak_bytes(run, 2**20, value)
    assert peak < 32 * 2**20, peak
    h = run(2**20, value)
    assert raw_ops.TensorArraySizeV3(handle=h, flow_in=0.0) == 2**20 + 1
    got = raw_ops.TensorArrayGatherV3(handle=h, indices=[0, 2**20], flow_in=0.0, dtype=np.float32)
    np.testing.assert_array_equal(got, np.stack([value, 2 * value]))


def test_class_write_far_past_the_end():
    """The class, dynamic, element_shape known: one write at index 5,000,000 takes its row, not 5M rows."""
    row = np.ones(256, np.float64)

    def run(index, r):
        ta = numba_ta.TensorArray(np.float64, size=0, dynamic_size=True, element_shape=[256])
        return ta.write(index, r)

    run(10, row)
    peak = peak_bytes(run, 5_000_000, row)
    assert peak < 4 * row.nbytes + SLOT_BUDGET * 2 * 5_000_001, peak  # the capacity may double: 2x slots


def test_sparse_scatter_into_a_large_static_array():
    """Three 1,000-float64 rows scattered over 10**6 slots: their bytes plus metadata."""
    rows = np.arange(3000, dtype=np.float64).reshape(3, 1000)
    idx = np.array([999_999, 5, 500_000])

    def run(size, i, r):
        h, f = raw_ops.TensorArrayV3(size=size, dtype=np.float64)
        raw_ops.TensorArrayScatterV3(handle=h, indices=i, value=r, flow_in=f)
        return h

    run(10, np.array([9, 0, 5]), rows)
    peak = peak_bytes(run, 10**6, idx, rows)
    assert peak < 2 * rows.nbytes + SLOT_BUDGET * 10**6, peak
    h = run(10**6, idx, rows)
    got = raw_ops.TensorArrayGatherV3(handle=h, indices=idx, flow_in=0.0, dtype=np.float64)
    np.testing.assert_array_equal(got, rows)


def test_reverse_writes_of_large_elements(monkeypatch):
    """A backward pass writes from the last index down: memory stays near the bytes written.

    2,000 elements of 16 KiB (31 MiB, more than the dense layout's slack, made 4 MiB here) written
    in reverse: the first write is at the end of the array, where a dense buffer needs every row.
    """
    monkeypatch.setattr(_config, "DENSE_SLACK_BYTES", 4 << 20)
    n, width = 2000, 4096
    values = np.random.default_rng(0).standard_normal((n, width)).astype(np.float32)

    def run(size, vals):
        h, f = raw_ops.TensorArrayV3(size=size, dtype=np.float32, element_shape=[width])
        for i in range(size - 1, -1, -1):
            f = raw_ops.TensorArrayWriteV3(handle=h, index=i, value=vals[i], flow_in=f)
        return h

    run(4, values)
    written = values.nbytes
    peak = peak_bytes(run, n, values)
    assert peak < 2 * written + SLOT_BUDGET * n + 2**20, (peak, written)
    h = run(n, values)
    assert h._storage.layout == RAGGED
    np.testing.assert_array_equal(raw_ops.TensorArrayGatherV3(handle=h, indices=np.arange(n), flow_in=0.0,
                                                              dtype=np.float32), values)  # fmt: skip


def test_dense_growth_stays_within_three_times_the_data():
    """Sequential writes to a dynamic array: geometric growth, old and new buffers at once at most."""
    n, width = 20_000, 256
    values = np.ones((n, width), np.float32)

    def run(size, vals):
        ta = numba_ta.TensorArray(np.float32, size=0, dynamic_size=True, element_shape=[width])
        for i in range(size):
            ta = ta.write(i, vals[i])
        return ta

    run(10, values)
    peak = peak_bytes(run, n, values)
    assert peak < 3 * values.nbytes + 2 * SLOT_BUDGET * n + 2**20, (peak, values.nbytes)
    ta = run(n, values)
    assert ta.handle._storage.layout == DENSE  # dense writes keep the dense layout
    np.testing.assert_array_equal(ta.stack(), values)


def test_dense_writes_keep_one_contiguous_buffer():
    """Writes in order (and a small array written in any order) stay dense: stack is one copy or a view."""
    ta = numba_ta.TensorArray(np.float32, size=100, element_shape=[64])
    rows = np.arange(6400, dtype=np.float32).reshape(100, 64)
    for i in np.random.default_rng(1).permutation(100):
        ta = ta.write(int(i), rows[i])
    s = ta.handle._storage
    assert s.layout == DENSE and s.data.size == 100 * 64
    view = raw_ops.TensorArrayGatherV3(handle=ta.handle, indices=np.arange(100), flow_in=ta.flow, dtype=np.float32)
    np.testing.assert_array_equal(view, rows)


def test_unpickled_sparse_array_takes_its_data_only():
    """Unpickling lays a sparse array out by the same policy: not dense over its whole size."""
    value = np.ones(100_000, np.float32)
    h, f = raw_ops.TensorArrayV3(size=10**6, dtype=np.float32)
    raw_ops.TensorArrayWriteV3(handle=h, index=999_999, value=value, flow_in=f)
    blob = pickle.dumps(h)
    pickle.loads(pickle.dumps(raw_ops.TensorArrayV3(size=2, dtype=np.float32)[0]))  # warm-up
    peak = peak_bytes(pickle.loads, blob)
    assert peak < 2 * value.nbytes + 2 * SLOT_BUDGET * 10**6 + len(blob), peak
    h2 = pickle.loads(blob)
    np.testing.assert_array_equal(raw_ops.TensorArrayReadV3(handle=h2, index=999_999, flow_in=0.0,
                                                            dtype=np.float32), value)  # fmt: skip


@pytest.mark.parametrize("policy", [(0, 2), (0, 0)])
def test_tight_policies_give_the_same_results(monkeypatch, policy):
    """With no slack (sparse writes turn ragged) or no dense layout at all, the ops still agree."""
    monkeypatch.setattr(_config, "DENSE_SLACK_BYTES", policy[0])
    monkeypatch.setattr(_config, "DENSE_FACTOR", policy[1])
    rows = np.arange(40, dtype=np.float64).reshape(10, 4)
    ta = numba_ta.TensorArray(np.float64, size=0, dynamic_size=True, element_shape=[4], clear_after_read=False)
    for i in (9, 0, 1, 2, 5, 3, 4, 6, 8, 7):
        ta = ta.write(i, rows[i])
    np.testing.assert_array_equal(ta.stack(), rows)
    np.testing.assert_array_equal(ta.gather([7, 2]), rows[[7, 2]])
    np.testing.assert_array_equal(ta.concat(), rows.reshape(-1))
    g = ta.grad("g", flow=ta.flow)
    g = g.scatter([3, 3, 1], rows[:3]).write(1, rows[4])
    np.testing.assert_array_equal(g.read(3), rows[0] + rows[1])
    np.testing.assert_array_equal(g.read(1), rows[2] + rows[4])
    assert np.all(g.read(9) == 0)
