"""Options A2 (Numba-ABI entries by symbol) and A1 (C-ABI cfuncs by symbol): compile time and caching.

``python dev/compile-by-address/measure_address.py [--runs N] [--cache DIR]``

A first process prepares a fresh cache (numba_ta's engine, this prototype's entries, the cached
user functions of ``user_fns.py``).  Then, interleaved, each in a new process on that warm cache:

``a2``        a NEW user function (not cached) on the A2 API, TensorArray created inside (README-style)
``a2_arg``    the same with the TensorArray created in Python and passed in
``a1_arg``    the same on the A1 (cfunc, C ABI) API
``list``      the typed.List function of baseline.py
``cached``    the ``cache=True`` functions of ``user_fns.py`` in a new process: cache hits, results,
              the error raised through the address, and whether the symbols were registered by
              ``_reload_init`` (nothing else registers them in that process)
"""

from __future__ import annotations

import argparse
import sys
import time

from _harness import Breakdown, child, emit, final_module_stats, med, new_cache

N_ROWS = 1000


def run_child(mode):
    import numpy as np

    t0 = time.perf_counter()
    import numba

    import numba_ta

    out = {"mode": mode, "import_numba_ta_s": round(time.perf_counter() - t0, 3)}

    def new_ta():
        return numba_ta.TensorArray(np.float32, size=0, dynamic_size=True, element_shape=(64,))

    if mode == "prepare":
        import engine_abi as A
        import user_fns as U

        t = time.perf_counter()
        A.register()
        A.register_c()
        out["register_s"] = round(time.perf_counter() - t, 3)
        U.fill_stack_a2(10)
        U.fill_stack_a2_arg(new_ta(), 10)
        U.fill_stack_a1_arg(new_ta(), 10)
        ta = numba_ta.TensorArray(np.float32, size=1)
        ta.write(0, np.ones(3, np.float32))
        try:
            U.read_twice_a2(ta)
        except Exception as e:  # noqa: BLE001
            out["error_through_address"] = f"{type(e).__name__}: {e}"
        emit(out)
        return

    if mode == "cached":
        import llvmlite.binding as llb

        t = time.perf_counter()
        import engine_abi as A
        import user_fns as U

        out["import_prototype_s"] = round(time.perf_counter() - t, 3)
        out["symbols_before_call"] = [n for n in A.ENTRIES if llb.address_of_symbol(n)]
        res = {}
        for name, args in (("fill_stack_a2", (N_ROWS,)), ("fill_stack_a2_arg", (new_ta(), N_ROWS)),
                           ("fill_stack_a1_arg", (new_ta(), N_ROWS))):  # fmt: skip
            f = getattr(U, name)
            t = time.perf_counter()
            r = f(*args)
            ok = r.shape == (N_ROWS, 64) and r[-1, 0] == N_ROWS - 1
            res[name] = {"first_call_s": round(time.perf_counter() - t, 3), "ok": bool(ok),
                         "cache_hits": sum(f.stats.cache_hits.values()), "cache_misses": sum(f.stats.cache_misses.values())}  # fmt: skip
        ta = numba_ta.TensorArray(np.float32, size=1)
        ta.write(0, np.ones(3, np.float32))
        try:
            U.read_twice_a2(ta)
            res["read_twice_a2"] = "no error"
        except Exception as e:  # noqa: BLE001
            res["read_twice_a2"] = f"{type(e).__name__}: {e}"
        out["functions"] = res
        out["symbols_after"] = [n for n in A.ENTRIES if llb.address_of_symbol(n)]
        out["c_symbols_after"] = [n for n in A.C_ENTRIES if llb.address_of_symbol(n)]
        emit(out)
        return

    if mode in ("a2", "a2_arg", "a1_arg"):
        import engine_abi as A

        t = time.perf_counter()
        A.register()
        A.register_c()
        out["register_s"] = round(time.perf_counter() - t, 3)
    if mode == "a2":

        @numba.njit
        def f(n):
            ta = A.new_x(np.float32, 0, True, (64,))
            row = np.ones(64, np.float32)
            for t in range(n):
                ta = ta.write_x(t, row * np.float32(t))
            return ta.stack_x()

    elif mode == "a2_arg":

        @numba.njit
        def f(ta, n):
            row = np.ones(64, np.float32)
            for t in range(n):
                ta = ta.write_x(t, row * np.float32(t))
            return ta.stack_x()

    elif mode == "a1_arg":

        @numba.njit
        def f(ta, n):
            row = np.ones(64, np.float32)
            for t in range(n):
                ta = ta.write_c(t, row * np.float32(t))
            return ta.stack_c()

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

    else:
        raise SystemExit(mode)

    def args():
        return (new_ta(), N_ROWS) if mode.endswith("_arg") else (N_ROWS,)

    a = args()
    with Breakdown() as bd:
        r = f(*a)
    assert r.shape == (N_ROWS, 64) and r[-1, 0] == N_ROWS - 1
    out.update(bd.summary())
    out.update(final_module_stats(f))
    runs = []
    for _ in range(20):
        a = args()
        t = time.perf_counter()
        f(*a)
        runs.append(time.perf_counter() - t)
    out["run_us"] = round(med(runs) * 1e6, 1)
    emit(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--child")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--cache")
    ap.add_argument("--modes", default="list,a2,a2_arg,a1_arg")
    a = ap.parse_args()
    if a.child:
        run_child(a.child)
        return
    cache = a.cache or new_cache()
    t = time.perf_counter()
    prep = child(__file__, "prepare", cache)
    print(f"cache {cache}\nprepare ({time.perf_counter() - t:.1f} s): {prep}", flush=True)
    for k in range(2):
        print(f"cached (new process #{k}):", child(__file__, "cached", cache), flush=True)
    results = {m: [] for m in a.modes.split(",")}
    for r in range(a.runs):
        for m in results:
            res = child(__file__, m, cache)
            print(f"run {r} {m}: {res}", flush=True)
            results[m].append(res)
    keys = ["total", "typing", "lowering", "llvm_fn", "llvm_module", "llvm_codegen", "llvm_link", "other",
            "finalized_libraries", "typed_functions", "defined_functions", "ir_lines", "run_us", "register_s"]
    print(f"\nmedians over {a.runs} runs (seconds; run_us: microseconds for {N_ROWS} rows written and stacked):")
    print("mode    " + " ".join(f"{k:>12}" for k in keys))
    for m, rs in results.items():
        rs = [x for x in rs if "error" not in x]
        print(f"{m:8}" + " ".join(f"{med([x.get(k) for x in rs]) or 0:>12.3f}" for k in keys))


if __name__ == "__main__":
    sys.exit(main())
