"""The Graph500 validation of a distributed search, run distributed.

Each block owner keeps the input tuples routed to it (``u -> v`` lives with
``B[v, u]``: ``v`` in its row chunk, ``u`` in its column chunk), as counts on
its block's entries plus the self-loops, and checks them there. Validation
gathers levels and parents over the rank's row chunk (Allgatherv along the
processor row) and column chunk (transpose + Allgatherv down the column),
checks rules 3 and 4 on every tuple, counts the tuples inside the component,
and confirms tree edges; confirmations are OR-reduced back to the owners,
which check that every reached vertex has a confirmed tree edge (rule 5).
Rules 1 and 2 follow: a confirmed tree edge joins levels ``l - 1`` and ``l``,
so every parent chain descends to level 0, which only the source holds.

That pass, with a few checks of each piece on its own, only tells *whether*
the result is valid. When it is not, a second, slower pass tells *why*, with
the checks of :func:`spbfs.validate.validate_bfs_tree` in its order and with its
messages: the parents' parents and levels are fetched from their owners (an
all-to-all), cycles are found by the same pointer jumping, distributed, and
each check raises on every rank with the lowest failing rank's vertex, which
is the serial validator's (pieces are in vertex order), and the global count.
Only the edge rules 3 and 4 may name another offending edge than the serial
validator: it reports the first in the edge list, which no rank knows here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from spbfs.mpi import _construct as B
from spbfs.mpi import _kernels as K
from spbfs.mpi import comm as C
from spbfs.validate import ValidationError, _fail, _levels_fail

__all__ = ["column_chunk_of_piece", "row_chunk_of_piece", "validate_distributed"]


def _padded(graph: Any, a: np.ndarray, fill: int = -1) -> np.ndarray:
    out = np.full(graph.dist.B64, fill, dtype=np.int64)
    out[:a.shape[0]] = a
    return out


def row_chunk_of_piece(graph: Any, piece: np.ndarray) -> np.ndarray:
    """Allgatherv of padded pieces along the processor row: the row chunk (local ids)."""
    g = graph.grid
    return C.allgatherv(g.row_comm, piece, np.full(g.pc, piece.shape[0], dtype=np.int64))


def column_chunk_of_piece(graph: Any, piece: np.ndarray) -> np.ndarray:
    """Transpose + Allgatherv down the processor column: the column chunk (local ids)."""
    g = graph.grid
    held = piece
    if g.transpose_dest != g.rank:
        held = np.empty_like(piece)
        C.sendrecv(g.comm, piece, g.transpose_dest, held, g.transpose_src, tag=21)
    return C.allgatherv(g.col_comm, held, np.full(g.pr, held.shape[0], dtype=np.int64))


def _or_to_owner(graph: Any, conf: np.ndarray, along_rows: bool) -> np.ndarray:
    """OR-reduce a chunk's confirmation flags and return this rank's piece of them."""
    g = graph.grid
    B = graph.dist.B64
    comm = g.row_comm if along_rows else g.col_comm
    flags = conf.astype(np.uint8)
    mine = np.empty(B, dtype=np.uint8)
    if comm.Get_size() == 1:
        mine[:] = flags
    else:
        MPI = C.mpi()
        C.policy().wait(comm.Ireduce_scatter_block(flags, mine, op=MPI.BOR),
                        flags.nbytes >= C.BULK_BYTES)
    if along_rows or g.transpose_dest == g.rank:
        return mine.astype(bool)
    back = np.empty_like(mine)
    C.sendrecv(g.comm, mine, g.transpose_src, back, g.transpose_dest, tag=22)
    return back.astype(bool)


Build = Callable[[int], ValidationError]


def _raise_first(comm: Any, checks: list[tuple[int, Build | None]]) -> np.ndarray:
    """Raise on every rank the error of the first failing check (collective).

    ``checks`` are this rank's ``(count, build)`` pairs, in the order the serial
    validator makes them; one Allreduce tallies them over the ranks. The first
    check whose count is not 0 on some rank fails: the lowest such rank (the
    one holding the smallest offending vertex) calls ``build(total)``, with
    ``total`` the count over all ranks, and broadcasts the error's text, rule
    and example, so every rank raises the same. A check with ``build`` None only
    counts. Returns the totals per check when nothing was raised.
    """
    size, rank = comm.Get_size(), comm.Get_rank()
    table = np.zeros((size, len(checks)), dtype=np.int64)
    table[rank] = [count for count, _ in checks]
    table = C.allreduce(comm, table)
    for k, (_, build) in enumerate(checks):
        if build is None or not table[:, k].any():
            continue
        first = int(np.flatnonzero(table[:, k])[0])
        payload = None
        if rank == first:
            exc = build(int(table[:, k].sum()))
            payload = (str(exc), exc.rule, exc.example)
        text, rule, example = C.bcast_obj(comm, payload, root=first)
        raise ValidationError(text, rule=rule, example=example)
    return table.sum(axis=0)


def _fetch(graph: Any, lo: int, ids: np.ndarray, arrays: list[np.ndarray]) -> list[np.ndarray]:
    """``a[x]`` for every global id ``x`` in ``ids`` and every piece array ``a`` (collective).

    Each rank asks the owners of its ``ids`` (ids in ``[0, n)``) and answers
    the questions about its piece (global ids ``lo ..``) from ``arrays`` as they
    are when called: two all-to-alls, answers in the order asked.
    """
    comm = graph.grid.comm
    owner = np.asarray(graph.dist.piece_of(ids), dtype=np.int64)
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=comm.Get_size()).astype(np.int64)
    asked, asked_counts = C.alltoallv(comm, ids[order], counts)
    width = len(arrays)
    answer = np.empty((asked.shape[0], width), dtype=np.int64)
    for k, a in enumerate(arrays):
        answer[:, k] = a[asked - lo]
    back, _ = C.alltoallv(comm, answer.reshape(-1), asked_counts * width)
    out = np.empty((ids.shape[0], width), dtype=np.int64)
    out[order] = back.reshape(-1, width)
    return [out[:, k] for k in range(width)]


def _value_at(graph: Any, lo: int, a: np.ndarray, v: int) -> int:
    """``a[v]`` of the piece array ``a`` at global id ``v``, on every rank (collective)."""
    # One Allreduce: the owner gives the value, everyone else the smallest int64.
    mine = a[v - lo] if lo <= v < lo + a.shape[0] else np.iinfo(np.int64).min
    return int(C.allreduce(graph.grid.comm, np.array([mine], dtype=np.int64), "max")[0])


def validate_distributed(graph: Any, result: Any) -> dict[str, Any]:
    """Graph500 checks of ``result`` on ``graph`` (collective); see the module docstring.

    Parameters
    ----------
    graph : DistGraph
        The graph searched.
    result : DistBFSResult
        Its search: this rank's piece of ``parents`` and ``levels``.

    Returns
    -------
    dict
        ``reached``, ``max_level``, ``component_edges``, ``directed``.

    Raises
    ------
    ValidationError
        On every rank alike, with the rule number (``.rule``, or ``"levels"``), the
        message and the example that :func:`spbfs.validate.validate_bfs_tree`
        gives for the same full arrays (rules 3 and 4: possibly another edge).
    ValueError
        On every rank, when a piece does not fit the graph's distribution.
    """
    g, d = graph.grid, graph.dist
    comm = g.comm
    source = int(result.source)
    lo, hi = int(result.lo), int(result.hi)
    n = graph.n
    par, lev = np.asarray(result.parents), np.asarray(result.levels)
    msg = None
    if (lo, hi) != (graph.lo, graph.hi) or par.shape != (hi - lo,) or lev.shape != par.shape:
        msg = (f"rank {g.rank}: the result's piece (vertices {lo}..{hi}, shapes {par.shape} and "
               f"{lev.shape}) is not the graph's piece {graph.lo}..{graph.hi}")
    elif not (np.issubdtype(par.dtype, np.integer) and np.issubdtype(lev.dtype, np.integer)):
        msg = f"rank {g.rank}: parents and levels must be integer arrays"
    C.agree(comm, msg, error=ValueError)
    par, lev = par.astype(np.int64, copy=False), lev.astype(np.int64, copy=False)
    own_source = lo <= source < hi

    # The piece on its own: what the edge pass below takes for granted.
    local_bad = int(((par < -1) | (par >= n)).any()
                    or ((par >= 0) != (lev >= 0)).any()
                    or ((par < 0) & (lev != -1)).any()
                    or (own_source and (par[source - lo] != source or lev[source - lo] != 0)))

    # Levels and parents over the row chunk and the column chunk.
    row_lev = row_chunk_of_piece(graph, _padded(graph, lev))
    row_par = row_chunk_of_piece(graph, _padded(graph, par))
    col_lev = column_chunk_of_piece(graph, _padded(graph, lev))
    col_par = column_chunk_of_piece(graph, _padded(graph, par))
    unreached = np.int64(2**62)
    row_key = np.where(row_lev >= 0, row_lev, unreached)
    col_key = np.where(col_lev >= 0, col_lev, unreached)
    row_conf = np.zeros(row_key.shape[0], dtype=np.bool_)
    col_conf = np.zeros(col_key.shape[0], dtype=np.bool_)
    # The tuples are checked where they are kept: as counts on tblock's entries
    # (one visit per entry stands for all its copies), then the self-loops.
    row0, col0 = g.i * g.pc, g.j * g.pr
    bad_row, bad_col, nbad, comp = B.check_entries(
        *graph._traw, graph._tuple_counts, graph.directed, row_key, col_key, row_par, col_par,
        row0, col0, d.b, d.B64, unreached, row_conf, col_conf, True)
    first = None if bad_row < 0 else (int(bad_row), int(bad_col))
    lrows, lcols = graph._loops
    bad_at, bad_n, comp_n = K.check_tuples(
        lrows, lcols, graph.directed, row_key, col_key, row_par, col_par, row0, col0, d.b,
        d.B64, unreached, row_conf, col_conf)
    nbad, comp = int(nbad) + int(bad_n), int(comp) + int(comp_n)
    if first is None and bad_at >= 0:
        first = (int(lrows[bad_at]), int(lcols[bad_at]))

    bad_edge = None  # (u, v, level of u, level of v) of this rank's first bad tuple
    if first is not None:
        bad_edge = (int(d.global_cols(first[1], g.j)), int(d.global_rows(first[0], g.i)),
                    int(col_lev[first[1]]), int(row_lev[first[0]]))

    confirmed = _or_to_owner(graph, row_conf, True)
    if not graph.directed:
        confirmed |= _or_to_owner(graph, col_conf, False)
    confirmed = confirmed[:par.shape[0]]
    if own_source:
        confirmed[source - lo] = True
    missing = np.flatnonzero((par >= 0) & ~confirmed)

    tot = C.allreduce(comm, np.array([local_bad, int(nbad), missing.size,
                                      int(np.count_nonzero(par >= 0)), int(comp)],
                                     dtype=np.int64))
    if tot[:3].any():
        _diagnose(graph, result, par, lev, bad_edge, int(nbad), missing)
        # Every failure counted above is one of the checks the diagnosis makes.
        raise RuntimeError("spbfs.mpi.validate: a failed check found no culprit (a bug)")
    top = C.allreduce(comm, np.array([int(lev.max(initial=0))]), "max")
    return {"reached": int(tot[3]), "max_level": int(top[0]),
            "component_edges": int(tot[4]), "directed": graph.directed}


def _diagnose(graph: Any, result: Any, par: np.ndarray, lev: np.ndarray,
              bad_edge: tuple[int, int, int, int] | None, nbad: int,
              missing: np.ndarray) -> None:
    """Raise the serial validator's error for an invalid result, on every rank (collective).

    The checks of :func:`spbfs.validate.tree_levels`, then of the given levels,
    then rules 3/4 and 5, in that order, in three rounds of :func:`_raise_first`
    (the second after the parents' parents and levels are fetched, the cycle
    search between the second and the third), which every rank reaches, so all
    ranks raise at the same check.
    """
    comm = graph.grid.comm
    source, n, directed = int(result.source), graph.n, graph.directed
    lo = int(result.lo)
    ids = np.arange(lo, lo + par.shape[0], dtype=np.int64)
    own_source = lo <= source < lo + par.shape[0]

    # Rule 1, as tree_levels checks it.
    out = np.flatnonzero((par < -1) | (par >= n))
    bad_root = own_source and par[source - lo] != source
    child = np.flatnonzero(par >= 0)
    child = child[ids[child] != source]
    self_parent = child[par[child] == ids[child]]
    _raise_first(comm, [
        (out.size, lambda t: _fail(
            1, f"parent[{ids[out[0]]}] = {int(par[out[0]])} is not a vertex id nor -1 "
               f"({t} such vertices)", (int(ids[out[0]]),))),
        (int(bad_root), lambda t: _fail(
            1, f"the source {source} must be its own parent, got parent "
               f"{int(par[source - lo])}", (source,))),
        (self_parent.size, lambda t: _fail(
            1, f"vertex {ids[self_parent[0]]} is its own parent but is not the source "
               f"{source} (a cycle of length 1)", (int(ids[self_parent[0]]),))),
    ])
    # Every parent is a vertex id now: ask the parents' owners for their parent and level.
    pp, pl = _fetch(graph, lo, par[child], [par, lev])
    dangling = child[pp < 0]
    wrong = np.flatnonzero(lev[child] - pl != 1)
    totals = _raise_first(comm, [
        (dangling.size, lambda t: _fail(
            1, f"vertex {ids[dangling[0]]} is reached but its parent {int(par[dangling[0]])} "
               f"is not (parent[{int(par[dangling[0]])}] = -1), so its parent chain cannot "
               f"reach the source", (int(ids[dangling[0]]),))),
        (wrong.size, None),
    ])
    # Around a cycle the levels cannot grow by one at every tree edge, so
    # without a tree edge off by a level there is no cycle to look for.
    if totals[1]:
        _raise_cycle(graph, lo, par, child, source)

    # The given levels, as _check_given_levels checks them; then rules 3/4 and 5.
    disagree = np.flatnonzero((lev >= 0) != (par >= 0))
    bad_level = own_source and lev[source - lo] != 0
    # Rule 2 and level 0 at the root pin every reached level to its depth in the
    # tree; what is left is an unreached vertex whose level is not -1.
    off = np.flatnonzero(lev != np.where(par >= 0, lev, -1))
    kind = "arc" if directed else "edge"

    def edge_error(t: int) -> ValidationError:
        assert bad_edge is not None  # this rank counted bad tuples
        u, v, lu, lv = bad_edge
        shown = f"({u} -> {v})" if directed else f"({u}, {v})"
        if (lu < 0) != (lv < 0):
            inside, outside, lin = (u, v, lu) if lu >= 0 else (v, u, lv)
            what = "leads from reached vertex" if directed else "joins reached vertex"
            return _fail(4, f"input {kind} {shown} {what} {inside} (level {lin}) to unreached "
                            f"vertex {outside} ({t} input {kind}s break rule 3 or 4)", (u, v))
        return _fail(3, f"input {kind} {shown} joins levels {lu} and {lv} "
                        f"({t} input {kind}s break rule 3 or 4)", (u, v))

    def tree_edge_error(t: int) -> ValidationError:
        # Unconfirmed although its levels are right: the tree edge is not an input edge.
        v, p = int(ids[missing[0]]), int(par[missing[0]])
        pair = f"{p} -> {v}" if directed else f"({v}, {p})"
        return _fail(5, f"tree {kind} {pair} is not in the input graph ({t} such tree edges)",
                     (p, v))

    _raise_first(comm, [
        (disagree.size, lambda t: _levels_fail(
            f"levels and parents disagree on which vertices are reached: vertex "
            f"{ids[disagree[0]]} has level {int(lev[disagree[0]])} and parent "
            f"{int(par[disagree[0]])} ({t} such vertices)", (int(ids[disagree[0]]),))),
        (int(bad_level), lambda t: _levels_fail(
            f"the source {source} must have level 0, got {int(lev[source - lo])}", (source,))),
        (wrong.size, lambda t: _fail(
            2, f"tree edge ({ids[child[wrong[0]]]}, {int(par[child[wrong[0]]])}) joins levels "
               f"{int(lev[child[wrong[0]]])} and {int(pl[wrong[0]])} ({t} such tree edges)",
            (int(ids[child[wrong[0]]]), int(par[child[wrong[0]]])))),
        (off.size, lambda t: _levels_fail(
            f"levels[{ids[off[0]]}] = {int(lev[off[0]])} but the parent tree puts vertex "
            f"{ids[off[0]]} at depth -1", (int(ids[off[0]]),))),
        (nbad, edge_error),  # the levels are the tree's depths by now
        (missing.size, tree_edge_error),
    ])
def _raise_cycle(graph: Any, lo: int, par: np.ndarray, child: np.ndarray, source: int) -> None:
    """Rule 1's cycle check of :func:`spbfs.validate.tree_levels`, distributed (collective).

    ``child`` lists the reached vertices but the source (positions in the
    piece), whose parents are reached. Pointer jumping as in the serial check:
    each round every unresolved vertex's pointer becomes its pointer's pointer,
    asked of the owner; after ``bit_length(n) + 1`` rounds whatever has not
    reached the source points into a cycle, which is then followed from there.
    """
    comm = graph.grid.comm
    jump = par.copy()
    active = child[par[child] != source]
    for _ in range(int(graph.n).bit_length() + 1):
        if not C.allreduce(comm, np.array([active.size], dtype=np.int64))[0]:
            return
        # Every rank answers from its pointers of the last round before it
        # updates its own, so the round reads one consistent generation.
        (jump[active],) = _fetch(graph, lo, jump[active], [jump])
        active = active[jump[active] != source]
    counts = C.allgather_int(comm, active.size)
    if not counts.any():
        return
    first = int(np.flatnonzero(counts)[0])
    mine = (lo + int(active[0]), int(jump[active[0]])) if comm.Get_rank() == first else None
    v, start = C.bcast_obj(comm, mine, root=first)
    # The pointer sits on the cycle itself now; follow it (at most 8 steps shown).
    cycle = [start]
    x = _value_at(graph, lo, par, start)
    while x != start and len(cycle) < 8:
        cycle.append(x)
        x = _value_at(graph, lo, par, x)
    shown = " -> ".join(map(str, cycle)) + (" -> ..." if x != start else f" -> {start}")
    raise _fail(1, f"{int(counts.sum())} reached vertices have parent chains that never reach "
                   f"the source {source}; e.g. vertex {v} leads into the cycle {shown}", (v,))
