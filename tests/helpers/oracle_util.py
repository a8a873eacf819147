"""Differential driver: run the same TensorArray op programs through tf.raw_ops and numba_ta.raw_ops.

A *program* is a list of :class:`Step` objects (build them with :func:`S`).  Each step names
one of the eleven V3 ops (short names such as ``"Write"`` are accepted) and its keyword
arguments.  Handles and flows are referred to symbolically: for the keys ``handle`` and
``flow_in`` a ``str`` value is the name of an earlier output; ``out`` binds the outputs of
a step to names (``out=("h", "f")`` for ``TensorArrayV3``).

:class:`Runner` executes the steps on both backends and compares, after each step,

* results: values (shape, dtype and content), flows (float32 scalars), sizes (int32),
  handle names (up to the process-global unique-name counter);
* errors: class (TF's ``tf.errors.X`` against ``numba_ta.errors.X``) and message, after
  stripping TF's ``{{function_node ...}}`` prefix and ``[Op:...]`` suffix and after
  replacing every array's unique name by its symbol (so only the counter is normalised);
* after every step, ``TensorArraySizeV3`` of every handle (a side-effect-free probe).

numba_ta is atomic (an op that raises changes nothing), TF is not (failed dynamic writes
grow the array, gathers narrow the element shape, scatters are partial ...).  After an
error step the TF side is therefore rebuilt by replaying, on fresh TF arrays, only the
steps that succeeded; comparison then continues against that state, which is exactly the
state numba_ta promises.  Steps marked ``tf_crash=True`` (TF segfaults/aborts on them) are
never sent to TF: numba_ta must raise ``InvalidArgumentError``.
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import dataclasses
import re
from typing import Any

import numpy as np
import pytest

# pytest --doctest-modules imports this file too: skip it, like the tests, without TF
tf = pytest.importorskip("tensorflow")

from tests.helpers.fuzz_programs import FULL  # noqa: E402

OPS = FULL  # short op names -> tf.raw_ops names
FULL_NAMES = set(OPS.values())
CREATING = {"TensorArrayV3", "TensorArrayGradV3", "TensorArrayGradWithShape"}
VALUE_OPS = {"TensorArrayReadV3", "TensorArrayGatherV3", "TensorArrayConcatV3"}
SYMBOLIC_KEYS = ("handle", "flow_in")
DTYPE_KEYS = ("dtype",)


class DriverError(AssertionError):
    """The program itself is wrong (unknown symbol, a step TF would crash on, ...)."""


@dataclasses.dataclass
class Step:
    op: str
    kwargs: dict
    out: Any = None
    tf_crash: bool = False
    err: Any = None  # None: don't care; "ok": must succeed; str: regex TF's message must match

    def __repr__(self):
        args = ", ".join(f"{k}={_short(v)}" for k, v in self.kwargs.items())
        short = {v: k for k, v in OPS.items()}.get(self.op, self.op)
        s = f"S({short!r}, {args}"
        if self.out is not None:
            s += f", out={self.out!r}"
        if self.tf_crash:
            s += ", tf_crash=True"
        if self.err is not None:
            s += f", err={self.err!r}"
        return s + ")"


def _short(v):
    if isinstance(v, np.ndarray):
        if v.size == 0 and v.ndim != 1:
            return f"np.zeros({v.shape!r}, {v.dtype.name!r})"
        return f"np.array({v.tolist()!r}, {v.dtype.name!r})"
    if isinstance(v, str):
        return repr(v)
    return repr(v)


def S(op, out=None, tf_crash=False, err=None, **kwargs):
    """Build a step; ``op`` is a full op name or a short one (``"Write"``).

    ``err`` documents and checks the intent of the step: ``"ok"`` (TF must succeed) or a
    regex that TF's kernel message (names replaced by ``<symbol>``) must ``re.search``.
    """
    op = OPS.get(op, op)
    if op not in FULL_NAMES:
        raise DriverError(f"unknown op {op!r}")
    return Step(op, kwargs, out, tf_crash, err)


def format_program(prog, upto=None):
    steps = prog if upto is None else prog[: upto + 1]
    return "\n".join(f"  [{i}] {s!r}" for i, s in enumerate(steps))


# ----------------------------------------------------------------------------------------
# Error normalisation

_TF_PREFIX = re.compile(r"^\{\{function_node [^}]*\}\}\s*", re.S)
_TF_SUFFIX = re.compile(r"\s*\[Op:[A-Za-z0-9_]+\].*$", re.S)


def tf_kernel_message(e):
    """TF eager message -> the kernel's ``<msg>``."""
    msg = getattr(e, "message", None) or str(e)
    msg = _TF_PREFIX.sub("", msg)
    return _TF_SUFFIX.sub("", msg)


def normalise_names(msg, names):
    """Replace every unique array name (``foo_12``) by its symbol, longest first.

    ``names`` maps unique name -> symbol.  Only the exact name followed by a non-digit is
    replaced, so ``TensorArrayV3_1`` never eats the prefix of ``TensorArrayV3_12``; gradient
    names ``<fwd>@<source>`` are covered through their forward part.
    """
    for name in sorted(names, key=len, reverse=True):
        msg = re.sub(re.escape(name) + r"(?!\d)", "<" + names[name] + ">", msg)
    return msg


def counter_free(name, fwd_name=None):
    """``TensorArrayV3_17`` -> ``TensorArrayV3_#``; ``foo_2@gradients`` -> ``foo_#@gradients``.

    For a gradient array pass the forward array's unique name: the gradient name must be
    ``<fwd_name>@<source>`` and only the forward part's counter is normalised (names and
    sources may themselves contain ``@`` or ``_<digits>``).
    """
    if fwd_name is not None:
        if not name.startswith(fwd_name + "@"):
            return f"<gradient name {name!r} does not start with {fwd_name + '@'!r}>"
        return counter_free(fwd_name) + name[len(fwd_name) :]
    return re.sub(r"_\d+$", "_#", name)


@dataclasses.dataclass
class Outcome:
    """What one backend did for one step."""

    ok: bool
    value: Any = None  # normalised result (tuple of numpy values / names) when ok
    raw: Any = None  # raw result (handles/flows to bind)
    cls: str | None = None  # error class name (TF names) when not ok
    message: str | None = None  # kernel message, names not yet normalised
    py_error: bool = False  # a Python-layer TypeError/ValueError (argument conversion)
    exc: BaseException | None = None


# ----------------------------------------------------------------------------------------
# Backends


class _Backend:
    name = "?"

    def __init__(self):
        self.env = {}  # symbol -> backend object (handle or flow)
        self.handle_names = {}  # unique name -> symbol

    def resolve(self, step):
        kw = {}
        for k, v in step.kwargs.items():
            if k in SYMBOLIC_KEYS and isinstance(v, str):
                if v not in self.env:
                    raise DriverError(f"unknown symbol {v!r} in {step!r}")
                v = self.env[v]
            elif k in DTYPE_KEYS:
                v = self.convert_dtype(v)
            kw[k] = v
        return kw

    def bind(self, step, raw):
        if step.out is None:
            return
        if isinstance(step.out, str):
            self.env[step.out] = raw[0] if step.op in CREATING else raw
            if step.op == "TensorArrayV3":
                self.handle_names.setdefault(self.handle_name(raw[0]), step.out)
            return
        if len(step.out) != len(raw):
            raise DriverError(f"out={step.out!r} but {step.op} has {len(raw)} outputs")
        for sym, obj in zip(step.out, raw, strict=True):
            if sym is not None:
                self.env[sym] = obj
        # a gradient handle's name is "<fwd>@<src>": the forward symbol already covers it
        if step.op == "TensorArrayV3" and step.out[0] is not None:
            self.handle_names.setdefault(self.handle_name(raw[0]), step.out[0])

    def normalise(self, op, raw, kw):
        """Result -> tuple of comparable things."""
        if op in CREATING:
            h, f = raw
            fwd = self.handle_name(kw["handle"]) if op != "TensorArrayV3" else None
            return (("name", counter_free(self.handle_name(h), fwd)), _np(f))
        if op == "TensorArrayConcatV3":
            v, lengths = raw
            return (_np(v), _np(lengths))
        if op == "TensorArrayCloseV3":
            return (raw,) if raw is None else (("close-result", repr(raw)),)
        return (_np(raw),)


def _np(x):
    if hasattr(x, "numpy"):
        x = x.numpy()
    return np.asarray(x)


class TFBackend(_Backend):
    name = "tensorflow"
    _ERRORS = {
        tf.errors.InvalidArgumentError: "InvalidArgumentError",
        tf.errors.NotFoundError: "NotFoundError",
        tf.errors.UnimplementedError: "UnimplementedError",
        tf.errors.InternalError: "InternalError",
    }

    def __init__(self):
        super().__init__()
        # crash guard: which forward symbols were split (marked size set) and, per grad key,
        # whether its marked size is known (forward split before the grad array was created)
        self.split_done = set()
        self.grad_marked = {}  # (fwd unique name, source) -> bool
        self.grad_key = {}  # id(handle tensor) -> key
        self.fwd_name_of = {}

    @staticmethod
    def convert_dtype(v):
        return tf.as_dtype(np.dtype(v))

    @staticmethod
    def handle_name(h):
        m = re.search(r'name="_tensor_array(?:s|_grads)([^"]*)"', str(h))
        if not m:
            raise DriverError(f"cannot parse TF handle {h!r}")
        return m.group(1)

    def _crash_guard(self, step, kw):
        if step.tf_crash:
            raise DriverError("tf_crash step sent to TF")
        if step.op == "TensorArraySplitV3":
            if np.any(np.asarray(kw["lengths"]) < 0):
                raise DriverError(f"negative split length would abort TF: {step!r}")
        if step.op == "TensorArrayConcatV3":
            name = self.handle_name(kw["handle"])
            if "@" in name:
                fwd, _, src = name.partition("@")
                if not self.grad_marked.get((fwd, src), False):
                    raise DriverError(f"Concat on a grad array whose forward was never split segfaults TF: {step!r}")

    def call(self, step):
        kw = self.resolve(step)
        self._crash_guard(step, kw)
        fn = getattr(tf.raw_ops, step.op)
        try:
            raw = fn(**kw)
        except tf.errors.OpError as e:
            cls = next((n for c, n in self._ERRORS.items() if isinstance(e, c)), type(e).__name__)
            return Outcome(False, cls=cls, message=tf_kernel_message(e), exc=e)
        except (TypeError, ValueError) as e:
            return Outcome(False, cls=type(e).__name__, message=str(e), py_error=True, exc=e)
        self._track(step, kw, raw)
        return Outcome(True, value=self.normalise(step.op, raw, kw), raw=raw)

    def _track(self, step, kw, raw):
        if step.op == "TensorArraySplitV3":
            self.split_done.add(self.handle_name(kw["handle"]))
        elif step.op in ("TensorArrayGradV3", "TensorArrayGradWithShape"):
            fwd = self.handle_name(kw["handle"])
            key = (fwd, kw["source"])
            self.grad_marked.setdefault(key, fwd in self.split_done)


def scribble(x):
    """Overwrite a writeable ndarray in place (aliasing detector)."""
    if isinstance(x, np.ndarray) and x.flags.writeable and x.size:
        if x.dtype == bool:
            np.logical_not(x, out=x)
        else:
            x[...] = 77


def _odd_copy(v, k):
    """A copy of ``v`` that is, by turns, C-contiguous, strided along the last axis, or Fortran-ordered."""
    if v.ndim == 0 or v.size == 0 or k % 3 == 0:
        return v.copy()
    if k % 3 == 1:
        big = np.empty(v.shape[:-1] + (2 * v.shape[-1],), v.dtype)
        out = big[..., ::2]
        out[...] = v
        return out
    return np.asfortranarray(v).copy(order="F")


class NumbaBackend(_Backend):
    name = "numba_ta"

    def __init__(self):
        super().__init__()
        import numba_ta.errors
        import numba_ta.raw_ops

        self.raw_ops = numba_ta.raw_ops
        self.errors = numba_ta.errors
        self.calls = 0

    @staticmethod
    def convert_dtype(v):
        return np.dtype(v)

    @staticmethod
    def handle_name(h):
        return h.name

    def call(self, step):
        kw = self.resolve(step)
        # numba_ta gets its own copy of every ndarray input, scribbled over after the call:
        # a later read that sees the scribble means numba_ta kept a reference to the input
        self.calls += 1
        mine = {k: _odd_copy(v, self.calls) for k, v in kw.items() if isinstance(v, np.ndarray)}
        kw.update(mine)
        fn = getattr(self.raw_ops, step.op)
        try:
            raw = fn(**kw)
        except self.errors.OpError as e:
            return Outcome(False, cls=type(e).__name__, message=e.message, exc=e)
        except (TypeError, ValueError) as e:
            # InvalidArgumentError is a ValueError too, but it is caught above
            return Outcome(False, cls=type(e).__name__, message=str(e), py_error=True, exc=e)
        finally:
            for v in mine.values():
                scribble(v)
        return Outcome(True, value=self.normalise(step.op, raw, kw), raw=raw)


# ----------------------------------------------------------------------------------------
# Comparison


def assert_same_value(a, b, what):
    """Strict comparison of two normalised results (numpy values, names)."""
    if isinstance(a, tuple) and a and a[0] == "name":
        assert a == b, f"{what}: handle name {b[1]!r} (numba_ta) != {a[1]!r} (tensorflow)"
        return
    if a is None or b is None:
        assert a is b, f"{what}: {b!r} (numba_ta) != {a!r} (tensorflow)"
        return
    assert isinstance(b, np.ndarray), f"{what}: numba_ta gave {type(b)}"
    assert b.dtype == a.dtype, f"{what}: dtype {b.dtype} (numba_ta) != {a.dtype} (tensorflow)"
    assert b.shape == a.shape, f"{what}: shape {b.shape} (numba_ta) != {a.shape} (tensorflow)"
    np.testing.assert_array_equal(b, a, err_msg=what, strict=True)


class Runner:
    """Run steps on both backends and compare after each one.

    Parameters
    ----------
    numba : bool
        False runs TF against TF (checks the driver itself, e.g. before numba_ta exists).
    probe : bool
        Compare ``TensorArraySizeV3`` of every handle after each step.
    """

    def __init__(self, numba=True, probe=True):
        self.tf = TFBackend()
        self.nb = NumbaBackend() if numba else TFBackend()
        self.probe_sizes = probe
        self.done = []  # steps that succeeded on both backends (the replay log)
        self.history = []  # every step run, for messages
        self.sizes = {}  # handle symbol -> last probed size (None = closed/error)
        self.handles = []  # handle symbols, creation order
        self.results = []  # per step: Outcome of TF (None for tf_crash steps)

    # -- messages ----------------------------------------------------------------------
    def _where(self, extra=""):
        return f"program so far:\n{format_program(self.history)}\n(the last step is the one that differs){extra}"

    # -- main entry --------------------------------------------------------------------
    def step(self, step):
        """Run one step on both backends; return the TF Outcome (or the numba one for tf_crash)."""
        self.history.append(step)
        i = len(self.history) - 1
        if step.tf_crash:
            if isinstance(self.nb, TFBackend):  # self-test mode: nothing may run this step
                self.results.append(None)
                return Outcome(False, cls="skipped")
            nb = self.nb.call(step)
            assert not nb.ok, f"numba_ta did not raise on a step that crashes TF\n{self._where()}"
            assert nb.cls == "InvalidArgumentError" and not nb.py_error, (
                f"numba_ta raised {nb.cls}: {nb.message!r}, expected InvalidArgumentError\n{self._where()}"
            )
            self.results.append(nb)
            self._probe()
            return nb
        t = self.tf.call(step)
        self._check_intent(i, step, t)
        n = self.nb.call(step)
        self.results.append(t)
        if t.ok:
            if not n.ok:
                raise AssertionError(
                    f"step {i}: tensorflow succeeded with {t.value!r} but numba_ta raised "
                    f"{n.cls}: {n.message!r}\n{self._where()}"
                )
            assert len(t.value) == len(n.value), f"step {i}: result arity differs\n{self._where()}"
            for k, (a, b) in enumerate(zip(t.value, n.value, strict=True)):
                try:
                    assert_same_value(a, b, f"step {i} {step.op} output {k}")
                except AssertionError as e:
                    raise AssertionError(f"{e}\n{self._where()}") from None
            self.tf.bind(step, t.raw)
            self.nb.bind(step, n.raw)
            if isinstance(self.nb, NumbaBackend) and step.op in VALUE_OPS:
                for x in n.raw if isinstance(n.raw, tuple) else (n.raw,):
                    scribble(x)  # the caller owns results: numba_ta must not see this
            if step.op in CREATING and step.out is not None:
                sym = step.out if isinstance(step.out, str) else step.out[0]
                if sym is not None and sym not in self.handles:
                    self.handles.append(sym)
            self.done.append(step)
        else:
            if n.ok:
                raise AssertionError(
                    f"step {i}: tensorflow raised {t.cls}: {t.message!r} but numba_ta returned "
                    f"{n.value!r}\n{self._where()}"
                )
            self._compare_errors(i, t, n)
            self._replay()
        self._probe()
        return t

    def _check_intent(self, i, step, t):
        if step.err is None:
            return
        if step.err == "ok":
            if not t.ok:
                raise DriverError(f"step {i} meant to succeed, TF raised {t.cls}: {t.message!r}\n{self._where()}")
            return
        if t.ok:
            raise DriverError(f"step {i} meant to raise /{step.err}/, TF succeeded\n{self._where()}")
        msg = normalise_names(t.message, self.tf.handle_names)
        if not re.search(step.err, msg):
            raise DriverError(f"step {i}: TF message {msg!r} does not match /{step.err}/\n{self._where()}")

    def run(self, program):
        for s in program:
            self.step(s)
        return self

    def _compare_errors(self, i, t, n):
        if t.py_error:
            # TF's Python layer refused the arguments: compare loosely
            ok = isinstance(n.exc, (TypeError, ValueError))
            assert ok, (
                f"step {i}: TF raised {t.cls}: {t.message!r}; numba_ta raised {n.cls}: {n.message!r}\n{self._where()}"
            )
            return
        assert n.cls == t.cls and not n.py_error, (
            f"step {i}: error class {n.cls} (numba_ta) != {t.cls} (tensorflow)\n"
            f"  tensorflow: {t.message!r}\n  numba_ta:   {n.message!r}\n{self._where()}"
        )
        tm = normalise_names(t.message, self.tf.handle_names)
        nm = normalise_names(n.message, self.nb.handle_names)
        assert nm == tm, f"step {i}: error message differs\n  tensorflow: {tm!r}\n  numba_ta:   {nm!r}\n{self._where()}"

    def _replay(self):
        """Rebuild the TF side from the successful steps only (numba_ta is atomic)."""
        self.tf = self._replayed()
        if isinstance(self.nb, TFBackend):  # self-test mode: model numba_ta's atomicity
            self.nb = self._replayed()

    def _replayed(self):
        fresh = TFBackend()
        for s in self.done:
            o = fresh.call(s)
            if not o.ok:
                raise DriverError(f"replay of {s!r} failed: {o.cls}: {o.message}")
            fresh.bind(s, o.raw)
        return fresh

    def _probe(self):
        if not self.probe_sizes:
            return
        for sym in self.handles:
            s = S("Size", handle=sym, flow_in=0.0)
            t = self.tf.call(s)
            n = self.nb.call(s)
            what = f"probe TensorArraySizeV3({sym}) after step {len(self.history) - 1}"
            if t.ok != n.ok:
                raise AssertionError(
                    f"{what}: tensorflow {'ok ' + repr(t.value) if t.ok else t.message!r}, numba_ta "
                    f"{'ok ' + repr(n.value) if n.ok else n.message!r}\n{self._where()}"
                )
            if t.ok:
                try:
                    assert_same_value(t.value[0], n.value[0], what)
                except AssertionError as e:
                    raise AssertionError(f"{e}\n{self._where()}") from None
                self.sizes[sym] = int(t.value[0])
            else:
                assert (t.cls, normalise_names(t.message, self.tf.handle_names)) == (
                    n.cls,
                    normalise_names(n.message, self.nb.handle_names),
                ), f"{what}: {t.cls}: {t.message!r} vs {n.cls}: {n.message!r}\n{self._where()}"
                self.sizes[sym] = None

    # -- convenience -------------------------------------------------------------------
    def read_all(self, sym, dtype):
        """Final probe: read every index of ``sym`` (reads have no partial effects)."""
        n = self.sizes.get(sym)
        for i in range(n or 0):
            self.step(S("Read", handle=sym, index=i, flow_in=0.0, dtype=dtype))
        return self


def run(program, numba=True, probe=True):
    """Run a whole program; return the Runner (``.results`` has TF's outcome per step)."""
    return Runner(numba=numba, probe=probe).run(program)


def errors_of(runner):
    """[(step index, class, kernel message normalised)] of the TF outcomes, for assertions."""
    out = []
    for i, o in enumerate(runner.results):
        if o is not None and not o.ok:
            out.append((i, o.cls, o.message))
    return out
