"""The memory policy: where elements' items live, and how the buffers grow.

Elements of one shape are stored as dense rows (element ``i`` at ``i * width``
items) while the rows would not waste more than the policy allows
(``hdr[H.SLACK]`` bytes and a growth ``hdr[H.FACTOR]``, set from
:mod:`numba_ta.core.config` when the array is made); otherwise, and for elements
of several shapes, as a ragged buffer of runs (``offsets[i]``).  ``hdr[H.LAYOUT]``
says which (``NO_BUFFER``: no buffer yet, ``DENSE``, ``RAGGED``).  Growth replaces
``data`` or the metadata and bumps ``hdr[H.GEN]``; large allocations are advised to
huge pages as numpy's are (:mod:`numba_ta.core.state`).  Both containers use it:
:mod:`numba_ta.tensor_array.engine` and :mod:`numba_ta.tensor_list.listengine`.
"""

from __future__ import annotations

import math

import numpy as np
from numba import types
from numba.core.extending import register_jitable

from numba_ta.core import config
from numba_ta.core import header as H
from numba_ta.core.numba_compat import python_function
from numba_ta.core.shapes import _new, new_items, nitems, one_dim, oom
from numba_ta.core.state import (
    DATA,
    DENSE,
    DTYPES,
    INT64_MAX,
    NO_BUFFER,
    NO_I64,
    RAGGED,
    dtype_code,
    move_bytes,
)
from numba_ta.errors import OpError
from numba_ta.tf import messages as _messages
from numba_ta.tf.dtypes import tf_name
from numba_ta.tf.messages import shape_str


# --------------------------------------------------------------------------- room
def _zeros_meta(n):
    """Return ``(state, shape_id, offsets, failed)``: zeroed metadata for ``n`` slots, or the dtype that did not fit.

    ``failed`` is that dtype's position in :data:`DTYPES`, or -1.

    Python (called from compiled code): numpy's zeros take zeroed pages from
    the OS lazily, so metadata for a large capacity costs no memory until its slots are used
    (Numba's ``np.zeros`` would write every byte).
    """
    out = []
    for t in (np.uint8, np.int32, np.int64):
        try:
            out.append(np.zeros(n, t))
        except (MemoryError, ValueError):  # ValueError: more items than an intp holds
            return _NO_U8, _NO_I32, NO_I64, dtype_code(t)
    return out[0], out[1], out[2], -1


_NO_U8, _NO_I32 = np.zeros(0, np.uint8), np.zeros(0, np.int32)
#: :func:`_zeros_meta` from compiled code, without objmode (an interrupt while it runs arrives whole)
_lazy_zeros_meta = python_function(
    _zeros_meta, types.Tuple((types.uint8[::1], types.int32[::1], types.int64[::1], types.int64)), 1
)
_U8_CODE, _I32_CODE, _I64_CODE = (DTYPES.index(np.dtype(t)) for t in (np.uint8, np.int32, np.int64))
_META_LAZY = 1 << 16  # slots from which metadata growth takes numpy's lazily zeroed pages (832 KiB)


@register_jitable
def new_meta(s, n):
    """``(status, state, shape_id, offsets)``: zeroed metadata for ``n`` slots (TF's OOM error, recorded in ``s``)."""
    if n < _META_LAZY:  # small: zeroed here (a call into Python costs more than the zeroing)
        shape = one_dim(n)
        status, state = _new(s, n, _NO_U8, True, shape, _U8_CODE)
        shape_id = _NO_I32.copy()  # (a global array is read-only in compiled code)
        offsets = NO_I64.copy()
        if not status:
            status, shape_id = _new(s, n, _NO_I32, True, shape, _I32_CODE)
        if not status:
            status, offsets = _new(s, n, NO_I64, True, shape, _I64_CODE)
        return status, state, shape_id, offsets
    state, shape_id, offsets, failed = _lazy_zeros_meta(n)
    if failed >= 0:
        return oom(s, one_dim(n), failed), state, shape_id, offsets
    return 0, state, shape_id, offsets


@register_jitable
def reserve(s, n):
    """Room for ``n`` slots in the metadata (geometric growth; new slots unwritten); return the status."""
    h = s.hdr
    cap = h[H.CAP]
    if n <= cap:
        return 0
    newcap = max(n, 2 * cap, 8)
    m = min(cap, s.state.size)
    status, state, shape_id, offsets = new_meta(s, newcap)
    if status:
        return status
    state[:m] = s.state[:m]
    shape_id[:m] = s.shape_id[:m]
    offsets[:m] = s.offsets[:m]
    s.state = state
    s.shape_id = shape_id
    s.offsets = offsets
    h[H.CAP] = newcap
    h[H.GEN] += 1
    return 0


@register_jitable
def _dense_rows(s, w, top, n_new):
    """Return the rows of ``w`` items the dense buffer should cover so that slots below ``top`` have rows.

    The memory policy.  0 means: do not lay these out dense (the array turns, or starts,
    ragged).  ``n_new`` elements are about to get rows.  The buffer may cover all ``CAP``
    rows, or double, or cover ``top`` rows, whichever is first within the budget: the larger
    of ``hdr[H.SLACK]`` bytes and ``hdr[H.FACTOR]`` times the bytes of the elements stored once
    they are written.  The rule is monotone in ``top``.  Changes nothing.
    """
    if w == 0:
        return top
    h = s.hdr
    have = nitems(s) // w if h[H.LAYOUT] == DENSE else 0
    if top <= have:
        return have
    stored = n_new
    if have:
        state = s.state  # a field read in the loop would cost a reference count per element
        for i in range(h[H.SIZE]):
            if state[i] & DATA:
                stored += 1
    row_bytes = w * h[H.ITEMSIZE]
    budget = max(h[H.SLACK], h[H.FACTOR] * stored * row_bytes)
    for rows in (max(h[H.CAP], top), max(top, 2 * have), top):
        if rows * row_bytes <= budget:
            return rows
    return 0


@register_jitable
def _grow_data(s, items, keep):
    """Room for ``items`` items in the data buffer (the first ``keep`` kept); return the status."""
    if items <= nitems(s):
        return 0
    isz = s.hdr[H.ITEMSIZE]
    status, data = new_items(s, items, False, one_dim(items))
    if status:
        return status
    move_bytes(data, 0, s.data, 0, keep * isz)
    s.data = data
    s.hdr[H.GEN] += 1
    return 0


@register_jitable
def alloc_element(s, index, items, top, n_new, total):
    """``(status, offset)`` of new room for ``items`` items of element ``index`` (``Storage._alloc``, one slot).

    ``top``, ``n_new`` and ``total`` describe the whole op (highest slot + 1, elements
    that get room, their items): the first allocation chooses the layout for all of them.
    """
    h = s.hdr
    if h[H.LAYOUT] == NO_BUFFER:
        rows = _dense_rows(s, items, top, n_new)
        if rows:
            shape = np.empty(2, np.int64)
            shape[0] = rows
            shape[1] = items
            status, data = new_items(s, rows * items if rows <= INT64_MAX // items else -1, False, shape)
            if status:
                return status, 0
            s.data = data
            h[H.LAYOUT] = DENSE
            h[H.WIDTH] = items
        else:
            status, data = new_items(s, total, False, one_dim(total))
            if status:
                return status, 0
            s.data = data
            h[H.LAYOUT] = RAGGED
            h[H.USED] = 0
        h[H.GEN] += 1
    if h[H.LAYOUT] == DENSE:
        w = h[H.WIDTH]
        if items == w:
            if top * w > nitems(s):
                rows = _dense_rows(s, w, top, n_new)
                if rows:
                    status = _grow_data(s, rows * w, nitems(s))
                    if status:
                        return status, 0
            if top * w <= nitems(s):
                return 0, index * w
        h[H.LAYOUT] = RAGGED
        h[H.USED] = nitems(s)
        h[H.GEN] += 1  # the Python layer's fast paths rely on the dense layout
    need = h[H.USED] + items
    if need > nitems(s):
        status = _grow_data(s, max(need, 2 * nitems(s)), h[H.USED])
        if status:
            return status, 0
    o = h[H.USED]
    h[H.USED] = need
    return 0, o


# --------------------------------------------------------------------------- from Python
# The Python layer's side of the same policy: every array an op allocates in Python goes
# through new_array's check, and a new array's or list's header carries the policy's settings.
_COPY_VIEW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def copy_view(a):
    """Return a view of ``a`` that the copy kernels compile once per item size for."""
    u = _COPY_VIEW.get(a.dtype.itemsize)
    return a if u is None else a.view(u)


def oom_error(shape, dtype):
    """Build TF's allocator error for a tensor (or buffer) of ``shape`` that cannot be allocated."""
    shape = (shape,) if isinstance(shape, int) else shape
    return _messages.error("NT-oom", shape=shape_str(shape), dtype=tf_name(dtype))


def new_array(shape, dtype, zeros=False, make=None):
    """Allocate an array of ``shape`` and ``dtype``, raising :func:`oom_error` (not a raw MemoryError or ValueError).

    Every array an op allocates goes through this check: ``np.empty`` (``np.zeros`` with
    ``zeros``), or ``make()`` when given, a function that makes the array otherwise
    (``np.arange``, a conversion) and raises ``MemoryError`` or ``ValueError`` only when it
    cannot be had.
    """
    try:
        if make is not None:
            return make()
        return (np.zeros if zeros else np.empty)(shape, dtype=dtype)
    except (MemoryError, ValueError):  # ValueError: "array is too big" / more items than an intp holds
        raise oom_error(shape, dtype) from None


def arange(n, dtype):
    """``np.arange(n)`` of ``dtype`` through :func:`new_array`'s check (TF's ``range`` tensor of the class's stack)."""
    return new_array(n, dtype, make=lambda: np.arange(n, dtype=dtype))


def as_int64(a):
    """Return ``a`` (integers) as a C-contiguous int64 array: a copy only when needed, through :func:`new_array`."""
    if a.dtype == np.int64 and a.flags.c_contiguous:
        return a
    return new_array(a.shape, np.int64, make=lambda: np.ascontiguousarray(a, np.int64))


def work_oom_error(e, n):
    """Return the error of a kernel that ran out of memory: TF's OOM error for its work array of ``n`` int64s.

    The engine's kernels allocate their results through the engine's own check (an error
    status, :func:`oom_error`'s text); the work arrays they make besides (one int64 per element)
    raise a raw ``MemoryError``, which becomes this.
    """
    return e if isinstance(e, OpError) else oom_error(n, np.int64)


def shape_table(shapes):
    """``(dims, starts, items)``: the interned shapes ``shapes`` (a list of tuples) as the struct holds them."""
    starts = np.zeros(len(shapes) + 1, np.int64)
    if shapes:
        np.cumsum([len(t) for t in shapes], out=starts[1:])
    dims = np.array([d for t in shapes for d in t], dtype=np.int64)
    items = np.array([math.prod(t) for t in shapes], dtype=np.int64)
    return dims, starts, items


def new_header(dtype):
    """Return a new array's or list's ``hdr`` (:func:`numba_ta.core.header.new`), with the current policies.

    The memory policy and the parallel threshold are read from :mod:`numba_ta.core.config` now.
    """
    return H.new(dtype, config.DENSE_SLACK_BYTES, config.DENSE_FACTOR, config.PARALLEL_MIN_ELEMENTS)
