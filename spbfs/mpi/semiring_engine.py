"""The generic engine on the 2D grid: a traversal over any semiring, one product per level.

The grid twin of :mod:`spbfs.search.semiring_engine`, built from the phases of
:mod:`spbfs.mpi.spmsv` and run by the same level loop
(:func:`spbfs.search.driver.run_levels`). Every rank owns the values, levels
and visited flags of its piece (vertices ``lo .. hi-1``); the frontier is
the piece's newly reached vertices, as sorted piece-local ids.

top-down (push)
    :meth:`~spbfs.mpi.spmsv.GridOps.product`: the frontier's ``(id, value)``
    pairs are expanded down the processor column, multiplied by ``B_ij`` and
    the partial results folded along the processor row to the owners. The
    local product is not masked (a rank does not know which rows of its
    row chunk other ranks have reached); the owner drops its visited
    vertices and merges the rest with the semiring's addition.
bottom-up (pull)
    the frontier is expanded as for a push and spread into a dense vector of
    the column chunk with a ``present`` bitmap; the visited flags of the row
    chunk are gathered along the processor row
    (:meth:`~spbfs.mpi.spmsv.GridOps.expand_dense`, padding counted as
    visited) and mask a pull (:func:`semirings.kernels.spmv`,
    ``method="pull"``, over the cached ``tblock``); the results are folded
    and merged as for a push.

The local multiplies run on the rank's array engine
(:meth:`spbfs.mpi.local_array.ArrayLocal.semiring_product`, one per graph and backend):
``backend="numpy"`` the semiring package's numpy kernels, ``"cupy"`` its cupy
kernels on the rank's GPU (the blocks copied there; a grid where some rank
has no usable GPU raises :class:`~spbfs.mpi.CollectiveError` naming
``backend`` on every rank, :func:`spbfs.mpi.local.bfs_backend`), ``"auto"``
and ``"numba"`` its numba kernels on the host blocks.

A level's counts (new vertices, their degrees, edges scanned, target hit)
are summed with one Allreduce in :meth:`GridSemiringEngine.reduce`. Edges
scanned: a push, the out-edges of the frontier; a pull, the edges of the
unvisited rows of every block (the in-edges of the unvisited vertices; an
upper bound for an ``any`` monoid, whose pull stops a row sooner). Both are
the one-process engine's counts.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from semirings.semiring import Semiring
from spbfs.config import Config
from spbfs.mpi import comm as C
from spbfs.mpi.graph import DistGraph
from spbfs.mpi.local import bfs_backend
from spbfs.mpi.local_array import array_local
from spbfs.mpi.result import DistBFSResult
from spbfs.mpi.spmsv import GridOps
from spbfs.search.driver import run_levels
from spbfs.search.semiring_engine import (
    block_dtype,
    merge_duplicates,
    traversal_policy,
    value_dtype,
)

__all__ = ["GridSemiringEngine", "semiring_bfs"]


def _row_counts(tblock: Any) -> np.ndarray:
    """Entries per row of ``B_ij`` (the columns of its transpose), int64."""
    counts = np.zeros(tblock.shape[1], dtype=np.int64)
    to_host = tblock.backend.to_host  # a block built on the device: its lengths come over
    lens = to_host(tblock.backend.xp.diff(tblock.ptr)).astype(np.int64)
    if tblock.format == "dcsc":
        counts[to_host(tblock.jc).astype(np.int64)] = lens
    else:
        counts[:] = lens
    return counts


class GridSemiringEngine:
    """One rank's part of a semiring traversal: the driver's :class:`~spbfs.search.driver.Engine`.

    Parameters
    ----------
    g : DistGraph
        The distributed graph.
    semiring : Semiring
        The traversal semiring.
    vdt : numpy.dtype
        The values' dtype (int64 or float64, see
        :func:`spbfs.search.semiring_engine.value_dtype`).
    source_value : scalar
        The source's value.
    backend : str
        Backend of the local products (``"numba"``, ``"numpy"`` or ``"cupy"``).
    """

    #: Every level synchronizes the grid: no compiled run of levels.
    topdown_levels = None

    def __init__(self, g: DistGraph, semiring: Semiring, vdt: np.dtype, source_value: Any,
                 backend: str) -> None:
        self.g = g
        self.ops = GridOps(g)
        self.n = g.n
        self.total_degree = g.total_degree
        self.semiring = semiring
        self.vdt = vdt
        self.source_value = source_value
        self.backend = backend
        self.local = array_local(g, backend)
        size = self.ops.size
        self.deg = g._deg
        self.visited = np.zeros(size, dtype=bool)
        self.levels = np.full(size, -1, dtype=np.int64)
        self.values = np.full(size, semiring.identity_for(vdt), dtype=vdt)
        self.rows = _row_counts(g.stored_tblock)
        self.cnt = self.ops.cnt
        self.stepped = False  # a level ran since the last reduce

    def start(self, source: int) -> tuple[np.ndarray, int]:
        """Give ``source`` level 0 and ``source_value`` on its owner."""
        lo, hi = self.g.lo, self.g.hi
        if not lo <= source < hi:
            return np.zeros(0, dtype=np.int64), 0
        ls = source - lo
        self.visited[ls] = True
        self.levels[ls] = 0
        self.values[ls] = self.source_value
        return np.array([ls], dtype=np.int64), int(self.deg[ls])

    def reached(self, v: int) -> bool:
        """Whether ``v`` is this rank's and was reached."""
        lo = self.g.lo
        return lo <= v < self.g.hi and bool(self.visited[v - lo])

    def reduce(self, count: int, degsum: int, scanned: int, hit: int) -> list[int]:
        """The level's counts summed over the grid (one Allreduce)."""
        red = self.ops.allsum_int(count, degsum, scanned, hit).tolist()
        if self.stepped:  # the start's Allreduce is counted with level 1
            self.cnt.close_level()
            self.stepped = False
        return red

    def _update(self, rows: np.ndarray, vals: np.ndarray, depth: int) -> tuple[np.ndarray, int,
                                                                                 int]:
        """Merge what the fold brought; mark the new vertices. (frontier, count, degree sum)."""
        keep = ~self.visited[rows]
        ids, vals = merge_duplicates(rows[keep], vals[keep], self.semiring.add, self.vdt)
        self.visited[ids] = True
        self.levels[ids] = depth
        self.values[ids] = vals
        return ids, int(ids.shape[0]), int(self.deg[ids].sum())

    def topdown(self, frontier: np.ndarray, depth: int) -> tuple[np.ndarray, int, int, int]:
        """Push: expand, local SpMSV, fold, merge."""
        rows, vals = self.ops.product(self.g.stored_block, frontier, self.values[frontier],
                                      self.semiring, transpose=False, local=self.local)
        scanned = int(self.deg[frontier].sum())
        ids, count, degsum = self._update(rows, vals, depth)
        self.stepped = True
        return ids, count, scanned, degsum

    def bottomup(self, frontier: np.ndarray, depth: int) -> tuple[np.ndarray, int, int, int]:
        """Pull: expand the frontier and the row chunk's visited flags, masked SpMV, fold."""
        ops = self.ops
        cols, (xv,) = ops.expand_sparse(frontier, [self.values[frontier]])
        # As bytes: padding rows count as visited, so the pull skips them.
        done = ops.expand_dense(self.visited.view(np.uint8), 1, transpose=True).view(bool)
        scanned = int(self.rows[~done].sum())
        rows, vals = self.local.semiring_product(cols, xv, self.semiring, self.vdt, done=done)
        rows, (vals,) = ops.fold_sparse(rows, [vals])
        ids, count, degsum = self._update(rows, vals, depth)
        self.stepped = True
        return ids, count, scanned, degsum


def _prepare(g: DistGraph, cfg: Config, semiring: Semiring, source_value: Any,
             out: Any) -> tuple[np.dtype, str]:
    """The values' dtype and the local backend, or the reason the grid refuses them."""
    if out is not None:
        raise ValueError("out holds the fast search's parents and levels; a semiring "
                         "traversal allocates its own arrays (leave out out)")
    if semiring.mul.position is not None:
        # Kernel offsets give global ids on one block of a row, not on padded grid blocks.
        raise ValueError(f"semiring {semiring.name!r}: positional operators "
                         f"({semiring.mul.name}) are not supported on the grid")
    backend = bfs_backend(cfg, g.grid.comm, graph=g)
    if backend != "numba":
        semiring.check_vectorizable()
    return value_dtype(semiring, block_dtype(g.stored_block), source_value), backend


def semiring_bfs(g: DistGraph, source: int, cfg: Config, semiring: Semiring, source_value: Any,
                 max_depth: int | None, target: int | None, out: Any = None) -> DistBFSResult:
    """A traversal over ``semiring`` on the grid (collective; other arguments checked).

    Returns
    -------
    DistBFSResult
        This rank's ``levels`` and ``values`` (the semiring's additive identity
        where unreached), ``parents`` None; messages and words per phase
        in ``stats.extra`` as for the BFS (times per phase are not split).

    Raises
    ------
    CollectiveError
        On every rank for ``out``, a positional operator, values neither
        integers nor floats, (backend ``"numpy"`` or ``"cupy"``) a semiring
        without a vectorized form, or backend ``"cupy"`` where some rank has
        no usable GPU.
    """
    try:
        vdt, backend = _prepare(g, cfg, semiring, source_value, out)
    except (TypeError, ValueError) as exc:
        # The same arguments on every rank: every rank raises the same error.
        raise C.CollectiveError(str(exc)) from None
    engine = GridSemiringEngine(g, semiring, vdt, source_value, backend)
    policy = traversal_policy(cfg, semiring, vdt)
    t_start = time.perf_counter()
    run = run_levels(engine, policy, source, max_depth, target)
    seconds = time.perf_counter() - t_start
    grid = g.grid
    msgs, words, phase_seconds = engine.cnt.summed(grid.comm)
    return DistBFSResult(source=source, parents=None, levels=engine.levels, lo=g.lo, hi=g.hi,
                         n=g.n, stats=run.log.stats({"messages": msgs, "words": words}),
                         seconds=seconds, stopped=run.stopped, phase_seconds=phase_seconds,
                         config=cfg, grid_shape=(grid.pr, grid.pc), values=engine.values,
                         _comm=grid.comm)
