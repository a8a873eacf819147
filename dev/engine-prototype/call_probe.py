"""Interleaved Python->njit overheads; median and min of 15 reps (the machine is shared)."""
import statistics, timeit
import numpy as np
from numba import njit
import proto_structref as A, proto_ext as B
from bench import PyState

@njit
def noop(x): return 0

W = 64
a = A.TAState(W, 16); b = B.TAExt(W, 16); arr = np.zeros(4)
row = np.ones(W, np.float32); out = np.empty(W, np.float32)
pa = A.TAState(W, 16); pb = B.TAExt(W, 16); pp = PyState(W, 16)
A.write_row(pa, 3, row); B.write_row(pb, 3, row); pp.write(3, row)
cases = {
    "noop(ndarray)": ("f(x)", dict(f=noop, x=arr)),
    "noop(A structref)": ("f(x)", dict(f=noop, x=a)),
    "noop(B ext type, _numba_type_ class attr)": ("f(x)", dict(f=noop, x=b)),
    # write: the same slot each time would hit ALREADY_WRITTEN, so time a full op on
    # slot 3 with the state bit reset by a raw numpy store (B only) -- instead use read.
    "read A read_row(st,3,out) (whole compiled op)": ("f(s,3,o)", dict(f=A.read_row, s=pa, o=out)),
    "read B read_row(st,3,out) (whole compiled op)": ("f(s,3,o)", dict(f=B.read_row, s=pb, o=out)),
    "read pure-Python (same checks)": ("f(3)", dict(f=pp.read)),
    "read numpy out[:] = arr2d[3]": ("o[:] = d[3]", dict(o=out, d=np.ones((16, W), np.float32))),
}
for s, g in cases.values():
    exec(s, g)
res = {k: [] for k in cases}
for _ in range(15):
    for k, (s, g) in cases.items():
        res[k].append(timeit.timeit(s, globals=g, number=20000) / 20000 * 1e9)
for k, v in res.items():
    print(f"{k:50s} median {statistics.median(v):7.0f} ns   min {min(v):7.0f} ns")
