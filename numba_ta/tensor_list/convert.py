"""The argument conversions of the TensorList ops: handles, dtypes, element shapes, indices, values.

TensorFlow's conversion of each op input, in the order and with the errors of the
semantics reference (``docs/semantics.rst``, section ``TensorList ops``), and the
op wrapper that names an op on its errors.  Used by :mod:`numba_ta.tensor_list.ops`
and :mod:`numba_ta.tensor_list.bulk_ops`.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from numba_ta.core.memory import new_array
from numba_ta.tensor_array.registry import TensorArrayHandle
from numba_ta.tensor_list.store import (
    RESOURCE,
    VARIANT,
    VARIANT_ZERO,
    TensorListHandle,
    VariantZero,
    dtype_name,
)
from numba_ta.tf import messages as _messages
from numba_ta.tf.dtypes import as_dtype, to_array, to_index_array, unsupported
from numba_ta.tf.messages import shape_str
from numba_ta.tf.opdefs import (
    INPUTS,
    check_input,
)
from numba_ta.tf.tensor_shape import as_partial, merge

# --------------------------------------------------------------------------- conversions
_VARIANT_NAMES = ("variant", "DT_VARIANT")
_RESOURCE_NAMES = ("resource", "DT_RESOURCE")


_DTYPES: dict[Any, np.dtype] = {}  # element_dtype arguments seen, and their dtypes


def _element_dtype(dtype, argname="element_dtype"):
    """Return the numpy dtype of an ``element_dtype``.

    TF's ``variant`` (``tf.variant``, 21, ``"variant"``, ``object``) is :data:`VARIANT`,
    TF's ``resource`` (``tf.resource``, 20, ``"resource"``) :data:`RESOURCE`.
    """
    try:
        return _DTYPES[dtype]
    except (KeyError, TypeError):
        pass
    out = _parse_dtype(dtype, argname)
    try:
        if len(_DTYPES) < 256:
            _DTYPES[dtype] = out
    except TypeError:  # not hashable
        pass
    return out


def _parse_dtype(dtype, argname):
    if dtype is object or (isinstance(dtype, np.dtype) and dtype == VARIANT):
        return VARIANT
    if isinstance(dtype, str) and dtype in _VARIANT_NAMES:
        return VARIANT
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, (bool, np.bool_)) and int(dtype) == 21:
        return VARIANT
    if getattr(dtype, "name", None) == "variant" and hasattr(dtype, "as_datatype_enum"):  # tf.variant
        return VARIANT
    if isinstance(dtype, np.dtype) and dtype == RESOURCE:
        return RESOURCE
    if isinstance(dtype, str) and dtype in _RESOURCE_NAMES:
        return RESOURCE
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, (bool, np.bool_)) and int(dtype) == 20:
        return RESOURCE
    if getattr(dtype, "name", None) == "resource" and hasattr(dtype, "as_datatype_enum"):  # tf.resource
        return RESOURCE
    return as_dtype(dtype, argname)


def _opaque(v):
    """Return whether ``v`` (a converted value) is an object array of opaque objects: no lists, no variant zeros.

    Such a value is what numba_ta receives where TensorFlow has a resource tensor
    (a TensorArray handle, a graph runner's variable ...) or a variant tensor that holds
    no list: a list of resources takes it as resources, a list of variants as variants.
    """
    if v.dtype != VARIANT:
        return False
    if v.ndim == 0:
        return not isinstance(v[()], (TensorListHandle, VariantZero))
    for x in v.reshape(-1).tolist():  # (a loop, not a generator: a signal's exception must reach the caller)
        if isinstance(x, (TensorListHandle, VariantZero)):
            return False
    return True


def _resource_tensor(value):
    """Return whether an op input is numba_ta's resource tensor: TensorArray handles (any nesting), and only them.

    A :class:`~numba_ta.tensor_array.registry.TensorArrayHandle` is what numba_ta has
    where TensorFlow has a resource tensor; an object ndarray, list or tuple holding
    handles only (at least one) is a resource tensor of its shape.
    """
    if isinstance(value, TensorArrayHandle):
        return True
    if isinstance(value, np.ndarray):
        if value.dtype != VARIANT or value.size == 0:
            return False
        flat = value.reshape(-1).tolist()
    elif isinstance(value, (list, tuple)):
        flat = []
        stack = [value]
        while stack:
            v = stack.pop()
            if isinstance(v, (list, tuple)):
                stack.extend(v)
            else:
                flat.append(v)
        if not flat:
            return False
    else:
        return False
    for x in flat:  # (a loop, not a generator: a signal's exception must reach the caller)
        if not isinstance(x, TensorArrayHandle):
            return False
    return True


def _item_dtype(v, list_dtype):
    """Return the dtype of the value ``v`` (converted) as an op storing it in a list of ``list_dtype`` sees it.

    For a list of resources, opaque objects (:func:`_opaque`) are resources; for other
    lists, TensorArray handles are (:func:`_resource_tensor`) and other objects
    variants.  Numeric values have their own dtype; lists and the variant zero are
    variants.
    """
    if v.dtype != VARIANT:
        return v.dtype
    if list_dtype == RESOURCE:
        return RESOURCE if _opaque(v) else VARIANT
    return RESOURCE if _resource_tensor(v) else VARIANT


def _shape_type_attr(value):
    """TF's ``shape_type`` (``Tshape``) attribute of an ``element_shape`` input: ``DT_INT64`` or ``DT_INT32``."""
    dt = getattr(value, "dtype", None)
    if dt is None and isinstance(value, (int, list, tuple)) and not isinstance(value, bool):
        try:
            dt = to_array(value, "element_shape").dtype
        except (TypeError, ValueError):
            dt = None
    return "DT_INT64" if getattr(dt, "name", None) == "int64" else "DT_INT32"


def _no_device(op, attrs=""):
    """TF's ``NotFoundError`` (L70) of an op whose ``element_dtype`` attribute is resource: no kernel for it.

    ``attrs`` are the node's other attributes as TensorFlow prints them, ``name=value``
    joined by ``", "``, in TensorFlow's (sorted) order around ``element_dtype``.
    """
    parts = sorted(["element_dtype=DT_RESOURCE", *([attrs] if attrs else [])])
    return _messages.error("L70", op=op, attrs=", ".join(parts))


def _no_kernel(op, attrs=""):
    """TF's ``InvalidArgumentError`` (L71) of an op given a resource tensor whose dtype attribute has no kernel."""
    parts = sorted(["element_dtype=DT_RESOURCE", *([attrs] if attrs else [])])
    return _messages.error("L71", op=op, attrs=", ".join(parts))


def _value(value, argname):
    """Convert a tensor argument: numpy arrays (object arrays hold variants), handles, array-likes as TF converts."""
    if type(value) is np.ndarray:
        return value if value.dtype.isnative else to_array(value, argname)
    if isinstance(value, (TensorListHandle, VariantZero)):
        a = np.empty((), object)
        a[()] = value
        return a
    if (
        isinstance(value, (np.ndarray, np.generic, numbers.Number, str, bytes, list, tuple))
        or hasattr(value, "__array__")
        or hasattr(value, "numpy")
    ):
        return to_array(value, argname)
    if value is None:
        raise unsupported(argname, value)
    a = np.empty((), object)  # any other object: an opaque variant (a graph runner's Optional ...)
    a[()] = value
    return a


def _list_dtype(dtype, argname="tensor"):
    """Return the dtype of a list made of a tensor of ``dtype`` (TypeError: one numba_ta does not store)."""
    if dtype == VARIANT:
        return VARIANT
    if dtype.kind in "US":
        raise TypeError(f"{argname}: dtype string is not supported by numba_ta (TensorFlow's string lists)")
    return as_dtype(dtype, argname)


def _name(dtype):
    return dtype_name(dtype)


def _not_variant(op, k, value):
    """TF's op-definition error for a list input that is not a variant tensor."""
    a = to_array(value, "input_handle")
    return _messages.error("NT-input-dtype", op=op, index=k, expected="variant", dtype=_name(a.dtype))


def _nested_handles(x):
    """Return a list or tuple holding lists (at any depth) as an object ndarray; None for anything else.

    TF converts such a value to a variant tensor of its shape, which a one-list input
    refuses with L1.  A sequence that also holds other values, or a ragged one, does
    not convert: TF's ``TypeError`` or ``ValueError``.
    """
    shape = []
    v = x
    while isinstance(v, (list, tuple)):
        shape.append(len(v))
        if not v:  # TF makes an empty variant tensor of this shape
            return np.empty(shape, object)
        v = v[0]
    flat = []

    def walk(v, depth):
        if depth == len(shape):
            if isinstance(v, (list, tuple)):
                raise ValueError(RAGGED)
            flat.append(v)
            return
        if not isinstance(v, (list, tuple)) or len(v) != shape[depth]:
            raise ValueError(RAGGED)
        for item in v:
            walk(item, depth + 1)

    walk(x, 0)
    if not any(isinstance(v, TensorListHandle) for v in flat):
        return None
    for v in flat:
        if not isinstance(v, (TensorListHandle, VariantZero)):
            raise TypeError(f"Cannot convert {v!r} to EagerTensor of dtype variant")
    a = np.empty(len(flat), object)
    a[:] = flat
    return a.reshape(shape)


RAGGED = "Can't convert non-rectangular Python sequence to Tensor."


def _list(x, op, k=0):
    """Return the handle of a list input (L1, L2; a non-variant input is refused as TF's op definition refuses it)."""
    if type(x) is TensorListHandle:
        return x
    if isinstance(x, (list, tuple)):
        a = _nested_handles(x)
        if a is not None:
            x = a
    if isinstance(x, np.ndarray) and x.dtype == object:
        if x.ndim:
            raise _messages.error("L1", shape=shape_str(x.shape))
        x = x[()]
        if isinstance(x, TensorListHandle):
            return x
    if isinstance(x, TensorArrayHandle):  # an array where a list belongs: TF's resource tensor
        raise _messages.error("NT-input-dtype", op=op, index=k, expected="variant", dtype="resource")
    check_input(x, op, INPUTS[op][k][0])  # a TensorFlow tensor
    if isinstance(x, VariantZero) or (not isinstance(x, (np.ndarray, np.generic, numbers.Number, list, tuple, str, bytes)) and x is not None):  # noqa: E501
        raise _messages.error("L2", value=str(x))
    if x is None:
        raise unsupported("input_handle", x)
    raise _not_variant(op, k, x)


def _shape_input(value, op=None, owner=None):
    """Read an ``element_shape`` tensor as TF's ``TensorShapeFromTensor`` (L12 with ``op``, else L5; L4, L6).

    ``owner`` is the op whose input it is: a TensorFlow tensor of a dtype its op
    definition refuses raises there (:func:`~numba_ta.tf.opdefs.check_input`).
    """
    if value is not None and not isinstance(value, (np.ndarray, np.generic, numbers.Number, list, tuple)):
        if hasattr(value, "numpy"):
            if owner is not None:
                check_input(value, owner, "element_shape")
            value = value.numpy()
        else:  # TensorShape, tf.TensorShape, TensorShapeProto
            return as_partial(value)
    a = to_index_array(value, "element_shape", np.int64)
    if a.ndim >= 2:
        if op is not None:
            raise _messages.error("L12", op=op, shape=shape_str(a.shape))
        raise _messages.error("L5", rank=a.ndim)
    if a.ndim == 0:
        if int(a) == -1:
            return None
        raise _messages.error("L4")
    bad = a < -1
    if bad.any():
        raise _messages.error("L6", dim=int(a[np.argmax(bad)]))
    return tuple(None if d == -1 else int(d) for d in a.tolist())


def _check_shape_input(value, owner):
    """TF's op-definition check of an ``element_shape`` input the op reads only sometimes (GetItem, PopBack)."""
    if type(value) is not int:
        check_input(value, owner, "element_shape")


def _scalar_int(value, argname, dtype=np.int32, owner=None):
    """Return an integer tensor argument as an ndarray (its shape is checked by the caller).

    ``owner``: the op whose input it is, for the check of a TensorFlow tensor's dtype.
    """
    if type(value) is int and -(2**31) <= value < 2**31:
        return np.array(value, np.int64)
    if owner is not None:
        check_input(value, owner, argname)
    return to_index_array(value, argname, dtype)


def _zeros(dtype, shape):
    """Return the value of an unset element: zeros of ``shape``; for a variant list, the variant zero."""
    if dtype == VARIANT:
        if shape == ():
            return VARIANT_ZERO
        out = np.empty(shape, object)
        out.reshape(-1)[:] = [VARIANT_ZERO] * out.size
        return out
    return new_array(shape, dtype, zeros=True)


def _check_dtype(op_dtype, store):
    if op_dtype != store.dtype:
        raise _messages.error("L3", op_dtype=_name(op_dtype), list_dtype=_name(store.dtype))


def _store(value, dtype):
    """Return a value as a list stores it: an ndarray of the list's dtype, or a variant's (resource's) object.

    A row of an object array is already the object (a handle, the variant zero, ...).
    """
    if (dtype == VARIANT or dtype == RESOURCE) and (not isinstance(value, np.ndarray) or value.ndim == 0):
        return value[()] if isinstance(value, np.ndarray) else value
    return value


def _infer(m, store, idx=None):
    """Merge the shapes of the set elements (of ``idx``) into ``m``, in order (the merge errors, ``m`` first)."""
    for _, shape in store.set_shapes(idx):
        m = merge(m, shape)
    return m


def _summarize(a):
    """TF's ``Tensor::SummarizeValue(3)`` of an int tensor: ``1 2``, ``[1 2][3...]...``."""
    flat = a.reshape(-1).tolist()
    limit = min(3, len(flat))
    out = []
    pos = [0]

    def one(dim):
        if pos[0] >= limit:
            return
        count = a.shape[dim]
        if dim == a.ndim - 1:
            for i in range(count):
                if pos[0] >= limit:
                    if dim:
                        out.append("...")
                    return
                if i:
                    out.append(" ")
                out.append(str(flat[pos[0]]))
                pos[0] += 1
            return
        for _ in range(count):
            opened = pos[0] < limit
            if opened:
                out.append("[")
            one(dim + 1)
            if pos[0] < limit or opened:
                out.append("]")

    if a.ndim == 0:
        out.append(" ".join(str(v) for v in flat[:limit]))
    else:
        one(0)
    if len(flat) > limit:
        out.append("...")
    return "".join(out)
