"""numba_ta's ops against TensorFlow's op definitions: results, inputs, argument names.

``numba_ta/_opdefs.py`` holds what numba_ta takes from the op definitions of the thirty-one ops
(the eleven TensorArray ops, the twenty TensorList ops): each input's dtype and each op's output
names.  The oracle tests here read TensorFlow's ``op_def_registry`` (so no op and no input is
missed) and check

* the tables themselves, and that every op takes TF's arguments by TF's names, in TF's order;
* results: an op with several outputs returns TF's named tuple (type named as the op, fields
  the op definition's output names), one output is returned as itself, none as None;
* inputs: a TensorFlow tensor of another dtype than the op definition's, given to each input
  in turn, raises what TensorFlow raises (class and text), and so does a TensorList where an
  array's handle belongs and the other way round;
* a Python list, tuple or object array of lists where one list belongs: TensorFlow's L1
  (``Input list must be a scalar saw: [2]``), for every op that takes one list.
"""

from __future__ import annotations

import inspect
import os

import numpy as np
import pytest

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import numba_ta
from numba_ta import errors, raw_ops
from numba_ta.tf.opdefs import INPUTS, OUTPUTS, RESULTS

oracle = pytest.mark.oracle

TA_OPS = [op for op in raw_ops.__all__ if op.startswith("TensorArray")]
LIST_OPS = [op for op in raw_ops.__all__ if not op.startswith("TensorArray")]
F32 = np.float32


def test_thirty_one_ops():
    assert len(TA_OPS) == 11 and len(LIST_OPS) == 20
    assert set(INPUTS) == set(OUTPUTS) == set(raw_ops.__all__)


# ------------------------------------------------------------------------------------------
# the tables and the signatures


def _dt_name(enum):
    from tensorflow.core.framework import types_pb2

    return types_pb2.DataType.Name(enum)[3:].lower()  # DT_FLOAT -> float, DataTypeString's name


def _op_def(op):
    from tensorflow.python.framework import op_def_registry

    return op_def_registry.get(op)


@oracle
@pytest.mark.parametrize("op", raw_ops.__all__)
def test_tables_are_the_op_definitions(tf, op):
    od = _op_def(op)
    attrs = {a.name: a for a in od.attr}
    want = []
    for a in od.input_arg:
        if a.type:
            want.append((a.name, _dt_name(a.type)))
        else:
            allowed = tuple(_dt_name(t) for t in attrs[a.type_attr].allowed_values.list.type)
            want.append((a.name, (a.type_attr, allowed) if allowed else None))
    assert INPUTS[op] == tuple(want)
    assert OUTPUTS[op] == tuple(a.name for a in od.output_arg)
    if len(od.output_arg) > 1:
        assert RESULTS[op].__name__ == op and RESULTS[op]._fields == OUTPUTS[op]
    else:
        assert op not in RESULTS


@oracle
@pytest.mark.parametrize("op", raw_ops.__all__)
def test_arguments_are_tfs(tf, op):
    """Every argument of ``tf.raw_ops.<op>`` by its name and in its place (numba_ta may add none)."""
    theirs = list(inspect.signature(getattr(tf.raw_ops, op)).parameters)
    mine = list(inspect.signature(getattr(raw_ops, op)).parameters)
    assert mine == theirs


# ------------------------------------------------------------------------------------------
# valid calls of every op, on either backend


class Backend:
    """Make valid arguments for one backend: ``tf.raw_ops`` or ``numba_ta.raw_ops``."""

    def __init__(self, tf, is_tf):
        self.tf, self.is_tf = tf, is_tf  # tf may be None for numba_ta
        self.R = tf.raw_ops if is_tf else raw_ops
        self.DT = tf.float32 if is_tf else F32

    def array(self, written=True):
        R = self.R
        h, f = R.TensorArrayV3(size=2, dtype=self.DT, element_shape=[2], clear_after_read=False)
        if written:
            for i in range(2):
                f = R.TensorArrayWriteV3(handle=h, index=i, value=np.ones(2, F32), flow_in=f)
        return h, f

    def lst(self):
        return self.R.TensorListFromTensor(tensor=np.ones((2, 2), F32), element_shape=np.int32(-1))

    def vec(self, *lists):
        return self.tf.stack(list(lists)) if self.is_tf else np.array(lists + (None,), object)[:-1]

    def kwargs(self, op):
        DT, i32, i64 = self.DT, (lambda x: np.asarray(x, np.int32)), (lambda x: np.asarray(x, np.int64))
        if op == "TensorArrayV3":
            return {"size": i32(2), "dtype": DT}
        if op.startswith("TensorArray"):
            fresh = op in ("TensorArrayWriteV3", "TensorArrayScatterV3", "TensorArraySplitV3", "TensorArrayCloseV3")
            h, f = self.array(written=not fresh)
            kw = {"handle": h, "flow_in": f}
            kw.update(
                {
                    "TensorArrayWriteV3": {"index": i32(0), "value": np.ones(2, F32)},
                    "TensorArrayReadV3": {"index": i32(0), "dtype": DT},
                    "TensorArrayGatherV3": {"indices": i32([0, 1]), "dtype": DT},
                    "TensorArrayScatterV3": {"indices": i32([0, 1]), "value": np.ones((2, 2), F32)},
                    "TensorArrayConcatV3": {"dtype": DT},
                    "TensorArraySplitV3": {"value": np.ones(4, F32), "lengths": i64([2, 2])},
                    "TensorArraySizeV3": {},
                    "TensorArrayCloseV3": {},
                    "TensorArrayGradV3": {"source": "g"},
                    "TensorArrayGradWithShape": {"shape_to_prepend": i32([3]), "source": "g2"},
                }[op]
            )
            if op == "TensorArrayCloseV3":
                del kw["flow_in"]
            return kw
        es = i32([2])
        if op == "EmptyTensorList":
            return {"element_shape": es, "max_num_elements": i32(-1), "element_dtype": DT}
        if op == "TensorListReserve":
            return {"element_shape": es, "num_elements": i32(2), "element_dtype": DT}
        if op == "TensorListFromTensor":
            return {"tensor": np.ones((2, 2), F32), "element_shape": es}
        if op == "TensorListScatter":
            return {"tensor": np.ones((2, 2), F32), "indices": i32([0, 1]), "element_shape": es}
        if op == "TensorListScatterV2":
            return {"tensor": np.ones((2, 2), F32), "indices": i32([0, 1]), "element_shape": es, "num_elements": i32(2)}
        if op == "TensorListSplit":
            return {"tensor": np.ones(4, F32), "element_shape": i32(-1), "lengths": i64([2, 2])}
        lst = self.lst()
        return {
            "TensorListSetItem": {"input_handle": lst, "index": i32(0), "item": np.ones(2, F32)},
            "TensorListGetItem": {"input_handle": lst, "index": i32(0), "element_shape": es, "element_dtype": DT},
            "TensorListPushBack": {"input_handle": lst, "tensor": np.ones(2, F32)},
            "TensorListPushBackBatch": {"input_handles": self.vec(lst, lst), "tensor": np.ones((2, 2), F32)},
            "TensorListPopBack": {"input_handle": lst, "element_shape": es, "element_dtype": DT},
            "TensorListStack": {"input_handle": lst, "element_shape": es, "element_dtype": DT},
            "TensorListGather": {"input_handle": lst, "indices": i32([0, 1]), "element_shape": es, "element_dtype": DT},
            "TensorListScatterIntoExistingList": {
                "input_handle": lst,
                "tensor": np.ones((2, 2), F32),
                "indices": i32([0, 1]),
            },
            "TensorListConcat": {"input_handle": lst, "element_dtype": DT},
            "TensorListConcatV2": {
                "input_handle": lst,
                "element_shape": i32(-1),
                "leading_dims": i64([]),
                "element_dtype": DT,
            },
            "TensorListConcatLists": {"input_a": self.vec(lst), "input_b": self.vec(lst), "element_dtype": DT},
            "TensorListLength": {"input_handle": lst},
            "TensorListElementShape": {"input_handle": lst, "shape_type": self.tf.int32 if self.is_tf else np.int32},
            "TensorListResize": {"input_handle": lst, "size": i32(1)},
        }[op]

    def call(self, op, kw):
        try:
            return True, getattr(self.R, op)(**kw)
        except Exception as e:  # compared by the caller
            return False, e


# ------------------------------------------------------------------------------------------
# results


@oracle
@pytest.mark.parametrize("op", raw_ops.__all__)
def test_results_are_tfs_named_tuples(tf, op):
    """``tf.raw_ops.TensorArrayGradV3(...).grad_handle`` works after the import is changed."""
    tb, nb = Backend(tf, True), Backend(tf, False)
    ok_tf, theirs = tb.call(op, tb.kwargs(op))
    ok_nb, mine = nb.call(op, nb.kwargs(op))
    assert ok_tf, theirs
    assert ok_nb, mine
    outputs = OUTPUTS[op]
    if len(outputs) > 1:
        assert type(theirs).__name__ == type(mine).__name__ == op
        assert theirs._fields == mine._fields == outputs
        for field in outputs:
            assert getattr(mine, field) is mine[outputs.index(field)]
    elif outputs:
        assert not isinstance(theirs, tuple) and not isinstance(mine, tuple)
    else:
        assert mine is None


def test_results_pickle():
    import pickle

    lst = raw_ops.TensorListFromTensor(tensor=np.arange(4.0).reshape(2, 2), element_shape=-1)
    r = raw_ops.TensorListPopBack(input_handle=lst, element_shape=-1, element_dtype=np.float64)
    back = pickle.loads(pickle.dumps(r))
    assert type(back) is type(r) and back._fields == ("output_handle", "tensor")
    np.testing.assert_array_equal(back.tensor, [2.0, 3.0])
    assert len(back.output_handle) == 1


def test_grad_result_fields():
    h, f = raw_ops.TensorArrayV3(size=2, dtype=F32)
    r = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
    assert r.grad_handle.name == h.name + "@gradients" and r.flow_out == 0
    assert repr(r).startswith("TensorArrayGradV3(grad_handle=<TensorArrayHandle")
    r2 = raw_ops.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=[1], source="s")
    assert type(r2).__name__ == "TensorArrayGradWithShape" and r2.grad_handle.name.endswith("@s")
    c = raw_ops.TensorArrayConcatV3(handle=raw_ops.TensorArrayV3(size=0, dtype=F32).handle, flow_in=f, dtype=F32,
                                    element_shape_except0=[2])  # fmt: skip
    assert c.value.shape == (0, 2) and c.lengths.shape == (0,)


# ------------------------------------------------------------------------------------------
# inputs of another dtype


def _wrong(tf, want, value):
    """A TensorFlow tensor of another dtype than ``want`` (an input's entry of INPUTS)."""
    if want == "int32":
        return tf.constant(np.asarray(value), tf.int64)
    if want == "int64":
        return tf.constant(np.asarray(value), tf.int32)
    if want == "float":
        return tf.constant(0.0, tf.float64)
    if want in ("resource", "variant"):
        return tf.constant(1.0, tf.float32)
    return tf.constant(np.asarray(value, np.float32))  # an attribute of int32 or int64


CASES = [(op, arg) for op in raw_ops.__all__ for arg, want in INPUTS[op] if want is not None]


def _tf_text(tf, e):
    from tests.helpers.oracle_util import tf_kernel_message

    return tf_kernel_message(e).split("\n")[0]  # the attribute check: without "\t; NodeDef: ..."


def _backends(tf, op):
    """TensorFlow's and numba_ta's :class:`Backend`, and valid arguments of ``op`` for each."""
    tb, nb = Backend(tf, True), Backend(tf, False)
    return tb, nb, tb.kwargs(op), nb.kwargs(op)


def _call_both(tb, nb, op, kw_tf, kw_nb):
    """``op`` on both backends: ``(ok_tf, result_or_error_tf, ok_nb, result_or_error_nb)``."""
    return (*tb.call(op, kw_tf), *nb.call(op, kw_nb))


def _assert_same_invalid_argument(tf, e_tf, e_nb):
    """Both kernels refused with ``InvalidArgumentError``, numba_ta with TensorFlow's text."""
    assert isinstance(e_tf, tf.errors.InvalidArgumentError), repr(e_tf)
    assert isinstance(e_nb, errors.InvalidArgumentError), repr(e_nb)
    assert e_nb.message == _tf_text(tf, e_tf)


@oracle
@pytest.mark.parametrize(("op", "arg"), CASES, ids=[f"{op}-{arg}" for op, arg in CASES])
def test_a_tensor_of_another_dtype_is_refused_as_tf_refuses_it(tf, op, arg):
    want = dict(INPUTS[op])[arg]
    tb, nb, kw_tf, kw_nb = _backends(tf, op)
    bad = _wrong(tf, want, kw_nb[arg])
    kw_tf[arg] = kw_nb[arg] = bad
    ok_tf, e_tf, ok_nb, e_nb = _call_both(tb, nb, op, kw_tf, kw_nb)
    assert not ok_tf, f"TensorFlow took {bad!r}"
    assert not ok_nb, f"numba_ta took {bad!r} for {arg}: {e_nb!r}"
    assert isinstance(e_nb, errors.InvalidArgumentError), repr(e_nb)
    if isinstance(e_tf, ValueError) and not isinstance(e_tf, tf.errors.OpError):
        # TF's Python layer refused it first ("Tensor conversion requested dtype int32 for Tensor with
        # dtype int64"): the kernel-side text is the op definition's (docs/semantics.rst, tl-common)
        assert str(e_tf).startswith("Tensor conversion requested dtype"), repr(e_tf)
        k = [a for a, _ in INPUTS[op]].index(arg)
        assert e_nb.message.startswith(f"cannot compute {op} as input #{k}(zero-based)"), e_nb.message
        return
    _assert_same_invalid_argument(tf, e_tf, e_nb)


HANDLE_INPUTS = [(op, arg) for op, arg in CASES if dict(INPUTS[op])[arg] in ("resource", "variant")]


@oracle
@pytest.mark.parametrize(("op", "arg"), HANDLE_INPUTS, ids=[f"{op}-{arg}" for op, arg in HANDLE_INPUTS])
def test_a_list_for_an_array_and_an_array_for_a_list(tf, op, arg):
    """A TensorList where a TensorArray handle belongs is a variant tensor, and the other way round."""
    want = dict(INPUTS[op])[arg]
    tb, nb, kw_tf, kw_nb = _backends(tf, op)
    if want == "resource":
        kw_tf[arg], kw_nb[arg] = tb.lst(), nb.lst()
    else:
        kw_tf[arg], kw_nb[arg] = tb.array()[0], nb.array()[0]
    ok_tf, e_tf, ok_nb, e_nb = _call_both(tb, nb, op, kw_tf, kw_nb)
    assert not ok_tf and not ok_nb, (e_tf, e_nb)
    _assert_same_invalid_argument(tf, e_tf, e_nb)


def test_numpy_values_are_converted_not_refused():
    """Only TensorFlow tensors are held to the op definition: an int64 numpy shape is converted, as TF does."""
    lst = raw_ops.TensorListFromTensor(tensor=np.ones((2, 2), F32), element_shape=-1)
    out = raw_ops.TensorListStack(input_handle=lst, element_shape=np.array([2], np.int64), element_dtype=F32)
    assert out.shape == (2, 2)
    assert numba_ta.tf.opdefs.check_input(np.int64(1), "TensorListGetItem", "index") is None


# ------------------------------------------------------------------------------------------
# a Python sequence of lists where one list belongs (L1)

ONE_LIST = [op for op in LIST_OPS if any(a == "input_handle" for a, _ in INPUTS[op])]


def _sequences(lst):
    return {
        "list": ([lst, lst], "[2]"),
        "tuple": ((lst, lst, lst), "[3]"),
        "nested": ([[lst], [lst]], "[2,1]"),
        "one": ([lst], "[1]"),
        "empty": ([], "[0]"),
        "object array": (np.array([lst, lst, None], object)[:2], "[2]"),
    }


@pytest.mark.parametrize("op", ONE_LIST)
@pytest.mark.parametrize("form", list(_sequences(None)))
def test_a_sequence_of_lists_is_not_a_scalar(op, form):
    """``TensorListLength(input_handle=[h1, h2])``: TF's L1, ``Input list must be a scalar saw: [2]``."""
    nb = Backend(None, False)
    kw = nb.kwargs(op)
    kw["input_handle"], shape = _sequences(kw["input_handle"])[form]
    with pytest.raises(errors.InvalidArgumentError) as e:
        getattr(raw_ops, op)(**kw)
    assert e.value.message == f"Input list must be a scalar saw: {shape}"
    assert str(e.value).endswith(f"[Op:{op}]")


def test_a_sequence_of_lists_and_other_values_does_not_convert():
    lst = Backend(None, False).lst()
    for seq in ([lst, 1.0], (2, lst)):
        with pytest.raises(TypeError, match="Cannot convert .* to EagerTensor of dtype variant"):
            raw_ops.TensorListLength(input_handle=seq)
    with pytest.raises(ValueError, match="non-rectangular"):
        raw_ops.TensorListLength(input_handle=[[lst], [lst, lst]])


@oracle
@pytest.mark.parametrize("op", ONE_LIST)
def test_tensorflow_refuses_a_sequence_of_lists_so(tf, op):
    from tests.helpers.oracle_util import tf_kernel_message

    for make in (lambda b, lst: [lst, lst], lambda b, lst: ((lst,), (lst,), (lst,))):
        got = []
        for b in (Backend(tf, True), Backend(tf, False)):
            kw = b.kwargs(op)
            kw["input_handle"] = make(b, kw["input_handle"])
            ok, e = b.call(op, kw)
            assert not ok and type(e).__name__ == "InvalidArgumentError", repr(e)
            got.append(tf_kernel_message(e) if b.is_tf else e.message)
        assert got[0] == got[1]
