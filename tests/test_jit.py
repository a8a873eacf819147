"""TensorArray inside ``@numba.njit`` code: the same semantics, errors and state as the Python layer.

The main test is differential: two arrays start equal; one gets a random op sequence through
the Python class only, the other the same sequence with every op run at random either from
Python or inside a compiled function (``TensorArray`` passed in and returned).  After every
op both give the same result or the same error (class and text, array names mapped), and
their full states (``storage_view.nt_state``: element states, shapes, values, size, element
shape, flags) agree.  The Python layer is itself checked against TensorFlow and the
reference model by the other suites, so this pins the compiled path to TF's semantics.

Under ``NUMBA_DISABLE_JIT=1`` the "compiled" functions are plain Python over the class, and
the same tests check the harness itself.
"""

from __future__ import annotations

import threading

import numba
import numpy as np
import pytest

import numba_ta
from numba_ta.errors import OpError
from numba_ta.jit import extension as _jit
from tests.helpers.jit_ops import JIT, j_gather, j_read, j_size, j_split, j_stack, j_write
from tests.helpers.storage_view import nt_state, same_snapshot


def py_op(name, ta, *args):
    """The same op through the Python class."""
    if name == "size":
        return ta.size()
    if name == "stack":
        return ta.stack()
    if name == "concat":
        return ta.concat()
    return getattr(ta, name)(*args)


def outcome(fn, *args):
    try:
        return True, fn(*args)
    except (OpError, ValueError, NotImplementedError) as e:
        return False, (type(e), getattr(e, "message", str(e)))


def random_op(rng, size_hint, width, dtype):
    kind = rng.choice(["write", "write", "read", "gather", "stack", "scatter", "unstack", "size", "concat", "split"])
    i = int(rng.integers(-1, size_hint + 3))
    row = (rng.random(width) * 10).astype(dtype)
    if kind == "write":
        if rng.random() < 0.05:
            row = (rng.random(width + 1) * 10).astype(dtype)  # a shape error
        return kind, (i, row)
    if kind == "read":
        return kind, (i,)
    if kind == "gather":
        m = int(rng.integers(0, 4))
        return kind, (rng.integers(-1, size_hint + 2, size=m).astype(np.int64),)
    if kind == "scatter":
        m = int(rng.integers(0, 4))
        idx = rng.integers(-1, size_hint + 2, size=m).astype(np.int64)
        return kind, (idx, (rng.random((m, width)) * 10).astype(dtype))
    if kind == "split":
        m = int(rng.integers(0, size_hint + 2))
        lengths = (np.full(m, width) if rng.random() < 0.6 else rng.integers(0, width + 2, size=m)).astype(np.int64)
        if m and rng.random() < 0.05:
            lengths[0] = -1  # a negative length
        total = int(max(lengths.sum(), 0)) + (1 if rng.random() < 0.05 else 0)  # sometimes a P4 error
        return kind, ((rng.random(total) * 10).astype(dtype), lengths)
    if kind == "unstack":
        m = int(rng.integers(0, size_hint + 2))
        return kind, ((rng.random((m, width)) * 10).astype(dtype),)
    return kind, ()


def can_enter(ta):
    """Whether ``ta`` can be passed to compiled code now (its element rank is known)."""
    if numba.config.DISABLE_JIT:
        return True
    try:
        _jit.numba_type(ta)
    except TypeError:
        return False
    return True


def same_result(a, b):
    if isinstance(a, numba_ta.TensorArray):
        return isinstance(b, numba_ta.TensorArray)
    if np.ndim(a) == 0 and not isinstance(b, np.ndarray):  # size(): Numba returns its int32 as a Python int
        return a == b
    return np.array_equal(np.asarray(a), np.asarray(b)) and np.asarray(a).dtype == np.asarray(b).dtype


def make(kind, dtype, width):
    if kind == "static":
        return numba_ta.TensorArray(dtype, size=6, element_shape=[width])
    if kind == "dynamic":
        return numba_ta.TensorArray(dtype, size=0, dynamic_size=True, element_shape=[width])
    if kind == "keep":
        return numba_ta.TensorArray(dtype, size=4, dynamic_size=True, clear_after_read=False, element_shape=[width])
    if kind == "infer":
        return numba_ta.TensorArray(dtype, size=5, element_shape=[None])
    if kind == "norank":  # no element shape: enters compiled code once an element is written
        return numba_ta.TensorArray(dtype, size=0, dynamic_size=True, infer_shape=False)
    if kind == "norank_infer":
        return numba_ta.TensorArray(dtype, size=5, clear_after_read=False)
    fwd = numba_ta.TensorArray(dtype, size=5, element_shape=[width])
    return fwd.grad("gradients")  # "grad": sums repeated writes, reads past its size


KINDS = ["static", "dynamic", "keep", "infer", "norank", "norank_infer", "grad"]


# the same arrays as make() (float64, width 3), created inside compiled code
@numba.njit
def c_static():
    return numba_ta.TensorArray(np.float64, size=6, element_shape=(3,))


@numba.njit
def c_dynamic():
    return numba_ta.TensorArray(np.float64, size=0, dynamic_size=True, element_shape=(3,))


@numba.njit
def c_keep():
    return numba_ta.TensorArray(np.float64, size=4, dynamic_size=True, clear_after_read=False, element_shape=(3,))


@numba.njit
def c_infer():
    return numba_ta.TensorArray(np.float64, size=5, element_shape=(None,))


MAKE_COMPILED = {"static": c_static, "dynamic": c_dynamic, "keep": c_keep, "infer": c_infer}


@pytest.mark.parametrize(
    ("kind", "created"),
    [(k, False) for k in KINDS] + [(k, True) for k in MAKE_COMPILED],
    ids=lambda v: {False: "made_in_python", True: "made_in_compiled_code"}.get(v, v) if isinstance(v, bool) else v,
)
@pytest.mark.parametrize("seed", range(6))
def test_random_mix_of_python_and_compiled_ops_agrees_with_python(kind, created, seed):
    rng = np.random.default_rng([seed, KINDS.index(kind), created])
    dtype, width = np.float64, 3
    a = make(kind, dtype, width)  # Python only
    b = MAKE_COMPILED[kind]() if created else make(kind, dtype, width)  # a mix
    na, nb = a.handle.name, b.handle.name
    for step in range(60):
        name, args = random_op(rng, 6, width, dtype)
        compiled = bool(rng.random() < 0.6) and can_enter(b)
        ok_a, res_a = outcome(py_op, name, a, *args)
        ok_b, res_b = outcome(JIT[name] if compiled else (lambda *x, n=name: py_op(n, *x)), b, *args)
        ctx = f"step {step}: {name}{tuple(np.asarray(x).tolist() for x in args)} compiled={compiled}"
        assert ok_a == ok_b, f"{ctx}: python {res_a!r} vs mixed {res_b!r}"
        if ok_a:
            assert same_result(res_a, res_b), f"{ctx}: {res_a!r} vs {res_b!r}"
            if isinstance(res_a, numba_ta.TensorArray):
                a, b = res_a, res_b
                assert b.handle is not None and b.handle.name == nb
        else:
            assert res_a[0] is res_b[0], f"{ctx}: {res_a} vs {res_b}"
            assert res_a[1].replace(na, "<name>") == res_b[1].replace(nb, "<name>"), f"{ctx}: {res_a} vs {res_b}"
        sa, sb = nt_state(a.handle), nt_state(b.handle)
        sa.pop("name", None)
        sb.pop("name", None)
        assert same_snapshot(sa, sb), f"{ctx}:\n{sa}\n{sb}"
        assert a.element_shape == b.element_shape, ctx


def test_scalar_elements_inside_compiled_code():
    """Elements of rank 0: written, read (the fast path and the soft-zero path), gathered and stacked as in Python."""
    py = numba_ta.TensorArray(np.int32, size=4, element_shape=[], clear_after_read=False)
    jt = numba_ta.TensorArray(np.int32, size=4, element_shape=[], clear_after_read=False)
    for i, v in ((0, 5), (2, -7)):
        py = py.write(i, np.int32(v))
        jt = j_write(jt, i, np.array(v, np.int32))
    for i in range(4):
        a, b = py.read(i), j_read(jt, i)
        assert a.shape == b.shape == () and a.dtype == b.dtype and a == b, (i, a, b)
    assert np.array_equal(py.gather(np.array([2, 0])), j_gather(jt, np.array([2, 0])))
    a, b = py.stack(), j_stack(jt)
    assert a.shape == b.shape == (4,) and np.array_equal(a, b)
    sa, sb = nt_state(py.handle), nt_state(jt.handle)
    sa.pop("name", None)
    sb.pop("name", None)
    assert same_snapshot(sa, sb)


# --------------------------------------------------------------------------- the example of the docs
@numba.njit
def leaky_integrator(ta, x, decay):
    h = np.zeros(x.shape[1], np.float32)
    for t in range(x.shape[0]):
        h = np.tanh(decay * h + x[t])
        ta = ta.write(t, h)
    return ta, ta.stack()


def test_leaky_integrator():
    x = np.random.default_rng(0).random((50, 8)).astype(np.float32)
    ta = numba_ta.TensorArray(np.float32, size=0, dynamic_size=True, element_shape=[8])
    ta2, hs = leaky_integrator(ta, x, np.float32(0.9))
    assert isinstance(ta2, numba_ta.TensorArray) and ta2.handle is ta.handle
    h = np.zeros(8, np.float32)
    for t in range(50):
        h = np.tanh(np.float32(0.9) * h + x[t])
        np.testing.assert_allclose(hs[t], h, rtol=1e-6)
    assert ta.size() == 50
    with pytest.raises(numba_ta.errors.InvalidArgumentError, match="cleared after a previous read"):
        ta.read(0)  # stack read (and cleared) every element, inside the compiled function


def test_gradient_array_sums_inside_compiled_code():
    fwd = numba_ta.TensorArray(np.float64, size=3, element_shape=[2])
    g = fwd.grad("gradients")

    @numba.njit
    def backward(g, dy):
        for _ in range(3):
            g = g.write(1, dy)
        return g.read(1), g.read(0)

    one, zero = backward(g, np.ones(2))
    np.testing.assert_array_equal(one, [3.0, 3.0])
    np.testing.assert_array_equal(zero, [0.0, 0.0])


# --------------------------------------------------------------------------- arrays created in compiled code
@numba.njit
def leaky_integrator_new(x, decay):
    ta = numba_ta.TensorArray(np.float32, size=0, dynamic_size=True, element_shape=(x.shape[1],))
    h = np.zeros(x.shape[1], np.float32)
    for t in range(x.shape[0]):
        h = np.tanh(decay * h + x[t])
        ta = ta.write(t, h)
    return ta, ta.stack()


def test_array_created_in_compiled_code_is_an_ordinary_array_after_the_call():
    x = np.random.default_rng(1).random((20, 4)).astype(np.float32)
    ta, hs = leaky_integrator_new(x, np.float32(0.5))
    ref = numba_ta.TensorArray(np.float32, size=0, dynamic_size=True, element_shape=[4])
    ref2, hs2 = leaky_integrator(ref, x, np.float32(0.5))
    np.testing.assert_array_equal(hs, hs2)
    assert isinstance(ta, numba_ta.TensorArray) and ta.handle.name.startswith("TensorArray_")
    sa, sb = nt_state(ta.handle), nt_state(ref.handle)
    sa.pop("name", None)
    sb.pop("name", None)
    assert same_snapshot(sa, sb)
    assert ta.element_shape == ref.element_shape and ta.dynamic_size
    ta.write(20, np.ones(4, np.float32))  # Python ops go on with it, and compiled ones
    np.testing.assert_array_equal(j_read(ta, 20), np.ones(4, np.float32))
    g = ta.grad("gradients")
    assert g.handle.name == ta.handle.name + "@gradients"


@numba.njit
def make_args(n, d):
    return numba_ta.TensorArray(np.int32, size=n, element_shape=(d, 2), tensor_array_name="named")


@numba.njit
def make_scalar_elements():
    return numba_ta.TensorArray(np.dtype("float32"), size=2, element_shape=(), infer_shape=False)


@numba.njit
def make_no_size():
    return numba_ta.TensorArray(np.float32, element_shape=(2,))


@pytest.mark.parametrize(("n", "d"), [(2, 3), (-1, 3), (2, -1), (-1, -1), (0, 0)])
def test_creation_errors_and_attributes_match_the_python_class(n, d):
    py = outcome(lambda: numba_ta.TensorArray(np.int32, size=n, element_shape=[d, 2], tensor_array_name="named"))
    jit = outcome(make_args, n, d)
    assert py[0] == jit[0], (py, jit)
    if not py[0]:
        assert py[1] == jit[1]
        return
    a, b = py[1], jit[1]
    assert b.handle.name.startswith("named_") and b.element_shape == a.element_shape and b.size() == a.size()
    assert b.dtype == a.dtype == np.int32


def test_creation_without_size_and_of_scalar_elements():
    with pytest.raises(ValueError, match="`size` must be provided"):
        make_no_size()
    ta = make_scalar_elements()
    assert ta.element_shape == () and ta.size() == 2 and ta.dtype == np.float32
    np.testing.assert_array_equal(ta.stack(), np.zeros(2, np.float32))  # unwritten, fully defined: zeros


def test_array_created_and_returned_twice_is_one_array():
    @numba.njit
    def twice():
        a = numba_ta.TensorArray(np.float64, size=2, element_shape=(2,))
        a = a.write(0, np.ones(2))
        return a, a

    p, q = twice()
    assert p.handle == q.handle
    np.testing.assert_array_equal(q.read(0), np.ones(2))
    with pytest.raises(numba_ta.errors.InvalidArgumentError, match="cleared"):
        p.read(0)


def _mistake_cases():
    """(name, compiled function, its arguments, the one line it must raise) for the type mistakes users make."""
    ta = numba_ta.TensorArray(np.float32, size=2, element_shape=[3])
    row = np.ones(3, np.float32)

    @numba.njit
    def no_shape():
        return numba_ta.TensorArray(np.float32, size=2)

    @numba.njit
    def list_shape():
        return numba_ta.TensorArray(np.float32, size=2, element_shape=[2])

    @numba.njit
    def str_dtype():
        return numba_ta.TensorArray("float32", size=2, element_shape=(2,))

    @numba.njit
    def with_flow():
        return numba_ta.TensorArray(np.float32, size=2, element_shape=(1,), flow=0.0)

    @numba.njit
    def float_size():
        return numba_ta.TensorArray(np.float32, size=2.0, element_shape=(1,))

    @numba.njit
    def grad(ta):
        return ta.grad("gradients")

    @numba.njit
    def handle_of(ta):
        return ta.handle

    lst = numba_ta.raw_ops.EmptyTensorList(element_shape=[3], max_num_elements=-1, element_dtype=np.float32)
    return [
        ("float index", j_write, (ta, 1.5, row), "TensorArray.write: index must be an integer, got float64"),
        ("str index", j_read, (ta, "a"), "TensorArray.read: index must be an integer, got str"),
        ("list value", j_write, (ta, 0, [1.0, 2.0, 3.0]), "TensorArray.write: value must be an array or a scalar, got list(float64)"),  # noqa: E501
        ("float indices", j_gather, (ta, np.zeros(2)), "TensorArray.gather: indices must be integers (an array, list or tuple of them), got array(float64, 1d, C)"),  # noqa: E501
        ("scalar split", j_split, (ta, 1.0, np.ones(1, np.int64)), "TensorArray.split: value must be an array, got float64"),  # noqa: E501
        ("no element_shape", no_shape, (), "TensorArray(...): element_shape must be a tuple inside @njit (its length: the rank), got None"),  # noqa: E501
        ("list element_shape", list_shape, (), "TensorArray(...): element_shape must be a tuple inside @njit (its length: the rank), got list(int64)"),  # noqa: E501
        ("str dtype", str_dtype, (), "TensorArray(...): dtype must be a numpy scalar type or dtype inside @njit (np.float32), got str"),  # noqa: E501
        ("flow", with_flow, (), "TensorArray(...): flow is not supported inside @njit (create the array in Python), got float64"),  # noqa: E501
        ("float size", float_size, (), "TensorArray(...): size must be an int, got float64"),
        ("grad", grad, (ta,), "TensorArray.grad is not available inside @njit: gradient arrays are looked up by source in Python; call ta.grad(source) before the call and pass it in"),  # noqa: E501
        ("handle attribute", handle_of, (ta,), "TensorArray.handle is not available inside @njit: read it in Python"),
        ("raw handle", j_size, (ta.handle,), "TensorArrayHandle cannot be passed to @njit code: pass the TensorArray (numba_ta.TensorArray(dtype, handle=h) wraps a handle)"),  # noqa: E501
        ("TensorList", j_size, (lst,), "TensorListHandle cannot be passed to @njit code: only TensorArray works inside compiled code"),  # noqa: E501
    ]


@pytest.mark.jit_only("typing of compiled functions")
@pytest.mark.parametrize("case", range(14))
def test_type_mistakes_inside_compiled_code_raise_one_line(case):
    """Each mistake: one line naming the method, the argument, what it got and what it takes (was 13 to 300 lines)."""
    from numba_ta.core import numba_compat

    name, fn, args, line = _mistake_cases()[case]
    if numba_compat.WRAPS_FOREIGN_TYPING_ERRORS and case < 12:  # Numba < 0.68 reports it inside its TypingError
        with pytest.raises(numba.core.errors.TypingError) as e:
            fn(*args)
        assert line in str(e.value), name
        return
    with pytest.raises(numba_ta.errors.CompiledTypeError) as e:
        fn(*args)
    assert isinstance(e.value, TypeError)
    assert str(e.value) == line, name
    assert len(str(e.value).splitlines()) == 1 and len(str(e.value)) <= 200


@pytest.mark.jit_only("typing of compiled functions")
def test_the_type_of_an_array_prints_short_and_keys_its_interface():
    t = _jit.array_type(np.float32, 1)
    assert str(t) == "TensorArray(float32, ndim=1)"
    assert t.key[3] == numba_ta.jit.abi.ABI_KEY and t == _jit.array_type(np.float32, 1)
    assert t != _jit.array_type(np.float32, 2) and t != _jit.array_type(np.float64, 1)


@pytest.mark.jit_only("an array made and dropped in compiled code never reaches Python")
def test_array_created_and_dropped_in_compiled_code_leaves_nothing_behind():
    import gc

    from numba_ta.tensor_array import registry as _registry

    @numba.njit
    def dropped(n):
        total = 0.0
        for _ in range(n):
            a = numba_ta.TensorArray(np.float64, size=1, element_shape=(2,))
            a = a.write(0, np.ones(2))
            total += a.read(0).sum()
        return total

    gc.collect()
    before = len(_registry._live)
    assert dropped(50) == 100.0
    gc.collect()
    assert len(_registry._live) == before


@pytest.mark.jit_only("the argument cleanup of a compiled call")
def test_interrupt_while_leaving_a_compiled_call_leaves_the_array_done(monkeypatch):
    from numba_ta.jit import extension as _jit

    @numba.njit
    def grow(ta, rows):
        for t in range(rows.shape[0]):
            ta = ta.write(t, rows[t])
        return 0

    rows = np.arange(60.0).reshape(20, 3)
    # the class's element shape [None] becomes [3] inside the call: leaving takes it over (the sync)
    a = numba_ta.TensorArray(np.float64, size=0, dynamic_size=True, element_shape=[None])
    b = numba_ta.TensorArray(np.float64, size=0, dynamic_size=True, element_shape=[None])
    grow(a, rows)  # compiles; a is the uninterrupted twin
    real, calls = _jit._arrays_of, []

    def interrupted_once(proxy):
        calls.append(1)
        if len(calls) == 1:
            raise KeyboardInterrupt  # as if Ctrl-C landed in the middle of the sync
        return real(proxy)

    monkeypatch.setattr(_jit, "_arrays_of", interrupted_once)
    with pytest.raises(KeyboardInterrupt):  # delivered again by the cleanup (never a SystemError made of it)
        grow(b, rows)
    monkeypatch.setattr(_jit, "_arrays_of", real)
    assert b.handle._storage.lock.acquire(blocking=False)  # not left locked
    b.handle._storage.lock.release()
    sa, sb = nt_state(a.handle), nt_state(b.handle)
    sa.pop("name", None)
    sb.pop("name", None)
    assert same_snapshot(sa, sb)  # the compiled call's writes are all there
    assert b.element_shape == a.element_shape == numba_ta.TensorShape([3])  # and the class's shape
    np.testing.assert_array_equal(b.stack(), rows)
    assert j_size(b) == 20


# --------------------------------------------------------------------------- the entry rules
@pytest.mark.jit_only("typing of compiled functions")
def test_array_of_unknown_element_rank_cannot_enter():
    ta = numba_ta.TensorArray(np.float32, size=2)
    with pytest.raises(TypeError, match="element rank is not known"):
        _jit.numba_type(ta)
    with pytest.raises(Exception, match="element rank|non-precise|pyobject"):
        j_size(ta)


@pytest.mark.jit_only("typing of compiled functions")
def test_float16_array_cannot_enter():
    ta = numba_ta.TensorArray(np.float16, size=2).write(0, np.ones(2, np.float16))
    with pytest.raises(TypeError, match="float16 arrays cannot be passed to compiled code"):
        _jit.numba_type(ta)


def test_elements_of_several_ranks_enter_and_a_read_of_another_rank_changes_nothing():
    ta = numba_ta.TensorArray(np.float32, size=3, infer_shape=False)
    ta = ta.write(0, np.ones(2, np.float32)).write(1, np.full((2, 3), 2, np.float32))
    np.testing.assert_array_equal(j_read(ta, 0), np.ones(2, np.float32))  # the type's rank: element 0's, 1
    before = nt_state(ta._handle)
    if not numba.config.DISABLE_JIT:  # as plain Python the class reads any rank
        with pytest.raises(NotImplementedError, match="element 1 has rank 2"):
            j_read(ta, 1)
        assert same_snapshot(before, nt_state(ta._handle))
    ta = j_write(ta, 2, np.zeros((4, 5, 6), np.float32))
    assert ta.read(1).shape == (2, 3) and ta.read(2).shape == (4, 5, 6)


@pytest.mark.jit_only("the cleanup code of a compiled call calls _leave")
def test_leave_runs_again_after_an_interrupt():
    """``_leave`` can run again (the cleanup calls it until it returns): the second time it only forgets."""
    ta = numba_ta.TensorArray(np.float32, size=2, element_shape=[1])
    storage = ta.handle._storage
    assert _jit._enter_meminfo(ta) is storage._jit.meminfo
    assert storage.held is not None and storage.lock.locked()
    _jit._leave(ta)
    assert not storage.lock.locked() and storage.held is None and not _jit._thread().stack
    _jit._leave(ta)  # again (as after an interrupt that landed after the release): nothing breaks
    assert not storage.lock.locked() and storage.held is None


@pytest.mark.jit_only("the lock is taken when a compiled call unboxes the array")
def test_same_array_twice_in_one_call_is_refused():
    @numba.njit
    def two(a, b):
        return a.size() + b.size()

    ta = numba_ta.TensorArray(np.float32, size=2, element_shape=[1])
    with pytest.raises(RuntimeError, match="already in use"):
        two(ta, ta)
    assert ta.size() == 2  # and the array is usable afterwards (its lock was released)


@pytest.mark.jit_only("a compiled call holds the array's lock")
def test_python_thread_sees_a_compiled_call_whole():
    """A Python thread's op on an array waits for a compiled call that holds it: all or nothing.

    ``nogil``: the other thread runs while the compiled loop does, so only the array's lock
    keeps it from seeing a size between 0 and ``n`` (with a no-op lock in place of the array's, it
    saw 8 to 290 of them in each of 5 runs; without ``nogil`` the GIL alone would hide them).
    """
    n = 200_000
    rows = np.ones((n, 4), np.float32)

    @numba.njit(nogil=True)
    def fill(ta, rows):
        for i in range(rows.shape[0]):
            ta = ta.write(i, rows[i])
        return ta

    fill(numba_ta.TensorArray(np.float32, size=0, dynamic_size=True, element_shape=[4]), rows[:2])
    ta = numba_ta.TensorArray(np.float32, size=0, dynamic_size=True, element_shape=[4])
    seen = []
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            seen.append(ta.size())

    t = threading.Thread(target=watch)
    t.start()
    try:
        fill(ta, rows)
    finally:
        stop.set()
        t.join()
    assert set(seen) <= {0, n}, sorted(set(seen))[:10]
    assert ta.size() == n


def test_errors_raised_inside_compiled_code_are_numba_ta_errors():
    ta = numba_ta.TensorArray(np.float32, size=2, element_shape=[3])
    with pytest.raises(numba_ta.errors.InvalidArgumentError) as e:
        j_write(ta, 5, np.ones(3, np.float32))
    assert e.value.message == (
        f"TensorArray {ta.handle.name}: Tried to write to index 5 but array is not resizeable and size is: 2"
    )
    with pytest.raises(ValueError, match=r"Inconsistent shapes: saw \(4,\) but expected \(3,\) "):
        j_write(ta, 0, np.ones(4, np.float32))
    assert nt_state(ta.handle)["size"] == 2


def test_close_after_compiled_use_frees_the_buffers():
    """The compiled view the array keeps does not keep its buffers alive after close."""
    import gc
    import weakref

    ta = j_write(numba_ta.TensorArray(np.float64, size=4, element_shape=[1000]), 0, np.ones(1000))
    ref = weakref.ref(ta.handle._storage.data)
    ta.close()
    gc.collect()
    assert ref() is None


def test_pickled_after_compiled_use():
    import pickle

    ta = j_write(numba_ta.TensorArray(np.float32, size=3, element_shape=[2]), 1, np.ones(2, np.float32))
    ta2 = pickle.loads(pickle.dumps(ta))
    np.testing.assert_array_equal(j_read(ta2, 1), [1.0, 1.0])
    np.testing.assert_array_equal(ta.read(1), [1.0, 1.0])  # the original is independent of the copy
