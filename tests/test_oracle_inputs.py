"""Input forms TensorFlow accepts, against TF 2.21.

Two halves:

* regression tests that run without TensorFlow: each accepted form with the result TF gives
  (written down from TF 2.21, and checked by the oracle half);
* ``oracle`` tests that run the same inputs through TensorFlow and compare values, dtypes,
  flows, error classes and messages: ``tf.raw_ops`` in eager mode against
  :mod:`numba_ta.raw_ops`, and graph-mode ``tf.TensorArray`` (a TF1 graph with control flow
  v1 and a ``Session``) against :class:`numba_ta.TensorArray`.

The forms: values given as lists or tuples of ndarrays, ``memoryview``, ``array.array``,
``bytearray``, ctypes arrays, objects with ``__array__`` / ``__array_interface__``, arrays in
non-native byte order; attributes as a GraphDef stores them (``dtype`` as TF's ``DataType``
enum, shapes as a ``TensorShapeProto``, -1 for an unknown dimension, ``tensor_array_name`` as
bytes); ``flow_in`` too large for a double; and the class's graph-mode conversion of values
of another dtype.

TF's eager shape attributes have two readers: the fast path (taken once the op has run, when
``dtype`` is a ``tf.DType`` and the other inputs convert without Python: tensors, ints) reads
a list of Python ints as TF's kernels do (-1 unknown, below -1 ``InvalidArgumentError``);
the Python fallback (a string dtype, a list of indices ...) builds a ``tf.TensorShape``,
which refuses -1.  numba_ta reads them as the kernels and GraphDefs do; the oracle tests
below call TF on its fast path.
"""

from __future__ import annotations

import array
import ctypes
import os
import re
import types
import warnings

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numba_ta
from numba_ta import errors, raw_ops
from numba_ta.errors import InvalidArgumentError

try:
    import tensorflow as tf
except ImportError:  # the oracle half skips, the regression half runs
    tf = None


needs_tf = pytest.mark.skipif(tf is None, reason="the oracle tests need tensorflow")

F0 = np.float32(0.0)
A32 = np.array([1.0, 2.0], np.float32)
B32 = np.array([3.0, 4.0], np.float32)
A64 = np.array([1.0, 2.0])
I32 = np.array([1, 2], np.int32)
I64 = np.array([1, 2], np.int64)
K7 = "TensorArray dtype is {} but Op is trying to write dtype {}."


class WithArray:
    """An array-like known only by ``__array__`` (a pandas object, a framework tensor ...)."""

    def __init__(self, a):
        self.a = a

    def __array__(self, dtype=None, copy=None):
        return self.a if dtype is None else self.a.astype(dtype)


class WithInterface:
    """An array-like known only by ``__array_interface__`` (a PIL image ...)."""

    def __init__(self, a):
        self._a = a
        self.__array_interface__ = a.__array_interface__


def proto(dims=None, unknown_rank=False):
    """A duck-typed ``TensorShapeProto``: ``unknown_rank`` and ``dim`` entries with ``size``."""
    return types.SimpleNamespace(
        unknown_rank=unknown_rank, dim=[types.SimpleNamespace(size=d) for d in (dims or [])]
    )


# --------------------------------------------------------------------------------------
# numba_ta helpers


def write_read(value, dtype="float32", **kw):
    h, f = raw_ops.TensorArrayV3(size=1, dtype=dtype, **kw)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=value, flow_in=f)
    return raw_ops.TensorArrayReadV3(handle=h, index=0, flow_in=f, dtype=dtype)


def scatter_gather(value, dtype="float32", n=2):
    h, f = raw_ops.TensorArrayV3(size=n, dtype=dtype)
    f = raw_ops.TensorArrayScatterV3(handle=h, indices=list(range(n)), value=value, flow_in=f)
    return raw_ops.TensorArrayGatherV3(handle=h, indices=list(range(n)), flow_in=f, dtype=dtype)


def split_concat(value, dtype="float32", lengths=(1, 1)):
    h, f = raw_ops.TensorArrayV3(size=len(lengths), dtype=dtype)
    f = raw_ops.TensorArraySplitV3(handle=h, value=value, lengths=list(lengths), flow_in=f)
    return raw_ops.TensorArrayConcatV3(handle=h, flow_in=f, dtype=dtype)[0]


def same(got, want, dtype):
    assert isinstance(got, np.ndarray) and got.dtype == np.dtype(dtype), (got, dtype)
    assert got.dtype.isnative
    np.testing.assert_array_equal(got, np.asarray(want, dtype))


# ======================================================================================
# regression tests (no TensorFlow needed)
# ======================================================================================

# -- values: lists and tuples of ndarrays (TF's sequence converter: the first scalar decides)

LIST_VALUES = [  # (label, value, dtype TF gives it, or the ValueError TF raises)
    ("list of float32 arrays", [A32, B32], "float32"),
    ("tuple of float32 arrays", (A32, B32), "float32"),
    ("list of float64 arrays", [A64, A64], "float64"),
    ("float32 then float64 array", [A32, A64], "float32"),
    ("float64 then float32 array", [A64, A32], "float64"),
    ("int32 then float32 array", [I32, A32], "float32"),
    ("int64 then int32 array", [I64, I32], "int32"),
    ("int64 array too big for int32", [np.array([2**40, 1])], "int64"),
    ("float32 array then Python floats", [A32, [3.0, 4.0]], "float32"),
    ("float64 array then Python floats", [A64, [3.0, 4.0]], "float64"),
    ("float16 then float32 array", [A32.astype(np.float16), A32], "float16"),
    ("0-d float32 arrays", [np.array(1.0, np.float32), np.array(2.0, np.float32)], "float32"),
    ("complex64 then float32 array", [A32.astype(np.complex64), A32], "complex128"),
    ("uint8 array then Python ints", [np.array([1, 2], np.uint8), [3, 400]], "int32"),
    ("big-endian float32 arrays", [np.array([1, 2], ">f4"), np.array([3, 4], ">f4")], "float32"),
    (
        "bool then int array",
        [np.array([True, False]), I32],
        "Can't convert Python sequence with mixed types to Tensor.",
    ),
    (
        "float32 then complex64 array",
        [A32, A32.astype(np.complex64)],
        "Can't convert Python sequence with mixed types to Tensor.",
    ),
    (
        "float32 array then 1e300",
        [A32, [1e300, 1.0]],
        "Can't convert Python sequence with a value out of range for a double-precision float.",
    ),
    (
        "uint64 2**63",
        [np.array([2**63], np.uint64)],
        "Can't convert Python sequence with out-of-range integer to Tensor.",
    ),
    (
        "ragged arrays",
        [np.ones(2, np.float32), np.ones(3, np.float32)],
        "Can't convert non-rectangular Python sequence to Tensor.",
    ),
    # Python scalars: the first one decides too (numba_ta used to let any numpy float decide)
    ("[1.0, np.float64(2)]", [1.0, np.float64(2)], "float32"),
    ("[1, np.float64(2)]", [1, np.float64(2)], "float32"),
    ("[1, True]", [1, True], "int32"),
    ("[1.5, True]", [1.5, True], "float32"),
    ("[1j, 1.5]", [1j, 1.5], "complex128"),
]


@pytest.mark.parametrize("label,value,want", LIST_VALUES, ids=[c[0] for c in LIST_VALUES])
def test_lists_of_arrays_convert_as_tf(label, value, want):
    if want.startswith("Can't"):
        with pytest.raises(ValueError, match=re.escape(want)):
            write_read(value)
        return
    same(write_read(value, want), np.array(plain(value), want), want)
    if want != "float32":  # raw ops keep TF's strict dtype check
        with pytest.raises(InvalidArgumentError, match=re.escape(K7.format("float", numba_ta.tf.dtypes.tf_name(want)))):
            write_read(value, "float32")


def plain(v):
    """``v`` with every ndarray as nested Python lists."""
    if isinstance(v, (list, tuple)):
        return [plain(x) for x in v]
    return v.tolist() if isinstance(v, np.ndarray) else v


def test_list_of_arrays_in_scatter_and_split():
    same(scatter_gather([A32, B32]), [A32, B32], "float32")
    same(scatter_gather((A32, B32)), [A32, B32], "float32")
    same(split_concat([A32, B32]), [A32, B32], "float32")
    with pytest.raises(InvalidArgumentError, match=re.escape(K7.format("float", "double"))):
        scatter_gather([A64, A32])  # the first array's dtype


# -- values: buffers and array-likes


def test_memoryview_array_bytearray_ctypes_convert_as_python_sequences():
    # TF reads these as sequences of Python scalars: a float64 buffer gives float32
    same(write_read(memoryview(A64)), A64, "float32")
    same(write_read(memoryview(np.array([1, 2], np.int64)), "int32"), [1, 2], "int32")
    same(write_read(memoryview(np.array([True, False])), "bool"), [True, False], "bool")
    same(write_read(array.array("d", [1.5, 2.5])), [1.5, 2.5], "float32")
    same(write_read(array.array("f", [1.5, 2.5])), [1.5, 2.5], "float32")
    same(write_read(array.array("l", [1, 2]), "int32"), [1, 2], "int32")
    same(write_read(bytearray(b"ab"), "int32"), [97, 98], "int32")
    same(write_read((ctypes.c_double * 2)(1.5, 2.5)), [1.5, 2.5], "float32")
    same(scatter_gather(memoryview(A64)), A64, "float32")
    same(split_concat(array.array("d", [1.5, 2.5])), [1.5, 2.5], "float32")


def test_multidimensional_memoryview_is_tf_value_error():
    with pytest.raises(ValueError, match="Cannot infer dtype of a memoryview object: NotImplementedError"):
        write_read(memoryview(np.ones((2, 2), np.float32)))


def test_array_likes_keep_their_dtype():
    m = np.array([[1, 2], [3, 4]], np.float64)
    same(write_read(WithArray(m), "float64"), m, "float64")
    same(write_read(WithArray(m.astype(np.int16)), "int16"), m, "int16")
    same(write_read(WithInterface(m.astype(np.int16)), "int16"), m, "int16")
    same(scatter_gather(WithArray(m.astype(np.float32))), m, "float32")
    with pytest.raises(InvalidArgumentError, match=re.escape(K7.format("float", "double"))):
        write_read(WithArray(m))


@pytest.mark.parametrize("code,name", [(">f4", "float32"), (">f8", "float64"), (">i4", "int32"), (">c8", "complex64")])
def test_non_native_byte_order_is_its_dtype_in_native_order(code, name):
    v = np.array([[1, 2], [3, 4]], code)
    same(write_read(v, name), v, name)
    same(scatter_gather(v, name), v, name)
    same(split_concat(v, name), v, name)
    t = numba_ta.TensorArray(name, size=2)
    same(t.write(0, v).read(0), v, name)
    same(numba_ta.TensorArray(name, size=2).unstack(v).stack(), v, name)


def test_non_native_byte_order_of_another_dtype_names_it_as_tf():
    with pytest.raises(InvalidArgumentError, match=re.escape(K7.format("float", "double"))):
        write_read(np.ones(2, ">f8"))
    with pytest.raises(InvalidArgumentError, match=re.escape(K7.format("int32", "float"))):
        write_read(np.ones(2, ">f4"), "int32")


# -- attributes as a GraphDef stores them

ENUM = {1: "float32", 2: "float64", 3: "int32", 4: "uint8", 5: "int16", 6: "int8", 8: "complex64", 9: "int64",
        10: "bool", 17: "uint16", 18: "complex128", 19: "float16", 22: "uint32", 23: "uint64"}


@pytest.mark.parametrize("code", sorted(ENUM))
def test_dtype_as_tf_enum(code):
    name = ENUM[code]
    h, f = raw_ops.TensorArrayV3(size=2, dtype=code, element_shape=[2])
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones(2, name), flow_in=f)
    same(raw_ops.TensorArrayReadV3(handle=h, index=0, flow_in=f, dtype=code), np.ones(2), name)
    same(raw_ops.TensorArrayGatherV3(handle=h, indices=[1], flow_in=f, dtype=code), np.zeros((1, 2)), name)
    h, f = raw_ops.TensorArrayV3(size=1, dtype=np.int64(code))
    assert numba_ta.TensorArray(code, size=1).dtype == np.dtype(name)


@pytest.mark.parametrize("code,name", [(7, "string"), (14, "bfloat16"), (20, "resource"), (101, "float32_ref")])
def test_unsupported_tf_enum_is_type_error_naming_it(code, name):
    with pytest.raises(TypeError, match=rf"dtype: DataType {code} \({name}\) is not supported by numba_ta"):
        raw_ops.TensorArrayV3(size=1, dtype=code)


@pytest.mark.parametrize("code", [0, -1, 200])
def test_invalid_tf_enum_is_type_error(code):
    with pytest.raises(TypeError, match=f"dtype: {code} is not a TensorFlow DataType enum value"):
        raw_ops.TensorArrayV3(size=1, dtype=code)


def _accepts(element_shape, shapes, attr="element_shape"):
    """Which of ``shapes`` a write into an array of that element shape accepts."""
    out = []
    for s in shapes:
        h, f = raw_ops.TensorArrayV3(size=1, dtype=np.float32, **{attr: element_shape})
        try:
            raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones(s, np.float32), flow_in=f)
            out.append(True)
        except InvalidArgumentError:
            out.append(False)
    return out


SHAPES = [(5, 3), (5, 4), (3,), ()]
ELEMENT_SHAPES = [  # (form, which of SHAPES TF's array then takes)
    (proto([-1, 3]), [True, False, False, False]),
    (proto([5, 3]), [True, False, False, False]),
    (proto(unknown_rank=True), [True, True, True, True]),
    (proto([]), [False, False, False, True]),
    ([-1, 3], [True, False, False, False]),
    ((-1, 3), [True, False, False, False]),
    ([-1], [False, False, True, False]),
    ([-1, -1], [True, True, False, False]),
    ([None, -1], [True, True, False, False]),
]


@pytest.mark.parametrize("form,accepts", ELEMENT_SHAPES, ids=[repr(e[0])[:40] for e in ELEMENT_SHAPES])
def test_element_shape_forms(form, accepts):
    assert _accepts(form, SHAPES) == accepts


@pytest.mark.parametrize(
    "form,shown",
    [([-2], "[-2]"), ([3, -2], "[3,-2]"), ([None, -2], "[?,-2]"), ((3, -7, None), "[3,-7,?]"),
     (proto([-2]), "[-2]"), (proto([-1, -5]), "[?,-5]")],
)
def test_element_shape_below_minus_one_is_tf_invalid_argument(form, shown):
    msg = f"Shape {shown} has dimensions with values below -1 (where -1 means unknown)"
    with pytest.raises(InvalidArgumentError) as e:
        raw_ops.TensorArrayV3(size=1, dtype=np.float32, element_shape=form)
    assert e.value.message == msg


def test_element_shape_minus_one_only_in_a_list_of_python_ints():
    # TF's fast path reads only Python ints; an ndarray, numpy ints or a bare -1 go through
    # tf.TensorShape, which refuses negative dimensions
    for form in (np.array([-1, 3]), [np.int64(-1), 3], -1):
        with pytest.raises(ValueError, match="Dimension -1 must be >= 0"):
            raw_ops.TensorArrayV3(size=1, dtype=np.float32, element_shape=form)
    # tf.TensorShape and graph-mode tf.TensorArray refuse -1 too; they take a proto
    with pytest.raises(ValueError, match="Dimension -1 must be >= 0"):
        numba_ta.TensorShape([-1, 3])
    with pytest.raises(ValueError, match="Dimension -1 must be >= 0"):
        numba_ta.TensorArray(np.float32, size=1, element_shape=[-1, 3])
    assert numba_ta.TensorShape(proto([-1, 3])) == numba_ta.TensorShape([None, 3])
    assert numba_ta.TensorArray(np.float32, size=1, element_shape=proto([-1, 3])).element_shape.as_list() == [None, 3]
    assert numba_ta.TensorShape(proto(unknown_rank=True)).rank is None


def test_gather_and_concat_shape_attributes_as_protos_and_minus_one():
    h, f = raw_ops.TensorArrayV3(size=1, dtype=np.float32, clear_after_read=False)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones((2, 3), np.float32), flow_in=f)
    for es in (proto([-1, 3]), [-1, 3], proto(unknown_rank=True), [2, -1]):
        assert raw_ops.TensorArrayGatherV3(handle=h, indices=[0], flow_in=f, dtype=np.float32,
                                           element_shape=es).shape == (1, 2, 3)
    for ex0 in (proto([3]), [-1], proto([-1]), proto(unknown_rank=True)):
        v, _ = raw_ops.TensorArrayConcatV3(handle=h, flow_in=f, dtype=np.float32, element_shape_except0=ex0)
        assert v.shape == (2, 3)
    with pytest.raises(InvalidArgumentError, match=re.escape("element_shape_except0 [?,3] but index 0 has")):
        raw_ops.TensorArrayConcatV3(handle=h, flow_in=f, dtype=np.float32, element_shape_except0=[-1, 3])


def test_shape_to_prepend_as_tensor_shape():
    h, f = raw_ops.TensorArrayV3(size=1, dtype=np.float32, element_shape=[2])
    for k, (shape, want) in enumerate([
        (numba_ta.TensorShape([3]), (3, 2)),
        (numba_ta.TensorShape([]), (2,)),
    ]):
        g, gf = raw_ops.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=shape, source=f"s{k}")
        assert raw_ops.TensorArrayReadV3(handle=g, index=0, flow_in=gf, dtype=np.float32).shape == want
    for shape, text in [(numba_ta.TensorShape([None]), "(None,)"), (numba_ta.TensorShape(None), "<unknown>")]:
        with pytest.raises(ValueError, match=re.escape(f"Cannot convert a partially known TensorShape {text} to a")):
            raw_ops.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=shape, source="x")
    # a TensorShapeProto is no tensor for TF either
    with pytest.raises(ValueError, match="unsupported type"):
        raw_ops.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=proto([3]), source="x")
    assert h._storage.grads.keys() == {"s0", "s1"}


def test_tensor_array_name_as_bytes():
    h, _ = raw_ops.TensorArrayV3(size=1, dtype=np.float32, tensor_array_name=b"foo")
    assert re.fullmatch(r"foo_\d+", h.name)
    h, _ = raw_ops.TensorArrayV3(size=1, dtype=np.float32, tensor_array_name=np.bytes_(b"bar"))
    assert re.fullmatch(r"bar_\d+", h.name)
    h, _ = raw_ops.TensorArrayV3(size=1, dtype=np.float32, tensor_array_name=b"\xff")  # TF takes any bytes
    assert re.fullmatch(r"\\xff_\d+", h.name)
    g, _ = raw_ops.TensorArrayGradV3(handle=h, flow_in=F0, source=b"\xfe")
    assert g.name == h.name + "@\\xfe"
    with pytest.raises(TypeError, match="tensor_array_name"):
        raw_ops.TensorArrayV3(size=1, dtype=np.float32, tensor_array_name=bytearray(b"foo"))


# -- flow_in


@pytest.mark.parametrize("flow", [10**400, -(10**400), 2**1024])
def test_flow_beyond_a_double_is_tf_value_error(flow):
    h, f = raw_ops.TensorArrayV3(size=1, dtype=np.float32)
    msg = "Can't convert Python sequence with out-of-range integer to Tensor."
    for call in (
        lambda: raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones(1, np.float32), flow_in=flow),
        lambda: raw_ops.TensorArraySizeV3(handle=h, flow_in=flow),
        lambda: raw_ops.TensorArrayGradV3(handle=h, flow_in=flow, source="g"),
    ):
        with pytest.raises(ValueError, match=re.escape(msg)) as e:
            call()
        assert type(e.value) is ValueError
    assert raw_ops.TensorArraySizeV3(handle=h, flow_in=2**64) == 1  # a big int that fits a double is fine


# -- the class: graph-mode conversion (make_tensor_proto with preferred_dtype)


def test_class_casts_numpy_arrays_as_graph_mode_tf():
    same(numba_ta.TensorArray(np.float32, size=1).write(0, np.zeros(2)).read(0), [0, 0], "float32")
    same(numba_ta.TensorArray(np.float32, size=1).write(0, np.array([1, 2])).read(0), [1, 2], "float32")
    same(numba_ta.TensorArray(np.int32, size=1).write(0, np.array([1.5, -2.7])).read(0), [1, -2], "int32")
    same(numba_ta.TensorArray(np.int32, size=1).write(0, np.array([2**40, 1])).read(0), [0, 1], "int32")  # wraps
    same(numba_ta.TensorArray(np.uint8, size=1).write(0, np.array([-1, 300])).read(0), [255, 44], "uint8")
    same(numba_ta.TensorArray(np.bool_, size=1).write(0, np.array([0.0, 2.5])).read(0), [False, True], "bool")
    same(numba_ta.TensorArray(np.float64, size=1).write(0, np.float32(1.5)).read(0), 1.5, "float64")
    same(numba_ta.TensorArray(np.float32, size=2).scatter([1, 0], np.array([[1], [2]])).stack(), [[2], [1]],
         "float32")
    same(numba_ta.TensorArray(np.float32, size=2).unstack(np.array([1.5, 2.5])).stack(), [1.5, 2.5], "float32")
    # split converts with dtype=: numpy arrays are cast all the same
    same(numba_ta.TensorArray(np.int32, size=2).split(np.array([1.5, 2.7]), [1, 1]).concat(), [1, 2], "int32")
    # array-likes too
    same(numba_ta.TensorArray(np.float32, size=1).write(0, memoryview(A64)).read(0), A64, "float32")
    same(numba_ta.TensorArray(np.float32, size=1).write(0, WithArray(I64)).read(0), [1, 2], "float32")
    same(numba_ta.TensorArray(np.int32, size=1).write(0, bytearray(b"ab")).read(0), [97, 98], "int32")


def test_class_cast_warns_as_numpy_does_in_tf():
    # numpy's floating-point error state decides whether the cast warns (another test or library may
    # have changed it): the default one, as TF's conversion sees it
    with np.errstate(all="warn"), pytest.warns(RuntimeWarning, match="overflow"):
        t = numba_ta.TensorArray(np.float32, size=1).write(0, np.array([1e300, 1.0]))
    same(t.read(0), [np.inf, 1], "float32")
    with pytest.warns(np.exceptions.ComplexWarning):
        t = numba_ta.TensorArray(np.float32, size=1).write(0, np.array([1 + 2j, 3]))
    same(t.read(0), [1, 3], "float32")


def test_class_python_values_as_graph_mode_tf():
    same(numba_ta.TensorArray(np.int32, size=1).write(0, [2**40, 1]).read(0), [0, 1], "int32")
    same(numba_ta.TensorArray(np.uint8, size=1).write(0, [1, 300]).read(0), [1, 44], "uint8")
    same(numba_ta.TensorArray(np.int32, size=1).write(0, [True, False]).read(0), [1, 0], "int32")
    same(numba_ta.TensorArray(np.float32, size=1).write(0, [True, 1.5]).read(0), [1, 1.5], "float32")
    same(numba_ta.TensorArray(np.bool_, size=1).write(0, [np.True_, True]).read(0), [True, True], "bool")
    # a type TF's check refuses: converted without the dtype, the kernel's K7 names it
    with pytest.raises(InvalidArgumentError, match=re.escape(K7.format("int32", "float"))):
        numba_ta.TensorArray(np.int32, size=1).write(0, [1.5, 2])
    with pytest.raises(InvalidArgumentError, match=re.escape(K7.format("float", "bool"))):
        numba_ta.TensorArray(np.float32, size=1).write(0, [np.True_, np.False_])
    # split is strict: TF's type check raises
    with pytest.raises(TypeError, match=re.escape("Expected int32, but got 1.5 of type 'float'.")):
        numba_ta.TensorArray(np.int32, size=2).split([1.5, 2.5], [1, 1])
    with pytest.raises(ValueError, match="None values not supported."):
        numba_ta.TensorArray(np.float32, size=1).write(0, None)


def test_class_takes_a_list_of_arrays():
    # graph-mode tf.TensorArray refuses a list of (non 0-d) ndarrays ("Expected values [...] to be a
    # dense tensor with shape [2], but got shape [2, 2]": make_tensor_proto counts the arrays as
    # scalars); its raw ops, eager TF and numpy take it, and so does numba_ta's class (a divergence)
    ta = numba_ta.TensorArray(np.float32, size=2, clear_after_read=False)
    same(ta.unstack([A32, B32]).stack(), [A32, B32], "float32")
    same(numba_ta.TensorArray(np.float32, size=2).scatter([1, 0], (A32, B32)).stack(), [B32, A32], "float32")
    same(numba_ta.TensorArray(np.float32, size=1).write(0, [A32, B32]).read(0), [A32, B32], "float32")
    same(numba_ta.TensorArray(np.float64, size=2).split([A32, B32], [1, 1]).concat(), [A32, B32], "float64")
    same(
        numba_ta.TensorArray(np.float32, size=2).unstack([np.array([1.5]), np.array([2.5])]).stack(),
        [[1.5], [2.5]],
        "float32",
    )
    same(numba_ta.TensorArray(np.float32, size=2).unstack([np.float32(1), np.array(2.0)]).stack(), [1, 2], "float32")


def test_class_casts_what_raw_ops_refuse():
    # the same arrays: the class casts them (graph-mode tf.TensorArray), the raw ops keep TF's dtype check
    for value, tf_name in ((np.zeros(2), "double"), (np.array([1, 2]), "int64")):
        same(numba_ta.TensorArray(np.float32, size=1).write(0, value).read(0), value, "float32")
        with pytest.raises(InvalidArgumentError, match=re.escape(K7.format("float", tf_name))):
            write_read(value)


# ======================================================================================
# oracle tests: the same inputs through TensorFlow
# ======================================================================================

_TF_NAMES = {"float": "float32", "double": "float64", "half": "float16"}
_NAME = re.compile(r"TensorArrayV3_\d+")


def _tf_message(e):
    from tests.helpers.oracle_util import tf_kernel_message

    return tf_kernel_message(e)


def _outcome_tf(fn):
    try:
        r = fn()
    except tf.errors.OpError as e:
        return ("op", type(e).__name__, _NAME.sub("<ta>", _tf_message(e)))
    except (TypeError, ValueError) as e:
        return ("py", type(e).__name__, str(e).strip())
    return ("ok", r.numpy() if hasattr(r, "numpy") else np.asarray(r))


def _outcome_nt(fn):
    try:
        r = fn()
    except errors.OpError as e:
        return ("op", type(e).__name__, _NAME.sub("<ta>", e.message))
    except (TypeError, ValueError) as e:
        return ("py", type(e).__name__, str(e).strip())
    return ("ok", np.asarray(r))


def _tf_texts_numba_ta_copies(msg):
    return msg.startswith(("Can't convert", "Cannot infer dtype", "Shape [", "Cannot convert a partially known"))


def assert_same_outcome(t, n, what):
    assert t[0] == n[0], f"{what}: tensorflow {t}, numba_ta {n}"
    if t[0] == "ok":
        a, b = t[1], n[1]
        assert b.dtype == a.dtype and b.shape == a.shape, f"{what}: {a.dtype}{a.shape} (TF) vs {b.dtype}{b.shape}"
        assert b.dtype.isnative, what
        np.testing.assert_array_equal(b, a, err_msg=what)
        return
    assert t[1] == n[1], f"{what}: {t} vs {n}"
    if t[0] == "op" or _tf_texts_numba_ta_copies(t[2]):
        assert t[2] == n[2], f"{what}: message {n[2]!r} != TF's {t[2]!r}"
    elif "unsupported type" in t[2]:
        assert "unsupported type" in n[2], f"{what}: {t} vs {n}"


def _programs(lib, value, dtype):
    """Write, scatter and split ``value`` into fresh arrays of ``dtype``; each returns a thunk."""
    R = lib.raw_ops if lib is tf else raw_ops
    dt = tf.as_dtype(dtype) if lib is tf else np.dtype(dtype)

    def write():
        h, f = R.TensorArrayV3(size=1, dtype=dt)
        f = R.TensorArrayWriteV3(handle=h, index=0, value=value, flow_in=f)
        return R.TensorArrayReadV3(handle=h, index=0, flow_in=f, dtype=dt)

    def scatter():
        h, f = R.TensorArrayV3(size=2, dtype=dt)
        f = R.TensorArrayScatterV3(handle=h, indices=[0, 1], value=value, flow_in=f)
        return R.TensorArrayGatherV3(handle=h, indices=[0, 1], flow_in=f, dtype=dt)

    def split():
        h, f = R.TensorArrayV3(size=2, dtype=dt)
        f = R.TensorArraySplitV3(handle=h, value=value, lengths=[1, 1], flow_in=f)
        return R.TensorArrayConcatV3(handle=h, flow_in=f, dtype=dt)[0]

    return {"write": write, "scatter": scatter, "split": split}


def _c64(a):
    return np.asarray(a, np.complex64)


with warnings.catch_warnings():  # numpy's PendingDeprecationWarning for np.matrix (pytest turns warnings into errors)
    warnings.simplefilter("ignore", PendingDeprecationWarning)
    _MATRIX = np.matrix([[1, 2], [3, 4]], np.float32)

ORACLE_VALUES = [
    # lists and tuples of ndarrays, mixed dtypes
    [A32, B32], (A32, B32), [A64, A64], [A32, A64], [A64, A32], [A32, [3.0, 4.0]], [[3.0, 4.0], A32],
    [A64, [3.0, 4.0]], [I32, I64], [I64, I32], [I32, A32], [A32, I32], [I32, A64],
    [np.float32(1), np.float64(2)], [np.float64(1), np.float32(2)], [A32.astype(np.float16)] * 2,
    [A32.astype(np.float16), A32], [I32, [3, 4]], [I64, [3, 4]], [np.array(1.0, np.float32), np.array(2.0)],
    [np.array([True, False])] * 2, [np.array([True, False]), I32], [_c64(A32)] * 2, [_c64(A32), A32],
    [A32, _c64(A32)], [np.array([1, 2], np.uint8), [3, 400]], [np.ones(2, np.float32), np.ones(3, np.float32)],
    [A32, ["a", "b"]], [np.array([1, 2], ">f4"), np.array([3, 4], ">f4")], [np.array([1, 2], ">f4"), A32],
    [[A32, B32]], [np.int64(2**40), 1.5], [np.array([2**63], np.uint64)], [np.array([1], np.uint64)],
    [np.array([2**40], np.int64)], [np.array([2**40, 2**63], np.uint64)], [np.array([1], np.float16), [1e10]],
    [A32, [1e300, 1.0]], [A32, [1e39, 1.0]], [np.array([1e300]), A32], [A32, np.array([1e300, 1.0])],
    [np.array([np.nan, 1.0]), A32], [A32, [np.inf, 1.0]], [np.zeros(0, np.float32)], [np.zeros(0), np.zeros(0)],
    [np.zeros((2, 0), np.int64)], [A32, 1.0], [1.0, A32], [np.array([[1.0]]), [[2.0]]],
    [np.array(["a", "b"]), ["c", "d"]], [np.array([1.0, 2.0], object), [3.0, 4.0]],
    # Python scalars (the first one decides)
    [1, True], [True, 1], [1.5, True], [True, 1.5], [1j, 1], [1j, 1.5], [1j, True], [1, 1j],
    [1.0, np.float64(2)], [1, np.float64(2)], [np.float16(1), 2], [2, np.float16(1)], [np.float16(1), 10**6],
    [2**70, 1.5], [1.5, 2**70], [1.5, 10**400], [1, 2**40, 1.5], [1, 1.5, 2**40], [np.uint64(2**63), 1.5],
    [1.5, 10**39], [np.bool_(True), True], [True, np.bool_(False)], [[], [1.0]], [[1.0], []], [1.0, [2.0]],
    [[1.0], 2.0], [b"a", "b"], [1.0, None], [None, 1.0], [np.longdouble(1.5), 2.0], [np.float32(1), 1e39],
    # buffers and array-likes
    memoryview(A32), memoryview(A64), memoryview(I64), memoryview(np.array([True, False])), memoryview(b"ab"),
    memoryview(np.ones((2, 2), np.float32)), memoryview(np.zeros(0, np.float32)), array.array("f", [1, 2]),
    array.array("d", [1, 2]), array.array("i", [1, 2]), array.array("l", [1, 2]), bytearray(b"ab"),
    (ctypes.c_float * 2)(1, 2), (ctypes.c_double * 2)(1, 2), WithArray(np.array([[1, 2], [3, 4]], np.float32)),
    WithArray(np.array([[1, 2], [3, 4]], np.float64)), WithArray(np.array([[1, 2], [3, 4]], np.int16)),
    WithInterface(np.array([[1, 2], [3, 4]], np.float64)), [WithArray(A32), WithArray(A32)],
    _MATRIX, np.ma.array([[1, 2], [3, 4]], dtype=np.float32),
    np.arange(8, dtype=np.float32).reshape(2, 4)[:, ::2], np.array([[1, 2], [3, 4]], ">f4"),
    np.array([[1, 2], [3, 4]], ">f8"), np.array([[1, 2], [3, 4]], ">i4"), np.array([[1, 2], [3, 4]], ">c16"),
    range(2), [range(2), range(2)],
]


def _value_id(v):
    return re.sub(r"\s+", " ", repr(v))[:60]


@pytest.mark.oracle
@needs_tf
@pytest.mark.parametrize("value", ORACLE_VALUES, ids=[_value_id(v) for v in ORACLE_VALUES])
def test_oracle_value_forms(value):
    # every op on a float32 array; when TF's dtype check names another dtype, again on that one
    for op in ("write", "scatter", "split"):
        seen = set()
        dtype = "float32"
        while dtype not in seen:
            seen.add(dtype)
            t = _outcome_tf(_programs(tf, value, dtype)[op])
            n = _outcome_nt(_programs(raw_ops, value, dtype)[op])
            assert_same_outcome(t, n, f"{op} into {dtype}")
            k7 = t[2] if t[0] == "op" else ""
            m = re.match(r"TensorArray dtype is \w+ but Op is trying to write dtype (\w+)\.$", k7)
            if m is None or m.group(1) == "string":
                break
            dtype = _TF_NAMES.get(m.group(1), m.group(1))


@pytest.mark.oracle
@needs_tf
def test_oracle_dtype_enum():
    for code in list(range(-1, 35)) + [101, 102, 103, 109, 119, 200]:
        try:
            h, f = tf.raw_ops.TensorArrayV3(size=1, dtype=code)
        except (tf.errors.OpError, TypeError, ValueError, KeyError):
            with pytest.raises(TypeError):
                raw_ops.TensorArrayV3(size=1, dtype=code)
            continue
        if code not in ENUM:  # TF's string, bfloat16, quantized ...: numba_ta's documented TypeError
            with pytest.raises(TypeError, match=f"DataType {code}"):
                raw_ops.TensorArrayV3(size=1, dtype=code)
            continue
        name = ENUM[code]
        assert tf.as_dtype(code).name == name
        v = np.ones(2, name)
        f = tf.raw_ops.TensorArrayWriteV3(handle=h, index=0, value=v, flow_in=f)
        want = tf.raw_ops.TensorArrayReadV3(handle=h, index=0, flow_in=f, dtype=code).numpy()
        hn, fn = raw_ops.TensorArrayV3(size=1, dtype=code)
        fn = raw_ops.TensorArrayWriteV3(handle=hn, index=0, value=v, flow_in=fn)
        got = raw_ops.TensorArrayReadV3(handle=hn, index=0, flow_in=fn, dtype=code)
        assert got.dtype == want.dtype == np.dtype(name)
        np.testing.assert_array_equal(got, want)


def _tf_proto(form):
    if isinstance(form, types.SimpleNamespace):
        from tensorflow.core.framework import tensor_shape_pb2

        p = tensor_shape_pb2.TensorShapeProto(unknown_rank=form.unknown_rank)
        for d in form.dim:
            p.dim.add(size=d.size)
        return p
    return form


SHAPE_FORMS = [
    proto([-1, 3]), proto([5, 3]), proto(unknown_rank=True), proto([]), proto([-2]), proto([3, -2]), proto([-1, -5]),
    [-1, 3], (-1, 3), [-1], [-1, -1], [None, 3], [3, -2], [None, -2], (3, -7, None), [-2],
    "tf.TensorShape([None, 3])", "tf.TensorShape(None)",
]


def _shape_form(form):
    if isinstance(form, str):
        return eval(form, {"tf": tf})  # a fixed test string
    return form


@pytest.mark.oracle
@needs_tf
@pytest.mark.parametrize("form", SHAPE_FORMS, ids=[repr(f)[:50] for f in SHAPE_FORMS])
def test_oracle_element_shape_forms(form):
    # TF on its fast path: tensor inputs, a tf.DType, after a first successful call
    tf.raw_ops.TensorArrayV3(size=tf.constant(1), dtype=tf.float32, element_shape=[1])
    form = _shape_form(form)
    for s in SHAPES:
        v = np.ones(s, np.float32)

        def tf_prog(v=v):
            h, f = tf.raw_ops.TensorArrayV3(size=tf.constant(1), dtype=tf.float32, element_shape=_tf_proto(form))
            return tf.raw_ops.TensorArrayWriteV3(handle=h, index=tf.constant(0), value=tf.constant(v), flow_in=f)

        def nt_prog(v=v):
            h, f = raw_ops.TensorArrayV3(size=1, dtype=np.float32, element_shape=form)
            return raw_ops.TensorArrayWriteV3(handle=h, index=0, value=v, flow_in=f)

        assert_same_outcome(_outcome_tf(tf_prog), _outcome_nt(nt_prog), f"element_shape={form!r}, write {s}")


@pytest.mark.oracle
@needs_tf
@pytest.mark.parametrize("form", SHAPE_FORMS, ids=[repr(f)[:50] for f in SHAPE_FORMS])
def test_oracle_gather_and_concat_shape_forms(form):
    form = _shape_form(form)
    v = np.ones((2, 3), np.float32)
    th, tfl = tf.raw_ops.TensorArrayV3(size=tf.constant(1), dtype=tf.float32, clear_after_read=False)
    tfl = tf.raw_ops.TensorArrayWriteV3(handle=th, index=tf.constant(0), value=tf.constant(v), flow_in=tfl)
    nh, nf = raw_ops.TensorArrayV3(size=1, dtype=np.float32, clear_after_read=False)
    nf = raw_ops.TensorArrayWriteV3(handle=nh, index=0, value=v, flow_in=nf)
    idx = tf.constant([0])
    t = _outcome_tf(lambda: tf.raw_ops.TensorArrayGatherV3(
        handle=th, indices=idx, flow_in=tfl, dtype=tf.float32, element_shape=_tf_proto(form)))
    n = _outcome_nt(lambda: raw_ops.TensorArrayGatherV3(
        handle=nh, indices=np.array([0], np.int32), flow_in=nf, dtype=np.float32, element_shape=form))
    assert_same_outcome(t, n, f"gather element_shape={form!r}")
    t = _outcome_tf(lambda: tf.raw_ops.TensorArrayConcatV3(
        handle=th, flow_in=tfl, dtype=tf.float32, element_shape_except0=_tf_proto(form))[0])
    n = _outcome_nt(lambda: raw_ops.TensorArrayConcatV3(
        handle=nh, flow_in=nf, dtype=np.float32, element_shape_except0=form)[0])
    assert_same_outcome(t, n, f"concat element_shape_except0={form!r}")


@pytest.mark.oracle
@needs_tf
def test_oracle_tensor_array_name_bytes():
    from tests.helpers.oracle_util import TFBackend, counter_free

    for name in (b"foo", np.bytes_(b"bar"), "baz"):
        th, _ = tf.raw_ops.TensorArrayV3(size=1, dtype=tf.float32, tensor_array_name=name)
        nh, _ = raw_ops.TensorArrayV3(size=1, dtype=np.float32, tensor_array_name=name)
        assert counter_free(nh.name) == counter_free(TFBackend.handle_name(th))
    for other in (b"\xff", bytearray(b"foo")):  # any bytes (TF's handle then has a bytes name), no bytearray
        t = _outcome_tf(lambda x=other: tf.raw_ops.TensorArrayV3(size=1, dtype=tf.float32, tensor_array_name=x)[1])
        n = _outcome_nt(lambda x=other: raw_ops.TensorArrayV3(size=1, dtype=np.float32, tensor_array_name=x)[1])
        assert t[:2] == n[:2], (t, n)
    th, tfl = tf.raw_ops.TensorArrayV3(size=1, dtype=tf.float32)
    nh, nfl = raw_ops.TensorArrayV3(size=1, dtype=np.float32)
    t = _outcome_tf(lambda: tf.raw_ops.TensorArrayGradV3(handle=th, flow_in=tfl, source=b"\xfe")[1])
    n = _outcome_nt(lambda: raw_ops.TensorArrayGradV3(handle=nh, flow_in=nfl, source=b"\xfe")[1])
    assert_same_outcome(t, n, "source=b'\\xfe'")


@pytest.mark.oracle
@needs_tf
@pytest.mark.parametrize("flow", [10**400, -(10**400), 2**1024, 2**1023 - 2**970, 2**64, 2**31, 1.5, np.float32(2)],
                         ids=["1e400", "-1e400", "2**1024", "2**1023-", "2**64", "2**31", "1.5", "np.float32"])
def test_oracle_flow_in(flow):
    th, tfl = tf.raw_ops.TensorArrayV3(size=1, dtype=tf.float32)
    nh, _ = raw_ops.TensorArrayV3(size=1, dtype=np.float32)
    v = np.ones(1, np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # numpy's overflow warning: numba_ta's, not TF's
        for t_fn, n_fn in [
            (lambda: tf.raw_ops.TensorArrayWriteV3(handle=th, index=0, value=v, flow_in=flow),
             lambda: raw_ops.TensorArrayWriteV3(handle=nh, index=0, value=v, flow_in=flow)),
            (lambda: tf.raw_ops.TensorArraySizeV3(handle=th, flow_in=flow),
             lambda: raw_ops.TensorArraySizeV3(handle=nh, flow_in=flow)),
        ]:
            assert_same_outcome(_outcome_tf(t_fn), _outcome_nt(n_fn), f"flow_in={flow!r}")


@pytest.mark.oracle
@needs_tf
def test_oracle_tensor_shape_indexing_and_slicing():
    # numba_ta.TensorShape indexes and slices as tf.TensorShape does, an unknown rank included
    keys = [0, 1, -1, 5, slice(None), slice(1, None), slice(1, 3), slice(0, 0), slice(3, 1), slice(-2, None),
            slice(None, 2), slice(-1, 2), slice(1, -1), slice(None, None, 2), slice(0, 3, 1)]  # fmt: skip
    for dims in [None, [], [2], [2, None, 3], [None, None]]:
        for key in keys:
            outcomes = []
            for cls in (tf.TensorShape, numba_ta.TensorShape):
                try:
                    got = cls(dims)[key]
                    outcomes.append(("value", got.as_list() if got.rank is not None else "unknown")
                                    if hasattr(got, "rank") else ("value", got))  # fmt: skip
                except Exception as e:  # the exception is the outcome compared
                    outcomes.append((type(e).__name__, str(e)))
            assert outcomes[0] == outcomes[1], (dims, key, outcomes)


@pytest.mark.oracle
@needs_tf
def test_oracle_shape_to_prepend_forms():
    from tensorflow.core.framework import tensor_shape_pb2

    v = np.ones(2, np.float32)
    cases = [
        (tf.TensorShape([3]), numba_ta.TensorShape([3])),
        (tf.TensorShape([2, 3]), tf.TensorShape([2, 3])),
        (tf.TensorShape([]), numba_ta.TensorShape([])),
        (tf.TensorShape([None]), numba_ta.TensorShape([None])),
        (tf.TensorShape([None]), tf.TensorShape([None])),
        (tf.TensorShape(None), numba_ta.TensorShape(None)),
        (tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=3)]), proto([3])),
        (tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=3)]),
         tensor_shape_pb2.TensorShapeProto(dim=[tensor_shape_pb2.TensorShapeProto.Dim(size=3)])),
    ]
    for k, (tshape, nshape) in enumerate(cases):

        def tf_prog(tshape=tshape, k=k):
            h, f = tf.raw_ops.TensorArrayV3(size=1, dtype=tf.float32, element_shape=[2])
            f = tf.raw_ops.TensorArrayWriteV3(handle=h, index=0, value=v, flow_in=f)
            g, gf = tf.raw_ops.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=tshape, source=f"s{k}")
            return tf.raw_ops.TensorArrayReadV3(handle=g, index=0, flow_in=gf, dtype=tf.float32)

        def nt_prog(nshape=nshape, k=k):
            h, f = raw_ops.TensorArrayV3(size=1, dtype=np.float32, element_shape=[2])
            f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=v, flow_in=f)
            g, gf = raw_ops.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=nshape, source=f"s{k}")
            return raw_ops.TensorArrayReadV3(handle=g, index=0, flow_in=gf, dtype=np.float32)

        assert_same_outcome(_outcome_tf(tf_prog), _outcome_nt(nt_prog), f"shape_to_prepend={tshape!r}")


# -- the class against graph-mode tf.TensorArray (TF1 graph, control flow v1, Session)

# lists of (non 0-d) arrays are left out: graph-mode TF refuses them, numba_ta's class takes them
# (test_class_takes_a_list_of_arrays)
CLASS_VALUES = [
    np.array([1.5, 2.7]), np.array([1e300, 1.0]), np.array([np.nan, np.inf]), np.array([1.5, -2.7], np.float32),
    np.array([1.5, 2], np.float16), np.array([1, 2]), np.array([2**40, 1]), np.array([-1, 300]),
    np.array([1, 255], np.uint8), np.array([2**63, 1], np.uint64), np.array([True, False]), np.array([1 + 2j, 3]),
    np.array([1.5, 2], ">f8"), np.array([1.5, 2], ">f4"), np.array([7, 8], ">i4"),
    [1.5, 2.5], [1, 2], [1, 300], [-1, 2], [2**40, 1], [2**31, 1], [True, False], [True, 1.5], [1, 2j], ["a", "b"],
    [np.int64(5), 7], [np.float64(1.0), 2], (1.0, 2.0), [np.array(1.5), np.array(2.5)], [np.True_, True],
    [np.True_, np.False_], [1e300, 1.0], [1e10, 1.0],
    array.array("d", [1.5, 2.5]), array.array("i", [1, 2]), memoryview(np.array([1.5, 2.5])), bytearray(b"ab"),
    WithArray(np.array([1.5, 2.5])), WithArray(np.array([1, 2], np.int16)),
]
CLASS_DTYPES = ["float32", "int32", "uint8", "bool", "complex64", "float16", "float64", "int64"]


def _graph_case(dtype, method, value):
    """Build one case in the current TF graph; return (fetch or error outcome, warning categories)."""
    with warnings.catch_warnings(record=True) as wl:
        warnings.simplefilter("always")
        try:
            ta = tf.TensorArray(getattr(tf, dtype), size=2, clear_after_read=False, infer_shape=False)
            if method == "write":
                out = ta.write(0, value).read(0)
            elif method == "scatter":
                out = ta.scatter([0, 1], value).stack()
            elif method == "unstack":
                out = ta.unstack(value).stack()
            else:
                out = ta.split(value, [1, 1]).concat()
            res = out
        except (TypeError, ValueError, OverflowError) as e:
            res = ("py", type(e).__name__, str(e))
    cats = {w.category.__name__ for w in wl if issubclass(w.category, (RuntimeWarning, np.exceptions.ComplexWarning))}
    return res, cats


def _numba_case(dtype, method, value):
    with warnings.catch_warnings(record=True) as wl:
        warnings.simplefilter("always")
        try:
            ta = numba_ta.TensorArray(dtype, size=2, clear_after_read=False, infer_shape=False)
            if method == "write":
                res = ("ok", ta.write(0, value).read(0))
            elif method == "scatter":
                res = ("ok", ta.scatter([0, 1], value).stack())
            elif method == "unstack":
                res = ("ok", ta.unstack(value).stack())
            else:
                res = ("ok", ta.split(value, [1, 1]).concat())
        except errors.OpError as e:
            res = ("op", type(e).__name__, e.message)
        except (TypeError, ValueError, OverflowError) as e:
            res = ("py", type(e).__name__, str(e))
    cats = {w.category.__name__ for w in wl if issubclass(w.category, (RuntimeWarning, np.exceptions.ComplexWarning))}
    return res, cats


@pytest.mark.oracle
@needs_tf
@pytest.mark.parametrize("method", ["write", "scatter", "unstack", "split"])
@pytest.mark.parametrize("dtype", CLASS_DTYPES)
def test_oracle_class_converts_as_graph_mode_tensor_array(dtype, method):
    import logging

    was_v2 = tf.compat.v1.control_flow_v2_enabled()
    logger = tf.get_logger()
    level = logger.level
    tf.compat.v1.disable_control_flow_v2()
    logger.setLevel(logging.CRITICAL)  # graph-mode TensorArray logs each dtype mismatch before the kernel raises
    try:
        with tf.Graph().as_default():
            built = [_graph_case(dtype, method, v) for v in CLASS_VALUES]
            with tf.compat.v1.Session() as sess:
                tf_results = []
                for res, cats in built:
                    if isinstance(res, tuple):
                        tf_results.append((res, cats))
                        continue
                    try:
                        tf_results.append((("ok", sess.run(res)), cats))
                    except tf.errors.OpError as e:
                        tf_results.append((("op", type(e).__name__, e.message), cats))
    finally:
        logger.setLevel(level)
        if was_v2:
            tf.compat.v1.enable_control_flow_v2()
    for v, (t, tcats) in zip(CLASS_VALUES, tf_results, strict=True):
        n, ncats = _numba_case(dtype, method, v)
        what = f"TensorArray({dtype}).{method}({_value_id(v)})"
        assert t[0] == n[0], f"{what}: tensorflow {t}, numba_ta {n}"
        if t[0] == "ok":
            a, b = np.asarray(t[1]), n[1]
            assert b.dtype == a.dtype and b.shape == a.shape, f"{what}: {a.dtype}{a.shape} (TF) vs {b.dtype}{b.shape}"
            np.testing.assert_array_equal(b, a, err_msg=what)
        elif t[0] == "op":
            assert t[1] == n[1] and n[2] in t[2], f"{what}: {t} vs {n}"
        else:
            assert t[1] == n[1], f"{what}: {t} vs {n}"
            if t[2].startswith(("Expected ", "None values")):
                assert n[2] == t[2], f"{what}: message {n[2]!r} != TF's {t[2]!r}"
        assert tcats == ncats, f"{what}: warnings {ncats} (numba_ta) != {tcats} (tensorflow)"


# A ``handle`` that is no TensorArray handle: TF's conversion to a resource tensor raises a
# ValueError for None and numeric arrays, a TypeError for a str, bytes or int; numba_ta raises
# InvalidArgumentError (a ValueError) and TypeError, naming the op.
BAD_HANDLES = [None, "foo", b"foo", 3, np.zeros(2, np.float32), np.zeros((2, 2), np.int32)]


def _bad_handle_error(read, handle):
    try:
        read(handle)
    except Exception as e:  # the class is what is compared
        return e
    raise AssertionError(f"no error for handle={handle!r}")


@pytest.mark.parametrize("handle", BAD_HANDLES, ids=[repr(h)[:20] for h in BAD_HANDLES])
def test_bad_handle_is_value_error_for_none_and_arrays_else_type_error(handle):
    e = _bad_handle_error(
        lambda h: raw_ops.TensorArrayReadV3(handle=h, index=0, flow_in=F0, dtype=np.float32), handle
    )
    want = ValueError if handle is None or isinstance(handle, np.ndarray) else TypeError
    assert isinstance(e, want) and not isinstance(e, ValueError if want is TypeError else TypeError), repr(e)
    assert str(e).startswith("TensorArrayReadV3: `handle` must be a TensorArray handle returned by TensorArrayV3")


@pytest.mark.oracle
@needs_tf
@pytest.mark.parametrize("handle", BAD_HANDLES, ids=[repr(h)[:20] for h in BAD_HANDLES])
def test_oracle_bad_handle_error_class(handle):
    ours = _bad_handle_error(
        lambda h: raw_ops.TensorArrayReadV3(handle=h, index=0, flow_in=F0, dtype=np.float32), handle
    )
    theirs = _bad_handle_error(
        lambda h: tf.raw_ops.TensorArrayReadV3(handle=h, index=0, flow_in=F0, dtype=tf.float32), handle
    )
    for base in (ValueError, TypeError):
        assert isinstance(ours, base) == isinstance(theirs, base), (repr(ours), repr(theirs))
