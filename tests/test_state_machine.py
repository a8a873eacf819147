"""Stateful property tests: random op sequences against the reference model.

A hypothesis ``RuleBasedStateMachine`` drives all eleven V3 ops (``TensorArrayV3``,
Write, Read, Gather, Scatter, Concat, Split, Size, Close, ``TensorArrayGradV3`` and
``TensorArrayGradWithShape``) on static and dynamic arrays, with ``infer_shape``
(``identical_element_shapes``) and ``clear_after_read`` on and off, over several dtypes
and element shapes, through :mod:`numba_ta.raw_ops` and the plain-Python reference model
``tests/helpers/reference.py`` at once.  Every example also picks the serial or the parallel
kernels (``PARALLEL_MIN_ELEMENTS`` 2**62 or 0) and a memory policy of the dense layout
(:data:`MEMORY_POLICIES`: the default, one that turns sparse writes ragged, none).  After every op:

* results agree: values (dtype, shape, content, NaN for NaN), flows (float32, passed
  through or 0.0), sizes, concat lengths, handle names (up to the unique-name counter);
* on an error: the same class and the same message (reference names mapped to numba_ta's;
  for the cases where TF crashes, the class only: TensorFlow semantics reference,
  docs/semantics.rst, ``sem-crashes``), and numba_ta's arrays are exactly as they were before
  the op (checked on numba_ta's own storage, snapshot before / after);
* every array's full state agrees with the reference (the invariant below).

Python-level and compiled ops mix on the same arrays: half of the element ops
(write, read, gather, scatter, concat, split, size) run inside ``@numba.njit``
functions instead, on a ``TensorArray`` over the op's handle passed in (the class
with ``infer_shape=False`` and no element shape of its own: its compiled methods are
then the raw ops, see :data:`JIT_OPS`), when the op can be expressed there: the value
of the array's dtype, no shape attribute, an array whose element rank is known and
whose dtype Numba has (not float16), and only for :data:`JIT_DTYPES` (each dtype and
rank is a compilation).  A compiled read of an element of another rank than the
array's Numba type raises ``NotImplementedError`` and changes nothing (docs,
"TensorArray in compiled code"); the op then runs through raw_ops.

Element states.  numba_ta keeps four bits per element in ``handle._storage.state``
(``WRITTEN=1, READ=2, CLEARED=4, DATA=8``); they map to the reference's letters as::

    bits                         letter   reference meaning (``sem-states``)
    no WRITTEN                   U        unwritten
    WRITTEN|READ|CLEARED         C        read and cleared
    WRITTEN|READ (DATA or not)   R        read and kept (a read soft zero keeps no data)
    WRITTEN without DATA         Z        soft zero (written, no stored value)
    WRITTEN|DATA                 W        written; the reference's A (aggregated, TF's
                                          local_copy) is also W: numba_ta sums in place
                                          and has no separate private-copy state

Besides the letters, the invariant compares size, the shape of every written element
(``shapes[shape_id[i]]``), the value of every W/R element (the stored data, zeros for a
soft zero that was read), ``element_shape``, ``closed``, ``dynamic_size``,
``marked_size``, ``gradients_disallowed``, ``is_grad``, dtype and flags, and checks the
storage's own consistency: only valid bit combinations, no bits on slots past the size.

Examples: CI uses the hypothesis profile ``ci`` of ``tests/conftest.py`` (200 examples of
up to :data:`STEPS` ops).  For a long run (20 000 examples, about a million ops) set the
profile switch::

    NUMBA_TA_HYPOTHESIS_PROFILE=long pytest tests/test_state_machine.py

(``NUMBA_TA_STATE_MACHINE_STEPS=N`` changes the number of ops per example.)
"""

from __future__ import annotations

import os
import re

import numba
import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")

from hypothesis import settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule  # noqa: E402

from numba_ta import TensorArray, raw_ops  # noqa: E402
from numba_ta.core import config as _config  # noqa: E402
from numba_ta.errors import OpError  # noqa: E402
from numba_ta.jit import extension as _jit  # noqa: E402
from tests.helpers.fuzz_programs import typed_values  # noqa: E402
from tests.helpers.jit_ops import j_concat, j_gather, j_read, j_scatter, j_size, j_split, j_write  # noqa: E402
from tests.helpers.reference import Reference  # noqa: E402
from tests.helpers.storage_view import C, D, R, W, letter, nt_state, same_snapshot, same_value, valid_bits  # noqa: E402

STEPS = int(os.environ.get("NUMBA_TA_STATE_MACHINE_STEPS", "40"))
# The dense layout's memory budget (numba_ta.tensor_array.storage): the default (small arrays stay dense),
# tight (a sparse write turns the array ragged) and none (every element ragged).
MEMORY_POLICIES = [(_config.DENSE_SLACK_BYTES, _config.DENSE_FACTOR), (0, 2), (0, 0)]
DTYPES = ["float32", "int32", "float64", "bool", "int64", "float16", "complex64", "uint8"]
BASES = [(), (1,), (2,), (3,), (2, 2), (0,), (1, 0), (3, 1)]
SOURCES = ["gradients", "gradients_1", "pfor"]
F0 = np.float32(0.0)

# figures for the report (see test_report_figures)
COUNTS = {"examples": 0, "ops": 0, "errors": 0, "compiled": 0}


JIT_DTYPES = ("float32", "bool")  # a numeric dtype and the one numba_ta cannot sum (T8)
# raw op -> (compiled function, the op's arguments it takes, what the raw op returns instead of its result)
JIT_OPS = {
    "TensorArrayWriteV3": (j_write, ("index", "value"), "flow"),
    "TensorArrayReadV3": (j_read, ("index",), None),
    "TensorArrayGatherV3": (j_gather, ("indices",), None),
    "TensorArrayScatterV3": (j_scatter, ("indices", "value"), "flow"),
    "TensorArrayConcatV3": (j_concat, (), "lengths"),
    "TensorArraySplitV3": (j_split, ("value", "lengths"), "flow"),
    "TensorArraySizeV3": (j_size, (), None),
}


# --------------------------------------------------------------------------------------
# the machine


class Arr:
    """One array on both sides: numba_ta handle, reference handle, what values it takes."""

    def __init__(self, nt, ref, dtype, base, kind):
        self.nt, self.ref, self.dtype, self.base, self.kind = nt, ref, dtype, base, kind


class TensorArrayMachine(RuleBasedStateMachine):
    def __init__(self):
        super().__init__()
        self.ref = Reference()
        self.arrays = []
        self.keys = set()  # reference resource names already in self.arrays
        self.names = {}  # reference unique name -> numba_ta unique name
        self.saved_threshold = _config.PARALLEL_MIN_ELEMENTS
        self.saved_policy = (_config.DENSE_SLACK_BYTES, _config.DENSE_FACTOR)
        COUNTS["examples"] += 1

    def teardown(self):
        _config.PARALLEL_MIN_ELEMENTS = self.saved_threshold
        _config.DENSE_SLACK_BYTES, _config.DENSE_FACTOR = self.saved_policy

    # -- plumbing ----------------------------------------------------------------------
    def mapped(self, msg):
        """Reference unique names in ``msg`` -> numba_ta's (one pass: no chained replacements)."""
        if not self.names:
            return msg
        pat = "|".join(re.escape(n) for n in sorted(self.names, key=len, reverse=True))
        return re.sub(f"(?:{pat})(?!\\d)", lambda m: self.names[m.group(0)], msg)

    def compiled(self, op, arr, kw):
        """Run the element op ``op`` inside compiled code, as the raw op returns; ``NotImplemented`` if it cannot."""
        fn, names, instead = JIT_OPS[op]
        value = kw.get("value")
        if (
            arr.dtype not in JIT_DTYPES
            or (value is not None and value.dtype != np.dtype(arr.dtype))
            or "element_shape" in kw
            or "element_shape_except0" in kw
            or (op == "TensorArraySplitV3" and (kw["lengths"] < 0).any())  # the class's own ValueError first
        ):
            return NotImplemented
        ta = TensorArray(arr.dtype, handle=arr.nt, flow=kw.get("flow_in", F0), infer_shape=False)
        try:
            _jit.numba_type(ta)  # the element rank must be known to enter compiled code
        except TypeError:
            return NotImplemented
        try:
            res = fn(ta, *[kw[n] for n in names])
        except NotImplementedError:  # an element of another rank than the Numba type's: nothing changed
            return NotImplemented
        except OpError:
            COUNTS["compiled"] += 1
            raise
        COUNTS["compiled"] += 1
        if instead == "flow":
            return kw["flow_in"]
        if instead == "lengths":  # the raw op also returns the lengths: the first dimensions of the elements read
            after = nt_state(arr.nt)
            n = after["marked_size"] if after["is_grad"] else after["size"]
            return res, np.array([after["shapes"][i][0] for i in range(n)], np.int64)
        return np.int32(res) if op == "TensorArraySizeV3" else res

    def call(self, op, arr=None, jit=False, **kw):
        """Run ``op`` on both sides (``jit``: inside compiled code where it can), compare; results or None."""
        COUNTS["ops"] += 1
        before = [nt_state(a.nt) for a in self.arrays]
        out = []
        for side in ("nt", "ref"):
            fn = getattr(raw_ops if side == "nt" else self.ref, op)
            args = dict(kw)
            if arr is not None:
                args["handle"] = getattr(arr, side)
            try:
                res = NotImplemented
                if side == "nt" and jit and not numba.config.DISABLE_JIT:
                    res = self.compiled(op, arr, kw)
                out.append((True, fn(**args) if res is NotImplemented else res))
            except OpError as e:
                out.append((False, e))
        (ok_n, res_n), (ok_r, res_r) = out
        ctx = f"{op}({', '.join(f'{k}={v!r}' for k, v in kw.items())}) on {arr.nt.name if arr else '-'}"
        assert ok_n == ok_r, f"{ctx}: numba_ta {res_n!r} vs reference {res_r!r}"
        if not ok_n:
            COUNTS["errors"] += 1
            assert type(res_n) is type(res_r), f"{ctx}: {res_n!r} vs reference {res_r!r}"
            if not getattr(res_r, "divergence", False):
                assert res_n.message == self.mapped(res_r.message), (
                    f"{ctx}:\n  nt:  {res_n.message}\n  ref: {res_r.message}"
                )
            after = [nt_state(a.nt) for a in self.arrays]
            for a, x, y in zip(self.arrays, before, after, strict=True):
                assert same_snapshot(x, y), f"{ctx} raised {res_n.message!r} but changed {a.nt.name}:\n{x}\n{y}"
            return None
        return res_n, res_r

    def pick(self, data):
        return self.arrays[data.draw(st.integers(0, len(self.arrays) - 1), label="array")]

    def good_index(self, data, arr, want, grow=False):
        """An index that mostly hits an element in one of the ``want`` states."""
        s = self.ref.state(arr.ref)
        n = s["size"]
        good = [i for i, c in enumerate(s["states"]) if c in want]
        anyi = st.integers(-2, n + (4 if grow else 2))
        strat = st.one_of(st.sampled_from(good), anyi) if good else anyi
        return data.draw(strat, label="index")

    def shape_for(self, data, arr, exact=False):
        s = self.ref.state(arr.ref)
        es = s["element_shape"]
        base = arr.base
        if es is not None and all(d is not None for d in es):
            base = tuple(es)
        elif es is not None and len(es) == len(base):
            base = tuple(b if d is None else d for d, b in zip(es, base, strict=True))
        if exact or data.draw(st.integers(0, 9), label="shape kind") < 8:
            return tuple(base)
        return data.draw(
            st.one_of(
                st.sampled_from(BASES),
                st.integers(0, 3).map(lambda k: (k,) + tuple(base[1:])),
                st.just(tuple(base) + (1,)),
            ),
            label="other shape",
        )

    def value(self, data, dtype, shape):
        n = int(np.prod(shape, dtype=np.int64))
        ints = data.draw(st.lists(st.integers(-3, 9), min_size=n, max_size=n), label="values")
        v = typed_values(ints, dtype, shape)
        dt = v.dtype
        if dt.kind == "f" and n and data.draw(st.integers(0, 9), label="special") == 0:
            v.reshape(-1)[0] = data.draw(st.sampled_from([np.inf, -np.inf, np.nan, -0.0]), label="non-finite")
        return v

    def value_dtype(self, data, arr):
        return arr.dtype if data.draw(st.integers(0, 19), label="dtype kind") else data.draw(st.sampled_from(DTYPES))

    def flow(self, data):
        return data.draw(st.sampled_from([F0, F0, F0, np.float32(1.5), np.float32(-3.0)]), label="flow")

    def jit(self, data):
        """Whether the op runs inside compiled code (where it can): half of the element ops."""
        return data.draw(st.booleans(), label="compiled")

    def add(self, res, dtype, base, kind):
        (h_n, f_n), (h_r, f_r) = res
        assert isinstance(f_n, np.float32) and f_n == f_r == 0.0, (f_n, f_r)
        if h_r.resource_name in self.keys:
            return
        if kind == "fwd":
            prefix = re.sub(r"_\d+$", "", h_r.name)
            assert re.fullmatch(re.escape(prefix) + r"_\d+", h_n.name), (h_n.name, h_r.name)
            self.names[h_r.name] = h_n.name
        else:
            assert h_n.name == self.mapped(h_r.name), (h_n.name, h_r.name)
        self.keys.add(h_r.resource_name)
        self.arrays.append(Arr(h_n, h_r, dtype, base, kind))

    def check_result(self, res, what):
        nt, ref = res
        nt = nt if isinstance(nt, tuple) else (nt,)
        ref = ref if isinstance(ref, tuple) else (ref,)
        assert len(nt) == len(ref), what
        for a, b in zip(nt, ref, strict=True):
            assert isinstance(a, (np.ndarray, np.generic)), (what, type(a))
            assert same_value(a, b), f"{what}: {a!r} vs reference {b!r}"

    # -- rules ---------------------------------------------------------------------------
    @initialize(parallel=st.booleans(), policy=st.sampled_from(MEMORY_POLICIES))
    def kernels(self, parallel, policy):
        _config.PARALLEL_MIN_ELEMENTS = 0 if parallel else 1 << 62
        _config.DENSE_SLACK_BYTES, _config.DENSE_FACTOR = policy

    @rule(data=st.data())
    def create(self, data):
        dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
        base = data.draw(st.sampled_from(BASES), label="base")
        es = data.draw(
            st.one_of(
                st.none(),
                st.just(list(base)),
                st.lists(st.booleans(), min_size=len(base), max_size=len(base)).map(
                    lambda m: [None if k else d for k, d in zip(m, base, strict=True)]
                ),
            ),
            label="element_shape",
        )
        kw = dict(
            size=data.draw(st.integers(0, 5), label="size"),
            dtype=np.dtype(dtype),
            element_shape=es,
            dynamic_size=data.draw(st.booleans(), label="dynamic_size"),
            clear_after_read=data.draw(st.booleans(), label="clear_after_read"),
            identical_element_shapes=data.draw(st.booleans(), label="infer_shape"),
            tensor_array_name=data.draw(st.sampled_from(["", "foo"]), label="name"),
        )
        res = self.call("TensorArrayV3", **kw)
        assert res is not None
        self.add(res, dtype, base, "fwd")

    @precondition(lambda self: self.arrays)
    @rule(data=st.data())
    def write(self, data):
        arr = self.pick(data)
        s = self.ref.state(arr.ref)
        grad = arr.kind == "grad"
        i = self.good_index(data, arr, "WZA" if grad else "U", grow=s["dynamic_size"])
        shape = s["shapes"][i] if grad and 0 <= i < s["size"] and s["states"][i] != "U" else None
        shape = shape if shape is not None and data.draw(st.booleans()) else self.shape_for(data, arr)
        v = self.value(data, self.value_dtype(data, arr), shape)
        f = self.flow(data)
        res = self.call("TensorArrayWriteV3", arr, jit=self.jit(data), index=i, value=v, flow_in=f)
        if res is not None:
            self.check_result(res, "write flow")
            assert res[0] == f

    @precondition(lambda self: self.arrays)
    @rule(data=st.data())
    def read(self, data):
        arr = self.pick(data)
        i = self.good_index(data, arr, "WZARU")
        res = self.call(
            "TensorArrayReadV3", arr, jit=self.jit(data), index=i, flow_in=self.flow(data), dtype=np.dtype(arr.dtype)
        )
        if res is not None:
            self.check_result(res, "read")

    @precondition(lambda self: self.arrays)
    @rule(data=st.data())
    def read_wrong_dtype(self, data):
        arr = self.pick(data)
        dt = data.draw(st.sampled_from([d for d in DTYPES if d != arr.dtype]))
        assert self.call("TensorArrayReadV3", arr, index=0, flow_in=F0, dtype=np.dtype(dt)) is None

    @precondition(lambda self: self.arrays)
    @rule(data=st.data())
    def gather(self, data):
        arr = self.pick(data)
        k = data.draw(st.integers(0, 4), label="n indices")
        idx = [self.good_index(data, arr, "WZARU") for _ in range(k)]
        kw = dict(indices=np.array(idx, dtype=data.draw(st.sampled_from([np.int32, np.int64]))), flow_in=F0)
        if data.draw(st.booleans(), label="with element_shape"):
            shape = self.shape_for(data, arr)
            kw["element_shape"] = [d if data.draw(st.booleans()) else None for d in shape]
        res = self.call("TensorArrayGatherV3", arr, jit=self.jit(data), dtype=np.dtype(arr.dtype), **kw)
        if res is not None:
            self.check_result(res, "gather")

    @precondition(lambda self: self.arrays)
    @rule(data=st.data())
    def scatter(self, data):
        arr = self.pick(data)
        s = self.ref.state(arr.ref)
        grad = arr.kind == "grad"
        k = data.draw(st.integers(0, 4), label="n indices")
        if data.draw(st.booleans(), label="unique"):
            pool = list(range(s["size"] + (2 if s["dynamic_size"] else 0)))
            idx = data.draw(st.permutations(pool), label="perm")[: min(k, len(pool))] if pool else []
        else:
            idx = [self.good_index(data, arr, "WZA" if grad else "U", grow=s["dynamic_size"]) for _ in range(k)]
        rows = len(idx) + (1 if data.draw(st.integers(0, 19), label="bad rows") == 0 else 0)
        shape = (rows,) + self.shape_for(data, arr)
        v = self.value(data, self.value_dtype(data, arr), shape)
        f = self.flow(data)
        res = self.call(
            "TensorArrayScatterV3", arr, jit=self.jit(data), indices=np.array(idx, dtype=np.int32), value=v, flow_in=f
        )
        if res is not None:
            assert res[0] == f

    @precondition(lambda self: self.arrays)
    @rule(data=st.data())
    def concat(self, data):
        arr = self.pick(data)
        kw = {}
        if data.draw(st.booleans(), label="with except0"):
            shape = self.shape_for(data, arr)[1:]
            kw["element_shape_except0"] = [d if data.draw(st.booleans()) else None for d in shape]
        res = self.call("TensorArrayConcatV3", arr, jit=self.jit(data), flow_in=F0, dtype=np.dtype(arr.dtype), **kw)
        if res is not None:
            self.check_result(res, "concat")
            assert res[0][1].dtype == np.int64

    @precondition(lambda self: self.arrays)
    @rule(data=st.data())
    def split(self, data):
        arr = self.pick(data)
        s = self.ref.state(arr.ref)
        n = s["size"] if data.draw(st.integers(0, 4), label="size kind") else data.draw(st.integers(0, s["size"] + 2))
        lengths = data.draw(st.lists(st.integers(0, 3), min_size=n, max_size=n), label="lengths")
        if lengths and data.draw(st.integers(0, 24), label="negative") == 0:
            lengths[data.draw(st.integers(0, n - 1))] = -1  # TF aborts here; numba_ta raises
        rows = max(sum(lengths), 0) + (1 if data.draw(st.integers(0, 19), label="bad rows") == 0 else 0)
        shape = (rows,) + tuple(self.shape_for(data, arr)[1:])
        v = self.value(data, self.value_dtype(data, arr), shape)
        f = self.flow(data)
        res = self.call(
            "TensorArraySplitV3", arr, jit=self.jit(data), value=v, lengths=np.array(lengths, np.int64), flow_in=f
        )
        if res is not None:
            assert res[0] == f

    @precondition(lambda self: self.arrays)
    @rule(data=st.data())
    def size(self, data):
        res = self.call("TensorArraySizeV3", self.pick(data), jit=self.jit(data), flow_in=F0)
        if res is not None:
            assert isinstance(res[0], np.int32)
            self.check_result(res, "size")

    @precondition(lambda self: self.arrays)
    @rule(data=st.data())
    def close(self, data):
        res = self.call("TensorArrayCloseV3", self.pick(data))
        assert res is not None and res == (None, None)

    @precondition(lambda self: self.arrays)
    @rule(data=st.data(), source=st.sampled_from(SOURCES))
    def grad(self, data, source):
        arr = self.pick(data)
        res = self.call("TensorArrayGradV3", arr, flow_in=self.flow(data), source=source)
        if res is not None:
            self.add(res, arr.dtype, arr.base, "grad")

    @precondition(lambda self: self.arrays)
    @rule(
        data=st.data(),
        source=st.sampled_from(SOURCES),
        prepend=st.one_of(st.lists(st.integers(0, 3), max_size=2), st.sampled_from([[-1], [2, -3], 2, [[1]]])),
    )
    def grad_with_shape(self, data, source, prepend):
        arr = self.pick(data)
        res = self.call(
            "TensorArrayGradWithShape", arr, flow_in=self.flow(data), shape_to_prepend=prepend, source=source
        )
        if res is not None:
            base = tuple(np.asarray(prepend, dtype=np.int64).reshape(-1).tolist()) + tuple(arr.base)
            self.add(res, arr.dtype, base, "grad")

    # -- the invariant -------------------------------------------------------------------
    @invariant()
    def same_state_as_reference(self):
        for arr in self.arrays:
            nt = nt_state(arr.nt)
            ref = self.ref.state(arr.ref)
            refvals = self.ref.values(arr.ref)
            name = arr.nt.name
            assert nt["tail_clean"], f"{name}: state bits set past the size"
            assert all(valid_bits(b) for b in nt["bits"]), f"{name}: invalid state bits {nt['bits']}"
            assert nt["name"] == self.mapped(ref["name"]), (nt["name"], ref["name"])
            want_letters = ref["states"].replace("A", "W")
            assert nt["states"] == want_letters, f"{name}: states {nt['states']!r} vs reference {ref['states']!r}"
            for k in (
                "size",
                "dtype",
                "element_shape",
                "closed",
                "dynamic_size",
                "marked_size",
                "is_grad",
                "identical_element_shapes",
                "clear_after_read",
                "gradients_disallowed",
            ):
                assert nt[k] == ref[k], f"{name}: {k} {nt[k]!r} vs reference {ref[k]!r}"
            if nt["closed"]:
                assert nt["data_none"], f"{name}: closed but its data buffer is still held"
            for i, c in enumerate(nt["states"]):
                if c == "U":
                    continue
                assert nt["shapes"][i] == ref["shapes"][i], (
                    f"{name}[{i}]: shape {nt['shapes'][i]} vs {ref['shapes'][i]}"
                )
                if c in "WR":
                    want = refvals[i]
                    if want is None or want.size == 0:
                        want = np.zeros(ref["shapes"][i], dtype=ref["dtype"])
                    assert same_value(nt["values"][i], want), f"{name}[{i}]: {nt['values'][i]!r} vs reference {want!r}"


TensorArrayMachine.TestCase.settings = settings(stateful_step_count=STEPS)
TestTensorArrayMachine = TensorArrayMachine.TestCase


def test_report_figures(machine_figures):
    """Record how many examples and ops the machine ran, and check that it ran ops at all."""
    machine_figures(COUNTS, "state_machine")
    assert COUNTS["compiled"] > 0 or numba.config.DISABLE_JIT, COUNTS
    print(
        f"state machine: {COUNTS['examples']} examples, {COUNTS['ops']} ops ({COUNTS['compiled']} inside compiled "
        f"code), {COUNTS['errors']} errors"
    )


def test_letter_mapping():
    """The documented bits -> letter mapping."""
    assert [letter(b) for b in (0, W, W | D, W | R, W | R | D, W | R | C)] == ["U", "Z", "W", "R", "R", "C"]
    assert not valid_bits(R) and not valid_bits(W | C | R | D) and valid_bits(W | R | C)
