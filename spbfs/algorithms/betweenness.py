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
Scaling follows ``networkx.betweenness_centrality`` (``endpoints=False``).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from semirings.semiring import plus_times
from spbfs.algorithms._common import check_positive_int, check_sources, prepare
from spbfs.algorithms._ops import SparseColumns, spgemm
from spbfs.config import Config
from spbfs.graph import Graph

__all__ = ["betweenness_centrality"]


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
        The graph (converted with :func:`spbfs.as_graph`); unweighted.
    k : int, optional
        Sample this many distinct sources uniformly (with ``seed``) and
        scale the sums up to estimate the exact values; None (and no
        ``sources``) is exact.
    sources : array_like of int, optional
        The sources to use instead of sampling (distinct ids), scaled as a
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
        Sources per batch (columns of the SpGEMMs); memory is
        ``O(batch_size * n)``.
    config : Config, optional
        Format and backend; defaults to the graph's.
    directed : bool, optional
        Used only when ``graph`` must be converted.

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
    batch_size = check_positive_int(batch_size, "batch_size")
    g = prepare(graph, config, directed)
    n = g.n
    if n == 0:
        return np.zeros(0)
    if k is not None and sources is not None:
        raise ValueError("give k (sample size) or sources, not both")
    if sources is not None:
        src = check_sources(g, sources)
        if np.unique(src).shape[0] != src.shape[0]:
            raise ValueError("sources must be distinct vertex ids")
    elif k is not None:
        k = check_positive_int(k, "k")
        if k > n:
            raise ValueError(f"k={k} exceeds the number of vertices ({n})")
        src = np.random.default_rng(seed).choice(n, size=k, replace=False).astype(np.int64)
    else:
        src = np.arange(n, dtype=np.int64)
    xp = g.backend.xp
    bc = xp.zeros(n, dtype=np.float64)
    for lo in range(0, src.shape[0], batch_size):
        bc += _batch(g, xp.asarray(src[lo : lo + batch_size]))
    bc = g.backend.to_host(bc)
    return _rescale(bc, src, n, normalized=normalized, directed=g.directed)


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


def _batch(g: Graph, src: Any) -> Any:
    """Sum over the sources ``src`` of Brandes' dependencies ``δ_s``."""
    xp = g.backend.xp
    n, k = g.n, int(src.shape[0])
    rows = xp.arange(k, dtype=np.int64)
    level = xp.full((k, n), -1, dtype=np.int64)
    sigma = xp.zeros((k, n), dtype=np.float64)
    visited = xp.zeros((k, n), dtype=bool)
    level[rows, src] = 0
    sigma[rows, src] = 1.0
    visited[rows, src] = True
    frontier = SparseColumns(xp.arange(k + 1, dtype=np.int64), src, xp.ones(k), n)
    fronts = [frontier]
    # Forward: path counts, one masked plus_times SpGEMM per level.
    while True:
        nxt = spgemm(g.out_block, frontier, plus_times, mask=visited, complement=True)
        if nxt.nnz == 0:
            break
        col = nxt.column_ids(xp)
        visited[col, nxt.ind] = True
        level[col, nxt.ind] = len(fronts)
        sigma[col, nxt.ind] = nxt.val
        frontier = nxt
        fronts.append(nxt)
    # Backward: dependencies, deepest level first.
    delta = xp.zeros((k, n), dtype=np.float64)
    for d in range(len(fronts) - 1, 0, -1):
        f = fronts[d]
        col = f.column_ids(xp)
        w = SparseColumns(f.ptr, f.ind, (1.0 + delta[col, f.ind]) / f.val, n)
        p = spgemm(g.in_block, w, plus_times, mask=level == d - 1)
        pcol = p.column_ids(xp)
        delta[pcol, p.ind] += sigma[pcol, p.ind] * p.val
    delta[rows, src] = 0.0
    return delta.sum(axis=0)
