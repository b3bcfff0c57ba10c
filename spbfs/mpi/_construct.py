"""numba kernels of the distributed graph's construction and of its input tuples.

Edges travel between ranks as *records*: interleaved ``(local row, local
column)`` pairs of the receiving rank's block, in the local id dtype (int32
below ``2**31`` local ids), so an edge costs 8 bytes on the wire and in the
buffers instead of the 16 of two int64 global ids. Counting sorts put records
in destination order and entries in column order, without an ``argsort``
permutation or an int64 copy of the edge list.

A rank keeps its input tuples as a count per entry of its block (how many
input tuples ``u -> v`` landed on the entry ``B[v, u]``; 0 for an entry only
its mirror put there) plus the self-loops, which the block does not store:
one byte per entry instead of two local ids per tuple.

Ids: global ids are int64; a local row ``r`` of row chunk ``i`` is global
``(i * pc + r // B64) * b + r % B64`` (``row0 = i * pc``), a local column of
column chunk ``j`` likewise with ``col0 = j * pr`` (see
:class:`spbfs.mpi.grid.Distribution`).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from semirings.blocks import choose_index_dtype

__all__ = [
    "build_columns",
    "check_entries",
    "count_global",
    "count_mirrors",
    "expand_tuples",
    "fill_global",
    "fill_mirrors",
    "loop_tuples",
    "reached_tuples",
    "tuple_counts",
]


@nb.njit(cache=True, inline="always")
def _global(local, piece0, b, B64):  # type: ignore[no-untyped-def]
    """Global id of a local id whose chunk starts at piece ``piece0``."""
    q = np.int64(local) // B64
    return (piece0 + q) * b + (np.int64(local) - q * B64)


@nb.njit(cache=True, inline="always")
def _place(row, col, b, B64, pr, pc):  # type: ignore[no-untyped-def]
    """Owner rank of ``B[row, col]`` (global ids) and the entry's local row and column there."""
    pv = row // b
    pu = col // b
    i = pv // pc
    j = pu // pr
    return (i * pc + j, (pv - i * pc) * B64 + (row - pv * b),
            (pu - j * pr) * B64 + (col - pu * b))


# -- routing ---------------------------------------------------------------------------------
@nb.njit(cache=True)
def count_global(rows, cols, b, B64, pr, pc, counts):  # type: ignore[no-untyped-def]
    """``counts[rank]`` += entries ``B[rows[k], cols[k]]`` (global ids) that rank owns."""
    for k in range(rows.shape[0]):
        o, _, _ = _place(np.int64(rows[k]), np.int64(cols[k]), b, B64, pr, pc)
        counts[o] += 1


@nb.njit(cache=True)
def fill_global(rows, cols, b, B64, pr, pc, pos, out):  # type: ignore[no-untyped-def]
    """Write the record of ``B[rows[k], cols[k]]`` at pair ``pos[owner]`` of ``out``, bump it.

    ``pos`` starts at every owner's first pair: the records come out grouped by
    owner, each group in input order (a stable counting sort).
    """
    for k in range(rows.shape[0]):
        o, r, c = _place(np.int64(rows[k]), np.int64(cols[k]), b, B64, pr, pc)
        p = pos[o]
        out[2 * p] = r
        out[2 * p + 1] = c
        pos[o] = p + 1


@nb.njit(cache=True)
def count_mirrors(rec, row0, col0, b, B64, pr, pc, counts):  # type: ignore[no-untyped-def]
    """:func:`count_global` of the mirrors ``B[u, v]`` of the records ``B[v, u]`` (not loops)."""
    for k in range(rec.shape[0] // 2):
        v = _global(rec[2 * k], row0, b, B64)
        u = _global(rec[2 * k + 1], col0, b, B64)
        if u != v:
            o, _, _ = _place(u, v, b, B64, pr, pc)
            counts[o] += 1


@nb.njit(cache=True)
def fill_mirrors(rec, row0, col0, b, B64, pr, pc, pos, out):  # type: ignore[no-untyped-def]
    """:func:`fill_global` for the mirrors of the records (see :func:`count_mirrors`)."""
    for k in range(rec.shape[0] // 2):
        v = _global(rec[2 * k], row0, b, B64)
        u = _global(rec[2 * k + 1], col0, b, B64)
        if u != v:
            o, r, c = _place(u, v, b, B64, pr, pc)
            p = pos[o]
            out[2 * p] = r
            out[2 * p + 1] = c
            pos[o] = p + 1


# -- the block ---------------------------------------------------------------------------------
@nb.njit(cache=True)
def _count_columns(tup, mir, row0, col0, b, B64, ptr):  # type: ignore[no-untyped-def]
    for k in range(tup.shape[0] // 2):
        c = tup[2 * k + 1]
        if _global(tup[2 * k], row0, b, B64) != _global(c, col0, b, B64):
            ptr[c + 1] += 1
    for k in range(mir.shape[0] // 2):
        ptr[mir[2 * k + 1] + 1] += 1
    for c in range(ptr.shape[0] - 1):
        ptr[c + 1] += ptr[c]


@nb.njit(cache=True)
def _scatter_rows(tup, mir, row0, col0, b, B64, ptr, ind):  # type: ignore[no-untyped-def]
    pos = ptr[:-1].copy()
    for k in range(tup.shape[0] // 2):
        r = tup[2 * k]
        c = tup[2 * k + 1]
        if _global(r, row0, b, B64) != _global(c, col0, b, B64):
            ind[pos[c]] = r
            pos[c] += 1
    for k in range(mir.shape[0] // 2):
        c = mir[2 * k + 1]
        ind[pos[c]] = mir[2 * k]
        pos[c] += 1


@nb.njit(cache=True, parallel=True)
def _sort_dedup(ptr, ind, newlen):  # type: ignore[no-untyped-def]
    for c in nb.prange(ptr.shape[0] - 1):
        lo, hi = ptr[c], ptr[c + 1]
        if hi - lo > 1:
            ind[lo:hi].sort()
            w = lo
            for x in range(lo + 1, hi):
                if ind[x] != ind[w]:
                    w += 1
                    ind[w] = ind[x]
            newlen[c] = w + 1 - lo
        else:
            newlen[c] = hi - lo


@nb.njit(cache=True, parallel=True)
def _compact(ptr, ind, newptr, out):  # type: ignore[no-untyped-def]
    for c in nb.prange(ptr.shape[0] - 1):
        src = ptr[c]
        dst = newptr[c]
        for x in range(newptr[c + 1] - dst):
            out[dst + x] = ind[src + x]


def build_columns(tup: np.ndarray, mir: list[np.ndarray], row0: int, col0: int, b: int,
                  B64: int, nrows: int, ncols: int,
                  index_dtype: str | np.dtype | type = "auto") -> tuple[np.ndarray, np.ndarray]:
    """Column pointers and sorted, deduplicated rows of the entries of the records.

    The entries are the tuple records ``tup`` but their self-loops, and the
    mirror records ``mir[0]`` (which never hold a loop). ``mir`` is a
    one-element list (or empty) that is emptied once the mirrors are copied
    in, so that the caller's reference does not keep them alive through the
    sort.

    Parameters
    ----------
    tup, mir
        The records (see above).
    row0, col0, b, B64 : int
        The chunks' first pieces and the distribution's piece sizes.
    nrows, ncols : int
        The block's shape.
    index_dtype : {"auto", "int32", "int64"} or dtype
        As for :func:`semirings.blocks.choose_index_dtype` (of the entries
        before duplicates are merged).

    Returns
    -------
    ptr : numpy.ndarray
        ``ncols + 1`` int64 offsets.
    ind : numpy.ndarray
        Rows, of the chosen index dtype, increasing within every column.

    Raises
    ------
    OverflowError
        When int32 is requested but does not fit.
    """
    none = np.zeros(0, dtype=tup.dtype)
    m = mir[0] if mir else none
    ptr = np.zeros(ncols + 1, dtype=np.int64)
    _count_columns(tup, m, row0, col0, b, B64, ptr)
    dtype = choose_index_dtype(nrows, ncols, int(ptr[-1]), index_dtype)
    ind = np.empty(int(ptr[-1]), dtype=dtype)
    _scatter_rows(tup, m, row0, col0, b, B64, ptr, ind)
    del m
    mir.clear()
    newlen = np.empty(ncols, dtype=np.int64)
    _sort_dedup(ptr, ind, newlen)
    if int(newlen.sum()) == ind.shape[0]:
        return ptr, ind
    newptr = np.zeros(ncols + 1, dtype=np.int64)
    np.cumsum(newlen, out=newptr[1:])
    del newlen
    out = np.empty(int(newptr[-1]), dtype=dtype)
    _compact(ptr, ind, newptr, out)
    return newptr, out


@nb.njit(cache=True)
def _tuple_counts(tup, row0, col0, b, B64, ptr, ind, counts, cap):  # type: ignore[no-untyped-def]
    loops = 0
    for k in range(tup.shape[0] // 2):
        r = tup[2 * k]
        c = tup[2 * k + 1]
        if _global(r, row0, b, B64) == _global(c, col0, b, B64):
            loops += 1
            continue
        lo = ptr[c]
        e = lo + np.searchsorted(ind[lo:ptr[c + 1]], r)
        if counts[e] == cap:
            return -1
        counts[e] += 1
    return loops


def tuple_counts(tup: np.ndarray, row0: int, col0: int, b: int, B64: int, ptr: np.ndarray,
                 ind: np.ndarray) -> tuple[np.ndarray, int]:
    """How many tuple records fall on every entry of the block ``(ptr, ind)``; the loop count.

    ``ptr`` has one offset per column (the full pointer array, before any
    compression of empty columns). The counts are uint8 unless a count
    passes 255 (heavily repeated input edges), then the smallest unsigned
    type that holds them.
    """
    counts = np.zeros(ind.shape[0], dtype=np.uint8)
    loops = _tuple_counts(tup, row0, col0, b, B64, ptr, ind, counts, np.uint8(255))
    if loops < 0:
        wide = np.zeros(ind.shape[0], dtype=np.int64)
        loops = _tuple_counts(tup, row0, col0, b, B64, ptr, ind, wide, np.int64(2**62))
        top = int(wide.max(initial=0))
        dt = np.uint16 if top <= 0xFFFF else np.uint32 if top <= 0xFFFFFFFF else np.uint64
        counts = wide.astype(dt)
    return counts, int(loops)


@nb.njit(cache=True)
def loop_tuples(tup, row0, col0, b, B64, rows, cols):  # type: ignore[no-untyped-def]
    """Copy the self-loop records' rows and columns to ``rows``/``cols`` (sized to fit)."""
    k = 0
    for x in range(tup.shape[0] // 2):
        r = tup[2 * x]
        c = tup[2 * x + 1]
        if _global(r, row0, b, B64) == _global(c, col0, b, B64):
            rows[k] = r
            cols[k] = c
            k += 1
    return k


# -- the tuples back from the block ------------------------------------------------------------
@nb.njit(cache=True)
def expand_tuples(ptr, ind, jc, dcsc, counts, s, e, rows, cols):  # type: ignore[no-untyped-def]
    """Write ``counts[x]`` copies of entry ``x``'s (row, column), from entry ``e`` of slot ``s`` on.

    Stops before the first entry whose copies would not fit in ``rows``;
    returns (tuples written, next slot, next entry). Slots are columns (csr)
    or positions in ``jc`` (dcsc).
    """
    cap = rows.shape[0]
    k = 0
    nslots = ptr.shape[0] - 1
    while s < nslots:
        c = jc[s] if dcsc else s
        hi = ptr[s + 1]
        while e < hi:
            m = np.int64(counts[e])
            if k + m > cap:
                return k, s, e
            r = ind[e]
            for _ in range(m):
                rows[k] = r
                cols[k] = c
                k += 1
            e += 1
        s += 1
    return k, s, e


@nb.njit(cache=True)
def reached_tuples(ptr, jc, dcsc, counts, loop_cols, col_levels):  # type: ignore[no-untyped-def]
    """Tuples whose column ``u`` has ``col_levels[u] >= 0`` (entries' counts, then the loops)."""
    tot = 0
    for s in range(ptr.shape[0] - 1):
        c = jc[s] if dcsc else s
        if col_levels[c] >= 0:
            for e in range(ptr[s], ptr[s + 1]):
                tot += np.int64(counts[e])
    for x in range(loop_cols.shape[0]):
        if col_levels[loop_cols[x]] >= 0:
            tot += 1
    return tot


@nb.njit(cache=True)
def check_entries(  # type: ignore[no-untyped-def]
    ptr, ind, jc, dcsc, counts, directed, row_key, col_key, row_par, col_par, row_glob0,
    col_glob0, b, B64, unreached, row_conf, col_conf,
):
    """:func:`spbfs.mpi._kernels.check_tuples` over the tuples the entry counts stand for.

    Entry ``x`` (row ``v``, column ``u``) stands for ``counts[x]`` copies of the
    tuple ``u -> v``: each copy is bad, or in the component, exactly when the
    entry is, and confirming a tree edge twice changes nothing, so one visit
    per entry with a non-zero count gives the same results as checking the
    rebuilt tuples one by one, without rebuilding them.

    Returns (first bad tuple's row, its column, or -1, -1; bad tuples;
    component tuples).
    """
    bad_row = -1
    bad_col = -1
    nbad = 0
    comp = 0
    for s in range(ptr.shape[0] - 1):
        u = np.int64(jc[s]) if dcsc else np.int64(s)
        ku = col_key[u]
        for x in range(ptr[s], ptr[s + 1]):
            m = np.int64(counts[x])
            if m == 0:
                continue
            v = np.int64(ind[x])
            kv = row_key[v]
            d = kv - ku
            if directed:
                bad = d > 1
            else:
                bad = d > 1 or d < -1
            if bad:
                if bad_row < 0:
                    bad_row = v
                    bad_col = u
                nbad += m
            if ku != unreached:
                comp += m
            if d == 1:
                gu = (col_glob0 + u // B64) * b + u % B64
                if row_par[v] == gu:
                    row_conf[v] = True
            elif d == -1 and not directed:
                gv = (row_glob0 + v // B64) * b + v % B64
                if col_par[u] == gv:
                    col_conf[u] = True
    return bad_row, bad_col, nbad, comp
