"""Dynamic growth: n writes of 64 float32 into a ``dynamic_size=True`` array.

One of the project's performance goals (the documentation's Performance
page) is a cost per write at 10**6 writes within 1.5x of the cost at 10**4:
``GrowthRatio.track_per_write_ratio`` tracks that ratio directly (10**5 by
default, 10**6 with ``NUMBA_TA_BENCH_LARGE=1``).  Baselines: a preallocated
buffer of the final size, ``list.append`` and TF's dynamic ``tf.TensorArray``.
"""

import statistics

from . import workloads
from .common import IMPLS_LOOP, get_case, is_large

GROWTH_NS = [10_000, 100_000] + ([1_000_000] if is_large() else [])


class Growth:
    params = [IMPLS_LOOP, GROWTH_NS]
    param_names = ["impl", "n"]
    timeout = 600

    def setup(self, impl, n):
        if impl.startswith("tf") and n > 10_000 and not is_large():
            raise NotImplementedError("TF growth beyond 10**4 writes needs NUMBA_TA_BENCH_LARGE=1")
        self.case = get_case("growth", impl, "256B", n, "float32")
        self.state = self.case.prepare()

    def time_growth(self, impl, n):
        state, self.state = self.state, None
        self.case.run(self.case.prepare() if state is None else state)


class GrowthRatio:
    """Per-write cost at the largest n over the per-write cost at 10**4 (numba_ta)."""

    unit = "ratio"
    timeout = 600

    def setup(self):
        self.lo = workloads.make_case("growth", "numba_ta", 10_000, 64, "float32")
        self.hi = workloads.make_case("growth", "numba_ta", GROWTH_NS[-1], 64, "float32")

    def track_per_write_ratio(self):
        lo = statistics.median(workloads.measure(self.lo, repeat=5)) / self.lo.n
        hi = statistics.median(workloads.measure(self.hi, repeat=3)) / self.hi.n
        return hi / lo
