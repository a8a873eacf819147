"""The benchmark workloads: numba_ta against a numpy list, a preallocated numpy buffer and TensorFlow.

The one definition of "the same work" for every implementation a user could
pick.  The asv suite beside this module (``bench_*.py``) and the
``numba-ta bench`` report (:mod:`report`) both time the :class:`Case` objects
that :func:`make_case` builds.  This folder is part of the source repository,
not of the installed package.

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
``Case.prepare``, outside the timing.  TensorFlow is imported only when a
case needs it.

No public name here starts with ``time_``, ``track_``, ``mem_`` or
``peakmem_``: asv would take it for a benchmark.

Examples
--------
>>> case = make_case("stack", "numba_ta", n=8, items=4, dtype="float32")
>>> case.run(case.prepare()).shape
(8, 4)
>>> t = measure(case, repeat=3)
>>> len(t), min(t) >= 0
(3, True)
"""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import numba_ta
from numba_ta import raw_ops

try:
    import numba_ta_demo as demo
except ImportError:  # a commit from before the demo had its own package (asv times older commits too)
    from numba_ta.examples import char_rnn as demo  # type: ignore[no-redef]

__all__ = [
    "IMPLS",
    "IMPL_LABELS",
    "OPS",
    "LOOP_OPS",
    "Unavailable",
    "Case",
    "CheckedCase",
    "check_case_arguments",
    "verify_cases",
    "make_case",
    "has_workload",
    "measure",
    "filled",
    "touched",
    "tf_available",
    "tensorflow_version",
    "numpy_bptt",
    "bptt_batch",
    "tf_bptt_step",
    "COLD_IMPORT_CODE",
    "cold_import_seconds",
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
    "bptt_jit",
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


@dataclass
class CheckedCase(Case):
    """A :class:`Case` whose result can be checked (the base of the compiled-code and TensorList cases).

    Attributes
    ----------
    check : callable
        ``check(result)``: raises AssertionError unless `result`, the value of
        ``run(prepare())``, is what the workload computes.
    """

    check: Callable[[Any], None] = field(default=lambda result: None, repr=False)

    def _first_call(self):
        """The context of the untimed first call (nothing here; compiled cases silence Numba's cache warning)."""
        return contextlib.nullcontext()

    def verify(self):
        """Run the case once on a fresh ``prepare()`` and check its result.

        Returns
        -------
        float
            Seconds that call took (compilation or cache loading included).

        Raises
        ------
        AssertionError
            If the result is wrong.
        """
        with self._first_call():
            state = self.prepare()
            t0 = time.perf_counter()
            result = self.run(state)
            seconds = time.perf_counter() - t0
        self.check(result)
        return seconds

    @classmethod
    def per_element(cls, workload, variant, n, items, dtype, prepare, run, check, keep=()):
        """Build a case of `n` element operations per call on ``(n, items)`` numbers of `dtype`.

        Parameters
        ----------
        workload, variant : str
            The case's ``op`` and ``impl``.
        n, items : int
            Elements per call (``per_call``), numbers per element.
        dtype : str
            The dtype's name; ``nbytes`` is ``n * items`` of it.
        prepare, run, check : callable
            ``prepare()``, ``run(state)`` and ``check(result)`` (the attributes).
        keep : sequence, optional
            Objects that must stay alive while the case is used.

        Returns
        -------
        CheckedCase
            An instance of the class it is called on.
        """
        return cls(
            op=workload,
            impl=variant,
            n=n,
            items=items,
            dtype=dtype,
            prepare=prepare,
            run=run,
            per_call=n,
            nbytes=n * items * np.dtype(dtype).itemsize,
            keep=list(keep),
            check=check,
        )


def verify_cases(make, cases, n, items, dtype):
    """Build and verify the checked case of every ``(workload, variant)`` in `cases` (the ``self_test`` functions).

    Parameters
    ----------
    make : callable
        ``make(workload, variant, n, items, dtype)``, returning a :class:`CheckedCase`.
    cases : iterable of (str, str)
        The ``(workload, variant)`` pairs, in order.
    n, items : int
        Elements per case and numbers per element.
    dtype : str
        The elements' dtype, by name.

    Returns
    -------
    dict
        ``{(workload, variant): "ok", "n/a: <why>" or "<exception>: <message>"}``
        (``n/a`` for an :class:`Unavailable` variant).
    """
    out = {}
    for w, v in cases:
        try:
            make(w, v, n, items, dtype).verify()
            out[(w, v)] = "ok"
        except Unavailable as e:
            out[(w, v)] = f"n/a: {e}"
        except Exception as e:  # a broken variant must not hide the others
            out[(w, v)] = f"{type(e).__name__}: {e}"
    return out


def check_case_arguments(workload, variant, workloads, variants, n, items, dtype):
    """Validate the arguments of a case builder (``make_jit_case``, ``make_list_case``).

    Parameters
    ----------
    workload, variant : str
        The requested workload and variant.
    workloads : sequence of str
        The known workloads.
    variants : mapping of str to sequence of str
        The variants of each workload.
    n, items : int
        Rows (or elements) and numbers per row, each >= 1.
    dtype : str
        ``"float32"`` or ``"float64"``.

    Returns
    -------
    tuple
        ``(n, items, dtype)`` as ``int``, ``int`` and the dtype's name.

    Raises
    ------
    ValueError
        For an unknown workload, variant or dtype, or a size below 1.
    """
    if workload not in workloads:
        raise ValueError(f"unknown workload {workload!r}; choose from {', '.join(workloads)}")
    if variant not in variants[workload]:
        raise ValueError(f"unknown variant {variant!r} of {workload}; choose from {', '.join(variants[workload])}")
    if np.dtype(dtype).name not in ("float32", "float64"):
        raise ValueError(f"dtype must be float32 or float64, got {dtype!r}")
    n, items = int(n), int(items)
    if n < 1 or items < 1:
        raise ValueError(f"n and items must be >= 1, got n={n}, items={items}")
    return n, items, np.dtype(dtype).name


class _Data:
    """Deterministic inputs of one workload size; filled, so pages are touched up front."""

    def __init__(self, n, items, dtype, rows_needed=None):
        self.n, self.items = int(n), int(items)
        self.dtype = np.dtype(dtype)
        m = self.n if rows_needed is None else int(rows_needed)
        self.data = filled(m, self.items, self.dtype.name)
        self.rows = list(self.data)  # (items,) views
        self.idx = _permutation(self.n)  # a shuffled arange(n), intp
        self.arange = np.arange(self.n, dtype=np.intp)
        self.flat = self.data.reshape(-1)
        self.lengths = np.full(self.n, self.items, dtype=np.int64)


@functools.lru_cache(maxsize=4)
def filled(n, items, dtype):
    """A deterministic, read-only ``(n, items)`` array of random numbers (cached per size)."""
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


def touched(shape, dtype):
    """A zero-filled array, its pages already mapped (``np.empty`` would leave that to the timed call)."""
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


def has_workload(op, impl):
    """Return whether implementation `impl` has workload `op` (``raw_ops`` has no ``bptt``)."""
    return (op, impl) in _BUILDERS


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
    if op in ("bptt", "bptt_jit"):
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


def measure(case, repeat=5, warmup=1, warmup_time=0.0, max_warmup=20):
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
    return numba_ta.TensorArray(d.dtype, size=d.n, element_shape=[d.items], **kw)


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
    rows, n, mask = d.rows, d.n, len(d.rows) - 1

    def prepare():
        return numba_ta.TensorArray(d.dtype, size=0, dynamic_size=True, element_shape=[d.items])

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
    return raw_ops.TensorArrayV3(size=d.n, dtype=d.dtype, element_shape=[d.items], **kw)


def _raw_filled(d):
    h, f = _raw_new(d, clear_after_read=False)
    f = raw_ops.TensorArrayScatterV3(handle=h, indices=d.arange, value=d.data, flow_in=f)
    return h, f


def _raw_grad(d):
    h, f = _raw_new(d)
    g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source=GRAD_SOURCE)
    gf = raw_ops.TensorArrayScatterV3(handle=g, indices=d.arange, value=d.data, flow_in=gf)
    return h, g, gf


@_builder("write", "raw_ops")
def _raw_write(d):
    from numba_ta.raw_ops import TensorArrayWriteV3

    rows = d.rows

    def run(hf):
        h, f = hf
        for i, r in enumerate(rows):
            f = TensorArrayWriteV3(handle=h, index=i, value=r, flow_in=f)
        return f

    return (lambda: _raw_new(d)), run, []


@_builder("growth", "raw_ops")
def _raw_growth(d):
    from numba_ta.raw_ops import TensorArrayV3, TensorArrayWriteV3

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
    from numba_ta.raw_ops import TensorArrayReadV3

    n, dt = d.n, d.dtype

    def run(hf):
        h, f = hf
        for i in range(n):
            TensorArrayReadV3(handle=h, index=i, flow_in=f, dtype=dt)

    return _fixed(_raw_filled(d)), run, []


def _raw_bulk(prepare, op, keep=(), **args):
    """A bulk raw-op case: ``op(handle=, flow_in=, **args)`` on the ``(handle, flow)`` that `prepare` returns."""
    return prepare, (lambda hf: op(handle=hf[0], flow_in=hf[1], **args)), list(keep)


@_builder("gather", "raw_ops")
def _raw_gather(d):
    from numba_ta.raw_ops import TensorArrayGatherV3

    return _raw_bulk(_fixed(_raw_filled(d)), TensorArrayGatherV3, indices=d.idx, dtype=d.dtype)


@_builder("stack", "raw_ops")
def _raw_stack(d):
    from numba_ta.raw_ops import TensorArrayGatherV3

    es = [d.items]
    return _raw_bulk(_fixed(_raw_filled(d)), TensorArrayGatherV3, indices=d.arange, dtype=d.dtype, element_shape=es)


@_builder("concat", "raw_ops")
def _raw_concat(d):
    from numba_ta.raw_ops import TensorArrayConcatV3

    return _raw_bulk(_fixed(_raw_filled(d)), TensorArrayConcatV3, dtype=d.dtype)


@_builder("scatter", "raw_ops")
def _raw_scatter(d):
    from numba_ta.raw_ops import TensorArrayScatterV3

    return _raw_bulk(lambda: _raw_new(d), TensorArrayScatterV3, indices=d.idx, value=d.data)


@_builder("unstack", "raw_ops")
def _raw_unstack(d):
    from numba_ta.raw_ops import TensorArrayScatterV3

    return _raw_bulk(lambda: _raw_new(d), TensorArrayScatterV3, indices=d.arange, value=d.data)


@_builder("split", "raw_ops")
def _raw_split(d):
    from numba_ta.raw_ops import TensorArraySplitV3

    return _raw_bulk(lambda: _raw_new(d), TensorArraySplitV3, value=d.flat, lengths=d.lengths)


@_builder("accumulate", "raw_ops")
def _raw_accumulate(d):
    from numba_ta.raw_ops import TensorArrayScatterV3

    h, g, gf = _raw_grad(d)
    return _raw_bulk(_fixed((g, gf)), TensorArrayScatterV3, [h], indices=d.arange, value=d.data)


@_builder("accumulate_write", "raw_ops")
def _raw_accumulate_write(d):
    from numba_ta.raw_ops import TensorArrayWriteV3

    h, g, gf = _raw_grad(d)
    rows = d.rows

    def run(gg):
        g, f = gg
        for i, r in enumerate(rows):
            f = TensorArrayWriteV3(handle=g, index=i, value=r, flow_in=f)

    return _fixed((g, gf)), run, [h]


@_builder("grad", "raw_ops")
def _raw_grad_create(d):
    from numba_ta.raw_ops import TensorArrayGradV3, TensorArrayScatterV3

    def prepare():
        h, f = _raw_new(d)
        return h, TensorArrayScatterV3(handle=h, indices=d.arange, value=d.data, flow_in=f)

    return _raw_bulk(prepare, TensorArrayGradV3, source=GRAD_SOURCE)


# --------------------------------------------------------------------------- numpy baselines


@_builder("write", "numpy_prealloc")
@_builder("growth", "numpy_prealloc")
def _np_write(d):
    buf = touched((d.n, d.items), d.dtype)
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
    buf, out, idx = d.data.copy(), touched((d.n, d.items), d.dtype), d.idx
    return _fixed(buf), (lambda buf: np.take(buf, idx, axis=0, out=out)), []


@_builder("stack", "numpy_prealloc")
def _np_stack(d):
    buf, out = d.data.copy(), touched((d.n, d.items), d.dtype)

    def run(buf):
        np.copyto(out, buf)
        return out

    return _fixed(buf), run, []


@_builder("concat", "numpy_prealloc")
def _np_concat(d):
    buf, out = d.data.copy(), touched(d.n * d.items, d.dtype)

    def run(buf):
        np.copyto(out, buf.reshape(-1))
        return out

    return _fixed(buf), run, []


@_builder("scatter", "numpy_prealloc")
def _np_scatter(d):
    idx, data = d.idx, d.data

    def run(buf):
        buf[idx] = data

    return _fixed(touched((d.n, d.items), d.dtype)), run, []


@_builder("unstack", "numpy_prealloc")
def _np_unstack(d):
    data = d.data
    return _fixed(touched((d.n, d.items), d.dtype)), (lambda buf: np.copyto(buf, data)), []


@_builder("split", "numpy_prealloc")
def _np_split(d):
    flat = d.flat
    return _fixed(touched(d.n * d.items, d.dtype)), (lambda buf: np.copyto(buf, flat)), []


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


def tensorflow_version():
    """TensorFlow's version if it can be imported, else None (importing it, once, if so)."""
    tf = _tf_module()
    return None if tf is None else tf.__version__


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
def bptt_batch(dtype):
    """The demo's first training chunk: params, inputs, targets, h0 (all read-only)."""
    text = demo.zen_of_python()
    vocab = demo.Vocab(text)
    ids = vocab.encode(text[: BPTT_SEQ_LEN + 1])
    params = demo.init_params(len(vocab), BPTT_HIDDEN, seed=0, dtype=dtype)
    for p in params.values():
        p.setflags(write=False)
    h0 = np.zeros(BPTT_HIDDEN, dtype=dtype)
    return params, ids[:-1], ids[1:], h0


def numpy_bptt(params, inputs, targets, h0, use_list=False):
    """Loss and gradients of the demo RNN in plain numpy: the baseline of the ``bptt`` workload.

    The same model and arithmetic as
    :func:`numba_ta_demo.loss_and_grads`, with the hidden states
    in a preallocated ``(T, H)`` buffer (or, with `use_list`, a list that is
    ``np.stack``-ed) instead of a TensorArray.

    Parameters
    ----------
    params : dict of str to ndarray
        As made by :func:`numba_ta_demo.init_params`.
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
    >>> from numba_ta_demo import init_params, loss_and_grads
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
    return _fixed(bptt_batch(dtype)), (lambda b: fn(*b)), []


@_builder("bptt", "numba_ta")
def _nt_bptt(dtype):
    return _bptt_case(dtype, demo.loss_and_grads)


@_builder("bptt_jit", "numba_ta")
def _nt_bptt_jit(dtype):
    return _bptt_case(dtype, demo.loss_and_grads_compiled)


@_builder("bptt", "numpy_prealloc")
def _np_bptt(dtype):
    return _bptt_case(dtype, numpy_bptt)


@_builder("bptt", "numpy_list")
def _list_bptt(dtype):
    return _bptt_case(dtype, functools.partial(numpy_bptt, use_list=True))


def _tf_bptt(dtype, use_function):
    tf = _tf()
    params, inputs, targets, h0 = bptt_batch(dtype)
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

COLD_IMPORT_CODE = """\
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
    cmd = [python, "-c", COLD_IMPORT_CODE]

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
