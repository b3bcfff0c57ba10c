"""Connected components: compiled sampling and hooking on one process, FastSV on the grid.

On one process (numba backend), weak components are a union-find over the
stored edges with Afforest's sampling (Sutton, Ben-Nun and Besta, "Optimizing
Parallel Graph Connectivity Computation via Subgraph Sampling"; LAGraph's
``LAGr_ConnectedComponents``): a hook puts the larger root under the smaller,
so each vertex ends at the smallest vertex id of its component, and the lists
of the component a sample finds largest are never read on an undirected
graph (:mod:`spbfs.kernels.components_numba`). One pass over the edges at
most, whatever the diameter: a road network costs what its edges cost.
Strong components of a directed graph are Pearce's iterative Tarjan search
in the same module. The numpy and cupy backends, which have no compiled
loops, and the 2D process grid (:func:`dist_connected_components`;
conventions: :mod:`spbfs.algorithms.distributed`) run one loop,
:func:`fastsv`, written against :mod:`spbfs.algorithms.operations`: FastSV
(Zhang, Azad and Hu, "FastSV: A Distributed-Memory Connected Component
Algorithm with Fast Convergence"). Parent
``f`` and grandparent ``gf`` vectors, one product
``mngf = A min.second gf`` a round (two for a directed graph, ``B`` and
``Bᵀ``), then stochastic hooking ``f[f[u]] = min(f[f[u]], mngf[u])`` (one
Alltoallv to the owners of ``f[u]`` on the grid), aggressive hooking
``f = min(f, mngf)``, shortcutting ``f = min(f, gf)`` and ``gf = f[f]`` (a
request/reply Alltoallv on the grid), until ``gf`` stops changing: O(log n) rounds on
every shape. Labels only decrease and a label is always a vertex of the same
component, so at the fixed point every vertex holds the smallest id of its
component: the one-process result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from semirings.semiring import min_second
from spbfs.algorithms._common import check_grid_call, prepare
from spbfs.algorithms._grid import Pieces, check_graph
from spbfs.algorithms.operations import GridVectorOps, LocalOps
from spbfs.config import Config
from spbfs.kernels.components_numba import (
    number_by_root,
    strong_partition,
    strong_roots,
    unsigned,
    weak_roots,
)
from spbfs.mpi.graph import DistGraph

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
        FastSV rounds performed (numpy and cupy backends, the grid); 0 for the
        compiled union-find and the strong components, which make no rounds.
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


def _full_pointers(block: Any, n: int) -> np.ndarray:
    """Host column pointers of ``block`` over all ``n`` columns (a dcsc block's filled in)."""
    to_host = block.backend.to_host
    ptr = to_host(block.ptr)
    if block.jc is None:
        return ptr
    full = np.zeros(n + 1, dtype=ptr.dtype)
    full[to_host(block.jc).astype(np.int64) + 1] = np.diff(ptr)
    return np.cumsum(full, dtype=ptr.dtype)


def connected_components(
    graph: Any, *, config: Config | None = None, directed: bool | None = None,
    connection: str = "weak",
) -> ComponentsResult:
    """Connected components: weak (any graph) or strong (a directed graph).

    Weak components on the numba backend run the compiled sampling-and-hooking
    union-find of :mod:`spbfs.kernels.components_numba` (Afforest) over the
    graph's stored edges, one pass at most whatever the diameter; on the
    numpy and cupy backends, FastSV's rounds (see the module's description),
    O(log n) of them. Strong components run Pearce's compiled
    iterative Tarjan search on the host, each arc read once (a cupy graph's
    structure is copied there); on an undirected graph they are the weak ones.

    Parameters
    ----------
    graph : Graph, EdgeList, sparse matrix, networkx graph, path or (src, dst)
        The graph, converted by :func:`spbfs.as_graph` with ``config`` and ``directed``
        (see :mod:`spbfs.algorithms`).
    connection : {"weak", "strong"}
        ``"weak"``: edge direction never matters; ``"strong"``: ``u`` and ``v``
        share a component when each reaches the other.

    Returns
    -------
    ComponentsResult
        Component numbers, smallest-id roots and the component count. An
        empty graph has 0 components.

    Raises
    ------
    ValueError
        For a ``connection`` other than ``"weak"`` or ``"strong"``.

    Examples
    --------
    >>> import spbfs
    >>> from spbfs.algorithms import connected_components
    >>> g = spbfs.Graph.from_edges([0, 3], [1, 4], n=6)
    >>> cc = connected_components(g)
    >>> cc.n_components, cc.labels.tolist(), cc.roots.tolist()
    (4, [0, 0, 1, 2, 2, 3], [0, 0, 2, 3, 3, 5])
    >>> d = spbfs.Graph.from_edges([0, 1, 2], [1, 0, 3], n=4, directed=True)
    >>> connected_components(d, connection="strong").labels.tolist()
    [0, 0, 1, 2]
    """
    if connection not in ("weak", "strong"):
        raise ValueError(f"connection must be 'weak' or 'strong', got {connection!r}")
    if check_grid_call(graph, config, "connected_components"):
        if connection == "strong" and graph.directed:
            raise ValueError("connection='strong' is not supported on a DistGraph; gather "
                             "the graph on one process")
        return dist_connected_components(graph)
    g = prepare(graph, config, directed, weight=None)
    n = g.n
    if n == 0:
        empty = np.zeros(0, dtype=np.int64)
        return ComponentsResult(0, empty, empty.copy(), 0)
    if connection == "strong" and g.directed:
        block = g.out_block
        ind = block.backend.to_host(block.ind)
        scc, _ = strong_partition(unsigned(_full_pointers(block, n)), unsigned(ind))
        roots = strong_roots(scc)
        labels, k = number_by_root(roots)
        return ComponentsResult(int(k), labels, roots, 0)
    if g.backend.name == "numba":
        block = g.out_block
        roots = weak_roots(unsigned(_full_pointers(block, n)), unsigned(block.ind),
                           not g.directed)
        labels, k = number_by_root(roots)
        return ComponentsResult(int(k), labels, roots, 0)
    roots, labels, k, rounds, _ = fastsv(LocalOps(g))
    return ComponentsResult(int(k), g.backend.to_host(labels), g.backend.to_host(roots), rounds)


def fastsv(ops: LocalOps | GridVectorOps) -> tuple[Any, Any, int, int, int]:
    """FastSV on one process or the grid (the module's description).

    Returns
    -------
    roots, labels, n_components, rounds, lo
        This piece's smallest-id roots and scipy-numbered labels (``xp`` arrays),
        the component count, the rounds (the last one included) and the piece's
        first vertex.
    """
    xp = ops.xp
    f = ops.ids()
    gf = f.copy()
    ids = f - ops.lo
    # Weak components: edge direction never matters, so a directed graph also runs Bᵀ.
    products = (False, True) if ops.directed else (False,)
    rounds = 0
    while True:
        mngf = gf.copy()
        for transpose in products:
            ops.mxsv_min_into(mngf, ids, gf, min_second, transpose=transpose)
        rounds += 1
        # Stochastic hooking: the parent takes the smallest grandparent next door.
        # f[f[u]] <= f[u] always, so only an mngf[u] below f[u] can lower it.
        hook = mngf < f
        nf = f.copy()
        ops.scatter_min(nf, f[hook], mngf[hook])
        xp.minimum(nf, mngf, out=nf)  # aggressive hooking
        xp.minimum(nf, gf, out=nf)  # shortcutting
        ngf = ops.lookup(nf, nf)
        moved = int(ops.allsum_int(xp.count_nonzero(ngf != gf))[0])
        f, gf = nf, ngf
        if not moved:
            break
    # Number the components by their smallest id, as scipy does.
    is_root = f == ops.ids()
    offset, total = ops.offset(xp.count_nonzero(is_root))
    number = offset + xp.cumsum(is_root) - 1
    return f, ops.lookup(number, f), total, rounds, ops.lo


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
    """Weakly connected components by FastSV on the process grid (collective).

    Zhang, Azad and Hu's FastSV (see the module's description): a round is
    one distributed product ``mngf = A min.second gf`` over ``min_second``
    with the whole grandparent vector (and for a directed graph a second
    one with ``Bᵀ``: weak components, edge direction never matters), a
    scatter of ``min`` to the parents' owners (stochastic hooking), two
    local minima (aggressive hooking, shortcutting) and one lookup
    ``gf = f[f]``. The loop stops in the first round that leaves ``gf``
    unchanged: O(log n) rounds, not O(diameter). Every vertex then holds the
    smallest id of its component, as :func:`~spbfs.algorithms.connected_components`
    gives on one process.

    Parameters
    ----------
    g : DistGraph
        The distributed graph.

    Returns
    -------
    DistComponentsResult
        This rank's labels and roots; ``gather()`` gives the
        :class:`~spbfs.algorithms.ComponentsResult` (scipy's numbering).
        ``rounds`` counts the FastSV rounds, the last one included.
    """
    g = check_graph(g)
    ops = GridVectorOps(g)
    roots, labels, k, rounds, lo = fastsv(ops)
    return DistComponentsResult(lo=lo, hi=g.hi, n=g.n, _comm=g.grid.comm, n_components=k,
                                labels=ops.to_host(labels), roots=ops.to_host(roots),
                                rounds=rounds)
