"""Direction-optimizing BFS on the 2D grid: the grid engine and the search's entry.

Algorithms 3 and 4 of Buluç, Beamer, Madduri, Asanović and Patterson,
*Distributed-Memory Breadth-First Search on Massive Graphs* (2017). Every rank
owns a piece of the parents, levels and frontier (vertices ``lo .. hi-1``)
and one block ``B_ij``. The level loop is the one every engine runs under
(:func:`spbfs.search.driver.run_levels`): a level runs in one direction on
every rank, chosen from counts summed by the level's one Allreduce
(:meth:`GridEngine.reduce`). On a directed graph the direction test weighs
the in-edges of the unvisited set, as the one-process engines do
(:mod:`spbfs.direction`), counted when a decision depends on them
(:meth:`GridEngine.unvisited_in_edges`). The communication of a level goes through the
named phases of :mod:`spbfs.mpi.spmsv` (transpose, expand or gather, fold,
rotate, parent updates, merge); the local work between them goes to the rank's
local engine (:mod:`spbfs.mpi.local`: the numba kernels, or the array engine on
numpy or cupy), asked for the operation of the grid shape's route. What follows
describes the routes and the numba engine's way through them.

Top-down (Algorithm 3)
    The column chunk's frontier comes from *expand*; the local SpMSV over
    ``min_second`` writes the candidate ``(child, parent)`` pairs by owner in
    the same pass, and *fold* sends them along the row. An "already sent"
    bitmap over the row chunk makes every rank send each child at most once
    per search, with its smallest parent; the pairs go to each owner in the
    order found, since it writes them at random either way. A grid with one
    processor column owns its whole row chunk: the SpMSV and the update are
    one pass there, a large level split over the rank's threads.

Top-down over the transposed block (undirected graphs)
    A rank stores only ``B_ijᵀ`` (:class:`~spbfs.mpi.DistGraph`), and ``B`` is
    symmetric, so the level computes ``Bᵀ x``: the frontier of the *row*
    chunk is gathered along the processor row (the expand, posted with the
    Allreduce when the previous level was top-down too), the same masked
    SpMSV finds children in the *column* chunk, with an "already sent"
    bitmap over it, and the pairs fold to the owners of the column chunk's
    pieces (straight to them with ``p2p``; down the processor column, then
    transposed, otherwise). A rank that holds its own piece in the column
    layout (every rank of a pr × 1 grid, the diagonal of a square one) takes
    that part's children in the search itself, as pairs go only to others.
    A pair travels as one word ``child << 32 | parent`` where the ids fit
    (half the fold's bytes), and is received into a buffer posted before the
    sends (:class:`~spbfs.mpi.spmsv.GrownReceives`). On a 2 x 1 grid the
    fold also carries the sender's own children and counts, and "already
    sent" holds every vertex the partner has reached: each rank then knows
    both pieces' new frontiers, so such a level needs no Allreduce and no
    frontier gather after it (``GridEngine._topdown_duo``).
    One processor row owns its column chunk: search and update are one pass,
    as with one column above.

Bottom-up (Algorithm 4)
    The frontier bitmap of the column chunk comes from *gather*; then ``pc``
    sub-steps search parents for the rows of one segment not yet completed,
    starting with the rank's own, and *rotate* the segment's ``completed``
    bitmap along the row; pairs found for other ranks' pieces go to their
    owners at the end (*parent updates*). Per segment the rank keeps the
    candidate rows that may still find a parent (listed by the first
    bottom-up level, then only the survivors are scanned), in parallel chunks
    with software prefetch, as the one-process numba engine does.

New frontier pieces are read off the visited bitmap in order, and a bitmap
message is ``visited ^ prev``. Buffers are kept per graph and per-level
Python is a few calls per phase: a road network has a thousand levels of a
few vertices, and ranks sharing a core pay for each other's overhead.

The result (:class:`~spbfs.mpi.result.DistBFSResult`, re-exported here) has a
module of its own, which the engine of other semirings
(:mod:`spbfs.mpi.semiring_engine`) returns too: that engine does not import this one.
"""

from __future__ import annotations

import time
from typing import Any

import numba
import numpy as np

from semirings.semiring import Semiring
from spbfs.config import Config
from spbfs.direction import BOTTOM_UP, TOP_DOWN, DirectionPolicy, leave_top_down
from spbfs.mpi import _kernels as K
from spbfs.mpi import comm as C
from spbfs.mpi.graph import DistGraph
from spbfs.mpi.local import bfs_backend, local_engine, topdown_route
from spbfs.mpi.planner import planner
from spbfs.mpi.result import DistBFSResult
from spbfs.mpi.semiring_engine import semiring_bfs
from spbfs.mpi.spmsv import (
    ALLREDUCE,
    COMM_PHASES,
    EXPAND,
    FOLD,
    GATHER,
    LOCAL_BU,
    LOCAL_PHASES,
    LOCAL_TD,
    UPDATE,
    UPDATES,
    FrontierPhases,
    PhaseCounters,
)
from spbfs.search.checks import LEVELS, VALUES, check_max_depth, check_semiring, check_vertex
from spbfs.search.driver import SearchRun, run_levels

__all__ = ["COMM_PHASES", "LOCAL_PHASES", "DistBFSResult", "bfs", "traversed_edges"]

# A top-down level expecting at least this many edges per rank splits its rows
# over the rank's threads (one grid column only; see _kernels.topdown_own).
_PAR_TOPDOWN = 1 << 15


# --------------------------------------------------------------------------- the search


_LOG_KEYS = ("level", "phase", "pattern", "encoding", "estimated_s", "actual_s")


class _Kept:
    """What the grid search keeps on its graph from one search to the next.

    Made by a graph's first search (``DistGraph._search_buffers``). A search
    at scale 18 takes about 3 ms, and what it allocates, zeroes or builds on
    entry comes out of a cache the previous search filled with other data, so
    the engine only resets what a search reads before it writes.
    """

    __slots__ = ("arrays", "deg_p", "duo", "in_deg", "in_mark", "locals", "packed", "phases",
                 "prev", "sentprev", "visited", "visited0")

    def __init__(self, g: DistGraph) -> None:
        grid = g.grid
        B, bw = g.dist.B64, g.dist.bw
        nrow = grid.pc * B
        cdt = np.int32 if nrow < 2**31 else np.int64
        fdt = np.int32 if B < 2**31 else np.int64
        transposed = g.transposed_topdown
        # The top-down's "already sent" bitmap: over the row chunk, or over the
        # column chunk for the transposed product (its children are columns of B_ij).
        nsent = (grid.pr if transposed else grid.pc) * bw
        fold = not transposed and grid.pc > 1
        self.arrays = (
            # The bottom-up finds of the segment being searched (rows, parents)
            # when the search runs in parallel chunks, grown to the most
            # candidates seen (see GridEngine._ensure).
            [np.empty(0, np.int64), np.empty(0, np.int64)],
            # The new frontier piece (two: the old one is still read), in the
            # local id dtype.
            (np.empty(max(B, 1), fdt), np.empty(max(B, 1), fdt)),
            np.zeros(nsent, np.uint64), np.empty(max(nrow, 1), cdt),
            # Pairs to send: the fold of B_ij's own top-down (a directed graph)
            # writes row rank t's from word 2 t B on; the parent updates and the
            # transposed top-down's fold grow it to what a level needed.
            [np.empty(2 * nrow if fold else 0, np.int64)],
            # Scratch bitmaps: the column-chunk frontier, a segment's completed
            # rows and the one rotated in.
            np.empty(grid.pr * bw, np.uint64),
            np.empty(bw, np.uint64), np.empty(bw, np.uint64),
            # Frontier bitmaps being sent (two: one may still be in flight).
            (np.empty(bw, np.uint64), np.empty(bw, np.uint64)),
            # The fold's pairs per part, as the kernels count them.
            np.zeros(max(grid.pr, grid.pc), np.int64))
        # The piece's visited bitmap at a search's start: the padding ids beyond the
        # piece are done. ``visited`` and ``prev`` are reset from it by every search.
        self.visited0 = np.zeros(bw, np.uint64)
        K.set_bits(np.arange(g.hi - g.lo, B, dtype=np.int64), self.visited0, 0)
        self.visited = np.empty(bw, np.uint64)
        self.prev = np.empty(bw, np.uint64)
        # Whether a transposed top-down pair fits one word (the plan may still
        # ask for two: compressed pair messages).
        self.packed = K.pack_fits(g.n, B)
        # A directed graph's in-degrees of the piece (what a bottom-up sweep reads of a
        # vertex) and the visited bitmap as they were last summed
        # (GridEngine.unvisited_in_edges).
        self.in_deg = g.piece_in_degrees() if g.directed else None
        self.in_mark = np.empty(bw, np.uint64) if g.directed else None
        # The frontier phases by plan, as (plan, phases) (see GridEngine.__init__).
        self.phases: list[tuple[Any, FrontierPhases]] = []
        # The local engines by backend name (spbfs.mpi.local), made by the first search
        # on each: an array engine moves the blocks to its device once.
        self.locals: dict[str, Any] = {}
        # A 2 x 1 grid's top-down level counts the partner's new frontier itself
        # (GridEngine._topdown_duo): it needs the partner's degrees (half a piece's
        # degrees more per rank) and its part of "sent" as the level found it.
        self.duo = transposed and grid.pr == 2 and grid.pc == 1
        self.deg_p: np.ndarray | None = None
        self.sentprev: np.ndarray | None = None
        if self.duo:
            partner = 1 - grid.rank
            plo, phi = g.dist.piece_range(partner)
            # In 4 bytes where every degree fits (the same test on both ranks).
            dt = np.int32 if g.total_degree < 2**31 else np.int64
            deg = np.ascontiguousarray(g._deg, dtype=dt)
            self.deg_p = np.zeros(max(B, 1), dt)
            C.sendrecv(grid.comm, deg, partner, self.deg_p[:phi - plo], partner, tag=24)
            self.sentprev = np.empty(bw, np.uint64)


class GridEngine:
    """The grid's :class:`~spbfs.search.driver.Engine`: one rank's part of a search.

    Frontiers are this rank's piece as sorted local ids; counts come back
    from the steps as this rank's and :meth:`reduce` sums them (the level's
    one Allreduce, which also completes the frontier exchange a step posted).
    """

    #: No compiled run of levels: every level synchronizes the grid.
    topdown_levels = None

    def __init__(self, g: DistGraph, cfg: Config,
                 out: tuple[np.ndarray, np.ndarray] | None = None,
                 max_depth: int | None = None, policy: DirectionPolicy | None = None,
                 target: int | None = None) -> None:
        backend = bfs_backend(cfg, g.grid.comm, graph=g)  # never the CPU in place of a missing GPU
        self.g = g
        self.policy = policy or DirectionPolicy(cfg.direction, cfg.alpha, cfg.beta)
        self.n = g.n
        self.total_degree = g.total_degree
        self.max_depth = max_depth
        grid = g.grid
        self.grid = grid
        self.d = g.dist
        self.B = self.d.B64
        self.bw = self.d.bw
        self.size = g.hi - g.lo
        self.cnt = cnt = PhaseCounters()
        self.clock = cnt.clock
        self.tick = cnt.tick
        self.p = grid.size
        self.transposed = g.transposed_topdown
        self.direction = cfg.direction  # a forced one is the next level's for sure
        kept = g._search_buffers
        if kept is None:
            kept = g._search_buffers = _Kept(g)
        self.kept = kept
        # The host state the duo route reads (numba's; see _Kept).
        _, _, self.sent, _, _, self.front, _, _, self.msgbufs, self.counts = kept.arrays
        if out is None:
            self.parents = np.full(self.size, -1, dtype=np.int64)
            self.levels = np.full(self.size, -1, dtype=np.int64)
        else:
            self.parents, self.levels = out
            self.parents.fill(-1)
            self.levels.fill(-1)
        # ``visited`` starts with the padding ids beyond the piece marked done (they
        # never get a parent). ``prev`` is ``visited`` as it was before the newest
        # frontier piece was marked (each level copies it first), so ``visited ^ prev``
        # is that piece as a bitmap; the source's level starts from here.
        self.visited, self.prev = kept.visited, kept.prev
        np.copyto(self.visited, kept.visited0)
        np.copyto(self.prev, kept.visited0)
        local = kept.locals.get(backend)
        if local is None:
            local = kept.locals[backend] = local_engine(backend, g, kept)
        self.local = local
        local.begin(self.parents, self.levels)
        self.deg = g._deg
        self.plan = plan = planner(cfg, grid, self.B)
        # The transposed top-down's pairs, one word each where ids allow: half the
        # fold's bytes. Compressed pair messages (the codec reads two words a pair)
        # stay unpacked; every rank decides alike (the same config and graph).
        self.packed = kept.packed and not plan.pairs_compressible
        # The phases' partners, receive buffers and scratch depend on the grid and the
        # plan only: built by a graph's first search with this plan, reset by the others.
        # The messages are the local engine's arrays (its wire takes them to MPI).
        for known, phases in kept.phases:
            if known is plan and phases.wire is local.wire:
                phases.reset(cnt)
                break
        else:
            phases = FrontierPhases(grid, self.B, self.bw, plan, self.visited, self.prev,
                                    self.msgbufs, cnt, g._pair_channels, local.wire,
                                    local.bitmap)
            kept.phases.append((plan, phases))
        self.phases = phases
        # A 2 x 1 grid runs its top-down levels without the Allreduce (_topdown_duo),
        # where the fold is one plain message each way.
        self.duo = kept.duo and local.duo and phases.emu is None \
            and not plan.pairs_compressible and (
                plan.fixed_pattern == "p2p" or (plan.fixed_pattern is None and plan.link is None))
        # The top-down operation asked of the local engine: the plan's by grid shape.
        self.route = topdown_route(self.transposed, grid.pr, grid.pc, self.duo)
        self.duo_red: list[int] | None = None  # such a level's global counts, for reduce
        self.partner = 1 - grid.rank if self.duo else -1
        self.sp = self.sent[self.partner * self.bw:(self.partner + 1) * self.bw] if self.duo \
            else self.sent[:0]
        self.target_p = -1  # the target as a partner-local id (-1: not the partner's)
        if self.duo and target is not None:
            plo, phi = self.d.piece_range(self.partner)
            if plo <= target < phi:
                self.target_p = target - plo
        self.nthreads = numba.get_num_threads()
        self.m_f = 0  # degree sum of the current frontier, all ranks (set by reduce)
        # The rest of the latest Allreduce's picture (as the driver keeps it): the
        # frontier's size, whether it grew, the edges out of unvisited vertices.
        self.n_f = 0
        self.grew = True
        self.m_u = -1
        # A directed graph's m_u is the in-edges of the unvisited set (a bottom-up
        # sweep reads those), as last counted (unvisited_in_edges); every arc is one
        # vertex's in-edge, so before the search it is the total degree.
        self.in_deg = kept.in_deg
        self.in_left = self.total_degree
        self.topdown_last = True  # the direction of the level just run (the source's: top-down)
        self.m_f_before = 0  # the frontier's edges one level earlier
        self.stepped = False  # a level ran since the last reduce

    def finish(self, run: SearchRun, source: int, cfg: Config, seconds: float) -> DistBFSResult:
        """The result on this rank: its pieces, and the counters summed over the grid."""
        grid = self.grid
        self.phases.drain()  # the exchange posted after the last level
        self.local.finish()
        msgs, words, phase_seconds = self.cnt.summed(grid.comm)
        stats = run.log.stats({"messages": msgs, "words": words})
        g = self.g
        return DistBFSResult(source=source, parents=self.parents, levels=self.levels, lo=g.lo,
                             hi=g.hi, n=g.n, stats=stats, seconds=seconds, stopped=run.stopped,
                             phase_seconds=phase_seconds, config=cfg,
                             grid_shape=(grid.pr, grid.pc), _comm=grid.comm,
                             exchange_log=[dict(zip(_LOG_KEYS, rec, strict=True))
                                           for rec in self.phases.log])

    # -- the driver's protocol -------------------------------------------------------
    def start(self, source: int) -> tuple[np.ndarray, int]:
        """Mark ``source`` on its owner; post the first frontier exchange."""
        frontier = self.local.no_frontier()
        deg_source = 0
        lo, hi = self.g.lo, self.g.hi
        if lo <= source < hi:
            ls = source - lo
            frontier = self.local.claim(ls, source)
            deg_source = int(self.deg[ls])
        elif self.duo:
            # The partner's source is reached: "sent" must know it from the start.
            plo = self.d.piece_range(self.partner)[0]
            K.set_bits(np.array([source - plo], np.int64), self.sp, 0)
        if self.duo:
            # Both ranks of a 2 x 1 grid know the source and its degree: no Allreduce,
            # nothing posted. A first level bottom-up reads the source off the bitmaps
            # (the partner's part of "sent" was empty before it).
            self.kept.sentprev.fill(0)
            deg = deg_source if lo <= source < hi else \
                int(self.kept.deg_p[source - self.d.piece_range(self.partner)[0]])
            self.duo_red = [1, deg, 0, 0]
        elif self.max_depth is None or self.max_depth > 0:
            self._post(frontier, True)
        return frontier, deg_source

    def reached(self, v: int) -> bool:
        """Whether ``v`` is this rank's and has a parent."""
        lo = self.g.lo
        return lo <= v < self.g.hi and self.local.reached(v - lo)

    def topdown(self, frontier: np.ndarray, depth: int) -> tuple[np.ndarray, int, int, int]:
        """One top-down level; posts the next frontier's exchange."""
        new, scanned, degsum = self._topdown(frontier, depth)
        self.stepped = True
        self.topdown_last = True
        # A duo level posts nothing: each rank knows the other's new frontier.
        if not self.duo and (self.max_depth is None or depth < self.max_depth):
            self._post(new, True)
        return new, new.shape[0], scanned, degsum

    def bottomup(self, frontier: np.ndarray, depth: int) -> tuple[np.ndarray, int, int, int]:
        """One bottom-up level; posts the next frontier's exchange."""
        new, scanned, degsum = self._bottomup(frontier, depth)
        self.stepped = True
        self.topdown_last = False
        if self.max_depth is None or depth < self.max_depth:
            self._post(new, False)
        return new, new.shape[0], scanned, degsum

    def _post(self, frontier: np.ndarray, topdown: bool) -> None:
        """Post the next level's frontier exchange, completed with the level's Allreduce.

        Bottom-up levels gather down the processor column; the transposed
        top-down expands along the row. The direction the Allreduce will
        decide is guessed (:meth:`_guess_topdown`; a wrong guess is received,
        dropped, and the other exchange runs then); where one of the two moves
        nothing (one processor row or column) the other is posted.
        """
        grid = self.grid
        auto = self.direction == "auto"
        if auto:
            # One processor column: the column gather is posted after a top-down level
            # too (a transposed top-down there moves no frontier). Posting nothing made
            # the switch to bottom-up gather unposted, one more wait per search, and
            # the saved posts are small (docs/concepts/design-measurements.md).
            row = self.transposed and grid.pc > 1 and (self._guess_topdown(topdown)
                                                       or grid.pr == 1)
        else:  # the next level's exchange for sure (none for a top-down on one column)
            row = self.transposed and self.direction == "top-down"
        self.phases.post_expand(frontier, row=row)

    def _guess_topdown(self, topdown: bool) -> bool:
        """Whether the level after the one just run (``topdown`` or not) will be top-down.

        A guess from the latest Allreduce's numbers, the same on every rank
        (each posts what the others expect); wrong at most near a direction
        switch, where it costs one exchange that was not posted.
        """
        current = TOP_DOWN if topdown else BOTTOM_UP
        return self.policy.guess(current, self.n_f, self.m_f, self.m_u, self.n, self.grew,
                                 self.m_f_before) == TOP_DOWN

    def reduce(self, count: int, degsum: int, scanned: int, hit: int) -> list[int]:
        """The level-end Allreduce; also completes a posted frontier exchange."""
        red = self.duo_red
        if red is None:
            red = self.phases.allreduce4(count, degsum, scanned, hit)
        else:
            self.duo_red = None
            tp = self.target_p
            red[3] = int(bool(hit) or (tp >= 0 and bool((int(self.sp[tp >> 6]) >> (tp & 63)) & 1)))
            self.phases.counted(red)
        if self.stepped:  # the start's Allreduce is counted with level 1
            self.cnt.close_level()
            self.stepped = False
        self.m_f_before = self.m_f
        self.m_f = red[1]  # the next frontier's edges: a large top-down level runs in parallel
        self.m_u = (self.total_degree if self.m_u < 0 else self.m_u) - red[1]
        self.grew = red[0] > self.n_f
        self.n_f = red[0]
        return red

    def unvisited_in_edges(self) -> int | None:
        """The in-edges of the unvisited set on a directed graph (None where edges go
        both ways): the ``m_u`` of :func:`spbfs.direction.next_direction`.

        Counted as the one-process numba engine counts them: only after a
        top-down level whose frontier passes the first-sweep guard (the test
        at ``m_u = 0``), the only place the policy reads them; elsewhere the
        last count stands. A count sums the in-degrees of the vertices visited
        since the last one (off the visited bitmap) in one Allreduce of one
        word; every rank decides alike, from the level's global sums. So a
        search that never nears a switch (p2p-Gnutella31 from vertex 0, 26
        levels) costs nothing per level, and a Kronecker search a count or two.
        """
        if self.in_deg is None:
            return None
        alpha, gamma, auto = self.policy.fused_switch
        if auto and self.topdown_last and leave_top_down(self.m_f, 0, self.n, alpha, gamma):
            local = self.local.visited_in_degrees()
            t0 = self.clock()
            got = C.allreduce(self.grid.comm, np.array([local]))
            self.in_left -= int(got[0])
            if self.p > 1:
                self.cnt.add(ALLREDUCE, self.p - 1, self.p - 1)
            self.tick(ALLREDUCE, t0)
        return self.in_left

    # -- one top-down level --------------------------------------------------------------
    def _topdown(self, frontier: np.ndarray, depth: int) -> tuple[np.ndarray, int, int]:
        """One level; returns (next frontier piece, edges scanned, its degree sum).

        The route (:func:`~spbfs.mpi.local.topdown_route`) says which local
        operation the level asks for; the phases around it follow the route.
        """
        route = self.route
        if route == "duo":
            return self._topdown_duo(frontier, depth)
        grid = self.grid
        if self.transposed:
            # The row chunk's frontier, gathered along the processor row.
            parts = self.phases.expand_row(frontier)
        else:
            parts = self.phases.expand(frontier, EXPAND)
        t0 = self.clock()
        local = self.local
        cols = local.chunk_ids(parts)
        local.next_level(depth)
        if route == "own":
            # The product's children are this rank's piece: search and update in one
            # pass; a level expecting many edges on this rank splits its rows over
            # the threads.
            nparts = self.nthreads if self.m_f >= _PAR_TOPDOWN * self.p else 1
            k, scanned, degsum = local.topdown_own(cols, depth, nparts)
            t0 = self.tick(LOCAL_TD, t0)
            new = local.new_frontier(k)
            self.tick(UPDATE, t0)
            return new, scanned, degsum
        if route == "fold":
            j = grid.j
            sends, nc, scanned, msgs = local.topdown_fold(cols, j, grid.pc)
            self.tick(LOCAL_TD, t0)
            recv = self.phases.along_row(FOLD, sends, msgs, 2 * nc - sends[j].shape[0])
            t0 = self.clock()
            k, degsum = local.merge(recv, -1, depth, 0, False)
            new = local.new_frontier(k)
            self.tick(UPDATE, t0)
            return new, scanned, degsum
        # "pairs": the transposed product's pairs fold down the processor column to
        # the rank holding each piece in the column layout, which passes them to the
        # owner. The own piece is part i of the column chunk where this rank holds it
        # in the column layout: its children are taken in the search itself.
        own = grid.i if grid.transpose_dest == grid.rank else -1
        sends, scanned, k, degsum = local.topdown_pairs(cols, own, grid.pr, depth, self.packed)
        self.tick(LOCAL_TD, t0)
        got = self.phases.fold_to_owners(sends, sum(x.shape[0] for x in sends))
        t0 = self.clock()
        k, ds = local.merge(got, -1, depth, k, self.packed)
        degsum += ds
        new = local.new_frontier(k)
        self.tick(UPDATE, t0)
        return new, scanned, degsum

    def _topdown_duo(self, frontier: np.ndarray, depth: int) -> tuple[np.ndarray, int, int]:
        """One transposed top-down level on a 2 x 1 grid, its global counts without an Allreduce.

        Each rank takes its own children and sends the others as pairs, as the
        ``pairs`` route does, and its own children too, in one message
        each way. "Sent" (over both pieces) holds every vertex the partner has
        reached: the pairs sent, the partner's frontiers (gathered after the
        source and after bottom-up levels, and its own children sent here). So
        a pair is always new to the partner unless the partner found that child
        itself in this level: the partner's new frontier is its own children
        and this rank's pairs together, and the level's counts are known on both
        ranks after the one exchange. The fold then takes the Allreduce's place
        (:meth:`reduce` returns the counts), and a bottom-up level next reads
        both frontier pieces off the bitmaps (nothing is gathered). The source
        needs no Allreduce either (:meth:`start`): both ranks know its degree.
        The route reads the host bitmaps: engines whose ``duo`` is set only.
        """
        grid, bw = self.grid, self.bw
        phases = self.phases
        sp = self.sp
        if phases.pending is not None:
            # The partner's frontier, posted after the source or a bottom-up level: its
            # vertices are reached, "sent" learns them.
            m, bits = phases.expand(frontier, GATHER)[self.partner]
            if bits:
                np.bitwise_or(sp, m.view(np.uint64), out=sp)
            else:
                K.set_bits(m, sp, 0)
        t0 = self.clock()
        local = self.local
        local.next_level(depth)
        newbuf = local.newbuf
        sentprev = self.kept.sentprev
        sentprev[:] = sp
        own, other = grid.i, self.partner
        packed = self.packed
        w = 1 if packed else 2
        sends, scanned, k, degsum = local.topdown_pairs(frontier, own, 2, depth, packed)
        pairs = sends[other]
        pw = pairs.shape[0]
        c = pw // w
        # The message: a header, the pairs, the own children (ids, or their bitmap
        # where that is shorter).
        as_bits = k >= bw
        msg = np.empty(5 + pw + (bw if as_bits else k), np.int64)
        msg[0] = pw
        msg[1] = k
        msg[2] = as_bits
        msg[3] = degsum
        msg[4] = scanned
        msg[5:5 + pw] = pairs
        if as_bits:
            np.bitwise_xor(self.visited, self.prev, out=msg[5 + pw:].view(np.uint64))
        else:
            msg[5 + pw:] = newbuf[:k]
        self.tick(LOCAL_TD, t0)
        got = phases.fold_duo(other, msg)
        t0 = self.clock()
        ppw, pk, pbits, pds, psc = got[:5].tolist()
        k, ds = local.merge([got[5:5 + ppw]], -1, depth, k, packed)
        degsum += ds
        dup, dsp = K.partner_level(got[5 + ppw:], bool(pbits), sp, pairs, c, packed,
                                   self.kept.deg_p)
        self.duo_red = [k + pk + c - dup, degsum + pds + dsp, scanned + psc, 0]
        new = local.new_frontier(k)
        self.tick(UPDATE, t0)
        return new, scanned, degsum

    # -- one bottom-up level ---------------------------------------------------------
    def _bottomup(self, frontier: Any, depth: int) -> tuple[Any, int, int]:
        """One level; returns (next frontier piece, edges scanned, its degree sum)."""
        grid, bw = self.grid, self.bw
        local = self.local
        if self.duo and self.phases.pending is None:
            # After a duo top-down level (nothing posted): both new frontier pieces
            # are the bits that level set, in ``visited`` and in the partner's "sent".
            t0 = self.clock()
            front = self.front
            i, o = grid.i, self.partner
            np.bitwise_xor(self.visited, self.prev, out=front[i * bw:(i + 1) * bw])
            np.bitwise_xor(self.sp, self.kept.sentprev, out=front[o * bw:(o + 1) * bw])
            parts = None
        else:
            parts = self.phases.expand(frontier, GATHER)
            t0 = self.clock()
        # Vertices of the column chunk's frontier are reached: the transposed top-down
        # need never send them (its "sent" is over the column chunk).
        local.load_front(parts, self.transposed and grid.pr > 1)
        pc, j = grid.pc, grid.j
        local.next_level(depth)
        comp = local.completed()
        bounds = [0]
        segs = []
        k = 0
        nk = 0
        scanned = 0
        degsum = 0
        for s in range(pc):
            t = (j + s) % pc
            local.reserve(t, comp, k, s > 0)
            k, sc, ds, nk = local.bottomup_segment(t, s == 0, comp, depth, nk, k)
            scanned += sc
            degsum += ds
            bounds.append(k)
            segs.append(t)
            if s < pc - 1:
                self.tick(LOCAL_BU, t0)
                # Pass the segment's completed bitmap on: the left neighbour takes it over.
                comp = self.phases.rotate(comp, local.spare(comp), local.wire)
                t0 = self.clock()
        t0 = self.tick(LOCAL_BU, t0)
        # Own finds (sub-step 0) are in already; the others go to their owners.
        if pc > 1:
            sends, msgs = local.updates(segs, bounds)
            recv = self.phases.along_row(UPDATES, sends, msgs, 2 * k)
            t0 = self.clock()
            own = nk
            nk, ds = local.merge(recv, j, depth, nk, False)
            degsum += ds
            new = local.new_frontier(nk) if nk > own else local.found(nk)
        else:
            new = local.found(nk)  # found in increasing order
        self.tick(UPDATE, t0)
        return new, scanned, degsum


def _check_out(out: Any, size: int) -> None:
    if not isinstance(out, tuple | list) or len(out) != 2:
        raise ValueError("out must be a pair of arrays (parents, levels)")
    for name, a in zip(("parents", "levels"), out, strict=True):
        if not isinstance(a, np.ndarray) or a.dtype != np.int64 or a.shape != (size,) \
                or not a.flags.c_contiguous or not a.flags.writeable:
            got = (f"{a.dtype} array of shape {a.shape}" if isinstance(a, np.ndarray)
                   else type(a).__name__)
            raise ValueError(f"out {name} must be a writeable C-contiguous int64 array of "
                             f"shape ({size},) (this rank's piece), got {got}")


def bfs(graph: DistGraph, source: int, *, direction: str | None = None,
        frontier_encoding: str | None = None, exchange: str | None = None,
        max_depth: int | None = None,
        target: int | None = None, config: Config | None = None,
        out: tuple[np.ndarray, np.ndarray] | None = None,
        semiring: Semiring | str = "min_second", source_value: Any = 1) -> DistBFSResult:
    """Direction-optimizing BFS from ``source`` on a :class:`DistGraph` (collective).

    Or a traversal over any semiring, as :func:`spbfs.bfs` runs it on one process,
    with the same levels and values.

    Parameters
    ----------
    graph : DistGraph
        The distributed graph.
    source : int
        Root vertex id (the same on every rank).
    direction : {"auto", "top-down", "bottom-up"}, optional
        Force a direction (default ``config.direction``).
    frontier_encoding : {"auto", "list", "bitmap", "compressed"}, optional
        Frontier messages as sorted id lists, bitmaps, compressed, or per
        message the cheapest by the cost model (default ``config.frontier_encoding``).
    exchange : {"auto", "p2p", "collective", "butterfly"}, optional
        How messages move in a processor row or column (default ``config.exchange``).
    max_depth : int, optional
        Stop after this many levels.
    target : int, optional
        Stop after the level that reaches ``target``.
    config : Config, optional
        Direction heuristics, exchange settings and ``output`` (``"levels"``
        runs the search as ``any_pair``, ``"parents"`` drops the levels, as
        :func:`spbfs.bfs` does), and ``backend``, the rank's local engine
        (:mod:`spbfs.mpi.local`): ``"auto"``/``"numba"`` the numba kernels,
        ``"numpy"`` the array engine on the CPU, ``"cupy"`` the array engine
        on each rank's GPU; defaults to the graph's config.
    out : (numpy.ndarray, numpy.ndarray), optional
        Arrays for this rank's ``parents`` and ``levels`` (int64, C-contiguous,
        ``hi - lo`` long), overwritten and returned in the result. A loop of
        searches that is done with each result before the next (the benchmark)
        saves the page faults of fresh arrays, a cost paid inside every search
        otherwise. Not with a generic semiring.
    semiring : Semiring or str
        As in :func:`spbfs.bfs`: ``"min_second"`` (parents and levels) and
        ``"any_pair"`` (levels only, ``parents`` None) run the fused grid
        search above; any other semiring runs the generic grid engine (its
        levels expand the frontier's values down the processor columns,
        multiply by the local block and fold the partial results along the
        processor row, where the owner merges them with the semiring's
        addition; one Allreduce per level), giving ``levels`` and ``values``.
        Its local products run on numba unless the config's backend is
        ``"numpy"``; positional operators (``secondi``, ...) are refused.
    source_value : int or float
        The source's value in a generic semiring's frontier (default 1).

    Returns
    -------
    DistBFSResult
        This rank's piece of parents and levels (and values), and the global
        statistics.

    Raises
    ------
    CollectiveError
        On every rank for a source or target out of range, a bad option,
        ``backend="cupy"`` where a rank has no usable GPU, or a
        semiring or ``source_value`` that :func:`spbfs.bfs` refuses (also
        ``out`` with a generic semiring), even when only one rank passes it;
        and on every rank when ranks pass different arguments (one small
        Allreduce at the start checks both).
    ValueError
        For ``out`` arrays of the wrong length, dtype or layout (raised on the
        ranks that pass them).
    """
    cfg = config or graph.config
    problem = None
    try:
        over = {k: v for k, v in (("direction", direction),
                                  ("frontier_encoding", frontier_encoding),
                                  ("exchange", exchange)) if v is not None}
        if over:
            cfg = cfg.replace(**over)
        n = graph.n
        source = check_vertex(source, n, "source")
        if target is not None:
            target = check_vertex(target, n, "target")
        max_depth = check_max_depth(max_depth)
        kind, semiring = check_semiring(semiring, config_output=cfg.output,
                                        source_value=source_value)
    except (TypeError, ValueError) as exc:
        problem = str(exc)
    # One small collective: a bad or differing argument on any rank raises on every rank.
    C.agree_call(graph.grid.comm, problem, source=source, target=target, max_depth=max_depth,
                 semiring=semiring, source_value=source_value, config=config,
                 direction=direction, frontier_encoding=frontier_encoding, exchange=exchange,
                 out=out is None)
    if kind == VALUES:
        return semiring_bfs(graph, source, cfg, semiring, source_value, max_depth, target, out)
    if out is not None:
        _check_out(out, graph.hi - graph.lo)
    policy = DirectionPolicy(cfg.direction, cfg.alpha, cfg.beta)
    t_start = time.perf_counter()
    engine = GridEngine(graph, cfg, out, max_depth, policy, target)
    run = run_levels(engine, policy, source, max_depth, target)
    result = engine.finish(run, source, cfg, time.perf_counter() - t_start)
    # The engine finds parents and levels together (it has no levels-only mode, and
    # moves the same words either way): what was not asked for is dropped.
    if kind == LEVELS or cfg.output == "levels":
        result.parents = None
    elif cfg.output == "parents":
        result.levels = None
    return result


# --------------------------------------------------------------------------- edge counts


def traversed_edges(graph: DistGraph, result: DistBFSResult) -> int:
    """Graph500 edge count of a search: input tuples inside the searched component.

    Collective. Undirected: tuples with both endpoints reached (each once,
    duplicates and self-loops included); directed: arcs whose tail was reached.
    The same number as :func:`spbfs.graph500.traversed_edges` on the whole edge
    list, computed from the tuples each block owner keeps.
    """
    from spbfs.mpi.validate import column_chunk_of_piece

    if result.levels is None:
        raise ValueError("traversed_edges needs levels: search with output='both'")
    lv = np.full(graph.dist.B64, -1, dtype=np.int64)
    lv[:result.levels.shape[0]] = result.levels
    col = column_chunk_of_piece(graph, lv)
    local = graph.reached_tuples(col)
    return int(C.allreduce(graph.grid.comm, np.array([local]))[0])
