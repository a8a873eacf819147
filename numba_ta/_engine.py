"""The storage engine: one array's state as a Numba struct, and the element state machine over it.

An array's state is a ``numba.experimental.structref`` (:func:`state_type`: one
type for arrays of every dtype; users' compiled code sees the same struct as
``numba_ta._jit.TensorArrayType``, same fields, one type per dtype and element
rank) with these fields:

``data``, ``state``, ``shape_id``, ``offsets``
    The flat element buffer and the per-element metadata (state bits, interned
    shape id, data offset), laid out as :mod:`numba_ta._storage` describes,
    except that ``data`` holds the items' bytes (``Storage.data`` is a view of
    it as the array's dtype): offsets, sizes and the layout's width count
    items, ``hdr[ITEMSIZE]`` bytes each.  So the state machine is compiled once,
    not once per dtype (its first compilation takes most of a minute); only a
    gradient sum looks at the items' type (:func:`_add`, by ``hdr[DTYPE]``).
    Values come in and results go out as bytes too: callers view them as
    their dtype.
``hdr``
    The scalars (size, capacity, layout, flags, dtype...), one int64 array
    indexed by the constants below (:func:`header` makes one).
``dims``, ``starts``, ``items``
    The interned element shapes, of any rank: shape ``sid`` is
    ``dims[starts[sid]:starts[sid + 1]]`` and holds ``items[sid]`` items
    (``hdr[NSHAPES]`` of them; the arrays have spare room).
``es``
    The array's element shape (TF's ``element_shape_``): its dimensions, -1 for
    an unknown one, when ``hdr[ES_KNOWN]``; its rank is unknown otherwise.
``ces``
    The class's element shape (``TensorArray.element_shape``), when
    ``hdr[CLASS_KNOWN]``: what the class's ops check and merge.
``name``
    The array's name (for the messages).
``err``
    The status record of the last op that failed (scratch, not state: see below).

Nothing in the layout depends on the element rank, so one struct holds any
array, elements of several ranks included.  The functions below implement
TensorFlow's ops on it (``TensorArrayV3``'s write, read, gather, scatter,
concat and split, with the checks in TF's order).  They do not raise: an op
that fails returns a status, the position of its error's message code in
``_messages.ENGINE_CODES`` (0: it did not fail), and leaves the error's fields
(indices, sizes, shapes) in the struct's ``err`` buffer (:func:`_fail`); the
Python layer and the methods compiled into users' code turn it into TF's
exception (:func:`raise_status`, ``_messages.engine_error``, where every text
lives).  Building each message's text at each of its sites in compiled code
cost more than a quarter of the engine's compile time.  They are rank- and dtype-generic:
values come in as flat bytes with their shape as an int64 array, results go
out as flat bytes with theirs.
Every op checks everything first and plans what it would intern; it changes
the state only when nothing can fail any more, so a failed op leaves the
array as it was and interns nothing.  Changes that replace a field (growth,
an interned shape, a new element shape) bump ``hdr[GEN]``.

They are compiled into the entries at the end of this module (``register_jitable``
bodies), never into users' code: the ``py_*`` entries, through which the Python
layer (:class:`numba_ta._storage.Storage`, which holds the struct as its one
state) runs every op but its two fast paths, and the ``jit_*`` entries, which
the methods of a TensorArray inside users' ``@njit`` functions
(:mod:`numba_ta._jit`) call by symbol name (:mod:`numba_ta._abi`).  Each entry
is one compiled function for arrays of every dtype and rank, cached on disk
and shipped by ``pip install .``.
"""

from __future__ import annotations

import math
import sys

import numpy as np
from llvmlite import ir
from numba import objmode, types
from numba.core import cgutils, config
from numba.core.extending import intrinsic, overload, register_jitable
from numba.experimental import structref

from . import _kernels, _registry
from ._dtypes import tf_name
from ._messages import ENGINE_CODES, MESSAGES, engine_error
from .errors import InternalError, InvalidArgumentError, OpError, ResourceExhaustedError, UnimplementedError

# hdr: the array's scalars
SIZE, CAP, USED, WIDTH, LAYOUT, DYN, CAR, IDENT, ISGRAD, CLOSED, DISALLOWED = range(11)
NSHAPES = 11  # interned shapes
GEN = 12  # bumped when a field is replaced (growth, an interned shape, a new element shape)
CLASS_KNOWN, INFER = 13, 14  # the class's element shape (ces) is known; the class infers shapes
FASTSID = 15  # the write fast path: shape id of the last dense write (-1: none since entering)
ES_KNOWN, ES_CHANGED = 16, 17  # the array's element shape has a known rank; an op changed it
MARKED = 18  # the marked size (a split's element count; a gradient array's concat uses its forward's)
CES_CHANGED = 19  # an op changed the class's element shape
ITEMSIZE = 20  # bytes per item of the array's dtype (data holds the items' bytes)
DTYPE = 21  # the array's dtype, as its position in DTYPES (float16 sums convert: Numba has no float16)
SLACK, FACTOR = 22, 23  # the memory policy (see _dense_rows), set when the array is made
PARMIN = 24  # items a bulk copy must move to run in parallel (numba_ta.set_parallel_threshold; set by callers)
NHDR = 25

# The dtypes an array can have; ``hdr[DTYPE]`` is a position in this tuple.  ``data`` holds the
# elements' bytes whatever the dtype, so the struct has one Numba type and the state machine
# compiles once for all dtypes; only a gradient sum looks at the items' type (``_add``).
DTYPES = tuple(
    np.dtype(t)
    for t in (
        np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
        np.float16, np.float32, np.float64, np.complex64, np.complex128,
    )
)  # fmt: skip
_DTYPE_NAMES = tuple(tf_name(t) for t in DTYPES)
_F16_CODE = DTYPES.index(np.dtype(np.float16))  # sums convert each item (Numba has no float16)
_SUM_BATCH = 256  # elements from which a scatter's or split's sums take one kernel call (object mode: ~10 us)

_W, _R, _C, _D = 1, 2, 4, 8
_ND = 0xFF ^ _D  # clears the data bit of a uint8 state (~_D is negative: numpy refuses it for uint8)
_NONE, _DENSE, _RAGGED = 0, 1, 2  # hdr[LAYOUT]: no buffer yet, dense rows, ragged runs

# statuses: an op returns 0, or the status of its error (its position in ENGINE_CODES), having
# left the error's fields in the struct's ``err`` buffer (_fail); _messages.engine_error builds the exception
_ST = {c: k for k, c in enumerate(ENGINE_CODES)}
_T1, _T2, _T4, _T5, _T6, _T7, _T8, _T9, _T10, _T11 = (_ST[c] for c in ("T1", "T2", "T4", "T5", "T6", "T7", "T8", "T9", "T10", "T11"))  # noqa: E501  # fmt: skip
_G3, _G4, _G5, _S3, _S4, _C1, _C2, _C3, _C4, _P5, _K7 = (_ST[c] for c in ("G3", "G4", "G5", "S3", "S4", "C1", "C2", "C3", "C4", "P5", "K7"))  # noqa: E501  # fmt: skip
_SPLIT_NEGATIVE, _SPLIT_INT64, _CONCAT_UNSPLIT, _CORRUPT = (
    _ST[c] for c in ("NT-split-negative", "NT-split-int64", "NT-concat-unsplit", "NT-corrupt")
)
_MERGE_RANK, _MERGE_SHAPE, _SHAPE_INT64, _PREPEND_INT64, _OOM, _RANK = (
    _ST[c] for c in ("NT-merge-rank", "NT-merge-shape", "NT-shape-int64", "NT-prepend-int64", "NT-oom", "NT-jit-rank")
)
_INT64_MAX = 2**63 - 1
_U16, _U32, _U64 = np.zeros(0, np.uint16), np.zeros(0, np.uint32), np.zeros(0, np.uint64)  # item types for _cast
_NO_I64 = np.zeros(0, np.int64)
_ERR_WORDS = 16  # a new array's err buffer (longer records replace it)


# --------------------------------------------------------------------------- the state type
@structref.register
class StateType(types.StructRef):
    """The state struct's Numba type, as the Python layer holds it (boxed as a :class:`StateProxy`)."""

    def preprocess_fields(self, fields):
        return tuple((n, types.unliteral(t)) for n, t in fields)


class StateProxy(structref.StructRefProxy):
    """A Python reference to a state struct (held by the Python layer; never seen by users)."""


FIELDS = ("data", "state", "shape_id", "offsets", "hdr", "dims", "starts", "items", "es", "ces", "name", "err")
structref.define_proxy(StateProxy, StateType, list(FIELDS))


def fields():
    """Return the struct's fields (the same for every dtype: ``data`` holds the items' bytes)."""
    return [
        ("data", types.uint8[::1]),
        ("state", types.uint8[::1]),
        ("shape_id", types.int32[::1]),
        ("offsets", types.int64[::1]),
        ("hdr", types.int64[::1]),
        ("dims", types.int64[::1]),
        ("starts", types.int64[::1]),
        ("items", types.int64[::1]),
        ("es", types.int64[::1]),
        ("ces", types.int64[::1]),
        ("name", types.unicode_type),
        ("err", types.int64[::1]),
    ]


_STATE_TYPE = StateType(fields())


def state_type():
    """Return the struct type (one for arrays of every dtype)."""
    return _STATE_TYPE


def dtype_code(dtype):
    """Return ``hdr[DTYPE]`` for arrays of ``dtype`` (its position in :data:`DTYPES`)."""
    return DTYPES.index(np.dtype(dtype))


def header(dtype, slack=64 << 20, factor=2, parmin=1 << 22):
    """Return a new ``hdr`` for an array of ``dtype``: zeros, with its dtype, item size and policies set."""
    dt = np.dtype(dtype)
    h = np.zeros(NHDR, np.int64)
    h[ITEMSIZE] = dt.itemsize
    h[DTYPE] = dtype_code(dt)
    h[SLACK] = slack
    h[FACTOR] = factor
    h[PARMIN] = parmin
    return h


# --------------------------------------------------------------------------- borrowed pointers
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


@intrinsic
def _move(typingctx, dst, d0, src, s0, n):
    """Copy the bytes ``src[s0 : s0 + n]`` to ``dst[d0 : d0 + n]`` (uint8 arrays; one ``memmove``, no bounds check).

    Numba compiles a slice assignment of bytes to a byte loop; the engine moves
    its elements with this instead (the callers check the bounds).
    """
    sig = types.void(dst, d0, src, s0, n)

    def codegen(context, builder, sig, args):
        da = context.make_array(sig.args[0])(context, builder, value=args[0])
        sa = context.make_array(sig.args[2])(context, builder, value=args[2])
        off = [context.cast(builder, args[k], sig.args[k], types.intp) for k in (1, 3, 4)]
        dp = builder.gep(da.data, [off[0]])
        sp = builder.gep(sa.data, [off[1]])
        cgutils.raw_memmove(builder, dp, sp, off[2], 1)
        return context.get_dummy_value()

    return sig, codegen


# numpy asks Linux for transparent huge pages on every allocation of 4 MiB or more
# (madvise(MADV_HUGEPAGE) past the first page boundary); Numba's allocator does not.  A 64 MiB
# result filled in 4 KiB page faults took 2.5 to 3 times numpy's time for the same copy:
# the engine's large buffers get the same advice as numpy's.
_HUGE_PAGE_MIN = 1 << 22
_MADV_HUGEPAGE = 14
_PAGE = 4096


@intrinsic
def _madvise_huge(typingctx, a):
    """Advise Linux to back the array ``a``'s bytes past its first page boundary with huge pages (numpy's rule)."""
    sig = types.void(a)

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, value=args[0])
        intp = context.get_value_type(types.intp)
        isz = context.get_abi_sizeof(context.get_data_type(sig.args[0].dtype))
        nbytes = builder.mul(ary.nitems, ir.Constant(intp, isz))
        p = builder.ptrtoint(ary.data, intp)
        page = ir.Constant(intp, _PAGE)
        skip = builder.sub(page, builder.urem(p, page))
        fnty = ir.FunctionType(ir.IntType(32), [cgutils.voidptr_t, intp, ir.IntType(32)])
        madvise = cgutils.get_or_insert_function(builder.module, fnty, "madvise")
        start = builder.inttoptr(builder.add(p, skip), cgutils.voidptr_t)
        builder.call(madvise, [start, builder.sub(nbytes, skip), ir.Constant(ir.IntType(32), _MADV_HUGEPAGE)])
        return context.get_dummy_value()

    return sig, codegen


if not sys.platform.startswith("linux"):  # MADV_HUGEPAGE is Linux's

    @register_jitable
    def _advise(a):
        """Return ``a`` (huge-page advice is Linux's)."""
        return a

else:

    @register_jitable
    def _advise(a):
        """Return ``a``, its bytes advised to huge pages when it holds 4 MiB or more (as numpy does its own)."""
        if a.nbytes >= _HUGE_PAGE_MIN:
            _madvise_huge(a)
        return a


@register_jitable
def _alloc(n, dtype, zeros):
    """Return ``n`` items of ``dtype``, zeroed with ``zeros``; a large one advised to huge pages (:func:`_advise`).

    Numba's ``np.zeros`` writes every byte as well; zeroing after the advice takes the huge pages.
    """
    a = _advise(np.empty(n, dtype))
    if zeros:
        a[:] = 0
    return a


@intrinsic
def _cast(typingctx, p, like):
    """Return the byte pointer ``p`` as a pointer to items of the array ``like``'s dtype (same address)."""
    sig = types.CPointer(like.dtype)(p, like)

    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], context.get_value_type(sig.return_type))

    return sig, codegen


if getattr(config, "DISABLE_JIT", False):  # the engine runs as Python: a plain struct, arrays for pointers

    class _PyState:
        """The state struct when Numba's JIT is disabled: the same fields, as attributes."""

        __slots__ = FIELDS

        def __init__(self, *values):
            for name, value in zip(FIELDS, values, strict=True):
                setattr(self, name, value)

    def new_state(data, state, shape_id, offsets, hdr, dims, starts, items, es, ces, name):
        """Return a new state struct holding the given fields (in :data:`FIELDS` order) and an empty ``err``."""
        err = np.zeros(_ERR_WORDS, np.int64)
        return _PyState(data, state, shape_id, offsets, hdr, dims, starts, items, es, ces, name, err)

    def _buf(s, field):  # type: ignore[misc]  # noqa: F811 - the intrinsics' stand-ins
        a = getattr(s, field)
        return a, a.size

    def _ptr(a):  # type: ignore[misc]  # noqa: F811
        return a.reshape(-1)

    def _cast(p, like):  # type: ignore[misc]  # noqa: F811
        return p.view(like.dtype)

    def _move(dst, d0, src, s0, n):  # type: ignore[misc]  # noqa: F811
        dst[d0 : d0 + n] = src[s0 : s0 + n]

    def _advise(a):  # noqa: F811 - numpy advises its own allocations
        return a

    def _alloc(n, dtype, zeros):  # noqa: F811 - numpy's zeros map zeroed pages lazily
        return (np.zeros if zeros else np.empty)(n, dtype)

else:

    # a dispatcher types its arguments in C; StateProxy(...) from Python would type them in Python (~100 us)
    @_kernels._kernel()
    def new_state(data, state, shape_id, offsets, hdr, dims, starts, items, es, ces, name):
        """Return a new state struct holding the given fields (in :data:`FIELDS` order) and an empty ``err``."""
        err = np.zeros(_ERR_WORDS, np.int64)
        return StateProxy(data, state, shape_id, offsets, hdr, dims, starts, items, es, ces, name, err)


@_kernels._kernel()
def fields_of(s):
    """Return the struct's fields, in :data:`FIELDS` order (its buffers are shared, not copied)."""
    return s.data, s.state, s.shape_id, s.offsets, s.hdr, s.dims, s.starts, s.items, s.es, s.ces, s.name, s.err


# --------------------------------------------------------------------------- statuses
@register_jitable
def _fail(s, st, i0, i1, i2, a, na, b, nb):
    """Record error ``st`` in ``s.err``: ``[st, i0, i1, i2, na, nb, *a[:na], *b[:nb]]``; return ``st``.

    ``a`` and ``b`` are shapes (int64 arrays, -1 for an unknown dimension), ``na`` and ``nb``
    how many of their dimensions count (-1: an unknown rank).  Which fields an error has is
    ``_messages``' business (``engine_error``).
    """
    ka = max(na, 0)
    n = 6 + ka + max(nb, 0)
    if s.err.size < n:
        s.err = np.zeros(max(n, _ERR_WORDS), np.int64)
    e = s.err
    e[0] = st
    e[1] = i0
    e[2] = i1
    e[3] = i2
    e[4] = na
    e[5] = nb
    for k in range(ka):
        e[6 + k] = a[k]
    for k in range(nb):
        e[6 + ka + k] = b[k]
    return st


@register_jitable
def _no_dims():
    """Return the shape ``[0]``: what a failed op returns for its result's shape (its flat result is empty).

    So a Python caller can take the result (reshape the empty bytes) on the line of the
    call, before it looks at the status (see ``_storage``'s atomicity rule).
    """
    return np.zeros(1, np.int64)


@register_jitable
def _fail_i(s, st, i0=0, i1=0, i2=0):
    """:func:`_fail` for an error whose fields are integers only."""
    return _fail(s, st, i0, i1, i2, _NO_I64, 0, _NO_I64, 0)


@register_jitable
def _fail_s(s, st, i0, a, na, b, nb):
    """:func:`_fail` for an error with shapes (and at most one integer)."""
    return _fail(s, st, i0, 0, 0, a, na, b, nb)


def _status_exception(err, name):
    """Return ``(class, text)`` of the status record ``err`` (Python, called from compiled code in object mode).

    ``class``: 0 InvalidArgumentError, 1 UnimplementedError, 2 ResourceExhaustedError,
    3 InternalError, 4 NotImplementedError.
    """
    e = engine_error(err, name, _DTYPE_NAMES)
    cls = _RAISED.index(type(e))
    return cls, e.message if isinstance(e, OpError) else str(e)


_RAISED = (InvalidArgumentError, UnimplementedError, ResourceExhaustedError, InternalError, NotImplementedError)


@register_jitable
def raise_status(s, st):
    """Raise the exception of the status ``st`` (not 0) that an op on ``s`` returned, as compiled code can.

    For the methods compiled into users' functions: the text is built in Python, in one
    place (``_messages.engine_error``), and raised here with its class.
    """
    err = s.err[: 6 + max(s.err[4], 0) + max(s.err[5], 0)].copy()
    name = s.name
    with objmode(cls="int64", text="unicode_type"):
        cls, text = _status_exception(err, name)
    if cls == 1:
        raise UnimplementedError(text)
    if cls == 2:
        raise ResourceExhaustedError(text)
    if cls == 3:
        raise InternalError(text)
    if cls == 4:
        raise NotImplementedError(text)
    raise InvalidArgumentError(text)


def error_of(s):
    """Return the exception of the status record an op on ``s`` left (Python callers: ``raise E.error_of(s)``)."""
    f = fields_of(s)
    return engine_error(f[11], f[10], _DTYPE_NAMES)


# --------------------------------------------------------------------------- shapes
@register_jitable
def _fully_defined(es):
    for k in range(es.size):
        if es[k] < 0:
            return False
    return True


@register_jitable
def _compatible(p, shape):
    """Whether the concrete ``shape`` (int64 array) is compatible with the partial ``p`` of known rank."""
    if p.size != shape.size:
        return False
    for k in range(p.size):
        if p[k] >= 0 and p[k] != shape[k]:
            return False
    return True


@register_jitable
def _es_compatible(s, shape):
    """Whether ``shape`` is compatible with the array's element shape (always, when its rank is unknown)."""
    return not s.hdr[ES_KNOWN] or _compatible(s.es, shape)


@register_jitable
def _same(a, b):
    if a.size != b.size:
        return False
    for k in range(a.size):
        if a[k] != b[k]:
            return False
    return True


def shape_array(shape):
    """Return the tuple ``shape`` as an int64 array (compiled: the overload below)."""
    return np.array(shape, dtype=np.int64).reshape(len(shape))


@overload(shape_array)
def _ol_shape_array(shape):
    n = len(shape)
    if n == 0:  # () has no items to index: typed apart
        return lambda shape: np.zeros(0, np.int64)

    def impl(shape):
        a = np.empty(n, np.int64)
        for k in range(n):
            a[k] = shape[k]
        return a

    return impl


@register_jitable
def _shape(s, sid):
    """Return the interned shape ``sid`` (a view of ``dims``)."""
    return s.dims[s.starts[sid] : s.starts[sid + 1]]


@register_jitable
def _find_shape(s, shape):
    """Return the id of the interned ``shape`` (an int64 array), or -1; the last interned is found first."""
    n = s.hdr[NSHAPES]
    r = shape.size
    starts, dims = s.starts, s.dims  # (no field reads in the loops: a reference count each)
    for j in range(n):
        sid = n - 1 - j
        a = starts[sid]
        if starts[sid + 1] - a != r:
            continue
        same = True
        for k in range(r):
            if dims[a + k] != shape[k]:
                same = False
                break
        if same:
            return sid
    return -1


@register_jitable
def _items_of(shape):
    """Return the number of items of ``shape`` (an int64 array of non-negative dimensions), or -1 past 2**63 - 1."""
    p = 1
    for k in range(shape.size):
        if shape[k] == 0:
            return 0
    for k in range(shape.size):
        if shape[k] > _INT64_MAX // p:
            return -1
        p *= shape[k]
    return p


@register_jitable
def _nitems(s):
    """Return the number of items the data buffer has room for."""
    return s.data.size // s.hdr[ITEMSIZE]


@register_jitable
def _numpy_fits(shape, isz):
    """Return whether numpy can make an array of ``shape``: ``isz`` times its nonzero dimensions fit an int64.

    numpy refuses a larger one ("array is too big") even when a zero dimension leaves it empty.
    """
    n = isz
    for d in shape:
        if d:
            if n > _INT64_MAX // d:
                return False
            n *= d
    return True


@register_jitable
def _new_items(s, n, zeros, shape):
    """``(status, bytes)``: room for ``n`` items of the array's dtype (zeroed with ``zeros``); TF's OOM for ``shape``.

    ``n`` < 0 means more than 2**63 - 1 items.  Also refused: a ``shape`` numpy cannot make.
    """
    isz = s.hdr[ITEMSIZE]
    if not _numpy_fits(shape, isz):
        n = -1
    return _new(s, n * isz if 0 <= n <= _INT64_MAX // isz else -1, s.data, zeros, shape, s.hdr[DTYPE])


@register_jitable
def _oom(s, shape, dtype):
    """Record TF's allocator error for a tensor of ``shape`` (an int64 array) and ``DTYPES[dtype]``; its status."""
    return _fail(s, _OOM, dtype, 0, 0, shape, shape.size, _NO_I64, 0)


@register_jitable
def _new(s, n, like, zeros, shape, dtype):
    """``(status, array)``: ``n`` items of ``like``'s dtype (zeroed with ``zeros``), or TF's OOM error for ``shape``.

    ``n`` < 0 means more than 2**63 - 1 items.  A request of more bytes than an
    int64 holds fails before any allocation.  The error names ``DTYPES[dtype]``.
    """
    a = like[:0].copy()
    if n < 0 or n > _INT64_MAX // like.itemsize:
        return _oom(s, shape, dtype), a
    ok = True
    try:
        a = _alloc(n, like.dtype, zeros)
    except Exception:  # noqa: BLE001 - MemoryError (or numpy's ValueError, as Python): TF's error instead
        ok = False
    if not ok:
        return _oom(s, shape, dtype), a
    return 0, a


@register_jitable
def _one(n):
    """Return the shape ``[n]`` as an int64 array."""
    a = np.empty(1, np.int64)
    a[0] = n
    return a


@register_jitable
def _intern(s, shape):
    """Return the id of ``shape`` (an int64 array), interning it (at the commit of an op that cannot fail)."""
    sid = _find_shape(s, shape)
    if sid >= 0:
        return sid
    h = s.hdr
    n = h[NSHAPES]
    top = s.starts[n]
    r = shape.size
    if n + 2 > s.starts.size:
        cap = max(4, 2 * n + 2)
        starts = np.zeros(cap, np.int64)
        items = np.zeros(cap, np.int64)
        starts[: n + 1] = s.starts[: n + 1]
        items[:n] = s.items[:n]
        s.starts = starts
        s.items = items
    if top + r > s.dims.size:
        dims = np.zeros(max(8, 2 * (top + r)), np.int64)
        dims[:top] = s.dims[:top]
        s.dims = dims
    s.dims[top : top + r] = shape
    s.starts[n + 1] = top + r
    s.items[n] = _items_of(shape)
    h[NSHAPES] = n + 1
    h[GEN] += 1
    return n


@register_jitable
def _set_es(s, shape):
    """Set the array's element shape to ``shape`` (an int64 array, copied)."""
    s.es = shape.copy()
    h = s.hdr
    h[ES_KNOWN] = 1
    h[ES_CHANGED] = 1
    h[GEN] += 1
    h[FASTSID] = -1  # the fast write path relies on the element shape it was enabled under


@register_jitable
def _commit_es(s, es, known):
    """Store the element shape ``es`` (known: its rank is known) when it differs from the array's."""
    if known and (not s.hdr[ES_KNOWN] or not _same(es, s.es)):
        _set_es(s, es)


@register_jitable
def _merge(s, attr, attr_known):
    """TF's ``element_shape_.MergeWith(attr)`` (NT-merge-rank, NT-merge-shape); return ``(status, merged, known)``."""
    known = s.hdr[ES_KNOWN] != 0
    if not attr_known:
        return 0, s.es.copy(), known
    if not known:
        return 0, attr.copy(), True
    if s.es.size != attr.size:
        return _fail_i(s, _MERGE_RANK, s.es.size, attr.size), s.es, True
    es = s.es.copy()
    for k in range(es.size):
        a = attr[k]
        if es[k] >= 0 and a >= 0 and es[k] != a:
            return _fail_s(s, _MERGE_SHAPE, 0, s.es, s.es.size, attr, attr.size), es, True
        if es[k] < 0:
            es[k] = a
    return 0, es, True


@register_jitable
def _plan_shape(s, shape, items):
    """``(status, sid, items)``: the id ``shape`` has or will have once interned, and the items table to plan with."""
    sid = _find_shape(s, shape)
    if sid >= 0:
        return 0, sid, items
    n = _items_of(shape)
    if n < 0:
        return _fail_s(s, _SHAPE_INT64, 0, shape, shape.size, _NO_I64, 0), -1, items
    ext = np.empty(items.size + 1, np.int64)  # items covers the interned shapes: the new one comes next
    ext[: items.size] = items
    ext[items.size] = n
    return 0, items.size, ext


@register_jitable
def _check_rank(s, index, rank, want):
    """NT-jit-rank (NotImplementedError) when a compiled caller of element rank ``want`` (>= 0) gets another rank."""
    if want >= 0 and rank != want:
        return _fail_i(s, _RANK, want, index, rank)
    return 0


# --------------------------------------------------------------------------- room
def _zeros_meta(n):
    """Return ``(state, shape_id, offsets, failed)``: zeroed metadata for ``n`` slots, or the dtype that did not fit.

    ``failed`` is that dtype's position in :data:`DTYPES`, or -1.

    Python (called from compiled code in object mode): numpy's zeros take zeroed pages from
    the OS lazily, so metadata for a large capacity costs no memory until its slots are used
    (Numba's ``np.zeros`` would write every byte).
    """
    out = []
    for t in (np.uint8, np.int32, np.int64):
        try:
            out.append(np.zeros(n, t))
        except (MemoryError, ValueError):  # ValueError: more items than an intp holds
            return _NO_U8, _NO_I32, _NO_I64, dtype_code(t)
    return out[0], out[1], out[2], -1


_NO_U8, _NO_I32 = np.zeros(0, np.uint8), np.zeros(0, np.int32)
_U8_CODE, _I32_CODE, _I64_CODE = (DTYPES.index(np.dtype(t)) for t in (np.uint8, np.int32, np.int64))
_META_LAZY = 1 << 16  # slots from which metadata growth takes numpy's lazily zeroed pages (832 KiB)


@register_jitable
def _new_meta(s, n):
    """``(status, state, shape_id, offsets)``: zeroed metadata for ``n`` slots (TF's OOM error, recorded in ``s``)."""
    if n < _META_LAZY:  # small: zeroed here (a call into Python costs more than the zeroing)
        shape = _one(n)
        st, state = _new(s, n, _NO_U8, True, shape, _U8_CODE)
        shape_id = _NO_I32.copy()  # (a global array is read-only in compiled code)
        offsets = _NO_I64.copy()
        if not st:
            st, shape_id = _new(s, n, _NO_I32, True, shape, _I32_CODE)
        if not st:
            st, offsets = _new(s, n, _NO_I64, True, shape, _I64_CODE)
        return st, state, shape_id, offsets
    with objmode(state="uint8[::1]", shape_id="int32[::1]", offsets="int64[::1]", failed="int64"):
        state, shape_id, offsets, failed = _zeros_meta(n)
    if failed >= 0:
        return _oom(s, _one(n), failed), state, shape_id, offsets
    return 0, state, shape_id, offsets


@register_jitable
def _reserve(s, n):
    """Room for ``n`` slots in the metadata (geometric growth; new slots unwritten); return the status."""
    h = s.hdr
    cap = h[CAP]
    if n <= cap:
        return 0
    newcap = max(n, 2 * cap, 8)
    m = min(cap, s.state.size)
    st, state, shape_id, offsets = _new_meta(s, newcap)
    if st:
        return st
    state[:m] = s.state[:m]
    shape_id[:m] = s.shape_id[:m]
    offsets[:m] = s.offsets[:m]
    s.state = state
    s.shape_id = shape_id
    s.offsets = offsets
    h[CAP] = newcap
    h[GEN] += 1
    return 0


@register_jitable
def _dense_rows(s, w, top, n_new):
    """Return the rows of ``w`` items the dense buffer should cover so that slots below ``top`` have rows.

    The memory policy.  0 means: do not lay these out dense (the array turns, or starts,
    ragged).  ``n_new`` elements are about to get rows.  The buffer may cover all ``CAP``
    rows, or double, or cover ``top`` rows, whichever is first within the budget: the larger
    of ``hdr[SLACK]`` bytes and ``hdr[FACTOR]`` times the bytes of the elements stored once
    they are written.  The rule is monotone in ``top``.  Changes nothing.
    """
    if w == 0:
        return top
    h = s.hdr
    have = _nitems(s) // w if h[LAYOUT] == _DENSE else 0
    if top <= have:
        return have
    stored = n_new
    if have:
        state = s.state  # a field read in the loop would cost a reference count per element
        for i in range(h[SIZE]):
            if state[i] & _D:
                stored += 1
    row_bytes = w * h[ITEMSIZE]
    budget = max(h[SLACK], h[FACTOR] * stored * row_bytes)
    for rows in (max(h[CAP], top), max(top, 2 * have), top):
        if rows * row_bytes <= budget:
            return rows
    return 0


@register_jitable
def _grow_data(s, items, keep):
    """Room for ``items`` items in the data buffer (the first ``keep`` kept); return the status."""
    if items <= _nitems(s):
        return 0
    isz = s.hdr[ITEMSIZE]
    st, data = _new_items(s, items, False, _one(items))
    if st:
        return st
    _move(data, 0, s.data, 0, keep * isz)
    s.data = data
    s.hdr[GEN] += 1
    return 0


@register_jitable
def _alloc1(s, index, items, top, n_new, total):
    """``(status, offset)`` of new room for ``items`` items of element ``index`` (``Storage._alloc``, one slot).

    ``top``, ``n_new`` and ``total`` describe the whole op (highest slot + 1, elements
    that get room, their items): the first allocation chooses the layout for all of them.
    """
    h = s.hdr
    if h[LAYOUT] == _NONE:
        rows = _dense_rows(s, items, top, n_new)
        if rows:
            shape = np.empty(2, np.int64)
            shape[0] = rows
            shape[1] = items
            st, data = _new_items(s, rows * items if rows <= _INT64_MAX // items else -1, False, shape)
            if st:
                return st, 0
            s.data = data
            h[LAYOUT] = _DENSE
            h[WIDTH] = items
        else:
            st, data = _new_items(s, total, False, _one(total))
            if st:
                return st, 0
            s.data = data
            h[LAYOUT] = _RAGGED
            h[USED] = 0
        h[GEN] += 1
    if h[LAYOUT] == _DENSE:
        w = h[WIDTH]
        if items == w:
            if top * w > _nitems(s):
                rows = _dense_rows(s, w, top, n_new)
                if rows:
                    st = _grow_data(s, rows * w, _nitems(s))
                    if st:
                        return st, 0
            if top * w <= _nitems(s):
                return 0, index * w
        h[LAYOUT] = _RAGGED
        h[USED] = _nitems(s)
        h[GEN] += 1  # the Python layer's fast paths rely on the dense layout
    need = h[USED] + items
    if need > _nitems(s):
        st = _grow_data(s, max(need, 2 * _nitems(s)), h[USED])
        if st:
            return st, 0
    o = h[USED]
    h[USED] = need
    return 0, o


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
    e = int(math.floor(math.log2(a)))
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
def _add(dst, src, code):
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


# --------------------------------------------------------------------------- write / read
@register_jitable
def write(s, index, flat, shape, numeric):
    """TF's ``LockedWriteOrAggregate`` (T1, T2, T4 to T8 in order; sums in gradient arrays); return the status.

    ``flat`` is the value's items (1-d, C order) and ``shape`` its shape.
    """
    h = s.hdr
    if h[CLOSED]:
        return _fail_i(s, _T1)
    n = h[SIZE]
    if index < 0 or (index >= n and not h[DYN]):
        return _fail_i(s, _T2, index, n)
    r = shape.size
    if not _es_compatible(s, shape):
        return _fail_s(s, _T4, index, shape, r, s.es, s.es.size if h[ES_KNOWN] else -1)
    bits = s.state[index] if index < n else 0
    add = False
    if bits:
        if bits & _R:
            return _fail_i(s, _T5, index)
        if not h[ISGRAD]:
            return _fail_i(s, _T6, index)
        old = _shape(s, s.shape_id[index])
        if not _same(old, shape):
            return _fail_s(s, _T7, index, old, old.size, shape, r)
        add = (bits & _D) != 0 and flat.size > 0
        if add and not numeric:
            return _fail_i(s, _T8, h[DTYPE])
    ident_es = h[IDENT] and not (h[ES_KNOWN] and _fully_defined(s.es))
    isz = h[ITEMSIZE]
    if add:
        o = s.offsets[index] * isz
        _add(s.data[o : o + flat.size], flat, h[DTYPE])
        h[DISALLOWED] = 1
        if ident_es:
            _set_es(s, shape)
        return 0
    if index >= n:
        st = _reserve(s, index + 1)
        if st:
            return st
    items = flat.size // isz
    o = 0
    if items:
        st, o = _alloc1(s, index, items, index + 1, 1, items)
        if st:
            return st
        _move(s.data, o * isz, flat, 0, flat.size)
    sid = s.shape_id[index] if bits else _intern(s, shape)
    s.offsets[index] = o
    s.shape_id[index] = sid
    s.state[index] = _W | _D
    if index + 1 > n:
        h[SIZE] = index + 1
    if ident_es:
        _set_es(s, shape)
    h[FASTSID] = sid if h[LAYOUT] == _DENSE and items == h[WIDTH] and items else -1
    return 0


@register_jitable
def read(s, index, want):
    """TF's ``LockedRead`` (T1, T9, T10, T11; soft zeros; clear_after_read); return ``(status, flat, shape)``.

    ``want`` >= 0: the caller's element rank (another rank fails, changing nothing).
    """
    h = s.hdr
    none = s.data[:0]
    if h[CLOSED]:
        return _fail_i(s, _T1), none, _no_dims()
    n = h[SIZE]
    if index < 0 or (index >= n and not h[ISGRAD]):
        return _fail_i(s, _T9, index, n), none, _no_dims()
    bits = s.state[index] if index < n else 0
    new = _W | _R | _C if h[CAR] else _W | _R
    if not bits & _W:
        if not h[ES_KNOWN] or not _fully_defined(s.es):
            return _fail_s(s, _T10, index, s.es, s.es.size if h[ES_KNOWN] else -1, _NO_I64, 0), none, _no_dims()
        shape = s.es.copy()
        st = _check_rank(s, index, shape.size, want)
        if st:
            return st, none, _no_dims()
        st, out = _new_items(s, _items_of(shape), True, shape)
        if not st and index >= n:
            st = _reserve(s, index + 1)
        if st:
            return st, none, _no_dims()
        sid = _intern(s, shape)
        if index < n:
            s.shape_id[index] = sid
            s.state[index] = new
            return 0, out, shape
        state, shape_id = s.state, s.shape_id  # (no field reads in the loop: a reference count each)
        for i in range(n, index + 1):
            state[i] = _W
            shape_id[i] = sid
        state[index] = new
        h[SIZE] = index + 1
        return 0, out, shape
    if bits & _C:
        return _fail_i(s, _T11, index), none, _no_dims()
    sid = s.shape_id[index]
    items = s.items[sid]
    shape = _shape(s, sid).copy()
    st = _check_rank(s, index, shape.size, want)
    if st:
        return st, none, _no_dims()
    if bits & _D and items:
        isz = h[ITEMSIZE]
        o = s.offsets[index] * isz
        out = _advise(np.empty(items * isz, np.uint8))
        _move(out, 0, s.data, o, items * isz)
    else:
        st, out = _new_items(s, items, True, shape)
        if st:
            return st, none, _no_dims()
    s.state[index] = (bits | _R | _C) & _ND if h[CAR] else bits | _R
    return 0, out, shape


# --------------------------------------------------------------------------- many reads
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
def _check_reads(s, idx, zsid, es, es_known):
    """Run ``ReadMany``'s checks in order (the kernel): ``(status, shape ids)`` (T9, T10, T11).

    ``es`` is the element shape the op reads unwritten elements with (``es_known``: its rank is known).
    """
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
            return _fail_i(s, _T9, i, size), sids
        if code == 2:
            return _fail_s(s, _T10, i, es, es.size if es_known else -1, _NO_I64, 0), sids
        return _fail_i(s, _T11, i), sids
    return 0, sids


@register_jitable
def _plan_zeros(s, es, known):
    """``(status, zsid, items)``: the shape id an unwritten element reads as (-1: undefined), the items to plan with."""
    items = s.items[: s.hdr[NSHAPES]]
    if known and _fully_defined(es):
        return _plan_shape(s, es, items)
    return 0, -1, items


@register_jitable
def _sid_shape(s, sid, es):
    """Return the shape of ``sid``: an interned one, or the element shape ``es`` (planned: interned at the commit)."""
    if sid >= s.hdr[NSHAPES]:
        return es
    return _shape(s, sid)


@register_jitable
def _copy_items(fp, b, dp, o, w, isz):
    """Copy ``w`` items of ``isz`` bytes from item ``o`` of the byte pointer ``dp`` to item ``b`` of ``fp``."""
    if isz == 8:
        f8 = _cast(fp, _U64)
        d8 = _cast(dp, _U64)
        for j in range(w):
            f8[b + j] = d8[o + j]
    elif isz == 4:
        f4 = _cast(fp, _U32)
        d4 = _cast(dp, _U32)
        for j in range(w):
            f4[b + j] = d4[o + j]
    elif isz == 2:
        f2 = _cast(fp, _U16)
        d2 = _cast(dp, _U16)
        for j in range(w):
            f2[b + j] = d2[o + j]
    else:
        b *= isz
        o *= isz
        for j in range(w * isz):
            fp[b + j] = dp[o + j]


@register_jitable
def _read_par(s, src, sids, items, width, out, isz):
    """Copy the elements a bulk read plans (item offsets ``src``, -1: zeros) into ``out``, on Numba's threads.

    The parallel kernels are called through object mode, here and in ``_store_many``: the
    engine's compiled code (cached, and compiled into users' functions that call a bulk
    method) then holds no parallel region.  Numba links cached code that holds one against
    its threading layer when it loads it, so such code would need the layer started in every
    process that loads it, and a process that started the GNU OpenMP layer cannot run
    parallel code in its forked children (Numba terminates them).  Called as a dispatcher of
    its own, a parallel kernel starts the layer when it first runs, as Numba's own parallel
    functions do.  The call costs microseconds; it is made only above ``hdr[PARMIN]`` items.
    """
    m = src.size
    so = np.empty(m, np.int64)
    sz = np.empty(m, np.int64)
    oo = np.empty(m, np.int64)
    b = 0
    for k in range(m):
        w = (width if width >= 0 else items[sids[k]]) * isz
        so[k] = src[k] * isz if src[k] >= 0 else -1
        sz[k] = w
        oo[k] = b
        b += w
    data = s.data
    with objmode():
        _kernels._gather_segments_par(data, so, sz, oo, out)


@register_jitable
def _read_many(s, idx, sids, items, zsid, es, out, width, inplace=False):
    """Plan, copy (``width`` items per element into ``out``; -1: each element's own size) and commit; the status.

    ``inplace``: ``out`` is the data buffer itself, and each element is already where it is
    read to (a stack view): only soft zeros are written, into their own rows.
    """
    h = s.hdr
    m = idx.size
    top = idx.max() + 1
    st = _reserve(s, top)
    if st:
        return st
    src = np.empty(m, np.int64)
    new_state = np.empty(m, np.uint8)
    _, bad = _kernels._plan_reads(idx, s.state, s.offsets, sids, items, h[CAR], _nitems(s), src, new_state)
    if bad >= 0:
        return _fail_i(s, _CORRUPT, idx[bad])
    isz = h[ITEMSIZE]
    if not inplace and m > 1 and out.size // isz >= h[PARMIN]:
        _read_par(s, src, sids, items, width, out, isz)
        m = 0  # copied
    fp = _ptr(out)
    dp, _ = _buf(s, "data")
    data = s.data  # (no field reads in the loop: a reference count each)
    b = 0
    for k in range(m):
        w = width if width >= 0 else items[sids[k]]
        o = src[k]
        if o < 0:
            out[b * isz : (b + w) * isz] = 0
        elif inplace:
            pass
        elif w > 16:
            _move(out, b * isz, data, o * isz, w * isz)
        else:  # short rows: an item loop through borrowed pointers beats a slice copy
            _copy_items(fp, b, dp, o, w, isz)
        b += w
    # the commit
    if zsid >= h[NSHAPES]:
        _intern(s, es)
    n = h[SIZE]
    if top > n:
        state, shape_id = s.state, s.shape_id
        for i in range(n, top):
            state[i] = _W
            shape_id[i] = zsid
        h[SIZE] = top
    _kernels._store_reads(idx, s.state, s.shape_id, new_state, sids)
    return 0


@register_jitable
def _result(s, idx, sids, zsid, es, n, shape):
    """``(status, bytes)``: a gather's or concat's result of ``n`` items; TF's OOM error when it does not fit.

    The error names the element shape when an element read is unwritten: TF makes each
    unwritten element's zeros first, and that is the allocation that fails there.
    """
    isz = s.hdr[ITEMSIZE]
    ok = n >= 0 and n <= _INT64_MAX // isz and _numpy_fits(shape, isz)
    out = s.data[:0].copy()
    if ok:
        try:
            out = _advise(np.empty(n * isz, np.uint8))
        except Exception:  # noqa: BLE001
            ok = False
    if not ok:
        if zsid >= 0:
            for k in range(idx.size):
                if sids[k] == zsid and (idx[k] >= s.hdr[SIZE] or not s.state[idx[k]] & _W):
                    st, _ = _new_items(s, _items_of(es), True, es)  # fails when those zeros do not fit either
                    if st:
                        return st, out
                    break
        return _oom(s, shape, s.hdr[DTYPE]), out
    return 0, out


@register_jitable
def _is_range(idx):
    """Return whether ``idx`` is ``0, 1, ..., idx.size - 1``."""
    for k in range(idx.size):
        if idx[k] != k:
            return False
    return True


@register_jitable
def gather(s, idx, attr, attr_known, want, view=False):
    """TF's ``TensorArrayGatherV3`` (merge, T1, G3, T9 to T11, G4, G5 in order); return ``(status, flat, shape)``.

    ``attr`` is the op's ``element_shape`` attribute (when ``attr_known``); ``idx`` an int64 vector.
    With ``view``, ``flat`` is a view of the data buffer instead of a copy when ``idx`` is
    ``0..m-1`` on the dense layout (soft zeros get their zeros in their own unused rows):
    safe to hand out read-only, since TF's rules forbid any later write to a read element
    (T5), dense elements never move, and growth or close replace the buffer.
    """
    h = s.hdr
    none = s.data[:0]
    st, es, es_known = _merge(s, attr, attr_known)
    if st:
        return st, none, _no_dims()
    m = idx.size
    if m == 0:  # TF returns before looking at the array (closed or not)
        if not attr_known or not _fully_defined(attr):
            return _fail_s(s, _G3, 0, attr, attr.size if attr_known else -1, _NO_I64, 0), none, _no_dims()
        st = _check_rank(s, 0, attr.size, want)
        if st:
            return st, none, _no_dims()
        shape = np.empty(attr.size + 1, np.int64)
        shape[0] = 0
        shape[1:] = attr
        _commit_es(s, es, es_known)
        return 0, np.zeros(0, np.uint8), shape
    if h[CLOSED]:
        return _fail_i(s, _T1), none, _no_dims()
    st, zsid, items = _plan_zeros(s, es, es_known)
    if not st:
        st, sids = _check_reads(s, idx, zsid, es, es_known)
    if st:
        return st, none, _no_dims()
    s0 = sids[0]
    shape0 = _sid_shape(s, s0, es)
    r = shape0.size
    if attr_known and not _compatible(attr, shape0):
        return _fail_s(s, _G4, 0, attr, attr.size, shape0, r), none, _no_dims()
    w = items[s0]
    if w:
        for k in range(1, m):
            if sids[k] != s0:
                other = _sid_shape(s, sids[k], es)
                return _fail_s(s, _G5, k, shape0, r, other, other.size), none, _no_dims()
    st = _check_rank(s, idx[0], r, want)
    if st:
        return st, none, _no_dims()
    shape = np.empty(r + 1, np.int64)
    shape[0] = m
    shape[1:] = shape0
    if view and h[LAYOUT] == _DENSE and w and w == h[WIDTH] and m * w <= _nitems(s) and _is_range(idx):
        st = _read_many(s, idx, sids, items, zsid, es, s.data, w, True)
        if st:
            return st, none, _no_dims()
        _commit_es(s, es, es_known)
        return 0, s.data[: m * w * h[ITEMSIZE]], shape
    st, out = _result(s, idx, sids, zsid, es, m * w if w <= _INT64_MAX // m else -1, shape)
    if not st:
        st = _read_many(s, idx, sids, items, zsid, es, out, w)
    if st:
        return st, none, _no_dims()
    _commit_es(s, es, es_known)
    return 0, out, shape


@register_jitable
def concat(s, attr, attr_known, want):
    """TF's ``TensorArrayConcatV3`` (T1, C1, T9-T11, C2-C4); return ``(status, flat, shape, lengths)``.

    ``attr`` is the op's ``element_shape_except0`` attribute (when ``attr_known``).
    """
    h = s.hdr
    none = s.data[:0]
    if h[CLOSED]:
        return _fail_i(s, _T1), none, _no_dims(), _no_dims()
    if h[ISGRAD]:
        n = h[MARKED]
        if n < 0:
            return _fail_i(s, _CONCAT_UNSPLIT), none, _no_dims(), _no_dims()
    else:
        n = h[SIZE]
    if n == 0:
        if not attr_known or not _fully_defined(attr):
            return _fail_s(s, _C1, 0, attr, attr.size if attr_known else -1, _NO_I64, 0), none, _no_dims(), _no_dims()
        st = _check_rank(s, 0, attr.size + 1, want)
        if st:
            return st, none, _no_dims(), _no_dims()
        shape = np.empty(attr.size + 1, np.int64)
        shape[0] = 0
        shape[1:] = attr
        return 0, np.zeros(0, np.uint8), shape, np.zeros(0, np.int64)
    idx = np.arange(n)
    es = s.es
    known = h[ES_KNOWN] != 0
    st, zsid, items = _plan_zeros(s, es, known)
    if not st:
        st, sids = _check_reads(s, idx, zsid, es, known)
    if st:
        return st, none, _no_dims(), _no_dims()
    s0 = _sid_shape(s, sids[0], es)
    r = s0.size
    if r == 0:
        return _fail_i(s, _C2, 0), none, _no_dims(), _no_dims()
    if attr_known and not _compatible(attr, s0[1:]):
        return _fail_s(s, _C3, 0, attr, attr.size, s0[1:], r - 1), none, _no_dims(), _no_dims()
    lengths = np.empty(n, np.int64)
    prev = -1
    length = 0
    for k in range(n):
        if sids[k] != prev:  # an element of the previous one's shape passes as it did
            prev = sids[k]
            sk = _sid_shape(s, prev, es)
            if sk.size == 0:
                return _fail_i(s, _C2, k), none, _no_dims(), _no_dims()
            if not _same(sk[1:], s0[1:]):
                return _fail_s(s, _C4, k, s0[1:], r - 1, sk[1:], sk.size - 1), none, _no_dims(), _no_dims()
            length = sk[0]
        lengths[k] = length
    st = _check_rank(s, 0, r, want)
    if st:
        return st, none, _no_dims(), _no_dims()
    shape = s0.copy()
    total = 0
    for k in range(n):
        total = total + lengths[k] if lengths[k] <= _INT64_MAX - total else -1
    shape[0] = total
    st, out = _result(s, idx, sids, zsid, es, _items_of(shape) if total >= 0 else -1, shape)
    if not st:
        st = _read_many(s, idx, sids, items, zsid, es, out, -1)
    if st:
        return st, none, _no_dims(), _no_dims()
    return 0, out, shape, lengths


# --------------------------------------------------------------------------- many writes
@register_jitable
def _write_error(s, code, index, old, shape):
    """Record TF's error for a failed ``WriteOrAggregateMany`` check (``_kernels._check_writes``'s code); its status."""
    if code == 1:
        return _fail_i(s, _T5, index)
    if code == 2:
        return _fail_i(s, _T6, index)
    if code == 3:
        o = _shape(s, old)
        return _fail_s(s, _T7, index, o, o.size, shape, shape.size)
    return _fail_i(s, _T8, s.hdr[DTYPE])


@register_jitable
def _store_many(s, idx, flat, sizes, sids, add, fresh, unique):
    """Do the data work and the commit of a scatter or split: element ``idx[k]`` gets the next ``sizes[k]`` items.

    Room for every element that needs it (``fresh``) is allocated first, so an
    allocation failure (TF's OOM error, its status returned) changes nothing an op
    can see; then the copies (``add``: sums into the element) and the commit, which
    cannot fail.  ``unique``: no index repeats, so every element's copy or sum has
    items of its own and the work can run on Numba's threads (from ``hdr[PARMIN]``
    items; a float16 sum, which converts each item, stays serial).
    """
    m = idx.size
    top = 0
    n_fresh = 0
    total = 0
    work = 0
    for k in range(m):
        top = max(top, idx[k] + 1)
        work += sizes[k]
        if fresh[k] and sizes[k]:
            n_fresh += 1
            total += sizes[k]
    offs = np.zeros(m, np.int64)
    # the layout's scalars kept in locals: an array (hdr) read in a loop that may replace it costs a
    # reference count per element (16384 rows of 256 B: 175 us of the op's 300)
    room = -1  # items of the data buffer after the last allocation (-1: none yet)
    width = -1  # row items of the dense buffer (-1: not dense)
    for k in range(m):
        z = sizes[k]
        if fresh[k] and z:
            if z == width and top * z <= room:
                offs[k] = idx[k] * z  # what _alloc1 returns for a row of a dense buffer that holds them all
                continue
            st, at = _alloc1(s, idx[k], z, top, n_fresh, total)
            if st:
                return st
            offs[k] = at
            width = s.hdr[WIDTH] if s.hdr[LAYOUT] == _DENSE else -1
            room = _nitems(s)
    code = s.hdr[DTYPE]
    isz = s.hdr[ITEMSIZE]
    summing = add.any()
    par = work >= s.hdr[PARMIN]
    # one kernel call for all elements: on Numba's threads from PARMIN items; serially for the
    # sums of many elements (a sum per element in the loop below costs ~0.1 us of views and checks)
    batch = m > 1 and unique and (par or (summing and m >= _SUM_BATCH)) and not (summing and code == _F16_CODE)
    if batch:  # each element's items are its own: the copies and sums can run on Numba's threads
        dst = np.empty(m, np.int64)
        src = np.empty(m, np.int64)
        o = 0
        offsets = s.offsets
        for k in range(m):
            dst[k] = offsets[idx[k]] if add[k] else offs[k]
            src[k] = o
            o += sizes[k]
        data = s.data
        with objmode():
            _store_par(data, dst, flat, src, sizes, add, summing, isz, code, par)
    # the struct's fields read once (a field read in a loop costs a reference count each time);
    # nothing below replaces a field
    data, offsets, state, shape_id = s.data, s.offsets, s.state, s.shape_id
    o = 0
    # serial copies whose source and destination both follow the previous one's (the rows of an
    # unstack or a split into a dense buffer) move as one run: one memmove instead of one per element
    run_d = 0
    run_f = 0
    run_n = 0
    for k in range(m):
        i = idx[k]
        z = sizes[k]
        if batch:
            if not add[k]:
                offsets[i] = offs[k] if z else 0
        elif z:
            fo = o * isz
            if add[k]:
                if run_n:  # the sum may read an element copied in the pending run
                    _move(data, run_d, flat, run_f, run_n)
                    run_n = 0
                d0 = offsets[i] * isz
                _add(data[d0 : d0 + z * isz], flat[fo : fo + z * isz], code)
            else:
                d0 = offs[k] * isz
                if run_n and d0 == run_d + run_n and fo == run_f + run_n:
                    run_n += z * isz
                else:
                    if run_n:
                        _move(data, run_d, flat, run_f, run_n)
                    run_d = d0
                    run_f = fo
                    run_n = z * isz
                offsets[i] = offs[k]
        else:
            offsets[i] = 0
        state[i] = _W | _D
        shape_id[i] = sids[k]
        o += z
    if run_n:
        _move(data, run_d, flat, run_f, run_n)
    if summing:
        s.hdr[DISALLOWED] = 1
    return 0


def _store_par(data, dst, flat, src, sizes, add, summing, isz, code, parallel):
    """Python (called from compiled code in object mode): the kernel call of :func:`_store_many`.

    ``data`` and ``flat`` are bytes, the offsets and sizes count items of ``isz`` bytes.  Copies
    run on the items' bit pattern (one kernel per item size); with sums (``summing``), the
    items' dtype ``DTYPES[code]`` (one kernel per dtype, compiled at its first use).  The
    ``parallel`` kernels run on Numba's threads, the others on the caller's.
    """
    if summing:
        t = DTYPES[code]
        kernel = _kernels._store_or_add_segments_par if parallel else _kernels._store_or_add_segments
        kernel(data.view(t), dst, flat.view(t), src, sizes, add)
    else:
        kernel = _kernels._write_segments_par if parallel else _kernels._write_segments
        kernel(data, dst * isz, flat, src * isz, sizes * isz)


@register_jitable
def scatter(s, idx, flat, rows, row, numeric):
    """TF's ``TensorArrayScatterV3`` after K7 and S2 (T1, S3, S4, T2, T4, T5 to T8, in TF's order); the status.

    The value has ``rows`` rows of shape ``row`` (int64 array), ``flat`` its items.
    """
    h = s.hdr
    if h[CLOSED]:
        return _fail_i(s, _T1)
    m = idx.size
    if m != rows:
        return _fail_i(s, _S3, m, rows)
    n = h[SIZE]
    max_index = idx.max() if m else -1
    size2 = max(n, max_index + 1) if h[DYN] else n
    if max_index >= size2:
        return _fail_i(s, _S4, max_index, size2)
    if m == 0:
        return 0
    pos_neg = m
    for k in range(m):
        if idx[k] < 0:
            pos_neg = k
            break
    if pos_neg == 0:
        return _fail_i(s, _T2, idx[0], n)
    if not _es_compatible(s, row):
        return _fail_s(s, _T4, idx[0], row, row.size, s.es, s.es.size if h[ES_KNOWN] else -1)
    st, sid, items = _plan_shape(s, row, s.items[: h[NSHAPES]])
    if st:
        return st
    sids = np.full(m, sid, np.int64)
    keys, seen = _repeat_keys(idx[:pos_neg])
    add = np.empty(pos_neg, np.bool_)
    fresh = np.empty(pos_neg, np.bool_)
    dup = np.empty(pos_neg, np.bool_)
    p, code, old = _kernels._check_writes(
        idx[:pos_neg], s.state, s.shape_id, n, h[ISGRAD], sids[:pos_neg], items, numeric, keys, seen, add, fresh, dup
    )
    if code:
        return _write_error(s, code, idx[p], old, row)
    if pos_neg < m:
        size_then = max(n, idx[:pos_neg].max() + 1) if h[DYN] else n
        return _fail_i(s, _T2, idx[pos_neg], size_then)
    # no check can fail any more: room (which can), then the data work and the commit
    st = _reserve(s, max_index + 1)
    if not st:
        st = _store_many(s, idx, flat, np.full(m, items[sid], np.int64), sids, add, fresh, not dup.any())
    if st:
        return st
    _intern(s, row)
    h[SIZE] = size2
    if h[IDENT] and not (h[ES_KNOWN] and _fully_defined(s.es)):
        _set_es(s, row)
    return 0


@register_jitable
def split(s, flat, lens, vshape, numeric, k7):
    """TF's ``TensorArraySplitV3`` after P1-P4 (T1, negative lengths, P5, K7, T4, T5-T8 in TF's order); the status.

    ``vshape`` is the value's shape (rank >= 1), ``flat`` its items, ``lens`` the lengths;
    ``k7``: the op has a dtype error (the K7 status, after P5; the caller has its text).
    """
    h = s.hdr
    if h[CLOSED]:
        return _fail_i(s, _T1)
    n_new = lens.size
    for k in range(n_new):
        if lens[k] < 0:
            return _fail_i(s, _SPLIT_NEGATIVE, k, lens[k])
    size = h[SIZE]
    size2 = n_new if (h[DYN] and size < n_new) else size
    if size2 != n_new:
        return _fail_i(s, _P5, size, n_new)
    if k7:
        return _fail_i(s, _K7)
    r = vshape.size
    row = 1
    for d in range(1, r):
        row *= vshape[d]  # the value exists: its rows fit
    if n_new and row:
        kmax = 0
        for k in range(n_new):
            if lens[k] > lens[kmax]:
                kmax = k
        if lens[kmax] > _INT64_MAX // row:
            shape_k = vshape.copy()
            shape_k[0] = lens[kmax]
            return _fail(s, _SPLIT_INT64, kmax, lens[kmax], 0, shape_k, r, _NO_I64, 0)
    es = s.es
    es_known = h[ES_KNOWN] != 0
    es2 = es.copy()
    shape_k = vshape.copy()
    sids = np.empty(n_new, np.int64)
    add = np.zeros(n_new, np.bool_)
    fresh = np.zeros(n_new, np.bool_)
    planned = _NO_I64
    n_planned = 0
    if n_new:
        shape_k[0] = lens[0]
        if not _es_compatible(s, shape_k):
            return _fail_s(s, _T4, 0, shape_k, r, es, es.size if es_known else -1)
        if h[IDENT] and not (es_known and _fully_defined(es)):
            es2 = shape_k.copy()
            es_known = True
        k_bad = n_new
        if es_known:
            tail_ok = es2.size == r
            for d in range(1, min(r, es2.size)):
                if es2[d] >= 0 and es2[d] != vshape[d]:
                    tail_ok = False
            if not tail_ok:
                k_bad = 0
            elif es2[0] >= 0:
                for k in range(n_new):
                    if lens[k] != es2[0]:
                        k_bad = k
                        break
        # plan the pieces' shape ids: new lengths get the ids they will have once interned
        items = s.items[: h[NSHAPES]]
        planned = np.empty(n_new, np.int64)  # the new lengths, in order of first appearance
        for k in range(n_new):
            shape_k[0] = lens[k]
            sid = _find_shape(s, shape_k)
            if sid < 0:
                for j in range(n_planned):
                    if planned[j] == lens[k]:
                        sid = h[NSHAPES] + j
                        break
                if sid < 0:
                    planned[n_planned] = lens[k]
                    sid = h[NSHAPES] + n_planned
                    n_planned += 1
            sids[k] = sid
        if n_planned:
            ext = np.empty(items.size + n_planned, np.int64)
            ext[: items.size] = items
            ext[items.size :] = planned[:n_planned] * row
            items = ext
        idx = np.arange(n_new)
        keys, seen = _repeat_keys(idx)
        dup = np.empty(n_new, np.bool_)
        p, code, old = _kernels._check_writes(
            idx, s.state, s.shape_id, size, h[ISGRAD], sids, items, numeric, keys, seen, add, fresh, dup
        )
        if k_bad < n_new and k_bad <= p:
            shape_k[0] = lens[k_bad]
            return _fail_s(s, _T4, k_bad, shape_k, r, es2, es2.size if es_known else -1)
        if code:
            shape_k[0] = lens[p]
            return _write_error(s, code, p, old, shape_k)
    marked = size2 if not h[ISGRAD] else h[MARKED]
    sizes = lens * row
    total = 0
    for k in range(n_new):  # the lengths' sum may have wrapped around int64 (P4 compares it wrapped)
        if sizes[k] > _INT64_MAX - total:
            return _oom(s, _one(-1), h[DTYPE])
        total += sizes[k]
    if total != flat.size // h[ITEMSIZE]:
        return _oom(s, _one(total), h[DTYPE])
    # no check can fail any more: room (which can), then the data work and the commit
    st = _reserve(s, size2)
    if not st:
        st = _store_many(s, np.arange(n_new), flat, sizes, sids, add, fresh, True)
    if st:
        return st
    for j in range(n_planned):  # intern the planned shapes: they get the planned ids
        shape_k[0] = planned[j]
        _intern(s, shape_k)
    h[MARKED] = marked
    h[SIZE] = max(size, size2)
    if es_known:
        _commit_es(s, es2, True)
    return 0


# --------------------------------------------------------------------------- close, gradient arrays
@register_jitable
def close(s):
    """TF's ``ClearAndMarkClosed``: drop every element and its data, mark the array closed (never fails)."""
    h = s.hdr
    s.data = s.data[:0].copy()
    s.state = np.zeros(0, np.uint8)
    s.shape_id = np.zeros(0, np.int32)
    s.offsets = np.zeros(0, np.int64)
    h[SIZE] = 0
    h[CAP] = 0
    h[USED] = 0
    h[LAYOUT] = _NONE
    h[CLOSED] = 1
    h[FASTSID] = -1
    h[GEN] += 1


@register_jitable
def copy_shapes(g, f, prepend):
    """TF's ``CopyShapesFrom``: each slot written in ``f`` becomes a soft zero of ``prepend`` + its shape in ``g``.

    ``g`` is a new gradient array of ``f``'s size.  Returns the status: NT-prepend-int64
    (recorded in ``f``'s ``err``; nothing changed) when such a shape has more than 2**63 - 1
    items.
    """
    n = f.hdr[SIZE]
    nf = f.hdr[NSHAPES]
    need = np.zeros(nf, np.bool_)
    for i in range(n):
        if f.state[i] & _W:
            need[f.shape_id[i]] = True
    shapes = []
    for sid in range(nf):
        if need[sid]:
            own = _shape(f, sid)
            shape = np.empty(prepend.size + own.size, np.int64)
            shape[: prepend.size] = prepend
            shape[prepend.size :] = own
            if _items_of(shape) < 0:
                return _fail_s(f, _PREPEND_INT64, 0, prepend, prepend.size, shape, shape.size)
            shapes.append(shape)
    mapped = np.full(nf, -1, np.int64)
    j = 0
    for sid in range(nf):
        if need[sid]:
            mapped[sid] = _intern(g, shapes[j])
            j += 1
    for i in range(n):
        if f.state[i] & _W:
            g.state[i] = _W
            g.shape_id[i] = mapped[f.shape_id[i]]
    return 0


@register_jitable
def gradient_of(f, name, h, es, es_known, prepend):
    """``(status, g)``: a new gradient array ``g`` of ``f`` (TF's ``TensorArrayGradV3``, after its checks).

    ``h`` is a fresh :func:`header` of ``f``'s dtype (its policies set), which the array takes
    as its ``hdr``.  It has ``f``'s size and shape rules and the element shape ``es``
    (``es_known``: whether it is known); every slot written in ``f`` is a soft zero of
    ``prepend`` + its shape (:func:`copy_shapes`).  Fails as ``copy_shapes`` and the
    metadata's allocation do, the error recorded in ``f``'s ``err`` (``g`` is then ``f``);
    ``f`` is not changed.
    """
    fh = f.hdr
    n = fh[SIZE]
    h[SIZE] = n
    h[CAP] = n
    h[LAYOUT] = _NONE
    h[CAR] = 1
    h[IDENT] = fh[IDENT]
    h[ISGRAD] = 1
    h[MARKED] = fh[MARKED]
    h[FASTSID] = -1
    h[ES_KNOWN] = es_known
    st, state, shape_id, offsets = _new_meta(f, n)
    if st:
        return st, f
    g = new_state(f.data[:0].copy(), state, shape_id, offsets, h, _NO_I64.copy(), np.zeros(1, np.int64),
                  _NO_I64.copy(), es.copy(), _NO_I64.copy(), name)  # fmt: skip
    st = copy_shapes(g, f, prepend)
    return st, g if not st else f


# --------------------------------------------------------------------------- TensorList storage
# A TensorList's elements live in the same struct (numba_ta._tensor_list): ``SIZE`` is the
# list's length, an element is set (``_W | _D``) or unset (state 0), and slots at or past
# ``SIZE`` are always unset.  ``_E`` marks a slot whose dense row (or run) has held data: a
# later write there overwrites bytes that an older version of the list may still need, so
# :func:`tl_set` hands them back to the caller, which keeps them for that version.
_E = 16


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
    n = h[SIZE]
    if index >= n:
        st = _reserve(s, index + 1)
        if st:
            return st, none, -1
    isz = h[ITEMSIZE]
    items = flat.size // isz
    bits = s.state[index]
    o = 0
    at = -1
    saved = none
    if items:
        if bits & _D and s.items[s.shape_id[index]] == items:
            o = s.offsets[index]  # the same room again
        else:
            st, o = _alloc1(s, index, items, index + 1, 1, items)
            if st:
                return st, none, -1
        if bits & (_D | _E) and (h[LAYOUT] == _DENSE or o == s.offsets[index]):
            at = o
            saved = s.data[o * isz : (o + items) * isz].copy()
        _move(s.data, o * isz, flat, 0, flat.size)
    sid = _intern(s, shape)
    s.offsets[index] = o
    s.shape_id[index] = sid
    s.state[index] = _W | _D | _E if items else _W | _D | (bits & _E)
    if index >= n:
        h[SIZE] = index + 1
    return 0, saved, at


@register_jitable
def tl_resize(s, size):
    """Make a list's struct ``size`` elements long: slots cut off or added are unset; return the status."""
    h = s.hdr
    n = h[SIZE]
    if size > n:
        st = _reserve(s, size)
        if st:
            return st
    state = s.state  # (after _reserve, which may replace it; no field reads in the loop)
    for i in range(size, n):
        state[i] = state[i] & _E
    h[SIZE] = size
    return 0


if getattr(config, "DISABLE_JIT", False):
    _add_items = _add

    def _add(dst, src, code):  # noqa: F811 - numpy's warnings off, as in compiled code
        """:func:`_add` as Python: IEEE sums quietly (``inf - inf`` is NaN without a warning), as compiled."""
        with np.errstate(all="ignore"):
            _add_items(dst, src, code)


# --------------------------------------------------------------------------- entries for the Python layer
# One compiled function per op, specialised only on the struct's type and the arguments' fixed
# types (bytes, int64 arrays, ints, bools, str), so each compiles once for every dtype and rank.
# Cached, and loaded with signals held back, as the kernels are (``_kernels._kernel``); a read-only
# install compiles them in each process (about a minute in all).
@_kernels._kernel()
def py_write(s, index, flat, shape, numeric):
    """:func:`write` for the Python layer: the status."""
    return write(s, index, flat, shape, numeric)


@_kernels._kernel()
def py_read(s, index):
    """:func:`read` for the Python layer: ``(status, flat, shape)``."""
    return read(s, index, -1)


@_kernels._kernel()
def py_gather(s, idx, attr, attr_known, view):
    """:func:`gather` for the Python layer: ``(status, flat, shape)``."""
    return gather(s, idx, attr, attr_known, -1, view)


@_kernels._kernel()
def py_concat(s, attr, attr_known):
    """:func:`concat` for the Python layer: ``(status, flat, shape, lengths)``."""
    return concat(s, attr, attr_known, -1)


@_kernels._kernel()
def py_scatter(s, idx, flat, rows, row, numeric):
    """:func:`scatter` for the Python layer: the status."""
    return scatter(s, idx, flat, rows, row, numeric)


@_kernels._kernel()
def py_split(s, flat, lens, vshape, numeric, k7):
    """:func:`split` for the Python layer: the status."""
    return split(s, flat, lens, vshape, numeric, k7)


@_kernels._kernel()
def py_close(s):
    """:func:`close` for the Python layer."""
    close(s)


@_kernels._kernel()
def py_gradient_of(f, name, h, es, es_known, prepend):
    """:func:`gradient_of` for the Python layer: ``(status, new struct)``."""
    return gradient_of(f, name, h, es, es_known, prepend)


@_kernels._kernel()
def py_tl_set(s, index, flat, shape):
    """:func:`tl_set` for the Python layer: ``(status, saved, at)``."""
    return tl_set(s, index, flat, shape)


@_kernels._kernel()
def py_tl_resize(s, size):
    """:func:`tl_resize` for the Python layer: the status."""
    return tl_resize(s, size)


@_kernels._kernel()
def set_name(s, name):
    """Rename the array (its messages name it)."""
    s.name = name


@_kernels._kernel()
def set_ces(s, ces):
    """Replace the class's element shape array (another rank)."""
    s.ces = ces


# --------------------------------------------------------------------------- entries for users' compiled code
# The TensorArray methods compiled into users' ``@njit`` functions (``numba_ta._jit``) call these
# entries by symbol name (``numba_ta._abi``): one compiled function per op, over the struct and fixed
# types (the value's bytes, int64 index and shape arrays, ints, bools, str), for every dtype and
# rank, so the engine is compiled once (and shipped by ``pip install .``), not into each user's
# function.  Each does what the method did inline: the class's shape check, the engine op, TF's
# exception (``raise_status``: the status's text is built in Python), the class's shape merge.  The
# methods keep inline only their per-element fast paths, casts and byte views.
# Their signatures are numba_ta._abi.ENTRIES: change one only with a new ABI version there.
# They run only in compiled code (NUMBA_DISABLE_JIT=1 runs users' functions on the Python class),
# hence their coverage pragmas: tests/test_jit.py and tests/test_jit_abi.py run them.
# (The Python layer's ``py_*`` entries above return statuses instead of raising, and the class's
# checks live in Python there, so the two sets share the engine's bodies, not their entries.)
_MSG_T1, _MSG_G2, _MSG_P1, _MSG_P2, _MSG_P3, _MSG_P4 = (MESSAGES[c][1] for c in ("T1", "G2", "P1", "P2", "P3", "P4"))
_MSG_CLASS_SHAPES = MESSAGES["NT-class-shapes"][1]
_MSG_SIZE_NEGATIVE = MESSAGES["NT-size-negative"][1]
_MSG_DIM_NEGATIVE = MESSAGES["NT-convert-dim-negative"][1].replace("{argname}", "other")
_MSG_DIMS_NEGATIVE = MESSAGES["NT-convert-dim-negative"][1].replace("{argname}", "dims")


@register_jitable
def _shape_str(a, n):  # pragma: no cover - users' compiled code
    """TF's ``TensorShape::DebugString`` of the first ``n`` items of ``a``: ``[2,3]``."""
    out = "["
    for k in range(n):
        if k:
            out += ","
        out += str(a[k])
    return out + "]"


@register_jitable
def _py_str(a, n):  # pragma: no cover - users' compiled code
    """Python's ``str(tf.TensorShape)`` (-1 is None): ``(2,)``, ``(None, 3)``, ``()``."""
    out = "("
    for k in range(n):
        if k:
            out += ", "
        out += "None" if a[k] < 0 else str(a[k])
    return out + (",)" if n == 1 else ")")


@register_jitable
def _class_check(s, shape):  # pragma: no cover - users' compiled code
    """Check the class's element shape (``_check_element_shape``): ValueError as TF's Python layer raises it."""
    if not s.hdr[CLASS_KNOWN]:
        return
    ces = s.ces
    if not _compatible(ces, shape):
        raise ValueError(
            _MSG_CLASS_SHAPES.replace("{shape}", _py_str(shape, shape.size)).replace(
                "{element_shape}", _py_str(ces, ces.size)
            )
        )


@register_jitable
def _class_merge(s, shape):  # pragma: no cover - users' compiled code
    """Merge the written shape into the class's element shape (``infer_shape``; an unknown one becomes it)."""
    h = s.hdr
    if not h[INFER]:
        return
    if not h[CLASS_KNOWN] or not _same(s.ces, shape):
        s.ces = shape.copy()  # after _class_check: the merge of a compatible shape into a concrete one is it
        h[CLASS_KNOWN] = 1
        h[CES_CHANGED] = 1
        h[GEN] += 1


@register_jitable
def _check_vector(shape, template):
    """Raise TF's InvalidArgumentError ``template`` (G2, P1) unless ``shape`` (an index array's) is a vector's."""
    if shape.size != 1:
        raise InvalidArgumentError(template.replace("{shape}", _shape_str(shape, shape.size)))


@register_jitable
def _dense_stack(s, want):  # pragma: no cover - users' compiled code
    """Stack a dense array whose elements all hold data of one shape of rank ``want``: ``(ok, bytes, shape)``.

    Then none of TF's checks can fail and the element shape does not change (the
    class's shape, if known, already agrees with the array's and the elements'):
    the op is one copy of the rows and the read marks.  ``ok`` False: nothing done.
    """
    h = s.hdr
    n = h[SIZE]
    st = s.state
    none = s.data[:0]
    if h[CLOSED] or n == 0 or n > st.size or h[LAYOUT] != _DENSE:
        return False, none, _no_dims()
    sid = s.shape_id
    off = s.offsets
    s0 = sid[0]
    w = h[WIDTH]
    a = s.starts[s0]
    ok = s.starts[s0 + 1] - a == want and w > 0 and s.items[s0] == w
    dims = s.dims
    if ok and h[CLASS_KNOWN]:
        es, ces = s.es, s.ces
        ok = h[ES_KNOWN] != 0 and es.size == want and ces.size == want
        if ok:
            for k in range(want):
                c = ces[k]
                if c >= 0 and (dims[a + k] != c or es[k] != c):
                    ok = False
    if ok:
        for i in range(n):
            if st[i] & (_W | _D | _C) != _W | _D or sid[i] != s0 or off[i] != i * w:
                ok = False
                break
    if not ok:
        return False, none, _no_dims()
    shape = np.empty(want + 1, np.int64)
    shape[0] = n
    shape[1:] = dims[a : a + want]
    nbytes = n * w * h[ITEMSIZE]
    out = _advise(np.empty(nbytes, np.uint8))
    _move(out, 0, s.data, 0, nbytes)
    if h[CAR]:
        for i in range(n):
            st[i] = (st[i] | _R | _C) & _ND
    else:
        for i in range(n):
            st[i] |= _R
    return True, out, shape


@_kernels._kernel()
def jit_write(s, index, flat, shape, numeric):  # pragma: no cover - users' compiled code
    """``TensorArray.write`` in compiled code, past its fast path: class check, :func:`write`, merge; raises."""
    _class_check(s, shape)
    st = write(s, index, flat, shape, numeric)
    if st:
        raise_status(s, st)
    _class_merge(s, shape)
    return 0


@_kernels._kernel()
def jit_read(s, index, want):  # pragma: no cover - users' compiled code
    """``TensorArray.read`` in compiled code, past its fast path: ``(bytes, shape)``; raises."""
    st, flat, shape = read(s, index, want)
    if st:
        raise_status(s, st)
    return flat, shape


@_kernels._kernel()
def jit_gather(s, idx, idx_shape, want):  # pragma: no cover - users' compiled code
    """``TensorArray.gather`` in compiled code (``idx`` flat, ``idx_shape`` its shape): ``(bytes, shape)``; raises."""
    _check_vector(idx_shape, _MSG_G2)
    st, flat, shape = gather(s, idx, s.ces, s.hdr[CLASS_KNOWN] != 0, want)
    if st:
        raise_status(s, st)
    return flat, shape


@_kernels._kernel()
def jit_stack(s, want):  # pragma: no cover - users' compiled code
    """``TensorArray.stack`` in compiled code (a dense array in one copy, else :func:`gather`): ``(bytes, shape)``."""
    ok, flat, shape = _dense_stack(s, want)
    if ok:
        return flat, shape
    h = s.hdr
    if h[CLOSED]:
        raise InvalidArgumentError(_MSG_T1.replace("{name}", s.name))
    st, flat, shape = gather(s, np.arange(h[SIZE]), s.ces, h[CLASS_KNOWN] != 0, want)
    if st:
        raise_status(s, st)
    return flat, shape


@_kernels._kernel()
def jit_scatter(s, idx, idx_shape, flat, rows, row, numeric):  # pragma: no cover - users' compiled code
    """``TensorArray.scatter``/``unstack`` in compiled code after the cast: class check, :func:`scatter`, merge."""
    _class_check(s, row)
    _check_vector(idx_shape, _MSG_G2)
    st = scatter(s, idx, flat, rows, row, numeric)
    if st:
        raise_status(s, st)
    _class_merge(s, row)
    return 0


@_kernels._kernel()
def jit_concat(s, want):  # pragma: no cover - users' compiled code
    """``TensorArray.concat`` in compiled code: ``(bytes, shape)``; raises."""
    # the class passes element_shape[1:] as the op's element_shape_except0 (known when the rank is >= 1)
    known = s.hdr[CLASS_KNOWN] != 0 and s.ces.size > 0
    attr = s.ces[1:] if known else s.ces[:0]
    st, flat, shape, _ = concat(s, attr, known, want)
    if st:
        raise_status(s, st)
    return flat, shape


@_kernels._kernel()
def jit_split(s, flat, vshape, lens, lens_shape, numeric):  # pragma: no cover - users' compiled code
    """``TensorArray.split`` in compiled code after the cast (``lens`` flat, ``lens_shape`` its shape); raises."""
    vdim = vshape.size
    # the class checks (and merges) the pieces' shape only when all lengths are equal
    same = lens_shape.size == 1 and lens.size > 0 and vdim > 0
    if same:
        for k in range(1, lens.size):
            if lens[k] != lens[0]:
                same = False
                break
    shape = vshape.copy()
    if same:
        shape[0] = lens[0]
        if shape[0] < 0:  # the class makes a TensorShape of it first
            raise ValueError(_MSG_DIM_NEGATIVE.replace("{dim}", str(shape[0])))
        _class_check(s, shape)
    _check_vector(lens_shape, _MSG_P1)
    if lens.size >= 2147483647:
        raise InvalidArgumentError(_MSG_P2)
    if vdim == 0:
        raise InvalidArgumentError(_MSG_P3.replace("{shape}", "[]"))
    total = lens.sum()
    if total != vshape[0]:
        raise InvalidArgumentError(_MSG_P4.replace("{total}", str(total)).replace("{shape}", _shape_str(vshape, vdim)))
    st = split(s, flat, lens, vshape, numeric, False)
    if st:
        raise_status(s, st)
    if same:
        _class_merge(s, shape)
    return 0


@_kernels._kernel()
def jit_closed(s):  # pragma: no cover - users' compiled code
    """Raise TF's error for an op on the closed array ``s`` (``size()`` in compiled code)."""
    raise InvalidArgumentError(_MSG_T1.replace("{name}", s.name))


def _new_name(base):
    """Return a new array's unique name (the registry's counter; called from compiled code in object mode)."""
    return _registry.new_name(base)


@register_jitable
def _unique_name(base):
    """Return a new array's unique name from compiled code (:func:`_new_name`, in object mode)."""
    with objmode(uname="unicode_type"):
        uname = _new_name(base)
    return uname


@_kernels._kernel()
def jit_new(n, dyn, car, infer, es, nones, itemsize, code, slack, factor, parmin, base):  # pragma: no cover
    """``numba_ta.TensorArray(...)`` in compiled code: checks, then a new struct (its name from the registry).

    ``es`` holds the ``element_shape`` given (its ``None`` dimensions where ``nones`` is set);
    the other arguments are the class's, and the dtype's item size and code.
    """
    for k in range(es.size):
        if nones[k]:
            es[k] = -1
        elif es[k] < 0:
            raise ValueError(_MSG_DIMS_NEGATIVE.replace("{dim}", str(es[k])))
    if n < 0:
        raise InvalidArgumentError(_MSG_SIZE_NEGATIVE)
    uname = _unique_name(base)
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
    h[ITEMSIZE] = itemsize
    h[DTYPE] = code
    h[SLACK] = slack
    h[FACTOR] = factor
    h[PARMIN] = parmin
    return StateProxy(np.empty(0, np.uint8), np.zeros(n, np.uint8), np.zeros(n, np.int32), np.zeros(n, np.int64), h,
                      np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64), es, es.copy(), uname,
                      np.zeros(_ERR_WORDS, np.int64))  # fmt: skip
