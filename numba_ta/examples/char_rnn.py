"""Alias of :mod:`numba_ta_demo`, the character-level RNN of ``numba-ta demo``.

The demo is an application of numba_ta and lives in its own top-level package,
:mod:`numba_ta_demo`, shipped in the same distribution.  This module only
re-exports its names, so that code importing ``numba_ta.examples.char_rnn``
keeps working; the objects are the same (``char_rnn.train is
numba_ta_demo.train``).  New code imports :mod:`numba_ta_demo`.

Examples
--------
>>> import numba_ta_demo
>>> from numba_ta.examples import char_rnn
>>> char_rnn.train is numba_ta_demo.train
True
"""

from numba_ta_demo import (  # the names not in __all__ below are importable by name, as before
    DEFAULT_GRAD_CHECK_ENTRIES,  # noqa: F401
    DEFAULT_HIDDEN,  # noqa: F401
    DEFAULT_LR,  # noqa: F401
    DEFAULT_LR_DECAY_START,  # noqa: F401
    DEFAULT_SAMPLE_LEN,  # noqa: F401
    DEFAULT_SEQ_LEN,  # noqa: F401
    DEFAULT_STEPS,  # noqa: F401
    DEFAULT_TEMPERATURE,  # noqa: F401
    GRAD_CHECK_RTOL,
    GRAD_CHECK_STEP,
    GRAD_SOURCE,  # noqa: F401
    PARAM_NAMES,
    Adam,
    DemoResult,
    GradCheckEntry,
    GradCheckResult,
    LossAndGrads,
    TextError,
    TrainResult,
    Vocab,
    check_gradients,
    clip_gradients,
    finite_difference_atol,
    forward,
    grad_check_batch,
    init_params,
    learning_rate,
    load_text,
    loss,
    loss_and_grads,
    loss_and_grads_compiled,
    prepare_kernels,  # noqa: F401
    run_demo,
    sample,
    smooth,
    step_times,
    train,
    validate_text,
    zen_of_python,
)

# the names of ``from numba_ta.examples.char_rnn import *``, as before the move
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
