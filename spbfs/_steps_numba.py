"""Fused BFS steps for the numba backend.

The top-down step is the SpMSV ``t = B ⊕.⊗ f`` over ``min_second``, masked by
the complement of the visited set, fused with the update of parents, levels
and the next frontier. The frontier is processed in increasing vertex order,
so the first writer of ``parent[v]`` is the smallest frontier vertex reaching
``v``: exactly the ``min`` of the semiring, with no atomics.

The bottom-up step scans the in-edges of every unvisited vertex in increasing
order and stops at the first frontier neighbour, which is again the smallest:
both directions give the same parents as the algebra says.
"""

from __future__ import annotations

import numba as nb
import numpy as np


@nb.njit(cache=True, nogil=True)
def topdown_step(ptr, ind, jc, dcsc, frontier, parents, levels, want_levels, depth, deg, out):
    """Expand ``frontier`` (sorted); return (new count, edges scanned, degree sum of new)."""
    k = 0
    scanned = 0
    degsum = 0
    nzc = jc.shape[0]
    for i in range(frontier.shape[0]):
        u = frontier[i]
        if dcsc:
            p = np.searchsorted(jc, u)
            if p >= nzc or jc[p] != u:
                continue
            lo = ptr[p]
            hi = ptr[p + 1]
        else:
            lo = ptr[u]
            hi = ptr[u + 1]
        scanned += hi - lo
        for e in range(lo, hi):
            v = ind[e]
            if parents[v] == -1:
                parents[v] = u
                if want_levels:
                    levels[v] = depth
                out[k] = v
                k += 1
                degsum += deg[v]
    return k, scanned, degsum


@nb.njit(cache=True, nogil=True)
def _bottomup_range(ptr, ind, jc, dcsc, front, parents, levels, want_levels, depth, deg, nxt,
                    cand, lo_c, hi_c, found, out):
    """Bottom-up over ``cand[lo_c:hi_c]``; survivors and finds are written from ``lo_c`` on."""
    f = lo_c
    r = lo_c
    scanned = 0
    degsum = 0
    for i in range(lo_c, hi_c):
        k = cand[i]
        v = np.int64(jc[k]) if dcsc else k
        if parents[v] != -1:
            continue
        lo = ptr[k]
        hi = ptr[k + 1]
        e = lo
        while e < hi:
            if front[ind[e]]:
                break
            e += 1
        if e < hi:
            parents[v] = ind[e]
            if want_levels:
                levels[v] = depth
            nxt[v] = 1
            found[f] = v
            f += 1
            degsum += deg[v]
            scanned += e - lo + 1
        else:
            cand[r] = k
            r += 1
            scanned += hi - lo
    out[0] = f - lo_c
    out[1] = r - lo_c
    out[2] = scanned
    out[3] = degsum


@nb.njit(cache=True, nogil=True, parallel=True)
def _bottomup_chunks(ptr, ind, jc, dcsc, front, parents, levels, want_levels, depth, deg, nxt,
                     cand, ncand, found, nchunks, step, outs):
    for c in nb.prange(nchunks):
        _bottomup_range(ptr, ind, jc, dcsc, front, parents, levels, want_levels, depth, deg,
                        nxt, cand, c * step, min(ncand, c * step + step), found, outs[c])


@nb.njit(cache=True, nogil=True)
def _close_gaps(cand, found, outs, step):
    fpos = 0
    rpos = 0
    for c in range(outs.shape[0]):
        lo_c = c * step
        for t in range(outs[c, 0]):
            found[fpos + t] = found[lo_c + t]
        for t in range(outs[c, 1]):
            cand[rpos + t] = cand[lo_c + t]
        fpos += outs[c, 0]
        rpos += outs[c, 1]
    return fpos, rpos


def bottomup_step(ptr, ind, jc, dcsc, front, parents, levels, want_levels, depth, deg, nxt,
                  cand, ncand, found, nchunks):
    """One bottom-up level over a byte-map frontier.

    ``cand[:ncand]`` lists the vertices that may still find a parent (unvisited,
    with in-edges); each is scanned in increasing neighbour order until the
    first frontier neighbour. Survivors are compacted in place to the front of
    ``cand`` and the vertices found are written to ``found`` (both sorted), so
    later levels touch only what is left and the next top-down level gets its
    frontier without an O(n) scan. ``nxt`` (all zero on entry) becomes the
    byte map of the new frontier.

    Returns (found count, survivors count, edges scanned, degree sum of new).
    """
    # A parallel region costs tens of microseconds (more on a loaded machine):
    # small candidate sets, common in the long tail of a road network, run inline.
    if ncand < 4096:
        nchunks = 1
    step = max(1, -(-ncand // nchunks))
    outs = np.zeros((nchunks, 4), np.int64)
    if nchunks == 1:
        _bottomup_range(ptr, ind, jc, dcsc, front, parents, levels, want_levels, depth, deg,
                        nxt, cand, 0, ncand, found, outs[0])
    else:
        _bottomup_chunks(ptr, ind, jc, dcsc, front, parents, levels, want_levels, depth, deg,
                         nxt, cand, ncand, found, nchunks, step, outs)
    fpos, rpos = _close_gaps(cand, found, outs, step)
    return fpos, rpos, int(outs[:, 2].sum()), int(outs[:, 3].sum())


@nb.njit(cache=True, nogil=True)
def initial_candidates(ptr, jc, dcsc, parents, cand):
    """Fill ``cand`` with the major slots (columns of the in-block) that may find a parent."""
    k = 0
    nmajor = jc.shape[0] if dcsc else ptr.shape[0] - 1
    for c in range(nmajor):
        v = np.int64(jc[c]) if dcsc else c
        if ptr[c + 1] > ptr[c] and parents[v] == -1:
            cand[k] = c
            k += 1
    return k


@nb.njit(cache=True, nogil=True)
def clear_map(ids, bytemap):
    """Set ``bytemap[ids] = 0``: clearing a frontier map costs O(frontier), not O(n)."""
    for i in range(ids.shape[0]):
        bytemap[ids[i]] = 0


@nb.njit(cache=True, nogil=True)
def list_to_map(ids, bytemap):
    """Set ``bytemap[ids] = 1``."""
    for i in range(ids.shape[0]):
        bytemap[ids[i]] = 1
