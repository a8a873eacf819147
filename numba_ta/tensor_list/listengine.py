"""A numeric TensorList's element updates in compiled code: set an element, resize.

A TensorList's elements live in the same struct as an array's
(:mod:`numba_ta.core.state`, stored by :class:`numba_ta.tensor_list.store.NumericStore`):
``SIZE`` is the list's length, an element is set (``WRITTEN | DATA``) or unset (state 0),
and slots at or past ``SIZE`` are always unset.  :func:`tl_set` hands back the bytes
it overwrites when an older version of the list may still need them; the store keeps
them in its undo log.
"""

from __future__ import annotations

from numba.core.extending import register_jitable

from numba_ta.core import header as H
from numba_ta.core import kernels
from numba_ta.core.memory import alloc_element, reserve
from numba_ta.core.shapes import intern_shape
from numba_ta.core.state import (
    DATA,
    DENSE,
    HELD_DATA,
    STORED,
    move_bytes,
)

# --------------------------------------------------------------------------- TensorList storage
# A TensorList's elements live in the same struct (numba_ta.tensor_list.store): ``SIZE`` is the
# list's length, an element is set (``WRITTEN | DATA``) or unset (state 0), and slots at or past
# ``SIZE`` are always unset.  ``HELD_DATA`` marks a slot whose dense row (or run) has held data: a
# later write there overwrites bytes that an older version of the list may still need, so
# :func:`tl_set` hands them back to the caller, which keeps them for that version.


@register_jitable
def tl_set(s, index, flat, shape):
    """Set element ``index`` of a list's struct to ``flat`` (its items' bytes) of ``shape``; may overwrite.

    ``index >= SIZE`` grows the list to ``index + 1`` (the new slots unset).  Returns
    ``(status, saved, at)``: the bytes the write overwrote in place (``saved``, from item
    ``at`` of ``data``; ``at`` -1 when it overwrote nothing that was ever stored).  A failed
    write (allocation) changes nothing.
    """
    h = s.hdr
    none = s.data[:0]
    n = h[H.SIZE]
    if index >= n:
        status = reserve(s, index + 1)
        if status:
            return status, none, -1
    isz = h[H.ITEMSIZE]
    items = flat.size // isz
    bits = s.state[index]
    o = 0
    at = -1
    saved = none
    if items:
        if bits & DATA and s.items[s.shape_id[index]] == items:
            o = s.offsets[index]  # the same room again
        else:
            status, o = alloc_element(s, index, items, index + 1, 1, items)
            if status:
                return status, none, -1
        if bits & (DATA | HELD_DATA) and (h[H.LAYOUT] == DENSE or o == s.offsets[index]):
            at = o
            saved = s.data[o * isz : (o + items) * isz].copy()
        move_bytes(s.data, o * isz, flat, 0, flat.size)
    sid = intern_shape(s, shape)
    s.offsets[index] = o
    s.shape_id[index] = sid
    s.state[index] = STORED | HELD_DATA if items else STORED | (bits & HELD_DATA)
    if index >= n:
        h[H.SIZE] = index + 1
    return 0, saved, at


@register_jitable
def tl_resize(s, size):
    """Make a list's struct ``size`` elements long: slots cut off or added are unset; return the status."""
    h = s.hdr
    n = h[H.SIZE]
    if size > n:
        status = reserve(s, size)
        if status:
            return status
    state = s.state  # (after reserve, which may replace it; no field reads in the loop)
    for i in range(size, n):
        state[i] = state[i] & HELD_DATA
    h[H.SIZE] = size
    return 0




@kernels.kernel()
def py_tl_set_into(s, index, flat, shape, saved, at):
    """:func:`tl_set` for the Python layer: the status; the bytes it overwrote go into the caller's ``saved``.

    ``saved`` (uint8, ``flat.size`` long) and ``at`` (one int64) are in the caller's undo
    entry before the call (``at[0]`` -1: nothing overwritten), so the entry is complete
    the moment the element changes.
    """
    status, got, where = tl_set(s, index, flat, shape)
    if where >= 0:
        saved[: got.size] = got
    at[0] = where
    return status


@kernels.kernel()
def py_tl_resize(s, size):
    """:func:`tl_resize` for the Python layer: the status."""
    return tl_resize(s, size)
