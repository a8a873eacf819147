"""Gradient sums in compiled code: ``dst += src`` over items of any of the dtypes, float16 included.

A gradient array sums the values written to one element more than once (TF's
``TensorArrayGradV3`` semantics).  The struct's ``data`` holds bytes, so a sum
dispatches on ``hdr[H.DTYPE]`` (:func:`add_items`); Numba has no float16, so its items
are converted to float32, summed and rounded back to nearest, ties to even, as
numpy's float16 additions do.
"""

from __future__ import annotations

import math

import numpy as np
from numba.core import config
from numba.core.extending import register_jitable


# --------------------------------------------------------------------------- sums
@register_jitable
def _half_value(h):
    """Return the value of the float16 bits ``h`` (exact, as a float32)."""
    h = int(h)
    e = (h >> 10) & 0x1F
    m = h & 0x3FF
    if e == 0x1F:
        v = np.inf if m == 0 else np.nan
    elif e == 0:
        v = m * 2.0**-24
    else:
        v = (1024 + m) * 2.0 ** (e - 25)
    return np.float32(-v if h & 0x8000 else v)


@register_jitable
def _half_bits(x):
    """Return the float16 bits of the float32 ``x``, rounded to nearest, ties to even (as numpy converts)."""
    v = np.float64(x)
    sign = 0x8000 if math.copysign(1.0, v) < 0 else 0
    if math.isnan(v):
        return np.uint16(sign | 0x7E00)
    a = abs(v)
    if a >= 65520.0:  # rounds to infinity
        return np.uint16(sign | 0x7C00)
    if a < 2.0**-14:  # subnormal (or zero): multiples of 2**-24
        return np.uint16(sign | int(_round_even(a * 2.0**24)))
    e = int(math.floor(np.log2(a)))  # np.log2: Numba 0.59 compiles no math.log2
    if a < 2.0**e:  # log2 rounding at the edges
        e -= 1
    elif a >= 2.0 ** (e + 1):
        e += 1
    m = int(_round_even(a * 2.0 ** (10 - e)))  # in [1024, 2048]
    if m == 2048:
        m = 1024
        e += 1
    if e > 15:
        return np.uint16(sign | 0x7C00)
    return np.uint16(sign | ((e + 15) << 10) | (m - 1024))


@register_jitable
def _round_even(x):
    """Round the non-negative ``x`` to the nearest integer, ties to even (exact for the values here)."""
    f = math.floor(x)
    d = x - f
    if d > 0.5 or (d == 0.5 and f % 2 == 1):
        return f + 1
    return f


@register_jitable
def _add_half(dst, src):
    """``dst += src`` for float16 bits (uint16): each sum is numpy's, in float32 rounded to float16."""
    for k in range(dst.size):
        dst[k] = _half_bits(_half_value(dst[k]) + _half_value(src[k]))


@register_jitable
def _add_as(dst, src, t):
    """``dst += src`` for the bytes ``dst`` and ``src`` holding items of type ``t``."""
    d = dst.view(t)
    a = src.view(t)
    for j in range(d.size):  # a loop: Numba's in-place ufunc ``d += a`` costs ~100 ns of checks per call
        d[j] += a[j]


@register_jitable
def add_items(dst, src, code):
    """``dst += src``: bytes holding items of ``DTYPES[code]`` (a numeric dtype; IEEE sums, wrapping integers)."""
    if code == 1:
        _add_as(dst, src, np.int8)
    elif code == 2:
        _add_as(dst, src, np.uint8)
    elif code == 3:
        _add_as(dst, src, np.int16)
    elif code == 4:
        _add_as(dst, src, np.uint16)
    elif code == 5:
        _add_as(dst, src, np.int32)
    elif code == 6:
        _add_as(dst, src, np.uint32)
    elif code == 7:
        _add_as(dst, src, np.int64)
    elif code == 8:
        _add_as(dst, src, np.uint64)
    elif code == 9:
        _add_half(dst.view(np.uint16), src.view(np.uint16))
    elif code == 10:
        _add_as(dst, src, np.float32)
    elif code == 11:
        _add_as(dst, src, np.float64)
    elif code == 12:
        _add_as(dst, src, np.complex64)
    elif code == 13:
        _add_as(dst, src, np.complex128)


if getattr(config, "DISABLE_JIT", False):
    _add_items = add_items

    def add_items(dst, src, code):  # numpy's warnings off, as in compiled code
        """:func:`add_items` as Python: IEEE sums quietly (``inf - inf`` is NaN without a warning), as compiled."""
        with np.errstate(all="ignore"):
            _add_items(dst, src, code)
