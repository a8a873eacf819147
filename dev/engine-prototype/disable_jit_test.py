import numpy as np, traceback
r = np.arange(4, dtype=np.float32)
for name in ("proto_ext", "proto_structref"):
    try:
        m = __import__(name)
        cls = m.TAExt if name == "proto_ext" else m.TAState
        st = cls(4, 0, True)
        st.write(0, r); st.write(5, r + 1)
        print(name, "python API ok", st.size, st.cap, st.read(5))
        # "user njit code" under DISABLE_JIT = plain Python on the same object
        from numba import njit
        @njit
        def user(ta, n):
            for i in range(n):
                ta = ta.write(i + 10, np.full(4, i, np.float32))
            return ta
        t = user(st, 3); print(name, "user fn ok", t is st, t.size)
    except Exception as e:
        print(name, "FAILED:", type(e).__name__, str(e)[:300])
        traceback.print_exc(limit=3)
