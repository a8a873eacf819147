"""Naive reference model of TensorFlow 2's TensorList values and ops, for the list property tests.

This is the test oracle for the TensorList ops of :mod:`numba_ta.raw_ops` (and the list
kernels of ``ZerosLike`` / ``AddN``, :mod:`numba_ta.gradients`). It follows the
TensorFlow semantics reference (``docs/semantics.rst``, section ``tl-semantics``) rule by
rule, in the order written there, with numba_ta's divergences where TensorFlow crashes
(``tl-crashes``) and ScatterIntoExistingList's gap (``tl-scatter-existing`` step 7).
Speed is irrelevant; nothing is shared with numba_ta: the error texts are written out in
:mod:`tests.helpers.list_messages` (TensorFlow's, and numba_ta's own where TensorFlow crashes).

A list is a :class:`RefList`, an immutable value: ``dtype`` (a numpy dtype, ``object``
for TensorFlow's ``variant``), ``element_shape`` (a partial shape: None for an unknown
rank, else a tuple of int / None), ``max_num_elements`` and ``items``, a tuple whose
entries are None (unset) or the element: a read-only ndarray for a numeric list; a
:class:`RefList` or :data:`VZ` (TensorFlow's variant zero) for a list of variants.

Every op is a function named like the raw op, taking the raw op's keywords (already plain
Python / numpy values: handles are :class:`RefList` values, dtypes numpy dtypes or
``"variant"``). Ops that return a list return a new :class:`RefList` and never touch
their inputs (all values are immutable), so "the inputs are unchanged" holds by
construction. An op error raises :class:`RefError`, carrying the message code, the
error class name and the exact text.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from tests.helpers import list_messages
from tests.helpers import reference as _array_reference
from tests.helpers.reference import partial_str, shape_str

VARIANT = np.dtype(object)


class _VariantZero:
    """TensorFlow's variant zero (what an unset element of a list of lists reads as)."""

    __slots__ = ()

    def __repr__(self):
        return "Variant<type: int value: 0>"


VZ = _VariantZero()


class RefError(Exception):
    """An op error of the reference: ``code``, ``cls`` (class name) and ``text``."""

    def __init__(self, code, **fields):
        self.code = code
        self.cls, self.text = list_messages.text(code, **fields)
        super().__init__(f"{self.cls}: {self.text} ({code})")


class RefList(NamedTuple):
    dtype: np.dtype
    element_shape: tuple | None
    max_num_elements: int
    items: tuple

    def __repr__(self):
        def one(v):
            if v is None:
                return "unset"
            if isinstance(v, np.ndarray):
                return f"{v.dtype.name}{list(v.shape)}{v.tolist()}"
            return repr(v)

        return (
            f"RefList({dtype_name(self.dtype)}, {partial_str(self.element_shape)}, max={self.max_num_elements}, "
            f"[{' | '.join(one(v) for v in self.items)}])"
        )


# --------------------------------------------------------------------------- texts and shapes


def dtype_name(dt):
    """TF's ``DataTypeString``: ``float``, ``double``, ``variant``, else numpy's name."""
    if np.dtype(dt) == VARIANT:
        return "variant"
    return _array_reference.dtype_name(dt)


def fully_defined(p):
    return p is not None and all(d is not None for d in p)


def compatible(p, q):
    if p is None or q is None:
        return True
    return len(p) == len(q) and all(a is None or b is None or a == b for a, b in zip(p, q, strict=True))


def merge(a, b):
    """``PartialTensorShape::MergeWith``: ``a`` is printed first."""
    if a is None:
        return None if b is None else tuple(b)
    if b is None:
        return tuple(a)
    if len(a) != len(b):
        raise RefError("NT-merge-rank", rank=len(a), other_rank=len(b))
    if not compatible(a, b):
        raise RefError("NT-merge-shape", shape=partial_str(a), other_shape=partial_str(b))
    return tuple(x if x is not None else y for x, y in zip(a, b, strict=True))


def parse_shape(value, op=None):
    """An ``element_shape`` input as ``TensorShapeFromTensor`` reads it (L12 with ``op``, else L5; L4; L6)."""
    a = np.asarray(value, dtype=np.int64)
    if a.ndim >= 2:
        if op is not None:
            raise RefError("L12", op=op, shape=shape_str(a.shape))
        raise RefError("L5", rank=a.ndim)
    if a.ndim == 0:
        if int(a) == -1:
            return None
        raise RefError("L4")
    for d in a.tolist():
        if d < -1:
            raise RefError("L6", dim=d)
    return tuple(None if d == -1 else int(d) for d in a.tolist())


def as_dtype(dt):
    if isinstance(dt, str) and dt == "variant":
        return VARIANT
    return np.dtype(dt)


# --------------------------------------------------------------------------- values


def frozen(a):
    """A private read-only copy of an ndarray."""
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


def value_dtype(v):
    """The dtype of an item or tensor argument: an ndarray's, or variant for a list / the variant zero."""
    if isinstance(v, np.ndarray):
        return v.dtype
    return VARIANT


def value_shape(v):
    return v.shape if isinstance(v, np.ndarray) else ()


def misfit(lst):
    """Whether a list (or a list inside it) has a set element that contradicts its fully defined element shape."""
    es = lst.element_shape
    for v in lst.items:
        if isinstance(v, RefList) and misfit(v):
            return True
        if v is not None and fully_defined(es) and not compatible(es, value_shape(v)):
            return True
    return False


def as_item(v, dtype):
    """A value as a list stores it."""
    if dtype == VARIANT:
        if isinstance(v, np.ndarray):
            assert v.shape == () and v.dtype == VARIANT, v
            return v[()]
        return v
    return frozen(v)


def zeros(dtype, shape):
    """The value of an unset element read as ``shape``: zeros, or variant zeros."""
    shape = tuple(shape)
    if dtype == VARIANT:
        if shape == ():
            return VZ
        out = np.empty(shape, object)
        out.reshape(-1)[:] = [VZ] * out.size
        return out
    return np.zeros(shape, dtype)


def stacked(dtype, items, shape):
    """``items`` (elements or None) stacked on a new first axis, each of ``shape``; None as zeros."""
    shape = tuple(shape)
    out = np.empty((len(items), *shape), object if dtype == VARIANT else dtype)
    for k, v in enumerate(items):
        if dtype == VARIANT:
            out[k] = VZ if v is None else v
        else:
            out[k] = np.zeros(shape, dtype) if v is None else v
    return out


def rows_of(t):
    """Row ``k`` of a tensor argument, as a list stores it."""
    if t.dtype == VARIANT:
        return [t[k] for k in range(t.shape[0])] if t.ndim == 1 else [t[k].copy() for k in range(t.shape[0])]
    return [frozen(t[k]) for k in range(t.shape[0])]


def _list(x):
    """L1 / L2 of every op with a list input."""
    if isinstance(x, np.ndarray) and x.dtype == VARIANT:
        if x.ndim:
            raise RefError("L1", shape=shape_str(x.shape))
        x = x[()]
    if not isinstance(x, RefList):
        raise RefError("L2", value=repr(x))
    return x


def _check_dtype(op_dtype, lst):
    if np.dtype(op_dtype) != lst.dtype:
        raise RefError("L3", op_dtype=dtype_name(op_dtype), list_dtype=dtype_name(lst.dtype))


def _int(x):
    return np.asarray(x, np.int64)


def _set_shapes(lst, idx=None):
    """``(position, shape)`` of the set elements (of ``idx``), in order."""
    positions = range(len(lst.items)) if idx is None else idx
    return [(i, value_shape(lst.items[i])) for i in positions if lst.items[i] is not None]


# --------------------------------------------------------------------------- creating lists


def EmptyTensorList(element_shape, max_num_elements, element_dtype):
    dt = as_dtype(element_dtype)
    m = _int(max_num_elements)
    if m.ndim:
        raise RefError("L7", shape=shape_str(m.shape))
    es = parse_shape(element_shape)
    return RefList(dt, es, int(m), ())


def TensorListReserve(element_shape, num_elements, element_dtype):
    dt = as_dtype(element_dtype)
    es = parse_shape(element_shape)
    n = _int(num_elements)
    if n.ndim:
        raise RefError("L8", shape=shape_str(n.shape))
    if n < 0:
        raise RefError("L9", num_elements=int(n))
    return RefList(dt, es, -1, (None,) * int(n))


def TensorListFromTensor(tensor, element_shape):
    es = parse_shape(element_shape, "TensorListFromTensor")
    t = np.asarray(tensor)
    if t.ndim == 0:
        raise RefError("L10", shape=shape_str(t.shape))
    if not compatible(es, t.shape[1:]):
        raise RefError("L11", element_shape=partial_str(es), shape=shape_str(t.shape[1:]))
    return RefList(t.dtype, es, -1, tuple(rows_of(t)))


def _scatter(tensor, indices, element_shape, num_elements=None):
    es = parse_shape(element_shape, "TensorListScatter")
    num = -1
    if num_elements is not None:
        ne = _int(num_elements)
        if ne.ndim:
            raise RefError("L39")
        if ne < -1:
            raise RefError("L38", num_elements=int(ne))
        num = int(ne)
    t = np.asarray(tensor)
    if t.ndim == 0:
        raise RefError("L10", shape=shape_str(t.shape))
    if not compatible(es, t.shape[1:]):
        raise RefError("L11", element_shape=partial_str(es), shape=shape_str(t.shape[1:]))
    idx = _int(indices).reshape(-1).tolist()
    if len(idx) != t.shape[0]:
        raise RefError("L35", indices=len(idx), rows=t.shape[0])
    for i in idx:
        if i < 0:
            raise RefError("L36")
        if num != -1 and i >= num:
            raise RefError("L37", index=i, size=num)
    items = [None] * max(max(idx) + 1 if idx else 0, num)
    for i, row in zip(idx, rows_of(t), strict=True):
        items[i] = row
    return RefList(t.dtype, es, -1, tuple(items))


def TensorListScatter(tensor, indices, element_shape):
    return _scatter(tensor, indices, element_shape)


def TensorListScatterV2(tensor, indices, element_shape, num_elements):
    return _scatter(tensor, indices, element_shape, num_elements)


def TensorListSplit(tensor, element_shape, lengths):
    es = parse_shape(element_shape)
    if es is not None and len(es) == 0:
        raise RefError("L53", element_shape=partial_str(es))
    t = np.asarray(tensor)
    if t.ndim == 0:
        raise RefError("L10", shape=shape_str(t.shape))
    if es is not None and not compatible(es[1:], t.shape[1:]):
        raise RefError("L54", shape=shape_str(t.shape), element_shape=partial_str(es))
    lens = _int(lengths)
    if lens.ndim != 1:
        raise RefError("P1", shape=shape_str(lens.shape))
    rows, end, pieces = t.shape[0], 0, []
    for length in lens.tolist():
        if length < 0:
            raise RefError("L55", length=length)
        if end + length > rows:
            raise RefError("L56", start=end, end=end + length, rows=rows)
        pieces.append(t[end : end + length])
        end += length
    if end < rows:
        raise RefError("L57", rows=rows, used=end)
    if fully_defined(es):  # tl-crashes: numba_ta refuses a piece TF would store
        for k, p in enumerate(pieces):
            if p.shape[0] != es[0]:
                raise RefError("NT-tl-split-shape", shape=shape_str(p.shape), index=k, element_shape=partial_str(es))
    return RefList(t.dtype, es, -1, tuple(frozen(p) if t.dtype != VARIANT else p.copy() for p in pieces))


# --------------------------------------------------------------------------- inspecting


def TensorListLength(input_handle):
    return np.int32(len(_list(input_handle).items))


def TensorListElementShape(input_handle, shape_type):
    es = _list(input_handle).element_shape
    st = np.dtype(shape_type)
    if es is None:
        return np.array(-1, st)
    return np.array([-1 if d is None else d for d in es], np.int64).astype(st)


# --------------------------------------------------------------------------- element ops


def TensorListGetItem(input_handle, index, element_shape, element_dtype):
    lst = _list(input_handle)
    _check_dtype(as_dtype(element_dtype), lst)
    idx = _int(index)
    if idx.size != 1:
        raise RefError("NT-tl-index", shape=shape_str(idx.shape))
    i = int(idx.reshape(-1)[0])
    n = len(lst.items)
    if i < 0 or i >= n:
        raise RefError("L13", index=i, size=n)
    v = lst.items[i]
    if v is not None:
        return v
    m = merge(parse_shape(element_shape), lst.element_shape)
    if not fully_defined(m):
        for _, shape in _set_shapes(lst):
            m = merge(m, shape)
    if not fully_defined(m):
        raise RefError("L14", element_shape=partial_str(m))
    return zeros(lst.dtype, m)


def _summary(idx):
    """TF's ``SummarizeValue(3)`` for the small index tensors the tests use."""
    flat = idx.reshape(-1).tolist()
    if idx.ndim == 1:
        return " ".join(str(v) for v in flat[:3]) + ("..." if len(flat) > 3 else "")
    if idx.shape == (1, 1):
        return f"[{flat[0]}]"
    raise NotImplementedError(idx.shape)


def TensorListSetItem(input_handle, index, item, resize_if_index_out_of_bounds=False):
    lst = _list(input_handle)
    _check_dtype(value_dtype(item), lst)
    idx = _int(index)
    if idx.ndim:
        raise RefError("L17", shape=shape_str(idx.shape), values=_summary(idx))
    i = int(idx)
    if not compatible(lst.element_shape, value_shape(item)):
        raise RefError("L16", shape=shape_str(value_shape(item)), element_shape=partial_str(lst.element_shape))
    items = list(lst.items)
    n = len(items)
    if i < 0 or (i >= n and not resize_if_index_out_of_bounds):  # a negative index with resize: tl-crashes
        raise RefError("L15", index=i, size=n)
    if i >= n:
        items += [None] * (i + 1 - n)
    items[i] = as_item(item, lst.dtype)
    return lst._replace(items=tuple(items))


def TensorListPushBack(input_handle, tensor):
    lst = _list(input_handle)
    if not compatible(lst.element_shape, value_shape(tensor)):
        raise RefError("L18", shape=shape_str(value_shape(tensor)), element_shape=partial_str(lst.element_shape))
    _check_dtype(value_dtype(tensor), lst)
    n, m = len(lst.items), lst.max_num_elements
    if m >= 0 and n >= m:
        raise RefError("L19", size=n, max_num_elements=m)
    return lst._replace(items=lst.items + (as_item(tensor, lst.dtype),))


def TensorListPushBackBatch(input_handles, tensor):
    t = np.asarray(tensor)
    hs = np.asarray(input_handles, object) if not isinstance(input_handles, np.ndarray) else input_handles
    if t.ndim == 0:
        raise RefError("L22", shape=shape_str(t.shape))
    if hs.ndim != 1:
        raise RefError("L23", shape=shape_str(hs.shape))
    if t.shape[0] != hs.shape[0]:
        raise RefError("L24", rows=t.shape[0], size=hs.shape[0])
    for b, x in enumerate(hs.tolist()):
        if not isinstance(x, RefList):
            raise RefError("L25", index=b, value=repr(x))
        if not compatible(x.element_shape, t.shape[1:]):
            raise RefError("L26", index=b, shape=shape_str(t.shape[1:]), element_shape=partial_str(x.element_shape))
        if x.dtype != t.dtype:
            raise RefError("L27", index=b, op_dtype=dtype_name(t.dtype), list_dtype=dtype_name(x.dtype))
    out = np.empty(hs.shape[0], object)
    for b, x in enumerate(hs.tolist()):
        out[b] = x._replace(items=x.items + (as_item(t[b] if t.dtype != VARIANT else t[b], x.dtype),))
    return out


def TensorListPopBack(input_handle, element_shape, element_dtype):
    lst = _list(input_handle)
    _check_dtype(as_dtype(element_dtype), lst)
    n = len(lst.items)
    if n == 0:
        raise RefError("L20")
    v = lst.items[-1]
    if v is None:
        m = merge(parse_shape(element_shape), lst.element_shape)
        if not fully_defined(m):
            raise RefError("L21", element_shape=partial_str(m))
        v = zeros(lst.dtype, m)
    return lst._replace(items=lst.items[:-1]), v


def TensorListResize(input_handle, size):
    lst = _list(input_handle)
    n = _int(size)
    if n.ndim:
        raise RefError("L58")
    if n < 0:
        raise RefError("L59", size=int(n))
    n = int(n)
    items = lst.items[:n] + (None,) * max(0, n - len(lst.items))
    return lst._replace(items=items)


# --------------------------------------------------------------------------- whole-list reads


def TensorListStack(input_handle, element_shape, element_dtype, num_elements=-1):
    lst = _list(input_handle)
    _check_dtype(as_dtype(element_dtype), lst)
    n = len(lst.items)
    if num_elements != -1 and num_elements != n:
        raise RefError("L28", num_elements=num_elements, size=n)
    m = merge(parse_shape(element_shape), lst.element_shape)
    if n == 0:
        if not fully_defined(m):
            raise RefError("L29", element_shape=partial_str(m))
        return stacked(lst.dtype, [], m)
    if not fully_defined(lst.element_shape):
        for _, shape in _set_shapes(lst):
            m = merge(m, shape)
    if not fully_defined(m):
        raise RefError("L30", element_shape=partial_str(m))
    return stacked(lst.dtype, lst.items, m)


def TensorListGather(input_handle, indices, element_shape, element_dtype):
    lst = _list(input_handle)
    _check_dtype(as_dtype(element_dtype), lst)
    m = merge(parse_shape(element_shape), lst.element_shape)
    idx = _int(indices).reshape(-1).tolist()
    n = len(lst.items)
    if not idx:
        if not fully_defined(m):
            raise RefError("L31", element_shape=partial_str(m))
        return stacked(lst.dtype, [], m)
    if not fully_defined(lst.element_shape):
        for i in idx:
            if i < 0 or i >= n:
                raise RefError("L32", index=i, size=n)
            if lst.items[i] is not None:
                m = merge(m, value_shape(lst.items[i]))
        if not fully_defined(m):
            raise RefError("L34", element_shape=partial_str(m))
    else:
        bad = [i for i in idx if i < 0 or i >= n]
        if bad:
            if math.prod(m):
                raise RefError("L33", index=bad[0], size=n)
            return stacked(lst.dtype, [None] * len(idx), m)  # no values: nothing is read (GA18)
    return stacked(lst.dtype, [lst.items[i] for i in idx], m)


def TensorListScatterIntoExistingList(input_handle, tensor, indices):
    lst = _list(input_handle)
    t = np.asarray(tensor)
    if t.dtype != lst.dtype:
        raise RefError("L40", tensor_dtype=dtype_name(t.dtype), list_dtype=dtype_name(lst.dtype))
    if t.ndim == 0:
        raise RefError("L10", shape=shape_str(t.shape))
    idx = _int(indices)
    if idx.ndim != 1:
        raise RefError("G2", shape=shape_str(idx.shape))
    if idx.size != t.shape[0]:
        raise RefError("L41", indices=idx.size, rows=t.shape[0])
    es = lst.element_shape
    for i in idx.tolist():  # tl-crashes: numba_ta's checks where TF crashes or corrupts the list
        if i < 0:
            raise RefError("NT-tl-scatter-negative")
        if fully_defined(es) and not compatible(es, t.shape[1:]):
            raise RefError("NT-tl-scatter-shape", index=i, shape=shape_str(t.shape[1:]), element_shape=partial_str(es))
    items = list(lst.items)
    idx = idx.tolist()
    if idx and max(idx) >= len(items):  # numba_ta's divergence: the gap is unset
        items += [None] * (max(idx) + 1 - len(items))
    for i, row in zip(idx, rows_of(t), strict=True):
        items[i] = row
    return lst._replace(items=tuple(items))


def _concat(lst, element_dtype, v2, es_in=None, leading=None):
    if not v2 and es_in is not None and len(tuple(es_in)) == 0:
        raise RefError("L69")
    lst = _list(lst)
    _check_dtype(as_dtype(element_dtype), lst)
    if v2:
        m = merge(parse_shape(es_in), lst.element_shape)
        if m is not None and len(m) == 0:
            raise RefError("L42")
        d = m[0] if m is not None else None
        rest = m[1:] if m is not None else None
    else:
        attr = None if es_in is None else tuple(es_in)
        d = None
        rest = attr[1:] if attr is not None else None
    n = len(lst.items)
    if n == 0:
        if not fully_defined(rest):
            raise RefError("L43", element_shape=partial_str(rest))
        return np.zeros((0, *rest), lst.dtype) if lst.dtype != VARIANT else np.empty((0, *rest), object), np.zeros(
            0, np.int64
        )
    if not fully_defined(lst.element_shape):
        firsts = set()
        for i, shape in _set_shapes(lst):
            if not shape:
                raise RefError("L44", index=i)
            rest = merge(rest, shape[1:])
            if v2 and d is not None and shape[0] != d:
                raise RefError("L45", index=i, expected=d, actual=shape[0])
            firsts.add(shape[0])
        if d is None and len(firsts) == 1:
            d = firsts.pop()
    if not fully_defined(rest):
        raise RefError("L46", element_shape=partial_str(rest))
    lengths = []
    if v2:
        ld = _int(leading)
        nld = ld.size
        unset_read = [i for i, v in enumerate(lst.items) if v is None and i < nld]
        if unset_read and ld.ndim != 1:
            raise RefError("NT-tl-leading-vector", shape=shape_str(ld.shape))
    for i, v in enumerate(lst.items):
        if v is not None:
            lengths.append(value_shape(v)[0] if value_shape(v) else 1)  # (a scalar: refused below)
        elif not v2:
            if d is None:
                raise RefError("L47")
            lengths.append(d)
        elif i < nld:
            lengths.append(int(ld.reshape(-1)[i]))
        elif d is not None:
            lengths.append(d)
        else:
            raise RefError("L48", index=i, leading=nld)
    if v2:
        for i, v in enumerate(lst.items):
            if v is None and i < nld and lengths[i] < 0:
                raise RefError("NT-tl-leading-negative", value=lengths[i])
    if fully_defined(lst.element_shape):  # numba_ta's checks where TF reads garbage (tl-crashes)
        if not lst.element_shape:
            set_ = [i for i, v in enumerate(lst.items) if v is not None]
            if set_:
                raise RefError("L44", index=set_[0])
        else:
            merge(rest, lst.element_shape[1:])
    parts = [zeros(lst.dtype, (lengths[i], *rest)) if v is None else v for i, v in enumerate(lst.items)]
    if lst.dtype == VARIANT:  # only unset elements can be joined (set ones are scalars)
        out = np.empty((sum(lengths), *rest), object)
        out.reshape(-1)[:] = [VZ] * out.size
    else:
        out = np.concatenate([np.asarray(p) for p in parts], axis=0).astype(lst.dtype)
    return out, np.array(lengths, np.int64)


def TensorListConcat(input_handle, element_dtype, element_shape=None):
    return _concat(input_handle, element_dtype, False, element_shape)


def TensorListConcatV2(input_handle, element_shape, leading_dims, element_dtype):
    return _concat(input_handle, element_dtype, True, element_shape, leading_dims)


def TensorListConcatLists(input_a, input_b, element_dtype):
    dt = as_dtype(element_dtype)
    a = input_a if isinstance(input_a, np.ndarray) else _obj(input_a)
    b = input_b if isinstance(input_b, np.ndarray) else _obj(input_b)
    if a.shape != b.shape:
        raise RefError("L49", shape=shape_str(a.shape), other_shape=shape_str(b.shape))
    fa, fb = a.reshape(-1).tolist(), b.reshape(-1).tolist()
    out = []
    for i, (x, y) in enumerate(zip(fa, fb, strict=True)):
        for letter, v in (("a", x), ("b", y)):
            if not isinstance(v, RefList):
                raise RefError("L50", input=letter, index=i, value=repr(v))
        for letter, v in (("a", x), ("b", y)):
            if v.dtype != dt:
                raise RefError(
                    "L51", input=letter, index=i, list_dtype=dtype_name(v.dtype), element_dtype=dtype_name(dt)
                )
        if x.element_shape != y.element_shape:
            raise RefError(
                "L52", index=i, element_shape=partial_str(x.element_shape), other_shape=partial_str(y.element_shape)
            )
        out.append(x._replace(items=x.items + y.items))
    if a.ndim == 0:
        return out[0]
    res = np.empty(len(out), object)
    res[:] = out
    return res.reshape(a.shape)


def _obj(x):
    a = np.empty((), object)
    a[()] = x
    return a


# --------------------------------------------------------------------------- ZerosLike and AddN on lists


def _zeros_like(x):
    if x is VZ:
        return x
    if not isinstance(x, RefList):
        raise RefError("L2", value=repr(x))
    if x.dtype == VARIANT:
        items = tuple(v if v is None or not isinstance(v, RefList | _VariantZero) else _zeros_like(v) for v in x.items)
    else:
        items = tuple(None if v is None else frozen(np.zeros(v.shape, v.dtype)) for v in x.items)
    return RefList(x.dtype, x.element_shape, -1, items)


def ZerosLike(x):
    if isinstance(x, np.ndarray) and x.dtype == VARIANT:
        if x.ndim:
            raise RefError("L60")
        x = x[()]
    return _zeros_like(x)


def _type_name(v):
    return "int" if v is VZ else "tensorflow::TensorList"


def _add_elements(va, vb):
    if isinstance(va, np.ndarray):
        if va.shape != vb.shape:
            raise RefError("L66", shape=shape_str(va.shape), other_shape=shape_str(vb.shape))
        if va.dtype == np.bool_:
            raise RefError("L67", enum=10)
        with np.errstate(all="ignore"):
            return frozen(np.add(va, vb, dtype=va.dtype))
    return add(va, vb)


def add(a, b):
    """``TensorListBinaryAdd`` (one step of AddN): ``a`` + ``b``."""
    if a is VZ or b is VZ:
        if a is VZ and b is VZ:
            return a
        raise RefError("L68", type_name=_type_name(a), other_type_name=_type_name(b))
    for v in (a, b):
        if not isinstance(v, RefList):
            raise RefError("L2", value=repr(v))
    if a.dtype != b.dtype:
        raise RefError("L63", dtype=dtype_name(a.dtype), other_dtype=dtype_name(b.dtype))
    if not compatible(a.element_shape, b.element_shape):
        raise RefError("L64", element_shape=partial_str(a.element_shape), other_shape=partial_str(b.element_shape))
    if len(a.items) != len(b.items):
        raise RefError("L65", size=len(a.items), other_size=len(b.items))
    items = []
    for va, vb in zip(a.items, b.items, strict=True):
        items.append(vb if va is None else va if vb is None else _add_elements(va, vb))
    es = merge(a.element_shape, b.element_shape)
    if fully_defined(es):  # numba_ta's check where TF stores an element that does not fit (tl-crashes)
        for i, (va, vb) in enumerate(zip(a.items, b.items, strict=True)):
            one = va if vb is None else vb if va is None else None
            if one is not None and not compatible(es, value_shape(one)):
                raise RefError("NT-tl-add-shape", index=i, shape=shape_str(value_shape(one)), element_shape=partial_str(es))  # noqa: E501
    return RefList(a.dtype, es, -1, tuple(items))


def AddN(inputs):
    values = []
    for k, x in enumerate(inputs):
        if isinstance(x, np.ndarray) and x.dtype == VARIANT:
            if x.ndim:
                raise RefError("L62", index=k, shape=shape_str(x.shape))
            x = x[()]
        values.append(x)
    a = values[0]
    for b in values[1:]:
        a = add(a, b)
    return a
