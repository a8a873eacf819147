"""The gradient check: BPTT gradients against fourth-order central finite differences, in float64."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from .defaults import DEFAULT_GRAD_CHECK_ENTRIES
from .model import PARAM_NAMES, _check_batch, loss, loss_and_grads

__all__ = [
    "GRAD_CHECK_STEP",
    "GRAD_CHECK_RTOL",
    "finite_difference_atol",
    "GradCheckEntry",
    "GradCheckResult",
    "check_gradients",
    "grad_check_batch",
]


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
    >>> from numba_ta_demo import finite_difference_atol
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
    >>> from numba_ta_demo import init_params, check_gradients
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
