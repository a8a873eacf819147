"""Workloads inside ``@numba.njit`` code: numba_ta's TensorArray methods against numpy and ``numba.typed.List``.

A :class:`numba_ta.TensorArray` can be passed into a user's compiled function
(the documentation's "TensorArray in compiled code" page).  These workloads
time its methods there, each against what one would write in the same
compiled function without a TensorArray.  The asv module ``bench_jit.py`` and
the "compiled code" section of ``numba-ta bench`` (:mod:`report`) both time
the :class:`JitCase` objects that :func:`make_jit_case` builds.

Workloads (``WORKLOADS``) and their variants (``VARIANTS``)
-----------------------------------------------------------
Every timed call is one call of a compiled function that loops over ``n``
rows of ``items`` numbers (64 float32 by default), or, for ``call``, ``n``
calls from Python; the time per element is the call's time divided by ``n``
(``JitCase.per_call``).  Rows come from the same deterministic array for every
variant.

``write``
    ``numba_ta``: ``ta = ta.write(t, rows[t])`` into
    ``TensorArray(dtype, size=n, element_shape=[items])``;
    ``numba_ta_dynamic``: the same into ``size=0, dynamic_size=True`` (it
    grows); ``numpy``: ``out[t] = rows[t]`` into a preallocated ``(n, items)``
    array whose pages are touched beforehand; ``typed_list``:
    ``lst.append(rows[t].copy())``.  The arrays and the list are made
    empty by ``prepare()`` (outside the timing), fresh for every timed call,
    and passed in: like the dynamic array, the list starts empty and grows
    inside the timed loop, and creating either is not part of the work
    (creating the list inside the compiled function instead would save
    passing it in, under a microsecond per call, and nothing per row).
    ``prepare()`` also passes each new TensorArray once into a trivial
    compiled function, so that its compiled view (built the first time an
    array enters compiled code: tens to hundreds of microseconds) exists
    before the timing: the timed call pays an ordinary call's overhead (the
    ``call`` workload), amortised over ``n`` rows.
``read``
    ``numba_ta``: ``r = ta.read(t)`` (a new array); ``numpy``:
    ``r = arr[t].copy()``; ``typed_list``: ``r = lst[t].copy()`` (``lst[t]``
    alone would return the stored array, not a new one).  Every variant does
    ``acc += r[0]`` and ``count += r.size`` on each row, so that the compiler
    cannot drop the reads, and returns ``(acc, count)``.  One array, created
    with ``clear_after_read=False`` and filled once outside the timing, is
    read by every timed call (reading an element again is allowed then);
    the numpy array and the list are likewise filled once.
``stack``
    ``ta.stack()`` of a filled array (``clear_after_read=False``, reused)
    against ``arr.copy()`` of the same ``(n, items)`` array, both returning a
    new array from the compiled function; one call per timing (the
    bandwidth is ``JitCase.nbytes`` over the call's time).
``call``
    ``n`` calls from Python per timing of ``f(ta)`` (returns ``ta.size()``),
    ``g(arr)`` (returns ``arr.shape[0]``) and ``h()`` (no argument, returns
    0): the cost of passing a TensorArray into compiled code, against an
    ndarray.  The array has entered compiled code before (its view is built).

Every variant's result is checked (:meth:`JitCase.verify`, :func:`self_test`):
the written array or list equals the rows, the reads sum to the rows' first
column, the stacked array equals the rows, each call returns its value.  A
variant that computes something else fails there instead of reporting a
time.

Compilation
-----------
The first call of a compiled function that takes a TensorArray compiles the
methods it uses (tens of seconds on a small machine for ``write``), so the
functions are compiled with ``cache=True``, and :meth:`JitCase.verify`
(the untimed first call) compiles or loads them before any timing.  Numba
checks a cached function against its own source file only, not against
numba_ta's; here each function that takes a TensorArray also holds a hash of
numba_ta's sources (:func:`source_stamp`) in its closure, which is part of
Numba's cache key: after numba_ta changes, the cached code is not used.  A
function Numba cannot cache (compiled code that holds a ctypes pointer, for
one) is compiled again in every process; Numba's warning that it cannot
cache it is silenced, since that is no error here.
Under ``NUMBA_DISABLE_JIT=1`` the functions run as Python (the TensorArray
class's own methods, ``typed.List`` as a ``list``).

No public name here starts with ``time_``, ``track_``, ``mem_`` or
``peakmem_``: asv would take it for a benchmark.

Examples
--------
>>> case = make_jit_case("stack", "numpy", n=8, items=4)
>>> case.verify() >= 0
True
>>> case.per_call, case.nbytes
(8, 128)
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import types as pytypes
import warnings
from dataclasses import dataclass
from pathlib import Path

import numba
import numpy as np
from numba.core.errors import NumbaWarning
from numba.np.numpy_support import from_dtype
from numba.typed import List

import numba_ta

from . import workloads as wl

__all__ = [
    "WORKLOADS",
    "VARIANTS",
    "VARIANT_LABELS",
    "N",
    "ITEMS",
    "JitCase",
    "make_jit_case",
    "self_test",
    "compiled_functions",
    "source_stamp",
]

#: Workload names, in report order.
WORKLOADS = ("write", "read", "stack", "call")
#: The variants of each workload (numba_ta's first).
VARIANTS = {
    "write": ("numba_ta", "numba_ta_dynamic", "numpy", "typed_list"),
    "read": ("numba_ta", "numpy", "typed_list"),
    "stack": ("numba_ta", "numpy"),
    "call": ("numba_ta", "numpy", "no_arg"),
}
#: Short names of the variants (table columns).
VARIANT_LABELS = {
    "numba_ta": "numba_ta",
    "numba_ta_dynamic": "nt dynamic",
    "numpy": "numpy",
    "typed_list": "typed.List",
    "no_arg": "no arg",
}
#: What each variant does, per workload (the report's legend).
DESCRIPTIONS = {
    ("write", "numba_ta"): "ta = ta.write(t, rows[t]), TensorArray(size=n)",
    ("write", "numba_ta_dynamic"): "the same, size=0 and dynamic_size=True",
    ("write", "numpy"): "out[t] = rows[t], out preallocated",
    ("write", "typed_list"): "lst.append(rows[t].copy()), lst empty",
    ("read", "numba_ta"): "r = ta.read(t)",
    ("read", "numpy"): "r = arr[t].copy()",
    ("read", "typed_list"): "r = lst[t].copy()",
    ("stack", "numba_ta"): "ta.stack()",
    ("stack", "numpy"): "arr.copy()",
    ("call", "numba_ta"): "f(ta) returns ta.size()",
    ("call", "numpy"): "g(arr) returns arr.shape[0]",
    ("call", "no_arg"): "h() returns 0",
}
#: Default rows per timed call, and items per row.
N = 10_000
ITEMS = 64


# --------------------------------------------------------------------------- the compiled functions


def source_stamp():
    """Return a hash of the imported numba_ta package's source files.

    The compiled functions that take a TensorArray hold it in their closure,
    so that Numba's cache, which checks only their own source file, does not
    serve code compiled against another version of numba_ta.

    Returns
    -------
    str
        Hex SHA-256 of the package's ``*.py`` files (paths and contents).
    """
    root = Path(numba_ta.__file__).resolve().parent
    h = hashlib.sha256(numba.__version__.encode())
    for path in sorted(root.rglob("*.py")):
        h.update(str(path.relative_to(root)).encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _compiled(func):
    """``numba.njit(cache=True)``, or uncached where Numba has nowhere to cache (a read-only checkout)."""
    try:
        return numba.njit(cache=True)(func)
    except RuntimeError as e:
        if "no locator available" not in str(e):
            raise
        return numba.njit(func)


@contextlib.contextmanager
def _first_calls():
    """Where functions may compile: silence Numba's warning that one cannot be cached (it then just is not)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*Cannot cache compiled function", category=NumbaWarning)
        yield


def _build(stamp):
    """Define the compiled functions; those that take a TensorArray reference `stamp` (see the module notes)."""

    @_compiled
    def ta_write(ta, rows):
        _ = stamp  # in the closure: part of the cache key
        for t in range(rows.shape[0]):
            ta = ta.write(t, rows[t])
        return ta

    @_compiled
    def np_write(out, rows):
        for t in range(rows.shape[0]):
            out[t] = rows[t]
        return out

    @_compiled
    def list_write(lst, rows):
        for t in range(rows.shape[0]):
            lst.append(rows[t].copy())
        return lst

    @_compiled
    def ta_read(ta, n):
        _ = stamp
        acc = np.float64(0.0)  # float64 in Python too (numpy 2 keeps 0.0 + float32 in float32)
        count = 0
        for t in range(n):
            r = ta.read(t)
            acc += r[0]
            count += r.size
        return acc, count

    @_compiled
    def np_read(arr, n):
        acc = np.float64(0.0)  # float64 in Python too (numpy 2 keeps 0.0 + float32 in float32)
        count = 0
        for t in range(n):
            r = arr[t].copy()
            acc += r[0]
            count += r.size
        return acc, count

    @_compiled
    def list_read(lst, n):
        acc = np.float64(0.0)  # float64 in Python too (numpy 2 keeps 0.0 + float32 in float32)
        count = 0
        for t in range(n):
            r = lst[t].copy()
            acc += r[0]
            count += r.size
        return acc, count

    @_compiled
    def ta_stack(ta):
        _ = stamp
        return ta.stack()

    @_compiled
    def np_copy(arr):
        return arr.copy()

    @_compiled
    def ta_size(ta):
        _ = stamp
        return ta.size()

    @_compiled
    def np_len(arr):
        return arr.shape[0]

    @_compiled
    def no_arg():
        return 0

    return pytypes.SimpleNamespace(**{k: v for k, v in locals().items() if k != "stamp"})


@functools.lru_cache(maxsize=1)
def _fns():
    return _build(source_stamp())


def compiled_functions():
    """Return the compiled functions of the workloads, by name.

    Returns
    -------
    dict of str to callable
        Numba dispatchers (plain functions under ``NUMBA_DISABLE_JIT=1``).
    """
    return dict(vars(_fns()))


# --------------------------------------------------------------------------- cases


@dataclass
class JitCase(wl.CheckedCase):
    """One compiled-code workload for one variant: a :class:`workloads.CheckedCase`.

    ``op`` is one of ``WORKLOADS`` and ``impl`` one of ``VARIANTS[op]``;
    ``per_call`` is ``n`` (rows per compiled loop, or calls per timing for
    ``call``).  :meth:`verify` compiles the function on its first call (or
    loads it from Numba's cache).
    """

    def _first_call(self):
        return _first_calls()


def _fixed(value):
    return lambda: value


def _ta(dtype, n, items, **kw):
    return numba_ta.TensorArray(dtype, size=n, element_shape=[items], **kw)


def _entered(ta):
    """`ta` after one call into compiled code (its compiled view built, outside the timing)."""
    with _first_calls():
        _fns().ta_size(ta)
    return ta


def _check_rows(got, rows, what):
    got = np.asarray(got)
    assert got.shape == rows.shape, f"{what}: shape {got.shape}, expected {rows.shape}"
    assert got.dtype == rows.dtype, f"{what}: dtype {got.dtype}, expected {rows.dtype}"
    assert np.array_equal(got, rows), f"{what}: the values differ from the rows written"


def _new_list(dtype):
    return List.empty_list(numba.types.Array(from_dtype(np.dtype(dtype)), 1, "C"))


def _filled_list(rows):
    lst = _new_list(rows.dtype)
    for r in rows:
        lst.append(r.copy())
    return lst


def _write_case(variant, rows, dtype, n, items):
    f = _fns()
    if variant in ("numba_ta", "numba_ta_dynamic"):
        size, kw = (n, {}) if variant == "numba_ta" else (0, {"dynamic_size": True})

        def prepare():
            return _entered(_ta(dtype, size, items, **kw))

        def check(ta):
            assert int(ta.size()) == n, f"size {ta.size()}, expected {n}"
            _check_rows(ta.stack(), rows, variant)

        return prepare, (lambda ta: f.ta_write(ta, rows)), check
    if variant == "numpy":
        out = wl.touched((n, items), dtype)  # zeros: a variant that writes nothing fails the check

        def check_np(buf):
            _check_rows(buf, rows, variant)

        return _fixed(out), (lambda buf: f.np_write(buf, rows)), check_np

    def check_list(lst):
        assert len(lst) == n, f"{len(lst)} rows appended, expected {n}"
        _check_rows(np.stack(list(lst)) if n else np.empty((0, items), dtype), rows, variant)

    return (lambda: _new_list(dtype)), (lambda lst: f.list_write(lst, rows)), check_list


def _read_case(variant, rows, dtype, n, items):
    f = _fns()
    # the reference: the same additions in the same order (float64, sequential like the compiled loop)
    want = (float(np.cumsum(rows[:, 0].astype(np.float64))[-1]) if n else 0.0, n * items)

    def check(result):
        acc, count = result
        assert int(count) == want[1], f"{variant}: read {count} numbers, expected {want[1]}"
        assert float(acc) == want[0], f"{variant}: sum of the first column {acc!r}, expected {want[0]!r}"

    if variant == "numba_ta":
        ta = _entered(_ta(dtype, n, items, clear_after_read=False).unstack(rows))
        return _fixed(ta), (lambda ta: f.ta_read(ta, n)), check
    if variant == "numpy":
        return _fixed(rows.copy()), (lambda arr: f.np_read(arr, n)), check
    return _fixed(_filled_list(rows)), (lambda lst: f.list_read(lst, n)), check


def _stack_case(variant, rows, dtype, n, items):
    f = _fns()

    def check(out):
        _check_rows(out, rows, variant)

    if variant == "numba_ta":
        ta = _entered(_ta(dtype, n, items, clear_after_read=False).unstack(rows))
        return _fixed(ta), f.ta_stack, check
    return _fixed(rows.copy()), f.np_copy, check


def _call_case(variant, rows, dtype, n, items):
    f = _fns()
    calls = n
    if variant == "numba_ta":
        fn, arg, want = f.ta_size, _entered(_ta(dtype, n, items)), n
    elif variant == "numpy":
        fn, arg, want = f.np_len, rows, n
    else:
        fn, arg, want = None, None, 0

    if fn is None:
        h = f.no_arg

        def run(_):
            out = None
            for _i in range(calls):
                out = h()
            return out

    else:

        def run(x):
            out = None
            for _i in range(calls):
                out = fn(x)
            return out

    def check(out):
        assert out is not None and int(out) == want, f"{variant}: returned {out!r}, expected {want}"

    return _fixed(arg), run, check


_CASE_BUILDERS = {"write": _write_case, "read": _read_case, "stack": _stack_case, "call": _call_case}


def make_jit_case(workload, variant, n=N, items=ITEMS, dtype="float32"):
    """Build the :class:`JitCase` of `workload` for `variant`.

    Nothing is compiled here: the first :meth:`JitCase.verify` (or ``run``)
    compiles the function, or loads it from Numba's cache.

    Parameters
    ----------
    workload : str
        One of ``WORKLOADS``.
    variant : str
        One of ``VARIANTS[workload]``.
    n : int, optional
        Rows per compiled loop (``write``, ``read``, ``stack``), or calls per
        timing (``call``); >= 1.
    items : int, optional
        Numbers per row (>= 1).
    dtype : str, optional
        ``"float32"`` or ``"float64"``.

    Returns
    -------
    JitCase

    Raises
    ------
    ValueError
        For an unknown workload, variant or dtype, or a size below 1.

    Examples
    --------
    >>> c = make_jit_case("write", "numpy", n=3, items=2)
    >>> c.per_call, c.nbytes
    (3, 24)
    """
    n, items, dtype = wl.check_case_arguments(workload, variant, WORKLOADS, VARIANTS, n, items, dtype)
    rows = np.array(wl.filled(n, items, dtype))  # a writable copy of the deterministic rows
    prepare, run_, check = _CASE_BUILDERS[workload](variant, rows, dtype, n, items)
    return JitCase.per_element(workload, variant, n, items, dtype, prepare, run_, check, keep=[rows])


def self_test(n=16, items=ITEMS, dtype="float32", workloads=WORKLOADS):
    """Run every variant once and check its result.

    Parameters
    ----------
    n, items : int, optional
        Rows (or calls) and numbers per row.
    dtype : str, optional
    workloads : sequence of str, optional
        Subset of ``WORKLOADS``.

    Returns
    -------
    dict
        ``{(workload, variant): "ok" or "<exception>: <message>"}``.

    Examples
    --------
    >>> results = self_test(n=4, items=3, workloads=("stack",))
    >>> results
    {('stack', 'numba_ta'): 'ok', ('stack', 'numpy'): 'ok'}
    """
    return wl.verify_cases(make_jit_case, [(w, v) for w in workloads for v in VARIANTS[w]], n, items, dtype)
