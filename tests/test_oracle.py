"""Oracle tests: the same op programs through tf.raw_ops (eager) and numba_ta.raw_ops.

Every program runs on both backends step by step (see ``oracle_util.py``): results, flows,
sizes, error classes and kernel messages must agree.  After a failing step the TF side is
replayed without it, because numba_ta is atomic and TF is not (docs/tensorflow-migration.rst,
"Deliberate divergences", item 1).  Steps on which TF crashes (TensorFlow semantics reference,
docs/semantics.rst, section ``sem-crashes``) are never sent to TF.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import pytest

tf = pytest.importorskip("tensorflow")

import contextlib  # noqa: E402
import random  # noqa: E402
import warnings  # noqa: E402

import numpy as np  # noqa: E402

from tests.helpers.fuzz_programs import create_kwargs, partial_shape, shape_like  # noqa: E402
from tests.helpers.oracle_util import Runner, S, run  # noqa: E402

# NUMBA_TA_ORACLE_SELFTEST=1 runs every program TF-against-TF (checks the programs' intents
# and the driver without numba_ta); the tests calling numba_ta directly are skipped then.
SELFTEST = os.environ.get("NUMBA_TA_ORACLE_SELFTEST") == "1"
if not SELFTEST:
    import numba_ta
    from numba_ta import raw_ops as nb_ops

pytestmark = pytest.mark.oracle
needs_numba_ta = pytest.mark.skipif(SELFTEST, reason="self-test mode: TF only")


def a(values, dtype="float32"):
    return np.array(values, dtype=dtype)


def ta(out=("h", "f"), size=3, dtype="float32", **kw):
    return S("V3", size=size, dtype=dtype, out=out, **kw)


def w(index, value, h="h", f="f", **kw):
    return S("Write", handle=h, index=index, value=value, flow_in=f, **kw)


def rd(index, h="h", f="f", dtype="float32", **kw):
    return S("Read", handle=h, index=index, flow_in=f, dtype=dtype, **kw)


def ga(indices, h="h", f="f", dtype="float32", **kw):
    return S("Gather", handle=h, indices=indices, flow_in=f, dtype=dtype, **kw)


def sc(indices, value, h="h", f="f", **kw):
    return S("Scatter", handle=h, indices=indices, value=value, flow_in=f, **kw)


def cc(h="h", f="f", dtype="float32", **kw):
    return S("Concat", handle=h, flow_in=f, dtype=dtype, **kw)


def sp(value, lengths, h="h", f="f", **kw):
    return S("Split", handle=h, value=value, lengths=lengths, flow_in=f, **kw)


def sz(h="h", f="f", **kw):
    return S("Size", handle=h, flow_in=f, **kw)


def cl(h="h", **kw):
    return S("Close", handle=h, **kw)


def gr(source="gradients", h="h", f="f", out=("g", "gf"), **kw):
    return S("Grad", handle=h, flow_in=f, source=source, out=out, **kw)


def gws(shape, source="gradients", h="h", f="f", out=("g", "gf"), **kw):
    return S("GradWithShape", handle=h, flow_in=f, shape_to_prepend=shape, source=source, out=out, **kw)


OK = "ok"
T1 = r"^TensorArray <h> has already been closed\.$"
NOT_RESIZEABLE = "but array is not resizeable and size is: "


def check(*program):
    """Run a program and require every ``err`` intent to hold (the driver checks them)."""
    return run(list(program), numba=not SELFTEST)


# ----------------------------------------------------------------------------------------
# TensorArrayV3 (semantics reference: sem-create)


def test_create_size_not_scalar():
    check(
        S(
            "V3",
            size=[2, 3],
            dtype="float32",
            out=("h", "f"),
            err=r"^TensorArray size must be scalar, but had shape: \[2\]$",
        )
    )


def test_create_negative_size():
    check(S("V3", size=-1, dtype="float32", out=("h", "f"), err=r"^Size should be >= 0\.$"))


def test_create_size_zero_and_names():
    check(
        ta(size=0, err=OK),
        sz(err=OK),
        ta(out=("h2", "f2"), size=1, tensor_array_name="foo", err=OK),
        w(
            1,
            a([1.0]),
            h="h2",
            f="f2",
            err=r"^TensorArray <h2>: Tried to write to index 1 but array is not resizeable and size is: 1$",
        ),
        rd(3, h="h2", err=r"^Tried to read from index 3 but array size is: 1$"),
    )


def test_create_op_name_is_not_the_array_name_in_eager():
    # eager raw ops ignore `name`: the unique name is "TensorArrayV3_<n>"
    r = check(ta(name="bar", err=OK), w(7, a(1.0), err=r"TensorArray <h>: Tried to write to index 7"))
    assert r.results[1].message.startswith("TensorArray TensorArrayV3_")


@pytest.mark.parametrize("name", ["foo", "foo_7", "x@y", "TensorArrayV3", "_tensor_array_grads", "a/b"])
def test_create_tensor_array_names(name):
    check(
        ta(tensor_array_name=name, err=OK),
        w(3, a(1.0), err=r"^TensorArray <h>: Tried to write"),
        gr(source="gradients_1", err=OK),
        gr(source="a@b", out=("g2", "gf2"), err=OK),
        w(3, a(1.0), h="g", f="gf", err=r"^TensorArray <h>@gradients_1: Tried to write"),
        w(3, a(1.0), h="g2", f="gf2", err=r"^TensorArray <h>@a@b: Tried to write"),
        gr(h="g2", f="gf2", out=("gg", "ggf"), err=r"^Wrong input container\. _tensor_array_grads<h>@a@b$"),
    )


def test_create_python_layer_errors_loose():
    # TF's Python layer refuses these while converting arguments (TypeError/ValueError)
    check(S("V3", size=1.5, dtype="float32", out=("h", "f")))
    check(ta(err=OK), S("Write", handle="h", index=1.5, value=a(1.0), flow_in="f"))


# ----------------------------------------------------------------------------------------
# TensorArrayWriteV3 (sem-write)


def test_write_flow_passthrough_and_basic():
    check(
        ta(element_shape=[2]),
        S("Write", handle="h", index=0, value=a([1, 2]), flow_in=42.0, out="f1", err=OK),
        S("Write", handle="h", index=1, value=a([3, 4]), flow_in="f1", out="f2", err=OK),
        rd(0, f="f2", err=OK),
        rd(1, f="f2", err=OK),
        rd(2, f="f2", err=OK),  # unwritten + fully defined -> zeros
        sz(f="f2", err=OK),
    )


def test_write_index_not_scalar_k6():
    check(ta(), w([0], a(1.0), err=r"^TensorArray index must be scalar, but had shape: \[1\]$"))


@pytest.mark.parametrize(
    "value,name",
    [
        (a([1, 2], "int32"), "int32"),
        (a([1, 2], "float64"), "double"),
        ([1, 2], "int32"),
        (a([1, 2], "float16"), "half"),
    ],
)
def test_write_dtype_mismatch_k7(value, name):
    check(ta(), w(0, value, err=rf"^TensorArray dtype is float but Op is trying to write dtype {name}\.$"))


def test_write_dtype_mismatch_does_not_grow_dynamic():
    check(ta(size=1, dynamic_size=True), w(5, a([1], "int32"), err="trying to write dtype int32"), sz(err=OK))


def test_write_closed_t1():
    check(ta(), w(0, a(1.0), err=OK), cl(), w(1, a(1.0), err=T1), sz(err=T1), cl(err=OK))


@pytest.mark.parametrize("dynamic", [False, True])
def test_write_out_of_range_t2(dynamic):
    check(
        ta(dynamic_size=dynamic),
        w(-1, a(1.0), err=rf"^TensorArray <h>: Tried to write to index -1 {NOT_RESIZEABLE}3$"),
        w(3, a(1.0), err=OK if dynamic else rf"^TensorArray <h>: Tried to write to index 3 {NOT_RESIZEABLE}3$"),
        sz(err=OK),
    )


def test_write_dynamic_growth():
    check(
        ta(size=0, dynamic_size=True),
        w(4, a([1.0, 2.0]), err=OK),
        sz(err=OK),
        rd(4, err=OK),
        rd(0, err="Could not read from TensorArray index 0"),
    )


def test_write_partial_shape_t4():
    msg = (
        r"^TensorArray <h>: Could not write to TensorArray index 0 because the value shape is \[2,4\] which is "
        r"incompatible with the TensorArray's inferred element shape: \[\?,3\] "
        r"\(consider setting infer_shape=False\)\.$"
    )
    check(
        ta(element_shape=[None, 3]),
        w(0, np.ones((2, 4), np.float32), err=msg),
        w(0, np.ones((5, 3), np.float32), err=OK),
        rd(0, err=OK),
    )


def test_write_identical_element_shapes_inference():
    check(
        ta(identical_element_shapes=True),
        w(0, a(1.0), err=OK),
        w(
            1,
            a([1.0]),
            err=r"because the value shape is \[1\] which is incompatible with the TensorArray's inferred element "
            r"shape: \[\] ",
        ),
        rd(2, err=OK),  # element shape inferred as [] -> zeros
        ga([0, 2], err="Could not read index 2 twice"),
    )


def test_write_twice_t6_and_after_read_t5():
    check(
        ta(),
        w(0, a(1.0), err=OK),
        w(
            0,
            a(2.0),
            err=r"^TensorArray <h>: Could not write to TensorArray index 0 because it has already been written to\.$",
        ),
        rd(0, err=OK),
        w(
            0,
            a(2.0),
            err=r"^TensorArray <h>: Could not write to TensorArray index 0 because it has already been read\.$",
        ),
        rd(0, err=r"twice because it was cleared"),
    )


def test_write_after_zero_read_t5_and_after_failed_read():
    check(
        ta(element_shape=[2]),
        rd(0, err=OK),  # zero-filled read marks the slot read
        w(0, a([1, 2]), err="because it has already been read"),
        ta(out=("u", "uf")),
        rd(0, h="u", err="element shape is not fully defined"),  # failed read: slot stays writable
        w(0, a([1, 2]), h="u", err=OK),
        rd(0, h="u", err=OK),
    )


def test_write_after_gather_zero_fill_t5():
    check(ta(element_shape=[2]), ga([0, 1], err=OK), w(1, a([1, 2]), err="already been read"), w(2, a([1, 2]), err=OK))


def test_failed_dynamic_write_grows_tf_not_numba_ta():
    # TF: error, then Size()=6 and idx 3 reads as zeros; numba_ta is atomic (replay checks it)
    check(
        ta(size=1, dynamic_size=True, element_shape=[2]),
        w(5, a([1, 2, 3]), err="incompatible with the TensorArray's inferred element shape: \\[2\\]"),
        sz(err=OK),
        rd(3, err=r"^Tried to read from index 3 but array size is: 1$"),
        w(2, a([1, 2]), err=OK),
        rd(1, err=OK),
    )


def test_failed_scatter_keeps_no_shape_inference_in_numba_ta():
    # identical_element_shapes: TF writes index 0 (inferring [2]) before failing with T6
    check(
        ta(identical_element_shapes=True),
        sc([0, 0], a([[1, 2], [3, 4]]), err="index 0 because it has already been written to"),
        w(1, a([1, 2, 3]), err=OK),
        w(0, a([5, 6]), err=r"inferred element shape: \[3\]"),
    )


# ----------------------------------------------------------------------------------------
# TensorArrayReadV3 (sem-read)


def test_read_errors():
    check(
        ta(),
        w(0, a(1.0)),
        rd([0], err=r"^TensorArray index must be scalar, but had shape: \[1\]$"),
        rd(0, dtype="int32", err=r"^TensorArray dtype is float but Op requested dtype int32\.$"),
        rd(5, err=r"^Tried to read from index 5 but array size is: 3$"),
        rd(-1, err=r"^Tried to read from index -1 but array size is: 3$"),
        rd(
            1,
            err=(
                r"^TensorArray <h>: Could not read from TensorArray index 1\.  Furthermore, the element shape is not "
                r"fully defined: <unknown>\.  It is possible you are working with a resizeable TensorArray and "
                r"stop_gradients is not allowing the gradients to be written\.  If you set the full element_shape "
                r"property on the forward "
                r"TensorArray, the proper all-zeros tensor will be returned instead of incurring this error\.$"
            ),
        ),
        rd(0, err=OK),
        rd(
            0,
            err=(
                r"^TensorArray <h>: Could not read index 0 twice because it was cleared after a previous read "
                r"\(perhaps try setting clear_after_read = false\?\)\.$"
            ),
        ),
        cl(),
        rd(0, err=T1),
    )


def test_read_dynamic_beyond_size_is_t9():
    check(
        ta(size=2, dynamic_size=True, element_shape=[2]),
        rd(2, err=r"^Tried to read from index 2 but array size is: 2$"),
    )


def test_read_unwritten_partial_shape_t10():
    check(ta(element_shape=[None, 3]), rd(0, err=r"element shape is not fully defined: \[\?,3\]\."))


def test_read_unwritten_full_shape_zeros():
    check(ta(element_shape=[2, 3]), rd(1, err=OK), rd(1, err="twice because it was cleared"))


def test_read_many_without_clear():
    check(
        ta(clear_after_read=False, element_shape=[2]),
        w(1, a([1, 2])),
        rd(1, err=OK),
        rd(1, err=OK),
        rd(0, err=OK),
        rd(0, err=OK),
        ga([1, 1, 0], err=OK),
    )


# ----------------------------------------------------------------------------------------
# TensorArrayGatherV3 (sem-gather)


def test_gather_dtype_k8():
    check(
        ta(),
        w(0, a(1.0)),
        ga([0], dtype="float64", err=r"^TensorArray dtype is float but Op requested dtype double\.$"),
    )


def test_gather_merge_errors():
    check(
        ta(element_shape=[2]),
        ga([0], element_shape=[3], err=r"^PartialTensorShape: Incompatible shapes during merge: \[2\] vs\. \[3\]$"),
        ga([0], element_shape=[2, 1], err=r"^PartialTensorShape: Incompatible ranks during merge: 1 vs\. 2$"),
        ga([0, 1], element_shape=[2], err=OK),
    )


def test_gather_indices_not_vector_g2():
    check(ta(element_shape=[2]), ga([[0]], err=r"^Expected indices to be a vector, but received shape: \[1,1\]$"))


def test_gather_empty_g3_and_closed():
    check(
        ta(),
        ga(
            np.zeros(0, np.int32),
            err=(
                r"^TensorArray has size zero, but element shape <unknown> is not fully defined\. Currently only static "
                r"shapes are supported when packing zero-size TensorArrays\.$"
            ),
        ),
        ga(np.zeros(0, np.int32), element_shape=[None, 2], err=r"element shape \[\?,2\] is not fully defined"),
        ga(np.zeros(0, np.int32), element_shape=[2], err=OK),
        cl(),
        ga(np.zeros(0, np.int32), element_shape=[2], err=OK),  # no closed check for empty indices
        ga([0], element_shape=[2], err=T1),
    )


def test_gather_duplicates_clear_after_read_partial():
    # TF clears index 1 then fails; numba_ta clears nothing (replay checks the later read)
    check(
        ta(),
        w(1, a([1.0])),
        w(0, a([2.0])),
        ga([0, 1, 1], err=r"^TensorArray <h>: Could not read index 1 twice because it was cleared"),
        rd(1, err=OK),
        rd(0, err=OK),
    )


def test_gather_attr_mismatch_g4_narrowing():
    # TF narrows the element shape to [3] even though the gather fails; numba_ta does not
    check(
        ta(),
        w(0, a([1, 2])),
        ga(
            [0],
            element_shape=[3],
            err=r"^TensorArray was passed element_shape \[3\] which does not match the Tensor at index 0: \[2\]$",
        ),
        w(1, a([3, 4]), err=OK),
        rd(2, err="not fully defined: <unknown>"),
    )


def test_gather_attr_narrows_on_success():
    check(
        ta(),
        w(0, a([1, 2])),
        ga([0], element_shape=[None], err=OK),
        rd(2, err=r"not fully defined: \[\?\]"),
        ga([0], element_shape=[2], err=r"twice because it was cleared"),
        ta(out=("u", "uf"), clear_after_read=False),
        w(0, a([1, 2]), h="u"),
        ga([0], h="u", element_shape=[2], err=OK),
        rd(2, h="u", err=OK),  # now zeros of [2]
        w(1, a([1, 2, 3]), h="u", err=r"inferred element shape: \[2\]"),
    )


def test_gather_inconsistent_g5():
    check(
        ta(),
        w(0, a([1.0])),
        w(1, a([1.0, 2.0])),
        ga(
            [1, 0],
            err=r"^TensorArray has inconsistent shapes\.  Index 0 has shape: \[2\] but index 1 has shape: \[1\]$",
        ),
        ga([0], err=OK),
    )


@pytest.mark.parametrize(
    "shapes",
    [[(0,), (2,)], [(0, 2), (0, 3)], [(0, 2), (3,)], [(0,), ()], [(1, 0), (2, 0)], [(2,), (0,)]],
    ids=str,
)
def test_gather_first_element_empty_skips_shape_check(shapes):
    # TF allocates [n] ++ shape(values[0]) and returns at once when that has no elements,
    # before comparing the other elements' shapes (G5 only when values[0] is non-empty)
    prog = [ta(size=len(shapes), clear_after_read=False)]
    prog += [w(i, np.zeros(s, np.float32)) for i, s in enumerate(shapes)]
    prog += [ga(list(range(len(shapes))), err=OK if 0 in shapes[0] else "inconsistent shapes"), cc()]
    check(*prog)


def test_gather_out_of_range_and_zeros():
    check(
        ta(element_shape=[2]),
        w(0, a([1, 2])),
        ga([0, 3], err=r"^Tried to read from index 3 but array size is: 3$"),
        ga([-1], err=r"^Tried to read from index -1 but array size is: 3$"),
        ga([2, 0, 1], err=OK),
    )


# ----------------------------------------------------------------------------------------
# TensorArrayScatterV3 (sem-scatter)


def test_scatter_basic_and_flow():
    check(
        ta(element_shape=[2]),
        S("Scatter", handle="h", indices=[2, 0], value=a([[1, 2], [3, 4]]), flow_in=7.0, out="f1", err=OK),
        ga([0, 1, 2], f="f1", err=OK),
    )


def test_scatter_errors():
    check(
        ta(),
        sc([0], a([1], "int32"), err=r"^TensorArray dtype is float but Op is trying to write dtype int32\.$"),
        sc([0], a(1.0), err=r"^Input value for unpack must be at least a vector but received shape: \[\]$"),
        sc([[0]], a([[1.0]]), err=r"^Expected indices to be a vector, but received shape: \[1,1\]$"),
        sc([0, 1], a([1.0, 2.0, 3.0]), err=r"^Expected len\(indices\) == values\.shape\[0\], but saw: 2 vs\. 3$"),
        sc([0, 3, 1], a([1.0, 2.0, 3.0]), err=r"^Max scatter index must be < array size \(3 vs\. 3\)$"),
        sc(np.zeros(0, np.int32), np.zeros((0, 2), np.float32), err=OK),
        cl(),
        sc([0], a([1.0]), err=T1),
    )


def test_scatter_partial_negative_index():
    # TF writes index 0 then fails with T2 on -1; numba_ta writes nothing
    check(
        ta(),
        sc([0, -1], a([1.0, 2.0]), err=rf"^TensorArray <h>: Tried to write to index -1 {NOT_RESIZEABLE}3$"),
        w(0, a(5.0), err=OK),
        rd(0, err=OK),
    )


def test_scatter_partial_duplicate_t6():
    check(
        ta(),
        sc([0, 1, 1], a([1.0, 2.0, 3.0]), err="index 1 because it has already been written to"),
        ga([0, 1], err="Could not read from TensorArray index 0"),
        w(1, a(4.0), err=OK),
    )


def test_scatter_dynamic_growth_and_unstack():
    check(
        ta(size=1, dynamic_size=True),
        sc([3, 1], a([[1.0], [2.0]]), err=OK),
        sz(err=OK),
        sc([0, 1, 2], a([[1.0], [2.0], [3.0]]), err="index 1 because it has already been written to"),
        ta(out=("u", "uf"), identical_element_shapes=True),
        sc(
            [0, 1, 2, 3],
            np.ones((4, 2), np.float32),
            h="u",
            err=r"^Max scatter index must be < array size \(3 vs\. 3\)$",
        ),
        sc([0, 1], np.ones((2, 2), np.float32), h="u", err=OK),
        rd(2, h="u", err=OK),
    )


# ----------------------------------------------------------------------------------------
# TensorArrayConcatV3 (sem-concat)


def test_concat_basic_and_zero_rows():
    check(
        ta(),
        w(0, a([[1, 2]])),
        w(1, a([[3, 4], [5, 6]])),
        w(2, np.zeros((0, 2), np.float32)),
        cc(err=OK),
        ta(out=("u", "uf"), size=2, element_shape=[2, 3]),
        cc(h="u", err=OK),  # zeros [4,3], lengths [2,2]
    )


def test_concat_size_zero():
    check(
        ta(size=0),
        cc(
            err=(
                r"^TensorArray has size zero, but element_shape_except0 <unknown> is not fully defined\. "
                r"Currently only "
                r"static shapes are supported when concatenating zero-size TensorArrays\.$"
            )
        ),
        cc(element_shape_except0=[None], err=r"element_shape_except0 \[\?\] is not fully defined"),
        cc(element_shape_except0=[2], err=OK),
    )


def test_concat_errors():
    check(
        ta(size=1),
        w(0, a(1.0)),
        cc(err=r"^Concat saw a scalar shape at index 0 but requires at least vectors\.  Did you mean to call pack\?$"),
    )
    check(
        ta(size=2),
        w(0, a([[1, 2]])),
        w(1, a([[1, 2, 3]])),
        cc(
            element_shape_except0=[3],
            err=(
                r"^TensorArray was passed element_shape_except0 \[3\] but index 0 has \(excepting dimension 0\) shape: "
                r"\[2\] which does not match\.$"
            ),
        ),
        cc(dtype="int32", err=r"^TensorArray dtype is float but Op requested dtype int32\.$"),
        cc(
            err=(
                r"^TensorArray has inconsistent shapes\.  Index 0 has \(excepting dimension 0\) shape: \[2\] "
                r"but index 1 "
                r"has \(excepting dimension 0\) shape: \[3\]$"
            )
        ),
    )
    check(ta(size=2), w(1, a([1.0])), cc(err=r"Could not read from TensorArray index 0\.  Furthermore"))
    check(ta(size=2), cl(), cc(err=T1))


def test_concat_checks_element_by_element():
    """C2 at index i, then C3 (i == 0) or C4 (i > 0): the first failing index decides.

    Found by fuzz seed 70831: numba_ta checked every element for C2 before C3 and C4.
    """
    c3 = r"^TensorArray was passed element_shape_except0 \[\] but index 0 has"
    check(
        ta(size=2),
        w(0, np.zeros((1, 0), np.float32)),
        w(1, a(9.0)),
        cc(element_shape_except0=[], err=c3),  # C3 at 0 before C2 at 1
        cc(err=r"^Concat saw a scalar shape at index 1 "),
    )
    check(
        ta(size=4),
        w(0, a([1.0, 2.0])),
        w(1, a([[1.0], [2.0]])),
        w(2, a(3.0)),
        w(3, a([4.0])),
        cc(
            err=r"^TensorArray has inconsistent shapes\.  Index 0 has \(excepting dimension 0\) shape: \[\] but "
            r"index 1 "
        ),
    )
    check(
        ta(size=3),
        w(0, a([1.0, 2.0])),
        w(1, a(3.0)),
        w(2, a([[1.0], [2.0]])),
        cc(err=r"^Concat saw a scalar shape at index 1 "),  # C2 at 1 before C4 at 2
    )


# ----------------------------------------------------------------------------------------
# TensorArraySplitV3 (sem-split)


def test_split_basic_and_zero_lengths():
    check(
        ta(),
        S("Split", handle="h", value=a([[1, 2], [3, 4], [5, 6]]), lengths=[2, 0, 1], flow_in=3.0, out="f1", err=OK),
        rd(0, err=OK),
        rd(1, err=OK),
        rd(2, err=OK),
        ta(out=("u", "uf"), element_shape=[1, 2]),
        sp(a([[1, 2], [3, 4], [5, 6]]), [1, 2, 0], h="u", err=r"index 1 because the value shape is \[2,2\]"),
        sp(a([[1, 2], [3, 4], [5, 6]]), [1, 1, 1], h="u", err=OK),
        cc(h="u", err=OK),
    )


def test_split_errors():
    v = a([1.0, 2.0, 3.0])
    check(
        ta(),
        sp(v, [[1, 2]], err=r"^Expected lengths to be a vector, received shape: \[1,2\]$"),
        sp(a(1.0), [1], err=r"^Expected value to be at least a vector, but received shape: \[\]$"),
        sp(
            v,
            [1, 1],
            err=r"^Expected sum of lengths to be equal to values\.shape\[0\], but sum of lengths is 2 and value's "
            r"shape is: \[3\]$",
        ),
        sp(
            v,
            [1, 2],
            err=(
                r"^TensorArray's size is not equal to the size of lengths \(3 vs\. 2\), and the TensorArray is not "
                r"marked as "
                r"dynamically resizeable$"
            ),
        ),
        sp(
            a([1, 2, 3], "int32"),
            [1, 1, 1],
            err=r"^TensorArray dtype is float but Op is trying to write dtype int32\.$",
        ),
        sp(v, [1, 1, 1], err=OK),
        sp(v, [1, 1, 1], err="already been written to"),
        cl(),
        sp(v, [1, 1, 1], err=T1),
    )


def test_split_dynamic_grows_never_shrinks():
    check(
        ta(size=2, dynamic_size=True),
        sp(a([1.0, 2.0, 3.0, 4.0, 5.0]), [1, 1, 1, 1, 1], err=OK),
        sz(err=OK),
        ta(out=("u", "uf"), size=5, dynamic_size=True),
        sp(
            a([1.0, 2.0]),
            [1, 1],
            h="u",
            err=r"\(5 vs\. 2\), and the TensorArray is not marked as dynamically resizeable$",
        ),
    )


def test_split_negative_length_crashes_tf():
    # TF aborts ("Check failed: size >= 0"); numba_ta must raise InvalidArgumentError
    check(
        ta(size=2), sp(a([1.0, 2.0, 3.0]), [4, -1], tf_crash=True), sp(a([1.0, 2.0, 3.0]), [2, 1], err=OK), cc(err=OK)
    )


# ----------------------------------------------------------------------------------------
# Size and Close (sem-size, sem-close)


def test_close_then_everything_t1():
    check(
        ta(element_shape=[2]),
        w(0, a([1, 2])),
        cl(err=OK),
        cl(err=OK),
        sz(err=T1),
        w(1, a([1, 2]), err=T1),
        rd(0, err=T1),
        ga([0], err=T1),
        sc([1], a([[1, 2]]), err=T1),
        cc(err=T1),
        sp(a([[1, 2], [3, 4], [5, 6]]), [1, 1, 1], err=T1),
        gr(err=T1),
        gws([2], err=T1),
    )


# ----------------------------------------------------------------------------------------
# TensorArrayGradV3 / TensorArrayGradWithShape (sem-grad-op)


def test_grad_flow_and_names():
    check(
        ta(element_shape=[2]),
        S("Write", handle="h", index=0, value=a([1, 2]), flow_in=42.0, out="f1"),
        S("Grad", handle="h", flow_in="f1", source="gradients", out=("g", "gf"), err=OK),
        S("Grad", handle="h", flow_in=5.0, source="gradients_1", out=("g1", "gf1"), err=OK),
        S("GradWithShape", handle="h", flow_in=5.0, shape_to_prepend=[4], source="pfor", out=("g2", "gf2"), err=OK),
        w(
            5,
            a([1, 2]),
            h="g",
            f="gf",
            err=rf"^TensorArray <h>@gradients: Tried to write to index 5 {NOT_RESIZEABLE}3$",
        ),
        w(5, a([1, 2]), h="g2", f="gf2", err=rf"^TensorArray <h>@pfor: Tried to write to index 5 {NOT_RESIZEABLE}3$"),
    )


def test_grad_of_grad_wrong_container():
    check(
        ta(),
        gr(),
        gr(h="g", f="gf", out=("gg", "ggf"), err=r"^Wrong input container\. _tensor_array_grads<h>@gradients$"),
        gws([1], h="g", f="gf", out=("gg", "ggf"), err=r"^Wrong input container\. _tensor_array_grads<h>@gradients$"),
    )


def test_grad_key_sharing_first_creator_wins():
    check(
        ta(element_shape=[3]),
        w(0, a([1, 2, 3])),
        gws([4], source="g2", out=("g", "gf"), err=OK),
        gws([5, 7], source="g2", out=("g_b", "gf_b"), err=OK),
        w(1, np.ones((5, 7, 3), np.float32), h="g_b", f="gf_b", err=r"inferred element shape: \[4,3\]"),
        w(1, np.full((4, 3), 2, np.float32), h="g_b", f="gf_b", err=OK),
        gr(source="g2", out=("g_c", "gf_c"), err=OK),
        rd(1, h="g_c", f="gf_c", err=OK),  # the [4,3] contents written through g_b
        rd(0, h="g", f="gf", err=OK),  # forward-written: zeros of [4] ++ [3]
        rd(1, h="g", f="gf", err="twice because it was cleared"),
        gr(source="g3", out=("g3", "gf3"), err=OK),
        gws([9], source="g3", out=("g3b", "gf3b"), err=OK),  # GradV3 first: prepend ignored
        w(0, np.ones((9, 3), np.float32), h="g3b", f="gf3b", err=r"inferred element shape: \[3\]"),
        w(0, a([1, 1, 1]), h="g3b", f="gf3b", err=OK),
    )


def test_grad_locks_forward_dynamic_size():
    check(
        ta(size=2, dynamic_size=True),
        w(3, a(1.0), err=OK),
        gr(err=OK),
        w(4, a(1.0), err=rf"^TensorArray <h>: Tried to write to index 4 {NOT_RESIZEABLE}4$"),
        sc([5], a([1.0]), err=r"^Max scatter index must be < array size \(5 vs\. 4\)$"),
        sp(a([1.0, 2.0, 3.0, 4.0, 5.0]), [1, 1, 1, 1, 1], err=r"\(4 vs\. 5\)"),
        sz(h="g", f="gf", err=OK),
        w(4, a(1.0), h="g", f="gf", err=NOT_RESIZEABLE),
    )


def test_failed_grad_with_shape_locks_in_tf_only():
    # TF disables dynamic size before parsing shape_to_prepend; numba_ta is atomic
    check(
        ta(size=1, dynamic_size=True),
        gws([-1], err=r"^Dimension -1 must be >= 0$"),
        gws([[1]], err=r"^shape must be a vector of \{int32,int64\}, got shape \[1,1\]$"),
        gws(3, err=r"^shape must be a vector of \{int32,int64\}, got shape \[\]$"),
        w(3, a(1.0), err=OK),
        sz(err=OK),
    )


def test_grad_on_closed_forward():
    check(ta(), cl(), gr(err=T1), gws([2], err=T1))


def test_grad_read_past_end_grows():
    check(
        ta(element_shape=[2]),
        w(0, a([1, 2])),
        gr(),
        rd(6, h="g", f="gf", err=OK),
        sz(h="g", f="gf", err=OK),  # 7
        rd(5, h="g", f="gf", err=OK),
        rd(-1, h="g", f="gf", err=r"^Tried to read from index -1 but array size is: 7$"),
        w(7, a([1, 2]), h="g", f="gf", err=rf"Tried to write to index 7 {NOT_RESIZEABLE}7$"),
        sz(err=OK),  # forward unchanged: 3
        ta(out=("u", "uf")),
        gr(h="u", f="uf", out=("ug", "ugf")),
        rd(
            4,
            h="ug",
            f="ugf",
            err=r"^TensorArray <u>@gradients: Could not read from TensorArray index 4\.  Furthermore, the element "
            r"shape is not fully defined: <unknown>\.",
        ),
        sz(h="ug", f="ugf", err=OK),
    )


@pytest.mark.parametrize("dtype", ["float32", "int32", "float64", "int64", "float16", "complex64", "uint8"])
def test_grad_aggregation_sums(dtype):
    check(
        ta(dtype=dtype),
        w(1, a([0, 0, 0], dtype)),
        gr(),
        w(1, a([1, 1, 1], dtype), h="g", f="gf", err=OK),
        w(1, a([2, 2, 2], dtype), h="g", f="gf", err=OK),
        w(1, a([10, 10, 10], dtype), h="g", f="gf", err=OK),
        sc([2, 2, 0], a([[1, 2], [3, 4], [5, 6]], dtype), h="g", f="gf", err=OK),
        rd(1, h="g", f="gf", dtype=dtype, err=OK),  # [13,13,13]
        ga([2, 0], h="g", f="gf", dtype=dtype, err=OK),
        w(1, a([1, 1, 1], dtype), h="g", f="gf", err="already been read"),
    )


def test_grad_scatter_duplicates_sum():
    check(ta(size=2), gr(), sc([1, 1, 0], a([[1], [2], [3]]), h="g", f="gf", err=OK), ga([0, 1], h="g", f="gf", err=OK))


def test_grad_aggregate_shape_mismatch_t7():
    check(
        ta(),
        w(1, a([1, 2, 3])),
        gr(),
        w(
            1,
            a([1, 2]),
            h="g",
            f="gf",
            err=(
                r"^TensorArray <h>@gradients: Could not aggregate to TensorArray index 1 because the existing shape is "
                r"\[3\] but the new input shape is \[2\]\.$"
            ),
        ),
        w(0, a(1.0), h="g", f="gf", err=OK),
        w(0, a([1.0]), h="g", f="gf", err=r"existing shape is \[\] but the new input shape is \[1\]\.$"),
        w(0, a(2.0), h="g", f="gf", err=OK),
        rd(0, h="g", f="gf", err=OK),
        rd(1, h="g", f="gf", err=OK),  # zeros [3]
        rd(2, h="g", f="gf", err="not fully defined: <unknown>"),
    )


def test_grad_bool_aggregation_t8():
    check(
        ta(dtype="bool"),
        w(0, a([True, False], "bool")),
        gr(),
        w(0, a([True, True], "bool"), h="g", f="gf", err=OK),  # into a soft zero: stored, no add
        w(0, a([False, True], "bool"), h="g", f="gf", err=r"^tensor_array::AddToTensor type not supported: bool$"),
        w(1, a([True], "bool"), h="g", f="gf", err=OK),
        w(1, a([True], "bool"), h="g", f="gf", err=r"^tensor_array::AddToTensor type not supported: bool$"),
        rd(0, h="g", f="gf", dtype="bool", err=OK),
    )


def test_grad_identical_shapes_and_t4():
    check(
        ta(identical_element_shapes=True),
        w(0, a([1, 2])),
        gr(),
        w(2, a([1, 2, 3]), h="g", f="gf", err=r"inferred element shape: \[2\]"),
        rd(2, h="g", f="gf", err=OK),  # U slot, element shape [2] -> zeros
        rd(0, h="g", f="gf", err=OK),
        w(0, a([1, 2]), h="g", f="gf", err="already been read"),
    )


def test_grad_with_shape_prepend_and_unknown_rank():
    check(
        ta(element_shape=[None]),
        w(0, a([1, 2])),
        gws([3]),
        rd(0, h="g", f="gf", err=OK),  # zeros [3,2]
        rd(1, h="g", f="gf", err=r"not fully defined: \[3,\?\]\."),
        w(1, np.ones((2, 2), np.float32), h="g", f="gf", err=r"inferred element shape: \[3,\?\]"),
        w(1, np.ones((3, 5), np.float32), h="g", f="gf", err=OK),
        ta(out=("u", "uf")),
        w(1, a([1, 2]), h="u", f="uf"),
        gws([3, 1], h="u", f="uf", out=("ug", "ugf")),
        rd(0, h="ug", f="ugf", err="not fully defined: <unknown>"),  # prepend ignored for unknown rank
        rd(1, h="ug", f="ugf", err=OK),  # zeros [3,1,2]
        ta(out=("v", "vf"), element_shape=[2]),
        gws(np.zeros(0, np.int32), h="v", f="vf", out=("vg", "vgf")),
        rd(2, h="vg", f="vgf", err=OK),
    )


def test_grad_close_forward_keeps_grad():
    check(
        ta(element_shape=[2]),
        w(0, a([1, 2])),
        gr(),
        cl(),
        w(0, a([3, 4]), h="g", f="gf", err=OK),
        sz(h="g", f="gf", err=OK),
        rd(0, h="g", f="gf", err=OK),
        rd(1, h="g", f="gf", err=OK),
        cl(h="g"),
        rd(2, h="g", f="gf", err=r"^TensorArray <h>@gradients has already been closed\.$"),
    )


def test_grad_written_after_creation_and_zero_read_forward():
    check(
        ta(clear_after_read=False),
        rd(0, err="not fully defined"),
        ta(out=("u", "uf"), element_shape=[2]),
        rd(0, h="u", f="uf", err=OK),  # zero-read counts as written for CopyShapesFrom
        gr(h="u", f="uf", out=("ug", "ugf")),
        w(0, a([1, 2, 3]), h="ug", f="ugf", err=r"inferred element shape: \[2\]"),
        rd(0, h="ug", f="ugf", err=OK),
    )


def test_grad_concat_after_forward_split():
    check(
        ta(),
        sp(a([[1, 2], [3, 4], [5, 6]]), [1, 2, 0]),
        gr(),
        sp(
            a([[1, 1], [2, 2], [3, 3]]),
            [2, 1, 0],
            h="g",
            f="gf",
            err=r"existing shape is \[1,2\] but the new input shape is \[2,2\]",
        ),
        sp(a([[1, 1], [2, 2], [3, 3]]), [1, 2, 0], h="g", f="gf", err=OK),
        sp(a([[1, 1], [2, 2], [3, 3]]), [1, 2, 0], h="g", f="gf", err=OK),
        cc(h="g", f="gf", err=OK),
    )


def test_grad_concat_unsplit_forward_crashes_tf():
    # TF segfaults (marked size -1); numba_ta must raise InvalidArgumentError
    check(
        ta(),
        w(0, a([1.0])),
        gr(),
        w(0, a([2.0]), h="g", f="gf"),
        cc(h="g", f="gf", tf_crash=True),
        rd(0, h="g", f="gf", err=OK),
    )


def test_grad_forward_split_after_grad_creation_still_crashes_tf():
    check(ta(size=1), gr(), sp(a([1.0]), [1], err=OK), cc(h="g", f="gf", tf_crash=True))


# ----------------------------------------------------------------------------------------
# dtypes


DTYPES = ["float32", "float64", "int32", "int64", "bool", "float16", "complex64", "uint8"]
TF_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _vals(dtype, shape, start=1):
    n = int(np.prod(shape))
    v = np.arange(start, start + n).reshape(shape) % 7
    if dtype == "bool":
        return (v % 2 == 0).astype(bool)
    if dtype == "complex64":
        return (v + 1j * (v + 1)).astype(np.complex64)
    return v.astype(dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_dtypes(dtype):
    other = "int32" if dtype != "int32" else "float32"
    tn = TF_NAMES.get(dtype, dtype)
    on = TF_NAMES.get(other, other)
    check(
        ta(size=4, dtype=dtype, element_shape=[2]),
        w(0, _vals(dtype, (2,)), err=OK),
        w(1, _vals(other, (2,)), err=rf"^TensorArray dtype is {tn} but Op is trying to write dtype {on}\.$"),
        rd(0, dtype=dtype, err=OK),
        rd(3, dtype=dtype, err=OK),  # zeros of this dtype
        rd(0, dtype=other, err=rf"^TensorArray dtype is {tn} but Op requested dtype {on}\.$"),
        sc([1, 2], _vals(dtype, (2, 2), 3), err=OK),
        ga([2, 1], dtype=dtype, err=OK),
        ta(out=("u", "uf"), size=2, dtype=dtype, clear_after_read=False),
        sp(_vals(dtype, (3, 2), 5), [1, 2], h="u", f="uf", err=OK),
        cc(h="u", f="uf", dtype=dtype, err=OK),
        ga([1, 1], h="u", f="uf", dtype=dtype, err=OK),
        gr(h="u", f="uf", out=("ug", "ugf")),
        w(1, _vals(dtype, (2, 2), 2), h="ug", f="ugf", err=OK),
        w(1, _vals(dtype, (2, 2), 3), h="ug", f="ugf", err="type not supported: bool" if dtype == "bool" else OK),
        rd(1, h="ug", f="ugf", dtype=dtype, err=OK),
        rd(0, h="ug", f="ugf", dtype=dtype, err=OK),
        cc(h="ug", f="ugf", dtype=dtype, err="twice because it was cleared"),
    )


def test_python_values_convert_like_tf():
    check(
        ta(size=4),
        w(0, [1.0, 2.0], err=OK),
        w(1, 3.5, err=OK),
        w(2, [1, 2], err="trying to write dtype int32"),
        ta(out=("i", "if"), dtype="int32"),
        w(0, 3, h="i", f="if", err=OK),
        w(1, [[1, 2]], h="i", f="if", err=OK),
        w(2, 2.5, h="i", f="if", err="is int32 but Op is trying to write dtype float"),
        rd(0, h="i", f="if", dtype="int32", err=OK),
        ta(out=("b", "bf"), dtype="bool"),
        w(0, True, h="b", f="bf", err=OK),
        w(1, [True, False], h="b", f="bf", err=OK),
        ga([0], h="b", f="bf", dtype="bool", err=OK),
        w(2, [1.0], h="b", f="bf", err="is bool but Op is trying to write dtype float"),
    )


PY_VALUES = [
    [1, 2],
    [1.5],
    2**31,
    [2**31, 1],
    [],
    [[], []],
    [np.float64(1), 2],
    [1, 2.5],  # TF: float32
    (1, 2.0),
    [[1, 2], [3, 4.0]],
    [2**40, 1.5],
    [True, 1],  # TF's Python layer refuses mixed bool/number lists
    [True, 1.5],
    [1, 1j],
    1e40,  # does not fit float32: TF refuses
    [1e40, 1],
    2**63,
]


@pytest.mark.parametrize("value", PY_VALUES, ids=[repr(v)[:24] for v in PY_VALUES])
def test_python_value_conversion(value):
    # the dtype TF gives a Python value shows in which write succeeds (and in K7's text)
    prog = []
    for k, dtype in enumerate(["float32", "int32", "int64", "float64", "float16", "bool", "complex128", "uint8"]):
        prog += [ta(out=(f"h{k}", f"f{k}"), size=1, dtype=dtype), w(0, value, h=f"h{k}", f=f"f{k}")]
        prog += [rd(0, h=f"h{k}", f=f"f{k}", dtype=dtype)]
    check(*prog)


# ----------------------------------------------------------------------------------------
# element_shape × identical_element_shapes × dynamic_size × clear_after_read


@pytest.mark.parametrize("clear", [True, False], ids=["clear", "keep"])
@pytest.mark.parametrize("dynamic", [False, True], ids=["static", "dynamic"])
@pytest.mark.parametrize("identical", [False, True], ids=["free", "identical"])
@pytest.mark.parametrize("element_shape", [None, [None], [2], [None, 2]], ids=["unknown", "partial", "full", "rank2"])
def test_flag_matrix(element_shape, identical, dynamic, clear):
    check(
        ta(
            size=3,
            element_shape=element_shape,
            identical_element_shapes=identical,
            dynamic_size=dynamic,
            clear_after_read=clear,
        ),
        rd(2),
        w(0, a([1, 2])),
        w(1, a([[1, 2]])),
        w(4, a([3, 4])),
        sz(),
        w(1, a([5, 6, 7])),
        rd(0),
        rd(0),
        rd(1),
        ga([1, 0]),
        sc([2, 1], a([[1, 2], [3, 4]])),
        ga([1, 2]),
        cc(),
        gr(),
        w(5, a([1, 2])),
        rd(0, h="g", f="gf"),
        w(2, a([1, 1]), h="g", f="gf"),
        w(2, a([1, 1]), h="g", f="gf"),
        rd(2, h="g", f="gf"),
        rd(1, h="g", f="gf"),
        ga([2, 1, 0], h="g", f="gf"),
        ta(
            out=("u", "uf"),
            size=2,
            element_shape=element_shape,
            identical_element_shapes=identical,
            dynamic_size=dynamic,
            clear_after_read=clear,
        ),
        sp(a([[1, 2], [3, 4], [5, 6]]), [2, 1], h="u", f="uf"),
        sp(a([[1, 2], [3, 4], [5, 6]]), [1, 1, 1], h="u", f="uf"),
        sp(a([1.0, 2.0, 3.0, 4.0]), [2, 2], h="u", f="uf"),
        cc(h="u", f="uf"),
        cc(h="u", f="uf"),
        ga([0, 1], h="u", f="uf", element_shape=[2]),
        rd(1, h="u", f="uf"),
    )


# ----------------------------------------------------------------------------------------
# random programs


class _Gen:
    """Seeded generator of short op programs, mostly valid, some invalid, fed by the outcomes.

    Each array gets a base element shape; values mostly follow it, sometimes differ in
    dimension 0 (ragged storage), in trailing dimensions, in rank or in dtype.
    """

    DTYPES = ["float32", "int32", "float64", "bool", "int64", "float16", "complex64", "uint8"]
    BASES = [(2,), (1,), (), (2, 2), (3, 1), (0,), (1, 0)]

    def __init__(self, seed):
        self.r = random.Random(seed)
        self.tas = {}  # sym -> dict(dtype, shape, kind, fwd[, key])
        self.split_fwd = set()  # forward syms successfully split
        self.grad_marked = {}  # (fwd sym, source) -> bool
        self.n = 0
        self.pending = None

    def shape_like(self, shape):
        return shape_like(self.r, shape, self.BASES, (0.75, 0.9, 0.88, 0.95))

    def value(self, dtype, shape, exact=False):
        r = self.r
        if not exact:
            if r.random() < 0.07:
                dtype = r.choice(self.DTYPES)
            shape = self.shape_like(shape)
        v = np.array([r.randint(-3, 9) for _ in range(int(np.prod(shape)))]).reshape(shape)
        if dtype == "complex64":
            v = v + 1j * np.roll(v, 1)
        v = v.astype(dtype)
        if r.random() < 0.08 and dtype in ("float32", "int32", "bool"):
            return v.tolist()  # Python values: float -> float32, int -> int32
        return v

    def index(self, size, dynamic=False):
        r = self.r
        x = r.random()
        if x < 0.07:
            return -r.randint(1, 2)
        if x < 0.2:
            return size + (r.randint(0, 12) if dynamic else r.randint(0, 2))
        return r.randrange(max(size, 1))

    def flow(self, sym):
        return sym + "_f" if self.r.random() < 0.85 else float(self.r.randint(-2, 50))

    def create(self):
        r = self.r
        sym = f"t{self.n}"
        self.n += 1
        dtype = r.choice(self.DTYPES[:3]) if r.random() < 0.75 else r.choice(self.DTYPES)
        shape = r.choice(self.BASES)
        kw = create_kwargs(r, r.randint(0, 4), dtype, shape, ["foo", "TensorArrayV3"])
        self.tas[sym] = dict(dtype=dtype, shape=shape, kind="fwd", fwd=sym)
        return S("V3", out=(sym, sym + "_f"), **kw)

    def next(self, sizes):
        r = self.r
        live = [s for s in self.tas if sizes.get(s) is not None]
        if not live or r.random() < 0.06:
            return self.create()
        sym = r.choice(live)
        info = self.tas[sym]
        size = sizes[sym]
        dt, shape, f = info["dtype"], info["shape"], self.flow(sym)
        rdt = dt if r.random() < 0.93 else r.choice(self.DTYPES)
        dyn = info["kind"] == "fwd"
        op = r.choices(
            ["Write", "Read", "Gather", "Scatter", "Concat", "Split", "Size", "Close", "Grad", "GradWithShape"],
            [30, 20, 10, 10, 6, 6, 3, 2, 5, 3],
        )[0]
        if op == "Write":
            return w(self.index(size, dyn), self.value(dt, shape), h=sym, f=f)
        if op == "Read":
            return rd(self.index(size + (3 if info["kind"] == "grad" else 0)), h=sym, f=f, dtype=rdt)
        if op == "Gather":
            idx = [self.index(size) for _ in range(r.randint(0, 3))]
            kw = {"element_shape": partial_shape(self.r, shape)} if r.random() < 0.35 else {}
            return ga(np.array(idx, np.int32), h=sym, f=f, dtype=rdt, **kw)
        if op == "Scatter":
            k = r.randint(0, 3)
            idx = [self.index(size, dyn) for _ in range(k)]
            if k and r.random() < 0.6:
                idx = r.sample(range(max(size, k)), k)
            v = self.value(dt, (k,) + tuple(self.shape_like(shape)), exact=r.random() < 0.8)
            return sc(np.array(idx, np.int32), v, h=sym, f=f)
        if op == "Concat":
            if info["kind"] == "grad" and not self.grad_marked.get(info["key"], False):
                return cc(h=sym, f=f, dtype=rdt, tf_crash=True)
            kw = {"element_shape_except0": partial_shape(self.r, shape[1:])} if r.random() < 0.35 else {}
            return cc(h=sym, f=f, dtype=rdt, **kw)
        if op == "Split":
            n = size if r.random() < 0.8 else r.randint(0, size + 2)
            lengths = [r.choice([1, 1, 2, 0]) for _ in range(n)]
            if lengths and r.random() < 0.05:
                lengths[0] = -1
                v = self.value(dt, (max(sum(lengths), 0),) + tuple(shape[1:]), exact=True)
                return sp(v, lengths, h=sym, f=f, tf_crash=True)
            rows = sum(lengths) + (1 if r.random() < 0.08 else 0)
            trail = tuple(shape[1:]) if r.random() < 0.9 else (2,)
            return sp(self.value(dt, (rows,) + trail, exact=r.random() < 0.9), lengths, h=sym, f=f)
        if op == "Size":
            return sz(h=sym, f=f)
        if op == "Close":
            return cl(h=sym)
        source = r.choice(["gradients", "gradients_1"])
        if info["kind"] == "grad" and r.random() < 0.7:  # mostly differentiate a forward array
            fwds = [s for s in live if self.tas[s]["kind"] == "fwd"]
            if fwds:
                sym = r.choice(fwds)
                info, f = self.tas[sym], self.flow(sym)
        g = f"g{self.n}"
        self.n += 1
        self.pending = (g, info["fwd"], source, info)
        if op == "Grad":
            return gr(source=source, h=sym, f=f, out=(g, g + "_f"))
        prepend = r.choice([[2], [], [1, 2], [0], [3], [-1], 2])
        return gws(prepend, source=source, h=sym, f=f, out=(g, g + "_f"))

    def feedback(self, step, ok):
        """Update the model after a step (only successful steps change anything)."""
        if not ok:
            return
        if step.op == "TensorArraySplitV3" and self.tas[step.kwargs["handle"]]["kind"] == "fwd":
            self.split_fwd.add(step.kwargs["handle"])
        if step.op in ("TensorArrayGradV3", "TensorArrayGradWithShape"):
            g, fwd, source, info = self.pending
            key = (fwd, source)
            self.grad_marked.setdefault(key, fwd in self.split_fwd)
            shape = info["shape"]
            if step.op == "TensorArrayGradWithShape":
                shape = tuple(step.kwargs["shape_to_prepend"]) + tuple(shape)
            self.tas[g] = dict(dtype=info["dtype"], shape=shape, kind="grad", fwd=fwd, key=key)


@pytest.mark.parametrize("seed", range(30))
def test_random_programs(seed):
    gen = _Gen(seed)
    runner = Runner(numba=not SELFTEST)
    for _ in range(40):
        step = gen.next(runner.sizes)
        out = runner.step(step)
        ok = out.ok if not step.tf_crash else False
        gen.feedback(step, ok)
    # final probe: read every slot of every array
    for sym, info in list(gen.tas.items()):
        if sym in runner.sizes:
            runner.read_all(sym, info["dtype"])


# ----------------------------------------------------------------------------------------
# end-to-end gradient: TF1 graph (control flow v1, V3 kernels) vs numba_ta.gradients


@contextlib.contextmanager
def _tf1_graph():
    """A new TF1 graph, made the default, with control flow v1 and TF's warnings silenced."""
    was_v2 = tf.compat.v1.control_flow_v2_enabled()
    tf.compat.v1.disable_control_flow_v2()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            g = tf.Graph()
            with g.as_default():
                yield g
    finally:
        if was_v2:
            tf.compat.v1.enable_control_flow_v2()


def _tf1_graph_grad(build):
    """Run ``build() -> (loss, x)`` in a TF1 graph with control flow v1; return d loss / d x."""
    with _tf1_graph() as g:
        loss, x, ops = build()
        assert "TensorArrayV3" in {op.type for op in g.get_operations()}
        (dx,) = tf.compat.v1.gradients(loss, [x])
        assert "TensorArrayGradV3" in {op.type for op in g.get_operations()}
        with tf.compat.v1.Session(graph=g) as sess:
            return sess.run(dx)


@needs_numba_ta
def test_gradient_read_and_stack_aggregate():
    x = np.array([[1, 2], [3, 4], [5, 6]], np.float32)

    def build():
        xt = tf.constant(x)
        t = tf.TensorArray(tf.float32, size=3, clear_after_read=False)
        t = t.unstack(xt)
        s = tf.reduce_sum(t.read(1) * 3) + tf.reduce_sum(t.stack() ** 2)
        return s, xt, None

    dx_tf = _tf1_graph_grad(build)
    np.testing.assert_array_equal(dx_tf, [[2, 4], [9, 11], [10, 12]])

    # numba_ta: forward as tf.TensorArray(infer_shape=True) emits it, backward through the rules
    g = numba_ta.gradients
    h, f0 = nb_ops.TensorArrayV3(size=3, dtype=np.float32, clear_after_read=False, identical_element_shapes=True)
    idx = np.arange(3, dtype=np.int32)
    f1 = nb_ops.TensorArrayScatterV3(handle=h, indices=idx, value=x, flow_in=f0)
    r1 = nb_ops.TensorArrayReadV3(handle=h, index=1, flow_in=f1, dtype=np.float32)
    st = nb_ops.TensorArrayGatherV3(handle=h, indices=idx, flow_in=f1, dtype=np.float32, element_shape=[2])
    np.testing.assert_array_equal(r1, x[1])
    np.testing.assert_array_equal(st, x)
    # reverse order of the tape: stack's gather, then the read, then the unstack's scatter
    _, _, fg = g.gather_grad(h, idx, f1, 2 * st)
    _, _, fr = g.read_grad(h, 1, f1, np.full(2, 3, np.float32))
    _, _, dx, _ = g.scatter_grad(h, idx, x, f0, fr)
    np.testing.assert_array_equal(dx, dx_tf)
    assert np.asarray(dx).dtype == np.float32


@needs_numba_ta
def test_gradient_split_concat():
    v = np.array([1.0, 2.0, 3.0, 4.0, 5.0], np.float32)
    lengths = np.array([2, 3], np.int64)

    def build():
        vt = tf.constant(v)
        t = tf.TensorArray(tf.float32, size=2, infer_shape=False).split(vt, lengths)
        return tf.reduce_sum(t.concat() ** 2), vt, None

    dv_tf = _tf1_graph_grad(build)
    np.testing.assert_array_equal(dv_tf, 2 * v)
    g = numba_ta.gradients
    h, f0 = nb_ops.TensorArrayV3(size=2, dtype=np.float32, identical_element_shapes=False)
    f1 = nb_ops.TensorArraySplitV3(handle=h, value=v, lengths=lengths, flow_in=f0)
    c, ln = nb_ops.TensorArrayConcatV3(handle=h, flow_in=f1, dtype=np.float32)
    _, fc = g.concat_grad(h, f1, ln, 2 * c)
    _, dv, _, _ = g.split_grad(h, v, lengths, f0, fc)
    np.testing.assert_array_equal(dv, dv_tf)


@needs_numba_ta
def test_gradient_dynamic_write_stack():
    x = np.array([1.0, 1.0], np.float32)

    def build():
        xt = tf.constant(x)
        t = tf.TensorArray(tf.float32, size=0, dynamic_size=True)
        t = t.write(0, xt * 2).write(1, xt)
        return tf.reduce_sum(t.stack() * [[1.0], [2.0]]), xt, None

    dx_tf = _tf1_graph_grad(build)
    np.testing.assert_array_equal(dx_tf, [4, 4])
    g = numba_ta.gradients
    h, f0 = nb_ops.TensorArrayV3(size=0, dtype=np.float32, dynamic_size=True, identical_element_shapes=True)
    f1 = nb_ops.TensorArrayWriteV3(handle=h, index=0, value=x * 2, flow_in=f0)
    f2 = nb_ops.TensorArrayWriteV3(handle=h, index=1, value=x, flow_in=f1)
    n = nb_ops.TensorArraySizeV3(handle=h, flow_in=f2)
    idx = np.arange(n, dtype=np.int32)
    st = nb_ops.TensorArrayGatherV3(handle=h, indices=idx, flow_in=f2, dtype=np.float32, element_shape=[2])
    np.testing.assert_array_equal(st, [[2, 2], [1, 1]])
    _, _, fg = g.gather_grad(h, idx, f2, np.array([[1.0, 1.0], [2.0, 2.0]], np.float32))
    _, _, d1, fw = g.write_grad(h, 1, x, f1, fg)
    _, _, d0, _ = g.write_grad(h, 0, x * 2, f0, fw)
    np.testing.assert_array_equal(2 * d0 + d1, dx_tf)


@needs_numba_ta
def test_gradient_sources_independent():
    def build():
        xt = tf.constant([1.0, 2.0])
        t = tf.TensorArray(tf.float32, size=2).unstack(xt)
        return t.read(0) * 2, xt, None

    with _tf1_graph() as gph:
        loss, xt, _ = build()
        d1 = tf.compat.v1.gradients(loss, [xt])[0]
        d2 = tf.compat.v1.gradients(loss, [xt])[0]
        with tf.compat.v1.Session(graph=gph) as sess:
            r1, r2 = sess.run([d1, d2])
    np.testing.assert_array_equal(r1, [2, 0])
    np.testing.assert_array_equal(r2, [2, 0])
    g = numba_ta.gradients
    x = np.array([1.0, 2.0], np.float32)
    h, f0 = nb_ops.TensorArrayV3(size=2, dtype=np.float32, identical_element_shapes=True)
    idx = np.arange(2, dtype=np.int32)
    f1 = nb_ops.TensorArrayScatterV3(handle=h, indices=idx, value=x, flow_in=f0)
    nb_ops.TensorArrayReadV3(handle=h, index=0, flow_in=f1, dtype=np.float32)
    for source, expect in (("gradients", r1), ("gradients_1", r2)):
        _, _, fr = g.read_grad(h, 0, f1, np.float32(2.0), source=source)
        _, _, dx, _ = g.scatter_grad(h, idx, x, f0, fr, source=source)
        np.testing.assert_array_equal(dx, expect)
    assert g.grad_source("gradients_1/x:0") == "gradients_1"
    with pytest.raises(ValueError, match="Expected op/tensor name to start with gradients"):
        g.grad_source("a/b:0")


@needs_numba_ta
def test_gradient_scatter_gather_unread_slots_get_zeros():
    v = np.array([[1.0], [2.0], [3.0]], np.float32)

    def build():
        vt = tf.constant(v)
        t = tf.TensorArray(tf.float32, size=5).scatter([4, 0, 2], vt)
        return tf.reduce_sum(t.gather([2, 4]) * 10), vt, None

    dv_tf = _tf1_graph_grad(build)
    np.testing.assert_array_equal(dv_tf, [[10], [0], [10]])
    g = numba_ta.gradients
    h, f0 = nb_ops.TensorArrayV3(size=5, dtype=np.float32, identical_element_shapes=True)
    sidx = np.array([4, 0, 2], np.int32)
    gidx = np.array([2, 4], np.int32)
    f1 = nb_ops.TensorArrayScatterV3(handle=h, indices=sidx, value=v, flow_in=f0)
    nb_ops.TensorArrayGatherV3(handle=h, indices=gidx, flow_in=f1, dtype=np.float32, element_shape=[1])
    _, _, fg = g.gather_grad(h, gidx, f1, np.full((2, 1), 10, np.float32))
    _, _, dv, _ = g.scatter_grad(h, sidx, v, f0, fg)
    np.testing.assert_array_equal(dv, dv_tf)
