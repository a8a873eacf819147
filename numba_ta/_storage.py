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
"""

from __future__ import annotations

import math
import threading

import numpy as np

from . import _config, _kernels
from ._dtypes import is_numeric, tf_name
from ._shapes import is_compatible, is_fully_defined, merge, partial_str, shape_str
from .errors import InvalidArgumentError, ResourceExhaustedError, UnimplementedError

WRITTEN = np.uint8(1)
READ = np.uint8(2)
CLEARED = np.uint8(4)
DATA = np.uint8(8)

_W, _R, _C, _D = 1, 2, 4, 8  # the same bits as Python ints, for scalar paths
_WD = _W | _D  # a stored element (Python folds no global names: the fast paths use this)
_NONE, _DENSE, _RAGGED = 0, 1, 2
_COPY_VIEW = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def _copy_view(a):
    """A view of ``a`` that copy kernels compile once per item size for."""
    u = _COPY_VIEW.get(a.dtype.itemsize)
    return a if u is None else a.view(u)


def _first(mask):
    """Index of the first True in ``mask``, or ``len(mask)``."""
    pos = int(np.argmax(mask)) if mask.size else 0
    return pos if mask.size and mask[pos] else mask.size


def _err_concat_scalar(i):
    """TF's error C2: element ``i`` of a concat is a scalar."""
    return InvalidArgumentError(
        f"Concat saw a scalar shape at index {i} but requires at least vectors.  Did you mean to call pack?"
    )


def _repeat_keys(idx):
    """``(keys, table)`` for finding repeated indices in one pass: equal indices get equal keys.

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
    """Boolean mask of positions whose value appeared at an earlier position."""
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
    """Start of ``offsets`` when they are one ascending contiguous run of ``width``-item rows, else -1.

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
    """Start of ``offsets`` when the segments (``sizes`` items each) follow one another, else -1."""
    first = int(offsets[0])
    if first < 0 or (offsets.size > 1 and not np.array_equal(offsets[1:], offsets[:-1] + sizes[:-1])):
        return -1
    return first


def _parallel(items):
    return items >= _config.PARALLEL_MIN_ELEMENTS


def _oom(shape, dtype):
    """TF's allocator error for a tensor (or buffer) of ``shape`` that cannot be allocated."""
    shape = (shape,) if isinstance(shape, int) else shape
    return ResourceExhaustedError(
        f"OOM when allocating tensor with shape{shape_str(shape)} and type {tf_name(dtype)} on "
        "/job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu"
    )


def _new(shape, dtype, zeros=False):
    """``np.empty``/``np.zeros`` raising :func:`_oom` (not a raw MemoryError or ValueError) when too big."""
    try:
        return (np.zeros if zeros else np.empty)(shape, dtype=dtype)
    except (MemoryError, ValueError):  # ValueError: "array is too big" / more items than an intp holds
        raise _oom(shape, dtype) from None


def _meta_buffers(cap):
    """Per-element metadata: numpy arrays (bulk access) and memoryviews of them (fast scalar access).

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
        self._fast_rows = None  # (capacity, *_fast_shape) view of data
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
        self.shapes = []
        self._shape_index = {}
        self._shape_items = []
        self._items_arr = np.zeros(0, dtype=np.int64)
        self.layout = _NONE
        self.width = 0
        self.used = 0
        self.data = None

    # ------------------------------------------------------------------ helpers
    @property
    def element_shape(self):
        """The partial element shape (TF's ``element_shape_``)."""
        return self._es

    @element_shape.setter
    def element_shape(self, value):
        if value != self._es:
            self._es = value
            self._fast_shape = self._fast_rows = None

    def _note_fast(self, shape, sid):
        """Remember ``shape`` for the fast path once a write of it succeeded on the dense layout.

        A write of this shape to an unwritten slot inside the array then passes
        every check (T1-T8) and needs no allocation: the caller has just seen it.
        """
        if self.layout == _DENSE and self._shape_items[sid] == self.width and self.width:
            self._fast_shape, self._fast_sid, self._fast_rows = shape, sid, None

    def _rows(self):
        rows = self._fast_rows
        if rows is None:
            rows = self._fast_rows = self.data.reshape((self.cap,) + self._fast_shape)
        return rows

    def _sid(self, shape):
        sid = self._shape_index.get(shape)
        if sid is None:
            sid = len(self.shapes)
            self.shapes.append(shape)
            self._shape_index[shape] = sid
            self._shape_items.append(math.prod(shape))
        return sid

    def _items(self, sid):
        return self._shape_items[sid]

    def _check_open(self):
        """T1 when the array is closed."""
        if self.closed:
            raise InvalidArgumentError(f"TensorArray {self.name} has already been closed.")

    def _reserve(self, n):
        """Make room for ``n`` elements in the metadata (and dense data); grows geometrically."""
        if n <= self.cap:
            return
        newcap = max(n, 2 * self.cap, 8)
        self._grow_meta(newcap)
        if self.layout == _DENSE:
            self._grow_data(newcap * self.width)
        self.cap = newcap

    def _grow_meta(self, newcap):
        """Enlarge the metadata to ``newcap`` slots (a copy; amortised by geometric growth).

        Atomic: on :class:`ResourceExhaustedError` the old buffers are untouched.
        """
        meta = _meta_buffers(newcap)
        n = min(self.cap, len(self.state))
        for new, old in zip(meta[3:], (self.state, self.shape_id, self.offsets), strict=True):
            new[:n] = old[:n]
        self._st, self._sidb, self._offb, self.state, self.shape_id, self.offsets = meta

    def _grow_data(self, items):
        """Enlarge the data buffer to ``items`` keeping its contents (in place when nothing views it).

        Atomic: on :class:`ResourceExhaustedError` the old buffer is kept.
        """
        data, self.data, self._fast_rows = self.data, None, None
        try:
            data.resize(items, refcheck=True)  # realloc: large blocks move without a copy
        except MemoryError:
            self.data = data
            raise _oom((items,), self.dtype) from None
        except ValueError:  # a view of it is alive (stack(copy=False)): leave it intact, copy
            try:
                new = _new(items, self.dtype)
            finally:
                self.data = data
            new[: data.size] = data
            data = new
        self.data = data

    def _resize(self, n):
        """Grow to ``n`` elements; new slots are unwritten (slots past the size always have state 0)."""
        if n > self.size:
            self._reserve(n)
            self.size = n

    def _alloc(self, slots, items):
        """Give each slot in ``slots`` (unique) room for ``items[k]`` items; set offsets."""
        if slots.size == 0:
            return
        if self.layout == _NONE:  # allocate first: a failure leaves the array as it was
            if np.all(items == items[0]):
                w = int(items[0])
                try:
                    self.data = _new(self.cap * w, self.dtype)
                except ResourceExhaustedError:
                    raise _oom((self.cap, w), self.dtype) from None
                self.layout, self.width = _DENSE, w
            else:
                self.data = _new(int(items.sum()), self.dtype)
                self.layout, self.used = _RAGGED, 0
        if self.layout == _DENSE:
            if np.all(items == self.width):
                self.offsets[slots] = slots.astype(np.int64) * self.width
                return
            self.layout, self.used = _RAGGED, self.data.size
            self._fast_shape = self._fast_rows = None
        total = int(items.sum())
        need = self.used + total
        if need > self.data.size:
            self._grow_data(max(need, 2 * self.data.size))
        self.offsets[slots] = self.used + _exclusive_cumsum(items)
        self.used = need

    def _alloc_one(self, slot, items):
        self._alloc(np.array([slot], dtype=np.intp), np.array([items], dtype=np.int64))

    # ------------------------------------------------------------------ errors
    def _err_write_oob(self, index, size):
        return InvalidArgumentError(
            f"TensorArray {self.name}: Tried to write to index {index} but array is not resizeable and size is: {size}"
        )

    def _err_shape(self, index, shape, es):
        return InvalidArgumentError(
            f"TensorArray {self.name}: Could not write to TensorArray index {index} because the value shape is "
            f"{shape_str(shape)} which is incompatible with the TensorArray's inferred element shape: "
            f"{partial_str(es)} (consider setting infer_shape=False)."
        )

    def _err_written_read(self, index):
        return InvalidArgumentError(
            f"TensorArray {self.name}: Could not write to TensorArray index {index} because it has already been read."
        )

    def _err_written_twice(self, index):
        return InvalidArgumentError(
            f"TensorArray {self.name}: Could not write to TensorArray index {index} because it has already "
            "been written to."
        )

    def _err_aggregate_shape(self, index, old, new):
        return InvalidArgumentError(
            f"TensorArray {self.name}: Could not aggregate to TensorArray index {index} because the existing shape "
            f"is {shape_str(old)} but the new input shape is {shape_str(new)}."
        )

    def _err_add_type(self):
        return InvalidArgumentError(f"tensor_array::AddToTensor type not supported: {tf_name(self.dtype)}")

    def _err_read_oob(self, index, size):
        return InvalidArgumentError(f"Tried to read from index {index} but array size is: {size}")

    def _err_read_undefined(self, index, es):
        return InvalidArgumentError(
            f"TensorArray {self.name}: Could not read from TensorArray index {index}.  Furthermore, the element "
            f"shape is not fully defined: {partial_str(es)}.  It is possible you are working with a resizeable "
            "TensorArray and stop_gradients is not allowing the gradients to be written.  If you set the full "
            "element_shape property on the forward TensorArray, the proper all-zeros tensor will be returned "
            "instead of incurring this error."
        )

    def _err_cleared(self, index):
        return InvalidArgumentError(
            f"TensorArray {self.name}: Could not read index {index} twice because it was cleared after a previous "
            "read (perhaps try setting clear_after_read = false?)."
        )

    def check_dtype_write(self, value_dtype):
        """K7: the written value's dtype must be the array's."""
        if value_dtype != self.dtype:
            raise InvalidArgumentError(
                f"TensorArray dtype is {tf_name(self.dtype)} but Op is trying to write dtype {tf_name(value_dtype)}."
            )

    def check_dtype_read(self, dtype):
        """K8: the requested dtype must be the array's."""
        if dtype != self.dtype:
            raise InvalidArgumentError(
                f"TensorArray dtype is {tf_name(self.dtype)} but Op requested dtype {tf_name(dtype)}."
            )

    # ------------------------------------------------------------------ size / close
    def checked_size(self):
        """``Size()``: the number of elements; T1 when closed."""
        self._check_open()
        return self.size

    def close(self):
        """``ClearAndMarkClosed``: drop all element data and mark closed; never fails."""
        self.closed = True
        self.grads = {}  # TF deletes the gradient arrays with the forward one
        self.data = self._fast_shape = self._fast_rows = None
        self.layout = _NONE
        self.size = self.cap = self.used = 0
        self._st, self._sidb, self._offb, self.state, self.shape_id, self.offsets = _meta_buffers(0)

    # ------------------------------------------------------------------ write
    def write(self, index, value):
        """``LockedWriteOrAggregate`` for one element (after the op-level K7 check)."""
        shape = value.shape
        if shape == self._fast_shape and 0 <= index < self.cap and not self._st[index]:
            if index >= self.size:
                if not self.dynamic_size:
                    raise self._err_write_oob(index, self.size)
                self.size = index + 1  # slots past the size are always unwritten (state 0)
            rows = self._fast_rows
            if rows is None:
                rows = self._rows()
            rows[index] = value
            self._offb[index] = index * self.width
            self._st[index] = _WD
            self._sidb[index] = self._fast_sid
            return
        if self.closed:
            self._check_open()
        n = self.size
        if index < 0 or (index >= n and not self.dynamic_size):
            raise self._err_write_oob(index, n)
        es = self.element_shape
        if shape != es and not is_compatible(es, shape):
            raise self._err_shape(index, shape, es)
        st = self._st[index] if index < n else 0
        add = False
        if st:
            if st & _R:
                raise self._err_written_read(index)
            if not self.is_grad:
                raise self._err_written_twice(index)
            old = self.shapes[self._sidb[index]]
            if old != shape:
                raise self._err_aggregate_shape(index, old, shape)
            add = bool(st & _D) and value.size > 0
            if add and not is_numeric(self.dtype):
                raise self._err_add_type()
        # commit: room first (may raise ResourceExhaustedError), then what ops can see
        if index >= n:
            self._reserve(index + 1)
        sid = self._shape_index.get(shape)
        if sid is None:
            sid = self._sid(shape)
        items = self._shape_items[sid]
        if add:
            o = self._offb[index]
            with np.errstate(all="ignore"):  # IEEE sums: inf - inf is NaN, quietly, as in TF
                self.data[o : o + items] += value.reshape(-1)
            self.gradients_disallowed = True
        elif items:
            if self.layout == _DENSE and items == self.width:
                o = self._offb[index] = index * items
            else:
                self._alloc_one(index, items)
                o = self._offb[index]
            self.data[o : o + items] = value.reshape(-1)
        if index >= n:
            self.size = index + 1  # the slots in between are unwritten (state 0)
        if self.identical and es != shape and not is_fully_defined(es):
            self.element_shape = shape
        self._st[index] = _W | _D
        self._sidb[index] = sid
        if not add:
            self._note_fast(shape, sid)

    # ------------------------------------------------------------------ read
    def read(self, index):
        """``LockedRead`` for one element; returns a fresh ndarray."""
        if self.closed:
            self._check_open()
        n = self.size
        if index < 0 or (index >= n and not self.is_grad):
            raise self._err_read_oob(index, n)
        st = self._st[index] if index < n else 0
        if not st & _W:
            es = self.element_shape
            if not is_fully_defined(es):
                raise self._err_read_undefined(index, es)
            out = _new(es, self.dtype, zeros=True)  # before any change: this may not fit
            sid = self._sid(es)
            if index >= n:
                self._resize(index + 1)
                self.state[n : index + 1] = WRITTEN
                self.shape_id[n : index + 1] = sid
            else:
                self._sidb[index] = sid
            self._st[index] = _W | _R | _C if self.clear_after_read else _W | _R
            return out
        if st & _C:
            raise self._err_cleared(index)
        sid = self._sidb[index]
        shape = self.shapes[sid]
        items = self._shape_items[sid]
        if st & _D and items:
            if sid == self._fast_sid and self._fast_shape is not None:
                rows = self._fast_rows
                out = (self._rows() if rows is None else rows)[index, ...].copy()  # 0-d stays an array
            else:
                o = self._offb[index]
                out = self.data[o : o + items].reshape(shape).copy()
        else:
            out = _new(shape, self.dtype, zeros=True)
        self._st[index] = (st | _R | _C) & ~_D if self.clear_after_read else st | _R
        return out

    # ------------------------------------------------------------------ many reads
    def _validate_reads(self, idx, es):
        """``ReadMany`` checks in sequence order (one kernel pass); returns per-position shape ids.

        Raises the error TF raises first (T1, T9, T10, T11).  ``idx`` is an intp vector.
        """
        self._check_open()
        n = self.size
        m = idx.size
        zsid = self._sid(es) if is_fully_defined(es) else -1
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
        return sids

    def _commit_reads(self, idx, sids):
        """Apply the state changes of ``ReadMany`` (one kernel pass).

        Returns ``(src, start)``: per-position source offsets (-1 = zeros) and the
        offset of the one contiguous block they form, or -1.
        """
        src = np.empty(idx.size, dtype=np.int64)
        if not idx.size:
            return src, -1
        top = int(idx.max()) + 1
        n = self.size
        if top > n:  # gradient arrays grow on reads past the end, with soft zeros
            zsid = self._sid(self.element_shape)
            self._resize(top)
            self.state[n:top] = WRITTEN
            self.shape_id[n:top] = zsid
        start = _kernels._commit_reads(
            idx, self.state, self.shape_id, self.offsets, sids, self._items_array(), int(self.clear_after_read), src
        )
        return src, start

    def _items_array(self):
        """Items of each interned shape, as an int64 array (cached)."""
        arr = self._items_arr
        if arr.size != len(self._shape_items):
            arr = self._items_arr = np.array(self._shape_items, dtype=np.int64)
        return arr

    def _any_unwritten(self, idx):
        n = self.size
        inside = idx[idx < n]
        return inside.size < idx.size or bool(((self.state[inside] & WRITTEN) == 0).any())

    def _new_result(self, shape, idx, es):
        """The result buffer of a gather or concat, allocated before the op changes anything.

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
        """``TensorArrayGatherV3`` after lookup and K8; ``idx`` is an integer ndarray.

        With ``view``, return a read-only view of the storage instead of a copy
        when ``idx`` is ``0..n-1`` on the dense layout (see :meth:`_stack_view`).
        """
        es = merge(self.element_shape, attr_shape)
        if idx.ndim != 1:
            raise InvalidArgumentError(f"Expected indices to be a vector, but received shape: {shape_str(idx.shape)}")
        if idx.size == 0:
            if not is_fully_defined(attr_shape):
                raise UnimplementedError(
                    f"TensorArray has size zero, but element shape {partial_str(attr_shape)} is not fully defined. "
                    "Currently only static shapes are supported when packing zero-size TensorArrays."
                )
            self.element_shape = es
            return np.zeros((0,) + tuple(attr_shape), dtype=self.dtype)
        idx = idx.astype(np.intp, copy=False)
        sids = self._validate_reads(idx, es)
        shape0 = self.shapes[sids[0]]
        if not is_compatible(attr_shape, shape0):
            raise InvalidArgumentError(
                f"TensorArray was passed element_shape {partial_str(attr_shape)} which does not match the Tensor "
                f"at index 0: {shape_str(shape0)}"
            )
        # TF returns early for an empty result, before comparing the other elements' shapes
        k = _first(sids != sids[0]) if self._shape_items[sids[0]] else idx.size
        if k < idx.size:
            raise InvalidArgumentError(
                f"TensorArray has inconsistent shapes.  Index 0 has shape: {shape_str(shape0)} but index {k} has "
                f"shape: {shape_str(self.shapes[sids[k]])}"
            )
        view = view and self._can_view(idx, shape0)
        out = None if view else self._new_result((idx.size,) + tuple(shape0), idx, es)
        self.element_shape = es
        src, start = self._commit_reads(idx, sids)
        if view:
            return self._stack_view(idx, src, shape0)
        return self._gather_out(src, start, shape0, out)

    def _can_view(self, idx, shape):
        """Whether elements ``idx`` of ``shape`` can be returned by :meth:`_stack_view`."""
        n, w = idx.size, self.width
        if self.layout != _DENSE or self.data is None or not w or math.prod(shape) != w:
            return False
        return idx[0] == 0 and idx[-1] == n - 1 and np.array_equal(idx, np.arange(n))

    def _stack_view(self, idx, src, shape):
        """Elements ``0..n-1`` (:meth:`_can_view`) as a read-only view of the dense buffer.

        Safe because every element in it has just been read: TF's rules forbid
        any later write to a read element (T5), dense elements never move, and
        growth or close replace the buffer rather than change it.  Soft-zero
        elements get their zeros written into their own (otherwise unused) rows.
        """
        n, w = idx.size, self.width
        zero = src < 0
        if zero.any():
            self.data[: self.cap * w].reshape(self.cap, w)[idx[zero]] = 0
        out = self.data[: n * w].reshape((n,) + tuple(shape))
        out.flags.writeable = False
        return out

    def concat(self, except0):
        """``TensorArrayConcatV3`` after lookup and K8; returns ``(value, lengths)``."""
        self._check_open()
        if self.is_grad:
            n = self.marked_size
            if n < 0:
                raise InvalidArgumentError(
                    f"TensorArray {self.name}: cannot concat a gradient TensorArray whose forward TensorArray was "
                    "never split (its marked size is unknown; TensorFlow crashes here)."
                )
        else:
            n = self.size
        if n == 0:
            if not is_fully_defined(except0):
                raise UnimplementedError(
                    f"TensorArray has size zero, but element_shape_except0 {partial_str(except0)} is not fully "
                    "defined. Currently only static shapes are supported when concatenating zero-size TensorArrays."
                )
            return np.zeros((0,) + tuple(except0), dtype=self.dtype), np.zeros(0, dtype=np.int64)
        idx = np.arange(n, dtype=np.intp)
        sids = self._validate_reads(idx, self.element_shape)
        usids, inverse = np.unique(sids, return_inverse=True)
        shapes = [self.shapes[s] for s in usids]
        # TF checks element by element: C2 (scalar) at i, then C3 (attribute) at i == 0 or
        # C4 (tails differ) at i > 0; the first failing index decides the error
        scalar = np.array([len(s) == 0 for s in shapes])[inverse]
        shape0 = self.shapes[sids[0]]
        if scalar[0]:
            raise _err_concat_scalar(0)
        if not is_compatible(except0, shape0[1:]):
            raise InvalidArgumentError(
                f"TensorArray was passed element_shape_except0 {partial_str(except0)} but index 0 has (excepting "
                f"dimension 0) shape: {shape_str(shape0[1:])} which does not match."
            )
        tail_ok = np.array([s[1:] == shape0[1:] for s in shapes])[inverse]
        k = _first(scalar | ~tail_ok)
        if k < n:
            if scalar[k]:
                raise _err_concat_scalar(k)
            raise InvalidArgumentError(
                f"TensorArray has inconsistent shapes.  Index 0 has (excepting dimension 0) shape: "
                f"{shape_str(shape0[1:])} but index {k} has (excepting dimension 0) shape: "
                f"{shape_str(self.shapes[sids[k]][1:])}"
            )
        lengths = np.array([s[0] for s in shapes], dtype=np.int64)[inverse]
        tail = shape0[1:]
        big = lengths.size * int(lengths.max()) > 2**62  # the int64 sum could wrap: Python ints then
        rows = sum(lengths.tolist()) if big else int(lengths.sum())
        out = self._new_result((rows,) + tuple(tail), idx, self.element_shape)
        src, start = self._commit_reads(idx, sids)
        row = math.prod(tail)
        sizes = lengths * row
        total = int(sizes.sum())
        if total:
            flat = _copy_view(out.reshape(-1))
            if self.data is None:
                flat.fill(0)
            elif start >= 0:
                np.copyto(flat, _copy_view(self.data[start : start + total]))
            else:
                kern = _kernels._gather_segments_par if _parallel(total) else _kernels._gather_segments
                kern(_copy_view(self.data), src, sizes, _exclusive_cumsum(sizes), flat)
        return out, lengths

    # ------------------------------------------------------------------ many writes
    def _check_slots(self, idx, sids, shape_at):
        """Per-position T5/T6/T7/T8 checks for writes of shape ids ``sids`` to slots ``idx`` (all ``>= 0``).

        Returns ``(error_position, make_error, add, fresh, dup)``: ``make_error`` is None when
        all pass, else a function returning the error to raise (``raise make_error()``: an
        error object kept in a local would tie the frame, and the array, to its traceback in
        a cycle); the masks say which positions sum into their element, which elements need
        new storage, and which repeat an index seen earlier in ``idx``.
        """
        m = idx.size
        add, fresh, dup = np.empty(m, dtype=bool), np.empty(m, dtype=bool), np.empty(m, dtype=bool)
        keys, seen = _repeat_keys(idx)
        pos, code, old = _kernels._check_writes(
            idx, self.state, self.shape_id, self.size, int(self.is_grad), sids, self._items_array(),
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
            old_shape = self.shapes[old]
            return pos, lambda: self._err_aggregate_shape(i, old_shape, shape_at(pos)), None, None, None
        return pos, self._err_add_type, None, None, None

    def _put_rows(self, idx, flat, width, add, dup):
        """Store (or sum, where ``add``) ``flat`` rows into slots ``idx`` (already allocated; ``dup`` as
        in :meth:`_check_slots`)."""
        m = idx.size
        if not width or not m:
            return
        dst = self.offsets[idx]
        if not add.any():
            start = _run_start(dst, width)
            if start >= 0:
                np.copyto(self.data[start : start + m * width], flat)
                return
            par = _parallel(m * width) and (not self.is_grad or not dup.any())
            kern = _kernels._write_rows_par if par else _kernels._write_rows
            kern(_copy_view(self.data), dst, _copy_view(flat), width)
            return
        if self.dtype == np.float16:  # numba has no float16 arithmetic: numpy, in order
            with np.errstate(all="ignore"):
                for k in range(m):
                    d = int(dst[k])
                    if add[k]:
                        self.data[d : d + width] += flat[k * width : (k + 1) * width]
                    else:
                        self.data[d : d + width] = flat[k * width : (k + 1) * width]
        else:
            par = _parallel(m * width) and not dup.any()
            kern = _kernels._accumulate_rows_par if par else _kernels._accumulate_rows
            kern(self.data, dst, flat, width, add.astype(np.uint8))
        self.gradients_disallowed = True

    def scatter(self, idx, value):
        """``TensorArrayScatterV3`` after lookup, K7 and S2; ``idx`` integer ndarray."""
        self._check_open()
        if idx.ndim != 1:
            raise InvalidArgumentError(f"Expected indices to be a vector, but received shape: {shape_str(idx.shape)}")
        m = idx.size
        if m != value.shape[0]:
            raise InvalidArgumentError(f"Expected len(indices) == values.shape[0], but saw: {m} vs. {value.shape[0]}")
        n = self.size
        max_index = int(idx.max()) if m else -1
        size2 = max(n, max_index + 1) if self.dynamic_size else n
        if max_index >= size2:
            raise InvalidArgumentError(f"Max scatter index must be < array size ({max_index} vs. {size2})")
        if m == 0:
            return
        idx = idx.astype(np.intp, copy=False)
        row_shape = tuple(value.shape[1:])
        es = self.element_shape
        neg = idx < 0
        pos_neg = _first(neg)
        if pos_neg == 0:
            raise self._err_write_oob(int(idx[0]), n)
        if not is_compatible(es, row_shape):
            raise self._err_shape(int(idx[0]), row_shape, es)
        sid = self._sid(row_shape)
        sids = np.full(m, sid, dtype=np.int64)
        pos, err, add, fresh, dup = self._check_slots(idx[:pos_neg], sids[:pos_neg], lambda p: row_shape)
        if err is not None:
            raise err()
        if pos_neg < m:
            size_then = max(n, int(idx[:pos_neg].max()) + 1) if self.dynamic_size else n
            raise self._err_write_oob(int(idx[pos_neg]), size_then)
        # commit: room first (may raise ResourceExhaustedError), then what ops can see
        self._reserve(max_index + 1)
        width = self._shape_items[sid]
        if width:
            slots = idx[fresh]
            self._alloc(slots, np.full(slots.size, width, dtype=np.int64))
        self.size = max(n, max_index + 1)
        if self.identical and not is_fully_defined(es):
            self.element_shape = row_shape
        self.state[idx] = WRITTEN | DATA
        self.shape_id[idx] = sid
        self._put_rows(idx, np.ascontiguousarray(value).reshape(-1), width, add, dup)
        self._note_fast(row_shape, sid)  # later one-element writes and reads of this shape: the fast paths

    def split(self, value, lengths, check_dtype):
        """``TensorArraySplitV3`` after P1-P4 (T1, negative lengths, P5, K7, writes)."""
        self._check_open()
        if lengths.size and lengths.min() < 0:
            k = _first(lengths < 0)
            raise InvalidArgumentError(
                f"TensorArray {self.name}: split lengths must be >= 0, but lengths[{k}] is {int(lengths[k])} "
                "(TensorFlow aborts here)."
            )
        n_new = lengths.size
        size = self.size
        size2 = n_new if (self.dynamic_size and size < n_new) else size
        if size2 != n_new:
            raise InvalidArgumentError(
                f"TensorArray's size is not equal to the size of lengths ({size} vs. {n_new}), and the TensorArray "
                "is not marked as dynamically resizeable"
            )
        check_dtype(value.dtype)
        tail = tuple(value.shape[1:])
        es = self.element_shape
        idx = np.arange(n_new, dtype=np.intp)
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
            sids = np.array([self._sid((int(L),) + tail) for L in ulen], dtype=np.int64)[inverse]
            pos, err, add, fresh, _ = self._check_slots(idx, sids, shape_at)
            if k < n_new and k <= pos:
                raise self._err_shape(k, shape_at(k), es2)
            if err is not None:
                raise err()
        # commit: room first (may raise ResourceExhaustedError), then what ops can see
        self._reserve(size2)
        if n_new:
            row = math.prod(tail)
            sizes = lengths.astype(np.int64) * row
            self._alloc(idx[fresh], sizes[fresh])
        if not self.is_grad:
            self.marked_size = size2
        self.size = max(self.size, size2)
        if not n_new:
            return
        if self.identical and not is_fully_defined(es):
            self.element_shape = s0
        self.state[idx] = WRITTEN | DATA
        self.shape_id[idx] = sids
        self._note_fast(s0, int(sids[0]))  # fast paths when element 0's shape fills a dense row
        total = int(sizes.sum())
        if not total:
            return
        flat = np.ascontiguousarray(value).reshape(-1)
        dst = self.offsets[idx]
        srco = _exclusive_cumsum(sizes)
        if not add.any():
            start = _segments_start(dst, sizes)
            if start >= 0:
                np.copyto(self.data[start : start + total], flat)
                return
            kern = _kernels._write_segments_par if _parallel(total) else _kernels._write_segments
            kern(_copy_view(self.data), dst, _copy_view(flat), srco, sizes)
            return
        if self.dtype == np.float16:
            with np.errstate(all="ignore"):
                for k in range(n_new):
                    d, s, z = int(dst[k]), int(srco[k]), int(sizes[k])
                    if add[k]:
                        self.data[d : d + z] += flat[s : s + z]
                    else:
                        self.data[d : d + z] = flat[s : s + z]
        else:
            _kernels._accumulate_segments(self.data, dst, flat, srco, sizes, add.astype(np.uint8))
        self.gradients_disallowed = True

    # ------------------------------------------------------------------ gradients
    def copy_shapes_from(self, fwd, prepend):
        """``CopyShapesFrom``: every forward-written slot becomes a soft zero of ``prepend + shape``."""
        n = fwd.size
        written = (fwd.state[:n] & WRITTEN) != 0
        if not written.any():
            return
        fsids = fwd.shape_id[:n][written]
        usids, inverse = np.unique(fsids, return_inverse=True)
        mapped = np.array([self._sid(tuple(prepend) + fwd.shapes[s]) for s in usids], dtype=np.int32)
        self.state[:n][written] = WRITTEN
        self.shape_id[:n][written] = mapped[inverse]
