"""The grid's SpMSV in named phases: every vector that moves on the 2D grid moves here.

A :class:`~spbfs.mpi.DistGraph` on a ``pr x pc`` grid stores on rank
``(i, j)`` the block ``B_ij`` (rows: row chunk ``i``, columns: column chunk
``j``, padded local ids) and owns vector piece ``k = i * pc + j`` (global ids
``lo .. hi-1``, padded to ``B64`` local ids). A product ``y = B ⊕.⊗ x`` is

1. *transpose*: the piece goes to the rank holding it in the column layout
   (``transpose_dest``);
2. *expand*: an Allgatherv down the processor column assembles column chunk
   ``j`` of ``x``;
3. the *local multiply* on ``B_ij``, which gives partial results for row chunk ``i``;
4. *fold*: the partial results go along the processor row to their owners
   (row chunk ``i`` is exactly the pieces of the processor row);
5. *merge*: the owner reduces what it received with the semiring's addition.

The transposed product ``y = Bᵀ ⊕.⊗ x`` (in-edges of a directed graph) runs
on ``tblock`` (``B_ij`` transposed): expand along the processor *row* (no
transpose), local product, fold down the processor *column* into the column
layout and transpose back to the owners.

One phase object for every product: :class:`GridPhases` moves the messages
of each phase (transpose, expand, fold, rotate) through the registered
exchange patterns (:class:`~spbfs.mpi.exchange.Exchange`) and counts them.
Its two fronts say what the messages hold. :class:`FrontierPhases` serves
the BFS, whose frontier and pairs are its own encodings (id lists or bitmaps,
compressed by :mod:`spbfs.mpi.codec`; ``(child, parent)`` pairs), posted with
the level's Allreduce where the pattern allows, and whose bottom-up sub-steps
*rotate* a bitmap along the row. :class:`GridOps` (and
:func:`product_sparse`) serves the semiring traversal and the distributed
algorithms: dense vectors move as padded pieces (Allgatherv and
Reduce_scatter_block), sparse ones as (id, value, ...) rows packed into
int64 words (float64 values carried bit for bit); :meth:`GridOps.product` is
one whole SpMSV whose local multiply is a local engine's
(:meth:`spbfs.mpi.local_array.ArrayLocal.semiring_product`: numpy, cupy or
the numba kernels) or a semiring kernel's. Every function here is collective
over the graph's grid; the communication goes through :mod:`spbfs.mpi.comm`
(nonblocking calls completed under its wait policy).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import numpy as np

from semirings.blocks import Block
from semirings.kernels import spmsv
from semirings.vector import SparseVector
from spbfs.mpi import _kernels as K
from spbfs.mpi import comm as C
from spbfs.mpi.encodings import AUTO, DEVICE_AUTO
from spbfs.mpi.exchange import Exchange
from spbfs.mpi.staging import Staging
from spbfs.patterns import encoding

__all__ = ["COMM_PHASES", "LOCAL_PHASES", "FrontierPhases", "GridOps", "GridPhases",
           "GrownReceives", "PhaseCounters", "PostedSends", "merge_pairs", "product_sparse",
           "sendrecv_sized"]

_TAG_DATA = 42
_OPS = ("sum", "min", "max")


def _pack(arrays: list[np.ndarray]) -> tuple[np.ndarray, list[np.dtype]]:
    """Columns of int64/float64 (any 8-byte dtype) packed into one (m, w) int64 array.

    The receiver unpacks with its own dtypes: callers make them the same on every
    rank (integers travel as int64, floats as float64).
    """
    m = arrays[0].shape[0]
    buf = np.empty((m, len(arrays)), dtype=np.int64)
    dtypes = []
    for c, a in enumerate(arrays):
        a = np.ascontiguousarray(a)
        if a.dtype.itemsize != 8:
            a = a.astype(np.float64 if a.dtype.kind == "f" else np.int64)
        dtypes.append(a.dtype)
        buf[:, c] = a.view(np.int64)
    return buf, dtypes


def _unpack(buf: np.ndarray, dtypes: list[np.dtype]) -> list[np.ndarray]:
    return [np.ascontiguousarray(buf[:, c]).view(dt) for c, dt in enumerate(dtypes)]


# --------------------------------------------------------------------------- counters

#: Communication phases of a BFS level, in their order.
COMM_PHASES = ("transpose", "expand", "fold", "frontier_gather", "rotate", "parent_updates",
               "allreduce")
#: Local computation phases of a BFS level.
LOCAL_PHASES = ("local_topdown", "local_bottomup", "update")
PHASE_INDEX = {name: k for k, name in enumerate(COMM_PHASES + LOCAL_PHASES)}
_NCOMM = len(COMM_PHASES)
_NPH = len(PHASE_INDEX)
(TRANSPOSE, EXPAND, FOLD, GATHER, ROTATE, UPDATES, ALLREDUCE, LOCAL_TD, LOCAL_BU,
 UPDATE) = range(_NPH)


class PhaseCounters:
    """Messages, words (per level and phase) and seconds (per phase) of one rank.

    Plain Python lists: a level adds a dozen numbers, and numpy's per-item
    overhead showed in the thousand levels of a road network.
    """

    __slots__ = ("clock", "cur", "levels", "seconds")

    def __init__(self) -> None:
        self.levels: list[list[int]] = []
        self.cur = [0] * (2 * _NCOMM)
        self.seconds = [0.0] * _NPH
        self.clock = time.perf_counter

    def add(self, phase: int, messages: int, words: int) -> None:
        """Count messages and 64-bit words sent in ``phase`` (this level)."""
        self.cur[2 * phase] += messages
        self.cur[2 * phase + 1] += words

    def tick(self, phase: int, t0: float) -> float:
        """Charge the time since ``t0`` to ``phase``; return the time now."""
        t = self.clock()
        self.seconds[phase] += t - t0
        return t

    def close_level(self) -> None:
        """Start the next level's counts."""
        self.levels.append(self.cur)
        self.cur = [0] * (2 * _NCOMM)

    def as_arrays(self) -> tuple[np.ndarray, np.ndarray]:
        """(levels, phases, 2) message and word counts; nanoseconds per phase."""
        counts = np.array(self.levels, dtype=np.int64).reshape(len(self.levels), _NCOMM, 2)
        ns = np.array([int(x * 1e9) for x in self.seconds], dtype=np.int64)
        return counts, ns

    def summed(self, comm: Any) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray],
                                         dict[str, float]]:
        """Over all ranks (collective): messages and words per phase and level, and
        seconds per phase (the mean over the ranks)."""
        if not self.levels:  # no level ran: the initial Allreduce gets a record of its own
            self.close_level()
        counts, ns = self.as_arrays()  # (levels, phases, 2), (phases,)
        flat = C.allreduce(comm, np.concatenate([counts.reshape(-1), ns]))
        ns = flat[counts.size:]
        counts = flat[:counts.size].reshape(counts.shape)
        msgs = {ph: counts[:, k, 0].copy() for k, ph in enumerate(COMM_PHASES)}
        words = {ph: counts[:, k, 1].copy() for k, ph in enumerate(COMM_PHASES)}
        size = comm.Get_size()
        return msgs, words, {ph: float(ns[k]) / 1e9 / size for ph, k in PHASE_INDEX.items()}


# --------------------------------------------------------------------------- the phases

class GridPhases:
    """The phases of every product on the grid, written once: one rank's part.

    A product ``y = B ⊕.⊗ x`` on rank ``(i, j)`` moves its vectors in four
    phases, each a method here: :meth:`transpose` (the piece to the rank
    holding it in the column layout, or back), :meth:`gather` (the *expand*:
    an allgather of the pieces of the processor column, or of the row for
    ``Bᵀ``), :meth:`alltoall` (the *fold*: partial results along the
    processor row to their owners, or down the column for ``Bᵀ``) and, for the
    bottom-up BFS, :meth:`rotate` (a segment's bitmap to the left neighbour of
    the row). The local multiply between them is a local engine's
    (:mod:`spbfs.mpi.local`) or a semiring kernel's, and the *merge* of what
    the fold brought is the caller's reduction (the smallest parent, the
    semiring's addition).

    Messages are 1-D int64 arrays (dense pieces of any dtype for
    :meth:`transpose` with ``out``); the exchanges run by a registered pattern
    (:class:`~spbfs.mpi.exchange.Exchange`), so a new pattern reaches every
    product without a change here. What a message holds is the subclass's:
    :class:`FrontierPhases` (the BFS: frontier ids, bitmaps or compressed
    frontiers, ``(child, parent)`` pairs, exchanges posted with the level's
    Allreduce) and :class:`GridOps` (semiring products: ``(id, value, ...)``
    rows and dense vectors). Every phase counts this rank's messages and
    64-bit words in ``cnt`` (messages to oneself are not communication).

    Parameters
    ----------
    grid : ProcessGrid
        The process grid.
    B : int
        Padded piece length (``dist.B64``).
    col_ex, row_ex : Exchange
        The exchanges of the processor column and row.
    cnt : PhaseCounters
        Where the phases count.
    """

    def __init__(self, grid: Any, B: int, col_ex: Any, row_ex: Any,
                 cnt: PhaseCounters) -> None:
        self.grid, self.p, self.B = grid, grid.size, B
        self.col_ex, self.row_ex = col_ex, row_ex  # by pattern, in the column and the row
        self.cnt = cnt
        #: The emulated slow network's delays (the BFS's plan sets it; None: none).
        self.emu: Any = None
        self.left = grid.i * grid.pc + (grid.j - 1) % grid.pc  # rotation partners
        self.right = grid.i * grid.pc + (grid.j + 1) % grid.pc

    def transpose(self, msg: np.ndarray, tag: int, *, back: bool = False,
                  out: np.ndarray | None = None) -> np.ndarray:
        """*Transpose*: ``msg`` to the rank holding this piece in the column layout.

        ``back``: from the column layout to the owner instead. Received into
        ``out`` where its length is known (a dense piece, any dtype), else
        into an int64 array of the message's length. A rank that holds its
        own piece gets ``msg`` itself (not counted).
        """
        grid = self.grid
        dest, src = (grid.transpose_src, grid.transpose_dest) if back else \
            (grid.transpose_dest, grid.transpose_src)
        if dest == grid.rank:
            return msg
        words = -(-msg.nbytes // 8)
        self.cnt.add(TRANSPOSE, 1 if words else 0, words)
        if out is None:
            return sendrecv_sized(grid.comm, msg, dest, src, tag)
        C.sendrecv(grid.comm, msg, dest, out, src, tag=tag)
        return out

    def gather(self, msg: np.ndarray, pattern: str, phase: int, *,
               row: bool = False) -> tuple[list[np.ndarray], int, int]:
        """*Expand* (or the bottom-up *gather*): every rank's ``msg`` in the processor column.

        ``row``: in the processor row (the transposed product). Counted as
        ``phase``; returns the messages by rank and what this rank sent
        (messages, words), for the callers that emulate a slow network.
        """
        got, m, w = (self.row_ex if row else self.col_ex).allgather(pattern, msg)
        self.cnt.add(phase, m, w)
        return got, m, w

    def alltoall(self, sends: list[np.ndarray | None], pattern: str, phase: int, *,
                 column: bool = False) -> tuple[list[np.ndarray], int, int]:
        """*Fold*: ``sends[t]`` to processor-row rank ``t``; what the row sent here, by rank.

        ``column``: down the processor column (the transposed product's fold).
        Counted as ``phase``; returns the messages and what this rank sent.
        """
        recv, m, w = (self.col_ex if column else self.row_ex).alltoall(pattern, sends)
        self.cnt.add(phase, m, w)
        return recv, m, w

    def rotate(self, comp: Any, into: Any, wire: Staging | None = None) -> Any:
        """*Rotate*: a segment's ``completed`` bitmap to the left; returns the right one's.

        Received into ``into`` where MPI writes the engine's memory (``wire``,
        the engine's :class:`~spbfs.mpi.staging.Staging`: the host, or a
        CUDA-aware library), else into a host buffer whose words go up.
        """
        cnt = self.cnt
        t0 = cnt.clock()
        words = comp.shape[0]
        cnt.add(ROTATE, 1, words)
        if wire is None or wire.mode != "pinned":
            C.sendrecv(self.grid.comm, comp, self.left, into, self.right, tag=13)
            got = into
        else:
            # Received straight into the staging buffer: one copy up, no pageable one.
            buf = wire.landing(words)
            C.sendrecv(self.grid.comm, wire.send(comp.view(np.int64)), self.left, buf,
                       self.right, tag=13)
            got = wire.recv(buf).view(comp.dtype)
        if self.emu is not None:
            self.emu.hold(t0, 1, 8 * words)
        cnt.tick(ROTATE, t0)
        return got


class GridOps(GridPhases):
    """The grid's phases for semiring products: dense and sparse vectors, any values.

    The front the distributed algorithms use (:mod:`spbfs.algorithms`) over
    the phases of :class:`GridPhases`: sparse vectors travel as
    ``(id, value, ...)`` rows packed into int64 words (float64 values carried
    bit for bit), dense ones as padded pieces (Allgatherv and
    Reduce_scatter_block). :meth:`product` is one whole SpMSV.

    Parameters
    ----------
    g : DistGraph
        Supplies the grid and the distribution.

    Attributes
    ----------
    B : int
        Padded piece length (``dist.B64``).
    size : int
        Vertices of this rank's piece (``hi - lo``).
    pattern : str
        The sparse exchanges' pattern: the config's ``exchange``; ``auto``
        runs the collectives (these messages carry values the cost model does
        not price).
    """

    def __init__(self, g: Any) -> None:
        grid = g.grid
        fanout = g.config.butterfly_fanout
        super().__init__(grid, g.dist.B64, Exchange(grid.col_comm, fanout, tag=18),
                         Exchange(grid.row_comm, fanout, tag=18), PhaseCounters())
        self.g = g
        self.d = g.dist
        self.lo, self.hi = g.lo, g.hi
        self.size = self.hi - self.lo
        self.pattern = "collective" if g.config.exchange == "auto" else g.config.exchange

    # -- small collectives -------------------------------------------------------------
    def allsum(self, *vals: float | int) -> np.ndarray:
        """Sum of a few numbers over all ranks (one Allreduce; float64)."""
        return C.allreduce(self.grid.comm, np.array(vals, dtype=np.float64))

    def allsum_int(self, *vals: int) -> np.ndarray:
        """Sum of a few integers over all ranks (one Allreduce; int64)."""
        p = self.p
        if p > 1:
            self.cnt.add(ALLREDUCE, p - 1, len(vals) * (p - 1))
        return C.allreduce(self.grid.comm, np.array(vals, dtype=np.int64))

    # -- dense -----------------------------------------------------------------------
    def pad(self, piece: np.ndarray, fill: Any) -> np.ndarray:
        """The piece padded with ``fill`` to ``B`` entries."""
        out = np.full(self.B, fill, dtype=piece.dtype)
        out[:self.size] = piece
        return out

    def expand_dense(self, piece: np.ndarray, fill: Any, *, transpose: bool = False) -> np.ndarray:
        """Column chunk ``j`` of a dense vector (``pr * B`` entries, padding = ``fill``).

        With ``transpose``: row chunk ``i`` (``pc * B``), gathered along the row.
        """
        x = self.pad(np.asarray(piece), fill)
        if not transpose:
            x = self.transpose(x, _TAG_DATA, out=np.empty_like(x))
        comm = self.grid.row_comm if transpose else self.grid.col_comm
        size = comm.Get_size()
        if size == 1:
            return x
        words = -(-x.nbytes // 8)
        self.cnt.add(GATHER if transpose else EXPAND, size - 1, (size - 1) * words)
        return C.allgatherv(comm, x, np.full(size, self.B, dtype=np.int64))

    def fold_dense(self, part: np.ndarray, op: str, *, transpose: bool = False) -> np.ndarray:
        """This rank's piece (``size`` entries) of partial results reduced with ``op``.

        ``part`` covers row chunk ``i`` (``pc * B``); with ``transpose`` column
        chunk ``j`` (``pr * B``), reduced down the column and sent to the owner.
        """
        if op not in _OPS:
            raise ValueError(f"op must be one of {_OPS}, got {op!r}")
        grid = self.grid
        comm = grid.col_comm if transpose else grid.row_comm
        part = np.ascontiguousarray(part)
        size = comm.Get_size()
        if size == 1:
            mine = part[:self.B].copy()
        else:
            MPI = C.mpi()
            mop = {"sum": MPI.SUM, "min": MPI.MIN, "max": MPI.MAX}[op]
            mine = np.empty(self.B, dtype=part.dtype)
            self.cnt.add(FOLD, size - 1, (size - 1) * -(-mine.nbytes // 8))
            C.policy().wait(comm.Ireduce_scatter_block(part, mine, op=mop))
        if transpose:
            mine = self.transpose(mine, _TAG_DATA, back=True, out=np.empty_like(mine))
        return mine[:self.size]

    # -- sparse ----------------------------------------------------------------------
    def expand_sparse(self, ids: np.ndarray, values: list[np.ndarray], *,
                      transpose: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
        """Entries ``(ids, values...)`` of every piece of this rank's column chunk.

        Parameters
        ----------
        ids : numpy.ndarray
            Piece-local ids (``0 .. size-1``) of this rank's entries.
        values : list of numpy.ndarray
            Parallel value arrays (8-byte dtypes travel unchanged).
        transpose : bool
            Gather the row chunk (along the processor row) instead.

        Returns
        -------
        ids, values
            Chunk-local ids (piece ``q`` of the chunk starts at ``q * B``) and values;
            sorted when every piece's ids are.
        """
        buf, dts = _pack([np.asarray(ids, dtype=np.int64), *values])
        w = buf.shape[1]
        flat = buf.reshape(-1)
        if not transpose:
            flat = self.transpose(flat, _TAG_DATA)
        parts, _, _ = self.gather(flat, self.pattern, GATHER if transpose else EXPAND,
                                  row=transpose)
        counts = np.array([p.shape[0] // w for p in parts], dtype=np.int64)
        cols = _unpack(parts[0].reshape(-1, w) if len(parts) == 1 else
                       np.concatenate(parts).reshape(-1, w), dts)
        if len(parts) > 1:
            cols[0] += np.repeat(np.arange(len(parts), dtype=np.int64) * self.B, counts)
        return cols[0], cols[1:]

    def fold_sparse(self, rows: np.ndarray, values: list[np.ndarray], *,
                    transpose: bool = False) -> tuple[np.ndarray, list[np.ndarray]]:
        """Send partial results ``(rows, values...)`` to the owners of their rows.

        Parameters
        ----------
        rows : numpy.ndarray
            Row-chunk local ids (column-chunk ids with ``transpose``).
        values : list of numpy.ndarray
            Parallel value arrays.
        transpose : bool
            The results cover the column chunk: fold down the processor column,
            then transpose to the owners.

        Returns
        -------
        ids, values
            Piece-local ids and values of everything sent to this rank, not
            reduced (an id may repeat).
        """
        grid = self.grid
        rows = np.asarray(rows, dtype=np.int64)
        buf, dts = _pack([rows, *values])
        size = grid.pr if transpose else grid.pc
        w = buf.shape[1]
        flat = buf.reshape(-1)
        if size > 1:
            seg = rows // self.B
            order = np.argsort(seg, kind="stable")
            counts = np.bincount(seg, minlength=size).astype(np.int64)
            ends = np.cumsum(counts * w).tolist()
            flat = buf[order].reshape(-1)
            sends = [flat[e - c * w:e] for e, c in zip(ends, counts.tolist(), strict=True)]
            parts, _, _ = self.alltoall(sends, self.pattern, FOLD, column=transpose)
            flat = np.concatenate(parts)
        if transpose:
            flat = self.transpose(flat, _TAG_DATA, back=True)
        cols = _unpack(flat.reshape(-1, w), dts)
        return cols[0] % self.B, cols[1:]

    def product(self, block: Block, ids: np.ndarray, vals: np.ndarray, semiring: Any, *,
                transpose: bool, local: Any = None,
                backend: str | None = None) -> tuple[np.ndarray, np.ndarray]:
        """One distributed SpMSV ``y = B ⊕.⊗ x``: expand, local multiply, fold.

        ``ids`` and ``vals`` are this rank's piece of the sparse ``x``
        (piece-local ids); ``transpose`` multiplies by ``Bᵀ`` (``block`` is
        then ``tblock``). The local multiply is ``local``'s
        :meth:`~spbfs.mpi.local_array.ArrayLocal.semiring_product` where a
        local engine is given (on ``block`` where that is on the engine's
        device, else on its own device copy of the graph's block), else
        :func:`semirings.kernels.spmsv` on ``block`` by ``backend`` (default
        the block's). Returns the unreduced ``(piece ids, values)`` sent to
        this rank: an id may repeat, the caller merges with the semiring's
        addition.
        """
        # Every rank packs the same dtypes (an empty local result may come back in another).
        dt = vals.dtype
        cols, (xv,) = self.expand_sparse(ids, [vals], transpose=transpose)
        if local is not None:
            rows, yv = local.semiring_product(cols, xv, semiring, dt, transpose=transpose,
                                              block=block)
        else:
            y = spmsv(block, SparseVector(cols, xv, block.shape[1], check=False), semiring,
                      backend=backend, check=False)
            rows = np.asarray(y.indices, dtype=np.int64)
            yv = np.asarray(y.values).astype(dt, copy=False)
        r, (yv,) = self.fold_sparse(rows, [yv], transpose=transpose)
        return r, yv

    # -- random access -----------------------------------------------------------------
    def lookup(self, piece: np.ndarray, gids: np.ndarray) -> np.ndarray:
        """``x[gids]`` for a distributed vector ``x`` (this rank's ``piece`` of it).

        One request and one reply Alltoallv over all ranks; each distinct id is
        asked for once.
        """
        gids = np.asarray(gids, dtype=np.int64)
        if self.grid.size == 1:
            return piece[gids - self.lo]
        _, back, asked, rcounts = self._ask(gids)
        reply, _ = C.alltoallv(self.grid.comm, piece[asked - self.lo], rcounts)
        return reply[back]

    def request(self, gids: np.ndarray,
                answer: Callable[[np.ndarray], tuple[np.ndarray, np.ndarray]],
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Variable-length answers from the owners of ``gids`` (collective).

        The distinct ids go to their owners as :meth:`lookup`'s do (one
        Alltoallv), where ``answer(asked)`` gets the ids asked of this rank
        (int64 global ids) and returns ``(lengths, values)``: ``lengths[x]``
        int64 values for ``asked[x]``, concatenated in order. The answers come
        back in two Alltoallv (lengths, values).

        Returns
        -------
        ids, lengths, values
            The distinct ids (sorted), the number of values of each, and the
            values concatenated in the order of the ids.
        """
        uniq, _, asked, rcounts = self._ask(np.asarray(gids, dtype=np.int64))
        lengths, values = answer(asked)
        lengths = np.asarray(lengths, dtype=np.int64)
        # Values answered to each asker: the lengths of its ids, summed.
        csum = np.zeros(asked.shape[0] + 1, dtype=np.int64)
        np.cumsum(lengths, out=csum[1:])
        per_rank = np.diff(csum[np.concatenate(([0], np.cumsum(rcounts)))])
        comm = self.grid.comm
        back, _ = C.alltoallv(comm, lengths, rcounts)
        got, _ = C.alltoallv(comm, np.asarray(values, dtype=np.int64), per_rank)
        return uniq, back, got

    def _ask(self, gids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The distinct ``gids`` sent to their owners (one Alltoallv): ``(uniq, back,
        asked, rcounts)``, ``uniq[back] == gids``, the ids asked of this rank and how
        many each rank asked."""
        uniq, back = np.unique(gids, return_inverse=True)
        counts = np.bincount(self.d.piece_of(uniq), minlength=self.grid.size).astype(np.int64)
        asked, rcounts = C.alltoallv(self.grid.comm, uniq, counts)  # uniq is sorted by owner
        return uniq, back, asked, rcounts


def product_sparse(ops: GridOps, block: Block, ids: np.ndarray, vals: np.ndarray,
                   semiring: Any, *, transpose: bool,
                   backend: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One distributed SpMSV ``y = B ⊕.⊗ x``: :meth:`GridOps.product` on a host kernel.

    ``backend`` runs the local product on another host backend than the
    block's (``"numba"``: a user semiring without a vectorized form).
    """
    return ops.product(block, ids, vals, semiring, transpose=transpose, backend=backend)


# --------------------------------------------------------------------------- the BFS's phases

_PAD = 8  # receive-buffer slack for a compressed message's header words


class FrontierPhases(GridPhases):
    """The phases of the BFS's SpMSV on the grid, for one search on one rank.

    Algorithms 3 and 4 of Buluç et al. (see :mod:`spbfs.mpi.bfs`): *transpose* the
    frontier piece to the rank holding it in the column layout, *expand* it
    down the processor column (top-down) or *gather* it as a bitmap
    (bottom-up), the local multiply (the engine's kernels), *fold* the
    ``(child, parent)`` pairs along the processor row, *merge* them into the
    owner's piece (:func:`merge_pairs`); bottom-up, *rotate* a segment's
    ``completed`` bitmap along the row between sub-steps and send the
    *parent updates* found for other pieces. Every phase counts its messages
    and 64-bit words (messages to oneself are not communication; compressed
    messages count their compressed length) and its time.

    How the messages move is the plan's (:class:`~spbfs.mpi.planner.Planner`):
    the *exchange pattern* of the expand/gather and of the fold/updates
    (:mod:`spbfs.mpi.exchange`; all ranks of a row or column choose alike,
    from counts the level-end Allreduce gave every rank), and each message's
    *encoding*: a sorted id list, a bitmap (Bisson, Bernaschi and
    Mastrostefano, Section 5), compressed (:mod:`spbfs.mpi.codec`) or one
    registered later: the object of :mod:`spbfs.mpi.encodings` named by the
    registry (:func:`spbfs.patterns.encoding`), or :data:`~spbfs.mpi.encodings.AUTO`
    choosing per message. The phases call it; they hold no branch per encoding.
    With the ``p2p`` pattern the transpose and the column exchange run as one
    step: the owner sends its piece straight to the ranks of its column chunk
    (the same words, never more messages), posted with the level-end
    Allreduce so that a level waits once for its slowest partner. The other
    patterns transpose, then gather in the processor column.

    Parameters
    ----------
    grid : ProcessGrid
        The process grid.
    B, bw : int
        Padded piece length (ids) and its bitmap length (64-bit words).
    plan : Planner
        Patterns, encodings, the link model and its emulation.
    visited, prev : numpy.ndarray
        The engine's bitmaps of its piece: visited now, and before the newest
        frontier was marked (so ``visited ^ prev`` is that frontier's bitmap).
    msgbufs : tuple of numpy.ndarray
        Two send bitmaps used in turn. Frontier messages are received into
        buffers of a bitmap's length or into arrays of their own length
        (:class:`PostedSends`), pairs into buffers grown to the need
        (:class:`GrownReceives`), not into buffers of the longest possible
        message kept per rank.
    cnt : PhaseCounters
        Where the phases count.
    channels : dict, optional
        The pair channels' state (:class:`GrownReceives`, by communicator and
        tag): kept with the graph by the engine, since both sides of a
        channel must keep it alike from search to search.
    wire : Staging, optional
        How the local engine's arrays reach MPI (:mod:`spbfs.mpi.staging`):
        every message the phases take from the engine (frontier ids and
        bitmaps, pairs, ``completed`` bitmaps) is in the engine's memory and
        goes to MPI through ``wire.send``; what they hand back went through
        ``wire.recv``. Default: the host (nothing crosses).
    bitmap : callable, optional
        The newest frontier piece's bitmap as an int64 message in the
        engine's memory (a device engine's own); default ``visited ^ prev``
        into the send bitmaps in turn.
    """

    def __init__(self, grid: Any, B: int, bw: int, plan: Any, visited: np.ndarray,
                 prev: np.ndarray,
                 msgbufs: tuple[np.ndarray, np.ndarray], cnt: PhaseCounters,
                 channels: dict[tuple[Any, ...], GrownReceives] | None = None,
                 wire: Staging | None = None, bitmap: Any = None) -> None:
        super().__init__(grid, B, plan.col_ex, plan.row_ex, cnt)
        self.wire = wire = Staging(np, False) if wire is None else wire
        self.channels = {} if channels is None else channels
        self.fold_channel = self._channel("grid", grid.comm, 19)
        self.bw = bw
        self.plan = plan
        if bitmap is not None:
            self.newest_bitmap = bitmap
        # A received frontier piece as the engine reads it (decoded, then across).
        self.piece = self.decode if wire.mode == "host" else self._piece_across
        # The search's encoding object (None for auto, which picks one per message),
        # and what decodes frontier and pair messages: resolved here once per graph.
        # On a device, auto picks among the encodings with device arrays only.
        auto = plan.encoding == "auto"
        self.fixed = None if auto else encoding(plan.encoding)
        coder = (DEVICE_AUTO if wire.device else AUTO) if auto else self.fixed
        self.decoder = coder.decode
        self.pair_coder = (None if not plan.pairs_compressible else coder)
        self.visited = visited
        self.prev = prev
        self.msgbufs = msgbufs
        self.red = np.zeros(4, np.int64)  # the level-end Allreduce, in place
        rank, pr, pc = grid.rank, grid.pr, grid.pc
        # The frontier exchange's partners never change (see post_expand).
        jt = rank // pr
        self.col_srcs = [grid.j * pr + i2 for i2 in range(pr)]
        self.col_dests = [i2 * pc + jt for i2 in range(pr) if i2 * pc + jt != rank]
        self.col_recvs = [src for src in self.col_srcs if src != rank]
        # The transposed top-down's partners: the processor row (its expand), the
        # owners of the column chunk's pieces (its fold) and the processor column
        # ``rank // pr`` (whose ranks fold to this rank's piece).
        self.row_srcs = [grid.i * pc + j2 for j2 in range(pc)]
        self.row_dests = [r for r in self.row_srcs if r != rank]
        self.owners = [grid.j * pr + t for t in range(pr)]
        self.folders = [i2 * pc + rank // pr for i2 in range(pr)]
        # The fold's parts by owner: the own one (-1: none) stays here, the others
        # travel on a channel whose receive buffers grow to the need.
        self.fold_own = self.owners.index(rank) if rank in self.owners else -1
        self.fold_parts = [t for t, d in enumerate(self.owners) if d != rank]
        self.fold_dests = [self.owners[t] for t in self.fold_parts]
        self.fold_srcs = [src for src in self.folders if src != rank]
        # Frontier messages are at most a bitmap long (bw words) when bitmaps are
        # forced or the size rule chooses (shared memory): then the posted receives
        # get buffers of that length, kept per rank (small: a bit per vertex of a
        # piece); otherwise each message is received at its own length (a probe).
        # One per source and direction: a wrong guess's exchange may still be in flight.
        self.small_bufs: dict[tuple[int, bool], np.ndarray] | None = None
        if self.fixed.bitmap_sized if self.fixed is not None else plan.link is None:
            self.small_bufs = {(src, row): wire.empty(bw + _PAD, np.int64)
                               for row, srcs in ((False, self.col_recvs), (True, self.row_dests))
                               for src in srcs}
        self.gather_len = max(B, bw, 1) + _PAD
        self.dec_ids: list[np.ndarray] = []  # decode buffers, one per chunk piece (lazy)
        self.dec_bits: list[np.ndarray] = []
        # Scratch of the pairs' counting sort (compressed pairs; allocated on first use).
        self.sort_bits = np.zeros(0, np.uint64)
        self.sort_par = np.zeros(0, np.int64)
        self.reset(cnt)

    def reset(self, cnt: PhaseCounters) -> None:
        """Ready for a search (the first, from ``__init__``, or the next on the same grid,
        plan and engine buffers).

        The partners, receive buffers and scratch stay (a search at scale 18
        takes about 3 ms; building them again cost tens of µs of it). What a
        search changes starts over: the counters, the posted exchange (the
        previous search received it), the patterns, the encoding buffer in
        turn, the latest sums and the log.
        """
        plan = self.plan
        self.cnt = cnt
        self.emu = plan.emulator if plan.emulator is not None and plan.emulator.active else None
        self.pending: tuple | None = None  # a posted frontier exchange (post_expand)
        self.msgflip = 0
        self.last = [1, 0, 0, 0]  # the latest Allreduce's sums (the source: one vertex)
        self.expand_pattern = self.row_pattern = plan.fixed_pattern or "p2p"
        #: This rank's record of the plan's choices: (level, phase, pattern, encoding,
        #: estimated seconds, actual seconds), kept when the plan decides something.
        self.log: list[tuple[int, str, str, str, float, float]] = []
        self.level = 1
        self.t_expand = 0.0  # when the posted frontier exchange started

    # -- frontier encoding ---------------------------------------------------------------
    def encode(self, ids: np.ndarray, receivers: int) -> tuple[np.ndarray, str]:
        """The frontier piece as a message, and its encoding's name.

        ``ids`` is always the piece the latest level (or the source) marked in
        ``visited``, so its bitmap is ``visited ^ prev`` (one pass, no scatter).
        """
        enc = self.fixed
        if enc is None:
            enc = (DEVICE_AUTO if self.wire.device else AUTO).pick(self, ids.shape[0], receivers)
        return enc.encode(self, ids), enc.name

    def newest_bitmap(self) -> np.ndarray:
        """The newest frontier piece's bitmap, ``visited ^ prev``, as an int64 message
        (into the two send bitmaps in turn: the other may still be in flight)."""
        self.msgflip ^= 1
        bits = self.msgbufs[self.msgflip]
        np.bitwise_xor(self.visited, self.prev, out=bits)
        return bits.view(np.int64)

    def decode(self, msg: np.ndarray, slot: int) -> tuple[np.ndarray, bool]:
        """A received frontier message as (ids or bitmap words, is_bitmap)."""
        return self.decoder(self, msg, slot)

    def _piece_across(self, msg: Any, slot: int) -> tuple[Any, bool]:
        """:meth:`decode`, then the piece in the engine's memory (``wire.recv``)."""
        m, bits = self.decoder(self, msg, slot)
        return self.wire.recv(m), bits

    # -- transpose and expand ------------------------------------------------------------
    def post_expand(self, frontier: np.ndarray, row: bool = False) -> None:
        """Start moving the frontier piece to the ranks of its column chunk.

        With the ``p2p`` pattern the messages travel with the level-end
        Allreduce (:meth:`allreduce4` waits once for both). The pattern is
        chosen here, from the current frontier's global size (the latest
        Allreduce's), the same on every rank. ``row``: to the ranks of the
        processor row instead, for a transposed top-down level (see
        :meth:`expand_row`); which one the next level needs is the engine's
        guess (the direction the Allreduce decides), and a wrong one is
        received, dropped and sent again. (Posting both exchanges, so that a
        level waits once whichever direction comes, measured 11-19 % slower on
        a 2x2 grid: the spare words cost more than the waits of wrong guesses.)
        """
        if self.pending is not None:
            self.drain()
        self.pending = self._post_one(frontier, row)

    def _post_one(self, frontier: np.ndarray, row: bool) -> tuple | None:
        """Post one frontier exchange (see :meth:`post_expand`); its record, or None."""
        grid = self.grid
        if (grid.pc if row else grid.pr) == 1:
            return None
        plan = self.plan
        if plan.fixed_pattern is None:
            pattern = plan.pattern("expand", grid.pc if row else grid.pr, self.last[0] / self.p)
            if row:
                self.row_pattern = pattern
            else:
                self.expand_pattern = pattern
        if (self.row_pattern if row else self.expand_pattern) != "p2p":
            return None
        t0 = self.cnt.clock()
        self.t_expand = t0
        dests = self.row_dests if row else self.col_dests
        msg, enc = self.encode(frontier, len(dests))
        wmsg = self.wire.send(msg)
        sends = {d: wmsg for d in dests}
        srcs = self.row_dests if row else self.col_recvs
        tag = 21 if row else 11
        bufs = self.small_bufs
        posted = C.Posted(grid.comm, sends, {s: bufs[s, row] for s in srcs}, tag=tag) \
            if bufs is not None else PostedSends(grid.comm, sends, srcs, tag=tag,
                                                 empty=self.wire.empty)
        self.cnt.tick(EXPAND if row else TRANSPOSE, t0)
        return (frontier, msg, self.row_srcs if row else self.col_srcs, posted, enc,
                plan.last_estimate, row)

    def _drop(self, posted: tuple | None) -> None:
        """Receive a posted exchange no level reads; count what it moved."""
        if posted is None:
            return
        posted[3].result()
        n = len(self.row_dests if posted[6] else self.col_dests)
        words = posted[1].shape[0]
        if words:
            self.cnt.add(EXPAND if posted[6] else GATHER, n, n * words)

    def expand(self, frontier: np.ndarray, phase: int) -> list[tuple[np.ndarray, bool]]:
        """The frontier pieces of this rank's column chunk: *transpose* and ``phase``.

        ``phase`` is :data:`EXPAND` (top-down) or :data:`GATHER` (bottom-up).
        Counted as Algorithms 3/4 describe them: the owner sends its piece to
        the rank holding it in the column layout (*transpose*, one message), which
        passes it on down the processor column (``phase``).
        Returns ``(ids or bitmap, is_bitmap)`` per piece of the chunk, in order.
        """
        grid = self.grid
        pr, rank = grid.pr, grid.rank
        if pr == 1:  # the owner holds its piece in the column layout: nothing moves
            return [(frontier, False)]
        if self.expand_pattern != "p2p":
            return self._expand_gathered(frontier, phase)
        if self.pending is None or self.pending[0] is not frontier or self.pending[6]:
            self.post_expand(frontier)
            if self.expand_pattern != "p2p":
                return self._expand_gathered(frontier, phase)
        cnt = self.cnt
        t0 = cnt.clock()
        _, msg, srcs, posted, enc, estimate, _ = self.pending
        self.pending = None
        got = posted.result()
        if grid.transpose_dest != rank:
            cnt.add(TRANSPOSE, 1 if msg.shape[0] else 0, msg.shape[0])
        parts = [(frontier, False) if src == rank else self.piece(got[src], i2)
                 for i2, src in enumerate(srcs)]
        # The piece this rank holds in the column layout (slot i), as it passes it on.
        words = msg.shape[0] if grid.transpose_dest == rank else got[srcs[grid.i]].shape[0]
        if words:
            cnt.add(phase, pr - 1, (pr - 1) * words)
        t1 = cnt.tick(phase, t0)
        if self.plan.recording:  # the time since posting: the Allreduce's wait included
            self.log.append((self.level, "expand" if phase == EXPAND else "gather", "p2p", enc,
                             estimate, t1 - self.t_expand))
        return parts

    def _expand_gathered(self, frontier: np.ndarray,
                         phase: int) -> list[tuple[np.ndarray, bool]]:
        """Transpose, then gather in the processor column by the chosen pattern."""
        grid = self.grid
        cnt = self.cnt
        t0 = cnt.clock()
        msg, enc = self.encode(frontier, grid.pr)
        # The patterns other than p2p move host arrays (a device engine's cross).
        msg = self.wire.host(msg)
        mine = self.transpose(msg, 12)
        t1 = cnt.tick(TRANSPOSE, t0)
        got, m, w = self.gather(mine, self.expand_pattern, phase)
        parts = [(frontier, False) if i2 == grid.i and grid.transpose_src == grid.rank
                 else self.piece(got[i2], i2) for i2 in range(grid.pr)]
        if self.emu is not None:
            self.emu.hold(t0, m + (grid.transpose_dest != grid.rank),
                          8 * (w + msg.shape[0]))
        t2 = cnt.tick(phase, t1)
        if self.plan.recording:
            self.log.append((self.level, "expand" if phase == EXPAND else "gather",
                             self.expand_pattern, enc, self.plan.last_estimate, t2 - t0))
        return parts

    def drain(self) -> None:
        """Receive and drop the posted frontier exchanges no level will read."""
        self._drop(self.pending)
        self.pending = None

    def expand_row(self, frontier: np.ndarray) -> list[tuple[np.ndarray, bool]]:
        """The frontier pieces of this rank's *row* chunk (the transposed top-down).

        The row chunk's pieces are the processor row's own: no transpose, one
        allgather along the row, counted as the expand; with ``p2p`` posted
        with the previous level's Allreduce (:meth:`post_expand` with ``row``)
        where the engine expected a top-down level. A column exchange posted
        for a bottom-up level that did not come is received and dropped.
        """
        grid = self.grid
        if grid.pc == 1:
            self.drain()
            return [(frontier, False)]
        pending = self.pending
        if pending is None or pending[0] is not frontier or not pending[6]:
            self.post_expand(frontier, row=True)
            pending = self.pending
        cnt = self.cnt
        t0 = cnt.clock()
        plan = self.plan
        rank = grid.rank
        if self.row_pattern == "p2p":
            assert pending is not None
            _, msg, srcs, posted, enc, estimate, _ = pending
            self.pending = None
            got = posted.result()
            m = grid.pc - 1 if msg.shape[0] else 0
            w = m * msg.shape[0]
            parts = [(frontier, False) if src == rank else self.piece(got[src], j2)
                     for j2, src in enumerate(srcs)]
            t_start = self.t_expand
            cnt.add(EXPAND, m, w)
        else:
            msg, enc = self.encode(frontier, grid.pc - 1)
            msg = self.wire.host(msg)  # the patterns other than p2p move host arrays
            got, m, w = self.gather(msg, self.row_pattern, EXPAND, row=True)
            parts = [(frontier, False) if j2 == grid.j else self.piece(got[j2], j2)
                     for j2 in range(grid.pc)]
            estimate = plan.last_estimate
            t_start = t0
            if self.emu is not None:
                self.emu.hold(t0, m, 8 * w)
        t1 = cnt.tick(EXPAND, t0)
        if plan.recording:
            self.log.append((self.level, "expand", self.row_pattern, enc, estimate,
                             t1 - t_start))
        return parts

    def fold_to_owners(self, sends: list[np.ndarray], words: int) -> list[np.ndarray]:
        """The transposed top-down's fold: part ``t``'s pairs to the owner of its piece.

        Part ``t`` of the column chunk is piece ``j pr + t``. With ``p2p`` each
        part goes straight to that piece's owner (the fold and the *transpose*
        in one message); the other patterns fold down the processor column and
        transpose (:meth:`along_row` with ``column``, :meth:`to_owner`).
        ``words`` counts every part's words. Returns the pair messages received
        for this rank's piece (compressed ones decoded; not joined, as
        :func:`merge_pairs` takes them one by one).
        """
        grid = self.grid
        plan = self.plan
        pattern = plan.fixed_pattern or plan.pattern("fold", grid.pr, self.last[1] / self.p)
        if pattern != "p2p":
            i = grid.i
            msgs = sum(1 for t, x in enumerate(sends) if t != i and x.shape[0])
            return [self.to_owner(self.along_row(FOLD, sends, msgs, words - sends[i].shape[0],
                                                 column=True))]
        cnt = self.cnt
        t0 = cnt.clock()
        own = self.fold_own
        if own >= 0:
            words -= sends[own].shape[0]
        msgs = [sends[t] for t in self.fold_parts]
        messages = 0
        for x in msgs:
            if x.shape[0]:
                messages += 1
        coder = self.pair_coder
        enc = "list"
        if coder is not None:
            msgs, words, enc = self._encoded_pairs(msgs, words, messages, -1)
        wire = self.wire
        recv = self.fold_channel.exchange(self.fold_dests, wire.send_parts(msgs), self.fold_srcs)
        if coder is not None:
            recv = [coder.decode_pairs(self, r) for r in recv]
        if wire.mode != "host":
            recv = [wire.recv(r) for r in recv]
        if own >= 0 and sends[own].shape[0]:
            recv.append(sends[own])
        cnt.add(FOLD, messages, words)
        if self.emu is not None:
            self.emu.hold(t0, messages, 8 * words)
        t1 = cnt.tick(FOLD, t0)
        if plan.recording:
            self.log.append((self.level, "fold", pattern, enc, plan.last_estimate, t1 - t0))
        return recv

    def fold_duo(self, partner: int, msg: np.ndarray) -> np.ndarray:
        """A 2 x 1 grid's top-down fold: ``msg`` to ``partner``, whose message comes back.

        The message holds the level's counts besides the pairs (see
        :meth:`spbfs.mpi.bfs.GridEngine._topdown_duo`), so it is the level's one
        synchronization: counted as the fold, one message of its full length.
        """
        cnt = self.cnt
        t0 = cnt.clock()
        got = self.fold_channel.exchange([partner], [msg], [partner])[0]
        cnt.add(FOLD, 1, msg.shape[0])
        cnt.tick(FOLD, t0)
        return got

    def counted(self, sums: list[int]) -> None:
        """The level's global sums, known without :meth:`allreduce4` (a duo level)."""
        self.level += 1
        self.last = sums

    def to_owner(self, recv: list[np.ndarray]) -> np.ndarray:
        """Pairs for the piece this rank holds in the column layout, sent to its owner.

        The transposed top-down folds down the processor column, so the pairs
        for a piece arrive at the rank holding it in the column layout; this
        *transpose* passes them on (one message) and returns the pairs for this
        rank's own piece.
        """
        wire = self.wire
        parts = [r for r in recv if r is not None and r.shape[0]]
        mine = wire.xp.concatenate(parts) if len(parts) > 1 else \
            parts[0] if parts else wire.xp.zeros(0, np.int64)
        grid = self.grid
        if grid.transpose_dest == grid.rank:
            return mine
        cnt = self.cnt
        t0 = cnt.clock()
        # A host message (the patterns other than p2p move host arrays).
        got = wire.recv(self.transpose(wire.host(mine), 20, back=True))
        if self.emu is not None:
            self.emu.hold(t0, 1, 8 * mine.shape[0])
        cnt.tick(TRANSPOSE, t0)
        return got

    # -- along the processor row ---------------------------------------------------------
    def along_row(self, phase: int, sends: list[np.ndarray | None], messages: int,
                  words: int, *, column: bool = False) -> list[np.ndarray]:
        """Pairs ``sends[t]`` to processor-row rank ``t``; returns those received.

        ``phase`` is :data:`FOLD` (top-down) or :data:`UPDATES` (the bottom-up
        finds for other pieces of the row chunk); ``messages`` and ``words``
        are what this rank sends to others as plain pairs. ``column``: to
        processor-column rank ``t`` instead (the transposed top-down's fold,
        see :meth:`to_owner`).
        """
        cnt = self.cnt
        t0 = cnt.clock()
        plan = self.plan
        grid = self.grid
        q, own = (grid.pr, grid.i) if column else (grid.pc, grid.j)
        pattern = plan.fixed_pattern or plan.pattern(
            "fold" if phase == FOLD else "updates", q, self.last[1] / self.p)
        coder = self.pair_coder
        enc = "list"
        if coder is not None:
            sends, words, enc = self._encoded_pairs(sends, words, messages, own)
        wire = self.wire
        if pattern == "p2p":
            comm = grid.col_comm if column else grid.row_comm
            others = [t for t in range(q) if t != own]
            empty = np.zeros(0, np.int64)
            got = self._channel("col" if column else "row", comm,
                                19 if column else 14 + (phase == UPDATES)).exchange(
                others, wire.send_parts([empty if sends[t] is None else sends[t]
                                         for t in others]), others)
            recv = [empty] * q
            for t, x in zip(others, got, strict=True):
                recv[t] = x
        else:  # the patterns other than p2p move host arrays (a device engine's cross)
            recv, messages, words = self.alltoall(wire.host_parts(sends), pattern, phase,
                                                  column=column)
        if coder is not None:  # under auto each sender chose its own encoding
            recv = [coder.decode_pairs(self, r) for r in recv]
        if wire.mode != "host":
            recv = [r if t == own or r is None else wire.recv(r) for t, r in enumerate(recv)]
        # The own part stays as it was (in the engine's memory).
        if sends[own] is not None and (pattern == "p2p" or wire.mode != "host"):
            recv[own] = sends[own]
        if pattern == "p2p":
            cnt.add(phase, messages, words)
        if self.emu is not None:
            self.emu.hold(t0, messages, 8 * words)
        t1 = cnt.tick(phase, t0)
        if plan.recording:
            self.log.append((self.level, "fold" if phase == FOLD else "updates", pattern, enc,
                             plan.last_estimate, t1 - t0))
        return recv

    def _channel(self, name: str, comm: Any, tag: int) -> GrownReceives:
        """The pair channel of a communicator and tag (kept with the graph's buffers),
        one for device receive buffers (a CUDA-aware library) and one for the host."""
        wire = self.wire
        key = (name, tag, wire.mode == "direct")
        ch = self.channels.get(key)
        if ch is None:
            ch = self.channels[key] = GrownReceives(comm, tag, empty=wire.empty, xp=wire.xp)
        return ch

    def _encoded_pairs(self, sends: list[Any], words: int, messages: int,
                       skip: int) -> tuple[list[Any], int, str]:
        """Pair messages as their encoding sends them: (messages, words to others, its name).

        The fixed encoding, or auto's choice for ``words // 2`` pairs to
        ``messages`` ranks; ``sends[skip]`` (the own part) stays as it is.
        """
        pe = self.fixed
        if pe is None:
            pe = AUTO.pick_pairs(self, words // 2, messages)
        if not pe.pairs:
            return sends, words, pe.name
        sends = [s if t == skip or s is None or not s.shape[0] else pe.encode_pairs(self, s)
                 for t, s in enumerate(sends)]
        words = sum(s.shape[0] for t, s in enumerate(sends) if t != skip and s is not None)
        return sends, words, pe.name

    # -- over the grid -------------------------------------------------------------------
    def allreduce4(self, a: int, b: int, c: int, d: int) -> list[int]:
        """Sum four counts over the grid; also completes a posted frontier exchange."""
        t0 = self.cnt.clock()
        red = self.red
        red[0] = a
        red[1] = b
        red[2] = c
        red[3] = d
        pending = self.pending
        C.allreduce(self.grid.comm, red, also=None if pending is None else pending[3],
                    inplace=True)
        p = self.p
        if p > 1:
            self.cnt.add(ALLREDUCE, p - 1, 4 * (p - 1))
            if self.emu is not None:
                # Recursive doubling: log2 p rounds; a posted frontier exchange's
                # messages travel in the same wait.
                msgs, nbytes = (p - 1).bit_length(), 32 * (p - 1).bit_length()
                start = t0
                if pending is not None:
                    dests = len(self.row_dests if pending[6] else self.col_dests)
                    msgs += dests
                    nbytes += 8 * pending[1].shape[0] * dests
                    start = self.t_expand
                self.emu.hold(start, msgs, nbytes)
        self.cnt.tick(ALLREDUCE, t0)
        self.level += 1
        out = red.tolist()
        self.last = out
        return out


def _recv_sized(comm: Any, source: int, tag: int, wait: Any, empty: Any = np.empty) -> Any:
    """The next int64 message from ``source``, in an array of its length (a matched probe;
    ``empty`` makes the array: device memory where MPI writes there)."""
    status = C.mpi().Status()
    box: list[Any] = []

    def test() -> bool:
        m = comm.Improbe(source=source, tag=tag, status=status)
        if m is None:
            return False
        box.append(m)
        return True

    if not test():
        wait.poll(test)
    buf = empty(status.Get_count(C.mpi().BYTE) // 8, np.int64)
    # Received under the wait policy: MPI's blocking receive of a large message
    # spins, and on shared cores the sender then waits for the core.
    wait.wait(box[0].Irecv(buf), buf.nbytes >= C.BULK_BYTES)
    return buf


class PostedSends:
    """Messages posted now, received later into arrays of their own length.

    :class:`spbfs.mpi.comm.Posted` without its receive buffers of the longest
    possible message (a frontier piece as ids: as long as the piece). The
    receives are matched probes: :meth:`wait` (which
    :func:`spbfs.mpi.comm.allreduce` calls with its own request) polls the
    requests ``extra`` and the sources together, receiving each message as it
    arrives, so a level still waits once for its Allreduce and its frontier.
    Every posted exchange must be received (:meth:`result`), or the next one
    on the tag would match its messages.
    """

    __slots__ = ("comm", "empty", "got", "policy", "receiving", "requests", "sources", "tag")

    def __init__(self, comm: Any, sends: dict[int, np.ndarray], sources: list[int],
                 tag: int, empty: Any = np.empty) -> None:
        self.comm = comm
        self.empty = empty  # makes the receive arrays (device memory for a CUDA-aware MPI)
        self.tag = tag
        self.sources = list(sources)
        self.policy = C.policy(comm)
        self.requests = [comm.Isend(buf, dest=d, tag=tag) for d, buf in sends.items()]
        self.got: dict[int, np.ndarray] = {}
        self.receiving: list[Any] = []  # the matched messages' receives

    def _poll(self) -> bool:
        """Receive what has arrived; whether every source's message is in."""
        comm, tag, got = self.comm, self.tag, self.got
        if len(got) < len(self.sources):
            status = C.mpi().Status()
            for src in self.sources:
                if src not in got:
                    m = comm.Improbe(source=src, tag=tag, status=status)
                    if m is not None:
                        buf = self.empty(status.Get_count(C.mpi().BYTE) // 8, np.int64)
                        self.receiving.append(m.Irecv(buf))
                        got[src] = buf
            if len(got) < len(self.sources):
                return False
        return not self.receiving or bool(C.mpi().Request.Testall(self.receiving))

    def wait(self, extra: list[Any] | None = None, bulk: bool = False) -> None:
        """Complete the requests ``extra`` and receive the messages, in one poll."""
        reqs = list(extra or [])
        testall = C.mpi().Request.Testall

        def test() -> bool:
            received = self._poll()
            return (not reqs or bool(testall(reqs))) and received

        if not test():
            self.policy.poll(test, bulk)

    def result(self) -> dict[int, np.ndarray]:
        """The received arrays by source rank (the sends completed too)."""
        self.wait()
        if self.requests:
            # A large send completes once its receiver matched it: after the receives.
            self.policy.wait(self.requests)
            self.requests = []
        return self.got


class GrownReceives:
    """Pair messages of unknown length, received into buffers grown to the need.

    The fold and the parent updates send ``(child, parent)`` pairs: few on most
    levels, up to two words per vertex of a piece on a few. Buffers for the
    longest possible message, kept per source, cost more memory than a small
    grid's share allows; probing every message for its length and then
    receiving it cost more per level than receives posted before the sends
    (docs/concepts/design-measurements.md). Here
    each source's receive is posted at once into a buffer of ``cap + 1``
    words, where ``cap`` is a number both sides of the channel know: it
    starts at ``first`` and grows to the longest message passed so far plus
    an eighth. A message of up to ``cap`` words travels as one; a longer one
    as its first ``cap + 1`` words (the receiver reads that length as "more
    follows") and the rest on ``tag + 40``, probed and received at its own
    length. Both sides then grow ``cap`` alike.

    The state lives as long as the graph (both sides of every channel keep
    it, as each search moves the same messages on every rank), so the
    buffers settle after the first searches. A received message is a view of
    its buffer until the next exchange on the channel. The phase counters
    count a message sent in two parts as one.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The communicator of the ranks named in :meth:`exchange`.
    tag : int
        The messages' tag (``tag + 40``: the rest of a long one).
    first : int
        The starting ``cap`` in words.
    empty, xp : callable, module
        What makes the receive buffers, and joins a long message's parts:
        ``numpy.empty`` and numpy, or device ones where MPI writes device
        memory (a CUDA-aware library).
    """

    __slots__ = ("caps", "comm", "empty", "first", "policy", "rank", "rbufs", "tag", "xp")

    def __init__(self, comm: Any, tag: int, first: int = 1024, *, empty: Any = np.empty,
                 xp: Any = np) -> None:
        self.empty, self.xp = empty, xp
        self.comm = comm
        self.tag = tag
        self.first = first
        self.rank = comm.Get_rank()
        self.policy = C.policy(comm)
        self.caps: dict[int, int] = {}  # the cap of messages to each destination
        self.rbufs: dict[int, np.ndarray] = {}  # cap + 1 words from each source

    def _grown(self, length: int) -> int:
        return length + length // 8

    def exchange(self, dests: list[int], msgs: list[np.ndarray],
                 sources: list[int]) -> list[np.ndarray]:
        """``msgs[k]`` to ``dests[k]``; one message from each of ``sources``, in order.

        Neither list names this rank (its own message is the caller's). Called
        once per level by every rank of a fold, so kept to a few calls per
        message.
        """
        comm, tag = self.comm, self.tag
        rbufs = self.rbufs
        bufs = [rbufs.get(s) for s in sources]
        irecv = comm.Irecv
        reqs = []
        for k, s in enumerate(sources):
            buf = bufs[k]
            if buf is None:
                buf = bufs[k] = rbufs[s] = self.empty(self.first + 1, np.int64)
            reqs.append(irecv(buf, source=s, tag=tag))
        nrecv = len(reqs)
        nbytes = 0
        split = False
        caps = self.caps
        isend = comm.Isend
        for d, x in zip(dests, msgs, strict=True):
            cap = caps.get(d, self.first)
            n = x.shape[0]
            nbytes += 8 * n
            if n <= cap:
                reqs.append(isend(x, dest=d, tag=tag))
            else:
                reqs.append(isend(x[:cap + 1], dest=d, tag=tag))
                reqs.append(isend(x[cap + 1:], dest=d, tag=tag + 40))
                caps[d] = self._grown(n)
                split = True
        MPI = C.mpi()
        pol = self.policy
        bulk = nbytes >= C.BULK_BYTES
        # One wait for all, unless a rest was sent: its send completes only once the
        # receiver, after the head, has probed for it (two such ranks waiting for
        # their own sends would wait for each other), so the receives come first.
        if split:
            statuses = [MPI.Status() for _ in range(nrecv)]
            pol.wait(reqs[:nrecv], bulk, statuses)
        else:
            statuses = [MPI.Status() for _ in reqs]
            pol.wait(reqs, bulk, statuses)
        out = []
        byte = MPI.BYTE
        for k, s in enumerate(sources):
            buf = bufs[k]
            n = statuses[k].Get_count(byte) >> 3
            if n < buf.shape[0]:
                out.append(buf[:n])
                continue
            msg = self.xp.concatenate([buf, _recv_sized(comm, s, tag + 40, pol, self.empty)])
            rbufs[s] = self.empty(self._grown(msg.shape[0]) + 1, np.int64)
            out.append(msg)
        if split:
            pol.wait(reqs[nrecv:], bulk)
        return out


def sendrecv_sized(comm: Any, send: np.ndarray, dest: int, source: int, tag: int) -> np.ndarray:
    """Send ``send`` to ``dest``; receive from ``source`` into an array of the message's length."""
    req = comm.Isend(send, dest=dest, tag=tag)
    wait = C.policy(comm)
    got = _recv_sized(comm, source, tag, wait)
    wait.wait(req)
    return got


def merge_pairs(recv: list[np.ndarray], skip: int, parents: np.ndarray, levels: np.ndarray,
                depth: int, visited: np.ndarray, new: np.ndarray, k: int,
                deg: np.ndarray, packed: bool = False) -> tuple[int, int]:
    """*Merge*: apply received ``(child, parent)`` pairs to this rank's piece.

    A child not yet visited takes the pair's parent and level ``depth`` and is
    listed in ``new`` from ``k`` on. ``recv[skip]`` (this rank's own, already
    applied) is passed over. ``packed``: a pair is one word
    (:func:`spbfs.mpi._kernels.pack_fits`), else two. Returns (new length,
    degree sum of the children taken).
    """
    degsum = 0
    for t, part in enumerate(recv):
        if t != skip and part.shape[0]:
            k, ds = K.apply_pairs(part, parents, levels, depth, visited, new, k, deg, packed)
            degsum += ds
    return k, degsum
