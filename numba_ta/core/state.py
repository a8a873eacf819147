"""The state of an array or a list: one Numba struct of buffers and a header of scalars.

An array's state is a ``numba.experimental.structref`` (:func:`state_type`: one
type for arrays of every dtype; users' compiled code sees the same struct as
``numba_ta.jit.extension.TensorArrayType``, same fields, one type per dtype and
element rank) with these fields (:data:`FIELDS`):

``data``, ``state``, ``shape_id``, ``offsets``
    The flat element buffer and the per-element metadata (state bits, interned
    shape id, data offset), laid out as :mod:`numba_ta.core.memory` describes.
    ``data`` holds the items' bytes (``Storage.data`` is a view of it as the
    array's dtype): offsets, sizes and the layout's width count items,
    ``hdr[H.ITEMSIZE]`` bytes each.  So the state machine is compiled once, not
    once per dtype; only a gradient sum looks at the items' type
    (:mod:`numba_ta.core.sums`, by ``hdr[H.DTYPE]``).
``hdr``
    The scalars (size, capacity, layout, flags, dtype...), one int64 array
    indexed by the slots of :mod:`numba_ta.core.header` (``hdr[H.SIZE]``;
    :func:`numba_ta.core.header.new` makes one).
``dims``, ``starts``, ``items``
    The interned element shapes, of any rank: shape ``sid`` is
    ``dims[starts[sid]:starts[sid + 1]]`` and holds ``items[sid]`` items
    (``hdr[H.NSHAPES]`` of them; the arrays have spare room).
``es``
    The array's element shape (TF's ``element_shape_``): its dimensions, -1 for
    an unknown one, when ``hdr[H.ES_KNOWN]``; its rank is unknown otherwise.
``ces``
    The class's element shape (``TensorArray.element_shape``), when
    ``hdr[H.CLASS_KNOWN]``: what the class's ops check and merge.
``name``
    The array's name (for the messages).
``err``
    The status record of the last op that failed (scratch, not state:
    :mod:`numba_ta.core.status`).

An element's state is a byte of bits: ``WRITTEN`` written, ``READ`` read, ``CLEARED`` cleared
(read with ``clear_after_read``), ``DATA`` holds data; a TensorList's slot adds
``HELD_DATA`` (:mod:`numba_ta.tensor_list.listengine`).  Nothing in the layout depends
on the element rank, so one struct holds any array, elements of several ranks
included.  Changes that replace a field (growth, an interned shape, a new
element shape) bump ``hdr[H.GEN]``: the Python layer's numpy views follow it.

Also here: the dtype table (:data:`DTYPES`), the borrowed-pointer intrinsics the
compiled code moves bytes with, and allocation (large buffers advised to huge
pages, as numpy's are).  With ``NUMBA_DISABLE_JIT=1`` the struct is a plain
Python object with the same fields.
"""

from __future__ import annotations

import operator
import sys

import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils, config
from numba.core.extending import intrinsic, register_jitable
from numba.experimental import structref

from numba_ta.core import kernels
from numba_ta.core import numba_compat as _numba_compat
from numba_ta.tf.dtypes import tf_name

# The dtypes an array can have; ``hdr[H.DTYPE]`` is a position in this tuple.  ``data`` holds the
# elements' bytes whatever the dtype, so the struct has one Numba type and the state machine
# compiles once for all dtypes; only a gradient sum looks at the items' type (``add_items``).
DTYPES = tuple(
    np.dtype(t)
    for t in (
        np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
        np.float16, np.float32, np.float64, np.complex64, np.complex128,
    )
)  # fmt: skip
_DTYPE_NAMES = tuple(tf_name(t) for t in DTYPES)
F16_CODE = DTYPES.index(np.dtype(np.float16))  # sums convert each item (Numba has no float16)
SUM_BATCH = 256  # elements from which a scatter's or split's sums take one kernel call (core.ckernels)

# an element's state bits: written, read, cleared (read with clear_after_read), holds data; a
# TensorList slot whose dense row (or run) has held data (numba_ta.tensor_list.listengine)
WRITTEN, READ, CLEARED, DATA, HELD_DATA = 1, 2, 4, 8, 16
STORED = WRITTEN | DATA  # an element written that holds its data (read or not)
NOT_DATA = 0xFF ^ DATA  # clears the data bit of a uint8 state (~DATA is negative: numpy refuses it for uint8)
NO_BUFFER, DENSE, RAGGED = 0, 1, 2  # hdr[H.LAYOUT]: no buffer yet, dense rows, ragged runs
INT64_MAX = 2**63 - 1
U16, U32, U64 = np.zeros(0, np.uint16), np.zeros(0, np.uint32), np.zeros(0, np.uint64)  # item types for cast_ptr
NO_I64 = np.zeros(0, np.int64)
ERR_WORDS = 16  # a new array's err buffer (longer records replace it)


# --------------------------------------------------------------------------- the state type
@structref.register
class StateType(types.StructRef):
    """The state struct's Numba type, as the Python layer holds it (boxed as a :class:`StateProxy`)."""

    def preprocess_fields(self, fields):
        """Return ``fields`` with every literal type made plain (``types.unliteral``).

        Numba calls it when it makes the type.  Fields typed from constants in compiled
        code (``Literal[int](3)``) would otherwise give each constant a struct type of
        its own.

        Parameters
        ----------
        fields : sequence of (str, numba.types.Type)
            The struct's field names and types.

        Returns
        -------
        tuple of (str, numba.types.Type)
            The same names, in order, with their types unliteral.
        """
        return tuple((n, types.unliteral(t)) for n, t in fields)


class StateProxy(structref.StructRefProxy):
    """A Python reference to a state struct (held by the Python layer; never seen by users)."""


# Numba's dispatcher reads an argument's ``_numba_type_`` in C with ``PyObject_HasAttr``, which
# clears any exception the attribute raises: a KeyboardInterrupt that lands in StructRefProxy's
# Python property (every engine call passes a state) was lost, and the call went on.  The same
# attribute as a C getter runs no Python code, so no signal handler can run inside it.
_numba_compat.set_numba_type(StateProxy, property(operator.attrgetter("_type")))


FIELDS = ("data", "state", "shape_id", "offsets", "hdr", "dims", "starts", "items", "es", "ces", "name", "err")
structref.define_constructor(StateProxy, StateType, list(FIELDS))
_numba_compat.define_boxing(StateType, StateProxy)  # define_proxy's boxing, with the interrupt-safe call


def field_types():
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


_STATE_TYPE = StateType(field_types())


def state_type():
    """Return the struct type (one for arrays of every dtype)."""
    return _STATE_TYPE


def dtype_code(dtype):
    """Return ``hdr[H.DTYPE]`` for arrays of ``dtype`` (its position in :data:`DTYPES`)."""
    return DTYPES.index(np.dtype(dtype))


# --------------------------------------------------------------------------- borrowed pointers
def _pointer_count(context, builder, arrty, dataval, name):
    """Return ``(data pointer, item count)`` of the array field ``name`` of the struct's data ``dataval`` (codegen)."""
    ary = context.make_array(arrty)(context, builder, value=getattr(dataval, name))
    return ary.data, ary.nitems


@intrinsic
def borrow(typingctx, s, field):
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
        dataval = _numba_compat.struct_data(context, builder, sig.args[0], args[0])
        return context.make_tuple(builder, sig.return_type, _pointer_count(context, builder, arrty, dataval, name))

    return sig, codegen


# the array fields :func:`borrow_fields` returns, in its order
BORROWED = ("hdr", "state", "data", "shape_id", "offsets", "dims", "starts", "ces")


@intrinsic
def borrow_fields(typingctx, s):
    """``(pointer, item count)`` of each field of :data:`BORROWED` of the struct ``s``, flat in one tuple.

    :func:`borrow` for the per-element fast paths of compiled code: a function that
    takes this tuple instead of the struct takes no reference (its callers' reference
    counting costs more than a row copy: an atomic add per reference).
    """
    fd = s.field_dict
    sig = types.Tuple([t for n in BORROWED for t in (types.CPointer(fd[n].dtype), types.intp)])(s)

    def codegen(context, builder, sig, args):
        dataval = _numba_compat.struct_data(context, builder, sig.args[0], args[0])
        values = [x for n in BORROWED for x in _pointer_count(context, builder, fd[n], dataval, n)]
        return context.make_tuple(builder, sig.return_type, values)

    return sig, codegen


@intrinsic
def data_ptr(typingctx, a):
    """Return the data pointer of the array ``a`` (borrowed: valid while ``a`` is alive)."""
    sig = types.CPointer(a.dtype)(a)

    def codegen(context, builder, sig, args):
        return context.make_array(sig.args[0])(context, builder, value=args[0]).data

    return sig, codegen


@intrinsic
def move_bytes(typingctx, dst, d0, src, s0, n):
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
    def advise_huge(a):
        """Return ``a`` (huge-page advice is Linux's)."""
        return a

else:

    @register_jitable
    def advise_huge(a):
        """Return ``a``, its bytes advised to huge pages when it holds 4 MiB or more (as numpy does its own)."""
        if a.nbytes >= _HUGE_PAGE_MIN:
            _madvise_huge(a)
        return a


@register_jitable
def _alloc(n, dtype, zeros):
    """Return ``n`` items of ``dtype``, zeroed with ``zeros``; a large one advised to huge pages (:func:`advise_huge`).

    Numba's ``np.zeros`` writes every byte as well; zeroing after the advice takes the huge pages.
    """
    a = advise_huge(np.empty(n, dtype))
    if zeros:
        a[:] = 0
    return a


@intrinsic
def cast_ptr(typingctx, p, like):
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
        err = np.zeros(ERR_WORDS, np.int64)
        return _PyState(data, state, shape_id, offsets, hdr, dims, starts, items, es, ces, name, err)

    def borrow(s, field):  # type: ignore[misc]  # the intrinsics' stand-ins
        """Return the struct's array ``field`` and its size (compiled: its data pointer, not a reference)."""
        a = getattr(s, field)
        return a, a.size

    def borrow_fields(s):  # type: ignore[misc]
        """Return each field of :data:`BORROWED` and its size, flat (compiled: data pointers)."""
        return tuple(x for n in BORROWED for x in borrow(s, n))

    def data_ptr(a):  # type: ignore[misc]
        """Return the array ``a`` as a flat view (compiled: the pointer to its first item)."""
        return a.reshape(-1)

    def cast_ptr(p, like):  # type: ignore[misc]
        """Return the bytes ``p`` viewed as items of ``like``'s dtype (compiled: the pointer cast)."""
        return p.view(like.dtype)

    def move_bytes(dst, d0, src, s0, n):  # type: ignore[misc]
        """Copy ``src[s0:s0 + n]`` to ``dst[d0:d0 + n]`` (compiled: a memmove between pointers)."""
        dst[d0 : d0 + n] = src[s0 : s0 + n]

    def advise_huge(a):  # numpy advises its own allocations
        """Return ``a`` (numpy advised its own allocation already)."""
        return a

    def _alloc(n, dtype, zeros):  # numpy's zeros map zeroed pages lazily
        return (np.zeros if zeros else np.empty)(n, dtype)

else:
    # a dispatcher types its arguments in C; StateProxy(...) from Python would type them in Python (~100 us)
    @kernels.kernel()
    def new_state(data, state, shape_id, offsets, hdr, dims, starts, items, es, ces, name):
        """Return a new state struct holding the given fields (in :data:`FIELDS` order) and an empty ``err``."""
        err = np.zeros(ERR_WORDS, np.int64)
        return StateProxy(data, state, shape_id, offsets, hdr, dims, starts, items, es, ces, name, err)


@kernels.kernel()
def fields_of(s):
    """Return the struct's fields, in :data:`FIELDS` order (its buffers are shared, not copied)."""
    return s.data, s.state, s.shape_id, s.offsets, s.hdr, s.dims, s.starts, s.items, s.es, s.ces, s.name, s.err
