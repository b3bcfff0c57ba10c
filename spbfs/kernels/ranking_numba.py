"""Compiled loops of PageRank and Brandes' betweenness (numba backend).

A Brandes sweep through a road network's thousand levels, or a PageRank of
a hundred iterations on one thread, is one call from Python, not one per
level or iteration.

:func:`pagerank_pull`
    The power iteration ``x' = alpha * (B +.× (x / d_out) + s / n) + (1 - alpha) / n``
    as one pass per iteration over the in-edges of every vertex (the rows of
    ``B``): the pulled sum, the teleport, the dangling rank ``s`` of the next
    iteration and the L1 change are all computed in that pass, so an
    iteration reads the structure once and allocates nothing. On one thread
    the whole iteration loop is compiled; on several, each iteration is one
    call of :func:`pull_chunks`, the vertex ranges in parallel.
:func:`brandes`
    Brandes' algorithm ("A faster algorithm for betweenness centrality", 2001)
    per source: a queue-driven forward sweep counting shortest paths (the
    ``plus_times`` product restricted to the next level) and a backward sweep
    over the out-edges in reverse queue order; sources are split into
    chunks run in parallel, each with its own work arrays.

:func:`queue_levels`
    Hop distances from many sources, one queue-driven search per source, the
    sources split over the threads: on a high-diameter graph the frontiers of
    different sources rarely meet, so packing them into words
    (:func:`spbfs.algorithms._ops.msbfs_bits`) shares no edge scans and only
    adds work per edge.

Structures are given as a full pointer array (``n + 1`` entries, int64) and
the block's own index array, whatever its dtype: :func:`full_ptr` expands a
dcsc pointer once per call.
"""

from __future__ import annotations

from typing import Any

import numba as nb
import numpy as np

__all__ = ["brandes", "full_ptr", "level_queue", "pagerank_pull", "pull_chunks", "queue_levels",
           "start_shares", "unsigned", "warm_parallel", "work_chunks"]


def full_ptr(ptr: Any, jc: Any, is_dcsc: bool, n: int) -> np.ndarray:
    """The ``n + 1`` int64 column pointers of a block (a dcsc block's absent columns empty)."""
    if not is_dcsc:
        return np.ascontiguousarray(ptr, dtype=np.int64)
    counts = np.zeros(n + 1, np.int64)
    counts[np.asarray(jc, dtype=np.int64) + 1] = np.diff(np.asarray(ptr, dtype=np.int64))
    return np.cumsum(counts)


def unsigned(a: np.ndarray) -> np.ndarray:
    """``a`` (non-negative ids or offsets) viewed as unsigned: loads need no negative-index test."""
    a = np.ascontiguousarray(a)
    return a.view(np.dtype(f"uint{a.dtype.itemsize * 8}"))


def work_chunks(ptr: np.ndarray, parts: int) -> np.ndarray:
    """Cut the ``len(ptr) - 1`` vertices into ``parts`` ranges of about equal edges and vertices."""
    n = ptr.shape[0] - 1
    if parts <= 1 or n == 0:
        return np.array([0, n], np.int64)
    work = ptr.astype(np.int64) + np.arange(n + 1)  # a vertex costs about an edge
    cuts = np.searchsorted(work, np.arange(1, parts) * (work[-1] / parts))
    return np.unique(np.concatenate(([0], cuts, [n]))).astype(np.int64)


@nb.njit(cache=True)
def _pull_range(ptr, ind, data, weighted, inv, alpha, base, cur_x, cur_s, nxt_x, nxt_s, lo, hi):
    """One iteration on the vertices ``lo .. hi - 1``: returns their (L1 change, dangling rank)."""
    err = 0.0
    lost = 0.0
    for v in range(lo, hi):
        acc = 0.0
        if weighted:
            for p in range(ptr[v], ptr[v + 1]):
                acc += data[p] * cur_s[ind[p]]
        else:
            for p in range(ptr[v], ptr[v + 1]):
                acc += cur_s[ind[p]]
        nv = base + alpha * acc
        err += abs(nv - cur_x[v])
        nxt_x[v] = nv
        nxt_s[v] = nv * inv[v]
        if inv[v] == 0.0:
            lost += nv
    return err, lost


@nb.njit(cache=True)
def pagerank_pull(ptr, ind, data, weighted, inv, alpha, limit, inclusive, max_iter, x, xs, new,
                  xs_new, chunks):
    """Power iterations on the calling thread until the L1 change passes ``limit``.

    ``ptr``/``ind`` list the in-neighbours ``u`` of each vertex ``v``
    (unsigned: no negative-index fix-up at each load); ``data[p]`` is the
    weight of that edge when ``weighted`` (else unused, one entry). ``inv[u]``
    is ``1 / d_out(u)`` (weighted: ``1 / Σ w``), 0 for a dangling vertex.
    ``x`` holds the start vector and, on return, the result; ``xs``, ``new``
    and ``xs_new`` are work arrays of ``n``. Converged when the change is
    ``< limit`` (``<= limit`` with ``inclusive``) within ``max_iter``
    iterations. :func:`pull_chunks` is one iteration on several threads.

    The iteration's sums (its L1 change and the dangling vertices' rank) are
    taken per vertex range of ``chunks`` and then added in range order, as
    :func:`pull_chunks`' caller adds them: on the same ``chunks`` the two give
    the same bits.

    Returns (iterations, converged, last L1 change).
    """
    n = x.shape[0]
    lost = start_shares(x, inv, xs)
    it = 0
    err = 0.0
    converged = False
    cur_x, cur_s, nxt_x, nxt_s = x, xs, new, xs_new
    while it < max_iter:
        it += 1
        base = alpha * lost / n + (1.0 - alpha) / n
        err = 0.0
        lost = 0.0
        for c in range(chunks.shape[0] - 1):
            e, d = _pull_range(ptr, ind, data, weighted, inv, alpha, base, cur_x, cur_s,
                               nxt_x, nxt_s, chunks[c], chunks[c + 1])
            err += e
            lost += d
        cur_x, cur_s, nxt_x, nxt_s = nxt_x, nxt_s, cur_x, cur_s
        if err < limit or (inclusive and err <= limit):
            converged = True
            break
    if it % 2 == 1:  # the result sits in the other buffer
        x[:] = cur_x
    return it, converged, err


@nb.njit(cache=True)
def start_shares(x, inv, xs):
    """``xs = x * inv``; returns the rank held by the dangling vertices."""
    lost = 0.0
    for v in range(x.shape[0]):
        xs[v] = x[v] * inv[v]
        if inv[v] == 0.0:
            lost += x[v]
    return lost


@nb.njit(cache=True, parallel=True)
def pull_chunks(ptr, ind, data, weighted, inv, alpha, base, cur_x, cur_s, nxt_x, nxt_s, chunks,
                errs, losts):
    """One iteration of :func:`pagerank_pull`, the vertex ranges ``chunks`` in parallel.

    Fills ``nxt_x`` and ``nxt_s``; ``errs[c]`` and ``losts[c]`` get range ``c``'s
    L1 change and dangling rank. Its own kernel, called once per iteration:
    compiling a parallel region costs several times the one-thread loop, so a
    graph too small to gain from threads never compiles it.
    """
    for c in nb.prange(chunks.shape[0] - 1):
        errs[c], losts[c] = _pull_range(ptr, ind, data, weighted, inv, alpha, base, cur_x,
                                        cur_s, nxt_x, nxt_s, chunks[c], chunks[c + 1])


#: Path counts grow like binomials on a grid (a 1000 x 1000 grid's corners are joined by
#: about 2^1995 shortest paths, past float64's 2^1024): a level whose largest count
#: passes this is scaled down by it, and the level's exponent keeps the factor.
_SIGMA_CAP = 2.0 ** 600


@nb.njit(cache=True, parallel=True)
def brandes(ptr, ind, n, sources, chunks, parts):
    """Sum over ``sources`` of Brandes' dependencies ``δ_s`` (the source's own entry left out).

    ``ptr``/``ind`` list the out-neighbours of each vertex. Chunk ``c`` runs
    the sources ``chunks[c] .. chunks[c + 1] - 1`` and adds into
    ``parts[c]`` (zeroed by the caller); the caller sums the rows. The path
    counts ``σ`` of level ``d`` are held as ``σ / _SIGMA_CAP ** scale[d]``:
    only ratios of counts of adjacent levels enter ``δ``.
    """
    for c in nb.prange(chunks.shape[0] - 1):
        dist = np.full(n, -1, np.int64)
        sigma = np.zeros(n, np.float64)
        delta = np.zeros(n, np.float64)
        order = np.empty(n, np.int64)
        scale = np.zeros(n + 1, np.int64)
        acc = parts[c]
        for i in range(chunks[c], chunks[c + 1]):
            s = sources[i]
            dist[s] = 0
            sigma[s] = 1.0
            order[0] = s
            lo, hi, tail, d = 0, 1, 1, 0
            # Forward, a level at a time: σ of the next level is the plus_times product of
            # this level's σ, complete once the level before has been expanded.
            while lo < hi:
                big = 0.0
                for q in range(lo, hi):
                    big = max(big, sigma[order[q]])
                scale[d] = scale[d - 1] if d else 0
                if big > _SIGMA_CAP:
                    scale[d] += 1
                    for q in range(lo, hi):
                        sigma[order[q]] /= _SIGMA_CAP
                for q in range(lo, hi):
                    u = order[q]
                    su = sigma[u]
                    for p in range(ptr[u], ptr[u + 1]):
                        v = ind[p]
                        if dist[v] < 0:
                            dist[v] = d + 1
                            order[tail] = v
                            tail += 1
                        if dist[v] == d + 1:
                            sigma[v] += su
                lo, hi, d = hi, tail, d + 1
            # Backward, deepest first: δ[u] = Σ over successors v of σ[u]/σ[v] (1 + δ[v]).
            for q in range(tail - 1, -1, -1):
                u = order[q]
                du = dist[u] + 1
                # The successors' level was scaled by _SIGMA_CAP once more, or not at all.
                f = 1.0 / _SIGMA_CAP if scale[du] > scale[du - 1] else 1.0
                t = 0.0
                for p in range(ptr[u], ptr[u + 1]):
                    v = ind[p]
                    if dist[v] == du:
                        t += (1.0 + delta[v]) / sigma[v]
                delta[u] = sigma[u] * f * t
            for q in range(1, tail):
                u = order[q]
                acc[u] += delta[u]
            for q in range(tail):  # clean for the next source: O(reached), not O(n)
                u = order[q]
                dist[u] = -1
                sigma[u] = 0.0
                delta[u] = 0.0


def warm_parallel() -> None:
    """Compile :func:`pull_chunks`, which no small graph reaches, on a two-vertex cycle.

    For ``spbfs warmup``: PageRank runs it on graphs of 2^20 edges and more
    (int32 block indices, as the default configuration and scipy give them).
    """
    ptr, ind = np.array([0, 1, 2], np.uint64), np.array([1, 0], np.uint32)
    x = np.full(2, 0.5)
    pull_chunks(ptr, ind, np.zeros(1), False, np.ones(2), 0.85, 0.075, x, x.copy(),
                np.empty(2), np.empty(2), np.array([0, 1, 2], np.int64), np.zeros(2),
                np.zeros(2))


@nb.njit(cache=True, inline="always")
def level_queue(ptr, ind, lev, order, source, depth, parents):  # type: ignore[no-untyped-def]
    """One queue-driven search from ``source``: hop levels into ``lev`` (-1 on entry).

    The queue ``order`` takes each row in stored order and a vertex at its
    first discovery (networkx's order); vertices at level ``depth`` are
    reached but not expanded (the queue is in level order, so the search
    stops at the first). ``parents`` (unless empty) gets, at each queue
    position, the vertex whose row discovered it: ``order[i]``'s parent is
    ``parents[i]``. Returns the vertices reached, ``order[:tail]``'s ``tail``.
    Inlined into its callers, which own the arrays.
    """
    tree = parents.shape[0] > 0
    lev[source] = 0
    order[0] = source
    head, tail = 0, 1
    while head < tail:
        u = order[head]
        head += 1
        d = lev[u]
        if d >= depth:
            break
        for e in range(ptr[u], ptr[u + 1]):
            v = ind[e]
            if lev[v] < 0:
                lev[v] = d + 1
                order[tail] = v
                if tree:
                    parents[tail] = u
                tail += 1
    return tail


@nb.njit(cache=True, parallel=True)
def queue_levels(ptr, ind, n, sources, chunks, levels, max_depth):
    """Hop distances, one queue-driven search per source: ``levels[i]`` from ``sources[i]``.

    ``ptr``/``ind`` list the neighbours followed from each vertex; ``levels``
    rows hold -1 on entry. Chunk ``c`` runs the sources ``chunks[c] ..
    chunks[c + 1] - 1`` (in parallel with the others). ``max_depth`` < 0
    means none. Returns the deepest level reached over all sources.
    """
    deepest = np.zeros(chunks.shape[0] - 1, np.int64)
    depth = n if max_depth < 0 else max_depth
    no_tree = np.empty(0, np.int64)
    for c in nb.prange(chunks.shape[0] - 1):
        queue = np.empty(n, np.int64)
        for i in range(chunks[c], chunks[c + 1]):
            lev = levels[i]
            tail = level_queue(ptr, ind, lev, queue, sources[i], depth, no_tree)
            deepest[c] = max(deepest[c], lev[queue[tail - 1]])
    return deepest.max()
