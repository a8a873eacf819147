"""TensorList workloads: building a list one element at a time with numba_ta's raw ops, and its baselines.

numba_ta's TensorList ops (:mod:`numba_ta.raw_ops`, TensorFlow 2's names and
arguments) return a new list handle from every op and leave their input list
unchanged.  When only the loop holds the input (``l = PushBack(l, x)``), the
op changes the storage in place, so a loop of ``n`` ops costs O(n) in total.
These workloads time that loop against TensorFlow's eager ops (which copy the
list's vector of element references on every op whose input is still
referenced, as it is in eager Python code) and against the copy-per-insert
model of ONNX Runtime's sequence ops.  The asv module ``bench_tensorlist.py``
and the "TensorList" section of ``numba-ta bench`` (:mod:`report`) both time
the :class:`ListCase` objects that :func:`make_list_case` builds.

Workloads (``WORKLOADS``)
-------------------------
Every timed call builds a list of ``n`` elements of shape ``[items]`` and
stacks it into an ``(n, items)`` array; the time per element is the call's
time divided by ``n`` (``ListCase.per_call``).  Element ``i`` is row
``i % 1024`` of one deterministic array (``workloads.filled``), made before
the timing (as TensorFlow constants for ``tf_eager``): the loops pass
existing objects and convert nothing.

``push``
    An empty list, ``n`` push-backs, one stack.
``set``
    A list of ``n`` unset elements (``TensorListReserve``), ``n`` set-items at
    indices ``0 .. n-1`` in order, one stack.

Variants (``VARIANTS``)
-----------------------
``numba_ta``
    ``numba_ta.raw_ops``: ``EmptyTensorList`` + ``TensorListPushBack`` (or
    ``TensorListReserve`` + ``TensorListSetItem``), then ``TensorListStack``.
``tf_eager``
    The same code with ``tf.raw_ops`` in eager mode: each op's input list is
    still referenced by the Python variable when the op runs, so TensorFlow
    copies the list's vector of (reference-counted) element tensors: O(n) per
    op, O(n**2) per loop.
``copy_tuple``
    ONNX Runtime's ``SequenceInsert`` (and ``SequenceErase``) copy the
    sequence's vector of tensors into a new sequence on every call: the
    tensors are shared (references), the vector of references is copied.
    The faithful model in Python is a tuple of references copied on each
    op: ``seq = seq + (x,)`` for ``push``, ``seq = seq[:i] + (x,) +
    seq[i+1:]`` for ``set`` (ONNX has no set-item; that is one copy where an
    erase then an insert would make two), then ``np.stack(seq)``.  O(n) per
    op, like ``tf_eager``, with a small constant.
``copy_array``
    Copy-per-insert of the data rather than of references: ``seq =
    np.concatenate([seq, x[None]])`` for ``push``, ``seq = seq.copy();
    seq[i] = x`` for ``set`` (the result is already stacked).  Shown without
    a target: O(n * items) per op.
``numpy_list``
    The anchor: a Python list of references, ``lst.append(x)`` (``push``) or
    ``lst[i] = x`` into ``[zeros] * n`` (``set``), then ``np.stack(lst)``.
``tf2_array``
    numba_ta's ``TF2TensorArray`` (TF 2's ``tf.TensorArray`` over these list
    ops): ``ta = ta.write(i, x)`` on a dynamic array of size 0 (``push``) or
    on one of size ``n`` (``set``), then ``ta.stack()``.

Every variant's result is checked (:meth:`ListCase.verify`,
:func:`self_test`): the stacked array equals the rows pushed or set.

No public name here starts with ``time_``, ``track_``, ``mem_`` or
``peakmem_``: asv would take it for a benchmark.

Examples
--------
>>> case = make_list_case("push", "numba_ta", n=8, items=4)
>>> case.verify() >= 0
True
>>> case.per_call, case.nbytes
(8, 128)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from numba_ta import raw_ops

from . import workloads as wl

__all__ = [
    "WORKLOADS",
    "VARIANTS",
    "VARIANT_LABELS",
    "DESCRIPTIONS",
    "QUADRATIC",
    "ROWS",
    "ListCase",
    "make_list_case",
    "self_test",
    "TF_VARIANTS",
]

#: Workload names, in report order.
WORKLOADS = ("push", "set")
#: The variants of each workload (numba_ta's first).
VARIANTS = {
    "push": ("numba_ta", "tf_eager", "copy_tuple", "copy_array", "numpy_list", "tf2_array"),
    "set": ("numba_ta", "tf_eager", "copy_tuple", "copy_array", "numpy_list", "tf2_array"),
}
#: Short names of the variants (table columns).
VARIANT_LABELS = {
    "numba_ta": "numba_ta",
    "tf_eager": "tf eager",
    "copy_tuple": "copy tuple",
    "copy_array": "copy array",
    "numpy_list": "np list",
    "tf2_array": "TF2TensorArray",
}
#: What each variant does, per workload (the report's legend).
DESCRIPTIONS = {
    ("push", "numba_ta"): "numba_ta.raw_ops EmptyTensorList, TensorListPushBack x n, TensorListStack",
    ("push", "tf_eager"): "the same ops from tf.raw_ops, eagerly",
    ("push", "copy_tuple"): "seq = seq + (x,) (ONNX Runtime SequenceInsert: copies the references), np.stack",
    ("push", "copy_array"): "seq = np.concatenate([seq, x[None]]) (copies the data)",
    ("push", "numpy_list"): "lst.append(x.copy()), np.stack",
    ("set", "numba_ta"): "numba_ta.raw_ops TensorListReserve, TensorListSetItem x n, TensorListStack",
    ("set", "tf_eager"): "the same ops from tf.raw_ops, eagerly",
    ("set", "copy_tuple"): "seq = seq[:i] + (x,) + seq[i+1:], np.stack",
    ("set", "copy_array"): "seq = seq.copy(); seq[i] = x",
    ("set", "numpy_list"): "lst[i] = x.copy() into [zeros] * n, np.stack",
    ("push", "tf2_array"): "numba_ta TF2TensorArray(size=0, dynamic_size=True): ta = ta.write(i, x) x n, ta.stack()",
    ("set", "tf2_array"): "numba_ta TF2TensorArray(size=n): ta = ta.write(i, x) x n, ta.stack()",
}
#: Variants that run TensorFlow (``tf2_array`` is numba_ta's TF2TensorArray, no TensorFlow).
TF_VARIANTS = frozenset({"tf_eager"})
#: Variants whose loop costs O(n**2) by design (what a report may extrapolate instead of running).
QUADRATIC = frozenset({"tf_eager", "copy_tuple", "copy_array"})
#: Distinct rows the elements cycle through (so 10**5 elements need no 10**5-row input).
ROWS = 1024


@dataclass
class ListCase(wl.CheckedCase):
    """One TensorList workload for one variant: a :class:`workloads.CheckedCase`.

    ``op`` is one of ``WORKLOADS``, ``impl`` one of ``VARIANTS[op]``,
    ``per_call`` is ``n`` (elements per list built); ``check(result)`` checks
    that `result` is the ``(n, items)`` stack of the elements.
    """


def _checker(rows, n, variant):
    """``check(result)``: `result` (an ndarray or a TF tensor) is ``rows`` cycled to ``n`` rows."""
    m = len(rows)

    def check(result):
        got = result.numpy() if hasattr(result, "numpy") else np.asarray(result)
        want = (n, rows.shape[1])
        assert got.shape == want, f"{variant}: shape {got.shape}, expected {want}"
        assert got.dtype == rows.dtype, f"{variant}: dtype {got.dtype}, expected {rows.dtype}"
        for s in range(0, n, m):  # block by block: no (n, items) reference array
            k = min(m, n - s)
            assert np.array_equal(got[s : s + k], rows[:k]), f"{variant}: rows {s}..{s + k - 1} differ"

    return check


def _fixed(value):
    return lambda: value


# --------------------------------------------------------------------------- the variants


def _raw_list_loop(ops, workload, seq, n, es, dtype):
    """``run`` of the ``numba_ta`` and ``tf_eager`` variants: the same raw-op loop, on `ops`.

    `ops` is ``numba_ta.raw_ops`` or ``tf.raw_ops``; `seq`, `es` and `dtype`
    are the elements, the element shape and the dtype in its own types.
    """
    if workload == "push":

        def run(_):
            lst = ops.EmptyTensorList(element_shape=es, max_num_elements=-1, element_dtype=dtype)
            for x in seq:
                lst = ops.TensorListPushBack(input_handle=lst, tensor=x)
            return ops.TensorListStack(input_handle=lst, element_shape=es, element_dtype=dtype)

    else:

        def run(_):
            lst = ops.TensorListReserve(element_shape=es, num_elements=n, element_dtype=dtype)
            for i, x in enumerate(seq):
                lst = ops.TensorListSetItem(input_handle=lst, index=i, item=x)
            return ops.TensorListStack(input_handle=lst, element_shape=es, element_dtype=dtype)

    return run


def _numba_ta(workload, seq, n, items, dtype):
    return _fixed(None), _raw_list_loop(raw_ops, workload, seq, n, [items], dtype), []


def _tf_eager(workload, seq, n, items, dtype):
    tf = wl._tf()
    dt = tf.as_dtype(dtype)
    es = tf.constant([items], tf.int32)
    consts = {}
    tseq = [consts.setdefault(id(x), tf.constant(x)) for x in seq]  # one constant per distinct row
    return _fixed(None), _raw_list_loop(tf.raw_ops, workload, tseq, n, es, dt), [tseq]


def _copy_tuple(workload, seq, n, items, dtype):
    if workload == "push":

        def run(_):
            s = ()
            for x in seq:
                s = s + (x,)
            return np.stack(s)

    else:
        zero = np.zeros(items, dtype)

        def run(_):
            s = (zero,) * n
            for i, x in enumerate(seq):
                s = s[:i] + (x,) + s[i + 1 :]
            return np.stack(s)

    return _fixed(None), run, []


def _copy_array(workload, seq, n, items, dtype):
    if workload == "push":
        empty = np.empty((0, items), dtype)
        rows1 = {}
        seq1 = [rows1.setdefault(id(x), x[None]) for x in seq]  # (1, items) views, made beforehand

        def run(_):
            s = empty
            for x in seq1:
                s = np.concatenate([s, x])
            return s

    else:
        start = wl.touched((n, items), dtype)

        def run(_):
            s = start
            for i, x in enumerate(seq):
                s = s.copy()
                s[i] = x
            return s

    return _fixed(None), run, []


def _numpy_list(workload, seq, n, items, dtype):
    if workload == "push":

        def run(_):
            lst = []
            for x in seq:
                lst.append(x.copy())  # a list holds values as a TensorList does: the same work
            return np.stack(lst)

    else:
        zero = np.zeros(items, dtype)

        def run(_):
            lst = [zero] * n
            for i, x in enumerate(seq):
                lst[i] = x.copy()
            return np.stack(lst)

    return _fixed(None), run, []


def _tf2_array(workload, seq, n, items, dtype):
    from numba_ta.tensor_list.tf2 import TF2TensorArray

    size, dynamic = (0, True) if workload == "push" else (n, False)

    def run(_):
        ta = TF2TensorArray(dtype, size=size, dynamic_size=dynamic, element_shape=[items])
        for i, x in enumerate(seq):
            ta = ta.write(i, x)
        return ta.stack()

    return _fixed(None), run, []


_BUILDERS = {
    "numba_ta": _numba_ta,
    "tf2_array": _tf2_array,
    "tf_eager": _tf_eager,
    "copy_tuple": _copy_tuple,
    "copy_array": _copy_array,
    "numpy_list": _numpy_list,
}


def make_list_case(workload, variant, n, items=4, dtype="float32"):
    """Build the :class:`ListCase` of `workload` for `variant`.

    Parameters
    ----------
    workload : str
        One of ``WORKLOADS``.
    variant : str
        One of ``VARIANTS[workload]``.
    n : int
        Elements per list (>= 1).
    items : int, optional
        Numbers per element (>= 1); elements have shape ``[items]``.
    dtype : str, optional
        ``"float32"`` or ``"float64"``.

    Returns
    -------
    ListCase

    Raises
    ------
    workloads.Unavailable
        For ``tf_eager`` when TensorFlow is not installed.
    ValueError
        For an unknown workload, variant or dtype, or a size below 1.

    Examples
    --------
    >>> c = make_list_case("set", "numpy_list", n=3, items=2)
    >>> c.per_call, c.nbytes, c.run(c.prepare()).shape
    (3, 24, (3, 2))
    """
    n, items, dtype = wl.check_case_arguments(workload, variant, WORKLOADS, VARIANTS, n, items, dtype)
    rows = wl.filled(min(n, ROWS), items, dtype)
    views = list(rows)  # (items,) views, one object per distinct row
    seq = [views[i % len(views)] for i in range(n)]  # n references, made outside the timing
    prepare, run_, keep = _BUILDERS[variant](workload, seq, n, items, np.dtype(dtype))
    check = _checker(rows, n, variant)
    return ListCase.per_element(workload, variant, n, items, dtype, prepare, run_, check, keep=[rows, seq, *keep])


def self_test(n=37, items=3, dtype="float32", variants=None):
    """Run every variant of every workload once and check its result.

    Parameters
    ----------
    n, items : int, optional
        Elements per list, numbers per element.
    dtype : str, optional
    variants : sequence of str, optional
        Subset of the variants (default: all; ``tf_eager`` is "n/a" without
        TensorFlow).

    Returns
    -------
    dict
        ``{(workload, variant): "ok", "n/a: <why>" or "<exception>: <message>"}``.

    Examples
    --------
    >>> self_test(n=5, items=2, variants=("numba_ta", "copy_tuple"))
    {('push', 'numba_ta'): 'ok', ('push', 'copy_tuple'): 'ok', ('set', 'numba_ta'): 'ok', ('set', 'copy_tuple'): 'ok'}
    """
    cases = [(w, v) for w in WORKLOADS for v in VARIANTS[w] if variants is None or v in variants]
    return wl.verify_cases(make_list_case, cases, n, items, dtype)
