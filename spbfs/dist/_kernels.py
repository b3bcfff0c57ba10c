"""numba kernels of the 2D BFS: local SpMSV, bottom-up segment search, bitmaps.

All ids here are *local*: rows of the block are padded row-chunk ids, columns
padded column-chunk ids (see :class:`spbfs.dist.grid.Distribution`). Blocks
come as ``(ptr, ind, jc, dcsc)`` like the one-process engine's kernels.
"""

from __future__ import annotations

import numba as nb
import numpy as np

from semirings._intrinsics import prefetch

_AHEAD = 16
_ALL = np.uint64(0xFFFFFFFFFFFFFFFF)
# Lowest-set-bit position by a de Bruijn multiply: (x & -x) * C >> 58 is unique per bit.
_DEBRUIJN = np.uint64(0x022FDD63CC95386D)
_DEBRUIJN_POS = np.zeros(64, np.int64)
for _b in range(64):
    _DEBRUIJN_POS[((1 << _b) * 0x022FDD63CC95386D % 2**64) >> 58] = _b


@nb.njit(cache=True, nogil=True)
def topdown_local(ptr, ind, jc, dcsc, frontier, sent, out_rows, out_par):
    """Local ``t = B_ij ⊕.⊗ f`` over ``min_second``, masked by ``sent``.

    ``frontier`` holds sorted local column ids; a row reached for the first
    time (its bit in ``sent`` clear) gets the smallest frontier column reaching
    it, because columns are visited in increasing order. Rows are written to
    ``out_rows`` with their parent column in ``out_par``.

    Returns (candidates, edges scanned).
    """
    k = 0
    scanned = 0
    nzc = jc.shape[0]
    nf = frontier.shape[0]
    one = np.uint64(1)
    for i in range(nf):
        if not dcsc and i + _AHEAD < nf:
            prefetch(ind, ptr[frontier[i + _AHEAD]])
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
            v = np.int64(ind[e])
            w = v >> 6
            bit = one << np.uint64(v & 63)
            if sent[w] & bit:
                continue
            sent[w] |= bit
            out_rows[k] = v
            out_par[k] = u
            k += 1
    return k, scanned


@nb.njit(cache=True, nogil=True)
def bucket_pairs(rows, pars, k, B64, nparts, counts, out):
    """Group ``(rows[:k] % B64, pars[:k])`` by ``rows // B64`` into interleaved pairs.

    ``counts`` (length ``nparts``) receives the pairs per part; ``out`` (length
    ``2 k``) the pairs, part by part.
    """
    for t in range(nparts):
        counts[t] = 0
    for x in range(k):
        counts[rows[x] // B64] += 1
    pos = np.empty(nparts, np.int64)
    acc = 0
    for t in range(nparts):
        pos[t] = acc
        acc += counts[t]
    for x in range(k):
        r = rows[x]
        t = r // B64
        q = pos[t]
        out[2 * q] = r - t * B64
        out[2 * q + 1] = pars[x]
        pos[t] = q + 1


@nb.njit(cache=True, nogil=True)
def apply_pairs(pairs, parents, levels, depth, visited, new, k0):
    """Take ``(local id, parent)`` pairs for this rank's piece.

    A vertex not yet visited gets the parent and ``depth`` and is appended to
    ``new`` (from ``k0``); a vertex reached earlier in this level keeps the
    smaller parent. Returns the new ``k``.
    """
    k = k0
    one = np.uint64(1)
    for x in range(pairs.shape[0] // 2):
        v = pairs[2 * x]
        par = pairs[2 * x + 1]
        if parents[v] == -1:
            parents[v] = par
            levels[v] = depth
            visited[v >> 6] |= one << np.uint64(v & 63)
            new[k] = v
            k += 1
        elif levels[v] == depth and par < parents[v]:
            parents[v] = par
    return k


@nb.njit(cache=True, nogil=True)
def bottomup_segment(ptr, ind, jc, dcsc, lo_slot, hi_slot, row_base, w_lo, w_hi, front, comp,
                     skip, out_rows, out_par, k0, col_piece0, b, B64):
    """Search parents for the rows of one segment not yet marked in ``comp``.

    The segment is the rows ``row_base .. row_base + 64 * len(comp)`` of the
    block, i.e. columns of the transposed block; only its words ``w_lo ..
    w_hi`` of ``comp`` are searched, whose column slots are ``lo_slot ..
    hi_slot`` (column ids for csr, positions in ``jc`` for dcsc). Rows set in
    ``skip`` (this block's empty rows, csr only) are not looked at.
    In-neighbours are scanned in increasing order up to the first one whose bit
    is set in the column-chunk frontier ``front``. A row that finds a parent is
    marked in ``comp`` and written to ``out_rows`` (segment-local id) with its
    parent's *global* id in ``out_par`` (column-chunk local ``u`` is global
    ``(col_piece0 + u // B64) * b + u % B64``), from ``k0`` on.

    Returns (new k, edges scanned).
    """
    k = k0
    scanned = 0
    one = np.uint64(1)
    if dcsc:
        for p in range(lo_slot, hi_slot):
            v = np.int64(jc[p]) - row_base
            w = v >> 6
            bit = one << np.uint64(v & 63)
            if comp[w] & bit:
                continue
            lo = ptr[p]
            hi = ptr[p + 1]
            if p + 4 < hi_slot:
                prefetch(ind, ptr[p + 4])
            e = lo
            while e < hi:
                u = ind[e]
                if (front[u >> 6] >> np.uint64(u & 63)) & one:
                    break
                e += 1
            if e < hi:
                comp[w] |= bit
                u = np.int64(ind[e])
                out_rows[k] = v
                out_par[k] = (col_piece0 + u // B64) * b + u % B64
                k += 1
                scanned += e - lo + 1
            else:
                scanned += hi - lo
        return k, scanned
    sw = row_base >> 6
    for w in range(w_lo, w_hi):
        word = comp[w] | skip[sw + w]
        if word == _ALL:
            continue
        found = np.uint64(0)
        for bb in range(64):
            bit = one << np.uint64(bb)
            if word & bit:
                continue
            v = w * 64 + bb
            c = row_base + v
            lo = ptr[c]
            hi = ptr[c + 1]
            if hi <= lo:
                continue
            e = lo
            while e < hi:
                u = ind[e]
                if (front[u >> 6] >> np.uint64(u & 63)) & one:
                    break
                e += 1
            if e < hi:
                found |= bit
                u = np.int64(ind[e])
                out_rows[k] = v
                out_par[k] = (col_piece0 + u // B64) * b + u % B64
                k += 1
                scanned += e - lo + 1
            else:
                scanned += hi - lo
        comp[w] |= found
    return k, scanned


@nb.njit(cache=True, nogil=True, parallel=True)
def _bottomup_chunks(ptr, ind, jc, dcsc, slot_b, row_base, word_b, front, comp, skip, out_rows,
                     out_par, k0, col_piece0, b, B64, res):
    for c in nb.prange(word_b.shape[0] - 1):
        k, sc = bottomup_segment(ptr, ind, jc, dcsc, slot_b[c], slot_b[c + 1], row_base,
                                 word_b[c], word_b[c + 1], front, comp, skip, out_rows, out_par,
                                 k0 + 64 * word_b[c], col_piece0, b, B64)
        res[c, 0] = k - (k0 + 64 * word_b[c])
        res[c, 1] = sc


@nb.njit(cache=True, nogil=True)
def _compact(out_rows, out_par, k0, word_b, res):
    k = k0
    for c in range(word_b.shape[0] - 1):
        src = k0 + 64 * word_b[c]
        for x in range(res[c, 0]):
            out_rows[k + x] = out_rows[src + x]
            out_par[k + x] = out_par[src + x]
        k += res[c, 0]
    return k


def bottomup_search(ptr, ind, jc, dcsc, lo_slot, hi_slot, row_base, front, comp, skip,
                    out_rows, out_par, k0, col_piece0, b, B64, nchunks):
    """:func:`bottomup_segment` over the whole segment, in ``nchunks`` parallel chunks.

    Chunks are whole words of ``comp``, so no two threads touch one word; each
    writes its finds at ``k0 + 64 * first word`` and the pieces are compacted.
    Returns (new k, edges scanned); finds stay in increasing row order.
    """
    nw = comp.shape[0]
    if nchunks <= 1 or nw < 2048:  # a parallel region costs more than small segments
        return bottomup_segment(ptr, ind, jc, dcsc, lo_slot, hi_slot, row_base, 0, nw, front,
                                comp, skip, out_rows, out_par, k0, col_piece0, b, B64)
    word_b = np.linspace(0, nw, nchunks + 1).astype(np.int64)
    if dcsc:
        slot_b = lo_slot + np.searchsorted(jc[lo_slot:hi_slot], row_base + 64 * word_b)
        slot_b = slot_b.astype(np.int64)
    else:
        slot_b = np.zeros(nchunks + 1, np.int64)
    res = np.zeros((nchunks, 2), np.int64)
    _bottomup_chunks(ptr, ind, jc, dcsc, slot_b, row_base, word_b, front, comp, skip, out_rows,
                     out_par, k0, col_piece0, b, B64, res)
    k = _compact(out_rows, out_par, k0, word_b, res)
    return k, int(res[:, 1].sum())


@nb.njit(cache=True, nogil=True)
def apply_found(rows, pars, lo, hi, parents, levels, depth, visited, new, k0):
    """Record finds ``rows[lo:hi]`` (piece-local, each new) with global parents ``pars``."""
    k = k0
    one = np.uint64(1)
    for x in range(lo, hi):
        v = rows[x]
        parents[v] = pars[x]
        levels[v] = depth
        visited[v >> 6] |= one << np.uint64(v & 63)
        new[k] = v
        k += 1
    return k


@nb.njit(cache=True, nogil=True)
def pack_pairs(rows, pars, lo, hi, out, pos):
    """Interleave ``(rows[x], pars[x])`` for ``x in lo .. hi`` into ``out`` from ``pos``."""
    for x in range(lo, hi):
        out[pos] = rows[x]
        out[pos + 1] = pars[x]
        pos += 2
    return pos


@nb.njit(cache=True, nogil=True)
def global_ids(local, k, piece0, b, B64, out):
    """``out[:k]`` = global ids of chunk-local ids ``local[:k]`` (chunk starts at piece0)."""
    for x in range(k):
        u = local[x]
        out[x] = (piece0 + u // B64) * b + u % B64


@nb.njit(cache=True, nogil=True)
def sorted_ids(ids, k, bits):
    """``ids[:k]`` (distinct, < 64 * len(bits)) sorted in place through a zeroed bitmap."""
    one = np.uint64(1)
    for x in range(k):
        u = ids[x]
        bits[u >> 6] |= one << np.uint64(u & 63)
    n = ids_from_bits(bits, 0, ids, 0)
    for w in range(bits.shape[0]):
        bits[w] = 0
    return n


@nb.njit(cache=True, nogil=True)
def set_bits(ids, bits, offset):
    """Set bits ``ids + offset`` of a uint64 bitmap."""
    one = np.uint64(1)
    for x in range(ids.shape[0]):
        u = ids[x] + offset
        bits[u >> 6] |= one << np.uint64(u & 63)


@nb.njit(cache=True, nogil=True)
def ids_from_bits(bits, offset, out, k0):
    """Append ``offset + position`` of every set bit (increasing) to ``out`` from ``k0``."""
    k = k0
    zero = np.uint64(0)
    for w in range(bits.shape[0]):
        word = bits[w]
        while word:
            low = word & (zero - word)
            out[k] = offset + w * 64 + _DEBRUIJN_POS[(low * _DEBRUIJN) >> np.uint64(58)]
            k += 1
            word ^= low
    return k


@nb.njit(cache=True, nogil=True)
def count_bits(bits):
    """Number of set bits."""
    c = 0
    for w in range(bits.shape[0]):
        x = bits[w]
        while x:
            x &= x - np.uint64(1)
            c += 1
    return c


@nb.njit(cache=True, nogil=True)
def degree_sum(ids, deg):
    """``deg[ids].sum()`` without a temporary."""
    s = 0
    for x in range(ids.shape[0]):
        s += deg[ids[x]]
    return s


@nb.njit(cache=True, nogil=True)
def check_tuples(rows, cols, directed, row_key, col_key, row_par, col_par, row_glob0,
                 col_glob0, b, B64, unreached, row_conf, col_conf):
    """The edge pass of the Graph500 validation over this rank's input tuples.

    Tuple ``x`` is the arc ``u -> v`` with ``v = rows[x]`` (local row) and
    ``u = cols[x]`` (local column). Checks rule 3/4 (level keys differ by at
    most one, directed: ``key[v] <= key[u] + 1``), counts the tuples whose
    tail is reached, and confirms tree edges: ``parent[v] == u`` with
    ``key[v] == key[u] + 1`` marks ``row_conf[v]``; undirected, the mirror
    marks ``col_conf[u]``. Global ids of local ids are ``(glob0 + l // B64) * b
    + l % B64``.

    Returns (first bad tuple or -1, bad count, component edges).
    """
    bad_first = -1
    nbad = 0
    comp = 0
    for x in range(rows.shape[0]):
        v = rows[x]
        u = cols[x]
        kv = row_key[v]
        ku = col_key[u]
        d = kv - ku
        if directed:
            bad = d > 1
        else:
            bad = d > 1 or d < -1
        if bad:
            if bad_first < 0:
                bad_first = x
            nbad += 1
        if ku != unreached:
            comp += 1
        if d == 1:
            gu = (col_glob0 + u // B64) * b + u % B64
            if row_par[v] == gu:
                row_conf[v] = True
        elif d == -1 and not directed:
            gv = (row_glob0 + v // B64) * b + v % B64
            if col_par[u] == gv:
                col_conf[u] = True
    return bad_first, nbad, comp
