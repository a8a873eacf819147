"""TF2TensorArray: ``tf.TensorArray`` as TensorFlow 2 runs it inside ``tf.function`` (TensorList ops).

Two parts:

* plain tests (no TensorFlow): construction checks, the TensorList rules (overwrites,
  reads that do not clear, unwritten elements read as zeros or raise), dynamic size,
  element-shape inference and its cell shared by derived arrays, value semantics, every
  method, variant (object) elements, ``grad``;
* ``oracle`` tests: one program per test, run with ``tf.TensorArray`` inside a
  ``tf.function`` (TF's ``_GraphTensorArrayV2``) and with ``numba_ta.TF2TensorArray``;
  results (values, dtypes, shapes), the element shapes noted while tracing, and errors
  (class and message) must agree.  TF raises op errors when the function runs
  (``tf.errors.*``, message stripped of ``{{function_node ...}}`` and of the
  ``[[{{node ...}}]]`` / ``[Op:...]`` suffix) and its Python checks while tracing
  (``ValueError``/``TypeError``, ``str(e)``).  The functions are traced with
  ``autograph=False`` (the programs have no tensor-dependent control flow; Python loops
  unroll), so TF's trace-time errors are not wrapped in autograph's "in user code" text.
  A program's ops whose results are not returned are pruned by ``tf.function``: every
  program returns what must run, and has at most one op that may fail.
"""

from __future__ import annotations

import re

import numpy as np
import pytest

import numba_ta
from numba_ta import TensorListHandle, TensorShape, TF2TensorArray, errors, raw_ops

F = np.float32


def full(shape, v=1, dtype=F):
    return np.full(shape, v, dtype)


def es(ta):
    """The element shape as a list (None: unknown rank)."""
    s = ta.element_shape
    return None if s.rank is None else s.as_list()


# ======================================================================================
# Plain tests (no TensorFlow)


@pytest.mark.parametrize(
    "kwargs, cls, message",
    [
        (dict(), ValueError, "Argument `size` must be provided if argument `flow` is not provided."),
        (dict(size=1, flow="LIST"), ValueError, "Cannot provide both `flow` and `size` arguments at the same time."),
        (
            dict(flow="LIST", element_shape=[1]),
            ValueError,
            # TF's text, missing space included
            "Cannot provide both `flow` and `element_shape` argumentsat the same time.",
        ),
        (
            dict(flow=np.float32(1)),
            TypeError,
            "Expected `flow` to be a variant tensor, but received `float32` instead.",
        ),
        (dict(size=1, handle="h"), ValueError, "handle must be None"),
    ],
)
def test_construction_errors(kwargs, cls, message):
    if kwargs.get("flow") == "LIST":
        kwargs["flow"] = TF2TensorArray(F, size=1).flow
    with pytest.raises(cls) as ei:
        TF2TensorArray(F, **kwargs)
    assert not isinstance(ei.value, errors.OpError)
    assert str(ei.value).startswith(message)


def test_construction_size_errors_are_the_reserve_ops():
    with pytest.raises(errors.InvalidArgumentError) as ei:
        TF2TensorArray(F, size=-1)
    assert ei.value.message == "The num_elements to reserve must be a non negative number, but got -1"
    with pytest.raises(TypeError):
        TF2TensorArray(F, size=2.0)


def test_properties():
    ta = TF2TensorArray("float32", size=2, element_shape=[None, 3])
    assert ta.dtype == np.dtype(F)
    assert isinstance(ta.flow, TensorListHandle)
    assert ta.handle is None
    assert ta.dynamic_size is False
    assert TF2TensorArray(F, size=0, dynamic_size=True).dynamic_size is True
    assert ta.element_shape == TensorShape([None, 3])
    assert isinstance(ta.element_shape, TensorShape)
    assert TF2TensorArray(F, size=1).element_shape.rank is None
    assert TF2TensorArray(object, size=1).dtype == np.dtype(object)
    assert repr(ta) == "TF2TensorArray(dtype=float32, size=2, element_shape=(None, 3), dynamic_size=False)"
    assert ta.close() is None  # a no-op
    assert ta.size() == 2


def test_write_read_overwrite_and_reads_do_not_clear():
    ta = TF2TensorArray(F, size=3)
    t1 = ta.write(0, full(2, 1)).write(2, full(2, 3))
    t2 = t1.write(0, full(2, 9))  # overwriting is allowed
    for _ in range(3):  # reads never clear
        np.testing.assert_array_equal(t2.read(0), full(2, 9), strict=True)
    np.testing.assert_array_equal(t2.read(2), full(2, 3), strict=True)
    np.testing.assert_array_equal(t2.read(1), np.zeros(2, F), strict=True)  # unwritten, shape inferred
    np.testing.assert_array_equal(t2.stack(), np.array([[9, 9], [0, 0], [3, 3]], F), strict=True)
    assert t2.read(0).dtype == F


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.bool_, np.complex64, np.float16])
def test_unwritten_reads_zeros_with_known_element_shape(dtype):
    ta = TF2TensorArray(dtype, size=3, element_shape=[2, 1])
    z = ta.read(2)
    np.testing.assert_array_equal(z, np.zeros((2, 1), dtype), strict=True)
    np.testing.assert_array_equal(ta.gather([0, 2]), np.zeros((2, 2, 1), dtype), strict=True)
    np.testing.assert_array_equal(ta.stack(), np.zeros((3, 2, 1), dtype), strict=True)
    scalar = TF2TensorArray(dtype, size=2, element_shape=[]).read(1)
    assert scalar.shape == () and scalar.dtype == dtype and not scalar


@pytest.mark.parametrize(
    "element_shape, text",
    [(None, "<unknown>"), ([None, 2], "[?,2]"), ([2, None], "[2,?]")],
)
def test_unwritten_read_without_known_shape_raises(element_shape, text):
    ta = TF2TensorArray(F, size=2, element_shape=element_shape)
    with pytest.raises(errors.InvalidArgumentError) as ei:
        ta.read(0)
    assert ei.value.message == (
        f"Trying to read an uninitialized tensor but element_shape is not fully defined: {text} "
        "and no list element is set."
    )
    with pytest.raises(errors.InvalidArgumentError) as ei:
        ta.stack()
    assert ei.value.message == (
        "Tried to stack list which only contains uninitialized tensors and has a non-fully-defined "
        f"element_shape: {text}"
    )


def test_dynamic_size_grows_static_size_raises():
    dyn = TF2TensorArray(F, size=1, dynamic_size=True)
    d2 = dyn.write(4, F(5))
    assert d2.size() == np.int32(5) and type(d2.size()) is np.int32
    assert dyn.size() == 1  # the old object keeps its list
    np.testing.assert_array_equal(d2.stack(), np.array([0, 0, 0, 0, 5], F), strict=True)
    loop = TF2TensorArray(F, size=0, dynamic_size=True)
    for t in range(4):
        loop = loop.write(t, full(2, t))
    np.testing.assert_array_equal(loop.stack(), np.repeat(np.arange(4, dtype=F)[:, None], 2, 1), strict=True)
    assert loop.size() == 4

    static = TF2TensorArray(F, size=2)
    with pytest.raises(errors.InvalidArgumentError) as ei:
        static.write(2, F(1))
    assert ei.value.message == "Trying to modify element 2 in a list with 2 elements."
    with pytest.raises(errors.InvalidArgumentError) as ei:
        static.write(-1, F(1))
    assert ei.value.message == "Trying to modify element -1 in a list with 2 elements."
    # TF crashes on a negative index with resize (tl-crashes): numba_ta gives the text without resize
    with pytest.raises(errors.InvalidArgumentError) as ei:
        dyn.write(-1, F(1))
    assert ei.value.message == "Trying to modify element -1 in a list with 1 elements."
    with pytest.raises(errors.InvalidArgumentError) as ei:
        TF2TensorArray(F, size=2, element_shape=[]).read(2)
    assert ei.value.message == "Trying to access element 2 in a list with 2 elements."
    with pytest.raises(errors.InvalidArgumentError) as ei:
        TF2TensorArray(F, size=0, dynamic_size=True, element_shape=[]).read(0)
    assert ei.value.message == "Trying to access element 0 in a list with 0 elements."


def test_failed_write_changes_nothing():
    ta = TF2TensorArray(F, size=2).write(0, full(2, 1))
    with pytest.raises(errors.InvalidArgumentError):
        ta.write(5, full(2, 2))
    assert ta.size() == 2 and es(ta) == [2]
    np.testing.assert_array_equal(ta.stack(), np.array([[1, 1], [0, 0]], F), strict=True)


def test_infer_shape_refinement_and_inconsistent_shapes():
    ta = TF2TensorArray(F, size=2, element_shape=[None, 2])
    t1 = ta.write(0, full((3, 2)))
    assert es(t1) == [3, 2] and es(ta) == [3, 2]  # one cell, refined by the write
    with pytest.raises(ValueError) as ei:
        t1.write(1, full((4, 2)))
    assert not isinstance(ei.value, errors.OpError)
    assert str(ei.value) == "Inconsistent shapes: saw (4, 2) but expected (3, 2) "  # TF's trailing space
    with pytest.raises(ValueError, match=re.escape("Inconsistent shapes: saw (1,) but expected () ")):
        TF2TensorArray(F, size=1, element_shape=[]).write(0, full(1))

    unknown = TF2TensorArray(F, size=2)
    assert es(unknown) is None
    assert es(unknown.write(0, F(1))) == []
    with pytest.raises(ValueError, match=re.escape("Inconsistent shapes: saw (2,) but expected () ")):
        unknown.write(1, full(2))

    # infer_shape=False: no refinement, but the check against the given shape stays
    nf = TF2TensorArray(F, size=2, infer_shape=False, element_shape=[None])
    n1 = nf.write(0, full(2)).write(1, full(3))
    assert es(nf) == [None] and es(n1) == [None]
    np.testing.assert_array_equal(n1.concat(), full(5), strict=True)
    with pytest.raises(ValueError, match=re.escape("Inconsistent shapes: saw (2, 2) but expected (None,) ")):
        nf.write(0, full((2, 2)))
    mixed = TF2TensorArray(F, size=2, infer_shape=False).write(0, full(2)).write(1, full(3))
    assert es(mixed) is None
    with pytest.raises(errors.InvalidArgumentError) as ei:
        mixed.stack()
    assert ei.value.message == "PartialTensorShape: Incompatible shapes during merge: [2] vs. [3]"


def test_stack_checks_static_size():
    grown = TF2TensorArray(F, size=2, element_shape=[3]).scatter([4, 0], full((2, 3)))
    assert grown.size() == 2  # static: the given size
    assert raw_ops.TensorListLength(input_handle=grown.flow) == 5
    with pytest.raises(errors.InvalidArgumentError) as ei:
        grown.stack()
    assert ei.value.message == "Operation expected a list with 2 elements but got a list with 5 elements."
    # the quirk: size=0 then unstack, stack checks num_elements=0
    with pytest.raises(errors.InvalidArgumentError) as ei:
        TF2TensorArray(F, size=0).unstack(full((3, 2))).stack()
    assert ei.value.message == "Operation expected a list with 0 elements but got a list with 3 elements."
    np.testing.assert_array_equal(TF2TensorArray(F, size=3).unstack(full((3, 2))).stack(), full((3, 2)))
    np.testing.assert_array_equal(
        TF2TensorArray(F, size=0, dynamic_size=True).unstack(full((3, 2))).stack(), full((3, 2))
    )
    empty = TF2TensorArray(F, size=0, dynamic_size=True, element_shape=[2]).stack()
    assert empty.shape == (0, 2) and empty.dtype == F
    with pytest.raises(errors.InvalidArgumentError) as ei:
        TF2TensorArray(F, size=0).stack()
    assert ei.value.message == (
        "Tried to stack elements of an empty list with non-fully-defined element_shape: <unknown>"
    )


def test_unstack_gather_scatter():
    x = np.arange(8, dtype=F).reshape(4, 2)
    ta = TF2TensorArray(F, size=4).unstack(x)
    assert es(ta) == [2] and ta.size() == 4
    np.testing.assert_array_equal(ta.gather([3, 0, 3]), x[[3, 0, 3]], strict=True)
    np.testing.assert_array_equal(ta.gather(np.zeros(0, np.int32)), np.zeros((0, 2), F), strict=True)
    with pytest.raises(errors.InvalidArgumentError) as ei:
        ta.gather([0, 4])
    assert ei.value.message == "Index 4 out o range; list only has 4 elements."  # TF's typo
    with pytest.raises(ValueError, match=re.escape("Inconsistent shapes: saw (4,) but expected (3,) ")):
        TF2TensorArray(F, size=3, element_shape=[3]).unstack(full((3, 4)))

    sc = TF2TensorArray(F, size=3).scatter([2, 0], x[:2])
    assert es(sc) == [2]
    np.testing.assert_array_equal(sc.stack(), np.array([[2, 3], [0, 0], [0, 1]], F), strict=True)
    dup = TF2TensorArray(F, size=2).scatter([1, 1], np.array([[1.0], [2.0]], F))  # later row wins
    np.testing.assert_array_equal(dup.stack(), np.array([[0.0], [2.0]], F), strict=True)
    same = TF2TensorArray(F, size=2, element_shape=[]).scatter(np.zeros(0, np.int32), np.zeros(0, F))
    np.testing.assert_array_equal(same.stack(), np.zeros(2, F), strict=True)


def test_scatter_past_the_end_leaves_gaps_unset():
    # docs/semantics.rst tl-scatter-existing step 7: numba_ta diverges from TF on purpose (TF puts
    # float32 [0] tensors in the gap); here the gap elements are unset and read as zeros
    ta = TF2TensorArray(F, size=2, dynamic_size=True).scatter([4, 0], full((2, 3)))
    assert ta.size() == 5
    np.testing.assert_array_equal(ta.read(2), np.zeros(3, F), strict=True)
    np.testing.assert_array_equal(ta.stack()[[0, 2, 4]], np.array([[1] * 3, [0] * 3, [1] * 3], F), strict=True)


def test_split_concat():
    ta = TF2TensorArray(F, size=2, element_shape=[None]).split(np.arange(5, dtype=F), [2, 3])
    assert es(ta) == [None] and ta.size() == 2
    np.testing.assert_array_equal(ta.read(1), np.array([2, 3, 4], F), strict=True)
    np.testing.assert_array_equal(ta.concat(), np.arange(5, dtype=F), strict=True)
    eq = TF2TensorArray(F, size=2).split(full((4, 3)), [2, 2])  # equal lengths: shape inferred
    assert es(eq) == [2, 3]
    assert eq.stack().shape == (2, 2, 3) and eq.concat().shape == (4, 3)
    with pytest.raises(ValueError, match=re.escape("Inconsistent shapes: saw (2, 3) but expected (3, 3) ")):
        TF2TensorArray(F, size=2, element_shape=[3, 3]).split(full((4, 3)), [2, 2])
    with pytest.raises(errors.InvalidArgumentError) as ei:
        TF2TensorArray(F, size=2).split(full(5), [2, 2])
    assert ei.value.message == "Unused values in tensor. Length of tensor: 5 Values used: 4"
    with pytest.raises(errors.InvalidArgumentError) as ei:
        TF2TensorArray(F, size=2).split(full(4), [-1, 5])
    assert ei.value.message == "Invalid value in lengths: -1"
    # a piece that does not fit a known element shape: TF corrupts the list, numba_ta raises
    with pytest.raises(errors.InvalidArgumentError, match="not compatible with element_shape"):
        TF2TensorArray(F, size=2, element_shape=[2, 3]).split(full((4, 3)), [1, 3])

    part = TF2TensorArray(F, size=3, element_shape=[None, 3]).write(0, full((2, 3)))
    assert es(part) == [2, 3]  # the write refined the shape: unwritten elements are 2 rows of zeros
    np.testing.assert_array_equal(part.concat(), np.r_[full((2, 3)), np.zeros((4, 3), F)], strict=True)
    loose = TF2TensorArray(F, size=3, element_shape=[None, 3], infer_shape=False).write(1, full((2, 3)))
    assert es(loose) == [None, 3]
    # ConcatV2 takes the unset elements' first dimension from the set ones (tl-concat), as TF
    np.testing.assert_array_equal(loose.concat(), np.r_[np.zeros((2, 3), F), full((2, 3)), np.zeros((2, 3), F)])
    known = TF2TensorArray(F, size=2, element_shape=[2, 3]).write(0, full((2, 3)))
    np.testing.assert_array_equal(known.concat(), np.r_[full((2, 3)), np.zeros((2, 3), F)], strict=True)
    assert TF2TensorArray(F, size=0, element_shape=[None, 3]).concat().shape == (0, 3)
    with pytest.raises(errors.InvalidArgumentError) as ei:
        TF2TensorArray(F, size=0).concat()
    assert ei.value.message == (
        "All except the first dimension must be fully defined when concating an empty tensor list. "
        "element_shape: <unknown>"
    )
    with pytest.raises(errors.InvalidArgumentError) as ei:
        TF2TensorArray(F, size=2).write(0, F(1)).write(1, F(2)).concat()
    assert ei.value.message == "Concat saw a scalar shape at index 0 but requires at least vectors."


def test_size_static_and_dynamic():
    static = TF2TensorArray(F, size=3)
    assert static.size() == 3 and type(static.size()) is np.int32
    dyn = TF2TensorArray(F, size=3, dynamic_size=True).write(6, F(0))
    assert dyn.size() == 7 and type(dyn.size()) is np.int32
    wrapped = TF2TensorArray(F, flow=dyn.flow)  # no size: TensorListLength
    assert wrapped.size() == 7 and es(wrapped) is None
    np.testing.assert_array_equal(wrapped.stack(), dyn.stack(), strict=True)


def test_element_shape_cell_shared_by_derived_arrays():
    ta = TF2TensorArray(F, size=3)
    ident = ta.identity()
    assert ident.flow is ta.flow
    ta.write(0, full(5))  # result dropped: the cell is refined all the same
    for t in (ta, ident):
        assert es(t) == [5]
        np.testing.assert_array_equal(t.read(1), np.zeros(5, F), strict=True)  # zeros via the cell
    with pytest.raises(ValueError, match="Inconsistent shapes"):
        ident.write(1, full(4))
    other = TF2TensorArray(F, flow=ta.flow)  # a new array on the flow: its own cell
    assert es(other) is None
    other.write(0, full(2)).write(1, full(2))
    assert es(other) == [2] and es(ta) == [5]
    for make, shape in [
        (lambda t: t.unstack(full((2, 4))), [4]),
        (lambda t: t.scatter([1], full((1, 4))), [4]),
        (lambda t: t.split(full((4, 3)), [2, 2]), [2, 3]),
    ]:
        base = TF2TensorArray(F, size=2)
        made = make(base)
        assert es(base) == es(made) == shape
        made.write(0, full(shape, 2))
        with pytest.raises(ValueError, match="Inconsistent shapes"):
            base.write(0, full(7))


def test_value_semantics_and_no_aliasing():
    t0 = TF2TensorArray(F, size=2)
    t1 = t0.write(0, full(2, 3))
    t2 = t1.write(0, full(2, 7)).write(1, full(2, 8))
    np.testing.assert_array_equal(t1.read(0), full(2, 3), strict=True)  # the old array keeps its elements
    np.testing.assert_array_equal(t1.read(1), np.zeros(2, F), strict=True)
    np.testing.assert_array_equal(t2.stack(), np.array([[7, 7], [8, 8]], F), strict=True)
    assert t0.size() == 2
    with pytest.raises(errors.InvalidArgumentError):  # t0's list was never written
        raw_ops.TensorListGetItem(input_handle=t0.flow, index=0, element_shape=-1, element_dtype=F)

    x = full(2, 1)
    t = TF2TensorArray(F, size=2).write(0, x)
    x[:] = 5  # the input is copied
    r = t.read(0)
    r[:] = 9  # results are the caller's
    s = t.stack()
    s[:] = 7
    np.testing.assert_array_equal(t.read(0), full(2, 1), strict=True)
    u = full((2, 2))
    tu, ts, tp = (
        TF2TensorArray(F, size=2).unstack(u),
        TF2TensorArray(F, size=2).scatter([0, 1], u),
        TF2TensorArray(F, size=2).split(u, [1, 1]),
    )
    u[:] = 3
    for tt in (tu, ts, tp):
        np.testing.assert_array_equal(tt.concat(), full(4) if tt is not tp else full((2, 2)), strict=True)
    g = tu.gather([0])
    g[:] = 8
    c = tu.concat()
    c[:] = 8
    np.testing.assert_array_equal(tu.stack(), full((2, 2)), strict=True)


def test_value_conversion_prefers_the_dtype():
    np.testing.assert_array_equal(TF2TensorArray(F, size=1).write(0, 3).stack(), np.array([3], F), strict=True)
    np.testing.assert_array_equal(
        TF2TensorArray(F, size=1).write(0, np.array([1.5, 2.5])).stack(), np.array([[1.5, 2.5]], F), strict=True
    )
    np.testing.assert_array_equal(
        TF2TensorArray(np.int32, size=1).write(0, np.float32(1.5)).stack(), np.array([1], np.int32), strict=True
    )
    with pytest.raises(errors.InvalidArgumentError) as ei:
        TF2TensorArray(np.int32, size=1).write(0, 1.5)
    assert ei.value.message == "Invalid data types; op elements float but list elements int32"


def test_object_dtype_holds_lists():
    def inner(x):
        return raw_ops.TensorListFromTensor(tensor=x, element_shape=list(x.shape[1:]))

    ta = TF2TensorArray(object, size=3, element_shape=[])
    a, b = np.arange(6, dtype=F).reshape(2, 3), full((1, 3), 2)
    t = ta.write(0, inner(a)).write(2, inner(b))
    assert es(t) == []
    h = t.read(0)
    assert isinstance(h, TensorListHandle)
    out = raw_ops.TensorListStack(input_handle=h, element_shape=-1, element_dtype=F, num_elements=-1)
    np.testing.assert_array_equal(out, a, strict=True)
    assert t.read(1) is numba_ta.VARIANT_ZERO  # unwritten variant: TF's variant zero
    st = t.stack()
    assert st.dtype == object and st.shape == (3,) and st[1] is numba_ta.VARIANT_ZERO
    assert isinstance(st[2], TensorListHandle)
    g = t.gather([2])
    out = raw_ops.TensorListStack(input_handle=g[0], element_shape=-1, element_dtype=F, num_elements=-1)
    np.testing.assert_array_equal(out, b, strict=True)
    with pytest.raises(errors.InvalidArgumentError) as ei:
        TF2TensorArray(object, size=1).write(0, [1, 2])
    assert ei.value.message == "Invalid data types; op elements int32 but list elements variant"
    # a list of lists made elsewhere, wrapped
    outer = TF2TensorArray(object, flow=t.flow)
    assert outer.size() == 3 and isinstance(outer.read(2), TensorListHandle)


def test_grad_not_implemented():
    with pytest.raises(NotImplementedError):
        TF2TensorArray(F, size=1).grad("gradients")
    with pytest.raises(NotImplementedError):
        TF2TensorArray(F, size=1).grad("gradients", flow=None, name="g")


# ======================================================================================
# Oracle: tf.TensorArray inside tf.function against TF2TensorArray


_TF_PREFIX = re.compile(r"^\{\{function_node [^}]*\}\}\s*", re.S)
_TF_SUFFIX = re.compile(r"\s*(\[\[\{\{node .*|\[Op:.*)$", re.S)


def tf_message(e):
    """A run-time TF error's kernel message, without function-node prefix and node/op suffixes."""
    return _TF_SUFFIX.sub("", _TF_PREFIX.sub("", e.message))


class Side:
    """What a program sees of one backend: the class, dtypes, list helpers, a trace-time notebook."""

    def __init__(self, tf=None):
        self.tf = tf
        self.TA = tf.TensorArray if tf else TF2TensorArray
        self.variant = tf.variant if tf else object
        self.notes = []
        self.impls = []

    def shape(self, ta):
        """Note the element shape (at trace time for TF)."""
        self.notes.append(("element_shape", es(ta)))
        if self.tf is not None:
            self.impls.append(type(ta._implementation).__name__)

    def attempt(self, fn):
        """Run ``fn`` now (while tracing, for TF), noting a Python-level error instead of raising."""
        try:
            return fn()
        except errors.OpError:
            # an op's error: TF raises it when the op runs, and a program's attempt leaves its op
            # out of the function's outputs, so TF prunes it and never raises (numba_ta runs eagerly)
            return None
        except (ValueError, TypeError) as e:
            if self.tf is not None and isinstance(e, self.tf.errors.OpError):  # pragma: no cover
                raise
            msg = e.message if isinstance(e, errors.OpError) else str(e)
            self.notes.append((type(e).__name__, msg))
            return None

    # TensorList helpers for variant elements
    def from_tensor(self, x):
        if self.tf is not None:
            from tensorflow.python.ops import list_ops

            return list_ops.tensor_list_from_tensor(x, element_shape=x.shape[1:])
        return raw_ops.TensorListFromTensor(tensor=x, element_shape=list(x.shape[1:]))

    def list_stack(self, h):
        if self.tf is not None:
            from tensorflow.python.ops import list_ops

            return list_ops.tensor_list_stack(h, element_dtype=F, num_elements=-1)
        return raw_ops.TensorListStack(input_handle=h, element_shape=-1, element_dtype=F, num_elements=-1)


def _results(out):
    if not isinstance(out, (tuple, list)):
        out = (out,)
    return [np.asarray(x.numpy() if hasattr(x, "numpy") else x) for x in out]


def run_tf(tf, prog):
    side = Side(tf)
    fn = tf.function(lambda: prog(side), autograph=False)
    try:
        out = fn()
    except tf.errors.OpError as e:
        res = (type(e).__name__, tf_message(e))
    except (ValueError, TypeError, NotImplementedError, AssertionError) as e:
        res = (type(e).__name__, str(e))
    else:
        res = ("ok", _results(out))
    assert set(side.impls) <= {"_GraphTensorArrayV2"}, side.impls
    return res, side.notes


def run_nt(prog):
    side = Side()
    try:
        out = prog(side)
    except errors.OpError as e:
        res = (type(e).__name__, e.message)
    except (ValueError, TypeError, NotImplementedError, AssertionError) as e:
        res = (type(e).__name__, str(e))
    else:
        res = ("ok", _results(out))
    return res, side.notes


def check(tf, prog, expect=None):
    """Run ``prog`` on both backends and compare; ``expect``: "ok" or a regex TF's error must match."""
    (tk, tv), tnotes = run_tf(tf, prog)
    (nk, nv), nnotes = run_nt(prog)
    if expect == "ok":
        assert tk == "ok", f"TF raised {tk}: {tv!r} (program meant to succeed)"
    elif expect is not None:
        assert tk != "ok" and re.search(expect, tv), f"TF gave {tk}: {tv!r}, program meant /{expect}/"
    assert nnotes == tnotes, f"trace-time notes differ\n  tensorflow: {tnotes}\n  numba_ta:   {nnotes}"
    if tk != "ok" or nk != "ok":
        assert (nk, nv) == (tk, tv), f"\n  tensorflow: {tk}: {tv!r}\n  numba_ta:   {nk}: {nv!r}"
        return
    assert len(nv) == len(tv)
    for k, (a, b) in enumerate(zip(tv, nv, strict=True)):
        assert b.dtype == a.dtype, f"output {k}: dtype {b.dtype} (numba_ta) != {a.dtype} (tensorflow)"
        assert b.shape == a.shape, f"output {k}: shape {b.shape} (numba_ta) != {a.shape} (tensorflow)"
        np.testing.assert_array_equal(b, a, err_msg=f"output {k}", strict=True)
    return tv


# -- programs: each takes a Side, returns what must run -------------------------------


def p_dynamic_write_loop(s):
    ta = s.TA(F, size=0, dynamic_size=True)
    for t in range(4):
        ta = ta.write(t, full(2, t))
    s.shape(ta)
    return ta.stack(), ta.size(), ta.read(3)


def p_static_write_out_of_range(s):
    return s.TA(F, size=2).write(0, full(2)).write(2, full(2)).stack()


def p_overwrite_then_read(s):
    ta = s.TA(F, size=3).write(0, full(2, 1)).write(2, full(2, 2))
    ta = ta.write(0, full(2, 9))
    return ta.read(0), ta.read(0), ta.read(1), ta.stack()


def p_unwritten_known_shape(s):
    ta = s.TA(F, size=3, element_shape=[2, 3])
    return ta.read(1), ta.gather([2, 0]), ta.write(0, full((2, 3))).stack()


def p_unwritten_unknown_shape(s):
    return s.TA(F, size=2).read(0)


def p_unwritten_partial_shape(s):
    return s.TA(F, size=2, element_shape=[None, 2]).read(1)


def p_unwritten_after_other_write(s):
    ta = s.TA(F, size=3).write(1, full((2, 2)))
    s.shape(ta)
    return ta.read(0), ta.read(2), ta.stack()


def p_unstack_gather(s):
    ta = s.TA(F, size=4).unstack(np.arange(8, dtype=F).reshape(4, 2))
    s.shape(ta)
    return ta.gather([3, 0, 3]), ta.size(), ta.read(2)


def p_scatter_stack(s):
    ta = s.TA(F, size=3).scatter([2, 0], np.arange(4, dtype=F).reshape(2, 2))
    s.shape(ta)
    ta = ta.scatter([1, 1], np.array([[5, 5], [6, 6]], F))
    return ta.stack(), ta.size()


def p_split_concat(s):
    ta = s.TA(F, size=2, element_shape=[None]).split(np.arange(5, dtype=F), [2, 3])
    s.shape(ta)
    return ta.concat(), ta.read(1), ta.size()


def p_split_equal_lengths(s):
    ta = s.TA(F, size=2).split(np.arange(12, dtype=F).reshape(4, 3), [2, 2])
    s.shape(ta)
    return ta.concat(), ta.stack()


def p_split_unused_values(s):
    return s.TA(F, size=2).split(full(5), [2, 2]).concat()


def p_size_static_vs_dynamic(s):
    static = s.TA(F, size=3, element_shape=[]).write(1, F(1))
    dyn = s.TA(F, size=3, dynamic_size=True).write(6, F(2))
    grown = s.TA(F, size=2, element_shape=[]).scatter([1, 0], full(2))  # no growth: no TF gap elements
    wrapped = s.TA(F, flow=dyn.flow)
    s.shape(wrapped)
    return static.size(), dyn.size(), dyn.stack(), grown.size(), wrapped.size(), wrapped.stack()


def p_static_size_checked_by_stack(s):
    return s.TA(F, size=2, element_shape=[3]).scatter([4, 0], full((2, 3))).stack()


def p_element_shape_inference(s):
    ta = s.TA(F, size=3, element_shape=[None, 2])
    s.shape(ta)
    t1 = ta.write(0, full((3, 2)))
    s.shape(t1)
    s.shape(ta)  # the cell is shared
    s.attempt(lambda: t1.write(1, full((4, 2))))
    s.attempt(lambda: ta.write(1, full(2)))
    nf = s.TA(F, size=2, infer_shape=False, element_shape=[None])
    n1 = nf.write(0, full(2)).write(1, full(3))
    s.shape(n1)
    s.attempt(lambda: nf.write(0, full((2, 2))))
    sc = s.TA(F, size=2).write(0, F(1))
    s.shape(sc)
    s.attempt(lambda: sc.write(1, full(1)))
    s.attempt(lambda: s.TA(F, size=3, element_shape=[3]).unstack(full((3, 4))))
    s.attempt(lambda: s.TA(F, size=2, element_shape=[3]).scatter([0], full((1, 2))))
    s.attempt(lambda: s.TA(F, size=2, element_shape=[3, 3]).split(full((4, 3)), [2, 2]))
    return t1.read(0), ta.read(2), n1.concat()


def p_infer_false_stack_mismatch(s):
    return s.TA(F, size=2, infer_shape=False).write(0, full(2)).write(1, full(3)).stack()


def p_unstack_size0_quirk(s):
    return s.TA(F, size=0).unstack(full((3, 2))).stack()


def p_unstack_size_ok(s):
    a = s.TA(F, size=3).unstack(full((3, 2)))
    b = s.TA(F, size=0, dynamic_size=True).unstack(full((3, 2), 2))
    c = s.TA(F, size=2).unstack(full((3, 2), 3))  # size() stays 2, the list has 3
    return a.stack(), b.stack(), b.size(), c.size(), c.read(2)


def p_value_semantics(s):
    t1 = s.TA(F, size=2).write(0, full(2, 3))
    t2 = t1.write(0, full(2, 7)).write(1, full(2, 8))
    return t1.read(0), t1.read(1), t2.stack(), t1.stack()


def p_shared_cell_identity(s):
    ta = s.TA(F, size=2)
    ta.identity().write(0, full(5))
    s.shape(ta)
    return ta.read(1), ta.identity().stack()


def p_dtypes(s):
    out = []
    for dt, v in [(np.int32, 7), (np.int64, 2**40), (np.float64, 0.1), (np.bool_, True), (np.complex64, 1 + 2j)]:
        ta = s.TA(dt, size=2, dynamic_size=True).write(3, np.asarray(v, dt))
        out += [ta.stack(), ta.read(1)]
    out.append(s.TA(np.int32, size=1).write(0, np.float32(1.5)).stack())  # preferred dtype
    out.append(s.TA(F, size=1).write(0, np.array([1.5, 2.5])).stack())
    return tuple(out)


def p_dtype_mismatch(s):
    return s.TA(np.int32, size=1).write(0, 1.5).stack()


def p_variant_lists(s):
    ta = s.TA(s.variant, size=2).write(0, s.from_tensor(full((2, 3)))).write(1, s.from_tensor(full((1, 3), 2)))
    s.shape(ta)
    return s.list_stack(ta.read(0)), s.list_stack(ta.read(1))


def p_variant_unwritten(s):
    ta = s.TA(s.variant, size=2, element_shape=[]).write(0, s.from_tensor(full((2, 3))))
    return s.list_stack(ta.read(1))


def p_read_out_of_range(s):
    return s.TA(F, size=2, element_shape=[]).read(2)


def p_read_past_end_dynamic(s):
    return s.TA(F, size=0, dynamic_size=True, element_shape=[]).read(0)


def p_gather_out_of_range(s):
    return s.TA(F, size=2, element_shape=[]).gather([0, -1])


def p_stack_unknown_uninitialized(s):
    return s.TA(F, size=3).stack()


def p_stack_empty(s):
    return s.TA(F, size=0, dynamic_size=True, element_shape=[2]).stack()


def p_stack_empty_unknown(s):
    return s.TA(F, size=0, dynamic_size=True).stack()


def p_concat_unwritten(s):
    known = s.TA(F, size=2, element_shape=[2, 3]).write(0, full((2, 3)))
    part = s.TA(F, size=2, element_shape=[None, 3]).write(0, full((2, 3)))
    empty = s.TA(F, size=0, element_shape=[None, 3])
    loose = s.TA(F, size=3, element_shape=[None, 3], infer_shape=False).write(1, full((2, 3)))
    s.shape(part)
    return known.concat(), part.concat(), empty.concat(), loose.concat()


def p_concat_empty_unknown(s):
    return s.TA(F, size=0).concat()


def p_concat_scalars(s):
    return s.TA(F, size=2).write(0, F(1)).write(1, F(2)).concat()


def p_split_negative_length(s):
    return s.TA(F, size=2).split(full(4), [-1, 5]).concat()


def p_reserve_negative(s):
    return s.TA(F, size=-1, element_shape=[]).stack()


def p_construction_errors(s):
    s.attempt(lambda: s.TA(F))
    s.attempt(lambda: s.TA(F, size=1, flow=s.TA(F, size=1).flow))
    s.attempt(lambda: s.TA(F, flow=s.TA(F, size=1).flow, element_shape=[1]))
    return s.TA(F, size=1, element_shape=[]).stack()


PROGRAMS = [
    (p_dynamic_write_loop, "ok"),
    (p_static_write_out_of_range, r"^Trying to modify element 2 in a list with 2 elements\.$"),
    (p_overwrite_then_read, "ok"),
    (p_unwritten_known_shape, "ok"),
    (p_unwritten_unknown_shape, r"uninitialized tensor but element_shape is not fully defined: <unknown>"),
    (p_unwritten_partial_shape, r"not fully defined: \[\?,2\]"),
    (p_unwritten_after_other_write, "ok"),
    (p_unstack_gather, "ok"),
    (p_scatter_stack, "ok"),
    (p_split_concat, "ok"),
    (p_split_equal_lengths, "ok"),
    (p_split_unused_values, "Unused values in tensor"),
    (p_size_static_vs_dynamic, "ok"),
    (p_static_size_checked_by_stack, "expected a list with 2 elements but got a list with 5"),
    (p_element_shape_inference, "ok"),
    (p_infer_false_stack_mismatch, "Incompatible shapes during merge"),
    (p_unstack_size0_quirk, r"^Operation expected a list with 0 elements but got a list with 3 elements\.$"),
    (p_unstack_size_ok, "ok"),
    (p_value_semantics, "ok"),
    (p_shared_cell_identity, "ok"),
    (p_dtypes, "ok"),
    (p_dtype_mismatch, "Invalid data types; op elements float but list elements int32"),
    (p_variant_lists, "ok"),
    (p_variant_unwritten, "Input handle is not a list"),
    (p_read_out_of_range, "Trying to access element 2 in a list with 2 elements"),
    (p_read_past_end_dynamic, "Trying to access element 0 in a list with 0 elements"),
    (p_gather_out_of_range, "Index -1 out o range"),
    (p_stack_unknown_uninitialized, "only contains uninitialized tensors"),
    (p_stack_empty, "ok"),
    (p_stack_empty_unknown, "empty list with non-fully-defined element_shape"),
    (p_concat_unwritten, "ok"),
    (p_concat_empty_unknown, "All except the first dimension must be fully defined"),
    (p_concat_scalars, "Concat saw a scalar shape"),
    (p_split_negative_length, "Invalid value in lengths: -1"),
    (p_reserve_negative, "num_elements to reserve must be a non negative number, but got -1"),
    (p_construction_errors, "ok"),
]


@pytest.mark.oracle
@pytest.mark.parametrize("prog, expect", PROGRAMS, ids=[p.__name__[2:] for p, _ in PROGRAMS])
def test_oracle(tf, prog, expect):
    check(tf, prog, expect)


@pytest.mark.oracle
def test_oracle_dynamic_write_loop_values(tf):
    """The comparison is not vacuous: the loop program gives the expected stack."""
    tv = check(tf, p_dynamic_write_loop, "ok")
    np.testing.assert_array_equal(tv[0], np.repeat(np.arange(4, dtype=F)[:, None], 2, 1), strict=True)
    assert tv[1] == 4


@pytest.mark.oracle
def test_oracle_construction_class_only(tf):
    """Checks whose classes agree but whose texts are numba_ta's (TF's depend on TF objects or are empty)."""

    def prog(s):
        flow = tf.constant(1.0) if s.tf else np.float32(1)
        s.attempt(lambda: s.TA(F, flow=flow))  # TF names the dtype <dtype: 'float32'>, numba_ta float32
        s.attempt(lambda: s.TA(F, size=1, element_shape=[-2]))
        try:
            s.TA(F, size=1).grad("gradients")
        except NotImplementedError:
            s.notes.append(("NotImplementedError", ""))
        return s.TA(F, size=1, element_shape=[]).stack()

    (tk, _), tnotes = run_tf(tf, prog)
    (nk, _), nnotes = run_nt(prog)
    assert tk == nk == "ok"
    assert [n[0] for n in nnotes] == [n[0] for n in tnotes] == ["TypeError", "ValueError", "NotImplementedError"]
    assert tnotes[0][1] == "Expected `flow` to be a variant tensor, but received `<dtype: 'float32'>` instead."
    assert nnotes[0][1] == "Expected `flow` to be a variant tensor, but received `float32` instead."


@pytest.mark.oracle
def test_oracle_concat_scalar_element_shape_class(tf):
    """TF's graph shape inference refuses this while tracing (ValueError); numba_ta's kernel check raises
    InvalidArgumentError, which is a ValueError too."""

    def prog(s):
        return s.TA(F, size=2, element_shape=[]).concat()

    (tk, tv), _ = run_tf(tf, prog)
    (nk, nv), _ = run_nt(prog)
    assert tk == "ValueError" and tv.startswith("Shapes must be equal rank, but are 1 and 0")
    assert nk == "InvalidArgumentError" and nv == "PartialTensorShape: Incompatible ranks during merge: 1 vs. 0"
    assert issubclass(errors.InvalidArgumentError, ValueError)


# -- a 0-d value: TF checks its shape[1:], which is () (a bug these tests found, now fixed) ------


def p_unstack_scalar_known_shape(s):
    return s.TA(F, size=1, element_shape=[2]).unstack(F(1)).stack()


def p_scatter_scalar_known_shape(s):
    return s.TA(F, size=2, element_shape=[2]).scatter([0], F(1)).stack()


def p_split_scalar_known_shape(s):
    return s.TA(F, size=2, element_shape=[3]).split(F(1), [2]).concat()


def p_unstack_scalar_refines_cell(s):
    ta = s.TA(F, size=1)
    s.attempt(lambda: ta.unstack(np.ones((), F)))
    s.shape(ta)
    return ta.size()


SCALAR_VALUES = [
    (p_unstack_scalar_known_shape, r"^Inconsistent shapes: saw \(\) but expected \(2,\) $"),
    (p_scatter_scalar_known_shape, r"^Inconsistent shapes: saw \(\) but expected \(2,\) $"),
    (p_split_scalar_known_shape, r"^Inconsistent shapes: saw \(2,\) but expected \(3,\) $"),
    (p_unstack_scalar_refines_cell, "ok"),
]


@pytest.mark.oracle
@pytest.mark.parametrize("prog, expect", SCALAR_VALUES, ids=[p.__name__[2:] for p, _ in SCALAR_VALUES])
def test_oracle_scalar_value_shape_check(tf, prog, expect):
    check(tf, prog, expect)
