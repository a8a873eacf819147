"""Prototype A: one TensorArray's state as a ``numba.experimental.structref``.

The state lives in one NRT-allocated, refcounted struct (``TAStateType``).  Python
holds a ``TAState`` proxy (a meminfo handle); njit code gets the same pointer, so
every mutation -- including replacing ``data`` on growth -- is seen by both sides
without boxing anything back.

The state machine (``write_row``/``read_row``/``stack``) is written once as
``@njit`` functions returning status codes; ``TAState.write/read/stack`` wrap them
for Python, and ``@overload_method`` exposes ``ta.write(i, row)`` etc. inside njit.
"""

from __future__ import annotations

import os

import numpy as np
from numba import njit, types
from numba.core import config
from numba.extending import overload_method, typeof_impl
from numba.experimental import structref

CACHE = os.environ.get("PROTO_CACHE", "0") == "1"
JIT = dict(cache=CACHE, nogil=True)

# status codes
OK, OUT_OF_RANGE, ALREADY_WRITTEN, NOT_WRITTEN, BAD_SHAPE = 0, 1, 2, 3, 4
# element state bits
WRITTEN, READ, CLEARED, DATA = 1, 2, 4, 8
# flags
DYNAMIC, LOCKED = 1, 2

FIELDS = ("data", "state", "offsets", "shape_id", "size", "cap", "width", "flags")


@structref.register
class TAStateType(types.StructRef):
    def preprocess_fields(self, fields):
        return tuple((n, types.unliteral(t)) for n, t in fields)


TAStateT = TAStateType(
    [
        ("data", types.float32[::1]),
        ("state", types.uint8[::1]),
        ("offsets", types.int64[::1]),
        ("shape_id", types.int32[::1]),
        ("size", types.int64),
        ("cap", types.int64),
        ("width", types.int64),
        ("flags", types.int64),
    ]
)


class TAState(structref.StructRefProxy):
    """Python handle.  Attribute reads are njit calls (the data lives in the NRT struct)."""

    __slots__ = ()

    def __new__(cls, width, size=0, dynamic=False):
        return _new_state(width, size, DYNAMIC if dynamic else 0)

    # Python-side views of the fields: each is one njit call.
    @property
    def size(self):
        return _get_size(self)

    @property
    def data(self):
        return _get_data(self)

    @property
    def state(self):
        return _get_state(self)

    @property
    def cap(self):
        return _get_cap(self)

    # Python API: status -> exception
    def write(self, index, row):
        s = write_row(self, index, row)
        if s:
            raise_status(s, index)
        return self

    def read(self, index):
        out = np.empty(_get_width(self), np.float32)
        s = read_row(self, index, out)
        if s:
            raise_status(s, index)
        return out

    def stack(self):
        return stack(self)


structref.define_boxing(TAStateType, TAState)
structref.define_constructor(TAState, TAStateType, FIELDS)


# Optional: register typeof for the proxy class directly (skips the default
# typeof_impl's memoryview() probe + _numba_type_ getattr); bench measures both.
def register_fast_typeof():
    @typeof_impl.register(TAState)
    def _typeof_tastate(val, c):
        return val._type


def raise_status(s, index):
    if s == OUT_OF_RANGE:
        raise IndexError(f"index {index} out of range")
    if s == ALREADY_WRITTEN:
        raise ValueError(f"element {index} already written")
    if s == NOT_WRITTEN:
        raise ValueError(f"element {index} was never written")
    if s == BAD_SHAPE:
        raise ValueError("row has the wrong shape")
    raise RuntimeError(f"status {s}")


@njit(**JIT)
def _get_size(st):
    return st.size


@njit(**JIT)
def _get_cap(st):
    return st.cap


@njit(**JIT)
def _get_width(st):
    return st.width


@njit(**JIT)
def _get_data(st):
    return st.data


@njit(**JIT)
def _get_state(st):
    return st.state


@njit(**JIT)
def _new_state(width, size, flags):
    cap = size
    return TAState(
        np.empty(cap * width, np.float32),
        np.zeros(cap, np.uint8),
        np.zeros(cap, np.int64),
        np.zeros(cap, np.int32),
        size,
        cap,
        width,
        flags,
    )


@njit(**JIT)
def _grow(st, need):
    """Geometric growth of every per-slot buffer; replaces the array fields in place."""
    cap = st.cap
    w = st.width
    newcap = max(need, 2 * cap, 16)
    d = np.empty(newcap * w, np.float32)
    d[: cap * w] = st.data[: cap * w]
    s = np.zeros(newcap, np.uint8)
    s[:cap] = st.state[:cap]
    o = np.zeros(newcap, np.int64)
    o[:cap] = st.offsets[:cap]
    sid = np.zeros(newcap, np.int32)
    sid[:cap] = st.shape_id[:cap]
    # commit
    st.data = d
    st.state = s
    st.offsets = o
    st.shape_id = sid
    st.cap = newcap


@njit(**JIT)
def write_row(st, index, row):
    w = st.width
    if row.shape[0] != w:
        return BAD_SHAPE
    if index < 0:
        return OUT_OF_RANGE
    size = st.size
    if index >= size:
        if not (st.flags & DYNAMIC):
            return OUT_OF_RANGE
        if index >= st.cap:
            _grow(st, index + 1)
    state = st.state
    if state[index] & WRITTEN:
        return ALREADY_WRITTEN
    data = st.data
    base = index * w
    for k in range(w):
        data[base + k] = row[k]
    st.offsets[index] = base
    st.shape_id[index] = 0
    state[index] = WRITTEN | DATA
    if index >= size:
        st.size = index + 1
    return OK


@njit(**JIT)
def read_row(st, index, out):
    if index < 0 or index >= st.size:
        return OUT_OF_RANGE
    state = st.state
    if not (state[index] & WRITTEN):
        return NOT_WRITTEN
    w = st.width
    if out.shape[0] != w:
        return BAD_SHAPE
    data = st.data
    base = st.offsets[index]
    for k in range(w):
        out[k] = data[base + k]
    state[index] |= READ
    return OK


@njit(**JIT)
def stack(st):
    n = st.size
    w = st.width
    state = st.state
    for i in range(n):
        if not (state[i] & WRITTEN):
            raise ValueError("stack: an element was never written")
    return st.data[: n * w].copy().reshape(n, w)


# ---- methods inside njit: ta = ta.write(i, row); ta.read(i); ta.stack() ----
@overload_method(TAStateType, "write", jit_options=JIT)
def _ol_write(st, index, row):
    def impl(st, index, row):
        s = write_row(st, index, row)
        if s != OK:
            raise IndexError("TensorArray.write failed")
        return st

    return impl


@overload_method(TAStateType, "read", jit_options=JIT)
def _ol_read(st, index):
    def impl(st, index):
        out = np.empty(st.width, np.float32)
        s = read_row(st, index, out)
        if s != OK:
            raise IndexError("TensorArray.read failed")
        return out

    return impl


@overload_method(TAStateType, "read_into", jit_options=JIT)
def _ol_read_into(st, index, out):
    def impl(st, index, out):
        return read_row(st, index, out)

    return impl


@overload_method(TAStateType, "stack", jit_options=JIT)
def _ol_stack(st):
    def impl(st):
        return stack(st)

    return impl


# ---- refcount-free field access: raw data pointers of the array fields -----------
# Every `st.data` getattr on a structref increfs/decrefs the array's meminfo (atomic
# NRT_incref/NRT_decref calls that LLVM can't prune across the op).  Inside one op
# the struct keeps the arrays alive, so the op can use raw pointers instead.
from numba.extending import intrinsic  # noqa: E402


def _ptr_intrinsic(field):
    @intrinsic
    def _p(typingctx, st):
        arrty = st.field_dict[field]
        sig = types.CPointer(arrty.dtype)(st)

        def codegen(context, builder, sig, args):
            dataval = structref._Utils(context, builder, sig.args[0]).get_data_struct(args[0])
            ary = context.make_array(arrty)(context, builder, value=getattr(dataval, field))
            return ary.data

        return sig, codegen

    return _p


_data_p, _state_p, _offsets_p, _shape_id_p = (_ptr_intrinsic(f) for f in ("data", "state", "offsets", "shape_id"))


@njit(**JIT)
def write_row_fast(st, index, row):
    w = st.width
    if row.shape[0] != w:
        return BAD_SHAPE
    if index < 0:
        return OUT_OF_RANGE
    size = st.size
    if index >= size:
        if not (st.flags & DYNAMIC):
            return OUT_OF_RANGE
        if index >= st.cap:
            _grow(st, index + 1)
    sp = _state_p(st)
    if sp[index] & WRITTEN:
        return ALREADY_WRITTEN
    dp = _data_p(st)
    base = index * w
    for k in range(w):
        dp[base + k] = row[k]
    _offsets_p(st)[index] = base
    _shape_id_p(st)[index] = 0
    sp[index] = WRITTEN | DATA
    if index >= size:
        st.size = index + 1
    return OK


@njit(**JIT)
def read_row_fast(st, index, out):
    if index < 0 or index >= st.size:
        return OUT_OF_RANGE
    sp = _state_p(st)
    s = sp[index]
    if not (s & WRITTEN):
        return NOT_WRITTEN
    w = st.width
    if out.shape[0] != w:
        return BAD_SHAPE
    dp = _data_p(st)
    base = _offsets_p(st)[index]
    for k in range(w):
        out[k] = dp[base + k]
    sp[index] = s | READ
    return OK


@overload_method(TAStateType, "write_fast", jit_options=JIT)
def _ol_write_fast(st, index, row):
    def impl(st, index, row):
        if write_row_fast(st, index, row) != OK:
            raise IndexError("TensorArray.write failed")
        return st

    return impl


@overload_method(TAStateType, "read_fast", jit_options=JIT)
def _ol_read_fast(st, index):
    def impl(st, index):
        out = np.empty(st.width, np.float32)
        if read_row_fast(st, index, out) != OK:
            raise IndexError("TensorArray.read failed")
        return out

    return impl
