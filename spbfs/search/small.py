"""Searches too small for the engine: one compiled call over the out-block's rows.

A search whose levels the direction policy keeps top-down throughout (a graph
of fewer edges than :data:`spbfs.direction.MIN_SWEEP`, or a forced top-down on
one of fewer than :data:`TOP_DOWN_ROWS`) or that has one level
only (a source without out-edges) needs none of the numba engine's machinery:
no thread count, no per-vertex state of the bottom-up sweeps, no scratch
arrays of a bitmap. It is :func:`spbfs.kernels.rows_bfs.rows_bfs`, the top-down
search over csr rows that also serves one-off searches of scipy matrices,
run on scratch arrays the graph keeps between its searches (the state word
array stays "unvisited" between them: only the reached vertices are reset, or
all in one pass where they are a quarter of the graph or more),
into result arrays from the graph's :class:`~spbfs.search.numba_engine.ScratchPool`.
The answer, the per-level record and the stop reason are the engine's: the
levels are the ones the policy would run top-down, and parents are the
smallest frontier vertex in both.

What it saves is per call: the engine's set-up, its Python level loop and its
thread policy, tens of microseconds against a search of a few
(``benchmarks/defaults.py``).
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from spbfs.config import Config
from spbfs.direction import MIN_SWEEP
from spbfs.kernels.degrees import regular_degrees
from spbfs.kernels.rows_bfs import MAX_VERTICES, rows_bfs_into
from spbfs.result import BFSResult, RecordStats

__all__ = ["TOP_DOWN_ROWS", "RowsScratch", "degrees_regular", "small_rule",
           "small_search", "takes_small"]

_STOPS = ("exhausted", "max_depth", "target")
_UNVISITED = np.uint64(0xFFFFFFFFFFFFFFFF)


class RowsScratch:
    """A graph's arrays for :func:`small_search`, kept between its searches.

    ``state`` (uint64, all unvisited between searches), ``queue`` (the reached
    vertices in level order) and the per-level record (``rec``: frontier, new,
    edges, and seconds in ``rec_t``, its last row), as long as the most levels a search of the
    block can run. Handed out to one search at a time; a concurrent search on
    the same graph gets fresh arrays.

    Parameters
    ----------
    n : int
        Vertices.
    levels : int
        The most levels a search can run (at most one more than the block's entries).
    max_bytes : int
        Arrays above this size are not kept (a search on a huge graph from a
        vertex without edges does not pin ``8 n`` bytes).
    unbranched : bool
        The scan of the graph's searches claims without branches
        (:func:`~spbfs.kernels.rows_bfs.rows_bfs`).
    """

    def __init__(self, n: int, levels: int, max_bytes: int, unbranched: bool = False) -> None:
        self.n = n
        self.unbranched = unbranched
        self.levels = levels
        self.max_bytes = max_bytes
        # Whether the state and queue (8 + 4 bytes a vertex) are kept, decided once.
        self._keeps = 12 * n <= max_bytes
        # A list's pop and append are atomic: one search takes the kept item, a
        # concurrent one finds the list empty (a lock costs as much as a tenth of a
        # search of karate).
        self._items: list[tuple[np.ndarray, ...]] = []

    def take(self) -> tuple[np.ndarray, ...]:
        """``(state, queue, rec, rec_t)``, ``state`` all unvisited; ``rec_t`` is the
        fourth row of ``rec`` (4 x levels int64) viewed as float64 (one array for the
        kernel's record)."""
        try:
            return self._items.pop()
        except IndexError:
            n, lv = self.n, self.levels
            rec = np.empty((4, lv), np.int64)
            return (np.full(n, _UNVISITED, np.uint64), np.empty(n + 1, np.uint32), rec,
                    rec[3].view(np.float64))

    def give(self, item: tuple[np.ndarray, ...]) -> None:
        """Keep ``item`` (its ``state`` set back to unvisited) for the next :meth:`take`."""
        if self._keeps and not self._items:
            self._items.append(item)


def _facts(g: Any, reverse: bool) -> tuple[Any, int, bool]:
    """``(degrees, entries, rows usable)`` of the block a search follows, kept per graph.

    Rows are usable where the block is csr, its pointers fit the ids' width
    (:func:`_rows` gives both one width) and the ids fit a state word.
    """
    key = "small_in" if reverse else "small_out"
    facts = g._search_cache.get(key)
    if facts is None:
        block = g.in_block if reverse else g.out_block
        total = int(block.ptr[-1]) if block.ptr.shape[0] else 0
        usable = (block.format == "csr" and g.n <= MAX_VERTICES
                  and total <= np.iinfo(block.ind.dtype).max)
        facts = g._search_cache[key] = (g.in_degree if reverse else g.out_degree, total,
                                        usable)
    return facts


def degrees_regular(g: Any, reverse: bool) -> bool:
    """:func:`~spbfs.kernels.degrees.regular_degrees` of the degrees a search of ``g``
    follows (in-degrees with ``reverse``), a pass over n kept for the graph's next
    searches: the rows' scan (:func:`small_search`) and the numba engine pick their
    claims by it."""
    key = "regular_in" if reverse else "regular_out"
    regular = g._search_cache.get(key)
    if regular is None:
        regular = g._search_cache[key] = regular_degrees(g.in_degree if reverse
                                                         else g.out_degree)
    return regular


#: Fewest entries of a block whose forced top-down searches run in the numba engine, not
#: :func:`small_search`. Above it the engine's levels (a 4-byte state word where ids
#: allow, its prefetch, its threads) ran 1.1-3x faster (Kronecker 18 and 20,
#: p2p-Gnutella31, luxembourg_osm, a 200 k-point mesh); below, its fixed cost ruled
#: (a 1000-vertex graph of 10 k edges: 52 µs against 27 µs).
TOP_DOWN_ROWS = 1 << 17


def small_rule(g: Any, mode: str, reverse: bool, gamma: float) -> tuple[bool, Any]:
    """:func:`takes_small` of ``g`` before the source is known: ``(every source, degrees)``.

    ``every source`` is True where every search takes :func:`small_search`;
    otherwise a search does where its source has no edge to follow in
    ``degrees`` (None: no search does). It depends on the graph and the
    arguments only, so a caller may keep it (:func:`spbfs.bfs`'s plain call).
    """
    if mode == "bottom-up":
        return False, None
    deg, total, usable = _facts(g, reverse)
    if not usable:
        return False, None
    n = g.n
    return ((mode == "top-down" and total < TOP_DOWN_ROWS)
            or total * gamma < (n if n > MIN_SWEEP else MIN_SWEEP)), deg


def takes_small(g: Any, source: int, mode: str, reverse: bool, gamma: float) -> bool:
    """Whether :func:`small_search` gives this search of ``g`` from ``source``.

    It does where every level is top-down under the policy (a forced top-down on a
    block of fewer than :data:`TOP_DOWN_ROWS` entries, or a block of fewer entries
    than a bottom-up level needs: see :func:`spbfs.direction.next_direction`) or
    the search has one level (a source without edges to follow, whatever the
    direction), and the block's rows are usable (:func:`_facts`). ``gamma`` is the
    policy's guard.
    """
    every, deg = small_rule(g, mode, reverse, gamma)
    return every or (deg is not None and deg[source] == 0)


def _rows(cache: dict[str, Any], key: str, block: Any) -> tuple[np.ndarray, np.ndarray]:
    """The block's pointers and ids as one unsigned width (kept per graph)."""
    rows = cache.get(key)
    if rows is None:
        ind = block.ind.view(np.uint32 if block.ind.dtype.itemsize == 4 else np.uint64)
        ptr = block.ptr
        ptr = (ptr.view(ind.dtype) if ptr.dtype.itemsize == ind.dtype.itemsize
               else ptr.astype(ind.dtype))
        rows = cache[key] = (ptr, ind)
    return rows


def small_search(g: Any, source: int, cfg: Config, reverse: bool, max_depth: int | None,
                 target: int | None, pool: Any) -> BFSResult:
    """The search of :func:`spbfs.bfs` for a case :func:`takes_small` accepts.

    Parameters
    ----------
    g : Graph
        The graph (its ``_search_cache`` keeps the rows and scratch arrays).
    source, max_depth, target
        Checked by the caller.
    cfg : Config
        Output and direction.
    reverse : bool
        Follow in-edges.
    pool : ScratchPool
        The graph's pool; its :meth:`~spbfs.search.numba_engine.ScratchPool.results`
        gives the result arrays.
    """
    t_start = time.perf_counter()
    cache = g._search_cache
    # Constant keys: every operation counts in a search of a few microseconds.
    if reverse:
        block, key, skey = g.in_block, "rows_in", "rows_in_scratch"
    else:
        block, key, skey = g.out_block, "rows_out", "rows_out_scratch"
    ptr, ind = _rows(cache, key, block)
    scratch = cache.get(skey)
    if scratch is None:
        n = g.n
        scratch = cache[skey] = RowsScratch(n, min(n, int(ind.shape[0]) + 1), pool.max_bytes,
                                            not degrees_regular(g, reverse))
    item = scratch.take()
    state, queue, rec, rec_t = item
    out = cfg.output
    want_parents = out != "levels"
    want_levels = out != "parents"
    parents, levels = pool.results(scratch.n)
    nlev, reason = rows_bfs_into(ptr, ind, source, state, queue,
                                 -1 if max_depth is None else max_depth,
                                 -1 if target is None else target, rec, rec_t, parents, levels,
                                 want_parents, want_levels, scratch.unbranched)
    # The counts and the seconds apart: a float64 view of an int64 row costs more than a
    # second copy. Every level ran top-down: no direction row.
    stats = RecordStats.from_columns(rec[:3, :nlev].copy(), rec_t[:nlev].copy(), {})
    scratch.give(item)
    return BFSResult(source, parents if want_parents else None,
                     levels if want_levels else None, stats, time.perf_counter() - t_start,
                     cfg, _STOPS[reason])
