"""The bottom-up scan, written once for the one-process search and the grid.

A bottom-up step walks a list of candidate slots of the in-block (or of a
grid block's transposed segment) and, for each vertex not yet reached, scans
its in-neighbours in increasing order up to the first one in the frontier
bitmap (Beamer, Asanović and Patterson, *Direction-optimizing breadth-first
search*). The scan is the same wherever it runs; what differs is how ids
translate and what a find writes:

* the slot offset ``slot0`` and row offset ``row0`` turn a candidate's
  position into a block slot and its vertex into the id the caller's arrays
  use (both 0 on one process; a grid segment's first slot and first row);
* three small compiled functions passed in with their arrays ``ids`` say
  whether a vertex is already reached (``look``), what to fetch early for a
  scattered candidate (``warm``) and what a find records (``claim``: the
  parent, translated to a global id on the grid; it returns the degree the
  find adds to the level's sum).

numba compiles :func:`bottomup_scan` once per set of functions (each
compiled function is a type of its own), so each caller gets a kernel
specialized to its ids, as fast as one written for it alone.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from semirings._intrinsics import prefetch
from spbfs.kernels.bitmaps import first_member

__all__ = ["bottomup_scan"]

# Candidates ahead whose adjacency is fetched early; scattered candidates fetch
# their slot pointer and reached-mark twice as early.
_AHEAD = 16


@nb.njit(cache=True, inline="always")
def bottomup_scan(ptr, ind, jc, dcsc, front, src, cand, first, lo_c, hi_c, slot0, row0,
                  found, f0, look, warm, claim, ids, res):
    """Bottom-up over the candidates ``lo_c .. hi_c``; finds from ``found[f0]`` on.

    Parameters
    ----------
    ptr, ind, jc, dcsc
        The block: slot ``k``'s in-neighbours are ``ind[ptr[k]:ptr[k + 1]]``
        (column-chunk local ids); its vertex is ``jc[k]`` for dcsc, else ``k``.
    front : numpy.ndarray of uint64
        The frontier bitmap over the in-neighbour ids.
    src, cand : numpy.ndarray
        Candidate slots ``src[lo_c:hi_c]`` (``first``: the slots ``slot0 + lo_c
        .. slot0 + hi_c - 1``, ``src`` not read). Survivors go to ``cand``
        from ``lo_c`` on; ``src`` may be ``cand`` (survivors never overtake the
        read position). Vertices with no in-neighbours are dropped: they can
        never find a parent.
    slot0, row0 : int
        First slot of the candidates' range; id of the range's first vertex
        (the vertex handed to the functions is ``vertex - row0``).
    found : numpy.ndarray
        The finds' vertices (``vertex - row0``), from ``f0`` on.
    look, warm, claim : numba functions
        ``look(ids, v)``: a mark, ``>= 0`` when ``v`` is already reached
        (skipped). ``warm(ids, v)``: prefetch what ``look`` reads.
        ``claim(ids, v, mark, u, f)``: record the find of ``v`` from
        in-neighbour ``u`` (its ``f``-th find slot); returns the degree it adds.
    ids : tuple
        The arrays and numbers the three functions read.
    res : numpy.ndarray of int64
        Gets (finds, survivors, edges scanned, degree sum of the finds).
    """
    f = f0
    r = lo_c
    scanned = 0
    degsum = 0
    # Unsigned indices: a signed one costs a negative-index fix-up at every load.
    for i in range(lo_c, hi_c):
        ui = np.uint64(i)
        if first:
            if i + _AHEAD < hi_c:
                prefetch(ind, ptr[np.uint64(slot0 + i + _AHEAD)])
        else:
            # Scattered candidates miss on the mark and ptr too: ask for those
            # twice as early, so the adjacency prefetch finds its pointer cached.
            if i + 2 * _AHEAD < hi_c:
                k2 = np.uint64(src[ui + np.uint64(2 * _AHEAD)])
                prefetch(ptr, k2)
                warm(ids, (np.int64(jc[k2]) if dcsc else np.int64(k2)) - row0)
            if i + _AHEAD < hi_c:
                prefetch(ind, ptr[np.uint64(src[ui + np.uint64(_AHEAD)])])
        p = slot0 + i if first else np.int64(src[ui])
        k = np.uint64(p)
        v = (np.int64(jc[k]) if dcsc else p) - row0
        mark = look(ids, v)
        if mark >= 0:
            continue
        lo = np.int64(ptr[k])
        hi = np.int64(ptr[k + np.uint64(1)])
        e = first_member(front, ind, lo, hi)
        if e < hi:
            found[np.uint64(f)] = v
            degsum += claim(ids, v, mark, np.int64(ind[np.uint64(e)]), f)
            f += 1
            scanned += e - lo + 1
        elif hi > lo:
            cand[np.uint64(r)] = p
            r += 1
            scanned += hi - lo
    res[0] = f - f0
    res[1] = r - lo_c
    res[2] = scanned
    res[3] = degsum
