"""Numba kernels of numba_ta: the bulk copies and the bookkeeping of many-element ops.

Every kernel takes only ndarrays and integers.  Storage is a 1-D contiguous
buffer; an element is a run of items starting at an offset.  The engine
(:mod:`numba_ta.tensor_array.engine`) calls them: the "segment" kernels copy elements of
any sizes out of the buffer (gather, stack, concat) and into it (scatter,
unstack, split), and ``check_reads``, ``store_reads``, ``check_writes``
and ``plan_reads`` do the per-element checks and state changes of those ops
in one pass each.  Single elements, and gradient sums, are copied and added
by the engine itself.

The copy kernels are called on bit views (``uint8``/``uint16``/``uint32``/
``uint64``) of the data, so that they compile once per item size, not once
per dtype.  ``*_par`` variants run their outer loop in parallel and may only
be used where each iteration writes its own output items (unique destination
offsets); the engine chooses them above ``_config.PARALLEL_MIN_ELEMENTS``
items, and calls them (and the gradient sums' ``store_or_add_segments``) natively, as
C functions whose addresses :mod:`numba_ta.core.ckernels` publishes.  A kernel and its
``*_par`` variant are one body (a ``prange`` loop) compiled twice, by
:func:`_serial_and_parallel`.

Every kernel is decorated with :func:`kernel`, the one place of the decorator
policy (``nogil``, cached on disk, ``parallel`` for the ``*_par`` kernels).
Where Numba has no writable cache directory it compiles the kernels without
the cache, with one :class:`KernelCacheWarning` per process.
"""

from __future__ import annotations

import signal
import threading
import types
import warnings

import numpy as np
from numba import njit, prange

from numba_ta.core import cache as _cache
from numba_ta.core import numba_compat as _numba_compat
from numba_ta.core.cache import ShippedCodeMismatchWarning  # noqa: F401 - exported beside KernelCacheWarning

# The decorator policy, in one place: every kernel is decorated with ``@kernel()`` (or
# ``@kernel(parallel=True)`` for a ``*_par`` kernel), which applies these options.
_JIT = dict(cache=True, nogil=True)
_PJIT = dict(_JIT, parallel=True)

#: Names of the functions decorated with :func:`kernel` (the tests check that every kernel is).
_KERNELS = []

_warned_no_cache = False


class KernelCacheWarning(RuntimeWarning):
    """Numba has no writable directory to cache numba_ta's kernels in: they are compiled in each process."""


def _warn_no_cache(source):
    """Warn, once per process, that the kernels of ``source`` are compiled without the disk cache."""
    global _warned_no_cache
    if _warned_no_cache:
        return
    _warned_no_cache = True
    warnings.warn(
        f"numba_ta: Numba has no writable directory to cache compiled kernels in (not next to {source}, "
        "not in the per-user cache, and NUMBA_CACHE_DIR is unset or not writable); the kernels are "
        "compiled without the cache, again in every process. Set NUMBA_CACHE_DIR to a writable "
        "directory to cache them.",
        KernelCacheWarning,
        stacklevel=3,
    )


def kernel(parallel=False):
    """Return the kernels' decorator: ``njit`` with ``_JIT`` (``_PJIT`` when ``parallel``).

    Every kernel's cache is a :class:`numba_ta.core.cache.KernelCache`: Numba's, which first
    looks in the compiled code shipped with the package (``pip install .`` compiles it).
    ``njit(cache=True)`` raises ``RuntimeError: cannot cache function ...: no locator
    available`` at decoration time when Numba can write to none of its cache directories
    (a read-only install, no writable HOME, no ``NUMBA_CACHE_DIR``).  The kernel then only
    reads the shipped code, and what is not there is compiled in each process; without
    shipped code one :class:`KernelCacheWarning` per process says so.
    """
    options = _PJIT if parallel else _JIT

    def decorate(func):
        _KERNELS.append(func.__name__)
        try:
            kernel = njit(**options)(func)
            writable = True
        except RuntimeError as e:
            if "no locator available" not in str(e):
                raise
            kernel = njit(**dict(options, cache=False))(func)
            writable = False
        if _numba_compat.is_dispatcher(kernel):  # a dispatcher (not NUMBA_DISABLE_JIT's plain function)
            cache = _cache.KernelCache(func, writable)
            _numba_compat.set_cache(kernel, cache)
            if not writable and not cache.has_shipped():
                _warn_no_cache(func.__code__.co_filename)
        return _hold_signals_while_loading(kernel)

    return decorate


# every signal but the synchronous ones (a fault while they are blocked would kill the process unreported)
class _Noting:
    """A signal handler that notes the signal while a kernel loads, else calls ``original``."""

    __slots__ = ("original", "noted", "active")

    def __init__(self, original, noted, active):
        self.original, self.noted, self.active = original, noted, active

    def __call__(self, signum, frame):
        if self.active[0]:
            self.noted.append(signum)
            return None
        return self.original(signum, frame)


_ALL_SIGNALS = (
    signal.valid_signals()
    - {getattr(signal, n) for n in ("SIGSEGV", "SIGBUS", "SIGFPE", "SIGILL", "SIGTRAP", "SIGSYS") if hasattr(signal, n)}
    if hasattr(signal, "pthread_sigmask")
    else None
)


def holding_signals(fn, *args, **kws):
    """Return ``fn(*args, **kws)``, run with the main thread's signals held back (:func:`_hold_signals_while_loading`).

    For Numba's loaders: a signal arriving meanwhile is handled once ``fn`` returns (or raises).
    In another thread, or without ``signal.pthread_sigmask``, ``fn`` just runs.

    Parameters
    ----------
    fn : callable
        What to run (a dispatcher's loader, a C function's compile).
    *args, **kws
        Its arguments.

    Returns
    -------
    object
        What ``fn`` returns.
    """
    if _ALL_SIGNALS is None:
        return fn(*args, **kws)
    if threading.current_thread() is not threading.main_thread():
        return fn(*args, **kws)
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _ALL_SIGNALS)
    noted, active, replaced = [], [True], {}
    try:
        for sig in _ALL_SIGNALS:
            handler = signal.getsignal(sig)
            if callable(handler):
                replaced[sig] = handler
                signal.signal(sig, _Noting(handler, noted, active))
        return fn(*args, **kws)
    finally:
        active[0] = False  # from here on a handler not yet restored passes signals on
        for sig, handler in replaced.items():
            signal.signal(sig, handler)
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # signals the OS held are handled now
        for sig in noted:
            signal.raise_signal(sig)  # and those a handler noted


def _hold_signals_while_loading(kernel):
    """Load or compile ``kernel``'s specialisations with signals held back.

    Numba loads a kernel (from its cache, or by compiling it) in Python on the first call
    of each signature in a process, and its loader keeps generators over its registries: a
    ``KeyboardInterrupt`` raised inside one of them (Ctrl-C, or any exception from a signal
    handler) ends that generator, and every later load in the process then fails with
    ``RuntimeError: generator raised StopIteration``.  So, while a load runs in the main
    thread (the only one where Python runs signal handlers), the OS holds back the main
    thread's signals and every Python-level handler is replaced by one that only notes the
    signal (another thread may receive a process-wide signal, and Python would run the
    handler in the main thread all the same).  Afterwards the handlers are restored and the
    noted signals raised again: the op is interrupted as usual, and numba stays usable.
    Where ``signal.pthread_sigmask`` does not exist (Windows), and with
    ``NUMBA_DISABLE_JIT=1`` (no dispatcher), nothing changes.
    """
    load = _numba_compat.get_loader(kernel)
    if load is None or _ALL_SIGNALS is None:
        return kernel

    def guarded_load(*args, **kws):
        return holding_signals(_numba_compat.compile_for_args, kernel, load, args, kws)

    _numba_compat.set_loader(kernel, guarded_load)  # numba's dispatcher looks it up on the instance
    return kernel


def _serial_and_parallel(func):
    """Compile one body into the serial and the parallel kernel, ``(kernel, kernel_par)``.

    ``func`` writes its loop over elements with ``prange``: compiled without ``parallel``
    that is a plain ``range`` (Numba's rule), with it the iterations are shared among Numba's
    threads.  The parallel kernel is compiled from a copy of ``func`` named ``<name>_par``, so
    the two have their own entries in Numba's disk cache (which keys a function by its
    qualified name, not by its options).  Use the parallel kernel only where each iteration
    writes its own output items.
    """
    par = types.FunctionType(func.__code__, func.__globals__, func.__name__ + "_par", func.__defaults__,
                             func.__closure__)  # fmt: skip
    par.__qualname__ = func.__qualname__ + "_par"
    par.__doc__ = f"Parallel :func:`{func.__name__}` (``prange`` over elements; their outputs must not overlap)."
    return kernel()(func), kernel(parallel=True)(par)


# Element-sized runs.  The segment kernels hand each element to these as contiguous
# slices: LLVM then vectorises the copy, which it does not do for an index loop in a prange body
# (measured on numba 0.68: a parallel index-loop copy of 64 MiB took 23 ms, these 4 ms).


@kernel()
def copy_run(dst, src):
    """Copy ``src`` into ``dst`` (1-D, same size).

    Parameters
    ----------
    dst, src : (n,) ndarray
        Contiguous runs of one dtype.

    Returns
    -------
    None
    """
    for j in range(dst.size):
        dst[j] = src[j]


@kernel()
def add_run(dst, src):
    """Add ``src`` into ``dst`` (1-D, same size and dtype; IEEE sums, wrapping integers).

    Parameters
    ----------
    dst, src : (n,) ndarray
        Contiguous runs of one numeric dtype.

    Returns
    -------
    None
    """
    for j in range(dst.size):
        dst[j] += src[j]


@kernel()
def zero_run(dst):
    """Set ``dst`` to zeros.

    Parameters
    ----------
    dst : (n,) ndarray
        Contiguous run.

    Returns
    -------
    None
    """
    for j in range(dst.size):
        dst[j] = 0


def gather_segments(data, src_offsets, sizes, out_offsets, out):
    """Copy element ``k`` (``sizes[k]`` items) to ``out[out_offsets[k]:]``; concat's kernel.

    Parameters
    ----------
    data : (capacity_items,) ndarray
        Flat storage.
    src_offsets : (n,) int64 ndarray
        Start of each element in ``data``; negative means zeros.
    sizes : (n,) int64 ndarray
        Items of each element.
    out_offsets : (n,) int64 ndarray
        Start of each element in ``out`` (the exclusive cumulative sum of ``sizes``).
    out : (sum(sizes),) ndarray
        Destination.

    Returns
    -------
    out : (sum(sizes),) ndarray
    """
    for k in prange(src_offsets.shape[0]):
        s = src_offsets[k]
        o = out_offsets[k]
        z = sizes[k]
        if s < 0:
            zero_run(out[o : o + z])
        else:
            copy_run(out[o : o + z], data[s : s + z])
    return out


gather_segments, gather_segments_par = _serial_and_parallel(gather_segments)


def write_segments(data, dst_offsets, src, src_offsets, sizes):
    """Copy ``src[src_offsets[k]:][:sizes[k]]`` to ``data[dst_offsets[k]:]``; split's kernel.

    Parameters
    ----------
    data : (capacity_items,) ndarray
        Flat storage, written in place.
    dst_offsets : (n,) int64 ndarray
        Destination start of each element (unique).
    src : (m,) ndarray
        Flat source.
    src_offsets : (n,) int64 ndarray
        Start of each element in ``src``.
    sizes : (n,) int64 ndarray
        Items of each element.

    Returns
    -------
    None
    """
    for k in prange(dst_offsets.shape[0]):
        d = dst_offsets[k]
        s = src_offsets[k]
        z = sizes[k]
        copy_run(data[d : d + z], src[s : s + z])


write_segments, write_segments_par = _serial_and_parallel(write_segments)


def store_or_add_segments(data, dst_offsets, src, src_offsets, sizes, add):
    """Copy, or add where ``add[k]``, ``src[src_offsets[k]:][:sizes[k]]`` to ``data[dst_offsets[k]:]``.

    A scatter or split into a gradient array: elements written before sum (IEEE sums,
    wrapping integers), the others are stored.

    Parameters
    ----------
    data : (capacity_items,) ndarray
        Flat storage of the array's dtype, written in place.
    dst_offsets : (n,) int64 ndarray
        Destination start of each element (unique, the element runs disjoint).
    src : (m,) ndarray
        Flat source, of ``data``'s dtype.
    src_offsets, sizes : (n,) int64 ndarray
        Start and items of each element in ``src``.
    add : (n,) bool ndarray
        Sum into the destination instead of storing.

    Returns
    -------
    None
    """
    for k in prange(dst_offsets.shape[0]):
        d = dst_offsets[k]
        s = src_offsets[k]
        z = sizes[k]
        if add[k]:
            add_run(data[d : d + z], src[s : s + z])
        else:
            copy_run(data[d : d + z], src[s : s + z])


store_or_add_segments, store_or_add_segments_par = _serial_and_parallel(store_or_add_segments)


# The bookkeeping of the many-element reads (gather, stack, concat): one pass each for the checks
# and for the state changes, instead of a dozen numpy passes (which cost ~50 us per call).


@kernel()
def check_reads(idx, state, shape_id, n, is_grad, clear, zsid, keys, seen, sids):
    """Run the per-element checks of TF's ``ReadMany``, in order; fill ``sids``.

    Parameters
    ----------
    idx : (m,) ndarray of intp
        Element indices, in the order read.
    state, shape_id : (capacity,) ndarray of uint8, int32
        Per-element state bits (written 1, read 2, cleared 4, data 8) and shape ids.
    n : int
        Array size.  Past it, gradient arrays (``is_grad`` 1) read zeros; others fail.
    is_grad, clear : int
        1 for a gradient array; 1 when reads clear elements (``clear_after_read``).
    zsid : int
        Shape id of an unwritten element (the element shape), or -1 when that
        shape is not fully defined.
    keys : (m,) ndarray of intp
        Equal for equal indices, each in ``[0, seen.size)``; used when ``clear`` is 1.
    seen : (top,) ndarray of uint8
        All zero on entry; scratch for repeats.
    sids : (m,) ndarray of int64
        Output: the shape id each position reads.

    Returns
    -------
    pos : int
        First failing position, or ``m`` when all pass.
    code : int
        0 all pass; 1 index out of range (T9); 2 unwritten element of an
        undefined shape (T10); 3 element already cleared, or read twice here
        when reads clear (T11).
    """
    for k in range(idx.size):
        i = idx[k]
        if i < 0 or (i >= n and is_grad == 0):
            return k, 1
        bits = state[i] if i < n else 0
        if bits & 1 == 0:
            if zsid < 0:
                return k, 2
            sids[k] = zsid
        else:
            if bits & 4:
                return k, 3
            sids[k] = shape_id[i]
        if clear:
            if seen[keys[k]]:
                return k, 3
            seen[keys[k]] = 1
    return idx.size, 0


@kernel()
def store_reads(idx, state, shape_id, new_state, sids):
    """Commit a ``ReadMany`` planned by :func:`plan_reads`: one pass of stores.

    Parameters
    ----------
    idx : (m,) ndarray of intp
        Element indices.
    state, shape_id : (capacity,) ndarray of uint8, int32
        Per-element metadata, updated in place.
    new_state : (m,) ndarray of uint8
        State of element ``idx[k]`` after the read.
    sids : (m,) ndarray of int64
        Its shape id (unwritten elements become soft zeros of it).

    Returns
    -------
    None
    """
    for k in range(idx.size):
        i = idx[k]
        state[i] = new_state[k]
        shape_id[i] = sids[k]


@kernel()
def check_writes(idx, state, shape_id, n, is_grad, sids, items, numeric, keys, seen, add, fresh, dup):
    """Run the per-element checks of TF's ``WriteOrAggregateMany``, in order (scatter, split).

    Parameters
    ----------
    idx : (m,) ndarray of intp
        Element indices, all ``>= 0``, in the order written.
    state, shape_id : (capacity,) ndarray of uint8, int32
        Per-element state bits (written 1, read 2, cleared 4, data 8) and shape ids.
    n : int
        Array size; elements past it are unwritten.
    is_grad : int
        1 for a gradient array, where a second write sums (aggregates).
    sids : (m,) ndarray of int64
        Shape id of each value written.
    items : (n_shapes,) ndarray of int64
        Items of each interned shape.
    numeric : int
        1 when the dtype can be summed (not bool).
    keys : (m,) ndarray of intp
        Equal for equal indices, each in ``[0, seen.size)``.
    seen : (top,) ndarray of uint8
        All zero on entry; scratch for repeats.
    add, fresh, dup : (m,) ndarray of bool
        Outputs: sum into the element; the element needs new storage; the
        index appeared at an earlier position.

    Returns
    -------
    pos : int
        First failing position, or ``m`` when all pass.
    code : int
        0 all pass; 1 already read (T5); 2 already written (T6); 3 aggregate
        of a different shape (T7, the old shape id in ``old``); 4 sum of a
        dtype that cannot be summed (T8).
    old : int
        For code 3, the shape id stored at the failing element.
    """
    for k in range(idx.size):
        i = idx[k]
        bits = state[i] if i < n else 0
        d = seen[keys[k]] != 0
        seen[keys[k]] = 1
        dup[k] = d
        if bits & 2:
            return k, 1, 0
        written = bits & 1 != 0
        if is_grad == 0:
            if written or d:
                return k, 2, 0
            add[k] = False
            fresh[k] = True
            continue
        old = shape_id[i] if written else sids[k]
        if written and old != sids[k]:
            return k, 3, old
        has_old = bits & 8 != 0 and items[old] > 0
        a = (has_old or d) and items[sids[k]] > 0
        if a and numeric == 0:
            return k, 4, 0
        add[k] = a
        fresh[k] = not has_old and not d
    return idx.size, 0, 0


@kernel()
def plan_reads(idx, state, offsets, sids, items, clear, data_size, src, new_state):
    """Plan where TF's ``ReadMany`` copies from, and each element's state after it; write no metadata.

    Parameters
    ----------
    idx : (m,) ndarray of intp
        Element indices (all below the capacity of ``state``), checked by :func:`check_reads`.
    state, offsets : (capacity,) ndarray of uint8, int64
        Per-element state bits (written 1, read 2, cleared 4, data 8) and data offsets.
    sids : (m,) ndarray of int64
        Shape ids from :func:`check_reads`.
    items : (n_shapes,) ndarray of int64
        Items of each shape id.
    clear : int
        1 when reads clear elements.
    data_size : int
        Items in the data buffer: every run copied from must lie inside it.
    src : (m,) ndarray of int64
        Output: the data offset each position copies from, -1 for zeros.
    new_state : (m,) ndarray of uint8
        Output: the element's state after the read (written and read; cleared, without
        data, when ``clear`` is 1).

    Returns
    -------
    start : int
        ``src[0]`` when the elements lie one after another in storage in the order
        read (one block copy), else -1.
    bad : int
        -1, or the first position whose run lies outside the data buffer (a bug).
    """
    start = -2
    expect = 0
    for k in range(idx.size):
        i = idx[k]
        bits = np.int64(state[i])
        if bits & 1 == 0:
            bits = np.int64(1)
        w = items[sids[k]]
        o = np.int64(-1)
        if bits & 8 and w > 0:
            o = offsets[i]
            if o < 0 or o > data_size - w:
                return -1, k
        src[k] = o
        if start == -2:
            start = o
            expect = o
        if o != expect or start < 0:
            start = -1
        expect += w
        if clear:
            bits = (bits | 6) & 247  # written, read, cleared; the data bit (8) dropped
        else:
            bits = bits | 2
        new_state[k] = bits
    return (start if start >= 0 else -1), -1
