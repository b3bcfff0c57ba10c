"""The argument checks every search shares: vertex ids and depth limits.

One place, so that one process, the GPU, the grid and the algorithms built on
them refuse a bad argument with the same words.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["check_max_depth", "check_vertex"]


def check_vertex(v: Any, n: int, name: str = "source") -> int:
    """Return ``v`` as an int after checking it is a vertex id of an ``n``-vertex graph.

    Raises
    ------
    TypeError
        For anything but an integer (``bool`` included: ``True`` is not a vertex).
    ValueError
        For an id outside ``0 .. n-1``.
    """
    if isinstance(v, bool) or not isinstance(v, int | np.integer):
        raise TypeError(f"{name} must be an integer vertex id, got {type(v).__name__}")
    v = int(v)
    if not 0 <= v < n:
        raise ValueError(f"{name}={v} is out of range for a graph with {n} vertices")
    return v


def check_max_depth(max_depth: Any) -> int | None:
    """Return ``max_depth`` (None or an int >= 0) after checking it.

    Raises
    ------
    TypeError
        For anything but None or an integer.
    ValueError
        For a negative depth.
    """
    if max_depth is None:
        return None
    if isinstance(max_depth, bool) or not isinstance(max_depth, int | np.integer):
        raise TypeError(f"max_depth must be an integer, got {type(max_depth).__name__}")
    if max_depth < 0:
        raise ValueError(f"max_depth must be >= 0, got {max_depth}")
    return int(max_depth)
