"""The header of an array's or a list's state: its scalars, one int64 slot each, by name.

The struct's ``hdr`` field (:mod:`numba_ta.core.state`) is an int64 array of
:data:`NHDR` slots.  Code names a slot by its constant here, imported as a
namespace::

    from numba_ta.core import header as H

    n = hdr[H.SIZE]

Compiled code sees ``H.SIZE`` as a constant (Numba reads a module's integer
attributes at compile time); Python code pays one module attribute load, about a
nanosecond over a bare integer.  :func:`new` makes a header.

============== ==== ===================================================================
slot           kind meaning
============== ==== ===================================================================
SIZE           n    ``Size()``: the number of elements (0 once closed)
CAP            n    slots the metadata (state, shape ids, offsets) has room for
USED           n    items of ``data`` in use (the ragged layout's next free item)
WIDTH          n    items per dense row (0 before the first dense write)
LAYOUT         enum the data's layout: ``NO_BUFFER``, ``DENSE`` or ``RAGGED``
DYN            flag ``dynamic_size``: writes past the size grow the array
CAR            flag ``clear_after_read``
IDENT          flag ``identical_element_shapes``
ISGRAD         flag a gradient array (made by a Grad op)
CLOSED         flag closed (``TensorArrayCloseV3``)
DISALLOWED     flag an element was summed into: TF refuses new gradient arrays
NSHAPES        n    interned element shapes
GEN            n    bumped when a field is replaced (growth, an interned shape, a new
                    element shape): the Python layer's views follow it
CLASS_KNOWN    flag the class's element shape (``ces``) is known
INFER          flag the class infers element shapes (``infer_shape``)
FASTSID        id   the write fast path: shape id of the last dense write (-1: none
                    since the array entered compiled code)
ES_KNOWN       flag the array's element shape (``es``) has a known rank
ES_CHANGED     flag an op changed the array's element shape
MARKED         n    the marked size (a split's element count; a gradient array's concat
                    uses its forward's)
CES_CHANGED    flag an op changed the class's element shape
ITEMSIZE       n    bytes per item of the array's dtype (``data`` holds the items' bytes)
DTYPE          code the array's dtype, its position in ``state.DTYPES``
SLACK          n    the memory policy: bytes a dense buffer may always take (set when made)
FACTOR         n    the memory policy: beyond SLACK, at most FACTOR times the bytes stored
PARMIN         n    items a bulk copy must move to run in parallel
                    (``numba_ta.set_parallel_threshold``)
============== ==== ===================================================================
"""

from __future__ import annotations

import numpy as np

from numba_ta.core.state import dtype_code

SIZE = 0
CAP = 1
USED = 2
WIDTH = 3
LAYOUT = 4
DYN = 5
CAR = 6
IDENT = 7
ISGRAD = 8
CLOSED = 9
DISALLOWED = 10
NSHAPES = 11
GEN = 12
CLASS_KNOWN = 13
INFER = 14
FASTSID = 15
ES_KNOWN = 16
ES_CHANGED = 17
MARKED = 18
CES_CHANGED = 19
ITEMSIZE = 20
DTYPE = 21
SLACK = 22
FACTOR = 23
PARMIN = 24
NHDR = 25  # the number of slots


def new(dtype, slack=64 << 20, factor=2, parmin=1 << 22):
    """Return a new header for an array of ``dtype``: zeros, with its dtype, item size and policies set.

    Parameters
    ----------
    dtype : numpy.dtype or type
        The array's dtype (one of ``state.DTYPES``).
    slack : int, optional
        Bytes a dense buffer may always take (``SLACK``).
    factor : int, optional
        Beyond ``slack``, a dense buffer takes at most ``factor`` times the
        bytes of the elements stored (``FACTOR``).
    parmin : int, optional
        Items a bulk copy must move to run in parallel (``PARMIN``).

    Returns
    -------
    (NHDR,) int64 ndarray
        The header.

    Examples
    --------
    >>> import numpy as np
    >>> h = new(np.float32)
    >>> int(h[ITEMSIZE]), int(h[SIZE])
    (4, 0)
    """
    dt = np.dtype(dtype)
    h = np.zeros(NHDR, np.int64)
    h[ITEMSIZE] = dt.itemsize
    h[DTYPE] = dtype_code(dt)
    h[SLACK] = slack
    h[FACTOR] = factor
    h[PARMIN] = parmin
    return h
