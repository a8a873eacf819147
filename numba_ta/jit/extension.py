"""TensorArray inside ``@numba.njit`` code: the engine's state struct as a Numba type, with the class's methods.

A :class:`numba_ta.TensorArray` passed to a compiled function enters it as a
``TensorArrayType`` value: the engine's state struct (:mod:`numba_ta.core.state`),
whose fields are the array's own buffers (``data``, ``state``, ``shape_id``,
``offsets``: the same numpy arrays the Python layer uses, shared, not copied),
its scalars (``hdr``), its interned element shapes, its element shape and the
class's element shape.  The methods below are the class's: each casts its
arguments, tries its per-element fast path (a dense row written or read,
through borrowed pointers) inline, and otherwise calls the op's engine entry
(``numba_ta.jit.entries.jit_*``: the class's shape check and merge around the
engine's op, which runs TF's checks in TF's order and raises TF's error
classes and texts) by its symbol name (:mod:`numba_ta.jit.abi`), so the engine is
compiled once, not into every user function.

Registration
------------
This module and :mod:`numba_ta.jit.abi` are numba_ta's whole Numba extension: the class
(:mod:`numba_ta.tensor_array`) knows nothing of Numba.  Importing this module registers
nothing; :func:`init` registers everything (typeof, the type's data model, unboxing and
boxing, the methods, the constructor), once.  Numba calls it through numba_ta's
``numba_extensions`` entry point (``init = "numba_ta.jit.extension:init"`` in ``pyproject.toml``)
before it first compiles or types anything;
``import numba_ta`` calls it itself when that entry point is not registered (a source
tree on ``sys.path``, not installed).

Entering and leaving
--------------------
Unboxing (the call) runs :func:`_enter_meminfo` on the argument: it takes the
array's lock, copies the class's element shape and flags into the struct and
returns the struct (its meminfo), which is the array's one state (nothing is
copied).  The argument's cleanup (after the call, whether it returned or
raised) runs :func:`_leave`:
it takes over a change of the class's element shape made in compiled code and
releases the lock.  So a Python-level op and a compiled op on the same array
see one state, and a compiled call holds the array for its whole duration:
another thread's op on that array waits for it (the thread-safety rule).  A call's
arrays are locked in one global order, whatever their argument order
(:func:`_wait_in_order`), so calls over several arrays from several threads cannot
deadlock; a Python op from inside the call (objmode) on an array it holds raises
``RuntimeError`` (``Storage.check_not_held``) instead of waiting for the call.

Element rank
------------
Numba types values statically, so ``read`` must know the rank of the
elements: an array can enter compiled code once its element rank is known
(an ``element_shape`` with a known rank, or a write).  Until then passing it
raises ``TypeError``.  The rank is a parameter of the type, not of the struct:
an array whose elements have several ranks (raw ops allow it) can enter, and
an op returning an element of another rank than the type's raises
``NotImplementedError`` without changing anything.
"""

from __future__ import annotations

import operator
import os
import sys
import threading
import weakref

import numpy as np
from llvmlite import ir
from numba import literal_unroll, types
from numba.core import cgutils
from numba.core.errors import TypingError
from numba.core.extending import (
    NativeValue,
    box,
    overload,
    overload_attribute,
    overload_method,
    register_jitable,
    unbox,
)
from numba.experimental import structref
from numba.extending import typeof_impl
from numba.np.numpy_support import as_dtype, from_dtype

from numba_ta.core import ckernels as _ckernels
from numba_ta.core import config as _config
from numba_ta.core import header as H
from numba_ta.core import numba_compat as _numba_compat
from numba_ta.core.numba_compat import meminfo_of as _meminfo_of  # a C call: no Python frame per entry
from numba_ta.core.numba_compat import to_fixed_tuple, tuple_setitem
from numba_ta.core.shapes import shape_array
from numba_ta.core.state import (
    CLEARED,
    NOT_DATA,
    READ,
    STORED,
    StateProxy,
    StateType,
    advise_huge,
    borrow_fields,
    cast_ptr,
    data_ptr,
    dtype_code,
    field_types,
    fields_of,
    state_type,
)
from numba_ta.errors import CompiledTypeError, InvalidArgumentError
from numba_ta.jit import abi as _abi
from numba_ta.tensor_array import registry as _registry
from numba_ta.tensor_array import storage as _storage
from numba_ta.tensor_array.array import TensorArray
from numba_ta.tensor_array.engine import set_ces
from numba_ta.tensor_list.store import TensorListHandle
from numba_ta.tensor_list.tf2 import TF2TensorArray
from numba_ta.tf.messages import MESSAGES
from numba_ta.tf.tensor_shape import TensorShape

# message templates raised inline (the entries raise the others, numba_ta.jit.entries)
_S2 = MESSAGES["S2"][1]
_NO_SIZE = MESSAGES["NT-class-no-size"][1]


# --------------------------------------------------------------------------- registration
_REGISTRATIONS: list = []  # (decorator, its arguments and keywords, the decorated object): what init() applies
_init_lock = threading.Lock()
_initialized = False


def _on_init(decorator, *args, **kwargs):
    """Decorate with ``decorator(*args, **kwargs)`` (``decorator`` itself without arguments) when :func:`init` runs.

    Importing this module registers nothing with Numba: every registration of the
    extension is written as a decorator here and recorded, and :func:`init` applies them
    in the order of the source.
    """

    def record(obj):
        _REGISTRATIONS.append((decorator, args, kwargs, obj))
        return obj

    return record


def init() -> None:
    """Register TensorArray with Numba (the ``init`` of numba_ta's ``numba_extensions`` entry point).

    Registers its typeof (:func:`numba_type`), its Numba type's data model (the engine's
    struct), unboxing and boxing, the compiled methods and ``element_shape``, and
    ``numba_ta.TensorArray(...)`` in compiled code.  Numba calls it before it compiles or
    types anything in a process where numba_ta is installed (its entry point);
    ``import numba_ta`` calls it when the entry point is not registered (a source tree on
    ``sys.path``).  Idempotent and thread-safe; it compiles nothing.
    """
    global _initialized
    if _initialized:
        return
    with _init_lock:
        if _initialized:
            return
        for decorator, args, kwargs, obj in _REGISTRATIONS:
            (decorator(*args, **kwargs) if args or kwargs else decorator)(obj)
        _initialized = True


# --------------------------------------------------------------------------- the type
@_on_init(structref.register)
class TensorArrayType(types.StructRef):
    """Numba type of a :class:`numba_ta.TensorArray` inside compiled code: the engine's state struct.

    Its fields are the engine's (:func:`numba_ta.core.state.field_types`), so the struct the
    Python layer holds is the struct users' code gets.  The struct holds the items'
    bytes whatever their dtype; ``dtype``, the Numba type of the items, and ``ndim``,
    the element rank its methods return, are parameters of the type.  Its name, what
    error messages print, is short (``TensorArray(float32, ndim=1)``); its ``key``, what
    Numba tells types apart by, holds the fields and :data:`numba_ta.jit.abi.ABI_KEY`
    too: a user's function cached with an array argument by a numba_ta of another
    interface has another signature, so Numba's cache misses and compiles it again (even
    one that calls no engine entry).
    """

    def __init__(self, fields, ndim=0, dtype=types.float64):
        super().__init__(fields)
        self.ndim = int(ndim)
        self.dtype = dtype
        self.name = f"TensorArray({dtype}, ndim={self.ndim})"

    @property
    def key(self):
        """What makes two types one: the dtype, the rank, the fields and the interface (:data:`ABI_KEY`)."""
        return ("numba_ta.TensorArray", str(self.dtype), self.ndim, _abi.ABI_KEY, tuple(self.field_dict.items()))

    preprocess_fields = StateType.preprocess_fields  # literal field types made plain, as the engine's struct


_TYPES: dict = {}


def array_type(dtype, ndim):
    """Return the Numba type of an array of ``dtype`` whose elements have ``ndim`` dimensions."""
    key = (np.dtype(dtype), int(ndim))
    t = _TYPES.get(key)
    if t is None:
        t = _TYPES[key] = TensorArrayType(field_types(), key[1], from_dtype(key[0]))
    return t


# --------------------------------------------------------------------------- entering and leaving (Python side)
class _Call:
    """What an array keeps for compiled calls (``Storage._jit``): the running call's object and the class's shape.

    The thread whose compiled call holds the array is ``Storage.held``, which the Python ops check.
    """

    __slots__ = ("meminfo", "ta", "cell", "type", "stack", "__weakref__")

    def __init__(self, meminfo):
        self.meminfo = meminfo  # the state struct's meminfo (the struct is the array's for its life)
        self.ta = None  # a weak reference to the TensorArray object of the current call (for boxing)
        self.cell = None  # the class's element shape last copied into the struct's ces
        # .type: the array's Numba type, set once its element shape (so its rank) is known; unset before,
        # so that TensorArray._numba_type_ (a C getter, _typeof_in_c) raises AttributeError
        self.stack = None  # the entries of the thread whose call holds the array (_Thread.stack)


_ARRAYS = _registry.WeakValues()  # struct address -> its Storage


def _rank(storage, ta):
    """Return the element rank of ``storage`` (its element shape's, the class's, or a written element's) or None."""
    es = storage.element_shape
    if es is not None:
        return len(es)
    cell = ta._element_shape[0]._dims if ta is not None else None
    if cell is not None:
        return len(cell)
    shapes = storage.shapes
    if shapes:
        return len(shapes[0])
    return None


def numba_type(ta):
    """Return the Numba type of ``ta`` as an argument of compiled code (its ``typeof``).

    Raises ``TypeError`` while its element rank is unknown, and for float16 arrays.
    """
    storage = ta._handle._storage
    call = storage._jit
    t = getattr(call, "type", None)
    if t is not None:
        return t
    ndim = _rank(storage, ta)
    t = _TYPES.get((storage.dtype, ndim))
    if t is not None:
        if call is not None and storage.element_shape is not None:  # the rank can no longer change
            call.type = t
        return t
    if ndim is None:
        raise TypeError(
            f"TensorArray {storage.name}: its element rank is not known yet, so it cannot be passed to compiled code "
            "(give it an element_shape, or write an element first)"
        )
    if storage.dtype == np.float16:
        raise TypeError(
            f"TensorArray {storage.name}: float16 arrays cannot be passed to compiled code (Numba has no float16)"
        )
    return array_type(storage.dtype, ndim)


@_on_init(typeof_impl.register, TensorArray)
def _typeof(val, c):
    """Numba's ``typeof`` of a TensorArray: :func:`numba_type` (the same type as argument and constant).

    A call of a compiled function runs it (from Numba's ``Dispatcher.typeof_pyval``) for
    an array argument whose type is not kept yet (:func:`_typeof_in_c`).
    """
    return numba_type(val)


def _typeof_in_c(cls):
    """Give ``cls`` (TensorArray) Numba's ``_numba_type_`` attribute, which the dispatcher reads in C.

    Numba's dispatcher types an argument that has ``_numba_type_`` without leaving C;
    any other argument goes through ``Dispatcher.typeof_pyval`` and :func:`_typeof`,
    about 0.7 us more per call of a compiled function (measured for a function returning
    ``ta.size()``: 1.75 us without this attribute, 1.05 us with it).  The attribute is a C
    getter of the type the array keeps once its rank is fixed (``_Call.type``), which raises
    AttributeError before: then Numba asks :func:`_typeof`.  It runs no Python code, as it
    must: Numba reads it with ``PyObject_HasAttr``, which clears what it raises, so a
    KeyboardInterrupt landing in a Python getter was lost (``numba_compat.set_numba_type``).
    The class's source knows nothing of Numba: this property is set on it by :func:`init`,
    with the other registrations.
    """
    getter = property(operator.attrgetter("_handle._storage._jit.type"), doc="The array's Numba type (numba_ta.jit).")
    _numba_compat.set_numba_type(cls, getter)
    return cls


_on_init(_typeof_in_c)(TensorArray)


# Taking the locks of a call's arrays, in one global order.  A compiled call holds each
# TensorArray argument's lock from its unboxing to its cleanup, and Numba unboxes the arguments
# one by one, in argument order: two threads calling f(a, b) and f(b, a) would each hold one lock
# and wait for the other's.  So the locks of one call are taken in one order (by the Storage's
# id, fixed while both arrays live): an argument whose lock is busy makes this call give back
# the locks it took for arguments that come later in that order, wait for the busy one, and take
# them again in order.  A thread then only ever waits for a lock while holding lower ones of
# its own call, and no cycle of waits can form.  The arrays of one call are told from those of
# an outer call still running in the same thread (a compiled call made from objmode code) by
# the Python frame that made the call (the unboxing runs in C, under the caller's frame): the
# entries of one call share it, a call made from objmode code has the objmode block's, and
# no two running calls of a thread have the same one.  An outer call's locks cannot be given
# back (its code is running): a wait that would close a cycle through them raises RuntimeError
# instead of hanging.
#
# A thread's entries are its _Thread's stack, innermost last: (storage, TensorArray object, the
# id of the calling frame) each.  An entry holds its array's lock while ``storage.held`` is the thread; a given-back
# one has ``held`` None (or another thread's, once that one took the lock).  While it holds the
# array, ``storage._jit.stack`` is the thread's stack, so the cleanup finds its entry with no
# thread-local lookup.
class _Thread:
    """A thread's compiled calls: its entries (``stack``) and its ident."""

    __slots__ = ("stack", "ident")

    def __init__(self):
        self.stack = []  # (storage, ta, id of the calling frame) of the arrays its calls hold or gave back
        self.ident = threading.get_ident()


_tls = threading.local()  # .calls: this thread's _Thread
_getframe = sys._getframe
_WAITING: dict = {}  # thread -> the Storage it waits for (the slow path's cycle check)
_wait_lock = threading.Lock()  # guards _WAITING's reads across threads
_POLL = 0.05  # seconds between a waiting thread's checks for a cycle
_ANY_WANTED = _ckernels.TABLE.data[_ckernels.ANY : _ckernels.ANY + 1]  # nonzero: the engine wanted a kernel
_get_ident = threading.get_ident
# A lock taken so that the code after it knows whether it has it, whatever signal handler raises:
# got.extend(filter(None, map(_ACQUIRE, (lock,), ...))) runs the acquire and appends True to `got`
# if it took the lock, in C, where no signal handler runs (after `taken = lock.acquire()`, one
# could raise before the store and leave the lock taken with nobody knowing).
_ACQUIRE = type(threading.Lock()).acquire  # the lock type's acquire(lock, blocking[, timeout])
_NO_WAIT = (False,)  # map()'s argument lists of acquire: blocking=False
_POLL_WAIT = ((True,), (_POLL,))  # blocking=True, timeout=_POLL


def _thread():
    """Return this thread's :class:`_Thread` (made at its first compiled call)."""
    try:
        return _tls.calls
    except AttributeError:
        t = _tls.calls = _Thread()
        return t


def _prepare(storage, ta, call):
    """Copy the class's element shape and flags into the struct, for a call that holds the array."""
    h = storage.hdr
    cell = ta._element_shape[0]._dims
    if cell is None:
        h[H.CLASS_KNOWN] = 0
    else:
        if cell != call.cell:
            set_ces(storage._s, np.array([-1 if d is None else d for d in cell], dtype=np.int64))
            call.cell = cell
        h[H.CLASS_KNOWN] = 1
    h[H.INFER], h[H.FASTSID], h[H.CES_CHANGED] = bool(ta._infer_shape), -1, 0
    h[H.PARMIN] = _config.PARALLEL_MIN_ELEMENTS


def _first_call(storage):
    """Return the array's :class:`_Call`, made at its first compiled call (under its lock: one per array)."""
    call = storage._jit
    if call is None:
        meminfo = _meminfo_of(storage._s)
        with _registry._lock:  # the table is shared by all arrays
            _ARRAYS[meminfo.data] = storage
        call = storage._jit = _Call(meminfo)
    return call


def _enter_meminfo(ta):
    """Unboxing: lock the array and return its state struct's meminfo (called from compiled code's wrapper).

    The struct is the array's one state; entering only copies the class's element
    shape and flags into it.  A busy lock is waited for in the global order
    (:func:`_wait_in_order`).  If anything fails once the lock is taken (an interrupt
    anywhere included), its mark is cleared and the lock released first, the entry forgotten
    after (an interrupt there leaves a stale entry, never a lock).
    """
    storage = ta._handle._storage
    me = _get_ident()
    if storage.held == me:
        raise RuntimeError(
            f"TensorArray {storage.name} is already in use by a compiled call of this thread (passed twice, or "
            "passed again from inside a compiled function): pass it once"
        )
    try:
        thread = _tls.calls
    except AttributeError:
        thread = _thread()
    try:
        caller = id(_getframe(1))  # the frame that called the compiled function: the call's mark on its entries
    except ValueError:  # called with no Python frame (from C code): one mark for all such calls
        caller = 0
    got: list = []  # [True] once this thread took the lock (see _ACQUIRE)
    try:
        got.extend(filter(None, map(_ACQUIRE, (storage.lock,), _NO_WAIT)))
        if not got:
            _wait_in_order(storage, thread, got, caller)
        call = storage._jit
        if call is None:
            call = _first_call(storage)
        _prepare(storage, ta, call)
        stack = call.stack = thread.stack
        stack.append((storage, ta, caller))
        storage.held = me
        ref = call.ta
        if ref is None or ref() is not ta:
            call.ta = weakref.ref(ta)
        return call.meminfo
    except BaseException:
        if got:
            storage.held = None  # (no signal handler runs between these two: no call between them)
            storage.lock.release()
        _drop(storage, thread)
        raise


def _drop(storage, thread):
    """Forget ``storage``'s entry in ``thread`` (if any) and its holder mark; the lock is the caller's."""
    stack = thread.stack
    for k in range(len(stack) - 1, -1, -1):
        if stack[k][0] is storage:
            del stack[k]
            break
    if storage.held == thread.ident:
        storage.held = None


def _wait_in_order(storage, thread, got, caller):
    """Take ``storage``'s busy lock without a deadlock: give back this call's later locks, wait, retake them.

    This call's entries (those of the calling frame ``caller``) whose Storage comes after ``storage`` in the order
    are released first (their ``held`` cleared first, so their cleanup does not release them) and
    taken again, in order, once ``storage``'s lock is held; True is appended to ``got`` (the
    caller's) the moment it is (see :data:`_ACQUIRE`).  While it waits, the thread checks every
    :data:`_POLL` seconds whether its wait closes a cycle through locks of outer calls it cannot
    give back; then it raises RuntimeError (the thread of the cycle with the largest ident does,
    the others go on waiting).  Signals are handled as usual while it waits: whatever a handler
    raises, each entry is marked as it is (held, or given back and not this thread's), and
    ``got`` says whether ``storage``'s lock is taken.
    """
    me = thread.ident
    later = []
    for e in thread.stack:  # (a loop, not a generator: an interrupt must reach the caller)
        if e[2] == caller and e[0].held == me and id(e[0]) > id(storage):
            later.append(e)
    later.sort(key=_order)
    for e in reversed(later):
        e[0].held = None  # given back: marked first, and no signal handler runs between the two (no call)
        e[0].lock.release()
    _acquire_checking_cycles(storage, me, got)
    for s, ta, _ in later:
        taken: list = []
        try:
            _acquire_checking_cycles(s, me, taken)
            _prepare(s, ta, s._jit)
            s._jit.stack = thread.stack
            s.held = me
        except BaseException:
            if taken and s.held != me:  # taken, not marked: the cleanup would not release it
                s.lock.release()
            raise


def _order(entry):
    """Return the key of the locks' global order: the Storage's id (fixed while it lives)."""
    return id(entry[0])


def _acquire_checking_cycles(storage, me, got):
    """Wait for ``storage``'s lock (True appended to ``got`` once taken); RuntimeError when the wait closes a cycle."""
    lock = storage.lock
    got.extend(filter(None, map(_ACQUIRE, (lock,), _NO_WAIT)))
    if got:
        return
    _WAITING[me] = storage
    try:
        while True:
            got.extend(filter(None, map(_ACQUIRE, (lock,), *_POLL_WAIT)))
            if got:
                return
            cycle = _cycle_from(storage, me)
            if cycle and me == max(cycle):
                raise RuntimeError(
                    f"TensorArray {storage.name}: a compiled call of this thread waits for it while holding arrays "
                    "of an outer compiled call (a compiled function called from objmode code), and the thread "
                    "that holds it waits for one of those: this call gives up instead of waiting forever"
                )
    finally:
        _WAITING.pop(me, None)


def _cycle_from(storage, me):
    """Return the threads of the cycle of waits from ``me`` through ``storage``'s holder, or None."""
    with _wait_lock:
        seen = [me]
        s = storage
        for _ in range(len(_WAITING) + 1):
            t = s.held
            if t is None:
                return None
            if t == me:
                return seen
            seen.append(t)
            s = _WAITING.get(t)
            if s is None:
                return None
    return None


_arrays_of = fields_of  # the struct's fields (a module name: _sync looks it up here)


def _sync(storage, ta, call):
    """Take over a change of the class's element shape made in compiled code (``hdr[H.CES_CHANGED]``).

    Computed first, committed by one statement, which no signal can split: an exception
    before it leaves everything as it was, and the sync can simply run again.
    """
    h = storage.hdr
    ces = _arrays_of(storage._s)[9]
    cell = tuple(None if d < 0 else d for d in ces.tolist()) if h[H.CLASS_KNOWN] else None
    cells = ta._element_shape
    shape = cells[0] if cells[0]._dims == cell else TensorShape(cell)
    cells[0], call.cell, h[H.CES_CHANGED] = shape, cell, 0


def _leave(ta):
    """Argument cleanup: take over the class's element shape, forget the entry, unlock the array.

    Every step can run again after an exception (a ``KeyboardInterrupt`` landing anywhere,
    at the function's entry included): the cleanup code calls it again until it returns
    (:func:`_emit_leave`), then raises the first exception.  The sync is computed first and
    committed by one statement; the entry is removed once; ``held`` is cleared and the lock
    released last, with no call between them.  An argument whose lock the call gave back while
    it waited for another one's (:func:`_wait_in_order`, interrupted), or which an earlier
    attempt already left, is only forgotten.
    """
    storage = ta._handle._storage
    me = _get_ident()
    if storage.held != me:  # given back (and maybe taken by another thread since)
        _drop(storage, _thread())
        return
    call = storage._jit
    if storage.hdr[H.CES_CHANGED]:
        _sync(storage, ta, call)
    stack = call.stack
    k = len(stack) - 1
    while k >= 0 and stack[k][0] is not storage:  # (its entry: the last one, unless the call took several)
        k -= 1
    if k >= 0:  # (not found: an earlier attempt removed it)
        del stack[k]
    if _ANY_WANTED[0]:  # the call took a serial path for want of a parallel kernel: loaded for the next one
        _ckernels.load_wanted()
    storage.held = None  # the last two steps: no signal handler runs between them (no call between them),
    storage.lock.release()  # and one that runs after the release finds the array left at the next attempt


_LEAVE_TRIES = 100  # calls of _leave a cleanup makes before it gives up (each interrupted: a signal storm)


def _emit_leave(c, obj):
    """Emit an argument's cleanup: :func:`_leave` until it returns (at most :data:`_LEAVE_TRIES` times).

    The first exception ``_leave`` raised is kept, the later ones are cleared.  A kept
    ``KeyboardInterrupt`` is delivered again as a SIGINT (``PyErr_SetInterrupt``: Python's
    handler raises it at the caller's next instruction): set as the call's error it would be
    replaced by the error the function itself raised (Numba's wrapper sets that after the
    cleanup), or turned into a SystemError after a result.  Anything else is set again as is.
    """
    b, api = c.builder, c.pyapi
    pty, pval, ptb = (cgutils.alloca_once_value(b, api.get_null_object()) for _ in range(3))
    tries = cgutils.alloca_once_value(b, ir.Constant(ir.IntType(32), 0))
    loop, done = b.append_basic_block("leave.call"), b.append_basic_block("leave.done")
    b.branch(loop)
    b.position_at_end(loop)
    r = api.call_function_objargs(_function(c, _leave), [obj])
    n = b.add(b.load(tries), ir.Constant(ir.IntType(32), 1))
    b.store(n, tries)
    raised = cgutils.is_null(b, r)
    with b.if_then(raised, likely=False):
        with b.if_else(cgutils.is_null(b, b.load(pty))) as (first, later):
            with first:
                api.err_fetch(pty, pval, ptb)
            with later:
                api.err_clear()
    api.decref(r)  # (None, or NULL)
    b.cbranch(b.and_(raised, b.icmp_signed("<", n, ir.Constant(ir.IntType(32), _LEAVE_TRIES))), loop, done)
    b.position_at_end(done)
    with b.if_then(cgutils.is_not_null(b, b.load(pty)), likely=False):
        obj_t = api.pyobj
        matches = cgutils.get_or_insert_function(
            b.module, ir.FunctionType(ir.IntType(32), [obj_t, obj_t]), "PyErr_GivenExceptionMatches"
        )
        is_ki = b.call(matches, [b.load(pty), api.get_c_object("PyExc_KeyboardInterrupt")])
        with b.if_else(cgutils.is_not_null(b, is_ki)) as (interrupt, other):
            with interrupt:
                for ptr in (pty, pval, ptb):
                    api.decref(b.load(ptr))  # (Py_XDECREF: pval and ptb may be NULL)
                void = ir.FunctionType(ir.VoidType(), [])
                b.call(cgutils.get_or_insert_function(b.module, void, "PyErr_SetInterrupt"), [])
            with other:
                api.err_restore(b.load(pty), b.load(pval), b.load(ptb))


def _after_fork_in_child():
    """Forget every hold and wait in a forked child: it runs no compiled call."""
    global _tls, _wait_lock
    _tls = threading.local()
    _WAITING.clear()
    _wait_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def _box(meminfo_addr, meminfo, typ):
    """Return the TensorArray object for a struct returned by compiled code (boxing)."""
    storage = _ARRAYS.get(meminfo_addr)
    if storage is None:  # created in compiled code: the Python side makes its array now
        return _adopt(meminfo, typ)
    # the array entered as an argument of this call (its cleanup syncs the class's shape), or one
    # created in this call and already adopted (returned twice)
    ta = storage._jit.ta()
    return ta._with_flow(ta._flow)


def _adopt(meminfo, typ):
    """Give an array created in compiled code its Python side: storage, registry entry, TensorArray object."""
    dtype = as_dtype(typ.dtype)
    proxy = _numba_compat.box_struct(StateProxy, state_type(), meminfo)
    storage = _storage.Storage.from_struct(proxy, dtype)
    h = storage.hdr
    ta = TensorArray(dtype, handle=_registry.register(storage), flow=0.0, infer_shape=bool(h[H.INFER]))
    ces = fields_of(proxy)[9]
    cell = tuple(None if d < 0 else d for d in ces.tolist())
    ta._element_shape[0] = TensorShape(cell)
    call = storage._jit = _Call(_meminfo_of(proxy))
    call.cell = cell
    call.ta = weakref.ref(ta)
    with _registry._lock:
        _ARRAYS[meminfo.data] = storage
    h[H.CES_CHANGED] = 0
    return ta


# --------------------------------------------------------------------------- unbox / box
def _function(c, fn):
    """Return ``fn``, a function of this module, in a call wrapper's code (a borrowed reference).

    Looked up once per process and compiled library, not at each call: the first call
    unpickles it (by reference) into a global of the library, null until then, which keeps
    it for good (a function of a module).  Two threads may both store it first: the GIL
    makes each store whole, and the only cost is one reference never released.
    """
    name = f"numba_ta_{fn.__name__}"
    try:
        slot = c.builder.module.get_global(name)
    except KeyError:
        slot = ir.GlobalVariable(c.builder.module, c.pyapi.pyobj, name)
        slot.linkage = "internal"
        slot.initializer = ir.Constant(c.pyapi.pyobj, None)
    with c.builder.if_then(cgutils.is_null(c.builder, c.builder.load(slot)), likely=False):
        c.builder.store(c.pyapi.unserialize(c.pyapi.serialize_object(fn)), slot)
    return c.builder.load(slot)


@_on_init(unbox, TensorArrayType)
def _unbox(typ, obj, c):
    _abi.hook_entering(c.context)
    mi_obj = c.pyapi.call_function_objargs(_function(c, _enter_meminfo), [obj])
    failed = cgutils.is_null(c.builder, mi_obj)
    sr = cgutils.create_struct_proxy(typ)(c.context, c.builder)
    with c.builder.if_then(c.builder.not_(failed), likely=True):
        sr.meminfo = c.unbox(types.MemInfoPointer(types.voidptr), mi_obj).value
        c.pyapi.decref(mi_obj)  # the array keeps its struct alive for the call

    def cleanup():
        with c.builder.if_then(c.builder.not_(failed), likely=True):
            # Python code must not run with an exception pending (another argument's unboxing may
            # have failed): the pending one is set aside and restored, unless _leave raises its own
            with c.pyapi.err_push(keep_new=True):
                _emit_leave(c, obj)  # an exception _leave raised is left for the caller to see

    return NativeValue(sr._getvalue(), is_error=failed, cleanup=cleanup)


@_on_init(box, TensorArrayType)
def _box_ta(typ, val, c):
    sr = cgutils.create_struct_proxy(typ)(c.context, c.builder, value=val)
    addr = c.context.nrt.meminfo_data(c.builder, sr.meminfo)
    addr_obj = c.pyapi.long_from_ssize_t(c.builder.ptrtoint(addr, c.pyapi.py_ssize_t))
    mi_obj = c.box(types.MemInfoPointer(types.voidptr), sr.meminfo)  # a new reference to the struct
    typ_obj = c.pyapi.unserialize(c.pyapi.serialize_object(typ))
    # (checked: an interrupt while the type is unpickled must not call _box with fewer arguments)
    return _numba_compat.call_checked(c.builder, c.pyapi, _function(c, _box), [addr_obj, mi_obj, typ_obj])


# --------------------------------------------------------------------------- argument types
# Each method and the constructor check their arguments' Numba types when the user's function is
# typed, and reject a wrong one with a CompiledTypeError of one line: a TypeError, not Numba's
# TypingError, which Numba would wrap into its report of every candidate overload.
def _short(t):
    """Return the Numba type ``t`` as an error names it: no literal value, a list without its items."""
    if _absent(t):
        return "None"
    t = types.unliteral(t)
    if isinstance(t, types.List):
        return f"list({t.dtype})"
    if isinstance(t, types.UnicodeType):
        return "str"
    return str(t)


class _WrappedCompiledTypeError(TypingError, CompiledTypeError):
    """A :class:`CompiledTypeError` that is also Numba's ``TypingError``, for Numbas that wrap others.

    Numba 0.59 to 0.6x (``numba_compat.WRAPS_FOREIGN_TYPING_ERRORS``) wrap an exception that is not a
    Numba error into their report, with a deprecation warning; a Numba error they report without one.
    """


_TYPE_ERROR = _WrappedCompiledTypeError if _numba_compat.WRAPS_FOREIGN_TYPING_ERRORS else CompiledTypeError


def _reject(where, what, got):
    """Raise ``CompiledTypeError("<where>: <what>, got <got's short name>")``."""
    raise _TYPE_ERROR(f"{where}: {what}, got {_short(got)}")


def _check_index(method, index):
    """Reject an element index that is not an integer."""
    if not isinstance(index, types.Integer):
        _reject(f"TensorArray.{method}", "index must be an integer", index)


def _check_integers(method, arg, t):
    """Reject indices or lengths that are not an integer, or an array, list or homogeneous tuple of integers."""
    ok = isinstance(t, types.Integer) or (
        isinstance(t, (types.Array, types.List, types.UniTuple)) and isinstance(t.dtype, types.Integer)
    )
    if not ok:
        _reject(f"TensorArray.{method}", f"{arg} must be integers (an array, list or tuple of them)", t)


def _check_value(method, value, scalar_ok):
    """Reject a written value that is not an array (cast to the array's dtype) or, where ``scalar_ok``, a scalar."""
    if isinstance(value, types.Array) or (scalar_ok and isinstance(value, (types.Number, types.Boolean))):
        return
    takes = "an array or a scalar" if scalar_ok else "an array"
    _reject(f"TensorArray.{method}", f"value must be {takes}", value)


def _not_in_compiled_code(name, why):
    """Return the typing of a method or attribute that compiled code does not have: it raises, saying ``why``."""

    def typing(ta, *args):
        raise _TYPE_ERROR(f"TensorArray.{name} is not available inside @njit: {why}")

    return typing


for _name, _why in (
    ("grad", "gradient arrays are looked up by source in Python; call ta.grad(source) before the call and pass it in"),
    ("close", "close the array in Python after the call"),
    ("identity", "pass the array itself"),
):
    _on_init(overload_method, TensorArrayType, _name)(_not_in_compiled_code(_name, _why))
for _name in ("handle", "flow", "dtype", "dynamic_size"):
    _on_init(overload_attribute, TensorArrayType, _name)(_not_in_compiled_code(_name, "read it in Python"))


def _typeof_refused(what):
    """Return a typeof for an object that cannot enter compiled code: it raises, saying ``what`` to do."""

    def typeof(val, c):
        raise CompiledTypeError(f"{type(val).__name__} cannot be passed to @njit code: {what}")

    return typeof


_on_init(typeof_impl.register, _registry.TensorArrayHandle)(
    _typeof_refused("pass the TensorArray (numba_ta.TensorArray(dtype, handle=h) wraps a handle)")
)
_on_init(typeof_impl.register, TensorListHandle)(_typeof_refused("only TensorArray works inside compiled code"))
_on_init(typeof_impl.register, TF2TensorArray)(
    _typeof_refused("only numba_ta.TensorArray (graph-mode tf.TensorArray semantics) works inside compiled code")
)


# --------------------------------------------------------------------------- compiled methods
# Each method keeps inline its per-element fast path (write, read), casts and byte views; the
# rest of the op is one engine entry, called by symbol (numba_ta.jit.abi.call): not compiled here.


@_on_init(register_jitable)
def _fast_write(r, index, vp, vshape, itemsize, ndim):
    """Write the dense value at ``vp`` (shape ``vshape``) at ``index`` if it takes the fast path; else return False.

    ``r`` is the struct's :func:`~numba_ta.core.state.borrow_fields`.  The fast path: a
    row of the last shape written (``hdr[H.FASTSID]``, set by a write that passed every
    check under the current element shape; a change of the element shape clears it)
    into an unwritten slot within the buffer, with the class's element shape already
    equal to the row's.  Then none of TF's checks can fail, and the op is the row copy
    and its commit, through borrowed pointers: no reference is counted.
    """
    h, _, state, nst, bp, nb, ip, _, op, _, sp, _, stp, _, cp, nc = r
    sid = h[H.FASTSID]
    if sid < 0 or index < 0 or h[H.CLOSED]:
        return False
    w = h[H.WIDTH]
    size = 1
    for k in range(ndim):
        size *= vshape[k]
    if size != w:
        return False
    if index >= nst or index >= h[H.CAP] or state[index] != 0 or (index >= h[H.SIZE] and not h[H.DYN]):
        return False
    o = index * w
    if (o + w) * itemsize > nb:  # (the value has the array's dtype)
        return False
    a = stp[sid]
    if stp[sid + 1] - a != ndim:
        return False
    known = h[H.CLASS_KNOWN]
    if (not known and h[H.INFER]) or (known and nc != ndim):
        return False
    for k in range(ndim):
        d = vshape[k]
        if sp[a + k] != d:
            return False
        if known and cp[k] != d and (cp[k] >= 0 or h[H.INFER]):
            return False
    dp = cast_ptr(bp, vp)
    for k in range(w):
        dp[o + k] = vp[k]
    op[index] = o
    ip[index] = sid
    state[index] = STORED
    if index >= h[H.SIZE]:
        h[H.SIZE] = index + 1
    return True


@_on_init(register_jitable)
def _write_entry(ta, index, v, numeric):
    """Write through the engine's entry (every check, the merge of shapes, growth): what :func:`_fast_write` left."""
    _abi.call("write", (ta, np.int64(index), np.ascontiguousarray(v).reshape(-1).view(np.uint8),
                        shape_array(v.shape), numeric))  # fmt: skip


# inlined into the caller (Numba IR), so that its reference counting of the array and the value
# cancels out: the fast path then counts no reference (an atomic add each, more than the row copy)
@_on_init(overload_method, TensorArrayType, "write", inline="always")
def _ol_write(ta, index, value):
    _check_index("write", index)
    _check_value("write", value, scalar_ok=True)
    dtype = ta.dtype
    ndim = ta.ndim
    numeric = dtype != types.boolean
    vdim = value.ndim if isinstance(value, types.Array) else 0
    same = isinstance(value, types.Array) and value.dtype == dtype
    itemsize = as_dtype(dtype).itemsize

    def impl(ta, index, value):
        if same:
            v = value
        elif vdim:
            v = np.asarray(value).astype(dtype)
        else:
            v = np.full((), value, dtype)
        if not (vdim == ndim and v.flags.c_contiguous
                and _fast_write(borrow_fields(ta), index, data_ptr(v), v.shape, itemsize, ndim)):  # fmt: skip
            _write_entry(ta, index, v, numeric)
        return ta

    return impl


def _dims_at(zshape, sp, a):  # pragma: no cover - replaced by its overload in compiled code
    """Return ``zshape`` (a tuple) filled with the dimensions at ``sp[a:]`` (compiled code only)."""


@_on_init(overload, _dims_at)
def _ol_dims_at(zshape, sp, a):
    n = len(zshape)
    if n == 0:  # a scalar element: () has no item to set (tuple_setitem cannot even be typed on it)
        return lambda zshape, sp, a: zshape

    def impl(zshape, sp, a):
        shp = zshape
        for k in range(n):
            shp = tuple_setitem(shp, k, sp[a + k])
        return shp

    return impl


@_on_init(register_jitable)
def _fast_read(r, index, ndim, zshape, dt):
    """Read a stored element at ``index`` through borrowed pointers; ``(False, empty)`` if it takes the full path.

    ``r`` is the struct's :func:`~numba_ta.core.state.borrow_fields`.  The fast path: an
    open array, ``index`` in range, the element written with its value stored and not
    cleared, of rank ``ndim`` (no check can fail).  It copies the element and marks it
    read (cleared, for ``clear_after_read``).
    """
    h, _, state, nst, bp, _, ip, _, op, _, sp, _, stp, _, _, _ = r
    if h[H.CLOSED] or index < 0 or index >= h[H.SIZE] or index >= nst:
        return False, np.empty(zshape, dt)
    bits = state[index]
    if bits & (STORED | CLEARED) != STORED:
        return False, np.empty(zshape, dt)
    sid = ip[index]
    a = stp[sid]
    if stp[sid + 1] - a != ndim:
        return False, np.empty(zshape, dt)
    out = advise_huge(np.empty(_dims_at(zshape, sp, a), dt))
    outp = data_ptr(out)
    dp = cast_ptr(bp, out)
    o = op[index]
    for k in range(out.size):
        outp[k] = dp[o + k]
    state[index] = (bits | READ | CLEARED) & NOT_DATA if h[H.CAR] else bits | READ
    return True, out


@_on_init(register_jitable)
def _read_entry(ta, index, ndim, dt):
    """Read through the engine's entry (every check, TF's errors): what :func:`_fast_read` left."""
    flat, shape = _abi.call("read", (ta, np.int64(index), ndim))
    return flat.view(dt).reshape(to_fixed_tuple(shape, ndim))


@_on_init(overload_method, TensorArrayType, "read", inline="always")  # inlined: as write
def _ol_read(ta, index):
    _check_index("read", index)
    ndim = ta.ndim
    zshape = (0,) * ndim
    dt = ta.dtype

    def impl(ta, index):
        ok, out = _fast_read(borrow_fields(ta), index, ndim, zshape, dt)
        if ok:
            return out
        return _read_entry(ta, index, ndim, dt)

    return impl


@_on_init(overload_method, TensorArrayType, "size")
def _ol_size(ta):
    def impl(ta):
        if ta.hdr[H.CLOSED]:
            _abi.call("closed", (ta,))  # raises TF's error
        return np.int32(ta.hdr[H.SIZE])  # TF's size is an int32 scalar

    return impl


@_on_init(overload_attribute, TensorArrayType, "element_shape")
def _ol_element_shape(ta):
    ndim = ta.ndim

    def impl(ta):
        out = np.full(ndim, -1, np.int64)  # -1: an unknown dimension (or rank)
        if ta.hdr[H.CLASS_KNOWN]:
            src = ta.ces
        elif ta.hdr[H.ES_KNOWN]:
            src = ta.es
        else:
            src = out
        if src.size == ndim:
            out[:] = src
        return to_fixed_tuple(out, ndim)

    return impl


@_on_init(overload_method, TensorArrayType, "gather")
def _ol_gather(ta, indices):
    _check_integers("gather", "indices", indices)
    ndim = ta.ndim
    ndim1 = ndim + 1
    dt = ta.dtype

    def impl(ta, indices):
        idx = np.asarray(indices).astype(np.int64)
        flat, shape = _abi.call("gather", (ta, idx.ravel(), shape_array(idx.shape), ndim))
        return flat.view(dt).reshape(to_fixed_tuple(shape, ndim1))

    return impl


@_on_init(overload_method, TensorArrayType, "stack")
def _ol_stack(ta):
    ndim = ta.ndim
    ndim1 = ndim + 1
    dt = ta.dtype

    def impl(ta):
        flat, shape = _abi.call("stack", (ta, ndim))
        return flat.view(dt).reshape(to_fixed_tuple(shape, ndim1))

    return impl


def _rows_value(method, ta, value):
    """Type ``scatter``/``unstack``'s ``value``: ``(dtype, numeric, scalar)``.

    ``dtype`` is the array's, ``numeric`` whether its elements sum (not bool), and
    ``scalar`` the method's implementation for a scalar ``value`` (TF's S2 error), or
    None for an array.
    """
    dtype = ta.dtype
    numeric = dtype != types.boolean
    if isinstance(value, types.Array) and value.ndim:
        return dtype, numeric, None
    msg = _S2.replace("{shape}", "[]")

    def scatter(ta, indices, value):
        raise InvalidArgumentError(msg)

    def unstack(ta, value):
        raise InvalidArgumentError(msg)

    return dtype, numeric, scatter if method == "scatter" else unstack


@_on_init(overload_method, TensorArrayType, "scatter")
def _ol_scatter(ta, indices, value):
    _check_integers("scatter", "indices", indices)
    _check_value("scatter", value, scalar_ok=True)  # a scalar: TF's S2 error when it runs
    dtype, numeric, scalar = _rows_value("scatter", ta, value)
    if scalar is not None:
        return scalar

    def impl(ta, indices, value):
        idx = np.asarray(indices).astype(np.int64)
        v = np.asarray(value).astype(dtype)
        _abi.call("scatter", (ta, idx.ravel(), shape_array(idx.shape),
                              np.ascontiguousarray(v).reshape(-1).view(np.uint8), np.int64(v.shape[0]),
                              shape_array(v.shape[1:]), numeric))  # fmt: skip
        return ta

    return impl


@_on_init(overload_method, TensorArrayType, "unstack")
def _ol_unstack(ta, value):
    _check_value("unstack", value, scalar_ok=True)  # a scalar: TF's S2 error when it runs
    dtype, numeric, scalar = _rows_value("unstack", ta, value)
    if scalar is not None:
        return scalar

    def impl(ta, value):
        v = np.asarray(value).astype(dtype)
        n = v.shape[0]
        _abi.call("scatter", (ta, np.arange(np.int64(n)), shape_array((n,)),
                              np.ascontiguousarray(v).reshape(-1).view(np.uint8), np.int64(n),
                              shape_array(v.shape[1:]), numeric))  # fmt: skip
        return ta

    return impl


@_on_init(overload_method, TensorArrayType, "concat")
def _ol_concat(ta):
    ndim = ta.ndim
    dt = ta.dtype

    def impl(ta):
        flat, shape = _abi.call("concat", (ta, ndim))
        return flat.view(dt).reshape(to_fixed_tuple(shape, ndim))

    return impl


@_on_init(overload_method, TensorArrayType, "split")
def _ol_split(ta, value, lengths):
    _check_value("split", value, scalar_ok=False)
    _check_integers("split", "lengths", lengths)
    dtype = ta.dtype
    numeric = dtype != types.boolean

    def impl(ta, value, lengths):
        v = np.asarray(value).astype(dtype)
        lens = np.asarray(lengths).astype(np.int64)
        _abi.call("split", (ta, np.ascontiguousarray(v).reshape(-1).view(np.uint8), shape_array(v.shape),
                            lens.ravel(), shape_array(lens.shape), numeric))  # fmt: skip
        return ta

    return impl


# --------------------------------------------------------------------------- creating an array in compiled code
def _dim(d):  # pragma: no cover - replaced by its overload in compiled code
    """Return a dimension of ``element_shape`` as ``(value, is None)`` (compiled code only; ``new`` checks it)."""


@_on_init(overload, _dim)
def _ol_dim(d):
    if _absent(d):
        return lambda d: (np.int64(0), np.uint8(1))
    if isinstance(d, types.Integer):
        return lambda d: (np.int64(d), np.uint8(0))
    _reject("TensorArray(...)", "each dimension of element_shape must be an int or None", d)


def _flag(x, default):  # pragma: no cover - replaced by its overload in compiled code
    """Return ``bool(x)``, or ``default`` for None (compiled code only)."""


@_on_init(overload, _flag)
def _ol_flag(x, default):
    if _absent(x):
        return lambda x, default: default
    if isinstance(x, (types.Boolean, types.Integer)):
        return lambda x, default: bool(x)
    _reject("TensorArray(...)", "a flag must be a bool", x)


def _base_name(tensor_array_name, name):  # pragma: no cover - replaced by its overload in compiled code
    """Return ``tensor_array_name or name or "TensorArray"`` (compiled code only)."""


@_on_init(overload, _base_name)
def _ol_base_name(tensor_array_name, name):
    given = [not _absent(t) for t in (tensor_array_name, name)]
    for t, g in zip((tensor_array_name, name), given, strict=True):
        if g and not isinstance(t, types.UnicodeType):
            _reject("TensorArray(...)", "tensor_array_name and name must be str", t)
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


@_on_init(overload, TensorArray)
def new_array(dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None, handle=None,
              flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
              name=None):  # fmt: skip
    """Typing of ``numba_ta.TensorArray(...)`` in compiled code: return the implementation (``@overload``).

    The arguments are Numba types, or the defaults (the class's), which Numba compares
    with the implementation's.
    """
    from numba_ta.tf.dtypes import as_dtype as ta_dtype

    if isinstance(dtype, types.NumberClass):
        nb = dtype.instance_type
    elif isinstance(dtype, types.DType):
        nb = dtype.dtype
    else:
        _reject("TensorArray(...)", "dtype must be a numpy scalar type or dtype inside @njit (np.float32)", dtype)
    np_dtype = ta_dtype(as_dtype(nb))
    for arg, value in (("handle", handle), ("flow", flow)):
        if not _absent(value):
            _reject("TensorArray(...)", f"{arg} is not supported inside @njit (create the array in Python)", value)
    if not isinstance(element_shape, types.BaseTuple):
        _reject("TensorArray(...)", "element_shape must be a tuple inside @njit (its length: the rank)", element_shape)
    ndim = len(element_shape)
    homogeneous = isinstance(element_shape, types.UniTuple)
    if _absent(size):
        has_size = False
    elif isinstance(size, types.Integer):
        has_size = True
    else:
        _reject("TensorArray(...)", "size must be an int", size)
    ta_type = array_type(np_dtype, ndim)
    itemsize, code = np_dtype.itemsize, dtype_code(np_dtype)
    # the memory policy and the parallel threshold, as the compile saw them
    slack, factor, parmin = _config.DENSE_SLACK_BYTES, _config.DENSE_FACTOR, _config.PARALLEL_MIN_ELEMENTS

    if not has_size:  # the class's first check: nothing else runs

        def no_size(dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None,
                    handle=None, flow=None, infer_shape=True, element_shape=None,
                    colocate_with_first_write_call=True, name=None):  # fmt: skip
            raise ValueError(_NO_SIZE)

        return no_size

    def impl(dtype, size=None, dynamic_size=None, clear_after_read=None, tensor_array_name=None, handle=None,
             flow=None, infer_shape=True, element_shape=None, colocate_with_first_write_call=True,
             name=None):  # fmt: skip
        es = np.empty(ndim, np.int64)
        nones = np.zeros(ndim, np.uint8)  # the dimensions given as None
        if ndim:
            k = 0
            if homogeneous:
                for d in element_shape:
                    x = _dim(d)
                    es[k] = x[0]
                    nones[k] = x[1]
                    k += 1
            else:
                for d in literal_unroll(element_shape):
                    x = _dim(d)
                    es[k] = x[0]
                    nones[k] = x[1]
                    k += 1
        # the entry checks the dimensions, then the size, and makes the struct
        return _abi.call_new(ta_type, (np.int64(size), _flag(dynamic_size, False), _flag(clear_after_read, True),
                                       _flag(infer_shape, True), es, nones, np.int64(itemsize), np.int64(code),
                                       np.int64(slack), np.int64(factor), np.int64(parmin),
                                       _base_name(tensor_array_name, name)))  # fmt: skip

    return impl
