"""The ``numba-ta bench`` report: run the workloads, print a table and the performance goals, write JSON and a chart.

``numba-ta bench`` (the installed command) finds this folder and calls
:func:`main`; from ``asv_bench/``, ``python -m benchmarks.report`` does the
same.  The workloads are those of :mod:`workloads`, shared with the asv suite
beside this module; here each runs once per implementation with its own short
timing loop (:func:`workloads.measure`), for a quick comparison on one
machine, where asv records runs across commits.

The goals checked after the table (:func:`check_goals`) are the
"Performance goals" of the documentation's Performance page.

``--history FILE.png`` times nothing: it draws the headline ratios of the
commits asv recorded (:mod:`history`), a picture that needs no network, unlike
``asv publish``'s page.

The ``compiled`` workload is a section of its own, after the goals: the
workloads of :mod:`jit_workloads` (a TensorArray inside ``@numba.njit``
against numpy and ``numba.typed.List`` in the same compiled loop, and the
cost of calling a compiled function with a TensorArray argument), each
variant checked once before it is timed, with the ratios of their targets
(:func:`compiled_targets`).

The ``tensorlist`` workload is another section: the workloads of
:mod:`list_workloads` (a TensorList built one element at a time with
``numba_ta.raw_ops``, against TensorFlow's eager list ops, ONNX Runtime-style
copy-per-insert and a Python list), timed at growing sizes
(``Config.list_ns``) to show the cost per element at each, with the ratios of
their targets (:func:`tensorlist_targets`).  The quadratic baselines are not
run where one call is predicted to take longer than ``Config.list_max_seconds``:
their time there is extrapolated from the smaller sizes, and marked so.

Examples
--------
>>> cfg = Config(repeat=1, small_n=10, bulk_bytes=1 << 12, element_bytes=256, growth_ns=(10, 20),
...              workloads=("write", "stack", "growth"), impls=("numba_ta", "numpy_prealloc"),
...              use_tf=False, warmup_time=0.0)
>>> rep = run(cfg, progress=False)
>>> [(r.workload, r.impl, r.status) for r in rep.results][:2]
[('write', 'numba_ta', 'ok'), ('write', 'numpy_prealloc', 'ok')]
>>> table = format_table(rep).splitlines()
>>> next(line for line in table if line.startswith("workload")).split()
['workload', 'size', 'per', 'numba_ta', 'np', 'prealloc', 'vs', 'prealloc']
>>> for g in check_goals(rep):
...     print(g["goal"])
write 64 float32: TensorArray / np prealloc row
write 64 float32: raw_ops / np prealloc row
write 64 float32: tf eager time / TensorArray time
stack 4 KiB: bandwidth / np.copyto
growth: per write at 20 / at 10
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import platform
import re
import statistics
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numba
import numpy as np

import numba_ta

from . import jit_workloads as jw
from . import list_workloads as lw
from . import workloads as wl

__all__ = [
    "WORKLOADS",
    "Config",
    "Result",
    "Report",
    "run",
    "format_table",
    "check_goals",
    "compiled_targets",
    "tensorlist_targets",
    "to_json",
    "plot",
    "main",
]

#: The asv_bench folder this module belongs to.
SUITE_DIR = Path(__file__).resolve().parent.parent
#: Where the goals are documented (printed with the table).
GOALS_DOC = '"Performance goals" in the documentation\'s Performance page'

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
    "bptt_jit",
    "import",
    "compiled",
    "tensorlist",
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
        Elements in the write and read loops, and rows per compiled loop (or
        calls) in the ``compiled`` section.
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
        Subset of ``workloads.IMPLS``.
    use_tf : bool
        Run the TensorFlow cases if TensorFlow is installed.
    warmup_time : float
        Seconds of untimed warm-up calls per case (at least one call).
    list_ns : tuple of int
        Elements per list in the ``tensorlist`` section, ascending; the cost
        per element at the largest is compared with the smallest.
    list_items : tuple of int
        Element shapes ``[items]`` of the ``tensorlist`` section.
    list_max_seconds : float
        Longest predicted call the ``tensorlist`` section runs for a quadratic
        baseline with a target (tf eager, copy tuple); ``copy array`` gets a
        sixth of it.  Such a call predicted to take longer is extrapolated;
        numba_ta and ``np list`` always run.
    list_budget : float
        Seconds of timed calls per ``tensorlist`` case: at least one call, at
        most ``repeat``, no new call once this much is spent.
    """

    repeat: int = 5
    small_n: int = 10_000
    small_items: int = 64
    bulk_bytes: int = 64 << 20
    element_bytes: int = 4 << 10
    growth_ns: tuple = (10_000, 100_000)
    dtype: str = "float32"
    workloads: tuple = WORKLOADS
    impls: tuple = wl.IMPLS
    use_tf: bool = True
    warmup_time: float = 0.5
    list_ns: tuple = (1_000, 10_000, 100_000)
    list_items: tuple = (4, 256)
    list_max_seconds: float = 60.0
    list_budget: float = 10.0

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
        preallocated buffer, the bandwidth reference of the bulk goals.
    compiled : list of Result
        The ``compiled`` section: one Result per (workload, variant) of
        :mod:`jit_workloads` (``workload`` and ``op`` the workload, ``impl``
        the variant, ``per_call`` = ``n``); empty when not run.
    compiled_info : dict
        The section's first calls: ``{"seconds", "first_call_seconds",
        "cache_hits", "cache_misses"}`` (see :func:`to_json`).
    tensorlist : list of ListResult
        The ``tensorlist`` section: one :class:`ListResult` per (workload,
        element shape, variant, n); empty when not run.
    """

    config: Config
    meta: dict
    results: list
    copyto: dict = field(default_factory=dict)
    compiled: list = field(default_factory=list)
    compiled_info: dict = field(default_factory=dict)
    tensorlist: list = field(default_factory=list)

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
        return _ratio(self.get(workload, impl), self.get(workload, base))

    def get_compiled(self, workload, variant):
        """The :class:`Result` of the ``compiled`` section's (`workload`, `variant`), or None."""
        for r in self.compiled:
            if r.op == workload and r.impl == variant:
                return r
        return None

    def compiled_ratio(self, workload, variant, base):
        """``per_op(variant) / per_op(base)`` in the ``compiled`` section, or None."""
        return _ratio(self.get_compiled(workload, variant), self.get_compiled(workload, base))

    def get_list(self, workload, variant, n, items):
        """The :class:`ListResult` of the ``tensorlist`` section's case, or None."""
        for r in self.tensorlist:
            if (r.op, r.impl, r.n, r.items) == (workload, variant, n, items):
                return r
        return None


@dataclass
class ListResult(Result):
    """One (workload, variant, n, element shape) of the ``tensorlist`` section: measured or extrapolated.

    ``status`` is ``"estimated"`` when the call was not run because it was
    predicted to take longer than ``Config.list_max_seconds``; ``estimate``
    is then the predicted seconds per call and ``message`` says from what.

    Attributes
    ----------
    estimate : float or None
        Predicted seconds per call (only when ``status == "estimated"``).
    """

    estimate: float | None = None

    @property
    def per_op_any(self):
        """float or None: seconds per element, measured or (when estimated) predicted."""
        if self.status == "estimated" and self.estimate is not None:
            return self.estimate / self.per_call
        return self.per_op

    def as_dict(self):
        """The result as a JSON-ready dict (with ``estimate``, seconds per call, or None)."""
        d = super().as_dict()
        d["unit"] = "element"
        d["estimate"] = self.estimate
        return d


def _ratio(a, b):
    if a is None or b is None or a.per_op is None or b.per_op is None or b.per_op <= 0:
        return None
    return a.per_op / b.per_op


def _meta(cfg):
    try:
        layer = numba.threading_layer()
    except ValueError:
        layer = "not started"
    meta = {
        "numba_ta": numba_ta.__version__,
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
    meta["parallel_threshold"] = numba_ta.get_parallel_threshold()
    meta["tensorflow"] = wl.tensorflow_version() if cfg.use_tf and any(i.startswith("tf") for i in cfg.impls) else None
    meta["suite"] = str(SUITE_DIR)
    return meta


def _plan(cfg):
    """The (workload, op, impl, n, items) cases to run, in order."""
    bulk_n, bulk_items = cfg.bulk_shape()
    plan = []
    for w in cfg.workloads:
        if w == "compiled":  # a section of its own (_run_compiled)
            continue
        if w == "import":
            if "numba_ta" in cfg.impls:
                plan.append(("import", "import", "numba_ta", 1, 64))
            continue
        if w == "growth":
            sizes = [(f"growth {n}", n, cfg.small_items) for n in cfg.growth_ns]
        elif w in ("write", "read"):
            sizes = [(w, cfg.small_n, cfg.small_items)]
        elif w in ("bptt", "bptt_jit"):
            sizes = [(w, wl.BPTT_SEQ_LEN, wl.BPTT_HIDDEN)]
        else:
            sizes = [(w, bulk_n, bulk_items)]
        for name, n, items in sizes:
            for impl in cfg.impls:
                if not wl.has_workload(w, impl):
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
    src = wl.filled(max(1, nbytes // itemsize), 1, np.dtype(dtype).name).reshape(-1)
    dst = wl.touched(src.shape, dtype)
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
    jit_plan = _compiled_plan(cfg)
    list_plan = _list_plan(cfg)
    list_cpu = [c for c in list_plan if c[2] not in lw.TF_VARIANTS]
    list_tf = [c for c in list_plan if c[2] in lw.TF_VARIANTS]
    # TensorFlow cases last: TF's thread pools may still spin after its ops and would slow what follows
    order = sorted(range(len(plan)), key=lambda k: (plan[k][2].startswith("tf"), k))
    results = [None] * len(plan)
    copyto = None
    compiled = None
    tensorlist = None
    prog = _Progress(len(plan) + len(jit_plan) + len(list_plan) * len(cfg.list_ns), stream=stream, enabled=progress)
    try:
        for k in order:
            name, op, impl, n, items = plan[k]
            if copyto is None and impl.startswith("tf"):
                copyto = _copyto_reference(cfg)  # before TensorFlow's thread pools can slow it down
            if compiled is None and impl.startswith("tf"):
                compiled = _run_compiled(cfg, jit_plan, prog)
            if tensorlist is None and impl.startswith("tf"):
                tensorlist = _run_tensorlist(cfg, list_cpu, prog)
            label = f"{name}/{wl.IMPL_LABELS[impl]}"
            prog.start(label)
            res = Result(name, op, impl, n, items, cfg.dtype)
            try:
                if op == "import":
                    wall, _inside = wl.cold_import_seconds(repeat=cfg.repeat)
                    res.times = wall
                else:
                    case = wl.make_case(op, impl, n, items, cfg.dtype)
                    res.nbytes, res.per_call = case.nbytes, case.per_call
                    res.n, res.items = case.n, case.items
                    once = wl.measure(case, repeat=1, warmup=1)[0]
                    repeat = cfg.repeat if once < 2.0 else min(cfg.repeat, 3)
                    # cheap cases warm up for warmup_time more and are timed afresh; slow ones keep `once`
                    if once < cfg.warmup_time / 2:
                        res.times = wl.measure(case, repeat=repeat, warmup=0, warmup_time=cfg.warmup_time)
                    else:
                        res.times = [once] + wl.measure(case, repeat=repeat - 1, warmup=0)
                    del case
                text = f"{_fmt_time(res.per_op)} per {'element' if res.per_call > 1 else 'call'}"
            except wl.Unavailable as e:
                res.status, res.message, text = "n/a", str(e), f"n/a ({e})"
            except Exception as e:  # a broken case must not hide the others
                res.status, res.message = "error", f"{type(e).__name__}: {e}"
                text = f"ERROR {res.message}"
            results[k] = res
            prog.finish(label, text)
        if compiled is None:
            compiled = _run_compiled(cfg, jit_plan, prog)
        if tensorlist is None:
            tensorlist = _run_tensorlist(cfg, list_cpu, prog)
        tensorlist += _run_tensorlist(cfg, list_tf, prog)  # TensorFlow's last
    finally:
        prog.close()
    report = Report(cfg, _meta(cfg), [r for r in results if r is not None])
    report.meta["loadavg_at_start"] = load
    report.copyto = copyto or _copyto_reference(cfg)
    report.compiled, report.compiled_info = compiled
    rank = {c: k for k, c in enumerate(list_plan)}
    report.tensorlist = sorted(tensorlist, key=lambda r: (rank[(r.op, r.items, r.impl)], r.n))
    return report


def _compiled_plan(cfg):
    """The (workload, variant) cases of the ``compiled`` section (none unless asked for, with numba_ta)."""
    if "compiled" not in cfg.workloads or "numba_ta" not in cfg.impls:
        return []
    return [(w, v) for w in jw.WORKLOADS for v in jw.VARIANTS[w]]


def _cache_counts():
    """Signatures Numba loaded from its cache, and compiled, in the compiled workloads' functions."""
    hits = misses = 0
    for fn in jw.compiled_functions().values():
        stats = getattr(fn, "stats", None)  # None under NUMBA_DISABLE_JIT=1
        if stats is not None:
            hits += sum(stats.cache_hits.values())
            misses += sum(stats.cache_misses.values())
    return hits, misses


def _run_compiled(cfg, jit_plan, prog):
    """Measure the ``compiled`` section: each variant checked once (compiling it), then timed."""
    results = []
    if not jit_plan:
        return results, {}
    t_start = time.perf_counter()
    first = 0.0
    for w, v in jit_plan:
        label = f"compiled {w}/{jw.VARIANT_LABELS[v]}"
        prog.start(label)
        res = Result(w, w, v, cfg.small_n, cfg.small_items, cfg.dtype, per_call=cfg.small_n)
        try:
            case = jw.make_jit_case(w, v, cfg.small_n, cfg.small_items, cfg.dtype)
            res.nbytes = case.nbytes
            first += case.verify()  # compilation or cache load, and the result checked: never timed unchecked
            res.times = wl.measure(case, repeat=cfg.repeat, warmup=0, warmup_time=cfg.warmup_time)
            del case
            text = f"{_fmt_time(res.per_op)} per {'call' if w == 'call' else 'element'}"
        except Exception as e:  # a broken variant must not hide the others
            res.status, res.message = "error", f"{type(e).__name__}: {e}"
            text = f"ERROR {res.message}"
        results.append(res)
        prog.finish(label, text)
    hits, misses = _cache_counts()
    info = {
        "seconds": time.perf_counter() - t_start,
        "first_call_seconds": first,
        "cache_hits": hits,
        "cache_misses": misses,
    }
    return results, info


def _list_plan(cfg):
    """The (workload, items, variant) cases of the ``tensorlist`` section, each run at every ``cfg.list_ns``."""
    if "tensorlist" not in cfg.workloads or "numba_ta" not in cfg.impls:
        return []
    plan = []
    for w in lw.WORKLOADS:
        for items in cfg.list_items:
            for v in lw.VARIANTS[w]:
                if v in lw.TF_VARIANTS and v not in cfg.impls:  # cfg.impls has no TensorFlow under --no-tf
                    continue
                plan.append((w, items, v))
    return plan


#: Variants of the ``tensorlist`` section whose ratios have a target: they may run up to ``list_max_seconds`` a call.
LIST_TARGETED = ("numba_ta", "tf_eager", "copy_tuple")


def _predict_seconds(points, n):
    """Predict one call's seconds at `n` from the measured ``(n, seconds)`` `points` (ascending n).

    From the two largest points, the fit ``T = a*n + b*n**2`` with ``a, b >= 0``
    (exact for a linear or a quadratic loop); from one point, ``T1 * (n/n1)**2``
    (an upper bound for a loop at most quadratic).

    Returns
    -------
    (float or None, str)
        The seconds and how they were predicted; ``(None, "")`` without a point.
    """
    if not points:
        return None, ""
    if len(points) == 1:
        ((n1, t1),) = points
        return t1 * (n / n1) ** 2, f"n**2 scaling from n={n1}, an upper bound"
    (n1, t1), (n2, t2) = points[-2:]
    b = (t2 / n2 - t1 / n1) / (n2 - n1)
    a = t1 / n1 - b * n1
    if b < 0:
        a, b = t2 / n2, 0.0
    elif a < 0:
        a, b = 0.0, t2 / n2**2
    return a * n + b * n * n, f"T = a*n + b*n**2 through n={n1} and n={n2}"


def _time_list_case(case, cfg, predicted):
    """Timed calls of a ``tensorlist`` case (the first result checked): at most ``repeat``, within ``list_budget``."""
    if predicted is None or predicted < cfg.warmup_time:  # larger sizes run after smaller ones: already warm
        wl.measure(case, repeat=0, warmup=1, warmup_time=cfg.warmup_time)
    times = []
    enabled = gc.isenabled()
    try:
        for k in range(cfg.repeat):
            state = case.prepare()
            gc.disable()
            t0 = time.perf_counter()
            result = case.run(state)
            t1 = time.perf_counter()
            if enabled:
                gc.enable()
            times.append(t1 - t0)
            if k == 0:
                case.check(result)  # a wrong result is an error, not a time
            del result, state
            if sum(times) >= cfg.list_budget:
                break
    finally:
        if enabled:
            gc.enable()
    return times


def _run_tensorlist(cfg, list_plan, prog):
    """Measure the ``tensorlist`` cases of `list_plan` at every ``cfg.list_ns``.

    A quadratic baseline (``list_workloads.QUADRATIC``) is not run at a size
    where one call is predicted (:func:`_predict_seconds`) to take longer than
    its limit: its time there is the prediction, marked ``"estimated"``.  The
    linear variants always run (a noisy fit would make them look quadratic).
    """
    results = []
    itemsize = np.dtype(cfg.dtype).itemsize
    for w, items, v in list_plan:
        limit = cfg.list_max_seconds if v in LIST_TARGETED else cfg.list_max_seconds / 6
        points = []
        for n in sorted(cfg.list_ns):
            label = f"tensorlist {w} [{items}] n={n}/{lw.VARIANT_LABELS[v]}"
            prog.start(label)
            res = ListResult(f"{w} [{items}]", w, v, n, items, cfg.dtype, nbytes=n * items * itemsize, per_call=n)
            try:
                predicted, basis = _predict_seconds(points, n)
                if v in lw.QUADRATIC and predicted is not None and predicted > limit:
                    res.status, res.estimate = "estimated", predicted
                    res.message = (
                        f"not run: one call predicted at {_fmt_time(predicted)} ({basis}), over the {limit:g} s limit"
                    )
                    text = f"~{_fmt_time(res.per_op_any)} per element, extrapolated ({res.message})"
                else:
                    case = lw.make_list_case(w, v, n, items, cfg.dtype)
                    res.times = _time_list_case(case, cfg, predicted)
                    del case
                    points.append((n, statistics.median(res.times)))
                    text = f"{_fmt_time(res.per_op)} per element"
            except wl.Unavailable as e:
                res.status, res.message, text = "n/a", str(e), f"n/a ({e})"
            except Exception as e:  # a broken variant must not hide the others
                res.status, res.message = "error", f"{type(e).__name__}: {e}"
                text = f"ERROR {res.message}"
            results.append(res)
            prog.finish(label, text)
    return results


def _copyto_reference(cfg):
    """The ``np.copyto`` timing the bulk goals compare with (None without bulk workloads)."""
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


def _short_dtype(name):
    """``f32`` / ``f64`` for float32 / float64 (other names unchanged), as the table writes dtypes."""
    return {"float32": "f32", "float64": "f64"}.get(name, name)


def _size_text(r):
    dt = _short_dtype(r.dtype)
    if r.op == "import":
        return "fresh process"
    if r.op in ("bptt", "bptt_jit"):
        return f"T={r.n} H={r.items} {dt}"
    if r.op in wl.LOOP_OPS:
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
    """The ``numba-ta bench`` table: median times and ratios, then the performance goals, met or missed.

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
    header = ["workload", "size", "per"] + [wl.IMPL_LABELS[i] for i in impls]
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
    if report.results:  # no table for the compiled section alone
        lines += _aligned(table, left=3)
    errors = [r for r in report.results if r.status == "error"]
    if errors:
        lines.append("")
        for r in errors:
            lines.append(f"ERROR {r.workload}/{r.impl}: {r.message}")
    goals = check_goals(report)
    if goals:
        lines += ["", f"goals, met or MISSED in this run (listed under {GOALS_DOC})"]
        gw = max(len(g["goal"]) for g in goals)
        for g in goals:
            mval = "-" if g["measured"] is None else f"{g['measured']:.3g}"
            lines.append(f"  {g['goal']:<{gw}}  {mval:>8} {g['bound']:<8}  {g['status']}")
        if report.copyto:
            c = report.copyto
            lines.append(
                f"  (np.copyto of {_fmt_bytes(c['nbytes'])}: {_fmt_time(c['seconds'])}, "
                f"{c['nbytes'] / c['seconds'] / 1e9:.2f} GB/s; the bulk goals are stated for 64 MiB)"
            )
    if report.compiled:
        lines += ([""] if lines[-1] else []) + format_compiled(report)
    if report.tensorlist:
        lines += ([""] if lines[-1] else []) + format_tensorlist(report)
    return "\n".join(lines)


def _aligned(table, left):
    """Lines of `table` (a header row, then rows of str): columns padded, the first `left` ones left-aligned."""
    widths = [max(len(r[c]) for r in table) for c in range(len(table[0]))]
    lines = []
    for k, row in enumerate(table):
        cells = [row[c].ljust(widths[c]) if c < left else row[c].rjust(widths[c]) for c in range(len(row))]
        lines.append("  ".join(cells).rstrip())
        if k == 0:
            lines.append("  ".join("-" * w for w in widths))
    return lines


def _target_lines(targets, title):
    """Lines of a section's ratios and targets (none without targets); ``~`` marks an estimated measure."""
    if not targets:
        return []
    lines = ["", title]
    tw = max(len(t["ratio"]) for t in targets)
    for t in targets:
        mval = "-" if t["measured"] is None else ("~" if t.get("estimated") else "") + f"{t['measured']:.3g}"
        status = t["status"] if t["bound"] else ""
        lines.append(f"  {t['ratio']:<{tw}}  {mval:>8} {t['bound']:<8}  {status}".rstrip())
    return lines


def _gbps(r):
    """GB/s of one call of `r` (its element bytes over its median time), or None."""
    m = r.median if r is not None and r.status == "ok" else None
    return r.nbytes / m / 1e9 if m else None


def format_compiled(report):
    """The ``compiled`` section of the table: time per element of every variant, then the targets' ratios.

    Parameters
    ----------
    report : Report

    Returns
    -------
    list of str
        The section's lines (none if it was not run).
    """
    if not report.compiled:
        return []
    first = report.compiled[0]
    dt = _short_dtype(first.dtype)
    info = report.compiled_info
    lines = [
        f"compiled code: numba_ta's TensorArray inside @numba.njit, median of {report.config.repeat} runs; "
        f"one timed call is a compiled loop over {first.n} rows of {first.items} {dt} "
        f"(stack: one stack of them; call: {first.n} calls from Python), shown per row (per call)",
    ]
    if info:
        lines.append(
            f"the section took {info['seconds']:.1f} s, {info['first_call_seconds']:.1f} s of it in the first calls "
            f"(compilation or cache load; {info['cache_hits']} of {info['cache_hits'] + info['cache_misses']} "
            "signatures from Numba's cache)"
        )
    variants = [v for v in jw.VARIANT_LABELS if any(r.impl == v for r in report.compiled)]
    header = ["workload", "per"] + [jw.VARIANT_LABELS[v] for v in variants]
    table = [header]
    for w in jw.WORKLOADS:
        rs = [r for r in report.compiled if r.op == w]
        if not rs:
            continue
        row = [w, "call" if w == "call" else "element"]
        for v in variants:
            r = report.get_compiled(w, v)
            row.append("" if r is None else _fmt_time(r.per_op) if r.status == "ok" else "ERROR")
        table.append(row)
    lines += _aligned(table, left=2)
    stack = [(v, _gbps(report.get_compiled("stack", v))) for v in jw.VARIANTS["stack"]]
    if any(g for _, g in stack):
        nbytes = next(r.nbytes for r in report.compiled if r.op == "stack")
        bw = ", ".join(f"{jw.VARIANT_LABELS[v]} {g:.2f} GB/s" for v, g in stack if g)
        lines.append(f"stack bandwidth ({_fmt_bytes(nbytes)} per call): {bw}")
    for w in jw.WORKLOADS:
        what = [f"{jw.VARIANT_LABELS[v]}: {jw.DESCRIPTIONS[(w, v)]}" for v in jw.VARIANTS[w]]
        if report.get_compiled(w, jw.VARIANTS[w][0]) is not None:
            lines.append(f"  {w:<6} " + "; ".join(what))
    for r in report.compiled:
        if r.status != "ok":
            lines.append(f"ERROR compiled {r.op}/{r.impl}: {r.message}")
    lines += _target_lines(
        compiled_targets(report), "compiled code: ratios, and their targets met or MISSED in this run"
    )
    return lines


def _list_variants(report):
    return [v for v in lw.VARIANT_LABELS if any(r.impl == v for r in report.tensorlist)]


def format_tensorlist(report):
    """The ``tensorlist`` section of the table: time per element at every size, then the targets' ratios.

    Parameters
    ----------
    report : Report

    Returns
    -------
    list of str
        The section's lines (none if it was not run).
    """
    if not report.tensorlist:
        return []
    cfg = report.config
    dt = _short_dtype(cfg.dtype)
    lines = [
        f"TensorList: a list of n elements [items] {dt} built one op at a time, then stacked; time per element "
        f"(one call / n), median of up to {cfg.repeat} runs ({cfg.list_budget:g} s of runs at most per cell); "
        f"~ = extrapolated, not run (one call of a quadratic baseline predicted over {cfg.list_max_seconds:g} s, "
        f"{cfg.list_max_seconds / 6:g} s for copy array)",
    ]
    variants = _list_variants(report)
    header = ["workload", "n"] + [lw.VARIANT_LABELS[v] for v in variants]
    table = [header]
    keys = []
    for r in report.tensorlist:
        if (r.workload, r.n) not in keys:
            keys.append((r.workload, r.n))
    for name, n in keys:
        row = [name, str(n)]
        for v in variants:
            r = next((x for x in report.tensorlist if (x.workload, x.n, x.impl) == (name, n, v)), None)
            if r is None:
                row.append("")
            elif r.status == "ok":
                row.append(_fmt_time(r.per_op))
            elif r.status == "estimated":
                row.append("~" + _fmt_time(r.per_op_any))
            else:
                row.append("n/a" if r.status == "n/a" else "ERROR")
        table.append(row)
    lines += _aligned(table, left=1)
    for w in lw.WORKLOADS:
        if any(r.op == w for r in report.tensorlist):
            what = [f"{lw.VARIANT_LABELS[v]}: {lw.DESCRIPTIONS[(w, v)]}" for v in variants]
            lines.append(f"  {w:<4} " + "; ".join(what))
    for r in report.tensorlist:
        if r.status == "estimated":
            lines.append(f"  ~ {r.workload} n={r.n} {lw.VARIANT_LABELS[r.impl]}: {r.message}")
    for r in report.tensorlist:
        if r.status == "error":
            lines.append(f"ERROR tensorlist {r.workload} n={r.n}/{r.impl}: {r.message}")
    lines += _target_lines(
        tensorlist_targets(report),
        "TensorList: ratios, and their targets met or MISSED in this run (~ = from an extrapolated time)",
    )
    return lines


def _target_status(value, bound, ok):
    """A ratio's status: ``"met"`` or ``"MISSED"`` by ``ok(value)``, ``"not measured"``, or ``""`` without a target."""
    if value is None:
        return "not measured" if bound else ""
    return "" if ok is None else ("met" if ok(value) else "MISSED")


def tensorlist_targets(report):
    """The ratios of the ``tensorlist`` section, with the targets they are held to.

    For every workload and element shape: numba_ta's cost per element at the
    largest n is at most 1.5x its cost at the smallest (a loop of ops on a
    list only the loop holds costs O(n) in total); and at the largest n a
    push-back loop and its stack are at least 10x faster with numba_ta than
    with TensorFlow's eager list ops and than ONNX Runtime-style
    copy-per-insert (``copy tuple``).  The other ratios (``set``, ``copy
    array``, ``np list``) are shown without a target.  A ratio computed from
    an extrapolated time is marked ``estimated``.

    Parameters
    ----------
    report : Report

    Returns
    -------
    list of dict
        ``{"ratio", "measured", "bound", "status", "estimated"}``: what is
        compared, its value, the bound (``""`` when there is no target),
        ``"met"``, ``"MISSED"``, ``"not measured"`` or ``""`` (no target), and
        whether an extrapolated time went into it.
    """
    out = []
    if not report.tensorlist:
        return out

    def add(ratio, value, bound="", ok=None, estimated=False):
        status = _target_status(value, bound, ok)
        out.append({"ratio": ratio, "measured": value, "bound": bound, "status": status, "estimated": estimated})

    ns = sorted({r.n for r in report.tensorlist})
    lo, hi = ns[0], ns[-1]
    items_all = sorted({r.items for r in report.tensorlist})
    for w in lw.WORKLOADS:
        for items in items_all:
            a = report.get_list(w, "numba_ta", hi, items)
            if a is None:
                continue
            if hi != lo:
                b = report.get_list(w, "numba_ta", lo, items)
                add(
                    f"{w} [{items}]: numba_ta per element at n={hi} / at n={lo}",
                    _ratio(a, b),
                    "<= 1.5",
                    lambda v: v <= 1.5,
                )
            for base in lw.VARIANTS[w][1:]:
                r = report.get_list(w, base, hi, items)
                if r is None or r.status == "n/a":
                    continue
                value = r.per_op_any / a.per_op if r.per_op_any and a.per_op else None
                name = f"{w} [{items}] n={hi}: {lw.VARIANT_LABELS[base]} time / numba_ta time"
                if w == "push" and base in LIST_TARGETED:
                    add(name, value, ">= 10", lambda v: v >= 10, r.status == "estimated")
                else:
                    add(name, value, estimated=r.status == "estimated")
    return out


def check_goals(report):
    """The project's performance goals, as the report measured them.

    The goals are those of the "Performance goals" list of the documentation's
    Performance page (``docs/performance.rst``); a goal whose workloads the
    report lacks is left out, or "not measured" when an implementation it
    compares with is missing.

    Parameters
    ----------
    report : Report

    Returns
    -------
    list of dict
        ``{"goal", "measured", "bound", "status"}``: what is measured, its
        value, the bound it must meet (``"<= 2"`` ...) and ``"met"``,
        ``"MISSED"`` or ``"not measured"``.
    """
    out = []

    def add(goal, value, bound, ok):
        status = "not measured" if value is None else ("met" if ok(value) else "MISSED")
        out.append({"goal": goal, "measured": value, "bound": bound, "status": status})

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
        if w == "write":  # the goal names tf.TensorArray.write (an eager read is a list lookup)
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
    jit, tff = report.get("bptt_jit", "numba_ta"), report.get("bptt", "tf_function")
    if jit is not None:
        speedup = tff.per_op / jit.per_op if tff is not None and tff.per_op and jit.per_op else None
        add("bptt step compiled (demo --jit): tf.function / numba_ta", speedup, ">= 10", lambda v: v >= 10)
    r = report.get("import", "numba_ta")
    if r is not None:
        add("cold import + first write/read/stack (s)", r.median, "< 1", lambda v: v < 1)
    return out


def compiled_targets(report):
    """The ratios of the ``compiled`` section, with the targets they are held to.

    In one compiled loop over 64-float32 rows: a TensorArray ``write`` takes
    at most 2x a numpy row assignment into a preallocated array and is at
    least 2x faster than ``typed.List.append`` of a copy of the row (for the
    preallocated and the dynamic array); a ``read`` at most 2x a numpy row
    copy; ``stack`` runs at copy bandwidth (at least 0.8x the speed of
    ``arr.copy()`` of the same array, the tolerance of the bulk goals); and a
    call with a TensorArray argument costs at most 1 us more than the same
    call with an ndarray.  The other ratios are shown without a target.

    Parameters
    ----------
    report : Report

    Returns
    -------
    list of dict
        ``{"ratio", "measured", "unit", "bound", "status"}``: what is
        compared, its value (a ratio, or microseconds for the call's
        difference), the bound (``""`` when there is no target) and ``"met"``,
        ``"MISSED"``, ``"not measured"`` or ``""`` (no target).
    """
    out = []
    if not report.compiled:
        return out

    def add(ratio, value, bound="", ok=None, unit="x"):
        status = _target_status(value, bound, ok)
        out.append({"ratio": ratio, "measured": value, "unit": unit, "bound": bound, "status": status})

    cr = report.compiled_ratio
    if report.get_compiled("write", "numba_ta") is not None:
        add("write: TensorArray / numpy row assignment", cr("write", "numba_ta", "numpy"), "<= 2", lambda v: v <= 2)
        add("write: dynamic TensorArray / numpy row assignment", cr("write", "numba_ta_dynamic", "numpy"))
        add("write: typed.List append / TensorArray", cr("write", "typed_list", "numba_ta"), ">= 2", lambda v: v >= 2)
        add(
            "write: typed.List append / dynamic TensorArray",
            cr("write", "typed_list", "numba_ta_dynamic"),
            ">= 2",
            lambda v: v >= 2,
        )
    if report.get_compiled("read", "numba_ta") is not None:
        add("read: TensorArray / numpy row copy", cr("read", "numba_ta", "numpy"), "<= 2", lambda v: v <= 2)
        add("read: typed.List row copy / TensorArray", cr("read", "typed_list", "numba_ta"))
    if report.get_compiled("stack", "numba_ta") is not None:
        add("stack: speed / numpy arr.copy()", cr("stack", "numpy", "numba_ta"), ">= 0.8", lambda v: v >= 0.8)
    ta, arr, none = (report.get_compiled("call", v) for v in ("numba_ta", "numpy", "no_arg"))

    def delta_us(a, b):
        if a is None or b is None or a.per_op is None or b.per_op is None:
            return None
        return (a.per_op - b.per_op) * 1e6

    if ta is not None:
        add("call: f(ta) - g(arr), us per call", delta_us(ta, arr), "<= 1", lambda v: v <= 1, unit="us")
        add("call: g(arr) - h(), us per call", delta_us(arr, none), unit="us")
    return out


def to_json(report):
    """The report as a JSON string (schema 2: the goals are under ``"goals"``).

    With the ``tensorlist`` section, ``"tensorlist"`` holds its sizes
    (``"config"``), its results (as ``"results"`` does, plus ``"estimate"``,
    the extrapolated seconds per call of a case not run, and
    ``"description"``) and its ``"targets"`` (:func:`tensorlist_targets`).
    With the ``compiled`` section, ``"compiled"`` holds its results (as
    ``"results"`` does, plus ``"description"`` and, for ``stack``,
    ``"gbytes_per_second"``), its ``"targets"`` (:func:`compiled_targets`),
    the section's wall time ``"seconds"``, the time of its first calls
    ``"first_call_seconds"`` (compilation or cache load, checked results),
    and the signatures Numba loaded from its cache (``"cache_hits"``) or
    compiled (``"cache_misses"``).

    Parameters
    ----------
    report : Report

    Returns
    -------
    str
    """
    cfg = report.config
    doc = {
        "schema": 2,
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
            w: {i: report.ratio(w, i, "numpy_prealloc") for i in wl.IMPLS if report.get(w, i) is not None}
            for w in report.rows()
        },
        "goals": check_goals(report),
    }
    if report.compiled:
        doc["compiled"] = _compiled_json(report)
    if report.tensorlist:
        doc["tensorlist"] = {
            "config": {
                "list_ns": list(cfg.list_ns),
                "list_items": list(cfg.list_items),
                "list_max_seconds": cfg.list_max_seconds,
                "list_budget": cfg.list_budget,
            },
            "results": [{**r.as_dict(), "description": lw.DESCRIPTIONS[(r.op, r.impl)]} for r in report.tensorlist],
            "targets": tensorlist_targets(report),
        }
    return json.dumps(doc, indent=2, default=_json_default)


def _compiled_json(report):
    results = []
    for r in report.compiled:
        d = r.as_dict()
        d["unit"] = "call" if r.op == "call" else "element"
        d["description"] = jw.DESCRIPTIONS[(r.op, r.impl)]
        if r.op == "stack":
            d["gbytes_per_second"] = _gbps(r)
        results.append(d)
    return {**report.compiled_info, "results": results, "targets": compiled_targets(report)}


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
        bars = ax.bar(xs, ys, width=width * 0.95, label=wl.IMPL_LABELS[impl], color=_COLORS.get(impl), bottom=0)
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


# --------------------------------------------------------------------------- the command line


class UsageError(Exception):
    """Bad input found after parsing; the message is the one line to print."""


class _Parser(argparse.ArgumentParser):
    """ArgumentParser whose errors are one line: ``<prog>: error: <message>``."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}\n")


_BYTE_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}

#: Largest --size: the bulk workloads hold several copies of it at once.
MAX_BENCH_BYTES = 2 << 30


def _byte_size(text):
    """``"64M"``, ``"64MiB"``, ``"4k"``, ``"4096"`` -> bytes (binary units)."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgKMG]?)(?:i?[bB])?\s*", text)
    if not m:
        raise argparse.ArgumentTypeError(f"expected a size such as 4096, 4K, 64M or 1G, got {text!r}")
    value = int(float(m.group(1)) * _BYTE_UNITS[m.group(2).lower()])
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1 byte, got {text!r}")
    if value > MAX_BENCH_BYTES:
        raise argparse.ArgumentTypeError(f"must be at most 2G, got {text!r}")
    return value


def _int_at_least(low, what):
    def parse(text):
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a {what} integer, got {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be a {what} integer, got {text!r}")
        return value

    return parse


_positive_int = _int_at_least(1, "positive")
_nonnegative_int = _int_at_least(0, "non-negative")


def _nonnegative_float(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of seconds, got {text!r}") from None
    if not (value >= 0 and math.isfinite(value)):
        raise argparse.ArgumentTypeError(f"must be a non-negative finite number, got {text!r}")
    return value


def _name_list(choices):
    def parse(text):
        names = [t.strip() for t in text.split(",") if t.strip()]
        bad = [t for t in names if t not in choices]
        if bad or not names:
            raise argparse.ArgumentTypeError(
                f"unknown name {', '.join(map(repr, bad)) or repr(text)}; choose from {', '.join(choices)}"
            )
        return tuple(dict.fromkeys(names))

    return parse


def build_parser(prog="python -m benchmarks.report", epilog=None, bench_dir_help=None):
    """The argument parser of ``numba-ta bench``.

    `prog` starts its messages, `epilog` ends ``--help``; with `bench_dir_help`
    it lists ``--bench-dir DIR`` too (an option ``numba-ta bench`` handles
    before calling :func:`main`).
    """
    parser = _Parser(
        prog=prog,
        description=(
            "Time numba_ta against a numpy list, a preallocated numpy buffer and (when installed) TensorFlow "
            "eager and tf.function; print medians, ratios and the performance goals, met or missed."
        ),
        epilog=epilog,
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument(
        "--quick",
        action="store_true",
        help="small sizes, 3 repeats, 0.1 s warm-up (4M bulk, 1000-element loops, growth to 10^4; TensorList "
        "elements of 4 items only, calls predicted over 3 s extrapolated)",
    )
    size.add_argument("--full", action="store_true", help="also time 10^6 writes into a dynamic array (growth)")
    parser.add_argument(
        "--repeat", type=_positive_int, default=None, metavar="N", help="timed runs per cell, median shown (default: 5)"
    )
    parser.add_argument(
        "--size",
        type=_byte_size,
        default=None,
        metavar="BYTES",
        help="bytes moved by the bulk workloads, e.g. 64M (default: 64M; 4M with --quick)",
    )
    parser.add_argument(
        "--element",
        type=_byte_size,
        default=4 << 10,
        metavar="BYTES",
        help="bytes per element in the bulk workloads (default: 4K)",
    )
    parser.add_argument(
        "--small",
        type=_positive_int,
        default=None,
        metavar="N",
        help="elements written and read one at a time in the write/read loops, and rows (or calls) per timing "
        "in the compiled section (default: 10000)",
    )
    parser.add_argument(
        "--warmup",
        type=_nonnegative_float,
        default=None,
        metavar="SECONDS",
        help="untimed warm-up per case, at least one call (default: 0.5; 0.1 with --quick)",
    )
    parser.add_argument("--dtype", choices=("float32", "float64"), default="float32", help="(default: %(default)s)")
    parser.add_argument(
        "--workloads",
        type=_name_list(WORKLOADS),
        default=WORKLOADS,
        metavar="LIST",
        help=f"comma-separated subset of: {', '.join(WORKLOADS)} (default: all)",
    )
    parser.add_argument(
        "--impls",
        type=_name_list(wl.IMPLS),
        default=wl.IMPLS,
        metavar="LIST",
        help=f"comma-separated subset of: {', '.join(wl.IMPLS)} (default: all available)",
    )
    parser.add_argument("--no-tf", action="store_true", help="skip TensorFlow even if it is installed")
    parser.add_argument(
        "--threads", type=_positive_int, default=None, metavar="N", help="numba threads for the kernels (default: all)"
    )
    parser.add_argument(
        "--parallel-threshold",
        type=_nonnegative_int,
        default=None,
        metavar="ITEMS",
        help="array items from which bulk ops use the parallel kernels (default: numba_ta's setting)",
    )
    parser.add_argument("--json", metavar="FILE", default=None, help="also write all timings to FILE as JSON")
    parser.add_argument(
        "--plot", metavar="FILE.png", default=None, help="also draw a bar chart to FILE.png (needs matplotlib)"
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress display on stderr")
    parser.add_argument(
        "--history",
        metavar="FILE.png",
        default=None,
        help="time nothing: draw the headline ratios of every commit asv recorded (.asv/results) to FILE.png, "
        "a picture that needs no network unlike asv publish (needs matplotlib and asv)",
    )
    parser.add_argument(
        "--machine", default=None, help="with --history: the asv machine name (default: the only one with results)"
    )
    if bench_dir_help is not None:
        parser.add_argument("--bench-dir", metavar="DIR", default=None, help=bench_dir_help)
    return parser


def _check_output_path(option, path):
    parent = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise UsageError(f"{option}: is a directory: {path}")
    if not os.path.isdir(parent):
        raise UsageError(f"{option}: directory does not exist: {parent}")


def config_from_args(args):
    """The :class:`Config` of parsed command-line options (raises UsageError for inconsistent sizes)."""
    quick = args.quick
    cfg = Config(
        repeat=args.repeat or (3 if quick else 5),
        small_n=args.small or (1_000 if quick else 10_000),
        bulk_bytes=args.size or ((4 << 20) if quick else (64 << 20)),
        element_bytes=args.element,
        growth_ns=(1_000, 10_000) if quick else ((10_000, 100_000, 1_000_000) if args.full else (10_000, 100_000)),
        dtype=args.dtype,
        workloads=args.workloads,
        impls=args.impls,
        use_tf=not args.no_tf,
        warmup_time=args.warmup if args.warmup is not None else (0.1 if quick else 0.5),
        list_items=(4,) if quick else (4, 256),
        list_max_seconds=3.0 if quick else 60.0,
        list_budget=1.0 if quick else 10.0,
    )
    itemsize = np.dtype(args.dtype).itemsize
    if cfg.element_bytes < itemsize:
        raise UsageError(f"--element: {cfg.element_bytes} bytes is less than one {args.dtype} ({itemsize} bytes)")
    if cfg.bulk_bytes < cfg.element_bytes:
        raise UsageError(f"--size: {cfg.bulk_bytes} bytes is less than one element (--element {cfg.element_bytes})")
    return cfg


class _Settings:
    """Apply --threads and --parallel-threshold for the run, restoring the previous values."""

    def __init__(self, threads, threshold):
        self.threads, self.threshold = threads, threshold
        self._undo = []

    def __enter__(self):
        if self.threads is not None:
            limit = numba.config.NUMBA_NUM_THREADS
            if self.threads > limit:
                raise UsageError(f"--threads: at most {limit} (NUMBA_NUM_THREADS), got {self.threads}")
            ctx = numba_ta.num_threads(self.threads)
            ctx.__enter__()
            self._undo.append(lambda: ctx.__exit__(None, None, None))
        if self.threshold is not None:
            old = numba_ta.set_parallel_threshold(self.threshold)
            self._undo.append(lambda: numba_ta.set_parallel_threshold(old))
        return self

    def __exit__(self, *exc):
        while self._undo:
            self._undo.pop()()
        return False


def _run_history(args, out):
    """``--history FILE.png``: the headline ratios of the commits asv recorded (:mod:`history`)."""
    from . import history

    _check_output_path("--history", args.history)
    try:
        _require_matplotlib()
    except ImportError:
        raise UsageError("--history: matplotlib is not installed (pip install matplotlib)") from None
    import importlib.util

    if importlib.util.find_spec("asv") is None:
        raise UsageError("--history: asv is not installed (pip install asv)")
    try:
        return history.history(args.history, suite=SUITE_DIR, machine=args.machine, out=out)
    except ValueError as e:
        raise UsageError(f"--history: {e}") from None


def _run_command(args, out, prog):
    if args.history is not None:
        return _run_history(args, out)
    if args.machine is not None:
        raise UsageError("--machine: only with --history")
    cfg = config_from_args(args)
    if args.plot is not None:
        _check_output_path("--plot", args.plot)
        try:
            _require_matplotlib()
        except ImportError:
            raise UsageError("--plot: matplotlib is not installed (pip install matplotlib)") from None
    if args.json is not None:
        _check_output_path("--json", args.json)
    with _Settings(args.threads, args.parallel_threshold):
        report = run(cfg, progress=not args.no_progress)
    print(format_table(report), file=out, flush=True)
    if args.json is not None:
        with open(args.json, "w", encoding="utf-8") as f:
            f.write(to_json(report) + "\n")
        print(f"timings written to {args.json}", file=out)
    if args.plot is not None:
        plot(report, args.plot)
        print(f"chart written to {args.plot}", file=out)
    failed = [r for r in report.results + report.compiled + report.tensorlist if r.status == "error"]
    if failed:
        print(f"{prog}: error: {len(failed)} case(s) failed (see ERROR lines above)", file=sys.stderr)
        return 1
    return 0


def main(argv=None, prog="python -m benchmarks.report", out=None, epilog=None, bench_dir_help=None):
    """Run the benchmark report from command-line arguments (``numba-ta bench`` calls this).

    Parameters
    ----------
    argv : list of str, optional
        The options; ``sys.argv[1:]`` by default.
    prog : str, optional
        The command's name, which starts its usage and error messages.
    out : file, optional
        Where the table goes; ``sys.stdout`` by default.  Progress and errors
        go to ``sys.stderr``.
    epilog : str, optional
        Text at the end of ``--help``.
    bench_dir_help : str, optional
        Help of a ``--bench-dir`` option to list in ``--help`` (see :func:`build_parser`).

    Returns
    -------
    int
        0 on success, 1 if a case failed, 2 for bad options (one
        ``<prog>: error: ...`` line on stderr).  KeyboardInterrupt and
        BrokenPipeError propagate.
    """
    parser = build_parser(prog, epilog, bench_dir_help)
    try:
        args = parser.parse_args(argv)
    except SystemExit as e:  # --help (0) or a usage error (2, already printed)
        return e.code if isinstance(e.code, int) else 2
    try:
        return _run_command(args, out or sys.stdout, prog)
    except UsageError as e:
        print(f"{prog}: error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
