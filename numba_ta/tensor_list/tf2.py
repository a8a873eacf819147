"""``tf.TensorArray`` as TensorFlow 2 runs it inside ``tf.function``: on TensorList ops.

In TensorFlow 2, a ``tf.TensorArray`` inside ``tf.function``, ``tf.while_loop``,
``tf.scan`` or ``tf.map_fn`` is TensorFlow's ``_GraphTensorArrayV2``: its state is
one TensorList (the ``flow``), each method is a TensorList op, and the rules are
the list's: an element may be written again, reads do not clear, unwritten
elements read as zeros when the element shape allows.  :class:`TF2TensorArray`
is that class on numba_ta's TensorList ops, for code migrated from TensorFlow 2.
:class:`numba_ta.TensorArray` stays the graph-mode (TF1) class, on the
TensorArray V3 ops.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from numba_ta.tensor_list import bulk_ops as _bulk_ops
from numba_ta.tensor_list import convert as _convert
from numba_ta.tensor_list import ops as _list_ops
from numba_ta.tensor_list.store import VARIANT, TensorListHandle
from numba_ta.tf import messages as _messages
from numba_ta.tf.dtypes import graph_array, to_index_array
from numba_ta.tf.tensor_shape import TensorShape, as_partial, is_compatible, merge

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["TF2TensorArray"]


def _shape_tensor(shape: TensorShape) -> Any:
    """``list_ops._build_element_shape`` of a ``TensorShape``: -1, or the dimensions with -1 for unknown ones."""
    dims = shape._dims
    if dims is None:
        return -1
    if not dims:
        return np.zeros(0, np.int32)
    return [-1 if d is None else d for d in dims]


class _Config:
    """What the arrays made from one :class:`TF2TensorArray` share: its arguments and the element shape."""

    __slots__ = ("dtype", "dynamic_size", "grow", "size", "infer_shape", "element_shape")

    def __init__(self, dtype: Any, dynamic_size: bool | None, size: Any, infer_shape: bool, element_shape: Any) -> None:
        self.dtype: np.dtype[Any] = _convert._element_dtype(dtype, "dtype")
        self.dynamic_size = dynamic_size
        self.grow = bool(dynamic_size)  # TensorListSetItem's resize_if_index_out_of_bounds
        self.size = size
        self.infer_shape = infer_shape
        self.element_shape = TensorShape(as_partial(element_shape))  # refined by writes (infer_shape)


_new = object.__new__
_set_item = _list_ops.TensorListSetItem


class TF2TensorArray:
    """``tf.TensorArray`` with TensorFlow 2's ``tf.function`` semantics, on the TensorList ops.

    Parameters
    ----------
    dtype : numpy dtype, str, tf.DType or int
        The elements' dtype (``object`` for a list of variants).
    size : int, optional
        The initial number of elements (all unwritten); required unless
        ``flow`` is given.
    dynamic_size : bool, optional
        Whether writes past the end grow the array (default False: they
        raise).
    clear_after_read : bool, optional
        Ignored, as in TF 2: reads never clear.
    tensor_array_name : str, optional
        Ignored.
    handle : None
        Must be None: the array's state is its ``flow``.
    flow : TensorListHandle, optional
        An existing list to wrap (instead of ``size``).
    infer_shape : bool, optional
        Whether writes refine the element shape (default True).
    element_shape : shape, optional
        The element shape (None: unknown).
    colocate_with_first_write_call : bool, optional
        Ignored.
    name : str, optional
        Ignored.

    Raises
    ------
    ValueError
        ``handle`` given, ``size`` and ``flow`` both given or both missing,
        ``flow`` and ``element_shape`` both given (TF's texts).
    TypeError
        ``flow`` is not a list.

    Notes
    -----
    Mirrors ``tf.TensorArray`` inside ``tf.function`` in TensorFlow 2
    (``_GraphTensorArrayV2``, ``tensor_array_ops.py``): ``write`` is
    ``TensorListSetItem`` (with ``resize_if_index_out_of_bounds=dynamic_size``),
    ``read`` ``TensorListGetItem``, ``stack`` ``TensorListStack`` (with
    ``num_elements=size`` for a static size), ``gather``, ``scatter``
    (``TensorListScatterIntoExistingList``), ``unstack``
    (``TensorListFromTensor``), ``split``, ``concat`` (``TensorListConcatV2``)
    and ``size`` (``TensorListLength`` for a dynamic size).  Every method that
    changes the array returns a new object; the old one still holds its list.
    The errors are the ops' (:ref:`tl-semantics`) and TF's Python checks.
    There are no gradient arrays: ``grad`` raises ``NotImplementedError``, as
    in TF 2 (gradients go through :mod:`numba_ta.gradients`).

    Examples
    --------
    >>> import numpy as np
    >>> ta = TF2TensorArray(np.float32, size=0, dynamic_size=True)
    >>> for t in range(3):
    ...     ta = ta.write(t, np.full(2, t, np.float32))
    >>> ta = ta.write(0, np.full(2, 9, np.float32))   # overwriting is allowed
    >>> ta.read(0), ta.read(0)                          # reads do not clear
    (array([9., 9.], dtype=float32), array([9., 9.], dtype=float32))
    >>> ta.stack()
    array([[9., 9.],
           [1., 1.],
           [2., 2.]], dtype=float32)
    """

    __slots__ = ("_flow", "_c")

    def __init__(
        self,
        dtype: Any,
        size: Any = None,
        dynamic_size: bool | None = None,
        clear_after_read: bool | None = None,
        tensor_array_name: str | None = None,
        handle: Any = None,
        flow: TensorListHandle | None = None,
        infer_shape: bool = True,
        element_shape: Any = None,
        colocate_with_first_write_call: bool = True,
        name: str | None = None,
    ) -> None:
        if handle is not None:
            raise ValueError("handle must be None: a TF2 TensorArray's state is its flow (a TensorList)")
        if flow is not None and not isinstance(flow, TensorListHandle):
            dt = getattr(flow, "dtype", type(flow).__name__)
            raise TypeError(f"Expected `flow` to be a variant tensor, but received `{dt}` instead.")
        if flow is None and size is None:
            raise ValueError("Argument `size` must be provided if argument `flow` is not provided.")
        if flow is not None and size is not None:
            raise ValueError("Cannot provide both `flow` and `size` arguments at the same time.")
        if flow is not None and element_shape is not None:
            raise ValueError("Cannot provide both `flow` and `element_shape` argumentsat the same time.")
        # shared by the arrays made from this one (the element shape a write refines included)
        c = self._c = _Config(dtype, dynamic_size, size, infer_shape, element_shape)
        if flow is None:
            flow = _list_ops.TensorListReserve(
                element_shape=_shape_tensor(c.element_shape), num_elements=size, element_dtype=c.dtype
            )
        self._flow = flow

    # ------------------------------------------------------------------ properties
    @property
    def flow(self) -> TensorListHandle:
        """TensorListHandle: the list holding the elements."""
        return self._flow

    @property
    def dtype(self) -> np.dtype[Any]:
        """numpy.dtype: the elements' dtype."""
        return self._c.dtype

    @property
    def element_shape(self) -> TensorShape:
        """TensorShape: the element shape known so far (refined by writes when ``infer_shape``)."""
        return self._c.element_shape

    @property
    def handle(self) -> None:
        """None, as in TF 2 (the state is the ``flow``)."""
        return None

    @property
    def dynamic_size(self) -> bool:
        """bool: whether writes past the end grow the array."""
        return bool(self._c.dynamic_size)

    def _with_flow(self, flow: TensorListHandle) -> TF2TensorArray:
        """TF's ``build_ta_with_new_flow``: a new object on ``flow``, sharing the element-shape cell."""
        new = _new(TF2TensorArray)
        new._flow, new._c = flow, self._c
        return new

    def _check_element_shape(self, shape: tuple[int | None, ...] | None) -> None:
        """TF's ``_check_element_shape``: ValueError when incompatible; refine the shape when inferring."""
        es = self._c.element_shape._dims
        if es == shape:
            return  # compatible, and merging changes nothing
        if not is_compatible(es, shape):
            raise _messages.python_error("NT-class-shapes", shape=TensorShape(shape), element_shape=TensorShape(es))
        if self._c.infer_shape:
            merged = merge(es, shape)
            if merged != es:
                self._c.element_shape = TensorShape(merged)

    def _value(self, value: Any) -> Any:
        if self._c.dtype == VARIANT:
            return _convert._value(value, "value")
        return graph_array(value, self._c.dtype)

    # ------------------------------------------------------------------ methods
    def identity(self) -> TF2TensorArray:
        """Return a new object on the same list (``tf.TensorArray.identity``).

        Returns
        -------
        TF2TensorArray
            The same elements and element shape.

        Examples
        --------
        >>> import numpy as np
        >>> TF2TensorArray(np.int32, size=2).identity().size()
        np.int32(2)
        """
        return self._with_flow(self._flow)

    def grad(self, source: str, flow: Any = None, name: str | None = None) -> None:
        """Raise ``NotImplementedError``: TF 2's TensorArray has no gradient arrays.

        Parameters
        ----------
        source : str
            The gradient source (unused).
        flow : object, optional
            Unused.
        name : str, optional
            Ignored.

        Raises
        ------
        NotImplementedError
            Always, as ``_GraphTensorArrayV2.grad``.

        Examples
        --------
        >>> import numpy as np
        >>> TF2TensorArray(np.float32, size=1).grad("gradients")
        Traceback (most recent call last):
        ...
        NotImplementedError
        """
        raise NotImplementedError()

    def read(self, index: Any, name: str | None = None) -> Any:
        """Return element ``index`` (``TensorListGetItem``); an unwritten one reads as zeros.

        Parameters
        ----------
        index : int
            The element.
        name : str, optional
            Ignored.

        Returns
        -------
        ndarray or object
            A copy of the element; zeros of the element shape when unwritten.

        Raises
        ------
        InvalidArgumentError
            As :func:`numba_ta.raw_ops.TensorListGetItem` (out of range; an
            unwritten element whose shape is not known).

        Examples
        --------
        >>> import numpy as np
        >>> TF2TensorArray(np.float32, size=2, element_shape=[3]).read(1)
        array([0., 0., 0.], dtype=float32)
        """
        es, dt = _shape_tensor(self.element_shape), self._c.dtype
        return _list_ops.TensorListGetItem(input_handle=self._flow, index=index, element_shape=es, element_dtype=dt)

    def write(self, index: Any, value: npt.ArrayLike, name: str | None = None) -> TF2TensorArray:
        """Write ``value`` to element ``index`` (``TensorListSetItem``); overwriting is allowed.

        Parameters
        ----------
        index : int
            The element; past the end only with ``dynamic_size``.
        value : array_like
            The element, converted with the array's dtype preferred.
        name : str, optional
            Ignored.

        Returns
        -------
        TF2TensorArray
            A new object on the new list.

        Raises
        ------
        ValueError
            ``Inconsistent shapes: saw ... but expected ...`` (TF's text) when
            the value does not fit the element shape.
        InvalidArgumentError
            As :func:`numba_ta.raw_ops.TensorListSetItem` (another dtype, out
            of range).

        Examples
        --------
        >>> import numpy as np
        >>> ta = TF2TensorArray(np.int32, size=1).write(0, [1, 2]).write(0, [3, 4])
        >>> ta.read(0)
        array([3, 4], dtype=int32)
        """
        c = self._c
        if type(value) is np.ndarray and value.dtype is c.dtype and value.shape == c.element_shape._dims:
            v = value  # the common case: nothing to convert, the shape fits and stays
        else:
            v = self._value(value)
            self._check_element_shape(v.shape)
        new = _new(TF2TensorArray)  # (self._with_flow, inline)
        new._flow, new._c = _set_item(self._flow, index, v, c.grow), c
        return new

    def stack(self, name: str | None = None) -> Any:
        """Return all elements stacked (``TensorListStack``; ``num_elements=size`` for a static size).

        Parameters
        ----------
        name : str, optional
            Ignored.

        Returns
        -------
        ndarray
            ``(size,) + element shape``; unwritten elements are zeros.

        Raises
        ------
        InvalidArgumentError
            As :func:`numba_ta.raw_ops.TensorListStack`.

        Examples
        --------
        >>> import numpy as np
        >>> TF2TensorArray(np.float32, size=2, element_shape=[1]).write(1, [5.0]).stack()
        array([[0.],
               [5.]], dtype=float32)
        """
        ne = -1 if self._c.dynamic_size or self._c.size is None else int(self._c.size)
        return _bulk_ops.TensorListStack(
            input_handle=self._flow,
            element_shape=_shape_tensor(self.element_shape),
            element_dtype=self._c.dtype,
            num_elements=ne,
        )

    def gather(self, indices: npt.ArrayLike, name: str | None = None) -> Any:
        """Return the elements at ``indices`` stacked (``TensorListGather``).

        Parameters
        ----------
        indices : array_like of int
            The elements.
        name : str, optional
            Ignored.

        Returns
        -------
        ndarray
            ``(len(indices),) + element shape``.

        Raises
        ------
        InvalidArgumentError
            As :func:`numba_ta.raw_ops.TensorListGather`.

        Examples
        --------
        >>> import numpy as np
        >>> ta = TF2TensorArray(np.int32, size=3).unstack(np.arange(3, dtype=np.int32))
        >>> ta.gather([2, 0])
        array([2, 0], dtype=int32)
        """
        return _bulk_ops.TensorListGather(
            input_handle=self._flow,
            indices=indices,
            element_shape=_shape_tensor(self.element_shape),
            element_dtype=self._c.dtype,
        )

    def concat(self, name: str | None = None) -> Any:
        """Return the elements joined along their first axis (``TensorListConcatV2``).

        Parameters
        ----------
        name : str, optional
            Ignored.

        Returns
        -------
        ndarray
            The elements joined.

        Raises
        ------
        InvalidArgumentError
            As :func:`numba_ta.raw_ops.TensorListConcatV2`.

        Examples
        --------
        >>> import numpy as np
        >>> ta = TF2TensorArray(np.float64, size=2).split(np.arange(3.0), [1, 2])
        >>> ta.concat()
        array([0., 1., 2.])
        """
        dims = self.element_shape._dims
        es = -1 if dims is None else [-1] + [-1 if d is None else d for d in dims[1:]]
        return _bulk_ops.TensorListConcatV2(
            input_handle=self._flow, element_shape=es, leading_dims=np.zeros(0, np.int64), element_dtype=self._c.dtype
        ).tensor

    def unstack(self, value: npt.ArrayLike, name: str | None = None) -> TF2TensorArray:
        """Return an array of the rows of ``value`` (``TensorListFromTensor``).

        Parameters
        ----------
        value : array_like, at least 1-d
            Row ``k`` becomes element ``k`` (the array takes its length).
        name : str, optional
            Ignored.

        Returns
        -------
        TF2TensorArray
            A new object on the new list.

        Raises
        ------
        ValueError
            The rows do not fit the element shape (TF's text).
        InvalidArgumentError
            As :func:`numba_ta.raw_ops.TensorListFromTensor`.

        Examples
        --------
        >>> import numpy as np
        >>> TF2TensorArray(np.float32, size=4).unstack(np.ones((4, 2), np.float32)).stack().shape
        (4, 2)
        """
        v = self._value(value)
        self._check_element_shape(v.shape[1:])  # (a scalar's is (): TF checks it so, then the op refuses it)
        flow = _list_ops.TensorListFromTensor(tensor=v, element_shape=list(v.shape[1:]))
        return self._with_flow(flow)

    def scatter(self, indices: npt.ArrayLike, value: npt.ArrayLike, name: str | None = None) -> TF2TensorArray:
        """Write row ``k`` of ``value`` to element ``indices[k]`` (``TensorListScatterIntoExistingList``).

        Parameters
        ----------
        indices : (k,) array_like of int
            The elements; past the end, the list grows.
        value : array_like of shape (k, ...)
            The rows.
        name : str, optional
            Ignored.

        Returns
        -------
        TF2TensorArray
            A new object on the new list.

        Raises
        ------
        ValueError
            The rows do not fit the element shape (TF's text).
        InvalidArgumentError
            As :func:`numba_ta.raw_ops.TensorListScatterIntoExistingList`.

        Examples
        --------
        >>> import numpy as np
        >>> ta = TF2TensorArray(np.int32, size=3, element_shape=[]).scatter([2, 0], np.array([7, 8], np.int32))
        >>> ta.stack()
        array([8, 0, 7], dtype=int32)
        """
        v = self._value(value)
        self._check_element_shape(v.shape[1:])
        flow = _bulk_ops.TensorListScatterIntoExistingList(input_handle=self._flow, tensor=v, indices=indices)
        return self._with_flow(flow)

    def split(self, value: npt.ArrayLike, lengths: npt.ArrayLike, name: str | None = None) -> TF2TensorArray:
        """Return an array of the pieces of ``value`` along its first axis (``TensorListSplit``).

        Parameters
        ----------
        value : array_like, at least 1-d
            The values.
        lengths : (k,) array_like of int
            The rows of each piece.
        name : str, optional
            Ignored.

        Returns
        -------
        TF2TensorArray
            A new object on the new list.

        Raises
        ------
        ValueError
            Pieces of one length that do not fit the element shape (TF's text,
            as ``tf.function`` checks constant lengths).
        InvalidArgumentError
            As :func:`numba_ta.raw_ops.TensorListSplit`.

        Examples
        --------
        >>> import numpy as np
        >>> TF2TensorArray(np.float32, size=2).split(np.ones((4, 3), np.float32), [2, 2]).element_shape
        TensorShape([2, 3])
        """
        v = self._value(value)
        lens = to_index_array(lengths, "lengths", np.int64)
        if lens.ndim == 1 and lens.max() == lens.min():  # (no lengths: numpy's ValueError, as in TF)
            self._check_element_shape((int(lens[0]), *v.shape[1:]))
        flow = _bulk_ops.TensorListSplit(tensor=v, element_shape=_shape_tensor(self.element_shape), lengths=lens)
        return self._with_flow(flow)

    def size(self, name: str | None = None) -> np.int32:
        """Return the number of elements: ``size`` for a static size, else ``TensorListLength``.

        Parameters
        ----------
        name : str, optional
            Ignored.

        Returns
        -------
        numpy.int32
            The size.

        Examples
        --------
        >>> import numpy as np
        >>> TF2TensorArray(np.float32, size=0, dynamic_size=True).write(4, 1.0).size()
        np.int32(5)
        """
        if not self._c.dynamic_size and self._c.size is not None:
            return np.int32(self._c.size)
        return _list_ops.TensorListLength(input_handle=self._flow)

    def close(self, name: str | None = None) -> None:
        """Do nothing (TF 2's ``close`` is a no-op).

        Parameters
        ----------
        name : str, optional
            Ignored.

        Examples
        --------
        >>> import numpy as np
        >>> TF2TensorArray(np.float32, size=1).close()
        """

    def __repr__(self) -> str:
        """Return ``TF2TensorArray(dtype=..., size=..., element_shape=..., dynamic_size=...)``."""
        return (
            f"TF2TensorArray(dtype={self._c.dtype}, size={int(self.size())}, element_shape={self.element_shape}, "
            f"dynamic_size={self.dynamic_size})"
        )
