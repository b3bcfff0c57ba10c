"""The level loop of every breadth-first search, and what an engine provides to it.

One process (numba or numpy), a GPU (cupy) and a pr x pc MPI grid run the same
loop: the argument checks, the direction chosen each level by one
:class:`~spbfs.direction.DirectionPolicy`, the ``max_depth`` and ``target``
stops and the per-level record are written once, here. An *engine* does the
levels: it owns the frontier, the parents and levels, and the kernels.

Counts the direction policy needs (the new frontier's size and degree sum, the
edges scanned, whether the target was reached) are this process's own after a
step; :meth:`Engine.reduce` makes them global. It is the identity on one
process and one Allreduce on a grid, which is also where a grid completes the
frontier exchange it posted at the end of the step.

Per-level Python is a handful of calls: a road network runs a thousand levels
of a few dozen vertices. An engine may run a whole stretch of small top-down
levels in compiled code (``topdown_levels``, the CUDA engine), or the whole
search, both directions, with the policy's own test compiled
(``levels_run``, the numba engine): the driver then only checks the stops
and keeps the record.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from spbfs.direction import TOP_DOWN, DirectionPolicy
from spbfs.result import LevelLog, LevelStats, RecordStats

__all__ = ["Engine", "LocalEngine", "RecordLog", "SearchRun", "run_levels"]

#: A step's result: (next frontier, its size, edges scanned, its degree sum).
Step = tuple[Any, int, int, int]


class Engine(Protocol):
    """What :func:`run_levels` needs of an engine.

    Frontiers are the engine's own business (sorted ids, bitmaps, device
    lists): the driver only hands back what the previous step returned.
    """

    #: Vertices in the whole graph.
    n: int
    #: Degree sum (in the search direction) of the whole graph.
    total_degree: int
    #: Optional run of consecutive top-down levels in compiled code (the CUDA
    #: engine's, :mod:`spbfs.kernels.bfs_cuda`), or None.
    topdown_levels: Any
    #: Optional: the whole search in compiled code, its start and both directions (see
    #: :meth:`spbfs.search.numba_engine.NumbaEngine.levels_run`), or None / absent.
    levels_run: Any

    def start(self, source: int) -> tuple[Any, int]:
        """Mark ``source`` visited at level 0; return (first frontier, its degree here).

        The degree is 0 on a process that does not hold ``source``.
        """

    def topdown(self, frontier: Any, depth: int) -> Step:
        """One top-down level (push: SpMSV over the out-block)."""

    def bottomup(self, frontier: Any, depth: int) -> Step:
        """One bottom-up level (pull: masked SpMV over the in-block)."""

    def reached(self, v: int) -> bool:
        """Whether ``v`` has a parent on this process (False where another holds ``v``)."""

    def reduce(self, count: int, degsum: int, scanned: int, hit: int) -> tuple[int, ...]:
        """The level's counts summed over the processes (the identity on one)."""

    def unvisited_in_edges(self) -> int | None:
        """Optional: the in-edges of the unvisited vertices, the ``m_u`` of the direction
        test on a directed graph (what a bottom-up sweep reads); None where every edge
        goes both ways. An engine without it is tested with the out-edges."""


class RecordLog:
    """The per-level record of an engine that runs whole stretches of levels in compiled code
    (``levels_run``): their rows, as arrays, for :class:`~spbfs.result.LevelStats`.

    A compiled loop hands back a thousand levels at once; keeping its arrays
    (instead of a Python int per level and entry, as :class:`~spbfs.result.LevelLog`
    does) keeps the record's cost off a road network's search.
    """

    __slots__ = ("_cols", "_more", "_seconds")

    def __init__(self, rows: np.ndarray | None = None, seconds: np.ndarray | None = None) -> None:
        # The first run's columns and seconds, and the later runs' (a search that returned
        # to Python midway: its record full, or its thread count due).
        self._cols = None if rows is None else rows.T.copy()
        self._seconds = None if seconds is None else seconds.copy()
        self._more: list[tuple[np.ndarray, np.ndarray]] | None = None

    def extend_record(self, rows: np.ndarray, seconds: np.ndarray) -> None:
        """Levels as rows (frontier, discovered, edges, direction) and their seconds (copied)."""
        # Kept by column: one copy here, and none in stats() for a single run.
        if self._cols is None:
            self._cols, self._seconds = rows.T.copy(), seconds.copy()
        elif self._more is None:
            self._more = [(rows.T.copy(), seconds.copy())]
        else:
            self._more.append((rows.T.copy(), seconds.copy()))

    def stats(self, extra: dict[str, Any] | None = None) -> LevelStats:
        """The record as arrays (frontier, discovered and edges are rows of one block)."""
        cols, seconds = self._cols, self._seconds
        if cols is None:
            cols, seconds = np.empty((4, 0), np.int64), np.empty(0, np.float64)
        elif self._more is not None:
            cols = np.concatenate([cols, *(c for c, _ in self._more)], axis=1)
            seconds = np.concatenate([seconds, *(t for _, t in self._more)])
        return RecordStats.from_columns(cols, seconds, {} if extra is None else extra)


class LocalEngine:
    """The part of :class:`Engine` every one-process engine shares.

    Subclasses set ``xp``, ``n``, ``deg``, ``total_degree`` and bind the
    result arrays (``parents``, ``levels``, ``want``) before :meth:`start`.
    """

    xp: Any
    n: int
    deg: Any
    total_degree: int
    parents: Any
    levels: Any
    want: bool
    topdown_levels: Any = None
    levels_run: Any = None

    def start(self, source: int) -> tuple[Any, int]:
        """Mark ``source``; return it as a one-vertex frontier and its degree."""
        self.parents[source] = source
        self.levels[source if self.want else 0] = 0
        return self.xp.asarray([source], dtype="int64"), int(self.deg[source])

    def reached(self, v: int) -> bool:
        """Whether ``v`` has a parent."""
        return int(self.parents[v]) != -1

    @staticmethod
    def reduce(count: int, degsum: int, scanned: int, hit: int) -> tuple[int, int, int, int]:
        """One process: the counts are already global."""
        return count, degsum, scanned, hit


@dataclass
class SearchRun:
    """What the level loop hands back to the engine's caller.

    Attributes
    ----------
    log : LevelLog or RecordLog
        Per-level frontier, discovered, edges, direction and seconds (global counts).
    depth : int
        Levels run.
    stopped : str
        ``"exhausted"``, ``"max_depth"`` or ``"target"``.
    frontier : Any
        The engine's last frontier (empty unless a stop cut the search short).
    """

    log: LevelLog | RecordLog
    depth: int
    stopped: str
    frontier: Any


def run_levels(engine: Engine, policy: DirectionPolicy, source: int,
               max_depth: int | None = None, target: int | None = None) -> SearchRun:
    """Run a direction-optimizing search from ``source`` on ``engine``.

    Arguments are checked by the caller (:mod:`spbfs.search.checks`); on a
    grid every process calls this with the same arguments.
    """
    whole = getattr(engine, "levels_run", None)
    if whole is not None:
        return _run_compiled(whole, policy, source, max_depth, target)
    frontier, deg_source = engine.start(source)
    hit = int(target is not None and engine.reached(target))
    n_f, m_f, _, hit = engine.reduce(int(frontier.shape[0]), deg_source, 0, hit)
    n = engine.n
    m_u = engine.total_degree - m_f
    # A directed graph's bottom-up sweep reads in-edges: the test weighs those where the
    # engine counts them (m_u itself keeps the out-edges, which the engines subtract).
    in_edges = getattr(engine, "unvisited_in_edges", None)
    m_in = None if in_edges is None else in_edges()
    if m_in is None:
        in_edges = None
    current = policy.choose(TOP_DOWN, n_f, m_f, m_u if m_in is None else m_in, n, True)
    log = LevelLog()
    depth = 0
    stopped = "exhausted"
    clock = time.perf_counter
    step = (engine.topdown, engine.bottomup)
    reduce = engine.reduce
    fused = engine.topdown_levels
    while n_f:
        if max_depth is not None and depth >= max_depth:
            stopped = "max_depth"
            break
        if hit:
            stopped = "target"
            break
        if current == TOP_DOWN and fused is not None:
            frontier, run, depth, m_u, m_f, switch = fused(
                frontier, depth, m_u, m_f, policy, max_depth, target
            )
            log.extend(run, TOP_DOWN)
            growing = len(run[0]) > 0 and run[1][-1] > run[0][-1]
            n_f = int(frontier.shape[0])
            hit = int(target is not None and engine.reached(target))
            if switch:
                current = policy.choose(current, n_f, m_f,
                                        m_u if in_edges is None else in_edges(), n, growing)
            continue
        depth += 1
        t0 = clock()
        frontier, count, scanned, degsum = step[current](frontier, depth)
        hit = int(target is not None and engine.reached(target))
        count, degsum, scanned, hit = reduce(count, degsum, scanned, hit)
        log.add(n_f, count, scanned, current, clock() - t0)
        m_u -= degsum
        growing = count > n_f
        n_f, m_f = count, degsum
        current = policy.choose(current, n_f, m_f, m_u if in_edges is None else in_edges(), n,
                                growing)
    if stopped == "exhausted" and hit:
        stopped = "target"
    return SearchRun(log, depth, stopped, frontier)


def _run_compiled(levels_run: Any, policy: DirectionPolicy, source: int, max_depth: int | None,
                  target: int | None) -> SearchRun:
    """:func:`run_levels` on an engine whose ``levels_run`` runs the whole search in
    compiled code, its start included (the numba engine's): the loop there marks the
    source, chooses each direction with the policy's own function and tests the same
    stops; this calls it again where it returns early (its record full, or its thread
    count due) and keeps the record. A search of a few thousand vertices pays the
    Python of one call."""
    frontier, rows, seconds, depth, stopped = levels_run(source, policy, max_depth, target)
    log = RecordLog(rows, seconds)
    while stopped is None:
        frontier, rows, seconds, depth, stopped = levels_run(-1, policy, max_depth, target)
        log.extend_record(rows, seconds)
    return SearchRun(log, depth, stopped, frontier)
