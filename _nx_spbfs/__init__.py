"""``backend_info`` of the spbfs networkx backend (the ``networkx.backend_info`` entry point).

networkx calls :func:`get_info` on every ``import networkx``, before the
backend itself is loaded, so it lives outside the ``spbfs`` package: importing
a module of ``spbfs`` runs ``spbfs/__init__.py`` first (numba and the search,
about half a second), which a script that only imports networkx should not
pay. networkx reads the names of the implemented functions from here to
document and list them; :mod:`spbfs.nxbackend` is loaded when a call is
dispatched to it.
"""

from __future__ import annotations

from typing import Any

__all__ = ["FUNCTIONS", "get_info"]

#: Implemented functions and what differs from networkx (shown in networkx's docs).
FUNCTIONS: dict[str, dict[str, Any]] = {
    "bfs_edges": {"additional_docs": "``sort_neighbors`` falls back to networkx."},
    "bfs_tree": {"additional_docs": "``sort_neighbors`` falls back to networkx."},
    "bfs_layers": {},
    "descendants_at_distance": {},
    "single_source_shortest_path_length": {},
    "single_source_dijkstra_path_length": {
        "additional_docs": "Bellman-Ford over min_plus; negative, infinite or non-numeric "
                           "weights and weight functions fall back to networkx.",
    },
    "shortest_path_length": {
        "additional_docs": "Weighted: as single_source_dijkstra_path_length (also for "
                           "method='bellman-ford' when no weight is negative).",
    },
    "connected_components": {},
    "number_connected_components": {},
    "is_connected": {},
    "weakly_connected_components": {},
    "number_weakly_connected_components": {},
    "is_weakly_connected": {},
    "strongly_connected_components": {},
    "number_strongly_connected_components": {},
    "is_strongly_connected": {},
    "pagerank": {
        "additional_docs": "``personalization``, ``nstart`` and ``dangling`` fall back to "
                           "networkx.",
    },
    "betweenness_centrality": {
        "additional_docs": "Unweighted, ``endpoints=False``; otherwise networkx runs.",
    },
    "triangles": {},
}


def get_info() -> dict[str, Any]:
    """The dictionary networkx's ``networkx.backend_info`` entry point asks for."""
    return {
        "backend_name": "spbfs",
        "project": "spbfs",
        "package": "spbfs",
        "short_summary": "Graph algorithms as sparse linear algebra over semirings.",
        "description": "BFS, shortest paths, components, PageRank, betweenness and triangles "
                       "run by spbfs's semiring kernels (numba, or cupy on a GPU).",
        "functions": {name: dict(doc) for name, doc in FUNCTIONS.items()},
        "default_config": {},
    }
