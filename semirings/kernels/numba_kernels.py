"""Compiled CPU kernels (numba).

Built-in semirings share one set of kernels in which the monoid and the binary
operator are small integer codes: the per-term ``if`` chain on a loop-invariant
code costs almost nothing next to the random memory accesses of a sparse
product, and it makes the compiled code independent of the semiring, so it is
compiled once per dtype combination and cached on disk (``cache=True``). A
closure per semiring would have to be recompiled in every process: numba cannot
cache closures over other compiled functions.

User-defined semirings (:meth:`Semiring.from_callables`) get the same kernel
bodies compiled with their own ``add``/``mul`` in place of the code switches
(not cached on disk: their functions live in the user's process); the compiled
kernels are kept on the semiring object.

Kernels
-------
``spmsv``
    Sparse accumulator (SPA: dense values, occupied flags and a list of the
    touched rows) over the columns named by a sparse ``x``, the method of seed
    003 Section 5.2; the output is sorted by sorting the touched list, or by a
    scan of the flags when most rows were touched.
``spmv`` ``push``
    The same kernel over every column (dense ``x``).
``spmv`` ``pull``
    Over the rows of ``B`` (columns of the cached transpose), in parallel;
    stops a row as soon as its accumulator reaches the monoid's terminal value,
    which is the bottom-up BFS step when the mask holds the visited vertices.
"""

from __future__ import annotations

import threading
import types as pytypes
from typing import Any

import numba as nb
import numpy as np
from numba import types
from numba.extending import overload

from semirings import ops
from semirings.ops import binary, monoid
from semirings.vector import SparseVector

__all__ = ["clear_workspace", "spmsv", "spmv"]

# Monoid codes.
A_PLUS, A_TIMES, A_MIN, A_MAX, A_LOR, A_LAND, A_ANY = range(7)
# Binary-operator codes.
M_TIMES, M_PLUS, M_MIN, M_MAX, M_LAND, M_LOR, M_FIRST, M_SECOND, M_PAIR, M_I, M_J = range(11)

_ADD_CODE = {
    id(monoid.plus): A_PLUS,
    id(monoid.times): A_TIMES,
    id(monoid.min): A_MIN,
    id(monoid.max): A_MAX,
    id(monoid.lor): A_LOR,
    id(monoid.land): A_LAND,
    id(monoid.any): A_ANY,
}
_MUL_CODE = {
    id(binary.times): M_TIMES,
    id(binary.plus): M_PLUS,
    id(binary.min): M_MIN,
    id(binary.max): M_MAX,
    id(binary.land): M_LAND,
    id(binary.lor): M_LOR,
    id(binary.first): M_FIRST,
    id(binary.second): M_SECOND,
    id(binary.pair): M_PAIR,
    id(binary.firsti): M_I,
    id(binary.firstj): M_J,
    id(binary.secondi): M_J,
}

# Terminal modes of a monoid (runtime arguments of the kernels).
T_NONE, T_VALUE, T_ANY = 0, 1, 2

# The scalar semantics stay defined once, in ops.py.
_s_plus = nb.njit(ops._plus)
_s_times = nb.njit(ops._times)
_s_min = nb.njit(ops._min)
_s_max = nb.njit(ops._max)
_s_lor = nb.njit(ops._lor)
_s_land = nb.njit(ops._land)


def _cast(v, proto):  # pragma: no cover - replaced by the overload in compiled code
    """``v`` converted to the dtype of array ``proto``."""
    raise NotImplementedError


@overload(_cast)
def _cast_ov(v, proto):
    dt = proto.dtype
    if isinstance(dt, types.Boolean):
        return lambda v, proto: v != 0
    return lambda v, proto: dt(v)


@nb.njit
def _mul(code, data, p, b, i, j, proto):
    # ``data[p]`` is read only by the operators that use it: second, secondi and pair
    # never touch the block's values.
    if code == M_SECOND:
        return _cast(b, proto)
    elif code == M_J:
        return _cast(j, proto)
    elif code == M_I:
        return _cast(i, proto)
    elif code == M_PAIR:
        return _cast(1, proto)
    elif code == M_FIRST:
        return _cast(data[p], proto)
    elif code == M_TIMES:
        return _cast(_s_times(data[p], b), proto)
    elif code == M_PLUS:
        return _cast(_s_plus(data[p], b), proto)
    elif code == M_MIN:
        return _cast(_s_min(data[p], b), proto)
    elif code == M_MAX:
        return _cast(_s_max(data[p], b), proto)
    elif code == M_LAND:
        return _cast(_s_land(data[p], b), proto)
    else:
        return _cast(_s_lor(data[p], b), proto)


@nb.njit
def _add(code, x, y, proto):
    if code == A_MIN:
        return _cast(_s_min(x, y), proto)
    elif code == A_ANY:
        return x
    elif code == A_PLUS:
        return _cast(_s_plus(x, y), proto)
    elif code == A_MAX:
        return _cast(_s_max(x, y), proto)
    elif code == A_LOR:
        return _cast(_s_lor(x, y), proto)
    elif code == A_LAND:
        return _cast(_s_land(x, y), proto)
    else:
        return _cast(_s_times(x, y), proto)


@nb.njit
def _accumulate(add, mul, ptr, ind, data, a_pat, lo, hi, b, gj, mask, mask_mode, row_off,
                spa, occ, lst, cnt, term_mode):
    """Add the terms of one column (entries ``lo:hi``) into the SPA; returns the new count."""
    for p in range(lo, hi):
        i = ind[p]
        if mask_mode != 0 and mask[i] == (mask_mode == 2):
            continue
        seen = occ[i]
        if seen and term_mode == T_ANY:
            continue  # the first term decides: skip computing the others
        # (Testing for a terminal *value* here would cost as much as the add it saves;
        # the pull kernel uses it, where it cuts the scan of a row short.)
        t = _mul(mul, data, 0 if a_pat else p, b, i + row_off, gj, spa)
        if seen:
            spa[i] = _add(add, spa[i], t, spa)
        else:
            spa[i] = t
            occ[i] = True
            lst[cnt] = i
            cnt += 1
    return cnt


@nb.njit
def _radix_sort(a, bound):
    """Sorted copy of non-negative ints ``a`` (all < ``bound``): LSD radix, 8-bit digits.

    O(len(a) * log256(bound)); also far cheaper to compile than ``np.sort``.
    """
    n = a.shape[0]
    src = a.copy()
    dst = np.empty(n, np.int64)
    counts = np.empty(257, np.int64)
    shift = 0
    while shift == 0 or ((bound - 1) >> shift) > 0:
        for d in range(257):
            counts[d] = 0
        for k in range(n):
            counts[((src[k] >> shift) & 255) + 1] += 1
        for d in range(256):
            counts[d + 1] += counts[d]
        for k in range(n):
            d = (src[k] >> shift) & 255
            dst[counts[d]] = src[k]
            counts[d] += 1
        src, dst = dst, src
        shift += 8
    return src


@nb.njit
def _finish(spa, occ, lst, cnt):
    """Sorted (indices, values) of the touched rows; clears their occupied flags."""
    n = occ.shape[0]
    # Sorting the touched list costs ~cnt log cnt; scanning the flags ~n/8 (cheap, sequential).
    if cnt > 0 and cnt * np.log2(cnt + 1) * 8 > n:
        idx = np.empty(cnt, np.int64)
        k = 0
        for i in range(n):
            if occ[i]:
                idx[k] = i
                k += 1
    else:
        idx = _radix_sort(lst[:cnt], n)
    vals = np.empty(cnt, spa.dtype)
    for k in range(cnt):
        i = idx[k]
        vals[k] = spa[i]
        occ[i] = False  # the workspace goes back clean: O(cnt), not O(n)
    return idx, vals


@nb.njit(cache=True)
def _spmsv_kernel(add, mul, ptr, ind, data, a_pat, jc, is_dcsc, xidx, xval, x_pat,
                  mask, mask_mode, row_off, col_off, spa, occ, term_mode):
    nx = xidx.shape[0]
    nzc = jc.shape[0]
    starts = np.empty(nx, np.int64)
    stops = np.empty(nx, np.int64)
    total = 0
    for k in range(nx):
        j = xidx[k]
        lo = 0
        hi = 0
        if is_dcsc:
            c = np.searchsorted(jc, j)
            if c < nzc and jc[c] == j:
                lo = ptr[c]
                hi = ptr[c + 1]
        else:
            lo = ptr[j]
            hi = ptr[j + 1]
        starts[k] = lo
        stops[k] = hi
        total += hi - lo
    lst = np.empty(min(total, occ.shape[0]), np.int64)
    cnt = 0
    for k in range(nx):
        b = xval[0] if x_pat else xval[k]
        cnt = _accumulate(add, mul, ptr, ind, data, a_pat, starts[k], stops[k], b,
                          xidx[k] + col_off, mask, mask_mode, row_off, spa, occ, lst, cnt,
                          term_mode)
    return _finish(spa, occ, lst, cnt)


@nb.njit(cache=True, parallel=True)
def _spmv_pull_kernel(add, mul, tptr, tind, tdata, a_pat, tjc, is_dcsc, x, present, has_present,
                      mask, mask_mode, row_off, col_off, vals, hit, term_mode, term_val):
    # tptr/tind/tdata/tjc: the transpose, so column r of it is row i of B.
    nr = tjc.shape[0] if is_dcsc else tptr.shape[0] - 1
    for r in nb.prange(nr):
        i = np.int64(tjc[r]) if is_dcsc else np.int64(r)
        if mask_mode != 0 and mask[i] == (mask_mode == 2):
            continue
        found = False
        acc = vals[i]
        gi = i + row_off
        for p in range(tptr[r], tptr[r + 1]):
            j = tind[p]
            if has_present and not present[j]:
                continue
            t = _mul(mul, tdata, 0 if a_pat else p, x[j], gi, j + col_off, vals)
            if found:
                acc = _add(add, acc, t, vals)
            else:
                acc = t
                found = True
            if term_mode == T_ANY or (term_mode == T_VALUE and acc == term_val):
                break
        if found:
            vals[i] = acc
            hit[i] = True


# -- user-defined semirings ------------------------------------------------------------
def _user_kernels(semiring: Any) -> dict[str, Any]:
    """The kernel bodies compiled with ``semiring``'s own scalar functions (kept on it)."""
    kernels = semiring._kernels.get("numba")
    if kernels is not None:
        return kernels
    add_f = semiring.add.njit if id(semiring.add) not in _ADD_CODE else None
    add_code = _ADD_CODE.get(id(semiring.add))
    mul = semiring.mul

    if add_f is None:
        def add_py(code, x, y, proto):
            return _add(add_code, x, y, proto)
    else:
        def add_py(code, x, y, proto):
            return _cast(add_f(x, y), proto)

    if mul.position == "i":
        def mul_py(code, data, p, b, i, j, proto):
            return _cast(i, proto)
    elif mul.position == "j":
        def mul_py(code, data, p, b, i, j, proto):
            return _cast(j, proto)
    else:
        mul_f = mul.njit

        def mul_py(code, data, p, b, i, j, proto):
            return _cast(mul_f(data[p], b), proto)

    # The module's kernel bodies, compiled against a copy of its globals in which the
    # code switches are replaced by this semiring's functions.
    g = dict(globals())
    g["_add"], g["_mul"] = nb.njit(add_py), nb.njit(mul_py)
    acc = _accumulate.py_func
    g["_accumulate"] = nb.njit(pytypes.FunctionType(acc.__code__, g, acc.__name__))

    def rebuild(disp: Any, **options: Any) -> Any:
        py = disp.py_func
        return nb.njit(**options)(pytypes.FunctionType(py.__code__, g, py.__name__))

    kernels = {
        "spmsv": rebuild(_spmsv_kernel),
        "pull": rebuild(_spmv_pull_kernel, parallel=True),
    }
    semiring._kernels["numba"] = kernels
    return kernels


def _check_compiles(semiring: Any, a_dt: np.dtype, x_dt: np.dtype, out_dt: np.dtype) -> None:
    """Compile the user's scalar functions first, so a failure names the callable."""
    from numba.core.errors import NumbaError

    checks = []
    if id(semiring.mul) not in _MUL_CODE and semiring.mul.position is None:
        checks.append(("mul", semiring.mul.func, semiring.mul.njit, (a_dt, x_dt)))
    if id(semiring.add) not in _ADD_CODE:
        checks.append(("add", semiring.add.op, semiring.add.njit, (out_dt, out_dt)))
    for role, func, disp, dts in checks:
        sig = tuple(nb.from_dtype(d) for d in dts)
        try:
            disp.compile(sig)
        except NumbaError as exc:
            raise TypeError(
                f"semiring {semiring.name!r}: numba cannot compile the {role} callable "
                f"{func!r} for operands ({', '.join(map(str, dts))}): "
                f"{str(exc).splitlines()[0]}"
            ) from None


# -- plans: per (semiring, dtypes) constants, computed once --------------------------
_ONE = np.ones(1, dtype=np.bool_)
_EMPTY_BOOL = np.zeros(0, dtype=np.bool_)


class _Workspace(threading.local):
    """Per-thread sparse accumulator kept between calls (one SPA per process, as Buluç et al. 2017).

    A fresh n-sized accumulator costs its page faults on every call, which
    dominates small frontiers; this one is reused and returned clean by the
    kernels (they clear the flags they set), so it never changes a result.
    """

    def __init__(self) -> None:
        self.occ = np.zeros(0, dtype=np.bool_)
        self.spa: dict[np.dtype, np.ndarray] = {}

    def get(self, n: int, dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
        if self.occ.shape[0] < n:
            self.occ = np.zeros(n, dtype=np.bool_)
        spa = self.spa.get(dtype)
        if spa is None or spa.shape[0] < n:
            spa = self.spa[dtype] = np.empty(n, dtype=dtype)
        # Taken out while in use: a kernel that raises cannot hand back dirty flags.
        occ, self.occ = self.occ, np.zeros(0, dtype=np.bool_)
        return spa[:n], occ

    def put(self, occ: np.ndarray) -> None:
        if occ.shape[0] >= self.occ.shape[0]:
            self.occ = occ


_workspace = _Workspace()


def clear_workspace() -> None:
    """Free this thread's cached accumulator (it is rebuilt on the next call)."""
    _workspace.__init__()


def _plan(semiring: Any, a_dt: np.dtype, x_dt: np.dtype) -> tuple:
    key = ("plan", a_dt, x_dt)
    plan = semiring._kernels.get(key)
    if plan is None:
        out_dt = semiring.output_dtype(a_dt, x_dt)
        add_code = _ADD_CODE.get(id(semiring.add))
        mul_code = _MUL_CODE.get(id(semiring.mul))
        if add_code is None or mul_code is None:
            _check_compiles(semiring, a_dt, x_dt, out_dt)
            kernels = _user_kernels(semiring)
            add_code, mul_code = -1, -1
        else:
            kernels = {"spmsv": _spmsv_kernel, "pull": _spmv_pull_kernel}
        term = semiring.add.terminal_for(out_dt)
        if term is ops.ANY:
            term_mode, term_val = T_ANY, semiring.add.identity_for(out_dt)
        elif term is None:
            term_mode, term_val = T_NONE, semiring.add.identity_for(out_dt)
        else:
            term_mode, term_val = T_VALUE, term
        plan = (kernels, add_code, mul_code, out_dt, term_mode, term_val)
        semiring._kernels[key] = plan
    return plan


def _operand(values: Any) -> tuple[Any, bool, np.dtype]:
    if values is None:
        return _ONE, True, np.dtype(np.bool_)
    return values, False, values.dtype


def _mask_args(mask: Any, mode: int) -> tuple[Any, int]:
    return (_EMPTY_BOOL, 0) if mask is None else (mask, mode)


def _jc(block: Any) -> tuple[Any, bool]:
    # csr passes an empty jc of the same dtype, so both formats share compiled code.
    if block.jc is None:
        return np.zeros(0, dtype=block.ind.dtype), False
    return block.jc, True


def _spa(block: Any, cols: Any, xval: Any, x_pat: bool, plan: tuple, mask: Any, mode: int,
         row_offset: int, col_offset: int) -> SparseVector:
    kernels, add, mul, out_dt, term_mode, _ = plan
    data, a_pat, _ = _operand(block.data)
    jc, is_dcsc = _jc(block)
    nrows = block.shape[0]
    mask, mode = _mask_args(mask, mode)
    spa, occ = _workspace.get(nrows, out_dt)
    idx, vals = kernels["spmsv"](
        add, mul, block.ptr, block.ind, data, a_pat, jc, is_dcsc, cols, xval, x_pat,
        mask, mode, row_offset, col_offset, spa, occ[:nrows], term_mode,
    )
    _workspace.put(occ)
    return SparseVector(idx, vals, nrows, check=False)


def spmsv(block: Any, x: SparseVector, semiring: Any, mask: Any, mode: int,
          row_offset: int, col_offset: int) -> SparseVector:
    """``B ⊕.⊗ x`` for a sparse ``x`` (arguments already validated by the dispatcher)."""
    xval, x_pat, x_dt = _operand(x.values)
    plan = _plan(semiring, _operand(block.data)[2], x_dt)
    return _spa(block, x.indices, xval, x_pat, plan, mask, mode, row_offset, col_offset)


def spmv(block: Any, x: Any, present: Any, semiring: Any, mask: Any, mode: int,
         row_offset: int, col_offset: int, method: str = "push") -> SparseVector:
    """``B ⊕.⊗ x`` for a dense ``x`` (``present`` marks its entries, None = all)."""
    a_pat_dt = _operand(block.data)[2]
    plan = _plan(semiring, a_pat_dt, x.dtype)
    if method != "pull":
        # Push is the SPA kernel over every (present) column.
        if block.jc is not None:
            cols = block.jc.astype(np.int64)
            if present is not None:
                cols = cols[present[cols]]
            xval = x[cols]
        elif present is not None:
            cols = np.flatnonzero(present)
            xval = x[cols]
        else:
            cols, xval = np.arange(block.shape[1], dtype=np.int64), x
        return _spa(block, cols, xval, False, plan, mask, mode, row_offset, col_offset)
    kernels, add, mul, out_dt, term_mode, term_val = plan
    nrows = block.shape[0]
    t = block.transpose()
    tdata, a_pat, _ = _operand(t.data)
    tjc, is_dcsc = _jc(t)
    has_present = present is not None
    mask, mode = _mask_args(mask, mode)
    vals = np.empty(nrows, out_dt)
    hit = np.zeros(nrows, np.bool_)
    kernels["pull"](
        add, mul, t.ptr, t.ind, tdata, a_pat, tjc, is_dcsc, x,
        present if has_present else _EMPTY_BOOL, has_present, mask, mode, row_offset,
        col_offset, vals, hit, term_mode, term_val,
    )
    idx = np.flatnonzero(hit)
    return SparseVector(idx, vals[idx], nrows, check=False)
