"""Semiring graph algorithms beyond BFS, on the same blocks and kernels.

Each algorithm is a short driver loop whose core step is one semiring
product on the graph's block (csr or dcsc, any backend):

=============================  ====================================================
:func:`multi_source_bfs`       SpGEMM over ``min_second`` / ``any_pair`` per level
                               (numba: bit-parallel, (bitwise or, second) on words)
:func:`sssp`                   delta-stepping (compiled on the host; masked SpMSV
                               over ``min_plus`` per bucket otherwise)
:func:`connected_components`   weak: compiled union-find with Afforest's sampling
                               (numpy/cupy: FastSV, SpMSV over ``min_second``
                               per round); strong: Pearce's search, compiled
:func:`betweenness_centrality` SpGEMM over ``plus_times`` per level, both sweeps
:func:`pagerank`               SpMV over ``plus_times`` per iteration
:func:`triangle_count`         masked SpGEMM over ``plus_pair``, once
=============================  ====================================================

Every algorithm takes ``graph`` as anything :func:`spbfs.as_graph` accepts
(a :class:`~spbfs.Graph`, an :class:`~spbfs.EdgeList`, a sparse matrix, a
networkx graph, a file path or a ``(src, dst)`` pair of arrays) and two
keyword arguments for that conversion, described here once:

* ``config`` (:class:`~spbfs.Config`, optional): the format and backend to run
  on (a Graph stored otherwise is re-stored under it); defaults to the graph's
  own, or ``Config()`` for a graph that must be converted.
* ``directed`` (bool, optional): whether the edges are arcs; used only when
  ``graph`` is not already a :class:`~spbfs.Graph`, which keeps its own.

A :class:`~spbfs.mpi.DistGraph` (a rank's piece of a process grid's graph) runs
the algorithm's grid twin (below) on every rank and returns its result (this
rank's piece; ``gather()`` gives the one-process type). Its ``config`` is the
one the DistGraph was made with (another is refused), and an option the twin
lacks (PageRank's ``weights``) raises rather than being dropped.

Each loop that is not a fused compiled kernel is written once, against the
operations of :mod:`spbfs.algorithms.operations` (products, reductions over
the processes, lookups by global id), which have a one-process
implementation over the backend's arrays (numpy, cupy) and one on the 2D
process grid (gather the vector along the grid column, local product, reduce
along the row with the semiring's addition). The grid versions are thin
entries around the same loops; each sits next to its twin and calls the same
argument checks (``dist_pagerank`` in
:mod:`~spbfs.algorithms.ranking`, ...); import them from
:mod:`spbfs.algorithms.distributed` (``dist_pagerank``, ``dist_sssp``, ...).
Importing this package loads the :mod:`spbfs.mpi` modules but not mpi4py:
MPI starts only when a process grid is made.

Results are small dataclasses (or, for betweenness, one array) of numpy
arrays on the host, whatever the backend. Weighted shortest paths build a
weighted block (:func:`weighted_block`), because a :class:`~spbfs.graph.Graph`
keeps the structure only.
"""

from spbfs.algorithms.betweenness import betweenness_centrality
from spbfs.algorithms.components import ComponentsResult, connected_components
from spbfs.algorithms.msbfs import MultiSourceBFSResult, multi_source_bfs
from spbfs.algorithms.ranking import PageRankResult, pagerank
from spbfs.algorithms.shortest_paths import ShortestPathsResult, sssp, weighted_block
from spbfs.algorithms.triangles import TriangleCount, triangle_count

__all__ = [
    "ComponentsResult",
    "MultiSourceBFSResult",
    "PageRankResult",
    "ShortestPathsResult",
    "TriangleCount",
    "betweenness_centrality",
    "connected_components",
    "multi_source_bfs",
    "pagerank",
    "sssp",
    "triangle_count",
    "weighted_block",
]
