"""numba_ta: TensorFlow's TensorArray V3 ops and gradient arrays on numpy and Numba, without TensorFlow.

The public names:

raw_ops
    The eleven TensorArray V3 ops with ``tf.raw_ops``' signatures.
TensorArray
    The ``tf.TensorArray`` class with graph-mode (TF1) semantics.
TF2TensorArray
    The ``tf.TensorArray`` class as TensorFlow 2 runs it inside ``tf.function``
    (on the TensorList ops).
gradients
    TF's gradient rules of the TensorArray ops, for hand-written backward passes.
errors
    TF-named error classes.
TensorListHandle, VARIANT_ZERO
    A TensorList value (made by the TensorList ops of ``raw_ops``), and
    TensorFlow's variant zero (an unset element of a list of lists).
TensorShape
    A partial shape, as ``tf.TensorShape``.
num_threads, get_parallel_threshold, set_parallel_threshold
    Threads of the parallel kernels, and from how many items they are used.
"""

from importlib.metadata import PackageNotFoundError, distribution

from numba_ta import errors, gradients, raw_ops
from numba_ta.core.config import get_parallel_threshold, set_parallel_threshold
from numba_ta.core.threads import num_threads
from numba_ta.tensor_array.array import TensorArray
from numba_ta.tensor_list.store import VARIANT_ZERO, TensorListHandle
from numba_ta.tensor_list.tf2 import TF2TensorArray
from numba_ta.tf.tensor_shape import TensorShape


def _metadata() -> tuple[str, bool]:
    """Return the installed version, and whether Numba's entry point of the extension is registered."""
    try:
        dist = distribution("numba_ta")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "0.0.0+unknown", False
    eps = dist.entry_points.select(group="numba_extensions", name="init")
    return dist.version, any(ep.value == "numba_ta.jit.extension:init" for ep in eps)


__version__, _registered = _metadata()
if not _registered:  # pragma: no cover - not installed: Numba does not know the extension, register it now
    from numba_ta.jit import extension as _jit

    _jit.init()

__all__ = [
    "VARIANT_ZERO",
    "TF2TensorArray",
    "TensorArray",
    "TensorListHandle",
    "TensorShape",
    "errors",
    "get_parallel_threshold",
    "gradients",
    "num_threads",
    "raw_ops",
    "set_parallel_threshold",
    "__version__",
]
