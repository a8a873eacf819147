"""Thread control for numba_ta's parallel kernels."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import numba


@contextlib.contextmanager
def num_threads(n: int) -> Iterator[int]:
    """Run the enclosed code with ``n`` threads for numba_ta's parallel kernels.

    Parameters
    ----------
    n : int
        Number of threads, from 1 to ``numba.config.NUMBA_NUM_THREADS`` (the
        size of numba's thread pool, set by the environment variable
        ``NUMBA_NUM_THREADS`` before numba starts).

    Yields
    ------
    int
        The previous number of threads, restored on exit (also on error).

    Raises
    ------
    ValueError
        If ``n`` is outside ``1 .. NUMBA_NUM_THREADS`` (numba's message).

    Notes
    -----
    A thin wrapper over ``numba.set_num_threads``; the setting is per thread
    of the calling program, as numba's is.  numba_ta never chooses a
    threading layer: set ``NUMBA_THREADING_LAYER`` yourself if you need to.

    Examples
    --------
    >>> import numba_ta
    >>> with numba_ta.num_threads(1):
    ...     pass
    """
    old = numba.get_num_threads()
    numba.set_num_threads(n)
    try:
        yield old
    finally:
        numba.set_num_threads(old)
