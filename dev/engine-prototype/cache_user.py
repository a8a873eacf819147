import numpy as np
from numba import njit
import proto_structref as A, proto_ext as B

@njit(cache=True)
def user_A(ta, rows):
    for i in range(rows.shape[0]):
        ta = ta.write(i, rows[i])
    return ta, ta.read(0), ta.stack()

@njit(cache=True)
def user_B(ta, rows):
    for i in range(rows.shape[0]):
        ta = ta.write(i, rows[i])
    return ta, ta.read(0), ta.stack()
