"""Per-call cost of a call through an address against an inlined call, inside one @njit loop.

``python dev/compile-by-address/percall.py [--reps 7] [--n 1000000]``

A tiny engine-like op, a checked write of a 64-float32 row with a status return (and its read),
run 10^6 times in one compiled loop, called:

``inline``   register_jitable (compiled into the loop: today's design)
``A2``       an @njit(cache=True) entry called by symbol with Numba's calling convention (arrays cross
             as Numba's array structs; the allocating read returns a new array)
``A1``       a cfunc (C ABI) called by symbol (pointers and lengths cross)
``B``        the same cfunc passed to the loop as a first-class function (``types.FunctionType``)
``B-table``  the cfunc's address read from an int64 array at run time, called through inttoptr

against numpy (``data[i] = row``; ``out[:] = data[i]``; ``data[i].copy()``).  Then the real
TensorArray: today's ``write``/``read`` (inlined fast paths), the prototype's ``write_x``/``read_x``
(the same fast paths inlined, the rest by address: expected equal), and the engine's FULL write op
(``E.write``: every TF check, no fast path) inlined vs called through the A2 symbol.
"""

from __future__ import annotations

import argparse
import statistics
import time

import llvmlite.binding as llb
import numpy as np
from numba import cfunc, njit, types
from numba.core import cgutils
from numba.extending import intrinsic, register_jitable

import numba_ta
from numba_ta import _engine as E
from numba_ta import _jit as J

_ptr = E._ptr

W = 64
M = 1024  # rows of the tiny op's buffer (the loop writes row i % M)

F32_2D = types.Array(types.float32, 2, "C")
F32 = types.Array(types.float32, 1, "C")
U8 = types.Array(types.uint8, 1, "C")


@register_jitable
def tiny_write(data, state, i, row):
    if i < 0 or i >= state.size:
        return 1
    if row.size != data.shape[1]:
        return 2
    for k in range(row.size):
        data[i, k] = row[k]
    state[i] = 1
    return 0


@register_jitable
def tiny_read(data, state, i, out):
    if i < 0 or i >= state.size or state[i] == 0:
        return 1
    for k in range(out.size):
        out[k] = data[i, k]
    return 0


@register_jitable
def tiny_read_alloc(data, state, i):
    out = np.empty(data.shape[1], np.float32)
    if i < 0 or i >= state.size or state[i] == 0:
        return 1, out
    for k in range(out.size):
        out[k] = data[i, k]
    return 0, out


# ---- A2: Numba-ABI entries by symbol
@njit(cache=True, nogil=True)
def nb_write(data, state, i, row):
    return tiny_write(data, state, i, row)


@njit(cache=True, nogil=True)
def nb_read(data, state, i, out):
    return tiny_read(data, state, i, out)


@njit(cache=True, nogil=True)
def nb_read_alloc(data, state, i):
    return tiny_read_alloc(data, state, i)


A2 = {
    "pc_nb_write": (nb_write, (F32_2D, U8, types.int64, F32), types.int64),
    "pc_nb_read": (nb_read, (F32_2D, U8, types.int64, F32), types.int64),
    "pc_nb_read_alloc": (nb_read_alloc, (F32_2D, U8, types.int64), types.Tuple((types.int64, F32))),
}


def register_a2():
    for name, (disp, args, ret) in A2.items():
        disp.compile(ret(*args))
        cres = disp.overloads[args]
        llb.add_symbol(name, cres.library.get_pointer_to_function(cres.fndesc.llvm_func_name))


def _a2_intrinsic(name):
    _, argtys, ret = A2[name]

    def typer(typingctx, *args):
        return ret(*argtys), codegen

    def codegen(context, builder, sig, args):
        fnty = context.call_conv.get_function_type(ret, argtys)
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        status, res = context.call_conv.call_function(builder, fn, ret, argtys, args)
        with cgutils.if_unlikely(builder, status.is_error):
            context.call_conv.return_status_propagate(builder, status)
        return res

    return typer


@intrinsic
def a2_write(typingctx, data, state, i, row):
    return _a2_intrinsic("pc_nb_write")(typingctx)


@intrinsic
def a2_read(typingctx, data, state, i, out):
    return _a2_intrinsic("pc_nb_read")(typingctx)


@intrinsic
def a2_read_alloc(typingctx, data, state, i):
    return _a2_intrinsic("pc_nb_read_alloc")(typingctx)


# ---- A1 / B: C-ABI cfuncs
P32, PU8 = types.CPointer(types.float32), types.CPointer(types.uint8)
CSIG = types.int64(P32, types.int64, types.int64, PU8, types.int64, P32, types.int64)


@register_jitable
def ptr_write(dp, m, w, sp, i, rp, n):
    """The tiny write on pointers (the body of the cfunc, and of the "inline (pointers)" loop)."""
    if i < 0 or i >= m:
        return 1
    if n != w:
        return 2
    o = i * w
    for k in range(n):
        dp[o + k] = rp[k]
    sp[i] = 1
    return 0


@register_jitable
def ptr_read(dp, m, w, sp, i, op, n):
    if i < 0 or i >= m or sp[i] == 0:
        return 1
    o = i * w
    for k in range(n):
        op[k] = dp[o + k]
    return 0


@cfunc(CSIG, cache=True, nogil=True)
def c_write(dp, m, w, sp, i, rp, n):
    return ptr_write(dp, m, w, sp, i, rp, n)


@cfunc(CSIG, cache=True, nogil=True)
def c_read(dp, m, w, sp, i, op, n):
    return ptr_read(dp, m, w, sp, i, op, n)


@njit
def loop_inline_ptr_write(data, state, row, n):
    bad = 0
    dp, sp, rp = _ptr(data), _ptr(state), _ptr(row)
    for j in range(n):
        bad += ptr_write(dp, M, W, sp, j & (M - 1), rp, W)
    return bad


@njit
def loop_inline_ptr_read(data, state, out, n):
    s = 0.0
    dp, sp, op = _ptr(data), _ptr(state), _ptr(out)
    for j in range(n):
        ptr_read(dp, M, W, sp, j & (M - 1), op, W)
        s += out[0]
    return s


def register_c():
    llb.add_symbol("pc_c_write", c_write.address)
    llb.add_symbol("pc_c_read", c_read.address)


def _c_codegen(name):
    def codegen(context, builder, sig, args):
        ll = [context.get_value_type(t) for t in CSIG.args]
        fnty = cgutils.ir.FunctionType(context.get_value_type(types.int64), ll)
        fn = cgutils.get_or_insert_function(builder.module, fnty, name)
        return builder.call(fn, args)

    return codegen


@intrinsic
def a1_write(typingctx, dp, m, w, sp, i, rp, n):
    return CSIG, _c_codegen("pc_c_write")


@intrinsic
def a1_read(typingctx, dp, m, w, sp, i, op, n):
    return CSIG, _c_codegen("pc_c_read")


@intrinsic
def call_addr(typingctx, addr, dp, m, w, sp, i, rp, n):
    """Call the C function at ``addr`` (an int64 read at run time) with CSIG's arguments."""
    sig = types.int64(types.int64, *CSIG.args)

    def codegen(context, builder, sig, args):
        ll = [context.get_value_type(t) for t in CSIG.args]
        fnty = cgutils.ir.FunctionType(context.get_value_type(types.int64), ll)
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        return builder.call(fn, args[1:])

    return sig, codegen




# ---- the loops
@njit
def loop_numpy_write(data, row, n):
    for j in range(n):
        data[j & (M - 1)] = row
    return 0


@njit
def loop_numpy_read(data, out, n):
    s = 0.0
    for j in range(n):
        out[:] = data[j & (M - 1)]
        s += out[0]
    return s


@njit
def loop_numpy_read_alloc(data, n):
    s = 0.0
    for j in range(n):
        out = data[j & (M - 1)].copy()
        s += out[0]
    return s


@njit
def loop_inline_write(data, state, row, n):
    bad = 0
    for j in range(n):
        bad += tiny_write(data, state, j & (M - 1), row)
    return bad


@njit
def loop_inline_read(data, state, out, n):
    s = 0.0
    for j in range(n):
        tiny_read(data, state, j & (M - 1), out)
        s += out[0]
    return s


@njit
def loop_inline_read_alloc(data, state, n):
    s = 0.0
    for j in range(n):
        st, out = tiny_read_alloc(data, state, j & (M - 1))
        s += out[0]
    return s


@njit
def loop_a2_write(data, state, row, n):
    bad = 0
    for j in range(n):
        bad += a2_write(data, state, j & (M - 1), row)
    return bad


@njit
def loop_a2_read(data, state, out, n):
    s = 0.0
    for j in range(n):
        a2_read(data, state, j & (M - 1), out)
        s += out[0]
    return s


@njit
def loop_a2_read_alloc(data, state, n):
    s = 0.0
    for j in range(n):
        st, out = a2_read_alloc(data, state, j & (M - 1))
        s += out[0]
    return s


@njit
def loop_a1_write(data, state, row, n):
    bad = 0
    dp, sp, rp = _ptr(data), _ptr(state), _ptr(row)
    for j in range(n):
        bad += a1_write(dp, M, W, sp, j & (M - 1), rp, W)
    return bad


@njit
def loop_a1_read(data, state, out, n):
    s = 0.0
    dp, sp, op = _ptr(data), _ptr(state), _ptr(out)
    for j in range(n):
        a1_read(dp, M, W, sp, j & (M - 1), op, W)
        s += out[0]
    return s


@njit
def loop_b_write(fn, data, state, row, n):
    bad = 0
    dp, sp, rp = _ptr(data), _ptr(state), _ptr(row)
    for j in range(n):
        bad += fn(dp, M, W, sp, j & (M - 1), rp, W)
    return bad


@njit
def loop_b_read(fn, data, state, out, n):
    s = 0.0
    dp, sp, op = _ptr(data), _ptr(state), _ptr(out)
    for j in range(n):
        fn(dp, M, W, sp, j & (M - 1), op, W)
        s += out[0]
    return s


@njit
def loop_btable_write(table, data, state, row, n):
    bad = 0
    dp, sp, rp = _ptr(data), _ptr(state), _ptr(row)
    for j in range(n):
        bad += call_addr(table[0], dp, M, W, sp, j & (M - 1), rp, W)
    return bad


@njit
def loop_btable_read(table, data, state, out, n):
    s = 0.0
    dp, sp, op = _ptr(data), _ptr(state), _ptr(out)
    for j in range(n):
        call_addr(table[1], dp, M, W, sp, j & (M - 1), op, W)
        s += out[0]
    return s


# ---- the real TensorArray
@njit
def ta_write_today(ta, rows):
    for i in range(rows.shape[0]):
        ta = ta.write(i, rows[i])
    return ta


@njit
def ta_read_today(ta, n):
    s = 0.0
    for i in range(n):
        s += ta.read(i)[0]
    return s


@njit
def ta_full_write_inline(ta, rows):
    """The engine's whole write op (every TF check; no fast path), compiled into the loop."""
    s = J._state(ta)
    shape = E.shape_array(rows.shape[1:])
    bad = 0
    for i in range(rows.shape[0]):
        bad += E.write(s, i, rows[i].view(np.uint8), shape, True)
    return bad


def _percall_x():
    import engine_abi as A

    A.register()

    @njit
    def ta_write_x(ta, rows):
        for i in range(rows.shape[0]):
            ta = ta.write_x(i, rows[i])
        return ta

    @njit
    def ta_read_x(ta, n):
        s = 0.0
        for i in range(n):
            s += ta.read_x(i)[0]
        return s

    @njit
    def ta_full_write_address(ta, rows):
        """The same whole op through the A2 symbol (its class check/merge included)."""
        shape = E.shape_array(rows.shape[1:])
        bad = 0
        for i in range(rows.shape[0]):
            bad += A._call_write(ta, np.int64(i), rows[i].view(np.uint8), shape, True)
        return bad

    return ta_write_x, ta_read_x, ta_full_write_address


def bench(fn, args, reps, n):
    fn(*args)  # compile
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        fn(*args)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) / n * 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--rows", type=int, default=65536)
    a = ap.parse_args()
    n, reps = a.n, a.reps
    register_a2()
    register_c()
    data = np.zeros((M, W), np.float32)
    state = np.zeros(M, np.uint8)
    row = np.arange(W, dtype=np.float32)
    out = np.empty(W, np.float32)
    table = np.array([c_write.address, c_read.address], np.int64)
    loop_inline_write(data, state, row, M)  # every row written (the reads succeed)

    res = {}
    res["numpy write data[i] = row"] = bench(loop_numpy_write, (data, row, n), reps, n)
    res["inline write (2-D array indexing)"] = bench(loop_inline_write, (data, state, row, n), reps, n)
    res["inline write (pointers: the cfunc's body)"] = bench(loop_inline_ptr_write, (data, state, row, n), reps, n)
    res["A2 write (Numba ABI, symbol; arrays cross)"] = bench(loop_a2_write, (data, state, row, n), reps, n)
    res["A1 write (C ABI, symbol)"] = bench(loop_a1_write, (data, state, row, n), reps, n)
    res["B write (FunctionType arg)"] = bench(loop_b_write, (c_write, data, state, row, n), reps, n)
    res["B-table write (inttoptr)"] = bench(loop_btable_write, (table, data, state, row, n), reps, n)
    res["numpy read out[:] = data[i]"] = bench(loop_numpy_read, (data, out, n), reps, n)
    res["inline read into out (2-D array indexing)"] = bench(loop_inline_read, (data, state, out, n), reps, n)
    res["inline read into out (pointers)"] = bench(loop_inline_ptr_read, (data, state, out, n), reps, n)
    res["A2 read into out"] = bench(loop_a2_read, (data, state, out, n), reps, n)
    res["A1 read into out"] = bench(loop_a1_read, (data, state, out, n), reps, n)
    res["B read into out"] = bench(loop_b_read, (c_read, data, state, out, n), reps, n)
    res["B-table read into out"] = bench(loop_btable_read, (table, data, state, out, n), reps, n)
    res["numpy read data[i].copy()"] = bench(loop_numpy_read_alloc, (data, n), reps, n)
    res["inline read, new array"] = bench(loop_inline_read_alloc, (data, state, n), reps, n)
    res["A2 read, new array (returned across)"] = bench(loop_a2_read_alloc, (data, state, n), reps, n)

    # the real TensorArray (rows written into a fresh fixed-size array each repetition)
    rows = np.random.rand(a.rows, W).astype(np.float32)
    ta_write_x, ta_read_x, ta_full_write_address = _percall_x()

    def fresh(car=False):
        return numba_ta.TensorArray(np.float32, size=a.rows, element_shape=(W,), clear_after_read=car)

    def bench_ta(fn, make_args):
        fn(*make_args())
        ts = []
        for _ in range(reps):
            args = make_args()
            t = time.perf_counter()
            fn(*args)
            ts.append(time.perf_counter() - t)
        return statistics.median(ts) / a.rows * 1e9

    def written():
        ta = fresh()
        ta_write_today(ta, rows)
        return ta, a.rows

    res["numpy write, TA-sized rows (same loop shape)"] = bench(loop_numpy_write, (np.zeros((M, W), np.float32), row, a.rows), reps, a.rows)  # noqa: E501
    res["TA write today (inlined fast path)"] = bench_ta(ta_write_today, lambda: (fresh(), rows))
    res["TA write_x (fast path inlined, rest by A2)"] = bench_ta(ta_write_x, lambda: (fresh(), rows))
    res["TA read today (inlined fast path)"] = bench_ta(ta_read_today, written)
    res["TA read_x (fast path inlined, rest by A2)"] = bench_ta(ta_read_x, written)
    t = time.perf_counter()
    ta_full_write_inline(fresh(), rows[:2])
    compile_inline = time.perf_counter() - t
    res["engine FULL write op, inlined"] = bench_ta(ta_full_write_inline, lambda: (fresh(), rows))
    res["engine FULL write op, by A2 symbol"] = bench_ta(ta_full_write_address, lambda: (fresh(), rows))
    print(f"n={n} (tiny ops), rows={a.rows} (TensorArray), median of {reps} repetitions; ns per op")
    for k, v in res.items():
        print(f"  {k:48s} {v:8.1f}")
    print(f"  (compile of the loop with the full engine write inlined: {compile_inline:.1f} s)")


if __name__ == "__main__":
    main()
