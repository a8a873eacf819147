"""numba_ta in forked processes.

* :func:`test_fork_while_locks_are_held`: a thread holds an array's lock, a gradient
  array's lock and the registry lock while the main thread calls ``os.fork()``.  The child
  must create, write, read, stack and close an array of its own, and write to and read the
  held arrays (without the at-fork handler of ``numba_ta.tensor_array.registry`` it blocks forever on
  the first of those locks).
* :func:`test_fork_while_threads_use_arrays`: the same under contention, not staged: three
  threads create, fill and close arrays and read a shared one while the main thread forks
  repeatedly; every child must finish its ops.
* :func:`test_forkserver_pool`: a ``forkserver`` process pool (the start method the
  documentation recommends when the parent has run parallel kernels under GNU OpenMP)
  whose workers create arrays, write, stack, scatter, gather and sum into gradient arrays,
  serial and parallel kernels both; the parent checks every result.
* :func:`test_child_runs_parallel_kernels_when_the_parent_ran_serial_ops_only`: importing
  numba_ta and running small ops does not start Numba's threading layer, so a forked child
  can still run the parallel kernels under GNU OpenMP.
* :func:`test_info_says_whether_fork_is_safe`: ``numba-ta info`` has a ``fork()`` line,
  with the advice where the layer is GNU OpenMP.

A child that hangs is killed after a generous deadline and the test fails: the deadline
only detects a deadlock, it is not a timing threshold.  Forked children never return into
pytest: they report through a pipe and leave with ``os._exit``.  They run only the serial
kernels: GNU OpenMP terminates a forked child that enters a parallel region after its
parent did (see the Performance page).
"""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import sys
import threading
import time
import traceback
import warnings

import numpy as np
import pytest

import numba_ta
from numba_ta import cli, raw_ops
from numba_ta.tensor_array import registry as _registry
from tests.helpers import fork_worker

pytestmark = pytest.mark.skipif(
    not (hasattr(os, "fork") and hasattr(os, "register_at_fork")),
    reason="needs os.fork and os.register_at_fork (POSIX)",
)

#: Seconds a child may take before it is declared hung (a deadlock detector, not a timing
#: threshold: a healthy child finishes in milliseconds).
HANG_DEADLINE = 60.0

F32 = np.float32


# --------------------------------------------------------------------------- helpers


def _own_array_roundtrip():
    """Create an array, write, read, stack, concat and close it; assert every result."""
    rows = np.arange(6, dtype=F32).reshape(2, 3)
    h, f = raw_ops.TensorArrayV3(size=2, dtype=F32, element_shape=[3], clear_after_read=False)
    for i in range(2):
        f = raw_ops.TensorArrayWriteV3(handle=h, index=i, value=rows[i], flow_in=f)
    np.testing.assert_array_equal(raw_ops.TensorArrayReadV3(handle=h, index=1, flow_in=f, dtype=F32), rows[1])
    np.testing.assert_array_equal(raw_ops.TensorArrayGatherV3(handle=h, indices=[0, 1], flow_in=f, dtype=F32), rows)
    value, lengths = raw_ops.TensorArrayConcatV3(handle=h, flow_in=f, dtype=F32)
    np.testing.assert_array_equal(value, rows.reshape(-1))
    np.testing.assert_array_equal(lengths, [3, 3])
    raw_ops.TensorArrayCloseV3(handle=h)


def _run_child(work):
    """Fork; the child runs ``work()`` and reports through a pipe.  Returns ``(pid, read_fd)``."""
    r, w = os.pipe()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # Python >= 3.12: fork() of a threaded process
        pid = os.fork()
    if pid == 0:  # the child: never return into pytest
        code = 1
        try:
            os.close(r)
            numba_ta.set_parallel_threshold(1 << 62)  # serial kernels only (GNU OpenMP and fork)
            work()
            os.write(w, b"OK")
            code = 0
        except BaseException:
            try:
                os.write(w, traceback.format_exc().encode())
            except BaseException:
                pass
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


def _wait_all(children, deadline):
    """Wait for every ``(pid, read_fd)`` until ``deadline``; kill the ones still running.

    Returns a list of ``(exit code or None if it hung, what the child reported)``.
    """
    status = {}
    pending = {pid for pid, _ in children}
    while pending:
        for pid in list(pending):
            done, st = os.waitpid(pid, os.WNOHANG)
            if done == pid:
                status[pid] = os.waitstatus_to_exitcode(st)
                pending.discard(pid)
        if not pending:
            break
        if time.monotonic() > deadline:
            for pid in pending:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                status[pid] = None
            break
        time.sleep(0.02)
    out = []
    for pid, r in children:
        chunks = []
        while chunk := os.read(r, 65536):
            chunks.append(chunk)
        os.close(r)
        out.append((status[pid], b"".join(chunks).decode(errors="replace")))
    return out


# --------------------------------------------------------------------------- tests


def test_fork_while_locks_are_held():
    """Locks held by another thread at fork() are free in the child."""
    rows = np.arange(6, dtype=F32).reshape(2, 3)
    h, f = raw_ops.TensorArrayV3(size=2, dtype=F32, element_shape=[3], clear_after_read=False)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=rows[0], flow_in=f)
    g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="held")
    _own_array_roundtrip()  # compile (or load) in the parent what the child runs
    scratch, scratch_gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="warm-up")
    for _ in range(2):
        scratch_gf = raw_ops.TensorArrayWriteV3(handle=scratch, index=1, value=rows[1], flow_in=scratch_gf)

    acquired, release = threading.Event(), threading.Event()

    def hold():
        with h._storage.lock, g._storage.lock, _registry._lock:
            acquired.set()
            release.wait()

    def child_work():
        _own_array_roundtrip()  # the registry lock: a new name and a new entry
        f2 = raw_ops.TensorArrayWriteV3(handle=h, index=1, value=rows[1], flow_in=f)
        np.testing.assert_array_equal(raw_ops.TensorArrayReadV3(handle=h, index=0, flow_in=f2, dtype=F32), rows[0])
        np.testing.assert_array_equal(
            raw_ops.TensorArrayGatherV3(handle=h, indices=[0, 1], flow_in=f2, dtype=F32), rows
        )
        assert raw_ops.TensorArraySizeV3(handle=h, flow_in=f2) == 2
        gf2 = gf
        for _ in range(2):
            gf2 = raw_ops.TensorArrayWriteV3(handle=g, index=1, value=rows[1], flow_in=gf2)
        np.testing.assert_array_equal(raw_ops.TensorArrayReadV3(handle=g, index=1, flow_in=gf2, dtype=F32), 2 * rows[1])
        g2, _ = raw_ops.TensorArrayGradV3(handle=h, flow_in=f2, source="in-child")
        assert g2.name == h.name + "@in-child"

    holder = threading.Thread(target=hold, daemon=True)
    holder.start()
    try:
        assert acquired.wait(HANG_DEADLINE), "the holder thread did not take the locks"
        child = _run_child(child_work)
        [(code, report)] = _wait_all([child], time.monotonic() + HANG_DEADLINE)
    finally:
        release.set()
        holder.join(HANG_DEADLINE)
    assert code is not None, f"the forked child hung (deadlock on a lock copied while held); it reported {report!r}"
    assert code == 0 and report == "OK", f"child exit code {code}:\n{report}"
    # the parent's arrays are untouched by the child's writes
    assert raw_ops.TensorArraySizeV3(handle=h, flow_in=f) == 2
    np.testing.assert_array_equal(  # index 1 is still unwritten here: it reads as zeros
        raw_ops.TensorArrayGatherV3(handle=h, indices=[0, 1], flow_in=f, dtype=F32), [rows[0], np.zeros(3, F32)]
    )


def test_fork_while_threads_use_arrays():
    """Forks taken at random moments while three threads create, use and close arrays."""
    n_forks, n_threads = 20, 3
    shared_rows = np.arange(32, dtype=F32).reshape(8, 4)
    shared, sf = raw_ops.TensorArrayV3(size=8, dtype=F32, element_shape=[4], clear_after_read=False)
    sf = raw_ops.TensorArrayScatterV3(handle=shared, indices=np.arange(8), value=shared_rows, flow_in=sf)
    _own_array_roundtrip()
    stop = threading.Event()
    errors = []

    def churn():
        try:
            while not stop.is_set():
                _own_array_roundtrip()
                raw_ops.TensorArrayGatherV3(handle=shared, indices=[1, 7], flow_in=sf, dtype=F32)
        except BaseException as e:  # reported by the main thread
            errors.append(e)

    def child_work():
        _own_array_roundtrip()
        np.testing.assert_array_equal(
            raw_ops.TensorArrayGatherV3(handle=shared, indices=[1, 7], flow_in=sf, dtype=F32), shared_rows[[1, 7]]
        )

    threads = [threading.Thread(target=churn, daemon=True) for _ in range(n_threads)]
    for t in threads:
        t.start()
    children = []
    try:
        for _ in range(n_forks):
            children.append(_run_child(child_work))
            time.sleep(0.001)  # let the threads move on between forks
        results = _wait_all(children, time.monotonic() + HANG_DEADLINE)
    finally:
        stop.set()
        for t in threads:
            t.join(HANG_DEADLINE)
    assert not errors, errors
    hung = sum(code is None for code, _ in results)
    failed = [report for code, report in results if code not in (0, None) or (code == 0 and report != "OK")]
    assert hung == 0, f"{hung} of {n_forks} forked children hung (deadlock)"
    assert not failed, failed[0]


@pytest.mark.skipif("forkserver" not in multiprocessing.get_all_start_methods(), reason="no forkserver start method")
def test_forkserver_pool():
    """A forkserver pool's workers run every kind of op, serial and parallel kernels."""
    ctx = multiprocessing.get_context("forkserver")
    seeds = list(range(4))
    with ctx.Pool(2) as pool:
        results = pool.map_async(fork_worker.build, seeds).get(timeout=300)
        pool.close()
        pool.join()
    pids = set()
    for seed, (pid, stacked, gathered, grad_row, size) in zip(seeds, results, strict=True):
        rows = fork_worker.expected(seed)
        pids.add(pid)
        np.testing.assert_array_equal(stacked, rows)
        assert stacked.dtype == F32
        np.testing.assert_array_equal(gathered, rows[[-1, 0]])
        np.testing.assert_array_equal(grad_row, 2 * rows[1])
        assert size == len(rows)
    assert os.getpid() not in pids


_FORK_AFTER_SERIAL_OPS = r"""
import os, sys, traceback
import numpy as np
import numba_ta

# the parent: serial ops only, under the parallel threshold
ta = numba_ta.TensorArray(np.float32, size=2, element_shape=[3]).unstack(np.ones((2, 3), np.float32))
assert ta.stack().shape == (2, 3)
pid = os.fork()
if pid == 0:
    try:
        numba_ta.set_parallel_threshold(1)  # the child's bulk ops run the parallel kernels
        x = np.arange(24, dtype=np.float32).reshape(8, 3)
        t = numba_ta.TensorArray(np.float32, size=8, clear_after_read=False).unstack(x)
        ok = np.array_equal(t.stack(), x) and np.array_equal(t.gather([7, 0]), x[[7, 0]])
        os._exit(0 if ok else 3)
    except BaseException:
        traceback.print_exc()
        os._exit(4)
_, status = os.waitpid(pid, 0)
print(os.waitstatus_to_exitcode(status))
"""


def test_child_runs_parallel_kernels_when_the_parent_ran_serial_ops_only():
    """Importing numba_ta and running serial ops does not start Numba's threading layer.

    Under GNU OpenMP, Numba terminates a forked child that runs a parallel region once its
    parent started the layer (``Terminating: fork() called from a process already using GNU
    OpenMP``).  A parent that only imported numba_ta and ran small ops has not: its forked
    children (asv's forkserver, ``multiprocessing`` with ``fork``) run the parallel kernels.
    The parent runs in a fresh interpreter, so that nothing else started the layer there.
    """
    import subprocess

    out = subprocess.run([sys.executable, "-X", "faulthandler", "-c", _FORK_AFTER_SERIAL_OPS], capture_output=True,
                         text=True, timeout=900)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip() == "0", (out.stdout, out.stderr[-3000:])


def test_info_says_whether_fork_is_safe(capsys):
    """``numba-ta info`` prints a fork() line: safe for tbb/workqueue, the remedies for GNU OpenMP."""
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    layer = re.search(r"^threading layer\s+(.*)$", out, re.M).group(1)
    line = re.search(r"^fork\(\)\s+(.*)$", out, re.M).group(1)
    assert line == cli._fork_safety(layer)
    for safe in ("tbb", "workqueue"):
        assert cli._fork_safety(safe) == f"safe ({safe} layer)"
    for unsafe in ("unavailable (ValueError: no layer)",) + (("omp",) if _gnu_openmp() else ()):
        advice = cli._fork_safety(unsafe)
        assert "GNU OpenMP" in advice and "forkserver" in advice and "spawn" in advice, advice
        assert "NUMBA_THREADING_LAYER=tbb or workqueue" in advice, advice


def _gnu_openmp():
    """Whether numba's omp layer is GNU OpenMP here (False when it cannot load)."""
    try:
        from numba.np.ufunc import omppool
    except ImportError:
        return False
    return omppool.openmp_vendor == "GNU"
