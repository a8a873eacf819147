"""TF's gradient rules of the TensorArray ops, eager, for hand-written backward passes.

Each function takes the forward op's arguments, the upstream gradient and the
gradient ``source``, acts on the gradient array ``<forward name>@<source>``
(created on first use by ``TensorArrayGradV3``, which locks the forward
array's size), and returns what TF's registered gradient returns: one entry
per forward input, ``None`` where TF returns ``None``.

Run them in the reverse order of the forward ops.  Read-like ops (read,
gather, concat) *add* their upstream gradient into the gradient array;
write-like ops (write, scatter, split) *pull* (read once) what has
accumulated for the elements they wrote, zeros where nothing arrived.

Source: ``tensorflow/python/ops/tensor_array_grad.py`` (TensorFlow semantics reference:
:ref:`sem-grad-rules`).

Examples
--------
The worked example of :doc:`/gradients`, ``s = sum(read(1) * 3) + sum(stack() ** 2)``
over ``unstack(x)``:

>>> import numpy as np
>>> from numba_ta import raw_ops, gradients
>>> x = np.array([[1., 2.], [3., 4.], [5., 6.]], np.float32)
>>> h, f0 = raw_ops.TensorArrayV3(size=3, dtype=np.float32, clear_after_read=False)
>>> f1 = raw_ops.TensorArrayScatterV3(handle=h, indices=[0, 1, 2], value=x, flow_in=f0)
>>> r = raw_ops.TensorArrayReadV3(handle=h, index=1, flow_in=f1, dtype=np.float32)
>>> s = raw_ops.TensorArrayGatherV3(handle=h, indices=[0, 1, 2], flow_in=f1, dtype=np.float32)
>>> _, _, fg = gradients.gather_grad(h, [0, 1, 2], f1, 2 * s, dtype=np.float32)
>>> _, _, fr = gradients.read_grad(h, 1, f1, np.full(2, 3, np.float32), dtype=np.float32)
>>> _, _, dx, _ = gradients.scatter_grad(h, [0, 1, 2], x, f0, fr, dtype=np.float32)
>>> dx
array([[ 2.,  4.],
       [ 9., 11.],
       [10., 12.]], dtype=float32)
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, SupportsIndex

import numpy as np

from numba_ta import raw_ops
from numba_ta.tensor_array.registry import storage_of
from numba_ta.tensor_list import bulk_ops as _bulk_ops
from numba_ta.tensor_list import grads as _list_grads
from numba_ta.tensor_list.grads import (  # noqa: F401 - re-exported (__all__)
    tensor_list_concat_grad,
    tensor_list_concat_v2_grad,
    tensor_list_from_tensor_grad,
    tensor_list_gather_grad,
    tensor_list_get_item_grad,
    tensor_list_pop_back_grad,
    tensor_list_push_back_grad,
    tensor_list_resize_grad,
    tensor_list_scatter_grad,
    tensor_list_scatter_into_existing_list_grad,
    tensor_list_scatter_v2_grad,
    tensor_list_set_item_grad,
    tensor_list_split_grad,
    tensor_list_stack_grad,
)
from numba_ta.tf import messages as _messages

if TYPE_CHECKING:
    import numpy.typing as npt

    from numba_ta.tensor_array.registry import TensorArrayHandle

__all__ = [
    "grad_source",
    "read_grad",
    "write_grad",
    "gather_grad",
    "scatter_grad",
    "concat_grad",
    "split_grad",
    *_list_grads.__all__,  # the TensorList ops' rules
    "tensor_list_zeros_like",
    "tensor_list_add",
    "tensor_list_add_n",
]


def grad_source(name: str) -> str:
    """Return the gradient ``source`` for a gradient tensor or op name (TF's ``_GetGradSource``).

    Parameters
    ----------
    name : str
        A tensor or op name such as ``"gradients_1/mul_grad/Mul:0"``.

    Returns
    -------
    str
        The name up to and including the last ``/``-separated part that starts
        with ``gradients``.

    Raises
    ------
    ValueError
        If no part starts with ``gradients`` (TF's message).

    Examples
    --------
    >>> grad_source("gradients/mul_grad/Mul:0")
    'gradients'
    >>> grad_source("while/gradients/a/gradients_2/b:0")
    'while/gradients/a/gradients_2'
    """
    tokens = name.split("/")
    positions = [i for i, t in enumerate(tokens) if t.startswith("gradients")]
    if not positions:
        raise _messages.python_error("NT-grad-source", name=name)
    return "/".join(tokens[: positions[-1] + 1])


def _grad_array(handle: TensorArrayHandle, flow: float | np.floating[Any], source: str | bytes) -> TensorArrayHandle:
    g, _ = raw_ops.TensorArrayGradV3(handle=handle, flow_in=flow, source=source)
    return g


def _dtype(handle: TensorArrayHandle, dtype: npt.DTypeLike | int | None) -> npt.DTypeLike | int:
    return storage_of(handle, "gradients").dtype if dtype is None else dtype


def read_grad(
    handle: TensorArrayHandle,
    index: SupportsIndex,
    flow_in: float | np.floating[Any],
    grad: npt.ArrayLike,
    source: str | bytes = "gradients",
    dtype: npt.DTypeLike | int | None = None,
) -> tuple[None, None, np.float32]:
    """Gradient of ``TensorArrayReadV3``: add ``grad`` into the gradient array at ``index``.

    Parameters
    ----------
    handle : TensorArrayHandle
        The forward array.
    index : int
        The forward read's index.
    flow_in : float
        The forward read's ``flow_in``.
    grad : array_like
        Upstream gradient of the value read (the element's shape).
    source : str, optional
        Gradient computation name (default ``"gradients"``).
    dtype : dtype, optional
        Unused; accepted for symmetry with the other rules.

    Returns
    -------
    tuple
        ``(None, None, flow)``: the gradients of ``handle``, ``index`` and
        ``flow_in``; ``flow`` is the flow of the gradient write.

    Raises
    ------
    InvalidArgumentError
        From the write into the gradient array, e.g. T7 when ``grad``'s shape
        differs from what the element already holds.

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> h, f = raw_ops.TensorArrayV3(size=1, dtype=np.float32, element_shape=[2])
    >>> read_grad(h, 0, f, np.ones(2, np.float32))
    (None, None, np.float32(0.0))
    """
    g = _grad_array(handle, flow_in, source)
    flow = raw_ops.TensorArrayWriteV3(handle=g, index=index, value=grad, flow_in=flow_in)
    return None, None, flow


def write_grad(
    handle: TensorArrayHandle,
    index: SupportsIndex,
    value: npt.ArrayLike | None,
    flow_in: float | np.floating[Any],
    flow_grad: float | np.floating[Any],
    source: str | bytes = "gradients",
    dtype: npt.DTypeLike | int | None = None,
) -> tuple[None, None, npt.NDArray[Any], float | np.floating[Any]]:
    """Gradient of ``TensorArrayWriteV3``: read (once) the gradient of element ``index``.

    Parameters
    ----------
    handle : TensorArrayHandle
        The forward array.
    index : int
        The forward write's index.
    value : array_like or None
        The forward write's value (unused, as in TF).
    flow_in : float
        The forward write's ``flow_in`` (unused, as in TF).
    flow_grad : float
        The gradient flowing back to the write's ``flow_out``.
    source : str, optional
        Gradient computation name.
    dtype : dtype, optional
        The array's dtype; looked up from ``handle`` when omitted.

    Returns
    -------
    tuple
        ``(None, None, value_grad, flow_grad)``; ``value_grad`` has the
        written value's shape (zeros when no gradient arrived).

    Raises
    ------
    InvalidArgumentError
        From the gradient read, e.g. T11 when the element's gradient was
        already pulled.

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> h, f = raw_ops.TensorArrayV3(size=1, dtype=np.float32)
    >>> f1 = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=[1.0, 2.0], flow_in=f)
    >>> write_grad(h, 0, [1.0, 2.0], f, f1)[2]
    array([0., 0.], dtype=float32)
    """
    g = _grad_array(handle, flow_grad, source)
    grad = raw_ops.TensorArrayReadV3(handle=g, index=index, flow_in=flow_grad, dtype=_dtype(handle, dtype))
    return None, None, grad, flow_grad


def gather_grad(
    handle: TensorArrayHandle,
    indices: npt.ArrayLike,
    flow_in: float | np.floating[Any],
    grad: npt.ArrayLike,
    source: str | bytes = "gradients",
    dtype: npt.DTypeLike | int | None = None,
) -> tuple[None, None, np.float32]:
    """Gradient of ``TensorArrayGatherV3`` (and of ``stack``): scatter ``grad`` into the gradient array.

    Parameters
    ----------
    handle : TensorArrayHandle
        The forward array.
    indices : (n,) array_like of int
        The forward gather's indices; duplicates sum.
    flow_in : float
        The forward gather's ``flow_in``.
    grad : (n, *element_shape) array_like
        Upstream gradient of the gathered value.
    source : str, optional
        Gradient computation name.
    dtype : dtype, optional
        Unused.

    Returns
    -------
    tuple
        ``(None, None, flow)``.

    Raises
    ------
    InvalidArgumentError
        From the scatter into the gradient array.

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> h, f = raw_ops.TensorArrayV3(size=2, dtype=np.float32, element_shape=[1])
    >>> gather_grad(h, [0, 1], f, np.ones((2, 1), np.float32))
    (None, None, np.float32(0.0))
    """
    g = _grad_array(handle, flow_in, source)
    flow = raw_ops.TensorArrayScatterV3(handle=g, indices=indices, value=grad, flow_in=flow_in)
    return None, None, flow


def scatter_grad(
    handle: TensorArrayHandle,
    indices: npt.ArrayLike,
    value: npt.ArrayLike | None,
    flow_in: float | np.floating[Any],
    flow_grad: float | np.floating[Any],
    source: str | bytes = "gradients",
    dtype: npt.DTypeLike | int | None = None,
) -> tuple[None, None, npt.NDArray[Any], float | np.floating[Any]]:
    """Gradient of ``TensorArrayScatterV3`` (and of ``unstack``): gather from the gradient array.

    Parameters
    ----------
    handle : TensorArrayHandle
        The forward array.
    indices : (n,) array_like of int
        The forward scatter's indices.
    value : (n, ...) array_like or None
        The forward scatter's value (unused, as in TF).
    flow_in : float
        The forward scatter's ``flow_in`` (unused).
    flow_grad : float
        The gradient flowing back to the scatter's ``flow_out``.
    source : str, optional
        Gradient computation name.
    dtype : dtype, optional
        The array's dtype; looked up from ``handle`` when omitted.

    Returns
    -------
    tuple
        ``(None, None, value_grad, flow_grad)``; ``value_grad`` has
        ``value``'s shape.

    Raises
    ------
    InvalidArgumentError
        From the gather of the gradient array.

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> h, f = raw_ops.TensorArrayV3(size=2, dtype=np.float32)
    >>> f1 = raw_ops.TensorArrayScatterV3(handle=h, indices=[0, 1], value=np.ones((2, 3), np.float32), flow_in=f)
    >>> scatter_grad(h, [0, 1], None, f, f1)[2].shape
    (2, 3)
    """
    g = _grad_array(handle, flow_grad, source)
    grad = raw_ops.TensorArrayGatherV3(handle=g, indices=indices, flow_in=flow_grad, dtype=_dtype(handle, dtype))
    return None, None, grad, flow_grad


def concat_grad(
    handle: TensorArrayHandle,
    flow_in: float | np.floating[Any],
    lengths: npt.ArrayLike,
    grad: npt.ArrayLike,
    source: str | bytes = "gradients",
    dtype: npt.DTypeLike | int | None = None,
) -> tuple[None, np.float32]:
    """Gradient of ``TensorArrayConcatV3``: split ``grad`` into the gradient array.

    Parameters
    ----------
    handle : TensorArrayHandle
        The forward array.
    flow_in : float
        The forward concat's ``flow_in``.
    lengths : (size,) array_like of int
        The forward concat's ``lengths`` output.
    grad : (sum(lengths), ...) array_like
        Upstream gradient of the concatenated value.
    source : str, optional
        Gradient computation name.
    dtype : dtype, optional
        Unused.

    Returns
    -------
    tuple
        ``(None, flow)``: gradients of ``handle`` and ``flow_in``.

    Raises
    ------
    InvalidArgumentError
        From the split into the gradient array.

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> h, f = raw_ops.TensorArrayV3(size=2, dtype=np.float32)
    >>> f = raw_ops.TensorArraySplitV3(handle=h, value=np.ones(3, np.float32), lengths=[1, 2], flow_in=f)
    >>> v, lengths = raw_ops.TensorArrayConcatV3(handle=h, flow_in=f, dtype=np.float32)
    >>> concat_grad(h, f, lengths, np.ones(3, np.float32))
    (None, np.float32(0.0))
    """
    g = _grad_array(handle, flow_in, source)
    flow = raw_ops.TensorArraySplitV3(handle=g, value=grad, lengths=lengths, flow_in=flow_in)
    return None, flow


def split_grad(
    handle: TensorArrayHandle,
    value: npt.ArrayLike | None,
    lengths: npt.ArrayLike,
    flow_in: float | np.floating[Any],
    flow_grad: float | np.floating[Any],
    source: str | bytes = "gradients",
    dtype: npt.DTypeLike | int | None = None,
) -> tuple[None, npt.NDArray[Any], None, float | np.floating[Any]]:
    """Gradient of ``TensorArraySplitV3``: concat the gradient array.

    Parameters
    ----------
    handle : TensorArrayHandle
        The forward array.
    value : array_like or None
        The forward split's value (unused, as in TF).
    lengths : (size,) array_like of int
        The forward split's lengths (unused: the gradient array remembers the
        split count).
    flow_in : float
        The forward split's ``flow_in`` (unused).
    flow_grad : float
        The gradient flowing back to the split's ``flow_out``.
    source : str, optional
        Gradient computation name.
    dtype : dtype, optional
        The array's dtype; looked up from ``handle`` when omitted.

    Returns
    -------
    tuple
        ``(None, value_grad, None, flow_grad)``; ``value_grad`` has
        ``value``'s shape.

    Raises
    ------
    InvalidArgumentError
        From the concat of the gradient array.

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> h, f = raw_ops.TensorArrayV3(size=2, dtype=np.float32)
    >>> f1 = raw_ops.TensorArraySplitV3(handle=h, value=np.ones(3, np.float32), lengths=[1, 2], flow_in=f)
    >>> split_grad(h, None, [1, 2], f, f1)[1]
    array([0., 0., 0.], dtype=float32)
    """
    g = _grad_array(handle, flow_grad, source)
    grad, _ = raw_ops.TensorArrayConcatV3(handle=g, flow_in=flow_grad, dtype=_dtype(handle, dtype))
    return None, grad, None, flow_grad


# --------------------------------------------------------------------------- TensorList gradients
def tensor_list_zeros_like(handle: Any) -> Any:
    """Return a list of zeros like ``handle``: ``ZerosLike`` of a list (TF's kernel ``TensorListZerosLike``).

    TensorFlow's gradient code makes the zero gradient of a list with
    ``ZerosLike``; this is that op for numba_ta's lists.

    Parameters
    ----------
    handle : TensorListHandle, VARIANT_ZERO, or 0-d object ndarray of one
        The list.

    Returns
    -------
    TensorListHandle or VARIANT_ZERO
        A new list of the same length, dtype and element shape, with
        ``max_num_elements`` -1: each set element becomes zeros of its own
        shape (lists inside a list of lists, recursively), unset elements stay
        unset.  The variant zero is returned as it is.

    Raises
    ------
    InvalidArgumentError
        ``handle`` is an array of more than one value (L60), or not a list (L2).

    Notes
    -----
    Mirrors ``ZerosLike`` on a variant tensor holding a list (TensorFlow
    semantics reference: :ref:`tl-gradients`).  ``handle`` is unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> h = raw_ops.TensorListFromTensor(tensor=np.array([[1.0, 2.0]]), element_shape=-1)
    >>> z = tensor_list_zeros_like(h)
    >>> raw_ops.TensorListStack(input_handle=z, element_shape=-1, element_dtype=np.float64)
    array([[0., 0.]])
    """
    return _bulk_ops.zeros_like(handle)


def tensor_list_add(a: Any, b: Any) -> Any:
    """Return the element-wise sum of two lists (TF's kernel ``TensorListBinaryAdd``).

    Parameters
    ----------
    a, b : TensorListHandle, VARIANT_ZERO, or 0-d object ndarray of one
        Lists of the same dtype, compatible element shapes and the same length.

    Returns
    -------
    TensorListHandle
        Element by element: the sum of two set elements, the set one of a set
        and an unset element, unset for two unset ones; the merged element
        shape; ``max_num_elements`` -1.  Lists inside lists of lists add
        recursively.

    Raises
    ------
    InvalidArgumentError
        Different dtypes (L63), incompatible element shapes (L64), different
        lengths (L65), two set elements of different shapes (L66), a ``bool``
        list (L67), an input that is not a scalar (L62) or not a list (L2).
    InternalError
        A list added to the variant zero (L68).

    Notes
    -----
    Mirrors ``AddN`` of two variant tensors holding lists (TensorFlow
    semantics reference: :ref:`tl-gradients`); :func:`tensor_list_add_n` is
    ``AddN`` of any number.  The inputs are unchanged.

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> a = raw_ops.TensorListFromTensor(tensor=np.array([1.0, 2.0]), element_shape=-1)
    >>> s = tensor_list_add(a, a)
    >>> raw_ops.TensorListStack(input_handle=s, element_shape=-1, element_dtype=np.float64)
    array([2., 4.])
    """
    return _bulk_ops.add_n([a, b])


def tensor_list_add_n(inputs: Any) -> Any:
    """Return the sum of lists: ``AddN`` on lists, a left fold of :func:`tensor_list_add`.

    Parameters
    ----------
    inputs : sequence of TensorListHandle (or 0-d object ndarrays of one)
        At least one list; one list is returned as it is.

    Returns
    -------
    TensorListHandle
        ``((inputs[0] + inputs[1]) + inputs[2]) + ...``.

    Raises
    ------
    InvalidArgumentError
        An input that is not a scalar (L62), and the errors of
        :func:`tensor_list_add` (the first failing step's).
    InternalError
        A list added to the variant zero (L68).
    ValueError
        No inputs.

    Notes
    -----
    Mirrors ``AddN`` on variant tensors holding lists (TensorFlow semantics
    reference: :ref:`tl-gradients`).

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta import raw_ops
    >>> a = raw_ops.TensorListFromTensor(tensor=np.array([1, 2], np.int32), element_shape=-1)
    >>> s = tensor_list_add_n([a, a, a])
    >>> raw_ops.TensorListStack(input_handle=s, element_shape=-1, element_dtype=np.int32)
    array([3, 6], dtype=int32)
    """
    return _bulk_ops.add_n(inputs)
