"""Interrupt safety of the twenty TensorList ops: a TensorList value never changes, interrupted or not.

A TensorList is a value: every op returns a new list and leaves its inputs as they were
(numba_ta keeps the newest version of a lineage in place and an undo log for the older
ones).  A ``KeyboardInterrupt`` (Ctrl-C, or any exception a signal handler raises) can land
between any two Python-level steps of an op; wherever it lands, the op's input lists, and
every other live handle of their lineages, must still read as before and keep working.

The method is tests/test_interrupts.py's (its tracer, :mod:`tests.helpers.interrupts`,
with the same rules on where an exception can land): each op runs under
:func:`sys.settrace`, with ``KeyboardInterrupt`` raised at the k-th traced event, for
k = 1, 2, ... until it runs through.  After each interrupted run:

* the op raised ``KeyboardInterrupt`` itself;
* every watched handle (the op's inputs and the other live handles of their lineages,
  and the lists held by a list of lists) reads exactly as the same handle of a fresh
  identical setup: ``TensorListLength``, ``TensorListElementShape``, ``TensorListGetItem``
  of every index (values bit for bit; the same error class and message for what raises),
  ``TensorListStack`` and ``TensorListGather`` (value or error);
* the op run again, then a follow-up sequence on every watched handle
  (``TensorListPushBack``, ``TensorListSetItem``, ``TensorListStack``,
  ``TensorListResize``, ``TensorListPopBack``, then the handle read again) give exactly
  what they give on a fresh identical setup.

The op run through (with and without the tracer) must leave its inputs unchanged too.

Each op runs on several kinds of input lists (:data:`KINDS`): dense float32 lists built by
``TensorListPushBack`` and by ``TensorListFromTensor``; a list with unset elements after
``TensorListResize``; a ragged list (element shape ``[-1]``); an *old* version whose newer
versions are alive (the op runs on the oldest of three handles of one lineage); a list of
lists (``element_dtype=variant``).  The ops that make a list from nothing but tensors run
with a numeric tensor and with a variant tensor of lists.

What makes it hold (numba_ta.tensor_list.store): an op's undo entry is in the log before
the storage changes, and appending it is the version bump; every entry restores values, so
it undoes a change made in full, in part or not at all; dropping log entries moves the log
and its base in one statement.  Before that, the ops changed the storage first and recorded
the change afterwards, and an interrupt between the two left the input list changed: all
fifty of the op cases that take a list failed here then (and a read through an old
handle, interrupted while the log was trimmed, could break the lineage's other versions).
"""

from __future__ import annotations

import os
import random
import re
import signal
import threading
import time

import numpy as np
import pytest

from numba_ta import raw_ops
from numba_ta.tensor_list.store import MANY_ENTRY
from tests.helpers.interrupts import Alarms, Interrupter, chain, drop, in_numba_ta, summary

THIS_FILE = os.path.abspath(__file__)
LIST_OPS = tuple(n for n in raw_ops.__all__ if "TensorList" in n)
F32 = np.float32
VARIANT = "variant"
LIST_TYPE = type(raw_ops.EmptyTensorList(element_shape=-1, max_num_elements=-1, element_dtype=F32))


def val(shape, seed, dtype=F32):
    """A distinctive, nonzero value (uninitialised memory does not look like it)."""
    n = int(np.prod(shape, dtype=np.int64))
    return (np.arange(n, dtype=np.float64) * 0.5 + 1.25 + 16 * seed).astype(dtype).reshape(shape)


def inner(seed, rows=2):
    """A small numeric list (an element of a list of lists)."""
    return raw_ops.TensorListFromTensor(tensor=val((rows, 2), seed), element_shape=[2])


def objects(xs):
    """A 1-d object array holding ``xs`` (lists, as TF's variant tensors)."""
    out = np.empty(len(xs), object)
    for k, x in enumerate(xs):
        out[k] = x
    return out


# ======================================================================================
# Reading lists through the ops only


def _norm_msg(e):
    return re.sub(r"_\d+", "_N", str(getattr(e, "message", e)))


def outcome(fn, depth=0):
    """``("ok", description of fn())`` or ``("error", class, message)``."""
    try:
        r = fn()
    except Exception as e:  # errors are outcomes to compare
        out = ("error", type(e).__name__, _norm_msg(e))
        drop(e)
        return out
    return ("ok", desc(r, depth))


def desc(v, depth=0):
    """A comparable description of an op's result; lists are read through the ops (to depth 3)."""
    if isinstance(v, LIST_TYPE):
        return ("list", read_list(v, depth + 1)) if depth < 3 else ("list", "deeper")
    if isinstance(v, np.ndarray | np.generic):
        a = np.asarray(v)
        if a.dtype == object:
            return ("objects", a.shape, tuple(desc(x, depth) for x in a.reshape(-1)))
        return ("array", a.dtype.str, a.shape, a.tobytes())
    if isinstance(v, tuple):
        return tuple(desc(x, depth) for x in v)
    return ("object", type(v).__name__, str(v))


def read_list(h, depth=0):
    """What the ops say about list ``h``: length, element shape, every element, stack, gather."""
    dt = h.element_dtype
    out = [outcome(lambda: raw_ops.TensorListLength(input_handle=h), depth)]
    out.append(outcome(lambda: raw_ops.TensorListElementShape(input_handle=h, shape_type=np.int32), depth))
    try:
        n = int(raw_ops.TensorListLength(input_handle=h))
    except Exception:  # recorded above
        n = 0
    for i in range(n + 1):
        out.append(
            outcome(
                lambda i=i: raw_ops.TensorListGetItem(input_handle=h, index=i, element_shape=-1, element_dtype=dt),
                depth,
            )
        )
    out.append(outcome(lambda: raw_ops.TensorListStack(input_handle=h, element_shape=-1, element_dtype=dt), depth))
    idx = np.arange(n, dtype=np.int32)[::-1].copy()
    out.append(
        outcome(
            lambda: raw_ops.TensorListGather(input_handle=h, indices=idx, element_shape=-1, element_dtype=dt), depth
        )
    )
    return tuple(out)


def snapshot(ctx):
    """Every watched handle of ``ctx``, read through the ops."""
    return tuple((label, read_list(h)) for label, h in ctx.handles)


def _follow_handle(ctx, h):
    """The follow-up sequence on one handle: push, set, stack, resize, pop, then the handle read again."""
    dt = h.element_dtype
    item = ctx.item_for(h)
    steps = []
    src = h

    def step(tag, fn):
        try:
            r = fn()
        except Exception as e:  # errors are outcomes to compare
            steps.append((tag, "error", type(e).__name__, _norm_msg(e)))
            drop(e)
            return None
        steps.append((tag, "ok", desc(r)))
        return r

    src = step("push", lambda: raw_ops.TensorListPushBack(input_handle=h, tensor=item(30))) or src
    src = step("set", lambda: raw_ops.TensorListSetItem(input_handle=src, index=0, item=item(31))) or src
    step("stack", lambda: raw_ops.TensorListStack(input_handle=src, element_shape=-1, element_dtype=dt))
    src = step("resize", lambda: raw_ops.TensorListResize(input_handle=src, size=2)) or src
    step("pop", lambda: raw_ops.TensorListPopBack(input_handle=src, element_shape=-1, element_dtype=dt))
    steps.append(("again", read_list(h)))
    return tuple(steps)


def follow_up(ctx, case):
    """The op run again, then a fixed sequence on every watched handle (outcomes, compared with a fresh setup)."""
    out = [("op again", outcome(lambda: case.op(ctx)))]
    for label, h in ctx.handles:
        out.append((label, _follow_handle(ctx, h)))
    return out


# ======================================================================================
# Input lists, built identically for every run of a case


class Ctx:
    """The watched handles of one setup; ``target`` is the one the op runs on."""

    def __init__(self, kind, dt, es):
        self.kind, self.dt, self.es = kind, dt, es
        self.handles = []
        self.target = None
        self.value = None
        self.tensors = {}

    def watch(self, label, h, target=False):
        self.handles.append((label, h))
        if target:
            self.target = h
        return h

    def item_for(self, h):
        """A value that a list like ``h`` takes (a fresh small list for a list of lists)."""
        if h.element_dtype == np.dtype(object):
            return lambda seed: inner(seed)
        return lambda seed: val((2,), seed, h.element_dtype)

    def finish(self, pool=()):
        """Build the op's arguments now, outside the traced op (``pool``: the lists a list of lists takes)."""
        if self.dt == VARIANT:
            self.value = pool[0]
            self.tensors = {k: objects([pool[j % len(pool)] for j in range(k)]) for k in (2, 3, 4)}
        else:
            self.value = val((2,), 5, self.dt)
            self.tensors = {k: val((k, 2), 5, self.dt) for k in (2, 3, 4)}
        return self


def k_pushback():
    c = Ctx("pushback", F32, [2])
    h = raw_ops.EmptyTensorList(element_shape=[2], max_num_elements=-1, element_dtype=F32)
    for j in range(3):
        h = raw_ops.TensorListPushBack(input_handle=h, tensor=val((2,), j))
    c.watch("l", h, target=True)
    return c.finish()


def k_fromtensor():
    c = Ctx("fromtensor", F32, [2])
    c.watch("l", raw_ops.TensorListFromTensor(tensor=val((3, 2), 1), element_shape=[2]), target=True)
    return c.finish()


def k_resized():
    """Elements 0 and 1 set, 2 and 3 unset (TensorListResize grew the list)."""
    c = Ctx("resized", F32, [2])
    h = raw_ops.TensorListFromTensor(tensor=val((2, 2), 2), element_shape=[2])
    c.watch("l", raw_ops.TensorListResize(input_handle=h, size=4), target=True)
    return c.finish()


def k_ragged():
    """Element shape [-1]: elements of 2, 3 and 1 items (the ragged layout)."""
    c = Ctx("ragged", F32, [-1])
    h = raw_ops.EmptyTensorList(element_shape=[-1], max_num_elements=-1, element_dtype=F32)
    for j, m in enumerate((2, 3, 1)):
        h = raw_ops.TensorListPushBack(input_handle=h, tensor=val((m,), j))
    c.watch("l", h, target=True)
    return c.finish()


def k_old():
    """Three live handles of one lineage (v0, v1 = SetItem(v0), v2 = PushBack(v1)); the op runs on v0."""
    c = Ctx("old", F32, [2])
    v0 = raw_ops.TensorListFromTensor(tensor=val((3, 2), 3), element_shape=[2])
    v1 = raw_ops.TensorListSetItem(input_handle=v0, index=1, item=val((2,), 7))
    v2 = raw_ops.TensorListPushBack(input_handle=v1, tensor=val((2,), 8))
    c.watch("v0", v0, target=True)
    c.watch("v1", v1)
    c.watch("v2", v2)
    return c.finish()


def k_variant():
    """A list of lists: [a, b, a, unset] (element shape [], a and b numeric lists, watched too)."""
    c = Ctx("variant", VARIANT, [])
    a, b = inner(1), inner(2, rows=3)
    h = raw_ops.EmptyTensorList(element_shape=[], max_num_elements=-1, element_dtype=VARIANT)
    for x in (a, b, a):
        h = raw_ops.TensorListPushBack(input_handle=h, tensor=x)
    h = raw_ops.TensorListResize(input_handle=h, size=4)
    c.watch("l", h, target=True)
    c.watch("a", a)
    c.watch("b", b)
    return c.finish(pool=(a, b))


KINDS = {f.__name__[2:]: f for f in (k_pushback, k_fromtensor, k_resized, k_ragged, k_old, k_variant)}


# ======================================================================================
# The ops: makers (from tensors only) and ops on an input list


def _no_leading():
    return np.zeros(0, np.int64)


MAKERS = {
    "EmptyTensorList": lambda c: raw_ops.EmptyTensorList(element_shape=c.es, max_num_elements=-1, element_dtype=c.dt),
    "TensorListReserve": lambda c: raw_ops.TensorListReserve(element_shape=c.es, num_elements=3, element_dtype=c.dt),
    "TensorListFromTensor": lambda c: raw_ops.TensorListFromTensor(tensor=c.tensors[3], element_shape=c.es),
    "TensorListSplit": lambda c: raw_ops.TensorListSplit(
        tensor=c.tensors[4], element_shape=[-1, *c.es], lengths=np.array([1, 0, 3], np.int64)
    ),
    "TensorListScatter": lambda c: raw_ops.TensorListScatter(
        tensor=c.tensors[2], indices=np.array([2, 0], np.int32), element_shape=c.es
    ),
    "TensorListScatterV2": lambda c: raw_ops.TensorListScatterV2(
        tensor=c.tensors[2], indices=np.array([2, 0], np.int32), element_shape=c.es, num_elements=4
    ),
}
MAKER_KINDS = ("fromtensor", "variant")  # their watched lists are bystanders (or the tensor's lists)


def _dt(c):
    return c.target.element_dtype


ON_LIST = {
    "TensorListPushBack": lambda c: raw_ops.TensorListPushBack(input_handle=c.target, tensor=c.value),
    "TensorListPushBackBatch": lambda c: raw_ops.TensorListPushBackBatch(
        input_handles=objects([c.target, c.target]), tensor=c.tensors[2]
    ),
    "TensorListPopBack": lambda c: raw_ops.TensorListPopBack(
        input_handle=c.target, element_shape=-1, element_dtype=_dt(c)
    ),
    "TensorListSetItem": lambda c: raw_ops.TensorListSetItem(input_handle=c.target, index=1, item=c.value),
    "TensorListGetItem": lambda c: raw_ops.TensorListGetItem(
        input_handle=c.target, index=2, element_shape=-1, element_dtype=_dt(c)
    ),
    "TensorListGather": lambda c: raw_ops.TensorListGather(
        input_handle=c.target, indices=np.array([2, 0], np.int32), element_shape=-1, element_dtype=_dt(c)
    ),
    "TensorListScatterIntoExistingList": lambda c: raw_ops.TensorListScatterIntoExistingList(
        input_handle=c.target, tensor=c.tensors[2], indices=np.array([1, 4], np.int32)
    ),
    "TensorListStack": lambda c: raw_ops.TensorListStack(input_handle=c.target, element_shape=-1, element_dtype=_dt(c)),
    "TensorListConcat": lambda c: raw_ops.TensorListConcat(
        input_handle=c.target, element_dtype=_dt(c), element_shape=[-1]
    ),
    "TensorListConcatV2": lambda c: raw_ops.TensorListConcatV2(
        input_handle=c.target, element_shape=-1, leading_dims=_no_leading(), element_dtype=_dt(c)
    ),
    "TensorListConcatLists": lambda c: raw_ops.TensorListConcatLists(
        input_a=c.target, input_b=c.target, element_dtype=_dt(c)
    ),
    "TensorListLength": lambda c: raw_ops.TensorListLength(input_handle=c.target),
    "TensorListElementShape": lambda c: raw_ops.TensorListElementShape(input_handle=c.target, shape_type=np.int32),
    "TensorListResize": lambda c: raw_ops.TensorListResize(input_handle=c.target, size=2),
}
assert not set(MAKERS) & set(ON_LIST)


class Case:
    """One op on one kind of input."""

    def __init__(self, op_name, kind, op):
        self.op_name, self.kind, self.op = op_name, kind, op
        self.name = f"{op_name}-{kind}"
        self.setup = KINDS[kind]

    def __repr__(self):
        return self.name


CASE_LIST = [Case(n, k, f) for n, f in MAKERS.items() for k in MAKER_KINDS]
CASE_LIST += [Case(n, k, f) for n, f in ON_LIST.items() for k in KINDS]
CASE_LIST.append(
    Case("TensorListResize_grow", "old", lambda c: raw_ops.TensorListResize(input_handle=c.target, size=5))
)
CASES = {c.name: c for c in CASE_LIST}
assert len(CASES) == len(CASE_LIST)


# ======================================================================================
# The harness


class Report:
    """The outcome of interrupting one case at each of its points."""

    def __init__(self, case):
        self.case = case
        self.points = 0
        self.failures = []  # (site, where, what)

    def fail(self, site, where, what):
        self.failures.append((site, where, what))

    def sites(self):
        """The distinct package lines where an interrupt left a failure, in order."""
        return list(dict.fromkeys(s for s, _, _ in self.failures))

    def message(self, limit=8):
        failures = [(where, what) for _, where, what in self.failures]
        return summary(
            self.case.name,
            self.points,
            failures,
            key=lambda where, what: (where, what[:60]),
            shown=lambda what: what[:400],
            limit=limit,
        )


def _first_diff(got, expect, path=""):
    """Where ``got`` first differs from ``expect`` (a path of indices), and the two values there."""
    if isinstance(got, tuple | list) and isinstance(expect, tuple | list) and len(got) == len(expect):
        for j, (a, b) in enumerate(zip(got, expect, strict=True)):
            if a != b:
                return _first_diff(a, b, f"{path}[{j}]")
    return f"at {path or 'top'}: got {str(got)[:160]}, a fresh setup gives {str(expect)[:160]}"


def run_harness(case, traced=in_numba_ta, max_points=3000):
    """Interrupt ``case.op`` at every eligible point in turn; return a :class:`Report`."""
    rep = Report(case)
    outcome(lambda: case.op(case.setup()))  # warm up (kernel loading) outside the tracer
    fresh = case.setup()
    unch = snapshot(fresh)
    assert snapshot(case.setup()) == unch, f"harness: setup of {case.name} is not deterministic"
    fresh_follow = follow_up(fresh, case)
    del fresh
    # the op run through under the counting tracer: the inputs stay as they were
    c_done = case.setup()
    counter = Interrupter(0, traced)
    done = outcome(lambda: counter.run(lambda: case.op(c_done)))
    if snapshot(c_done) != unch:
        rep.fail(None, "(op run through)", "the completed op changed its input: " + _first_diff(snapshot(c_done), unch))
    if follow_up(c_done, case) != fresh_follow:
        rep.fail(None, "(op run through)", "follow-up differs: " + _first_diff(follow_up(c_done, case), fresh_follow))
    c_done = None
    total = counter.count
    assert 0 < total < max_points, f"harness: {case.name} has {total} interruption points"
    for k in range(1, total + 1):
        ctx = case.setup()
        it = Interrupter(k, traced)
        exc = None
        result = None
        try:
            result = it.run(lambda ctx=ctx: case.op(ctx))
        except BaseException as e:  # KeyboardInterrupt is what we expect
            exc = e
        if it.where is None:  # ran through (a shorter path than the counted one)
            got = ("ok", desc(result)) if exc is None else ("error", type(exc).__name__, _norm_msg(exc))
            drop(exc)
            if got != done:
                rep.fail(None, f"k={k} (no interruption)", "ran through with another result than the done run")
            continue
        result = None
        rep.points += 1
        site, where = it.site, it.where
        if type(exc) is not KeyboardInterrupt:
            kinds = " <- ".join(type(x).__name__ for x in chain(exc)) if exc is not None else "no exception"
            rep.fail(
                site, where, f"wrong exception: the caller got {kinds} ({exc!r:.200}) instead of KeyboardInterrupt"
            )
        drop(exc)
        exc = None
        after = snapshot(ctx)
        if after != unch:
            rep.fail(site, where, "input changed: " + _first_diff(after, unch))
            continue
        got = follow_up(ctx, case)
        if got != fresh_follow:
            rep.fail(site, where, "follow-up differs: " + _first_diff(got, fresh_follow))
    return rep


@pytest.mark.parametrize("name", sorted(CASES))
def test_interrupted_list_op_leaves_its_input_lists_unchanged_and_usable(name):
    rep = run_harness(CASES[name])
    assert rep.points > 0
    assert not rep.failures, rep.message()


def test_cases_cover_every_tensorlist_op():
    assert len(LIST_OPS) == 20, LIST_OPS
    covered = {c.op_name for c in CASE_LIST}
    assert set(LIST_OPS) <= covered, sorted(set(LIST_OPS) - covered)
    for n in ON_LIST:
        assert {c.kind for c in CASE_LIST if c.op_name == n} == set(KINDS), n


# -- the harness itself -----------------------------------------------------------------


def _self_traced(code):
    return code.co_filename == THIS_FILE and code.co_name.startswith("_toy_")


def _toy_read_only(c):
    n = raw_ops.TensorListLength(input_handle=c.target)
    m = n + 1
    return m


def _toy_set_then_commit(c):
    """Changes the storage, then (after a line where a signal can land) records it: the bug to catch."""
    store = c.target._store
    done = []
    store.set(0, val((2,), 9), done)  # stored; its undo entry kept aside
    marker = (MANY_ENTRY, done)
    store.log.append(marker)  # recorded (the version bump) only now
    return store._new_version()


def _toy_commit_only_at_the_end(c):
    """Builds the new list on the side and publishes nothing in place: correct under any interrupt."""
    v = val((3, 2), 9)
    w = v.copy()
    return raw_ops.TensorListFromTensor(tensor=w, element_shape=[2])


def test_harness_passes_an_op_that_changes_nothing():
    for op in (_toy_read_only, _toy_commit_only_at_the_end):
        rep = run_harness(Case("TensorListLength", "fromtensor", op), traced=_self_traced)
        assert rep.points >= 3 and not rep.failures, rep.message()


def test_harness_catches_a_storage_change_committed_after_a_line_a_signal_can_hit():
    rep = run_harness(Case("TensorListSetItem", "fromtensor", _toy_set_then_commit), traced=_self_traced)
    assert any("input changed" in what for _, _, what in rep.failures), rep.message()
    assert any("marker = (MANY_ENTRY" in where for _, where, _ in rep.failures), rep.message()


@pytest.mark.jit_only("the engine's steps are compiled code, which no signal handler interrupts")
@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
def test_every_alarm_during_a_loop_of_list_ops_arrives_as_keyboardinterrupt():
    """SIGALRM (a handler raising KeyboardInterrupt) at random moments of ``l = op(l)`` loops: never lost.

    Each freed handle's bookkeeping ran in a finalizer (``__del__``) once, where Python swallows
    an exception ("Exception ignored in ..."): an alarm landing there was lost, and the loop went
    on.  A handle's end now runs no Python code, so every alarm that fires reaches the caller,
    and the list of the last completed op reads as a list never interrupted.
    """
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers run in the main thread only")
    rows = np.arange(64 * 16, dtype=F32).reshape(64, 16)
    es = np.array([16], np.int32)

    def loop(done):
        h = raw_ops.EmptyTensorList(element_shape=es, max_num_elements=-1, element_dtype=F32)
        done[:] = [h]
        for r in rows:
            h = raw_ops.TensorListPushBack(input_handle=h, tensor=r)
            h = raw_ops.TensorListSetItem(input_handle=h, index=0, item=r)
            done[0] = h
        return h

    loop([])
    t = time.perf_counter()
    for _ in range(5):
        loop([])
    op_time = (time.perf_counter() - t) / 5
    rng = random.Random(35)
    interrupted, bad = 0, []
    with Alarms() as alarms:
        for trial in range(300):
            done: list = []
            try:
                alarms.call(rng.uniform(1e-6, 1.2 * op_time), lambda done=done: loop(done))
            except KeyboardInterrupt as e:
                interrupted += 1
                drop(e)
            if done:  # the last list an op returned reads whole
                h = done[0]
                n = len(h)
                want = rows[:n].copy()
                if n:
                    want[0] = rows[n - 1]
                got = raw_ops.TensorListStack(input_handle=h, element_dtype=F32, element_shape=es)
                if not np.array_equal(got, want):
                    bad.append(trial)
    line = f"300 trials, {alarms.fired} alarms, {interrupted} interrupted, {alarms.lost} lost, {len(bad)} bad lists"
    print(line)
    assert not alarms.lost and not bad, line
    assert interrupted > 50, line
