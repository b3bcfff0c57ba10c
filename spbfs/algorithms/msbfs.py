"""Multi-source BFS: one SpGEMM per level for many sources at once.

The frontiers of ``k`` searches form the columns of a sparse ``n x k`` matrix
``F``; a level is ``F' = B ⊕.⊗ F`` masked by the complement of the visited
matrix, over ``min_second`` (parents: the smallest frontier vertex reaching a
vertex, as :func:`spbfs.bfs` picks) or ``any_pair`` (levels only). That
SpGEMM (:func:`~spbfs.algorithms._ops.spgemm`) runs on the numpy and cupy
backends, in the level loop :func:`search_levels`, written once against
:mod:`spbfs.algorithms.operations`. The numba backend stores ``F`` densely as bits instead, one
``uint64`` word per vertex for each 64 searches, and a level becomes one
masked product over the semiring (bitwise or, second) on those words
(:func:`~spbfs.algorithms._ops.msbfs_bits`): one pass over the edges serves
64 searches, pushing from a small frontier and pulling otherwise, as
direction-optimizing BFS does, and the level loop runs compiled end to end.
On a high-diameter graph the frontiers of different sources seldom meet, so
packing them shares nothing: there (the first search at least
:data:`DEEP_LEVELS` deep) levels-only searches run one compiled queue per
source, the sources split over the threads.

Every search is independent: two sources in the same component each get
their own complete result row, and a source listed twice gets two equal
rows.

:func:`dist_multi_source_bfs` is the same search on the 2D process grid
(conventions: :mod:`spbfs.algorithms.distributed`): each level one
distributed SpGEMM over ``min_second`` (or ``any_pair``) of the frontier
entries ``(vertex, search)``: the same :func:`search_levels`. Both sides
check ``output`` and ``max_depth`` with :func:`check_msbfs_args` and the
sources with :func:`~spbfs.algorithms._common.check_sources`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from semirings.semiring import any_pair, min_second
from spbfs.algorithms._common import check_grid_call, check_sources, prepare, sources_of
from spbfs.algorithms._grid import Pieces, check_graph, collective
from spbfs.algorithms._ops import msbfs_bits
from spbfs.algorithms.operations import GridVectorOps, LocalOps
from spbfs.config import Config
from spbfs.kernels.ranking_numba import full_ptr, queue_levels
from spbfs.mpi.graph import DistGraph
from spbfs.search.checks import check_max_depth
from spbfs.threads import search_threads

__all__ = [
    "DistMultiSourceBFSResult",
    "MultiSourceBFSResult",
    "check_msbfs_args",
    "dist_multi_source_bfs",
    "multi_source_bfs",
]

_OUTPUTS = ("both", "parents", "levels")


@dataclass
class MultiSourceBFSResult:
    """What :func:`multi_source_bfs` returns; row ``i`` is the search from ``sources[i]``.

    Attributes
    ----------
    sources : numpy.ndarray
        The sources as given (int64, duplicates kept).
    parents : numpy.ndarray or None
        ``(len(sources), n)`` int64: the parent of each vertex in the search
        from ``sources[i]`` (the smallest frontier vertex reaching it, as in
        :func:`spbfs.bfs`), ``-1`` where unreached, the source its own parent.
    levels : numpy.ndarray or None
        ``(len(sources), n)`` int64 hop distances, ``-1`` where unreached.
    depth : int
        Levels expanded (the largest eccentricity among the sources, or
        ``max_depth``).
    """

    sources: np.ndarray
    parents: np.ndarray | None
    levels: np.ndarray | None
    depth: int

    def __len__(self) -> int:
        return int(self.sources.shape[0])


def check_msbfs_args(output: Any, max_depth: Any) -> int | None:
    """Check ``output`` and ``max_depth`` of a multi-source BFS; return ``max_depth``.

    Shared by :func:`multi_source_bfs` and :func:`dist_multi_source_bfs`.

    Raises
    ------
    ValueError
        For an unknown ``output`` or a negative ``max_depth``.
    TypeError
        For a ``max_depth`` that is neither None nor an integer.
    """
    if output not in _OUTPUTS:
        raise ValueError(f"output must be one of {', '.join(_OUTPUTS)}; got {output!r}")
    return check_max_depth(max_depth)


def multi_source_bfs(
    graph: Any,
    sources: Any,
    *,
    output: str = "both",
    max_depth: int | None = None,
    reverse: bool = False,
    config: Config | None = None,
    directed: bool | None = None,
) -> MultiSourceBFSResult:
    """Breadth-first search from several sources at once.

    Each level is one masked sparse-matrix times sparse-matrix product over
    ``min_second`` (``any_pair`` when only levels are wanted), with one column
    per distinct source.

    Parameters
    ----------
    graph : Graph, EdgeList, sparse matrix, networkx graph, path or (src, dst)
        The graph, converted by :func:`spbfs.as_graph` with ``config`` and ``directed``
        (see :mod:`spbfs.algorithms`).
    sources : int or array_like of int
        Source vertices; result row ``i`` belongs to ``sources[i]``. For a
        networkx graph, node labels (the result's columns, ids and parents
        are vertex ids in ``G.nodes`` order).
    output : {"both", "parents", "levels"}
        Which arrays to return.
    max_depth : int, optional
        Stop after this many levels.
    reverse : bool
        Follow in-edges instead of out-edges (directed graphs).

    Returns
    -------
    MultiSourceBFSResult
        ``parents`` and ``levels`` of shape ``(len(sources), n)``.

    Raises
    ------
    ValueError
        For an empty graph, no sources, a source out of range, an unknown
        ``output`` or a negative ``max_depth``.
    TypeError
        For non-integer sources.

    Examples
    --------
    >>> import spbfs
    >>> from spbfs.algorithms import multi_source_bfs
    >>> g = spbfs.Graph.from_edges([0, 1, 2], [1, 2, 3])
    >>> r = multi_source_bfs(g, [0, 3])
    >>> r.levels.tolist()
    [[0, 1, 2, 3], [3, 2, 1, 0]]
    >>> r.parents[1].tolist()
    [1, 2, 3, 3]
    """
    if check_grid_call(graph, config, "multi_source_bfs"):
        return dist_multi_source_bfs(graph, sources, output=output, max_depth=max_depth,
                                     reverse=reverse)
    max_depth = check_msbfs_args(output, max_depth)
    g = prepare(graph, config, directed, allow_empty=False, weight=None)
    src = check_sources(g.n, sources_of(g, sources))
    uniq, back = np.unique(src, return_inverse=True)
    block, other = (g.in_block, g.out_block) if reverse else (g.out_block, g.in_block)
    k = int(uniq.shape[0])
    want_parents = output in ("both", "parents")
    if g.backend.name == "numba" and output == "levels" and k > 1:
        deep = _levels_by_queues(block, uniq, max_depth, g.config.threads)
        if deep is not None:
            levels, depth = deep
            return MultiSourceBFSResult(sources=src, parents=None, levels=levels[back],
                                        depth=depth)
    if g.backend.name == "numba":
        degree = g.in_degree if reverse else g.out_degree
        # Its pull levels end at a barrier: as many threads as the machine has idle.
        with search_threads(g.config.threads):
            levels, parents, depth = msbfs_bits(
                block, other, uniq, degree, want_parents=want_parents, max_depth=max_depth
            )
        return MultiSourceBFSResult(
            sources=src,
            parents=parents[back] if want_parents else None,
            levels=levels[back] if output in ("both", "levels") else None,
            depth=depth,
        )

    levels, parents, depth = search_levels(LocalOps(g), uniq, want_parents, max_depth,
                                           transpose=reverse)
    to_host = g.backend.to_host
    return MultiSourceBFSResult(
        sources=src,
        parents=to_host(parents)[back] if want_parents else None,
        levels=to_host(levels)[back] if output in ("both", "levels") else None,
        depth=depth,
    )


def search_levels(ops: LocalOps | GridVectorOps, uniq: np.ndarray, want_parents: bool,
                  max_depth: int | None, *, transpose: bool) -> tuple[Any, Any, int]:
    """The searches from the distinct ``uniq``, on one process or the grid.

    Each level is one masked product of the frontier entries ``(vertex,
    search)`` over ``min_second`` (valued by vertex id: the smallest parent
    wins) or ``any_pair``; ``transpose`` follows in-edges.

    Returns
    -------
    levels, parents, depth
        ``(k, size)`` int64 pieces (``parents`` ``(0, size)`` when not wanted)
        and the levels expanded.
    """
    xp, lo, size = ops.xp, ops.lo, ops.size
    k = int(uniq.shape[0])
    semiring = min_second if want_parents else any_pair
    levels = xp.full((k, size), -1, dtype=np.int64)
    parents = xp.full((k, size) if want_parents else (0, size), -1, dtype=np.int64)
    s_all = xp.asarray(uniq)
    sidx = xp.flatnonzero((s_all >= lo) & (s_all < ops.hi)).astype(np.int64)
    ids = s_all[sidx] - lo
    levels[sidx, ids] = 0
    if want_parents:
        parents[sidx, ids] = s_all[sidx]
    depth = 0
    while max_depth is None or depth < max_depth:
        vals = ids + lo if want_parents else None
        r, s, v = ops.mxsm(ids, sidx, vals, k, semiring, "min", transpose=transpose,
                           mask=(levels >= 0) if ops.masks else None)
        fresh = levels[s, r] < 0
        ids, sidx = r[fresh], s[fresh]
        if not int(ops.allsum_int(ids.shape[0])[0]):
            break
        depth += 1
        levels[sidx, ids] = depth
        if want_parents:
            parents[sidx, ids] = v[fresh]
    return levels, parents, depth


#: A first search at least this deep marks a high-diameter graph, whose levels-only
#: searches run one queue per source (:func:`~spbfs.kernels.ranking_numba.queue_levels`):
#: there the frontiers of different sources seldom share a vertex at the same level, so
#: 64 searches packed in a word scan each edge about as often as 64 queues do, at more
#: cost per scan (luxembourg_osm, one source: 98 ms in the word loop against 32-41 ms in
#: a queue, load 20). Road networks, grids and meshes have hundreds of levels or more,
#: power-law graphs tens at most.
DEEP_LEVELS = 64


def _levels_by_queues(block: Any, sources: np.ndarray, max_depth: int | None,
                      threads: int | None) -> tuple[np.ndarray, int] | None:
    """Levels from distinct ``sources``, one queue each, if the first search is deep; else None.

    The first source's search decides (it is kept): at least
    :data:`DEEP_LEVELS` levels, the others follow, split over the idle threads.
    """
    n = block.shape[0]
    ptr, ind, jc, is_dcsc = block.kernel_view
    ptr = full_ptr(ptr, jc, is_dcsc, n)
    k = int(sources.shape[0])
    levels = np.full((k, n), -1, np.int64)
    limit = -1 if max_depth is None else int(max_depth)
    first = int(queue_levels(ptr, ind, n, sources, np.array([0, 1], np.int64), levels, limit))
    if first < DEEP_LEVELS:
        return None
    with search_threads(threads) as choice:
        parts = min(k - 1, 2 * choice.count())
        chunks = np.linspace(1, k, parts + 1).round().astype(np.int64)
        rest = int(queue_levels(ptr, ind, n, sources, chunks, levels, limit))
    return levels, max(first, rest)


# --------------------------------------------------------------------------- on the grid


@dataclass
class DistMultiSourceBFSResult(Pieces):
    """What :func:`dist_multi_source_bfs` returns on every rank.

    Attributes
    ----------
    sources : numpy.ndarray
        The sources as given (int64, duplicates kept).
    parents, levels : numpy.ndarray or None
        ``(len(sources), hi - lo)`` int64: the columns of this rank's vertices
        (``-1`` where unreached); None when not asked for.
    depth : int
        Levels expanded.
    lo, hi, n : int
        The piece and the vertex count.
    """

    sources: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    parents: np.ndarray | None = None
    levels: np.ndarray | None = None
    depth: int = 0

    def __len__(self) -> int:
        return int(self.sources.shape[0])

    def gather(self, root: int = 0) -> MultiSourceBFSResult | None:
        """The whole :class:`~spbfs.algorithms.MultiSourceBFSResult` on ``root`` (collective)."""
        return self._assemble(root, MultiSourceBFSResult,
                              {"parents": self.parents, "levels": self.levels}, rows=True,
                              sources=self.sources, depth=self.depth)


def dist_multi_source_bfs(
    g: DistGraph, sources: Any, *, output: str = "both", max_depth: int | None = None,
    reverse: bool = False,
) -> DistMultiSourceBFSResult:
    """Breadth-first search from several sources at once, distributed (collective).

    The frontiers of the ``k`` distinct sources are the columns of a sparse
    ``n x k`` matrix; a level is one distributed SpGEMM over ``min_second``
    (values: the frontier vertex ids, so each vertex gets its smallest
    parent, as :func:`spbfs.bfs` picks) or ``any_pair`` for levels only. The
    frontier entries ``(vertex, search)`` are expanded down the processor
    columns, multiplied by the local block, and the candidates folded along
    the row to the vertex owners, which keep the unvisited ones.

    Parameters
    ----------
    g : DistGraph
        The distributed graph.
    sources : int or array_like of int
        Source vertices (the same on every rank); result row ``i`` belongs to
        ``sources[i]``.
    output : {"both", "parents", "levels"}
        Which arrays to compute.
    max_depth : int, optional
        Stop after this many levels.
    reverse : bool
        Follow in-edges instead of out-edges (directed graphs): products with
        ``Bᵀ``.

    Returns
    -------
    DistMultiSourceBFSResult
        This rank's columns of ``parents`` and ``levels``; ``gather()`` gives
        the :class:`~spbfs.algorithms.MultiSourceBFSResult` of
        :func:`~spbfs.algorithms.multi_source_bfs`.

    Raises
    ------
    CollectiveError
        On every rank for no sources, a source out of range or not an
        integer, an unknown ``output`` or a negative ``max_depth``.
    """
    g = check_graph(g)
    limit = collective(g, check_msbfs_args, output, max_depth)
    src = collective(g, check_sources, g.n, sources)
    uniq, back = np.unique(src, return_inverse=True)
    ops = GridVectorOps(g)
    levels, parents, depth = search_levels(ops, uniq, output != "levels", limit,
                                           transpose=reverse)
    levels, parents = ops.to_host(levels), ops.to_host(parents)
    return DistMultiSourceBFSResult(
        lo=g.lo, hi=g.hi, n=g.n, _comm=g.grid.comm, sources=src,
        parents=parents[back] if output != "levels" else None,
        levels=levels[back] if output in ("both", "levels") else None, depth=depth,
    )
