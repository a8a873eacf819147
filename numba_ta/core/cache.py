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
compiled as usual.  Compilation options that change the code (``NUMBA_BOUNDSCHECK``,
``NUMBA_OPT``, ``NUMBA_DEBUGINFO``...) are part of the stamp, so a debugging run does not
load code built without them.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

from numba.core import config
from numba.core.caching import CompileResultCacheImpl, FunctionCache, IndexDataCacheFile, _CacheLocator

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


class _ShippedLocator(_CacheLocator):
    """Numba cache locator of the shipped folder: a fixed path, stamped by :func:`source_stamp`."""

    def __init__(self, py_func, path):
        self._py_func = py_func
        self._lineno = py_func.__code__.co_firstlineno
        self._path = str(path)

    def ensure_cache_path(self):
        os.makedirs(self._path, exist_ok=True)

    def get_cache_path(self):
        return self._path

    def get_source_stamp(self):
        return source_stamp()

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):  # pragma: no cover - never in Numba's own locator list
        return None


class KernelCache(FunctionCache):
    """Numba's function cache, which first looks in the cache shipped with the package.

    Parameters
    ----------
    py_func : function
        The Python function of a ``numba_ta.kernels.kernel`` dispatcher.
    writable : bool, optional
        Whether Numba found a cache directory it can write to (``False``: a read-only
        install without ``NUMBA_CACHE_DIR``; only the shipped folder is read).
    """

    def __init__(self, py_func, writable=True):
        self.writable = writable
        if writable:
            super().__init__(py_func)
        else:  # Numba's locators all refused: the shipped folder's locator stands in, read-only
            self._name = repr(py_func)
            self._py_func = py_func
            self._impl = _ReadOnlyImpl(py_func)
            self._cache_path = self._impl.locator.get_cache_path()
            self._cache_file = None
            self.enable()
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
                self._shipped = IndexDataCacheFile(
                    cache_path=target, filename_base=self._impl.filename_base, source_stamp=source_stamp()
                )
        return self._shipped, build_dir is not None

    def has_shipped(self):
        """Return whether there is a shipped folder (or one being built) to load from."""
        return self._shipped_file()[0] is not None

    def flush(self):
        """Empty the writable cache's index (Numba's ``Dispatcher`` API); the shipped folder is kept."""
        if self._cache_file is not None:
            self._cache_file.flush()

    def _load_overload(self, sig, target_context):
        if not self._enabled:
            return None
        shipped, building = self._shipped_file()
        if shipped is not None:
            data = shipped.load(self._index_key(sig, target_context.codegen()))
            if data is not None:
                return self._impl.rebuild(target_context, data)
        if self._cache_file is None or building:
            return None
        return super()._load_overload(sig, target_context)

    def _save_overload(self, sig, data):
        if not self._enabled:
            return
        shipped, building = self._shipped_file()
        if building:
            if self._impl.check_cachable(data):
                os.makedirs(self._shipped_at, exist_ok=True)
                shipped.save(self._index_key(sig, data.codegen), self._impl.reduce(data))
        elif self._cache_file is not None:
            super()._save_overload(sig, data)


class _ReadOnlyImpl(CompileResultCacheImpl):
    """Numba's cache implementation with the shipped folder's locator (a read-only install)."""

    def __init__(self, py_func):
        self._lineno = py_func.__code__.co_firstlineno
        self._locator = _ShippedLocator(py_func, SHIPPED_DIR)
        modname = os.path.splitext(os.path.basename(py_func.__code__.co_filename))[0]
        self._filename_base = self.get_filename_base(f"{modname}.{py_func.__qualname__}", getattr(sys, "abiflags", ""))
