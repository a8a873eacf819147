"""The optimizer: Adam, global gradient-norm clipping, and the learning-rate schedule."""

from __future__ import annotations

import math

import numpy as np

from .defaults import DEFAULT_LR, DEFAULT_LR_DECAY_START

__all__ = ["clip_gradients", "learning_rate", "Adam"]


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
    >>> from numba_ta_demo import clip_gradients
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
    >>> from numba_ta_demo import learning_rate
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
    >>> from numba_ta_demo import Adam
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
