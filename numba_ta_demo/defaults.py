"""Default options of the demo's training, gradient check and sample.

They are the defaults of :func:`~numba_ta_demo.train`, :func:`~numba_ta_demo.run_demo`,
:func:`~numba_ta_demo.learning_rate`, :func:`~numba_ta_demo.check_gradients` and of the
options of ``numba-ta demo``.
"""

__all__ = [
    "DEFAULT_STEPS",
    "DEFAULT_HIDDEN",
    "DEFAULT_SEQ_LEN",
    "DEFAULT_LR",
    "DEFAULT_LR_DECAY_START",
    "DEFAULT_SAMPLE_LEN",
    "DEFAULT_TEMPERATURE",
    "DEFAULT_GRAD_CHECK_ENTRIES",
]


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
