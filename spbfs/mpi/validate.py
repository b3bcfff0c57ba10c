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
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spbfs.mpi import _construct as B
from spbfs.mpi import _kernels as K
from spbfs.mpi import comm as C
from spbfs.validate import RULES, ValidationError

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


def _fail(rule: int, detail: str) -> str:
    return f"rule {rule} ({RULES[rule]}) violated: {detail}"


def validate_distributed(graph: Any, result: Any) -> dict[str, Any]:
    """Graph500 checks of ``result`` on ``graph`` (collective); see the module docstring.

    Returns
    -------
    dict
        ``reached``, ``max_level``, ``component_edges``, ``directed``.

    Raises
    ------
    ValidationError
        On every rank, with the lowest failing rank's message.
    """
    g, d = graph.grid, graph.dist
    comm = g.comm
    source = result.source
    par, lev = result.parents, result.levels
    lo = result.lo
    n = graph.n

    def agree(msg: str | None) -> None:
        C.agree(comm, msg, error=lambda text: ValidationError(text, rule="dist"))

    # Local consistency of the piece.
    msg = None
    bad = np.flatnonzero((par >= 0) != (lev >= 0))
    if bad.size:
        v = lo + int(bad[0])
        msg = (f"levels and parents disagree on which vertices are reached: vertex {v} has "
               f"level {int(lev[bad[0]])} and parent {int(par[bad[0]])}")
    elif ((par < -1) | (par >= n)).any():
        v = lo + int(np.flatnonzero((par < -1) | (par >= n))[0])
        msg = _fail(1, f"parent[{v}] = {int(par[v - lo])} is not a vertex id nor -1")
    else:
        zero = np.flatnonzero(lev == 0) + lo
        if lo <= source < result.hi:
            if par[source - lo] != source or lev[source - lo] != 0:
                msg = _fail(1, f"the source {source} must be its own parent at level 0")
        if msg is None and zero.size and (zero.size > 1 or int(zero[0]) != source):
            v = int(zero[zero != source][0])
            msg = _fail(1, f"vertex {v} has level 0 but is not the source {source}")
    agree(msg)

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
    # The tuples are checked where they are kept: as counts on the block's entries
    # (one visit per entry stands for all its copies), then the self-loops.
    blk = graph.block
    dcsc = blk.format == "dcsc"
    row0, col0 = g.i * g.pc, g.j * g.pr
    bad_row, bad_col, nbad, comp = B.check_entries(
        blk.ptr, blk.ind, blk.jc if dcsc else blk.ind[:0], dcsc, graph._tuple_counts,
        graph.directed, row_key, col_key, row_par, col_par, row0, col0, d.b, d.B64, unreached,
        row_conf, col_conf)
    first = None if bad_row < 0 else (int(bad_row), int(bad_col))
    lrows, lcols = graph._loops
    bad_at, bad_n, comp_n = K.check_tuples(
        lrows, lcols, graph.directed, row_key, col_key, row_par, col_par, row0, col0, d.b,
        d.B64, unreached, row_conf, col_conf)
    nbad, comp = int(nbad) + int(bad_n), int(comp) + int(comp_n)
    if first is None and bad_at >= 0:
        first = (int(lrows[bad_at]), int(lcols[bad_at]))
    msg = None
    if first is not None:
        v = int(d.global_rows(first[0], g.i))
        u = int(d.global_cols(first[1], g.j))
        lu, lv = int(col_lev[first[1]]), int(row_lev[first[0]])
        kind = "arc" if graph.directed else "edge"
        if (lu < 0) != (lv < 0):
            msg = _fail(4, f"input {kind} ({u} -> {v}) joins levels {lu} and {lv} "
                           f"(reached and unreached; {nbad} such tuples on rank {g.rank})")
        else:
            msg = _fail(3, f"input {kind} ({u} -> {v}) joins levels {lu} and {lv} "
                           f"({nbad} such tuples on rank {g.rank})")
    agree(msg)

    confirmed = _or_to_owner(graph, row_conf, True)
    if not graph.directed:
        confirmed |= _or_to_owner(graph, col_conf, False)
    confirmed = confirmed[:par.shape[0]]
    if lo <= source < result.hi:
        confirmed[source - lo] = True
    missing = np.flatnonzero((par >= 0) & ~confirmed)
    msg = None
    if missing.size:
        v = lo + int(missing[0])
        msg = _fail(5, f"tree edge ({int(par[missing[0]])} -> {v}) is not in the input graph "
                       f"({missing.size} such tree edges on rank {g.rank})")
    agree(msg)
    tot = C.allreduce(comm, np.array([int(np.count_nonzero(par >= 0)), int(comp)]))
    top = C.allreduce(comm, np.array([int(lev.max(initial=0))]), "max")
    return {"reached": int(tot[0]), "max_level": int(top[0]),
            "component_edges": int(tot[1]), "directed": graph.directed}
