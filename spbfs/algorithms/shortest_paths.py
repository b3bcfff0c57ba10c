"""Single-source shortest paths: delta-stepping on one process, Bellman-Ford over ``min_plus``.

A :class:`~spbfs.graph.Graph` stores the structure only (BFS ignores values),
so the weights come from one of, in this order:

1. the ``weights`` argument: a scipy sparse matrix ``W`` (``W[u, v]`` is the
   weight of the edge ``u -> v``; its stored entries, explicit zeros
   included, are the weighted edges), or a block made once from it by
   :func:`weighted_block` for repeated calls (no rebuilding, no checks),
2. the graph argument itself when it is a scipy sparse matrix (its values),
3. the input edge list's ``weights`` (:attr:`spbfs.edges.EdgeList.weights`,
   e.g. a Matrix Market ``real`` file, kept on ``Graph.edges``, or a
   networkx graph's ``weight`` attribute, see :meth:`Graph.from_networkx`),
4. otherwise every edge weighs 1 (the distances are BFS levels, and
   :func:`spbfs.bfs` computes them).

On a graph held on the host, :func:`sssp` runs delta-stepping (Meyer and
Sanders, "Δ-stepping: a parallelizable shortest path algorithm"; the
light/heavy formulation of Sridhar et al., "Delta-Stepping SSSP: From
Vertices and Edges to GraphBLAS Implementations") as one compiled call
(:mod:`spbfs.kernels.sssp_numba`): a road network's thousands of buckets
would otherwise be thousands of round trips through Python. Its
``rounds`` are the non-empty buckets.

From them a weighted block ``Bw`` (``Bw[v, u] = w(u -> v)``) is built in the
graph's format and backend; for an undirected graph an edge given with two
weights keeps the smaller one, as ``scipy.sparse.csgraph`` does. On a GPU
the distances come from :func:`delta_stepping`, the same algorithm as
products on it: ``Bw`` is split once into light (``w <= Δ``) and heavy
edges, and a bucket's light edges are relaxed by ``min_plus`` products
``y = Bw_light min.+ d_F`` from the vertices that entered the bucket until
none does, then its heavy edges once. With ``max_rounds`` (or
``method='bellman-ford'``, or negative weights) they come from
:func:`bellman_ford`'s frontier rounds: each round one product
``y = Bw min.+ d_F`` over the vertices whose distance improved in the
previous round. With non-negative weights that loop ends after at most
``n - 1`` rounds.

Both loops are written once, against :mod:`spbfs.algorithms.operations`:
:func:`dist_sssp` runs them on the 2D process grid (conventions:
:mod:`spbfs.algorithms.distributed`; its distances are those of
:func:`sssp`), each product a distributed sparse SpMSV over ``min_plus`` on
the weighted blocks :func:`dist_weighted_block` builds from every rank's
share of the weighted edges. Both sides check the source and
``max_rounds`` with :func:`check_sssp_args` and the weights with
:func:`_check_weights`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse.csgraph import NegativeCycleError as _ScipyNegativeCycleError

from semirings.blocks import Block, block_from_edges
from semirings.semiring import min_plus
from spbfs.algorithms._common import (
    check_grid_call,
    check_positive_int,
    node_labels,
    prepare,
    vertex_of,
)
from spbfs.algorithms._grid import Pieces, check_graph, collective, first_by_key, route_rows
from spbfs.algorithms.operations import GridVectorOps, LocalOps, split_by_weight
from spbfs.bfs import bfs
from spbfs.config import Config
from spbfs.edges import check_vertex_ids
from spbfs.graph import Graph
from spbfs.kernels import sssp_numba
from spbfs.mpi import comm as C
from spbfs.mpi.comm import CollectiveError
from spbfs.mpi.graph import DistGraph
from spbfs.search.checks import check_vertex

__all__ = [
    "DistShortestPathsResult",
    "DistWeights",
    "NegativeCycleError",
    "ShortestPathsResult",
    "check_sssp_args",
    "dist_sssp",
    "dist_weighted_block",
    "sssp",
    "weighted_block",
]


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
        Non-empty buckets (delta-stepping), relaxation rounds (Bellman-Ford)
        or levels (unit weights, a BFS).
    labels : numpy.ndarray or None
        For a networkx graph, the node label of each position of
        ``distances`` (None otherwise).
    """

    source: int
    distances: np.ndarray
    rounds: int
    labels: np.ndarray | None = None

    def to_dict(self) -> dict[Any, float]:
        """Distance of every reachable vertex, keyed by node label (networkx input) or id.

        The keys of ``networkx.single_source_dijkstra_path_length``: unreachable
        vertices are left out.
        """
        reached = np.flatnonzero(np.isfinite(self.distances))
        keys = reached.tolist() if self.labels is None else self.labels[reached].tolist()
        return dict(zip(keys, self.distances[reached].tolist(), strict=True))

    def to_graphblas(self) -> Any:
        """The distances as a sparse ``graphblas.Vector`` (FP64), unreachable vertices left out.

        Indexed by vertex id (``labels`` maps ids to networkx labels). Needs
        python-graphblas (``pip install 'spbfs[graphblas]'``).
        """
        from spbfs.interop import to_vector

        return to_vector(self.distances, np.inf, what="ShortestPathsResult.to_graphblas")


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


def check_sssp_args(n: int, source: Any, max_rounds: Any) -> tuple[int, int | None]:
    """Check the source and the round limit of :func:`sssp` and :func:`dist_sssp`.

    Returns
    -------
    (int, int or None)
        ``source`` and ``max_rounds`` as ints (None: no limit).

    Raises
    ------
    TypeError
        For a non-integer source or ``max_rounds``.
    ValueError
        For a source outside ``0 .. n-1`` or a negative ``max_rounds``.
    """
    source = check_vertex(source, n, "source")
    if max_rounds is not None:
        max_rounds = check_positive_int(max_rounds, "max_rounds", minimum=0)
    return source, max_rounds


def _check_weights(src: np.ndarray, dst: np.ndarray, w: np.ndarray,
                   negative: bool = False) -> None:
    """No NaN weight, and (unless ``negative``) no negative one: a ValueError naming the edge."""
    bad = np.flatnonzero(np.isnan(w) | (w < 0)) if not negative else np.flatnonzero(np.isnan(w))
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
    method: str = "auto",
    delta: float | None = None,
    config: Config | None = None,
    directed: bool | None = None,
) -> ShortestPathsResult:
    """Shortest-path distances from ``source``.

    ``method='auto'`` runs delta-stepping (:mod:`spbfs.kernels.sssp_numba`,
    compiled, one pass per bucket) on a graph held on the host (numpy or
    numba backend), its loop of products (:func:`delta_stepping`) on a GPU, a
    breadth-first search where every edge weighs 1, and the Bellman-Ford
    rounds of the module docstring with ``max_rounds``, or where a weight is
    negative (the only case that needs
    them; a negative cycle raises scipy's ``NegativeCycleError``, as
    :func:`scipy.sparse.csgraph.bellman_ford` does).

    Parameters
    ----------
    graph : Graph, EdgeList, sparse matrix, networkx graph, path or (src, dst)
        The graph, converted by :func:`spbfs.as_graph` with ``config`` and ``directed``
        (see :mod:`spbfs.algorithms`). A weighted scipy matrix supplies its values
        as the weights.
    source : int or node label
        Source vertex id; for a networkx graph, the source node's label.
    weights : scipy.sparse matrix or Block, optional
        ``W[u, v]`` = weight of ``u -> v``, shape ``(n, n)``; its stored
        entries are the weighted edges. A block from :func:`weighted_block`
        is used as it is. See the module docstring for where weights come
        from when it is omitted.
    max_rounds : int, optional
        Stop after this many Bellman-Ford rounds (distances are then upper
        bounds); implies ``method='bellman-ford'``.
    method : {'auto', 'delta-stepping', 'bellman-ford'}
        The algorithm (see above).
    delta : float, optional
        Delta-stepping's bucket width (default:
        :func:`spbfs.kernels.sssp_numba.default_delta`, about the least
        positive weight).

    Returns
    -------
    ShortestPathsResult
        float64 distances, ``inf`` where unreachable; for a networkx graph
        in ``G.nodes`` order, with ``labels`` (``to_dict()`` keys them by label).

    Raises
    ------
    scipy.sparse.csgraph.NegativeCycleError
        For a negative cycle reached from ``source``: an undirected edge of
        negative weight, a negative self-loop, or a directed cycle.
    ValueError
        For an empty graph, a source out of range, a NaN weight (the message
        names the edge), ``weights`` of the wrong shape, an
        unknown ``method``, ``delta`` not positive, or delta-stepping asked
        with ``max_rounds``.
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
    if check_grid_call(graph, config, "sssp"):
        return dist_sssp(graph, source, weights=weights, max_rounds=max_rounds, method=method,
                         delta=delta)
    g = prepare(graph, config, directed, allow_empty=False)
    source, max_rounds = check_sssp_args(g.n, vertex_of(g, source), max_rounds)
    host = g.backend.name in ("numpy", "numba")
    asked, method = method, _check_method(method, max_rounds)
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
            if method != "bellman-ford":  # unit weights: the distances are BFS levels
                labels = node_labels(g)
                # bfs takes a labelled graph's source by its label
                r = bfs(g, source if labels is None else labels[source], output="levels")
                levels = g.backend.to_host(r.levels)
                dist = np.where(levels >= 0, levels, np.inf).astype(np.float64)
                return ShortestPathsResult(source=source, distances=dist, rounds=r.depth,
                                           labels=labels)
            block = g.out_block
        else:
            _check_weights(*ew, negative=True)
            if bool(np.any(ew[2] < 0)):  # only Bellman-Ford takes them
                if asked == "delta-stepping":
                    raise ValueError("method='delta-stepping' needs non-negative weights; "
                                     "'auto' runs Bellman-Ford on negative ones")
                return _negative(g, source, *ew, max_rounds)
            if method != "bellman-ford" and host:
                ptr, ind, w = _out_rows_of_edges(g, *ew)
                return _delta_result(g, source, ptr, ind, w, delta)
            block = _build_weighted(g, *ew)
    if method == "bellman-ford":
        return _bellman_ford(g, source, block, max_rounds)
    if host:
        return _delta_result(g, source, *_out_rows(block), delta)
    # A GPU: the delta-stepping loop of products, on the device.
    ops = LocalOps(g)
    dist, buckets = delta_stepping(ops, source, block, bucket_width(ops, block, delta))
    return ShortestPathsResult(source=source, distances=ops.to_host(dist), rounds=buckets,
                               labels=node_labels(g))


def _negative(g: Graph, source: int, src: Any, dst: Any, w: Any,
              max_rounds: int | None) -> ShortestPathsResult:
    """Bellman-Ford with negative weights; scipy's NegativeCycleError where a cycle is negative.

    As :func:`scipy.sparse.csgraph.bellman_ford`: an undirected edge of
    negative weight is a negative cycle (there and back), and so is a
    negative self-loop reached from the source.
    """
    neg = np.flatnonzero(w < 0)
    if not g.directed:
        k = int(neg[0])
        raise NegativeCycleError(f"Negative cycle detected on node {int(src[k])}: the "
                                 f"undirected edge {int(src[k])} -> {int(dst[k])} has weight "
                                 f"{float(w[k])} (there and back is a negative cycle)")
    r = _bellman_ford(g, source, _build_weighted(g, src, dst, w), max_rounds, cycles=True)
    loops = neg[src[neg] == dst[neg]]
    reached = loops[np.isfinite(r.distances[src[loops]])]
    if reached.size:
        raise NegativeCycleError(f"Negative cycle detected on node {int(src[reached[0]])} "
                                 f"(a self-loop of weight {float(w[reached[0]])})")
    return r


_METHODS = ("auto", "delta-stepping", "bellman-ford")


class NegativeCycleError(_ScipyNegativeCycleError, ValueError):
    """A negative cycle reached from the source: scipy's exception, and a ValueError.

    ``except scipy.sparse.csgraph.NegativeCycleError`` catches it as it
    catches scipy's own; code that treats bad weights as a ValueError does too.
    """


def _check_method(method: Any, max_rounds: int | None) -> str:
    """``method`` resolved: delta-stepping without a round limit, else Bellman-Ford."""
    if method not in _METHODS:
        raise ValueError(f"method must be one of {', '.join(map(repr, _METHODS))}, got {method!r}")
    if method == "delta-stepping" and max_rounds is not None:
        raise ValueError("method='delta-stepping' runs without max_rounds (a round is "
                         "Bellman-Ford's)")
    if method == "auto":
        return "delta-stepping" if max_rounds is None else "bellman-ford"
    return method


def _delta_result(g: Graph, source: int, ptr: Any, ind: Any, w: Any,
                  delta: float | None) -> ShortestPathsResult:
    """Delta-stepping from ``source`` over the out-rows ``(ptr, ind, w)``."""
    dist, buckets = sssp_numba.run(ptr, ind, w, np.array([0, 1]), np.array([source]),
                                   delta=delta)
    return ShortestPathsResult(source=source, distances=dist[0], rounds=buckets,
                               labels=node_labels(g))


def _out_rows(block: Block) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The out-edges of each vertex in csr from a host block of ``Bw`` (columns = tails)."""
    ptr = np.asarray(block.ptr, dtype=np.int64)
    if block.jc is not None:  # dcsc: only the non-empty columns have a pointer
        counts = np.zeros(block.shape[1], dtype=np.int64)
        counts[np.asarray(block.jc, dtype=np.int64)] = np.diff(ptr)
        ptr = np.zeros(block.shape[1] + 1, dtype=np.int64)
        np.cumsum(counts, out=ptr[1:])
    ind = np.asarray(block.ind, dtype=np.int64)
    w = np.ones(ind.shape[0]) if block.data is None else np.asarray(block.data, np.float64)
    return ptr, ind, w


def _out_rows_of_edges(g: Graph, src: Any, dst: Any,
                       w: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The out-edges of each vertex in csr (both directions of an undirected graph)."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    w = np.asarray(w, dtype=np.float64)
    if not g.directed:
        src, dst, w = np.concatenate([src, dst]), np.concatenate([dst, src]), np.concatenate([w, w])
    order = np.argsort(src, kind="stable")  # repeated edges and self-loops do no harm
    ptr = np.zeros(g.n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=g.n), out=ptr[1:])
    return ptr, dst[order], w[order]


def _bellman_ford(g: Graph, source: int, block: Block, max_rounds: int | None,
                  cycles: bool = False) -> ShortestPathsResult:
    """:func:`bellman_ford` on one process, as a result."""
    dist, rounds = bellman_ford(LocalOps(g), source, block, max_rounds, cycles=cycles)
    return ShortestPathsResult(source=source, distances=g.backend.to_host(dist), rounds=rounds,
                               labels=node_labels(g))


def _start(ops: LocalOps | GridVectorOps, source: int) -> tuple[Any, Any]:
    """Tentative distances (``inf``, 0 at the source) and the source's piece ids."""
    xp = ops.xp
    dist = xp.full(ops.size, np.inf, dtype=np.float64)
    mine = ops.lo <= source < ops.hi
    ids = xp.asarray([source - ops.lo] if mine else [], dtype=np.int64)
    dist[ids] = 0.0
    return dist, ids


def _relax(ops: LocalOps | GridVectorOps, dist: Any, ids: Any, block: Block) -> tuple[Any, Any]:
    """One ``min_plus`` product from ``ids``; keeps what improves ``dist``: (ids, values)."""
    r, v = ops.mxsv(ids, dist[ids], min_plus, "min", block=block)
    better = v < dist[r]
    r, v = r[better], v[better]
    dist[r] = v
    return r, v


def bellman_ford(ops: LocalOps | GridVectorOps, source: int, block: Block,
                 max_rounds: int | None, *, cycles: bool = False) -> tuple[Any, int]:
    """Bellman-Ford frontier rounds on one process or the grid: (distances, rounds).

    One ``min_plus`` product per round from the vertices whose distance
    improved in the previous round. ``cycles``: weights may be negative; a
    vertex still improving in round ``n`` lies on or behind a negative cycle
    (scipy's NegativeCycleError).
    """
    dist, ids = _start(ops, source)
    rounds = 0
    while max_rounds is None or rounds < max_rounds:
        if not int(ops.allsum_int(ids.shape[0])[0]):
            break
        ids, _ = _relax(ops, dist, ids, block)
        rounds += 1
        if cycles and rounds >= ops.n and ids.shape[0]:
            raise NegativeCycleError(f"Negative cycle detected on node {int(ids[0])} (it still "
                                     f"improves after {ops.n} Bellman-Ford rounds)")
    return dist, rounds


def bucket_width(ops: LocalOps | GridVectorOps, block: Block, delta: float | None) -> float:
    """``delta`` checked, or the loop of products' default: the largest finite weight.

    Each bucket of :func:`delta_stepping` costs a few collective rounds (its
    bounds, the light passes' counts, the heavy product of all its vertices),
    so the loop of products takes the widest bucket that leaves no heavy edge;
    the compiled one-process kernel, whose buckets cost nothing, takes about
    the least weight instead (:func:`~spbfs.kernels.sssp_numba.default_delta`).
    Kronecker 15 on a 2x2 grid, weights in [1, 100), load 19: Bellman-Ford
    373-520 ms, bucket width 100: 430-524 ms, 50: 836-917 ms, 4: 2.9-3.7 s,
    1 (the kernel's default): 8.7 s.
    """
    if delta is not None:
        return _check_delta(delta)
    top = 0.0
    if block.data is not None and block.nnz:
        w = ops.to_host(block.data)
        finite = w[np.isfinite(w)]
        top = float(finite.max()) if finite.size else 0.0
    top = float(ops.allmax(np.array([top]))[0])
    return top if top > 0 else 1.0


def _check_delta(delta: Any) -> float:
    if isinstance(delta, bool) or not isinstance(delta, int | float | np.floating):
        raise TypeError(f"delta must be a number, got {type(delta).__name__}")
    if not (float(delta) > 0 and np.isfinite(delta)):
        raise ValueError(f"delta must be a positive finite bucket width, got {delta}")
    return float(delta)


def delta_stepping(ops: LocalOps | GridVectorOps, source: int, block: Block,
                   delta: float) -> tuple[Any, int]:
    """Delta-stepping in the GraphBLAS formulation on one process or the grid.

    Sridhar et al.'s light/heavy form: the weighted block is split once into
    light (``w <= delta``) and heavy edges. A bucket is the vertices not yet
    settled whose tentative distance lies in ``[iΔ, (i+1)Δ)``, ``i`` from the
    least such distance (an Allreduce on the grid, shared with the last check
    of the bucket before where no heavy edge exists); its light edges are
    relaxed by masked ``min_plus`` products from the vertices that entered
    it, until none does, then its heavy edges once, from all of them.

    Returns
    -------
    (distances, buckets)
        This piece's float64 distances and the non-empty buckets processed.
    """
    xp = ops.xp
    light, heavy = (block, None) if block.data is None else split_by_weight(block, delta)
    if heavy is not None and not int(ops.allsum_int(heavy.nnz)[0]):
        heavy = None  # no heavy edge anywhere: no product of the settled vertices to make
    dist, _ = _start(ops, source)
    done = xp.zeros(ops.size, dtype=bool)
    buckets = 0
    least = 0.0  # the source's distance opens the first bucket
    while least < np.inf:
        top = (np.floor(least / delta) + 1.0) * delta
        if top <= least:  # rounding of a huge distance: the bucket still moves on
            top = least + delta
        ids = xp.flatnonzero(~done & (dist < top)).astype(np.int64)
        settled = xp.zeros(ops.size, dtype=bool)
        while True:
            if heavy is None:
                # One reduction: is the bucket still filling, and where does the next one
                # start (the least distance outside the settled vertices, exact once the
                # bucket stops filling, as no heavy edge follows)?
                rest = xp.where(done | settled, np.inf, dist)
                count, least = ops.allmin(-ids.shape[0], rest.min() if ops.size else np.inf)
                if count == 0:
                    break
            elif not int(ops.allsum_int(ids.shape[0])[0]):
                break
            settled[ids] = True
            r, v = _relax(ops, dist, ids, light)
            ids = r[v < top]  # improved inside the bucket: relaxed again
        done |= settled
        if heavy is not None:
            _relax(ops, dist, xp.flatnonzero(settled).astype(np.int64), heavy)
            rest = xp.where(done, np.inf, dist)
            least = float(ops.allmin(rest.min() if ops.size else np.inf)[0])
        buckets += 1
    return dist, buckets


# --------------------------------------------------------------------------- on the grid


@dataclass
class DistShortestPathsResult(Pieces):
    """What :func:`dist_sssp` returns on every rank.

    Attributes
    ----------
    source : int
        The source vertex.
    distances : numpy.ndarray
        float64 distances of this rank's vertices, ``inf`` where unreachable.
    rounds : int
        Non-empty buckets (delta-stepping) or Bellman-Ford rounds.
    lo, hi, n : int
        The piece and the vertex count.
    """

    source: int = 0
    distances: np.ndarray = field(default_factory=lambda: np.zeros(0))
    rounds: int = 0

    def gather(self, root: int = 0) -> ShortestPathsResult | None:
        """The whole :class:`~spbfs.algorithms.ShortestPathsResult` on ``root`` (collective)."""
        return self._assemble(root, ShortestPathsResult, {"distances": self.distances},
                              source=self.source, rounds=self.rounds)


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
    g = check_graph(g)
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
    # The weights travel bit for bit in the int64 rows.
    t, s, bits = route_rows(grid.comm, d.block_owner(t, s), [t, s, w.view(np.int64)])
    rows = d.local_rows(t, grid.i)
    cols = d.local_cols(s, grid.j)
    wv = bits.view(np.float64)
    shape = g.block.shape
    if rows.size:
        pick = first_by_key(cols * shape[0] + rows, wv)  # smallest weight per entry
        rows, cols, wv = rows[pick], cols[pick], wv[pick]
    block = block_from_edges(g.config.format, rows, cols, shape, values=wv,
                             index_dtype=g.config.index_dtype, dedup=False)
    return DistWeights(g, block)


def dist_sssp(
    g: DistGraph, source: int, *, weights: DistWeights | tuple[Any, Any, Any] | None = None,
    max_rounds: int | None = None, method: str = "auto", delta: float | None = None,
) -> DistShortestPathsResult:
    """Shortest-path distances from ``source`` on the process grid (collective).

    :func:`delta_stepping`, the loop :func:`~spbfs.algorithms.sssp` runs on a
    GPU, on the grid: per bucket, masked ``min_plus`` products over the light
    edges until the bucket stops changing, then one over the heavy edges;
    each product expands the sparse distances down the processor columns,
    multiplies the local weighted block and folds along the processor row.
    With ``max_rounds`` (or ``method='bellman-ford'``) Bellman-Ford's rounds
    instead, one product each. The distances are those of
    :func:`~spbfs.algorithms.sssp` on the same weighted edges.

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
        Stop after this many Bellman-Ford rounds (distances are then upper
        bounds).
    method : {'auto', 'delta-stepping', 'bellman-ford'}
        As :func:`~spbfs.algorithms.sssp`'s.
    delta : float, optional
        Delta-stepping's bucket width (default: about the least positive
        weight, :func:`spbfs.kernels.sssp_numba.default_delta`).

    Returns
    -------
    DistShortestPathsResult
        This rank's distances; ``gather()`` gives the
        :class:`~spbfs.algorithms.ShortestPathsResult`.

    Raises
    ------
    CollectiveError
        On every rank for a source out of range, a bad ``max_rounds``,
        ``method`` or ``delta``, or bad weights (see :func:`dist_weighted_block`).
    """
    g = check_graph(g)
    source, max_rounds = collective(g, check_sssp_args, g.n, source, max_rounds)
    method = collective(g, _check_method, method, max_rounds)
    if delta is not None:
        delta = collective(g, _check_delta, delta)
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
    ops = GridVectorOps(g)
    if method == "bellman-ford":
        dist, rounds = bellman_ford(ops, source, block, max_rounds)
    else:
        dist, rounds = delta_stepping(ops, source, block, bucket_width(ops, block, delta))
    return DistShortestPathsResult(lo=g.lo, hi=g.hi, n=g.n, _comm=g.grid.comm, source=source,
                                   distances=ops.to_host(dist), rounds=rounds)
