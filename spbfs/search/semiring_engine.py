"""The generic engine: a breadth-first traversal over any semiring, on one process.

A level is one masked product over the traversal's semiring ``(⊕, ⊗)``. The
frontier carries a value per vertex (the source starts with ``source_value``),
and a vertex reached at level ``d`` gets

    ``value[v] = ⊕ { B[v, u] ⊗ value[u] : u -> v, u reached at level d - 1 }``

and keeps it: later levels never touch a visited vertex. Over ``plus_second``
(``⊗`` passes the frontier value on, ``⊕`` adds) the value is the number of
shortest paths from the source (sigma of Brandes' betweenness).

Both directions compute that same value, so the search runs whichever
direction the driver's :class:`~spbfs.direction.DirectionPolicy` chooses:

top-down (push)
    :func:`semirings.kernels.spmsv` over the out-block with the frontier as a
    sparse vector, masked by the complement of the visited vertices;
bottom-up (pull)
    :func:`semirings.kernels.spmv` with ``method="pull"``: every unvisited
    vertex reduces over its in-edges (the rows of the out-block, read through
    its cached transpose, which the numba backend builds on the first pull),
    the frontier given as ``present``.

The fused fast kernels (:mod:`spbfs.search.numba_engine`) stop a bottom-up row at
the first parent. A generic pull stops a row early only at the monoid's terminal
value: always for ``any``, practically never for the others (``plus`` has none;
``min``'s is the smallest integer), which read every in-edge of every unvisited
vertex. For those the policy's ``alpha`` is capped at 1 (see
:func:`traversal_policy`): the search pulls only once the frontier's edges
outnumber those of the unvisited vertices.

The values are ``int64`` or ``float64`` (:func:`value_dtype`): one dtype on one
process and on the grid, where they travel as 64-bit words.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from semirings.backend import get_backend
from semirings.kernels import spmsv, spmv
from semirings.ops import Monoid
from semirings.semiring import Semiring
from semirings.vector import SparseVector
from spbfs.config import Config
from spbfs.direction import DirectionPolicy
from spbfs.result import BFSResult
from spbfs.search.driver import LocalEngine, run_levels

__all__ = ["SemiringEngine", "combine", "merge_duplicates", "semiring_search",
           "traversal_policy", "value_dtype"]


def block_dtype(block: Any) -> np.dtype:
    """dtype of a block's entries (bool for a pattern: every entry is True)."""
    return np.dtype(np.bool_) if block.data is None else np.dtype(block.data.dtype)


def _wide(dt: np.dtype) -> np.dtype:
    """The 64-bit dtype values of ``dt`` are kept in (bools and integers: int64)."""
    if dt.kind == "f":
        return np.dtype(np.float64)
    if dt.kind in "biu":
        return np.dtype(np.uint64) if dt == np.uint64 else np.dtype(np.int64)
    raise TypeError(f"traversal values must be integers or floats, got dtype {dt}")


def value_dtype(semiring: Semiring, a_dtype: Any, source_value: Any) -> np.dtype:
    """The dtype of a traversal's values: the source's, widened to 64 bits, kept by a level.

    A level's product has ``semiring.output_dtype(a_dtype, x dtype)``; the
    values are stored widened to 64 bits (``lor`` yields bool, stored as int64)
    and that must be a fixed point, so that every level carries the same dtype.

    Raises
    ------
    TypeError
        When the values are neither integers nor floats, or a level would
        change their dtype again and again.
    """
    a_dtype = np.dtype(a_dtype)
    vdt = _wide(np.asarray(source_value).dtype)
    for _ in range(4):
        nxt = _wide(semiring.output_dtype(a_dtype, vdt))
        if nxt == vdt:
            return vdt
        vdt = nxt
    raise TypeError(f"semiring {semiring.name!r}: a level changes the dtype of the values "
                    f"every time (last {vdt}); give a dtype to Semiring.from_callables")


def combine(add: Monoid, a: np.ndarray, b: np.ndarray, dtype: np.dtype) -> np.ndarray:
    """``a ⊕ b`` elementwise, as ``dtype`` (host arrays)."""
    uf = add.ufunc_for(np)
    if uf is not None:
        return np.asarray(uf(a, b)).astype(dtype, copy=False)
    if add.terminal_is_any:
        return a  # any term is a valid result: keep the first, as the kernels do
    # A user's scalar function: one Python call per pair (only ids that repeat get here).
    return np.frompyfunc(add.op, 2, 1)(a, b).astype(dtype)


def merge_duplicates(ids: np.ndarray, vals: np.ndarray, add: Monoid,
                     dtype: np.dtype) -> tuple[np.ndarray, np.ndarray]:
    """Sorted distinct ``ids``, each with the ``⊕`` of its values (host arrays).

    Pairs neighbours within each run of equal ids, ``log2`` of the longest run
    times: a grid's fold brings an id at most once per sending rank, so a few
    rounds, each one vectorized ``⊕`` (any monoid, a user's too).
    """
    order = np.argsort(ids, kind="stable")
    ids, vals = ids[order], vals[order].astype(dtype, copy=False)
    while ids.shape[0] > 1:
        same = ids[1:] == ids[:-1]
        if not same.any():
            break
        k = np.arange(ids.shape[0])
        first = np.ones(ids.shape[0], dtype=bool)
        first[1:] = ~same
        rank = k - np.maximum.accumulate(np.where(first, k, 0))  # place within its run
        left = np.flatnonzero((rank % 2 == 0)[:-1] & same)  # has a right partner
        vals = vals.copy()
        vals[left] = combine(add, vals[left], vals[left + 1], dtype)
        keep = np.ones(ids.shape[0], dtype=bool)
        keep[left + 1] = False
        ids, vals = ids[keep], vals[keep]
    return ids, vals


def traversal_policy(cfg: Config, semiring: Semiring, vdt: np.dtype,
                     gamma: float = DirectionPolicy.gamma) -> DirectionPolicy:
    """The direction policy of a semiring traversal: the config's, ``alpha`` capped at 1.

    Beamer's ``alpha`` bets that a pull stops a row at its first frontier
    neighbour. Only an ``any`` monoid does (a terminal value such as ``min``'s
    smallest integer is practically never met); with the others a pull reads
    all ``m_u`` in-edges of the unvisited vertices where a push reads the
    frontier's ``m_f``, so the search pulls only once ``m_f > m_u``. A forced
    direction is kept.
    """
    alpha = cfg.alpha
    if not semiring.add.terminal_is_any:
        alpha = min(alpha, 1.0)
    return DirectionPolicy(cfg.direction, alpha, cfg.beta, gamma)


class SemiringEngine(LocalEngine):
    """The :class:`~spbfs.search.driver.Engine` of a traversal over any semiring.

    Frontiers are sorted id arrays; their values are read from ``values``
    (a vertex's value is final once it is reached).

    Parameters
    ----------
    backend : Backend
        Kernel backend (numpy, numba or cupy); the blocks live on it.
    out_block, in_block : Block
        The blocks pushed and pulled over (swapped for ``reverse``).
    deg, in_deg : array
        Degrees in the search direction (out-degrees) and against it.
    semiring : Semiring
        The traversal semiring.
    vdt : numpy.dtype
        The values' dtype (:func:`value_dtype`).
    source_value : scalar
        The source's value.
    """

    #: Every level goes through the driver (no compiled run of levels).
    topdown_levels = None

    def __init__(self, backend: Any, out_block: Any, in_block: Any, deg: Any, in_deg: Any,
                 semiring: Semiring, vdt: np.dtype, source_value: Any) -> None:
        xp = self.xp = backend.xp
        self.backend = backend
        self.out_block = out_block
        self.in_block = in_block
        self.deg = deg
        self.in_deg = in_deg
        self.semiring = semiring
        self.vdt = vdt
        self.source_value = source_value
        n = self.n = out_block.shape[0]
        self.total_degree = int(deg.sum())
        self.visited = xp.zeros(n, dtype=bool)
        self.levels = xp.full(n, -1, dtype=np.int64)
        self.values = xp.full(n, semiring.identity_for(vdt), dtype=vdt)
        # In-edges of the unvisited vertices: what a pull reads.
        self.m_in = int(in_deg.sum())

    def start(self, source: int) -> tuple[Any, int]:
        """Give ``source`` level 0 and ``source_value``; it is the first frontier."""
        self.visited[source] = True
        self.levels[source] = 0
        self.values[source] = self.source_value
        self.m_in -= int(self.in_deg[source])
        return self.xp.asarray([source], dtype=np.int64), int(self.deg[source])

    def reached(self, v: int) -> bool:
        """Whether ``v`` was reached."""
        return bool(self.visited[v])

    def unvisited_in_edges(self) -> int | None:
        """The in-edges of the unvisited vertices (None where every edge goes both ways)."""
        return None if self.in_deg is self.deg else self.m_in

    def _mark(self, y: SparseVector, depth: int) -> tuple[Any, int, int]:
        ids = y.indices
        self.visited[ids] = True
        self.levels[ids] = depth
        self.values[ids] = y.values
        self.m_in -= int(self.in_deg[ids].sum())
        return ids, int(ids.shape[0]), int(self.deg[ids].sum())

    def topdown(self, frontier: Any, depth: int) -> tuple[Any, int, int, int]:
        """Push: the frontier's values through the out-block, unvisited rows only."""
        x = SparseVector(frontier, self.values[frontier], self.n, check=False)
        y = spmsv(self.out_block, x, self.semiring, mask=self.visited, complement=True,
                  backend=self.backend, check=False)
        # A push reads every out-edge of the frontier, masked or not.
        scanned = int(self.deg[frontier].sum())
        ids, count, degsum = self._mark(y, depth)
        return ids, count, scanned, degsum

    def bottomup(self, frontier: Any, depth: int) -> tuple[Any, int, int, int]:
        """Pull: every unvisited vertex reduces over its in-edges from the frontier."""
        present = self.xp.zeros(self.n, dtype=bool)
        present[frontier] = True
        # Counted before the level: the in-edges of every vertex the pull visits, all
        # read unless a terminal value ends a row (any: an upper bound, it stops sooner).
        scanned = self.m_in
        y = spmv(self.out_block, self.values, self.semiring, mask=self.visited,
                 complement=True, present=present, backend=self.backend, method="pull",
                 check=False)
        ids, count, degsum = self._mark(y, depth)
        return ids, count, scanned, degsum


def semiring_search(g: Any, source: int, cfg: Config, semiring: Semiring, source_value: Any,
                    max_depth: int | None, target: int | None, reverse: bool) -> BFSResult:
    """A traversal over ``semiring`` of the one-process graph ``g`` (arguments checked).

    Returns
    -------
    BFSResult
        ``levels`` and ``values`` (the semiring's additive identity where
        unreached), ``parents`` None.

    Raises
    ------
    TypeError
        For values of an unsupported dtype (:func:`value_dtype`), or a semiring
        the numpy/cupy backend cannot run.
    """
    backend = get_backend(cfg.backend)
    out_block, in_block = (g.in_block, g.out_block) if reverse else (g.out_block, g.in_block)
    deg, in_deg = (g.in_degree, g.out_degree) if reverse else (g.out_degree, g.in_degree)
    vdt = value_dtype(semiring, block_dtype(out_block), source_value)
    if backend.name != "numba":
        semiring.check_vectorizable()  # before the search, not at its first level
    engine = SemiringEngine(backend, out_block, in_block, deg, in_deg, semiring, vdt,
                            source_value)
    # As the fused search: no first-sweep guard on a GPU.
    gamma = float("inf") if backend.is_gpu else DirectionPolicy.gamma
    policy = traversal_policy(cfg, semiring, vdt, gamma)
    t_start = time.perf_counter()
    run = run_levels(engine, policy, source, max_depth, target)
    seconds = time.perf_counter() - t_start
    to_host = backend.to_host
    return BFSResult(source=source, parents=None, levels=to_host(engine.levels),
                     stats=run.log.stats(), seconds=seconds, config=cfg, stopped=run.stopped,
                     values=to_host(engine.values))
