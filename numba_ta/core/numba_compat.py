"""Every private part of Numba that numba_ta uses, in one place, with the Numba versions it was tested on.

numba_ta is a Numba extension, and a few things it does have no public API in Numba: its
own disk cache of compiled code (a subclass of Numba's ``FunctionCache``), signals held
while a dispatcher compiles, code run before a cached user function loads, a struct's
payload in generated code, a struct's meminfo in Python.  Each of them goes through one
function or class of this module, whose docstring says what it relies on, the Numba
versions it was tested on and what it does on each.  No other module of numba_ta uses a
private Numba name (``tests/test_numba_compat.py`` reads the sources and fails otherwise).

The supported range
-------------------
:data:`SUPPORTED` (``numba>=0.59,<0.69``, as ``pyproject.toml`` declares), tested on the
versions :data:`TESTED` names, each with the fast test suite (CI runs every test on the
newest, and the tests of compiled code on the oldest, in a virtualenv of its own). Numba
0.59 is the floor because it is the oldest that works: it needed ``np.log2`` for
``math.log2`` in one kernel and the reload hooks below, nothing more; older Numbas were not
tried. Importing this module (the first import of numba_ta does) checks the installed
version once: outside the range it emits one :class:`UnsupportedNumbaWarning`, and then
checks that every private name below exists; a missing one raises
:class:`UnsupportedNumbaError` naming what is missing, the Numba found and the supported
range (never an ``AttributeError`` deep inside an op).

What counts as public
---------------------
The names documented in Numba's user and extension documentation:

* ``numba`` itself (``njit``, ``objmode``, ``prange``, ``literal_unroll``,
  ``get_num_threads``, ``threading_layer``, ``typeof`` ...), ``numba.types`` /
  ``numba.core.types`` (the type classes), ``numba.typed``;
* ``numba.extending`` / ``numba.core.extending`` (``overload``, ``intrinsic``,
  ``register_jitable``, ``box``, ``unbox``, ``NativeValue``, ``typeof_impl`` ...: the
  extension API of the documentation's "Extending Numba" pages) and ``numba.core.cgutils``,
  which those pages' examples use; the struct proxies' ``_getvalue()`` of ``cgutils``
  (:data:`PUBLIC_UNDERSCORE_NAMES`) is in those examples too (the ``Interval`` example's
  boxing returns ``interval._getvalue()``), so it counts as public despite its underscore;
* ``numba.experimental.structref``'s documented parts: ``register``, ``define_proxy``, ``define_constructor``,
  ``StructRefProxy`` (subclassed, never looked into) and ``types.StructRef`` with its
  ``field_dict``;
* ``numba.np.numpy_support.as_dtype`` and ``from_dtype`` (the documentation's way between
  numpy dtypes and Numba types);
* ``numba.core.errors`` (``TypingError``: the documentation's troubleshooting and
  deprecation pages import the error and warning classes from there) and
  ``numba.core.config``, which is ``numba.config``: only the documented settings
  (``DISABLE_JIT``, ``BOUNDSCHECK``, ``OPT``, ``DEBUGINFO_DEFAULT``: environment variables
  of the documentation's "Environment variables" page, read as ``numba.config.NAME``);
* ``llvmlite`` (``llvmlite.ir``, ``llvmlite.binding``: llvmlite's own documented API).

Every other module of Numba, and every name with a leading underscore (but
:data:`PUBLIC_UNDERSCORE_NAMES`), is private: it is used here, and only here.
:data:`PUBLIC_MODULES` lists the modules counted as public (the layout test reads it).
"""

from __future__ import annotations

import importlib
import operator
import os
import pickle
import re
import sys
import warnings
from typing import Any

import numba
from llvmlite import binding as _llvm
from numba.experimental import structref as _structref

# --------------------------------------------------------------------------- the version
#: The Numba versions numba_ta supports: ``(lowest, first not supported)``, as ``pyproject.toml`` says.
SUPPORTED = ((0, 59), (0, 69))
#: The pip requirement of :data:`SUPPORTED`.
REQUIREMENT = "numba>=0.59,<0.69"
#: The Numba versions the fast test suite passed on (with the numpy beside each); on 0.60.0 (numpy 2.0.2)
#: the tests of compiled code passed too (tests/test_jit.py, test_jit_abi.py, test_numba_compat.py).
TESTED = ("0.59.1 (numpy 1.26.4)", "0.68.1 (numpy 2.4)")

#: The modules of Numba counted as public (see the module docstring); the others are private.
PUBLIC_MODULES = frozenset(
    {
        "numba",
        "numba.types",
        "numba.core.types",
        "numba.typed",
        "numba.extending",
        "numba.core.extending",
        "numba.core.cgutils",
        "numba.core.errors",
        "numba.core.config",
        "numba.config",
        "numba.experimental",
        "numba.experimental.structref",
        "numba.np.numpy_support",
        "numba.core",  # the package, for ``from numba.core import cgutils, config, errors, types``
        "llvmlite",
        "llvmlite.ir",
        "llvmlite.binding",
    }
)
#: The names of public modules that are documented despite their leading underscore (see the module docstring).
PUBLIC_UNDERSCORE_NAMES = frozenset({"_getvalue"})


def _version(text: str) -> tuple[int, int]:
    """Return ``(major, minor)`` of a version string (``"0.68.1"``, ``"0.69.0rc1"``, ``"0.60.0+3.gabc"``)."""
    m = re.match(r"(\d+)\.(\d+)", text)
    return (int(m.group(1)), int(m.group(2))) if m else (0, 0)


#: The installed Numba's version string, and its ``(major, minor)``.
NUMBA_VERSION = numba.__version__
VERSION = _version(NUMBA_VERSION)


class UnsupportedNumbaWarning(RuntimeWarning):
    """The installed Numba is outside the range numba_ta supports (:data:`SUPPORTED`): it may fail."""


class UnsupportedNumbaError(RuntimeError):
    """A private part of Numba that numba_ta needs is missing from the installed Numba."""


def _range_text() -> str:
    return f"{REQUIREMENT} (tested on {', '.join(TESTED)})"


def missing(what: str) -> UnsupportedNumbaError:
    """Return the error that says the installed Numba lacks ``what``, which numba_ta needs.

    Parameters
    ----------
    what : str
        The missing name (``"numba.core.caching.FunctionCache"``).

    Returns
    -------
    UnsupportedNumbaError
        Naming ``what``, the Numba found and the supported range.
    """
    return UnsupportedNumbaError(
        f"numba_ta needs {what}, which Numba {NUMBA_VERSION} does not have: numba_ta supports {_range_text()}; "
        f"install a supported Numba (pip install '{REQUIREMENT}')"
    )


def check_version() -> bool:
    """Warn once if the installed Numba is outside :data:`SUPPORTED`; return whether it is inside.

    Called once, when this module is imported.

    Returns
    -------
    bool
        Whether ``numba.__version__`` is in the supported range.
    """
    low, high = SUPPORTED
    if low <= VERSION < high:
        return True
    warnings.warn(
        f"numba_ta supports {_range_text()}, not Numba {NUMBA_VERSION}: it may fail (install a supported "
        f"Numba: pip install '{REQUIREMENT}')",
        UnsupportedNumbaWarning,
        stacklevel=2,
    )
    return False


IN_RANGE = check_version()


def _resolve(module: str, name: str) -> Any:
    """Return ``module.name``, or raise :class:`UnsupportedNumbaError` naming it."""
    try:
        return getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError) as e:
        raise missing(f"{module}.{name}") from e


def _require(ok: bool, what: str) -> None:
    if not ok:
        raise missing(what)


# --------------------------------------------------------------------------- compile-time helpers
#: ``numba.core.compiler_lock.global_compiler_lock``: Numba's compiler lock (a reentrant lock).
#: Tested on 0.59.1, 0.60.0, 0.68.1: the same object on each (``with global_compiler_lock:``).
global_compiler_lock = _resolve("numba.core.compiler_lock", "global_compiler_lock")

#: ``numba.cpython.unsafe.tuple.tuple_setitem(tup, i, v)``: a tuple with item ``i`` replaced (compiled code).
#: Tested on 0.59.1, 0.60.0, 0.68.1: the same intrinsic on each.
tuple_setitem = _resolve("numba.cpython.unsafe.tuple", "tuple_setitem")

#: ``numba.np.unsafe.ndarray.to_fixed_tuple(array, n)``: the first ``n`` items as a tuple (compiled code).
#: Tested on 0.59.1, 0.60.0, 0.68.1: the same intrinsic on each.
to_fixed_tuple = _resolve("numba.np.unsafe.ndarray", "to_fixed_tuple")

_require(hasattr(_structref, "_Utils"), "numba.experimental.structref._Utils")
_require(callable(getattr(_structref.StructRefProxy, "_numba_box_", None)), "StructRefProxy._numba_box_")
_require("_meminfo" in getattr(_structref.StructRefProxy, "__slots__", ()), "StructRefProxy._meminfo")


def struct_data(context: Any, builder: Any, typ: Any, value: Any) -> Any:
    """Return the payload of the struct ``value`` of the ``StructRef`` type ``typ`` in generated code.

    ``numba.experimental.structref._Utils(context, builder, typ).get_data_struct(value)``:
    a struct proxy of the fields (``getattr(data, name)`` is a field's value, borrowed).
    Tested on 0.59.1, 0.60.0, 0.68.1: the same class on each.

    Parameters
    ----------
    context, builder : numba.core.base.BaseContext, llvmlite.ir.IRBuilder
        The intrinsic's code generation arguments.
    typ : numba.types.StructRef
        The struct's type.
    value : llvmlite.ir.Value
        The struct.

    Returns
    -------
    numba.core.cgutils.Structure
        The payload's fields.
    """
    return _structref._Utils(context, builder, typ).get_data_struct(value)


def box_struct(proxy_class: Any, typ: Any, meminfo: Any) -> Any:
    """Return a new ``proxy_class`` (a ``StructRefProxy`` subclass) over ``meminfo``, a struct of type ``typ``.

    ``proxy_class._numba_box_(typ, meminfo)``: what Numba's boxing of a struct calls.
    Tested on 0.59.1, 0.60.0, 0.68.1: the same class method on each.

    Parameters
    ----------
    proxy_class : type
        The struct's proxy class.
    typ : numba.types.StructRef
        The struct's type.
    meminfo : numba.core.runtime.nrt.MemInfo
        The struct's meminfo (a new reference moves into the proxy).

    Returns
    -------
    StructRefProxy
        The proxy.
    """
    return proxy_class._numba_box_(typ, meminfo)


#: ``meminfo_of(proxy)``: the meminfo of a ``StructRefProxy`` (its ``_meminfo`` slot; ``.data``: the struct's
#: address).  An ``operator.attrgetter``: a C call, no Python frame (it is on the path of every compiled call
#: that takes an array: about 50 ns more than the attribute itself).  Tested on 0.59.1, 0.60.0, 0.68.1: the
#: same slot on each (checked at import).
meminfo_of = operator.attrgetter("_meminfo")


def set_numba_type(cls: type, getter: property) -> None:
    """Give ``cls`` Numba's ``_numba_type_`` attribute: its instances' Numba type, read by the dispatcher in C.

    Numba's dispatcher types an argument with a ``_numba_type_`` attribute without leaving
    C (``typeof_pyval`` and ``typeof_impl`` are not called).  Tested on 0.59.1, 0.60.0,
    0.68.1: read the same way on each; a Numba without it would fall back to
    ``typeof_impl`` (the same type, slower).  Numba reads it with ``PyObject_HasAttr``
    first, which clears whatever the attribute raises (then asks ``typeof_pyval``): an
    exception raised in a Python getter, a ``KeyboardInterrupt`` of a signal included, is
    lost there.  A getter that runs no Python code (``operator.attrgetter``) cannot lose one.

    Parameters
    ----------
    cls : type
        The class.
    getter : property
        The attribute (a property returning the Numba type).
    """
    cls._numba_type_ = getter  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- cached user functions: reload hooks
def _library_has_reload_init() -> bool:
    code_library = _resolve("numba.core.codegen", "CodeLibrary")
    return "_reload_init" in code_library.__init__.__code__.co_names


#: Whether Numba's code libraries carry ``_reload_init`` (the set of callables that a cached function's
#: ``CompileResult._rebuild`` runs before loading its object code).  Numba 0.68.1 has it; 0.59.1 and 0.60.0
#: (and 0.62.1) do not, and keep ``reload_init`` only in the compiler's state, which generated code cannot reach.
LIBRARY_RELOAD_INIT = _library_has_reload_init()
#: Whether a reload hook must run when it is unpickled (the Numbas without :data:`LIBRARY_RELOAD_INIT`).
RUN_HOOKS_WHEN_UNPICKLED = not LIBRARY_RELOAD_INIT

#: Whether Numba wraps an exception that is not a Numba error, raised while it types an overload, into
#: its ``TypingError`` report (``NUMBA_CAPTURED_ERRORS=old_style``, the default of Numba 0.59 to 0.6x,
#: which also warns ``NumbaPendingDeprecationWarning`` for it) instead of passing it through unchanged
#: (``new_style``: the only behaviour of 0.68, which has no such setting).  Tested on 0.59.1 and 0.68.1.
WRAPS_FOREIGN_TYPING_ERRORS = getattr(numba.config, "CAPTURED_ERRORS", "new_style") == "old_style"


def add_reload_hook(context: Any, hook: Any) -> None:
    """Have ``hook()`` run before a cached function compiled with ``context`` is loaded in a new process.

    A user's function cached with ``cache=True`` declares the engine's symbols
    (:mod:`numba_ta.jit.abi`): they must exist before its object code loads.

    * Numba 0.68.1 (:data:`LIBRARY_RELOAD_INIT`): ``hook`` joins the library's
      ``_reload_init``, which Numba merges into the libraries linking it, pickles with the
      cached function and calls in ``CompileResult._rebuild`` before loading the code.
    * Numba 0.59.1 and 0.60.0: ``hook`` joins the constants of the function's environment
      (``context.environment.consts``).  Numba pickles the environment of the function and
      of every function linked into it (``CompileResult._find_referenced_environments``)
      with a cached function, and unpickles them, hence ``hook``, before loading its code:
      ``hook`` must run when it is unpickled (:data:`RUN_HOOKS_WHEN_UNPICKLED`), which
      :mod:`numba_ta.jit.abi`'s hooks do.  An extra constant changes nothing in the code
      (constants are looked up by the index the code was compiled with).

    Called at code generation only.

    Parameters
    ----------
    context : numba.core.base.BaseContext
        The target context of the code being generated (an intrinsic's or a boxing's).
    hook : callable
        Picklable; idempotent.

    Raises
    ------
    UnsupportedNumbaError
        If neither place exists.
    """
    if LIBRARY_RELOAD_INIT:
        context.active_code_library._reload_init.add(hook)
        return
    env = getattr(context, "environment", None)
    consts = getattr(env, "consts", None)
    if not isinstance(consts, list):
        raise missing("a code library's _reload_init or the lowering context's environment")
    if not any(c is hook for c in consts):
        consts.append(hook)


# --------------------------------------------------------------------------- dispatchers
_dispatcher = _resolve("numba.core.dispatcher", "Dispatcher")
_require(callable(getattr(_dispatcher, "_compile_for_args", None)), "Dispatcher._compile_for_args")
_require("_cache" in _dispatcher.enable_caching.__code__.co_names, "Dispatcher._cache")


def is_dispatcher(obj: Any) -> bool:
    """Return whether ``obj`` is a Numba dispatcher with a disk cache slot (``NUMBA_DISABLE_JIT=1``: a function).

    Parameters
    ----------
    obj : object
        What ``numba.njit`` returned.

    Returns
    -------
    bool
        Whether ``obj`` has ``_cache`` (a dispatcher). Tested on 0.59.1, 0.60.0, 0.68.1.
    """
    return hasattr(obj, "_cache")


def set_cache(dispatcher: Any, cache: Any) -> None:
    """Make ``cache`` (a :class:`FunctionCacheBase`) the disk cache of ``dispatcher``.

    ``dispatcher._cache = cache``: where ``Dispatcher.enable_caching`` puts its
    ``FunctionCache``.  Tested on 0.59.1, 0.60.0, 0.68.1: the same attribute on each.

    Parameters
    ----------
    dispatcher : numba.core.dispatcher.Dispatcher
        A dispatcher made with ``cache=True`` (or without: the cache replaces its ``NullCache``).
    cache : FunctionCacheBase
        The cache.
    """
    dispatcher._cache = cache


def get_cache(dispatcher: Any) -> Any:
    """Return the disk cache of ``dispatcher`` (``dispatcher._cache``; tested on 0.59.1, 0.60.0, 0.68.1).

    Parameters
    ----------
    dispatcher : numba.core.dispatcher.Dispatcher
        A dispatcher.

    Returns
    -------
    numba.core.caching.Cache
        Its cache (a ``NullCache`` when it has none).
    """
    return dispatcher._cache


def get_loader(dispatcher: Any) -> Any:
    """Return the method by which ``dispatcher`` compiles (or loads) a new signature, or None (no dispatcher).

    ``dispatcher._compile_for_args``: the dispatcher's C code calls it, looked up on the
    instance, when no compiled specialisation matches the arguments (not at other calls).
    Tested on 0.59.1, 0.60.0, 0.68.1: the same method, looked up the same way, on each.

    Parameters
    ----------
    dispatcher : object
        A dispatcher (or the plain function of ``NUMBA_DISABLE_JIT=1``).

    Returns
    -------
    callable or None
        ``loader(*args, **kws)``.
    """
    return getattr(dispatcher, "_compile_for_args", None)


def set_loader(dispatcher: Any, loader: Any) -> None:
    """Make ``loader`` (wrapping :func:`get_loader`'s) what ``dispatcher`` calls to compile a new signature.

    Parameters
    ----------
    dispatcher : numba.core.dispatcher.Dispatcher
        The dispatcher.
    loader : callable
        Called as the original with the call's arguments; returns its result.
    """
    dispatcher._compile_for_args = loader


_OmittedArg: Any = _resolve("numba.core.dispatcher", "OmittedArg")
_ForceLiteralArg: Any = _resolve("numba.core.errors", "ForceLiteralArg")


def compile_for_args(dispatcher: Any, fallback: Any, args: tuple, kws: dict) -> Any:
    """Load (or compile) ``dispatcher``'s specialisation for ``args``; return its entry point.

    What ``dispatcher._compile_for_args`` (``fallback``, :func:`get_loader`'s) does for
    positional arguments, without its first step, ``_compilation_chain_init_hook``: that is
    ``numba.core.entrypoints.init_all``, which scans every installed distribution's entry
    points and imports each ``numba_extensions`` one (about 90 ms in a fresh process on the
    2-core machine), the first time anything in the process is compiled or loaded through a
    dispatcher.  numba_ta's kernels and engine need no extension: users' ``@njit`` code still
    runs the hook at its own first compile.  The arguments are typed as the original types
    them (``dispatcher.typeof_pyval``, which also holds the types for the call, in
    ``_types_active_call``, cleared afterwards as the original does), and
    ``Dispatcher.compile`` loads that signature from the cache, else compiles it, and returns
    the entry point the dispatcher's C code then calls, as the original returns it.
    Keyword arguments and omitted defaults (``OmittedArg``: numba_ta passes neither), and a
    compile that asks for literal arguments (``ForceLiteralArg``), go to ``fallback``.  Read
    in the sources of 0.59.1, 0.60.0 and 0.68.1: the same methods and attribute, and
    ``_compile_for_args`` runs the hook, types with ``typeof_pyval`` and calls ``compile`` on
    each.

    Parameters
    ----------
    dispatcher : numba.core.dispatcher.Dispatcher
        The kernel's dispatcher.
    fallback : callable
        Its own ``_compile_for_args``.
    args : tuple
        The call's positional arguments.
    kws : dict
        Its keyword arguments.

    Returns
    -------
    callable
        The compiled specialisation's entry point.
    """
    if kws or any(isinstance(a, _OmittedArg) for a in args):
        return fallback(*args, **kws)
    try:
        return dispatcher.compile(tuple(dispatcher.typeof_pyval(a) for a in args))
    except _ForceLiteralArg:  # a compile that asks for literal arguments: the original's retry
        return fallback(*args)
    finally:
        dispatcher._types_active_call.clear()  # (a set on 0.68.1, a list on 0.59.1)


# --------------------------------------------------------------------------- the disk cache
FunctionCache: Any = _resolve("numba.core.caching", "FunctionCache")
_CompileResultCacheImpl: Any = _resolve("numba.core.caching", "CompileResultCacheImpl")
_IndexDataCacheFile: Any = _resolve("numba.core.caching", "IndexDataCacheFile")
_Environment: Any = _resolve("numba.core.environment", "Environment")
_lookup_environment: Any = _resolve("numba.core.environment", "lookup_environment")


def _rebuild_env_in_place(modname: str, consts: list, env_name: str) -> Any:
    """Numba's ``environment._rebuild_env``, without importing the function's module when it is not imported yet.

    Numba pickles each compiled function's ``Environment`` as its module's name, its
    constants and its name, and unpickling imports the module to take its globals
    (``Environment(mod.__dict__)``).  The engine's libraries hold Numba's own
    implementations too (``numba.np.arrayobj``'s ``np.empty``, ``numba.np.npyimpl``'s
    ufunc loops), whose modules a process that only loads compiled code never imports
    otherwise: ~65 ms of a first op here.  Only object-mode code reads an environment's
    globals (``numba.core.pylowering``); nopython code reads its constants
    (``EnvironmentManager.read_const``), and numba_ta's compiled code has no object mode.
    So a module not imported yet gets a globals dict holding only its ``__name__``, which
    is what the environment pickles again (``Environment.__reduce__``).  Read in the
    sources of 0.59.1, 0.60.0 and 0.68.1: the same function and memo on each.
    """
    env = _lookup_environment(env_name)
    if env is not None:
        return env
    mod = sys.modules.get(modname)
    env = _Environment(mod.__dict__ if mod is not None else {"__name__": modname})
    env.consts[:] = consts
    env.env_name = env_name
    _Environment._memo[env_name] = env
    return env


class _Unpickler(pickle.Unpickler):
    """Unpickle a cached entry with :func:`_rebuild_env_in_place` for Numba's ``_rebuild_env``."""

    def find_class(self, module: str, name: str) -> Any:
        if module == "numba.core.environment" and name == "_rebuild_env":
            return _rebuild_env_in_place
        return super().find_class(module, name)


class _ShippedCacheFile(_IndexDataCacheFile):
    """Numba's index and data files of a function, whose entries load with :class:`_Unpickler`.

    ``_load_data`` is Numba's (``open``, ``read``, ``pickle.loads``; the same on 0.59.1,
    0.60.0 and 0.68.1) with that unpickler.
    """

    def _load_data(self, name: str) -> Any:
        with open(self._data_path(name), "rb") as f:
            return _Unpickler(f).load()


_CacheLocator: Any = _resolve("numba.core.caching", "_CacheLocator")
#: ``numba.core.runtime.rtsys``: Numba's runtime (NRT); ``initialize(context)`` is idempotent.
#: Tested on 0.59.1, 0.60.0, 0.68.1: the same object on each.
_rtsys: Any = _resolve("numba.core.runtime", "rtsys")


class _FixedLocator(_CacheLocator):
    """Numba cache locator of a fixed folder, stamped by a function (a read-only install's shipped folder)."""

    def __init__(self, py_func, path, stamp):
        self._py_func = py_func
        self._lineno = py_func.__code__.co_firstlineno
        self._path = str(path)
        self._stamp = stamp

    def ensure_cache_path(self):
        pass  # read only: nothing is saved through this locator

    def get_cache_path(self):
        return self._path

    def get_source_stamp(self):
        return self._stamp()

    def get_disambiguator(self):
        return str(self._lineno)

    @classmethod
    def from_function(cls, py_func, py_file):  # pragma: no cover - never in Numba's own locator list
        return None


class _FixedImpl(_CompileResultCacheImpl):
    """Numba's cache implementation with a :class:`_FixedLocator` (file names as Numba's own)."""

    def __init__(self, py_func, path, stamp):
        self._lineno = py_func.__code__.co_firstlineno
        self._locator = _FixedLocator(py_func, path, stamp)
        modname = os.path.splitext(os.path.basename(py_func.__code__.co_filename))[0]
        self._filename_base = self.get_filename_base(f"{modname}.{py_func.__qualname__}", getattr(sys, "abiflags", ""))


_JITCodeLibrary: Any = _resolve("numba.core.codegen", "JITCodeLibrary")
_CompileResult: Any = _resolve("numba.core.compiler", "CompileResult")
_require(callable(getattr(_JITCodeLibrary, "_get_module_for_linking", None)), "JITCodeLibrary._get_module_for_linking")
_require(callable(getattr(_JITCodeLibrary, "_set_compiled_object", None)), "JITCodeLibrary._set_compiled_object")


class _LoadedLibrary(_JITCodeLibrary):
    """A code library loaded from object code whose bitcode is parsed only when another library links it.

    Numba's ``JITCodeLibrary._unserialize`` parses it at once, into ``_shared_module``, which
    only ``_get_module_for_linking`` reads (when a library being compiled links this one).
    Tested on 0.59.1, 0.60.0, 0.68.1: the same two attributes on each.
    """

    bitcode_for_linking = None

    def _get_module_for_linking(self):
        if self._shared_module is None and self.bitcode_for_linking is not None:
            self._shared_module = _llvm.parse_bitcode(self.bitcode_for_linking)
            self.bitcode_for_linking = None
        return super()._get_module_for_linking()


class FunctionCacheBase(FunctionCache):
    """Numba's ``FunctionCache`` with public-named parts, for :class:`numba_ta.core.cache.KernelCache`.

    Numba's dispatcher calls ``load_overload``/``save_overload``, which call the private
    ``_load_overload``/``_save_overload``: here these call :meth:`load_entry` and
    :meth:`save_entry`, which a subclass overrides (by default: Numba's own cache).  The
    helpers (:meth:`index_key`, :meth:`index_file`, :meth:`rebuild`, :meth:`reduce`,
    :meth:`cachable`, :meth:`load_from_numba`, :meth:`save_to_numba`) are Numba's
    ``_index_key``, ``IndexDataCacheFile``, ``_impl.rebuild``, ``_impl.reduce``,
    ``_impl.check_cachable`` and ``FunctionCache._load_overload``/``_save_overload``.
    Tested on 0.59.1, 0.60.0, 0.68.1: ``numba/core/caching.py`` has the same parts on each
    (0.68 adds locators and hashes source files instead of stamping them by time).

    Parameters
    ----------
    py_func : function
        The dispatcher's Python function.
    writable : bool
        Whether Numba found a cache directory for it (``njit(cache=True)`` did not raise
        ``no locator available``).  If not, the cache only reads the folder ``fallback``.
    fallback : path-like
        The folder to read from when not ``writable``.
    stamp : callable
        Returns the source stamp of the entries of ``fallback``.
    """

    def __init__(self, py_func, writable, fallback, stamp):
        self.writable = writable
        if writable:
            super().__init__(py_func)
        else:  # Numba's locators all refused: a fixed folder's locator stands in, read-only
            self._name = repr(py_func)
            self._py_func = py_func
            self._impl = _FixedImpl(py_func, fallback, stamp)
            self._cache_path = self._impl.locator.get_cache_path()
            self._cache_file = None
            self.enable()

    # what Numba calls
    def load_overload(self, sig, target_context):
        """Return the compile result of ``sig`` from the cache, or None (what Numba's dispatcher calls).

        Numba's own ``Cache.load_overload`` first calls ``target_context.refresh()``, which
        imports every implementation module of Numba (``numba.np.arraymath`` imports SciPy
        for its BLAS check): about 0.5 s of a cold process, which loading compiled code does
        not need.  Loading needs Numba's runtime (NRT) for the code's allocations, so this
        initializes only that (``rtsys.initialize``, as ``refresh`` does first); a compile
        refreshes the context itself (``CompilerBase.__init__``).  Tested on 0.59.1, 0.60.0,
        0.68.1: ``load_overload`` is ``refresh()``, then ``_load_overload`` inside
        ``_guard_against_spurious_io_errors()`` on each.
        """
        _rtsys.initialize(target_context)
        with self._guard_against_spurious_io_errors():
            return self._load_overload(sig, target_context)

    def _load_overload(self, sig, target_context):
        if not self._enabled:
            return None
        return self.load_entry(sig, target_context)

    def _save_overload(self, sig, data):
        if self._enabled:
            self.save_entry(sig, data)

    def flush(self):
        """Empty the index of Numba's own cache of the function (Numba's ``Dispatcher`` API)."""
        if self._cache_file is not None:
            self._cache_file.flush()

    # what a subclass overrides
    def load_entry(self, sig, target_context):
        """Return the compile result of ``sig`` from the cache, or None (a subclass's policy; here Numba's cache).

        Parameters
        ----------
        sig : tuple of numba.types.Type
            The argument types.
        target_context : numba.core.base.BaseContext
            The target context.

        Returns
        -------
        numba.core.compiler.CompileResult or None
            The loaded code, None when not cached.
        """
        return self.load_from_numba(sig, target_context)

    def save_entry(self, sig, data):
        """Save the compile result ``data`` of ``sig`` (a subclass's policy; here into Numba's cache).

        Parameters
        ----------
        sig : tuple of numba.types.Type
            The argument types.
        data : numba.core.compiler.CompileResult
            The compiled code.
        """
        self.save_to_numba(sig, data)

    # helpers
    @property
    def filename_base(self):
        """The base of the function's cache file names (``module.qualname-lineno.py311``)."""
        return self._impl.filename_base

    def index_key(self, sig, codegen):
        """Return Numba's index key of ``sig``: the signature, the CPU (``codegen.magic_tuple()``), the bytecode.

        Parameters
        ----------
        sig : tuple of numba.types.Type
            The argument types.
        codegen : numba.core.codegen.Codegen
            The target's code generator.

        Returns
        -------
        tuple
            The key.
        """
        return self._index_key(sig, codegen)

    def index_file(self, folder, stamp):
        """Return Numba's index and data files of this function in ``folder`` (``load(key)``, ``save(key, data)``).

        Parameters
        ----------
        folder : str
            The folder.
        stamp : str
            Its entries' source stamp (an entry of another stamp is not loaded).

        Returns
        -------
        numba.core.caching.IndexDataCacheFile
            The files.
        """
        return _ShippedCacheFile(cache_path=folder, filename_base=self.filename_base, source_stamp=stamp)

    def rebuild(self, target_context, data):
        """Return the compile result of ``data``, what :meth:`reduce` made (Numba's ``_impl.rebuild``, lazily).

        The steps of Numba's ``CompileResult._rebuild`` (the same on 0.59.1, 0.60.0 and 0.68.1),
        except one: Numba parses the library's bitcode (kept for linking it into another
        library) and walks every function of it to learn the names it defines, 15 to 30 ms
        per engine entry of a cold process.  Here the names come with ``data`` and the
        bitcode is parsed only if a library links this one (:class:`_LoadedLibrary`).

        Parameters
        ----------
        target_context : numba.core.base.BaseContext
            The target context.
        data : tuple
            What :meth:`reduce` made, unpickled.

        Returns
        -------
        numba.core.compiler.CompileResult
            The loaded code.
        """
        payload, names = data
        libdata, fndesc, env, signature, objectmode, lifted, typeann, reload_init, referenced_envs = payload
        name, kind, (object_code, bitcode) = libdata
        if kind != "object":
            raise ValueError(f"unsupported serialization kind {kind!r}")
        for fn in reload_init or ():
            fn()
        codegen = target_context.codegen()
        library = _LoadedLibrary(codegen, name)
        library.enable_object_caching()
        library._set_compiled_object(object_code)
        library.bitcode_for_linking = bitcode
        defined = getattr(codegen._engine, "_defined_symbols", None)
        if not isinstance(defined, set):
            raise missing("numba.core.codegen.JitEngine._defined_symbols")
        library._finalize_final_module()
        defined.update(names)
        cres = _CompileResult(
            target_context=target_context,
            typing_context=target_context.typing_context,
            library=library,
            environment=env,
            entry_point=target_context.get_executable(library, fndesc, env),
            fndesc=fndesc,
            type_annotation=typeann,
            signature=signature,
            objectmode=objectmode,
            lifted=lifted,
            typing_error=None,
            call_helper=None,
            metadata=None,
            reload_init=reload_init,
            referenced_envs=referenced_envs,
        )
        for e in referenced_envs:
            codegen.set_env(e.env_name, e)
        return cres

    def reduce(self, data):
        """Return the picklable form of the compile result ``data``: Numba's ``_impl.reduce`` and the names it defines.

        Parameters
        ----------
        data : numba.core.compiler.CompileResult
            The compiled code.

        Returns
        -------
        tuple
            ``(payload, names)``: Numba's payload (the library as object code and bitcode)
            and the sorted names of the functions and globals the library defines (what
            Numba's ``JitEngine._load_defined_symbols`` reads from the bitcode).
        """
        module = data.library._get_module_for_linking()
        names = {g.name for gs in (module.functions, module.global_variables) for g in gs if not g.is_declaration}
        return self._impl.reduce(data), sorted(names)

    def cachable(self, data):
        """Return whether the compile result ``data`` can be cached (Numba's ``_impl.check_cachable``).

        Parameters
        ----------
        data : numba.core.compiler.CompileResult
            The compiled code.

        Returns
        -------
        bool
            Whether it can be saved.
        """
        return self._impl.check_cachable(data)

    @property
    def has_numba_cache(self):
        """Whether the function has Numba's own (writable) cache files."""
        return self._cache_file is not None

    def load_from_numba(self, sig, target_context):
        """Return the compile result of ``sig`` from Numba's own cache of the function, or None.

        Parameters
        ----------
        sig : tuple of numba.types.Type
            The argument types.
        target_context : numba.core.base.BaseContext
            The target context.

        Returns
        -------
        numba.core.compiler.CompileResult or None
            The loaded code, None when not cached (or no writable cache).
        """
        if self._cache_file is None:
            return None
        return super()._load_overload(sig, target_context)

    def save_to_numba(self, sig, data):
        """Save the compile result ``data`` of ``sig`` into Numba's own cache of the function (if writable).

        Parameters
        ----------
        sig : tuple of numba.types.Type
            The argument types.
        data : numba.core.compiler.CompileResult
            The compiled code.
        """
        if self._cache_file is not None:
            super()._save_overload(sig, data)


def cpu_key(target_context: Any = None) -> tuple:
    """Return what Numba's cache keys the CPU by: ``codegen.magic_tuple()`` (target triple, CPU name, features).

    Parameters
    ----------
    target_context : numba.core.base.BaseContext, optional
        The target context; Numba's CPU target's by default
        (``numba.core.registry.cpu_target.target_context``).  Tested on 0.59.1, 0.60.0, 0.68.1.

    Returns
    -------
    tuple of str
        ``(triple, cpu name, features)``.
    """
    if target_context is None:
        target_context = _resolve("numba.core.registry", "cpu_target").target_context
    return tuple(target_context.codegen().magic_tuple())


# --------------------------------------------------------------------------- threads
def launch_threads() -> None:
    """Start Numba's thread pool without compiling anything (``numba.np.ufunc.parallel._launch_threads``).

    Tested on 0.59.1 and 0.68.1 (``numba-ta info``): the same function on each.

    Raises
    ------
    UnsupportedNumbaError
        If the function is missing.
    """
    _resolve("numba.np.ufunc.parallel", "_launch_threads")()


def openmp_vendor() -> str | None:
    """Return the OpenMP vendor of Numba's ``omp`` threading layer (``"GNU"``, ``"Intel"`` ...), or None if unknown.

    ``numba.np.ufunc.omppool.openmp_vendor``.  Tested on 0.59.1 and 0.68.1 (``"GNU"`` on Linux).

    Returns
    -------
    str or None
        The vendor.
    """
    try:
        return importlib.import_module("numba.np.ufunc.omppool").openmp_vendor
    except Exception:  # the layer is not built, or has no vendor: unknown
        return None


# --------------------------------------------------------------------------- C functions
def new_cfunc(func: Any, signature: Any, cache: Any, **options: Any) -> Any:
    """Compile ``func`` as a C function (``numba.cfunc``) of ``signature``, with ``cache`` as its disk cache.

    ``numba.core.ccallback.CFunc(func, normalize_signature(signature), locals={}, options=options)``,
    its ``_cache`` set to ``cache`` (where ``CFunc.enable_caching`` puts its ``FunctionCache``),
    then ``compile()``, which loads from the cache or compiles and saves: what ``numba.cfunc(...,
    cache=True)`` does, with numba_ta's cache (the shipped folder first) instead of Numba's.
    Tested on 0.68.1.

    Parameters
    ----------
    func : function
        The Python function.
    signature : numba.core.typing.templates.Signature
        Its C signature.
    cache : FunctionCacheBase
        The disk cache.
    **options
        Numba's compile options (``nogil``, ``parallel`` ...).

    Returns
    -------
    numba.core.ccallback.CFunc
        The compiled C function (``.address``: its entry point; keep the object alive).
    """
    cfunc_class = _resolve("numba.core.ccallback", "CFunc")
    normalize = _resolve("numba.core.sigutils", "normalize_signature")
    cf = cfunc_class(func, normalize(signature), locals={}, options=options)
    cf._cache = cache
    cf.compile()
    return cf


# --------------------------------------------------------------------------- Python from compiled code
def call_checked(builder: Any, pyapi: Any, func: Any, args: list) -> Any:
    """Emit ``func(*args)`` (Python objects in generated code) unless one of them is NULL; return the result.

    A NULL among them means that making it raised (an unpickled type or function, a boxed
    value: a ``KeyboardInterrupt`` that a signal handler raised there included), and that
    exception is set: the call is skipped and the result is NULL, so the exception reaches
    the caller as itself.  ``PyObject_CallFunctionObjArgs``, which Numba's ``call_function_objargs``
    emits, takes a NULL argument for the end of its list, so the call would go ahead with fewer
    arguments and raise a ``TypeError`` (or return a result with the exception still set);
    Numba's own boxing of structs does that.  ``func`` is borrowed, ``args`` are released.
    Uses the ``PythonAPI`` of box and unbox functions.  Tested on 0.59.1 and 0.68.1.

    Parameters
    ----------
    builder : llvmlite.ir.IRBuilder
        Where the code goes.
    pyapi : numba.core.pythonapi.PythonAPI
        The Python API of that code (``c.pyapi`` in box and unbox functions).
    func : llvmlite.ir.Value
        The function (a ``PyObject*``, maybe NULL).
    args : list of llvmlite.ir.Value
        Its arguments (new references, maybe NULL).

    Returns
    -------
    llvmlite.ir.Value
        The result (a new reference), or NULL with the exception set.
    """
    from numba.core import cgutils

    out = cgutils.alloca_once_value(builder, pyapi.get_null_object())
    missing = cgutils.is_null(builder, func)
    for a in args:
        missing = builder.or_(missing, cgutils.is_null(builder, a))
    with builder.if_then(builder.not_(missing), likely=True):
        builder.store(pyapi.call_function_objargs(func, args), out)
    for a in args:
        pyapi.decref(a)  # Py_DecRef: NULL is fine
    return builder.load(out)


def define_boxing(struct_type: Any, proxy_class: Any) -> None:
    """Box and unbox ``struct_type`` as ``proxy_class``: ``structref.define_boxing`` with every step checked.

    The same code as Numba's (``proxy_class._numba_box_(typ, meminfo)`` boxes, the
    ``_meminfo`` attribute unboxes), but the boxing's call goes through :func:`call_checked`:
    an exception raised while the type or the constructor is unpickled (a signal's
    ``KeyboardInterrupt``) arrives as itself, not as Numba's "``_numba_box_() missing 2
    required positional arguments``".  Relies on ``structref._Utils`` (the struct's meminfo
    in generated code).  Tested on 0.59.1 and 0.68.1.

    Parameters
    ----------
    struct_type : type
        The ``types.StructRef`` subclass (registered with ``structref.register``).
    proxy_class : type
        Its ``StructRefProxy`` subclass (its constructor defined with ``structref.define_constructor``).
    """
    from numba.core import types
    from numba.core.extending import NativeValue, box, unbox

    @box(struct_type)
    def _box_struct(typ, val, c):
        meminfo = _structref._Utils(c.context, c.builder, typ).get_struct_ref(val).meminfo
        mi_obj = c.box(types.MemInfoPointer(types.voidptr), meminfo)
        ctor = c.pyapi.unserialize(c.pyapi.serialize_object(proxy_class._numba_box_))
        ty_obj = c.pyapi.unserialize(c.pyapi.serialize_object(typ))
        res = call_checked(c.builder, c.pyapi, ctor, [ty_obj, mi_obj])
        c.pyapi.decref(ctor)
        return res

    @unbox(struct_type)
    def _unbox_struct(typ, obj, c):
        mi_obj = c.pyapi.object_getattr_string(obj, "_meminfo")
        mi = c.unbox(types.MemInfoPointer(types.voidptr), mi_obj).value
        out = _structref._Utils(c.context, c.builder, typ).new_struct_ref(mi)._getvalue()
        c.pyapi.decref(mi_obj)
        return NativeValue(out)


def python_function(fn: Any, restype: Any, nargs: int) -> Any:
    """Return a function calling ``fn`` that compiled code calls without ``objmode``: every exception arrives whole.

    In Python (and with ``NUMBA_DISABLE_JIT=1``) the returned function is ``fn``'s plain
    call.  In compiled code it is an intrinsic that takes the GIL, converts the arguments in
    C (integers; strings; a C-contiguous array as the ``bytes`` of its items), calls
    ``fn``, converts its result to ``restype`` with Numba's unboxing (strings, arrays, integers
    and tuples of them are converted in C) and gives the GIL back.  A NULL anywhere (an
    exception ``fn`` raised, a ``KeyboardInterrupt`` a signal handler raised while ``fn`` ran,
    a result of the wrong type) leaves the exception set and makes the compiled function
    return Numba's "exception already set" status, so the caller of the compiled code sees that
    exception itself.  ``objmode``'s glue, which unpickles the function and boxes the arguments
    in Python at each call, could turn such an interrupt into a ``TypeError`` or a
    ``SystemError``.  Inside a ``try`` block of compiled code the exception is caught like any
    other error of a call.

    Relies on ``context.get_python_api(builder)``'s ``PythonAPI`` (as in box and unbox
    functions), ``PythonAPI.serialize_object``/``unserialize`` (the function is pickled by
    reference into the code, so cached code finds it again) and ``context.call_conv.return_exc``
    (the status of an exception already set).  Tested on 0.59.1 and 0.68.1.

    Parameters
    ----------
    fn : function
        A module-level Python function (pickled by reference).
    restype : numba.types.Type
        What compiled code receives from ``fn``'s result.
    nargs : int
        How many arguments ``fn`` takes (1 or 2): integers, strings (``unicode_type``) or
        C-contiguous arrays, as compiled code passes them.

    Returns
    -------
    function
        ``call(*args)``: ``fn(*args)`` in Python, the intrinsic's call in compiled code (an
        array argument reaches ``fn`` as ``bytes`` then, see above).
    """
    from numba.core import cgutils, types
    from numba.core.extending import intrinsic, overload

    def box(context, builder, pyapi, typ, value):
        if isinstance(typ, types.Integer):
            return pyapi.long_from_longlong(context.cast(builder, value, typ, types.int64))
        if isinstance(typ, types.Array):
            ary = context.make_array(typ)(context, builder, value)
            nbytes = builder.mul(ary.nitems, context.get_constant(types.intp, typ.dtype.bitwidth // 8))
            return pyapi.bytes_from_string_and_size(builder.bitcast(ary.data, pyapi.cstring), nbytes)
        context.nrt.incref(builder, typ, value)  # boxing takes a reference: the caller keeps its own
        return pyapi.from_native_value(typ, value)

    def codegen(context, builder, signature, llargs):
        pyapi = context.get_python_api(builder)
        gil = pyapi.gil_ensure()

        def fail_if_null(obj):
            with cgutils.if_unlikely(builder, cgutils.is_null(builder, obj)):
                pyapi.gil_release(gil)
                context.call_conv.return_exc(builder)

        fnobj = pyapi.unserialize(pyapi.serialize_object(fn))
        boxed = [box(context, builder, pyapi, typ, value) for typ, value in zip(signature.args, llargs, strict=True)]
        res = call_checked(builder, pyapi, fnobj, boxed)
        pyapi.decref(fnobj)
        fail_if_null(res)
        native = pyapi.to_native_value(restype, res)
        pyapi.decref(res)
        with cgutils.if_unlikely(builder, native.is_error):
            pyapi.gil_release(gil)
            context.call_conv.return_exc(builder)
        pyapi.gil_release(gil)
        return native.value

    if nargs == 1:

        @intrinsic
        def native_call1(typingctx, a):
            return restype(a), codegen

        def call(a):
            return fn(a)

        @overload(call)
        def _call1(a):
            return lambda a: native_call1(a)

    elif nargs == 2:

        @intrinsic
        def native_call2(typingctx, a, b):
            return restype(a, b), codegen

        def call(a, b):  # type: ignore[misc]
            return fn(a, b)

        @overload(call)
        def _call2(a, b):
            return lambda a, b: native_call2(a, b)

    else:
        raise ValueError(f"python_function: {nargs} arguments (1 or 2 are supported)")
    call.__doc__ = f"``{fn.__qualname__}`` from Python or compiled code (numba_compat.python_function)."
    return call
