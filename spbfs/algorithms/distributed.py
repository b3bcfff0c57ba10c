"""The semiring algorithms on the 2D process grid (MPI): one distributed product per step.

This module collects the grid versions for importing
(``from spbfs.algorithms.distributed import dist_pagerank``). Each is defined
next to its one-process twin, whose argument checks it calls
(``dist_pagerank`` in :mod:`~spbfs.algorithms.ranking`, ``dist_sssp`` and
``dist_weighted_block`` in :mod:`~spbfs.algorithms.shortest_paths`, ...);
the pieces the grid versions share are in :mod:`spbfs.algorithms._grid`.

Each function is the distributed twin of a one-process function of
:mod:`spbfs.algorithms`, a thin entry (argument checks, result) around the
loop both share, written once against :mod:`spbfs.algorithms.operations`
(:func:`~spbfs.algorithms.ranking.power_iteration`,
:func:`~spbfs.algorithms.components.fastsv`,
:func:`~spbfs.algorithms.shortest_paths.delta_stepping`,
:func:`~spbfs.algorithms.msbfs.search_levels`,
:func:`~spbfs.algorithms.betweenness.dependencies`,
:func:`~spbfs.algorithms.triangles.count_triangles`). Its grid implementation
makes each step, one semiring product, distributed on the
:class:`~spbfs.mpi.DistGraph`'s ``pr x pc`` grid (:mod:`spbfs.mpi.spmsv`): *expand* the vector
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
:func:`dist_connected_components`     FastSV: SpMV over ``min_second`` of the
                                      grandparents (and over ``Bᵀ`` for a directed
                                      graph), hooking by Alltoallv to the parents'
                                      owners, ``f[f]`` by request/reply Alltoallv
:func:`dist_sssp`                     delta-stepping: sparse SpMSV over ``min_plus``
                                      on the light, then the heavy part of a
                                      weighted block (:func:`dist_weighted_block`);
                                      Bellman-Ford rounds with ``max_rounds``
:func:`dist_multi_source_bfs`         SpGEMM over ``min_second`` (``any_pair`` for
                                      levels only), one column per source
:func:`dist_betweenness_centrality`   SpGEMM over ``plus_times``, forward over ``B``,
                                      backward over ``Bᵀ``
:func:`dist_triangle_count`           masked ``plus_pair`` product over the
                                      degree-ordered DAG: each rank's rows against
                                      the rows it fetched of their out-neighbours
                                      (1D vector pieces, not the 2D blocks)
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

from spbfs.algorithms.betweenness import DistBetweennessResult, dist_betweenness_centrality
from spbfs.algorithms.components import DistComponentsResult, dist_connected_components
from spbfs.algorithms.msbfs import DistMultiSourceBFSResult, dist_multi_source_bfs
from spbfs.algorithms.ranking import DistPageRankResult, dist_pagerank
from spbfs.algorithms.shortest_paths import (
    DistShortestPathsResult,
    DistWeights,
    dist_sssp,
    dist_weighted_block,
)
from spbfs.algorithms.triangles import DistTriangleCount, dist_triangle_count

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
