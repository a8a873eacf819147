"""TensorFlow 2's TensorList ops over many elements, and ZerosLike and AddN on lists.

TensorListStack, TensorListGather, TensorListScatter(V2), TensorListScatterIntoExistingList,
TensorListConcat(V2), TensorListConcatLists and TensorListSplit, with ``tf.raw_ops``'
names, arguments and results (exported by :mod:`numba_ta.raw_ops`); ``zeros_like`` and
``add_n``, which the gradient rules use on lists (:mod:`numba_ta.gradients`).  The
contract is the section ``TensorList ops`` of the semantics reference
(``docs/semantics.rst``): each check runs in the order written there, with its message
code.  Every op checks everything before it changes anything (:mod:`numba_ta.tensor_list.store`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from numba_ta.core.memory import arange, as_int64, work_oom_error
from numba_ta.tensor_list.convert import (
    _check_dtype,
    _check_shape_input,
    _element_dtype,
    _infer,
    _list,
    _list_dtype,
    _name,
    _no_device,
    _no_kernel,
    _opaque,
    _resource_tensor,
    _scalar_int,
    _shape_input,
    _shape_type_attr,
    _store,
    _value,
    _zeros,
)
from numba_ta.tensor_list.ops import _from_rows, _handles, _op
from numba_ta.tensor_list.store import (
    _UNSET,
    RESOURCE,
    VARIANT,
    NumericStore,
    ObjectStore,
    TensorListHandle,
    VariantZero,
    new_store,
    store_of,
)
from numba_ta.tf import messages as _messages
from numba_ta.tf.messages import partial_str, shape_str
from numba_ta.tf.opdefs import (
    TensorListConcatResult,
    TensorListConcatV2Result,
    check_input,
)
from numba_ta.tf.tensor_shape import as_partial, is_compatible, is_fully_defined, merge

__all__ = [
    "TensorListStack",
    "TensorListGather",
    "TensorListScatter",
    "TensorListScatterV2",
    "TensorListScatterIntoExistingList",
    "TensorListConcat",
    "TensorListConcatV2",
    "TensorListConcatLists",
    "TensorListSplit",
]


# --------------------------------------------------------------------------- many elements
@_op("TensorListStack")
def TensorListStack(
    input_handle: Any, element_shape: Any, element_dtype: Any, num_elements: int = -1, name: str | None = None
) -> np.ndarray:
    """Stack all elements on a new first axis (``tf.raw_ops.TensorListStack``).

    Parameters
    ----------
    input_handle : TensorListHandle
        The list.
    element_shape : int or sequence of int, int32 array_like
        Merged with the list's element shape (and, when the list's own shape
        is not fully defined, with the set elements' shapes): the shape of
        every row, unset elements being zeros of it.
    element_dtype : numpy dtype, str, tf.DType or int
        Must be the list's dtype.
    num_elements : int, optional
        The expected length, or -1 (default) for any.
    name : str, optional
        Ignored.

    Returns
    -------
    tensor : ndarray of shape ``(length,) + element shape``
        The elements (an object array for a list of variants).

    Raises
    ------
    InvalidArgumentError
        L1, L2; dtype mismatch (L3); another length (L28); a bad
        ``element_shape`` (L5, L4, L6) or a merge error; an empty list (L29) or
        a list of unset elements (L30) whose shape is not fully defined.
    NotFoundError
        ``element_dtype`` resource (L70): TF has no kernel for it.
    ResourceExhaustedError
        When the result cannot be allocated.

    Notes
    -----
    Mirrors ``TensorListStack`` (:ref:`tl-stack`).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta.raw_ops import TensorListReserve, TensorListSetItem
    >>> h = TensorListReserve(element_shape=[2], num_elements=2, element_dtype=np.int32)
    >>> h = TensorListSetItem(input_handle=h, index=1, item=[5, 6])
    >>> TensorListStack(input_handle=h, element_shape=-1, element_dtype=np.int32)
    array([[0, 0],
           [5, 6]], dtype=int32)
    """
    dt = _element_dtype(element_dtype)
    if dt is RESOURCE:  # no kernel: TF's device placement fails before any check
        raise _no_device("TensorListStack", f"num_elements={int(num_elements)}")
    store = store_of(_list(input_handle, "TensorListStack"))
    _check_shape_input(element_shape, "TensorListStack")
    _check_dtype(dt, store)
    n = store.length
    ne = int(num_elements)
    if ne != -1 and ne != n:
        raise _messages.error("L28", num_elements=ne, size=n)
    m = merge(_shape_input(element_shape), store.element_shape)
    if n == 0:
        if not is_fully_defined(m):
            raise _messages.error("L29", element_shape=partial_str(m))
        return _zeros(store.dtype, (0, *m)) if store.dtype != VARIANT else np.empty((0, *m), object)
    if not is_fully_defined(store.element_shape):
        m = _infer(m, store)
    if not is_fully_defined(m):
        raise _messages.error("L30", element_shape=partial_str(m))
    try:
        return store.rows(arange(n, np.int64), m)
    except MemoryError as e:  # the work arrays of n elements: TF's OOM error
        raise work_oom_error(e, n) from None


@_op("TensorListGather")
def TensorListGather(
    input_handle: Any, indices: Any, element_shape: Any, element_dtype: Any, name: str | None = None
) -> np.ndarray:
    """Stack the elements at ``indices`` (``tf.raw_ops.TensorListGather``).

    Parameters
    ----------
    input_handle : TensorListHandle
        The list.
    indices : array_like of int
        The elements, read flat, in order, repeats allowed.
    element_shape : int or sequence of int, int32 array_like
        As for :func:`TensorListStack` (only the gathered elements count).
    element_dtype : numpy dtype, str, tf.DType or int
        Must be the list's dtype.
    name : str, optional
        Ignored.

    Returns
    -------
    values : ndarray of shape ``(indices.size,) + element shape``
        The elements, unset ones as zeros.

    Raises
    ------
    InvalidArgumentError
        L1, L2; dtype mismatch (L3); a bad ``element_shape`` or a merge error;
        no indices and a shape that is not fully defined (L31); an index out
        of range (L32, or L33 when the list's element shape is fully
        defined); unset elements whose shape is not fully defined (L34).
    NotFoundError
        ``element_dtype`` resource (L70): TF has no kernel for it.
    ResourceExhaustedError
        When the result cannot be allocated.

    Notes
    -----
    Mirrors ``TensorListGather`` (:ref:`tl-gather`), including TF's two range
    messages.

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta.raw_ops import TensorListFromTensor
    >>> h = TensorListFromTensor(tensor=np.array([10, 20, 30]), element_shape=-1)
    >>> TensorListGather(input_handle=h, indices=[2, 0, 2], element_shape=-1, element_dtype=np.int64)
    array([30, 10, 30])
    """
    dt = _element_dtype(element_dtype)
    if dt is RESOURCE:  # no kernel: TF's device placement fails before any check
        raise _no_device("TensorListGather")
    store = store_of(_list(input_handle, "TensorListGather"))
    check_input(indices, "TensorListGather", "indices")
    _check_shape_input(element_shape, "TensorListGather")
    _check_dtype(dt, store)
    m = merge(_shape_input(element_shape), store.element_shape)
    idx = as_int64(_scalar_int(indices, "indices").reshape(-1))
    if idx.size == 0:
        if not is_fully_defined(m):
            raise _messages.error("L31", element_shape=partial_str(m))
        return _zeros(store.dtype, (0, *m)) if store.dtype != VARIANT else np.empty((0, *m), object)
    n = store.length
    try:  # the work arrays of idx.size elements, and the result: TF's OOM error when they cannot be had
        bad = (idx < 0) | (idx >= n)
        first_bad = int(np.argmax(bad)) if bad.any() else idx.size
        if not is_fully_defined(store.element_shape):
            m = _infer(m, store, idx[:first_bad])
            if first_bad < idx.size:
                raise _messages.error("L32", index=int(idx[first_bad]), size=n)
            if not is_fully_defined(m):
                raise _messages.error("L34", element_shape=partial_str(m))
        elif first_bad < idx.size and is_fully_defined(m):  # (m is: the list's element shape is)
            if math.prod(m):
                raise _messages.error("L33", index=int(idx[first_bad]), size=n)
            return _zeros(store.dtype, (idx.size, *m))
        return store.rows(idx, m)
    except MemoryError as e:
        raise work_oom_error(e, idx.size) from None


def _scatter_checks(op, tensor, indices, element_shape, num_elements=None):
    if _resource_tensor(tensor):  # TensorArray handles: a resource tensor, for which TF has no kernel
        raise _no_kernel(op, "shape_type=" + _shape_type_attr(element_shape))
    check_input(indices, op, "indices")
    es = _shape_input(element_shape, "TensorListScatter", owner=op)
    if num_elements is not None:
        ne = _scalar_int(num_elements, "num_elements", owner=op)
        if ne.ndim:
            raise _messages.error("L39")
        if ne < -1:
            raise _messages.error("L38", num_elements=int(ne))
        num = int(ne)
    else:
        num = -1
    t = _value(tensor, "tensor")
    if t.ndim == 0:
        raise _messages.error("L10", shape=shape_str(t.shape))
    if not is_compatible(es, t.shape[1:]):
        raise _messages.error("L11", element_shape=partial_str(es), shape=shape_str(t.shape[1:]))
    idx = _scalar_int(indices, "indices").reshape(-1).astype(np.int64)
    if idx.size != t.shape[0]:
        raise _messages.error("L35", indices=idx.size, rows=t.shape[0])
    bad = (idx < 0) | ((idx >= num) if num != -1 else False)
    if np.any(bad):
        i = int(idx[np.argmax(bad)])
        if i < 0:
            raise _messages.error("L36")
        raise _messages.error("L37", index=i, size=num)
    length = max(int(idx.max()) + 1 if idx.size else 0, num)
    return _from_rows(t.dtype, es, length, idx, t)


@_op("TensorListScatter")
def TensorListScatter(tensor: Any, indices: Any, element_shape: Any, name: str | None = None) -> TensorListHandle:
    """Make a list with row ``k`` of ``tensor`` at ``indices[k]`` (``tf.raw_ops.TensorListScatter``).

    Parameters
    ----------
    tensor : array_like, at least 1-d
        The rows; its dtype is the list's.
    indices : array_like of int, ``>= 0``
        Where each row goes (read flat); a repeated index keeps the later row.
    element_shape : int or sequence of int, int32/int64 array_like
        The list's element shape, compatible with the rows.
    name : str, optional
        Ignored.

    Returns
    -------
    handle : TensorListHandle
        A list of ``max(indices) + 1`` elements; those no row went to are unset.

    Raises
    ------
    InvalidArgumentError
        ``tensor`` of TensorArray handles (a resource tensor: L71, TF has no
        kernel for it); ``element_shape`` of rank 2 or more (L12) or bad (L4,
        L6); ``tensor`` a scalar (L10); incompatible rows (L11); as many
        indices as rows (L35); a negative index (L36).
    ResourceExhaustedError
        When the list's storage cannot be allocated.

    Notes
    -----
    Mirrors ``TensorListScatter`` (:ref:`tl-scatter`).

    Examples
    --------
    >>> import numpy as np
    >>> h = TensorListScatter(tensor=np.array([[1.0], [2.0]]), indices=[2, 0], element_shape=[1])
    >>> TensorListStack(input_handle=h, element_shape=-1, element_dtype=np.float64)
    array([[2.],
           [0.],
           [1.]])
    """
    return _scatter_checks("TensorListScatter", tensor, indices, element_shape)


@_op("TensorListScatterV2")
def TensorListScatterV2(
    tensor: Any, indices: Any, element_shape: Any, num_elements: Any, name: str | None = None
) -> TensorListHandle:
    """:func:`TensorListScatter` with a minimum length (``tf.raw_ops.TensorListScatterV2``).

    Parameters
    ----------
    tensor : array_like, at least 1-d
        The rows; its dtype is the list's.
    indices : array_like of int
        Where each row goes, ``0 <= index < num_elements`` (when not -1).
    element_shape : int or sequence of int, int32/int64 array_like
        The list's element shape.
    num_elements : int
        The list's length, or -1 for ``max(indices) + 1``.
    name : str, optional
        Ignored.

    Returns
    -------
    handle : TensorListHandle
        The new list.

    Raises
    ------
    InvalidArgumentError
        As :func:`TensorListScatter`, and ``num_elements`` not a scalar (L39)
        or below -1 (L38); an index ``>= num_elements`` (L37).
    ResourceExhaustedError
        When the list's storage cannot be allocated.

    Notes
    -----
    Mirrors ``TensorListScatterV2`` (:ref:`tl-scatter`).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta.raw_ops import TensorListLength
    >>> h = TensorListScatterV2(tensor=np.ones((1, 2)), indices=[0], element_shape=-1, num_elements=3)
    >>> TensorListLength(input_handle=h)
    np.int32(3)
    """
    return _scatter_checks("TensorListScatterV2", tensor, indices, element_shape, num_elements)


@_op("TensorListScatterIntoExistingList")
def TensorListScatterIntoExistingList(
    input_handle: Any, tensor: Any, indices: Any, name: str | None = None
) -> TensorListHandle:
    """Return the list with row ``k`` of ``tensor`` at ``indices[k]``.

    Mirrors ``tf.raw_ops.TensorListScatterIntoExistingList``.

    Parameters
    ----------
    input_handle : TensorListHandle
        The list (unchanged).
    tensor : array_like, at least 1-d
        The rows, of the list's dtype.
    indices : (k,) array_like of int, ``>= 0``
        Where each row goes; past the end, the list grows (unset elements
        fill the gap); a repeated index keeps the later row.
    name : str, optional
        Ignored.

    Returns
    -------
    output_handle : TensorListHandle
        The new list.

    Raises
    ------
    InvalidArgumentError
        TensorArray handles, or objects for a list of resources (L71: TF has
        no kernel for a resource tensor); L1, L2; dtype mismatch (L40); ``tensor`` a scalar (L10); ``indices``
        not a vector (G2); as many indices as rows (L41); where TF crashes or
        corrupts the list: a negative index (``NT-tl-scatter-negative``), a
        row not compatible with a fully defined element shape
        (``NT-tl-scatter-shape``).
    ResourceExhaustedError
        When the storage cannot grow.

    Notes
    -----
    Mirrors ``TensorListScatterIntoExistingList`` (:ref:`tl-scatter-existing`);
    unlike TF, the gap a scatter past the end leaves holds unset elements.

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta.raw_ops import TensorListReserve
    >>> h = TensorListReserve(element_shape=[1], num_elements=1, element_dtype=np.int32)
    >>> h = TensorListScatterIntoExistingList(input_handle=h, tensor=[[4], [5]], indices=[0, 2])
    >>> TensorListStack(input_handle=h, element_shape=-1, element_dtype=np.int32)
    array([[4],
           [0],
           [5]], dtype=int32)
    """
    if _resource_tensor(tensor):  # TensorArray handles: a resource tensor, for which TF has no kernel
        raise _no_kernel("TensorListScatterIntoExistingList")
    h = _list(input_handle, "TensorListScatterIntoExistingList")
    check_input(indices, "TensorListScatterIntoExistingList", "indices")
    t = _value(tensor, "tensor")
    store = store_of(h)
    if store.dtype == RESOURCE and _opaque(t):  # objects for a list of resources: TF has no such kernel
        raise _no_kernel("TensorListScatterIntoExistingList")
    if t.dtype != store.dtype:
        raise _messages.error("L40", tensor_dtype=_name(t.dtype), list_dtype=_name(store.dtype))
    if t.ndim == 0:
        raise _messages.error("L10", shape=shape_str(t.shape))
    idx = _scalar_int(indices, "indices")
    if idx.ndim != 1:
        raise _messages.error("G2", shape=shape_str(idx.shape))
    if idx.size != t.shape[0]:
        raise _messages.error("L41", indices=idx.size, rows=t.shape[0])
    es = store.element_shape
    strict = is_fully_defined(es) and not is_compatible(es, t.shape[1:])
    for i in idx.tolist():
        if i < 0:
            raise _messages.error("NT-tl-scatter-negative")
        if strict:
            raise _messages.error("NT-tl-scatter-shape", index=i, shape=shape_str(t.shape[1:]), element_shape=partial_str(es))  # noqa: E501
    return store.change_many([(store.set, (i, _store(t[k], store.dtype))) for k, i in enumerate(idx.tolist())])


def _concat(op, input_handle, element_dtype, es_in, leading, v2):
    dt = _element_dtype(element_dtype)
    if not v2:
        attr = as_partial(es_in, attr=True)
        if dt is RESOURCE:  # no kernel: TF's device placement fails before any check
            raise _no_device(op, "element_shape=" + partial_str(attr))
        if attr is not None and len(attr) == 0:
            raise _messages.error("L69")  # TF's kernel refuses the attribute when it is made
    elif dt is RESOURCE:
        raise _no_device(op, "shape_type=" + _shape_type_attr(es_in))
    store = store_of(_list(input_handle, op))
    if v2:
        check_input(leading, op, "leading_dims")
    _check_dtype(dt, store)
    if v2:
        m = merge(_shape_input(es_in, owner=op), store.element_shape)
        if m is not None and len(m) == 0:
            raise _messages.error("L42")
        d = m[0] if m is not None else None
        rest = m[1:] if m is not None else None
    else:
        d = None
        rest = attr[1:] if attr is not None else None
    n = store.length
    result = TensorListConcatV2Result if v2 else TensorListConcatResult
    if n == 0:
        if not is_fully_defined(rest):
            raise _messages.error("L43", element_shape=partial_str(rest))
        return result(_zeros(store.dtype, (0, *rest)) if store.dtype != VARIANT else np.empty((0, *rest), object), np.zeros(0, np.int64))  # noqa: E501
    if not is_fully_defined(store.element_shape):
        dims0 = set()
        for i, shape in store.set_shapes():
            if not shape:
                raise _messages.error("L44", index=i)
            rest = merge(rest, shape[1:])
            if v2 and d is not None and shape[0] != d:
                raise _messages.error("L45", index=i, expected=d, actual=shape[0])
            dims0.add(shape[0])
        if d is None and len(dims0) == 1:
            d = next(iter(dims0))
    if not is_fully_defined(rest):
        raise _messages.error("L46", element_shape=partial_str(rest))
    try:  # the work arrays of n elements, and the result: TF's OOM error when they cannot be had
        lengths = store.first_dims()
        unset = np.flatnonzero(~store.set_mask())
        if unset.size:
            if v2:
                ld = _scalar_int(leading, "leading_dims", np.int64)
                nld = ld.size
                read = unset[unset < nld]
                if read.size and ld.ndim != 1:
                    raise _messages.error("NT-tl-leading-vector", shape=shape_str(ld.shape))
                rest_u = unset[unset >= nld]
                if rest_u.size and d is None:
                    raise _messages.error("L48", index=int(rest_u[0]), leading=nld)
                if read.size:
                    lengths[read] = ld.reshape(-1)[read]
                lengths[rest_u] = -1 if d is None else d
                neg = lengths[read] < 0
                if neg.any():
                    raise _messages.error("NT-tl-leading-negative", value=int(lengths[read][np.argmax(neg)]))
            else:
                if d is None:
                    raise _messages.error("L47")
                lengths[unset] = d
        es = store.element_shape
        if is_fully_defined(es):
            # step 4 did not run: where TensorFlow reads the elements with a shape they do not have
            # (tl-crashes), numba_ta raises what step 4 would have raised
            if not es:
                first = np.flatnonzero(store.set_mask())
                if first.size:
                    raise _messages.error("L44", index=int(first[0]))
            else:
                merge(rest, es[1:])
        out = store.concat_rows(arange(n, np.int64), lengths, rest)
        return result(out, as_int64(lengths))
    except MemoryError as e:
        raise work_oom_error(e, n) from None


@_op("TensorListConcat")
def TensorListConcat(
    input_handle: Any, element_dtype: Any, element_shape: Any = None, name: str | None = None
) -> TensorListConcatResult:
    """Join the elements along their first axis (``tf.raw_ops.TensorListConcat``).

    Parameters
    ----------
    input_handle : TensorListHandle
        The list; its set elements are at least vectors.
    element_dtype : numpy dtype, str, tf.DType or int
        Must be the list's dtype.
    element_shape : shape attribute, optional
        Its dimensions after the first give the shape every element must have
        after its first dimension (default: unknown rank); its first
        dimension is not used.
    name : str, optional
        Ignored.

    Returns
    -------
    tensor : ndarray
        The elements joined.
    lengths : (length,) int64 ndarray
        Each element's first dimension.

    Raises
    ------
    InvalidArgumentError
        L1, L2; L3; L43, L44, a merge error, L46, and L47 for an unset element
        whose first dimension cannot be inferred.
    NotFoundError
        ``element_dtype`` resource (L70): TF has no kernel for it.
    ResourceExhaustedError
        When the result cannot be allocated.

    Notes
    -----
    Mirrors ``TensorListConcat`` (:ref:`tl-concat`), including TF's L46 for a
    list whose element shape is fully defined when the attribute is not given.

    Examples
    --------
    >>> import numpy as np
    >>> h = TensorListSplit(tensor=np.arange(5.0), element_shape=-1, lengths=[2, 3])
    >>> TensorListConcat(input_handle=h, element_dtype=np.float64, element_shape=[-1])
    TensorListConcat(tensor=array([0., 1., 2., 3., 4.]), lengths=array([2, 3]))
    """
    return _concat("TensorListConcat", input_handle, element_dtype, element_shape, None, False)


@_op("TensorListConcatV2")
def TensorListConcatV2(
    input_handle: Any, element_shape: Any, leading_dims: Any, element_dtype: Any, name: str | None = None
) -> TensorListConcatV2Result:
    """Join the elements along their first axis (``tf.raw_ops.TensorListConcatV2``).

    Parameters
    ----------
    input_handle : TensorListHandle
        The list.
    element_shape : int or sequence of int, int32/int64 array_like
        Merged with the list's element shape: its first dimension is the
        length of unset elements, the rest the shape after every element's
        first dimension.
    leading_dims : (k,) int64 array_like
        The first dimension of unset element ``i`` when ``i < k``.
    element_dtype : numpy dtype, str, tf.DType or int
        Must be the list's dtype.
    name : str, optional
        Ignored.

    Returns
    -------
    tensor : ndarray
        The elements joined (unset ones as zeros).
    lengths : (length,) int64 ndarray
        Each element's first dimension.

    Raises
    ------
    InvalidArgumentError
        L1, L2; L3; a merge error; scalars (L42, L44); L43; L45; L46; L48;
        where TF aborts: a negative ``leading_dims`` entry read
        (``NT-tl-leading-negative``), or one read from a ``leading_dims`` that
        is not a vector (``NT-tl-leading-vector``).
    NotFoundError
        ``element_dtype`` resource (L70): TF has no kernel for it.
    ResourceExhaustedError
        When the result cannot be allocated.

    Notes
    -----
    Mirrors ``TensorListConcatV2`` (:ref:`tl-concat`).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta.raw_ops import TensorListReserve, TensorListSetItem
    >>> h = TensorListReserve(element_shape=[-1, 2], num_elements=2, element_dtype=np.float32)
    >>> h = TensorListSetItem(input_handle=h, index=0, item=np.ones((1, 2), np.float32))
    >>> t, lengths = TensorListConcatV2(input_handle=h, element_shape=[-1, 2], leading_dims=[0, 2],
    ...                                 element_dtype=np.float32)
    >>> t.shape, lengths
    ((3, 2), array([1, 2]))
    """
    return _concat("TensorListConcatV2", input_handle, element_dtype, element_shape, leading_dims, True)


@_op("TensorListConcatLists")
def TensorListConcatLists(input_a: Any, input_b: Any, element_dtype: Any, name: str | None = None) -> Any:
    """Join two lists, or two arrays of lists position by position (``tf.raw_ops.TensorListConcatLists``).

    Parameters
    ----------
    input_a, input_b : TensorListHandle or object ndarray of them
        The lists (unchanged), of the same shape.
    element_dtype : numpy dtype, str, tf.DType or int
        The dtype of every list.
    name : str, optional
        Ignored.

    Returns
    -------
    output : TensorListHandle or object ndarray of them
        ``input_a``'s elements followed by ``input_b``'s, with ``input_a``'s
        element shape and ``max_num_elements``.

    Raises
    ------
    InvalidArgumentError
        Different shapes (L49); position by position: not a list (L50), another
        dtype (L51), element shapes that are not identical (L52).
    ResourceExhaustedError
        When a list's storage cannot grow.

    Notes
    -----
    Mirrors ``TensorListConcatLists`` (:ref:`tl-concatlists`).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta.raw_ops import TensorListFromTensor
    >>> a = TensorListFromTensor(tensor=np.array([1, 2]), element_shape=-1)
    >>> c = TensorListConcatLists(input_a=a, input_b=a, element_dtype=np.int64)
    >>> TensorListStack(input_handle=c, element_shape=-1, element_dtype=np.int64)
    array([1, 2, 1, 2])
    """
    dt = _element_dtype(element_dtype)
    a = _handles(input_a, "input_a", "TensorListConcatLists")
    b = _handles(input_b, "input_b", "TensorListConcatLists")
    if a.shape != b.shape:
        raise _messages.error("L49", shape=shape_str(a.shape), other_shape=shape_str(b.shape))
    fa, fb = a.reshape(-1).tolist(), b.reshape(-1).tolist()
    for i, (x, y) in enumerate(zip(fa, fb, strict=True)):
        for letter, v in (("a", x), ("b", y)):
            if not isinstance(v, TensorListHandle):
                raise _messages.error("L50", input=letter, index=i, value=str(v))
        for letter, v in (("a", x), ("b", y)):
            if v.element_dtype != dt:
                raise _messages.error("L51", input=letter, index=i, list_dtype=_name(v.element_dtype), element_dtype=_name(dt))  # noqa: E501
        if x.element_shape != y.element_shape:
            raise _messages.error("L52", index=i, element_shape=partial_str(x.element_shape), other_shape=partial_str(y.element_shape))  # noqa: E501
    out = []
    for x, y in zip(fa, fb, strict=True):
        sb = store_of(y)
        nb = sb.length
        items = [(j, sb.get(j)) for j in range(nb) if sb.is_set(j)]
        sa = store_of(x)
        na = sa.length
        out.append(sa.change_many([(sa.resize, (na + nb,)), *((sa.set, (na + j, v)) for j, v in items)]))
    if a.ndim == 0:
        return out[0]
    res = np.empty(len(out), object)
    for k, v in enumerate(out):
        res[k] = v
    return res.reshape(a.shape)


@_op("TensorListSplit")
def TensorListSplit(tensor: Any, element_shape: Any, lengths: Any, name: str | None = None) -> TensorListHandle:
    """Cut ``tensor`` along its first axis into a list of pieces (``tf.raw_ops.TensorListSplit``).

    Parameters
    ----------
    tensor : array_like, at least 1-d
        The values; its dtype is the list's.
    element_shape : int or sequence of int, int32/int64 array_like
        The list's element shape, of rank >= 1 (or unknown), its dimensions
        after the first compatible with ``tensor.shape[1:]``.
    lengths : (k,) int64 array_like
        The rows of each piece, ``>= 0``, adding up to ``tensor.shape[0]``.
    name : str, optional
        Ignored.

    Returns
    -------
    handle : TensorListHandle
        A list of ``k`` elements.

    Raises
    ------
    InvalidArgumentError
        ``tensor`` of TensorArray handles (a resource tensor: L71, TF has no
        kernel for it); a bad ``element_shape`` (L5, L4, L6) or a scalar one
        (L53); ``tensor`` a scalar (L10); incompatible (L54); ``lengths`` not a vector (P1), with a
        negative value (L55), past the rows (L56) or leaving rows unused
        (L57); where TF corrupts the list: a piece that contradicts a fully
        defined element shape (``NT-tl-split-shape``).
    ResourceExhaustedError
        When the list's storage cannot be allocated.

    Notes
    -----
    Mirrors ``TensorListSplit`` (:ref:`tl-split`).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta.raw_ops import TensorListGetItem
    >>> h = TensorListSplit(tensor=np.arange(3), element_shape=-1, lengths=[1, 2])
    >>> TensorListGetItem(input_handle=h, index=1, element_shape=-1, element_dtype=np.int64)
    array([1, 2])
    """
    if _resource_tensor(tensor):  # TensorArray handles: a resource tensor, for which TF has no kernel
        raise _no_kernel("TensorListSplit", "shape_type=" + _shape_type_attr(element_shape))
    check_input(lengths, "TensorListSplit", "lengths")
    es = _shape_input(element_shape, owner="TensorListSplit")
    if es is not None and len(es) == 0:
        raise _messages.error("L53", element_shape=partial_str(es))
    t = _value(tensor, "tensor")
    if t.ndim == 0:
        raise _messages.error("L10", shape=shape_str(t.shape))
    if es is not None and not is_compatible(es[1:], t.shape[1:]):
        raise _messages.error("L54", shape=shape_str(t.shape), element_shape=partial_str(es))
    lens = _scalar_int(lengths, "lengths", np.int64)
    if lens.ndim != 1:
        raise _messages.error("P1", shape=shape_str(lens.shape))
    rows = t.shape[0]
    end = 0
    for length in lens.tolist():
        if length < 0:
            raise _messages.error("L55", length=length)
        if end + length > rows:
            raise _messages.error("L56", start=end, end=end + length, rows=rows)
        end += length
    if end < rows:
        raise _messages.error("L57", rows=rows, used=end)
    if is_fully_defined(es):
        for k, length in enumerate(lens.tolist()):
            if length != es[0]:
                raise _messages.error("NT-tl-split-shape", shape=shape_str((length, *t.shape[1:])), index=k, element_shape=partial_str(es))  # noqa: E501
    if _list_dtype(t.dtype) == VARIANT:
        starts = np.concatenate([[0], np.cumsum(lens)]).astype(np.int64)
        items = [t[starts[k] : starts[k + 1]].copy() for k in range(lens.size)]
        return ObjectStore(es, -1, items).handle()
    return NumericStore.from_pieces(t.dtype, es, -1, t, lens).handle()


# --------------------------------------------------------------------------- ZerosLike and AddN on lists
_TYPE_NAMES = {VariantZero: "int", TensorListHandle: "tensorflow::TensorList"}


def _variant_scalar(x, code, k=0):
    """Unwrap a 0-d object array; a larger one raises ``code`` (L60, L62)."""
    if isinstance(x, np.ndarray) and x.dtype == object:
        if x.ndim:
            raise _messages.error("L60") if code == "L60" else _messages.error("L62", index=k, shape=shape_str(x.shape))
        return x[()]
    return x


def _zeros_like_value(x):
    if isinstance(x, VariantZero):
        return x
    if not isinstance(x, TensorListHandle):
        raise _messages.error("L2", value=str(x))
    store = store_of(x)
    if store.dtype == RESOURCE:  # TF's ZerosLikeTensor has no zeros of a resource (unset elements stay unset)
        for v in store.items:
            if v is not _UNSET:
                raise _messages.error("L61", dtype="resource")
        return ObjectStore(store.element_shape, -1, list(store.items), RESOURCE).handle()
    if store.dtype == VARIANT:
        items = [v if v is _UNSET or not isinstance(v, (TensorListHandle, VariantZero)) else _zeros_like_value(v) for v in store.items]  # noqa: E501
        return ObjectStore(store.element_shape, -1, items).handle()
    return store.zeros_like().handle()


@_op("ZerosLike")
def zeros_like(x):
    """``ZerosLike`` of a list (TF's ``TensorListZerosLike``); see :func:`numba_ta.gradients.tensor_list_zeros_like`."""
    return _zeros_like_value(_variant_scalar(x, "L60"))


def _sum(va, vb):
    """Return the sum of two set elements of one list position (L66, L67)."""
    if va.shape != vb.shape:
        raise _messages.error("L66", shape=shape_str(va.shape), other_shape=shape_str(vb.shape))
    if va.dtype == np.bool_:
        raise _messages.error("L67", enum=10)
    out = np.empty_like(va)
    with np.errstate(all="ignore"):
        np.add(va, vb, out=out)
    return out


def _add_values(a, b):
    """Return ``a + b`` for two list values (TF's ``TensorListBinaryAdd``; L63 to L68)."""
    za, zb = isinstance(a, VariantZero), isinstance(b, VariantZero)
    if za or zb:
        if za and zb:
            return a
        raise _messages.error("L68", type_name=_TYPE_NAMES.get(type(a), type(a).__name__), other_type_name=_TYPE_NAMES.get(type(b), type(b).__name__))  # noqa: E501
    for v in (a, b):
        if not isinstance(v, TensorListHandle):
            raise _messages.error("L2", value=str(v))
    sa, sb = store_of(a), store_of(b)
    if sa.dtype != sb.dtype:
        raise _messages.error("L63", dtype=_name(sa.dtype), other_dtype=_name(sb.dtype))
    if not is_compatible(sa.element_shape, sb.element_shape):
        raise _messages.error("L64", element_shape=partial_str(sa.element_shape), other_shape=partial_str(sb.element_shape))  # noqa: E501
    n = sa.length
    if sb.length != n:
        raise _messages.error("L65", size=n, other_size=sb.length)
    es = merge(sa.element_shape, sb.element_shape)
    if sa.dtype == RESOURCE:  # a set element in only one list is kept; two set ones cannot be added (L66, L67)
        items = []
        for va, vb in zip(sa.items, sb.items, strict=True):
            if va is not _UNSET and vb is not _UNSET:
                shape_a = va.shape if isinstance(va, np.ndarray) else ()
                shape_b = vb.shape if isinstance(vb, np.ndarray) else ()
                if shape_a != shape_b:
                    raise _messages.error("L66", shape=shape_str(shape_a), other_shape=shape_str(shape_b))
                raise _messages.error("L67", enum=20)
            items.append(vb if va is _UNSET else va)
        _check_fit(sa, sb, es)
        return ObjectStore(es, -1, items, RESOURCE).handle()
    if sa.dtype == VARIANT:
        items = []
        for va, vb in zip(sa.items, sb.items, strict=True):
            items.append(vb if va is _UNSET else va if vb is _UNSET else _add_values(va, vb))
        _check_fit(sa, sb, es)
        return ObjectStore(es, -1, items).handle()
    ma, mb = sa.set_mask(), sb.set_mask()
    shapes_a, shapes_b = sa.set_shapes(), sb.set_shapes()
    if n and ma.all() and mb.all() and len(shapes_a) == 1 and shapes_a == shapes_b and sa.dtype != np.bool_:
        shape = shapes_a[0][1]
        both = _sum(sa.rows(np.arange(n), shape), sb.rows(np.arange(n), shape))
        return NumericStore.from_rows(sa.dtype, es, -1, n, np.arange(n), both).handle()
    out = new_store(sa.dtype, es, -1, n)
    for i in np.flatnonzero(ma | mb).tolist():
        if not ma[i]:
            v = sb.get(i)
        elif not mb[i]:
            v = sa.get(i)
        else:
            v = _sum(sa.get(i), sb.get(i))
        out.set(i, v, None)
    _check_fit(sa, sb, es)
    return out.handle()


def _check_fit(sa, sb, es):
    """NT-tl-add-shape: an element only one list has set must fit the sum's fully defined element shape.

    TensorFlow does not check it, and the sum then holds an element that its later ops read
    past (tl-crashes); numba_ta raises, after the step's other checks.
    """
    if not is_fully_defined(es):
        return
    ma, mb = sa.set_mask(), sb.set_mask()
    misfits = []
    for side, only in ((sa, ma & ~mb), (sb, mb & ~ma)):
        idx = np.flatnonzero(only)
        for pos, shape in side.set_shapes(idx):
            if not is_compatible(es, shape):
                misfits.append((int(idx[pos]), shape))
                break
    if misfits:
        i, shape = min(misfits)
        raise _messages.error("NT-tl-add-shape", index=i, shape=shape_str(shape), element_shape=partial_str(es))


@_op("AddN")
def add_n(inputs):
    """``AddN`` of lists (TF's ``TensorListBinaryAdd``, folded); see :func:`numba_ta.gradients.tensor_list_add_n`."""
    values = [_variant_scalar(x, "L62", k) for k, x in enumerate(inputs)]
    if not values:
        raise ValueError("AddN needs at least one input")
    a = values[0]
    for b in values[1:]:
        a = _add_values(a, b)
    return a
