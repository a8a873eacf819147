"""Prototype B: one TensorArray's state as a hand-registered numba extension type.

Python side: ``TAExt``, a plain class with ``__slots__`` holding numpy arrays.  Every
scalar (size, width, flags) lives in ``hdr``, a small int64 array, so Python and njit
mutate the *same memory* and no scalar ever needs to be boxed back.  The capacity is
``len(state)`` (never stored separately, so it can't disagree with the arrays).

njit side: ``TAExtType`` with a by-value ``StructModel`` {data, state, offsets,
shape_id, hdr, parent}.  ``unbox`` reads the five attributes and unboxes each array
(each gets its own NRT meminfo holding a reference to the ndarray); ``parent`` is the
*borrowed* PyObject* of the argument.  ``box`` boxes the arrays and, when the value
came from a Python object (parent != NULL), stores them back on that object and
returns it (identity kept); otherwise it builds a new ``TAExt``.

Growth inside njit cannot mutate a by-value struct seen by other copies, so growth
returns a *new* struct value (same hdr, same parent, new arrays): the functional
``ta = ta.write(i, row)`` API.  Python sees the new arrays only when that value is
boxed (returned).  A copy that missed a growth is detected (``hdr[SIZE] >
len(state)``) and reported as ``STALE`` instead of reading out of bounds.
"""

from __future__ import annotations

import os

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import (
    NativeValue,
    box,
    intrinsic,
    make_attribute_wrapper,
    models,
    overload,
    overload_method,
    register_model,
    typeof_impl,
    unbox,
)

CACHE = os.environ.get("PROTO_CACHE", "0") == "1"
JIT = dict(cache=CACHE, nogil=True)

OK, OUT_OF_RANGE, ALREADY_WRITTEN, NOT_WRITTEN, BAD_SHAPE, STALE = 0, 1, 2, 3, 4, 5
WRITTEN, READ, CLEARED, DATA = 1, 2, 4, 8
DYNAMIC, LOCKED = 1, 2
# hdr slots
SIZE, WIDTH, FLAGS = 0, 1, 2
HDR_LEN = 4

ARRAYS = (
    ("data", types.float32[::1]),
    ("state", types.uint8[::1]),
    ("offsets", types.int64[::1]),
    ("shape_id", types.int32[::1]),
    ("hdr", types.int64[::1]),
)


class TAExt:
    __slots__ = ("data", "state", "offsets", "shape_id", "hdr")

    def __init__(self, width, size=0, dynamic=False):
        cap = size
        self.data = np.empty(cap * width, np.float32)
        self.state = np.zeros(cap, np.uint8)
        self.offsets = np.zeros(cap, np.int64)
        self.shape_id = np.zeros(cap, np.int32)
        self.hdr = np.array([size, width, DYNAMIC if dynamic else 0, 0], np.int64)

    @classmethod
    def _from_arrays(cls, data, state, offsets, shape_id, hdr):
        self = object.__new__(cls)
        self.data, self.state, self.offsets, self.shape_id, self.hdr = data, state, offsets, shape_id, hdr
        return self

    # plain attribute reads: no njit call
    @property
    def size(self):
        return int(self.hdr[SIZE])

    @property
    def cap(self):
        return len(self.state)

    def _grow(self, need):
        d, s, o, sid = grow_arrays(self, need)
        self.data, self.state, self.offsets, self.shape_id = d, s, o, sid  # one commit statement

    def write(self, index, row):
        s = write_row(self, index, row)
        if s == OUT_OF_RANGE and index >= 0 and self.hdr[FLAGS] & DYNAMIC:
            self._grow(index + 1)
            s = write_row(self, index, row)
        if s:
            raise_status(s, index)
        return self

    def read(self, index):
        out = np.empty(self.hdr[WIDTH], np.float32)
        s = read_row(self, index, out)
        if s:
            raise_status(s, index)
        return out

    def stack(self):
        return stack(self)


def raise_status(s, index):
    msg = {
        OUT_OF_RANGE: IndexError(f"index {index} out of range"),
        ALREADY_WRITTEN: ValueError(f"element {index} already written"),
        NOT_WRITTEN: ValueError(f"element {index} was never written"),
        BAD_SHAPE: ValueError("row has the wrong shape"),
        STALE: RuntimeError("stale TensorArray handle (grown elsewhere)"),
    }
    raise msg.get(s, RuntimeError(f"status {s}"))


# ------------------------------------------------------------------ numba glue
class TAExtType(types.Type):
    def __init__(self):
        super().__init__(name="TAExt")


ta_ext_type = TAExtType()
# The C dispatcher reads `_numba_type_` directly (no Python-level typeof call):
# this is what makes the argument cheap to type (2.1 us -> ~0.5 us per call).
TAExt._numba_type_ = ta_ext_type


@typeof_impl.register(TAExt)
def _typeof_taext(val, c):
    return ta_ext_type


@register_model(TAExtType)
class TAExtModel(models.StructModel):
    def __init__(self, dmm, fe_type):
        members = list(ARRAYS) + [("parent", types.voidptr)]
        super().__init__(dmm, fe_type, members)


for _name, _ in ARRAYS:
    make_attribute_wrapper(TAExtType, _name, _name)


@unbox(TAExtType)
def _unbox_taext(typ, obj, c):
    st = cgutils.create_struct_proxy(typ)(c.context, c.builder)
    is_error = cgutils.alloca_once_value(c.builder, cgutils.false_bit)
    for name, aty in ARRAYS:
        attr = c.pyapi.object_getattr_string(obj, name)
        with cgutils.if_unlikely(c.builder, cgutils.is_null(c.builder, attr)):
            c.builder.store(cgutils.true_bit, is_error)
        with c.builder.if_then(cgutils.is_not_null(c.builder, attr)):
            native = c.unbox(aty, attr)  # NRT meminfo that owns a ref to the ndarray
            c.pyapi.decref(attr)
            setattr(st, name, native.value)
            with c.builder.if_then(native.is_error):
                c.builder.store(cgutils.true_bit, is_error)
    st.parent = c.builder.bitcast(obj, ir.IntType(8).as_pointer())  # borrowed
    return NativeValue(st._getvalue(), is_error=c.builder.load(is_error))


@box(TAExtType)
def _box_taext(typ, val, c):
    st = cgutils.create_struct_proxy(typ)(c.context, c.builder, value=val)
    objs = [c.box(aty, getattr(st, name)) for name, aty in ARRAYS]  # steals member refs
    res = cgutils.alloca_once(c.builder, c.pyapi.pyobj)
    parent = st.parent
    with c.builder.if_else(cgutils.is_null(c.builder, parent)) as (no_parent, has_parent):
        with no_parent:
            ctor = c.pyapi.unserialize(c.pyapi.serialize_object(TAExt._from_arrays))
            c.builder.store(c.pyapi.call_function_objargs(ctor, objs), res)
            c.pyapi.decref(ctor)
        with has_parent:
            pobj = c.builder.bitcast(parent, c.pyapi.pyobj)
            for (name, _), o in zip(ARRAYS[:4], objs[:4]):  # hdr is never replaced
                c.pyapi.object_setattr_string(pobj, name, o)
            c.pyapi.incref(pobj)
            c.builder.store(pobj, res)
    for o in objs:
        c.pyapi.decref(o)
    return c.builder.load(res)


@intrinsic
def _with_arrays_intr(typingctx, st, d, s, o, sid):
    sig = st(st, d, s, o, sid)

    def codegen(context, builder, sig, args):
        old = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
        new = cgutils.create_struct_proxy(sig.return_type)(context, builder)
        new.data, new.state, new.offsets, new.shape_id = args[1:]
        new.hdr = old.hdr
        new.parent = old.parent
        val = new._getvalue()
        context.nrt.incref(builder, sig.return_type, val)  # the result owns its members
        return val

    return sig, codegen


def with_arrays(st, d, s, o, sid):
    """Same hdr (shared), new arrays.  Pure Python version (NUMBA_DISABLE_JIT)."""
    return TAExt._from_arrays(d, s, o, sid, st.hdr)


@overload(with_arrays, jit_options=JIT)
def _ol_with_arrays(st, d, s, o, sid):
    return lambda st, d, s, o, sid: _with_arrays_intr(st, d, s, o, sid)


# ------------------------------------------------------------- state machine
@njit(**JIT)
def grow_arrays(st, need):
    cap = len(st.state)
    w = st.hdr[WIDTH]
    newcap = max(need, 2 * cap, 16)
    d = np.empty(newcap * w, np.float32)
    d[: cap * w] = st.data[: cap * w]
    s = np.zeros(newcap, np.uint8)
    s[:cap] = st.state
    o = np.zeros(newcap, np.int64)
    o[:cap] = st.offsets
    sid = np.zeros(newcap, np.int32)
    sid[:cap] = st.shape_id
    return d, s, o, sid


@njit(**JIT)
def write_row(st, index, row):
    """No growth: OUT_OF_RANGE when index >= capacity (the caller grows and retries)."""
    hdr = st.hdr
    w = hdr[WIDTH]
    if row.shape[0] != w:
        return BAD_SHAPE
    size = hdr[SIZE]
    state = st.state
    if size > len(state):
        return STALE
    if index < 0 or index >= len(state):
        return OUT_OF_RANGE
    if index >= size and not (hdr[FLAGS] & DYNAMIC):
        return OUT_OF_RANGE
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
        hdr[SIZE] = index + 1
    return OK


@njit(**JIT)
def write_row_grow(st, index, row):
    """(status, st'): grows geometrically when dynamic; st' must replace st."""
    if index >= len(st.state) and index >= 0 and (st.hdr[FLAGS] & DYNAMIC) and st.hdr[SIZE] <= len(st.state):
        d, s, o, sid = grow_arrays(st, index + 1)
        st = with_arrays(st, d, s, o, sid)
    return write_row(st, index, row), st


@njit(**JIT)
def read_row(st, index, out):
    hdr = st.hdr
    state = st.state
    size = hdr[SIZE]
    if size > len(state):
        return STALE
    if index < 0 or index >= size:
        return OUT_OF_RANGE
    if not (state[index] & WRITTEN):
        return NOT_WRITTEN
    w = hdr[WIDTH]
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
    n = st.hdr[SIZE]
    w = st.hdr[WIDTH]
    state = st.state
    if n > len(state):
        raise RuntimeError("stale TensorArray handle")
    for i in range(n):
        if not (state[i] & WRITTEN):
            raise ValueError("stack: an element was never written")
    return st.data[: n * w].copy().reshape(n, w)


# ---- methods inside njit
@overload_method(TAExtType, "write", jit_options=JIT)
def _ol_write(st, index, row):
    def impl(st, index, row):
        s, st2 = write_row_grow(st, index, row)
        if s != OK:
            raise IndexError("TensorArray.write failed")
        return st2

    return impl


@overload_method(TAExtType, "read", jit_options=JIT)
def _ol_read(st, index):
    def impl(st, index):
        out = np.empty(st.hdr[WIDTH], np.float32)
        s = read_row(st, index, out)
        if s != OK:
            raise IndexError("TensorArray.read failed")
        return out

    return impl


@overload_method(TAExtType, "read_into", jit_options=JIT)
def _ol_read_into(st, index, out):
    def impl(st, index, out):
        return read_row(st, index, out)

    return impl


@overload_method(TAExtType, "stack", jit_options=JIT)
def _ol_stack(st):
    def impl(st):
        return stack(st)

    return impl


@intrinsic
def _make_intr(typingctx, d, s, o, sid, hdr):
    sig = ta_ext_type(d, s, o, sid, hdr)

    def codegen(context, builder, sig, args):
        new = cgutils.create_struct_proxy(ta_ext_type)(context, builder)
        new.data, new.state, new.offsets, new.shape_id, new.hdr = args
        new.parent = cgutils.get_null_value(new.parent.type)
        val = new._getvalue()
        context.nrt.incref(builder, ta_ext_type, val)
        return val

    return sig, codegen


def make(d, s, o, sid, hdr):
    return TAExt._from_arrays(d, s, o, sid, hdr)


@overload(make, jit_options=JIT)
def _ol_make(d, s, o, sid, hdr):
    return lambda d, s, o, sid, hdr: _make_intr(d, s, o, sid, hdr)


@njit(**JIT)
def new_state(width, size, dynamic):
    cap = size
    hdr = np.zeros(HDR_LEN, np.int64)
    hdr[SIZE] = size
    hdr[WIDTH] = width
    hdr[FLAGS] = DYNAMIC if dynamic else 0
    return make(np.empty(cap * width, np.float32), np.zeros(cap, np.uint8), np.zeros(cap, np.int64),
                np.zeros(cap, np.int32), hdr)


# ---- refcount-free field access (see proto_structref): raw data pointers --------
def _ptr_intrinsic(field, dtype):
    @intrinsic
    def _p(typingctx, st):
        arrty = dict(ARRAYS)[field]
        sig = types.CPointer(dtype)(st)

        def codegen(context, builder, sig, args):
            s = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
            return context.make_array(arrty)(context, builder, value=getattr(s, field)).data

        return sig, codegen

    return _p


_data_p = _ptr_intrinsic("data", types.float32)
_state_p = _ptr_intrinsic("state", types.uint8)
_offsets_p = _ptr_intrinsic("offsets", types.int64)
_shape_id_p = _ptr_intrinsic("shape_id", types.int32)
_hdr_p = _ptr_intrinsic("hdr", types.int64)


@intrinsic
def _cap(typingctx, st):
    sig = types.intp(st)

    def codegen(context, builder, sig, args):
        s = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
        ary = context.make_array(dict(ARRAYS)["state"])(context, builder, value=s.state)
        return builder.extract_value(ary.shape, 0)

    return sig, codegen


@njit(**JIT)
def write_row_fast(st, index, row):
    hp = _hdr_p(st)
    w = hp[WIDTH]
    if row.shape[0] != w:
        return BAD_SHAPE
    size = hp[SIZE]
    cap = _cap(st)
    if size > cap:
        return STALE
    if index < 0 or index >= cap:
        return OUT_OF_RANGE
    if index >= size and not (hp[FLAGS] & DYNAMIC):
        return OUT_OF_RANGE
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
        hp[SIZE] = index + 1
    return OK


@njit(**JIT)
def read_row_fast(st, index, out):
    hp = _hdr_p(st)
    size = hp[SIZE]
    if size > _cap(st):
        return STALE
    if index < 0 or index >= size:
        return OUT_OF_RANGE
    sp = _state_p(st)
    s = sp[index]
    if not (s & WRITTEN):
        return NOT_WRITTEN
    w = hp[WIDTH]
    if out.shape[0] != w:
        return BAD_SHAPE
    dp = _data_p(st)
    base = _offsets_p(st)[index]
    for k in range(w):
        out[k] = dp[base + k]
    sp[index] = s | READ
    return OK


@overload_method(TAExtType, "write_fast", jit_options=JIT)
def _ol_write_fast(st, index, row):
    def impl(st, index, row):
        if index >= _cap(st) and index >= 0 and (_hdr_p(st)[FLAGS] & DYNAMIC):
            d, s, o, sid = grow_arrays(st, index + 1)
            st = with_arrays(st, d, s, o, sid)
        if write_row_fast(st, index, row) != OK:
            raise IndexError("TensorArray.write failed")
        return st

    return impl
