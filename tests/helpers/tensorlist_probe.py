"""Evidence for the TensorList section of ``docs/semantics.rst``: TensorFlow's TensorList ops, probed eagerly.

Every statement of the specification names the probe that checks it (``GI3``,
``SX-X2`` ...). This script runs each probe through ``tf.raw_ops`` of the installed
TensorFlow (written against tensorflow-cpu 2.21.0), prints what it observed and
compares it with the expectation written next to the probe.

Usage (from any directory)::

    python tests/helpers/tensorlist_probe.py              # run all, print every observation
    python tests/helpers/tensorlist_probe.py GI SX-X2     # only the probes whose id starts so
    python tests/helpers/tensorlist_probe.py --quiet      # print only mismatches and the summary

The exit status is 0 when every observation matches its expectation, 1 otherwise.

How it runs. The parent process never imports TensorFlow: it starts a worker
(``tensorlist_probe.py --worker ID ...``, a fresh Python that imports TensorFlow once) and reads
one JSON line per probe. A probe that kills its worker is recorded as a crash, with the
signal and TensorFlow's ``Check failed`` line if there is one, and the remaining probes
run in a new worker. Probes marked ``isolate=True`` (the known crashes and the ones that
leave corrupted lists behind) each get a worker of their own, so that nothing they break
can change another probe's result. Probes run one after another, never in parallel.

How observations are written.

* A tensor: ``float32[2] [1.0, 2.0]`` (dtype, shape, values).
* A list (a scalar variant tensor holding a TensorList):
  ``List(float, [2], 3: [float32[2] [1.0, 2.0] | unset | unset])``: the element dtype as
  TensorFlow's C++ name, the element shape in TensorFlow's notation (``<unknown>``,
  ``[?,2]``), the length, then each element. An element is ``unset`` when it holds no
  tensor (see ``describe_list`` for how that is told apart from a zero tensor).
* A variant scalar that is not a list: TensorFlow's debug text, ``Variant<type: int value: 0>``.
* An error: ``<Class>: <message> [Op:<op>]``: the class of ``tf.errors``, the kernel's
  message without TensorFlow's ``{{function_node ...}}`` prefix and ``name:`` tail
  (multi-line framework messages keep their first line), and the op that raised.
* A crash: ``CRASH(SIGABRT: Check failed: ...)`` or ``CRASH(SIGSEGV)``, after the steps
  the probe completed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

# ----------------------------------------------------------------------------------------
# Registry


class Re:
    """An expectation given as a regular expression (for garbage memory values)."""

    def __init__(self, pattern):
        self.pattern = pattern

    def matches(self, text):
        return re.fullmatch(self.pattern, text, re.S) is not None

    def __repr__(self):
        return f"Re({self.pattern!r})"


PROBES = {}


def P(pid, text, fn, expect, isolate=False):
    """Register probe ``pid``: ``fn()`` is run in a worker, its result described by ``obs``."""
    if pid in PROBES:
        raise ValueError(f"duplicate probe id {pid}")
    PROBES[pid] = (text, fn, expect, isolate)


# ----------------------------------------------------------------------------------------
# Worker-side helpers (TensorFlow is imported only in the worker)

tf = None
R = None
_PREFIX = re.compile(r"^\{\{function_node [^}]*\}\}\s*", re.S)
_SUFFIX = re.compile(r"\s*\[Op:([A-Za-z0-9_]+)\]( name: .*)?$", re.S)
_CXX = {"float": "float32", "double": "float64", "half": "float16"}


def _init_tf():
    global tf, R
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import tensorflow

    tf = tensorflow
    R = tf.raw_ops


def err_text(e):
    """``<Class>: <kernel message> [Op:<op>]`` for an exception."""
    name = type(e).__name__
    if tf is not None and isinstance(e, tf.errors.OpError):
        m = e.message
        m = _PREFIX.sub("", m)
        op = _SUFFIX.search(m)
        m = _SUFFIX.sub("", m)
        m = m.split("\n")[0]
        return f"{name}: {m}" + (f" [Op:{op.group(1)}]" if op else "")
    return f"{name}: {e}"


def kmsg(e):
    m = _PREFIX.sub("", getattr(e, "message", str(e)))
    return _SUFFIX.sub("", m)


def i32(x):
    return tf.constant(x, tf.int32)


def i64(x):
    return tf.constant(x, tf.int64)


def shape_text(es):
    v = es.numpy().tolist()
    if isinstance(v, int):
        return "<unknown>" if v == -1 else f"<scalar {v}>"
    return "[" + ",".join("?" if d == -1 else str(d) for d in v) + "]"


def list_dtype(h):
    """The list's element dtype (C++ name), read from GetItem's dtype check."""
    try:
        R.TensorListGetItem(input_handle=h, index=0, element_shape=-1, element_dtype=tf.uint16)
    except tf.errors.InvalidArgumentError as e:
        m = re.search(r"but list elements (\w+)$", kmsg(e))
        if m:
            return m.group(1)
        if "Trying to access element" in kmsg(e) or "uninitialized" in kmsg(e):
            return "uint16"
        raise
    return "uint16"


def tf_dtype(cxx):
    return tf.as_dtype(_CXX.get(cxx, cxx))


MARK = [0, 7, 7, 7, 7, 7, 7]


def describe_list(h):
    """``List(<dtype>, <element shape>, <n>: [<elements>])``.

    An element is read with GetItem and ``element_shape=[0,7,7,7,7,7,7]`` (``MARK``): that
    input is only looked at for an element that holds no tensor (probe GI6), which then
    reads as zeros of shape ``MARK`` or fails on a shape merge or the not-fully-defined
    check (probes GI9 to GI22). So an element is ``unset`` exactly when the read fails
    with such an error or gives that shape (no probe sets an element of shape ``MARK``).
    """
    dt = list_dtype(h)
    tdt = tf_dtype(dt)
    n = int(R.TensorListLength(input_handle=h))
    es = shape_text(R.TensorListElementShape(input_handle=h, shape_type=tf.int32))
    items = []
    for i in range(n):
        try:
            v = R.TensorListGetItem(input_handle=h, index=i, element_shape=MARK, element_dtype=tdt)
        except tf.errors.InvalidArgumentError as e:
            m = kmsg(e)
            if "merge" in m or "uninitialized" in m:
                items.append("unset")
            else:
                items.append("<" + err_text(e) + ">")
            continue
        if list(v.shape) == MARK:
            items.append("unset")
        else:
            items.append(obs(v))
    return f"List({dt}, {es}, {n}: [" + " | ".join(items) + "])"


def describe_variant_scalar(v):
    try:
        return describe_list(v)
    except tf.errors.InvalidArgumentError as e:
        m = re.search(r"Input handle is not a list\. Saw: '(.*)'$", kmsg(e), re.S)
        if m:
            return m.group(1)
        raise


def obs(x):
    """The text of an observation (see the module docstring)."""
    if isinstance(x, str):
        return x
    if isinstance(x, (tuple, list)):
        return "(" + ", ".join(obs(v) for v in x) + ")"
    if isinstance(x, tf.Tensor):
        if x.dtype == tf.variant:
            if x.shape.rank == 0:
                return describe_variant_scalar(x)
            flat = tf.reshape(x, [-1])
            return f"variant{list(x.shape)} [" + "; ".join(obs(flat[i]) for i in range(flat.shape[0])) + "]"
        return f"{x.dtype.name}{list(x.shape)} {x.numpy().tolist()}"
    return repr(x)


def try_(fn):
    """``obs(fn())``, or the error's text: for steps inside a probe."""
    try:
        return obs(fn())
    except Exception as e:  # every error is an observation
        return err_text(e)


def steps(*pairs):
    """Run ``(label, thunk)`` pairs in order; report each as it completes.

    Each step's observation is printed at once (a progress line), so a probe whose
    worker dies half-way still shows what happened before the crash.
    """
    out = []
    for label, fn in pairs:
        r = try_(fn)
        out.append(f"{label}={r}")
        _progress("; ".join(out))
    return "; ".join(out)


_CURRENT = [None]


def _progress(text):
    print(json.dumps({"id": _CURRENT[0], "progress": text}), flush=True)


# short forms of the ops (keyword arguments as tf.raw_ops takes them)
def E(es, m=-1, dt=None):
    dt = tf.float32 if dt is None else dt
    return R.EmptyTensorList(element_shape=es, max_num_elements=m, element_dtype=dt)


def RES(es, n, dt=None):
    dt = tf.float32 if dt is None else dt
    return R.TensorListReserve(element_shape=es, num_elements=n, element_dtype=dt)


def FT(t, es=-1):
    return R.TensorListFromTensor(tensor=t, element_shape=es)


def LEN(h):
    return R.TensorListLength(input_handle=h)


def ES(h, st="int32"):
    return R.TensorListElementShape(input_handle=h, shape_type=st)


def GI(h, i, es=-1, dt=None):
    dt = tf.float32 if dt is None else dt
    return R.TensorListGetItem(input_handle=h, index=i, element_shape=es, element_dtype=dt)


def SI(h, i, v, rz=False):
    return R.TensorListSetItem(input_handle=h, index=i, item=v, resize_if_index_out_of_bounds=rz)


def PB(h, v):
    return R.TensorListPushBack(input_handle=h, tensor=v)


def PBB(hs, t):
    return R.TensorListPushBackBatch(input_handles=hs, tensor=t)


def POP(h, es=-1, dt=None):
    dt = tf.float32 if dt is None else dt
    return R.TensorListPopBack(input_handle=h, element_shape=es, element_dtype=dt)


def ST(h, es=-1, dt=None, n=-1):
    dt = tf.float32 if dt is None else dt
    return R.TensorListStack(input_handle=h, element_shape=es, element_dtype=dt, num_elements=n)


def GA(h, idx, es=-1, dt=None):
    dt = tf.float32 if dt is None else dt
    return R.TensorListGather(input_handle=h, indices=idx, element_shape=es, element_dtype=dt)


def SC(t, idx, es=-1):
    return R.TensorListScatter(tensor=t, indices=idx, element_shape=es)


def SC2(t, idx, es=-1, n=-1):
    return R.TensorListScatterV2(tensor=t, indices=idx, element_shape=es, num_elements=n)


def SX(h, t, idx):
    return R.TensorListScatterIntoExistingList(input_handle=h, tensor=t, indices=idx)


def CC(h, es=None, dt=None):
    dt = tf.float32 if dt is None else dt
    return R.TensorListConcat(input_handle=h, element_dtype=dt, element_shape=es)


def CV(h, es=-1, ld=None, dt=None):
    dt = tf.float32 if dt is None else dt
    if ld is None:
        ld = i64([])
    return R.TensorListConcatV2(input_handle=h, element_shape=es, leading_dims=ld, element_dtype=dt)


def CL(a, b, dt=None):
    dt = tf.float32 if dt is None else dt
    return R.TensorListConcatLists(input_a=a, input_b=b, element_dtype=dt)


def SP(t, es, lengths):
    return R.TensorListSplit(tensor=t, element_shape=es, lengths=i64(lengths))


def RZ(h, n):
    return R.TensorListResize(input_handle=h, size=n)


def ZL(h):
    return R.ZerosLike(x=h)


def AN(*hs):
    return R.AddN(inputs=list(hs))


def stack(*hs):
    """A vector of list handles (a variant tensor of shape [len(hs)])."""
    return tf.stack(list(hs))


def pushes(h, *values):
    for v in values:
        h = PB(h, v)
    return h


def S0():
    """``[]`` as an int32 shape: a scalar element shape."""
    return i32([])


def A():
    """``[[1,2],[3,4]]`` as a list of two [2] elements, element shape unknown."""
    return FT([[1.0, 2.0], [3.0, 4.0]])


def A2():
    """The same two elements, element shape [2]."""
    return FT([[1.0, 2.0], [3.0, 4.0]], [2])


def UNS(n=3):
    """A list of ``n`` unset elements, element shape unknown."""
    return RES(-1, n)


def vzero():
    """The variant zero: what an unset element of a variant list with shape [] reads as."""
    return GI(RES(S0(), 1, tf.variant), 0, S0(), tf.variant)


def _DTYPES():
    """numba_ta's fourteen dtypes."""
    return (
        tf.bool,
        tf.int8,
        tf.int16,
        tf.int32,
        tf.int64,
        tf.uint8,
        tf.uint16,
        tf.uint32,
        tf.uint64,
        tf.float16,
        tf.float32,
        tf.float64,
        tf.complex64,
        tf.complex128,
    )


def VL():
    """A variant list holding two float lists: [[1,2],[3,4]] and [[5,6]]."""
    return pushes(E(-1, dt=tf.variant), A(), FT([[5.0, 6.0]]))


# ----------------------------------------------------------------------------------------
# The probes. Each: P(id, what it shows, thunk, expected observation[, isolate=True])

IA = "InvalidArgumentError: "

# ---- H: what every op that takes a list checks first
P(
    "H1",
    "a list input that is not a scalar (a vector of lists)",
    lambda: LEN(stack(A(), A())),
    IA + "Input list must be a scalar saw: [2] [Op:TensorListLength]",
)
P(
    "H2",
    "a variant scalar that holds no list (the variant zero)",
    lambda: LEN(vzero()),
    IA + "Input handle is not a list. Saw: 'Variant<type: int value: 0>' [Op:TensorListLength]",
)
P(
    "H3",
    "a list input that is not a variant tensor: the op-definition type check",
    lambda: LEN(tf.constant(1.0)),
    IA + "cannot compute TensorListLength as input #0(zero-based) was expected to be a variant tensor "
    "but is a float tensor [Op:TensorListLength]",
)
P(
    "H4",
    "H1 comes before the dtype check",
    lambda: GI(stack(A(), A()), 0, dt=tf.int32),
    IA + "Input list must be a scalar saw: [2] [Op:TensorListGetItem]",
)
P(
    "H5",
    "H2 comes before the dtype check",
    lambda: GI(vzero(), 0, dt=tf.int32),
    IA + "Input handle is not a list. Saw: 'Variant<type: int value: 0>' [Op:TensorListGetItem]",
)
_LIST_OPS = (
    ("TensorListLength", lambda h: LEN(h)),
    ("TensorListElementShape", lambda h: ES(h)),
    ("TensorListGetItem", lambda h: GI(h, 0)),
    ("TensorListSetItem", lambda h: SI(h, 0, [1.0, 2.0])),
    ("TensorListPushBack", lambda h: PB(h, [1.0, 2.0])),
    ("TensorListPopBack", lambda h: POP(h)),
    ("TensorListStack", lambda h: ST(h)),
    ("TensorListGather", lambda h: GA(h, [0])),
    ("TensorListScatterIntoExistingList", lambda h: SX(h, [[1.0, 2.0]], [0])),
    ("TensorListConcat", lambda h: CC(h)),
    ("TensorListConcatV2", lambda h: CV(h)),
    ("TensorListResize", lambda h: RZ(h, 1)),
)
P(
    "H6",
    "L1 and L2 from every op with one list input",
    lambda: tuple(try_(lambda f=f: f(stack(A(), A()))) + " / " + try_(lambda f=f: f(vzero())) for _, f in _LIST_OPS),
    "("
    + ", ".join(
        f"{IA}Input list must be a scalar saw: [2] [Op:{op}] / {IA}Input handle is not a list. Saw: "
        f"'Variant<type: int value: 0>' [Op:{op}]"
        for op, _ in _LIST_OPS
    )
    + ")",
)
P(
    "H7",
    "L1 comes before every other check (the other arguments all wrong too)",
    lambda: (
        try_(lambda: SI(stack(A(), A()), [0, 1], [1, 2, 3], True)),
        try_(lambda: PB(stack(A(), A()), 1)),
        try_(lambda: SX(stack(A(), A()), 1, [[1]])),
        try_(lambda: CV(stack(A(), A()), 5, dt=tf.int32)),
        try_(lambda: RZ(stack(A(), A()), [-1])),
        try_(lambda: ST(stack(A(), A()), 5, tf.int32, 7)),
    ),
    "("
    + ", ".join(
        f"{IA}Input list must be a scalar saw: [2] [Op:{op}]"
        for op in (
            "TensorListSetItem",
            "TensorListPushBack",
            "TensorListScatterIntoExistingList",
            "TensorListConcatV2",
            "TensorListResize",
            "TensorListStack",
        )
    )
    + ")",
)

# ---- SH: element_shape inputs (TensorShapeFromTensor), shown through EmptyTensorList
P("SH1", "element_shape -1 (int32 scalar): unknown rank", lambda: ES(E(-1)), "int32[] -1")
P("SH2", "element_shape -1 as int64", lambda: ES(E(i64(-1))), "int32[] -1")
P(
    "SH3",
    "a scalar other than -1",
    lambda: E(3),
    IA + "The only valid scalar shape tensor is the fully unknown shape specified as -1. [Op:EmptyTensorList]",
)
P(
    "SH4",
    "scalar 0 and -2 are refused too",
    lambda: (try_(lambda: E(0)), try_(lambda: E(-2))),
    "("
    + IA
    + "The only valid scalar shape tensor is the fully unknown shape specified as -1. [Op:EmptyTensorList], "
    + IA
    + "The only valid scalar shape tensor is the fully unknown shape specified as -1. [Op:EmptyTensorList])",
)
P("SH5", "a vector: -1 entries are unknown dimensions", lambda: ES(E([-1, 3])), "int32[2] [-1, 3]")
P("SH6", "an empty vector: a scalar element shape", lambda: ES(E(S0())), "int32[0] []")
P("SH7", "an int64 vector", lambda: ES(E(i64([2, -1]))), "int32[2] [2, -1]")
P("SH8", "a dimension below -1", lambda: E([2, -2]), IA + "Dimension -2 must be >= -1 [Op:EmptyTensorList]")
P("SH9", "a matrix", lambda: E(i32([[2]])), IA + "Shape must be at most rank 1 but is rank 2 [Op:EmptyTensorList]")
P(
    "SH10",
    "a float element_shape: the shape_type attribute check (framework)",
    lambda: E(tf.constant([2.0])),
    IA + "Value for attr 'shape_type' of float is not in the list of allowed values: int32, int64 [Op:EmptyTensorList]",
)
P(
    "SH11",
    "the same matrix message from Reserve, GetItem, PopBack, Stack, Gather, ConcatV2, Split",
    lambda: tuple(
        try_(f)
        for f in (
            lambda: RES(i32([[2]]), 1),
            lambda: GI(UNS(1), 0, i32([[2]])),
            lambda: POP(UNS(1), i32([[2]])),
            lambda: ST(A(), i32([[2]])),
            lambda: GA(A(), [0], i32([[2]])),
            lambda: CV(A(), i32([[2]])),
            lambda: SP([[1.0]], i32([[2]]), [1]),
        )
    ),
    "("
    + ", ".join(
        f"{IA}Shape must be at most rank 1 but is rank 2 [Op:{op}]"
        for op in (
            "TensorListReserve",
            "TensorListGetItem",
            "TensorListPopBack",
            "TensorListStack",
            "TensorListGather",
            "TensorListConcatV2",
            "TensorListSplit",
        )
    )
    + ")",
)
P(
    "SH12",
    "FromTensor and Scatter have their own text for a matrix element_shape",
    lambda: (
        try_(lambda: FT([[1.0]], i32([[1]]))),
        try_(lambda: SC([[1.0]], [0], i32([[1]]))),
        try_(lambda: SC2([[1.0]], [0], i32([[1]]))),
    ),
    "(" + IA + "TensorListFromTensor: element_shape must be at most rank 1 but has the shape of [1,1] "
    "[Op:TensorListFromTensor], "
    + IA
    + "TensorListScatter: element_shape must be at most rank 1 but has the shape of [1,1] [Op:TensorListScatter], "
    + IA
    + "TensorListScatter: element_shape must be at most rank 1 but has the shape of [1,1] "
    "[Op:TensorListScatterV2])",
)
P(
    "SH13",
    "the -2 text from the other ops",
    lambda: (try_(lambda: ST(A(), [-2])), try_(lambda: SP([[1.0]], [-2], [1])), try_(lambda: FT([[1.0]], [-2]))),
    "(" + IA + "Dimension -2 must be >= -1 [Op:TensorListStack], " + IA + "Dimension -2 must be >= -1 "
    "[Op:TensorListSplit], " + IA + "Dimension -2 must be >= -1 [Op:TensorListFromTensor])",
)
P(
    "SH14",
    "Stack, Gather and PopBack take an int32 element_shape only (op definition; error form varies, GI8b)",
    lambda: (try_(lambda: ST(A(), i64([2]))), try_(lambda: GA(A(), [0], i64([2]))), try_(lambda: POP(A(), i64([2])))),
    "(" + IA + "cannot compute TensorListStack as input #1(zero-based) was expected to be a int32 tensor but is a "
    "int64 tensor [Op:TensorListStack], ValueError: Tensor conversion requested dtype int32 for Tensor with dtype "
    "int64: <tf.Tensor: shape=(1,), dtype=int64, numpy=array([2])>, " + IA + "cannot compute "
    "TensorListPopBack as input #1(zero-based) was expected to be a int32 tensor but is a int64 tensor "
    "[Op:TensorListPopBack])",
)
P("SH15", "GetItem takes int64 too (attribute Tshape)", lambda: GI(RES([2], 1), 0, i64([-1])), "float32[2] [0.0, 0.0]")
P(
    "SH16",
    "a dimension beyond int32 survives in the list (int64 result)",
    lambda: ES(E(i64([2**33 + 5])), tf.int64),
    "int64[1] [8589934597]",
)
P("SH17", "... and is truncated to its low 32 bits in an int32 result", lambda: ES(E(i64([2**33 + 5]))), "int32[1] [5]")

# ---- OUT: the Python form of multi-output results
P(
    "OUT1",
    "PopBack, Concat and ConcatV2 return named tuples",
    lambda: tuple(f"{type(r).__name__}{r._fields}" for r in (POP(A()), CC(A()), CV(A()))),
    "(TensorListPopBack('output_handle', 'tensor'), TensorListConcat('tensor', 'lengths'), "
    "TensorListConcatV2('tensor', 'lengths'))",
)

# ---- EM: EmptyTensorList
P(
    "EM1",
    "an empty list: a variant scalar, length 0, the element shape given",
    lambda: (E([2]), LEN(E([2])), ES(E([2]))),
    "(List(float, [2], 0: []), int32[] 0, int32[1] [2])",
)
P(
    "EM2",
    "max_num_elements not a scalar",
    lambda: E([2], m=[1, 2]),
    IA + "max_num_elements expected to be a scalar but got shape: [2] [Op:EmptyTensorList]",
)
P(
    "EM3",
    "EM2 comes before the element_shape checks",
    lambda: E(5, m=[1, 2]),
    IA + "max_num_elements expected to be a scalar but got shape: [2] [Op:EmptyTensorList]",
)
P(
    "EM4",
    "max_num_elements 0: the first push fails",
    lambda: PB(E([2], m=0), [1.0, 2.0]),
    IA + "Tried to push item into a full list list size: 0 max_num_elements: 0 [Op:TensorListPushBack]",
)
P(
    "EM5",
    "max_num_elements 1: one push, then full",
    lambda: pushes(E([2], m=1), [1.0, 2.0], [3.0, 4.0]),
    IA + "Tried to push item into a full list list size: 1 max_num_elements: 1 [Op:TensorListPushBack]",
)
P(
    "EM6",
    "max_num_elements below -1 means no limit",
    lambda: LEN(pushes(E([2], m=-5), [1.0, 2.0], [1.0, 2.0], [1.0, 2.0])),
    "int32[] 3",
)
P(
    "EM7",
    "max_num_elements must be int32 (an int64 tensor fails in Python)",
    lambda: E([2], m=i64(1)),
    Re(r"ValueError: Tensor conversion requested dtype int32 for Tensor with dtype int64: .*"),
)

# ---- RS: TensorListReserve
P(
    "RS1",
    "n unset elements, the element shape given",
    lambda: RES([2], 3),
    "List(float, [2], 3: [unset | unset | unset])",
)
P("RS2", "num_elements 0", lambda: RES([2], 0), "List(float, [2], 0: [])")
P(
    "RS3",
    "negative num_elements",
    lambda: RES([2], -1),
    IA + "The num_elements to reserve must be a non negative number, but got -1 [Op:TensorListReserve]",
)
P(
    "RS4",
    "num_elements not a scalar (even with one element)",
    lambda: (try_(lambda: RES([2], [3])), try_(lambda: RES([2], [3, 4])), try_(lambda: RES([2], i32([])))),
    "("
    + ", ".join(
        f"{IA}The num_elements to reserve must be a tensor size 1, but got [{k}] [Op:TensorListReserve]" for k in "120"
    )
    + ")",
)
P(
    "RS5",
    "element_shape is checked before num_elements",
    lambda: (try_(lambda: RES(5, -1)), try_(lambda: RES(5, [1, 2]))),
    "("
    + IA
    + "The only valid scalar shape tensor is the fully unknown shape specified as -1. [Op:TensorListReserve], "
    + IA
    + "The only valid scalar shape tensor is the fully unknown shape specified as -1. [Op:TensorListReserve])",
)
P(
    "RS6",
    "RS4 comes before RS3",
    lambda: RES([2], [-1, 2]),
    IA + "The num_elements to reserve must be a tensor size 1, but got [2] [Op:TensorListReserve]",
)
P(
    "RS7",
    "a reserved list has no size limit: push appends after the unset elements",
    lambda: PB(RES([2], 2), [3.0, 4.0]),
    "List(float, [2], 3: [unset | unset | float32[2] [3.0, 4.0]])",
)

# ---- FT: TensorListFromTensor
P(
    "FT1",
    "rows become elements; element shape as given (default unknown)",
    lambda: A(),
    "List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]])",
)
P(
    "FT2",
    "a fully defined element_shape",
    lambda: A2(),
    "List(float, [2], 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]])",
)
P(
    "FT3",
    "a partial element_shape is kept as given",
    lambda: FT([[1.0, 2.0]], [-1]),
    "List(float, [?], 1: [float32[2] [1.0, 2.0]])",
)
P(
    "FT4",
    "element_shape not compatible with the rows",
    lambda: FT([[1.0, 2.0]], [3]),
    IA + "Specified a list with shape [3] from a tensor with shape [2] [Op:TensorListFromTensor]",
)
P(
    "FT5",
    "a rank mismatch, same text",
    lambda: FT([[1.0, 2.0]], [2, 1]),
    IA + "Specified a list with shape [2,1] from a tensor with shape [2] [Op:TensorListFromTensor]",
)
P(
    "FT6",
    "a scalar tensor",
    lambda: FT(1.0),
    IA + "Tensor must be at least a vector, but saw shape: [] [Op:TensorListFromTensor]",
)
P(
    "FT7",
    "element_shape is parsed before the tensor's rank is checked",
    lambda: FT(1.0, 5),
    IA + "The only valid scalar shape tensor is the fully unknown shape specified as -1. [Op:TensorListFromTensor]",
)
P(
    "FT8",
    "... and its matrix check comes first of all",
    lambda: FT(1.0, i32([[1]])),
    IA + "TensorListFromTensor: element_shape must be at most rank 1 but has the shape of [1,1] "
    "[Op:TensorListFromTensor]",
)
P("FT9", "zero rows: an empty list", lambda: FT(tf.zeros([0, 3])), "List(float, <unknown>, 0: [])")
P(
    "FT10",
    "a vector: scalar elements; element_shape [] fits",
    lambda: (FT([1, 2]), FT([1.0, 2.0], S0())),
    "(List(int32, <unknown>, 2: [int32[] 1 | int32[] 2]), List(float, [], 2: [float32[] 1.0 | float32[] 2.0]))",
)
P(
    "FT11",
    "a vector of lists: a list of lists",
    lambda: FT(stack(A(), FT([[5.0, 6.0]]))),
    "List(variant, <unknown>, 2: [List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]]) | "
    "List(float, <unknown>, 1: [float32[2] [5.0, 6.0]])])",
)
P("FT12", "the list has no size limit", lambda: LEN(pushes(FT([[1.0]]), [2.0], [3.0])), "int32[] 3")

# ---- LEN / ESH: TensorListLength, TensorListElementShape
P("LEN1", "Length: an int32 scalar counting set and unset elements", lambda: LEN(SI(RES(-1, 4), 1, 1.0)), "int32[] 4")
P(
    "ESH1",
    "ElementShape: a vector of shape_type, -1 for unknown dimensions",
    lambda: (ES(E([-1, 3])), ES(E([-1, 3]), tf.int64)),
    "(int32[2] [-1, 3], int64[2] [-1, 3])",
)
P("ESH2", "unknown rank: the scalar -1", lambda: (ES(E(-1)), ES(E(-1), tf.int64)), "(int32[] -1, int64[] -1)")
P("ESH3", "a scalar element shape: an empty vector", lambda: ES(E(S0())), "int32[0] []")
P(
    "ESH4",
    "the element shape never follows the elements",
    lambda: (ES(pushes(E(-1), [1.0, 2.0])), ES(A())),
    "(int32[] -1, int32[] -1)",
)
P(
    "ESH5",
    "shape_type must be int32 or int64 (framework)",
    lambda: ES(E(-1), tf.float32),
    IA + "Value for attr 'shape_type' of float is not in the list of allowed values: int32, int64 "
    "[Op:TensorListElementShape]",
)

# ---- GI: TensorListGetItem
P("GI1", "a set element", lambda: GI(A(), 1), "float32[2] [3.0, 4.0]")
P(
    "GI2",
    "index == length",
    lambda: GI(A(), 2),
    IA + "Trying to access element 2 in a list with 2 elements. [Op:TensorListGetItem]",
)
P(
    "GI3",
    "a negative index",
    lambda: GI(A(), -1),
    IA + "Trying to access element -1 in a list with 2 elements. [Op:TensorListGetItem]",
)
P(
    "GI4",
    "element_dtype not the list's",
    lambda: GI(A(), 0, dt=tf.int32),
    IA + "Invalid data types; op elements int32 but list elements float [Op:TensorListGetItem]",
)
P(
    "GI5",
    "the dtype check comes before the index check",
    lambda: GI(A(), 5, dt=tf.int32),
    IA + "Invalid data types; op elements int32 but list elements float [Op:TensorListGetItem]",
)
P(
    "GI6",
    "for a set element the element_shape input is not even parsed",
    lambda: (GI(A(), 0, [5, 5]), GI(A(), 0, 5), GI(A2(), 0, [3])),
    "(float32[2] [1.0, 2.0], float32[2] [1.0, 2.0], float32[2] [1.0, 2.0])",
)
P(
    "GI7",
    "an index of shape [1] or [1,1] is taken as a scalar",
    lambda: (GI(A(), [1]), GI(A(), [[1]])),
    "(float32[2] [3.0, 4.0], float32[2] [3.0, 4.0])",
)
P(
    "GI8",
    "the index must be int32 (op definition)",
    lambda: GI(A(), i64(0)),
    IA + "cannot compute TensorListGetItem as input #1(zero-based) was expected to be a int32 tensor but is a int64 "
    "tensor [Op:TensorListGetItem]",
)
P(
    "GI8b",
    "how a wrong input dtype is reported depends on TensorFlow's Python path (not on the kernel)",
    lambda: (
        try_(lambda: GI(A(), i64(0), dt="float32")),
        try_(lambda: R.TensorListGetItem(input_handle=A(), index=i64(0), element_shape=-1, element_dtype=tf.float32)),
    ),
    "(ValueError: Tensor conversion requested dtype int32 for Tensor with dtype int64: <tf.Tensor: shape=(), "
    "dtype=int64, numpy=0>, " + IA + "cannot compute TensorListGetItem as input #1(zero-based) was expected to be a "
    "int32 tensor but is a int64 tensor [Op:TensorListGetItem])",
)
P("GI9", "an unset element, list element shape [2]: zeros", lambda: GI(RES([2], 2), 0), "float32[2] [0.0, 0.0]")
P(
    "GI10",
    "the element_shape input is merged with the list's",
    lambda: (GI(RES([2], 2), 0, [-1]), GI(RES([-1], 2), 0, [2])),
    "(float32[2] [0.0, 0.0], float32[2] [0.0, 0.0])",
)
P(
    "GI11",
    "a conflict: merge error, the input's shape first",
    lambda: GI(RES([2], 2), 0, [3]),
    IA + "PartialTensorShape: Incompatible shapes during merge: [3] vs. [2] [Op:TensorListGetItem]",
)
P(
    "GI12",
    "a rank conflict",
    lambda: GI(RES([2], 2), 0, [2, 1]),
    IA + "PartialTensorShape: Incompatible ranks during merge: 2 vs. 1 [Op:TensorListGetItem]",
)
P(
    "GI13",
    "unknown shape and no set element",
    lambda: GI(UNS(), 0),
    IA + "Trying to read an uninitialized tensor but element_shape is not fully defined: <unknown> and no list "
    "element is set. [Op:TensorListGetItem]",
)
P(
    "GI14",
    "the element_shape input alone can make it fully defined",
    lambda: GI(UNS(), 0, [2, 3]),
    "float32[2, 3] [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]",
)
P(
    "GI15",
    "a partial result is refused, shown in partial notation",
    lambda: GI(UNS(), 0, [2, -1]),
    IA + "Trying to read an uninitialized tensor but element_shape is not fully defined: [2,?] and no list element "
    "is set. [Op:TensorListGetItem]",
)
P(
    "GI16",
    "otherwise the set elements' shapes are merged in",
    lambda: GI(SI(UNS(), 1, [[1.0, 2.0, 3.0]]), 0),
    "float32[1, 3] [[0.0, 0.0, 0.0]]",
)
P(
    "GI17",
    "... also when partial list and input shapes leave dimensions open",
    lambda: GI(SI(RES([-1, -1], 3), 2, [[1.0, 2.0, 3.0]]), 0, [-1, 3]),
    "float32[1, 3] [[0.0, 0.0, 0.0]]",
)
P(
    "GI18",
    "an element that conflicts with the shape so far: merge error, shape so far first",
    lambda: GI(SI(UNS(), 1, [[1.0, 2.0, 3.0]]), 0, [-1, 4]),
    IA + "PartialTensorShape: Incompatible shapes during merge: [?,4] vs. [1,3] [Op:TensorListGetItem]",
)
P(
    "GI19",
    "two set elements of different shapes: merge error, in index order",
    lambda: GI(SI(SI(UNS(), 1, [[1.0, 2.0, 3.0]]), 2, [[1.0, 2.0]]), 0),
    IA + "PartialTensorShape: Incompatible shapes during merge: [1,3] vs. [1,2] [Op:TensorListGetItem]",
)
P(
    "GI20",
    "no inference when list and input shapes merge to a fully defined shape",
    lambda: GI(SI(SI(UNS(), 1, [[1.0, 2.0, 3.0]]), 2, [[1.0, 2.0]]), 0, [5]),
    "float32[5] [0.0, 0.0, 0.0, 0.0, 0.0]",
)
P(
    "GI21",
    "inference also looks at elements after the index and of any position",
    lambda: (GI(SI(UNS(), 2, [4.0]), 0), GI(SI(UNS(), 0, [4.0]), 2)),
    "(float32[1] [0.0], float32[1] [0.0])",
)
P(
    "GI22",
    "a partial list shape and no set element",
    lambda: GI(RES([-1], 2), 0),
    IA + "Trying to read an uninitialized tensor but element_shape is not fully defined: [?] and no list element is "
    "set. [Op:TensorListGetItem]",
)
P(
    "GI23",
    "element_shape parse errors appear only for an unset element",
    lambda: (try_(lambda: GI(RES([2], 2), 0, 5)), GI(A(), 0, 5)),
    Re(
        r"\(InvalidArgumentError: The only valid scalar shape tensor is the fully unknown shape specified as -1\. "
        r"\[Op:TensorListGetItem\], float32\[2\] \[1\.0, 2\.0\]\)"
    ),
)
P(
    "GI24",
    "the index check comes before the element_shape parse",
    lambda: GI(RES([2], 2), 9, 5),
    IA + "Trying to access element 9 in a list with 2 elements. [Op:TensorListGetItem]",
)
P("GI25", "a scalar element shape: a zero scalar", lambda: GI(RES(S0(), 2), 0), "float32[] 0.0")
P(
    "GI26",
    "reading an unset element sets nothing",
    lambda: steps(("read", lambda: GI(F.l_gi26, 0)), ("after", lambda: F.l_gi26)),
    "read=float32[2] [0.0, 0.0]; after=List(float, [2], 2: [unset | unset])",
)
P("GI27", "an int list's zeros are int", lambda: GI(RES([2], 1, tf.int32), 0, dt=tf.int32), "int32[2] [0, 0]")
P(
    "GI28",
    "the dtype check comes before the index is read (no abort)",
    lambda: GI(A(), [1, 0], dt=tf.int32),
    IA + "Invalid data types; op elements int32 but list elements float [Op:TensorListGetItem]",
)
P(
    "GI-X1",
    "an index with 2 elements aborts TensorFlow",
    lambda: steps(("get", lambda: GI(A(), [1, 0]))),
    "CRASH(SIGABRT: Check failed: 1 == NumElements() (1 vs. 2) Must have a one element tensor)",
    isolate=True,
)
P(
    "GI-X2",
    "an index with 0 elements aborts TensorFlow",
    lambda: steps(("get", lambda: GI(A(), i32([])))),
    "CRASH(SIGABRT: Check failed: 1 == NumElements() (1 vs. 0) Must have a one element tensor)",
    isolate=True,
)

# ---- SI: TensorListSetItem
P(
    "SI1",
    "replaces one element; the input list is unchanged",
    lambda: steps(("out", lambda: SI(F.l_a, 1, [9.0, 9.0])), ("in", lambda: F.l_a)),
    "out=List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [9.0, 9.0]]); "
    "in=List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]])",
)
P(
    "SI2",
    "index == length",
    lambda: SI(A(), 2, [9.0, 9.0]),
    IA + "Trying to modify element 2 in a list with 2 elements. [Op:TensorListSetItem]",
)
P(
    "SI3",
    "a negative index",
    lambda: SI(A(), -1, [9.0, 9.0]),
    IA + "Trying to modify element -1 in a list with 2 elements. [Op:TensorListSetItem]",
)
P(
    "SI4",
    "an item of another dtype",
    lambda: SI(A(), 0, [1, 2]),
    IA + "Invalid data types; op elements int32 but list elements float [Op:TensorListSetItem]",
)
P(
    "SI5",
    "an item not compatible with the list's element shape",
    lambda: SI(A2(), 0, [1.0, 2.0, 3.0]),
    IA + "Tried to set a tensor with incompatible shape at a list index. Item element shape: [3] list shape: [2] "
    "[Op:TensorListSetItem]",
)
P(
    "SI6",
    "a partial list shape refuses a scalar",
    lambda: SI(FT([[1.0, 2.0]], [-1]), 0, 3.0),
    IA + "Tried to set a tensor with incompatible shape at a list index. Item element shape: [] list shape: [?] "
    "[Op:TensorListSetItem]",
)
P(
    "SI7",
    "an unknown list shape takes any item",
    lambda: SI(A(), 0, [[1.0, 2.0, 3.0]]),
    "List(float, <unknown>, 2: [float32[1, 3] [[1.0, 2.0, 3.0]] | float32[2] [3.0, 4.0]])",
)
P(
    "SI8",
    "an index that is not a scalar",
    lambda: (
        try_(lambda: SI(A2(), [1], [5.0, 6.0])),
        try_(lambda: SI(A2(), [[1]], [5.0, 6.0])),
        try_(lambda: SI(A2(), i32([]), [5.0, 6.0])),
        try_(lambda: SI(A2(), [1, 2], [5.0, 6.0])),
        try_(lambda: SI(A2(), list(range(12)), [5.0, 6.0])),
        try_(lambda: SI(A2(), [[1, 2], [3, 4]], [5.0, 6.0])),
    ),
    "(" + IA + "Expected argument 1 to be a scalar. ReceivedTensor<type: int32 shape: [1] values: 1> "
    "[Op:TensorListSetItem], " + IA + "Expected argument 1 to be a scalar. ReceivedTensor<type: int32 shape: [1,1] "
    "values: [1]> [Op:TensorListSetItem], " + IA + "Expected argument 1 to be a scalar. ReceivedTensor<type: int32 "
    "shape: [0] values: > [Op:TensorListSetItem], " + IA + "Expected argument 1 to be a scalar. ReceivedTensor<type: "
    "int32 shape: [2] values: 1 2> [Op:TensorListSetItem], " + IA + "Expected argument 1 to be a scalar. "
    "ReceivedTensor<type: int32 shape: [12] values: 0 1 2...> [Op:TensorListSetItem], " + IA + "Expected argument 1 "
    "to be a scalar. ReceivedTensor<type: int32 shape: [2,2] values: [1 2][3...]...> [Op:TensorListSetItem])",
)
P(
    "SI9",
    "order: dtype before index shape",
    lambda: SI(A2(), [1], [5, 6]),
    IA + "Invalid data types; op elements int32 but list elements float [Op:TensorListSetItem]",
)
P(
    "SI10",
    "order: index shape before item shape",
    lambda: SI(A2(), [1], [5.0, 6.0, 7.0]),
    IA + "Expected argument 1 to be a scalar. ReceivedTensor<type: int32 shape: [1] values: 1> [Op:TensorListSetItem]",
)
P(
    "SI11",
    "order: dtype before item shape",
    lambda: SI(A2(), 0, [5, 6, 7]),
    IA + "Invalid data types; op elements int32 but list elements float [Op:TensorListSetItem]",
)
P(
    "SI12",
    "order: item shape before index range",
    lambda: SI(A2(), 5, [1.0, 2.0, 3.0]),
    IA + "Tried to set a tensor with incompatible shape at a list index. Item element shape: [3] list shape: [2] "
    "[Op:TensorListSetItem]",
)
P(
    "SI13",
    "order: the list checks (H1) first",
    lambda: SI(stack(A(), A()), [0], [5, 6]),
    IA + "Input list must be a scalar saw: [2] [Op:TensorListSetItem]",
)
P(
    "SI14",
    "resize_if_index_out_of_bounds: grows to index + 1, the new elements unset",
    lambda: SI(A2(), 4, [5.0, 6.0], True),
    "List(float, [2], 5: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0] | unset | unset | float32[2] [5.0, 6.0]])",
)
P(
    "SI15",
    "resize: an index in range is a plain set",
    lambda: SI(A2(), 1, [5.0, 6.0], True),
    "List(float, [2], 2: [float32[2] [1.0, 2.0] | float32[2] [5.0, 6.0]])",
)
P(
    "SI16",
    "resize: index == length grows by one",
    lambda: SI(A2(), 2, [5.0, 6.0], True),
    "List(float, [2], 3: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0] | float32[2] [5.0, 6.0]])",
)
P(
    "SI17",
    "resize ignores max_num_elements",
    lambda: SI(E([2], m=1), 3, [5.0, 6.0], True),
    "List(float, [2], 4: [unset | unset | unset | float32[2] [5.0, 6.0]])",
)
P(
    "SI18",
    "resize: the dtype and shape checks still apply, and first",
    lambda: (try_(lambda: SI(A2(), 4, [5, 6], True)), try_(lambda: SI(A2(), 4, [5.0, 6.0, 7.0], True))),
    "("
    + IA
    + "Invalid data types; op elements int32 but list elements float [Op:TensorListSetItem], "
    + IA
    + "Tried to set a tensor with incompatible shape at a list index. Item element shape: [3] list shape: [2] "
    "[Op:TensorListSetItem])",
)
P(
    "SI19",
    "the grown list keeps its max_num_elements",
    lambda: PB(SI(E([2], m=2), 3, [5.0, 6.0], True), [1.0, 2.0]),
    IA + "Tried to push item into a full list list size: 4 max_num_elements: 2 [Op:TensorListPushBack]",
)
P(
    "SI-X1",
    "resize with a negative index: TensorFlow writes before the list (crash)",
    lambda: steps(("set", lambda: LEN(SI(A2(), -1, [5.0, 6.0], True)))),
    "CRASH(SIGSEGV)",
    isolate=True,
)
P(
    "SI-X2",
    "the same with index -5",
    lambda: steps(("set", lambda: LEN(SI(A2(), -5, [5.0, 6.0], True)))),
    "CRASH(SIGSEGV)",
    isolate=True,
)

# ---- PB: TensorListPushBack
P(
    "PB1",
    "appends; the input list is unchanged",
    lambda: steps(("out", lambda: PB(F.l_a, [5.0, 6.0])), ("in", lambda: F.l_a)),
    "out=List(float, <unknown>, 3: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0] | float32[2] [5.0, 6.0]]); "
    "in=List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]])",
)
P(
    "PB2",
    "a tensor not compatible with the element shape",
    lambda: PB(E([2], m=2), [1.0, 2.0, 3.0]),
    IA + "Tried to append a tensor with incompatible shape to a list. Op element shape: [3] list shape: [2] "
    "[Op:TensorListPushBack]",
)
P(
    "PB3",
    "a tensor of another dtype",
    lambda: PB(E([2], m=2), [1, 2]),
    IA + "Invalid data types; op elements int32 but list elements float [Op:TensorListPushBack]",
)
P(
    "PB4",
    "order: shape before dtype",
    lambda: PB(E([2]), [1, 2, 3]),
    IA + "Tried to append a tensor with incompatible shape to a list. Op element shape: [3] list shape: [2] "
    "[Op:TensorListPushBack]",
)
P(
    "PB5",
    "order: shape before full",
    lambda: PB(E([2], m=0), [1.0, 2.0, 3.0]),
    IA + "Tried to append a tensor with incompatible shape to a list. Op element shape: [3] list shape: [2] "
    "[Op:TensorListPushBack]",
)
P(
    "PB6",
    "order: dtype before full",
    lambda: PB(E([2], m=0), [1, 2]),
    IA + "Invalid data types; op elements int32 but list elements float [Op:TensorListPushBack]",
)
P(
    "PB7",
    "an unknown element shape takes tensors of any shape",
    lambda: pushes(E(-1), [1.0, 2.0], [[3.0]]),
    "List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[1, 1] [[3.0]]])",
)
P("PB8", "a tensor with no elements", lambda: PB(E([0]), tf.zeros([0])), "List(float, [0], 1: [float32[0] []])")
P(
    "PB9",
    "a partial element shape",
    lambda: (PB(E([-1, 2]), [[1.0, 2.0]]), try_(lambda: PB(E([-1, 2]), [[1.0, 2.0, 3.0]]))),
    "(List(float, [?,2], 1: [float32[1, 2] [[1.0, 2.0]]]), "
    + IA
    + "Tried to append a tensor with incompatible shape to "
    "a list. Op element shape: [1,3] list shape: [?,2] [Op:TensorListPushBack])",
)

# ---- PBB: TensorListPushBackBatch
P(
    "PBB1",
    "row b is pushed to list b; the input lists are unchanged",
    lambda: steps(("out", lambda: PBB(F.l_batch, [[7.0, 7.0], [8.0, 8.0]])), ("in", lambda: F.l_batch)),
    "out=variant[2] [List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [7.0, 7.0]]); "
    "List(float, <unknown>, 3: [float32[2] [3.0, 4.0] | float32[2] [5.0, 6.0] | float32[2] [8.0, 8.0]])]; "
    "in=variant[2] [List(float, <unknown>, 1: [float32[2] [1.0, 2.0]]); "
    "List(float, <unknown>, 2: [float32[2] [3.0, 4.0] | float32[2] [5.0, 6.0]])]",
)
P(
    "PBB2",
    "rows != number of lists",
    lambda: PBB(F.l_batch, [[7.0, 7.0]]),
    IA + "Expected tensor.shape[0] == input_handles.size, but saw 1 vs. 2 [Op:TensorListPushBackBatch]",
)
P(
    "PBB3",
    "a scalar tensor",
    lambda: PBB(F.l_batch, 1.0),
    IA + "Expected tensor to be at least a vector, but saw shape: [] [Op:TensorListPushBackBatch]",
)
P(
    "PBB4",
    "input_handles not a vector",
    lambda: (try_(lambda: PBB(A(), [[1.0, 2.0]])), try_(lambda: PBB(tf.reshape(F.l_batch, [1, 2]), [[1.0, 2.0]]))),
    "("
    + IA
    + "Expected input_handles to be a vector, but saw shape: [] [Op:TensorListPushBackBatch], "
    + IA
    + "Expected input_handles to be a vector, but saw shape: [1,2] [Op:TensorListPushBackBatch])",
)
P(
    "PBB5",
    "order: tensor rank before input_handles rank",
    lambda: PBB(A(), 1.0),
    IA + "Expected tensor to be at least a vector, but saw shape: [] [Op:TensorListPushBackBatch]",
)
P(
    "PBB6",
    "order: input_handles rank before the count",
    lambda: PBB(A(), [[1.0], [2.0], [3.0]]),
    IA + "Expected input_handles to be a vector, but saw shape: [] [Op:TensorListPushBackBatch]",
)
P(
    "PBB7",
    "a list of another dtype, by index",
    lambda: PBB(stack(FT([[1.0, 2.0]]), FT([[3, 4]])), [[7.0, 7.0], [8.0, 8.0]]),
    IA + "Invalid data type at index 1; op elements float but list elements int32 [Op:TensorListPushBackBatch]",
)
P(
    "PBB8",
    "a row not compatible with a list's element shape, by index",
    lambda: PBB(stack(FT([[1.0, 2.0]]), A2()), [[7.0, 7.0, 7.0], [8.0, 8.0, 8.0]]),
    IA + "Tried to append a tensor with incompatible shape to a list at index 1. Op element shape: [3] list shape: "
    "[2] [Op:TensorListPushBackBatch]",
)
P(
    "PBB9",
    "order: list by list; within a list, shape before dtype",
    lambda: (
        try_(lambda: PBB(stack(A2(), FT([[3, 4]])), [[7.0, 7.0, 7.0], [8.0, 8.0, 8.0]])),
        try_(lambda: PBB(stack(FT([[3, 4]]), A2()), [[7.0, 7.0, 7.0], [8.0, 8.0, 8.0]])),
        try_(lambda: PBB(stack(FT([[3, 4]], [2]), A()), [[7.0, 7.0, 7.0], [8.0, 8.0, 8.0]])),
    ),
    "(" + IA + "Tried to append a tensor with incompatible shape to a list at index 0. Op element shape: [3] list "
    "shape: [2] [Op:TensorListPushBackBatch], " + IA + "Invalid data type at index 0; op elements float but list "
    "elements int32 [Op:TensorListPushBackBatch], " + IA + "Tried to append a tensor with incompatible shape to a "
    "list at index 0. Op element shape: [3] list shape: [2] [Op:TensorListPushBackBatch])",
)
P(
    "PBB10",
    "a batch entry that is not a list",
    lambda: PBB(stack(A(), vzero()), [[7.0, 7.0], [8.0, 8.0]]),
    IA + "Input handle at index 1 is not a list. Saw: 'Variant<type: int value: 0>' [Op:TensorListPushBackBatch]",
)
P(
    "PBB11",
    "max_num_elements is not checked",
    lambda: PBB(stack(E([2], m=0)), [[7.0, 7.0]]),
    "variant[1] [List(float, [2], 1: [float32[2] [7.0, 7.0]])]",
)
P("PBB12", "an empty batch", lambda: PBB(F.l_batch[:0], tf.zeros([0, 2])), "variant[0] []")
P(
    "PBB13",
    "the results keep their max_num_elements",
    lambda: PB(PBB(stack(E([2], m=1)), [[7.0, 7.0]])[0], [1.0, 2.0]),
    IA + "Tried to push item into a full list list size: 1 max_num_elements: 1 [Op:TensorListPushBack]",
)

# ---- POP: TensorListPopBack
P(
    "POP1",
    "returns (list without the last element, last element); the input is unchanged",
    lambda: steps(("out", lambda: POP(F.l_a)), ("in", lambda: F.l_a)),
    "out=(List(float, <unknown>, 1: [float32[2] [1.0, 2.0]]), float32[2] [3.0, 4.0]); "
    "in=List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]])",
)
P("POP2", "an empty list", lambda: POP(E([2])), IA + "Trying to pop from an empty list. [Op:TensorListPopBack]")
P(
    "POP3",
    "the dtype check comes first",
    lambda: POP(E([2]), dt=tf.int32),
    IA + "Invalid data types; op elements int32 but list elements float [Op:TensorListPopBack]",
)
P(
    "POP4",
    "an unset last element, list shape [2]: zeros",
    lambda: POP(RES([2], 2)),
    "(List(float, [2], 1: [unset]), float32[2] [0.0, 0.0])",
)
P(
    "POP5",
    "an unset last element, shape not fully defined (no space before the shape)",
    lambda: (try_(lambda: POP(UNS(2))), try_(lambda: POP(RES([-1], 2)))),
    "(" + IA + "Trying to read an uninitialized tensor but element_shape is not fully defined.<unknown> "
    "[Op:TensorListPopBack], " + IA + "Trying to read an uninitialized tensor but element_shape is not fully "
    "defined.[?] [Op:TensorListPopBack])",
)
P(
    "POP6",
    "the element_shape input is merged with the list's",
    lambda: POP(UNS(2), [3]),
    "(List(float, <unknown>, 1: [unset]), float32[3] [0.0, 0.0, 0.0])",
)
P(
    "POP7",
    "merge conflicts",
    lambda: (try_(lambda: POP(RES([2], 2), [3])), try_(lambda: POP(RES([-1], 2), [1, 2]))),
    "("
    + IA
    + "PartialTensorShape: Incompatible shapes during merge: [3] vs. [2] [Op:TensorListPopBack], "
    + IA
    + "PartialTensorShape: Incompatible ranks during merge: 2 vs. 1 [Op:TensorListPopBack])",
)
P(
    "POP8",
    "no inference from the other elements (unlike GetItem)",
    lambda: POP(SI(UNS(2), 0, [1.0, 2.0])),
    IA + "Trying to read an uninitialized tensor but element_shape is not fully defined.<unknown> "
    "[Op:TensorListPopBack]",
)
P(
    "POP9",
    "for a set last element the element_shape input is not parsed",
    lambda: POP(A(), 5)[1],
    "float32[2] [3.0, 4.0]",
)
P(
    "POP10",
    "the result keeps max_num_elements",
    lambda: steps(
        ("pop", lambda: LEN(F.l_pop10)),
        ("push", lambda: LEN(PB(F.l_pop10, [1.0, 2.0]))),
        ("push2", lambda: pushes(F.l_pop10, [1.0, 2.0], [1.0, 2.0])),
    ),
    "pop=int32[] 0; push=int32[] 1; push2=" + IA + "Tried to push item into a full list list size: 1 "
    "max_num_elements: 1 [Op:TensorListPushBack]",
)
P(
    "POP11",
    "the empty check comes before the element_shape parse",
    lambda: POP(E([2]), 5),
    IA + "Trying to pop from an empty list. [Op:TensorListPopBack]",
)

# ---- ST: TensorListStack
P("ST1", "stacks the elements", lambda: ST(A()), "float32[2, 2] [[1.0, 2.0], [3.0, 4.0]]")
P(
    "ST2",
    "element_dtype not the list's",
    lambda: ST(A(), dt=tf.int32),
    IA + "Invalid data types; op elements int32 but list elements float [Op:TensorListStack]",
)
P(
    "ST3",
    "num_elements not the length",
    lambda: (try_(lambda: ST(A(), n=3)), try_(lambda: ST(A(), n=-2))),
    "("
    + IA
    + "Operation expected a list with 3 elements but got a list with 2 elements. [Op:TensorListStack], "
    + IA
    + "Operation expected a list with -2 elements but got a list with 2 elements. [Op:TensorListStack])",
)
P(
    "ST4",
    "num_elements equal to the length; -1 skips the check",
    lambda: (ST(A(), n=2), ST(A(), n=-1)),
    "(float32[2, 2] [[1.0, 2.0], [3.0, 4.0]], float32[2, 2] [[1.0, 2.0], [3.0, 4.0]])",
)
P(
    "ST5",
    "order: dtype before num_elements",
    lambda: ST(A(), n=3, dt=tf.int32),
    IA + "Invalid data types; op elements int32 but list elements float [Op:TensorListStack]",
)
P(
    "ST6",
    "order: num_elements before the element_shape parse",
    lambda: ST(A(), 5, n=3),
    IA + "Operation expected a list with 3 elements but got a list with 2 elements. [Op:TensorListStack]",
)
P(
    "ST7",
    "element_shape input conflicting with the list's",
    lambda: ST(A2(), [3]),
    IA + "PartialTensorShape: Incompatible shapes during merge: [3] vs. [2] [Op:TensorListStack]",
)
P(
    "ST8",
    "element_shape input conflicting with the elements (list shape unknown)",
    lambda: (try_(lambda: ST(A(), [3])), try_(lambda: ST(A(), [2, 1]))),
    "("
    + IA
    + "PartialTensorShape: Incompatible shapes during merge: [3] vs. [2] [Op:TensorListStack], "
    + IA
    + "PartialTensorShape: Incompatible ranks during merge: 2 vs. 1 [Op:TensorListStack])",
)
P(
    "ST9",
    "an empty list, shape not fully defined",
    lambda: (try_(lambda: ST(E(-1))), try_(lambda: ST(E([-1, 2])))),
    "(" + IA + "Tried to stack elements of an empty list with non-fully-defined element_shape: <unknown> "
    "[Op:TensorListStack], " + IA + "Tried to stack elements of an empty list with non-fully-defined element_shape: "
    "[?,2] [Op:TensorListStack])",
)
P(
    "ST10",
    "an empty list: shape [0] + the merged element shape",
    lambda: (ST(E([3])), ST(E(-1), [0, 2]), ST(E([2, -1, 3]), [-1, 0, -1])),
    "(float32[0, 3] [], float32[0, 0, 2] [], float32[0, 2, 0, 3] [])",
)
P(
    "ST11",
    "order: num_elements before the empty-list check",
    lambda: ST(E(-1), n=1),
    IA + "Operation expected a list with 1 elements but got a list with 0 elements. [Op:TensorListStack]",
)
P(
    "ST12",
    "order: element_shape parse and merge before the empty-list check",
    lambda: (try_(lambda: ST(E(-1), 5)), try_(lambda: ST(E([2, -1]), [3, -1]))),
    "("
    + IA
    + "The only valid scalar shape tensor is the fully unknown shape specified as -1. [Op:TensorListStack], "
    + IA
    + "PartialTensorShape: Incompatible shapes during merge: [3,?] vs. [2,?] [Op:TensorListStack])",
)
P(
    "ST13",
    "only unset elements, shape not fully defined",
    lambda: (try_(lambda: ST(UNS(2))), try_(lambda: ST(RES([-1], 2)))),
    "(" + IA + "Tried to stack list which only contains uninitialized tensors and has a non-fully-defined "
    "element_shape: <unknown> [Op:TensorListStack], " + IA + "Tried to stack list which only contains uninitialized "
    "tensors and has a non-fully-defined element_shape: [?] [Op:TensorListStack])",
)
P(
    "ST14",
    "unset elements stack as zeros of the merged shape",
    lambda: (ST(RES([2], 2)), ST(UNS(2), [1]), ST(SI(UNS(3), 1, [1.0, 2.0]))),
    "(float32[2, 2] [[0.0, 0.0], [0.0, 0.0]], float32[2, 1] [[0.0], [0.0]], "
    "float32[3, 2] [[0.0, 0.0], [1.0, 2.0], [0.0, 0.0]])",
)
P(
    "ST15",
    "elements of different shapes: merge error (shape so far first)",
    lambda: (
        try_(lambda: ST(pushes(E(-1), [1.0, 2.0], [1.0, 2.0, 3.0]))),
        try_(lambda: ST(pushes(E(-1), [1.0, 2.0], [[1.0, 2.0]]))),
    ),
    "("
    + IA
    + "PartialTensorShape: Incompatible shapes during merge: [2] vs. [3] [Op:TensorListStack], "
    + IA
    + "PartialTensorShape: Incompatible ranks during merge: 1 vs. 2 [Op:TensorListStack])",
)
P(
    "ST16",
    "the elements are merged even when the element_shape input is fully defined",
    lambda: ST(pushes(UNS(1), [1.0, 2.0], [1.0, 2.0, 3.0]), [2]),
    IA + "PartialTensorShape: Incompatible shapes during merge: [2] vs. [3] [Op:TensorListStack]",
)
P(
    "ST17",
    "scalar elements stack to a vector; elements with no values are fine",
    lambda: (ST(FT([1.0, 2.0])), ST(FT(tf.zeros([2, 0])))),
    "(float32[2] [1.0, 2.0], float32[2, 0] [[], []])",
)
P(
    "ST18",
    "the element_shape parse happens even when every element is set",
    lambda: ST(A2(), 5),
    IA + "The only valid scalar shape tensor is the fully unknown shape specified as -1. [Op:TensorListStack]",
)

# ---- GA: TensorListGather
P(
    "GA1",
    "gathers in index order; repeats allowed",
    lambda: GA(A(), [1, 0, 1]),
    "float32[3, 2] [[3.0, 4.0], [1.0, 2.0], [3.0, 4.0]]",
)
P(
    "GA2",
    "no indices, shape not fully defined",
    lambda: GA(A(), i32([])),
    IA + "Tried to gather 0-elements from a list with non-fully-defined shape: <unknown> [Op:TensorListGather]",
)
P(
    "GA3",
    "no indices: [0] + the merged shape (the elements are not looked at)",
    lambda: (GA(A(), i32([]), [2]), GA(A2(), i32([])), GA(A(), i32([]), [7])),
    "(float32[0, 2] [], float32[0, 2] [], float32[0, 7] [])",
)
P(
    "GA4",
    "an index == length, or negative",
    lambda: (try_(lambda: GA(A(), [0, 2])), try_(lambda: GA(A(), [0, -1]))),
    "("
    + IA
    + "Trying to gather element 2 in a list with 2 elements. [Op:TensorListGather], "
    + IA
    + "Trying to gather element -1 in a list with 2 elements. [Op:TensorListGather])",
)
P(
    "GA5",
    "element_dtype not the list's",
    lambda: GA(A(), [0], dt=tf.int32),
    IA + "Invalid data types; op elements int32 but list elements float [Op:TensorListGather]",
)
P(
    "GA6",
    "indices of any shape are read flat",
    lambda: (GA(A(), 1), GA(A(), [[1, 0]])),
    "(float32[1, 2] [[3.0, 4.0]], float32[2, 2] [[3.0, 4.0], [1.0, 2.0]])",
)
P(
    "GA7",
    "gathered elements of different shapes",
    lambda: GA(pushes(E(-1), [1.0, 2.0], [1.0, 2.0, 3.0]), [0, 1]),
    IA + "PartialTensorShape: Incompatible shapes during merge: [2] vs. [3] [Op:TensorListGather]",
)
P(
    "GA8",
    "only the gathered elements must agree",
    lambda: GA(pushes(E(-1), [1.0, 2.0], [1.0, 2.0, 3.0]), [1, 1]),
    "float32[2, 3] [[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]",
)
P(
    "GA9",
    "unset elements: zeros, shape inferred from the gathered set elements only",
    lambda: (GA(SI(UNS(3), 1, [1.0, 2.0]), [0, 1]), try_(lambda: GA(SI(UNS(3), 1, [1.0, 2.0]), [0, 2]))),
    "(float32[2, 2] [[0.0, 0.0], [1.0, 2.0]], " + IA + "Tried to gather uninitialized tensors from a list with "
    "non-fully-defined element_shape: <unknown> [Op:TensorListGather])",
)
P(
    "GA10",
    "the element_shape input can define the zeros",
    lambda: GA(SI(UNS(3), 1, [1.0, 2.0]), [0, 2], [3]),
    "float32[2, 3] [[0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]",
)
P(
    "GA11",
    "element_shape input conflicting with an element",
    lambda: GA(A(), [0], [3]),
    IA + "PartialTensorShape: Incompatible shapes during merge: [3] vs. [2] [Op:TensorListGather]",
)
P(
    "GA12",
    "order: index by index, the range check and the merge of each",
    lambda: (
        try_(lambda: GA(pushes(E(-1), [1.0, 2.0], [1.0, 2.0, 3.0]), [0, 1, 5])),
        try_(lambda: GA(pushes(E(-1), [1.0, 2.0], [1.0, 2.0, 3.0]), [0, 5, 1])),
    ),
    "("
    + IA
    + "PartialTensorShape: Incompatible shapes during merge: [2] vs. [3] [Op:TensorListGather], "
    + IA
    + "Trying to gather element 5 in a list with 2 elements. [Op:TensorListGather])",
)
P(
    "GA13",
    "with a fully defined list shape the range check has another text (typo included)",
    lambda: (
        try_(lambda: GA(A2(), [0, 5])),
        try_(lambda: GA(A2(), [0, -1])),
        try_(lambda: GA(RES([2], 2), [2])),
        try_(lambda: GA(A(), [0, 5], [2])),
    ),
    "(" + IA + "Index 5 out o range; list only has 2 elements. [Op:TensorListGather], " + IA + "Index -1 out o range; "
    "list only has 2 elements. [Op:TensorListGather], " + IA + "Index 2 out o range; list only has 2 elements. "
    "[Op:TensorListGather], " + IA + "Trying to gather element 5 in a list with 2 elements. [Op:TensorListGather])",
)
P(
    "GA14",
    "order: dtype, then element_shape, then the no-indices check",
    lambda: (
        try_(lambda: GA(A(), i32([]), 5, tf.int32)),
        try_(lambda: GA(A(), i32([]), 5)),
        try_(lambda: GA(A2(), i32([]), [3])),
    ),
    "("
    + IA
    + "Invalid data types; op elements int32 but list elements float [Op:TensorListGather], "
    + IA
    + "The only valid scalar shape tensor is the fully unknown shape specified as -1. [Op:TensorListGather], "
    + IA
    + "PartialTensorShape: Incompatible shapes during merge: [3] vs. [2] [Op:TensorListGather])",
)
P(
    "GA15",
    "order: range errors come before the not-fully-defined error",
    lambda: GA(UNS(2), [0, 7]),
    IA + "Trying to gather element 7 in a list with 2 elements. [Op:TensorListGather]",
)
P(
    "GA16",
    "the indices must be int32 (op definition)",
    lambda: GA(A(), i64([0])),
    IA + "cannot compute TensorListGather as input #1(zero-based) was expected to be a int32 tensor but is a int64 "
    "tensor [Op:TensorListGather]",
)
P(
    "GA17",
    "only unset elements and a fully defined list shape: zeros",
    lambda: GA(RES([2], 2), [0, 1]),
    "float32[2, 2] [[0.0, 0.0], [0.0, 0.0]]",
)
P(
    "GA18",
    "a fully defined list shape with no values ([0]): out-of-range indices are not noticed",
    lambda: (
        GA(RES([0], 2), [5]),
        GA(RES([0], 2), [-1]),
        GA(FT(tf.zeros([2, 0]), [0]), [5, 0]),
        try_(lambda: GA(FT(tf.zeros([2, 0])), [5])),
    ),
    "(float32[1, 0] [[]], float32[1, 0] [[]], float32[2, 0] [[], []], " + IA + "Trying to gather element 5 in a list "
    "with 2 elements. [Op:TensorListGather])",
)

# ---- SC: TensorListScatter and TensorListScatterV2
P(
    "SC1",
    "row k goes to index indices[k]; the length is max index + 1; gaps are unset",
    lambda: SC([[1.0, 2.0], [3.0, 4.0]], [3, 1]),
    "List(float, <unknown>, 4: [unset | float32[2] [3.0, 4.0] | unset | float32[2] [1.0, 2.0]])",
)
P(
    "SC2",
    "a repeated index: the later row wins",
    lambda: SC([[1.0, 2.0], [3.0, 4.0]], [1, 1]),
    "List(float, <unknown>, 2: [unset | float32[2] [3.0, 4.0]])",
)
P(
    "SC3",
    "the list takes element_shape as given",
    lambda: SC([[1.0, 2.0]], [0], [-1]),
    "List(float, [?], 1: [float32[2] [1.0, 2.0]])",
)
P(
    "SC4",
    "a negative index",
    lambda: SC([[1.0, 2.0], [3.0, 4.0]], [0, -1]),
    IA + "Indices in TensorListScatter must all be non-negative. [Op:TensorListScatter]",
)
P(
    "SC5",
    "rows != number of indices",
    lambda: SC([[1.0, 2.0], [3.0, 4.0]], [0]),
    IA + "Invalid number of rows in input tensor. Expected: 1 Actual: 2 [Op:TensorListScatter]",
)
P(
    "SC6",
    "element_shape not compatible with the rows",
    lambda: SC([[1.0, 2.0]], [0], [3]),
    IA + "Specified a list with shape [3] from a tensor with shape [2] [Op:TensorListScatter]",
)
P(
    "SC7",
    "a scalar tensor",
    lambda: SC(1.0, [0]),
    IA + "Tensor must be at least a vector, but saw shape: [] [Op:TensorListScatter]",
)
P(
    "SC8",
    "indices of any shape are read flat",
    lambda: (SC([[1.0, 2.0]], 0), SC([[1.0, 2.0], [3.0, 4.0]], [[1, 0]])),
    "(List(float, <unknown>, 1: [float32[2] [1.0, 2.0]]), "
    "List(float, <unknown>, 2: [float32[2] [3.0, 4.0] | float32[2] [1.0, 2.0]]))",
)
P("SC9", "no indices, no rows: an empty list", lambda: SC(tf.zeros([0, 2]), i32([])), "List(float, <unknown>, 0: [])")
P(
    "SC10",
    "order: element_shape parse, tensor rank, shape compatibility, row count, indices",
    lambda: (
        try_(lambda: SC(1.0, [0], 5)),
        try_(lambda: SC([[1.0, 2.0]], [0, 1], [3])),
        try_(lambda: SC([[1.0, 2.0], [3.0, 4.0]], [-1])),
    ),
    "("
    + IA
    + "The only valid scalar shape tensor is the fully unknown shape specified as -1. [Op:TensorListScatter], "
    + IA
    + "Specified a list with shape [3] from a tensor with shape [2] [Op:TensorListScatter], "
    + IA
    + "Invalid number of rows in input tensor. Expected: 1 Actual: 2 [Op:TensorListScatter])",
)
P(
    "SC11",
    "V2: num_elements sets a minimum length (unset padding)",
    lambda: SC2([[1.0, 2.0], [3.0, 4.0]], [3, 1], n=5),
    "List(float, <unknown>, 5: [unset | float32[2] [3.0, 4.0] | unset | float32[2] [1.0, 2.0] | unset])",
)
P(
    "SC12",
    "V2: num_elements -1 is max index + 1; 0 with no indices is empty",
    lambda: (SC2([[1.0, 2.0]], [2], n=-1), SC2(tf.zeros([0, 2]), i32([]), n=0)),
    "(List(float, <unknown>, 3: [unset | unset | float32[2] [1.0, 2.0]]), List(float, <unknown>, 0: []))",
)
P(
    "SC13",
    "V2: an index >= num_elements",
    lambda: SC2([[1.0, 2.0], [3.0, 4.0]], [3, 1], n=2),
    IA + "TensorListScatter: Trying to scatter at index 3 in list with size 2 [Op:TensorListScatterV2]",
)
P(
    "SC14",
    "V2: num_elements below -1",
    lambda: SC2([[1.0, 2.0]], [0], n=-2),
    IA + "TensorListScatter expects num_elements >= -1, found: -2 [Op:TensorListScatterV2]",
)
P(
    "SC15",
    "V2: num_elements not a scalar",
    lambda: (try_(lambda: SC2([[1.0]], [0], n=[5])), try_(lambda: SC2([[1.0]], [0], n=[1, 2]))),
    "("
    + IA
    + "num_elements must be a scalar [Op:TensorListScatterV2], "
    + IA
    + "num_elements must be a scalar [Op:TensorListScatterV2])",
)
P(
    "SC16",
    "V2 order: element_shape matrix, element_shape parse, num_elements scalar, num_elements >= -1, then as V1",
    lambda: (
        try_(lambda: SC2(1.0, [0], i32([[1]]), n=[1, 2])),
        try_(lambda: SC2(1.0, [0], 5, n=[1, 2])),
        try_(lambda: SC2(1.0, [0], -1, n=[1, 2])),
        try_(lambda: SC2(1.0, [0], 5, n=-2)),
        try_(lambda: SC2(1.0, [0], [3], n=-2)),
    ),
    "(" + IA + "TensorListScatter: element_shape must be at most rank 1 but has the shape of [1,1] "
    "[Op:TensorListScatterV2], " + IA + "The only valid scalar shape tensor is the fully unknown shape specified as "
    "-1. [Op:TensorListScatterV2], "
    + IA
    + "num_elements must be a scalar [Op:TensorListScatterV2], "
    + IA
    + "The only valid scalar shape tensor is the fully unknown shape specified as -1. [Op:TensorListScatterV2], "
    + IA
    + "TensorListScatter expects num_elements >= -1, found: -2 [Op:TensorListScatterV2])",
)
P(
    "SC17",
    "V2: indices are checked in order, each for < 0 then >= num_elements",
    lambda: (try_(lambda: SC2([[1.0], [2.0]], [3, -1], n=2)), try_(lambda: SC2([[1.0], [2.0]], [-1, 3], n=2))),
    "("
    + IA
    + "TensorListScatter: Trying to scatter at index 3 in list with size 2 [Op:TensorListScatterV2], "
    + IA
    + "Indices in TensorListScatter must all be non-negative. [Op:TensorListScatterV2])",
)
P("SC18", "the list has no size limit", lambda: LEN(PB(SC([[1.0]], [0]), [2.0])), "int32[] 2")

# ---- SX: TensorListScatterIntoExistingList
P(
    "SX1",
    "writes row k to element indices[k]; the input list is unchanged",
    lambda: steps(("out", lambda: SX(F.l_a, [[9.0, 9.0]], [1])), ("in", lambda: F.l_a)),
    "out=List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [9.0, 9.0]]); "
    "in=List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]])",
)
P(
    "SX2",
    "a repeated index: the later row wins",
    lambda: SX(A(), [[5.0, 5.0], [6.0, 6.0]], [0, 0]),
    "List(float, <unknown>, 2: [float32[2] [6.0, 6.0] | float32[2] [3.0, 4.0]])",
)
P(
    "SX3",
    "past the end of a float list: grows; the gap holds float32 tensors of shape [0], not unset elements",
    lambda: SX(A(), [[9.0, 9.0]], [3]),
    "List(float, <unknown>, 4: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0] | float32[0] [] | "
    "float32[2] [9.0, 9.0]])",
)
P(
    "SX4",
    "a tensor of another dtype",
    lambda: SX(A(), [[9, 9]], [1]),
    IA + "Invalid data types; input tensor type: int32 list element_type: float [Op:TensorListScatterIntoExistingList]",
)
P(
    "SX5",
    "a scalar tensor",
    lambda: SX(A(), 1.0, [1]),
    IA + "Tensor must be at least a vector, but saw shape: [] [Op:TensorListScatterIntoExistingList]",
)
P(
    "SX6",
    "indices not a vector (unlike Scatter)",
    lambda: (try_(lambda: SX(A(), [[9.0, 9.0]], [[1]])), try_(lambda: SX(A(), [[9.0, 9.0]], 1))),
    "("
    + IA
    + "Expected indices to be a vector, but received shape: [1,1] [Op:TensorListScatterIntoExistingList], "
    + IA
    + "Expected indices to be a vector, but received shape: [] [Op:TensorListScatterIntoExistingList])",
)
P(
    "SX7",
    "rows != number of indices",
    lambda: SX(A(), [[1.0, 2.0], [3.0, 4.0]], [1]),
    IA + "Expected len(indices) == tensor.shape[0], but saw: 1 vs. 2 [Op:TensorListScatterIntoExistingList]",
)
P(
    "SX8",
    "order: dtype, tensor rank, indices rank, count",
    lambda: (
        try_(lambda: SX(A(), 1, [[1]])),
        try_(lambda: SX(A(), 1.0, [[1]])),
        try_(lambda: SX(A(), [[1.0, 2.0], [3.0, 4.0]], [[1]])),
    ),
    "(" + IA + "Invalid data types; input tensor type: int32 list element_type: float "
    "[Op:TensorListScatterIntoExistingList], " + IA + "Tensor must be at least a vector, but saw shape: [] "
    "[Op:TensorListScatterIntoExistingList], " + IA + "Expected indices to be a vector, but received shape: [1,1] "
    "[Op:TensorListScatterIntoExistingList])",
)
P(
    "SX9",
    "no shape check against the list's element shape (unknown, or partial of another rank)",
    lambda: (SX(A(), [[9.0, 9.0, 9.0]], [0]), SX(FT([[1.0, 2.0]], [-1]), [[[9.0, 9.0, 9.0]]], [0])),
    "(List(float, <unknown>, 2: [float32[3] [9.0, 9.0, 9.0] | float32[2] [3.0, 4.0]]), "
    "List(float, [?], 1: [float32[1, 3] [[9.0, 9.0, 9.0]]]))",
)
P(
    "SX10",
    "no indices and no rows: the list as it was",
    lambda: SX(A(), tf.zeros([0, 2]), i32([])),
    "List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]])",
)
P(
    "SX11",
    "growth ignores max_num_elements; the result keeps it",
    lambda: steps(
        ("scatter", lambda: LEN(SX(E([2], m=1), [[1.0, 2.0]], [2]))),
        ("push", lambda: PB(SX(E([2], m=1), [[1.0, 2.0]], [0]), [1.0, 2.0])),
    ),
    "scatter=int32[] 3; push=" + IA + "Tried to push item into a full list list size: 1 max_num_elements: 1 "
    "[Op:TensorListPushBack]",
)
P(
    "SX12",
    "a gap element is set: Stack merges its shape [0]",
    lambda: ST(SX(A(), [[9.0, 9.0]], [3])),
    IA + "PartialTensorShape: Incompatible shapes during merge: [2] vs. [0] [Op:TensorListStack]",
)
P(
    "SX-X1",
    "a negative index: TensorFlow writes before the list (crash)",
    lambda: steps(("scatter", lambda: LEN(SX(A2(), [[5.0, 6.0]], [-1])))),
    "CRASH(SIGSEGV)",
    isolate=True,
)
P(
    "SX-X2",
    "a row incompatible with a fully defined element shape is stored; Stack then misplaces values",
    lambda: steps(
        ("scatter", lambda: SX(A2(), [[5.0, 6.0, 7.0]], [0])),
        ("stack", lambda: ST(F.l_sx_x2)),
        ("getitem", lambda: GI(F.l_sx_x2, 0)),
    ),
    "scatter=List(float, [2], 2: [float32[3] [5.0, 6.0, 7.0] | float32[2] [3.0, 4.0]]); "
    "stack=float32[2, 2] [[5.0, 6.0], [7.0, 3.0]]; getitem=float32[3] [5.0, 6.0, 7.0]",
    isolate=True,
)
P(
    "SX-X3",
    "past the end of an int32 list: the gap holds float tensors; GetItem refuses them",
    lambda: steps(
        ("scatter", lambda: LEN(F.l_sx_x3)),
        ("getitem", lambda: GI(F.l_sx_x3, 2, dt=tf.int32)),
        ("stack", lambda: ST(F.l_sx_x3, dt=tf.int32)),
    ),
    Re(
        r"scatter=int32\[\] 4; getitem=InvalidArgumentError: Type mismatch: actual float vs\. expect int32 "
        r"\[Op:TensorListGetItem\]; stack=InvalidArgumentError: PartialTensorShape: Incompatible (ranks|shapes) during "
        r"merge: .*"
    ),
    isolate=True,
)
P(
    "SX-X4",
    "past the end of an int32 list with a fully defined element shape: Stack aborts",
    lambda: steps(("scatter", lambda: LEN(F.l_sx_x4)), ("stack", lambda: ST(F.l_sx_x4, dt=tf.int32))),
    "scatter=int32[] 4 => CRASH(SIGABRT: Check failed: dtype() == expected_dtype (1 vs. 3)  int32 expected, got float)",
    isolate=True,
)
P(
    "SX-X5",
    "past the end of a float list with a fully defined element shape: Stack and Gather return garbage",
    lambda: steps(("stack", lambda: ST(F.l_sx_x5)), ("gather", lambda: GA(F.l_sx_x5, [1, 2]))),
    Re(r"stack=float32\[4, 2\] \[\[1\.0, 2\.0\], \[5\.0, 6\.0\], \[.*\]\]; gather=float32\[2, 2\] .*"),
    isolate=True,
)

# ---- CC: TensorListConcat (V1)
P(
    "CC1",
    "joins the elements along axis 0; lengths are int64",
    lambda: CC(pushes(E(-1), [[1.0, 2.0]], [[3.0, 4.0], [5.0, 6.0]])),
    "(float32[3, 2] [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], int64[2] [1, 2])",
)
P("CC2", "vectors join to a vector", lambda: CC(A()), "(float32[4] [1.0, 2.0, 3.0, 4.0], int64[2] [2, 2])")
P(
    "CC3",
    "the element_shape attribute without its first dimension is merged with the elements'",
    lambda: (
        CC(F.l_cc, [None, 2]),
        CC(F.l_cc, [7, 2]),
        try_(lambda: CC(F.l_cc, [None, 3])),
        try_(lambda: CC(F.l_cc, [7])),
    ),
    "((float32[3, 2] [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], int64[2] [1, 2]), "
    "(float32[3, 2] [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], int64[2] [1, 2]), "
    + IA
    + "PartialTensorShape: Incompatible shapes during merge: [3] vs. [2] [Op:TensorListConcat], "
    + IA
    + "PartialTensorShape: Incompatible ranks during merge: 0 vs. 1 [Op:TensorListConcat])",
)
P(
    "CC4",
    "element_dtype not the list's",
    lambda: CC(A(), dt=tf.int32),
    IA + "Invalid data types; op elements int32 but list elements float [Op:TensorListConcat]",
)
P(
    "CC5",
    "a scalar element",
    lambda: CC(pushes(E(-1), [1.0], 2.0)),
    IA + "Concat saw a scalar shape at index 1 but requires at least vectors. [Op:TensorListConcat]",
)
P(
    "CC6",
    "elements whose shapes after the first dimension differ",
    lambda: (
        try_(lambda: CC(pushes(E(-1), [[1.0, 2.0]], [[3.0, 4.0, 5.0]]))),
        try_(lambda: CC(pushes(E(-1), [[1.0, 2.0]], [3.0, 4.0]))),
    ),
    "("
    + IA
    + "PartialTensorShape: Incompatible shapes during merge: [2] vs. [3] [Op:TensorListConcat], "
    + IA
    + "PartialTensorShape: Incompatible ranks during merge: 1 vs. 0 [Op:TensorListConcat])",
)
P(
    "CC7",
    "an empty list needs the attribute fully defined after its first dimension; the list's shape is not used",
    lambda: (try_(lambda: CC(E(-1))), try_(lambda: CC(E([2, 3]))), CC(E(-1), [None, 3])),
    "(" + IA + "All except the first dimension must be fully defined when concating an empty tensor list. "
    "element_shape: <unknown> [Op:TensorListConcat], " + IA + "All except the first dimension must be fully "
    "defined when concating an empty tensor list. element_shape: <unknown> [Op:TensorListConcat], "
    "(float32[0, 3] [], int64[0] []))",
)
P(
    "CC8",
    "a list with a fully defined element shape fails without the attribute, even with every element set",
    lambda: (try_(lambda: CC(A2())), CC(A2(), [2])),
    "(" + IA + "Trying to concat list with only uninitialized tensors but element_shape_except_first_dim is not "
    "fully defined: <unknown> [Op:TensorListConcat], (float32[4] [1.0, 2.0, 3.0, 4.0], int64[2] [2, 2]))",
)
P(
    "CC9",
    "unset elements: zeros, first dimension taken from the set elements when they all agree",
    lambda: CC(SI(UNS(2), 0, [[1.0, 2.0]])),
    "(float32[2, 2] [[1.0, 2.0], [0.0, 0.0]], int64[2] [1, 1])",
)
P(
    "CC10",
    "unset elements whose first dimension cannot be inferred",
    lambda: (
        try_(lambda: CC(SI(SI(UNS(3), 0, [[1.0, 2.0]]), 1, [[1.0, 2.0], [3.0, 4.0]]))),
        try_(lambda: CC(UNS(2), [None, 2])),
    ),
    "(" + IA + "Concating lists with uninitialized tensors is not supported in this version of TensorListConcat. "
    "Consider updating your GraphDef to run the newer version. [Op:TensorListConcat], " + IA + "Concating lists "
    "with uninitialized tensors is not supported in this version of TensorListConcat. Consider updating your "
    "GraphDef to run the newer version. [Op:TensorListConcat])",
)
P(
    "CC11",
    "... with a fully defined list shape, an unset element fails as in CC8",
    lambda: CC(RES([1, 2], 2)),
    IA + "Trying to concat list with only uninitialized tensors but element_shape_except_first_dim is not fully "
    "defined: <unknown> [Op:TensorListConcat]",
)
P(
    "CC12",
    "... and with the attribute too: its first dimension is never used",
    lambda: CC(RES([1, 2], 2), [1, 2]),
    IA + "Concating lists with uninitialized tensors is not supported in this version of TensorListConcat. Consider "
    "updating your GraphDef to run the newer version. [Op:TensorListConcat]",
)
P(
    "CC13",
    "order: dtype, empty-list check, then element by element (scalar check, merge)",
    lambda: (
        try_(lambda: CC(E(-1), dt=tf.int32)),
        try_(lambda: CC(pushes(E(-1), 1.0, [[1.0]]), [None, 3])),
        try_(lambda: CC(pushes(E(-1), [[1.0]], 1.0), [None, 3])),
    ),
    "("
    + IA
    + "Invalid data types; op elements int32 but list elements float [Op:TensorListConcat], "
    + IA
    + "Concat saw a scalar shape at index 0 but requires at least vectors. [Op:TensorListConcat], "
    + IA
    + "PartialTensorShape: Incompatible shapes during merge: [3] vs. [1] [Op:TensorListConcat])",
)
P(
    "CC14",
    "elements with first dimension 0 are fine",
    lambda: CC(pushes(E(-1), tf.zeros([0, 2]), [[1.0, 2.0]])),
    "(float32[1, 2] [[1.0, 2.0]], int64[2] [0, 1])",
)

P(
    "CC15",
    "an element_shape attribute of rank 0 is refused before anything else (the dtype check, a vector of lists)",
    lambda: (try_(lambda: CC(A(), [], tf.int32)), try_(lambda: CC(stack(A(), A()), []))),
    "(" + IA + "element_shape must not be empty [Op:TensorListConcat], "
    + IA + "element_shape must not be empty [Op:TensorListConcat])",
)
P(
    "CC-X1",
    "a fully defined list element shape skips the element checks: an attribute that contradicts it reads garbage",
    lambda: CC(FT([[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]], [2, 3]), [-1, 4]),
    Re(r"\(float32\[2, 4\] \[\[0\.0, 1\.0, 2\.0, 3\.0\], \[4\.0, 5\.0, [^,]+, [^,]+\]\], int64\[1\] \[2\]\)"),
    isolate=True,
)
P(
    "CC-X2",
    "a list of element shape [] holding scalars: each counts as one row; with a larger attribute, garbage",
    lambda: steps(
        ("rows", lambda: CC(FT([0.0, 1.0, 2.0], S0()), [-1])),
        ("wider", lambda: CC(FT([0.0, 1.0, 2.0], S0()), [-1, 2])),
    ),
    Re(
        r"rows=\(float32\[3\] \[0\.0, 1\.0, 2\.0\], int64\[3\] \[1, 1, 1\]\); "
        r"wider=\(float32\[3, 2\] \[.*\], int64\[3\] \[1, 1, 1\]\)"
    ),
    isolate=True,
)

# ---- CV: TensorListConcatV2
P(
    "CV1",
    "as Concat, with the element_shape input merged with the list's",
    lambda: (CV(F.l_cc), CV(A()), CV(A2())),
    "((float32[3, 2] [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], int64[2] [1, 2]), "
    "(float32[4] [1.0, 2.0, 3.0, 4.0], int64[2] [2, 2]), (float32[4] [1.0, 2.0, 3.0, 4.0], int64[2] [2, 2]))",
)
P(
    "CV2",
    "element_shape of rank 0",
    lambda: CV(F.l_cc, S0()),
    IA + "Concat requires elements to be at least vectors, found scalars instead. [Op:TensorListConcatV2]",
)
P(
    "CV3",
    "a known first dimension must match every set element's",
    lambda: (try_(lambda: CV(F.l_cc, [1, 2])), CV(pushes(E(-1), [[1.0, 2.0]], [[3.0, 4.0]]), [1, 2])),
    "(" + IA + "First entry of element_shape input does not match the first dim of list element at index: 1 "
    "Expected: 1 Actual: 2 [Op:TensorListConcatV2], (float32[2, 2] [[1.0, 2.0], [3.0, 4.0]], int64[2] [1, 1]))",
)
P(
    "CV4",
    "the rest of element_shape is merged with the elements'",
    lambda: CV(F.l_cc, [-1, 3]),
    IA + "PartialTensorShape: Incompatible shapes during merge: [3] vs. [2] [Op:TensorListConcatV2]",
)
P(
    "CV5",
    "an empty list",
    lambda: (try_(lambda: CV(E(-1))), CV(E(-1), [-1, 3]), CV(E([5, 3]))),
    "(" + IA + "All except the first dimension must be fully defined when concating an empty tensor list. "
    "element_shape: <unknown> [Op:TensorListConcatV2], (float32[0, 3] [], int64[0] []), "
    "(float32[0, 3] [], int64[0] []))",
)
P(
    "CV6",
    "unset elements: leading_dims[i] when given, else the first dimension all set elements agree on",
    lambda: (
        CV(SI(UNS(2), 0, [[1.0, 2.0]])),
        CV(SI(UNS(2), 0, [[1.0, 2.0]]), ld=i64([5, 3])),
        CV(SI(UNS(3), 0, [[1.0, 2.0]]), ld=i64([5])),
    ),
    "((float32[2, 2] [[1.0, 2.0], [0.0, 0.0]], int64[2] [1, 1]), "
    "(float32[4, 2] [[1.0, 2.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], int64[2] [1, 3]), "
    "(float32[3, 2] [[1.0, 2.0], [0.0, 0.0], [0.0, 0.0]], int64[3] [1, 1, 1]))",
)
P(
    "CV7",
    "... or the first dimension of element_shape (input or list)",
    lambda: (CV(RES([-1, 2], 2), [3, 2]), CV(RES([3, 2], 2))),
    "((float32[6, 2] [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], int64[2] [3, 3]), "
    "(float32[6, 2] [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], int64[2] [3, 3]))",
)
P(
    "CV8",
    "leading_dims wins over a known first dimension",
    lambda: (CV(RES([3, 2], 2), ld=i64([1, 1])), CV(RES([3, 2], 2), ld=i64([1]))),
    "((float32[2, 2] [[0.0, 0.0], [0.0, 0.0]], int64[2] [1, 1]), "
    "(float32[4, 2] [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], int64[2] [1, 3]))",
)
P(
    "CV9",
    "no first dimension and leading_dims too short",
    lambda: (
        try_(lambda: CV(RES([-1, 2], 2))),
        try_(lambda: CV(SI(SI(UNS(3), 0, [[1.0, 2.0]]), 2, [[3.0, 4.0], [5.0, 6.0]]), ld=i64([7]))),
    ),
    "(" + IA + "List contains uninitialized tensor at index 0 but leading_dims has only 0 elements. "
    "[Op:TensorListConcatV2], " + IA + "List contains uninitialized tensor at index 1 but leading_dims has only 1 "
    "elements. [Op:TensorListConcatV2])",
)
P(
    "CV10",
    "leading_dims for the unset elements only; set elements keep their own",
    lambda: (CV(RES([-1, 2], 2), ld=i64([1, 2])), CV(F.l_cc, ld=i64([9, 9]))),
    "((float32[3, 2] [[0.0, 0.0], [0.0, 0.0], [0.0, 0.0]], int64[2] [1, 2]), "
    "(float32[3, 2] [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], int64[2] [1, 2]))",
)
P(
    "CV11",
    "only unset elements and element shape not fully defined after the first dimension",
    lambda: CV(UNS(2), ld=i64([1, 2])),
    IA + "Trying to concat list with only uninitialized tensors but element_shape_except_first_dim is not fully "
    "defined: <unknown> [Op:TensorListConcatV2]",
)
P(
    "CV12",
    "leading_dims must be int64 (op definition)",
    lambda: CV(A(), ld=i32([1])),
    IA + "cannot compute TensorListConcatV2 as input #2(zero-based) was expected to be a int64 tensor but is a int32 "
    "tensor [Op:TensorListConcatV2]",
)
P(
    "CV13",
    "order: dtype, element_shape parse and merge, rank, empty list, then element by element",
    lambda: (
        try_(lambda: CV(E(-1), 5, dt=tf.int32)),
        try_(lambda: CV(E([2]), S0())),
        try_(lambda: CV(E(-1), S0())),
        try_(lambda: CV(pushes(E(-1), [[1.0, 2.0]], [[1.0, 2.0], [3.0, 4.0]]), [1, 3])),
    ),
    "("
    + IA
    + "Invalid data types; op elements int32 but list elements float [Op:TensorListConcatV2], "
    + IA
    + "PartialTensorShape: Incompatible ranks during merge: 0 vs. 1 [Op:TensorListConcatV2], "
    + IA
    + "Concat requires elements to be at least vectors, found scalars instead. [Op:TensorListConcatV2], "
    + IA
    + "PartialTensorShape: Incompatible shapes during merge: [3] vs. [2] [Op:TensorListConcatV2])",
)
P(
    "CV14",
    "per element: scalar check, then merge, then first dimension",
    lambda: (
        try_(lambda: CV(pushes(E(-1), 1.0), [1, 3])),
        try_(lambda: CV(pushes(E(-1), [[1.0, 2.0], [3.0, 4.0]]), [1, 3])),
    ),
    "("
    + IA
    + "Concat saw a scalar shape at index 0 but requires at least vectors. [Op:TensorListConcatV2], "
    + IA
    + "PartialTensorShape: Incompatible shapes during merge: [3] vs. [2] [Op:TensorListConcatV2])",
)
P(
    "CV15",
    "no check against a fully defined list shape (elements already match it)",
    lambda: CV(A2(), [-1]),
    "(float32[4] [1.0, 2.0, 3.0, 4.0], int64[2] [2, 2])",
)
P(
    "CV16",
    "leading_dims is read only for unset elements: a bad one is harmless otherwise",
    lambda: (CV(A(), ld=i64([[5, 3]])), CV(A(), ld=i64([-7]))),
    "((float32[4] [1.0, 2.0, 3.0, 4.0], int64[2] [2, 2]), (float32[4] [1.0, 2.0, 3.0, 4.0], int64[2] [2, 2]))",
)
P(
    "CV-X1",
    "a negative leading_dims entry with a total of 0: a wrong result, no error",
    lambda: steps(("concat", lambda: CV(RES([-1, 2], 2), ld=i64([-1, 1])))),
    "concat=(float32[0, 2] [], int64[2] [-1, 1])",
    isolate=True,
)
P(
    "CV-X2",
    "a negative total: TensorFlow aborts",
    lambda: steps(("concat", lambda: CV(RES([-1, 2], 2), ld=i64([-3, 1])))),
    "CRASH(SIGABRT: Check failed: size >= 0 (-2 vs. 0))",
    isolate=True,
)
P(
    "CV-X3",
    "a negative entry with a positive total: TensorFlow aborts",
    lambda: steps(("concat", lambda: CV(RES([-1, 2], 2), ld=i64([-1, 3])))),
    "CRASH(SIGABRT: Check failed: size >= 0 (-1 vs. 0))",
    isolate=True,
)
P(
    "CV-X4",
    "leading_dims of rank 2: TensorFlow aborts",
    lambda: steps(("concat", lambda: CV(SI(UNS(2), 0, [[1.0, 2.0]]), ld=i64([[5, 3]])))),
    "CRASH(SIGABRT: Check failed: NDIMS == dims() (1 vs. 2) Asking for tensor of 1 dimensions from a tensor of 2 "
    "dimensions)",
    isolate=True,
)

# ---- CL: TensorListConcatLists
P(
    "CL1",
    "a's elements then b's; the inputs are unchanged",
    lambda: steps(("out", lambda: CL(F.l_a, FT([[5.0, 6.0]]))), ("in", lambda: F.l_a)),
    "out=List(float, <unknown>, 3: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0] | float32[2] [5.0, 6.0]]); "
    "in=List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]])",
)
P(
    "CL2",
    "element_dtype not a's, or not b's",
    lambda: (try_(lambda: CL(A(), A(), tf.int32)), try_(lambda: CL(A(), FT([[1, 2]])))),
    "("
    + IA
    + "input_a[0].dtype != element_dtype.  Saw: float vs. int32 [Op:TensorListConcatLists], "
    + IA
    + "input_b[0].dtype != element_dtype.  Saw: int32 vs. float [Op:TensorListConcatLists])",
)
P(
    "CL3",
    "element shapes must be identical (not just compatible)",
    lambda: (try_(lambda: CL(A(), A2())), try_(lambda: CL(FT([[3.0, 4.0]], [-1]), A()))),
    "(" + IA + "input_a and input_b TensorList element shapes are not identical at index 0.  Saw <unknown> vs. [2] "
    "[Op:TensorListConcatLists], " + IA + "input_a and input_b TensorList element shapes are not identical at index "
    "0.  Saw [?] vs. <unknown> [Op:TensorListConcatLists])",
)
P(
    "CL4",
    "unset elements stay unset",
    lambda: CL(FT([[3.0, 4.0]], [2]), RES([2], 1)),
    "List(float, [2], 2: [float32[2] [3.0, 4.0] | unset])",
)
P(
    "CL5",
    "the result keeps a's max_num_elements, not b's",
    lambda: (try_(lambda: PB(CL(E([2], m=1), A2()), [1.0, 2.0])), try_(lambda: PB(CL(A2(), E([2], m=1)), [1.0, 2.0]))),
    "(" + IA + "Tried to push item into a full list list size: 2 max_num_elements: 1 [Op:TensorListPushBack], "
    "List(float, [2], 3: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0] | float32[2] [1.0, 2.0]]))",
)
P(
    "CL6",
    "batches: vectors of lists, element-wise",
    lambda: CL(stack(FT([[1.0, 2.0]]), A()), stack(A(), FT([[1.0, 2.0]]))),
    "variant[2] [List(float, <unknown>, 3: [float32[2] [1.0, 2.0] | float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]]); "
    "List(float, <unknown>, 3: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0] | float32[2] [1.0, 2.0]])]",
)
P(
    "CL7",
    "a and b of different shapes",
    lambda: CL(stack(A(), A()), A()),
    IA + "Incompatible input TensorList tensor shapes: [2] vs. [] [Op:TensorListConcatLists]",
)
P(
    "CL8",
    "order: by batch index; within one, a dtype, b dtype, shapes",
    lambda: (
        try_(lambda: CL(stack(A(), FT([[1, 2]])), stack(A2(), A()))),
        try_(lambda: CL(stack(A(), A()), stack(FT([[1, 2]]), A2()))),
        try_(lambda: CL(stack(A2(), A()), stack(A(), FT([[1, 2]])))),
    ),
    "(" + IA + "input_a and input_b TensorList element shapes are not identical at index 0.  Saw <unknown> vs. [2] "
    "[Op:TensorListConcatLists], " + IA + "input_b[0].dtype != element_dtype.  Saw: int32 vs. float "
    "[Op:TensorListConcatLists], " + IA + "input_a and input_b TensorList element shapes are not identical at index "
    "0.  Saw [2] vs. <unknown> [Op:TensorListConcatLists])",
)
P(
    "CL9",
    "entries that are not lists",
    lambda: (try_(lambda: CL(vzero(), A())), try_(lambda: CL(A(), vzero()))),
    "(" + IA + "input_a is not a TensorList at index 0.  Saw: 'Variant<type: int value: 0>' "
    "[Op:TensorListConcatLists], " + IA + "input_b is not a TensorList at index 0.  Saw: 'Variant<type: int value: "
    "0>' [Op:TensorListConcatLists])",
)
P(
    "CL10",
    "a and b may be the same list",
    lambda: CL(F.l_a, F.l_a),
    "List(float, <unknown>, 4: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0] | float32[2] [1.0, 2.0] | "
    "float32[2] [3.0, 4.0]])",
)

# ---- SP: TensorListSplit
P(
    "SP1",
    "cuts the tensor along axis 0 into pieces of the given lengths",
    lambda: SP(F.l_t3, -1, [1, 2]),
    "List(float, <unknown>, 2: [float32[1, 2] [[1.0, 2.0]] | float32[2, 2] [[3.0, 4.0], [5.0, 6.0]]])",
)
P(
    "SP2",
    "lengths 0 give empty pieces",
    lambda: SP(F.l_t3, -1, [0, 3, 0]),
    "List(float, <unknown>, 3: [float32[0, 2] [] | float32[3, 2] [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]] | "
    "float32[0, 2] []])",
)
P(
    "SP3",
    "the list takes element_shape as given",
    lambda: SP(F.l_t3, [-1, 2], [1, 2]),
    "List(float, [?,2], 2: [float32[1, 2] [[1.0, 2.0]] | float32[2, 2] [[3.0, 4.0], [5.0, 6.0]]])",
)
P(
    "SP4",
    "a vector",
    lambda: SP([1.0, 2.0, 3.0], -1, [1, 2]),
    "List(float, <unknown>, 2: [float32[1] [1.0] | float32[2] [2.0, 3.0]])",
)
P(
    "SP5",
    "element_shape of rank 0",
    lambda: SP(F.l_t3, S0(), [1, 2]),
    IA + "TensorListSplit requires element_shape to be at least of rank 1, but saw: [] [Op:TensorListSplit]",
)
P(
    "SP6",
    "element_shape after its first dimension not compatible with the tensor's",
    lambda: (try_(lambda: SP(F.l_t3, [-1, 3], [1, 2])), try_(lambda: SP(F.l_t3, [-1], [1, 2]))),
    "("
    + IA
    + "tensor shape [3,2] is not compatible with element_shape [?,3] [Op:TensorListSplit], "
    + IA
    + "tensor shape [3,2] is not compatible with element_shape [?] [Op:TensorListSplit])",
)
P(
    "SP7",
    "a scalar tensor",
    lambda: SP(1.0, -1, [1]),
    IA + "Tensor must be at least a vector, but saw shape: [] [Op:TensorListSplit]",
)
P(
    "SP8",
    "lengths not a vector",
    lambda: SP(F.l_t3, -1, [[1, 2]]),
    IA + "Expected lengths to be a vector, received shape: [1,2] [Op:TensorListSplit]",
)
P(
    "SP9",
    "a negative length (in order)",
    lambda: (try_(lambda: SP(F.l_t3, -1, [-1, 4])), try_(lambda: SP(F.l_t3, -1, [2, -1, 2]))),
    "(" + IA + "Invalid value in lengths: -1 [Op:TensorListSplit], " + IA + "Invalid value in lengths: -1 "
    "[Op:TensorListSplit])",
)
P(
    "SP10",
    "lengths adding up past the end",
    lambda: SP(F.l_t3, -1, [2, 2]),
    IA + "Attempting to slice [2, 4] from tensor with length 3 [Op:TensorListSplit]",
)
P(
    "SP11",
    "lengths adding up to less",
    lambda: (try_(lambda: SP(F.l_t3, -1, [1, 1])), try_(lambda: SP(F.l_t3, -1, i64([])))),
    "("
    + IA
    + "Unused values in tensor. Length of tensor: 3 Values used: 2 [Op:TensorListSplit], "
    + IA
    + "Unused values in tensor. Length of tensor: 3 Values used: 0 [Op:TensorListSplit])",
)
P(
    "SP12",
    "no lengths and no rows: an empty list",
    lambda: SP(tf.zeros([0, 2]), -1, i64([])),
    "List(float, <unknown>, 0: [])",
)
P(
    "SP13",
    "lengths must be int64 (op definition)",
    lambda: R.TensorListSplit(tensor=[1.0], element_shape=-1, lengths=i32([1])),
    "ValueError: Tensor conversion requested dtype int64 for Tensor with dtype int32: <tf.Tensor: shape=(1,), "
    "dtype=int32, numpy=array([1], dtype=int32)>",
)
P(
    "SP14",
    "order: element_shape parse, its rank, tensor rank, compatibility, lengths rank, then lengths in order",
    lambda: (
        try_(lambda: SP(1.0, 5, [[1]])),
        try_(lambda: SP(1.0, S0(), [[1]])),
        try_(lambda: SP(1.0, [-1, 3], [[1]])),
        try_(lambda: SP(F.l_t3, [-1, 3], [[1]])),
        try_(lambda: SP(F.l_t3, -1, [4, -1])),
    ),
    "("
    + IA
    + "The only valid scalar shape tensor is the fully unknown shape specified as -1. [Op:TensorListSplit], "
    + IA
    + "TensorListSplit requires element_shape to be at least of rank 1, but saw: [] [Op:TensorListSplit], "
    + IA
    + "Tensor must be at least a vector, but saw shape: [] [Op:TensorListSplit], "
    + IA
    + "tensor shape [3,2] is not "
    "compatible with element_shape [?,3] [Op:TensorListSplit], " + IA + "Attempting to slice [0, 4] from tensor with "
    "length 3 [Op:TensorListSplit])",
)
P(
    "SP15",
    "a first dimension in element_shape is not checked against the pieces' lengths (partial shape)",
    lambda: SP(F.l_t3, [-1, 2], [1, 2]),
    "List(float, [?,2], 2: [float32[1, 2] [[1.0, 2.0]] | float32[2, 2] [[3.0, 4.0], [5.0, 6.0]]])",
)
P("SP16", "the list has no size limit", lambda: LEN(pushes(SP([1.0, 2.0], -1, [1, 1]), [1.0], [1.0])), "int32[] 4")
P(
    "SP-X1",
    "pieces that contradict a fully defined element_shape are stored; Stack returns a result that cannot hold them",
    lambda: steps(
        ("split", lambda: F.l_sp_x1), ("getitem", lambda: GI(F.l_sp_x1, 1)), ("stack", lambda: ST(F.l_sp_x1))
    ),
    "split=List(float, [1,2], 2: [float32[1, 2] [[1.0, 2.0]] | float32[2, 2] [[3.0, 4.0], [5.0, 6.0]]]); "
    "getitem=float32[2, 2] [[3.0, 4.0], [5.0, 6.0]]; stack=float32[2, 1, 2] [[[1.0, 2.0]], [[3.0, 4.0]]]",
    isolate=True,
)

# ---- RZ: TensorListResize
P(
    "RZ1",
    "grows with unset elements; the input is unchanged",
    lambda: steps(("out", lambda: RZ(F.l_a, 4)), ("in", lambda: F.l_a)),
    "out=List(float, <unknown>, 4: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0] | unset | unset]); "
    "in=List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]])",
)
P(
    "RZ2",
    "shrinks by dropping elements at the end; growing again gives unset elements",
    lambda: (RZ(A(), 1), RZ(A(), 0), RZ(RZ(A(), 1), 2)),
    "(List(float, <unknown>, 1: [float32[2] [1.0, 2.0]]), List(float, <unknown>, 0: []), "
    "List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | unset]))",
)
P(
    "RZ3",
    "a negative size",
    lambda: RZ(A(), -1),
    IA + "TensorListSlice expects size to be non-negative. Got: -1 [Op:TensorListResize]",
)
P(
    "RZ4",
    "a size that is not a scalar",
    lambda: (try_(lambda: RZ(A(), [2])), try_(lambda: RZ(A(), i32([])))),
    "(" + IA + "size must be a scalar [Op:TensorListResize], " + IA + "size must be a scalar [Op:TensorListResize])",
)
P(
    "RZ5",
    "order: the list checks, size shape, size sign",
    lambda: (try_(lambda: RZ(stack(A(), A()), [-1])), try_(lambda: RZ(A(), [-1]))),
    "(" + IA + "Input list must be a scalar saw: [2] [Op:TensorListResize], " + IA + "size must be a scalar "
    "[Op:TensorListResize])",
)
P(
    "RZ6",
    "ignores and keeps max_num_elements",
    lambda: steps(
        ("grow", lambda: LEN(RZ(E([2], m=1), 3))),
        ("push", lambda: PB(RZ(E([2], m=2), 1), [1.0, 2.0])),
        ("push2", lambda: PB(RZ(E([2], m=2), 2), [1.0, 2.0])),
    ),
    "grow=int32[] 3; push=List(float, [2], 2: [unset | float32[2] [1.0, 2.0]]); push2="
    + IA
    + "Tried to push item into a full list list size: 2 max_num_elements: 2 [Op:TensorListPushBack]",
)

# ---- ZL: ZerosLike on a list
P(
    "ZL1",
    "set elements become zeros of their shape and dtype; unset stay unset; the element shape is kept",
    lambda: (ZL(A()), ZL(SI(RES([2], 3), 1, [5.0, 5.0])), ZL(pushes(E(-1), [1.0, 2.0], [[3.0]]))),
    "(List(float, <unknown>, 2: [float32[2] [0.0, 0.0] | float32[2] [0.0, 0.0]]), "
    "List(float, [2], 3: [unset | float32[2] [0.0, 0.0] | unset]), "
    "List(float, <unknown>, 2: [float32[2] [0.0, 0.0] | float32[1, 1] [[0.0]]]))",
)
P("ZL2", "max_num_elements is not kept", lambda: LEN(PB(PB(ZL(E([2], m=1)), [1.0, 2.0]), [1.0, 2.0])), "int32[] 2")
P(
    "ZL3",
    "every numba_ta dtype",
    lambda: tuple(obs(ST(ZL(FT(tf.cast([1, 0], d))), dt=d)) for d in _DTYPES()),
    "(bool[2] [False, False], int8[2] [0, 0], int16[2] [0, 0], int32[2] [0, 0], int64[2] [0, 0], uint8[2] [0, 0], "
    "uint16[2] [0, 0], uint32[2] [0, 0], uint64[2] [0, 0], float16[2] [0.0, 0.0], float32[2] [0.0, 0.0], "
    "float64[2] [0.0, 0.0], complex64[2] [0j, 0j], complex128[2] [0j, 0j])",
)
P(
    "ZL4",
    "a string list",
    lambda: ZL(FT(["a", "b"])),
    IA + "Trying to compute zeros_like for unsupported dtype string [Op:ZerosLike]",
)
P(
    "ZL5",
    "a vector of lists",
    lambda: ZL(stack(A(), A())),
    IA + "ZerosLike non-scalar Tensor with dtype=DT_VARIANT is not supported. [Op:ZerosLike]",
)
P(
    "ZL6",
    "a list of lists: recursive",
    lambda: ZL(SI(RES(-1, 3, tf.variant), 0, A())),
    "List(variant, <unknown>, 3: [List(float, <unknown>, 2: [float32[2] [0.0, 0.0] | float32[2] [0.0, 0.0]]) | "
    "unset | unset])",
)
P("ZL7", "the variant zero", lambda: ZL(vzero()), "Variant<type: int value: 0>")
P(
    "ZL8",
    "the input is unchanged",
    lambda: steps(("out", lambda: ZL(F.l_a)), ("in", lambda: F.l_a)),
    "out=List(float, <unknown>, 2: [float32[2] [0.0, 0.0] | float32[2] [0.0, 0.0]]); "
    "in=List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]])",
)

# ---- AN: AddN on lists
P(
    "AN1",
    "element-wise sums; the inputs are unchanged",
    lambda: steps(("out", lambda: AN(F.l_a, F.l_a, F.l_a)), ("in", lambda: F.l_a)),
    "out=List(float, <unknown>, 2: [float32[2] [3.0, 6.0] | float32[2] [9.0, 12.0]]); "
    "in=List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]])",
)
P(
    "AN2",
    "one input: returned as it is (max_num_elements kept)",
    lambda: (AN(A()), try_(lambda: PB(AN(E([2], m=0)), [1.0, 2.0]))),
    "(List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]]), "
    + IA
    + "Tried to push item into a full list list size: 0 max_num_elements: 0 [Op:TensorListPushBack])",
)
P(
    "AN3",
    "an unset element plus a set one: the set one; unset plus unset: unset",
    lambda: (AN(SI(UNS(2), 0, [1.0, 2.0]), SI(UNS(2), 1, [3.0, 4.0])), AN(RES([2], 2), RES([2], 2))),
    "(List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]]), "
    "List(float, [2], 2: [unset | unset]))",
)
P(
    "AN4",
    "element shapes: compatible ones merge",
    lambda: (AN(A(), A2()), AN(FT(tf.ones([2, 2, 3]), [-1, 3]), FT(tf.ones([2, 2, 3]), [2, -1]))),
    "(List(float, [2], 2: [float32[2] [2.0, 4.0] | float32[2] [6.0, 8.0]]), "
    "List(float, [2,3], 2: [float32[2, 3] [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]] | "
    "float32[2, 3] [[2.0, 2.0, 2.0], [2.0, 2.0, 2.0]]]))",
)
P(
    "AN5",
    "different dtypes",
    lambda: AN(A(), FT([[1, 2], [3, 4]])),
    IA + "Trying to add two lists of tensors of different dtypes. One is float and the other is int32 [Op:AddN]",
)
P(
    "AN6",
    "incompatible element shapes",
    lambda: AN(RES([2], 1), RES([-1, 2], 1)),
    IA + "Trying to add two lists of tensors with incompatible element shapes. One is [2] and the other is [?,2] "
    "[Op:AddN]",
)
P(
    "AN7",
    "different lengths",
    lambda: AN(A(), FT([[1.0, 2.0]])),
    IA + "Trying to add two lists of tensors with different lengths. One is 2 and the other is 1 [Op:AddN]",
)
P(
    "AN8",
    "set elements of different shapes (no position in the text)",
    lambda: AN(pushes(E(-1), [1.0, 2.0], [1.0]), pushes(E(-1), [1.0, 2.0], [1.0, 2.0, 3.0])),
    IA + "Trying to add two tensors with incompatible element shapes. One is [1] and the other is [3] [Op:AddN]",
)
P(
    "AN9",
    "order: dtype, element shape, length, then element by element",
    lambda: (
        try_(lambda: AN(A2(), RES([3], 1, tf.int32))),
        try_(lambda: AN(A2(), FT([[1.0, 2.0, 3.0]], [3]))),
        try_(lambda: AN(pushes(E(-1), [1.0]), pushes(E(-1), [1.0, 2.0], [1.0]))),
    ),
    "(" + IA + "Trying to add two lists of tensors of different dtypes. One is float and the other is int32 "
    "[Op:AddN], " + IA + "Trying to add two lists of tensors with incompatible element shapes. One is [2] and the "
    "other is [3] [Op:AddN], " + IA + "Trying to add two lists of tensors with different lengths. One is 1 and the "
    "other is 2 [Op:AddN])",
)
P(
    "AN10",
    "three inputs: the first error in input order",
    lambda: AN(A(), A(), FT([[1.0, 2.0]])),
    IA + "Trying to add two lists of tensors with different lengths. One is 2 and the other is 1 [Op:AddN]",
)
P(
    "AN11",
    "bool and string lists: the dtype enum as a number",
    lambda: (try_(lambda: AN(FT([True]), FT([True]))), try_(lambda: AN(FT(["a"]), FT(["b"])))),
    "(" + IA + "Trying to add unsupported dtype 10 [Op:AddN], " + IA + "Trying to add unsupported dtype 7 [Op:AddN])",
)
P(
    "AN12",
    "every other numba_ta dtype adds",
    lambda: tuple(
        obs(ST(AN(FT(tf.constant([1, 2], d)), FT(tf.constant([3, 4], d))), dt=d))
        for d in _DTYPES()
        if d != tf.bool
    ),
    "(int8[2] [4, 6], int16[2] [4, 6], int32[2] [4, 6], int64[2] [4, 6], uint8[2] [4, 6], uint16[2] [4, 6], "
    "uint32[2] [4, 6], uint64[2] [4, 6], float16[2] [4.0, 6.0], float32[2] [4.0, 6.0], float64[2] [4.0, 6.0], "
    "complex64[2] [(4+0j), (6+0j)], complex128[2] [(4+0j), (6+0j)])",
)
P(
    "AN13",
    "the result's max_num_elements is -1 (no limit)",
    lambda: LEN(pushes(AN(E([2], m=0), E([2], m=1)), [1.0, 2.0], [1.0, 2.0])),
    "int32[] 2",
)
P(
    "AN14",
    "vectors of lists (the first non-scalar input is named)",
    lambda: (
        try_(lambda: AN(stack(A(), A()), stack(A(), A()))),
        try_(lambda: AN(A(), stack(A(), A()))),
        try_(lambda: AN(stack(A()), stack(A()))),
    ),
    "("
    + IA
    + "AddN of non-scalar Tensor with dtype=DT_VARIANT is not supported; inputs[0 has shape: [2]. [Op:AddN], "
    + IA
    + "AddN of non-scalar Tensor with dtype=DT_VARIANT is not supported; inputs[1 has shape: [2]. [Op:AddN], "
    + IA
    + "AddN of non-scalar Tensor with dtype=DT_VARIANT is not supported; inputs[0 has shape: [1]. [Op:AddN])",
)
P(
    "AN15",
    "lists of lists: recursive; an unset inner list takes the other",
    lambda: (AN(F.l_vl, F.l_vl), AN(SI(RES(-1, 2, tf.variant), 0, A()), SI(RES(-1, 2, tf.variant), 1, A()))),
    "(List(variant, <unknown>, 2: [List(float, <unknown>, 2: [float32[2] [2.0, 4.0] | float32[2] [6.0, 8.0]]) | "
    "List(float, <unknown>, 1: [float32[2] [10.0, 12.0]])]), "
    "List(variant, <unknown>, 2: [List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]]) | "
    "List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]])]))",
)
P(
    "AN16",
    "inner errors surface as they are",
    lambda: AN(F.l_vl, pushes(E(-1, dt=tf.variant), FT([[5.0, 6.0]]), A())),
    IA + "Trying to add two lists of tensors with different lengths. One is 2 and the other is 1 [Op:AddN]",
)
P(
    "AN17",
    "a list plus the variant zero",
    lambda: (try_(lambda: AN(vzero(), A())), try_(lambda: AN(A(), vzero()))),
    "(InternalError: BinaryOpVariants: Variants a and b have different type ids.  Type names: 'int' vs. "
    "'tensorflow::TensorList' [Op:AddN], InternalError: BinaryOpVariants: Variants a and b have different type ids.  "
    "Type names: 'tensorflow::TensorList' vs. 'int' [Op:AddN])",
)
P(
    "AN18",
    "a left fold: the running sum is 'One', the next input 'the other'",
    lambda: tuple(try_(lambda ls=ls: AN(*(FT([[1.0]] * k) for k in ls))) for ls in ((2, 3, 1), (1, 2, 2), (2, 1, 3))),
    "("
    + ", ".join(
        f"{IA}Trying to add two lists of tensors with different lengths. One is {a} and the other is {b} [Op:AddN]"
        for a, b in ((2, 3), (1, 2), (2, 1))
    )
    + ")",
)
P(
    "AN-X1",
    "the merged element shape may not fit an element only one list has set: the sum holds it, Stack reads past it",
    lambda: steps(
        ("sum", lambda: AN(FT([[1.0]]), RES([3], 1))),
        ("stack", lambda: ST(AN(FT([[1.0]]), RES([3], 1)))),
    ),
    Re(r"sum=List\(float, \[3\], 1: \[float32\[1\] \[1\.0\]\]\); stack=float32\[1, 3\] \[\[1\.0, [^,]+, [^,]+\]\]"),
    isolate=True,
)

# ---- V: lists of lists (element_dtype variant)
P(
    "V1",
    "GetItem returns the inner list",
    lambda: GI(F.l_vl, 1, dt=tf.variant),
    "List(float, <unknown>, 1: [float32[2] [5.0, 6.0]])",
)
P(
    "V2",
    "Stack and Gather return a variant vector of the inner lists",
    lambda: (ST(F.l_vl, dt=tf.variant), GA(F.l_vl, [1, 0], dt=tf.variant)),
    "(variant[2] [List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]]); "
    "List(float, <unknown>, 1: [float32[2] [5.0, 6.0]])], "
    "variant[2] [List(float, <unknown>, 1: [float32[2] [5.0, 6.0]]); "
    "List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]])])",
)
P(
    "V3",
    "PopBack returns the last inner list",
    lambda: POP(F.l_vl, dt=tf.variant)[1],
    "List(float, <unknown>, 1: [float32[2] [5.0, 6.0]])",
)
P(
    "V4",
    "an unset inner list reads as the variant zero, which no list op takes",
    lambda: (
        GI(RES(S0(), 2, tf.variant), 0, dt=tf.variant),
        ST(RES(S0(), 2, tf.variant), dt=tf.variant),
        try_(lambda: PB(GI(RES(S0(), 2, tf.variant), 0, dt=tf.variant), [1.0])),
    ),
    "(Variant<type: int value: 0>, variant[2] [Variant<type: int value: 0>; Variant<type: int value: 0>], "
    + IA
    + "Input handle is not a list. Saw: 'Variant<type: int value: 0>' [Op:TensorListPushBack])",
)
P(
    "V5",
    "an unset inner list with unknown shape: the usual error",
    lambda: GI(RES(-1, 2, tf.variant), 0, dt=tf.variant),
    IA + "Trying to read an uninitialized tensor but element_shape is not fully defined: <unknown> and no list element "
    "is set. [Op:TensorListGetItem]",
)
P(
    "V6",
    "inferred shape: a set inner list's shape is []",
    lambda: GI(SI(RES(-1, 2, tf.variant), 1, A()), 0, dt=tf.variant),
    "Variant<type: int value: 0>",
)
P(
    "V7",
    "Concat of a list of lists: the inner lists are scalars",
    lambda: CC(F.l_vl, dt=tf.variant),
    IA + "Concat saw a scalar shape at index 0 but requires at least vectors. [Op:TensorListConcat]",
)
P(
    "V8",
    "a list cannot be pushed to a float list",
    lambda: SI(A(), 0, FT([[5.0, 6.0]])),
    IA + "Invalid data types; op elements variant but list elements float [Op:TensorListSetItem]",
)
P(
    "V9",
    "the inner lists are values: changing the outer list leaves them alone",
    lambda: steps(("outer", lambda: SI(F.l_vl, 0, FT([[0.0, 0.0]]))), ("inner", lambda: GI(F.l_vl, 0, dt=tf.variant))),
    "outer=List(variant, <unknown>, 2: [List(float, <unknown>, 1: [float32[2] [0.0, 0.0]]) | "
    "List(float, <unknown>, 1: [float32[2] [5.0, 6.0]])]); "
    "inner=List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]])",
)
P(
    "V10",
    "a variant list may hold the variant zero as a set element; ZerosLike keeps it",
    lambda: (SI(RES(-1, 1, tf.variant), 0, vzero()), ZL(SI(RES(-1, 1, tf.variant), 0, vzero()))),
    "(List(variant, <unknown>, 1: [Variant<type: int value: 0>]), "
    "List(variant, <unknown>, 1: [Variant<type: int value: 0>]))",
)
P(
    "V11",
    "AddN of the variant zero with a list element",
    lambda: AN(SI(RES(-1, 1, tf.variant), 0, vzero()), SI(RES(-1, 1, tf.variant), 0, A())),
    "InternalError: BinaryOpVariants: Variants a and b have different type ids.  Type names: 'int' vs. "
    "'tensorflow::TensorList' [Op:AddN]",
)

# ---- VS: value semantics across a chain, and failing ops
P(
    "VS1",
    "a failing op leaves its input as it was",
    lambda: steps(("fail", lambda: SI(F.l_a, 5, [1.0, 2.0])), ("in", lambda: F.l_a)),
    "fail=" + IA + "Trying to modify element 5 in a list with 2 elements. [Op:TensorListSetItem]; "
    "in=List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]])",
)
P(
    "VS2",
    "one list, two different successors",
    lambda: (PB(F.l_a, [5.0, 6.0]), SI(F.l_a, 0, [0.0, 0.0]), F.l_a),
    "(List(float, <unknown>, 3: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0] | float32[2] [5.0, 6.0]]), "
    "List(float, <unknown>, 2: [float32[2] [0.0, 0.0] | float32[2] [3.0, 4.0]]), "
    "List(float, <unknown>, 2: [float32[2] [1.0, 2.0] | float32[2] [3.0, 4.0]]))",
)
P(
    "VS3",
    "a list made and consumed at once (TensorFlow may reuse it in place) gives the same values",
    lambda: PB(SI(PB(E(-1), [1.0]), 0, [2.0]), [3.0]),
    "List(float, <unknown>, 2: [float32[1] [2.0] | float32[1] [3.0]])",
)

# ---- DT: dtypes
P(
    "DT1",
    "every numba_ta dtype goes through FromTensor, GetItem, Stack",
    lambda: tuple(
        obs(ST(FT(tf.cast([[1, 0]], d)), dt=d)) + "/" + obs(GI(FT(tf.cast([[1, 0]], d)), 0, dt=d)) for d in _DTYPES()
    ),
    "(bool[1, 2] [[True, False]]/bool[2] [True, False], int8[1, 2] [[1, 0]]/int8[2] [1, 0], "
    "int16[1, 2] [[1, 0]]/int16[2] [1, 0], int32[1, 2] [[1, 0]]/int32[2] [1, 0], int64[1, 2] [[1, 0]]/int64[2] [1, 0], "
    "uint8[1, 2] [[1, 0]]/uint8[2] [1, 0], uint16[1, 2] [[1, 0]]/uint16[2] [1, 0], uint32[1, 2] [[1, 0]]/uint32[2] "
    "[1, 0], uint64[1, 2] [[1, 0]]/uint64[2] [1, 0], float16[1, 2] [[1.0, 0.0]]/float16[2] [1.0, 0.0], "
    "float32[1, 2] [[1.0, 0.0]]/float32[2] [1.0, 0.0], float64[1, 2] [[1.0, 0.0]]/float64[2] [1.0, 0.0], "
    "complex64[1, 2] [[(1+0j), 0j]]/complex64[2] [(1+0j), 0j], complex128[1, 2] [[(1+0j), 0j]]/complex128[2] "
    "[(1+0j), 0j])",
)
P(
    "DT2",
    "element_dtype names in messages are TensorFlow's C++ names",
    lambda: tuple(
        try_(lambda d=d: GI(RES(-1, 1, d), 0, dt=tf.int8)) for d in (tf.float16, tf.float64, tf.variant, tf.bool)
    ),
    "("
    + ", ".join(
        f"{IA}Invalid data types; op elements int8 but list elements {n} [Op:TensorListGetItem]"
        for n in ("half", "double", "variant", "bool")
    )
    + ")",
)

P(
    "DT3",
    "element_dtype / shape_type: any form tf.as_dtype takes (DType, name, NumPy type, enum, Python type)",
    lambda: (
        tuple(obs(GI(F.l_a, 0, dt=d)) for d in (tf.float32, "float32", "float", __import__("numpy").float32, 1, float))
        + (obs(ES(E([2]), "int64")),)
    ),
    "(" + ", ".join(["float32[2] [1.0, 2.0]"] * 6) + ", int64[1] [2])",
)
P(
    "DT4",
    "element_dtype is required",
    lambda: R.TensorListGetItem(input_handle=A(), index=0, element_shape=-1, element_dtype=None),
    "TypeError: Expected DataType for argument 'element_dtype' not None.",
)

# ----------------------------------------------------------------------------------------
# Fixtures: lists used by several probes, made lazily in the worker (module-level names)

_FIXTURES = {
    "l_a": lambda: A(),
    "l_batch": lambda: stack(FT([[1.0, 2.0]]), FT([[3.0, 4.0], [5.0, 6.0]])),
    "l_cc": lambda: pushes(E(-1), [[1.0, 2.0]], [[3.0, 4.0], [5.0, 6.0]]),
    "l_vl": lambda: VL(),
    "l_t3": lambda: tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
    "l_gi26": lambda: RES([2], 2),
    "l_pop10": lambda: POP(PB(E([2], m=1), [1.0, 2.0]))[0],
    "l_sx_x2": lambda: SX(A2(), [[5.0, 6.0, 7.0]], [0]),
    "l_sx_x3": lambda: SX(FT([1, 2]), [5], [3]),
    "l_sx_x4": lambda: SX(FT([1, 2], S0()), [5], [3]),
    "l_sx_x5": lambda: SX(FT([[1.0, 2.0]], [2]), [[5.0, 6.0]], [3]),
    "l_sp_x1": lambda: SP(F.l_t3, [1, 2], [1, 2]),
}


class _Fixtures:
    """``F.<name>``: the fixture, made on first use in the worker and then shared."""

    def __getattr__(self, name):
        if name not in _FIXTURES:  # not a fixture: the AttributeError hasattr() (and the doctest finder) expect
            raise AttributeError(name)
        value = _FIXTURES[name]()
        setattr(self, name, value)
        return value


F = _Fixtures()


# ----------------------------------------------------------------------------------------
# Worker


def worker(ids):
    _init_tf()
    for pid in ids:
        _CURRENT[0] = pid
        print(json.dumps({"id": pid, "start": True}), flush=True)
        _, fn, _, _ = PROBES[pid]
        try:
            text = obs(fn())
        except Exception as e:
            text = err_text(e)
        print(json.dumps({"id": pid, "obs": text}), flush=True)


# ----------------------------------------------------------------------------------------
# Parent


def _crash_text(rc, stderr):
    if rc < 0:
        try:
            sig = signal.Signals(-rc).name
        except ValueError:
            sig = f"signal {-rc}"
    else:
        sig = f"exit {rc}"
    m = re.search(r"Check failed: (.*)", stderr)
    if m:
        return f"CRASH({sig}: Check failed: {m.group(1).strip()})"
    return f"CRASH({sig})"


def run_ids(ids):
    """Run probes ``ids`` in one worker (restarted after a crash); yield (id, observation)."""
    todo = list(ids)
    while todo:
        cmd = [sys.executable, os.path.abspath(__file__), "--worker", *todo]
        env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3", PYTHONHASHSEED="0")
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        current, progress = None, None
        done = set()
        for line in proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "start" in msg:
                current, progress = msg["id"], None
            elif "progress" in msg:
                progress = msg["progress"]
            elif "obs" in msg:
                done.add(msg["id"])
                yield msg["id"], msg["obs"]
                current, progress = None, None
        stderr = proc.stderr.read()
        rc = proc.wait()
        todo = [p for p in todo if p not in done]
        if not todo:
            break
        if current is None:
            raise RuntimeError(f"worker failed before any probe (exit {rc}):\n{stderr[-3000:]}")
        crash = _crash_text(rc, stderr)
        yield current, (f"{progress} => {crash}" if progress else crash)
        todo.remove(current)


def matches(expect, got):
    if isinstance(expect, Re):
        return expect.matches(got)
    return expect == got


def main(argv):
    quiet = "--quiet" in argv
    prefixes = [a for a in argv if not a.startswith("--")]
    ids = [p for p in PROBES if not prefixes or any(p == x or p.startswith(x) for x in prefixes)]
    shared = [p for p in ids if not PROBES[p][3]]
    isolated = [p for p in ids if PROBES[p][3]]
    results = {}
    t0 = time.time()
    for pid, got in run_ids(shared):
        results[pid] = got
    for pid in isolated:
        for qid, got in run_ids([pid]):
            results[qid] = got
    bad = 0
    for pid in ids:
        text, _, expect, isolate = PROBES[pid]
        got = results.get(pid, "<no result>")
        ok = matches(expect, got)
        bad += not ok
        if not quiet or not ok:
            tag = "ok  " if ok else "FAIL"
            print(f"[{tag}] {pid}{' (isolated)' if isolate else ''}: {text}")
            print(f"       observed: {got}")
            if not ok:
                print(f"       expected: {expect}")
    print(f"\n{len(ids) - bad} of {len(ids)} probes as expected, {bad} not ({time.time() - t0:.0f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        worker(sys.argv[2:])
    else:
        sys.exit(main(sys.argv[1:]))
