"""The semiring algorithms on the 2D process grid (MPI): one distributed product per step.

Each function here is the distributed twin of a one-process function of
:mod:`spbfs.algorithms` and keeps its driver loop; only the step, one
semiring product, becomes distributed on the :class:`~spbfs.mpi.DistGraph`'s
``pr x pc`` grid (:mod:`spbfs.mpi.spmsv`): *expand* the vector
(transpose to the column layout, Allgatherv down the processor column),
the local product on the rank's block ``B_ij``, *fold* the partial results
along the processor row to the owners of their rows, and reduce them there
with the semiring's addition (sum, min). Products with ``Bᵀ`` (in-edges of
a directed graph) run on the transposed block with the roles of the row and
the column swapped. Global decisions (convergence, empty frontiers) come
from Allreduce'd counts, so every rank runs the same iterations.

====================================  ==============================================
:func:`dist_pagerank`                 dense SpMV over ``plus_times``; dangling mass
                                      and L1 change by Allreduce
:func:`dist_connected_components`     sparse SpMSV over ``min_second`` (and over
                                      ``Bᵀ`` for a directed graph), pointer jumping
                                      by request/reply Alltoallv
:func:`dist_sssp`                     sparse SpMSV over ``min_plus`` on a weighted
                                      block (:func:`dist_weighted_block`)
:func:`dist_multi_source_bfs`         SpGEMM over ``min_second`` (``any_pair`` for
                                      levels only), one column per source
:func:`dist_betweenness_centrality`   SpGEMM over ``plus_times``, forward over ``B``,
                                      backward over ``Bᵀ``
:func:`dist_triangle_count`           masked ``plus_pair`` product over the
                                      degree-ordered DAG, as wedge queries sent to
                                      the vertex owners (1D, not the 2D blocks)
====================================  ==============================================

Conventions
-----------
* Every function is *collective*: all ranks of the graph's grid call it
  with the same arguments (except the per-rank edge shares of
  :func:`dist_weighted_block`).
* Results hold this rank's *piece* (vertices ``lo .. hi-1``, the piece the
  rank owns in :class:`~spbfs.mpi.DistGraph`) plus the global scalars, the
  same on every rank. ``result.gather()`` (collective) returns the
  one-process result type (:class:`~spbfs.algorithms.PageRankResult`, ...)
  on rank 0 and None elsewhere, equal to what the one-process function
  returns on the whole graph (PageRank scores and betweenness to rounding:
  floating-point sums are added in another order).
* Bad arguments raise :class:`~spbfs.mpi.CollectiveError` with the
  one-process function's message on every rank, also when only one rank's
  input is bad (weights are checked per rank, then agreed on).
* The local products run the semiring kernels on the blocks as
  :class:`~spbfs.mpi.DistGraph` stores them (csr or dcsc).
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from semirings.blocks import Block, block_from_edges
from semirings.kernels import spmv
from semirings.semiring import any_pair, min_plus, min_second, plus_times
from spbfs.algorithms._common import check_positive_int, check_sources
from spbfs.algorithms._ops import SparseColumns, spgemm
from spbfs.algorithms.betweenness import _rescale
from spbfs.algorithms.components import ComponentsResult
from spbfs.algorithms.msbfs import MultiSourceBFSResult
from spbfs.algorithms.ranking import PageRankResult, check_pagerank_args
from spbfs.algorithms.shortest_paths import ShortestPathsResult, _check_weights
from spbfs.algorithms.triangles import TriangleCount
from spbfs.edges import check_vertex_ids
from spbfs.graph import Graph
from spbfs.mpi import comm as C
from spbfs.mpi.comm import CollectiveError
from spbfs.mpi.graph import DistGraph
from spbfs.mpi.spmsv import GridOps, product_sparse

__all__ = [
    "DistBetweennessResult",
    "DistComponentsResult",
    "DistMultiSourceBFSResult",
    "DistPageRankResult",
    "DistShortestPathsResult",
    "DistTriangleCount",
    "DistWeights",
    "dist_betweenness_centrality",
    "dist_connected_components",
    "dist_multi_source_bfs",
    "dist_pagerank",
    "dist_sssp",
    "dist_triangle_count",
    "dist_weighted_block",
]


# --------------------------------------------------------------------------- results


@dataclass
class _Pieces:
    """This rank's piece ``lo .. hi-1`` of a result over ``n`` vertices."""

    lo: int
    hi: int
    n: int
    _comm: Any = field(default=None, repr=False)

    def _gather(self, piece: np.ndarray, root: int) -> np.ndarray | None:
        return C.gatherv(self._comm, piece, root=root)

    def _gather_rows(self, rows: np.ndarray, root: int) -> np.ndarray | None:
        """A ``(k, hi - lo)`` piece gathered into ``(k, n)`` on ``root``."""
        k = rows.shape[0]
        flat = C.gatherv(self._comm, np.ascontiguousarray(rows.T).reshape(-1), root=root)
        if flat is None or self._comm.Get_rank() != root:
            return None
        return np.ascontiguousarray(flat.reshape(self.n, k).T)


@dataclass
class DistPageRankResult(_Pieces):
    """What :func:`dist_pagerank` returns on every rank.

    Attributes
    ----------
    scores : numpy.ndarray
        float64 PageRank of this rank's vertices ``lo .. hi-1``.
    iterations : int
        Power iterations performed.
    converged : bool
        Whether the L1 change fell below ``n * tol``.
    lo, hi, n : int
        The piece and the vertex count.
    """

    scores: np.ndarray = field(default_factory=lambda: np.zeros(0))
    iterations: int = 0
    converged: bool = False

    def gather(self, root: int = 0) -> PageRankResult | None:
        """The whole :class:`~spbfs.algorithms.PageRankResult` on ``root`` (collective)."""
        scores = self._gather(self.scores, root)
        if self._comm.Get_rank() != root:
            return None
        return PageRankResult(scores=scores, iterations=self.iterations,
                              converged=self.converged)


@dataclass
class DistComponentsResult(_Pieces):
    """What :func:`dist_connected_components` returns on every rank.

    Attributes
    ----------
    n_components : int
        Number of (weakly) connected components, isolated vertices included.
    labels : numpy.ndarray
        int64 component number of this rank's vertices, numbered as
        ``scipy.sparse.csgraph.connected_components`` does (by smallest id).
    roots : numpy.ndarray
        int64 smallest vertex id of each vertex's component.
    rounds : int
        Propagation rounds (distributed products) performed.
    lo, hi, n : int
        The piece and the vertex count.
    """

    n_components: int = 0
    labels: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    roots: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    rounds: int = 0

    def gather(self, root: int = 0) -> ComponentsResult | None:
        """The whole :class:`~spbfs.algorithms.ComponentsResult` on ``root`` (collective)."""
        labels = self._gather(self.labels, root)
        roots = self._gather(self.roots, root)
        if self._comm.Get_rank() != root:
            return None
        return ComponentsResult(n_components=self.n_components, labels=labels, roots=roots,
                                rounds=self.rounds)


@dataclass
class DistShortestPathsResult(_Pieces):
    """What :func:`dist_sssp` returns on every rank.

    Attributes
    ----------
    source : int
        The source vertex.
    distances : numpy.ndarray
        float64 distances of this rank's vertices, ``inf`` where unreachable.
    rounds : int
        Relaxation rounds (distributed products) performed.
    lo, hi, n : int
        The piece and the vertex count.
    """

    source: int = 0
    distances: np.ndarray = field(default_factory=lambda: np.zeros(0))
    rounds: int = 0

    def gather(self, root: int = 0) -> ShortestPathsResult | None:
        """The whole :class:`~spbfs.algorithms.ShortestPathsResult` on ``root`` (collective)."""
        dist = self._gather(self.distances, root)
        if self._comm.Get_rank() != root:
            return None
        return ShortestPathsResult(source=self.source, distances=dist, rounds=self.rounds)


@dataclass
class DistMultiSourceBFSResult(_Pieces):
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
        parents = None if self.parents is None else self._gather_rows(self.parents, root)
        levels = None if self.levels is None else self._gather_rows(self.levels, root)
        if self._comm.Get_rank() != root:
            return None
        return MultiSourceBFSResult(sources=self.sources, parents=parents, levels=levels,
                                    depth=self.depth)


@dataclass
class DistBetweennessResult(_Pieces):
    """What :func:`dist_betweenness_centrality` returns on every rank.

    Attributes
    ----------
    values : numpy.ndarray
        float64 centrality of this rank's vertices.
    sources : numpy.ndarray
        The sources used (sampled or given), the same on every rank.
    lo, hi, n : int
        The piece and the vertex count.
    """

    values: np.ndarray = field(default_factory=lambda: np.zeros(0))
    sources: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def gather(self, root: int = 0) -> np.ndarray | None:
        """The whole centrality array on ``root`` (collective), as the one-process function."""
        out = self._gather(self.values, root)
        return out if self._comm.Get_rank() == root else None


# --------------------------------------------------------------------------- checks


def _collective(fn: Any, *args: Any, **kwargs: Any) -> Any:
    """Run a local argument check; its TypeError/ValueError becomes a CollectiveError.

    Only for checks of arguments that are the same on every rank, so every
    rank raises the same error without communicating.
    """
    try:
        return fn(*args, **kwargs)
    except (TypeError, ValueError) as exc:
        raise CollectiveError(str(exc)) from None


def _graph_view(g: DistGraph) -> Any:
    """An object with ``n`` and ``check_vertex`` for the one-process checks."""
    view = types.SimpleNamespace(n=g.n)
    view.check_vertex = lambda v, name="source": Graph.check_vertex(view, v, name)
    return view


def _check_graph(g: Any) -> DistGraph:
    if not isinstance(g, DistGraph):
        raise TypeError(f"g must be a spbfs.mpi.DistGraph, got {type(g).__name__}")
    return g


def _check_optional_count(value: Any, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | np.integer):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if value < 0:
        raise ValueError(f"{name} must be >= 0, got {value}")
    return int(value)


def _sparse_columns(rows: np.ndarray, cols: np.ndarray, vals: np.ndarray | None, k: int,
                    nrows: int) -> SparseColumns:
    """``(rows, cols, vals)`` triples (distinct) as a CSC matrix with ``k`` columns."""
    order = np.lexsort((rows, cols))
    ptr = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(np.bincount(cols, minlength=k), out=ptr[1:])
    return SparseColumns(ptr, rows[order], None if vals is None else vals[order], nrows)


def _first_by_key(key: np.ndarray, val: np.ndarray | None) -> np.ndarray:
    """Indices of one entry per distinct key: the one with the smallest ``val``."""
    order = np.lexsort((val, key)) if val is not None else np.argsort(key, kind="stable")
    ks = key[order]
    first = np.ones(ks.shape[0], dtype=bool)
    first[1:] = ks[1:] != ks[:-1]
    return order[first]


# --------------------------------------------------------------------------- PageRank


def dist_pagerank(
    g: DistGraph, *, alpha: float = 0.85, tol: float = 1e-6, max_iter: int = 100
) -> DistPageRankResult:
    """PageRank by distributed power iteration (collective).

    Each iteration is one distributed SpMV over ``plus_times``: the scaled
    scores ``x / d_out`` are expanded down the processor columns
    (Allgatherv), multiplied by the local block, and the partial sums are
    reduced along the processor row onto their owners
    (Reduce_scatter_block). The rank held by dangling vertices and the L1
    change come from one Allreduce per iteration.

    Parameters
    ----------
    g : DistGraph
        The distributed graph; an undirected edge is two arcs.
    alpha : float
        Damping factor, in ``[0, 1]``.
    tol : float
        Convergence tolerance (L1 change ``< n * tol``), > 0.
    max_iter : int
        Iteration limit, >= 1.

    Returns
    -------
    DistPageRankResult
        This rank's scores; ``gather()`` gives the
        :class:`~spbfs.algorithms.PageRankResult` of
        :func:`~spbfs.algorithms.pagerank` (to rounding).

    Raises
    ------
    CollectiveError
        On every rank for ``alpha`` outside ``[0, 1]`` or a non-positive
        ``tol`` or ``max_iter``.
    """
    g = _collective(_check_graph, g)

    iters = _collective(lambda: check_pagerank_args(alpha, tol, max_iter))
    ops = GridOps(g)
    n, a = g.n, float(alpha)
    deg = g.piece_degrees().astype(np.float64)
    dangling = deg == 0
    inv = np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, deg))
    x = np.full(ops.size, 1.0 / n)
    rows = g.block.shape[0]
    lost = float(ops.allsum(x[dangling].sum())[0])
    converged = False
    it = 0
    for it in range(1, iters + 1):  # noqa: B007 - the count is reported
        xe = ops.expand_dense(x * inv, 0.0)
        share = spmv(g.block, xe, plus_times, check=False)
        part = np.zeros(rows)
        part[share.indices] = share.values
        y = ops.fold_dense(part, "sum")
        new = a * (y + lost / n) + (1.0 - a) / n
        err, lost = (float(v) for v in ops.allsum(np.abs(new - x).sum(), new[dangling].sum()))
        x = new
        if err < n * float(tol):
            converged = True
            break
    return DistPageRankResult(lo=g.lo, hi=g.hi, n=n, _comm=g.grid.comm, scores=x,
                              iterations=it, converged=converged)


# --------------------------------------------------------------------------- components


def dist_connected_components(g: DistGraph) -> DistComponentsResult:
    """Connected components by distributed min-label propagation (collective).

    Every vertex starts with its own id as label. A round is one distributed
    SpMSV over ``min_second`` with the labels that changed in the previous
    round (a sparse vector), and for a directed graph a second one with
    ``Bᵀ`` (weakly connected components: edge direction never matters);
    each vertex keeps the smallest label offered. Labels are then shortcut,
    ``l = l[l]`` until stable, each jump one request/reply Alltoallv. The
    loop, the rounds and the result are those of
    :func:`~spbfs.algorithms.connected_components`.

    Parameters
    ----------
    g : DistGraph
        The distributed graph.

    Returns
    -------
    DistComponentsResult
        This rank's labels and roots; ``gather()`` gives the
        :class:`~spbfs.algorithms.ComponentsResult` (scipy's numbering).
    """
    g = _collective(_check_graph, g)
    ops = GridOps(g)
    lo = g.lo
    label = np.arange(lo, g.hi, dtype=np.int64)
    ids = np.arange(ops.size, dtype=np.int64)
    products = [(g.block, False)] + ([(g.tblock, True)] if g.directed else [])
    rounds = 0
    active = int(ops.allsum_int(ids.shape[0])[0])
    while active:
        cand = label.copy()
        vals = label[ids]
        for block, transpose in products:
            r, v = product_sparse(ops, block, ids, vals, min_second, transpose=transpose)
            np.minimum.at(cand, r, v.astype(np.int64, copy=False))
        rounds += 1
        changed = cand < label
        label = cand
        # Shortcut: follow labels to their labels until nothing moves anywhere.
        while True:
            jumped = ops.lookup(label, label)
            moved = jumped != label
            if not int(ops.allsum_int(int(moved.sum()))[0]):
                break
            changed |= moved
            label = jumped
        ids = np.flatnonzero(changed).astype(np.int64)
        active = int(ops.allsum_int(ids.shape[0])[0])
    # Number the components by their smallest id, as scipy does.
    is_root = label == np.arange(lo, g.hi, dtype=np.int64)
    counts = C.allgatherv(g.grid.comm, np.array([int(is_root.sum())], dtype=np.int64),
                          np.ones(g.grid.size, dtype=np.int64))
    offset = int(counts[:g.grid.rank].sum())
    number = offset + np.cumsum(is_root) - 1
    labels = ops.lookup(number, label)
    return DistComponentsResult(lo=lo, hi=g.hi, n=g.n, _comm=g.grid.comm,
                                n_components=int(counts.sum()), labels=labels, roots=label,
                                rounds=rounds)


# --------------------------------------------------------------------------- SSSP


class DistWeights:
    """A weighted distributed block for :func:`dist_sssp` (build with :func:`dist_weighted_block`).

    Attributes
    ----------
    block : Block
        This rank's ``Bw_ij`` (``Bw[v, u]`` = weight of ``u -> v``), in the
        graph's format and local ids, float64 values.
    graph : DistGraph
        The graph it was built for (grid, distribution, direction).
    """

    def __init__(self, graph: DistGraph, block: Block) -> None:
        self.graph = graph
        self.block = block

    def __repr__(self) -> str:
        return f"DistWeights(rank {self.graph.grid.rank}: {self.block.nnz} weighted entries)"


def dist_weighted_block(g: DistGraph, src: Any, dst: Any, weights: Any) -> DistWeights:
    """Weighted blocks from every rank's share of weighted edges (collective).

    The :class:`~spbfs.mpi.DistGraph` keeps the structure only, so weights
    come as edge shares, like the edges of
    :meth:`~spbfs.mpi.DistGraph.from_edges`: rank ``r`` passes any part of
    the weighted edge list (the union over the ranks is the whole list).
    Each edge ``u -> v`` is routed with one Alltoallv to the owner of
    ``Bw[v, u]`` (for an undirected graph also of ``Bw[u, v]``), which builds
    its weighted block in the graph's format. As in
    :func:`~spbfs.algorithms.weighted_block` (edge-list weights): self-loops
    are dropped and an edge given more than once keeps its smallest weight.
    The weighted edges *are* the graph of :func:`dist_sssp`; the structure of
    ``g`` is not consulted.

    Parameters
    ----------
    g : DistGraph
        Supplies the grid, the vertex count, the direction and the format.
    src, dst : array_like of int
        This rank's edges ``src[k] -> dst[k]``.
    weights : array_like of float
        Their weights, non-negative and not NaN.

    Returns
    -------
    DistWeights
        Pass it as ``dist_sssp(g, s, weights=...)``, for any number of sources.

    Raises
    ------
    CollectiveError
        On every rank when any rank's ids are out of range, its arrays differ
        in length, or a weight is negative or NaN (the lowest such rank's
        message, naming the edge, as :func:`~spbfs.algorithms.sssp` says it).
    """
    g = _collective(_check_graph, g)
    grid, d = g.grid, g.dist
    msg = None
    try:
        s = check_vertex_ids(np.asarray(src).reshape(-1), g.n, "src")
        t = check_vertex_ids(np.asarray(dst).reshape(-1), g.n, "dst")
        w = np.asarray(weights, dtype=np.float64).reshape(-1)
        if not (s.shape == t.shape == w.shape):
            raise ValueError(f"src, dst and weights differ in length ({s.size}, {t.size}, "
                             f"{w.size})")
        _check_weights(s, t, w)
    except (TypeError, ValueError) as exc:
        msg = str(exc)
        s = t = np.zeros(0, np.int64)
        w = np.zeros(0, np.float64)
    C.agree(grid.comm, msg)
    s, t = s.astype(np.int64), t.astype(np.int64)
    if not g.directed:
        s, t, w = np.concatenate([s, t]), np.concatenate([t, s]), np.concatenate([w, w])
    keep = s != t
    s, t, w = s[keep], t[keep], w[keep]
    owner = d.block_owner(t, s)
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=grid.size).astype(np.int64)
    buf = np.empty((s.shape[0], 3), dtype=np.int64)
    buf[:, 0], buf[:, 1], buf[:, 2] = t[order], s[order], w[order].view(np.int64)
    recv, _ = C.alltoallv(grid.comm, buf.reshape(-1), counts * 3)
    recv = recv.reshape(-1, 3)
    rows = d.local_rows(recv[:, 0], grid.i)
    cols = d.local_cols(recv[:, 1], grid.j)
    wv = np.ascontiguousarray(recv[:, 2]).view(np.float64)
    shape = g.block.shape
    if rows.size:
        pick = _first_by_key(cols * shape[0] + rows, wv)  # smallest weight per entry
        rows, cols, wv = rows[pick], cols[pick], wv[pick]
    block = block_from_edges(g.config.format, rows, cols, shape, values=wv,
                             index_dtype=g.config.index_dtype, dedup=False)
    return DistWeights(g, block)


def dist_sssp(
    g: DistGraph, source: int, *, weights: DistWeights | tuple[Any, Any, Any] | None = None,
    max_rounds: int | None = None,
) -> DistShortestPathsResult:
    """Shortest-path distances from ``source`` by distributed Bellman-Ford (collective).

    Each round is one distributed SpMSV over ``min_plus`` with the vertices
    whose distance improved in the previous round (a sparse vector of
    distances): expand down the processor columns, local product on the
    weighted block, fold along the processor row, keep what improves. The
    rounds and distances are those of :func:`~spbfs.algorithms.sssp` on the
    same weighted edges.

    Parameters
    ----------
    g : DistGraph
        The distributed graph.
    source : int
        Source vertex id.
    weights : DistWeights or (src, dst, w), optional
        The weighted edges: a :class:`DistWeights` from
        :func:`dist_weighted_block` (reuse it for many sources), or this
        rank's share ``(src, dst, w)`` of them, passed to
        :func:`dist_weighted_block`. None: every edge of ``g`` weighs 1 (the
        distances are BFS levels).
    max_rounds : int, optional
        Stop after this many rounds (distances are then upper bounds).

    Returns
    -------
    DistShortestPathsResult
        This rank's distances; ``gather()`` gives the
        :class:`~spbfs.algorithms.ShortestPathsResult`.

    Raises
    ------
    CollectiveError
        On every rank for a source out of range, a bad ``max_rounds``, or
        bad weights (see :func:`dist_weighted_block`).
    """
    g = _collective(_check_graph, g)
    source = _collective(Graph.check_vertex, _graph_view(g), source, "source")
    max_rounds = _collective(_check_optional_count, max_rounds, "max_rounds")
    if weights is None:
        block = g.block
    elif isinstance(weights, DistWeights):
        if weights.graph is not g:
            raise CollectiveError("weights: a DistWeights must be built for this graph")
        block = weights.block
    elif isinstance(weights, tuple) and len(weights) == 3:
        block = dist_weighted_block(g, *weights).block
    else:
        raise CollectiveError(f"weights must be a DistWeights or a (src, dst, w) tuple, got "
                              f"{type(weights).__name__}")
    ops = GridOps(g)
    lo = g.lo
    dist = np.full(ops.size, np.inf)
    ids = np.zeros(0, dtype=np.int64)
    if lo <= source < g.hi:
        dist[source - lo] = 0.0
        ids = np.array([source - lo], dtype=np.int64)
    rounds = 0
    active = 1
    while active and (max_rounds is None or rounds < max_rounds):
        r, v = product_sparse(ops, block, ids, dist[ids], min_plus, transpose=False)
        rounds += 1
        cand = np.full(ops.size, np.inf)
        np.minimum.at(cand, r, v.astype(np.float64, copy=False))
        better = cand < dist
        dist[better] = cand[better]
        ids = np.flatnonzero(better).astype(np.int64)
        active = int(ops.allsum_int(ids.shape[0])[0])
    return DistShortestPathsResult(lo=lo, hi=g.hi, n=g.n, _comm=g.grid.comm, source=source,
                                   distances=dist, rounds=rounds)


# --------------------------------------------------------------------------- multi-source BFS

_OUTPUTS = ("both", "parents", "levels")


def _spgemm_step(ops: GridOps, block: Block, ids: np.ndarray, sidx: np.ndarray,
                 vals: np.ndarray | None, k: int, semiring: Any, *,
                 transpose: bool) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """One distributed SpGEMM ``B ⊕.⊗ X`` (``X``: entries ``(ids, sidx, vals)``, k columns).

    Returns the unreduced ``(piece ids, columns, values)`` sent to this rank.
    """
    extra = [sidx] if vals is None else [sidx, vals]
    cols, got = ops.expand_sparse(ids, extra, transpose=transpose)
    x = _sparse_columns(cols, got[0], None if vals is None else got[1], k, block.shape[1])
    c = spgemm(block, x, semiring)
    out = [np.asarray(c.column_ids(np), dtype=np.int64)]
    if vals is not None:  # the same dtype on every rank, even for an empty local result
        out.append(np.asarray(c.val).astype(vals.dtype, copy=False))
    r, back = ops.fold_sparse(np.asarray(c.ind), out, transpose=transpose)
    return r, back[0], (None if vals is None else back[1])


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
    g = _collective(_check_graph, g)

    def check() -> tuple[np.ndarray, int | None]:
        if output not in _OUTPUTS:
            raise ValueError(f"output must be one of {', '.join(_OUTPUTS)}; got {output!r}")
        depth = _check_optional_count(max_depth, "max_depth")
        return check_sources(_graph_view(g), sources), depth

    src, limit = _collective(check)
    uniq, back = np.unique(src, return_inverse=True)
    k = int(uniq.shape[0])
    ops = GridOps(g)
    lo, size = g.lo, ops.size
    want_parents = output in ("both", "parents")
    transpose = bool(reverse and g.directed)
    block = g.tblock if transpose else g.block
    semiring = min_second if want_parents else any_pair
    levels = np.full((k, size), -1, dtype=np.int64)
    parents = np.full((k, size) if want_parents else (0, size), -1, dtype=np.int64)
    mine = np.flatnonzero((uniq >= lo) & (uniq < g.hi))
    ids = (uniq[mine] - lo).astype(np.int64)
    sidx = mine.astype(np.int64)
    levels[sidx, ids] = 0
    if want_parents:
        parents[sidx, ids] = uniq[mine]
    depth = 0
    while limit is None or depth < limit:
        vals = ids + lo if want_parents else None
        r, s, v = _spgemm_step(ops, block, ids, sidx, vals, k, semiring, transpose=transpose)
        fresh = levels[s, r] < 0
        r, s = r[fresh], s[fresh]
        v = None if v is None else v[fresh].astype(np.int64, copy=False)
        pick = _first_by_key(s * size + r, v)  # one entry per (search, vertex): min parent
        ids, sidx = r[pick], s[pick]
        if not int(ops.allsum_int(ids.shape[0])[0]):
            break
        depth += 1
        levels[sidx, ids] = depth
        if want_parents:
            parents[sidx, ids] = v[pick]
    return DistMultiSourceBFSResult(
        lo=lo, hi=g.hi, n=g.n, _comm=g.grid.comm, sources=src,
        parents=parents[back] if want_parents else None,
        levels=levels[back] if output in ("both", "levels") else None, depth=depth,
    )


# --------------------------------------------------------------------------- betweenness


def dist_betweenness_centrality(
    g: DistGraph, *, k: int | None = None, sources: Any = None, normalized: bool = True,
    seed: int | np.random.Generator | None = None, batch_size: int = 64,
) -> DistBetweennessResult:
    """Betweenness centrality, exact or from sampled sources, distributed (collective).

    Brandes' algorithm on batches of sources as
    :func:`~spbfs.algorithms.betweenness_centrality`: the forward sweep is a
    multi-source BFS counting shortest paths, one distributed SpGEMM over
    ``plus_times`` per level (sums reduced at the vertex owners); the
    backward sweep is one distributed SpGEMM with ``Bᵀ`` per level, deepest
    first. The sample is drawn on rank 0 and broadcast, so it is the one
    the one-process function draws with the same ``seed``.

    Parameters
    ----------
    g : DistGraph
        The distributed graph (unweighted).
    k : int, optional
        Sample this many distinct sources (with ``seed``); None (and no
        ``sources``) is exact: every vertex is a source.
    sources : array_like of int, optional
        Distinct sources to use instead of a sample.
    normalized : bool
        Scale as :func:`~spbfs.algorithms.betweenness_centrality` does.
    seed : int or numpy.random.Generator, optional
        Seed of the sample (used on rank 0).
    batch_size : int
        Sources per batch; memory is ``O(batch_size * n / p)`` per rank.

    Returns
    -------
    DistBetweennessResult
        This rank's centralities; ``gather()`` gives the one-process array
        (to rounding).

    Raises
    ------
    CollectiveError
        On every rank for ``k`` outside ``1 .. n``, both ``k`` and
        ``sources``, repeated or out-of-range sources, or a non-positive
        ``batch_size``.
    """
    g = _collective(_check_graph, g)
    n = g.n

    def check() -> tuple[int, np.ndarray | None, int | None]:
        bs = check_positive_int(batch_size, "batch_size")
        if k is not None and sources is not None:
            raise ValueError("give k (sample size) or sources, not both")
        if sources is not None:
            s = check_sources(_graph_view(g), sources)
            if np.unique(s).shape[0] != s.shape[0]:
                raise ValueError("sources must be distinct vertex ids")
            return bs, s, None
        if k is not None:
            kk = check_positive_int(k, "k")
            if kk > n:
                raise ValueError(f"k={kk} exceeds the number of vertices ({n})")
            return bs, None, kk
        return bs, np.arange(n, dtype=np.int64), None

    bs, src, sample = _collective(check)
    if src is None:
        drawn = None
        if g.grid.rank == 0:
            drawn = np.random.default_rng(seed).choice(n, size=sample, replace=False)
            drawn = drawn.astype(np.int64)
        src = C.bcast_obj(g.grid.comm, drawn)
    ops = GridOps(g)
    bc = np.zeros(ops.size)
    for lo in range(0, src.shape[0], bs):
        bc += _bc_batch(g, ops, src[lo:lo + bs])
    bc = _rescale(bc, src, g.n, normalized=normalized, directed=g.directed, lo=g.lo)
    return DistBetweennessResult(lo=g.lo, hi=g.hi, n=n, _comm=g.grid.comm, values=bc,
                                 sources=src)


def _sum_by_key(r: np.ndarray, s: np.ndarray, v: np.ndarray,
                size: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sum the values of equal ``(s, r)`` entries; returns them sorted by ``(s, r)``."""
    key = s * size + r
    uk, inv = np.unique(key, return_inverse=True)
    sums = np.bincount(inv, weights=v, minlength=uk.shape[0]).astype(np.float64, copy=False)
    return uk % size if size else uk, uk // size if size else uk, sums


def _bc_batch(g: DistGraph, ops: GridOps, src: np.ndarray) -> np.ndarray:
    """This rank's piece of the sum over ``src`` of Brandes' dependencies."""
    lo, size = g.lo, ops.size
    k = int(src.shape[0])
    level = np.full((k, size), -1, dtype=np.int64)
    sigma = np.zeros((k, size))
    mine = np.flatnonzero((src >= lo) & (src < g.hi))
    ids = (src[mine] - lo).astype(np.int64)
    sidx = mine.astype(np.int64)
    level[sidx, ids] = 0
    sigma[sidx, ids] = 1.0
    fronts = [(ids, sidx, np.ones(ids.shape[0]))]
    # Forward: path counts, one plus_times SpGEMM per level, sums reduced at the owners.
    while True:
        f_ids, f_s, f_v = fronts[-1]
        r, s, v = _spgemm_step(ops, g.block, f_ids, f_s, f_v, k, plus_times, transpose=False)
        fresh = level[s, r] < 0
        r, s, v = _sum_by_key(r[fresh], s[fresh], v[fresh].astype(np.float64), size)
        if not int(ops.allsum_int(r.shape[0])[0]):
            break
        level[s, r] = len(fronts)
        sigma[s, r] = v
        fronts.append((r, s, v))
    # Backward: dependencies, deepest level first, over B transposed.
    delta = np.zeros((k, size))
    transpose = g.directed
    block = g.tblock if transpose else g.block
    for d in range(len(fronts) - 1, 0, -1):
        f_ids, f_s, f_v = fronts[d]
        w = (1.0 + delta[f_s, f_ids]) / f_v
        r, s, p = _spgemm_step(ops, block, f_ids, f_s, w, k, plus_times, transpose=transpose)
        keep = level[s, r] == d - 1
        r, s, p = _sum_by_key(r[keep], s[keep], p[keep].astype(np.float64), size)
        delta[s, r] += sigma[s, r] * p
    delta[sidx, ids] = 0.0
    return delta.sum(axis=0)


# --------------------------------------------------------------------------- triangles


@dataclass
class DistTriangleCount(_Pieces):
    """What :func:`dist_triangle_count` returns on every rank.

    Attributes
    ----------
    total : int
        Number of triangles in the graph.
    per_vertex : numpy.ndarray
        int64 triangles through this rank's vertices (``networkx.triangles``).
    lo, hi, n : int
        The piece and the vertex count.
    """

    total: int = 0
    per_vertex: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))

    def gather(self, root: int = 0) -> TriangleCount | None:
        """The whole :class:`~spbfs.algorithms.TriangleCount` on ``root`` (collective)."""
        per = self._gather(self.per_vertex, root)
        if self._comm.Get_rank() != root:
            return None
        return TriangleCount(total=self.total, per_vertex=per)


def _route_rows(comm: Any, owner: np.ndarray, cols: list[np.ndarray]) -> list[np.ndarray]:
    """Send row ``x`` of the int64 arrays ``cols`` to rank ``owner[x]``; return what arrived."""
    size = comm.Get_size()
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=size).astype(np.int64)
    buf = np.empty((owner.shape[0], len(cols)), dtype=np.int64)
    for c, a in enumerate(cols):
        buf[:, c] = a[order]
    recv, _ = C.alltoallv(comm, buf.reshape(-1), counts * len(cols))
    recv = recv.reshape(-1, len(cols))
    return [np.ascontiguousarray(recv[:, c]) for c in range(len(cols))]


def dist_triangle_count(g: DistGraph) -> DistTriangleCount:
    """Count the triangles of the (underlying undirected) graph, distributed (collective).

    The triangles of :func:`~spbfs.algorithms.triangle_count`: the graph is
    oriented from lower to higher rank, rank = (degree, id), and every
    triangle is found once, at its lowest-ranked vertex ``v``, as a wedge
    ``u - v - w`` (``rank(u) < rank(w)``, both out-neighbours of ``v``) closed
    by the edge ``u - w``: the masked ``plus_pair`` product of the DAG with
    its transpose. Unlike the other functions this one works on the 1D
    vector distribution, not on the 2D blocks: every rank first collects the
    whole adjacency lists of its own vertices (one Alltoallv of the block
    entries, both directions), asks the owners for its neighbours' degrees,
    then sends each wedge as a query to the owner of ``u``, which checks the
    closing edge in its lists; every triangle found is credited to its three
    vertices at their owners. Traffic: ``O(sum of d⁺(v)²)`` queries, as the
    wedges the one-process kernel checks.

    Parameters
    ----------
    g : DistGraph
        The distributed graph; edge directions and self-loops are ignored.

    Returns
    -------
    DistTriangleCount
        The total (the same on every rank) and this rank's per-vertex counts;
        ``gather()`` gives the :class:`~spbfs.algorithms.TriangleCount`.
    """
    g = _collective(_check_graph, g)
    grid, d = g.grid, g.dist
    comm = grid.comm
    ops = GridOps(g)
    n, lo, size = g.n, g.lo, ops.size
    # Adjacency lists of this rank's vertices, both directions, without duplicates.
    rows = d.global_rows(np.asarray(g.block.ind, dtype=np.int64), grid.i)
    cols = d.global_cols(np.asarray(g.block.column_ids(), dtype=np.int64), grid.j)
    a = np.concatenate([rows, cols])
    b = np.concatenate([cols, rows])
    a, b = _route_rows(comm, d.piece_of(a), [a, b])
    key = np.unique(a * n + b)  # sorted: by vertex, then neighbour
    a, b = key // n, key % n
    deg = np.bincount(a - lo, minlength=size).astype(np.int64)
    # Rank of every neighbour: (degree, id), as one int64 key.
    rk_b = ops.lookup(deg, b) * n + b
    rk_a = deg[a - lo] * n + a
    out = rk_a < rk_b
    v, u, rk_u = a[out], b[out], rk_b[out]
    # Out-lists of the DAG sorted by rank: pairs (u, w) of one list with rank u < rank w.
    order = np.lexsort((rk_u, v))
    v, u = v[order], u[order]
    m = v.shape[0]
    ends = np.searchsorted(v, v, side="right") if m else np.zeros(0, np.int64)
    after = (ends - np.arange(m) - 1).astype(np.int64)  # later entries of the same list
    total = int(after.sum())
    first = np.repeat(np.arange(m, dtype=np.int64), after)
    starts = np.cumsum(after) - after
    second = np.arange(total, dtype=np.int64) - starts[first] + first + 1
    qu, qw, qv = u[first], u[second], v[first]
    # The owner of u checks the closing edge u - w in its adjacency lists.
    qu, qw, qv = _route_rows(comm, d.piece_of(qu), [qu, qw, qv])
    probe = qu * n + qw
    at = np.minimum(np.searchsorted(key, probe), max(key.shape[0] - 1, 0))
    hit = key[at] == probe if key.shape[0] else np.zeros(probe.shape[0], dtype=bool)
    ends3 = np.concatenate([qv[hit], qu[hit], qw[hit]])
    (got,) = _route_rows(comm, d.piece_of(ends3), [ends3])
    per_vertex = np.bincount(got - lo, minlength=size).astype(np.int64)
    found = int(ops.allsum_int(int(hit.sum()))[0])
    return DistTriangleCount(lo=lo, hi=g.hi, n=n, _comm=comm, total=found,
                             per_vertex=per_vertex)
