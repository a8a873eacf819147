"""Compiled calls over several TensorArrays from several threads: locks in one order, no hang.

A compiled call holds each TensorArray argument's lock from its unboxing to its cleanup
(``numba_ta.jit.extension``).  These tests run calls that take the same arrays in different
argument orders from several threads (``nogil``, so they really overlap), a compiled call
made from objmode code inside another, and a Python op from inside a compiled call on an
array that call holds: each must finish or raise, never hang.  Threads are daemons joined
with a timeout, so a deadlock fails the test instead of hanging the run.
"""

from __future__ import annotations

import dis
import itertools
import sys
import threading
import time

import numba
import numpy as np
import pytest

import numba_ta
from numba_ta.jit import extension as _jit

pytestmark = pytest.mark.jit_only("compiled calls that hold their arrays' locks")

TIMEOUT = 120  # seconds: far above the runs' few seconds; reached only by a hang


def _array(value, size=4):
    ta = numba_ta.TensorArray(np.float64, size=size, element_shape=[3], clear_after_read=False)
    for i in range(size):
        ta = ta.write(i, np.full(3, value + i, np.float64))
    return ta


@numba.njit(nogil=True)
def _sum2(a, b, n):
    s = 0.0
    for i in range(n):
        s += a.read(i % 4)[0] + b.read(i % 4)[0]
    return s


@numba.njit(nogil=True)
def _sum3(a, b, c, n):
    s = 0.0
    for i in range(n):
        s += a.read(i % 4)[0] + b.read(i % 4)[0] + c.read(i % 4)[0]
    return s


def _run_threads(targets):
    """Run each callable in a daemon thread; return their exceptions (None: returned); fail on a hang."""
    errors = [None] * len(targets)

    def wrap(k, fn):
        try:
            fn()
        except BaseException as e:  # reported below
            errors[k] = e

    threads = [threading.Thread(target=wrap, args=(k, fn), daemon=True) for k, fn in enumerate(targets)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    hung = [k for k, t in enumerate(threads) if t.is_alive()]
    assert not hung, f"threads {hung} still waiting after {TIMEOUT} s: a deadlock"
    return errors


def _unlocked(*arrays):
    for ta in arrays:
        lock = ta.handle._storage.lock
        assert lock.acquire(blocking=False), f"{ta.handle.name} left locked"
        lock.release()
        assert ta.handle._storage.held is None


def test_two_threads_taking_two_arrays_in_opposite_orders_finish():
    """The issue's script: f(a, b) and f(b, a) in a loop on two threads, 20,000 calls each."""
    a, b = _array(0.0), _array(10.0)
    expected = _sum2(a, b, 50)
    calls = 20_000
    results = [[], []]

    def loop(k, x, y):
        def run():
            out = results[k]
            for _ in range(calls):
                out.append(_sum2(x, y, 50))

        return run

    errors = _run_threads([loop(0, a, b), loop(1, b, a)])
    assert errors == [None, None], errors
    assert results[0] == results[1] == [expected] * calls
    _unlocked(a, b)


def test_three_threads_taking_three_arrays_in_every_order_finish():
    arrays = [_array(0.0), _array(10.0), _array(20.0)]
    expected = _sum3(*arrays, 20)
    orders = list(itertools.permutations(arrays))
    seen = []

    def loop(order):
        def run():
            for _ in range(2_000):
                seen.append(_sum3(*order, 20))

        return run

    errors = _run_threads([loop(orders[k]) for k in (0, 3, 5)])  # (a, b, c), (b, c, a), (c, b, a)
    assert errors == [None, None, None], errors
    assert set(seen) == {expected}
    _unlocked(*arrays)


_HOLDS: dict = {}  # thread -> the events (entered, release) of its running _hold call


def _pause():
    """Python code inside :func:`_hold`'s call: say it holds its array, wait until released."""
    entered, release = _HOLDS[threading.get_ident()]
    entered.set()
    release.wait(TIMEOUT)


@numba.njit
def _hold_call(ta):
    with numba.objmode():
        _pause()
    return ta.size()


def _hold(ta, entered, release):
    """Hold ``ta`` (a compiled call) until ``release`` is set; ``entered`` is set once it holds it."""
    _HOLDS[threading.get_ident()] = entered, release
    return _hold_call(ta)


def test_a_call_waiting_for_a_busy_array_gives_back_the_later_ones():
    """f(later, earlier) with ``earlier`` held elsewhere: the call waits without keeping ``later`` locked."""
    a, b = _array(0.0), _array(10.0)
    later, earlier = (a, b) if id(a.handle._storage) > id(b.handle._storage) else (b, a)
    entered, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold, args=(earlier, entered, release), daemon=True)
    holder.start()
    assert entered.wait(TIMEOUT)
    waiter = threading.Thread(target=_sum2, args=(later, earlier, 1), daemon=True)
    waiter.start()  # takes later's lock, finds earlier's busy: gives later's back and waits
    waiter.join(0.5)
    assert waiter.is_alive()
    lock = later.handle._storage.lock
    free = lock.acquire(timeout=TIMEOUT)  # a Python thread can take it while the call waits
    assert free
    lock.release()
    release.set()
    for t in (holder, waiter):
        t.join(TIMEOUT)
        assert not t.is_alive()
    _unlocked(a, b)


def test_python_op_from_objmode_on_an_array_the_call_holds_raises():
    a = _array(0.0)

    @numba.njit
    def inner_python_op(ta):
        with numba.objmode(x="float64"):
            x = float(ta.read(1)[0])  # the Python class's op, from inside the compiled call that holds ta
        return x

    def op():
        inner_python_op(a)

    errors = _run_threads([op])
    assert isinstance(errors[0], RuntimeError), repr(errors[0])
    assert "held by the compiled call this thread is running" in str(errors[0])
    assert len(str(errors[0]).splitlines()) == 1
    _unlocked(a)
    assert a.read(1)[0] == 1.0


def test_another_threads_python_op_waits_for_the_compiled_call():
    a = _array(0.0)
    entered, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold, args=(a, entered, release), daemon=True)
    holder.start()
    assert entered.wait(TIMEOUT)
    sizes = []
    t = threading.Thread(target=lambda: sizes.append(float(a.read(1)[0])), daemon=True)
    t.start()
    t.join(0.3)
    assert t.is_alive() and not sizes  # waits for the compiled call
    release.set()
    for th in (holder, t):
        th.join(TIMEOUT)
        assert not th.is_alive()
    assert sizes == [1.0]
    _unlocked(a)


_OBJMODE_CALLEE = []  # what the objmode block below calls


def _objmode_callee():
    """Call the test's closure from a module-level function: Numba 0.59 pickles an objmode block's closure
    cells by value, and a barrier does not pickle (0.68 does not need this)."""
    return _OBJMODE_CALLEE[0]()


def test_compiled_calls_from_objmode_that_wait_for_each_other_raise_instead_of_hanging():
    """T1 holds a and, from objmode, calls g(b); T2 holds b and calls g(a): one of them gives up."""
    a, b = _array(0.0), _array(10.0)
    barrier = threading.Barrier(2, timeout=TIMEOUT)
    other = {}  # thread -> the array its inner call takes

    @numba.njit
    def g(ta):
        return ta.read(0)[0]

    def inner():
        barrier.wait()  # both outer calls hold their array
        return g(other[threading.get_ident()])

    _OBJMODE_CALLEE[:] = [inner]

    @numba.njit
    def f(ta):
        with numba.objmode(x="float64"):
            x = _objmode_callee()
        return ta.read(1)[0] + x

    def run(ta, inner_ta):
        other[threading.get_ident()] = inner_ta
        return f(ta)

    g(a)
    errors = _run_threads([lambda: run(a, b), lambda: run(b, a)])
    _OBJMODE_CALLEE.clear()
    failed = [e for e in errors if e is not None]
    assert len(failed) == 1, errors
    assert isinstance(failed[0], RuntimeError) and "gives up instead of waiting forever" in str(failed[0])
    _unlocked(a, b)


def test_a_waiting_call_interrupted_leaves_every_lock_free():
    """KeyboardInterrupt while a call waits for a busy array (in the main thread): nothing stays locked."""
    import signal

    a, b = _array(0.0), _array(10.0)
    entered, release = threading.Event(), threading.Event()
    holder = threading.Thread(target=_hold, args=(b, entered, release), daemon=True)
    holder.start()
    entered.wait(TIMEOUT)
    timer = threading.Timer(0.3, lambda: signal.pthread_kill(threading.main_thread().ident, signal.SIGINT))
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            _sum2(a, b, 1)  # waits for b
    finally:
        timer.cancel()
        release.set()
        holder.join(TIMEOUT)
    assert not holder.is_alive()
    _unlocked(a, b)
    assert _sum2(a, b, 1) == _sum2(b, a, 1)
    assert not _jit._thread().stack


def test_an_interrupted_call_leaves_a_given_back_lock_to_the_thread_that_took_it():
    """f(later, earlier) waits for ``earlier``, another thread takes ``later``, Ctrl-C: that thread keeps it.

    The interrupted call's cleanup of ``later`` (whose lock it gave back) must not release
    the lock the other thread's call holds now.
    """
    import signal

    a, b = _array(0.0), _array(10.0)
    later, earlier = (a, b) if id(a.handle._storage) > id(b.handle._storage) else (b, a)
    events = [(threading.Event(), threading.Event()) for _ in range(2)]
    holders = [threading.Thread(target=_hold, args=(earlier, *events[0]), daemon=True)]
    holders.append(threading.Thread(target=_hold, args=(later, *events[1]), daemon=True))
    holders[0].start()
    assert events[0][0].wait(TIMEOUT)

    def take_later_then_interrupt():
        main = threading.main_thread().ident
        while _jit._WAITING.get(main) is not earlier.handle._storage:  # the call gave later back, waits
            time.sleep(0.001)
        holders[1].start()  # takes the given-back lock (the waiting call does not retake it first)
        events[1][0].wait(TIMEOUT)
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    interrupter = threading.Thread(target=take_later_then_interrupt, daemon=True)
    interrupter.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            _sum2(later, earlier, 1)  # takes later, waits for earlier (giving later back)
        assert later.handle._storage.held == holders[1].ident  # still the other call's
        assert later.handle._storage.lock.locked()
    finally:
        for _, release in events:
            release.set()
        for t in (interrupter, *holders):
            t.join(TIMEOUT)
    assert not any(t.is_alive() for t in (interrupter, *holders))
    _unlocked(a, b)
    assert _sum2(a, b, 1) == _sum2(b, a, 1)
    assert not _jit._thread().stack


class _AtSignalPoints:
    """A tracing function raising ``KeyboardInterrupt`` at the ``k``-th point of ``extension.py`` where a signal lands.

    CPython runs signal handlers at a function's start, after a call returns and at a loop's
    jump back, nowhere else (an attribute store or a load runs no handler): those are the
    points counted, in frames of ``numba_ta/jit/extension.py`` only.  ``k=0`` only counts.
    """

    def __init__(self, k):
        self.k, self.count, self.where = k, 0, None

    def _point(self, frame):
        self.count += 1
        if self.count == self.k:
            self.where = f"{frame.f_code.co_name}:{frame.f_lineno}"
            raise KeyboardInterrupt(self.where)

    def trace(self, frame, event, arg):
        code = frame.f_code
        if code.co_filename != _jit.__file__:
            return None
        frame.f_trace_opcodes, frame.f_trace_lines = True, False
        after = {
            i.offset for i in dis.get_instructions(code) if i.opname.startswith(("CALL", "JUMP_BACKWARD"))
        }
        prev = [None]
        self._point(frame)  # the function's start

        def local(frame, event, arg):
            if event == "opcode":
                last, prev[0] = prev[0], frame.f_lasti
                if last in after:
                    self._point(frame)
            return local

        return local


def _hold_raw(storage, main, stop):
    """Hold ``storage``'s lock as a compiled call of this thread would, until ``main`` waits for it or ``stop``."""
    storage.lock.acquire()
    storage.held = threading.get_ident()
    while not stop.is_set() and _jit._WAITING.get(main) is not storage:
        time.sleep(0.0002)
    storage.held = None
    storage.lock.release()


def test_an_interrupt_at_any_point_of_a_busy_entry_leaves_no_lock_behind():
    """Unboxing ``earlier`` while another thread holds it, with ``later`` already entered: Ctrl-C anywhere.

    The entry gives ``later`` back, waits for ``earlier``, takes it and retakes ``later``; a
    KeyboardInterrupt at each point where a signal can land in that code, in turn, then the
    cleanup Numba's wrapper runs (``_leave`` of the arguments it unboxed): every lock is free
    and nothing is left in the thread's entries, whether the entry finished or not.
    """
    a, b = _array(0.0), _array(10.0)
    later, earlier = (a, b) if id(a.handle._storage) > id(b.handle._storage) else (b, a)
    main = threading.get_ident()
    k, interrupted = 0, []
    while True:
        k += 1
        stop = threading.Event()
        holder = threading.Thread(target=_hold_raw, args=(earlier.handle._storage, main, stop), daemon=True)
        holder.start()
        while earlier.handle._storage.held is None:
            time.sleep(0.0002)
        _jit._enter_meminfo(later)  # the call's first argument: taken at once
        tracer = _AtSignalPoints(k)
        sys.settrace(tracer.trace)
        try:
            _jit._enter_meminfo(earlier)  # busy: the slow path
            entered = (later, earlier)
        except KeyboardInterrupt:
            entered = (later,)  # the wrapper cleans up the arguments it unboxed before the failure
        finally:
            sys.settrace(None)
        stop.set()
        holder.join(TIMEOUT)
        assert not holder.is_alive()
        for ta in entered:
            _jit._leave(ta)
        where = tracer.where or "no interrupt"
        for ta in (a, b):
            s = ta.handle._storage
            assert not s.lock.locked() and s.held is None, f"{ta.handle.name} left locked ({where})"
        assert not _jit._thread().stack, where
        if tracer.where is None:
            break
        interrupted.append(tracer.where)
    assert len(interrupted) > 10 and any(w.startswith("_acquire_checking_cycles") for w in interrupted)
