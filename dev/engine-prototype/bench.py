"""Benchmarks for the two state-object prototypes.  Run: NUMBA_NUM_THREADS=2 python bench.py"""

from __future__ import annotations

import statistics
import sys
import threading
import time
import timeit

import numpy as np
from numba import njit
from numba.typed import List
from numba import types

import proto_ext as B
import proto_structref as A

W = 64
N_LOOP = 100_000
REPS = 15


def med_ns(stmt, number, repeat=REPS, setup=None, **g):
    t = timeit.repeat(stmt, setup=setup or "pass", globals=g, number=number, repeat=repeat)
    return statistics.median(t) / number * 1e9


def med_loop(fn, repeat=REPS):
    """fn() runs a measured loop and returns (seconds, count)."""
    out = []
    for _ in range(repeat):
        s, n = fn()
        out.append(s / n * 1e9)
    return statistics.median(out)


# --------------------------------------------------------------- pure Python reference
class PyState:
    __slots__ = ("data", "state", "offsets", "shape_id", "size", "cap", "width", "flags")

    def __init__(self, width, size=0, dynamic=False):
        self.data = np.empty(size * width, np.float32)
        self.state = np.zeros(size, np.uint8)
        self.offsets = np.zeros(size, np.int64)
        self.shape_id = np.zeros(size, np.int32)
        self.size, self.cap, self.width, self.flags = size, size, width, int(dynamic)

    def write(self, index, row):
        w = self.width
        if row.shape != (w,):
            raise ValueError("shape")
        if index < 0 or index >= self.size:
            raise IndexError(index)  # (no growth in the reference; preallocated)
        if self.state[index] & 1:
            raise ValueError("already written")
        base = index * w
        self.data[base : base + w] = row
        self.offsets[index], self.shape_id[index], self.state[index] = base, 0, 9
        return self

    def read(self, index):
        if index < 0 or index >= self.size:
            raise IndexError(index)
        st = self.state[index]
        if not st & 1:
            raise ValueError("never written")
        base = self.offsets[index]
        out = self.data[base : base + self.width].copy()
        self.state[index] = st | 2
        return out


# --------------------------------------------------------------- 1. call overhead
@njit(nogil=True)
def noop(x):
    return 0


@njit(nogil=True)
def ident(x):
    return x


# --------------------------------------------------------------- 3. in-njit loops
@njit(nogil=True)
def loop_write_fn(st, rows):
    s = 0
    for i in range(rows.shape[0]):
        s |= A.write_row(st, i, rows[i])
    return s


@njit(nogil=True)
def loop_write_method_A(ta, rows):
    for i in range(rows.shape[0]):
        ta = ta.write(i, rows[i])
    return ta


@njit(nogil=True)
def loop_write_method_B(ta, rows):
    for i in range(rows.shape[0]):
        ta = ta.write(i, rows[i])
    return ta


@njit(nogil=True)
def loop_write_fn_B(ta, rows):
    s = 0
    for i in range(rows.shape[0]):
        r, ta = B.write_row_grow(ta, i, rows[i])
        s |= r
    return s


@njit(nogil=True)
def loop_np_write(out, rows):
    for i in range(rows.shape[0]):
        out[i, :] = rows[i]
    return 0


@njit(nogil=True)
def loop_np_write_flat(out, rows):
    w = rows.shape[1]
    for i in range(rows.shape[0]):
        r = rows[i]
        base = i * w
        for k in range(w):
            out[base + k] = r[k]
    return 0


@njit(nogil=True)
def loop_list_append(rows):
    lst = List.empty_list(types.float32[::1])
    for i in range(rows.shape[0]):
        lst.append(rows[i].copy())
    return len(lst)


@njit(nogil=True)
def loop_read_A(st, n, out):
    acc = 0.0
    for i in range(n):
        A.read_row(st, i, out)
        acc += out[0]
    return acc


@njit(nogil=True)
def loop_read_B(st, n, out):
    acc = 0.0
    for i in range(n):
        B.read_row(st, i, out)
        acc += out[0]
    return acc


@njit(nogil=True)
def loop_read_method(ta, n):
    acc = 0.0
    for i in range(n):
        acc += ta.read(i)[0]
    return acc


@njit(nogil=True)
def loop_np_read(arr, n, out):
    acc = 0.0
    for i in range(n):
        out[:] = arr[i]
        acc += out[0]
    return acc


@njit(nogil=True)
def loop_np_read_alloc(arr, n):
    acc = 0.0
    for i in range(n):
        acc += arr[i].copy()[0]
    return acc


def timed(f, *a):
    t = time.perf_counter()
    f(*a)
    return time.perf_counter() - t


def main():
    rows = np.random.default_rng(0).standard_normal((N_LOOP, W)).astype(np.float32)
    row = rows[0].copy()
    res = {}

    # ---------------- 1. call overhead
    arr = np.zeros(4)
    a = A.TAState(W, 16, False)
    b = B.TAExt(W, 16, False)
    tup = (b.data, b.state, b.offsets, b.hdr)
    for x in (arr, a, b, tup):
        noop(x)
    noop(0)
    res["1 noop(int)"] = med_ns("f(0)", 200_000, f=noop)
    res["1 noop(ndarray)"] = med_ns("f(x)", 200_000, f=noop, x=arr)
    res["1 noop(tuple of 4 arrays)"] = med_ns("f(x)", 200_000, f=noop, x=tup)
    res["1 noop(A structref, default typeof)"] = med_ns("f(x)", 200_000, f=noop, x=a)
    res["1 noop(B ext type)"] = med_ns("f(x)", 200_000, f=noop, x=b)
    A.register_fast_typeof()
    noop(a)
    res["1 noop(A structref, typeof_impl registered)"] = med_ns("f(x)", 200_000, f=noop, x=a)
    res["1 Python property A st.size (njit call)"] = med_ns("x.size", 200_000, x=a)
    res["1 Python property B st.size (hdr[0])"] = med_ns("x.size", 200_000, x=b)

    # ---------------- 2. Python-level write/read
    NPY = 100_000

    def py_loop(make, op):
        def run():
            st = make()
            t = time.perf_counter()
            for i in range(NPY):
                op(st, i, row)
            return time.perf_counter() - t, NPY

        return run

    def empty_loop():
        t = time.perf_counter()
        for i in range(NPY):
            pass
        return time.perf_counter() - t, NPY

    res["2 (empty Python for-loop overhead)"] = med_loop(empty_loop)
    mkA = lambda: A.TAState(W, NPY, False)
    mkAdyn = lambda: A.TAState(W, 0, True)
    mkB = lambda: B.TAExt(W, NPY, False)
    mkBdyn = lambda: B.TAExt(W, 0, True)
    mkNP = lambda: np.empty((NPY, W), np.float32)
    mkPy = lambda: PyState(W, NPY, False)
    A.write_row(mkA(), 0, row)
    B.write_row(mkB(), 0, row)

    def np_set(st, i, r):
        st[i] = r

    res["2 write A: write_row(st,i,row) (compiled fn, status)"] = med_loop(py_loop(mkA, A.write_row))
    res["2 write A: st.write(i,row) (Python method -> status check)"] = med_loop(py_loop(mkA, A.TAState.write))
    res["2 write A: st.write, dynamic from cap 0"] = med_loop(py_loop(mkAdyn, A.TAState.write))
    res["2 write B: write_row(st,i,row) (compiled fn, status)"] = med_loop(py_loop(mkB, B.write_row))
    res["2 write B: st.write(i,row) (Python method)"] = med_loop(py_loop(mkB, B.TAExt.write))
    res["2 write B: st.write, dynamic from cap 0"] = med_loop(py_loop(mkBdyn, B.TAExt.write))
    res["2 write numpy: arr[i] = row (Python)"] = med_loop(py_loop(mkNP, np_set))
    res["2 write pure-Python impl (same checks)"] = med_loop(py_loop(mkPy, PyState.write))

    # reads: fill once, then read every index
    sa, sb, sp, sn = mkA(), mkB(), mkPy(), mkNP()
    for i in range(NPY):
        A.write_row(sa, i, rows[i])
        B.write_row(sb, i, rows[i])
        sp.write(i, rows[i])
        sn[i] = rows[i]
    out = np.empty(W, np.float32)

    def r_loop(st, op):
        def run():
            t = time.perf_counter()
            for i in range(NPY):
                op(st, i, out)
            return time.perf_counter() - t, NPY

        return run

    def r_loop2(st, op):
        def run():
            t = time.perf_counter()
            for i in range(NPY):
                op(st, i)
            return time.perf_counter() - t, NPY

        return run

    def np_copyto(st, i, o):
        o[:] = st[i]

    def np_copy(st, i):
        return st[i].copy()

    res["2 read A: read_row(st,i,out) (compiled fn, status)"] = med_loop(r_loop(sa, A.read_row))
    res["2 read A: st.read(i) (Python method, new array)"] = med_loop(r_loop2(sa, A.TAState.read))
    res["2 read B: read_row(st,i,out) (compiled fn, status)"] = med_loop(r_loop(sb, B.read_row))
    res["2 read B: st.read(i) (Python method, new array)"] = med_loop(r_loop2(sb, B.TAExt.read))
    res["2 read numpy: out[:] = arr[i]"] = med_loop(r_loop(sn, np_copyto))
    res["2 read numpy: arr[i].copy()"] = med_loop(r_loop2(sn, np_copy))
    res["2 read pure-Python impl (same checks)"] = med_loop(r_loop2(sp, PyState.read))

    # ---------------- 3. inside one njit loop
    n = N_LOOP
    pre = np.empty((n, W), np.float32)
    flat = np.empty(n * W, np.float32)
    # warm up (compile)
    loop_write_fn(A.TAState(W, 0, True), rows[:10])
    loop_write_method_A(A.TAState(W, 0, True), rows[:10])
    loop_write_method_B(B.TAExt(W, 0, True), rows[:10])
    loop_write_fn_B(B.TAExt(W, 0, True), rows[:10])
    loop_np_write(pre, rows[:10])
    loop_np_write_flat(flat, rows[:10])
    loop_list_append(rows[:10])

    def nj(f, make):
        def run():
            x = make()
            return timed(f, *x), n

        return run

    res["3 write A: write_row(st,i,row), dynamic from cap 0"] = med_loop(nj(loop_write_fn, lambda: (A.TAState(W, 0, True), rows)))
    res["3 write A: write_row, preallocated (no growth)"] = med_loop(nj(loop_write_fn, lambda: (A.TAState(W, n, False), rows)))
    res["3 write A: ta = ta.write(i,row) method, dynamic"] = med_loop(nj(loop_write_method_A, lambda: (A.TAState(W, 0, True), rows)))
    res["3 write B: ta = ta.write(i,row) method, dynamic"] = med_loop(nj(loop_write_method_B, lambda: (B.TAExt(W, 0, True), rows)))
    res["3 write B: write_row_grow -> (status, ta), dynamic"] = med_loop(nj(loop_write_fn_B, lambda: (B.TAExt(W, 0, True), rows)))
    res["3 write numpy: out[i,:] = rows[i] (prealloc)"] = med_loop(nj(loop_np_write, lambda: (pre, rows)))
    res["3 write numpy: explicit k-loop into flat (prealloc)"] = med_loop(nj(loop_np_write_flat, lambda: (flat, rows)))
    res["3 write typed.List.append(rows[i].copy())"] = med_loop(nj(loop_list_append, lambda: (rows,)))

    ra = A.TAState(W, 0, True)
    loop_write_fn(ra, rows)
    rb = loop_write_method_B(B.TAExt(W, 0, True), rows)
    loop_read_A(ra, 10, out), loop_read_B(rb, 10, out), loop_read_method(ra, 10), loop_read_method(rb, 10)
    loop_np_read(rows, 10, out), loop_np_read_alloc(rows, 10)
    res["3 read A: read_row(st,i,out)"] = med_loop(nj(loop_read_A, lambda: (ra, n, out)))
    res["3 read B: read_row(st,i,out)"] = med_loop(nj(loop_read_B, lambda: (rb, n, out)))
    res["3 read A: ta.read(i) (new array)"] = med_loop(nj(loop_read_method, lambda: (ra, n)))
    res["3 read B: ta.read(i) (new array)"] = med_loop(nj(loop_read_method, lambda: (rb, n)))
    res["3 read numpy: out[:] = arr[i]"] = med_loop(nj(loop_np_read, lambda: (rows, n, out)))
    res["3 read numpy: arr[i].copy()"] = med_loop(nj(loop_np_read_alloc, lambda: (rows, n)))

    # ---------------- 4. boxing / returning the object
    ident(a), ident(b), ident(arr)
    res["4 ident(ndarray) (return boxed array)"] = med_ns("f(x)", 200_000, f=ident, x=arr)
    res["4 ident(A) (unbox + box: new proxy object)"] = med_ns("f(x)", 200_000, f=ident, x=a)
    res["4 ident(B) (unbox + box: setattr onto parent)"] = med_ns("f(x)", 200_000, f=ident, x=b)

    # visibility
    vis = {}
    sa = A.TAState(W, 0, True)
    d0 = sa.data
    ret = loop_write_method_A(sa, rows[:1000])
    vis["A returned object is the same Python object"] = ret is sa
    vis["A returned object shares the struct (same meminfo)"] = ret._meminfo.data == sa._meminfo.data
    sa2 = A.TAState(W, 0, True)
    loop_write_fn(sa2, rows[:1000])  # returns only a status
    vis["A growth inside njit visible to Python without returning"] = (sa2.size == 1000 and sa2.cap >= 1000 and np.array_equal(sa2.stack(), rows[:1000]))
    vis["A data array replaced by growth"] = sa.data is not d0
    sb = B.TAExt(W, 0, True)
    ret = loop_write_method_B(sb, rows[:1000])
    vis["B returned object is the same Python object"] = ret is sb
    vis["B growth visible after returning ta"] = sb.size == 1000 and np.array_equal(sb.stack(), rows[:1000])
    sb2 = B.TAExt(W, 0, True)
    loop_write_fn_B(sb2, rows[:1000])
    try:
        sb2.stack()
        vis["B growth without returning ta"] = f"visible? size={sb2.size} cap={sb2.cap}"
    except Exception as e:
        vis["B growth without returning ta"] = f"LOST: hdr size={sb2.size}, Python arrays cap={sb2.cap} -> {e!r}"
    sb3 = B.TAExt(W, 2000, False)
    loop_write_fn_B(sb3, rows[:1000])
    vis["B non-growing writes visible without returning ta"] = np.array_equal(sb3.data[: 1000 * W].reshape(1000, W), rows[:1000])

    # ---------------- 6. nogil: two threads, one TA each
    def run_threads(k, make, f):
        tas = [make() for _ in range(k)]
        ths = [threading.Thread(target=f, args=(t, rows)) for t in tas]
        t = time.perf_counter()
        for th in ths:
            th.start()
        for th in ths:
            th.join()
        return time.perf_counter() - t

    thr = {}
    for name, make, f in (
        ("A write_row loop", lambda: A.TAState(W, 0, True), loop_write_fn),
        ("B ta.write loop", lambda: B.TAExt(W, 0, True), loop_write_method_B),
    ):
        t1 = statistics.median(run_threads(1, make, f) for _ in range(7))
        t2 = statistics.median(run_threads(2, make, f) for _ in range(7))
        thr[name] = (t1 * 1e3, t2 * 1e3)

    print(f"python {sys.version.split()[0]}")
    for k, v in res.items():
        print(f"{k:62s} {v:9.1f} ns")
    for k, v in vis.items():
        print(f"{k:62s} {v}")
    for k, (t1, t2) in thr.items():
        print(f"6 nogil {k}: 1 thread x {N_LOOP} rows {t1:.2f} ms; 2 threads (one TA each) {t2:.2f} ms wall")


if __name__ == "__main__":
    main()
