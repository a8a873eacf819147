"""TensorArray inside ``@numba.njit`` code: the compiled view of an array's state.

A :class:`numba_ta.TensorArray` passed to a compiled function enters it as a
``TensorArrayType`` value: a ``numba.experimental.structref`` whose fields are
the array's own buffers (``data``, ``state``, ``shape_id``, ``offsets``: the
same numpy arrays the Python layer uses, shared, not copied), its scalars
(``hdr``), its interned element shapes (``shapes``/``items``), its element
shape and the class's element shape.  The methods below run the element
state machine on it in compiled code, with TensorFlow's checks in TF's order
and TF's error classes and texts (the templates of :mod:`numba_ta._messages`).

Entering and leaving
--------------------
Unboxing (the call) takes the array's lock, builds the view (the struct is
cached on the array and only its scalars are refreshed when nothing was
reallocated since) and registers it; the argument's cleanup (after the call,
whether it returned or raised) copies the scalars back, takes over any buffer
the compiled code replaced (growth) or any shape it interned, and releases
the lock.  So a Python-level op and a compiled op on the same array see one
state, and a compiled call holds the array for its whole duration: another
thread's op on that array waits for it (the thread-safety rule).

Element rank
------------
Numba types values statically, so ``read`` must know the rank of the
elements: an array can enter compiled code once its element rank is known
(an ``element_shape`` with a known rank, or a write).  Until then passing it
raises ``TypeError``.
"""

from __future__ import annotations

import struct
import threading
import weakref

import numpy as np
from numba import literal_unroll, njit, objmode, types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.core.extending import (
    NativeValue,
    box,
    intrinsic,
    overload,
    overload_attribute,
    overload_method,
    register_jitable,
    unbox,
)
from numba.cpython.unsafe.tuple import tuple_setitem
from numba.experimental import structref
from numba.np.numpy_support import as_dtype, from_dtype
from numba.np.unsafe.ndarray import to_fixed_tuple

from . import _kernels, _registry, _storage
from ._messages import MESSAGES
from ._shapes import TensorShape
from .errors import InternalError, InvalidArgumentError, UnimplementedError

# hdr: the array's scalars, one int64 array shared by Python and compiled code
SIZE, CAP, USED, WIDTH, LAYOUT, DYN, CAR, IDENT, ISGRAD, CLOSED, DISALLOWED = range(11)
NSHAPES, GEN, CLASS_KNOWN, INFER = range(11, 15)
FASTSID = 15  # the write fast path: shape id of the last dense write (-1: none since entering)
ES_KNOWN, ES_CHANGED = 16, 17  # the array's element shape has a known rank; compiled code changed it
MARKED = 18  # the marked size (a split's element count; a gradient array's concat uses its forward's)
CES_CHANGED = 19  # compiled code changed the class's element shape
NHDR = 20
_HDR = struct.Struct(f"={NHDR}q")  # hdr's layout, to fill it from Python in one call (in index order)

_W, _R, _C, _D = 1, 2, 4, 8
_NONE, _DENSE, _RAGGED = _storage._NONE, _storage._DENSE, _storage._RAGGED

# message templates (str.format fields filled in with str.replace in compiled code)
_T1, _T2, _T4, _T5, _T6, _T7, _T8, _T9, _T10, _T11 = (
    MESSAGES[c][1] for c in ("T1", "T2", "T4", "T5", "T6", "T7", "T8", "T9", "T10", "T11")
)
_G2, _G3, _G4, _G5, _S2, _S3, _S4 = (MESSAGES[c][1] for c in ("G2", "G3", "G4", "G5", "S2", "S3", "S4"))
_C1, _C2, _C3, _C4, _P1, _P2, _P3, _P4, _P5 = (
    MESSAGES[c][1] for c in ("C1", "C2", "C3", "C4", "P1", "P2", "P3", "P4", "P5")
)
_SPLIT_NEGATIVE, _CONCAT_UNSPLIT = MESSAGES["NT-split-negative"][1], MESSAGES["NT-concat-unsplit"][1]
_DIM_NEGATIVE = MESSAGES["NT-convert-dim-negative"][1].replace("{argname}", "other")
_CLASS_SHAPES = MESSAGES["NT-class-shapes"][1]
_NO_SIZE = MESSAGES["NT-class-no-size"][1]
_SIZE_NEGATIVE = MESSAGES["NT-size-negative"][1]
_DIMS_NEGATIVE = MESSAGES["NT-convert-dim-negative"][1].replace("{argname}", "dims")
_CORRUPT = MESSAGES["NT-corrupt"][1]
_MERGE_SHAPE = MESSAGES["NT-merge-shape"][1]
_T8_BOOL = _T8.replace("{dtype}", "bool")  # bool is the one dtype numba_ta cannot sum


# --------------------------------------------------------------------------- the types
@structref.register
class _StateType(types.StructRef):
    """The state struct as the Python layer builds it (boxes to a :class:`_StateProxy`)."""

    def preprocess_fields(self, fields):
        return tuple((n, types.unliteral(t)) for n, t in fields)


class _StateProxy(structref.StructRefProxy):
    """A Python reference to a state struct (built by the Python layer; never seen by users)."""


@structref.register
class TensorArrayType(types.StructRef):
    """Numba type of a :class:`numba_ta.TensorArray` inside compiled code (same fields as the state)."""

    def preprocess_fields(self, fields):
        return tuple((n, types.unliteral(t)) for n, t in fields)


_FIELDS = ("data", "state", "shape_id", "offsets", "hdr", "shapes", "items", "es", "ces", "zshape", "name")
structref.define_proxy(_StateProxy, _StateType, list(_FIELDS))


def _fields(dtype, ndim):
    return [
        ("data", types.Array(from_dtype(dtype), 1, "C")),
        ("state", types.uint8[::1]),
        ("shape_id", types.int32[::1]),
        ("offsets", types.int64[::1]),
        ("hdr", types.int64[::1]),
        ("shapes", types.int64[:, ::1]),
        ("items", types.int64[::1]),
        ("es", types.int64[::1]),  # the array's element shape, -1 = unknown dimension
        ("ces", types.int64[::1]),  # the class's element shape (TensorArray.element_shape)
        ("zshape", types.UniTuple(types.intp, ndim)),  # only its length matters: the element rank
        ("name", types.unicode_type),
    ]


_TYPES: dict = {}


def array_type(dtype, ndim, cls=TensorArrayType):
    """Return the Numba type of an array of ``dtype`` whose elements have ``ndim`` dimensions."""
    key = (np.dtype(dtype), int(ndim), cls)
    t = _TYPES.get(key)
    if t is None:
        t = _TYPES[key] = cls(_fields(key[0], key[1]))
    return t


# --------------------------------------------------------------------------- entering and leaving (Python side)
class _View:
    """What an array keeps of its compiled view (``Storage._jit``): the struct and what it was built from."""

    __slots__ = ("proxy", "hdr", "mem", "arrays", "tab", "es", "ndim", "ces", "cell", "owner", "ta", "__weakref__")

    def __init__(self, proxy, hdr, arrays, tab, es, ndim, ces):
        self.proxy, self.hdr, self.arrays, self.tab = proxy, hdr, arrays, tab
        self.mem = memoryview(hdr).cast("B")  # written in one call by _enter (_HDR.pack_into)
        self.es, self.ndim, self.ces = es, ndim, ces
        self.cell = None  # the class's element shape last copied into ces
        self.owner = None  # the thread whose compiled call holds the array, else None
        self.ta = None  # a weak reference to the TensorArray object of the current call (for boxing)
        _VIEWS[proxy._meminfo.data] = self


_EMPTY: dict = {}  # an empty data buffer per dtype, for arrays that have none yet
_VIEWS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()  # struct address -> its _View


def _rank(st, ta):
    """Return the element rank of ``st`` (its element shape's, the class's, or a written element's) or None."""
    if st._es is not None:
        return len(st._es)
    cell = ta._element_shape[0]._dims if ta is not None else None
    if cell is not None:
        return len(cell)
    shapes = st._tab[0]
    if shapes:
        return len(shapes[0])
    return None


def numba_type(ta):
    """``TensorArray._numba_type_``: the array's Numba type; TypeError while its element rank is unknown."""
    st = ta._handle._storage
    ndim = _rank(st, ta)
    t = _TYPES.get((st.dtype, ndim, TensorArrayType))
    if t is not None:
        return t
    if ndim is None:
        raise TypeError(
            f"TensorArray {st.name}: its element rank is not known yet, so it cannot be passed to compiled code "
            "(give it an element_shape, or write an element first)"
        )
    return array_type(st.dtype, ndim)


def _enter(ta):
    """Unboxing: lock the array and return its state struct, up to date (called from compiled code's wrapper)."""
    st = ta._handle._storage
    ndim = _rank(st, ta)
    if ndim is None:
        raise TypeError(f"TensorArray {st.name}: element rank unknown")
    me = threading.get_ident()
    view = getattr(st, "_jit", None)
    if view is not None and view.owner == me:
        raise RuntimeError(
            f"TensorArray {st.name} is already in use by a compiled call of this thread (passed twice, or "
            "passed again from inside a compiled function): pass it once"
        )
    st.lock.acquire()
    try:
        if st.data is None:
            data = _EMPTY.get(st.dtype)
            if data is None:
                data = _EMPTY[st.dtype] = np.empty(0, st.dtype)
        else:
            data = st.data
        arrays = (data, st.state, st.shape_id, st.offsets)
        cell = ta._element_shape[0]._dims
        es = st._es
        tab = st._tab
        if (
            view is None
            or view.tab is not tab
            or view.es != es
            or view.arrays[0] is not data
            or view.arrays[1] is not arrays[1]
            or view.arrays[2] is not arrays[2]
            or view.arrays[3] is not arrays[3]
            or view.ndim != ndim
        ):
            view = _new_view(st, arrays, tab, es, ndim)
        if cell is None or len(cell) != ndim:
            known = 0
        else:
            known = 1
            if cell != view.cell:
                view.ces[:] = [-1 if d is None else d for d in cell]
                view.cell = cell
        _HDR.pack_into(
            view.mem, 0,
            st.size, st.cap, st.used, st.width, st.layout, st.dynamic_size, st.clear_after_read, st.identical,
            st.is_grad, st.closed, st.gradients_disallowed, len(tab[0]), 0, known, ta._infer_shape, -1,
            es is not None, 0, st.marked_size, 0,
        )  # fmt: skip
        view.owner = me
        ref = view.ta
        if ref is None or ref() is not ta:
            view.ta = weakref.ref(ta)
        st._jit = view
        return view.proxy
    except BaseException:
        st.lock.release()
        raise


def _new_view(st, arrays, tab, es, ndim):
    """Build the state struct of ``st`` over its buffers ``arrays`` (a compiled constructor call)."""
    hdr = np.zeros(NHDR, np.int64)
    shapes = (
        np.array([s for s in tab[0]], dtype=np.int64).reshape(len(tab[0]), ndim)
        if tab[0]
        else np.zeros((0, ndim), np.int64)
    )
    items = np.array(tab[2], dtype=np.int64)
    es_arr = np.array([-1 if d is None else d for d in es] if es is not None else [-1] * ndim, dtype=np.int64)
    ces = np.full(ndim, -1, np.int64)
    proxy = _make_state(*arrays, hdr, shapes, items, es_arr, ces, (0,) * ndim, st.name)
    return _View(proxy, hdr, arrays, tab, es, ndim, ces)


@njit  # a dispatcher types its arguments in C; _StateProxy(...) from Python would type them in Python (~100 us)
def _make_state(data, state, shape_id, offsets, hdr, shapes, items, es, ces, zshape, name):
    """Return a new state struct over the given buffers (boxed as a :class:`_StateProxy`)."""
    return _StateProxy(data, state, shape_id, offsets, hdr, shapes, items, es, ces, zshape, name)


@njit  # not cached: a read-only install has nowhere to cache it (compiled once per dtype and rank)
def _arrays_of(s):
    """Return the buffers of a state struct (those compiled code may have replaced)."""
    return s.data, s.state, s.shape_id, s.offsets, s.shapes, s.items, s.es


def _sync(st, view, ta):
    """Copy the compiled view's changes (buffers, shapes, scalars, the class's element shape) into the array.

    The view's change flags are cleared in the same commit (the changes are taken over).

    Everything is computed first and committed by one statement at the end, which no signal
    can split: an exception (a ``KeyboardInterrupt``) before it leaves the array as it was,
    and the sync can simply run again.
    """
    hdr = view.hdr
    h = hdr.tolist()
    data, state, shape_id, offsets, m0, m1, m2, tab, es = (st.data, st.state, st.shape_id, st.offsets, st._st, st._sidb, st._offb, st._tab, st._es)  # noqa: E501  # fmt: skip
    arrays, vtab, ves = view.arrays, view.tab, view.es
    if h[GEN]:  # buffers replaced, shapes interned or the element shape changed in compiled code
        raw, state, shape_id, offsets, shapes, items, es_arr = _arrays_of(view.proxy)
        n = h[NSHAPES]
        if n != len(tab[0]):
            tab = _storage._new_table(tab[0] + [tuple(int(d) for d in r) for r in shapes[len(tab[0]) : n]])
        if h[ES_CHANGED]:
            es = tuple(None if d < 0 else int(d) for d in es_arr)
        data = raw if raw.size or data is not None else None
        m0, m1, m2 = memoryview(state), memoryview(shape_id), memoryview(offsets)
        arrays, vtab, ves = (raw, state, shape_id, offsets), tab, es
    cells = ta._element_shape
    shape, cell = cells[0], view.cell
    if h[CES_CHANGED]:
        cell = tuple(None if d < 0 else d for d in view.ces.tolist())
        if shape._dims != cell:
            shape = TensorShape(cell)
    s = st
    s.data, s.state, s.shape_id, s.offsets, s._st, s._sidb, s._offb, s._tab, s._es, s.size, s.cap, s.used, s.width, s.layout, s.closed, s.gradients_disallowed, s.marked_size, s._fast_shape, s._fast_rows, view.arrays, view.tab, view.es, view.cell, cells[0], hdr[GEN], hdr[ES_CHANGED], hdr[CES_CHANGED] = (data, state, shape_id, offsets, m0, m1, m2, tab, es, h[SIZE], h[CAP], h[USED], h[WIDTH], h[LAYOUT], bool(h[CLOSED]), bool(h[DISALLOWED]), h[MARKED], None, None, arrays, vtab, ves, cell, shape, 0, 0, 0)  # noqa: E501  # fmt: skip


def _leave(ta):
    """Argument cleanup: copy the compiled view's changes back into the array and unlock it.

    An exception during the copy (a ``KeyboardInterrupt`` arriving there) does not leave the
    array half updated: the copy runs again, then the exception goes on (Numba reports an
    exception raised in an argument's cleanup as a ``SystemError`` whose cause it is).
    """
    st = ta._handle._storage
    view = st._jit
    try:
        try:
            _sync(st, view, ta)
        except BaseException:
            _sync(st, view, ta)  # the compiled call's work is in the buffers already: take it over
            raise
    finally:
        view.owner = None
        st.lock.release()


def _box(meminfo_addr, meminfo=None, typ=None):
    """Return the TensorArray object for a struct returned by compiled code (boxing).

    ``meminfo`` and ``typ`` default to None for code compiled (and cached) by an
    earlier numba_ta, whose boxing passed the address only.
    """
    view = _VIEWS.get(meminfo_addr)
    if view is None:  # created in compiled code: the Python side makes its array now
        if meminfo is None:
            raise RuntimeError(
                "a TensorArray created by cached compiled code of an older numba_ta cannot be returned: "
                "clear the cache of the compiled function (its *.nbi/*.nbc files)"
            )
        return _adopt(meminfo, typ)
    # the array entered as an argument of this call (its cleanup syncs it), or one created in this
    # call and already adopted (returned twice): nothing to sync here.  (Syncing from the struct
    # here could overwrite another thread's later Python-level ops with stale scalars, once the
    # argument's cleanup has released the lock.)
    ta = view.ta()
    return ta._with_flow(ta._flow)


def _adopt(meminfo, typ):
    """Give an array created in compiled code its Python side: storage, registry entry, TensorArray object."""
    from .tensor_array import TensorArray

    dtype = as_dtype(typ.field_dict["data"].dtype)
    ndim = len(typ.field_dict["zshape"])
    proxy = _StateProxy._numba_box_(array_type(dtype, ndim, _StateType), meminfo)
    data, state, shape_id, offsets, hdr, ces, name = _own_of(proxy)
    h = hdr.tolist()
    st = _storage.Storage(name, dtype, 0, None, bool(h[DYN]), bool(h[CAR]), bool(h[IDENT]))
    ta = TensorArray(dtype, handle=_registry.register(st), flow=0.0, infer_shape=bool(h[INFER]))
    cell = tuple(None if d < 0 else d for d in ces.tolist())
    ta._element_shape[0] = TensorShape(cell)
    view = _View(proxy, hdr, (data, state, shape_id, offsets), st._tab, None, ndim, ces)
    view.cell = cell
    view.ta = weakref.ref(ta)
    st._jit = view
    hdr[GEN] = 1  # take every buffer and the element shape
    hdr[ES_CHANGED] = 1
    _sync(st, view, ta)
    return ta


@njit
def _own_of(s):
    """Return what the Python side of an array created in compiled code takes from its struct."""
    return s.data, s.state, s.shape_id, s.offsets, s.hdr, s.ces, s.name


# --------------------------------------------------------------------------- unbox / box
@unbox(TensorArrayType)
def _unbox(typ, obj, c):
    enter = c.pyapi.unserialize(c.pyapi.serialize_object(_enter))
    proxy = c.pyapi.call_function_objargs(enter, [obj])
    c.pyapi.decref(enter)
    failed = cgutils.is_null(c.builder, proxy)
    sr = cgutils.create_struct_proxy(typ)(c.context, c.builder)
    with c.builder.if_then(c.builder.not_(failed), likely=True):
        mi_obj = c.pyapi.object_getattr_string(proxy, "_meminfo")
        mi = c.unbox(types.MemInfoPointer(types.voidptr), mi_obj).value
        c.pyapi.decref(mi_obj)
        sr.meminfo = mi
        c.pyapi.decref(proxy)  # the array keeps the proxy (st._jit) alive for the call

    def cleanup():
        with c.builder.if_then(c.builder.not_(failed), likely=True):
            leave = c.pyapi.unserialize(c.pyapi.serialize_object(_leave))
            res = c.pyapi.call_function_objargs(leave, [obj])
            c.pyapi.decref(leave)
            c.pyapi.decref(res)  # _leave returns None; an exception in it is left for the caller to see

    return NativeValue(sr._getvalue(), is_error=failed, cleanup=cleanup)


@box(TensorArrayType)
def _box_ta(typ, val, c):
    sr = cgutils.create_struct_proxy(typ)(c.context, c.builder, value=val)
    addr = c.context.nrt.meminfo_data(c.builder, sr.meminfo)
    addr_obj = c.pyapi.long_from_ssize_t(c.builder.ptrtoint(addr, c.pyapi.py_ssize_t))
    mi_obj = c.box(types.MemInfoPointer(types.voidptr), sr.meminfo)  # a new reference to the struct
    typ_obj = c.pyapi.unserialize(c.pyapi.serialize_object(typ))
    boxer = c.pyapi.unserialize(c.pyapi.serialize_object(_box))
    res = c.pyapi.call_function_objargs(boxer, [addr_obj, mi_obj, typ_obj])
    c.pyapi.decref(boxer)
    c.pyapi.decref(typ_obj)
    c.pyapi.decref(mi_obj)
    c.pyapi.decref(addr_obj)
    return res


# --------------------------------------------------------------------------- compiled helpers
@intrinsic
def _buf(typingctx, s, field):
    """``(pointer to the first item, item count)`` of the array field ``field`` (a literal) of the struct ``s``.

    Reading a field as ``s.name`` increfs and decrefs its buffer; the hot paths read
    through this borrowed pointer instead (the struct keeps the buffer alive for as
    long as it is the field's value, and the hot paths replace no field).
    """
    if not isinstance(field, types.StringLiteral):
        return None
    name = field.literal_value
    arrty = s.field_dict[name]
    sig = types.Tuple((types.CPointer(arrty.dtype), types.intp))(s, field)

    def codegen(context, builder, sig, args):
        dataval = structref._Utils(context, builder, sig.args[0]).get_data_struct(args[0])
        ary = context.make_array(arrty)(context, builder, value=getattr(dataval, name))
        return context.make_tuple(builder, sig.return_type, (ary.data, ary.nitems))

    return sig, codegen


@intrinsic
def _ptr(typingctx, a):
    """Return the data pointer of the array ``a`` (borrowed: valid while ``a`` is alive)."""
    sig = types.CPointer(a.dtype)(a)

    def codegen(context, builder, sig, args):
        return context.make_array(sig.args[0])(context, builder, value=args[0]).data

    return sig, codegen


@register_jitable
def _shape_str(a, n):
    """TF's ``TensorShape::DebugString`` of the first ``n`` items of ``a``: ``[2,3]``."""
    out = "["
    for k in range(n):
        if k:
            out += ","
        out += str(a[k])
    return out + "]"


@register_jitable
def _partial_str(a):
    """TF's ``PartialTensorShape::DebugString`` (-1 is an unknown dimension): ``[?,3]``."""
    out = "["
    for k in range(a.size):
        if k:
            out += ","
        out += "?" if a[k] < 0 else str(a[k])
    return out + "]"


@register_jitable
def _es_str(s):
    """Format the array's element shape as TF prints a partial shape (``<unknown>`` for an unknown rank)."""
    return _partial_str(s.es) if s.hdr[ES_KNOWN] else "<unknown>"


@register_jitable
def _py_str(a, n):
    """Python's ``str(tf.TensorShape)`` (-1 is None): ``(2,)``, ``(None, 3)``, ``()``."""
    out = "("
    for k in range(n):
        if k:
            out += ", "
        out += "None" if a[k] < 0 else str(a[k])
    return out + (",)" if n == 1 else ")")


@register_jitable
def _fully_defined(es):
    for k in range(es.size):
        if es[k] < 0:
            return False
    return True


@register_jitable
def _compatible(es, shape):
    """Whether the concrete ``shape`` (tuple) is compatible with the partial ``es`` (same rank)."""
    for k in range(es.size):
        if es[k] >= 0 and es[k] != shape[k]:
            return False
    return True


@register_jitable
def _shape_array(shape):
    a = np.empty(len(shape), np.int64)
    for k in range(len(shape)):
        a[k] = shape[k]
    return a


@register_jitable
def _find_shape(s, shape):
    """Return the id of the interned ``shape`` (an int64 array), or -1."""
    n = s.hdr[NSHAPES]
    r = shape.size
    for sid in range(n):
        row = s.shapes[sid]
        same = True
        for k in range(r):
            if row[k] != shape[k]:
                same = False
                break
        if same:
            return sid
    return -1


@register_jitable
def _set_es(s, shape):
    """Set the array's element shape to ``shape`` (an identical-element-shapes array's first write)."""
    for k in range(len(shape)):
        s.es[k] = shape[k]
    s.hdr[ES_KNOWN] = 1
    s.hdr[ES_CHANGED] = 1
    s.hdr[GEN] += 1
    s.hdr[FASTSID] = -1  # the fast write path relies on the element shape it was enabled under


@register_jitable
def _intern_tuple(s, shape):
    """:func:`_intern` of a shape tuple; the last shape interned is found first."""
    n = s.hdr[NSHAPES]
    r = len(shape)
    for j in range(n):
        sid = n - 1 - j
        same = True
        for k in range(r):
            if s.shapes[sid, k] != shape[k]:
                same = False
                break
        if same:
            return sid
    return _intern(s, _shape_array(shape))


@register_jitable
def _intern(s, shape):
    """Return the id of ``shape`` (an int64 array), interning it (at the commit of an op that cannot fail)."""
    sid = _find_shape(s, shape)
    if sid >= 0:
        return sid
    h = s.hdr
    n = h[NSHAPES]
    if n == s.shapes.shape[0]:
        cap = max(4, 2 * n)
        shapes = np.zeros((cap, shape.size), np.int64)
        items = np.zeros(cap, np.int64)
        shapes[:n] = s.shapes[:n]
        items[:n] = s.items[:n]
        s.shapes = shapes
        s.items = items
    s.shapes[n, :] = shape
    p = 1
    for k in range(shape.size):
        p *= shape[k]
    s.items[n] = p
    h[NSHAPES] = n + 1
    h[GEN] += 1
    return n


@register_jitable
def _reserve(s, n):
    """Room for ``n`` slots in the metadata (geometric growth; new slots unwritten)."""
    h = s.hdr
    cap = h[CAP]
    if n <= cap:
        return
    newcap = max(n, 2 * cap, 8)
    m = min(cap, s.state.size)
    state = np.zeros(newcap, np.uint8)
    shape_id = np.zeros(newcap, np.int32)
    offsets = np.zeros(newcap, np.int64)
    state[:m] = s.state[:m]
    shape_id[:m] = s.shape_id[:m]
    offsets[:m] = s.offsets[:m]
    s.state = state
    s.shape_id = shape_id
    s.offsets = offsets
    h[CAP] = newcap
    h[GEN] += 1


_SLACK = _storage.DENSE_SLACK_BYTES
_FACTOR = _storage.DENSE_FACTOR


@register_jitable
def _dense_rows(s, w, top, n_new):
    """:meth:`numba_ta._storage.Storage._dense_rows` (the memory policy), in compiled code."""
    if w == 0:
        return top
    h = s.hdr
    have = s.data.size // w if h[LAYOUT] == _DENSE else 0
    if top <= have:
        return have
    stored = n_new
    if have:
        for i in range(h[SIZE]):
            if s.state[i] & _D:
                stored += 1
    row_bytes = w * s.data.itemsize
    budget = max(_SLACK, _FACTOR * stored * row_bytes)
    for rows in (max(h[CAP], top), max(top, 2 * have), top):
        if rows * row_bytes <= budget:
            return rows
    return 0


@register_jitable
def _grow_data(s, items, keep):
    if items <= s.data.size:
        return
    data = np.empty(items, s.data.dtype)
    data[:keep] = s.data[:keep]
    s.data = data
    s.hdr[GEN] += 1


@register_jitable
def _alloc1(s, index, items):
    """Return the offset of new room for ``items`` items of element ``index`` (``Storage._alloc``, one slot)."""
    h = s.hdr
    top = index + 1
    if h[LAYOUT] == _NONE:
        rows = _dense_rows(s, items, top, 1)
        if rows:
            s.data = np.empty(rows * items, s.data.dtype)
            h[LAYOUT] = _DENSE
            h[WIDTH] = items
        else:
            s.data = np.empty(items, s.data.dtype)
            h[LAYOUT] = _RAGGED
            h[USED] = 0
        h[GEN] += 1
    if h[LAYOUT] == _DENSE:
        w = h[WIDTH]
        if items == w:
            if top * w > s.data.size:
                rows = _dense_rows(s, w, top, 1)
                if rows:
                    _grow_data(s, rows * w, s.data.size)
            if top * w <= s.data.size:
                return index * w
        h[LAYOUT] = _RAGGED
        h[USED] = s.data.size
    need = h[USED] + items
    if need > s.data.size:
        _grow_data(s, max(need, 2 * s.data.size), h[USED])
    o = h[USED]
    h[USED] = need
    return o


@register_jitable
def _msg(template, name, index):
    return template.replace("{name}", name).replace("{index}", str(index))


@register_jitable
def _fast_write(s, index, value, ndim):
    """Write ``value`` at ``index`` if it takes the fast path; return False (nothing done) if it does not.

    The fast path: a dense row of the last shape written (``hdr[FASTSID]``, set by
    a write that passed every check under the current element shape; a change of
    the element shape clears it) into an unwritten slot within the buffer, with
    the class's element shape already equal to the row's.  Then none of TF's
    checks can fail, and the op is the row copy and its commit, through borrowed
    pointers (no reference counting).
    """
    h, _ = _buf(s, "hdr")
    sid = h[FASTSID]
    if sid < 0 or index < 0 or h[CLOSED]:
        return False
    w = h[WIDTH]
    if value.size != w or not value.flags.c_contiguous:
        return False
    st, nst = _buf(s, "state")
    if index >= nst or index >= h[CAP] or st[index] != 0 or (index >= h[SIZE] and not h[DYN]):
        return False
    dp, nd = _buf(s, "data")
    o = index * w
    if o + w > nd:
        return False
    sp, _ = _buf(s, "shapes")
    row = sid * ndim
    cp, _ = _buf(s, "ces")
    known = h[CLASS_KNOWN]
    if not known and h[INFER]:
        return False
    for k in range(ndim):
        d = value.shape[k]
        if sp[row + k] != d:
            return False
        if known and cp[k] != d and (cp[k] >= 0 or h[INFER]):
            return False
    vp = _ptr(value)
    for k in range(w):
        dp[o + k] = vp[k]
    op, _ = _buf(s, "offsets")
    ip, _ = _buf(s, "shape_id")
    op[index] = o
    ip[index] = sid
    st[index] = _W | _D
    if index >= h[SIZE]:
        h[SIZE] = index + 1
    return True


@register_jitable
def _storage_write(s, index, value, numeric):
    """TF's ``LockedWriteOrAggregate`` (checks T1, T2, T4 to T8 in order; sums in gradient arrays)."""
    h = s.hdr
    if h[CLOSED]:
        raise InvalidArgumentError(_T1.replace("{name}", s.name))
    n = h[SIZE]
    if index < 0 or (index >= n and not h[DYN]):
        raise InvalidArgumentError(_msg(_T2, s.name, index).replace("{size}", str(n)))
    shape = value.shape
    r = len(shape)
    if not _compatible(s.es, shape):
        raise InvalidArgumentError(
            _msg(_T4, s.name, index).replace("{shape}", _shape_str(shape, r)).replace("{element_shape}", _es_str(s))
        )
    bits = s.state[index] if index < n else 0
    add = False
    if bits:
        if bits & _R:
            raise InvalidArgumentError(_msg(_T5, s.name, index))
        if not h[ISGRAD]:
            raise InvalidArgumentError(_msg(_T6, s.name, index))
        old = s.shapes[s.shape_id[index]]
        same = True
        for k in range(r):
            if old[k] != shape[k]:
                same = False
        if not same:
            raise InvalidArgumentError(
                _msg(_T7, s.name, index)
                .replace("{old_shape}", _shape_str(old, r))
                .replace("{shape}", _shape_str(shape, r))
            )
        add = (bits & _D) != 0 and value.size > 0
        if add and not numeric:
            raise InvalidArgumentError(_T8_BOOL)
    flat = np.ascontiguousarray(value).reshape(-1)
    ident_es = h[IDENT] and not _fully_defined(s.es)
    if add:
        o = s.offsets[index]
        d = s.data[o : o + flat.size]
        d += flat
        h[DISALLOWED] = 1
        if ident_es:
            _set_es(s, shape)
        return
    sid = s.shape_id[index] if bits else _intern_tuple(s, shape)
    if index >= n:
        _reserve(s, index + 1)
    items = flat.size
    o = 0
    if items:
        o = _alloc1(s, index, items)
        s.data[o : o + items] = flat
    s.offsets[index] = o
    s.shape_id[index] = sid
    s.state[index] = _W | _D
    if index + 1 > n:
        h[SIZE] = index + 1
    if ident_es:
        _set_es(s, shape)
    h[FASTSID] = sid if h[LAYOUT] == _DENSE and items == h[WIDTH] and items else -1


@register_jitable
def _class_check(s, shape, rank):
    """Check the class's element shape (``_check_element_shape``): ValueError as TF's Python layer raises it."""
    if not s.hdr[CLASS_KNOWN]:
        return
    ces = s.ces
    ok = ces.size == rank
    if ok:
        for k in range(rank):
            if ces[k] >= 0 and ces[k] != shape[k]:
                ok = False
    if not ok:
        raise ValueError(
            _CLASS_SHAPES.replace("{shape}", _py_str(shape, rank)).replace("{element_shape}", _py_str(ces, ces.size))
        )


@register_jitable
def _class_merge(s, shape, rank):
    """Merge the written shape into the class's element shape (``infer_shape``; an unknown one becomes it)."""
    h = s.hdr
    if not h[INFER] or (not h[CLASS_KNOWN] and rank != s.ces.size):
        return
    for k in range(rank):
        if s.ces[k] != shape[k]:
            s.ces[k] = shape[k]
            h[CES_CHANGED] = 1
    if not h[CLASS_KNOWN]:
        h[CLASS_KNOWN] = 1
        h[CES_CHANGED] = 1


@overload_method(TensorArrayType, "write")
def _ol_write(ta, index, value):
    dtype = ta.field_dict["data"].dtype
    ndim = len(ta.field_dict["zshape"])
    numeric = dtype != types.boolean
    vdim = value.ndim if isinstance(value, types.Array) else 0

    same = isinstance(value, types.Array) and value.dtype == dtype

    def impl(ta, index, value):
        if same:
            v = value
        elif vdim:
            v = np.asarray(value).astype(dtype)
        else:
            v = np.full((), value, dtype)
        if vdim == ndim and _fast_write(ta, index, v, ndim):
            return ta
        _class_check(ta, v.shape, vdim)
        if vdim != ndim:
            raise NotImplementedError("inside compiled code, elements must have the array's element rank")
        _storage_write(ta, index, v, numeric)
        _class_merge(ta, v.shape, vdim)
        return ta

    return impl


@register_jitable
def _fast_read(s, index, ndim):
    """Read a stored element at ``index`` through borrowed pointers; ``(False, empty)`` if it takes the full path.

    The fast path: an open array, ``index`` in range, the element written with its
    value stored and not cleared (no check can fail).  It copies the element and
    marks it read (cleared, for ``clear_after_read``).
    """
    h, _ = _buf(s, "hdr")
    st, nst = _buf(s, "state")
    shp = s.zshape
    if h[CLOSED] or index < 0 or index >= h[SIZE] or index >= nst:
        return False, np.empty(shp, s.data.dtype)
    bits = st[index]
    if bits & (_W | _D | _C) != _W | _D:
        return False, np.empty(shp, s.data.dtype)
    ip, _ = _buf(s, "shape_id")
    sid = ip[index]
    sp, _ = _buf(s, "shapes")
    for k in range(ndim):
        shp = tuple_setitem(shp, k, sp[sid * ndim + k])
    out = np.empty(shp, s.data.dtype)
    outp = _ptr(out)
    dp, _ = _buf(s, "data")
    op, _ = _buf(s, "offsets")
    o = op[index]
    for k in range(out.size):
        outp[k] = dp[o + k]
    st[index] = (bits | _R | _C) & ~_D if h[CAR] else bits | _R
    return True, out


@register_jitable
def _read(s, index, ndim):
    """TF's ``LockedRead`` (T1, T9, T10, T11; soft zeros; clear_after_read)."""
    h = s.hdr
    if h[CLOSED]:
        raise InvalidArgumentError(_T1.replace("{name}", s.name))
    n = h[SIZE]
    if index < 0 or (index >= n and not h[ISGRAD]):
        raise InvalidArgumentError(_T9.replace("{index}", str(index)).replace("{size}", str(n)))
    bits = s.state[index] if index < n else 0
    new = _W | _R | _C if h[CAR] else _W | _R
    if not bits & _W:
        if not _fully_defined(s.es):
            raise InvalidArgumentError(_msg(_T10, s.name, index).replace("{element_shape}", _es_str(s)))
        out = np.zeros(to_fixed_tuple(s.es, ndim), s.data.dtype)
        sid = _intern(s, s.es.copy())
        if index < n:
            s.shape_id[index] = sid
            s.state[index] = new
            return out
        _reserve(s, index + 1)
        for i in range(n, index + 1):
            s.state[i] = _W
            s.shape_id[i] = sid
        s.state[index] = new
        h[SIZE] = index + 1
        return out
    if bits & _C:
        raise InvalidArgumentError(_msg(_T11, s.name, index))
    sid = s.shape_id[index]
    items = s.items[sid]
    shape = to_fixed_tuple(s.shapes[sid], ndim)
    if bits & _D and items:
        o = s.offsets[index]
        out = s.data[o : o + items].copy().reshape(shape)
    else:
        out = np.zeros(shape, s.data.dtype)
    s.state[index] = (bits | _R | _C) & ~_D if h[CAR] else bits | _R
    return out


@overload_method(TensorArrayType, "read")
def _ol_read(ta, index):
    ndim = len(ta.field_dict["zshape"])

    def impl(ta, index):
        ok, out = _fast_read(ta, index, ndim)
        if ok:
            return out
        return _read(ta, index, ndim)

    return impl


@overload_method(TensorArrayType, "size")
def _ol_size(ta):
    def impl(ta):
        if ta.hdr[CLOSED]:
            raise InvalidArgumentError(_T1.replace("{name}", ta.name))
        return np.int32(ta.hdr[SIZE])  # TF's size is an int32 scalar

    return impl


@overload_attribute(TensorArrayType, "element_shape")
def _ol_element_shape(ta):
    ndim = len(ta.field_dict["zshape"])

    def impl(ta):
        return to_fixed_tuple(ta.ces.copy() if ta.hdr[CLASS_KNOWN] else ta.es.copy(), ndim)

    return impl


@register_jitable
def _repeat_keys(idx):
    """``(keys, seen)``: equal keys for equal indices, and a zeroed table over the keys."""
    m = idx.size
    lo = idx.min()
    hi = idx.max()
    if hi - lo < 4 * m + 4096:
        return idx - lo, np.zeros(hi - lo + 1, np.uint8)
    order = np.argsort(idx, kind="mergesort")
    keys = np.empty(m, np.int64)
    r = -1
    prev = 0
    for j in range(m):
        v = idx[order[j]]
        if j == 0 or v != prev:
            r += 1
            prev = v
        keys[order[j]] = r
    return keys, np.zeros(m, np.uint8)


@register_jitable
def _gather(s, idx, ndim, ndim1):
    """TF's ``TensorArrayGatherV3`` with no element shape attribute (T1, G3, T9 to T11, G5, in order)."""
    h = s.hdr
    # the class passes its element shape as the op's attribute: merged into the array's (TF's MergeWith)
    attr_known = h[CLASS_KNOWN] != 0
    es = s.es.copy()
    if attr_known:
        for k in range(ndim):
            a = s.ces[k]
            if es[k] >= 0 and a >= 0 and es[k] != a:
                raise InvalidArgumentError(
                    _MERGE_SHAPE.replace("{shape}", _es_str(s)).replace("{other_shape}", _partial_str(s.ces))
                )
            if es[k] < 0:
                es[k] = a
    es_known = h[ES_KNOWN] != 0 or attr_known
    es_str = _partial_str(es) if es_known else "<unknown>"
    if h[CLOSED]:
        raise InvalidArgumentError(_T1.replace("{name}", s.name))
    m = idx.size
    shp = np.zeros(ndim + 1, np.int64)
    if m == 0:
        if not attr_known or not _fully_defined(s.ces):
            attr = _partial_str(s.ces) if attr_known else "<unknown>"
            raise UnimplementedError(_G3.replace("{element_shape}", attr))
        shp[1:] = s.ces
        _commit_es(s, es, es_known)
        return np.zeros(to_fixed_tuple(shp, ndim1), s.data.dtype)
    zsid = _intern(s, es.copy()) if _fully_defined(es) else -1
    sids = _check_reads(s, idx, zsid, es_str)
    s0 = sids[0]
    if attr_known and not _compatible(s.ces, s.shapes[s0]):
        raise InvalidArgumentError(
            _G4.replace("{element_shape}", _partial_str(s.ces)).replace("{shape}", _shape_str(s.shapes[s0], ndim))
        )
    w = s.items[s0]
    if w:
        for k in range(1, m):
            if sids[k] != s0:
                raise InvalidArgumentError(
                    _G5.replace("{shape0}", _shape_str(s.shapes[s0], ndim))
                    .replace("{position}", str(k))
                    .replace("{shape}", _shape_str(s.shapes[sids[k]], ndim))
                )
    shp[0] = m
    shp[1:] = s.shapes[s0, :ndim]
    out = np.empty(to_fixed_tuple(shp, ndim1), s.data.dtype)
    top = idx.max() + 1
    _reserve(s, top)
    src = np.empty(m, np.int64)
    new_state = np.empty(m, np.uint8)
    _, bad = _kernels._plan_reads(idx, s.state, s.offsets, sids, s.items, h[CAR], s.data.size, src, new_state)
    if bad >= 0:
        raise InternalError(_CORRUPT.replace("{name}", s.name).replace("{index}", str(idx[bad])))
    if w:
        fp = _ptr(out)
        dp, _ = _buf(s, "data")
        for k in range(m):
            o = src[k]
            b = k * w
            if o < 0:
                for j in range(w):
                    fp[b + j] = 0
            else:
                for j in range(w):
                    fp[b + j] = dp[o + j]
    _commit_reads(s, idx, sids, new_state, top, zsid)
    _commit_es(s, es, es_known)
    return out


@register_jitable
def _check_reads(s, idx, zsid, es_str):
    """Run ``ReadMany``'s checks in order (the kernel) and raise TF's error (T9, T10, T11); return the shape ids."""
    h = s.hdr
    n = h[SIZE]
    if h[CAR]:
        keys, seen = _repeat_keys(idx)
    else:
        keys, seen = idx, np.zeros(0, np.uint8)
    sids = np.empty(idx.size, np.int64)
    pos, code = _kernels._check_reads(idx, s.state, s.shape_id, n, h[ISGRAD], h[CAR], zsid, keys, seen, sids)
    if code:
        i = idx[pos]
        if code == 1:
            size = n
            if h[ISGRAD] and pos:
                size = max(n, idx[:pos].max() + 1)
            raise InvalidArgumentError(_T9.replace("{index}", str(i)).replace("{size}", str(size)))
        if code == 2:
            raise InvalidArgumentError(_msg(_T10, s.name, i).replace("{element_shape}", es_str))
        raise InvalidArgumentError(_msg(_T11, s.name, i))
    return sids


@register_jitable
def _commit_reads(s, idx, sids, new_state, top, zsid):
    """Store the element states after ``ReadMany``; a gradient array read up to ``top`` grows with soft zeros."""
    h = s.hdr
    n = h[SIZE]
    if top > n:
        for i in range(n, top):
            s.state[i] = _W
            s.shape_id[i] = zsid
        h[SIZE] = top
    _kernels._store_reads(idx, s.state, s.shape_id, new_state, sids)


@register_jitable
def _commit_es(s, es, known):
    """Store the element shape ``es`` (known: its rank is known) when it differs from the array's."""
    h = s.hdr
    if known and not h[ES_KNOWN]:
        _set_es(s, es)
        return
    for k in range(es.size):
        if es[k] != s.es[k]:
            _set_es(s, es)
            return


@overload_method(TensorArrayType, "gather")
def _ol_gather(ta, indices):
    ndim = len(ta.field_dict["zshape"])
    ndim1 = ndim + 1

    def impl(ta, indices):
        idx = np.asarray(indices).astype(np.int64)
        if idx.ndim != 1:
            raise InvalidArgumentError(_G2.replace("{shape}", _shape_str(_shape_array(idx.shape), idx.ndim)))
        return _gather(ta, idx.ravel(), ndim, ndim1)

    return impl


@register_jitable
def _fast_stack(s, ndim, ndim1):
    """Stack a dense array whose elements all hold data of one shape in place; ``(False, empty)`` otherwise.

    Then none of TF's checks can fail and the element shape does not change
    (the class's shape, if known, already agrees with the array's and the
    elements'): the op is one copy of the rows and the read marks.
    """
    h, _ = _buf(s, "hdr")
    n = h[SIZE]
    shp = np.zeros(ndim1, np.int64)
    stp, nst = _buf(s, "state")
    if h[CLOSED] or n == 0 or n > nst or h[LAYOUT] != _DENSE:
        return False, np.empty(to_fixed_tuple(shp, ndim1), s.data.dtype)
    ip, _ = _buf(s, "shape_id")
    op, _ = _buf(s, "offsets")
    itp, _ = _buf(s, "items")
    sp, _ = _buf(s, "shapes")
    s0 = ip[0]
    w = h[WIDTH]
    ok = w > 0 and itp[s0] == w
    if ok and h[CLASS_KNOWN]:
        esp, _ = _buf(s, "es")
        cp, _ = _buf(s, "ces")
        ok = h[ES_KNOWN] != 0
        for k in range(ndim):
            c = cp[k]
            if c >= 0 and (sp[s0 * ndim + k] != c or esp[k] != c):
                ok = False
    if ok:
        for i in range(n):
            if stp[i] & (_W | _D | _C) != _W | _D or ip[i] != s0 or op[i] != i * w:
                ok = False
                break
    if not ok:
        return False, np.empty(to_fixed_tuple(shp, ndim1), s.data.dtype)
    shp[0] = n
    for k in range(ndim):
        shp[k + 1] = sp[s0 * ndim + k]
    out = np.empty(to_fixed_tuple(shp, ndim1), s.data.dtype)
    fp = _ptr(out)
    dp, _ = _buf(s, "data")
    for k in range(n * w):
        fp[k] = dp[k]
    if h[CAR]:
        for i in range(n):
            stp[i] = (stp[i] | _R | _C) & ~_D
    else:
        for i in range(n):
            stp[i] |= _R
    return True, out


@overload_method(TensorArrayType, "stack")
def _ol_stack(ta):
    ndim = len(ta.field_dict["zshape"])
    ndim1 = ndim + 1

    def impl(ta):
        ok, out = _fast_stack(ta, ndim, ndim1)
        if ok:
            return out
        if ta.hdr[CLOSED]:
            raise InvalidArgumentError(_T1.replace("{name}", ta.name))
        return _gather(ta, np.arange(ta.hdr[SIZE]), ndim, ndim1)

    return impl


@register_jitable
def _scatter(s, idx, value, numeric, ndim):
    """TF's ``TensorArrayScatterV3`` after K7 and S2 (T1, S3, S4, T2, T4, T5 to T8, in TF's order)."""
    h = s.hdr
    if h[CLOSED]:
        raise InvalidArgumentError(_T1.replace("{name}", s.name))
    m = idx.size
    if m != value.shape[0]:
        raise InvalidArgumentError(_S3.replace("{n_indices}", str(m)).replace("{n_values}", str(value.shape[0])))
    n = h[SIZE]
    max_index = idx.max() if m else -1
    size2 = max(n, max_index + 1) if h[DYN] else n
    if max_index >= size2:
        raise InvalidArgumentError(_S4.replace("{max_index}", str(max_index)).replace("{size}", str(size2)))
    if m == 0:
        return
    row = _shape_array(value.shape[1:])
    pos_neg = m
    for k in range(m):
        if idx[k] < 0:
            pos_neg = k
            break
    if pos_neg == 0:
        raise InvalidArgumentError(_msg(_T2, s.name, idx[0]).replace("{size}", str(n)))
    if not _compatible(s.es, value.shape[1:]):
        raise InvalidArgumentError(
            _msg(_T4, s.name, idx[0]).replace("{shape}", _shape_str(row, ndim)).replace("{element_shape}", _es_str(s))
        )
    sid = _find_shape(s, row)
    width = 1
    for k in range(ndim):
        width *= row[k]
    if sid < 0:
        sid = h[NSHAPES]  # planned: interned at the commit
        items = np.empty(sid + 1, np.int64)
        items[:sid] = s.items[:sid]
        items[sid] = width
    else:
        items = s.items[: h[NSHAPES]]
    sids = np.full(m, sid, np.int64)
    keys, seen = _repeat_keys(idx[:pos_neg])
    add = np.empty(pos_neg, np.bool_)
    fresh = np.empty(pos_neg, np.bool_)
    dup = np.empty(pos_neg, np.bool_)
    p, code, old = _kernels._check_writes(
        idx[:pos_neg], s.state, s.shape_id, n, h[ISGRAD], sids[:pos_neg], items, numeric, keys, seen, add, fresh, dup
    )
    if code:
        _raise_write_error(s, code, idx[p], old, row, ndim)
    if pos_neg < m:
        size_then = max(n, idx[:pos_neg].max() + 1) if h[DYN] else n
        raise InvalidArgumentError(_msg(_T2, s.name, idx[pos_neg]).replace("{size}", str(size_then)))
    # no check can fail any more: the data work and the commit (one compiled call: nothing interrupts it)
    sid = _intern(s, row)
    _reserve(s, max_index + 1)
    flat = np.ascontiguousarray(value).reshape(-1)
    for k in range(m):
        i = idx[k]
        if width:
            if add[k]:
                o = s.offsets[i]
                d = s.data[o : o + width]
                d += flat[k * width : (k + 1) * width]
            else:
                o = _alloc1(s, i, width)
                s.data[o : o + width] = flat[k * width : (k + 1) * width]
                s.offsets[i] = o
        else:
            s.offsets[i] = 0
        s.state[i] = _W | _D
        s.shape_id[i] = sid
    if add.any():
        h[DISALLOWED] = 1
    h[SIZE] = size2
    if h[IDENT] and not _fully_defined(s.es):
        _set_es(s, row)


@register_jitable
def _raise_write_error(s, code, index, old, shape, ndim):
    """Raise TF's error for a failed ``WriteOrAggregateMany`` check (``_kernels._check_writes``'s code)."""
    if code == 1:
        raise InvalidArgumentError(_msg(_T5, s.name, index))
    if code == 2:
        raise InvalidArgumentError(_msg(_T6, s.name, index))
    if code == 3:
        raise InvalidArgumentError(
            _msg(_T7, s.name, index)
            .replace("{old_shape}", _shape_str(s.shapes[old], ndim))
            .replace("{shape}", _shape_str(shape, ndim))
        )
    raise InvalidArgumentError(_T8_BOOL)


@register_jitable
def _class_scatter(ta, idx, v, numeric, ndim):
    """Run the class's ``scatter``/``unstack`` after the cast: its shape check, the op, its shape merge."""
    vdim = v.ndim
    row = _shape_array(v.shape[1:])
    _class_check(ta, row, vdim - 1)
    if vdim - 1 != ndim:
        raise NotImplementedError("inside compiled code, elements must have the array's element rank")
    if idx.ndim != 1:
        raise InvalidArgumentError(_G2.replace("{shape}", _shape_str(_shape_array(idx.shape), idx.ndim)))
    _scatter(ta, idx.ravel(), v, numeric, ndim)
    _class_merge(ta, row, vdim - 1)
    return ta


@overload_method(TensorArrayType, "scatter")
def _ol_scatter(ta, indices, value):
    dtype = ta.field_dict["data"].dtype
    ndim = len(ta.field_dict["zshape"])
    numeric = 1 if dtype != types.boolean else 0
    vdim = value.ndim if isinstance(value, types.Array) else 0

    def impl(ta, indices, value):
        if vdim == 0:
            raise InvalidArgumentError(_S2.replace("{shape}", "[]"))
        return _class_scatter(ta, np.asarray(indices).astype(np.int64), np.asarray(value).astype(dtype), numeric, ndim)

    return impl


@overload_method(TensorArrayType, "unstack")
def _ol_unstack(ta, value):
    dtype = ta.field_dict["data"].dtype
    ndim = len(ta.field_dict["zshape"])
    numeric = 1 if dtype != types.boolean else 0
    vdim = value.ndim if isinstance(value, types.Array) else 0

    def impl(ta, value):
        if vdim == 0:
            raise InvalidArgumentError(_S2.replace("{shape}", "[]"))
        v = np.asarray(value).astype(dtype)
        return _class_scatter(ta, np.arange(v.shape[0]), v, numeric, ndim)

    return impl


@register_jitable
def _tail_str(a, ndim):
    """TF's ``DebugString`` of a shape without its first dimension."""
    return _shape_str(a[1:], ndim - 1)


@register_jitable
def _concat(s, ndim):
    """TF's ``TensorArrayConcatV3`` with the class's ``element_shape_except0`` (T1, C1, T9-T11, C2-C4)."""
    h = s.hdr
    attr_known = h[CLASS_KNOWN] != 0 and ndim > 0
    if h[CLOSED]:
        raise InvalidArgumentError(_T1.replace("{name}", s.name))
    if h[ISGRAD]:
        n = h[MARKED]
        if n < 0:
            raise InvalidArgumentError(_CONCAT_UNSPLIT.replace("{name}", s.name))
    else:
        n = h[SIZE]
    shp = np.zeros(max(ndim, 1), np.int64)
    if n == 0:
        if not attr_known or not _fully_defined(s.ces[1:]):
            attr = _partial_str(s.ces[1:]) if attr_known else "<unknown>"
            raise UnimplementedError(_C1.replace("{element_shape}", attr))
        shp[1:] = s.ces[1:]
        return np.zeros(to_fixed_tuple(shp, ndim), s.data.dtype)
    idx = np.arange(n)
    es = s.es.copy()
    zsid = _intern(s, es.copy()) if _fully_defined(es) else -1
    sids = _check_reads(s, idx, zsid, _es_str(s))
    if ndim == 0:
        raise InvalidArgumentError(_C2.replace("{index}", "0"))
    s0 = s.shapes[sids[0]]
    if attr_known and not _compatible(s.ces[1:], s0[1:ndim]):
        raise InvalidArgumentError(
            _C3.replace("{element_shape}", _partial_str(s.ces[1:])).replace("{shape}", _tail_str(s0, ndim))
        )
    lengths = np.empty(n, np.int64)
    for k in range(n):
        sk = s.shapes[sids[k]]
        for d in range(1, ndim):
            if sk[d] != s0[d]:
                raise InvalidArgumentError(
                    _C4.replace("{shape0}", _tail_str(s0, ndim))
                    .replace("{index}", str(k))
                    .replace("{shape}", _tail_str(sk, ndim))
                )
        lengths[k] = sk[0]
    row = 1
    for d in range(1, ndim):
        row *= s0[d]
    shp[0] = lengths.sum()
    shp[1:] = s0[1:ndim]
    out = np.empty(to_fixed_tuple(shp, ndim), s.data.dtype)
    _reserve(s, n)
    src = np.empty(n, np.int64)
    new_state = np.empty(n, np.uint8)
    _, bad = _kernels._plan_reads(idx, s.state, s.offsets, sids, s.items, h[CAR], s.data.size, src, new_state)
    if bad >= 0:
        raise InternalError(_CORRUPT.replace("{name}", s.name).replace("{index}", str(idx[bad])))
    flat = out.reshape(-1)
    o = 0
    for k in range(n):
        z = lengths[k] * row
        if z:
            if src[k] < 0:
                flat[o : o + z] = 0
            else:
                flat[o : o + z] = s.data[src[k] : src[k] + z]
        o += z
    _commit_reads(s, idx, sids, new_state, n, zsid)
    return out


@overload_method(TensorArrayType, "concat")
def _ol_concat(ta):
    ndim = len(ta.field_dict["zshape"])

    def impl(ta):
        return _concat(ta, ndim)

    return impl


@register_jitable
def _split(s, v, lens, numeric, ndim):
    """TF's ``TensorArraySplitV3`` after P1-P4 (T1, negative lengths, P5, T4, T5-T8 in TF's order)."""
    h = s.hdr
    if h[CLOSED]:
        raise InvalidArgumentError(_T1.replace("{name}", s.name))
    n_new = lens.size
    for k in range(n_new):
        if lens[k] < 0:
            raise InvalidArgumentError(
                _SPLIT_NEGATIVE.replace("{name}", s.name)
                .replace("{position}", str(k))
                .replace("{length}", str(lens[k]))
            )
    size = h[SIZE]
    size2 = n_new if (h[DYN] and size < n_new) else size
    if size2 != n_new:
        raise InvalidArgumentError(_P5.replace("{size}", str(size)).replace("{n_lengths}", str(n_new)))
    row = 1
    for d in range(1, ndim):
        row *= v.shape[d]
    es = s.es
    es_known = h[ES_KNOWN] != 0
    es2 = es.copy()
    shape_k = np.empty(ndim, np.int64)
    for d in range(1, ndim):
        shape_k[d] = v.shape[d]
    sids = np.empty(n_new, np.int64)
    add = np.zeros(n_new, np.bool_)
    k_bad = n_new
    if n_new:
        shape_k[0] = lens[0]
        if not _compatible(es, shape_k):
            raise InvalidArgumentError(
                _msg(_T4, s.name, 0)
                .replace("{shape}", _shape_str(shape_k, ndim))
                .replace("{element_shape}", _es_str(s))
            )
        if h[IDENT] and not _fully_defined(es):
            es2[:] = shape_k
            es_known = True
        if es_known:
            tail_ok = True
            for d in range(1, ndim):
                if es2[d] >= 0 and es2[d] != v.shape[d]:
                    tail_ok = False
            if not tail_ok:
                k_bad = 0
            elif es2[0] >= 0:
                for k in range(n_new):
                    if lens[k] != es2[0]:
                        k_bad = k
                        break
        for k in range(n_new):
            shape_k[0] = lens[k]
            sids[k] = _intern(s, shape_k.copy())
        idx = np.arange(n_new)
        keys, seen = _repeat_keys(idx)
        fresh = np.empty(n_new, np.bool_)
        dup = np.empty(n_new, np.bool_)
        p, code, old = _kernels._check_writes(
            idx, s.state, s.shape_id, size, h[ISGRAD], sids, s.items, numeric, keys, seen, add, fresh, dup
        )
        if k_bad < n_new and k_bad <= p:
            shape_k[0] = lens[k_bad]
            es2_str = _partial_str(es2) if es_known else "<unknown>"
            raise InvalidArgumentError(
                _msg(_T4, s.name, k_bad)
                .replace("{shape}", _shape_str(shape_k, ndim))
                .replace("{element_shape}", es2_str)
            )
        if code:
            shape_k[0] = lens[p]
            _raise_write_error(s, code, p, old, shape_k, ndim)
    marked = size2 if not h[ISGRAD] else h[MARKED]
    _reserve(s, size2)
    flat = np.ascontiguousarray(v).reshape(-1)
    o = 0
    for k in range(n_new):
        z = lens[k] * row
        if z:
            if add[k]:
                d0 = s.offsets[k]
                d = s.data[d0 : d0 + z]
                d += flat[o : o + z]
            else:
                d0 = _alloc1(s, k, z)
                s.data[d0 : d0 + z] = flat[o : o + z]
                s.offsets[k] = d0
        else:
            s.offsets[k] = 0
        s.state[k] = _W | _D
        s.shape_id[k] = sids[k]
        o += z
    if add.any():
        h[DISALLOWED] = 1
    h[MARKED] = marked
    h[SIZE] = max(size, size2)
    if es_known:
        _commit_es(s, es2, True)


@overload_method(TensorArrayType, "split")
def _ol_split(ta, value, lengths):
    dtype = ta.field_dict["data"].dtype
    ndim = len(ta.field_dict["zshape"])
    numeric = 1 if dtype != types.boolean else 0
    vdim = value.ndim if isinstance(value, types.Array) else 0

    def impl(ta, value, lengths):
        v = np.asarray(value).astype(dtype)
        lens = np.asarray(lengths).astype(np.int64)
        flat_lens = lens.ravel()
        # the class checks (and merges) the pieces' shape only when all lengths are equal
        same = lens.ndim == 1 and lens.size > 0 and vdim > 0 and np.all(flat_lens == flat_lens[0])
        shape = _shape_array(v.shape)
        if same:
            shape[0] = flat_lens[0]
            if shape[0] < 0:  # the class makes a TensorShape of it first
                raise ValueError(_DIM_NEGATIVE.replace("{dim}", str(shape[0])))
            _class_check(ta, shape, vdim)
        if lens.ndim != 1:
            raise InvalidArgumentError(_P1.replace("{shape}", _shape_str(_shape_array(lens.shape), lens.ndim)))
        if lens.size >= 2147483647:
            raise InvalidArgumentError(_P2)
        if vdim == 0:
            raise InvalidArgumentError(_P3.replace("{shape}", "[]"))
        total = lens.sum()
        if total != v.shape[0]:
            raise InvalidArgumentError(
                _P4.replace("{total}", str(total)).replace("{shape}", _shape_str(_shape_array(v.shape), vdim))
            )
        if vdim != ndim:
            raise NotImplementedError("inside compiled code, elements must have the array's element rank")
        _split(ta, v, flat_lens, numeric, ndim)
        if same:
            _class_merge(ta, shape, vdim)
        return ta

    return impl


# --------------------------------------------------------------------------- creating an array in compiled code
def _dim(d):  # pragma: no cover - replaced by its overload in compiled code
    """Return a dimension of ``element_shape`` as -1 (None: unknown) or itself (compiled code only)."""


@overload(_dim)
def _ol_dim(d):
    if _absent(d):
        return lambda d: -1
    if isinstance(d, types.Integer):

        def impl(d):
            if d < 0:
                raise ValueError(_DIMS_NEGATIVE.replace("{dim}", str(d)))
            return d

        return impl
    raise TypingError(f"element_shape: each dimension must be an int or None inside compiled code, not {d}")


def _flag(x, default):  # pragma: no cover - replaced by its overload in compiled code
    """Return ``bool(x)``, or ``default`` for None (compiled code only)."""


@overload(_flag)
def _ol_flag(x, default):
    if _absent(x):
        return lambda x, default: default
    if isinstance(x, (types.Boolean, types.Integer)):
        return lambda x, default: bool(x)
    raise TypingError(f"expected a bool, got {x}")


def _base_name(tensor_array_name, name):  # pragma: no cover - replaced by its overload in compiled code
    """Return ``tensor_array_name or name or "TensorArray"`` (compiled code only)."""


@overload(_base_name)
def _ol_base_name(tensor_array_name, name):
    given = [not _absent(t) for t in (tensor_array_name, name)]
    for t, g in zip((tensor_array_name, name), given, strict=True):
        if g and not isinstance(t, types.UnicodeType):
            raise TypingError(f"tensor_array_name and name must be str inside compiled code, not {t}")
    a, b = given

    def impl(tensor_array_name, name):
        if a and len(tensor_array_name):
            return tensor_array_name
        if b and len(name):
            return name
        return "TensorArray"

    return impl


def _absent(t):
    """Whether the argument type ``t`` of an overload stands for None (omitted, or passed as None)."""
    return t is None or isinstance(t, (types.NoneType, types.Omitted))


def new_array(dtype, size, dynamic_size, clear_after_read, tensor_array_name, handle, flow, infer_shape,
              element_shape, colocate_with_first_write_call, name):  # fmt: skip
    """Typing of ``numba_ta.TensorArray(...)`` in compiled code: return the implementation (``@overload``)."""
    from ._dtypes import as_dtype as ta_dtype

    if isinstance(dtype, types.NumberClass):
        nb = dtype.instance_type
    elif isinstance(dtype, types.DType):
        nb = dtype.dtype
    else:
        raise TypingError(
            f"TensorArray in compiled code: dtype must be a numpy scalar type or dtype (np.float32, "
            f"np.dtype('float32')), not {dtype}"
        )
    np_dtype = ta_dtype(as_dtype(nb))
    for arg, value in (("handle", handle), ("flow", flow)):
        if not _absent(value):
            raise TypingError(f"TensorArray in compiled code: `{arg}` is not supported there (create it in Python)")
    if not isinstance(element_shape, types.BaseTuple):
        raise TypingError(
            "TensorArray in compiled code needs element_shape as a tuple (its length, the element rank, must be "
            f"known when the function compiles; None for an unknown dimension), not {element_shape}"
        )
    ndim = len(element_shape)
    homogeneous = isinstance(element_shape, types.UniTuple)
    if _absent(size):
        has_size = False
    elif isinstance(size, types.Integer):
        has_size = True
    else:
        raise TypingError(f"TensorArray in compiled code: size must be an int, not {size}")
    ta_type = array_type(np_dtype, ndim)
    scalar = np_dtype.type
    zshape = (0,) * ndim

    def impl(dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None, handle=None,
             flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
             name=None):  # fmt: skip
        if not has_size:
            raise ValueError(_NO_SIZE)
        es = np.empty(ndim, np.int64)
        if ndim:
            k = 0
            if homogeneous:
                for d in element_shape:
                    es[k] = _dim(d)
                    k += 1
            else:
                for d in literal_unroll(element_shape):
                    es[k] = _dim(d)
                    k += 1
        n = np.int64(size)
        if n < 0:
            raise InvalidArgumentError(_SIZE_NEGATIVE)
        dyn = _flag(dynamic_size, False)
        car = _flag(clear_after_read, True)
        infer = _flag(infer_shape, True)
        base = _base_name(tensor_array_name, name)
        with objmode(uname="unicode_type"):
            uname = _registry.new_name(base)
        s = structref.new(ta_type)
        s.data = np.empty(0, scalar)
        s.state = np.zeros(n, np.uint8)
        s.shape_id = np.zeros(n, np.int32)
        s.offsets = np.zeros(n, np.int64)
        h = np.zeros(NHDR, np.int64)
        h[SIZE] = n
        h[CAP] = n
        h[LAYOUT] = _NONE
        h[DYN] = dyn
        h[CAR] = car
        h[IDENT] = infer  # the class creates its arrays with identical_element_shapes=infer_shape
        h[CLASS_KNOWN] = 1
        h[INFER] = infer
        h[FASTSID] = -1
        h[ES_KNOWN] = 1
        h[MARKED] = -1
        s.hdr = h
        s.shapes = np.zeros((0, ndim), np.int64)
        s.items = np.zeros(0, np.int64)
        s.es = es
        s.ces = es.copy()
        s.zshape = zshape
        s.name = uname
        return s

    return impl
