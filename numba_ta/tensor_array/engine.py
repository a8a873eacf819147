"""The TensorArray state machine in compiled code: TF's V3 ops over the struct, with TF's checks in TF's order.

``write``, ``read``, ``gather``, ``concat``, ``scatter``, ``split``, ``close`` and the
gradient arrays (``gradient_of``) of ``TensorArrayV3``, rank- and dtype-generic:
values come in as flat bytes with their shape as an int64 array, results go out as
flat bytes with theirs.  Every op checks everything first and plans what it would
intern; it changes the state only when nothing can fail any more, so a failed op
leaves the array as it was and interns nothing.  A failure is a status
(:mod:`numba_ta.core.status`).

The ops are compiled into the ``py_*`` entries at the end of this module, through
which the Python layer (:class:`numba_ta.tensor_array.storage.Storage`) runs every op
but the fast path over dense rows, and into the entries users' compiled code calls
(:mod:`numba_ta.jit.entries`).  Each entry is one compiled function for arrays of
every dtype and rank, cached on disk and shipped by ``pip install .``
(:mod:`numba_ta.core.cache`).
"""

from __future__ import annotations

import numpy as np
from numba.core.extending import overload, register_jitable

from numba_ta.core import ckernels, kernels
from numba_ta.core import header as H
from numba_ta.core.memory import alloc_element, new_meta, reserve
from numba_ta.core.shapes import (
    check_rank,
    commit_es,
    compatible,
    es_compatible,
    find_shape,
    fully_defined,
    intern_shape,
    items_of,
    merge_es,
    new_items,
    nitems,
    numpy_fits,
    one_dim,
    oom,
    plan_shape,
    same_shape,
    set_es,
    shape_at,
)
from numba_ta.core.state import (
    CLEARED,
    DATA,
    DENSE,
    F16_CODE,
    INT64_MAX,
    NO_BUFFER,
    NO_I64,
    NOT_DATA,
    READ,
    STORED,
    SUM_BATCH,
    U16,
    U32,
    U64,
    WRITTEN,
    advise_huge,
    borrow,
    cast_ptr,
    data_ptr,
    move_bytes,
    new_state,
)
from numba_ta.core.status import (
    C1,
    C2,
    C3,
    C4,
    CONCAT_UNSPLIT,
    CORRUPT,
    G3,
    G4,
    G5,
    K7,
    P5,
    PREPEND_INT64,
    S3,
    S4,
    SPLIT_INT64,
    SPLIT_NEGATIVE,
    T1,
    T2,
    T4,
    T5,
    T6,
    T7,
    T8,
    T9,
    T10,
    T11,
    fail,
    fail_i,
    fail_s,
    no_dims,
)
from numba_ta.core.sums import add_items


# --------------------------------------------------------------------------- write / read
@register_jitable
def write(s, index, flat, shape, numeric):
    """TF's ``LockedWriteOrAggregate`` (T1, T2, T4 to T8 in order; sums in gradient arrays); return the status.

    ``flat`` is the value's items (1-d, C order) and ``shape`` its shape.
    """
    h = s.hdr
    if h[H.CLOSED]:
        return fail_i(s, T1)
    n = h[H.SIZE]
    if index < 0 or (index >= n and not h[H.DYN]):
        return fail_i(s, T2, index, n)
    r = shape.size
    if not es_compatible(s, shape):
        return fail_s(s, T4, index, shape, r, s.es, s.es.size if h[H.ES_KNOWN] else -1)
    bits = s.state[index] if index < n else 0
    add = False
    if bits:
        if bits & READ:
            return fail_i(s, T5, index)
        if not h[H.ISGRAD]:
            return fail_i(s, T6, index)
        old = shape_at(s, s.shape_id[index])
        if not same_shape(old, shape):
            return fail_s(s, T7, index, old, old.size, shape, r)
        add = (bits & DATA) != 0 and flat.size > 0
        if add and not numeric:
            return fail_i(s, T8, h[H.DTYPE])
    ident_es = h[H.IDENT] and not (h[H.ES_KNOWN] and fully_defined(s.es))
    isz = h[H.ITEMSIZE]
    if add:
        o = s.offsets[index] * isz
        add_items(s.data[o : o + flat.size], flat, h[H.DTYPE])
        h[H.DISALLOWED] = 1
        if ident_es:
            set_es(s, shape)
        return 0
    if index >= n:
        status = reserve(s, index + 1)
        if status:
            return status
    items = flat.size // isz
    o = 0
    if items:
        status, o = alloc_element(s, index, items, index + 1, 1, items)
        if status:
            return status
        move_bytes(s.data, o * isz, flat, 0, flat.size)
    sid = s.shape_id[index] if bits else intern_shape(s, shape)
    s.offsets[index] = o
    s.shape_id[index] = sid
    s.state[index] = STORED
    if index + 1 > n:
        h[H.SIZE] = index + 1
    if ident_es:
        set_es(s, shape)
    h[H.FASTSID] = sid if h[H.LAYOUT] == DENSE and items == h[H.WIDTH] and items else -1
    return 0


@register_jitable
def read(s, index, want):
    """TF's ``LockedRead`` (T1, T9, T10, T11; soft zeros; clear_after_read); return ``(status, flat, shape)``.

    ``want`` >= 0: the caller's element rank (another rank fails, changing nothing).
    """
    h = s.hdr
    none = s.data[:0]
    if h[H.CLOSED]:
        return fail_i(s, T1), none, no_dims()
    n = h[H.SIZE]
    if index < 0 or (index >= n and not h[H.ISGRAD]):
        return fail_i(s, T9, index, n), none, no_dims()
    bits = s.state[index] if index < n else 0
    new = WRITTEN | READ | CLEARED if h[H.CAR] else WRITTEN | READ
    if not bits & WRITTEN:
        if not h[H.ES_KNOWN] or not fully_defined(s.es):
            return fail_s(s, T10, index, s.es, s.es.size if h[H.ES_KNOWN] else -1, NO_I64, 0), none, no_dims()
        shape = s.es.copy()
        status = check_rank(s, index, shape.size, want)
        if status:
            return status, none, no_dims()
        status, out = new_items(s, items_of(shape), True, shape)
        if not status and index >= n:
            status = reserve(s, index + 1)
        if status:
            return status, none, no_dims()
        sid = intern_shape(s, shape)
        if index < n:
            s.shape_id[index] = sid
            s.state[index] = new
            return 0, out, shape
        state, shape_id = s.state, s.shape_id  # (no field reads in the loop: a reference count each)
        for i in range(n, index + 1):
            state[i] = WRITTEN
            shape_id[i] = sid
        state[index] = new
        h[H.SIZE] = index + 1
        return 0, out, shape
    if bits & CLEARED:
        return fail_i(s, T11, index), none, no_dims()
    sid = s.shape_id[index]
    items = s.items[sid]
    shape = shape_at(s, sid).copy()
    status = check_rank(s, index, shape.size, want)
    if status:
        return status, none, no_dims()
    if bits & DATA and items:
        isz = h[H.ITEMSIZE]
        o = s.offsets[index] * isz
        out = advise_huge(np.empty(items * isz, np.uint8))
        move_bytes(out, 0, s.data, o, items * isz)
    else:
        status, out = new_items(s, items, True, shape)
        if status:
            return status, none, no_dims()
    s.state[index] = (bits | READ | CLEARED) & NOT_DATA if h[H.CAR] else bits | READ
    return 0, out, shape


# --------------------------------------------------------------------------- many reads
# In compiled code, loops rather than ``a.max()``, ``a.min()``, ``a.any()``: those are
# numba.np.arraymath's, and loading code that uses them imports that module in a fresh process
# (~0.25 s: it imports SciPy).  As Python (NUMBA_DISABLE_JIT=1), numpy's own.
def _max_of(a, empty):
    """Return the largest item of the 1-d array ``a``, ``empty`` when it has none (compiled: the overload below)."""
    return a.max() if a.size else empty


def _min_of(a, empty):
    """Return the smallest item of the 1-d array ``a``, ``empty`` when it has none (compiled: the overload below)."""
    return a.min() if a.size else empty


def _any(a):
    """Return whether any item of the 1-d boolean array ``a`` is true (compiled: the overload below)."""
    return bool(a.any())


@overload(_max_of)
def _ol_max_of(a, empty):
    def impl(a, empty):
        top = empty
        for k in range(a.size):
            if k == 0 or a[k] > top:
                top = a[k]
        return top

    return impl


@overload(_min_of)
def _ol_min_of(a, empty):
    def impl(a, empty):
        low = empty
        for k in range(a.size):
            if k == 0 or a[k] < low:
                low = a[k]
        return low

    return impl


@overload(_any)
def _ol_any(a):
    def impl(a):
        for k in range(a.size):
            if a[k]:
                return True
        return False

    return impl


@register_jitable
def _repeat_keys(idx):
    """``(keys, seen)``: equal keys for equal indices, and a zeroed table over the keys."""
    m = idx.size
    lo = _min_of(idx, 0)
    hi = _max_of(idx, lo)
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
def check_reads(s, idx, zsid, es, es_known):
    """Run ``ReadMany``'s checks in order (the kernel): ``(status, shape ids)`` (T9, T10, T11).

    ``es`` is the element shape the op reads unwritten elements with (``es_known``: its rank is known).
    """
    h = s.hdr
    n = h[H.SIZE]
    if h[H.CAR]:
        keys, seen = _repeat_keys(idx)
    else:
        keys, seen = idx, np.zeros(0, np.uint8)
    sids = np.empty(idx.size, np.int64)
    pos, code = kernels.check_reads(idx, s.state, s.shape_id, n, h[H.ISGRAD], h[H.CAR], zsid, keys, seen, sids)
    if code:
        i = idx[pos]
        if code == 1:
            size = n
            if h[H.ISGRAD] and pos:
                size = max(n, _max_of(idx[:pos], -1) + 1)
            return fail_i(s, T9, i, size), sids
        if code == 2:
            return fail_s(s, T10, i, es, es.size if es_known else -1, NO_I64, 0), sids
        return fail_i(s, T11, i), sids
    return 0, sids


@register_jitable
def _plan_zeros(s, es, known):
    """``(status, zsid, items)``: the shape id an unwritten element reads as (-1: undefined), the items to plan with."""
    items = s.items[: s.hdr[H.NSHAPES]]
    if known and fully_defined(es):
        return plan_shape(s, es, items)
    return 0, -1, items


@register_jitable
def _sid_shape(s, sid, es):
    """Return the shape of ``sid``: an interned one, or the element shape ``es`` (planned: interned at the commit)."""
    if sid >= s.hdr[H.NSHAPES]:
        return es
    return shape_at(s, sid)


@register_jitable
def _copy_items(fp, b, dp, o, w, isz):
    """Copy ``w`` items of ``isz`` bytes from item ``o`` of the byte pointer ``dp`` to item ``b`` of ``fp``."""
    if isz == 8:
        f8 = cast_ptr(fp, U64)
        d8 = cast_ptr(dp, U64)
        for j in range(w):
            f8[b + j] = d8[o + j]
    elif isz == 4:
        f4 = cast_ptr(fp, U32)
        d4 = cast_ptr(dp, U32)
        for j in range(w):
            f4[b + j] = d4[o + j]
    elif isz == 2:
        f2 = cast_ptr(fp, U16)
        d2 = cast_ptr(dp, U16)
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

    Returns whether it did: False (nothing copied) when the parallel kernel is not loaded yet
    (:func:`numba_ta.core.ckernels.ready`: the slot is noted as wanted, and the caller copies
    serially).  The kernel is a C function called through its address in
    :data:`numba_ta.core.ckernels.TABLE`, natively: no Python runs between the copy and the
    op's commit.  The engine's code (cached, and compiled into users' functions that call a
    bulk method) holds no parallel region: Numba links cached code that holds one against its
    threading layer when it loads it, so such code would need the layer started in every
    process that loads it, and a process that started the GNU OpenMP layer cannot run
    parallel code in its forked children (Numba terminates them).  The Python layer loads the
    kernel, and so starts the layer, only before an op big enough for it.  Called only above
    ``hdr[H.PARMIN]`` items.
    """
    if not ckernels.ready(ckernels.GATHER):
        return False
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
    return ckernels.call(ckernels.GATHER, s.data, out, so, oo, sz, sz, m)


@register_jitable
def _read_many(s, idx, sids, items, zsid, es, out, width, inplace=False):
    """Plan, copy (``width`` items per element into ``out``; -1: each element's own size) and commit; the status.

    ``inplace``: ``out`` is the data buffer itself, and each element is already where it is
    read to (a stack view): only soft zeros are written, into their own rows.
    """
    h = s.hdr
    m = idx.size
    top = _max_of(idx, -1) + 1
    status = reserve(s, top)
    if status:
        return status
    src = np.empty(m, np.int64)
    new_state = np.empty(m, np.uint8)
    _, bad = kernels.plan_reads(idx, s.state, s.offsets, sids, items, h[H.CAR], nitems(s), src, new_state)
    if bad >= 0:
        return fail_i(s, CORRUPT, idx[bad])
    isz = h[H.ITEMSIZE]
    if not inplace and m > 1 and out.size // isz >= h[H.PARMIN] and _read_par(s, src, sids, items, width, out, isz):
        m = 0  # copied
    fp = data_ptr(out)
    dp, _ = borrow(s, "data")
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
            move_bytes(out, b * isz, data, o * isz, w * isz)
        else:  # short rows: an item loop through borrowed pointers beats a slice copy
            _copy_items(fp, b, dp, o, w, isz)
        b += w
    # the commit
    if zsid >= h[H.NSHAPES]:
        intern_shape(s, es)
    n = h[H.SIZE]
    if top > n:
        state, shape_id = s.state, s.shape_id
        for i in range(n, top):
            state[i] = WRITTEN
            shape_id[i] = zsid
        h[H.SIZE] = top
    kernels.store_reads(idx, s.state, s.shape_id, new_state, sids)
    return 0


@register_jitable
def _result(s, idx, sids, zsid, es, n, shape):
    """``(status, bytes)``: a gather's or concat's result of ``n`` items; TF's OOM error when it does not fit.

    The error names the element shape when an element read is unwritten: TF makes each
    unwritten element's zeros first, and that is the allocation that fails there.
    """
    isz = s.hdr[H.ITEMSIZE]
    ok = n >= 0 and n <= INT64_MAX // isz and numpy_fits(shape, isz)
    out = s.data[:0].copy()
    if ok:
        try:
            out = advise_huge(np.empty(n * isz, np.uint8))
        except Exception:
            ok = False
    if not ok:
        if zsid >= 0:
            for k in range(idx.size):
                if sids[k] == zsid and (idx[k] >= s.hdr[H.SIZE] or not s.state[idx[k]] & WRITTEN):
                    status, _ = new_items(s, items_of(es), True, es)  # fails when those zeros do not fit either
                    if status:
                        return status, out
                    break
        return oom(s, shape, s.hdr[H.DTYPE]), out
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
    status, es, es_known = merge_es(s, attr, attr_known)
    if status:
        return status, none, no_dims()
    m = idx.size
    if m == 0:  # TF returns before looking at the array (closed or not)
        if not attr_known or not fully_defined(attr):
            return fail_s(s, G3, 0, attr, attr.size if attr_known else -1, NO_I64, 0), none, no_dims()
        status = check_rank(s, 0, attr.size, want)
        if status:
            return status, none, no_dims()
        shape = np.empty(attr.size + 1, np.int64)
        shape[0] = 0
        shape[1:] = attr
        commit_es(s, es, es_known)
        return 0, np.zeros(0, np.uint8), shape
    if h[H.CLOSED]:
        return fail_i(s, T1), none, no_dims()
    status, zsid, items = _plan_zeros(s, es, es_known)
    if not status:
        status, sids = check_reads(s, idx, zsid, es, es_known)
    if status:
        return status, none, no_dims()
    s0 = sids[0]
    shape0 = _sid_shape(s, s0, es)
    r = shape0.size
    if attr_known and not compatible(attr, shape0):
        return fail_s(s, G4, 0, attr, attr.size, shape0, r), none, no_dims()
    w = items[s0]
    if w:
        for k in range(1, m):
            if sids[k] != s0:
                other = _sid_shape(s, sids[k], es)
                return fail_s(s, G5, k, shape0, r, other, other.size), none, no_dims()
    status = check_rank(s, idx[0], r, want)
    if status:
        return status, none, no_dims()
    shape = np.empty(r + 1, np.int64)
    shape[0] = m
    shape[1:] = shape0
    if view and h[H.LAYOUT] == DENSE and w and w == h[H.WIDTH] and m * w <= nitems(s) and _is_range(idx):
        status = _read_many(s, idx, sids, items, zsid, es, s.data, w, True)
        if status:
            return status, none, no_dims()
        commit_es(s, es, es_known)
        return 0, s.data[: m * w * h[H.ITEMSIZE]], shape
    status, out = _result(s, idx, sids, zsid, es, m * w if w <= INT64_MAX // m else -1, shape)
    if not status:
        status = _read_many(s, idx, sids, items, zsid, es, out, w)
    if status:
        return status, none, no_dims()
    commit_es(s, es, es_known)
    return 0, out, shape


@register_jitable
def concat(s, attr, attr_known, want):
    """TF's ``TensorArrayConcatV3`` (T1, C1, T9-T11, C2-C4); return ``(status, flat, shape, lengths)``.

    ``attr`` is the op's ``element_shape_except0`` attribute (when ``attr_known``).
    """
    h = s.hdr
    none = s.data[:0]
    if h[H.CLOSED]:
        return fail_i(s, T1), none, no_dims(), no_dims()
    if h[H.ISGRAD]:
        n = h[H.MARKED]
        if n < 0:
            return fail_i(s, CONCAT_UNSPLIT), none, no_dims(), no_dims()
    else:
        n = h[H.SIZE]
    if n == 0:
        if not attr_known or not fully_defined(attr):
            return fail_s(s, C1, 0, attr, attr.size if attr_known else -1, NO_I64, 0), none, no_dims(), no_dims()
        status = check_rank(s, 0, attr.size + 1, want)
        if status:
            return status, none, no_dims(), no_dims()
        shape = np.empty(attr.size + 1, np.int64)
        shape[0] = 0
        shape[1:] = attr
        return 0, np.zeros(0, np.uint8), shape, np.zeros(0, np.int64)
    idx = np.arange(n)
    es = s.es
    known = h[H.ES_KNOWN] != 0
    status, zsid, items = _plan_zeros(s, es, known)
    if not status:
        status, sids = check_reads(s, idx, zsid, es, known)
    if status:
        return status, none, no_dims(), no_dims()
    s0 = _sid_shape(s, sids[0], es)
    r = s0.size
    if r == 0:
        return fail_i(s, C2, 0), none, no_dims(), no_dims()
    if attr_known and not compatible(attr, s0[1:]):
        return fail_s(s, C3, 0, attr, attr.size, s0[1:], r - 1), none, no_dims(), no_dims()
    lengths = np.empty(n, np.int64)
    prev = -1
    length = 0
    for k in range(n):
        if sids[k] != prev:  # an element of the previous one's shape passes as it did
            prev = sids[k]
            sk = _sid_shape(s, prev, es)
            if sk.size == 0:
                return fail_i(s, C2, k), none, no_dims(), no_dims()
            if not same_shape(sk[1:], s0[1:]):
                return fail_s(s, C4, k, s0[1:], r - 1, sk[1:], sk.size - 1), none, no_dims(), no_dims()
            length = sk[0]
        lengths[k] = length
    status = check_rank(s, 0, r, want)
    if status:
        return status, none, no_dims(), no_dims()
    shape = s0.copy()
    total = 0
    for k in range(n):
        total = total + lengths[k] if lengths[k] <= INT64_MAX - total else -1
    shape[0] = total
    status, out = _result(s, idx, sids, zsid, es, items_of(shape) if total >= 0 else -1, shape)
    if not status:
        status = _read_many(s, idx, sids, items, zsid, es, out, -1)
    if status:
        return status, none, no_dims(), no_dims()
    return 0, out, shape, lengths


# --------------------------------------------------------------------------- many writes
@register_jitable
def _write_error(s, code, index, old, shape):
    """Record TF's error for a failed ``WriteOrAggregateMany`` check (``kernels.check_writes``'s code); its status."""
    if code == 1:
        return fail_i(s, T5, index)
    if code == 2:
        return fail_i(s, T6, index)
    if code == 3:
        o = shape_at(s, old)
        return fail_s(s, T7, index, o, o.size, shape, shape.size)
    return fail_i(s, T8, s.hdr[H.DTYPE])


@register_jitable
def _store_many(s, idx, flat, sizes, sids, add, fresh, unique):
    """Do the data work and the commit of a scatter or split: element ``idx[k]`` gets the next ``sizes[k]`` items.

    Room for every element that needs it (``fresh``) is allocated first, so an
    allocation failure (TF's OOM error, its status returned) changes nothing an op
    can see; then the copies (``add``: sums into the element) and the commit, which
    cannot fail.  ``unique``: no index repeats, so every element's copy or sum has
    items of its own and the work can run on Numba's threads (from ``hdr[H.PARMIN]``
    items; a float16 sum, which converts each item, stays serial).  The kernels are C
    functions called natively through :data:`numba_ta.core.ckernels.TABLE`, so nothing
    Python runs between a copy or sum and the commit; while the kernel's slot is empty the
    elements are copied and summed here, one by one (the slot noted as wanted).
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
                offs[k] = idx[k] * z  # what alloc_element returns for a row of a dense buffer that holds them all
                continue
            status, at = alloc_element(s, idx[k], z, top, n_fresh, total)
            if status:
                return status
            offs[k] = at
            width = s.hdr[H.WIDTH] if s.hdr[H.LAYOUT] == DENSE else -1
            room = nitems(s)
    code = s.hdr[H.DTYPE]
    isz = s.hdr[H.ITEMSIZE]
    summing = _any(add)
    par = work >= s.hdr[H.PARMIN]
    # one kernel call for all elements: on Numba's threads from PARMIN items; serially for the
    # sums of many elements (a sum per element in the loop below costs ~0.1 us of views and checks)
    batch = m > 1 and unique and (par or (summing and m >= SUM_BATCH)) and not (summing and code == F16_CODE)
    slot = ckernels.sum_slot(code, par) if summing else ckernels.WRITE
    if batch and ckernels.ready(slot):  # each element's items are its own: the copies and sums can run on threads
        dst = np.empty(m, np.int64)
        src = np.empty(m, np.int64)
        o = 0
        offsets = s.offsets
        for k in range(m):
            dst[k] = offsets[idx[k]] if add[k] else offs[k]
            src[k] = o
            o += sizes[k]
        if summing:  # items of the dtype
            batch = ckernels.call(slot, s.data, flat, dst, src, sizes, add, m)
        else:  # bytes
            batch = ckernels.call(slot, s.data, flat, dst * isz, src * isz, sizes * isz, add, m)
    else:
        batch = False
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
                    move_bytes(data, run_d, flat, run_f, run_n)
                    run_n = 0
                d0 = offsets[i] * isz
                add_items(data[d0 : d0 + z * isz], flat[fo : fo + z * isz], code)
            else:
                d0 = offs[k] * isz
                if run_n and d0 == run_d + run_n and fo == run_f + run_n:
                    run_n += z * isz
                else:
                    if run_n:
                        move_bytes(data, run_d, flat, run_f, run_n)
                    run_d = d0
                    run_f = fo
                    run_n = z * isz
                offsets[i] = offs[k]
        else:
            offsets[i] = 0
        state[i] = STORED
        shape_id[i] = sids[k]
        o += z
    if run_n:
        move_bytes(data, run_d, flat, run_f, run_n)
    if summing:
        s.hdr[H.DISALLOWED] = 1
    return 0


@register_jitable
def scatter(s, idx, flat, rows, row, numeric):
    """TF's ``TensorArrayScatterV3`` after K7 and S2 (T1, S3, S4, T2, T4, T5 to T8, in TF's order); the status.

    The value has ``rows`` rows of shape ``row`` (int64 array), ``flat`` its items.
    """
    h = s.hdr
    if h[H.CLOSED]:
        return fail_i(s, T1)
    m = idx.size
    if m != rows:
        return fail_i(s, S3, m, rows)
    n = h[H.SIZE]
    max_index = _max_of(idx, -1)
    size2 = max(n, max_index + 1) if h[H.DYN] else n
    if max_index >= size2:
        return fail_i(s, S4, max_index, size2)
    if m == 0:
        return 0
    pos_neg = m
    for k in range(m):
        if idx[k] < 0:
            pos_neg = k
            break
    if pos_neg == 0:
        return fail_i(s, T2, idx[0], n)
    if not es_compatible(s, row):
        return fail_s(s, T4, idx[0], row, row.size, s.es, s.es.size if h[H.ES_KNOWN] else -1)
    status, sid, items = plan_shape(s, row, s.items[: h[H.NSHAPES]])
    if status:
        return status
    sids = np.full(m, sid, np.int64)
    keys, seen = _repeat_keys(idx[:pos_neg])
    add = np.empty(pos_neg, np.bool_)
    fresh = np.empty(pos_neg, np.bool_)
    dup = np.empty(pos_neg, np.bool_)
    p, code, old = kernels.check_writes(
        idx[:pos_neg], s.state, s.shape_id, n, h[H.ISGRAD], sids[:pos_neg], items, numeric, keys, seen, add, fresh, dup
    )
    if code:
        return _write_error(s, code, idx[p], old, row)
    if pos_neg < m:
        size_then = max(n, _max_of(idx[:pos_neg], -1) + 1) if h[H.DYN] else n
        return fail_i(s, T2, idx[pos_neg], size_then)
    # no check can fail any more: room (which can), then the data work and the commit
    status = reserve(s, max_index + 1)
    if not status:
        status = _store_many(s, idx, flat, np.full(m, items[sid], np.int64), sids, add, fresh, not _any(dup))
    if status:
        return status
    intern_shape(s, row)
    h[H.SIZE] = size2
    if h[H.IDENT] and not (h[H.ES_KNOWN] and fully_defined(s.es)):
        set_es(s, row)
    return 0


@register_jitable
def split(s, flat, lens, vshape, numeric, k7):
    """TF's ``TensorArraySplitV3`` after P1-P4 (T1, negative lengths, P5, K7, T4, T5-T8 in TF's order); the status.

    ``vshape`` is the value's shape (rank >= 1), ``flat`` its items, ``lens`` the lengths;
    ``k7``: the op has a dtype error (the K7 status, after P5; the caller has its text).
    """
    h = s.hdr
    if h[H.CLOSED]:
        return fail_i(s, T1)
    n_new = lens.size
    for k in range(n_new):
        if lens[k] < 0:
            return fail_i(s, SPLIT_NEGATIVE, k, lens[k])
    size = h[H.SIZE]
    size2 = n_new if (h[H.DYN] and size < n_new) else size
    if size2 != n_new:
        return fail_i(s, P5, size, n_new)
    if k7:
        return fail_i(s, K7)
    r = vshape.size
    row = 1
    for d in range(1, r):
        row *= vshape[d]  # the value exists: its rows fit
    if n_new and row:
        kmax = 0
        for k in range(n_new):
            if lens[k] > lens[kmax]:
                kmax = k
        if lens[kmax] > INT64_MAX // row:
            shape_k = vshape.copy()
            shape_k[0] = lens[kmax]
            return fail(s, SPLIT_INT64, kmax, lens[kmax], 0, shape_k, r, NO_I64, 0)
    es = s.es
    es_known = h[H.ES_KNOWN] != 0
    es2 = es.copy()
    shape_k = vshape.copy()
    sids = np.empty(n_new, np.int64)
    add = np.zeros(n_new, np.bool_)
    fresh = np.zeros(n_new, np.bool_)
    planned = NO_I64
    n_planned = 0
    if n_new:
        shape_k[0] = lens[0]
        if not es_compatible(s, shape_k):
            return fail_s(s, T4, 0, shape_k, r, es, es.size if es_known else -1)
        if h[H.IDENT] and not (es_known and fully_defined(es)):
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
        items = s.items[: h[H.NSHAPES]]
        planned = np.empty(n_new, np.int64)  # the new lengths, in order of first appearance
        for k in range(n_new):
            shape_k[0] = lens[k]
            sid = find_shape(s, shape_k)
            if sid < 0:
                for j in range(n_planned):
                    if planned[j] == lens[k]:
                        sid = h[H.NSHAPES] + j
                        break
                if sid < 0:
                    planned[n_planned] = lens[k]
                    sid = h[H.NSHAPES] + n_planned
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
        p, code, old = kernels.check_writes(
            idx, s.state, s.shape_id, size, h[H.ISGRAD], sids, items, numeric, keys, seen, add, fresh, dup
        )
        if k_bad < n_new and k_bad <= p:
            shape_k[0] = lens[k_bad]
            return fail_s(s, T4, k_bad, shape_k, r, es2, es2.size if es_known else -1)
        if code:
            shape_k[0] = lens[p]
            return _write_error(s, code, p, old, shape_k)
    marked = size2 if not h[H.ISGRAD] else h[H.MARKED]
    sizes = lens * row
    total = 0
    for k in range(n_new):  # the lengths' sum may have wrapped around int64 (P4 compares it wrapped)
        if sizes[k] > INT64_MAX - total:
            return oom(s, one_dim(-1), h[H.DTYPE])
        total += sizes[k]
    if total != flat.size // h[H.ITEMSIZE]:
        return oom(s, one_dim(total), h[H.DTYPE])
    # no check can fail any more: room (which can), then the data work and the commit
    status = reserve(s, size2)
    if not status:
        status = _store_many(s, np.arange(n_new), flat, sizes, sids, add, fresh, True)
    if status:
        return status
    for j in range(n_planned):  # intern the planned shapes: they get the planned ids
        shape_k[0] = planned[j]
        intern_shape(s, shape_k)
    h[H.MARKED] = marked
    h[H.SIZE] = max(size, size2)
    if es_known:
        commit_es(s, es2, True)
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
    h[H.SIZE] = 0
    h[H.CAP] = 0
    h[H.USED] = 0
    h[H.LAYOUT] = NO_BUFFER
    h[H.CLOSED] = 1
    h[H.FASTSID] = -1
    h[H.GEN] += 1


@register_jitable
def copy_shapes(g, f, prepend):
    """TF's ``CopyShapesFrom``: each slot written in ``f`` becomes a soft zero of ``prepend`` + its shape in ``g``.

    ``g`` is a new gradient array of ``f``'s size.  Returns the status: NT-prepend-int64
    (recorded in ``f``'s ``err``; nothing changed) when such a shape has more than 2**63 - 1
    items.
    """
    n = f.hdr[H.SIZE]
    nf = f.hdr[H.NSHAPES]
    need = np.zeros(nf, np.bool_)
    for i in range(n):
        if f.state[i] & WRITTEN:
            need[f.shape_id[i]] = True
    shapes = []
    for sid in range(nf):
        if need[sid]:
            own = shape_at(f, sid)
            shape = np.empty(prepend.size + own.size, np.int64)
            shape[: prepend.size] = prepend
            shape[prepend.size :] = own
            if items_of(shape) < 0:
                return fail_s(f, PREPEND_INT64, 0, prepend, prepend.size, shape, shape.size)
            shapes.append(shape)
    mapped = np.full(nf, -1, np.int64)
    j = 0
    for sid in range(nf):
        if need[sid]:
            mapped[sid] = intern_shape(g, shapes[j])
            j += 1
    for i in range(n):
        if f.state[i] & WRITTEN:
            g.state[i] = WRITTEN
            g.shape_id[i] = mapped[f.shape_id[i]]
    return 0


@register_jitable
def gradient_of(f, name, h, es, es_known, prepend):
    """``(status, g)``: a new gradient array ``g`` of ``f`` (TF's ``TensorArrayGradV3``, after its checks).

    ``h`` is a fresh header of ``f``'s dtype (:func:`numba_ta.core.memory.new_header`: its
    policies set), which the array takes as its ``hdr``.  It has ``f``'s size and shape rules
    and the element shape ``es``
    (``es_known``: whether it is known); every slot written in ``f`` is a soft zero of
    ``prepend`` + its shape (:func:`copy_shapes`).  Fails as ``copy_shapes`` and the
    metadata's allocation do, the error recorded in ``f``'s ``err`` (``g`` is then ``f``);
    ``f`` is not changed.
    """
    fh = f.hdr
    n = fh[H.SIZE]
    h[H.SIZE] = n
    h[H.CAP] = n
    h[H.LAYOUT] = NO_BUFFER
    h[H.CAR] = 1
    h[H.IDENT] = fh[H.IDENT]
    h[H.ISGRAD] = 1
    h[H.MARKED] = fh[H.MARKED]
    h[H.FASTSID] = -1
    h[H.ES_KNOWN] = es_known
    status, state, shape_id, offsets = new_meta(f, n)
    if status:
        return status, f
    g = new_state(f.data[:0].copy(), state, shape_id, offsets, h, NO_I64.copy(), np.zeros(1, np.int64),
                  NO_I64.copy(), es.copy(), NO_I64.copy(), name)  # fmt: skip
    status = copy_shapes(g, f, prepend)
    return status, g if not status else f


# --------------------------------------------------------------------------- entries for the Python layer
# One compiled function per op, specialised only on the struct's type and the arguments' fixed
# types (bytes, int64 arrays, ints, bools, str), so each compiles once for every dtype and rank.
# Cached, and loaded with signals held back, as the kernels are (``kernels.kernel``); a read-only
# install compiles them in each process (about a minute in all).
@kernels.kernel()
def py_write(s, index, flat, shape, numeric):
    """:func:`write` for the Python layer: the status."""
    return write(s, index, flat, shape, numeric)


@kernels.kernel()
def py_read(s, index):
    """:func:`read` for the Python layer: ``(status, flat, shape)``."""
    return read(s, index, -1)


@kernels.kernel()
def py_gather(s, idx, attr, attr_known, view):
    """:func:`gather` for the Python layer: ``(status, flat, shape)``."""
    return gather(s, idx, attr, attr_known, -1, view)


@kernels.kernel()
def py_concat(s, attr, attr_known):
    """:func:`concat` for the Python layer: ``(status, flat, shape, lengths)``."""
    return concat(s, attr, attr_known, -1)


@kernels.kernel()
def py_scatter(s, idx, flat, rows, row, numeric):
    """:func:`scatter` for the Python layer: the status."""
    return scatter(s, idx, flat, rows, row, numeric)


@kernels.kernel()
def py_split(s, flat, lens, vshape, numeric, k7):
    """:func:`split` for the Python layer: the status."""
    return split(s, flat, lens, vshape, numeric, k7)


@kernels.kernel()
def py_close(s):
    """:func:`close` for the Python layer."""
    close(s)


@kernels.kernel()
def py_gradient_of(f, name, h, es, es_known, prepend):
    """:func:`gradient_of` for the Python layer: ``(status, new struct)``."""
    return gradient_of(f, name, h, es, es_known, prepend)


@kernels.kernel()
def set_name(s, name):
    """Rename the array (its messages name it)."""
    s.name = name


@kernels.kernel()
def set_ces(s, ces):
    """Replace the class's element shape array (another rank)."""
    s.ces = ces
