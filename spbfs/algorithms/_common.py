"""Argument checks and graph views shared by the algorithms (one process and grid).

The checks take plain values (a vertex count, not a graph), so that a
one-process function and its grid twin call the same one; vertex ids and
depth limits come from :mod:`spbfs.search.checks`.
"""

from __future__ import annotations

import operator
import weakref
from collections.abc import Mapping
from typing import Any

import numpy as np

from semirings.blocks import Block, block_from_edges
from spbfs.config import Config
from spbfs.graph import Graph, as_graph, is_dist_graph
from spbfs.search.checks import check_vertex

__all__ = [
    "check_grid_call",
    "check_positive_int",
    "check_sources",
    "node_labels",
    "prepare",
    "sources_of",
    "symmetric_block",
    "vertex_of",
]


def check_grid_call(graph: Any, config: Config | None, what: str, **unsupported: Any) -> bool:
    """Whether ``graph`` is a DistGraph, so that ``what`` runs its grid twin.

    A DistGraph's blocks are stored and distributed under the config it was
    made with, so a different ``config`` is refused rather than ignored, as is
    any option in ``unsupported`` (name: value) that is set (not None or
    False) and that the grid version does not take.

    Raises
    ------
    ValueError
        For such a config or option.
    """
    if not is_dist_graph(graph):
        return False
    if config is not None and config != graph.config:
        raise ValueError(f"config: {what} on a DistGraph runs under the config the DistGraph "
                         "was made with; pass config= where it is made")
    for name, value in unsupported.items():
        if value is not None and value is not False:
            raise ValueError(f"{name} is not supported by {what} on a DistGraph")
    return True


def prepare(
    graph: Any, config: Config | Mapping[str, Any] | None, directed: bool | None, *,
    allow_empty: bool = True, what: str = "graph", weight: str | None = "weight",
) -> Graph:
    """The :class:`Graph` to run on, threads set from its config.

    ``config`` is a :class:`Config`, a mapping of settings or None
    (:func:`spbfs.config.as_config`); ``weight`` is the networkx weight attribute
    to read, None for an algorithm that ignores weights (it then neither reads
    nor checks them).

    Raises
    ------
    ValueError
        For an empty graph when ``allow_empty`` is False.
    """
    g = as_graph(graph, config=config, directed=directed, weight=weight)
    cfg = g.config
    if not allow_empty and g.n == 0:
        raise ValueError(f"{what} is empty (0 vertices): there is no source to start from")
    if cfg.threads is not None and g.backend.name == "numba":
        import numba

        numba.set_num_threads(min(cfg.threads, numba.config.NUMBA_NUM_THREADS))
    return g


def vertex_of(g: Graph, v: Any, name: str = "source") -> Any:
    """The vertex id of ``v``: see :meth:`spbfs.graph.Graph.resolve_vertex`."""
    return g.resolve_vertex(v, name)


def sources_of(g: Graph, sources: Any, name: str = "sources") -> Any:
    """``sources`` as vertex ids: node labels translated for a graph from networkx.

    One label (a node of the graph) is one source; anything else is iterated
    as labels. Other graphs' sources pass unchanged (checked by
    :func:`check_sources`).
    """
    if not g.labelled:
        return sources
    if _is_label(g, sources):
        return g.resolve_vertex(sources, name)
    return np.array([g.resolve_vertex(s, name) for s in sources], dtype=np.int64)


def _is_label(g: Graph, x: Any) -> bool:
    try:
        g.vertex_id(x)
    except (ValueError, TypeError):
        return False
    return True


def node_labels(g: Graph) -> np.ndarray | None:
    """The node labels of a graph from networkx (position ``k``: vertex ``k``), else None."""
    return g.ids if g.labelled else None


def check_sources(n: int, sources: Any, name: str = "sources") -> np.ndarray:
    """``sources`` as a 1-D int64 array of vertex ids of an ``n``-vertex graph.

    An int is one source. Takes the vertex count rather than a graph, so that
    a one-process function and its grid twin run the same check.

    Raises
    ------
    TypeError
        For non-integer ids.
    ValueError
        For no ids, ids out of range, or an array that is not 1-D.
    """
    if isinstance(sources, bool):
        raise TypeError(f"{name} must hold integer vertex ids, got bool")
    if isinstance(sources, int | np.integer):
        return np.array([check_vertex(sources, n, name)], dtype=np.int64)
    arr = np.asarray(sources)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be an integer or a 1-D array of ids, got shape {arr.shape}")
    if arr.size == 0:
        raise ValueError(f"{name} is empty: give at least one source vertex")
    if not np.issubdtype(arr.dtype, np.integer) or arr.dtype == np.bool_:
        raise TypeError(f"{name} must hold integer vertex ids, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    bad = np.flatnonzero((arr < 0) | (arr >= n))
    if bad.size:
        k = int(bad[0])
        raise ValueError(
            f"{name}[{k}]={int(arr[k])} is out of range for a graph with {n} vertices"
        )
    return arr


def check_positive_int(value: Any, name: str, *, minimum: int = 1) -> int:
    """``value`` as an int ``>= minimum``, with errors naming ``name``."""
    if isinstance(value, bool):
        raise TypeError(f"{name} must be an integer, got bool")
    try:
        v = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}") from None
    if v < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {v}")
    return v


_SYMMETRIC: weakref.WeakKeyDictionary[Graph, Block] = weakref.WeakKeyDictionary()


def symmetric_block(g: Graph) -> Block:
    """The block of ``B ∨ Bᵀ`` without self-loops: the underlying undirected graph.

    For an undirected graph that is ``g.out_block`` itself; for a directed one
    it is built once per graph (cached while the graph lives).
    """
    if not g.directed and g.num_self_loops == 0:
        return g.out_block
    cached = _SYMMETRIC.get(g)
    if cached is not None:
        return cached
    b = g.out_block
    to_host = b.backend.to_host
    rows = to_host(b.ind).astype(np.int64)
    cols = to_host(b.column_ids()).astype(np.int64)
    sym = block_from_edges(
        b.format, rows, cols, b.shape, index_dtype=g.config.index_dtype, dedup=True,
        symmetric=True, drop_loops=True, backend=b.backend,
    )
    _SYMMETRIC[g] = sym
    return sym
