"""Fused BFS kernels for the numba backend: the whole search in one compiled loop.

The search keeps one word per vertex, ``state`` (int32 up to 2**30 vertices,
as GAPBS does; int64 above): ``-1 - degree`` while the vertex is unvisited, once
reached its parent in the low ``bits`` and its level's *stamp* above them. A
top-down level reads that one word per edge and gets the degree it adds to the
next frontier's edge count with it; no levels, mark or degree array is touched
per edge. The visited vertices are appended, level after level, to one
``queue`` (the frontier of a level is a window of it), and the int64 parents
and levels are written once, after the search, in one pass over the state
(:func:`finish`).

Top-down is the SpMSV ``t = B ⊕.⊗ f`` over ``min_second``, masked by the
complement of the visited set. The frontier is taken in any order: the first
frontier vertex to reach ``v`` claims it, writing ``base + parent``, where
``base`` is the level's stamp shifted above the id bits; a later, smaller one
that reaches ``v`` sees a claim of this level (a value ``>= base``, above
every earlier level's) and takes its place. So the parent is the smallest
frontier vertex reaching ``v`` (the ``min`` of the semiring) without sorting
any frontier, without atomics, without a bitmap and without a pass over the
level's claims after it. Stamps run 1, 2, ... up to what the word holds
above the id bits (2047 levels for a million vertices in int32); a search
deeper than that strips the stamps of the levels so far (:func:`_restamp`,
once per vertex at most) and starts again at 1, and those levels are read
from the queue at the end. A large level splits the destinations over the
threads in word-aligned ranges: each thread owns its ranges' state words. A run of
mid-size levels (a grid's or a mesh's wavefront) goes to a team of two threads
inside one parallel region (:func:`_team_levels`), which splits a level in two
bands of ids, each thread claiming its own band's vertices with plain stores,
or, where ids have no locality, in chunks of the frontier claimed by
compare-and-swap. On graphs of low average degree (road
networks) a serial level claims without branching on what it finds
(:func:`_claim_unbranched`).

Bottom-up scans the in-edges of every candidate (unvisited, with in-edges) in
increasing order and stops at the first frontier neighbour, the smallest:
both directions give the same parents, as the algebra says. Candidates that
stay unvisited are compacted, so later sweeps touch only what is left.

:func:`search_levels` runs level after level, both directions, choosing each
with :func:`spbfs.direction.next_direction` compiled from the Python policy's
own function, and returns to Python only when the search ends, a ``max_depth``
or ``target`` stop is due, or its per-level record is full. A road network's
thousand levels of a hundred vertices then cost what their edges cost. For
csr blocks the block format reaches every kernel as a compile-time constant
(see :func:`search_levels`), so their loops are compiled without the dcsc
lookups beside them.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from semirings._intrinsics import (
    atomic_add,
    atomic_cas,
    cycle_ticks,
    dcsc_column_range,
    load_acquire,
    load_relaxed,
    monotonic,
    prefetch,
    spin_pause,
    store_release,
    yield_cpu,
)
from spbfs.direction import TOP_DOWN, next_direction
from spbfs.kernels.bfs_steps import AHEAD as _AHEAD
from spbfs.kernels.bfs_steps import bottomup_scan, topdown_scan
from spbfs.kernels.bitmaps import first_member, first_member_blocked
from spbfs.kernels.bitmaps import set_bits as _set_ids

# The policy's own function, compiled for the search loop. numba's cache of the loop is
# keyed by this file's time stamp, not direction.py's: an edit of the policy's test
# reaches cached kernels only with an edit here.
_next_direction = nb.njit(cache=True, nogil=True)(next_direction)

# Zero as an int64 for kernel arguments: a literal ``0`` is typed ``Literal[int](0)``, so
# a call passing it compiles the callee once more beside its int64 calls (so does a
# counter starting at ``0`` while numba types the loop that grows it).
_0 = np.int64(0)

# Slots of the search's scalar state ``sv`` (kept between calls of search_levels).
# SV_WANTED: a level that runs in parallel where threads are given was met.
# SV_TEAM: levels run by a team of two threads (_team_levels) in this search; SV_BANDS:
# those of them split in bands.
# SV_REBASE: the depth of the last level whose stamps were stripped (_restamp), 0 if
# none; SV_UNSTAMPED: the queue position where the stamped vertices begin.
# SV_IN_LEFT: on a directed graph, the in-edges of the vertices not in queue[:SV_IN_POS]
# (search_levels' switch test). SV_DONE: search_levels wrote the results (its ``fin``).
(SV_HEAD, SV_TAIL, SV_DEPTH, SV_CUR, SV_MU, SV_MF, SV_NCAND, SV_CAND, SV_WANTED, SV_TEAM,
 SV_REBASE, SV_UNSTAMPED, SV_BANDS, SV_IN_POS, SV_IN_LEFT, SV_DONE) = range(16)
SV_SIZE = 16

# search_levels' ``fin``: the results it writes once the search is exhausted (0: none).
FIN_PARENTS, FIN_LEVELS = 1, 2

# Why search_levels returned.
EXHAUSTED, MAX_DEPTH, TARGET, FULL, THREADS = 0, 1, 2, 3, 4


@nb.njit(cache=True, nogil=True)
def word_cuts(n, nparts):
    """``nparts`` ranges of ``0 .. n`` cut at multiples of 64: no bitmap word has two writers."""
    cuts = np.empty(nparts + 1, np.int64)
    for t in range(nparts):
        cuts[t] = min(n, (n * t // nparts + 63) & ~63)
    cuts[nparts] = n
    return cuts


@nb.njit(cache=True, nogil=True)
def close_parts(out, cuts, parts):
    """Close up the lists ``out[cuts[t]:][:parts[t, 0]]``; return ``parts`` summed by column."""
    k = 0
    for t in range(parts.shape[0]):
        c = parts[t, 0]
        if k != cuts[t]:
            for x in range(c):  # leftwards, so a forward copy is safe where they overlap
                out[k + x] = out[cuts[t] + x]
        k += c
    return k, parts[:, 1].sum(), parts[:, 2].sum()


@nb.njit(cache=True, nogil=True, parallel=True)
def fill_minus1(a, b):
    """``a[:] = b[:] = -1`` in parallel (first touch of fresh result arrays)."""
    for i in nb.prange(a.shape[0]):
        a[i] = -1
    for i in nb.prange(b.shape[0]):
        b[i] = -1


@nb.njit(cache=True, nogil=True)
def _clear_bits(ids, bits, lo, hi):
    for i in range(lo, hi):
        bits[np.uint64(ids[np.uint64(i)]) >> np.uint64(6)] = 0


@nb.njit(cache=True, nogil=True, parallel=True)
def _bits_parallel(ids, bits, nparts, clear):
    # ids is sorted: split it where the word changes, so no word has two writers.
    n = ids.shape[0]
    cuts = np.empty(nparts + 1, np.int64)
    cuts[0] = 0
    cuts[nparts] = n
    for p in range(1, nparts):
        c = n * p // nparts
        w = ids[c] >> 6
        while c < n and (ids[c] >> 6) == w:
            c += 1
        cuts[p] = max(c, cuts[p - 1])
    for p in nb.prange(nparts):
        lo = cuts[p]
        hi = max(lo, cuts[p + 1])
        if clear:
            _clear_bits(ids, bits, lo, hi)
        else:
            _set_ids(ids[lo:hi], bits, 0)


# Below this many ids a bitmap update runs inline (a parallel region costs more).
_PAR_BITS = 1 << 17


@nb.njit(cache=True, nogil=True)
def set_bits(ids, bits, nparts=1):
    """Set the bits of ``ids`` in a uint64 bitmap (``nparts > 1``: ``ids`` sorted)."""
    if nparts > 1 and ids.shape[0] >= _PAR_BITS:
        _bits_parallel(ids, bits, nparts, False)
    else:
        _set_ids(ids, bits, 0)


@nb.njit(cache=True, nogil=True)
def clear_words(ids, bits):
    """Clear the words holding ``ids`` (any order): O(len(ids)), or one pass over
    ``bits`` when that is shorter."""
    if ids.shape[0] * 4 >= bits.shape[0]:
        bits[:] = 0
    else:
        _clear_bits(ids, bits, _0, ids.shape[0])


# -- the per-vertex state ------------------------------------------------------

# Below this many vertices the passes over n run inline (a parallel region
# costs tens of microseconds; a road network of 100 k vertices runs in one ms).
_PAR_N = 1 << 18


@nb.njit(cache=True, nogil=True, parallel=True)
def _init_state_parallel(deg, state):
    for v in nb.prange(state.shape[0]):
        state[v] = -1 - deg[v]


@nb.njit(cache=True, nogil=True)
def init_state(deg, state):
    """``state[v] = -1 - deg[v]``: every vertex unvisited, its degree folded in."""
    if state.shape[0] >= _PAR_N:
        _init_state_parallel(deg, state)
    else:
        for v in range(state.shape[0]):
            state[v] = -1 - deg[v]


@nb.njit(cache=True, nogil=True)
def _finish_range(state, parents, levels, want_parents, want_levels, deg, reset, bits, rebase,
                  lo, hi):
    # A vertex without a stamp gets ``rebase`` here, right for the source when no level
    # lost its stamp (else _scatter_levels writes those after this pass). No branch on
    # what a vertex holds: on a Kronecker graph the unreached are scattered at random.
    # Unsigned ids: no negative-index fix-up in the loops over n.
    mask = (1 << bits) - 1
    for v in range(np.uint64(lo), np.uint64(hi)):
        s = state[v]
        reached = s >= 0
        if want_parents:
            parents[v] = (s & mask) if reached else -1
        if want_levels:
            levels[v] = (rebase + (s >> bits)) if reached else -1
        if reset:
            state[v] = -1 - deg[v]


@nb.njit(cache=True, nogil=True)
def _scatter_levels(queue, offsets, levels, lo, hi):
    d = np.searchsorted(offsets, lo, side="right") - 1
    while lo < hi:
        # One level's window of the queue at a time: a plain loop, no test of the level.
        end = min(hi, offsets[d + 1])
        for i in range(np.uint64(lo), np.uint64(end)):
            levels[np.uint64(queue[i])] = d
        lo = end
        d += 1


@nb.njit(cache=True, nogil=True, parallel=True)
def _finish_parallel(state, parents, levels, want_parents, want_levels, deg, reset, bits, rebase,
                     nchunks):
    n = state.shape[0]
    step = -(-n // nchunks)
    for c in nb.prange(nchunks):
        _finish_range(state, parents, levels, want_parents, want_levels, deg, reset, bits,
                      rebase, c * step, min(n, c * step + step))


@nb.njit(cache=True, nogil=True, parallel=True)
def _scatter_parallel(queue, offsets, levels, total, nchunks):
    qstep = -(-total // nchunks)
    for c in nb.prange(nchunks):
        _scatter_levels(queue, offsets, levels, min(total, c * qstep),
                        min(total, c * qstep + qstep))


@nb.njit(cache=True, nogil=True)
def finish(state, queue, offsets, parents, levels, want_parents, want_levels, deg, reset,
           bits, rebase, unstamped, nchunks):
    """The int64 results from the search's state, in one pass over n.

    ``parents[v]`` is the low ``bits`` of ``state[v]`` where reached, ``-1``
    elsewhere; ``levels[v]`` is ``rebase`` plus its stamp. Vertices without a
    stamp (the source, and the levels before the last :func:`_restamp`) are
    ``queue[:unstamped]``, level ``d``'s being ``queue[offsets[d]:offsets[d + 1]]``:
    their levels are scattered from the queue. With ``reset`` the same pass sets
    ``state`` back to unvisited (``-1 - deg``) for the graph's next search, which
    then skips :func:`init_state`: one pass over n and one parallel region fewer.
    """
    n = state.shape[0]
    if n >= _PAR_N and nchunks > 1:
        _finish_parallel(state, parents, levels, want_parents, want_levels, deg, reset, bits,
                         rebase, nchunks)
    else:
        _finish_range(state, parents, levels, want_parents, want_levels, deg, reset, bits,
                      rebase, _0, n)
    if want_levels and unstamped > 1:
        if unstamped >= _PAR_N and nchunks > 1:
            _scatter_parallel(queue, offsets, levels, unstamped, nchunks)
        else:
            _scatter_levels(queue, offsets, levels, _0, unstamped)


# -- top-down ----------------------------------------------------------------


@nb.njit(cache=True, inline="always")
def _claim_edge(state, v, uo, out, k):  # type: ignore[no-untyped-def]
    """One edge's claim of :func:`_claim`: returns (next ``k``, degree of a new ``v`` or 0)."""
    s = state[v]
    if s < 0:
        state[v] = uo
        out[np.uint64(k)] = v
        return k + 1, -1 - s
    if s > uo:
        state[v] = uo  # claimed this level by a larger frontier vertex
    return k, 0


@nb.njit(cache=True, inline="always")
def _claim(ind, lo, hi, u, at, out, k):  # type: ignore[no-untyped-def]
    """Frontier vertex ``u``'s column ``ind[lo:hi]``: claim the unvisited, keep the smallest
    parent of the ones claimed this level; returns (next ``k``, degree sum of new).

    A vertex claimed this level holds ``base + parent``, ``base`` being the
    level's stamp above the id bits (``at`` is ``(state, base)``), so one compare
    tells it from one reached before (a smaller stamp) and from a larger claimant.
    No bitmap is touched: on a 1000 x 1000 grid a bitmap of the level's new
    vertices (set, tested, cleared) made the level 2x slower.
    """
    degsum = 0
    state, base = at
    uo = u + base
    # Unsigned ids index without numba's negative-index fix-up: measured 1.7x on a
    # road network's top-down levels (no signed id meets an unsigned one here).
    for e in range(np.uint64(lo), np.uint64(hi)):
        k, ds = _claim_edge(state, np.uint64(ind[e]), uo, out, k)
        degsum += ds
    return k, degsum


@nb.njit(cache=True, inline="always")
def _claim_unbranched(ind, lo, hi, u, at, out, k):  # type: ignore[no-untyped-def]
    """:func:`_claim` without a branch on what the scan finds (one thread only).

    Every neighbour's word is written back (``uo`` where it is claimed, its own
    value elsewhere) and every neighbour is written to ``out[k]``, kept only by
    advancing ``k``: ``out`` needs one slot past the level's last new vertex.
    On a road network, whose few neighbours a vertex has are found new or reached
    at random, the branches were mispredicted; on a grid, whose pattern repeats,
    they were not and this runs slower (docs/benchmarks.md).
    """
    degsum = 0
    state, base = at
    uo = u + base
    for e in range(np.uint64(lo), np.uint64(hi)):
        v = np.uint64(ind[e])
        s = state[v]
        fresh = s < 0
        state[v] = uo if (fresh or s > uo) else s
        out[np.uint64(k)] = v
        k += fresh
        degsum += (-1 - s) if fresh else 0
    return k, degsum


@nb.njit(cache=True, inline="always")
def _claim_shared(ind, lo, hi, u, at, out, k):  # type: ignore[no-untyped-def]
    """:func:`_claim` when another thread claims in the same level: each write is a
    compare-and-swap that retries while the word holds an unvisited vertex or a larger
    claim of this level, so the smallest claimant stays and exactly one thread lists
    each new vertex."""
    degsum = 0
    state, base = at
    uo = u + base
    for e in range(np.uint64(lo), np.uint64(hi)):
        v = np.uint64(ind[e])
        s = load_relaxed(state, v)
        while s < 0 or s > uo:
            old = atomic_cas(state, v, s, uo)
            if old == s:
                if s < 0:
                    out[np.uint64(k)] = v
                    k += 1
                    degsum += -1 - s
                break
            s = old
    return k, degsum


# Adjacent frontier pairs _strided compares at most: enough to see a wavefront's one
# stride, few enough to cost nothing next to the level.
_STRIDE_SAMPLES = 32


@nb.njit(cache=True, inline="always")
def _strided(queue, head, tail):  # type: ignore[no-untyped-def]
    """Whether frontier ``queue[head:tail]`` is read at one constant stride, judged on
    up to :data:`_STRIDE_SAMPLES` adjacent pairs spread over it (fewer than one in
    sixteen off the first pair's step).

    Such a frontier (a grid's wavefront from a corner) is what the hardware
    prefetches by itself; there the software prefetch of the adjacency lists is
    an extra dependent load per vertex, and serial levels ran 1.3x slower with
    it (docs/benchmarks.md). A frontier of fewer than four vertices is not strided.
    """
    n_f = tail - head
    if n_f < 4:
        return False
    samples = min(_STRIDE_SAMPLES, n_f - 1)
    gap = (n_f - 1) // samples
    step = queue[np.uint64(head + 1)] - queue[np.uint64(head)]
    other = 0
    for j in range(1, samples):
        i = np.uint64(head + j * gap)
        other += queue[i + np.uint64(1)] - queue[i] != step
    return 16 * other < samples


# Without reference counting (_nrt=False): numba's call convention increfs every
# array argument on entry and decrefs it on exit, a locked instruction each; ten
# arrays made a road network's level of a hundred vertices 20% slower (kernels
# that allocate cannot do without it).
@nb.njit(cache=True, nogil=True, _nrt=False)
def _topdown_all(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, state, base, out, opos):
    """:func:`_topdown_range` over every destination (a serial level)."""
    # The constant ``whole`` folds away the share test once inlined; passed as an
    # argument (even a literal one) it stayed a runtime test per frontier vertex.
    return topdown_scan(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, (state, base), out,
                        opos, 0, state.shape[0], True, _claim, True, True)


@nb.njit(cache=True, nogil=True, _nrt=False)
def _topdown_free(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, state, base, out, opos):
    """:func:`_topdown_all` without the degree sum of the new vertices (returned as 0).

    The sum feeds only the direction test, which a level of few new vertices
    cannot pass (:func:`search_levels`' ``kfree``); the next top-down level
    scans exactly those degrees. Its register pushed the output pointer to
    the stack, reloaded per new vertex: a 1000 x 1000 grid's serial levels
    ran 7-18% slower with it (docs/benchmarks.md).
    """
    return topdown_scan(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, (state, base), out,
                        opos, 0, state.shape[0], True, _claim, True, False)


@nb.njit(cache=True, inline="always")
def _column(ptr, jc, aux, shift, dcsc, u):  # type: ignore[no-untyped-def]
    """Column ``u``'s range ``(lo, hi)`` in a csr block, a dcsc block with one column per
    index chunk (``shift == 0``: two hops) or a dcsc block with a scan of its chunk."""
    if not dcsc:
        lo, hi = np.int64(ptr[np.uint64(u)]), np.int64(ptr[np.uint64(u + 1)])
    elif shift == 0:
        lo = np.int64(ptr[np.uint64(aux[np.uint64(u)])])
        hi = np.int64(ptr[np.uint64(aux[np.uint64(u + 1)])])
    else:
        lo, hi = dcsc_column_range(ptr, jc, aux, shift, u)
    return lo, hi


@nb.njit(cache=True, nogil=True, _nrt=False)
def _degree_sum(ptr, jc, aux, shift, dcsc, queue, head, tail):
    """The summed column lengths of ``queue[head:tail]``: a level's degree sum, where
    its kernel left it out and the direction test needs it."""
    total = 0
    for i in range(head, tail):
        lo, hi = _column(ptr, jc, aux, shift, dcsc, queue[np.uint64(i)])
        total += hi - lo
    return total


@nb.njit(cache=True, nogil=True, _nrt=False)
def _topdown_strided(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, state, base, out,
                     opos):
    """:func:`_topdown_free` without the prefetch, for a frontier read at one stride
    (:func:`_strided`).

    The caller chooses per level: with the choice inside one function (a flag
    tested per vertex, or two loops) LLVM compiled the loop without the
    prefetch 1.2x slower on a 1000 x 1000 grid from a corner.
    """
    return topdown_scan(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, (state, base), out,
                        opos, 0, state.shape[0], True, _claim, False, False)


@nb.njit(cache=True, nogil=True, _nrt=False)
def _topdown_unbranched(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, state, base, out,
                        opos):
    """:func:`_topdown_free` with :func:`_claim_unbranched` (``out`` is the queue, which
    has the spare slot)."""
    return topdown_scan(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, (state, base), out,
                        opos, 0, state.shape[0], True, _claim_unbranched, True, False)


@nb.njit(cache=True, nogil=True, _nrt=False)
def _topdown_shared(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, state, base, out, opos):
    """:func:`_topdown_all` with claims by compare-and-swap: another thread may claim the
    same destinations at the same time (a level of :func:`_team_levels`)."""
    return topdown_scan(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, (state, base), out,
                        opos, 0, state.shape[0], True, _claim_shared, True, True)


@nb.njit(cache=True, nogil=True, _nrt=False)
def _topdown_range(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, state, base, out, opos,
                   vlo, vhi):
    """Top-down from ``queue[head:tail]`` into the destinations ``vlo <= v < vhi`` only
    (see :func:`spbfs.kernels.bfs_steps.topdown_scan`)."""
    return topdown_scan(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, (state, base), out,
                        opos, vlo, vhi, False, _claim, True, True)


@nb.njit(cache=True, inline="always")
def _claim_band(ind, lo, hi, u, state, base, out, k, vlo, width, pairs, npairs):  # type: ignore[no-untyped-def]
    """:func:`_claim` of the destinations ``vlo <= v < vlo + width`` (this thread's band),
    with plain stores: no other thread writes them. A neighbour outside the band that
    this claim may still win goes to ``pairs`` as ``(v, u)``, for the leader to apply
    after the level. Returns (k, degree sum of new, pair words)."""
    degsum = 0
    uo = u + base
    for e in range(np.uint64(lo), np.uint64(hi)):
        v = np.uint64(ind[e])
        if v - np.uint64(vlo) < np.uint64(width):
            k, ds = _claim_edge(state, v, uo, out, k)
            degsum += ds
        else:
            # The other band's word, read while its owner may write it: a claim only
            # lowers a word within the level, so one already at or below ``uo``
            # (reached before, or claimed by a smaller parent) needs no pair.
            s = load_relaxed(state, v)
            if s < 0 or s > uo:
                pairs[npairs] = v
                pairs[npairs + 1] = u
                npairs += 2
    return k, degsum, npairs


@nb.njit(cache=True, nogil=True, _nrt=False)
def _topdown_band(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, state, base, out, opos,
                  vlo, vhi, pairs, npairs, ahead):
    """Top-down from the frontier vertices of ``queue[head:tail]`` in the band
    ``vlo <= u < vhi`` into the band's destinations (:func:`_claim_band`); the
    adjacency lists are prefetched when ``ahead``. Returns (new count, edges
    scanned, degree sum of new, pair words)."""
    k = opos
    scanned = 0
    degsum = 0
    width = vhi - vlo
    for i in range(head, tail):
        if ahead and i + _AHEAD < tail:
            # A dcsc block's pointers are per nonempty column: ``ptr[w]`` would read past
            # them where columns are empty (a directed graph's sinks).
            w = np.uint64(queue[np.uint64(i + _AHEAD)])
            if not dcsc:
                prefetch(ind, ptr[w])
            elif shift == 0:
                prefetch(ind, ptr[np.uint64(aux[w])])
        u = queue[np.uint64(i)]
        if np.uint64(u - vlo) >= np.uint64(width):
            continue
        lo, hi = _column(ptr, jc, aux, shift, dcsc, u)
        scanned += hi - lo
        k, ds, npairs = _claim_band(ind, lo, hi, u, state, base, out, k, vlo, width, pairs,
                                    npairs)
        degsum += ds
    return k - opos, scanned, degsum, npairs


@nb.njit(cache=True, nogil=True, parallel=True)
def _topdown_parts(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, state, base, buf, cuts,
                   parts):
    for t in nb.prange(cuts.shape[0] - 1):
        k, sc, ds = _topdown_range(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, state,
                                   base, buf, cuts[t], cuts[t], cuts[t + 1])
        parts[t, 0] = k
        parts[t, 1] = sc
        parts[t, 2] = ds


@nb.njit(cache=True, nogil=True)
def topdown_level(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, state, base, buf, nparts):
    """One top-down level from ``queue[head:tail]``; the new vertices go to ``queue[tail:]``.

    Returns (new count, edges scanned, degree sum of new). With ``nparts > 1``
    the destinations are split in word-aligned ranges searched in parallel
    (listed in ``buf``, then copied behind the frontier): each part owns its
    vertices' state, so every parent is the smallest as in the serial level.
    ``base`` is the level's stamp above the id bits (see :func:`_claim`).
    """
    n = state.shape[0]
    if nparts <= 1:
        return _topdown_all(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, state, base,
                            queue, tail)
    cuts = word_cuts(n, nparts)
    parts = np.zeros((nparts, 3), np.int64)
    _topdown_parts(ptr, ind, jc, aux, shift, dcsc, queue, head, tail, state, base, buf, cuts,
                   parts)
    k = tail
    for t in range(nparts):
        c = parts[t, 0]
        queue[k:k + c] = buf[cuts[t]:cuts[t] + c]
        k += c
    return k - tail, parts[:, 1].sum(), parts[:, 2].sum()


# What _stop_due returns when the next level may run.
_GO = -2


@nb.njit(cache=True, inline="always")
def _stop_due(depth, max_depth, target, state, nlev, cap):  # type: ignore[no-untyped-def]
    """``MAX_DEPTH``, ``TARGET`` or ``FULL`` when the loop must stop before the next
    level (``max_depth`` and ``target`` are -1 when not wanted), else ``_GO``."""
    if max_depth >= 0 and depth >= max_depth:
        return MAX_DEPTH
    if target >= 0 and state[target] >= 0:
        return TARGET
    if nlev == cap:
        return FULL
    return _GO


@nb.njit(cache=True, nogil=True, _nrt=False)
def _restamp(queue, unstamped, tail, state, bits, depth):
    """Level ``depth`` found every stamp used: strip the stamps of the levels so far
    (``queue[unstamped:tail]`` keep the low ``bits`` of their state, the parent);
    returns the new ``rebase`` and ``unstamped``.

    A level's claims' base is ``(depth - rebase) << bits``: stamps count levels from
    the last strip on, and every earlier level's values stay below this one's. The
    loop keeps ``rebase`` and ``unstamped`` in its own variables, with this rare
    step out of line: as ``sv``'s slots read and written every level, or with this
    step inlined, a path's level (one vertex) ran 1.5-1.8x slower.
    """
    mask = (1 << bits) - 1
    for i in range(unstamped, tail):
        v = np.uint64(queue[np.uint64(i)])
        state[v] &= mask
    return depth - 1, tail


@nb.njit(cache=True, inline="always")
def _open_level(queue, head, tail, depth, rebase, unstamped, state, bits, stamps):  # type: ignore[no-untyped-def]
    """The next level's depth, frontier size and claim base, with the stamps stripped
    first where the level would pass the last one (:func:`_restamp`, kept out of line);
    returns (depth, n_f, base, rebase, unstamped)."""
    depth += 1
    if depth - rebase > stamps:
        rebase, unstamped = _restamp(queue, unstamped, tail, state, bits, depth)
    return depth, tail - head, (depth - rebase) << bits, rebase, unstamped


@nb.njit(cache=True, inline="always")
def _scalars(sv):  # type: ignore[no-untyped-def]
    """The level loop's scalars kept in ``sv``: (head, tail, depth, direction, m_u, m_f)."""
    return sv[SV_HEAD], sv[SV_TAIL], sv[SV_DEPTH], sv[SV_CUR], sv[SV_MU], sv[SV_MF]


@nb.njit(cache=True, inline="always")
def _keep_scalars(sv, head, tail, depth, cur, m_u, m_f):  # type: ignore[no-untyped-def]
    """Store the level loop's scalars in ``sv`` (see :func:`_scalars`)."""
    sv[SV_HEAD] = head
    sv[SV_TAIL] = tail
    sv[SV_DEPTH] = depth
    sv[SV_CUR] = cur
    sv[SV_MU] = m_u
    sv[SV_MF] = m_f


@nb.njit(cache=True, inline="always")
def _next_level(st, st_t, nlev, t0, n_f, k, scanned, degsum, spent, cur, m_u, tail, mode, n,
                alpha, beta, gamma):  # type: ignore[no-untyped-def]
    """A level's record (``st[nlev]``, its ticks since ``t0``), then the next level's
    scalars: (nlev, t0, m_u, m_f, head, tail, direction).

    ``degsum`` is the new vertices' degree sum (the next ``m_f``), ``spent``
    what leaves ``m_u``: the same, but for a level whose sum is estimated
    (:func:`search_levels`)."""
    st[nlev, 0] = n_f
    st[nlev, 1] = k
    st[nlev, 2] = scanned
    st[nlev, 3] = cur
    t1 = cycle_ticks()
    st_t[nlev] = t1 - t0
    m_u -= spent
    cur = _next_direction(mode, cur, k, degsum, m_u, n, k > n_f, alpha, beta, gamma)
    return nlev + 1, t1, m_u, degsum, tail, tail + k, cur


# -- top-down levels on a team of two threads ------------------------------------
#
# Levels of a few hundred to a few thousand frontier vertices (grids, meshes) are too
# small for a parallel region each (tens of microseconds to wake the pool) and too large
# for one thread to match two. A run of such levels runs inside one region of two
# threads: the leader runs the levels, the helper spins between them. A level is split
# one of two ways:
#
# * bands: the frontier's id range is cut in two, and each thread takes the frontier
#   vertices of its band and claims only destinations in it, with plain stores; the few
#   claims across the cut go to the leader as (child, parent) pairs. A compare-and-swap
#   per new vertex costs more than a level of a 1000 x 1000 grid's wavefront gains from
#   a second thread; bands need none. They pay where ids are local (grids, meshes
#   numbered along space) and are given up for the rest of the run once a level sends
#   more than one pair per eight new vertices.
# * chunks: both threads take the frontier in chunks, the leader from the front and
#   the helper from the back (so each takes again what it found in the level before,
#   still in its own cache), and claim by compare-and-swap.
#
# The leader waits only for work the helper took: a helper that is late, or never runs,
# costs nothing but its share (the leader takes the upper band, or the chunks, itself).

# Frontier vertices per chunk, and the fewest a team level has: a frontier of a few
# hubs (a power-law graph's early levels) would give the helper nothing to take.
_TEAM_CHUNK = 64
_TEAM_VERTICES = 4 * _TEAM_CHUNK
# Slots of the team's control words (int64), 8 apart: one cache line per writer.
# _WORK: the level's epoch (bits 44 and up), the frontier vertices taken from the front
# (bits 22-43) and from the back (bits 0-21). _DONE: frontier vertices done.
# _HK/_HS/_HD: the helper's new count, edges scanned and degree sum in the level;
# _HEAD/_TAIL/_BASE: the level's frontier and claims' base; _STOP, _STARTED: the leader's.
_WORK, _DONE, _HK, _HS, _HD, _HEAD, _TAIL, _BASE, _STOP, _STARTED = (0, 8, 16, 17, 18, 24, 25,
                                                                   26, 32, 40)
# Band levels: _HP, the helper's pair words; _CUT, the bands' boundary; _AHEAD_ON, whether
# to prefetch; _BANDS, whether the level is split in bands; _TASK, the upper band's claim
# word (the epoch << 1, | 1 once a thread took it).
_HP, _CUT, _AHEAD_ON, _BANDS, _TASK = 19, 27, 28, 29, 48
_CTL_SIZE = 56
# A run of band levels stays on the team up to this many times the parallel levels'
# threshold (PAR_TOPDOWN): bands split a level whose ids are local without a binary
# search per frontier vertex and part. A finite-element mesh's levels of 32 k edges or
# more ran at 2.9 ns an edge so, against 3.9 as parallel levels; a run in chunks (a
# Kronecker graph's levels) leaves at the threshold itself, where a team measured up
# to 8% slower than a parallel level (docs/benchmarks.md).
_BAND_REACH = 4
_FIELD = (1 << 22) - 1
_EPOCHS = (1 << 19) - 1
# Ticks a helper waits for its leader to start: a threading layer that ran the region's
# two halves on one thread, helper first, must not hang (about 1 ms at 2 GHz).
_PATIENCE = 2_000_000
# Ticks a thread of the team spins before it also yields the core while it waits (about
# 20 µs): on a busy machine the thread it waits for may be queued behind it.
_SPIN = 40_000
# Slots of the team's in/out scalars besides the search's own (``sv``).
_IO_NLEV, _IO_REASON, _IO_T0, _IO_BANDS = range(4)
# A team run returned because its levels left the team's range (not a stop).
_LEFT = -1


@nb.njit(cache=True, inline="always")
def _team_wait(ctl, slot, value):  # type: ignore[no-untyped-def]
    """Spin (then also yield) until ``ctl[slot] >= value``."""
    t_wait = cycle_ticks()
    while load_acquire(ctl, slot) < value:
        spin_pause()
        if cycle_ticks() - t_wait > _SPIN:
            yield_cpu()


@nb.njit(cache=True, inline="always")
def _band_cut(queue, head, tail, n):  # type: ignore[no-untyped-def]
    """The cut between the two bands of frontier ``queue[head:tail]`` (the middle of its
    id range) and whether to prefetch: not for a frontier read at one stride
    (:func:`_strided`: a grid's wavefront from a corner), which the hardware
    prefetches by itself; there the software prefetch measured slower, elsewhere
    (a grid from its centre) faster."""
    mn = n
    mx = 0
    for i in range(head, tail):
        u = queue[np.uint64(i)]
        mn = min(mn, u)
        mx = max(mx, u)
    return (mn + mx + 1) // 2, not _strided(queue, head, tail)


@nb.njit(cache=True, nogil=True, _nrt=False)
def _lead_bands(ptr, ind, jc, aux, shift, dcsc, queue, buf, state, ctl, head, tail, base, cut,
                ahead, epoch, pairs):
    """The leader's part of a band level: the lower band, the upper one too unless the
    helper took it, then the pairs of both. Returns (new count, edges scanned, degree
    sum of new, pairs)."""
    n = state.shape[0]
    k, scanned, degsum, npairs = _topdown_band(ptr, ind, jc, aux, shift, dcsc, queue, head,
                                               tail, state, base, queue, tail, _0, cut, pairs,
                                               _0, ahead)
    if atomic_cas(ctl, _TASK, epoch << 1, (epoch << 1) | 1) == epoch << 1:
        c, sc, ds, npairs = _topdown_band(ptr, ind, jc, aux, shift, dcsc, queue, head, tail,
                                          state, base, queue, tail + k, cut, n, pairs, npairs,
                                          ahead)
    else:
        _team_wait(ctl, _DONE, 1)
        c, sc, ds = ctl[_HK], ctl[_HS], ctl[_HD]
        for x in range(c):
            queue[tail + k + x] = buf[x]
        half = pairs.shape[0] // 2
        for x in range(ctl[_HP]):
            pairs[npairs + x] = pairs[half + x]
        npairs += ctl[_HP]
    k += c
    scanned += sc
    degsum += ds
    # The claims across the cut, after both bands: each keeps the smallest parent.
    end = tail + k
    for x in range(0, npairs, 2):
        end, ds = _claim_edge(state, np.uint64(pairs[x]), pairs[x + 1] + base, queue, end)
        degsum += ds
    return end - tail, scanned, degsum, npairs // 2


@nb.njit(cache=True, nogil=True, _nrt=False)
def _team_lead(ptr, ind, jc, aux, shift, dcsc, queue, buf, state, bits, stamps, ctl, sv, io,
               lo_edges, hi_edges, mode, alpha, beta, gamma, max_depth, target, st, st_t,
               pairs):
    """The leader of :func:`_team_levels`: runs the levels, takes chunks, keeps the record."""
    n = state.shape[0]
    head, tail, depth, cur, m_u, m_f = _scalars(sv)
    rebase, unstamped = sv[SV_REBASE], sv[SV_UNSTAMPED]
    nlev = io[_IO_NLEV]
    t0 = io[_IO_T0]
    reason = EXHAUSTED
    epoch = 0
    bands = True
    nbands = 0
    store_release(ctl, _STARTED, 1)
    while tail > head:
        stop = _stop_due(depth, max_depth, target, state, nlev, st.shape[0])
        if stop != _GO:
            reason = stop
            break
        if (cur != TOP_DOWN or m_f < lo_edges
                or m_f >= (_BAND_REACH * hi_edges if bands else hi_edges)
                or not _TEAM_VERTICES <= tail - head <= _FIELD):
            reason = _LEFT
            break
        depth, n_f, base, rebase, unstamped = _open_level(queue, head, tail, depth, rebase,
                                                          unstamped, state, bits, stamps)
        epoch = epoch % _EPOCHS + 1
        # Bands where the last level found about as many vertices as it had (a wavefront);
        # a shrinking frontier (a power-law graph's last levels) claims few new vertices,
        # which chunks do with few compare-and-swaps and no scan of the whole frontier.
        split = bands and (nlev == 0 or 4 * st[nlev - 1, 1] >= st[nlev - 1, 0])
        if split:
            cut, ahead = _band_cut(queue, head, tail, n)
            ctl[_CUT] = cut
            ctl[_AHEAD_ON] = ahead
        ctl[_BANDS] = split
        ctl[_TASK] = epoch << 1
        ctl[_HEAD] = head
        ctl[_TAIL] = tail
        ctl[_BASE] = base
        ctl[_HK] = 0
        ctl[_HS] = 0
        ctl[_HD] = 0
        ctl[_DONE] = 0
        store_release(ctl, _WORK, epoch << 44)  # publishes the words above
        if split:
            k, scanned, degsum, npairs = _lead_bands(ptr, ind, jc, aux, shift, dcsc, queue,
                                                     buf, state, ctl, head, tail, base, cut,
                                                     ahead, epoch, pairs)
            # Ids without locality (most claims across the cut): chunks from here on.
            bands = 8 * npairs <= k
            nbands += 1
            nlev, t0, m_u, m_f, head, tail, cur = _next_level(
                st, st_t, nlev, t0, n_f, k, scanned, degsum, degsum, cur, m_u, tail, mode, n,
                alpha, beta, gamma)
            continue
        k = 0
        scanned = 0
        degsum = 0
        while True:
            w = load_relaxed(ctl, _WORK)
            i = (w >> 22) & _FIELD
            left = n_f - i - (w & _FIELD)
            if left <= 0:
                break
            take = min(_TEAM_CHUNK, left)
            if atomic_cas(ctl, _WORK, w, w + (take << 22)) != w:
                continue
            c, sc, ds = _topdown_shared(ptr, ind, jc, aux, shift, dcsc, queue, head + i,
                                        head + i + take, state, base, queue, tail + k)
            k += c
            scanned += sc
            degsum += ds
            atomic_add(ctl, _DONE, take)
        _team_wait(ctl, _DONE, n_f)
        c = ctl[_HK]
        for x in range(c):
            queue[tail + k + x] = buf[x]
        k += c
        scanned += ctl[_HS]
        degsum += ctl[_HD]
        nlev, t0, m_u, m_f, head, tail, cur = _next_level(
            st, st_t, nlev, t0, n_f, k, scanned, degsum, degsum, cur, m_u, tail, mode, n, alpha,
            beta, gamma)
    store_release(ctl, _STOP, 1)
    _keep_scalars(sv, head, tail, depth, cur, m_u, m_f)
    sv[SV_REBASE], sv[SV_UNSTAMPED] = rebase, unstamped
    io[_IO_NLEV] = nlev
    io[_IO_REASON] = reason
    io[_IO_T0] = t0
    io[_IO_BANDS] = nbands


@nb.njit(cache=True, nogil=True, _nrt=False)
def _team_help(ptr, ind, jc, aux, shift, dcsc, queue, buf, state, ctl, pairs):
    """The helper of :func:`_team_levels`: takes the upper band, or chunks, of each level
    until the leader stops.

    Its new vertices go to ``buf`` (the leader copies them behind its own), its pairs to
    the second half of ``pairs``. The band and each chunk are taken by compare-and-swap
    on a word holding the epoch, so a helper that wakes late never works on a later
    level with the frontier it read.
    """
    t_start = cycle_ticks()
    while load_acquire(ctl, _STARTED) == 0:
        if cycle_ticks() - t_start > _PATIENCE:
            return
        spin_pause()
    served = 0
    t_idle = cycle_ticks()
    while True:
        w = load_acquire(ctl, _WORK)
        e = w >> 44
        if e == served:
            if load_relaxed(ctl, _STOP):
                return
            spin_pause()
            if cycle_ticks() - t_idle > _SPIN:
                yield_cpu()
            continue
        if ctl[_BANDS]:
            if atomic_cas(ctl, _TASK, e << 1, (e << 1) | 1) == e << 1:
                # The level's words stay as they are until _DONE: the leader waits for it.
                half = pairs.shape[0] // 2
                k, scanned, degsum, npairs = _topdown_band(
                    ptr, ind, jc, aux, shift, dcsc, queue, ctl[_HEAD], ctl[_TAIL], state,
                    ctl[_BASE], buf, _0, ctl[_CUT], state.shape[0], pairs[half:], _0,
                    ctl[_AHEAD_ON] != 0)
                ctl[_HK] = k
                ctl[_HS] = scanned
                ctl[_HD] = degsum
                ctl[_HP] = npairs
                store_release(ctl, _DONE, 1)  # after the words and the claims
            served = e
            t_idle = cycle_ticks()
            continue
        head = ctl[_HEAD]
        n_f = ctl[_TAIL] - head
        base = ctl[_BASE]
        k = _0
        scanned = 0
        degsum = 0
        while (w >> 44) == e:
            back = w & _FIELD
            left = n_f - ((w >> 22) & _FIELD) - back
            if left <= 0:
                break
            take = min(_TEAM_CHUNK, left)
            old = atomic_cas(ctl, _WORK, w, w + take)
            if old != w:
                w = old
                continue
            j = n_f - back
            c, sc, ds = _topdown_shared(ptr, ind, jc, aux, shift, dcsc, queue, head + j - take,
                                        head + j, state, base, buf, k)
            k += c
            scanned += sc
            degsum += ds
            ctl[_HK] = k
            ctl[_HS] = scanned
            ctl[_HD] = degsum
            atomic_add(ctl, _DONE, take)  # after the three words and the claims
            w = load_acquire(ctl, _WORK)
        served = e
        t_idle = cycle_ticks()


@nb.njit(cache=True, nogil=True, parallel=True)
def _team_levels(ptr, ind, jc, aux, shift, dcsc, queue, buf, state, bits, stamps, sv, io,
                 lo_edges, hi_edges, mode, alpha, beta, gamma, max_depth, target, st, st_t):
    """Consecutive top-down levels with ``lo_edges <= m_f < hi_edges`` on two threads;
    while their levels split in bands, up to ``_BAND_REACH * hi_edges``.

    ``sv`` (:func:`search_levels`'s) and ``io`` (``_IO_*``) carry the loop's scalars in
    and out; the reason in ``io`` is a stop of :func:`search_levels`, ``EXHAUSTED``, or
    ``_LEFT`` when the levels left the range. Every parent is the smallest, as in a
    serial level.
    """
    ctl = np.zeros(_CTL_SIZE, np.int64)
    # Pair words of the leader (first half) and of the helper: at most two per edge of a
    # level, and a team level has fewer than _BAND_REACH * hi_edges edges.
    pairs = np.empty(4 * _BAND_REACH * hi_edges + 4, np.int64)
    for t in nb.prange(2):
        if t == 0:
            _team_lead(ptr, ind, jc, aux, shift, dcsc, queue, buf, state, bits, stamps, ctl,
                       sv, io, lo_edges, hi_edges, mode, alpha, beta, gamma, max_depth, target,
                       st, st_t, pairs)
        else:
            _team_help(ptr, ind, jc, aux, shift, dcsc, queue, buf, state, ctl, pairs)


# -- bottom-up ---------------------------------------------------------------


@nb.njit(cache=True, inline="always")
def _unvisited(state, v):  # type: ignore[no-untyped-def]
    """A vertex is open while its state is negative (``-1 - degree``, see :func:`init_state`)."""
    s = state[v]
    return s < 0, s


@nb.njit(cache=True, inline="always")
def _stamp_find(at, v, u, f, s):  # type: ignore[no-untyped-def]
    """A bottom-up find: ``state[v] = base + u`` (the level's stamp, see :func:`_claim`),
    listed in ``found[f]``; returns its degree, folded in its old state."""
    state, base, found = at
    state[v] = base + u
    found[np.uint64(f)] = v
    return -1 - s


@nb.njit(cache=True, inline="always")
def _first_reached(at, ind, lo, hi):  # type: ignore[no-untyped-def]
    """First ``e`` in ``lo .. hi-1`` whose id ``ind[e]`` was reached before this level
    (``0 <= state < base``, ``at = (state, base)``), or ``hi``: a bottom-up level's
    frontier test without a bitmap (see :func:`bottomup_level`)."""
    state, base = at
    for e in range(np.uint64(lo), np.uint64(hi)):
        s = state[np.uint64(ind[e])]
        if s >= 0 and s < base:
            return np.int64(e)
    return hi


# Without reference counting: the tuple handed to the shared step is unpacked at each
# find, an incref and a decref per array (see _topdown_all).
@nb.njit(cache=True, nogil=True, _nrt=False)
def _bottomup_range(ptr, ind, jc, dcsc, front, member, state, base, src, cand, first, lo_c, hi_c,
                    found, out):
    """Bottom-up over ``src[lo_c:hi_c]``; survivors (in ``cand``) and finds go from ``lo_c`` on.

    :func:`spbfs.kernels.bfs_steps.bottomup_scan` over the state: a find's
    state is ``base + parent`` (the level's stamp, see :func:`_claim`); the
    frontier is ``member``'s ``front`` (a bitmap, or the state). With
    ``first`` the candidates are all major slots ``lo_c .. hi_c - 1`` and
    ``src`` is not read. ``out`` gets (found, survivors, edges scanned,
    degree sum of found).
    """
    # Literal zeros for the slot and row offsets: folded away once inlined.
    bottomup_scan(ptr, ind, jc, dcsc, front, member, src, cand, first, 0, 0, lo_c, hi_c, lo_c,
                  state, _unvisited, _stamp_find, (state, base, found), True, out)


@nb.njit(cache=True, nogil=True, parallel=True)
def _bottomup_chunks(ptr, ind, jc, dcsc, front, state, base, src, cand, first, ncand, found,
                     step, outs, blocked):
    for c in nb.prange(outs.shape[0]):
        if blocked:
            _bottomup_range(ptr, ind, jc, dcsc, front, first_member_blocked, state, base, src,
                            cand, first, c * step, min(ncand, c * step + step), found, outs[c])
        else:
            _bottomup_range(ptr, ind, jc, dcsc, front, first_member, state, base, src, cand,
                            first, c * step, min(ncand, c * step + step), found, outs[c])


@nb.njit(cache=True, nogil=True, parallel=True)
def _gather_chunks(cand, found, outs, step, nxt, cand_out):
    """The chunks' finds into ``nxt`` and survivors into ``cand_out``, in parallel."""
    nch = outs.shape[0]
    fofs = np.zeros(nch + 1, np.int64)
    rofs = np.zeros(nch + 1, np.int64)
    for c in range(nch):
        fofs[c + 1] = fofs[c] + outs[c, 0]
        rofs[c + 1] = rofs[c] + outs[c, 1]
    for c in nb.prange(nch):
        lo_c = c * step
        nxt[fofs[c]:fofs[c + 1]] = found[lo_c:lo_c + outs[c, 0]]
        cand_out[rofs[c]:rofs[c + 1]] = cand[lo_c:lo_c + outs[c, 1]]


# Up to this many vertices a bottom-up level on one thread of no more candidates than
# frontier vertices tests the state for the frontier (bottomup_level) instead of a
# bitmap set and cleared around it.
STATE_FRONT = 1 << 16

# Below this many candidates a bottom-up level runs inline; below this many ids
# to move, its chunks are gathered inline.
_PAR_BOTTOMUP = 4096
_PAR_GATHER = 1 << 16


@nb.njit(cache=True, inline="always")
def blocked_sweep(m_f, m_u):  # type: ignore[no-untyped-def]
    """Whether a bottom-up level tests four in-neighbours at a time
    (:func:`~spbfs.kernels.bitmaps.first_member_blocked`): where the frontier's edges
    ``m_f`` are a fifth to twice the unvisited vertices' ``m_u``.

    An in-neighbour of a candidate is in the frontier with a chance of about
    ``m_f / (m_f + m_u)``: a sixth to two thirds here, where a branch per id
    goes either way. First bottom-up levels there (Kronecker 14-18 and the
    wiki-Vote-like graph, ratios 0.24-1.9) took 0.4-0.96x the time of the
    scan by one id; at 0.1 it took 1.14-1.23x, at 2.7-3.6 (later levels, whose
    first in-neighbour is nearly always a hit) 1.3-1.5x.
    """
    return 5 * m_f >= m_u and m_f <= 2 * m_u


@nb.njit(cache=True, nogil=True)
def bottomup_level(ptr, ind, jc, dcsc, slots, has_slots, front, state, base, queue, tail,
                   found, cands, ci, ncand, nchunks, blocked=False):
    """One bottom-up level over the bitmap ``front``; the finds go to ``queue[tail:]``, sorted.

    An empty ``front`` (one chunk only) reads the frontier from the state instead: an
    unvisited vertex's reached in-neighbours are all of the previous level (one of an
    earlier level would have reached it then), so the first in-neighbour reached before
    this level (``0 <= state < base``: the levels' stamps only grow, and a
    :func:`_restamp` leaves every earlier level below the new base) is its smallest
    frontier neighbour (:func:`_first_reached`). Where the state fits the caches
    (:data:`STATE_FRONT`) that saves setting and clearing the frontier's bits.

    ``cands[ci][:ncand]`` lists the major slots that may still find a parent.
    ``ncand < 0`` means the first bottom-up level: every slot, or every slot
    in ``slots`` (the csr columns with entries) when ``has_slots``. Skipping
    the empty ones measured 15% off the first bottom-up level of Kronecker
    scale 20, where 38% of the vertices are isolated and the test for them is
    a branch the CPU cannot predict.

    ``blocked`` tests a bitmap's members four at a time
    (:func:`~spbfs.kernels.bitmaps.first_member_blocked`; see :func:`blocked_sweep`).

    Returns (found, survivors, edges scanned, degree sum of found, the row
    of ``cands`` now holding the survivors).
    """
    # One call with a runtime ``first``: a second call site with a literal False
    # compiled _bottomup_from, _bottomup_chunks and _bottomup_range once more.
    first = ncand < 0
    src = cands[ci]
    if first and has_slots:
        src = slots
        ncand = slots.shape[0]
        first = False
    elif first:
        ncand = jc.shape[0] if dcsc else ptr.shape[0] - 1
    return _bottomup_from(ptr, ind, jc, dcsc, front, state, base, src, first, ncand, queue, tail,
                          found, cands, ci, nchunks, blocked)


@nb.njit(cache=True, nogil=True)
def _bottomup_from(ptr, ind, jc, dcsc, front, state, base, src, first, ncand, queue, tail,
                   found, cands, ci, nchunks, blocked):
    cand = cands[ci]
    nch = nchunks if ncand >= _PAR_BOTTOMUP else 1
    step = max(1, -(-ncand // nch))
    outs = np.zeros((nch, 4), np.int64)
    if nch == 1:
        # One chunk lists its finds where they belong, behind the frontier: no copy.
        if front.shape[0] and blocked:
            _bottomup_range(ptr, ind, jc, dcsc, front, first_member_blocked, state, base, src,
                            cand, first, _0, ncand, queue[tail:], outs[0])
        elif front.shape[0]:
            _bottomup_range(ptr, ind, jc, dcsc, front, first_member, state, base, src, cand,
                            first, _0, ncand, queue[tail:], outs[0])
        else:
            _bottomup_range(ptr, ind, jc, dcsc, (state, base), _first_reached, state, base, src,
                            cand, first, _0, ncand, queue[tail:], outs[0])
        return outs[0, 0], outs[0, 1], outs[0, 2], outs[0, 3], ci
    _bottomup_chunks(ptr, ind, jc, dcsc, front, state, base, src, cand, first, ncand, found,
                     step, outs, blocked)
    nfound = outs[:, 0].sum()
    nsurv = outs[:, 1].sum()
    if nfound + nsurv >= _PAR_GATHER:
        _gather_chunks(cand, found, outs, step, queue[tail:], cands[1 - ci])
        ci = 1 - ci
    else:
        fpos = tail
        rpos = 0
        for c in range(nch):
            lo_c = c * step
            queue[fpos:fpos + outs[c, 0]] = found[lo_c:lo_c + outs[c, 0]]
            if rpos != lo_c:  # leftwards: a forward copy is safe where they overlap
                for t in range(outs[c, 1]):
                    cand[rpos + t] = cand[lo_c + t]
            fpos += outs[c, 0]
            rpos += outs[c, 1]
    return nfound, nsurv, outs[:, 2].sum(), outs[:, 3].sum(), ci


# -- the search loop -----------------------------------------------------------

# A top-down level expecting at least this many edges splits the destinations
# over the threads (a parallel region costs tens of microseconds).
PAR_TOPDOWN = 1 << 15
# From this many expected edges up to PAR_TOPDOWN, a run of top-down levels goes to a
# team of two threads (_team_levels), given at least two; a run in bands stays there
# beyond PAR_TOPDOWN (_BAND_REACH).
TEAM_TOPDOWN = 1 << 10
# Below this average degree the serial top-down levels claim without branches
# (_claim_unbranched): a road network's average is about 2, a grid's 4. Above it, so do
# graphs whose degrees vary (NumbaEngine.unbranched).
UNBRANCHED_DEGREE = 3


@nb.njit(cache=True, inline="always")
def _in_edge_switch(indeg, queue, tail, sv, mode, m_f, n, alpha, beta, gamma):  # type: ignore[no-untyped-def]
    """The direction after a top-down level of a directed graph, whose bottom-up sweep
    reads in-edges: the policy's test with ``m_u`` the in-edges of the unvisited
    vertices (the vertices of ``queue[:tail]`` are visited). They are counted only where
    the test can fire at all (at ``m_u = 0``), catching up over the queue from
    ``sv[SV_IN_POS]``: a search whose frontier never grows past the guard never reads
    ``indeg``."""
    if _next_direction(mode, TOP_DOWN, 0, m_f, 0, n, True, alpha, beta, gamma) == TOP_DOWN:
        return TOP_DOWN
    left = sv[SV_IN_LEFT]
    for i in range(sv[SV_IN_POS], tail):
        left -= indeg[queue[i]]
    sv[SV_IN_POS] = tail
    sv[SV_IN_LEFT] = left
    return _next_direction(mode, TOP_DOWN, 0, m_f, left, n, True, alpha, beta, gamma)


@nb.njit(cache=True, nogil=True)
def search_levels(optr, oind, ojc, oaux, oshift, iptr, iind, ijc, slots, has_slots, state,
                  bits, stamps, queue, buf, front, cands, sv, sv0, source, mode, alpha, beta,
                  gamma, nparts,
                  nchunks, par_topdown, team_topdown, unbranched, kfree, max_depth, target, st,
                  st_t, indeg, deg, parents, levels, fin, odcsc=False, idcsc=False):
    """Run levels, both directions, until the search ends or must return to Python.

    The frontier is ``queue[sv[SV_HEAD]:sv[SV_TAIL]]``; ``sv`` holds the rest
    of the search's scalars (depth, next direction, unvisited and frontier
    degree sums, candidates, stamps) and is updated on return. A ``source`` of
    0 or more starts a search there first (``state`` all unvisited): ``sv``
    becomes ``sv0`` (``SV_MU`` every edge, ``SV_IN_LEFT`` every in-edge), the
    source is marked and the first direction is chosen as every later one is;
    ``-1`` goes on from ``sv``. A vertex reached
    in a level holds ``stamp << bits | parent``, stamps running from 1 to
    ``stamps`` (see :func:`_restamp`); ``front`` is a clear bitmap, which a
    bottom-up level fills with its frontier and clears.
    ``max_depth`` and ``target`` are ``-1`` when not wanted. A serial top-down
    level that finds fewer than ``kfree`` new vertices cannot turn the search
    bottom-up (``kfree * max_degree * gamma <= n`` for the policy's ``gamma``;
    any count where the direction is forced): its kernel leaves the degree sum
    out, ``m_f`` is estimated from the level's own average degree (it only
    picks serial, team or parallel levels), and the next level's edge count
    settles ``m_u`` (``sv`` always leaves exact). ``nparts == 0``
    means the thread count is not chosen yet: serial levels run, and the loop
    returns before the first level that would run in parallel; once such a
    level runs, ``sv[SV_WANTED]`` is set (the graph's next search then chooses
    its count on entry, see :class:`~spbfs.search.numba_engine.ScratchPool`). Each level's
    frontier, new vertices, edges scanned and direction go to ``st[level]``,
    its seconds to ``st_t`` (one clock reading per level: a level's seconds
    run from the previous level's end, so they include the stop tests and the
    direction choice between the two).

    Returns (levels run, reason): ``EXHAUSTED``, ``MAX_DEPTH``, ``TARGET``
    (a stop before the next level is due, or the last level reached the
    target), ``FULL`` (``st`` is full) or
    ``THREADS`` (a parallel level is due and ``nparts`` is 0).

    ``indeg`` is empty where every edge goes both ways; on a directed graph it
    holds the in-degrees, and the test after a top-down level takes for ``m_u``
    the in-edges of the unvisited vertices, what a bottom-up sweep reads
    (:func:`_in_edge_switch`; ``sv[SV_MU]`` keeps the out-edges). A team run
    (``team_topdown``) applies the test with the out-edges: the caller gives no
    team to a directed graph whose test could fire inside one, and its last
    level's test is taken again here.

    ``fin`` (``FIN_PARENTS | FIN_LEVELS``, or 0) asks for the results of an exhausted
    search here, in the pass :func:`finish` runs (serial; ``deg`` the degrees it resets
    ``state`` to), where no level lost its stamp or no levels are asked for:
    ``sv[SV_DONE]`` then says so. A search of a few thousand vertices saves the second
    compiled call and its Python, a tenth of its fixed cost (more on a busy machine,
    whose other processes leave the call's code and data out of the caches).

    ``odcsc`` and ``idcsc`` say whether the out- and in-block are dcsc blocks
    with empty columns. Left out, each is a compile-time constant ``False``
    that reaches every kernel below as one (numba types an omitted default as
    a literal and passes it on as such): the csr kernels are then compiled
    without the dcsc loops beside them, with which LLVM compiled a 1000 x 1000
    grid's top-down levels 1.2x slower (docs/benchmarks.md).
    """
    n = state.shape[0]
    if source >= 0:
        # The start, in the call that runs the first levels (a search of a few thousand
        # vertices pays no Python for it).
        sv[:] = sv0
        state[source] = source
        queue[0] = source
        sv[SV_MF] = deg[source]
        sv[SV_MU] -= deg[source]
        if indeg.shape[0]:
            sv[SV_CUR] = _in_edge_switch(indeg, queue, 1, sv, mode, sv[SV_MF], n, alpha, beta,
                                         gamma)
        else:
            sv[SV_CUR] = _next_direction(mode, TOP_DOWN, 1, sv[SV_MF], sv[SV_MU], n, True,
                                         alpha, beta, gamma)
    head, tail, depth, cur, m_u, m_f = _scalars(sv)
    ncand = sv[SV_NCAND]
    ci = sv[SV_CAND]
    wanted = sv[SV_WANTED]
    rebase, unstamped = sv[SV_REBASE], sv[SV_UNSTAMPED]
    sorted_front = False
    nlev = 0
    reason = EXHAUSTED
    io = np.empty(4, np.int64)
    # One reading of the cycle counter per level (its end is the next one's start):
    # a level of a road network costs about a microsecond. The monotonic clock, read
    # at both ends of the call, converts the ticks to seconds.
    start_s = monotonic()
    start = cycle_ticks()
    t0 = start
    # m_f is an estimate, and m_u still holds the frontier's degrees (see kfree).
    pending = False
    while tail > head:
        stop = _stop_due(depth, max_depth, target, state, nlev, st.shape[0])
        if stop != _GO:
            reason = stop
            break
        if pending and (cur != TOP_DOWN or (nparts != 1 and m_f >= team_topdown)):
            # The level may not be a serial top-down one: its choice takes the exact m_f.
            m_f = _degree_sum(optr, ojc, oaux, oshift, odcsc, queue, head, tail)
            m_u -= m_f
            pending = False
        team = (cur == TOP_DOWN and team_topdown <= m_f < par_topdown
                and _TEAM_VERTICES <= tail - head <= _FIELD)
        if cur != TOP_DOWN or m_f >= par_topdown or team:
            if nparts == 0:
                reason = THREADS
                break
            wanted = 1
        if team and nparts >= 2:
            _keep_scalars(sv, head, tail, depth, cur, m_u, m_f)
            sv[SV_REBASE], sv[SV_UNSTAMPED] = rebase, unstamped
            io[_IO_NLEV] = nlev
            io[_IO_T0] = t0
            _team_levels(optr, oind, ojc, oaux, oshift, odcsc, queue, buf, state, bits, stamps,
                         sv, io, team_topdown, par_topdown, mode, alpha, beta, gamma, max_depth,
                         target, st, st_t)
            sv[SV_TEAM] += io[_IO_NLEV] - nlev
            sv[SV_BANDS] += io[_IO_BANDS]
            head, tail, depth, cur, m_u, m_f = _scalars(sv)
            rebase, unstamped = sv[SV_REBASE], sv[SV_UNSTAMPED]
            if indeg.shape[0] and io[_IO_NLEV] > nlev:
                cur = _in_edge_switch(indeg, queue, tail, sv, mode, m_f, n, alpha, beta, gamma)
            nlev = io[_IO_NLEV]
            t0 = io[_IO_T0]
            sorted_front = False
            if io[_IO_REASON] != _LEFT:
                reason = io[_IO_REASON]
                break
            continue
        depth, n_f, base, rebase, unstamped = _open_level(queue, head, tail, depth, rebase,
                                                          unstamped, state, bits, stamps)
        spent = -1
        if cur == TOP_DOWN and (nparts <= 1 or m_f < par_topdown):
            # topdown_level's serial case, without its call: arrays passed to a
            # function that may allocate are reference-counted per call.
            if unbranched:
                k, scanned, degsum = _topdown_unbranched(optr, oind, ojc, oaux, oshift, odcsc,
                                                         queue, head, tail, state, base, queue,
                                                         tail)
            elif _strided(queue, head, tail):
                k, scanned, degsum = _topdown_strided(optr, oind, ojc, oaux, oshift, odcsc,
                                                      queue, head, tail, state, base, queue,
                                                      tail)
            elif kfree > 0:
                k, scanned, degsum = _topdown_free(optr, oind, ojc, oaux, oshift, odcsc, queue,
                                                   head, tail, state, base, queue, tail)
            else:
                k, scanned, degsum = _topdown_all(optr, oind, ojc, oaux, oshift, odcsc, queue,
                                                  head, tail, state, base, queue, tail)
                spent = degsum
            if spent < 0:
                if pending:
                    m_u -= scanned  # the frontier's degrees, now counted
                pending = k < kfree
                if pending:
                    degsum = np.int64(k * (scanned / n_f))
                    spent = 0
                else:
                    degsum = _degree_sum(optr, ojc, oaux, oshift, odcsc, queue, tail, tail + k)
                    spent = degsum
        elif cur == TOP_DOWN:
            k, scanned, degsum = topdown_level(optr, oind, ojc, oaux, oshift, odcsc, queue,
                                               head, tail, state, base, buf, nparts)
        elif nchunks == 1 and n <= STATE_FRONT and 0 <= ncand <= n_f:
            # The frontier read from the state: no bitmap to set and clear (bottomup_level).
            # Not in a first sweep (ncand < 0), nor where the candidates outnumber the
            # frontier: a sweep reads the state slower than a bitmap of a few words (the
            # wiki-Vote-like graph's first sweep, 45 k edges: 41 -> 53 µs), while the bits
            # cost about a nanosecond per frontier vertex (its second sweep: 9.5 -> 6.1 µs).
            k, ncand, scanned, degsum, ci = bottomup_level(
                iptr, iind, ijc, idcsc, slots, has_slots, front[:0], state, base, queue, tail,
                buf, cands, ci, ncand, nchunks)
        else:
            # A frontier from a bottom-up level is sorted: its bits may be set in parallel.
            set_bits(queue[head:tail], front, nparts if sorted_front else 1)
            k, ncand, scanned, degsum, ci = bottomup_level(
                iptr, iind, ijc, idcsc, slots, has_slots, front, state, base, queue, tail, buf,
                cands, ci, ncand, nchunks, blocked_sweep(m_f, m_u))
            clear_words(queue[head:tail], front)
        sorted_front = cur != TOP_DOWN
        nlev, t0, m_u, m_f, head, tail, cur = _next_level(
            st, st_t, nlev, t0, n_f, k, scanned, degsum, degsum if spent < 0 else spent, cur,
            m_u, tail, mode, n, alpha, beta, gamma)
        if indeg.shape[0] and not sorted_front:
            cur = _in_edge_switch(indeg, queue, tail, sv, mode, m_f, n, alpha, beta, gamma)
    if pending:
        m_f = _degree_sum(optr, ojc, oaux, oshift, odcsc, queue, head, tail)
        m_u -= m_f
    _keep_scalars(sv, head, tail, depth, cur, m_u, m_f)
    sv[SV_NCAND] = ncand
    sv[SV_CAND] = ci
    sv[SV_REBASE], sv[SV_UNSTAMPED] = rebase, unstamped
    sv[SV_WANTED] = wanted
    if nlev:
        per_tick = (monotonic() - start_s) / max(1, cycle_ticks() - start)
        for i in range(nlev):
            st_t[i] *= per_tick
    if reason == EXHAUSTED and target >= 0 and state[target] >= 0:
        reason = TARGET  # the last level reached it
    if fin != 0 and reason == EXHAUSTED and (unstamped <= 1 or fin & FIN_LEVELS == 0):
        _finish_range(state, parents, levels, fin & FIN_PARENTS != 0, fin & FIN_LEVELS != 0,
                      deg, True, bits, rebase, _0, n)
        sv[SV_DONE] = 1
    return nlev, reason
