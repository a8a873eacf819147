"""Training: truncated BPTT with Adam over a text, the loss curve, and compiling the kernels beforehand."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from .defaults import DEFAULT_HIDDEN, DEFAULT_LR, DEFAULT_LR_DECAY_START, DEFAULT_SEQ_LEN, DEFAULT_STEPS
from .model import init_params, loss_and_grads, loss_and_grads_compiled
from .optim import Adam, clip_gradients, learning_rate
from .text import Vocab, validate_text

__all__ = ["smooth", "TrainResult", "train", "prepare_kernels"]


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
    >>> from numba_ta_demo import smooth
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
    >>> from numba_ta_demo import train
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
    >>> from numba_ta_demo import prepare_kernels
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
