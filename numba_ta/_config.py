"""Settings of numba_ta: the parallel threshold, read once from the environment.

``PARALLEL_MIN_ELEMENTS``
    Bulk ops (gather, stack, scatter, unstack, concat, split, accumulate) use
    the parallel (``prange``) kernel when they move at least this many array
    items, the serial kernel otherwise.  Environment variable
    ``NUMBA_TA_PARALLEL_MIN_ELEMENTS``; default 2**20 items.  Set it with
    :func:`numba_ta.set_parallel_threshold`.
"""

from __future__ import annotations

import os

_DEFAULTS = {"PARALLEL_MIN_ELEMENTS": 1 << 20}


def _read_env():
    value = os.environ.get("NUMBA_TA_PARALLEL_MIN_ELEMENTS")
    if value is None:
        return _DEFAULTS["PARALLEL_MIN_ELEMENTS"]
    try:
        out = int(value)
    except ValueError:
        raise ValueError(f"NUMBA_TA_PARALLEL_MIN_ELEMENTS must be an integer, got {value!r}") from None
    if out < 0:
        raise ValueError(f"NUMBA_TA_PARALLEL_MIN_ELEMENTS must be >= 0, got {out}")
    return out


PARALLEL_MIN_ELEMENTS = _read_env()


def _reset():
    """Restore the settings read from the environment."""
    global PARALLEL_MIN_ELEMENTS
    PARALLEL_MIN_ELEMENTS = _read_env()
