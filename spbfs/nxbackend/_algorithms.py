"""The networkx functions the spbfs backend implements, with networkx's signatures.

Each function takes an :class:`~spbfs.nxbackend._convert.SpbfsGraph` and
the arguments networkx's function takes (``backend=`` removed by the
dispatcher), runs the spbfs algorithm on the converted graph, and returns
what networkx returns: the same types (Python ``int``/``float``, never numpy
scalars; dicts, sets, lists, generators), keyed by node label, in
networkx's order.

**Order.** The searches of :mod:`spbfs` pick a vertex's parent as the
smallest frontier vertex reaching it; networkx's pick the first in its
queue, which depends on the adjacency dicts' insertion order. Where the
output order is part of the result, one source's searches
(``bfs_edges``, ``bfs_tree``, ``single_source_shortest_path_length``,
``shortest_path_length``) run a compiled queue search over the rows in
networkx's order (:func:`_queue_into`), which yields networkx's order
itself at a cost proportional to the part of the graph reached: a source
that reaches a few dozen vertices of a scale-free graph costs
microseconds, where the direction-optimizing search and an ordering pass
cost O(n) per level. ``bfs_layers`` from many sources takes the levels from
spbfs and one vectorized pass over the reached vertices' out-edges
(:func:`_ordered_levels`) puts each level in networkx's discovery order: a
vertex at level ``d + 1`` is discovered by the first level-``d`` vertex, in
that level's order, whose adjacency row (in networkx's order) holds it.

**Fallback.** Arguments the backend does not cover are refused up front
by :func:`can_run` (networkx then runs); data it cannot take as it is
(negative, infinite or non-numeric weights, a source that is no node, so
that networkx raises its own exception) raise :class:`Fallback`, and the
backend interface runs networkx's own function on the original graph.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numba as nb
import numpy as np

import spbfs.algorithms as alg
from spbfs.bfs import bfs
from spbfs.edges import EdgeList
from spbfs.graph import Graph
from spbfs.kernels.components_numba import dfs_strong_labels, unsigned
from spbfs.kernels.ranking_numba import level_queue
from spbfs.nxbackend._convert import Adjacency, SpbfsGraph, UnsupportedWeights

__all__ = ["FAST_ON_SMALL_GRAPHS", "IMPLEMENTED", "Fallback", "can_run"]


class Fallback(Exception):
    """Raised by an implementation to have networkx's own function run instead."""


# ------------------------------------------------ shared by the functions below


def _depth(limit: Any) -> int | None:
    """Levels networkx expands for a ``depth_limit``/``cutoff`` (``depth < limit`` loops)."""
    if limit is None:
        return None
    if isinstance(limit, float) and math.isinf(limit):
        return None if limit > 0 else 0
    return max(0, math.ceil(limit))


def _vertex(G: SpbfsGraph, node: Any) -> int:
    """The id of ``node``; :class:`Fallback` when it is no node (networkx raises its error)."""
    try:
        return G.index[node]
    except (KeyError, TypeError):
        raise Fallback(f"{node!r} is not a node") from None


def _levels(G: SpbfsGraph, source: int, reverse: bool, max_depth: int | None) -> np.ndarray:
    """Hop distances from ``source`` by spbfs's BFS (``-1`` unreached)."""
    g = G.graph()
    reverse = bool(reverse) and G.is_directed()
    return bfs(g, source, output="levels", max_depth=max_depth, reverse=reverse).levels


def _ordered_levels(adj: Adjacency, first: np.ndarray, levels: np.ndarray,
                    ) -> list[tuple[np.ndarray, np.ndarray]]:
    """Every level in networkx's discovery order, with the parent of each vertex.

    Parameters
    ----------
    adj : Adjacency
        The rows the search follows, in networkx's order.
    first : numpy.ndarray
        Level 0 in its order.
    levels : numpy.ndarray
        Hop distance of each vertex (``-1`` unreached), from spbfs.

    Returns
    -------
    list of (vertices, parents)
        Level ``d``'s vertices in discovery order and their BFS parents
        (level 0: the sources, parents ``-1``).
    """
    out = [(first, np.full(first.shape[0], -1, dtype=np.int64))]
    frontier = first
    d = 0
    deepest = int(levels.max()) if levels.size else -1
    while d < deepest and frontier.size:
        starts = adj.indptr[frontier]
        lens = adj.indptr[frontier + 1] - starts
        total = int(lens.sum())
        if total == 0:
            break
        # Positions of the frontier's rows, concatenated in frontier order.
        offs = np.repeat(starts - (np.cumsum(lens) - lens), lens) + np.arange(total)
        tgt = adj.nbr[offs]
        par = np.repeat(frontier, lens)
        keep = levels[tgt] == d + 1
        tgt, par = tgt[keep], par[keep]
        _, firsts = np.unique(tgt, return_index=True)
        firsts.sort()
        frontier = tgt[firsts]
        out.append((frontier, par[firsts]))
        d += 1
    return out


def _labels(G: SpbfsGraph, ids: np.ndarray | list[int]) -> list[Any]:
    if isinstance(ids, np.ndarray):
        ids = ids.tolist()
    if G.labels_are_ids:
        return ids
    nodes = G.nodes
    return [nodes[k] for k in ids]


def _check_weights(w: np.ndarray) -> None:
    """Dijkstra in spbfs (min_plus relaxation) needs finite weights >= 0."""
    if w.dtype.kind == "f" and not np.isfinite(w).all():
        raise Fallback("infinite or NaN weights")
    if w.size and w.min() < 0:
        raise Fallback("negative weights")


def _weights(G: SpbfsGraph, weight: Any, combine: str = "min",
             reverse: bool = False) -> np.ndarray:
    try:
        return G.weights(weight, combine, reverse)
    except UnsupportedWeights as exc:
        raise Fallback(str(exc)) from None


def _distances(G: SpbfsGraph, source: int, weight: Any, reverse: bool = False) -> np.ndarray:
    """Weighted distances from ``source`` by spbfs's sssp (``inf`` unreachable)."""
    reverse = bool(reverse) and G.is_directed()
    _check_weights(_weights(G, weight, "min", reverse))
    g = G.graph(reverse)

    def make() -> Any:
        return alg.weighted_block(g, G.weight_matrix(weight, "min", reverse))

    block = G.cached(("block", weight, reverse), make)
    return alg.sssp(g, source, weights=block).distances


def _as_number(values: np.ndarray, integral: bool) -> list[Any]:
    return values.astype(np.int64).tolist() if integral else values.tolist()


def _dijkstra_dict(G: SpbfsGraph, source: int, weight: Any, cutoff: Any = None,
                   reverse: bool = False) -> dict[Any, Any]:
    dist = _distances(G, source, weight, reverse)
    integral = G.weights(weight, "min", reverse and G.is_directed()).dtype.kind == "i"
    ok = np.isfinite(dist)
    if cutoff is not None:
        ok &= dist <= cutoff
    ids = np.flatnonzero(ok)
    # networkx's dict is in the order vertices are settled: by distance.
    ids = ids[np.argsort(dist[ids], kind="stable")]
    out = dict(zip(_labels(G, ids), _as_number(dist[ids], integral), strict=True))
    out[G.nodes[source]] = 0  # networkx's source distance is the int 0
    return out


@nb.njit(cache=True, nogil=True)
def _queue_into(indptr, nbr, source, depth, tree, level, order, out):  # type: ignore[no-untyped-def]
    """networkx's breadth-first search: the vertices reached, in its order, into
    ``order[:tail]``, and their parents (``tree``) or levels into ``out[:tail]``;
    returns ``tail``.

    The queue takes each row in stored order and a vertex at its first
    discovery, as networkx's ``_single_shortest_path_length`` and
    ``generic_bfs_edges`` do (:func:`~spbfs.kernels.ranking_numba.level_queue`);
    vertices at level ``depth`` are reached but not expanded. ``level`` holds -1
    on entry and again on return: the work is the rows of the vertices reached,
    with no pass over all ``n``.
    """
    tail = level_queue(indptr, nbr, level, order, source, depth, out if tree else out[:0])
    for i in range(tail):
        v = order[i]
        if not tree:
            out[i] = level[v]
        level[v] = -1
    return tail


def _queue(adj: Adjacency, source: int, depth: int, tree: bool,
           start: int = 0) -> tuple[list[int], list[int]]:
    """:func:`_queue_into` on scratch arrays of ``adj``: the ids reached in networkx's
    order and their parents (``tree``) or levels, as lists from the ``start``-th reached
    (0: the source)."""
    if adj.scratch:
        arrays = adj.scratch.pop()
    else:
        n = adj.indptr.shape[0] - 1
        arrays = (np.full(n, -1, np.int64), np.empty(n, np.int64), np.empty(n, np.int64))
    level, order, out = arrays
    tail = _queue_into(adj.indptr, adj.nbr, source, depth, tree, level, order, out)
    ids, values = order[start:tail].tolist(), out[start:tail].tolist()
    adj.scratch.append(arrays)  # not reached after an error: a level array left dirty
    return ids, values


def _bfs_dict(G: SpbfsGraph, source: int, cutoff: Any = None,
              reverse: bool = False) -> dict[Any, int]:
    """networkx's ``{node: hops}`` from ``source`` in its order (:func:`_queue_into`)."""
    depth = _depth(cutoff)
    ids, levels = _queue(G.adjacency(reverse), source, G.n if depth is None else depth, False)
    return dict(zip(_labels(G, ids), levels, strict=True))


# -------------------------------------------------------------------- traversal


def bfs_edges(G: SpbfsGraph, source: Any, reverse: bool = False, depth_limit: Any = None,
              sort_neighbors: Any = None) -> Iterator[tuple[Any, Any]]:
    """``networkx.bfs_edges``: tree edges in networkx's order (an iterator)."""
    s = _vertex(G, source)
    adj = G.adjacency(reverse)
    depth = _depth(depth_limit)
    # One compiled queue in networkx's order: its tree edges come out as networkx
    # yields them, where levels from spbfs's search needed a reordering pass per level
    # (0.8x networkx on a 141 x 141 grid).
    ids, par = _queue(adj, s, G.n if depth is None else depth, True, start=1)
    # An iterator as networkx's generator is, without a generator frame per edge (1-2 µs of
    # a karate search listed).
    return zip(_labels(G, par), _labels(G, ids), strict=True)


def bfs_tree(G: SpbfsGraph, source: Any, reverse: bool = False, depth_limit: Any = None,
             sort_neighbors: Any = None) -> Any:
    """``networkx.bfs_tree``: the BFS tree as a ``networkx.DiGraph``."""
    import networkx as nx

    edges = list(bfs_edges(G, source, reverse, depth_limit))
    t = nx.DiGraph()
    t.add_node(source)
    t.add_edges_from(edges)
    return t


def bfs_layers(G: SpbfsGraph, sources: Any) -> Iterator[list[Any]]:
    """``networkx.bfs_layers``: lists of nodes, one per distance from ``sources``."""
    if sources in G:
        sources = [sources]
    first = np.array([_vertex(G, s) for s in list(set(sources))], dtype=np.int64)
    if first.size == 0:
        return iter([])
    if first.size == 1:
        levels = _levels(G, int(first[0]), False, None)
    elif first.size <= _MSBFS_SOURCES:
        lv = alg.multi_source_bfs(G.graph(), np.unique(first), output="levels").levels
        lv = np.where(lv < 0, np.iinfo(np.int64).max, lv).min(axis=0)
        levels = np.where(lv == np.iinfo(np.int64).max, -1, lv)
    else:
        levels = _levels_from_many(G, first)
    ordered = _ordered_levels(G.adjacency(), first, levels)
    return iter([_labels(G, ids) for ids, _ in ordered])


#: Up to this many sources, bfs_layers takes the levels from one multi-source BFS
#: (memory: a row of n levels per source); beyond, from one search of a new vertex
#: joined to every source.
_MSBFS_SOURCES = 64


def _levels_from_many(G: SpbfsGraph, first: np.ndarray) -> np.ndarray:
    """Hop distance to the nearest of many sources: a BFS from an extra vertex ``n``."""
    a = G.adjacency()
    n = G.n
    src = np.concatenate([a.src, np.full(first.shape[0], n, np.int64)])
    dst = np.concatenate([a.nbr, first])
    edges = EdgeList(src, dst, n + 1, directed=True)
    g = Graph.from_edgelist(edges, config=G.config)
    levels = bfs(g, n, output="levels").levels[:n]
    return np.where(levels > 0, levels - 1, -1)


def descendants_at_distance(G: SpbfsGraph, source: Any, distance: Any) -> set[Any]:
    """``networkx.descendants_at_distance``: the nodes exactly ``distance`` hops away."""
    s = _vertex(G, source)
    if isinstance(distance, bool) or not isinstance(distance, int | np.integer):
        raise Fallback("a distance that is not an integer")
    if distance < 0:
        return set()
    levels = _levels(G, s, False, int(distance))
    return set(_labels(G, np.flatnonzero(levels == distance)))


# -------------------------------------------------------------------- shortest paths


def single_source_shortest_path_length(G: SpbfsGraph, source: Any,
                                       cutoff: Any = None) -> dict[Any, int]:
    """``networkx.single_source_shortest_path_length``, keys in networkx's order."""
    return _bfs_dict(G, _vertex(G, source), cutoff)


def single_source_dijkstra_path_length(G: SpbfsGraph, source: Any, cutoff: Any = None,
                                       weight: Any = "weight") -> dict[Any, Any]:
    """``networkx.single_source_dijkstra_path_length`` by spbfs's min_plus sssp."""
    return _dijkstra_dict(G, _vertex(G, source), weight, cutoff)


def shortest_path_length(G: SpbfsGraph, source: Any = None, target: Any = None,
                         weight: Any = None, method: str = "dijkstra") -> Any:
    """``networkx.shortest_path_length`` (unweighted, Dijkstra, Bellman-Ford without negatives)."""
    if method not in ("dijkstra", "bellman-ford"):
        raise Fallback(f"method {method!r}")  # networkx raises its ValueError
    weighted = weight is not None
    if weighted:
        _check_weights(_weights(G, weight))
    if source is None and target is None:
        nodes = G.nodes

        def pairs() -> Iterator[tuple[Any, dict[Any, Any]]]:
            for k, node in enumerate(nodes):
                yield node, (_dijkstra_dict(G, k, weight) if weighted else _bfs_dict(G, k))

        return pairs()
    if source is None:
        t = _vertex(G, target)
        if weighted:
            return _dijkstra_dict(G, t, weight, reverse=True)
        return _bfs_dict(G, t, reverse=True)
    s = _vertex(G, source)
    if target is None:
        return _dijkstra_dict(G, s, weight) if weighted else _bfs_dict(G, s)
    t = _vertex(G, target)
    if weighted:
        dist = _distances(G, s, weight)
        if not np.isfinite(dist[t]):
            raise Fallback("no path")  # networkx raises NetworkXNoPath
        integral = G.weights(weight, "min").dtype.kind == "i"
        return int(dist[t]) if integral else float(dist[t])
    res = bfs(G.graph(), s, output="levels", target=t)
    if res.levels[t] < 0:
        raise Fallback("no path")
    return int(res.levels[t])


# -------------------------------------------------------------------- components


def _components(G: SpbfsGraph, connection: str = "weak") -> alg.ComponentsResult:
    """spbfs's components of ``G`` (compiled kernels; labels numbered by smallest id)."""
    return alg.connected_components(G.graph(), connection=connection)


def _component_sets(G: SpbfsGraph, connection: str) -> Iterator[set[Any]]:
    """The components as node sets, in networkx's order.

    Weak: in the order of their first node in ``G``. Strong: in the order
    networkx's search completes them (its search, compiled, over the
    adjacency in networkx's order), which ``networkx.condensation`` numbers
    its nodes by.
    """
    if G.n == 0:
        return iter([])
    if connection == "strong":
        adj = G.adjacency()
        labels, _ = dfs_strong_labels(unsigned(adj.indptr), unsigned(adj.nbr))
    else:
        labels = _components(G, connection).labels
    order = np.argsort(labels, kind="stable")
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    nodes = G.nodes
    return iter([{nodes[k] for k in part.tolist()} for part in np.split(order, cuts)])


def _count(G: SpbfsGraph, connection: str) -> int:
    return 0 if G.n == 0 else int(_components(G, connection).n_components)


def _one(G: SpbfsGraph, connection: str) -> bool:
    if G.n == 0:
        raise Fallback("empty graph")  # networkx raises NetworkXPointlessConcept
    return _count(G, connection) == 1


def connected_components(G: SpbfsGraph) -> Iterator[set[Any]]:
    """``networkx.connected_components``: sets, in the order of their first node in ``G``."""
    return _component_sets(G, "weak")


def number_connected_components(G: SpbfsGraph) -> int:
    """``networkx.number_connected_components``."""
    return _count(G, "weak")


def is_connected(G: SpbfsGraph) -> bool:
    """``networkx.is_connected`` (networkx raises for an empty graph)."""
    return _one(G, "weak")


def weakly_connected_components(G: SpbfsGraph) -> Iterator[set[Any]]:
    """``networkx.weakly_connected_components``: sets, in the order of their first node."""
    return _component_sets(G, "weak")


def number_weakly_connected_components(G: SpbfsGraph) -> int:
    """``networkx.number_weakly_connected_components``."""
    return _count(G, "weak")


def is_weakly_connected(G: SpbfsGraph) -> bool:
    """``networkx.is_weakly_connected`` (networkx raises for an empty graph)."""
    return _one(G, "weak")


def strongly_connected_components(G: SpbfsGraph) -> Iterator[set[Any]]:
    """``networkx.strongly_connected_components``: sets, in networkx's order."""
    return _component_sets(G, "strong")


def number_strongly_connected_components(G: SpbfsGraph) -> int:
    """``networkx.number_strongly_connected_components``."""
    return _count(G, "strong")


def is_strongly_connected(G: SpbfsGraph) -> bool:
    """``networkx.is_strongly_connected`` (networkx raises for an empty graph)."""
    return _one(G, "strong")


# -------------------------------------------------------------------- ranking, centrality


def pagerank(G: SpbfsGraph, alpha: float = 0.85, personalization: Any = None,
             max_iter: int = 100, tol: float = 1.0e-6, nstart: Any = None,
             weight: Any = "weight", dangling: Any = None) -> dict[Any, float]:
    """``networkx.pagerank`` (uniform teleport and dangling weights) by spbfs's SpMV."""
    import networkx as nx

    if G.n == 0:
        return {}
    w = _weights(G, weight, "sum")
    if w.dtype.kind == "f" and not np.isfinite(w).all():
        raise Fallback("infinite or NaN weights")
    res = alg.pagerank(G.graph(), alpha=alpha, tol=tol, max_iter=max_iter,
                      weights=G.weight_matrix(weight, "sum"))
    if not res.converged:
        raise nx.PowerIterationFailedConvergence(max_iter)
    return dict(zip(G.nodes, res.scores.tolist(), strict=True))


def betweenness_centrality(G: SpbfsGraph, k: Any = None, normalized: bool = True,
                           weight: Any = None, endpoints: bool = False,
                           seed: Any = None) -> dict[Any, float]:
    """``networkx.betweenness_centrality`` (unweighted, ``endpoints=False``) by Brandes."""
    n = G.n
    if n == 0:
        return {}
    sources = None
    if k is not None and k != n:
        if isinstance(k, bool) or not isinstance(k, int) or not 0 < k < n:
            raise Fallback(f"k={k!r}")
        # networkx's own draw (seed is its random.Random here), so the sample is the same.
        sources = np.array([G.index[v] for v in seed.sample(list(G.nodes), k)], np.int64)
    bc = alg.betweenness_centrality(G.graph(), sources=sources, normalized=bool(normalized))
    return dict(zip(G.nodes, bc.tolist(), strict=True))


def triangles(G: SpbfsGraph, nodes: Any = None) -> Any:
    """``networkx.triangles``: per-node counts (a dict, or an int for one node)."""
    if nodes is not None and G.is_multigraph():
        raise Fallback("nodes given for a multigraph")  # networkx refuses it
    if G.n == 0:
        return {} if nodes is None or nodes not in G else 0
    per = alg.triangle_count(G.graph()).per_vertex
    if nodes is None:
        return dict(zip(G.nodes, per.tolist(), strict=True))
    if nodes in G:
        return int(per[G.index[nodes]])
    return {v: int(per[G.index[v]]) for v in G.nx.nbunch_iter(nodes)}


#: What the backend implements, by networkx's function name.
IMPLEMENTED = {
    f.__name__: f
    for f in (
        bfs_edges, bfs_tree, bfs_layers, descendants_at_distance,
        single_source_shortest_path_length, single_source_dijkstra_path_length,
        shortest_path_length, connected_components, number_connected_components,
        is_connected, weakly_connected_components, number_weakly_connected_components,
        is_weakly_connected, strongly_connected_components,
        number_strongly_connected_components, is_strongly_connected,
        pagerank, betweenness_centrality, triangles,
    )
}

#: The functions faster than networkx's own on small graphs too, once the graph is
#: converted (``python benchmarks/networkx_backend.py --small``: karate, a 10-vertex path,
#: both directed too). A call forced to the backend on a graph below ``min_edges``
#: runs them from its second call on; the others are networkx's there.
FAST_ON_SMALL_GRAPHS = frozenset({
    "bfs_edges", "bfs_tree", "shortest_path_length", "number_connected_components",
    "is_connected", "number_weakly_connected_components", "is_weakly_connected",
    "single_source_shortest_path_length",
    "number_strongly_connected_components", "is_strongly_connected", "pagerank",
    "betweenness_centrality",
})


# -------------------------------------------------------------------- can_run


def _number(x: Any) -> bool:
    return not isinstance(x, bool) and isinstance(x, int | float | np.integer | np.floating)


def _weight_ok(weight: Any) -> bool | str:
    if weight is None or isinstance(weight, str):
        return True
    return "weight is a function; only attribute names (or None) are supported"


def can_run(name: str, bound: dict[str, Any]) -> bool | str:
    """Whether the backend takes these arguments of ``name`` (True, or the reason it does not).

    ``bound`` maps every parameter of networkx's function to its value.
    """
    if name in ("bfs_edges", "bfs_tree"):
        if bound["sort_neighbors"] is not None:
            return "sort_neighbors is given"
        if bound["depth_limit"] is not None and not _number(bound["depth_limit"]):
            return "depth_limit is not a number"
    elif name == "single_source_shortest_path_length":
        if bound["cutoff"] is not None and not _number(bound["cutoff"]):
            return "cutoff is not a number"
    elif name == "single_source_dijkstra_path_length":
        if bound["cutoff"] is not None and not _number(bound["cutoff"]):
            return "cutoff is not a number"
        return _weight_ok(bound["weight"])
    elif name == "shortest_path_length":
        return _weight_ok(bound["weight"])
    elif name == "pagerank":
        for arg in ("personalization", "nstart", "dangling"):
            if bound[arg] is not None:
                return f"{arg} is given"
        a, tol, it = bound["alpha"], bound["tol"], bound["max_iter"]
        if not (_number(a) and 0 <= a <= 1 and _number(tol) and tol > 0):
            return "alpha outside [0, 1] or tol <= 0"
        if isinstance(it, bool) or not isinstance(it, int | np.integer) or it < 1:
            return "max_iter is not a positive integer"
        return _weight_ok(bound["weight"])
    elif name == "betweenness_centrality":
        if bound["weight"] is not None:
            return "weighted betweenness"
        if bound["endpoints"]:
            return "endpoints=True"
    return True
