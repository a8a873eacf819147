"""numba_ta's Numba extension: registered by ``numba_ta.jit.extension.init``, the class knows nothing of Numba.

Numba calls ``init`` through numba_ta's ``numba_extensions`` entry point before it compiles or
types anything; ``import numba_ta`` calls it when that entry point is not registered (a source
tree on ``sys.path``).  Each case runs in a fresh process, which imports only numba and the
class's module, so that nothing else has registered the extension before.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import pytest

import numba_ta
import numba_ta.tensor_array
from numba_ta.jit import extension as _jit

ROOT = Path(__file__).resolve().parents[1]

USER_CODE = """
import sys
import numba
import numpy as np
from numba_ta.tensor_array import TensorArray

def initialized():
    return "numba_ta.jit.extension" in sys.modules and sys.modules["numba_ta.jit.extension"]._initialized

before = initialized()

@numba.njit
def fill(ta, n):
    for i in range(n):
        ta = ta.write(i, np.full(2, i, np.float64))
    return ta, ta.stack()

@numba.njit
def make():
    return TensorArray(np.float64, size=2, element_shape=(2,)).write(1, np.ones(2))

ta = TensorArray(np.float64, size=0, dynamic_size=True, element_shape=[2], clear_after_read=False)
ta2, rows = fill(ta, 3)
assert isinstance(ta2, TensorArray) and rows.tolist() == [[0, 0], [1, 1], [2, 2]], rows
assert make().read(1).tolist() == [1.0, 1.0]
eps = __import__("importlib.metadata").metadata.entry_points(group="numba_extensions", name="init")
print("ok", before, initialized(), any(ep.value == "numba_ta.jit.extension:init" for ep in eps))
"""


def _run(code, cwd, source_tree=True):
    """Run ``code`` in a fresh process in ``cwd``: the source tree first on its path, or only the installed package."""
    env = dict(os.environ)
    if source_tree:
        env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )
    if not source_tree and "ModuleNotFoundError: No module named 'numba_ta'" in proc.stderr:
        pytest.skip("numba_ta is not installed")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout.split()


def test_the_class_module_holds_nothing_of_numba():
    import operator

    import numba_ta.tensor_array.array

    _jit.init()  # (idempotent) the registrations, _numba_type_ among them
    mod = vars(numba_ta.tensor_array.array)
    assert "numba" not in mod and "overload" not in mod and "_jit" not in mod
    for name, value in vars(numba_ta.TensorArray).items():
        if name == "_numba_type_":  # Numba's typeof protocol, set by _jit.init (the dispatcher reads it in C)
            assert isinstance(value.fget, operator.attrgetter)  # C: no Python code, where Numba clears errors
            continue
        assert not name.startswith("_numba"), name
        assert getattr(value, "__module__", None) != "numba_ta.jit.extension", name
        assert getattr(getattr(value, "fget", None), "__module__", None) != "numba_ta.jit.extension", name
    source = Path(numba_ta.tensor_array.array.__file__).read_text()
    assert not re.search(r"^\s*(import numba|from numba(\.\w+)* import)", source, re.M), "the class imports numba"
    assert "numba_ta.jit" not in source and "_jit" not in source


@pytest.mark.jit_only("registration with Numba's typeof")
def test_init_is_idempotent_and_registers_typeof():
    import numpy as np

    _jit.init()
    _jit.init()
    ta = numba_ta.TensorArray(np.float32, size=1, element_shape=[3])
    assert numba.typeof(ta) is _jit.numba_type(ta) is _jit.array_type(np.float32, 1)


def test_the_entry_point_registers_the_extension_in_a_fresh_process(tmp_path):
    """The installed package: Numba's entry point runs init at the first compile, not the import."""
    out = _run(USER_CODE, cwd=tmp_path, source_tree=False)  # (a source tree's *.egg-info could hide the metadata)
    if out[-1] != "True":
        pytest.skip("numba_ta is not installed with its entry point (the import registered the extension)")
    assert out[0] == "ok"
    if not numba.config.DISABLE_JIT:
        assert out[1:3] == ["False", "True"]  # not at import: Numba called init before compiling


def test_without_the_entry_point_import_numba_ta_registers_it(tmp_path):
    """A source tree, not installed: no metadata, and Numba loads no entry point; ``import numba_ta`` does it."""
    code = (
        textwrap.dedent(
            """
        import importlib.metadata as md
        import numba.core.entrypoints
        numba.core.entrypoints._already_initialized = True  # Numba loads no entry point in this process
        real = md.distribution
        def distribution(name):
            if name == "numba_ta":
                raise md.PackageNotFoundError(name)
            return real(name)
        md.distribution = distribution
        """
        )
        + USER_CODE
    )
    out = _run(code, cwd=tmp_path)
    if not numba.config.DISABLE_JIT:
        assert out[:3] == ["ok", "True", "True"]  # registered by the import, before the first compile
    assert out[0] == "ok"
