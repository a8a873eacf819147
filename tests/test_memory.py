"""Memory: no leaks, prompt freeing, a registry without dead entries.

* :func:`test_many_arrays_rss_flat`: after a warm-up, creating, filling and closing
  :data:`N_ARRAYS` (10^5) arrays leaves the resident set size (``/proc/self/statm``)
  within :data:`RSS_SLACK_MB` of where it started; a second batch dropped *without*
  ``close`` does too.
* Arrays whose handles are dropped without ``close`` are freed by reference counting alone
  (checked with a weakref on ``handle._storage`` while the cyclic GC is disabled), also
  when the last op on them raised, also for gradient arrays and ``TensorArray`` objects.
* ``close`` frees the storage at once (``_storage.data is None``, no metadata left).
* ``numba_ta.tensor_array.registry.live_arrays()`` lists exactly the arrays still alive.
"""

from __future__ import annotations

import gc
import os
import sys
import weakref

import numpy as np
import pytest

from numba_ta import TensorArray, raw_ops
from numba_ta.errors import OpError
from numba_ta.tensor_array import registry as _registry

N_ARRAYS = 100_000
WARMUP = 10_000
RSS_SLACK_MB = 4.0
F0 = np.float32(0.0)

pytestmark = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc/self/statm")


def rss_mb():
    with open("/proc/self/statm") as f:
        resident = int(f.read().split()[1])
    return resident * os.sysconf("SC_PAGE_SIZE") / 2**20


class nogc:  # used like a function
    """Disable the cyclic garbage collector inside the block (only reference counting frees)."""

    def __enter__(self):
        self.was = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc):
        if self.was:
            gc.enable()


ROW = np.arange(4, dtype=np.float32)
BLOCK = np.arange(16, dtype=np.float32).reshape(4, 4)
IDX = np.arange(4)


def cycle(n, close=True):
    """Create, fill (write or scatter; every 10th also a gradient array) and close ``n`` arrays."""
    for k in range(n):
        h, f = raw_ops.TensorArrayV3(size=4, dtype=np.float32, element_shape=[4], dynamic_size=k % 3 == 0)
        if k % 10:
            f = raw_ops.TensorArrayWriteV3(handle=h, index=k % 4, value=ROW, flow_in=f)
        else:
            f = raw_ops.TensorArrayScatterV3(handle=h, indices=IDX, value=BLOCK, flow_in=f)
            g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
            raw_ops.TensorArrayWriteV3(handle=g, index=1, value=ROW, flow_in=gf)
            raw_ops.TensorArrayWriteV3(handle=g, index=1, value=ROW, flow_in=gf)
            raw_ops.TensorArrayReadV3(handle=g, index=1, flow_in=gf, dtype=np.float32)
            if close:
                raw_ops.TensorArrayCloseV3(handle=g)
        if close:
            raw_ops.TensorArrayCloseV3(handle=h)


def test_many_arrays_rss_flat(record_property):
    cycle(WARMUP)
    cycle(WARMUP, close=False)
    gc.collect()
    before = rss_mb()
    cycle(N_ARRAYS)
    gc.collect()
    after_closed = rss_mb()
    cycle(N_ARRAYS // 2, close=False)
    gc.collect()
    after_dropped = rss_mb()
    record_property("rss_before_mb", round(before, 2))
    record_property("rss_after_close_mb", round(after_closed, 2))
    record_property("rss_after_drop_mb", round(after_dropped, 2))
    print(
        f"\nRSS: {before:.1f} MB before, {after_closed:.1f} MB after {N_ARRAYS} arrays created, filled, closed, "
        f"{after_dropped:.1f} MB after {N_ARRAYS // 2} more dropped without close"
    )
    assert after_closed - before < RSS_SLACK_MB, (before, after_closed)
    assert after_dropped - before < RSS_SLACK_MB, (before, after_dropped)
    assert _registry.live_arrays() == []


def _make(dtype=np.float32, **kw):
    h, f = raw_ops.TensorArrayV3(size=3, dtype=dtype, element_shape=[2], **kw)
    raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones(2, dtype), flow_in=f)
    return h, f


def test_dropped_handles_freed_by_refcount():
    with nogc():
        h, f = _make()
        ref = weakref.ref(h._storage)
        name = h.name
        assert name in _registry.live_arrays()
        del h
        assert ref() is None
        assert name not in _registry.live_arrays()


def test_dropped_gradient_arrays_freed():
    with nogc():
        h, f = _make()
        g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
        raw_ops.TensorArrayWriteV3(handle=g, index=0, value=np.ones(2, np.float32), flow_in=gf)
        rf, rg = weakref.ref(h._storage), weakref.ref(g._storage)
        del h  # the gradient array outlives its forward array, and stays usable
        assert rf() is None and rg() is not None
        raw_ops.TensorArrayWriteV3(handle=g, index=0, value=np.ones(2, np.float32), flow_in=gf)
        np.testing.assert_array_equal(
            raw_ops.TensorArrayReadV3(handle=g, index=0, flow_in=gf, dtype=np.float32), [2, 2]
        )
        del g
        assert rg() is None
        # forward dropped while the gradient handle was never kept
        h, f = _make()
        raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
        rf = weakref.ref(h._storage)
        rg = weakref.ref(h._storage.grads["gradients"])
        del h
        assert rf() is None and rg() is None


def test_tensor_array_objects_freed():
    with nogc():
        ta = TensorArray(np.float32, size=3, element_shape=[2])
        ta = ta.write(0, np.ones(2, np.float32))
        g = ta.grad("gradients")
        g = g.write(0, np.ones(2, np.float32))
        stack = ta.stack()
        refs = [weakref.ref(ta.handle._storage), weakref.ref(g.handle._storage)]
        del ta, g
        assert [r() for r in refs] == [None, None]
        assert stack.shape == (3, 2)  # results are the caller's, independent of the array


def _fail_ops():
    """(label, op that raises on an array made by _make) for every op and error path."""
    one = np.ones(2, np.float32)
    return [
        ("write twice", lambda h: raw_ops.TensorArrayWriteV3(handle=h, index=0, value=one, flow_in=F0)),
        ("write bad dtype", lambda h: raw_ops.TensorArrayWriteV3(handle=h, index=1, value=np.ones(2), flow_in=F0)),
        ("read oob", lambda h: raw_ops.TensorArrayReadV3(handle=h, index=7, flow_in=F0, dtype=np.float32)),
        ("gather oob", lambda h: raw_ops.TensorArrayGatherV3(handle=h, indices=[0, 9], flow_in=F0, dtype=np.float32)),
        ("scatter written", lambda h: raw_ops.TensorArrayScatterV3(handle=h, indices=[0], value=one[None], flow_in=F0)),
        (
            "scatter duplicate",
            lambda h: raw_ops.TensorArrayScatterV3(
                handle=h, indices=[1, 1], value=np.ones((2, 2), np.float32), flow_in=F0
            ),
        ),
        ("scatter oob", lambda h: raw_ops.TensorArrayScatterV3(handle=h, indices=[5], value=one[None], flow_in=F0)),
        (
            "split written",
            lambda h: raw_ops.TensorArraySplitV3(
                handle=h, value=np.ones((6,), np.float32), lengths=[2, 2, 2], flow_in=F0
            ),
        ),
        ("split sizes", lambda h: raw_ops.TensorArraySplitV3(handle=h, value=one, lengths=[2], flow_in=F0)),
        ("concat", lambda h: raw_ops.TensorArrayConcatV3(handle=h, flow_in=F0, dtype=np.float64)),
        (
            "grad shape",
            lambda h: raw_ops.TensorArrayGradWithShape(handle=h, flow_in=F0, shape_to_prepend=[-1], source="s"),
        ),
    ]


@pytest.mark.parametrize("label,op", _fail_ops(), ids=[x[0] for x in _fail_ops()])
def test_failed_op_does_not_keep_array_alive(label, op):
    """After an op raised, dropping the handle (and the error) frees the array without the cyclic GC."""
    with nogc():
        h, f = _make()
        ref = weakref.ref(h._storage)
        with pytest.raises(OpError):
            op(h)
        del h
        sys.last_value = sys.last_traceback = None
        assert ref() is None, f"{label}: the array survives its handle (a reference cycle through the error?)"
    gc.collect()


def test_close_frees_storage_at_once():
    h, f = raw_ops.TensorArrayV3(size=1000, dtype=np.float64, element_shape=[100])
    raw_ops.TensorArrayScatterV3(handle=h, indices=np.arange(1000), value=np.ones((1000, 100)), flow_in=f)
    s = h._storage
    assert s.data is not None and s.data.nbytes >= 800_000
    data_ref = weakref.ref(s.data) if hasattr(s.data, "__weakref__") else None
    raw_ops.TensorArrayCloseV3(handle=h)
    assert s.data is None and s.size == 0 and s.closed
    assert len(s.state) == 0 and len(s.offsets) == 0 and len(s.shape_id) == 0
    if data_ref is not None:
        assert data_ref() is None
    # a dynamic array that grew, and a ragged one
    h, f = raw_ops.TensorArrayV3(size=0, dtype=np.float32, dynamic_size=True)
    for i in range(100):
        raw_ops.TensorArrayWriteV3(handle=h, index=i, value=np.ones(i % 3 + 1, np.float32), flow_in=f)
    raw_ops.TensorArrayCloseV3(handle=h)
    assert h._storage.data is None and h._storage.cap == 0


def test_closed_array_keeps_no_gradient_alive():
    """A closed forward array does not keep its (dropped) gradient arrays' storage alive."""
    with nogc():
        h, f = _make()
        g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
        raw_ops.TensorArrayWriteV3(handle=g, index=1, value=np.ones(2, np.float32), flow_in=gf)
        rg = weakref.ref(g._storage)
        raw_ops.TensorArrayCloseV3(handle=h)
        del g
        assert rg() is None, "the closed forward array still holds its gradient array"
        assert h._storage.closed


def _populate():
    """300 arrays: a third kept, a third closed, a third dropped; some with gradient arrays."""
    kept = []
    for k in range(300):
        h, f = _make()
        if k % 10 == 0:
            g, _ = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="g")
            if k % 20 == 0:
                kept.append(g)
        if k % 3 == 0:
            kept.append(h)
        elif k % 3 == 1:
            raw_ops.TensorArrayCloseV3(handle=h)
    return kept


def test_registry_has_no_dead_entries():
    with nogc():
        kept = _populate()
        live = set(_registry.live_arrays())
        want = {h.name for h in kept}
        # gradient arrays stay alive through their forward array's handle
        want |= {fh._storage.grads[s].name for fh in kept for s in fh._storage.grads}
        assert live == want, (sorted(live - want)[:5], sorted(want - live)[:5])
        del kept
        assert _registry.live_arrays() == []
