"""One TensorArray's state: flat storage, per-element metadata and the element state machine.

Every op method validates first (in TF's check order, computing the error TF
would raise first) and mutates only when nothing can fail any more, so a
failed op leaves the array exactly as it was.

Layout
------
``data`` is one flat contiguous buffer.  Element ``i`` is the run
``data[offsets[i] : offsets[i] + items(i)]`` with shape ``shapes[shape_id[i]]``.
*Dense* layout (the usual case, chosen when the first element is stored):
every element has ``width`` items and element ``i`` lives at ``i * width``, so
the buffer is a ``(capacity, *element_shape)`` array and stack is one copy.
When an element of another size arrives the array turns *ragged*: elements
already stored stay where they are and new ones are appended at ``used``.
Both buffers grow geometrically.  ``state`` holds the flag bits below.

Memory follows the data, not the size or the capacity: the dense buffer covers
only as many rows as the policy of :meth:`Storage._dense_rows` allows (all
``capacity`` rows while that is cheap, else rows up to the highest index written,
growing geometrically), and a write that would need a dense buffer much larger
than the data held turns the array ragged instead.  Unwritten and soft-zero slots
are states, not memory: nothing zero-fills unwritten rows.

Atomicity
---------
An op checks everything first, then does its data work where nothing can see
it (new storage, unused rows, scratch buffers, the result it returns), and
then commits: every change another op could observe (element states, shape
ids, offsets, size, element shape, the interned-shape table) is made by ONE
statement of stores (its targets on one line, no call or property among them:
Python checks for signals only at calls and jumps, and a tracing function sees
only line starts), so an exception raised
at any point -- a signal handler's ``KeyboardInterrupt``, a ``MemoryError``, a
tracing function -- finds the array either as it was or with the op done.
Interned shapes live in one immutable table (``_tab``) replaced whole at the
commit, so a failed or interrupted op interns nothing.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from . import _config, _kernels, _messages
from ._dtypes import is_numeric, tf_name
from ._shapes import is_compatible, is_fully_defined, merge, partial_str, shape_str
from .errors import InvalidArgumentError, ResourceExhaustedError

WRITTEN = np.uint8(1)
READ = np.uint8(2)
CLEARED = np.uint8(4)
DATA = np.uint8(8)

_W, _R, _C, _D = 1, 2, 4, 8  # the same bits as Python ints, for scalar paths
_WD = _W | _D  # a stored element (Python folds no global names: the fast paths use this)
_NONE, _DENSE, _RAGGED = 0, 1, 2
_COPY_VIEW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}
# A dense buffer may always be this large (allocated with np.empty: rows never written are never
# touched, so they take address space, not memory); beyond it, at most DENSE_FACTOR times the bytes
# of the elements stored (see Storage._dense_rows).  64 MiB keeps the arrays of the usual sizes
# dense from their first write, with no growth copies.
DENSE_SLACK_BYTES = 64 << 20
DENSE_FACTOR = 2


def _copy_view(a):
    """Return a view of ``a`` that the copy kernels compile once per item size for."""
    u = _COPY_VIEW.get(a.dtype.itemsize)
    return a if u is None else a.view(u)


def _first(mask):
    """Return the index of the first True in ``mask``, or ``len(mask)``."""
    pos = int(np.argmax(mask)) if mask.size else 0
    return pos if mask.size and mask[pos] else mask.size


def _err_concat_scalar(i):
    """Build TF's error C2: element ``i`` of a concat is a scalar."""
    return _messages.error("C2", index=i)


def _repeat_keys(idx):
    """Return ``(keys, table)`` for finding repeated indices in one pass: equal indices get equal keys.

    The keys are ``idx - idx.min()`` when the indices span a small range, else their rank
    among the distinct indices (a sort), so the zeroed table is never larger than ~4x ``idx``.
    """
    m = idx.size
    if not m:
        return idx.astype(np.intp), np.zeros(0, dtype=np.uint8)
    lo, hi = int(idx.min()), int(idx.max())
    if hi - lo < 4 * m + 4096:
        return (idx - lo).astype(np.intp, copy=False), np.zeros(hi - lo + 1, dtype=np.uint8)
    _, inverse = np.unique(idx, return_inverse=True)
    return inverse.astype(np.intp, copy=False).reshape(-1), np.zeros(m, dtype=np.uint8)


def _not_first_occurrence(idx):
    """Return the boolean mask of positions whose value appeared at an earlier position."""
    mask = np.empty(idx.size, dtype=bool)
    if idx.size:
        _kernels._mark_repeats(*_repeat_keys(idx), mask)
    return mask


def _exclusive_cumsum(a):
    out = np.empty(a.size, dtype=np.int64)
    if a.size:
        out[0] = 0
        np.cumsum(a[:-1], out=out[1:])
    return out


def _run_start(offsets, width):
    """Return the start of ``offsets`` when they are one ascending contiguous run of ``width``-item rows, else -1.

    Such a copy is a single block: numpy's copy (memcpy, with non-temporal stores for large
    blocks) beats the row kernels there; everything else goes through the kernels.
    """
    m = offsets.size
    first = int(offsets[0])
    if first < 0 or int(offsets[-1]) != first + (m - 1) * width:
        return -1
    if m > 2 and not np.array_equal(offsets, np.arange(first, first + m * width, width)):
        return -1
    return first


def _segments_start(offsets, sizes):
    """Return the start of ``offsets`` when the segments (``sizes`` items each) follow one another, else -1."""
    first = int(offsets[0])
    if first < 0 or (offsets.size > 1 and not np.array_equal(offsets[1:], offsets[:-1] + sizes[:-1])):
        return -1
    return first


_INT64_MAX = 2**63 - 1


def _checked_total(sizes):
    """Return the exact sum of the non-negative int64 ``sizes`` as a Python int (no int64 wrap-around)."""
    if not sizes.size:
        return 0
    if int(sizes.max()) <= _INT64_MAX // sizes.size:
        return int(sizes.sum())
    return sum(sizes.tolist())


def _new_table(shapes):
    """Return an interned-shape table ``(shapes, index, items, items_array)`` holding ``shapes`` (a list)."""
    items = [math.prod(s) for s in shapes]
    return shapes, {s: k for k, s in enumerate(shapes)}, items, np.array(items, dtype=np.int64)


def _extend_table(tab, new):
    """Return ``tab`` plus the shapes ``new`` (not in it) as a new table; ``tab`` is left as it is.

    Raises InvalidArgumentError when a shape has more than 2**63 - 1 items (TF aborts there).
    """
    for s in new:
        if math.prod(s) > _INT64_MAX:
            raise _messages.error("NT-shape-int64", shape=shape_str(s))
    return _new_table(tab[0] + list(new))


def _dense_choice(cap, top, have, stored, row_bytes):
    """Return the rows for a dense buffer now covering ``have`` rows, once slots below ``top`` need theirs.

    ``cap`` rows when that is within the budget (the larger of :data:`DENSE_SLACK_BYTES`
    and :data:`DENSE_FACTOR` times the ``stored`` elements' bytes), else twice ``have``, else
    ``top``; 0 when even ``top`` rows would exceed it.
    """
    budget = max(DENSE_SLACK_BYTES, DENSE_FACTOR * stored * row_bytes)
    for rows in (max(cap, top), max(top, 2 * have), top):
        if rows * row_bytes <= budget:
            return rows
    return 0


def _parallel(items):
    return items >= _config.PARALLEL_MIN_ELEMENTS


def _oom(shape, dtype):
    """Build TF's allocator error for a tensor (or buffer) of ``shape`` that cannot be allocated."""
    shape = (shape,) if isinstance(shape, int) else shape
    return _messages.error("NT-oom", shape=shape_str(shape), dtype=tf_name(dtype))


def _new(shape, dtype, zeros=False):
    """Call ``np.empty``/``np.zeros``, raising :func:`_oom` (not a raw MemoryError or ValueError) when too big."""
    try:
        return (np.zeros if zeros else np.empty)(shape, dtype=dtype)
    except (MemoryError, ValueError):  # ValueError: "array is too big" / more items than an intp holds
        raise _oom(shape, dtype) from None


def _meta_buffers(cap):
    """Allocate the per-element metadata: numpy arrays (bulk access) and memoryviews of them (fast scalar access).

    ``np.zeros`` takes zeroed pages from the OS lazily, so metadata for a large
    size costs no memory until its slots are used.
    """
    arrays = [_new(cap, t, zeros=True) for t in (np.uint8, np.int32, np.int64)]
    return (*map(memoryview, arrays), *arrays)


class Storage:
    """State of one TensorArray (forward or gradient); see the module docstring."""

    def __init__(
        self,
        name,
        dtype,
        size,
        element_shape=None,
        dynamic_size=False,
        clear_after_read=True,
        identical_element_shapes=False,
        is_grad=False,
        marked_size=-1,
    ):
        self.name = name
        self.dtype = np.dtype(dtype)
        self._fast_shape = None  # a shape whose writes take the dense fast path (see _note_fast)
        self._fast_sid = -1
        self._fast_rows = None  # (rows, *_fast_shape) view of data (see _rows)
        self._fast_n = 0  # the fast paths take slots below this: rows the dense buffer surely covers
        self._es = element_shape
        self.dynamic_size = bool(dynamic_size)
        self.clear_after_read = bool(clear_after_read)
        self.identical = bool(identical_element_shapes)
        self.is_grad = bool(is_grad)
        self.marked_size = int(marked_size)
        self.closed = False
        self.gradients_disallowed = False
        self.grads = {}
        self.lock = threading.Lock()
        self.size = int(size)
        self.cap = self.size
        self._st, self._sidb, self._offb, self.state, self.shape_id, self.offsets = _meta_buffers(self.cap)
        self._tab = _new_table([])
        self.layout = _NONE
        self.width = 0
        self.used = 0
        self.data = None
        self._jit = None  # the compiled view (numba_ta._jit), made when the array is first passed to @njit code

    # ------------------------------------------------------------------ helpers
    @property
    def element_shape(self):
        """The partial element shape (TF's ``element_shape_``)."""
        return self._es

    @property
    def shapes(self):
        """The interned element shapes (a list indexed by shape id); never changed in place."""
        return self._tab[0]

    def _es_commit(self, es):
        """Return ``(element_shape, fast_shape)`` to store at a commit that sets the element shape to ``es``.

        The fast paths assume their shape passes the element-shape check, so a change of
        the element shape switches them off until the next successful write re-arms them.
        """
        return es, (self._fast_shape if es == self._es else None)

    def _note_fast(self, shape, sid):
        """Remember ``shape`` for the fast path once a write of it succeeded on the dense layout.

        A write of this shape to an unwritten slot inside the array then passes
        every check (T1-T8) and needs no allocation: the caller has just seen it.
        """
        if self.layout == _DENSE and self._tab[2][sid] == self.width and self.width:
            n = min(self.cap, self.data.size // self.width)
            self._fast_shape, self._fast_sid, self._fast_rows, self._fast_n = shape, sid, None, n

    def _rows(self):
        """Return the dense buffer as ``(rows, *_fast_shape)``: every row it covers below the capacity."""
        rows = self._fast_rows
        if rows is None:
            n = min(self.cap, self.data.size // self.width)
            rows = self._fast_rows = self.data[: n * self.width].reshape((n,) + self._fast_shape)
        return rows

    def _dense_rows(self, w, top, n_new):
        """Return the rows of ``w`` items the dense buffer should cover so that slots below ``top`` have rows.

        0 means: do not lay these out dense (the array turns, or starts, ragged).
        ``n_new`` elements are about to get rows.  The buffer may cover all ``cap`` rows, or
        double, or cover ``top`` rows, whichever is first within the budget: the larger of
        :data:`DENSE_SLACK_BYTES` and :data:`DENSE_FACTOR` times the bytes of the elements
        stored once they are written.  The rule is monotone in ``top`` (a smaller ``top`` is
        never refused where a larger one was accepted).  Changes nothing.
        """
        if not w:
            return top
        have = 0 if self.layout != _DENSE else self.data.size // w
        if top <= have:
            return have
        stored = n_new
        if have:
            stored += int(np.count_nonzero(self.state[: self.size] & DATA))
        return _dense_choice(self.cap, top, have, stored, w * self.dtype.itemsize)

    def _plan_shapes(self, shapes):
        """Return the shape ids of ``shapes`` (full shapes, tuples) without interning any.

        Returns ``(sids, tab)``: a shape already interned keeps its id, a new one gets
        the id it will have once ``tab`` -- the table to store at the op's commit --
        replaces ``self._tab``.  ``tab`` is ``self._tab`` itself when nothing is new.
        """
        tab = self._tab
        index = tab[1]
        new = {}
        sids = []
        for shape in shapes:
            sid = index.get(shape)
            if sid is None:
                sid = new.get(shape)
                if sid is None:
                    sid = new[shape] = len(tab[0]) + len(new)
            sids.append(sid)
        return sids, (_extend_table(tab, new) if new else tab)

    def _plan_shape(self, shape):
        """Return ``(sid, tab)`` for one shape, as :meth:`_plan_shapes`."""
        sid = self._tab[1].get(shape)
        if sid is not None:
            return sid, self._tab
        sids, tab = self._plan_shapes([shape])
        return sids[0], tab

    def _check_open(self):
        """Raise T1 when the array is closed."""
        if self.closed:
            raise _messages.error("T1", name=self.name)

    def _reserve(self, n):
        """Make room for ``n`` elements in the metadata; grows geometrically.

        The data buffer does not grow here: :meth:`_alloc` gives rows to what is written.
        Changes nothing an op can see: new slots are unwritten, and ``cap`` is raised last.
        """
        if n <= self.cap:
            return
        newcap = max(n, 2 * self.cap, 8)
        self._grow_meta(newcap)
        self.cap, self._fast_rows = newcap, None  # the fast paths' rows view has at most ``cap`` rows

    def _grow_meta(self, newcap):
        """Enlarge the metadata to ``newcap`` slots (a copy; amortised by geometric growth).

        Atomic: on :class:`ResourceExhaustedError` (or any exception) the old buffers are in use.
        """
        meta = _meta_buffers(newcap)
        n = min(self.cap, len(self.state))
        for new, old in zip(meta[3:], (self.state, self.shape_id, self.offsets), strict=True):
            new[:n] = old[:n]
        self._st, self._sidb, self._offb, self.state, self.shape_id, self.offsets = meta

    def _grow_data(self, items, keep):
        """Enlarge the data buffer to ``items``, keeping its first ``keep`` items (the rest is unused).

        The new buffer is not zero-filled: its pages are touched only by what is copied or
        written.  Atomic: on :class:`ResourceExhaustedError` (or any exception) the old buffer
        is in use.
        """
        if items <= self.data.size:  # an interrupted growth may have left it larger than needed
            return
        new = _new(items, self.dtype)
        if keep:
            np.copyto(new[:keep], self.data[:keep])
        self.data, self._fast_rows = new, None  # the old buffer stays intact for any view of it

    def _alloc(self, slots, items):
        """Allocate room for ``items[k]`` items for each slot in ``slots`` (unique); return their offsets.

        Stores no offset (the op's commit does): it only allocates, choosing the layout
        on the first call and turning a dense array ragged when a size differs from its
        rows.  Room handed out but never committed is unused, never visible.
        """
        if slots.size == 0:
            return np.zeros(0, dtype=np.int64)
        top = int(slots.max()) + 1
        if self.layout == _NONE:  # allocate first: a failure leaves the array as it was
            if np.all(items == items[0]):
                w = int(items[0])
                rows = self._dense_rows(w, top, slots.size)
                if rows:
                    try:
                        data = _new(rows * w, self.dtype)
                    except ResourceExhaustedError:
                        raise _oom((rows, w), self.dtype) from None
                    self.data, self.layout, self.width = data, _DENSE, w
            if self.layout == _NONE:
                self.data, self.layout, self.used = _new(_checked_total(items), self.dtype), _RAGGED, 0
        if self.layout == _DENSE:
            w = self.width
            if np.all(items == w):
                if top * w > self.data.size:
                    rows = self._dense_rows(w, top, slots.size)
                    if rows:
                        self._grow_data(rows * w, self.data.size)
                if top * w <= self.data.size:
                    return slots.astype(np.int64) * w
            self.layout, self.used, self._fast_shape, self._fast_rows = _RAGGED, self.data.size, None, None
        need = self.used + _checked_total(items)
        if need > self.data.size:
            self._grow_data(max(need, 2 * self.data.size), self.used)
        offsets = self.used + _exclusive_cumsum(items)
        self.used = need
        return offsets

    # ------------------------------------------------------------------ errors
    # (the texts live in _messages, by code; these build the errors the checks below raise)
    def _err_corrupt(self, index):
        return _messages.error("NT-corrupt", name=self.name, index=index)

    def _err_write_oob(self, index, size):
        return _messages.error("T2", name=self.name, index=index, size=size)

    def _err_shape(self, index, shape, es):
        return _messages.error("T4", name=self.name, index=index, shape=shape_str(shape), element_shape=partial_str(es))

    def _err_written_read(self, index):
        return _messages.error("T5", name=self.name, index=index)

    def _err_written_twice(self, index):
        return _messages.error("T6", name=self.name, index=index)

    def _err_aggregate_shape(self, index, old, new):
        return _messages.error("T7", name=self.name, index=index, old_shape=shape_str(old), shape=shape_str(new))

    def _err_add_type(self):
        return _messages.error("T8", dtype=tf_name(self.dtype))

    def _err_read_oob(self, index, size):
        return _messages.error("T9", index=index, size=size)

    def _err_read_undefined(self, index, es):
        return _messages.error("T10", name=self.name, index=index, element_shape=partial_str(es))

    def _err_cleared(self, index):
        return _messages.error("T11", name=self.name, index=index)

    def check_dtype_write(self, value_dtype):
        """Raise K7 unless the written value's dtype is the array's."""
        if value_dtype != self.dtype:
            raise _messages.error("K7", array_dtype=tf_name(self.dtype), dtype=tf_name(value_dtype))

    def check_dtype_read(self, dtype):
        """Raise K8 unless the requested dtype is the array's."""
        if dtype != self.dtype:
            raise _messages.error("K8", array_dtype=tf_name(self.dtype), dtype=tf_name(dtype))

    # ------------------------------------------------------------------ size / close
    def checked_size(self):
        """Return ``Size()``, the number of elements; raise T1 when closed."""
        self._check_open()
        return self.size

    def close(self):
        """Drop all element data and mark the array closed (``ClearAndMarkClosed``); never fails."""
        meta = _meta_buffers(0)
        # the commit: one statement, its targets on one line (a statement split over lines has a line
        # event between them, where a tracing function could stop it halfway); TF deletes the grads too
        s = self
        s.closed, s.grads, s.data, s._jit, s._fast_shape, s._fast_rows, s._fast_n, s.layout, s.size, s.cap, s.used, s._st, s._sidb, s._offb, s.state, s.shape_id, s.offsets = (True, {}, None, None, None, None, 0, _NONE, 0, 0, 0, *meta)  # noqa: E501  # fmt: skip

    # ------------------------------------------------------------------ write
    def write(self, index, value, cell=None, cell_value=None):
        """Write one element: TF's ``LockedWriteOrAggregate`` (after the op-level K7 check).

        ``cell[0] = cell_value`` is done in the op's commit when ``cell`` (a one-item list) is
        given: the class's element shape changes with the array, all or nothing.
        """
        shape = value.shape
        if shape == self._fast_shape and 0 <= index < self._fast_n and not self._st[index] and cell is None:
            rows = self._fast_rows
            if rows is None:
                rows = self._rows()
            if index < self.size:
                rows[index] = value  # an unwritten row: nothing sees it until the commit below
                self._offb[index], self._sidb[index], self._st[index] = index * self.width, self._fast_sid, _WD
                return
            if not self.dynamic_size:
                raise self._err_write_oob(index, self.size)
            rows[index] = value  # slots past the size are always unwritten (state 0)
            self._offb[index], self._sidb[index], self._st[index], self.size = (
                index * self.width, self._fast_sid, _WD, index + 1
            )
            return
        if self.closed:
            self._check_open()
        n = self.size
        if index < 0 or (index >= n and not self.dynamic_size):
            raise self._err_write_oob(index, n)
        es = self._es
        if shape != es and not is_compatible(es, shape):
            raise self._err_shape(index, shape, es)
        st = self._st[index] if index < n else 0
        add = False
        if st:
            if st & _R:
                raise self._err_written_read(index)
            if not self.is_grad:
                raise self._err_written_twice(index)
            old = self._tab[0][self._sidb[index]]
            if old != shape:
                raise self._err_aggregate_shape(index, old, shape)
            add = bool(st & _D) and value.size > 0
            if add and not is_numeric(self.dtype):
                raise self._err_add_type()
        sid, tab = self._plan_shape(shape)
        items = tab[2][sid]
        es_new = shape if (self.identical and es != shape and not is_fully_defined(es)) else es
        if cell is None:
            cell, cell_value = [None], None
        if add:  # an element holding data: sum into a scratch copy, then store it in the commit
            o = self._offb[index]
            with np.errstate(all="ignore"):  # IEEE sums: inf - inf is NaN, quietly, as in TF
                total = self.data[o : o + items] + value.reshape(-1)
            es2, fast2 = self._es_commit(es_new)
            self.data[o : o + items], self.gradients_disallowed, self._tab, self._es, self._fast_shape, cell[0] = (
                total, True, tab, es2, fast2, cell_value
            )
            return
        # data work: room (may raise ResourceExhaustedError) and the bytes, where nothing sees them
        if index >= n:
            self._reserve(index + 1)
        o = 0
        if items:
            o = int(self._alloc(np.array([index], dtype=np.intp), np.array([items], dtype=np.int64))[0])
            self.data[o : o + items] = value.reshape(-1)
        es2, fast2 = self._es_commit(es_new)  # after _alloc, which may have switched the fast path off
        # commit (slots between the old size and index stay unwritten: state 0)
        s = self
        s._offb[index], s._sidb[index], s._st[index], s.size, s._tab, s._es, s._fast_shape, cell[0] = (
            o, sid, _WD, max(n, index + 1), tab, es2, fast2, cell_value
        )
        self._note_fast(shape, sid)

    # ------------------------------------------------------------------ read
    def read(self, index):
        """Read one element: TF's ``LockedRead``; return a fresh ndarray."""
        if self.closed:
            self._check_open()
        n = self.size
        if index < 0 or (index >= n and not self.is_grad):
            raise self._err_read_oob(index, n)
        st = self._st[index] if index < n else 0
        new_st = _W | _R | _C if self.clear_after_read else _W | _R
        if not st & _W:
            es = self._es
            if not is_fully_defined(es):
                raise self._err_read_undefined(index, es)
            out = _new(es, self.dtype, zeros=True)  # before any change: this may not fit
            sid, tab = self._plan_shape(es)
            if index < n:
                self._sidb[index], self._st[index], self._tab = sid, new_st, tab
                return out
            self._reserve(index + 1)  # a gradient array grows with soft zeros
            self.state[n : index + 1], self.shape_id[n : index + 1], self._st[index], self.size, self._tab = (
                WRITTEN, sid, new_st, index + 1, tab
            )
            return out
        if st & _C:
            raise self._err_cleared(index)
        sid = self._sidb[index]
        tab = self._tab
        items = tab[2][sid]
        if st & _D and items:
            if sid == self._fast_sid and self._fast_shape is not None:
                rows = self._fast_rows
                out = (self._rows() if rows is None else rows)[index, ...].copy()  # 0-d stays an array
            else:
                o = self._offb[index]
                if o < 0 or o + items > self.data.size:
                    raise self._err_corrupt(index)
                out = self.data[o : o + items].reshape(tab[0][sid]).copy()
        else:
            out = _new(tab[0][sid], self.dtype, zeros=True)
        self._st[index] = (st | _R | _C) & ~_D if self.clear_after_read else st | _R  # commit, after the copy
        return out

    # ------------------------------------------------------------------ many reads
    def _validate_reads(self, idx, es):
        """Run the ``ReadMany`` checks in sequence order (one kernel pass); intern nothing.

        Raises the error TF raises first (T1, T9, T10, T11).  ``idx`` is an intp vector.
        Returns ``(sids, tab, zsid)``: per-position shape ids, the shape table they refer to
        (to store at the commit) and the id of an unwritten element's shape (-1: undefined).
        """
        self._check_open()
        n = self.size
        m = idx.size
        zsid, tab = self._plan_shape(es) if is_fully_defined(es) else (-1, self._tab)
        keys, seen = _repeat_keys(idx) if self.clear_after_read else (idx, np.zeros(0, dtype=np.uint8))
        sids = np.empty(m, dtype=np.int64)
        pos, code = _kernels._check_reads(
            idx, self.state, self.shape_id, n, int(self.is_grad), int(self.clear_after_read), zsid, keys, seen, sids
        )
        if code:
            i = int(idx[pos])
            if code == 1:
                size = n
                if self.is_grad and pos:
                    size = max(n, int(idx[:pos].max()) + 1)
                raise self._err_read_oob(i, size)
            if code == 2:
                raise self._err_read_undefined(i, es)
            raise self._err_cleared(i)
        return sids, tab, zsid

    def _plan_reads(self, idx, sids, tab):
        """Plan where ``ReadMany`` copies from, and the element states after it; change nothing.

        Returns ``(src, start, new_state, top)``: per-position source offsets (-1 = zeros),
        the offset of the one contiguous block they form (or -1), each element's state
        after the read, and ``max(idx) + 1``.  Gradient arrays read past their size: the
        room for those slots is reserved here (unwritten, so unseen until the commit).
        """
        m = idx.size
        src = np.empty(m, dtype=np.int64)
        new_state = np.empty(m, dtype=np.uint8)
        top = int(idx.max()) + 1
        self._reserve(top)
        data_size = 0 if self.data is None else self.data.size
        start, bad = _kernels._plan_reads(
            idx, self.state, self.offsets, sids, tab[3], int(self.clear_after_read), data_size, src, new_state
        )
        if bad >= 0:
            raise self._err_corrupt(int(idx[bad]))
        return src, start, new_state, top

    def _commit_reads(self, idx, sids, new_state, top, zsid, tab, es):
        """Commit the state changes of ``ReadMany`` (and the element shape ``es``) in one statement."""
        n = self.size
        if top <= n and tab is self._tab and es == self._es:  # only metadata arrays change: one kernel call
            _kernels._store_reads(idx, self.state, self.shape_id, new_state, sids)
            return
        es2, fast2 = self._es_commit(es)
        if top <= n:
            self.state[idx], self.shape_id[idx], self._tab, self._es, self._fast_shape = (
                new_state, sids, tab, es2, fast2
            )
            return
        # a gradient array read past its size: the slots in between become soft zeros
        s = self
        s.state[n:top], s.shape_id[n:top], s.state[idx], s.shape_id[idx], s.size, s._tab, s._es, s._fast_shape = (
            WRITTEN, zsid, new_state, sids, top, tab, es2, fast2
        )

    def _any_unwritten(self, idx):
        n = self.size
        inside = idx[idx < n]
        return inside.size < idx.size or bool(((self.state[inside] & WRITTEN) == 0).any())

    def _new_result(self, shape, idx, es):
        """Allocate the result buffer of a gather or concat, before the op changes anything.

        When it does not fit and an element is unwritten, the error names the
        element's shape: TF materialises each unwritten element's zeros first,
        and that is the allocation that fails there.
        """
        try:
            return _new(shape, self.dtype)
        except ResourceExhaustedError:
            if self._any_unwritten(idx):
                _new(es, self.dtype, zeros=True)  # raises the TF error if the zeros do not fit either
            raise

    def _gather_out(self, src, start, shape, out):
        m = out.shape[0]
        width = math.prod(shape)
        if m and width:
            if self.data is None:
                out.fill(0)
            elif start >= 0:
                np.copyto(out.reshape(-1), self.data[start : start + m * width])
            else:
                kern = _kernels._gather_rows_par if _parallel(m * width) else _kernels._gather_rows
                kern(_copy_view(self.data), src, width, _copy_view(out.reshape(-1)))
        return out

    def gather(self, idx, attr_shape, view=False):
        """Run ``TensorArrayGatherV3`` after lookup and K8; ``idx`` is an integer ndarray.

        With ``view``, return a read-only view of the storage instead of a copy
        when ``idx`` is ``0..n-1`` on the dense layout (see :meth:`_stack_view`).
        """
        es = merge(self._es, attr_shape)
        if idx.ndim != 1:
            raise _messages.error("G2", shape=shape_str(idx.shape))
        if idx.size == 0:
            if not is_fully_defined(attr_shape):
                raise _messages.error("G3", element_shape=partial_str(attr_shape))
            out = np.zeros((0,) + tuple(attr_shape), dtype=self.dtype)
            self._es, self._fast_shape = self._es_commit(es)
            return out
        idx = idx.astype(np.intp, copy=False)
        sids, tab, zsid = self._validate_reads(idx, es)
        shape0 = tab[0][sids[0]]
        if not is_compatible(attr_shape, shape0):
            raise _messages.error("G4", element_shape=partial_str(attr_shape), shape=shape_str(shape0))
        # TF returns early for an empty result, before comparing the other elements' shapes
        k = _first(sids != sids[0]) if tab[2][sids[0]] else idx.size
        if k < idx.size:
            raise _messages.error("G5", shape0=shape_str(shape0), position=k, shape=shape_str(tab[0][sids[k]]))
        view = view and self._can_view(idx, shape0)
        out = None if view else self._new_result((idx.size,) + tuple(shape0), idx, es)
        src, start, new_state, top = self._plan_reads(idx, sids, tab)
        # data work first, commit after: an exception in between leaves every element readable
        out = self._stack_view(idx, src, shape0) if view else self._gather_out(src, start, shape0, out)
        self._commit_reads(idx, sids, new_state, top, zsid, tab, es)
        return out

    def _can_view(self, idx, shape):
        """Return whether elements ``idx`` of ``shape`` can be returned by :meth:`_stack_view`."""
        n, w = idx.size, self.width
        if self.layout != _DENSE or self.data is None or not w or math.prod(shape) != w or self.data.size < n * w:
            return False
        return idx[0] == 0 and idx[-1] == n - 1 and np.array_equal(idx, np.arange(n))

    def _stack_view(self, idx, src, shape):
        """Return elements ``0..n-1`` (:meth:`_can_view`) as a read-only view of the dense buffer.

        Safe because every element in it is being read: TF's rules forbid any later
        write to a read element (T5), dense elements never move, and growth or close
        replace the buffer rather than change it.  Soft-zero elements get their zeros
        written into their own (otherwise unused) rows.  The view is made through a
        read-only buffer, so numpy refuses to make it writeable.
        """
        n, w = idx.size, self.width
        zero = src < 0
        if zero.any():
            self.data[: n * w].reshape(n, w)[idx[zero]] = 0
        ro = np.frombuffer(memoryview(self.data[: n * w]).toreadonly(), dtype=self.dtype)
        return ro.reshape((n,) + tuple(shape))

    def concat(self, except0):
        """Run ``TensorArrayConcatV3`` after lookup and K8; return ``(value, lengths)``."""
        self._check_open()
        if self.is_grad:
            n = self.marked_size
            if n < 0:
                raise _messages.error("NT-concat-unsplit", name=self.name)
        else:
            n = self.size
        if n == 0:
            if not is_fully_defined(except0):
                raise _messages.error("C1", element_shape=partial_str(except0))
            return np.zeros((0,) + tuple(except0), dtype=self.dtype), np.zeros(0, dtype=np.int64)
        idx = np.arange(n, dtype=np.intp)
        sids, tab, zsid = self._validate_reads(idx, self._es)
        usids, inverse = np.unique(sids, return_inverse=True)
        shapes = [tab[0][s] for s in usids]
        # TF checks element by element: C2 (scalar) at i, then C3 (attribute) at i == 0 or
        # C4 (tails differ) at i > 0; the first failing index decides the error
        scalar = np.array([len(s) == 0 for s in shapes])[inverse]
        shape0 = tab[0][sids[0]]
        if scalar[0]:
            raise _err_concat_scalar(0)
        if not is_compatible(except0, shape0[1:]):
            raise _messages.error("C3", element_shape=partial_str(except0), shape=shape_str(shape0[1:]))
        tail_ok = np.array([s[1:] == shape0[1:] for s in shapes])[inverse]
        k = _first(scalar | ~tail_ok)
        if k < n:
            if scalar[k]:
                raise _err_concat_scalar(k)
            raise _messages.error("C4", shape0=shape_str(shape0[1:]), index=k, shape=shape_str(tab[0][sids[k]][1:]))
        lengths = np.array([s[0] for s in shapes], dtype=np.int64)[inverse]
        tail = shape0[1:]
        out = self._new_result((_checked_total(lengths),) + tuple(tail), idx, self._es)
        src, start, new_state, top = self._plan_reads(idx, sids, tab)
        sizes = lengths * math.prod(tail)  # the result was allocated: every size (and the sum) fits
        total = int(sizes.sum())
        if total:  # data work first, commit after
            flat = _copy_view(out.reshape(-1))
            if self.data is None:
                flat.fill(0)
            elif start >= 0:
                np.copyto(flat, _copy_view(self.data[start : start + total]))
            else:
                kern = _kernels._gather_segments_par if _parallel(total) else _kernels._gather_segments
                kern(_copy_view(self.data), src, sizes, _exclusive_cumsum(sizes), flat)
        self._commit_reads(idx, sids, new_state, top, zsid, tab, self._es)
        return out, lengths

    # ------------------------------------------------------------------ many writes
    def _check_slots(self, idx, sids, items, shape_at):
        """Run the per-position T5/T6/T7/T8 checks for writes of shape ids ``sids`` to slots ``idx`` (all ``>= 0``).

        ``items`` is the items array of the shape table ``sids`` refer to.  Returns
        ``(error_position, make_error, add, fresh, dup)``: ``make_error`` is None when
        all pass, else a function returning the error to raise (``raise make_error()``: an
        error object kept in a local would tie the frame, and the array, to its traceback in
        a cycle); the masks say which positions sum into their element, which elements need
        new storage, and which repeat an index seen earlier in ``idx``.
        """
        m = idx.size
        add, fresh, dup = np.empty(m, dtype=bool), np.empty(m, dtype=bool), np.empty(m, dtype=bool)
        keys, seen = _repeat_keys(idx)
        pos, code, old = _kernels._check_writes(
            idx, self.state, self.shape_id, self.size, int(self.is_grad), sids, items,
            int(is_numeric(self.dtype)), keys, seen, add, fresh, dup,
        )  # fmt: skip
        if not code:
            return m, None, add, fresh, dup
        i = int(idx[pos])
        if code == 1:
            return pos, lambda: self._err_written_read(i), None, None, None
        if code == 2:
            return pos, lambda: self._err_written_twice(i), None, None, None
        if code == 3:
            old_shape = self._tab[0][old]
            return pos, lambda: self._err_aggregate_shape(i, old_shape, shape_at(pos)), None, None, None
        return pos, self._err_add_type, None, None, None

    def _check_dst(self, dst, sizes):
        """Check that every destination run ``dst[k] : dst[k] + sizes[k]`` lies inside the data buffer."""
        if dst.size and (int(dst.min()) < 0 or int((dst + sizes).max()) > self.data.size):
            raise _messages.error("NT-corrupt-write", name=self.name)

    def _put_rows(self, dst, flat, width):
        """Copy the ``width``-item rows of ``flat`` to the (unused, allocated) offsets ``dst``."""
        m = dst.size
        if not width or not m:
            return
        self._check_dst(dst, width)
        start = _run_start(dst, width)
        if start >= 0:
            np.copyto(self.data[start : start + m * width], flat)
            return
        kern = _kernels._write_rows_par if _parallel(m * width) else _kernels._write_rows
        kern(_copy_view(self.data), dst, _copy_view(flat), width)

    def _put_segments(self, dst, flat, srco, sizes, total):
        """Copy the segments of ``flat`` (``sizes[k]`` items at ``srco[k]``) to the unused offsets ``dst``.

        ``total`` is ``flat.size`` when the segments are all of ``flat`` in order, else -1.
        """
        self._check_dst(dst, sizes)
        start = _segments_start(dst, sizes) if total >= 0 else -1
        if start >= 0:
            np.copyto(self.data[start : start + total], flat)
            return
        kern = _kernels._write_segments_par if _parallel(total) else _kernels._write_segments
        kern(_copy_view(self.data), dst, _copy_view(flat), srco, sizes)

    def _stage_sums(self, idx, sizes, flat, srco, add):
        """Do the data work of a gradient array's write-many that sums (``add``); change nothing.

        Computes the new value of every element written (in TF's order: the old value,
        then each write at that index in sequence) into room nothing sees yet.  Returns
        ``(uidx, dst, store)``: the elements written, the offsets their values get, and
        the scratch rows to store over the dense rows ``uidx`` at the commit (None when
        the values already sit at ``dst``, newly allocated room of a ragged array).
        """
        uidx, first, inverse = np.unique(idx, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        usizes = sizes[first]
        n = self.size
        inside = uidx < n
        old = np.full(uidx.size, -1, dtype=np.int64)
        has_old = np.zeros(uidx.size, dtype=bool)
        has_old[inside] = (self.state[uidx[inside]] & DATA) != 0
        has_old &= usizes > 0
        old[has_old] = self.offsets[uidx[has_old]]
        self._reserve(int(uidx[-1]) + 1)
        dense = self.layout != _RAGGED and np.all(usizes == usizes[0]) and (
            self.layout == _NONE or int(usizes[0]) == self.width
        )
        if dense:  # fixed rows: sum in a scratch block, copied over the rows at the commit
            self._alloc(uidx[~has_old], usizes[~has_old])  # the first write chooses the layout
        if dense and self.layout == _DENSE:
            width = self.width
            scratch = _new(uidx.size * width, self.dtype)
            uoff = np.arange(uidx.size, dtype=np.int64) * width
            store = scratch.reshape(uidx.size, width)
        else:  # ragged: every element written gets new room, the commit moves its offset there
            uoff = self._alloc(uidx, usizes)
            scratch, store = self.data, None
        if has_old.any():
            kern = _kernels._gather_segments
            kern(_copy_view(self.data), old[has_old], usizes[has_old], uoff[has_old], _copy_view(scratch))
        dst = uoff[inverse]
        add8 = add.astype(np.uint8)
        if self.dtype == np.float16:  # numba has no float16 arithmetic: numpy, in order
            with np.errstate(all="ignore"):
                for k in range(idx.size):
                    d, s, z = int(dst[k]), int(srco[k]), int(sizes[k])
                    if add[k]:
                        scratch[d : d + z] += flat[s : s + z]
                    else:
                        scratch[d : d + z] = flat[s : s + z]
        elif np.all(sizes == sizes[0]) and np.array_equal(srco, np.arange(idx.size, dtype=np.int64) * sizes[0]):
            width = int(sizes[0])  # rows (scatter; split into equal lengths): the row kernels
            par = _parallel(idx.size * width) and uidx.size == idx.size  # parallel only without repeats
            kern = _kernels._accumulate_rows_par if par else _kernels._accumulate_rows
            kern(scratch, dst, flat, width, add8)
        else:
            _kernels._accumulate_segments(scratch, dst, flat, srco, sizes, add8)
        if store is not None:
            return uidx, uidx.astype(np.int64) * self.width, store
        return uidx, uoff, None

    def scatter(self, idx, value, cell=None, cell_value=None):
        """Run ``TensorArrayScatterV3`` after lookup, K7 and S2.

        ``idx`` is an integer ndarray; ``cell`` as for :meth:`write`.
        """
        if cell is None:
            cell, cell_value = [None], None
        self._check_open()
        if idx.ndim != 1:
            raise _messages.error("G2", shape=shape_str(idx.shape))
        m = idx.size
        if m != value.shape[0]:
            raise _messages.error("S3", n_indices=m, n_values=value.shape[0])
        n = self.size
        max_index = int(idx.max()) if m else -1
        size2 = max(n, max_index + 1) if self.dynamic_size else n
        if max_index >= size2:
            raise _messages.error("S4", max_index=max_index, size=size2)
        if m == 0:
            cell[0] = cell_value
            return
        idx = idx.astype(np.intp, copy=False)
        row_shape = tuple(value.shape[1:])
        es = self._es
        neg = idx < 0
        pos_neg = _first(neg)
        if pos_neg == 0:
            raise self._err_write_oob(int(idx[0]), n)
        if not is_compatible(es, row_shape):
            raise self._err_shape(int(idx[0]), row_shape, es)
        sid, tab = self._plan_shape(row_shape)
        sids = np.full(m, sid, dtype=np.int64)
        pos, err, add, fresh, dup = self._check_slots(idx[:pos_neg], sids[:pos_neg], tab[3], lambda p: row_shape)
        if err is not None:
            raise err()
        if pos_neg < m:
            size_then = max(n, int(idx[:pos_neg].max()) + 1) if self.dynamic_size else n
            raise self._err_write_oob(int(idx[pos_neg]), size_then)
        # data work: room (may raise ResourceExhaustedError) and the bytes, where nothing sees them
        width = tab[2][sid]
        flat = np.ascontiguousarray(value).reshape(-1)
        es_new = row_shape if (self.identical and not is_fully_defined(es)) else es
        if width and add.any():
            sizes = np.full(m, width, dtype=np.int64)
            uidx, uoff, store = self._stage_sums(idx, sizes, flat, np.arange(m, dtype=np.int64) * width, add)
            self._commit_sums(uidx, uoff, store, idx, sids, tab, es_new, cell, cell_value)
            return
        self._reserve(max_index + 1)
        slots = idx[fresh] if width else idx[:0]
        offs = self._alloc(slots, np.full(slots.size, width, dtype=np.int64))
        if slots.size == m or not width:
            self._put_rows(offs, flat, width)
        else:  # only the rows of elements that get new room
            self._put_rows(offs, np.ascontiguousarray(flat.reshape(m, width)[fresh]).reshape(-1), width)
        es2, fast2 = self._es_commit(es_new)
        # commit
        s = self
        s.offsets[slots], s.state[idx], s.shape_id[idx], s.size, s._tab, s._es, s._fast_shape, cell[0] = (  # noqa: E501
            offs, WRITTEN | DATA, sid, size2, tab, es2, fast2, cell_value
        )
        self._note_fast(row_shape, sid)  # later one-element writes and reads of this shape: the fast paths

    def _commit_sums(self, uidx, uoff, store, idx, sids, tab, es, cell, cell_value):
        """Commit :meth:`_stage_sums`'s values (and the element shape ``es``) in one statement of stores."""
        es2, fast2 = self._es_commit(es)
        s = self
        if store is not None:
            w = self.width
            rows = self.data[: self.data.size // w * w].reshape(-1, w)
            rows[uidx], s.offsets[uidx], s.state[idx], s.shape_id[idx], s._tab, s._es, s._fast_shape, cell[0] = (
                store, uoff, WRITTEN | DATA, sids, tab, es2, fast2, cell_value
            )
        else:
            s.offsets[uidx], s.state[idx], s.shape_id[idx], s._tab, s._es, s._fast_shape, cell[0] = (
                uoff, WRITTEN | DATA, sids, tab, es2, fast2, cell_value
            )
        self.gradients_disallowed = True

    def split(self, value, lengths, check_dtype, cell=None, cell_value=None):
        """Run ``TensorArraySplitV3`` after P1-P4: T1, negative lengths, P5, K7, the writes.

        ``cell`` as for :meth:`write`.
        """
        if cell is None:
            cell, cell_value = [None], None
        self._check_open()
        if lengths.size and lengths.min() < 0:
            k = _first(lengths < 0)
            raise _messages.error("NT-split-negative", name=self.name, position=k, length=int(lengths[k]))
        n_new = lengths.size
        size = self.size
        size2 = n_new if (self.dynamic_size and size < n_new) else size
        if size2 != n_new:
            raise _messages.error("P5", size=size, n_lengths=n_new)
        check_dtype(value.dtype)
        tail = tuple(value.shape[1:])
        row = math.prod(tail)
        if n_new and row and int(lengths.max()) > _INT64_MAX // row:
            k = int(np.argmax(lengths))
            raise _messages.error(
                "NT-split-int64",
                name=self.name,
                position=k,
                length=int(lengths[k]),
                shape=shape_str((int(lengths[k]),) + tail),
            )
        es = self._es
        idx = np.arange(n_new, dtype=np.intp)
        tab = self._tab
        es2 = es
        if n_new:
            shape_at = lambda p: (int(lengths[p]),) + tail  # noqa: E731
            s0 = shape_at(0)
            if not is_compatible(es, s0):
                raise self._err_shape(0, s0, es)
            es2 = s0 if (self.identical and not is_fully_defined(es)) else es
            if es2 is not None:
                if len(es2) != len(s0) or not is_compatible(es2[1:], tail):
                    bad = np.ones(n_new, dtype=bool)
                elif es2[0] is None:
                    bad = np.zeros(n_new, dtype=bool)
                else:
                    bad = lengths != es2[0]
                k = _first(bad)
            else:
                k = n_new
            ulen, inverse = np.unique(lengths, return_inverse=True)
            usids, tab = self._plan_shapes([(int(L),) + tail for L in ulen])
            sids = np.array(usids, dtype=np.int64)[inverse.reshape(-1)]
            pos, err, add, fresh, _ = self._check_slots(idx, sids, tab[3], shape_at)
            if k < n_new and k <= pos:
                raise self._err_shape(k, shape_at(k), es2)
            if err is not None:
                raise err()
        marked = size2 if not self.is_grad else self.marked_size
        if not n_new:
            self._reserve(size2)
            self.marked_size, self.size, cell[0] = marked, max(self.size, size2), cell_value
            return
        # data work: room (may raise ResourceExhaustedError) and the bytes, where nothing sees them
        sizes = lengths.astype(np.int64) * row
        total = _checked_total(sizes)  # == value.size, which exists
        flat = np.ascontiguousarray(value).reshape(-1)
        srco = _exclusive_cumsum(sizes)
        if total and add.any():
            uidx, uoff, store = self._stage_sums(idx, sizes, flat, srco, add)
            self._commit_sums(uidx, uoff, store, idx, sids, tab, es2, cell, cell_value)  # a gradient array: static size
            return
        self._reserve(size2)
        slots = idx[fresh]
        offs = self._alloc(slots, sizes[fresh])
        if total:
            if slots.size == n_new:
                self._put_segments(offs, flat, srco, sizes, total)
            else:
                self._put_segments(offs, flat, srco[fresh], sizes[fresh], -1)
        es2, fast2 = self._es_commit(es2)
        # commit
        s = self
        s.offsets[slots], s.state[idx], s.shape_id[idx], s.marked_size, s.size, s._tab, s._es, s._fast_shape, cell[0] = (  # noqa: E501
            offs, WRITTEN | DATA, sids, marked, max(s.size, size2), tab, es2, fast2, cell_value
        )
        self._note_fast(s0, int(sids[0]))  # fast paths when element 0's shape fills a dense row

    # ------------------------------------------------------------------ gradients
    def copy_shapes_from(self, fwd, prepend):
        """Make every forward-written slot a soft zero of ``prepend + shape`` (``CopyShapesFrom``).

        Called on a new gradient array before anything can see it.  Raises InvalidArgumentError
        (before changing anything) when a prepended shape has more than 2**63 - 1 items.
        """
        n = fwd.size
        written = (fwd.state[:n] & WRITTEN) != 0
        if not written.any():
            return
        fsids = fwd.shape_id[:n][written]
        if (fsids == fsids[0]).all():  # one shape (the common case): no np.unique (about 10 us)
            usids, inverse = fsids[:1], np.zeros(fsids.size, np.intp)
        else:
            usids, inverse = np.unique(fsids, return_inverse=True)
        try:
            mapped, tab = self._plan_shapes([tuple(prepend) + fwd.shapes[s] for s in usids])
        except InvalidArgumentError as e:  # TF aborts here
            raise _messages.error("NT-prepend-int64", prepend=shape_str(prepend), message=e.message) from None
        ids = np.array(mapped, dtype=np.int32)[inverse.reshape(-1)]
        self.state[:n][written], self.shape_id[:n][written], self._tab = WRITTEN, ids, tab

    # ------------------------------------------------------------------ pickling
    # Format 1 of the pickled state (a dict of Python values and 1-D ndarrays, no numba object):
    #   format 1; base, source: the name's parts (the unpickled array gets a new name, see
    #   __setstate__); dtype (its numpy name); size; element_shape (None or a tuple of int/None);
    #   dynamic_size, clear_after_read, identical_element_shapes, is_grad, closed,
    #   gradients_disallowed (bools); marked_size (int); state ((size,) uint8 bits);
    #   shapes (list of int tuples); shape_id ((size,) int32, an index into shapes, -1 where
    #   unwritten); data (1-D, of dtype: the items of every element whose bits hold WRITTEN and
    #   DATA, in index order, each C-ordered, prod(shape) items: nothing else of the buffer);
    #   grads (dict source -> Storage, the forward array's gradient arrays).
    def __getstate__(self):
        """Return the array's state as format 1 above: only the bytes of elements that hold data.

        Taken under the array's lock, so a concurrent op is either in the snapshot or not.

        Returns
        -------
        dict
            Python values and new 1-D ndarrays; ``grads`` holds the gradient ``Storage``
            objects themselves (pickle's memo keeps an array pickled twice one array).

        Raises
        ------
        InternalError
            If an element points outside the data buffer (a numba_ta bug); nothing leaks.
        """
        import re

        with self.lock:
            n = self.size
            bits = np.array(self.state[:n], dtype=np.uint8)
            written = (bits & WRITTEN) != 0
            tab = self._tab
            usids, inverse = np.unique(self.shape_id[:n][written], return_inverse=True)
            shape_id = np.full(n, -1, dtype=np.int32)
            shape_id[written] = inverse.reshape(-1)
            shapes = [tuple(int(d) for d in tab[0][k]) for k in usids.tolist()]
            idx = np.flatnonzero((bits & (WRITTEN | DATA)) == (WRITTEN | DATA))
            sizes = tab[3][self.shape_id[idx]] if idx.size else np.zeros(0, dtype=np.int64)
            src = self.offsets[idx].astype(np.int64)
            keep = sizes > 0
            src, sizes = src[keep], sizes[keep]
            total = _checked_total(sizes)
            data = np.empty(total, dtype=self.dtype)
            if total:
                held = 0 if self.data is None else self.data.size
                bad = _first((src < 0) | (src > held - sizes))
                if bad < src.size:
                    raise self._err_corrupt(int(idx[keep][bad]))
                kern = _kernels._gather_segments_par if _parallel(total) else _kernels._gather_segments
                kern(_copy_view(self.data), src, sizes, _exclusive_cumsum(sizes), _copy_view(data))
            es = self._es
            grads = dict(self.grads)
            name = self.name
            flags = (
                self.dynamic_size, self.clear_after_read, self.identical, self.is_grad, self.closed,
                self.gradients_disallowed, self.marked_size,
            )  # fmt: skip
        source = None
        if flags[3]:  # "<forward base>_<counter>@<source>": the last "_<digits>@" splits it
            m = re.fullmatch(r"(.*)_\d+@(.*)", name, re.DOTALL)
            base, source = (m.group(1), m.group(2)) if m else (name, "")
        else:
            base = re.sub(r"_\d+\Z", "", name)
        return {
            "format": 1,
            "base": base,
            "source": source,
            "dtype": self.dtype.name,
            "size": int(n),
            "element_shape": None if es is None else tuple(None if d is None else int(d) for d in es),
            "dynamic_size": bool(flags[0]),
            "clear_after_read": bool(flags[1]),
            "identical_element_shapes": bool(flags[2]),
            "is_grad": bool(flags[3]),
            "closed": bool(flags[4]),
            "gradients_disallowed": bool(flags[5]),
            "marked_size": int(flags[6]),
            "state": bits,
            "shapes": shapes,
            "shape_id": shape_id,
            "data": data,
            "grads": grads,
        }

    def __setstate__(self, state):
        """Rebuild an array from :meth:`__getstate__`'s dict: a new, independent, registered array.

        It gets a new lock and a new unique name: ``new_name(base)`` for a forward array;
        for a gradient array ``"<forward name>@<source>"``, with its forward array's new
        name when that is unpickled with it (the forward array renames it), else a new
        forward-style name.  Elements holding data are laid out dense when they all have
        one number of items, else ragged; the one-element fast paths are re-armed when a
        write could have armed them.

        Parameters
        ----------
        state : dict
            Format 1 (see the comment above :meth:`__getstate__`).

        Raises
        ------
        ValueError
            If ``state`` is not a consistent format-1 state (nothing is registered then).
        """
        from . import _registry
        from ._dtypes import as_dtype

        def bad(why):
            return ValueError(f"not a numba_ta TensorArray state: {why}")

        if not isinstance(state, dict) or state.get("format") != 1:
            raise bad("unknown format")
        try:
            dtype = as_dtype(state["dtype"])
            n = int(state["size"])
            bits = np.asarray(state["state"])
            sid_in = np.asarray(state["shape_id"])
            shapes = [tuple(int(d) for d in s) for s in state["shapes"]]
            es = state["element_shape"]
            es = None if es is None else tuple(None if d is None else int(d) for d in es)
            data_in = np.asarray(state["data"])
            flags = [bool(state[k]) for k in ("dynamic_size", "clear_after_read", "identical_element_shapes")]
            is_grad, closed, disallowed = (bool(state[k]) for k in ("is_grad", "closed", "gradients_disallowed"))
            marked = int(state["marked_size"])
            grads = dict(state["grads"])
            base, source = str(state["base"]), state["source"]
        except (KeyError, TypeError, ValueError) as e:
            raise bad(f"{type(e).__name__}: {e}") from None
        if n < 0 or (closed and n) or bits.shape != (n,) or sid_in.shape != (n,):
            raise bad("size and per-element arrays disagree")
        if bits.dtype != np.uint8 or sid_in.dtype.kind not in "iu" or data_in.ndim != 1:
            raise bad("wrong array types")
        if data_in.dtype.name != dtype.name:
            raise bad(f"data of dtype {data_in.dtype} in an array of {dtype}")
        b = bits.astype(np.int64)
        if (
            np.any(b & ~(_W | _R | _C | _D))
            or np.any((b != 0) & (b & _W == 0))
            or np.any((b & _C != 0) & ((b & _R == 0) | (b & _D != 0)))
        ):
            raise bad("invalid element state bits")
        if any(d < 0 for s in shapes for d in s) or any(d is not None and d < 0 for d in es or ()):
            raise bad("negative dimension")
        if any(math.prod(s) > _INT64_MAX for s in shapes):
            raise bad("an element shape with more than 2**63 - 1 items")
        written = (b & _W) != 0
        sid = sid_in.astype(np.int64)
        if np.any(sid[written] < 0) or np.any(sid[written] >= len(shapes)) or np.any(sid[~written] != -1):
            raise bad("shape ids out of range")
        if is_grad and grads:
            raise bad("a gradient array with gradient arrays")
        if not all(isinstance(g, Storage) and getattr(g, "is_grad", False) for g in grads.values()):
            raise bad("grads must map str to gradient arrays")
        if not all(isinstance(k, str) for k in grads):
            raise bad("grads must map str to gradient arrays")
        if is_grad and not isinstance(source, str):
            raise bad("a gradient array without its source")
        tab = _new_table(shapes)
        idx = np.flatnonzero((b & _WD) == _WD)
        sizes = tab[3][sid[idx]] if idx.size else np.zeros(0, dtype=np.int64)
        if _checked_total(sizes) != data_in.size:
            raise bad(f"{data_in.size} data items for elements of {_checked_total(sizes)}")
        # the buffers: dense rows when every stored element has one width, else one ragged run
        meta = _meta_buffers(n)
        meta[3][:] = bits
        meta[4][written] = sid[written]
        flat = np.ascontiguousarray(data_in, dtype=dtype)  # native byte order
        widths = np.unique(sizes[sizes > 0])
        layout, width, used, data = _NONE, 0, 0, None
        full = sizes > 0
        rows = 0
        if widths.size == 1:  # dense when the memory policy allows (see Storage._dense_rows)
            top = int(idx[full][-1]) + 1
            rows = _dense_choice(n, top, 0, int(np.count_nonzero(full)), int(widths[0]) * dtype.itemsize)
        if rows:
            layout, width = _DENSE, int(widths[0])
            data = _new(rows * width, dtype, zeros=True)  # no stale bytes of freed memory in it
            data.reshape(rows, width)[idx[full]] = flat.reshape(-1, width)
            meta[5][idx] = idx * width
        elif widths.size:
            layout, used, data = _RAGGED, int(flat.size), flat.copy()
            meta[5][idx] = _exclusive_cumsum(sizes)
        self.dtype = dtype
        self._fast_shape, self._fast_sid, self._fast_rows, self._fast_n = None, -1, None, 0
        self._es = es
        self.dynamic_size, self.clear_after_read, self.identical = flags
        self.is_grad, self.marked_size, self.closed, self.gradients_disallowed = is_grad, marked, closed, disallowed
        self.grads = grads
        self.lock = threading.Lock()
        self._jit = None
        self.size = self.cap = n
        self._st, self._sidb, self._offb, self.state, self.shape_id, self.offsets = meta
        self._tab = tab
        self.layout, self.width, self.used, self.data = layout, width, used, data
        if layout == _DENSE:  # the fast paths, as the write of that shape would have armed them
            fsids = np.unique(sid[idx[sizes > 0]])
            if fsids.size == 1:
                shape = shapes[int(fsids[0])]
                if is_compatible(es, shape) and (not self.identical or es == shape):
                    self._note_fast(shape, int(fsids[0]))
        fwd_name = _registry.new_name(base)
        self.name = f"{fwd_name}@{source}" if is_grad else fwd_name
        _registry.register(self)
        for src_name, g in grads.items():  # gradient arrays unpickled with it take its new name
            _registry._rename(g, f"{self.name}@{src_name}")

    def __copy__(self):
        """Return a new independent array with this one's state (and copies of its gradient arrays).

        Two ``Storage`` objects never share buffers: a shallow copy would corrupt both.
        """
        import copy

        return copy.deepcopy(self)
