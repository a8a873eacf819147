"""Benchmark workloads: numba_ta against a numpy list, a preallocated numpy buffer and TensorFlow.

This module is the single definition of "the same work" for every
implementation a user could pick; both ``numba-ta bench`` (:func:`run`,
:func:`format_table`, :func:`plot`) and the asv suite in ``asv_bench/`` time
the :class:`Case` objects that :func:`make_case` builds.

Implementations (``IMPLS``)
---------------------------
``numba_ta``
    :class:`numba_ta.TensorArray`.
``raw_ops``
    :mod:`numba_ta.raw_ops` (no ``TensorArray`` object in between).
``numpy_list``
    What one writes without a TensorArray: a Python list of arrays, ``append``
    and indexing (no copies), ``np.stack`` / ``np.concatenate`` / ``np.split``.
``numpy_prealloc``
    A preallocated, already-touched ``(n, items)`` numpy buffer doing the same
    copies as the TensorArray op: row assignment, ``buf[i].copy()``,
    ``np.take(..., out=)``, fancy assignment, ``np.copyto``, ``np.add(..., out=)``.
``tf_eager``
    ``tf.TensorArray`` in eager mode (TF2's default).  The gradient-array
    workloads (``accumulate``, ``accumulate_write``, ``grad``) use the
    ``tf.raw_ops`` TensorArrayV3 ops eagerly, since eager ``tf.TensorArray``
    has no gradient arrays.
``tf_function``
    The same code traced with ``tf.function``.  A TensorArray cannot be passed
    into a ``tf.function`` without being stacked, so the functions of the
    consuming workloads (``read``, ``gather``, ``stack``, ``concat``) first
    build the array from a tensor (``unstack``), and that build is part of
    their time; ``accumulate``, ``accumulate_write`` and ``grad`` create their
    arrays (V3 ops) inside the function too.

Workloads (``OPS``): ``write``, ``read``, ``accumulate_write`` and ``growth``
are Python loops of one-element calls and are reported per element; the
others are one bulk call.  Write-once workloads get a fresh, empty array from
``Case.prepare``, outside the timing.  TensorFlow and matplotlib are
imported only when a case or a plot needs them.

Examples
--------
>>> from numba_ta import bench
>>> case = bench.make_case("stack", "numba_ta", n=8, items=4, dtype="float32")
>>> case.run(case.prepare()).shape
(8, 4)
>>> t = bench.time_case(case, repeat=3)
>>> len(t), min(t) >= 0
(3, True)
"""

from __future__ import annotations

import functools
import gc
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = [
    "IMPLS",
    "IMPL_LABELS",
    "OPS",
    "LOOP_OPS",
    "Unavailable",
    "Case",
    "make_case",
    "time_case",
    "tf_available",
    "cold_import_seconds",
    "Config",
    "Result",
    "Report",
    "run",
    "format_table",
    "check_targets",
    "plot",
    "to_json",
]

IMPLS = ("numba_ta", "raw_ops", "numpy_list", "numpy_prealloc", "tf_eager", "tf_function")
IMPL_LABELS = {
    "numba_ta": "numba_ta",
    "raw_ops": "raw_ops",
    "numpy_list": "np list",
    "numpy_prealloc": "np prealloc",
    "tf_eager": "tf eager",
    "tf_function": "tf.function",
}
#: Workload names, in report order.
OPS = (
    "write",
    "read",
    "gather",
    "scatter",
    "stack",
    "unstack",
    "concat",
    "split",
    "accumulate",
    "accumulate_write",
    "grad",
    "growth",
    "bptt",
)
#: Workloads that are a Python loop of one-element calls (reported per element).
LOOP_OPS = frozenset({"write", "read", "accumulate_write", "growth"})
#: Distinct rows the growth workload cycles through (so 10**6 writes need no 10**6-row input).
GROWTH_ROWS = 1024
#: The demo RNN's size in the BPTT workload (``numba-ta demo`` defaults).
BPTT_SEQ_LEN = 25
BPTT_HIDDEN = 64
GRAD_SOURCE = "gradients"


class Unavailable(NotImplementedError):
    """This implementation cannot run this workload here (TensorFlow missing, or no such operation).

    A ``NotImplementedError``, which asv reports as a skipped benchmark.
    """


# --------------------------------------------------------------------------- cases


@dataclass
class Case:
    """One workload for one implementation.

    Attributes
    ----------
    op, impl : str
        Workload (one of ``OPS``) and implementation (one of ``IMPLS``).
    n, items : int
        Number of elements, and items per element.
    dtype : str
        Element dtype name.
    prepare : callable
        ``prepare() -> state``: what one timed call needs (a fresh empty array
        for write-once workloads); not timed.
    run : callable
        ``run(state)``: the timed call.
    per_call : int
        Element operations per call: ``n`` for the loop workloads, else 1.
    nbytes : int
        Bytes of element data one call moves.
    keep : list
        Objects that must stay alive while the case is used.
    """

    op: str
    impl: str
    n: int
    items: int
    dtype: str
    prepare: Callable[[], Any]
    run: Callable[[Any], Any]
    per_call: int
    nbytes: int
    keep: list = field(default_factory=list, repr=False)


class _Data:
    """Deterministic inputs of one workload size; filled, so pages are touched up front."""

    def __init__(self, n, items, dtype, rows_needed=None):
        self.n, self.items = int(n), int(items)
        self.dtype = np.dtype(dtype)
        m = self.n if rows_needed is None else int(rows_needed)
        self.data = _filled(m, self.items, self.dtype.name)
        self.rows = list(self.data)  # (items,) views
        self.idx = _permutation(self.n)  # a shuffled arange(n), intp
        self.arange = np.arange(self.n, dtype=np.intp)
        self.flat = self.data.reshape(-1)
        self.lengths = np.full(self.n, self.items, dtype=np.int64)


@functools.lru_cache(maxsize=4)
def _filled(n, items, dtype):
    out = np.random.default_rng(1234).random((n, items), dtype=np.dtype(dtype).type)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=4)
def _permutation(n):
    out = np.random.default_rng(5678).permutation(n).astype(np.intp)
    out.setflags(write=False)
    return out


def _fixed(value):
    return lambda: value


def _touched(shape, dtype):
    buf = np.empty(shape, dtype=dtype)
    buf.fill(0)
    return buf


_BUILDERS: dict[tuple[str, str], Callable] = {}


def _builder(op, *impls):
    def deco(fn):
        for impl in impls:
            _BUILDERS[(op, impl)] = fn
        return fn

    return deco


def make_case(op, impl, n, items, dtype="float32"):
    """Build the :class:`Case` of workload `op` for implementation `impl`.

    Parameters
    ----------
    op : str
        One of ``OPS``.  For ``growth`` `n` is the number of writes into a
        dynamic array; for ``bptt`` `n` and `items` are ignored (the demo's
        sizes, ``BPTT_SEQ_LEN`` steps of ``BPTT_HIDDEN`` units).
    impl : str
        One of ``IMPLS``.
    n : int
        Number of elements (>= 1).
    items : int
        Items per element (>= 1); elements are 1-D.
    dtype : str, optional
        ``"float32"`` or ``"float64"``.

    Returns
    -------
    Case

    Raises
    ------
    Unavailable
        If `impl` needs TensorFlow and it is not installed, or `impl` has no
        such workload (``raw_ops`` for ``bptt``).
    ValueError
        For an unknown `op`, `impl` or `dtype`, or a size below 1.

    Examples
    --------
    >>> from numba_ta.bench import make_case
    >>> c = make_case("write", "numpy_prealloc", n=3, items=2)
    >>> c.per_call, c.nbytes
    (3, 24)
    """
    if op not in OPS:
        raise ValueError(f"unknown workload {op!r}; choose from {', '.join(OPS)}")
    if impl not in IMPLS:
        raise ValueError(f"unknown implementation {impl!r}; choose from {', '.join(IMPLS)}")
    if np.dtype(dtype).name not in ("float32", "float64"):
        raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
    n, items = int(n), int(items)
    if n < 1 or items < 1:
        raise ValueError(f"n and items must be >= 1, got n={n}, items={items}")
    builder = _BUILDERS.get((op, impl))
    if builder is None:
        raise Unavailable(f"{impl} has no {op} workload")
    dtype = np.dtype(dtype).name
    if op == "bptt":
        d = None
        n, items = BPTT_SEQ_LEN, BPTT_HIDDEN
    else:
        d = _Data(n, items, dtype, rows_needed=min(n, GROWTH_ROWS) if op == "growth" else None)
    prepare, run_, keep = builder(d) if d is not None else builder(dtype)
    itemsize = np.dtype(dtype).itemsize
    return Case(
        op=op,
        impl=impl,
        n=n,
        items=items,
        dtype=dtype,
        prepare=prepare,
        run=run_,
        per_call=n if op in LOOP_OPS else 1,
        nbytes=n * items * itemsize,
        keep=keep,
    )


def time_case(case, repeat=5, warmup=1, warmup_time=0.0, max_warmup=20):
    """Time `case`: untimed warm-up calls, then `repeat` timed ones, each on a fresh ``prepare()``.

    Parameters
    ----------
    case : Case
    repeat : int, optional
        Timed calls (>= 0).
    warmup : int, optional
        Untimed calls first (JIT compilation or cache loading, page faults).
    warmup_time : float, optional
        Keep warming up until this many seconds have passed (at most
        `max_warmup` calls): the first calls of a parallel kernel in a process
        can be several times slower for a few hundred milliseconds.
    max_warmup : int, optional
        Cap on the warm-up calls that `warmup_time` adds.

    Returns
    -------
    list of float
        Seconds per call (garbage collection off while timing, as ``timeit``).
    """
    t_end = time.perf_counter() + warmup_time
    done = 0
    while done < int(warmup) or (time.perf_counter() < t_end and done < max(int(warmup), max_warmup)):
        case.run(case.prepare())
        done += 1
    times = []
    enabled = gc.isenabled()
    try:
        for _ in range(int(repeat)):
            state = case.prepare()
            gc.disable()
            t0 = time.perf_counter()
            case.run(state)
            t1 = time.perf_counter()
            if enabled:
                gc.enable()
            times.append(t1 - t0)
            del state
    finally:
        if enabled:
            gc.enable()
    return times


# --------------------------------------------------------------------------- numba_ta


def _ta(d, **kw):
    from . import TensorArray

    return TensorArray(d.dtype, size=d.n, element_shape=[d.items], **kw)


def _filled_ta(d):
    return _ta(d, clear_after_read=False).unstack(d.data)


def _grad_ta(d):
    fwd = _ta(d)
    g = fwd.grad(GRAD_SOURCE).scatter(d.arange, d.data)  # first write; later ones aggregate
    return fwd, g


@_builder("write", "numba_ta")
def _nt_write(d):
    rows = d.rows

    def run(ta):
        for i, r in enumerate(rows):
            ta = ta.write(i, r)
        return ta

    return (lambda: _ta(d)), run, []


@_builder("growth", "numba_ta")
def _nt_growth(d):
    from . import TensorArray

    rows, n, mask = d.rows, d.n, len(d.rows) - 1

    def prepare():
        return TensorArray(d.dtype, size=0, dynamic_size=True, element_shape=[d.items])

    def run(ta):
        for i in range(n):
            ta = ta.write(i, rows[i & mask])
        return ta

    return prepare, run, []


@_builder("read", "numba_ta")
def _nt_read(d):
    n = d.n

    def run(ta):
        for i in range(n):
            ta.read(i)

    return _fixed(_filled_ta(d)), run, []


@_builder("gather", "numba_ta")
def _nt_gather(d):
    idx = d.idx
    return _fixed(_filled_ta(d)), (lambda ta: ta.gather(idx)), []


@_builder("stack", "numba_ta")
def _nt_stack(d):
    return _fixed(_filled_ta(d)), (lambda ta: ta.stack()), []


@_builder("concat", "numba_ta")
def _nt_concat(d):
    return _fixed(_filled_ta(d)), (lambda ta: ta.concat()), []


@_builder("scatter", "numba_ta")
def _nt_scatter(d):
    idx, data = d.idx, d.data
    return (lambda: _ta(d)), (lambda ta: ta.scatter(idx, data)), []


@_builder("unstack", "numba_ta")
def _nt_unstack(d):
    data = d.data
    return (lambda: _ta(d)), (lambda ta: ta.unstack(data)), []


@_builder("split", "numba_ta")
def _nt_split(d):
    flat, lengths = d.flat, d.lengths
    return (lambda: _ta(d)), (lambda ta: ta.split(flat, lengths)), []


@_builder("accumulate", "numba_ta")
def _nt_accumulate(d):
    fwd, g = _grad_ta(d)
    ar, data = d.arange, d.data
    return _fixed(g), (lambda g: g.scatter(ar, data)), [fwd]


@_builder("accumulate_write", "numba_ta")
def _nt_accumulate_write(d):
    fwd, g = _grad_ta(d)
    rows = d.rows

    def run(g):
        for i, r in enumerate(rows):
            g.write(i, r)

    return _fixed(g), run, [fwd]


@_builder("grad", "numba_ta")
def _nt_grad(d):
    return (lambda: _ta(d).unstack(d.data)), (lambda fwd: fwd.grad(GRAD_SOURCE)), []


# --------------------------------------------------------------------------- raw_ops


def _raw_new(d, **kw):
    from . import raw_ops

    return raw_ops.TensorArrayV3(size=d.n, dtype=d.dtype, element_shape=[d.items], **kw)


def _raw_filled(d):
    from . import raw_ops

    h, f = _raw_new(d, clear_after_read=False)
    f = raw_ops.TensorArrayScatterV3(handle=h, indices=d.arange, value=d.data, flow_in=f)
    return h, f


def _raw_grad(d):
    from . import raw_ops

    h, f = _raw_new(d)
    g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source=GRAD_SOURCE)
    gf = raw_ops.TensorArrayScatterV3(handle=g, indices=d.arange, value=d.data, flow_in=gf)
    return h, g, gf


@_builder("write", "raw_ops")
def _raw_write(d):
    from .raw_ops import TensorArrayWriteV3

    rows = d.rows

    def run(hf):
        h, f = hf
        for i, r in enumerate(rows):
            f = TensorArrayWriteV3(handle=h, index=i, value=r, flow_in=f)
        return f

    return (lambda: _raw_new(d)), run, []


@_builder("growth", "raw_ops")
def _raw_growth(d):
    from .raw_ops import TensorArrayV3, TensorArrayWriteV3

    rows, n, mask = d.rows, d.n, len(d.rows) - 1

    def prepare():
        return TensorArrayV3(size=0, dtype=d.dtype, element_shape=[d.items], dynamic_size=True)

    def run(hf):
        h, f = hf
        for i in range(n):
            f = TensorArrayWriteV3(handle=h, index=i, value=rows[i & mask], flow_in=f)
        return f

    return prepare, run, []


@_builder("read", "raw_ops")
def _raw_read(d):
    from .raw_ops import TensorArrayReadV3

    n, dt = d.n, d.dtype

    def run(hf):
        h, f = hf
        for i in range(n):
            TensorArrayReadV3(handle=h, index=i, flow_in=f, dtype=dt)

    return _fixed(_raw_filled(d)), run, []


@_builder("gather", "raw_ops")
def _raw_gather(d):
    from .raw_ops import TensorArrayGatherV3

    idx, dt = d.idx, d.dtype
    return (
        _fixed(_raw_filled(d)),
        (lambda hf: TensorArrayGatherV3(handle=hf[0], indices=idx, flow_in=hf[1], dtype=dt)),
        [],
    )


@_builder("stack", "raw_ops")
def _raw_stack(d):
    from .raw_ops import TensorArrayGatherV3

    ar, dt, es = d.arange, d.dtype, [d.items]
    return (
        _fixed(_raw_filled(d)),
        (lambda hf: TensorArrayGatherV3(handle=hf[0], indices=ar, flow_in=hf[1], dtype=dt, element_shape=es)),
        [],
    )


@_builder("concat", "raw_ops")
def _raw_concat(d):
    from .raw_ops import TensorArrayConcatV3

    dt = d.dtype
    return (_fixed(_raw_filled(d)), (lambda hf: TensorArrayConcatV3(handle=hf[0], flow_in=hf[1], dtype=dt)), [])


@_builder("scatter", "raw_ops")
def _raw_scatter(d):
    from .raw_ops import TensorArrayScatterV3

    idx, data = d.idx, d.data
    return (
        (lambda: _raw_new(d)),
        (lambda hf: TensorArrayScatterV3(handle=hf[0], indices=idx, value=data, flow_in=hf[1])),
        [],
    )


@_builder("unstack", "raw_ops")
def _raw_unstack(d):
    from .raw_ops import TensorArrayScatterV3

    ar, data = d.arange, d.data
    return (
        (lambda: _raw_new(d)),
        (lambda hf: TensorArrayScatterV3(handle=hf[0], indices=ar, value=data, flow_in=hf[1])),
        [],
    )


@_builder("split", "raw_ops")
def _raw_split(d):
    from .raw_ops import TensorArraySplitV3

    flat, lengths = d.flat, d.lengths
    return (
        (lambda: _raw_new(d)),
        (lambda hf: TensorArraySplitV3(handle=hf[0], value=flat, lengths=lengths, flow_in=hf[1])),
        [],
    )


@_builder("accumulate", "raw_ops")
def _raw_accumulate(d):
    from .raw_ops import TensorArrayScatterV3

    h, g, gf = _raw_grad(d)
    ar, data = d.arange, d.data
    return (
        _fixed((g, gf)),
        (lambda gg: TensorArrayScatterV3(handle=gg[0], indices=ar, value=data, flow_in=gg[1])),
        [h],
    )


@_builder("accumulate_write", "raw_ops")
def _raw_accumulate_write(d):
    from .raw_ops import TensorArrayWriteV3

    h, g, gf = _raw_grad(d)
    rows = d.rows

    def run(gg):
        g, f = gg
        for i, r in enumerate(rows):
            f = TensorArrayWriteV3(handle=g, index=i, value=r, flow_in=f)

    return _fixed((g, gf)), run, [h]


@_builder("grad", "raw_ops")
def _raw_grad_create(d):
    from .raw_ops import TensorArrayGradV3, TensorArrayScatterV3

    def prepare():
        h, f = _raw_new(d)
        return h, TensorArrayScatterV3(handle=h, indices=d.arange, value=d.data, flow_in=f)

    return prepare, (lambda hf: TensorArrayGradV3(handle=hf[0], flow_in=hf[1], source=GRAD_SOURCE)), []


# --------------------------------------------------------------------------- numpy baselines


@_builder("write", "numpy_prealloc")
@_builder("growth", "numpy_prealloc")
def _np_write(d):
    buf = _touched((d.n, d.items), d.dtype)
    rows, n, mask = d.rows, d.n, len(d.rows) - 1

    def run(buf):
        for i in range(n):
            buf[i] = rows[i & mask]

    return _fixed(buf), run, []


@_builder("read", "numpy_prealloc")
def _np_read(d):
    buf = d.data.copy()
    n = d.n

    def run(buf):
        for i in range(n):
            buf[i].copy()

    return _fixed(buf), run, []


@_builder("gather", "numpy_prealloc")
def _np_gather(d):
    buf, out, idx = d.data.copy(), _touched((d.n, d.items), d.dtype), d.idx
    return _fixed(buf), (lambda buf: np.take(buf, idx, axis=0, out=out)), []


@_builder("stack", "numpy_prealloc")
def _np_stack(d):
    buf, out = d.data.copy(), _touched((d.n, d.items), d.dtype)

    def run(buf):
        np.copyto(out, buf)
        return out

    return _fixed(buf), run, []


@_builder("concat", "numpy_prealloc")
def _np_concat(d):
    buf, out = d.data.copy(), _touched(d.n * d.items, d.dtype)

    def run(buf):
        np.copyto(out, buf.reshape(-1))
        return out

    return _fixed(buf), run, []


@_builder("scatter", "numpy_prealloc")
def _np_scatter(d):
    idx, data = d.idx, d.data

    def run(buf):
        buf[idx] = data

    return _fixed(_touched((d.n, d.items), d.dtype)), run, []


@_builder("unstack", "numpy_prealloc")
def _np_unstack(d):
    data = d.data
    return _fixed(_touched((d.n, d.items), d.dtype)), (lambda buf: np.copyto(buf, data)), []


@_builder("split", "numpy_prealloc")
def _np_split(d):
    flat = d.flat
    return _fixed(_touched(d.n * d.items, d.dtype)), (lambda buf: np.copyto(buf, flat)), []


@_builder("accumulate", "numpy_prealloc")
def _np_accumulate(d):
    data = d.data
    return _fixed(d.data.copy()), (lambda buf: np.add(buf, data, out=buf)), []


@_builder("accumulate_write", "numpy_prealloc")
def _np_accumulate_write(d):
    rows = d.rows

    def run(buf):
        for i, r in enumerate(rows):
            buf[i] += r

    return _fixed(d.data.copy()), run, []


@_builder("grad", "numpy_prealloc")
def _np_grad(d):
    shape, dt = (d.n, d.items), d.dtype
    return _fixed(None), (lambda _: np.zeros(shape, dtype=dt)), []


@_builder("write", "numpy_list")
@_builder("growth", "numpy_list")
def _list_write(d):
    rows, n, mask = d.rows, d.n, len(d.rows) - 1

    def run(lst):
        for i in range(n):
            lst.append(rows[i & mask])
        return lst

    return list, run, []


@_builder("read", "numpy_list")
def _list_read(d):
    n = d.n

    def run(lst):
        for i in range(n):
            lst[i]

    return _fixed(list(d.data.copy())), run, []


@_builder("gather", "numpy_list")
def _list_gather(d):
    idx = d.idx.tolist()
    return _fixed(list(d.data.copy())), (lambda lst: np.stack([lst[i] for i in idx])), []


@_builder("stack", "numpy_list")
def _list_stack(d):
    return _fixed(list(d.data.copy())), np.stack, []


@_builder("concat", "numpy_list")
def _list_concat(d):
    return _fixed(list(d.data.copy())), np.concatenate, []


@_builder("scatter", "numpy_list")
def _list_scatter(d):
    pairs = list(zip(d.idx.tolist(), d.rows, strict=True))
    n = d.n

    def run(_):
        lst = [None] * n
        for i, r in pairs:
            lst[i] = r
        return lst

    return _fixed(None), run, []


@_builder("unstack", "numpy_list")
def _list_unstack(d):
    data = d.data
    return _fixed(None), (lambda _: list(data)), []


@_builder("split", "numpy_list")
def _list_split(d):
    flat, n = d.flat, d.n
    return _fixed(None), (lambda _: np.split(flat, n)), []


@_builder("accumulate", "numpy_list")
@_builder("accumulate_write", "numpy_list")
def _list_accumulate(d):
    pairs = list(zip(list(d.data.copy()), d.rows, strict=True))

    def run(pairs):
        for a, r in pairs:
            a += r

    return _fixed(pairs), run, []


@_builder("grad", "numpy_list")
def _list_grad(d):
    n, items, dt = d.n, d.items, d.dtype
    return _fixed(None), (lambda _: [np.zeros(items, dtype=dt) for _ in range(n)]), []


# --------------------------------------------------------------------------- TensorFlow baselines


@functools.lru_cache(maxsize=1)
def _tf_module():
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    try:
        import tensorflow as tf
    except ImportError:
        return None
    return tf


def _tf():
    tf = _tf_module()
    if tf is None:
        raise Unavailable("tensorflow is not installed")
    return tf


def tf_available():
    """Return whether TensorFlow can be imported (importing it, once, if so).

    Returns
    -------
    bool
    """
    return _tf_module() is not None


def _used(ta):
    """Silence tf_should_use's 'Object was never used' log for a TensorArray we drop on purpose."""
    mark = getattr(ta, "mark_used", None)
    if mark is not None:
        mark()
    return ta


class _TFData:
    def __init__(self, tf, d):
        self.tf = tf
        self.d = d
        self.dt = tf.as_dtype(d.dtype)
        self.x = tf.constant(d.data)
        self.idx = tf.constant(d.idx.astype(np.int32))
        self.arange = tf.constant(d.arange.astype(np.int32))
        self.flat = tf.reshape(self.x, [-1])
        self.lengths = tf.constant(d.lengths)
        self.n = d.n
        self.items = d.items

    def rows(self):
        return self.tf.unstack(self.x)

    def ta(self, **kw):
        kw.setdefault("size", self.n)
        kw.setdefault("element_shape", [self.items])
        return self.tf.TensorArray(self.dt, **kw)


def _tf_fn(tf, fn):
    return tf.function(fn, autograph=True, reduce_retracing=True)


@_builder("write", "tf_eager")
def _tfe_write(d):
    t = _TFData(_tf(), d)
    rows = t.rows()

    def run(ta):
        for i, r in enumerate(rows):
            ta = ta.write(i, r)
        return _used(ta)

    return (lambda: t.ta()), run, [t]


@_builder("growth", "tf_eager")
def _tfe_growth(d):
    t = _TFData(_tf(), d)
    rows, n, mask = t.rows(), d.n, len(d.rows) - 1

    def run(ta):
        for i in range(n):
            ta = ta.write(i, rows[i & mask])
        return _used(ta)

    return (lambda: t.ta(size=0, dynamic_size=True)), run, [t]


@_builder("read", "tf_eager")
def _tfe_read(d):
    t = _TFData(_tf(), d)
    n = d.n

    def run(ta):
        for i in range(n):
            ta.read(i)

    return _fixed(_used(t.ta(clear_after_read=False).unstack(t.x))), run, [t]


@_builder("gather", "tf_eager")
def _tfe_gather(d):
    t = _TFData(_tf(), d)
    return _fixed(_used(t.ta().unstack(t.x))), (lambda ta: ta.gather(t.idx)), [t]


@_builder("stack", "tf_eager")
def _tfe_stack(d):
    t = _TFData(_tf(), d)
    return _fixed(_used(t.ta().unstack(t.x))), (lambda ta: ta.stack()), [t]


@_builder("concat", "tf_eager")
def _tfe_concat(d):
    t = _TFData(_tf(), d)
    return _fixed(_used(t.ta().unstack(t.x))), (lambda ta: ta.concat()), [t]


@_builder("scatter", "tf_eager")
def _tfe_scatter(d):
    t = _TFData(_tf(), d)
    return (lambda: t.ta()), (lambda ta: _used(ta.scatter(t.idx, t.x))), [t]


@_builder("unstack", "tf_eager")
def _tfe_unstack(d):
    t = _TFData(_tf(), d)
    return (lambda: t.ta()), (lambda ta: _used(ta.unstack(t.x))), [t]


@_builder("split", "tf_eager")
def _tfe_split(d):
    t = _TFData(_tf(), d)
    return (lambda: t.ta()), (lambda ta: _used(ta.split(t.flat, t.lengths))), [t]


def _tf_raw_grad(t):
    raw = t.tf.raw_ops
    h, f = raw.TensorArrayV3(size=t.n, dtype=t.dt, element_shape=[t.items])
    g, gf = raw.TensorArrayGradV3(handle=h, flow_in=f, source=GRAD_SOURCE)
    gf = raw.TensorArrayScatterV3(handle=g, indices=t.arange, value=t.x, flow_in=gf)
    return h, g, gf


@_builder("accumulate", "tf_eager")
def _tfe_accumulate(d):
    t = _TFData(_tf(), d)
    scatter = t.tf.raw_ops.TensorArrayScatterV3
    h, g, gf = _tf_raw_grad(t)
    return _fixed((g, gf)), (lambda gg: scatter(handle=gg[0], indices=t.arange, value=t.x, flow_in=gg[1])), [t, h]


@_builder("accumulate_write", "tf_eager")
def _tfe_accumulate_write(d):
    t = _TFData(_tf(), d)
    write = t.tf.raw_ops.TensorArrayWriteV3
    h, g, gf = _tf_raw_grad(t)
    rows = t.rows()

    def run(gg):
        g, f = gg
        for i, r in enumerate(rows):
            f = write(handle=g, index=i, value=r, flow_in=f)

    return _fixed((g, gf)), run, [t, h]


@_builder("grad", "tf_eager")
def _tfe_grad(d):
    t = _TFData(_tf(), d)
    raw = t.tf.raw_ops

    def prepare():
        h, f = raw.TensorArrayV3(size=t.n, dtype=t.dt, element_shape=[t.items])
        return h, raw.TensorArrayScatterV3(handle=h, indices=t.arange, value=t.x, flow_in=f)

    return prepare, (lambda hf: raw.TensorArrayGradV3(handle=hf[0], flow_in=hf[1], source=GRAD_SOURCE)), [t]


def _tf_function_case(d, body, args_of):
    """A tf_function case: ``body(t, *args)`` traced once; ``args_of(t)`` gives the tensors passed."""
    tf = _tf()
    t = _TFData(tf, d)
    fn = _tf_fn(tf, functools.partial(body, t))
    args = args_of(t)
    return _fixed(args), (lambda a: fn(*a)), [t, fn]


@_builder("write", "tf_function")
def _tff_write(d):
    def body(t, x):
        ta = t.ta()
        for i in t.tf.range(t.n):
            ta = ta.write(i, x[i])
        return ta.read(t.n - 1)

    return _tf_function_case(d, body, lambda t: (t.x,))


@_builder("growth", "tf_function")
def _tff_growth(d):
    mask = len(d.rows) - 1
    n = d.n

    def body(t, x):
        ta = t.ta(size=0, dynamic_size=True)
        for i in t.tf.range(n):
            ta = ta.write(i, x[t.tf.bitwise.bitwise_and(i, mask)])
        return ta.read(n - 1)

    return _tf_function_case(d, body, lambda t: (t.x,))


@_builder("read", "tf_function")
def _tff_read(d):
    def body(t, x):
        ta = t.ta(clear_after_read=False).unstack(x)
        last = t.tf.zeros([t.items], t.dt)
        for i in t.tf.range(t.n):
            last = ta.read(i)
        return last

    return _tf_function_case(d, body, lambda t: (t.x,))


@_builder("gather", "tf_function")
def _tff_gather(d):
    return _tf_function_case(d, lambda t, x, idx: t.ta().unstack(x).gather(idx), lambda t: (t.x, t.idx))


@_builder("stack", "tf_function")
def _tff_stack(d):
    return _tf_function_case(d, lambda t, x: t.ta().unstack(x).stack(), lambda t: (t.x,))


@_builder("concat", "tf_function")
def _tff_concat(d):
    return _tf_function_case(d, lambda t, x: t.ta().unstack(x).concat(), lambda t: (t.x,))


@_builder("scatter", "tf_function")
def _tff_scatter(d):
    return _tf_function_case(d, lambda t, x, idx: t.ta().scatter(idx, x).read(0), lambda t: (t.x, t.idx))


@_builder("unstack", "tf_function")
def _tff_unstack(d):
    return _tf_function_case(d, lambda t, x: t.ta().unstack(x).read(0), lambda t: (t.x,))


@_builder("split", "tf_function")
def _tff_split(d):
    return _tf_function_case(
        d, lambda t, flat, lengths: t.ta().split(flat, lengths).read(0), lambda t: (t.flat, t.lengths)
    )


def _tf_raw_grad_in_graph(t, x, ar):
    raw = t.tf.raw_ops
    h, f = raw.TensorArrayV3(size=t.n, dtype=t.dt, element_shape=[t.items])
    g, gf = raw.TensorArrayGradV3(handle=h, flow_in=f, source=GRAD_SOURCE)
    gf = raw.TensorArrayScatterV3(handle=g, indices=ar, value=x, flow_in=gf)
    return g, gf


@_builder("accumulate", "tf_function")
def _tff_accumulate(d):
    def body(t, x, ar):
        g, gf = _tf_raw_grad_in_graph(t, x, ar)
        return t.tf.raw_ops.TensorArrayScatterV3(handle=g, indices=ar, value=x, flow_in=gf)

    return _tf_function_case(d, body, lambda t: (t.x, t.arange))


@_builder("accumulate_write", "tf_function")
def _tff_accumulate_write(d):
    def body(t, x, ar):
        g, gf = _tf_raw_grad_in_graph(t, x, ar)
        for i in t.tf.range(t.n):
            gf = t.tf.raw_ops.TensorArrayWriteV3(handle=g, index=i, value=x[i], flow_in=gf)
        return gf

    return _tf_function_case(d, body, lambda t: (t.x, t.arange))


@_builder("grad", "tf_function")
def _tff_grad(d):
    def body(t, x, ar):
        raw = t.tf.raw_ops
        h, f = raw.TensorArrayV3(size=t.n, dtype=t.dt, element_shape=[t.items])
        f = raw.TensorArrayScatterV3(handle=h, indices=ar, value=x, flow_in=f)
        return raw.TensorArrayGradV3(handle=h, flow_in=f, source=GRAD_SOURCE)[1]

    return _tf_function_case(d, body, lambda t: (t.x, t.arange))


# --------------------------------------------------------------------------- BPTT of the demo RNN


@functools.lru_cache(maxsize=2)
def _bptt_batch(dtype):
    """The demo's first training chunk: params, inputs, targets, h0 (all read-only)."""
    from .examples import char_rnn

    text = char_rnn.zen_of_python()
    vocab = char_rnn.Vocab(text)
    ids = vocab.encode(text[: BPTT_SEQ_LEN + 1])
    params = char_rnn.init_params(len(vocab), BPTT_HIDDEN, seed=0, dtype=dtype)
    for p in params.values():
        p.setflags(write=False)
    h0 = np.zeros(BPTT_HIDDEN, dtype=dtype)
    return params, ids[:-1], ids[1:], h0


def numpy_bptt(params, inputs, targets, h0, use_list=False):
    """Loss and gradients of the demo RNN in plain numpy: the baseline of the ``bptt`` workload.

    The same model and arithmetic as
    :func:`numba_ta.examples.char_rnn.loss_and_grads`, with the hidden states
    in a preallocated ``(T, H)`` buffer (or, with `use_list`, a list that is
    ``np.stack``-ed) instead of a TensorArray.

    Parameters
    ----------
    params : dict of str to ndarray
        As made by :func:`numba_ta.examples.char_rnn.init_params`.
    inputs, targets : (T,) ndarray of int
    h0 : (H,) ndarray
    use_list : bool, optional
        Keep the hidden states in a Python list.

    Returns
    -------
    loss : float
    grads : dict of str to ndarray

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta.examples.char_rnn import init_params, loss_and_grads
    >>> p = init_params(4, 3, dtype=np.float64)
    >>> loss, grads = numpy_bptt(p, np.array([0, 1, 2]), np.array([1, 2, 3]), np.zeros(3))
    >>> ref = loss_and_grads(p, [0, 1, 2], [1, 2, 3])
    >>> bool(np.isclose(loss, ref.loss)), bool(np.allclose(grads["Whh"], ref.grads["Whh"]))
    (True, True)
    """
    Wxh, Whh, bh, Why, by = (params[k] for k in ("Wxh", "Whh", "bh", "Why", "by"))
    T, H = len(inputs), Whh.shape[0]
    xw = Wxh.T[inputs] + bh
    h = h0
    if use_list:
        hl = []
        for t in range(T):
            h = np.tanh(xw[t] + Whh @ h)
            hl.append(h)
        hs = np.stack(hl)
    else:
        hs = np.empty((T, H), dtype=Whh.dtype)
        for t in range(T):
            hs[t] = np.tanh(xw[t] + Whh @ h)
            h = hs[t]
    logits = hs @ Why.T + by
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    probs = e / e.sum(axis=-1, keepdims=True)
    p = probs[np.arange(T), targets].astype(np.float64)
    loss = float(-np.mean(np.log(np.maximum(p, np.finfo(probs.dtype).tiny))))
    dlogits = probs.copy()
    dlogits[np.arange(T), targets] -= 1
    dlogits /= T
    dhs = dlogits @ Why
    dh_raw = np.empty_like(hs)
    carry = np.zeros(H, dtype=hs.dtype)
    for t in range(T - 1, -1, -1):
        dh_raw[t] = (1 - hs[t] * hs[t]) * (dhs[t] + carry)
        carry = Whh.T @ dh_raw[t]
    dWxh = np.zeros_like(Wxh)
    np.add.at(dWxh.T, inputs, dh_raw)
    h_prevs = np.concatenate([h0[None, :], hs[:-1]])
    grads = {
        "Wxh": dWxh,
        "Whh": dh_raw.T @ h_prevs,
        "bh": dh_raw.sum(axis=0),
        "Why": dlogits.T @ hs,
        "by": dlogits.sum(axis=0),
    }
    return loss, {k: np.asarray(v, dtype=Whh.dtype) for k, v in grads.items()}


def tf_bptt_step(tf, use_function=True):
    """The demo RNN's loss and gradients in TensorFlow: hidden states in a ``tf.TensorArray``.

    Forward loop over ``tf.range(T)`` writing every hidden state into a
    ``tf.TensorArray``, ``stack``, softmax cross-entropy, gradients by
    ``tf.GradientTape``.

    Parameters
    ----------
    tf : module
        The ``tensorflow`` module.
    use_function : bool, optional
        Wrap in ``tf.function`` (default); else run eagerly.

    Returns
    -------
    callable
        ``step(Wxh, Whh, bh, Why, by, inputs, targets, h0) -> (loss, [dWxh, dWhh, dbh, dWhy, dby])``.
    """

    def step(Wxh, Whh, bh, Why, by, inputs, targets, h0):
        params = [Wxh, Whh, bh, Why, by]
        T = tf.shape(inputs)[0]
        with tf.GradientTape() as tape:
            tape.watch(params)
            xw = tf.gather(tf.transpose(Wxh), inputs) + bh
            ta = tf.TensorArray(Wxh.dtype, size=T, element_shape=h0.shape)
            h = h0
            for t in tf.range(T):
                h = tf.tanh(xw[t] + tf.linalg.matvec(Whh, h))
                ta = ta.write(t, h)
            hs = ta.stack()
            logits = tf.matmul(hs, Why, transpose_b=True) + by
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=targets, logits=logits))
        return loss, tape.gradient(loss, params)

    return _tf_fn(tf, step) if use_function else step


def _bptt_case(dtype, fn):
    return _fixed(_bptt_batch(dtype)), (lambda b: fn(*b)), []


@_builder("bptt", "numba_ta")
def _nt_bptt(dtype):
    from .examples import char_rnn

    return _bptt_case(dtype, char_rnn.loss_and_grads)


@_builder("bptt", "numpy_prealloc")
def _np_bptt(dtype):
    return _bptt_case(dtype, numpy_bptt)


@_builder("bptt", "numpy_list")
def _list_bptt(dtype):
    return _bptt_case(dtype, functools.partial(numpy_bptt, use_list=True))


def _tf_bptt(dtype, use_function):
    tf = _tf()
    params, inputs, targets, h0 = _bptt_batch(dtype)
    args = [tf.constant(params[k]) for k in ("Wxh", "Whh", "bh", "Why", "by")]
    args += [tf.constant(inputs.astype(np.int32)), tf.constant(targets.astype(np.int32)), tf.constant(h0)]
    step = tf_bptt_step(tf, use_function)
    return _fixed(args), (lambda a: step(*a)), [step]


@_builder("bptt", "tf_eager")
def _tfe_bptt(dtype):
    return _tf_bptt(dtype, False)


@_builder("bptt", "tf_function")
def _tff_bptt(dtype):
    return _tf_bptt(dtype, True)


# --------------------------------------------------------------------------- cold import

_COLD_IMPORT_CODE = """\
import time
t0 = time.perf_counter()
import numpy as np
import numba_ta
ta = numba_ta.TensorArray(np.float32, size=2, element_shape=[64], clear_after_read=False)
ta = ta.write(0, np.ones(64, np.float32)).write(1, np.zeros(64, np.float32))
ta.read(0)
ta.stack()
print(time.perf_counter() - t0)
"""


def cold_import_seconds(repeat=3, python=None, env=None):
    """Time fresh processes doing ``import numba_ta`` plus a first write, read and stack.

    One untimed process first warms numba's on-disk cache.

    Parameters
    ----------
    repeat : int, optional
        Timed processes.
    python : str, optional
        Interpreter; ``sys.executable`` by default.
    env : dict, optional
        Environment of the processes; this process's by default.

    Returns
    -------
    wall : list of float
        Seconds from starting each process to its exit (interpreter start included).
    inside : list of float
        Seconds measured inside each process, from before ``import numpy`` to after ``stack()``.
    """
    python = python or sys.executable
    cmd = [python, "-c", _COLD_IMPORT_CODE]

    def once():
        t0 = time.perf_counter()
        out = subprocess.run(cmd, capture_output=True, text=True, env=env, check=True)
        return time.perf_counter() - t0, float(out.stdout.strip().splitlines()[-1])

    once()
    wall, inside = [], []
    for _ in range(int(repeat)):
        w, i = once()
        wall.append(w)
        inside.append(i)
    return wall, inside


# --------------------------------------------------------------------------- the numba-ta bench runner


#: Workloads of ``numba-ta bench``, in table order.
WORKLOADS = (
    "write",
    "read",
    "stack",
    "gather",
    "scatter",
    "unstack",
    "concat",
    "split",
    "accumulate",
    "growth",
    "bptt",
    "import",
)
BULK = ("stack", "gather", "scatter", "unstack", "concat", "split", "accumulate")


@dataclass
class Config:
    """Options of :func:`run` (the ``numba-ta bench`` options).

    Attributes
    ----------
    repeat : int
        Timed calls per case; the table shows their median.
    small_n : int
        Elements in the write and read loops.
    small_items : int
        Items per element in the loops and the growth workload (64: 256 bytes of float32).
    bulk_bytes : int
        Bytes of element data in the bulk workloads.
    element_bytes : int
        Bytes per element in the bulk workloads.
    growth_ns : tuple of int
        Write counts of the growth workload; the per-write cost at the largest
        is compared with the smallest.
    dtype : str
        ``"float32"`` or ``"float64"``.
    workloads : tuple of str
        Subset of ``WORKLOADS``.
    impls : tuple of str
        Subset of ``IMPLS``.
    use_tf : bool
        Run the TensorFlow cases if TensorFlow is installed.
    warmup_time : float
        Seconds of untimed warm-up calls per case (at least one call).
    """

    repeat: int = 5
    small_n: int = 10_000
    small_items: int = 64
    bulk_bytes: int = 64 << 20
    element_bytes: int = 4 << 10
    growth_ns: tuple = (10_000, 100_000)
    dtype: str = "float32"
    workloads: tuple = WORKLOADS
    impls: tuple = IMPLS
    use_tf: bool = True
    warmup_time: float = 0.5

    def bulk_shape(self):
        """``(n, items)`` of the bulk workloads."""
        itemsize = np.dtype(self.dtype).itemsize
        items = max(1, self.element_bytes // itemsize)
        n = max(1, self.bulk_bytes // (items * itemsize))
        return n, items


@dataclass
class Result:
    """One measured (workload, implementation) pair.

    Attributes
    ----------
    workload : str
        Table row name (``"growth"`` rows are ``"growth 10000"`` ...).
    op : str
        The ``OPS`` workload (``"import"`` for the cold import).
    impl : str
    n, items : int
    dtype : str
    nbytes : int
        Bytes of element data per call.
    per_call : int
        Element operations per call.
    times : list of float
        Seconds per call, one per timed call.
    status : str
        ``"ok"``, ``"n/a"`` (unavailable here) or ``"error"``.
    message : str
        Why it is n/a or failed.
    """

    workload: str
    op: str
    impl: str
    n: int
    items: int
    dtype: str
    nbytes: int = 0
    per_call: int = 1
    times: list = field(default_factory=list)
    status: str = "ok"
    message: str = ""

    @property
    def median(self):
        """float or None: median seconds per call."""
        return statistics.median(self.times) if self.times else None

    @property
    def per_op(self):
        """float or None: median seconds per element operation (loops) or per call."""
        m = self.median
        return None if m is None else m / self.per_call

    def as_dict(self):
        """The result as a JSON-ready dict."""
        return {
            "workload": self.workload,
            "op": self.op,
            "impl": self.impl,
            "n": self.n,
            "items": self.items,
            "dtype": self.dtype,
            "nbytes": self.nbytes,
            "per_call": self.per_call,
            "unit": "element" if self.per_call > 1 else "call",
            "times": self.times,
            "median": self.median,
            "per_op": self.per_op,
            "status": self.status,
            "message": self.message,
        }


@dataclass
class Report:
    """Everything :func:`run` measured.

    Attributes
    ----------
    config : Config
    meta : dict
        Versions, threads, machine.
    results : list of Result
    copyto : dict
        ``{"seconds": s, "nbytes": b}``: ``np.copyto`` of the bulk bytes into a
        preallocated buffer, the bandwidth reference of the bulk targets.
    """

    config: Config
    meta: dict
    results: list
    copyto: dict = field(default_factory=dict)

    def get(self, workload, impl):
        """The :class:`Result` of (`workload`, `impl`), or None."""
        for r in self.results:
            if r.workload == workload and r.impl == impl:
                return r
        return None

    def rows(self):
        """Workload names in table order."""
        seen = []
        for r in self.results:
            if r.workload not in seen:
                seen.append(r.workload)
        return seen

    def ratio(self, workload, impl, base):
        """``per_op(impl) / per_op(base)`` for `workload`, or None."""
        a, b = self.get(workload, impl), self.get(workload, base)
        if a is None or b is None or a.per_op is None or b.per_op is None or b.per_op <= 0:
            return None
        return a.per_op / b.per_op


def _meta(cfg):
    import numba

    from . import __version__

    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "not started"
    meta = {
        "numba_ta": __version__,
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "threads": numba.get_num_threads(),
        "threading_layer": layer,
        "machine": platform.machine(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "date": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "env": {k: os.environ.get(k) for k in ("NUMBA_NUM_THREADS", "OMP_WAIT_POLICY", "NUMBA_THREADING_LAYER")},
    }
    try:
        from . import _config

        meta["parallel_threshold"] = int(_config.PARALLEL_MIN_ELEMENTS)
    except (ImportError, AttributeError):
        pass
    tf = _tf_module() if cfg.use_tf and any(i.startswith("tf") for i in cfg.impls) else None
    meta["tensorflow"] = tf.__version__ if tf is not None else None
    return meta


def _plan(cfg):
    """The (workload, op, impl, n, items) cases to run, in order."""
    bulk_n, bulk_items = cfg.bulk_shape()
    plan = []
    for w in cfg.workloads:
        if w == "import":
            if "numba_ta" in cfg.impls:
                plan.append(("import", "import", "numba_ta", 1, 64))
            continue
        if w == "growth":
            sizes = [(f"growth {n}", n, cfg.small_items) for n in cfg.growth_ns]
        elif w in ("write", "read"):
            sizes = [(w, cfg.small_n, cfg.small_items)]
        elif w == "bptt":
            sizes = [(w, BPTT_SEQ_LEN, BPTT_HIDDEN)]
        else:
            sizes = [(w, bulk_n, bulk_items)]
        for name, n, items in sizes:
            for impl in cfg.impls:
                if (w, impl) not in _BUILDERS:
                    continue
                plan.append((name, w, impl, n, items))
    return plan


class _Progress:
    """A tqdm bar on an interactive stderr when tqdm is installed; otherwise one line per case on stderr."""

    def __init__(self, total, stream=None, enabled=True):
        self.total, self.done = total, 0
        self.stream = stream or sys.stderr
        self.enabled = enabled
        self.bar = None
        if not enabled:
            return
        try:
            if not self.stream.isatty():
                raise ImportError
            from tqdm import tqdm
        except (ImportError, AttributeError, ValueError):
            return
        self.bar = tqdm(total=total, desc="numba-ta bench", unit="case", file=self.stream, leave=False)

    def start(self, label):
        if self.bar is not None:
            self.bar.set_postfix_str(label, refresh=True)

    def finish(self, label, text):
        self.done += 1
        if not self.enabled:
            return
        if self.bar is not None:
            self.bar.update(1)
        else:
            width = len(str(self.total))
            print(f"[{self.done:>{width}}/{self.total}] {label:<34} {text}", file=self.stream, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _fmt_time(s):
    if s is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6), ("ns", 1e-9)):
        if s >= scale or unit == "ns":
            v = s / scale
            return f"{v:.3g} {unit}" if v < 100 else f"{v:.0f} {unit}"
    return f"{s:g} s"  # pragma: no cover


def _measure_copyto(nbytes, dtype, repeat):
    itemsize = np.dtype(dtype).itemsize
    src = _filled(max(1, nbytes // itemsize), 1, np.dtype(dtype).name).reshape(-1)
    dst = _touched(src.shape, dtype)
    np.copyto(dst, src)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        times.append(time.perf_counter() - t0)
    return {"seconds": statistics.median(times), "nbytes": int(src.nbytes), "times": times}


def run(cfg=None, progress=True, stream=None):
    """Measure every workload of `cfg` for every implementation available here.

    Parameters
    ----------
    cfg : Config, optional
    progress : bool, optional
        Show progress on `stream` (a tqdm bar if tqdm is installed and the
        stream is a terminal, else one line per case).
    stream : file, optional
        Where progress goes; ``sys.stderr`` by default.

    Returns
    -------
    Report
    """
    cfg = cfg or Config()
    load = _loadavg()
    if not cfg.use_tf:
        cfg.impls = tuple(i for i in cfg.impls if not i.startswith("tf"))
    plan = _plan(cfg)
    # TensorFlow cases last: TF's thread pools may still spin after its ops and would slow what follows
    order = sorted(range(len(plan)), key=lambda k: (plan[k][2].startswith("tf"), k))
    results = [None] * len(plan)
    copyto = None
    prog = _Progress(len(plan), stream=stream, enabled=progress)
    try:
        for k in order:
            name, op, impl, n, items = plan[k]
            if copyto is None and impl.startswith("tf"):
                copyto = _copyto_reference(cfg)  # before TensorFlow's thread pools can slow it down
            label = f"{name}/{IMPL_LABELS[impl]}"
            prog.start(label)
            res = Result(name, op, impl, n, items, cfg.dtype)
            try:
                if op == "import":
                    wall, _inside = cold_import_seconds(repeat=cfg.repeat)
                    res.times = wall
                else:
                    case = make_case(op, impl, n, items, cfg.dtype)
                    res.nbytes, res.per_call = case.nbytes, case.per_call
                    res.n, res.items = case.n, case.items
                    once = time_case(case, repeat=1, warmup=1)[0]
                    repeat = cfg.repeat if once < 2.0 else min(cfg.repeat, 3)
                    # cheap cases warm up for warmup_time more and are timed afresh; slow ones keep `once`
                    if once < cfg.warmup_time / 2:
                        res.times = time_case(case, repeat=repeat, warmup=0, warmup_time=cfg.warmup_time)
                    else:
                        res.times = [once] + time_case(case, repeat=repeat - 1, warmup=0)
                    del case
                text = f"{_fmt_time(res.per_op)} per {'element' if res.per_call > 1 else 'call'}"
            except Unavailable as e:
                res.status, res.message, text = "n/a", str(e), f"n/a ({e})"
            except Exception as e:  # a broken case must not hide the others
                res.status, res.message = "error", f"{type(e).__name__}: {e}"
                text = f"ERROR {res.message}"
            results[k] = res
            prog.finish(label, text)
    finally:
        prog.close()
    report = Report(cfg, _meta(cfg), [r for r in results if r is not None])
    report.meta["loadavg_at_start"] = load
    report.copyto = copyto or _copyto_reference(cfg)
    return report


def _copyto_reference(cfg):
    """The ``np.copyto`` timing the bulk targets compare with (None without bulk workloads)."""
    if not any(w in BULK for w in cfg.workloads):
        return None
    bulk_n, bulk_items = cfg.bulk_shape()
    return _measure_copyto(bulk_n * bulk_items * np.dtype(cfg.dtype).itemsize, cfg.dtype, cfg.repeat)


def _loadavg():
    try:
        return list(os.getloadavg())
    except (AttributeError, OSError):  # pragma: no cover - not on this platform
        return None


#: 1-minute load average above which the table warns that other processes skew the timings.
BUSY_LOAD = 0.75


def _size_text(r):
    dt = {"float32": "f32", "float64": "f64"}.get(r.dtype, r.dtype)
    if r.op == "import":
        return "fresh process"
    if r.op == "bptt":
        return f"T={r.n} H={r.items} {dt}"
    if r.op in LOOP_OPS:
        return f"{r.n} x {r.items} {dt}"
    return f"{_fmt_bytes(r.nbytes)} ({r.n} x {r.items} {dt})"


def _fmt_bytes(b):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if b >= scale:
            v = b / scale
            return f"{v:.3g} {unit}"
    return f"{b} B"


def _fmt_ratio(x):
    if x is None:
        return "-"
    return f"{x:.2f}x" if x < 10 else f"{x:.0f}x" if x >= 100 else f"{x:.1f}x"


def format_table(report):
    """The ``numba-ta bench`` table: median times and ratios, then the issue's targets.

    Parameters
    ----------
    report : Report

    Returns
    -------
    str
    """
    impls = [i for i in report.config.impls if any(r.impl == i for r in report.results)]
    m = report.meta
    tfv = m.get("tensorflow")
    lines = [
        f"numba-ta bench: median of {report.config.repeat} runs per cell; numba_ta {m['numba_ta']}, "
        f"numpy {m['numpy']}, numba {m['numba']} "
        f"(threading layer {m['threading_layer']}, {m['threads']} numba threads), "
        f"tensorflow {tfv if tfv else 'not used'}",
        "times are per element for loops and growth, per call otherwise; "
        "ratio = numba_ta time / other time (below 1: numba_ta is faster)",
    ]
    load = m.get("loadavg_at_start")
    if load and load[0] >= BUSY_LOAD:
        lines.append(
            f"warning: load average {load[0]:.2f} when the run started: other processes slow the parallel "
            "kernels (one thread per core) and skew these timings"
        )
    lines.append("")
    header = ["workload", "size", "per"] + [IMPL_LABELS[i] for i in impls]
    ratio_cols = [("numpy_prealloc", "vs prealloc")]
    if "tf_eager" in impls:
        ratio_cols.append(("tf_eager", "vs tf eager"))
    if "tf_function" in impls:
        ratio_cols.append(("tf_function", "vs tf.fn"))
    ratio_cols = [(b, h) for b, h in ratio_cols if b in impls]
    header += [h for _, h in ratio_cols]
    table = [header]
    for w in report.rows():
        rs = [r for r in report.results if r.workload == w]
        first = next((r for r in rs if r.status == "ok"), rs[0])
        row = [w, _size_text(first), "element" if first.per_call > 1 else "call"]
        for i in impls:
            r = report.get(w, i)
            if r is None:
                row.append("")
            elif r.status == "ok":
                row.append(_fmt_time(r.per_op))
            else:
                row.append("n/a" if r.status == "n/a" else "ERROR")
        for base, _ in ratio_cols:
            row.append(_fmt_ratio(report.ratio(w, "numba_ta", base)))
        table.append(row)
    widths = [max(len(r[c]) for r in table) for c in range(len(header))]
    for k, row in enumerate(table):
        cells = [row[c].ljust(widths[c]) if c < 3 else row[c].rjust(widths[c]) for c in range(len(row))]
        lines.append("  ".join(cells).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    errors = [r for r in report.results if r.status == "error"]
    if errors:
        lines.append("")
        for r in errors:
            lines.append(f"ERROR {r.workload}/{r.impl}: {r.message}")
    targets = check_targets(report)
    if targets:
        lines += ["", "targets (issue 3)"]
        tw = max(len(t["target"]) for t in targets)
        for t in targets:
            mval = "-" if t["measured"] is None else f"{t['measured']:.3g}"
            lines.append(f"  {t['target']:<{tw}}  {mval:>8} {t['goal']:<8}  {t['status']}")
        if report.copyto:
            c = report.copyto
            lines.append(
                f"  (np.copyto of {_fmt_bytes(c['nbytes'])}: {_fmt_time(c['seconds'])}, "
                f"{c['nbytes'] / c['seconds'] / 1e9:.2f} GB/s; the bulk targets are stated for 64 MiB)"
            )
    return "\n".join(lines)


def check_targets(report):
    """The issue's performance targets, measured.

    Parameters
    ----------
    report : Report

    Returns
    -------
    list of dict
        ``{"target", "measured", "goal", "status"}``; status is ``"met"``,
        ``"MISSED"`` or ``"not measured"``.
    """
    out = []

    def add(target, value, goal, ok):
        status = "not measured" if value is None else ("met" if ok(value) else "MISSED")
        out.append({"target": target, "measured": value, "goal": goal, "status": status})

    for w in ("write", "read"):
        r = report.get(w, "numba_ta")
        if r is None:
            continue
        shape = f"{r.items} {r.dtype}"
        add(
            f"{w} {shape}: TensorArray / np prealloc row",
            report.ratio(w, "numba_ta", "numpy_prealloc"),
            "<= 2",
            lambda v: v <= 2,
        )
        add(
            f"{w} {shape}: raw_ops / np prealloc row",
            report.ratio(w, "raw_ops", "numpy_prealloc"),
            "<= 2",
            lambda v: v <= 2,
        )
        if w == "write":  # the target names tf.TensorArray.write (an eager read is a list lookup)
            tfr = report.ratio(w, "tf_eager", "numba_ta")
            add(f"{w} {shape}: tf eager time / TensorArray time", tfr, ">= 10", lambda v: v >= 10)
    c = report.copyto.get("seconds") if report.copyto else None
    for w in BULK[:-1]:
        r = report.get(w, "numba_ta")
        if r is None or c is None:
            continue
        value = c / r.per_op if r.per_op else None
        add(f"{w} {_fmt_bytes(r.nbytes)}: bandwidth / np.copyto", value, ">= 0.8", lambda v: v >= 0.8)
    r = report.get("accumulate", "numba_ta")
    if r is not None:
        inv = report.ratio("accumulate", "numpy_prealloc", "numba_ta")
        add(f"accumulate {_fmt_bytes(r.nbytes)}: speed / np.add in place", inv, ">= 0.8", lambda v: v >= 0.8)
    growth = [r for r in report.results if r.op == "growth" and r.impl == "numba_ta" and r.per_op]
    if len(growth) >= 2:
        lo, hi = min(growth, key=lambda r: r.n), max(growth, key=lambda r: r.n)
        add(f"growth: per write at {hi.n} / at {lo.n}", hi.per_op / lo.per_op, "<= 1.5", lambda v: v <= 1.5)
    if report.get("bptt", "numba_ta") is not None:
        add(
            "bptt step: numba_ta / tf.function", report.ratio("bptt", "numba_ta", "tf_function"), "< 1", lambda v: v < 1
        )
    r = report.get("import", "numba_ta")
    if r is not None:
        add("cold import + first write/read/stack (s)", r.median, "< 1", lambda v: v < 1)
    return out


def to_json(report):
    """The report as a JSON string (schema 1).

    Parameters
    ----------
    report : Report

    Returns
    -------
    str
    """
    cfg = report.config
    doc = {
        "schema": 1,
        "tool": "numba-ta bench",
        "meta": report.meta,
        "config": {
            "repeat": cfg.repeat,
            "small_n": cfg.small_n,
            "small_items": cfg.small_items,
            "bulk_bytes": cfg.bulk_bytes,
            "element_bytes": cfg.element_bytes,
            "growth_ns": list(cfg.growth_ns),
            "dtype": cfg.dtype,
            "warmup_time": cfg.warmup_time,
            "workloads": list(cfg.workloads),
            "impls": list(cfg.impls),
        },
        "copyto": report.copyto,
        "results": [r.as_dict() for r in report.results],
        "ratios_vs_numpy_prealloc": {
            w: {i: report.ratio(w, i, "numpy_prealloc") for i in IMPLS if report.get(w, i) is not None}
            for w in report.rows()
        },
        "targets": check_targets(report),
    }
    return json.dumps(doc, indent=2, default=_json_default)


def _json_default(o):
    if isinstance(o, np.generic):
        return o.item()
    raise TypeError(f"not JSON serializable: {type(o).__name__}")


_COLORS = {
    "numba_ta": "#1f77b4",
    "raw_ops": "#7fb2de",
    "numpy_list": "#bcbd22",
    "numpy_prealloc": "#7f7f7f",
    "tf_eager": "#ff7f0e",
    "tf_function": "#d62728",
}


def plot(report, path):
    """Draw the report as a bar chart: time relative to the preallocated numpy buffer, log scale.

    One group of bars per workload, one bar per implementation; the dashed
    line at 1 is ``np prealloc``.  Needs matplotlib.

    Parameters
    ----------
    report : Report
    path : str or os.PathLike
        Output image (format from the suffix, e.g. ``.png``).

    Raises
    ------
    ImportError
        If matplotlib is not installed.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import matplotlib.ticker

    rows = [w for w in report.rows() if report.get(w, "numpy_prealloc") is not None]
    impls = [i for i in report.config.impls if i != "numpy_prealloc" and any(r.impl == i for r in report.results)]
    fig, ax = plt.subplots(figsize=(max(8.0, 1.15 * len(rows) + 2.5), 5.6), layout="constrained")
    width = 0.8 / max(1, len(impls))
    ratios_all = []
    for k, impl in enumerate(impls):
        xs, ys = [], []
        for j, w in enumerate(rows):
            v = report.ratio(w, impl, "numpy_prealloc")
            if v is not None and v > 0:
                xs.append(j + (k - (len(impls) - 1) / 2) * width)
                ys.append(v)
        ratios_all += ys
        bars = ax.bar(xs, ys, width=width * 0.95, label=IMPL_LABELS[impl], color=_COLORS.get(impl), bottom=0)
        if impl == "numba_ta":
            for b, v in zip(bars, ys, strict=True):
                ax.annotate(
                    _fmt_ratio(v),
                    (b.get_x() + b.get_width() / 2, v),
                    xytext=(0, 2),
                    textcoords="offset points",
                    ha="center",
                    va="bottom",
                    fontsize=7,
                    rotation=90,
                )
    ax.set_yscale("log")
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
    ax.axhline(1.0, color="black", linestyle="--", linewidth=1)
    if ratios_all:
        lo, hi = min(ratios_all + [1.0]), max(ratios_all + [1.0])
        ax.set_ylim(lo / 2, hi * 2.5)
    labels = []
    for w in rows:
        r = report.get(w, "numpy_prealloc")
        unit = "per elem." if r.per_call > 1 else ""
        size = _fmt_bytes(r.nbytes) if r.op in BULK else (f"n={r.n}" if r.op != "bptt" else f"T={r.n}")
        labels.append(f"{w}\n{size}" + (f"\n{unit}" if unit else ""))
    ax.set_xticks(range(len(rows)), labels, fontsize=8)
    ax.set_ylabel("time relative to a preallocated numpy buffer\n(log scale; lower is faster)")
    m = report.meta
    ax.set_title(
        f"numba_ta {m['numba_ta']} against its alternatives: {m['cpus']} CPUs, {m['threads']} numba threads, "
        f"median of {report.config.repeat} runs; dashed line = np prealloc (1x)",
        fontsize=10,
    )
    fig.legend(loc="outside right upper", fontsize=9, title="implementation", title_fontsize=9)
    ax.grid(axis="y", which="major", alpha=0.3)
    fig.savefig(path, dpi=130)
    plt.close(fig)


def _require_matplotlib():
    """Raise ImportError early if matplotlib is missing."""
    import importlib.util

    if importlib.util.find_spec("matplotlib") is None:
        raise ImportError("matplotlib is not installed (pip install matplotlib)")
    return True
