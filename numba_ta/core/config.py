"""Settings of numba_ta: the parallel threshold, read once from the environment.

``PARALLEL_MIN_ELEMENTS``
    Bulk ops (gather, stack, scatter, unstack, concat, split, accumulate) use
    the parallel (``prange``) kernel when they move at least this many array
    items, the serial kernel otherwise.  Environment variable
    ``NUMBA_TA_PARALLEL_MIN_ELEMENTS``; default 2**22 items (measured break-even on 2 cores).  Set it with
    :func:`numba_ta.set_parallel_threshold`.
``DENSE_SLACK_BYTES``, ``DENSE_FACTOR``
    The memory policy (:mod:`numba_ta.core.memory`): a dense buffer may always be
    ``DENSE_SLACK_BYTES`` large (64 MiB: allocated empty, rows never written take
    address space, not memory); beyond it, at most ``DENSE_FACTOR`` times the bytes of
    the elements stored.  Read when an array or a list is made (into its header).
"""

from __future__ import annotations

import os

_DEFAULTS = {"PARALLEL_MIN_ELEMENTS": 1 << 22}


def _read_env() -> int:
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
DENSE_SLACK_BYTES = 64 << 20
DENSE_FACTOR = 2


def _reset() -> None:
    """Restore the settings read from the environment."""
    global PARALLEL_MIN_ELEMENTS
    PARALLEL_MIN_ELEMENTS = _read_env()


def get_parallel_threshold() -> int:
    """Return the number of array items from which bulk ops use the parallel kernels.

    Returns
    -------
    int
        ``PARALLEL_MIN_ELEMENTS``: gathers, stacks, scatters, unstacks,
        concats, splits and gradient accumulations that move at least this
        many items run their ``prange`` kernel, smaller ones the serial kernel.

    See Also
    --------
    set_parallel_threshold

    Examples
    --------
    >>> import numba_ta
    >>> numba_ta.get_parallel_threshold() >= 0
    True
    """
    return PARALLEL_MIN_ELEMENTS


def set_parallel_threshold(n_items: int) -> int:
    """Set the number of array items from which bulk ops use the parallel kernels.

    Parameters
    ----------
    n_items : int
        Threshold in array items (not bytes), ``>= 0``; 0 makes every bulk op
        parallel.  The default comes from the environment variable
        ``NUMBA_TA_PARALLEL_MIN_ELEMENTS``, else 2**22.

    Returns
    -------
    int
        The previous threshold, so that it can be restored.

    Raises
    ------
    TypeError
        If ``n_items`` is not an integer.
    ValueError
        If ``n_items`` is negative.

    Notes
    -----
    numba_ta's own setting; it does not mirror a TensorFlow option.  On a
    2-core machine a parallel region costs tens of microseconds, which only
    pays for copies of about a megabyte or more.

    Examples
    --------
    >>> import numba_ta
    >>> old = numba_ta.set_parallel_threshold(0)
    >>> _ = numba_ta.set_parallel_threshold(old)
    """
    global PARALLEL_MIN_ELEMENTS
    if isinstance(n_items, bool) or not isinstance(n_items, int):
        raise TypeError(f"n_items must be an int, got {n_items!r}")
    if n_items < 0:
        raise ValueError(f"n_items must be >= 0, got {n_items}")
    old, PARALLEL_MIN_ELEMENTS = PARALLEL_MIN_ELEMENTS, n_items
    return old
