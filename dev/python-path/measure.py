"""What the Python layer would pay to run its ops through the compiled engine ("one state").

Measures, in one fresh process (so the first figures are cold compilations, with no cache):

1. compile time of the engine's ops called from Python through small ``@njit`` entries, for a
   first dtype and then for a second one (the engine's struct holds bytes, so its state machine
   compiles once; each entry is specialised on the value's type only);
2. the cost of one Python-level op, 64 float32 per element, dense: ``Storage.write`` /
   ``Storage.read`` (today's Python state machine) against one call into the engine that does the
   whole op (checks, copy, commit), with the Python work a ``Storage`` method built on it would add
   (the bytes view of the value, the result's dtype view and shape).

Run: ``NUMBA_NUM_THREADS=2 python dev/python-path/measure.py`` (``--n`` elements per timing round).
Not part of the package; kept with its output in ``RESULTS.md``.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numba
import numpy as np

from numba_ta import _engine as E
from numba_ta._storage import Storage


@numba.njit
def entry_write(s, index, value, numeric):
    """One Python-level write: the value's bytes and shape, then the engine's write."""
    E.write(s, index, np.ascontiguousarray(value).reshape(-1).view(np.uint8), E.shape_array(value.shape), numeric)


@numba.njit
def entry_read(s, index):
    """One Python-level read: the engine's read, its bytes and shape."""
    return E.read(s, index, -1)


@numba.njit
def entry_noop(s, index, value, numeric):
    """The call alone: the same arguments as entry_write, nothing done (the floor of a compiled op)."""
    return None


@numba.njit
def entry_noop_out(s, index):
    """The call and a result like a read's: an array and a shape array built, boxed and returned."""
    return np.empty(64, np.uint8), np.empty(1, np.int64)


def new_state(dtype, size):
    h = E.header(dtype)
    h[E.SIZE] = h[E.CAP] = size
    h[E.FASTSID] = -1
    h[E.MARKED] = -1
    return E.new_state(
        np.empty(0, np.uint8), np.zeros(size, np.uint8), np.zeros(size, np.int32), np.zeros(size, np.int64), h,
        np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64), np.zeros(0, np.int64),
        np.zeros(0, np.int64), "arr",
    )  # fmt: skip


def read_as(s, index, dtype):
    """What ``Storage.read`` would do on the engine: one call, then the dtype view and shape (no copy)."""
    flat, shape = entry_read(s, index)
    return flat.view(dtype).reshape(shape)


def timed(fn):
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=20000, help="elements per timing round")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    n = args.n

    print("== cold compilation (no cache), seconds")
    for dtype in (np.float32, np.float64, np.int32):
        s = new_state(dtype, 4)
        entry_noop(s, 0, np.ones(3, dtype), 1)
        entry_noop_out(s, 0)
        v = np.ones(3, dtype)
        w = timed(lambda s=s, v=v: entry_write(s, 0, v, 1))
        r = timed(lambda s=s: entry_read(s, 0))
        print(f"{np.dtype(dtype).name:>8}: write {w:6.1f}   read {r:6.1f}")

    print(f"\n== one op from Python, 64 float32, dense, {n} elements per round, median of {args.rounds} (us/op)")
    rows = np.random.default_rng(0).standard_normal((n, 64)).astype(np.float32)
    res = {"Storage.write": [], "engine write": [], "call alone": [], "Storage.read": [], "engine read": [],
           "call, 2 arrays out": []}
    for _ in range(args.rounds):
        st = Storage("arr", np.float32, n, (64,), False, False)
        s = new_state(np.float32, n)
        t = time.perf_counter()
        for i in range(n):
            st.write(i, rows[i])
        res["Storage.write"].append((time.perf_counter() - t) / n * 1e6)
        t = time.perf_counter()
        for i in range(n):
            entry_write(s, i, rows[i], 1)
        res["engine write"].append((time.perf_counter() - t) / n * 1e6)
        t = time.perf_counter()
        for i in range(n):
            entry_noop(s, i, rows[i], 1)
        res["call alone"].append((time.perf_counter() - t) / n * 1e6)
        t = time.perf_counter()
        for i in range(n):
            st.read(i)
        res["Storage.read"].append((time.perf_counter() - t) / n * 1e6)
        t = time.perf_counter()
        for i in range(n):
            read_as(s, i, np.float32)
        res["engine read"].append((time.perf_counter() - t) / n * 1e6)
        t = time.perf_counter()
        for i in range(n):
            entry_noop_out(s, i)
        res["call, 2 arrays out"].append((time.perf_counter() - t) / n * 1e6)
        assert np.array_equal(read_as(s, n - 1, np.float32), rows[n - 1])
    for k, v in res.items():
        print(f"{k:>18}: {statistics.median(v):.2f}   (min {min(v):.2f}, max {max(v):.2f})")


if __name__ == "__main__":
    main()
