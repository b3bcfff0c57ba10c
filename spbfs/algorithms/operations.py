"""The operations the algebraic loops are written against: one process or the process grid.

Every loop of :mod:`spbfs.algorithms` that is not a fused compiled kernel
(PageRank's power iteration, FastSV, delta-stepping, Brandes' sweeps, the
multi-source search) is written once, against the few operations below, and
runs on one process (:class:`LocalOps`, arrays of the graph's backend:
numpy or cupy) or on the ``pr x pc`` grid (:class:`GridVectorOps`, this
rank's piece of every vector, products through
:class:`~spbfs.mpi.spmsv.GridOps`). A vector is always *this process's piece*:
the ``size`` vertices ``lo .. hi-1`` (the whole graph on one process), held
in ``xp`` arrays; ``ids`` of a sparse vector are piece-local (``0 .. size-1``).

=========================  ===============================================================
``mxv(x)``                 dense ``y = B +.× x`` (or a weighted block), this piece of ``y``
``mxsv(ids, vals)``        sparse ``y = B ⊕.⊗ x`` (``transpose``: ``Bᵀ``), reduced: one
                           entry per vertex, by ``reduce`` ("min" or "sum")
``mxsv_min_into(y, ...)``  ``y = min(y, B ⊕.⊗ x)`` into a dense piece (no merge first)
``mxsm(ids, s, vals)``     ``mxsv`` for ``k`` sparse columns (entries ``(vertex, column)``),
                           with an optional mask of the result (one process: not computed)
``allsum`` ``allmin``      reductions of a few numbers over the processes (one Allreduce;
``allmax``                 ``allmax`` elementwise over an array)
``lookup(x, gids)``        ``x[gids]`` by global id (a request/reply exchange on the grid)
``scatter_min``            ``x[gids] = min(x[gids], vals)`` by global id, repeated ids merged
``offset(count)``          this process's exclusive prefix of ``count`` and the total
``undirected_edges()``     the edges ``(v, u)`` of ``B ∨ Bᵀ`` without self-loops, ``v`` in
                           this piece (each edge once from each end)
``request(gids, answer)``  variable-length answers from the owners of ``gids`` (one
                           request/reply round on the grid)
``route_rows(cols)``       rows of int64 arrays sent to the owner of their first entry
=========================  ===============================================================

On the grid every method is collective: all ranks call it in the same order.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from semirings.backend import Backend, get_backend
from semirings.blocks import Block
from semirings.kernels import spmsv, spmv
from semirings.semiring import Semiring, plus_times
from semirings.vector import SparseVector
from spbfs.algorithms._common import symmetric_block
from spbfs.algorithms._grid import route_rows
from spbfs.algorithms._ops import SparseColumns, spgemm
from spbfs.mpi import comm as C
from spbfs.mpi.local import bfs_backend
from spbfs.mpi.local_array import array_local
from spbfs.mpi.spmsv import GridOps, product_sparse

__all__ = ["GridVectorOps", "LocalOps", "split_by_weight"]

_REDUCE = ("min", "sum")


def _check_reduce(reduce: str) -> None:
    if reduce not in _REDUCE:
        raise ValueError(f"reduce must be one of {_REDUCE}, got {reduce!r}")


def _merge(xp: Any, key: Any, vals: Any, reduce: str) -> tuple[Any, Any]:
    """One entry per distinct ``key`` (sorted), its values reduced with ``reduce``.

    ``vals`` None (a pattern) keeps one entry per key.
    """
    if key.shape[0] == 0:
        return key, vals
    if xp is np and vals is not None:
        # One stable (radix) sort of the int64 keys, then a segmented reduction.
        order = np.argsort(key, kind="stable")
        ks = key[order]
        starts = np.flatnonzero(np.concatenate(([True], ks[1:] != ks[:-1])))
        ufunc = np.minimum if reduce == "min" else np.add
        return ks[starts], ufunc.reduceat(vals[order], starts)
    if vals is None or reduce == "min":
        order = xp.argsort(key, kind="stable") if vals is None else xp.lexsort(
            xp.stack([vals, key]))
        ks = key[order]
        first = xp.ones(ks.shape[0], dtype=bool)
        first[1:] = ks[1:] != ks[:-1]
        pick = order[first]
        return key[pick], None if vals is None else vals[pick]
    uk, inv = xp.unique(key, return_inverse=True)
    sums = xp.bincount(inv.reshape(-1), weights=vals, minlength=uk.shape[0])
    return uk, sums.astype(vals.dtype, copy=False)


def split_by_weight(block: Block, delta: float) -> tuple[Block, Block]:
    """``(light, heavy)``: the entries of a weighted block with weight ``<= delta``, and the rest.

    Delta-stepping's edge split (Meyer and Sanders): light edges are relaxed
    again while a bucket fills, heavy ones once, when it is settled. Each part
    keeps the block's format, backend and entry order (a filter, no sort); a
    dcsc part lists only its non-empty columns.
    """
    light = block.data <= delta
    return _filtered(block, light), _filtered(block, ~light)


def _filtered(block: Block, keep: Any) -> Block:
    """The block of the entries where ``keep`` is True."""
    xp = block.backend.xp
    before = xp.zeros(keep.shape[0] + 1, dtype=np.int64)
    xp.cumsum(keep, out=before[1:])
    ptr = before[block.ptr.astype(np.int64)]  # kept entries before each column start
    jc = block.jc
    if jc is not None:
        full = xp.flatnonzero(ptr[1:] > ptr[:-1])
        jc = jc[full]
        ptr = xp.concatenate([ptr[full], ptr[-1:]])
    ind, data = block.ind[keep], block.data[keep]
    return type(block)(block.shape, ptr.astype(block.ptr.dtype, copy=False), ind, data, jc,
                       backend=block.backend)


class LocalOps:
    """The operations on one process, over the graph's backend (numpy or cupy arrays).

    Parameters
    ----------
    g : Graph
        The one-process graph; its out-block is ``B``, its in-block ``Bᵀ``.
    """

    def __init__(self, g: Any) -> None:
        self.g = g
        self.backend = g.backend
        self.xp = g.backend.xp
        self.n = self.size = self.hi = g.n
        self.lo = 0
        self.directed = g.directed
        #: Whether :meth:`mxsm` uses a mask (so that a loop builds one only then).
        self.masks = True

    def to_host(self, a: Any) -> np.ndarray:
        """A piece as a numpy array."""
        return self.backend.to_host(a)

    def ids(self) -> Any:
        """Global ids of this piece (int64)."""
        return self.xp.arange(self.lo, self.hi, dtype=np.int64)

    def out_degree(self) -> Any:
        """float64 out-degree of this piece's vertices."""
        return self.xp.asarray(self.g.out_degree).astype(np.float64)

    def block(self, transpose: bool = False) -> Block:
        """``B`` (``transpose``: ``Bᵀ``): the block this process multiplies by."""
        return self.g.in_block if transpose else self.g.out_block

    def mxv(self, x: Any, *, block: Block | None = None) -> Any:
        """Dense ``y = B +.× x`` (``block``: a weighted one instead of ``B``)."""
        share = spmv(self.block() if block is None else block, x, plus_times, check=False)
        y = self.xp.zeros(self.size)
        y[share.indices] = share.values
        return y

    def mxsv(self, ids: Any, vals: Any, semiring: Semiring, reduce: str, *,
             transpose: bool = False, block: Block | None = None) -> tuple[Any, Any]:
        """Sparse ``y = B ⊕.⊗ x`` as ``(ids, values)``, one entry per vertex.

        ``reduce`` is the semiring's addition ("min" or "sum"), which merges
        the partial results of the grid; ``block`` replaces ``B`` (a weighted
        block, or one part of it).
        """
        _check_reduce(reduce)
        b = self.block(transpose) if block is None else block
        y = spmsv(b, SparseVector(ids, vals, self.n, check=False), semiring, check=False)
        return y.indices, y.values.astype(vals.dtype, copy=False)

    def mxsv_min_into(self, into: Any, ids: Any, vals: Any, semiring: Semiring, *,
                      transpose: bool = False) -> None:
        """``into = min(into, B ⊕.⊗ x)`` for a dense piece ``into`` (a ``min`` semiring)."""
        r, v = self.mxsv(ids, vals, semiring, "min", transpose=transpose)
        into[r] = self.xp.minimum(into[r], v)

    def mxsm(self, ids: Any, sidx: Any, vals: Any, k: int, semiring: Semiring, reduce: str, *,
             transpose: bool = False, mask: Any = None) -> tuple[Any, Any, Any]:
        """``C = B ⊕.⊗ X`` for ``k`` sparse columns: entries ``(ids, sidx, vals)`` of ``C``.

        ``X`` has the entries ``(ids[q], sidx[q]) = vals[q]`` (``vals`` None: a
        pattern), sorted by column, then vertex (as :meth:`mxsm` returns them);
        ``C`` comes back one entry per ``(vertex, column)``, sorted so.
        ``mask`` (``(k, size)`` bool): entries where it is True are not wanted
        (the one-process product skips them; the grid's caller filters).
        """
        _check_reduce(reduce)
        xp = self.xp
        ptr = xp.searchsorted(sidx, xp.arange(k + 1, dtype=np.int64)).astype(np.int64)
        x = SparseColumns(ptr, ids, vals, self.n)
        c = spgemm(self.block(transpose), x, semiring, mask=mask, complement=mask is not None)
        out = None if vals is None else c.val.astype(vals.dtype, copy=False)
        return c.ind.astype(np.int64, copy=False), c.column_ids(xp), out

    def allsum(self, *vals: Any) -> np.ndarray:
        """The numbers themselves (float64): one process sums nothing."""
        return np.array([float(v) for v in vals], dtype=np.float64)

    def allsum_int(self, *vals: Any) -> np.ndarray:
        """The integers themselves (int64)."""
        return np.array([int(v) for v in vals], dtype=np.int64)

    def allmin(self, *vals: Any) -> np.ndarray:
        """The numbers themselves (float64)."""
        return np.array([float(v) for v in vals], dtype=np.float64)

    def allmax(self, a: Any) -> Any:
        """The array itself (elementwise maximum over the processes)."""
        return a

    def lookup(self, piece: Any, gids: Any) -> Any:
        """``x[gids]``."""
        return piece[gids]

    def scatter_min(self, piece: Any, gids: Any, vals: Any) -> None:
        """``x[gids] = min(x[gids], vals)``, repeated ids merged first."""
        g, v = _merge(self.xp, gids, vals, "min")
        piece[g] = self.xp.minimum(piece[g], v)

    def offset(self, count: int) -> tuple[int, int]:
        """``(0, count)``: the counts of the processes before this one, and of all."""
        return 0, int(count)

    def undirected_edges(self) -> tuple[Any, Any]:
        """``(v, u)``: the edges of the underlying undirected graph, int64 global ids.

        The entries of ``B ∨ Bᵀ`` without self-loops, each once (so each edge
        once from each end), ``v`` in this piece; no order promised.
        """
        block = symmetric_block(self.g)
        return block.column_ids().astype(np.int64, copy=False), block.ind.astype(np.int64)

    def request(self, gids: Any, answer: Any) -> tuple[Any, Any, Any]:
        """``(gids, *answer(gids))``: every id is this process's, so it answers itself.

        See :meth:`GridVectorOps.request`.
        """
        lengths, values = answer(gids)
        return gids, lengths, values

    def route_rows(self, cols: list[Any]) -> list[Any]:
        """``cols`` themselves: this process owns every vertex."""
        return cols


class GridVectorOps:
    """The operations on a rank of the process grid (collective), over this rank's pieces.

    The pieces live where the graph's backend computes: numpy arrays on the
    CPU engines, device arrays on each rank's GPU for ``backend="cupy"``
    (:func:`~spbfs.mpi.local.bfs_backend`: also ``auto`` where every rank has
    one). There the local products run on the device copies of the blocks
    the graph's array engine keeps
    (:meth:`~spbfs.mpi.local_array.ArrayLocal.semiring_product`, ``spgemm``),
    and data crosses to the host only at the exchanges: what a rank sends
    comes down in one transfer, what it received goes up in one.

    Parameters
    ----------
    g : DistGraph
        The distributed graph: ``B_ij`` is ``g.block``, ``(Bᵀ)`` is ``g.tblock``
        (``stored_block``, ``stored_tblock`` where they live).
    """

    def __init__(self, g: Any) -> None:
        self.g = g
        self.ops = GridOps(g)
        #: The array engine whose device holds the pieces; None: host pieces.
        self.local = array_local(g, "cupy") if bfs_backend(g.config, g.grid.comm,
                                                             graph=g) == "cupy" else None
        self.xp = np if self.local is None else self.local.xp
        self.n = g.n
        self.lo, self.hi = g.lo, g.hi
        self.size = self.ops.size
        self.directed = g.directed
        #: The products run before the fold: no mask to build (the caller filters).
        self.masks = False
        self.comm = g.grid.comm
        self._resident: dict[int, tuple[Block, Block]] = {}

    # -- where the pieces live ------------------------------------------------------------
    def to_host(self, a: Any) -> np.ndarray:
        """A piece as a numpy array."""
        return a if self.local is None else self.local.backend.to_host(a)

    def _host(self, *arrays: Any) -> list[np.ndarray]:
        """Pieces on the host for an exchange (one transfer from the device)."""
        return list(arrays) if self.local is None else self.local.down(*arrays)

    def _dev(self, *arrays: np.ndarray) -> list[Any]:
        """What an exchange brought, where the pieces live (one transfer to the device)."""
        return list(arrays) if self.local is None else self.local.up(*arrays)

    def _local(self, block: Block) -> Block:
        """``block`` where the local products run: the engine's copy of a graph block, or
        one made for this object's life (a weighted block's parts)."""
        if self.local is None or block.backend.xp is self.xp:
            return block
        g = self.g
        # The graph's blocks, as stored or as host views (made only where asked for:
        # never looked up here), are the engine's own.
        host = g.__dict__.get("tblock")
        if block is g.stored_tblock or block is host:
            return self.local.block(True)
        if block is g.stored_tblock._transpose or (host is not None and block is host._transpose):
            return self.local.block(False)
        kept = self._resident.get(id(block))
        if kept is None:  # the host block is kept with it, so its id stays its own
            kept = self._resident[id(block)] = (block, self.local.resident(block))
        return kept[1]

    def ids(self) -> Any:
        """Global ids of this piece (int64)."""
        return self.xp.arange(self.lo, self.hi, dtype=np.int64)

    def out_degree(self) -> Any:
        """float64 out-degree of this piece's vertices."""
        return self._dev(self.g.piece_degrees().astype(np.float64))[0]

    def block(self, transpose: bool = False) -> Block:
        """``B_ij`` (``transpose``: the block of ``Bᵀ``), as the graph holds it."""
        return self.g.stored_tblock if transpose else self.g.stored_block

    def _route(self, transpose: bool) -> bool:
        # Bᵀ = B on an undirected graph: the plain product, without the transposes.
        return bool(transpose and self.directed)

    # -- products ---------------------------------------------------------------------
    def mxv(self, x: Any, *, block: Block | None = None) -> Any:
        """Dense ``y = B +.× x``: expand, local SpMV, fold with sums."""
        xp = self.xp
        b = self._local(self.g.block if block is None else block)
        (xh,) = self._host(x)
        (xc,) = self._dev(self.ops.expand_dense(xh, 0.0))
        share = spmv(b, xc, plus_times, check=False)
        part = xp.zeros(b.shape[0])
        part[share.indices] = share.values
        (part,) = self._host(part)
        return self._dev(self.ops.fold_dense(part, "sum"))[0]

    def _product(self, block: Block, ids: Any, vals: Any, semiring: Semiring,
                 t: bool) -> tuple[Any, Any]:
        """The unreduced ``(piece ids, values)`` of one distributed SpMSV."""
        if self.local is None:
            return product_sparse(self.ops, block, ids, vals, semiring, transpose=t)
        hi, hv = self._host(ids, vals)
        r, v = self.ops.product(self._local(block), hi, hv, semiring, transpose=t,
                                local=self.local)
        r, v = self._dev(r, v)
        return r, v

    def mxsv(self, ids: Any, vals: Any, semiring: Semiring, reduce: str, *,
             transpose: bool = False, block: Block | None = None) -> tuple[Any, Any]:
        """Sparse ``y = B ⊕.⊗ x``: expand, local SpMSV, fold, merge with ``reduce``."""
        _check_reduce(reduce)
        t = self._route(transpose)
        b = self.block(t) if block is None else block
        r, v = self._product(b, ids, vals, semiring, t)
        v = v.astype(vals.dtype, copy=False)
        if self.local is not None or r.shape[0] * 8 < self.size:  # few: sort them
            return _merge(self.xp, r, v, reduce)
        # Many (a whole vector's products) on the host: scatter into the piece, no sort.
        touched = np.zeros(self.size, dtype=bool)
        touched[r] = True
        out = np.zeros(self.size, dtype=v.dtype)
        if reduce == "min":
            out[r] = v  # any of an id's values, then the least of them
            np.minimum.at(out, r, v)
        else:
            np.add.at(out, r, v)
        got = np.flatnonzero(touched)
        return got, out[got]

    def mxsv_min_into(self, into: Any, ids: Any, vals: Any, semiring: Semiring, *,
                      transpose: bool = False) -> None:
        """``into = min(into, B ⊕.⊗ x)`` for a dense piece: the fold's pieces go straight in."""
        t = self._route(transpose)
        r, v = self._product(self.block(t), ids, vals, semiring, t)
        v = v.astype(into.dtype, copy=False)
        if self.local is None:
            np.minimum.at(into, r, v)
            return
        r, v = _merge(self.xp, r, v, "min")
        into[r] = self.xp.minimum(into[r], v)

    def mxsm(self, ids: Any, sidx: Any, vals: Any, k: int, semiring: Semiring, reduce: str, *,
             transpose: bool = False, mask: Any = None) -> tuple[Any, Any, Any]:
        """``C = B ⊕.⊗ X`` for ``k`` sparse columns (see :meth:`LocalOps.mxsm`).

        One distributed SpGEMM: expand the sparse columns, local ``spgemm``,
        fold. The result is sorted by column, then vertex. The mask is left
        to the caller: the local products run before the fold.
        """
        _check_reduce(reduce)
        xp = self.xp
        t = self._route(transpose)
        extra = [sidx] if vals is None else [sidx, vals]
        sent = self._host(ids, *extra)
        cols, got = self.ops.expand_sparse(sent[0], sent[1:], transpose=t)
        cols, *got = self._dev(cols, *got)
        b = self._local(self.block(t))
        x = _sparse_columns(xp, cols, got[0], None if vals is None else got[1], k, b.shape[1])
        c = spgemm(b, x, semiring)
        out = [c.ind.astype(np.int64, copy=False), c.column_ids(xp).astype(np.int64)]
        if vals is not None:  # the same dtype on every rank, even for an empty local result
            out.append(c.val.astype(vals.dtype, copy=False))
        out = self._host(*out)
        r, back = self.ops.fold_sparse(out[0], out[1:], transpose=t)
        r, *back = self._dev(r, *back)
        m = max(self.size, 1)
        key, v = _merge(xp, back[0] * m + r, None if vals is None else back[1], reduce)
        return key % m, key // m, v

    # -- reductions and random access -------------------------------------------------
    def allsum(self, *vals: Any) -> np.ndarray:
        """Sum of a few numbers over all ranks (one Allreduce; float64)."""
        return self.ops.allsum(*(float(v) for v in vals))

    def allsum_int(self, *vals: Any) -> np.ndarray:
        """Sum of a few integers over all ranks (one Allreduce; int64)."""
        return self.ops.allsum_int(*(int(v) for v in vals))

    def allmin(self, *vals: Any) -> np.ndarray:
        """The least of each of a few numbers over all ranks (one Allreduce; float64)."""
        return C.allreduce(self.comm, np.array([float(v) for v in vals], dtype=np.float64),
                           "min")

    def allmax(self, a: Any) -> Any:
        """Elementwise maximum of a float64 array (host or piece) over all ranks (one Allreduce).

        The result lives where the pieces do.
        """
        h = a if isinstance(a, np.ndarray) else self._host(a)[0]
        return self._dev(C.allreduce(self.comm, np.ascontiguousarray(h, dtype=np.float64),
                                     "max"))[0]

    def lookup(self, piece: Any, gids: Any) -> Any:
        """``x[gids]`` by global id (request/reply Alltoallv)."""
        if self.g.grid.size == 1:
            return piece[gids - self.lo]
        return self._dev(self.ops.lookup(*self._host(piece, gids)))[0]

    def scatter_min(self, piece: Any, gids: Any, vals: Any) -> None:
        """``x[gids] = min(x[gids], vals)`` at the owners (one Alltoallv of merged pairs)."""
        xp = self.xp
        gids, vals = _merge(xp, gids, vals, "min")  # sorted ids: grouped by owner
        size = self.g.grid.size
        if size > 1:
            gids, vals = self._host(gids, vals.astype(np.int64))
            counts = np.bincount(self.g.dist.piece_of(gids), minlength=size).astype(np.int64)
            pairs = np.stack([gids, vals], axis=1).reshape(-1)
            got, _ = C.alltoallv(self.comm, pairs, 2 * counts)
            got = got.reshape(-1, 2)
            gids, vals = self._dev(got[:, 0].copy(), got[:, 1].copy())
        if self.local is None:
            np.minimum.at(piece, gids - self.lo, vals)
            return
        g, v = _merge(xp, gids - self.lo, vals, "min")  # each id once: a plain assignment
        piece[g] = xp.minimum(piece[g], v)

    def route_rows(self, cols: list[Any]) -> list[Any]:
        """Send row ``x`` of the int64 arrays ``cols`` to the owner of vertex ``cols[0][x]``.

        Returns what arrived, where the pieces live (one Alltoallv; host
        arrays are taken as they are, device ones come down in one transfer).
        """
        host = cols if isinstance(cols[0], np.ndarray) else self._host(*cols)
        return self._dev(*route_rows(self.comm, self.g.dist.piece_of(host[0]), host))

    def offset(self, count: Any) -> tuple[int, int]:
        """This rank's exclusive prefix of ``count`` over the ranks, and the total."""
        grid = self.g.grid
        counts = C.allgatherv(self.comm, np.array([int(count)], dtype=np.int64),
                              np.ones(grid.size, dtype=np.int64))
        return int(counts[:grid.rank].sum()), int(counts.sum())

    @property
    def backend(self) -> Backend:
        """The backend of this rank's local kernels: the device's, or the host engine's."""
        if self.local is not None:
            return self.local.backend
        return get_backend(bfs_backend(self.g.config, self.comm, graph=self.g))

    def undirected_edges(self) -> tuple[Any, Any]:
        """``(v, u)``: the edges of the underlying undirected graph at this piece (collective).

        See :meth:`LocalOps.undirected_edges`. Read from the block every rank
        stores (``tblock``, ``B_ij`` transposed: no second block is built), both
        directions sent to the owner of ``v`` in one Alltoallv, repeated
        entries merged there (where the pieces live).
        """
        g, d = self.g, self.g.dist
        tb = g.stored_tblock
        to_host = tb.backend.to_host
        rows = d.global_rows(to_host(tb.column_ids()), g.grid.i)
        cols = d.global_cols(to_host(tb.ind), g.grid.j)
        keep = rows != cols
        rows, cols = rows[keep], cols[keep]
        v, u = self.route_rows([np.concatenate([rows, cols]), np.concatenate([cols, rows])])
        key = self.xp.unique(v * self.n + u)
        return key // self.n, key % self.n

    def request(self, gids: Any, answer: Any) -> tuple[Any, Any, Any]:
        """Variable-length answers from the owners of the distinct ``gids`` (collective).

        :meth:`GridOps.request <spbfs.mpi.spmsv.GridOps.request>` over this rank's
        pieces: ``answer(asked)`` gets the ids asked of this rank (int64 global
        ids, where the pieces live) and returns ``(lengths, values)``:
        ``lengths[x]`` int64 values for ``asked[x]``, concatenated in order.

        Returns
        -------
        gids, lengths, values
            The distinct ids (sorted), the number of values of each, and the
            values concatenated in that order, where the pieces live.
        """
        def on_host(asked: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            return tuple(self._host(*answer(*self._dev(asked))))  # type: ignore[return-value]

        return tuple(self._dev(*self.ops.request(*self._host(gids), on_host)))  # type: ignore[return-value]


def _sparse_columns(xp: Any, rows: Any, cols: Any, vals: Any, k: int,
                    nrows: int) -> SparseColumns:
    """``(rows, cols, vals)`` triples (distinct) as a CSC matrix with ``k`` columns."""
    order = xp.lexsort(xp.stack([rows, cols]))
    ptr = xp.zeros(k + 1, dtype=np.int64)
    ptr[1:] = xp.cumsum(xp.bincount(cols, minlength=k))
    return SparseColumns(ptr, rows[order], None if vals is None else vals[order], nrows)
