"""Pickling, copying and shipping TensorArrays.

A ``TensorArray``, a ``TensorArrayHandle`` and a gradient array pickle BY VALUE; the copy is
a new, independent, registered array with a new unique name and lock.  What is checked:

* :func:`test_program_twins`: seeded random op programs (``tests/helpers/fuzz_programs.py``, steered
  by the reference model: every op kind, errors included, forward and gradient arrays,
  static and dynamic, closed ...) run up to a random step; all their arrays are copied
  together (pickle protocols 2..5 in turn, or ``copy.deepcopy``); the copies have the same
  full state (``storage_view.nt_state``, the name aside, which must differ).  The rest of the
  program then runs on the originals -- the copies must not change -- and on the copies --
  the originals must not change --, with the same results and errors (names mapped).
* :class:`TestPickleMachine`: the stateful machine of ``tests/test_state_machine.py`` (all
  eleven ops against the reference model) with one more rule that replaces every array by
  a pickled copy: the copies go on agreeing with the reference, the originals stay frozen.
* dtypes (all fourteen, bytes compared exactly: NaN, -0.0, inf), protocols 0..5, the
  ``TensorArray`` object's own state (element-shape cell shared by the objects of one
  array, flags, size, flow), gradient arrays pickled with and without their forward
  array, closed arrays, the dynamic-size lock, names, ``copy.copy`` sharing, a
  ``stack(copy=False)`` view alive while pickling, pickling while another thread writes,
  corrupt states refused, and that no unused or stale byte of a buffer is ever pickled;
* :func:`test_multiprocessing`: arrays sent to ``spawn`` and ``forkserver`` workers
  (``tests/helpers/pickle_worker.py``), which go on with ops; the parent does the same ops and
  compares the results, errors, handle sharing and the arrays sent back.
"""

from __future__ import annotations

import copy
import math
import multiprocessing
import os
import pickle
import random
import re
import threading

import numpy as np
import pytest

import numba_ta
from numba_ta import raw_ops
from numba_ta.core import config as _config
from numba_ta.core.state import DENSE, RAGGED
from numba_ta.errors import InvalidArgumentError, OpError
from numba_ta.tensor_array import registry as _registry
from numba_ta.tensor_array.registry import TensorArrayHandle
from numba_ta.tensor_array.storage import Storage
from numba_ta.tf.dtypes import SUPPORTED_DTYPES
from tests.helpers import pickle_worker
from tests.helpers.fuzz_programs import FULL, make_program
from tests.helpers.storage_view import letter, nt_state, same_snapshot, same_value

F32 = np.float32
PROTOCOLS = list(range(2, pickle.HIGHEST_PROTOCOL + 1))
HOWS = [f"pickle{p}" for p in PROTOCOLS] + ["deepcopy"]


# --------------------------------------------------------------------------- helpers


def dup(obj, how="pickle5"):
    """A copy of ``obj`` made by ``how``: ``pickle<protocol>`` or ``deepcopy``."""
    if how == "deepcopy":
        return copy.deepcopy(obj)
    return pickle.loads(pickle.dumps(obj, protocol=int(how.removeprefix("pickle"))))


def handle_of(x):
    return x.handle if isinstance(x, numba_ta.TensorArray) else x


def view(x):
    """``nt_state`` of an array without its name (and the buffer's presence, except when closed)."""
    s = nt_state(handle_of(x))
    del s["name"]
    if not s["closed"]:
        s["data_none"] = None  # an array without stored data may keep a buffer or not
    return s


def same_bytes(x, y):
    """Two views agree, and every stored value is the same bytes (NaN payloads, -0.0)."""
    if not same_snapshot(x, y):
        return False
    return all(a is None or a.tobytes() == b.tobytes() for a, b in zip(x["values"], y["values"], strict=True))


def assert_copied(orig, new):
    """``new`` is an independent, registered copy of ``orig`` with a fresh name and lock."""
    h, h2 = handle_of(orig), handle_of(new)
    s, s2 = h._storage, h2._storage
    assert s2 is not s and h2 != h
    assert h2.name != h.name and h2.name in _registry.live_arrays()
    assert s2.lock is not s.lock and not s2.lock.locked()
    assert s.data is None or s2.data is None or not np.shares_memory(s.data, s2.data)
    x, y = view(orig), view(new)
    assert same_bytes(x, y), f"{h.name} -> {h2.name}:\n{x}\n{y}"


class Mapper:
    """Maps the names of one side's arrays to the other's, in messages (one pass, longest first)."""

    def __init__(self):
        self.names = {}

    def add(self, mine, theirs):
        self.names[mine] = theirs

    def __call__(self, msg):
        if not self.names:
            return msg
        pat = "|".join(re.escape(n) for n in sorted(self.names, key=len, reverse=True))
        return re.sub(f"(?:{pat})(?!\\d)", lambda m: self.names[m.group(0)], msg)


def outcome(fn, **kw):
    """``fn(**kw)`` as a comparable outcome: ("ok", result) or ("error", class, message)."""
    try:
        return ("ok", fn(**kw))
    except (OpError, TypeError, ValueError) as e:
        return ("error", type(e).__name__, getattr(e, "message", None) or str(e))


def run_steps(steps, env):
    """Run fuzz-program ``steps`` through raw_ops on ``env`` (symbols -> handles and flows)."""
    outs = []
    for step in steps:
        kw = {}
        for key, v in step.kwargs.items():
            kw[key] = env[v] if key == "handle" or (key == "flow_in" and isinstance(v, str)) else v
        out = outcome(getattr(raw_ops, FULL[step.op]), **kw)
        outs.append(out)
        if out[0] != "ok":
            continue
        if step.op in ("V3", "Grad", "GradWithShape"):
            env[step.out[0]], env[step.out[1]] = out[1]
        elif isinstance(step.out, str):
            env[step.out] = out[1]
    return outs


def same_outcome(a, b, mapped):
    """Outcome ``a`` (one side) equals ``b`` (other side, names mapped by ``mapped``)."""
    if a[0] != b[0]:
        return False
    if a[0] == "error":
        return a[1] == b[1] and a[2] == mapped(b[2])
    ra, rb = a[1], b[1]
    ra = ra if isinstance(ra, tuple) else (ra,)
    rb = rb if isinstance(rb, tuple) else (rb,)
    if len(ra) != len(rb):
        return False
    for x, y in zip(ra, rb, strict=True):
        if isinstance(x, TensorArrayHandle):
            if not isinstance(y, TensorArrayHandle):
                return False
            if x._storage.is_grad:
                if x.name != mapped(y.name):  # the copy's gradient of a copied forward array
                    return False
            elif re.sub(r"_\d+$", "", x.name) != re.sub(r"_\d+$", "", y.name):
                return False
            mapped.add(y.name, x.name)
        elif x is None or y is None:
            if x is not y:
                return False
        elif not same_value(x, y):
            return False
    return True


def handles(env):
    return {k: v for k, v in env.items() if isinstance(v, TensorArrayHandle)}


# --------------------------------------------------------------------------- random programs


def _program(seed):
    """The fuzz program of ``seed`` and the step where its arrays are copied."""
    prog = make_program(91000 + seed, 60)
    return prog, random.Random(seed).randrange(15, len(prog) - 5)


@pytest.mark.parametrize("seed", range(24))
def test_program_twins(seed, monkeypatch):
    """Copies of a program's arrays mid-way have their state, go on like them, and are independent."""
    monkeypatch.setattr(_config, "PARALLEL_MIN_ELEMENTS", 0 if seed % 3 == 0 else 1 << 62)
    how = HOWS[seed % len(HOWS)]
    prog, cut = _program(seed)
    env_a = {}
    run_steps(prog[:cut], env_a)
    env_b = dup(env_a, how)  # every array at once: gradient arrays stay with their forward arrays
    mapped = Mapper()  # the copies' names -> the originals'
    for sym, h in handles(env_a).items():
        assert_copied(h, env_b[sym])
        mapped.add(env_b[sym].name, h.name)
        fwd = h._storage
        for source, g in fwd.grads.items():  # the links of the forward arrays came along
            g_sym = next(k for k, v in handles(env_a).items() if v._storage is g)
            assert env_b[sym]._storage.grads[source] is env_b[g_sym]._storage
            assert env_b[g_sym].name == f"{env_b[sym].name}@{source}"
        assert set(env_b[sym]._storage.grads) == set(fwd.grads)

    snap_b = {k: view(h) for k, h in handles(env_b).items()}
    outs_a = run_steps(prog[cut:], env_a)
    for k, h in handles(env_b).items():
        assert same_bytes(view(h), snap_b[k]), f"{k}: the ops on the original changed the copy"

    snap_a = {k: view(h) for k, h in handles(env_a).items() if k in snap_b}
    outs_b = run_steps(prog[cut:], env_b)
    for k, snap in snap_a.items():
        assert same_bytes(view(env_a[k]), snap), f"{k}: the ops on the copy changed the original"

    for k, (a, b) in enumerate(zip(outs_a, outs_b, strict=True)):
        assert same_outcome(a, b, mapped), f"step {cut + k}: {prog[cut + k]!r}\n  original: {a}\n  copy:     {b}"
    for sym, h in handles(env_a).items():
        assert same_bytes(view(h), view(env_b[sym])), sym


# --------------------------------------------------------------------------- the state machine

try:
    import hypothesis
except ImportError:  # pragma: no cover - hypothesis is a test extra
    hypothesis = None

if hypothesis is not None:
    from hypothesis import settings
    from hypothesis import strategies as st
    from hypothesis.stateful import invariant, precondition, rule

    from tests.test_state_machine import STEPS, TensorArrayMachine

    class PickleMachine(TensorArrayMachine):
        """The reference-model machine, plus a rule that swaps every array for a pickled copy."""

        def __init__(self):
            super().__init__()
            self.frozen = []  # (original handle, its view when it was copied)

        @precondition(lambda self: self.arrays)
        @rule(how=st.sampled_from(HOWS))
        def copy_everything(self, how):
            olds = [a.nt for a in self.arrays]
            before = [view(h) for h in olds]
            news = dup(olds, how)
            for a, old, new in zip(self.arrays, olds, news, strict=True):
                assert_copied(old, new)
                a.nt = new
                self.names[a.ref.name] = new.name  # reference name -> the copy's
            self.frozen.extend(zip(olds, before, strict=True))

        @invariant()
        def originals_frozen(self):
            for h, snap in self.frozen:
                assert same_bytes(view(h), snap), f"{h.name} changed after it was copied"

    # a third of the profile's examples (ci: 66; NUMBA_TA_HYPOTHESIS_PROFILE=long: 6 666)
    PickleMachine.TestCase.settings = settings(stateful_step_count=STEPS, max_examples=settings().max_examples // 3)
    TestPickleMachine = PickleMachine.TestCase


# --------------------------------------------------------------------------- dtypes, protocols


def _special(dtype, n):
    v = np.arange(n, dtype=np.int64) - 2
    dt = np.dtype(dtype)
    if dt.kind == "c":
        out = (v + 1j * (v + 7)).astype(dt)
        out[0] = complex(np.nan, -0.0)
        return out
    if dt.kind == "u":
        return (np.abs(v) + 200).astype(dt)
    if dt.kind == "b":
        return (v % 2).astype(dt)
    out = v.astype(dt)
    if dt.kind == "f":
        out[:3] = [np.nan, -0.0, np.inf]
    return out


@pytest.mark.parametrize("dtype", sorted(d.name for d in SUPPORTED_DTYPES))
def test_every_dtype(dtype):
    """Each dtype: stored values (bytes exact), read / cleared / soft-zero / summed elements, the gradient link."""
    dt = np.dtype(dtype)
    h, f = raw_ops.TensorArrayV3(size=6, dtype=dt, element_shape=[3], clear_after_read=True)
    f = raw_ops.TensorArrayScatterV3(handle=h, indices=[0, 1, 2, 4], value=_special(dt, 12).reshape(4, 3), flow_in=f)
    raw_ops.TensorArrayReadV3(handle=h, index=1, flow_in=f, dtype=dt)  # C
    g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")  # soft zeros at 0, 1, 2, 4
    raw_ops.TensorArrayWriteV3(handle=g, index=2, value=_special(dt, 3), flow_in=gf)
    if dt.kind != "b":  # a second write sums (bool has no sum in TF)
        raw_ops.TensorArrayWriteV3(handle=g, index=2, value=np.ones(3, dt), flow_in=gf)
    assert view(h)["states"] == "WCWUWU" and view(g)["states"] == "ZZWUZU"
    h2, g2 = dup((h, g))
    assert_copied(h, h2)
    assert_copied(g, g2)
    assert h2._storage.dtype is dt and g2._storage.grads == {}
    assert raw_ops.TensorArrayGradV3(handle=h2, flow_in=0.0, source="gradients")[0] == g2
    a = raw_ops.TensorArrayGatherV3(handle=h, indices=[0, 4], flow_in=f, dtype=dt)
    b = raw_ops.TensorArrayGatherV3(handle=h2, indices=[0, 4], flow_in=f, dtype=dt)
    assert a.dtype == b.dtype == dt and a.tobytes() == b.tobytes()


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_protocols(protocol):
    """Every pickle protocol (0 and 1 too) round-trips a TensorArray, its handle and its gradient array."""
    ta = numba_ta.TensorArray(F32, size=3, element_shape=[None], infer_shape=False, clear_after_read=False)
    ta = ta.write(0, np.arange(2, dtype=F32)).write(2, np.arange(5, dtype=F32))
    g = ta.grad("gradients").write(0, np.ones(2, F32))
    ta2, h2, g2 = pickle.loads(pickle.dumps((ta, ta.handle, g), protocol=protocol))
    assert_copied(ta, ta2)
    assert_copied(g, g2)
    assert h2 == ta2.handle and ta2.handle._storage.grads["gradients"] is g2.handle._storage
    np.testing.assert_array_equal(ta2.read(2), np.arange(5, dtype=F32))


# --------------------------------------------------------------------------- the class


def test_class_state_round_trips():
    """dtype, dynamic_size, infer_shape, size, flow and the element-shape cell of the objects."""
    ta = numba_ta.TensorArray(np.int16, size=0, dynamic_size=True, infer_shape=True, element_shape=[None, 2])
    t1 = ta.write(0, np.ones((3, 2), np.int16))
    t1._flow = F32(2.5)
    t2 = t1.identity()
    other = numba_ta.TensorArray(np.int16, size=4, infer_shape=False)
    c1, c2, c_other = dup([t1, t2, other])
    for a, b in ((t1, c1), (t2, c2), (other, c_other)):
        assert_copied(a, b)
        for attr in ("_dtype", "_dynamic_size", "_infer_shape", "_size"):
            assert getattr(b, attr) == getattr(a, attr), attr
        assert b._dtype is b.handle._storage.dtype  # the fast paths' identity check
        assert type(b._flow) is F32 and b._flow == a._flow
        assert b.element_shape == a.element_shape and b._element_shape is not a._element_shape
    assert t1.element_shape == [3, 2] and c1.flow == F32(2.5)
    assert c1.handle == c2.handle and c1._element_shape is c2._element_shape  # shared again
    assert c_other._element_shape is not c1._element_shape
    assert c_other.size() == 4 and c1.size() == 1
    # the shared cell: an element shape inferred through one object is seen by the other
    o = numba_ta.TensorArray(F32, size=2, element_shape=[None])
    c, c_id = dup([o, o.identity()])
    c.write(0, np.ones(4, F32))
    assert c_id.element_shape == [4] and o.element_shape.as_list() == [None]
    with pytest.raises(ValueError, match="Inconsistent shapes"):
        c_id.write(1, np.ones(3, F32))


def test_gradient_wrapper_shares_forward_cell():
    """A gradient TensorArray pickled with its forward TensorArray shares its element-shape cell again."""
    ta = numba_ta.TensorArray(F32, size=2).write(0, np.ones(3, F32))
    g = ta.grad("gradients")
    ta2, g2 = dup((ta, g))
    assert g2._element_shape is ta2._element_shape
    assert ta2.grad("gradients").handle == g2.handle
    g2 = g2.write(0, np.full(3, 2.0, F32)).write(0, np.full(3, 3.0, F32))
    np.testing.assert_array_equal(g2.read(0), np.full(3, 5.0, F32))
    assert view(g)["states"] == "ZU"  # the original gradient array saw nothing


@pytest.mark.parametrize("order", ["forward first", "gradient first"])
def test_gradient_with_forward(order):
    """Pickled together: fwd.grad(source) of the copy is the copied gradient, named after the copy."""
    h, f = raw_ops.TensorArrayV3(size=3, dtype=F32, element_shape=[2], tensor_array_name="enc")
    f = raw_ops.TensorArrayScatterV3(handle=h, indices=[0, 1, 2], value=np.ones((3, 2), F32), flow_in=f)
    g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
    p, pf = raw_ops.TensorArrayGradWithShape(handle=h, flow_in=f, shape_to_prepend=[4], source="pfor")
    raw_ops.TensorArrayWriteV3(handle=g, index=1, value=np.full(2, 3.0, F32), flow_in=gf)
    objs = (h, g, p) if order == "forward first" else (p, g, h)
    copies = dict(zip(objs, dup(objs), strict=True))
    h2, g2, p2 = copies[h], copies[g], copies[p]
    for a in (h, g, p):
        assert_copied(a, copies[a])
    assert re.fullmatch(r"enc_\d+", h2.name) and h2.name != h.name
    assert g2.name == f"{h2.name}@gradients" and p2.name == f"{h2.name}@pfor"
    assert g2.container == "_tensor_array_grads" and set(_registry.live_arrays()) >= {h2.name, g2.name, p2.name}
    assert raw_ops.TensorArrayGradV3(handle=h2, flow_in=0.0, source="gradients")[0] == g2
    assert raw_ops.TensorArrayGradV3(handle=h2, flow_in=0.0, source="pfor")[0] == p2
    assert raw_ops.TensorArrayGradV3(handle=h, flow_in=0.0, source="gradients")[0] == g
    # independent: summing into the copy leaves the original as it was, and the other way round
    raw_ops.TensorArrayWriteV3(handle=g2, index=1, value=np.ones(2, F32), flow_in=0.0)
    raw_ops.TensorArrayWriteV3(handle=g, index=0, value=np.ones(2, F32), flow_in=0.0)
    np.testing.assert_array_equal(raw_ops.TensorArrayReadV3(handle=g2, index=1, flow_in=0.0, dtype=F32), [4, 4])
    np.testing.assert_array_equal(raw_ops.TensorArrayReadV3(handle=g, index=1, flow_in=0.0, dtype=F32), [3, 3])
    assert view(g2)["states"] == "ZCZ" and view(g)["states"] == "WCZ"
    # a new source on the copy makes a new gradient array, named after the copy
    n2, _ = raw_ops.TensorArrayGradV3(handle=h2, flow_in=0.0, source="gradients_1")
    assert n2.name == f"{h2.name}@gradients_1" and "gradients_1" not in h._storage.grads


def test_gradient_alone():
    """A gradient array pickled alone: an independent gradient array; a forward array alone brings its own."""
    h, f = raw_ops.TensorArrayV3(size=2, dtype=F32, element_shape=[2], tensor_array_name="x_1@y")
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones(2, F32), flow_in=f)
    g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="grads@odd_7")
    raw_ops.TensorArrayWriteV3(handle=g, index=0, value=np.ones(2, F32), flow_in=gf)
    g2 = dup(g)
    assert_copied(g, g2)
    assert g2._storage.is_grad and g2.container == "_tensor_array_grads"
    assert re.fullmatch(r"x_1@y_\d+@grads@odd_7", g2.name), g2.name
    assert raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="grads@odd_7")[0] == g  # the link stays
    raw_ops.TensorArrayWriteV3(handle=g2, index=0, value=np.ones(2, F32), flow_in=gf)  # sums
    np.testing.assert_array_equal(raw_ops.TensorArrayReadV3(handle=g2, index=0, flow_in=gf, dtype=F32), [2, 2])
    assert view(g)["states"] == "WU"
    with pytest.raises(InvalidArgumentError, match="Wrong input container"):
        raw_ops.TensorArrayGradV3(handle=g2, flow_in=gf, source="again")
    # the forward array pickled alone takes its gradient arrays along: they are part of its state
    h2 = dup(h)
    g3, _ = raw_ops.TensorArrayGradV3(handle=h2, flow_in=f, source="grads@odd_7")
    assert g3.name == f"{h2.name}@grads@odd_7" and g3 not in (g, g2)
    assert_copied(g, g3)
    assert h2._storage.dynamic_size is False and list(h2._storage.grads) == ["grads@odd_7"]


@pytest.mark.parametrize("how", HOWS)
def test_closed(how):
    """A closed array comes back closed (buffer freed); a closed forward array's gradient comes back alone."""
    h, f = raw_ops.TensorArrayV3(size=2, dtype=F32, element_shape=[2], dynamic_size=True)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones(2, F32), flow_in=f)
    g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
    raw_ops.TensorArrayCloseV3(handle=h)
    h2, g2 = dup((h, g), how)
    assert_copied(h, h2)
    assert_copied(g, g2)
    s2 = h2._storage
    assert s2.closed and s2.data is None and s2.size == 0 and s2.element_shape == (2,)
    for handle in (h, h2):
        with pytest.raises(InvalidArgumentError) as e:
            raw_ops.TensorArrayReadV3(handle=handle, index=0, flow_in=f, dtype=F32)
        assert e.value.message == f"TensorArray {handle.name} has already been closed."
    assert raw_ops.TensorArrayGatherV3(handle=h2, indices=[], flow_in=f, dtype=F32, element_shape=[2]).shape == (0, 2)
    assert re.fullmatch(r"TensorArrayV3_\d+@gradients", g2.name) and not g2.name.startswith(h2.name + "@")
    raw_ops.TensorArrayCloseV3(handle=g2)
    assert not g._storage.closed


def test_dynamic_and_the_lock():
    """A dynamic array stays dynamic (and grows); one whose gradient exists keeps its lock."""
    ta = numba_ta.TensorArray(F32, size=0, dynamic_size=True).write(0, np.ones(2, F32))
    free = dup(ta)
    assert free.handle._storage.dynamic_size and free.dynamic_size
    free = free.write(5, np.ones(2, F32))
    assert int(free.size()) == 6 and int(ta.size()) == 1
    ta.grad("gradients")
    locked = dup(ta)
    assert locked.handle._storage.dynamic_size is False and ta.handle._storage.dynamic_size is False
    for t in (ta, locked):
        with pytest.raises(InvalidArgumentError) as e:
            t.write(3, np.ones(2, F32))
        assert e.value.message == (
            f"TensorArray {t.handle.name}: Tried to write to index 3 but array is not resizeable and size is: 1"
        )


@pytest.mark.parametrize(
    ("kw", "base"),
    [
        ({}, "TensorArray"),
        ({"tensor_array_name": "foo"}, "foo"),
        ({"tensor_array_name": "a_1"}, "a_1"),
        ({"name": "TensorArrayV3"}, "TensorArrayV3"),
        ({"tensor_array_name": "dec_3_x"}, "dec_3_x"),
    ],
)
def test_names(kw, base):
    """The copy's name is ``<base>_<new counter>``: the original's base, a fresh number, registered."""
    ta = numba_ta.TensorArray(F32, size=1, **kw)
    assert re.fullmatch(re.escape(base) + r"_\d+", ta.handle.name)
    copies = [dup(ta, how) for how in HOWS]
    names = {c.handle.name for c in copies}
    assert len(names) == len(HOWS) and ta.handle.name not in names
    for n in names:
        assert re.fullmatch(re.escape(base) + r"_\d+", n) and n in _registry.live_arrays()
    del copies
    assert not names & set(_registry.live_arrays())  # freed with their last handle, as any array


# --------------------------------------------------------------------------- copy.copy, deepcopy


def test_copy_shares_deepcopy_does_not():
    """copy.copy of a TensorArray is identity() (same array, same cell); deepcopy is a new array."""
    ta = numba_ta.TensorArray(F32, size=3, element_shape=[None], clear_after_read=False)
    shallow = copy.copy(ta)
    assert shallow is not ta and shallow.handle == ta.handle and shallow._element_shape is ta._element_shape
    assert shallow.flow == ta.flow and shallow.dtype is ta.dtype
    shallow.write(0, np.ones(2, F32))
    np.testing.assert_array_equal(ta.read(0), np.ones(2, F32))  # written through the shallow copy
    assert ta.element_shape == [2]
    deep = copy.deepcopy(ta)
    assert_copied(ta, deep)
    deep.write(1, np.ones(2, F32))
    assert view(ta)["states"] == "RUU" and view(deep)["states"] == "RWU"
    # handles: copy.copy is an equal handle, deepcopy a new array
    assert copy.copy(ta.handle) == ta.handle and copy.copy(ta.handle) is not ta.handle
    assert copy.deepcopy(ta.handle) != ta.handle
    # the storage itself is never shared by a copy (a shallow one would corrupt both)
    s = ta.handle._storage
    s2 = copy.copy(s)
    assert s2 is not s and s2.name != s.name and not np.shares_memory(s2.data, s.data)


# --------------------------------------------------------------------------- bytes that must not travel

SENTINEL = np.float64(1.2345678901234567e-300)
SENT_BYTES = SENTINEL.tobytes()


def test_no_unused_or_stale_bytes_dense():
    """Dense buffer: unwritten rows, spare capacity and cleared elements are not pickled."""
    ta = numba_ta.TensorArray(np.float64, size=8, element_shape=[4], dynamic_size=True)
    ta = ta.write(0, np.ones(4)).write(2, np.full(4, 2.0)).write(5, np.full(4, SENTINEL))
    s = ta.handle._storage
    assert s.layout == DENSE
    rows = s.data.reshape(-1, s.width)
    rows[[1, 3, 4, 6, 7]] = SENTINEL  # "uninitialised" rows
    ta.read(5)  # cleared: its bytes stay in the buffer, stale
    ta = ta.write(8, np.full(4, 3.0))  # grows: spare capacity past the size
    s = ta.handle._storage
    s.data.reshape(-1, s.width)[9:] = SENTINEL
    assert SENT_BYTES in s.data.tobytes()
    blob = pickle.dumps(ta)
    assert SENT_BYTES not in blob
    assert s.__getstate__()["data"].size == 3 * 4
    ta2 = pickle.loads(blob)
    assert_copied(ta, ta2)
    assert SENT_BYTES not in ta2.handle._storage.data.tobytes()


def test_no_unused_or_stale_bytes_ragged():
    """Ragged buffer: spare room and the room a summed element left behind are not pickled."""
    h, f = raw_ops.TensorArrayV3(size=3, dtype=np.float64, identical_element_shapes=False)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=0, value=np.ones(2), flow_in=f)
    f = raw_ops.TensorArrayWriteV3(handle=h, index=1, value=np.ones(3), flow_in=f)
    g, gf = raw_ops.TensorArrayGradV3(handle=h, flow_in=f, source="gradients")
    raw_ops.TensorArrayWriteV3(handle=g, index=2, value=np.ones(1), flow_in=gf)
    raw_ops.TensorArrayWriteV3(handle=g, index=1, value=np.ones(3), flow_in=gf)
    raw_ops.TensorArrayWriteV3(handle=g, index=0, value=np.full(2, SENTINEL), flow_in=gf)
    raw_ops.TensorArrayScatterV3(handle=g, indices=[0], value=np.ones((1, 2)), flow_in=gf)  # sum: new room
    sg = g._storage
    assert sg.layout == RAGGED
    stored = np.zeros(sg.data.size, bool)  # the items some element holds
    for i in range(sg.size):
        if sg.state[i] & 8:
            o = int(sg.offsets[i])
            stored[o : o + math.prod(sg.shapes[sg.shape_id[i]])] = True
    sg.data[~stored] = SENTINEL  # spare room, and room no element holds (the dense rows it left)
    assert np.count_nonzero(~stored[: sg.used]), "no abandoned room to check"
    blob = pickle.dumps((h, g))
    assert SENT_BYTES not in blob
    assert sg.__getstate__()["data"].size == 2 + 3 + 1
    h2, g2 = pickle.loads(blob)
    assert_copied(g, g2)
    assert_copied(h, h2)
    np.testing.assert_array_equal(raw_ops.TensorArrayReadV3(handle=g2, index=0, flow_in=0.0, dtype=np.float64), [1, 1])


def test_layout_rebuilt():
    """Dense when the stored elements share one width (fast paths re-armed), ragged otherwise."""
    ta = numba_ta.TensorArray(F32, size=4, infer_shape=False)
    ta = ta.write(0, np.ones(2, F32)).write(1, np.ones(3, F32))
    ta.read(1)  # cleared: only the width-2 element holds data
    s2 = dup(ta).handle._storage
    assert s2.layout == DENSE and s2.width == 2 and s2._fast_shape == (2,)
    t3 = numba_ta.TensorArray(F32, size=4, infer_shape=False).write(0, np.ones(2, F32)).write(1, np.ones(3, F32))
    assert dup(t3).handle._storage.layout == RAGGED
    empty = dup(numba_ta.TensorArray(F32, size=4))
    assert empty.handle._storage.data is None
    empty = empty.write(3, np.ones(5, F32))
    np.testing.assert_array_equal(empty.read(3), np.ones(5, F32))


# --------------------------------------------------------------------------- views, threads, corrupt states


def test_stack_view_alive_while_pickling():
    """A stack(copy=False) view of the buffer stays valid and unchanged; the copy owns its data."""
    ta = numba_ta.TensorArray(F32, size=3, dynamic_size=True, clear_after_read=False, element_shape=[2])
    ta = ta.unstack(np.arange(6, dtype=F32).reshape(3, 2))
    v = ta.stack(copy=False)
    assert not v.flags.writeable and np.shares_memory(v, ta.handle._storage.data)
    ta2, v2 = pickle.loads(pickle.dumps((ta, v)))
    assert_copied(ta, ta2)
    np.testing.assert_array_equal(v2, v)
    assert not np.shares_memory(v2, ta2.handle._storage.data)
    ta = ta.write(20, np.ones(2, F32))  # grows the original's buffer while the view is alive
    ta2 = ta2.write(3, np.full(2, 9.0, F32))
    np.testing.assert_array_equal(v, np.arange(6, dtype=F32).reshape(3, 2))
    np.testing.assert_array_equal(ta2.stack(), np.concatenate([v, np.full((1, 2), 9.0, F32)]))
    assert int(ta.size()) == 21 and int(ta2.size()) == 4


def test_pickling_while_another_thread_writes():
    """Pickling takes the array's lock: every copy is a state the array was in (a prefix of the writes)."""
    n, w = 400, 16
    h, f = raw_ops.TensorArrayV3(size=n, dtype=np.int32, element_shape=[w])
    rows = np.arange(n * w, dtype=np.int32).reshape(n, w)

    def writer():
        for i in range(n):
            raw_ops.TensorArrayWriteV3(handle=h, index=i, value=rows[i], flow_in=f)

    t = threading.Thread(target=writer)
    t.start()
    seen = set()
    while t.is_alive() or not seen:
        h2 = pickle.loads(pickle.dumps(h))
        s = view(h2)
        k = s["states"].count("W")
        assert s["states"] == "W" * k + "U" * (n - k)
        for i in range(k):
            np.testing.assert_array_equal(s["values"][i], rows[i])
        seen.add(k)
    t.join()
    assert view(pickle.loads(pickle.dumps(h)))["states"] == "W" * n


def _good_state():
    ta = numba_ta.TensorArray(F32, size=3, infer_shape=False).write(0, np.ones(2, F32)).write(1, np.ones(3, F32))
    return ta.handle._storage.__getstate__()


@pytest.mark.parametrize(
    "corrupt",
    [
        lambda s: s.update(format=2),
        lambda s: s.update(dtype="float128"),
        lambda s: s.update(data=s["data"][:-1]),
        lambda s: s.update(data=s["data"].astype(np.float64)),
        lambda s: s.update(state=np.array([1, 16, 0], np.uint8)),
        lambda s: s.update(state=np.array([1, 1, 4], np.uint8)),
        lambda s: s.update(state=np.array([9, 9], np.uint8)),
        lambda s: s.update(shape_id=np.array([0, 5, -1], np.int32)),
        lambda s: s.update(shape_id=np.array([0, 1, 0], np.int32)),
        lambda s: s.update(shapes=[(2,), (-3,)]),
        lambda s: s.update(grads={"x": "not an array"}),
        lambda s: s.update(closed=True),
        lambda s: s.pop("size"),
    ],
)
def test_corrupt_states_refused(corrupt):
    """An inconsistent state raises ValueError and registers nothing (the good one loads)."""
    good = _good_state()
    Storage.__new__(Storage).__setstate__(dict(good))
    bad = dict(good)
    corrupt(bad)
    live = _registry.live_arrays()
    with pytest.raises(ValueError, match="not a numba_ta TensorArray state"):
        Storage.__new__(Storage).__setstate__(bad)
    assert _registry.live_arrays() == live


def test_letters_cover_every_state():
    """The programs' arrays, when copied, hold every element state and both layouts (a coverage guard)."""
    seen = set()
    for seed in range(24):
        env = {}
        prog, cut = _program(seed)
        run_steps(prog[:cut], env)
        for h in handles(env).values():
            s = h._storage
            seen.update(letter(int(b)) for b in s.state[: s.size])
            if s.layout == RAGGED:
                seen.add("ragged")
            if s.layout == DENSE:
                seen.add("dense")
    assert seen >= {"U", "W", "R", "C", "Z", "dense", "ragged"}, seen


# --------------------------------------------------------------------------- other processes

SCRIPT = [
    ("ta", "write", (3, np.full(2, 4.0, F32))),  # past its static size: error
    ("ta", "read", (0,)),
    ("ta", "read", (0,)),  # cleared: error
    ("ta", "write", (1, np.ones(2, F32))),  # written twice: error
    ("ta", "stack", ()),
    ("ta", "grad", ("gradients",), "g_again"),
    ("g", "write", (1, np.full(2, 0.5, F32))),
    ("g_again", "write", (1, np.full(2, 0.25, F32))),  # the same gradient array: sums
    ("g", "read", (1,)),
    ("g", "read", (2,)),  # a soft zero
    ("ragged", "concat", ()),
    ("ragged", "read", (1,)),
    ("closed", "size", ()),
    ("dyn", "write", (4, np.arange(3, dtype=np.int64))),
    ("dyn", "stack", ()),
]


def _arrays():
    ta = numba_ta.TensorArray(F32, size=3, element_shape=[2])
    ta = ta.unstack(np.arange(6, dtype=F32).reshape(3, 2))
    g = ta.grad("gradients")
    g = g.write(1, np.ones(2, F32))
    ragged = numba_ta.TensorArray(np.float64, size=2, infer_shape=False, clear_after_read=False)
    ragged = ragged.split(np.arange(5.0), [2, 3])
    closed = numba_ta.TensorArray(np.complex64, size=2, dynamic_size=True)
    closed.close()
    dyn = numba_ta.TensorArray(np.int64, size=0, dynamic_size=True).write(1, np.arange(3, dtype=np.int64))
    return {"ta": ta, "g": g, "ragged": ragged, "closed": closed, "dyn": dyn}


def _assert_same_outcomes(got, want):
    assert len(got) == len(want)
    for k, (a, b) in enumerate(zip(got, want, strict=True)):
        assert a[0] == b[0], (SCRIPT[k], a, b)
        if a[0] == "value":
            assert (a[1] is None and b[1] is None) or same_value(a[1], b[1]), (SCRIPT[k], a, b)
        else:
            assert a == b, (SCRIPT[k], a, b)


@pytest.mark.parametrize("method", ["spawn", "forkserver"])
def test_multiprocessing(method):
    """Arrays sent to a worker go on there as they do here; the arrays sent back are equal too."""
    if method not in multiprocessing.get_all_start_methods():
        pytest.skip(f"no {method} start method here")
    arrays = _arrays()
    before = {k: view(ta) for k, ta in arrays.items()}
    ctx = multiprocessing.get_context(method)
    with ctx.Pool(1) as pool:
        pid, received, outcomes, groups, back = pool.apply_async(pickle_worker.worker, (arrays, SCRIPT)).get(300)
    assert pid != os.getpid()
    for k, ta in arrays.items():  # the worker's ops changed nothing here
        assert same_bytes(view(ta), before[k]), k
    for k, (name, registered, dynamic) in received.items():
        assert registered, f"{k}: {name} not registered in the worker"
        assert dynamic == arrays[k].handle._storage.dynamic_size
    assert re.fullmatch(rf"{re.escape(received['ta'][0])}@gradients", received["g"][0])
    local = dict(arrays)
    want = pickle_worker.run_script(local, SCRIPT)
    _assert_same_outcomes(outcomes, want)
    assert any(o[0] == "error" for o in want) and any(o[0] == "value" for o in want)
    assert groups == pickle_worker.handle_groups(local) and ["g", "g_again"] in groups
    for k, ta in local.items():
        assert_copied(ta, back[k])
        assert same_bytes(view(back[k]), view(ta)), k
    assert back["g"].handle == back["g_again"].handle
    assert back["ta"].grad("gradients").handle == back["g"].handle
