"""Element shapes in compiled code: interning, compatibility, merging, the array's element shape.

An element's shape is interned in the struct (``dims``, ``starts``, ``items``;
:mod:`numba_ta.core.state`) and an element refers to it by id, so a write of a
known shape stores one integer.  Ops plan what they would intern (:func:`find_shape`,
:func:`plan_shape`) and intern it (:func:`intern_shape`) only when nothing can fail any
more.  Compatibility and merging follow ``tf.TensorShape`` (the Python layer's
:mod:`numba_ta.tf.tensor_shape` does the same for shapes held as tuples); the
text forms of shapes are :mod:`numba_ta.tf.messages`'.
"""

from __future__ import annotations

import numpy as np
from numba.core.extending import overload, register_jitable

from numba_ta.core import header as H
from numba_ta.core.state import INT64_MAX, NO_I64, _alloc
from numba_ta.core.status import (
    MERGE_RANK,
    MERGE_SHAPE,
    OOM,
    RANK,
    SHAPE_INT64,
    fail,
    fail_i,
    fail_s,
)


# --------------------------------------------------------------------------- shapes
@register_jitable
def fully_defined(es):
    """Whether the partial shape ``es`` (int64 array, -1 for an unknown dimension) has no unknown dimension."""
    for k in range(es.size):
        if es[k] < 0:
            return False
    return True


@register_jitable
def compatible(p, shape):
    """Whether the concrete ``shape`` (int64 array) is compatible with the partial ``p`` of known rank."""
    if p.size != shape.size:
        return False
    for k in range(p.size):
        if p[k] >= 0 and p[k] != shape[k]:
            return False
    return True


@register_jitable
def es_compatible(s, shape):
    """Whether ``shape`` is compatible with the array's element shape (always, when its rank is unknown)."""
    return not s.hdr[H.ES_KNOWN] or compatible(s.es, shape)


@register_jitable
def same_shape(a, b):
    """Whether the int64 shape arrays ``a`` and ``b`` are equal (same rank, same dimensions)."""
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
def shape_at(s, sid):
    """Return the interned shape ``sid`` (a view of ``dims``)."""
    return s.dims[s.starts[sid] : s.starts[sid + 1]]


@register_jitable
def find_shape(s, shape):
    """Return the id of the interned ``shape`` (an int64 array), or -1; the last interned is found first."""
    n = s.hdr[H.NSHAPES]
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
def items_of(shape):
    """Return the number of items of ``shape`` (an int64 array of non-negative dimensions), or -1 past 2**63 - 1."""
    p = 1
    for k in range(shape.size):
        if shape[k] == 0:
            return 0
    for k in range(shape.size):
        if shape[k] > INT64_MAX // p:
            return -1
        p *= shape[k]
    return p


@register_jitable
def nitems(s):
    """Return the number of items the data buffer has room for."""
    return s.data.size // s.hdr[H.ITEMSIZE]


@register_jitable
def numpy_fits(shape, isz):
    """Return whether numpy can make an array of ``shape``: ``isz`` times its nonzero dimensions fit an int64.

    numpy refuses a larger one ("array is too big") even when a zero dimension leaves it empty.
    """
    n = isz
    for d in shape:
        if d:
            if n > INT64_MAX // d:
                return False
            n *= d
    return True


@register_jitable
def new_items(s, n, zeros, shape):
    """``(status, bytes)``: room for ``n`` items of the array's dtype (zeroed with ``zeros``); TF's OOM for ``shape``.

    ``n`` < 0 means more than 2**63 - 1 items.  Also refused: a ``shape`` numpy cannot make.
    """
    isz = s.hdr[H.ITEMSIZE]
    if not numpy_fits(shape, isz):
        n = -1
    return _new(s, n * isz if 0 <= n <= INT64_MAX // isz else -1, s.data, zeros, shape, s.hdr[H.DTYPE])


@register_jitable
def oom(s, shape, dtype):
    """Record TF's allocator error for a tensor of ``shape`` (an int64 array) and ``DTYPES[dtype]``; its status."""
    return fail(s, OOM, dtype, 0, 0, shape, shape.size, NO_I64, 0)


@register_jitable
def _new(s, n, like, zeros, shape, dtype):
    """``(status, array)``: ``n`` items of ``like``'s dtype (zeroed with ``zeros``), or TF's OOM error for ``shape``.

    ``n`` < 0 means more than 2**63 - 1 items.  A request of more bytes than an
    int64 holds fails before any allocation.  The error names ``DTYPES[dtype]``.
    """
    a = like[:0].copy()
    if n < 0 or n > INT64_MAX // like.itemsize:
        return oom(s, shape, dtype), a
    ok = True
    try:
        a = _alloc(n, like.dtype, zeros)
    except Exception:  # MemoryError (or numpy's ValueError, as Python): TF's error instead
        ok = False
    if not ok:
        return oom(s, shape, dtype), a
    return 0, a


@register_jitable
def one_dim(n):
    """Return the shape ``[n]`` as an int64 array."""
    a = np.empty(1, np.int64)
    a[0] = n
    return a


@register_jitable
def intern_shape(s, shape):
    """Return the id of ``shape`` (an int64 array), interning it (at the commit of an op that cannot fail)."""
    sid = find_shape(s, shape)
    if sid >= 0:
        return sid
    h = s.hdr
    n = h[H.NSHAPES]
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
    s.items[n] = items_of(shape)
    h[H.NSHAPES] = n + 1
    h[H.GEN] += 1
    return n


@register_jitable
def set_es(s, shape):
    """Set the array's element shape to ``shape`` (an int64 array, copied)."""
    s.es = shape.copy()
    h = s.hdr
    h[H.ES_KNOWN] = 1
    h[H.ES_CHANGED] = 1
    h[H.GEN] += 1
    h[H.FASTSID] = -1  # the fast write path relies on the element shape it was enabled under


@register_jitable
def commit_es(s, es, known):
    """Store the element shape ``es`` (known: its rank is known) when it differs from the array's."""
    if known and (not s.hdr[H.ES_KNOWN] or not same_shape(es, s.es)):
        set_es(s, es)


@register_jitable
def merge_es(s, attr, attr_known):
    """TF's ``element_shape_.MergeWith(attr)`` (NT-merge-rank, NT-merge-shape); return ``(status, merged, known)``."""
    known = s.hdr[H.ES_KNOWN] != 0
    if not attr_known:
        return 0, s.es.copy(), known
    if not known:
        return 0, attr.copy(), True
    if s.es.size != attr.size:
        return fail_i(s, MERGE_RANK, s.es.size, attr.size), s.es, True
    es = s.es.copy()
    for k in range(es.size):
        a = attr[k]
        if es[k] >= 0 and a >= 0 and es[k] != a:
            return fail_s(s, MERGE_SHAPE, 0, s.es, s.es.size, attr, attr.size), es, True
        if es[k] < 0:
            es[k] = a
    return 0, es, True


@register_jitable
def plan_shape(s, shape, items):
    """``(status, sid, items)``: the id ``shape`` has or will have once interned, and the items table to plan with."""
    sid = find_shape(s, shape)
    if sid >= 0:
        return 0, sid, items
    n = items_of(shape)
    if n < 0:
        return fail_s(s, SHAPE_INT64, 0, shape, shape.size, NO_I64, 0), -1, items
    ext = np.empty(items.size + 1, np.int64)  # items covers the interned shapes: the new one comes next
    ext[: items.size] = items
    ext[items.size] = n
    return 0, items.size, ext


@register_jitable
def check_rank(s, index, rank, want):
    """NT-jit-rank (NotImplementedError) when a compiled caller of element rank ``want`` (>= 0) gets another rank."""
    if want >= 0 and rank != want:
        return fail_i(s, RANK, want, index, rank)
    return 0
