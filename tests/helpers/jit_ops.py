"""A TensorArray's methods inside ``@numba.njit`` functions, for the tests that mix them with Python-level ops.

One small compiled function per method (``j_write(ta, i, v)`` is ``ta.write(i, v)`` compiled),
shared by ``test_jit.py``, ``test_jit_abi.py`` and ``test_state_machine.py``, so each signature
compiles once per test process.  :data:`JIT` maps the class's method names to them.  Under
``NUMBA_DISABLE_JIT=1`` they are plain Python over the class.
"""

from __future__ import annotations

import numba


@numba.njit
def j_write(ta, i, v):
    return ta.write(i, v)


@numba.njit
def j_read(ta, i):
    return ta.read(i)


@numba.njit
def j_gather(ta, idx):
    return ta.gather(idx)


@numba.njit
def j_stack(ta):
    return ta.stack()


@numba.njit
def j_scatter(ta, idx, v):
    return ta.scatter(idx, v)


@numba.njit
def j_unstack(ta, v):
    return ta.unstack(v)


@numba.njit
def j_size(ta):
    return ta.size()


@numba.njit
def j_concat(ta):
    return ta.concat()


@numba.njit
def j_split(ta, v, lengths):
    return ta.split(v, lengths)


JIT = {
    "write": j_write,
    "read": j_read,
    "gather": j_gather,
    "stack": j_stack,
    "scatter": j_scatter,
    "unstack": j_unstack,
    "size": j_size,
    "concat": j_concat,
    "split": j_split,
}
