"""The bad-input matrix.

Every bad input gets TF's error where TF defines one, otherwise a clear error naming the
argument and the value, and the array it was aimed at is left exactly as it was (compared
on numba_ta's storage before and after, ``tests/helpers/storage_view.py``).

Each row of :data:`CASES` says what numba_ta must do (``nt``) and what TensorFlow does
(``tf``, checked by the ``oracle`` test :func:`test_tf_does_what_the_table_says`, so the
table cannot drift from TF):

* :class:`Kernel` -- a TF kernel error: numba_ta raises exactly that ``numba_ta.errors``
  class with exactly TF's message (``{name}`` is the array's unique name);
* :class:`Py` -- an error of TF's Python layer (argument conversion): numba_ta raises an
  instance of the same built-in class (``TypeError`` / ``ValueError``) whose message
  contains the given texts (the argument's name and the value);
* :class:`Ok` -- TF accepts it, so must numba_ta.

Where ``nt`` and ``tf`` differ, the row is one of numba_ta's documented divergences
(README "Deliberate divergences": #5 no string/object dtypes, #6 bools and floats are not
indices), or TF silently wraps an out-of-range integer to int32 where numba_ta gives a clear
``ValueError`` instead.  (``element_shape=[-1]``: TF's eager fast path, taken when ``dtype``
is a ``tf.DType`` and the op has run before, reads a list of Python ints as its kernels and
GraphDefs do, -1 an unknown dimension and below -1 an ``InvalidArgumentError``; numba_ta does
the same.  Its Python path, which these rows take (``dtype`` a string), refuses any negative
dimension with ``ValueError``.)

Also here: sizes and shapes whose storage cannot fit (a clear error, no raw
``MemoryError``, nothing touched, no process-killing allocation: the risky ones run in a
subprocess under an address-space limit), and NaN / inf / -0.0 stored and summed
faithfully, with serial and parallel kernels.
"""

from __future__ import annotations

import dataclasses
import os
import subprocess
import sys
import textwrap
from typing import Any

import numpy as np
import pytest

from numba_ta import errors, raw_ops
from tests.helpers.fuzz_programs import FULL
from tests.helpers.storage_view import nt_state, same_snapshot

F0 = np.float32(0.0)
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

NO_FLOW = {"V3", "Close"}


# --------------------------------------------------------------------------------------
# expectations


@dataclasses.dataclass
class Kernel:
    cls: str
    msg: str

    def check(self, ok, res, name, who):
        assert not ok, f"{who}: expected {self.cls}: {self.msg!r}, got result {res!r}"
        want = self.msg.format(name=name)
        if who == "tensorflow":
            import tensorflow as tf

            from tests.helpers.oracle_util import tf_kernel_message

            assert isinstance(res, getattr(tf.errors, self.cls)), f"{who}: {type(res).__name__}: {res}"
            assert tf_kernel_message(res) == want, f"{who}: {tf_kernel_message(res)!r} != {want!r}"
            return
        assert type(res) is getattr(errors, self.cls), f"{who}: {type(res).__name__}: {res} (want {self.cls})"
        assert res.message == want, f"{who}:\n got: {res.message!r}\nwant: {want!r}"


@dataclasses.dataclass
class Py:
    cls: type
    needles: tuple = ()

    def __init__(self, cls, *needles):
        self.cls, self.needles = cls, needles

    def check(self, ok, res, name, who):
        assert not ok, f"{who}: expected {self.cls.__name__}, got result {res!r}"
        assert isinstance(res, self.cls), f"{who}: {type(res).__name__}: {res} (want a {self.cls.__name__})"
        assert not isinstance(res, (MemoryError, IndexError, KeyError, AttributeError)), repr(res)
        if who != "tensorflow":
            for n in self.needles:
                assert n in str(res), f"{who}: {n!r} not in the message {str(res)!r}"


@dataclasses.dataclass
class Ok:
    check_result: Any = None

    def check(self, ok, res, name, who):
        assert ok, f"{who}: expected success, got {type(res).__name__}: {res}"
        if self.check_result is not None and who != "tensorflow":
            self.check_result(res, name)


@dataclasses.dataclass
class Case:
    id: str
    op: str
    kw: dict
    nt: Any
    tf: Any = "same"  # "same": TF does what numba_ta must do; None: not run on TF (TF crashes)
    arr: dict | None = None  # TensorArrayV3 kwargs of the target array (None: V3 itself, or no array)
    prep: tuple = ()  # (op, kwargs) run on the target array first

    @property
    def tf_expect(self):
        return self.nt if self.tf == "same" else self.tf


ARR = dict(size=3, dtype="float32", element_shape=[2])
ARR_KEEP = dict(ARR, clear_after_read=False)
W0 = (("Write", dict(index=0, value=np.ones(2, np.float32))),)
CLOSED = W0 + (("Close", {}),)
IAE, NF, UNIMPL = "InvalidArgumentError", "NotFoundError", "UnimplementedError"
K7_STRING = Kernel(IAE, "TensorArray dtype is float but Op is trying to write dtype string.")
T1 = Kernel(IAE, "TensorArray {name} has already been closed.")
T6_0 = Kernel(IAE, "TensorArray {name}: Could not write to TensorArray index 0 because it has already been written to.")


def grad_name_ends(suffix):
    def check(res, name):
        assert res[0].name == name + suffix, (res[0].name, name + suffix)

    return check


def _cases():  # a table: one row per bad input
    # fmt: off
    c = []
    add = c.append
    # -- creation: size
    add(Case("size=-1", "V3", dict(size=-1, dtype="float32"), Kernel(IAE, "Size should be >= 0.")))
    add(Case("size=1.5", "V3", dict(size=1.5, dtype="float32"), Py(TypeError, "size", "1.5")))
    add(Case("size=True", "V3", dict(size=True, dtype="float32"), Py(TypeError, "size", "True"), Ok()))
    add(Case("size=2**31", "V3", dict(size=2**31, dtype="float32"), Py(ValueError, "size", "2147483648"),
             Kernel(IAE, "Size should be >= 0.")))  # TF wraps the int64 to int32
    add(Case("size=2**40", "V3", dict(size=2**40, dtype="float32"), Py(ValueError, "size", "1099511627776"), Ok()))
    add(Case("size=None", "V3", dict(size=None, dtype="float32"), Py(ValueError, "size", "None")))
    add(Case("size='3'", "V3", dict(size="3", dtype="float32"), Py(TypeError, "size", "'3'")))
    add(Case("size=[3]", "V3", dict(size=[3], dtype="float32"),
             Kernel(IAE, "TensorArray size must be scalar, but had shape: [1]")))
    add(Case("size=[[1]]", "V3", dict(size=np.array([[1]]), dtype="float32"),
             Kernel(IAE, "TensorArray size must be scalar, but had shape: [1,1]")))
    # -- creation: dtype
    add(Case("dtype=None", "V3", dict(size=1, dtype=None), Py(TypeError, "dtype", "None")))
    add(Case("dtype='foo'", "V3", dict(size=1, dtype="foo"), Py(TypeError, "dtype", "'foo'")))
    add(Case("dtype=object", "V3", dict(size=1, dtype=object), Py(TypeError, "dtype", "object"), Ok()))
    add(Case("dtype=np.str_", "V3", dict(size=1, dtype=np.str_), Py(TypeError, "dtype", "<U"), Ok()))
    add(Case("dtype='string'", "V3", dict(size=1, dtype="string"), Py(TypeError, "dtype", "'string'"), Ok()))
    # -- creation: element_shape
    es_err = "Error converting element_shape to a TensorShape: "
    # TF's Python path (dtype given as a string here) refuses negative dimensions; its eager
    # fast path (dtype=tf.float32) takes -1 as an unknown dimension and says "Shape [-2] has
    # dimensions with values below -1" for -2, as its kernels and GraphDefs do: numba_ta follows
    # the fast path for a list of Python ints (tests/test_oracle_inputs.py compares it with TF)
    add(Case("element_shape=[-1]", "V3", dict(size=1, dtype="float32", element_shape=[-1]), Ok(),
             Py(ValueError, es_err + "Dimension -1 must be >= 0.")))
    add(Case("element_shape=[-2]", "V3", dict(size=1, dtype="float32", element_shape=[-2]),
             Kernel(IAE, "Shape [-2] has dimensions with values below -1 (where -1 means unknown)"),
             Py(ValueError, es_err + "Dimension -2 must be >= 0.")))
    add(Case("element_shape=np.array([-1])", "V3", dict(size=1, dtype="float32", element_shape=np.array([-1])),
             Py(ValueError, es_err + "Dimension -1 must be >= 0.")))
    add(Case("element_shape=-1", "V3", dict(size=1, dtype="float32", element_shape=-1),
             Py(ValueError, es_err + "Dimension -1 must be >= 0.")))
    add(Case("element_shape=[1.5]", "V3", dict(size=1, dtype="float32", element_shape=[1.5]),
             Py(TypeError, "element_shape", "1.5")))
    add(Case("element_shape=['a']", "V3", dict(size=1, dtype="float32", element_shape=["a"]),
             Py(TypeError, "element_shape", "'a'")))
    add(Case("element_shape=[[1]]", "V3", dict(size=1, dtype="float32", element_shape=[[1]]),
             Py(TypeError, "element_shape", "[1]")))
    add(Case("element_shape=[True]", "V3", dict(size=1, dtype="float32", element_shape=[True]),
             Py(TypeError, "element_shape", "True"), Ok()))
    # -- creation: other attributes
    add(Case("tensor_array_name=5", "V3", dict(size=1, dtype="float32", tensor_array_name=5),
             Py(TypeError, "tensor_array_name", "5")))
    for flag in ("dynamic_size", "clear_after_read", "identical_element_shapes"):
        add(Case(f"{flag}='x'", "V3", {"size": 1, "dtype": "float32", flag: "x"}, Py(TypeError, flag, "'x'")))
    # -- write: values
    for label, v in [("'abc'", "abc"), ("b'abc'", b"abc"), ("['a','b']", ["a", "b"]),
                     ("np.array(['a','b'])", np.array(["a", "b"])), ("np.array([b'a',b'b'])", np.array([b"a", b"b"]))]:
        add(Case(f"write value={label}", "Write", dict(index=1, value=v), K7_STRING, arr=ARR, prep=W0))
    add(Case("write value=None", "Write", dict(index=1, value=None), Py(ValueError, "value", "None"), arr=ARR, prep=W0))
    add(Case("write value=object()", "Write", dict(index=1, value=object()), Py(ValueError, "value", "object"),
             arr=ARR, prep=W0))
    add(Case("write value=dict", "Write", dict(index=1, value={"a": 1}), Py(ValueError, "value", "{'a': 1}"),
             arr=ARR, prep=W0))
    add(Case("write value=ragged", "Write", dict(index=1, value=[[1.0, 2.0], [3.0]]),
             Py(ValueError, "Can't convert non-rectangular Python sequence to Tensor."), arr=ARR, prep=W0))
    add(Case("write value=[1.0,'a']", "Write", dict(index=1, value=[1.0, "a"]),
             Py(ValueError, "Can't convert Python sequence with mixed types to Tensor."), arr=ARR, prep=W0))
    add(Case("write value=object array", "Write", dict(index=1, value=np.array([1.0, 2.0], dtype=object)),
             Py(ValueError, "object"), arr=ARR, prep=W0))
    add(Case("write value=datetime64", "Write", dict(index=1, value=np.array(["2020-01-01"] * 2, "datetime64[D]")),
             Py(ValueError, "datetime64"), arr=ARR, prep=W0))
    add(Case("write value=[1e300,0]", "Write", dict(index=1, value=[1e300, 0.0]),
             Py(ValueError, "Can't convert Python sequence with a value out of range for a double-precision float."),
             arr=ARR, prep=W0))
    add(Case("write value=True", "Write", dict(index=1, value=[True, False]),
             Kernel(IAE, "TensorArray dtype is float but Op is trying to write dtype bool."), arr=ARR, prep=W0))
    add(Case("write value=1+2j", "Write", dict(index=1, value=[1 + 2j, 3j]),
             Kernel(IAE, "TensorArray dtype is float but Op is trying to write dtype complex128."), arr=ARR, prep=W0))
    add(Case("write value=float64", "Write", dict(index=1, value=np.ones(2)),
             Kernel(IAE, "TensorArray dtype is float but Op is trying to write dtype double."), arr=ARR, prep=W0))
    # -- write / read: indices
    for op, extra in (("Write", dict(value=np.ones(2, np.float32))), ("Read", dict(dtype="float32"))):
        a = dict(arr=ARR, prep=W0)
        add(Case(f"{op} index=1.5", op, dict(index=1.5, **extra), Py(TypeError, "index", "1.5"), **a))
        add(Case(f"{op} index=1.0", op, dict(index=1.0, **extra), Py(TypeError, "index", "1.0"), **a))
        add(Case(f"{op} index=True", op, dict(index=True, **extra), Py(TypeError, "index", "True"), Ok(), **a))
        add(Case(f"{op} index=np.float32(1)", op, dict(index=np.float32(1), **extra), Py(TypeError, "index", "1.0"),
                 Ok(), **a))
        # TF wraps these to int32 index 0: a write there finds the element already written
        wrapped = Ok() if op == "Read" else T6_0
        add(Case(f"{op} index=2**40", op, dict(index=2**40, **extra), Py(ValueError, "index", "1099511627776"),
                 wrapped, **a))
        add(Case(f"{op} index=uint64 2**63", op, dict(index=np.uint64(2**63), **extra),
                 Py(ValueError, "index", "9223372036854775808"), wrapped, **a))
        add(Case(f"{op} index=[[1]]", op, dict(index=np.array([[1]]), **extra),
                 Kernel(IAE, "TensorArray index must be scalar, but had shape: [1,1]"), **a))
        add(Case(f"{op} index=[1]", op, dict(index=[1], **extra),
                 Kernel(IAE, "TensorArray index must be scalar, but had shape: [1]"), **a))
        add(Case(f"{op} index='1'", op, dict(index="1", **extra), Py(TypeError, "index", "'1'"), **a))
        add(Case(f"{op} index=None", op, dict(index=None, **extra), Py(ValueError, "index", "None"), **a))
    add(Case("Write index=2**31", "Write", dict(index=2**31, value=np.ones(2, np.float32)),
             Py(ValueError, "index", "2147483648"),
             Kernel(IAE, "TensorArray {name}: Tried to write to index -2147483648 but array is not resizeable and "
                         "size is: 3"), arr=ARR, prep=W0))
    add(Case("Write index=-1", "Write", dict(index=-1, value=np.ones(2, np.float32)),
             Kernel(IAE, "TensorArray {name}: Tried to write to index -1 but array is not resizeable and size is: 3"),
             arr=ARR, prep=W0))
    add(Case("Write index=2**31-1", "Write", dict(index=2**31 - 1, value=np.ones(2, np.float32)),
             Kernel(IAE, "TensorArray {name}: Tried to write to index 2147483647 but array is not resizeable and "
                         "size is: 3"), arr=ARR, prep=W0))
    add(Case("Read index=-2**31", "Read", dict(index=-(2**31), dtype="float32"),
             Kernel(IAE, "Tried to read from index -2147483648 but array size is: 3"), arr=ARR, prep=W0))
    add(Case("Read index=2**31-1", "Read", dict(index=2**31 - 1, dtype="float32"),
             Kernel(IAE, "Tried to read from index 2147483647 but array size is: 3"), arr=ARR, prep=W0))
    # -- gather / scatter: index vectors
    g = dict(arr=ARR_KEEP, prep=W0)
    add(Case("Gather indices=[1.5]", "Gather", dict(indices=[1.5], dtype="float32"), Py(TypeError, "indices", "float"),
             **g))
    add(Case("Gather indices=[True,False]", "Gather", dict(indices=[True, False], dtype="float32"),
             Py(TypeError, "indices", "bool"), Ok(), **g))
    add(Case("Gather indices=[2**40]", "Gather", dict(indices=[2**40], dtype="float32"),
             Py(ValueError, "indices", "1099511627776"), Ok(), **g))
    add(Case("Gather indices=[[0,1]]", "Gather", dict(indices=[[0, 1]], dtype="float32"),
             Kernel(IAE, "Expected indices to be a vector, but received shape: [1,2]"), **g))
    add(Case("Gather indices=0", "Gather", dict(indices=0, dtype="float32"),
             Kernel(IAE, "Expected indices to be a vector, but received shape: []"), **g))
    add(Case("Gather indices=['a']", "Gather", dict(indices=["a"], dtype="float32"), Py(TypeError, "indices"), **g))
    add(Case("Gather indices=None", "Gather", dict(indices=None, dtype="float32"), Py(ValueError, "indices", "None"),
             **g))
    add(Case("Gather indices=ragged", "Gather", dict(indices=[[0], [1, 2]], dtype="float32"),
             Py(ValueError, "indices"), **g))
    add(Case("Gather indices=[-1]", "Gather", dict(indices=[-1], dtype="float32"),
             Kernel(IAE, "Tried to read from index -1 but array size is: 3"), **g))
    add(Case("Gather indices=[2**31-1]", "Gather", dict(indices=[2**31 - 1], dtype="float32"),
             Kernel(IAE, "Tried to read from index 2147483647 but array size is: 3"), **g))
    one = np.ones((1, 2), np.float32)
    add(Case("Scatter indices=[1.5]", "Scatter", dict(indices=[1.5], value=one), Py(TypeError, "indices", "float"),
             arr=ARR, prep=W0))
    add(Case("Scatter indices=[True]", "Scatter", dict(indices=[True], value=one), Py(TypeError, "indices", "bool"),
             Ok(), arr=ARR, prep=W0))
    add(Case("Scatter indices=[2**40]", "Scatter", dict(indices=[2**40], value=one),
             Py(ValueError, "indices", "1099511627776"), T6_0, arr=ARR, prep=W0))
    add(Case("Scatter indices=[[1]]", "Scatter", dict(indices=[[1]], value=one),
             Kernel(IAE, "Expected indices to be a vector, but received shape: [1,1]"), arr=ARR, prep=W0))
    add(Case("Scatter indices=[-1]", "Scatter", dict(indices=[-1], value=one),
             Kernel(IAE, "TensorArray {name}: Tried to write to index -1 but array is not resizeable and size is: 3"),
             arr=ARR, prep=W0))
    add(Case("Scatter indices=[2**31-1]", "Scatter", dict(indices=[2**31 - 1], value=one),
             Kernel(IAE, "Max scatter index must be < array size (2147483647 vs. 3)"), arr=ARR, prep=W0))
    add(Case("Scatter value=['a']", "Scatter", dict(indices=[1], value=[["a", "b"]]), K7_STRING, arr=ARR, prep=W0))
    add(Case("Scatter value=None", "Scatter", dict(indices=[1], value=None), Py(ValueError, "value", "None"), arr=ARR,
             prep=W0))
    add(Case("Scatter value=ragged", "Scatter", dict(indices=[1, 2], value=[[1.0], [1.0, 2.0]]),
             Py(ValueError, "Can't convert non-rectangular Python sequence to Tensor."), arr=ARR, prep=W0))
    # -- split: lengths
    sp = dict(arr=dict(size=2, dtype="float32"))
    v3 = np.ones(3, np.float32)
    add(Case("Split lengths=[1.5,1.5]", "Split", dict(value=v3, lengths=[1.5, 1.5]), Py(TypeError, "lengths", "float"),
             **sp))
    add(Case("Split lengths=[[1,2]]", "Split", dict(value=v3, lengths=[[1, 2]]),
             Kernel(IAE, "Expected lengths to be a vector, received shape: [1,2]"), **sp))
    add(Case("Split lengths=3", "Split", dict(value=v3, lengths=3),
             Kernel(IAE, "Expected lengths to be a vector, received shape: []"), **sp))
    add(Case("Split lengths=[True,True]", "Split", dict(value=np.ones(2, np.float32), lengths=[True, True]),
             Py(TypeError, "lengths", "bool"), Ok(), **sp))
    add(Case("Split lengths=['1','2']", "Split", dict(value=v3, lengths=["1", "2"]), Py(TypeError, "lengths"), **sp))
    add(Case("Split value=None", "Split", dict(value=None, lengths=[1, 2]), Py(ValueError, "value", "None"), **sp))
    add(Case("Split lengths=[4,-1]", "Split", dict(value=v3, lengths=[4, -1]),
             Kernel(IAE, "TensorArray {name}: split lengths must be >= 0, but lengths[1] is -1 (TensorFlow aborts "
                         "here)."), None, **sp))
    # -- concat / read: dtype and shapes
    add(Case("Concat element_shape_except0=[1.5]", "Concat", dict(dtype="float32", element_shape_except0=[1.5]),
             Py(TypeError, "element_shape_except0", "1.5"), arr=ARR_KEEP, prep=W0))
    add(Case("Concat dtype='string'", "Concat", dict(dtype="string"), Py(TypeError, "dtype", "'string'"),
             Kernel(IAE, "TensorArray dtype is float but Op requested dtype string."), arr=ARR_KEEP, prep=W0))
    add(Case("Read dtype=None", "Read", dict(index=0, dtype=None), Py(TypeError, "dtype", "None"), arr=ARR, prep=W0))
    add(Case("Read dtype='foo'", "Read", dict(index=0, dtype="foo"), Py(TypeError, "dtype", "'foo'"), arr=ARR,
             prep=W0))
    add(Case("Read dtype=float64", "Read", dict(index=0, dtype="float64"),
             Kernel(IAE, "TensorArray dtype is float but Op requested dtype double."), arr=ARR, prep=W0))
    # -- gradients: shape_to_prepend and source
    gws = dict(arr=ARR, prep=W0)
    for label, p, exp in [
        ("[-1]", [-1], Kernel(IAE, "Dimension -1 must be >= 0")),
        ("[2,-3]", [2, -3], Kernel(IAE, "Dimension -3 must be >= 0")),
        ("[[1]]", [[1]], Kernel(IAE, "shape must be a vector of {{int32,int64}}, got shape [1,1]")),
        ("2", 2, Kernel(IAE, "shape must be a vector of {{int32,int64}}, got shape []")),
        ("[1.5]", [1.5], Py(TypeError, "shape_to_prepend", "float")),
        ("['a']", ["a"], Py(TypeError, "shape_to_prepend")),
        ("None", None, Py(ValueError, "shape_to_prepend", "None")),
    ]:
        add(Case(f"GradWithShape shape_to_prepend={label}", "GradWithShape",
                 dict(shape_to_prepend=p, source="s"), exp, **gws))
    add(Case("GradWithShape shape_to_prepend=[True]", "GradWithShape", dict(shape_to_prepend=[True], source="s"),
             Py(TypeError, "shape_to_prepend", "bool"), Ok(), **gws))
    add(Case("GradWithShape shape_to_prepend=[2**40]", "GradWithShape", dict(shape_to_prepend=[2**40], source="s"),
             Py(ValueError, "shape_to_prepend", "1099511627776"), Ok(), **gws))  # TF wraps to int32
    add(Case("Grad source=''", "Grad", dict(source=""), Ok(grad_name_ends("@")), **gws))
    add(Case("Grad source='a@b'", "Grad", dict(source="a@b"), Ok(grad_name_ends("@a@b")), **gws))
    add(Case("Grad source=b'x'", "Grad", dict(source=b"x"), Ok(grad_name_ends("@x")), **gws))
    for op in ("Grad", "GradWithShape"):
        extra = {"shape_to_prepend": [1]} if op == "GradWithShape" else {}
        add(Case(f"{op} source=3", op, dict(source=3, **extra), Py(TypeError, "source", "3"), **gws))
        add(Case(f"{op} source=None", op, dict(source=None, **extra), Py(TypeError, "source", "None"), **gws))
    # -- closed arrays: every op is T1, except Close and a gather of no indices
    closed = dict(arr=ARR, prep=CLOSED)
    for op, kw in [
        ("Write", dict(index=1, value=np.ones(2, np.float32))),
        ("Read", dict(index=0, dtype="float32")),
        ("Gather", dict(indices=[0], dtype="float32")),
        ("Scatter", dict(indices=[1], value=one)),
        ("Concat", dict(dtype="float32")),
        ("Split", dict(value=np.ones((3, 2), np.float32), lengths=[1, 1, 1])),
        ("Size", {}),
        ("Grad", dict(source="x")),
        ("GradWithShape", dict(shape_to_prepend=[1], source="x")),
    ]:
        add(Case(f"closed {op}", op, kw, T1, **closed))
    add(Case("closed Close", "Close", {}, Ok(), **closed))
    add(Case("closed Gather []", "Gather", dict(indices=np.zeros(0, np.int32), dtype="float32", element_shape=[2]),
             Ok(lambda res, name: res.shape == (0, 2)), **closed))
    # -- flow_in
    add(Case("flow_in='a'", "Write", dict(index=1, value=np.ones(2, np.float32), flow_in="a"),
             Py(TypeError, "flow_in", "'a'"), arr=ARR, prep=W0))
    add(Case("flow_in=None", "Write", dict(index=1, value=np.ones(2, np.float32), flow_in=None),
             Py(ValueError, "flow_in", "None"), arr=ARR, prep=W0))
    add(Case("flow_in=1j", "Write", dict(index=1, value=np.ones(2, np.float32), flow_in=1j),
             Py(TypeError, "flow_in", "1j"), arr=ARR, prep=W0))
    # -- objects that are not handles
    not_handles = [("None", None, ValueError), ("3", 3, TypeError), ("'TensorArrayV3_0'", "TensorArrayV3_0", TypeError),
                   ("np.zeros(2)", np.zeros(2), ValueError)]
    for op, kw in [
        ("Write", dict(index=0, value=np.ones(2, np.float32))),
        ("Read", dict(index=0, dtype="float32")),
        ("Gather", dict(indices=[0], dtype="float32")),
        ("Scatter", dict(indices=[0], value=one)),
        ("Concat", dict(dtype="float32")),
        ("Split", dict(value=np.ones((1, 2), np.float32), lengths=[1])),
        ("Size", {}),
        ("Close", {}),
        ("Grad", dict(source="x")),
        ("GradWithShape", dict(shape_to_prepend=[1], source="x")),
    ]:
        for label, obj, cls in not_handles:
            if op != "Size" and label in ("'TensorArrayV3_0'", "np.zeros(2)"):
                continue
            add(Case(f"{op} handle={label}", op, dict(kw, handle=obj), Py(cls, "handle", repr(obj)[:10])))
    # fmt: on
    return c


CASES = _cases()


# --------------------------------------------------------------------------------------
# running a case on either library


def _tf_handle_name(h):
    from tests.helpers.oracle_util import TFBackend

    return TFBackend.handle_name(h)


def setup_case(case, lib):
    """Create the target array (if any) and run the preparation; return (handle, name)."""
    if case.arr is None:
        return None, None
    h, f = lib.TensorArrayV3(**case.arr)
    for op, kw in case.prep:
        kw = dict(kw)
        if op not in NO_FLOW:
            kw.setdefault("flow_in", 0.0)
        getattr(lib, FULL[op])(handle=h, **kw)
    name = h.name if lib is raw_ops else _tf_handle_name(h)
    return h, name


def call_case(case, lib, handle):
    kw = dict(case.kw)
    if handle is not None:
        kw.setdefault("handle", handle)
    if case.op not in NO_FLOW:
        kw.setdefault("flow_in", 0.0)
    try:
        return True, getattr(lib, FULL[case.op])(**kw)
    except Exception as e:  # checked by the expectation
        return False, e


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_bad_input(case):
    handle, name = setup_case(case, raw_ops)
    before = nt_state(handle) if handle is not None else None
    ok, res = call_case(case, raw_ops, handle)
    case.nt.check(ok, res, name, "numba_ta")
    if not ok and handle is not None:
        assert same_snapshot(before, nt_state(handle)), (
            f"the failed op changed the array:\n{before}\n{nt_state(handle)}"
        )


TF_CASES = [c for c in CASES if c.tf is not None]


@pytest.mark.oracle
@pytest.mark.parametrize("case", TF_CASES, ids=[c.id for c in TF_CASES])
def test_tf_does_what_the_table_says(case):
    tf = pytest.importorskip("tensorflow")
    handle, name = setup_case(case, tf.raw_ops)
    ok, res = call_case(case, tf.raw_ops, handle)
    case.tf_expect.check(ok, res, name, "tensorflow")


def test_matrix_size(record_property):
    """Report how many bad inputs the matrix holds (no assertion beyond a floor)."""
    record_property("bad_input_cases", len(CASES))
    print(f"\nbad-input matrix: {len(CASES)} cases, {sum(c.tf != 'same' for c in CASES)} with a documented divergence")
    assert len(CASES) >= 100


# --------------------------------------------------------------------------------------
# storage that cannot fit


def test_huge_capacity_takes_memory_only_for_what_is_written():
    """size 2**20 x element [2**20] float32 (4 TiB if dense): writes take their own bytes, as in TF."""
    h, f = raw_ops.TensorArrayV3(size=2**20, dtype=np.float32, element_shape=[2**20])
    v = np.ones(2**20, np.float32)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=v, flow_in=f)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=2**20 - 1, value=2 * v, flow_in=f)
    assert h._storage.data.nbytes <= 4 * v.nbytes
    np.testing.assert_array_equal(raw_ops.TensorArrayReadV3(handle=h, index=2**20 - 1, flow_in=f, dtype=np.float32),
                                  2 * v)  # fmt: skip
    np.testing.assert_array_equal(raw_ops.TensorArrayReadV3(handle=h, index=5, flow_in=f, dtype=np.float32), 0 * v)


_ALLOC_CHILD = """
import resource, sys
import numpy as np
from tests.helpers.storage_view import nt_state, same_snapshot
from numba_ta import errors, raw_ops

layout, width = sys.argv[1], 1 << 22  # rows of 16 MiB
h, f = raw_ops.TensorArrayV3(size=64, dtype=np.float32, dynamic_size=True)
if layout != "first":
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones(width, np.float32), flow_in=f)
if layout == "ragged":
    f = raw_ops.TensorArrayWriteV3(handle=h, index=1, value=np.ones(3, np.float32), flow_in=f)
values = np.ones((8, width), np.float32)
raw_ops.TensorArrayScatterV3(handle=raw_ops.TensorArrayV3(size=1, dtype=np.float32)[0], indices=[0],
                             value=np.ones((1, 3), np.float32), flow_in=0.0)  # the kernels, loaded
before = nt_state(h)
with open("/proc/self/statm") as fh:
    vm = int(fh.read().split()[0]) * resource.getpagesize()
limit = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (vm + (64 << 20), limit[1]))  # the 128 MiB of new rows do not fit
try:
    raw_ops.TensorArrayScatterV3(handle=h, indices=np.arange(100, 108), value=values, flow_in=f)
    print("no error")
except errors.ResourceExhaustedError as e:
    print("message", e.message.startswith("OOM when allocating tensor with shape"), e.message[:80])
resource.setrlimit(resource.RLIMIT_AS, limit)
print("unchanged", same_snapshot(before, nt_state(h)))
f = raw_ops.TensorArrayScatterV3(handle=h, indices=np.arange(100, 108), value=values, flow_in=f)
got = raw_ops.TensorArrayReadV3(handle=h, index=107, flow_in=f, dtype=np.float32)
print("usable", bool(np.array_equal(got, values[7])))
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc/self/statm and RLIMIT_AS")
@pytest.mark.parametrize("layout", ["first", "dense", "ragged"])
def test_data_allocation_failure_is_a_clear_error_and_atomic(layout):
    """When the data buffer cannot grow: TF's ResourceExhaustedError, the array as it was, usable.

    The allocation fails for real: a child process lowers its address-space limit
    (``RLIMIT_AS``) below what the scatter's new rows need.
    """
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", _ALLOC_CHILD, layout], capture_output=True, text=True, timeout=600,
                         env=env)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.split("\n")
    assert any(line.startswith("message True") for line in lines), out.stdout
    assert "unchanged True" in lines and "usable True" in lines, out.stdout


_MANY_CHILD = """
import resource, sys
import numpy as np
import numba_ta
from numba_ta import errors, raw_ops as R

n, extra = 2**24, int(sys.argv[1]) << 20
ta = numba_ta.TensorArray(np.float32, size=n, element_shape=[2], clear_after_read=False)
ta = ta.write(3, np.ones(2, np.float32))
lst = R.TensorListReserve(element_shape=[2], num_elements=n, element_dtype=np.float32)
idx = np.arange(n, dtype=np.int32)
small = numba_ta.TensorArray(np.float32, size=2, element_shape=[2], clear_after_read=False)
for f in (small.stack, lambda: small.gather([0]), small.concat):  # the kernels, loaded
    f()
l2 = R.TensorListReserve(element_shape=[2], num_elements=2, element_dtype=np.float32)
R.TensorListStack(input_handle=l2, element_shape=-1, element_dtype=np.float32)
R.TensorListGather(input_handle=l2, indices=[0], element_shape=-1, element_dtype=np.float32)
R.TensorListConcatV2(input_handle=l2, element_shape=[2], leading_dims=np.zeros(0, np.int64), element_dtype=np.float32)
with open("/proc/self/statm") as fh:
    vm = int(fh.read().split()[0]) * resource.getpagesize()
limit = resource.getrlimit(resource.RLIMIT_AS)
resource.setrlimit(resource.RLIMIT_AS, (vm + extra, limit[1]))
ops = {
    "stack": ta.stack,
    "gather": lambda: ta.gather(idx),
    "concat": ta.concat,
    "raw gather": lambda: R.TensorArrayGatherV3(handle=ta.handle, indices=idx, flow_in=ta.flow, dtype=np.float32),
    "list stack": lambda: R.TensorListStack(input_handle=lst, element_shape=-1, element_dtype=np.float32),
    "list gather": lambda: R.TensorListGather(input_handle=lst, indices=idx, element_shape=-1,
                                              element_dtype=np.float32),
    "list concat": lambda: R.TensorListConcatV2(input_handle=lst, element_shape=[2], leading_dims=np.zeros(0, np.int64),
                                                element_dtype=np.float32),
}
for name, op in ops.items():
    try:
        op()
        print(name, "no error")
    except errors.ResourceExhaustedError as e:
        ok = e.message.startswith("OOM when allocating tensor with shape[") and e.message.endswith(
            " on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu")
        print(name, "resource-exhausted", ok, e.message[:70])
    except BaseException as e:
        print(name, "raw", type(e).__name__, str(e)[:200])
resource.setrlimit(resource.RLIMIT_AS, limit)
out = ta.stack()
print("usable", out.shape == (n, 2) and out[3].tolist() == [1, 1] and not out[4].any() and int(ta.size()) == n)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc/self/statm and RLIMIT_AS")
@pytest.mark.parametrize("mib", [32, 160])
def test_out_of_memory_in_many_element_ops_is_tfs_error(mib):
    """``stack()`` of 2**24 elements of [2] float32 under an address-space limit: TF's
    ResourceExhaustedError, not a raw MemoryError about an index array; so for every allocation
    the bulk ops make (index arrays, the kernels' work arrays, results), TensorArray and TensorList.
    The first limit stops the first allocation (the class's range tensor), the second a later one."""
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    out = subprocess.run([sys.executable, "-c", _MANY_CHILD, str(mib)], capture_output=True, text=True, timeout=600,
                         env=env)  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    lines = out.stdout.splitlines()
    assert len(lines) == 8, out.stdout
    for line in lines[:-1]:
        assert " resource-exhausted True " in line, out.stdout
    assert lines[-1] == "usable True", out.stdout


@pytest.mark.parametrize("kernel", ["py_gather", "py_concat", "py_scatter", "py_split"])
def test_a_kernel_out_of_memory_in_its_work_arrays_is_tfs_error(monkeypatch, kernel):
    """A raw MemoryError from the engine's kernels (their int64 work arrays) becomes TF's OOM error."""
    from numba_ta.tensor_array import storage

    h, f = raw_ops.TensorArrayV3(size=3, dtype=np.float32, element_shape=[2], clear_after_read=False)
    f = raw_ops.TensorArrayScatterV3(handle=h, indices=[0, 1, 2], value=np.ones((3, 2), np.float32), flow_in=f)
    h2, f2 = raw_ops.TensorArrayV3(size=3, dtype=np.float32, element_shape=[2])

    def no_memory(*args):
        raise MemoryError("Allocation failed (probably too large).")

    monkeypatch.setattr(storage, kernel, no_memory)  # storage calls the engine's entries by these names
    call = {
        "py_gather": lambda: raw_ops.TensorArrayGatherV3(handle=h, indices=[0, 1, 2], flow_in=f, dtype=np.float32),
        "py_concat": lambda: raw_ops.TensorArrayConcatV3(handle=h, flow_in=f, dtype=np.float32),
        "py_scatter": lambda: raw_ops.TensorArrayScatterV3(handle=h2, indices=[0, 1, 2],
                                                           value=np.ones((3, 2), np.float32), flow_in=f2),
        "py_split": lambda: raw_ops.TensorArraySplitV3(handle=h2, value=np.ones((6, 2), np.float32),
                                                       lengths=[2, 2, 2], flow_in=f2),
    }[kernel]  # fmt: skip
    with pytest.raises(errors.ResourceExhaustedError) as e:
        call()
    assert e.value.message == (
        "OOM when allocating tensor with shape[3] and type int64 on /job:localhost/replica:0/task:0/device:CPU:0 "
        "by allocator cpu"
    )


@pytest.mark.parametrize("op", ["stack", "gather", "concat", "from_tensor"])
def test_a_list_op_out_of_memory_in_its_work_arrays_is_tfs_error(monkeypatch, op):
    from numba_ta.tensor_list import store as _tensor_list

    lst = raw_ops.TensorListFromTensor(tensor=np.ones((3, 2), np.float32), element_shape=-1)

    def no_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate")

    for name in ("rows", "concat_rows", "from_rows"):
        monkeypatch.setattr(_tensor_list.NumericStore, name, no_memory)
    call = {
        "stack": lambda: raw_ops.TensorListStack(input_handle=lst, element_shape=-1, element_dtype=np.float32),
        "gather": lambda: raw_ops.TensorListGather(input_handle=lst, indices=[0, 1, 2], element_shape=-1,
                                                   element_dtype=np.float32),
        "concat": lambda: raw_ops.TensorListConcatV2(input_handle=lst, element_shape=-1,
                                                     leading_dims=np.zeros(0, np.int64), element_dtype=np.float32),
        "from_tensor": lambda: raw_ops.TensorListFromTensor(tensor=np.ones((3, 2), np.float32), element_shape=-1),
    }[op]  # fmt: skip
    with pytest.raises(errors.ResourceExhaustedError, match=r"^OOM when allocating tensor with shape\[3\] and type int64"):  # noqa: E501
        call()


def test_the_class_stack_names_tfs_range_tensor(monkeypatch):
    """TF's ``stack()`` is ``gather(range(size))``: its first allocation is the int32 range tensor."""
    ta = __import__("numba_ta").TensorArray(np.float32, size=3, element_shape=[2])

    def no_memory(*args, **kwargs):
        raise MemoryError("Unable to allocate")

    monkeypatch.setattr(np, "arange", no_memory)
    with pytest.raises(errors.ResourceExhaustedError) as e:
        ta.stack()
    assert e.value.message == (
        "OOM when allocating tensor with shape[3] and type int32 on /job:localhost/replica:0/task:0/device:CPU:0 "
        "by allocator cpu"
    )


@pytest.mark.parametrize("how", ["read", "gather", "concat"])
def test_huge_zero_fill_is_a_clear_error_and_atomic(how):
    """Reading an unwritten element of shape [2**40] needs 4 TiB of zeros: TF says ResourceExhausted."""
    h, f = raw_ops.TensorArrayV3(size=2, dtype=np.float32, element_shape=[2**40])
    before = nt_state(h)
    with pytest.raises(errors.OpError) as e:
        if how == "read":
            raw_ops.TensorArrayReadV3(handle=h, index=0, flow_in=f, dtype=np.float32)
        elif how == "gather":
            raw_ops.TensorArrayGatherV3(handle=h, indices=[1], flow_in=f, dtype=np.float32)
        else:
            raw_ops.TensorArrayConcatV3(handle=h, flow_in=f, dtype=np.float32)
    assert "1099511627776" in e.value.message, e.value.message
    assert same_snapshot(before, nt_state(h))


def test_huge_grad_with_shape_read_is_a_clear_error():
    h, f = raw_ops.TensorArrayV3(size=1, dtype=np.float32, element_shape=[2])
    raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones(2, np.float32), flow_in=f)
    g, gf = raw_ops.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=[2**31 - 1, 2**20], source="s")
    before = nt_state(g)
    with pytest.raises(errors.OpError):
        raw_ops.TensorArrayReadV3(handle=g, index=0, flow_in=gf, dtype=np.float32)
    assert same_snapshot(before, nt_state(g))


_LIMITED_HEAD = textwrap.dedent(
    """
    import resource, sys
    import numpy as np
    from numba_ta import errors, raw_ops

    def vm_bytes():
        for line in open("/proc/self/status"):
            if line.startswith("VmSize:"):
                return int(line.split()[1]) * 1024

    def maxrss_mb():
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    # a safety net, not the subject: the allocations below must fail (or be lazy) by themselves
    limit = vm_bytes() + 3 * 2**30
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    rss0 = maxrss_mb()
    """
)
_LIMITED_TAIL = """
print("OK", round(maxrss_mb() - rss0))
"""

_CREATE_HUGE = """
try:
    h, f = raw_ops.TensorArrayV3(size=2**31 - 1, dtype=np.float32, element_shape=[2**20])
except errors.ResourceExhaustedError as e:  # the metadata (13 bytes an element) did not fit
    print("error:", e.message)
else:
    try:
        raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones(2**20, np.float32), flow_in=f)
    except errors.OpError as e:
        print("write error:", e.message)
    else:
        sys.exit("a write of 8 PiB of storage succeeded?")
"""

_DYNAMIC_HUGE = """
h, f = raw_ops.TensorArrayV3(size=2, dtype=np.float32, element_shape=[1], dynamic_size=True)
for op in ("write", "scatter"):
    try:
        if op == "write":
            raw_ops.TensorArrayWriteV3(handle=h, index=2**31 - 1, value=np.ones(1, np.float32), flow_in=f)
        else:
            raw_ops.TensorArrayScatterV3(handle=h, indices=[2**31 - 1], value=np.ones((1, 1), np.float32), flow_in=f)
    except errors.OpError as e:
        print(op, "error:", e.message)
    assert raw_ops.TensorArraySizeV3(handle=h, flow_in=f) in (2, 2**31), "size changed by a failed op"
raw_ops.TensorArrayWriteV3(handle=h, index=1, value=np.ones(1, np.float32), flow_in=f)
assert raw_ops.TensorArrayReadV3(handle=h, index=1, flow_in=f, dtype=np.float32)[0] == 1
"""


def _run_limited(body):
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    code = _LIMITED_HEAD + textwrap.dedent(body) + _LIMITED_TAIL
    return subprocess.run(
        [sys.executable, "-X", "faulthandler", "-c", code], capture_output=True, text=True, timeout=600, env=env
    )


@pytest.mark.parametrize(
    "body", [_CREATE_HUGE, _DYNAMIC_HUGE], ids=["create 2**31-1 x [2**20]", "dynamic index 2**31-1"]
)
def test_storage_that_cannot_fit(body):
    """A clear error, no raw MemoryError, no crash, and no gigabytes touched on the way.

    Creating 2**31-1 elements needs 28 GB of metadata (13 bytes each) before any data:
    more than many machines have.  numba_ta must refuse (or allocate lazily) rather than
    zero-fill gigabytes first -- without the address-space limit this test sets, an eager
    allocation gets the process killed by the OOM killer.
    """
    r = _run_limited(body)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-3000:]
    assert "MemoryError" not in out and "Traceback" not in out, out[-3000:]
    grew = int(r.stdout.strip().split()[-1])
    assert grew < 512, f"peak RSS grew by {grew} MB before the error:\n{out[-2000:]}"


# --------------------------------------------------------------------------------------
# NaN, inf, -0.0


SPECIAL = [np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex64", "complex128"])
def test_nan_inf_stored_faithfully(dtype, parallel):
    vals = np.array(SPECIAL, dtype=dtype)
    if np.dtype(dtype).kind == "c":
        vals.imag = [0.0, np.nan, -np.inf, np.inf, -0.0, 2.0]
    h, f = raw_ops.TensorArrayV3(size=len(vals), dtype=dtype, element_shape=[2], clear_after_read=False)
    rows = np.stack([vals, vals[::-1]], axis=1).astype(dtype)
    raw_ops.TensorArrayScatterV3(handle=h, indices=np.arange(len(vals)), value=rows, flow_in=f)
    got = raw_ops.TensorArrayGatherV3(handle=h, indices=np.arange(len(vals)), flow_in=f, dtype=dtype)
    assert got.tobytes() == rows.tobytes()  # bit for bit: NaN payloads and the sign of zero
    got, _ = raw_ops.TensorArrayConcatV3(handle=h, flow_in=f, dtype=dtype)
    assert got.tobytes() == rows.reshape(-1).tobytes()
    for i in range(len(vals)):
        r = raw_ops.TensorArrayReadV3(handle=h, index=i, flow_in=f, dtype=dtype)
        assert r.tobytes() == rows[i].tobytes()


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "complex128"])
@pytest.mark.parametrize("how", ["write", "scatter", "scatter_duplicates", "split"])
def test_nan_inf_summed_faithfully(dtype, how, parallel):
    """Gradient sums with NaN / inf / -0.0 are the plain IEEE sums, in order (no fastmath)."""
    rng = np.random.default_rng(3)
    n, k = 4, 5  # 4 slots, 5 contributions each
    contrib = rng.choice(np.array(SPECIAL + [2.5, -7.0]), size=(k, n, 3)).astype(dtype)
    fwd, f = raw_ops.TensorArrayV3(size=n, dtype=dtype, element_shape=[3])
    g, gf = raw_ops.TensorArrayGradV3(handle=fwd, flow_in=f, source="gradients")
    if how == "write":
        for j in range(k):
            for i in range(n):
                raw_ops.TensorArrayWriteV3(handle=g, index=i, value=contrib[j, i], flow_in=gf)
    elif how == "scatter":
        for j in range(k):
            raw_ops.TensorArrayScatterV3(handle=g, indices=np.arange(n), value=contrib[j], flow_in=gf)
    elif how == "scatter_duplicates":
        idx = np.tile(np.arange(n), k)  # one scatter, every slot hit k times, in order
        raw_ops.TensorArrayScatterV3(handle=g, indices=idx, value=contrib.reshape(k * n, 3), flow_in=gf)
    else:
        # split needs a split forward array for the lengths; the gradient array takes any split
        for j in range(k):
            raw_ops.TensorArraySplitV3(handle=g, value=contrib[j].reshape(-1), lengths=[3] * n, flow_in=gf)
    want = contrib[0].copy()
    with np.errstate(all="ignore"):
        for j in range(1, k):
            want = (want + contrib[j]).astype(dtype)
    got = raw_ops.TensorArrayGatherV3(handle=g, indices=np.arange(n), flow_in=gf, dtype=dtype)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got.real), np.signbit(want.real)), "the sign of a zero sum differs"
