"""Users' functions for option B's cache test: a cfunc as a global, and as a first-class argument."""

import numba
import numpy as np  # noqa: F401

from percall import M, W, _ptr, c_write


@numba.njit(cache=True)
def b_global(data, state, row):
    return c_write(_ptr(data), M, W, _ptr(state), 3, _ptr(row), W)


@numba.njit(cache=True)
def b_arg(fn, data, state, row):
    return fn(_ptr(data), M, W, _ptr(state), 3, _ptr(row), W)
