"""In-njit per-op cost with refcount-free (raw pointer) field access; interleaved reps."""
import statistics, time
import numpy as np
from numba import njit, types
from numba.typed import List
import proto_structref as A, proto_ext as B
from bench import loop_np_write, loop_np_read, loop_list_append, loop_write_fn, loop_read_A, loop_write_method_A, loop_write_method_B

W, n = 64, 100_000

@njit(nogil=True)
def wA_fast(st, rows):
    s = 0
    for i in range(rows.shape[0]):
        s |= A.write_row_fast(st, i, rows[i])
    return s

@njit(nogil=True)
def wA_meth_fast(ta, rows):
    for i in range(rows.shape[0]):
        ta = ta.write_fast(i, rows[i])
    return ta

@njit(nogil=True)
def wB_meth_fast(ta, rows):
    for i in range(rows.shape[0]):
        ta = ta.write_fast(i, rows[i])
    return ta

@njit(nogil=True)
def wB_fast_prealloc(st, rows):
    s = 0
    for i in range(rows.shape[0]):
        s |= B.write_row_fast(st, i, rows[i])
    return s

@njit(nogil=True)
def rA_fast(st, n, out):
    acc = 0.0
    for i in range(n):
        A.read_row_fast(st, i, out)
        acc += out[0]
    return acc

@njit(nogil=True)
def rB_fast(st, n, out):
    acc = 0.0
    for i in range(n):
        B.read_row_fast(st, i, out)
        acc += out[0]
    return acc

@njit(nogil=True)
def r_meth_fast(ta, n):
    acc = 0.0
    for i in range(n):
        acc += ta.read_fast(i)[0]
    return acc

rows = np.random.default_rng(0).standard_normal((n, W)).astype(np.float32)
def main():
    out = np.empty(W, np.float32)
    warm_pre = np.empty((n, W), np.float32)
    cases = {
        "write numpy out[i,:]=row, warm prealloc buffer": (loop_np_write, lambda: (warm_pre, rows)),
        "write numpy out[i,:]=row, fresh np.empty each run": (loop_np_write, lambda: (np.empty((n, W), np.float32), rows)),
        "write typed.List.append(row.copy())": (loop_list_append, lambda: (rows,)),
        "write A write_row (getattr, refcounted), dynamic": (loop_write_fn, lambda: (A.TAState(W, 0, True), rows)),
        "write A write_row_fast (raw ptr), dynamic": (wA_fast, lambda: (A.TAState(W, 0, True), rows)),
        "write A write_row_fast, preallocated": (wA_fast, lambda: (A.TAState(W, n, False), rows)),
        "write A ta = ta.write_fast(i,row), dynamic": (wA_meth_fast, lambda: (A.TAState(W, 0, True), rows)),
        "write B ta = ta.write_fast(i,row), dynamic": (wB_meth_fast, lambda: (B.TAExt(W, 0, True), rows)),
        "write B write_row_fast, preallocated": (wB_fast_prealloc, lambda: (B.TAExt(W, n, False), rows)),
    }
    ra = A.TAState(W, n, False); wA_fast(ra, rows)
    rb = B.TAExt(W, n, False); wB_fast_prealloc(rb, rows)
    cases.update({
        "read numpy out[:]=arr[i]": (loop_np_read, lambda: (rows, n, out)),
        "read A read_row (refcounted)": (loop_read_A, lambda: (ra, n, out)),
        "read A read_row_fast (raw ptr)": (rA_fast, lambda: (ra, n, out)),
        "read B read_row_fast (raw ptr)": (rB_fast, lambda: (rb, n, out)),
        "read A ta.read_fast(i) (new array)": (r_meth_fast, lambda: (ra, n)),
    })
    for f, mk in cases.values():
        f(*mk())  # compile
    res = {k: [] for k in cases}
    for rep in range(15):  # interleaved, so background load hits all cases alike
        for k, (f, mk) in cases.items():
            a = mk()
            t = time.perf_counter(); f(*a); res[k].append((time.perf_counter() - t) / n * 1e9)
    for k, v in res.items():
        print(f"{k:55s} median {statistics.median(v):7.1f} ns/step  (min {min(v):6.1f})")


if __name__ == "__main__":
    main()
