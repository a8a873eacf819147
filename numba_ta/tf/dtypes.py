"""dtype normalisation, TF's C++ dtype names, and TF's conversion of values to arrays.

Two conversions, as TensorFlow has two:

* :func:`to_array` is eager ``tf.convert_to_tensor(value)`` (what ``tf.raw_ops`` do with a
  value): numpy arrays and array-likes keep their dtype, Python scalars and sequences
  (lists, tuples, ``memoryview``, ``array.array``, ndarrays inside lists ...) follow TF's
  sequence converter, whose dtype comes from the first scalar found.
* :func:`graph_array` is graph-mode ``convert_to_tensor(value, preferred_dtype=dtype)``
  (what ``tf.TensorArray`` in a TF1 graph does): ``make_tensor_proto``, which casts any
  numpy array with ``astype`` and Python values that pass TF's type check.
"""

from __future__ import annotations

import math
import numbers
import os
import sys
import types
import warnings

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

# TF's ``DataType`` enum (tensorflow/core/framework/types.proto), the form a GraphDef stores
_TF_ENUM = {
    1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8", 8: "complex64", 9: "int64",
    10: "bool", 17: "uint16", 18: "complex128", 19: "float16", 22: "uint32", 23: "uint64",
}
# the enum values numba_ta does not store, named for the error message
_TF_ENUM_UNSUPPORTED = {
    7: "string", 11: "qint8", 12: "quint8", 13: "qint32", 14: "bfloat16", 15: "qint16", 16: "quint16",
    20: "resource", 21: "variant", 24: "float8_e5m2", 25: "float8_e4m3fn", 26: "float8_e4m3fnuz",
    27: "float8_e4m3b11fnuz", 28: "float8_e5m2fnuz", 29: "int4", 30: "uint4", 31: "int2", 32: "uint2",
    33: "float4_e2m1fn",
}

# fast look-up of the usual spellings: np.dtype objects, numpy scalar types, names, TF's enum
# (an int key also answers True, 1.0 and np.int64(1), as ``tf.as_dtype`` does)
_BY_KEY = {k: d for d in SUPPORTED_DTYPES for k in (d, d.type, d.name)}
_BY_KEY.update((k, np.dtype(name)) for k, name in _TF_ENUM.items())
# TF's spellings that numpy reads otherwise: ``tf.as_dtype("float")`` and ``tf.as_dtype(float)`` are float32
_BY_KEY.update({"float": np.dtype(np.float32), float: np.dtype(np.float32)})

_TF_NAMES = {
    np.dtype("float16"): "half",
    np.dtype("float32"): "float",
    np.dtype("float64"): "double",
}

_INT32 = np.iinfo(np.int32)
INT32_LIMIT = 2**31  # an op's int32 index i holds -INT32_LIMIT <= i < INT32_LIMIT (the ops' inline checks)
_INT64 = np.iinfo(np.int64)


def _supported_list():
    return ", ".join(sorted(str(d) for d in SUPPORTED_DTYPES))


def as_dtype(dtype, argname="dtype"):
    """Return the numpy dtype for a numpy dtype, a string, a type, a ``tf.DType`` or TF's enum.

    The enum is TF's ``DataType`` integer as a GraphDef stores it (1 float32,
    2 float64, 3 int32, ... 19 float16, 22 uint32, 23 uint64).  As in TF,
    ``"float"`` and Python's ``float`` mean float32.  Raises ``TypeError``
    naming the argument for anything numba_ta does not store.
    """
    try:
        return _BY_KEY[dtype]
    except (KeyError, TypeError):
        pass
    if dtype is None:
        raise TypeError(f"{argname} must be given, got None")
    if isinstance(dtype, (int, np.integer)) and not isinstance(dtype, (bool, np.bool_)):
        code = int(dtype)
        base = code - 100 if code > 100 else code
        name = _TF_ENUM_UNSUPPORTED.get(base) or _TF_ENUM.get(base)
        if name is None:
            raise TypeError(f"{argname}: {code} is not a TensorFlow DataType enum value")
        name += "_ref" if code > 100 else ""
        raise TypeError(
            f"{argname}: DataType {code} ({name}) is not supported by numba_ta; supported are " + _supported_list()
        )
    np_type = getattr(dtype, "as_numpy_dtype", None)  # tf.DType
    if np_type is not None:
        dtype = np_type
    try:
        out = np.dtype(dtype)
    except TypeError:
        raise TypeError(f"{argname}: {dtype!r} is not a dtype") from None
    if out not in SUPPORTED_DTYPES:
        raise TypeError(f"{argname}: dtype {out} is not supported by numba_ta; supported are " + _supported_list())
    return out


def tf_name(dtype):
    """TF's ``DataTypeString``: ``float``, ``double``, ``half``, ``int32``, ``bool`` ..."""
    dtype = np.dtype(dtype)
    if dtype.kind in "US":
        return "string"  # what TF calls str and bytes values (numba_ta stores no strings)
    return _TF_NAMES.get(dtype, dtype.name)


def tensor_dtype_name(value):
    """Return TF's name of a TensorFlow tensor's dtype (``int64``, ``float``, ``variant`` ...); None for others.

    A tensor is an object with a ``dtype`` that has ``as_datatype_enum`` (a
    ``tf.Tensor``); numpy values and Python values give None.
    """
    if type(value) is np.ndarray:
        return None
    enum = getattr(getattr(value, "dtype", None), "as_datatype_enum", None)
    if not isinstance(enum, int):
        return None
    if enum in _TF_ENUM:
        return tf_name(_TF_ENUM[enum])
    return _TF_ENUM_UNSUPPORTED.get(enum, str(enum))


def unsupported(argname, value):
    """Return the ``ValueError`` of TF's conversion of an object that is not a number or a sequence."""
    return ValueError(
        f"{argname}: attempt to convert a value ({value!r}) with an unsupported type ({type(value)}) to a Tensor."
    )


def is_numeric(dtype):
    """Return True for dtypes TF's ``Add2Functor`` sums (all but bool)."""
    return np.dtype(dtype).kind in "iufc"


def _native(arr):
    """``arr`` in this machine's byte order (TF reads a big-endian float32 as float32)."""
    return arr if arr.dtype.isnative else arr.astype(arr.dtype.newbyteorder("="))


# --------------------------------------------------------------------------------------
# eager conversion (tf.raw_ops): TF's py_seq_tensor.cc


def to_array(value, argname="value"):
    """Convert ``value`` to an ndarray as eager ``tf.convert_to_tensor(value)`` does.

    numpy arrays and numpy scalars keep their dtype (in native byte order);
    objects with ``__array__`` or ``__array_interface__`` are converted by
    numpy and keep its dtype; objects with ``.numpy()`` (TF eager tensors)
    through it.  Everything else is a Python scalar or sequence (lists,
    tuples, ``memoryview``, ``array.array``, ``bytearray``, ndarrays inside a
    list ...), converted by TF's rules: the first scalar found decides (a
    Python float or a float32 scalar: float32; a float16 scalar: float16; a
    float64 scalar: float64; an int: int32, int64 when a value needs it,
    float32 when a float follows; a bool: bool; a complex: complex128; a
    string: string), and the others must convert to it, else TF's
    ``ValueError`` (mixed types, out-of-range values, ragged nesting).
    """
    if type(value) is np.ndarray:
        return value if value.dtype.isnative else _native(value)
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        value = value.numpy()
    if (
        isinstance(value, (np.ndarray, np.generic))
        or hasattr(value, "__array__")
        or hasattr(value, "__array_interface__")
    ):
        return _native(np.asarray(value))
    return _python_array(value, argname)


_RECT = "Can't convert non-rectangular Python sequence to Tensor."
_MIXED = "Can't convert Python sequence with mixed types to Tensor."
_OOR = "Can't convert Python sequence with out-of-range integer to Tensor."
_OORD = "Can't convert Python sequence with a value out of range for a double-precision float."
_FOUND_INT64 = "Can't convert Python sequence with out-of-range integer to int32 Tensor."
_FOUND_FLOAT = "Can't convert Python sequence with floating point values to integer Tensor."

_BLOCK_KINDS = frozenset("biufcUS")  # ndarrays converted in one go (others element by element)


class _Stop(Exception):
    """A converter met an element it cannot take (TF's error code)."""

    def __init__(self, error):
        super().__init__(error)
        self.error = error


def _is_sequence(obj):
    """CPython's ``PySequence_Check``, which TF's converter asks."""
    if isinstance(obj, (list, tuple, np.ndarray)):
        return True
    if isinstance(obj, (dict, np.generic, types.MappingProxyType)):
        return False
    return hasattr(type(obj), "__getitem__")


def _zerodim(obj):
    return obj[()] if isinstance(obj, np.ndarray) and obj.ndim == 0 else obj


def _sample(seq):
    """TF's ``SampleElementFromSequence``: ``seq[0]``, else the first element iterated."""
    try:
        return seq[0]
    except Exception:  # any failure: TF tries iteration next
        pass
    name = type(seq).__name__
    try:
        it = iter(seq)
    except Exception as e:
        raise ValueError(f"Cannot infer dtype of a {name} object: {type(e).__name__}: {e}") from None
    try:
        return next(it)
    except StopIteration:
        raise ValueError(f"Cannot infer dtype of a {name} object since it is an empty sequence") from None
    except Exception as e:
        raise ValueError(
            f"Cannot infer dtype of a {name} object, as iter(<object>).next() failed: {type(e).__name__}: {e}"
        ) from None


def _infer(value, argname):
    """TF's ``InferShapeAndType``: the shape along the first elements and the first scalar's kind."""
    shape = []
    obj = value
    while True:
        obj = _zerodim(obj)
        if isinstance(obj, (str, bytes)):
            return shape, "string"
        if _is_sequence(obj):
            try:
                n = len(obj)
            except TypeError as e:
                raise TypeError(f"{argname}: {e}") from None
            shape.append(n)
            if n == 0:
                return shape, None  # an empty tensor: float32 unless the first path says otherwise
            obj = _sample(obj)
            continue
        if isinstance(obj, np.float64):
            return shape, "double"
        if isinstance(obj, np.float16):
            return shape, "half"
        if isinstance(obj, (float, np.floating)):
            return shape, "float"
        if isinstance(obj, (bool, np.bool_)):
            return shape, "bool"
        if isinstance(obj, (int, np.integer)):
            return shape, "int"
        if isinstance(obj, (complex, np.complexfloating)):
            return shape, "complex"
        raise unsupported(argname, obj)


class _FloatConv:
    """TF's ``ConvertOneFloat<T>``: floats (overflow-checked below double), ints, numpy floats and ints."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.cast = self.dtype.type
        self.checked = self.dtype.itemsize < 8

    def scalar(self, v):
        if isinstance(v, float):  # Python float, np.float64
            d = float(v)
            out = self.cast(d)
            if self.checked and math.isinf(out) and math.isfinite(d):
                raise _Stop(_OORD)
            return out
        if isinstance(v, int):  # bool too (PyLong_Check)
            try:
                return self.cast(float(v))
            except OverflowError:
                raise _Stop(_OORD) from None
        if isinstance(v, np.floating):
            return self.scalar(float(v))
        if isinstance(v, np.integer):
            return self.scalar(int(v))
        raise _Stop(_MIXED)

    def block(self, arr):
        kind = arr.dtype.kind
        if kind == "f":
            d = arr.astype(np.float64)
            out = d.astype(self.dtype)
            if self.checked and np.any(np.isinf(out) & np.isfinite(d)):
                raise _Stop(_OORD)
            return out
        if kind in "iu":
            return arr.astype(np.float64).astype(self.dtype)  # via double, as TF
        raise _Stop(_MIXED)


class _IntConv:
    """TF's int converters: ints and numpy ints (int64 range), a float stops them (found float)."""

    def __init__(self, dtype):
        self.dtype = np.dtype(dtype)
        self.narrow = self.dtype == np.int32

    def scalar(self, v):
        if isinstance(v, (int, np.integer)):  # Python ints (bool too), numpy ints
            i = int(v)
            if not _INT64.min <= i <= _INT64.max:
                raise _Stop(_OOR)
            if self.narrow and not _INT32.min <= i <= _INT32.max:
                raise _Stop(_FOUND_INT64)
            return i
        if isinstance(v, (float, np.floating)):
            raise _Stop(_FOUND_FLOAT)
        raise _Stop(_MIXED)

    def block(self, arr):
        kind = arr.dtype.kind
        if kind == "f":
            raise _Stop(_FOUND_FLOAT)
        if kind not in "iu":
            raise _Stop(_MIXED)
        flat = arr.ravel()
        lo, hi = (_INT32.min, _INT32.max) if self.narrow else (_INT64.min, _INT64.max)
        bad = flat > hi if kind == "u" else (flat < lo) | (flat > hi)
        if bad.any():  # the first bad element decides, as TF stops there
            first = int(flat[int(np.argmax(bad))])
            raise _Stop(_OOR if first > _INT64.max else _FOUND_INT64)
        return arr.astype(self.dtype)


class _BoolConv:
    dtype = np.dtype(bool)

    def scalar(self, v):
        if v is True or v is False or isinstance(v, np.bool_):
            return bool(v)
        raise _Stop(_MIXED)

    def block(self, arr):
        if arr.dtype.kind != "b":
            raise _Stop(_MIXED)
        return arr


class _ComplexConv:
    dtype = np.dtype(np.complex128)
    _double = _FloatConv(np.float64)

    def scalar(self, v):
        if isinstance(v, (complex, np.complexfloating)):
            return complex(v)
        return complex(self._double.scalar(v))

    def block(self, arr):
        kind = arr.dtype.kind
        if kind == "c":
            return arr.astype(self.dtype)
        if kind in "iuf":
            return arr.astype(np.float64).astype(self.dtype)
        raise _Stop(_MIXED)


class _StringConv:
    dtype = np.dtype(object)  # made a str array at the end: only its dtype ("string") is ever used

    def scalar(self, v):
        if isinstance(v, (str, bytes)):
            return v
        raise _Stop(_MIXED)

    def block(self, arr):
        if arr.dtype.kind not in "US":
            raise _Stop(_MIXED)
        return arr


_CONV = {
    "float": _FloatConv(np.float32),
    "double": _FloatConv(np.float64),
    "half": _FloatConv(np.float16),
    "int32": _IntConv(np.int32),
    "int64": _IntConv(np.int64),
    "bool": _BoolConv(),
    "complex": _ComplexConv(),
    "string": _StringConv(),
}


def _fill(obj, depth, shape, conv, out, idx):
    """TF's ``Converter::Helper``: check the nesting against ``shape`` and convert in order."""
    if isinstance(obj, np.ndarray) and obj.dtype.kind in _BLOCK_KINDS and obj.shape == tuple(shape[depth:]):
        if obj.size:
            out[idx] = conv.block(obj)
        return
    if isinstance(obj, (list, tuple)):
        seq = obj
    else:
        try:
            seq = list(obj)  # PySequence_Fast
        except TypeError:
            raise _Stop(_RECT) from None
    if len(seq) != shape[depth]:
        raise _Stop(_RECT)
    if depth + 1 < len(shape):
        for i, item in enumerate(seq):
            _fill(item, depth + 1, shape, conv, out, idx + (i,))
    elif seq:
        out[idx] = [conv.scalar(_zerodim(item)) for item in seq]


def _convert(value, shape, conv):
    if not shape:
        out = np.empty((), conv.dtype)
        out[()] = conv.scalar(_zerodim(value))
    else:
        out = np.empty(shape, conv.dtype)
        _fill(value, 0, shape, conv, out, ())
    if conv.dtype.kind == "O":
        out = out.astype(str)
    return out


def _python_array(value, argname):
    """TF's ``PySeqToTFE_TensorHandle`` without a dtype: infer, convert, fall back as TF does."""
    shape, kind = _infer(value, argname)
    if kind is None:
        return np.zeros(shape, np.float32)
    with np.errstate(over="ignore", invalid="ignore"):
        try:
            if kind != "int":
                return _convert(value, shape, _CONV[kind])
            try:
                return _convert(value, shape, _CONV["int32"])
            except _Stop as e:
                error = e.error
            if error == _FOUND_INT64:
                try:
                    return _convert(value, shape, _CONV["int64"])
                except _Stop as e:
                    error = e.error
            if error == _FOUND_FLOAT:
                return _convert(value, shape, _CONV["float"])
            raise _Stop(error)
        except _Stop as e:
            raise ValueError(e.error) from None


# --------------------------------------------------------------------------------------
# graph-mode conversion (the TensorArray class): TF's make_tensor_proto


def graph_array(value, dtype, argname="value", strict=False):
    """Convert ``value`` as graph-mode ``convert_to_tensor(value, preferred_dtype=dtype)`` does.

    This is what ``tf.TensorArray`` in a TF1 graph does with a written value
    (``write``, ``scatter``, ``unstack``; ``split`` converts with
    ``dtype=dtype``: ``strict``).  numpy arrays, numpy scalars and
    array-likes (``__array__``, ``__array_interface__``, the buffer
    protocol) are cast to ``dtype`` with numpy's ``astype``, whatever their
    dtype: float64 to float32, floats to ints (truncated), out-of-range values
    wrapped, with numpy's warnings.  Python scalars and sequences are cast
    when TF's type check lets them (ints and floats to a float dtype, ints to
    an int dtype, bools only to bool ...); otherwise, or when the cast fails,
    they are converted without ``dtype`` (float64 values become float32,
    int64 values int32 when they fit) and the op's dtype check names the
    mismatch, as TF's kernel does.  With ``strict`` the type check's
    ``TypeError`` is raised instead.  A list of ndarrays (not 0-d) is TF's
    ``ValueError``: ``make_tensor_proto`` does not take one.  Objects with
    ``.numpy()`` (TF tensors) keep their dtype, as TF never casts a tensor.
    """
    if type(value) is np.ndarray and (value.dtype is dtype or value.dtype == dtype):
        return value
    if hasattr(value, "numpy") and not isinstance(value, np.ndarray):
        arr = _native(np.asarray(value.numpy()))
        if strict and arr.dtype != dtype:
            raise ValueError(f"Tensor conversion requested dtype {dtype} for Tensor with dtype {arr.dtype}: {value!r}")
        return arr
    try:
        return _tensor_proto_array(value, dtype, argname)
    except (TypeError, ValueError):
        if strict:
            raise
    return _tensor_proto_array(value, None, argname)


def _is_array_like(obj):
    """TF's ``tensor_util._is_array_like``."""
    if callable(getattr(obj, "__array__", None)) or isinstance(getattr(obj, "__array_interface__", None), dict):
        return True
    try:
        memoryview(obj)
    except TypeError:
        return False
    return not isinstance(obj, bytes)


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # numba_ta/
_ComplexWarning = getattr(np, "exceptions", np).ComplexWarning
_ERR_KEYS = {"overflow": "over", "invalid value": "invalid"}


def _warn_user(message, category):
    """``warnings.warn`` pointing at the user's line: the first frame outside numba_ta (its ``stacklevel``)."""
    frame = sys._getframe(1)
    level = 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGE_DIR):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


def _cast(arr, dtype):
    """``arr.astype(dtype)``, with numpy's warnings of the cast issued at the user's line, not here.

    numpy warns where ``astype`` is called (this module): complex to real
    (``ComplexWarning``), values out of range or NaN to an integer
    (``RuntimeWarning``: overflow, invalid value; or ``FloatingPointError`` where
    ``np.seterr`` says ``raise``).  The same warnings, with numpy's texts, go to the
    line of the caller of numba_ta instead.
    """
    if arr.dtype.kind == "c" and np.dtype(dtype).kind in "iuf":  # (to bool: the values' truth, no warning)
        _warn_user("Casting complex values to real discards the imaginary part", _ComplexWarning)
        arr = arr.real
    user = np.geterr()
    if any(user[k] not in ("ignore", "warn", "raise") for k in _ERR_KEYS.values()):  # 'call', 'print', 'log'
        return arr.astype(dtype)
    seen = []
    with np.errstate(over="call", invalid="call", call=lambda kind, _flag: seen.append(kind)):
        out = arr.astype(dtype)
    for kind in dict.fromkeys(seen):
        mode = user[_ERR_KEYS.get(kind, "invalid")]
        text = f"{kind} encountered in cast"
        if mode == "raise":
            raise FloatingPointError(text)
        if mode == "warn":
            _warn_user(text, RuntimeWarning)
    return out


def _tensor_proto_array(value, dtype, argname):
    """TF's ``make_tensor_proto(value, dtype)`` as far as the array it makes."""
    if _is_array_like(value):
        arr = np.asarray(value)
        if dtype is not None:
            arr = _cast(arr, dtype)
    else:
        if value is None:
            raise ValueError("None values not supported.")
        if dtype is not None:
            _assert_compatible(value, dtype)
        if dtype is not None and dtype.kind in "iufc":
            arr = _cast(np.array(value), dtype)
        else:
            arr = np.array(value, dtype=dtype)
        dims = _dense_dims(value)
        if list(arr.shape) != dims:
            raise ValueError(
                f"Expected values {value} to be a dense tensor with shape {dims}, but got shape {list(arr.shape)}."
            )
        if dtype is None:
            if arr.dtype == np.float64:
                arr = _cast(arr, np.dtype(np.float32))
            elif arr.dtype == np.int64:
                down = arr.astype(np.int32)
                if np.array_equal(down, arr):
                    arr = down
    if arr.dtype.kind == "O":
        raise TypeError(
            f"Failed to convert elements of {value!r} to Tensor. Consider casting elements to a supported type."
        )
    return _native(arr)


_COMPATIBLE = {
    "b": (bool,),
    "c": (numbers.Complex, np.number),
    "f": (numbers.Real, np.integer, np.floating),
    "i": (numbers.Integral, np.integer),
    "u": (numbers.Integral, np.integer),
}


def _flatten(values):
    if isinstance(values, (list, tuple)):
        for v in values:
            yield from _flatten(v)
    else:
        yield values


def _assert_compatible(values, dtype):
    """TF's ``_AssertCompatible``: every Python value must be of a type that ``dtype`` takes."""
    expected = _COMPATIBLE[dtype.kind]
    for v in _flatten(values):
        if not (isinstance(v, expected) or (isinstance(v, np.ndarray) and issubclass(v.dtype.type, expected))):
            raise TypeError(f"Expected {dtype.name}, but got {v} of type '{type(v).__name__}'.")


def _dense_dims(values):
    """Return the shape a nested list claims, arrays inside it counting with their shapes.

    TF's graph-mode ``_GetDenseDimensions`` counts an ndarray inside a list as a scalar,
    so graph-mode ``tf.TensorArray.unstack([a, b])`` refuses a list of arrays ("Expected
    values ... to be a dense tensor with shape [2], but got shape [2, 2]") that its raw
    ops, eager TF and numpy all take; numba_ta's class takes it (a documented divergence).
    """
    if isinstance(values, np.ndarray):
        return list(values.shape)
    if not isinstance(values, (list, tuple)):
        return []
    if not values:
        return [0]
    return [len(values)] + _dense_dims(values[0])


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
