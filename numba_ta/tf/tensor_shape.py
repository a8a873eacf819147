"""Partial shapes: TF's PartialTensorShape rules and text forms.

Internally a partial shape is ``None`` (unknown rank) or a tuple whose entries
are non-negative ints or ``None`` (unknown dimension).  A full shape is a tuple
of ints.  :class:`TensorShape` is the public, ``tf.TensorShape``-like wrapper
returned by :attr:`numba_ta.TensorArray.element_shape`.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any, SupportsIndex, overload

import numpy as np

from numba_ta.errors import InvalidArgumentError, OpError
from numba_ta.tf import messages as _messages
from numba_ta.tf.dtypes import unsupported
from numba_ta.tf.messages import partial_str, py_str

if TYPE_CHECKING:
    from typing import TypeAlias, TypeGuard

    #: A partial shape: None (unknown rank) or a tuple of dimensions, None where unknown.
    Partial: TypeAlias = "tuple[int | None, ...] | None"

__all__ = ["TensorShape"]


def _is_shape_proto(shape: object) -> bool:
    """Return True for a ``TensorShapeProto`` (duck-typed: ``unknown_rank`` and repeated ``dim`` with ``size``)."""
    return hasattr(shape, "unknown_rank") and hasattr(shape, "dim") and not isinstance(shape, (list, tuple))


def _is_py_int(d: object) -> bool:
    return isinstance(d, int) and not isinstance(d, bool)


def _below_minus_one(dims: Iterable[int | None]) -> OpError:
    """TF's ``PartialTensorShape`` error for a dimension below -1 (-1 and None are unknown)."""
    shown = ",".join("?" if d is None or d == -1 else str(d) for d in dims)
    return _messages.error("NT-below-minus-one", dims=shown)


def as_partial(shape: Any, argname: str = "element_shape", attr: bool = False) -> Partial:
    """Normalise a user shape to a partial shape.

    Takes None, a list or tuple of ints and Nones, a :class:`TensorShape`, a
    ``tf.TensorShape`` and a ``TensorShapeProto`` (``unknown_rank``, or
    ``dim`` sizes with -1 for unknown).  With ``attr`` (an op's shape
    attribute, as TF's kernels and GraphDefs spell it) a Python int -1 in a
    list or tuple is an unknown dimension too, and a dimension below -1 is
    TF's ``InvalidArgumentError``; elsewhere a negative dimension is
    ``ValueError``, as ``tf.TensorShape`` has it.
    """
    if shape is None:
        return None
    if isinstance(shape, TensorShape):
        return shape._dims
    if _is_shape_proto(shape):
        if shape.unknown_rank:
            return None
        sizes = [int(d.size) for d in shape.dim]
        if any(s < -1 for s in sizes):
            raise _below_minus_one(sizes)
        out: list[int | None] = [None if s == -1 else s for s in sizes]
        check_num_elements(out, argname)
        return tuple(out)
    if attr and isinstance(shape, (list, tuple)) and all(d is None or _is_py_int(d) for d in shape):
        # TF's eager fast path and its kernels read a list of Python ints as a PartialTensorShape
        if any(d is not None and d < -1 for d in shape):
            raise _below_minus_one(shape)
        shape = [None if d == -1 else d for d in shape]
    dims = getattr(shape, "dims", shape) if not isinstance(shape, (list, tuple)) else shape
    if dims is None:  # tf.TensorShape(None)
        return None
    if hasattr(dims, "tolist") and not isinstance(dims, (list, tuple)):
        dims = dims.tolist()
    if isinstance(dims, int):
        dims = [dims]
    out = []
    try:
        it = list(dims)
    except TypeError:
        raise TypeError(f"Error converting {argname} to a TensorShape: {shape!r} is not a shape.") from None
    for d in it:
        d = getattr(d, "value", d)  # tf.compat.v1.Dimension
        if d is None:
            out.append(None)
            continue
        if isinstance(d, bool):
            raise TypeError(f"Error converting {argname} to a TensorShape: dimension {d!r} is not an integer.")
        try:
            d = operator.index(d)
        except TypeError:
            raise TypeError(
                f"Error converting {argname} to a TensorShape: Dimension value must be integer or None "
                f"or have an __index__ method, got value '{d!r}' with type '{type(d)}'."
            ) from None
        if d < 0:
            raise _messages.python_error("NT-convert-dim-negative", argname=argname, dim=d)
        if d > _INT64_MAX:
            raise _messages.python_error("NT-convert-dim-int64", argname=argname, dim=d)
        out.append(d)
    check_num_elements(out, argname)
    return tuple(out)


_INT64_MAX = 2**63 - 1


def check_num_elements(dims: Sequence[int | None], argname: str = "element_shape") -> None:
    """TF's limit on a shape: the product of its known dimensions fits an int64 (``ValueError``)."""
    if math.prod(d for d in dims if d is not None) > _INT64_MAX:
        raise _messages.python_error("NT-convert-shape-int64", argname=argname, shape=partial_str(tuple(dims)))


def as_shape_tensor(value: Any, argname: str = "shape_to_prepend") -> Any:
    """Convert a shape where an int tensor belongs (``shape_to_prepend``), as TF converts one.

    A fully defined :class:`TensorShape` or ``tf.TensorShape`` becomes its
    dimensions; a partial one is TF's ``ValueError`` (``Cannot convert a
    partially known TensorShape ... to a Tensor.``), and so is a
    ``TensorShapeProto`` (TF has no conversion for it).  Anything else is
    returned as it is.
    """
    if isinstance(value, TensorShape) or (
        hasattr(value, "as_list") and hasattr(value, "is_fully_defined") and hasattr(value, "dims")
    ):
        dims = as_partial(value, argname)
        if not is_fully_defined(dims):
            raise ValueError(f"Cannot convert a partially known TensorShape {py_str(dims)} to a Tensor.")
        return np.array(dims, np.int64 if any(d > _INT32_MAX for d in dims) else np.int32)
    if _is_shape_proto(value):
        raise unsupported(argname, value)
    return value


_INT32_MAX = 2**31 - 1


def is_fully_defined(p: Partial) -> TypeGuard[tuple[int, ...]]:
    """Return True when ``p`` has known rank and no unknown dimension."""
    return p is not None and None not in p


def is_compatible(p: Partial, shape: Sequence[int | None] | None) -> bool:
    """Return True when the full or partial ``shape`` is compatible with partial shape ``p``."""
    if p is None or shape is None:
        return True
    if len(p) != len(shape):
        return False
    return all(a is None or b is None or a == b for a, b in zip(p, shape, strict=True))


def merge(a: Partial, b: Partial) -> Partial:
    """Merge two partial shapes as ``PartialTensorShape::MergeWith``; raise TF's errors."""
    if a is None:
        return b
    if b is None:
        return a
    if len(a) != len(b):
        raise _messages.error("NT-merge-rank", rank=len(a), other_rank=len(b))
    out: list[int | None] = []
    for x, y in zip(a, b, strict=True):
        if x is not None and y is not None and x != y:
            raise _messages.error("NT-merge-shape", shape=partial_str(a), other_shape=partial_str(b))
        out.append(x if x is not None else y)
    return tuple(out)


class TensorShape:
    """A possibly partial shape, the ``tf.TensorShape`` of numba_ta.

    Parameters
    ----------
    dims : None or sequence of (int or None)
        ``None`` for an unknown rank; otherwise the dimensions, ``None`` for an
        unknown one.

    Raises
    ------
    ValueError
        If a dimension is negative.
    TypeError
        If a dimension is not an integer or None.

    Notes
    -----
    Mirrors the parts of ``tf.TensorShape`` that TensorArray code uses:
    ``rank``, ``as_list``, ``is_fully_defined``, ``is_compatible_with``,
    ``merge_with``, indexing and iteration.

    Examples
    --------
    >>> s = TensorShape([None, 3])
    >>> s
    TensorShape([None, 3])
    >>> print(s)
    (None, 3)
    >>> s.is_compatible_with([2, 3]), s.is_fully_defined()
    (True, False)
    >>> s.merge_with([2, None]).as_list()
    [2, 3]
    """

    __slots__ = ("_dims",)

    _dims: tuple[int | None, ...] | None

    def __init__(self, dims: TensorShape | Sequence[int | None] | None) -> None:
        self._dims = as_partial(dims, "dims")

    @property
    def rank(self) -> int | None:
        """The number of dimensions (an int), None when the rank is unknown.

        Examples
        --------
        >>> TensorShape([2, None]).rank
        2
        """
        return None if self._dims is None else len(self._dims)

    ndims = rank

    @property
    def dims(self) -> list[int | None] | None:
        """The dimensions as a list (None entries unknown), None for unknown rank."""
        return None if self._dims is None else list(self._dims)

    def as_list(self) -> list[int | None]:
        """Return the dimensions as a list (``tf.TensorShape.as_list``).

        Returns
        -------
        list of (int or None)
            One entry per dimension, None where unknown.

        Raises
        ------
        ValueError
            If the rank is unknown (TF's message).

        Examples
        --------
        >>> TensorShape([None, 3]).as_list()
        [None, 3]
        """
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return list(self._dims)

    def is_fully_defined(self) -> bool:
        """Whether the rank and every dimension are known (``tf.TensorShape.is_fully_defined``).

        Returns
        -------
        bool

        Examples
        --------
        >>> TensorShape([2, 3]).is_fully_defined(), TensorShape(None).is_fully_defined()
        (True, False)
        """
        return is_fully_defined(self._dims)

    def is_compatible_with(self, other: TensorShape | Sequence[int | None] | None) -> bool:
        """Whether ``other`` could be the same shape (``tf.TensorShape.is_compatible_with``).

        Parameters
        ----------
        other : TensorShape, None or sequence of (int or None)
            The other shape.

        Returns
        -------
        bool
            True when the ranks agree (or one is unknown) and every pair of
            known dimensions is equal.

        Examples
        --------
        >>> TensorShape([None, 3]).is_compatible_with([5, 3])
        True
        """
        return is_compatible(self._dims, as_partial(other, "other"))

    def merge_with(self, other: TensorShape | Sequence[int | None] | None) -> TensorShape:
        """Return the most specific shape compatible with both (``tf.TensorShape.merge_with``).

        Parameters
        ----------
        other : TensorShape, None or sequence of (int or None)
            The other shape.

        Returns
        -------
        TensorShape
            Known dimensions of either, where the other is unknown.

        Raises
        ------
        ValueError
            If the shapes are not compatible.

        Examples
        --------
        >>> TensorShape([None, 3]).merge_with([2, None])
        TensorShape([2, 3])
        """
        try:
            return TensorShape(merge(self._dims, as_partial(other, "other")))
        except InvalidArgumentError:
            raise ValueError(f"Shapes {self} and {TensorShape(other)} are not compatible") from None

    def __len__(self) -> int:
        """Return the rank; raise ``ValueError`` for an unknown rank, as ``tf.TensorShape`` does."""
        if self._dims is None:
            raise ValueError("Cannot take the length of shape with unknown rank.")
        return len(self._dims)

    def __iter__(self) -> Iterator[int | None]:
        """Return an iterator over the dimensions (int, or None if unknown); ``ValueError`` for an unknown rank."""
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter(self._dims)

    @overload
    def __getitem__(self, key: SupportsIndex) -> int | None: ...

    @overload
    def __getitem__(self, key: slice) -> TensorShape: ...

    def __getitem__(self, key: SupportsIndex | slice) -> int | None | TensorShape:
        """Return dimension ``key`` (int, or None if unknown), or the :class:`TensorShape` a slice selects.

        An index out of range raises ``IndexError``.  For an unknown rank, as in
        ``tf.TensorShape``: any index gives None; a slice with a step raises
        ``ValueError``; a slice with no stop, or a negative bound, gives
        ``TensorShape(None)``; else ``stop - start`` unknown dimensions (none when
        ``stop < start``).

        Examples
        --------
        >>> TensorShape([2, None, 3])[1:], TensorShape([2, None, 3])[0]
        (TensorShape([None, 3]), 2)
        >>> TensorShape(None)[1:3], TensorShape(None)[1:]
        (TensorShape([None, None]), TensorShape(None))
        """
        if self._dims is None:
            if not isinstance(key, slice):
                return None
            if key.step is not None:
                raise ValueError("Steps are not yet handled")
            start = 0 if key.start is None else key.start
            if key.stop is None or start < 0 or key.stop < 0:
                return TensorShape(None)
            return TensorShape([None] * (key.stop - start))
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]

    def __eq__(self, other: object) -> bool:
        """Return whether ``other``, read as a shape, has the same dimensions (None equals None), as TF 2 compares.

        ``NotImplemented`` when ``other`` is not a shape.
        """
        try:
            other = as_partial(other, "other")
        except (TypeError, ValueError):
            return NotImplemented
        return self._dims == other

    def __hash__(self) -> int:
        """Return the hash of the dimensions tuple (of None for an unknown rank): equal shapes hash equal."""
        return hash(self._dims)

    def __reduce__(self) -> tuple[type[TensorShape], tuple[tuple[int | None, ...] | None]]:
        """Pickle as ``TensorShape(dims)``."""
        return TensorShape, (self._dims,)

    def __repr__(self) -> str:
        """Return ``TensorShape([2, None])`` or ``TensorShape(None)``, as ``repr(tf.TensorShape)``."""
        return "TensorShape(None)" if self._dims is None else f"TensorShape({list(self._dims)})"

    def __str__(self) -> str:
        """Return ``str(tf.TensorShape)``: ``(2, None)``, ``(2,)``, ``()`` or ``<unknown>``."""
        return py_str(self._dims)
