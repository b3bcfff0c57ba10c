"""Connected components: min-label propagation over ``min_second`` with shortcutting.

Every vertex starts with its own id as label. A round is one engine call,
``y = S min.second l_F``, where ``S`` is the symmetric block of the
underlying undirected graph (:func:`~spbfs.algorithms._common.symmetric_block`;
weakly connected components for a directed graph) and ``l_F`` the labels of
the vertices whose label changed in the previous round; a vertex takes the
smaller of its label and ``y``. After each round the labels are shortcut,
``l = l[l]`` until stable (the pointer jumping of the Shiloach-Vishkin /
FastSV family): a label is always a vertex of the same component with a
smaller or equal id, so jumping is safe and collapses long label chains,
which cuts the rounds on high-diameter graphs. At the fixed point every
vertex holds the smallest id of its component.

:func:`dist_connected_components` is the same loop on the 2D process grid
(conventions: :mod:`spbfs.algorithms.distributed`): each round is a
distributed sparse SpMSV (two for a directed graph, with ``B`` and ``Bᵀ``,
instead of a symmetric block), each jump one request/reply Alltoallv.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from semirings.kernels import spmsv
from semirings.semiring import min_second
from semirings.vector import SparseVector
from spbfs.algorithms._common import check_grid_call, prepare, symmetric_block
from spbfs.algorithms._grid import Pieces, check_graph
from spbfs.config import Config
from spbfs.mpi import comm as C
from spbfs.mpi.graph import DistGraph
from spbfs.mpi.spmsv import GridOps, product_sparse

__all__ = ["ComponentsResult", "DistComponentsResult", "connected_components",
           "dist_connected_components"]


@dataclass
class ComponentsResult:
    """What :func:`connected_components` returns.

    Attributes
    ----------
    n_components : int
        Number of (weakly) connected components; isolated vertices count.
    labels : numpy.ndarray
        int64 component number of each vertex, ``0 .. n_components - 1``,
        numbered in order of each component's smallest vertex id (the
        numbering ``scipy.sparse.csgraph.connected_components`` uses).
    roots : numpy.ndarray
        int64 smallest vertex id of each vertex's component.
    rounds : int
        Propagation rounds (engine calls) performed.
    """

    n_components: int
    labels: np.ndarray
    roots: np.ndarray
    rounds: int

    def to_graphblas(self, *, roots: bool = False) -> Any:
        """The component of every vertex as a full ``graphblas.Vector`` (INT64).

        Needs python-graphblas (``pip install 'spbfs[graphblas]'``).

        Parameters
        ----------
        roots : bool
            False: ``labels`` (``0 .. n_components - 1``, scipy's numbering).
            True: ``roots``, each vertex's smallest vertex id in its component
            (a representative vertex, the convention of LAGraph's
            connected components).
        """
        from spbfs.interop import to_vector

        return to_vector(self.roots if roots else self.labels,
                         what="ComponentsResult.to_graphblas")


def connected_components(
    graph: Any, *, config: Config | None = None, directed: bool | None = None
) -> ComponentsResult:
    """Connected components (weakly connected for a directed graph).

    Parameters
    ----------
    graph : Graph, EdgeList, sparse matrix, networkx graph, path or (src, dst)
        The graph, converted by :func:`spbfs.as_graph` with ``config`` and ``directed``
        (see :mod:`spbfs.algorithms`); edge direction never matters here.

    Returns
    -------
    ComponentsResult
        Component numbers, smallest-id roots and the component count. An
        empty graph has 0 components.

    Examples
    --------
    >>> import spbfs
    >>> from spbfs.algorithms import connected_components
    >>> g = spbfs.Graph.from_edges([0, 3], [1, 4], n=6)
    >>> cc = connected_components(g)
    >>> cc.n_components, cc.labels.tolist(), cc.roots.tolist()
    (4, [0, 0, 1, 2, 2, 3], [0, 0, 2, 3, 3, 5])
    """
    if check_grid_call(graph, config, "connected_components"):
        return dist_connected_components(graph)
    g = prepare(graph, config, directed, weight=None)
    n = g.n
    xp = g.backend.xp
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return ComponentsResult(0, empty, empty.copy(), 0)
    block = symmetric_block(g)
    label = xp.arange(n, dtype=np.int64)
    frontier = SparseVector(xp.arange(n, dtype=np.int64), label.copy(), n, check=False)
    rounds = 0
    while frontier.nnz:
        y = spmsv(block, frontier, min_second, check=False)
        rounds += 1
        better = y.values < label[y.indices]
        idx = y.indices[better]
        label[idx] = y.values[better]
        changed = xp.zeros(n, dtype=bool)
        changed[idx] = True
        # Shortcut: follow labels to their labels until nothing moves.
        while True:
            jumped = label[label]
            moved = jumped != label
            if not bool(moved.any()):
                break
            changed |= moved
            label = jumped
        idx = xp.flatnonzero(changed).astype(np.int64)
        frontier = SparseVector(idx, label[idx], n, check=False)
    roots = g.backend.to_host(label)
    is_root = roots == np.arange(n)
    number = np.cumsum(is_root) - 1
    return ComponentsResult(
        n_components=int(is_root.sum()), labels=number[roots], roots=roots, rounds=rounds
    )


# --------------------------------------------------------------------------- on the grid


@dataclass
class DistComponentsResult(Pieces):
    """What :func:`dist_connected_components` returns on every rank.

    Attributes
    ----------
    n_components : int
        Number of (weakly) connected components, isolated vertices included.
    labels : numpy.ndarray
        int64 component number of this rank's vertices, numbered as
        ``scipy.sparse.csgraph.connected_components`` does (by smallest id).
    roots : numpy.ndarray
        int64 smallest vertex id of each vertex's component.
    rounds : int
        Propagation rounds (distributed products) performed.
    lo, hi, n : int
        The piece and the vertex count.
    """

    n_components: int = 0
    labels: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    roots: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))
    rounds: int = 0

    def gather(self, root: int = 0) -> ComponentsResult | None:
        """The whole :class:`~spbfs.algorithms.ComponentsResult` on ``root`` (collective)."""
        return self._assemble(root, ComponentsResult,
                              {"labels": self.labels, "roots": self.roots},
                              n_components=self.n_components, rounds=self.rounds)


def dist_connected_components(g: DistGraph) -> DistComponentsResult:
    """Connected components by distributed min-label propagation (collective).

    Every vertex starts with its own id as label. A round is one distributed
    SpMSV over ``min_second`` with the labels that changed in the previous
    round (a sparse vector), and for a directed graph a second one with
    ``Bᵀ`` (weakly connected components: edge direction never matters);
    each vertex keeps the smallest label offered. Labels are then shortcut,
    ``l = l[l]`` until stable, each jump one request/reply Alltoallv. The
    loop, the rounds and the result are those of
    :func:`~spbfs.algorithms.connected_components`.

    Parameters
    ----------
    g : DistGraph
        The distributed graph.

    Returns
    -------
    DistComponentsResult
        This rank's labels and roots; ``gather()`` gives the
        :class:`~spbfs.algorithms.ComponentsResult` (scipy's numbering).
    """
    g = check_graph(g)
    ops = GridOps(g)
    lo = g.lo
    label = np.arange(lo, g.hi, dtype=np.int64)
    ids = np.arange(ops.size, dtype=np.int64)
    products = [(g.block, False)] + ([(g.tblock, True)] if g.directed else [])
    rounds = 0
    active = int(ops.allsum_int(ids.shape[0])[0])
    while active:
        cand = label.copy()
        vals = label[ids]
        for block, transpose in products:
            r, v = product_sparse(ops, block, ids, vals, min_second, transpose=transpose)
            np.minimum.at(cand, r, v.astype(np.int64, copy=False))
        rounds += 1
        changed = cand < label
        label = cand
        # Shortcut: follow labels to their labels until nothing moves anywhere.
        while True:
            jumped = ops.lookup(label, label)
            moved = jumped != label
            if not int(ops.allsum_int(int(moved.sum()))[0]):
                break
            changed |= moved
            label = jumped
        ids = np.flatnonzero(changed).astype(np.int64)
        active = int(ops.allsum_int(ids.shape[0])[0])
    # Number the components by their smallest id, as scipy does.
    is_root = label == np.arange(lo, g.hi, dtype=np.int64)
    counts = C.allgatherv(g.grid.comm, np.array([int(is_root.sum())], dtype=np.int64),
                          np.ones(g.grid.size, dtype=np.int64))
    offset = int(counts[:g.grid.rank].sum())
    number = offset + np.cumsum(is_root) - 1
    labels = ops.lookup(number, label)
    return DistComponentsResult(lo=lo, hi=g.hi, n=g.n, _comm=g.grid.comm,
                                n_components=int(counts.sum()), labels=labels, roots=label,
                                rounds=rounds)
