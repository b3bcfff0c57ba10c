"""Low-level numba intrinsics shared by the CPU kernels."""

from __future__ import annotations

import platform

import numba as nb
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

__all__ = ["atomic_add", "atomic_cas", "column_range", "column_share", "cycle_ticks",
           "dcsc_column_range", "load_acquire", "load_relaxed", "monotonic", "native_thread_id",
           "prefetch", "spin_pause", "store_release", "yield_cpu"]


@intrinsic
def prefetch(typingctx, arr, idx):  # type: ignore[no-untyped-def]
    """Hint the CPU to fetch ``arr[idx]`` into cache (no effect on results).

    Graph kernels are bound by the latency of jumping to the next adjacency
    list; asking for it a few iterations early measured 1.6x on a bottom-up
    step of a Kronecker scale-20 graph on this project's 2-core machine.
    """
    sig = types.void(arr, idx)

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        aryty = signature.args[0]
        ary = context.make_array(aryty)(context, builder, args[0])
        ptr = builder.gep(ary.data, [args[1]])
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, "llvm.prefetch.p0")
        # read access, high temporal locality, data cache
        builder.call(fn, [builder.bitcast(ptr, i8p), i32(0), i32(3), i32(1)])
        return context.get_dummy_value()

    return sig, codegen


# clock_gettime's id of the monotonic clock on Linux (what time.perf_counter reads).
_CLOCK_MONOTONIC = 1


def _monotonic_parts(builder):  # type: ignore[no-untyped-def]
    """Code that reads the monotonic clock: its (seconds, nanoseconds) as int64 values."""
    i32, i64 = ir.IntType(32), ir.IntType(64)
    timespec = ir.LiteralStructType([i64, i64])  # tv_sec, tv_nsec (64-bit Linux)
    ts = cgutils.alloca_once(builder, timespec)
    fnty = ir.FunctionType(i32, [i32, timespec.as_pointer()])
    fn = cgutils.get_or_insert_function(builder.module, fnty, "clock_gettime")
    builder.call(fn, [i32(_CLOCK_MONOTONIC), ts])
    return (builder.load(cgutils.gep_inbounds(builder, ts, 0, 0)),
            builder.load(cgutils.gep_inbounds(builder, ts, 0, 1)))


@intrinsic
def monotonic(typingctx):  # type: ignore[no-untyped-def]
    """Seconds on the monotonic clock, read from compiled code (``clock_gettime``).

    Declared as an external C function that the JIT resolves in the process,
    so a kernel that times itself stays cacheable: through a ctypes function
    pointer, numba compiled such a kernel afresh in every process (0.9 s
    before the first search of a run).
    """
    sig = types.float64()

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        f64 = ir.DoubleType()
        sec, nsec = _monotonic_parts(builder)
        return builder.fadd(builder.sitofp(sec, f64),
                            builder.fmul(builder.sitofp(nsec, f64), f64(1e-9)))

    return sig, codegen


# Where the cycle counter is an unprivileged, constant-rate clock (x86-64's time-stamp
# counter); elsewhere (an Arm cycle counter may trap in user space) cycle_ticks is the
# monotonic clock in nanoseconds.
_TSC = platform.machine().lower() in ("x86_64", "amd64")


@intrinsic
def cycle_ticks(typingctx):  # type: ignore[no-untyped-def]
    """A cheap clock in ticks of unknown length (int64): for per-level times.

    x86-64's time-stamp counter (``rdtsc``) where there is one, else
    :func:`monotonic` in nanoseconds. A caller converts ticks to seconds by
    reading both clocks at its start and end: :func:`monotonic` costs a
    ``clock_gettime`` call per reading, several times the counter's cost, which
    counted on a road network's thousand levels (docs/benchmarks.md).
    """
    sig = types.int64()

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i64 = ir.IntType(64)
        if _TSC:
            fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i64, []),
                                                "llvm.readcyclecounter")
            return builder.call(fn, [])
        sec, nsec = _monotonic_parts(builder)
        return builder.add(builder.mul(sec, i64(1_000_000_000)), nsec)

    return sig, codegen


@intrinsic
def native_thread_id(typingctx):  # type: ignore[no-untyped-def]
    """The calling thread's kernel id (Linux ``gettid``, glibc 2.30 and later).

    What ``threading.get_native_id`` gives in Python, for numba's pool
    workers, which Python cannot name: :class:`spbfs.threads.ThreadProbe`
    learns their ids from a parallel region. An external C function like
    :func:`monotonic`'s, so the kernel stays cacheable; check that the C
    library has ``gettid`` before compiling a caller (the JIT must resolve it).
    """
    sig = types.int64()

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        i32, i64 = ir.IntType(32), ir.IntType(64)
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(i32, []), "gettid")
        return builder.sext(builder.call(fn, []), i64)

    return sig, codegen


# -- atomics: the two threads of a top-down level team (spbfs.kernels.bfs_numba) -----------
#
# Each takes an integer array and an index; values are cast to the array's dtype.
# numba has no atomics on the CPU; these are LLVM's, with C++'s memory orders.


def _element_ptr(context, builder, aryty, ary, idx):  # type: ignore[no-untyped-def]
    arr = context.make_array(aryty)(context, builder, ary)
    return builder.gep(arr.data, [idx])


def _element_and_values(context, builder, signature, args):  # type: ignore[no-untyped-def]
    """The element's pointer and the further arguments cast to the array's dtype."""
    aryty = signature.args[0]
    ptr = _element_ptr(context, builder, aryty, args[0], args[1])
    return ptr, [context.cast(builder, a, t, aryty.dtype)
                 for a, t in zip(args[2:], signature.args[2:], strict=True)]


def _check_int_array(arr):  # type: ignore[no-untyped-def]
    if not (isinstance(arr, types.Array) and isinstance(arr.dtype, types.Integer)):
        raise nb.core.errors.TypingError(f"an integer array is needed, got {arr}")


def _load(ordering):  # type: ignore[no-untyped-def]
    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        ptr = _element_ptr(context, builder, signature.args[0], args[0], args[1])
        return builder.load_atomic(ptr, ordering, signature.return_type.bitwidth // 8)

    return codegen


@intrinsic
def load_relaxed(typingctx, arr, idx):  # type: ignore[no-untyped-def]
    """``arr[idx]`` read atomically, with no ordering (a plain load on x86-64)."""
    _check_int_array(arr)
    return arr.dtype(arr, idx), _load("monotonic")


@intrinsic
def load_acquire(typingctx, arr, idx):  # type: ignore[no-untyped-def]
    """``arr[idx]`` read atomically; later reads see what was written before its release."""
    _check_int_array(arr)
    return arr.dtype(arr, idx), _load("acquire")


def _store_release(context, builder, signature, args):  # type: ignore[no-untyped-def]
    ptr, (v,) = _element_and_values(context, builder, signature, args)
    builder.store_atomic(v, ptr, "release", signature.args[0].dtype.bitwidth // 8)
    return context.get_dummy_value()


def _cas(context, builder, signature, args):  # type: ignore[no-untyped-def]
    ptr, (cmp, val) = _element_and_values(context, builder, signature, args)
    return builder.extract_value(builder.cmpxchg(ptr, cmp, val, "seq_cst", "seq_cst"), 0)


def _add(context, builder, signature, args):  # type: ignore[no-untyped-def]
    ptr, (v,) = _element_and_values(context, builder, signature, args)
    return builder.atomic_rmw("add", ptr, v, "seq_cst")


@intrinsic
def store_release(typingctx, arr, idx, val):  # type: ignore[no-untyped-def]
    """``arr[idx] = val`` atomically, after every earlier write of this thread."""
    _check_int_array(arr)
    return types.void(arr, idx, val), _store_release


@intrinsic
def atomic_cas(typingctx, arr, idx, expected, new):  # type: ignore[no-untyped-def]
    """Compare-and-swap: ``arr[idx] = new`` if it holds ``expected``; returns the old value.

    Sequentially consistent (``lock cmpxchg`` on x86-64).
    """
    _check_int_array(arr)
    return arr.dtype(arr, idx, expected, new), _cas


@intrinsic
def atomic_add(typingctx, arr, idx, val):  # type: ignore[no-untyped-def]
    """``arr[idx] += val`` atomically; returns the old value (sequentially consistent)."""
    _check_int_array(arr)
    return arr.dtype(arr, idx, val), _add


@intrinsic
def spin_pause(typingctx):  # type: ignore[no-untyped-def]
    """A spin-wait hint (x86's ``pause``; nothing elsewhere): a waiting thread yields the
    core's shared resources and leaves the loop without a memory-order stall."""
    sig = types.void()

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        if _TSC:
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), []), "llvm.x86.sse2.pause")
            builder.call(fn, [])
        return context.get_dummy_value()

    return sig, codegen


@intrinsic
def yield_cpu(typingctx):  # type: ignore[no-untyped-def]
    """Give the core to another runnable thread (``sched_yield``): a thread that has spun
    long may be waiting for one that shares its core."""
    sig = types.void()

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        fn = cgutils.get_or_insert_function(
            builder.module, ir.FunctionType(ir.IntType(32), []), "sched_yield")
        builder.call(fn, [])
        return context.get_dummy_value()

    return sig, codegen


@nb.njit(cache=True, inline="always")
def column_range(ptr, jc, dcsc, u):  # type: ignore[no-untyped-def]
    """``(lo, hi)`` offsets of column ``u``'s entries in a block's ``ind``.

    The one place the kernels tell the formats apart: csr indexes ``ptr`` by
    the column itself, dcsc finds the column in ``jc`` first (an absent column
    is the empty range).
    """
    # Unsigned indices: no negative-index fix-up at each load.
    if dcsc:
        c = np.searchsorted(jc, u)
        if c < jc.shape[0] and jc[np.uint64(c)] == u:
            return np.int64(ptr[np.uint64(c)]), np.int64(ptr[np.uint64(c + 1)])
        return np.int64(0), np.int64(0)
    return np.int64(ptr[np.uint64(u)]), np.int64(ptr[np.uint64(u + 1)])


@nb.njit(cache=True, inline="always")
def column_share(ind, lo, hi, vlo, vhi):  # type: ignore[no-untyped-def]
    """The part of the sorted column ``ind[lo:hi]`` with ``vlo <= ind < vhi``, as offsets.

    How the threads of a parallel top-down step split the destinations: a long
    column is cut by binary search, so together they read each entry once; a
    short one is trimmed from both ends.
    """
    if hi - lo > 32:
        col = ind[lo:hi]
        return lo + np.searchsorted(col, vlo), lo + np.searchsorted(col, vhi)
    while lo < hi and ind[lo] < vlo:
        lo += 1
    while hi > lo and ind[hi - 1] >= vhi:
        hi -= 1
    return lo, hi


@nb.njit(cache=True, inline="always")
def dcsc_column_range(ptr, jc, aux, shift, u):  # type: ignore[no-untyped-def]
    """:func:`column_range` of a dcsc block, with its column index: no binary search over ``jc``.

    ``aux[c]`` is the first slot of ``jc`` holding a column ``>= c << shift``
    (Buluç and Gilbert's AUX array, see ``DCSCBlock.column_index``): column
    ``u`` can only sit in slots ``aux[u >> shift] .. aux[(u >> shift) + 1] - 1``,
    a handful on average. A chunk that holds many (clustered columns) is
    searched by bisection, so the worst case stays logarithmic.

    Callers branch on the format themselves (``if dcsc: ... else: ptr[u]``):
    a csr lookup hidden behind this call's runtime flag measured 2x slower on
    a road network's top-down levels (the inlined branches defeat LLVM's loop
    optimizations; the branch at the call site does not).
    """
    if shift == 0:
        # One column per chunk: aux[u + 1] - aux[u] is 1 where u has entries, 0
        # where not, so the range is two loads away, with no branch on jc.
        # Unsigned indices, here and below: no negative-index fix-up at each load.
        return (np.int64(ptr[np.uint64(aux[np.uint64(u)])]),
                np.int64(ptr[np.uint64(aux[np.uint64(u + 1)])]))
    c = np.uint64(u >> shift)
    lo = np.int64(aux[c])
    end = np.int64(aux[c + np.uint64(1)])
    hi = end
    while hi - lo > 8:  # the first slot >= u stays in lo .. hi
        mid = (lo + hi) >> 1
        if jc[np.uint64(mid)] < u:
            lo = mid + 1
        else:
            hi = mid
    while lo < end:
        x = jc[np.uint64(lo)]
        if x == u:
            return np.int64(ptr[np.uint64(lo)]), np.int64(ptr[np.uint64(lo + 1)])
        if x > u:
            break
        lo += 1
    return np.int64(0), np.int64(0)
