"""Numba's disk cache for numba_ta's compiled functions, and the cache compiled when the package is built.

Numba caches a compiled function next to its source, in ``NUMBA_CACHE_DIR`` or in a
per-user directory, and the first process that uses a function pays for compiling it:
about half a minute for the engine's first ops.  ``pip install .`` therefore
compiles the engine's entries and kernels while it builds the package (``setup.py``
runs :mod:`numba_ta.core.precompile`) into the package's own ``_compiled/`` folder, and
every process loads them from there, whatever ``NUMBA_CACHE_DIR`` says and whether or
not the install is writable.

:class:`KernelCache` is the cache of every function decorated with
``numba_ta.kernels.kernel``: it looks in the shipped folder first, then where Numba
would look, and saves what it compiles where Numba would save it.  An entry of the
shipped folder is used only when it was compiled from the same numba_ta sources (a hash
of every source file of the package: :func:`source_stamp`), the same function bytecode,
the same Numba version and the same CPU (Numba's own index key); anything else is
compiled as usual.  When the shipped code was built for another Numba (or CPU) than the
one running, the first kernel that misses it says so, once per process: a
:class:`ShippedCodeMismatchWarning`, from the folder's :data:`MANIFEST` (written by
:mod:`numba_ta.core.precompile`), with the command that rebuilds it.  Compilation options
that change the code (``NUMBA_BOUNDSCHECK``, ``NUMBA_OPT``, ``NUMBA_DEBUGINFO``...) are
part of the stamp, so a debugging run does not load code built without them.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import warnings
from pathlib import Path

from numba.core import config

from numba_ta.core import numba_compat as _numba_compat

#: The folder of the cache built with the package (absent in a source checkout).
SHIPPED_DIR = Path(__file__).parent.parent / "_compiled"

#: Set while :mod:`numba_ta.core.precompile` builds the shipped cache: the folder to save into.
_BUILD_ENV = "NUMBA_TA_PRECOMPILE_INTO"

_stamp: str | None = None


def source_stamp() -> str:
    """Return the hash of numba_ta's sources and of Numba's code-changing options (the shipped cache's key).

    Returns
    -------
    str
        SHA-256 hex digest over every ``.py`` file of the package (sorted by path) and the
        values of ``NUMBA_OPT``, ``NUMBA_BOUNDSCHECK`` and ``NUMBA_DEBUGINFO`` as Numba
        read them (``numba.core.config``).
    """
    global _stamp
    if _stamp is None:
        h = hashlib.sha256()
        root = Path(__file__).parent.parent
        for path in sorted(root.rglob("*.py")):
            h.update(path.relative_to(root).as_posix().encode())
            h.update(path.read_bytes())
        for name in ("OPT", "BOUNDSCHECK", "DEBUGINFO_DEFAULT"):
            h.update(f"{name}={getattr(config, name, None)!r}".encode())
        _stamp = h.hexdigest()
    return _stamp


class ShippedCodeMismatchWarning(RuntimeWarning):
    """The compiled code shipped with the package was built for another Numba or CPU: it is compiled at first use."""


#: The file of the shipped folder that says what its code was built for (:func:`build_facts`).
MANIFEST = "manifest.json"


def build_facts(target_context=None) -> dict:
    """Return what the shipped code is tied to: the versions of Numba, llvmlite, numpy, Python, and the CPU.

    Parameters
    ----------
    target_context : numba.core.base.BaseContext, optional
        The target context whose CPU counts (Numba's CPU target's by default).

    Returns
    -------
    dict
        ``numba``, ``llvmlite``, ``numpy``, ``python`` (version strings) and ``cpu``: what
        Numba's cache keys an entry's CPU by (target triple, CPU name, CPU features).
    """
    import llvmlite
    import numba
    import numpy

    return {
        "numba": numba.__version__,
        "llvmlite": llvmlite.__version__,
        "numpy": numpy.__version__,
        "python": ".".join(map(str, sys.version_info[:3])),
        "cpu": list(_numba_compat.cpu_key(target_context)),
    }


def write_manifest(folder) -> None:
    """Write :data:`MANIFEST` into the shipped folder ``folder``: :func:`build_facts` and the source stamp.

    Parameters
    ----------
    folder : path-like
        The folder being built (:mod:`numba_ta.core.precompile` calls this last).
    """
    os.makedirs(folder, exist_ok=True)
    facts = dict(build_facts(), format=1, source_stamp=source_stamp())
    (Path(folder) / MANIFEST).write_text(json.dumps(facts, indent=1, sort_keys=True) + "\n")


def read_manifest(folder) -> dict | None:
    """Return the :data:`MANIFEST` of ``folder``, or None (no manifest: a build of an older numba_ta, or none).

    Parameters
    ----------
    folder : path-like
        A shipped folder.

    Returns
    -------
    dict or None
        What :func:`write_manifest` wrote.
    """
    try:
        facts = json.loads((Path(folder) / MANIFEST).read_text())
    except (OSError, ValueError):
        return None
    return facts if isinstance(facts, dict) else None


def _describe(facts, other):
    """``Numba 0.60.0 (llvmlite 0.43.0, numpy 2.0.2) on CPU skylake, x86_64-unknown-linux-gnu``."""
    cpu = list(facts.get("cpu") or ["?", "?", ""])
    cpu += [""] * (3 - len(cpu))
    where = f"CPU {cpu[1]}, {cpu[0]}"
    if list(other.get("cpu") or [])[:2] == cpu[:2] and list(other.get("cpu") or [])[2:] != cpu[2:]:
        where += f" (features {cpu[2] or 'none'})"
    return (
        f"Numba {facts.get('numba', '?')} (llvmlite {facts.get('llvmlite', '?')}, numpy {facts.get('numpy', '?')}) "
        f"on {where}"
    )


def shipped_mismatch(shipped, running, folder=None) -> str | None:
    """Return why code built with the facts ``shipped`` cannot load under ``running`` (:func:`build_facts`), or None.

    Numba's cache keys an entry by the Numba version and the CPU (triple, name, features);
    llvmlite goes with Numba.

    Parameters
    ----------
    shipped, running : dict
        The facts of the build (:func:`read_manifest`) and of this process.
    folder : path-like, optional
        The shipped folder, for the message (:data:`SHIPPED_DIR` by default).

    Returns
    -------
    str or None
        The warning's message, or None when they match.
    """
    keys = ("numba", "llvmlite", "cpu")
    if all(list(shipped.get(k) or []) == list(running.get(k) or []) if k == "cpu" else shipped.get(k) == running.get(k)
           for k in keys):  # fmt: skip
        return None
    return (
        f"numba_ta: the compiled code shipped in {folder or SHIPPED_DIR} was built for {_describe(shipped, running)}; "
        f"this process runs {_describe(running, shipped)}, so numba_ta cannot use it: its engine and kernels are "
        "compiled at their first use instead (about half a minute on 2 cores, once: Numba caches them on disk). "
        "To ship code for this Numba and CPU, reinstall numba_ta from its source folder with the Numba installed here: "
        "pip install --no-build-isolation --no-deps --force-reinstall .  (--no-build-isolation builds with this "
        "Numba, not the newest one; it needs setuptools and wheel installed)"
    )


_mismatch_checked = False


def _shipped_missed(folder, target_context):
    """Warn if the shipped folder was built for another Numba or CPU (a kernel missed it; once per process)."""
    global _mismatch_checked
    if _mismatch_checked:
        return
    _mismatch_checked = True
    shipped = read_manifest(folder)
    if shipped is None:
        return
    message = shipped_mismatch(shipped, build_facts(target_context), folder)
    if message is not None:
        warnings.warn(message, ShippedCodeMismatchWarning, stacklevel=2)


#: The lock file of the folder being built (:func:`_build_lock`; removed when the build ends).
BUILD_LOCK = ".lock"


@contextlib.contextmanager
def _build_lock(folder):
    """Hold the lock file of the folder being built (POSIX ``flock``; where there is none, nothing).

    Numba's index of a function is read, updated and written again by each save: two
    processes saving entries of one function at once would lose one of them.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: precompile runs one process there
        yield
        return
    with open(os.path.join(folder, BUILD_LOCK), "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f, fcntl.LOCK_UN)


class KernelCache(_numba_compat.FunctionCacheBase):
    """Numba's function cache, which first looks in the cache shipped with the package.

    The Numba side (what Numba's dispatcher calls, the index and data files) is
    :class:`numba_ta.core.numba_compat.FunctionCacheBase`; this class is the policy: the
    folder being built, else the shipped folder, else Numba's own cache.  The first kernel
    of a process that misses the shipped folder compares the folder's :data:`MANIFEST` with
    this process (:func:`shipped_mismatch`) and, if the build was for another Numba or CPU,
    emits one :class:`ShippedCodeMismatchWarning`.

    Parameters
    ----------
    py_func : function
        The Python function of a ``numba_ta.kernels.kernel`` dispatcher.
    writable : bool, optional
        Whether Numba found a cache directory it can write to (``False``: a read-only
        install without ``NUMBA_CACHE_DIR``; only the shipped folder is read).
    """

    def __init__(self, py_func, writable=True):
        super().__init__(py_func, writable, SHIPPED_DIR, source_stamp)
        self._shipped_at = None  # the folder self._shipped reads (None: none)
        self._shipped = None

    def _shipped_file(self):
        """Return ``(index, building)``: the index of the folder being built, else of the shipped one, else None."""
        build_dir = os.environ.get(_BUILD_ENV)
        target = build_dir or (str(SHIPPED_DIR) if SHIPPED_DIR.is_dir() else None)
        if target != self._shipped_at:
            self._shipped_at = target
            self._shipped = None
            if target is not None:
                self._shipped = self.index_file(target, source_stamp())
        return self._shipped, build_dir is not None

    def has_shipped(self):
        """Return whether there is a shipped folder (or one being built) to load from."""
        return self._shipped_file()[0] is not None

    def load_entry(self, sig, target_context):
        """Return the compiled code of ``sig``: from the folder being built, the shipped one or Numba's cache; or None.

        Parameters
        ----------
        sig : tuple of numba.types.Type
            The argument types.
        target_context : numba.core.base.BaseContext
            The target context.

        Returns
        -------
        numba.core.compiler.CompileResult or None
            The loaded code; None: compile it.
        """
        shipped, building = self._shipped_file()
        if shipped is not None:
            data = shipped.load(self.index_key(sig, target_context.codegen()))
            if data is not None:
                return self.rebuild(target_context, data)
            if not building:
                _shipped_missed(self._shipped_at, target_context)
        if building:
            return None
        return self.load_from_numba(sig, target_context)

    def save_entry(self, sig, data):
        """Save the compiled code ``data`` of ``sig``: into the folder being built, else into Numba's cache.

        Parameters
        ----------
        sig : tuple of numba.types.Type
            The argument types.
        data : numba.core.compiler.CompileResult
            The compiled code.
        """
        shipped, building = self._shipped_file()
        if building:
            if self.cachable(data):
                os.makedirs(self._shipped_at, exist_ok=True)
                with _build_lock(self._shipped_at):  # the build's processes (precompile --jobs) update one index
                    shipped.save(self.index_key(sig, data.codegen), self.reduce(data))
        else:
            self.save_to_numba(sig, data)
