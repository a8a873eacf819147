"""Prototype: numba_ta's engine called from users' @njit code through symbols (not re-compiled into them).

Two ways of calling compiled engine code by address, both on the REAL engine (``numba_ta._engine``)
and the REAL ``TensorArrayType`` of ``numba_ta._jit`` (the prototype adds methods with new names;
nothing in the package is changed):

Option A2 (recommended): **Numba-ABI entries by symbol.**  Each op is one ``@njit(cache=True,
nogil=True)`` function over the engine's ``StateType`` and plain arrays (``x_write``, ``x_read``,
``x_stack``, ``x_new``), doing the whole op with TF's checks, the class's shape check/merge and the
exception (``E.raise_status``).  :func:`register` compiles (or loads from the cache) each entry for
its one signature and gives its native function's address a fixed name with
``llvmlite.binding.add_symbol``.  In users' code an intrinsic (:func:`_xcall`) DECLARES that name
with Numba's calling convention (``context.call_conv.get_function_type``) and calls it
(``call_conv.call_function``), propagating its exception status: so structs, arrays, tuples and
exceptions cross the boundary exactly as in an internal call (arguments borrowed, result a new
reference), and nothing of the engine is linked into the user's library.  The intrinsic adds
:func:`register` to the library's ``_reload_init``, which Numba pickles with a cached function and
runs BEFORE loading its object code in a new process (``numba.core.compiler.CompileResult._rebuild``),
so the symbols exist when MCJIT resolves them.

Option A1: **C-ABI ``cfunc`` entries** (``c_write``, ``c_stack``).  ``numba.cfunc(sig, cache=True)``
over ``voidptr``/``CPointer``/``int64``: the struct crosses as its meminfo pointer (the callee
rebuilds the ``StateType`` value with an incref, :func:`_struct_from_meminfo`), values as pointer +
length, results through an out-record (``int64[16]`` on the caller's stack: the result array's
meminfo - a new reference - data pointer, byte count, shape), rebuilt by the caller
(:func:`_array_from_record`).  No exceptions can cross: a status comes back and the caller raises.

The fast paths of ``write``/``read`` stay inlined (``numba_ta._jit._fast_write``/``_fast_read``).
"""

from __future__ import annotations

import threading

import llvmlite.binding as llb
import numpy as np
from numba import carray, cfunc, njit, objmode, types
from numba.core import cgutils
from numba.cpython.unsafe.tuple import tuple_setitem  # noqa: F401
from numba.extending import intrinsic, overload, overload_method
from numba.np.unsafe.ndarray import to_fixed_tuple

import numba_ta  # noqa: F401
from numba_ta import _config, _registry, _storage
from numba_ta import _engine as E
from numba_ta import _jit as J

ST = E.state_type()
U8 = types.Array(types.uint8, 1, "C")
I64 = types.Array(types.int64, 1, "C")
ABI = "v1"  # part of every symbol name: an incompatible engine ABI must use new names


# --------------------------------------------------------------------------- A2: Numba-ABI entries
_OPT = dict(cache=True, nogil=True)


@njit(**_OPT)
def x_write(s, index, flat, shape, numeric):
    """The whole slow path of ``TensorArray.write`` (class check, engine op, exception, class merge)."""
    J._class_check(s, shape)
    st = E.write(s, index, flat, shape, numeric)
    if st:
        E.raise_status(s, st)
    J._class_merge(s, shape)
    return 0


@njit(**_OPT)
def x_read(s, index, want):
    """The slow path of ``TensorArray.read``: ``(bytes, shape)``."""
    st, flat, shape = E.read(s, index, want)
    if st:
        E.raise_status(s, st)
    return flat, shape


@njit(**_OPT)
def x_stack(s, want):
    """``TensorArray.stack`` (no fast path needed: the gather copies a dense range in one pass)."""
    h = s.hdr
    if h[E.CLOSED]:
        E.raise_status(s, E._fail_i(s, E._T1))
    st, flat, shape = E.gather(s, np.arange(h[E.SIZE]), s.ces, h[E.CLASS_KNOWN] != 0, want)
    if st:
        E.raise_status(s, st)
    return flat, shape


@njit(**_OPT)
def x_new(n, dyn, car, infer, es, itemsize, code, slack, factor, parmin, base):
    """``numba_ta.TensorArray(...)`` in compiled code: a new state struct (its name from the registry)."""
    with objmode(uname="unicode_type"):
        uname = _registry.new_name(base)
    s = E.StateProxy(np.empty(0, np.uint8), np.zeros(n, np.uint8), np.zeros(n, np.int32), np.zeros(n, np.int64),
                     np.zeros(E.NHDR, np.int64), np.zeros(0, np.int64), np.zeros(1, np.int64), np.zeros(0, np.int64),
                     es, es.copy(), uname, np.zeros(E._ERR_WORDS, np.int64))  # fmt: skip
    h = s.hdr
    h[E.SIZE] = n
    h[E.CAP] = n
    h[E.LAYOUT] = E._NONE
    h[E.DYN] = dyn
    h[E.CAR] = car
    h[E.IDENT] = infer
    h[E.CLASS_KNOWN] = 1
    h[E.INFER] = infer
    h[E.FASTSID] = -1
    h[E.ES_KNOWN] = 1
    h[E.MARKED] = -1
    h[E.ITEMSIZE] = itemsize
    h[E.DTYPE] = code
    h[E.SLACK] = slack
    h[E.FACTOR] = factor
    h[E.PARMIN] = parmin
    return s


# name -> (dispatcher, argument types, return type)
ENTRIES = {
    f"numba_ta_{ABI}_write": (x_write, (ST, types.int64, U8, I64, types.boolean), types.int64),
    f"numba_ta_{ABI}_read": (x_read, (ST, types.int64, types.int64), types.Tuple((U8, I64))),
    f"numba_ta_{ABI}_stack": (x_stack, (ST, types.int64), types.Tuple((U8, I64))),
    f"numba_ta_{ABI}_new": (
        x_new,
        (types.int64, types.boolean, types.boolean, types.boolean, I64, types.int64, types.int64, types.int64,
         types.int64, types.int64, types.unicode_type),  # fmt: skip
        ST,
    ),
}
_lock = threading.Lock()
_registered = set()
ADDRESSES = {}


def register(names=None):
    """Compile or load each entry for its signature and publish its native function under its name.

    Idempotent and thread-safe; called by the intrinsics' codegen and, in a new process, by
    Numba before a cached user function's object code is loaded (``_reload_init``).
    """
    for name in names or ENTRIES:
        if name in _registered:
            continue
        with _lock:
            if name in _registered:
                continue
            disp, args, ret = ENTRIES[name]
            disp.compile(ret(*args))  # the explicit return type fixes the ABI (else 0 types as Literal[int])
            cres = disp.overloads[args]
            assert cres.signature.return_type == ret, (name, cres.signature)
            addr = cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name)
            llb.add_symbol(name, addr)
            ADDRESSES[name] = addr
            _registered.add(name)


def _emit(context, builder, name, args):
    """Declare ``name`` with Numba's calling convention, call it, propagate its exception; return its result."""
    register([name])
    context.active_code_library._reload_init.add(register)  # pickled with a cached caller, run before loading
    _, argtys, restype = ENTRIES[name]
    fnty = context.call_conv.get_function_type(restype, argtys)
    fn = cgutils.get_or_insert_function(builder.module, fnty, name)
    status, res = context.call_conv.call_function(builder, fn, restype, argtys, args)
    with cgutils.if_unlikely(builder, status.is_error):
        context.call_conv.return_status_propagate(builder, status)
    return res


def _cast_args(context, builder, sig, args, argtys):
    out = []
    for v, fr, to in zip(args, sig.args, argtys):
        if fr == to:
            out.append(v)
        elif isinstance(fr, J.TensorArrayType) and to == ST:  # same struct, same model: the meminfo
            src = cgutils.create_struct_proxy(fr)(context, builder, value=v)
            dst = cgutils.create_struct_proxy(ST)(context, builder)
            dst.meminfo = builder.bitcast(src.meminfo, dst.meminfo.type)
            out.append(dst._getvalue())  # borrowed, as the callee's arguments are
        else:
            out.append(context.cast(builder, v, fr, to))
    return out


@intrinsic
def _call_write(typingctx, ta, index, flat, shape, numeric):
    name = f"numba_ta_{ABI}_write"
    _, argtys, ret = ENTRIES[name]
    sig = ret(ta, index, flat, shape, numeric)

    def codegen(context, builder, sig, args):
        return _emit(context, builder, name, _cast_args(context, builder, sig, args, argtys))

    return sig, codegen


@intrinsic
def _call_read(typingctx, ta, index, want):
    name = f"numba_ta_{ABI}_read"
    _, argtys, ret = ENTRIES[name]
    sig = ret(ta, index, want)

    def codegen(context, builder, sig, args):
        return _emit(context, builder, name, _cast_args(context, builder, sig, args, argtys))

    return sig, codegen


@intrinsic
def _call_stack(typingctx, ta, want):
    name = f"numba_ta_{ABI}_stack"
    _, argtys, ret = ENTRIES[name]
    sig = ret(ta, want)

    def codegen(context, builder, sig, args):
        return _emit(context, builder, name, _cast_args(context, builder, sig, args, argtys))

    return sig, codegen


@intrinsic
def _call_new(typingctx, ta_type, n, dyn, car, infer, es, itemsize, code, slack, factor, parmin, base):
    name = f"numba_ta_{ABI}_new"
    _, argtys, _ = ENTRIES[name]
    rt = ta_type.instance_type
    sig = rt(ta_type, n, dyn, car, infer, es, itemsize, code, slack, factor, parmin, base)

    def codegen(context, builder, sig, args):
        s = _emit(context, builder, name, _cast_args(context, builder, sig.replace(args=sig.args[1:]), args[1:], argtys))
        src = cgutils.create_struct_proxy(ST)(context, builder, value=s)
        dst = cgutils.create_struct_proxy(sig.return_type)(context, builder)
        dst.meminfo = builder.bitcast(src.meminfo, dst.meminfo.type)  # the new reference moves over
        return dst._getvalue()

    return sig, codegen


@overload_method(J.TensorArrayType, "write_x")
def _ol_write_x(ta, index, value):
    dtype = ta.dtype
    ndim = ta.ndim
    numeric = dtype != types.boolean
    vdim = value.ndim if isinstance(value, types.Array) else 0
    same = isinstance(value, types.Array) and value.dtype == dtype

    def impl(ta, index, value):
        if same:
            v = value
        elif vdim:
            v = np.asarray(value).astype(dtype)
        else:
            v = np.full((), value, dtype)
        if vdim == ndim and J._fast_write(ta, index, v, ndim):  # inlined: the per-element path
            return ta
        _call_write(ta, np.int64(index), np.ascontiguousarray(v).reshape(-1).view(np.uint8),
                    E.shape_array(v.shape), numeric)  # fmt: skip
        return ta

    return impl


@overload_method(J.TensorArrayType, "read_x")
def _ol_read_x(ta, index):
    ndim = ta.ndim
    zshape = (0,) * ndim
    dt = ta.dtype

    def impl(ta, index):
        ok, out = J._fast_read(ta, index, ndim, zshape, dt)  # inlined: the per-element path
        if ok:
            return out
        flat, shape = _call_read(ta, np.int64(index), np.int64(ndim))
        return flat.view(dt).reshape(to_fixed_tuple(shape, ndim))

    return impl


@overload_method(J.TensorArrayType, "stack_x")
def _ol_stack_x(ta):
    ndim1 = ta.ndim + 1
    dt = ta.dtype
    ndim = ta.ndim

    def impl(ta):
        flat, shape = _call_stack(ta, np.int64(ndim))
        return flat.view(dt).reshape(to_fixed_tuple(shape, ndim1))

    return impl


def new_x(dtype, size, dynamic_size, element_shape):  # pragma: no cover - compiled code only
    """``numba_ta.TensorArray(dtype, size=, dynamic_size=, element_shape=)`` through the address (prototype)."""


@overload(new_x)
def _ol_new_x(dtype, size, dynamic_size, element_shape):
    from numba.np.numpy_support import as_dtype

    nb = dtype.instance_type if isinstance(dtype, types.NumberClass) else dtype.dtype
    np_dtype = as_dtype(nb)
    ndim = len(element_shape)
    ta_type = J.array_type(np_dtype, ndim)
    itemsize, code = np_dtype.itemsize, E.dtype_code(np_dtype)
    slack, factor, parmin = _storage.DENSE_SLACK_BYTES, _storage.DENSE_FACTOR, _config.PARALLEL_MIN_ELEMENTS

    def impl(dtype, size, dynamic_size, element_shape):
        es = np.empty(ndim, np.int64)
        k = 0
        for d in element_shape:
            es[k] = d
            k += 1
        return _call_new(ta_type, np.int64(size), bool(dynamic_size), True, True, es, np.int64(itemsize),
                         np.int64(code), np.int64(slack), np.int64(factor), np.int64(parmin), "TensorArray")  # fmt: skip

    return impl


# --------------------------------------------------------------------------- A1: C-ABI cfunc entries
@intrinsic
def _struct_from_meminfo(typingctx, mi):
    """The engine's struct from its meminfo pointer (``voidptr``), as a new reference."""
    sig = ST(types.voidptr)

    def codegen(context, builder, sig, args):
        sr = cgutils.create_struct_proxy(ST)(context, builder)
        sr.meminfo = builder.bitcast(args[0], sr.meminfo.type)
        context.nrt.incref(builder, ST, sr._getvalue())
        return sr._getvalue()

    return sig, codegen


@intrinsic
def _export_array(typingctx, a, rec):
    """Write ``a``'s meminfo (a new reference), data pointer and item count into ``rec[0:3]``."""
    sig = types.void(a, rec)

    def codegen(context, builder, sig, args):
        ary = context.make_array(sig.args[0])(context, builder, value=args[0])
        context.nrt.incref(builder, sig.args[0], args[0])
        i64 = context.get_value_type(types.int64)
        rec = args[1]
        builder.store(builder.ptrtoint(ary.meminfo, i64), builder.gep(rec, [cgutils.int32_t(0)]))
        builder.store(builder.ptrtoint(ary.data, i64), builder.gep(rec, [cgutils.int32_t(1)]))
        builder.store(ary.nitems, builder.gep(rec, [cgutils.int32_t(2)]))
        return context.get_dummy_value()

    return sig, codegen


_CSIG_WRITE = types.int64(types.voidptr, types.int64, types.CPointer(types.uint8), types.int64,
                          types.CPointer(types.int64), types.int64, types.int64)  # fmt: skip
_CSIG_STACK = types.int64(types.voidptr, types.int64, types.CPointer(types.int64))


@cfunc(_CSIG_WRITE, cache=True, nogil=True)
def c_write(mi, index, vp, nbytes, shp, ndim, numeric):
    """C ABI: the engine's write (the class check/merge left to the caller); the status."""
    s = _struct_from_meminfo(mi)
    flat = carray(vp, nbytes)
    shape = carray(shp, ndim).copy()
    return E.write(s, index, flat, shape, numeric != 0)


@cfunc(_CSIG_STACK, cache=True, nogil=True)
def c_stack(mi, want, rec):
    """C ABI: stack; the result (bytes) goes to rec: [meminfo, data, nbytes, ndim+1 dims]; the status."""
    s = _struct_from_meminfo(mi)
    h = s.hdr
    st, flat, shape = E.gather(s, np.arange(h[E.SIZE]), s.ces, h[E.CLASS_KNOWN] != 0, want)
    if st:
        return st
    r = carray(rec, 16)
    _export_array(flat, rec)
    for k in range(shape.size):
        r[3 + k] = shape[k]
    return 0


C_ENTRIES = {f"numba_ta_{ABI}_c_write": c_write, f"numba_ta_{ABI}_c_stack": c_stack}


def register_c():
    for name, cf in C_ENTRIES.items():
        llb.add_symbol(name, cf.address)


@intrinsic
def _meminfo_of(typingctx, ta):
    sig = types.voidptr(ta)

    def codegen(context, builder, sig, args):
        sr = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
        return builder.bitcast(sr.meminfo, cgutils.voidptr_t)

    return sig, codegen


def _declare_c(builder, context, name, csig):
    register_c()
    context.active_code_library._reload_init.add(register_c)
    ll = [context.get_value_type(t) for t in csig.args]
    return cgutils.get_or_insert_function(builder.module, cgutils.ir.FunctionType(context.get_value_type(csig.return_type), ll), name)


@intrinsic
def _c_call_write(typingctx, mi, index, vp, nbytes, shp, ndim, numeric):
    sig = _CSIG_WRITE

    def codegen(context, builder, sig, args):
        fn = _declare_c(builder, context, f"numba_ta_{ABI}_c_write", _CSIG_WRITE)
        return builder.call(fn, args)

    return sig, codegen


@intrinsic
def _c_call_stack(typingctx, ta, want):
    """Call c_stack with an out-record on the stack; return (status, the stacked array of ta's dtype)."""
    dt = ta.dtype
    nd = ta.ndim + 1
    arrty = types.Array(dt, nd, "C")
    sig = types.Tuple((types.int64, arrty))(ta, want)

    def codegen(context, builder, sig, args):
        fn = _declare_c(builder, context, f"numba_ta_{ABI}_c_stack", _CSIG_STACK)
        i64 = context.get_value_type(types.int64)
        rec = cgutils.alloca_once(builder, i64, size=16)
        sr = cgutils.create_struct_proxy(sig.args[0])(context, builder, value=args[0])
        mi = builder.bitcast(sr.meminfo, cgutils.voidptr_t)
        st = builder.call(fn, [mi, args[1], builder.bitcast(rec, context.get_value_type(types.CPointer(types.int64)))])
        ary = context.make_array(arrty)(context, builder)
        isz = context.get_abi_sizeof(context.get_data_type(dt))
        with builder.if_else(builder.icmp_signed("==", st, i64(0))) as (ok, bad):
            with ok:
                dims = [builder.load(builder.gep(rec, [cgutils.int32_t(3 + k)])) for k in range(nd)]
                # the shape counts items of dt: C-order strides from the item size
                strides = []
                acc = i64(isz)
                for d in reversed(dims):
                    strides.append(acc)
                    acc = builder.mul(acc, d)
                strides.reverse()
                meminfo = builder.inttoptr(builder.load(rec), cgutils.voidptr_t)
                data = builder.inttoptr(builder.load(builder.gep(rec, [cgutils.int32_t(1)])),
                                        context.get_data_type(dt).as_pointer())  # fmt: skip
                context.populate_array(ary, data=data, shape=dims, strides=strides, itemsize=i64(isz),
                                       meminfo=meminfo)  # fmt: skip
            with bad:
                pass
        return context.make_tuple(builder, sig.return_type, [st, ary._getvalue()])

    return sig, codegen


@overload_method(J.TensorArrayType, "write_c")
def _ol_write_c(ta, index, value):
    ndim = ta.ndim
    numeric = 1 if ta.dtype != types.boolean else 0

    def impl(ta, index, value):
        if J._fast_write(ta, index, value, ndim):
            return ta
        shape = E.shape_array(value.shape)
        J._class_check(ta, shape)
        flat = np.ascontiguousarray(value).reshape(-1).view(np.uint8)
        st = _c_call_write(_meminfo_of(ta), np.int64(index), J._ptr(flat), np.int64(flat.size), J._ptr(shape),
                           np.int64(shape.size), np.int64(numeric))  # fmt: skip
        if st:
            E.raise_status(J._state(ta), st)
        J._class_merge(ta, shape)
        return ta

    return impl


@overload_method(J.TensorArrayType, "stack_c")
def _ol_stack_c(ta):
    from numba.core.types import IntegerLiteral  # noqa: F401

    dt = ta.dtype
    ndim = ta.ndim
    ndim1 = ndim + 1

    def impl(ta):
        st, out = _c_call_stack(ta, np.int64(ndim))
        if st:
            E.raise_status(J._state(ta), st)
        return out

    return impl
