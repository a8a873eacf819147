"""TensorList: a list of n elements built one op at a time with ``numba_ta.raw_ops``, then stacked.

The workloads and variants of :mod:`list_workloads` (``push``: an empty list,
``n`` ``TensorListPushBack``, one ``TensorListStack``; ``set``: a
``TensorListReserve``-d list, ``n`` ``TensorListSetItem`` in order, one
stack), against TensorFlow's eager list ops (``tf_eager``), ONNX
Runtime-style copy-per-insert (``copy_tuple``: a tuple of references copied on
every op; ``copy_array``: the data copied on every op) and a Python list
(``numpy_list``).  Elements have shape ``[items]`` float32.

``TensorListPush.time_push``, ``TensorListSet.time_set``
    One list of ``n`` elements built and stacked per timed call: divide by
    ``n`` for the time per element.
``TensorListPerElementRatio.track_per_element_ratio``
    numba_ta's time per element at 10**5 elements over its time per element
    at 10**3 (target: at most 1.5, a loop of ops costs O(n) in total).
``TensorListPushSpeedup.track_push_speedup``
    A baseline's push-and-stack time over numba_ta's, in the same process
    (target: at least 10): ``copy_tuple`` at 10**5 elements, ``tf_eager`` at
    10**4 (10**5 with ``NUMBA_TA_BENCH_LARGE=1``: about 100 s a call).

The quadratic variants (``tf_eager``, ``copy_tuple``, ``copy_array``) run
beyond 10**4 elements only with ``NUMBA_TA_BENCH_LARGE=1``, except
``copy_tuple`` in ``push`` (the baseline of the push target, about 10 s a call
at 10**5); ``copy_array`` also skips sizes whose copies would exceed 8 GiB in
total.  Setup builds each case once per process and checks its result
(:meth:`list_workloads.ListCase.verify`, also the warm-up).
"""

import statistics

from . import list_workloads, workloads
from .common import TimedCalls, is_large

COUNTS = [1_000, 10_000, 100_000]
ITEMS = [4, 256]
#: Bytes ``copy_array`` may copy in one call (about n**2 / 2 rows).
COPY_BUDGET = (128 << 30) if is_large() else (8 << 30)

_CASES: dict = {}


def _skip_reason(workload, variant, n, items):
    """Why (workload, variant, n, items) is not run here, or None."""
    if variant == "copy_array" and n * n // 2 * items * 4 > COPY_BUDGET:
        return f"copy_array copies about {n * n // 2 * items * 4 >> 30} GiB here, over {COPY_BUDGET >> 30} GiB"
    if variant in list_workloads.QUADRATIC and n > 10_000 and not is_large():
        if (workload, variant) != ("push", "copy_tuple"):
            return f"{variant} ({workload}) costs O(n**2): beyond 10**4 elements with NUMBA_TA_BENCH_LARGE=1 only"
    return None


def get_case(workload, variant, n, items):
    """The checked :class:`list_workloads.ListCase`, built once per process (NotImplementedError: skipped)."""
    key = (workload, variant, n, items)
    case = _CASES.get(key)
    if case is None:
        why = _skip_reason(workload, variant, n, items)
        if why is not None:
            raise NotImplementedError(why)
        case = list_workloads.make_list_case(workload, variant, n, items, "float32")  # Unavailable: no TF
        case.verify()  # warm-up, and the result checked
        _CASES[key] = case
    return case


class _ListBenchmark(TimedCalls):
    """Base class: one workload of list_workloads over (variant, n, items); subclasses set ``workload``."""

    workload = ""
    param_names = ["variant", "n", "items"]
    timeout = 600

    def setup(self, variant, n, items):
        self.case = get_case(self.workload, variant, n, items)
        self.state = self.case.prepare()


class TensorListPush(_ListBenchmark):
    workload = "push"
    params = [list(list_workloads.VARIANTS["push"]), COUNTS, ITEMS]

    def time_push(self, variant, n, items):
        self.call()


class TensorListSet(_ListBenchmark):
    workload = "set"
    params = [list(list_workloads.VARIANTS["set"]), COUNTS, ITEMS]

    def time_set(self, variant, n, items):
        self.call()


def _per_call(case, repeat):
    """Median seconds of `repeat` calls of `case` (one call when the first takes over 2 s)."""
    times = [workloads.measure(case, repeat=1, warmup=0)[0]]
    if times[0] < 2.0:
        times += workloads.measure(case, repeat=repeat - 1, warmup=0)
    return statistics.median(times)


class TensorListPerElementRatio:
    """numba_ta's time per element at 10**5 elements over that at 10**3 (push or set, then stack)."""

    params = [list(list_workloads.WORKLOADS), ITEMS]
    param_names = ["workload", "items"]
    unit = "ratio"
    timeout = 600

    def setup(self, workload, items):
        self.lo = list_workloads.make_list_case(workload, "numba_ta", 1_000, items, "float32")
        self.hi = list_workloads.make_list_case(workload, "numba_ta", 100_000, items, "float32")
        self.lo.verify()
        self.hi.verify()

    def track_per_element_ratio(self, workload, items):
        lo = _per_call(self.lo, 7) / self.lo.n
        hi = _per_call(self.hi, 3) / self.hi.n
        return hi / lo


class TensorListPushSpeedup:
    """A baseline's time for push + stack over numba_ta's, [4] float32 (copy_tuple at 10**5, tf_eager at 10**4)."""

    params = [["copy_tuple", "tf_eager"]]
    param_names = ["baseline"]
    unit = "ratio"
    timeout = 900

    def setup(self, baseline):
        n = 100_000 if baseline == "copy_tuple" or is_large() else 10_000
        self.base = list_workloads.make_list_case("push", baseline, n, 4, "float32")  # Unavailable: no TF
        self.nt = list_workloads.make_list_case("push", "numba_ta", n, 4, "float32")
        self.nt.verify()
        list_workloads.make_list_case("push", baseline, 1_000, 4, "float32").verify()  # warm-up, checked

    def track_push_speedup(self, baseline):
        return _per_call(self.base, 3) / _per_call(self.nt, 5)
