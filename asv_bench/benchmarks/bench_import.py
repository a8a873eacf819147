"""Cold start: a fresh ``python -c`` importing numba_ta and doing a first write, read and stack.

With a warm numba cache (setup runs the same process once first), so this
measures import plus loading the cached kernels, not compilation.  The
project's goal (the documentation's Performance page) is under 1 s.  The
process inherits the environment (``NUMBA_NUM_THREADS``, ``NUMBA_CACHE_DIR`` ...).
"""

import subprocess
import sys

from . import workloads

_warm = []


class ColdImport:
    number, repeat, rounds, warmup_time = 1, 5, 1, 0.0
    timeout = 120

    def setup(self):
        if not _warm:
            workloads.cold_import_seconds(repeat=0)  # one untimed process fills the on-disk cache
            _warm.append(True)

    def time_import_and_first_ops(self):
        subprocess.run([sys.executable, "-c", workloads.COLD_IMPORT_CODE], check=True, capture_output=True)
