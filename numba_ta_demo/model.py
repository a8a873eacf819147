r"""Character-level Elman RNN trained with backpropagation through time.

The model reads text one character at a time and predicts the next one::

    h_t      = tanh(Wxh x_t + Whh h_{t-1} + bh)      x_t: one-hot character
    logits_t = Why h_t + by
    loss     = mean_t cross_entropy(softmax(logits_t), next character)

Every hidden state goes through a dynamic :class:`numba_ta.TensorArray`, the
way a TF1 ``while_loop`` keeps them:

* forward: step ``t`` reads ``h_{t-1}`` back with ``ta.read(t - 1)``, computes
  ``h_t`` and stores it with ``ta = ta.write(t, h_t)``; the logits of all steps
  come from one matrix multiply over ``ta.stack()``.
* backward: ``g = ta.grad("gradients")`` creates the gradient array (and locks
  the forward array's size); the gradient of ``stack`` (a Gather) goes in with
  ``g = g.unstack(d_stack)`` (a Scatter); then the walk back in time reads each
  slot once, ``dh = g.read(t)`` (the gradient of ``write(t)``), and sends the
  recurrent gradient to the previous step with ``g = g.write(t - 1, dh_prev)``
  (the gradient of ``read(t - 1)``), which *adds* it to the stack gradient
  already in that slot.

These are exactly TensorFlow's TensorArray gradient rules (``Read`` <->
``Write``, ``Gather`` <-> ``Scatter``), run by hand, in reverse order of the
forward ops.  The arithmetic is plain numpy.  :func:`check_gradients` checks
the whole path against central finite differences in float64.

Examples
--------
>>> from numba_ta.examples import char_rnn
>>> result = char_rnn.run_demo("hello world, hello numba", steps=20, hidden=8, seq_len=6)
>>> result.grad_check.passed
True
>>> result.train.final_loss < result.train.initial_loss
True
"""

from __future__ import annotations

import codecs
import contextlib
import hashlib
import io
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

import numba
import numpy as np

from .. import TensorArray

__all__ = [
    "PARAM_NAMES",
    "TextError",
    "Vocab",
    "zen_of_python",
    "load_text",
    "validate_text",
    "init_params",
    "forward",
    "loss",
    "loss_and_grads",
    "loss_and_grads_compiled",
    "step_times",
    "LossAndGrads",
    "GRAD_CHECK_STEP",
    "GRAD_CHECK_RTOL",
    "finite_difference_atol",
    "GradCheckEntry",
    "GradCheckResult",
    "check_gradients",
    "clip_gradients",
    "learning_rate",
    "Adam",
    "sample",
    "TrainResult",
    "train",
    "DemoResult",
    "run_demo",
    "smooth",
    "grad_check_batch",
]

#: Names of the model parameters, in a fixed order.
PARAM_NAMES = ("Wxh", "Whh", "bh", "Why", "by")

#: Source name of the gradient arrays, as ``tf.gradients`` would name it.
GRAD_SOURCE = "gradients"

# Defaults of train(), run_demo() and ``numba-ta demo``.  Measured on the Zen of
# Python (856 characters): 800 steps of 25 characters take about 2 s on 2 cores
# and bring the loss from ln(45) = 3.8 to about 0.6 nats per character.
DEFAULT_STEPS = 800
DEFAULT_HIDDEN = 64
DEFAULT_SEQ_LEN = 25
DEFAULT_LR = 5e-3
# After this many steps the learning rate decays as lr * sqrt(DEFAULT_LR_DECAY_START / step):
# see train() for why.  The default run (800 steps) never reaches it.
DEFAULT_LR_DECAY_START = 1000
DEFAULT_SAMPLE_LEN = 300
DEFAULT_TEMPERATURE = 0.8
DEFAULT_GRAD_CHECK_ENTRIES = 30


class TextError(ValueError):
    """The training text cannot be used (missing, unreadable, not UTF-8, too small).

    The message is one line meant for the user, for example
    ``file not found: notes.txt``.
    """


# --------------------------------------------------------------------------- text


def zen_of_python():
    """Return the Zen of Python, decoded from the standard library's :mod:`this`.

    Importing :mod:`this` prints the text; that output is captured and dropped,
    and the text is decoded from ``this.s`` (rot13) instead.

    Returns
    -------
    str
        The poem, about 850 characters, starting with ``"The Zen of Python"``.

    Examples
    --------
    >>> from numba_ta.examples.char_rnn import zen_of_python
    >>> zen_of_python().splitlines()[2]
    'Beautiful is better than ugly.'
    """
    with contextlib.redirect_stdout(io.StringIO()):
        import this
    return codecs.decode(this.s, "rot13")


def validate_text(text, *, source="text"):
    """Check that `text` can train the model: at least two distinct characters.

    Parameters
    ----------
    text : str
        The training text.
    source : str, optional
        What to call the text in error messages (for example its file name).

    Returns
    -------
    str
        `text`, unchanged.

    Raises
    ------
    TextError
        If `text` is not a ``str``, is empty, or has fewer than two distinct
        characters (there is nothing to predict).

    Examples
    --------
    >>> from numba_ta.examples.char_rnn import validate_text
    >>> validate_text("ab")
    'ab'
    >>> validate_text("aaaa")
    Traceback (most recent call last):
    ...
    numba_ta.examples.char_rnn.TextError: text has only one distinct character ('a'); at least 2 are needed
    """
    if not isinstance(text, str):
        raise TextError(f"{source} must be a str, got {type(text).__name__}")
    if not text:
        raise TextError(f"{source} is empty")
    distinct = set(text)
    if len(distinct) < 2:
        raise TextError(f"{source} has only one distinct character ({text[0]!r}); at least 2 are needed")
    return text


def load_text(path):
    """Read a UTF-8 text file for training.

    A UTF-8 byte-order mark, if present, is dropped.

    Parameters
    ----------
    path : str or os.PathLike
        The file to read.

    Returns
    -------
    str
        The decoded text.

    Raises
    ------
    TextError
        If the file does not exist, is a directory, cannot be read, is not valid
        UTF-8, is empty, or has fewer than two distinct characters.  The message
        names the file and the problem in one line.

    Examples
    --------
    >>> import os, tempfile
    >>> from numba_ta.examples.char_rnn import load_text
    >>> with tempfile.TemporaryDirectory() as d:
    ...     p = os.path.join(d, "t.txt")
    ...     with open(p, "wb") as f:
    ...         _ = f.write("naïve café".encode("utf-8"))
    ...     load_text(p)
    'naïve café'
    """
    p = Path(path)
    name = str(path)
    try:
        if p.is_dir():
            raise TextError(f"is a directory, not a file: {name}")
        data = p.read_bytes()
    except FileNotFoundError:
        raise TextError(f"file not found: {name}") from None
    except IsADirectoryError:
        raise TextError(f"is a directory, not a file: {name}") from None
    except PermissionError:
        raise TextError(f"permission denied: {name}") from None
    except OSError as e:
        raise TextError(f"cannot read {name}: {e.strerror or e}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise TextError(f"not a UTF-8 text file: {name} (byte 0x{data[e.start]:02x} at offset {e.start})") from None
    return validate_text(text, source=f"file {name}")


class Vocab:
    """The characters of a text, each mapped to an integer id.

    Parameters
    ----------
    text : str
        The text whose distinct characters form the vocabulary (sorted).

    Attributes
    ----------
    chars : tuple of str
        The characters, in id order.

    Raises
    ------
    TextError
        If `text` has fewer than two distinct characters.

    Examples
    --------
    >>> from numba_ta.examples.char_rnn import Vocab
    >>> v = Vocab("hello")
    >>> v.chars
    ('e', 'h', 'l', 'o')
    >>> v.encode("hole")
    array([1, 3, 2, 0])
    >>> v.decode([2, 0])
    'le'
    """

    def __init__(self, text):
        validate_text(text)
        self.chars = tuple(sorted(set(text)))
        self._index = {c: i for i, c in enumerate(self.chars)}

    def __len__(self):
        """Return the number of characters."""
        return len(self.chars)

    def __repr__(self):
        """Return ``Vocab(<n> characters)``."""
        return f"Vocab({len(self)} characters)"

    def __contains__(self, char):
        """Return whether `char` is in the vocabulary."""
        return char in self._index

    def encode(self, text):
        """Map characters to ids.

        Parameters
        ----------
        text : str
            Characters that are all in the vocabulary.

        Returns
        -------
        ids : (len(text),) ndarray of int64

        Raises
        ------
        KeyError
            If a character is not in the vocabulary.
        """
        return np.fromiter((self._index[c] for c in text), dtype=np.int64, count=len(text))

    def decode(self, ids):
        """Map ids back to characters.

        Parameters
        ----------
        ids : (n,) array_like of int
            Ids in ``range(len(self))``.

        Returns
        -------
        str
        """
        return "".join(self.chars[int(i)] for i in ids)


# --------------------------------------------------------------------------- model


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
    >>> from numba_ta.examples.char_rnn import init_params
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
    >>> from numba_ta.examples.char_rnn import init_params, forward
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
    >>> from numba_ta.examples.char_rnn import init_params, loss
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
    >>> from numba_ta.examples.char_rnn import init_params, loss_and_grads
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
    root = Path(__file__).resolve().parent.parent
    for path in sorted(root.rglob("*.py")):
        h.update(path.relative_to(root).as_posix().encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _make_step(_stamp):
    def _step_compiled(ta, g, Wxh, Whh, bh, Why, by, inputs, targets, h0):  # noqa: N803
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
    >>> from numba_ta.examples.char_rnn import init_params, loss_and_grads, loss_and_grads_compiled
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


# --------------------------------------------------------------------------- gradient check

# How far a correct gradient may be from its finite-difference estimate.
#
# check_gradients estimates dL/dp by the fourth-order central difference
#
#     D(h) = (8 (L(p + h) - L(p - h)) - (L(p + 2h) - L(p - 2h))) / (12 h)
#
# in float64.  Its error has two parts:
#
# * Truncation.  Taylor expansion gives D(h) = L' - h**4 / 30 * L''''' + O(h**6).
#   (The plain central difference (L(p + h) - L(p - h)) / (2 h) is off by
#   h**2 / 6 * L''' plus a rounding error of eps * |L| / h: with |L'''| and |L|
#   about 1, even its best step, (3 eps)**(1/3) = 9e-6, leaves 4e-11, a hundred
#   times the fourth-order stencil's error at h = 1e-3.)  Measured |L'''''|
#   (long-double differences at h = 1e-2, 3e-3 and 1e-3 against the analytic
#   gradient): 0.3 on a fresh model of 20,000 characters, 2.8 and 3.2 on the
#   Zen of Python after 800 and 5,000 steps.
#   Taking |L'''''| <= 10, the truncation error at h = 1e-3 is at most
#   1e-12 / 30 * 10 = 3.3e-13.
# * Rounding.  Each float64 loss evaluation is off by some delta of about
#   eps * max(|L|, 1), eps = 2.2e-16 (measured against long double: 0.02 to 3
#   eps).  The stencil weighs four evaluations by 8, 8, 1, 1 over 12 h, so it
#   adds at most 18 / 12 * delta / h = 1.5 * eps * max(|L|, 1) / h, which is
#   3.3e-13 * max(|L|, 1) at h = 1e-3.  It grows as the step shrinks: a smaller
#   step does not help.
#
# The absolute tolerance is ten times the sum of the two bounds: 6.7e-12 while
# the loss is at most 1 nat per character, 3.6e-11 at L = 9.9 = ln 20,000 (a
# fresh model of 20,000 distinct characters).  The largest rounding error
# measured (float64 against long-double differences, 30 entries) is 1.7e-12
# there and 1.9e-13 on the Zen model after 800 steps.  A relative-only test
# fails such tiny entries: with 20,000 characters an output weight's gradient
# is about 1.5e-7, and 1.7e-12 of rounding is 1.1e-5 of it.
# The relative tolerance covers the large entries, whose finite-difference
# error is relatively negligible (at most 4e-9 of a gradient of 1e-3 or more).

#: Finite-difference step of :func:`check_gradients`.
GRAD_CHECK_STEP = 1e-3

#: Relative tolerance of :func:`check_gradients`.
GRAD_CHECK_RTOL = 1e-5

# Assumed bound on |d^5 L / dp^5| (measured: at most 3.2) and the safety factor
# on the error bound; see the derivation above.
_FIFTH_DERIVATIVE_BOUND = 10.0
_ATOL_SAFETY = 10.0


def finite_difference_atol(loss_value, step=GRAD_CHECK_STEP):
    """Absolute tolerance of :func:`check_gradients` for a loss value and step.

    Ten times the error bound of the fourth-order central difference in
    float64: rounding, ``1.5 * eps * max(|L|, 1) / step`` with ``eps`` =
    2.2e-16 the machine epsilon, plus truncation, ``step**4 / 30 * 10`` (the
    fifth derivative of the loss taken as at most 10; measured at most 3.2).
    The comments above :data:`GRAD_CHECK_STEP` in the source derive and
    measure both terms.

    Parameters
    ----------
    loss_value : float
        The loss at the checked parameters, nats per character.
    step : float, optional
        Finite-difference step (> 0).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If `step` is not positive.

    Examples
    --------
    >>> from numba_ta.examples.char_rnn import finite_difference_atol
    >>> f"{finite_difference_atol(0.6):.1e}", f"{finite_difference_atol(9.9):.1e}"
    ('6.7e-12', '3.6e-11')
    """
    if not step > 0:
        raise ValueError(f"step must be > 0, got {step}")
    eps = float(np.finfo(np.float64).eps)
    rounding = 1.5 * eps * max(abs(float(loss_value)), 1.0) / step
    truncation = step**4 / 30 * _FIFTH_DERIVATIVE_BOUND
    return _ATOL_SAFETY * (rounding + truncation)


class GradCheckEntry(NamedTuple):
    """One checked parameter entry of :class:`GradCheckResult`.

    Attributes
    ----------
    name : str
        Parameter name (one of :data:`PARAM_NAMES`).
    index : tuple of int
        Position of the entry in the parameter.
    analytic : float
        BPTT gradient.
    numeric : float
        Central finite difference.
    rel_error : float
        ``|analytic - numeric| / max(|analytic|, |numeric|)`` (0 if both are 0).
    abs_error : float
        ``|analytic - numeric|``.
    allowed : float
        The entry's tolerance, ``atol + rtol * |numeric|``.
    """

    name: str
    index: tuple  # type: ignore[assignment]  # the field shadows tuple.index, as intended
    analytic: float
    numeric: float
    rel_error: float
    abs_error: float
    allowed: float

    @property
    def ok(self):
        """bool: Whether ``abs_error <= allowed`` (False if either is NaN)."""
        return bool(self.abs_error <= self.allowed)

    @property
    def ratio(self):
        """float: ``abs_error / allowed``: the entry passes if it is at most 1 (inf if NaN)."""
        r = self.abs_error / self.allowed if self.allowed > 0 else (0.0 if self.abs_error == 0 else math.inf)
        return r if math.isfinite(r) else math.inf

    def describe(self):
        """Return one line naming the entry, both values and the difference against its tolerance.

        Returns
        -------
        str
        """
        where = ", ".join(str(i) for i in self.index)
        return (
            f"{self.name}[{where}]: analytic {self.analytic:.6g}, numeric {self.numeric:.6g}, "
            f"|difference| {self.abs_error:.2e}, allowed {self.allowed:.2e}"
        )


@dataclass(frozen=True)
class GradCheckResult:
    """Result of :func:`check_gradients`.

    An entry passes if ``|analytic - numeric| <= atol + rtol * |numeric|`` (the
    test of ``numpy.testing.assert_allclose`` and
    ``torch.autograd.gradcheck``); the check passes if every entry does.

    Attributes
    ----------
    max_rel_error : float
        Largest relative error over the checked entries, for information: a
        tiny gradient can have a large relative error and still pass on `atol`.
    rtol : float
        Relative tolerance.
    atol : float
        Absolute tolerance (:func:`finite_difference_atol` by default).
    passed : bool
        Whether every entry is within its tolerance.
    eps : float
        Finite-difference step.
    loss : float
        The float64 loss at the checked parameters.
    entries : tuple of GradCheckEntry
        Every checked entry.
    """

    max_rel_error: float
    rtol: float
    atol: float
    passed: bool
    eps: float
    loss: float
    entries: tuple = field(repr=False)

    @property
    def n_checked(self):
        """int: Number of checked entries."""
        return len(self.entries)

    @property
    def max_abs_error(self):
        """float: Largest ``|analytic - numeric|``."""
        return max(e.abs_error for e in self.entries)

    @property
    def worst(self):
        """GradCheckEntry: The entry with the largest ``abs_error / allowed``."""
        return max(self.entries, key=lambda e: e.ratio)

    @property
    def tolerance(self):
        """str: The pass condition with its numbers, ``|analytic - numeric| <= ATOL + RTOL * |numeric|``."""
        return f"|analytic - numeric| <= {self.atol:.1e} + {self.rtol:.0e} * |numeric|"


def _sample_entries(params, inputs, n_entries, rng):
    """Spread `n_entries` positions over all parameters (Wxh: used columns only)."""
    names = list(PARAM_NAMES)
    counts = [n_entries // len(names)] * len(names)
    for i in range(n_entries % len(names)):
        counts[i] += 1
    used = np.unique(inputs)
    out = []
    for name, count in zip(names, counts, strict=True):
        shape = params[name].shape
        if name == "Wxh":  # columns of characters absent from the batch have zero gradient
            rows = rng.integers(0, shape[0], count)
            cols = rng.choice(used, count)
            out += [(name, (int(r), int(c))) for r, c in zip(rows, cols, strict=True)]
            continue
        size = int(np.prod(shape))
        flat = rng.choice(size, count, replace=count > size)
        out += [(name, tuple(int(i) for i in np.unravel_index(f, shape))) for f in flat]
    return out


def check_gradients(
    params,
    inputs,
    targets,
    h0=None,
    *,
    n_entries=DEFAULT_GRAD_CHECK_ENTRIES,
    eps=GRAD_CHECK_STEP,
    rtol=GRAD_CHECK_RTOL,
    atol=None,
    seed=0,
    loss_and_grads=loss_and_grads,
):
    """Compare BPTT gradients with central finite differences, in float64.

    The parameters are copied to float64, then :func:`loss_and_grads` gives the
    analytic gradients and :func:`loss` (the same TensorArray forward pass) the
    numeric ones, by the fourth-order central difference
    ``(8 (L(p + e) - L(p - e)) - (L(p + 2e) - L(p - 2e))) / (12 e)``, on
    `n_entries` entries spread evenly over all five parameters.  ``Wxh`` entries are drawn
    from the columns of characters that occur in `inputs` (the other columns
    have zero gradient on both sides, which would prove nothing).

    An entry passes if ``|analytic - numeric| <= atol + rtol * |numeric|``, as
    in ``numpy.testing.assert_allclose``.  The default `atol` is the
    floating-point noise floor of the finite difference with a margin of ten
    (:func:`finite_difference_atol`): 6.7e-12 while the loss is below 1 nat,
    3.6e-11 at 9.9 nats.  Without it, a correct gradient of 1.5e-7 (an output
    weight with 20,000 characters) can fail a relative tolerance of 1e-5 on
    rounding error alone.

    Parameters
    ----------
    params : dict of str to ndarray
        Model parameters (any float dtype; not modified).
    inputs, targets : (T,) array_like of int
        A fixed batch of character ids.
    h0 : (H,) array_like, optional
        Hidden state before the first step; zeros by default.
    n_entries : int, optional
        Number of parameter entries to check (>= 1).
    eps : float, optional
        Finite-difference step.  The fourth-order stencil has truncation error
        O(eps**4), so a fairly large step keeps rounding error small: at the
        default 1e-3 truncation is below 3.3e-13 and rounding below 3.3e-13
        per nat of loss.
    rtol : float, optional
        Relative tolerance (> 0).
    atol : float, optional
        Absolute tolerance (>= 0); by default
        ``finite_difference_atol(loss, eps)`` for the loss at `params`.
    seed : int, optional
        Seed for choosing the entries.
    loss_and_grads : callable, optional
        The analytic gradient function under test, with the signature and
        result of :func:`loss_and_grads` (to test the checker itself).

    Returns
    -------
    GradCheckResult

    Raises
    ------
    ValueError
        If `n_entries` < 1, `eps` or `rtol` is not positive, `atol` is
        negative, or the batch is malformed.

    Notes
    -----
    `atol` assumes a smooth loss (fifth derivative at most 10).  A model
    whose training diverged into chaotic dynamics breaks that assumption:
    after 100,000 steps at a constant learning rate (``train(...,
    lr_decay_start=None)``, spectral radius of ``Whh`` 12) the difference with
    step 1e-3 is off by 2e-3 on a gradient of -5.18, and the check fails,
    although the gradient is right (long-double differences with step 1e-5
    agree with it to 7e-11).  :func:`train`'s learning-rate decay keeps the
    demo out of that regime.

    Examples
    --------
    >>> from numba_ta.examples.char_rnn import init_params, check_gradients
    >>> r = check_gradients(init_params(4, 3), [0, 1, 2, 1], [1, 2, 3, 0], n_entries=10)
    >>> r.passed, r.n_checked
    (True, 10)
    >>> r.tolerance
    '|analytic - numeric| <= 8.0e-12 + 1e-05 * |numeric|'
    """
    if int(n_entries) < 1:
        raise ValueError(f"n_entries must be >= 1, got {n_entries}")
    if not (eps > 0 and math.isfinite(eps) and rtol > 0):
        raise ValueError(f"eps and rtol must be positive, got eps={eps}, rtol={rtol}")
    if atol is not None and not atol >= 0:
        raise ValueError(f"atol must be >= 0, got {atol}")
    p64 = {k: np.array(params[k], dtype=np.float64) for k in PARAM_NAMES}
    inputs, targets, h0 = _check_batch(p64, inputs, targets, h0)
    value = loss(p64, inputs, targets, h0)
    atol = finite_difference_atol(value, eps) if atol is None else float(atol)
    analytic = loss_and_grads(p64, inputs, targets, h0).grads
    rng = np.random.default_rng(seed)
    entries = []
    for name, idx in _sample_entries(p64, inputs, int(n_entries), rng):
        w = p64[name]
        old = w[idx]
        f = {}
        for k in (-2, -1, 1, 2):
            w[idx] = old + k * eps
            f[k] = loss(p64, inputs, targets, h0)
        w[idx] = old
        num = (8 * (f[1] - f[-1]) - (f[2] - f[-2])) / (12 * eps)
        ana = float(analytic[name][idx])
        diff = abs(ana - num)
        scale = max(abs(ana), abs(num))
        rel = diff / scale if scale > 0 else 0.0
        entries.append(GradCheckEntry(name, idx, ana, num, rel, diff, atol + rtol * abs(num)))
    worst = max(e.rel_error for e in entries)
    if not math.isfinite(worst):
        worst = math.inf
    passed = all(e.ok for e in entries)
    return GradCheckResult(worst, rtol, atol, passed, eps, value, tuple(entries))


# --------------------------------------------------------------------------- training


def clip_gradients(grads, max_norm):
    """Scale all gradients down together so that their global L2 norm is at most `max_norm`.

    Parameters
    ----------
    grads : dict of str to ndarray
        Modified in place.
    max_norm : float
        Largest allowed global norm (> 0).

    Returns
    -------
    float
        The global norm before clipping.

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta.examples.char_rnn import clip_gradients
    >>> g = {"a": np.array([3.0, 4.0])}
    >>> clip_gradients(g, 1.0), g["a"]
    (5.0, array([0.6, 0.8]))
    """
    norm = math.sqrt(sum(float(np.vdot(g, g)) for g in grads.values()))
    if norm > max_norm:
        scale = max_norm / norm
        for g in grads.values():
            g *= scale
    return norm


def learning_rate(step, lr=DEFAULT_LR, decay_start=DEFAULT_LR_DECAY_START):
    """Learning rate of a 1-based training step: `lr`, then decaying as ``1 / sqrt(step)``.

    ``lr`` for the first `decay_start` steps, ``lr * sqrt(decay_start / step)``
    after them (continuous at `decay_start`); see :func:`train` for why.

    Parameters
    ----------
    step : int
        1-based step number.
    lr : float, optional
        Initial learning rate.
    decay_start : int or None, optional
        Last step at the full rate; ``None`` keeps `lr` constant.

    Returns
    -------
    float

    Examples
    --------
    >>> from numba_ta.examples.char_rnn import learning_rate
    >>> [learning_rate(s, 0.005) for s in (1, 1000, 4000, 100_000)]
    [0.005, 0.005, 0.0025, 0.0005]
    >>> learning_rate(100_000, 0.005, decay_start=None)
    0.005
    """
    if decay_start is None or step <= decay_start:
        return lr
    return lr * math.sqrt(decay_start / step)


class Adam:
    """Adam optimizer over a dict of parameters (updated in place).

    Parameters
    ----------
    params : dict of str to ndarray
        The parameters to update.
    lr : float, optional
        Learning rate.
    beta1, beta2 : float, optional
        Decay rates of the first and second moment estimates.
    eps : float, optional
        Added to the denominator.

    Examples
    --------
    >>> import numpy as np
    >>> from numba_ta.examples.char_rnn import Adam
    >>> p = {"w": np.array([1.0])}
    >>> opt = Adam(p, lr=0.1)
    >>> opt.step({"w": np.array([2.0])})
    >>> p["w"]
    array([0.9])
    """

    def __init__(self, params, lr=1e-2, beta1=0.9, beta2=0.999, eps=1e-8):
        self.params = params
        self.lr, self.beta1, self.beta2, self.eps = lr, beta1, beta2, eps
        self.m = {k: np.zeros_like(v) for k, v in params.items()}
        self.v = {k: np.zeros_like(v) for k, v in params.items()}
        self.t = 0

    def step(self, grads, lr=None):
        """Apply one update.

        Parameters
        ----------
        grads : dict of str to ndarray
            Gradient of each parameter, same shapes.
        lr : float, optional
            Learning rate of this step (a schedule's); `self.lr` by default.
        """
        lr = self.lr if lr is None else lr
        self.t += 1
        c1 = 1 - self.beta1**self.t
        c2 = 1 - self.beta2**self.t
        for k, p in self.params.items():
            g = grads[k]
            m, v = self.m[k], self.v[k]
            m *= self.beta1
            m += (1 - self.beta1) * g
            v *= self.beta2
            v += (1 - self.beta2) * (g * g)
            p -= (lr / c1) * m / (np.sqrt(v / c2) + self.eps)


def sample(params, vocab, length, *, prime=None, temperature=0.8, seed=0):
    """Generate text from the model, one character at a time.

    Parameters
    ----------
    params : dict of str to ndarray
        Trained parameters.
    vocab : Vocab
        The vocabulary the model was trained with.
    length : int
        Number of characters to generate after `prime` (>= 0).
    prime : str, optional
        Text fed to the model first and included at the start of the result;
        by default the first character of the vocabulary.  Every character must
        be in `vocab`.
    temperature : float, optional
        Softmax temperature (> 0): lower is more conservative.
    seed : int, optional
        Seed of :func:`numpy.random.default_rng`; the same seed gives the same text.

    Returns
    -------
    str
        `prime` followed by `length` generated characters.

    Raises
    ------
    ValueError
        If `length` < 0, `temperature` <= 0, or `prime` is empty or has
        characters outside `vocab`.

    Examples
    --------
    >>> from numba_ta.examples.char_rnn import Vocab, init_params, sample
    >>> v = Vocab("abc")
    >>> s = sample(init_params(len(v), 4), v, 10, prime="a")
    >>> len(s), set(s) <= set("abc")
    (11, True)
    """
    if int(length) < 0:
        raise ValueError(f"length must be >= 0, got {length}")
    if not temperature > 0:
        raise ValueError(f"temperature must be > 0, got {temperature}")
    prime = vocab.chars[0] if prime is None else prime
    if not prime or any(c not in vocab for c in prime):
        raise ValueError("prime must be a non-empty string of vocabulary characters")
    p64 = {k: np.asarray(params[k], dtype=np.float64) for k in PARAM_NAMES}
    Wxh, Whh, bh, Why, by = (p64[k] for k in PARAM_NAMES)
    rng = np.random.default_rng(seed)
    h = np.zeros(Whh.shape[0])
    ids = list(vocab.encode(prime))
    for i in ids[:-1]:
        h = np.tanh(Wxh[:, i] + Whh @ h + bh)
    x = ids[-1]
    for _ in range(int(length)):
        h = np.tanh(Wxh[:, x] + Whh @ h + bh)
        logits = (Why @ h + by) / temperature
        cdf = np.cumsum(np.exp(logits - logits.max()))
        x = int(np.searchsorted(cdf, rng.random() * cdf[-1], side="right"))
        x = min(x, len(vocab) - 1)
        ids.append(x)
    return vocab.decode(ids)


def smooth(losses, beta=0.95):
    """Exponential moving average with bias correction (``out[0] == losses[0]``).

    Parameters
    ----------
    losses : (n,) array_like of float
    beta : float, optional
        Decay, in [0, 1).

    Returns
    -------
    (n,) ndarray of float64

    Examples
    --------
    >>> from numba_ta.examples.char_rnn import smooth
    >>> smooth([4.0, 2.0, 2.0]).round(3).tolist()
    [4.0, 2.974, 2.633]
    """
    out = np.empty(len(losses))
    avg = 0.0
    for i, x in enumerate(losses):
        avg = beta * avg + (1 - beta) * float(x)
        out[i] = avg / (1 - beta ** (i + 1))
    return out


@dataclass
class TrainResult:
    """Result of :func:`train`.

    Attributes
    ----------
    params : dict of str to ndarray
        Trained parameters.
    vocab : Vocab
        The text's vocabulary.
    losses : (steps,) ndarray of float64
        Loss of every step, nats per character.
    smoothed : (steps,) ndarray of float64
        :func:`smooth` of `losses`.
    seconds : float
        Wall time of the training loop.
    """

    params: dict
    vocab: Vocab
    losses: np.ndarray
    smoothed: np.ndarray
    seconds: float

    @property
    def initial_loss(self):
        """float: Loss of the first step (about ``ln(len(vocab))``)."""
        return float(self.losses[0])

    @property
    def final_loss(self):
        """float: Smoothed loss after the last step."""
        return float(self.smoothed[-1])


def _check_options(text, steps, hidden, seq_len, lr, clip, lr_decay_start=None):
    if int(steps) < 1:
        raise ValueError(f"steps must be >= 1, got {steps}")
    if int(hidden) < 1:
        raise ValueError(f"hidden must be >= 1, got {hidden}")
    if int(seq_len) < 1:
        raise ValueError(f"seq_len must be >= 1, got {seq_len}")
    if int(seq_len) > len(text) - 1:
        raise ValueError(
            f"seq_len {seq_len} is too long for a text of {len(text)} characters (at most {len(text) - 1})"
        )
    if not (lr > 0 and math.isfinite(lr)):
        raise ValueError(f"lr must be a positive number, got {lr}")
    if not (clip > 0):
        raise ValueError(f"clip must be > 0, got {clip}")
    if lr_decay_start is not None and not (isinstance(lr_decay_start, (int, np.integer)) and lr_decay_start >= 1):
        raise ValueError(f"lr_decay_start must be None or an integer >= 1, got {lr_decay_start!r}")


def train(
    text,
    *,
    steps=DEFAULT_STEPS,
    hidden=DEFAULT_HIDDEN,
    seq_len=DEFAULT_SEQ_LEN,
    lr=DEFAULT_LR,
    lr_decay_start=DEFAULT_LR_DECAY_START,
    clip=5.0,
    seed=0,
    dtype=np.float32,
    callback=None,
    jit=False,
):
    """Train the character RNN on `text` with truncated BPTT and Adam.

    Step ``i`` trains on the next `seq_len` characters (targets shifted by
    one), starting from the hidden state the previous chunk ended with; at the
    end of the text it starts over from the beginning with a zero state.
    Gradients (:func:`loss_and_grads`) are clipped to a global norm of `clip`.
    The learning rate is `lr` for the first `lr_decay_start` steps, then
    ``lr * sqrt(lr_decay_start / step)`` (:func:`learning_rate`).

    Why the decay: Adam moves every weight by about the learning rate per
    step, however small the gradient (it divides by the gradient's running
    RMS; for the same reason the clip bounds the gradient but not the update).
    Once the text is learnt, a constant rate keeps pushing the logits up and
    the weights grow without end.  Measured on the Zen of Python with the
    defaults and a constant rate: the weights' norm grows from 61 at step
    5,000 to 209 at step 100,000, the spectral radius of ``Whh`` from 2.5 to
    12, the share of saturated hidden units (``|h| > 0.99``) from 14% to 83%;
    the median gradient norm rises from about 1 to 133 (95% of the steps
    clipped), and the smoothed loss, 0.018 at its best, is back at 1.96 nats
    at step 100,000 (loss spikes start at step 6,200).  With the decay the
    total movement grows as the square root of the steps: the same run ends
    at 0.004 nats, norm 85, spectral radius 2.3, 24% saturated.  (A smaller
    ``beta2``, 0.99, leaves the drift; decoupled weight decay of 0.1 stops it
    but holds the loss at 0.2; clipping Adam's update on top of the decay
    changes nothing measurable.)  The default 800 steps end before the decay
    starts.

    Parameters
    ----------
    text : str
        Training text, at least ``seq_len + 1`` characters and two distinct ones.
    steps : int, optional
        Number of training iterations (chunks).
    hidden : int, optional
        Hidden-state size.
    seq_len : int, optional
        Characters per chunk: the number of time steps backpropagated through.
    lr : float, optional
        Adam learning rate of the first `lr_decay_start` steps.
    lr_decay_start : int or None, optional
        Step after which the learning rate decays as ``1 / sqrt(step)``;
        ``None`` keeps it constant (and long runs unstable, see above).
    clip : float, optional
        Global gradient-norm limit.
    seed : int, optional
        Seed of the weight initialisation.
    dtype : dtype_like, optional
        float32 (default) or float64.
    callback : callable, optional
        Called after every step as ``callback(step, loss, smoothed_loss)``
        with 1-based `step`.
    jit : bool, optional
        Run each step with :func:`loss_and_grads_compiled` (the time loops in
        ``@numba.njit`` code) instead of :func:`loss_and_grads`.

    Returns
    -------
    TrainResult

    Raises
    ------
    TextError
        If `text` has fewer than two distinct characters.
    ValueError
        If an option is out of range, or `seq_len` is not shorter than `text`.

    Examples
    --------
    >>> from numba_ta.examples.char_rnn import train
    >>> r = train("abcabcabcabc", steps=60, hidden=8, seq_len=4)
    >>> r.losses.shape, r.final_loss < r.initial_loss
    ((60,), True)
    """
    validate_text(text)
    _check_options(text, steps, hidden, seq_len, lr, clip, lr_decay_start)
    step_fn = loss_and_grads_compiled if jit else loss_and_grads
    vocab = Vocab(text)
    data = vocab.encode(text)
    params = init_params(len(vocab), hidden, seed=seed, dtype=dtype)
    opt = Adam(params, lr=lr)
    H = params["Whh"].shape[0]
    zero = np.zeros(H, dtype=params["Whh"].dtype)
    h = zero
    pos = 0
    losses = np.empty(int(steps))
    avg = 0.0
    beta = 0.95
    t0 = time.perf_counter()
    for i in range(int(steps)):
        if pos + seq_len + 1 > len(data):
            pos, h = 0, zero
        inputs = data[pos : pos + seq_len]
        targets = data[pos + 1 : pos + seq_len + 1]
        value, grads, h, _ = step_fn(params, inputs, targets, h)
        clip_gradients(grads, clip)
        opt.step(grads, learning_rate(i + 1, lr, lr_decay_start))
        pos += seq_len
        losses[i] = value
        avg = beta * avg + (1 - beta) * value
        if callback is not None:
            callback(i + 1, value, avg / (1 - beta ** (i + 1)))
    seconds = time.perf_counter() - t0
    return TrainResult(params, vocab, losses, smooth(losses, beta), seconds)


def prepare_kernels(vocab_size, hidden, seq_len, *, jit=False, dtype=np.float32, seed=0):
    """Compile (first run) or load from Numba's cache every kernel training and the gradient check use.

    One training step in ``dtype`` and one in float64 (the gradient check's), on
    random characters, so that :func:`train` then times training alone.  The first
    run in an environment compiles numba_ta's kernels; later runs load them from
    Numba's cache.

    Parameters
    ----------
    vocab_size, hidden, seq_len : int
        The model's sizes (compiled code depends on none of them, only on the dtypes).
    jit : bool, optional
        Also compile the compiled step (:func:`loss_and_grads_compiled`).
    dtype : numpy dtype, optional
        Training dtype.
    seed : int, optional
        Seed of the random characters.

    Returns
    -------
    float
        Seconds it took.

    Examples
    --------
    >>> from numba_ta.examples.char_rnn import prepare_kernels
    >>> prepare_kernels(5, 4, 3) >= 0
    True
    """
    t0 = time.perf_counter()
    rng = np.random.default_rng(seed)
    step_fn = loss_and_grads_compiled if jit else loss_and_grads
    n = max(1, min(int(seq_len), 4))
    for t in (dtype, np.float64):
        params = init_params(vocab_size, hidden, seed=seed, dtype=t)
        chars = rng.integers(0, vocab_size, n + 1)
        step_fn(params, chars[:-1], chars[1:], np.zeros(int(hidden), t))
    return time.perf_counter() - t0


@dataclass
class DemoResult:
    """Result of :func:`run_demo`.

    Attributes
    ----------
    train : TrainResult
        Training losses and the trained model.
    grad_check : GradCheckResult
        Float64 gradient check on a fixed batch of the text.
    sample : str
        Text generated by the trained model.
    """

    train: TrainResult
    grad_check: GradCheckResult
    sample: str


def grad_check_batch(text, vocab, seq_len, hidden, seed=0):
    """Return the fixed batch that :func:`run_demo` checks gradients on.

    Parameters
    ----------
    text : str
        The training text.
    vocab : Vocab
        Its vocabulary.
    seq_len : int
        Training chunk length; the batch is the first ``min(seq_len, 16)``
        characters (targets shifted by one).
    hidden : int
        Hidden size.
    seed : int, optional
        Seed of the random initial hidden state.

    Returns
    -------
    inputs, targets : (T,) ndarray of int64
    h0 : (hidden,) ndarray of float64
        A random nonzero initial state, so that ``Whh`` matters from step 0.
    """
    n = min(int(seq_len), 16, len(text) - 1)
    data = vocab.encode(text[: n + 1])
    h0 = np.random.default_rng(seed).uniform(-0.5, 0.5, int(hidden))
    return data[:-1], data[1:], h0


def run_demo(
    text=None,
    *,
    steps=DEFAULT_STEPS,
    hidden=DEFAULT_HIDDEN,
    seq_len=DEFAULT_SEQ_LEN,
    lr=DEFAULT_LR,
    seed=0,
    sample_len=DEFAULT_SAMPLE_LEN,
    temperature=DEFAULT_TEMPERATURE,
    grad_check_entries=DEFAULT_GRAD_CHECK_ENTRIES,
    callback=None,
    jit=False,
):
    """Train on `text`, check the gradients in float64, and sample from the model.

    Parameters
    ----------
    text : str, optional
        Training text; the Zen of Python (:func:`zen_of_python`) by default.
    steps, hidden, seq_len, lr, seed : optional
        As for :func:`train`.
    sample_len : int, optional
        Characters to generate after the one-character prime.
    temperature : float, optional
        Sampling temperature.
    grad_check_entries : int, optional
        Parameter entries to check (:func:`check_gradients`).
    callback : callable, optional
        Progress callback, as for :func:`train`.
    jit : bool, optional
        Train and check the gradients with the compiled step (:func:`train`).

    Returns
    -------
    DemoResult

    Raises
    ------
    TextError
        If `text` has fewer than two distinct characters.
    ValueError
        If an option is out of range.

    Examples
    --------
    >>> from numba_ta.examples.char_rnn import run_demo
    >>> r = run_demo("abcd" * 5, steps=30, hidden=8, seq_len=5, sample_len=8)
    >>> r.grad_check.passed, len(r.sample)
    (True, 9)
    """
    text = zen_of_python() if text is None else text
    result = train(text, steps=steps, hidden=hidden, seq_len=seq_len, lr=lr, seed=seed, callback=callback, jit=jit)
    inputs, targets, h0 = grad_check_batch(text, result.vocab, seq_len, hidden, seed=seed)
    check = check_gradients(
        result.params,
        inputs,
        targets,
        h0,
        n_entries=grad_check_entries,
        seed=seed,
        loss_and_grads=loss_and_grads_compiled if jit else loss_and_grads,
    )
    text_sample = sample(
        result.params,
        result.vocab,
        sample_len,
        prime=text[0],
        temperature=temperature,
        seed=seed,
    )
    return DemoResult(result, check, text_sample)


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
    >>> from numba_ta.examples.char_rnn import init_params, step_times
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
