"""Single-source shortest paths: Bellman-Ford frontier iteration over ``min_plus``.

A :class:`~spbfs.graph.Graph` stores the structure only (BFS ignores values),
so the weights come from one of, in this order:

1. the ``weights`` argument: a scipy sparse matrix ``W`` (``W[u, v]`` is the
   weight of the edge ``u -> v``; its stored entries, explicit zeros
   included, are the weighted edges), or a block made once from it by
   :func:`weighted_block` for repeated calls (no rebuilding, no checks),
2. the graph argument itself when it is a scipy sparse matrix (its values),
3. the input edge list's ``weights`` (:attr:`spbfs.edges.EdgeList.weights`,
   e.g. a Matrix Market ``real`` file, kept on ``Graph.edges``),
4. otherwise every edge weighs 1 (the distances are BFS levels).

From them a weighted block ``Bw`` (``Bw[v, u] = w(u -> v)``) is built in the
graph's format and backend; for an undirected graph an edge given with two
weights keeps the smaller one, as ``scipy.sparse.csgraph`` does. Each round
is one engine call, ``y = Bw min.+ d_F`` over the vertices whose distance
improved in the previous round (a sparse vector), followed by keeping the
entries of ``y`` that improve ``d``. With non-negative weights the loop ends
after at most ``n - 1`` rounds. Delta-stepping was not added: on the
low-diameter graphs measured here the frontier iteration runs few rounds
and each is one whole-frontier kernel call.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.sparse as sp

from semirings.blocks import Block, block_from_edges
from semirings.kernels import spmsv
from semirings.semiring import min_plus
from semirings.vector import SparseVector
from spbfs.algorithms._common import prepare
from spbfs.config import Config
from spbfs.graph import Graph

__all__ = ["ShortestPathsResult", "sssp", "weighted_block"]


@dataclass
class ShortestPathsResult:
    """What :func:`sssp` returns.

    Attributes
    ----------
    source : int
        The source vertex.
    distances : numpy.ndarray
        float64 distance from ``source``; ``inf`` where unreachable.
    rounds : int
        Relaxation rounds (engine calls) performed.
    """

    source: int
    distances: np.ndarray
    rounds: int


def _edge_weights(graph: Any, g: Graph, weights: Any) -> tuple[Any, Any, Any] | None:
    """(src, dst, w) of the weighted edges, or None for unit weights."""
    if weights is not None:
        if not sp.issparse(weights):
            raise TypeError(
                f"weights must be a scipy sparse matrix (W[u, v] = weight of u -> v), "
                f"got {type(weights).__name__}"
            )
        if weights.shape != (g.n, g.n):
            raise ValueError(
                f"weights has shape {weights.shape[0]}x{weights.shape[1]}, the graph has "
                f"{g.n} vertices"
            )
        mat = weights
    elif sp.issparse(graph):
        mat = graph
    elif g.edges is not None and g.edges.weights is not None:
        e = g.edges
        return e.src, e.dst, np.asarray(e.weights, dtype=np.float64)
    else:
        return None
    csr = sp.csr_matrix(mat)
    if not csr.has_canonical_format:  # repeated entries add up, as in scipy.sparse.csgraph
        csr = csr.copy()
        csr.sum_duplicates()
    rows = np.repeat(np.arange(csr.shape[0], dtype=np.int64), np.diff(csr.indptr))
    return rows, csr.indices.astype(np.int64), csr.data.astype(np.float64)


def _check_weights(src: np.ndarray, dst: np.ndarray, w: np.ndarray) -> None:
    bad = np.flatnonzero(np.isnan(w) | (w < 0))
    if bad.size:
        k = int(bad[0])
        raise ValueError(
            f"weights must be non-negative (and not NaN): edge {int(src[k])} -> {int(dst[k])} "
            f"has weight {float(w[k])} ({bad.size} such edge(s)); sssp relaxes over min_plus and "
            "needs weights >= 0"
        )


def weighted_block(g: Graph, weights: Any) -> Block:
    """Block of ``Bw`` (``Bw[v, u] = w(u -> v)``) in ``g``'s format and backend.

    Build it once and pass it as ``sssp(g, s, weights=block)`` to run many
    sources without rebuilding it.

    Parameters
    ----------
    g : Graph
        Supplies the vertex count, direction, format and backend.
    weights : scipy.sparse matrix
        ``W[u, v]`` = weight of ``u -> v``, non-negative, shape ``(n, n)``.

    Returns
    -------
    Block
        Self-loops dropped (they never shorten a path), repeated edges with
        their smallest weight, both directions for an undirected graph.

    Raises
    ------
    TypeError, ValueError
        As :func:`sssp` for bad ``weights``.
    """
    if not sp.issparse(weights):
        raise TypeError(f"weights must be a scipy sparse matrix, got {type(weights).__name__}")
    ew = _edge_weights(None, g, weights)
    assert ew is not None  # a sparse matrix always gives edges
    _check_weights(*ew)
    return _build_weighted(g, *ew)


def _build_weighted(g: Graph, src: Any, dst: Any, w: Any) -> Block:
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)
    if not g.directed:
        src, dst, w = np.concatenate([src, dst]), np.concatenate([dst, src]), np.concatenate([w, w])
    keep = src != dst
    src, dst, w = src[keep], dst[keep], w[keep]
    n = g.n
    key = src * n + dst  # column-major order of Bw: by column u = src, then row v = dst
    order = np.argsort(key, kind="stable")  # radix sort of int64 keys
    key, w = key[order], w[order]
    first = np.ones(key.shape[0], dtype=bool)
    first[1:] = key[1:] != key[:-1]
    starts = np.flatnonzero(first)
    if starts.shape[0] != key.shape[0]:  # repeated edges keep their smallest weight
        w = np.minimum.reduceat(w, starts) if starts.size else w
        key = key[starts]
    u, v = key // n, key % n
    return block_from_edges(
        g.config.format, v, u, (n, n), values=w, index_dtype=g.config.index_dtype,
        dedup=False, backend=g.backend,
    )


def sssp(
    graph: Any,
    source: int,
    *,
    weights: Any = None,
    max_rounds: int | None = None,
    config: Config | None = None,
    directed: bool | None = None,
) -> ShortestPathsResult:
    """Shortest-path distances from ``source`` (non-negative weights).

    Parameters
    ----------
    graph : Graph, EdgeList, sparse matrix, networkx graph, path or (src, dst)
        The graph (converted with :func:`spbfs.as_graph`). A weighted scipy
        matrix supplies its values as the weights.
    source : int
        Source vertex id.
    weights : scipy.sparse matrix or Block, optional
        ``W[u, v]`` = weight of ``u -> v``, shape ``(n, n)``; its stored
        entries are the weighted edges. A block from :func:`weighted_block`
        is used as it is. See the module docstring for where weights come
        from when it is omitted.
    max_rounds : int, optional
        Stop after this many relaxation rounds (distances are then upper
        bounds).
    config : Config, optional
        Format and backend; defaults to the graph's.
    directed : bool, optional
        Used only when ``graph`` must be converted.

    Returns
    -------
    ShortestPathsResult
        float64 distances, ``inf`` where unreachable.

    Raises
    ------
    ValueError
        For an empty graph, a source out of range, a negative or NaN weight
        (the message names the edge), or ``weights`` of the wrong shape.
    TypeError
        For a non-integer source or ``weights`` that is not a scipy sparse
        matrix.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> from spbfs.algorithms import sssp
    >>> W = sp.csr_matrix(([4.0, 1.0, 1.0], ([0, 0, 1], [2, 1, 2])), shape=(3, 3))
    >>> sssp(W, 0, directed=True).distances.tolist()
    [0.0, 1.0, 2.0]
    """
    g = prepare(graph, config, directed, allow_empty=False)
    source = g.check_vertex(source, "source")
    if max_rounds is not None:
        if isinstance(max_rounds, bool) or not isinstance(max_rounds, int | np.integer):
            raise TypeError(f"max_rounds must be an integer, got {type(max_rounds).__name__}")
        if max_rounds < 0:
            raise ValueError(f"max_rounds must be >= 0, got {max_rounds}")
    if isinstance(weights, Block):
        if weights.shape != (g.n, g.n) or weights.data is None:
            raise ValueError(
                f"weights: a block must be a weighted block of shape ({g.n}, {g.n}) made by "
                f"weighted_block, got {weights!r}"
            )
        block = weights
    else:
        ew = _edge_weights(graph, g, weights)
        if ew is None:
            block = g.out_block
        else:
            _check_weights(*ew)
            block = _build_weighted(g, *ew)
    xp = g.backend.xp
    n = g.n
    dist = xp.full(n, np.inf, dtype=np.float64)
    dist[source] = 0.0
    frontier = SparseVector(
        xp.asarray([source], dtype=np.int64), xp.zeros(1, dtype=np.float64), n, check=False
    )
    rounds = 0
    while frontier.nnz and (max_rounds is None or rounds < max_rounds):
        # One semiring product per round: candidate distances through the frontier.
        y = spmsv(block, frontier, min_plus, check=False)
        rounds += 1
        idx, cand = y.indices, y.values.astype(np.float64, copy=False)
        better = cand < dist[idx]
        idx, cand = idx[better], cand[better]
        dist[idx] = cand
        frontier = SparseVector(idx, cand, n, check=False)
    return ShortestPathsResult(source=source, distances=g.backend.to_host(dist), rounds=rounds)
