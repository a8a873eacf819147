"""Run the TensorList probes of ``tests/helpers/tensorlist_probe.py`` against numba_ta (or TensorFlow).

``tensorlist_probe.py`` writes every probe as a thunk over two module globals, ``tf`` and ``R``
(TensorFlow and ``tf.raw_ops`` in its worker), and describes results with ``obs``. This
module loads a private copy of ``tensorlist_probe.py`` (it imports no TensorFlow at import time) and
either

* :func:`load_numpy`: swaps ``tf`` for :class:`NumpyTF`, a numpy stand-in for the few
  ``tf`` functions the thunks call (``constant``, ``zeros``, ``ones``, ``cast``, ``stack``,
  ``reshape``, the dtypes, ``errors``), and ``R`` for :class:`NumbaOps`, numba_ta's
  ``raw_ops`` (plus ``ZerosLike``/``AddN`` from ``numba_ta.gradients``); and replaces the
  few helpers that look at TensorFlow objects (``obs``, ``err_text``, ``kmsg``, ``i32``,
  ``i64``, ``shape_text``, ``describe_list``) by numpy versions that print the same text;
* :func:`load_tf`: calls the copy's own ``_init_tf()`` (real TensorFlow, in process).

Everything else of ``tensorlist_probe.py`` (the short forms ``E``, ``GI``, ``SX`` ..., the fixtures,
``list_dtype``, ``describe_variant_scalar``, ``steps``, ``try_``) is used as it is, so the
numba_ta run executes the very same thunks as the TensorFlow run.

Each load gives a separate module object, so a numpy copy and a TensorFlow copy can live in
one process.
"""

from __future__ import annotations

import importlib.util
import itertools
from pathlib import Path
from types import ModuleType

import numpy as np

PROBE_PATH = Path(__file__).with_name("tensorlist_probe.py")
_COUNTER = itertools.count()


def load_module() -> ModuleType:
    """A fresh, private copy of ``tensorlist_probe.py`` (``tf`` and ``R`` still None)."""
    name = f"_tensorlist_probe_{next(_COUNTER)}"
    spec = importlib.util.spec_from_file_location(name, PROBE_PATH)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    mod._progress = lambda text: None  # the worker's progress lines (stdout JSON): not needed in process
    return mod


# ----------------------------------------------------------------------------------------
# numpy stand-in for the ``tf`` functions the thunks use


def _numba_ta():
    import numba_ta

    return numba_ta


class NumpyTF:
    """The part of the ``tensorflow`` module that tensorlist_probe.py's thunks call, on numpy values.

    dtypes are numpy dtypes (their ``.name`` is TensorFlow's for all fourteen numba_ta
    dtypes); ``variant`` is ``np.dtype(object)``, which numba_ta takes for ``tf.variant``.
    """

    bool = np.dtype(np.bool_)
    int8 = np.dtype(np.int8)
    int16 = np.dtype(np.int16)
    int32 = np.dtype(np.int32)
    int64 = np.dtype(np.int64)
    uint8 = np.dtype(np.uint8)
    uint16 = np.dtype(np.uint16)
    uint32 = np.dtype(np.uint32)
    uint64 = np.dtype(np.uint64)
    float16 = np.dtype(np.float16)
    float32 = np.dtype(np.float32)
    float64 = np.dtype(np.float64)
    complex64 = np.dtype(np.complex64)
    complex128 = np.dtype(np.complex128)
    variant = np.dtype(object)

    @property
    def errors(self):
        return _numba_ta().errors

    @staticmethod
    def as_dtype(d):
        if isinstance(d, str) and d == "variant":
            return np.dtype(object)
        return np.dtype(d)

    @staticmethod
    def constant(x, dtype=None):
        """``tf.constant``: an ndarray; with no dtype, TensorFlow's inference for Python values
        (float -> float32, int -> int32 (int64 when needed), bool -> bool, complex -> complex128)."""
        if dtype is not None:
            return np.asarray(x, dtype=NumpyTF.as_dtype(dtype))
        if isinstance(x, (np.ndarray, np.generic)):
            return np.asarray(x)
        a = np.asarray(x)
        if a.dtype == np.float64:
            return a.astype(np.float32)
        if a.dtype.kind in "iu":
            info = np.iinfo(np.int32)
            if a.size == 0 or (a.min() >= info.min and a.max() <= info.max):
                return a.astype(np.int32)
            return a.astype(np.int64)
        return a

    @staticmethod
    def zeros(shape, dtype=np.float32):
        return np.zeros(shape, dtype)

    @staticmethod
    def ones(shape, dtype=np.float32):
        return np.ones(shape, dtype)

    @staticmethod
    def cast(x, dtype):
        return NumpyTF.constant(x).astype(NumpyTF.as_dtype(dtype))

    @staticmethod
    def reshape(x, shape):
        return np.reshape(x, shape)

    @staticmethod
    def stack(values):
        """``tf.stack`` of list handles: a 1-d object array (filled by assignment, so numpy does
        not look into the handles)."""
        out = np.empty(len(values), dtype=object)
        for i, v in enumerate(values):
            out[i] = v
        return out


def _named(op, fn, arg):
    """``fn(arg)``; an ``OpError`` it raises without an op name gets ``op`` (TensorFlow's name)."""
    from numba_ta import errors

    try:
        return fn(arg)
    except errors.OpError as e:
        if e.op is None:
            e.op = op
        raise


class NumbaOps:
    """``tf.raw_ops`` for tensorlist_probe.py: numba_ta's ops, looked up on use (so this module imports
    before the ops exist), and ``ZerosLike``/``AddN`` on lists from ``numba_ta.gradients``.

    TensorFlow names the op of a ZerosLike/AddN error ``ZerosLike``/``AddN``;
    ``numba_ta.gradients`` may leave ``e.op`` None: then the wrappers fill in the name the
    probes expect (a name the function gave itself is kept).
    """

    def __getattr__(self, name):
        from numba_ta import raw_ops

        return getattr(raw_ops, name)

    @staticmethod
    def ZerosLike(x):  # TF's op name
        from numba_ta import gradients

        return _named("ZerosLike", gradients.tensor_list_zeros_like, x)

    @staticmethod
    def AddN(inputs):  # TF's op name
        from numba_ta import gradients

        return _named("AddN", gradients.tensor_list_add_n, inputs)


# ----------------------------------------------------------------------------------------
# numpy versions of tensorlist_probe.py's helpers that look at TensorFlow objects


def _install_numpy_helpers(mod: ModuleType) -> None:
    def err_text(e):
        """``<Class>: <message> [Op:<op>]`` (numba_ta's errors carry the op in ``e.op``)."""
        name = type(e).__name__
        if isinstance(e, _numba_ta().errors.OpError):
            m = e.message.split("\n")[0]
            return f"{name}: {m}" + (f" [Op:{e.op}]" if e.op else "")
        return f"{name}: {e}"

    def kmsg(e):
        return getattr(e, "message", str(e))

    def i32(x):
        return np.asarray(x, np.int32)

    def i64(x):
        return np.asarray(x, np.int64)

    def shape_text(es):
        v = np.asarray(es).tolist()
        if isinstance(v, int):
            return "<unknown>" if v == -1 else f"<scalar {v}>"
        return "[" + ",".join("?" if d == -1 else str(d) for d in v) + "]"

    def is_variant_scalar(x):
        nt = _numba_ta()
        handle_type = getattr(nt, "TensorListHandle", None)
        if handle_type is not None and isinstance(x, handle_type):
            return True
        zero = getattr(nt, "VARIANT_ZERO", None)
        return zero is not None and (x is zero or type(x) is type(zero))

    def describe_list(h):
        """tensorlist_probe.py's ``describe_list``, word for word but for one line: an element of a variant
        list is read as the element object itself (a handle or the variant zero, which have no
        ``.shape``), where TensorFlow gives a variant scalar (shape ``[]``)."""
        R, tf, MARK = mod.R, mod.tf, mod.MARK
        dt = mod.list_dtype(h)
        tdt = mod.tf_dtype(dt)
        n = int(R.TensorListLength(input_handle=h))
        es = mod.shape_text(R.TensorListElementShape(input_handle=h, shape_type=tf.int32))
        items = []
        for i in range(n):
            try:
                v = R.TensorListGetItem(input_handle=h, index=i, element_shape=MARK, element_dtype=tdt)
            except tf.errors.InvalidArgumentError as e:
                m = mod.kmsg(e)
                if "merge" in m or "uninitialized" in m:
                    items.append("unset")
                else:
                    items.append("<" + mod.err_text(e) + ">")
                continue
            if list(getattr(v, "shape", ())) == MARK:  # the one change (see the docstring)
                items.append("unset")
            else:
                items.append(mod.obs(v))
        return f"List({dt}, {es}, {n}: [" + " | ".join(items) + "])"

    def obs(x):
        """tensorlist_probe.py's ``obs`` for numpy results: ``float32[2] [1.0, 2.0]``, ``variant[2] [...]``."""
        if isinstance(x, str):
            return x
        if isinstance(x, (tuple, list)):
            return "(" + ", ".join(obs(v) for v in x) + ")"
        if isinstance(x, (np.ndarray, np.generic)):
            if x.dtype == object:
                if x.ndim == 0:
                    return mod.describe_variant_scalar(x[()])
                flat = np.reshape(x, -1)
                return f"variant{list(x.shape)} [" + "; ".join(obs(flat[i]) for i in range(flat.shape[0])) + "]"
            return f"{x.dtype.name}{list(x.shape)} {x.tolist()}"
        if is_variant_scalar(x):
            return mod.describe_variant_scalar(x)
        return repr(x)

    mod.err_text = err_text
    mod.kmsg = kmsg
    mod.i32 = i32
    mod.i64 = i64
    mod.shape_text = shape_text
    mod.describe_list = describe_list
    mod.obs = obs


def load_numpy() -> ModuleType:
    """A copy of tensorlist_probe.py whose thunks run on numba_ta."""
    mod = load_module()
    mod.tf = NumpyTF()
    mod.R = NumbaOps()
    _install_numpy_helpers(mod)
    return mod


def load_tf() -> ModuleType:
    """A copy of tensorlist_probe.py whose thunks run on TensorFlow, in this process."""
    mod = load_module()
    mod._init_tf()
    return mod


def run_probe(mod: ModuleType, pid: str) -> str:
    """The observation text of probe ``pid`` (as tensorlist_probe.py's worker computes it), with fresh
    fixtures (``F``) so that no probe sees another's lists."""
    mod.F = mod._Fixtures()
    _, fn, _, _ = mod.PROBES[pid]
    try:
        return mod.obs(fn())
    except Exception as e:  # every error is an observation
        return mod.err_text(e)
