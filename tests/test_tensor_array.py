"""The TensorArray class (graph-mode tf.TensorArray, semantics reference ``sem-class``) and its storage layouts."""

import gc
import re
import weakref

import numpy as np
import pytest

import numba_ta
from numba_ta import TensorArray, TensorShape, errors, raw_ops


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (dict(handle="h", tensor_array_name="x"), "Cannot provide both `handle` and `tensor_array_name`"),
        (dict(), "Argument `size` must be provided if handle is not provided."),
        (dict(size=2, handle=None, element_shape=[2], dynamic_size=None), None),
    ],
)
def test_constructor_argument_errors(kwargs, message):
    if message is None:
        TensorArray(np.float32, **kwargs)
        return
    with pytest.raises(ValueError, match=re.escape(message)):
        TensorArray(np.float32, **kwargs)


def test_constructor_with_handle_conflicts():
    h, f = raw_ops.TensorArrayV3(size=2, dtype=np.float32)
    for kw, word in [
        (dict(size=2), "a `handle` and `size`"),
        (dict(element_shape=[2]), "`handle` and `element_shape`"),
        (dict(dynamic_size=True), "`handle` and `dynamic_size`"),
        (dict(clear_after_read=False), "`handle` and `clear_after_read`"),
    ]:
        with pytest.raises(ValueError, match=re.escape(word)):
            TensorArray(np.float32, handle=h, flow=f, **kw)
    with pytest.raises(ValueError, match="flow must not be None if handle is not None."):
        TensorArray(np.float32, handle=h)
    with pytest.raises(TypeError, match="Expected `handle` to be a Tensor"):
        TensorArray(np.float32, handle=3, flow=f)
    ta = TensorArray(np.float32, handle=h, flow=f).write(1, [1.0])
    np.testing.assert_array_equal(raw_ops.TensorArrayReadV3(handle=h, index=1, flow_in=f, dtype="float32"), [1.0])
    assert ta.size() == 2


def test_unique_name_from_class_defaults():
    assert re.fullmatch(r"TensorArray_\d+", TensorArray(np.float32, size=1).handle.name)
    assert re.fullmatch(r"foo_\d+", TensorArray(np.float32, size=1, tensor_array_name="foo").handle.name)
    assert re.fullmatch(r"bar_\d+", TensorArray(np.float32, size=1, name="bar").handle.name)


def test_inconsistent_shapes_message_and_no_change():
    ta = TensorArray(np.float32, size=3, element_shape=[2])
    with pytest.raises(ValueError) as e:
        ta.write(0, [1.0, 2.0, 3.0])
    assert str(e.value) == "Inconsistent shapes: saw (3,) but expected (2,) "
    ta = ta.write(0, [1.0, 2.0])
    np.testing.assert_array_equal(ta.read(0), [1.0, 2.0])


def test_element_shape_inferred_and_shared_with_grad():
    ta = TensorArray(np.float32, size=2)
    assert ta.element_shape == TensorShape(None)
    ta2 = ta.write(0, np.zeros((2, 3), np.float32))
    assert ta.element_shape == TensorShape([2, 3]) == ta2.element_shape
    g = ta2.grad("gradients")
    assert g.element_shape is ta2.element_shape
    assert g.flow == ta2.flow
    with pytest.raises(ValueError, match="Inconsistent shapes"):
        g.write(1, np.zeros(3, np.float32))


def test_failed_kernel_write_does_not_refine_python_shape():
    ta = TensorArray(np.int32, size=1)
    with pytest.raises(errors.InvalidArgumentError, match="Op is trying to write dtype float"):
        ta.write(0, [1.5, 2.5])  # floats TF's type check keeps from int32: converted as float32
    assert ta.element_shape == TensorShape(None)
    ta = ta.write(0, np.zeros(5, np.int32))
    assert ta.element_shape.as_list() == [5]


def test_write_preferred_dtype_and_strict_split():
    ta = TensorArray(np.float64, size=2).write(0, [1, 2])
    assert ta.read(0).dtype == np.float64
    msg = "TensorArray dtype is int32 but Op is trying to write dtype float"
    with pytest.raises(errors.InvalidArgumentError, match=msg):
        TensorArray(np.int32, size=1).write(0, [1.5])
    with pytest.raises(TypeError, match="Expected int32, but got 1.5 of type 'float'"):
        TensorArray(np.int32, size=1).split([1.5], [1])
    # a numpy array is cast, as graph-mode tf.TensorArray casts it (make_tensor_proto's astype)
    assert TensorArray(np.int32, size=1).split(np.array([1.5]), [1]).concat().tolist() == [1]


def test_size_static_and_dynamic():
    ta = TensorArray(np.float32, size=2)
    assert ta.size() == 2 and isinstance(ta.size(), np.int32)
    d = TensorArray(np.float32, size=0, dynamic_size=True).write(6, 1.0)
    assert d.size() == 7
    d.close()
    with pytest.raises(errors.InvalidArgumentError, match="has already been closed."):
        d.size()


def test_unstack_too_many_rows():
    ta = TensorArray(np.float32, size=3)
    msg = re.escape("Max scatter index must be < array size (3 vs. 3)")
    with pytest.raises(errors.InvalidArgumentError, match=msg):
        ta.unstack(np.zeros((4, 2), np.float32))
    ta = ta.unstack(np.ones((2, 2), np.float32))
    # the first write fixed the element shape (infer_shape), so the unwritten tail reads as zeros
    np.testing.assert_array_equal(ta.stack(), [[1, 1], [1, 1], [0, 0]])
    loose = TensorArray(np.float32, size=3, infer_shape=False).unstack(np.ones((2, 2), np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="Could not read from TensorArray index 2"):
        loose.stack()


def test_stack_empty_needs_shape():
    assert TensorArray(np.float32, size=0, element_shape=[3]).stack().shape == (0, 3)
    with pytest.raises(errors.UnimplementedError):
        TensorArray(np.float32, size=0).stack()


def test_identity_and_concat_split():
    ta = TensorArray(np.int64, size=3, infer_shape=False)
    ta = ta.split(np.arange(6).reshape(6, 1), [1, 2, 3])
    assert ta.identity().handle == ta.handle
    np.testing.assert_array_equal(ta.concat(), np.arange(6).reshape(6, 1))


def test_spec_worked_example_through_class():
    x = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], np.float32)
    ta = TensorArray(np.float32, size=3, clear_after_read=False).unstack(x)
    r1 = ta.read(1)
    st = ta.stack()
    assert float((r1 * 3).sum() + (st**2).sum()) == pytest.approx(3 * 7 + 91)
    g = ta.grad("gradients")
    g = g.unstack(2 * st)  # gradient of the gather of stack()
    g = g.write(1, np.full(2, 3.0, np.float32))  # gradient of read(1)
    np.testing.assert_array_equal(g.gather([0, 1, 2]), [[2, 4], [9, 11], [10, 12]])


def test_dynamic_growth_many_writes_dense(parallel):
    ta = TensorArray(np.float32, size=0, dynamic_size=True, clear_after_read=False)
    rows = np.arange(3000 * 4, dtype=np.float32).reshape(3000, 4)
    for i in range(3000):
        ta = ta.write(i, rows[i])
    np.testing.assert_array_equal(ta.stack(), rows)
    np.testing.assert_array_equal(ta.gather([2999, 0, 5]), rows[[2999, 0, 5]])


def test_ragged_then_dense_rows_mixed(parallel):
    ta = TensorArray(np.float64, size=0, dynamic_size=True, infer_shape=False, clear_after_read=False)
    values = [np.full((i % 3, 2), i, np.float64) for i in range(50)]
    for i in (7, 3, 9):  # same size first: dense layout, then ragged when sizes differ
        ta = ta.write(i, np.full((1, 2), -i, np.float64))
    for i, v in enumerate(values):
        if i not in (7, 3, 9):
            ta = ta.write(i, v)
    for i in (7, 3, 9):
        values[i] = np.full((1, 2), -i, np.float64)
    value = ta.concat()
    np.testing.assert_array_equal(value, np.concatenate(values))
    for i in (0, 3, 49):
        np.testing.assert_array_equal(ta.read(i), values[i])


def test_split_concat_large_parallel(parallel, rng):
    lengths = rng.integers(0, 5, 300)
    value = rng.random((int(lengths.sum()), 3))
    ta = TensorArray(np.float64, size=300, infer_shape=False).split(value, lengths)
    g = ta.grad("g")
    g = g.split(value, lengths).split(value, lengths)
    np.testing.assert_array_equal(ta.concat(), value)
    np.testing.assert_allclose(g.concat(), 2 * value)


def test_gradient_scatter_duplicates_sum(parallel, rng):
    ta = TensorArray(np.int64, size=6, element_shape=[4])
    g = ta.grad("gradients")
    idx = rng.integers(0, 6, 500)
    vals = rng.integers(-5, 5, (500, 4))
    g = g.scatter(idx, vals)
    expect = np.zeros((6, 4), np.int64)
    np.add.at(expect, idx, vals)
    np.testing.assert_array_equal(g.gather(np.arange(6)), expect)


@pytest.mark.parametrize("n", [8, 300])  # 300: past the element count from which serial sums take one kernel call
@pytest.mark.parametrize("dtype", [np.int8, np.uint32, np.int64, np.float16, np.float32, np.float64, np.complex64])
def test_gradient_scatter_unique_sums_and_stores(parallel, rng, dtype, n):
    # unique indices: the sums into written elements and the stores into new ones can run in one kernel call
    ta = TensorArray(dtype, size=n, element_shape=[5])
    g = ta.grad("gradients")
    some = rng.permutation(n)[: n // 2]
    first = (rng.integers(-100, 100, (some.size, 5)) * 1.25).astype(dtype)
    g = g.scatter(some, first)
    second = (rng.integers(-100, 100, (n, 5)) * 1.25).astype(dtype)
    order = rng.permutation(n)
    g = g.scatter(order, second[order])
    expect = second.copy()
    expect[some] += first  # numpy's sums: wrapping integers, IEEE floats
    np.testing.assert_array_equal(g.gather(np.arange(n)), expect)


def test_float16_accumulates_like_numpy():
    ta = TensorArray(np.float16, size=2, element_shape=[3])
    g = ta.grad("gradients")
    a = np.array([0.1, 1000.0, 3.3], np.float16)
    g = g.scatter([0, 0, 1], np.stack([a, a, a]))
    np.testing.assert_array_equal(g.read(0), a + a)
    np.testing.assert_array_equal(g.read(1), a)


def test_dropped_handles_free_the_array():
    ta = TensorArray(np.float32, size=4).unstack(np.ones((4, 1000), np.float32))
    ref = weakref.ref(ta.handle._storage)
    name = ta.handle.name
    assert name in numba_ta.tensor_array.registry.live_arrays()
    del ta
    gc.collect()
    assert ref() is None
    assert name not in numba_ta.tensor_array.registry.live_arrays()


def test_close_frees_storage_and_grad_survives():
    ta = TensorArray(np.float32, size=2, element_shape=[3]).unstack(np.ones((2, 3), np.float32))
    g = ta.grad("gradients")
    ta.close()
    assert ta.handle._storage.data is None
    g = g.write(0, np.ones(3, np.float32))
    np.testing.assert_array_equal(g.read(0), [1, 1, 1])


def test_repr_mentions_name():
    ta = TensorArray(np.float32, size=1, tensor_array_name="rep")
    assert "rep_" in repr(ta) and "float32" in repr(ta)


@pytest.mark.parametrize("clear_after_read", [True, False])
def test_stack_view_is_zero_copy_read_only_and_stable(clear_after_read):
    rows = np.arange(12, dtype=np.float32).reshape(4, 3)
    ta = TensorArray(np.float32, size=4, clear_after_read=clear_after_read).unstack(rows[:3])
    v = ta.stack(copy=False)
    assert not v.flags.writeable and not v.flags.owndata
    np.testing.assert_array_equal(v, [[0, 1, 2], [3, 4, 5], [6, 7, 8], [0, 0, 0]])
    with pytest.raises(errors.InvalidArgumentError, match="already been read"):
        ta.write(3, [9.0, 9.0, 9.0])
    ta.close()
    np.testing.assert_array_equal(v[:3], rows[:3])


def test_stack_view_falls_back_to_copy_when_ragged():
    ta = TensorArray(np.float32, size=2, infer_shape=False, clear_after_read=False)
    ta = ta.write(0, np.ones((1, 2), np.float32)).write(1, np.ones((2, 2), np.float32))
    with pytest.raises(errors.InvalidArgumentError, match="inconsistent shapes"):
        ta.stack(copy=False)
    g = TensorArray(np.float64, size=3, element_shape=[2]).grad("g").write(1, [1.0, 2.0])
    out = g.stack(copy=False)
    np.testing.assert_array_equal(out, [[0, 0], [1, 2], [0, 0]])


def test_conversion_warnings_point_at_the_callers_line():
    """numpy's cast warnings of the class's conversions are the user's: they name this file, not numba_ta's."""
    import warnings

    def f32():
        return TensorArray(np.float32, size=2)

    def i32():
        return TensorArray(np.int32, size=2)

    calls = [
        lambda: f32().write(0, np.array([1 + 2j, 3])),  # ComplexWarning
        lambda: f32().write(0, np.array([1e300, 1.0])),  # overflow
        lambda: i32().write(0, np.array([np.nan, 1.0])),  # invalid value
        lambda: i32().unstack(np.array([[np.inf], [1.0]])),
        lambda: i32().scatter([0, 1], np.array([[np.nan], [1.0]])),
        lambda: i32().split(np.array([np.nan, 1.0]), [1, 1]),
        lambda: numba_ta.TF2TensorArray(np.int32, size=1).write(0, np.array([np.nan])),
    ]
    for call in calls:
        with warnings.catch_warnings(record=True) as wl, np.errstate(all="warn"):
            warnings.simplefilter("always")
            call()
        assert wl, "no warning"
        for w in wl:
            assert w.filename == __file__, f"{w.category.__name__} at {w.filename}:{w.lineno}: {w.message}"
            assert issubclass(w.category, (RuntimeWarning, np.exceptions.ComplexWarning))
    with np.errstate(over="raise"), pytest.raises(FloatingPointError, match="overflow encountered in cast"):
        f32().write(0, np.array([1e300]))
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        f32().write(0, np.array([1e300]))
