"""Stateful property tests of the TensorList ops: random op sequences on many live lists at once.

A hypothesis ``RuleBasedStateMachine`` keeps a :class:`~hypothesis.stateful.Bundle` of
list slots, each a pair (numba_ta handle, value of the reference model
``tests/helpers/list_reference.py``), and applies the TensorList ops of :mod:`numba_ta.raw_ops`
(and ``ZerosLike`` / ``AddN`` of :mod:`numba_ta.gradients`) to random slots, with valid
and invalid arguments: EmptyTensorList, Reserve, FromTensor (of tensors and of vectors of
lists), Scatter, ScatterV2, Split, SetItem (with and without resize), GetItem, PushBack,
PushBackBatch, PopBack, Stack, Gather, ScatterIntoExistingList, Concat, ConcatV2,
ConcatLists (lists and vectors of lists), Length, ElementShape, Resize, ZerosLike and
AddN. Every list op returns a new handle, which joins the bundle; the input handle stays
in it, so later ops use stale versions (numba_ta's copy-on-write versions, see
``numba_ta/_tensor_list.py``), the same handle twice, one handle as both operands of an
op, a list as an element of its own next version, inner lists read back out of lists of
lists ... Handles are also dropped (``consumes``), so the undo log is pruned.

Checked after every op:

* a result (values with dtype and shape, lengths, element shapes, inner lists, the
  variant zero) equals the reference's; an error has the reference's class and text
  (the ``L``/``NT-tl`` codes of ``numba_ta.tf.messages``);
* the invariant: EVERY live handle still holds exactly its reference value (dtype,
  element shape, ``max_num_elements``, length, which elements are set, their values),
  read without changing numba_ta's storage (:func:`peek`: a stale version is rebuilt on
  a copy), and the version bookkeeping is consistent (the handle's version is alive and
  logged; the log starts at the oldest live version);
* no aliasing: arrays passed in and arrays returned are scribbled on after the op; the
  invariant then sees the lists unchanged.

Every example also picks the serial or the parallel kernels and a dense-layout memory
policy (as ``tests/test_state_machine.py`` does).

Known numba_ta bugs (:data:`KNOWN_BUGS`, each with a strict-xfail test at the end) are not
generated; the five found so far are fixed, and their tests at the end pin the fixes.

CI uses the hypothesis profile ``ci`` of ``tests/conftest.py`` (200 examples of up to
:data:`STEPS` rules, about 20 s); for a long run::

    NUMBA_TA_HYPOTHESIS_PROFILE=long pytest tests/test_list_state_machine.py

(``NUMBA_TA_LIST_MACHINE_STEPS=N`` changes the number of rules per example.)
"""

from __future__ import annotations

import os
from collections import Counter

import numpy as np
import pytest

hypothesis = pytest.importorskip("hypothesis")

from hypothesis import settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from hypothesis.stateful import (  # noqa: E402
    Bundle,
    RuleBasedStateMachine,
    consumes,
    initialize,
    invariant,
    multiple,
    rule,
)

import numba_ta  # noqa: E402
from numba_ta import gradients, raw_ops  # noqa: E402
from numba_ta.core import config as _config  # noqa: E402
from numba_ta.errors import OpError  # noqa: E402
from numba_ta.tensor_list.store import _UNSET, TensorListHandle, VariantZero  # noqa: E402
from tests.helpers import list_reference as ref  # noqa: E402
from tests.helpers.list_reference import VARIANT, VZ, RefError, RefList  # noqa: E402

STEPS = int(os.environ.get("NUMBA_TA_LIST_MACHINE_STEPS", "30"))
MEMORY_POLICIES = [(_config.DENSE_SLACK_BYTES, _config.DENSE_FACTOR), (0, 2), (0, 0)]
DTYPES = [np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.bool_), VARIANT]
NUMERIC = DTYPES[:3]
SHAPES = [(), (2,), (0,), (3,), (1, 2), (2, 1)]
# numba_ta bugs found by this machine, not generated while their key is here (a new bug gets a key
# and a strict-xfail test at the end until it is fixed; the ones found so far are fixed)
KNOWN_BUGS: set[str] = set()
ZERO = "ZERO"  # the variant zero in an argument (numba_ta.VARIANT_ZERO / list_reference.VZ)
COUNTS = {"examples": 0, "ops": 0, "errors": 0, "max_live": 0, "stale_uses": 0, "pruned": 0}
OUTCOMES = Counter()  # (op, "ok" / error code) -> count


# --------------------------------------------------------------------------------------
# numba_ta's lists, read without changing them


def peek(h):
    """The storage of ``h``'s version, without materializing it: a stale version is rebuilt on a copy."""
    st_ = h._store
    if h._v == st_.ver:
        return st_
    copy = st_.copy()
    for k in range(st_.ver - 1 - st_.base, h._v - 1 - st_.base, -1):
        copy.undo(st_.log[k])
    return copy


def check_versions(h, what):
    """The version bookkeeping of a live handle."""
    s = h._store
    assert s.base <= h._v <= s.ver, f"{what}: version {h._v} outside [{s.base}, {s.ver}]"
    ref = s.alive.get(h._v)
    assert ref is not None and ref() is h, f"{what}: the storage does not know version {h._v}'s handle"
    assert len(s.log) == s.ver - s.base, f"{what}: log of {len(s.log)} entries for versions {s.base}..{s.ver}"
    # the log is pruned by the next op that makes a version: it may keep entries of freed handles,
    # never drop one a live handle needs
    live = [v for v, r in s.alive.items() if r() is not None and r()._store is s]
    assert s.first <= min(live), f"{what}: log kept from {s.first} but version {min(live)} is alive"
    assert min(s.alive) >= s.first, f"{what}: versions below {s.first} still noted ({sorted(s.alive)[:5]})"
    held = [e is not None for e in s.log]  # the entries before the oldest live version are released, the rest held
    assert held == [k >= s.first - s.base for k in range(len(s.log))], f"{what}: entries held {held}, from {s.first}"


def nt_value(h, depth=0):
    """A numba_ta handle as a :class:`RefList` (read with :func:`peek`)."""
    assert isinstance(h, TensorListHandle), h
    assert depth < 20, "lists nested too deep (a cycle?)"
    s = peek(h)
    items = []
    for i in range(s.length):
        if s.dtype == VARIANT:
            v = s.items[i]
            if v is _UNSET:
                items.append(None)
            elif isinstance(v, VariantZero):
                items.append(VZ)
            elif isinstance(v, TensorListHandle):
                items.append(nt_value(v, depth + 1))
            else:
                items.append(("object", v))
        else:
            items.append(s.get(i) if s.is_set(i) else None)
    return RefList(s.dtype, s.element_shape, s.max_num_elements, tuple(items))


def same_array(a, b):
    return (
        isinstance(a, np.ndarray)
        and a.dtype == b.dtype
        and a.shape == b.shape
        and np.array_equal(a, b, equal_nan=a.dtype.kind == "f")
    )


def diff_lists(a, b, path="list"):
    """Where two :class:`RefList` values differ (None when equal)."""
    for k in ("dtype", "element_shape", "max_num_elements"):
        if getattr(a, k) != getattr(b, k):
            return f"{path}.{k}: {getattr(a, k)!r} vs {getattr(b, k)!r}"
    if len(a.items) != len(b.items):
        return f"{path}: length {len(a.items)} vs {len(b.items)}"
    for i, (x, y) in enumerate(zip(a.items, b.items, strict=True)):
        d = diff_items(x, y, f"{path}[{i}]")
        if d:
            return d
    return None


def diff_items(x, y, path):
    if y is None or x is None:
        return None if x is y else f"{path}: {x!r} vs {y!r}"
    if isinstance(y, RefList):
        return diff_lists(x, y, path) if isinstance(x, RefList) else f"{path}: {x!r} vs list {y!r}"
    if y is VZ:
        return None if x is VZ else f"{path}: {x!r} vs the variant zero"
    return None if same_array(x, y) else f"{path}: {x!r} vs {y!r}"


def diff_result(nt, r, path="result"):
    """Where numba_ta's op result differs from the reference's (None when equal)."""
    if isinstance(r, RefList):
        if not isinstance(nt, TensorListHandle):
            return f"{path}: {nt!r} is not a list"
        return diff_lists(nt_value(nt), r, path)
    if r is VZ:
        return None if nt is numba_ta.VARIANT_ZERO else f"{path}: {nt!r} vs the variant zero"
    if isinstance(r, tuple):
        if not isinstance(nt, tuple) or len(nt) != len(r):
            return f"{path}: {nt!r} vs {r!r}"
        for k, (x, y) in enumerate(zip(nt, r, strict=True)):
            d = diff_result(x, y, f"{path}[{k}]")
            if d:
                return d
        return None
    if isinstance(r, np.generic):
        return None if type(nt) is type(r) and nt == r else f"{path}: {nt!r} vs {r!r}"
    assert isinstance(r, np.ndarray), r
    if not isinstance(nt, np.ndarray) or nt.dtype != r.dtype or nt.shape != r.shape:
        return f"{path}: {nt!r} vs {r!r}"
    if r.dtype == VARIANT:
        for k, (x, y) in enumerate(zip(nt.reshape(-1).tolist(), r.reshape(-1).tolist(), strict=True)):
            d = diff_result(x, y, f"{path}.flat[{k}]")
            if d:
                return d
        return None
    return None if same_array(nt, r) else f"{path}: {nt!r} vs {r!r}"


def scribble(x):
    """Overwrite a numeric array in place (checks that no list aliases it)."""
    if isinstance(x, np.ndarray) and x.dtype != VARIANT and x.size and x.flags.writeable:
        if x.dtype == np.bool_:
            np.logical_not(x, out=x)
        else:
            x += 7


def concat_v1_known_bug(es, attr):
    """TensorListConcat inputs where numba_ta has a known bug (see the xfail tests below): not generated.

    An attribute of rank 0; or, on a list whose element shape is fully defined (the
    per-element checks do not run), an attribute whose dimensions after the first
    contradict it, or a list of scalars.
    """
    if attr is None:
        return False
    if len(attr) == 0:
        return True
    return ref.fully_defined(es) and (len(es) == 0 or not ref.compatible(tuple(attr[1:]), tuple(es[1:])))


# --------------------------------------------------------------------------------------
# the machine


class Slot:
    """One list of the bundle: numba_ta's handle and the reference's value."""

    def __init__(self, nt, value, label):
        self.nt, self.ref, self.label = nt, value, label

    def __repr__(self):
        return self.label


def conv(x, side):
    """An argument as one side takes it: slots -> handle or value; ZERO -> the variant zero."""
    if isinstance(x, Slot):
        return x.nt if side == "nt" else x.ref
    if isinstance(x, str) and x == ZERO:
        return numba_ta.VARIANT_ZERO if side == "nt" else VZ
    if isinstance(x, np.ndarray):
        if x.dtype == VARIANT:
            out = np.empty(x.shape, object)
            for k, v in enumerate(x.reshape(-1).tolist()):
                out.reshape(-1)[k] = conv(v, side)
            return out
        return x.copy()  # each side its own copy (scribbled after the op)
    if isinstance(x, list):
        return [conv(v, side) for v in x]
    return x


def objects(*values):
    out = np.empty(len(values), object)
    for k, v in enumerate(values):
        out[k] = v
    return out


NT_OPS = {name: getattr(raw_ops, name) for name in ref.__dict__ if name.startswith(("TensorList", "EmptyTensorList"))}
NT_OPS["ZerosLike"] = lambda x: gradients.tensor_list_zeros_like(x)
NT_OPS["AddN"] = lambda inputs: gradients.tensor_list_add_n(inputs)


class ListMachine(RuleBasedStateMachine):
    lists = Bundle("lists")

    def __init__(self):
        super().__init__()
        self.slots = []  # the live slots (the bundle's, minus the dropped ones)
        self.n = 0
        self.saved = (_config.PARALLEL_MIN_ELEMENTS, _config.DENSE_SLACK_BYTES, _config.DENSE_FACTOR)
        COUNTS["examples"] += 1

    def teardown(self):
        _config.PARALLEL_MIN_ELEMENTS, _config.DENSE_SLACK_BYTES, _config.DENSE_FACTOR = self.saved

    # -- plumbing ------------------------------------------------------------------------
    def slot(self, nt, value):
        self.n += 1
        s = Slot(nt, value, f"l{self.n}")
        self.slots.append(s)
        COUNTS["max_live"] = max(COUNTS["max_live"], len(self.slots))
        return s

    def call(self, op, **kw):
        """Run ``op`` on both sides and compare; return ``(numba_ta result, reference result)`` or None on an error."""
        COUNTS["ops"] += 1
        for v in kw.values():
            flat = v.reshape(-1).tolist() if isinstance(v, np.ndarray) and v.dtype == VARIANT else v
            for s in flat if isinstance(flat, list) else [flat]:
                if isinstance(s, Slot) and s.nt._v != s.nt._store.ver:
                    COUNTS["stale_uses"] += 1
        kw_nt = {k: conv(v, "nt") for k, v in kw.items()}
        kw_ref = {k: conv(v, "ref") for k, v in kw.items()}
        ctx = f"{op}({', '.join(f'{k}={v!r}' for k, v in kw.items())})"
        try:
            r = getattr(ref, op)(**kw_ref)
            r_err = None
        except RefError as e:
            r, r_err = None, e
        if op == "AddN" and "addn-shape" in KNOWN_BUGS and r_err is None and ref.misfit(r):
            return None
        try:
            nt = NT_OPS[op](**kw_nt)
            nt_err = None
        except OpError as e:
            nt, nt_err = None, e
        if r_err is not None:
            assert nt_err is not None, f"{ctx}: numba_ta returned {nt!r}, reference raised {r_err}"
            assert (type(nt_err).__name__, nt_err.message) == (r_err.cls, r_err.text), (
                f"{ctx}:\n  numba_ta:  {type(nt_err).__name__}: {nt_err.message}\n  reference: {r_err}"
            )
            COUNTS["errors"] += 1
            OUTCOMES[op, r_err.code] += 1
            return None
        assert nt_err is None, f"{ctx}: numba_ta raised {type(nt_err).__name__}: {nt_err.message}; reference {r!r}"
        d = diff_result(nt, r)
        assert d is None, f"{ctx}: {d}"
        OUTCOMES[op, "ok"] += 1
        for v in list(kw_nt.values()) + [nt]:  # no aliasing: inputs and results are private
            for x in v if isinstance(v, tuple) else [v]:
                scribble(x)
        return nt, r

    def draw_dtype(self, data, numeric=False):
        return data.draw(st.sampled_from(NUMERIC if numeric else DTYPES), label="dtype")

    def shape_arg(self, data, hint):
        """An ``element_shape`` input: mostly around ``hint`` (a partial shape), sometimes invalid."""
        k = data.draw(st.integers(0, 19), label="shape kind")
        if k < 4 or (hint is None and k < 12):
            return np.array(-1, np.int32)
        if k < 12:
            dims = [-1 if d is None or data.draw(st.booleans(), label="open") else d for d in hint]
            return np.array(dims, np.int32)
        if k < 16:
            return np.array(data.draw(st.sampled_from(SHAPES), label="other"), np.int32)
        return data.draw(
            st.sampled_from([np.array(0, np.int32), np.array([[1]], np.int32), np.array([2, -2], np.int32)]),
            label="bad shape",
        )

    def list_shape(self, data, base):
        """A list's element shape: unknown, ``base``, ``base`` partly unknown, or unknown dims only."""
        k = data.draw(st.integers(0, 5), label="es kind")
        if k <= 1:
            return None
        if k <= 3:
            return tuple(base)
        return tuple(None if data.draw(st.booleans(), label="open") else d for d in base)

    def item_shape(self, data, es):
        """The shape of an item for a list of element shape ``es``: mostly compatible."""
        if es is None or data.draw(st.integers(0, 9), label="odd shape") == 0:
            return data.draw(st.sampled_from(SHAPES), label="shape")
        return tuple(data.draw(st.integers(0, 3), label="dim") if d is None else d for d in es)

    def values(self, data, dtype, shape):
        n = int(np.prod(shape, dtype=np.int64))
        ints = data.draw(st.lists(st.integers(-3, 9), min_size=n, max_size=n), label="values")
        return np.array(ints, np.int64).reshape(shape).astype(dtype)

    def op_dtype(self, data, dt, one_in=15):
        """The dtype argument of an op on a list of ``dt``: ``dt``, or (one draw in ``one_in``) any dtype."""
        return dt if data.draw(st.integers(0, one_in - 1), label="wrong dtype") else self.draw_dtype(data)

    def rows_tensor(self, data, dt, rows, inner, es):
        """A tensor of ``rows`` rows of ``dt`` for a list of element shape ``es``: lists (``inner`` and the
        variant zero, in turn) for a variant ``dt``, else values, mostly of compatible rows; None while a
        known bug keeps rows of lists from being generated."""
        if dt == VARIANT:  # rows of lists, pushed to lists of lists
            if "variant-rows" in KNOWN_BUGS:
                return None
            return objects(*[inner if j % 2 == 0 else ZERO for j in range(rows)])
        shape = (rows, *self.item_shape(data, es)) if data.draw(st.integers(0, 14)) else ()
        return self.values(data, dt, shape)

    def item(self, data, target, inner):
        """An item for the list ``target``: of its dtype mostly; a list (``inner``) or the variant zero for a
        list of variants."""
        dt = self.op_dtype(data, target.ref.dtype)
        if dt == VARIANT:
            return ZERO if data.draw(st.integers(0, 5), label="zero item") == 0 else inner
        return self.values(data, dt, self.item_shape(data, target.ref.element_shape))

    def index(self, data, n, extra=2):
        """An index: mostly of an element, else anything from -2 to past the end."""
        if n and data.draw(st.integers(0, 3), label="in range"):
            return data.draw(st.integers(0, n - 1), label="index")
        return data.draw(st.integers(-2, n + extra), label="index")

    def indices(self, data, n, k, extra=2):
        return [self.index(data, n, extra) for _ in range(k)]

    def rare(self, data, label, one_in=10):
        """True once in ``one_in`` draws."""
        return data.draw(st.integers(0, one_in - 1), label=label) == 0

    # -- creating lists -------------------------------------------------------------------
    @initialize(parallel=st.booleans(), policy=st.sampled_from(MEMORY_POLICIES))
    def kernels(self, parallel, policy):
        _config.PARALLEL_MIN_ELEMENTS = 0 if parallel else 1 << 62
        _config.DENSE_SLACK_BYTES, _config.DENSE_FACTOR = policy

    @rule(target=lists, data=st.data())
    def create(self, data):
        kind = data.draw(st.sampled_from(["empty", "reserve", "from_tensor", "scatter", "scatter_v2", "split"]))
        dt = self.draw_dtype(data, numeric=kind not in ("empty", "reserve"))
        base = () if dt == VARIANT else data.draw(st.sampled_from(SHAPES), label="base")
        es = self.list_shape(data, base)
        es_arg = self.shape_arg(data, es) if data.draw(st.integers(0, 9), label="odd es") == 0 else None
        if es_arg is None:
            es_arg = np.array(-1 if es is None else [-1 if d is None else d for d in es], np.int32)
        n = data.draw(st.integers(0, 4), label="n")
        if kind == "empty":
            m = data.draw(st.sampled_from([-1, -1, 0, 1, 2, 3, -5, np.array([1], np.int32)]), label="max")
            res = self.call("EmptyTensorList", element_shape=es_arg, max_num_elements=m, element_dtype=dt)
        elif kind == "reserve":
            num = data.draw(st.one_of(st.integers(-1, 4), st.just(np.array([2], np.int32))), label="num")
            res = self.call("TensorListReserve", element_shape=es_arg, num_elements=num, element_dtype=dt)
        elif kind == "split":
            lengths = [
                -1 if self.rare(data, "negative", 20) else data.draw(st.integers(0, 3), label="length")
                for _ in range(data.draw(st.integers(0, 4), label="pieces"))
            ]
            rows = max(0, sum(lengths)) + (
                data.draw(st.integers(-1, 1), label="rows off") if data.draw(st.integers(0, 5)) == 0 else 0
            )
            shape = (max(rows, 0), *base[1:]) if data.draw(st.integers(0, 9), label="scalar") else ()
            lens = (
                np.array(lengths, np.int64)
                if data.draw(st.integers(0, 19), label="lens 2d")
                else np.array([lengths], np.int64)
            )
            res = self.call("TensorListSplit", tensor=self.values(data, dt, shape), element_shape=es_arg, lengths=lens)
        else:
            shape = (n, *self.item_shape(data, es)) if data.draw(st.integers(0, 14), label="scalar") else ()
            t = self.values(data, dt, shape)
            if kind == "from_tensor":
                res = self.call("TensorListFromTensor", tensor=t, element_shape=es_arg)
            else:
                rows = shape[0] if shape else 0
                k = rows + (
                    data.draw(st.integers(-1, 1), label="bad count") if data.draw(st.integers(0, 9)) == 0 else 0
                )
                idx = np.array(
                    [
                        -1 if self.rare(data, "negative", 20) else data.draw(st.integers(0, 5), label="i")
                        for _ in range(max(k, 0))
                    ],
                    np.int32,
                )
                if kind == "scatter":
                    res = self.call("TensorListScatter", tensor=t, indices=idx, element_shape=es_arg)
                else:
                    num = (
                        np.array([3], np.int32)
                        if self.rare(data, "num 1-d")
                        else data.draw(st.sampled_from([-1, -1, -1, 6, 7, 3, 0, -2]), label="num")
                    )
                    res = self.call(
                        "TensorListScatterV2", tensor=t, indices=idx, element_shape=es_arg, num_elements=num
                    )
        return multiple() if res is None else self.slot(*res)

    @rule(target=lists, a=lists, b=lists, data=st.data())
    def from_handles(self, a, b, data):
        """FromTensor of a vector of lists: a list of lists."""
        pick = data.draw(st.sampled_from(["ab", "aa", "a0", ""]), label="rows")
        vals = [{"a": a, "b": b, "0": ZERO}[c] for c in pick]
        es = data.draw(st.sampled_from([np.array(-1, np.int32), np.zeros(0, np.int32), np.array([1], np.int32)]))
        res = self.call("TensorListFromTensor", tensor=objects(*vals), element_shape=es)
        return multiple() if res is None else self.slot(*res)

    # -- element ops ----------------------------------------------------------------------
    @rule(target=lists, h=lists, inner=lists, data=st.data())
    def set_item(self, h, inner, data):
        n = len(h.ref.items)
        i = self.index(data, n, extra=3)
        idx = data.draw(st.sampled_from(["int"] * 12 + ["np", "vec", "mat", "empty", "pair"]), label="index form")
        index = {"int": i, "np": np.int32(i), "vec": np.array([i], np.int32), "mat": np.array([[i]], np.int32),
                 "empty": np.zeros(0, np.int32), "pair": np.array([i, 1], np.int32)}[idx]  # fmt: skip
        resize = data.draw(st.booleans(), label="resize")
        res = self.call(
            "TensorListSetItem", input_handle=h, index=index, item=self.item(data, h, inner),
            resize_if_index_out_of_bounds=resize,
        )  # fmt: skip
        return multiple() if res is None else self.slot(*res)

    @rule(target=lists, h=lists, data=st.data())
    def get_item(self, h, data):
        n = len(h.ref.items)
        i = self.index(data, n)
        form = data.draw(st.integers(0, 9), label="index form")
        index = i if form < 6 else np.array([i] if form < 8 else [[i]] if form < 9 else [i, i], np.int32)
        dt = self.op_dtype(data, h.ref.dtype)
        res = self.call(
            "TensorListGetItem", input_handle=h, index=index,
            element_shape=self.shape_arg(data, h.ref.element_shape), element_dtype=dt,
        )  # fmt: skip
        if res is not None and isinstance(res[0], TensorListHandle):
            return self.slot(*res)  # an inner list, now a list of its own
        return multiple()

    @rule(target=lists, h=lists, inner=lists, data=st.data())
    def push_back(self, h, inner, data):
        res = self.call("TensorListPushBack", input_handle=h, tensor=self.item(data, h, inner))
        return multiple() if res is None else self.slot(*res)

    @rule(target=lists, a=lists, b=lists, data=st.data())
    def push_back_batch(self, a, b, data):
        hs = data.draw(st.sampled_from(["ab", "aa", "a", "", "a0"]), label="handles")
        handles = objects(*[{"a": a, "b": b, "0": ZERO}[c] for c in hs])
        dt = self.op_dtype(data, a.ref.dtype)
        rows = len(hs) if data.draw(st.integers(0, 9), label="bad rows") else data.draw(st.integers(0, 3))
        t = self.rows_tensor(data, dt, rows, b, a.ref.element_shape)
        if t is None:
            return multiple()
        res = self.call("TensorListPushBackBatch", input_handles=handles, tensor=t)
        if res is None:
            return multiple()
        return multiple(*[self.slot(x, y) for x, y in zip(res[0].tolist(), res[1].tolist(), strict=True)])

    @rule(target=lists, h=lists, data=st.data())
    def pop_back(self, h, data):
        dt = self.op_dtype(data, h.ref.dtype)
        res = self.call(
            "TensorListPopBack", input_handle=h, element_shape=self.shape_arg(data, h.ref.element_shape),
            element_dtype=dt,
        )  # fmt: skip
        if res is None:
            return multiple()
        (h_nt, v_nt), (h_r, v_r) = res
        out = [self.slot(h_nt, h_r)]
        if isinstance(v_nt, TensorListHandle):
            out.append(self.slot(v_nt, v_r))
        return multiple(*out)

    @rule(target=lists, h=lists, data=st.data())
    def resize(self, h, data):
        n = len(h.ref.items)
        size = data.draw(st.integers(-1, n + 3), label="size")
        if self.rare(data, "size 1-d"):
            size = np.array([1], np.int32)
        res = self.call("TensorListResize", input_handle=h, size=size)
        return multiple() if res is None else self.slot(*res)

    @rule(target=lists, h=lists, inner=lists, data=st.data())
    def scatter_into(self, h, inner, data):
        n = len(h.ref.items)
        k = data.draw(st.integers(0, 3), label="k")
        idx = [self.index(data, n, 2) if not self.rare(data, "past end", 4) else n + j for j in range(k)]
        dt = self.op_dtype(data, h.ref.dtype)
        rows = k if data.draw(st.integers(0, 9), label="bad rows") else data.draw(st.integers(0, 4))
        t = self.rows_tensor(data, dt, rows, inner, h.ref.element_shape)
        if t is None:
            return multiple()
        indices = (
            np.array(idx, np.int32)
            if data.draw(st.integers(0, 14), label="idx form")
            else np.array(idx[:1] or [0], np.int32).reshape(())
        )
        res = self.call("TensorListScatterIntoExistingList", input_handle=h, tensor=t, indices=indices)
        return multiple() if res is None else self.slot(*res)

    # -- whole-list reads -------------------------------------------------------------------
    @rule(h=lists, data=st.data())
    def stack(self, h, data):
        dt = self.op_dtype(data, h.ref.dtype)
        n = len(h.ref.items)
        num = data.draw(st.sampled_from([-1] * 6 + [n, n, n + 1, -2]), label="num_elements")
        self.call(
            "TensorListStack", input_handle=h, element_shape=self.shape_arg(data, h.ref.element_shape),
            element_dtype=dt, num_elements=num,
        )  # fmt: skip

    @rule(h=lists, data=st.data())
    def gather(self, h, data):
        n = len(h.ref.items)
        dt = self.op_dtype(data, h.ref.dtype)
        idx = self.indices(data, n, data.draw(st.integers(0, 4), label="k"), extra=1)
        form = data.draw(st.integers(0, 9), label="indices form")
        indices = np.array(idx, np.int32) if form else np.array(idx[:1] or [0], np.int32).reshape(())
        self.call(
            "TensorListGather", input_handle=h, indices=indices,
            element_shape=self.shape_arg(data, h.ref.element_shape), element_dtype=dt,
        )  # fmt: skip

    @rule(h=lists, data=st.data())
    def concat(self, h, data):
        dt = self.op_dtype(data, h.ref.dtype)
        es = h.ref.element_shape
        if data.draw(st.booleans(), label="v2"):
            n = len(h.ref.items)
            ld = [
                -1 if self.rare(data, "negative", 6) else data.draw(st.integers(0, 3), label="ld")
                for _ in range(data.draw(st.integers(0, n + 1), label="nld"))
            ]
            lead = np.array(ld, np.int64) if data.draw(st.integers(0, 14), label="ld 2d") else np.array([ld], np.int64)
            self.call(
                "TensorListConcatV2", input_handle=h, element_shape=self.shape_arg(data, es), leading_dims=lead,
                element_dtype=dt,
            )  # fmt: skip
            return
        attr = None
        if data.draw(st.booleans(), label="with attr"):
            arg = self.shape_arg(data, es)
            if arg.ndim == 1 and (arg >= -1).all():  # (an attribute below -1 is refused when converted)
                attr = [None if d == -1 else int(d) for d in arg.tolist()]
        if "concat-attr" in KNOWN_BUGS and concat_v1_known_bug(es, attr):
            return
        self.call("TensorListConcat", input_handle=h, element_dtype=dt, element_shape=attr)

    @rule(h=lists)
    def length(self, h):
        self.call("TensorListLength", input_handle=h)

    @rule(h=lists, shape_type=st.sampled_from([np.int32, np.int64]))
    def element_shape(self, h, shape_type):
        self.call("TensorListElementShape", input_handle=h, shape_type=shape_type)

    # -- lists of lists and gradients --------------------------------------------------------
    @rule(target=lists, a=lists, b=lists, c=lists, data=st.data())
    def concat_lists(self, a, b, c, data):
        form = data.draw(st.sampled_from(["ab", "aa", "ab", "vec", "vec_bad", "zero"]), label="form")
        if form == "vec":
            x, y = objects(a, b), objects(c, a)
        elif form == "vec_bad":
            x, y = objects(a, b), objects(c)
        elif form == "zero":
            x, y = objects(a, ZERO), objects(b, c)
        else:
            x, y = a, (a if form == "aa" else b)
        dt = self.op_dtype(data, a.ref.dtype, one_in=10)
        res = self.call("TensorListConcatLists", input_a=x, input_b=y, element_dtype=dt)
        if res is None:
            return multiple()
        if isinstance(res[0], np.ndarray):
            return multiple(*[self.slot(p, q) for p, q in zip(res[0].tolist(), res[1].tolist(), strict=True)])
        return self.slot(*res)

    @rule(target=lists, h=lists)
    def zeros_like(self, h):
        res = self.call("ZerosLike", x=h)
        return multiple() if res is None else self.slot(*res)

    @rule(target=lists, a=lists, b=lists, c=lists, data=st.data())
    def add_n(self, a, b, c, data):
        form = data.draw(st.sampled_from(["ab", "aa", "a", "abc", "a0", "vec"]), label="form")
        inputs = {"ab": [a, b], "aa": [a, a], "a": [a], "abc": [a, b, c], "a0": [a, ZERO],
                  "vec": [a, objects(b, c)]}[form]  # fmt: skip
        res = self.call("AddN", inputs=inputs)
        return multiple() if res is None else self.slot(*res)

    @rule(target=lists, h=lists, data=st.data())
    def add_partner(self, h, data):
        """A list like ``h`` (dtype, element shape, length, some elements set; sometimes not quite), added to ``h``."""
        r = h.ref
        if r.dtype == VARIANT:
            return multiple()
        es = (
            r.element_shape
            if not self.rare(data, "other es", 5)
            else self.list_shape(data, data.draw(st.sampled_from(SHAPES)))
        )
        es_arg = np.array(-1 if es is None else [-1 if d is None else d for d in es], np.int32)
        res = self.call("TensorListReserve", element_shape=es_arg, num_elements=len(r.items), element_dtype=r.dtype)
        assert res is not None
        slot = self.slot(*res)
        for i, v in enumerate(r.items):
            if v is not None and data.draw(st.booleans(), label="set"):
                shape = v.shape if not self.rare(data, "other shape", 5) else self.item_shape(data, es)
                res = self.call("TensorListSetItem", input_handle=slot, index=i, item=self.values(data, r.dtype, shape))
                if res is not None:
                    slot = self.slot(*res)
        pair = [h, slot] if data.draw(st.booleans(), label="order") else [slot, h]
        res = self.call("AddN", inputs=pair)
        return multiple(slot) if res is None else multiple(slot, self.slot(*res))

    @rule(h=consumes(lists))
    def drop(self, h):
        """Forget a handle (numba_ta's next op that makes a version prunes the entries no live handle needs)."""
        self.slots.remove(h)
        store, first = h.nt._store, h.nt._store.first
        h.nt = h.ref = None
        store.prune()  # what that op does (not every drop is followed by one here)
        COUNTS["pruned"] += store.first > first

    # -- the invariant ----------------------------------------------------------------------
    @invariant()
    def every_live_list_unchanged(self):
        for s in self.slots:
            check_versions(s.nt, s.label)
            d = diff_lists(nt_value(s.nt), s.ref, s.label)
            assert d is None, d


ListMachine.TestCase.settings = settings(stateful_step_count=STEPS)
TestListMachine = ListMachine.TestCase


def test_report_figures(machine_figures):
    """Record what the machine ran; check it ran ops, both outcomes and stale handles."""
    machine_figures(COUNTS, "list_machine")
    assert COUNTS["stale_uses"] > 0 and COUNTS["pruned"] > 0, COUNTS
    print(f"list state machine: {COUNTS}")


# --------------------------------------------------------------------------------------
# the numba_ta bugs this machine found (fixed; the machine generates these inputs again)


def test_fixed_bug_concat_attr_contradicts_list_shape():
    h = raw_ops.TensorListFromTensor(tensor=np.arange(6, dtype=np.float32).reshape(1, 2, 3), element_shape=[2, 3])
    with pytest.raises(numba_ta.errors.InvalidArgumentError):
        raw_ops.TensorListConcat(input_handle=h, element_dtype=np.float32, element_shape=[None, 100])


def test_fixed_bug_concat_attr_rank_0():
    h = raw_ops.TensorListFromTensor(tensor=np.arange(4, dtype=np.float32).reshape(2, 2), element_shape=-1)
    with pytest.raises(numba_ta.errors.InvalidArgumentError) as e:
        raw_ops.TensorListConcat(input_handle=h, element_dtype=np.float32, element_shape=[])
    assert e.value.message == "element_shape must not be empty"  # TF's text, checked before L1 to L3


def test_fixed_bug_concat_scalars_fully_defined():
    h = raw_ops.TensorListFromTensor(tensor=np.arange(3, dtype=np.float32), element_shape=np.zeros(0, np.int32))
    with pytest.raises(numba_ta.errors.InvalidArgumentError):
        raw_ops.TensorListConcat(input_handle=h, element_dtype=np.float32, element_shape=[None])


@pytest.mark.parametrize("op", ["TensorListScatterIntoExistingList", "TensorListPushBackBatch"])
def test_fixed_bug_variant_rows(op):
    outer = raw_ops.EmptyTensorList(element_shape=-1, max_num_elements=-1, element_dtype="variant")
    inner = raw_ops.EmptyTensorList(element_shape=-1, max_num_elements=-1, element_dtype=np.float32)
    if op == "TensorListPushBackBatch":
        out = raw_ops.TensorListPushBackBatch(input_handles=objects(outer), tensor=objects(inner))[0]
    else:
        out = raw_ops.TensorListScatterIntoExistingList(input_handle=outer, tensor=objects(inner), indices=[0])
    got = raw_ops.TensorListGetItem(input_handle=out, index=0, element_shape=-1, element_dtype="variant")
    assert isinstance(got, TensorListHandle) and got.element_dtype == np.float32 and len(got) == 0


def test_fixed_bug_add_n_element_shape():
    a = raw_ops.TensorListFromTensor(tensor=np.ones((1, 1), np.float32), element_shape=-1)
    b = raw_ops.TensorListReserve(element_shape=[3], num_elements=1, element_dtype=np.float32)
    try:
        c = gradients.tensor_list_add(a, b)
    except numba_ta.errors.InvalidArgumentError:
        return  # refused: fixed
    stacked = raw_ops.TensorListStack(input_handle=c, element_shape=-1, element_dtype=np.float32)
    pytest.fail(f"AddN gave a list of element shape [3] holding a [1] element; Stack returned {stacked!r}")
