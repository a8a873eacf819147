"""dtype normalisation, TF's C++ dtype names, and TF-like value conversion."""

from __future__ import annotations

import numpy as np

SUPPORTED_DTYPES = frozenset(
    map(
        np.dtype,
        [
            "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
            "float16", "float32", "float64", "complex64", "complex128",
        ],
    )
)

_TF_NAMES = {
    np.dtype("float16"): "half",
    np.dtype("float32"): "float",
    np.dtype("float64"): "double",
}

_INT32 = np.iinfo(np.int32)


def as_dtype(dtype, argname="dtype"):
    """Return the numpy dtype for a numpy dtype, a string, a type or a ``tf.DType``.

    Raises ``TypeError`` naming the argument for anything numba_ta does not store.
    """
    if dtype is None:
        raise TypeError(f"{argname} must be given, got None")
    np_type = getattr(dtype, "as_numpy_dtype", None)  # tf.DType
    if np_type is not None:
        dtype = np_type
    try:
        out = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{argname}: {dtype!r} is not a dtype") from None
    if out not in SUPPORTED_DTYPES:
        raise TypeError(
            f"{argname}: dtype {out} is not supported by numba_ta; supported are "
            + ", ".join(sorted(str(d) for d in SUPPORTED_DTYPES))
        )
    return out


def tf_name(dtype):
    """TF's ``DataTypeString``: ``float``, ``double``, ``half``, ``int32``, ``bool`` ..."""
    dtype = np.dtype(dtype)
    return _TF_NAMES.get(dtype, dtype.name)


def is_numeric(dtype):
    """True for dtypes TF's ``Add2Functor`` sums (all but bool)."""
    return np.dtype(dtype).kind in "iufc"


def _python_scalar_dtype(x):
    if isinstance(x, (bool, np.bool_)):
        return np.dtype(bool)
    if isinstance(x, int):
        return np.dtype(np.int32) if _INT32.min <= x <= _INT32.max else np.dtype(np.int64)
    if isinstance(x, float):
        return np.dtype(np.float32)
    if isinstance(x, complex):
        return np.dtype(np.complex128)
    return None


def _leaves(x):
    if isinstance(x, (list, tuple)):
        for item in x:
            yield from _leaves(item)
    else:
        yield x


def to_array(value, argname="value", preferred=None, dtype=None):
    """Convert ``value`` to an ndarray the way ``tf.convert_to_tensor`` would.

    numpy arrays and numpy scalars keep their dtype; Python scalars and nested
    lists become int32 (int64 when out of range), float32, complex128 or bool,
    unless ``preferred`` is given and the values fit it exactly.  Objects with
    ``.numpy()`` (TF eager tensors) are converted through it.  With ``dtype``
    the conversion is strict (``TypeError`` when a value does not fit).
    """
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    if isinstance(value, np.ndarray) or isinstance(value, np.generic):
        arr = np.asarray(value)
        if dtype is not None and arr.dtype != dtype:
            return _strict_cast(arr, dtype, value, argname)
        return arr
    try:
        leaves = list(_leaves(value))
    except RecursionError:  # pragma: no cover - absurdly deep nesting
        raise TypeError(f"{argname}: cannot convert {type(value).__name__} to an array") from None
    kinds = [_python_scalar_dtype(v) if not isinstance(v, np.generic) else v.dtype for v in leaves]
    if any(k is None for k in kinds) or (not leaves and not isinstance(value, (list, tuple))):
        bad = next((v for v, k in zip(leaves, kinds, strict=True) if k is None), value)
        raise TypeError(
            f"{argname}: cannot convert {bad!r} of type {type(bad).__name__} to a tensor of a numeric or bool dtype"
        )
    try:
        if kinds:
            natural = np.result_type(*kinds)
            if natural.kind in "iu" and natural.itemsize < 4:
                natural = np.dtype(np.int32)
        else:
            natural = np.dtype(np.float32)
        target = dtype if dtype is not None else natural
        if dtype is None and preferred is not None and preferred != natural:
            arr = np.asarray(value)
            if arr.dtype.kind != "O" and preferred.kind in _WIDENS[natural.kind] and _fits(arr, preferred):
                target = preferred
        if dtype is not None:
            arr = np.asarray(value)
            if arr.dtype.kind == "O":
                raise ValueError
            return _strict_cast(arr, dtype, value, argname)
        arr = np.asarray(value, dtype=target)
    except ValueError:
        raise ValueError(
            f"{argname}: cannot convert a ragged nested sequence to an array (all rows must have the same length)"
        ) from None
    return arr


# TF converts Python values only to dtypes of these kinds (a float never becomes an int)
_WIDENS = {"b": "b", "i": "iufc", "u": "iufc", "f": "fc", "c": "c"}


def _fits(arr, dtype):
    try:
        cast = arr.astype(dtype)
    except (TypeError, ValueError, OverflowError):
        return False
    if arr.dtype.kind == "b" and dtype.kind != "b":
        return False
    if arr.dtype.kind in "iu" and dtype.kind == "b":
        return False
    with np.errstate(all="ignore"):
        return bool(np.array_equal(cast.astype(arr.dtype) if arr.size else cast, arr if arr.size else cast))


def _strict_cast(arr, dtype, original, argname):
    if arr.dtype == dtype:
        return arr
    if _fits(arr, dtype) and not (arr.dtype.kind in "fc" and dtype.kind in "iub"):
        return arr.astype(dtype)
    raise TypeError(f"{argname}: cannot convert {original!r} to an array of dtype {dtype}")


def to_index(index, argname="index"):
    """Return an int for a scalar integer index; ``None`` when ``index`` is not 0-d.

    Bools, floats and other non-integers raise ``TypeError`` naming the argument.
    """
    if hasattr(index, "numpy") and not isinstance(index, np.ndarray):
        index = index.numpy()
    if isinstance(index, (bool, np.bool_)):
        raise TypeError(f"{argname} must be an integer, got {index!r}")
    if isinstance(index, (int, np.integer)):
        return _check_int32(int(index), argname)
    arr = np.asarray(index)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{argname} must be an integer, got {index!r} of type {type(index).__name__}")
    if arr.ndim != 0:
        return None
    return _check_int32(int(arr), argname)


def _check_int32(i, argname):
    if not _INT32.min <= i <= _INT32.max:
        raise ValueError(f"{argname} {i} is out of the int32 range TF's TensorArray ops take")
    return i


def to_index_array(indices, argname="indices", dtype=np.int32):
    """Return an integer ndarray (any rank) for ``indices``; non-integers raise ``TypeError``."""
    if hasattr(indices, "numpy") and not isinstance(indices, np.ndarray):
        indices = indices.numpy()
    arr = np.asarray(indices)
    if arr.size == 0 and arr.dtype.kind == "f":
        arr = arr.astype(np.intp)
    if arr.dtype.kind not in "iu":
        raise TypeError(f"{argname} must be integers, got an array of dtype {arr.dtype}")
    if arr.size and dtype == np.int32:
        lo, hi = arr.min(), arr.max()
        if lo < _INT32.min or hi > _INT32.max:
            bad = lo if lo < _INT32.min else hi
            raise ValueError(f"{argname}: {int(bad)} is out of the int32 range TF's TensorArray ops take")
    return arr
