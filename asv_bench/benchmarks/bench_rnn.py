"""One BPTT training step (loss and gradients) of the demo's character RNN.

``numba_ta``: :func:`numba_ta_demo.loss_and_grads` (hidden states
in a TensorArray, TF's TensorArray gradient rules by hand); ``tf_function`` /
``tf_eager``: the same RNN with a ``tf.TensorArray`` and ``tf.GradientTape``
(:func:`workloads.tf_bptt_step`); ``numpy_prealloc`` / ``numpy_list``:
the same arithmetic in plain numpy (:func:`workloads.numpy_bptt`).
The demo's sizes: 25 steps, 64 hidden units, float32, the Zen of Python's
vocabulary.
"""

from . import workloads
from .common import IMPLS_BULK


class BPTTStep:
    params = [IMPLS_BULK]
    param_names = ["impl"]
    timeout = 300

    def setup(self, impl):
        self.case = workloads.make_case("bptt", impl, 1, 1, "float32")
        self.state = self.case.prepare()
        self.case.run(self.state)  # warm-up: cache load, tf.function tracing

    def time_bptt_step(self, impl):
        self.case.run(self.state)


class BPTTStepCompiled:
    """The same step with its time loops in ``@numba.njit`` code (``loss_and_grads_compiled``, ``demo --jit``)."""

    timeout = 300

    def setup(self):
        self.case = workloads.make_case("bptt_jit", "numba_ta", 1, 1, "float32")
        self.state = self.case.prepare()
        self.case.run(self.state)  # warm-up: compilation or cache load

    def time_bptt_step_compiled(self):
        self.case.run(self.state)
