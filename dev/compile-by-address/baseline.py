"""Baseline: compile time of a new user @njit function on numba_ta.TensorArray (today's _jit.py) vs typed.List.

Run from anywhere: ``python dev/compile-by-address/baseline.py [--runs N] [--cache DIR]``.

One fresh ``NUMBA_CACHE_DIR`` is prepared by a first process (the engine's ``py_*`` entries and
kernels compiled and cached by Python-level ops); then each measurement runs in a new process on
that warm cache: import, a Python-level op (the engine loads from the cache), then the FIRST call
of a user function that is not cached (``@numba.njit`` without ``cache=True``), timed with the
phase breakdown of ``_harness.Breakdown``.  Modes:

``ta``         README-style: the TensorArray created inside the function, written, stacked.
``ta_arg``     the TensorArray created in Python and passed in; written and stacked inside.
``list``       the same function on ``numba.typed.List`` (append rows, then copy into an array).
"""

from __future__ import annotations

import argparse
import sys
import time

from _harness import Breakdown, child, emit, final_module_stats, med, new_cache

N_ROWS = 1000


def _python_ops():
    import numpy as np

    import numba_ta

    t0 = time.perf_counter()
    ta = numba_ta.TensorArray(np.float32, size=0, dynamic_size=True, element_shape=(64,), clear_after_read=False)
    for i in range(4):
        ta = ta.write(i, np.ones(64, np.float32))
    ta.read(0)
    ta.stack()
    ta.gather(np.array([1, 2]))
    ta2 = numba_ta.TensorArray(np.float32, size=4)
    ta2 = ta2.scatter(np.array([0, 1]), np.ones((2, 3), np.float32))
    ta2.concat()
    ta3 = numba_ta.TensorArray(np.float32, size=2)
    ta3.split(np.ones((4, 2), np.float32), np.array([2, 2]))
    return time.perf_counter() - t0


def run_child(mode):
    import numpy as np

    t0 = time.perf_counter()
    import numba
    import numba_ta  # noqa: F401

    t_import = time.perf_counter() - t0
    t_pyops = _python_ops()
    out = {"mode": mode, "import_s": round(t_import, 3), "python_ops_s": round(t_pyops, 3)}
    if mode == "prepare":
        emit(out)
        return

    if mode == "ta":

        @numba.njit
        def f(n):
            ta = numba_ta.TensorArray(np.float32, size=0, dynamic_size=True, element_shape=(64,))
            row = np.ones(64, np.float32)
            for t in range(n):
                ta = ta.write(t, row * np.float32(t))
            return ta.stack()

        args = (N_ROWS,)
    elif mode == "ta_arg":

        @numba.njit
        def f(ta, n):
            row = np.ones(64, np.float32)
            for t in range(n):
                ta = ta.write(t, row * np.float32(t))
            return ta.stack()

        def args_fn():
            return (numba_ta.TensorArray(np.float32, size=0, dynamic_size=True, element_shape=(64,)), N_ROWS)

    elif mode == "list":

        @numba.njit
        def f(n):
            lst = numba.typed.List.empty_list(numba.float32[::1])
            row = np.ones(64, np.float32)
            for t in range(n):
                lst.append(row * np.float32(t))
            out = np.empty((len(lst), 64), np.float32)
            for i in range(len(lst)):
                out[i] = lst[i]
            return out

        args = (N_ROWS,)
    else:
        raise SystemExit(f"unknown mode {mode}")
    if mode == "ta_arg":
        args = args_fn()
    with Breakdown() as bd:
        r = f(*args)
    assert r.shape == (N_ROWS, 64) and r[-1, 0] == N_ROWS - 1, r.shape
    out.update(bd.summary())
    out.update(final_module_stats(f))
    runs = []
    for _ in range(20):
        if mode == "ta_arg":
            args = args_fn()
        t = time.perf_counter()
        f(*args)
        runs.append(time.perf_counter() - t)
    out["run_us"] = round(med(runs) * 1e6, 1)
    emit(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cache", help="a warm cache directory prepared by an earlier run (default: a new one)")
    ap.add_argument("--modes", default="list,ta_arg,ta")
    a = ap.parse_args()
    if a.child:
        run_child(a.child)
        return
    cache = a.cache or new_cache()
    prep = child(__file__, "prepare", cache)
    print(f"cache {cache}\nprepare (cold engine): {prep}", flush=True)
    results = {m: [] for m in a.modes.split(",")}
    for r in range(a.runs):
        for m in results:  # interleaved
            res = child(__file__, m, cache)
            print(f"run {r} {m}: {res}", flush=True)
            results[m].append(res)
    print("\nmedians over", a.runs, "runs (seconds):")
    keys = ["total", "typing", "lowering", "llvm_fn", "llvm_module", "llvm_codegen", "llvm_link", "other",
            "finalized_libraries", "typed_functions", "defined_functions", "ir_lines", "run_us", "python_ops_s"]
    print("mode    " + " ".join(f"{k:>12}" for k in keys))
    for m, rs in results.items():
        rs = [x for x in rs if "error" not in x]
        print(f"{m:8}" + " ".join(f"{med([x.get(k) for x in rs]) or 0:>12.3f}" for k in keys))


if __name__ == "__main__":
    sys.exit(main())
