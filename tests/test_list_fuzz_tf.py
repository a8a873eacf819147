"""Differential fuzzing of the TensorList ops against TensorFlow.

Seeded random programs of list ops (:func:`make_program`: creation ops, element ops,
whole-list reads, ConcatLists, PushBackBatch, Resize, ``ZerosLike`` and ``AddN`` on lists,
lists of lists and the variant zero; valid and invalid arguments; old handles used again)
run through ``tf.raw_ops`` in eager mode and through ``numba_ta.raw_ops`` (with
``numba_ta.gradients.tensor_list_zeros_like`` / ``tensor_list_add_n`` for ``ZerosLike`` /
``AddN``). After every step:

* both backends agree: values (dtype, shape, content), lengths, element shapes, inner
  lists, the variant zero; or the error class and the kernel message (TensorFlow's
  ``{{function_node ...}}`` prefix and `` [Op:...] name: ...`` suffix stripped);
* the reference model (``tests/helpers/list_reference.py``), which generated the program, agrees
  with TensorFlow too (so the model the state machine trusts is checked here);
* the step's input lists are unchanged on both sides (read back with public ops:
  ``TensorListLength``, ``TensorListElementShape`` and ``TensorListGetItem`` with an
  ``element_shape`` no element has, which tells unset elements apart); at the end of the
  program every list it made is read back the same way.

Inputs on which TensorFlow crashes or corrupts a list (docs/semantics.rst, ``tl-crashes``)
are never sent to TensorFlow: those steps (``tf_crash``) run on numba_ta alone, which must
give the reference's error. Steps that hit a known numba_ta bug
(``test_list_state_machine.KNOWN_BUGS``) are not generated.

CI runs :data:`CI_PROGRAMS` programs of :data:`STEPS` steps. Environment switches:
``NUMBA_TA_LIST_FUZZ_PROGRAMS=N``, ``NUMBA_TA_LIST_FUZZ_FIRST_SEED=S``,
``NUMBA_TA_LIST_FUZZ_STEPS=K``. To print a seed's program (from the repository root)::

    python -m tests.test_list_fuzz_tf SEED
"""

from __future__ import annotations

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

import random
import re
import sys
from typing import Any, NamedTuple

import numpy as np
import pytest

from tests.helpers import list_reference as ref
from tests.helpers.list_reference import VARIANT, VZ, RefError, RefList

pytestmark = pytest.mark.oracle

CI_PROGRAMS = 150
FIRST = int(os.environ.get("NUMBA_TA_LIST_FUZZ_FIRST_SEED", "0"))
N_PROGRAMS = int(os.environ.get("NUMBA_TA_LIST_FUZZ_PROGRAMS", str(CI_PROGRAMS)))
STEPS = int(os.environ.get("NUMBA_TA_LIST_FUZZ_STEPS", "25"))

DTYPES = ["float32", "int32", "bool", "variant"]
SHAPES = [(), (2,), (0,), (3,), (1, 2), (2, 1)]
MARK = [0, 7, 7, 7, 7, 7, 7]  # an element shape no element has: GetItem of an unset element fails or gives it
KNOWN_BUGS: set[str] = set()  # as in test_list_state_machine.py (empty: the bugs it found are fixed)


# --------------------------------------------------------------------------------------
# programs


class Sym(str):
    """A list (or variant zero) made by an earlier step, by name."""


class Vec(tuple):
    """A vector of lists (``tf.stack`` of them; an object array for numba_ta)."""


class Step(NamedTuple):
    op: str
    kwargs: dict
    out: tuple = ()  # (symbol, accessor) pairs: accessor () the result, (k,) result[k], (k, j) result[k][j]
    tf_crash: bool = False
    expect: Any = None  # the reference's result, or its RefError

    def __repr__(self):
        args = ", ".join(f"{k}={_short(v)}" for k, v in self.kwargs.items())
        extra = f", out={[s for s, _ in self.out]}" if self.out else ""
        extra += ", tf_crash=True" if self.tf_crash else ""
        return f"{self.op}({args}){extra}"


def _short(v):
    if isinstance(v, np.ndarray):
        return f"np.array({v.tolist()!r}, {v.dtype.name!r})"
    if isinstance(v, Sym):
        return str(v)
    if isinstance(v, Vec):
        return "Vec(" + ", ".join(v) + ")"
    return repr(v)


def _concat_attr_bug(es, attr):
    if attr is None:
        return False
    return len(attr) == 0 or _concat_reads_garbage(es, attr)


def _concat_reads_garbage(es, attr):
    """TensorListConcat inputs on which TF reads the elements with a shape they do not have (tl-crashes)."""
    return (
        attr is not None
        and len(attr) > 0
        and ref.fully_defined(es)
        and (len(es) == 0 or not ref.compatible(tuple(attr[1:]), tuple(es[1:])))
    )


_CONCAT_DIVERGENCES = ("NT-merge-shape", "NT-merge-rank", "L44")  # numba_ta's errors where TF reads garbage


class _Gen:
    def __init__(self, seed):
        self.r = random.Random(seed)
        self.vals = {}  # symbol -> reference value (RefList or VZ)
        self.steps = []
        self.n = 0

    # -- helpers --------------------------------------------------------------------------
    def lists(self):
        return [s for s, v in self.vals.items() if isinstance(v, RefList)]

    def pick(self, allow_zero=False):
        syms = list(self.vals) if allow_zero else self.lists()
        if not syms:
            return None
        zeros = [s for s in syms if self.vals[s] is VZ]
        if zeros and self.r.random() < 0.2:
            return self.r.choice(zeros)
        if self.r.random() < 0.5:  # recent ones more often
            return syms[-1 - min(int(self.r.expovariate(0.7)), len(syms) - 1)]
        return self.r.choice(syms)

    def conv(self, x):
        if isinstance(x, Sym):
            return self.vals[x]
        if isinstance(x, Vec):
            out = np.empty(len(x), object)
            for k, s in enumerate(x):
                out[k] = self.vals[s]
            return out
        if isinstance(x, list) and x and isinstance(x[0], Sym | Vec):
            return [self.conv(v) for v in x]
        return x

    def values(self, dtype, shape):
        n = int(np.prod(shape, dtype=np.int64))
        return np.array([self.r.randint(-3, 9) for _ in range(n)], np.int64).reshape(shape).astype(dtype)

    def rare(self, p=0.1):
        return self.r.random() < p

    def shape_arg(self, hint, bad=0.06):
        """An element_shape input around ``hint``."""
        r = self.r
        x = r.random()
        if x < bad:
            return r.choice([np.array(0, np.int32), np.array([[1]], np.int32), np.array([2, -2], np.int32)])
        if hint is None or x < 0.25:
            return np.array(-1, np.int32) if x < 0.85 or hint is None else np.array(r.choice(SHAPES), np.int32)
        if x < 0.9:
            return np.array([-1 if d is None or r.random() < 0.3 else d for d in hint], np.int32)
        return np.array(r.choice(SHAPES), np.int32)

    def es_input(self, es):
        return np.array(-1 if es is None else [-1 if d is None else d for d in es], np.int32)

    def list_shape(self, base):
        x = self.r.random()
        if x < 0.35:
            return None
        if x < 0.7:
            return tuple(base)
        return tuple(None if self.r.random() < 0.5 else d for d in base)

    def item_shape(self, es):
        if es is None or self.rare(0.08):
            return self.r.choice(SHAPES)
        return tuple(self.r.randint(0, 3) if d is None else d for d in es)

    def index(self, n, extra=2):
        if n and self.r.random() < 0.75:
            return self.r.randint(0, n - 1)
        return self.r.randint(-2, n + extra)

    def dtype_of(self, sym, wrong=0.07):
        v = self.vals[sym]
        dt = v.dtype if isinstance(v, RefList) else VARIANT
        if self.rare(wrong):
            return ref.as_dtype(self.r.choice(DTYPES))
        return dt

    def item_for(self, sym):
        """An item for list ``sym``: a tensor of its dtype, or a list / variant zero for a list of lists."""
        lst = self.vals[sym]
        dt = lst.dtype if not self.rare(0.07) else ref.as_dtype(self.r.choice(DTYPES))
        if dt == VARIANT:
            return self.pick(allow_zero=True)
        return self.values(dt, self.item_shape(lst.element_shape))

    # -- emitting steps ---------------------------------------------------------------------
    def emit(self, op, out="none", tf_crash=None, only_errors=False, **kw):
        """Evaluate ``op`` on the reference; record the step (or drop it: known bug, TF would corrupt a list).

        ``tf_crash(result)`` says whether TF would crash on the step; ``only_errors`` drops it when it succeeds.
        """
        try:
            res = getattr(ref, op)(**{k: self.conv(v) for k, v in kw.items()})
        except RefError as e:
            res = e
        ok = not isinstance(res, RefError)
        crash = bool(tf_crash(res) if tf_crash else False)
        if not ok and res.code.startswith("NT-tl-"):
            crash = True
        if (crash or only_errors) and ok:
            return None  # TF would crash or corrupt the list on a step numba_ta completes: not comparable
        if op == "AddN" and ok and "addn-shape" in KNOWN_BUGS and ref.misfit(res):
            return None
        outs = []
        if ok:
            outs = self.bind(res, out)
        self.steps.append(Step(op, kw, tuple(outs), crash, res))
        return res

    def new(self, value):
        self.n += 1
        s = Sym(f"l{self.n}" if isinstance(value, RefList) else f"z{self.n}")
        self.vals[s] = value
        return s

    def bind(self, res, out):
        if out == "none":
            return []
        if out == "list":
            return [(self.new(res), ())]
        if out == "vector":
            return [(self.new(v), (k,)) for k, v in enumerate(res.tolist())]
        if out == "item":  # GetItem of a list of lists: the inner list or the variant zero
            return [(self.new(res), ())] if isinstance(res, RefList) or res is VZ else []
        if out == "pop":
            outs = [(self.new(res[0]), (0,))]
            if isinstance(res[1], RefList) or res[1] is VZ:
                outs.append((self.new(res[1]), (1,)))
            return outs
        if out == "stacked" and res.dtype == VARIANT and res.ndim == 1:  # a vector of inner lists
            return [(self.new(v), (k,)) for k, v in enumerate(res.tolist()) if isinstance(v, RefList)]
        return []

    # -- the ops ----------------------------------------------------------------------------
    def create(self):
        r = self.r
        kind = r.choice(["empty", "empty", "reserve", "reserve", "from_tensor", "scatter", "scatter_v2", "split",
                         "from_lists", "zero"])  # fmt: skip
        if kind == "zero":  # the variant zero: an unset element of a list of lists, read
            self.emit("TensorListReserve", out="list", element_shape=np.zeros(0, np.int32), num_elements=1,
                      element_dtype="variant")  # fmt: skip
            self.emit("TensorListGetItem", out="item", input_handle=self.steps[-1].out[0][0], index=0,
                      element_shape=np.array(-1, np.int32), element_dtype="variant")  # fmt: skip
            return
        if kind == "from_lists":
            syms = [self.pick(allow_zero=True) for _ in range(r.randint(1, 3))]
            if None in syms:
                return
            es = r.choice([np.array(-1, np.int32), np.zeros(0, np.int32), np.array([1], np.int32)])
            self.emit("TensorListFromTensor", out="list", tensor=Vec(syms), element_shape=es)
            return
        dt = r.choice(DTYPES if kind in ("empty", "reserve") else DTYPES[:3])
        base = () if dt == "variant" else r.choice(SHAPES)
        es = self.list_shape(base)
        es_arg = self.es_input(es) if not self.rare(0.08) else self.shape_arg(es, bad=0.5)
        n = r.randint(0, 4)
        if kind == "empty":
            m = r.choice([-1, -1, -1, 0, 1, 2, 3, -5, np.array([1], np.int32)])
            self.emit("EmptyTensorList", out="list", element_shape=es_arg, max_num_elements=m, element_dtype=dt)
        elif kind == "reserve":
            num = r.choice([0, 1, 2, 3, 4, 2, 3, -1, np.array([2], np.int32)])
            self.emit("TensorListReserve", out="list", element_shape=es_arg, num_elements=num, element_dtype=dt)
        elif kind == "split":
            lengths = [-1 if self.rare(0.05) else r.randint(0, 3) for _ in range(r.randint(0, 4))]
            rows = max(0, sum(lengths)) + (r.randint(-1, 1) if self.rare(0.15) else 0)
            shape = (max(rows, 0), *base[1:]) if not self.rare(0.05) else ()
            lens = np.array(lengths, np.int64) if not self.rare(0.05) else np.array([lengths], np.int64)
            self.emit("TensorListSplit", out="list", tensor=self.values(dt, shape), element_shape=es_arg, lengths=lens)
        else:
            shape = (n, *self.item_shape(es)) if not self.rare(0.05) else ()
            t = self.values(dt, shape)
            if kind == "from_tensor":
                self.emit("TensorListFromTensor", out="list", tensor=t, element_shape=es_arg)
                return
            rows = shape[0] if shape else 0
            k = max(0, rows + (r.randint(-1, 1) if self.rare(0.1) else 0))
            idx = np.array([-1 if self.rare(0.04) else r.randint(0, 5) for _ in range(k)], np.int32)
            if kind == "scatter":
                self.emit("TensorListScatter", out="list", tensor=t, indices=idx, element_shape=es_arg)
            else:
                num = r.choice([-1, -1, -1, 6, 7, 3, 0, -2, np.array([3], np.int32)])
                self.emit(
                    "TensorListScatterV2", out="list", tensor=t, indices=idx, element_shape=es_arg, num_elements=num
                )

    def set_item(self, h):
        n = len(self.vals[h].items)
        i = self.index(n, extra=3)
        form = self.r.choice(["int"] * 12 + ["np", "vec", "mat", "empty", "pair"])
        index = {"int": i, "np": np.int32(i), "vec": np.array([i], np.int32), "mat": np.array([[i]], np.int32),
                 "empty": np.zeros(0, np.int32), "pair": np.array([i, 1], np.int32)}[form]  # fmt: skip
        resize = self.r.random() < 0.4
        item = self.item_for(h)
        if item is None:
            return
        crash = resize and np.ndim(index) == 0 and i < 0  # TF segfaults (SI-X1)
        self.emit("TensorListSetItem", out="list", tf_crash=lambda res: crash, input_handle=h, index=index, item=item,
                  resize_if_index_out_of_bounds=resize)  # fmt: skip

    def get_item(self, h):
        n = len(self.vals[h].items)
        i = self.index(n)
        x = self.r.random()
        index = i if x < 0.7 else np.array([i] if x < 0.8 else [[i]] if x < 0.9 else [i, i], np.int32)
        self.emit("TensorListGetItem", out="item", input_handle=h, index=index,
                  element_shape=self.shape_arg(self.vals[h].element_shape), element_dtype=self.dtype_of(h))  # fmt: skip

    def push_back(self, h):
        item = self.item_for(h)
        if item is not None:
            self.emit("TensorListPushBack", out="list", input_handle=h, tensor=item)

    def push_back_batch(self, h):
        r = self.r
        syms = [h] + [self.pick(allow_zero=self.rare(0.1)) for _ in range(r.randint(0, 2))]
        dt = self.vals[h].dtype if not self.rare(0.07) else ref.as_dtype(r.choice(DTYPES))
        if dt == VARIANT:
            if "variant-rows" in KNOWN_BUGS:
                return
            t = Vec([self.pick(allow_zero=True) for _ in syms])
        else:
            rows = len(syms) if not self.rare(0.1) else r.randint(0, 3)
            shape = (rows, *self.item_shape(self.vals[h].element_shape)) if not self.rare(0.05) else ()
            t = self.values(dt, shape)
        self.emit("TensorListPushBackBatch", out="vector", input_handles=Vec(syms), tensor=t)

    def pop_back(self, h):
        self.emit("TensorListPopBack", out="pop", input_handle=h,
                  element_shape=self.shape_arg(self.vals[h].element_shape), element_dtype=self.dtype_of(h))  # fmt: skip

    def resize(self, h):
        n = len(self.vals[h].items)
        size = np.array([1], np.int32) if self.rare(0.05) else self.r.randint(-1 if self.rare(0.1) else 0, n + 3)
        self.emit("TensorListResize", out="list", input_handle=h, size=size)

    def scatter_into(self, h):
        r = self.r
        lst = self.vals[h]
        n = len(lst.items)
        dt = lst.dtype if not self.rare(0.07) else ref.as_dtype(r.choice(DTYPES))
        if dt == VARIANT:
            return  # rows of lists: a known bug ("variant-rows"); past the end: TF's gap elements
        k = r.randint(0, 3)
        idx = [self.index(n, 0) if not self.rare(0.08) else r.choice([-1, n, n + 1]) for _ in range(k)]
        rows = k if not self.rare(0.1) else r.randint(0, 4)
        shape = (rows, *self.item_shape(lst.element_shape)) if not self.rare(0.05) else ()
        indices = np.array(idx, np.int32) if not self.rare(0.05) else np.array(idx[0] if idx else 0, np.int32)
        # TF stores garbage in the gap a scatter past the end leaves (SX-X3): emit drops such steps
        self.emit("TensorListScatterIntoExistingList", out="list",
                  tf_crash=lambda res: isinstance(res, RefList) and max(idx or [-1]) >= n,
                  input_handle=h, tensor=self.values(dt, shape), indices=indices)  # fmt: skip

    def stack(self, h):
        n = len(self.vals[h].items)
        num = self.r.choice([-1] * 6 + [n, n, n + 1, -2])
        self.emit("TensorListStack", out="stacked", input_handle=h,
                  element_shape=self.shape_arg(self.vals[h].element_shape), element_dtype=self.dtype_of(h),
                  num_elements=num)  # fmt: skip

    def gather(self, h):
        n = len(self.vals[h].items)
        idx = [self.index(n, 1) for _ in range(self.r.randint(0, 4))]
        indices = np.array(idx, np.int32) if not self.rare(0.1) else np.array(idx[0] if idx else 0, np.int32)
        self.emit("TensorListGather", out="stacked", input_handle=h, indices=indices,
                  element_shape=self.shape_arg(self.vals[h].element_shape), element_dtype=self.dtype_of(h))  # fmt: skip

    def concat(self, h):
        lst = self.vals[h]
        only_errors = lst.dtype == VARIANT  # a list of lists: only the errors (L44 ...) are compared
        if self.r.random() < 0.5:
            n = len(lst.items)
            ld = [-1 if self.rare(0.1) else self.r.randint(0, 3) for _ in range(self.r.randint(0, n + 1))]
            lead = np.array(ld, np.int64) if not self.rare(0.05) else np.array([ld], np.int64)
            self.emit("TensorListConcatV2", only_errors=only_errors, input_handle=h, leading_dims=lead,
                      element_shape=self.shape_arg(lst.element_shape), element_dtype=self.dtype_of(h))  # fmt: skip
        else:
            attr = None
            if self.r.random() < 0.6:
                arg = self.shape_arg(lst.element_shape)
                if arg.ndim == 1 and (arg >= -1).all():
                    attr = [None if d == -1 else int(d) for d in arg.tolist()]
            if "concat-attr" in KNOWN_BUGS and _concat_attr_bug(lst.element_shape, attr):
                return
            garbage = _concat_reads_garbage(lst.element_shape, attr)
            self.emit("TensorListConcat", only_errors=only_errors, input_handle=h, element_dtype=self.dtype_of(h),
                      element_shape=attr,
                      tf_crash=lambda res: garbage and isinstance(res, RefError) and res.code in _CONCAT_DIVERGENCES)  # fmt: skip  # noqa: E501

    def concat_lists(self, h):
        r = self.r
        form = r.choice(["ab", "aa", "ab", "ab", "vec", "vec_bad", "zero"])
        a, b, c = h, self.pick(), self.pick()
        if form == "vec":
            x, y = Vec([a, b]), Vec([c, a])
        elif form == "vec_bad":
            x, y = Vec([a, b]), Vec([c])
        elif form == "zero":
            z = self.pick(allow_zero=True)
            x, y = Vec([a, z]), Vec([b, c])
        else:
            x, y = a, (a if form == "aa" else b)
        dt = self.dtype_of(h, wrong=0.1)
        self.emit("TensorListConcatLists", out="vector" if isinstance(x, Vec) else "list", input_a=x, input_b=y,
                  element_dtype=dt)  # fmt: skip

    def zeros_like(self, h):
        x = self.pick(allow_zero=True) if self.rare(0.1) else h
        if self.rare(0.05):
            x = Vec([h, h])
        self.emit("ZerosLike", out="list" if not isinstance(x, Vec) and isinstance(self.vals[x], RefList) else "item",
                  x=x)  # fmt: skip

    def add_n(self, h):
        form = self.r.choice(["partner", "partner", "partner", "ab", "aa", "a", "abc", "a0", "vec"])
        if form == "partner":  # a list like h, some elements set: mostly addable
            lst = self.vals[h]
            if lst.dtype == VARIANT:
                return
            es = lst.element_shape if not self.rare(0.2) else self.list_shape(self.r.choice(SHAPES))
            p = self.emit("TensorListReserve", out="list", element_shape=self.es_input(es),
                          num_elements=len(lst.items), element_dtype=lst.dtype.name)  # fmt: skip
            sym = self.steps[-1].out[0][0]
            for i, v in enumerate(lst.items):
                if v is not None and self.r.random() < 0.6:
                    shape = v.shape if not self.rare(0.2) else self.item_shape(es)
                    p = self.emit("TensorListSetItem", out="list", input_handle=sym, index=i,
                                  item=self.values(lst.dtype, shape))  # fmt: skip
                    if isinstance(p, RefList):
                        sym = self.steps[-1].out[0][0]
            inputs = [h, sym] if self.r.random() < 0.5 else [sym, h]
        else:
            b, c = self.pick(), self.pick()
            z = self.pick(allow_zero=True)
            inputs = {"ab": [h, b], "aa": [h, h], "a": [h], "abc": [h, b, c], "a0": [h, z], "vec": [h, Vec([b, c])]}[
                form
            ]
        self.emit("AddN", out="list", inputs=inputs)

    def length(self, h):
        self.emit("TensorListLength", input_handle=h)

    def element_shape(self, h):
        self.emit("TensorListElementShape", input_handle=h, shape_type=self.r.choice(["int32", "int64"]))

    def not_a_list(self, h):
        """An op on the variant zero, or on a vector of lists."""
        zeros = [s for s, v in self.vals.items() if v is VZ]
        x = self.r.choice(zeros) if zeros and self.r.random() < 0.7 else Vec([h, h])
        if self.r.random() < 0.5:
            self.emit("TensorListLength", input_handle=x)
        else:
            self.emit("TensorListResize", input_handle=x, size=1)

    def step(self):
        if not self.lists() or self.r.random() < 0.15:
            self.create()
            return
        h = self.pick()
        ops = [
            (self.set_item, 10), (self.get_item, 10), (self.push_back, 10), (self.pop_back, 6), (self.stack, 8),
            (self.gather, 6), (self.concat, 6), (self.scatter_into, 5), (self.concat_lists, 5),
            (self.push_back_batch, 4), (self.resize, 4), (self.zeros_like, 3), (self.add_n, 6), (self.length, 2),
            (self.element_shape, 2), (self.not_a_list, 2),
        ]  # fmt: skip
        self.r.choices([f for f, _ in ops], weights=[w for _, w in ops])[0](h)


def make_program(seed, n_steps=STEPS):
    g = _Gen(seed)
    while len(g.steps) < n_steps:
        g.step()
    return g.steps, g.vals


# --------------------------------------------------------------------------------------
# running a program on a backend

_PREFIX = re.compile(r"^\{\{function_node [^}]*\}\}\s*", re.S)
_SUFFIX = re.compile(r"\s*\[Op:([A-Za-z0-9_]+)\]( name: .*)?$", re.S)


class Backend:
    """One side: its ops, its values bound to the program's symbols, and how to read them back."""

    def __init__(self):
        self.env = {}

    def resolve(self, x):
        if isinstance(x, Sym):
            return self.env[x]
        if isinstance(x, Vec):
            return self.vector([self.env[s] for s in x])
        if isinstance(x, list) and x and isinstance(x[0], Sym | Vec):
            return [self.resolve(v) for v in x]
        if isinstance(x, str) and x in DTYPES + ["int64"]:
            return self.dtype(x)
        if isinstance(x, np.dtype):
            return self.dtype("variant" if x == VARIANT else x.name)
        return x

    def run(self, step):
        """``("ok", result)`` or ``("error", class name, kernel message)``."""
        kw = {k: self.resolve(v) for k, v in step.kwargs.items()}
        try:
            return ("ok", self.call(step.op, kw))
        except self.op_error as e:
            return ("error", type(e).__name__, self.message(e))

    def get(self, res, acc):
        for k in acc:
            res = self.element(res, k)
        return res

    # reading back (guided by the reference's value, which says the dtypes to ask for)
    def norm(self, x, guide):
        if isinstance(guide, RefList):
            return self.describe(x, guide)
        if guide is VZ:
            return "VZ" if self.is_zero(x) else ("not the variant zero", self.text(x))
        if isinstance(guide, tuple):
            return tuple(self.norm(self.element(x, k), g) for k, g in enumerate(guide))
        if isinstance(guide, np.ndarray) and guide.dtype == VARIANT:
            shape = self.shape(x)
            if shape != guide.shape:
                return ("object array", shape)
            flat = self.flat(x)
            return (
                "object array",
                shape,
                tuple(self.norm(flat[k], g) for k, g in enumerate(guide.reshape(-1).tolist())),
            )
        a = self.numpy(x)
        return ("array", a.dtype.name, a.shape, a.tolist())

    def describe(self, h, guide):
        try:
            n = int(self.call("TensorListLength", {"input_handle": h}))
            es = self.numpy(self.call("TensorListElementShape", {"input_handle": h, "shape_type": self.dtype("int64")}))
        except self.op_error as e:
            return ("error", self.message(e))
        es = None if es.ndim == 0 else tuple(None if d == -1 else int(d) for d in es.tolist())
        dt = "variant" if guide.dtype == VARIANT else guide.dtype.name
        items = []
        for i in range(n):
            g = guide.items[i] if i < len(guide.items) else None
            try:
                v = self.call("TensorListGetItem", {"input_handle": h, "index": np.int32(i),
                                                    "element_shape": np.array(MARK, np.int32),
                                                    "element_dtype": self.dtype(dt)})  # fmt: skip
            except self.op_error as e:
                m = self.message(e)
                items.append(None if "merge" in m or "uninitialized" in m else ("error", m))
                continue
            if self.shape(v) == tuple(MARK):
                items.append(None)
            elif dt == "variant":
                items.append(self.norm(v, g) if g is not None else ("set, reference: unset", self.text(v)))
            else:
                a = self.numpy(v)
                items.append(("array", a.dtype.name, a.shape, a.tolist()))
        return ("list", es, tuple(items))


class TFBackend(Backend):
    def __init__(self, tf):
        super().__init__()
        self.tf = tf
        self.op_error = tf.errors.OpError

    def dtype(self, name):
        return getattr(self.tf, name)

    def vector(self, values):
        return self.tf.stack(values)

    def call(self, op, kw):
        R = self.tf.raw_ops
        if op == "AddN":
            return R.AddN(inputs=kw["inputs"])
        if op == "ZerosLike":
            return R.ZerosLike(x=kw["x"])
        return getattr(R, op)(**kw)

    def message(self, e):
        return _SUFFIX.sub("", _PREFIX.sub("", getattr(e, "message", str(e))))

    def element(self, res, k):
        return res[k]

    def shape(self, x):
        return tuple(x.shape.as_list())

    def flat(self, x):
        flat = self.tf.reshape(x, [-1])
        return [flat[k] for k in range(flat.shape[0])]

    def numpy(self, x):
        return np.asarray(x.numpy())

    def is_zero(self, x):
        if x.dtype != self.tf.variant or x.shape.rank != 0:
            return False
        try:
            self.tf.raw_ops.TensorListLength(input_handle=x)
        except self.tf.errors.InvalidArgumentError as e:
            return "'Variant<type: int value: 0>'" in self.message(e)
        return False

    def text(self, x):
        return repr(x)


class NumbaBackend(Backend):
    def __init__(self):
        super().__init__()
        import numba_ta
        from numba_ta import gradients, raw_ops
        from numba_ta.errors import OpError

        self.nt, self.raw_ops, self.gradients, self.op_error = numba_ta, raw_ops, gradients, OpError

    def dtype(self, name):
        return "variant" if name == "variant" else np.dtype(name)

    def vector(self, values):
        out = np.empty(len(values), object)
        for k, v in enumerate(values):
            out[k] = v
        return out

    def call(self, op, kw):
        if op == "AddN":
            return self.gradients.tensor_list_add_n(kw["inputs"])
        if op == "ZerosLike":
            return self.gradients.tensor_list_zeros_like(kw["x"])
        return getattr(self.raw_ops, op)(**kw)

    def message(self, e):
        return e.message

    def element(self, res, k):
        return res[k]

    def shape(self, x):
        return tuple(np.shape(x)) if isinstance(x, np.ndarray | np.generic) else ()

    def flat(self, x):
        return x.reshape(-1).tolist()

    def numpy(self, x):
        return np.asarray(x)

    def is_zero(self, x):
        return x is self.nt.VARIANT_ZERO

    def text(self, x):
        return repr(x)


def _norm_ref(x):
    """The reference's value, normalised as :meth:`Backend.norm` normalises a backend's."""
    if isinstance(x, RefList):
        return ("list", x.element_shape, tuple(None if v is None else _norm_ref(v) for v in x.items))
    if x is VZ:
        return "VZ"
    if isinstance(x, tuple):
        return tuple(_norm_ref(v) for v in x)
    if isinstance(x, np.ndarray) and x.dtype == VARIANT:
        return ("object array", x.shape, tuple(_norm_ref(v) for v in x.reshape(-1).tolist()))
    a = np.asarray(x)
    return ("array", a.dtype.name, a.shape, a.tolist())


def _norm_outcome(b, outcome, expect):
    if outcome[0] == "error":
        return outcome
    if isinstance(expect, RefError):
        return ("ok", "<a result>")
    return ("ok", b.norm(outcome[1], expect))


def run_program(tf, steps, vals, seed=None):
    """Run ``steps`` on TensorFlow and numba_ta; compare after every step and at the end."""
    tfb, ntb = TFBackend(tf), NumbaBackend()
    done = []

    def where(k):
        prog = "\n".join(f"  [{i}] {s!r}{'  <--' if i == k else ''}" for i, s in enumerate(steps[: k + 1]))
        return f"seed {seed}, step {k}:\n{prog}\n"

    for k, step in enumerate(steps):
        expect = step.expect
        want = ("error", expect.cls, expect.text) if isinstance(expect, RefError) else ("ok", _norm_ref(expect))
        raw_nt = ntb.run(step)
        got_nt = _norm_outcome(ntb, raw_nt, expect)
        if step.tf_crash:
            assert got_nt == want, f"{where(k)}numba_ta:  {got_nt}\nreference: {want}"
            continue
        raw_tf = tfb.run(step)
        got_tf = _norm_outcome(tfb, raw_tf, expect)
        assert got_nt == got_tf, f"{where(k)}numba_ta:   {got_nt}\ntensorflow: {got_tf}"
        assert want == got_tf, (
            f"{where(k)}the reference model disagrees with TensorFlow:\nreference:  {want}\ntensorflow: {got_tf}"
        )
        for b, raw in ((tfb, raw_tf), (ntb, raw_nt)):
            for sym, acc in step.out:
                b.env[sym] = b.get(raw[1], acc)
        done.append(step)
        _check_inputs(tfb, ntb, step, vals, where(k))
    for sym in tfb.env:
        if isinstance(vals[sym], RefList):
            a, b = tfb.describe(tfb.env[sym], vals[sym]), ntb.describe(ntb.env[sym], vals[sym])
            assert a == b == _norm_ref(vals[sym]), (
                f"seed {seed}: {sym} at the end:\ntf: {a}\nnt: {b}\nref: {_norm_ref(vals[sym])}"
            )
    return done


def _check_inputs(tfb, ntb, step, vals, where):
    syms = []
    for v in step.kwargs.values():
        for x in v if isinstance(v, list) else [v]:
            syms += list(x) if isinstance(x, Vec) else [x] if isinstance(x, Sym) else []
    for s in dict.fromkeys(syms):
        if isinstance(vals[s], RefList):
            a, b = tfb.describe(tfb.env[s], vals[s]), ntb.describe(ntb.env[s], vals[s])
            assert a == b == _norm_ref(vals[s]), (
                f"{where}input {s} after the step:\ntf: {a}\nnt: {b}\nref: {_norm_ref(vals[s])}"
            )


# --------------------------------------------------------------------------------------
# the tests


@pytest.mark.parametrize("seed", range(FIRST, FIRST + N_PROGRAMS))
def test_list_program(tf, seed, record_property):
    steps, vals = make_program(seed)
    done = run_program(tf, steps, vals, seed)
    record_property("steps", len(steps))
    record_property("tf_steps", len(done))


def test_programs_are_deterministic_and_varied():
    a, b = make_program(3)[0], make_program(3)[0]
    assert repr(a) == repr(b)
    ops, codes = set(), set()
    for seed in range(40):
        for s in make_program(seed)[0]:
            ops.add(s.op)
            if isinstance(s.expect, RefError):
                codes.add(s.expect.code)
    assert len(ops) >= 22, sorted(ops)
    assert len(codes) >= 30, sorted(codes)


if __name__ == "__main__":  # print a seed's program
    for i, s in enumerate(make_program(int(sys.argv[1]))[0]):
        print(f"[{i}] {s!r}  ->  {s.expect!r}")
