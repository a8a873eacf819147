"""Statuses of the compiled ops, the error records they leave, and TF's exception built from them.

The engine's ops do not raise: an op that fails returns a status, the position of
its error's message code in ``numba_ta.tf.messages.ENGINE_CODES`` (0: it did not
fail), and leaves the error's fields (indices, sizes, shapes) in the struct's
``err`` buffer (:func:`fail`).  The Python layer turns it into TF's exception
with :func:`error_of`, the methods compiled into users' code with
:func:`raise_status`; the texts live in :mod:`numba_ta.tf.messages`.  Building
each message's text at each of its sites in compiled code cost more than a
quarter of the engine's compile time.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.extending import register_jitable

from numba_ta.core.numba_compat import python_function
from numba_ta.core.state import _DTYPE_NAMES, ERR_WORDS, NO_I64, fields_of
from numba_ta.errors import (
    InternalError,
    InvalidArgumentError,
    OpError,
    ResourceExhaustedError,
    UnimplementedError,
)
from numba_ta.tf.messages import ENGINE_CODES, engine_error

# statuses: an op returns 0, or the status of its error (its position in ENGINE_CODES), having
# left the error's fields in the struct's ``err`` buffer (fail); _messages.engine_error builds the exception
_ST = {c: k for k, c in enumerate(ENGINE_CODES)}
T1, T2, T4, T5, T6, T7, T8, T9, T10, T11 = (_ST[c] for c in ("T1", "T2", "T4", "T5", "T6", "T7", "T8", "T9", "T10", "T11"))  # noqa: E501  # fmt: skip
G3, G4, G5, S3, S4, C1, C2, C3, C4, P5, K7 = (_ST[c] for c in ("G3", "G4", "G5", "S3", "S4", "C1", "C2", "C3", "C4", "P5", "K7"))  # noqa: E501  # fmt: skip
SPLIT_NEGATIVE, SPLIT_INT64, CONCAT_UNSPLIT, CORRUPT = (
    _ST[c] for c in ("NT-split-negative", "NT-split-int64", "NT-concat-unsplit", "NT-corrupt")
)
MERGE_RANK, MERGE_SHAPE, SHAPE_INT64, PREPEND_INT64, OOM, RANK = (
    _ST[c] for c in ("NT-merge-rank", "NT-merge-shape", "NT-shape-int64", "NT-prepend-int64", "NT-oom", "NT-jit-rank")
)


# --------------------------------------------------------------------------- statuses
@register_jitable
def fail(s, status, i0, i1, i2, a, na, b, nb):
    """Record error ``status`` in ``s.err``: ``[status, i0, i1, i2, na, nb, *a[:na], *b[:nb]]``; return ``status``.

    ``a`` and ``b`` are shapes (int64 arrays, -1 for an unknown dimension), ``na`` and ``nb``
    how many of their dimensions count (-1: an unknown rank).  Which fields an error has is
    ``_messages``' business (``engine_error``).
    """
    ka = max(na, 0)
    n = 6 + ka + max(nb, 0)
    if s.err.size < n:
        s.err = np.zeros(max(n, ERR_WORDS), np.int64)
    e = s.err
    e[0] = status
    e[1] = i0
    e[2] = i1
    e[3] = i2
    e[4] = na
    e[5] = nb
    for k in range(ka):
        e[6 + k] = a[k]
    for k in range(nb):
        e[6 + ka + k] = b[k]
    return status


@register_jitable
def no_dims():
    """Return the shape ``[0]``: what a failed op returns for its result's shape (its flat result is empty).

    So a Python caller can take the result (reshape the empty bytes) on the line of the
    call, before it looks at the status (see ``_storage``'s atomicity rule).
    """
    return np.zeros(1, np.int64)


@register_jitable
def fail_i(s, status, i0=0, i1=0, i2=0):
    """:func:`fail` for an error whose fields are integers only."""
    return fail(s, status, i0, i1, i2, NO_I64, 0, NO_I64, 0)


@register_jitable
def fail_s(s, status, i0, a, na, b, nb):
    """:func:`fail` for an error with shapes (and at most one integer)."""
    return fail(s, status, i0, 0, 0, a, na, b, nb)


def _status_exception(err, name):
    """Return ``(class, text)`` of the status record ``err`` (Python, called from compiled code).

    ``err`` holds the record's int64 items (``bytes`` when compiled code calls, an array
    from Python).  ``class``: 0 InvalidArgumentError, 1 UnimplementedError,
    2 ResourceExhaustedError, 3 InternalError, 4 NotImplementedError.
    """
    e = engine_error(np.frombuffer(err, np.int64), name, _DTYPE_NAMES)
    cls = _RAISED.index(type(e))
    return cls, e.message if isinstance(e, OpError) else str(e)


_RAISED = (InvalidArgumentError, UnimplementedError, ResourceExhaustedError, InternalError, NotImplementedError)
# _status_exception from compiled code without objmode: a KeyboardInterrupt while it runs arrives as itself
_exception_of = python_function(_status_exception, types.Tuple((types.int64, types.unicode_type)), 2)


@register_jitable
def raise_status(s, status):
    """Raise the exception of the status ``status`` (not 0) that an op on ``s`` returned, as compiled code can.

    For the methods compiled into users' functions: the text is built in Python, in one
    place (``_messages.engine_error``), and raised here with its class (an exception
    compiled code raises, so a ``try`` in it catches it).
    """
    err = s.err[: 6 + max(s.err[4], 0) + max(s.err[5], 0)].copy()
    cls, text = _exception_of(err, s.name)
    if cls == 1:
        raise UnimplementedError(text)
    if cls == 2:
        raise ResourceExhaustedError(text)
    if cls == 3:
        raise InternalError(text)
    if cls == 4:
        raise NotImplementedError(text)
    raise InvalidArgumentError(text)


def error_of(s):
    """Return the exception of the status record an op on ``s`` left (Python callers: ``raise E.error_of(s)``)."""
    f = fields_of(s)
    return engine_error(f[11], f[10], _DTYPE_NAMES)
