"""numba kernels of the 2D BFS: local SpMSV, bottom-up segment search, bitmaps.

All ids here are *local*: rows of the block are padded row-chunk ids, columns
padded column-chunk ids (see :class:`spbfs.mpi.grid.Distribution`). Blocks
come as ``ptr, ind, jc`` like the one-process engine's kernels; the kernels
called from Python take ``dcsc`` last, left out for csr blocks (:func:`formats`).
"""

from __future__ import annotations

import numba as nb
import numpy as np

from semirings._intrinsics import column_range, prefetch
from spbfs.kernels.bfs_numba import close_parts, word_cuts
from spbfs.kernels.bfs_steps import AHEAD as _AHEAD
from spbfs.kernels.bfs_steps import bottomup_scan, topdown_scan
from spbfs.kernels.bitmaps import first_member, ids_and_not, ids_from_bits, set_bits, test_and_set

__all__ = ["ids_and_not", "ids_from_bits", "set_bits"]  # re-exported for the driver


_CSR: dict[str, bool] = {}
_DCSC = {"dcsc": True}


def formats(dcsc: bool) -> dict[str, bool]:
    """The keyword a kernel taking ``dcsc=False`` last is called with for a block.

    A csr block's calls leave it out: numba types an omitted default as a
    compile-time constant and hands it on as one to the kernels below, so csr
    blocks get kernels compiled without the dcsc lookups (the one-process
    engine's :func:`spbfs.kernels.bfs_numba.search_levels` does the same).
    Passed as a bool, it is a value tested at run time.
    """
    return _DCSC if dcsc else _CSR


@nb.njit(cache=True, inline="always")
def global_id(u, col_piece0, b, B64):  # type: ignore[no-untyped-def]
    """Global id of column-chunk local id ``u`` (pieces of ``B64`` padded slots, ``b`` ids)."""
    q = col_piece0
    while u >= B64:  # pr is small: cheaper than a division
        u -= B64
        q += 1
    return q * b + u


@nb.njit(cache=True, inline="always")
def _send_pairs(ind, lo, hi, u, at, out, q):  # type: ignore[no-untyped-def]
    """:func:`topdown_fold`'s claim of column ``u``'s rows ``ind[lo:hi]``: each row not yet
    in ``sent`` is marked and sent as the pair ``(row within its part, global parent)``
    to part ``t``'s region of ``out``; returns (pairs so far, 0)."""
    sent, counts, col_piece0, b, B64 = at
    if hi > lo:
        par = global_id(np.int64(u), col_piece0, b, B64)
        for e in range(np.uint64(lo), np.uint64(hi)):
            v = np.int64(ind[e])
            if test_and_set(sent, v):
                continue
            t = v // B64
            c = counts[np.uint64(t)]
            w = np.uint64(2 * (t * B64 + c))
            out[w] = v - t * B64
            out[w + np.uint64(1)] = par
            counts[np.uint64(t)] = c + 1
            q += 1
    return q, 0


# Without reference counting: see _bu_range.
@nb.njit(cache=True, nogil=True, _nrt=False)
def topdown_fold(ptr, ind, jc, aux, shift, frontier, sent, visited, own, bw, nparts, counts,
                 out, col_piece0, b, B64, dcsc=False):
    """The local top-down step of a grid with ``pc > 1``, in one call.

    Masks ``sent`` with the own piece's ``visited`` rows (part ``own``: never
    send a vertex already reached), then runs the masked SpMSV
    (:func:`spbfs.kernels.bfs_steps.topdown_scan`; ``aux, shift`` is a dcsc
    block's column index): a row reached
    for the first time (its bit in ``sent`` clear) gets the smallest frontier
    column reaching it (columns are visited in increasing order) and the pair
    ``(row within its part, global parent)`` goes straight to part ``t``'s
    region of ``out`` (words ``2 t B64 ..``), in the order found. One pass:
    no parent array to scatter into and gather back, no bitmap scan.

    Returns (pairs, edges scanned, parts other than ``own`` that get pairs);
    ``counts[t]`` gets part ``t``'s pairs.
    """
    w0 = own * bw
    for w in range(bw):
        sent[w0 + w] |= visited[w]
    for t in range(nparts):
        counts[t] = 0
    q, scanned, _ = topdown_scan(ptr, ind, jc, aux, shift, dcsc, frontier, 0, frontier.shape[0],
                                 (sent, counts, col_piece0, b, B64), out, 0, 0, 0, True,
                                 _send_pairs, True, False)
    msgs = 0
    for t in range(nparts):
        if t != own and counts[t] > 0:
            msgs += 1
    return q, scanned, msgs


@nb.njit(cache=True, nogil=True)
def topdown_pairs(ptr, ind, jc, frontier, sent, counts, out, cap, col_piece0, b, B64, i0, e0,
                  own, visited, parents, levels, depth, deg, new, k0, packed, dcsc=False):
    """The local step of the transposed top-down (``B x`` as ``Bᵀ x``, undirected graphs).

    The masked SpMSV of :func:`topdown_fold` over the stored ``B_ijᵀ``: the
    frontier is row-chunk ids (its columns), the children its rows (column-chunk
    ids), pair ``(row within its part, global parent)`` written at pair
    ``t * cap + counts[t]`` of ``out`` for part ``t = row // B64``: two words,
    or with ``packed`` one word ``row << 32 | parent`` (see :func:`pack_fits`).
    ``sent`` (over the column chunk) keeps every child to one pair per search,
    the smallest parent: columns are visited in increasing order.

    Part ``own`` (``-1``: none) is this rank's piece: its children are not
    written as pairs but taken at once, as :func:`topdown_own` takes them
    (``visited`` is the piece's bitmap; a child gets the smallest parent of
    this rank's frontier, appended to ``new`` from ``k0``), so they are not
    written, then read and applied again; pairs from other ranks for them
    are applied later and keep the smaller parent (:func:`apply_pairs`).

    Starts at frontier entry ``i0``, edge ``e0`` (``-1``: the column's first)
    and stops before a pair that would pass a part's ``cap``: the caller grows
    ``out`` and calls again from the returned place. Returns (next frontier
    entry, next edge, edges scanned, the new ``k``, degree sum of the own
    children taken); the entry is ``len(frontier)`` when done.
    """
    scanned = 0
    nf = frontier.shape[0]
    k = k0
    degsum = 0
    olo = own * B64
    ohi = olo + B64 if own >= 0 else olo
    for i in range(i0, nf):
        if not dcsc and i + _AHEAD < nf:
            prefetch(ind, ptr[np.uint64(frontier[np.uint64(i + _AHEAD)])])
        u = frontier[np.uint64(i)]
        lo, hi = column_range(ptr, jc, dcsc, u)
        if i == i0 and e0 >= 0:
            lo = e0
        if hi == lo:
            continue
        par = global_id(np.int64(u), col_piece0, b, B64)
        # Unsigned indices at each load and store: a signed one costs a negative-index
        # fix-up each time.
        for e in range(lo, hi):
            v = np.int64(ind[np.uint64(e)])
            if olo <= v < ohi:
                # topdown_own's claim, written out: through an inlined function returning
                # (k, degree) the search was slower (docs/concepts/design-measurements.md).
                w = np.uint64(v - olo)
                if test_and_set(visited, w):
                    continue
                parents[w] = par
                levels[w] = depth
                degsum += deg[w]
                new[np.uint64(k)] = w
                k += 1
                continue
            uv = np.uint64(v)
            wv = uv >> np.uint64(6)
            bit = np.uint64(1) << (uv & np.uint64(63))
            if sent[wv] & bit:
                continue
            t = v // B64
            c = counts[np.uint64(t)]
            if c == cap:
                return i, e, scanned + e - lo, k, degsum
            sent[wv] |= bit
            if packed:
                out[np.uint64(t * cap + c)] = ((v - t * B64) << 32) | par
            else:
                at = 2 * (t * cap + c)
                out[np.uint64(at)] = v - t * B64
                out[np.uint64(at + 1)] = par
            counts[np.uint64(t)] = c + 1
        scanned += hi - lo
    return nf, -1, scanned, k, degsum


@nb.njit(cache=True, inline="always")
def _take_rows(ind, lo, hi, u, at, new, k):  # type: ignore[no-untyped-def]
    """:func:`topdown_own`'s claim of column ``u``'s rows ``ind[lo:hi]``: each row not yet
    in ``visited`` gets its bit, the global parent ``u``, ``levels = depth`` and is
    appended to ``new[k]``; returns (the next ``k``, degree sum of the new)."""
    visited, parents, levels, depth, deg, col_piece0, b, B64 = at
    degsum = 0
    if hi > lo:
        par = global_id(np.int64(u), col_piece0, b, B64)
        for e in range(np.uint64(lo), np.uint64(hi)):
            v = np.uint64(ind[e])
            if test_and_set(visited, v):
                continue
            parents[v] = par
            levels[v] = depth
            degsum += deg[v]
            new[np.uint64(k)] = v
            k += 1
    return k, degsum


# Without reference counting: see _bu_range.
@nb.njit(cache=True, nogil=True, _nrt=False)
def _topdown_own_range(ptr, ind, jc, aux, shift, dcsc, frontier, visited, parents, levels,
                       depth, deg, col_piece0, b, B64, new, vlo, vhi, res):
    """:func:`topdown_own` for the rows ``vlo <= v < vhi`` only, listed from ``new[vlo]`` on.

    ``res`` gets (count, edges scanned, degree sum of the new).
    """
    whole = vlo == 0 and vhi >= visited.shape[0] * 64
    k, scanned, degsum = topdown_scan(
        ptr, ind, jc, aux, shift, dcsc, frontier, 0, frontier.shape[0],
        (visited, parents, levels, depth, deg, col_piece0, b, B64), new, vlo, vlo, vhi, whole,
        _take_rows, True, True)
    res[0] = k
    res[1] = scanned
    res[2] = degsum


@nb.njit(cache=True, nogil=True, parallel=True)
def _topdown_own_parts(ptr, ind, jc, aux, shift, dcsc, frontier, visited, parents, levels,
                       depth, deg, col_piece0, b, B64, new, cuts, res):
    for t in nb.prange(cuts.shape[0] - 1):
        _topdown_own_range(ptr, ind, jc, aux, shift, dcsc, frontier, visited, parents, levels,
                           depth, deg, col_piece0, b, B64, new, cuts[t], cuts[t + 1], res[t])


@nb.njit(cache=True, nogil=True)
def topdown_own(ptr, ind, jc, aux, shift, frontier, visited, parents, levels, depth, deg,
                col_piece0, b, B64, new, nparts, dcsc=False):
    """Top-down level of a grid with one processor column (the row chunk is the own piece).

    The local SpMSV fused with the update
    (:func:`spbfs.kernels.bfs_steps.topdown_scan`; ``aux, shift`` is a dcsc
    block's column index): a row not yet in ``visited`` gets
    the smallest frontier column reaching it (columns are visited in
    increasing order) as its global parent, ``levels = depth``, its bit, and is
    appended to ``new``. Returns (count, edges scanned, degree sum of the new).

    With ``nparts > 1`` the rows are split in word-aligned ranges searched in
    parallel, as the one-process step does (each range still takes the
    frontier in order, so the parents stay the smallest).
    """
    nrow = visited.shape[0] * 64
    if nparts <= 1:
        res = np.zeros(3, np.int64)
        _topdown_own_range(ptr, ind, jc, aux, shift, dcsc, frontier, visited, parents, levels,
                           depth, deg, col_piece0, b, B64, new, 0, nrow, res)
        return res[0], res[1], res[2]
    cuts = word_cuts(nrow, nparts)
    parts = np.zeros((nparts, 3), np.int64)
    _topdown_own_parts(ptr, ind, jc, aux, shift, dcsc, frontier, visited, parents, levels, depth,
                       deg, col_piece0, b, B64, new, cuts, parts)
    return close_parts(new, cuts, parts)


@nb.njit(cache=True, nogil=True)
def apply_pairs(pairs, parents, levels, depth, visited, new, k0, deg, packed):
    """Take ``(local id, parent)`` pairs for this rank's piece.

    A vertex not yet visited gets the parent and ``depth`` and is appended to
    ``new`` (from ``k0``); a vertex reached earlier in this level keeps the
    smaller parent. ``packed``: a pair is one word (``local id << 32 |
    parent``, :func:`pack_fits`), else two. Returns (the new ``k``, degree sum
    of the appended).
    """
    k = k0
    degsum = 0
    one = np.uint64(1)
    low = np.int64(0xFFFFFFFF)
    for x in range(pairs.shape[0] if packed else pairs.shape[0] // 2):
        if packed:
            word = pairs[x]
            v = word >> 32
            par = word & low
        else:
            v = pairs[2 * x]
            par = pairs[2 * x + 1]
        if parents[v] == -1:
            parents[v] = par
            levels[v] = depth
            visited[v >> 6] |= one << np.uint64(v & 63)
            new[k] = v
            k += 1
            degsum += deg[v]
        elif levels[v] == depth and par < parents[v]:
            parents[v] = par
    return k, degsum


@nb.njit(cache=True, nogil=True)
def partner_level(finds, as_bits, sent, pairs, npairs, packed, deg):
    """The partner's side of a top-down level on a 2 x 1 grid, counted here.

    ``sent`` is the partner's part of the "already sent" bitmap: the vertices
    the partner had reached before the level and the children this rank sent
    it as ``pairs`` (``npairs`` of them, one word each with ``packed``, else
    two; partner-local ids). ``finds`` are the children the partner took from
    its own frontier (partner-local ids, or with ``as_bits`` their bitmap's
    words as int64). Every pair is new to the partner unless it found that
    child itself, so its new frontier is ``finds`` and the pairs together;
    ``finds`` are marked in ``sent``. ``deg`` is the partner's degrees.
    Returns (pairs the partner found itself, degree sum of the pairs not).
    """
    degsum = 0
    for x in range(npairs):
        v = pairs[x] >> 32 if packed else pairs[2 * x]
        degsum += deg[v]
    dup = 0
    one = np.uint64(1)
    if as_bits:
        for wi in range(finds.shape[0]):
            f = np.uint64(finds[wi])
            if f == 0:
                continue
            both = f & sent[wi]
            if both:
                for b in range(64):
                    if (both >> np.uint64(b)) & one:
                        dup += 1
                        degsum -= deg[64 * wi + b]
            sent[wi] |= f
    else:
        for x in range(finds.shape[0]):
            v = np.int64(finds[x])
            m = one << np.uint64(v & 63)
            if sent[v >> 6] & m:
                dup += 1
                degsum -= deg[v]
            else:
                sent[v >> 6] |= m
    return dup, degsum


def pack_fits(n: int, B64: int) -> bool:
    """Whether a pair ``(piece-local id, global parent)`` fits one int64 word.

    The word is ``local << 32 | parent``: parents below ``2**32`` (``n``
    vertices) and local ids below ``2**31`` (a padded piece of ``B64``), so
    the word stays non-negative like a plain id.
    """
    return n <= 2**32 and B64 <= 2**31


@nb.njit(cache=True, inline="always")
def _not_done(comp, v):  # type: ignore[no-untyped-def]
    """A row is open while its bit in ``comp`` is clear (not visited, not found this level)."""
    return not (comp[v >> np.uint64(6)] >> (v & np.uint64(63))) & np.uint64(1), 0


@nb.njit(cache=True, inline="always")
def _bu_find(at, v, u, f, key):  # type: ignore[no-untyped-def]
    """A bottom-up find of row ``v`` from column-chunk ``u``: its row to ``out_rows[f]``,
    its global parent to the own piece's arrays (``own``) or to ``out_par[f]``;
    returns the degree it adds (own finds only)."""
    out_rows, out_par, own, parents, levels, depth, deg, col_piece0, b, B64 = at
    par = global_id(np.int64(u), col_piece0, b, B64)
    out_rows[np.uint64(f)] = v
    if own:
        parents[v] = par
        levels[v] = depth
        return np.int64(deg[v])
    out_par[np.uint64(f)] = par
    return np.int64(0)


# Without reference counting (_nrt=False), as the one-process kernels: the tuple of
# arrays handed to the shared step is unpacked at each find, an incref and a decref per
# array, and the local bottom-up of a 1 x 1 grid at Kronecker scale 16 took 1.6x the
# CPU time with them (30.6 ms against 19.3 ms for 24 searches).
@nb.njit(cache=True, nogil=True, _nrt=False)
def _bu_range(ptr, ind, jc, dcsc, lo_slot, row_base, front, comp, src, cand, first, lo_c,
              hi_c, own, parents, levels, depth, deg, out_rows, out_par, f0, col_piece0, b, B64,
              res):
    """Bottom-up over the candidates ``src[lo_c:hi_c]`` of one segment (see bottomup_search).

    :func:`spbfs.kernels.bfs_steps.bottomup_scan` over the ``comp`` bitmap,
    with the rank's id map. Finds are written from ``f0`` on, survivors to
    ``cand`` from ``lo_c`` on. ``res`` gets (finds, survivors, edges scanned,
    degree sum of the finds).
    """
    bottomup_scan(ptr, ind, jc, dcsc, front, first_member, src, cand, first, lo_slot, row_base,
                  lo_c, hi_c, f0, comp, _not_done, _bu_find,
                  (out_rows, out_par, own, parents, levels, depth, deg, col_piece0, b, B64),
                  False, res)


@nb.njit(cache=True, nogil=True, parallel=True)
def _bu_chunks(ptr, ind, jc, lo_slot, row_base, front, comp, src, cand, first, ncand, step,
               own, parents, levels, depth, deg, out_rows, out_par, k0, col_piece0, b, B64, res,
               dcsc=False):
    for c in nb.prange(res.shape[0]):
        lo_c = c * step
        hi_c = min(ncand, lo_c + step)
        if lo_c < hi_c:
            _bu_range(ptr, ind, jc, dcsc, lo_slot, row_base, front, comp, src, cand, first, lo_c,
                      hi_c, own, parents, levels, depth, deg, out_rows, out_par, k0 + lo_c,
                      col_piece0, b, B64, res[c])


@nb.njit(cache=True, nogil=True)
def _bu_close(out_rows, out_par, k0, cand, res, step, own, comp, visited, new, nk0, pairs):
    """Compact the chunks' finds and survivors; mark the finds in ``comp``.

    Own-segment finds also go to ``visited`` and to ``new`` from ``nk0``; the
    others go to ``pairs`` as interleaved ``(row, parent)`` from pair ``k0``,
    ready to send (no packing pass).
    Returns (k, survivors, edges scanned, degree sum, new nk).
    """
    one = np.uint64(1)
    k = k0
    r = 0
    scanned = 0
    degsum = 0
    nk = nk0
    for c in range(res.shape[0]):
        lo_c = c * step
        src = k0 + lo_c
        nf = res[c, 0]
        for x in range(nf):
            v = out_rows[src + x]
            bit = one << np.uint64(v & 63)
            comp[v >> 6] |= bit
            if own:
                visited[v >> 6] |= bit
                new[nk] = v
                nk += 1
            else:
                pairs[2 * (k + x)] = v
                pairs[2 * (k + x) + 1] = out_par[src + x]
        if not own:
            k += nf
        if r != lo_c:
            for x in range(res[c, 1]):
                cand[r + x] = cand[lo_c + x]
        r += res[c, 1]
        scanned += res[c, 2]
        degsum += res[c, 3]
    return k, r, scanned, degsum, nk


@nb.njit(cache=True, nogil=True)
def _bu_serial(ptr, ind, jc, lo_slot, row_base, front, comp, src, cand, first, ncand, own,
               parents, levels, depth, deg, out_rows, out_par, k0, col_piece0, b, B64, visited,
               new, nk, pairs, dcsc=False):
    """:func:`bottomup_search` in one chunk: the range search and the close in one call."""
    res = np.zeros((1, 4), np.int64)
    if ncand:
        _bu_range(ptr, ind, jc, dcsc, lo_slot, row_base, front, comp, src, cand, first, 0, ncand,
                  own, parents, levels, depth, deg, out_rows, out_par, k0, col_piece0, b, B64,
                  res[0])
    return _bu_close(out_rows, out_par, k0, cand, res, ncand, own, comp, visited, new, nk,
                     pairs)


def bottomup_search(ptr, ind, jc, dcsc, lo_slot, hi_slot, row_base, front, comp, cand, ncand,
                    own, parents, levels, depth, deg, visited, new, nk, out_rows, out_par, k0,
                    col_piece0, b, B64, nchunks, pairs):
    """Search parents for the rows of one segment not yet marked in ``comp``.

    The segment is the rows ``row_base .. row_base + B64`` of the block, i.e.
    the column slots ``lo_slot .. hi_slot`` of the transposed block (column
    ids for csr, positions in ``jc`` for dcsc). ``cand[:ncand]`` lists the
    slots that may still find a parent (sorted; ``ncand < 0``: all slots, the
    first bottom-up level of a dcsc search, whose slots all have entries; csr
    lists them with :func:`ids_and_not`); rows marked in ``comp`` and rows
    without entries are dropped from it, rows that find no parent stay.
    In-neighbours are scanned in increasing order up to the first one whose bit
    is set in the column-chunk frontier ``front``, so the parent is the
    smallest (column-chunk local ``u`` is global ``(col_piece0 + u // B64) *
    b + u % B64``). Finds are marked in ``comp``.

    ``own`` (the rank's own piece): finds get ``parents``, ``levels = depth``
    and their ``visited`` bit here and are appended to ``new`` from ``nk``.
    Otherwise they go to ``pairs`` as ``(segment-local row, global parent)``
    from pair ``k0`` (``out_rows`` and ``out_par`` are the chunks' scratch). The
    work runs in ``nchunks`` parallel chunks of the candidate list; finds stay in
    increasing row order.

    Returns (new k, survivors, edges scanned, degree sum of own finds, new nk).
    """
    first = ncand < 0
    src = cand
    if first:
        ncand = hi_slot - lo_slot
    # A parallel region costs tens of microseconds (more on a loaded machine).
    if nchunks <= 1 or ncand < 4096:
        nchunks = 1
    fmt = formats(dcsc)
    if nchunks == 1:
        return _bu_serial(ptr, ind, jc, lo_slot, row_base, front, comp, src, cand, first, ncand,
                          own, parents, levels, depth, deg, out_rows, out_par, k0, col_piece0, b,
                          B64, visited, new, nk, pairs, **fmt)
    step = max(1, -(-ncand // nchunks))
    res = np.zeros((nchunks, 4), np.int64)
    _bu_chunks(ptr, ind, jc, lo_slot, row_base, front, comp, src, cand, first, ncand, step, own,
               parents, levels, depth, deg, out_rows, out_par, k0, col_piece0, b, B64, res, **fmt)
    return _bu_close(out_rows, out_par, k0, cand, res, step, own, comp, visited, new, nk, pairs)


@nb.njit(cache=True, inline="always")
def check_tuple(v, u, kv, ku, directed, row_par, col_par, row_glob0, col_glob0, b, B64,
                row_conf, col_conf):  # type: ignore[no-untyped-def]
    """Rule 3/4 and the tree-edge confirmation of one tuple ``u -> v``; whether it is bad.

    ``kv``, ``ku`` are the level keys of local row ``v`` and column ``u``
    (unreached: a huge key). Levels may differ by at most one (directed:
    ``kv <= ku + 1``). ``parent[v] == u`` with ``kv == ku + 1`` confirms the
    tree edge in ``row_conf[v]``; undirected, the mirror confirms ``col_conf[u]``.
    Global ids of local ids are ``(glob0 + l // B64) * b + l % B64``.
    """
    d = kv - ku
    bad = d > 1 if directed else (d > 1 or d < -1)
    if d == 1:
        if row_par[v] == (col_glob0 + u // B64) * b + u % B64:
            row_conf[v] = True
    elif d == -1 and not directed:
        if col_par[u] == (row_glob0 + v // B64) * b + v % B64:
            col_conf[u] = True
    return bad


@nb.njit(cache=True, nogil=True)
def check_tuples(rows, cols, directed, row_key, col_key, row_par, col_par, row_glob0,
                 col_glob0, b, B64, unreached, row_conf, col_conf):
    """The edge pass of the Graph500 validation over this rank's input tuples.

    Tuple ``x`` is the arc ``u -> v`` with ``v = rows[x]`` (local row) and
    ``u = cols[x]`` (local column), checked by :func:`check_tuple`; tuples
    whose tail is reached are counted.

    Returns (first bad tuple or -1, bad count, component edges).
    """
    bad_first = -1
    nbad = 0
    comp = 0
    for x in range(rows.shape[0]):
        v = rows[x]
        u = cols[x]
        ku = col_key[u]
        if check_tuple(v, u, row_key[v], ku, directed, row_par, col_par, row_glob0, col_glob0,
                       b, B64, row_conf, col_conf):
            if bad_first < 0:
                bad_first = x
            nbad += 1
        if ku != unreached:
            comp += 1
    return bad_first, nbad, comp


@nb.njit(cache=True, nogil=True)
def sort_pairs(pairs, bits, par, children, parents):  # type: ignore[no-untyped-def]
    """Interleaved ``(child, parent)`` pairs sorted by child, one per child (smallest parent).

    A counting sort through a bitmap: children are piece-local ids below
    ``len(par)``, so marking them in ``bits`` (all clear on entry, clear again
    on return) and reading the marked ones back is O(pairs + span/64), where
    an argsort cost O(pairs log pairs) per message. Returns the count written
    to ``children`` and ``parents``.
    """
    one = np.uint64(1)
    lo = bits.shape[0]
    hi = -1
    for x in range(pairs.shape[0] // 2):
        v = pairs[2 * x]
        p = pairs[2 * x + 1]
        w = v >> 6
        b = one << np.uint64(v & 63)
        if bits[w] & b:
            if p < par[v]:
                par[v] = p
        else:
            bits[w] |= b
            par[v] = p
            lo = min(lo, w)
            hi = max(hi, w)
    if hi < 0:
        return 0
    k = ids_from_bits(bits[lo:hi + 1], lo * 64, children, 0)
    for x in range(k):
        parents[x] = par[children[x]]
    bits[lo:hi + 1] = 0
    return k
