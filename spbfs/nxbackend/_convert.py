"""networkx graphs as spbfs graphs: node labels, adjacency order and edge weights.

:class:`SpbfsGraph` is the backend's graph type (``__networkx_backend__ =
"spbfs"``). It keeps the networkx graph it was made from and builds from it,
once and only when an algorithm asks:

* the node labels in ``G`` order (vertex ``k`` is ``nodes[k]``) and the
  label → id map;
* the adjacency as csr arrays *in networkx's iteration order* (``G._adj``,
  and ``G._pred`` for in-edges): the order networkx's traversals visit
  neighbours in, which the backend needs to reproduce their output order;
* the :class:`spbfs.Graph` the algorithms run on;
* per edge attribute, the weights (``1`` where an edge lacks the attribute,
  networkx's convention), the smallest of parallel edges for shortest paths
  (as ``networkx``'s ``_weight_function``) or their sum for PageRank (as
  ``to_scipy_sparse_array``).

Nothing is dropped silently: weights that are not real numbers are reported
as :class:`UnsupportedWeights`, which the algorithms turn into a fallback to
networkx (which then does what networkx does with them).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import scipy.sparse as sp

from spbfs.config import Config
from spbfs.edges import EdgeList
from spbfs.graph import Graph

__all__ = ["Adjacency", "SpbfsGraph", "UnsupportedWeights", "from_nx", "to_nx"]


class UnsupportedWeights(Exception):
    """Edge weights the spbfs kernels cannot take as they are (not real numbers)."""


class Adjacency:
    """One direction of a graph's adjacency as csr arrays in networkx's order.

    Attributes
    ----------
    indptr : numpy.ndarray
        int64, ``n + 1``: the neighbours of ``k`` are ``nbr[indptr[k]:indptr[k + 1]]``.
    nbr : numpy.ndarray
        int64 vertex ids, each row in the order networkx iterates ``adj[node]``.
    scratch : list
        Free arrays of one-source searches, taken and put back by each search (two
        threads searching one graph take two).
    """

    def __init__(self, indptr: np.ndarray, nbr: np.ndarray) -> None:
        self.indptr = indptr
        self.nbr = nbr
        self.scratch: list[tuple[np.ndarray, ...]] = []

    @property
    def src(self) -> np.ndarray:
        """The row of every entry of ``nbr``."""
        n = self.indptr.shape[0] - 1
        return np.repeat(np.arange(n, dtype=np.int64), np.diff(self.indptr))


class SpbfsGraph:
    """A networkx graph seen by spbfs (the backend's graph type).

    Parameters
    ----------
    graph : networkx.Graph
        Any networkx graph class (multigraphs and graph views included).
    config : Config
        Format and kernel backend of the spbfs graph built from it.

    Attributes
    ----------
    nx : networkx.Graph
        The graph it was made from (what :func:`to_nx` gives back).
    nodes : list
        Node labels in ``G`` order; vertex id ``k`` is ``nodes[k]``.
    index : dict
        Label → vertex id.
    labels_are_ids : bool
        Whether the nodes are ``0 .. n-1`` in that order (a label is its id).
    forced : bool
        Whether a call with ``backend="spbfs"`` was declined on it for its size
        (the backend converts it at the next such call).
    verdict : tuple or None
        The backend's ``should_run`` answer for it and the ``min_edges`` it was made
        for (kept here as in the networkx graph's cache, which drops both on a change).
    """

    __networkx_backend__ = "spbfs"

    def __init__(self, graph: Any, config: Config) -> None:
        self.nx = graph
        self.config = config
        self.nodes = list(graph)
        self.index = {v: k for k, v in enumerate(self.nodes)}
        # Most graphs made by networkx's generators: results need no label lookup.
        self.labels_are_ids = all(type(v) is int and v == k for k, v in enumerate(self.nodes))
        self.forced = False
        self.verdict: tuple[int, bool | str] | None = None
        self._cache: dict[Any, Any] = {}

    # networkx's decorators (not_implemented_for, argmap) ask these of any graph.
    def is_directed(self) -> bool:
        """Whether the networkx graph is directed."""
        return bool(self.nx.is_directed())

    def is_multigraph(self) -> bool:
        """Whether the networkx graph is a multigraph."""
        return bool(self.nx.is_multigraph())

    def __len__(self) -> int:
        return len(self.nodes)

    def __contains__(self, node: Any) -> bool:
        try:
            return node in self.index
        except TypeError:
            return False

    def __iter__(self) -> Any:
        return iter(self.nodes)

    @property
    def n(self) -> int:
        """Number of nodes."""
        return len(self.nodes)

    def __repr__(self) -> str:
        return f"SpbfsGraph({type(self.nx).__name__} with {self.n} nodes)"

    # -- built on demand ----------------------------------------------------------
    def adjacency(self, reverse: bool = False) -> Adjacency:
        """Out-neighbours (or in-neighbours, ``reverse`` on a directed graph) in networkx order."""
        if not reverse:
            kept = self._cache.get(("adj", False))
            if kept is not None:  # the common call, without is_directed's two calls
                return kept
        reverse = bool(reverse) and self.is_directed()
        key = ("adj", reverse)
        if key not in self._cache:
            adj = self.nx._pred if reverse else self.nx._adj
            rows = [adj[u] for u in self.nodes]
            n = len(rows)
            indptr = np.zeros(n + 1, dtype=np.int64)
            np.cumsum(np.fromiter(map(len, rows), np.int64, n), out=indptr[1:])
            index = self.index
            nbr = np.fromiter((index[v] for row in rows for v in row), np.int64,
                              int(indptr[-1]))
            self._cache[key] = Adjacency(indptr, nbr)
        return self._cache[key]

    def graph(self, reverse: bool = False) -> Graph:
        """The :class:`spbfs.Graph` of the structure (``reverse``: arcs turned around)."""
        reverse = bool(reverse) and self.is_directed()
        key = ("graph", reverse)
        if key not in self._cache:
            a = self.adjacency(reverse)
            edges = EdgeList(a.src, a.nbr, self.n, directed=self.is_directed())
            self._cache[key] = Graph.from_edgelist(edges, config=self.config)
        return self._cache[key]

    def weights(self, attr: str | None, combine: str = "min", reverse: bool = False) -> np.ndarray:
        """The weight of every entry of :meth:`adjacency`, networkx's way.

        Parameters
        ----------
        attr : str or None
            Edge attribute; None: every edge weighs 1.
        combine : {"min", "sum"}
            How parallel edges of a multigraph combine: the smallest
            (shortest paths) or the sum (PageRank).
        reverse : bool
            Align with the in-neighbour adjacency.

        Returns
        -------
        numpy.ndarray
            int64 when every weight is an int (so are the sums networkx
            returns), else float64.

        Raises
        ------
        UnsupportedWeights
            For a weight that is not a real number (bool, None, str, ...).
        """
        reverse = bool(reverse) and self.is_directed()
        key = ("w", attr, combine, reverse)
        if key in self._cache:
            return self._cache[key]
        adj = self.nx._pred if reverse else self.nx._adj
        multi = self.is_multigraph()
        if attr is None:
            # networkx's weight=None: each neighbour pair weighs 1 (min) or the
            # number of parallel edges (sum, to_scipy_sparse_array(weight=None)).
            if multi and combine == "sum":
                vals = [len(keys) for u in self.nodes for keys in adj[u].values()]
            else:
                vals = [1] * int(self.adjacency(reverse).nbr.shape[0])
        elif multi:
            pick = min if combine == "min" else sum
            vals = [pick(d.get(attr, 1) for d in keys.values())
                    for u in self.nodes for keys in adj[u].values()]
        else:
            vals = [d.get(attr, 1) for u in self.nodes for d in adj[u].values()]
        out = _numeric(vals, attr)
        self._cache[key] = out
        return out

    def weight_matrix(self, attr: str | None, combine: str = "min",
                      reverse: bool = False) -> sp.csr_matrix:
        """``W[u, v]`` = weight of ``u -> v`` as a float64 csr matrix (every direction stored)."""
        key = ("W", attr, combine, reverse)
        if key not in self._cache:
            a = self.adjacency(reverse)
            w = self.weights(attr, combine, reverse).astype(np.float64)
            self._cache[key] = sp.csr_matrix((w, a.nbr.copy(), a.indptr.copy()),
                                             shape=(self.n, self.n))
        return self._cache[key]

    def cached(self, key: Any, make: Any) -> Any:
        """``make()``, computed once per graph and ``key`` (weighted blocks and the like)."""
        if key not in self._cache:
            self._cache[key] = make()
        return self._cache[key]


def _numeric(vals: list[Any], attr: str | None) -> np.ndarray:
    """Weights as int64 (all ints) or float64 (all real), else :class:`UnsupportedWeights`."""
    for w in vals:
        if isinstance(w, bool) or not isinstance(w, int | float | np.integer | np.floating):
            raise UnsupportedWeights(f"edge attribute {attr!r} holds {w!r}, not a real number")
    if all(isinstance(w, int | np.integer) for w in vals):
        big = max((abs(int(w)) for w in vals), default=0)
        if big < 2**53 // max(len(vals), 1):
            return np.asarray(vals, dtype=np.int64).reshape(-1)
        # sums of such ints could exceed what float64 adds exactly
        raise UnsupportedWeights(f"edge attribute {attr!r} holds integers too large to add "
                                 "exactly in float64")
    return np.asarray(vals, dtype=np.float64).reshape(-1)


def from_nx(graph: Any, config: Config) -> SpbfsGraph:
    """Wrap a networkx graph; an :class:`SpbfsGraph` passes through."""
    if isinstance(graph, SpbfsGraph):
        return graph
    import networkx as nx

    if not isinstance(graph, nx.Graph):
        raise TypeError(f"graph must be a networkx graph, got {type(graph).__name__}")
    return SpbfsGraph(graph, config)


def to_nx(obj: Any) -> Any:
    """The networkx graph of an :class:`SpbfsGraph`; any other result unchanged."""
    if isinstance(obj, SpbfsGraph):
        return obj.nx
    return obj
