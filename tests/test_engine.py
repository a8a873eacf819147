"""The storage engine (``numba_ta.tensor_array.engine``, ``numba_ta.core``) called from compiled code, against Python.

Differential: an engine state struct and a ``Storage`` start equal (same size, flags,
element shape); a random program of writes, reads, gathers, scatters, concats and splits
(elements of ranks 0 to 2, several shapes, repeats, out-of-range and negative indices,
soft zeros, gradient sums) runs on both.  After every op both give the same result or
the same error (class and text), and their full states agree: element state bits,
shapes and values, size, element shape, flags.  ``Storage`` runs the same engine through
its compiled entries, plus its own Python fast paths for one-element writes and reads:
this holds those fast paths, and the entries' conversions, to the engine.  The Python
layer is itself checked against TensorFlow and the reference model by the other suites.

The engine's ops are called through small ``@njit`` wrappers, as compiled code calls
them; under ``NUMBA_DISABLE_JIT=1`` the same wrappers run the engine as Python.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest

from numba_ta.core import header as H
from numba_ta.core.shapes import shape_array
from numba_ta.core.state import (
    DTYPES,
    FIELDS,
    NO_BUFFER,
    fields_of,
    new_state,
)
from numba_ta.core.status import K7, error_of, raise_status
from numba_ta.errors import InvalidArgumentError, OpError
from numba_ta.tensor_array.engine import close, concat, copy_shapes, gather, read, scatter, split, write
from numba_ta.tensor_array.storage import Storage


# --------------------------------------------------------------------------- the engine, called as compiled code does
# (each returns a status; the wrappers raise its exception, as the methods compiled into users' code do)
@numba.njit
def e_write(s, i, v, numeric):
    st = write(s, i, np.ascontiguousarray(v).reshape(-1).view(np.uint8), shape_array(v.shape), numeric)
    if st:
        raise_status(s, st)


@numba.njit
def e_read(s, i):
    st, flat, shape = read(s, i, -1)
    if st:
        raise_status(s, st)
    return flat, shape


@numba.njit
def e_gather(s, idx, attr, known):
    st, flat, shape = gather(s, idx, attr, known, -1)
    if st:
        raise_status(s, st)
    return flat, shape


@numba.njit
def e_concat(s, attr, known):
    st, flat, shape, lengths = concat(s, attr, known, -1)
    if st:
        raise_status(s, st)
    return flat, shape, lengths


@numba.njit
def e_scatter(s, idx, v, numeric):
    flat = np.ascontiguousarray(v).reshape(-1).view(np.uint8)
    st = scatter(s, idx, flat, v.shape[0], shape_array(v.shape[1:]), numeric)
    if st:
        raise_status(s, st)


@numba.njit
def e_split(s, v, lengths, numeric):
    st = split(s, np.ascontiguousarray(v).reshape(-1).view(np.uint8), lengths, shape_array(v.shape), numeric, False)
    if st:
        raise_status(s, st)


def new_engine(name, dtype, size, es, dyn, car, ident, grad):
    """A fresh engine state with the flags of ``Storage(name, dtype, size, es, dyn, car, ident, grad)``."""
    h = H.new(dtype)
    h[H.SIZE] = h[H.CAP] = size
    h[H.LAYOUT] = NO_BUFFER
    h[H.DYN], h[H.CAR], h[H.IDENT], h[H.ISGRAD] = dyn, car, ident, grad
    h[H.FASTSID] = -1
    h[H.ES_KNOWN] = es is not None
    h[H.MARKED] = -1
    es_arr = np.array([-1 if d is None else d for d in es or ()], dtype=np.int64)
    return new_state(
        np.empty(0, np.uint8), np.zeros(size, np.uint8), np.zeros(size, np.int32), np.zeros(size, np.int64), h,
        np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64), es_arr, np.zeros(0, np.int64), name,
    )  # fmt: skip


class Fields:
    """The fields of a state struct, as attributes."""

    def __init__(self, s):
        for name, value in zip(FIELDS, fields_of(s), strict=True):
            setattr(self, name, value)


def _elements(n, state, shape_of, offsets, data):
    """``(bits, shape, stored value)`` of elements ``0..n-1`` (shape None when unwritten, value None without data)."""
    out = []
    for i in range(n):
        bits = int(state[i])
        if not bits & 1:
            out.append((bits, None, None))
            continue
        shape = shape_of(i)
        items = int(np.prod(shape, dtype=np.int64))
        value = None
        if bits & 8 and items:
            o = int(offsets[i])
            value = data[o : o + items].reshape(shape).copy()
        out.append((bits, shape, value))
    return out


def engine_state(s):
    """The engine's full state, as :func:`storage_state` reports a ``Storage``'s."""
    s = Fields(s)
    h = s.hdr
    n = int(h[H.SIZE])
    starts, dims = s.starts, s.dims

    def shape_of(i):
        sid = int(s.shape_id[i])
        return tuple(int(d) for d in dims[starts[sid] : starts[sid + 1]])

    data = s.data.view(DTYPES[h[H.DTYPE]])  # the items' bytes
    es = tuple(None if d < 0 else int(d) for d in s.es) if h[H.ES_KNOWN] else None
    return n, _elements(n, s.state, shape_of, s.offsets, data), es, bool(h[H.DISALLOWED]), int(h[H.MARKED])


def storage_state(st):
    n = st.size
    out = _elements(n, st.state, lambda i: tuple(st.shapes[st.shape_id[i]]), st.offsets, st.data)
    return n, out, st.element_shape, st.gradients_disallowed, st.marked_size


def same_state(a, b):
    if a[0] != b[0] or a[2:] != b[2:]:
        return False
    for (b1, s1, v1), (b2, s2, v2) in zip(a[1], b[1], strict=True):
        if b1 != b2 or s1 != s2 or (v1 is None) != (v2 is None):
            return False
        if v1 is not None and not np.array_equal(v1, v2, equal_nan=v1.dtype.kind in "fc"):
            return False
    return True


# --------------------------------------------------------------------------- random programs
SHAPES = [(), (2,), (3,), (2, 3), (0,), (1, 2), (0, 2)]


def run(fn):
    """``("ok", result)`` or ``("error", class name, message)``."""
    try:
        return ("ok", fn())
    except (OpError, ValueError, NotImplementedError) as e:
        return ("error", type(e).__name__, str(e))


def same_result(a, b):
    if a[0] != b[0]:
        return False
    if a[0] == "error":
        return a == b
    x, y = a[1], b[1]
    if isinstance(x, np.ndarray) and x.dtype == np.float16:  # compare bits (NaN == NaN)
        return x.shape == y.shape and np.array_equal(x.view(np.uint16), y.view(np.uint16))
    if isinstance(x, tuple):
        return len(x) == len(y) and all(np.array_equal(p, q) and p.shape == q.shape for p, q in zip(x, y, strict=True))
    return (x is None and y is None) or (np.array_equal(x, y) and x.shape == y.shape)


def random_op(rng, dtype, size_hint):
    kind = rng.choice(["write", "write", "write", "read", "read", "gather", "scatter", "concat", "split"])
    index = int(rng.integers(-1, size_hint + 3))
    shape = SHAPES[int(rng.integers(len(SHAPES)))]
    if kind == "write":
        return kind, (index, np.asarray(rng.standard_normal(shape) * 4, dtype=dtype))
    if kind == "read":
        return kind, (index,)
    if kind == "gather":
        m = int(rng.integers(0, 5))
        idx = rng.integers(-1 if rng.random() < 0.1 else 0, size_hint + 2, m).astype(np.int64)
        attr = None if rng.random() < 0.6 else SHAPES[int(rng.integers(len(SHAPES)))]
        return kind, (idx, attr)
    if kind == "scatter":
        m = int(rng.integers(0, 4))
        idx = rng.integers(-1 if rng.random() < 0.1 else 0, size_hint + 2, m).astype(np.int64)
        return kind, (idx, (rng.standard_normal((m,) + shape) * 4).astype(dtype))
    if kind == "concat":
        attr = None if rng.random() < 0.6 else SHAPES[int(rng.integers(len(SHAPES)))][1:]
        return kind, (attr,)
    n = int(rng.integers(0, size_hint + 2))
    lengths = rng.integers(-1 if rng.random() < 0.05 else 0, 3, n).astype(np.int64)
    tail = [(), (2,)][int(rng.integers(2))]
    rows = int(lengths.sum())
    if rows < 0:
        lengths[:] = 1
        rows = n
    return kind, ((rng.standard_normal((rows,) + tail) * 4).astype(dtype), lengths)


def on_storage(st, kind, args):
    if kind == "write":

        def write():
            try:
                st.op_write(args[0], args[1])
            except OpError as e:
                e.op = None  # the op's name, which the engine's error does not carry
                raise

        return write
    if kind == "read":
        return lambda: st.read(args[0])
    if kind == "gather":
        return lambda: st.gather(args[0], args[1])
    if kind == "scatter":
        return lambda: st.scatter(args[0], args[1])
    if kind == "concat":
        return lambda: st.concat(args[0])[0]
    return lambda: st.split(args[0], args[1], lambda dt: None)


def on_engine(s, kind, args, numeric, dtype):
    """The op ``kind`` on the engine state ``s`` (of ``dtype``): values go in and come out as their bytes."""

    def shaped(res):
        flat, shape = res[0], res[1]
        return flat.view(dtype).reshape(tuple(int(d) for d in shape))

    if np.dtype(dtype) == np.float16:  # Numba has no float16: its values go in as their bits
        args = tuple(a.view(np.uint16) if isinstance(a, np.ndarray) and a.dtype == np.float16 else a for a in args)

    def attr_of(a):
        if a is None:
            return np.zeros(0, np.int64), False
        return np.array([-1 if d is None else d for d in a], np.int64), True

    if kind == "write":
        return lambda: e_write(s, args[0], args[1], numeric)
    if kind == "read":
        return lambda: shaped(e_read(s, args[0]))
    if kind == "gather":
        return lambda: shaped(e_gather(s, args[0], *attr_of(args[1])))
    if kind == "scatter":
        return lambda: e_scatter(s, args[0], args[1], numeric)
    if kind == "concat":
        return lambda: shaped(e_concat(s, *attr_of(args[0])))
    return lambda: e_split(s, args[0], args[1], numeric)


CONFIGS = [
    # size, element shape, dynamic_size, clear_after_read, identical, is_grad, dtype
    (3, None, False, True, False, False, np.float64),
    (0, None, True, False, False, False, np.float64),
    (4, (2,), False, False, True, False, np.float64),
    (2, None, True, True, True, False, np.int32),
    (4, None, False, False, False, True, np.float64),
    (3, (None, 3), False, True, False, True, np.int32),
    (3, None, True, False, False, False, np.bool_),
    (5, None, False, False, False, True, np.int32),
    (4, None, False, False, False, True, np.float16),  # gradient arrays are never dynamic (TF)
    (3, (2,), False, True, True, True, np.float16),
]


@pytest.mark.parametrize("config", range(len(CONFIGS)))
@pytest.mark.parametrize("seed", range(6))
def test_engine_matches_storage(config, seed):
    size, es, dyn, car, ident, grad, dtype = CONFIGS[config]
    rng = np.random.default_rng(1000 * config + seed)
    st = Storage("arr", dtype, size, es, dyn, car, ident, grad)
    s = new_engine("arr", dtype, size, es, dyn, car, ident, grad)
    numeric = int(np.dtype(dtype) != np.bool_)
    for step in range(60):
        kind, args = random_op(rng, dtype, size)
        expected = run(on_storage(st, kind, args))
        got = run(on_engine(s, kind, args, numeric, dtype))
        assert same_result(expected, got), (step, kind, args, expected, got)
        assert same_state(storage_state(st), engine_state(s)), (step, kind, args)


def test_failed_ops_intern_nothing():
    """A gather, concat or split that fails interns no shape (they plan, and intern at the commit)."""
    s = new_engine("arr", np.float64, 3, (4,), False, False, False, False)
    e_write(s, 0, np.ones(4), 1)
    n = int(Fields(s).hdr[H.NSHAPES])
    for fn in (
        lambda: e_gather(s, np.array([1, 5]), np.zeros(0, np.int64), False),  # index 5 out of range
        lambda: e_concat(s, np.zeros(0, np.int64), False),  # element 1 unwritten... reads zeros, then 2
        lambda: e_split(s, np.ones(5), np.array([1, 2, 3], np.int64)[:2], 1),  # lengths sum 3, value 5: size 3 != 2
    ):
        try:
            fn()
        except OpError:
            pass
    # the concat succeeds (soft zeros of [4]): nothing new is interned by the failures
    assert int(Fields(s).hdr[H.NSHAPES]) == n


def test_mixed_ranks_and_the_rank_check():
    """Elements of several ranks live in one state; a caller of another rank gets NotImplementedError, no change."""
    s = new_engine("arr", np.float32, 2, None, False, False, False, False)
    e_write(s, 0, np.ones(2, np.float32), 1)
    e_write(s, 1, np.ones((2, 3), np.float32), 1)
    before = engine_state(s)

    @numba.njit
    def read_rank1(s, i):
        st, flat, shape = read(s, i, 1)
        if st:
            raise_status(s, st)
        return flat, shape

    with pytest.raises(NotImplementedError, match="element 1 has rank 2"):
        read_rank1(s, 1)
    assert same_state(before, engine_state(s))
    flat, shape = read_rank1(s, 0)
    assert list(shape) == [2] and flat.view(np.float32).tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    "es, op",
    [
        ((2**40,), "read"),  # 4 TiB of zeros
        ((2**40,), "gather"),
        ((2**40,), "concat"),
        ((2**61, 2), "read"),  # more bytes than an int64 holds: refused before allocating
        ((2**61, 2), "gather"),
        ((2**62, 4), "gather"),  # more items than an int64 holds: the shape cannot be interned
        ((2**62, 4), "read"),
    ],
)
def test_huge_results_fail_as_storage_does(es, op):
    st = Storage("arr", np.float32, 2, es)
    s = new_engine("arr", np.float32, 2, es, False, True, False, False)
    none = np.zeros(0, np.int64), False
    if op == "read":
        pair = (lambda: st.read(0)), (lambda: e_read(s, 0))
    elif op == "gather":
        pair = (lambda: st.gather(np.array([1]), None)), (lambda: e_gather(s, np.array([1]), *none))
    else:
        pair = (lambda: st.concat(None)), (lambda: e_concat(s, *none))
    expected, got = run(pair[0]), run(pair[1])
    assert expected[0] == "error" and expected == got, (expected, got)
    assert engine_state(s)[1] == [(0, None, None)] * 2 and int(Fields(s).hdr[H.NSHAPES]) == 0


def test_split_lengths_past_int64_fail_as_storage_does():
    st = Storage("arr", np.float32, 3, None)
    s = new_engine("arr", np.float32, 3, None, False, True, False, False)
    v = np.ones((1, 4), np.float32)
    lengths = np.array([2**62, 1, 0], np.int64)  # 2**62 rows of 4 items: past int64
    expected = run(lambda: st.split(v, lengths, lambda dt: None))
    got = run(lambda: e_split(s, v, lengths, 1))
    assert expected[0] == "error" and expected == got, (expected, got)
    # lengths whose int64 sum wraps to the value's rows: TF's OOM error, nothing written
    lengths = np.array([2**62, 2**62, 2**62, 2**62 + 1], np.int64)
    s = new_engine("arr", np.float32, 4, None, False, True, False, False)
    got = run(lambda: e_split(s, np.ones(1, np.float32), lengths, 1))
    assert got[:2] == ("error", "ResourceExhaustedError") and "OOM when allocating tensor" in got[2], got
    assert engine_state(s)[1] == [(0, None, None)] * 4


def test_split_dtype_error_comes_after_the_size_check():
    """The op's dtype error (K7: the caller says there is one, and has its text) comes after P5, as in Storage.split."""
    s = new_engine("arr", np.float32, 2, None, False, True, False, False)

    @numba.njit
    def e_split_k7(s, v, lengths):
        return split(s, v, lengths, shape_array(v.shape), 1, True)

    def split_k7(s, v, lengths):
        st = e_split_k7(s, v, lengths)
        if st == K7:
            raise InvalidArgumentError("K7 text")
        if st:
            raise error_of(s)

    st = Storage("arr", np.float32, 2, None)
    expected = run(lambda: st.split(np.ones(3, np.float32), np.array([1, 1, 1]), None))  # P5 before the dtype check
    assert expected[0] == "error" and run(lambda: split_k7(s, np.ones(3, np.float32), np.array([1, 1, 1]))) == expected
    got = run(lambda: split_k7(s, np.ones(2, np.float32), np.array([1, 1])))
    assert got == ("error", "InvalidArgumentError", "K7 text")


@numba.njit
def e_close(s):
    close(s)


@numba.njit
def e_copy_shapes(g, f, prepend):
    st = copy_shapes(g, f, prepend)
    if st:
        raise_status(f, st)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("prepend", [(), (2,), (1, 3)])
def test_gradient_arrays_and_close_match_storage(seed, prepend):
    """A forward array's writes, its gradient array (soft zeros of prepend + shape), sums into it, close."""
    rng = np.random.default_rng(seed)
    st = Storage("arr", np.float64, 4, None, False, False, False, False)
    s = new_engine("arr", np.float64, 4, None, False, False, False, False)
    for _ in range(6):
        kind, args = random_op(rng, np.float64, 4)
        if kind in ("write", "scatter", "split"):
            assert same_result(run(on_storage(st, kind, args)), run(on_engine(s, kind, args, 1, np.float64)))
    gst = Storage.gradient_of(st, "arr@g", None, prepend)
    g = new_engine("arr@g", np.float64, st.size, None, False, True, False, True)
    Fields(g).hdr[H.MARKED] = st.marked_size  # a gradient array has its forward array's marked size (TF)
    e_copy_shapes(g, s, np.array(prepend, np.int64))
    assert same_state(storage_state(gst), engine_state(g))
    for step in range(30):
        kind, args = random_op(rng, np.float64, st.size)
        if kind == "write" and rng.random() < 0.5 and st.size:  # a write of the element's own shape: a sum
            i = int(rng.integers(st.size))
            if st.state[i] & 1:
                args = (i, rng.standard_normal(st.shapes[st.shape_id[i]]))
        expected, got = run(on_storage(gst, kind, args)), run(on_engine(g, kind, args, 1, np.float64))
        assert same_result(expected, got), (step, kind, args, expected, got)
        assert same_state(storage_state(gst), engine_state(g)), (step, kind, args)
    gst.close()
    e_close(g)
    assert same_state(storage_state(gst), engine_state(g))
    assert bool(Fields(g).hdr[H.CLOSED]) and gst.closed
    assert run(lambda: gst.read(0)) == run(lambda: e_read(g, 0))


def test_prepend_past_int64_fails_as_storage_does():
    st = Storage("arr", np.float32, 1, None)
    s = new_engine("arr", np.float32, 1, None, False, True, False, False)
    st.op_write(0, np.ones(2**20, np.float32))
    e_write(s, 0, np.ones(2**20, np.float32), 1)
    prepend = (2**31 - 1, 2**31 - 1, 4)
    g = new_engine("arr@g", np.float32, 1, None, False, True, False, True)
    expected = run(lambda: Storage.gradient_of(st, "arr@g", None, prepend))
    got = run(lambda: e_copy_shapes(g, s, np.array(prepend, np.int64)))
    assert expected[0] == "error" and expected == got, (expected, got)
    assert engine_state(g)[1] == [(0, None, None)]


def test_complex_gradient_sums_and_empty_gather_of_a_closed_array():
    """Sums of complex values (the float16 path must not even be typed for them); a gather of no indices
    returns before looking at the array, closed or not (as Storage, as TF)."""
    for dtype in (np.complex128, np.float16):
        st = Storage("arr", dtype, 2, None, False, True, False, True)
        s = new_engine("arr", dtype, 2, None, False, True, False, True)
        half = np.dtype(dtype) == np.float16
        for v in (np.array([1 + 2j, 3]), np.array([0.5 - 1j, np.inf])):
            v = v.astype(dtype) if not half else v.real.astype(dtype)
            st.op_write(0, v)
            e_write(s, 0, v.view(np.uint16) if half else v, 1)
        assert same_state(storage_state(st), engine_state(s))
    st.close()
    e_close(s)
    attr = np.array([2], np.int64)
    expected = run(lambda: st.gather(np.zeros(0, np.int64), (2,)))
    got = run(lambda: e_gather(s, np.zeros(0, np.int64), attr, True)[0].view(np.float16).reshape(0, 2))
    assert expected[0] == "ok" and same_result(expected, got), (expected, got)
