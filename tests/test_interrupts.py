"""Interrupt safety: an exception arriving at any point of an op leaves its array as it was, or
with the op fully done, and usable.

A ``KeyboardInterrupt`` (Ctrl-C, or any exception a signal handler raises) can land between any
two Python-level steps of an op.  The requirement: every op commits its state changes only after
its data work is done, so that wherever the exception lands the array is either *unchanged* or,
if it landed after the op's final commit, *done* (all-or-nothing); and in both cases usable: no
lock left held, nothing half-interned, no element marked written before its bytes are in, no
result computed from elements that the op already cleared.  Two methods check it.

1. Deterministic interruption (:func:`run_harness`).  The op runs under :func:`sys.settrace`; the
   tracer counts the events of frames whose code lives in numba_ta's package (``'call'``,
   ``'line'`` and ``'return'`` events; the compiled modules named in ``COMPILED`` of
   ``tests/helpers/interrupts.py`` are excluded, compiled kernels and engine ops have no frames,
   and numba's own frames are never traced) and raises ``KeyboardInterrupt`` at the
   k-th one, for k = 1, 2, ... until the op runs through without being interrupted.  After each
   interrupted run:

   * the op must have raised ``KeyboardInterrupt`` itself (not a ``SystemError`` or anything
     else carrying it as ``__cause__``/``__context__``);
   * a snapshot of the arrays, read from the ``Storage`` objects without going through any op
     (:func:`storage_snapshot`: size, flags, element shape, each element's state bits and shape,
     the bytes of every element that holds data, the gradient arrays and registry membership,
     the class's Python-side element shape, the bytes of ``stack(copy=False)`` views), must
     equal the snapshot from before the op (*unchanged*) or the snapshot after an uninterrupted
     run of the op on an identical fresh array (*done*);
   * when it is *done* and the op returns data (read, gather, stack, concat), the result must
     already exist at the interruption point (some numba_ta frame holds it, or it is the value
     being returned): an op that marks elements read/cleared before copying them out has
     committed before its data work;
   * every lock is free (``lock.acquire(blocking=False)``), the registry's too;
   * a follow-up sequence (size, writing every element, gather/stack, concat, reading every
     element, a gradient array) behaves exactly as on a fresh identical array left unchanged,
     or on which the op ran through: same values bit for bit, same error classes and messages.

   Separately (its own tests, so that it reports on its own), the number of interned shapes
   (``len(storage.shapes)``) after an interrupted run must not exceed its number after a
   completed run.

   Line events are where the tracer can raise, which is a little coarser and a little finer
   than where CPython runs signal handlers (it checks for them only after calls, at function
   entries and at backward jumps; so a line event inside a multi-line statement, or between
   two statements with no call between them, is a point only a tracing function reaches --
   numba_ta's own design note counts tracing functions in).  Two kinds of line events are
   skipped because no exception can arrive there at all: the first instruction after a protected region (a
   ``with`` block's body, a ``try`` body with ``finally``) when the instruction before it was
   inside the region -- e.g. the ``__exit__`` call of a ``with``: a handler that runs there is
   run while the last instruction of the body is still current, so the exception is handled
   by the ``with``, whereas an exception raised by a tracer at the first instruction of the
   exit sequence is not (found by following the exception table of 3.11's code objects);
   and the lines of an ``except``/``finally`` handler entered by an exception, up to its first
   call.  ``acquire()`` followed by ``try:`` on the next line is *not* skipped: a signal can
   land between them.  The harness's own tests (``test_harness_*``) check these rules on toy
   ops, and that a toy op marking an element written before copying its bytes is caught.

   Values whose conversion raises (``__array__`` or ``numpy()`` raising ``KeyboardInterrupt``)
   are passed to the ops too (values, indices, lengths); the caller must get that
   ``KeyboardInterrupt`` and the array must be unchanged.

   numba loads each cached kernel lazily, in Python, on its first call in a process, so a
   user's first op can be interrupted inside numba.  A fresh interpreter runs numba_ta's first
   op with a tracer raising ``KeyboardInterrupt`` at the first line of a given numba function
   on that path; the same op run again must work.

2. A signal-timer stress test (kernels loaded beforehand): ``SIGALRM`` 2 to 200 microseconds
   after each op starts (a random one-shot ``setitimer`` per op), with a handler raising
   ``KeyboardInterrupt``, while a loop runs a random mix of ops on a few arrays (forward dense,
   dynamic, ragged, gradient float64 and float16); every attempted value is recorded before the
   op starts.  After each batch every
   array is checked: locks free, valid state bits, every element holding data holds one of the
   values attempted for it bit for bit (gradient elements: the sum of a subset of the attempted
   contributions, each a distinct power of two, and every multi-element op applied to all its
   elements or to none), completed reads returned attempted values, elements read with
   clear_after_read are cleared, ``stack(copy=False)`` views never changed, and the arrays still
   work.  Only ``KeyboardInterrupt`` and numba_ta's ``OpError`` may escape an op.  A lock found
   held (single-threaded: an interrupted op left it) is reported and released so the run goes
   on.  ``faulthandler.dump_traceback_later`` guards against a hang.  The summary line gives the
   number of ops, of interrupted ops, and of distinct numba_ta lines the interrupts landed on.
"""

from __future__ import annotations

import functools
import json
import math
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time
import traceback

import numpy as np
import pytest

from numba_ta import TensorArray, raw_ops
from numba_ta.core import header as H
from numba_ta.errors import OpError
from numba_ta.tensor_array import registry as _registry
from tests.helpers.interrupts import Alarms, Interrupter, in_numba_ta, summary
from tests.helpers.interrupts import chain as _chain
from tests.helpers.interrupts import drop as _drop
from tests.helpers.storage_view import C, D, R, W, valid_bits

F0 = np.float32(0.0)
THIS_FILE = os.path.abspath(__file__)


# ======================================================================================
# Snapshots, read from the Storage objects without going through the ops.  Everything that
# depends on Storage's field names is here: adapt this section when they change.


def _get(s, *names, default=None):
    for n in names:
        if hasattr(s, n):
            return getattr(s, n)
    return default


def element_value(s, i):
    """The value stored for element ``i`` of storage ``s`` (an ndarray), or None when it holds no data."""
    bits = int(s.state[i])
    if not (bits & W and bits & D):
        return None
    shape = tuple(s.shapes[int(s.shape_id[i])])
    items = math.prod(shape)
    if not items:
        return np.zeros(shape, dtype=s.dtype)
    off = int(s.offsets[i])
    flat = s.data[off : off + items]
    if flat.size != items:
        raise IndexError(f"element {i}: {items} items at offset {off} but the buffer has {s.data.size}")
    return flat.reshape(shape).copy()


def _element_record(s, i):
    bits = int(s.state[i])
    if not bits & W:
        return (bits,)
    shape = tuple(s.shapes[int(s.shape_id[i])])
    if bits & D:
        v = element_value(s, i)
        return (bits, shape, v.tobytes())
    return (bits, shape)


def storage_snapshot(s, nested=True):
    """The public-visible state of one array and the bytes of every element that holds data.

    The array's unique name is left out (identical fresh arrays get different names).
    Reconstruction errors (a shape id or an offset that points nowhere) are recorded as such.
    """
    n = int(s.size)
    snap = {
        "size": n,
        "closed": bool(s.closed),
        "dtype": str(s.dtype),
        "dynamic_size": bool(s.dynamic_size),
        "clear_after_read": bool(s.clear_after_read),
        "identical_element_shapes": bool(_get(s, "identical", "identical_element_shapes")),
        "is_grad": bool(s.is_grad),
        "marked_size": int(s.marked_size),
        "element_shape": s.element_shape,
        "registered": _registry._live.get(s.name) is s,
    }
    if not s.is_grad:
        # what GradV3 checks; on a gradient array no op can see it (GradV3 refuses gradient arrays first)
        snap["gradients_disallowed"] = bool(s.gradients_disallowed)
    elements = []
    for i in range(n):
        try:
            elements.append(_element_record(s, i))
        except Exception as e:  # a broken element is part of the state
            elements.append(("unreadable", type(e).__name__, str(e)))
    snap["elements"] = elements
    try:
        snap["bits_past_size"] = bool(np.any(s.state[n:]))
    except Exception as e:
        snap["bits_past_size"] = ("unreadable", type(e).__name__)
    if nested:
        snap["grads"] = {src: storage_snapshot(g, nested=False) for src, g in sorted(s.grads.items())}
    return snap


def n_interned_shapes(s):
    return len(s.shapes)


def all_storages(ctx):
    """The watched storages and the gradient arrays they own (each once)."""
    out = []
    for a in ctx.arrays:
        for s in (a.storage, *a.storage.grads.values()):
            if all(s is not x for x in out):
                out.append(s)
    return out


def ctx_snapshot(ctx):
    snap = {"arrays": [storage_snapshot(a.storage) for a in ctx.arrays]}
    if ctx.tas:
        snap["class_element_shape"] = [str(ta.element_shape) for ta in ctx.tas]
    if ctx.views:
        snap["views"] = [(v.shape, v.tobytes()) for v in ctx.views]
    if ctx.registry_only:
        snap = {"live_arrays": sorted(_registry.live_arrays())}
    return snap


def shape_counts(ctx):
    out = {}
    for k, a in enumerate(ctx.arrays):
        out[(k, None)] = n_interned_shapes(a.storage)
        for src, g in a.storage.grads.items():
            out[(k, src)] = n_interned_shapes(g)
    return out


def snapshot_diff(x, y, path="", limit=6):
    """Short description of where snapshots ``x`` and ``y`` differ."""
    out = []
    if isinstance(x, dict) and isinstance(y, dict):
        for k in sorted(set(x) | set(y), key=str):
            if k not in x or k not in y:
                out.append(f"{path}{k}: only in {'after' if k in x else 'expected'}")
            elif x[k] != y[k]:
                out.extend(snapshot_diff(x[k], y[k], f"{path}{k}.", limit))
    elif isinstance(x, list) and isinstance(y, list) and len(x) == len(y):
        for i, (a, b) in enumerate(zip(x, y, strict=True)):
            if a != b:
                out.extend(snapshot_diff(a, b, f"{path}[{i}].", limit))
    else:
        out.append(f"{path[:-1]}: {_short(x)} vs {_short(y)}")
    return out[:limit]


def _short(v):
    if isinstance(v, tuple) and v and isinstance(v[-1], bytes):
        return f"(bits={v[0]}, shape={v[1]}, {len(v[-1])} bytes {v[-1][:16].hex()})"
    s = repr(v)
    return s if len(s) < 120 else s[:117] + "..."


# ======================================================================================
# Interruption by a tracing function: tests/helpers/interrupts.py (shared with the TensorList test)


# ======================================================================================
# Contexts: arrays built by a setup function, identical for every run of a case


class Arr:
    """One watched array: its handle, and what the follow-up may write to it."""

    def __init__(self, handle, shapes, ta=None):
        self.handle = handle
        self.shapes = shapes
        self.ta = ta

    @property
    def storage(self):
        return self.handle._storage


class Ctx:
    def __init__(self):
        self.arrays = []
        self.tas = []  # TensorArray objects whose Python-side element shape is part of the state
        self.views = []  # stack(copy=False) results that must never change
        self.registry_only = False
        self.keep = []  # anything else that must stay alive

    def add(self, handle, shapes, ta=None):
        self.arrays.append(Arr(handle, shapes, ta))
        if ta is not None:
            self.tas.append(ta)
        return handle


def val(shape, seed, dtype=np.float32):
    """A distinctive, nonzero value (uninitialised memory does not look like it)."""
    n = math.prod(shape)
    return (np.arange(n, dtype=np.float64) * 0.5 + 1.25 + 16 * seed).astype(dtype).reshape(shape)


def mk(size, dtype=np.float32, **kw):
    h, _ = raw_ops.TensorArrayV3(size=size, dtype=dtype, **kw)
    return h


def wr(h, i, v):
    return raw_ops.TensorArrayWriteV3(handle=h, index=i, value=v, flow_in=F0)


def rd(h, i, dtype=np.float32):
    return raw_ops.TensorArrayReadV3(handle=h, index=i, flow_in=F0, dtype=dtype)


def sc(h, idx, v):
    return raw_ops.TensorArrayScatterV3(handle=h, indices=np.asarray(idx, np.int32), value=v, flow_in=F0)


def sp(h, v, lengths):
    return raw_ops.TensorArraySplitV3(handle=h, value=v, lengths=np.asarray(lengths, np.int64), flow_in=F0)


def ga(h, idx, dtype=np.float32, element_shape=None):
    return raw_ops.TensorArrayGatherV3(
        handle=h, indices=np.asarray(idx, np.int32), flow_in=F0, dtype=dtype, element_shape=element_shape
    )


def co(h, dtype=np.float32):
    return raw_ops.TensorArrayConcatV3(handle=h, flow_in=F0, dtype=dtype)


def grad(h, source="gradients"):
    return raw_ops.TensorArrayGradV3(handle=h, flow_in=F0, source=source)[0]


# -- setups ---------------------------------------------------------------------------
V2 = [(2,)]
RAGGED3 = [(2, 3), (1, 3), (3, 3)]


def s_create():
    c = Ctx()
    c.registry_only = True
    return c


def s_fresh(es=None, clear=True, identical=True, size=3, dynamic=False, shapes=V2):
    def setup():
        c = Ctx()
        c.add(
            mk(
                size, element_shape=es, clear_after_read=clear, identical_element_shapes=identical, dynamic_size=dynamic
            ),
            shapes,
        )
        return c

    return setup


def s_dense(clear=True, es=None):
    """Size 4, elements 0 and 1 written with one shape (the dense fast path is armed), 2 and 3 not."""

    def setup():
        c = Ctx()
        h = c.add(mk(4, element_shape=es, clear_after_read=clear, identical_element_shapes=True), V2)
        wr(h, 0, val((2,), 0))
        wr(h, 1, val((2,), 1))
        if not clear:
            rd(h, 0)
        return c

    return setup


def s_dynamic(view=False, clear=False):
    """Dynamic, three elements written (capacity 8); with ``view`` a stack(copy=False) view is alive."""

    def setup():
        c = Ctx()
        h = c.add(mk(0, dynamic_size=True, clear_after_read=clear, identical_element_shapes=True), V2)
        for i in range(3):
            wr(h, i, val((2,), i))
        if view:
            c.views.append(TensorArray(np.float32, handle=h, flow=F0).stack(copy=False))
        return c

    return setup


def s_ragged(clear=True):
    """Size 5, not identical: elements 0 (2,3) and 1 (1,3) written (ragged layout), 2..4 not."""

    def setup():
        c = Ctx()
        h = c.add(mk(5, clear_after_read=clear, identical_element_shapes=False), RAGGED3)
        wr(h, 0, val((2, 3), 0))
        wr(h, 1, val((1, 3), 1))
        return c

    return setup


def s_split(clear=True):
    """Size 4, not identical, split into elements of lengths 2, 1, 0, 3 (tail (2,))."""

    def setup():
        c = Ctx()
        h = c.add(mk(4, clear_after_read=clear, identical_element_shapes=False), [(2, 2), (1, 2), (3, 2)])
        sp(h, val((6, 2), 3), [2, 1, 0, 3])
        return c

    return setup


def s_grad(dtype=np.float32):
    """Forward (size 4, element_shape [2], all written) and its gradient array: element 0 holds
    data, 1..3 are soft zeros."""

    def setup():
        c = Ctx()
        f = c.add(mk(4, dtype=dtype, element_shape=[2], clear_after_read=False), V2)
        sc(f, [0, 1, 2, 3], val((4, 2), 2, dtype))
        g = c.add(grad(f), V2)
        wr(g, 0, val((2,), 7, dtype))
        return c

    return setup


def s_grad_split(dtype=np.float32):
    """Forward split into lengths 1, 2, 1 (tail (2,)) and its gradient array; grad element 1 holds data."""

    def setup():
        c = Ctx()
        f = c.add(mk(3, dtype=dtype, clear_after_read=False, identical_element_shapes=False), [(1, 2), (2, 2)])
        sp(f, val((4, 2), 2, dtype), [1, 2, 1])
        g = c.add(grad(f), [(1, 2), (2, 2)])
        wr(g, 1, val((2, 2), 5, dtype))
        return c

    return setup


def cs_fresh(**kw):
    def setup():
        c = Ctx()
        ta = TensorArray(np.float32, **kw)
        c.add(ta.handle, V2 if kw.get("infer_shape", True) else [(2, 2), (1, 2), (3, 2)], ta)
        return c

    return setup


def cs_dense(clear=True):
    def setup():
        c = Ctx()
        ta = TensorArray(np.float32, size=4, clear_after_read=clear)
        ta = ta.write(0, val((2,), 0)).write(1, val((2,), 1))
        c.add(ta.handle, V2, ta)
        return c

    return setup


def cs_dynamic(view=False):
    def setup():
        c = Ctx()
        ta = TensorArray(np.float32, size=0, dynamic_size=True, clear_after_read=False)
        for i in range(3):
            ta = ta.write(i, val((2,), i))
        c.add(ta.handle, V2, ta)
        if view:
            c.views.append(ta.stack(copy=False))
        return c

    return setup


def cs_split(clear=True):
    def setup():
        c = Ctx()
        ta = TensorArray(np.float32, size=3, infer_shape=False, clear_after_read=clear)
        ta = ta.split(val((5, 2), 3), [2, 0, 3])
        c.add(ta.handle, [(2, 2), (1, 2), (3, 2)], ta)
        return c

    return setup


def cs_grad():
    def setup():
        c = Ctx()
        ta = TensorArray(np.float32, size=3, element_shape=[2], clear_after_read=False)
        ta = ta.unstack(val((3, 2), 2))
        g = ta.grad("gradients").write(0, val((2,), 7))
        c.add(ta.handle, V2, ta)
        c.add(g.handle, V2, g)
        return c

    return setup


# ======================================================================================
# Follow-up: the same sequence on an interrupted array and on a fresh identical one


def _norm_msg(msg):
    return re.sub(r"([A-Za-z]\w*?)_\d+", r"\1_N", str(msg))


def _norm_result(r):
    if isinstance(r, np.ndarray | np.generic):
        a = np.asarray(r)
        return ("array", a.dtype.str, a.shape, a.tobytes())
    if isinstance(r, tuple):
        return tuple(_norm_result(x) for x in r)
    if isinstance(r, TensorArray):
        return ("TensorArray", _norm_msg(r.handle.name), str(r.element_shape))
    if isinstance(r, _registry.TensorArrayHandle):
        return ("handle", _norm_msg(r.name))
    return repr(r)


def follow_up(ctx):
    """Outcomes of a fixed sequence of ops on every watched array (values, or error class and message)."""
    out = []

    def rec(tag, fn):
        try:
            r = fn()
        except Exception as e:  # errors are outcomes to compare
            out.append((tag, "error", type(e).__name__, _norm_msg(getattr(e, "message", e))))
            return None
        out.append((tag, "ok", _norm_result(r)))
        return r

    if ctx.registry_only:
        h = rec("create", lambda: mk(2, element_shape=[2]))
        if h is not None:
            rec("write", lambda: wr(h, 1, val((2,), 9)))
            rec("gather", lambda: ga(h, [0, 1]))
        rec("live", lambda: len(_registry.live_arrays()))
        return out
    for k, a in enumerate(ctx.arrays):
        _follow_array(rec, k, a)
    return out


def _follow_array(rec, k, a):
    h, ta = a.handle, a.ta
    dt = a.storage.dtype
    size = rec(f"{k}.size", lambda: raw_ops.TensorArraySizeV3(handle=h, flow_in=F0))
    n = int(size) if size is not None else 0
    idx = list(range(n + 1)) + ([11] if a.storage.dynamic_size else [])
    for i in idx:
        v = val(a.shapes[i % len(a.shapes)], 20 + i, dt)
        if ta is not None:
            rec(f"{k}.ta.write({i})", lambda i=i, v=v: ta.write(i, v))
        else:
            rec(f"{k}.write({i})", lambda i=i, v=v: wr(h, i, v))
    size = rec(f"{k}.size2", lambda: raw_ops.TensorArraySizeV3(handle=h, flow_in=F0))
    n = int(size) if size is not None else 0
    if ta is not None:
        rec(f"{k}.ta.stack", lambda: ta.stack())
        rec(f"{k}.ta.concat", lambda: ta.concat())
    else:
        rec(f"{k}.gather", lambda: ga(h, list(range(n)), dt))
        rec(f"{k}.concat", lambda: co(h, dt))
    for i in range(n + 1):
        rec(f"{k}.read({i})", lambda i=i: rd(h, i, dt))
    if not a.storage.is_grad:
        g = rec(f"{k}.grad", lambda: grad(h, "gradients"))
        if g is not None:
            rec(f"{k}.grad.write", lambda: wr(g, 0, val(a.shapes[0], 40, dt)))
            rec(f"{k}.grad.read", lambda: rd(g, 0, dt))


# ======================================================================================
# The harness


class Case:
    def __init__(self, name, setup, op, returns_data=False):
        self.name, self.setup, self.op, self.returns_data = name, setup, op, returns_data

    def __repr__(self):
        return self.name


class Report:
    def __init__(self, case):
        self.case = case
        self.points = 0
        self.failures = []  # (where, what)
        self.shape_excess = []  # (where, key, interrupted count, done count)
        self.classes = []  # per k: "unchanged" / "done" / "both" / "neither"
        self.done_outcome = None

    def fail(self, where, what):
        self.failures.append((where, what))

    def message(self, limit=8):
        return summary(
            self.case.name, self.points, self.failures, key=lambda where, what: (where, what.split(":")[0]), limit=limit
        )


def _run_plain(case, ctx):
    try:
        return ("ok", case.op(ctx))
    except Exception as e:
        return ("error", e)


def _free_locks(ctx):
    held = []
    locks = [("registry", _registry._lock)] + [(s.name, s.lock) for s in all_storages(ctx)]
    for name, lock in locks:
        if lock.acquire(blocking=False):
            lock.release()
        else:
            held.append(name)
    return held


def run_harness(case, traced=in_numba_ta, max_points=5000):
    """Interrupt ``case.op`` at every eligible point in turn; return a :class:`Report`."""
    rep = Report(case)
    # warm up (kernel loading, numpy's lazy imports) outside the tracer
    _run_plain(case, case.setup())
    # reference runs: the op untouched (unchanged) and the op run through (done)
    c_unch = case.setup()
    unch = ctx_snapshot(c_unch)
    unch_shapes = shape_counts(c_unch)
    unch_follow = follow_up(c_unch)
    c_done = case.setup()
    counter = Interrupter(0, traced)
    try:
        res = ("ok", counter.run(lambda: case.op(c_done)))
    except Exception as e:
        res = ("error", e)
    rep.done_outcome = res[0] if res[0] == "ok" else f"{type(res[1]).__name__}: {res[1]}"
    want = None
    if case.returns_data and res[0] == "ok":
        want = res[1][0] if isinstance(res[1], tuple) else res[1]
        assert isinstance(want, np.ndarray), f"harness: {case.name} returns {type(want)}"
        want = want.copy()  # not a view of the storage
    done = ctx_snapshot(c_done)
    # the bound on interned shapes: what the completed op leaves, or what was there before (close drops them)
    limit = dict(unch_shapes)
    for key, m in shape_counts(c_done).items():
        limit[key] = max(limit.get(key, 0), m)
    done_follow = follow_up(c_done)
    if res[0] == "error":
        _drop(res[1])
    del res  # a handle the op returned must not outlive the reference run (registry snapshots)
    total = counter.count
    assert 0 < total < max_points, f"harness: {case.name} has {total} interruption points"
    for k in range(1, total + 1):
        ctx = case.setup()
        before = ctx_snapshot(ctx)
        assert before == unch, f"harness: setup of {case.name} is not deterministic: {snapshot_diff(before, unch)}"
        it = Interrupter(k, traced, want)
        exc = None
        try:
            it.run(lambda ctx=ctx: case.op(ctx))
        except BaseException as e:  # KeyboardInterrupt is what we expect
            exc = e
        if it.where is None:  # ran through (a path shorter than the counted one): must be done
            _drop(exc)
            if ctx_snapshot(ctx) != done:
                rep.fail(f"k={k} (no interruption)", "ran through but the state differs from the done run")
            continue
        rep.points += 1
        where = it.where
        if type(exc) is not KeyboardInterrupt:
            chain = " <- ".join(type(x).__name__ for x in _chain(exc)) if exc is not None else "no exception"
            rep.fail(where, f"wrong exception: the caller got {chain} ({exc!r:.200}) instead of KeyboardInterrupt")
        _drop(exc)
        exc = None
        after = ctx_snapshot(ctx)
        if after == before:
            cls = "both" if after == done else "unchanged"
        elif after == done:
            cls = "done"
        else:
            cls = "neither"
            rep.fail(
                where,
                "neither unchanged nor done: vs before: "
                + "; ".join(snapshot_diff(after, before))
                + " | vs done: "
                + "; ".join(snapshot_diff(after, done)),
            )
        rep.classes.append(cls)
        if k == 1 and cls not in ("unchanged", "both"):
            raise AssertionError(f"harness: interrupting {case.name} at its first event must change nothing")
        if cls == "done" and want is not None and not it.in_hand:
            rep.fail(
                where,
                "result lost: the op's state was committed (elements read"
                + ("/cleared" if any(a.storage.clear_after_read for a in ctx.arrays) else "")
                + ") before its result existed",
            )
        for key, m in shape_counts(ctx).items():
            if m > limit.get(key, 0):
                rep.shape_excess.append((where, key, m, limit.get(key, 0)))
        held = _free_locks(ctx)
        if held:
            rep.fail(where, f"lock left held: {held}")
            continue  # a follow-up would block forever
        if cls == "neither":
            continue
        got = follow_up(ctx)
        expect = done_follow if cls == "done" else unch_follow
        if got != expect:
            j = next(
                (i for i, (a, b) in enumerate(zip(got, expect, strict=False)) if a != b), min(len(got), len(expect))
            )
            g = got[j] if j < len(got) else None
            e = expect[j] if j < len(expect) else None
            rep.fail(where, f"follow-up differs ({cls}): step {j}: got {_short(g)}, fresh array gives {_short(e)}")
    return rep


@functools.cache
def harness_report(name):
    return run_harness(CASES[name])


# ======================================================================================
# The cases


def _cls(ctx, k=0):
    return ctx.arrays[k].ta


CASE_LIST = [
    # -- raw ops on forward arrays -----------------------------------------------------
    Case("TensorArrayV3_create", s_create, lambda c: mk(3, element_shape=[2], dynamic_size=True)),
    Case("WriteV3_first_write_no_storage_yet", s_fresh(), lambda c: wr(c.arrays[0].handle, 1, val((2,), 5))),
    Case("WriteV3_dense_fast_path", s_dense(), lambda c: wr(c.arrays[0].handle, 2, val((2,), 5))),
    Case("WriteV3_dynamic_growth_past_capacity", s_dynamic(), lambda c: wr(c.arrays[0].handle, 9, val((2,), 5))),
    Case(
        "WriteV3_growth_with_stack_view_alive",
        s_dynamic(view=True),
        lambda c: wr(c.arrays[0].handle, 9, val((2,), 5)),
    ),
    Case("WriteV3_ragged_new_shape", s_ragged(), lambda c: wr(c.arrays[0].handle, 2, val((3, 3), 5))),
    Case("WriteV3_error_already_written", s_dense(), lambda c: wr(c.arrays[0].handle, 0, val((2,), 5))),
    Case("ReadV3_clear_after_read", s_dense(), lambda c: rd(c.arrays[0].handle, 1), True),
    Case("ReadV3_keep", s_dense(clear=False), lambda c: rd(c.arrays[0].handle, 1), True),
    Case("ReadV3_unwritten_zeros", s_fresh(es=[2]), lambda c: rd(c.arrays[0].handle, 1), True),
    Case("ReadV3_ragged_clear_after_read", s_ragged(), lambda c: rd(c.arrays[0].handle, 0), True),
    Case("GatherV3_clear_after_read", s_dense(), lambda c: ga(c.arrays[0].handle, [1, 0]), True),
    Case(
        "GatherV3_keep_with_unwritten_zeros",
        s_dense(clear=False, es=[2]),
        lambda c: ga(c.arrays[0].handle, [2, 0, 1]),
        True,
    ),
    Case("ScatterV3_first_write_no_storage_yet", s_fresh(), lambda c: sc(c.arrays[0].handle, [2, 0], val((2, 2), 5))),
    Case("ScatterV3_dense", s_dense(), lambda c: sc(c.arrays[0].handle, [3, 2], val((2, 2), 5))),
    Case(
        "ScatterV3_dynamic_growth_past_capacity",
        s_dynamic(),
        lambda c: sc(c.arrays[0].handle, [9, 3], val((2, 2), 5)),
    ),
    Case(
        "ScatterV3_growth_with_stack_view_alive",
        s_dynamic(view=True),
        lambda c: sc(c.arrays[0].handle, [3, 12], val((2, 2), 5)),
    ),
    Case("ScatterV3_ragged_new_shape", s_ragged(), lambda c: sc(c.arrays[0].handle, [4, 2], val((2, 4, 3), 5))),
    Case("ScatterV3_error_already_written", s_dense(), lambda c: sc(c.arrays[0].handle, [3, 0], val((2, 2), 5))),
    Case("ConcatV3_ragged_clear_after_read", s_split(), lambda c: co(c.arrays[0].handle), True),
    Case("ConcatV3_ragged_keep", s_split(clear=False), lambda c: co(c.arrays[0].handle), True),
    Case(
        "SplitV3_first_write_ragged",
        s_fresh(identical=False, shapes=[(2, 2), (1, 2)]),
        lambda c: sp(c.arrays[0].handle, val((3, 2), 5), [2, 0, 1]),
    ),
    Case(
        "SplitV3_first_write_equal_lengths_dense",
        s_fresh(shapes=[(2, 2)]),
        lambda c: sp(c.arrays[0].handle, val((6, 2), 5), [2, 2, 2]),
    ),
    Case(
        "SplitV3_dynamic_growth",
        s_fresh(size=0, dynamic=True, identical=False, shapes=[(1, 2), (3, 2)]),
        lambda c: sp(c.arrays[0].handle, val((12, 2), 5), [1, 3, 2, 0, 1, 1, 1, 1, 1, 1]),
    ),
    Case("SizeV3", s_dynamic(), lambda c: raw_ops.TensorArraySizeV3(handle=c.arrays[0].handle, flow_in=F0)),
    Case("CloseV3_with_gradient_array", s_grad(), lambda c: raw_ops.TensorArrayCloseV3(handle=c.arrays[0].handle)),
    Case("GradV3_create", s_dense(clear=False), lambda c: grad(c.arrays[0].handle, "gradients")),
    Case("GradV3_existing", s_grad(), lambda c: grad(c.arrays[0].handle, "gradients")),
    Case(
        "GradWithShape_create",
        s_dense(clear=False),
        lambda c: raw_ops.TensorArrayGradWithShape(
            handle=c.arrays[0].handle, flow_in=F0, shape_to_prepend=[3], source="pfor"
        ),
    ),
    # -- raw ops on gradient arrays ------------------------------------------------------
    Case("grad_WriteV3_into_soft_zero", s_grad(), lambda c: wr(c.arrays[1].handle, 2, val((2,), 5))),
    Case("grad_WriteV3_accumulate_into_data", s_grad(), lambda c: wr(c.arrays[1].handle, 0, val((2,), 5))),
    Case(
        "grad_ScatterV3_accumulate_mixed_with_duplicates",
        s_grad(),
        lambda c: sc(c.arrays[1].handle, [0, 1, 0, 3], val((4, 2), 5)),
    ),
    Case(
        "grad_SplitV3_accumulate_and_store",
        s_grad_split(),
        lambda c: sp(c.arrays[1].handle, val((4, 2), 5), [1, 2, 1]),
    ),
    Case("grad_ReadV3_soft_zero", s_grad(), lambda c: rd(c.arrays[1].handle, 3), True),
    Case("grad_ReadV3_past_end_grows", s_grad(), lambda c: rd(c.arrays[1].handle, 6), True),
    Case("grad_GatherV3_data_and_soft_zeros", s_grad(), lambda c: ga(c.arrays[1].handle, [0, 3, 1]), True),
    Case("grad_ConcatV3", s_grad_split(), lambda c: co(c.arrays[1].handle), True),
    Case(
        "grad_float16_ScatterV3_accumulate",
        s_grad(np.float16),
        lambda c: sc(c.arrays[1].handle, [0, 1, 0], val((3, 2), 5, np.float16)),
    ),
    Case(
        "grad_float16_SplitV3_accumulate",
        s_grad_split(np.float16),
        lambda c: sp(c.arrays[1].handle, val((4, 2), 5, np.float16), [1, 2, 1]),
    ),
    # -- the class -------------------------------------------------------------------------
    Case("class_write_first_write_infers_shape", cs_fresh(size=3), lambda c: _cls(c).write(0, val((2,), 5))),
    Case("class_write_python_list", cs_fresh(size=3), lambda c: _cls(c).write(1, [1.5, -2.5])),
    Case("class_write_dynamic_growth_past_capacity", cs_dynamic(), lambda c: _cls(c).write(9, val((2,), 5))),
    Case(
        "class_write_growth_with_stack_view_alive",
        cs_dynamic(view=True),
        lambda c: _cls(c).write(9, val((2,), 5)),
    ),
    Case("class_read_clear_after_read", cs_dense(), lambda c: _cls(c).read(1), True),
    Case("class_stack_clear_after_read", cs_dense(), lambda c: _cls(c).stack(), True),
    Case("class_stack_view_keep", cs_dynamic(), lambda c: _cls(c).stack(copy=False), True),
    Case("class_gather_keep", cs_dynamic(), lambda c: _cls(c).gather([2, 0]), True),
    Case("class_scatter_dense", cs_dense(), lambda c: _cls(c).scatter([3, 2], val((2, 2), 5))),
    Case("class_unstack_first_write", cs_fresh(size=3), lambda c: _cls(c).unstack(val((3, 2), 5))),
    Case(
        "class_split_ragged_first_write",
        cs_fresh(size=3, infer_shape=False),
        lambda c: _cls(c).split(val((5, 2), 5), [2, 0, 3]),
    ),
    Case("class_concat_ragged_clear_after_read", cs_split(), lambda c: _cls(c).concat(), True),
    Case("class_grad_create", cs_dense(clear=False), lambda c: _cls(c).grad("gradients")),
    Case("class_grad_write_accumulate", cs_grad(), lambda c: _cls(c, 1).write(0, val((2,), 5))),
    Case("class_grad_unstack_accumulate", cs_grad(), lambda c: _cls(c, 1).unstack(val((3, 2), 5))),
]
CASES = {c.name: c for c in CASE_LIST}
assert len(CASES) == len(CASE_LIST)


@pytest.mark.parametrize("name", list(CASES))
def test_interrupt_at_every_point_leaves_array_unchanged_or_done_and_usable(name):
    rep = harness_report(name)
    assert rep.points > 0
    assert not rep.failures, rep.message()


@pytest.mark.parametrize("name", list(CASES))
def test_interrupted_op_interns_no_more_shapes_than_completed_op(name):
    rep = harness_report(name)
    if rep.shape_excess:
        lines = [f"{name}: an interrupted run left more interned shapes than the completed op"]
        seen = set()
        for where, key, m, d in rep.shape_excess:
            if where not in seen:
                seen.add(where)
                lines.append(f"  at {where}: array {key}: {m} shapes, at most {d} before or after the completed op")
        raise AssertionError("\n".join(lines[:10]))


# -- the harness itself -----------------------------------------------------------------


def _self_traced(code):
    return code.co_filename == THIS_FILE and code.co_name.startswith("_toy_")


def _toy_read_only(ctx):
    s = ctx.arrays[0].storage
    with s.lock:
        n = s.size
        m = n + 1
    return m


def _toy_marks_before_data(ctx):
    """Marks element 2 written, then copies its bytes in: the bug the harness must catch."""
    s = ctx.arrays[0].storage
    v = val((2,), 5)
    with s.lock:
        s.state[2] = W | D
        s.shape_id[2] = s.shape_id[0]
        s.offsets[2] = 2 * 2
        s.data[4:6] = v


def _toy_acquire_then_try(ctx):
    s = ctx.arrays[0].storage
    s.lock.acquire()
    try:
        n = s.size
    finally:
        s.lock.release()
    return n


def _toy_fail():
    raise ValueError("toy")


def _toy_restores_in_finally(ctx):
    """Changes the size inside ``try`` and restores it in ``finally``: correct under any signal."""
    s = ctx.arrays[0].storage
    old = s.size
    try:
        s.hdr[H.SIZE] = 99
        _toy_fail()
    finally:
        s.hdr[H.SIZE] = old


def test_harness_classifies_an_op_that_changes_nothing_as_unchanged():
    rep = run_harness(Case("toy", s_dense(), _toy_read_only), traced=_self_traced)
    assert rep.points >= 4 and not rep.failures, rep.message()
    assert set(rep.classes) == {"both"}, rep.classes  # changes nothing: unchanged == done
    rep = run_harness(
        Case("toy", s_dense(), lambda c: raw_ops.TensorArraySizeV3(handle=c.arrays[0].handle, flow_in=F0))
    )
    assert rep.points > 4 and not rep.failures, rep.message()
    assert set(rep.classes) == {"both"}, rep.classes


def test_harness_does_not_skip_cleanup_code_a_signal_cannot_skip():
    """A ``finally`` entered by an exception runs its first statement before any signal can land."""
    rep = run_harness(Case("toy", s_dense(), _toy_restores_in_finally), traced=_self_traced)
    assert rep.points >= 4 and not rep.failures, rep.message()
    assert set(rep.classes) == {"both"}, rep.classes


def test_harness_catches_an_element_marked_written_before_its_bytes_are_in():
    rep = run_harness(Case("toy", s_dense(), _toy_marks_before_data), traced=_self_traced)
    assert any("neither unchanged nor done" in what for _, what in rep.failures), rep.message()
    assert rep.classes[0] == "unchanged" and rep.classes[-1] == "done"


def test_harness_catches_a_lock_acquired_outside_try_and_skips_with_exits():
    rep = run_harness(Case("toy", s_dense(), _toy_acquire_then_try), traced=_self_traced)
    assert [w for w, what in rep.failures if "lock left held" in what], rep.message()
    assert all("try:" in w for w, what in rep.failures), rep.message()
    # the ``with`` statement's exit sequence is not a point a signal can hit: no lock stays held
    rep = run_harness(Case("toy", s_dense(), _toy_read_only), traced=_self_traced)
    assert not rep.failures


# ======================================================================================
# Conversions raising KeyboardInterrupt


class ArrayRaises:
    """A value whose ``__array__`` raises KeyboardInterrupt (np.asarray calls it)."""

    calls = 0

    def __array__(self, dtype=None, copy=None):
        ArrayRaises.calls += 1
        raise KeyboardInterrupt("in __array__")


class NumpyRaises:
    """A value whose ``numpy()`` raises KeyboardInterrupt (as a TF eager tensor's could)."""

    calls = 0

    def numpy(self):
        NumpyRaises.calls += 1
        raise KeyboardInterrupt("in numpy()")


def _raw(op, **kw):
    return getattr(raw_ops, op)(flow_in=F0, **kw)


# the values go to numba_ta as they are (the helpers above convert indices and lengths themselves)
CONVERSION_CASES = {
    "WriteV3_value": (s_dense(), lambda c, v: _raw("TensorArrayWriteV3", handle=c.arrays[0].handle, index=2, value=v)),
    "WriteV3_index": (
        s_dense(),
        lambda c, v: _raw("TensorArrayWriteV3", handle=c.arrays[0].handle, index=v, value=val((2,), 5)),
    ),
    "ScatterV3_value": (
        s_dense(),
        lambda c, v: _raw("TensorArrayScatterV3", handle=c.arrays[0].handle, indices=[2, 3], value=v),
    ),
    "ScatterV3_indices": (
        s_dense(),
        lambda c, v: _raw("TensorArrayScatterV3", handle=c.arrays[0].handle, indices=v, value=val((2, 2), 5)),
    ),
    "SplitV3_value": (
        s_fresh(identical=False),
        lambda c, v: _raw("TensorArraySplitV3", handle=c.arrays[0].handle, value=v, lengths=[1, 1, 1]),
    ),
    "SplitV3_lengths": (
        s_fresh(identical=False),
        lambda c, v: _raw("TensorArraySplitV3", handle=c.arrays[0].handle, value=val((3, 2), 5), lengths=v),
    ),
    "GatherV3_indices": (
        s_dense(),
        lambda c, v: _raw("TensorArrayGatherV3", handle=c.arrays[0].handle, indices=v, dtype=np.float32),
    ),
    "ReadV3_index": (
        s_dense(),
        lambda c, v: _raw("TensorArrayReadV3", handle=c.arrays[0].handle, index=v, dtype=np.float32),
    ),
    "grad_WriteV3_value": (
        s_grad(),
        lambda c, v: _raw("TensorArrayWriteV3", handle=c.arrays[1].handle, index=0, value=v),
    ),
    "class_write_value": (cs_dense(), lambda c, v: _cls(c).write(2, v)),
    "class_scatter_value": (cs_dense(), lambda c, v: _cls(c).scatter([2, 3], v)),
    "class_scatter_indices": (cs_dense(), lambda c, v: _cls(c).scatter(v, val((2, 2), 5))),
    "class_unstack_value": (cs_fresh(size=3), lambda c, v: _cls(c).unstack(v)),
    "class_split_value": (cs_fresh(size=3, infer_shape=False), lambda c, v: _cls(c).split(v, [1, 1, 1])),
    "class_gather_indices": (cs_dense(), lambda c, v: _cls(c).gather(v)),
}


@pytest.mark.parametrize("kind", [ArrayRaises, NumpyRaises], ids=["__array__", "numpy()"])
@pytest.mark.parametrize("name", list(CONVERSION_CASES))
def test_conversion_raising_keyboardinterrupt_reaches_caller_and_changes_nothing(name, kind):
    setup, op = CONVERSION_CASES[name]
    ctx = setup()
    before = ctx_snapshot(ctx)
    fresh_follow = follow_up(setup())
    kind.calls = 0
    exc = None
    try:
        op(ctx, kind())
    except BaseException as e:
        exc = e
    try:
        if kind.calls == 0:
            pytest.fail(
                f"{name}: numba_ta never called {kind.__name__}'s conversion method; it raised {exc!r:.300} "
                "(the README: values may be anything np.asarray takes, or TF eager tensors)"
            )
        assert type(exc) is KeyboardInterrupt, (
            f"{name}: the caller got {' <- '.join(type(x).__name__ for x in _chain(exc))}, not KeyboardInterrupt"
        )
    finally:
        _drop(exc)
    after = ctx_snapshot(ctx)
    assert after == before, snapshot_diff(after, before)
    assert not _free_locks(ctx)
    assert follow_up(ctx) == fresh_follow


# ======================================================================================
# An interrupt inside numba's first-time loading of a kernel (fresh interpreter)

COLD_LOAD_SCRIPT = r"""
import json, os, signal, sys
import numpy as np
from numba_ta import raw_ops

target_file, target_fn = sys.argv[1], sys.argv[2]
F0 = np.float32(0.0)
# Python's own SIGINT handler, whatever this process inherited: a process started in the background
# by a shell without job control inherits SIGINT ignored, and Python then installs no handler
signal.signal(signal.SIGINT, signal.default_int_handler)


def op():
    # the first numba_ta op of the process: every kernel it runs is loaded (or compiled) now
    h, f = raw_ops.TensorArrayV3(size=3, dtype=np.float32, identical_element_shapes=False, clear_after_read=False)
    v = np.arange(8, dtype=np.float32).reshape(4, 2)
    raw_ops.TensorArraySplitV3(handle=h, value=v, lengths=[1, 2, 1], flow_in=f)
    g = raw_ops.TensorArrayGatherV3(handle=h, indices=[0, 2], flow_in=f, dtype=np.float32)
    c, _ = raw_ops.TensorArrayConcatV3(handle=h, flow_in=f, dtype=np.float32)
    return np.concatenate([g.reshape(-1), c.reshape(-1)]).tolist()


hit = []


def tracer(frame, event, arg):
    code = frame.f_code
    if hit or code.co_name != target_fn or not code.co_filename.replace(os.sep, "/").endswith(target_file):
        return None

    def local(frame, event, arg):
        if event == "line" and not hit:
            hit.append(1)
            # a real Ctrl-C arriving here: SIGINT's handler raises KeyboardInterrupt at the next
            # point where Python checks for signals, which is this line of numba's code, unless
            # the signal is blocked (numba_ta holds signals back while numba loads a kernel)
            signal.raise_signal(signal.SIGINT)
        return local

    return local


out = {}
sys.settrace(tracer)
try:
    op()
    out["first"] = "ok"
except BaseException as e:
    out["first"] = " <- ".join(type(x).__name__ for x in (e, e.__context__) if x is not None)
finally:
    sys.settrace(None)
out["reached"] = bool(hit)
try:
    r = op()
    out["again"] = "ok" if r == [0, 1, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7] else "wrong result " + repr(r)
except BaseException as e:
    out["again"] = type(e).__name__ + ": " + str(e)
print("RESULT " + json.dumps(out))
"""


@pytest.mark.parametrize(
    "target",
    [
        ("numba_ta/core/numba_compat.py", "compile_for_args"),  # a kernel's loader (not numba's _compile_for_args)
        ("numba/core/dispatcher.py", "compile"),
        ("numba_ta/core/numba_compat.py", "load_overload"),  # what the dispatcher calls to load a kernel
        ("numba/core/caching.py", "load"),  # the index and data files
        ("numba_ta/core/numba_compat.py", "rebuild"),
        ("numba/core/codegen.py", "_finalize_final_module"),  # the object code into the JIT
    ],
    ids=lambda t: t[1],
)
def test_interrupt_inside_numbas_first_kernel_load_leaves_numba_ta_usable(target):
    """A fresh interpreter: Ctrl-C landing in numba's code while numba_ta's first op loads its kernels.

    The op must raise KeyboardInterrupt, and the same op run again must work: numba loads its
    kernels lazily, in Python, on the first call of each one in a process, so an interrupt
    during a user's first op lands there.
    """
    proc = subprocess.run(
        [sys.executable, "-c", COLD_LOAD_SCRIPT, *target],
        capture_output=True,
        text=True,
        timeout=600,
        env=dict(os.environ),
    )
    lines = [x for x in proc.stdout.splitlines() if x.startswith("RESULT ")]
    assert proc.returncode == 0 and lines, f"subprocess failed:\n{proc.stdout}\n{proc.stderr}"
    out = json.loads(lines[-1][len("RESULT ") :])
    if not out["reached"]:
        pytest.skip(f"this numba does not run {target[1]} on a first kernel call")
    assert out["first"] == "KeyboardInterrupt", out
    assert out["again"] == "ok", (
        f"after a KeyboardInterrupt at the first line of numba's {target[0]}:{target[1]} during the first op of "
        f"the process, the same op fails for good: {out['again']}"
    )


# ======================================================================================
# Signal-timer stress test


class StressArray:
    """One array of the stress test and the record of what was attempted on it."""

    def __init__(self, label, handle, shapes, ta=None, grad_base=None, max_bits=40):
        self.label, self.handle, self.shapes, self.ta = label, handle, shapes, ta
        self.grad_base = grad_base  # gradient arrays: contribution j of an element is 2**j * grad_base
        self.max_bits = max_bits
        self.attempts = {}  # forward: index -> list of attempted values
        self.bits = {}  # gradient: index -> number of contributions attempted so far
        self.groups = []  # ops writing several elements: [(index, value or bit)]
        self.must_clear = set()
        self.read_back = {}  # index -> value returned by a completed read (keep arrays)
        self.views = []  # (view, copy at the time)

    @property
    def storage(self):
        return self.handle._storage


class StressRun:
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.counter = 0
        self.stats = {"ops": 0, "interrupted": 0, "op_errors": 0}
        self.unexpected = []
        self.problems = []
        self.sites = set()  # numba_ta lines where an interrupt landed

    def value(self, shape, dtype=np.float32):
        """A value no other call returns, nor any part of one (its items are a range of their own)."""
        n = math.prod(shape)
        base = self.counter + 1
        self.counter += n + 1
        assert self.counter < 2**24, "float32 holds these integers exactly"
        return (np.arange(n) + base).astype(dtype).reshape(shape)


def _make_stress_arrays(run):
    """Build the arrays of one batch (no timer running)."""
    arrs = []
    ta = TensorArray(np.float32, size=6, element_shape=[2])
    arrs.append(StressArray("A dense clear", ta.handle, [(2,)], ta=ta))
    h = mk(0, dynamic_size=True, clear_after_read=False, identical_element_shapes=True)
    arrs.append(StressArray("B dynamic keep", h, [(3,)]))
    h = mk(5, clear_after_read=False, identical_element_shapes=False)
    arrs.append(StressArray("C ragged keep", h, [(1, 2), (2, 2), (3, 2)]))
    for dt, nbits in ((np.float64, 40), (np.float16, 9)):
        f = mk(4, dtype=dt, element_shape=[2], clear_after_read=False)
        sc(f, [0, 1, 2, 3], np.ones((4, 2), dt))
        g = grad(f)
        arrs.append(
            StressArray(f"G grad {np.dtype(dt).name}", g, [(2,)], grad_base=np.array([1, 2], dt), max_bits=nbits)
        )
        arrs[-1].forward = f
    return arrs


def _pick_op(run, arrs):
    """A random op as (array, description, callable, bookkeeping after success).  Records attempts first."""
    rng = run.rng
    a = rng.choice(arrs)
    s = a.storage
    dt = s.dtype
    size = int(s.size)
    if a.grad_base is not None:
        kind = rng.choice(["write", "write", "scatter", "scatter", "read", "gather"])
        if kind in ("write", "scatter"):
            k = 1 if kind == "write" else rng.randint(1, 3)
            idx = [rng.randrange(4) for _ in range(k)]
            if any(a.bits.get(i, 0) >= a.max_bits for i in idx):
                kind = "read"
            else:
                rows, group = [], []
                for i in idx:
                    j = a.bits.get(i, 0)
                    a.bits[i] = j + 1
                    rows.append((2.0**j) * a.grad_base)
                    group.append((i, j))
                a.groups.append(group)
                v = np.array(rows, dtype=dt)
                if kind == "write":
                    return a, f"write({idx[0]})", lambda: wr(a.handle, idx[0], v[0]), None
                return a, f"scatter({idx})", lambda: sc(a.handle, idx, v), None
        if kind == "read":
            i = rng.randrange(5)
            return a, f"read({i})", lambda: rd(a.handle, i, dt), ("read", [i])
        idx = rng.sample(range(4), rng.randint(1, 3))
        return a, f"gather({idx})", lambda: ga(a.handle, idx, dt), ("gather", idx)
    kind = rng.choice(
        ["write", "write", "write", "scatter", "read", "read", "gather", "stack", "concat", "split", "size"]
    )
    hi = size + 3 if s.dynamic_size else max(size, 1)
    if a.label.startswith("B") and size < 20 and rng.random() < 0.3:
        hi = 24  # growth past the capacity
    if kind == "write":
        i = rng.randrange(hi)
        v = run.value(rng.choice(a.shapes), dt)
        a.attempts.setdefault(i, []).append(v)
        if a.ta is not None and rng.random() < 0.5:
            return a, f"ta.write({i})", lambda: a.ta.write(i, v), None
        return a, f"write({i})", lambda: wr(a.handle, i, v), None
    if kind == "split" and a.label.startswith("C"):
        n = size
        lengths = [int(rng.choice(a.shapes)[0]) for _ in range(n)]
        v = run.value((sum(lengths), 2), dt)
        offs = np.cumsum([0] + lengths)
        group = []
        for i in range(n):
            row = v[offs[i] : offs[i + 1]]
            a.attempts.setdefault(i, []).append(row)
            group.append((i, row))
        a.groups.append(group)
        return a, f"split({lengths})", lambda: sp(a.handle, v, lengths), None
    if kind in ("scatter", "split"):
        k = rng.randint(1, 3)
        idx = rng.sample(range(hi), min(k, hi))
        shape = rng.choice(a.shapes)
        v = run.value((len(idx),) + tuple(shape), dt)
        group = []
        for r, i in enumerate(idx):
            a.attempts.setdefault(i, []).append(v[r])
            group.append((i, v[r]))
        a.groups.append(group)
        if a.ta is not None and rng.random() < 0.5:
            return a, f"ta.scatter({idx})", lambda: a.ta.scatter(idx, v), None
        return a, f"scatter({idx})", lambda: sc(a.handle, idx, v), None
    if kind == "read":
        i = rng.randrange(max(size, 1))
        if a.ta is not None and rng.random() < 0.5:
            return a, f"ta.read({i})", lambda: a.ta.read(i), ("read", [i])
        return a, f"read({i})", lambda: rd(a.handle, i, dt), ("read", [i])
    if kind == "gather":
        idx = rng.sample(range(max(size, 1)), min(rng.randint(1, 3), max(size, 1)))
        return a, f"gather({idx})", lambda: ga(a.handle, idx, dt), ("gather", idx)
    if kind == "stack":
        if a.label.startswith("B") and rng.random() < 0.5:
            ta = TensorArray(dt, handle=a.handle, flow=F0)
            return a, "stack(copy=False)", lambda: ta.stack(copy=False), ("view", list(range(size)))
        return a, "stack", lambda: ga(a.handle, list(range(size)), dt), ("gather", list(range(size)))
    if kind == "concat":
        return a, "concat", lambda: co(a.handle, dt), ("concat", list(range(size)))
    return a, "size", lambda: raw_ops.TensorArraySizeV3(handle=a.handle, flow_in=F0), None


def _candidates(a, i):
    return a.attempts.get(i, [])


def _is_candidate(a, i, v, allow_zeros=False):
    v = np.asarray(v)
    if allow_zeros and not v.any():
        return True
    return any(c.shape == v.shape and c.dtype == v.dtype and c.tobytes() == v.tobytes() for c in _candidates(a, i))


def _grad_subset(a, i, v):
    """The set of contributions j whose sum is ``v``, or None when ``v`` is no such sum."""
    v = np.asarray(v, dtype=np.float64)
    base = a.grad_base.astype(np.float64)
    if v.shape != base.shape:
        return None
    t = v / base
    if not (np.all(t == t[0]) and t[0] >= 0 and float(t[0]).is_integer()):
        return None
    bits = int(t[0])
    if bits >> a.bits.get(i, 0):
        return None
    return {j for j in range(a.bits.get(i, 0)) if bits >> j & 1}


def _after_success(run, a, what, book, result):
    """Bookkeeping after a completed op: values it returned, elements it must have cleared."""
    if book is None:
        return
    kind, idx = book
    if kind == "concat":
        return  # ragged results are checked through the reads
    s = a.storage
    if not isinstance(result, np.ndarray) or (kind != "read" and (result.ndim < 1 or len(result) != len(idx))):
        run.problems.append(f"{a.label}: {what} returned {result!r:.200}: not one row per index")
        return
    rows = [result] if kind == "read" else list(result)
    for i, row in zip(idx, rows, strict=True):
        if a.grad_base is not None:
            if _grad_subset(a, i, row) is None:
                run.problems.append(
                    f"{a.label}: {what} returned {row!r} for element {i}: not a sum of attempted contributions"
                )
        elif not _is_candidate(a, i, row, allow_zeros=True):
            run.problems.append(f"{a.label}: {what} returned {row!r} for element {i}, never written there")
        if s.clear_after_read:
            a.must_clear.add(i)
        else:
            a.read_back.setdefault(i, np.array(row))
    if kind == "view":
        a.views.append((result, result.copy()))


def _check_stress_array(run, a):
    s = a.storage
    p = run.problems
    if not s.lock.acquire(blocking=False):
        p.append(f"{a.label}: lock left held")
        return
    s.lock.release()
    n = int(s.size)
    if s.closed:
        return
    if np.any(s.state[n:]):
        p.append(f"{a.label}: state bits set past the size {n}")
    for i in range(n):
        bits = int(s.state[i])
        if not valid_bits(bits):
            p.append(f"{a.label}[{i}]: invalid state bits {bits}")
            continue
        if i in a.must_clear and not bits & C:
            p.append(f"{a.label}[{i}]: read with clear_after_read but not cleared (bits {bits})")
        if not (bits & W and bits & D):
            continue
        try:
            v = element_value(s, i)
        except Exception as e:
            p.append(f"{a.label}[{i}]: holds data that cannot be read back: {e!r}")
            continue
        if a.grad_base is not None:
            if _grad_subset(a, i, v) is None:
                p.append(f"{a.label}[{i}]: holds {v!r}, not a sum of attempted contributions")
        elif not _is_candidate(a, i, v):
            p.append(f"{a.label}[{i}]: holds {v!r}, never attempted there (garbage)")
        if i in a.read_back and a.read_back[i].tobytes() != v.tobytes():
            p.append(f"{a.label}[{i}]: a read returned {a.read_back[i]!r}, the element now holds {v!r}")
    # all-or-nothing across the elements of one op: each of its elements got its part, or none did
    for group in a.groups:
        applied = []
        for i, x in group:
            bits = int(s.state[i]) if i < n else 0
            if bits & C:
                continue  # read and cleared: its value is gone
            if not bits & W or not bits & D:
                applied.append(False)  # unwritten, or a gradient soft zero: nothing applied
                continue
            try:
                v = element_value(s, i)
            except Exception:  # reported above
                continue
            if a.grad_base is not None:
                sub = _grad_subset(a, i, v)
                if sub is None:
                    continue  # reported above
                applied.append(x in sub)
            else:
                applied.append(v.shape == x.shape and v.tobytes() == x.tobytes())
        if any(applied) and not all(applied):
            p.append(f"{a.label}: an op writing elements {[i for i, _ in group]} was applied to some of them only")
    for view, copy in a.views:
        if view.tobytes() != copy.tobytes():
            p.append(f"{a.label}: a stack(copy=False) view changed")


def _check_usable(run, a):
    """Without interrupts: writing every writable element and reading it back works."""
    s = a.storage
    try:
        n = int(raw_ops.TensorArraySizeV3(handle=a.handle, flow_in=F0))
        for i in range(n):
            bits = int(s.state[i])
            if a.grad_base is not None:
                if bits & R:
                    continue
                before = element_value(s, i) if bits & D else np.zeros(2, s.dtype)
                add = (2.0**a.max_bits) * a.grad_base if s.dtype == np.float64 else a.grad_base * 0
                wr(a.handle, i, add.astype(s.dtype))
                got = rd(a.handle, i, s.dtype)
                want = (before.astype(np.float64) + add).astype(s.dtype)
                if got.tobytes() != want.tobytes():
                    run.problems.append(f"{a.label}[{i}]: after the batch, write+read gave {got!r}, expected {want!r}")
            elif not bits & W:
                v = run.value(a.shapes[0], s.dtype)
                wr(a.handle, i, v)
                got = rd(a.handle, i, s.dtype)
                if got.tobytes() != v.tobytes():
                    run.problems.append(f"{a.label}[{i}]: after the batch, write+read gave {got!r}, expected {v!r}")
            elif not bits & C and bits & D:
                v = element_value(s, i)
                got = rd(a.handle, i, s.dtype)
                if got.tobytes() != v.tobytes():
                    run.problems.append(f"{a.label}[{i}]: after the batch, read gave {got!r}, stored {v!r}")
    except OpError as e:
        run.problems.append(f"{a.label}: after the batch, a plain write/read raised {type(e).__name__}: {e.message}")
    except Exception as e:
        run.problems.append(f"{a.label}: after the batch, a plain write/read raised {e!r}")


def _landing_site(e):
    """The innermost numba_ta line of an exception's traceback (None: it landed outside numba_ta)."""
    site = None
    tb = e.__traceback__
    while tb is not None:
        if in_numba_ta(tb.tb_frame.f_code):
            site = (os.path.basename(tb.tb_frame.f_code.co_filename), tb.tb_lineno)
        tb = tb.tb_next
    return site


def _record_unexpected(run, a, what, e):
    chain = " <- ".join(f"{type(x).__name__}({str(x)[:80]})" for x in _chain(e))
    tb = "".join(traceback.format_exception(e)[-6:])
    run.unexpected.append(f"{a.label}: {what}: {chain}\n{tb}")


@pytest.mark.jit_only("with the JIT off the kernels are Python loops: a signal can land inside a commit kernel")
@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
def test_sigalrm_keyboardinterrupt_stress_random_ops_all_or_nothing():
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers run in the main thread only")
    run = StressRun(seed=20260611)
    # load every kernel first: an interrupt inside numba's first load is the test above's subject
    warm = StressRun(seed=1)
    arrs = _make_stress_arrays(warm)
    for _ in range(600):
        a, what, fn, book = _pick_op(warm, arrs)
        try:
            fn()
        except OpError:
            pass
    del arrs, warm
    t_end = time.monotonic() + 4.0
    batches = 0
    with Alarms() as alarms:
        while time.monotonic() < t_end and run.stats["ops"] < 60_000 and len(run.problems) + len(run.unexpected) < 40:
            batches += 1
            arrs = _make_stress_arrays(run)
            for _ in range(300):
                a, what, fn, book = _pick_op(run, arrs)
                # single-threaded: a held lock was left by an interrupted op; record it and release it
                # (the next op on it would block for ever), so that the run goes on to find more
                for label, lock in [("registry", _registry._lock)] + [(b.label, b.storage.lock) for b in arrs]:
                    if lock.locked():
                        run.problems.append(f"{label}: lock left held by an interrupted op (found before {what})")
                        lock.release()
                delay = math.exp(run.rng.uniform(math.log(2e-6), math.log(2e-4)))  # 2 to 200 us
                run.stats["ops"] += 1
                result = None
                outcome = "ok"
                try:
                    result = alarms.call(delay, fn)
                except KeyboardInterrupt as e:
                    outcome = "interrupted"
                    run.stats["interrupted"] += 1
                    run.sites.add(_landing_site(e))
                    _drop(e)
                except OpError as e:
                    outcome = "error"
                    run.stats["op_errors"] += 1
                    if any(isinstance(x, KeyboardInterrupt) for x in _chain(e)[1:]):
                        _record_unexpected(run, a, what, e)
                    _drop(e)
                except BaseException as e:  # SystemError, IndexError, RuntimeError ...
                    _record_unexpected(run, a, what, e)
                    _drop(e)
                if outcome == "ok":
                    _after_success(run, a, what, book, result)
                result = None
            for a in arrs:
                _check_stress_array(run, a)
            for a in arrs:
                _check_usable(run, a)
            for a in arrs:
                raw_ops.TensorArrayCloseV3(handle=a.handle)
    summary = (
        f"{batches} batches, {run.stats}, {alarms.fired} alarms ({alarms.lost} lost), interrupts landed on "
        f"{len(run.sites - {None})} distinct numba_ta lines"
    )
    print(summary)
    report = [summary]
    if run.unexpected:
        report += ["exceptions other than KeyboardInterrupt/OpError escaped ops:", *run.unexpected[:5]]
    if run.problems:
        report += ["inconsistent or unusable arrays:", *dict.fromkeys(run.problems[:40])]
    assert not run.unexpected and not run.problems and not alarms.lost, "\n".join(report)
    assert run.stats["interrupted"] > 0, f"no op was interrupted: {summary}"


# ======================================================================================
# Signals while a parallel kernel runs: every interrupt arrives as KeyboardInterrupt, and the
# arrays are as before the op or as after it.  The threshold is 1 item, so eight elements of 64
# items run every bulk op's parallel kernel (and the gradient sums' per-dtype kernels).

PAR_ROWS, PAR_W = 8, 64
PAR_PERM = [5, 2, 7, 0, 3, 6, 1, 4]
PAR_LENS = [3, 1, 0, 2, 2]  # a split's lengths (rows of PAR_W items), one of them empty


def _par_forward(c, dtype=np.float32, clear=True):
    h = c.add(mk(PAR_ROWS, dtype=dtype, element_shape=[PAR_W], clear_after_read=clear), [(PAR_W,)])
    sc(h, list(range(PAR_ROWS)), val((PAR_ROWS, PAR_W), 1, dtype))
    return h


def _par_gather(c):
    h = _par_forward(c)
    return lambda: ga(h, PAR_PERM)


def _par_stack(c):
    ta = TensorArray(np.float32, size=PAR_ROWS, element_shape=[PAR_W], clear_after_read=False)
    ta = ta.unstack(val((PAR_ROWS, PAR_W), 2))
    c.add(ta.handle, [(PAR_W,)], ta)
    return ta.stack


def _par_scatter(c):
    h = c.add(mk(PAR_ROWS, element_shape=[PAR_W]), [(PAR_W,)])
    v = val((PAR_ROWS, PAR_W), 3)
    return lambda: sc(h, PAR_PERM, v)


def _par_unstack(c):
    ta = TensorArray(np.float32, size=PAR_ROWS, element_shape=[PAR_W])
    c.add(ta.handle, [(PAR_W,)], ta)
    v = val((PAR_ROWS, PAR_W), 4)
    return lambda: ta.unstack(v)


def _par_concat(c):
    h = c.add(mk(len(PAR_LENS), clear_after_read=True, identical_element_shapes=False), [(1, PAR_W)])
    sp(h, val((sum(PAR_LENS), PAR_W), 5), PAR_LENS)
    return lambda: co(h)


def _par_split(c):
    h = c.add(mk(len(PAR_LENS), identical_element_shapes=False), [(1, PAR_W)])
    v = val((sum(PAR_LENS), PAR_W), 6)
    return lambda: sp(h, v, PAR_LENS)


def _par_grad_scatter(dtype):
    def setup(c):
        g = c.add(grad(_par_forward(c, dtype, clear=False)), [(PAR_W,)])
        sc(g, [0, 2, 4, 6, 7], val((5, PAR_W), 7, dtype))  # these hold data: the op adds into them
        v = val((PAR_ROWS, PAR_W), 8, dtype)
        return lambda: sc(g, PAR_PERM, v)

    return setup


def _par_grad_split(c):
    f = c.add(mk(len(PAR_LENS), clear_after_read=False, identical_element_shapes=False), [(1, PAR_W)])
    sp(f, val((sum(PAR_LENS), PAR_W), 9), PAR_LENS)
    g = c.add(grad(f), [(1, PAR_W)])
    sp(g, val((sum(PAR_LENS), PAR_W), 10), PAR_LENS)  # every element holds data: the op adds into all
    v = val((sum(PAR_LENS), PAR_W), 11)
    return lambda: sp(g, v, PAR_LENS)


PAR_CASES = {
    "gather": _par_gather,
    "stack": _par_stack,
    "scatter": _par_scatter,
    "unstack": _par_unstack,
    "concat": _par_concat,
    "split": _par_split,
    "grad-scatter-adds-float32": _par_grad_scatter(np.float32),
    "grad-scatter-adds-int32": _par_grad_scatter(np.int32),
    "grad-split-adds": _par_grad_split,
}


def _par_result(r):
    """An op's result as comparable bytes (a TensorArray or a flow: None)."""
    if isinstance(r, np.ndarray):
        return (r.dtype.str, r.shape, r.tobytes())
    if isinstance(r, tuple):
        return tuple(_par_result(x) for x in r)
    return None


@pytest.fixture
def parallel_everywhere():
    """The parallel threshold at 1 item (restored afterwards)."""
    import numba_ta

    old = numba_ta.set_parallel_threshold(1)
    try:
        yield
    finally:
        numba_ta.set_parallel_threshold(old)


@pytest.mark.jit_only("the parallel kernels, and what calls them, are compiled code")
@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
@pytest.mark.parametrize("name", sorted(PAR_CASES))
def test_signal_during_parallel_kernel_arrives_as_keyboardinterrupt_all_or_nothing(name, parallel_everywhere):
    """SIGALRM (a handler raising KeyboardInterrupt) at random moments of a bulk op above the parallel threshold."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers run in the main thread only")
    setup = PAR_CASES[name]

    def fresh():
        c = Ctx()
        return c, setup(c)

    # the op's effect, uninterrupted (which also loads every kernel it runs)
    c, op = fresh()
    before = ctx_snapshot(c)
    want = _par_result(op())
    after = ctx_snapshot(c)
    assert before != after, "the op changes its array"
    from numba_ta.core import ckernels
    from numba_ta.core.state import dtype_code

    kind = name.split("-")[0]
    slot = {"gather": ckernels.GATHER, "stack": ckernels.GATHER, "concat": ckernels.GATHER}.get(kind, ckernels.WRITE)
    if kind == "grad":
        slot = ckernels.sum_slot(dtype_code(np.int32 if "int32" in name else np.float32), True)
    assert ckernels.TABLE[slot], "the op's parallel kernel is loaded (the op ran it)"
    t = time.perf_counter()
    for _ in range(20):
        c, op = fresh()
        op()
    op_time = (time.perf_counter() - t) / 20  # to spread the signals over the op (no assertion on it)
    rng = random.Random(34)
    trials, interrupted, done_anyway = 600, 0, 0
    wrong, bad = [], []
    with Alarms() as alarms:
        for trial in range(trials):
            c, op = fresh()
            result = None
            outcome = "done"
            delay = rng.uniform(1e-6, 1.5 * op_time + 2e-6)
            try:
                result = alarms.call(delay, op)
            except KeyboardInterrupt as e:
                outcome = "interrupted"
                interrupted += 1
                _drop(e)
            except BaseException as e:  # what the test is about: TypeError, SystemError ...
                chain = " <- ".join(f"{type(x).__name__}({str(x)[:80]})" for x in _chain(e))
                wrong.append(f"trial {trial}: {chain}")
                _drop(e)
                outcome = "wrong"
            snap = ctx_snapshot(c)
            locks = [a.storage.lock for a in c.arrays]
            if not all(lk.acquire(blocking=False) for lk in locks):
                bad.append(f"trial {trial} ({outcome}): a lock left held")
                continue
            for lk in locks:
                lk.release()
            if snap == after:
                if outcome == "done" and _par_result(result) != want:
                    bad.append(f"trial {trial}: completed with a wrong result")
                done_anyway += outcome != "done"
            elif snap != before:
                diff = snapshot_diff(snap, before) + ["-- vs after:"] + snapshot_diff(snap, after)
                bad.append(f"trial {trial} ({outcome}): neither as before nor as after: {diff}")
            elif outcome == "done":
                bad.append(f"trial {trial}: completed but the array is as before")
    summary_line = (
        f"{name}: {trials} trials, {alarms.fired} alarms ({alarms.lost} lost), {interrupted} interrupted "
        f"({done_anyway} of them after the commit), {len(wrong)} other exceptions, {len(bad)} bad states"
    )
    print(summary_line)
    report = [summary_line, *wrong[:5], *bad[:5]]
    assert not wrong and not bad and not alarms.lost, "\n".join(report)
    assert interrupted > 0, summary_line


# --------------------------------------------------------------------------- Python called from compiled code
def _compiled_cases():
    """The compiled functions whose ops call Python: ``name -> (function, its argument maker, expected error)``."""
    import numba

    @numba.njit
    def read_out_of_range(ta):  # the error's text is built in Python (core/status.raise_status)
        return ta.read(99)

    @numba.njit
    def new_array():  # the new array's name comes from the registry (jit/entries._unique_name)
        return TensorArray(np.float32, size=1, element_shape=(3,)).size()

    @numba.njit
    def new_large_array():  # metadata of 65,536 slots or more: numpy's lazy zeros (core/memory.new_meta)
        return TensorArray(np.float32, size=70_000, element_shape=(3,)).size()

    def small():
        return (TensorArray(np.float32, size=4, element_shape=[3]),)

    return {
        "error-text": (read_out_of_range, small, OpError),
        "new-name": (new_array, tuple, None),
        "lazy-metadata": (new_large_array, tuple, None),
    }


@pytest.mark.jit_only("compiled code calling Python")
@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs signal.setitimer")
@pytest.mark.parametrize("name", ["error-text", "new-name", "lazy-metadata"])
def test_signal_while_compiled_code_calls_python_arrives_as_keyboardinterrupt(name):
    """SIGALRM (a handler raising KeyboardInterrupt) while compiled code runs the Python its op needs.

    The op's own error (or its result) or KeyboardInterrupt: never a TypeError or SystemError
    made of the interrupt by the call's glue (as objmode's was).
    """
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signal handlers run in the main thread only")
    fn, make_args, expected = _compiled_cases()[name]

    made: list = []

    def run():
        made[:] = make_args()
        try:
            return fn(*made)
        except OpError as e:
            if expected is None:
                raise
            return type(e).__name__

    want = run()  # compiles, and the uninterrupted outcome
    t = time.perf_counter()
    for _ in range(20):
        run()
    op_time = (time.perf_counter() - t) / 20
    rng = random.Random(37)
    trials, interrupted, wrong = 600, 0, []
    with Alarms() as alarms:
        for trial in range(trials):
            try:
                got = alarms.call(rng.uniform(1e-6, 1.5 * op_time + 2e-6), run)
                if got != want:
                    wrong.append(f"trial {trial}: {got!r}, not {want!r}")
            except KeyboardInterrupt as e:
                interrupted += 1
                _drop(e)
            except BaseException as e:  # what the test is about
                wrong.append(f"trial {trial}: " + " <- ".join(f"{type(x).__name__}({str(x)[:80]})" for x in _chain(e)))
                _drop(e)
            for ta in made:  # the call's cleanup ran whole: the argument unlocked, not marked held
                if ta.handle._storage.lock.locked() or ta.handle._storage.held is not None:
                    wrong.append(f"trial {trial}: {ta.handle.name} left locked")
    line = f"{name}: {trials} trials, {alarms.fired} alarms ({alarms.lost} lost), {interrupted} interrupted, "
    line += f"{len(wrong)} wrong"
    print(line)
    assert not wrong and not alarms.lost, "\n".join([line, *wrong[:5]])
    assert interrupted > 0, line
    assert run() == want  # and the compiled function still works
