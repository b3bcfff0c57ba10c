"""Whether a graph's degrees are regular: the choice between the branched and the
unbranched top-down scans (:mod:`spbfs.kernels.bfs_numba`, :mod:`spbfs.kernels.rows_bfs`).

A scan's branch on "is this neighbour new?" is predicted where the pattern of
what it finds repeats, as on a graph whose vertices nearly all have one degree
(a grid, a path); where degrees vary (power-law, road and mesh graphs) it is
mispredicted, and the scan that decides nothing by a branch wins.
"""

from __future__ import annotations

import numba as nb
import numpy as np

__all__ = ["REGULAR_SHARE", "majority_count", "regular_degrees"]

#: The share of the vertices with edges that must have one degree for a graph to count
#: as regular (:func:`regular_degrees`): a 1000 x 1000 grid has 0.996, a mesh 0.29, the
#: luxembourg_osm road network 0.85.
REGULAR_SHARE = 0.9


@nb.njit(cache=True, inline="always")
def _value(a, v, rows):  # type: ignore[no-untyped-def]
    return a[v + 1] - a[v] if rows else a[v]


@nb.njit(cache=True, nogil=True)
def majority_count(deg, rows):  # type: ignore[no-untyped-def]
    """(count of the most common non-zero degree if it holds over half of them, else
    less; count of non-zero degrees), in two passes and no memory.

    ``deg`` holds the degrees, or with ``rows`` a compressed structure's pointers
    (degree ``deg[v + 1] - deg[v]``: no array of degrees to allocate for a one-off
    search of a scipy matrix).

    Boyer and Moore's vote: a value held by over half the entries is the candidate the
    first pass ends with, and the second pass counts it. A count per degree value
    (``np.bincount``) would take 8 bytes per value up to the max degree: 800 MB for a
    star of 10**8 vertices.
    """
    n = deg.shape[0] - 1 if rows else deg.shape[0]
    cand = deg.dtype.type(0)
    votes = 0
    for v in range(n):
        d = _value(deg, v, rows)
        if d == 0:
            continue
        if votes == 0:
            cand = d
            votes = 1
        elif d == cand:
            votes += 1
        else:
            votes -= 1
    count = 0
    with_edges = 0
    for v in range(n):
        d = _value(deg, v, rows)
        with_edges += d != 0
        count += d == cand and d != 0
    return count, with_edges


def regular_degrees(deg: np.ndarray, rows: bool = False) -> bool:
    """Whether nearly all vertices with edges have one degree (:data:`REGULAR_SHARE`).

    Two compiled passes over ``deg`` (:func:`majority_count`: the share asked is
    over half), the degrees or, with ``rows``, a compressed structure's pointers;
    a graph without edges is regular.
    """
    if rows and deg.shape[0] == 0:
        return True
    count, with_edges = majority_count(deg, rows)
    return with_edges == 0 or count >= REGULAR_SHARE * with_edges
