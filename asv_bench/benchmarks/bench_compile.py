"""Compile time, kept out of the steady-state benchmarks.

``CompileEngine``: a fresh process with an empty Numba cache directory runs
every op once through the class (write, read, scatter, gather, split, concat,
grad, close, and a failing read): the storage engine's compiled entries
(the ``py_*`` entries of ``numba_ta.tensor_array.engine``; of ``numba_ta._engine``
in older commits) are compiled there, the state machine in them once for arrays
of every dtype and rank.  This is what a first use costs
without a cache (a read-only install compiles in every process).  Timed
inside the process, from before the first op to after the last.

``Compile``: each call compiles a fresh, uncached dispatcher of a kernel's
Python function with the first signature the kernel was compiled for when
setup ran every op (serial and parallel paths) on small float32 arrays
(numba-benchmark's ``bench_compiling.py``).  The engine calls most kernels
from its own compiled code; those are compiled with it (``CompileEngine``) and
never get a signature of their own here: asv shows them as not run.
"""

import contextlib
import os
import subprocess
import sys
import tempfile
import time

import numba
import numpy as np
from numba.core.registry import CPUDispatcher

import numba_ta

try:
    from numba_ta.core import kernels as _kernels
except ImportError:  # a commit before the layout by folders (the suite times old commits too)
    from numba_ta import _kernels

# the kernels by their names without a leading underscore (older commits named them _gather_segments ...,
# the same functions): a run over several commits compares the same kernel under one parameter
KERNELS = sorted(name.lstrip("_") for name, obj in vars(_kernels).items() if isinstance(obj, CPUDispatcher))


@contextlib.contextmanager
def _threshold(items):
    """Force the parallel threshold (public setter if there is one)."""
    if hasattr(numba_ta, "set_parallel_threshold"):
        old = numba_ta.get_parallel_threshold()
        numba_ta.set_parallel_threshold(items)
        try:
            yield
        finally:
            numba_ta.set_parallel_threshold(old)
        return
    try:
        from numba_ta.core import config as _config
    except ImportError:  # a commit before the layout by folders
        from numba_ta import _config

    old = _config.PARALLEL_MIN_ELEMENTS
    _config.PARALLEL_MIN_ELEMENTS = items
    try:
        yield
    finally:
        _config.PARALLEL_MIN_ELEMENTS = old


def _exercise():
    """Call every op once on small float32 arrays so that each kernel has a signature."""
    TA = numba_ta.TensorArray
    data = np.arange(24, dtype=np.float32).reshape(4, 6)
    for items in (1 << 62, 0):  # serial kernels, then parallel ones
        with _threshold(items):
            ta = TA(np.float32, size=4, clear_after_read=False).unstack(data)
            ta.stack()
            ta.gather([3, 1])
            ta.concat()
            TA(np.float32, size=4).scatter([2, 0, 1, 3], data)
            flat = data.reshape(-1)
            sp = TA(np.float32, size=3, clear_after_read=False, infer_shape=False).split(
                flat, [4, 8, 12]
            )  # ragged: segments
            sp.concat()
            TA(np.float32, size=4, clear_after_read=False).split(flat, [6, 6, 6, 6]).concat()
            g = TA(np.float32, size=4).grad("gradients")
            g = g.scatter([0, 1, 2, 3], data).scatter([0, 1, 2, 3], data)  # aggregate rows
            fw = TA(np.float32, size=3, infer_shape=False)
            fw = fw.split(flat, [4, 8, 12])
            gs = fw.grad("gradients")
            gs = gs.split(flat, [4, 8, 12]).split(flat, [4, 8, 12])  # aggregate segments


class Compile:
    params = [KERNELS]
    param_names = ["kernel"]
    # every call is a full compile (0.3-2 s): no calibration loop, no warm-up loop
    number, repeat, rounds, warmup_time = 1, 3, 1, 0.0
    timeout = 300

    def setup(self, kernel):
        self.k = getattr(_kernels, kernel, None) or getattr(_kernels, "_" + kernel)
        if not self.k.signatures:
            _exercise()
        if not self.k.signatures:
            raise NotImplementedError(f"{kernel} is not reached by the ops in _exercise()")
        self.sig = self.k.signatures[0]

    def time_compile(self, kernel):
        # fresh, uncached dispatcher: targetoptions carries parallel/nogil but not cache
        numba.jit(self.sig, **self.k.targetoptions)(self.k.py_func)


ENGINE_CODE = """\
import time
import numpy as np
from numba_ta import TensorArray
t0 = time.perf_counter()
ta = TensorArray(np.float32, size=4, dynamic_size=True)
ta = ta.write(0, np.ones(3, np.float32))
ta.read(0)
ta = ta.scatter([1, 2], np.ones((2, 3), np.float32))
ta.gather([1, 2])
tb = TensorArray(np.float32, size=4, infer_shape=False).split(np.ones(8, np.float32), [2, 2, 2, 2])
tb.concat()
ta.grad("gradients")
ta.close()
try:
    ta.read(0)
except Exception:
    pass
print(time.perf_counter() - t0)
"""


class CompileEngine:
    # one fresh process per sample, each compiling for about a minute: one sample
    number, repeat, rounds, warmup_time = 1, 1, 1, 0.0
    timeout = 900

    def track_engine_first_ops_without_cache(self):
        with tempfile.TemporaryDirectory() as cache:
            env = dict(os.environ, NUMBA_CACHE_DIR=cache)
            t0 = time.perf_counter()
            out = subprocess.run(
                [sys.executable, "-c", ENGINE_CODE], capture_output=True, text=True, env=env, check=True
            )
            wall = time.perf_counter() - t0
        inside = float(out.stdout.strip().splitlines()[-1])
        assert 0 < inside < wall, (inside, wall)
        return inside

    track_engine_first_ops_without_cache.unit = "seconds"
