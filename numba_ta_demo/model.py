r"""The model: a character-level Elman RNN, its loss, and its gradients by backpropagation through time.

Every hidden state goes through a dynamic :class:`numba_ta.TensorArray`, and
the backward pass runs TensorFlow's TensorArray gradient rules by hand on the
gradient array (the walk-through is in :mod:`numba_ta_demo`'s docstring).
:func:`loss_and_grads` is the step in Python and numpy;
:func:`loss_and_grads_compiled` runs the same TensorArray ops inside one
``@numba.njit`` call.
"""

from __future__ import annotations

import hashlib
import math
import time
from pathlib import Path
from typing import NamedTuple

import numba
import numpy as np

import numba_ta
from numba_ta import TensorArray

__all__ = [
    "PARAM_NAMES",
    "GRAD_SOURCE",
    "init_params",
    "forward",
    "loss",
    "LossAndGrads",
    "loss_and_grads",
    "loss_and_grads_compiled",
    "step_times",
    "tensor_array_ops",
]


#: Names of the model parameters, in a fixed order.
PARAM_NAMES = ("Wxh", "Whh", "bh", "Why", "by")

#: Source name of the gradient arrays, as ``tf.gradients`` would name it.
GRAD_SOURCE = "gradients"


def tensor_array_ops(seq_len):
    """Return the TensorArray ops one training step runs on a sequence of `seq_len` characters.

    :func:`loss_and_grads` and :func:`loss_and_grads_compiled` run the same ops: the
    forward pass writes every hidden state into a dynamic array, reads each one back for
    the next step and stacks them; the backward pass takes the gradient array
    (``ta.grad``), unstacks the gradient of the stack into it, reads every slot once and
    writes each step's recurrent gradient into the slot before, where it is summed with
    what the unstack put there.

    Parameters
    ----------
    seq_len : int
        Time steps of the sequence (at least 1).

    Returns
    -------
    dict of str to int
        ``write``, ``read``, ``stack`` (the forward array); ``grad``, ``unstack``,
        ``grad_read``, ``summed_write`` (its gradient array).

    Examples
    --------
    >>> tensor_array_ops(25)["summed_write"]
    24
    """
    return {
        "write": seq_len,
        "read": seq_len - 1,
        "stack": 1,
        "grad": 1,
        "unstack": 1,
        "grad_read": seq_len,
        "summed_write": seq_len - 1,
    }


def init_params(vocab_size, hidden, *, seed=0, dtype=np.float32):
    """Create the RNN's parameters with small random weights.

    Parameters
    ----------
    vocab_size : int
        Number of distinct characters ``V`` (>= 2).
    hidden : int
        Size ``H`` of the hidden state (>= 1).
    seed : int, optional
        Seed of :func:`numpy.random.default_rng`.
    dtype : dtype_like, optional
        float32 (default) or float64.

    Returns
    -------
    dict of str to ndarray
        ``Wxh`` (H, V), ``Whh`` (H, H), ``bh`` (H,), ``Why`` (V, H), ``by`` (V,),
        all of `dtype`, in the order of :data:`PARAM_NAMES`.

    Raises
    ------
    ValueError
        If `vocab_size` < 2 or `hidden` < 1.

    Examples
    --------
    >>> from numba_ta_demo import init_params
    >>> {k: v.shape for k, v in init_params(5, 3).items()}
    {'Wxh': (3, 5), 'Whh': (3, 3), 'bh': (3,), 'Why': (5, 3), 'by': (5,)}
    """
    if int(vocab_size) < 2:
        raise ValueError(f"vocab_size must be >= 2, got {vocab_size}")
    if int(hidden) < 1:
        raise ValueError(f"hidden must be >= 1, got {hidden}")
    V, H = int(vocab_size), int(hidden)
    rng = np.random.default_rng(seed)
    params = {
        "Wxh": rng.normal(0.0, 0.1, (H, V)),
        "Whh": rng.normal(0.0, 0.5 / math.sqrt(H), (H, H)),
        "bh": np.zeros(H),
        "Why": rng.normal(0.0, 0.1, (V, H)),
        "by": np.zeros(V),
    }
    return {k: np.ascontiguousarray(v, dtype=dtype) for k, v in params.items()}


def _check_batch(params, inputs, targets, h0):
    dtype = params["Wxh"].dtype
    H, V = params["Wxh"].shape
    inputs = np.asarray(inputs, dtype=np.int64)
    if inputs.ndim != 1 or inputs.size == 0:
        raise ValueError(f"inputs must be a non-empty 1-D sequence of ids, got shape {inputs.shape}")
    if inputs.min() < 0 or inputs.max() >= V:
        raise ValueError(f"inputs must be ids in range({V})")
    if targets is not None:
        targets = np.asarray(targets, dtype=np.int64)
        if targets.shape != inputs.shape:
            raise ValueError(f"targets must have shape {inputs.shape}, got {targets.shape}")
        if targets.min() < 0 or targets.max() >= V:
            raise ValueError(f"targets must be ids in range({V})")
    h0 = np.zeros(H, dtype) if h0 is None else np.asarray(h0, dtype=dtype)
    if h0.shape != (H,):
        raise ValueError(f"h0 must have shape ({H},), got {h0.shape}")
    return inputs, targets, h0


class _Forward(NamedTuple):
    ta: TensorArray  # the forward array, still open
    hs: np.ndarray  # (T, H) = ta.stack()
    probs: np.ndarray  # (T, V) softmax of the logits


def _softmax(logits):
    z = logits - logits.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=-1, keepdims=True)


def _run_forward(params, inputs, h0):
    """Forward pass; the caller owns (and must close) the returned array."""
    Wxh, Whh, bh, Why, by = (params[k] for k in PARAM_NAMES)
    H = Whh.shape[0]
    ta = TensorArray(
        Wxh.dtype,
        size=0,
        dynamic_size=True,
        clear_after_read=False,
        element_shape=[H],
    )
    try:
        xw = Wxh.T[inputs] + bh  # (T, H): Wxh x_t + bh for every step, one gather
        h_prev = h0
        for t in range(len(inputs)):
            if t > 0:
                h_prev = ta.read(t - 1)
            ta = ta.write(t, np.tanh(xw[t] + Whh @ h_prev))
        hs = ta.stack()  # (T, H)
        probs = _softmax(hs @ Why.T + by)  # (T, V): one matrix multiply for all steps
    except BaseException:
        ta.close()
        raise
    return _Forward(ta, hs, probs)


def _cross_entropy(probs, targets):
    p = probs[np.arange(len(targets)), targets].astype(np.float64)
    return float(-np.mean(np.log(np.maximum(p, np.finfo(probs.dtype).tiny))))


def forward(params, inputs, h0=None):
    """Run the RNN over `inputs`, keeping every hidden state in a TensorArray.

    Step ``t`` reads ``h_{t-1}`` with ``ta.read(t - 1)`` (step 0 uses `h0`) and
    writes ``h_t`` with ``ta.write(t, h_t)``; the hidden states come back from
    ``ta.stack()``.

    Parameters
    ----------
    params : dict of str to ndarray
        As made by :func:`init_params`; their dtype is the computation's.
    inputs : (T,) array_like of int
        Character ids, ``T >= 1``.
    h0 : (H,) array_like, optional
        Hidden state before the first step; zeros by default.

    Returns
    -------
    hs : (T, H) ndarray
        The hidden states ``h_0 .. h_{T-1}`` (``ta.stack()``).
    probs : (T, V) ndarray
        Softmax of the logits of every step.

    Raises
    ------
    ValueError
        If `inputs` is empty or not valid ids, or `h0` has the wrong shape.

    Examples
    --------
    >>> from numba_ta_demo import init_params, forward
    >>> hs, probs = forward(init_params(4, 3), [0, 1, 2])
    >>> hs.shape, probs.shape, hs.dtype
    ((3, 3), (3, 4), dtype('float32'))
    """
    inputs, _, h0 = _check_batch(params, inputs, None, h0)
    fw = _run_forward(params, inputs, h0)
    fw.ta.close()
    return fw.hs, fw.probs


def loss(params, inputs, targets, h0=None):
    """Mean cross-entropy of the next-character predictions, in nats per character.

    Runs the same TensorArray forward pass as :func:`loss_and_grads`.

    Parameters
    ----------
    params : dict of str to ndarray
        As made by :func:`init_params`.
    inputs, targets : (T,) array_like of int
        Character ids; ``targets[t]`` is the character after ``inputs[t]``.
    h0 : (H,) array_like, optional
        Hidden state before the first step; zeros by default.

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If the ids or `h0` are malformed.

    Examples
    --------
    >>> from numba_ta_demo import init_params, loss
    >>> round(loss(init_params(4, 3), [0, 1, 2], [1, 2, 3]), 1)  # about ln 4
    1.4
    """
    inputs, targets, h0 = _check_batch(params, inputs, targets, h0)
    fw = _run_forward(params, inputs, h0)
    fw.ta.close()
    return _cross_entropy(fw.probs, targets)


class LossAndGrads(NamedTuple):
    """Result of :func:`loss_and_grads`.

    Attributes
    ----------
    loss : float
        Mean cross-entropy in nats per character.
    grads : dict of str to ndarray
        Gradient of `loss` for each parameter, same shapes and dtype.
    h_last : (H,) ndarray
        The last hidden state, to carry into the next chunk (truncated BPTT).
    dh0 : (H,) ndarray
        Gradient of `loss` with respect to `h0`.
    """

    loss: float
    grads: dict
    h_last: np.ndarray
    dh0: np.ndarray


def loss_and_grads(params, inputs, targets, h0=None):
    """Loss and full BPTT gradients of one sequence, through TensorArray gradients.

    The backward pass follows TensorFlow's TensorArray gradient rules:
    ``g = ta.grad("gradients")`` (locks the forward array's size), the gradient
    of ``ta.stack()`` goes in with ``g.unstack``, then for ``t = T-1 .. 0``:
    ``dh = g.read(t)`` (stack gradient plus recurrent gradient, each slot read
    once), ``dh_raw = (1 - h_t**2) * dh``, and ``g.write(t - 1, Whh.T @ dh_raw)``
    adds the recurrent gradient into the previous slot.

    Parameters
    ----------
    params : dict of str to ndarray
        As made by :func:`init_params`; all of one dtype (float32 or float64),
        which is the dtype of every array and gradient.
    inputs, targets : (T,) array_like of int
        Character ids; ``targets[t]`` is the character after ``inputs[t]``.
    h0 : (H,) array_like, optional
        Hidden state before the first step; zeros by default.

    Returns
    -------
    LossAndGrads
        ``(loss, grads, h_last, dh0)``.

    Raises
    ------
    ValueError
        If the ids or `h0` are malformed.

    Examples
    --------
    >>> from numba_ta_demo import init_params, loss_and_grads
    >>> r = loss_and_grads(init_params(4, 3), [0, 1, 2], [1, 2, 3])
    >>> sorted(r.grads) == sorted(["Wxh", "Whh", "bh", "Why", "by"])
    True
    >>> r.grads["Whh"].shape, r.h_last.shape
    ((3, 3), (3,))
    """
    inputs, targets, h0 = _check_batch(params, inputs, targets, h0)
    Whh, Why = params["Whh"], params["Why"]
    dtype = Whh.dtype
    T = len(inputs)
    fw = _run_forward(params, inputs, h0)
    ta, hs, probs = fw
    g = None
    try:
        value = _cross_entropy(probs, targets)

        # Output layer: logits = hs @ Why.T + by, mean cross-entropy over T steps.
        dlogits = probs.copy()
        dlogits[np.arange(T), targets] -= 1
        dlogits /= T
        dWhy = dlogits.T @ hs
        dby = dlogits.sum(axis=0)
        dstack = dlogits @ Why  # (T, H): gradient of ta.stack()

        # Gradient of stack (Gather) is Scatter into the gradient array.
        g = ta.grad(GRAD_SOURCE)
        g = g.unstack(dstack)

        dh_raw = np.empty_like(hs)  # (T, H): gradient before tanh
        dh_prev = None
        for t in range(T - 1, -1, -1):
            dh = g.read(t)  # gradient of write(t): stack grad + recurrent grad
            dh_raw[t] = (1 - hs[t] * hs[t]) * dh
            dh_prev = Whh.T @ dh_raw[t]
            if t > 0:
                g = g.write(t - 1, dh_prev)  # gradient of read(t - 1): aggregates

        h_prevs = np.concatenate([h0[None, :], hs[:-1]])  # (T, H): h_{t-1}
        dWxh = np.zeros_like(params["Wxh"])
        np.add.at(dWxh.T, inputs, dh_raw)
        grads = {
            "Wxh": dWxh,
            "Whh": dh_raw.T @ h_prevs,
            "bh": dh_raw.sum(axis=0),
            "Why": dWhy,
            "by": dby,
        }
        grads = {k: np.asarray(v, dtype=dtype) for k, v in grads.items()}
    finally:
        if g is not None:
            g.close()
        ta.close()
    return LossAndGrads(value, grads, hs[-1].copy(), dh_prev)


# --------------------------------------------------------------------------- the same step, compiled
#
# loss_and_grads_compiled runs the whole step, forward pass, loss and backward pass through the
# gradient array, inside one @numba.njit function that receives the two TensorArrays (numba_ta
# arrays work inside compiled code: see the documentation page "TensorArray in compiled code").
# The gradient lookup stays in Python, so both arrays are made before the call: the forward
# array with its final size (the number of steps is known), and its gradient array from it, as
# TF makes it (TensorArrayGradV3) but before the forward writes instead of after.  Nothing in
# the backward pass can tell: every gradient slot is written (unstack) before it is read or
# summed into.  The small matrix products are loops, so no BLAS (and no SciPy, which Numba's
# np.dot needs) is involved.

# The sums may be reassociated (so LLVM vectorises the dot products); no other fast-math
# licence (NaN and infinity keep their meaning).  The results differ from the Python
# version's by rounding only: about 1e-15 relative in float64.
_FASTMATH = {"reassoc", "contract"}


def _compiled(func):
    """``numba.njit(cache=True)``, or uncached where Numba has nowhere to cache (a read-only install)."""
    try:
        return numba.njit(cache=True, fastmath=_FASTMATH)(func)
    except RuntimeError as e:
        if "no locator available" not in str(e):
            raise
        return numba.njit(fastmath=_FASTMATH)(func)


def _source_stamp():
    """Return a hash of numba_ta's source files (the TensorArray methods compiled into the step).

    Numba checks a cached function against its own file only; holding this in the
    function's closure (which is part of Numba's cache key) makes a change anywhere in
    numba_ta, as in a source checkout, recompile the step instead of reusing stale code.
    """
    h = hashlib.sha256(numba.__version__.encode())
    root = Path(numba_ta.__file__).resolve().parent
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _make_step(_stamp):
    def _step_compiled(ta, g, Wxh, Whh, bh, Why, by, inputs, targets, h0):
        _stamp  # noqa: B018  # numba_ta's source hash, in the closure: part of Numba's cache key
        T = inputs.size
        H = Whh.shape[0]
        V = Why.shape[0]
        # forward: every hidden state through the TensorArray
        h_prev = h0.copy()
        for t in range(T):
            if t > 0:
                h_prev = ta.read(t - 1)
            h = np.empty(H, Whh.dtype)
            x = inputs[t]
            for i in range(H):
                acc = Wxh[i, x] + bh[i]
                for j in range(H):
                    acc += Whh[i, j] * h_prev[j]
                h[i] = np.tanh(acc)
            ta = ta.write(t, h)
        hs = ta.stack()
        probs = np.empty((T, V), Whh.dtype)
        for t in range(T):
            for v in range(V):
                acc = by[v]
                for j in range(H):
                    acc += Why[v, j] * hs[t, j]
                probs[t, v] = acc
            m = probs[t].max()
            total = 0.0
            for v in range(V):
                e = np.exp(probs[t, v] - m)
                probs[t, v] = e
                total += e
            for v in range(V):
                probs[t, v] /= total
        tiny = np.finfo(probs.dtype).tiny
        loss = 0.0
        for t in range(T):
            loss -= np.log(max(np.float64(probs[t, targets[t]]), tiny))
        loss /= T
        # backward
        dlogits = probs.copy()
        for t in range(T):
            dlogits[t, targets[t]] -= 1
        dlogits /= T
        dWhy = np.zeros((V, H), hs.dtype)
        dby = np.zeros(V, hs.dtype)
        dstack = np.zeros((T, H), hs.dtype)
        for t in range(T):
            for v in range(V):
                d = dlogits[t, v]
                dby[v] += d
                for j in range(H):
                    dWhy[v, j] += d * hs[t, j]
                    dstack[t, j] += d * Why[v, j]
        g = g.unstack(dstack)  # the gradient of stack (a Gather) is a Scatter
        dh_raw = np.empty((T, H), hs.dtype)
        dh_prev = np.zeros(H, hs.dtype)
        for t in range(T - 1, -1, -1):
            dh = g.read(t)  # the gradient of write(t): stack gradient + recurrent gradient
            for i in range(H):
                dh_raw[t, i] = (1 - hs[t, i] * hs[t, i]) * dh[i]
            dh_prev = np.zeros(H, hs.dtype)
            for i in range(H):
                d = dh_raw[t, i]
                for j in range(H):
                    dh_prev[j] += Whh[i, j] * d
            if t > 0:
                g = g.write(t - 1, dh_prev)  # the gradient of read(t - 1): sums into the slot
        dWxh = np.zeros((H, V), hs.dtype)
        dWhh = np.zeros((H, H), hs.dtype)
        dbh = np.zeros(H, hs.dtype)
        for t in range(T):
            h_prev = h0 if t == 0 else hs[t - 1]
            x = inputs[t]
            for i in range(H):
                d = dh_raw[t, i]
                dWxh[i, x] += d
                dbh[i] += d
                for j in range(H):
                    dWhh[i, j] += d * h_prev[j]
        return loss, hs[T - 1].copy(), dWxh, dWhh, dbh, dWhy, dby, dh_prev

    return _compiled(_step_compiled)


_step_compiled = _make_step(_source_stamp())


def loss_and_grads_compiled(params, inputs, targets, h0=None):
    """:func:`loss_and_grads` as one ``@numba.njit`` call over the TensorArrays (``numba-ta demo --jit``).

    The same model, the same TensorArray ops (``write``/``read``/``stack``
    forward; ``unstack``, ``read`` and summing ``write`` into the gradient
    array backward), the same results up to rounding (float64 gradients agree
    to about 1e-15 relative). The forward array is created with the sequence
    length as its size, and its gradient array (``ta.grad``, in Python: the
    gradient lookup stays there) before the call; forward pass, loss and
    backward pass are one compiled call.

    Parameters
    ----------
    params, inputs, targets, h0
        As for :func:`loss_and_grads`.

    Returns
    -------
    LossAndGrads

    Raises
    ------
    ValueError
        As :func:`loss_and_grads`.

    Examples
    --------
    >>> from numba_ta_demo import init_params, loss_and_grads, loss_and_grads_compiled
    >>> p = init_params(4, 3, dtype=np.float64)
    >>> a = loss_and_grads(p, [0, 1, 2], [1, 2, 3])
    >>> b = loss_and_grads_compiled(p, [0, 1, 2], [1, 2, 3])
    >>> bool(abs(a.loss - b.loss) < 1e-12), bool(np.allclose(a.grads["Whh"], b.grads["Whh"], rtol=1e-12))
    (True, True)
    """
    inputs, targets, h0 = _check_batch(params, inputs, targets, h0)
    Wxh, Whh, bh, Why, by = (params[k] for k in PARAM_NAMES)
    H = Whh.shape[0]
    ta = TensorArray(Whh.dtype, size=inputs.size, clear_after_read=False, element_shape=[H])
    g = None
    try:
        g = ta.grad(GRAD_SOURCE)
        value, h_last, dWxh, dWhh, dbh, dWhy, dby, dh_prev = _step_compiled(
            ta, g, Wxh, Whh, bh, Why, by, inputs, targets, h0
        )
        grads = {"Wxh": dWxh, "Whh": dWhh, "bh": dbh, "Why": dWhy, "by": dby}
    finally:
        if g is not None:
            g.close()
        ta.close()
    return LossAndGrads(float(value), grads, h_last, dh_prev)


def step_times(params, inputs, targets, h0=None, *, repeat=30):
    """Median seconds of one training step's gradients, Python loops vs compiled: ``(python, compiled)``.

    Parameters
    ----------
    params, inputs, targets, h0
        As for :func:`loss_and_grads`.
    repeat : int, optional
        Calls timed of each (after one untimed call: compilation, caches).

    Returns
    -------
    tuple of float
        Median seconds per call of :func:`loss_and_grads` and :func:`loss_and_grads_compiled`.

    Examples
    --------
    >>> from numba_ta_demo import init_params, step_times
    >>> py, jit = step_times(init_params(4, 3), [0, 1, 2], [1, 2, 3], repeat=3)
    >>> py > 0 and jit > 0
    True
    """
    out = []
    for fn in (loss_and_grads, loss_and_grads_compiled):
        fn(params, inputs, targets, h0)
        times = []
        for _ in range(int(repeat)):
            t0 = time.perf_counter()
            fn(params, inputs, targets, h0)
            times.append(time.perf_counter() - t0)
        out.append(float(np.median(times)))
    return out[0], out[1]
