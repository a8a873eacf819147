"""The engine's bulk kernels as C functions, called from compiled code through a table of their addresses.

The engine's many-element ops (gather, stack, concat, scatter, unstack, split) copy their
elements with the parallel segment kernels of :mod:`numba_ta.core.kernels`, and a scatter or
split into a gradient array sums with one kernel per dtype.  The engine calls them natively:
each is wrapped in a C function (``numba.cfunc``: pointers and int64 lengths, ``numba.carray``
inside) whose address this module publishes in :data:`TABLE`, and the engine's code calls
``TABLE[slot]`` through a function pointer (:func:`call`).  No Python runs between the
kernel's effect and the op's commit, so a signal's handler (a ``KeyboardInterrupt``) can only
run before the compiled op or after it, and the op is undone or done whole.

The engine's code is cached on disk and shipped in the wheel, so it holds no address: the
table is an external symbol, ``numba_ta_kernel_table_v1``, which LLVM resolves when it loads
the engine in each process (``llvmlite.binding.add_symbol`` at this module's import).

The kernels are loaded lazily, as parallel code must be: loading a parallel kernel starts
Numba's threading layer, and a process that started the GNU OpenMP layer cannot run parallel
code in its forked children (Numba terminates them).  So nothing is loaded at import or by a
small op.  A slot still empty (0) makes the engine take its serial path and note the slot in
the table's ``wanted`` half; the Python layer fills the slots an op may need before a bulk op
whose value or array holds at least ``hdr[H.PARMIN]`` items (:func:`prepare_read`,
:func:`prepare_write`) and those the engine noted after it (:func:`load_wanted`).

Slots: :data:`GATHER` (``gather_segments_par`` on bytes), :data:`WRITE` (``write_segments_par``
on bytes), ``sum_slot(code, parallel)`` (``store_or_add_segments[_par]`` on the items of
``DTYPES[code]``).  Every C function has the signature of :data:`SIGNATURE`:
``(big, nbig, small, nsmall, big_offsets, small_offsets, sizes, add, m)``.

With ``NUMBA_DISABLE_JIT=1`` the engine runs as Python, and :func:`call` calls the Python
kernels directly (nothing is loaded, and nothing registered).
"""

from __future__ import annotations

import threading

import numpy as np
from llvmlite import ir
from numba import carray, types
from numba.core import cgutils, config
from numba.core.extending import intrinsic, register_jitable

from numba_ta.core import header as H
from numba_ta.core import kernels, numba_compat
from numba_ta.core.state import DENSE, DTYPES, F16_CODE, SUM_BATCH

#: The table's symbol name (versioned: bump it when a slot's meaning or the signature changes).
SYMBOL = "numba_ta_kernel_table_v1"

GATHER = 0  #: ``gather_segments_par``: bytes of ``big`` (offsets -1: zeros) to ``small``
WRITE = 1  #: ``write_segments_par``: bytes of ``small`` into ``big``
_SUM_PAR = 2  # + dtype code: store_or_add_segments_par on items of DTYPES[code]
_SUM = _SUM_PAR + len(DTYPES)  # + dtype code: store_or_add_segments (serial)
NSLOTS = _SUM + len(DTYPES)
_WANTED = NSLOTS  # TABLE[_WANTED + slot]: the engine found the slot empty when it wanted it
ANY = 2 * NSLOTS  #: ``TABLE[ANY]``: some slot is wanted (:func:`load_wanted` loads them)
_ANY = ANY

#: The kernels' addresses (0: not loaded), then the slots the engine wanted, then "any wanted".
TABLE = np.zeros(2 * NSLOTS + 1, np.int64)

_P8 = types.CPointer(types.uint8)
_P64 = types.CPointer(types.int64)
#: The C signature of every kernel of the table.
SIGNATURE = types.void(_P8, types.int64, _P8, types.int64, _P64, _P64, _P64, _P8, types.int64)

_JIT = not getattr(config, "DISABLE_JIT", False)
if _JIT:
    import llvmlite.binding as _llb

    _llb.add_symbol(SYMBOL, TABLE.ctypes.data)  # before any engine code loads (the engine imports this module)


@register_jitable
def sum_slot(code, parallel):
    """Return the slot of the sums of ``DTYPES[code]`` items (parallel or serial)."""
    return (_SUM_PAR if parallel else _SUM) + code


def _table_ref(builder):
    """Return the table's external global in ``builder``'s module (declared once per module)."""
    mod = builder.module
    gv = mod.globals.get(SYMBOL)
    if gv is None:
        gv = ir.GlobalVariable(mod, ir.ArrayType(ir.IntType(64), TABLE.size), name=SYMBOL)
        gv.linkage = "external"
    return gv


def _slot_ptr(context, builder, gv, slot, slot_type, offset=0):
    i64 = ir.IntType(64)
    k = context.cast(builder, slot, slot_type, types.int64)
    if offset:
        k = builder.add(k, ir.Constant(i64, offset))
    return builder.gep(gv, [ir.Constant(ir.IntType(32), 0), k], inbounds=True)


def _note_wanted(context, builder, gv, slot, slot_type):
    one = ir.Constant(ir.IntType(64), 1)
    builder.store_atomic(one, _slot_ptr(context, builder, gv, slot, slot_type, _WANTED), "monotonic", 8)
    builder.store_atomic(one, builder.gep(gv, [ir.Constant(ir.IntType(32), 0), ir.Constant(ir.IntType(64), _ANY)]),
                         "monotonic", 8)  # fmt: skip


@intrinsic
def _ready(typingctx, slot):
    sig = types.boolean(slot)

    def codegen(context, builder, sig, args):
        gv = _table_ref(builder)
        fp = builder.load_atomic(_slot_ptr(context, builder, gv, args[0], sig.args[0]), "acquire", 8)
        filled = builder.icmp_unsigned("!=", fp, ir.Constant(ir.IntType(64), 0))
        with builder.if_then(builder.not_(filled), likely=False):
            _note_wanted(context, builder, gv, args[0], sig.args[0])
        return filled

    return sig, codegen


@intrinsic
def _call(typingctx, slot, big, small, boff, soff, sizes, add, m):
    for a in (big, small, boff, soff, sizes, add):
        if not isinstance(a, types.Array) or a.ndim != 1 or a.layout != "C":
            return None
    sig = types.boolean(slot, big, small, boff, soff, sizes, add, m)

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        gv = _table_ref(builder)
        fp = builder.load_atomic(_slot_ptr(context, builder, gv, args[0], sig.args[0]), "acquire", 8)
        filled = builder.icmp_unsigned("!=", fp, ir.Constant(i64, 0))
        with builder.if_then(filled, likely=True):
            arys = [context.make_array(t)(context, builder, value=v)
                    for t, v in zip(sig.args[1:7], args[1:7], strict=True)]  # fmt: skip
            i8p, i64p = cgutils.voidptr_t, i64.as_pointer()
            fnty = ir.FunctionType(ir.VoidType(), [i8p, i64, i8p, i64, i64p, i64p, i64p, i8p, i64])
            fn = builder.inttoptr(fp, fnty.as_pointer())
            builder.call(fn, [
                builder.bitcast(arys[0].data, i8p), arys[0].nitems,
                builder.bitcast(arys[1].data, i8p), arys[1].nitems,
                builder.bitcast(arys[2].data, i64p), builder.bitcast(arys[3].data, i64p),
                builder.bitcast(arys[4].data, i64p), builder.bitcast(arys[5].data, i8p),
                context.cast(builder, args[7], sig.args[7], types.int64),
            ])  # fmt: skip
        return filled

    return sig, codegen


@register_jitable
def ready(slot):
    """Return whether the kernel of ``slot`` is loaded; if not, note it as wanted (the Python layer loads it).

    Parameters
    ----------
    slot : int
        :data:`GATHER`, :data:`WRITE` or a :func:`sum_slot`.

    Returns
    -------
    bool
        True when :func:`call` runs the kernel; False: the caller takes its serial path.
    """
    return _ready(slot)


@register_jitable
def call(slot, big, small, boff, soff, sizes, add, m):
    """Run the kernel of ``slot`` natively (no Python runs); return False, doing nothing, when it is not loaded.

    Parameters
    ----------
    slot : int
        :data:`GATHER`, :data:`WRITE` or a :func:`sum_slot`.
    big : (n,) uint8 ndarray
        The data buffer: read from (gather) or written (the others).
    small : (k,) uint8 ndarray
        The op's result (gather), or its value's items (the others).
    boff, soff, sizes : (m,) int64 ndarray
        Start of each element in ``big`` (gather: -1 reads zeros) and in ``small``, and its
        size: in bytes for :data:`GATHER` and :data:`WRITE`, in items for the sums.
    add : (m,) bool ndarray
        For the sums: add into ``big`` instead of storing (any array of ``m`` bytes otherwise).
    m : int
        The number of elements.

    Returns
    -------
    bool
        Whether the kernel ran.
    """
    return _call(slot, big, small, boff, soff, sizes, add, m)


# --------------------------------------------------------------------------- the C functions
def _gather_c(big, nbig, small, nsmall, boff, soff, sizes, add, m):
    kernels.gather_segments_par(carray(big, nbig), carray(boff, m), carray(sizes, m), carray(soff, m),
                                carray(small, nsmall))  # fmt: skip


def _write_c(big, nbig, small, nsmall, boff, soff, sizes, add, m):
    kernels.write_segments_par(carray(big, nbig), carray(boff, m), carray(small, nsmall), carray(soff, m),
                               carray(sizes, m))  # fmt: skip


def _sums_c(t, parallel):
    """Return the C function of the sums of items of type ``t`` (``parallel``: on Numba's threads)."""
    isz = np.dtype(t).itemsize

    if parallel:

        def sums(big, nbig, small, nsmall, boff, soff, sizes, add, m):
            kernels.store_or_add_segments_par(
                carray(big, nbig - nbig % isz).view(t), carray(boff, m), carray(small, nsmall - nsmall % isz).view(t),
                carray(soff, m), carray(sizes, m), carray(add, m).view(np.bool_),
            )  # fmt: skip

    else:

        def sums(big, nbig, small, nsmall, boff, soff, sizes, add, m):
            kernels.store_or_add_segments(
                carray(big, nbig - nbig % isz).view(t), carray(boff, m), carray(small, nsmall - nsmall % isz).view(t),
                carray(soff, m), carray(sizes, m), carray(add, m).view(np.bool_),
            )  # fmt: skip

    # Numba's cache keys a function by its qualified name and its closure's contents (``t``)
    sums.__qualname__ = f"_sums_c.{'par' if parallel else 'serial'}"
    return sums


def _summable(code):
    return 0 < code < len(DTYPES) and code != F16_CODE and DTYPES[code].kind in "iufc"


def _python_of(slot):
    """Return the Python function the C function of ``slot`` wraps (None: no such slot)."""
    if slot == GATHER:
        return _gather_c
    if slot == WRITE:
        return _write_c
    if _SUM_PAR <= slot < NSLOTS:
        parallel = slot < _SUM
        code = slot - (_SUM_PAR if parallel else _SUM)
        if _summable(code):
            return _sums_c(DTYPES[code].type, parallel)
    return None


# --------------------------------------------------------------------------- loading (Python)
_loaded: dict[int, object] = {}  # slot -> its CFunc (kept alive: the table holds its address)
_lock = threading.Lock()


def _new_cfunc(func):
    """Compile ``func`` as a C function of :data:`SIGNATURE`, cached (in the shipped folder first)."""
    from numba_ta.core import cache as _cache

    try:
        cache = _cache.KernelCache(func, True)
    except RuntimeError as e:  # no writable cache directory: the shipped folder only
        if "no locator available" not in str(e):
            raise
        cache = _cache.KernelCache(func, False)
    return numba_compat.new_cfunc(func, SIGNATURE, cache, nogil=True)


def load(slot):
    """Load (or compile) the kernel of ``slot`` and publish its address in :data:`TABLE`; idempotent.

    Loading a parallel kernel starts Numba's threading layer first (a C function loaded from
    Numba's cache does not start it, unlike a dispatcher: its code would then call into a
    layer not loaded).  Numba's loader runs with
    signals held back (:func:`numba_ta.core.kernels.holding_signals`), as every kernel's
    load does.  Does nothing with ``NUMBA_DISABLE_JIT=1``.

    Parameters
    ----------
    slot : int
        :data:`GATHER`, :data:`WRITE` or a :func:`sum_slot`.

    Returns
    -------
    None
    """
    if not _JIT or TABLE[slot]:
        return
    func = _python_of(slot)
    if func is None:
        return
    with _lock:
        if TABLE[slot]:
            return
        if slot < _SUM:  # a parallel kernel: Numba's threading layer first (its symbols, its threads)
            kernels.holding_signals(numba_compat.launch_threads)
        cf = kernels.holding_signals(_new_cfunc, func)
        _loaded[slot] = cf  # alive before its address is published
        TABLE[slot] = cf.address
        TABLE[_WANTED + slot] = 0


def load_wanted():
    """Load every kernel the engine wanted while its slot was empty (:func:`ready`).

    Returns
    -------
    None
    """
    if not TABLE[_ANY]:
        return
    TABLE[_ANY] = 0
    for slot in np.flatnonzero(TABLE[_WANTED : _WANTED + NSLOTS]).tolist():
        load(slot)


def prepare_read(hdr, m):
    """Before a gather, stack or concat of ``m`` elements: load the gather kernel when the op may use it.

    The op's size is estimated from the header: ``m`` rows of a dense buffer, else the items
    of the ragged buffer.  An op the estimate misses runs serially, and the engine notes the
    kernel as wanted (:func:`load_wanted` loads it after the op).

    Parameters
    ----------
    hdr : (NHDR,) int64 ndarray
        The array's header (its layout and ``PARMIN``).
    m : int
        The elements read.

    Returns
    -------
    None
    """
    if m > 1 and not TABLE[GATHER]:
        items = m * hdr[H.WIDTH] if hdr[H.LAYOUT] == DENSE else hdr[H.USED]
        if items >= hdr[H.PARMIN]:
            load(GATHER)


def prepare_write(hdr, items, m):
    """Before a scatter, unstack or split of ``items`` items into ``m`` elements: load the kernels it may run.

    The copy kernel from ``hdr[H.PARMIN]`` items; in a gradient array also the sums of its
    dtype (parallel from ``PARMIN`` items, serial from ``SUM_BATCH`` elements).

    Parameters
    ----------
    hdr : (NHDR,) int64 ndarray
        The array's header.
    items : int
        The items of the value written.
    m : int
        The elements written.

    Returns
    -------
    None
    """
    if m < 2:
        return
    par = items >= hdr[H.PARMIN]
    if par and not TABLE[WRITE]:
        load(WRITE)
    if hdr[H.ISGRAD]:
        code = int(hdr[H.DTYPE])
        if par and not TABLE[_SUM_PAR + code]:
            load(_SUM_PAR + code)
        if m >= SUM_BATCH and not TABLE[_SUM + code]:
            load(_SUM + code)


if not _JIT:  # the engine runs as Python: the kernels are called as Python functions

    def ready(slot):
        """Return True (the Python kernels are always there)."""
        return True

    def call(slot, big, small, boff, soff, sizes, add, m):
        """Run the Python kernel of ``slot`` (see the compiled :func:`call`); return True."""
        if slot == GATHER:
            kernels.gather_segments(big, boff, sizes, soff, small)
        elif slot == WRITE:
            kernels.write_segments(big, boff, small, soff, sizes)
        else:
            t = DTYPES[slot - (_SUM_PAR if slot < _SUM else _SUM)]
            isz = t.itemsize
            kernels.store_or_add_segments(big[: big.size - big.size % isz].view(t), boff,
                                          small[: small.size - small.size % isz].view(t), soff, sizes, add)  # fmt: skip
        return True

