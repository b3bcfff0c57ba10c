"""Triangle counting: a masked ``plus_pair`` product over the degree-ordered DAG.

The undirected graph (for a directed one: its underlying undirected graph,
self-loops ignored) is oriented from lower to higher rank, rank =
(degree, id): ``D[v, u]`` for ``rank(v) < rank(u)``. Every triangle then has
exactly one edge ``(v, u)`` whose two ends both point to the third vertex
``w``, so the masked product ``C⟨D⟩ = D ⊕.⊗ Dᵀ`` over ``plus_pair`` counts
each triangle once (``C[v, u]`` = triangles closing the edge ``(v, u)``),
and the rows of high-degree vertices stay short. The kernel
(:func:`~spbfs.algorithms._ops.dag_triangles`) credits each triangle found to
its three vertices, which gives the per-vertex counts of
``networkx.triangles``.

The algorithm, :func:`count_triangles`, is written once against
:mod:`spbfs.algorithms.operations`: each process builds the DAG rows of its
own vertices, fetches the rows of their out-neighbours owned elsewhere (each
row once per process, one request/reply round), runs the kernel on its own
rows against that table, and sends the credits of the fetched vertices to
their owners. On one process there is nothing to fetch or send: the kernel
runs on the whole DAG. :func:`dist_triangle_count` runs it on the process
grid (conventions: :mod:`spbfs.algorithms.distributed`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spbfs.algorithms._common import check_grid_call, prepare
from spbfs.algorithms._grid import Pieces, check_graph
from spbfs.algorithms._ops import dag_triangles, segments
from spbfs.algorithms.operations import GridVectorOps, LocalOps
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
    if g.n == 0:
        return TriangleCount(0, np.zeros(0, dtype=np.int64))
    per_vertex, total = count_triangles(LocalOps(g))
    return TriangleCount(total=total, per_vertex=g.backend.to_host(per_vertex))


def count_triangles(ops: LocalOps | GridVectorOps) -> tuple[Any, int]:
    """Triangles through this piece's vertices, on one process or the grid.

    See the module's description. Only the rows of this piece's vertices and
    those fetched for their out-neighbours are held, in local ids: this
    piece's vertices by rank, then the fetched vertices by id.

    Returns
    -------
    per_vertex, total
        int64 triangles through each vertex of the piece (an ``xp`` array), and
        the number of triangles of the graph.
    """
    xp, n, lo, hi, k = ops.xp, ops.n, ops.lo, ops.hi, ops.size
    vector = ops.backend.name != "numba"  # whole-array kernel: sorted columns too
    a, u = ops.undirected_edges()
    if lo:
        a -= lo
    # Rank (degree, id) as one int64 key: D keeps the edges pointing to a higher rank.
    rank = xp.bincount(a, minlength=k).astype(np.int64) * n + xp.arange(lo, hi, dtype=np.int64)
    out = rank[a] < ops.lookup(rank, u)
    a, u = a[out], u[out]
    del out
    # Local ids: this piece's vertices by rank (the hubs, which most rows reach, get
    # neighbouring ids), then the out-neighbours owned elsewhere, by id.
    by_rank = xp.argsort(rank, kind="stable")
    del rank
    local = xp.empty(k, dtype=np.int64)
    local[by_rank] = xp.arange(k, dtype=np.int64)
    lv = local[a]
    del a
    if k == n:  # one process: every vertex is this piece's
        far = xp.zeros(0, dtype=np.int64)
        lu = local[u]
    else:
        far = xp.unique(u[(u < lo) | (u >= hi)])
        lu = _local_ids(xp, u, local, far, lo, hi)
    del u
    m = k + far.shape[0]
    order = xp.argsort(lv * m + lu if vector else lv, kind="stable")
    ind = lu[order]
    ptr = xp.zeros(m + 1, dtype=np.int64)
    xp.cumsum(xp.bincount(lv, minlength=k), out=ptr[1:k + 1])
    del lv, lu, order
    gid = xp.concatenate([by_rank + lo, far])  # global id of each local id

    def answer(asked: Any) -> tuple[Any, Any]:
        # The rows of this piece's vertices ``asked``, in global ids.
        r = local[asked - lo]
        lengths = ptr[r + 1] - ptr[r]
        return lengths, gid[ind[segments(xp, lengths, ptr[r])[1]]]

    # The rows of the out-neighbours owned elsewhere, each fetched once: the table's
    # rows k .. m-1.
    got, lengths, w = ops.request(far, answer)
    row = k + xp.searchsorted(far, got)[segments(xp, lengths)[0]]
    lw = _local_ids(xp, w, local, far, lo, hi)
    keep = lw >= 0  # entries outside the local ids close no triangle here
    row, lw = row[keep], lw[keep]
    if lw.shape[0]:
        ind = xp.concatenate([ind, lw[xp.argsort(row * m + lw if vector else row,
                                                 kind="stable")]])
        xp.cumsum(xp.bincount(row - k, minlength=m - k), out=ptr[k + 1:])
    ptr[k + 1:] += ptr[k]
    counts = dag_triangles(ptr, ind, m, ops.backend, rows=k)
    per_vertex = counts[local]
    # The credits of the fetched vertices, to their owners.
    sent = xp.flatnonzero(counts[k:])
    to, c = ops.route_rows([far[sent], counts[k:][sent]])
    if to.shape[0]:  # float64 sums are exact: far below 2**53 triangles at a vertex
        per_vertex += xp.bincount(to - lo, weights=c, minlength=k).astype(np.int64)
    total = int(ops.allsum_int(int(per_vertex.sum()))[0]) // 3
    return per_vertex, total


def _local_ids(xp: Any, w: Any, local: Any, far: Any, lo: int, hi: int) -> Any:
    """Local ids of the global ids ``w``: this piece's by ``local``, the others by their
    place in the sorted ``far`` after ``local``'s; -1 where ``w`` is neither."""
    k = local.shape[0]
    mine = (w >= lo) & (w < hi)
    out = xp.full(w.shape[0], -1, dtype=np.int64)
    out[mine] = local[w[mine] - lo]
    if far.shape[0]:
        at = xp.minimum(xp.searchsorted(far, w), far.shape[0] - 1)
        there = ~mine & (far[at] == w)
        out[there] = k + at[there]
    return out


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

    The triangles of :func:`~spbfs.algorithms.triangle_count`, by the same
    algorithm (:func:`count_triangles`) and kernel: the graph is oriented
    from lower to higher rank, rank = (degree, id), and every triangle is
    found once, at its lowest-ranked vertex, by the masked ``plus_pair``
    product of the DAG with its transpose. It works on the 1D vector
    distribution: every rank collects the edges of its own vertices from the
    block it stores (one Alltoallv, both directions), asks the owners for its
    neighbours' degrees (one lookup), builds its vertices' DAG rows, fetches
    the rows of their out-neighbours owned elsewhere (one request/reply
    round, each row once per rank), runs the kernel on its rows against
    them and sends the credits of the fetched vertices to their owners (one
    Alltoallv). A rank holds its edges, its rows and the rows it fetched;
    traffic is those rows, not the ``O(sum of d⁺(v)²)`` wedges.

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
    ops = GridVectorOps(g)
    per_vertex, total = count_triangles(ops)
    return DistTriangleCount(lo=g.lo, hi=g.hi, n=g.n, _comm=g.grid.comm, total=total,
                             per_vertex=ops.to_host(per_vertex))
