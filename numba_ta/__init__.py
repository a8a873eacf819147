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

import importlib
import importlib.abc
import importlib.util
import sys
from importlib.metadata import PackageNotFoundError, distribution

# The modules of the flat layout of 0.1.0, by the modules that hold their names now.  Pickles
# name classes and functions by module (``numba_ta._registry.TensorArrayHandle``,
# ``numba_ta._tensor_list._rebuild`` ...), and so do Numba's caches of users' functions: the old
# names import the new modules.
_MOVED = {
    "_abi": "numba_ta.jit.abi",
    "_cache": "numba_ta.core.cache",
    "_config": "numba_ta.core.config",
    "_dtypes": "numba_ta.tf.dtypes",
    "_engine": "numba_ta.core.state",
    "_jit": "numba_ta.jit.extension",
    "_kernels": "numba_ta.core.kernels",
    "_list_grads": "numba_ta.tensor_list.grads",
    "_list_ops": "numba_ta.tensor_list.ops",
    "_messages": "numba_ta.tf.messages",
    "_opdefs": "numba_ta.tf.opdefs",
    "_precompile": "numba_ta.core.precompile",
    "_registry": "numba_ta.tensor_array.registry",
    "_shapes": "numba_ta.tf.tensor_shape",
    "_storage": "numba_ta.tensor_array.storage",
    "_tensor_list": "numba_ta.tensor_list.store",
    "_threads": "numba_ta.core.threads",
    "tf2_tensor_array": "numba_ta.tensor_list.tf2",
}


class _MovedModules(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Import ``numba_ta.<old name>`` (:data:`_MOVED`) as the module that holds its names now."""

    def find_spec(self, fullname, path=None, target=None):  # type: ignore[no-untyped-def]
        """Return a spec for a moved module's old name, else None (the other finders look)."""
        prefix, _, old = fullname.partition(".")
        if prefix == "numba_ta" and old in _MOVED:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):  # type: ignore[no-untyped-def]
        """Return the new module itself (its own name and spec are kept)."""
        return importlib.import_module(_MOVED[spec.name.partition(".")[2]])

    def exec_module(self, module):  # type: ignore[no-untyped-def]
        """Nothing to run: the new module is imported already."""


if not any(isinstance(f, _MovedModules) for f in sys.meta_path):
    sys.meta_path.append(_MovedModules())

from numba_ta import errors, gradients, raw_ops  # noqa: E402 - the finder first: a pickle may import an old name
from numba_ta.core.config import get_parallel_threshold, set_parallel_threshold  # noqa: E402
from numba_ta.core.threads import num_threads  # noqa: E402
from numba_ta.tensor_array.array import TensorArray  # noqa: E402
from numba_ta.tensor_list.store import VARIANT_ZERO, TensorListHandle  # noqa: E402
from numba_ta.tensor_list.tf2 import TF2TensorArray  # noqa: E402
from numba_ta.tf.tensor_shape import TensorShape  # noqa: E402


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
