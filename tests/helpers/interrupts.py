"""Interruption by a tracing function: the machinery the interrupt-safety tests share.

:class:`Interrupter` runs a callable under :func:`sys.settrace` and raises
``KeyboardInterrupt`` at the k-th *eligible* event of a frame whose code it traces
(by default :func:`in_numba_ta`: code in numba_ta's package, except the compiled
modules named in :data:`COMPILED`).  The events are ``'call'``, ``'line'`` and
``'return'``; two kinds of line events are skipped because no signal can land there
(tests/test_interrupts.py's module docstring explains both):

* the first instruction after a protected region (a ``with`` body, a ``try`` body
  with ``finally``) when the instruction before it was inside the region;
* the lines of an ``except``/``finally`` handler entered by an exception, up to its
  first call.

Everything here is generic: nothing depends on the TensorArray or the TensorList
storage.
"""

from __future__ import annotations

import dis
import faulthandler
import functools
import gc
import importlib.util
import linecache
import os
import signal
import sys
import traceback

import numpy as np

import numba_ta

PKG_DIR = os.path.dirname(os.path.abspath(numba_ta.__file__)) + os.sep
"""numba_ta's package directory (with a trailing separator)."""

COMPILED = (
    "numba_ta.core.ckernels",
    "numba_ta.core.kernels",
    "numba_ta.core.memory",
    "numba_ta.core.shapes",
    "numba_ta.core.state",
    "numba_ta.core.status",
    "numba_ta.core.sums",
    "numba_ta.tensor_array.engine",
    "numba_ta.tensor_list.listengine",
)
"""Modules of compiled functions (no Python frames, except under ``NUMBA_DISABLE_JIT=1``): never traced.

Module *names*; a name that does not exist is skipped.  ``core.memory`` also holds the Python
layer's allocation helpers (``new_array``...), which change no state: not tracing them costs
interrupt points inside numpy's allocations only.  ``core.ckernels`` also holds the Python layer's
loading of the C kernels (``load``, ``prepare_read``...), which changes no array (an interrupt there
leaves a slot empty, and the op runs serially).
"""


def _module_files(names):
    out = []
    for name in names:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):  # its parent package does not exist
            spec = None
        if spec is not None and spec.origin:
            out.append(os.path.abspath(spec.origin))
    return frozenset(out)


COMPILED_FILES = _module_files(COMPILED)
"""The files of the modules of :data:`COMPILED` that exist."""


def in_numba_ta(code):
    """Whether ``code`` is numba_ta's Python code (its package, outside the compiled modules)."""
    fn = code.co_filename
    return fn.startswith(PKG_DIR) and fn not in COMPILED_FILES


@functools.cache
def _exception_table(code):
    try:
        return tuple(dis._parse_exception_table(code))  # CPython >= 3.11
    except Exception:  # older CPython: no table, no protected regions to follow
        return ()


def _handler(code, offset):
    """Target of the exception-table entry covering instruction ``offset`` (None: unprotected)."""
    if offset is None:
        return None
    for e in _exception_table(code):
        if e.start <= offset < e.end:
            return e.target
    return None


@functools.cache
def _code_info(code):
    """(offsets of exception-handler targets, offsets of call instructions) of ``code``."""
    targets = frozenset(e.target for e in _exception_table(code))
    calls = frozenset(i.offset for i in dis.get_instructions(code) if i.opname.startswith("CALL"))
    return targets, calls


def signal_can_land(code, prev, cur):
    """Whether raising before instruction ``cur`` (``prev`` ran just before) is a point a signal could hit.

    Not when ``prev`` was inside a protected region and ``cur`` is outside it (or in another):
    a signal handler run there runs at ``prev``, inside the region.
    """
    h = _handler(code, prev)
    return h is None or h == _handler(code, cur)


def holds(v, want):
    """Whether ``v`` (or a tuple holding it) is an ndarray equal to ``want`` bit for bit."""
    if isinstance(v, np.ndarray):
        return v.dtype == want.dtype and v.shape == want.shape and v.tobytes() == want.tobytes()
    if isinstance(v, tuple):
        return any(holds(x, want) for x in v)
    return False


class Interrupter:
    """A tracing function raising ``KeyboardInterrupt`` at the ``k``-th eligible event (k=0: never).

    Parameters
    ----------
    k : int
        The event to raise at (1-based); 0 counts the events without raising.
    traced : callable, optional
        ``traced(code)``: whether the frames of ``code`` are counted (default :func:`in_numba_ta`).
    want : ndarray, optional
        A result to look for when raising: ``in_hand`` tells whether a traced frame already held it.

    Attributes
    ----------
    count : int
        The eligible events seen.
    where : str or None
        Where it raised (``file:line (event) source``); None if it did not.
    """

    def __init__(self, k, traced=in_numba_ta, want=None):
        self.k = k
        self.traced = traced
        self.want = want
        self.count = 0
        self.where = None
        self.site = None  # (file relative to the package's parent, line) where it raised
        self.in_hand = None

    def global_trace(self, frame, event, arg):
        """The global tracing function (``sys.settrace``)."""
        code = frame.f_code
        if not self.traced(code):
            return None
        frame.f_trace_opcodes = True
        targets, calls = _code_info(code)
        prev = [None]
        unwinding = [False]  # jumped into a handler by an exception, no call since: no signal can land
        self._event(frame, "call", arg)

        def local(frame, event, arg):
            if event == "opcode":
                cur = frame.f_lasti
                if cur in targets and _handler(code, prev[0]) == cur:
                    unwinding[0] = True
                elif prev[0] in calls:
                    unwinding[0] = False  # CPython checks for pending signals after a call
                prev[0] = cur
                return local
            if event == "line" and (unwinding[0] or not signal_can_land(code, prev[0], frame.f_lasti)):
                return local
            if event in ("line", "return"):
                self._event(frame, event, arg)
            return local

        return local

    def _event(self, frame, event, arg):
        self.count += 1
        if self.count != self.k:
            return
        self.where = where(frame, event)
        self.site = (_rel(frame.f_code.co_filename), frame.f_lineno)
        if self.want is not None:
            self.in_hand = (event == "return" and holds(arg, self.want)) or result_in_frames(
                frame, self.want, self.traced
            )
        raise KeyboardInterrupt(f"interrupt #{self.k} at {self.where}")

    def run(self, fn):
        """Return ``fn()``, run under this tracer."""
        old = sys.gettrace()
        sys.settrace(self.global_trace)
        try:
            return fn()
        finally:
            sys.settrace(old)


def _rel(fn):
    return os.path.relpath(fn, os.path.dirname(PKG_DIR.rstrip(os.sep)))


def where(frame, event):
    """``file:line (event) source`` of a frame, the file relative to numba_ta's parent directory."""
    fn = frame.f_code.co_filename
    line = linecache.getline(fn, frame.f_lineno).strip()
    return f"{_rel(fn)}:{frame.f_lineno} ({event}) {line[:90]}"


def result_in_frames(frame, want, traced):
    """Whether a traced frame from ``frame`` outwards holds ``want`` in a local variable."""
    f = frame
    while f is not None and traced(f.f_code):
        for v in list(f.f_locals.values()):
            if holds(v, want):
                return True
        f = f.f_back
    return False


def drop(exc):
    """Free the frames an exception holds (they keep arrays and buffers alive)."""
    if exc is not None and exc.__traceback__ is not None:
        traceback.clear_frames(exc.__traceback__)
        exc.__traceback__ = None


def chain(exc):
    """The exception, its cause or context, theirs, ... (each once)."""
    out, seen = [], set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        out.append(exc)
        exc = exc.__cause__ or exc.__context__
    return out


def summary(name, points, failures, key, shown=None, limit=8):
    """A case's bad interruption points as text: a count, then the first ``limit`` distinct ones.

    ``failures`` are ``(where, what)`` pairs; a pair whose ``key(where, what)`` was shown already is
    skipped, and ``what`` is printed as ``shown(what)`` (unchanged without ``shown``).
    """
    lines = [f"{name}: {len(failures)} bad interruption points out of {points}"]
    seen = set()
    for where_, what in failures:
        k = key(where_, what)
        if k in seen:
            continue
        seen.add(k)
        lines.append(f"  at {where_}\n      {what if shown is None else shown(what)}")
        if len(seen) >= limit:
            lines.append("  ...")
            break
    return "\n".join(lines)


class Alarms:
    """SIGALRM raising ``KeyboardInterrupt`` while armed: the signal-timer stress tests' set-up and tear-down.

    A context manager (main thread only).  Inside it, :meth:`call` runs a callable with a
    one-shot ``setitimer`` alarm a given delay after its start; the handler raises only while
    that call runs (``armed``).  On entry the garbage collector's foreign callbacks (Python code
    that runs at any allocation, such as distributed's: an interrupt landing there is
    swallowed by Python, not the code under test's) are taken out, the garbage made before is
    collected (its finalizers and weakref callbacks would swallow an alarm the same way), and
    a hang of 120 s dumps the tracebacks and exits (``faulthandler``); on exit everything is
    put back.

    Attributes
    ----------
    fired : int
        The alarms that raised.
    lost : int
        The calls during which an alarm raised but which returned: its ``KeyboardInterrupt``
        was swallowed on the way (by a finalizer, or by C code that clears errors).
    """

    def __init__(self):
        self.armed = False
        self.fired = 0
        self.lost = 0

    def _on_alarm(self, signum, frame):
        if self.armed:
            self.fired += 1
            raise KeyboardInterrupt("SIGALRM")

    def __enter__(self):
        self._gc_callbacks = gc.callbacks[:]
        gc.callbacks.clear()
        # garbage made before the trials is collected now, not at an allocation of the code under
        # test: its weakref callbacks (Numba's typing context keeps one for each dispatcher ever
        # made, and a test's discarded njit functions die in reference cycles) would swallow an alarm
        gc.collect()
        self._old_handler = signal.signal(signal.SIGALRM, self._on_alarm)
        faulthandler.dump_traceback_later(120, exit=True)
        return self

    def __exit__(self, *exc):
        self.armed = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, self._old_handler)
        gc.callbacks[:] = self._gc_callbacks
        faulthandler.cancel_dump_traceback_later()

    def call(self, delay, fn):
        """Return ``fn()``, with an alarm ``delay`` seconds after its start (none left once it returns or raises)."""
        fired = self.fired
        self.armed = True
        try:
            signal.setitimer(signal.ITIMER_REAL, delay)
            out = fn()
        finally:
            self.armed = False
            signal.setitimer(signal.ITIMER_REAL, 0)
        if self.fired != fired:
            self.lost += 1
        return out
