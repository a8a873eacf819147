"""Compile numba_ta's engine and kernels into a folder: the cache shipped with the package.

``setup.py`` runs this while ``pip install .`` builds the package, with the built
package's ``numba_ta/_compiled`` as the folder, so that a new user's first ops load
compiled code instead of compiling it (85 to 100 s on 2 cores, in two processes).
:mod:`numba_ta.core.cache` reads the folder; what it does not hold (another CPU, another
Numba, changed sources, a signature this workload does not reach) is compiled at first
use as before.

Usage::

    python -m numba_ta.core.precompile FOLDER [--jobs N]

The workload runs every op of the class, of :mod:`numba_ta.raw_ops` (TensorArray and
TensorList ops) and of the gradient arrays on small arrays, with the serial kernels and
again with the parallel ones (threshold 0), for a float, an integer and a bool dtype;
the C functions through which the engine calls the parallel kernels and the gradient sums
(:mod:`numba_ta.core.ckernels`) are cached into the folder too.
Errors are part of it: an op that fails compiles the same code as one that succeeds.
Last, a small user-style ``@numba.njit`` function calls every method of a TensorArray in
compiled code, which compiles the engine entries those methods call by symbol
(:mod:`numba_ta.jit.abi`; the user-style function itself is not cached).  The folder's
``manifest.json`` (:func:`numba_ta.core.cache.write_manifest`) records the Numba, llvmlite,
numpy and Python versions and the CPU the code was built for.

The ops and the user-style function compile different code in about the same time, so on
two or more CPUs they run in two processes at once (``--jobs``, :data:`WORKLOADS`).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time


def _attempt(fn, *args, **kwargs):
    """Call ``fn``; an :class:`~numba_ta.errors.OpError` is part of the workload (it compiles the same code)."""
    from numba_ta.errors import OpError

    try:
        return fn(*args, **kwargs)
    except OpError:
        return None


def _tensor_array_ops(dtype) -> None:
    """Run every op of the class, of the TensorArray raw ops and of the gradient arrays on small arrays of ``dtype``."""
    import numpy as np

    from numba_ta import raw_ops
    from numba_ta.tensor_array.array import TensorArray

    data = np.arange(24).reshape(4, 6).astype(dtype)
    flat = data.reshape(-1)
    ta = TensorArray(dtype, size=4, clear_after_read=False).unstack(data)
    ta.stack()
    ta.gather([3, 1])
    ta.concat()
    ta.read(2)
    TensorArray(dtype, size=4).scatter([2, 0, 1, 3], data)
    dyn = TensorArray(dtype, size=0, dynamic_size=True)
    for i in range(3):
        dyn = dyn.write(i, data[i])
    dyn.stack()
    ragged = TensorArray(dtype, size=3, clear_after_read=False, infer_shape=False)
    ragged.split(flat, [4, 8, 12]).concat()
    TensorArray(dtype, size=4, clear_after_read=False).split(flat, [6, 6, 6, 6]).concat()
    g = TensorArray(dtype, size=4).grad("gradients")
    _attempt(lambda g=g, d=data: g.scatter([0, 1, 2, 3], d).scatter([0, 1, 2, 3], d))
    _attempt(lambda g=g, d=data: g.write(0, d[0]).write(0, d[0]))
    fw = TensorArray(dtype, size=3, infer_shape=False).split(flat, [4, 8, 12])
    gs = fw.grad("gradients")
    _attempt(lambda gs=gs, v=flat: gs.split(v, [4, 8, 12]).split(v, [4, 8, 12]))
    # a gradient scatter of SUM_BATCH rows: the serial sums' C function of the dtype
    rows = np.zeros((256, 2), dtype)
    gb = TensorArray(dtype, size=256).grad("gradients")
    _attempt(lambda gb=gb, r=rows: gb.scatter(np.arange(256), r).scatter(np.arange(256), r))
    _attempt(ta.read, 7)
    ta.close()
    _attempt(ta.read, 0)
    # raw ops: the same engine entries through the op layer, and a gradient array of it
    h, f = raw_ops.TensorArrayV3(size=3, dtype=dtype, element_shape=[6])
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=data[0], flow_in=f)
    raw_ops.TensorArrayGatherV3(handle=h, indices=[0], flow_in=f, dtype=dtype)
    gh, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
    raw_ops.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=[2], source="shaped")
    _attempt(raw_ops.TensorArrayWriteV3, handle=gh, index=1, value=data[1], flow_in=gf)
    _attempt(raw_ops.TensorArrayWriteV3, handle=gh, index=1, value=data[1], flow_in=gf)


def _tensor_list_ops(dtype) -> None:
    """Run every TensorList raw op on small arrays of ``dtype``."""
    import numpy as np

    from numba_ta import raw_ops

    data = np.arange(24).reshape(4, 6).astype(dtype)
    flat = data.reshape(-1)
    es = np.array([6], np.int32)
    lst = raw_ops.EmptyTensorList(element_shape=es, max_num_elements=-1, element_dtype=dtype)
    for i in range(3):
        lst = raw_ops.TensorListPushBack(input_handle=lst, tensor=data[i])
    raw_ops.TensorListStack(input_handle=lst, element_dtype=dtype, element_shape=es)
    lst = raw_ops.TensorListSetItem(input_handle=lst, index=1, item=data[3])
    raw_ops.TensorListGetItem(input_handle=lst, index=1, element_shape=es, element_dtype=dtype)
    raw_ops.TensorListPopBack(input_handle=lst, element_shape=es, element_dtype=dtype)
    raw_ops.TensorListResize(input_handle=lst, size=5)
    ft = raw_ops.TensorListFromTensor(tensor=data, element_shape=es)
    raw_ops.TensorListGather(input_handle=ft, indices=[2, 0], element_shape=es, element_dtype=dtype)
    raw_ops.TensorListConcatV2(
        input_handle=raw_ops.TensorListSplit(tensor=flat, element_shape=np.array([-1], np.int32),
                                             lengths=np.array([4, 8, 12], np.int64)),
        element_shape=np.array([-1], np.int32), leading_dims=np.zeros(0, np.int64), element_dtype=dtype,
    )  # fmt: skip


def _compiled_ops() -> None:
    """Compile and run a user-style ``@njit`` function calling every method: the entries of :mod:`numba_ta.jit.abi`."""
    import numba
    import numpy as np

    from numba_ta.tensor_array.array import TensorArray

    if getattr(numba.config, "DISABLE_JIT", False):
        return

    @numba.njit
    def user(ta, data, idx, flat, lens):
        ta = ta.unstack(data)
        r = ta.read(1)
        g = ta.gather(idx)
        s = ta.stack()
        n = ta.size()
        es = ta.element_shape
        made = TensorArray(np.float32, size=2, dynamic_size=True, element_shape=(None,))
        made = made.write(0, r).write(3, r)
        made = made.scatter(np.array([1, 2]), data[:2])
        t = made.stack()
        parts = TensorArray(np.float32, size=3, infer_shape=False, element_shape=(None,)).split(flat, lens)
        return ta, r.sum() + g.sum() + s.sum() + t.sum() + parts.concat().sum() + n + es[0]

    data = np.arange(24, dtype=np.float32).reshape(4, 6)
    ta = TensorArray(np.float32, size=4, clear_after_read=False, element_shape=[6])
    user(ta, data, np.array([3, 1]), data.reshape(-1), np.array([4, 8, 12]))


def _engine_workload() -> None:
    """Every op of the Python layer, serial kernels then parallel ones, for each dtype (see the module docstring)."""
    import numpy as np

    from numba_ta.core import config as _config

    old = _config.PARALLEL_MIN_ELEMENTS
    try:
        for threshold in (1 << 62, 0):
            _config.PARALLEL_MIN_ELEMENTS = threshold
            for dtype in (np.float32, np.float64, np.int64, np.bool_):
                _tensor_array_ops(dtype)
                _tensor_list_ops(dtype)
    finally:
        _config.PARALLEL_MIN_ELEMENTS = old


#: The workload's two parts, which take about as long alone in a fresh process (95 and 94 s of
#: compiling on this project's 2-core machine; 141 s one after the other, in one process): the
#: compiled entries inline the engine functions that the Python layer's entries inline too, and a
#: process compiles those once (~48 s).  ``--jobs 2`` runs the parts in two processes at once, each
#: compiling them, and takes about as long as the longer part.
WORKLOADS = {"engine": _engine_workload, "entries": _compiled_ops}


def _default_jobs() -> int:
    """Return the CPUs this process may run on, at most one per workload; 1 without ``fcntl`` (the saves' lock)."""
    try:
        import fcntl  # noqa: F401
    except ImportError:  # pragma: no cover - not POSIX
        return 1
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # pragma: no cover - not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, len(WORKLOADS)))


def _parser():
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m numba_ta.core.precompile",
        description="Compile numba_ta's engine and kernels into FOLDER (the cache shipped with the package).",
    )
    parser.add_argument("folder", help="the folder to compile into (the built package's numba_ta/_compiled)")
    parser.add_argument(
        "--jobs", type=int, default=None, metavar="N",
        help=f"processes compiling at once, 1 to {len(WORKLOADS)} (default: the CPUs available, at most "
             f"{len(WORKLOADS)})",
    )  # fmt: skip
    parser.add_argument("--workload", choices=sorted(WORKLOADS), help=argparse.SUPPRESS)  # one part, no manifest
    return parser


def main(argv: list[str] | None = None) -> int:
    """Compile the workload's code into a folder; return the exit status.

    With ``--jobs 2`` (the default on two or more CPUs) the workload's two parts
    (:data:`WORKLOADS`) run in two processes at once, saving into the same folder (each
    save under a file lock: :func:`numba_ta.core.cache.KernelCache.save_entry`); the
    manifest is written when both have finished.

    Parameters
    ----------
    argv : list of str, optional
        ``FOLDER [--jobs N]`` (``sys.argv[1:]`` by default).

    Returns
    -------
    int
        0 on success; 2 for bad arguments; a part's non-zero exit status if one failed.
    """
    try:
        args = _parser().parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as e:  # argparse exits 2 on bad arguments, 0 for --help
        return int(e.code or 0)
    if args.jobs is not None and not 1 <= args.jobs <= len(WORKLOADS):
        print(f"python -m numba_ta.core.precompile: --jobs must be 1 to {len(WORKLOADS)}", file=sys.stderr)
        return 2
    folder = os.path.abspath(args.folder)
    os.environ["NUMBA_TA_PRECOMPILE_INTO"] = folder  # read by numba_ta.core.cache (and by the other part's process)
    if args.workload is not None:
        WORKLOADS[args.workload]()
        return 0
    jobs = args.jobs or _default_jobs()
    t0 = time.perf_counter()
    print(f"numba_ta: compiling the engine and kernels into {args.folder} ({jobs} process{'es' if jobs > 1 else ''}, "
          "one to three minutes) ...", flush=True)  # fmt: skip
    os.makedirs(folder, exist_ok=True)
    if jobs == 1:
        for workload in WORKLOADS.values():
            workload()
    else:
        import subprocess

        others = [
            subprocess.Popen([sys.executable, "-m", "numba_ta.core.precompile", folder, "--workload", name])
            for name in list(WORKLOADS)[1:]
        ]
        try:
            WORKLOADS["engine"]()
        finally:
            codes = [p.wait() for p in others]
        failed = [code for code in codes if code]
        if failed:
            print(f"numba_ta: a part of the compile failed (exit status {failed[0]})", file=sys.stderr)
            return failed[0]
    from numba_ta.core import cache as _cache

    with contextlib.suppress(FileNotFoundError):
        os.remove(os.path.join(folder, _cache.BUILD_LOCK))  # not part of the shipped code
    _cache.write_manifest(folder)  # what the code was built for: a process of another Numba or CPU says so
    n = len([p for p in os.listdir(folder) if p.endswith(".nbi")])
    print(f"numba_ta: {n} compiled functions cached in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
