"""Betweenness centrality: Brandes' algorithm on batches of sources.

For a batch of ``k`` sources the forward sweep is a multi-source BFS that
counts shortest paths: each level is one SpGEMM ``F' = B +.× F`` over
``plus_times``, masked by the complement of the visited matrix, where column
``s`` of ``F`` holds the path counts ``σ`` of the frontier of source ``s``.
The backward sweep walks the levels from the deepest up: with ``W`` the
matrix of ``(1 + δ[w]) / σ[w]`` over the vertices ``w`` of level ``d``, one
SpGEMM ``P = Bᵀ +.× W`` masked to level ``d - 1`` gives
``δ[v] += σ[v] * P[v]`` (``Bᵀ`` follows the edges backwards). Betweenness
is the sum of ``δ`` over the sources, without each source's own entry.
Path counts grow exponentially with depth on grids and meshes, so a level
whose count passes :data:`SIGMA_CAP` is divided by it (only ratios of
adjacent levels' counts enter ``δ``): a 1000 x 1000 grid gives finite values.
Scaling follows ``networkx.betweenness_centrality`` (``endpoints=False``).
That loop (:func:`dependencies`) is written once, against
:mod:`spbfs.algorithms.operations`: the numpy and cupy backends run it, and
so does the grid. On numba each source runs the same two
sweeps compiled, queue-driven (:func:`spbfs.kernels.ranking_numba.brandes`),
the sources split over the threads: a level there is a few instructions per
vertex, where a level of the batched products costs a round of Python and
arrays of ``k x n`` (a road network's thousand levels made it seconds a
source).

:func:`dist_betweenness_centrality` runs :func:`dependencies` on the 2D process
grid (conventions: :mod:`spbfs.algorithms.distributed`), one distributed
SpGEMM per level. Both sides pick their sources with
:func:`check_betweenness_sources` (and draw a sample with
:func:`_draw_sources`, on rank 0 for the grid) and scale with
:func:`_rescale`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numba as nb
import numpy as np

from semirings.semiring import plus_times
from spbfs.algorithms._common import (
    check_grid_call,
    check_positive_int,
    check_sources,
    prepare,
    sources_of,
)
from spbfs.algorithms._grid import Pieces, check_graph, collective
from spbfs.algorithms.operations import GridVectorOps, LocalOps
from spbfs.config import Config
from spbfs.graph import Graph
from spbfs.kernels.ranking_numba import brandes, full_ptr
from spbfs.mpi import comm as C
from spbfs.mpi.graph import DistGraph
from spbfs.threads import search_threads

__all__ = [
    "DistBetweennessResult",
    "betweenness_centrality",
    "check_betweenness_sources",
    "dist_betweenness_centrality",
]


def betweenness_centrality(
    graph: Any,
    *,
    k: int | None = None,
    sources: Any = None,
    normalized: bool = True,
    seed: int | np.random.Generator | None = None,
    batch_size: int = 64,
    config: Config | None = None,
    directed: bool | None = None,
) -> np.ndarray:
    """Betweenness centrality of every vertex, exact or from sampled sources.

    Parameters
    ----------
    graph : Graph, EdgeList, sparse matrix, networkx graph, path or (src, dst)
        The graph, converted by :func:`spbfs.as_graph` with ``config`` and ``directed``
        (see :mod:`spbfs.algorithms`); unweighted.
    k : int, optional
        Sample this many distinct sources uniformly (with ``seed``) and
        scale the sums up to estimate the exact values; None (and no
        ``sources``) is exact.
    sources : array_like of int, optional
        The sources to use instead of sampling (distinct ids; node labels for
        a networkx graph), scaled as a
        sample of that size: ``sources=S`` equals networkx's
        ``betweenness_centrality(G, k=len(S), seed=...)`` when that draws
        ``S``.
    normalized : bool
        Divide by ``(n - 1)(n - 2)`` (directed and undirected alike, as
        networkx does); otherwise an undirected graph's pair sums are
        halved. Sampled results use networkx's (3.5+) estimator: a sampled
        vertex is scaled as a sample of ``k - 1`` sources, the others of
        ``k`` (so ``k == 1`` gives NaN at the source).
    seed : int or numpy.random.Generator, optional
        Seed of the source sample.
    batch_size : int
        Sources per batch (columns of the SpGEMMs, numpy and cupy); memory
        is ``O(batch_size * n)``. The numba backend runs one source at a time
        per thread (memory ``O(threads * n)``) and only checks it.

    Returns
    -------
    numpy.ndarray
        float64 centrality of each vertex.

    Raises
    ------
    ValueError
        For ``k`` outside ``1 .. n``, both ``k`` and ``sources``, repeated or
        out-of-range sources, a non-positive ``batch_size``.
    TypeError
        For a non-integer ``k``, ``batch_size`` or source id.

    Examples
    --------
    >>> import spbfs
    >>> from spbfs.algorithms import betweenness_centrality
    >>> g = spbfs.Graph.from_edges([0, 1, 2], [1, 2, 3])
    >>> betweenness_centrality(g, normalized=False).tolist()
    [0.0, 2.0, 2.0, 0.0]
    """
    if check_grid_call(graph, config, "betweenness_centrality"):
        return dist_betweenness_centrality(graph, k=k, sources=sources, normalized=normalized,
                                           seed=seed, batch_size=batch_size)
    batch_size = check_positive_int(batch_size, "batch_size")
    g = prepare(graph, config, directed, weight=None)
    n = g.n
    if n == 0:
        return np.zeros(0)
    src, sample = check_betweenness_sources(n, k, None if sources is None
                                            else sources_of(g, sources))
    if src is None:
        src = _draw_sources(n, sample, seed)
    if g.backend.name == "numba":
        bc = _brandes_numba(g, src)
    else:
        bc = dependencies(LocalOps(g), src, batch_size)
    return _rescale(bc, src, n, normalized=normalized, directed=g.directed)


def _brandes_numba(g: Graph, src: np.ndarray) -> np.ndarray:
    """Sum over ``src`` of Brandes' dependencies, one compiled sweep pair per source.

    The sources are cut into chunks of about equal count, run in parallel on
    as many threads as the machine has idle (:mod:`spbfs.threads`), each
    chunk adding into its own row. The chunks are as many as numba's pool
    allows threads, twice over, whatever the count the load gives: the rows'
    sums, and so the result's last bits, do not depend on how busy the
    machine was (with chunks per thread chosen, the same call on a busy
    machine and a quiet one differed in the last bits).
    """
    n = g.n
    ptr, ind, jc, is_dcsc = g.out_block.kernel_view
    ptr = full_ptr(ptr, jc, is_dcsc, n)
    k = int(src.shape[0])
    with search_threads(g.config.threads) as threads:
        threads.count()  # numba's count for the kernel's parallel loop
        parts = min(k, 2 * nb.config.NUMBA_NUM_THREADS) if k > 1 else 1
        chunks = np.linspace(0, k, parts + 1).round().astype(np.int64)
        acc = np.zeros((parts, n))
        brandes(ptr, ind, n, np.ascontiguousarray(src, dtype=np.int64), chunks, acc)
    return acc.sum(axis=0)


def check_betweenness_sources(
    n: int, k: Any, sources: Any
) -> tuple[np.ndarray, None] | tuple[None, int]:
    """The sources of a betweenness run over ``n`` vertices, or the size of the sample to draw.

    Shared by :func:`betweenness_centrality` and :func:`dist_betweenness_centrality`.

    Returns
    -------
    (numpy.ndarray, None) or (None, int)
        The int64 sources (``sources``, or every vertex when neither ``k`` nor
        ``sources`` is given); or, to sample, ``k`` checked.

    Raises
    ------
    ValueError
        For both ``k`` and ``sources``, ``k`` outside ``1 .. n``, repeated or
        out-of-range sources.
    TypeError
        For a non-integer ``k`` or source id.
    """
    if k is not None and sources is not None:
        raise ValueError("give k (sample size) or sources, not both")
    if sources is not None:
        src = check_sources(n, sources)
        if np.unique(src).shape[0] != src.shape[0]:
            raise ValueError("sources must be distinct vertex ids")
        return src, None
    if k is not None:
        k = check_positive_int(k, "k")
        if k > n:
            raise ValueError(f"k={k} exceeds the number of vertices ({n})")
        return None, k
    return np.arange(n, dtype=np.int64), None


def _draw_sources(n: int, k: int, seed: int | np.random.Generator | None) -> np.ndarray:
    """``k`` distinct vertices drawn uniformly: the same for the same ``seed`` on any grid."""
    return np.random.default_rng(seed).choice(n, size=k, replace=False).astype(np.int64)


def _rescale(
    bc: np.ndarray, src: np.ndarray, n: int, *, normalized: bool, directed: bool,
    lo: int = 0,
) -> np.ndarray:
    """networkx's scaling (``endpoints=False``), sampling correction included.

    With ``N = n - 1`` candidate targets, exact sums are divided by
    ``N (N - 1)`` (normalized) or by 2 for an undirected graph. From a
    sample of ``k`` sources a vertex's sum estimates ``k / N`` of its exact
    sum, except for a sampled vertex itself, whose own source contributes
    nothing: it is scaled as a sample of ``k - 1`` (NaN when ``k == 1``).
    ``bc`` may be the piece of vertices ``lo .. lo + len(bc) - 1`` (a rank's
    share of a distributed result); ``src`` holds global ids.
    """
    big_n = n - 1
    if big_n < 2:
        return bc
    k = src.shape[0]
    corr = 1.0 if directed else 2.0
    if k == n:
        bc *= 1.0 / (big_n * (big_n - 1)) if normalized else 1.0 / corr
        return bc
    if normalized:
        s_src = 1.0 / ((k - 1) * (big_n - 1)) if k > 1 else np.nan
        s_other = 1.0 / (k * (big_n - 1))
    else:
        s_src = big_n / ((k - 1) * corr) if k > 1 else np.nan
        s_other = big_n / (k * corr)
    scale = np.full(bc.shape[0], s_other)
    scale[src[(src >= lo) & (src < lo + bc.shape[0])] - lo] = s_src
    bc *= scale
    return bc


#: A level whose largest path count (per source) passes this is divided by it: exact (a
#: power of two), and far from both ends of float64. Counts grow exponentially with
#: depth on grids and meshes (a 1000 x 1000 grid's corner-to-corner count is about
#: 1e600): only ratios of adjacent levels' counts enter δ, as in
#: :func:`spbfs.kernels.ranking_numba.brandes`.
SIGMA_CAP = 2.0 ** 600


def dependencies(ops: LocalOps | GridVectorOps, src: np.ndarray, batch_size: int) -> np.ndarray:
    """This piece's sum over ``src`` of Brandes' dependencies, ``batch_size`` sources a time."""
    bc = ops.xp.zeros(ops.size, dtype=np.float64)
    for lo in range(0, src.shape[0], batch_size):
        bc += _batch(ops, src[lo:lo + batch_size])
    return ops.to_host(bc)


def _batch(ops: LocalOps | GridVectorOps, src: np.ndarray) -> Any:
    """Sum over the sources ``src`` of Brandes' dependencies ``δ_s`` (this piece)."""
    xp, lo = ops.xp, ops.lo
    k, size = int(src.shape[0]), ops.size
    level = xp.full((k, size), -1, dtype=np.int64)
    sigma = xp.zeros((k, size), dtype=np.float64)
    s_all = xp.asarray(src)
    sidx = xp.flatnonzero((s_all >= lo) & (s_all < ops.hi)).astype(np.int64)
    ids = s_all[sidx] - lo
    level[sidx, ids] = 0
    sigma[sidx, ids] = 1.0
    fronts = [(ids, sidx, xp.ones(ids.shape[0]))]
    scaled = []  # scaled[d - 1][s]: level d of source s was divided by SIGMA_CAP
    # Forward: path counts, one plus_times product per level, masked by the visited.
    while True:
        f_ids, f_s, f_v = fronts[-1]
        r, s, v = ops.mxsm(f_ids, f_s, f_v, k, plus_times, "sum",
                           mask=(level >= 0) if ops.masks else None)
        fresh = level[s, r] < 0
        r, s, v = r[fresh], s[fresh], v[fresh]
        # One reduction: whether any process found a vertex, and which sources passed the cap.
        flags = xp.zeros(k + 1, dtype=np.float64)
        flags[k] = float(r.shape[0] > 0)
        flags[s[v > SIGMA_CAP]] = 1.0
        flags = ops.allmax(flags) > 0
        if not bool(flags[k]):
            break
        big = flags[:k]
        v = xp.where(big[s], v / SIGMA_CAP, v)
        level[s, r] = len(fronts)
        sigma[s, r] = v
        fronts.append((r, s, v))
        scaled.append(big)
    # Backward: dependencies, deepest level first, over Bᵀ (the edges followed back).
    delta = xp.zeros((k, size), dtype=np.float64)
    for d in range(len(fronts) - 1, 0, -1):
        f_ids, f_s, f_v = fronts[d]
        w = (1.0 + delta[f_s, f_ids]) / f_v
        r, s, p = ops.mxsm(f_ids, f_s, w, k, plus_times, "sum", transpose=True,
                           mask=(level != d - 1) if ops.masks else None)
        keep = level[s, r] == d - 1
        r, s, p = r[keep], s[keep], p[keep]
        # σ[v] / σ[w] across the levels: level d may hold its counts / SIGMA_CAP once more.
        delta[s, r] += sigma[s, r] * p * xp.where(scaled[d - 1][s], 1.0 / SIGMA_CAP, 1.0)
    delta[sidx, ids] = 0.0
    return delta.sum(axis=0)


# --------------------------------------------------------------------------- on the grid


@dataclass
class DistBetweennessResult(Pieces):
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
    g = check_graph(g)
    n = g.n
    bs = collective(g, check_positive_int, batch_size, "batch_size")
    src, sample = collective(g, check_betweenness_sources, n, k, sources)
    if src is None:
        # seed=None (or a Generator in another state) would draw differently on each rank.
        drawn = _draw_sources(n, sample, seed) if g.grid.rank == 0 else None
        src = C.bcast_obj(g.grid.comm, drawn)
    bc = _rescale(dependencies(GridVectorOps(g), src, bs), src, g.n, normalized=normalized,
                  directed=g.directed, lo=g.lo)
    return DistBetweennessResult(lo=g.lo, hi=g.hi, n=n, _comm=g.grid.comm, values=bc,
                                 sources=src)
