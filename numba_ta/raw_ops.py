"""The eleven TensorArray V3 ops and the twenty TensorList ops, with ``tf.raw_ops``' names, arguments and results.

Code written against ``tf.raw_ops`` runs with only the import changed::

    from numba_ta import raw_ops          # instead of: from tensorflow import raw_ops

Every op takes its arguments by keyword (as ``tf.raw_ops`` requires) and also
positionally.  ``dtype`` may be a numpy dtype, a string, a ``tf.DType`` or
TF's ``DataType`` enum (1 float32, 2 float64, 3 int32 ...); shape attributes
may be lists (-1 or None unknown), ``TensorShape`` objects or a
``TensorShapeProto``, as a GraphDef stores them.  Values are converted as
eager ``tf.raw_ops`` convert them (see :func:`TensorArrayWriteV3`).
Results are numpy arrays the caller owns; flows are ``np.float32`` scalars;
sizes are ``np.int32``; concat lengths are ``int64``.  An op with several
outputs returns them as TF's named tuple: its type is named as the op, its
fields as the op's outputs (``TensorArrayGradV3(...).grad_handle``).  Errors are those of
:mod:`numba_ta.errors`, with TF's kernel message text, raised in TF's check
order; unlike TF, an op that raises changes nothing (see :ref:`divergences`).

Arguments are converted as TF's eager Python layer converts them, with the
same built-in error classes: ``None`` where a tensor belongs, or an object
that is not a number or a sequence, raises ``ValueError``; a float or a
string where an integer belongs, a ``flow_in`` that is not a real number, an
attribute flag that is not a bool, and a ``handle`` that is neither a handle
nor ``None``/an array raise ``TypeError``; string values are
:class:`~numba_ta.errors.InvalidArgumentError`'s dtype mismatch (``dtype
string``), as in TF.  Every op that allocates (a write's storage, a read's
zeros, a gather's or concat's result, and the index and work arrays of the
ops on many elements) raises
:class:`~numba_ta.errors.ResourceExhaustedError` with TF's ``OOM when
allocating tensor ...`` message, naming the tensor it could not allocate,
when the memory cannot be had, and changes nothing.  A TensorFlow tensor of
a dtype the op's definition does not take raises TF's
:class:`~numba_ta.errors.InvalidArgumentError` (``cannot compute <Op> as
input #<k>(zero-based) ...``).

Examples
--------
>>> import numpy as np
>>> from numba_ta import raw_ops
>>> h, f = raw_ops.TensorArrayV3(size=3, dtype=np.float32, element_shape=[2])
>>> f = raw_ops.TensorArrayScatterV3(handle=h, indices=[0, 1, 2],
...                                  value=np.arange(6, dtype=np.float32).reshape(3, 2), flow_in=f)
>>> raw_ops.TensorArrayReadV3(handle=h, index=1, flow_in=f, dtype=np.float32)
array([2., 3.], dtype=float32)
>>> raw_ops.TensorArrayGatherV3(handle=h, indices=[2, 0], flow_in=f, dtype=np.float32)
array([[4., 5.],
       [0., 1.]], dtype=float32)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, SupportsIndex

import numpy as np

from numba_ta.errors import OpError
from numba_ta.tensor_array import registry as _registry
from numba_ta.tensor_array.storage import Storage, scalar_index
from numba_ta.tensor_list import bulk_ops as _bulk_ops
from numba_ta.tensor_list import ops as _list_ops
from numba_ta.tensor_list.bulk_ops import (  # noqa: F401 - re-exported (__all__)
    TensorListConcat,
    TensorListConcatLists,
    TensorListConcatV2,
    TensorListGather,
    TensorListScatter,
    TensorListScatterIntoExistingList,
    TensorListScatterV2,
    TensorListSplit,
    TensorListStack,
)
from numba_ta.tensor_list.ops import (  # noqa: F401 - re-exported (__all__)
    EmptyTensorList,
    TensorListElementShape,
    TensorListFromTensor,
    TensorListGetItem,
    TensorListLength,
    TensorListPopBack,
    TensorListPushBack,
    TensorListPushBackBatch,
    TensorListReserve,
    TensorListResize,
    TensorListSetItem,
)
from numba_ta.tf import messages as _messages
from numba_ta.tf.dtypes import INT32_LIMIT, as_dtype, to_array, to_index, to_index_array, unsupported
from numba_ta.tf.messages import op_error, shape_str
from numba_ta.tf.opdefs import (
    TensorArrayConcatV3Result,
    TensorArrayGradV3Result,
    TensorArrayGradWithShapeResult,
    TensorArrayV3Result,
    check_input,
)
from numba_ta.tf.tensor_shape import as_partial, as_shape_tensor

if TYPE_CHECKING:
    import numpy.typing as npt

    from numba_ta.tensor_array.registry import TensorArrayHandle
    from numba_ta.tf.tensor_shape import TensorShape

__all__ = [
    "TensorArrayV3",
    "TensorArrayWriteV3",
    "TensorArrayReadV3",
    "TensorArrayGatherV3",
    "TensorArrayScatterV3",
    "TensorArrayConcatV3",
    "TensorArraySplitV3",
    "TensorArraySizeV3",
    "TensorArrayCloseV3",
    "TensorArrayGradV3",
    "TensorArrayGradWithShape",
    *_list_ops.__all__,  # the twenty TensorList ops: those that make a list or change one element,
    *_bulk_ops.__all__,  # and those over many elements
]

_WRITE, _READ = "TensorArrayWriteV3", "TensorArrayReadV3"


def _index(index: Any, op: str) -> int:
    """Convert an ``index`` input that is not a Python int: TF's input dtype check, then :func:`scalar_index`."""
    check_input(index, op, "index")
    return scalar_index(index)


_Handle = _registry.TensorArrayHandle  # (the per-element ops test a handle's type inline: one call less)


def _flow(flow_in: Any, op: str) -> np.float32:
    t = type(flow_in)
    if t is np.float32:
        return flow_in
    if t is float or t is int:
        try:
            return np.float32(flow_in)
        except OverflowError:  # an int beyond a double: TF's converter refuses it so
            raise ValueError("Can't convert Python sequence with out-of-range integer to Tensor.") from None
    if hasattr(flow_in, "numpy") and not isinstance(flow_in, np.ndarray):
        check_input(flow_in, op, "flow_in")
        flow_in = flow_in.numpy()
    if flow_in is None:
        raise unsupported("flow_in", flow_in)
    a = np.asarray(flow_in)
    if a.dtype.kind not in "biuf":
        raise TypeError(f"flow_in must be a float32 scalar, got {flow_in!r} of type {type(flow_in).__name__}")
    if a.ndim != 0:
        raise _messages.error("NT-flow-scalar", flow_in=flow_in)
    return np.float32(a)


def TensorArrayV3(  # TF's op name
    size: npt.ArrayLike,
    dtype: npt.DTypeLike | int,
    element_shape: TensorShape | Sequence[int | None] | None = None,
    dynamic_size: bool = False,
    clear_after_read: bool = True,
    identical_element_shapes: bool = False,
    tensor_array_name: str | bytes = "",
    name: str | None = None,
) -> TensorArrayV3Result:
    """Create a TensorArray (``tf.raw_ops.TensorArrayV3``).

    Parameters
    ----------
    size : int or 0-d array_like of int
        Initial number of elements, ``>= 0``.
    dtype : numpy dtype, str, tf.DType or int
        Element dtype: bool, int8-int64, uint8-uint64, float16, float32,
        float64, complex64 or complex128; an int is TF's ``DataType`` enum.
    element_shape : None, sequence of (int or None), TensorShape or TensorShapeProto, optional
        Expected element shape; None (default) is an unknown rank, None or
        -1 entries are unknown dimensions.  When fully defined, reads of
        unwritten elements return zeros of this shape.
    dynamic_size : bool, optional
        Whether writes past the end grow the array (default False).
    clear_after_read : bool, optional
        Whether reading an element frees it, so that it can be read only once
        (default True).
    identical_element_shapes : bool, optional
        Whether all elements must have the same shape; the first write then
        fixes a partial ``element_shape`` (``infer_shape`` of tf.TensorArray).
    tensor_array_name : str or bytes, optional
        Base of the unique name (default ``"TensorArrayV3"``).
    name : str, optional
        Ignored (TF's op name).

    Returns
    -------
    handle : TensorArrayHandle
        The array's handle; its ``name`` is ``"<base>_<counter>"``.
    flow : np.float32
        ``0.0``.

    Raises
    ------
    InvalidArgumentError
        ``TensorArray size must be scalar, but had shape: <S>`` or
        ``Size should be >= 0.``.
    ResourceExhaustedError
        When the per-element metadata (13 bytes an element) cannot be allocated.
    TypeError
        If ``dtype`` is not a supported dtype.
    ValueError, TypeError
        If ``element_shape`` has a negative or non-integer entry.

    Notes
    -----
    Mirrors ``TensorArrayOp`` of TF's ``tensor_array_ops.cc`` (TensorFlow
    semantics reference: :ref:`sem-create`).
    Storage is allocated lazily, with capacity ``size``, when the first
    element is stored.

    Examples
    --------
    >>> import numpy as np
    >>> h, flow = TensorArrayV3(size=2, dtype=np.float32, tensor_array_name="ex")
    >>> h.name.startswith("ex_"), flow
    (True, np.float32(0.0))
    """
    try:
        dt = as_dtype(dtype)
        es = as_partial(element_shape, "element_shape", attr=True)
        if hasattr(size, "numpy") and not isinstance(size, np.ndarray):
            check_input(size, "TensorArrayV3", "size")
            size = size.numpy()
        if np.ndim(size) != 0:
            raise _messages.error("NT-size-scalar", shape=shape_str(np.shape(size)))
        n = to_index(size, "size")
        if n < 0:
            raise _messages.error("NT-size-negative")
        if isinstance(tensor_array_name, bytes):
            # TF takes str or bytes for a string attr, UTF-8 or not
            tensor_array_name = tensor_array_name.decode(errors="backslashreplace")
        if tensor_array_name is not None and not isinstance(tensor_array_name, str):
            raise TypeError(f"tensor_array_name must be a str, got {tensor_array_name!r}")
        flags = {
            "dynamic_size": dynamic_size,
            "clear_after_read": clear_after_read,
            "identical_element_shapes": identical_element_shapes,
        }
        for flag, v in flags.items():
            if not isinstance(v, (bool, np.bool_)):
                raise TypeError(f"Expected bool for argument '{flag}' not {v!r}.")  # TF's make_bool
        uname = _registry.new_name(tensor_array_name or "TensorArrayV3")
        storage = Storage(uname, dt, n, es, dynamic_size, clear_after_read, identical_element_shapes)
        return TensorArrayV3Result(_registry.register(storage), np.float32(0.0))
    except (OpError, SystemError) as e:
        raise op_error(e, "TensorArrayV3") from None


def TensorArrayWriteV3(
    handle: TensorArrayHandle,
    index: SupportsIndex,
    value: npt.ArrayLike,
    flow_in: float | np.floating[Any],
    name: str | None = None,
) -> np.float32:
    """Write one element (``tf.raw_ops.TensorArrayWriteV3``).

    Parameters
    ----------
    handle : TensorArrayHandle
        The array.
    index : int
        Element index; a dynamic array grows to ``index + 1``.
    value : array_like
        The element, of the array's dtype.  Converted as eager TF converts
        it: numpy arrays (any byte order) and array-likes keep their dtype;
        Python scalars and sequences (lists of numbers or of ndarrays,
        ``memoryview``, ``array.array`` ...) take the dtype of their first
        scalar (a Python float float32, an int int32 ...), as in TF.
    flow_in : float
        Flow token.
    name : str, optional
        Ignored.

    Returns
    -------
    flow_out : np.float32
        ``flow_in``, unchanged.

    Raises
    ------
    InvalidArgumentError
        TF's errors: index not scalar (K6), dtype mismatch (K7), closed (T1),
        index out of range (T2), shape incompatible with the element shape
        (T4), already read (T5), already written (T6); on gradient arrays,
        aggregation shape mismatch (T7) or a dtype that cannot be summed (T8).
    ResourceExhaustedError
        When the memory it needs cannot be allocated (TF's ``OOM when
        allocating tensor ...``); nothing changes.

    Notes
    -----
    Mirrors ``TensorArrayWriteOp`` (TensorFlow
    semantics reference: :ref:`sem-write`).  On a gradient array
    a second write to an element sums into it in place.

    Examples
    --------
    >>> import numpy as np
    >>> h, f = TensorArrayV3(size=1, dtype=np.float32)
    >>> TensorArrayWriteV3(handle=h, index=0, value=[1.0, 2.0], flow_in=f)
    np.float32(0.0)
    """
    try:
        flow = flow_in if type(flow_in) is np.float32 else _flow(flow_in, "TensorArrayWriteV3")
        i = index if type(index) is int and -INT32_LIMIT <= index < INT32_LIMIT else _index(index, _WRITE)
        storage = handle._storage if type(handle) is _Handle else _registry.storage_of(handle, "TensorArrayWriteV3")
        # inlined common case (no call): an ndarray in native byte order is used as it is
        v = value if type(value) is np.ndarray and value.dtype.isnative else to_array(value, "value")
    except (OpError, SystemError) as e:
        raise op_error(e, "TensorArrayWriteV3") from None
    storage.op_write(i, v)
    return flow


def TensorArrayReadV3(
    handle: TensorArrayHandle,
    index: SupportsIndex,
    flow_in: float | np.floating[Any],
    dtype: npt.DTypeLike | int,
    name: str | None = None,
) -> npt.NDArray[Any]:
    """Read one element (``tf.raw_ops.TensorArrayReadV3``).

    Parameters
    ----------
    handle : TensorArrayHandle
        The array.
    index : int
        Element index.  Gradient arrays grow with zeros on reads past the end.
    flow_in : float
        Flow token.
    dtype : numpy dtype, str or tf.DType
        Must be the array's dtype.
    name : str, optional
        Ignored.

    Returns
    -------
    value : ndarray
        A copy of the element, of its written shape; zeros of the element
        shape when the element was never written.

    Raises
    ------
    InvalidArgumentError
        Index not scalar (K6), dtype mismatch (K8), closed (T1), index out of
        range (T9), unwritten element with a partial element shape (T10),
        second read of a cleared element (T11).
    ResourceExhaustedError
        When the memory it needs cannot be allocated (TF's ``OOM when
        allocating tensor ...``); nothing changes.

    Notes
    -----
    Mirrors ``TensorArrayReadOp`` (TensorFlow
    semantics reference: :ref:`sem-read`).  With
    ``clear_after_read`` the element's storage is released.

    Examples
    --------
    >>> import numpy as np
    >>> h, f = TensorArrayV3(size=2, dtype=np.int32, element_shape=[2])
    >>> TensorArrayReadV3(handle=h, index=1, flow_in=f, dtype=np.int32)
    array([0, 0], dtype=int32)
    """
    try:
        if type(flow_in) is not np.float32:
            _flow(flow_in, "TensorArrayReadV3")
        i = index if type(index) is int and -INT32_LIMIT <= index < INT32_LIMIT else _index(index, _READ)
        storage = handle._storage if type(handle) is _Handle else _registry.storage_of(handle, "TensorArrayReadV3")
        dt = as_dtype(dtype)
    except (OpError, SystemError) as e:
        raise op_error(e, "TensorArrayReadV3") from None
    return storage.op_read(i, dt)


def TensorArrayGatherV3(
    handle: TensorArrayHandle,
    indices: npt.ArrayLike,
    flow_in: float | np.floating[Any],
    dtype: npt.DTypeLike | int,
    element_shape: TensorShape | Sequence[int | None] | None = None,
    name: str | None = None,
) -> npt.NDArray[Any]:
    """Read several elements into one array (``tf.raw_ops.TensorArrayGatherV3``).

    Parameters
    ----------
    handle : TensorArrayHandle
        The array.
    indices : (n,) array_like of int
        Elements to read, in order; duplicates are allowed when the array does
        not clear after reads.
    flow_in : float
        Flow token.
    dtype : numpy dtype, str or tf.DType
        Must be the array's dtype.
    element_shape : None or sequence of (int or None), optional
        Expected element shape; merged into the array's element shape.
    name : str, optional
        Ignored.

    Returns
    -------
    value : (n, *element_shape) ndarray
        The elements stacked along a new first axis.

    Raises
    ------
    InvalidArgumentError
        dtype mismatch (K8); ``element_shape`` incompatible with the array's
        (merge errors); indices not a vector (G2); read errors (T1, T9, T10,
        T11); ``element_shape`` not matching element 0 (G4); elements of
        different shapes (G5).
    UnimplementedError
        Empty ``indices`` with a partial ``element_shape`` (G3).
    ResourceExhaustedError
        When the memory it needs cannot be allocated (TF's ``OOM when
        allocating tensor ...``); nothing changes.

    Notes
    -----
    Mirrors ``TensorArrayPackOrGatherOp`` (TensorFlow
    semantics reference: :ref:`sem-gather`).  One kernel call copies
    all rows (parallel above the threshold).  Empty ``indices`` skip the
    closed check, as in TF.

    Examples
    --------
    >>> import numpy as np
    >>> h, f = TensorArrayV3(size=2, dtype=np.float64, element_shape=[1])
    >>> f = TensorArrayWriteV3(handle=h, index=0, value=np.array([7.0]), flow_in=f)
    >>> TensorArrayGatherV3(handle=h, indices=[0, 1], flow_in=f, dtype=np.float64)
    array([[7.],
           [0.]])
    """
    try:
        _flow(flow_in, "TensorArrayGatherV3")
        storage = _registry.storage_of(handle, "TensorArrayGatherV3")
        check_input(indices, "TensorArrayGatherV3", "indices")
        dt = as_dtype(dtype)
        attr = as_partial(element_shape, "element_shape", attr=True)
    except (OpError, SystemError) as e:
        raise op_error(e, "TensorArrayGatherV3") from None
    return storage.op_gather(indices, dt, attr)


def TensorArrayScatterV3(
    handle: TensorArrayHandle,
    indices: npt.ArrayLike,
    value: npt.ArrayLike,
    flow_in: float | np.floating[Any],
    name: str | None = None,
) -> np.float32:
    """Write the rows of ``value`` to the given elements (``tf.raw_ops.TensorArrayScatterV3``).

    Parameters
    ----------
    handle : TensorArrayHandle
        The array.
    indices : (n,) array_like of int
        Destination elements; a dynamic array grows to ``max(indices) + 1``.
    value : (n, *element_shape) array_like
        Row ``k`` goes to element ``indices[k]``.
    flow_in : float
        Flow token.
    name : str, optional
        Ignored.

    Returns
    -------
    flow_out : np.float32
        ``flow_in``, unchanged.

    Raises
    ------
    InvalidArgumentError
        dtype mismatch (K7); scalar value (S2); closed (T1); indices not a
        vector (G2); ``len(indices) != value.shape[0]`` (S3); index past the
        end of a static array (S4); negative index (T2); per-element write
        errors (T4-T8), reported for the first failing position.
    ResourceExhaustedError
        When the memory it needs cannot be allocated (TF's ``OOM when
        allocating tensor ...``); nothing changes.

    Notes
    -----
    Mirrors ``TensorArrayUnpackOrScatterOp`` (TensorFlow
    semantics reference: :ref:`sem-scatter`).  On a gradient array
    duplicate indices are summed.  Atomic: on error nothing is written.

    Examples
    --------
    >>> import numpy as np
    >>> h, f = TensorArrayV3(size=2, dtype=np.int64)
    >>> f = TensorArrayScatterV3(handle=h, indices=[1, 0], value=np.array([[1], [2]]), flow_in=f)
    >>> TensorArrayReadV3(handle=h, index=0, flow_in=f, dtype=np.int64)
    array([2])
    """
    try:
        flow = _flow(flow_in, "TensorArrayScatterV3")
        storage = _registry.storage_of(handle, "TensorArrayScatterV3")
        check_input(indices, "TensorArrayScatterV3", "indices")
        v = to_array(value, "value")
    except (OpError, SystemError) as e:
        raise op_error(e, "TensorArrayScatterV3") from None
    storage.op_scatter(indices, v)
    return flow


def TensorArrayConcatV3(
    handle: TensorArrayHandle,
    flow_in: float | np.floating[Any],
    dtype: npt.DTypeLike | int,
    element_shape_except0: TensorShape | Sequence[int | None] | None = None,
    name: str | None = None,
) -> TensorArrayConcatV3Result:
    """Concatenate all elements along axis 0 (``tf.raw_ops.TensorArrayConcatV3``).

    Parameters
    ----------
    handle : TensorArrayHandle
        The array.
    flow_in : float
        Flow token.
    dtype : numpy dtype, str or tf.DType
        Must be the array's dtype.
    element_shape_except0 : None or sequence of (int or None), optional
        Expected element shape without its first dimension.
    name : str, optional
        Ignored.

    Returns
    -------
    value : (sum(lengths), *element_shape[1:]) ndarray
        The elements concatenated along axis 0.
    lengths : (size,) int64 ndarray
        ``shape[0]`` of each element.

    Raises
    ------
    InvalidArgumentError
        dtype mismatch (K8); closed (T1); read errors (T9-T11); a scalar
        element (C2); ``element_shape_except0`` not matching element 0 (C3);
        elements whose trailing dimensions differ (C4); a gradient array whose
        forward array was never split (TF crashes there).
    UnimplementedError
        Size 0 with a partial ``element_shape_except0`` (C1).
    ResourceExhaustedError
        When the memory it needs cannot be allocated (TF's ``OOM when
        allocating tensor ...``); nothing changes.

    Notes
    -----
    Mirrors ``TensorArrayConcatOp`` (TensorFlow
    semantics reference: :ref:`sem-concat`).  A gradient array
    concatenates as many elements as its forward array was split into.

    Examples
    --------
    >>> import numpy as np
    >>> h, f = TensorArrayV3(size=2, dtype=np.float32)
    >>> f = TensorArraySplitV3(handle=h, value=np.arange(3, dtype=np.float32), lengths=[1, 2], flow_in=f)
    >>> TensorArrayConcatV3(handle=h, flow_in=f, dtype=np.float32)
    TensorArrayConcatV3(value=array([0., 1., 2.], dtype=float32), lengths=array([1, 2]))
    """
    try:
        _flow(flow_in, "TensorArrayConcatV3")
        storage = _registry.storage_of(handle, "TensorArrayConcatV3")
        dt = as_dtype(dtype)
        except0 = as_partial(element_shape_except0, "element_shape_except0", attr=True)
    except (OpError, SystemError) as e:
        raise op_error(e, "TensorArrayConcatV3") from None
    return TensorArrayConcatV3Result(*storage.op_concat(dt, except0))


def TensorArraySplitV3(
    handle: TensorArrayHandle,
    value: npt.ArrayLike,
    lengths: npt.ArrayLike,
    flow_in: float | np.floating[Any],
    name: str | None = None,
) -> np.float32:
    """Split ``value`` along axis 0 into the elements (``tf.raw_ops.TensorArraySplitV3``).

    Parameters
    ----------
    handle : TensorArrayHandle
        The array; its size must equal ``len(lengths)`` (a dynamic array may
        grow to it).
    value : (sum(lengths), ...) array_like
        Data to split.
    lengths : (size,) array_like of int
        ``value.shape[0]`` of each element, ``>= 0``.
    flow_in : float
        Flow token.
    name : str, optional
        Ignored.

    Returns
    -------
    flow_out : np.float32
        ``flow_in``, unchanged.

    Raises
    ------
    InvalidArgumentError
        lengths not a vector (P1); scalar value (P3); ``sum(lengths) !=
        value.shape[0]`` (P4); closed (T1); a negative length (TF aborts
        there); size mismatch (P5); dtype mismatch (K7); per-element write
        errors (T4-T8).
    ResourceExhaustedError
        When the memory it needs cannot be allocated (TF's ``OOM when
        allocating tensor ...``); nothing changes.

    Notes
    -----
    Mirrors ``TensorArraySplitOp`` (TensorFlow
    semantics reference: :ref:`sem-split`); records the split count that
    a gradient array's concat uses.  One kernel call copies all elements.

    Examples
    --------
    >>> import numpy as np
    >>> h, f = TensorArrayV3(size=2, dtype=np.int32)
    >>> f = TensorArraySplitV3(handle=h, value=np.array([1, 2, 3], np.int32), lengths=[2, 1], flow_in=f)
    >>> TensorArrayReadV3(handle=h, index=0, flow_in=f, dtype=np.int32)
    array([1, 2], dtype=int32)
    """
    try:
        flow = _flow(flow_in, "TensorArraySplitV3")
        storage = _registry.storage_of(handle, "TensorArraySplitV3")
        check_input(lengths, "TensorArraySplitV3", "lengths")
        v = to_array(value, "value")
    except (OpError, SystemError) as e:
        raise op_error(e, "TensorArraySplitV3") from None
    storage.op_split(v, lengths)
    return flow


def TensorArraySizeV3(
    handle: TensorArrayHandle, flow_in: float | np.floating[Any], name: str | None = None
) -> np.int32:
    """Return the number of elements (``tf.raw_ops.TensorArraySizeV3``).

    Parameters
    ----------
    handle : TensorArrayHandle
        The array.
    flow_in : float
        Flow token.
    name : str, optional
        Ignored.

    Returns
    -------
    size : np.int32
        Current size, including growth by dynamic writes and by gradient
        reads past the end.

    Raises
    ------
    InvalidArgumentError
        If the array is closed (T1).

    Notes
    -----
    Mirrors ``TensorArraySizeOp`` (TensorFlow
    semantics reference: :ref:`sem-size`).

    Examples
    --------
    >>> import numpy as np
    >>> h, f = TensorArrayV3(size=0, dtype=np.float32, dynamic_size=True)
    >>> f = TensorArrayWriteV3(handle=h, index=4, value=1.0, flow_in=f)
    >>> TensorArraySizeV3(handle=h, flow_in=f)
    np.int32(5)
    """
    try:
        _flow(flow_in, "TensorArraySizeV3")
        storage = _registry.storage_of(handle, "TensorArraySizeV3")
    except (OpError, SystemError) as e:
        raise op_error(e, "TensorArraySizeV3") from None
    return storage.op_size()


def TensorArrayCloseV3(handle: TensorArrayHandle, name: str | None = None) -> None:
    """Close the array and free its storage (``tf.raw_ops.TensorArrayCloseV3``).

    Parameters
    ----------
    handle : TensorArrayHandle
        The array.
    name : str, optional
        Ignored.

    Returns
    -------
    None
        Nothing; the array's storage is freed at once.

    Raises
    ------
    InvalidArgumentError, TypeError
        Only if ``handle`` is not a TensorArray handle (see the module
        docstring); closing twice is fine.

    Notes
    -----
    Mirrors ``TensorArrayCloseOp`` (TensorFlow
    semantics reference: :ref:`sem-close`).  Every later op on the array
    raises T1, except a gather with empty indices.  Gradient arrays of it stay
    usable.

    Examples
    --------
    >>> import numpy as np
    >>> h, f = TensorArrayV3(size=1, dtype=np.float32)
    >>> TensorArrayCloseV3(handle=h)
    >>> TensorArrayCloseV3(handle=h)
    """
    try:
        storage = _registry.storage_of(handle, "TensorArrayCloseV3")
    except (OpError, SystemError) as e:
        raise op_error(e, "TensorArrayCloseV3") from None
    storage.op_close()


_NO_PREPEND = object()  # TensorArrayGradV3: no shape_to_prepend input at all


def _grad(
    op: str, handle: Any, flow_in: Any, source: Any, shape_to_prepend: Any
) -> tuple[TensorArrayHandle, np.float32]:
    _flow(flow_in, op)
    if shape_to_prepend is not _NO_PREPEND:
        check_input(shape_to_prepend, op, "shape_to_prepend")
        shape_to_prepend = to_index_array(as_shape_tensor(shape_to_prepend), "shape_to_prepend")
    fwd = _registry.storage_of(handle, op)
    if isinstance(source, bytes):
        source = source.decode(errors="backslashreplace")  # TF takes str or bytes for a string attr, UTF-8 or not
    if not isinstance(source, str):
        raise TypeError(f"{op}: `source` must be a str, got {source!r} of type {type(source).__name__}")
    return fwd.op_grad(source, None if shape_to_prepend is _NO_PREPEND else shape_to_prepend), np.float32(0.0)


def TensorArrayGradV3(
    handle: TensorArrayHandle,
    flow_in: float | np.floating[Any],
    source: str | bytes,
    name: str | None = None,
) -> TensorArrayGradV3Result:
    """Create or look up the gradient array of a TensorArray (``tf.raw_ops.TensorArrayGradV3``).

    Parameters
    ----------
    handle : TensorArrayHandle
        The forward array.
    flow_in : float
        Flow token (orders this op after the forward writes).
    source : str
        The gradient computation's name (``"gradients"``, ``"gradients_1"``
        ...).  The gradient array is keyed ``"<forward name>@<source>"``, so
        separate gradient computations get separate accumulators.
    name : str, optional
        Ignored.

    Returns
    -------
    grad_handle : TensorArrayHandle
        The gradient array: same dtype, size fixed at the forward size now,
        not dynamic, clear-after-read, summing repeated writes.  Elements the
        forward array holds start as soft zeros of their shape.
    flow_out : np.float32
        ``0.0`` (not ``flow_in``, as in TF).

    Raises
    ------
    InvalidArgumentError
        ``Wrong input container. ...`` for a gradient array's handle (no
        gradient of a gradient); T1 if the forward array is closed.
    TypeError
        If ``source`` is not a str (or bytes, which is decoded).

    Notes
    -----
    Mirrors ``TensorArrayGradOp`` (TensorFlow
    semantics reference: :ref:`sem-grad-op`).  A second call with the same
    ``source`` returns the same array unchanged.  The forward array's
    ``dynamic_size`` is switched off for good.

    Examples
    --------
    >>> import numpy as np
    >>> h, f = TensorArrayV3(size=2, dtype=np.float32, element_shape=[3])
    >>> g, gf = TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
    >>> g.name == h.name + "@gradients", gf
    (True, np.float32(0.0))
    >>> _ = TensorArrayWriteV3(handle=g, index=0, value=np.ones(3, np.float32), flow_in=gf)
    >>> _ = TensorArrayWriteV3(handle=g, index=0, value=np.ones(3, np.float32), flow_in=gf)
    >>> TensorArrayReadV3(handle=g, index=0, flow_in=gf, dtype=np.float32)
    array([2., 2., 2.], dtype=float32)
    """
    try:
        return TensorArrayGradV3Result(*_grad("TensorArrayGradV3", handle, flow_in, source, _NO_PREPEND))
    except (OpError, SystemError) as e:
        raise op_error(e, "TensorArrayGradV3") from None


def TensorArrayGradWithShape(
    handle: TensorArrayHandle,
    flow_in: float | np.floating[Any],
    shape_to_prepend: npt.ArrayLike | TensorShape,
    source: str | bytes,
    name: str | None = None,
) -> TensorArrayGradWithShapeResult:
    """Gradient array whose elements have extra leading dimensions (``tf.raw_ops.TensorArrayGradWithShape``).

    Parameters
    ----------
    handle : TensorArrayHandle
        The forward array.
    flow_in : float
        Flow token.
    shape_to_prepend : (k,) array_like of int
        Dimensions put in front of each element's shape, ``>= 0``.
    source : str
        As for :func:`TensorArrayGradV3`; the key is shared with it, and the
        first op to create it wins (a later ``shape_to_prepend`` is ignored).
    name : str, optional
        Ignored.

    Returns
    -------
    grad_handle : TensorArrayHandle
        The gradient array; its element shape is ``shape_to_prepend`` followed
        by the forward element shape (unknown when that rank is unknown).
    flow_out : np.float32
        ``0.0``.

    Raises
    ------
    InvalidArgumentError
        As :func:`TensorArrayGradV3`, and ``shape must be a vector of
        {int32,int64}, got shape <S>`` or ``Dimension <d> must be >= 0`` for
        a bad ``shape_to_prepend``.
    TypeError
        If ``source`` is not a str (or bytes, which is decoded).

    Notes
    -----
    Mirrors ``TensorArrayGradOp`` with its third input (TensorFlow
    semantics reference: :ref:`sem-grad-op`); TF's
    ``pfor`` uses it to accumulate per-iteration gradients.

    Examples
    --------
    >>> import numpy as np
    >>> h, f = TensorArrayV3(size=1, dtype=np.float32, element_shape=[2])
    >>> f = TensorArrayWriteV3(handle=h, index=0, value=np.ones(2, np.float32), flow_in=f)
    >>> g, gf = TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=[3], source="pfor")
    >>> TensorArrayReadV3(handle=g, index=0, flow_in=gf, dtype=np.float32).shape
    (3, 2)
    """
    try:
        out = _grad("TensorArrayGradWithShape", handle, flow_in, source, shape_to_prepend)
        return TensorArrayGradWithShapeResult(*out)
    except (OpError, SystemError) as e:
        raise op_error(e, "TensorArrayGradWithShape") from None
