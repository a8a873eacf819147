"""The gradient rules of the TensorList ops (``numba_ta.tensor_list.grads``) against TensorFlow.

Three kinds of tests:

* without TensorFlow: every rule has one result per forward input and gives ``None`` for
  every input when its upstream gradients are ``None``; a few hand-computed values;
* oracle, rule by rule: TF's registered gradient function (``list_ops.py``) is called in
  eager mode on a stand-in ``op`` (its ``type``, ``inputs``, ``outputs``, ``get_attr``)
  whose tensors come from running the forward op with ``tf.raw_ops``; numba_ta's rule gets
  the same values from ``numba_ta.raw_ops``.  Results (lists described element by element,
  tensors, ``None``) and errors (class and message) must agree;
* oracle, worked examples: a forward computation under ``tf.GradientTape`` against the
  same forward ops in numba_ta followed by the rules in reverse order, chained by hand
  (list gradients of a list used twice summed with ``tensor_list_add``; outputs that are
  not used get what TF's eager tape passes: ``ZerosLike``, or ``None`` where the rule makes
  the same value from it).
"""

from __future__ import annotations

import os
import re
import types

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numpy as np
import pytest

import numba_ta
from numba_ta import errors, gradients
from numba_ta import raw_ops as nb_ops
from numba_ta.tensor_list import grads as G

try:
    import tensorflow as tf
    from tensorflow.python.framework import ops as tf_ops
except ImportError:  # pragma: no cover - tensorflow is the oracle extra
    tf = None

oracle = pytest.mark.oracle
needs_tf = pytest.mark.skipif(tf is None, reason="needs tensorflow (the oracle extra)")

F32 = np.float32

# op -> (rule, number of forward inputs, indices of the forward outputs the rule takes)
RULES = {
    "TensorListPushBack": (G.tensor_list_push_back_grad, 2, ()),
    "TensorListPopBack": (G.tensor_list_pop_back_grad, 2, (0, 1)),
    "TensorListStack": (G.tensor_list_stack_grad, 2, ()),
    "TensorListConcat": (G.tensor_list_concat_grad, 1, (1,)),
    "TensorListConcatV2": (G.tensor_list_concat_v2_grad, 3, (1,)),
    "TensorListSplit": (G.tensor_list_split_grad, 3, ()),
    "TensorListFromTensor": (G.tensor_list_from_tensor_grad, 2, (0,)),
    "TensorListGetItem": (G.tensor_list_get_item_grad, 3, ()),
    "TensorListSetItem": (G.tensor_list_set_item_grad, 3, ()),
    "TensorListResize": (G.tensor_list_resize_grad, 2, ()),
    "TensorListGather": (G.tensor_list_gather_grad, 3, ()),
    "TensorListScatter": (G.tensor_list_scatter_grad, 3, ()),
    "TensorListScatterV2": (G.tensor_list_scatter_v2_grad, 4, ()),
    "TensorListScatterIntoExistingList": (G.tensor_list_scatter_into_existing_list_grad, 3, ()),
}
NOT_DIFFERENTIABLE = {"TensorListConcatLists", "TensorListElementShape", "TensorListLength", "TensorListPushBackBatch"}
NO_GRADIENT = {"EmptyTensorList", "TensorListReserve"}
N_UPSTREAM = {"TensorListPopBack": 2, "TensorListConcat": 2, "TensorListConcatV2": 2}


def _rule_name(op):
    return (
        "tensor_list_" + re.sub(r"(?<!^)(?=[A-Z])", "_", op[len("TensorList") :]).lower().replace("v_2", "v2") + "_grad"
    )


def _call(op, inputs, outputs, grads, **attrs):
    rule, _, needed = RULES[op]
    return rule(*inputs, *[outputs[i] for i in needed], *grads, **attrs)


# ========================================================================== without TF
def test_names_follow_the_ops():
    assert sorted(G.__all__) == sorted(_rule_name(op) for op in RULES)
    for op, (rule, _, _) in RULES.items():
        assert rule.__name__ == _rule_name(op)
        assert f"Mirrors the gradient TF registers for {op} (list_ops.py)" in " ".join(rule.__doc__.split())


@pytest.mark.parametrize("op", sorted(set(RULES) - {"TensorListFromTensor"}))
def test_none_upstream_gives_none_for_every_input(op):
    # FromTensor's rule takes a None list gradient as TF's does (test_from_tensor_none_...)
    _, n_inputs, needed = RULES[op]
    out = _call(op, [None] * n_inputs, [None] * 2, [None] * N_UPSTREAM.get(op, 1))
    assert out == (None,) * n_inputs


def test_concat_returns_a_one_tuple():
    h = nb_ops.TensorListSplit(tensor=np.arange(3.0), element_shape=-1, lengths=[1, 2])
    t, lengths = nb_ops.TensorListConcat(input_handle=h, element_dtype=np.float64)
    (dl,) = G.tensor_list_concat_grad(h, lengths, 2 * t)
    assert len(dl) == 2


def test_push_back_then_pop_back_by_hand():
    # l2 = push(push(empty, a), b); loss = sum(stack(l2) * w): da = w[0], db = w[1]
    a, b = np.array([1.0, 2.0], F32), np.array([3.0, 4.0], F32)
    w = np.array([[1.0, 2.0], [3.0, 4.0]], F32)
    l0 = nb_ops.EmptyTensorList(element_shape=[2], max_num_elements=-1, element_dtype=F32)
    l1 = nb_ops.TensorListPushBack(input_handle=l0, tensor=a)
    l2 = nb_ops.TensorListPushBack(input_handle=l1, tensor=b)
    dl2, _ = G.tensor_list_stack_grad(l2, -1, w)
    dl1, db = G.tensor_list_push_back_grad(l1, b, dl2)
    dl0, da = G.tensor_list_push_back_grad(l0, a, dl1)
    np.testing.assert_array_equal(da, w[0])
    np.testing.assert_array_equal(db, w[1])
    assert len(dl0) == 0 and len(dl2) == 2  # the upstream list is unchanged


def test_pop_back_none_list_gradient_is_an_empty_list_of_the_element_dtype():
    l0 = nb_ops.TensorListReserve(element_shape=[-1, 3], num_elements=1, element_dtype=F32)
    l1, e = nb_ops.TensorListPopBack(input_handle=l0, element_shape=[2, 3], element_dtype=F32)
    dl0, none = G.tensor_list_pop_back_grad(l0, [2, 3], l1, e, None, np.ones((2, 3), np.float64))
    assert none is None
    assert dl0.element_dtype == np.float64 and dl0.element_shape == (None, 3) and len(dl0) == 1


def test_from_tensor_none_list_gradient_raises_like_tf():
    x = np.ones((3, 2), F32)
    h = nb_ops.TensorListFromTensor(tensor=x, element_shape=-1)
    with pytest.raises(errors.InvalidArgumentError, match="expected a list with 3 elements but got a list with 0"):
        G.tensor_list_from_tensor_grad(x, -1, h, None)
    x0 = np.ones((0, 2), F32)
    l0 = nb_ops.TensorListFromTensor(tensor=x0, element_shape=-1)
    dx, _ = G.tensor_list_from_tensor_grad(x0, -1, l0, None)
    assert dx.shape == (0, 2) and dx.dtype == F32


def test_gather_grad_of_repeated_index_keeps_the_last():
    h = nb_ops.TensorListFromTensor(tensor=np.zeros((2, 2), F32), element_shape=-1)
    dl, _, _ = G.tensor_list_gather_grad(h, [1, 1], -1, np.array([[1, 1], [2, 2]], F32))
    out = nb_ops.TensorListStack(input_handle=dl, element_shape=[2], element_dtype=F32)
    np.testing.assert_array_equal(out, [[0, 0], [2, 2]])


def test_set_item_grad_of_a_list_of_lists_zeros_the_inner_list():
    inner = nb_ops.TensorListFromTensor(tensor=np.array([1.0, 2.0]), element_shape=-1)
    outer = nb_ops.TensorListReserve(element_shape=-1, num_elements=2, element_dtype=object)
    douter = nb_ops.TensorListSetItem(input_handle=outer, index=1, item=gradients.tensor_list_zeros_like(inner))
    douter = nb_ops.TensorListSetItem(input_handle=douter, index=0, item=inner)
    dl, _, ditem = G.tensor_list_set_item_grad(outer, 0, inner, douter)
    assert ditem is inner
    z = nb_ops.TensorListGetItem(input_handle=dl, index=0, element_shape=-1, element_dtype=object)
    np.testing.assert_array_equal(
        nb_ops.TensorListStack(input_handle=z, element_shape=-1, element_dtype=np.float64), [0, 0]
    )


# ========================================================================== TF backends
def _tf_backend():
    return types.SimpleNamespace(
        name="tf",
        R=tf.raw_ops,
        c=lambda a, dtype=None: tf.constant(np.asarray(a, dtype)),
        variant=tf.variant,
        is_variant=lambda v: isinstance(v, tf.Tensor) and v.dtype == tf.variant and v.shape.rank == 0,
        errors=(tf.errors.OpError, ValueError, TypeError),
    )


def _nb_backend():
    return types.SimpleNamespace(
        name="numba_ta",
        R=nb_ops,
        c=lambda a, dtype=None: np.asarray(a, dtype),
        variant=object,
        is_variant=lambda v: isinstance(v, (numba_ta.TensorListHandle, type(numba_ta.VARIANT_ZERO))),
        errors=(errors.OpError, ValueError, TypeError),
    )


def _message(e):
    text = str(e.message if hasattr(e, "message") else e)
    text = re.sub(r"^\{\{function_node [^}]*\}\}\s*", "", text)
    return re.sub(r"\s*\[Op:\w+\].*$", "", text, flags=re.S)


def _describe(B, v, dtype):
    """A backend-neutral description: None, an array, or a list element by element.

    ``dtype`` is the list's element dtype; the elements of a list of lists are described as
    lists of float32, and a variant that is not a list by the error of ``TensorListLength``.
    """
    if v is None:
        return None
    if not B.is_variant(v):
        return _array(v)
    R = B.R
    try:
        n = int(np.asarray(R.TensorListLength(input_handle=v)))
    except B.errors as e:
        return ("not a list", type(e).__name__, _message(e))
    es = np.asarray(R.TensorListElementShape(input_handle=v, shape_type=np.int32)).tolist()
    items = []
    for i in range(n):
        try:
            item = R.TensorListGetItem(input_handle=v, index=i, element_shape=-1, element_dtype=dtype)
        except B.errors as e:
            items.append(("error", type(e).__name__, _message(e)))
            continue
        items.append(_describe(B, item, np.float32) if B.is_variant(item) else _array(item))
    return ("list", n, es, items)


def _array(v):
    a = np.asarray(v)
    if a.dtype == object:  # the variant zero
        return ("variant", a.shape, str(a))
    return (a.dtype.name, a.shape, a.tolist())


class _FakeOp:
    """The part of ``tf.Operation`` TF's list gradient functions read."""

    def __init__(self, op_type, inputs, outputs, attrs):
        self.type = op_type
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self._attrs = attrs

    def get_attr(self, name):
        return self._attrs[name]


def _run(B, case):
    """Run a case's forward op and its gradient rule on one backend; return the description."""
    c = case(B)
    op = c["op"]
    outputs = c["outputs"]
    outputs = list(outputs) if isinstance(outputs, tuple) else [outputs]
    attrs = c.get("attrs", {})
    try:
        if B.name == "tf":
            tf_attrs = dict(attrs)
            if op == "TensorListPushBack":
                tf_attrs["element_dtype"] = c["inputs"][1].dtype
            if op == "TensorListSetItem":
                tf_attrs.setdefault("resize_if_index_out_of_bounds", False)
            fn = tf_ops._gradient_registry.lookup(op)
            res = fn(_FakeOp(op, c["inputs"], outputs, tf_attrs), *c["grads"])
            res = tuple(res) if isinstance(res, (tuple, list)) else (res,)
        else:
            res = _call(op, c["inputs"], outputs, c["grads"], **attrs)
    except B.errors as e:
        return ("raises", type(e).__name__, _message(e))
    dtypes = c.get("dtypes", [c.get("dtype", F32)] * len(res))
    return [_describe(B, r, B.variant if dt == "variant" else dt) for r, dt in zip(res, dtypes, strict=True)]


# -------------------------------------------------------------------------- rule cases
def _i32(B, v):
    return B.c(v, np.int32)


def _rows(B, shape, start=1.0, dtype=F32):
    return B.c(np.arange(start, start + np.prod(shape)).reshape(shape), dtype)


def _partial_list(B, n, es, sets, dtype=F32):
    """A list of ``n`` elements, element shape ``es``, with ``sets = {index: value}`` set."""
    h = B.R.TensorListReserve(element_shape=_i32(B, es), num_elements=n, element_dtype=dtype)
    for i, v in sets.items():
        h = B.R.TensorListSetItem(input_handle=h, index=i, item=B.c(v, dtype))
    return h


def push_back(B, dlist_kind="full"):
    h = B.R.TensorListFromTensor(tensor=_rows(B, (2, 2)), element_shape=_i32(B, [2]))
    t = B.c([7.0, 8.0], F32)
    out = B.R.TensorListPushBack(input_handle=h, tensor=t)
    if dlist_kind == "full":
        d = B.R.TensorListFromTensor(tensor=_rows(B, (3, 2), 10), element_shape=_i32(B, -1))
    elif dlist_kind == "unset_last":
        d = _partial_list(B, 3, -1, {0: [1.0, 1.0]})
    else:  # an empty gradient list: PopBack's error
        d = B.R.EmptyTensorList(element_shape=_i32(B, -1), max_num_elements=-1, element_dtype=F32)
    return {"op": "TensorListPushBack", "inputs": [h, t], "outputs": out, "grads": [d]}


def push_back_scalar(B):
    h = B.R.EmptyTensorList(element_shape=_i32(B, -1), max_num_elements=-1, element_dtype=np.float64)
    t = B.c(3.0, np.float64)
    out = B.R.TensorListPushBack(input_handle=h, tensor=t)
    d = _partial_list(B, 1, -1, {}, np.float64)
    return {"op": "TensorListPushBack", "inputs": [h, t], "outputs": out, "grads": [d], "dtype": np.float64}


def pop_back(B, dlist=True, delement=True):
    h = B.R.TensorListFromTensor(tensor=_rows(B, (3, 2)), element_shape=_i32(B, [-1]))
    es = _i32(B, -1)
    out = B.R.TensorListPopBack(input_handle=h, element_shape=es, element_dtype=F32)
    d = B.R.TensorListFromTensor(tensor=_rows(B, (2, 2), 10), element_shape=_i32(B, [2])) if dlist else None
    e = B.c([5.0, 6.0], F32) if delement else None
    return {"op": "TensorListPopBack", "inputs": [h, es], "outputs": out, "grads": [d, e]}


def pop_back_none_list_other_dtype(B):
    h = B.R.TensorListReserve(element_shape=_i32(B, [-1, 3]), num_elements=1, element_dtype=F32)
    es = _i32(B, [2, 3])
    out = B.R.TensorListPopBack(input_handle=h, element_shape=es, element_dtype=F32)
    e = B.c(np.ones((2, 3)), np.float64)
    return {"op": "TensorListPopBack", "inputs": [h, es], "outputs": out, "grads": [None, e], "dtype": np.float64}


def stack(B, shape=(3, 2)):
    h = B.R.TensorListFromTensor(tensor=_rows(B, shape), element_shape=_i32(B, -1))
    es = _i32(B, -1)
    out = B.R.TensorListStack(input_handle=h, element_shape=es, element_dtype=F32)
    return {"op": "TensorListStack", "inputs": [h, es], "outputs": out, "grads": [_rows(B, shape, 20)]}


def get_item(B, list_es=(2,), ditem_dtype=F32):
    h = B.R.TensorListFromTensor(tensor=_rows(B, (3, 2)), element_shape=_i32(B, list(list_es)))
    i, es = _i32(B, 1), _i32(B, -1)
    out = B.R.TensorListGetItem(input_handle=h, index=i, element_shape=es, element_dtype=F32)
    return {
        "op": "TensorListGetItem",
        "inputs": [h, i, es],
        "outputs": out,
        "grads": [B.c([4.0, 5.0], ditem_dtype)],
        "dtype": ditem_dtype,
    }


def set_item(B, resize=False, unset=False, short=False):
    h = B.R.TensorListFromTensor(tensor=_rows(B, (2, 2)), element_shape=_i32(B, -1))
    index = 3 if resize else 1
    i, item = _i32(B, index), B.c([7.0, 8.0], F32)
    out = B.R.TensorListSetItem(input_handle=h, index=i, item=item, resize_if_index_out_of_bounds=resize)
    n = 4 if resize else 1 if short else 2
    sets = {k: [10.0 * k, 10.0 * k + 1] for k in range(n) if not (unset and k == index)}
    d = _partial_list(B, n, -1, sets)
    return {
        "op": "TensorListSetItem",
        "inputs": [h, i, item],
        "outputs": out,
        "grads": [d],
        "attrs": {"resize_if_index_out_of_bounds": resize},
    }


def resize(B, size=2):
    h = B.R.TensorListFromTensor(tensor=_rows(B, (3, 2)), element_shape=_i32(B, [2]))
    s = _i32(B, size)
    out = B.R.TensorListResize(input_handle=h, size=s)
    d = _partial_list(B, size, [2], {0: [1.0, 2.0], size - 1: [3.0, 4.0]})
    return {"op": "TensorListResize", "inputs": [h, s], "outputs": out, "grads": [d]}


def gather(B, list_es=-1, indices=(2, 0, 2), dtype=F32):
    h = B.R.TensorListFromTensor(tensor=_rows(B, (3, 2)), element_shape=_i32(B, list_es))
    idx, es = _i32(B, list(indices)), _i32(B, -1)
    out = B.R.TensorListGather(input_handle=h, indices=idx, element_shape=es, element_dtype=F32)
    d = _rows(B, (len(indices), 2), 30, dtype)
    return {"op": "TensorListGather", "inputs": [h, idx, es], "outputs": out, "grads": [d], "dtype": dtype}


def scatter(B, v2=False):
    t, idx, es = _rows(B, (2, 2)), _i32(B, [3, 1]), _i32(B, [2])
    if v2:
        n = _i32(B, 5)
        out = B.R.TensorListScatterV2(tensor=t, indices=idx, element_shape=es, num_elements=n)
        d = _partial_list(B, 5, [2], {1: [1.0, 2.0], 4: [3.0, 4.0]})
        return {"op": "TensorListScatterV2", "inputs": [t, idx, es, n], "outputs": out, "grads": [d]}
    out = B.R.TensorListScatter(tensor=t, indices=idx, element_shape=es)
    d = _partial_list(B, 4, [2], {3: [1.0, 2.0], 0: [3.0, 4.0]})
    return {"op": "TensorListScatter", "inputs": [t, idx, es], "outputs": out, "grads": [d]}


def scatter_into_existing(B):
    h = B.R.TensorListFromTensor(tensor=_rows(B, (4, 2)), element_shape=_i32(B, -1))
    t, idx = _rows(B, (2, 2), 50), _i32(B, [2, 0])
    out = B.R.TensorListScatterIntoExistingList(input_handle=h, tensor=t, indices=idx)
    d = _partial_list(B, 4, -1, {0: [1.0, 2.0], 1: [3.0, 4.0], 3: [5.0, 6.0]})
    return {"op": "TensorListScatterIntoExistingList", "inputs": [h, t, idx], "outputs": out, "grads": [d]}


def from_tensor(B, dlist="full", rows=3):
    x = _rows(B, (rows, 2))
    es = _i32(B, [-1])
    out = B.R.TensorListFromTensor(tensor=x, element_shape=es)
    if dlist == "full":
        d = B.R.TensorListFromTensor(tensor=_rows(B, (rows, 2), 40), element_shape=_i32(B, -1))
    elif dlist == "partial":
        d = _partial_list(B, rows, -1, {rows - 1: [1.0, 2.0]})
    else:
        d = None
    return {"op": "TensorListFromTensor", "inputs": [x, es], "outputs": out, "grads": [d]}


def concat(B, v2=False, list_es=(-1, 2)):
    lengths = B.c([2, 0, 3], np.int64)
    h = B.R.TensorListSplit(tensor=_rows(B, (5, 2)), element_shape=_i32(B, list_es), lengths=lengths)
    dt = _rows(B, (5, 2), 60)
    if v2:
        es, ld = _i32(B, [-1, 2]), B.c([], np.int64)
        out = B.R.TensorListConcatV2(input_handle=h, element_shape=es, leading_dims=ld, element_dtype=F32)
        return {"op": "TensorListConcatV2", "inputs": [h, es, ld], "outputs": out, "grads": [dt, None]}
    out = B.R.TensorListConcat(input_handle=h, element_dtype=F32, element_shape=[None, 2])
    return {"op": "TensorListConcat", "inputs": [h], "outputs": out, "grads": [dt, None]}


def concat_unknown_element_shape(B):
    h = B.R.TensorListFromTensor(tensor=_rows(B, (2, 3)), element_shape=_i32(B, -1))
    out = B.R.TensorListConcat(input_handle=h, element_dtype=F32)
    return {"op": "TensorListConcat", "inputs": [h], "outputs": out, "grads": [_rows(B, (6,), 70), None]}


def split(B, unset=False):
    t, es, lengths = _rows(B, (5, 2)), _i32(B, [-1, 2]), B.c([2, 0, 3], np.int64)
    out = B.R.TensorListSplit(tensor=t, element_shape=es, lengths=lengths)
    if unset:
        d = _partial_list(B, 3, [-1, 2], {2: np.ones((3, 2))})
    else:
        d = B.R.TensorListSplit(tensor=_rows(B, (5, 2), 80), element_shape=_i32(B, -1), lengths=lengths)
    return {"op": "TensorListSplit", "inputs": [t, es, lengths], "outputs": out, "grads": [d]}


def nested_set_item(B):
    inner = B.R.TensorListFromTensor(tensor=B.c([1.0, 2.0], F32), element_shape=_i32(B, -1))
    outer = B.R.TensorListReserve(element_shape=_i32(B, -1), num_elements=2, element_dtype=B.variant)
    i = _i32(B, 1)
    out = B.R.TensorListSetItem(input_handle=outer, index=i, item=inner)
    dinner = B.R.TensorListFromTensor(tensor=B.c([3.0, 4.0], F32), element_shape=_i32(B, -1))
    d = B.R.TensorListReserve(element_shape=_i32(B, -1), num_elements=2, element_dtype=B.variant)
    d = B.R.TensorListSetItem(input_handle=d, index=i, item=dinner)
    d = B.R.TensorListSetItem(input_handle=d, index=_i32(B, 0), item=dinner)
    return {
        "op": "TensorListSetItem",
        "inputs": [outer, i, inner],
        "outputs": out,
        "grads": [d],
        "dtypes": ["variant", None, F32],
    }


def nested_get_item(B):
    inner = B.R.TensorListFromTensor(tensor=B.c([1.0, 2.0], F32), element_shape=_i32(B, -1))
    outer = B.R.TensorListReserve(element_shape=_i32(B, -1), num_elements=3, element_dtype=B.variant)
    outer = B.R.TensorListSetItem(input_handle=outer, index=_i32(B, 2), item=inner)
    i, es = _i32(B, 2), _i32(B, -1)
    out = B.R.TensorListGetItem(input_handle=outer, index=i, element_shape=es, element_dtype=B.variant)
    dinner = B.R.TensorListFromTensor(tensor=B.c([3.0, 4.0], F32), element_shape=_i32(B, -1))
    return {"op": "TensorListGetItem", "inputs": [outer, i, es], "outputs": out, "grads": [dinner], "dtype": "variant"}


def _p(func, **kw):
    return lambda B: func(B, **kw)


CASES = {
    "push_back": push_back,
    "push_back_unset_last": _p(push_back, dlist_kind="unset_last"),
    "push_back_empty_dlist_error": _p(push_back, dlist_kind="empty"),
    "push_back_scalar_unset": push_back_scalar,
    "pop_back": pop_back,
    "pop_back_none_dlist": _p(pop_back, dlist=False),
    "pop_back_none_delement": _p(pop_back, delement=False),
    "pop_back_none_dlist_float64": pop_back_none_list_other_dtype,
    "stack": stack,
    "stack_scalars": _p(stack, shape=(3,)),
    "get_item": get_item,
    "get_item_unknown_shape": _p(get_item, list_es=(-1,)),
    "get_item_float64_ditem": _p(get_item, ditem_dtype=np.float64),
    "set_item": set_item,
    "set_item_unset": _p(set_item, unset=True),
    "set_item_resize": _p(set_item, resize=True),
    "set_item_short_dlist_error": _p(set_item, short=True),
    "resize_shrink": resize,
    "resize_grow": _p(resize, size=5),
    "gather_repeated": gather,
    "gather_known_shape": _p(gather, list_es=[2], indices=(1,)),
    "gather_float64_dtensor": _p(gather, dtype=np.float64),
    "scatter": scatter,
    "scatter_v2": _p(scatter, v2=True),
    "scatter_into_existing": scatter_into_existing,
    "from_tensor": from_tensor,
    "from_tensor_partial": _p(from_tensor, dlist="partial"),
    "from_tensor_none_dlist": _p(from_tensor, dlist=None),
    "from_tensor_none_dlist_no_rows": _p(from_tensor, dlist=None, rows=0),
    "concat": concat,
    "concat_v2": _p(concat, v2=True),
    "concat_unknown_list_shape": concat_unknown_element_shape,
    "concat_v2_unknown_list_shape": _p(concat, v2=True, list_es=-1),
    "split": split,
    "split_unset": _p(split, unset=True),
    "nested_set_item": nested_set_item,
    "nested_get_item": nested_get_item,
}


@oracle
@needs_tf
@pytest.mark.parametrize("name", sorted(CASES))
def test_rule_matches_tf_registered_gradient(name):
    case = CASES[name]
    expected = _run(_tf_backend(), case)
    got = _run(_nb_backend(), case)
    assert got == expected


@oracle
@needs_tf
def test_every_registered_list_gradient_has_a_rule():
    registered, not_differentiable, missing = set(), set(), set()
    for op in dir(tf.raw_ops):
        if "TensorList" not in op:
            continue
        try:
            fn = tf_ops._gradient_registry.lookup(op)
        except LookupError:
            missing.add(op)
            continue
        (registered if fn is not None else not_differentiable).add(op)
    assert registered == set(RULES)
    assert not_differentiable == NOT_DIFFERENTIABLE
    assert missing == NO_GRADIENT
    assert {case(_nb_backend())["op"] for case in CASES.values()} == set(RULES)


# ========================================================================== worked examples
def _tape(fn, *xs):
    """TF's gradients of ``fn(tf.raw_ops, *xs)`` with respect to ``xs``."""
    ts = [tf.constant(x) for x in xs]
    with tf.GradientTape() as tape:
        for t in ts:
            tape.watch(t)
        loss = fn(tf.raw_ops, *ts)
    return [None if g is None else g.numpy() for g in tape.gradient(loss, ts)]


def _loss(R, v, w):
    """``sum(v * w)`` on either backend (only the forward value; the gradient of ``v`` is ``w``)."""
    return tf.reduce_sum(v * w) if R is tf.raw_ops else float(np.sum(np.asarray(v) * w))


def _assert_grads(got, expected):
    assert len(got) == len(expected)
    for g, e in zip(got, expected, strict=True):
        if e is None:
            assert g is None
        else:
            np.testing.assert_allclose(g, e, rtol=1e-6)
            assert np.asarray(g).dtype == e.dtype


RNG = np.random.default_rng(7)


def _w(*shape):
    return RNG.standard_normal(shape).astype(F32)


@oracle
@needs_tf
def test_push_back_loop_and_pop_back_backward():
    """The accumulator of a while loop: pushes in the forward loop, pops in the backward one.

    loss = sum(e2 * w2) + sum(e1 * w1) + sum(stack(rest) * W), where e2, e1 are popped (in that
    order) from a list that three pushes built, e0 stays in ``rest``.  A fourth pop reads e0
    again through an unused pop chain.
    """
    xs = [_w(2), _w(2), _w(2)]
    w1, w2, wr = _w(2), _w(2), _w(1, 2)

    def forward(R, x0, x1, x2):
        l0 = R.EmptyTensorList(element_shape=[2], max_num_elements=-1, element_dtype=F32)
        l1 = R.TensorListPushBack(input_handle=l0, tensor=x0)
        l2 = R.TensorListPushBack(input_handle=l1, tensor=x1)
        l3 = R.TensorListPushBack(input_handle=l2, tensor=x2)
        l4, e2 = R.TensorListPopBack(input_handle=l3, element_shape=-1, element_dtype=F32)
        l5, e1 = R.TensorListPopBack(input_handle=l4, element_shape=-1, element_dtype=F32)
        rest = R.TensorListStack(input_handle=l5, element_shape=-1, element_dtype=F32)
        return (l0, l1, l2, l3, l4, l5, e2, e1), _loss(R, e2, w2) + _loss(R, e1, w1) + _loss(R, rest, wr)

    expected = _tape(lambda R, *x: forward(R, *x)[1], *xs)
    (l0, l1, l2, l3, l4, l5, e2, e1), _ = forward(nb_ops, *xs)
    dl5, _ = G.tensor_list_stack_grad(l5, -1, wr)
    dl4, _ = G.tensor_list_pop_back_grad(l4, -1, l5, e1, dl5, w1)
    dl3, _ = G.tensor_list_pop_back_grad(l3, -1, l4, e2, dl4, w2)
    dl2, dx2 = G.tensor_list_push_back_grad(l2, xs[2], dl3)
    dl1, dx1 = G.tensor_list_push_back_grad(l1, xs[1], dl2)
    dl0, dx0 = G.tensor_list_push_back_grad(l0, xs[0], dl1)
    assert len(dl0) == 0
    _assert_grads([dx0, dx1, dx2], expected)


@oracle
@needs_tf
def test_pop_all_with_unused_outputs():
    """Pop every element; the last list and one popped element are not used.

    TF's tape passes ``ZerosLike`` for them; numba_ta's rules get ``None`` (an empty list,
    zeros like the element: the same values).
    """
    xs = [_w(3), _w(3), _w(3)]
    w0, w2 = _w(3), _w(3)

    def forward(R, x0, x1, x2):
        l0 = R.EmptyTensorList(element_shape=[3], max_num_elements=-1, element_dtype=F32)
        l1 = R.TensorListPushBack(input_handle=l0, tensor=x0)
        l2 = R.TensorListPushBack(input_handle=l1, tensor=x1)
        l3 = R.TensorListPushBack(input_handle=l2, tensor=x2)
        l4, e2 = R.TensorListPopBack(input_handle=l3, element_shape=-1, element_dtype=F32)
        l5, e1 = R.TensorListPopBack(input_handle=l4, element_shape=-1, element_dtype=F32)
        l6, e0 = R.TensorListPopBack(input_handle=l5, element_shape=-1, element_dtype=F32)
        return (l0, l1, l2, l3, l4, l5, l6, e2, e1, e0), _loss(R, e2, w2) + _loss(R, e0, w0)

    expected = _tape(lambda R, *x: forward(R, *x)[1], *xs)
    (l0, l1, l2, l3, l4, l5, l6, e2, e1, e0), _ = forward(nb_ops, *xs)
    dl5, _ = G.tensor_list_pop_back_grad(l5, -1, l6, e0, None, w0)  # l6 unused
    dl4, _ = G.tensor_list_pop_back_grad(l4, -1, l5, e1, dl5, None)  # e1 unused
    dl3, _ = G.tensor_list_pop_back_grad(l3, -1, l4, e2, dl4, w2)
    dl2, dx2 = G.tensor_list_push_back_grad(l2, xs[2], dl3)
    dl1, dx1 = G.tensor_list_push_back_grad(l1, xs[1], dl2)
    dl0, dx0 = G.tensor_list_push_back_grad(l0, xs[0], dl1)
    _assert_grads([dx0, dx1, dx2], expected)


@oracle
@needs_tf
def test_reserve_set_item_stack():
    """Reserve, three SetItems (one overwrites, one grows the list), then Stack."""
    xs = [_w(2), _w(2), _w(2), _w(2)]
    W = _w(5, 2)

    def forward(R, a, b, c, d):
        l0 = R.TensorListReserve(element_shape=[2], num_elements=3, element_dtype=F32)
        l1 = R.TensorListSetItem(input_handle=l0, index=0, item=a)
        l2 = R.TensorListSetItem(input_handle=l1, index=2, item=b)
        l3 = R.TensorListSetItem(input_handle=l2, index=0, item=c)
        l4 = R.TensorListSetItem(input_handle=l3, index=4, item=d, resize_if_index_out_of_bounds=True)
        s = R.TensorListStack(input_handle=l4, element_shape=[2], element_dtype=F32)
        return (l0, l1, l2, l3, l4), _loss(R, s, W)

    expected = _tape(lambda R, *x: forward(R, *x)[1], *xs)
    (l0, l1, l2, l3, l4), _ = forward(nb_ops, *xs)
    dl4, _ = G.tensor_list_stack_grad(l4, [2], W)
    dl3, _, dd = G.tensor_list_set_item_grad(l3, 4, xs[3], dl4, resize_if_index_out_of_bounds=True)
    assert len(dl3) == 3
    dl2, _, dc = G.tensor_list_set_item_grad(l2, 0, xs[2], dl3)
    dl1, _, db = G.tensor_list_set_item_grad(l1, 2, xs[1], dl2)
    dl0, _, da = G.tensor_list_set_item_grad(l0, 0, xs[0], dl1)
    _assert_grads([da, db, dc, dd], expected)
    np.testing.assert_array_equal(da, 0)


@oracle
@needs_tf
def test_from_tensor_gather_and_get_item():
    """One list, two readers (their list gradients summed, as TF's AddN); a repeated index."""
    x = _w(4, 3)
    wg, wi = _w(3, 3), _w(3)

    def forward(R, x):
        h = R.TensorListFromTensor(tensor=x, element_shape=[-1])
        g = R.TensorListGather(input_handle=h, indices=[2, 0, 2], element_shape=-1, element_dtype=F32)
        y = R.TensorListGetItem(input_handle=h, index=1, element_shape=-1, element_dtype=F32)
        return h, _loss(R, g, wg) + _loss(R, y, wi)

    expected = _tape(lambda R, x: forward(R, x)[1], x)
    h, _ = forward(nb_ops, x)
    dl_g, _, _ = G.tensor_list_gather_grad(h, [2, 0, 2], -1, wg)
    dl_i, _, _ = G.tensor_list_get_item_grad(h, 1, -1, wi)
    dl = gradients.tensor_list_add_n([dl_g, dl_i])
    dx, _ = G.tensor_list_from_tensor_grad(x, [-1], h, dl)
    _assert_grads([dx], expected)
    np.testing.assert_array_equal(dx[2], wg[2])  # the last occurrence of index 2 only, as TF
    np.testing.assert_array_equal(dx[3], 0)


@oracle
@needs_tf
@pytest.mark.parametrize("kind", ["Scatter", "ScatterV2", "ScatterIntoExistingList"])
def test_scatter_then_stack(kind):
    x, base = _w(2, 2), _w(5, 2)
    W = _w(5, 2)
    idx = [3, 1]

    def forward(R, x, base):
        l0 = None
        if kind == "Scatter":
            h = R.TensorListScatter(tensor=x, indices=idx, element_shape=[2])
        elif kind == "ScatterV2":
            h = R.TensorListScatterV2(tensor=x, indices=idx, element_shape=[2], num_elements=5)
        else:
            l0 = R.TensorListFromTensor(tensor=base, element_shape=[2])
            h = R.TensorListScatterIntoExistingList(input_handle=l0, tensor=x, indices=idx)
        s = R.TensorListStack(input_handle=h, element_shape=[2], element_dtype=F32)
        w = W[: s.shape[0]]
        return (l0, h), _loss(R, s, w)

    expected = _tape(lambda R, *a: forward(R, *a)[1], x, base)
    (l0, h), _ = forward(nb_ops, x, base)
    dl, _ = G.tensor_list_stack_grad(h, [2], W[: len(h)])
    if kind == "Scatter":
        dx, _, _ = G.tensor_list_scatter_grad(x, idx, [2], dl)
        got = [dx, None]
    elif kind == "ScatterV2":
        dx, _, _, _ = G.tensor_list_scatter_v2_grad(x, idx, [2], 5, dl)
        got = [dx, None]
    else:
        dl0, dx, _ = G.tensor_list_scatter_into_existing_list_grad(l0, x, idx, dl)
        dbase, _ = G.tensor_list_from_tensor_grad(base, [2], l0, dl0)
        got = [dx, dbase]
    _assert_grads(got, expected)


@oracle
@needs_tf
@pytest.mark.parametrize("v2", [False, True], ids=["Concat", "ConcatV2"])
def test_split_then_concat(v2):
    x = _w(5, 2)
    W = _w(5, 2)
    lengths = np.array([2, 0, 3], np.int64)

    def forward(R, x):
        h = R.TensorListSplit(tensor=x, element_shape=[-1, 2], lengths=lengths)
        if v2:
            t, n = R.TensorListConcatV2(
                input_handle=h, element_shape=[-1, 2], leading_dims=np.zeros(0, np.int64), element_dtype=F32
            )
        else:
            t, n = R.TensorListConcat(input_handle=h, element_dtype=F32, element_shape=[None, 2])
        return (h, n), _loss(R, t, W)

    expected = _tape(lambda R, x: forward(R, x)[1], x)
    (h, n), _ = forward(nb_ops, x)
    if v2:
        dl, _, _ = G.tensor_list_concat_v2_grad(h, [-1, 2], np.zeros(0, np.int64), n, W)
    else:
        (dl,) = G.tensor_list_concat_grad(h, n, W)
    dx, _, _ = G.tensor_list_split_grad(x, [-1, 2], lengths, dl)
    _assert_grads([dx], expected)


@oracle
@needs_tf
def test_split_then_get_item():
    """Only one piece read: the other pieces of the gradient list are unset, their rows zeros."""
    x = _w(5, 2)
    w = _w(3, 2)
    lengths = np.array([2, 0, 3], np.int64)

    def forward(R, x):
        h = R.TensorListSplit(tensor=x, element_shape=[-1, 2], lengths=lengths)
        y = R.TensorListGetItem(input_handle=h, index=2, element_shape=-1, element_dtype=F32)
        return h, _loss(R, y, w)

    expected = _tape(lambda R, x: forward(R, x)[1], x)
    h, _ = forward(nb_ops, x)
    dl, _, _ = G.tensor_list_get_item_grad(h, 2, -1, w)
    dx, _, _ = G.tensor_list_split_grad(x, [-1, 2], lengths, dl)
    _assert_grads([dx], expected)


@oracle
@needs_tf
def test_resize_shrink_then_grow():
    x = _w(3, 2)
    W = _w(4, 2)

    def forward(R, x):
        h = R.TensorListFromTensor(tensor=x, element_shape=[2])
        l2 = R.TensorListResize(input_handle=h, size=2)
        l3 = R.TensorListResize(input_handle=l2, size=4)
        s = R.TensorListStack(input_handle=l3, element_shape=[2], element_dtype=F32)
        return (h, l2, l3), _loss(R, s, W)

    expected = _tape(lambda R, x: forward(R, x)[1], x)
    (h, l2, l3), _ = forward(nb_ops, x)
    dl3, _ = G.tensor_list_stack_grad(l3, [2], W)
    dl2, _ = G.tensor_list_resize_grad(l2, 4, dl3)
    dl, _ = G.tensor_list_resize_grad(h, 2, dl2)
    dx, _ = G.tensor_list_from_tensor_grad(x, [2], h, dl)
    _assert_grads([dx], expected)


@oracle
@needs_tf
def test_list_of_lists():
    """An inner list set into a list of lists, read back and stacked."""
    x = _w(2)
    w = _w(2)

    def forward(R, x):
        variant = tf.variant if R is tf.raw_ops else object
        inner = R.TensorListFromTensor(tensor=x, element_shape=-1)
        outer = R.TensorListReserve(element_shape=-1, num_elements=2, element_dtype=variant)
        outer2 = R.TensorListSetItem(input_handle=outer, index=1, item=inner)
        got = R.TensorListGetItem(input_handle=outer2, index=1, element_shape=-1, element_dtype=variant)
        s = R.TensorListStack(input_handle=got, element_shape=-1, element_dtype=F32)
        return (inner, outer, outer2, got), _loss(R, s, w)

    expected = _tape(lambda R, x: forward(R, x)[1], x)
    (inner, outer, outer2, got), _ = forward(nb_ops, x)
    dgot, _ = G.tensor_list_stack_grad(got, -1, w)
    douter2, _, _ = G.tensor_list_get_item_grad(outer2, 1, -1, dgot)
    _, _, dinner = G.tensor_list_set_item_grad(outer, 1, inner, douter2)
    dx, _ = G.tensor_list_from_tensor_grad(x, -1, inner, dinner)
    _assert_grads([dx], expected)


@oracle
@needs_tf
def test_unconnected_input_has_no_gradient():
    """A list whose only reader is TensorListLength: TF gives no gradient; no rule is called."""
    x = _w(3)

    def forward(R, x):
        h = R.TensorListFromTensor(tensor=x, element_shape=-1)
        n = R.TensorListLength(input_handle=h)
        return tf.cast(n, F32) if R is tf.raw_ops else float(n)

    assert _tape(forward, x) == [None]
    h = nb_ops.TensorListFromTensor(tensor=x, element_shape=-1)
    assert not hasattr(G, "tensor_list_length_grad")
    assert G.tensor_list_stack_grad(h, -1, None) == (None, None)
