import time, numpy as np
t0 = time.perf_counter()
import proto_structref as A, proto_ext as B, cache_user as U
t1 = time.perf_counter()
rows = np.ones((10, 8), np.float32)
out = {}
for name, mk, f in (("A", lambda: A.TAState(8, 0, True), U.user_A), ("B", lambda: B.TAExt(8, 0, True), U.user_B)):
    t = time.perf_counter()
    try:
        ta, r, s = f(mk(), rows)
        ok = s.shape == (10, 8)
    except Exception as e:
        ok = repr(e)[:300]
    out[name] = (ok, round(time.perf_counter() - t, 3), dict(f.stats.cache_hits), dict(f.stats.cache_misses))
mods = {"A.write_row": A.write_row, "B.write_row": B.write_row, "A._new_state": A._new_state}
print("import", round(t1 - t0, 3), "s")
for k, v in out.items(): print(k, "ok=%s first-call %.3fs hits=%s misses=%s" % v)
for k, f in mods.items(): print(k, "hits", dict(f.stats.cache_hits), "misses", dict(f.stats.cache_misses))
