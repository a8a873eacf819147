"""Seeded random TensorArray op programs, shared by the fuzzers.

:func:`make_program` turns a seed into a list of :class:`FuzzStep` (op name, keyword
arguments with symbolic handles and flows, output symbols, whether TensorFlow would
crash on it).  The generator steers itself with the plain-Python reference model
(``tests/helpers/reference.py``): every generated step is applied to a private
:class:`~reference.Reference`, and the next step is drawn knowing the arrays' sizes,
element states and shapes, so programs mix mostly-valid operations (writes to unwritten
slots, reads of written ones, gradient arrays of written forward arrays) with every kind
of error (double writes, reads after clears, out-of-range indices, dtype and shape
mismatches, closed arrays, gradients of gradients, bad ``shape_to_prepend`` ...).
A program depends on its seed only, never on the backend that runs it.

Users:

* ``tests/test_fuzz_tf.py`` converts the steps to ``oracle_util.S`` and runs them through
  ``tf.raw_ops`` (eager) and numba_ta, comparing op by op;
* ``tests/test_no_crash.py`` runs a batch of programs through numba_ta and the reference
  only, in a subprocess under ``python -X faulthandler`` with ``NUMBA_BOUNDSCHECK=1``
  (``python -m tests.helpers.fuzz_programs --programs N``, from the repository root).

Symbols: arrays are ``t<k>`` (forward) and ``g<k>`` (gradient); ``<sym>_f`` is the flow
the creating op returned (later write/scatter/split ops rebind it to their flow_out).
"""

from __future__ import annotations

import random
import sys
from typing import Any, NamedTuple

import numpy as np

from numba_ta import raw_ops
from tests.helpers.reference import Reference

__all__ = ["FuzzStep", "create_kwargs", "make_program", "partial_shape", "run_numba_only", "shape_like", "main"]

DTYPES = ["float32", "int32", "float64", "bool", "int64", "float16", "complex64", "uint8", "int8", "complex128"]
COMMON = DTYPES[:3]
BASES = [(), (1,), (2,), (3,), (2, 2), (0,), (1, 0), (2, 1, 2), (3, 1)]
SOURCES = ["gradients", "gradients_1", "pfor", ""]
WEIGHTS = {
    "Write": 28,
    "Read": 18,
    "Gather": 10,
    "Scatter": 10,
    "Concat": 6,
    "Split": 7,
    "Size": 3,
    "Close": 2,
    "Grad": 6,
    "GradWithShape": 4,
}


def typed_values(ints, dtype, shape):
    """Small integers as a value of ``dtype`` and ``shape``: complex values get an imaginary
    part, unsigned ones the absolute value (so every dtype sees exact, varied sums)."""
    v = np.array(ints, dtype=np.int64).reshape(shape)
    dt = np.dtype(dtype)
    if dt.kind == "c":
        v = v + 1j * np.roll(v, 1)
    elif dt.kind == "u":
        v = np.abs(v)
    return v.astype(dt)


def shape_like(r, shape, bases, cuts):
    """A value shape for an element of base shape ``shape``, drawn from the ``random.Random`` ``r``.

    With ``cuts = (c0, c1, c2, c3)``, a draw ``x``: below ``c0`` (or for a scalar ``shape``),
    ``shape`` itself, or one of ``bases`` when ``x >= c1``; else, below ``c2``, another leading
    dimension (ragged storage); below ``c3``, other trailing dimensions; else one more dimension.
    """
    x = r.random()
    if x < cuts[0] or not shape:
        return tuple(shape) if x < cuts[1] else r.choice(bases)
    if x < cuts[2]:  # other leading dimension: ragged storage
        return (r.randint(0, 3),) + tuple(shape[1:])
    if x < cuts[3]:  # other trailing dimensions
        return tuple(shape[:1]) + tuple(d + 1 for d in shape[1:]) if len(shape) > 1 else (shape[0] + 1,)
    return tuple(shape) + (1,)


def partial_shape(r, shape):
    """A random ``element_shape`` argument for an array whose values have ``shape``.

    Drawn from the ``random.Random`` ``r``: unknown (``None``), ``shape`` itself, ``shape``
    with some dimensions unknown, or a short shape of its own (often incompatible).
    """
    x = r.random()
    if x < 0.25:
        return None
    if x < 0.5:
        return list(shape)
    if x < 0.85:
        return [d if r.random() < 0.5 else None for d in shape]
    return [r.randint(0, 3) for _ in range(r.randint(0, 2))]


def create_kwargs(r, size, dtype, shape, names):
    """The keywords of a random ``TensorArrayV3`` of ``size`` and ``dtype`` whose values have ``shape``.

    Drawn from the ``random.Random`` ``r``: an ``element_shape`` (:func:`partial_shape`), the
    three flags, and now and then a ``tensor_array_name`` out of ``names``.
    """
    kw = dict(
        size=size,
        dtype=dtype,
        element_shape=partial_shape(r, shape),
        dynamic_size=r.random() < 0.4,
        clear_after_read=r.random() < 0.6,
        identical_element_shapes=r.random() < 0.4,
    )
    if r.random() < 0.15:
        kw["tensor_array_name"] = r.choice(names)
    return kw


#: Short op names ("Write", "GradWithShape", "V3") -> the raw ops' names ("TensorArrayWriteV3" ...).
FULL = {
    name.removeprefix("TensorArray").removesuffix("V3") or "V3": name
    for name in raw_ops.__all__
    if name.startswith("TensorArray")  # (raw_ops also has the TensorList ops)
}


class FuzzStep(NamedTuple):
    """One op of a program: ``op`` is the short name (``"Write"``), ``kwargs`` symbolic."""

    op: str
    kwargs: dict
    out: Any = None
    tf_crash: bool = False

    def __repr__(self):
        args = ", ".join(f"{k}={_short(v)}" for k, v in self.kwargs.items())
        extra = f", out={self.out!r}" if self.out is not None else ""
        extra += ", tf_crash=True" if self.tf_crash else ""
        return f"S({self.op!r}, {args}{extra})"


def _short(v):
    if isinstance(v, np.ndarray):
        if v.size == 0:
            return f"np.zeros({v.shape!r}, {v.dtype.name!r})"
        return f"np.array({v.tolist()!r}, {v.dtype.name!r})"
    return repr(v)


# --------------------------------------------------------------------------------------
# the generator


class _Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.ref = Reference()
        self.handles = {}  # sym -> RefHandle
        self.info = {}  # sym -> dict(dtype, base, kind, fwd)
        self.n = 0

    # -- helpers ----------------------------------------------------------------------
    def state(self, sym):
        return self.ref.state(self.handles[sym])

    def live(self):
        return [s for s in self.handles if not self.state(s)["closed"]]

    def shape_like(self, shape):
        return shape_like(self.r, shape, BASES, (0.78, 0.93, 0.9, 0.96))

    def value(self, dtype, shape, exact=False):
        r = self.r
        if not exact:
            if r.random() < 0.06:
                dtype = r.choice(DTYPES)
            shape = self.shape_like(shape)
        n = int(np.prod(shape, dtype=np.int64))
        v = typed_values([r.randint(-3, 9) for _ in range(n)], dtype, shape)
        dt = v.dtype
        if dt.kind == "f" and n and r.random() < 0.08:  # non-finite values travel unchanged
            v.reshape(-1)[r.randrange(n)] = r.choice([np.inf, -np.inf, np.nan, -0.0])
        if r.random() < 0.06 and dtype in ("float32", "int32", "bool"):
            return v.tolist()  # Python values: float -> float32, int -> int32, as TF
        return v

    def elem_shape_for(self, st, base):
        es = st["element_shape"]
        if es is not None and all(d is not None for d in es):
            return tuple(es)
        if es is not None and len(es) == len(base):
            return tuple(b if d is None else d for d, b in zip(es, base, strict=True))
        return tuple(base)

    def pick_index(self, st, want, grow=False):
        """An index; ``want`` is a string of element-state letters that would succeed."""
        r = self.r
        n = st["size"]
        good = [i for i, c in enumerate(st["states"]) if c in want]
        if good and r.random() < 0.75:
            return r.choice(good)
        x = r.random()
        if grow and x < 0.5:
            return n + r.randint(0, 4)
        if x < 0.25:
            return -r.randint(1, 3)
        if x < 0.6:
            return n + r.randint(0, 2)
        return r.randrange(max(n, 1))

    def flow(self, sym):
        return f"{sym}_f" if self.r.random() < 0.85 else float(self.r.choice([0.0, -1.5, 3.0, 42.0]))

    # -- steps -------------------------------------------------------------------------
    def create(self):
        r = self.r
        sym = f"t{self.n}"
        self.n += 1
        dtype = r.choice(COMMON) if r.random() < 0.7 else r.choice(DTYPES)
        base = r.choice(BASES)
        kw = create_kwargs(r, r.choice([0, 1, 2, 3, 3, 4, 5]), dtype, base, ["foo", "TensorArrayV3", "a_1"])
        self.info[sym] = dict(dtype=dtype, base=base, kind="fwd", fwd=sym)
        return FuzzStep("V3", kw, (sym, f"{sym}_f"))

    def next(self):
        r = self.r
        live = self.live()
        if not live or r.random() < 0.07:
            return self.create()
        # closed arrays are still fair game now and then (T1)
        sym = r.choice(list(self.handles)) if r.random() < 0.05 else r.choice(live)
        info = self.info[sym]
        st = self.state(sym)
        dt = info["dtype"]
        rdt = dt if r.random() < 0.93 else r.choice(DTYPES)
        f = self.flow(sym)
        grad = info["kind"] == "grad"
        base = self.elem_shape_for(st, info["base"])
        op = r.choices(list(WEIGHTS), list(WEIGHTS.values()))[0]
        if op in ("Write", "Scatter") and not grad and not st["dynamic_size"] and "U" not in st["states"]:
            op = r.choice([op, "Read", "Gather", "Concat", "Grad"])  # mostly do something useful with a full array
        if op == "Write":
            i = self.pick_index(st, "WZA" if grad else "U", grow=st["dynamic_size"])
            shape = st["shapes"][i] if grad and 0 <= i < st["size"] and st["states"][i] != "U" else base
            return FuzzStep("Write", dict(handle=sym, index=i, value=self.value(dt, shape), flow_in=f), f"{sym}_f")
        if op == "Read":
            i = self.pick_index(st, "WZAR" + ("U" if st["element_shape"] is not None else ""))
            if grad and r.random() < 0.15:
                i = st["size"] + r.randint(0, 3)  # gradient arrays grow on reads past the end
            return FuzzStep("Read", dict(handle=sym, index=i, flow_in=f, dtype=rdt))
        if op == "Gather":
            k = r.randint(0, 4)
            idx = [self.pick_index(st, "WZARU") for _ in range(k)]
            if k and r.random() < 0.4:
                idx = list(range(min(st["size"], k))) or idx
            kw = dict(handle=sym, indices=np.array(idx, np.int32), flow_in=f, dtype=rdt)
            if r.random() < 0.35:
                kw["element_shape"] = partial_shape(self.r, base)
            return FuzzStep("Gather", kw)
        if op == "Scatter":
            k = r.randint(0, 4)
            n = st["size"]
            if r.random() < 0.6:
                pool = list(range(n + (2 if st["dynamic_size"] else 0)))
                idx = r.sample(pool, min(k, len(pool)))
                k = len(idx)
            else:
                idx = [self.pick_index(st, "WZA" if grad else "U", grow=st["dynamic_size"]) for _ in range(k)]
            rows = k if r.random() < 0.93 else k + 1
            v = self.value(dt, (rows,) + tuple(self.shape_like(base)), exact=r.random() < 0.85)
            return FuzzStep(
                "Scatter", dict(handle=sym, indices=np.array(idx, np.int32), value=v, flow_in=f), f"{sym}_f"
            )
        if op == "Concat":
            crash = grad and st["marked_size"] < 0  # TF segfaults here (sem-crashes)
            if crash and r.random() < 0.7:
                return FuzzStep("Size", dict(handle=sym, flow_in=f))
            kw = dict(handle=sym, flow_in=f, dtype=rdt)
            if r.random() < 0.3:
                kw["element_shape_except0"] = partial_shape(self.r, base[1:])
            return FuzzStep("Concat", kw, tf_crash=crash)
        if op == "Split":
            n = st["size"] if r.random() < 0.8 else r.randint(0, st["size"] + 2)
            lengths = [r.choice([1, 1, 2, 0, 3]) for _ in range(n)]
            crash = False
            if lengths and r.random() < 0.04:  # TF aborts on a negative length (sem-crashes)
                j = r.randrange(n)
                lengths[j] = -1
                if n > 1:
                    lengths[(j + 1) % n] += 2  # keep the sum matching so TF reaches the bad length
                crash = True
            rows = max(sum(lengths), 0) + (1 if r.random() < 0.07 else 0)
            trail = tuple(base[1:]) if r.random() < 0.9 else (2,)
            v = self.value(dt, (rows,) + trail, exact=r.random() < 0.9)
            lens = np.array(lengths, np.int64) if r.random() < 0.8 else lengths
            return FuzzStep("Split", dict(handle=sym, value=v, lengths=lens, flow_in=f), f"{sym}_f", crash)
        if op == "Size":
            return FuzzStep("Size", dict(handle=sym, flow_in=f))
        if op == "Close":
            return FuzzStep("Close", dict(handle=sym))
        # Grad / GradWithShape: mostly of a forward array (a gradient's gradient is R2)
        if grad and r.random() < 0.8:
            fwds = [s for s in live if self.info[s]["kind"] == "fwd"]
            if fwds:
                sym = r.choice(fwds)
                info, f = self.info[sym], self.flow(sym)
        source = r.choice(SOURCES)
        g = f"g{self.n}"
        self.n += 1
        if op == "Grad":
            return FuzzStep("Grad", dict(handle=sym, flow_in=f, source=source), (g, f"{g}_f"))
        prepend = r.choice([[2], [], [1, 2], [0], [3], [-1], 2, [[1]], np.array([2], np.int64)])
        return FuzzStep(
            "GradWithShape", dict(handle=sym, flow_in=f, shape_to_prepend=prepend, source=source), (g, f"{g}_f")
        )

    # -- model update --------------------------------------------------------------------
    def apply(self, step):
        """Run ``step`` on the private reference model; bind outputs when it succeeds."""
        kw = {}
        for k, v in step.kwargs.items():
            if k == "handle":
                v = self.handles[v]
            elif k == "flow_in" and isinstance(v, str):
                v = 0.0
            kw[k] = v
        try:
            res = getattr(self.ref, FULL[step.op])(**kw)
        except Exception:  # any refusal just means "nothing happened"
            return False
        if step.op in ("V3", "Grad", "GradWithShape"):
            sym = step.out[0]
            self.handles[sym] = res[0]
            if step.op != "V3":
                src = step.kwargs["handle"]
                fwd_info = self.info[src]
                base = tuple(fwd_info["base"])
                if step.op == "GradWithShape":
                    p = np.asarray(step.kwargs["shape_to_prepend"]).reshape(-1).tolist()
                    base = tuple(int(d) for d in p) + base
                self.info[sym] = dict(dtype=fwd_info["dtype"], base=base, kind="grad", fwd=src)
        return True


def make_program(seed, n_steps=60):
    """The program of ``seed``: ``n_steps`` random steps, then a read of every live slot."""
    gen = _Gen(seed)
    prog = []
    for _ in range(n_steps):
        step = gen.next()
        gen.apply(step)
        prog.append(step)
    # final probe: read every slot of every array (reads have no partial effects)
    for sym in list(gen.handles):
        st = gen.state(sym)
        if st["closed"]:
            continue
        for i in range(st["size"]):
            step = FuzzStep("Read", dict(handle=sym, index=i, flow_in=0.0, dtype=gen.info[sym]["dtype"]))
            gen.apply(step)
            prog.append(step)
    return prog


# --------------------------------------------------------------------------------------
# numba_ta-only runner (no TensorFlow): the subprocess of test_no_crash.py


def run_numba_only(prog):
    """Run ``prog`` on numba_ta and on the reference model; return a list of problems.

    A problem is an exception that is not an expected one (numba_ta's ``OpError``,
    ``TypeError`` or ``ValueError`` where the reference also refuses), an outcome that
    differs from the reference (success vs. error, error class, kernel message, result
    value), or a TF-crash step that does not raise ``InvalidArgumentError``.
    """
    import re

    from numba_ta import errors, raw_ops

    ref = Reference()
    env_nb, env_ref = {}, {}
    names = {}  # reference unique name -> numba_ta unique name
    problems = []

    def mapped(msg):  # reference names -> numba_ta's, in one pass (no chained replacements)
        if not names:
            return msg
        pat = "|".join(re.escape(n) for n in sorted(names, key=len, reverse=True))
        return re.sub(f"(?:{pat})(?!\\d)", lambda m: names[m.group(0)], msg)

    for k, step in enumerate(prog):
        kw_nb, kw_ref = {}, {}
        for key, v in step.kwargs.items():
            if key == "handle" or (key == "flow_in" and isinstance(v, str)):
                kw_nb[key], kw_ref[key] = env_nb[v], env_ref[v]
            else:
                kw_nb[key], kw_ref[key] = v, v
        op = FULL[step.op]
        out = []
        for fn, kw in ((getattr(raw_ops, op), kw_nb), (getattr(ref, op), kw_ref)):
            try:
                out.append((True, fn(**kw)))
            except Exception as e:  # classified below
                out.append((False, e))
        (ok_n, res_n), (ok_r, res_r) = out
        where = f"step {k}: {step!r}"
        if not ok_n and not isinstance(res_n, (errors.OpError, TypeError, ValueError)):
            problems.append(f"{where}: unexpected {type(res_n).__name__}: {res_n}")
            continue
        if step.tf_crash and (ok_n or not isinstance(res_n, errors.InvalidArgumentError)):
            problems.append(f"{where}: TF crashes here, numba_ta must raise InvalidArgumentError, got {res_n!r}")
            continue
        if ok_n != ok_r:
            problems.append(
                f"{where}: numba_ta {'ok' if ok_n else repr(res_n)} vs reference {'ok' if ok_r else repr(res_r)}"
            )
            continue
        if not ok_n:
            if isinstance(res_r, errors.OpError):
                if type(res_n) is not type(res_r):
                    problems.append(f"{where}: {type(res_n).__name__} vs reference {type(res_r).__name__}")
                elif not getattr(res_r, "divergence", False) and res_n.message != mapped(res_r.message):
                    problems.append(f"{where}: message {res_n.message!r} vs reference {mapped(res_r.message)!r}")
            continue
        if step.op in ("V3", "Grad", "GradWithShape"):
            names.setdefault(res_r[0].name, res_n[0].name)
            env_nb[step.out[0]], env_ref[step.out[0]] = res_n[0], res_r[0]
            env_nb[step.out[1]], env_ref[step.out[1]] = res_n[1], res_r[1]
            continue
        if isinstance(step.out, str):
            env_nb[step.out], env_ref[step.out] = res_n, res_r
        got = res_n if isinstance(res_n, tuple) else (res_n,)
        want = res_r if isinstance(res_r, tuple) else (res_r,)
        for a, b in zip(got, want, strict=True):
            if a is None and b is None:
                continue
            a, b = np.asarray(a), np.asarray(b)
            if a.dtype != b.dtype or a.shape != b.shape or not np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"):
                problems.append(f"{where}: result {a!r} vs reference {b!r}")
    return problems


def main(argv=None):
    """Command line: ``python -m tests.helpers.fuzz_programs [--programs N] [--steps S] [--first S] [--kernels K]
    [--show S]`` (from the repository root).

    Exits 1 when any program shows a problem (see :func:`run_numba_only`).
    """
    import argparse

    p = argparse.ArgumentParser(description="Run seeded random programs on numba_ta and the reference model.")
    p.add_argument("--programs", type=int, default=50)
    p.add_argument("--steps", type=int, default=60)
    p.add_argument("--first", type=int, default=0)
    p.add_argument(
        "--kernels",
        choices=["default", "serial", "parallel", "mixed"],
        default="default",
        help="force the serial or the parallel kernels on every size, or alternate by seed (mixed)",
    )
    p.add_argument("--show", type=int, metavar="SEED", help="print the program of SEED and exit")
    a = p.parse_args(argv)
    if a.show is not None:
        print(*make_program(a.show, a.steps), sep="\n")
        return 0
    from numba_ta.core import config as _config

    bad = 0
    steps = 0
    for seed in range(a.first, a.first + a.programs):
        if a.kernels != "default":
            par = a.kernels == "parallel" or (a.kernels == "mixed" and seed % 2 == 1)
            _config.PARALLEL_MIN_ELEMENTS = 0 if par else 1 << 62
        prog = make_program(seed, a.steps)
        steps += len(prog)
        problems = run_numba_only(prog)
        if problems:
            bad += 1
            print(f"seed {seed}:", *problems[:5], sep="\n  ")
    print(f"{a.programs} programs, {steps} steps, {bad} with problems")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
