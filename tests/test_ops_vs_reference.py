"""numba_ta.raw_ops against the naive reference model (tests/helpers/reference.py).

Every call goes through both implementations (:class:`Pair`); results (values, dtypes,
flows, sizes) and errors (class and exact message, with the unique-name counters mapped)
must agree, and after every call the sizes of all live arrays are compared too, so a
failed op that grows an array is caught.  Targeted tests also pin the exact TF message
texts of the TensorFlow semantics reference (docs/semantics.rst) literally, and a few tests
check the reference model itself against hand-computed expectations.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from numpy.testing import assert_array_equal

from numba_ta import errors, raw_ops
from numba_ta.errors import InvalidArgumentError, UnimplementedError
from tests.helpers import reference
from tests.helpers.reference import Reference, dtype_name

DTYPES = ["float32", "float64", "int32", "int64", "bool", "complex64", "float16", "uint8"]
F0 = np.float32(0.0)

IAE = InvalidArgumentError


# --------------------------------------------------------------------------- harness


def val(dtype, shape, k=0):
    """A deterministic value of ``dtype`` and ``shape`` (small integers, exact in every dtype)."""
    shape = tuple(shape)
    n = int(np.prod(shape, dtype=np.int64))
    base = (np.arange(n, dtype=np.int64) * 3 + 5 * k + 1) % 7
    dt = np.dtype(dtype)
    if dt == np.bool_:
        out = base % 2 == 1
    elif dt.kind == "c":
        out = base + 1j * (base % 3)
    else:
        out = base
    return np.asarray(out).astype(dt).reshape(shape)


class PH:
    """A pair of handles: numba_ta's and the reference's."""

    def __init__(self, nt, ref):
        self.nt = nt
        self.ref = ref

    @property
    def name(self):
        return self.nt.name


class Pair:
    """Runs every op on numba_ta and on the reference model and compares the outcomes."""

    def __init__(self):
        self.ref = Reference()
        self.names = {}  # reference unique name -> numba_ta unique name
        self.handles = []

    # -- plumbing
    def _args(self, kw, side):
        return {k: (getattr(v, side) if isinstance(v, PH) else v) for k, v in kw.items()}

    def _map(self, msg):
        for rn in sorted(self.names, key=len, reverse=True):
            msg = re.sub(re.escape(rn) + r"(?!\d)", self.names[rn], msg)
        return msg

    def _run(self, fn, kw):
        try:
            return fn(**kw), None
        except errors.OpError as e:
            return None, e

    def same(self, op, any_message=False, check_sizes=True, **kw):
        """Run ``op`` on both sides; assert identical outcomes; return ``(result, error)`` of numba_ta."""
        nt_res, nt_err = self._run(getattr(raw_ops, op), self._args(kw, "nt"))
        ref_res, ref_err = self._run(getattr(self.ref, op), self._args(kw, "ref"))
        ctx = f"{op}({ {k: (v.name if isinstance(v, PH) else v) for k, v in kw.items()} })"
        if ref_err is not None or nt_err is not None:
            assert ref_err is not None, f"{ctx}: numba_ta raised {nt_err!r}, reference succeeded"
            assert nt_err is not None, f"{ctx}: reference raised {ref_err!r}, numba_ta succeeded"
            assert type(nt_err) is type(ref_err), f"{ctx}: {nt_err!r} vs reference {ref_err!r}"
            assert nt_err.message in str(nt_err)
            if not any_message and not getattr(ref_err, "divergence", False):
                assert nt_err.message == self._map(ref_err.message), ctx
            out = (None, nt_err)
        else:
            out = (self._compare(op, nt_res, ref_res, kw, ctx), None)
        if check_sizes:
            self.compare_sizes()
        return out

    def _compare(self, op, nt, ref, kw, ctx):
        if op == "TensorArrayV3" or op.startswith("TensorArrayGrad"):
            nt_h, nt_flow = nt
            ref_h, ref_flow = ref
            self._check_flow(nt_flow, ref_flow, ctx)
            if op == "TensorArrayV3":
                prefix = re.sub(r"_\d+$", "", ref_h.name)
                assert re.fullmatch(re.escape(prefix) + r"_\d+", nt_h.name), (nt_h.name, ref_h.name)
            else:
                assert nt_h.name == self._map(ref_h.name), (nt_h.name, ref_h.name)
            self.names[ref_h.name] = nt_h.name
            ph = PH(nt_h, ref_h)
            self.handles.append(ph)
            return ph
        if op in ("TensorArrayWriteV3", "TensorArrayScatterV3", "TensorArraySplitV3"):
            self._check_flow(nt, ref, ctx)
            return nt
        if op in ("TensorArrayReadV3", "TensorArrayGatherV3"):
            check_array(nt, ref, ctx)
            return nt
        if op == "TensorArrayConcatV3":
            check_array(nt[0], ref[0], ctx)
            check_array(nt[1], ref[1], ctx)
            return nt
        if op == "TensorArraySizeV3":
            assert np.asarray(nt).dtype == np.int32 and np.asarray(nt).shape == (), (ctx, nt)
            assert int(nt) == int(ref), (ctx, nt, ref)
            return int(nt)
        if op == "TensorArrayCloseV3":
            assert nt is None
            return None
        raise AssertionError(op)

    @staticmethod
    def _check_flow(nt, ref, ctx):
        a = np.asarray(nt)
        assert a.dtype == np.float32 and a.shape == (), (ctx, nt)
        assert float(a) == float(ref), (ctx, nt, ref)

    def compare_sizes(self):
        for h in self.handles:
            self.same("TensorArraySizeV3", handle=h, flow_in=F0, check_sizes=False)

    # -- conveniences
    def ok(self, op, **kw):
        res, err = self.same(op, **kw)
        assert err is None, f"{op}: unexpected {err!r}"
        return res

    def fails(self, op, cls, msg=None, any_message=False, **kw):
        res, err = self.same(op, any_message=any_message, **kw)
        assert err is not None, f"{op}: expected {cls.__name__}, got result {res!r}"
        assert type(err) is cls, f"{op}: expected {cls.__name__}, got {err!r}"
        if msg is not None:
            assert err.message == msg, f"\n got: {err.message!r}\nwant: {msg!r}"
            assert re.search(re.escape(msg), str(err))
        return err

    def fails_on(self, op, h, msg=None, cls=IAE, **kw):
        """:meth:`fails` for an op on handle `h` with ``flow_in`` 0 (the form of most error checks here)."""
        return self.fails(op, cls, msg, handle=h, flow_in=F0, **kw)

    def create(self, size, dtype, **kw):
        return self.ok("TensorArrayV3", size=size, dtype=np.dtype(dtype), **kw)

    def write(self, h, i, v, **kw):
        return self.same("TensorArrayWriteV3", handle=h, index=i, value=v, flow_in=F0, **kw)

    def read(self, h, i, dtype):
        return self.same("TensorArrayReadV3", handle=h, index=i, flow_in=F0, dtype=np.dtype(dtype))

    def grad(self, h, source="gradients"):
        return self.ok("TensorArrayGradV3", handle=h, flow_in=F0, source=source)

    def size(self, h):
        return self.ok("TensorArraySizeV3", handle=h, flow_in=F0)

    def probe(self, h, dtype):
        """Destructively compare every element: read, read again, then write."""
        res, err = self.same("TensorArraySizeV3", handle=h, flow_in=F0)
        if err is not None:
            return
        shapes = self.ref.state(h.ref)["shapes"]
        for i in range(res):
            self.read(h, i, dtype)
            self.read(h, i, dtype)
            self.write(h, i, val(dtype, shapes[i], 9))


def check_array(nt, ref, ctx=""):
    assert isinstance(nt, np.ndarray), (ctx, type(nt))
    assert nt.dtype == ref.dtype, (ctx, nt.dtype, ref.dtype)
    assert nt.shape == ref.shape, (ctx, nt.shape, ref.shape)
    assert_array_equal(nt, ref, err_msg=ctx)


@pytest.fixture
def pair():
    return Pair()


# --------------------------------------------------------------------------- the reference itself


class TestReferenceModel:
    """The oracle checked against hand-computed expectations from the semantics reference."""

    def test_states_write_read(self):
        r = Reference()
        h, f = r.TensorArrayV3(size=3, dtype=np.float32, clear_after_read=False, element_shape=[2])
        assert f == 0.0 and h.name == "TensorArrayV3_0"
        r.TensorArrayWriteV3(handle=h, index=0, value=np.array([1, 2], np.float32), flow_in=f)
        assert r.state(h)["states"] == "WUU"
        assert_array_equal(r.TensorArrayReadV3(handle=h, index=1, flow_in=f, dtype=np.float32), [0, 0])
        assert r.state(h)["states"] == "WRU"
        assert_array_equal(r.TensorArrayReadV3(handle=h, index=0, flow_in=f, dtype=np.float32), [1, 2])
        assert_array_equal(r.TensorArrayReadV3(handle=h, index=0, flow_in=f, dtype=np.float32), [1, 2])
        assert r.state(h)["states"] == "RRU"
        with pytest.raises(IAE, match=re.escape("index 1 because it has already been read.")):
            r.TensorArrayWriteV3(handle=h, index=1, value=np.zeros(2, np.float32), flow_in=f)

    def test_clear_after_read_and_t10(self):
        r = Reference()
        h, f = r.TensorArrayV3(size=2, dtype=np.int32)
        with pytest.raises(IAE) as e:
            r.TensorArrayReadV3(handle=h, index=1, flow_in=f, dtype=np.int32)
        assert e.value.message == (
            "TensorArray TensorArrayV3_0: Could not read from TensorArray index 1.  Furthermore, the element "
            "shape is not fully defined: <unknown>.  It is possible you are working with a resizeable "
            "TensorArray and stop_gradients is not allowing the gradients to be written.  If you set the full "
            "element_shape property on the forward TensorArray, the proper all-zeros tensor will be returned "
            "instead of incurring this error."
        )
        assert r.state(h)["states"] == "UU"
        r.TensorArrayWriteV3(handle=h, index=1, value=7, flow_in=f)
        assert r.TensorArrayReadV3(handle=h, index=1, flow_in=f, dtype=np.int32) == 7
        assert r.state(h)["states"] == "UC"
        with pytest.raises(IAE, match=re.escape("Could not read index 1 twice because it was cleared")):
            r.TensorArrayReadV3(handle=h, index=1, flow_in=f, dtype=np.int32)

    def test_grad_soft_zero_and_aggregate(self):
        r = Reference()
        h, f = r.TensorArrayV3(size=3, dtype=np.float32, dynamic_size=True)
        r.TensorArrayWriteV3(handle=h, index=1, value=np.ones(3, np.float32), flow_in=f)
        g, gf = r.TensorArrayGradV3(handle=h, flow_in=np.float32(5), source="gradients")
        assert gf == 0.0 and g.name == "TensorArrayV3_0@gradients"
        st = r.state(g)
        assert st["states"] == "UZU" and st["shapes"][1] == (3,) and st["is_grad"]
        assert r.state(h)["dynamic_size"] is False
        for k in (1, 2, 10):
            r.TensorArrayWriteV3(handle=g, index=1, value=np.full(3, k, np.float32), flow_in=f)
            assert r.state(g)["states"][1] == ("W" if k == 1 else "A")
        assert r.state(g)["gradients_disallowed"]
        assert_array_equal(r.TensorArrayReadV3(handle=g, index=1, flow_in=f, dtype=np.float32), [13, 13, 13])
        with pytest.raises(IAE, match=re.escape("TensorArrayV3_0@gradients: Could not read index 1 twice")):
            r.TensorArrayReadV3(handle=g, index=1, flow_in=f, dtype=np.float32)
        # grad of grad
        with pytest.raises(IAE) as e:
            r.TensorArrayGradV3(handle=g, flow_in=f, source="gradients")
        assert e.value.message == "Wrong input container. _tensor_array_gradsTensorArrayV3_0@gradients"

    def test_scatter_duplicates_sum_on_grad(self):
        r = Reference()
        h, f = r.TensorArrayV3(size=2, dtype=np.int32)
        g, _ = r.TensorArrayGradV3(handle=h, flow_in=f, source="g")
        r.TensorArrayScatterV3(handle=g, indices=[1, 1, 0], value=np.array([[1], [2], [3]], np.int32), flow_in=f)
        out = r.TensorArrayGatherV3(handle=g, indices=[0, 1], flow_in=f, dtype=np.int32)
        assert_array_equal(out, [[3], [3]])
        assert r.state(g)["states"] == "CC"

    def test_gather_empty_first_element_skips_g5(self):
        # TF 2.21 (verified with tf.raw_ops): gather [0,1,2] of shapes [0],[2],[2,2] -> shape (3,0)
        r = Reference()
        h, f = r.TensorArrayV3(size=3, dtype=np.float32, clear_after_read=False)
        for i, shape in enumerate([(0,), (2,), (2, 2)]):
            r.TensorArrayWriteV3(handle=h, index=i, value=np.ones(shape, np.float32), flow_in=f)
        assert r.TensorArrayGatherV3(handle=h, indices=[0, 1, 2], flow_in=f, dtype=np.float32).shape == (3, 0)
        with pytest.raises(IAE, match=re.escape("Index 0 has shape: [2] but index 1 has shape: [0]")):
            r.TensorArrayGatherV3(handle=h, indices=[1, 0], flow_in=f, dtype=np.float32)

    def test_concat_example(self):
        r = Reference()
        h, f = r.TensorArrayV3(size=3, dtype=np.float32)
        for i, v in enumerate([[[1, 2]], [[3, 4], [5, 6]], np.zeros((0, 2))]):
            r.TensorArrayWriteV3(handle=h, index=i, value=np.asarray(v, np.float32), flow_in=f)
        value, lengths = r.TensorArrayConcatV3(handle=h, flow_in=f, dtype=np.float32)
        assert_array_equal(value, [[1, 2], [3, 4], [5, 6]])
        assert lengths.dtype == np.int64 and lengths.tolist() == [1, 2, 0]

    def test_atomic_restore(self):
        r = Reference()
        h, f = r.TensorArrayV3(size=3, dtype=np.float32, identical_element_shapes=True)
        before = r.state(h)
        with pytest.raises(IAE, match="already been written to"):
            r.TensorArrayScatterV3(handle=h, indices=[0, 1, 1], value=np.ones((3, 2), np.float32), flow_in=f)
        assert r.state(h) == before and before["element_shape"] is None
        h2, _ = r.TensorArrayV3(size=1, dtype=np.float32, dynamic_size=True, element_shape=[2])
        with pytest.raises(IAE, match="incompatible with the TensorArray's inferred element shape: \\[2\\]"):
            r.TensorArrayWriteV3(handle=h2, index=5, value=np.ones(3, np.float32), flow_in=f)
        assert r.state(h2)["size"] == 1

    def test_split_marks_size_and_grad_concat(self):
        r = Reference()
        h, f = r.TensorArrayV3(size=0, dtype=np.float64, dynamic_size=True)
        r.TensorArraySplitV3(handle=h, value=np.arange(6.0).reshape(3, 2), lengths=[2, 0, 1], flow_in=f)
        assert r.state(h)["marked_size"] == 3 and r.state(h)["shapes"] == [(2, 2), (0, 2), (1, 2)]
        g, _ = r.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=[], source="s")
        assert r.state(g)["marked_size"] == 3 and r.state(g)["states"] == "ZZZ"
        value, lengths = r.TensorArrayConcatV3(handle=g, flow_in=f, dtype=np.float64)
        assert value.shape == (3, 2) and not value.any() and lengths.tolist() == [2, 0, 1]

    def test_with_shape_prepend(self):
        r = Reference()
        h, f = r.TensorArrayV3(size=2, dtype=np.float32, element_shape=[3])
        r.TensorArrayWriteV3(handle=h, index=0, value=np.ones(3, np.float32), flow_in=f)
        g, _ = r.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=[4], source="g2")
        st = r.state(g)
        assert st["element_shape"] == (4, 3) and st["shapes"][0] == (4, 3) and st["states"] == "ZU"
        g2, _ = r.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=[5, 7], source="g2")
        assert r.state(g2)["element_shape"] == (4, 3)

    def test_text_forms_and_conversion(self):
        assert [dtype_name(d) for d in ["float16", "float32", "float64", "int32", "bool", "complex64"]] == [
            "half",
            "float",
            "double",
            "int32",
            "bool",
            "complex64",
        ]
        assert reference.partial_str(None) == "<unknown>"
        assert reference.partial_str((None, 3)) == "[?,3]"
        assert reference.shape_str(()) == "[]" and reference.shape_str((2, 3)) == "[2,3]"
        assert reference.convert_value(1.5).dtype == np.float32
        assert reference.convert_value([1, 2]).dtype == np.int32
        assert reference.convert_value(2**40).dtype == np.int64
        assert reference.convert_value(True).dtype == np.bool_
        assert reference.convert_value(np.float64(1)).dtype == np.float64


# --------------------------------------------------------------------------- cross-product scenario

ELEMENT_SHAPES = [(), (3,), (2, 4), (None, 4), None, (0, 3)]


def _concrete(eshape):
    if eshape is None:
        return (2, 3)
    return tuple(2 if d is None else d for d in eshape)


@pytest.mark.parametrize("clear_after_read", [True, False])
@pytest.mark.parametrize("identical", [False, True])
@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("eshape", ELEMENT_SHAPES, ids=str)
@pytest.mark.parametrize("dtype", DTYPES)
def test_scenario(pair, dtype, eshape, dynamic, identical, clear_after_read):
    cs = _concrete(eshape)
    other = "int32" if dtype != "int32" else "float32"
    h = pair.create(
        3,
        dtype,
        element_shape=None if eshape is None else list(eshape),
        dynamic_size=dynamic,
        identical_element_shapes=identical,
        clear_after_read=clear_after_read,
    )
    # writes
    flow = pair.ok("TensorArrayWriteV3", handle=h, index=0, value=val(dtype, cs, 0), flow_in=np.float32(3.5))
    assert flow == 3.5
    pair.fails_on("TensorArrayWriteV3", h, index=0, value=val(dtype, cs, 1))
    pair.fails_on(
        "TensorArrayWriteV3",
        h,
        f"TensorArray dtype is {dtype_name(dtype)} but Op is trying to write dtype {dtype_name(other)}.",
        index=1,
        value=val(other, cs),
    )
    pair.write(h, 1, val(dtype, cs + (1,), 2))  # T4 unless the element shape is still unknown
    pair.write(h, 3, val(dtype, cs, 3))  # T2 static, growth dynamic
    pair.fails_on("TensorArrayWriteV3", h, index=-1, value=val(dtype, cs))
    n = pair.size(h)
    assert n == (4 if dynamic else 3)
    # reads
    got = pair.ok("TensorArrayReadV3", handle=h, index=0, flow_in=F0, dtype=dtype)
    assert_array_equal(got, val(dtype, cs, 0))
    pair.read(h, 0, dtype)
    pair.read(h, 2, dtype)  # zeros or T10
    pair.write(h, 2, val(dtype, cs, 4))  # T5 after a zero read
    pair.read(h, n, dtype)  # T9
    # scatter / gather / concat
    pair.same(
        "TensorArrayScatterV3",
        handle=h,
        indices=[4, 1],
        value=np.stack([val(dtype, cs, 5), val(dtype, cs, 6)]),
        flow_in=F0,
    )
    pair.same("TensorArrayScatterV3", handle=h, indices=[1], value=val(dtype, (1,) + cs, 7), flow_in=F0)
    pair.same(
        "TensorArrayGatherV3",
        handle=h,
        indices=[1, 0],
        flow_in=F0,
        dtype=dtype,
        element_shape=None if eshape is None else list(eshape),
    )
    pair.same("TensorArrayConcatV3", handle=h, flow_in=F0, dtype=dtype)
    pair.same("TensorArrayGatherV3", handle=h, indices=[], flow_in=F0, dtype=dtype, element_shape=list(cs))
    # gradient array
    g = pair.grad(h)
    pair.write(h, 7, val(dtype, cs))  # T2 now, even if dynamic
    pair.write(g, 0, val(dtype, cs, 1))
    pair.write(g, 0, val(dtype, cs, 2))  # sum (T8 for bool)
    pair.write(g, 0, val(dtype, cs, 3))
    pair.write(g, 2, val(dtype, cs, 1))
    pair.write(g, 2, val(dtype, cs, 1))
    pair.write(g, 1, val(dtype, cs + (1,), 1))
    pair.read(g, 0, dtype)
    pair.read(g, 0, dtype)
    pair.read(g, 6, dtype)  # grows a grad array when the element shape is fully defined
    pair.same("TensorArrayGatherV3", handle=g, indices=[2, 1], flow_in=F0, dtype=dtype)
    pair.same("TensorArrayConcatV3", handle=g, flow_in=F0, dtype=dtype)
    pair.probe(g, dtype)
    pair.probe(h, dtype)
    # close
    pair.ok("TensorArrayCloseV3", handle=h)
    pair.ok("TensorArrayCloseV3", handle=h)
    pair.fails_on("TensorArraySizeV3", h, f"TensorArray {h.name} has already been closed.")
    pair.fails_on(
        "TensorArrayWriteV3", h, f"TensorArray {h.name} has already been closed.", index=0, value=val(dtype, cs)
    )
    out = pair.ok("TensorArrayGatherV3", handle=h, indices=[], flow_in=F0, dtype=dtype, element_shape=list(cs))
    assert out.shape == (0,) + cs
    pair.fails_on("TensorArrayGatherV3", h, indices=[0], dtype=dtype)
    pair.size(g)  # a grad array outlives its closed forward array


@pytest.mark.parametrize("dynamic", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_split_concat_roundtrip(pair, dtype, dynamic, parallel):
    value = val(dtype, (6, 2), 1)
    h = pair.create(0 if dynamic else 4, dtype, dynamic_size=dynamic, clear_after_read=False)
    pair.ok("TensorArraySplitV3", handle=h, value=value, lengths=np.array([1, 3, 0, 2]), flow_in=F0)
    out, lengths = pair.ok("TensorArrayConcatV3", handle=h, flow_in=F0, dtype=dtype)
    assert_array_equal(out, value)
    assert lengths.tolist() == [1, 3, 0, 2]
    for i, (a, b) in enumerate([(0, 1), (1, 4), (4, 4), (4, 6)]):
        assert_array_equal(pair.ok("TensorArrayReadV3", handle=h, index=i, flow_in=F0, dtype=dtype), value[a:b])
    g = pair.grad(h)
    pair.ok("TensorArraySplitV3", handle=g, value=val(dtype, (6, 2), 2), lengths=[1, 3, 0, 2], flow_in=F0)
    pair.same("TensorArraySplitV3", handle=g, value=val(dtype, (6, 2), 3), lengths=[1, 3, 0, 2], flow_in=F0)
    pair.same("TensorArrayConcatV3", handle=g, flow_in=F0, dtype=dtype)
    pair.probe(g, dtype)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gather_scatter_roundtrip(pair, dtype, parallel):
    h = pair.create(5, dtype, element_shape=[2, 3], clear_after_read=False)
    v = val(dtype, (3, 2, 3), 1)
    pair.ok("TensorArrayScatterV3", handle=h, indices=np.array([4, 0, 2], np.int32), value=v, flow_in=F0)
    got = pair.ok("TensorArrayGatherV3", handle=h, indices=[2, 4, 1, 2], flow_in=F0, dtype=dtype)
    assert_array_equal(got[0], v[2])
    assert_array_equal(got[1], v[0])
    assert_array_equal(got[2], np.zeros((2, 3), dtype))
    assert got.dtype == np.dtype(dtype) and got.shape == (4, 2, 3)
    # gradient of gather = scatter into the grad array (duplicates summed), of scatter = gather
    g = pair.grad(h)
    pair.same("TensorArrayScatterV3", handle=g, indices=[2, 4, 2], value=val(dtype, (3, 2, 3), 2), flow_in=F0)
    pair.same("TensorArrayGatherV3", handle=g, indices=[4, 0, 2], flow_in=F0, dtype=dtype)


# --------------------------------------------------------------------------- semantics reference examples


def test_example_grad_scatter_duplicates(pair):
    h = pair.create(2, "float32")
    g = pair.grad(h)
    pair.ok(
        "TensorArrayScatterV3", handle=g, indices=[1, 1, 0], value=np.array([[1], [2], [3]], np.float32), flow_in=F0
    )
    out = pair.ok("TensorArrayGatherV3", handle=g, indices=[0, 1], flow_in=F0, dtype=np.float32)
    assert_array_equal(out, np.array([[3], [3]], np.float32))


def test_example_concat_lengths(pair):
    h = pair.create(3, "float32")
    for i, v in enumerate([[[1, 2]], [[3, 4], [5, 6]], np.zeros((0, 2))]):
        pair.ok("TensorArrayWriteV3", handle=h, index=i, value=np.asarray(v, np.float32), flow_in=F0)
    value, lengths = pair.ok("TensorArrayConcatV3", handle=h, flow_in=F0, dtype=np.float32)
    assert_array_equal(value, np.array([[1, 2], [3, 4], [5, 6]], np.float32))
    assert lengths.dtype == np.int64 and lengths.tolist() == [1, 2, 0]


def test_example_concat_all_unwritten(pair):
    h = pair.create(2, "float32", element_shape=[2, 3])
    value, lengths = pair.ok("TensorArrayConcatV3", handle=h, flow_in=F0, dtype=np.float32)
    assert value.shape == (4, 3) and not value.any() and lengths.tolist() == [2, 2]


def test_example_grad_aggregation_13(pair):
    h = pair.create(3, "float32")
    pair.ok("TensorArrayWriteV3", handle=h, index=1, value=np.zeros(3, np.float32), flow_in=F0)
    g = pair.grad(h)
    for k in (1, 2, 10):
        pair.ok("TensorArrayWriteV3", handle=g, index=1, value=np.full(3, k, np.float32), flow_in=F0)
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=g, index=1, flow_in=F0, dtype=np.float32), [13] * 3)
    pair.fails_on(
        "TensorArrayReadV3",
        g,
        f"TensorArray {g.name}: Could not read index 1 twice because it was cleared after a previous "
        "read (perhaps try setting clear_after_read = false?).",
        index=1,
        dtype=np.float32,
    )
    pair.fails_on(
        "TensorArrayWriteV3",
        g,
        f"TensorArray {g.name}: Could not write to TensorArray index 1 because it has already been read.",
        index=1,
        value=np.ones(3, np.float32),
    )


def test_example_int32_aggregation_and_flow_passthrough(pair):
    h = pair.create(2, "int32")
    g = pair.grad(h)
    assert pair.ok("TensorArrayWriteV3", handle=g, index=0, value=np.int32(4), flow_in=np.float32(42)) == 42
    pair.ok("TensorArrayWriteV3", handle=g, index=0, value=np.int32(5), flow_in=F0)
    assert pair.ok("TensorArrayReadV3", handle=g, index=0, flow_in=F0, dtype=np.int32) == 9


def test_example_gather_index_position(pair):
    h = pair.create(2, "float32")
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=np.ones(2, np.float32), flow_in=F0)
    pair.ok("TensorArrayWriteV3", handle=h, index=1, value=np.ones(3, np.float32), flow_in=F0)
    pair.fails_on(
        "TensorArrayGatherV3",
        h,
        "TensorArray has inconsistent shapes.  Index 0 has shape: [3] but index 1 has shape: [2]",
        indices=[1, 0],
        dtype=np.float32,
    )


# --------------------------------------------------------------------------- TensorArrayV3 / value conversion


def test_create_errors_and_names(pair):
    pair.fails(
        "TensorArrayV3", IAE, "TensorArray size must be scalar, but had shape: [2]", size=[2, 2], dtype=np.float32
    )
    pair.fails("TensorArrayV3", IAE, "Size should be >= 0.", size=-1, dtype=np.float32)
    h = pair.create(0, "float32", tensor_array_name="foo")
    assert re.fullmatch(r"foo_\d+", h.name)
    h2 = pair.create(np.int32(2), "float32")
    assert re.fullmatch(r"TensorArrayV3_\d+", h2.name) and h2.name != h.name
    assert pair.size(h) == 0
    # dtype given as a string is the same array type
    h3 = pair.ok("TensorArrayV3", size=1, dtype="float64")
    pair.ok("TensorArrayWriteV3", handle=h3, index=0, value=np.float64(2.5), flow_in=F0)


@pytest.mark.parametrize(
    "value, dtype, ok",
    [
        (1.5, "float32", True),
        ([1.0, 2.0], "float32", True),
        (1, "float32", False),
        (1, "int32", True),
        ([1, 2], "int64", False),
        (2**40, "int64", True),
        (2**40, "int32", False),
        (True, "bool", True),
        (np.float64(1.0), "float32", False),
        (np.float32(1.0), "float16", False),
        (np.ones(2, np.uint8), "uint8", True),
        (np.ones(2, np.complex64), "complex64", True),
    ],
)
def test_value_conversion(pair, value, dtype, ok):
    h = pair.create(1, dtype)
    res, err = pair.write(h, 0, value)
    assert (err is None) == ok
    if not ok:
        got = reference.convert_value(value).dtype
        assert (
            err.message == f"TensorArray dtype is {dtype_name(dtype)} but Op is trying to write dtype "
            f"{dtype_name(got)}."
        )
    else:
        out = pair.ok("TensorArrayReadV3", handle=h, index=0, flow_in=F0, dtype=dtype)
        assert_array_equal(out, np.asarray(value))


# --------------------------------------------------------------------------- Write errors


def test_write_errors(pair):
    h = pair.create(3, "float32", element_shape=[None, 3])
    name = h.name
    pair.fails_on(
        "TensorArrayWriteV3",
        h,
        "TensorArray index must be scalar, but had shape: [1]",
        index=[1],
        value=np.ones((2, 3), np.float32),
    )
    pair.fails_on(
        "TensorArrayWriteV3",
        h,
        "TensorArray dtype is float but Op is trying to write dtype int32.",
        index=0,
        value=np.ones((2, 3), np.int32),
    )
    pair.fails_on(
        "TensorArrayWriteV3",
        h,
        f"TensorArray {name}: Tried to write to index 3 but array is not resizeable and size is: 3",
        index=3,
        value=np.ones((2, 3), np.float32),
    )
    pair.fails_on(
        "TensorArrayWriteV3",
        h,
        f"TensorArray {name}: Tried to write to index -1 but array is not resizeable and size is: 3",
        index=-1,
        value=np.ones((2, 3), np.float32),
    )
    pair.fails_on(
        "TensorArrayWriteV3",
        h,
        f"TensorArray {name}: Could not write to TensorArray index 0 because the value shape is [2,4] "
        "which is incompatible with the TensorArray's inferred element shape: [?,3] (consider setting "
        "infer_shape=False).",
        index=0,
        value=np.ones((2, 4), np.float32),
    )
    pair.ok("TensorArrayWriteV3", handle=h, index=np.int64(0), value=np.ones((2, 3), np.float32), flow_in=F0)
    pair.fails_on(
        "TensorArrayWriteV3",
        h,
        f"TensorArray {name}: Could not write to TensorArray index 0 because it has already been written to.",
        index=0,
        value=np.ones((5, 3), np.float32),
    )
    # the failures changed nothing
    assert pair.size(h) == 3
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=h, index=0, flow_in=F0, dtype=np.float32), np.ones((2, 3)))
    pair.ok("TensorArrayWriteV3", handle=h, index=1, value=np.ones((1, 3), np.float32), flow_in=F0)
    pair.fails_on(
        "TensorArrayWriteV3",
        h,
        f"TensorArray {name}: Could not write to TensorArray index 0 because it has already been read.",
        index=0,
        value=np.ones((2, 3), np.float32),
    )


def test_write_negative_index_dynamic_and_growth(pair):
    h = pair.create(0, "float32", dynamic_size=True)
    pair.fails_on(
        "TensorArrayWriteV3",
        h,
        f"TensorArray {h.name}: Tried to write to index -1 but array is not resizeable and size is: 0",
        index=-1,
        value=np.float32(1),
    )
    pair.ok("TensorArrayWriteV3", handle=h, index=4, value=np.float32(1), flow_in=F0)
    assert pair.size(h) == 5


def test_write_identical_shapes_inference(pair):
    h = pair.create(3, "float32", identical_element_shapes=True)
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=np.float32(1), flow_in=F0)
    pair.fails_on(
        "TensorArrayWriteV3",
        h,
        f"TensorArray {h.name}: Could not write to TensorArray index 1 because the value shape is [1] which "
        "is incompatible with the TensorArray's inferred element shape: [] (consider setting "
        "infer_shape=False).",
        index=1,
        value=np.ones(1, np.float32),
    )
    # the inferred shape is fully defined: unwritten slots read as zeros of it
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=h, index=2, flow_in=F0, dtype=np.float32), 0.0)


def test_atomic_failed_dynamic_write_does_not_grow(pair):
    # TF grows to 6 here (divergence 1): numba_ta changes nothing.
    h = pair.create(1, "float32", dynamic_size=True, element_shape=[2])
    pair.fails_on("TensorArrayWriteV3", h, index=5, value=np.ones(3, np.float32))
    assert pair.size(h) == 1
    pair.fails_on("TensorArrayWriteV3", h, index=5, value=np.ones(2, np.int32))
    assert pair.size(h) == 1
    pair.fails_on("TensorArrayReadV3", h, "Tried to read from index 3 but array size is: 1", index=3, dtype=np.float32)
    pair.ok("TensorArrayWriteV3", handle=h, index=2, value=np.ones(2, np.float32), flow_in=F0)
    assert pair.size(h) == 3


def test_atomic_failed_scatter_keeps_inference_and_writes_undone(pair):
    h = pair.create(3, "float32", identical_element_shapes=True)
    pair.fails_on(
        "TensorArrayScatterV3",
        h,
        f"TensorArray {h.name}: Could not write to TensorArray index 1 because it has already been written to.",
        indices=[1, 1],
        value=np.ones((2, 2), np.float32),
    )
    # TF would have kept index 1 written and the inferred shape [2]
    pair.ok("TensorArrayWriteV3", handle=h, index=1, value=np.ones(5, np.float32), flow_in=F0)
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=np.ones(5, np.float32), flow_in=F0)


def test_write_after_zero_read_and_after_failed_read(pair):
    h = pair.create(2, "int64", element_shape=[2, 3])
    out = pair.ok("TensorArrayReadV3", handle=h, index=0, flow_in=F0, dtype=np.int64)
    assert out.shape == (2, 3) and out.dtype == np.int64 and not out.any()
    pair.fails_on(
        "TensorArrayWriteV3",
        h,
        f"TensorArray {h.name}: Could not write to TensorArray index 0 because it has already been read.",
        index=0,
        value=np.ones((2, 3), np.int64),
    )
    h2 = pair.create(2, "int64", element_shape=[None, 3])
    pair.fails_on(
        "TensorArrayReadV3",
        h2,
        f"TensorArray {h2.name}: Could not read from TensorArray index 1.  Furthermore, the element shape "
        "is not fully defined: [?,3].  It is possible you are working with a resizeable TensorArray and "
        "stop_gradients is not allowing the gradients to be written.  If you set the full element_shape "
        "property on the forward TensorArray, the proper all-zeros tensor will be returned instead of "
        "incurring this error.",
        index=1,
        dtype=np.int64,
    )
    pair.ok("TensorArrayWriteV3", handle=h2, index=1, value=np.ones((4, 3), np.int64), flow_in=F0)


# --------------------------------------------------------------------------- Read errors


def test_read_errors(pair):
    h = pair.create(3, "float32")
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=np.arange(3, dtype=np.float32), flow_in=F0)
    pair.fails_on(
        "TensorArrayReadV3", h, "TensorArray index must be scalar, but had shape: [2]", index=[0, 1], dtype=np.float32
    )
    pair.fails_on(
        "TensorArrayReadV3", h, "TensorArray dtype is float but Op requested dtype int32.", index=0, dtype=np.int32
    )
    pair.fails_on(
        "TensorArrayReadV3", h, "TensorArray dtype is float but Op requested dtype half.", index=0, dtype="float16"
    )
    pair.fails_on("TensorArrayReadV3", h, "Tried to read from index 5 but array size is: 3", index=5, dtype=np.float32)
    pair.fails_on(
        "TensorArrayReadV3", h, "Tried to read from index -1 but array size is: 3", index=-1, dtype=np.float32
    )
    pair.fails_on(
        "TensorArrayReadV3",
        h,
        f"TensorArray {h.name}: Could not read from TensorArray index 1.  Furthermore, the element shape is "
        "not fully defined: <unknown>.  It is possible you are working with a resizeable TensorArray and "
        "stop_gradients is not allowing the gradients to be written.  If you set the full element_shape "
        "property on the forward TensorArray, the proper all-zeros tensor will be returned instead of "
        "incurring this error.",
        index=1,
        dtype=np.float32,
    )
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=h, index=0, flow_in=F0, dtype=np.float32), [0, 1, 2])
    pair.fails_on(
        "TensorArrayReadV3",
        h,
        f"TensorArray {h.name}: Could not read index 0 twice because it was cleared after a previous read "
        "(perhaps try setting clear_after_read = false?).",
        index=0,
        dtype=np.float32,
    )
    pair.ok("TensorArrayCloseV3", handle=h)
    pair.fails_on("TensorArrayReadV3", h, f"TensorArray {h.name} has already been closed.", index=0, dtype=np.float32)


def test_read_dynamic_past_end_is_t9(pair):
    h = pair.create(2, "float32", dynamic_size=True, element_shape=[2])
    pair.fails_on("TensorArrayReadV3", h, "Tried to read from index 2 but array size is: 2", index=2, dtype=np.float32)
    assert pair.size(h) == 2


def test_read_returns_owned_arrays(pair):
    h = pair.create(2, "float64", clear_after_read=False)
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=np.arange(4.0), flow_in=F0)
    pair.ok("TensorArrayWriteV3", handle=h, index=1, value=np.arange(4.0) + 10, flow_in=F0)
    a = pair.ok("TensorArrayReadV3", handle=h, index=0, flow_in=F0, dtype=np.float64)
    a[...] = -1
    b = pair.ok("TensorArrayGatherV3", handle=h, indices=[0, 1], flow_in=F0, dtype=np.float64)
    b[...] = -1
    c, _ = pair.ok("TensorArrayConcatV3", handle=h, flow_in=F0, dtype=np.float64)
    c[...] = -1
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=h, index=0, flow_in=F0, dtype=np.float64), np.arange(4.0))


# --------------------------------------------------------------------------- Gather errors


def test_gather_errors(pair):
    h = pair.create(3, "float32", element_shape=[2])
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=np.ones(2, np.float32), flow_in=F0)
    pair.fails_on(
        "TensorArrayGatherV3",
        h,
        "TensorArray dtype is float but Op requested dtype double.",
        indices=[0],
        dtype=np.float64,
    )
    pair.fails_on(
        "TensorArrayGatherV3",
        h,
        "PartialTensorShape: Incompatible shapes during merge: [2] vs. [3]",
        indices=[0],
        dtype=np.float32,
        element_shape=[3],
    )
    pair.fails_on(
        "TensorArrayGatherV3",
        h,
        "PartialTensorShape: Incompatible ranks during merge: 1 vs. 2",
        indices=[0],
        dtype=np.float32,
        element_shape=[2, 1],
    )
    pair.fails_on(
        "TensorArrayGatherV3",
        h,
        "Expected indices to be a vector, but received shape: [1,1]",
        indices=[[0]],
        dtype=np.float32,
    )
    pair.fails_on(
        "TensorArrayGatherV3", h, "Expected indices to be a vector, but received shape: []", indices=0, dtype=np.float32
    )
    pair.fails_on(
        "TensorArrayGatherV3",
        h,
        "TensorArray has size zero, but element shape <unknown> is not fully defined. Currently only static "
        "shapes are supported when packing zero-size TensorArrays.",
        indices=[],
        dtype=np.float32,
        cls=UnimplementedError,
    )
    pair.fails_on(
        "TensorArrayGatherV3",
        h,
        "TensorArray has size zero, but element shape [?] is not fully defined. Currently only static "
        "shapes are supported when packing zero-size TensorArrays.",
        indices=np.zeros(0, np.int32),
        dtype=np.float32,
        element_shape=[None],
        cls=UnimplementedError,
    )
    pair.fails_on(
        "TensorArrayGatherV3", h, "Tried to read from index 3 but array size is: 3", indices=[0, 3], dtype=np.float32
    )
    pair.fails_on(
        "TensorArrayGatherV3", h, "Tried to read from index -1 but array size is: 3", indices=[-1], dtype=np.float32
    )
    # clear_after_read: duplicates read twice -> T11; atomic: index 0 still readable afterwards
    pair.fails_on(
        "TensorArrayGatherV3",
        h,
        f"TensorArray {h.name}: Could not read index 0 twice because it was cleared after a previous read "
        "(perhaps try setting clear_after_read = false?).",
        indices=[0, 1, 0],
        dtype=np.float32,
    )
    out = pair.ok("TensorArrayGatherV3", handle=h, indices=[0, 1], flow_in=F0, dtype=np.float32)
    assert_array_equal(out, [[1, 1], [0, 0]])
    pair.fails_on("TensorArrayWriteV3", h, index=1, value=np.ones(2, np.float32))
    pair.ok("TensorArrayWriteV3", handle=h, index=2, value=np.ones(2, np.float32), flow_in=F0)


def test_gather_element_shape_attr_narrowing(pair):
    # G4 after a successful merge: atomic -> the narrowing is undone (TF keeps it)
    h = pair.create(3, "float32")
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=np.ones(2, np.float32), flow_in=F0)
    pair.fails_on(
        "TensorArrayGatherV3",
        h,
        "TensorArray was passed element_shape [3] which does not match the Tensor at index 0: [2]",
        indices=[0],
        dtype=np.float32,
        element_shape=[3],
    )
    pair.ok("TensorArrayWriteV3", handle=h, index=1, value=np.ones(2, np.float32), flow_in=F0)
    pair.fails_on("TensorArrayReadV3", h, index=2, dtype=np.float32)  # still unknown: T10
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=h, index=0, flow_in=F0, dtype=np.float32), [1, 1])
    # a gather that reads index 1, then hits T10 at index 2: atomic -> index 1 is not cleared and
    # the merged attr [None] is not kept (TF would keep both)
    pair.fails_on("TensorArrayGatherV3", h, indices=[1, 2], dtype=np.float32, element_shape=[None])
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=h, index=1, flow_in=F0, dtype=np.float32), [1, 1])
    pair.ok("TensorArrayWriteV3", handle=h, index=2, value=np.ones((4, 4), np.float32), flow_in=F0)


def test_gather_narrowing_persists_on_success(pair):
    h = pair.create(3, "float32")
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=np.ones(2, np.float32), flow_in=F0)
    out = pair.ok("TensorArrayGatherV3", handle=h, indices=[0, 1], flow_in=F0, dtype=np.float32, element_shape=[2])
    assert_array_equal(out, [[1, 1], [0, 0]])
    pair.fails_on(
        "TensorArrayWriteV3",
        h,
        f"TensorArray {h.name}: Could not write to TensorArray index 2 because the value shape is [3] which "
        "is incompatible with the TensorArray's inferred element shape: [2] (consider setting "
        "infer_shape=False).",
        index=2,
        value=np.ones(3, np.float32),
    )
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=h, index=2, flow_in=F0, dtype=np.float32), [0, 0])


def test_gather_empty_first_element_skips_shape_check(pair):
    # TF's Gather kernel returns its empty output before the G5 comparison (verified on TF 2.21:
    # shapes [0],[2],[2,2] gather [0,1,2] -> zeros (3,0)); semantics reference, sem-gather step 7.
    h = pair.create(3, "float32", clear_after_read=False)
    for i, shape in enumerate([(0,), (2,), (2, 2)]):
        pair.ok("TensorArrayWriteV3", handle=h, index=i, value=np.ones(shape, np.float32), flow_in=F0)
    out = pair.ok("TensorArrayGatherV3", handle=h, indices=[0, 1, 2], flow_in=F0, dtype=np.float32)
    assert out.shape == (3, 0) and out.dtype == np.float32
    pair.fails_on(
        "TensorArrayGatherV3",
        h,
        "TensorArray has inconsistent shapes.  Index 0 has shape: [2] but index 1 has shape: [0]",
        indices=[1, 0],
        dtype=np.float32,
    )


def test_gather_empty_on_closed(pair):
    h = pair.create(2, "int32")
    pair.ok("TensorArrayCloseV3", handle=h)
    out = pair.ok("TensorArrayGatherV3", handle=h, indices=[], flow_in=F0, dtype=np.int32, element_shape=[2])
    assert out.shape == (0, 2) and out.dtype == np.int32
    pair.fails_on(
        "TensorArrayGatherV3",
        h,
        f"TensorArray {h.name} has already been closed.",
        indices=[0],
        dtype=np.int32,
        element_shape=[2],
    )


# --------------------------------------------------------------------------- Scatter errors


def test_scatter_errors(pair):
    h = pair.create(3, "float32", element_shape=[2])
    v = np.ones((2, 2), np.float32)
    pair.fails_on(
        "TensorArrayScatterV3",
        h,
        "TensorArray dtype is float but Op is trying to write dtype int32.",
        indices=[0],
        value=np.int32(1),
    )  # K7 before S2
    pair.fails_on(
        "TensorArrayScatterV3",
        h,
        "Input value for unpack must be at least a vector but received shape: []",
        indices=[0],
        value=np.float32(1),
    )
    pair.fails_on(
        "TensorArrayScatterV3",
        h,
        "Expected indices to be a vector, but received shape: [2,1]",
        indices=[[0], [1]],
        value=v,
    )
    pair.fails_on(
        "TensorArrayScatterV3",
        h,
        "Expected len(indices) == values.shape[0], but saw: 3 vs. 2",
        indices=[0, 1, 2],
        value=v,
    )
    pair.fails_on(
        "TensorArrayScatterV3", h, "Max scatter index must be < array size (3 vs. 3)", indices=[0, 3], value=v
    )
    pair.fails_on(
        "TensorArrayScatterV3",
        h,
        f"TensorArray {h.name}: Tried to write to index -1 but array is not resizeable and size is: 3",
        indices=[0, -1],
        value=v,
    )
    pair.fails_on(
        "TensorArrayScatterV3",
        h,
        f"TensorArray {h.name}: Could not write to TensorArray index 1 because it has already been written to.",
        indices=[0, 1, 1],
        value=np.stack([v[0], v[0] * 2, v[0] * 3]),
    )
    pair.fails_on(
        "TensorArrayScatterV3",
        h,
        f"TensorArray {h.name}: Could not write to TensorArray index 2 because the value shape is [3] which "
        "is incompatible with the TensorArray's inferred element shape: [2] (consider setting "
        "infer_shape=False).",
        indices=[2, 0],
        value=np.ones((2, 3), np.float32),
    )
    # none of the failures wrote anything (TF would have written index 0 / index 1)
    pair.ok(
        "TensorArrayScatterV3",
        handle=h,
        indices=[1, 0, 2],
        value=np.arange(6, dtype=np.float32).reshape(3, 2),
        flow_in=F0,
    )
    out = pair.ok("TensorArrayGatherV3", handle=h, indices=[0, 1, 2], flow_in=F0, dtype=np.float32)
    assert_array_equal(out, [[2, 3], [0, 1], [4, 5]])
    pair.ok("TensorArrayCloseV3", handle=h)
    pair.fails_on(
        "TensorArrayScatterV3",
        h,
        "Input value for unpack must be at least a vector but received shape: []",
        indices=[0],
        value=np.float32(1),
    )  # S2 before T1
    pair.fails_on(
        "TensorArrayScatterV3", h, f"TensorArray {h.name} has already been closed.", indices=[[0]], value=v[:1]
    )  # T1 before G2


def test_scatter_dynamic_growth_and_empty(pair):
    h = pair.create(1, "int32", dynamic_size=True)
    pair.ok("TensorArrayScatterV3", handle=h, indices=[], value=np.zeros((0, 2), np.int32), flow_in=F0)
    assert pair.size(h) == 1
    pair.ok("TensorArrayScatterV3", handle=h, indices=[3, 0], value=np.ones((2, 2), np.int32), flow_in=F0)
    assert pair.size(h) == 4
    pair.fails_on("TensorArrayScatterV3", h, indices=[9, 0], value=np.ones((2, 2), np.int32))
    assert pair.size(h) == 4  # atomic: no growth to 10


# --------------------------------------------------------------------------- Concat errors


def test_concat_errors(pair):
    h = pair.create(0, "float32")
    pair.fails_on(
        "TensorArrayConcatV3",
        h,
        "TensorArray has size zero, but element_shape_except0 <unknown> is not fully defined. Currently only "
        "static shapes are supported when concatenating zero-size TensorArrays.",
        dtype=np.float32,
        cls=UnimplementedError,
    )
    v, lengths = pair.ok("TensorArrayConcatV3", handle=h, flow_in=F0, dtype=np.float32, element_shape_except0=[2])
    assert v.shape == (0, 2) and v.dtype == np.float32 and lengths.dtype == np.int64 and lengths.shape == (0,)
    h = pair.create(2, "float32")
    pair.fails_on("TensorArrayConcatV3", h, "TensorArray dtype is float but Op requested dtype int32.", dtype=np.int32)
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=np.ones((1, 2), np.float32), flow_in=F0)
    pair.fails_on("TensorArrayConcatV3", h, dtype=np.float32)  # T10 for index 1
    pair.ok("TensorArrayWriteV3", handle=h, index=1, value=np.ones((2, 3), np.float32), flow_in=F0)
    pair.fails_on(
        "TensorArrayConcatV3",
        h,
        "TensorArray was passed element_shape_except0 [3] but index 0 has (excepting dimension 0) shape: [2] "
        "which does not match.",
        dtype=np.float32,
        element_shape_except0=[3],
    )
    pair.fails_on(
        "TensorArrayConcatV3",
        h,
        "TensorArray has inconsistent shapes.  Index 0 has (excepting dimension 0) shape: [2] but index 1 "
        "has (excepting dimension 0) shape: [3]",
        dtype=np.float32,
    )
    # atomic: the failed concats cleared nothing
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=h, index=0, flow_in=F0, dtype=np.float32), [[1, 1]])
    h = pair.create(2, "float32")
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=np.ones(2, np.float32), flow_in=F0)
    pair.ok("TensorArrayWriteV3", handle=h, index=1, value=np.float32(1), flow_in=F0)
    pair.fails_on(
        "TensorArrayConcatV3",
        h,
        "Concat saw a scalar shape at index 1 but requires at least vectors.  Did you mean to call pack?",
        dtype=np.float32,
    )
    pair.ok("TensorArrayCloseV3", handle=h)
    pair.fails_on("TensorArrayConcatV3", h, f"TensorArray {h.name} has already been closed.", dtype=np.float32)


@pytest.mark.parametrize(
    "elements, except0, message",
    [
        # element by element: C2 at i, then C3 at i == 0 or C4 at i > 0 (fuzz seed 70831)
        (
            [np.zeros((1, 0)), np.float32(9)],
            [],
            "TensorArray was passed element_shape_except0 [] but index 0 has (excepting dimension 0) shape: [0] "
            "which does not match.",
        ),
        ([np.zeros((1, 0)), np.float32(9)], None, "Concat saw a scalar shape at index 1 but"),
        ([np.float32(9), np.zeros((1, 0))], [], "Concat saw a scalar shape at index 0 but"),
        ([np.ones(2), np.ones((2, 1)), np.float32(9)], None, "TensorArray has inconsistent shapes.  Index 0 has"),
        ([np.ones(2), np.float32(9), np.ones((2, 1))], None, "Concat saw a scalar shape at index 1 but"),
    ],
    ids=["C3-at-0-before-C2-at-1", "C2-at-1", "C2-at-0-before-C3", "C4-at-1-before-C2-at-2", "C2-at-1-before-C4-at-2"],
)
def test_concat_check_order(pair, elements, except0, message):
    h = pair.create(len(elements), "float32")
    for i, v in enumerate(elements):
        pair.ok("TensorArrayWriteV3", handle=h, index=i, value=np.asarray(v, np.float32), flow_in=F0)
    e = pair.fails_on("TensorArrayConcatV3", h, dtype=np.float32, element_shape_except0=except0)
    assert e.message.startswith(message)  # and numba_ta's message equals the reference's


def test_concat_grad_never_split_raises(pair):
    # TF segfaults here (divergence 2): numba_ta raises InvalidArgumentError, any message.
    h = pair.create(2, "float32", element_shape=[2])
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=np.ones(2, np.float32), flow_in=F0)
    g = pair.grad(h)
    pair.fails_on("TensorArrayConcatV3", g, any_message=True, dtype=np.float32)
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=g, index=0, flow_in=F0, dtype=np.float32), [0, 0])


# --------------------------------------------------------------------------- Split errors


def test_split_errors(pair):
    h = pair.create(3, "float32")
    v = np.ones((3, 2), np.float32)
    pair.fails_on("TensorArraySplitV3", h, "Expected lengths to be a vector, received shape: []", value=v, lengths=3)
    pair.fails_on(
        "TensorArraySplitV3",
        h,
        "Expected value to be at least a vector, but received shape: []",
        value=np.float32(1),
        lengths=[1, 1, 1],
    )
    pair.fails_on(
        "TensorArraySplitV3",
        h,
        "Expected sum of lengths to be equal to values.shape[0], but sum of lengths is 4 and value's shape is: [3,2]",
        value=v,
        lengths=[1, 1, 2],
    )
    pair.fails_on(
        "TensorArraySplitV3",
        h,
        "TensorArray's size is not equal to the size of lengths (3 vs. 2), and the TensorArray is not marked "
        "as dynamically resizeable",
        value=v.astype(np.int32),
        lengths=[1, 2],
    )  # P5 before K7
    pair.fails_on(
        "TensorArraySplitV3",
        h,
        "TensorArray dtype is float but Op is trying to write dtype int32.",
        value=v.astype(np.int32),
        lengths=[1, 1, 1],
    )
    # negative lengths: TF aborts (divergence 2): numba_ta raises InvalidArgumentError, any message
    pair.fails_on("TensorArraySplitV3", h, any_message=True, value=v, lengths=[2, -1, 2])
    pair.ok("TensorArraySplitV3", handle=h, value=v, lengths=np.array([0, 3, 0], np.int64), flow_in=F0)
    out = pair.ok("TensorArrayReadV3", handle=h, index=0, flow_in=F0, dtype=np.float32)
    assert out.shape == (0, 2)
    pair.ok("TensorArrayCloseV3", handle=h)
    pair.fails_on(
        "TensorArraySplitV3", h, "Expected lengths to be a vector, received shape: []", value=v, lengths=3
    )  # P1 before T1
    pair.fails_on("TensorArraySplitV3", h, f"TensorArray {h.name} has already been closed.", value=v, lengths=[1, 1, 1])


def test_split_dynamic(pair):
    h = pair.create(5, "float32", dynamic_size=True)
    v = np.arange(3, dtype=np.float32)
    pair.fails_on(
        "TensorArraySplitV3",
        h,
        "TensorArray's size is not equal to the size of lengths (5 vs. 2), and the TensorArray is not marked "
        "as dynamically resizeable",
        value=v,
        lengths=[1, 2],
    )
    h = pair.create(1, "float32", dynamic_size=True, element_shape=[1])
    # T4 at the second element: atomic -> no growth, nothing written
    pair.fails_on(
        "TensorArraySplitV3",
        h,
        f"TensorArray {h.name}: Could not write to TensorArray index 1 because the value shape is [2] which is "
        "incompatible with the TensorArray's inferred element shape: [1] (consider setting "
        "infer_shape=False).",
        value=v,
        lengths=[1, 2],
    )
    assert pair.size(h) == 1
    pair.ok("TensorArraySplitV3", handle=h, value=v, lengths=[1, 1, 1], flow_in=F0)
    assert pair.size(h) == 3


def test_split_negative_length_leaves_array_unchanged(pair):
    h = pair.create(0, "int32", dynamic_size=True)
    pair.fails_on("TensorArraySplitV3", h, any_message=True, value=np.arange(2, dtype=np.int32), lengths=[3, -1])
    assert pair.size(h) == 0
    g = pair.grad(h)
    pair.fails_on("TensorArrayConcatV3", g, any_message=True, dtype=np.int32)


# --------------------------------------------------------------------------- Size / Close


def test_size_and_close(pair):
    h = pair.create(2, "bool")
    assert pair.size(h) == 2
    pair.ok("TensorArrayCloseV3", handle=h)
    pair.ok("TensorArrayCloseV3", handle=h)
    for op, kw in [
        ("TensorArraySizeV3", {}),
        ("TensorArrayReadV3", {"index": 0, "dtype": np.bool_}),
        ("TensorArrayScatterV3", {"indices": [0], "value": np.ones(1, bool)}),
        ("TensorArrayConcatV3", {"dtype": np.bool_}),
        ("TensorArraySplitV3", {"value": np.ones(2, bool), "lengths": [1, 1]}),
        ("TensorArrayGradV3", {"source": "gradients"}),
        ("TensorArrayGradWithShape", {"source": "g", "shape_to_prepend": [1]}),
    ]:
        pair.fails(op, IAE, f"TensorArray {h.name} has already been closed.", handle=h, flow_in=F0, **kw)


# --------------------------------------------------------------------------- GradV3 / GradWithShape


def test_grad_basics(pair):
    h = pair.create(3, "float32", dynamic_size=True)
    pair.ok("TensorArrayWriteV3", handle=h, index=1, value=np.ones(3, np.float32), flow_in=F0)
    g = pair.ok("TensorArrayGradV3", handle=h, flow_in=np.float32(42), source="gradients")
    assert g.name == h.name + "@gradients"
    gh, gflow = raw_ops.TensorArrayGradV3(handle=h.nt, flow_in=np.float32(42), source="gradients")
    assert float(gflow) == 0.0 and gh.name == g.name
    assert pair.size(g) == 3
    # the forward array is no longer resizeable
    pair.fails_on(
        "TensorArrayWriteV3",
        h,
        f"TensorArray {h.name}: Tried to write to index 3 but array is not resizeable and size is: 3",
        index=3,
        value=np.ones(3, np.float32),
    )
    pair.fails_on(
        "TensorArrayWriteV3",
        g,
        f"TensorArray {g.name}: Tried to write to index 3 but array is not resizeable and size is: 3",
        index=3,
        value=np.ones(3, np.float32),
    )
    # T7 against the forward-written shape
    pair.fails_on(
        "TensorArrayWriteV3",
        g,
        f"TensorArray {g.name}: Could not aggregate to TensorArray index 1 because the existing shape is [3] "
        "but the new input shape is [2].",
        index=1,
        value=np.ones(2, np.float32),
    )
    # unwritten forward slot: the first grad write sets the shape
    pair.ok("TensorArrayWriteV3", handle=g, index=0, value=np.float32(2), flow_in=F0)
    pair.fails_on(
        "TensorArrayWriteV3",
        g,
        f"TensorArray {g.name}: Could not aggregate to TensorArray index 0 because the existing shape is [] "
        "but the new input shape is [1].",
        index=0,
        value=np.ones(1, np.float32),
    )
    # same key through the second handle: shared contents
    pair.ok("TensorArrayWriteV3", handle=PH(gh, g.ref), index=0, value=np.float32(3), flow_in=F0)
    assert pair.ok("TensorArrayReadV3", handle=g, index=0, flow_in=F0, dtype=np.float32) == 5
    # soft zero of the forward shape; unwritten forward slot with unknown element shape -> T10
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=g, index=1, flow_in=F0, dtype=np.float32), [0, 0, 0])
    pair.fails_on(
        "TensorArrayReadV3",
        g,
        f"TensorArray {g.name}: Could not read from TensorArray index 2.  Furthermore, the element shape is "
        "not fully defined: <unknown>.  It is possible you are working with a resizeable TensorArray and "
        "stop_gradients is not allowing the gradients to be written.  If you set the full element_shape "
        "property on the forward TensorArray, the proper all-zeros tensor will be returned instead of "
        "incurring this error.",
        index=2,
        dtype=np.float32,
    )
    pair.fails_on(
        "TensorArrayReadV3", g, "Tried to read from index -1 but array size is: 3", index=-1, dtype=np.float32
    )
    # another source is an independent array
    g2 = pair.grad(h, "gradients_1")
    assert g2.name == h.name + "@gradients_1"
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=g2, index=1, flow_in=F0, dtype=np.float32), [0, 0, 0])
    # grad of grad
    pair.fails_on("TensorArrayGradV3", g, f"Wrong input container. _tensor_array_grads{g.name}", source="gradients")
    pair.fails_on(
        "TensorArrayGradWithShape",
        g,
        f"Wrong input container. _tensor_array_grads{g.name}",
        shape_to_prepend=[2],
        source="x",
    )
    # closing the forward does not affect the grad array
    pair.ok("TensorArrayCloseV3", handle=h)
    pair.ok("TensorArrayWriteV3", handle=g, index=2, value=np.ones(2, np.float32), flow_in=F0)
    pair.fails_on("TensorArrayGradV3", h, f"TensorArray {h.name} has already been closed.", source="other")


def test_grad_read_past_end_grows(pair):
    h = pair.create(3, "float64", element_shape=[2])
    g = pair.grad(h)
    out = pair.ok("TensorArrayReadV3", handle=g, index=6, flow_in=F0, dtype=np.float64)
    assert_array_equal(out, [0, 0])
    assert pair.size(g) == 7
    # the new slots are soft zeros: a write stores, a read gives zeros
    pair.ok("TensorArrayWriteV3", handle=g, index=5, value=np.ones(2), flow_in=F0)
    pair.ok("TensorArrayWriteV3", handle=g, index=5, value=np.ones(2), flow_in=F0)
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=g, index=5, flow_in=F0, dtype=np.float64), [2, 2])
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=g, index=4, flow_in=F0, dtype=np.float64), [0, 0])
    pair.fails_on("TensorArrayWriteV3", g, index=6, value=np.ones(2))  # T5
    # not fully defined: T10 and no growth
    h2 = pair.create(2, "float64", element_shape=[None])
    g2 = pair.grad(h2)
    pair.fails_on("TensorArrayReadV3", g2, index=4, dtype=np.float64)
    assert pair.size(g2) == 2


@pytest.mark.parametrize("dtype", DTYPES)
def test_grad_aggregation_dtypes(pair, dtype, parallel):
    h = pair.create(2, dtype)
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=val(dtype, (2,), 0), flow_in=F0)
    g = pair.grad(h)
    pair.ok("TensorArrayWriteV3", handle=g, index=0, value=val(dtype, (2,), 1), flow_in=F0)  # into Z: store
    pair.ok("TensorArrayWriteV3", handle=g, index=1, value=val(dtype, (2,), 2), flow_in=F0)  # into U: store
    if dtype == "bool":
        for i in (0, 1):
            pair.fails_on(
                "TensorArrayWriteV3",
                g,
                "tensor_array::AddToTensor type not supported: bool",
                index=i,
                value=val(dtype, (2,), 3),
            )
        expect0, expect1 = val(dtype, (2,), 1), val(dtype, (2,), 2)
    else:
        for k in (3, 4):
            pair.ok("TensorArrayWriteV3", handle=g, index=0, value=val(dtype, (2,), k), flow_in=F0)
        pair.ok("TensorArrayWriteV3", handle=g, index=1, value=val(dtype, (2,), 5), flow_in=F0)
        expect0 = val(dtype, (2,), 1) + val(dtype, (2,), 3) + val(dtype, (2,), 4)
        expect1 = val(dtype, (2,), 2) + val(dtype, (2,), 5)
    out = pair.ok("TensorArrayGatherV3", handle=g, indices=[0, 1], flow_in=F0, dtype=dtype)
    assert_array_equal(out, np.stack([expect0, expect1]))
    # the forward array is untouched by the aggregation
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=h, index=0, flow_in=F0, dtype=dtype), val(dtype, (2,), 0))


def test_grad_copy_shapes_includes_zero_read(pair):
    h = pair.create(3, "float32", element_shape=[2], clear_after_read=True)
    pair.ok("TensorArrayReadV3", handle=h, index=2, flow_in=F0, dtype=np.float32)  # zero read marks it written
    h2 = pair.create(3, "float32", element_shape=[None])
    pair.ok("TensorArrayWriteV3", handle=h2, index=0, value=np.ones(4, np.float32), flow_in=F0)
    pair.ok("TensorArrayReadV3", handle=h2, index=0, flow_in=F0, dtype=np.float32)  # cleared: shape kept
    g2 = pair.grad(h2)
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=g2, index=0, flow_in=F0, dtype=np.float32), np.zeros(4))
    pair.fails_on("TensorArrayReadV3", g2, index=1, dtype=np.float32)  # U, [?]: T10
    g = pair.grad(h)
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=g, index=2, flow_in=F0, dtype=np.float32), [0, 0])


def test_grad_identical_shapes_inherited(pair):
    h = pair.create(3, "float32", identical_element_shapes=True)
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=np.ones((2, 2), np.float32), flow_in=F0)
    g = pair.grad(h)
    # the grad array got the refined forward element shape [2,2]
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=g, index=2, flow_in=F0, dtype=np.float32), np.zeros((2, 2)))
    pair.fails_on(
        "TensorArrayWriteV3",
        g,
        f"TensorArray {g.name}: Could not write to TensorArray index 1 because the value shape is [3] which is "
        "incompatible with the TensorArray's inferred element shape: [2,2] (consider setting "
        "infer_shape=False).",
        index=1,
        value=np.ones(3, np.float32),
    )


def test_grad_with_shape(pair):
    h = pair.create(3, "float32", element_shape=[3])
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=np.ones(3, np.float32), flow_in=F0)
    g = pair.ok("TensorArrayGradWithShape", handle=h, flow_in=np.float32(7), shape_to_prepend=[4], source="g2")
    assert g.name == h.name + "@g2"
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=g, index=0, flow_in=F0, dtype=np.float32), np.zeros((4, 3)))
    pair.ok("TensorArrayWriteV3", handle=g, index=1, value=np.ones((4, 3), np.float32), flow_in=F0)
    # same key: the first creator wins, a new prepend is ignored
    g_again = pair.ok("TensorArrayGradWithShape", handle=h, flow_in=F0, shape_to_prepend=[5, 7], source="g2")
    assert g_again.name == g.name
    pair.fails_on(
        "TensorArrayWriteV3",
        g_again,
        f"TensorArray {g.name}: Could not write to TensorArray index 2 because the value shape is [5,7,3] "
        "which is incompatible with the TensorArray's inferred element shape: [4,3] (consider setting "
        "infer_shape=False).",
        index=2,
        value=np.ones((5, 7, 3), np.float32),
    )
    g_v3 = pair.grad(h, "g2")
    assert_array_equal(
        pair.ok("TensorArrayReadV3", handle=g_v3, index=1, flow_in=F0, dtype=np.float32), np.ones((4, 3))
    )
    assert_array_equal(
        pair.ok("TensorArrayReadV3", handle=g_v3, index=2, flow_in=F0, dtype=np.float32), np.zeros((4, 3))
    )
    # a GradV3 first, then WithShape with the same source: the GradV3 array
    gv = pair.grad(h, "g3")
    gw = pair.ok("TensorArrayGradWithShape", handle=h, flow_in=F0, shape_to_prepend=[2], source="g3")
    assert gw.name == gv.name
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=gw, index=2, flow_in=F0, dtype=np.float32), np.zeros(3))


def test_grad_with_shape_partial_and_unknown(pair):
    h = pair.create(2, "float32", element_shape=[None, 3])
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=np.ones((1, 3), np.float32), flow_in=F0)
    g = pair.ok("TensorArrayGradWithShape", handle=h, flow_in=F0, shape_to_prepend=np.array([2], np.int32), source="p")
    assert pair.ok("TensorArrayReadV3", handle=g, index=0, flow_in=F0, dtype=np.float32).shape == (2, 1, 3)
    pair.fails_on("TensorArrayReadV3", g, index=1, dtype=np.float32)  # [2,?,3]: T10
    pair.fails_on("TensorArrayWriteV3", g, index=1, value=np.ones((1, 3), np.float32))  # T4
    pair.ok("TensorArrayWriteV3", handle=g, index=1, value=np.ones((2, 5, 3), np.float32), flow_in=F0)
    # forward rank unknown: the grad element shape stays unknown, the prepend still applies to written slots
    h2 = pair.create(2, "float32")
    pair.ok("TensorArrayWriteV3", handle=h2, index=0, value=np.ones(3, np.float32), flow_in=F0)
    g2 = pair.ok("TensorArrayGradWithShape", handle=h2, flow_in=F0, shape_to_prepend=[2, 1], source="p")
    assert pair.ok("TensorArrayReadV3", handle=g2, index=0, flow_in=F0, dtype=np.float32).shape == (2, 1, 3)
    pair.fails_on("TensorArrayReadV3", g2, index=1, dtype=np.float32)
    pair.ok("TensorArrayWriteV3", handle=g2, index=1, value=np.ones(7, np.float32), flow_in=F0)
    # an empty prepend behaves like GradV3
    g3 = pair.ok("TensorArrayGradWithShape", handle=h2, flow_in=F0, shape_to_prepend=[], source="e")
    assert pair.ok("TensorArrayReadV3", handle=g3, index=0, flow_in=F0, dtype=np.float32).shape == (3,)


def test_grad_with_shape_errors_are_atomic(pair):
    h = pair.create(1, "float32", dynamic_size=True)
    pair.fails_on(
        "TensorArrayGradWithShape",
        h,
        "shape must be a vector of {int32,int64}, got shape [1,1]",
        shape_to_prepend=[[1]],
        source="g",
    )
    pair.fails_on(
        "TensorArrayGradWithShape",
        h,
        "shape must be a vector of {int32,int64}, got shape []",
        shape_to_prepend=3,
        source="g",
    )
    pair.fails_on("TensorArrayGradWithShape", h, "Dimension -1 must be >= 0", shape_to_prepend=[2, -1], source="g")
    # TF would have disabled dynamic size; numba_ta's failed op changed nothing
    pair.ok("TensorArrayWriteV3", handle=h, index=3, value=np.float32(1), flow_in=F0)
    assert pair.size(h) == 4
    # and no grad array was registered under that key
    g = pair.ok("TensorArrayGradWithShape", handle=h, flow_in=F0, shape_to_prepend=[2], source="g")
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=g, index=3, flow_in=F0, dtype=np.float32), [0, 0])


def test_grad_of_split_forward_concat(pair):
    h = pair.create(3, "float32", clear_after_read=False)
    pair.ok(
        "TensorArraySplitV3",
        handle=h,
        value=np.arange(6, dtype=np.float32).reshape(3, 2),
        lengths=[1, 0, 2],
        flow_in=F0,
    )
    pair.ok("TensorArrayConcatV3", handle=h, flow_in=F0, dtype=np.float32)
    g = pair.grad(h)
    # gradient of concat = split into the grad array, of split = concat of the grad array
    pair.ok("TensorArraySplitV3", handle=g, value=np.ones((3, 2), np.float32), lengths=[1, 0, 2], flow_in=F0)
    pair.ok("TensorArraySplitV3", handle=g, value=np.ones((3, 2), np.float32) * 2, lengths=[1, 0, 2], flow_in=F0)
    pair.fails_on("TensorArraySplitV3", g, value=np.ones((3, 2), np.float32), lengths=[2, 0, 1])  # T7
    value, lengths = pair.ok("TensorArrayConcatV3", handle=g, flow_in=F0, dtype=np.float32)
    assert_array_equal(value, np.full((3, 2), 3.0))
    assert lengths.tolist() == [1, 0, 2]
    # the grad array grows on a read past the end, but concat still covers marked_size elements
    g2 = pair.grad(h, "other")
    pair.fails_on("TensorArrayReadV3", g2, index=5, dtype=np.float32)  # unknown shape: T10
    value, lengths = pair.ok("TensorArrayConcatV3", handle=g2, flow_in=F0, dtype=np.float32)
    assert value.shape == (3, 2) and not value.any()


# --------------------------------------------------------------------------- random op sequences


def _random_kwargs(rng, pair, handles, dtype):
    h = handles[rng.integers(len(handles))]
    st = pair.ref.state(h.ref)
    n = max(st["size"], 1)
    es = st["element_shape"]
    shape = (2,) if es is None else tuple(2 if d is None else d for d in es)
    r = rng.random()
    if r < 0.1:
        shape = shape + (1,)
    elif r < 0.2:
        shape = (3,) + shape[1:]
    ops = ["w", "r", "g", "s", "c", "p", "grad", "gws", "size", "close"]
    op = rng.choice(ops, p=[0.22, 0.14, 0.1, 0.12, 0.08, 0.08, 0.08, 0.06, 0.1, 0.02])
    idx = int(rng.integers(-1, n + 2)) if rng.random() < 0.15 else int(rng.integers(0, n))
    if op == "w":
        return h, "TensorArrayWriteV3", {"index": idx, "value": val(dtype, shape, int(rng.integers(5)))}
    if op == "r":
        return h, "TensorArrayReadV3", {"index": idx, "dtype": dtype}
    if op == "g":
        ind = rng.integers(-(rng.random() < 0.1), n + (rng.random() < 0.2), size=rng.integers(0, 4))
        return (
            h,
            "TensorArrayGatherV3",
            {"indices": ind, "dtype": dtype, "element_shape": list(shape) if rng.random() < 0.4 else None},
        )
    if op == "s":
        ind = rng.integers(-(rng.random() < 0.1), n + (rng.random() < 0.2), size=rng.integers(0, 4))
        return h, "TensorArrayScatterV3", {"indices": ind, "value": val(dtype, (len(ind),) + shape, 2)}
    if op == "c":
        return (
            h,
            "TensorArrayConcatV3",
            {"dtype": dtype, "element_shape_except0": list(shape[1:]) if rng.random() < 0.3 else None},
        )
    if op == "p":
        lens = rng.integers(0, 3, size=n if rng.random() < 0.85 else n + 1)
        if rng.random() < 0.05:
            lens[0] = -1
        lead = shape[1:] if shape else ()
        return h, "TensorArraySplitV3", {"value": val(dtype, (max(int(lens.sum()), 0),) + lead, 3), "lengths": lens}
    if op == "grad":
        return h, "TensorArrayGradV3", {"source": str(rng.choice(["gradients", "gradients_1"]))}
    if op == "gws":
        prepend = [int(x) for x in rng.integers(1, 3, size=rng.integers(0, 3))]
        return (
            h,
            "TensorArrayGradWithShape",
            {"source": str(rng.choice(["gradients", "g2"])), "shape_to_prepend": prepend},
        )
    if op == "size":
        return h, "TensorArraySizeV3", {}
    return h, "TensorArrayCloseV3", {}


RANDOM_CONFIGS = [
    # dtype, element_shape, dynamic, clear_after_read, identical
    ("float32", None, False, True, False),
    ("int64", [2], True, True, False),
    ("bool", [None, 2], False, False, False),
    ("complex64", [2], True, False, True),
    ("float16", None, False, True, True),
    ("uint8", [None], True, False, False),
    ("float64", [2, 2], True, True, False),
    ("int32", [], False, False, True),
]


@pytest.mark.parametrize("seed", range(len(RANDOM_CONFIGS) * 2))
def test_random_sequences(pair, seed, parallel):
    rng = np.random.default_rng(seed)
    dtype, es, dynamic, car, identical = RANDOM_CONFIGS[seed % len(RANDOM_CONFIGS)]
    handles = [
        pair.create(
            3, dtype, element_shape=es, dynamic_size=dynamic, clear_after_read=car, identical_element_shapes=identical
        ),
        pair.create(2, dtype, dynamic_size=True, clear_after_read=False),
    ]
    for _ in range(150):
        h, op, kw = _random_kwargs(rng, pair, handles, dtype)
        if op == "TensorArrayCloseV3":
            pair.same(op, handle=h, **kw)
            continue
        res, err = pair.same(op, handle=h, flow_in=F0, **kw)
        if op.startswith("TensorArrayGrad") and err is None and all(x.name != res.name for x in handles):
            handles.append(res)
    for h in handles:
        pair.probe(h, dtype)


# --------------------------------------------------------------------------- more edge cases


def test_scatter_dynamic_negative_index_after_growth(pair):
    h = pair.create(1, "float32", dynamic_size=True)
    # the write to index 2 grows the array to 3 inside the op, so the T2 for -1 reports size 3;
    # the op is atomic, so afterwards the size is 1 again (TF keeps 3 and the write to index 2)
    pair.fails_on(
        "TensorArrayScatterV3",
        h,
        f"TensorArray {h.name}: Tried to write to index -1 but array is not resizeable and size is: 3",
        indices=[2, -1],
        value=np.ones((2, 4), np.float32),
    )
    assert pair.size(h) == 1
    pair.ok("TensorArrayWriteV3", handle=h, index=2, value=np.ones(4, np.float32), flow_in=2.0)


def test_python_flow_and_index_types(pair):
    h = pair.create(np.int64(3), "int32")
    flow = pair.ok("TensorArrayWriteV3", handle=h, index=np.int32(1), value=[[1, 2]], flow_in=2.0)
    assert isinstance(flow, np.float32) and flow == 2.0
    flow = pair.ok(
        "TensorArrayScatterV3",
        handle=h,
        indices=np.array([0, 2], np.int64),
        value=[[[3, 4]], [[5, 6]]],
        flow_in=np.float32(-1.5),
    )
    assert flow == -1.5
    out = pair.ok("TensorArrayGatherV3", handle=h, indices=(2, 1, 0), flow_in=0.0, dtype="int32")
    assert_array_equal(out, [[[5, 6]], [[1, 2]], [[3, 4]]])


class _DuckDType:
    """Stands for a tf.DType: only ``as_numpy_dtype`` is used."""

    def __init__(self, dt):
        self.as_numpy_dtype = np.dtype(dt).type


class _DuckTensor:
    """Stands for a TF eager tensor: only ``numpy()`` is used."""

    def __init__(self, a):
        self._a = a

    def numpy(self):
        return self._a


def test_duck_typed_dtype_and_value(pair):
    h = pair.ok("TensorArrayV3", size=2, dtype=_DuckDType("float32"))
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=_DuckTensor(np.ones(2, np.float32)), flow_in=F0)
    pair.fails_on(
        "TensorArrayWriteV3",
        h,
        "TensorArray dtype is float but Op is trying to write dtype double.",
        index=1,
        value=_DuckTensor(np.ones(2, np.float64)),
    )
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=h, index=0, flow_in=F0, dtype=_DuckDType("float32")), [1, 1])
    pair.fails_on(
        "TensorArrayReadV3",
        h,
        "TensorArray dtype is float but Op requested dtype complex64.",
        index=0,
        dtype=_DuckDType("complex64"),
    )


@pytest.mark.parametrize("dtype", ["float64", "int32", "complex64"])
def test_large_dynamic_growth_and_ragged(pair, dtype, parallel):
    h = pair.create(0, dtype, dynamic_size=True, clear_after_read=False)
    for i in range(0, 120, 7):
        pair.write(h, i, val(dtype, (i % 4, 3), i))
    assert pair.size(h) == 120
    pair.write(h, 400, val(dtype, (2, 3), 1))
    assert pair.size(h) == 401
    pair.same("TensorArrayGatherV3", handle=h, indices=list(range(7, 120, 7)), flow_in=F0, dtype=dtype)  # G5
    pair.same("TensorArrayGatherV3", handle=h, indices=[7 * 2, 7 * 6, 7 * 10], flow_in=F0, dtype=dtype)
    pair.same("TensorArrayReadV3", handle=h, index=300, flow_in=F0, dtype=dtype)  # T10: shape unknown
    pair.same("TensorArrayConcatV3", handle=h, flow_in=F0, dtype=dtype)  # T10 at index 1
    for i in range(401):
        if (i % 7 or i >= 120) and i != 400:
            pair.same(
                "TensorArrayWriteV3", handle=h, index=i, value=val(dtype, (1, 3), i), flow_in=F0, check_sizes=False
            )
    out, lengths = pair.ok("TensorArrayConcatV3", handle=h, flow_in=F0, dtype=dtype)
    assert lengths.shape == (401,) and out.shape == (int(lengths.sum()), 3)
    # trailing-dimension mismatch: elements are fine one by one, concat/gather refuse
    pair.write(h, 401, val(dtype, (1, 2), 0))
    pair.same("TensorArrayConcatV3", handle=h, flow_in=F0, dtype=dtype)
    pair.same("TensorArrayGatherV3", handle=h, indices=[401, 7], flow_in=F0, dtype=dtype)
    g = pair.grad(h)
    pair.same(
        "TensorArrayScatterV3",
        handle=g,
        indices=np.arange(600) % 3 + 1,
        value=np.stack([val(dtype, (1, 3), k) for k in range(600)]),
        flow_in=F0,
    )
    pair.same("TensorArrayGatherV3", handle=g, indices=[1, 2, 3, 4, 5], flow_in=F0, dtype=dtype)


def test_gather_on_grad_reads_past_end(pair):
    h = pair.create(3, "float32", element_shape=[2])
    g = pair.grad(h)
    out = pair.ok("TensorArrayGatherV3", handle=g, indices=[5, 0], flow_in=F0, dtype=np.float32)
    assert out.shape == (2, 2) and not out.any()
    assert pair.size(g) == 6
    # a failing gather does not grow the grad array
    pair.fails_on("TensorArrayGatherV3", g, indices=[9, 0], dtype=np.float32)  # T11 at 0
    assert pair.size(g) == 6
    pair.fails_on(
        "TensorArraySplitV3",
        g,
        "TensorArray's size is not equal to the size of lengths (6 vs. 2), and the TensorArray is not marked "
        "as dynamically resizeable",
        value=np.ones((2, 2), np.float32),
        lengths=[1, 1],
    )


def test_grad_after_gather_narrowing_and_closed_existing_key(pair):
    h = pair.create(2, "float32")
    pair.ok("TensorArrayGatherV3", handle=h, indices=[], flow_in=F0, dtype=np.float32, element_shape=[3])
    g = pair.grad(h)
    assert_array_equal(pair.ok("TensorArrayReadV3", handle=g, index=1, flow_in=F0, dtype=np.float32), [0, 0, 0])
    pair.ok("TensorArrayCloseV3", handle=h)
    # the key exists, but the closed check comes first
    pair.fails_on("TensorArrayGradV3", h, f"TensorArray {h.name} has already been closed.", source="gradients")
    pair.ok("TensorArrayWriteV3", handle=g, index=0, value=np.ones(3, np.float32), flow_in=F0)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool", "uint8"])
def test_zero_size_elements(pair, dtype):
    h = pair.create(3, dtype, element_shape=[0, 3], clear_after_read=False)
    pair.ok("TensorArrayWriteV3", handle=h, index=0, value=np.zeros((0, 3), dtype), flow_in=F0)
    out = pair.ok("TensorArrayGatherV3", handle=h, indices=[0, 1, 2], flow_in=F0, dtype=dtype)
    assert out.shape == (3, 0, 3) and out.dtype == np.dtype(dtype)
    v, lengths = pair.ok("TensorArrayConcatV3", handle=h, flow_in=F0, dtype=dtype)
    assert v.shape == (0, 3) and lengths.tolist() == [0, 0, 0]
    g = pair.grad(h)
    pair.ok("TensorArrayWriteV3", handle=g, index=0, value=np.zeros((0, 3), dtype), flow_in=F0)
    pair.ok("TensorArrayWriteV3", handle=g, index=0, value=np.zeros((0, 3), dtype), flow_in=F0)  # no sum: no T8
    pair.ok("TensorArrayWriteV3", handle=g, index=1, value=np.zeros((0, 3), dtype), flow_in=F0)
    pair.ok("TensorArrayWriteV3", handle=g, index=1, value=np.zeros((0, 3), dtype), flow_in=F0)
    assert pair.ok("TensorArrayReadV3", handle=g, index=1, flow_in=F0, dtype=dtype).shape == (0, 3)


def test_many_arrays_are_independent(pair):
    hs = [pair.create(2, "float32", element_shape=[1]) for _ in range(5)]
    for k, h in enumerate(hs):
        pair.ok("TensorArrayWriteV3", handle=h, index=k % 2, value=np.full(1, k, np.float32), flow_in=F0)
    pair.ok("TensorArrayCloseV3", handle=hs[2])
    for h in hs:
        pair.same("TensorArrayGatherV3", handle=h, indices=[0, 1], flow_in=F0, dtype=np.float32)


# --------------------------------------------------------------------------- fast paths after bulk writes


@pytest.mark.parametrize("fill", ["scatter", "split"])
@pytest.mark.parametrize("kind", ["static", "dynamic", "grad", "identical"])
def test_one_element_ops_after_a_bulk_fill(pair, fill, kind):
    """A scatter or split of dense rows arms the one-element fast paths of write and read
    (white-box: the storage remembers the row shape); every write and read after it, of
    that shape and of others, agrees with the reference, state by state."""
    flags = {"dynamic": dict(dynamic_size=True), "identical": dict(identical_element_shapes=True)}.get(kind, {})
    shape = (2,) if fill == "scatter" else (1, 2)  # split's elements keep their leading length
    other = (3,) if fill == "scatter" else (2, 2)
    h = pair.create(6, "float32", clear_after_read=False, **flags)
    if kind == "grad":
        pair.ok("TensorArrayWriteV3", handle=h, index=5, value=val("float32", shape), flow_in=F0)
        h = pair.grad(h)
    if fill == "scatter":
        pair.ok("TensorArrayScatterV3", handle=h, indices=[0, 2, 4], value=val("float32", (3, 2), 1), flow_in=F0)
    else:
        pair.ok("TensorArraySplitV3", handle=h, value=val("float32", (6, 2), 1), lengths=np.ones(6, np.int64),
                flow_in=F0)  # fmt: skip
    assert h.nt._storage._fast_shape == shape, "the bulk fill did not arm the fast paths"
    for i in range(6):
        pair.read(h, i, "float32")
    for i in (1, 3, 5, 7):  # unwritten (or soft-zero) slots, one past the end, one far past it
        pair.write(h, i, val("float32", shape, i))
        pair.write(h, i, val("float32", shape, i + 1))  # again: raises, or sums in a gradient array
        pair.write(h, i, val("float32", other, i))  # another shape
    for i in range(8):
        pair.read(h, i, "float32")
    pair.probe(h, "float32")
