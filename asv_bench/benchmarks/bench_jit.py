"""Compiled code: a TensorArray inside ``@numba.njit`` against numpy and ``numba.typed.List`` in the same loop.

The workloads and variants of :mod:`jit_workloads` (``variant`` is the
benchmark parameter; rows of 64 float32, ``n`` rows or calls):

``JitWrite.time_write``
    One compiled loop of ``n`` writes (``numba_ta``, ``numba_ta_dynamic``),
    row assignments into a preallocated array (``numpy``) or
    ``typed.List.append`` of row copies (``typed_list``): divide by ``n`` for
    the time per row.  Each timed call writes into the fresh, empty array or
    list its setup made.
``JitRead.time_read``
    One compiled loop of ``n`` reads (``ta.read(t)``, ``arr[t].copy()``,
    ``lst[t].copy()``): divide by ``n`` for the time per row.
``JitStack.time_stack``
    One ``ta.stack()`` or ``arr.copy()`` of ``n`` rows inside a compiled
    function: ``n * 256`` bytes over the time is the bandwidth.
``JitCall.time_call``
    ``n`` calls from Python of a compiled function taking a TensorArray
    (``numba_ta``), an ndarray (``numpy``) or nothing (``no_arg``): divide
    by ``n`` for the time per call.

Setup builds the case once per process and checks its result
(:meth:`jit_workloads.JitCase.verify`), so no variant is timed whose result
is wrong and no timing includes compilation.  The first call compiles the
function, or loads it from Numba's cache (``cache=True``): uncached, the
TensorArray methods take tens of seconds to compile.
``NUMBA_TA_BENCH_LARGE=1`` adds ``n = 100000``.
"""

from . import jit_workloads
from .common import TimedCalls, is_large

COUNTS = [jit_workloads.N, 100_000] if is_large() else [jit_workloads.N]

_CASES: dict = {}


def get_case(workload, variant, n):
    """The checked, compiled :class:`jit_workloads.JitCase`, built once per process."""
    key = (workload, variant, n)
    case = _CASES.get(key)
    if case is None:
        case = jit_workloads.make_jit_case(workload, variant, n, jit_workloads.ITEMS, "float32")
        case.verify()  # compilation or cache load, and the result checked
        _CASES[key] = case
    return case


class _JitBenchmark(TimedCalls):
    """Base class: one workload of jit_workloads over (variant, n); subclasses set ``workload``."""

    workload = ""
    param_names = ["variant", "n"]
    timeout = 300

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls.params = [list(jit_workloads.VARIANTS[cls.workload]), COUNTS]  # the workload's variants

    def setup(self, variant, n):
        self.case = get_case(self.workload, variant, n)
        self.state = self.case.prepare()  # a fresh empty array or list for the write variants


class JitWrite(_JitBenchmark):
    workload = "write"

    def time_write(self, variant, n):
        self.call()


class JitRead(_JitBenchmark):
    workload = "read"

    def time_read(self, variant, n):
        self.call()


class JitStack(_JitBenchmark):
    workload = "stack"

    def time_stack(self, variant, n):
        self.call()


class JitCall(_JitBenchmark):
    workload = "call"

    def time_call(self, variant, n):
        self.call()
