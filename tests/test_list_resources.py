"""Lists of resources (``element_dtype=resource``): numba_ta against TensorFlow, op by op.

pfor (``tf.vectorized_map``, jacobians) makes a ``TensorListReserve`` with
``element_dtype=resource`` when it converts a while loop that captures a resource
variable.  TensorFlow's untyped list kernels (EmptyTensorList, Reserve, Length,
ElementShape, SetItem, PushBack, Resize, ConcatLists, and ZerosLike and AddN of lists)
work on such a list; the typed ones have no kernel for resource (``L70``, ``L71``).  The
contract is the section ``tl-resource`` of ``docs/semantics.rst``.

Every scenario below is a list of steps run on a *backend*: TensorFlow (eager
``tf.raw_ops``, a resource being ``tf.Variable(...).handle``) or numba_ta
(``numba_ta.raw_ops``, a resource being a TensorArray handle, numba_ta's resource tensor).
Each step gives an observation text: a list as ``List(<dtype>, <element shape>, <length>,
<set>)`` (the dtype read from ConcatLists' dtype check, which works on every list;
whether some element is set read from ``ZerosLike``, which refuses a set resource), a
number, or an error as ``<Class>: <first line of the kernel message> [Op:<op>]``.

* ``test_scenario`` (no TensorFlow): numba_ta's observations are ``EXPECTED``, the texts
  TensorFlow 2.21 gave (written down from the oracle test).
* ``test_scenario_against_tf`` (``oracle``): TensorFlow still gives ``EXPECTED``, and
  numba_ta gives what TensorFlow gives.

The tests after them check what TensorFlow cannot show: a list of resources holds any
object given to it, by reference.
"""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest

from numba_ta import errors, gradients
from numba_ta import raw_ops as R
from numba_ta.tensor_list.store import RESOURCE, TensorListHandle, store_of

_PREFIX = re.compile(r"^\{\{function_node [^}]*\}\}\s*", re.S)
_SUFFIX = re.compile(r"\s*\[Op:([A-Za-z0-9_]+)\]( name: .*)?$", re.S)
_DTYPE = re.compile(r"Saw: (\w+) vs\. uint16")
# TF prints the attributes of "No OpKernel was registered ..." in no fixed order (numba_ta: sorted)
_ATTRS = re.compile(r"(with these attrs: \[)([^\]]*)\]")


class Opaque:
    """A graph runner's own resource object (a variable-like object): opaque to numba_ta."""

    def __init__(self, tag=0):
        self.tag = tag

    def __eq__(self, other):
        return type(other) is Opaque and other.tag == self.tag

    __hash__ = object.__hash__


# ----------------------------------------------------------------------------------------- backends
class _Backend:
    """What a scenario needs of a backend; the observation texts are made the same way for both."""

    raw = R
    RES: object = "resource"
    VAR: object = "variant"
    F32: object = np.float32
    U16: object = np.uint16
    I32: object = np.int32
    I64: object = np.int64
    errors: tuple = (errors.OpError,)

    def res(self):
        return R.TensorArrayV3(size=1, dtype=np.float32).handle

    def res_vec(self, n):
        out = np.empty(n, object)
        out[:] = [self.res() for _ in range(n)]
        return out

    def lists(self, *hs):
        out = np.empty(len(hs), object)
        out[:] = hs
        return out

    def s0(self):
        return np.zeros(0, np.int32)

    def i64(self, x):
        return np.asarray(x, np.int64)

    def zeros_like(self, h):
        return gradients.tensor_list_zeros_like(h)

    def add_n(self, *hs):
        return gradients.tensor_list_add_n(list(hs))

    def is_list(self, x):
        return isinstance(x, TensorListHandle)

    def is_lists(self, x):
        return isinstance(x, np.ndarray) and x.dtype == object

    def unstack(self, x):
        return list(x)

    def message(self, e):
        return type(e).__name__, e.message, e.op

    # ------------------------------------------------------------------ observations
    def dtype_of(self, h):
        try:
            self.raw.TensorListConcatLists(input_a=h, input_b=h, element_dtype=self.U16)
        except self.errors as e:
            return _DTYPE.search(self.message(e)[1]).group(1)
        return "uint16"

    def describe(self, h):
        dt = self.dtype_of(h)
        n = int(self.raw.TensorListLength(input_handle=h))
        es = np.asarray(self.raw.TensorListElementShape(input_handle=h, shape_type=self.I32)).tolist()
        es = "<unknown>" if es == -1 else "[" + ",".join("?" if d == -1 else str(d) for d in es) + "]"
        text = f"List({dt}, {es}, {n}"
        if dt == "resource":
            try:
                self.zeros_like(h)
                text += ", none set"
            except self.errors:
                text += ", some set"
        return text + ")"

    def obs(self, fn):
        try:
            x = fn()
        except self.errors as e:
            cls, m, op = self.message(e)
            return f"{cls}: {m.splitlines()[0] if m else m} [Op:{op}]"
        if self.is_list(x):
            return self.describe(x)
        if self.is_lists(x):
            return "[" + "; ".join(self.describe(h) for h in self.unstack(x)) + "]"
        return repr(np.asarray(x).tolist())


class _TF(_Backend):
    def __init__(self, tf):
        self.tf = tf
        self.raw = tf.raw_ops
        self.RES, self.VAR, self.F32, self.U16 = tf.resource, tf.variant, tf.float32, tf.uint16
        self.I32, self.I64 = tf.int32, tf.int64
        self.errors = (tf.errors.OpError,)
        self._keep = []  # the variables whose handles are in use

    def res(self):
        v = self.tf.Variable(1.0)
        self._keep.append(v)
        return v.handle

    def res_vec(self, n):
        return self.tf.stack([self.res() for _ in range(n)])

    def lists(self, *hs):
        return self.tf.stack(list(hs))

    def s0(self):
        return self.tf.zeros([0], self.tf.int32)

    def i64(self, x):
        return self.tf.constant(x, self.tf.int64)

    def zeros_like(self, h):
        return self.raw.ZerosLike(x=h)

    def add_n(self, *hs):
        return self.raw.AddN(inputs=list(hs))

    def is_list(self, x):
        return isinstance(x, self.tf.Tensor) and x.dtype == self.tf.variant and x.shape.rank == 0

    def is_lists(self, x):
        return isinstance(x, self.tf.Tensor) and x.dtype == self.tf.variant

    def unstack(self, x):
        return [x[i] for i in range(x.shape[0])]

    def message(self, e):
        m = _PREFIX.sub("", e.message)
        op = _SUFFIX.search(m)
        m = _ATTRS.sub(lambda g: g.group(1) + ", ".join(sorted(g.group(2).split(", "))) + "]", _SUFFIX.sub("", m))
        return type(e).__name__, m, op.group(1) if op else None


class _NumbaTA(_Backend):
    """numba_ta: the defaults of :class:`_Backend`."""


# ----------------------------------------------------------------------------------------- scenarios
def _reserve(B, es=-1, n=3, dt=None):
    return B.raw.TensorListReserve(element_shape=es, num_elements=n, element_dtype=B.RES if dt is None else dt)


def _set(B, h, i, v, rz=False):
    return B.raw.TensorListSetItem(input_handle=h, index=i, item=v, resize_if_index_out_of_bounds=rz)


def sc_create(B):
    raw = B.raw
    return [
        lambda: raw.EmptyTensorList(element_shape=-1, max_num_elements=-1, element_dtype=B.RES),
        lambda: raw.EmptyTensorList(element_shape=-1, max_num_elements=-1, element_dtype=20),
        lambda: raw.EmptyTensorList(element_shape=[2, -1], max_num_elements=4, element_dtype="resource"),
        lambda: _reserve(B),
        lambda: _reserve(B, [2], 2),
        lambda: _reserve(B, B.s0(), 2),
        lambda: raw.TensorListElementShape(input_handle=_reserve(B, [2, -1], 2), shape_type=B.I64),
        lambda: raw.TensorListLength(input_handle=_reserve(B, -1, 4)),
        lambda: raw.TensorListReserve(element_shape=-1, num_elements=-1, element_dtype=B.RES),
    ]


def sc_setitem(B):
    r, fl, vl = _reserve(B), _reserve(B, dt=B.F32), _reserve(B, dt=B.VAR)
    return [
        lambda: _set(B, r, 1, B.res()),
        lambda: r,  # the input is unchanged
        lambda: _set(B, r, 1, 1.0),
        lambda: _set(B, r, 1, fl),
        lambda: _set(B, fl, 1, B.res()),
        lambda: _set(B, vl, 1, B.res()),
        lambda: _set(B, _reserve(B, [2], 2), 1, B.res()),
        lambda: _set(B, r, 5, B.res()),
        lambda: _set(B, r, 5, B.res(), rz=True),
        lambda: _set(B, r, 0, B.res_vec(2)),
        lambda: _set(B, _reserve(B, [2], 2), 0, B.res_vec(2)),
    ]


def sc_pushback(B):
    raw = B.raw
    e1 = raw.EmptyTensorList(element_shape=-1, max_num_elements=1, element_dtype=B.RES)
    p = raw.TensorListPushBack(input_handle=e1, tensor=B.res())
    fl, vl = _reserve(B, dt=B.F32), _reserve(B, dt=B.VAR)
    return [
        lambda: p,
        lambda: raw.TensorListPushBack(input_handle=p, tensor=B.res()),
        lambda: raw.TensorListPushBack(input_handle=e1, tensor=1.0),
        lambda: raw.TensorListPushBack(input_handle=_reserve(B, [2], 2), tensor=B.res()),
        lambda: raw.TensorListPushBack(input_handle=fl, tensor=B.res()),
        lambda: raw.TensorListPushBack(input_handle=vl, tensor=B.res()),
        lambda: raw.TensorListPushBack(input_handle=_reserve(B), tensor=fl),
    ]


def sc_no_kernel_for_element_dtype(B):
    raw = B.raw
    s = _set(B, _reserve(B), 1, B.res())
    fl = _reserve(B, dt=B.F32)
    ld = B.i64(np.zeros(0, np.int64))
    return [
        lambda: raw.TensorListGetItem(input_handle=s, index=1, element_shape=-1, element_dtype=B.RES),
        lambda: raw.TensorListGetItem(input_handle=s, index=0, element_shape=-1, element_dtype=B.RES),
        lambda: raw.TensorListGetItem(input_handle=s, index=9, element_shape=-1, element_dtype=B.RES),
        lambda: raw.TensorListGetItem(input_handle=s, index=1, element_shape=B.i64(-1), element_dtype=B.RES),
        lambda: raw.TensorListGetItem(input_handle=fl, index=0, element_shape=-1, element_dtype=B.RES),
        lambda: raw.TensorListGetItem(input_handle=s, index=1, element_shape=-1, element_dtype=B.VAR),
        lambda: raw.TensorListGetItem(input_handle=s, index=1, element_shape=-1, element_dtype=B.F32),
        lambda: raw.TensorListPopBack(input_handle=s, element_shape=-1, element_dtype=B.RES),
        lambda: raw.TensorListPopBack(input_handle=_reserve(B, n=0), element_shape=-1, element_dtype=B.RES),
        lambda: raw.TensorListStack(input_handle=s, element_shape=-1, element_dtype=B.RES),
        lambda: raw.TensorListStack(input_handle=fl, element_shape=-1, element_dtype=B.RES, num_elements=3),
        lambda: raw.TensorListGather(input_handle=s, indices=[1], element_shape=-1, element_dtype=B.RES),
        lambda: raw.TensorListConcat(input_handle=s, element_dtype=B.RES),
        lambda: raw.TensorListConcat(input_handle=fl, element_dtype=B.RES, element_shape=[]),
        lambda: raw.TensorListConcat(input_handle=fl, element_dtype=B.RES, element_shape=[-1, 3]),
        lambda: raw.TensorListConcatV2(input_handle=s, element_shape=-1, leading_dims=ld, element_dtype=B.RES),
        lambda: raw.TensorListConcatV2(
            input_handle=fl, element_shape=B.i64([-1]), leading_dims=ld, element_dtype=B.RES
        ),
    ]


def sc_resource_tensors(B):
    raw = B.raw
    r, fl = _reserve(B), _reserve(B, dt=B.F32)
    return [
        lambda: raw.TensorListFromTensor(tensor=B.res_vec(2), element_shape=-1),
        lambda: raw.TensorListScatter(tensor=B.res_vec(2), indices=[0, 1], element_shape=-1),
        lambda: raw.TensorListScatterV2(tensor=B.res_vec(2), indices=[0, 1], element_shape=-1, num_elements=3),
        lambda: raw.TensorListSplit(tensor=B.res_vec(2), element_shape=-1, lengths=B.i64([1, 1])),
        lambda: raw.TensorListScatterIntoExistingList(input_handle=r, tensor=B.res_vec(1), indices=[0]),
        lambda: raw.TensorListScatterIntoExistingList(input_handle=fl, tensor=B.res_vec(1), indices=[0]),
        lambda: raw.TensorListScatterIntoExistingList(input_handle=r, tensor=[1.0], indices=[0]),
        lambda: raw.TensorListScatterIntoExistingList(input_handle=r, tensor=B.lists(fl), indices=[0]),
        lambda: raw.TensorListPushBackBatch(input_handles=B.lists(r, r), tensor=B.res_vec(2)),
        lambda: raw.TensorListPushBackBatch(input_handles=B.lists(fl), tensor=B.res_vec(1)),
        lambda: raw.TensorListPushBackBatch(input_handles=B.lists(r, r), tensor=[1.0, 2.0]),
    ]


def sc_resize_and_concat_lists(B):
    raw = B.raw
    s = _set(B, _reserve(B), 1, B.res())
    x = _set(B, _reserve(B), 5, B.res(), rz=True)
    return [
        lambda: raw.TensorListResize(input_handle=s, size=1),
        lambda: raw.TensorListResize(input_handle=s, size=5),
        lambda: raw.TensorListResize(input_handle=raw.TensorListResize(input_handle=s, size=1), size=4),
        lambda: raw.TensorListConcatLists(input_a=s, input_b=x, element_dtype=B.RES),
        lambda: raw.TensorListConcatLists(input_a=_reserve(B), input_b=_reserve(B), element_dtype=20),
        lambda: raw.TensorListConcatLists(input_a=B.lists(s, x), input_b=B.lists(x, s), element_dtype=B.RES),
        lambda: raw.TensorListConcatLists(input_a=s, input_b=x, element_dtype=B.VAR),
        lambda: raw.TensorListConcatLists(input_a=_reserve(B, dt=B.F32), input_b=s, element_dtype=B.RES),
        lambda: raw.TensorListConcatLists(input_a=s, input_b=_reserve(B, dt=B.VAR), element_dtype=B.RES),
        lambda: raw.TensorListConcatLists(input_a=s, input_b=_reserve(B, [2], 2), element_dtype=B.RES),
    ]


def sc_zeros_like_and_add_n(B):
    r = _reserve(B, n=2)
    a = _set(B, r, 0, B.res())
    b = _set(B, r, 0, B.res_vec(2))
    c = _set(B, r, 1, B.res())
    outer = _set(B, _reserve(B, B.s0(), 1, B.VAR), 0, a)
    return [
        lambda: B.zeros_like(a),
        lambda: B.zeros_like(r),
        lambda: B.zeros_like(outer),
        lambda: B.add_n(a, a),
        lambda: B.add_n(a, b),
        lambda: B.add_n(a, _reserve(B, n=2, dt=B.VAR)),
        lambda: B.add_n(a, _reserve(B, n=3)),
        lambda: B.add_n(a, c),
        lambda: B.add_n(r, r),
        lambda: B.add_n(r, a),
    ]


SCENARIOS = {f.__name__[3:]: f for f in [
    sc_create, sc_setitem, sc_pushback, sc_no_kernel_for_element_dtype, sc_resource_tensors,
    sc_resize_and_concat_lists, sc_zeros_like_and_add_n,
]}  # fmt: skip

_IA = "InvalidArgumentError: "
_NF = "NotFoundError: Could not find device for node: "


def _nf(op, attrs):
    return f"{_NF}{{{{node {op}}}}} = {op}[{attrs}] [Op:{op}]"


def _nk(op, attrs):
    return (
        f"{_IA}No OpKernel was registered to support Op '{op}' used by {{{{node {op}}}}} with these attrs: "
        f"[{attrs}] [Op:{op}]"
    )


# What TensorFlow 2.21 gives (test_scenario_against_tf checks these are still its observations)
EXPECTED = {
    "create": [
        "List(resource, <unknown>, 0, none set)",
        "List(resource, <unknown>, 0, none set)",
        "List(resource, [2,?], 0, none set)",
        "List(resource, <unknown>, 3, none set)",
        "List(resource, [2], 2, none set)",
        "List(resource, [], 2, none set)",
        "[2, -1]",
        "4",
        _IA + "The num_elements to reserve must be a non negative number, but got -1 [Op:TensorListReserve]",
    ],
    "setitem": [
        "List(resource, <unknown>, 3, some set)",
        "List(resource, <unknown>, 3, none set)",
        _IA + "Invalid data types; op elements float but list elements resource [Op:TensorListSetItem]",
        _IA + "Invalid data types; op elements variant but list elements resource [Op:TensorListSetItem]",
        _IA + "Invalid data types; op elements resource but list elements float [Op:TensorListSetItem]",
        _IA + "Invalid data types; op elements resource but list elements variant [Op:TensorListSetItem]",
        _IA + "Tried to set a tensor with incompatible shape at a list index. Item element shape: [] list shape: "
        "[2] [Op:TensorListSetItem]",
        _IA + "Trying to modify element 5 in a list with 3 elements. [Op:TensorListSetItem]",
        "List(resource, <unknown>, 6, some set)",
        "List(resource, <unknown>, 3, some set)",
        "List(resource, [2], 2, some set)",
    ],
    "pushback": [
        "List(resource, <unknown>, 1, some set)",
        _IA + "Tried to push item into a full list list size: 1 max_num_elements: 1 [Op:TensorListPushBack]",
        _IA + "Invalid data types; op elements float but list elements resource [Op:TensorListPushBack]",
        _IA + "Tried to append a tensor with incompatible shape to a list. Op element shape: [] list shape: [2] "
        "[Op:TensorListPushBack]",
        _IA + "Invalid data types; op elements resource but list elements float [Op:TensorListPushBack]",
        _IA + "Invalid data types; op elements resource but list elements variant [Op:TensorListPushBack]",
        _IA + "Invalid data types; op elements variant but list elements resource [Op:TensorListPushBack]",
    ],
    "no_kernel_for_element_dtype": [
        _nf("TensorListGetItem", "Tshape=DT_INT32, element_dtype=DT_RESOURCE"),
        _nf("TensorListGetItem", "Tshape=DT_INT32, element_dtype=DT_RESOURCE"),
        _nf("TensorListGetItem", "Tshape=DT_INT32, element_dtype=DT_RESOURCE"),
        _nf("TensorListGetItem", "Tshape=DT_INT64, element_dtype=DT_RESOURCE"),
        _nf("TensorListGetItem", "Tshape=DT_INT32, element_dtype=DT_RESOURCE"),
        _IA + "Invalid data types; op elements variant but list elements resource [Op:TensorListGetItem]",
        _IA + "Invalid data types; op elements float but list elements resource [Op:TensorListGetItem]",
        _nf("TensorListPopBack", "element_dtype=DT_RESOURCE"),
        _nf("TensorListPopBack", "element_dtype=DT_RESOURCE"),
        _nf("TensorListStack", "element_dtype=DT_RESOURCE, num_elements=-1"),
        _nf("TensorListStack", "element_dtype=DT_RESOURCE, num_elements=3"),
        _nf("TensorListGather", "element_dtype=DT_RESOURCE"),
        _nf("TensorListConcat", "element_dtype=DT_RESOURCE, element_shape=<unknown>"),
        _nf("TensorListConcat", "element_dtype=DT_RESOURCE, element_shape=[]"),
        _nf("TensorListConcat", "element_dtype=DT_RESOURCE, element_shape=[?,3]"),
        _nf("TensorListConcatV2", "element_dtype=DT_RESOURCE, shape_type=DT_INT32"),
        _nf("TensorListConcatV2", "element_dtype=DT_RESOURCE, shape_type=DT_INT64"),
    ],
    "resource_tensors": [
        _nk("TensorListFromTensor", "element_dtype=DT_RESOURCE, shape_type=DT_INT32"),
        _nk("TensorListScatter", "element_dtype=DT_RESOURCE, shape_type=DT_INT32"),
        _nk("TensorListScatterV2", "element_dtype=DT_RESOURCE, shape_type=DT_INT32"),
        _nk("TensorListSplit", "element_dtype=DT_RESOURCE, shape_type=DT_INT32"),
        _nk("TensorListScatterIntoExistingList", "element_dtype=DT_RESOURCE"),
        _nk("TensorListScatterIntoExistingList", "element_dtype=DT_RESOURCE"),
        _IA + "Invalid data types; input tensor type: float list element_type: resource "
        "[Op:TensorListScatterIntoExistingList]",
        _IA + "Invalid data types; input tensor type: variant list element_type: resource "
        "[Op:TensorListScatterIntoExistingList]",
        _nk("TensorListPushBackBatch", "element_dtype=DT_RESOURCE"),
        _nk("TensorListPushBackBatch", "element_dtype=DT_RESOURCE"),
        _IA + "Invalid data type at index 0; op elements float but list elements resource "
        "[Op:TensorListPushBackBatch]",
    ],
    "resize_and_concat_lists": [
        "List(resource, <unknown>, 1, none set)",
        "List(resource, <unknown>, 5, some set)",
        "List(resource, <unknown>, 4, none set)",
        "List(resource, <unknown>, 9, some set)",
        "List(resource, <unknown>, 6, none set)",
        "[List(resource, <unknown>, 9, some set); List(resource, <unknown>, 9, some set)]",
        _IA + "input_a[0].dtype != element_dtype.  Saw: resource vs. variant [Op:TensorListConcatLists]",
        _IA + "input_a[0].dtype != element_dtype.  Saw: float vs. resource [Op:TensorListConcatLists]",
        _IA + "input_b[0].dtype != element_dtype.  Saw: variant vs. resource [Op:TensorListConcatLists]",
        _IA + "input_a and input_b TensorList element shapes are not identical at index 0.  Saw <unknown> vs. [2] "
        "[Op:TensorListConcatLists]",
    ],
    "zeros_like_and_add_n": [
        _IA + "Trying to compute zeros_like for unsupported dtype resource [Op:ZerosLike]",
        "List(resource, <unknown>, 2, none set)",
        _IA + "Trying to compute zeros_like for unsupported dtype resource [Op:ZerosLike]",
        _IA + "Trying to add unsupported dtype 20 [Op:AddN]",
        _IA + "Trying to add two tensors with incompatible element shapes. One is [] and the other is [2] [Op:AddN]",
        _IA + "Trying to add two lists of tensors of different dtypes. One is resource and the other is variant "
        "[Op:AddN]",
        _IA + "Trying to add two lists of tensors with different lengths. One is 2 and the other is 3 [Op:AddN]",
        "List(resource, <unknown>, 2, some set)",
        "List(resource, <unknown>, 2, none set)",
        "List(resource, <unknown>, 2, some set)",
    ],
}


def _run(backend, name):
    return [backend.obs(step) for step in SCENARIOS[name](backend)]


@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario(name):
    assert _run(_NumbaTA(), name) == EXPECTED[name]


@pytest.mark.oracle
@pytest.mark.parametrize("name", sorted(SCENARIOS))
def test_scenario_against_tf(tf, name):
    got_tf = _run(_TF(tf), name)
    assert got_tf == EXPECTED[name]  # TensorFlow still does what EXPECTED says
    assert _run(_NumbaTA(), name) == got_tf


@pytest.mark.oracle
def test_pfor_makes_a_list_of_resources(tf):
    # the case: vectorized_map of a while loop capturing a variable makes a
    # TensorListReserve of element_dtype resource (DataType 20), which numba_ta now makes too
    v = tf.Variable(2.0)

    def f(x):
        def body(i, acc):
            return i + 1, acc * v

        return tf.while_loop(lambda i, a: i < 3, body, [tf.constant(0), x])[1]

    g = tf.function(lambda xs: tf.vectorized_map(f, xs)).get_concrete_function(tf.TensorSpec([4], tf.float32))
    graph = g.graph.as_graph_def()
    reserves = [
        n.attr["element_dtype"].type
        for fn in graph.library.function
        for n in fn.node_def
        if n.op == "TensorListReserve"
    ]
    assert 20 in reserves
    h = R.TensorListReserve(element_shape=-1, num_elements=4, element_dtype=20)
    h = R.TensorListSetItem(input_handle=h, index=0, item=Opaque())
    assert int(R.TensorListLength(input_handle=h)) == 4


# ----------------------------------------------------------------------------------------- numba_ta's side
@pytest.mark.parametrize("spelling", ["resource", "DT_RESOURCE", 20, np.int64(20), RESOURCE])
def test_every_spelling_of_resource_makes_a_list_of_resources(spelling):
    h = R.EmptyTensorList(element_shape=-1, max_num_elements=-1, element_dtype=spelling)
    assert h.element_dtype == RESOURCE and h.element_dtype != np.dtype(object)
    assert repr(h) == "TensorListHandle(resource, <unknown>, 0 elements)"


def test_a_list_of_resources_holds_any_object_by_reference():
    a, b, c = Opaque(1), Opaque(2), R.TensorArrayV3(size=1, dtype=np.float32).handle
    h = R.TensorListReserve(element_shape=-1, num_elements=2, element_dtype="resource")
    h1 = R.TensorListSetItem(input_handle=h, index=0, item=a)
    h2 = R.TensorListPushBack(input_handle=h1, tensor=b)
    h3 = R.TensorListSetItem(input_handle=h2, index=1, item=c)
    vec = np.empty(2, object)
    vec[:] = [a, b]
    h4 = R.TensorListSetItem(input_handle=h3, index=3, item=vec, resize_if_index_out_of_bounds=True)
    items = h4._store.items
    assert items[0] is a and items[1] is c and items[2] is b and items[3] is vec
    # the inputs are unchanged (lists are values)
    assert len(h) == 2 and len(h1) == 2 and len(h2) == 3 and len(h3) == 3 and len(h4) == 4
    assert store_of(h2).items[0] is a and store_of(h2).items[2] is b and not store_of(h2).is_set(1)
    # Resize and ConcatLists keep the objects themselves
    cut = R.TensorListResize(input_handle=h4, size=2)
    both = R.TensorListConcatLists(input_a=cut, input_b=cut, element_dtype=20)
    assert [x is y for x, y in zip(both._store.items, [a, c, a, c], strict=True)] == [True] * 4
    # AddN of lists set at different positions keeps each set object
    r = R.TensorListReserve(element_shape=-1, num_elements=2, element_dtype="resource")
    s = gradients.tensor_list_add(R.TensorListSetItem(input_handle=r, index=0, item=a),
                                  R.TensorListSetItem(input_handle=r, index=1, item=b))
    assert s._store.items[0] is a and s._store.items[1] is b and s.max_num_elements == -1


def test_a_list_of_resources_reads_its_versions_back():
    # an old version (a stale handle) materializes with the objects it held
    a, b = Opaque(1), Opaque(2)
    h0 = R.TensorListReserve(element_shape=-1, num_elements=1, element_dtype="resource")
    h1 = R.TensorListSetItem(input_handle=h0, index=0, item=a)
    h2 = R.TensorListSetItem(input_handle=h1, index=0, item=b)
    h3 = R.TensorListPushBack(input_handle=h2, tensor=a)
    assert len(h1) == 1 and len(h3) == 2
    assert store_of(h1).items == [a] and store_of(h1).dtype == RESOURCE
    assert store_of(h3).items[0] is b and store_of(h3).items[1] is a
    assert store_of(h0).items[0] is not a  # unset


def test_a_failing_op_changes_nothing():
    a = Opaque(1)
    h = R.TensorListReserve(element_shape=[], num_elements=2, element_dtype="resource")
    h = R.TensorListSetItem(input_handle=h, index=0, item=a)
    for bad in (
        lambda: R.TensorListSetItem(input_handle=h, index=1, item=np.float32(1)),
        lambda: R.TensorListSetItem(input_handle=h, index=5, item=a),
        lambda: R.TensorListPushBack(input_handle=h, tensor=np.array([a, a], object)),
        lambda: R.TensorListScatterIntoExistingList(input_handle=h, tensor=np.array([a], object), indices=[1]),
        lambda: R.TensorListPushBackBatch(input_handles=[h], tensor=np.array([a], object)),
    ):
        with pytest.raises(errors.InvalidArgumentError):
            bad()
        assert len(h) == 2 and h._store.items[0] is a and not h._store.is_set(1)
    with pytest.raises(errors.InvalidArgumentError, match=r"^No OpKernel .*'TensorListPushBackBatch'"):
        R.TensorListPushBackBatch(input_handles=[h], tensor=np.array([a], object))


def test_opaque_objects_are_variants_for_other_lists_and_handles_are_resources():
    # a variant list still takes objects (unchanged); a TensorArray handle, numba_ta's
    # resource tensor, is refused by it as TensorFlow refuses a resource there
    vl = R.TensorListReserve(element_shape=-1, num_elements=1, element_dtype="variant")
    assert R.TensorListSetItem(input_handle=vl, index=0, item=Opaque())._store.items[0] == Opaque()
    ta = R.TensorArrayV3(size=1, dtype=np.float32).handle
    with pytest.raises(errors.InvalidArgumentError, match="op elements resource but list elements variant"):
        R.TensorListSetItem(input_handle=vl, index=0, item=ta)
    fl = R.TensorListReserve(element_shape=-1, num_elements=1, element_dtype=np.float32)
    with pytest.raises(errors.InvalidArgumentError, match="op elements variant but list elements float"):
        R.TensorListSetItem(input_handle=fl, index=0, item=Opaque())
    # an object array of opaque objects still makes a list of variants
    objs = np.empty(2, object)
    objs[:] = [Opaque(1), Opaque(2)]
    assert R.TensorListFromTensor(tensor=objs, element_shape=-1).element_dtype == np.dtype(object)
    # and pushes to lists of variants
    ev = R.EmptyTensorList(element_shape=-1, max_num_elements=-1, element_dtype=object)
    out = R.TensorListPushBackBatch(input_handles=[ev, ev], tensor=objs)
    assert [o._store.items[0].tag for o in out] == [1, 2]


def test_a_list_of_resources_pickles_with_its_objects():
    h = R.TensorListReserve(element_shape=[], num_elements=3, element_dtype="resource")
    h = R.TensorListSetItem(input_handle=h, index=1, item=Opaque(7))
    back = pickle.loads(pickle.dumps(h))
    assert back.element_dtype == RESOURCE and back.element_shape == () and len(back) == 3
    assert back._store.items[1] == Opaque(7) and not back._store.is_set(0)
    assert repr(back) == "TensorListHandle(resource, [], 3 elements)"
