"""The compiled entries that the TensorArray methods in users' ``@njit`` functions call.

The methods compiled into users' functions (:mod:`numba_ta.jit.extension`) call these
entries by symbol name (:mod:`numba_ta.jit.abi`): one compiled function per op, over
the struct and fixed types (the value's bytes, int64 index and shape arrays, ints,
bools, str), for every dtype and rank, so the engine is compiled once (and shipped by
``pip install .``), not into each user's function.  Each does what the method would
do inline: the class's shape check, the engine op (:mod:`numba_ta.tensor_array.engine`),
TF's exception (``raise_status``: the status's text is built in Python), the class's
shape merge.  The methods keep inline only their per-element fast paths, casts and
byte views.  The signatures are ``numba_ta.jit.abi.ENTRIES``: change one only with a
new ABI version there.

The entries run only in compiled code (with ``NUMBA_DISABLE_JIT=1`` users' functions
run on the Python class), hence their coverage pragmas: tests/test_jit.py and
tests/test_jit_abi.py run them.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.core.extending import register_jitable

from numba_ta.core import header as H
from numba_ta.core import kernels
from numba_ta.core.numba_compat import python_function
from numba_ta.core.shapes import compatible, same_shape
from numba_ta.core.state import (
    CLEARED,
    DENSE,
    ERR_WORDS,
    NO_BUFFER,
    NOT_DATA,
    READ,
    STORED,
    StateProxy,
    advise_huge,
    move_bytes,
)
from numba_ta.core.status import no_dims, raise_status
from numba_ta.errors import (
    InvalidArgumentError,
)
from numba_ta.tensor_array import registry as _registry
from numba_ta.tensor_array.engine import concat, gather, read, scatter, split, write
from numba_ta.tf.messages import MESSAGES

# --------------------------------------------------------------------------- entries for users' compiled code
# The TensorArray methods compiled into users' ``@njit`` functions (``numba_ta.jit.extension``) call these
# entries by symbol name (``numba_ta.jit.abi``): one compiled function per op, over the struct and fixed
# types (the value's bytes, int64 index and shape arrays, ints, bools, str), for every dtype and
# rank, so the engine is compiled once (and shipped by ``pip install .``), not into each user's
# function.  Each does what the method did inline: the class's shape check, the engine op, TF's
# exception (``raise_status``: the status's text is built in Python), the class's shape merge.  The
# methods keep inline only their per-element fast paths, casts and byte views.
# Their signatures are numba_ta.jit.abi.ENTRIES: change one only with a new ABI version there.
# They run only in compiled code (NUMBA_DISABLE_JIT=1 runs users' functions on the Python class),
# hence their coverage pragmas: tests/test_jit.py and tests/test_jit_abi.py run them.
# (The Python layer's ``py_*`` entries above return statuses instead of raising, and the class's
# checks live in Python there, so the two sets share the engine's bodies, not their entries.)
_MSG_T1, _MSG_G2, _MSG_P1, _MSG_P2, _MSG_P3, _MSG_P4 = (MESSAGES[c][1] for c in ("T1", "G2", "P1", "P2", "P3", "P4"))
_MSG_CLASS_SHAPES = MESSAGES["NT-class-shapes"][1]
_MSG_SIZE_NEGATIVE = MESSAGES["NT-size-negative"][1]
_MSG_DIM_NEGATIVE = MESSAGES["NT-convert-dim-negative"][1].replace("{argname}", "other")
_MSG_DIMS_NEGATIVE = MESSAGES["NT-convert-dim-negative"][1].replace("{argname}", "dims")


@register_jitable
def _dims_str(a, n, python):  # pragma: no cover - users' compiled code
    """Return the text of the shape ``a[:n]``, as :mod:`numba_ta.tf.messages` writes it.

    TF's ``TensorShape::DebugString`` (``[2,3]``: ``shape_str``), or with ``python``,
    ``str(tf.TensorShape)`` (-1 is None: ``(2,)``, ``(None, 3)``, ``()``: ``py_str``).
    """
    out = "(" if python else "["
    for k in range(n):
        if k:
            out += ", " if python else ","
        out += "None" if python and a[k] < 0 else str(a[k])
    if not python:
        return out + "]"
    return out + (",)" if n == 1 else ")")


@register_jitable
def _class_check(s, shape):  # pragma: no cover - users' compiled code
    """Check the class's element shape (``_check_element_shape``): ValueError as TF's Python layer raises it."""
    if not s.hdr[H.CLASS_KNOWN]:
        return
    ces = s.ces
    if not compatible(ces, shape):
        raise ValueError(
            _MSG_CLASS_SHAPES.replace("{shape}", _dims_str(shape, shape.size, True)).replace(
                "{element_shape}", _dims_str(ces, ces.size, True)
            )
        )


@register_jitable
def _class_merge(s, shape):  # pragma: no cover - users' compiled code
    """Merge the written shape into the class's element shape (``infer_shape``; an unknown one becomes it)."""
    h = s.hdr
    if not h[H.INFER]:
        return
    if not h[H.CLASS_KNOWN] or not same_shape(s.ces, shape):
        s.ces = shape.copy()  # after _class_check: the merge of a compatible shape into a concrete one is it
        h[H.CLASS_KNOWN] = 1
        h[H.CES_CHANGED] = 1
        h[H.GEN] += 1


@register_jitable
def _check_vector(shape, template):
    """Raise TF's InvalidArgumentError ``template`` (G2, P1) unless ``shape`` (an index array's) is a vector's."""
    if shape.size != 1:
        raise InvalidArgumentError(template.replace("{shape}", _dims_str(shape, shape.size, False)))


@register_jitable
def _dense_stack(s, want):  # pragma: no cover - users' compiled code
    """Stack a dense array whose elements all hold data of one shape of rank ``want``: ``(ok, bytes, shape)``.

    Then none of TF's checks can fail and the element shape does not change (the
    class's shape, if known, already agrees with the array's and the elements'):
    the op is one copy of the rows and the read marks.  ``ok`` False: nothing done.
    """
    h = s.hdr
    n = h[H.SIZE]
    state = s.state
    none = s.data[:0]
    if h[H.CLOSED] or n == 0 or n > state.size or h[H.LAYOUT] != DENSE:
        return False, none, no_dims()
    sid = s.shape_id
    off = s.offsets
    s0 = sid[0]
    w = h[H.WIDTH]
    a = s.starts[s0]
    ok = s.starts[s0 + 1] - a == want and w > 0 and s.items[s0] == w
    dims = s.dims
    if ok and h[H.CLASS_KNOWN]:
        es, ces = s.es, s.ces
        ok = h[H.ES_KNOWN] != 0 and es.size == want and ces.size == want
        if ok:
            for k in range(want):
                c = ces[k]
                if c >= 0 and (dims[a + k] != c or es[k] != c):
                    ok = False
    if ok:
        for i in range(n):
            if state[i] & (STORED | CLEARED) != STORED or sid[i] != s0 or off[i] != i * w:
                ok = False
                break
    if not ok:
        return False, none, no_dims()
    shape = np.empty(want + 1, np.int64)
    shape[0] = n
    shape[1:] = dims[a : a + want]
    nbytes = n * w * h[H.ITEMSIZE]
    out = advise_huge(np.empty(nbytes, np.uint8))
    move_bytes(out, 0, s.data, 0, nbytes)
    if h[H.CAR]:
        for i in range(n):
            state[i] = (state[i] | READ | CLEARED) & NOT_DATA
    else:
        for i in range(n):
            state[i] |= READ
    return True, out, shape


@kernels.kernel()
def jit_write(s, index, flat, shape, numeric):  # pragma: no cover - users' compiled code
    """``TensorArray.write`` in compiled code, past its fast path: class check, :func:`write`, merge; raises."""
    _class_check(s, shape)
    status = write(s, index, flat, shape, numeric)
    if status:
        raise_status(s, status)
    _class_merge(s, shape)
    return 0


@kernels.kernel()
def jit_read(s, index, want):  # pragma: no cover - users' compiled code
    """``TensorArray.read`` in compiled code, past its fast path: ``(bytes, shape)``; raises."""
    status, flat, shape = read(s, index, want)
    if status:
        raise_status(s, status)
    return flat, shape


@kernels.kernel()
def jit_gather(s, idx, idx_shape, want):  # pragma: no cover - users' compiled code
    """``TensorArray.gather`` in compiled code (``idx`` flat, ``idx_shape`` its shape): ``(bytes, shape)``; raises."""
    _check_vector(idx_shape, _MSG_G2)
    status, flat, shape = gather(s, idx, s.ces, s.hdr[H.CLASS_KNOWN] != 0, want)
    if status:
        raise_status(s, status)
    return flat, shape


@kernels.kernel()
def jit_stack(s, want):  # pragma: no cover - users' compiled code
    """``TensorArray.stack`` in compiled code (a dense array in one copy, else :func:`gather`): ``(bytes, shape)``."""
    ok, flat, shape = _dense_stack(s, want)
    if ok:
        return flat, shape
    h = s.hdr
    if h[H.CLOSED]:
        raise InvalidArgumentError(_MSG_T1.replace("{name}", s.name))
    status, flat, shape = gather(s, np.arange(h[H.SIZE]), s.ces, h[H.CLASS_KNOWN] != 0, want)
    if status:
        raise_status(s, status)
    return flat, shape


@kernels.kernel()
def jit_scatter(s, idx, idx_shape, flat, rows, row, numeric):  # pragma: no cover - users' compiled code
    """``TensorArray.scatter``/``unstack`` in compiled code after the cast: class check, :func:`scatter`, merge."""
    _class_check(s, row)
    _check_vector(idx_shape, _MSG_G2)
    status = scatter(s, idx, flat, rows, row, numeric)
    if status:
        raise_status(s, status)
    _class_merge(s, row)
    return 0


@kernels.kernel()
def jit_concat(s, want):  # pragma: no cover - users' compiled code
    """``TensorArray.concat`` in compiled code: ``(bytes, shape)``; raises."""
    # the class passes element_shape[1:] as the op's element_shape_except0 (known when the rank is >= 1)
    known = s.hdr[H.CLASS_KNOWN] != 0 and s.ces.size > 0
    attr = s.ces[1:] if known else s.ces[:0]
    status, flat, shape, _ = concat(s, attr, known, want)
    if status:
        raise_status(s, status)
    return flat, shape


@kernels.kernel()
def jit_split(s, flat, vshape, lens, lens_shape, numeric):  # pragma: no cover - users' compiled code
    """``TensorArray.split`` in compiled code after the cast (``lens`` flat, ``lens_shape`` its shape); raises."""
    vdim = vshape.size
    # the class checks (and merges) the pieces' shape only when all lengths are equal
    same = lens_shape.size == 1 and lens.size > 0 and vdim > 0
    if same:
        for k in range(1, lens.size):
            if lens[k] != lens[0]:
                same = False
                break
    shape = vshape.copy()
    if same:
        shape[0] = lens[0]
        if shape[0] < 0:  # the class makes a TensorShape of it first
            raise ValueError(_MSG_DIM_NEGATIVE.replace("{dim}", str(shape[0])))
        _class_check(s, shape)
    _check_vector(lens_shape, _MSG_P1)
    if lens.size >= 2147483647:
        raise InvalidArgumentError(_MSG_P2)
    if vdim == 0:
        raise InvalidArgumentError(_MSG_P3.replace("{shape}", "[]"))
    total = lens.sum()
    if total != vshape[0]:
        text = _dims_str(vshape, vdim, False)
        raise InvalidArgumentError(_MSG_P4.replace("{total}", str(total)).replace("{shape}", text))
    status = split(s, flat, lens, vshape, numeric, False)
    if status:
        raise_status(s, status)
    if same:
        _class_merge(s, shape)
    return 0


@kernels.kernel()
def jit_closed(s):  # pragma: no cover - users' compiled code
    """Raise TF's error for an op on the closed array ``s`` (``size()`` in compiled code)."""
    raise InvalidArgumentError(_MSG_T1.replace("{name}", s.name))


def _new_name(base):
    """Return a new array's unique name (the registry's counter; called from compiled code)."""
    return _registry.new_name(base)


#: A new array's unique name from compiled code (:func:`_new_name`, without objmode: an interrupt arrives whole).
_unique_name = python_function(_new_name, types.unicode_type, 1)


@kernels.kernel()
def jit_new(n, dyn, car, infer, es, nones, itemsize, code, slack, factor, parmin, base):  # pragma: no cover
    """``numba_ta.TensorArray(...)`` in compiled code: checks, then a new struct (its name from the registry).

    ``es`` holds the ``element_shape`` given (its ``None`` dimensions where ``nones`` is set);
    the other arguments are the class's, and the dtype's item size and code.
    """
    for k in range(es.size):
        if nones[k]:
            es[k] = -1
        elif es[k] < 0:
            raise ValueError(_MSG_DIMS_NEGATIVE.replace("{dim}", str(es[k])))
    if n < 0:
        raise InvalidArgumentError(_MSG_SIZE_NEGATIVE)
    uname = _unique_name(base)
    h = np.zeros(H.NHDR, np.int64)
    h[H.SIZE] = n
    h[H.CAP] = n
    h[H.LAYOUT] = NO_BUFFER
    h[H.DYN] = dyn
    h[H.CAR] = car
    h[H.IDENT] = infer  # the class creates its arrays with identical_element_shapes=infer_shape
    h[H.CLASS_KNOWN] = 1
    h[H.INFER] = infer
    h[H.FASTSID] = -1
    h[H.ES_KNOWN] = 1
    h[H.MARKED] = -1
    h[H.ITEMSIZE] = itemsize
    h[H.DTYPE] = code
    h[H.SLACK] = slack
    h[H.FACTOR] = factor
    h[H.PARMIN] = parmin
    return StateProxy(np.empty(0, np.uint8), np.zeros(n, np.uint8), np.zeros(n, np.int32), np.zeros(n, np.int64), h,
                      np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64), es, es.copy(), uname,
                      np.zeros(ERR_WORDS, np.int64))  # fmt: skip
