"""Compile numba_ta's engine and kernels into a folder: the cache shipped with the package.

``setup.py`` runs this while ``pip install .`` builds the package, with the built
package's ``numba_ta/_compiled`` as the folder, so that a new user's first ops load
compiled code instead of compiling it (75 to 150 s on 2 cores).
:mod:`numba_ta.core.cache` reads the folder; what it does not hold (another CPU, another
Numba, changed sources, a signature this workload does not reach) is compiled at first
use as before.

Usage::

    python -m numba_ta.core.precompile FOLDER

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
"""

from __future__ import annotations

import os
import sys
import time


def _ops() -> None:
    """Run the workload (see the module docstring)."""
    import numpy as np

    from numba_ta import raw_ops
    from numba_ta.core import config as _config
    from numba_ta.errors import OpError
    from numba_ta.tensor_array.array import TensorArray

    def attempt(fn, *args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except OpError:
            return None

    old = _config.PARALLEL_MIN_ELEMENTS
    try:
        for threshold in (1 << 62, 0):
            _config.PARALLEL_MIN_ELEMENTS = threshold
            for dtype in (np.float32, np.float64, np.int64, np.bool_):
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
                attempt(lambda g=g, d=data: g.scatter([0, 1, 2, 3], d).scatter([0, 1, 2, 3], d))
                attempt(lambda g=g, d=data: g.write(0, d[0]).write(0, d[0]))
                fw = TensorArray(dtype, size=3, infer_shape=False).split(flat, [4, 8, 12])
                gs = fw.grad("gradients")
                attempt(lambda gs=gs, v=flat: gs.split(v, [4, 8, 12]).split(v, [4, 8, 12]))
                # a gradient scatter of SUM_BATCH rows: the serial sums' C function of the dtype
                rows = np.zeros((256, 2), dtype)
                gb = TensorArray(dtype, size=256).grad("gradients")
                attempt(lambda gb=gb, r=rows: gb.scatter(np.arange(256), r).scatter(np.arange(256), r))
                attempt(ta.read, 7)
                ta.close()
                attempt(ta.read, 0)
                # raw ops: the same engine entries through the op layer, and a gradient array of it
                h, f = raw_ops.TensorArrayV3(size=3, dtype=dtype, element_shape=[6])
                f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=data[0], flow_in=f)
                raw_ops.TensorArrayGatherV3(handle=h, indices=[0], flow_in=f, dtype=dtype)
                gh, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
                raw_ops.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=[2], source="shaped")
                attempt(raw_ops.TensorArrayWriteV3, handle=gh, index=1, value=data[1], flow_in=gf)
                attempt(raw_ops.TensorArrayWriteV3, handle=gh, index=1, value=data[1], flow_in=gf)
                # TensorList ops
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
    finally:
        _config.PARALLEL_MIN_ELEMENTS = old
    _compiled_ops()


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


def main(argv: list[str] | None = None) -> int:
    """Compile the workload's code into the folder ``argv[0]``; return the exit status.

    Parameters
    ----------
    argv : list of str, optional
        ``[FOLDER]`` (``sys.argv[1:]`` by default).

    Returns
    -------
    int
        0 on success, 2 without a folder.
    """
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m numba_ta.core.precompile FOLDER", file=sys.stderr)
        return 2
    os.environ["NUMBA_TA_PRECOMPILE_INTO"] = os.path.abspath(argv[0])  # read by numba_ta.core.cache
    t0 = time.perf_counter()
    where = argv[0]
    print(f"numba_ta: compiling the engine and kernels into {where} (one to three minutes on 2 cores) ...", flush=True)
    _ops()
    from numba_ta.core import cache as _cache

    _cache.write_manifest(argv[0])  # what the code was built for: a process of another Numba or CPU says so
    n = len([p for p in os.listdir(argv[0]) if p.endswith(".nbi")]) if os.path.isdir(argv[0]) else 0
    print(f"numba_ta: {n} compiled functions cached in {time.perf_counter() - t0:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
