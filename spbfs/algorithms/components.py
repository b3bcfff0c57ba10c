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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from semirings.kernels import spmsv
from semirings.semiring import min_second
from semirings.vector import SparseVector
from spbfs.algorithms._common import prepare, symmetric_block
from spbfs.config import Config

__all__ = ["ComponentsResult", "connected_components"]


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


def connected_components(
    graph: Any, *, config: Config | None = None, directed: bool | None = None
) -> ComponentsResult:
    """Connected components (weakly connected for a directed graph).

    Parameters
    ----------
    graph : Graph, EdgeList, sparse matrix, networkx graph, path or (src, dst)
        The graph (converted with :func:`spbfs.as_graph`).
    config : Config, optional
        Format and backend; defaults to the graph's.
    directed : bool, optional
        Used only when ``graph`` must be converted; edge direction never
        matters here.

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
    g = prepare(graph, config, directed)
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
