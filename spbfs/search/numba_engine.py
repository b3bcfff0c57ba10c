"""The numba engine: one process on the CPU, the kernels of :mod:`spbfs.kernels.bfs_numba`.

The search runs in :func:`~spbfs.kernels.bfs_numba.search_levels`, level after
level in compiled code, both directions; the driver sees it return only when
the search is over, a stop is due or its per-level record is full. The search
keeps one compact word per vertex (``state``: int32 up to 2**30 vertices; once
reached, the parent with its level's stamp above it, ``-1 - degree`` before)
and the visited vertices in level order (``queue``); the int64 parents and
levels the user gets are written once at the end, in one pass over the state
(:meth:`NumbaEngine.finish`).
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable
from typing import Any

import numba
import numpy as np

from spbfs.direction import BOTTOM_UP, TOP_DOWN, DirectionPolicy, leave_top_down
from spbfs.kernels import bfs_numba as nbk
from spbfs.kernels.degrees import regular_degrees
from spbfs.search.driver import LocalEngine
from spbfs.threads import ThreadPolicy, ThreadProbe

__all__ = ["NumbaEngine", "ScratchPool", "nonempty_columns", "state_dtype", "sweep_slots"]

_INT32_LIMIT = 2**31 - 1
# A reached vertex's state is ``stamp << bits | parent`` (kernels: _claim), with
# ``bits`` the ids' width and at least one stamp above it: the most vertices per dtype.
_MAX_VERTICES = {np.dtype(np.int32): 2**30, np.dtype(np.int64): 2**62}


def id_bits(n: int) -> int:
    """The width of the ids ``0 .. n - 1`` in a state word (at least 1)."""
    return max(1, (n - 1).bit_length())


def nonempty_columns(block: Any) -> np.ndarray:
    """Columns of a csr block that have entries: the first bottom-up sweep's candidates.

    Kept per graph (4 bytes per non-isolated vertex below 2**31 vertices) so
    that sweep never tests an isolated vertex.
    """
    ptr = block.ptr
    dt = np.int32 if ptr.shape[0] <= 2**31 else np.int64
    return np.flatnonzero(ptr[1:] != ptr[:-1]).astype(dt)


#: The share of empty columns from which the first bottom-up sweep reads its candidates
#: from :func:`nonempty_columns` (:func:`sweep_slots`).
EMPTY_SHARE = 1 / 8


def sweep_slots(block: Any) -> np.ndarray | None:
    """:func:`nonempty_columns` of a csr block where at least :data:`EMPTY_SHARE` of its
    columns are empty, else None (the first sweep then reads every slot).

    Read through the list, a candidate costs an extra load and the prefetches of its
    state word and pointers; a skipped empty column saves a branch the CPU cannot
    predict. Kronecker scale 20 (38% isolated) swept 15% faster with the list; the
    wiki-Vote-like graph (1% of columns empty) 15% slower (benchmarks/defaults.py).
    """
    slots = nonempty_columns(block)
    return slots if slots.shape[0] <= (1 - EMPTY_SHARE) * (block.ptr.shape[0] - 1) else None


def _all_columns(block: Any) -> bool:
    """Whether a dcsc block stores every column (``nzc`` equals the column count)."""
    return int(block.nzc) == int(block.shape[1])


def _fresh_rows(n: int) -> tuple[np.ndarray, np.ndarray]:
    block = np.empty((2, n), np.int64)
    return block[0], block[1]


def state_dtype(n: int, max_degree: int) -> np.dtype:
    """int32 where the ids leave room for a level stamp above them (n <= 2**30) and
    ``-1 - degree`` fits, else int64."""
    small = n <= _MAX_VERTICES[np.dtype(np.int32)] and max_degree < _INT32_LIMIT
    return np.dtype(np.int32 if small else np.int64)


class ScratchPool:
    """The scratch arrays of a graph's last finished search, for its next search.

    Fresh n-long arrays cost a page fault per 4 KiB the first time they are
    written (milliseconds at a million vertices, taken inside the parallel
    sweep); repeated searches on one graph reuse them. One set is kept per
    graph, and none above ``max_bytes``: next to such searches the faults are cheap.
    The pool also keeps the compiled loop's per-level record (:meth:`records`),
    the result blocks of the last searches, handed out again only once
    their results are gone (:meth:`results`), the thread policy of searches
    without a thread count (its probe names numba's workers once per graph), and
    the last search's engine whole, for the next search the same way
    (:meth:`keep_engine`: what an engine computes from the graph is a third of the
    fixed cost of a search of a few thousand vertices).
    """

    max_bytes = 1 << 28

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._item: tuple[np.ndarray, ...] | None = None
        self._clean_for: np.ndarray | None = None
        self._results: list[np.ndarray] = []
        self._records: tuple[np.ndarray, np.ndarray] | None = None
        self._engine: NumbaEngine | None = None
        # The count of a block only a list refers to, read the same way as the kept
        # ones' in results() (not a constant: how an interpreter counts the call's own
        # temporary references may change between versions), once per pool.
        for block in [np.empty((2, 0), np.int64)]:
            self._unshared = sys.getrefcount(block)
        #: The thread policy of the graph's searches that leave the count to the machine.
        self.thread_policy = ThreadPolicy(probe=ThreadProbe())
        #: Whether the graph's last search (from a vertex with edges) asked for its
        #: thread count. The next one then asks on entry, while the interpreter's
        #: and the kernel's code are still in cache: in the middle of a search,
        #: after its first levels have swept the caches, reading /proc costs
        #: several times more (docs/benchmarks.md).
        self.asked_threads = False

    def records(self, size: int) -> tuple[np.ndarray, np.ndarray]:
        """The compiled loop's per-level record, ``size`` rows of 4 int64 and ``size`` seconds.

        Kept between searches (the driver copies what a run wrote): a fresh
        160 KB pair was a pair of mmap calls and page faults on every search.
        """
        with self._lock:
            rec, self._records = self._records, None
        if rec is None or rec[1].shape[0] != size:
            rec = (np.empty((size, 4), np.int64), np.empty(size, np.float64))
        return rec

    def give_records(self, rec: tuple[np.ndarray, np.ndarray]) -> None:
        """Keep ``rec`` for the next :meth:`records`."""
        with self._lock:
            self._records = rec

    #: Result blocks kept: two serve ``r = bfs(g, s)`` in a loop, where the
    #: previous result is alive while the next search runs.
    keep_results = 2
    #: Below this many entries result blocks are fresh: malloc serves 64 KiB from its
    #: heap without page faults, in less time than the test for a free kept block.
    min_rows = 4096

    def results(self, n: int) -> tuple[np.ndarray, np.ndarray]:
        """Two int64 arrays of ``n`` entries for a search's parents and levels (contents undefined).

        They are the rows of one ``(2, n)`` block. The pool keeps the blocks of
        the last searches and hands one out again once nothing else refers to
        it: every numpy view of a row (the caller's result, any view of it)
        holds a reference to the block, so a block whose only references are
        the pool's is free. Fresh memory costs a page fault per 4 KiB (or the
        zeroing of a huge page) when first written, a tenth of a search on a
        high-diameter graph of a million vertices (docs/benchmarks.md); a
        recycled block is only overwritten. Blocks of fewer than ``min_rows``
        entries are fresh, blocks above ``max_bytes`` are not kept, and none are
        where reference counts are not exact (a free-threaded interpreter running
        without its GIL).
        """
        if n < self.min_rows:
            return _fresh_rows(n)
        # Read from the module's dict: getattr with a default raises and catches an
        # AttributeError on interpreters without the function, 2-3 µs a search.
        gil = sys.__dict__.get("_is_gil_enabled")
        if gil is not None and not gil():
            return _fresh_rows(n)
        unshared = self._unshared
        count = sys.getrefcount
        with self._lock:
            kept = self._results
            for block in kept:
                if block.shape[1] == n and count(block) <= unshared:
                    break
            else:
                block = np.empty((2, n), np.int64)
                if block.nbytes <= self.max_bytes:
                    self._results = [block, *kept[:self.keep_results - 1]]
            # The views are made under the lock: once they exist the block counts as used.
            return block[0], block[1]

    def take(self, n: int, nc: int, dtype: np.dtype,
             deg: np.ndarray) -> tuple[tuple[np.ndarray, ...], bool]:
        """``state, queue, buf`` (n, n, max(n, nc)), ``cands`` (2 x nc) of ``dtype`` and
        a clear bitmap (n bits), reused when they fit; and whether
        ``state`` already holds ``-1 - deg`` (left so by the last search)."""
        with self._lock:
            item, self._item = self._item, None
            clean_for, self._clean_for = self._clean_for, None
        if (item is not None and item[0].shape[0] == n and item[3].shape[1] == nc
                and item[0].dtype == dtype):
            return item, clean_for is deg
        # The queue has a slot past n: a level's unbranched claims write one past its end.
        return (np.empty(n, dtype), np.empty(n + 1, dtype), np.empty(max(n, nc), dtype),
                np.empty((2, nc), dtype), np.zeros((n + 63) // 64, np.uint64)), False

    def give(self, item: tuple[np.ndarray, ...], clean_for: np.ndarray | None) -> None:
        """Keep ``item`` (its bitmaps clear) for the next :meth:`take`; ``clean_for``
        is the degree array its ``state`` was reset to, if it was."""
        if sum(a.nbytes for a in item) <= self.max_bytes:
            with self._lock:
                self._item, self._clean_for = item, clean_for

    def keep_engine(self, engine: NumbaEngine) -> None:
        """Keep the finished ``engine`` whole (its scratch arrays and record with it) for
        the graph's next search, where its arrays fit ``max_bytes``; else hand its
        arrays back as :meth:`give` and :meth:`give_records` do."""
        if engine.scratch_bytes <= self.max_bytes:
            with self._lock:
                self._engine = engine
            return
        self.give(engine.scratch, engine.deg if engine.clean else None)
        self.give_records(engine._rec)

    def kept_engine(self, out_block: Any, in_block: Any) -> NumbaEngine | None:
        """The engine the graph's last search kept (:meth:`keep_engine`), if built on these
        blocks (the same direction), for one search at a time: a concurrent search
        finds none. One of the other direction gives its arrays to :meth:`take`."""
        with self._lock:
            engine, self._engine = self._engine, None
        if engine is None:
            return None
        if engine.blocks[0] is out_block and engine.blocks[1] is in_block:
            return engine
        self.give(engine.scratch, engine.deg if engine.clean else None)
        self.give_records(engine._rec)
        return None


#: The stop of each of search_levels' reasons: None where it is to be called again.
_STOPS = {nbk.EXHAUSTED: "exhausted", nbk.MAX_DEPTH: "max_depth", nbk.TARGET: "target",
          nbk.FULL: None, nbk.THREADS: None}

#: search_levels' ``fin`` of the results each ``output`` asks for.
_FIN = {(p, lv): nbk.FIN_PARENTS * p | nbk.FIN_LEVELS * lv
        for p in (False, True) for lv in (False, True)}
_THREADS, _SV_HEAD, _SV_TAIL, _SV_DEPTH = nbk.THREADS, nbk.SV_HEAD, nbk.SV_TAIL, nbk.SV_DEPTH
_SV_DONE, _SV_WANTED = nbk.SV_DONE, nbk.SV_WANTED

#: The policy of :meth:`NumbaEngine.start`, which runs no level.
_START = DirectionPolicy("top-down")

#: ``team_topdown`` of a search whose small levels run on one thread (no team).
_NO_TEAM = 1 << 62

class NumbaEngine(LocalEngine):
    """One process, numba kernels, the whole search in compiled code.

    Parameters
    ----------
    out_block, in_block : Block
        The blocks followed top-down (columns = out-edges) and bottom-up.
    deg : numpy.ndarray
        Degree of every vertex in the search direction.
    pool : ScratchPool
        The graph's scratch arrays.
    slots : numpy.ndarray, optional
        The in-block's non-empty csr columns (first bottom-up sweep).
    dtype : numpy.dtype, optional
        The per-vertex state's dtype; default :func:`state_dtype` (int32 where
        it fits). int64 is always correct; tests force it on small graphs.
    threads : int or callable, optional
        Threads of the parallel levels (default: numba's current count). A
        callable returning the count (and setting numba's) is called only
        when the first parallel region is due: a search of small levels on a
        small graph never calls it.
    max_degree : int, optional
        ``deg.max()``, where the caller keeps it between searches (default:
        computed here, a pass over ``deg``).
    regular : bool, optional
        :func:`regular_degrees` of ``deg``, where the caller keeps it between
        searches (default: computed here, a pass over ``deg``).
    in_deg : numpy.ndarray, optional
        On a directed graph, the in-degrees (columns of ``in_block``): the
        switch to bottom-up then weighs the in-edges of the unvisited vertices,
        what a sweep reads (:func:`~spbfs.kernels.bfs_numba.search_levels`).
        None (default) where every edge goes both ways.
    quiet : callable, optional
        Asked once the thread count is known: whether runs of small top-down
        levels may go to a team of threads (:attr:`spbfs.threads.SearchThreads.quiet`:
        not where a count of two was read without a trial beside other work,
        whose descheduled helper makes a level of microseconds wait
        milliseconds unmeasured). Default: they may.
    """

    xp = np
    #: Levels per call of the compiled loop (its per-level record).
    record = 4096

    def __init__(self, out_block: Any, in_block: Any, deg: np.ndarray, pool: ScratchPool,
                 slots: np.ndarray | None = None, dtype: np.dtype | None = None,
                 threads: int | Callable[[], int] | None = None,
                 max_degree: int | None = None, regular: bool | None = None,
                 in_deg: np.ndarray | None = None,
                 quiet: Callable[[], bool] | None = None) -> None:
        n = self.n = out_block.shape[0]
        self.blocks = (out_block, in_block)
        optr, oind, ojc, odcsc = out_block.kernel_view
        # A dcsc block with every column present is a csr block (jc is 0 .. n - 1): its
        # kernels then skip the column index, one dependent load per frontier vertex
        # (road networks, grids and meshes have no empty column).
        odcsc = odcsc and not _all_columns(out_block)
        aux, shift = out_block.column_index() if odcsc else (optr[:0], 0)
        self.out = (optr, oind, ojc, aux, shift, odcsc)
        iptr, iind, ijc, idcsc = in_block.kernel_view
        self.inn = (iptr, iind, ijc, idcsc and not _all_columns(in_block))
        # Flags left out are compile-time Falses, which give csr blocks kernels of their own
        # (nbk.search_levels); both are named where either block is a dcsc block with empty
        # columns, so that the loop is compiled in two forms, not four.
        self.formats = ({"odcsc": odcsc, "idcsc": self.inn[3]} if odcsc or self.inn[3]
                        else {})
        self.deg = deg
        self.in_deg = deg[:0] if in_deg is None or in_deg is deg else in_deg
        # deg counts the columns of the out-block: its sum is the block's nonzero count,
        # read off the pointers instead of summing n degrees on every search.
        self.total_degree = (int(optr[-1]) - int(optr[0]) if optr.shape[0]
                             else int(deg.sum()))
        self.max_degree = int(deg.max()) if max_degree is None and n else max_degree or 0
        if dtype is None:
            dtype = state_dtype(n, self.max_degree)
        self.dtype = np.dtype(dtype)
        if self.dtype not in _MAX_VERTICES:
            raise TypeError(f"dtype must be int32 or int64, got {self.dtype}")
        nc = in_block.nzc if in_block.format == "dcsc" else n
        self.pool = pool
        self.scratch, self.clean = pool.take(n, nc, self.dtype, deg)
        self.state, self.queue, self.buf, self.cands, self.front = self.scratch
        if n > _MAX_VERTICES[self.dtype]:
            raise ValueError(f"dtype {self.dtype} cannot hold the state of {n} vertices")
        self.bits = id_bits(n)
        #: Level stamps the word holds above the ids: a deeper search strips the stamps
        #: so far and counts again from 1 (a test lowers it to strip often).
        self.stamps = (1 << (8 * self.dtype.itemsize - 1 - self.bits)) - 1
        has_slots = slots is not None
        if slots is None or slots.dtype != self.dtype:
            slots = (self.queue[:0] if slots is None else slots.astype(self.dtype))
        self.slots, self.has_slots = slots, has_slots
        self.sv = np.zeros(nbk.SV_SIZE, np.int64)
        # What the compiled loop's start copies into sv (search_levels' sv0): the source
        # alone reached, unstamped, no in-edge counted yet.
        self._sv0 = np.zeros(nbk.SV_SIZE, np.int64)
        self._sv0[[nbk.SV_TAIL, nbk.SV_UNSTAMPED]] = 1
        self._sv0[nbk.SV_NCAND] = -1  # the first bottom-up level lists its candidates
        self._sv0[nbk.SV_MU] = self.total_degree
        # Every arc is some vertex's in-edge: their total is the out-edges'.
        self._sv0[nbk.SV_IN_LEFT] = self.total_degree
        self._source = 0
        self._rec = pool.records(self.record)
        self.st, self.st_t = self._rec
        self.scratch_bytes = sum(a.nbytes for a in self.scratch)
        # The loop's arguments that stay the engine's for its life (a kept engine serves
        # the graph's next searches): its arrays, the width of the ids; the scalars a
        # search may set (the stamps, thread counts, thresholds) are read per call.
        oaux, oshift = self.out[3], self.out[4]
        self._arrays = (optr, oind, ojc, oaux, oshift, iptr, iind, ijc, self.slots,
                        self.has_slots, self.state, self.bits)
        self._scratch_args = (self.queue, self.buf, self.front, self.cands, self.sv, self._sv0)
        self._no_offsets = np.zeros(2, np.int64)
        # The result arrays of a call that leaves the results to finish().
        self._no_results = (self._no_offsets[:0], self._no_offsets[:0])
        #: The results the next search's finish() asks for, (parents, levels): the compiled
        #: loop writes them itself when it ends the search (``fin``). Set before the search.
        self.output = (True, True)
        # The result rows the loop writes into (pool.results), taken at its first call.
        self._out: tuple[np.ndarray, np.ndarray] | None = None
        self._policy_key: tuple[Any, int, int] = (None, 0, 0)
        self._policy_args: tuple[Any, ...] = ()
        self.par_topdown = nbk.PAR_TOPDOWN
        self.renew(threads, quiet)
        self.regular = regular_degrees(deg) if regular is None else regular
        # Serial top-down levels claim without branches where vertices have few
        # neighbours (road networks) or degrees that vary (meshes, power-law graphs): there
        # the branches on what a claim finds are mispredicted. On a graph whose vertices
        # nearly all have one degree (a grid) the pattern repeats, and the branches win.
        self.unbranched = self.total_degree < nbk.UNBRANCHED_DEGREE * n or not self.regular

    def free_new(self, policy: DirectionPolicy) -> int:
        """``search_levels``' ``kfree``: below this many new vertices a top-down level
        cannot turn the search bottom-up under ``policy``, whatever their degrees.

        The guard of Beamer's test (:func:`spbfs.direction.next_direction`) needs
        ``m_f * gamma >= n``, and ``m_f <= k * max_degree``; one is taken off
        the bound against rounding. A ``gamma`` that is not positive (or NaN)
        makes the guard fail at any ``m_f``.
        """
        n, gamma = self.n, policy.gamma
        if policy.mode != "auto" or not gamma > 0 or not self.max_degree * gamma > 0:
            return n + 1
        limit = n / (self.max_degree * gamma)
        return n + 1 if limit > n else max(0, math.ceil(limit) - 1)

    def team(self, policy: DirectionPolicy) -> int:
        """``search_levels``' ``team_topdown``: none on a directed graph whose switch
        test could fire inside a team run (its levels test with out-edges, see
        :func:`~spbfs.kernels.bfs_numba.search_levels`): fewer vertices than a team
        level's most edges (p2p-Gnutella31's 62,586). A forced direction gets the same
        choice: with teams, p2p-Gnutella31's forced top-down searches on two threads
        took 1.1 ms, twice its searches on one thread or without teams."""
        reach = nbk._BAND_REACH * self.par_topdown
        if (self.in_deg.shape[0]
                and leave_top_down(reach, 0, self.n, policy.alpha, policy.gamma)):
            return _NO_TEAM
        return self.team_topdown

    def renew(self, threads: int | Callable[[], int] | None = None,
              quiet: Callable[[], bool] | None = None) -> None:
        """Set the thread count (or how to ask for it) and ``quiet`` of the next search,
        as the constructor's arguments of those names do: a kept engine
        (:meth:`ScratchPool.kept_engine`) serves a new search after this call."""
        self._ask = threads if callable(threads) else None
        self._quiet = quiet
        self.team_topdown = nbk.TEAM_TOPDOWN
        # 0: not chosen yet (the compiled loop returns before a parallel level).
        self._set_threads(0 if callable(threads) else threads or numba.get_num_threads())

    def _set_threads(self, count: int) -> None:
        self.nparts = count
        if count and self._quiet is not None and not self._quiet():
            self.team_topdown = _NO_TEAM
        # A few chunks per thread balance the skewed degrees of power-law graphs; one
        # thread runs the sweep as one chunk, inline (a region on one thread is still
        # a launch, and its chunks' survivors a gather).
        self.nchunks = 4 * count if count > 1 else 1

    def threads(self) -> int:
        """The thread count of the parallel regions, asked for now if not chosen yet."""
        if self.nparts == 0:
            self._set_threads(max(1, int(self._ask())))
        return self.nparts

    @property
    def parallel_passes(self) -> bool:
        """Whether the passes over all vertices (the reset, the results) run in parallel
        where more than one thread is given: from ``nbk._PAR_N`` vertices on."""
        return self.n >= nbk._PAR_N

    def _parallel_pass(self) -> bool:
        return self.parallel_passes and self.threads() > 1

    # -- the driver's protocol -------------------------------------------------
    def _reset(self) -> None:
        """Every vertex unvisited (already so after a finished search)."""
        if not self.clean:
            self._parallel_pass()  # its count set before the pass runs
            nbk.init_state(self.deg, self.state)
        self.clean = False

    def start(self, source: int) -> tuple[np.ndarray, int]:
        """Every vertex unvisited, then ``source`` (the compiled loop's start, no level run:
        the driver's path without :meth:`levels_run`)."""
        NumbaEngine.levels_run(self, source, _START, 0, None)
        return self.queue[:1], int(self.deg[source])

    def unvisited_in_edges(self) -> int | None:
        """In-edges of the unvisited vertices on a directed graph (None: every edge goes
        both ways, and the driver's out-edge count serves)."""
        if not self.in_deg.shape[0]:
            return None
        sv = self.sv
        pos, tail = int(sv[nbk.SV_IN_POS]), int(sv[nbk.SV_TAIL])
        if pos < tail:
            sv[nbk.SV_IN_LEFT] -= int(self.in_deg[self.queue[pos:tail]].sum())
            sv[nbk.SV_IN_POS] = tail
        return int(sv[nbk.SV_IN_LEFT])

    def reached(self, v: int) -> bool:
        """Whether ``v`` has a parent."""
        return int(self.state[v]) >= 0

    def levels_run(self, source: int, policy: DirectionPolicy, max_depth: int | None,
                   target: int | None) -> tuple[Any, ...]:
        """Levels in compiled code, from the start at ``source`` (``-1``: on from the last
        call), until the search ends, a stop is due or the record is full.

        Returns (frontier, record rows (frontier, new, edges, direction),
        seconds, depth, why it stopped: ``"exhausted"``, ``"max_depth"`` or
        ``"target"``, None where it is to be called again); the frontier is a
        view that the next call overwrites.
        """
        if source >= 0:
            if self.clean:
                self.clean = False  # what _reset() does here, without its call
            else:
                self._reset()
            self._source = source
        # The policy's numbers for the loop, kept for the next call with the same policy
        # object and team threshold (the driver's policy is kept with the graph).
        key = self._policy_key
        par_topdown = self.par_topdown
        if key[0] is not policy or key[1] != self.team_topdown or key[2] != par_topdown:
            key = self._policy_key = (policy, self.team_topdown, par_topdown)
            self._policy_args = (policy.fused, self.team(policy), self.free_new(policy))
        fused, team, kfree = self._policy_args
        # The results are written by the loop where the search ends in it with no target to
        # test afterwards (the pass resets the state) and the pass over n runs serial.
        fin = 0
        if target is None and self.n < nbk._PAR_N:
            fin = _FIN[self.output]
            out = self._out
            if out is None:
                out = self._out = self.pool.results(self.n)
        parents, levels = out if fin else self._no_results
        sv = self.sv
        nlev, reason = nbk.search_levels(
            *self._arrays, self.stamps, *self._scratch_args, source, *fused, self.nparts,
            self.nchunks, par_topdown, team,
            self.unbranched, kfree, -1 if max_depth is None else max_depth,
            -1 if target is None else target, self.st, self.st_t, self.in_deg, self.deg,
            parents, levels, fin, **self.formats,
        )
        if reason == _THREADS:
            self.threads()  # the next call runs the parallel level
        # One conversion of the scalars, not a numpy item read each (0.1-0.2 µs apiece).
        v = sv.tolist()
        return (self.queue[v[_SV_HEAD]:v[_SV_TAIL]], self.st[:nlev], self.st_t[:nlev],
                v[_SV_DEPTH], _STOPS[reason])

    def frontier(self) -> np.ndarray:
        """The current frontier (a view of the queue)."""
        return self.queue[self.sv[nbk.SV_HEAD]:self.sv[nbk.SV_TAIL]]

    def _step(self, direction: int, depth: int) -> tuple[Any, int, int, int]:
        # One level of the compiled loop, its direction forced and a stop right after it
        # (called through the class: a test may switch the instance's levels_run off).
        forced = DirectionPolicy(("top-down", "bottom-up")[direction])
        self.threads()
        self.sv[nbk.SV_CUR] = direction
        frontier, rec, _, _, _ = NumbaEngine.levels_run(self, -1, forced, depth, None)
        return frontier, int(rec[0, 1]), int(rec[0, 2]), int(self.sv[nbk.SV_MF])

    def topdown(self, frontier: np.ndarray, depth: int) -> tuple[Any, int, int, int]:
        """One top-down level (the driver's path without :meth:`levels_run`)."""
        return self._step(TOP_DOWN, depth)

    def bottomup(self, frontier: np.ndarray, depth: int) -> tuple[Any, int, int, int]:
        """One bottom-up level (the driver's path without :meth:`levels_run`)."""
        return self._step(BOTTOM_UP, depth)

    # -- results ---------------------------------------------------------------
    def finish(self, discovered: np.ndarray, want_parents: bool,
               want_levels: bool) -> tuple[np.ndarray | None, np.ndarray | None]:
        """int64 parents and levels from the state; ``discovered`` is the per-level count."""
        n = self.n
        sv = self.sv
        out, self._out = self._out, None
        if sv[_SV_DONE]:
            # The compiled loop wrote them (levels_run's ``fin``, from ``output``).
            self.clean = True
            return (out[0] if want_parents else None), (out[1] if want_levels else None)
        unstamped = int(sv[nbk.SV_UNSTAMPED])
        offsets = self._no_offsets
        if want_levels and unstamped > 1:
            # Levels whose stamps were stripped are scattered from the queue by level.
            offsets = np.empty(discovered.shape[0] + 2, np.int64)
            offsets[0], offsets[1] = 0, 1
            np.cumsum(discovered, out=offsets[2:])
            offsets[2:] += 1
        parents, levels = self.pool.results(n) if out is None else out
        if not want_parents:
            parents = parents[:0]
        if not want_levels:
            levels = levels[:0]
        # One thread (a busy machine, or threads=1): no parallel region at all.
        nbk.finish(self.state, self.queue, offsets, parents, levels, want_parents, want_levels,
                   self.deg, True, self.bits, int(sv[nbk.SV_REBASE]), unstamped,
                   self.nchunks if self._parallel_pass() else 1)
        self.clean = True
        return (parents if want_parents else None), (levels if want_levels else None)

    def release(self) -> bool:
        """Hand the engine back for the graph's next search (:meth:`ScratchPool.keep_engine`),
        and whether it asked for its thread count (a search from a vertex without edges
        tells nothing).

        Returns whether the search ran a level that runs in parallel where
        threads are given: only such a search's cost tells one thread count
        from another (:meth:`spbfs.threads.SearchThreads.report`).
        """
        wanted = bool(self.sv[_SV_WANTED])
        if self.deg[self._source]:
            self.pool.asked_threads = wanted or self.parallel_passes
        self.pool.keep_engine(self)
        return wanted
