"""Drop-ins for :mod:`scipy.sparse.csgraph`: change the import, keep the script.

``from spbfs import csgraph`` offers :func:`breadth_first_order`,
:func:`breadth_first_tree`, :func:`shortest_path`, :func:`dijkstra` and
:func:`connected_components` with scipy's signatures, defaults
(``directed=True``), input conventions and return types (float64 distances with
``inf``; int32 predecessors and labels with ``-9999`` for "none").

Input, as scipy reads it: a sparse array or matrix of any format (every stored
entry is an edge, an explicit zero an edge of weight 0; repeated entries of a
coo input add up, as ``tocsr`` does), a dense array (0, ``inf`` and ``nan`` are
non-edges, via :func:`scipy.sparse.csgraph.csgraph_from_dense`) or a masked
array (masked entries are non-edges). ``directed=False`` lets a path use
``G[i, j]`` or ``G[j, i]``; where both are stored the smaller weight counts.

Where the work runs:

========================  ===================================================
function                  engine
========================  ===================================================
``breadth_first_order``   a compiled queue BFS that visits vertices in scipy's
                          order: the same order and predecessors, element for
                          element (see below)
``breadth_first_tree``    that order's predecessors, made the tree matrix of
                          :func:`scipy.sparse.csgraph.reconstruct_path` by
                          compiled passes (its entries, rows sorted)
``dijkstra``,             weighted (and ``min_only``): delta-stepping
``shortest_path``         (:mod:`spbfs.kernels.sssp_numba`), all sources in
(``method='D'``, or       one compiled call, in parallel chunks on the
``'auto'`` where scipy    idle threads of a large graph; unweighted:
picks ``'D'``)            :func:`spbfs.bfs`
                          (one source), or for several the multi-source BFS
                          (:func:`~spbfs.algorithms.multi_source_bfs`, a
                          compiled queue per source on a deep graph), except
                          with predecessors on a graph whose first search has
                          more than ``_DEEP_LEVELS`` (200) levels, and on a
                          small graph (stored entries times sources at most
                          ``_SMALL_UNWEIGHTED``), where delta-stepping with
                          unit weights runs them all
``connected_components``  compiled kernels on the input's csr arrays: a
                          union-find (weak), Pearce's search in scipy's
                          visiting order (strong; labels equal scipy's)
========================  ===================================================

Small calls cost what scipy's own checks cost or less: on a csr input the
checks are O(1) but for one compiled pass over the weights, an undirected
graph that equals its transpose (both directions stored, the usual input of
``directed=False``) is searched by its own rows after one compiled pass of
reads that says so (scipy scans the rows of ``G`` and ``G.T``: every edge
twice), another graph's transpose is one compiled pass (scipy's ``G.T.tocsr()`` takes 36 us
on a 156-entry graph, more than the search), and delta-stepping answers in
microseconds (``benchmarks/csgraph.py``).

Delegated to scipy, unchanged (same result, warnings and errors):
``connected_components`` on a graph of at most ``SMALL_VERTICES`` vertices
while its kernel is not compiled, and ``dijkstra``/``shortest_path`` on one
whose delta-stepping kernel is not compiled; ``method='FW'``, ``'BF'`` and
``'J'``, and ``'auto'`` wherever scipy's rule picks one of them (a graph with a
negative weight, or more than ``N**2 / 4`` edges without ``indices``); a graph
with a negative or NaN weight, or complex values, in :func:`dijkstra` (scipy
warns and runs anyway); pydata ``sparse`` arrays; and empty (0 x 0) graphs in
the shortest-path functions.

Differences from scipy, on purpose:

* Shortest-path **distances** equal scipy's exactly. **Predecessors** are a
  valid shortest-path tree but, where several exist, not always scipy's: scipy
  keeps the last vertex that lowered a heap key, spbfs the smallest-id parent
  of the previous level (unweighted, multi-source BFS), the last vertex that
  lowered a bucket entry (weighted rows, and unweighted rows on a deep graph:
  delta-stepping's own record), or for ``min_only`` the first vertex of a
  breadth-first walk over the tight edges (``dist[u] + w == dist[v]``). All
  are trees: zero-weight cycles stay out.
* ``connected_components(connection='strong')`` merges repeated entries of a
  csr input (and so sorts its rows) before the search: scipy 1.17.1 does not
  return on a csr matrix that stores an entry twice.
* Bad arguments raise where scipy runs on: ``i_start`` out of range (scipy
  prints an ignored ``IndexError`` and returns a wrong order), a fractional
  ``i_start`` or index (scipy truncates it), a boolean vertex id, and a NaN
  ``limit`` (scipy then reaches nothing). Whole-number floats are accepted as
  scipy accepts them.

``breadth_first_order`` matches scipy element for element: scipy visits the
neighbours of each dequeued vertex in stored order (row ``i`` of ``G``, then,
for ``directed=False``, row ``i`` of ``G.T``) and the first to discover a vertex
is its predecessor. That order is a property of a sequential queue, so this
function runs a compiled queue BFS of the same order instead of the
direction-optimizing :func:`spbfs.bfs` (whose parent is the smallest-id
frontier vertex, and whose within-level order is by id); the cost of that
choice is measured in ``docs/benchmarks.md``.

No conversion is cached between calls: a scipy matrix can change in place
(``A.data[:] = ...``), and telling an unchanged matrix from a changed one costs
a pass over it, as much as converting it again. Caching belongs to a graph
object the caller keeps (:class:`spbfs.Graph`).
"""

from __future__ import annotations

import math
import operator
from contextlib import nullcontext
from typing import Any

import numba as nb
import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph as _scipy

from semirings.backend import get_backend
from semirings.blocks import Block, CSRBlock, block_from_scipy, choose_index_dtype
from spbfs._compile import SMALL_VERTICES, ready
from spbfs.algorithms.msbfs import multi_source_bfs
from spbfs.bfs import bfs
from spbfs.config import Config, load_config
from spbfs.graph import Graph
from spbfs.kernels import components_numba as _cc
from spbfs.kernels import sssp_numba
from spbfs.threads import search_threads

__all__ = [
    "NULL_IDX",
    "breadth_first_order",
    "breadth_first_tree",
    "connected_components",
    "dijkstra",
    "shortest_path",
]

#: scipy's "no vertex" in predecessor arrays.
NULL_IDX = -9999


# Sources per multi-source BFS call: bounds the (k, n) int64 work arrays.
_MSBFS_CHUNK = 256

# Stored entries times sources up to which unweighted dijkstra / shortest_path run
# delta-stepping with unit weights (a compiled queue search, no graph object built)
# instead of spbfs.bfs or the multi-source BFS, whose graph construction costs more
# than the search there: scipy answers such calls in tens of microseconds, and
# spbfs.bfs was slower than scipy up to about this size (one source).
_SMALL_UNWEIGHTED = 40_000

# Levels of the first search above which the other unweighted searches that want
# predecessors run as delta-stepping with unit weights (a compiled queue search each)
# instead of the multi-source BFS's word loop: on luxembourg_osm (1,035 levels) 64
# searches take 4.7 s that way against 14 s (scipy 7.4 s); on musae_git (9 levels) the
# multi-source BFS is 10x faster. Levels alone take the multi-source BFS on every graph:
# on a deep one it runs a compiled queue per source itself (luxembourg_osm, 64 sources:
# 151 ms against 818 ms by delta-stepping and 792 ms for scipy, load 2).
_DEEP_LEVELS = 200

#: Stored entries from which several groups of seeds of one delta-stepping call run in
#: parallel, one chunk of groups per idle thread: each group is a whole search (or
#: several), worth a thread where the graph has this many entries; below, the calls take
#: less than reading the machine's load would.
PARALLEL_GROUPS_ENTRIES = 1 << 17


# --------------------------------------------------------------------------- kernels


@nb.njit(cache=True, nogil=True)
def _transpose(ptr, ind, data):  # type: ignore[no-untyped-def]
    """csr arrays of ``A.T`` from those of ``A``: ``(ptr, ind, data)``, ``data`` empty for none.

    Each row of the transpose lists its entries by increasing row of ``A``
    (repeats in stored order), as scipy's ``A.T.tocsr()``: a traversal sees
    the neighbours in scipy's order.
    """
    n = ptr.shape[0] - 1
    tptr = np.zeros(n + 1, dtype=ptr.dtype)
    for e in range(ptr[n]):
        tptr[ind[e] + 1] += 1
    for v in range(n):
        tptr[v + 1] += tptr[v]
    tind = np.empty(ptr[n], dtype=ind.dtype)
    tdata = np.empty(ptr[n] if data.shape[0] else 0, dtype=data.dtype)
    pos = tptr[:n].copy()
    for u in range(n):
        for e in range(ptr[u], ptr[u + 1]):
            v = ind[e]
            k = pos[v]
            tind[k] = u
            if data.shape[0]:
                tdata[k] = data[e]
            pos[v] = k + 1
    return tptr, tind, tdata



@nb.njit(cache=True, nogil=True)
def _symmetric(ptr, ind, data):  # type: ignore[no-untyped-def]
    """Whether csr ``(ptr, ind, data)`` with sorted rows equals its transpose.

    ``data`` empty: the pattern alone. Repeats count: ``(u, v)`` stored
    twice needs ``(v, u)`` twice, with the same weights in the same order.
    Rows are read in order, so where the matrix is symmetric the entry
    ``(u, v)`` meets ``(v, u)`` as the next unmatched entry of row ``v``: a
    pass of reads, no transpose written, stopping at the first mismatch.
    """
    n = ptr.shape[0] - 1
    pos = ptr[:n].copy()
    values = data.shape[0] > 0
    for u in range(n):
        for e in range(ptr[u], ptr[u + 1]):
            v = ind[e]
            k = pos[v]
            if k >= ptr[v + 1] or ind[k] != u or (values and data[k] != data[e]):
                return False
            pos[v] = k + 1
    return True


def _mirrored(a: Any, data: np.ndarray) -> bool:
    """Whether csr ``a`` is its own transpose (weights ``data``, or empty for the pattern).

    Then a search of ``directed=False`` reads ``G``'s rows alone: row ``u``
    of ``G.T`` holds the same neighbours (and weights), which add nothing.
    Unsorted rows answer False (no sorting pass just to look).
    """
    return bool(a.has_sorted_indices) and bool(_symmetric(a.indptr, a.indices, data))


@nb.njit(cache=True, nogil=True, inline="always")
def _enqueue_row(u, ptr, ind, s, order, pred, tail):  # type: ignore[no-untyped-def]
    """Append the unseen entries of row ``u`` to the queue; returns the new tail."""
    one = np.uint64(1)
    for k in range(np.uint64(ptr[u]), np.uint64(ptr[u + one])):
        v = np.uint64(ind[k])
        if v != s and pred[v] == NULL_IDX:
            order[tail] = v
            pred[v] = u
            tail += 1
    return tail


@nb.njit(cache=True, nogil=True)
def _queue_bfs(start, p1, i1, p2, i2, both):  # type: ignore[no-untyped-def]
    """scipy's breadth-first order: dequeue, scan row of G (then of G.T), first finder wins.

    Returns the int32 order (a view of the vertices reached) and the int32
    predecessors (``NULL_IDX`` for none), allocated here: on a 67-vertex
    graph two numpy allocations cost a third of the call. Ids are read as
    unsigned so that numba drops its negative-index checks (they cost a
    third of the time; scipy's loop is unsigned too).
    """
    n = p1.shape[0] - 1
    order = np.empty(n, dtype=np.int32)
    pred = np.full(n, NULL_IDX, dtype=np.int32)
    s = np.uint64(start)
    order[0] = start
    head = 0
    tail = 1
    while head < tail:
        u = np.uint64(order[head])
        tail = _enqueue_row(u, p1, i1, s, order, pred, tail)
        if both:  # the row of G.T too (an undirected view of a directed matrix)
            tail = _enqueue_row(u, p2, i2, s, order, pred, tail)
        head += 1
    return order[:tail], pred


@nb.njit(cache=True, nogil=True)
def _tree_arrays(ptr, ind, data, pred, directed):  # type: ignore[no-untyped-def]
    """csr arrays ``(indptr, indices, data)`` of the tree that ``pred`` encodes, as scipy builds it.

    Row ``p`` lists ``p``'s children (``pred[v] == p``) by increasing id.
    The weights are :func:`scipy.sparse.csgraph.reconstruct_path`'s: the sum
    of the stored ``G[p, v]`` (repeats add up, in stored order, as scipy's
    fancy indexing adds them); for an undirected graph the smaller of that
    and the same sum of ``G[v, p]``, each taken as ``inf`` where it is 0 (or
    absent), NaN where either is NaN (``np.minimum``). Two passes over
    ``G``'s entries: no row is searched once per child, which a hub with many
    children would make quadratic.
    """
    n = pred.shape[0]
    tptr = np.zeros(n + 1, dtype=np.int32)
    for v in range(n):
        if pred[v] >= 0:
            tptr[pred[v] + 1] += 1
    for p in range(n):
        tptr[p + 1] += tptr[p]
    m = tptr[n]
    tind = np.empty(m, dtype=np.int32)
    slot = np.empty(n, dtype=np.int32)  # where each child's entry lies
    fill = tptr[:n].copy()
    for v in range(n):
        p = pred[v]
        if p >= 0:
            slot[v] = fill[p]
            tind[fill[p]] = v
            fill[p] += 1
    w = np.zeros(m)
    for p in range(n):  # G[p, v] for every child v of p
        for e in range(ptr[p], ptr[p + 1]):
            v = ind[e]
            if pred[v] == p:
                w[slot[v]] += data[e]
    if directed:
        return tptr, tind, w
    for v in range(n):  # G[v, p]: the child's own row
        p = pred[v]
        if p < 0:
            continue
        back = 0.0
        for e in range(ptr[v], ptr[v + 1]):
            if ind[e] == p:
                back += data[e]
        k = slot[v]
        fwd = w[k]
        fwd = np.inf if fwd == 0 else fwd
        back = np.inf if back == 0 else back
        w[k] = np.nan if (fwd != fwd or back != back) else min(fwd, back)
    return tptr, tind, w


@nb.njit(cache=True, nogil=True)
def _merged_row(p1, i1, d1, p2, i2, d2, u, values, out_i, out_d, pos):  # type: ignore[no-untyped-def]
    """Merge sorted row ``u`` of two matrices into ``out`` at ``pos``: no diagonal, min values.

    Returns the entries written; with ``out_i`` of length 0 it only counts.
    """
    a, ae = p1[u], p1[u + 1]
    b, be = p2[u], p2[u + 1]
    count = 0
    last = -1
    write = out_i.shape[0] > 0
    while a < ae or b < be:
        if b >= be or (a < ae and i1[a] <= i2[b]):
            v = i1[a]
            w = d1[a] if values else 0.0
            a += 1
        else:
            v = i2[b]
            w = d2[b] if values else 0.0
            b += 1
        if v == u:
            continue
        if v == last:  # a repeat (within one matrix or across both): keep the smaller weight
            if values and write and w < out_d[pos + count - 1]:
                out_d[pos + count - 1] = w
            continue
        if write:
            out_i[pos + count] = v
            if values:
                out_d[pos + count] = w
        count += 1
        last = v
    return count


@nb.njit(cache=True, nogil=True)
def _union_min(n, p1, i1, d1, p2, i2, d2, values):  # type: ignore[no-untyped-def]
    """CSR of the union of two matrices with sorted rows, diagonal dropped, min where both."""
    empty_i = np.empty(0, dtype=i1.dtype)
    empty_d = np.empty(0, dtype=np.float64)
    counts = np.empty(n, dtype=np.int64)
    for u in range(n):
        counts[u] = _merged_row(p1, i1, d1, p2, i2, d2, u, values, empty_i, empty_d, 0)
    ptr = np.empty(n + 1, dtype=np.int64)
    ptr[0] = 0
    for u in range(n):
        ptr[u + 1] = ptr[u] + counts[u]
    ind = np.empty(ptr[n], dtype=i1.dtype)
    data = np.empty(ptr[n] if values else 0, dtype=np.float64)
    for u in range(n):
        _merged_row(p1, i1, d1, p2, i2, d2, u, values, ind, data, ptr[u])
    return ptr, ind, data


@nb.njit(cache=True, nogil=True, inline="always")
def _tight_row(lo, hi, ind, w, u, dist, seen, pred, src, queue, tail):  # type: ignore[no-untyped-def]
    """Queue the unseen heads of tight edges ``lo .. hi-1`` out of ``u``; returns the new tail."""
    du = dist[u]
    for k in range(lo, hi):
        v = ind[k]
        if seen[v] or dist[v] == np.inf:
            continue
        if du + w[k] == dist[v]:
            seen[v] = True
            pred[v] = u
            src[v] = src[u]
            queue[tail] = v
            tail += 1
    return tail


@nb.njit(cache=True, nogil=True)
def _tight_tree(ptr, ind, w, ptr2, ind2, w2, dist, seeds, pred, src):  # type: ignore[no-untyped-def]
    """Predecessors along tight edges (``dist[u] + w == dist[v]``), breadth first from ``seeds``.

    The out-edges of ``u`` are row ``u`` of both csr triples (the second
    all-zero ``ptr2`` where there is one only). A breadth-first walk gives
    every reached vertex a parent that was reached before it, so the tree has
    no cycle even where zero weights tie distances. ``src`` receives the seed
    each vertex descends from.
    """
    n = dist.shape[0]
    seen = np.zeros(n, dtype=np.bool_)
    queue = np.empty(n, dtype=np.int64)
    tail = 0
    for s in seeds:
        if not seen[s]:
            seen[s] = True
            src[s] = s
            queue[tail] = s
            tail += 1
    head = 0
    while head < tail:
        u = queue[head]
        head += 1
        tail = _tight_row(ptr[u], ptr[u + 1], ind, w, u, dist, seen, pred, src, queue, tail)
        tail = _tight_row(ptr2[u], ptr2[u + 1], ind2, w2, u, dist, seen, pred, src, queue, tail)


# --------------------------------------------------------------------------- input


def _is_pydata(csgraph: Any) -> bool:
    return type(csgraph).__module__.split(".")[0] == "sparse" and hasattr(
        csgraph, "to_scipy_sparse")


def _as_csr(csgraph: Any, directed: bool) -> Any:
    """The graph as scipy csr, converted exactly as scipy.sparse.csgraph converts it.

    Sparse input keeps its stored order (``tocsr``; a csc input of an
    undirected graph is read transposed, as scipy does), so that a traversal
    sees neighbours in scipy's order. Dense input drops 0, inf and nan;
    masked input drops masked entries.
    """
    if sp.issparse(csgraph):
        if csgraph.ndim != 2:
            raise ValueError(f"csgraph must be 2-D, got shape {csgraph.shape}")
        if not directed and csgraph.format == "csc":
            csgraph = csgraph.T  # scipy's shortcut: for an undirected graph G.T is G
        a = csgraph.tocsr()
    elif np.ma.isMaskedArray(csgraph):
        if csgraph.ndim != 2:
            raise ValueError(f"csgraph must be 2-D, got shape {csgraph.shape}")
        a = _scipy.csgraph_from_masked(csgraph)
    else:
        arr = np.asarray(csgraph)
        if arr.ndim != 2:
            raise ValueError(f"csgraph must be 2-D, got shape {arr.shape}")
        a = _scipy.csgraph_from_dense(arr, null_value=0, infinity_null=True, nan_null=True)
    if a.shape[0] != a.shape[1]:
        raise ValueError(f"csgraph must be square (N x N), got shape {a.shape[0]}x{a.shape[1]}")
    return a


def _config() -> Config:
    """The settings of the spbfs engines: ``SPBFS_*`` as everywhere, but csr on the host.

    The compiled kernels of this module read the blocks' csr arrays; the
    thread count (``SPBFS_THREADS``) and direction settings apply as usual.
    """
    cfg = load_config(format="csr", backend="numba")
    if cfg.threads is not None:
        nb.set_num_threads(min(cfg.threads, nb.config.NUMBA_NUM_THREADS))
    return cfg


def _sorted(a: Any) -> Any:
    """``a`` with sorted rows (repeats kept), copied only when they are not sorted."""
    return a if a.has_sorted_indices else a.sorted_indices()


def _pattern_graph(a: Any, directed: bool, cfg: Config) -> Graph:
    """A :class:`Graph` of the structure of csr ``a`` (explicit zeros are edges)."""
    n = a.shape[0]
    if directed:
        if not a.has_canonical_format:
            a = a.copy()
            a.sum_duplicates()  # values are not read: only the repeats go
        out_block = block_from_scipy("csr", a.T, pattern=True, backend=cfg.backend)
        in_block = block_from_scipy("csr", a, pattern=True, backend=cfg.backend)
        return Graph(out_block, in_block, directed=True, config=cfg)
    block = _union_block(a, values=False, cfg=cfg)
    assert block.shape == (n, n)
    return Graph(block, block, directed=False, config=cfg)


def _union_block(a: Any, *, values: bool, cfg: Config) -> Block:
    """Block of ``G ∪ G.T`` (no self-loops; the smaller weight where both are stored)."""
    n = a.shape[0]
    a = _sorted(a)
    d1 = np.asarray(a.data, dtype=np.float64) if values else np.empty(0)
    # The compiled transpose (sorted rows, as scipy's A.T.tocsr()): scipy's csr_tocsc
    # took half of an unweighted search's call on musae_git (578,006 entries).
    tptr, tind, d2 = _transpose(a.indptr, a.indices, d1)
    ptr, ind, data = _union_min(n, a.indptr, a.indices, d1, tptr, tind, d2, values)
    # The union is symmetric: its csr arrays are its csc arrays, i.e. the block's
    # (no scipy matrix in between, whose pattern would need an array of ones).
    dt = choose_index_dtype(n, n, ind.shape[0])
    return CSRBlock((n, n), ptr.astype(dt, copy=False), ind.astype(dt, copy=False),
                    data if values else None, None, get_backend(cfg.backend))


def _weight_bounds(a: Any) -> tuple[float, float, float] | None:
    """:func:`~spbfs.kernels.sssp_numba.weight_range` of ``a``'s weights, in one pass.

    None for weights that delta-stepping cannot take as scipy does:
    negative, NaN, complex.
    """
    if np.iscomplexobj(a.data) or not (np.issubdtype(a.data.dtype, np.number)
                                       or a.data.dtype == np.bool_):
        return None
    bounds = sssp_numba.weight_range(np.asarray(a.data, dtype=np.float64))
    return bounds if bounds[0] >= 0 else None  # a negative weight, or NaN


# --------------------------------------------------------------------------- argument checks


def _whole(value: Any, name: str) -> int:
    """An int from an integer or a whole-number float (scipy accepts both); bools refused."""
    if isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be an integer vertex id, got bool")
    if isinstance(value, float | np.floating):
        if not (math.isfinite(value) and float(value).is_integer()):
            raise ValueError(f"{name} must be a whole number, got {value!r}")
        return int(value)
    try:
        return operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer vertex id, got {type(value).__name__}"
                        ) from None


def _check_start(i_start: Any, n: int) -> int:
    v = _whole(i_start, "i_start")
    if not 0 <= v < n:
        raise ValueError(f"i_start={v} is out of range for a graph with {n} vertices")
    return v


def _check_indices(indices: Any, n: int) -> tuple[np.ndarray, tuple[int, ...]]:
    """Sources as a flat int64 array, and the shape scipy gives their rows.

    As scipy: None is every vertex, a negative index counts from the end.
    """
    if indices is None:
        return np.arange(n, dtype=np.int64), (n,)
    if isinstance(indices, int | np.integer) and not isinstance(indices, bool | np.bool_):
        v = int(indices)  # one source, the common call: no array round trip
        if -n <= v < n:
            return np.array([v % n if v < 0 else v], dtype=np.int64), ()
    if isinstance(indices, np.ndarray) and indices.dtype.kind in "iu" and indices.size:
        flat = indices.reshape(-1).astype(np.int64)  # an integer array: two reductions
        if flat.min() >= 0 and flat.max() < n:
            return flat, indices.shape
    arr = np.asarray(indices)
    if arr.dtype == np.bool_:
        raise TypeError("indices must hold integer vertex ids, got dtype bool")
    if np.issubdtype(arr.dtype, np.floating):
        if arr.size and not bool(np.all(np.isfinite(arr) & (arr == np.round(arr)))):
            raise ValueError("indices must hold whole numbers")
    elif not np.issubdtype(arr.dtype, np.integer):
        if arr.size:
            raise TypeError(f"indices must hold integer vertex ids, got dtype {arr.dtype}")
    flat = arr.reshape(-1).astype(np.int64)
    flat = np.where(flat < 0, flat + n, flat)
    bad = np.flatnonzero((flat < 0) | (flat >= n))
    if bad.size:
        k = int(bad[0])
        raise ValueError(f"indices: {arr.reshape(-1)[k]} is out of range for a graph with "
                         f"{n} vertices")
    return flat, arr.shape


def _check_limit(limit: Any) -> float:
    if isinstance(limit, str | bytes):  # float("1") would take it; scipy does not
        raise TypeError(f"limit must be a real number, got {type(limit).__name__}")
    try:
        lim = float(limit)
    except (TypeError, ValueError):
        raise TypeError(f"limit must be a real number, got {type(limit).__name__}") from None
    if math.isnan(lim):
        raise ValueError("limit must be >= 0, got nan")
    if lim < 0:
        raise ValueError(f"limit must be >= 0, got {lim}")
    return lim


# --------------------------------------------------------------------------- traversal


def breadth_first_order(csgraph: Any, i_start: Any, directed: bool = True,
                        return_predecessors: bool = True) -> Any:
    """Vertices in breadth-first order, as :func:`scipy.sparse.csgraph.breadth_first_order`.

    The order and the predecessors equal scipy's element for element (module
    docstring: why this is a compiled queue BFS and not :func:`spbfs.bfs`).

    Parameters
    ----------
    csgraph : array_like, sparse array or matrix
        The N x N graph (module docstring: how entries become edges).
    i_start : int
        The starting vertex.
    directed : bool
        True: follow ``csgraph[i, j]`` from ``i`` to ``j`` only; False: either way.
    return_predecessors : bool
        Also return the predecessor array.

    Returns
    -------
    node_array : numpy.ndarray
        int32 vertices reached, in breadth-first order, ``i_start`` first.
    predecessors : numpy.ndarray
        int32, length N: each reached vertex's parent, ``-9999`` for ``i_start``
        and unreached vertices. Only if ``return_predecessors``.

    Raises
    ------
    ValueError
        For a graph that is not 2-D and square, or ``i_start`` out of range or
        fractional.
    TypeError
        For an ``i_start`` that is not a number, or a bool.

    Examples
    --------
    >>> import numpy as np
    >>> from spbfs import csgraph
    >>> G = np.array([[0, 1, 2, 0], [0, 0, 0, 1], [2, 0, 0, 3], [0, 0, 0, 0]])
    >>> order, pred = csgraph.breadth_first_order(G, 0)
    >>> order.tolist(), pred.tolist()
    ([0, 1, 2, 3], [-9999, 0, 0, 1])
    """
    if _is_pydata(csgraph):
        return _scipy.breadth_first_order(csgraph, i_start, directed, return_predecessors)
    directed = bool(directed)
    a = _as_csr(csgraph, directed)
    order, pred = _queue_order(a, _check_start(i_start, a.shape[0]), directed)
    return (order, pred) if return_predecessors else order  # order: a view, as scipy's


def _queue_order(a: Any, start: int, directed: bool) -> tuple[np.ndarray, np.ndarray]:
    """scipy's breadth-first order and predecessors on csr ``a`` (:func:`_queue_bfs`).

    ``directed=False`` scans the rows of ``G.T`` too, except where ``G`` is
    its own pattern's transpose: then they add no vertex.
    """
    if directed or _mirrored(a, np.empty(0)):
        return _queue_bfs(start, a.indptr, a.indices, a.indptr, a.indices, False)
    tptr, tind, _ = _transpose(a.indptr, a.indices, np.empty(0))
    return _queue_bfs(start, a.indptr, a.indices, tptr, tind, True)


def breadth_first_tree(csgraph: Any, i_start: Any, directed: bool = True) -> Any:
    """The breadth-first tree, as :func:`scipy.sparse.csgraph.breadth_first_tree`.

    The predecessors of :func:`breadth_first_order` (scipy's, element for
    element) made into a tree matrix by a compiled pass
    (:func:`_tree_arrays`), with the entries of scipy's
    :func:`~scipy.sparse.csgraph.reconstruct_path`: float64 weights, int32
    indices, the same type; each row's children by increasing id (scipy's
    order within a row is its unstable argsort's, so not always sorted).

    Parameters
    ----------
    csgraph : array_like, sparse array or matrix
        The N x N graph.
    i_start : int
        The root.
    directed : bool
        As in :func:`breadth_first_order`.

    Returns
    -------
    scipy.sparse.csr_matrix or csr_array
        N x N, ``T[p, v]`` = the weight of the edge from ``p`` to its child ``v``
        (a csr_matrix for a sparse-matrix input, else a csr_array, as scipy).

    Raises
    ------
    ValueError, TypeError
        As :func:`breadth_first_order`.
    """
    if _is_pydata(csgraph):
        return _scipy.breadth_first_tree(csgraph, i_start, directed)
    directed = bool(directed)
    a = _as_csr(csgraph, directed)
    n = a.shape[0]
    _order, pred = _queue_order(a, _check_start(i_start, n), directed)
    ptr, ind, data = _tree_arrays(a.indptr, a.indices, np.asarray(a.data, dtype=np.float64),
                                  pred, directed)
    kind = sp.csr_matrix if isinstance(csgraph, sp.spmatrix) else sp.csr_array
    tree = kind((data, ind, ptr), shape=(n, n))
    tree.has_sorted_indices = True  # children by increasing id
    return tree


def connected_components(csgraph: Any, directed: bool = True, connection: str = "weak",
                         return_labels: bool = True) -> Any:
    """Connected components, as :func:`scipy.sparse.csgraph.connected_components`.

    Both kinds run compiled kernels (:mod:`spbfs.kernels.components_numba`)
    on the csr arrays of the input as they are, with no copy of the structure:
    weak components (``connection='weak'``, or any ``directed=False`` graph)
    by a union-find that hooks every stored entry (so a road network costs one
    pass over its edges, where scipy walks the graph and its transpose),
    strong components of a directed graph by Pearce's iterative search in
    scipy's own visiting order, so that the labels equal scipy's element for
    element. Handed to scipy, unchanged: pydata ``sparse`` arrays, and graphs
    of at most :data:`spbfs._compile.SMALL_VERTICES` vertices while the
    kernel is not compiled yet (scipy answers those in microseconds, where
    the first compilation takes about a second).

    Parameters
    ----------
    csgraph : array_like, sparse array or matrix
        The N x N graph.
    directed : bool
        Whether edges have a direction (matters only for ``'strong'``).
    connection : {'weak', 'strong'}
        Any case, as scipy.
    return_labels : bool
        Also return the labels.

    Returns
    -------
    n_components : int
        Number of components (an isolated vertex is one).
    labels : numpy.ndarray
        int32 component of each vertex: weak components numbered by each
        component's smallest vertex, strong ones in the order scipy's search
        completes them (scipy's numbering in both). Only if ``return_labels``.

    Raises
    ------
    ValueError
        For an unknown ``connection`` or a graph that is not 2-D and square.
    TypeError
        For a ``connection`` that is not a string.

    Examples
    --------
    >>> import numpy as np
    >>> from spbfs import csgraph
    >>> G = np.array([[0, 1, 1, 0, 0], [0, 0, 1, 0, 0], [0] * 5, [0, 0, 0, 0, 1], [0] * 5])
    >>> n, labels = csgraph.connected_components(G, directed=False)
    >>> n, labels.tolist()
    (2, [0, 0, 0, 1, 1])
    """
    if not isinstance(connection, str):
        raise TypeError(f"connection must be 'weak' or 'strong', got {type(connection).__name__}")
    conn = connection.lower()
    if conn not in ("weak", "strong"):
        raise ValueError(f"connection must be 'weak' or 'strong', got {connection!r}")
    if _is_pydata(csgraph):
        return _scipy.connected_components(csgraph, directed, connection, return_labels)
    strong = conn == "strong" and directed
    a = _as_csr(csgraph, strong)
    if strong and not a.has_canonical_format:
        # scipy 1.17.1's strong components never return on a csr input that stores an
        # entry twice; merging repeats keeps every arc and every component.
        a = a.copy()
        a.sum_duplicates()
    kernel = _cc.strong_labels if strong else _cc.weak_roots
    if a.shape[0] <= SMALL_VERTICES and not ready(kernel):
        return _scipy.connected_components(a, directed, connection, return_labels)
    if strong:
        labels, k = _cc.strong_labels(_cc.unsigned(a.indptr), _cc.unsigned(a.indices))
    else:
        roots = _cc.weak_roots(_cc.unsigned(a.indptr), _cc.unsigned(a.indices), False)
        labels, k = _cc.number_by_root(roots)
    if return_labels:
        return int(k), labels.astype(np.int32)
    return int(k)


# --------------------------------------------------------------------------- shortest paths


def _auto_method(csgraph: Any, indices: Any) -> str:
    """The method scipy's ``shortest_path(method='auto')`` picks (its rule, on its input)."""
    n = csgraph.shape[0]
    if sp.issparse(csgraph):
        nk = csgraph.nnz
        edges = csgraph.data if csgraph.format in ("csr", "csc", "coo") else csgraph.tocoo().data
    elif np.ma.isMaskedArray(csgraph):
        nk = csgraph.count()
        edges = csgraph.compressed()
    else:
        arr = np.asarray(csgraph)
        edges = arr[np.isfinite(arr)]
        edges = edges[edges != 0]
        nk = edges.size
    if indices is not None or nk < n * n / 4:
        return "J" if np.any(edges < 0) else "D"
    return "FW"


def shortest_path(csgraph: Any, method: str = "auto", directed: bool = True,
                  return_predecessors: bool = False, unweighted: bool = False,
                  overwrite: bool = False, indices: Any = None) -> Any:
    """Shortest paths, as :func:`scipy.sparse.csgraph.shortest_path`.

    ``method='D'``, and ``'auto'`` where scipy's rule picks Dijkstra, run
    :func:`dijkstra` (spbfs engines); ``'FW'``, ``'BF'``, ``'J'`` and the
    ``'auto'`` cases where scipy picks one of them are scipy's own, with
    ``overwrite`` passed on (scipy uses it for ``'FW'`` only).

    Parameters
    ----------
    csgraph : array_like, sparse array or matrix
        The N x N weighted graph.
    method : {'auto', 'FW', 'D', 'BF', 'J'}
        As scipy.
    directed, return_predecessors, unweighted, indices
        As :func:`dijkstra`.
    overwrite : bool
        scipy's Floyd-Warshall may overwrite a dense float64 input.

    Returns
    -------
    dist_matrix : numpy.ndarray
        float64 distances, ``inf`` where unreachable.
    predecessors : numpy.ndarray
        int32, ``-9999`` where none. Only if ``return_predecessors``.

    Raises
    ------
    ValueError
        For an unknown method, and as :func:`dijkstra` or scipy.
    """
    if _is_pydata(csgraph):
        return _scipy.shortest_path(csgraph, method, directed, return_predecessors, unweighted,
                                    overwrite, indices)
    if method == "auto":
        _as_csr(csgraph, bool(directed))  # scipy checks the graph before applying its rule
        method = _auto_method(csgraph, indices)
    if method == "D":
        return dijkstra(csgraph, directed, indices, return_predecessors, unweighted)
    if method in ("FW", "BF", "J"):
        return _scipy.shortest_path(csgraph, method, directed, return_predecessors, unweighted,
                                    overwrite, indices)
    raise ValueError(f"unrecognized method {method!r}: use 'auto', 'FW', 'D', 'BF' or 'J'")


def dijkstra(csgraph: Any, directed: bool = True, indices: Any = None,
             return_predecessors: bool = False, unweighted: bool = False,
             limit: float = np.inf, min_only: bool = False) -> Any:
    """Shortest paths with non-negative weights, as :func:`scipy.sparse.csgraph.dijkstra`.

    Unweighted: breadth-first search (:func:`spbfs.bfs` for one source,
    :func:`~spbfs.algorithms.multi_source_bfs` for several, or delta-stepping
    with unit weights on a deep graph), depth-limited by ``limit``. Weighted:
    delta-stepping (:mod:`spbfs.kernels.sssp_numba`), every source in one
    compiled call (all sources as one group for ``min_only``); the distances
    are scipy's exactly. Predecessors form a valid shortest-path tree, not
    always scipy's (module docstring). scipy's own function runs where spbfs
    has no method: negative, NaN or complex weights (scipy warns and runs),
    and on a small graph while the delta-stepping kernel is not compiled.

    Parameters
    ----------
    csgraph : array_like, sparse array or matrix
        The N x N graph of non-negative weights.
    directed : bool
        False: ``G[i, j]`` and ``G[j, i]`` both join ``i`` and ``j``; the smaller counts.
    indices : int or array_like of int, optional
        Sources (any shape; negative counts from the end); None: every vertex.
    return_predecessors : bool
        Also return predecessors (and, for ``min_only``, the sources).
    unweighted : bool
        Count edges instead of adding weights.
    limit : float
        Distances above it come back as ``inf``.
    min_only : bool
        One row: the distance from the nearest source.

    Returns
    -------
    dist_matrix : numpy.ndarray
        float64, shape ``indices.shape + (N,)`` (``(N,)`` for ``min_only``).
    predecessors : numpy.ndarray
        int32, the same shape, ``-9999`` for sources and unreached vertices.
        Only if ``return_predecessors``.
    sources : numpy.ndarray
        int32, shape ``(N,)``: the source each vertex is reached from, ``-9999``
        where none. Only if ``min_only`` and ``return_predecessors``.

    Raises
    ------
    ValueError
        For a graph that is not 2-D and square, indices out of range or
        fractional, or a negative or NaN ``limit``.
    TypeError
        For non-integer indices or a non-numeric ``limit``.

    Examples
    --------
    >>> import numpy as np
    >>> from spbfs import csgraph
    >>> G = np.array([[0, 1, 2, 0], [0, 0, 0, 1], [0, 0, 0, 3], [0, 0, 0, 0]])
    >>> csgraph.dijkstra(G, directed=False, indices=0).tolist()
    [0.0, 1.0, 2.0, 2.0]
    """
    if _is_pydata(csgraph):
        return _scipy.dijkstra(csgraph, directed, indices, return_predecessors, unweighted,
                               limit, min_only)
    directed = bool(directed)
    a = _as_csr(csgraph, directed)
    n = a.shape[0]
    lim = _check_limit(limit)
    sources, shape = _check_indices(indices, n)
    work = a.nnz * (1 if min_only else max(sources.shape[0], 1))
    small = work <= _SMALL_UNWEIGHTED
    bounds = None if n == 0 else _weight_bounds(a)
    if bounds is None or (small and n <= SMALL_VERTICES and not _search_ready(directed)):
        return _scipy.dijkstra(csgraph, directed, indices, return_predecessors, unweighted,
                               limit, min_only)
    if unweighted and not min_only and not small:
        dist, pred = _unweighted_rows(a, directed, sources, lim, return_predecessors)
    else:
        adj = _Adjacency(a, directed, unweighted, None if unweighted else bounds)
        if min_only:
            dist = adj.distances(np.array([0, sources.shape[0]]), sources, lim)[0]
            if not return_predecessors:
                return dist
            pred = np.full(n, NULL_IDX, dtype=np.int32)
            src = np.full(n, NULL_IDX, dtype=np.int32)
            adj.tree(dist, sources, pred, src)
            return dist, pred, src
        dist, pred = _weighted_rows(adj, sources, lim, return_predecessors)
    out = dist.reshape((*shape, n))
    return (out, pred.reshape((*shape, n))) if return_predecessors else out


def _search_ready(directed: bool) -> bool:
    """Whether a delta-stepping search runs without compiling (what :class:`_Adjacency` calls)."""
    return ready(sssp_numba.delta_stepping) and (
        directed or (ready(_symmetric) and ready(_transpose)))


class _Adjacency:
    """The out-edges of each vertex as one or two csr triples (int32 or int64 ids, float64).

    Directed: ``G``'s own rows (repeated entries and self-loops are harmless
    to a shortest-path search). Undirected: the rows of ``G`` and of ``G.T``,
    both scanned, as scipy does, so the smaller weight of a pair counts
    without building the union; ``G``'s rows alone where ``G`` equals its
    transpose (:func:`_mirrored`). ``bounds``: the weights'
    :func:`~spbfs.kernels.sssp_numba.weight_range`, where known.
    """

    def __init__(self, a: Any, directed: bool, unit: bool,
                 bounds: tuple[float, float, float] | None = None) -> None:
        ind = sssp_numba.kernel_ids(a.indices)  # scipy's int32 as it is
        w = np.ones(ind.shape[0]) if unit else np.asarray(a.data, dtype=np.float64)
        self.n = a.shape[0]
        self.first = (a.indptr.astype(np.int64), ind, w)
        # A symmetric matrix (the common undirected input) is searched by its own rows:
        # no transpose built, each edge relaxed once instead of twice.
        mirrored = directed or _mirrored(a, np.empty(0) if unit else w)
        self.second = None if mirrored else _transpose(*self.first)
        self.bounds = bounds  # the weights' range where the caller has it

    def kernel_args(self) -> tuple[np.ndarray, ...]:
        """Both triples for the kernels (an empty second one for a directed graph)."""
        if self.second is not None:
            return (*self.first, *self.second)
        none = np.zeros(self.n + 1, dtype=np.int64)
        return (*self.first, none, np.zeros(0, dtype=self.first[1].dtype), np.zeros(0))

    def distances(self, seeds_ptr: np.ndarray, seeds: np.ndarray, limit: float,
                  pred: np.ndarray | None = None) -> np.ndarray:
        """Delta-stepping (:mod:`spbfs.kernels.sssp_numba`) from each group of seeds.

        ``pred`` (int32, a row per group) receives the predecessors of the
        reached vertices; the seeds' entries are left as they are. Several
        groups on a graph of at least :data:`PARALLEL_GROUPS_ENTRIES`
        entries run in parallel, one chunk of groups per thread the machine
        has idle (:func:`spbfs.threads.search_threads`): the searches are
        independent. A smaller graph's calls take less than reading the
        machine's load would.
        """
        many = seeds_ptr.shape[0] > 2 and self.first[1].shape[0] >= PARALLEL_GROUPS_ENTRIES
        with search_threads(_config().threads) if many else nullcontext() as choice:
            return sssp_numba.run(*self.first, seeds_ptr, seeds, limit=limit, also=self.second,
                                  pred=pred, bounds=self.bounds,
                                  parts=choice.count() if many else 1)[0]

    def tree(self, dist: np.ndarray, seeds: np.ndarray, pred: np.ndarray,
             src: np.ndarray) -> None:
        """Predecessors (and the seed of each vertex) along tight edges, into ``pred``, ``src``."""
        _tight_tree(*self.kernel_args(), dist, seeds, pred, src)


def _weighted_rows(adj: _Adjacency, sources: np.ndarray, limit: float,
                   want_pred: bool) -> tuple[np.ndarray, np.ndarray]:
    """One row of distances (and predecessors) per source, all sources in one kernel call.

    Delta-stepping (:mod:`spbfs.kernels.sssp_numba`), which also records
    each vertex's predecessor (the last vertex that lowered its distance); a
    source listed more than once is searched once.
    """
    n = adj.n
    seeds, inverse = sources, None
    # Increasing sources (one, or a range: the common calls) are distinct: no sort.
    if sources.shape[0] > 1 and not bool((sources[1:] > sources[:-1]).all()):
        uniq, inverse = np.unique(sources, return_inverse=True)
        seeds = sources if uniq.shape[0] == sources.shape[0] else uniq
    pred = np.full((seeds.shape[0], n) if want_pred else (0, n), NULL_IDX, dtype=np.int32)
    dist = adj.distances(np.arange(seeds.shape[0] + 1), seeds, limit,
                         pred if want_pred else None)
    if seeds is sources:
        return dist, pred
    return dist[inverse], (pred[inverse] if want_pred else pred)


def _unweighted_rows(a: Any, directed: bool, sources: np.ndarray, limit: float,
                    want_pred: bool) -> tuple[np.ndarray, np.ndarray]:
    """Hop distances (and predecessors) from each source, by the faster engine for the graph.

    One source, or levels alone: :func:`_bfs_rows`. Several with
    predecessors: the first is searched by the compiled queue search; past
    :data:`_DEEP_LEVELS` levels (a road network, a mesh) the others follow it,
    else :func:`_bfs_rows` runs them all.
    """
    if sources.shape[0] > 1 and want_pred:
        adj = _Adjacency(a, directed, True)
        _, levels = sssp_numba.run(*adj.first, np.array([0, 1]), sources[:1], limit=limit,
                                       also=adj.second)
        if levels > _DEEP_LEVELS:
            return _weighted_rows(adj, sources, limit, want_pred)
    return _bfs_rows(_pattern_graph(a, directed, _config()), sources, limit, want_pred)


def _bfs_rows(g: Graph, sources: np.ndarray, limit: float,
              want_pred: bool) -> tuple[np.ndarray, np.ndarray]:
    """Hop distances (and parents) from each source: one BFS, or multi-source BFS in chunks."""
    n = g.n
    k = sources.shape[0]
    depth = None if math.isinf(limit) else math.floor(limit)
    output = "both" if want_pred else "levels"
    dist = np.empty((k, n))
    pred = np.empty((k, n) if want_pred else (0, n), dtype=np.int32)
    for lo in range(0, k, _MSBFS_CHUNK):
        chunk = sources[lo:lo + _MSBFS_CHUNK]
        if chunk.shape[0] == 1:
            r = bfs(g, int(chunk[0]), output=output, max_depth=depth)
            levels = r.levels[None, :]
            parents = r.parents[None, :] if want_pred else None
        else:
            m = multi_source_bfs(g, chunk, output=output, max_depth=depth)
            levels, parents = m.levels, m.parents
        rows = slice(lo, lo + chunk.shape[0])
        dist[rows] = levels
        dist[rows][levels < 0] = np.inf
        if want_pred:
            p = parents.astype(np.int32)
            p[parents < 0] = NULL_IDX
            p[np.arange(chunk.shape[0]), chunk] = NULL_IDX  # a source has no predecessor
            pred[rows] = p
    return dist, pred
