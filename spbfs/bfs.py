"""Direction-optimizing breadth-first search on one process.

Each level is one masked SpMSV over ``min_second`` (top-down) or one
bottom-up sweep over the unvisited vertices, whichever
:class:`~spbfs.direction.DirectionPolicy` deems cheaper. This module picks the
engine for the backend (numba, CUDA kernels, vectorized numpy/cupy) and runs
it under the level loop every engine shares,
:func:`spbfs.search.driver.run_levels`.
"""

from __future__ import annotations

import time
from functools import partial
from typing import Any

import numpy as np

from semirings.backend import get_backend
from semirings.semiring import Semiring
from spbfs._compile import numpy_first
from spbfs.config import Config, as_config, default_config
from spbfs.direction import DirectionPolicy
from spbfs.graph import Graph, as_graph, is_dist_graph
from spbfs.kernels import bfs_numba as nbk
from spbfs.kernels.rows_bfs import MAX_VERTICES, rows_search
from spbfs.matrix_cache import MatrixCache, RowsInput, process_cache, rows_input
from spbfs.result import BFSResult
from spbfs.search.checks import (
    MIN_SECOND,
    PARENTS,
    VALUES,
    check_max_depth,
    check_semiring,
    check_vertex,
)
from spbfs.search.driver import LocalEngine, run_levels
from spbfs.search.numba_engine import NumbaEngine, ScratchPool, sweep_slots
from spbfs.search.semiring_engine import semiring_search
from spbfs.search.small import degrees_regular, small_rule, small_search, takes_small
from spbfs.search.vectorized_engine import VectorizedEngine
from spbfs.threads import ONE_THREAD_ARCS, SearchThreads

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
    semiring: Semiring | str = "min_second",
    source_value: Any = 1,
    cache: MatrixCache | bool = True,
) -> BFSResult:
    """Breadth-first search from ``source``, or a traversal over any semiring.

    Parameters
    ----------
    graph : Graph, DistGraph, EdgeList, sparse matrix, networkx graph, path or (src, dst)
        The graph; anything but a :class:`~spbfs.graph.Graph` is converted
        with :func:`~spbfs.graph.as_graph` (``directed`` applies then), except
        a scipy sparse matrix, which ``cache`` decides: its rows searched as
        they are, or a Graph built (and kept) from it. A
        :class:`~spbfs.mpi.DistGraph` (this rank's piece of a process grid's
        graph) runs the grid search, :func:`spbfs.mpi.bfs`, on every rank
        (collective): the same script searches one process or a grid.
    source : int or node label
        Root vertex id; for a networkx graph its node label (the result is by
        vertex id: ``graph.ids`` maps ids back to labels).
    config : Config or mapping, optional
        Format, backend, direction heuristics; defaults to the graph's config
        (for an input that is no Graph, :func:`spbfs.config.default_config`).
        A mapping (``{"format": "dcsc"}``) sets those keys over that default.
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
    semiring : Semiring or str
        The semiring ``(⊕, ⊗)`` of a level's product. ``"min_second"`` (the
        default: parents) and ``"any_pair"`` (levels only, as LAGraph does when
        only levels are asked for) run the fused fast kernels; ``any_pair``
        returns levels only and refuses an ``output`` asking for parents. Any
        other semiring (a name such as ``"plus_second"``, or a
        ``semirings.Semiring``, e.g. from ``Semiring.from_callables``) runs the
        generic engine: the frontier carries a value per vertex, and a vertex
        reached at level ``d`` gets ``⊕`` over its in-edges ``u -> v`` from level
        ``d - 1`` of ``B[v, u] ⊗ value[u]`` (``plus_second``: the number of
        shortest paths). It runs the direction the policy picks (push: a
        masked SpMSV over the out-block; pull: a masked SpMV over the in-edges;
        as a pull reads every in-edge unless the monoid is ``any``, it pulls
        only once the frontier's edges outnumber the unvisited vertices');
        ``output`` must then be ``"levels"`` or left out.
    source_value : int or float
        The source's value in a generic semiring's frontier (default 1). The
        values are int64 (bools and integers) or float64. Only 1 is accepted
        with ``min_second`` and ``any_pair``, whose frontiers carry no values.
    cache : MatrixCache or bool
        For a scipy sparse ``graph`` only: where the Graph built from it is
        kept for the next search on the same unchanged matrix
        (:mod:`spbfs.matrix_cache`). ``True`` (default) uses the process's
        cache (:func:`~spbfs.matrix_cache.process_cache`), ``False`` none.
        The first search on a matrix (and every search with ``cache=False``)
        reads the rows of the matrix as they are, top-down, when it can: not
        for ``reverse=True``, ``directed=False``, a forced bottom-up
        direction, a semiring other than ``min_second`` / ``any_pair``, or a
        backend other than numba; those build the Graph at once. The second
        search on the same content builds it and later ones reuse it. The
        answer is the same either way; a one-off's levels are all top-down.

    Returns
    -------
    BFSResult or DistBFSResult
        Parents (the smallest frontier vertex reaching each vertex, ``-1`` where
        unreached, the source its own parent), levels and per-level statistics.
        A generic semiring gives ``levels`` and ``values`` (each reached
        vertex's value; the semiring's additive identity where unreached) and
        no parents. On a DistGraph: a :class:`~spbfs.mpi.DistBFSResult`, this
        rank's piece of the same arrays and the global statistics.

    Raises
    ------
    ValueError
        For a source or target out of range, an empty graph, a negative
        ``max_depth``, an unknown option value or semiring name, parents asked
        of a semiring that computes none, a ``source_value`` other than 1
        with ``min_second`` / ``any_pair``, or ``reverse=True`` on a DistGraph.
    CollectiveError
        On a DistGraph, on every rank, for what :func:`spbfs.mpi.bfs` refuses.
    TypeError
        For a non-integer source or target, a ``semiring`` that is neither a
        Semiring nor a name, a non-numeric ``source_value``, or a user
        semiring the numpy/cupy backend cannot run.

    Examples
    --------
    >>> import spbfs
    >>> g = spbfs.Graph.from_edges([0, 1, 2], [1, 2, 3])
    >>> r = spbfs.bfs(g, 0)
    >>> r.levels.tolist(), r.parents.tolist()
    ([0, 1, 2, 3], [0, 0, 1, 2])
    >>> r.path(3).tolist()
    [0, 1, 2, 3]
    >>> spbfs.bfs(g, 0, semiring="plus_second").values.tolist()   # shortest-path counts
    [1, 1, 1, 1]
    """
    is_graph = isinstance(graph, Graph)  # a DistGraph is no Graph
    if (is_graph and config is None and output is None and direction is None and not reverse
            and max_depth is None and target is None and isinstance(semiring, str)
            and semiring == "min_second" and type(source_value) is int and source_value == 1):
        # The plain call on a Graph: what it needs beyond the source was worked out by the
        # graph's first such call (_PlainCall; a third of the Python of a search of a few
        # thousand vertices was spent recomputing it).
        plan = _plain_call(graph)
        if plan is not None:
            # An int id of a graph without labels needs neither call (what they return).
            s = (source if type(source) is int and 0 <= source < plan.n and graph.ids is None
                 else check_vertex(graph.resolve_vertex(source), plan.n, "source"))
            deg = plan.small_deg
            if plan.small or (deg is not None and deg[s] == 0):
                return small_search(graph, s, plan.config, False, None, None, plan.pool)
            # Nothing to resolve either: straight to the search (the small case is out).
            choice = SearchThreads(plan.config.threads)
            try:
                return _search(graph, s, plan.config, None, None, False, choice, small=False,
                               plan=plan)
            finally:
                choice.restore()
    if config is not None and not isinstance(config, Config):
        config = as_config(config)  # a mapping of settings, or a TypeError naming config
    if not is_graph and is_dist_graph(graph):
        return _grid_bfs(graph, source, config, output, direction, max_depth, target, reverse,
                         semiring, source_value)
    threads = (config or (graph.config if is_graph else default_config())).threads
    # None: as many as the machine has idle when the first parallel region is due
    # (search_threads(threads, lazy=True), without a generator's cost per call).
    choice = SearchThreads(threads)
    try:
        if not is_graph:
            # Chosen before the graph is resolved: a kept Graph of a scipy matrix is
            # recognized by a digest of its structure, which runs in parallel.
            choice.count()
        return _bfs(graph, source, config, max_depth, target, output, direction, reverse,
                    directed, semiring, source_value, cache, choice)
    finally:
        choice.restore()


def _bfs(graph: Any, source: Any, config: Config | None, max_depth: int | None,
         target: Any, output: str | None, direction: str | None, reverse: bool,
         directed: bool | None, semiring: Semiring | str, source_value: Any,
         cache: MatrixCache | bool, threads: SearchThreads) -> BFSResult:
    """:func:`bfs` with its thread count (``threads``, chosen when first needed)."""
    g, cfg, kind, semiring = _resolve_graph(graph, config, directed, output, direction, reverse,
                                            semiring, source_value, cache)
    if g.n == 0:
        raise ValueError("graph is empty (0 vertices): there is no source to start from")
    if isinstance(g, RowsInput):
        # A one-off search on a scipy matrix: its rows, top-down, no Graph built.
        source = check_vertex(source, g.n, "source")
        if target is not None:
            target = check_vertex(target, g.n, "target")
        return rows_search(g.indptr, g.indices, g.n, source, check_max_depth(max_depth),
                           target, cfg)
    # A networkx graph's vertices are its node labels (as in spbfs.sssp and the backend).
    source = check_vertex(g.resolve_vertex(source), g.n, "source")
    if target is not None:
        target = check_vertex(g.resolve_vertex(target, "target"), g.n, "target")
    max_depth = check_max_depth(max_depth)
    if kind == VALUES:
        threads.count()
        return semiring_search(g, source, cfg, semiring, source_value, max_depth, target, reverse)
    return _search(g, source, cfg, max_depth, target, reverse, threads)


def _grid_bfs(graph: Any, source: Any, config: Config | None, output: str | None,
              direction: str | None, max_depth: int | None, target: Any, reverse: bool,
              semiring: Semiring | str, source_value: Any) -> Any:
    """:func:`bfs` on a DistGraph: :func:`spbfs.mpi.bfs` with the one-process options.

    ``output`` and the semiring are checked as one process checks them; the
    grid search drops what the config's ``output`` does not ask for.
    """
    from spbfs.mpi.bfs import bfs as grid_search

    if reverse:
        raise ValueError("reverse=True is not supported on a DistGraph: the grid search "
                         "follows out-edges; build the DistGraph from the reversed edges")
    cfg = config or graph.config
    if output is not None and output != cfg.output:
        cfg = cfg.replace(output=output)  # checked as one process checks it
    semiring = check_semiring(semiring, output, cfg.output, source_value)[1]
    return grid_search(graph, source, direction=direction, max_depth=max_depth,
                       target=target, config=cfg, semiring=semiring, source_value=source_value)


def _resolve_graph(
    graph: Any, config: Config | None, directed: bool | None, output: str | None,
    direction: str | None, reverse: bool, semiring: Semiring | str, source_value: Any,
    cache: MatrixCache | bool,
) -> tuple[Graph | RowsInput, Config, str, Semiring]:
    """The graph to search (a kept Graph, a new one, or a matrix's rows) and the config.

    ``cfg`` is ``config``, else the graph's; output and direction overrides
    and the semiring's needs applied.
    """
    if (config is None and output is None and direction is None and isinstance(graph, Graph)
            and source_value == 1 and semiring == "min_second"):
        return graph, graph.config, PARENTS, MIN_SECOND  # the plain call: nothing to resolve
    import scipy.sparse as sp

    if not (isinstance(cache, bool) or isinstance(cache, MatrixCache)):
        raise TypeError(f"cache must be a MatrixCache, True or False, got {type(cache).__name__}")
    if not sp.issparse(graph):
        # weight=None: a search follows edges and never reads a networkx graph's weights.
        g: Graph | RowsInput = as_graph(graph, config=config, directed=directed, weight=None)
        cfg = config or g.config
    else:
        cfg = config or default_config()
        config = cfg
    kind, semiring = check_semiring(semiring, output, cfg.output, source_value)
    # Only what differs: a copy of the config is validated again (tens of µs, a few
    # percent of a road network's search).
    overrides = {k: v for k, v in (("output", output), ("direction", direction))
                 if v is not None and v != getattr(cfg, k)}
    if overrides:
        cfg = cfg.replace(**overrides)
    if kind != PARENTS:
        cfg = cfg.replace(output="levels")  # any_pair and the generic engine give no parents
    if sp.issparse(graph):
        # Rows alone serve a search that only goes top-down along out-edges; the
        # numba backend's (the default on a CPU) is the one search they replace.
        rows_ok = (kind != VALUES and not reverse and directed is not False
                   and cfg.direction != "bottom-up" and get_backend(cfg.backend).name == "numba"
                   and graph.shape[0] <= MAX_VERTICES)
        store = process_cache() if cache is True else cache
        if store is False:
            g = rows_input(graph) if rows_ok else as_graph(graph, config=config,
                                                               directed=directed)
        else:
            g = store.prepare(graph, directed=directed, config=config, rows_ok=rows_ok)
    return g, cfg, kind, semiring


def _scratch_pool(g: Graph) -> ScratchPool:
    """The graph's :class:`ScratchPool`, made at its first search."""
    pool = g._search_cache.get("numba_scratch")
    if pool is None:
        pool = g._search_cache["numba_scratch"] = ScratchPool()
    return pool


#: Configs whose plain-call plans a graph keeps at once (:func:`_plain_call`).
_PLANS_KEPT = 8


class _PlainCall:
    """What :func:`bfs`'s plain call on a Graph (``bfs(g, s)``) needs besides the source,
    kept in the graph's ``_search_cache`` for its next plain calls under the same config
    object and direction guard (:attr:`DirectionPolicy.gamma`).

    Attributes
    ----------
    config, gamma
        The graph's config and the guard it was worked out for.
    n : int
        Vertices (more than none).
    small : bool
        Every search takes :func:`small_search`.
    small_deg : numpy.ndarray or None
        Else those from a vertex without out-edges do (None: none do).
    pool : ScratchPool
        The graph's pool.
    policy : DirectionPolicy or None
        The policy of a numba engine's search, which :func:`_search` then runs
        at once; None where it works the engine out per call (another backend,
        or numba's kernel not compiled yet while :func:`spbfs._compile.numpy_first`
        holds: such a plan is kept only where every search is small).
    serial : bool
        The engine runs on one thread without asking (:func:`_one_thread`, no
        count given in the config).
    """

    __slots__ = ("config", "gamma", "n", "policy", "pool", "serial", "small", "small_deg")

    def __init__(self, g: Graph, cfg: Config, gamma: float) -> None:
        self.config, self.gamma, self.n = cfg, gamma, g.n
        numba = g.backend.name == "numba"
        self.small, self.small_deg = (small_rule(g, cfg.direction, False, gamma) if numba
                                      else (False, None))
        self.pool = _scratch_pool(g)
        self.policy = (_policy(g, cfg, gamma) if numba and not _numpy_first(g, cfg)
                       else None)
        self.serial = cfg.threads is None and _one_thread(g)


def _plain_call(g: Graph) -> _PlainCall | None:
    """The graph's :class:`_PlainCall` for its config now (None for a graph without vertices)."""
    cfg = g.config
    gamma = DirectionPolicy.gamma
    cache = g._search_cache
    plan = cache.get("plain_call")
    if plan is not None and plan.config is cfg and plan.gamma is gamma:
        return plan
    if not g.n:
        return None
    # Graphs of one set of blocks under other configs (Graph.with_config) share the
    # cache: each config's plan is kept beside the others', so that searches of the
    # same graph under two configs in turn do not rebuild each other's plans.
    plans = cache.get("plain_calls")
    if plans is None:
        plans = cache["plain_calls"] = {}
    plan = plans.get(id(cfg))
    if plan is not None and plan.config is cfg and plan.gamma is gamma:
        cache["plain_call"] = plan
        return plan
    plan = _PlainCall(g, cfg, gamma)
    if plan.policy is not None or plan.small or g.backend.name != "numba":
        # Kept while it holds: numpy_first can only turn False (the kernel compiled, the
        # graph's numpy searches over budget), which a later plain call then sees. A plan
        # whose every search is small holds whatever numpy_first says (no policy needed):
        # a fresh process's small searches keep it without compiling the engine.
        if len(plans) >= _PLANS_KEPT:
            plans.clear()
        cache["plain_call"] = plans[id(cfg)] = plan
    return plan


def _numpy_first(g: Graph, cfg: Config) -> bool:
    """:func:`spbfs._compile.numpy_first` of a numba search of ``g`` under ``cfg``."""
    return numpy_first(nbk.search_levels, g.n, cfg.backend,
                       g._search_cache.get("numpy_first_s", 0.0))


def _policy(g: Graph, cfg: Config, gamma: float) -> DirectionPolicy:
    """The direction policy of ``cfg``'s settings, kept with the graph for its next
    searches under the same config object."""
    kept = g._search_cache.get("policy")
    if kept is not None and kept[0] is cfg and kept[1] == gamma:
        return kept[2]
    policy = DirectionPolicy(cfg.direction, cfg.alpha, cfg.beta, gamma)
    g._search_cache["policy"] = (cfg, gamma, policy)
    return policy


def _one_thread(g: Graph) -> bool:
    """Whether ``g``'s searches run on one thread unless told otherwise (fewer arcs than
    :data:`spbfs.threads.ONE_THREAD_ARCS`, and fewer vertices than the engine's passes
    over all of them need to run in parallel), decided at its first search."""
    serial = g._search_cache.get("one_thread")
    if serial is None:
        serial = g._search_cache["one_thread"] = (g.nnz < ONE_THREAD_ARCS
                                                  and g.n < nbk._PAR_N)
    return serial


def _numba_engine(g: Graph, pool: ScratchPool, reverse: bool, threads: SearchThreads | None,
                  source: int) -> NumbaEngine:
    """The numba engine of a search of ``g`` (the graph's kept one where it searched the
    same way).

    It runs on one thread without asking (and without setting numba's count)
    on a graph :func:`_one_thread` names where no count is given (``threads``
    None: the caller knows it is so); otherwise it asks ``threads`` for its
    count when its first parallel region is due, or now if the graph's last
    search asked (from ``source`` with edges).
    """
    out_block, in_block = (g.in_block, g.out_block) if reverse else (g.out_block, g.in_block)
    if threads is None:
        count: Any = 1
        quiet = None
    else:
        one = not threads.chosen and _one_thread(g)
        if (not one and not threads.chosen and pool.asked_threads
                and (g.in_degree if reverse else g.out_degree)[source]):
            # Searches of one graph look alike: this one will likely ask too.
            threads.count(pool.thread_policy)
        # A count not chosen yet is asked for when the first parallel region is due. One
        # thread never runs a team, whatever the machine's load (no quiet test).
        count = (1 if one else threads.count() if threads.chosen
                 else partial(threads.count, pool.thread_policy))
        quiet = None if one else lambda: threads.quiet
    # The last search's engine, where it searched the same way: what it computed from
    # the graph (the kernels' views, the degree facts, its scratch arrays) is this
    # search's too (a third of the fixed cost of a search of a few thousand vertices).
    engine = pool.kept_engine(out_block, in_block)
    if engine is not None:
        engine.renew(count, quiet)
        return engine
    deg = g.in_degree if reverse else g.out_degree
    slots = None
    if in_block.format == "csr":
        # Keyed by block: an undirected graph's two blocks are one object.
        key = "nonempty_out" if in_block is g.out_block else "nonempty_in"
        if key not in g._search_cache:
            g._search_cache[key] = sweep_slots(in_block)
        slots = g._search_cache[key]
    # The max degree and whether the degrees are regular, a pass over n each, are kept
    # for the graph's next searches.
    key = "max_in_degree" if reverse else "max_out_degree"
    engine = NumbaEngine(out_block, in_block, deg, pool, slots, threads=count,
                         max_degree=g._search_cache.get(key),
                         regular=degrees_regular(g, reverse),
                         in_deg=g.out_degree if reverse else g.in_degree, quiet=quiet)
    g._search_cache[key] = engine.max_degree
    return engine


def _engine(g: Graph, backend: Any, reverse: bool, cfg: Config,
            threads: SearchThreads, source: int) -> LocalEngine:
    """The one-process engine for ``backend``: numba (:func:`_numba_engine`), CUDA
    kernels or vectorized steps. The others run on the count chosen now."""
    # A small graph on "auto" takes the vectorized steps below while the numba
    # kernels are not compiled (spbfs._compile.numpy_first): no minute of compiling.
    if backend.name == "numba" and not _numpy_first(g, cfg):
        return _numba_engine(g, _scratch_pool(g), reverse, threads, source)
    out_block, in_block = (g.in_block, g.out_block) if reverse else (g.out_block, g.in_block)
    deg = g.in_degree if reverse else g.out_degree
    threads.count()
    if backend.is_gpu:
        # Hand-written CUDA kernels where they compile; the vectorized cupy
        # steps (the same logic as numpy, covered by the CPU tests) otherwise.
        from spbfs.kernels.bfs_cuda import make_engine

        engine = make_engine(backend.xp, out_block, in_block, deg, cfg)
        if engine is not None:
            return engine
    return VectorizedEngine(backend.xp, out_block, in_block, deg,
                            g.out_degree if reverse else g.in_degree)


def _search(
    g: Graph, source: int, cfg: Config, max_depth: int | None, target: int | None, reverse: bool,
    threads: SearchThreads, small: bool = True, plan: _PlainCall | None = None,
) -> BFSResult:
    """The search of checked arguments; ``small=False``: :func:`takes_small` said no;
    ``plan``: the plain call's (:class:`_PlainCall`, the graph's config)."""
    if plan is not None and plan.policy is not None:
        # The numba engine's search under the kept policy; on one thread without asking
        # (plan.serial) the engine needs nothing of ``threads``.
        engine = _numba_engine(g, plan.pool, reverse, None if plan.serial else threads, source)
        return _numba_search(engine, plan.policy, source, cfg, max_depth, target, threads)
    # The graph's blocks hold the backend its config names (resolved once).
    backend = g.backend if cfg.backend == g.config.backend else get_backend(cfg.backend)
    if small and backend.name == "numba" and takes_small(g, source, cfg.direction, reverse,
                                                         DirectionPolicy.gamma):
        # Top-down throughout, or one level: no engine, no thread count.
        return small_search(g, source, cfg, reverse, max_depth, target, _scratch_pool(g))
    engine = _engine(g, backend, reverse, cfg, threads, source)
    # A GPU's first bottom-up sweep costs microseconds: no guard against it
    # there (its fused top-down loop applies Beamer's test alone).
    gamma = float("inf") if backend.is_gpu else DirectionPolicy.gamma
    policy = _policy(g, cfg, gamma)
    if isinstance(engine, NumbaEngine):
        return _numba_search(engine, policy, source, cfg, max_depth, target, threads)
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
    engine.bind(parents, levels, want_levels)
    run = run_levels(engine, policy, source, max_depth, target)
    seconds = time.perf_counter() - t_start
    if backend.name == "numba":  # numpy while the numba kernel is not compiled
        g._search_cache["numpy_first_s"] = g._search_cache.get("numpy_first_s", 0.0) + seconds
    release = getattr(engine, "release", None)
    if release is not None:
        release()

    to_host = backend.to_host
    return BFSResult(
        source=source,
        parents=to_host(parents) if cfg.output in ("both", "parents") else None,
        levels=to_host(levels) if want_levels else None,
        stats=run.log.stats(),
        seconds=seconds,
        config=cfg,
        stopped=run.stopped,
    )


def _numba_search(engine: NumbaEngine, policy: DirectionPolicy, source: int, cfg: Config,
                  max_depth: int | None, target: int | None,
                  threads: SearchThreads) -> BFSResult:
    """The search on the numba engine."""
    t_start = time.perf_counter()
    # The engine keeps its own compact state; the int64 results are written at the end.
    out = cfg.output
    want_parents = out != "levels"
    want_levels = out != "parents"
    engine.output = (want_parents, want_levels)
    run = run_levels(engine, policy, source, max_depth, target)
    stats = run.log.stats()
    parents, levels = engine.finish(stats.discovered, want_parents, want_levels)
    seconds = time.perf_counter() - t_start
    parallel = engine.release()
    # A search whose only parallel regions are the passes over all vertices (a grid's:
    # no level is large enough) tells one count from another as well; unreported, a
    # trial between two counts never learnt, and the grid beside one busy process kept
    # the reading's two threads, 1.31x its best setting (docs/benchmarks.md).
    if threads.measured and (parallel or engine.parallel_passes):
        threads.report(int(stats.discovered.sum()) + 1)
    # Positional (source, parents, levels, stats, seconds, config, stopped, values,
    # threads): keywords cost 0.4 µs more, a percent of a search of a few thousand vertices.
    return BFSResult(source, parents, levels, stats, seconds, cfg, run.stopped, None,
                     engine.nparts if parallel else None)
