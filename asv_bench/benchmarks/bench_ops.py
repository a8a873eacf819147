"""Every TensorArray op, with its baselines: time_ for all, peakmem_ for the bulk ops.

Loop benchmarks (Write, Read, AccumulateWrite) make ``n`` one-element calls
per timed call: divide by ``n`` for the cost per element.  Write-once ops
(Write, Scatter, Unstack, Split) write into a fresh empty array made by setup.
Accumulate and AccumulateWrite add into a gradient array whose slots already
hold data (``TensorArrayGradV3``'s aggregating writes); GradCreate times
``TensorArrayGradV3`` on a freshly written forward array.
"""

from .common import IMPLS_LOOP, IMPLS_MEM, TF_LOOP, OpBenchmark

# --------------------------------------------------------------------------- element loops


class _Loop(OpBenchmark):
    """The element loops, and GradCreate: ``raw_ops`` as well, TensorFlow on ``TF_LOOP``'s size by default."""

    params = [IMPLS_LOOP] + OpBenchmark.params[1:]
    tf_default = TF_LOOP


class Write(_Loop):
    op = "write"

    def time_write(self, impl, element, n, dtype):
        self.call()


class Read(_Loop):
    op = "read"

    def time_read(self, impl, element, n, dtype):
        self.call()


class AccumulateWrite(_Loop):
    op = "accumulate_write"

    def time_accumulate_write(self, impl, element, n, dtype):
        self.call()


class GradCreate(_Loop):
    op = "grad"

    def time_grad_v3(self, impl, element, n, dtype):
        self.call()


# --------------------------------------------------------------------------- bulk ops


class Gather(OpBenchmark):
    op = "gather"

    def time_gather(self, impl, element, n, dtype):
        self.call()


class Scatter(OpBenchmark):
    op = "scatter"

    def time_scatter(self, impl, element, n, dtype):
        self.call()


class Stack(OpBenchmark):
    op = "stack"

    def time_stack(self, impl, element, n, dtype):
        self.call()


class Unstack(OpBenchmark):
    op = "unstack"

    def time_unstack(self, impl, element, n, dtype):
        self.call()


class Concat(OpBenchmark):
    op = "concat"

    def time_concat(self, impl, element, n, dtype):
        self.call()


class Split(OpBenchmark):
    op = "split"

    def time_split(self, impl, element, n, dtype):
        self.call()


class Accumulate(OpBenchmark):
    op = "accumulate"

    def time_accumulate(self, impl, element, n, dtype):
        self.call()


# --------------------------------------------------------------------------- peak memory of the bulk ops
# Peak RSS of the whole benchmark process (numba, the inputs and the array built in setup included):
# compare across parameters and commits, not as absolute numbers.


class _Mem(OpBenchmark):
    params = [IMPLS_MEM] + OpBenchmark.params[1:]


class GatherMem(_Mem):
    op = "gather"

    def peakmem_gather(self, impl, element, n, dtype):
        self.call()


class ScatterMem(_Mem):
    op = "scatter"

    def peakmem_scatter(self, impl, element, n, dtype):
        self.call()


class StackMem(_Mem):
    op = "stack"

    def peakmem_stack(self, impl, element, n, dtype):
        self.call()


class UnstackMem(_Mem):
    op = "unstack"

    def peakmem_unstack(self, impl, element, n, dtype):
        self.call()


class ConcatMem(_Mem):
    op = "concat"

    def peakmem_concat(self, impl, element, n, dtype):
        self.call()


class SplitMem(_Mem):
    op = "split"

    def peakmem_split(self, impl, element, n, dtype):
        self.call()


class AccumulateMem(_Mem):
    op = "accumulate"

    def peakmem_accumulate(self, impl, element, n, dtype):
        self.call()
