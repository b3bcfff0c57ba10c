"""Direction-optimizing breadth-first search on one process.

Each level is one masked SpMSV over ``min_second`` (top-down) or one
bottom-up sweep over the unvisited vertices, whichever
:class:`~spbfs.direction.DirectionPolicy` deems cheaper. The driver loop is
the same for every backend; what a level costs in Python is a handful of
scalar operations and one kernel call, because a road network runs over a
thousand levels.
"""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from semirings.backend import get_backend
from spbfs import _steps_numba as nbk
from spbfs import _steps_vectorized as vk
from spbfs.config import Config
from spbfs.direction import TOP_DOWN, DirectionPolicy
from spbfs.graph import Graph, as_graph
from spbfs.result import BFSResult, LevelLog

__all__ = ["bfs"]


def bfs(
    graph: Any,
    source: int,
    *,
    config: Config | None = None,
    output: str | None = None,
    direction: str | None = None,
    max_depth: int | None = None,
    target: int | None = None,
    reverse: bool = False,
    directed: bool | None = None,
) -> BFSResult:
    """Breadth-first search from ``source``.

    Parameters
    ----------
    graph : Graph, EdgeList, sparse matrix, networkx graph, path or (src, dst)
        The graph; anything but a :class:`~spbfs.graph.Graph` is converted
        with :func:`~spbfs.graph.as_graph` (``directed`` applies then).
    source : int
        Root vertex id.
    config : Config, optional
        Format, backend, direction heuristics; defaults to the graph's config.
    output : {"both", "parents", "levels"}, optional
        Which arrays to return (overrides ``config.output``).
    direction : {"auto", "top-down", "bottom-up"}, optional
        Force a direction (overrides ``config.direction``).
    max_depth : int, optional
        Stop after this many levels; no work is done beyond them.
    target : int, optional
        Stop after the level that reaches ``target`` (s-t connectivity).
    reverse : bool
        Follow in-edges instead of out-edges (directed graphs).
    directed : bool, optional
        Used only when ``graph`` must be converted.

    Returns
    -------
    BFSResult
        Parents (the smallest frontier vertex reaching each vertex, ``-1`` where
        unreached, the source its own parent), levels and per-level statistics.

    Raises
    ------
    ValueError
        For a source or target out of range, an empty graph, a negative
        ``max_depth`` or an unknown option value.
    TypeError
        For a non-integer source or target.

    Examples
    --------
    >>> import spbfs
    >>> g = spbfs.Graph.from_edges([0, 1, 2], [1, 2, 3])
    >>> r = spbfs.bfs(g, 0)
    >>> r.levels.tolist(), r.parents.tolist()
    ([0, 1, 2, 3], [0, 0, 1, 2])
    >>> r.path(3).tolist()
    [0, 1, 2, 3]
    """
    g = as_graph(graph, config=config, directed=directed)
    cfg = config or g.config
    overrides = {k: v for k, v in (("output", output), ("direction", direction)) if v is not None}
    if overrides:
        cfg = cfg.replace(**overrides)
    if g.n == 0:
        raise ValueError("graph is empty (0 vertices): there is no source to start from")
    source = g.check_vertex(source, "source")
    if target is not None:
        target = g.check_vertex(target, "target")
    if max_depth is not None:
        if isinstance(max_depth, bool) or not isinstance(max_depth, int | np.integer):
            raise TypeError(f"max_depth must be an integer, got {type(max_depth).__name__}")
        if max_depth < 0:
            raise ValueError(f"max_depth must be >= 0, got {max_depth}")
    if cfg.threads is not None:
        import numba

        numba.set_num_threads(min(cfg.threads, numba.config.NUMBA_NUM_THREADS))
    return _search(g, source, cfg, max_depth, target, reverse)


def _search(
    g: Graph, source: int, cfg: Config, max_depth: int | None, target: int | None, reverse: bool
) -> BFSResult:
    backend = get_backend(cfg.backend)
    out_block, in_block = (g.in_block, g.out_block) if reverse else (g.out_block, g.in_block)
    deg = g.in_degree if reverse else g.out_degree
    if backend.name == "numba":
        pool = g._search_cache.setdefault("numba_scratch", _ScratchPool())
        slots = None
        if in_block.format == "csr":
            # Keyed by block: an undirected graph's two blocks are one object.
            key = "nonempty_out" if in_block is g.out_block else "nonempty_in"
            slots = g._search_cache.get(key)
            if slots is None:
                slots = g._search_cache[key] = _nonempty_columns(in_block)
        engine: _Engine = _NumbaEngine(out_block, in_block, deg, pool, slots)
    else:
        engine = None
        if backend.is_gpu:
            # Hand-written CUDA kernels where they compile; the vectorized cupy
            # steps (the same logic as numpy, covered by the CPU tests) otherwise.
            from spbfs._steps_cuda import make_engine

            engine = make_engine(backend.xp, out_block, in_block, deg)
        if engine is None:
            engine = _VectorizedEngine(backend.xp, out_block, in_block, deg)
    # A GPU's first bottom-up sweep costs microseconds: no guard against it
    # there (its fused top-down loop applies Beamer's test alone).
    gamma = float("inf") if backend.is_gpu else DirectionPolicy.gamma
    policy = DirectionPolicy(cfg.direction, cfg.alpha, cfg.beta, gamma)
    want_levels = cfg.output in ("both", "levels")
    n = g.n

    t_start = time.perf_counter()
    xp = engine.xp
    if xp is np and n >= 1 << 16:
        # Fresh result arrays: first touch (page faults and all) split over the threads.
        parents = np.empty(n, dtype=np.int64)
        levels = np.empty(n if want_levels else 1, dtype=np.int64)
        nbk.fill_minus1(parents, levels)
    else:
        parents = xp.full(n, -1, dtype=np.int64)
        levels = xp.full(n if want_levels else 1, -1, dtype=np.int64)
    parents[source] = source
    levels[0 if not want_levels else source] = 0
    engine.bind(parents, levels, want_levels)

    deg_source = int(deg[source])
    m_u = engine.total_degree - deg_source
    n_f, m_f = 1, deg_source
    frontier: Any = xp.asarray(np.array([source], dtype=np.int64))
    current = policy.choose(TOP_DOWN, n_f, m_f, m_u, n, True)
    log = LevelLog()
    depth = 0
    stopped = "exhausted"
    clock = time.perf_counter
    step = (engine.topdown, engine.bottomup)
    fused = getattr(engine, "topdown_levels", None)
    while n_f:
        if max_depth is not None and depth >= max_depth:
            stopped = "max_depth"
            break
        if target is not None and int(parents[target]) != -1:
            stopped = "target"
            break
        if current == TOP_DOWN and fused is not None:
            frontier, run, depth, m_u, m_f, switch = fused(
                frontier, depth, m_u, m_f, policy, max_depth, target
            )
            log.extend(run, TOP_DOWN)
            growing = len(run[0]) > 0 and run[1][-1] > run[0][-1]
            n_f = int(frontier.shape[0])
            if switch:
                current = policy.choose(current, n_f, m_f, m_u, n, growing)
            continue
        depth += 1
        t0 = clock()
        frontier, count, scanned, degsum = step[current](frontier, depth)
        log.add(n_f, count, scanned, current, clock() - t0)
        m_u -= degsum
        growing = count > n_f
        n_f, m_f = count, degsum
        current = policy.choose(current, n_f, m_f, m_u, n, growing)
    if stopped == "exhausted" and target is not None and int(parents[target]) != -1:
        stopped = "target"
    seconds = time.perf_counter() - t_start
    release = getattr(engine, "release", None)
    if release is not None:
        release()

    stats = log.stats()
    to_host = backend.to_host
    return BFSResult(
        source=source,
        parents=to_host(parents) if cfg.output in ("both", "parents") else None,
        levels=to_host(levels) if want_levels else None,
        stats=stats,
        seconds=seconds,
        config=cfg,
        stopped=stopped,
    )


class _Engine:
    """Per-search state and the two steps; one implementation per backend family.

    Both steps take the current frontier as a sorted id list and return the
    next one as a sorted id list; any bitmap a step needs is the engine's own
    business, so the driver never converts.
    """

    xp: Any
    total_degree: int

    def bind(self, parents: Any, levels: Any, want_levels: bool) -> None:
        raise NotImplementedError

    def topdown(self, frontier: Any, depth: int) -> tuple[Any, int, int, int]:
        """Return (next frontier, its size, edges scanned, its degree sum)."""
        raise NotImplementedError

    def bottomup(self, frontier: Any, depth: int) -> tuple[Any, int, int, int]:
        """Return (next frontier, its size, edges scanned, its degree sum)."""
        raise NotImplementedError


def _raw(block: Any) -> tuple[Any, Any, Any, bool]:
    """Kernel view of a block: (ptr, ind, jc, is_dcsc); csr gets an empty jc."""
    if block.format == "dcsc":
        return block.ptr, block.ind, block.jc, True
    return block.ptr, block.ind, block.ind[:0], False


def _nonempty_columns(block: Any) -> np.ndarray:
    """Columns of a csr block that have entries: the first bottom-up sweep's candidates.

    Kept per graph (4 bytes per non-isolated vertex below 2**31 vertices) so
    that sweep never tests an isolated vertex.
    """
    ptr = block.ptr
    dt = np.int32 if ptr.shape[0] <= 2**31 else np.int64
    return np.flatnonzero(ptr[1:] != ptr[:-1]).astype(dt)


class _ScratchPool:
    """The scratch arrays of a graph's last finished search, for its next search.

    Fresh n-long arrays cost a page fault per 4 KiB the first time they are
    written (milliseconds at a million vertices, taken inside the parallel
    sweep); repeated searches on one graph reuse them. One set is kept per
    graph, and none above ``max_bytes``: next to such searches the faults are cheap.
    """

    max_bytes = 1 << 28

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._item: tuple[np.ndarray, ...] | None = None

    def take(self, n: int, nc: int) -> tuple[np.ndarray, ...]:
        """Four int64 arrays of lengths ``n, n, nc, nc`` (reused when they fit)."""
        with self._lock:
            item, self._item = self._item, None
        if item is not None and item[0].shape[0] == n and item[2].shape[0] == nc:
            return item
        return (np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
                np.empty(nc, dtype=np.int64), np.empty(nc, dtype=np.int64))

    def give(self, item: tuple[np.ndarray, ...]) -> None:
        """Keep ``item`` for the next :meth:`take`."""
        if sum(a.nbytes for a in item) <= self.max_bytes:
            with self._lock:
                self._item = item


class _NumbaEngine(_Engine):
    xp = np

    def __init__(self, out_block: Any, in_block: Any, deg: np.ndarray,
                 pool: _ScratchPool, slots: np.ndarray | None = None) -> None:
        import numba

        self.out = _raw(out_block)
        self.inn = _raw(in_block)
        self.deg = deg
        # Undirected: the degree bottom-up needs is the in-block's own hi - lo (empty = use it).
        self.in_deg = deg[:0] if in_block is out_block else deg
        # deg counts the columns of the out-block: its sum is the block's nonzero count,
        # read off the pointers instead of summing n degrees on every search.
        ptr = self.out[0]
        self.total_degree = int(ptr[-1]) - int(ptr[0]) if ptr.shape[0] else int(deg.sum())
        n = out_block.shape[0]
        nc = in_block.nzc if in_block.format == "dcsc" else n
        self.pool = pool
        self.buf, self.found, self.cand, self.cand2 = pool.take(n, nc)
        self.ncand = -1  # the first bottom-up level lists the candidates as it goes
        self.slots = slots
        # The frontier as a bitmap: 1 bit per vertex stays in cache where a byte map would not.
        self.bits = np.zeros((n + 63) // 64, dtype=np.uint64)
        # Top-down marks its new vertices here to hand them on sorted without a sort.
        self.mark = np.zeros((n + 63) // 64, dtype=np.uint64)
        self.in_bits: np.ndarray = self.buf[:0].copy()  # ids whose bits are set
        # Per-level statistics of fused top-down runs (frontier, new, edges, seconds).
        self.stats = (np.empty(4096, np.int64), np.empty(4096, np.int64),
                      np.empty(4096, np.int64), np.empty(4096, np.float64))
        # A few chunks per thread balance the skewed degrees of power-law graphs.
        self.nchunks = 4 * numba.get_num_threads()
        self.nparts = numba.get_num_threads()

    def bind(self, parents: np.ndarray, levels: np.ndarray, want_levels: bool) -> None:
        self.parents, self.levels, self.want = parents, levels, want_levels

    def release(self) -> None:
        """Hand the scratch arrays back for the graph's next search."""
        self.pool.give((self.buf, self.found, self.cand, self.cand2))

    def topdown(self, frontier: np.ndarray, depth: int) -> tuple[Any, int, int, int]:
        ptr, ind, jc, dcsc = self.out
        k, scanned, degsum = nbk.topdown_step(
            ptr, ind, jc, dcsc, frontier, self.parents, self.levels, self.want, depth,
            self.deg, self.buf, self.mark, self.nparts,
        )
        # Sorted frontiers keep min-parent semantics and make the next gather stream.
        return nbk.sorted_new(self.buf, k, self.mark), k, scanned, degsum

    def topdown_levels(
        self, frontier: np.ndarray, depth: int, m_u: int, m_f: int, policy: DirectionPolicy,
        max_depth: int | None, target: int | None,
    ) -> tuple[np.ndarray, tuple[Any, ...], int, int, int, bool]:
        """Several top-down levels in one compiled call (see ``topdown_levels``).

        ``m_f`` is the degree sum of ``frontier``.
        """
        ptr, ind, jc, dcsc = self.out
        st = self.stats
        cur, nlev, depth, m_u, m_f, reason = nbk.topdown_levels(
            ptr, ind, jc, dcsc, frontier, self.parents, self.levels, self.want, depth, self.deg,
            self.buf, self.mark, self.nparts, m_u, m_f, policy.alpha, policy.gamma,
            policy.mode == "auto",
            -1 if max_depth is None else max_depth, -1 if target is None else target,
            st[0], st[1], st[2], st[3],
        )
        run = tuple(a[:nlev].tolist() for a in st)
        return cur, run, depth, m_u, m_f, reason == 1

    def bottomup(self, frontier: np.ndarray, depth: int) -> tuple[Any, int, int, int]:
        ptr, ind, jc, dcsc = self.inn
        if frontier is not self.in_bits:
            # Words are cleared whole, so clear the old frontier before setting the new one.
            nbk.clear_bits(self.in_bits, self.bits, self.nparts)
            nbk.set_bits(frontier, self.bits, self.nparts)
            self.in_bits = frontier
        nxt, self.ncand, scanned, degsum, cand = nbk.bottomup_step(
            ptr, ind, jc, dcsc, self.bits, self.parents, self.levels, self.want, depth,
            self.in_deg, self.cand, self.ncand, self.found, self.nchunks, self.cand2, self.slots,
        )
        if cand is not self.cand:
            self.cand, self.cand2 = cand, self.cand
        # The bitmap of nxt is made when a bottom-up level needs it, not before.
        return nxt, int(nxt.shape[0]), scanned, degsum


class _VectorizedEngine(_Engine):
    def __init__(self, xp: Any, out_block: Any, in_block: Any, deg: Any) -> None:
        self.xp = xp
        self.out_block = out_block
        self.in_block = in_block
        self.deg = deg
        self.total_degree = int(deg.sum())
        self.n = out_block.shape[0]

    def bind(self, parents: Any, levels: Any, want_levels: bool) -> None:
        self.parents, self.levels, self.want = parents, levels, want_levels

    def topdown(self, frontier: Any, depth: int) -> tuple[Any, int, int, int]:
        new, scanned, degsum = vk.topdown_step(
            self.xp, self.out_block, frontier, self.parents, self.levels, self.want, depth,
            self.deg,
        )
        return new, int(new.shape[0]), scanned, degsum

    def bottomup(self, frontier: Any, depth: int) -> tuple[Any, int, int, int]:
        front = self.xp.zeros(self.n, dtype=bool)
        front[frontier] = True
        nxt, scanned, degsum = vk.bottomup_step(
            self.xp, self.in_block, front, self.parents, self.levels, self.want, depth, self.deg
        )
        new = self.xp.flatnonzero(nxt).astype(np.int64)
        return new, int(new.shape[0]), scanned, degsum
