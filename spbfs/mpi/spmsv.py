"""The grid's SpMSV in phases: vector movement on the 2D grid and the distributed product.

A :class:`~spbfs.mpi.DistGraph` on a ``pr x pc`` grid stores on rank
``(i, j)`` the block ``B_ij`` (rows: row chunk ``i``, columns: column chunk
``j``, padded local ids) and owns vector piece ``k = i * pc + j`` (global ids
``lo .. hi-1``, padded to ``B64`` local ids). A product ``y = B ⊕.⊗ x`` is

1. *expand*: the piece goes to the rank holding it in the column layout
   (``transpose_dest``), then an Allgatherv down the processor column
   assembles column chunk ``j`` of ``x``;
2. the local product on ``B_ij``, which gives partial results for row chunk
   ``i``;
3. *fold*: the partial results go along the processor row to their owners
   (row chunk ``i`` is exactly the pieces of the processor row), where they
   are reduced with the semiring's addition.

The transposed product ``y = Bᵀ ⊕.⊗ x`` (in-edges of a directed graph) runs
on ``tblock`` (``B_ij`` transposed): expand along the processor *row* (no
transpose), local product, fold down the processor *column* into the column
layout and transpose back to the owners.

Dense vectors move as padded pieces (Allgatherv and Reduce_scatter_block);
sparse ones as (id, value, ...) rows packed into int64 words (float64 values
are carried bit for bit), with Allgatherv and Alltoallv. Every function here
is collective over the graph's grid. The communication goes through
:mod:`spbfs.mpi.comm` (nonblocking calls completed under its wait policy).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from semirings.blocks import Block
from semirings.kernels import spmsv
from semirings.vector import SparseVector
from spbfs.mpi import comm as C

__all__ = ["GridOps", "product_sparse"]

_TAG_COUNT = 41
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


class GridOps:
    """Expand and fold of dense and sparse vectors over a DistGraph's grid.

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
    """

    def __init__(self, g: Any) -> None:
        self.g = g
        self.grid = g.grid
        self.d = g.dist
        self.B = self.d.B64
        self.lo, self.hi = g.lo, g.hi
        self.size = self.hi - self.lo

    # -- small collectives -------------------------------------------------------------
    def allsum(self, *vals: float | int) -> np.ndarray:
        """Sum of a few numbers over all ranks (one Allreduce; float64)."""
        return C.allreduce(self.grid.comm, np.array(vals, dtype=np.float64))

    def allsum_int(self, *vals: int) -> np.ndarray:
        """Sum of a few integers over all ranks (one Allreduce; int64)."""
        return C.allreduce(self.grid.comm, np.array(vals, dtype=np.int64))

    def _allgather_count(self, comm: Any, m: int) -> np.ndarray:
        size = comm.Get_size()
        return C.allgatherv(comm, np.array([m], dtype=np.int64), np.ones(size, np.int64))

    def _exchange(self, buf: np.ndarray, dest: int, source: int) -> np.ndarray:
        """Send a (m, w) array to ``dest`` and receive one of unknown length from ``source``."""
        comm = self.grid.comm
        if dest == self.grid.rank and source == dest:
            return buf
        w = buf.shape[1]
        cnt = np.empty(1, dtype=np.int64)
        C.sendrecv(comm, np.array([buf.shape[0]], dtype=np.int64), dest, cnt, source,
                   tag=_TAG_COUNT)
        out = np.empty((int(cnt[0]), w), dtype=np.int64)
        C.sendrecv(comm, np.ascontiguousarray(buf), dest, out, source, tag=_TAG_DATA)
        return out

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
        grid = self.grid
        x = self.pad(np.asarray(piece), fill)
        if transpose:
            comm = grid.row_comm
        else:
            comm = grid.col_comm
            if grid.transpose_dest != grid.rank:
                got = np.empty_like(x)
                C.sendrecv(grid.comm, x, grid.transpose_dest, got, grid.transpose_src,
                           tag=_TAG_DATA)
                x = got
        size = comm.Get_size()
        if size == 1:
            return x
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
        if comm.Get_size() == 1:
            mine = part[:self.B].copy()
        else:
            MPI = C.mpi()
            mop = {"sum": MPI.SUM, "min": MPI.MIN, "max": MPI.MAX}[op]
            mine = np.empty(self.B, dtype=part.dtype)
            C.policy().wait(comm.Ireduce_scatter_block(part, mine, op=mop))
        if transpose and grid.transpose_src != grid.rank:
            got = np.empty_like(mine)
            C.sendrecv(grid.comm, mine, grid.transpose_src, got, grid.transpose_dest,
                       tag=_TAG_DATA)
            mine = got
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
        grid = self.grid
        buf, dts = _pack([np.asarray(ids, dtype=np.int64), *values])
        if transpose:
            comm = grid.row_comm
        else:
            comm = grid.col_comm
            buf = self._exchange(buf, grid.transpose_dest, grid.transpose_src)
        size = comm.Get_size()
        w = buf.shape[1]
        if size == 1:
            cols = _unpack(buf, dts)
            return cols[0], cols[1:]
        counts = self._allgather_count(comm, buf.shape[0])
        flat = C.allgatherv(comm, buf.reshape(-1), counts * w).reshape(-1, w)
        cols = _unpack(flat, dts)
        cols[0] += np.repeat(np.arange(size, dtype=np.int64) * self.B, counts)
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
        comm = grid.col_comm if transpose else grid.row_comm
        rows = np.asarray(rows, dtype=np.int64)
        buf, dts = _pack([rows, *values])
        size = comm.Get_size()
        w = buf.shape[1]
        if size > 1:
            seg = rows // self.B
            order = np.argsort(seg, kind="stable")
            counts = np.bincount(seg, minlength=size).astype(np.int64)
            recv, _ = C.alltoallv(comm, buf[order].reshape(-1), counts * w)
            buf = recv.reshape(-1, w)
        if transpose:
            buf = self._exchange(buf, grid.transpose_src, grid.transpose_dest)
        cols = _unpack(buf, dts)
        return cols[0] % self.B, cols[1:]

    # -- random access -----------------------------------------------------------------
    def lookup(self, piece: np.ndarray, gids: np.ndarray) -> np.ndarray:
        """``x[gids]`` for a distributed vector ``x`` (this rank's ``piece`` of it).

        One request and one reply Alltoallv over all ranks; each distinct id is
        asked for once.
        """
        grid = self.grid
        gids = np.asarray(gids, dtype=np.int64)
        if grid.size == 1:
            return piece[gids - self.lo]
        uniq, back = np.unique(gids, return_inverse=True)
        owner = self.d.piece_of(uniq)
        counts = np.bincount(owner, minlength=grid.size).astype(np.int64)
        asked, rcounts = C.alltoallv(grid.comm, uniq, counts)  # uniq is sorted by owner
        reply, _ = C.alltoallv(grid.comm, piece[asked - self.lo], rcounts)
        return reply[back]


def product_sparse(ops: GridOps, block: Block, ids: np.ndarray, vals: np.ndarray,
                    semiring: Any, *, transpose: bool,
                    backend: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """One distributed SpMSV ``y = B ⊕.⊗ x``: expand, local multiply, fold.

    ``ids`` and ``vals`` are this rank's piece of the sparse ``x`` (piece-local
    ids); ``transpose`` multiplies by ``Bᵀ`` (``block`` is then ``tblock``);
    ``backend`` runs the local product on another host backend than the
    block's (``"numba"``: a user semiring without a vectorized form).
    Returns the unreduced ``(piece ids, values)`` sent to this rank: an id
    may repeat, the caller merges with the semiring's addition.
    """
    # Every rank packs the same dtypes (an empty local result may come back in another).
    dt = vals.dtype
    cols, (xv,) = ops.expand_sparse(ids, [vals], transpose=transpose)
    y = spmsv(block, SparseVector(cols, xv, block.shape[1], check=False), semiring,
              backend=backend, check=False)
    r, (yv,) = ops.fold_sparse(np.asarray(y.indices, dtype=np.int64),
                               [np.asarray(y.values).astype(dt, copy=False)],
                               transpose=transpose)
    return r, yv
