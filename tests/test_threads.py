"""Thread safety and GIL release.

* :func:`test_stress_mixed_ops`: 8 threads do :data:`OPS_PER_THREAD` (10^4) mixed raw ops
  each, on shared arrays and on arrays of their own:

  - a shared int64 gradient array receives scatters (with duplicate indices) and writes
    of known values from every thread: the final sums are exact;
  - a shared dynamic array grows while every thread writes its own interleaved indices:
    no write is lost, every value is where it was written;
  - a shared clear-after-read array is read concurrently: each element is handed out
    exactly once (all other reads get TF's T11 error) and with the right value;
  - private arrays go through write / read / gather / scatter / concat / split / size /
    close cycles, checked against the values written;
  - nothing deadlocks: every join has a timeout, and a faulthandler watchdog dumps all
    stacks if the test hangs.

* :func:`test_grad_lookup_or_create_race`, :func:`test_unique_names_under_threads`,
  :func:`test_close_races_with_writes`: the registry and the per-array locks under races.

* nogil: :func:`test_kernels_release_the_gil` shows that the njit kernels run without the
  GIL, without any timing threshold: while a worker thread is inside a kernel call, the
  main thread keeps incrementing a Python counter.  The switch interval is raised to 30 s
  and the counting loop yields with ``time.sleep(0)``, so a kernel that held the GIL would
  see the counter advance by exactly 0 during its call; the same kernel compiled with
  ``nogil=False`` is the control and does see 0.
  How much two threads on two arrays gain in wall time is a measurement, not a test (house
  rule: never a timing threshold in a test): ``asv_bench/benchmarks/bench_threads.py``.
"""

from __future__ import annotations

import faulthandler
import sys
import threading
import time

import numba
import numpy as np
import pytest

from numba_ta import raw_ops
from numba_ta.core import config as _config
from numba_ta.core import kernels as _kernels
from numba_ta.errors import InvalidArgumentError

N_THREADS = 8
OPS_PER_THREAD = 10_000
JOIN_TIMEOUT = 240.0
F0 = np.float32(0.0)
T11 = "Could not read index {} twice because it was cleared after a previous read"


def run_threads(target, n, timeout=JOIN_TIMEOUT):
    """Start ``n`` threads running ``target(k)``; join with a timeout; re-raise their errors."""
    errors = []

    def wrap(k):
        try:
            target(k)
        except BaseException as e:  # reported below
            errors.append((k, e))

    threads = [threading.Thread(target=wrap, args=(k,), daemon=True, name=f"ta-{k}") for k in range(n)]
    faulthandler.dump_traceback_later(timeout + 30, exit=False)
    try:
        for t in threads:
            t.start()
        deadline = time.monotonic() + timeout
        for t in threads:
            t.join(max(0.0, deadline - time.monotonic()))
        alive = [t.name for t in threads if t.is_alive()]
    finally:
        faulthandler.cancel_dump_traceback_later()
    assert not alive, f"threads still running after {timeout}s (deadlock?): {alive}"
    if errors:
        k, e = errors[0]
        raise AssertionError(f"{len(errors)} thread(s) failed; thread {k}: {e!r}") from e


# --------------------------------------------------------------------------------------
# the stress test


class Shared:
    """The arrays all threads share, and what the threads expect of them."""

    GRAD_SIZE = 32
    WIDTH = 3
    READ_SIZE = 2000

    def __init__(self):
        # gradient of a fully written int64 forward array: every slot starts as a soft zero
        self.fwd, f = raw_ops.TensorArrayV3(size=self.GRAD_SIZE, dtype=np.int64, element_shape=[self.WIDTH])
        raw_ops.TensorArrayScatterV3(
            handle=self.fwd,
            indices=np.arange(self.GRAD_SIZE),
            value=np.zeros((self.GRAD_SIZE, self.WIDTH), np.int64),
            flow_in=f,
        )
        self.grad, _ = raw_ops.TensorArrayGradV3(handle=self.fwd, flow_in=f, source="gradients")
        self.expected = np.zeros((N_THREADS, self.GRAD_SIZE, self.WIDTH), np.int64)
        # dynamic array every thread appends to at its own interleaved indices
        self.dyn, _ = raw_ops.TensorArrayV3(
            size=0, dtype=np.int64, element_shape=[2], dynamic_size=True, clear_after_read=False
        )
        self.dyn_written = [[] for _ in range(N_THREADS)]
        # clear-after-read array: each element can be handed out once
        self.once, f = raw_ops.TensorArrayV3(size=self.READ_SIZE, dtype=np.int32, element_shape=[])
        raw_ops.TensorArrayScatterV3(
            handle=self.once,
            indices=np.arange(self.READ_SIZE),
            value=np.arange(self.READ_SIZE, dtype=np.int32) * 7,
            flow_in=f,
        )
        self.got_once = [[] for _ in range(N_THREADS)]
        self.ops = [0] * N_THREADS


def dyn_value(t, i):
    return np.array([t, i], np.int64)


def worker(shared, t):
    rng = np.random.default_rng(1000 + t)
    ops = 0
    my_dyn = iter(range(t, 10**9, N_THREADS))
    own = None  # (handle, flow, expected list, size)
    S, Wd = Shared.GRAD_SIZE, Shared.WIDTH
    exp = shared.expected[t]
    while ops < OPS_PER_THREAD:
        kind = rng.integers(0, 10)
        if kind <= 1:  # scatter known values into the shared gradient array (duplicates sum)
            k = int(rng.integers(1, 6))
            idx = rng.integers(0, S, k)
            val = rng.integers(-1000, 1000, (k, Wd)).astype(np.int64)
            raw_ops.TensorArrayScatterV3(handle=shared.grad, indices=idx, value=val, flow_in=F0)
            np.add.at(exp, idx, val)
            ops += 1
        elif kind == 2:  # single aggregating write
            i = int(rng.integers(0, S))
            val = rng.integers(-1000, 1000, Wd).astype(np.int64)
            raw_ops.TensorArrayWriteV3(handle=shared.grad, index=i, value=val, flow_in=F0)
            exp[i] += val
            ops += 1
        elif kind == 3:  # append to the shared dynamic array
            i = next(my_dyn)
            raw_ops.TensorArrayWriteV3(handle=shared.dyn, index=i, value=dyn_value(t, i), flow_in=F0)
            shared.dyn_written[t].append(i)
            ops += 1
        elif kind == 4:  # compete for the clear-after-read elements
            i = int(rng.integers(0, Shared.READ_SIZE))
            try:
                v = raw_ops.TensorArrayReadV3(handle=shared.once, index=i, flow_in=F0, dtype=np.int32)
            except InvalidArgumentError as e:
                assert T11.format(i) in e.message, e.message
            else:
                assert int(v) == 7 * i, (i, v)
                shared.got_once[t].append(i)
            ops += 1
        elif kind == 5:  # sizes of shared arrays, and reads of our own dynamic writes
            n = raw_ops.TensorArraySizeV3(handle=shared.dyn, flow_in=F0)
            assert n >= (shared.dyn_written[t][-1] + 1 if shared.dyn_written[t] else 0)
            ops += 1
            if shared.dyn_written[t]:
                i = shared.dyn_written[t][int(rng.integers(0, len(shared.dyn_written[t])))]
                v = raw_ops.TensorArrayReadV3(handle=shared.dyn, index=i, flow_in=F0, dtype=np.int64)
                np.testing.assert_array_equal(v, dyn_value(t, i))
                ops += 1
        else:  # a private array's life, one op per turn
            if own is None:
                n = int(rng.integers(1, 8))
                h, f = raw_ops.TensorArrayV3(size=n, dtype=np.float64, element_shape=[2], clear_after_read=False)
                own = [h, f, [None] * n, n]
                ops += 1
                continue
            h, f, vals, n = own
            free = [i for i in range(n) if vals[i] is None]
            step = rng.integers(0, 6)
            if step == 0 and free:
                i = free[int(rng.integers(0, len(free)))]
                vals[i] = rng.random(2)
                raw_ops.TensorArrayWriteV3(handle=h, index=i, value=vals[i], flow_in=f)
            elif step == 1 and len(free) >= 2:
                idx = np.array(free[:2])
                v = rng.random((2, 2))
                raw_ops.TensorArrayScatterV3(handle=h, indices=idx, value=v, flow_in=f)
                vals[idx[0]], vals[idx[1]] = v[0], v[1]
            elif step == 2 and len(free) == n:
                v = rng.random(2 * n)
                raw_ops.TensorArraySplitV3(handle=h, value=v, lengths=np.full(n, 2, np.int64), flow_in=f)
                vals[:] = list(v.reshape(n, 2))
            elif step == 3:
                written = [i for i in range(n) if vals[i] is not None]
                if written:
                    got = raw_ops.TensorArrayGatherV3(handle=h, indices=written, flow_in=f, dtype=np.float64)
                    np.testing.assert_array_equal(got, np.stack([vals[i] for i in written]))
                else:
                    raw_ops.TensorArraySizeV3(handle=h, flow_in=f)
            elif step == 4 and not free:
                # every element was written as a row of 2: concat stacks them along axis 0
                got, lengths = raw_ops.TensorArrayConcatV3(handle=h, flow_in=f, dtype=np.float64)
                np.testing.assert_array_equal(got, np.concatenate(vals))
                assert lengths.tolist() == [2] * n
            else:
                raw_ops.TensorArrayCloseV3(handle=h)
                own = None
            ops += 1
    shared.ops[t] = ops


def test_stress_mixed_ops(record_property):
    shared = Shared()
    t0 = time.perf_counter()
    run_threads(lambda t: worker(shared, t), N_THREADS)
    elapsed = time.perf_counter() - t0
    assert all(n >= OPS_PER_THREAD for n in shared.ops), shared.ops
    # integer gradient sums are exact
    got = raw_ops.TensorArrayGatherV3(
        handle=shared.grad, indices=np.arange(Shared.GRAD_SIZE), flow_in=F0, dtype=np.int64
    )
    np.testing.assert_array_equal(got, shared.expected.sum(axis=0))
    # no write lost in the shared dynamic array
    written = sorted(i for lst in shared.dyn_written for i in lst)
    assert len(written) == len(set(written))
    top = written[-1] + 1
    assert raw_ops.TensorArraySizeV3(handle=shared.dyn, flow_in=F0) == top
    for t, lst in enumerate(shared.dyn_written):
        if lst:
            got = raw_ops.TensorArrayGatherV3(handle=shared.dyn, indices=lst, flow_in=F0, dtype=np.int64)
            np.testing.assert_array_equal(got, np.stack([dyn_value(t, i) for i in lst]))
    # each clear-after-read element handed out at most once; the rest still readable once
    handed = [i for lst in shared.got_once for i in lst]
    assert len(handed) == len(set(handed)), "an element was read twice"
    rest = sorted(set(range(Shared.READ_SIZE)) - set(handed))
    if rest:
        got = raw_ops.TensorArrayGatherV3(handle=shared.once, indices=rest, flow_in=F0, dtype=np.int32)
        np.testing.assert_array_equal(got, np.array(rest, np.int32) * 7)
    total = sum(shared.ops)
    record_property("threads", N_THREADS)
    record_property("ops_per_thread", shared.ops)
    record_property("seconds", round(elapsed, 2))
    print(
        f"\n{N_THREADS} threads x {shared.ops[0]} ops = {total} ops in {elapsed:.2f}s; "
        f"{len(handed)} of {Shared.READ_SIZE} read-once elements taken by threads"
    )


def test_grad_lookup_or_create_race():
    """Threads asking for the same gradient at once all get the same gradient array."""
    fwd, f = raw_ops.TensorArrayV3(size=4, dtype=np.float32, element_shape=[2])
    got = [None] * N_THREADS
    barrier = threading.Barrier(N_THREADS)

    def target(k):
        barrier.wait(timeout=60)
        for _ in range(200):
            g, _ = raw_ops.TensorArrayGradV3(handle=fwd, flow_in=f, source="gradients")
            raw_ops.TensorArrayWriteV3(handle=g, index=k % 4, value=np.ones(2, np.float32), flow_in=F0)
        got[k] = g

    run_threads(target, N_THREADS)
    assert len({id(g._storage) for g in got}) == 1
    sums = raw_ops.TensorArrayGatherV3(handle=got[0], indices=[0, 1, 2, 3], flow_in=F0, dtype=np.float32)
    np.testing.assert_array_equal(sums, np.full((4, 2), 200 * N_THREADS / 4, np.float32))


def test_unique_names_under_threads():
    names = [[] for _ in range(N_THREADS)]
    barrier = threading.Barrier(N_THREADS)

    def target(k):
        barrier.wait(timeout=60)
        for _ in range(500):
            h, _ = raw_ops.TensorArrayV3(size=1, dtype=np.float32, tensor_array_name="race")
            names[k].append(h.name)

    run_threads(target, N_THREADS)
    flat = [n for lst in names for n in lst]
    assert len(flat) == len(set(flat)) == 500 * N_THREADS


def test_close_races_with_writes():
    """A close racing with writes and reads: each op succeeds or raises T1, nothing else."""
    for _ in range(20):
        h, f = raw_ops.TensorArrayV3(size=0, dtype=np.float32, element_shape=[8], dynamic_size=True)
        barrier = threading.Barrier(4)
        closed = f"TensorArray {h.name} has already been closed."

        def target(k, h=h, barrier=barrier, closed=closed):
            barrier.wait(timeout=60)
            if k == 0:
                time.sleep(0.001)
                raw_ops.TensorArrayCloseV3(handle=h)
                return
            for i in range(k, 3000, 3):
                try:
                    raw_ops.TensorArrayWriteV3(handle=h, index=i, value=np.full(8, i, np.float32), flow_in=F0)
                    raw_ops.TensorArraySizeV3(handle=h, flow_in=F0)
                    raw_ops.TensorArrayReadV3(handle=h, index=i, flow_in=F0, dtype=np.float32)
                except InvalidArgumentError as e:
                    assert e.message == closed, e.message
                    return

        run_threads(target, 4)
        assert h._storage.closed and h._storage.data is None


# --------------------------------------------------------------------------------------
# nogil


def _counter_during_calls(call, repeats):
    """Run ``call()`` ``repeats`` times in a worker; return the main thread's counter advance during each call.

    The switch interval is 30 s and the main loop yields with ``time.sleep(0)``, so the
    main thread runs during a call only if the call released the GIL.
    """
    cnt = [0]
    done = threading.Event()
    deltas = []
    errors = []

    def work():
        try:
            for _ in range(repeats):
                c0 = cnt[0]
                call()
                deltas.append(cnt[0] - c0)
        except BaseException as e:
            errors.append(e)
        finally:
            done.set()

    old = sys.getswitchinterval()
    sys.setswitchinterval(30.0)
    try:
        th = threading.Thread(target=work, daemon=True)
        th.start()
        deadline = time.monotonic() + 120
        while not done.is_set() and time.monotonic() < deadline:
            cnt[0] += 1
            time.sleep(0)
        th.join(60)
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors
    assert len(deltas) == repeats, "worker did not finish"
    return deltas


@pytest.fixture(scope="module")
def big_rows():
    rows, width = 1 << 16, 64  # 16 MB of float32 storage
    data = np.random.default_rng(5).random(rows * width).astype(np.float32)
    src = np.random.default_rng(6).integers(0, rows, 1 << 17).astype(np.int64) * width  # 32 MB gathered
    out = np.empty(src.size * width, np.float32)
    return data, src, width, out


def _rows_of(src, width):
    """The sizes and output offsets that make the segment kernel gather rows of ``width`` items."""
    return np.full(src.size, width, np.int64), np.arange(src.size, dtype=np.int64) * width


@pytest.mark.jit_only("nogil is a property of compiled kernels")
@pytest.mark.parametrize("kernel", ["gather_segments", "gather_segments_par"])
def test_kernels_release_the_gil(kernel, big_rows, record_property):
    data, src, width, out = big_rows
    sizes, outo = _rows_of(src, width)
    k = getattr(_kernels, kernel)
    assert k.targetoptions.get("nogil") is True
    k(data, src[:4], sizes[:4], outo[:4], out)
    if not k.targetoptions.get("parallel"):
        # control: the same kernel holding the GIL lets the main thread do nothing during a
        # call (no control for prange kernels: numba's parallel region releases the GIL anyway)
        k_gil = numba.njit(nogil=False)(k.py_func)
        k_gil(data, src[:4], sizes[:4], outo[:4], out)
        held = _counter_during_calls(lambda: k_gil(data, src, sizes, outo, out), 3)
        assert held == [0, 0, 0], f"the GIL-holding control let the main thread run: {held}"
    # the library's kernel: the main thread keeps counting while the worker is inside it
    free = _counter_during_calls(lambda: k(data, src, sizes, outo, out), 5)
    record_property("counter_during_nogil_calls", free)
    assert sum(1 for d in free if d > 0) >= 3, f"main thread starved during {kernel} calls: {free}"
    np.testing.assert_array_equal(out.reshape(-1, width)[:3], data.reshape(-1, width)[src[:3] // width])


@pytest.mark.jit_only("nogil is a property of compiled kernels")
def test_gather_op_releases_the_gil(monkeypatch):
    """The same through the public op: a big GatherV3 lets the main thread run meanwhile."""
    monkeypatch.setattr(_config, "PARALLEL_MIN_ELEMENTS", 1 << 62)
    n, width = 1 << 14, 256
    h, f = raw_ops.TensorArrayV3(size=n, dtype=np.float32, element_shape=[width], clear_after_read=False)
    value = np.random.default_rng(7).random((n, width)).astype(np.float32)
    raw_ops.TensorArrayScatterV3(handle=h, indices=np.arange(n), value=value, flow_in=f)
    idx = np.random.default_rng(8).integers(0, n, 1 << 15)
    raw_ops.TensorArrayGatherV3(handle=h, indices=idx[:8], flow_in=f, dtype=np.float32)  # compile outside
    out = []
    free = _counter_during_calls(
        lambda: out.append(raw_ops.TensorArrayGatherV3(handle=h, indices=idx, flow_in=f, dtype=np.float32)), 4
    )
    assert sum(1 for d in free if d > 0) >= 2, free
    np.testing.assert_array_equal(out[0], value[idx])
