"""Triangle counting: a masked ``plus_pair`` product over the degree-ordered DAG.

The undirected graph (for a directed one: its underlying undirected graph,
self-loops ignored) is relabelled by rank, rank = (degree, id), and oriented
from lower to higher rank: ``D[v, u]`` for ``rank(v) < rank(u)``. Every triangle then has exactly
one edge ``(v, u)`` whose two ends both point to the third vertex ``w``, so
the masked product ``C⟨D⟩ = D ⊕.⊗ Dᵀ`` over ``plus_pair`` counts each
triangle once (``C[v, u]`` = triangles closing the edge ``(v, u)``), and the
rows of high-degree vertices stay short. The kernel
(:func:`~spbfs.algorithms._ops.dag_triangles`) credits each triangle found to
its three vertices, which gives the per-vertex counts of
``networkx.triangles``.

:func:`dist_triangle_count` counts the same triangles on the process grid
(conventions: :mod:`spbfs.algorithms.distributed`), with the same
orientation, as wedge queries sent to the vertex owners.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spbfs.algorithms._common import check_grid_call, prepare, symmetric_block
from spbfs.algorithms._grid import Pieces, check_graph
from spbfs.algorithms._ops import dag_triangles
from spbfs.algorithms.operations import GridVectorOps
from spbfs.config import Config
from spbfs.mpi.graph import DistGraph

__all__ = ["DistTriangleCount", "TriangleCount", "dist_triangle_count", "triangle_count"]


@dataclass
class TriangleCount:
    """What :func:`triangle_count` returns.

    Attributes
    ----------
    total : int
        Number of triangles in the graph.
    per_vertex : numpy.ndarray
        int64 number of triangles through each vertex (``networkx.triangles``);
        sums to ``3 * total``.
    """

    total: int
    per_vertex: np.ndarray


def triangle_count(
    graph: Any, *, config: Config | None = None, directed: bool | None = None
) -> TriangleCount:
    """Count the triangles of the (underlying undirected) graph.

    Parameters
    ----------
    graph : Graph, EdgeList, sparse matrix, networkx graph, path or (src, dst)
        The graph, converted by :func:`spbfs.as_graph` with ``config`` and ``directed``
        (see :mod:`spbfs.algorithms`). Edge directions and self-loops are ignored.

    Returns
    -------
    TriangleCount
        The total and the per-vertex counts.

    Examples
    --------
    >>> import spbfs
    >>> from spbfs.algorithms import triangle_count
    >>> g = spbfs.Graph.from_edges([0, 1, 2, 2], [1, 2, 0, 3])
    >>> tc = triangle_count(g)
    >>> tc.total, tc.per_vertex.tolist()
    (1, [1, 1, 1, 0])
    """
    if check_grid_call(graph, config, "triangle_count"):
        return dist_triangle_count(graph)
    g = prepare(graph, config, directed, weight=None)
    n = g.n
    if n == 0:
        return TriangleCount(0, np.zeros(0, dtype=np.int64))
    block = symmetric_block(g)
    be = block.backend
    xp = be.xp
    cols = block.column_ids().astype(np.int64)
    rows = block.ind.astype(np.int64)
    deg = xp.bincount(cols, minlength=n)
    # Relabel vertices by rank (degree, then id): D keeps the entries pointing to a
    # higher label, and the hubs, which most rows reach, get neighbouring labels.
    order = xp.argsort(deg * n + xp.arange(n, dtype=np.int64), kind="stable")
    rank = xp.empty(n, dtype=np.int64)
    rank[order] = xp.arange(n, dtype=np.int64)
    rc, rr = rank[cols], rank[rows]
    keep = rc < rr
    rc, rr = rc[keep], rr[keep]
    # Rows of D in label order; the whole-array kernel also needs sorted columns.
    key = rc if be.name == "numba" else rc * n + rr
    sort = xp.argsort(key, kind="stable")
    rc, rr = rc[sort], rr[sort]
    ptr = xp.zeros(n + 1, dtype=np.int64)
    xp.cumsum(xp.bincount(rc, minlength=n), out=ptr[1:])
    by_rank = dag_triangles(ptr, rr, n, be)
    per_vertex = be.to_host(by_rank[rank])
    return TriangleCount(total=int(per_vertex.sum()) // 3, per_vertex=per_vertex)


# --------------------------------------------------------------------------- on the grid


@dataclass
class DistTriangleCount(Pieces):
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
        return self._assemble(root, TriangleCount, {"per_vertex": self.per_vertex},
                              total=self.total)


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
    g = check_graph(g)
    grid, d = g.grid, g.dist
    comm = grid.comm
    ops = GridVectorOps(g)
    xp = ops.xp
    n, lo, size = g.n, g.lo, ops.size
    # Adjacency lists of this rank's vertices, both directions, without duplicates.
    rows = d.global_rows(np.asarray(g.block.ind, dtype=np.int64), grid.i)
    cols = d.global_cols(np.asarray(g.block.column_ids(), dtype=np.int64), grid.j)
    a = np.concatenate([rows, cols])
    b = np.concatenate([cols, rows])
    a, b = ops.route_rows([a, b])
    key = xp.unique(a * n + b)  # sorted: by vertex, then neighbour
    a, b = key // n, key % n
    deg = xp.bincount(a - lo, minlength=size).astype(np.int64)
    # Rank of every neighbour: (degree, id), as one int64 key.
    rk_b = ops.lookup(deg, b) * n + b
    rk_a = deg[a - lo] * n + a
    out = rk_a < rk_b
    v, u, rk_u = a[out], b[out], rk_b[out]
    # Out-lists of the DAG sorted by rank: pairs (u, w) of one list with rank u < rank w.
    order = xp.lexsort(xp.stack([rk_u, v]))
    v, u = v[order], u[order]
    m = v.shape[0]
    ends = xp.searchsorted(v, v, side="right") if m else xp.zeros(0, np.int64)
    after = (ends - xp.arange(m) - 1).astype(np.int64)  # later entries of the same list
    total = int(after.sum())
    first = xp.repeat(xp.arange(m, dtype=np.int64), after)
    starts = xp.cumsum(after) - after
    second = xp.arange(total, dtype=np.int64) - starts[first] + first + 1
    # The owner of u checks the closing edge u - w in its adjacency lists.
    qu, qw, qv = ops.route_rows([u[first], u[second], v[first]])
    probe = qu * n + qw
    at = xp.minimum(xp.searchsorted(key, probe), max(key.shape[0] - 1, 0))
    hit = key[at] == probe if key.shape[0] else xp.zeros(probe.shape[0], dtype=bool)
    (got,) = ops.route_rows([xp.concatenate([qv[hit], qu[hit], qw[hit]])])
    per_vertex = ops.to_host(xp.bincount(got - lo, minlength=size).astype(np.int64))
    found = int(ops.allsum_int(hit.sum())[0])
    return DistTriangleCount(lo=lo, hi=g.hi, n=n, _comm=comm, total=found,
                             per_vertex=per_vertex)
