"""TensorFlow-named error classes raised by numba_ta.

Every error numba_ta raises for a TensorArray op carries TensorFlow's kernel
message text exactly (``.message``), so code that matches TF's messages keeps
working.  Each class also derives from the Python built-in a user would catch
(``InvalidArgumentError`` is a ``ValueError``, ``NotFoundError`` a
``LookupError``, ``UnimplementedError`` a ``NotImplementedError``,
``ResourceExhaustedError`` a ``MemoryError`` and ``InternalError`` a
``RuntimeError``).

Examples
--------
>>> import numpy as np
>>> from numba_ta import raw_ops, errors
>>> h, f = raw_ops.TensorArrayV3(size=1, dtype=np.float32, tensor_array_name="doc")
>>> try:
...     raw_ops.TensorArrayReadV3(handle=h, index=3, flow_in=f, dtype=np.float32)
... except errors.InvalidArgumentError as e:
...     print(e.message)
Tried to read from index 3 but array size is: 1
"""

from __future__ import annotations

__all__ = [
    "OpError",
    "InvalidArgumentError",
    "NotFoundError",
    "UnimplementedError",
    "ResourceExhaustedError",
    "InternalError",
    "CompiledTypeError",
]


class OpError(Exception):
    """Base class of the errors raised by TensorArray ops (mirrors ``tf.errors.OpError``).

    Parameters
    ----------
    message : str
        TensorFlow's kernel message text, without TF's ``{{function_node ...}}``
        prefix or ``[Op:...]`` suffix.
    op : str, optional
        Name of the op that raised, for example ``"TensorArrayWriteV3"``.

    Attributes
    ----------
    message : str
        The message text, exactly as TensorFlow's kernel words it.
    op : str or None
        The op that raised.

    Examples
    --------
    >>> e = OpError("Size should be >= 0.", op="TensorArrayV3")
    >>> str(e)
    'Size should be >= 0. [Op:TensorArrayV3]'
    >>> e.message
    'Size should be >= 0.'
    """

    message: str
    op: str | None

    def __init__(self, message: str, op: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.op = op

    def __str__(self) -> str:
        """Return the message, with TF's ``[Op:<op>]`` suffix when the op is known."""
        return f"{self.message} [Op:{self.op}]" if self.op else self.message

    def __reduce__(self) -> tuple[type[OpError], tuple[str, str | None]]:
        """Pickle as ``type(self)(message, op)``."""
        return (type(self), (self.message, self.op))


class InvalidArgumentError(OpError, ValueError):
    """An argument or the array's state does not allow the op (``tf.errors.InvalidArgumentError``).

    Parameters
    ----------
    message : str
        TensorFlow's message text (see :class:`OpError`).
    op : str, optional
        The op that raised.

    Examples
    --------
    >>> issubclass(InvalidArgumentError, ValueError)
    True
    """


class NotFoundError(OpError, LookupError):
    """The TensorArray resource does not exist (``tf.errors.NotFoundError``).

    Parameters
    ----------
    message : str
        TensorFlow's message text (see :class:`OpError`).
    op : str, optional
        The op that raised.

    Examples
    --------
    >>> issubclass(NotFoundError, LookupError)
    True
    """


class UnimplementedError(OpError, NotImplementedError):
    """The op is not supported for these arguments (``tf.errors.UnimplementedError``).

    Raised, as in TF, when stacking or concatenating zero elements whose
    element shape is not fully defined.

    Parameters
    ----------
    message : str
        TensorFlow's message text (see :class:`OpError`).
    op : str, optional
        The op that raised.

    Examples
    --------
    >>> issubclass(UnimplementedError, NotImplementedError)
    True
    """


class ResourceExhaustedError(OpError, MemoryError):
    """Memory for a result or for an array's storage cannot be allocated (``tf.errors.ResourceExhaustedError``).

    The message is TF's allocator message, ``OOM when allocating tensor with
    shape[<S>] and type <DT> on /job:localhost/replica:0/task:0/device:CPU:0
    by allocator cpu``; for an array's storage ``<S>`` is the whole buffer,
    ``[<capacity>,<items per element>]`` or ``[<items>]``; for the index or
    work arrays of an op on many elements, ``[<elements>]`` and ``int32`` or
    ``int64``.  The op that raised changed nothing.

    Parameters
    ----------
    message : str
        TensorFlow's message text (see :class:`OpError`).
    op : str, optional
        The op that raised.

    Examples
    --------
    >>> issubclass(ResourceExhaustedError, MemoryError)
    True
    """


class InternalError(OpError, RuntimeError):
    """An internal invariant was broken (``tf.errors.InternalError``).

    Parameters
    ----------
    message : str
        TensorFlow's message text (see :class:`OpError`).
    op : str, optional
        The op that raised.

    Examples
    --------
    >>> issubclass(InternalError, RuntimeError)
    True
    """


class CompiledTypeError(TypeError):
    """A TensorArray used with an argument of the wrong type inside a ``@numba.njit`` function.

    Raised while Numba compiles the user's function (when it types the method or the
    constructor), with one line that names the method, the argument, the Numba type it got
    and what it takes: ``TensorArray.write: index must be an integer, got float64``.  A
    ``TypeError``, as the Python class raises for the same mistakes; not a Numba
    ``TypingError``, which Numba would wrap into its report of every candidate overload
    (40 to 100 lines).

    Parameters
    ----------
    message : str
        The one line: ``"<method>: <argument> must be <what it takes>, got <Numba type>"``.

    Examples
    --------
    >>> issubclass(CompiledTypeError, TypeError)
    True
    """

    def __init__(self, message: str) -> None:
        super().__init__(message)
