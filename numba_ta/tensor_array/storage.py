"""One TensorArray's state, as the Python layer holds it: the engine's struct and views of it.

The state lives in one place, the struct of :mod:`numba_ta.core.state` (its data
and metadata buffers, ``hdr`` with the scalars, the interned shapes, the
element shape), the same object users' compiled code receives.  The element
state machine (every check that can fail, TF's errors, gradient sums, growth,
the bulk ops) is the engine's, called through its compiled ``py_*`` entries.
:class:`Storage` keeps the Python-side things (name, dtype, lock, gradient
arrays), numpy views of the struct's buffers, and two fast paths that the
engine's rules make safe without any check that could fail:

* a write of the shape the last dense write had, into an unwritten slot that
  the dense buffer covers (no allocation, every check passes);
* a read of a stored element laid out as a dense row.

Each op has one entry here, ``Storage.op_*`` (:meth:`Storage.op_write` ...),
which both callers use: :mod:`numba_ta.raw_ops` (after converting its inputs and
looking the handle up in the registry) and the class
(:class:`numba_ta.TensorArray`, with its element-shape cell).  An entry takes
the array's lock, runs the op's remaining checks in TF's order and the op, and
names the op on its errors (TF's ``[Op:...]``).

The views are derived state: ``hdr[H.GEN]`` changes whenever the engine replaces
a buffer or interns a shape, and :meth:`Storage._refresh` rebuilds them (and
switches the fast paths off until the next write arms them).

Layout
------
``data`` is one flat contiguous buffer.  Element ``i`` is the run
``data[offsets[i] : offsets[i] + items(i)]`` with shape ``shapes[shape_id[i]]``.
*Dense* layout (the usual case, chosen when the first element is stored):
every element has ``width`` items and element ``i`` lives at ``i * width``, so
the buffer is a ``(capacity, *element_shape)`` array and stack is one copy.
When an element of another size arrives the array turns *ragged*: elements
already stored stay where they are and new ones are appended at ``used``.
Memory follows the data (the engine's ``_dense_rows``): the dense buffer covers
all ``capacity`` rows while that costs at most :data:`DENSE_SLACK_BYTES`, else at
most :data:`DENSE_FACTOR` times the bytes stored; unwritten and soft-zero slots
are states, not memory.

Atomicity
---------
An engine op checks everything, does its data work and commits inside one
compiled call, where no Python signal handler runs: the array is either as it
was or with the op done.  The Python fast paths commit with ONE statement of
stores (its targets on one line, no call among them: Python checks for signals
only at calls and jumps, and a tracing function sees only line starts).  A
result leaves an engine call and becomes the caller's array on the same line.
"""

from __future__ import annotations

import math
import threading

import numpy as np

from numba_ta.core import ckernels, kernels
from numba_ta.core import config as _config
from numba_ta.core import header as H
from numba_ta.core.memory import as_int64, copy_view, new_array, new_header, shape_table, work_oom_error
from numba_ta.core.state import (
    CLEARED,
    DATA,
    DENSE,
    NO_BUFFER,
    NOT_DATA,
    RAGGED,
    READ,
    STORED,
    WRITTEN,
    fields_of,
    new_state,
)
from numba_ta.core.status import K7, error_of
from numba_ta.errors import OpError
from numba_ta.tensor_array import registry as _registry
from numba_ta.tensor_array.engine import (
    py_close,
    py_concat,
    py_gather,
    py_gradient_of,
    py_read,
    py_scatter,
    py_split,
    py_write,
    set_name,
)
from numba_ta.tf import messages as _messages
from numba_ta.tf.dtypes import INT32_LIMIT, as_dtype, is_numeric, tf_name, to_index, to_index_array
from numba_ta.tf.messages import op_error, partial_str, shape_str
from numba_ta.tf.tensor_shape import is_compatible, is_fully_defined, merge

_RC = READ | CLEARED
INT64_MAX = 2**63 - 1
_INT32_MAX = 2**31 - 1
_NO_DIMS = np.zeros(0, np.int64)


def _first(mask):
    """Return the index of the first True in ``mask``, or ``len(mask)``."""
    pos = int(np.argmax(mask)) if mask.size else 0
    return pos if mask.size and mask[pos] else mask.size


def _exclusive_cumsum(a):
    out = np.empty(a.size, dtype=np.int64)
    if a.size:
        out[0] = 0
        np.cumsum(a[:-1], out=out[1:])
    return out


def _checked_total(sizes):
    """Return the exact sum of the non-negative int64 ``sizes`` as a Python int (no int64 wrap-around)."""
    if not sizes.size:
        return 0
    if int(sizes.max()) <= INT64_MAX // sizes.size:
        return int(sizes.sum())
    return sum(sizes.tolist())


def _dense_choice(cap, top, have, stored, row_bytes):
    """Apply the memory policy (the engine's ``_dense_rows``) to an array laid out from Python (unpickling)."""
    budget = max(_config.DENSE_SLACK_BYTES, _config.DENSE_FACTOR * stored * row_bytes)
    for rows in (max(cap, top), max(top, 2 * have), top):
        if rows * row_bytes <= budget:
            return rows
    return 0


def scalar_index(index, argname="index"):
    """Return the op's scalar ``index`` as an int (TypeError, ValueError: not an int32 integer; K6: not 0-d)."""
    if type(index) is int and -INT32_LIMIT <= index < INT32_LIMIT:
        return index
    i = to_index(index, argname)
    if i is None:
        raise _messages.error("K6", shape=shape_str(np.shape(index)))
    return i


def _partial(es):
    """Return a partial shape (tuple of int/None, or None) as the engine holds it: ``(dims, -1 for unknown; known)``."""
    if es is None:
        return _NO_DIMS, False
    return np.array([-1 if d is None else d for d in es], dtype=np.int64), True


def _bytes(value):
    """Return the items of ``value`` (an ndarray), C order, as a flat uint8 array (no copy when contiguous)."""
    return np.ascontiguousarray(value).reshape(-1).view(np.uint8)


def _slot(slot, doc, kind=None):
    """Return a read-only property of ``hdr[slot]`` (converted by ``kind`` when given), documented by ``doc``."""
    if kind is None:
        return property(lambda self: self.hdr[slot], doc=doc)
    return property(lambda self: kind(self.hdr[slot]), doc=doc)


_SIZE, _GEN, _WIDTH, _DYN = H.SIZE, H.GEN, H.WIDTH, H.DYN  # (the fast write's header fields, as globals)


class Storage:
    """State of one TensorArray (forward or gradient); see the module docstring.

    The scalars are properties over the struct's ``hdr`` (:attr:`hdr`, a memoryview
    of it, is what commits write); ``state``, ``shape_id``, ``offsets`` and ``data``
    are numpy views of the struct's buffers (``data`` None while nothing is stored).
    """

    # set by _refresh (one statement, through a local name): the views of the struct
    hdr: memoryview
    _hdr: np.ndarray
    _raw: np.ndarray
    _data: np.ndarray
    _state: np.ndarray
    _shape_id: np.ndarray
    _offsets: np.ndarray
    _stv: memoryview
    _sidv: memoryview
    _offv: memoryview
    _items: np.ndarray
    _shapes: list
    _es: tuple | None
    _fast_shape: tuple | None
    _fast_sid: int
    _fast_rows: np.ndarray | None
    _fast_n: int
    _gen: int

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
        dtype = np.dtype(dtype)
        size = int(size)
        h = new_header(dtype)
        h[H.SIZE] = h[H.CAP] = size
        h[H.DYN], h[H.CAR], h[H.IDENT], h[H.ISGRAD] = bool(dynamic_size), bool(clear_after_read), bool(identical_element_shapes), bool(is_grad)  # noqa: E501  # fmt: skip
        h[H.MARKED] = int(marked_size)
        h[H.FASTSID] = -1
        es, h[H.ES_KNOWN] = _partial(element_shape)
        meta = [new_array(size, t, zeros=True) for t in (np.uint8, np.int32, np.int64)]  # lazily zeroed pages
        fields = (np.empty(0, np.uint8), *meta, h, *shape_table([]), es, _NO_DIMS, name)
        self._adopt(new_state(*fields), name, dtype, fields)

    def _adopt(self, s, name, dtype, fields=None):
        """Take the struct ``s`` as this array's state (a new array: lock, no gradient arrays).

        ``fields``: the arrays ``s`` was made of, when the caller has them (the struct shares
        their memory), else they are looked up.
        """
        self._s = s
        self._name = name
        self.dtype = dtype
        self._numeric = is_numeric(dtype)
        self.grads = {}
        self.lock = threading.Lock()
        self.held = None  # the thread whose running compiled call holds the array (numba_ta.jit.extension), else None
        self._jit = None  # numba_ta.jit.extension's bookkeeping, made when the array is first passed to @njit code
        self._shapes = []
        self._gen = -1
        self._refresh(fields or fields_of(s))
        self.clear_after_read = bool(self.hdr[H.CAR])
        self.identical = bool(self.hdr[H.IDENT])
        self.is_grad = bool(self.hdr[H.ISGRAD])

    @classmethod
    def from_struct(cls, s, dtype):
        """Return a new ``Storage`` around an existing struct (one made by compiled code)."""
        storage = cls.__new__(cls)
        fields = fields_of(s)
        storage._adopt(s, fields[10], np.dtype(dtype), fields)
        return storage

    def _refresh(self, fields=None):
        """Rebuild the views of the struct's buffers, shapes and element shape (after ``hdr[H.GEN]`` changed).

        Derived state only, set by one statement: an exception before it leaves the old
        views (and the old ``_gen``), and the next op refreshes again.  The fast paths stay
        on for their shape when the new state still allows them (:meth:`_arm`).
        """
        armed = self._fast_shape if self._gen >= 0 else None
        raw, state, shape_id, offsets, hdr, dims, starts, items, es = (fields or fields_of(self._s))[:9]
        h = memoryview(hdr)
        gen = h[H.GEN]
        shapes = self._shapes
        n = h[H.NSHAPES]
        if len(shapes) != n:
            b = starts[: n + 1].tolist()
            flat = dims.tolist()
            shapes = shapes + [tuple(flat[b[k] : b[k + 1]]) for k in range(len(shapes), n)]
        es_t = tuple(None if d < 0 else d for d in es.tolist()) if h[H.ES_KNOWN] else None
        data = raw.view(self.dtype)
        s = self
        s.hdr, s._hdr, s._raw, s._data, s._state, s._shape_id, s._offsets, s._stv, s._sidv, s._offv, s._items, s._shapes, s._es, s._fast_shape, s._fast_sid, s._fast_rows, s._fast_n, s._gen = (h, hdr, raw, data, state, shape_id, offsets, memoryview(state), memoryview(shape_id), memoryview(offsets), items, shapes, es_t, None, -1, None, 0, gen)  # noqa: E501  # fmt: skip
        if armed is not None:
            self._arm(armed)

    def _arm(self, shape):
        """Switch the fast paths on for ``shape`` (just written) when it fills a dense row.

        A write of this shape to an unwritten slot inside the dense buffer then passes
        every check (T1-T8) and needs no allocation: the caller has just seen one.
        """
        h = self.hdr
        if h[H.GEN] != self._gen:
            self._refresh()
        w = h[H.WIDTH]
        es = self._es
        if h[H.LAYOUT] != DENSE or not w or math.prod(shape) != w or not is_compatible(es, shape):
            return
        if self.identical and not is_fully_defined(es):
            return
        try:
            sid = self._shapes.index(tuple(shape))
        except ValueError:  # a zero-item shape of this width never lands here (w > 0)
            return
        n = min(h[H.CAP], self._data.size // w)
        rows = self._data[: n * w].reshape((n,) + tuple(shape))
        self._fast_shape, self._fast_sid, self._fast_rows, self._fast_n = tuple(shape), sid, rows, n

    # ------------------------------------------------------------------ the scalars
    @property
    def name(self):
        """The array's unique name (its messages name it)."""
        return self._name

    @name.setter
    def name(self, value):
        set_name(self._s, value)
        self._name = value

    size = _slot(H.SIZE, "int: ``Size()``, the number of elements (0 once closed).")
    cap = _slot(H.CAP, "int: the slots the metadata has room for.")
    used = _slot(H.USED, "int: the items of the ragged layout's buffer in use.")
    width = _slot(H.WIDTH, "int: the items of a dense row.")
    layout = _slot(H.LAYOUT, "int: ``NO_BUFFER``, ``DENSE`` or ``RAGGED``.")
    dynamic_size = _slot(H.DYN, "bool: whether writes past the size grow the array (the Grad ops clear it).", bool)
    closed = _slot(H.CLOSED, "bool: whether the array was closed.", bool)
    gradients_disallowed = _slot(
        H.DISALLOWED, "bool: whether an element was summed into (TF then refuses new gradient arrays).", bool
    )
    marked_size = _slot(H.MARKED, "int: the size a split marked (a gradient array's concat uses its forward's), or -1.")

    def _current(self):
        """Refresh the views if the engine changed the struct since they were made; return ``hdr``."""
        h = self.hdr
        if h[H.GEN] != self._gen:
            self._refresh()
        return h

    @property
    def data(self):
        """Ndarray or None: the flat data buffer, of the array's dtype (None while nothing is stored)."""
        h = self._current()
        return None if h[H.LAYOUT] == NO_BUFFER and not self._raw.size else self._data

    @property
    def state(self):
        """Ndarray of uint8: the element state bits (``WRITTEN``, ``READ``, ``CLEARED``, ``DATA``), one per slot."""
        self._current()
        return self._state

    @property
    def shape_id(self):
        """Ndarray of int32: each slot's interned shape id (an index into :attr:`shapes`)."""
        self._current()
        return self._shape_id

    @property
    def offsets(self):
        """Ndarray of int64: each slot's offset into :attr:`data`, in items."""
        self._current()
        return self._offsets

    @property
    def element_shape(self):
        """The partial element shape (TF's ``element_shape_``): a tuple of int/None, or None."""
        self._current()
        return self._es

    @property
    def shapes(self):
        """The interned element shapes (a list of tuples indexed by shape id); never changed in place."""
        self._current()
        return self._shapes

    # ------------------------------------------------------------------ checks the ops make first
    def _check_open(self):
        """Raise T1 when the array is closed."""
        if self.hdr[H.CLOSED]:
            raise _messages.error("T1", name=self._name)

    def check_not_held(self):
        """Raise RuntimeError if the compiled call that holds the array is this thread's own.

        Every op runs it before it takes the lock, whenever ``held`` is set.  A compiled call
        holds its TensorArray arguments until it returns; Python code it runs meanwhile (an
        ``objmode`` block, a callback) cannot use them: the op would wait for the call's end
        forever.  Another thread's op waits for the call, as for any op.
        """
        if self.held == threading.get_ident():
            raise RuntimeError(
                f"TensorArray {self.name} is held by the compiled call this thread is running (it is an "
                "argument of that @njit function): Python code inside the call (objmode) cannot use it, the op "
                "would wait for the call to end; use the array's methods in the compiled code instead"
            )

    def check_dtype_write(self, value_dtype):
        """Raise K7 unless the written value's dtype is the array's."""
        if value_dtype != self.dtype:
            raise _messages.error("K7", array_dtype=tf_name(self.dtype), dtype=tf_name(value_dtype))

    def check_dtype_read(self, dtype):
        """Raise K8 unless the requested dtype is the array's."""
        if dtype != self.dtype:
            raise _messages.error("K8", array_dtype=tf_name(self.dtype), dtype=tf_name(dtype))

    # ------------------------------------------------------------------ the ops' entries
    # raw_ops and the class run the element ops through these, never through the methods below
    # directly: the lock, the op's checks left after its inputs' conversion (in TF's order), the
    # op, its name on the errors.  ``index`` and ``indices`` may still be unconverted (the class
    # passes the user's).
    def op_read(self, index, dtype):
        """``TensorArrayReadV3`` after the flow and handle: K6, K8, :meth:`read`; return the element."""
        try:
            if type(index) is not int or not -INT32_LIMIT <= index < INT32_LIMIT:
                index = scalar_index(index)
            if self.held is not None:
                self.check_not_held()
            with self.lock:  # not acquire() + try: a signal between the two would leave the lock held
                if dtype is not self.dtype:
                    self.check_dtype_read(dtype)
                return self.read(index)
        except (OpError, SystemError) as e:
            raise op_error(e, "TensorArrayReadV3") from None

    def op_write(self, index, value, cell=None, cell_value=None):
        """``TensorArrayWriteV3`` after the flow and handle: K6, K7, then TF's ``LockedWriteOrAggregate``.

        ``value`` is an ndarray.  ``cell[0] = cell_value`` is done with the op's commit when
        ``cell`` (a one-item list) is given: the class's element shape changes with the array.
        A value of the array's dtype and of the shape of the last dense write, into an unwritten
        slot inside the dense buffer, is stored here with numpy (the fast path, tested once under
        the lock: the state byte, stored last, is the commit); anything else is the engine's
        ``py_write``, after every check again.
        """
        if self.held is None and type(index) is int and cell is None:
            with self.lock:  # not acquire() + try: a signal between the two would leave the lock held
                h = self.hdr
                if (
                    value.dtype is self.dtype
                    and value.shape == self._fast_shape
                    and 0 <= index < self._fast_n  # (so an int32 index)
                    and h[_GEN] == self._gen
                    and not self._stv[index]
                ):
                    if index < h[_SIZE]:
                        self._fast_rows[index] = value  # an unwritten row: nothing sees it until the commit
                        self._offv[index], self._sidv[index] = index * h[_WIDTH], self._fast_sid
                        self._stv[index] = STORED  # the commit
                        return
                    if h[_DYN]:  # slots past the size are always unwritten (state 0)
                        self._fast_rows[index] = value
                        self._offv[index], self._sidv[index] = index * h[_WIDTH], self._fast_sid
                        self._stv[index], h[_SIZE] = STORED, index + 1  # the commit, then the size
                        return
        try:
            if type(index) is not int or not -INT32_LIMIT <= index < INT32_LIMIT:
                index = scalar_index(index)
            if self.held is not None:
                self.check_not_held()
            with self.lock:
                if value.dtype is not self.dtype:
                    self.check_dtype_write(value.dtype)
                h = self.hdr
                shape = np.array(value.shape, dtype=np.int64)
                if cell is None:
                    if py_write(self._s, index, _bytes(value), shape, self._numeric):
                        raise error_of(self._s)
                else:
                    cell[0] = cell_value if not (status := py_write(self._s, index, _bytes(value), shape, self._numeric)) else cell[0]  # noqa: E501  # fmt: skip
                    if status:
                        raise error_of(self._s)
                if value.shape != self._fast_shape or h[H.GEN] != self._gen:  # (a sum into an element keeps them armed)
                    self._arm(value.shape)
        except (OpError, SystemError) as e:
            raise op_error(e, "TensorArrayWriteV3") from None

    def op_gather(self, indices, dtype, attr_shape, view=False):
        """``TensorArrayGatherV3`` after the flow, handle, dtype and attribute: the indices, K8, :meth:`gather`."""
        try:
            idx = to_index_array(indices, "indices")
            if self.held is not None:
                self.check_not_held()
            with self.lock:
                self.check_dtype_read(dtype)
                return self.gather(idx, attr_shape, view)
        except (OpError, SystemError) as e:
            raise op_error(e, "TensorArrayGatherV3") from None

    def op_scatter(self, indices, value, cell=None, cell_value=None):
        """``TensorArrayScatterV3`` after the flow, handle and value: the indices, dim 0, K7, S2, :meth:`scatter`."""
        try:
            idx = to_index_array(indices, "indices")
            if self.held is not None:
                self.check_not_held()
            with self.lock:
                if value.ndim and value.shape[0] >= _INT32_MAX:
                    raise _messages.error("NT-dim0-too-large")
                self.check_dtype_write(value.dtype)
                if value.ndim == 0:
                    raise _messages.error("S2", shape=shape_str(value.shape))
                self.scatter(idx, value, cell, cell_value)
        except (OpError, SystemError) as e:
            raise op_error(e, "TensorArrayScatterV3") from None

    def op_concat(self, dtype, except0):
        """``TensorArrayConcatV3`` after the flow, handle, dtype and attribute: K8, :meth:`concat`."""
        try:
            if self.held is not None:
                self.check_not_held()
            with self.lock:
                self.check_dtype_read(dtype)
                return self.concat(except0)
        except (OpError, SystemError) as e:
            raise op_error(e, "TensorArrayConcatV3") from None

    def op_split(self, value, lengths, cell=None, cell_value=None):
        """``TensorArraySplitV3`` after the flow, handle and value: the lengths, P1-P4, :meth:`split`."""
        try:
            lens = to_index_array(lengths, "lengths", dtype=np.int64)
            if self.held is not None:
                self.check_not_held()
            with self.lock:
                if lens.ndim != 1:
                    raise _messages.error("P1", shape=shape_str(lens.shape))
                if lens.size >= _INT32_MAX:
                    raise _messages.error("P2")
                if value.ndim == 0:
                    raise _messages.error("P3", shape=shape_str(value.shape))
                total = int(lens.sum())
                if total != value.shape[0]:
                    raise _messages.error("P4", total=total, shape=shape_str(value.shape))
                self.split(value, lens.astype(np.int64, copy=False), self.check_dtype_write, cell, cell_value)
        except (OpError, SystemError) as e:
            raise op_error(e, "TensorArraySplitV3") from None

    def op_size(self):
        """``TensorArraySizeV3`` after the flow and handle: T1, the size (an int32 scalar)."""
        try:
            if self.held is not None:
                self.check_not_held()
            with self.lock:
                return np.int32(self.checked_size())
        except (OpError, SystemError) as e:
            raise op_error(e, "TensorArraySizeV3") from None

    def op_close(self):
        """``TensorArrayCloseV3`` after the handle: :meth:`close` (never fails)."""
        try:
            if self.held is not None:
                self.check_not_held()
            with self.lock:
                self.close()
        except SystemError as e:
            raise op_error(e, "TensorArrayCloseV3") from None

    # ------------------------------------------------------------------ size / close
    def checked_size(self):
        """Return ``Size()``, the number of elements; raise T1 when closed."""
        self._check_open()
        return self.hdr[H.SIZE]

    def close(self):
        """Drop all element data and mark the array closed (``ClearAndMarkClosed``); never fails.

        TF deletes the gradient arrays too (in the same statement as the engine's close).
        """
        _, self.grads = py_close(self._s), {}
        self._refresh()  # the views of the old buffers go: they are freed now

    # ------------------------------------------------------------------ write
    # ------------------------------------------------------------------ read
    def read(self, index):
        """Read one element: TF's ``LockedRead``; return a fresh ndarray."""
        h = self.hdr
        if 0 <= index < h[H.SIZE] and h[H.GEN] == self._gen:
            bits = self._stv[index]
            if bits & STORED == STORED and self._sidv[index] == self._fast_sid:
                out = self._fast_rows[index, ...].copy()  # 0-d stays an array
                self._stv[index] = (
                    (bits | _RC) & NOT_DATA if self.clear_after_read else bits | READ
                )  # commit, after the copy
                return out
        r = None  # the result becomes out on the line of the call (a failed op's is empty, of shape [0])
        out = (r := py_read(self._s, index))[1].view(self.dtype).reshape(r[2])
        if r[0]:
            raise error_of(self._s)
        if h[H.GEN] != self._gen:
            self._refresh()
        return out

    # ------------------------------------------------------------------ many reads
    def gather(self, idx, attr_shape, view=False):
        """Run ``TensorArrayGatherV3`` after lookup and K8; ``idx`` is an integer ndarray.

        With ``view``, return a read-only view of the storage instead of a copy
        when ``idx`` is ``0..n-1`` on the dense layout (see the engine's ``gather``).
        """
        if idx.ndim != 1:
            merge(self.element_shape, attr_shape)  # TF merges the element shape first (its errors)
            raise _messages.error("G2", shape=shape_str(idx.shape))
        attr, known = _partial(attr_shape)
        self.hdr[H.PARMIN] = _config.PARALLEL_MIN_ELEMENTS
        ckernels.prepare_read(self.hdr, idx.size)  # the parallel kernel loaded when the op may use it
        r = None
        idx = as_int64(idx)
        try:
            out = (r := py_gather(self._s, idx, attr, known, view))[1].view(self.dtype).reshape(r[2])
        except MemoryError as e:
            raise work_oom_error(e, idx.size) from None
        ckernels.load_wanted()  # a parallel kernel the op would have used, for the next op
        if r[0]:
            raise error_of(self._s)
        if view and out.size:
            self._current()  # the views of the struct: is ``out`` a slice of its data buffer?
            if np.may_share_memory(out, self._raw):
                out = np.frombuffer(memoryview(out.reshape(-1)).toreadonly(), dtype=self.dtype).reshape(out.shape)
        return out

    def concat(self, except0):
        """Run ``TensorArrayConcatV3`` after lookup and K8; return ``(value, lengths)``."""
        attr, known = _partial(except0)
        self.hdr[H.PARMIN] = _config.PARALLEL_MIN_ELEMENTS
        ckernels.prepare_read(self.hdr, int(self.hdr[H.SIZE]))
        r = None
        try:
            out, lengths = (r := py_concat(self._s, attr, known))[1].view(self.dtype).reshape(r[2]), r[3]
        except MemoryError as e:
            raise work_oom_error(e, int(self.hdr[H.SIZE])) from None
        ckernels.load_wanted()
        if r[0]:
            raise error_of(self._s)
        return out, lengths

    # ------------------------------------------------------------------ many writes
    def scatter(self, idx, value, cell=None, cell_value=None):
        """Run ``TensorArrayScatterV3`` after lookup, K7 and S2.

        ``idx`` is an integer ndarray; ``cell`` as for :meth:`op_write`.
        """
        if idx.ndim != 1:
            self._check_open()
            raise _messages.error("G2", shape=shape_str(idx.shape))
        idx = as_int64(idx)  # one compiled signature: C-contiguous int64
        rows, row = value.shape[0], np.array(value.shape[1:], dtype=np.int64)
        self.hdr[H.PARMIN] = _config.PARALLEL_MIN_ELEMENTS
        ckernels.prepare_write(self.hdr, value.size, idx.size)  # the parallel kernels loaded when the op may use them
        flat = new_array(value.shape, value.dtype, make=lambda: _bytes(value))
        try:
            if cell is None:
                if py_scatter(self._s, idx, flat, rows, row, self._numeric):
                    raise error_of(self._s)
            else:
                cell[0] = cell_value if not (status := py_scatter(self._s, idx, flat, rows, row, self._numeric)) else cell[0]  # noqa: E501  # fmt: skip
                if status:
                    raise error_of(self._s)
        except MemoryError as e:
            raise work_oom_error(e, idx.size) from None
        ckernels.load_wanted()
        if idx.size:
            self._arm(value.shape[1:])  # later one-element writes and reads of this shape: the fast paths

    def split(self, value, lengths, check_dtype, cell=None, cell_value=None):
        """Run ``TensorArraySplitV3`` after P1-P4: T1, negative lengths, P5, K7, the writes.

        ``check_dtype`` raises the op's K7 error (raised in its place: the engine returns its
        status after P5); ``cell`` as for :meth:`op_write`.
        """
        k7 = None
        if value.dtype != self.dtype:
            try:
                check_dtype(value.dtype)
            except OpError as e:
                k7 = e
        lens = as_int64(lengths)
        shape = np.array(value.shape, dtype=np.int64)
        self.hdr[H.PARMIN] = _config.PARALLEL_MIN_ELEMENTS
        ckernels.prepare_write(self.hdr, value.size, lens.size)
        bad = k7 is not None
        flat = new_array(value.shape, value.dtype, make=lambda: _bytes(value))
        try:
            if cell is None:
                status = py_split(self._s, flat, lens, shape, self._numeric, bad)
            else:
                cell[0] = cell_value if not (status := py_split(self._s, flat, lens, shape, self._numeric, bad)) else cell[0]  # noqa: E501  # fmt: skip
        except MemoryError as e:
            raise work_oom_error(e, lens.size) from None
        ckernels.load_wanted()
        if status:
            raise k7 if status == K7 and k7 is not None else error_of(self._s)
        if lens.size:
            self._arm((int(lens[0]),) + tuple(value.shape[1:]))  # when element 0's shape fills a dense row

    # ------------------------------------------------------------------ gradients
    def op_grad(self, source, shape_to_prepend):
        """``TensorArrayGradV3`` / ``TensorArrayGradWithShape`` after the flow, the handle and the attributes.

        Return the handle of this array's gradient array of ``source`` (a str), made on first
        use (TF's ``TensorArrayGradV3`` op's ``GetOrCreateGradient``): R2 (a gradient array has
        none), then under the lock the closed check, R4 (an element of this array was
        summed into) and the checks of ``shape_to_prepend`` (an int64 vector, None for
        ``TensorArrayGradV3``).  The forward array stops growing
        (``dynamic_size`` off) in the statement that publishes a new gradient array.
        """
        if self.is_grad:
            raise _messages.error("R2", container=_registry.GRAD_CONTAINER, name=self.name)
        if self.held is not None:
            self.check_not_held()
        with self.lock:
            self._check_open()
            if self.gradients_disallowed:
                raise _messages.error("R4", name=self.name)
            if shape_to_prepend is None:
                prepend: tuple[int, ...] = ()
                es = self.element_shape
            else:
                arr = shape_to_prepend
                if arr.ndim != 1:
                    raise _messages.error("NT-prepend-vector", shape=shape_str(arr.shape))
                neg = arr[arr < 0]
                if neg.size:
                    raise _messages.error("NT-prepend-negative", dim=int(neg[0]))
                prepend = tuple(int(d) for d in arr)
                es = None if self.element_shape is None else prepend + self.element_shape
                if math.prod(d for d in (es or prepend) if d is not None) > 2**63 - 1:
                    raise _messages.error("NT-shape-int64", shape=partial_str(es or prepend))
            g = self.grads.get(source)
            if g is None:
                g = Storage.gradient_of(self, f"{self.name}@{source}", es, prepend)
                handle_out = _registry.register(g)
                self.grads[source], self.hdr[H.DYN] = g, 0  # the commit: one statement
            else:
                handle_out = _registry.TensorArrayHandle(g)
                self.hdr[H.DYN] = 0
        return handle_out

    @classmethod
    def gradient_of(cls, fwd, name, element_shape, prepend):
        """Return a new gradient array of ``fwd``, made by the engine (``TensorArrayGradV3`` after its checks).

        Its element shape is ``element_shape`` (a partial shape or None), and every slot
        written in ``fwd`` is a soft zero of ``prepend`` + its shape (``CopyShapesFrom``).
        Raises InvalidArgumentError when such a shape has more than 2**63 - 1 items; ``fwd``
        is not changed.
        """
        es, known = _partial(element_shape)
        prepend = np.array(prepend, dtype=np.int64).reshape(-1)
        h = new_header(fwd.dtype)
        status, s = py_gradient_of(fwd._s, name, h, es, known, prepend)
        if status:
            raise error_of(fwd._s)
        return cls.from_struct(s, fwd.dtype)

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

        if self.held is not None:
            self.check_not_held()
        with self.lock:
            self._current()
            n = self.size
            bits = np.array(self.state[:n], dtype=np.uint8)
            written = (bits & WRITTEN) != 0
            items_of = self._items
            usids, inverse = np.unique(self.shape_id[:n][written], return_inverse=True)
            shape_id = np.full(n, -1, dtype=np.int32)
            shape_id[written] = inverse.reshape(-1)
            shapes = [tuple(int(d) for d in self._shapes[k]) for k in usids.tolist()]
            idx = np.flatnonzero((bits & STORED) == STORED)
            sizes = items_of[self.shape_id[idx]] if idx.size else np.zeros(0, dtype=np.int64)
            src = self.offsets[idx].astype(np.int64)
            keep = sizes > 0
            src, sizes = src[keep], sizes[keep]
            total = _checked_total(sizes)
            data = np.empty(total, dtype=self.dtype)
            if total:
                held = self._data.size
                bad = _first((src < 0) | (src > held - sizes))
                if bad < src.size:
                    raise _messages.error("NT-corrupt", name=self._name, index=int(idx[keep][bad]))
                dst = _exclusive_cumsum(sizes)
                kernels.gather_segments(copy_view(self._data), src, sizes, dst, copy_view(data))
            es = self._es
            grads = dict(self.grads)
            name = self._name
            flags = (
                self.dynamic_size, self.clear_after_read, self.identical, self.is_grad, self.closed,
                self.gradients_disallowed, int(self.marked_size),
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

        It gets a new struct, a new lock and a new unique name: ``new_name(base)`` for a forward array;
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
            np.any(b & ~(WRITTEN | READ | CLEARED | DATA))
            or np.any((b != 0) & (b & WRITTEN == 0))
            or np.any((b & CLEARED != 0) & ((b & READ == 0) | (b & DATA != 0)))
        ):
            raise bad("invalid element state bits")
        if any(d < 0 for s in shapes for d in s) or any(d is not None and d < 0 for d in es or ()):
            raise bad("negative dimension")
        if any(math.prod(s) > INT64_MAX for s in shapes):
            raise bad("an element shape with more than 2**63 - 1 items")
        written = (b & WRITTEN) != 0
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
        dims, starts, items = shape_table(shapes)
        idx = np.flatnonzero((b & STORED) == STORED)
        sizes = items[sid[idx]] if idx.size else np.zeros(0, dtype=np.int64)
        if _checked_total(sizes) != data_in.size:
            raise bad(f"{data_in.size} data items for elements of {_checked_total(sizes)}")
        # the buffers: dense rows when every stored element has one width, else one ragged run
        state = np.array(bits, dtype=np.uint8)
        shape_id = np.zeros(n, np.int32)
        shape_id[written] = sid[written]
        offsets = np.zeros(n, np.int64)
        flat = np.ascontiguousarray(data_in, dtype=dtype)  # native byte order
        widths = np.unique(sizes[sizes > 0])
        layout, width, used, data = NO_BUFFER, 0, 0, np.empty(0, dtype)
        full = sizes > 0
        rows = 0
        if widths.size == 1:  # dense when the memory policy allows (the engine's _dense_rows)
            top = int(idx[full][-1]) + 1
            rows = _dense_choice(n, top, 0, int(np.count_nonzero(full)), int(widths[0]) * dtype.itemsize)
        if rows:
            layout, width = DENSE, int(widths[0])
            data = new_array(rows * width, dtype, zeros=True)  # no stale bytes of freed memory in it
            data.reshape(rows, width)[idx[full]] = flat.reshape(-1, width)
            offsets[idx] = idx * width
        elif widths.size:
            layout, used, data = RAGGED, int(flat.size), flat.copy()
            offsets[idx] = _exclusive_cumsum(sizes)
        h = new_header(dtype)
        h[H.SIZE] = h[H.CAP] = n
        h[H.USED], h[H.WIDTH], h[H.LAYOUT] = used, width, layout
        h[H.DYN], h[H.CAR], h[H.IDENT], h[H.ISGRAD] = flags + [is_grad]
        h[H.CLOSED], h[H.DISALLOWED], h[H.MARKED] = closed, disallowed, marked
        h[H.NSHAPES], h[H.FASTSID] = len(shapes), -1
        es_arr, h[H.ES_KNOWN] = _partial(es)
        fwd_name = _registry.new_name(base)
        name = f"{fwd_name}@{source}" if is_grad else fwd_name
        fields = (data.view(np.uint8), state, shape_id, offsets, h, dims, starts, items, es_arr, _NO_DIMS, name)
        self._adopt(new_state(*fields), name, dtype, fields)
        self.grads = grads
        if layout == DENSE:  # the fast paths, as the write of that shape would have armed them
            fsids = np.unique(sid[idx[sizes > 0]])
            if fsids.size == 1:
                self._arm(shapes[int(fsids[0])])
        _registry.register(self)
        for src_name, g in grads.items():  # gradient arrays unpickled with it take its new name
            _registry._rename(g, f"{self.name}@{src_name}")

    def __copy__(self):
        """Return a new independent array with this one's state (and copies of its gradient arrays).

        Two ``Storage`` objects never share buffers: a shallow copy would corrupt both.
        """
        import copy

        return copy.deepcopy(self)
