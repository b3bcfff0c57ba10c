"""The BFS steps written once for the one-process and the grid kernels.

A step runs over a *block view* (``ptr, ind, jc`` and the format flag, as the
kernels of :mod:`spbfs.kernels.bfs_numba` take them) and leaves what a vertex
*is* to its caller: the test whether a row may still find a parent and the
write of a find are small functions the caller passes, with its own arrays
and id map in a tuple beside them. The one process keeps one state word per
vertex and global ids; a rank of the grid keeps bitmaps, parents and levels
and maps its local ids to global ones. Every function here is inlined into
its callers (numba inlines ``inline="always"`` callees at the IR level, so
a passed function and a constant flag cost nothing once compiled: each
caller gets the loop specialised to its own functions). The callers are
compiled without reference counting (``_nrt=False``): with it, every unpack
of the tuple inside the loop increfs and decrefs each of its arrays.

numba's cache of a kernel is keyed by the time stamp of the kernel's own file,
not of the files it inlines from: an edit here reaches cached kernels only
with an edit of their modules (:mod:`spbfs.kernels.bfs_numba`,
:mod:`spbfs.mpi._kernels`) or an empty cache.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from semirings._intrinsics import column_share, dcsc_column_range, prefetch

# Iterations ahead at which the next adjacency list is requested (see prefetch).
AHEAD = 16

# The column index of a csr block: never read (its columns are ``ptr[u]``).
NO_INDEX = np.empty(0, np.int64)


def search_index(jc: np.ndarray) -> tuple[np.ndarray, int]:
    """The column index ``(aux, shift)`` of a dcsc block as one chunk of every column.

    With it :func:`topdown_scan` finds a column by bisection over ``jc``
    (``semirings._intrinsics.dcsc_column_range``), as ``np.searchsorted`` would:
    no memory beyond two words, where ``DCSCBlock.column_index`` holds up to
    two per stored column for lookups in a few steps. A shift of 63 puts
    every column id (int64, non-negative) in chunk 0.
    """
    return np.array([0, jc.shape[0]], np.int64), 63


@nb.njit(cache=True, inline="always")
def bottomup_scan(ptr, ind, jc, dcsc, front, member, src, cand, first, lo_slot, row_base, lo_c,
                  hi_c, f0, marks, is_open, take, at, early, res):  # type: ignore[no-untyped-def]
    """Bottom-up over the candidates ``src[lo_c:hi_c]`` of a block's rows.

    A candidate is a major slot of the transposed block ``ptr, ind, jc``
    (``dcsc``: a position in ``jc``; csr: the row itself); with ``first`` the
    candidates are every slot ``lo_slot + lo_c .. lo_slot + hi_c - 1`` and
    ``src`` is not read. Its row is the slot's id less ``row_base``.

    ``is_open(marks, row)`` says (whether the row may still find a parent, a
    key handed on to ``take``): a row already done is dropped. The in-neighbours
    of an open row are scanned in increasing order up to the first in the
    frontier (the smallest: the ``min`` of the semiring), which
    ``member(front, ind, lo, hi)`` finds (:func:`~spbfs.kernels.bitmaps.first_member`
    over a frontier bitmap, or the caller's own test); ``take(at, row, parent id, f,
    key)`` writes the find as number ``f`` (from ``f0`` on) and returns the degree it
    adds to the next frontier.
    A row with in-neighbours but no parent yet survives: its slot goes to
    ``cand`` from ``lo_c`` on (``src`` may be ``cand``: survivors never
    overtake the read position); a row without any can never find one and is
    dropped.

    ``early`` (a constant of the caller): scattered candidates also miss on
    ``marks`` and ``ptr``, so those are requested twice as far ahead, where the
    adjacency prefetch then finds its pointer cached. It pays where the
    marks are a word per vertex (the one-process state); over a rank's
    bitmap the grid's local bottom-up ran 7-17% slower with it.

    ``res`` gets (finds, survivors, edges scanned, degree sum of the finds).
    """
    f = f0
    r = lo_c
    scanned = 0
    degsum = 0
    slot0 = np.uint64(lo_slot)
    base = np.uint64(row_base)
    # Unsigned indices: a signed one costs a negative-index fix-up at every load.
    for i in range(lo_c, hi_c):
        ui = np.uint64(i)
        if first:
            if i + AHEAD < hi_c:
                prefetch(ind, ptr[slot0 + ui + np.uint64(AHEAD)])
        else:
            if early and i + 2 * AHEAD < hi_c:
                k2 = np.uint64(src[ui + np.uint64(2 * AHEAD)])
                prefetch(ptr, k2)
                prefetch(marks, (np.uint64(jc[k2]) if dcsc else k2) - base)
            if i + AHEAD < hi_c:
                prefetch(ind, ptr[np.uint64(src[ui + np.uint64(AHEAD)])])
        k = slot0 + ui if first else np.uint64(src[ui])
        v = (np.uint64(jc[k]) if dcsc else k) - base
        still, key = is_open(marks, v)
        if not still:
            continue
        lo = np.int64(ptr[k])
        hi = np.int64(ptr[k + np.uint64(1)])
        e = member(front, ind, lo, hi)
        if e < hi:
            degsum += take(at, v, ind[np.uint64(e)], f, key)
            f += 1
            scanned += e - lo + 1
        elif hi > lo:
            cand[np.uint64(r)] = k
            r += 1
            scanned += hi - lo
    res[0] = f - f0
    res[1] = r - lo_c
    res[2] = scanned
    res[3] = degsum


@nb.njit(cache=True, inline="always")
def topdown_scan(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, at, out, opos, vlo, vhi,
                 whole, claim, ahead, sums):  # type: ignore[no-untyped-def]
    """Top-down from the frontier ``queue[head:tail]`` into the destinations ``vlo <= v < vhi``.

    The masked SpMSV over ``min_second``, one frontier vertex (a column of the
    block) at a time: ``claim(ind, lo, hi, u, at, out, k)`` takes column
    ``u``'s entries ``ind[lo:hi]``, writes what it claims (listed in ``out``
    from ``k`` on) and returns (the next ``k``, degree sum of the new); ``at``
    holds the caller's arrays and id map. Columns are sorted, so a long
    column's share of the destinations is found by binary search and the
    parts of a parallel level together read each edge once; with ``whole``
    (every destination) the share is not looked for. Returns (new count,
    edges scanned, degree sum of new).

    A dcsc block comes with its column index ``aux, shift`` (see
    ``DCSCBlock.column_index``); a csr block's ``aux`` is not read.

    One loop per way of finding a column (csr, dcsc with one column per index
    chunk, dcsc with a scan): with the format tested inside one loop, LLVM
    compiled the csr case 1.6x slower on a 1000 x 1000 grid. The adjacency
    lists are prefetched when ``ahead``, a constant in each caller (see
    ``bfs_numba._topdown_strided``). Without ``sums`` (a constant too) the
    degree sum returned is 0 and its additions are compiled out (see
    ``bfs_numba._topdown_free``).
    """
    k = opos
    scanned = 0
    degsum = 0
    if not dcsc:
        for i in range(head, tail):
            # Unsigned indices here too (no negative-index fix-up): 10% of a road
            # network's search, whose levels hold about a hundred vertices.
            if ahead and i + AHEAD < tail:
                prefetch(ind, ptr[np.uint64(queue[np.uint64(i + AHEAD)])])
            u = queue[np.uint64(i)]
            lo, hi = np.int64(ptr[np.uint64(u)]), np.int64(ptr[np.uint64(u + 1)])
            if not whole:
                lo, hi = column_share(ind, lo, hi, vlo, vhi)
            scanned += hi - lo
            k, ds = claim(ind, lo, hi, u, at, out, k)
            if sums:
                degsum += ds
    elif shift == 0:
        for i in range(head, tail):
            # The index, the column's slot, then its list: three hops, asked for in turn.
            if ahead and i + 2 * AHEAD < tail:
                prefetch(aux, queue[np.uint64(i + 2 * AHEAD)])
            if ahead and i + AHEAD < tail:
                prefetch(ptr, aux[np.uint64(queue[np.uint64(i + AHEAD)])])
            if ahead and i + AHEAD // 2 < tail:
                prefetch(ind, ptr[np.uint64(aux[np.uint64(queue[np.uint64(i + AHEAD // 2)])])])
            u = queue[np.uint64(i)]
            # Written out, not through dcsc_column_range: the inlined general lookup
            # (a loop with early returns) measured 2x slower on a road network.
            lo = np.int64(ptr[np.uint64(aux[np.uint64(u)])])
            hi = np.int64(ptr[np.uint64(aux[np.uint64(u + 1)])])
            if not whole:
                lo, hi = column_share(ind, lo, hi, vlo, vhi)
            scanned += hi - lo
            k, ds = claim(ind, lo, hi, u, at, out, k)
            if sums:
                degsum += ds
    else:
        for i in range(head, tail):
            u = queue[np.uint64(i)]
            lo, hi = dcsc_column_range(ptr, jc, aux, shift, u)
            if not whole:
                lo, hi = column_share(ind, lo, hi, vlo, vhi)
            scanned += hi - lo
            k, ds = claim(ind, lo, hi, u, at, out, k)
            if sums:
                degsum += ds
    return k - opos, scanned, degsum
