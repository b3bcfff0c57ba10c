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


@nb.njit(cache=True, nogil=True, parallel=True)
def bottomup_step(ptr, ind, jc, dcsc, front, parents, levels, want_levels, depth, deg, nxt):
    """One bottom-up level over a byte-map frontier; fills the byte map ``nxt``.

    Returns (new count, edges scanned, degree sum of new).
    """
    count = 0
    scanned = 0
    degsum = 0
    nmajor = jc.shape[0] if dcsc else ptr.shape[0] - 1
    for c in nb.prange(nmajor):
        v = np.int64(jc[c]) if dcsc else np.int64(c)
        if parents[v] != -1:
            continue
        lo = ptr[c]
        hi = ptr[c + 1]
        for e in range(lo, hi):
            u = ind[e]
            if front[u]:
                parents[v] = u
                if want_levels:
                    levels[v] = depth
                nxt[v] = 1
                count += 1
                degsum += deg[v]
                scanned += e - lo + 1
                break
        else:
            scanned += hi - lo
    return count, scanned, degsum


@nb.njit(cache=True, nogil=True)
def list_to_map(ids, bytemap):
    """Set ``bytemap[ids] = 1``."""
    for i in range(ids.shape[0]):
        bytemap[ids[i]] = 1
