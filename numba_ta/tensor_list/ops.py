"""TensorFlow 2's TensorList ops that make a list, inspect it or change one element.

EmptyTensorList, TensorListReserve, TensorListFromTensor, TensorListGetItem,
TensorListSetItem, TensorListPushBack(Batch), TensorListPopBack, TensorListLength,
TensorListElementShape and TensorListResize, with ``tf.raw_ops``' names, arguments and
results; the ops over many elements are :mod:`numba_ta.tensor_list.bulk_ops`', the
argument conversions they share :mod:`numba_ta.tensor_list.convert`'s.  All are exported
by :mod:`numba_ta.raw_ops`.  The contract is the section ``TensorList ops``
of the TensorFlow semantics reference (``docs/semantics.rst``, label
``tl-semantics``): each check below runs in the order written there, with its
message code (``L1`` to ``L71``, ``NT-tl-*``).  Every op checks everything before
it changes anything, and changes only a version of its input that no other handle
sees (:mod:`numba_ta.tensor_list.store`), so an op that raises changes nothing.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from numba_ta.core import header as H
from numba_ta.core.memory import arange, work_oom_error
from numba_ta.errors import OpError
from numba_ta.tensor_array.registry import TensorArrayHandle
from numba_ta.tensor_list.convert import (
    _check_dtype,
    _check_shape_input,
    _element_dtype,
    _infer,
    _item_dtype,
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
    _summarize,
    _value,
    _zeros,
)
from numba_ta.tensor_list.store import (
    _UNSET,
    RESOURCE,
    VARIANT,
    NumericStore,
    ObjectStore,
    TensorListHandle,
    new_store,
    store_of,
)
from numba_ta.tf import messages as _messages
from numba_ta.tf.dtypes import as_dtype
from numba_ta.tf.messages import op_error, partial_str, shape_str
from numba_ta.tf.opdefs import (
    INPUTS,
    TensorListPopBackResult,
    check_input,
)
from numba_ta.tf.tensor_shape import is_compatible, is_fully_defined, merge

__all__ = [
    "EmptyTensorList",
    "TensorListReserve",
    "TensorListFromTensor",
    "TensorListSetItem",
    "TensorListGetItem",
    "TensorListPushBack",
    "TensorListPushBackBatch",
    "TensorListPopBack",
    "TensorListLength",
    "TensorListElementShape",
    "TensorListResize",
]


def _op(name):
    """Name the op on its errors (TF's ``[Op:<name>]``) and unmask errors a signal hid."""

    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            try:
                return func(*args, **kwargs)
            except (OpError, SystemError) as e:
                raise op_error(e, name) from None

        return wrapper

    return decorate


# --------------------------------------------------------------------------- creating lists
@_op("EmptyTensorList")
def EmptyTensorList(  # TF's op name
    element_shape: Any, max_num_elements: Any, element_dtype: Any, name: str | None = None
) -> TensorListHandle:
    """Create an empty list (``tf.raw_ops.EmptyTensorList``).

    Parameters
    ----------
    element_shape : int or sequence of int, int32/int64 array_like
        The element shape as a shape tensor: ``-1`` for an unknown shape, else
        one entry per dimension (``-1``: unknown).  A ``TensorShape`` is taken
        too.
    max_num_elements : int
        ``TensorListPushBack``'s size limit; negative means none.
    element_dtype : numpy dtype, str, tf.DType or int
        The elements' dtype; ``object`` (or ``"variant"``, ``tf.variant``, 21)
        for a list of lists or other objects; ``"resource"`` (``tf.resource``,
        20) for a list of resources (:ref:`tensorlist-resources`).
    name : str, optional
        Ignored.

    Returns
    -------
    handle : TensorListHandle
        A list with no elements.

    Raises
    ------
    InvalidArgumentError
        ``max_num_elements`` not a scalar (L7); a bad ``element_shape`` (L5, L4,
        L6).
    TypeError
        ``element_dtype`` is not a dtype numba_ta stores.

    Notes
    -----
    Mirrors ``EmptyTensorList`` (:ref:`tl-create`).

    Examples
    --------
    >>> import numpy as np
    >>> h = EmptyTensorList(element_shape=[2], max_num_elements=-1, element_dtype=np.float32)
    >>> int(TensorListLength(input_handle=h))
    0
    """
    dt = _element_dtype(element_dtype)
    m = _scalar_int(max_num_elements, "max_num_elements", owner="EmptyTensorList")
    if m.ndim:
        raise _messages.error("L7", shape=shape_str(m.shape))
    es = _shape_input(element_shape, owner="EmptyTensorList")
    return new_store(dt, es, int(m)).handle()


@_op("TensorListReserve")
def TensorListReserve(
    element_shape: Any, num_elements: Any, element_dtype: Any, name: str | None = None
) -> TensorListHandle:
    """Create a list of ``num_elements`` unset elements (``tf.raw_ops.TensorListReserve``).

    Parameters
    ----------
    element_shape : int or sequence of int, int32/int64 array_like
        The element shape (see :func:`EmptyTensorList`).
    num_elements : int
        The length, ``>= 0``.
    element_dtype : numpy dtype, str, tf.DType or int
        The elements' dtype (see :func:`EmptyTensorList`).
    name : str, optional
        Ignored.

    Returns
    -------
    handle : TensorListHandle
        A list of ``num_elements`` unset elements, no size limit.

    Raises
    ------
    InvalidArgumentError
        A bad ``element_shape`` (L5, L4, L6); ``num_elements`` not a scalar
        (L8) or negative (L9).
    ResourceExhaustedError
        When the list's metadata cannot be allocated.

    Notes
    -----
    Mirrors ``TensorListReserve`` (:ref:`tl-create`).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta.raw_ops import TensorListStack
    >>> h = TensorListReserve(element_shape=[2], num_elements=3, element_dtype=np.float32)
    >>> TensorListStack(input_handle=h, element_shape=-1, element_dtype=np.float32).shape
    (3, 2)
    """
    dt = _element_dtype(element_dtype)
    es = _shape_input(element_shape, owner="TensorListReserve")
    n = _scalar_int(num_elements, "num_elements", owner="TensorListReserve")
    if n.ndim:
        raise _messages.error("L8", shape=shape_str(n.shape))
    if n < 0:
        raise _messages.error("L9", num_elements=int(n))
    return new_store(dt, es, -1, int(n)).handle()


def _from_rows(dt, es, length, at, t):
    """Return a new list of ``length`` elements with row ``k`` of ``t`` at ``at[k]``."""
    dt = _list_dtype(dt)
    if dt == VARIANT:
        items = [_UNSET] * length
        for k, i in enumerate(np.asarray(at).tolist()):
            items[i] = t[k] if t.ndim == 1 else t[k].copy()
        return ObjectStore(es, -1, items).handle()
    try:
        return NumericStore.from_rows(dt, es, -1, length, at, t).handle()
    except MemoryError as e:  # its work arrays of length elements: TF's OOM error
        raise work_oom_error(e, length) from None


@_op("TensorListFromTensor")
def TensorListFromTensor(tensor: Any, element_shape: Any, name: str | None = None) -> TensorListHandle:
    """Make a list of the rows of ``tensor`` (``tf.raw_ops.TensorListFromTensor``).

    Parameters
    ----------
    tensor : array_like, at least 1-d
        Row ``k`` becomes element ``k``; its dtype is the list's (an object
        array gives a list of variants).
    element_shape : int or sequence of int, int32/int64 array_like
        The list's element shape, compatible with ``tensor.shape[1:]``; kept
        as given.
    name : str, optional
        Ignored.

    Returns
    -------
    handle : TensorListHandle
        A list of ``tensor.shape[0]`` elements, no size limit.

    Raises
    ------
    InvalidArgumentError
        ``tensor`` of TensorArray handles (a resource tensor: L71, TF has no
        kernel for it); ``element_shape`` of rank 2 or more (L12) or otherwise
        bad (L4, L6); ``tensor`` a scalar (L10); ``element_shape`` not
        compatible with the rows (L11).
    ResourceExhaustedError
        When the list's storage cannot be allocated.

    Notes
    -----
    Mirrors ``TensorListFromTensor`` (:ref:`tl-create`).

    Examples
    --------
    >>> import numpy as np
    >>> h = TensorListFromTensor(tensor=np.arange(6.0).reshape(3, 2), element_shape=-1)
    >>> TensorListGetItem(input_handle=h, index=1, element_shape=-1, element_dtype=np.float64)
    array([2., 3.])
    """
    if _resource_tensor(tensor):  # TensorArray handles: a resource tensor, for which TF has no kernel
        raise _no_kernel("TensorListFromTensor", "shape_type=" + _shape_type_attr(element_shape))
    es = _shape_input(element_shape, "TensorListFromTensor", owner="TensorListFromTensor")
    t = _value(tensor, "tensor")
    if t.ndim == 0:
        raise _messages.error("L10", shape=shape_str(t.shape))
    if not is_compatible(es, t.shape[1:]):
        raise _messages.error("L11", element_shape=partial_str(es), shape=shape_str(t.shape[1:]))
    n = t.shape[0]
    return _from_rows(t.dtype, es, n, arange(n, np.int64), t)


# --------------------------------------------------------------------------- inspecting
@_op("TensorListLength")
def TensorListLength(input_handle: Any, name: str | None = None) -> np.int32:
    """Return the number of elements, set or unset (``tf.raw_ops.TensorListLength``).

    Parameters
    ----------
    input_handle : TensorListHandle
        The list.
    name : str, optional
        Ignored.

    Returns
    -------
    length : numpy.int32
        The length.

    Raises
    ------
    InvalidArgumentError
        ``input_handle`` not a scalar (L1) or not a list (L2).

    Notes
    -----
    Mirrors ``TensorListLength`` (:ref:`tl-inspect`).

    Examples
    --------
    >>> import numpy as np
    >>> h = TensorListReserve(element_shape=-1, num_elements=4, element_dtype=np.int32)
    >>> TensorListLength(input_handle=h)
    np.int32(4)
    """
    return np.int32(store_of(_list(input_handle, "TensorListLength")).length)


@_op("TensorListElementShape")
def TensorListElementShape(input_handle: Any, shape_type: Any, name: str | None = None) -> np.ndarray:
    """Return the list's element shape as a shape tensor (``tf.raw_ops.TensorListElementShape``).

    Parameters
    ----------
    input_handle : TensorListHandle
        The list.
    shape_type : numpy dtype, str, tf.DType or int
        ``int32`` or ``int64``: the result's dtype.
    name : str, optional
        Ignored.

    Returns
    -------
    shape : ndarray of ``shape_type``
        ``-1`` (0-d) for an unknown rank, else one entry per dimension, ``-1``
        for an unknown one.  In an int32 result, a dimension beyond int32
        keeps its low 32 bits, as in TF.

    Raises
    ------
    InvalidArgumentError
        ``input_handle`` not a scalar (L1) or not a list (L2).
    TypeError
        ``shape_type`` is neither int32 nor int64.

    Notes
    -----
    Mirrors ``TensorListElementShape`` (:ref:`tl-inspect`).

    Examples
    --------
    >>> import numpy as np
    >>> h = EmptyTensorList(element_shape=[-1, 3], max_num_elements=-1, element_dtype=np.float32)
    >>> TensorListElementShape(input_handle=h, shape_type=np.int32)
    array([-1,  3], dtype=int32)
    """
    st_type = _shape_type(shape_type)
    es = store_of(_list(input_handle, "TensorListElementShape")).element_shape
    if es is None:
        return np.array(-1, st_type)
    return np.array([-1 if d is None else d for d in es], np.int64).astype(st_type)


def _shape_type(shape_type, argname="shape_type"):
    dt = as_dtype(shape_type, argname)
    if dt not in (np.dtype(np.int32), np.dtype(np.int64)):
        raise TypeError(
            f"Value for attr '{argname}' of {dt.name} is not in the list of allowed values: int32, int64"
        )
    return dt


# --------------------------------------------------------------------------- one element
def TensorListGetItem(
    input_handle: Any, index: Any, element_shape: Any, element_dtype: Any, name: str | None = None
) -> Any:
    """Return element ``index`` (``tf.raw_ops.TensorListGetItem``).

    Parameters
    ----------
    input_handle : TensorListHandle
        The list.
    index : int
        The element; an array of one element is taken too.
    element_shape : int or sequence of int, int32/int64 array_like
        Used only for an unset element: merged with the list's element shape
        (and, if still not fully defined, with the shapes of the set elements)
        to give the shape of its zeros.
    element_dtype : numpy dtype, str, tf.DType or int
        Must be the list's dtype.
    name : str, optional
        Ignored.

    Returns
    -------
    item : ndarray or object
        A copy of the element; zeros for an unset element.  For a list of
        variants, the element itself (the variant zero when unset).

    Raises
    ------
    InvalidArgumentError
        L1, L2; dtype mismatch (L3); ``index`` not of one element
        (``NT-tl-index``, where TF aborts); out of range (L13); a bad
        ``element_shape`` (L5, L4, L6), a shape merge error, or an unset
        element whose shape is not fully defined (L14).
    NotFoundError
        ``element_dtype`` resource (L70): TF has no kernel for it.
    ResourceExhaustedError
        When the zeros cannot be allocated.

    Notes
    -----
    Mirrors ``TensorListGetItem`` (:ref:`tl-getitem`).  The list is not changed.

    Examples
    --------
    >>> import numpy as np
    >>> h = TensorListReserve(element_shape=[2], num_elements=2, element_dtype=np.float32)
    >>> TensorListGetItem(input_handle=h, index=0, element_shape=-1, element_dtype=np.float32)
    array([0., 0.], dtype=float32)
    """
    try:
        dt = _element_dtype(element_dtype)
        if dt is RESOURCE:  # no kernel: TF's device placement fails before any check
            raise _no_device("TensorListGetItem", "Tshape=" + _shape_type_attr(element_shape))
        h = input_handle if type(input_handle) is TensorListHandle else _list(input_handle, "TensorListGetItem")
        if type(element_shape) is not int:
            _check_shape_input(element_shape, "TensorListGetItem")
        store = h._store
        if h._v != store.base + len(store.log):  # (store.ver, inline)
            store = store.materialize(h)
        _check_dtype(dt, store)
        if type(index) is int and -(2**31) <= index < 2**31:
            i = index
        else:
            idx = _scalar_int(index, "index", owner="TensorListGetItem")
            if idx.size != 1:
                raise _messages.error("NT-tl-index", shape=shape_str(idx.shape))
            i = int(idx.reshape(-1)[0])
        n = store.length
        if i < 0 or i >= n:
            raise _messages.error("L13", index=i, size=n)
        if store.is_set(i):
            return store.get(i)
        m = merge(_shape_input(element_shape), store.element_shape)
        if not is_fully_defined(m):
            m = _infer(m, store)
        if not is_fully_defined(m):
            raise _messages.error("L14", element_shape=partial_str(m))
        return _zeros(store.dtype, m)
    except (OpError, SystemError) as e:
        raise op_error(e, "TensorListGetItem") from None


def TensorListSetItem(
    input_handle: Any, index: Any, item: Any, resize_if_index_out_of_bounds: bool = False, name: str | None = None
) -> TensorListHandle:
    """Return the list with element ``index`` set to ``item`` (``tf.raw_ops.TensorListSetItem``).

    Parameters
    ----------
    input_handle : TensorListHandle
        The list (unchanged).
    index : int
        The element, a scalar.
    item : array_like or object
        The new element, of the list's dtype and compatible with its element
        shape; for a list of resources any object that is not a number, a
        list or the variant zero (held by reference).
    resize_if_index_out_of_bounds : bool, optional
        Grow the list to ``index + 1`` elements (the new ones unset) when
        ``index`` is past its end (default False).
    name : str, optional
        Ignored.

    Returns
    -------
    output_handle : TensorListHandle
        The new list.

    Raises
    ------
    InvalidArgumentError
        L1, L2; dtype mismatch (L3); ``index`` not a scalar (L17); ``item``
        not compatible with the element shape (L16); out of range (L15, also
        for a negative index with resize, where TF crashes).
    ResourceExhaustedError
        When the storage cannot grow.

    Notes
    -----
    Mirrors ``TensorListSetItem`` (:ref:`tl-setitem`).  Costs O(1) (amortized)
    when ``input_handle`` is not used again (:ref:`tensorlist`).

    Examples
    --------
    >>> import numpy as np
    >>> a = TensorListReserve(element_shape=-1, num_elements=2, element_dtype=np.int32)
    >>> b = TensorListSetItem(input_handle=a, index=1, item=[7, 8])
    >>> TensorListGetItem(input_handle=b, index=1, element_shape=-1, element_dtype=np.int32)
    array([7, 8], dtype=int32)
    """
    h, v, i = input_handle, item, index
    if type(h) is TensorListHandle and type(v) is np.ndarray and type(i) is int:
        # the common case, every check at once (as TensorListPushBack's): a fresh dense row in range
        store = h._store
        if h._v == store.base + len(store.log) and v.dtype is store.dtype and v.shape == store._fshape:
            hdr = store._h
            n = hdr[H.SIZE]
            if (
                0 <= i < store._fn
                and (i < n or resize_if_index_out_of_bounds)
                and hdr[H.GEN] == store._gen
                and not store._stv[i]
            ):
                return store.set_fresh(i, n, v)
    try:
        h = input_handle if type(input_handle) is TensorListHandle else _list(input_handle, "TensorListSetItem")
        v = item if type(item) is np.ndarray and item.dtype.isnative else _value(item, "item")
        store = h._store
        if h._v != store.base + len(store.log):  # (store.ver, inline)
            store = store.materialize(h)
        if v.dtype is not store.dtype or v.dtype is VARIANT:  # (numpy's builtin dtypes are one object each)
            _check_dtype(_item_dtype(v, store.dtype), store)
        if type(index) is int and -(2**31) <= index < 2**31:
            i = index
        else:
            idx = _scalar_int(index, "index", owner="TensorListSetItem")
            if idx.ndim:
                raise _messages.error("L17", shape=shape_str(idx.shape), values=_summarize(idx))
            i = int(idx)
        if v.shape != store.ok_shape:
            if not is_compatible(store.element_shape, v.shape):
                raise _messages.error("L16", shape=shape_str(v.shape), element_shape=partial_str(store.element_shape))
            store.ok_shape = v.shape
        n = store.length
        if i < 0 or (i >= n and not resize_if_index_out_of_bounds):
            raise _messages.error("L15", index=i, size=n)
        return store.set(i, v if type(store) is NumericStore else _store(v, store.dtype))
    except (OpError, SystemError) as e:
        raise op_error(e, "TensorListSetItem") from None


def TensorListPushBack(input_handle: Any, tensor: Any, name: str | None = None) -> TensorListHandle:
    """Return the list with ``tensor`` appended (``tf.raw_ops.TensorListPushBack``).

    Parameters
    ----------
    input_handle : TensorListHandle
        The list (unchanged).
    tensor : array_like or object
        The new last element, of the list's dtype and compatible with its
        element shape (for a list of resources, as ``item`` of
        :func:`TensorListSetItem`).
    name : str, optional
        Ignored.

    Returns
    -------
    output_handle : TensorListHandle
        The new list, one element longer.

    Raises
    ------
    InvalidArgumentError
        L1, L2; ``tensor`` not compatible with the element shape (L18); dtype
        mismatch (L3); the list has ``max_num_elements`` elements (L19).
    ResourceExhaustedError
        When the storage cannot grow.

    Notes
    -----
    Mirrors ``TensorListPushBack`` (:ref:`tl-pushback`).  Costs O(1)
    (amortized) when ``input_handle`` is not used again (:ref:`tensorlist`).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta.raw_ops import TensorListStack
    >>> h = EmptyTensorList(element_shape=-1, max_num_elements=-1, element_dtype=np.float32)
    >>> for k in range(3):
    ...     h = TensorListPushBack(input_handle=h, tensor=np.full(2, k, np.float32))
    >>> TensorListStack(input_handle=h, element_shape=-1, element_dtype=np.float32)
    array([[0., 0.],
           [1., 1.],
           [2., 2.]], dtype=float32)
    """
    h, v = input_handle, tensor
    if type(h) is TensorListHandle and type(v) is np.ndarray:
        # the common case, every check at once: the newest version, a value of the dtype and of the
        # armed shape (compatible: NumericStore._arm), a fresh dense row, room under max_num_elements
        store = h._store
        if h._v == store.base + len(store.log) and v.dtype is store.dtype and v.shape == store._fshape:
            hdr = store._h
            n = hdr[H.SIZE]
            m = store.max_num_elements
            if n < store._fn and hdr[H.GEN] == store._gen and not store._stv[n] and (m < 0 or n < m):
                return store.set_fresh(n, n, v)
    try:
        h = input_handle if type(input_handle) is TensorListHandle else _list(input_handle, "TensorListPushBack")
        v = tensor if type(tensor) is np.ndarray and tensor.dtype.isnative else _value(tensor, "tensor")
        store = h._store
        if h._v != store.base + len(store.log):  # (store.ver, inline)
            store = store.materialize(h)
        if v.shape != store.ok_shape:
            if not is_compatible(store.element_shape, v.shape):
                raise _messages.error("L18", shape=shape_str(v.shape), element_shape=partial_str(store.element_shape))
            store.ok_shape = v.shape
        if v.dtype is not store.dtype or v.dtype is VARIANT:  # (numpy's builtin dtypes are one object each)
            _check_dtype(_item_dtype(v, store.dtype), store)
        n = store.length
        m = store.max_num_elements
        if 0 <= m <= n:
            raise _messages.error("L19", size=n, max_num_elements=m)
        return store.set(n, v if type(store) is NumericStore else _store(v, store.dtype))
    except (OpError, SystemError) as e:
        raise op_error(e, "TensorListPushBack") from None


def _handles(value, argname, op):
    """Return a vector (or any array) of list inputs as an object ndarray (a TensorFlow tensor: TF's dtype check)."""
    check_input(value, op, argname)
    if isinstance(value, TensorArrayHandle):  # an array where lists belong: TF's resource tensor
        k = [a for a, _ in INPUTS[op]].index(argname)
        raise _messages.error("NT-input-dtype", op=op, index=k, expected="variant", dtype="resource")
    if isinstance(value, np.ndarray):
        return value
    if isinstance(value, (list, tuple)):
        out = np.empty(len(value), object)
        for k, v in enumerate(value):
            out[k] = v
        return out
    out = np.empty((), object)
    out[()] = value
    return out


@_op("TensorListPushBackBatch")
def TensorListPushBackBatch(input_handles: Any, tensor: Any, name: str | None = None) -> np.ndarray:
    """Push row ``b`` of ``tensor`` to list ``b`` of ``input_handles`` (``tf.raw_ops.TensorListPushBackBatch``).

    Parameters
    ----------
    input_handles : (B,) object ndarray or sequence of TensorListHandle
        The lists (unchanged).
    tensor : array_like of shape (B, ...)
        The rows to push.
    name : str, optional
        Ignored.

    Returns
    -------
    output_handles : (B,) object ndarray of TensorListHandle
        The new lists.

    Raises
    ------
    InvalidArgumentError
        TensorArray handles, or objects pushed to lists of resources (L71, TF
        has no kernel for a resource tensor); ``tensor`` a scalar (L22); ``input_handles`` not a
        vector (L23); the numbers of rows and lists differ (L24); list by list:
        not a list (L25), a row not compatible with its element shape (L26),
        another dtype (L27).
    ResourceExhaustedError
        When a list's storage cannot grow.

    Notes
    -----
    Mirrors ``TensorListPushBackBatch`` (:ref:`tl-pushback`); does not check
    ``max_num_elements``, as TF does not.

    Examples
    --------
    >>> import numpy as np
    >>> e = EmptyTensorList(element_shape=-1, max_num_elements=-1, element_dtype=np.int32)
    >>> out = TensorListPushBackBatch(input_handles=[e, e], tensor=[[1], [2]])
    >>> [int(TensorListLength(input_handle=h)) for h in out]
    [1, 1]
    """
    if _resource_tensor(tensor):  # TensorArray handles: a resource tensor, for which TF has no kernel
        raise _no_kernel("TensorListPushBackBatch")
    t = _value(tensor, "tensor")
    hs = _handles(input_handles, "input_handles", "TensorListPushBackBatch")
    if _opaque(t):  # opaque objects pushed to lists of resources: a resource tensor, whose kernel TF does not have
        for x in hs.reshape(-1).tolist():
            if isinstance(x, TensorListHandle) and x.element_dtype == RESOURCE:
                raise _no_kernel("TensorListPushBackBatch")
    if t.ndim == 0:
        raise _messages.error("L22", shape=shape_str(t.shape))
    if hs.ndim != 1:
        raise _messages.error("L23", shape=shape_str(hs.shape))
    if t.shape[0] != hs.shape[0]:
        raise _messages.error("L24", rows=t.shape[0], size=hs.shape[0])
    row = t.shape[1:]
    for b, x in enumerate(hs.tolist()):
        if not isinstance(x, TensorListHandle):
            raise _messages.error("L25", index=b, value=str(x))
        es = x.element_shape
        if not is_compatible(es, row):
            raise _messages.error("L26", index=b, shape=shape_str(row), element_shape=partial_str(es))
        if x.element_dtype != t.dtype:
            raise _messages.error("L27", index=b, op_dtype=_name(t.dtype), list_dtype=_name(x.element_dtype))
    out = np.empty(hs.shape[0], object)
    for b, x in enumerate(hs.tolist()):
        store = store_of(x)
        out[b] = store.set(store.length, _store(t[b], store.dtype))
    return out


def TensorListPopBack(
    input_handle: Any, element_shape: Any, element_dtype: Any, name: str | None = None
) -> TensorListPopBackResult:
    """Remove the last element (``tf.raw_ops.TensorListPopBack``).

    Parameters
    ----------
    input_handle : TensorListHandle
        The list (unchanged).
    element_shape : int or sequence of int, int32 array_like
        Used only when the last element is unset: merged with the list's
        element shape to give its zeros' shape.
    element_dtype : numpy dtype, str, tf.DType or int
        Must be the list's dtype.
    name : str, optional
        Ignored.

    Returns
    -------
    output_handle : TensorListHandle
        The list without its last element.
    tensor : ndarray or object
        The last element (zeros when unset; the object itself for a list of
        variants).

    Raises
    ------
    InvalidArgumentError
        L1, L2; dtype mismatch (L3); an empty list (L20); for an unset last
        element, a bad ``element_shape`` (L5, L4, L6), a merge error, or a
        shape that is not fully defined (L21).
    NotFoundError
        ``element_dtype`` resource (L70): TF has no kernel for it.
    ResourceExhaustedError
        When the zeros cannot be allocated.

    Notes
    -----
    Mirrors ``TensorListPopBack`` (:ref:`tl-popback`).  Costs O(1) when
    ``input_handle`` is not used again.

    Examples
    --------
    >>> import numpy as np
    >>> h = TensorListFromTensor(tensor=np.array([1, 2, 3], np.int32), element_shape=-1)
    >>> h, last = TensorListPopBack(input_handle=h, element_shape=-1, element_dtype=np.int32)
    >>> last, TensorListLength(input_handle=h)
    (array(3, dtype=int32), np.int32(2))
    """
    try:
        dt = _element_dtype(element_dtype)
        if dt is RESOURCE:  # no kernel: TF's device placement fails before any check
            raise _no_device("TensorListPopBack")
        h = input_handle if type(input_handle) is TensorListHandle else _list(input_handle, "TensorListPopBack")
        if type(element_shape) is not int:
            _check_shape_input(element_shape, "TensorListPopBack")
        store = h._store
        if h._v != store.base + len(store.log):  # (store.ver, inline)
            store = store.materialize(h)
        _check_dtype(dt, store)
        n = store.length
        if n == 0:
            raise _messages.error("L20")
        if store.is_set(n - 1):
            value = store.get(n - 1)
        else:
            m = merge(_shape_input(element_shape), store.element_shape)
            if not is_fully_defined(m):
                raise _messages.error("L21", element_shape=partial_str(m))
            value = _zeros(store.dtype, m)
        return TensorListPopBackResult(store.resize(n - 1), value)
    except (OpError, SystemError) as e:
        raise op_error(e, "TensorListPopBack") from None


@_op("TensorListResize")
def TensorListResize(input_handle: Any, size: Any, name: str | None = None) -> TensorListHandle:
    """Return the list cut or extended to ``size`` elements (``tf.raw_ops.TensorListResize``).

    Parameters
    ----------
    input_handle : TensorListHandle
        The list (unchanged).
    size : int
        The new length, ``>= 0``; added elements are unset.
    name : str, optional
        Ignored.

    Returns
    -------
    output_handle : TensorListHandle
        The new list (same element shape and ``max_num_elements``, which is
        not checked).

    Raises
    ------
    InvalidArgumentError
        L1, L2; ``size`` not a scalar (L58) or negative (L59).
    ResourceExhaustedError
        When the metadata cannot grow.

    Notes
    -----
    Mirrors ``TensorListResize`` (:ref:`tl-resize`).

    Examples
    --------
    >>> import numpy as np
    >>> h = TensorListFromTensor(tensor=np.zeros((4, 2)), element_shape=-1)
    >>> TensorListLength(input_handle=TensorListResize(input_handle=h, size=1))
    np.int32(1)
    """
    store = store_of(_list(input_handle, "TensorListResize"))
    n = _scalar_int(size, "size", owner="TensorListResize")
    if n.ndim:
        raise _messages.error("L58")
    if n < 0:
        raise _messages.error("L59", size=int(n))
    return store.resize(int(n))
