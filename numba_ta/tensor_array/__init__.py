"""TensorFlow 1's TensorArray: the class, its storage, the handle registry, the compiled state machine.

``from numba_ta.tensor_array import TensorArray`` is the class (as before this became a package).

:mod:`~numba_ta.tensor_array.array`
    :class:`numba_ta.TensorArray`, graph-mode (TF1) semantics over :mod:`numba_ta.raw_ops`.
:mod:`~numba_ta.tensor_array.storage`
    One array's state for the Python layer: its lock, numpy views of the struct, the fast
    path over dense rows, the op entries with TF's checks, gradient arrays by ``source``.
:mod:`~numba_ta.tensor_array.registry`
    Handles and the registry of live arrays.
:mod:`~numba_ta.tensor_array.engine`
    The compiled element state machine: write, read, gather, scatter, concat, split, close,
    gradient arrays, with TF's checks in TF's order.
"""

from typing import Any


def __getattr__(name: str) -> Any:
    """Return :class:`numba_ta.TensorArray` for ``TensorArray`` (imported late: the class stands on this package)."""
    if name == "TensorArray":
        from numba_ta.tensor_array.array import TensorArray

        return TensorArray
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["TensorArray"]
