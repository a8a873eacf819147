"""Option B: Numba's first-class function types (a cfunc as a global or as an argument): caching.

``python dev/compile-by-address/option_b.py``: two new processes on one fresh cache directory; each
calls ``user_fns_b``'s ``cache=True`` functions and reports cache hits/misses and warnings.  The
per-call cost of B is in ``percall.py``.
"""

from __future__ import annotations

import sys
import time
import warnings

from _harness import child, emit, new_cache


def run_child():
    import numpy as np

    import user_fns_b as U
    from percall import M, W, c_write

    data, state, row = np.zeros((M, W), np.float32), np.zeros(M, np.uint8), np.ones(W, np.float32)
    out = {}
    for name, args in (("b_global", (data, state, row)), ("b_arg", (c_write, data, state, row))):
        f = getattr(U, name)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            t = time.perf_counter()
            st = f(*args)
            dt = time.perf_counter() - t
        out[name] = {"status": int(st), "wrote": bool(data[3, 0] == 1), "first_call_s": round(dt, 3),
                     "cache_hits": sum(f.stats.cache_hits.values()), "cache_misses": sum(f.stats.cache_misses.values()),
                     "warnings": [str(x.message)[:200] for x in w]}  # fmt: skip
        data[3] = 0
    # per call from Python: B's argument is unboxed by a Python-level call (_get_wrapper_address)
    import timeit

    out["b_arg_python_call_us"] = round(min(timeit.repeat(lambda: U.b_arg(c_write, data, state, row), number=2000, repeat=5)) / 2000 * 1e6, 2)  # noqa: E501
    out["b_global_python_call_us"] = round(min(timeit.repeat(lambda: U.b_global(data, state, row), number=2000, repeat=5)) / 2000 * 1e6, 2)  # noqa: E501
    emit(out)


def main():
    if "--child" in sys.argv:
        run_child()
        return
    cache = new_cache()
    for k in range(2):
        print(f"process {k}:", child(__file__, "b", cache), flush=True)


if __name__ == "__main__":
    main()
