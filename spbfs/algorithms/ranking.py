"""PageRank: power iteration over ``plus_times`` SpMV, dangling vertices handled.

An iteration is ``y = B +.× (x / d_out)`` (``B[v, u]`` for the edge
``u -> v``, so ``y[v]`` sums the shares of ``v``'s in-neighbours), then
``x' = alpha * (y + s / n) + (1 - alpha) / n`` where ``s`` is the rank held
by the dangling vertices (no out-edges), spread evenly over all vertices, as
networkx does. It stops on the L1 change of an iteration: below ``n * tol``
(networkx's rule, the default) or at most ``tol`` (``stop="l1"``, igraph's).

On numba the whole iteration runs compiled
(:func:`spbfs.kernels.ranking_numba.pagerank_pull`): each iteration one
parallel pull over the in-edges (the block of in-edges, ``B``'s rows) that
also yields the next dangling rank and the L1 change, nothing allocated per
iteration, as fast as the memory streams the structure. numpy and cupy run
the power iteration of :func:`power_iteration`, written once against
:mod:`spbfs.algorithms.operations`: one dense product per iteration.

:func:`dist_pagerank` runs that same loop on the 2D process grid (conventions:
:mod:`spbfs.algorithms.distributed`): the product becomes a distributed
dense SpMV, the dangling rank and the L1 change come from one Allreduce. Both
check their arguments with :func:`check_pagerank_args`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numba as nb
import numpy as np
import scipy.sparse as sp

from semirings.blocks import block_from_scipy
from spbfs.algorithms._common import check_grid_call, check_positive_int, node_labels, prepare
from spbfs.algorithms._grid import Pieces, check_graph, collective
from spbfs.algorithms.operations import GridVectorOps, LocalOps
from spbfs.config import Config
from spbfs.kernels.ranking_numba import (
    full_ptr,
    pagerank_pull,
    pull_chunks,
    start_shares,
    unsigned,
    work_chunks,
)
from spbfs.mpi.graph import DistGraph
from spbfs.threads import search_threads

__all__ = ["DistPageRankResult", "PageRankResult", "check_pagerank_args", "dist_pagerank",
           "pagerank"]


@dataclass
class PageRankResult:
    """What :func:`pagerank` returns.

    Attributes
    ----------
    scores : numpy.ndarray
        float64 PageRank of each vertex (sums to 1).
    iterations : int
        Power iterations performed.
    converged : bool
        Whether the L1 change met the stopping rule (``stop``) within
        ``max_iter`` iterations (when False, ``scores`` is the last iterate).
    labels : numpy.ndarray or None
        For a networkx graph, the node label of each position of ``scores``
        (None otherwise).
    """

    scores: np.ndarray
    iterations: int
    converged: bool
    labels: np.ndarray | None = None

    def to_dict(self) -> dict[Any, float]:
        """Scores keyed by node label (networkx input) or vertex id, as ``networkx.pagerank``."""
        keys = range(self.scores.shape[0]) if self.labels is None else self.labels.tolist()
        return dict(zip(keys, self.scores.tolist(), strict=True))

    def to_graphblas(self) -> Any:
        """The scores as a full ``graphblas.Vector`` (FP64), indexed by vertex id.

        Needs python-graphblas (``pip install 'spbfs[graphblas]'``).
        """
        from spbfs.interop import to_vector

        return to_vector(self.scores, what="PageRankResult.to_graphblas")


def pagerank(
    graph: Any,
    *,
    alpha: float = 0.85,
    tol: float = 1e-6,
    max_iter: int = 100,
    weights: Any = None,
    stop: str = "networkx",
    config: Config | None = None,
    directed: bool | None = None,
) -> PageRankResult:
    """PageRank by power iteration (uniform teleport, dangling rank spread evenly).

    Parameters
    ----------
    graph : Graph, EdgeList, sparse matrix, networkx graph, path or (src, dst)
        The graph, converted by :func:`spbfs.as_graph` with ``config`` and ``directed``
        (see :mod:`spbfs.algorithms`); an undirected edge is two arcs. Unweighted
        unless ``weights`` is given or the input edge list has weights (a
        weighted networkx graph, see :meth:`~spbfs.graph.Graph.from_networkx`,
        or a weighted file): then a vertex passes its rank on in proportion to
        its out-edges' weights, as ``networkx.pagerank(G, weight=...)`` does (repeated
        edges add up, self-loops count). Matrix values are not used as
        weights unless passed as ``weights``.
    alpha : float
        Damping factor, in ``[0, 1]``.
    tol : float
        Convergence tolerance, > 0 (see ``stop``).
    max_iter : int
        Iteration limit, >= 1. Reaching it is not an error: ``converged`` says
        False (the networkx backend raises networkx's
        ``PowerIterationFailedConvergence`` there, as networkx does).
    weights : scipy.sparse matrix, optional
        ``W[u, v]`` = weight of ``u -> v``, shape ``(n, n)``: its stored
        entries are the weighted edges (repeated entries add up, the diagonal
        is self-loops). For an undirected graph give both directions of an
        edge.
    stop : {"networkx", "l1"}
        The stopping rule on the L1 change ``||x' - x||_1`` of an iteration.
        ``"networkx"`` (the default, so that ``tol`` means what it means to
        ``networkx.pagerank``): ``< n * tol``. ``"l1"``: ``<= tol``, the
        rule of igraph's PRPACK solver and of a plain power iteration to a
        given accuracy (a factor ``n`` tighter for the same ``tol``).

    Returns
    -------
    PageRankResult
        Scores, iterations and whether it converged. An empty graph gives
        empty scores. For a networkx graph the scores are in ``G.nodes``
        order, with ``labels`` (``to_dict()`` keys them by label).

    Raises
    ------
    ValueError
        For ``alpha`` outside ``[0, 1]``, a non-positive ``tol`` or
        ``max_iter``, an unknown ``stop``, ``weights`` of the wrong shape, or
        NaN weights.
    TypeError
        For ``weights`` that is not a scipy sparse matrix.

    Examples
    --------
    >>> import spbfs
    >>> from spbfs.algorithms import pagerank
    >>> g = spbfs.Graph.from_edges([0, 1, 2], [1, 2, 0], directed=True)
    >>> pagerank(g).scores.round(4).tolist()
    [0.3333, 0.3333, 0.3333]
    """
    if check_grid_call(graph, config, "pagerank", weights=weights):
        return dist_pagerank(graph, alpha=alpha, tol=tol, max_iter=max_iter, stop=stop)
    max_iter = check_pagerank_args(alpha, tol, max_iter, stop)
    g = prepare(graph, config, directed)
    n = g.n
    if n == 0:
        return PageRankResult(np.zeros(0), 0, True)
    alpha = float(alpha)
    limit = float(tol) * (n if stop == "networkx" else 1)
    wmat = _pagerank_weights(g, weights)
    if g.backend.name == "numba":
        x, it, converged = _pagerank_numba(g, wmat, alpha, limit, stop == "l1", max_iter)
        return PageRankResult(scores=x, iterations=it, converged=converged,
                              labels=node_labels(g))
    ops = LocalOps(g)
    if wmat is None:
        block, deg = None, None
    else:
        # B = W^T: the csc layout of B is W's csr one, no copy.
        block = block_from_scipy(g.config.format, wmat.T, index_dtype=g.config.index_dtype,
                                 backend=g.backend)
        deg = ops.xp.asarray(np.asarray(wmat.sum(axis=1)).ravel())
    x, it, converged = power_iteration(ops, alpha, limit, stop == "l1", max_iter, block=block,
                                       deg=deg)
    return PageRankResult(scores=ops.to_host(x), iterations=it, converged=converged,
                          labels=node_labels(g))


def power_iteration(ops: LocalOps | GridVectorOps, alpha: float, limit: float, inclusive: bool,
                    max_iter: int, *, block: Any = None,
                    deg: Any = None) -> tuple[Any, int, bool]:
    """The power iteration on one process or the grid: (this piece's scores, iterations, converged).

    Each iteration is one dense product ``y = B +.× (x / d_out)`` (``block``:
    the weighted ``Wᵀ`` instead of ``B``, with ``deg`` its row sums), then
    ``x' = alpha (y + s / n) + (1 - alpha) / n``; the dangling rank ``s`` and
    the L1 change come from one reduction over the processes.
    """
    xp, n = ops.xp, ops.n
    deg = ops.out_degree() if deg is None else deg
    dangling = deg == 0
    inv = xp.where(dangling, 0.0, 1.0 / xp.where(dangling, 1.0, deg))
    x = xp.full(ops.size, 1.0 / n)
    lost = float(ops.allsum(x[dangling].sum())[0])
    converged = False
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is reported
        y = ops.mxv(x * inv, block=block)
        new = alpha * (y + lost / n) + (1.0 - alpha) / n
        err, lost = (float(v) for v in ops.allsum(abs(new - x).sum(), new[dangling].sum()))
        x = new
        if err < limit or (inclusive and err <= limit):
            converged = True
            break
    return x, it, converged


#: Fewer edges than this run PageRank on one thread: a parallel iteration's start and
#: barrier cost more than it saves there (luxembourg_osm, 0.24 M arcs: 492 ms on one
#: thread against 649 ms for a parallel loop given one thread, load 23), and compiling
#: a parallel loop costs seconds (4.7 s of CPU against 1.3 s for the one-thread loop).
_PARALLEL_EDGES = 1 << 20


def _pagerank_chunks(ptr: np.ndarray, ind: np.ndarray, data: np.ndarray, weighted: bool,
                     inv: np.ndarray, alpha: float, limit: float, inclusive: bool,
                     max_iter: int, x: np.ndarray, work: tuple[np.ndarray, ...],
                     chunks: np.ndarray) -> tuple[int, bool]:
    """:func:`pagerank_pull` over the vertex ranges ``chunks`` in parallel: one kernel call
    per iteration, the ranges' sums added in their order as the one-thread loop adds them."""
    n = x.shape[0]
    xs, new, xs_new = work
    errs, losts = np.zeros(chunks.shape[0] - 1), np.zeros(chunks.shape[0] - 1)
    lost = start_shares(x, inv, xs)
    cur_x, cur_s, nxt_x, nxt_s = x, xs, new, xs_new
    it, converged = 0, False
    while it < max_iter:
        it += 1
        base = alpha * lost / n + (1.0 - alpha) / n
        pull_chunks(ptr, ind, data, weighted, inv, alpha, base, cur_x, cur_s, nxt_x, nxt_s,
                    chunks, errs, losts)
        err = lost = 0.0
        for e, d in zip(errs.tolist(), losts.tolist(), strict=True):
            err += e
            lost += d
        cur_x, cur_s, nxt_x, nxt_s = nxt_x, nxt_s, cur_x, cur_s
        if err < limit or (inclusive and err <= limit):
            converged = True
            break
    if cur_x is not x:
        x[:] = cur_x
    return it, converged


def _pagerank_numba(g: Any, wmat: sp.csr_matrix | None, alpha: float, limit: float,
                    inclusive: bool, max_iter: int) -> tuple[np.ndarray, int, bool]:
    """The power iteration as one compiled pull loop: (scores, iterations, converged)."""
    n = g.n
    if wmat is None:
        ptr, ind, jc, is_dcsc = g.in_block.kernel_view
        ptr = full_ptr(ptr, jc, is_dcsc, n)
        data = np.zeros(1)
        deg = np.asarray(g.out_degree, dtype=np.float64)
    else:
        # Row v of W^T (a column of W, stored by csc) holds the in-edges of v with their weights.
        wt = wmat.tocsc()
        ptr, ind = wt.indptr.astype(np.int64, copy=False), wt.indices
        data = np.ascontiguousarray(wt.data, dtype=np.float64)
        deg = np.asarray(wmat.sum(axis=1), dtype=np.float64).ravel()
    inv = np.zeros(n)
    np.divide(1.0, deg, out=inv, where=deg != 0)
    x = np.full(n, 1.0 / n)
    ptr, ind = unsigned(ptr), unsigned(ind)
    weighted = wmat is not None
    work = (np.empty(n), np.empty(n), np.empty(n))
    # A parallel iteration ends at a barrier: as many threads as the machine has idle
    # (spbfs.threads), and one, with no parallel region at all, below _PARALLEL_EDGES.
    # The vertex ranges whose sums make an iteration's are numba's pool's, whatever count
    # the load gives: the one-thread loop adds the same sums in the same order, so a run
    # on a busy machine gives the bits of one on a quiet machine.
    big = int(ptr[-1]) >= _PARALLEL_EDGES
    chunks = work_chunks(ptr, nb.config.NUMBA_NUM_THREADS if big else 1)
    with search_threads(g.config.threads) as threads:
        if not big or threads.count() == 1:
            it, converged, _ = pagerank_pull(ptr, ind, data, weighted, inv, alpha, limit,
                                             inclusive, max_iter, x, *work, chunks)
        else:
            it, converged = _pagerank_chunks(ptr, ind, data, weighted, inv, alpha, limit,
                                             inclusive, max_iter, x, work, chunks)
    return x, int(it), bool(converged)


def _pagerank_weights(g: Any, weights: Any) -> sp.csr_matrix | None:
    """The csr matrix ``W`` (``W[u, v]`` = weight of ``u -> v``) PageRank runs on, or None.

    From ``weights``, else from the input edge list's weights (both directions
    of an undirected edge, a self-loop once, repeated edges summed: networkx's
    ``to_scipy_sparse_array``), else None (every edge weighs 1).
    """
    n = g.n
    if weights is not None:
        if not sp.issparse(weights):
            raise TypeError(f"weights must be a scipy sparse matrix (W[u, v] = weight of u -> v),"
                            f" got {type(weights).__name__}")
        if weights.shape != (n, n):
            raise ValueError(f"weights has shape {weights.shape[0]}x{weights.shape[1]}, the "
                             f"graph has {n} vertices")
        w = sp.csr_matrix(weights, dtype=np.float64)
    elif g.edges is not None and g.edges.weights is not None:
        e = g.edges
        vals = np.asarray(e.weights, dtype=np.float64)
        w = sp.csr_matrix((vals, (e.src, e.dst)), shape=(n, n))
        if not g.directed:
            w = (w + w.T - sp.diags(w.diagonal())).tocsr()
    else:
        return None
    w.sum_duplicates()
    if np.isnan(w.data).any():
        raise ValueError("weights: PageRank needs weights that are not NaN")
    return w


#: The stopping rules of PageRank: networkx's (L1 change ``< n * tol``) and the one of
#: igraph and PRPACK (L1 change ``<= tol``, tighter by a factor ``n``).
STOPS = ("networkx", "l1")


def check_pagerank_args(alpha: Any, tol: Any, max_iter: Any, stop: Any = "networkx") -> int:
    """Check PageRank's damping, tolerance, iteration cap and stopping rule; return ``max_iter``.

    Shared by the one-process and the distributed PageRank.
    """
    if stop not in STOPS:
        raise ValueError(f"stop must be one of {', '.join(STOPS)}; got {stop!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, int | float | np.floating):
        raise TypeError(f"alpha must be a number, got {type(alpha).__name__}")
    if not 0.0 <= float(alpha) <= 1.0:
        raise ValueError(f"alpha must lie in [0, 1], got {alpha}")
    if isinstance(tol, bool) or not isinstance(tol, int | float | np.floating):
        raise TypeError(f"tol must be a number, got {type(tol).__name__}")
    if not float(tol) > 0:
        raise ValueError(f"tol must be > 0, got {tol}")
    return check_positive_int(max_iter, "max_iter")


# --------------------------------------------------------------------------- on the grid


@dataclass
class DistPageRankResult(Pieces):
    """What :func:`dist_pagerank` returns on every rank.

    Attributes
    ----------
    scores : numpy.ndarray
        float64 PageRank of this rank's vertices ``lo .. hi-1``.
    iterations : int
        Power iterations performed.
    converged : bool
        Whether the L1 change met the stopping rule.
    lo, hi, n : int
        The piece and the vertex count.
    """

    scores: np.ndarray = field(default_factory=lambda: np.zeros(0))
    iterations: int = 0
    converged: bool = False

    def gather(self, root: int = 0) -> PageRankResult | None:
        """The whole :class:`~spbfs.algorithms.PageRankResult` on ``root`` (collective)."""
        return self._assemble(root, PageRankResult, {"scores": self.scores},
                              iterations=self.iterations, converged=self.converged)


def dist_pagerank(
    g: DistGraph, *, alpha: float = 0.85, tol: float = 1e-6, max_iter: int = 100,
    stop: str = "networkx",
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
        Convergence tolerance, > 0 (see ``stop``).
    max_iter : int
        Iteration limit, >= 1.
    stop : {"networkx", "l1"}
        The stopping rule, as :func:`~spbfs.algorithms.pagerank`'s.

    Returns
    -------
    DistPageRankResult
        This rank's scores; ``gather()`` gives the
        :class:`~spbfs.algorithms.PageRankResult` of
        :func:`~spbfs.algorithms.pagerank` (to rounding).

    Raises
    ------
    CollectiveError
        On every rank for ``alpha`` outside ``[0, 1]``, a non-positive
        ``tol`` or ``max_iter``, or an unknown ``stop``.
    """
    g = check_graph(g)
    iters = collective(g, check_pagerank_args, alpha, tol, max_iter, stop)
    limit = float(tol) * (g.n if stop == "networkx" else 1)
    ops = GridVectorOps(g)
    x, it, converged = power_iteration(ops, float(alpha), limit, stop == "l1", iters)
    return DistPageRankResult(lo=g.lo, hi=g.hi, n=g.n, _comm=g.grid.comm, scores=ops.to_host(x),
                              iterations=it, converged=converged)
