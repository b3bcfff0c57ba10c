"""A top-down search over a csr matrix's own arrays: the one-off search on raw input.

Building a :class:`~spbfs.graph.Graph` from a scipy matrix means a symmetry
check (a pass that follows every entry to its mirror), a block of in-edges for
a directed matrix and degree arrays: several times what one search costs. A
search that will not be repeated does better to read the rows of ``A`` as
they are, out-edges, top-down, as :func:`scipy.sparse.csgraph.breadth_first_order`
does: same answer, no copy of the structure.

The search is level-synchronous and sequential. Parents keep the meaning every
spbfs search gives them, the *smallest* vertex of the previous level with an
edge to the vertex: a vertex already reached in the current level takes a
smaller parent when one turns up (the frontier is in discovery order, not
sorted, and sorting it would cost more than one compare on the word the scan
reads anyway: level and parent share a 64-bit word per vertex).
"""

from __future__ import annotations

import time
from typing import Any

import numba as nb
import numpy as np

from semirings._intrinsics import cycle_ticks, monotonic
from spbfs.kernels.degrees import regular_degrees
from spbfs.result import BFSResult, LevelLog

__all__ = ["MAX_VERTICES", "rows_bfs", "rows_bfs_into", "rows_search", "unpack_state",
           "unpack_visited"]

_EXHAUSTED, _MAX_DEPTH, _TARGET = 0, 1, 2
_STOPS = ("exhausted", "max_depth", "target")


_UNVISITED = np.uint64(0xFFFFFFFFFFFFFFFF)
_LOW32 = np.uint64(0xFFFFFFFF)

#: The most vertices a search over rows takes: a vertex's state packs its level
#: and its parent in 32 bits each.
MAX_VERTICES = (1 << 32) - 1


#: Work (edges scanned plus frontier vertices) between two readings of the cycle counter
#: in :func:`rows_bfs`: a reading costs about 8 ns, more than a level of a few edges (a
#: 100-vertex path's 99 levels read it for 0.8 of the search's 2.7 µs), so levels of less
#: work share one reading (:func:`share_ticks`).
TICK_WORK = 256


@nb.njit(cache=True, inline="always")
def share_ticks(st_f, st_e, st_t, lo, hi, ticks):  # type: ignore[no-untyped-def]
    """Levels ``lo`` to ``hi - 1`` share ``ticks`` in proportion to their work (edges
    scanned plus frontier vertices, at least 1 a level)."""
    if hi - lo == 1:
        st_t[lo] = ticks
        return
    total = 0
    for i in range(lo, hi):
        total += st_e[i] + st_f[i]
    for i in range(lo, hi):
        st_t[i] = ticks * ((st_e[i] + st_f[i]) / total)


@nb.njit(cache=True, nogil=True)
def rows_bfs(indptr, indices, source, state, queue, max_depth, target, st_f, st_new, st_e, st_t,
             unbranched):
    """Search from ``source`` along the rows of a csr structure.

    ``indptr`` and ``indices`` are the matrix's arrays viewed as unsigned
    (checked in range before: an unsigned id needs no negative-index test, which
    measured 2x on the scan). ``state`` holds ``_UNVISITED`` everywhere; a
    reached vertex gets ``level << 32 | parent``, so one word, one compare
    (``new < state[v]``) decides both "unvisited" and "a smaller parent in the
    same level": an earlier level's word is smaller. ``queue`` holds at least
    ``n + 1`` entries, the ``st_*`` statistics arrays ``n``. ``max_depth`` or
    ``target`` below 0 mean none. ``st_t`` gets each level's ticks (a level of
    little work shares a reading with the levels around it: :data:`TICK_WORK`).

    ``unbranched``: the scan decides nothing by a branch. Every neighbour's word
    is written back (the smaller of it and this level's word) and every
    neighbour is written to ``queue[tail]``, kept only by advancing ``tail``
    (hence the slot past ``n``). Where what the scan finds is random (a
    power-law or road network, degrees that vary) the branches were
    mispredicted and this ran 1.6-1.8x faster; where it repeats (a path, a
    grid: one degree nearly everywhere) the branches were predicted and it ran
    1.1-1.6x slower (:func:`spbfs.kernels.degrees.regular_degrees` tells the
    two apart).

    Returns (levels run, stop reason: 0 exhausted, 1 max_depth, 2 target).
    """
    state[source] = np.uint64(source)
    queue[0] = source
    head = 0
    tail = 1
    depth = 0
    reason = _EXHAUSTED
    # The cycle counter is read after a level once the work since the last reading
    # reaches TICK_WORK (a level's end is the next one's start), converted to seconds by
    # the monotonic clock read at both ends of the search.
    start_s = monotonic()
    start = cycle_ticks()
    t0 = start
    timed = 0
    work = 0
    while head < tail:
        if max_depth >= 0 and depth >= max_depth:
            reason = _MAX_DEPTH
            break
        if target >= 0 and state[target] != _UNVISITED:
            reason = _TARGET
            break
        end = tail
        nxt = depth + 1
        high = np.uint64(nxt) << np.uint64(32)
        scanned = 0
        for q in range(head, end):
            u = queue[q]
            word = high | np.uint64(u)
            lo = indptr[u]
            hi = indptr[u + 1]
            scanned += hi - lo
            if unbranched:
                for e in range(lo, hi):
                    v = indices[e]
                    w = state[v]
                    state[v] = word if word < w else w
                    queue[tail] = v
                    tail += w == _UNVISITED
            else:
                for e in range(lo, hi):
                    v = indices[e]
                    w = state[v]
                    if word < w:
                        if w == _UNVISITED:
                            queue[tail] = v
                            tail += 1
                        state[v] = word
        st_f[depth] = end - head
        st_new[depth] = tail - end
        st_e[depth] = scanned
        work += scanned + (end - head)
        if work >= TICK_WORK:
            t1 = cycle_ticks()
            share_ticks(st_f, st_e, st_t, timed, nxt, t1 - t0)
            t0 = t1
            timed = nxt
            work = 0
        head = end
        depth = nxt
    if timed < depth:
        share_ticks(st_f, st_e, st_t, timed, depth, cycle_ticks() - t0)
    if depth:
        per_tick = (monotonic() - start_s) / max(1, cycle_ticks() - start)
        for i in range(depth):
            st_t[i] *= per_tick
    if reason == _EXHAUSTED and target >= 0 and state[target] != _UNVISITED:
        reason = _TARGET
    return depth, reason


@nb.njit(cache=True, nogil=True)
def unpack_state(state, parents, levels, want_parents, want_levels, reset=False):
    """Parents and levels (int64, -1 where unreached) out of the packed words, in one
    pass over n; with ``reset`` the same pass sets ``state`` back to unvisited."""
    for v in range(state.shape[0]):
        w = state[v]
        reached = w != _UNVISITED
        if want_parents:
            parents[v] = np.int64(w & _LOW32) if reached else -1
        if want_levels:
            levels[v] = np.int64(w >> np.uint64(32)) if reached else -1
        if reset:
            state[v] = _UNVISITED


def rows_search(indptr: np.ndarray, indices: np.ndarray, n: int, source: int,
                max_depth: int | None, target: int | None, config: Any) -> BFSResult:
    """:func:`rows_bfs` from ``source``, as the :class:`~spbfs.result.BFSResult` of a search.

    The structure must have been checked (pointers valid, ids in ``[0, n)``:
    :func:`spbfs.matrix_structure.check_compressed`); sorted rows are not
    needed. Every level is top-down.
    """
    if n > MAX_VERTICES:
        raise ValueError(f"a search over rows takes at most {MAX_VERTICES} vertices, got {n}")
    unsigned = np.uint32 if indices.dtype.itemsize == 4 else np.uint64
    ind = indices.view(unsigned)
    ptr = indptr.view(np.uint32) if indptr.dtype.itemsize == 4 else indptr.view(np.uint64)
    if ptr.dtype != ind.dtype:  # one compiled variant per index width
        ptr = ptr.astype(ind.dtype)
    t_start = time.perf_counter()
    state = np.full(n, _UNVISITED, dtype=np.uint64)
    # Untouched pages of np.empty cost nothing: only as many levels as run are written.
    queue = np.empty(n + 1, dtype=np.uint32)
    st_f = np.empty(n, np.int64)
    st_new = np.empty(n, np.int64)
    st_e = np.empty(n, np.int64)
    st_t = np.empty(n, np.float64)
    nlev, reason = rows_bfs(ptr, ind, source, state, queue,
                            -1 if max_depth is None else max_depth,
                            -1 if target is None else target, st_f, st_new, st_e, st_t,
                            not regular_degrees(ptr, rows=True))
    want_parents = config.output in ("both", "parents")
    want_levels = config.output in ("both", "levels")
    parents = np.empty(n if want_parents else 0, dtype=np.int64)
    levels = np.empty(n if want_levels else 0, dtype=np.int64)
    unpack_state(state, parents, levels, want_parents, want_levels)
    seconds = time.perf_counter() - t_start
    log = LevelLog()
    log.extend((st_f[:nlev].tolist(), st_new[:nlev].tolist(), st_e[:nlev].tolist(),
                st_t[:nlev].tolist()), 0)
    return BFSResult(
        source=source,
        parents=parents if want_parents else None,
        levels=levels if want_levels else None,
        stats=log.stats(),
        seconds=seconds,
        config=config,
        stopped=_STOPS[reason],
    )


@nb.njit(cache=True, nogil=True)
def unpack_visited(state, queue, discovered, nlev, parents, levels, want_parents, want_levels):
    """:func:`unpack_state` for the state :func:`rows_bfs` left (its reached vertices
    are ``queue[:total]``, ``total`` one more than the first ``nlev`` entries of
    ``discovered``), and ``state`` set back to unvisited for the next search.

    Where the search reached few vertices the arrays are filled with ``-1`` (a
    memset) and only the reached ones read: a search from a vertex without edges
    touches one word of ``state``. Where it reached a quarter of them or more, one
    pass runs over all n in order: the reached in queue order are written at
    random (a 1000 x 1000 grid's wavefront from a corner, a line per vertex),
    14 ms against 2 ms for the pass.
    """
    total = 1
    for d in range(nlev):
        total += discovered[d]
    if 4 * total >= state.shape[0]:
        unpack_state(state, parents, levels, want_parents, want_levels, True)
        return
    if want_parents:
        parents[:] = -1
    if want_levels:
        levels[:] = -1
    for i in range(total):
        v = queue[i]
        w = state[v]
        if want_parents:
            parents[v] = np.int64(w & _LOW32)
        if want_levels:
            levels[v] = np.int64(w >> np.uint64(32))
        state[v] = _UNVISITED


@nb.njit(cache=True, nogil=True)
def rows_bfs_into(indptr, indices, source, state, queue, max_depth, target, rec, rec_t, parents,
                  levels, want_parents, want_levels, unbranched):
    """:func:`rows_bfs` (its record in the rows of ``rec``: frontier, new, edges) and
    :func:`unpack_visited` in one call: a search of a few microseconds pays one
    dispatch from Python, not two."""
    nlev, reason = rows_bfs(indptr, indices, source, state, queue, max_depth, target, rec[0],
                            rec[1], rec[2], rec_t, unbranched)
    unpack_visited(state, queue, rec[1], nlev, parents, levels, want_parents, want_levels)
    return nlev, reason
