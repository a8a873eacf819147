"""TF1's string handle ``[container, name]`` (docs/semantics.rst, ``sem-common``, "String handles").

TF1 graphs address a TensorArray by a string vector: ``_tensor_arrays`` and the array's unique
name (``_tensor_array_grads`` and ``<forward>@<source>`` for a gradient array).  TensorFlow's
kernels look the array up under the two strings joined and raise ``NotFoundError`` when there is
none; numba_ta's ops do the same with the live arrays.  The oracle test compares the texts with
TensorFlow's ``TensorArrayConcatV2`` (the one V2 op TensorFlow 2.21 still runs eagerly; its kernel
is the V3 op's).
"""

from __future__ import annotations

import gc
import os

import numpy as np
import pytest

from numba_ta import errors, raw_ops

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

F32 = np.float32
NOT_FOUND = "Resource __per_step_0/{}/N10tensorflow11TensorArrayE does not exist."


def _array(name="sh"):
    h, f = raw_ops.TensorArrayV3(size=2, dtype=F32, element_shape=[2], clear_after_read=False, tensor_array_name=name)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=[1.0, 2.0], flow_in=f)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=1, value=[3.0, 4.0], flow_in=f)
    return h, f


def _forms(container, name):
    return {
        "bytes array": np.array([container.encode(), name.encode()]),
        "str array": np.array([container, name]),
        "object array": np.array([container.encode(), name], dtype=object),
        "list": [container, name],
        "tuple": (container.encode(), name.encode()),
        "matrix": np.array([[container, name]]),  # any shape of two elements, as TF's GetHandle
    }


@pytest.mark.parametrize("form", list(_forms("a", "b")))
def test_every_op_finds_the_array(form):
    h, f = _array()
    sh = _forms("_tensor_arrays", h.name)[form]
    assert raw_ops.TensorArraySizeV3(handle=sh, flow_in=f) == 2
    np.testing.assert_array_equal(raw_ops.TensorArrayReadV3(handle=sh, index=1, flow_in=f, dtype=F32), [3, 4])
    got = raw_ops.TensorArrayGatherV3(handle=sh, indices=[1, 0], flow_in=f, dtype=F32)
    np.testing.assert_array_equal(got, [[3, 4], [1, 2]])
    value, lengths = raw_ops.TensorArrayConcatV3(handle=sh, flow_in=f, dtype=F32)
    np.testing.assert_array_equal(value, [1, 2, 3, 4])
    g = raw_ops.TensorArrayGradV3(handle=sh, flow_in=f, source="gradients")
    assert g.grad_handle.name == h.name + "@gradients"
    g2 = raw_ops.TensorArrayGradWithShape(handle=sh, flow_in=f, shape_to_prepend=[1], source="gradients")
    assert g2.grad_handle == g.grad_handle  # the same key: the same gradient array
    gs = _forms("_tensor_array_grads", g.grad_handle.name)[form]
    f2 = raw_ops.TensorArrayWriteV3(handle=gs, index=0, value=[1.0, 1.0], flow_in=g.flow_out)
    got = raw_ops.TensorArrayReadV3(handle=g.grad_handle, index=0, flow_in=f2, dtype=F32)
    np.testing.assert_array_equal(got, [1, 1])
    h2, f = raw_ops.TensorArrayV3(size=2, dtype=F32, tensor_array_name="sh2")
    sh2 = _forms("_tensor_arrays", h2.name)[form]
    f = raw_ops.TensorArrayScatterV3(handle=sh2, indices=[0, 1], value=np.ones((2, 1), F32), flow_in=f)
    raw_ops.TensorArrayCloseV3(handle=sh2)
    with pytest.raises(errors.InvalidArgumentError, match="has already been closed"):
        raw_ops.TensorArraySplitV3(handle=sh2, value=np.ones(2, F32), lengths=[1, 1], flow_in=f)


@pytest.mark.parametrize(
    ("container", "name"),
    [("a", "b"), ("_tensor_arrays", "nope"), ("_tensor_array_grads", "{fwd}"), ("_tensor_arrays", "{fwd}@gradients")],
)
def test_a_name_with_no_live_array_is_not_found(container, name):
    h, f = _array()
    raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")  # the gradient array exists
    name = name.format(fwd=h.name)
    for op, kw in [
        ("TensorArraySizeV3", {"flow_in": f}),
        ("TensorArrayReadV3", {"index": 0, "flow_in": f, "dtype": F32}),
        ("TensorArrayConcatV3", {"flow_in": f, "dtype": F32}),
        ("TensorArrayCloseV3", {}),
    ]:
        with pytest.raises(errors.NotFoundError) as e:
            getattr(raw_ops, op)(handle=np.array([container, name]), **kw)
        assert e.value.message == NOT_FOUND.format(container + name)
        assert str(e.value).endswith(f"[Op:{op}]") and isinstance(e.value, LookupError)


def test_an_array_whose_handles_are_gone_is_not_found():
    h, f = _array("gone")
    name = h.name
    del h
    gc.collect()
    with pytest.raises(errors.NotFoundError):
        raw_ops.TensorArraySizeV3(handle=["_tensor_arrays", name], flow_in=f)


@pytest.mark.parametrize(
    ("handle", "shape"),
    [(np.array("x"), "[]"), ([b"a", b"b", b"c"], "[3]"), (np.array([["a"], ["b"], ["c"]]), "[3,1]"),
     (np.array([], dtype="U1"), "[0]")],
)  # fmt: skip
def test_strings_that_are_not_two(handle, shape):
    h, f = _array()
    with pytest.raises(errors.InvalidArgumentError) as e:
        raw_ops.TensorArrayReadV3(handle=handle, index=0, flow_in=f, dtype=F32)
    assert e.value.message == f"Tensor array handle must be 2-element vector, but had shape: {shape}"


def test_a_bare_string_is_no_handle():
    """TensorFlow's V3 ops refuse a ``str`` where the handle belongs (its conversion's ``TypeError``)."""
    h, f = _array()
    with pytest.raises(TypeError, match="handle"):
        raw_ops.TensorArraySizeV3(handle=h.name, flow_in=f)


def test_gradient_op_takes_only_the_forward_container():
    h, f = _array()
    g = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
    for container, name in [("_tensor_array_grads", g.grad_handle.name), ("x", h.name)]:
        for op, kw in [("TensorArrayGradV3", {}), ("TensorArrayGradWithShape", {"shape_to_prepend": [1]})]:
            with pytest.raises(errors.InvalidArgumentError) as e:
                getattr(raw_ops, op)(handle=[container, name], flow_in=f, source="s", **kw)
            assert e.value.message == f"Input container should be '_tensor_arrays',  but received '{container}'"
    # a gradient array's name under the forward container is simply not there
    with pytest.raises(errors.NotFoundError):
        raw_ops.TensorArrayGradV3(handle=["_tensor_arrays", g.grad_handle.name], flow_in=f, source="s")


@pytest.mark.oracle
def test_tensorflow_looks_the_name_up_so():
    tf = pytest.importorskip("tensorflow")
    from tests.helpers.oracle_util import tf_kernel_message

    h, f = tf.raw_ops.TensorArrayV3(size=2, dtype=tf.float32, tensor_array_name="shtf")
    f = tf.raw_ops.TensorArrayWriteV3(handle=h, index=0, value=[1.0, 2.0], flow_in=f)
    f = tf.raw_ops.TensorArrayWriteV3(handle=h, index=1, value=[3.0, 4.0], flow_in=f)
    unique = repr(h).split('name="_tensor_arrays')[1].split('"')[0]  # the unique name, from the handle's repr
    value, lengths = tf.raw_ops.TensorArrayConcatV2(handle=np.array([b"_tensor_arrays", unique.encode()]), flow_in=f,
                                                     dtype=tf.float32)  # fmt: skip
    np.testing.assert_array_equal(value.numpy(), [1, 2, 3, 4])
    mine, mf = _array()
    for handle, cls in [
        (np.array([b"_tensor_arrays", b"nope"]), "NotFoundError"),
        (np.array([b"a", b"b"]), "NotFoundError"),
        (np.array([b"a", b"b", b"c"]), "InvalidArgumentError"),
    ]:
        with pytest.raises(getattr(tf.errors, cls)) as theirs:
            tf.raw_ops.TensorArrayConcatV2(handle=handle, flow_in=f, dtype=tf.float32)
        with pytest.raises(getattr(errors, cls)) as ours:
            raw_ops.TensorArrayConcatV3(handle=handle, flow_in=mf, dtype=F32)
        assert ours.value.message == tf_kernel_message(theirs.value)
