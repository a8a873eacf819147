"""Users' compiled code calls the engine's entries by symbol name: the engine is never compiled into it.

A TensorArray method in a user's ``@njit`` function (:mod:`numba_ta.jit.extension`) keeps inline only
its per-element fast paths, casts and byte views; the rest of each op is one engine entry
(``numba_ta.jit.entries.jit_*``: the class's checks, the engine op and TF's exception), compiled
once for every dtype and rank (cached on disk, shipped by ``pip install .``), which the method
calls through :func:`call`.  That intrinsic *declares* the entry's symbol (``numba_ta_v1_write``)
with Numba's calling convention and calls it: arguments, results and exceptions cross as in any
call between compiled functions (arguments borrowed, the result a new reference, an exception
as Numba's status), and nothing of the engine is linked into, typed or optimised in the user's
function (before, a new user function took 35 to 60 s, most of it compiling the engine again).

Registration
------------
:func:`register` compiles (or loads from the cache) an entry for its one signature
(:data:`ENTRIES`) and publishes the address of its native function under its symbol name
(``llvmlite.binding.add_symbol``), where LLVM resolves the user's declaration.  It is lazy
(never at import: the first user function typed with the op triggers it), idempotent and
thread-safe (Numba's compiler lock, then this module's lock), and does nothing under
``NUMBA_DISABLE_JIT=1``, where users' functions run the Python class.

Caching and ABI versions
------------------------
The intrinsic adds a hook (:class:`_Hook`) to what Numba runs before a cached function loads
(:func:`numba_ta.core.numba_compat.add_reload_hook`: the library's ``_reload_init`` on Numba
0.68, the function environment's constants on older Numbas): Numba pickles it with a user's
``cache=True`` function and, in a new process, runs it (``CompileResult._rebuild``) or
unpickles it (older Numbas: then unpickling runs it) *before* loading the function's object
code, so the symbols exist when LLVM resolves them.

A cached function refers to the entries by name, so a name must never mean two things.
Every symbol carries :data:`ABI`, to be bumped whenever an entry's signature or meaning
changes; and the hook pickles itself as ``_reload(ABI, ABI_KEY, op)``, where
:data:`ABI_KEY` is a hash of the entries' signatures, the struct's fields, the engine's
constants that users' inlined fast paths read (header slots, state bits) and the functions
a function's unboxing of an array calls (:data:`ENTERING`).  A function that takes an
array carries the hook ``"enter"`` (:func:`hook_entering`), which registers nothing but
makes the same check.  Unpickling a hook
of another ABI, key or op raises :class:`StaleCodeError`, an ``OSError``: Numba's cache reads
an ``OSError`` while loading an entry as a file that vanished, treats it as a miss and
compiles the function again, replacing the stale entry.  So a user's function cached against
another numba_ta is recompiled, never loaded against entries it does not match; a name that no
longer exists is never looked up (LLVM would abort the process on an unresolved symbol), and
old names need not stay registered.  :func:`_reload` must keep its name and accept any
arguments in every later version.
"""

from __future__ import annotations

import hashlib
import threading
from typing import Any

import llvmlite.binding as llb
from numba import types
from numba.core import cgutils, config
from numba.core.errors import TypingError
from numba.core.extending import intrinsic

from numba_ta.core import numba_compat as _numba_compat
from numba_ta.core.numba_compat import global_compiler_lock
from numba_ta.core.state import state_type
from numba_ta.jit import entries

#: The version of the entries' calling interface; part of every symbol name.
ABI = "v1"

_ST = state_type()
_ST_FIELDS = tuple(_ST.field_dict.items())
_U8 = types.Array(types.uint8, 1, "C")
_I64 = types.Array(types.int64, 1, "C")
_SHAPED = types.Tuple((_U8, _I64))  # a result: its bytes and its shape
_i64, _bool = types.int64, types.boolean

#: op -> (the entry's name in ``numba_ta.jit.entries``, its argument types, its return type).
ENTRIES: dict[str, tuple[str, tuple[Any, ...], Any]] = {
    "write": ("jit_write", (_ST, _i64, _U8, _I64, _bool), _i64),
    "read": ("jit_read", (_ST, _i64, _i64), _SHAPED),
    "gather": ("jit_gather", (_ST, _I64, _I64, _i64), _SHAPED),
    "stack": ("jit_stack", (_ST, _i64), _SHAPED),
    "scatter": ("jit_scatter", (_ST, _I64, _I64, _U8, _i64, _I64, _bool), _i64),
    "concat": ("jit_concat", (_ST, _i64), _SHAPED),
    "split": ("jit_split", (_ST, _U8, _I64, _I64, _I64, _bool), _i64),
    "closed": ("jit_closed", (_ST,), types.none),
    "new": (
        "jit_new",
        (_i64, _bool, _bool, _bool, _I64, _U8, _i64, _i64, _i64, _i64, _i64, types.unicode_type),
        _ST,
    ),
}


def symbol(op: str) -> str:
    """Return the symbol name of the entry of ``op``: ``numba_ta_v1_write``.

    Parameters
    ----------
    op : str
        A key of :data:`ENTRIES`.

    Returns
    -------
    str
        The name users' compiled code declares and calls.
    """
    return f"numba_ta_{ABI}_{op}"


#: What a user function's unboxing and cleanup of an array call (``numba_ta.jit.extension``), as cached code names them.
ENTERING = (
    "numba_ta.jit.extension._enter_meminfo",
    "numba_ta.jit.extension._leave",
    "the cleanup calls _leave again until it returns",
)


def _abi_key() -> str:
    """Return the hash of what a cached user function relies on: signatures, struct fields, engine constants."""
    h = hashlib.sha256(ABI.encode())
    h.update(repr(ENTERING).encode())
    for op, (name, args, ret) in sorted(ENTRIES.items()):
        h.update(repr((op, name, [str(a) for a in args], str(ret))).encode())
    from numba_ta.core import header, memory, shapes, state, status, sums
    from numba_ta.tensor_array import engine
    from numba_ta.tensor_list import listengine

    names: dict[str, int] = {}
    for module in (header, state, status, shapes, memory, sums, engine, listengine, entries):
        names.update((k, v) for k, v in vars(module).items() if k.isupper() and type(v) is int)
    consts = sorted(names.items())
    h.update(repr(consts).encode())
    return h.hexdigest()[:16]


#: Hash of the interface a cached user function was compiled against (checked when it loads).
ABI_KEY = _abi_key()

_lock = threading.Lock()
_ADDRESSES: dict[str, int] = {}  # op -> address of its entry's native function, once registered


def register(op: str) -> None:
    """Compile or load the entry of ``op`` and publish its address under :func:`symbol` (once per process).

    Idempotent and thread-safe; nothing under ``NUMBA_DISABLE_JIT=1``.  Called when a user's
    function is typed and lowered with the op, and before a cached one is loaded (:class:`_Hook`).

    Parameters
    ----------
    op : str
        A key of :data:`ENTRIES`.
    """
    if op in _ADDRESSES or getattr(config, "DISABLE_JIT", False):
        return
    with global_compiler_lock, _lock:  # this order everywhere: callers compiling hold Numba's lock already
        if op in _ADDRESSES:
            return
        name, args, ret = ENTRIES[op]
        entry = getattr(entries, name)
        entry.compile(ret(*args))  # the explicit return type fixes the ABI (0 alone would type as a literal)
        cres = entry.overloads[args]
        if cres.signature.return_type != ret:  # pragma: no cover - a changed entry without a new signature
            raise RuntimeError(f"numba_ta: the entry {name} returns {cres.signature.return_type}, not {ret}")
        address = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
        llb.add_symbol(symbol(op), address)
        _ADDRESSES[op] = address


def registered() -> dict[str, int]:
    """Return the registered entries: op -> address (a copy).

    Returns
    -------
    dict
        The ops registered in this process so far.
    """
    return dict(_ADDRESSES)


class StaleCodeError(OSError):
    """A cached user function was compiled against other engine entries: Numba compiles it again."""


class _Hook:
    """Reload hook of a library that calls the entry of ``op``: registers it; pickles with the ABI.

    The hook ``"enter"`` (a library that unboxes an array) registers nothing.
    """

    __slots__ = ("op",)

    def __init__(self, op):
        self.op = op

    def __call__(self):
        if self.op in ENTRIES:
            register(self.op)

    def __reduce__(self):
        return _reload, (ABI, ABI_KEY, self.op)


_HOOKS = {op: _Hook(op) for op in (*ENTRIES, "enter")}


def hook_entering(context: Any) -> None:
    """Add the hook ``"enter"`` to the library being compiled, which unboxes an array (see the module docstring).

    Parameters
    ----------
    context : numba.core.base.BaseContext
        The target context of the unboxing code.
    """
    _numba_compat.add_reload_hook(context, _HOOKS["enter"])


def _reload(*args):
    """Unpickle a hook of a cached user function: the hook, or :class:`StaleCodeError` if it does not match.

    On the Numbas whose reload hooks live in the function's environment
    (``numba_compat.RUN_HOOKS_WHEN_UNPICKLED``) it runs the hook too: nothing else would.
    Keep this name, and its acceptance of any arguments, in every version (see the module docstring).
    """
    if len(args) != 3 or args[0] != ABI or args[1] != ABI_KEY or args[2] not in _HOOKS:
        raise StaleCodeError(
            f"numba_ta: cached compiled code refers to engine entries {args!r}, this numba_ta has "
            f"{ABI}/{ABI_KEY}: compiling it again"
        )
    hook = _HOOKS[args[2]]
    if _numba_compat.RUN_HOOKS_WHEN_UNPICKLED:
        hook()
    return hook


# --------------------------------------------------------------------------- the call
def _accepts(typingctx, actual, expected):
    """Whether a value of type ``actual`` can be passed where the entry expects ``expected``."""
    if expected == _ST:
        return isinstance(actual, types.StructRef) and tuple(actual.field_dict.items()) == _ST_FIELDS
    if isinstance(expected, types.Array):  # same data model: readonly and 'C' values pass as they are
        return (
            isinstance(actual, types.Array)
            and actual.dtype == expected.dtype
            and actual.ndim == expected.ndim
            and actual.layout == "C"
        )
    return typingctx.can_convert(actual, expected) is not None


def _coerce(context, builder, value, actual, expected):
    """Return ``value`` (of type ``actual``) as the entry's argument of type ``expected`` (borrowed)."""
    if expected == _ST and actual != _ST:  # a TensorArrayType: the same struct, the same model
        src = cgutils.create_struct_proxy(actual)(context, builder, value=value)
        dst = cgutils.create_struct_proxy(_ST)(context, builder)
        dst.meminfo = builder.bitcast(src.meminfo, dst.meminfo.type)
        return dst._getvalue()
    if actual == expected or isinstance(expected, types.Array):
        return value
    return context.cast(builder, value, actual, expected)


def _emit(context, builder, op, argtys, values):
    """Declare the entry of ``op``, call it, propagate its exception; return its result (a new reference)."""
    register(op)
    _numba_compat.add_reload_hook(context, _HOOKS[op])  # pickled with a cached caller, run before loading
    _, etys, ret = ENTRIES[op]
    args = [_coerce(context, builder, v, a, t) for v, a, t in zip(values, argtys, etys, strict=True)]
    fnty = context.call_conv.get_function_type(ret, etys)
    fn = cgutils.get_or_insert_function(builder.module, fnty, symbol(op))
    status, res = context.call_conv.call_function(builder, fn, ret, etys, args)
    with cgutils.if_unlikely(builder, status.is_error):
        context.call_conv.return_status_propagate(builder, status)
    return res


def _check(typingctx, op, args):
    """Return the entry of the literal ``op`` after checking ``args`` against it (TypingError otherwise)."""
    name = op.literal_value
    if name not in ENTRIES:
        raise TypingError(f"numba_ta: no engine entry {name!r}")
    _, etys, _ = ENTRIES[name]
    if len(args) != len(etys) or not all(_accepts(typingctx, a, t) for a, t in zip(args, etys, strict=False)):
        raise TypingError(f"numba_ta: engine entry {name!r} takes {etys}, not {args}")
    register(name)
    return name


@intrinsic
def call(typingctx, op, args):
    """Call the engine entry of the literal ``op`` with the tuple ``args``; return its result (compiled code only)."""
    if not isinstance(op, types.StringLiteral) or not isinstance(args, types.BaseTuple):
        return None
    name = _check(typingctx, op, tuple(args))
    sig = ENTRIES[name][2](op, args)

    def codegen(context, builder, sig, llargs):
        values = cgutils.unpack_tuple(builder, llargs[1], len(sig.args[1]))
        return _emit(context, builder, name, tuple(sig.args[1]), values)

    return sig, codegen


@intrinsic
def call_new(typingctx, ta_type, args):
    """Call the ``new`` entry with the tuple ``args``; return its struct as an array of ``ta_type`` (compiled only)."""
    if not isinstance(args, types.BaseTuple):
        return None
    name = _check(typingctx, types.literal("new"), tuple(args))
    sig = ta_type.instance_type(ta_type, args)

    def codegen(context, builder, sig, llargs):
        values = cgutils.unpack_tuple(builder, llargs[1], len(sig.args[1]))
        s = _emit(context, builder, name, tuple(sig.args[1]), values)
        src = cgutils.create_struct_proxy(_ST)(context, builder, value=s)
        dst = cgutils.create_struct_proxy(sig.return_type)(context, builder)
        dst.meminfo = builder.bitcast(src.meminfo, dst.meminfo.type)  # the new reference moves over
        return dst._getvalue()

    return sig, codegen
