"""Users' compiled functions call the engine's entries by symbol (``numba_ta.jit.abi``), not compiled into them.

Checks that a user function's code declares the versioned entry symbols and holds none of the
engine's bodies; that a ``cache=True`` user function loads from Numba's cache in a new process
(its hook registers the entries before its object code is loaded) with the right results and
errors, and is compiled again, not loaded, when its entries' interface changed; that errors
raised inside the entries keep TF's class and text; that registration is lazy, idempotent and
off under ``NUMBA_DISABLE_JIT=1``; and that the entries' signatures are the ones of their ABI
version.
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path

import numba
import numpy as np
import pytest

import numba_ta
from numba_ta.errors import OpError
from numba_ta.jit import abi as _abi
from tests.helpers.jit_ops import j_concat, j_gather, j_read, j_scatter, j_size, j_split, j_stack, j_write

ROOT = Path(__file__).resolve().parents[1]


@numba.njit
def fill(n):
    ta = numba_ta.TensorArray(np.float32, size=0, dynamic_size=True, element_shape=(4,))
    for i in range(n):
        ta = ta.write(i, np.full(4, i, np.float32))
    return ta.stack()


@pytest.mark.jit_only("inspects the compiled code")
def test_user_function_declares_the_entries_and_holds_no_engine_body():
    np.testing.assert_array_equal(fill(3), np.repeat(np.arange(3, dtype=np.float32), 4).reshape(3, 4))
    ir = fill.inspect_llvm(fill.signatures[0])
    for op in ("new", "write", "stack"):
        name = _abi.symbol(op)
        assert name.startswith(f"numba_ta_{_abi.ABI}_")
        assert f"declare i32 @{name}(" in ir, name
        assert f"define i32 @{name}(" not in ir, name
    # the engine's op bodies (mangled names: 8numba_ta7_engine<len><name>) and its error code are not in it
    for body in ("7_engine5write", "7_engine6gather", "7_engine9_read_many", "7_engine12raise_status", "jit_write"):
        assert body not in ir, body
    assert set(_abi.registered()) >= {"new", "write", "stack"}


@pytest.mark.jit_only("registration of compiled entries")
def test_registration_is_idempotent():
    fill(1)
    before = _abi.registered()
    _abi.register("write")
    _abi.register("write")
    assert _abi.registered() == before


def test_entry_signatures_are_those_of_their_abi_version():
    """Changing an entry's signature needs a new ABI version (and this table with it)."""
    got = {op: (name, [str(a) for a in args], str(ret)) for op, (name, args, ret) in _abi.ENTRIES.items()}
    st = str(numba_ta.core.state.state_type())
    u8, i64 = "array(uint8, 1d, C)", "array(int64, 1d, C)"
    shaped = f"Tuple({u8}, {i64})"
    assert _abi.ABI == "v1"
    assert got == {
        "write": ("jit_write", [st, "int64", u8, i64, "bool"], "int64"),
        "read": ("jit_read", [st, "int64", "int64"], shaped),
        "gather": ("jit_gather", [st, i64, i64, "int64"], shaped),
        "stack": ("jit_stack", [st, "int64"], shaped),
        "scatter": ("jit_scatter", [st, i64, i64, u8, "int64", i64, "bool"], "int64"),
        "concat": ("jit_concat", [st, "int64"], shaped),
        "split": ("jit_split", [st, u8, i64, i64, i64, "bool"], "int64"),
        "closed": ("jit_closed", [st], "none"),
        "new": (
            "jit_new",
            ["int64", "bool", "bool", "bool", i64, u8, "int64", "int64", "int64", "int64", "int64", "unicode_type"],
            st,
        ),
    }


def test_hook_of_another_interface_is_stale_and_numba_reads_it_as_a_miss():
    hook = pickle.loads(pickle.dumps(_abi._HOOKS["write"]))
    assert hook is _abi._HOOKS["write"]
    for args in (("v0", _abi.ABI_KEY, "write"), (_abi.ABI, "0" * 16, "write"), (_abi.ABI, _abi.ABI_KEY, "gone"), ()):
        with pytest.raises(_abi.StaleCodeError) as info:
            _abi._reload(*args)
        assert isinstance(info.value, OSError)  # what numba's cache treats as a vanished entry: a miss


def _run(code, env=None):
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=ROOT,
        env=dict(os.environ, **(env or {})),
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc.stdout


def test_import_registers_nothing_and_disabled_jit_registers_nothing():
    out = _run(
        """
        import numba_ta, numba_ta.jit.extension
        from numba_ta.jit import abi as _abi
        print(len(_abi.registered()))
        """
    )
    assert out.split() == ["0"]
    out = _run(
        """
        from numba_ta.jit import abi as _abi
        _abi.register("write")
        print(len(_abi.registered()))
        """,
        env={"NUMBA_DISABLE_JIT": "1"},
    )
    assert out.split() == ["0"]


USER_MODULE = """
import numba
import numpy as np
import numba_ta


@numba.njit(cache=True)
def made_inside(n):
    ta = numba_ta.TensorArray(np.float32, size=0, dynamic_size=True, element_shape=(3,))
    for i in range(n):
        ta = ta.write(i, np.full(3, i, np.float32))
    return ta.stack()


@numba.njit(cache=True)
def passed_in(ta):
    a = ta.read(0)
    return ta.read(0) + a  # the second read of a cleared element: TF's error, raised in the entry
"""

RUN_USER = """
import json
from numba_ta.jit import abi as _abi
if {stale}:
    _abi.ABI_KEY = "stale-for-test"  # as if the cache had been written by a numba_ta with other entries
import numpy as np
import numba_ta
import user_fns
before = sorted(_abi.registered())
out = user_fns.made_inside(4)
ta = numba_ta.TensorArray(np.float32, size=2, element_shape=[3]).write(0, np.ones(3, np.float32))
try:
    user_fns.passed_in(ta)
    err = None
except Exception as e:
    err = [type(e).__name__, str(e)]
stats = [sum(f.stats.cache_hits.values()) for f in (user_fns.made_inside, user_fns.passed_in)]
misses = [sum(f.stats.cache_misses.values()) for f in (user_fns.made_inside, user_fns.passed_in)]
print(json.dumps(dict(before=before, after=sorted(_abi.registered()), out=out.tolist(), err=err, hits=stats,
                      misses=misses)))
"""


@pytest.mark.jit_only("Numba's disk cache of a user's function")
def test_cached_user_function_loads_in_a_new_process(tmp_path):
    (tmp_path / "user_fns.py").write_text(USER_MODULE)

    path = os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)

    def run(stale=False):
        out = _run(RUN_USER.format(stale=stale), env={"PYTHONPATH": path})  # user_fns from tmp_path
        return json.loads(out.strip().splitlines()[-1])

    expected = np.repeat(np.arange(4, dtype=np.float32), 3).reshape(4, 3).tolist()
    text = "Could not read index 0 twice because it was cleared after a previous read"
    first = run()
    assert first["hits"] == [0, 0] and first["misses"] == [1, 1]
    for res in (first, run()):
        assert res["out"] == expected
        assert res["err"][0] == "InvalidArgumentError" and text in res["err"][1]
    second = run()
    assert second["hits"] == [1, 1] and second["misses"] == [0, 0]  # loaded from the cache...
    assert second["before"] == []  # ...in a process that had registered nothing...
    assert {"new", "write", "stack", "read"} <= set(second["after"])  # ...by the cached functions' hooks
    stale = run(stale=True)  # entries of another interface: compiled again, not loaded against them
    assert stale["hits"] == [0, 0] and stale["misses"] == [1, 1]
    assert stale["out"] == expected and stale["err"] == second["err"]


# --------------------------------------------------------------------------- errors raised inside the entries
def _outcome(fn, *args):
    try:
        fn(*args)
    except (OpError, ValueError) as e:
        return type(e), getattr(e, "message", str(e))
    return None


def _array(**kw):
    kw = {"size": 3, "element_shape": [2], **kw}
    return numba_ta.TensorArray(np.float64, **kw)


def _closed(**kw):
    ta = _array(**kw).write(0, np.ones(2))
    ta.close()
    return ta


CASES = {
    "write_class_shape": (j_write, lambda: (_array(), 0, np.ones(3)), "write"),
    "write_twice": (j_write, lambda: (_array().write(1, np.ones(2)), 1, np.ones(2)), "write"),
    "write_out_of_range": (j_write, lambda: (_array(), 7, np.ones(2)), "write"),
    "read_out_of_range": (j_read, lambda: (_array().write(0, np.ones(2)), 5), "read"),
    "read_cleared": (j_read, lambda: (_read_once(), 0), "read"),
    "gather_matrix": (j_gather, lambda: (_array().unstack(np.ones((3, 2))), np.zeros((1, 2), np.int64)), "gather"),
    "gather_unwritten": (j_gather, lambda: (_array(element_shape=[None]), np.array([0, 1])), "gather"),
    "stack_closed": (j_stack, lambda: (_closed(),), "stack"),
    "size_closed": (j_size, lambda: (_closed(size=0, dynamic_size=True),), "size"),
    "split_total": (j_split, lambda: (_array(), np.ones(5), np.array([2, 2, 2])), "split"),
    "split_matrix": (j_split, lambda: (_array(), np.ones(6), np.array([[2, 2, 2]])), "split"),
    "split_negative": (j_split, lambda: (_array(), np.ones(6), np.array([-2, -2, -2])), "split"),
    "scatter_row": (j_scatter, lambda: (_array(), np.array([0]), np.ones((1, 3))), "scatter"),
    "concat_closed": (j_concat, lambda: (_closed(),), "concat"),
}


def _read_once():
    ta = _array().write(0, np.ones(2))
    ta.read(0)
    return ta


@pytest.mark.parametrize("case", sorted(CASES))
def test_errors_from_the_entries_keep_tf_class_and_text(case):
    fn, make, method = CASES[case]

    def named(outcome, ta):  # two arrays, two unique names
        return outcome and (outcome[0], outcome[1].replace(ta.handle.name, "<name>"))

    args = make()
    expected = named(_outcome(lambda: getattr(args[0], method)(*args[1:])), args[0])
    assert expected is not None, "the case must fail in Python"
    args = make()
    assert named(_outcome(fn, *args), args[0]) == expected


@numba.njit
def j_new_dim(d):
    return numba_ta.TensorArray(np.float32, size=2, element_shape=(3, d))


@numba.njit
def j_new_size(n):
    return numba_ta.TensorArray(np.float32, size=n, element_shape=(None,))


@pytest.mark.parametrize(
    ("fn", "arg", "kwargs"),
    [(j_new_dim, -2, {"size": 2, "element_shape": (3, -2)}), (j_new_size, -1, {"size": -1, "element_shape": (None,)})],
)
def test_creation_errors_from_the_entry_keep_tf_class_and_text(fn, arg, kwargs):
    expected = _outcome(lambda: numba_ta.TensorArray(np.float32, **kwargs))
    assert expected is not None
    assert _outcome(fn, arg) == expected
