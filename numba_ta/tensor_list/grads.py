"""TF's gradient rules of the differentiable TensorList ops, eager, for hand-written backward passes.

One function per op for which ``tensorflow/python/ops/list_ops.py`` registers a
gradient, named ``tensor_list_<op in snake case>_grad``; each computes what
TF's registered function computes, with the list ops of
:mod:`numba_ta.raw_ops` (the gradient of ``PushBack`` pops, that of ``Stack`` is
a ``FromTensor`` ...), and returns what it returns: one entry per forward
input, ``None`` where TF returns ``None``.  (TF's rule of ``TensorListConcat``
returns its single gradient bare; here it is a 1-tuple like every other.)

Arguments, in this order:

1. the forward op's inputs, in ``tf.raw_ops``' order and with its names (the
   ones TF's rule does not read are accepted and ignored);
2. the forward op's outputs TF's rule reads (``op.outputs``), with the names
   of ``tf.raw_ops``' results: ``output_handle`` and ``tensor`` of
   ``TensorListPopBack``, ``output_handle`` of ``TensorListFromTensor``,
   ``lengths`` of ``TensorListConcat``/``TensorListConcatV2``;
3. the upstream gradients, one per forward output: ``dlist`` for a list output
   (a :class:`~numba_ta.TensorListHandle` or ``None``), ``dtensor``, ``ditem``,
   ``delement``, ``dlengths`` for a tensor output (array_like or ``None``);
4. keyword-only, the forward attributes TF's rule reads
   (``resize_if_index_out_of_bounds`` of ``TensorListSetItem``).

The ``element_dtype`` of a gradient list, and the dtype of a gradient read
from one, is where TF takes it from: the upstream gradient's dtype (``GetItem``,
``Gather``, ``PopBack``), or the forward tensor's (the other rules).

``None`` upstream gradients: TF calls no gradient function for an op none of
whose outputs has a gradient, so a rule given only ``None`` returns ``None``
for every input.  The rules of ``PopBack`` and ``FromTensor`` take a ``None``
list gradient as TF's do (an empty list), and that of ``PopBack`` a ``None``
element gradient (zeros).  In eager mode TF's tape never passes ``None`` for
an output that is not used: it passes ``ZerosLike`` of it
(:func:`~numba_ta.gradients.tensor_list_zeros_like` for a list, zeros for a
tensor); where a list gets gradients from several ops, sum them with
:func:`~numba_ta.gradients.tensor_list_add_n`.

Ops with no rule: ``TensorListConcatLists``, ``TensorListElementShape``,
``TensorListLength`` and ``TensorListPushBackBatch`` are registered as not
differentiable; ``EmptyTensorList`` and ``TensorListReserve`` (whose inputs
are shapes and sizes) have no gradient registered.

Source: ``tensorflow/python/ops/list_ops.py`` (TensorFlow semantics reference:
:ref:`tl-gradients`).

Examples
--------
``loss = sum(stack(l) * w)`` with ``l`` the rows of ``x`` and its last row
popped first: the rules run in the reverse order of the forward ops.

>>> import numpy as np
>>> from numba_ta import raw_ops
>>> x = np.array([[1., 2.], [3., 4.], [5., 6.]], np.float32)
>>> w = np.array([[1., 10.], [100., 1000.]], np.float32)
>>> l0 = raw_ops.TensorListFromTensor(tensor=x, element_shape=[2])
>>> l1, last = raw_ops.TensorListPopBack(input_handle=l0, element_shape=-1, element_dtype=np.float32)
>>> s = raw_ops.TensorListStack(input_handle=l1, element_shape=-1, element_dtype=np.float32)
>>> dl1, _ = tensor_list_stack_grad(l1, -1, w)
>>> dl0, _ = tensor_list_pop_back_grad(l0, -1, l1, last, dl1, None)
>>> dx, _ = tensor_list_from_tensor_grad(x, [2], l0, dl0)
>>> dx
array([[   1.,   10.],
       [ 100., 1000.],
       [   0.,    0.]], dtype=float32)
"""

from __future__ import annotations

from typing import Any

import numpy as np

from numba_ta import raw_ops
from numba_ta.tensor_list import bulk_ops as _bulk_ops
from numba_ta.tensor_list import convert as _convert

__all__ = [
    "tensor_list_push_back_grad",
    "tensor_list_pop_back_grad",
    "tensor_list_stack_grad",
    "tensor_list_concat_grad",
    "tensor_list_concat_v2_grad",
    "tensor_list_split_grad",
    "tensor_list_from_tensor_grad",
    "tensor_list_get_item_grad",
    "tensor_list_set_item_grad",
    "tensor_list_resize_grad",
    "tensor_list_gather_grad",
    "tensor_list_scatter_grad",
    "tensor_list_scatter_v2_grad",
    "tensor_list_scatter_into_existing_list_grad",
]


# --------------------------------------------------------------------------- helpers
def _tensor(value: Any, argname: str) -> np.ndarray:
    """Convert a tensor argument as the forward op converted it (an object array for a variant)."""
    return _convert._value(value, argname)


def shape_at(t: np.ndarray) -> np.ndarray:
    """``tf.shape(t)``: the shape as an int32 vector."""
    return np.array(t.shape, np.int32)


def _rows_shape(t: np.ndarray) -> np.ndarray:
    """``tf.slice(tf.shape(t), [1], [-1])``: the shape after the first dimension, int32."""
    return np.array(t.shape[1:], np.int32)


def _element_shape(handle: Any) -> np.ndarray:
    """``TensorListElementShape(handle, shape_type=int32)``."""
    return raw_ops.TensorListElementShape(input_handle=handle, shape_type=np.int32)


def _zeros_like(t: np.ndarray) -> Any:
    """``tf.zeros_like(t)``; of a variant, ``ZerosLike`` of the list it holds (L60 if not a scalar)."""
    if t.dtype == object:
        return _bulk_ops.zeros_like(t)
    return np.zeros_like(t)


# --------------------------------------------------------------------------- one element
def tensor_list_push_back_grad(input_handle: Any, tensor: Any, dlist: Any) -> tuple[Any, Any]:
    """Gradient of ``TensorListPushBack``: pop the last element off the list gradient.

    Parameters
    ----------
    input_handle : TensorListHandle
        The forward op's list (unused, as in TF).
    tensor : array_like
        The forward op's pushed tensor: its shape and dtype are those of the
        popped gradient.
    dlist : TensorListHandle or None
        Upstream gradient of the forward op's ``output_handle``.

    Returns
    -------
    tuple
        ``(dinput_handle, dtensor)``: the outputs of ``TensorListPopBack(dlist,
        element_shape=shape(tensor), element_dtype=tensor's dtype)``, the list
        gradient without its last element and that element (zeros of
        ``tensor``'s shape when it is unset).  ``(None, None)`` when ``dlist``
        is ``None``.

    Raises
    ------
    InvalidArgumentError
        The errors of ``TensorListPopBack``: an empty ``dlist`` (L20), a
        ``dlist`` of another dtype (L3) ...

    Notes
    -----
    Mirrors the gradient TF registers for TensorListPushBack (list_ops.py).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> dlist = raw_ops.TensorListFromTensor(tensor=np.array([[1., 2.], [3., 4.]]), element_shape=-1)
    >>> dl, dt = tensor_list_push_back_grad(None, np.zeros(2), dlist)
    >>> len(dl), dt
    (1, array([3., 4.]))
    """
    if dlist is None:
        return None, None
    t = _tensor(tensor, "tensor")
    out = raw_ops.TensorListPopBack(input_handle=dlist, element_shape=shape_at(t), element_dtype=t.dtype)
    return out[0], out[1]


def tensor_list_pop_back_grad(
    input_handle: Any, element_shape: Any, output_handle: Any, tensor: Any, dlist: Any, delement: Any
) -> tuple[Any, None]:
    """Gradient of ``TensorListPopBack``: push the element's gradient back onto the list gradient.

    Parameters
    ----------
    input_handle : TensorListHandle
        The forward op's list (unused, as in TF).
    element_shape : array_like
        The forward op's ``element_shape`` (unused).
    output_handle : TensorListHandle
        The forward op's list output; read only when ``dlist`` is ``None``.
    tensor : array_like
        The forward op's popped element; read only when ``delement`` is
        ``None``.
    dlist : TensorListHandle or None
        Upstream gradient of ``output_handle``; ``None`` stands for an empty
        list of ``output_handle``'s element shape and ``delement``'s dtype.
    delement : array_like or None
        Upstream gradient of ``tensor``; ``None`` stands for zeros like
        ``tensor``.

    Returns
    -------
    tuple
        ``(TensorListPushBack(dlist, delement), None)``: the gradients of
        ``input_handle`` and ``element_shape``.  ``(None, None)`` when both
        upstream gradients are ``None``.

    Raises
    ------
    InvalidArgumentError
        The errors of ``TensorListPushBack``: ``delement`` of another dtype or
        shape than ``dlist``'s (L3, L18) ...

    Notes
    -----
    Mirrors the gradient TF registers for TensorListPopBack (list_ops.py).
    ``dlist`` must have ``output_handle``'s length for the result to be the
    gradient of ``input_handle``; TF's eager tape passes
    ``ZerosLike(output_handle)`` for a list output that is not used, which
    for the last pop of a list is also empty.

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> l0 = raw_ops.TensorListFromTensor(tensor=np.array([1., 2.], np.float32), element_shape=[])
    >>> l1, last = raw_ops.TensorListPopBack(input_handle=l0, element_shape=-1, element_dtype=np.float32)
    >>> dl0, _ = tensor_list_pop_back_grad(l0, -1, l1, last, None, np.float32(5))
    >>> raw_ops.TensorListStack(input_handle=dl0, element_shape=-1, element_dtype=np.float32)
    array([5.], dtype=float32)
    """
    if dlist is None and delement is None:
        return None, None
    if dlist is None:
        dt = _tensor(delement, "delement").dtype
        dlist = raw_ops.EmptyTensorList(
            element_shape=_element_shape(output_handle), max_num_elements=-1, element_dtype=dt
        )
    if delement is None:
        delement = _zeros_like(_tensor(tensor, "tensor"))
    return raw_ops.TensorListPushBack(input_handle=dlist, tensor=delement), None


def tensor_list_get_item_grad(input_handle: Any, index: Any, element_shape: Any, ditem: Any) -> tuple[Any, None, None]:
    """Gradient of ``TensorListGetItem``: a list of the forward list's length with only ``index`` set.

    Parameters
    ----------
    input_handle : TensorListHandle
        The forward op's list: its length and element shape are the
        gradient list's.
    index : int
        The forward op's index.
    element_shape : array_like
        The forward op's ``element_shape`` (unused).
    ditem : array_like or None
        Upstream gradient of the item read.

    Returns
    -------
    tuple
        ``(dlist, None, None)``: ``dlist`` is ``TensorListReserve`` of
        ``input_handle``'s element shape and length, of ``ditem``'s dtype, with
        ``ditem`` set at ``index`` (the other elements unset).  All ``None``
        when ``ditem`` is ``None``.

    Raises
    ------
    InvalidArgumentError
        The errors of ``TensorListSetItem``: ``ditem`` not compatible with
        the element shape (L16) ...

    Notes
    -----
    Mirrors the gradient TF registers for TensorListGetItem (list_ops.py).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> l = raw_ops.TensorListFromTensor(tensor=np.zeros((3, 2), np.float32), element_shape=[2])
    >>> dl, _, _ = tensor_list_get_item_grad(l, 1, -1, np.ones(2, np.float32))
    >>> raw_ops.TensorListStack(input_handle=dl, element_shape=-1, element_dtype=np.float32)
    array([[0., 0.],
           [1., 1.],
           [0., 0.]], dtype=float32)
    """
    if ditem is None:
        return None, None, None
    d = _tensor(ditem, "ditem")
    dlist = raw_ops.TensorListReserve(
        element_shape=_element_shape(input_handle),
        num_elements=raw_ops.TensorListLength(input_handle=input_handle),
        element_dtype=d.dtype,
    )
    return raw_ops.TensorListSetItem(input_handle=dlist, index=index, item=d), None, None


def tensor_list_set_item_grad(
    input_handle: Any, index: Any, item: Any, dlist: Any, *, resize_if_index_out_of_bounds: bool = False
) -> tuple[Any, None, Any]:
    """Gradient of ``TensorListSetItem``: read the item's gradient, zero it in the list gradient.

    Parameters
    ----------
    input_handle : TensorListHandle
        The forward op's list; its length is read when
        ``resize_if_index_out_of_bounds``.
    index : int
        The forward op's index.
    item : array_like
        The forward op's item: its shape and dtype are those of its gradient.
    dlist : TensorListHandle or None
        Upstream gradient of the forward op's ``output_handle``.
    resize_if_index_out_of_bounds : bool, optional
        The forward op's attribute (default False).

    Returns
    -------
    tuple
        ``(dinput_handle, None, ditem)``: ``dinput_handle`` is ``dlist`` with
        zeros like ``item`` set at ``index`` (then resized to
        ``input_handle``'s length when ``resize_if_index_out_of_bounds``);
        ``ditem`` is ``TensorListGetItem(dlist, index,
        element_shape=shape(item), element_dtype=item's dtype)``.  All ``None``
        when ``dlist`` is ``None``.

    Raises
    ------
    InvalidArgumentError
        The errors of ``TensorListSetItem`` on ``dlist`` (first), then of
        ``TensorListGetItem`` and ``TensorListResize``.

    Notes
    -----
    Mirrors the gradient TF registers for TensorListSetItem (list_ops.py).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> dlist = raw_ops.TensorListFromTensor(tensor=np.array([1., 2., 3.]), element_shape=[])
    >>> dl, _, ditem = tensor_list_set_item_grad(None, 1, np.float64(0.5), dlist)
    >>> ditem, raw_ops.TensorListStack(input_handle=dl, element_shape=-1, element_dtype=np.float64)
    (array(2.), array([1., 0., 3.]))
    """
    if dlist is None:
        return None, None, None
    it = _tensor(item, "item")
    list_grad = raw_ops.TensorListSetItem(input_handle=dlist, index=index, item=_zeros_like(it))
    item_grad = raw_ops.TensorListGetItem(
        input_handle=dlist, index=index, element_shape=shape_at(it), element_dtype=it.dtype
    )
    if resize_if_index_out_of_bounds:
        size = raw_ops.TensorListLength(input_handle=input_handle)
        list_grad = raw_ops.TensorListResize(input_handle=list_grad, size=size)
    return list_grad, None, item_grad


def tensor_list_resize_grad(input_handle: Any, size: Any, dlist: Any) -> tuple[Any, None]:
    """Gradient of ``TensorListResize``: resize the list gradient back to the forward list's length.

    Parameters
    ----------
    input_handle : TensorListHandle
        The forward op's list (its length is read).
    size : int
        The forward op's size (unused).
    dlist : TensorListHandle or None
        Upstream gradient of the forward op's ``output_handle``.

    Returns
    -------
    tuple
        ``(TensorListResize(dlist, length of input_handle), None)``; all
        ``None`` when ``dlist`` is ``None``.  Elements added back are unset.

    Raises
    ------
    InvalidArgumentError
        The errors of ``TensorListResize`` and ``TensorListLength`` (L1, L2).

    Notes
    -----
    Mirrors the gradient TF registers for TensorListResize (list_ops.py).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> l = raw_ops.TensorListFromTensor(tensor=np.zeros(3), element_shape=[])
    >>> dlist = raw_ops.TensorListFromTensor(tensor=np.array([7.0]), element_shape=[])
    >>> dl, _ = tensor_list_resize_grad(l, 1, dlist)
    >>> raw_ops.TensorListStack(input_handle=dl, element_shape=-1, element_dtype=np.float64)
    array([7., 0., 0.])
    """
    if dlist is None:
        return None, None
    n = raw_ops.TensorListLength(input_handle=input_handle)
    return raw_ops.TensorListResize(input_handle=dlist, size=n), None


# --------------------------------------------------------------------------- many elements
def tensor_list_stack_grad(input_handle: Any, element_shape: Any, dtensor: Any) -> tuple[Any, None]:
    """Gradient of ``TensorListStack``: a list of the rows of ``dtensor``.

    Parameters
    ----------
    input_handle : TensorListHandle
        The forward op's list (unused, as in TF).
    element_shape : array_like
        The forward op's ``element_shape`` (unused).
    dtensor : array_like or None
        Upstream gradient of the stacked tensor.

    Returns
    -------
    tuple
        ``(TensorListFromTensor(dtensor, element_shape=dtensor.shape[1:]),
        None)``: a list with the fully defined element shape of the rows.
        All ``None`` when ``dtensor`` is ``None``.

    Raises
    ------
    InvalidArgumentError
        ``dtensor`` a scalar (L10).

    Notes
    -----
    Mirrors the gradient TF registers for TensorListStack (list_ops.py).

    Examples
    --------
    >>> import numpy as np
    >>> dl, _ = tensor_list_stack_grad(None, -1, np.ones((2, 3), np.float32))
    >>> dl
    TensorListHandle(float, [3], 2 elements)
    """
    if dtensor is None:
        return None, None
    d = _tensor(dtensor, "dtensor")
    return raw_ops.TensorListFromTensor(tensor=d, element_shape=_rows_shape(d)), None


def tensor_list_gather_grad(
    input_handle: Any, indices: Any, element_shape: Any, dtensor: Any
) -> tuple[Any, None, None]:
    """Gradient of ``TensorListGather``: scatter ``dtensor`` into a list of the forward list's length.

    Parameters
    ----------
    input_handle : TensorListHandle
        The forward op's list: its length and element shape are the
        gradient list's.
    indices : array_like of int
        The forward op's indices.
    element_shape : array_like
        The forward op's ``element_shape`` (unused).
    dtensor : array_like or None
        Upstream gradient of the gathered tensor.

    Returns
    -------
    tuple
        ``(dlist, None, None)``: ``dlist`` is
        ``TensorListScatterIntoExistingList`` of ``dtensor`` at ``indices``
        into a ``TensorListReserve`` of ``input_handle``'s element shape and
        length, of ``dtensor``'s dtype.  All ``None`` when ``dtensor`` is
        ``None``.

    Raises
    ------
    InvalidArgumentError
        The errors of ``TensorListScatterIntoExistingList``.

    Notes
    -----
    Mirrors the gradient TF registers for TensorListGather (list_ops.py).  As
    in TF, an index gathered twice gets the gradient of its last occurrence
    only (the scatter overwrites; it does not add).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> l = raw_ops.TensorListFromTensor(tensor=np.zeros(3), element_shape=[])
    >>> dl, _, _ = tensor_list_gather_grad(l, [2, 0, 2], -1, np.array([1., 2., 3.]))
    >>> raw_ops.TensorListStack(input_handle=dl, element_shape=-1, element_dtype=np.float64)
    array([2., 0., 3.])
    """
    if dtensor is None:
        return None, None, None
    d = _tensor(dtensor, "dtensor")
    dlist = raw_ops.TensorListReserve(
        element_shape=_element_shape(input_handle),
        num_elements=raw_ops.TensorListLength(input_handle=input_handle),
        element_dtype=d.dtype,
    )
    dlist = raw_ops.TensorListScatterIntoExistingList(input_handle=dlist, tensor=d, indices=indices)
    return dlist, None, None


def _scatter_dtensor(tensor: Any, indices: Any, dlist: Any) -> tuple[np.ndarray, Any]:
    t = _tensor(tensor, "tensor")
    dt = raw_ops.TensorListGather(
        input_handle=dlist, indices=indices, element_shape=_rows_shape(t), element_dtype=t.dtype
    )
    return t, dt


def tensor_list_scatter_grad(tensor: Any, indices: Any, element_shape: Any, dlist: Any) -> tuple[Any, None, None]:
    """Gradient of ``TensorListScatter``: gather the scattered rows' gradients.

    Parameters
    ----------
    tensor : array_like
        The forward op's tensor: its rows' shape and its dtype are the
        gradient's.
    indices : array_like of int
        The forward op's indices.
    element_shape : array_like
        The forward op's ``element_shape`` (unused).
    dlist : TensorListHandle or None
        Upstream gradient of the forward op's ``output_handle``.

    Returns
    -------
    tuple
        ``(dtensor, None, None)``: ``dtensor`` is ``TensorListGather(dlist,
        indices, element_shape=tensor.shape[1:], element_dtype=tensor's
        dtype)``, zeros for unset elements.  All ``None`` when ``dlist`` is
        ``None``.

    Raises
    ------
    InvalidArgumentError
        The errors of ``TensorListGather``.

    Notes
    -----
    Mirrors the gradient TF registers for TensorListScatter (list_ops.py).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> dlist = raw_ops.TensorListFromTensor(tensor=np.array([1., 2., 3.]), element_shape=[])
    >>> tensor_list_scatter_grad(np.zeros(2), [2, 0], -1, dlist)
    (array([3., 1.]), None, None)
    """
    if dlist is None:
        return None, None, None
    return _scatter_dtensor(tensor, indices, dlist)[1], None, None


def tensor_list_scatter_v2_grad(
    tensor: Any, indices: Any, element_shape: Any, num_elements: Any, dlist: Any
) -> tuple[Any, None, None, None]:
    """Gradient of ``TensorListScatterV2``: gather the scattered rows' gradients.

    Parameters
    ----------
    tensor : array_like
        The forward op's tensor: its rows' shape and its dtype are the
        gradient's.
    indices : array_like of int
        The forward op's indices.
    element_shape : array_like
        The forward op's ``element_shape`` (unused).
    num_elements : int
        The forward op's ``num_elements`` (unused).
    dlist : TensorListHandle or None
        Upstream gradient of the forward op's ``output_handle``.

    Returns
    -------
    tuple
        ``(dtensor, None, None, None)``, ``dtensor`` as for
        :func:`tensor_list_scatter_grad`.  All ``None`` when ``dlist`` is
        ``None``.

    Raises
    ------
    InvalidArgumentError
        The errors of ``TensorListGather``.

    Notes
    -----
    Mirrors the gradient TF registers for TensorListScatterV2 (list_ops.py).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> dlist = raw_ops.TensorListFromTensor(tensor=np.array([1., 2., 3., 4.]), element_shape=[])
    >>> tensor_list_scatter_v2_grad(np.zeros(2), [3, 1], -1, 4, dlist)
    (array([4., 2.]), None, None, None)
    """
    if dlist is None:
        return None, None, None, None
    return _scatter_dtensor(tensor, indices, dlist)[1], None, None, None


def tensor_list_scatter_into_existing_list_grad(
    input_handle: Any, tensor: Any, indices: Any, dlist: Any
) -> tuple[Any, Any, None]:
    """Gradient of ``TensorListScatterIntoExistingList``: gather the rows' gradients, zero them in the list's.

    Parameters
    ----------
    input_handle : TensorListHandle
        The forward op's list (unused, as in TF).
    tensor : array_like
        The forward op's tensor: its shape and dtype are the gradient's.
    indices : array_like of int
        The forward op's indices.
    dlist : TensorListHandle or None
        Upstream gradient of the forward op's ``output_handle``.

    Returns
    -------
    tuple
        ``(dinput_handle, dtensor, None)``: ``dtensor`` is
        ``TensorListGather(dlist, indices, element_shape=tensor.shape[1:],
        element_dtype=tensor's dtype)``; ``dinput_handle`` is ``dlist`` with
        zeros like ``tensor`` scattered at ``indices``.  All ``None`` when
        ``dlist`` is ``None``.

    Raises
    ------
    InvalidArgumentError
        The errors of ``TensorListGather``, then of
        ``TensorListScatterIntoExistingList``.

    Notes
    -----
    Mirrors the gradient TF registers for TensorListScatterIntoExistingList
    (list_ops.py).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> dlist = raw_ops.TensorListFromTensor(tensor=np.array([1., 2., 3.]), element_shape=[])
    >>> dl, dt, _ = tensor_list_scatter_into_existing_list_grad(None, np.zeros(1), [1], dlist)
    >>> dt, raw_ops.TensorListStack(input_handle=dl, element_shape=-1, element_dtype=np.float64)
    (array([2.]), array([1., 0., 3.]))
    """
    if dlist is None:
        return None, None, None
    t, dt = _scatter_dtensor(tensor, indices, dlist)
    dl = raw_ops.TensorListScatterIntoExistingList(input_handle=dlist, tensor=_zeros_like(t), indices=indices)
    return dl, dt, None


def tensor_list_from_tensor_grad(tensor: Any, element_shape: Any, output_handle: Any, dlist: Any) -> tuple[Any, None]:
    """Gradient of ``TensorListFromTensor``: stack the list gradient.

    Parameters
    ----------
    tensor : array_like
        The forward op's tensor: its shape and dtype are the gradient's.
    element_shape : array_like
        The forward op's ``element_shape`` (unused).
    output_handle : TensorListHandle
        The forward op's list; read only when ``dlist`` is ``None``.
    dlist : TensorListHandle or None
        Upstream gradient of ``output_handle``.  ``None`` stands, as in TF,
        for an *empty* list of ``output_handle``'s element shape.

    Returns
    -------
    tuple
        ``(dtensor, None)``: ``dtensor`` is ``TensorListStack(dlist,
        element_shape=tensor.shape[1:], element_dtype=tensor's dtype,
        num_elements=tensor.shape[0])``, zeros for unset elements.

    Raises
    ------
    InvalidArgumentError
        The errors of ``TensorListStack``: ``dlist`` not of ``tensor``'s
        length (L28), which a ``None`` ``dlist`` is unless ``tensor`` has no
        rows (TF's rule does the same when it knows the number of rows, as it
        always does in eager mode) ...

    Notes
    -----
    Mirrors the gradient TF registers for TensorListFromTensor (list_ops.py).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> dlist = raw_ops.TensorListReserve(element_shape=-1, num_elements=2, element_dtype=np.float32)
    >>> dlist = raw_ops.TensorListSetItem(input_handle=dlist, index=0, item=np.ones(3, np.float32))
    >>> tensor_list_from_tensor_grad(np.zeros((2, 3), np.float32), -1, None, dlist)
    (array([[1., 1., 1.],
           [0., 0., 0.]], dtype=float32), None)
    """
    t = _tensor(tensor, "tensor")
    num_elements = t.shape[0] if t.ndim else -1
    if dlist is None:
        dlist = raw_ops.EmptyTensorList(
            element_shape=_element_shape(output_handle), max_num_elements=-1, element_dtype=t.dtype
        )
    dt = raw_ops.TensorListStack(
        input_handle=dlist, element_shape=_rows_shape(t), element_dtype=t.dtype, num_elements=num_elements
    )
    return dt, None


# --------------------------------------------------------------------------- concat and split
def _concat_grad(input_handle: Any, lengths: Any, dtensor: Any) -> Any:
    return raw_ops.TensorListSplit(
        tensor=_tensor(dtensor, "dtensor"), element_shape=_element_shape(input_handle), lengths=lengths
    )


def tensor_list_concat_grad(input_handle: Any, lengths: Any, dtensor: Any, dlengths: Any = None) -> tuple[Any]:
    """Gradient of ``TensorListConcat``: split ``dtensor`` back into pieces of the forward ``lengths``.

    Parameters
    ----------
    input_handle : TensorListHandle
        The forward op's list: its element shape is the gradient list's.
    lengths : (n,) array_like of int
        The forward op's ``lengths`` output.
    dtensor : array_like or None
        Upstream gradient of the forward op's ``tensor``.
    dlengths : array_like or None, optional
        Upstream gradient of ``lengths`` (unused, as in TF).

    Returns
    -------
    tuple
        ``(dinput_handle,)``, ``TensorListSplit(dtensor,
        element_shape=input_handle's element shape, lengths=lengths)``
        (TF's rule returns it bare).  ``(None,)`` when ``dtensor`` is ``None``.

    Raises
    ------
    InvalidArgumentError
        The errors of ``TensorListSplit``: an element shape of rank 0 (L53),
        ``dtensor`` not of ``sum(lengths)`` rows (L56, L57) ...

    Notes
    -----
    Mirrors the gradient TF registers for TensorListConcat (list_ops.py).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> l = raw_ops.TensorListSplit(tensor=np.zeros(3), element_shape=-1, lengths=[1, 2])
    >>> t, lengths = raw_ops.TensorListConcat(input_handle=l, element_dtype=np.float64)
    >>> (dl,) = tensor_list_concat_grad(l, lengths, np.array([1., 2., 3.]))
    >>> raw_ops.TensorListGetItem(input_handle=dl, index=1, element_shape=-1, element_dtype=np.float64)
    array([2., 3.])
    """
    if dtensor is None:
        return (None,)
    return (_concat_grad(input_handle, lengths, dtensor),)


def tensor_list_concat_v2_grad(
    input_handle: Any, element_shape: Any, leading_dims: Any, lengths: Any, dtensor: Any, dlengths: Any = None
) -> tuple[Any, None, None]:
    """Gradient of ``TensorListConcatV2``: split ``dtensor`` back into pieces of the forward ``lengths``.

    Parameters
    ----------
    input_handle : TensorListHandle
        The forward op's list: its element shape is the gradient list's.
    element_shape : array_like
        The forward op's ``element_shape`` (unused).
    leading_dims : array_like of int
        The forward op's ``leading_dims`` (unused).
    lengths : (n,) array_like of int
        The forward op's ``lengths`` output.
    dtensor : array_like or None
        Upstream gradient of the forward op's ``tensor``.
    dlengths : array_like or None, optional
        Upstream gradient of ``lengths`` (unused, as in TF).

    Returns
    -------
    tuple
        ``(dinput_handle, None, None)``, ``dinput_handle`` as for
        :func:`tensor_list_concat_grad`.  All ``None`` when ``dtensor`` is
        ``None``.

    Raises
    ------
    InvalidArgumentError
        The errors of ``TensorListSplit``.

    Notes
    -----
    Mirrors the gradient TF registers for TensorListConcatV2 (list_ops.py).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> l = raw_ops.TensorListReserve(element_shape=[-1], num_elements=2, element_dtype=np.float32)
    >>> t, lengths = raw_ops.TensorListConcatV2(input_handle=l, element_shape=[-1], leading_dims=[1, 2],
    ...                                         element_dtype=np.float32)
    >>> dl, _, _ = tensor_list_concat_v2_grad(l, [-1], [1, 2], lengths, np.array([1., 2., 3.], np.float32))
    >>> raw_ops.TensorListGetItem(input_handle=dl, index=1, element_shape=-1, element_dtype=np.float32)
    array([2., 3.], dtype=float32)
    """
    if dtensor is None:
        return None, None, None
    return _concat_grad(input_handle, lengths, dtensor), None, None


def tensor_list_split_grad(tensor: Any, element_shape: Any, lengths: Any, dlist: Any) -> tuple[Any, None, None]:
    """Gradient of ``TensorListSplit``: concatenate the list gradient.

    Parameters
    ----------
    tensor : array_like
        The forward op's tensor: its shape after the first dimension and its
        dtype are the gradient's.
    element_shape : array_like
        The forward op's ``element_shape`` (unused).
    lengths : (n,) array_like of int
        The forward op's lengths: the first dimension of unset elements of
        ``dlist``.
    dlist : TensorListHandle or None
        Upstream gradient of the forward op's ``output_handle``.

    Returns
    -------
    tuple
        ``(dtensor, None, None)``: the ``tensor`` output of
        ``TensorListConcatV2(dlist, element_shape=[-1, *tensor.shape[1:]],
        leading_dims=lengths, element_dtype=tensor's dtype)``, unset elements
        as zeros.  All ``None`` when ``dlist`` is ``None``.

    Raises
    ------
    InvalidArgumentError
        The errors of ``TensorListConcatV2``.

    Notes
    -----
    Mirrors the gradient TF registers for TensorListSplit (list_ops.py).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> dlist = raw_ops.TensorListReserve(element_shape=-1, num_elements=2, element_dtype=np.float64)
    >>> dlist = raw_ops.TensorListSetItem(input_handle=dlist, index=1, item=np.array([5., 6.]))
    >>> tensor_list_split_grad(np.zeros(3), -1, [1, 2], dlist)
    (array([0., 5., 6.]), None, None)
    """
    if dlist is None:
        return None, None, None
    t = _tensor(tensor, "tensor")
    es = np.concatenate([np.array([-1], np.int32), _rows_shape(t)])
    out = raw_ops.TensorListConcatV2(input_handle=dlist, element_shape=es, leading_dims=lengths, element_dtype=t.dtype)
    return out[0], None, None
