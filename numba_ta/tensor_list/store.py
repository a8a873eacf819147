"""TensorList values: the list handle, its storage on the engine's struct, and copy-on-write versions.

A TensorList is a value (TensorFlow 2's variant tensor holding a ``TensorList``):
every op returns a new list and leaves its input as it was.  TensorFlow makes that
cheap by forwarding an input's buffer when nothing else refers to it; a Python
caller always still holds its input while the op runs (``l = op(l)`` rebinds ``l``
only after the call), so numba_ta cannot know at that moment whether the input
will be used again.  It uses *versions* instead (Baker's shallow binding):

* One storage holds the newest version of a lineage of lists, and an undo log.
  A :class:`TensorListHandle` is ``(storage, version)``.
* An op on the newest version changes the storage in place (no copy), appends to
  the log how to undo the change, and returns a handle of the next version.  The
  input handle is then *stale*: it still means the list it meant.
* Using a stale handle *materializes* it: the storage is copied and the log
  undone back to its version, into a storage of its own (O(size)).  Using it is
  the only thing that costs: ``l = op(l)`` loops never do.
* The storage keeps a weak reference to the one handle of each version; the
  ops that make versions drop the log entries that no living handle can need
  any more (:meth:`_Store.prune`, once more than :data:`_KEPT` are kept), so a
  loop that drops its old handles keeps a log of a few entries.  Nothing runs
  when a handle is freed: no finalizer, so no ``KeyboardInterrupt`` is ever
  swallowed there.

How an op commits (:meth:`NumericStore.set`, ``resize``, :meth:`_Store.change_many`): the
new version's undo entry goes into the log *before* the storage changes, and appending it
is the version bump (the newest version is ``base + len(log)``, one list append away).
Each change records how to undo it in that entry before its first store, and every entry
restores values (it does not reverse a delta), so it undoes a change made in full, in part
or not at all.  So wherever an exception lands -- a signal's ``KeyboardInterrupt`` between
any two statements included -- the input handle is already stale and reads its own version
through the entry: an op's effect appears at once or not at all, with no handler that must
run.  Dropping log entries (:meth:`_Store.prune`) releases each with one store (the log
keeps its length) and, once they are half of it, replaces the log and its base in one
statement.

So a loop of ``n`` pushes, sets or pops on a list that only the loop holds costs
O(n) in total, while an input list that is still referenced never changes.

Numeric lists keep their elements in the engine's struct (:mod:`numba_ta.core.state`,
``tl_set``/``tl_resize``): one flat buffer, dense rows while the elements share a
shape (element ``i`` is row ``i``), ragged runs otherwise; ``SIZE`` is the list's
length, a set element has the state ``WRITTEN | DATA`` and an unset one 0.  Lists
of variants (``element_dtype=variant``) and lists of resources (``element_dtype=resource``)
hold their elements, any Python objects, by reference in a Python list.

The list's dtype, element shape and ``max_num_elements`` never change along a
lineage (every op that returns a changed list keeps them), so they belong to the
storage.
"""

from __future__ import annotations

import itertools
import math
import weakref
from collections import deque

import numpy as np

from numba_ta.core import config as _config
from numba_ta.core import header as H
from numba_ta.core import kernels
from numba_ta.core.memory import new_array, new_header, oom_error, shape_table
from numba_ta.core.state import (
    DENSE,
    HELD_DATA,
    RAGGED,
    STORED,
    WRITTEN,
    fields_of,
    new_state,
)
from numba_ta.core.status import error_of
from numba_ta.tensor_list.listengine import py_tl_resize, py_tl_set_into
from numba_ta.tf.messages import partial_str

# the kinds of undo entries (their first item): a set element, a resize, several changes of one op
SET_ENTRY, RESIZE_ENTRY, MANY_ENTRY = 0, 1, 2
# ``into`` of a change: its undo entry is appended to the storage's log (looked up at the append:
# dropping entries replaces the log)
LOG = "log"

VARIANT = np.dtype(object)
"""The dtype numba_ta uses for TensorFlow's ``variant`` (lists of lists, or of any objects)."""

RESOURCE = np.dtype([("resource", object)])
"""The dtype numba_ta uses for TensorFlow's ``resource``: the element dtype of a list of resources.

A numpy dtype of its own (a record of one object field), so that it equals no other
dtype, ``VARIANT`` included; no array of it is ever made: the elements of a list of
resources are the objects given to it, held by reference as a variant list holds its
elements (:ref:`tensorlist-resources`).
"""

_FRESH = STORED | HELD_DATA  # a set element whose row holds its data
NO_I64 = np.zeros(0, np.int64)


class VariantZero:
    """TensorFlow's variant zero: a variant scalar holding the integer 0, not a list.

    It is what an unset element of a list of lists reads as (``TensorListGetItem``,
    ``TensorListStack`` ...).  Every list op refuses it as an input with TF's
    ``Input handle is not a list. Saw: 'Variant<type: int value: 0>'``.  There is one,
    :data:`numba_ta.VARIANT_ZERO`.

    Examples
    --------
    >>> import numba_ta
    >>> str(numba_ta.VARIANT_ZERO)
    'Variant<type: int value: 0>'
    """

    __slots__ = ()
    _instance: VariantZero | None = None

    def __new__(cls):
        """Return the one instance, :data:`VARIANT_ZERO` (made on the first call)."""
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self):
        """Return TF's summary of the value, ``Variant<type: int value: 0>`` (``str`` too)."""
        return "Variant<type: int value: 0>"

    __str__ = __repr__

    def __reduce__(self):
        """Pickle as the call ``VariantZero()``, so unpickling gives back :data:`VARIANT_ZERO` itself."""
        return (VariantZero, ())


VARIANT_ZERO = VariantZero()


class _Unset:
    """The element of a variant list that holds nothing."""

    __slots__ = ()

    def __repr__(self):
        return "<unset>"

    def __reduce__(self):
        return "_UNSET"  # the module's one instance


_UNSET = _Unset()


# --------------------------------------------------------------------------- the handle
class TensorListHandle:
    """An immutable TensorList value (TF's variant scalar holding a ``TensorList``).

    Made and consumed by the TensorList ops of :mod:`numba_ta.raw_ops`
    (``EmptyTensorList``, ``TensorListPushBack`` ...); opaque otherwise.  Each
    op returns a new handle and leaves its input as it was (TF's value
    semantics), at no copying cost when the input is not used again (see
    :ref:`tensorlist`).

    Parameters
    ----------
    store : NumericStore or ObjectStore
        The storage shared by the versions of one list (numba_ta's own; the ops
        make handles, users do not).
    version : int
        The version of ``store`` this handle stands for.

    Attributes
    ----------
    element_dtype : numpy.dtype
        The elements' dtype (``object`` for a list of variants).
    element_shape : tuple of (int or None), or None
        The list's element shape (None: unknown rank; None entries: unknown
        dimensions), as ``TensorListElementShape`` returns it.
    max_num_elements : int
        The size limit of ``TensorListPushBack`` (-1: none).

    Notes
    -----
    ``len(handle)`` is ``TensorListLength``.  Handles are not thread-safe:
    two threads may use different lists, not the same lineage of one list.

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> a = raw_ops.EmptyTensorList(element_shape=[2], max_num_elements=-1, element_dtype=np.float32)
    >>> b = raw_ops.TensorListPushBack(input_handle=a, tensor=np.ones(2, np.float32))
    >>> len(a), len(b)
    (0, 1)
    >>> b
    TensorListHandle(float, [2], 1 element)
    """

    __slots__ = ("_store", "_v", "__weakref__")

    def __init__(self, store, version):
        self._store = store
        self._v = version
        store.alive[version] = _ref(self)  # (the ops make one handle per version: _Store.handle)

    @property
    def element_dtype(self):
        """numpy.dtype: the elements' dtype (``object`` for a list of variants)."""
        return self._store.dtype

    @property
    def element_shape(self):
        """Tuple of (int or None), or None: the list's element shape (None: unknown rank)."""
        return self._store.element_shape

    @property
    def max_num_elements(self):
        """int: the size limit of ``TensorListPushBack`` (-1: none)."""
        return self._store.max_num_elements

    def __len__(self):
        """Return the list's length (``TensorListLength``); a stale handle is materialized first, O(size)."""
        return store_of(self).length

    def __repr__(self):
        """Return ``TensorListHandle(<TF dtype name>, <element shape>, <n> element(s))``: see the class example."""
        store = self._store
        n = len(self)
        es = partial_str(store.element_shape)
        return f"TensorListHandle({dtype_name(store.dtype)}, {es}, {n} element{'' if n == 1 else 's'})"

    def __reduce__(self):
        """Pickle by value: dtype, element shape, ``max_num_elements`` and the elements (unset ones as a marker).

        Unpickling (:func:`_rebuild`) makes a new storage whose version 0 is this list; it
        shares nothing with this lineage.  A stale handle is materialized first.
        """
        store = store_of(self)
        n = store.length
        items = [store.get(i) if store.is_set(i) else _UNSET for i in range(n)]
        return (_rebuild, (store.dtype, store.element_shape, store.max_num_elements, items))

    def __copy__(self):
        """Return ``self``: the list a handle stands for never changes, so the copy can be the handle."""
        return self  # immutable

    def __deepcopy__(self, memo):
        """Return ``self``, as :meth:`__copy__`: there is nothing mutable to copy (``memo`` is unused)."""
        return self


def _rebuild(dtype, element_shape, max_num_elements, items):
    """Unpickle a :class:`TensorListHandle`."""
    store = new_store(dtype, element_shape, max_num_elements, len(items))
    for i, v in enumerate(items):
        if v is not _UNSET:
            store.set(i, v, None)
    return store.handle()


_new_handle = object.__new__
_ref = weakref.ref


def dtype_name(dtype):
    """TF's name of a list's dtype (``float``, ``int32``, ``variant``, ``resource``)."""
    from numba_ta.tf.dtypes import tf_name

    if dtype == VARIANT:
        return "variant"
    if dtype == RESOURCE:
        return "resource"
    return tf_name(dtype)


def store_of(h):
    """Return the storage holding ``h``'s version, materializing a stale handle first (the newest is in place)."""
    store = h._store
    if h._v != store.base + len(store.log):  # (store.ver, inline)
        store = store.materialize(h)
    return store


# --------------------------------------------------------------------------- storage
_COMPACT = 32  # released log entries (None) a log keeps before it is rebuilt without them
_KEPT = 8  # entries the log may keep for freed handles before an op prunes it (see _Store._new_version)


class _Store:
    """What both kinds of storage share: the constants of the lineage, the versions and the undo log."""

    _fshape = None  # the shape of NumericStore's fast path (_arm); no value's shape is None

    def __init__(self, dtype, element_shape, max_num_elements):
        self.dtype = dtype
        self.element_shape = element_shape
        self.max_num_elements = max_num_elements
        self.base = 0  # the version the first log entry undoes to
        self.log = deque()  # log[k] undoes version base + k + 1 into base + k
        self.first = 0  # no live handle is older (prune): the entries before it are None
        self.alive = {}  # version -> weak reference to its handle (from first on; dead ones until a prune)
        self.ok_shape = None  # the shape of the last element stored (compatible with the element shape)

    @property
    def ver(self):
        """int: the newest version, the one the storage holds (``base + len(log)``: appending to the log bumps it)."""
        return self.base + len(self.log)

    def handle(self):
        """Return the handle of the newest version (the live one, else a new one): one handle per version."""
        v = self.base + len(self.log)
        r = self.alive.get(v)
        h = None if r is None else r()
        if h is None or h._store is not self:
            h = TensorListHandle(self, v)
        return h

    def _new_version(self, kept=_KEPT):
        """Return the handle of the newest version, just made by a change's append to the log.

        Then, when the log keeps more than ``kept`` entries (:data:`_KEPT`; 0 for an entry
        holding an element's old bytes) and the oldest version it keeps them for has lost
        its handle, the log is pruned (:meth:`prune`).
        """
        v = self.base + len(self.log)
        h = _new_handle(TensorListHandle)  # (TensorListHandle(self, v), without the call)
        h._store, h._v = self, v
        alive = self.alive
        alive[v] = _ref(h)
        if v - self.first > kept:
            oldest = alive.get(self.first)
            if oldest is None or oldest() is None:
                self.prune()
        return h

    def change_many(self, changes):
        """Make several changes (``(method, args)`` pairs: ``set``, ``resize``) as one new version; return its handle.

        One log entry holds the changes' undo entries, each appended to it before its
        change's first store; appending the entry to the log is the commit (the module
        docstring).  If a change raises (an allocation), the ones made are undone and the
        entry dropped: the storage is as it was.
        """
        v = self.base + len(self.log)
        done = []
        entry = (MANY_ENTRY, done)
        self.log.append(entry)  # the commit: from here the input handle reads through entry
        try:
            for method, args in changes:
                method(*args, done)
        except BaseException:
            self._drop(v)
            raise
        return self._new_version(0)  # (its entries may hold old bytes: pruned at once)

    def _record(self, into, entry):
        """Append the undo ``entry`` where ``into`` says (:meth:`NumericStore.set`), before the change's first store."""
        if into is not None:
            (self.log if into is LOG else into).append(entry)  # with LOG, the commit

    def _drop(self, v):
        """After a change from version ``v`` failed: undo it and drop its entry, if it made one.

        The newest version moves only by the change's append (dropping log entries keeps
        it), so its entry is the log's last one if the version moved.  The entry undoes
        what the change made, in full, in part or not at all; an exception landing in
        here leaves the entry in the log, through which the input handle still reads.
        """
        if self.base + len(self.log) != v:
            self.undo(self.log[-1])
            self.log.pop()

    def prune(self):
        """Drop the log entries no living handle needs: those before the oldest version with a live handle.

        The ops that make a version call it (:meth:`_new_version`) when the handle of
        :attr:`first` is gone; it looks at each version once, so it costs O(1) amortized
        per version however many later ones are alive.  Released entries become None one
        store each (the log's length, so the newest version, does not change); the log is
        rebuilt once they are half of it.  Every step leaves a consistent storage: an
        exception anywhere (a ``KeyboardInterrupt``) only leaves entries to release at the
        next prune.
        """
        alive = self.alive
        log = self.log
        base = self.base
        top = base + len(log)
        first = k = self.first
        while k < top:
            r = alive.get(k)
            if r is not None:
                h = r()
                if h is not None and h._store is self:  # (a materialized handle moved to a storage of its own)
                    break
                del alive[k]
            k += 1
        if k == first:
            return
        if k == top:  # no handle needs an entry (a loop that drops its old handles): an empty log
            # one statement: the base and the log move together (the newest version stays base + len(log))
            self.base, self.log, self.first = k, deque(), k
            return
        for j in range(first - base, k - base):
            log[j] = None
        self.first = k
        if k - base >= _COMPACT and 2 * (k - base) >= len(log):
            # one statement: the base and the log move together (the newest version stays base + len(log))
            self.base, self.log = k, deque(itertools.islice(log, k - base, None))

    def materialize(self, h):
        """Give the stale handle ``h`` a storage of its own holding its version; return it."""
        v = h._v
        copy = self.copy()
        base, log = self.base, self.log
        for u in range(self.ver - 1, v - 1, -1):  # undo version u + 1 into u
            copy.undo(log[u - base])
        copy.alive[0] = _ref(h)
        h._store, h._v = copy, 0  # one statement: h moves (this storage's reference to it then counts no more)
        self.alive.pop(v, None)
        return copy


class NumericStore(_Store):
    """A numeric list's storage: the engine's struct and numpy views of it."""

    def __init__(self, dtype, element_shape, max_num_elements, s=None, capacity=0):
        super().__init__(dtype, element_shape, max_num_elements)
        if s is None:
            h = new_header(dtype)
            h[H.CAP] = capacity
            meta = [new_array(capacity, t, zeros=True) for t in (np.uint8, np.int32, np.int64)]
            s = new_state(np.empty(0, np.uint8), *meta, h, *shape_table([]), NO_I64, NO_I64, "TensorList")
        self._s = s
        self._gen = -1
        self._shapes = []
        self._refresh()
        if self._hdr[H.LAYOUT] == DENSE and len(self._shapes) == 1:
            self._arm(self._shapes[0])

    def _refresh(self):
        """Rebuild the views of the struct's buffers and the shape table (after ``hdr[H.GEN]`` changed)."""
        raw, state, shape_id, offsets, hdr, dims, starts, items = fields_of(self._s)[:8]
        n = hdr[H.NSHAPES]
        shapes = self._shapes
        if len(shapes) != n:
            b = starts[: n + 1].tolist()
            flat = dims.tolist()
            shapes = shapes + [tuple(flat[b[k] : b[k + 1]]) for k in range(len(shapes), n)]
        self._raw, self._data, self._state, self._sid, self._off, self._hdr, self._items, self._shapes = (
            raw, raw.view(self.dtype), state, shape_id, offsets, hdr, items, shapes,
        )  # fmt: skip
        self._h, self._stv, self._sidv, self._offv = (
            memoryview(hdr),
            memoryview(state),
            memoryview(shape_id),
            memoryview(offsets),
        )
        self._fshape, self._fn, self._fsid = None, 0, -1  # the fast paths are off until a write arms them
        self._gen = int(hdr[H.GEN])

    def _arm(self, shape):
        """Switch the fast write path on for ``shape`` (just written) when it fills a dense row.

        A write of this shape to a slot whose row never held data (state 0) inside the
        dense buffer and the metadata then needs no allocation and overwrites nothing.
        """
        self._views()
        h = self._hdr
        w = int(h[H.WIDTH])
        if h[H.LAYOUT] != DENSE or not w or math.prod(shape) != w:
            return
        try:
            sid = self._shapes.index(tuple(shape))
        except ValueError:
            return
        n = min(int(h[H.CAP]), self._data.size // w)
        rows = self._data[: n * w].reshape((n, *shape))
        self._frows, self._fshape, self._fsid, self._fw, self._fn = rows, tuple(shape), sid, w, n  # one statement

    def _views(self):
        if self._hdr[H.GEN] != self._gen:
            self._refresh()

    # ------------------------------------------------------------------ reading
    @property
    def length(self):
        """int: the list's length (``hdr[H.SIZE]``) in the newest version, the one the storage holds."""
        return self._h[H.SIZE]  # (a memoryview of hdr, which is never replaced: a Python int)

    def is_set(self, i):
        """Return whether element ``i`` is set (its state has the written bit).

        Parameters
        ----------
        i : int
            The element's position, ``0 <= i < length`` (not checked).

        Returns
        -------
        bool
            True for a set element; False for an unset one (added by a resize or a
            write past the end, or never written).
        """
        self._views()
        return bool(self._state[i] & WRITTEN)

    def shape_of(self, i):
        """Return the shape of element ``i``, from the storage's table of interned shapes.

        Parameters
        ----------
        i : int
            The position of a set element, ``0 <= i < length`` (not checked).

        Returns
        -------
        tuple of int
            The element's shape.  Only meaningful for a set element: an unset one
            keeps whatever shape id its slot last had.
        """
        self._views()
        return self._shapes[self._sid[i]]

    def get(self, i):
        """Return a copy of the set element ``i``."""
        if i < self._fn and self._sidv[i] == self._fsid and self._h[H.GEN] == self._gen:
            return self._frows[i, ...].copy()  # a dense row of the armed shape (0-d stays an array)
        self._views()
        shape = self._shapes[self._sid[i]]
        n = self._items[self._sid[i]]
        o = self._off[i]
        return self._data[o : o + n].reshape(shape).copy()

    def set_shapes(self, idx=None):
        """``[(position, shape)]``: the distinct shapes of the set elements of ``idx`` (default: all), in order.

        Each shape comes with the position (in ``idx``) of the first element that has it.
        """
        self._views()
        n = self.length
        if idx is None:
            state, sid = self._state[:n], self._sid[:n]
        else:
            state, sid = self._state[idx], self._sid[idx]
        pos = np.flatnonzero(state & WRITTEN)
        if not pos.size:
            return []
        u, first = np.unique(sid[pos], return_index=True)
        order = np.argsort(first)
        return [(int(pos[first[k]]), self._shapes[u[k]]) for k in order]

    def set_mask(self):
        """Boolean array: which elements are set."""
        self._views()
        return (self._state[: self.length] & WRITTEN) != 0

    def first_dims(self):
        """Int64 array: each element's first dimension (-1 for an unset or scalar element)."""
        self._views()
        n = self.length
        d0 = np.array([sh[0] if sh else -1 for sh in self._shapes] or [-1], np.int64)
        out = d0[self._sid[:n]]
        out[(self._state[:n] & WRITTEN) == 0] = -1
        return out

    def unset_count(self, idx):
        """Return how many of the elements ``idx`` are unset.

        Parameters
        ----------
        idx : (m,) array_like of int
            Element positions in ``[0, length)`` (not checked); a repeated position counts each time.

        Returns
        -------
        int
            The number of entries of ``idx`` whose element is unset.
        """
        return int(np.count_nonzero((self._state[idx] & WRITTEN) == 0))

    def rows(self, idx, shape):
        """Return the elements ``idx`` stacked: ``(len(idx),) + shape``, unset elements as zeros.

        Every set element among them has ``shape`` (the callers checked it).
        """
        self._views()
        m = len(idx)
        w = math.prod(shape)
        out = new_array((m, *shape), self.dtype)
        if not out.size:
            return out
        set_ = (self._state[idx] & WRITTEN) != 0
        src = np.where(set_, self._off[idx], -1)
        if (
            self._hdr[H.LAYOUT] == DENSE
            and self._hdr[H.WIDTH] == w
            and set_.all()
            and (src == np.asarray(idx) * w).all()
            and np.array_equal(idx, np.arange(m))
        ):
            np.copyto(out.reshape(-1), self._data[: m * w])
            return out
        sizes = np.full(m, w, np.int64)
        self._segments(src, sizes, out)
        return out

    def _segments(self, src, sizes, out):
        """Copy element runs (item offsets ``src``, -1: zeros; ``sizes`` items each) into ``out`` in order."""
        oo = np.zeros(src.size, np.int64)
        np.cumsum(sizes[:-1], out=oo[1:])
        flat = out.reshape(-1)
        data = self._data if self._data.size else np.zeros(1, self.dtype)
        kern = (
            kernels.gather_segments_par
            if flat.size >= _config.PARALLEL_MIN_ELEMENTS and src.size > 1
            else kernels.gather_segments
        )
        from numba_ta.core.memory import copy_view

        kern(copy_view(data), src.astype(np.int64), sizes, oo, copy_view(flat))

    def concat_rows(self, idx, lengths, rest):
        """Join the elements ``idx`` along their first axis: element ``k`` has ``lengths[k]`` rows of ``rest``."""
        self._views()
        w = math.prod(rest)
        total = int(np.sum(lengths)) if len(lengths) else 0
        out = new_array((total, *rest), self.dtype)
        if not out.size:
            return out
        set_ = (self._state[idx] & WRITTEN) != 0
        src = np.where(set_, self._off[idx], -1)
        self._segments(src, np.asarray(lengths, np.int64) * w, out)
        return out

    # ------------------------------------------------------------------ changes (the newest version only)
    def set(self, i, value, into=LOG):
        """Set element ``i`` (growing the list when ``i >= length``), its undo entry appended to ``into`` first.

        Parameters
        ----------
        i : int
            The position, ``>= 0``.
        value : ndarray
            The element, of the list's dtype.
        into : LOG, list or None, optional
            Where the undo entry goes before the first store: :data:`LOG`, the log (the
            change is a new version: the append is the commit, see the module docstring),
            an op's entry (a list: :meth:`change_many`), or nowhere (None: a new storage
            nobody else sees).

        Returns
        -------
        TensorListHandle or None
            With ``into=LOG``, the first handle of the new version.

        Raises
        ------
        OpError
            The element cannot be allocated (nothing changed; with ``LOG``, no version made).
        """
        h = self._h
        n = h[H.SIZE]
        if value.shape == self._fshape and i < self._fn and h[H.GEN] == self._gen and not self._stv[i]:
            if into is LOG:
                return self.set_fresh(i, n, value)
            if into is not None:
                into.append((SET_ENTRY, n, (i, 0, 0, 0) if i < n else None, None, -1))
            self._fill(i, n, value)
            return None
        self._views()
        old = (i, int(self._state[i]), int(self._sid[i]), int(self._off[i])) if i < n else None
        flat = np.ascontiguousarray(value).reshape(-1).view(np.uint8)
        saved, at = np.empty(flat.size, np.uint8), np.full(1, -1, np.int64)  # the engine fills them in
        v = self.base + len(self.log)
        entry = (SET_ENTRY, n, old, saved, at)
        self._record(into, entry)
        if py_tl_set_into(self._s, i, flat, np.array(value.shape, np.int64), saved, at):
            if into is LOG:
                self._drop(v)  # a failed write changed nothing: no version either
            raise error_of(self._s)
        if at[0] < 0 and into is not None:  # nothing overwritten: the log keeps no bytes
            target = self.log if into is LOG else into
            if target and target[-1] is entry:
                target[-1] = (SET_ENTRY, n, old, None, -1)
        self._arm(value.shape)
        return self._new_version(_KEPT if at[0] < 0 else 0) if into is LOG else None  # 0: it holds old bytes

    def set_fresh(self, i, n, value):
        """Set the fresh dense row ``i`` as a new version (the fast path of :meth:`set`); return its handle.

        The caller has checked what the fast path needs (:meth:`_arm`): this storage holds the
        newest version, ``value`` is an ndarray of the list's dtype and of the armed shape
        (``_fshape``), ``i < _fn``, the views are current (``_h[H.GEN] == _gen``), element ``i``'s
        state is 0 and ``i <= n``, the length.  The undo entry's append is the commit (the module
        docstring); the row, then its metadata (the state last) follow.
        """
        self.log.append((SET_ENTRY, n, (i, 0, 0, 0) if i < n else None, None, -1))  # the commit
        self._fill(i, n, value)
        v = self.base + len(self.log)  # (self._new_version(), inline: the loops of pushes)
        out = _new_handle(TensorListHandle)
        out._store, out._v = self, v
        alive = self.alive
        alive[v] = _ref(out)
        if v - self.first > _KEPT:
            oldest = alive.get(self.first)
            if oldest is None or oldest() is None:
                self.prune()
        return out

    def _fill(self, i, n, value):
        """Store ``value`` in the fresh dense row ``i`` and commit its metadata, the state last (and the length)."""
        self._frows[i] = value
        if i < n:
            self._offv[i], self._sidv[i], self._stv[i] = i * self._fw, self._fsid, _FRESH
        else:
            self._offv[i], self._sidv[i], self._stv[i], self._h[H.SIZE] = i * self._fw, self._fsid, _FRESH, i + 1

    def resize(self, size, into=LOG):
        """Make the list ``size`` long (cut or unset elements added), its undo entry appended to ``into`` first.

        ``into`` and the result are :meth:`set`'s.
        """
        self._views()
        h = self._h
        n = h[H.SIZE]
        if size == n - 1:  # a pop: Python stores (nothing to allocate), the size last
            i = size
            state = self._stv
            self._record(into, (RESIZE_ENTRY, n, size, (state[i], self._sidv[i], self._offv[i])))
            state[i], h[H.SIZE] = state[i] & HELD_DATA, size
            return self._new_version() if into is LOG else None
        cut = None
        if size < n:
            cut = (self._state[size:n].copy(), self._sid[size:n].copy(), self._off[size:n].copy())
        v = self.base + len(self.log)
        self._record(into, (RESIZE_ENTRY, n, size, cut))
        if py_tl_resize(self._s, size):
            if into is LOG:
                self._drop(v)
            raise error_of(self._s)
        return self._new_version(_KEPT if cut is None else 0) if into is LOG else None  # 0: it holds the cut part

    def undo(self, entry):
        """Undo one log entry (on a copy being brought back to an older version, or a change that raised).

        Every entry restores values, so it undoes a change made in full, in part or not at all.
        """
        self._views()
        kind = entry[0]
        if kind == MANY_ENTRY:  # several entries (one op): undo them last first
            for e in reversed(entry[1]):
                self.undo(e)
            return
        if kind == RESIZE_ENTRY:
            _, n, size, cut = entry
            if cut is not None:
                self._state[size:n], self._sid[size:n], self._off[size:n] = cut
            else:
                self._state[n:size] &= np.uint8(HELD_DATA)
            self._hdr[H.SIZE] = n
            return
        _, n, old, saved, at = entry
        at = at if type(at) is int else int(at[0])
        if at >= 0:
            isz = self._hdr[H.ITEMSIZE]
            self._raw[at * isz : at * isz + saved.size] = saved
        if old is not None:
            i, bits, sid, off = old
            self._state[i], self._sid[i], self._off[i] = bits, sid, off
        cur = int(self._hdr[H.SIZE])
        if cur > n:
            self._state[n:cur] &= np.uint8(HELD_DATA)
        self._hdr[H.SIZE] = n

    def copy(self):
        """Return a storage of its own holding the newest version (version 0, no log)."""
        raw, state, shape_id, offsets, hdr, dims, starts, items, es, ces, name = fields_of(self._s)[:11]
        if hdr[H.LAYOUT] == RAGGED:
            extent = int(hdr[H.USED])
        elif hdr[H.LAYOUT] == DENSE:
            nz = np.flatnonzero(state)
            extent = (int(nz[-1]) + 1) * int(hdr[H.WIDTH]) if nz.size else 0
        else:
            extent = 0
        isz = int(hdr[H.ITEMSIZE])
        extent = min(extent * isz, raw.size)
        try:
            data = np.empty(raw.size, np.uint8)
        except (MemoryError, ValueError):
            raise oom_error((raw.size // isz,), self.dtype) from None
        data[:extent] = raw[:extent]
        return self._with_data(data, self.max_num_elements)

    def _with_data(self, data, max_num_elements):
        """Return a storage of its own (version 0, no log): a copy of this one's metadata around the bytes ``data``."""
        _, state, shape_id, offsets, hdr, dims, starts, items, es, ces, name = fields_of(self._s)[:11]
        meta = (state.copy(), shape_id.copy(), offsets.copy(), hdr.copy(), dims.copy(), starts.copy(), items.copy())
        return NumericStore(self.dtype, self.element_shape, max_num_elements, new_state(data, *meta, es, ces, name))

    @classmethod
    def from_rows(cls, dtype, element_shape, max_num_elements, length, at, values):
        """Return a list of ``length`` elements: row ``k`` of ``values`` at ``at[k]`` (the last wins), the rest unset.

        ``values`` is an ndarray of ``(len(at),) + shape``.  The elements are laid out
        dense (element ``i`` is row ``i``); rows no element uses are never written.
        """
        shape = values.shape[1:]
        w = math.prod(shape)
        isz = values.dtype.itemsize
        h = new_header(dtype)
        h[H.CAP] = h[H.SIZE] = length
        state = new_array(length, np.uint8, zeros=True)
        shape_id = new_array(length, np.int32, zeros=True)
        offsets = new_array(length, np.int64, zeros=True)
        at = np.asarray(at, np.int64)
        if at.size and not np.array_equal(at, np.arange(at.size)):
            u, first = np.unique(at[::-1], return_index=True)  # each index's last row
            rows = at.size - 1 - first
            at = u
            values = values[rows]
        if w:
            if length > (2**63 - 1) // (w * isz):
                raise oom_error((length, *shape), dtype)
            data = new_array(length * w * isz, np.uint8)
            data.view(dtype).reshape(length, w)[at] = values.reshape(-1, w)
            h[H.LAYOUT], h[H.WIDTH] = DENSE, w
            offsets[at] = at * w
            state[at] = STORED | HELD_DATA
        else:
            data = np.empty(0, np.uint8)
            state[at] = STORED
        h[H.NSHAPES] = 1
        s = new_state(data, state, shape_id, offsets, h, *shape_table([shape]), NO_I64, NO_I64, "TensorList")
        return cls(dtype, element_shape, max_num_elements, s)

    @classmethod
    def from_pieces(cls, dtype, element_shape, max_num_elements, tensor, lengths):
        """Return a list of the pieces of ``tensor`` along its first axis, ``lengths[k]`` rows each (checked)."""
        rest = tensor.shape[1:]
        w = math.prod(rest)
        m = len(lengths)
        lengths = np.asarray(lengths, np.int64)
        if m and w and (lengths == lengths[0]).all() and lengths[0]:
            return cls.from_rows(
                dtype, element_shape, max_num_elements, m, np.arange(m), tensor.reshape(m, int(lengths[0]), *rest)
            )
        h = new_header(dtype)
        h[H.CAP] = h[H.SIZE] = m
        state = new_array(m, np.uint8, zeros=True)
        offsets = new_array(m, np.int64, zeros=True)
        u, inv = np.unique(lengths, return_inverse=True)
        shape_id = inv.astype(np.int32).reshape(-1)
        items = lengths * w
        if m:
            np.cumsum(items[:-1], out=offsets[1:])
        offsets[items == 0] = 0
        data = np.ascontiguousarray(tensor).reshape(-1).view(np.uint8).copy()
        state[:] = np.where(items > 0, _FRESH, STORED)
        if data.size:
            h[H.LAYOUT], h[H.USED] = RAGGED, data.size // tensor.dtype.itemsize
        shapes = [(int(k), *rest) for k in u]
        h[H.NSHAPES] = len(shapes)
        s = new_state(data, state, shape_id, offsets, h, *shape_table(shapes), NO_I64, NO_I64, "TensorList")
        return cls(dtype, element_shape, max_num_elements, s)

    def zeros_like(self):
        """Return a new storage: the same elements and element shape, set elements zeros, ``max_num_elements`` -1."""
        raw, state, shape_id, offsets, hdr, dims, starts, items, es, ces, name = fields_of(self._s)[:11]
        try:
            data = np.zeros(raw.size, np.uint8)  # lazily zeroed pages
        except (MemoryError, ValueError):
            raise oom_error((raw.size // int(hdr[H.ITEMSIZE]),), self.dtype) from None
        return self._with_data(data, -1)


class ObjectStore(_Store):
    """A list of variants or of resources: its elements (any Python objects, :data:`_UNSET` for unset) in a list.

    ``dtype`` is :data:`VARIANT` (the default) or :data:`RESOURCE`.  The elements of a
    list of variants are scalars; those of a list of resources have the shapes of the
    values given (a resource scalar, or an object ndarray of them).
    """

    def __init__(self, element_shape, max_num_elements, items=None, dtype=VARIANT):
        super().__init__(dtype, element_shape, max_num_elements)
        self.items = [] if items is None else items
        self._shaped = dtype == RESOURCE  # (a variant list's elements all count as scalars)

    @property
    def length(self):
        """int: the list's length (``len(items)``) in the newest version, the one the storage holds."""
        return len(self.items)

    def is_set(self, i):
        """Return whether element ``i`` holds an object (is not :data:`_UNSET`); ``0 <= i < length``."""
        return self.items[i] is not _UNSET

    def shape_of(self, i):
        """Return ``()``: every element of a list of variants is a scalar (of resources: the element's shape)."""
        v = self.items[i]
        return v.shape if self._shaped and isinstance(v, np.ndarray) else ()

    def get(self, i):
        """Return element ``i``, the stored object itself (shared, not copied as a numeric element is).

        Callers check :meth:`is_set` first; an unset element returns the :data:`_UNSET` marker.
        """
        return self.items[i]

    def set_shapes(self, idx=None):
        """Return ``[(position, shape)]``: the distinct shapes of the set elements of ``idx``, as NumericStore does.

        All elements of a list of variants are scalars, so the result is ``[(k, ())]``,
        ``k`` the position (in ``idx``) of the first set element, or ``[]`` when none of
        them is set.  A list of resources gives each distinct shape of its elements.

        Parameters
        ----------
        idx : sequence of int, optional
            Element positions in ``[0, length)``; None (the default) for all elements.

        Returns
        -------
        list of (int, tuple)
            At most one ``(position, ())`` pair for a list of variants.
        """
        items = self.items if idx is None else [self.items[i] for i in idx]
        if self._shaped:
            seen = {}
            for k, v in enumerate(items):
                if v is not _UNSET:
                    seen.setdefault(v.shape if isinstance(v, np.ndarray) else (), k)
            return [(k, shape) for shape, k in seen.items()]
        for k, v in enumerate(items):
            if v is not _UNSET:
                return [(k, ())]
        return []

    def set_mask(self):
        """Return a new ``(length,)`` bool array: which elements are set."""
        return np.array([v is not _UNSET for v in self.items], bool)

    def first_dims(self):
        """Return a new ``(length,)`` int64 array of -1: every element is a scalar (no first dimension)."""
        return np.full(len(self.items), -1, np.int64)

    def concat_rows(self, idx, lengths, rest):
        """Return what joining the elements ``idx`` along their first axis gives: variant zeros.

        Only unset elements can be joined (a set element is a scalar, which
        ``TensorListConcat`` refuses before it gets here); unset element ``k`` reads as
        ``lengths[k]`` rows of :data:`VARIANT_ZERO`.

        Parameters
        ----------
        idx : (m,) array_like of int
            The elements (unused: all of them are unset).
        lengths : (m,) array_like of int
            Rows each element contributes.
        rest : tuple of int
            The shape of one row.

        Returns
        -------
        out : (sum(lengths), *rest) ndarray of object
            A new array, every entry :data:`VARIANT_ZERO`.
        """
        # only unset elements can be joined (set ones are scalars): variant zeros
        out = np.empty((int(np.sum(lengths)) if len(lengths) else 0, *rest), object)
        out.reshape(-1)[:] = [VARIANT_ZERO] * out.size
        return out

    def unset_count(self, idx):
        """Return how many of the elements ``idx`` (positions in ``[0, length)``, repeats counted) are unset."""
        return sum(1 for i in idx if self.items[i] is _UNSET)

    def rows(self, idx, shape):
        """Return the elements ``idx`` stacked, unset ones as :data:`VARIANT_ZERO`.

        Parameters
        ----------
        idx : (m,) array_like of int
            Element positions in ``[0, length)`` (not checked), repeats allowed.
        shape : tuple of int
            The element shape, ``()`` for the scalars a list of variants holds; with
            another shape every row is filled with :data:`VARIANT_ZERO`.

        Returns
        -------
        out : (m, *shape) ndarray of object
            A new array holding the set elements themselves (shared, not copied).
        """
        out = np.empty((len(idx), *shape), object)
        flat = out.reshape(-1) if shape == () else None
        for k, i in enumerate(idx):
            v = self.items[i]
            if flat is not None:
                flat[k] = VARIANT_ZERO if v is _UNSET else v
            else:  # pragma: no cover - a variant list's elements are scalars
                out[k] = VARIANT_ZERO
        return out

    def set(self, i, value, into=LOG):
        """Set element ``i`` to ``value`` (stored by reference), growing the list when ``i >= length``.

        Parameters
        ----------
        i : int
            The position, ``>= 0``; positions between the old length and ``i`` become unset.
        value : object
            The element.
        into : LOG, list or None, optional
            Where the undo entry ``(SET_ENTRY, old length, (i, old element) or None)`` goes
            before the first store (see :meth:`NumericStore.set`).

        Returns
        -------
        TensorListHandle or None
            With ``into=LOG``, the first handle of the new version.
        """
        items = self.items
        n = len(items)
        self._record(into, (SET_ENTRY, n, (i, items[i]) if i < n else None))
        if i >= n:
            items.extend([_UNSET] * (i + 1 - n))
        items[i] = value
        return self._new_version(_KEPT if i >= n else 0) if into is LOG else None  # 0: it holds the old element

    def resize(self, size, into=LOG):
        """Make the list ``size`` long, cutting elements off the end or appending unset ones.

        Parameters
        ----------
        size : int
            The new length, ``>= 0``.
        into : LOG, list or None, optional
            Where the undo entry ``(RESIZE_ENTRY, old length, list of the cut elements or
            None)`` goes before the first store; with ``LOG`` the first handle of the new
            version is returned (as :meth:`set` does).
        """
        items = self.items
        n = len(items)
        self._record(into, (RESIZE_ENTRY, n, items[size:] if size < n else None))
        if size < n:
            del items[size:]
        else:
            items.extend([_UNSET] * (size - n))
        return self._new_version(_KEPT if size >= n else 0) if into is LOG else None  # 0: it holds the cut elements

    def undo(self, entry):
        """Undo one log entry (on a copy being brought back to an older version, or a change that raised).

        Parameters
        ----------
        entry : tuple
            An entry :meth:`set` or :meth:`resize` made, or a :data:`MANY_ENTRY` of
            :meth:`change_many`, whose entries are undone last first.  Every entry restores
            values: it undoes a change made in full, in part or not at all.
        """
        kind = entry[0]
        if kind == MANY_ENTRY:
            for e in reversed(entry[1]):
                self.undo(e)
            return
        items = self.items
        if kind == RESIZE_ENTRY:
            _, n, cut = entry
            if cut is not None:  # put the cut elements back
                del items[n - len(cut) :]
                items.extend(cut)
                return
        else:
            _, n, old = entry
            if old is not None:
                if old[0] >= len(items):
                    items.extend([_UNSET] * (old[0] + 1 - len(items)))
                items[old[0]] = old[1]
        del items[n:]
        if len(items) < n:
            items.extend([_UNSET] * (n - len(items)))

    def copy(self):
        """Return a storage of its own holding the newest version (version 0, no log).

        The list of elements is copied; the elements themselves are shared.
        """
        return ObjectStore(self.element_shape, self.max_num_elements, list(self.items), self.dtype)


def new_store(dtype, element_shape, max_num_elements, length=0):
    """Return a new storage of ``length`` unset elements (version 0)."""
    if dtype == VARIANT or dtype == RESOURCE:
        return ObjectStore(element_shape, max_num_elements, [_UNSET] * length, dtype)
    store = NumericStore(dtype, element_shape, max_num_elements, capacity=length)
    if length:
        store._hdr[H.SIZE] = length
    return store
