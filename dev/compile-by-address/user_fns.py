"""Users' functions for the cache test (cache=True needs a file): one per option.

Importing this module does NOT register the engine's symbols: a cached function must find them
through Numba's ``_reload_init`` (option A2, A1) before its object code is loaded.
"""

import numba
import numpy as np

import engine_abi as A


@numba.njit(cache=True)
def fill_stack_a2(n):
    ta = A.new_x(np.float32, 0, True, (64,))
    row = np.ones(64, np.float32)
    for t in range(n):
        ta = ta.write_x(t, row * np.float32(t))
    return ta.stack_x()


@numba.njit(cache=True)
def fill_stack_a2_arg(ta, n):
    row = np.ones(64, np.float32)
    for t in range(n):
        ta = ta.write_x(t, row * np.float32(t))
    return ta.stack_x()


@numba.njit(cache=True)
def fill_stack_a1_arg(ta, n):
    row = np.ones(64, np.float32)
    for t in range(n):
        ta = ta.write_c(t, row * np.float32(t))
    return ta.stack_c()


@numba.njit(cache=True)
def read_twice_a2(ta):
    a = ta.read_x(0)
    return a, ta.read_x(0)  # clear_after_read: the second read raises TF's error through the address
