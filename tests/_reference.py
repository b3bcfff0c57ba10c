"""A plain-Python BFS for the tests to compare the engines and validators against.

Shared by the test modules (pytest puts this folder on ``sys.path``). It is
deliberately the simplest queue BFS, with none of the library's code in it, so
a bug in the library cannot hide in the reference too.
"""

from __future__ import annotations

from collections import deque

import numpy as np
from numpy.typing import ArrayLike


def reference_bfs(n: int, src: ArrayLike, dst: ArrayLike, source: int,
                  directed: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """First-visitor queue BFS over an edge list.

    Parameters
    ----------
    n : int
        Number of vertices.
    src, dst : array_like of int
        The edges ``src[i] -> dst[i]``; self-loops and duplicates allowed.
    source : int
        The search key.
    directed : bool
        Follow each edge one way only; by default both ways.

    Returns
    -------
    parents, levels : numpy.ndarray of int64
        Each vertex's parent (the source its own) and its distance from the
        source; ``-1`` in both for the vertices the search does not reach.
    """
    adj: list[list[int]] = [[] for _ in range(n)]
    for u, v in zip(np.asarray(src).tolist(), np.asarray(dst).tolist(), strict=True):
        adj[u].append(v)
        if not directed:
            adj[v].append(u)
    parents = np.full(n, -1, dtype=np.int64)
    levels = np.full(n, -1, dtype=np.int64)
    parents[source], levels[source] = source, 0
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for v in adj[u]:
            # The first edge to reach v fixes its parent and level together.
            if levels[v] < 0:
                parents[v], levels[v] = u, levels[u] + 1
                queue.append(v)
    return parents, levels
