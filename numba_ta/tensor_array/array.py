"""``TensorArray``: tf.TensorArray's class with graph-mode (TF1) semantics, over :mod:`numba_ta.raw_ops`."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, SupportsIndex

import numpy as np

from numba_ta import raw_ops
from numba_ta.core.memory import arange
from numba_ta.tensor_array.registry import TensorArrayHandle
from numba_ta.tf import messages as _messages
from numba_ta.tf.dtypes import as_dtype, graph_array, to_index_array
from numba_ta.tf.tensor_shape import TensorShape

if TYPE_CHECKING:
    import numpy.typing as npt

__all__ = ["TensorArray"]


class TensorArray:
    """A list of tensors of one dtype, with TF's TensorArray semantics (``tf.TensorArray``).

    This is graph-mode ``tf.TensorArray`` (``_GraphTensorArray``): each
    element is written once, reads clear the element by default, unwritten
    elements read as zeros when the element shape is fully defined, and
    :meth:`grad` gives a gradient array that sums repeated writes.  Methods
    that write return a new ``TensorArray`` carrying the new flow: use it
    for the following operations, as in TF.

    Parameters
    ----------
    dtype : numpy dtype, str or tf.DType
        Element dtype.
    size : int, optional
        Initial number of elements; required unless ``handle`` is given.
    dynamic_size : bool, optional
        Whether writes past the end grow the array (default False).
    clear_after_read : bool, optional
        Whether a read frees the element so it can be read only once
        (default True).
    tensor_array_name : str, optional
        Base of the unique name.
    handle : TensorArrayHandle, optional
        Wrap an existing array (then ``flow`` is required).
    flow : float, optional
        Flow token of an existing array.
    infer_shape : bool, optional
        Whether all elements must share one shape, fixed by the first write
        (default True); the kernel's ``identical_element_shapes``.
    element_shape : None or sequence of (int or None), optional
        Expected element shape.
    colocate_with_first_write_call : bool, optional
        Accepted and ignored (device placement; CPU only here).
    name : str, optional
        Base of the unique name when ``tensor_array_name`` is not given
        (default ``"TensorArray"``).

    Raises
    ------
    ValueError
        For TF's argument conflicts, e.g. ``Cannot provide both `handle` and
        `tensor_array_name` arguments at the same time.``, ``Argument `size`
        must be provided if handle is not provided.``, ``flow must not be
        None if handle is not None.``
    TypeError
        If ``handle`` is not a TensorArray handle.
    InvalidArgumentError
        From :func:`numba_ta.raw_ops.TensorArrayV3` (negative size).

    See Also
    --------
    numba_ta.raw_ops.TensorArrayV3 : the op this class creates.

    Notes
    -----
    Mirrors ``tf.TensorArray`` as built in a TF1 graph (TensorFlow semantics
    reference: :ref:`sem-class`), not TF2's eager list (:ref:`sem-eager`):
    overwriting an element raises, reads clear.
    The Python-side element shape is shared by every ``TensorArray`` object
    of the same array (those returned by identity, grad, compiled code ...).
    ``write``, ``scatter``, ``unstack`` and ``split`` return the object
    itself: their flow is ``flow_in`` unchanged (TF's kernels pass it
    through), so a new object would differ from it in nothing but identity,
    and making one cost a quarter of a microsecond per write.

    Pickling, ``copy.deepcopy`` and passing an array to another process
    (``multiprocessing``, any start method) copy it by value: the elements
    that hold data (and only their bytes, never unused room of the buffer),
    every element's state (written, read, cleared, soft zero) and shape, the
    size, the flags (``dynamic_size``, ``clear_after_read``, ``infer_shape``,
    closed, the dynamic-size lock of a forward array whose gradient exists),
    the element shape, the dtype and the flow.  The copy is a new,
    independent array with a new unique name (``<name>_<counter>`` with the
    original's ``<name>``), registered, with its own lock.  A forward
    array's gradient arrays are part of its state and come along: the
    copy's ``grad(source)`` returns the copy of each (named ``<new forward
    name>@<source>``), which is also the copy of a gradient object pickled
    with it.  A gradient array pickled without its forward array comes back
    as an independent gradient array.  Objects of one array pickled together
    share the copy (and its Python-side element shape).  ``copy.copy`` is
    :meth:`identity`: a new object over the *same* array.  Unpickle only
    data you trust (this is ``pickle``).

    An array can be passed to and returned from ``@numba.njit`` functions,
    where it has the methods ``write``, ``read``, ``gather``, ``scatter``,
    ``stack``, ``unstack``, ``concat``, ``split``, ``size`` and
    ``element_shape``; it can also be created there, with ``element_shape``
    given as a tuple (the user guide's page "TensorArray in compiled code").

    Examples
    --------
    >>> import numpy as np
    >>> ta = TensorArray(np.float32, size=3)
    >>> ta = ta.unstack(np.arange(6, dtype=np.float32).reshape(3, 2))
    >>> ta.read(2)
    array([4., 5.], dtype=float32)
    >>> ta = TensorArray(np.float32, size=0, dynamic_size=True, clear_after_read=False)
    >>> for t in range(3):
    ...     ta = ta.write(t, np.full(2, t, np.float32))
    >>> ta.stack()
    array([[0., 0.],
           [1., 1.],
           [2., 2.]], dtype=float32)
    >>> import pickle
    >>> ta2 = pickle.loads(pickle.dumps(ta))       # by value: a new array
    >>> ta2.handle == ta.handle, ta2.read(2)
    (False, array([2., 2.], dtype=float32))
    """

    # slots: identity, grad and the objects compiled code returns are new objects, and copying
    # seven slots costs well under half of copying an instance __dict__
    __slots__ = (
        "_dtype",
        "_dynamic_size",
        "_infer_shape",
        "_element_shape",
        "_handle",
        "_flow",
        "_size",
        "__weakref__",
    )

    _dtype: np.dtype[Any]
    _dynamic_size: bool
    _infer_shape: bool
    _element_shape: list[TensorShape]
    _handle: TensorArrayHandle
    _flow: np.float32
    _size: int | None

    def __init__(
        self,
        dtype: npt.DTypeLike | int,
        size: int | np.integer[Any] | None = None,
        dynamic_size: bool | None = None,
        clear_after_read: bool | None = None,
        tensor_array_name: str | None = None,
        handle: TensorArrayHandle | None = None,
        flow: float | np.floating[Any] | None = None,
        infer_shape: bool = True,
        element_shape: TensorShape | Sequence[int | None] | None = None,
        colocate_with_first_write_call: bool = True,
        name: str | None = None,
    ) -> None:
        if handle is not None and tensor_array_name:
            raise _messages.python_error("NT-class-handle-and-name")
        if handle is not None and not isinstance(handle, TensorArrayHandle):
            raise _messages.python_error("NT-class-handle-type", handle=handle, handle_type=type(handle))
        if handle is None and size is None:
            raise _messages.python_error("NT-class-no-size")
        if handle is not None and size is not None:
            raise _messages.python_error("NT-class-handle-and-size")
        if handle is not None and element_shape is not None:
            raise _messages.python_error("NT-class-handle-and-shape")
        if handle is not None and dynamic_size is not None:
            raise _messages.python_error("NT-class-handle-and-dynamic")
        if handle is not None and clear_after_read is not None:
            raise _messages.python_error("NT-class-handle-and-clear")
        if clear_after_read is None:
            clear_after_read = True
        self._dtype = as_dtype(dtype)
        self._dynamic_size = bool(dynamic_size)
        self._infer_shape = bool(infer_shape)
        self._element_shape = [TensorShape(element_shape)]
        if handle is not None:
            if flow is None:
                raise _messages.python_error("NT-class-no-flow")
            self._handle = handle
            self._flow = np.float32(flow)
            self._size = None
            self._dynamic_size = handle._storage.dynamic_size
        else:
            assert size is not None  # NT-class-no-size above
            self._handle, flow0 = raw_ops.TensorArrayV3(
                size=size,
                dtype=self._dtype,
                element_shape=self._element_shape[0],
                dynamic_size=self._dynamic_size,
                clear_after_read=clear_after_read,
                identical_element_shapes=self._infer_shape,
                tensor_array_name=tensor_array_name or name or "TensorArray",
            )
            self._flow = flow0 if flow is None else np.float32(flow)
            self._size = int(size)

    # ------------------------------------------------------------------ properties
    @property
    def dtype(self) -> np.dtype[Any]:
        """numpy.dtype: the element dtype."""
        return self._dtype

    @property
    def handle(self) -> TensorArrayHandle:
        """TensorArrayHandle: the array's handle, for :mod:`numba_ta.raw_ops`."""
        return self._handle

    @property
    def flow(self) -> np.float32:
        """numpy.float32: the flow token of this object."""
        return self._flow

    @property
    def element_shape(self) -> TensorShape:
        """TensorShape: the element shape known so far (shared by all objects of this array)."""
        return self._element_shape[0]

    @property
    def dynamic_size(self) -> bool:
        """bool: whether the array was created growable."""
        return self._dynamic_size

    # ------------------------------------------------------------------ helpers
    def _with_flow(self, flow: np.float32) -> TensorArray:
        ta = object.__new__(TensorArray)
        ta._dtype = self._dtype
        ta._dynamic_size = self._dynamic_size
        ta._infer_shape = self._infer_shape
        ta._element_shape = self._element_shape  # a one-item list: shared, as TF shares it
        ta._handle = self._handle
        ta._flow = flow
        ta._size = self._size
        return ta

    def _merged_shape(self, shape: tuple[int | None, ...]) -> TensorShape:
        """TF's ``_check_element_shape``: the element shape after seeing ``shape`` (not yet stored)."""
        es = self._element_shape[0]
        if es._dims == shape or (es._dims is None and not self._infer_shape):  # (an unknown rank fits any shape)
            return es
        if not es.is_compatible_with(shape):
            raise _messages.python_error("NT-class-shapes", shape=TensorShape(shape), element_shape=es)
        return es.merge_with(shape) if self._infer_shape else es

    # ------------------------------------------------------------------ methods
    def identity(self) -> TensorArray:
        """Return a new TensorArray object for the same array and flow (``tf.TensorArray.identity``).

        Returns
        -------
        TensorArray
            A new object over the same array, with the same flow.

        Examples
        --------
        >>> import numpy as np
        >>> ta = TensorArray(np.float32, size=1)
        >>> ta.identity().handle == ta.handle
        True
        """
        return self._with_flow(self._flow)

    def grad(
        self, source: str | bytes, flow: float | np.floating[Any] | None = None, name: str | None = None
    ) -> TensorArray:
        """Return the gradient array of this array for gradient computation ``source`` (``tf.TensorArray.grad``).

        Parameters
        ----------
        source : str
            Name of the gradient computation, e.g. ``"gradients"``.
        flow : float, optional
            Flow token; defaults to this object's flow.
        name : str, optional
            Ignored.

        Returns
        -------
        TensorArray
            Over ``TensorArrayGradV3(handle, flow, source)``; its flow is
            ``flow``.  It shares this array's Python-side element shape.

        Raises
        ------
        InvalidArgumentError
            For a gradient array (``Wrong input container. ...``) or a closed
            array (T1).

        Notes
        -----
        Locks this array's dynamic size for good, as TF does.

        Examples
        --------
        >>> import numpy as np
        >>> ta = TensorArray(np.float32, size=2, element_shape=[2])
        >>> g = ta.grad("gradients")
        >>> g.read(1)
        array([0., 0.], dtype=float32)
        """
        if flow is None:
            flow = self._flow
        g_handle, _ = raw_ops.TensorArrayGradV3(handle=self._handle, flow_in=flow, source=source)
        g = TensorArray(
            self._dtype, handle=g_handle, flow=flow, infer_shape=self._infer_shape, colocate_with_first_write_call=False
        )
        g._element_shape = self._element_shape
        return g

    def read(self, index: SupportsIndex, name: str | None = None) -> npt.NDArray[Any]:
        """Read element ``index`` (``tf.TensorArray.read``; op ``TensorArrayReadV3``).

        Parameters
        ----------
        index : int
            Element index.
        name : str, optional
            Ignored.

        Returns
        -------
        ndarray
            A copy of the element, shape ``element_shape``.

        Raises
        ------
        InvalidArgumentError
            As :func:`numba_ta.raw_ops.TensorArrayReadV3` (out of range,
            cleared, unwritten with a partial element shape, closed).

        Examples
        --------
        >>> import numpy as np
        >>> ta = TensorArray(np.int32, size=2).write(0, [1, 2])
        >>> ta.read(0)
        array([1, 2], dtype=int32)
        """
        return self._handle._storage.op_read(index, self._dtype)

    def write(self, index: SupportsIndex, value: npt.ArrayLike, name: str | None = None) -> TensorArray:
        """Write ``value`` to element ``index`` (``tf.TensorArray.write``; op ``TensorArrayWriteV3``).

        Parameters
        ----------
        index : int
            Element index.
        value : array_like
            The element, converted as graph-mode ``tf.TensorArray`` converts
            it (``preferred_dtype``): numpy arrays and array-likes are cast to
            this array's dtype with ``astype``; Python values are cast when
            TF's type check lets them, else the write's dtype check raises.
        name : str, optional
            Ignored.

        Returns
        -------
        TensorArray
            This array: a write leaves the flow as it was, so numba_ta returns the
            object itself (graph-mode TF returns a new object holding the new flow
            tensor, eager TF the array itself; use the result, as in TF).

        Raises
        ------
        ValueError
            ``"Inconsistent shapes: saw (3,) but expected (2,) "`` (TF's text,
            trailing space included) when the value's shape does not fit the
            element shape.
        InvalidArgumentError
            As :func:`numba_ta.raw_ops.TensorArrayWriteV3`.

        Examples
        --------
        >>> import numpy as np
        >>> ta = TensorArray(np.float64, size=1).write(0, [1, 2])
        >>> ta.read(0)
        array([1., 2.])
        """
        if type(value) is np.ndarray and value.dtype is self._dtype:
            dims = self._element_shape[0]._dims
            if value.shape == dims or (dims is None and not self._infer_shape):
                # the common case: nothing to convert or merge (same checks, same errors)
                self._handle._storage.op_write(index, value)
                return self
        v = graph_array(value, self._dtype)
        merged = self._merged_shape(v.shape)
        if merged is self._element_shape[0]:  # the shape stays (infer_shape=False, or a partial shape it fits)
            self._handle._storage.op_write(index, v)
        else:  # the array's commit also stores the merged shape: both change, or neither
            self._handle._storage.op_write(index, v, self._element_shape, merged)
        return self

    def stack(self, name: str | None = None, *, copy: bool = True) -> npt.NDArray[Any]:
        """All elements stacked along a new first axis (``tf.TensorArray.stack``).

        Parameters
        ----------
        name : str, optional
            Ignored.
        copy : bool, optional
            numba_ta extension.  True (default, as TF): return a new array.
            False: return a read-only view of the array's storage when its
            elements lie in order in one dense buffer (zero copy), else a copy.

        Returns
        -------
        (size, *element_shape) ndarray
            With ``copy=False`` possibly a read-only view; it stays valid and
            unchanged after ``close`` or growth, because TF's rules forbid
            writing an element once it has been read.

        Raises
        ------
        InvalidArgumentError
            As :meth:`gather` over ``range(size())``.
        UnimplementedError
            For an empty array whose element shape is not fully defined.

        Notes
        -----
        ``stack`` is ``gather(range(size()))``, so it reads (and with
        ``clear_after_read`` clears) every element, as in TF.

        Examples
        --------
        >>> import numpy as np
        >>> TensorArray(np.float32, size=2, element_shape=[1]).write(1, [5.0]).stack()
        array([[0.],
               [5.]], dtype=float32)
        >>> v = TensorArray(np.float32, size=2).unstack(np.ones((2, 3), np.float32)).stack(copy=False)
        >>> v.flags.writeable
        False
        """
        return self._gather(arange(int(self.size()), np.int32), view=not copy)  # TF's range(size), an int32 tensor

    def gather(self, indices: npt.ArrayLike, name: str | None = None) -> npt.NDArray[Any]:
        """Read the given elements into one array (``tf.TensorArray.gather``; op ``TensorArrayGatherV3``).

        Parameters
        ----------
        indices : (n,) array_like of int
            Elements to read.
        name : str, optional
            Ignored.

        Returns
        -------
        (n, *element_shape) ndarray
            Element ``indices[k]`` in row ``k``, a new array.

        Raises
        ------
        InvalidArgumentError, UnimplementedError
            As :func:`numba_ta.raw_ops.TensorArrayGatherV3`.

        Examples
        --------
        >>> import numpy as np
        >>> ta = TensorArray(np.int64, size=3).unstack(np.array([[1], [2], [3]]))
        >>> ta.gather([2, 0])
        array([[3],
               [1]])
        """
        return self._gather(indices, view=False)

    def _gather(self, indices: npt.ArrayLike, view: bool) -> npt.NDArray[Any]:
        es = self._element_shape[0]
        return self._handle._storage.op_gather(indices, self._dtype, es._dims, view)

    def concat(self, name: str | None = None) -> npt.NDArray[Any]:
        """All elements concatenated along axis 0 (``tf.TensorArray.concat``; op ``TensorArrayConcatV3``).

        Parameters
        ----------
        name : str, optional
            Ignored.

        Returns
        -------
        (sum of element lengths, *element_shape[1:]) ndarray
            The elements concatenated, a new array.

        Raises
        ------
        InvalidArgumentError, UnimplementedError
            As :func:`numba_ta.raw_ops.TensorArrayConcatV3`.

        Examples
        --------
        >>> import numpy as np
        >>> ta = TensorArray(np.float32, size=2, infer_shape=False)
        >>> ta = ta.split(np.arange(5, dtype=np.float32), [2, 3])
        >>> ta.concat()
        array([0., 1., 2., 3., 4.], dtype=float32)
        """
        es = self._element_shape[0]._dims
        value, _ = self._handle._storage.op_concat(self._dtype, es[1:] if es else None)
        return value

    def unstack(self, value: npt.ArrayLike, name: str | None = None) -> TensorArray:
        """Write row ``i`` of ``value`` to element ``i`` (``tf.TensorArray.unstack``).

        Parameters
        ----------
        value : (n, *element_shape) array_like
            ``n`` may be less than the size; the tail stays unwritten.
        name : str, optional
            Ignored.

        Returns
        -------
        TensorArray
            This array (see :meth:`write`).

        Raises
        ------
        ValueError, InvalidArgumentError
            As :meth:`scatter` over ``range(n)``; ``n`` past a static size
            gives ``Max scatter index must be < array size (...)``.

        Examples
        --------
        >>> import numpy as np
        >>> TensorArray(np.float32, size=2).unstack([[1.0], [2.0]]).read(1)
        array([2.], dtype=float32)
        """
        if type(value) is not np.ndarray:
            graph_array(value, None)  # TF's array_ops.shape(value) first converts it without a dtype
        v = graph_array(value, self._dtype)
        n = v.shape[0] if v.ndim else 0
        return self._scatter(arange(n, np.int32), v)  # the value as TF's scatter converts it

    def scatter(self, indices: npt.ArrayLike, value: npt.ArrayLike, name: str | None = None) -> TensorArray:
        """Write row ``k`` of ``value`` to element ``indices[k]`` (``tf.TensorArray.scatter``).

        Parameters
        ----------
        indices : (n,) array_like of int
            Destination elements.
        value : (n, *element_shape) array_like
            Rows to write.
        name : str, optional
            Ignored.

        Returns
        -------
        TensorArray
            This array (see :meth:`write`).

        Raises
        ------
        ValueError
            ``Inconsistent shapes: ...`` when the rows do not fit the element
            shape.
        InvalidArgumentError
            As :func:`numba_ta.raw_ops.TensorArrayScatterV3`.

        Examples
        --------
        >>> import numpy as np
        >>> ta = TensorArray(np.float32, size=3, element_shape=[1])
        >>> ta.scatter([2], [[9.0]]).stack()
        array([[0.],
               [0.],
               [9.]], dtype=float32)
        """
        return self._scatter(indices, graph_array(value, self._dtype))

    def _scatter(self, indices: npt.ArrayLike, v: npt.NDArray[Any]) -> TensorArray:
        merged = self._merged_shape(v.shape[1:]) if v.ndim else self._element_shape[0]
        self._handle._storage.op_scatter(indices, v, self._element_shape, merged)
        return self

    def split(self, value: npt.ArrayLike, lengths: npt.ArrayLike, name: str | None = None) -> TensorArray:
        """Split ``value`` along axis 0 into elements of the given lengths (``tf.TensorArray.split``).

        Parameters
        ----------
        value : (sum(lengths), ...) array_like
            Converted to this array's dtype (TF's ``dtype=``): numpy arrays
            are cast, Python values of another type raise ``TypeError``.
        lengths : (size,) array_like of int
            First dimension of each element.
        name : str, optional
            Ignored.

        Returns
        -------
        TensorArray
            This array (see :meth:`write`).

        Raises
        ------
        TypeError
            If ``value`` is a Python value TF's type check refuses for the
            array's dtype (``Expected int32, but got 1.5 of type 'float'.``).
        ValueError
            ``Inconsistent shapes: ...`` when all lengths are equal and the
            elements do not fit the element shape.
        InvalidArgumentError
            As :func:`numba_ta.raw_ops.TensorArraySplitV3`.

        Examples
        --------
        >>> import numpy as np
        >>> ta = TensorArray(np.float32, size=2).split(np.arange(4, dtype=np.float32), [2, 2])
        >>> ta.read(1)
        array([2., 3.], dtype=float32)
        """
        v = graph_array(value, self._dtype, strict=True)
        lens = to_index_array(lengths, "lengths", dtype=np.int64)
        merged = self._element_shape[0]
        if lens.ndim == 1 and lens.size and v.ndim and np.all(lens == lens[0]):
            merged = self._merged_shape((int(lens[0]),) + tuple(v.shape[1:]))
        self._handle._storage.op_split(v, lens, self._element_shape, merged)
        return self

    def size(self, name: str | None = None) -> np.int32:
        """Return the number of elements (``tf.TensorArray.size``).

        Parameters
        ----------
        name : str, optional
            Ignored.

        Returns
        -------
        numpy.int32
            The static size when known, else ``TensorArraySizeV3``.

        Raises
        ------
        InvalidArgumentError
            If the array is closed and its size is not static (T1).

        Examples
        --------
        >>> import numpy as np
        >>> TensorArray(np.float32, size=4).size()
        np.int32(4)
        """
        if not self._dynamic_size and self._size is not None:
            return np.int32(self._size)
        return self._handle._storage.op_size()

    def close(self, name: str | None = None) -> None:
        """Close the array and free its storage (``tf.TensorArray.close``).

        Parameters
        ----------
        name : str, optional
            Ignored.

        Returns
        -------
        None
            Nothing; the array's storage is freed at once.

        Examples
        --------
        >>> import numpy as np
        >>> TensorArray(np.float32, size=1).close()
        """
        self._handle._storage.op_close()

    def __repr__(self) -> str:
        """Return ``<numba_ta.TensorArray '<name>' dtype=... element_shape=... flow=...>``."""
        return (
            f"<numba_ta.TensorArray {self._handle.name!r} dtype={self._dtype} "
            f"element_shape={self._element_shape[0]} flow={float(self._flow)}>"
        )

    # ------------------------------------------------------------------ pickling and copying
    def __getstate__(self) -> dict[str, Any]:
        """Return the object's state for pickle and ``copy.deepcopy``: the array goes by value.

        Returns
        -------
        dict
            ``format`` (1), ``handle`` (pickled with the array's contents), ``flow``
            (float), ``dtype`` (its name), ``dynamic_size``, ``infer_shape``, ``size``
            (int or None) and ``element_shape``: the one-item list shared by the objects
            of the array, so pickled together they share it again.
        """
        return {
            "format": 1,
            "handle": self._handle,
            "flow": float(self._flow),
            "dtype": self._dtype.name,
            "dynamic_size": self._dynamic_size,
            "infer_shape": self._infer_shape,
            "size": self._size,
            "element_shape": self._element_shape,
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Restore the object from :meth:`__getstate__`'s dict.

        Parameters
        ----------
        state : dict
            Format 1.

        Raises
        ------
        ValueError
            If ``state`` is not a format-1 state.
        """
        es = state.get("element_shape") if isinstance(state, dict) else None
        if (
            not isinstance(state, dict)
            or state.get("format") != 1
            or not isinstance(state.get("handle"), TensorArrayHandle)
            or not (isinstance(es, list) and len(es) == 1 and isinstance(es[0], TensorShape))
        ):
            raise ValueError("not a numba_ta TensorArray state")
        size = state["size"]
        self._dtype = as_dtype(state["dtype"])
        self._dynamic_size = bool(state["dynamic_size"])
        self._infer_shape = bool(state["infer_shape"])
        self._element_shape = es
        self._handle = state["handle"]
        self._flow = np.float32(state["flow"])
        self._size = None if size is None else int(size)

    def __copy__(self) -> TensorArray:
        """``copy.copy``: a new object over the SAME array (as :meth:`identity`); shares its element shape."""
        return self._with_flow(self._flow)
