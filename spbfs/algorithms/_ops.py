"""Products the semiring kernels do not have: SpGEMM, bit-parallel BFS, triangles.

:mod:`semirings.kernels` multiplies a block by one vector. The algorithms of
this package also need

:func:`spgemm`
    ``C = B ⊕.⊗ X`` for a sparse ``n x k`` matrix ``X`` held by columns
    (:class:`SparseColumns`), with an optional dense ``(k, n)`` mask on the
    result. Column ``s`` of ``C`` is ``spmsv(B, X[:, s])``; a multi-source
    search keeps one column per source. Numba: Gustavson's column-by-column
    product, a sparse accumulator per thread, any built-in semiring (a
    user-defined one falls back to one engine :func:`~semirings.spmsv` per
    column). numpy/cupy: gather every term, then reduce by key with
    :mod:`semirings.kernels.vectorized`.
:func:`msbfs_bits`
    Multi-source BFS levels on the numba backend with the frontiers packed as
    bits (64 searches per ``uint64`` word per vertex): each level is one
    masked product over the semiring (bitwise or, second), push or pull.
:func:`dag_triangles`
    The masked ``plus_pair`` product ``C⟨D⟩ = D ⊕.⊗ Dᵀ`` over the
    degree-ordered orientation ``D`` of an undirected graph, reduced to
    per-vertex triangle counts (numba loop, or whole-array operations), for
    the rows of ``D`` a process holds against a table of the rows they reach
    (on one process: all of ``D`` against itself).

The block arrays are read as they are: csr and dcsc differ only in how a
column is located.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numba as nb
import numpy as np

from semirings import ops
from semirings._intrinsics import column_range
from semirings.blocks import Block
from semirings.kernels import numba_kernels as nbk
from semirings.kernels import vectorized as vk
from semirings.semiring import Semiring, get
from semirings.vector import SparseVector

__all__ = ["SparseColumns", "dag_triangles", "msbfs_bits", "segments", "spgemm"]


@dataclass
class SparseColumns:
    """A sparse ``nrows x ncols`` matrix stored by columns (CSC, sorted row ids).

    Attributes
    ----------
    ptr : array
        ``ncols + 1`` int64 offsets into ``ind`` / ``val``.
    ind : array
        int64 row ids, sorted within each column.
    val : array or None
        Values, or None for a pattern (every entry is True).
    nrows : int
        Number of rows.
    """

    ptr: Any
    ind: Any
    val: Any
    nrows: int

    @property
    def ncols(self) -> int:
        """Number of columns."""
        return int(self.ptr.shape[0]) - 1

    @property
    def nnz(self) -> int:
        """Number of stored entries."""
        return int(self.ind.shape[0])

    def column_ids(self, xp: Any) -> Any:
        """Column id of every stored entry (int64, length nnz)."""
        lengths = (self.ptr[1:] - self.ptr[:-1]).astype(np.int64)
        return vk._owner(xp, lengths, self.ptr[1:], self.nnz)


def _semiring(s: Semiring | str) -> Semiring:
    return get(s) if isinstance(s, str) else s


def spgemm(
    block: Block,
    x: SparseColumns,
    semiring: Semiring | str,
    *,
    mask: Any = None,
    complement: bool = False,
) -> SparseColumns:
    """Sparse matrix times sparse matrix: ``C = B ⊕.⊗ X``.

    Parameters
    ----------
    block : Block
        ``B`` of shape ``(n, n)``, csr or dcsc, on any backend.
    x : SparseColumns
        ``X`` of shape ``(n, k)`` on the block's backend.
    semiring : Semiring or str
        E.g. ``"min_second"``, ``"any_pair"``, ``"plus_times"``.
    mask : array of bool, optional
        Dense ``(k, n)``: ``C[i, s]`` may be stored only where ``mask[s, i]``
        (or, with ``complement``, where it is False).
    complement : bool
        Use the complement of ``mask``.

    Returns
    -------
    SparseColumns
        ``C`` of shape ``(n, k)`` with values of
        ``semiring.output_dtype(block dtype, x dtype)``.
    """
    semiring = _semiring(semiring)
    mode = 0 if mask is None else (2 if complement else 1)
    if block.backend.name == "numba":
        if id(semiring.add) in nbk._ADD_CODE and id(semiring.mul) in nbk._MUL_CODE:
            return _spgemm_numba(block, x, semiring, mask, mode)
        return _spgemm_columns(block, x, semiring, mask, complement)
    return _spgemm_vectorized(block, x, semiring, mask, mode)


# -- numba ---------------------------------------------------------------------------
@nb.njit(cache=True, parallel=True)
def _flops(ptr, jc, is_dcsc, xptr, xind, n, bound):
    """Upper bound on the entries of each result column: min(terms, n)."""
    k = xptr.shape[0] - 1
    for s in nb.prange(k):
        f = 0
        for q in range(xptr[s], xptr[s + 1]):
            lo, hi = column_range(ptr, jc, is_dcsc, xind[q])
            f += hi - lo
        bound[s] = min(f, n)


@nb.njit(cache=True, parallel=True)
def _spgemm_kernel(add, mul, ptr, ind, data, a_pat, jc, is_dcsc, nrows, xptr, xind, xval, x_pat,
                   mask, mask_mode, chunks, off, out_ind, out_val, out_cnt, term_mode):
    for c in nb.prange(chunks.shape[0] - 1):
        # One sparse accumulator per chunk of columns (so per thread), returned clean.
        spa = np.empty(nrows, out_val.dtype)
        occ = np.zeros(nrows, np.bool_)
        lst = np.empty(nrows, np.int64)
        for s in range(chunks[c], chunks[c + 1]):
            cnt = 0
            for q in range(xptr[s], xptr[s + 1]):
                u = xind[q]
                b = xval[0] if x_pat else xval[q]
                lo, hi = column_range(ptr, jc, is_dcsc, u)
                for p in range(lo, hi):
                    i = ind[p]
                    if mask_mode != 0 and mask[s, i] == (mask_mode == 2):
                        continue
                    seen = occ[i]
                    if seen and term_mode == 2:  # "any": the first term decides
                        continue
                    t = nbk._mul(mul, data, 0 if a_pat else p, b, i, u, spa)
                    if seen:
                        spa[i] = nbk._add(add, spa[i], t, spa)
                    else:
                        spa[i] = t
                        occ[i] = True
                        lst[cnt] = i
                        cnt += 1
            o = off[s]
            if cnt * np.log2(cnt + 1) * 8 > nrows:
                # Many rows touched: a scan of the flags beats sorting the touched list.
                q = 0
                for i in range(nrows):
                    if occ[i]:
                        out_ind[o + q] = i
                        out_val[o + q] = spa[i]
                        occ[i] = False
                        q += 1
            else:
                idx = np.sort(lst[:cnt])
                for q in range(cnt):
                    i = idx[q]
                    out_ind[o + q] = i
                    out_val[o + q] = spa[i]
                    occ[i] = False
            out_cnt[s] = cnt


_ONE = np.ones(1, dtype=np.bool_)
_NO_MASK = np.zeros((1, 1), dtype=np.bool_)


def _chunks(work: np.ndarray, parts: int) -> np.ndarray:
    """Split columns into ``parts`` contiguous runs of about equal ``work``."""
    k = work.shape[0]
    csum = np.cumsum(work)
    total = int(csum[-1]) if k else 0
    targets = (np.arange(1, parts) * (total / parts)).astype(np.int64)
    cuts = np.searchsorted(csum, targets, side="left") + 1
    return np.unique(np.concatenate(([0], np.minimum(cuts, k), [k]))).astype(np.int64)


def _spgemm_numba(
    block: Block, x: SparseColumns, semiring: Semiring, mask: Any, mode: int
) -> SparseColumns:
    n = block.shape[0]
    k = x.ncols
    a_pat = block.data is None
    data = _ONE if a_pat else block.data
    a_dt = np.dtype(np.bool_) if a_pat else data.dtype
    x_pat = x.val is None
    xval = _ONE if x_pat else x.val
    out_dt = semiring.output_dtype(a_dt, xval.dtype)
    if block.jc is None:
        jc, is_dcsc = np.zeros(0, dtype=block.ind.dtype), False
    else:
        jc, is_dcsc = block.jc, True
    xptr = np.ascontiguousarray(x.ptr, dtype=np.int64)
    xind = np.ascontiguousarray(x.ind, dtype=np.int64)
    bound = np.empty(k, np.int64)
    _flops(block.ptr, jc, is_dcsc, xptr, xind, n, bound)
    off = np.zeros(k + 1, np.int64)
    np.cumsum(bound, out=off[1:])
    out_ind = np.empty(int(off[-1]), np.int64)
    out_val = np.empty(int(off[-1]), out_dt)
    cnt = np.zeros(k, np.int64)
    term = semiring.add.terminal_for(out_dt)
    term_mode = 2 if term is ops.ANY else 0
    chunks = _chunks(bound + 1, 4 * nb.get_num_threads())
    _spgemm_kernel(
        nbk._ADD_CODE[id(semiring.add)], nbk._MUL_CODE[id(semiring.mul)], block.ptr, block.ind,
        data, a_pat, jc, is_dcsc, n, xptr, xind, xval, x_pat,
        _NO_MASK if mode == 0 else mask, mode, chunks, off, out_ind, out_val, cnt, term_mode,
    )
    ptr = np.zeros(k + 1, np.int64)
    np.cumsum(cnt, out=ptr[1:])
    if ptr[-1] == off[-1]:
        return SparseColumns(ptr, out_ind, out_val, n)
    # Compact: entry q of column s sits at off[s] + q.
    col = np.repeat(np.arange(k, dtype=np.int64), cnt)
    src = np.arange(int(ptr[-1]), dtype=np.int64) - ptr[col] + off[col]
    return SparseColumns(ptr, out_ind[src], out_val[src], n)


def _spgemm_columns(
    block: Block, x: SparseColumns, semiring: Semiring, mask: Any, complement: bool
) -> SparseColumns:
    """One engine SpMSV per column (user-defined semirings on numba)."""
    from semirings.kernels import spmsv

    xp = block.backend.xp
    n = block.shape[0]
    parts_ind, parts_val, lengths = [], [], []
    for s in range(x.ncols):
        lo, hi = int(x.ptr[s]), int(x.ptr[s + 1])
        col = SparseVector(x.ind[lo:hi], None if x.val is None else x.val[lo:hi], n, check=False)
        y = spmsv(block, col, semiring, mask=None if mask is None else mask[s],
                  complement=complement, check=False)
        parts_ind.append(y.indices)
        parts_val.append(y.values)
        lengths.append(y.nnz)
    ptr = xp.zeros(x.ncols + 1, dtype=np.int64)
    if lengths:
        xp.cumsum(xp.asarray(lengths, dtype=np.int64), out=ptr[1:])
        return SparseColumns(ptr, xp.concatenate(parts_ind), xp.concatenate(parts_val), n)
    return SparseColumns(ptr, xp.zeros(0, np.int64), xp.zeros(0, np.float64), n)


# -- numpy / cupy ----------------------------------------------------------------------
def _spgemm_vectorized(
    block: Block, x: SparseColumns, semiring: Semiring, mask: Any, mode: int
) -> SparseColumns:
    semiring.check_vectorizable()
    xp = block.backend.xp
    n = block.shape[0]
    k = x.ncols
    a_dtype = np.dtype(np.bool_) if block.data is None else block.data.dtype
    x_dtype = np.dtype(np.bool_) if x.val is None else x.val.dtype
    out_dtype = semiring.output_dtype(a_dtype, x_dtype)
    xcol = x.column_ids(xp)
    cols = x.ind.astype(np.int64, copy=False)
    start, stop = block.col_ranges(cols)
    lengths = (stop - start).astype(np.int64)
    offsets = xp.cumsum(lengths)
    total = int(offsets[-1]) if offsets.shape[0] else 0
    empty = SparseColumns(xp.zeros(k + 1, np.int64), xp.zeros(0, np.int64),
                          xp.zeros(0, out_dtype), n)
    if total == 0:
        return empty
    owner = vk._owner(xp, lengths, offsets, total)
    pos = xp.arange(total, dtype=np.int64) + (start.astype(np.int64) - (offsets - lengths))[owner]
    rows = block.ind[pos].astype(np.int64)
    if mode:
        keep = mask[xcol[owner], rows]
        sel = xp.flatnonzero(keep if mode == 1 else ~keep)
        rows, pos, owner = rows[sel], pos[sel], owner[sel]
        if rows.shape[0] == 0:
            return empty
    data, xval = block.data, x.val
    terms = vk._terms(
        xp, semiring,
        None if data is None else (lambda: data[pos]), a_dtype,
        None if xval is None else (lambda: xval[owner]), x_dtype,
        rows, lambda: cols[owner], 0, 0,
    )
    key = xcol[owner] * n + rows
    idx, vals = vk._reduce(xp, semiring.add, key, terms, k * n, out_dtype)
    col = idx // n
    ptr = xp.searchsorted(col, xp.arange(k + 1, dtype=np.int64)).astype(np.int64)
    return SparseColumns(ptr, idx - col * n, vals, n)


# -- triangles ---------------------------------------------------------------------------
@nb.njit(cache=True, parallel=True)
def _dag_triangles_kernel(ptr, ind, m, chunks, counts):
    """Per-vertex triangles found at the rows of ``chunks`` of the DAG ``ptr``/``ind``."""
    for c in nb.prange(chunks.shape[0] - 1):
        mark = np.full(m, -1, np.int64)
        local = counts[c]
        for v in range(chunks[c], chunks[c + 1]):
            for p in range(ptr[v], ptr[v + 1]):
                mark[ind[p]] = v
            for p in range(ptr[v], ptr[v + 1]):
                u = ind[p]
                found = 0
                for q in range(ptr[u], ptr[u + 1]):
                    w = ind[q]
                    if mark[w] == v:  # C⟨D⟩[v, u] += pair(D[v, w], D[u, w])
                        found += 1
                        local[w] += 1
                local[v] += found
                local[u] += found


def segments(xp: Any, lengths: Any, start: Any = None) -> tuple[Any, Any]:
    """The entries of concatenated segments of ``lengths``: ``(owner, pos)``.

    ``owner``: the segment of each entry (int64, segments in order); ``pos``:
    the entry's position ``start[s] + q`` (``q``-th of segment ``s``), None
    without ``start``.
    """
    lengths = lengths.astype(np.int64, copy=False)
    ends = xp.cumsum(lengths)
    total = int(ends[-1]) if ends.shape[0] else 0
    owner = vk._owner(xp, lengths, ends, total)
    if start is None:
        return owner, None
    pos = xp.arange(total, dtype=np.int64) + (start.astype(np.int64) - (ends - lengths))[owner]
    return owner, pos


def dag_triangles(ptr: Any, ind: Any, n: int, backend: Any, rows: int | None = None) -> Any:
    """Triangles at each vertex from the DAG ``D`` (rows ``ptr``/``ind``: out-neighbours).

    ``D`` must hold each undirected edge once, pointing from the lower to the
    higher rank; every triangle is then found once, at its lowest-ranked
    vertex ``v``, by the masked product ``C⟨D⟩ = D ⊕.⊗ Dᵀ`` over
    ``plus_pair``: row ``v`` of ``C`` against the rows of ``v``'s
    out-neighbours. On one process the rows searched (``rows``) are all of
    ``D``; a rank of the process grid searches its own vertices' rows, the
    first ``rows``, and its table also holds the rows it fetched of their
    out-neighbours owned elsewhere (whose entries outside the table's ids
    are left out: they close no triangle there).

    Parameters
    ----------
    ptr, ind : array
        Row pointers (``n + 1``) and column ids of ``D``'s table, sorted within
        each row (the numba loop needs no order).
    n : int
        Number of rows (and ids) of the table.
    backend : Backend
        numba runs a compiled loop, numpy and cupy whole-array operations.
    rows : int, optional
        The rows ``0 .. rows - 1`` whose triangles are found (default: all).

    Returns
    -------
    array of int64
        Triangles credited to each of the ``n`` ids: each triangle found to its
        three vertices.
    """
    rows = n if rows is None else int(rows)
    if backend.name == "numba":
        ptr = np.ascontiguousarray(ptr, dtype=np.int64)
        ind = np.ascontiguousarray(ind, dtype=np.int64)
        deg = np.diff(ptr)
        # Work of row v: the rows of its out-neighbours.
        csum = np.zeros(int(ptr[rows]) + 1, np.int64)
        np.cumsum(deg[ind[:ptr[rows]]], out=csum[1:])
        work = csum[ptr[1:rows + 1]] - csum[ptr[:rows]]
        parts = 4 * nb.get_num_threads()
        chunks = _chunks(work + 1, parts) if rows else np.zeros(1, np.int64)
        counts = np.zeros((chunks.shape[0] - 1, n), np.int64)
        _dag_triangles_kernel(ptr, ind, n, chunks, counts)
        return counts.sum(axis=0)
    return _dag_triangles_vectorized(ptr, ind, n, backend.xp, rows=rows)


def _dag_triangles_vectorized(ptr: Any, ind: Any, n: int, xp: Any, chunk: int = 1 << 22,
                              rows: int | None = None) -> Any:
    ptr = xp.asarray(ptr, dtype=np.int64)
    ind = xp.asarray(ind, dtype=np.int64)
    rows = n if rows is None else rows
    deg = ptr[1:] - ptr[:-1]
    m = int(ptr[rows])  # the entries of the rows searched come first
    counts = xp.zeros(n, dtype=np.int64)
    if m == 0:
        return counts
    src = vk._owner(xp, deg[:rows], ptr[1:rows + 1], m)  # row v of each DAG edge (v, u)
    keys = src * n + ind[:m]  # sorted: rows in order, columns sorted within a row
    wedges = deg[ind[:m]]  # terms of the edge (v, u): the row of u
    csum = xp.cumsum(wedges)
    lo = 0
    while lo < m:
        # Edges [lo, hi) whose terms fit in one chunk (at least one edge).
        base = int(csum[lo - 1]) if lo else 0
        hi = int(xp.searchsorted(csum, base + chunk, side="right"))
        hi = max(hi, lo + 1)
        own, pos = segments(xp, wedges[lo:hi], ptr[ind[lo:hi]])
        if pos.shape[0]:
            own += lo
            w = ind[pos]
            v = src[own]
            q = v * n + w
            at = xp.minimum(xp.searchsorted(keys, q), m - 1)
            hit = keys[at] == q  # the mask: D[v, w] is stored
            for ends_of in (v[hit], ind[own[hit]], w[hit]):
                counts += xp.bincount(ends_of, minlength=n)
        lo = hi
    return counts


# -- bit-parallel multi-source BFS (numba) --------------------------------------------------
# Up to 64 searches share one uint64 word per vertex (Then et al., "The More the Merrier",
# VLDB 2014): a level is y = B ⊕.⊗ f over the semiring (bitwise or, second) on words,
# masked bit by bit by the unvisited searches, so one pass over the edges serves 64 sources.


@nb.njit(cache=True, inline="always")
def _bit_index(low):
    # ``low`` has exactly one bit set; float64 holds every power of two exactly.
    return np.int64(np.log2(np.float64(low)))


@nb.njit(cache=True)
def _record(new, v, w, depth, levels, parents, want_parents, tptr, tind, lo, hi, front):
    """Levels of the searches in ``new`` (bits of word ``w``) at ``v``; their min parents."""
    bits = new
    while bits:
        low = bits & (~bits + np.uint64(1))
        s = w * 64 + _bit_index(low)
        levels[s, v] = depth
        bits ^= low
    if want_parents:
        rem = new
        for p in range(lo, hi):  # sorted: the first frontier vertex found is the smallest
            u = tind[p]
            hit = front[u, w] & rem
            while hit:
                low = hit & (~hit + np.uint64(1))
                parents[w * 64 + _bit_index(low), v] = u
                hit ^= low
                rem ^= low
            if rem == 0:
                break


@nb.njit(cache=True, parallel=True)
def _bits_search(optr, oind, ojc, o_dcsc, tptr, tind, tjc, t_dcsc, out_degree, active, full,
                 front, seen, nxt, levels, parents, want_parents, max_depth, push_limit):
    """Every level of the search, compiled: no Python between two levels.

    ``active`` holds the sorted distinct sources (and is the work list of
    every level's frontier vertices); ``front`` and ``seen`` hold their bits,
    ``nxt`` zeros. A level pushes from the frontier's vertices while their
    out-edges are fewer than ``push_limit``, else pulls over every vertex's
    in-edges in parallel. ``max_depth`` < 0 means none. Returns the depth.
    """
    n = front.shape[0]
    nw = front.shape[1]
    nr = tjc.shape[0] if t_dcsc else tptr.shape[0] - 1
    queued = np.zeros(n, np.bool_)
    fresh = np.empty(n, np.int64)
    nact = active.shape[0]
    depth = 0
    while nact > 0 and (max_depth < 0 or depth < max_depth):
        depth += 1
        edges = 0
        for a in range(nact):
            edges += out_degree[active[a]]
        nnew = 0
        if edges < push_limit:
            # Push from the sorted frontier: the first vertex to reach a search is its min parent.
            for a in range(nact):
                u = active[a]
                lo, hi = column_range(optr, ojc, o_dcsc, u)
                for p in range(lo, hi):
                    v = oind[p]
                    for w in range(nw):
                        new = front[u, w] & ~seen[v, w]
                        if new:
                            seen[v, w] |= new
                            nxt[v, w] |= new
                            if not queued[v]:
                                queued[v] = True
                                fresh[nnew] = v
                                nnew += 1
                            bits = new
                            while bits:
                                low = bits & (~bits + np.uint64(1))
                                s = w * 64 + _bit_index(low)
                                levels[s, v] = depth
                                if want_parents:
                                    parents[s, v] = u
                                bits ^= low
            for q in range(nnew):
                queued[fresh[q]] = False
            fresh[:nnew].sort()
        else:
            for r in nb.prange(nr):
                v = np.int64(tjc[r]) if t_dcsc else np.int64(r)
                lo, hi = np.int64(tptr[r]), np.int64(tptr[r + 1])
                for w in range(nw):
                    miss = full[w] & ~seen[v, w]
                    if miss == 0:
                        continue
                    acc = np.uint64(0)
                    for p in range(lo, hi):
                        acc |= front[tind[p], w]
                        if (acc & miss) == miss:
                            break
                    new = acc & miss
                    if new:
                        nxt[v, w] = new
                        seen[v, w] |= new
                        _record(new, v, w, depth, levels, parents, want_parents, tptr, tind,
                                lo, hi, front)
            for v in range(n):
                for w in range(nw):
                    if nxt[v, w]:
                        fresh[nnew] = v
                        nnew += 1
                        break
        # The old frontier's words become the next level's zeros: O(frontier), not O(n).
        for a in range(nact):
            for w in range(nw):
                front[active[a], w] = 0
        front, nxt = nxt, front
        if active.shape[0] < nnew:
            active = np.empty(n, np.int64)
        active[:nnew] = fresh[:nnew]
        nact = nnew
        if nnew == 0:
            depth -= 1
    return depth


#: Push while the frontier's edges are fewer than this share of all edges.
PUSH_SHARE = 1 / 14


def msbfs_bits(
    out_block: Block,
    in_block: Block,
    sources: np.ndarray,
    out_degree: np.ndarray,
    *,
    want_parents: bool,
    max_depth: int | None,
) -> tuple[np.ndarray, np.ndarray, int]:
    """Bit-parallel multi-source BFS (numba backend) from distinct ``sources``.

    Each level is one product ``y = B ⊕.⊗ f`` over (bitwise or, second) on
    packed words, masked by the unvisited bits: a push over the out-edges
    of the frontier while it is small (``PUSH_SHARE`` of the edges), else a
    pull over the in-edges of every vertex (``in_block``). The level loop
    itself is compiled (:func:`_bits_search`): a road network's thousand
    levels cost no Python, and a level costs what its frontier does.

    Returns
    -------
    levels, parents : numpy.ndarray
        ``(k, n)`` int64 (parents all -1 unless ``want_parents``).
    depth : int
        Levels expanded.
    """
    n = out_block.shape[0]
    k = sources.shape[0]
    nw = (k + 63) // 64
    full = np.zeros(nw, np.uint64)
    for w in range(nw):
        bits = min(64, k - 64 * w)
        full[w] = np.uint64((1 << bits) - 1) if bits < 64 else np.uint64(2**64 - 1)
    levels = np.full((k, n), -1, np.int64)
    parents = np.full((k, n) if want_parents else (1, 1), -1, np.int64)
    s_ids = np.arange(k)
    levels[s_ids, sources] = 0
    if want_parents:
        parents[s_ids, sources] = sources
    front = np.zeros((n, nw), np.uint64)
    np.bitwise_or.at(front, (sources, s_ids // 64),
                     np.left_shift(np.uint64(1), (s_ids % 64).astype(np.uint64)))
    seen = front.copy()
    total = max(int(out_degree.sum()), 1)
    depth = _bits_search(*out_block.kernel_view, *in_block.kernel_view, out_degree,
                         np.unique(sources).astype(np.int64), full, front, seen,
                         np.zeros_like(front), levels, parents, want_parents,
                         -1 if max_depth is None else int(max_depth), PUSH_SHARE * total)
    return levels, parents, int(depth)
