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

from semirings._intrinsics import column_range, column_share, monotonic, prefetch
from spbfs.direction import leave_top_down
from spbfs.kernels.bitmaps import first_member, ids_from_bits
from spbfs.kernels.bitmaps import set_bits as _set_ids

# The driver's direction test, compiled for the fused top-down loop.
_leave_top_down = nb.njit(cache=True, nogil=True)(leave_top_down)

# Iterations ahead at which the next adjacency list is requested (see prefetch).
_AHEAD = 16


@nb.njit(cache=True, nogil=True)
def _topdown_range(ptr, ind, jc, dcsc, frontier, parents, levels, want_levels, depth, deg, out,
                   mark, vlo, vhi, res):
    """Top-down over ``frontier`` (sorted) into the destinations ``vlo <= v < vhi`` only.

    New vertices are listed from ``out[vlo]`` on in discovery order and marked
    in the bitmap ``mark``; ``res`` gets (new count, edges scanned, degree sum
    of new). Columns are sorted, so a long column's share is found by binary
    search and the parts of a parallel step together read each edge once.
    """
    whole = vlo == 0 and vhi == parents.shape[0]
    k = vlo
    scanned = 0
    degsum = 0
    nf = frontier.shape[0]
    for i in range(nf):
        if not dcsc and i + _AHEAD < nf:
            prefetch(ind, ptr[frontier[i + _AHEAD]])
        u = frontier[i]
        lo, hi = column_range(ptr, jc, dcsc, u)
        if not whole:
            lo, hi = column_share(ind, lo, hi, vlo, vhi)
        scanned += hi - lo
        for e in range(lo, hi):
            v = ind[e]
            if parents[v] == -1:
                parents[v] = u
                if want_levels:
                    levels[v] = depth
                out[k] = v
                mark[v >> 6] |= np.uint64(1) << np.uint64(v & 63)
                k += 1
                degsum += deg[v]
    res[0] = k - vlo
    res[1] = scanned
    res[2] = degsum


@nb.njit(cache=True, nogil=True, parallel=True)
def _topdown_parts(ptr, ind, jc, dcsc, frontier, parents, levels, want_levels, depth, deg, out,
                   mark, cuts, res):
    for t in nb.prange(cuts.shape[0] - 1):
        _topdown_range(ptr, ind, jc, dcsc, frontier, parents, levels, want_levels, depth, deg,
                       out, mark, cuts[t], cuts[t + 1], res[t])


# A top-down level expecting at least this many edges splits the destinations
# over the threads (a parallel region costs tens of microseconds).
_PAR_TOPDOWN = 1 << 15


@nb.njit(cache=True, nogil=True)
def topdown_step(ptr, ind, jc, dcsc, frontier, parents, levels, want_levels, depth, deg, out,
                 mark, nparts):
    """Expand ``frontier`` (sorted); return (new count, edges scanned, degree sum of new).

    The new vertices are listed in ``out[:count]`` and marked in the bitmap
    ``mark`` (for :func:`sorted_new`). With ``nparts > 1`` the destinations
    are split in ``nparts`` word-aligned ranges searched in parallel: each
    range still takes its frontier in increasing order, so every parent is
    the smallest one as in the serial step, with no atomics.
    """
    n = parents.shape[0]
    if nparts <= 1:
        res = np.zeros(3, np.int64)
        _topdown_range(ptr, ind, jc, dcsc, frontier, parents, levels, want_levels, depth, deg,
                       out, mark, 0, n, res)
        return res[0], res[1], res[2]
    cuts = word_cuts(n, nparts)
    parts = np.zeros((nparts, 3), np.int64)
    _topdown_parts(ptr, ind, jc, dcsc, frontier, parents, levels, want_levels, depth, deg, out,
                   mark, cuts, parts)
    return close_parts(out, cuts, parts)


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


# Reading the new frontier off the bitmap costs a pass over the words its ids
# span; sorting costs k log k. Below this many words per id the pass wins, on
# a Kronecker graph's big levels by orders of magnitude and still on a road
# network's levels of ninety ids (benchmarks page, "Sorted new frontiers").
_WORDS_PER_ID = 64


@nb.njit(cache=True, nogil=True)
def sorted_new(out, k, mark):
    """``out[:k]`` (distinct ids, all marked in ``mark``) in increasing order; clears ``mark``."""
    if k == 0:
        return out[:0].copy()
    wlo = out[0] >> 6
    whi = wlo
    for i in range(1, k):
        w = out[i] >> 6
        if w < wlo:
            wlo = w
        elif w > whi:
            whi = w
    if (whi - wlo + 1) > k * _WORDS_PER_ID:
        res = np.sort(out[:k])
        for i in range(k):
            mark[res[i] >> 6] = 0
        return res
    res = np.empty(k, out.dtype)
    span = mark[wlo:whi + 1]
    ids_from_bits(span, wlo << 6, res, 0)
    span[:] = 0
    return res


@nb.njit(cache=True, nogil=True)
def topdown_levels(ptr, ind, jc, dcsc, frontier, parents, levels, want_levels, depth, deg, buf,
                   mark, nparts, m_u, m_f, alpha, gamma, switch, max_depth, target, st_f, st_new,
                   st_e, st_t):
    """Run consecutive top-down levels without returning to Python.

    High-diameter graphs (a road network has over a thousand levels of a few
    vertices each) would otherwise pay the interpreter once per level. The loop
    stops when the frontier empties, ``max_depth`` (if >= 0) is reached,
    ``target`` (if >= 0) is reached, the stats buffers are full, or - when
    ``switch`` - :func:`spbfs.direction.leave_top_down` says bottom-up. ``m_f``, the degree sum
    of ``frontier``, is the edge count that decides a parallel step.

    Returns (frontier, levels done, depth, m_u, m_f, reason) with reason
    0 = frontier empty or limit reached, 1 = switch to bottom-up, 2 = buffers full.
    """
    nlev = 0
    cur = frontier
    reason = 0
    while cur.shape[0] > 0:
        if max_depth >= 0 and depth >= max_depth:
            break
        if target >= 0 and parents[target] != -1:
            break
        if nlev > 0 and switch and _leave_top_down(m_f, m_u, parents.shape[0], alpha, gamma):
            reason = 1
            break
        if nlev == st_f.shape[0]:
            reason = 2
            break
        t0 = monotonic()
        depth += 1
        k, scanned, degsum = topdown_step(ptr, ind, jc, dcsc, cur, parents, levels, want_levels,
                                          depth, deg, buf, mark,
                                          nparts if m_f >= _PAR_TOPDOWN else 1)
        nxt = sorted_new(buf, k, mark)
        st_f[nlev] = cur.shape[0]
        st_new[nlev] = k
        st_e[nlev] = scanned
        st_t[nlev] = monotonic() - t0
        nlev += 1
        m_u -= degsum
        m_f = degsum
        cur = nxt
    return cur, nlev, depth, m_u, m_f, reason


@nb.njit(cache=True, nogil=True)
def _bottomup_range(ptr, ind, jc, dcsc, front, parents, levels, want_levels, depth, deg,
                    src, cand, first, lo_c, hi_c, found, out):
    """Bottom-up over ``src[lo_c:hi_c]``; survivors (in ``cand``) and finds go from ``lo_c`` on.

    With ``first`` the candidates are all major slots ``lo_c .. hi_c - 1`` and
    ``src`` is not read. ``src`` may be ``cand`` itself: survivors never
    overtake the read position.
    An empty ``deg`` means the degree that counts is the in-degree of the block
    (an undirected graph): it is ``hi - lo``, already in registers, which saves
    a stream over an n-long array.
    """
    sym = deg.shape[0] == 0
    f = lo_c
    r = lo_c
    scanned = 0
    degsum = 0
    for i in range(lo_c, hi_c):
        if first:
            if i + _AHEAD < hi_c:
                prefetch(ind, ptr[i + _AHEAD])
        else:
            # Scattered candidates miss on parents and ptr too: ask for those
            # twice as early, so the adjacency prefetch finds its pointer cached.
            if i + 2 * _AHEAD < hi_c:
                k2 = src[i + 2 * _AHEAD]
                prefetch(ptr, k2)
                prefetch(parents, np.int64(jc[k2]) if dcsc else k2)
            if i + _AHEAD < hi_c:
                prefetch(ind, ptr[src[i + _AHEAD]])
        k = i if first else src[i]
        v = np.int64(jc[k]) if dcsc else k
        if parents[v] != -1:
            continue
        lo = ptr[k]
        hi = ptr[k + 1]
        e = first_member(front, ind, lo, hi)
        if e < hi:
            parents[v] = ind[e]
            if want_levels:
                levels[v] = depth
            found[f] = v
            f += 1
            degsum += (hi - lo) if sym else deg[v]
            scanned += e - lo + 1
        elif hi > lo:  # a vertex without in-edges can never find a parent: drop it
            cand[r] = k
            r += 1
            scanned += hi - lo
    out[0] = f - lo_c
    out[1] = r - lo_c
    out[2] = scanned
    out[3] = degsum


@nb.njit(cache=True, nogil=True, parallel=True)
def _bottomup_chunks(ptr, ind, jc, dcsc, front, parents, levels, want_levels, depth, deg,
                     src, cand, first, ncand, found, nchunks, step, outs):
    for c in nb.prange(nchunks):
        _bottomup_range(ptr, ind, jc, dcsc, front, parents, levels, want_levels, depth, deg,
                        src, cand, first, c * step, min(ncand, c * step + step), found, outs[c])


@nb.njit(cache=True, nogil=True)
def _close_gaps(cand, found, outs, step, nxt):
    """Gather the per-chunk finds into ``nxt`` and compact the survivors in ``cand``."""
    fpos = 0
    rpos = 0
    for c in range(outs.shape[0]):
        lo_c = c * step
        nxt[fpos:fpos + outs[c, 0]] = found[lo_c:lo_c + outs[c, 0]]
        if rpos != lo_c:
            for t in range(outs[c, 1]):
                cand[rpos + t] = cand[lo_c + t]
        fpos += outs[c, 0]
        rpos += outs[c, 1]
    return rpos


@nb.njit(cache=True, nogil=True, parallel=True)
def _gather_chunks(cand, found, outs, step, nxt, cand_out):
    """``_close_gaps`` in parallel: survivors go to ``cand_out`` (no in-place overlap)."""
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
    return rofs[nch]


@nb.njit(cache=True, nogil=True, parallel=True)
def fill_minus1(a, b):
    """``a[:] = b[:] = -1`` in parallel (first touch of fresh result arrays)."""
    for i in nb.prange(a.shape[0]):
        a[i] = -1
    for i in nb.prange(b.shape[0]):
        b[i] = -1


# Below this many ids to move, gathering the chunks runs inline.
_PAR_GATHER = 1 << 16


def bottomup_step(ptr, ind, jc, dcsc, front, parents, levels, want_levels, depth, deg,
                  cand, ncand, found, nchunks, cand_out=None, slots=None):
    """One bottom-up level over a bitmap frontier (uint64 words).

    ``cand[:ncand]`` lists the vertices that may still find a parent (unvisited,
    with in-edges); each is scanned in increasing neighbour order until the
    first frontier neighbour. Survivors are compacted in place to the front of
    ``cand`` and the vertices found are returned as a new array (both sorted;
    ``found`` is scratch), so later levels touch only what is left and the next
    top-down level gets its frontier without an O(n) scan.

    ``ncand < 0`` means "every major slot" (the first bottom-up level), or
    every slot listed in ``slots`` when given: the csr columns that have
    entries. Skipping the empty ones there measured 15% off the first
    bottom-up level of Kronecker scale 20, where 38% of the vertices are isolated
    and the test for them is a branch the CPU cannot predict.

    With ``cand_out`` (as long as ``cand``) a large gather runs in parallel and
    may leave the survivors in ``cand_out`` instead.

    Returns (next frontier, survivors count, edges scanned, degree sum of new,
    the array now holding the survivors).
    """
    first = ncand < 0
    src = cand
    if first and slots is not None:
        first, src, ncand = False, slots, slots.shape[0]
    elif first:
        ncand = jc.shape[0] if dcsc else ptr.shape[0] - 1
    # A parallel region costs tens of microseconds (more on a loaded machine):
    # small candidate sets, common in the long tail of a road network, run inline.
    if ncand < 4096:
        nchunks = 1
    step = max(1, -(-ncand // nchunks))
    outs = np.zeros((nchunks, 4), np.int64)
    if nchunks == 1:
        _bottomup_range(ptr, ind, jc, dcsc, front, parents, levels, want_levels, depth, deg,
                        src, cand, first, 0, ncand, found, outs[0])
    else:
        _bottomup_chunks(ptr, ind, jc, dcsc, front, parents, levels, want_levels, depth, deg,
                         src, cand, first, ncand, found, nchunks, step, outs)
    tot = outs.sum(axis=0)
    nxt = np.empty(int(tot[0]), dtype=found.dtype)
    if nchunks > 1 and cand_out is not None and tot[0] + tot[1] >= _PAR_GATHER:
        rpos = _gather_chunks(cand, found, outs, step, nxt, cand_out)
        cand = cand_out
    else:
        rpos = _close_gaps(cand, found, outs, step, nxt)
    return nxt, int(rpos), int(tot[2]), int(tot[3]), cand


@nb.njit(cache=True, nogil=True)
def _clear_bits(ids, bits, lo, hi):
    for i in range(lo, hi):
        bits[ids[i] >> 6] = 0


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


def set_bits(ids, bits, nparts=1):
    """Set the bits of ``ids`` in a uint64 bitmap (``nparts > 1``: ``ids`` sorted)."""
    if nparts > 1 and ids.shape[0] >= _PAR_BITS:
        _bits_parallel(ids, bits, nparts, False)
    else:
        _set_ids(ids, bits, 0)


def clear_bits(ids, bits, nparts=1):
    """Clear the words holding ``ids``: clearing a frontier costs O(frontier), not O(n)."""
    if nparts > 1 and ids.shape[0] >= _PAR_BITS:
        _bits_parallel(ids, bits, nparts, True)
    else:
        _clear_bits(ids, bits, 0, ids.shape[0])
