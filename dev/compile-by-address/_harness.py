"""Shared helpers of the compile-by-address measurements (not part of the package).

* :func:`child` runs a snippet (a function of this folder's scripts) in a fresh Python process
  with a given ``NUMBA_CACHE_DIR`` and returns the JSON it prints on its last line.
* :class:`Breakdown` splits a compile's wall time into exclusive phases by patching Numba's
  passes and code library methods (a stack of timers: a nested phase pauses its parent):
  ``typing`` (NopythonTypeInference; nested compilations of overloads run inside it and are
  accounted to their own phases), ``lowering`` (NativeLowering: Numba IR -> LLVM IR), ``llvm_fn``
  (per-function passes on each library's IR), ``llvm_module`` (the module passes run on each
  library's final module, after its callees' modules are linked in), ``llvm_codegen`` (MCJIT:
  machine code), ``llvm_link`` (the rest of ``finalize``: parsing, linking, verifying) and
  ``other`` (everything else: bytecode, untyped passes, dispatcher work).
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def child(script, mode, cache_dir, extra_env=None, timeout=1800):
    """Run ``python <script> --child <mode>`` with ``NUMBA_CACHE_DIR=cache_dir``; return its last-line JSON."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir, PYTHONPATH=HERE + os.pathsep + os.environ.get("PYTHONPATH", ""))
    env.setdefault("NUMBA_NUM_THREADS", "2")
    if extra_env:
        env.update(extra_env)
    p = subprocess.run(
        [sys.executable, os.path.join(HERE, script), "--child", mode],
        env=env, capture_output=True, text=True, timeout=timeout, cwd=ROOT,
    )
    if p.returncode:
        return {"error": (p.stderr or p.stdout)[-3000:]}
    last = [ln for ln in p.stdout.splitlines() if ln.startswith("{")]
    return json.loads(last[-1]) if last else {"error": p.stdout[-2000:] + p.stderr[-2000:]}


def new_cache():
    return tempfile.mkdtemp(prefix="nb-cache-")


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


class Breakdown:
    """Exclusive compile-phase timers (see the module docstring). Use as a context manager."""

    def __init__(self):
        self.t = {}
        self.n = {}
        self._stack = []
        self._patches = []

    def _wrap(self, owner, name, phase):
        orig = getattr(owner, name)
        bd = self

        def wrapper(*a, **k):
            now = time.perf_counter()
            if bd._stack:
                ph, t0 = bd._stack[-1]
                bd.t[ph] = bd.t.get(ph, 0.0) + now - t0
            bd._stack.append([phase, now])
            try:
                return orig(*a, **k)
            finally:
                end = time.perf_counter()
                ph, t0 = bd._stack.pop()
                bd.t[ph] = bd.t.get(ph, 0.0) + end - t0
                bd.n[ph] = bd.n.get(ph, 0) + 1
                if bd._stack:
                    bd._stack[-1][1] = end

        wrapper.__wrapped__ = orig
        setattr(owner, name, wrapper)
        self._patches.append((owner, name, orig))

    def __enter__(self):
        from numba.core import codegen, typed_passes

        self._wrap(typed_passes.NopythonTypeInference, "run_pass", "typing")
        self._wrap(typed_passes.NativeLowering, "run_pass", "lowering")
        self._wrap(codegen.CPUCodeLibrary, "add_ir_module", "llvm_link")
        self._wrap(codegen.CPUCodeLibrary, "_optimize_functions", "llvm_fn")
        self._wrap(codegen.CPUCodeLibrary, "finalize", "llvm_link")
        self._wrap(codegen.CPUCodeLibrary, "_optimize_final_module", "llvm_module")
        self._wrap(codegen.JITCodeLibrary, "_finalize_specific", "llvm_codegen")
        self.t0 = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.total = time.perf_counter() - self.t0
        for owner, name, orig in reversed(self._patches):
            setattr(owner, name, orig)
        self.t["other"] = self.total - sum(self.t.values())
        return False

    def summary(self):
        out = {k: round(v, 3) for k, v in sorted(self.t.items())}
        out["total"] = round(self.total, 3)
        out["finalized_libraries"] = self.n.get("llvm_codegen", 0)
        out["typed_functions"] = self.n.get("typing", 0)
        return out


def final_module_stats(dispatcher):
    """Defined functions and IR lines of the (only) overload's final linked module."""
    lib = next(iter(dispatcher.overloads.values())).library
    mod = lib._final_module
    nfn = sum(1 for f in mod.functions if not f.is_declaration)
    return {"defined_functions": nfn, "ir_lines": str(mod).count("\n")}


def emit(d):
    print(json.dumps(d), flush=True)
