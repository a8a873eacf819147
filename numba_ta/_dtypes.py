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

# fast look-up of the usual spellings: np.dtype objects, numpy scalar types, names
_BY_KEY = {k: d for d in SUPPORTED_DTYPES for k in (d, d.type, d.name)}

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
    try:
        return _BY_KEY[dtype]
    except (KeyError, TypeError):
        pass
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
    if dtype.kind in "US":
        return "string"  # what TF calls str and bytes values (numba_ta stores no strings)
    return _TF_NAMES.get(dtype, dtype.name)


def unsupported(argname, value):
    """The ``ValueError`` of TF's conversion of an object that is not a number or a sequence."""
    return ValueError(
        f"{argname}: attempt to convert a value ({value!r}) with an unsupported type ({type(value)}) to a Tensor."
    )


def is_numeric(dtype):
    """True for dtypes TF's ``Add2Functor`` sums (all but bool)."""
    return np.dtype(dtype).kind in "iufc"


_INT64 = np.iinfo(np.int64)


def _leaves(x):
    if isinstance(x, (list, tuple)):
        for item in x:
            yield from _leaves(item)
    else:
        yield x


def _leaf_kind(v):
    if isinstance(v, (bool, np.bool_)):
        return "b"
    if isinstance(v, (int, np.integer)):
        return "i"
    if isinstance(v, (float, np.floating)):
        return "f"
    if isinstance(v, (complex, np.complexfloating)):
        return "c"
    if isinstance(v, (str, bytes, np.str_, np.bytes_)):
        return "s"
    return None


def _python_array(value, argname):
    """TF's conversion of Python scalars and nested sequences (``tf.convert_to_tensor`` without dtype)."""
    leaves = list(_leaves(value))
    kinds = set()
    for v in leaves:
        k = _leaf_kind(v)
        if k is None:
            raise unsupported(argname, v)
        kinds.add(k)
    if len(kinds) > 1 and ("b" in kinds or "c" in kinds or "s" in kinds):
        raise ValueError("Can't convert Python sequence with mixed types to Tensor.")
    if "s" in kinds:
        # a tf.string tensor: no numba_ta array stores it, the dtype check names it "string"
        try:
            return np.array(value)
        except ValueError:
            raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from None
    if "f" in kinds:
        # TF: a numpy float scalar sets the float dtype (the first one seen), else float32
        dtype = next((v.dtype for v in leaves if isinstance(v, np.floating)), np.dtype(np.float32))
        fmax = float(np.finfo(dtype).max)
        if any(abs(float(v)) > fmax and np.isfinite(float(v)) for v in leaves):
            raise ValueError("Can't convert Python sequence with a value out of range for a double-precision float.")
    elif "i" in kinds:
        ints = [int(v) for v in leaves]
        lo, hi = min(ints), max(ints)
        if _INT32.min <= lo and hi <= _INT32.max:
            dtype = np.dtype(np.int32)
        elif _INT64.min <= lo and hi <= _INT64.max:
            dtype = np.dtype(np.int64)
        else:
            raise ValueError("Can't convert Python sequence with out-of-range integer to Tensor.")
    elif "c" in kinds:
        dtype = np.dtype(np.complex128)
    elif "b" in kinds:
        dtype = np.dtype(bool)
    else:
        dtype = np.dtype(np.float32)
    try:
        arr = np.array(value, dtype=dtype)
    except ValueError:
        raise ValueError("Can't convert non-rectangular Python sequence to Tensor.") from None
    return arr


def to_array(value, argname="value", preferred=None, dtype=None):
    """Convert ``value`` to an ndarray the way ``tf.convert_to_tensor`` would.

    numpy arrays and numpy scalars keep their dtype.  Python scalars and
    nested sequences follow TF's rules: ints become int32 (int64 when out of
    range), any float makes float32, complex gives complex128, bools bool;
    mixing bools or complex numbers with other kinds, out-of-range values and
    ragged nesting raise TF's ``ValueError``.  With ``preferred`` (TF's
    ``preferred_dtype``) a Python value is converted to that dtype when it
    fits it.  Objects with ``.numpy()`` (TF eager tensors) are converted
    through it.  With ``dtype`` the conversion is strict: ``TypeError`` when
    a value does not fit.
    """
    if type(value) is np.ndarray and (dtype is None or value.dtype == dtype):
        return value
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    if isinstance(value, (np.ndarray, np.generic)):
        arr = np.asarray(value)
        if dtype is not None and arr.dtype != dtype:
            return _strict_cast(arr, dtype, value, argname)
        return arr
    wanted = dtype if dtype is not None else preferred
    if wanted is not None:
        try:
            arr = _python_array(value, argname)
        except ValueError:
            if dtype is not None:
                raise
            arr = None
        if arr is not None and (arr.dtype == wanted or _fits(arr, wanted)):
            return np.array(value, dtype=wanted)  # from the Python values: no float32 rounding on the way
        if dtype is not None:
            raise TypeError(f"{argname}: cannot convert {value!r} to an array of dtype {dtype}")
    return _python_array(value, argname)


# TF converts values only to dtypes of these kinds (a float never becomes an int)
_WIDENS = {"b": "b", "i": "iufc", "u": "iufc", "f": "fc", "c": "c"}


def _fits(arr, dtype):
    """Whether TF would convert ``arr``'s values to ``dtype``: same kind family, in range, ints exact."""
    dtype = np.dtype(dtype)
    if dtype.kind not in _WIDENS.get(arr.dtype.kind, ""):
        return False
    if not arr.size:
        return True
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return bool(arr.min() >= info.min and arr.max() <= info.max)
    with np.errstate(all="ignore"):
        cast = arr.astype(dtype)
        if dtype.kind == "f" and arr.dtype.kind == "c":
            return False
        return bool(np.all(np.isfinite(cast) | ~np.isfinite(arr)))


def _strict_cast(arr, dtype, original, argname):
    if arr.dtype == dtype:
        return arr
    if _fits(arr, dtype):
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
    if index is None:
        raise unsupported(argname, index)
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
    if indices is None:
        raise unsupported(argname, indices)
    try:
        arr = np.asarray(indices)
    except ValueError:
        raise ValueError(f"{argname}: can't convert non-rectangular Python sequence to Tensor.") from None
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
