"""Build hook of numba_ta: compile the engine and kernels into the built package (``numba_ta/_compiled``).

Everything else about the package is in ``pyproject.toml``.  ``pip install .`` builds a
wheel; after setuptools copies the sources to the build folder, this runs
``python -m numba_ta.core.precompile <build>/numba_ta/_compiled`` on them, so that a new
user's first ops load compiled code instead of compiling it (85 to 100 s on 2
cores, paid once, at install).  Skipped for editable installs (their in-tree Numba cache
fills at first use) and when ``NUMBA_TA_PRECOMPILE=0``; a failure only warns: the
package then compiles at first use, as without the hook.
"""

import os
import subprocess
import sys
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithKernels(build_py):
    """``build_py``, then the compiled kernels into the built package."""

    def run(self):
        """Copy the sources (setuptools), then compile the kernels into the copy (unless editable or disabled)."""
        super().run()
        if getattr(self, "editable_mode", False) or os.environ.get("NUMBA_TA_PRECOMPILE", "1") == "0":
            return
        lib = Path(self.build_lib).resolve()
        target = lib / "numba_ta" / "_compiled"
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(lib), os.environ.get("PYTHONPATH", "")]))
        env.setdefault("NUMBA_NUM_THREADS", "2")
        rc = subprocess.run([sys.executable, "-m", "numba_ta.core.precompile", str(target)], env=env, check=False)
        if rc.returncode:
            self.warn("numba_ta: compiling the kernels at build time failed; they will be compiled at first use")


setup(cmdclass={"build_py": BuildPyWithKernels})
