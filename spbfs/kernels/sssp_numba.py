"""Delta-stepping single-source shortest paths, compiled: buckets cost what their work costs.

Meyer and Sanders, "Δ-stepping: a parallelizable shortest path algorithm",
as Sridhar et al. write it in linear algebra ("Delta-Stepping SSSP: From
Vertices and Edges to GraphBLAS Implementations"): the edges split into
light ones (``w < Δ``, the matrix ``A_L``) and heavy ones (``w >= Δ``,
``A_H``); bucket ``i`` holds the vertices whose tentative distance lies in
``[iΔ, (i+1)Δ)``. The smallest non-empty bucket is emptied by repeated
products of its vertices with ``A_L`` over ``min_plus`` (a light edge can
put a vertex back into the same bucket), then every vertex it settled is
multiplied once with ``A_H`` (a heavy edge always lands in a later bucket).

On one process the masked products are loops over the rows of the
out-adjacency, and the buckets are doubly linked lists threaded through the
vertices (a vertex sits in at most one bucket and moves in O(1) when its
distance drops), their heads in a cyclic array of a power of two at least
``floor(max w / Δ) + 4`` slots (every tentative distance lies within one
maximum weight of the current bucket): a road network's thousands of buckets
then cost a few loads each, not a round trip through Python. With ``Δ``
at most the smallest positive weight there are no light edges and this is
Dial's bucket queue (every vertex leaves its bucket once, and the heavy pass
is skipped); larger ``Δ`` trades re-relaxations for fewer buckets.
Predecessors are recorded as distances drop (optional).

A vertex's slot and links lie side by side in one row of a ``(n, 4)``
array of the ids' integer type (16 bytes with scipy's int32): moving a
vertex touches one cache line, and on Kronecker 20 (a million vertices)
the distances and this state fit a 32 MiB last-level cache, where four
int64 arrays did not: 10% less time per search.

Arrays: ``ptr`` (n+1, int64) and ``ind`` (m, int64) are the out-adjacency
in csr (row ``u`` lists the heads of the edges leaving ``u``), ``w`` (m,
float64) their weights, non-negative. :func:`split_light` reorders each row
light edges first; :func:`delta_stepping` runs one search per group of seeds;
:func:`delta_stepping_parallel` the same with the groups cut into chunks,
one per thread, each with its own bucket state.
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

__all__ = ["default_delta", "delta_stepping", "delta_stepping_parallel", "kernel_ids", "run",
           "slots", "split_light", "weight_range"]

# The most bucket slots a search may keep (int64 heads: 64 MiB at most).
_MAX_SLOTS = 1 << 22

# Default bucket width: at least max w / this (a bound on the slots, and on the empty
# buckets a search passes: about this many per maximum weight of path length).
_WIDTH_SHARE = 1024


@nb.njit(cache=True, nogil=True)
def weight_range(w):  # type: ignore[no-untyped-def]
    """``(least, least positive, largest finite)`` weight in one pass (``inf`` / 0 where none).

    ``least`` is NaN where a weight is NaN.
    """
    least = np.inf
    positive = np.inf
    top = 0.0
    for x in w:
        if x != x:
            return np.nan, positive, top
        least = min(least, x)
        if x > 0 and x < np.inf:
            positive = min(positive, x)
            top = max(top, x)
    return least, positive, top


def default_delta(positive: float, top: float) -> float:
    """The bucket width from the least positive and the largest finite weight.

    The least positive weight, at least ``top / 1024``. Meyer and Sanders
    take ``Δ = Θ(1 / d)`` for weights in ``[0, 1]`` and degree ``d``, to give
    parallel workers large buckets. One thread gains nothing from a wide
    bucket, only re-relaxations: measured on a road network (luxembourg_osm,
    weights in ``[1, 100)``), ``Δ = 1`` is 1.4x faster than the
    ``mean / degree = 24`` of that rule, and on Kronecker 16 ``Δ`` from 1 to 5
    run alike. Below the least positive weight nothing is gained (no vertex
    leaves its bucket twice already), only more empty buckets to pass, which
    the ``top / 1024`` floor bounds.
    """
    if not math.isfinite(positive):
        return 1.0
    return max(positive, top / _WIDTH_SHARE)


def slots(top: float, delta: float) -> int:
    """Slots of the cyclic bucket array: a power of two spanning one maximum weight and spares.

    Every queued distance lies in ``[cur Δ, cur Δ + top]``, so
    ``floor(top / Δ) + 1`` slots hold them apart; three more absorb the
    rounding of ``nd / Δ``.
    """
    return 1 << (math.floor(top / delta) + 3).bit_length()


@nb.njit(cache=True, nogil=True)
def split_light(ptr, ind, w, delta):  # type: ignore[no-untyped-def]
    """Each row light edges first (``w < delta``): ``(ind, w, mid)``, ``mid[u]`` its first heavy.
    """
    n = ptr.shape[0] - 1
    ind2 = np.empty_like(ind)
    w2 = np.empty_like(w)
    mid = np.empty(n, dtype=np.int64)
    for u in range(n):
        k = ptr[u]
        for e in range(ptr[u], ptr[u + 1]):
            if w[e] < delta:
                ind2[k] = ind[e]
                w2[k] = w[e]
                k += 1
        mid[u] = k
        for e in range(ptr[u], ptr[u + 1]):
            if not w[e] < delta:
                ind2[k] = ind[e]
                w2[k] = w[e]
                k += 1
    return ind2, w2, mid


@nb.njit(cache=True, nogil=True, inline="always")
def _relax(lo, hi, ind, w, u, du, dist, pred, limit, delta, mask, st, head):  # type: ignore[no-untyped-def]
    """Relax edges ``lo .. hi-1`` from ``u`` at distance ``du``; returns the vertices queued.

    ``pred`` (empty: not wanted) gets ``u`` for every vertex ``u`` lowers:
    the last such write is the tail of a tight edge, and with no negative
    cycle these form a tree (Cormen et al., the predecessor subgraph lemma).

    A vertex sits in at most one bucket, its slot ``st[v, 0]`` (-1 for
    none; the queued distances span fewer buckets than there are slots, so
    the slot names the bucket): a doubly linked list per slot (next
    ``st[v, 1]``, previous ``st[v, 2]``, first ``head``) lets a lowered
    distance move it in O(1), so a bucket holds no stale entries.
    """
    added = 0
    for e in range(lo, hi):
        v = ind[e]
        nd = du + w[e]
        if nd < dist[v] and nd <= limit:
            dist[v] = nd
            if pred.shape[0]:
                pred[v] = u
            t = np.int64(nd / delta) & mask
            old = st[v, 0]
            if old == t:
                continue
            if old >= 0:  # unlink from its bucket
                p = st[v, 2]
                q = st[v, 1]
                if p >= 0:
                    st[p, 1] = q
                else:
                    head[old] = q
                if q >= 0:
                    st[q, 2] = p
            else:
                added += 1
            st[v, 0] = t
            h = head[t]
            st[v, 1] = h
            st[v, 2] = -1
            if h >= 0:
                st[h, 2] = v
            head[t] = v
    return added


@nb.njit(cache=True, nogil=True)
def _has_light(ptr, mid, ptr2, mid2):  # type: ignore[no-untyped-def]
    """Whether any row of either part has a light edge (``mid`` past its start)."""
    for u in range(ptr.shape[0] - 1):
        if mid[u] > ptr[u] or mid2[u] > ptr2[u]:
            return True
    return False


@nb.njit(cache=True, nogil=True)
def _search_groups(ptr, ind, w, mid, ptr2, ind2, w2, mid2, delta, nslots, seeds_ptr, seeds,  # type: ignore[no-untyped-def]
                   limit, dist, pred, light, first, last):
    """Groups ``first .. last - 1`` of :func:`delta_stepping`, one after the other.

    The bucket state is allocated here, so that each parallel chunk of
    :func:`delta_stepping_parallel` has its own. ``light``: whether any
    light edge exists (without one every vertex leaves its bucket once and
    the heavy pass is skipped). Returns the non-empty buckets processed.
    """
    n = ptr.shape[0] - 1
    mask = nslots - 1
    head = np.full(nslots, -1, dtype=ind.dtype)
    st = np.empty((n, 4), dtype=ind.dtype)  # slot, next, previous, (padding to 16 bytes)
    # The phase that last settled a vertex, and the vertices the current phase settled:
    # the heavy pass's state, not allocated (nor faulted in) without light edges.
    settled = np.full(n if light else 0, -1, dtype=np.int64)
    order = np.empty(n if light else 0, dtype=np.int64)
    buckets = 0
    phase = 0
    for g in range(first, last):
        d = dist[g]
        pr = pred[g] if pred.shape[1] else pred[0]
        d[:] = np.inf
        st[:, 0] = -1
        live = 0
        for k in range(seeds_ptr[g], seeds_ptr[g + 1]):
            s = seeds[k]
            if st[s, 0] == 0:
                continue
            d[s] = 0.0
            st[s, 0] = 0
            st[s, 1] = head[0]
            st[s, 2] = -1
            if head[0] >= 0:
                st[head[0], 2] = s
            head[0] = s
            live += 1
        cur = 0
        while live > 0:
            t = cur & mask
            if head[t] < 0:
                cur += 1
                continue
            buckets += 1
            # A heavy edge lands in a later bucket; rounding of nd / delta could put
            # one back into this bucket, so the phases repeat until it stays empty.
            while head[t] >= 0:
                phase += 1
                count = 0
                while head[t] >= 0:  # light products until the bucket stays empty
                    u = head[t]
                    q = st[u, 1]
                    head[t] = q
                    if q >= 0:
                        st[q, 2] = -1
                    st[u, 0] = -1
                    live -= 1
                    du = d[u]
                    if not light:
                        live += _relax(ptr[u], ptr[u + 1], ind, w, u, du, d, pr, limit, delta,
                                       mask, st, head)
                        live += _relax(ptr2[u], ptr2[u + 1], ind2, w2, u, du, d, pr, limit,
                                       delta, mask, st, head)
                        continue
                    if settled[u] != phase:
                        settled[u] = phase
                        order[count] = u
                        count += 1
                    live += _relax(ptr[u], mid[u], ind, w, u, du, d, pr, limit, delta, mask,
                                   st, head)
                    live += _relax(ptr2[u], mid2[u], ind2, w2, u, du, d, pr, limit, delta, mask,
                                   st, head)
                for i in range(count):  # one heavy product over the vertices settled
                    u = order[i]
                    du = d[u]
                    live += _relax(mid[u], ptr[u + 1], ind, w, u, du, d, pr, limit, delta, mask,
                                   st, head)
                    live += _relax(mid2[u], ptr2[u + 1], ind2, w2, u, du, d, pr, limit, delta,
                                   mask, st, head)
            cur += 1
    return buckets


@nb.njit(cache=True, nogil=True)
def delta_stepping(ptr, ind, w, mid, ptr2, ind2, w2, mid2, delta, nslots, seeds_ptr, seeds,  # type: ignore[no-untyped-def]
                   limit, dist, pred):
    """Distances from each group of seeds: ``dist[g]`` from ``seeds[seeds_ptr[g]:seeds_ptr[g+1]]``.

    The out-edges of ``u`` are row ``u`` of ``(ptr, ind, w)`` and of
    ``(ptr2, ind2, w2)`` (the rows of ``G`` and of ``G.T`` for an undirected
    view of a directed matrix, as scipy reads it; all-zero ``ptr2`` for
    none). ``ind``, ``w``, ``mid`` (and the second three) come from
    :func:`split_light` with the same ``delta``; ``nslots`` is a power of
    two from :func:`slots`; ``dist`` is ``(groups, n)`` float64 and is
    overwritten (``inf`` where unreached or beyond ``limit``); ``pred``,
    int32 ``(groups, n)`` or ``(1, 0)`` for none, gets each reached
    non-seed vertex's predecessor (other entries are left as they are).
    Returns the non-empty buckets processed, over all groups.
    """
    light = _has_light(ptr, mid, ptr2, mid2)
    return _search_groups(ptr, ind, w, mid, ptr2, ind2, w2, mid2, delta, nslots, seeds_ptr,
                          seeds, limit, dist, pred, light, 0, seeds_ptr.shape[0] - 1)


@nb.njit(cache=True, parallel=True)
def delta_stepping_parallel(ptr, ind, w, mid, ptr2, ind2, w2, mid2, delta, nslots, seeds_ptr,  # type: ignore[no-untyped-def]
                            seeds, limit, dist, pred, chunks):
    """:func:`delta_stepping` with the groups cut into chunks run in parallel.

    Chunk ``c`` searches groups ``chunks[c] .. chunks[c + 1] - 1`` with its
    own bucket state (the groups are independent searches, each writing its
    own rows of ``dist`` and ``pred``).
    """
    light = _has_light(ptr, mid, ptr2, mid2)
    counts = np.zeros(chunks.shape[0] - 1, dtype=np.int64)
    for c in nb.prange(chunks.shape[0] - 1):
        counts[c] = _search_groups(ptr, ind, w, mid, ptr2, ind2, w2, mid2, delta, nslots,
                                   seeds_ptr, seeds, limit, dist, pred, light, chunks[c],
                                   chunks[c + 1])
    return counts.sum()


def kernel_ids(ind: np.ndarray) -> np.ndarray:
    """Column ids as the kernels take them: int32 as scipy's csr holds them, else int64.

    An int32 array is read where it lies (a copy to int64 is 8 bytes an entry,
    a tenth of a search on Kronecker 20); the kernels then have two compiled
    versions at most.
    """
    ind = np.asarray(ind)
    return ind if ind.dtype in (np.int32, np.int64) else ind.astype(np.int64)


def run(ptr: np.ndarray, ind: np.ndarray, w: np.ndarray, seeds_ptr: np.ndarray,
        seeds: np.ndarray, *, limit: float = np.inf, delta: float | None = None,
        also: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
        pred: np.ndarray | None = None,
        bounds: tuple[float, float, float] | None = None,
        parts: int = 1) -> tuple[np.ndarray, int]:
    """Distances ``(groups, n)`` from each group of seeds, and the buckets processed.

    Parameters
    ----------
    ptr, ind, w : numpy.ndarray
        The out-adjacency in csr with non-negative weights (repeated edges and
        self-loops allowed); cast to the kernels' signature (int64 ``ptr``,
        int32 or int64 ``ind``, float64 weights), a copy only where they are
        not already.
    seeds_ptr, seeds : numpy.ndarray
        Group ``g`` searches from ``seeds[seeds_ptr[g]:seeds_ptr[g+1]]`` at once.
    limit : float
        Distances above it are not followed and come back ``inf``.
    delta : float, optional
        The bucket width; :func:`default_delta` when omitted.
    also : (ptr, ind, w), optional
        More out-edges per vertex, in csr (the rows of ``G.T`` for an
        undirected view of a directed ``G``: no union is built).
    pred : numpy.ndarray, optional
        int32 ``(groups, n)``: receives each reached non-seed vertex's
        predecessor on a shortest path (other entries untouched).
    bounds : (float, float, float), optional
        :func:`weight_range` of all the weights, where the caller has it
        already (a pass over the weights saved: 40 ms on Kronecker 20).
    parts : int
        Chunks of groups run in parallel on numba's current threads
        (:func:`delta_stepping_parallel`); 1 (or one group): one after the
        other, no parallel region.

    Raises
    ------
    ValueError
        For a ``delta`` that is not positive, or so small against the largest
        weight that the buckets one weight spans would not fit in memory.
    """
    triples = [(ptr, ind, w)] + ([also] if also is not None else [])
    triples = [(np.asarray(p, dtype=np.int64), kernel_ids(i), np.asarray(x, dtype=np.float64))
               for p, i, x in triples]
    if len(triples) == 2 and triples[0][1].dtype != triples[1][1].dtype:
        triples = [(p, i.astype(np.int64), x) for p, i, x in triples]
    n = triples[0][0].shape[0] - 1
    if bounds is None:
        ranges = [weight_range(x) for _, _, x in triples]
        bounds = (min(r[0] for r in ranges), min(r[1] for r in ranges),
                  max(r[2] for r in ranges))
    least, positive, top = bounds
    if delta is None:
        delta = default_delta(positive, top)
    delta = float(delta)
    if not delta > 0 or math.isinf(delta):
        raise ValueError(f"delta must be a positive finite bucket width, got {delta}")
    if top / delta >= _MAX_SLOTS:
        raise ValueError(f"delta={delta} is too small for weights up to {top}: the buckets "
                         f"one weight spans would be {top / delta:.3g} (at most {_MAX_SLOTS}); "
                         f"use delta >= {top / _MAX_SLOTS:.3g}")
    split = []
    for p, i, x in triples:
        if least >= delta:  # no light edge: the rows as they are
            split.append((p, i, x, p[:-1]))
        else:
            split.append((p, *split_light(p, i, x, delta)))
    if len(split) == 1:
        none = np.zeros(n + 1, dtype=np.int64)
        split.append((none, np.zeros(0, split[0][1].dtype), np.zeros(0), none[:-1]))
    groups = seeds_ptr.shape[0] - 1
    dist = np.empty((groups, n), dtype=np.float64)
    args = (*split[0], *split[1], delta, slots(top, delta), np.asarray(seeds_ptr, dtype=np.int64),
            np.asarray(seeds, dtype=np.int64), float(limit), dist,
            np.zeros((1, 0), dtype=np.int32) if pred is None else pred)
    parts = min(parts, groups)
    if parts > 1:
        chunks = np.linspace(0, groups, parts + 1).round().astype(np.int64)
        return dist, int(delta_stepping_parallel(*args, chunks))
    return dist, int(delta_stepping(*args))
