"""numba kernels of the distributed graph's construction and of its input tuples.

Edges travel between ranks as *records*: interleaved ``(local row, local
column)`` pairs of the receiving rank's block, in the local id dtype (int32
below ``2**31`` local ids), so an edge costs 8 bytes on the wire and in the
buffers instead of the 16 of two int64 global ids. Counting sorts put records
in destination order and entries in column order, without an ``argsort``
permutation or an int64 copy of the edge list. What a rank receives is kept
by groups of columns of its block (:class:`ColumnBuckets`: 6 bytes a record)
until every round has arrived, then built into the block one group at a time.

A rank stores its block transposed (``B_ijᵀ``, see :mod:`spbfs.mpi.graph`)
and keeps its input tuples as a count per stored entry (how many input tuples
``u -> v`` landed on the entry ``B[v, u]``; 0 for an entry only its mirror
put there) plus the self-loops, which the block does not store: one byte per
entry instead of two local ids per tuple.

Ids: global ids are int64; a local row ``r`` of row chunk ``i`` is global
``(i * pc + r // B64) * b + r % B64`` (``row0 = i * pc``), a local column of
column chunk ``j`` likewise with ``col0 = j * pr`` (see
:class:`spbfs.mpi.grid.Distribution`).
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable
from typing import Any

import numba as nb
import numpy as np

from semirings.blocks import choose_index_dtype
from spbfs.mpi._kernels import check_tuple

__all__ = [
    "ColumnBuckets",
    "build_columns",
    "check_entries",
    "compress_on",
    "count_buckets",
    "count_global",
    "count_mirrors",
    "count_rows",
    "expand_tuples",
    "fill_buckets",
    "fill_global",
    "fill_mirrors",
    "reached_tuples",
    "release_freed",
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
@nb.njit(cache=True, inline="always")
def _put(pos, out, o, r, c):  # type: ignore[no-untyped-def]
    """Record ``(r, c)`` at pair ``pos[o]`` of ``out``, the next free one of owner ``o``."""
    p = pos[o]
    out[2 * p] = r
    out[2 * p + 1] = c
    pos[o] = p + 1


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
        _put(pos, out, o, r, c)


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
            _put(pos, out, o, r, c)


# -- the block ---------------------------------------------------------------------------------
@nb.njit(cache=True)
def count_buckets(rec, row0, col0, b, B64, cs, width, loops, counts):  # type: ignore[no-untyped-def]
    """``counts[k]`` += records whose word ``cs`` lies in ``[k width, (k + 1) width)``.

    With ``loops``, a self-loop record counts in ``counts[-1]`` instead.
    """
    nb_ = counts.shape[0] - 1
    for k in range(rec.shape[0] // 2):
        if loops and _global(rec[2 * k], row0, b, B64) == _global(rec[2 * k + 1], col0, b, B64):
            counts[nb_] += 1
        else:
            counts[rec[2 * k + cs] // width] += 1


@nb.njit(cache=True)
def fill_buckets(  # type: ignore[no-untyped-def]
    rec, row0, col0, b, B64, cs, width, loops, pos, ent, off, lpos, lout
):
    """The records grouped as :func:`count_buckets` counts them, each group in input order.

    A record of group ``k`` goes to ``ent`` (its entry word, the other than
    ``cs``) and ``off`` (its column word less ``k width``) at ``pos[k]``; a
    self-loop, whole, to the pairs ``lout`` at ``lpos[0]``.
    """
    rs = 1 - cs
    for k in range(rec.shape[0] // 2):
        r = rec[2 * k]
        c = rec[2 * k + 1]
        if loops and _global(r, row0, b, B64) == _global(c, col0, b, B64):
            _put(lpos, lout, 0, r, c)
        else:
            g = rec[2 * k + cs] // width
            p = pos[g]
            ent[p] = rec[2 * k + rs]
            off[p] = rec[2 * k + cs] - g * width
            pos[g] = p + 1


@nb.njit(cache=True)
def _count_columns(off, ptr):  # type: ignore[no-untyped-def]
    """``ptr[c + 1]`` += records of column ``c`` (``off``: the records' columns in the group)."""
    for k in range(off.shape[0]):
        ptr[off[k] + 1] += 1


@nb.njit(cache=True)
def _scatter_rows(ent, off, pos, ind):  # type: ignore[no-untyped-def]
    """Entry ``ent[k]`` into its column ``off[k]`` at ``pos[off[k]]``, which it bumps."""
    for k in range(ent.shape[0]):
        c = off[k]
        ind[pos[c]] = ent[k]
        pos[c] += 1


@nb.njit(cache=True, inline="always")
def _merge_column(ind, lo, mid, hi, out, o, counts, cap):  # type: ignore[no-untyped-def]
    """Merge the sorted runs ``ind[lo:mid]`` (tuples) and ``ind[mid:hi]`` (mirrors), deduplicated.

    Writes the distinct rows to ``out`` from ``o`` and, for each, how many
    tuples it stands for (at most ``cap``) to ``counts``, unless ``out`` is
    empty (then it only counts). Returns (distinct rows, whether a count
    passed ``cap``).
    """
    write = out.shape[0] > 0
    a = lo
    m = mid
    k = 0
    over = False
    while a < mid or m < hi:
        if m >= hi or (a < mid and ind[a] <= ind[m]):
            r = ind[a]
        else:
            r = ind[m]
        n = 0
        while a < mid and ind[a] == r:
            a += 1
            n += 1
        while m < hi and ind[m] == r:
            m += 1
        if write:
            out[o + k] = r
            if n > cap:
                over = True
                n = cap
            counts[o + k] = n
        k += 1
    return k, over


@nb.njit(cache=True, inline="always")
def _sort_column(ind, lo, m, hi, nocounts):  # type: ignore[no-untyped-def]
    """Sort a column's two runs ``ind[lo:m]`` and ``ind[m:hi]``; its distinct rows."""
    if m - lo > 1:
        ind[lo:m].sort()
    if hi - m > 1:
        ind[m:hi].sort()
    k, _ = _merge_column(ind, lo, m, hi, ind[:0], 0, nocounts, 0)
    return k


@nb.njit(cache=True, parallel=True)
def _sort_runs_parallel(ptr, mid, ind, newlen):  # type: ignore[no-untyped-def]
    nocounts = np.zeros(0, np.uint8)
    for c in nb.prange(ptr.shape[0] - 1):
        newlen[c] = _sort_column(ind, ptr[c], mid[c], ptr[c + 1], nocounts)


@nb.njit(cache=True)
def _sort_runs_serial(ptr, mid, ind, newlen):  # type: ignore[no-untyped-def]
    nocounts = np.zeros(0, np.uint8)
    for c in range(ptr.shape[0] - 1):
        newlen[c] = _sort_column(ind, ptr[c], mid[c], ptr[c + 1], nocounts)


@nb.njit(cache=True, parallel=True)
def _merge_runs_parallel(ptr, mid, ind, newptr, out, counts, cap, over):  # type: ignore[no-untyped-def]
    for c in nb.prange(ptr.shape[0] - 1):
        _, past = _merge_column(ind, ptr[c], mid[c], ptr[c + 1], out, newptr[c], counts, cap)
        over[c] = past


@nb.njit(cache=True)
def _merge_runs_serial(ptr, mid, ind, newptr, out, counts, cap, over):  # type: ignore[no-untyped-def]
    for c in range(ptr.shape[0] - 1):
        _, past = _merge_column(ind, ptr[c], mid[c], ptr[c + 1], out, newptr[c], counts, cap)
        over[c] = past


#: Entries of a column group from which its sort and merge run in parallel: below, a
#: parallel region (tens of microseconds on a quiet machine, milliseconds on a busy one,
#: per group) costs about what the work does. One-rank builds at this threshold against
#: parallel groups throughout (2 threads): Kronecker 8/4, 11/8, 14/16 took 0.93, 1.03,
#: 1.00x as long on a quiet machine and 0.48, 0.62, 0.94x beside a busy process (at 2^16
#: the quiet 14/16 took 1.23x: its groups are below it).
PAR_ENTRIES = 1 << 14


def _parallel(ind: np.ndarray) -> bool:
    return ind.shape[0] >= PAR_ENTRIES and nb.get_num_threads() > 1


def _sort_runs(ptr: np.ndarray, mid: np.ndarray, ind: np.ndarray, newlen: np.ndarray) -> None:
    """Sort each column's tuples ``ind[ptr[c]:mid[c]]`` and mirrors ``ind[mid[c]:ptr[c+1]]``;
    ``newlen[c]``: the column's distinct rows."""
    run = _sort_runs_parallel if _parallel(ind) else _sort_runs_serial
    run(ptr, mid, ind, newlen)


def _merge_runs(ptr: np.ndarray, mid: np.ndarray, ind: np.ndarray, newptr: np.ndarray,
                out: np.ndarray, counts: np.ndarray, cap: int, over: np.ndarray) -> None:
    """Each column's two sorted runs merged into ``out`` from ``newptr[c]`` with their
    tuple counts (:func:`_merge_column`); ``over[c]``: a count passed ``cap``."""
    run = _merge_runs_parallel if _parallel(ind) else _merge_runs_serial
    run(ptr, mid, ind, newptr, out, counts, cap, over)


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim`` (None where the C library has none)."""
    try:
        return ctypes.CDLL(None).malloc_trim  # type: ignore[no-any-return]
    except (OSError, AttributeError):
        return None


def release_freed() -> None:
    """Give the pages of freed heap memory back to the system (glibc; elsewhere nothing).

    Arrays below malloc's mmap threshold (32 MiB once large arrays have come
    and gone) live on the heap, whose freed holes stay resident: the column
    groups' records freed one by one during a build would not lower the
    resident size while the block grows beside them.
    """
    trim = _malloc_trim()
    if trim is not None:
        trim(0)


#: Widest column group: a record's column within its group fits 16 bits.
GROUP_WIDTH = 1 << 16


class ColumnBuckets:
    """Records kept by column group as they arrive, then built into a block group by group.

    The records of a block are held in groups of at most :data:`GROUP_WIDTH`
    columns, each a list of arrays (one per arrival): the record's entry in
    the local id dtype and its column within the group in 16 bits (6 bytes a
    record instead of 8). Building the block takes one group at a time: a
    group's records are freed once its columns are built, so at most one
    group's scratch (its records joined and its rows before deduplication)
    lives beside what remains, instead of every record beside every row. The
    self-loop tuples are put aside on arrival, by source, so that they come
    out in the order of one exchange of all records (sources in rank order,
    each in its input order), however many arrivals there were.

    Parameters
    ----------
    ncols : int
        Columns of the block to build.
    nbuckets : int
        Column groups (at least 1, and as many as :data:`GROUP_WIDTH` needs).
    row0, col0, b, B64 : int
        The chunks' first pieces and the distribution's piece sizes (to find
        the self-loops).
    transpose : bool
        Build the transposed block (columns: the records' rows).
    nsources : int
        Ranks the records come from.
    dtype : numpy.dtype
        The records' dtype (the local id dtype).
    """

    def __init__(self, ncols: int, nbuckets: int, row0: int, col0: int, b: int, B64: int,
                 transpose: bool, nsources: int, dtype: np.dtype | type) -> None:
        self.ncols = int(ncols)
        groups = max(int(nbuckets), -(-self.ncols // GROUP_WIDTH), 1)
        self.width = max(1, -(-self.ncols // groups))
        self.nbuckets = max(1, -(-self.ncols // self.width))
        self.cs = 0 if transpose else 1
        self.place = (int(row0), int(col0), int(b), int(B64))
        self.dtype = np.dtype(dtype)
        # Per group and kind (tuples, mirrors): the entries' and the columns' pieces.
        self.pieces: list[list[tuple[list[np.ndarray], list[np.ndarray]]]] = [
            [([], []) for _ in range(self.nbuckets)] for _ in range(2)]
        self.loops: list[list[np.ndarray]] = [[] for _ in range(int(nsources))]
        self.entries = 0

    def add(self, box: list[np.ndarray], sources: np.ndarray | None = None) -> None:
        """Take the records out of ``box`` (emptied) into their column groups.

        ``sources``: tuple records, ``sources[s]`` of them from rank ``s`` in
        rank order (their self-loops are put aside); None: mirror records
        (never loops).
        """
        rec = box.pop()
        loops = sources is not None
        segs = np.asarray(sources if loops else [rec.shape[0] // 2], dtype=np.int64)
        counts = np.zeros((segs.shape[0], self.nbuckets + 1), dtype=np.int64)
        how = (*self.place, self.cs, self.width, loops)
        lo = 0
        for s, k in enumerate(segs.tolist()):
            count_buckets(rec[2 * lo:2 * (lo + k)], *how, counts[s])
            lo += k
        tot = counts.sum(axis=0)
        pos = np.zeros(self.nbuckets, dtype=np.int64)
        np.cumsum(tot[:-2], out=pos[1:])
        nrec = int(tot[:-1].sum())
        ent = np.empty(nrec, dtype=rec.dtype)
        off = np.empty(nrec, dtype=np.uint16)
        lout = np.empty(2 * int(tot[-1]), dtype=rec.dtype)
        fill_buckets(rec, *how, pos.copy(), ent, off, np.zeros(1, np.int64), lout)
        del rec
        keep = self.pieces[0 if loops else 1]
        for k in range(self.nbuckets):
            if tot[k]:
                lo, hi = int(pos[k]), int(pos[k] + tot[k])
                keep[k][0].append(ent[lo:hi].copy())
                keep[k][1].append(off[lo:hi].copy())
        self.entries += nrec
        at = 0
        for s, k in enumerate(counts[:, -1].tolist()):
            if k:
                self.loops[s].append(lout[2 * at:2 * (at + k)])
            at += k

    def build(self, nrows: int, index_dtype: str | np.dtype | type = "auto",
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
        """The block of the records held, which it frees: as :func:`build_columns` returns."""
        dtype = choose_index_dtype(nrows, self.ncols, self.entries, index_dtype)
        ptr = np.zeros(self.ncols + 1, dtype=np.int64)
        # Sized for every entry before deduplication: the pages past what the
        # distinct entries fill are never touched, and the arrays shrink in place.
        out = np.empty(self.entries, dtype=dtype)
        counts = np.empty(self.entries, dtype=np.uint8)
        wide: list[tuple[int, np.ndarray]] = []
        o = 0
        for k in range(self.nbuckets):
            c0, c1 = k * self.width, min(self.ncols, (k + 1) * self.width)
            (te, to), (me, mo) = (self.pieces[x][k] for x in (0, 1))
            bptr = np.zeros(c1 - c0 + 1, dtype=np.int64)
            for off in to + mo:
                _count_columns(off, bptr)
            np.cumsum(bptr, out=bptr)
            ind = np.empty(int(bptr[-1]), dtype=dtype)
            # A column's tuples first, up to mid[c], then its mirrors; each piece is
            # freed once scattered (no joined copy of the group's records).
            mid = bptr[:-1].copy()
            for ent, off in ((te, to), (me, mo)):
                pos = mid if ent is te else mid.copy()
                while ent:
                    _scatter_rows(ent.pop(), off.pop(), pos, ind)
            del pos
            release_freed()
            newlen = ptr[c0 + 1:c1 + 1]
            _sort_runs(bptr, mid, ind, newlen)
            newptr = np.zeros(c1 - c0 + 1, dtype=np.int64)
            np.cumsum(newlen, out=newptr[1:])
            nnz = int(newptr[-1])
            over = np.zeros(c1 - c0, dtype=np.bool_)
            _merge_runs(bptr, mid, ind, newptr, out[o:o + nnz], counts[o:o + nnz], 255, over)
            if over.any():  # an input edge repeated more than 255 times: count again, wider
                w = np.empty(nnz, dtype=np.int64)
                _merge_runs(bptr, mid, ind, newptr, out[o:o + nnz], w, 2**62, over)
                wide.append((o, w))
            o += nnz
        np.cumsum(ptr[1:], out=ptr[1:])
        out.resize(o, refcheck=False)
        counts.resize(o, refcheck=False)
        if wide:
            top = max(int(w.max(initial=0)) for _, w in wide)
            counts = counts.astype(_count_dtype(top))
            for at, w in wide:
                counts[at:at + w.shape[0]] = w
        return ptr, out, counts, self._take_loops()

    def _take_loops(self) -> tuple[np.ndarray, np.ndarray]:
        """The self-loop tuples put aside (local rows, local columns), which it forgets."""
        pairs = np.concatenate([x for s in self.loops for x in s] or
                               [np.zeros(0, dtype=self.dtype)])
        self.loops = [[] for _ in self.loops]
        return pairs[0::2].copy(), pairs[1::2].copy()

    def build_on(self, xp: Any, nrows: int, index_dtype: str | np.dtype | type = "auto",
                 ) -> tuple[Any, Any, Any, tuple[np.ndarray, np.ndarray]]:
        """:meth:`build` with array operations on ``xp``'s device (numpy: the same steps).

        Each group's records go up once (its pieces as they arrived, each freed
        on the host once up) and are sorted by (column, row) there; a row
        repeated in a column is one entry, whose count is the tuple records
        among its repeats (:func:`compress_on`). The same arrays as
        :meth:`build`, byte for byte, with ``ptr``, ``ind`` and ``counts`` on
        the device; the self-loops stay on the host. At most one group's
        records and their sort live on the device beside the block.
        """
        dtype = choose_index_dtype(nrows, self.ncols, self.entries, index_dtype)
        lens, inds, counts = [], [], []
        top = 0
        for k in range(self.nbuckets):
            c0, c1 = k * self.width, min(self.ncols, (k + 1) * self.width)
            rows, cols = [], []
            ntup = 0
            for kind in (0, 1):  # the tuples first: their positions are below ntup
                ent, off = self.pieces[kind][k]
                while ent:
                    rows.append(xp.asarray(ent.pop(0)))
                    cols.append(xp.asarray(off.pop(0)))
                    ntup += rows[-1].shape[0] if kind == 0 else 0
            if not rows:
                lens.append(xp.zeros(c1 - c0, dtype=np.int64))
                continue
            r = xp.concatenate(rows)
            c = xp.concatenate(cols)
            del rows, cols
            ln, ind, cnt = compress_on(xp, r, c, c1 - c0, ntup)
            del r, c
            release_freed()  # the group's host pieces and scratch (see build)
            lens.append(ln)
            inds.append(ind.astype(dtype))
            # Kept in the group's own count dtype (one byte an entry but for a
            # tuple repeated over 255 times), not in int64 until the end.
            most = int(cnt.max()) if cnt.shape[0] else 0
            top = max(top, most)
            counts.append(cnt.astype(_count_dtype(most)))
        ptr = xp.zeros(self.ncols + 1, dtype=np.int64)
        ptr[1:] = xp.cumsum(xp.concatenate(lens))
        del lens
        dt = _count_dtype(top)
        ind = xp.concatenate(inds) if inds else xp.zeros(0, dtype=dtype)
        del inds
        cnt = xp.concatenate([x.astype(dt, copy=False) for x in counts]) if counts \
            else xp.zeros(0, dtype=dt)
        return ptr, ind, cnt, self._take_loops()


def _count_dtype(top: int) -> type:
    """The tuple counts' dtype: uint8, or the smallest unsigned type that holds ``top``."""
    return (np.uint8 if top <= 0xFF else np.uint16 if top <= 0xFFFF
            else np.uint32 if top <= 0xFFFFFFFF else np.uint64)


def compress_on(xp: Any, rows: Any, cols: Any, ncols: int, ntup: int) -> tuple[Any, Any, Any]:
    """Entries ``(rows[k], cols[k])`` compressed by column on ``xp``'s device.

    Returns each column's length (int64, ``ncols``), the rows of every column
    in increasing order with repeats merged (int64), and per entry how many
    of its records are among the first ``ntup`` (the tuple records; the rest
    are mirrors, counted 0). Whole-array steps: one sort by (column, row).
    """
    order = xp.lexsort(xp.stack([rows.astype(np.int64), cols.astype(np.int64)]))
    r = rows[order].astype(np.int64)
    c = cols[order].astype(np.int64)
    first = xp.ones(r.shape[0], dtype=bool)
    first[1:] = (r[1:] != r[:-1]) | (c[1:] != c[:-1])
    seg = xp.cumsum(first) - 1
    ind = r[first]
    lens = xp.bincount(c[first], minlength=ncols)
    counts = xp.bincount(seg[order < ntup], minlength=ind.shape[0])
    return lens.astype(np.int64), ind, counts.astype(np.int64)


def build_columns(tup: list[np.ndarray], mir: list[np.ndarray], row0: int, col0: int, b: int,
                  B64: int, nrows: int, ncols: int, index_dtype: str | np.dtype | type = "auto",
                  transpose: bool = False, nbuckets: int = 1,
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray, tuple[np.ndarray, np.ndarray]]:
    """The block of the records: column pointers, rows, tuple counts, self-loops.

    The entries are the tuple records but their self-loops, and the mirror
    records (which never hold a loop). ``tup`` and ``mir`` are lists of (at
    most) one array each, emptied once the records are taken in, so that the
    caller's references do not keep them alive through the build.

    Each column is scattered as two runs, its tuples then its mirrors, each
    sorted in place; merging the runs deduplicates the rows and counts how
    many tuples every row stands for, with no search and no wider copy. The
    columns are built in ``nbuckets`` groups (see :class:`ColumnBuckets`);
    the block does not depend on their number.

    Parameters
    ----------
    tup, mir : list of numpy.ndarray
        The tuple and mirror records (interleaved local row, local column).
    row0, col0, b, B64 : int
        The chunks' first pieces and the distribution's piece sizes.
    nrows, ncols : int
        The block's shape.
    index_dtype : {"auto", "int32", "int64"} or dtype
        As for :func:`semirings.blocks.choose_index_dtype` (of the entries
        before duplicates are merged).
    transpose : bool
        Build the transposed block ``B_ijᵀ`` instead (columns: the records'
        rows; ``nrows``, ``ncols`` its shape): the tuple counts then follow
        its entries. The self-loops stay (block row, block column).
    nbuckets : int
        Column groups built one after the other.

    Returns
    -------
    ptr : numpy.ndarray
        ``ncols + 1`` int64 offsets.
    ind : numpy.ndarray
        Rows, of the chosen index dtype, increasing within every column.
    counts : numpy.ndarray
        Input tuples on every entry (0: a mirror only), uint8 unless a count
        passes 255, then the smallest unsigned type that holds them.
    loops : tuple of numpy.ndarray
        Local rows and columns of the self-loop tuples (the records' dtype).

    Raises
    ------
    OverflowError
        When int32 is requested but does not fit.
    """
    dtype = tup[0].dtype if tup else mir[0].dtype if mir else np.dtype(np.int32)
    cols = ColumnBuckets(ncols, nbuckets, row0, col0, b, B64, transpose, 1, dtype)
    if tup:
        cols.add(tup, np.array([tup[0].shape[0] // 2]))
    if mir:
        cols.add(mir)
    return cols.build(nrows, index_dtype)


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
def reached_tuples(ptr, ind, jc, dcsc, counts, loop_cols, col_levels, tr):  # type: ignore[no-untyped-def]
    """Tuples whose column ``u`` has ``col_levels[u] >= 0`` (entries' counts, then the loops).

    ``tr``: the block is ``B_ijᵀ`` (a tuple's column ``u`` is the entry's row).
    """
    tot = 0
    for s in range(ptr.shape[0] - 1):
        if tr:
            for e in range(ptr[s], ptr[s + 1]):
                if col_levels[ind[e]] >= 0:
                    tot += np.int64(counts[e])
            continue
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
    col_glob0, b, B64, unreached, row_conf, col_conf, tr,
):
    """:func:`spbfs.mpi._kernels.check_tuples` over the tuples the entry counts stand for.

    Entry ``x`` (row ``v``, column ``u``) stands for ``counts[x]`` copies of the
    tuple ``u -> v``: each copy is bad, or in the component, exactly when the
    entry is, and confirming a tree edge twice changes nothing, so one visit
    per entry with a non-zero count gives the same results as checking the
    rebuilt tuples one by one, without rebuilding them. ``tr``: the block is
    ``B_ijᵀ`` (slots are rows ``v``, entries columns ``u``).

    Returns (first bad tuple's row, its column, or -1, -1; bad tuples;
    component tuples).
    """
    bad_row = -1
    bad_col = -1
    nbad = 0
    comp = 0
    for s in range(ptr.shape[0] - 1):
        slot = np.int64(jc[s]) if dcsc else np.int64(s)
        u = slot
        ku = col_key[u] if not tr else unreached
        for x in range(ptr[s], ptr[s + 1]):
            m = np.int64(counts[x])
            if m == 0:
                continue
            v = np.int64(ind[x])
            if tr:
                u = v
                v = slot
                ku = col_key[u]
            if check_tuple(v, u, row_key[v], ku, directed, row_par, col_par, row_glob0,
                           col_glob0, b, B64, row_conf, col_conf):
                if bad_row < 0:
                    bad_row = v
                    bad_col = u
                nbad += m
            if ku != unreached:
                comp += m
    return bad_row, bad_col, nbad, comp


@nb.njit(cache=True)
def count_rows(ind, counts):  # type: ignore[no-untyped-def]
    """``counts[r]`` += entries of row ``r`` (``ind`` of any integer dtype, no wider copy)."""
    for e in range(ind.shape[0]):
        counts[ind[e]] += 1
