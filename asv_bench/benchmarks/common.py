"""Shared parameters, switches and the case cache of the numba_ta asv suite.

Every benchmark times a :class:`workloads.Case`: the one definition of
"the same work" for numba_ta and its alternatives, shared with
``numba-ta bench`` (:mod:`report`).  ``impl`` is a benchmark parameter, so asv shows numba_ta
and its baselines side by side:

``numba_ta``        :class:`numba_ta.TensorArray`
``raw_ops``         :mod:`numba_ta.raw_ops` (loops and GradV3 only; bulk ops share numba_ta's path)
``numpy_prealloc``  a preallocated numpy buffer doing the same copies (row assignment,
                    ``np.take(out=)``, fancy assignment, ``np.copyto``, ``np.add(out=)``)
``numpy_list``      a Python list of arrays with ``np.stack`` / ``np.concatenate`` / ``np.split``
``tf_eager``        ``tf.TensorArray`` eagerly (TensorArrayV3 raw ops for gradient arrays)
``tf_function``     the same inside ``tf.function`` (see :mod:`workloads` for what it includes)

Sizes: element size (``256B`` = 64 float32, ``4KiB``, ``4MiB``) x element
count (16, 16384) x dtype (float32, float64), with at most 64 MiB of element
data per benchmark.  ``NUMBA_TA_BENCH_LARGE=1`` adds 1024 and 262144 elements
and raises the budget to 1 GiB.  The TensorFlow baselines import TensorFlow
(~4 s per benchmark process), so by default each benchmark runs them on one
float32 size only (``tf_default``: 16384 x 256B for the element loops, 16384 x
4KiB = 64 MiB for the bulk ops); ``NUMBA_TA_BENCH_LARGE=1`` runs them on every
size.  Combinations left out are reported as skipped (n/a).

Rules (numpy's benchmarks/README): setup does all preparation, including the
first call (JIT compilation or cache load, page faults, ``tf.function``
tracing), so no timing includes compilation; a timed method makes one call;
inputs are filled, never ``np.empty``.  Nothing here pins threads or the
threading layer: run asv with ``NUMBA_NUM_THREADS=2 OMP_WAIT_POLICY=PASSIVE``.
"""

import os

import numpy as np

from . import workloads

ELEMENTS = {"256B": 256, "4KiB": 4 << 10, "4MiB": 4 << 20}
DTYPES = ["float32", "float64"]
IMPLS_LOOP = ["numba_ta", "raw_ops", "numpy_prealloc", "numpy_list", "tf_eager", "tf_function"]
IMPLS_BULK = ["numba_ta", "numpy_prealloc", "numpy_list", "tf_eager", "tf_function"]
IMPLS_MEM = ["numba_ta", "numpy_prealloc", "numpy_list"]
#: (element, n) the TensorFlow baselines run on by default (float32): element loops, bulk ops.
TF_LOOP = ("256B", 16384)
TF_BULK = ("4KiB", 16384)


def is_large():
    """Return True when NUMBA_TA_BENCH_LARGE=1 enables the large parameter set."""
    return os.environ.get("NUMBA_TA_BENCH_LARGE", "0") == "1"


COUNTS = [16, 1024, 16384, 262144] if is_large() else [16, 16384]
#: Largest element data per benchmark, in bytes.
BUDGET = (1 << 30) if is_large() else (64 << 20)

_CASES = {}


def get_case(op, impl, element, n, dtype, tf_default=None):
    """The warmed-up :class:`workloads.Case`, built once per process.

    Raises NotImplementedError (asv: skipped) for combinations over the byte
    budget, TensorFlow baselines off their default ``(element, n)``
    `tf_default` (float32; None: any size), and implementations that are not
    available (TensorFlow not installed).
    """
    key = (op, impl, element, n, dtype)
    case = _CASES.get(key)
    if case is not None:
        return case
    nbytes = ELEMENTS[element] * n
    if nbytes > BUDGET:
        raise NotImplementedError(
            f"{n} x {element} is {nbytes >> 20} MiB, over the {BUDGET >> 20} MiB budget (NUMBA_TA_BENCH_LARGE=1)"
        )
    if impl.startswith("tf") and tf_default is not None and not is_large():
        if dtype != "float32" or (element, n) != tuple(tf_default):
            raise NotImplementedError(
                f"TF baselines run on {tf_default[1]} x {tf_default[0]} float32 only here (NUMBA_TA_BENCH_LARGE=1)"
            )
    items = ELEMENTS[element] // np.dtype(dtype).itemsize
    case = workloads.make_case(op, impl, n, items, dtype)  # workloads.Unavailable is a NotImplementedError
    case.run(case.prepare())  # warm-up: JIT compile or cache load, page faults, tf.function tracing
    _CASES[key] = case
    return case


class TimedCalls:
    """Mixin: ``self.case`` run on the ``self.state`` setup prepared, one call per timing."""

    def teardown(self, *params):
        self.state = None

    def call(self):
        """One call of the case on the state setup prepared (a new state if it was used already)."""
        state, self.state = self.state, None
        if state is None:  # an asv that times several calls per setup
            state = self.case.prepare()
        self.case.run(state)


class OpBenchmark(TimedCalls):
    """Base class: one op over (impl, element, n, dtype); subclasses set ``op`` and define time_/peakmem_."""

    op = None
    tf_default = TF_BULK
    params = [IMPLS_BULK, list(ELEMENTS), COUNTS, DTYPES]
    param_names = ["impl", "element", "n", "dtype"]
    timeout = 300
    #: Processes per commit (asv's default is 2), interleaved with the other commit's by asv
    #: continuous: a process's memory-bound timings depend on the pages it got (4 KiB or huge:
    #: 3 ms or 8 ms for the same 64 MiB copy), which two processes per commit do not average out;
    #: with two, the same numpy code at two commits came out up to 2.7x apart under load.
    rounds = 4

    def setup(self, impl, element, n, dtype):
        self.case = get_case(self.op, impl, element, n, dtype, self.tf_default)
        self.state = self.case.prepare()  # a fresh empty array for write-once ops
