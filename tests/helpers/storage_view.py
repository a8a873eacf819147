"""Read-only views of numba_ta's storage for the reliability tests.

:func:`nt_state` reads one array's full state from ``handle._storage`` without changing it:
size, per-element state bits and the letters they stand for, element shapes, stored values,
element shape, flags.  :func:`same_snapshot` compares two such snapshots exactly, so a test
can check that an op that raised left its array as it was.

Element states: numba_ta keeps four bits per element (``WRITTEN=1, READ=2, CLEARED=4,
DATA=8``); :func:`letter` maps them to the reference model's letters (semantics reference, ``sem-states``)::

    no WRITTEN                   U  unwritten
    WRITTEN|READ|CLEARED         C  read and cleared
    WRITTEN|READ (DATA or not)   R  read and kept
    WRITTEN without DATA         Z  soft zero (written, no stored value)
    WRITTEN|DATA                 W  written (also the reference's A: numba_ta sums in place)
"""

from __future__ import annotations

import numpy as np

from numba_ta.core.state import CLEARED, DATA, READ, WRITTEN

W, R, C, D = int(WRITTEN), int(READ), int(CLEARED), int(DATA)


def letter(bits):
    """numba_ta's state bits -> the reference's element letter (module docstring)."""
    if not bits & W:
        return "U"
    if bits & C:
        return "C"
    if bits & R:
        return "R"
    if not bits & D:
        return "Z"
    return "W"


def valid_bits(bits):
    if bits & ~(W | R | C | D):
        return False
    if bits and not bits & W:
        return False  # READ/CLEARED/DATA only on written elements
    if bits & C and (not bits & R or bits & D):
        return False  # cleared means read, and its data is gone
    return True


def nt_state(handle):
    """Full state of a numba_ta array, read from its storage without changing it."""
    s = handle._storage
    n = s.size
    bits = [int(b) for b in s.state[:n]]
    letters = "".join(letter(b) for b in bits)
    shapes = [s.shapes[s.shape_id[i]] if letters[i] != "U" else None for i in range(n)]
    values = []
    for i in range(n):
        if letters[i] not in "WR":
            values.append(None)
            continue
        shape = shapes[i]
        items = int(np.prod(shape, dtype=np.int64))
        if bits[i] & D and items:
            off = int(s.offsets[i])
            values.append(s.data[off : off + items].reshape(shape).copy())
        else:
            values.append(np.zeros(shape, dtype=s.dtype))
    tail = s.state[n : s.cap] if s.cap > n else np.zeros(0, np.uint8)
    return {
        "name": s.name,
        "dtype": s.dtype,
        "size": n,
        "bits": bits,
        "states": letters,
        "shapes": shapes,
        "values": values,
        "element_shape": s.element_shape,
        "closed": s.closed,
        "dynamic_size": s.dynamic_size,
        "marked_size": s.marked_size,
        "is_grad": s.is_grad,
        "identical_element_shapes": s.identical,
        "clear_after_read": s.clear_after_read,
        "gradients_disallowed": s.gradients_disallowed,
        "tail_clean": not np.any(tail),
        "data_none": s.data is None,
    }


def same_value(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")


def same_snapshot(x, y):
    """Two nt_state snapshots are identical (values compared exactly, NaN == NaN)."""
    if x.keys() != y.keys():
        return False
    for k in x:
        if k == "values":
            if len(x[k]) != len(y[k]):
                return False
            for a, b in zip(x[k], y[k], strict=True):
                if (a is None) != (b is None) or (a is not None and not same_value(a, b)):
                    return False
        elif x[k] != y[k]:
            return False
    return True
