"""Array-module-generic kernels: numpy on the CPU, cupy on the GPU.

Every step is a whole-array operation on ``xp = block.backend.xp``:

1. gather the entries of the needed columns (positions into ``ind``/``data``),
2. drop the rows the mask excludes,
3. apply the binary operator to all terms at once,
4. reduce the terms per row.

Step 4 has two methods, chosen by size (measured with numpy on int64 ``min``,
2**16 to 2**22 rows and 10**3 to 10**7 terms): a dense sparse accumulator
(``ufunc.at`` into an identity-filled array of ``nrows``, then the occupied
rows; Buluç et al. 2017, Section 5.2) costs O(terms + nrows), and a sort of the terms by
row followed by ``ufunc.reduceat`` costs O(terms log terms). The sort wins
when the terms are fewer than about ``nrows / 32`` (a small frontier in a large
block), the accumulator everywhere else. Early exit at a terminal value is
pointless here: all terms are computed anyway.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from semirings.vector import SparseVector

__all__ = ["spmsv", "spmv"]

#: Reduce by sorting when ``terms * SORT_RATIO < nrows``, else with a dense accumulator.
SORT_RATIO = 32


def _owner(xp: Any, lengths: Any, ends: Any, total: int) -> Any:
    """For each of ``total`` gathered entries, the index of the segment it came from."""
    if xp is np:
        return np.repeat(np.arange(lengths.shape[0], dtype=np.int64), lengths)
    # cupy.repeat takes no array of counts; a binary search per entry is GPU-friendly.
    return xp.searchsorted(ends, xp.arange(total, dtype=np.int64), side="right")


def _is_object(uf: Any) -> bool:
    return isinstance(uf, np.ufunc) and uf.types[0].endswith("O")


def _placeholder(xp: Any, dtype: np.dtype, n: int) -> Any:
    # A read-only length-n view of a single 1: an unused or pattern operand costs nothing.
    return xp.broadcast_to(xp.ones((), dtype=dtype), (n,))


def _terms(
    xp: Any,
    semiring: Any,
    a: Any,
    a_dtype: np.dtype,
    b: Any,
    b_dtype: np.dtype,
    rows: Any,
    cols: Any,
    row_offset: int,
    col_offset: int,
) -> Any:
    """``mul(B[i, j], x[j])`` for every term; ``a``/``b``/``cols`` are callables (lazy)."""
    mul = semiring.mul
    n = rows.shape[0]
    if mul.position == "i":
        return rows.astype(np.int64) + row_offset
    if mul.position == "j":
        return cols() + col_offset
    av = a() if (mul.uses[0] and a is not None) else _placeholder(xp, a_dtype, n)
    bv = b() if (mul.uses[1] and b is not None) else _placeholder(xp, b_dtype, n)
    return mul.apply(xp, av, bv)


def _empty(xp: Any, dtype: np.dtype, nrows: int) -> SparseVector:
    return SparseVector(
        xp.zeros(0, dtype=np.int64), xp.zeros(0, dtype=dtype), nrows, check=False
    )


def _reduce(xp: Any, add: Any, rows: Any, terms: Any, nrows: int, out_dtype: np.dtype) -> Any:
    """Reduce ``terms`` per row with monoid ``add``; returns sorted (indices, values)."""
    n = rows.shape[0]
    uf = add.ufunc_for(xp)
    terms = terms.astype(out_dtype, copy=False)
    # A numpy.frompyfunc monoid (vectorize=True) reduces Python objects.
    work_dtype = np.dtype(object) if _is_object(uf) else out_dtype
    terms = terms.astype(work_dtype, copy=False)
    if xp is np:
        by_sort = n * SORT_RATIO < nrows
    else:
        # On the GPU the dense accumulator is nearly free (an nrows fill) but needs
        # a scatter (atomic) form of the monoid; the others reduce sorted segments.
        by_sort = uf is not None and not _cupy_scatters(add.ufunc, work_dtype)
    if by_sort:
        order = xp.argsort(rows, kind="stable")
        r = rows[order]
        starts = xp.flatnonzero(xp.concatenate((xp.ones(1, dtype=bool), r[1:] != r[:-1])))
        idx = r[starts]
        if uf is None:  # "any": the first term of each row
            vals = terms[order[starts]]
        elif xp is np:
            vals = uf.reduceat(terms[order], starts, dtype=work_dtype)
        else:
            vals = _segmented_reduce(xp, uf, terms[order], r, starts)
    else:
        occupied = xp.zeros(nrows, dtype=bool)
        occupied[rows] = True
        idx = xp.flatnonzero(occupied)
        if uf is None:
            acc = xp.empty(nrows, dtype=work_dtype)
            acc[rows] = terms  # some term of each row wins: exactly "any"
        elif xp is np:
            acc = xp.full(nrows, add.identity_for(work_dtype), dtype=work_dtype)
            uf.at(acc, rows, terms)
        else:
            acc = _cupy_scatter(xp, add, rows, terms, nrows, work_dtype)
        vals = acc[idx]
    return idx.astype(np.int64, copy=False), vals.astype(out_dtype, copy=False)


# cupy's ``ufunc.at`` exists for the ufuncs with an atomic scatter.
_CUPY_SCATTER = ("add", "minimum", "maximum", "logical_or", "logical_and")
# On booleans lor/land are max/min.
_ON_BOOL = {"logical_or": "maximum", "logical_and": "minimum", "maximum": "maximum",
            "minimum": "minimum", "add": "add"}


def _cupy_scatters(name: Any, dtype: np.dtype) -> bool:
    """Whether cupy's ``ufunc.at`` reduces ``dtype`` with monoid ufunc ``name`` exactly."""
    if name not in _CUPY_SCATTER:
        return False
    # cupy 14's float minimum.at / maximum.at round through float32 (seen on an H200):
    # min and max must return one of the terms, so those reduce sorted segments.
    return not (name in ("minimum", "maximum") and dtype.kind in "fc")


def _cupy_scatter(xp: Any, add: Any, rows: Any, terms: Any, nrows: int, dtype: np.dtype) -> Any:
    name = add.ufunc
    if dtype.itemsize < 4:
        # No 8/16-bit atomics: accumulate in a 32-bit type (exact for min/max/lor/land,
        # and the final cast wraps a sum exactly as the narrow type would have).
        wide = np.dtype(np.int32) if dtype.kind in "biu" else np.dtype(np.float32)
        op = _ON_BOOL[name] if dtype == np.bool_ else name
        acc = xp.full(nrows, add.identity_for(dtype), dtype=wide)
        getattr(xp, op).at(acc, rows, terms.astype(wide))
        return acc.astype(dtype)
    acc = xp.full(nrows, add.identity_for(dtype), dtype=dtype)
    getattr(xp, name).at(acc, rows, terms)
    return acc


def _segmented_reduce(xp: Any, uf: Any, vals: Any, seg: Any, starts: Any) -> Any:
    """Per-segment reduction of ``vals`` (segments = runs of equal ``seg``) without reduceat.

    A Hillis-Steele segmented scan: after the pass with stride ``s`` each entry
    holds the reduction of the up to ``2 s`` entries of its segment that end
    at it, so ``log2(longest segment)`` passes leave each segment's total in
    its last entry.
    """
    v = vals.copy()
    n = v.shape[0]
    stride = 1
    longest = int(xp.diff(xp.concatenate((starts, xp.asarray([n])))).max()) if n else 0
    while stride < longest:
        same = seg[stride:] == seg[:-stride]
        v[stride:] = xp.where(same, uf(v[stride:], v[:-stride]), v[stride:])
        stride *= 2
    ends = xp.concatenate((starts[1:], xp.asarray([n]))) - 1
    return v[ends]


def _prologue(block: Any, x_dtype: np.dtype, semiring: Any) -> tuple[Any, int, np.dtype, np.dtype]:
    """Check ``semiring``; return what both kernels start with: xp, nrows, a_dtype, out_dtype."""
    semiring.check_vectorizable()
    # A pattern block (no values) multiplies as all-true booleans.
    a_dtype = np.dtype(np.bool_) if block.data is None else block.data.dtype
    return block.backend.xp, block.shape[0], a_dtype, semiring.output_dtype(a_dtype, x_dtype)


def spmsv(
    block: Any,
    x: SparseVector,
    semiring: Any,
    mask: Any,
    mode: int,
    row_offset: int,
    col_offset: int,
) -> SparseVector:
    """``B ⊕.⊗ x`` for a sparse ``x`` (arguments already validated by the dispatcher)."""
    xp, nrows, a_dtype, out_dtype = _prologue(block, x.dtype, semiring)
    cols = x.indices
    start, stop = block.col_ranges(cols)
    lengths = (stop - start).astype(np.int64)
    offsets = xp.cumsum(lengths)
    total = int(offsets[-1]) if offsets.shape[0] else 0
    if total == 0:
        return _empty(xp, out_dtype, nrows)
    # Position of every gathered entry: its column's start plus its rank in the column.
    owner = _owner(xp, lengths, offsets, total)
    pos = xp.arange(total, dtype=np.int64) + (start.astype(np.int64) - (offsets - lengths))[owner]
    rows = block.ind[pos]
    if mode:
        keep = mask[rows] if mode == 1 else ~mask[rows]
        sel = xp.flatnonzero(keep)
        rows, pos, owner = rows[sel], pos[sel], owner[sel]
        if rows.shape[0] == 0:
            return _empty(xp, out_dtype, nrows)
    data, xval = block.data, x.values
    terms = _terms(
        xp, semiring,
        None if data is None else (lambda: data[pos]), a_dtype,
        None if xval is None else (lambda: xval[owner]), x.dtype,
        rows, lambda: cols[owner], row_offset, col_offset,
    )
    idx, vals = _reduce(xp, semiring.add, rows, terms, nrows, out_dtype)
    return SparseVector(idx, vals, nrows, check=False)


def spmv(
    block: Any,
    x: Any,
    present: Any,
    semiring: Any,
    mask: Any,
    mode: int,
    row_offset: int,
    col_offset: int,
    method: str = "push",
) -> SparseVector:
    """``B ⊕.⊗ x`` for a dense ``x``; ``present`` marks its entries (None = all).

    ``method`` is accepted for symmetry with the numba backend; every term is
    computed here in one pass either way.
    """
    xp, nrows, a_dtype, out_dtype = _prologue(block, x.dtype, semiring)
    rows = block.ind
    nnz = rows.shape[0]
    ptr = block.ptr.astype(np.int64)
    cols = _owner(xp, ptr[1:] - ptr[:-1], ptr[1:], nnz)
    if block.jc is not None:
        cols = block.jc.astype(np.int64)[cols]
    sel = None
    if present is not None:
        sel = present[cols]
    if mode:
        keep = mask[rows] if mode == 1 else ~mask[rows]
        sel = keep if sel is None else (sel & keep)
    data = block.data
    if sel is not None:
        sel = xp.flatnonzero(sel)
        rows, cols = rows[sel], cols[sel]
        if data is not None:
            data = data[sel]
    if rows.shape[0] == 0:
        return _empty(xp, out_dtype, nrows)
    terms = _terms(
        xp, semiring,
        None if data is None else (lambda: data), a_dtype,
        lambda: x[cols], x.dtype,
        rows, lambda: cols, row_offset, col_offset,
    )
    idx, vals = _reduce(xp, semiring.add, rows, terms, nrows, out_dtype)
    return SparseVector(idx, vals, nrows, check=False)
