"""Where numba_ta's compile time goes: per compiled function, from Numba's compiler events.

Runs a workload in a fresh Python process with an empty ``NUMBA_CACHE_DIR`` (a new user's
first run, a read-only install, a CI runner) and prints, per function Numba compiled:

- ``n``: how many times it was compiled (one per signature; a ``register_jitable`` body is
  compiled once per process per signature, then linked into each caller);
- ``incl``: seconds from the start to the end of its compilation, the callees' included;
- ``self``: ``incl`` less the compilations of the functions it called (typing, lowering and
  LLVM of its own body);
- ``llvm``: the part of ``self`` spent holding Numba's LLVM lock (optimisation and machine
  code of its library, with the callees' libraries linked in);
- ``typing`` and ``lowering``: Numba's type-inference and lowering passes of the function,
  from the dispatcher's compile metadata (``pipeline_times``), callees' compiles included.

Workloads (``--workload``):

``session``
    import, then a first session of ops: class write, read and stack; raw write and gather;
    a gradient array's summed writes; TensorList push-back and stack.
``demo``
    ``numba-ta demo --steps 30``.
``user-njit``
    a user's ``@numba.njit`` function that fills a dynamic TensorArray and stacks it,
    compiled (not cached) in a process whose engine cache is warm (a first process warms it),
    next to the same function on ``numba.typed.List``.

Usage, from the repository root or from ``asv_bench/``::

    NUMBA_NUM_THREADS=2 python asv_bench/compile_profile.py --workload session [--top 30]

The figures are whole seconds of one process on this machine: compare them within one run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import textwrap

SESSION = """
import numpy as np
from numba_ta import TensorArray, raw_ops
ta = TensorArray(np.float32, size=3, clear_after_read=False)
ta = ta.write(0, np.ones(4, np.float32))
ta.read(0)
ta = ta.write(1, np.ones(4, np.float32)).write(2, np.ones(4, np.float32))
ta.stack()
h, f = raw_ops.TensorArrayV3(size=3, dtype=np.float32, element_shape=[2])
f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=[1.0, 2.0], flow_in=f)
raw_ops.TensorArrayGatherV3(handle=h, indices=[0], flow_in=f, dtype=np.float32)
g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
for _ in range(2):
    gf = raw_ops.TensorArrayWriteV3(handle=g, index=1, value=[0.5, 0.5], flow_in=gf)
l = raw_ops.EmptyTensorList(element_shape=np.array([2], np.int32), max_num_elements=-1,
                            element_dtype=np.float32)
l = raw_ops.TensorListPushBack(input_handle=l, tensor=np.ones(2, np.float32))
raw_ops.TensorListStack(input_handle=l, element_dtype=np.float32,
                        element_shape=np.array([2], np.int32))
"""

DEMO = """
from numba_ta.cli import main
main(["demo", "--steps", "30"])
"""

USER_NJIT = """
import numba
import numpy as np
import numba_ta

@numba.njit
def fill(n):
    ta = numba_ta.TensorArray(np.float32, size=0, dynamic_size=True, element_shape=(4,))
    for i in range(n):
        ta = ta.write(i, np.full(4, i, np.float32))
    return ta.stack()

@numba.njit
def fill_list(lst, n):
    for i in range(n):
        lst.append(np.full(4, i, np.float32))
    out = np.empty((len(lst), 4), np.float32)
    for i in range(len(lst)):
        out[i] = lst[i]
    return out

import time
t = time.perf_counter()
fill(8)
t_ta = time.perf_counter() - t
t = time.perf_counter()
fill_list(numba.typed.List.empty_list(numba.float32[::1]), 8)
t_list = time.perf_counter() - t
print(f"new @njit function compiled and run: TensorArray {t_ta:.2f} s, typed.List {t_list:.2f} s")
"""

# Runs in the child: records Numba's compiler events while the workload runs, then prints JSON.
_PROBE = """
import json, sys, time
from numba.core import event

records = []   # [name, n_sigs, start, end, llvm_seconds_own, children_seconds, typing, lowering]
stack = []

class _Compiles(event.Listener):
    def on_start(self, ev):
        stack.append([ev.data["dispatcher"], time.perf_counter(), 0.0, 0.0])

    def on_end(self, ev):
        disp, t0, llvm, children = stack.pop()
        dt = time.perf_counter() - t0
        if stack:
            stack[-1][3] += dt
        f = getattr(disp, "py_func", None)
        name = f"{f.__module__}.{f.__qualname__}" if f is not None else repr(disp)
        typing = lowering = 0.0
        for cres in list(getattr(disp, "overloads", {}).values())[-1:]:
            times = (cres.metadata or {}).get("pipeline_times", {}).get("nopython", {})
            for key, t in times.items():
                if key.endswith("nopython_type_inference"):
                    typing += t.run
                elif key.endswith("native_lowering"):
                    lowering += t.run
        records.append([name, dt, dt - children, llvm, typing, lowering])

class _Llvm(event.Listener):
    def on_start(self, ev):
        self.t0 = time.perf_counter()

    def on_end(self, ev):
        if stack:
            stack[-1][2] += time.perf_counter() - self.t0

event.register("numba:compile", _Compiles())
event.register("numba:llvm_lock", _Llvm())
t0 = time.perf_counter()
exec(compile(sys.argv[1], "<workload>", "exec"), {"__name__": "__main__"})
total = time.perf_counter() - t0
print("@@PROFILE@@" + json.dumps({"total": total, "records": records}))
"""


def _run(code: str, cache_dir: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    env.setdefault("NUMBA_NUM_THREADS", "2")
    env.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, textwrap.dedent(code)], env=env, capture_output=True, text=True, check=False
    )
    if proc.returncode:
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(f"the workload failed (exit {proc.returncode})")
    out, _, data = proc.stdout.rpartition("@@PROFILE@@")
    return {"output": out, **json.loads(data)}


def profile(workload: str) -> dict:
    """Run `workload` in a fresh process with an empty Numba cache; return its compile records.

    Parameters
    ----------
    workload : {"session", "demo", "user-njit"}
        What to run (see the module docstring).

    Returns
    -------
    dict
        ``total`` (seconds the workload took, import included for ``session``), ``output``
        (what it printed) and ``records``: one ``[name, incl, self, llvm, typing, lowering]``
        list per compilation, in seconds.
    """
    code = {"session": SESSION, "demo": DEMO, "user-njit": USER_NJIT}[workload]
    with tempfile.TemporaryDirectory() as cache:
        if workload == "user-njit":  # warm the engine's cache first; the user functions are not cached
            _run(code, cache)
        return _run(code, cache)


def table(result: dict, top: int) -> str:
    """Return the Markdown table of `result` (:func:`profile`): one row per function, by ``self`` time."""
    rows: dict[str, list[float]] = {}
    for name, incl, own, llvm, typing, lowering in result["records"]:
        r = rows.setdefault(name, [0, 0.0, 0.0, 0.0, 0.0, 0.0])
        r[0] += 1
        r[1] += incl
        r[2] += own
        r[3] += llvm
        r[4] += typing
        r[5] += lowering
    ranked = sorted(rows.items(), key=lambda kv: -kv[1][2])
    own_total = sum(r[2] for r in rows.values())
    llvm_total = sum(r[3] for r in rows.values())
    lines = [
        f"workload total {result['total']:.1f} s; compiling {own_total:.1f} s in {sum(r[0] for r in rows.values())} "
        f"compilations of {len(rows)} functions, {llvm_total:.1f} s of it in LLVM",
        "",
        "| function | n | self (s) | llvm (s) | incl (s) | typing (s) | lowering (s) |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, (n, incl, own, llvm, typing, lowering) in ranked[:top]:
        lines.append(f"| {name} | {n} | {own:.2f} | {llvm:.2f} | {incl:.2f} | {typing:.2f} | {lowering:.2f} |")
    rest = ranked[top:]
    if rest:
        lines.append(f"| ({len(rest)} more) | {sum(r[0] for _, r in rest)} | {sum(r[2] for _, r in rest):.2f} "
                     f"| {sum(r[3] for _, r in rest):.2f} | | | |")  # fmt: skip
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python compile_profile.py [--workload W] [--top N] [--json FILE]``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workload", choices=("session", "demo", "user-njit"), default="session")
    parser.add_argument("--top", type=int, default=25, help="rows to print (default: %(default)s)")
    parser.add_argument("--json", metavar="FILE", help="also write the raw records to FILE")
    args = parser.parse_args(argv)
    result = profile(args.workload)
    if args.workload == "user-njit":
        print(result["output"].strip().splitlines()[-1])
    print(table(result, args.top))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f)
    return 0


if __name__ == "__main__":
    sys.exit(main())
