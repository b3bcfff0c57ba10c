"""The vectorized engine: whole-array steps for numpy (the reference) and cupy alike."""

from __future__ import annotations

from typing import Any

import numpy as np

from spbfs.kernels import bfs_vectorized as vk
from spbfs.search.driver import LocalEngine

__all__ = ["VectorizedEngine"]


class VectorizedEngine(LocalEngine):
    """Whole-array levels; ``in_deg``, where given and not ``deg`` (a directed graph),
    counts the in-edges of the unvisited vertices for the direction test."""

    def __init__(self, xp: Any, out_block: Any, in_block: Any, deg: Any,
                 in_deg: Any = None) -> None:
        self.xp = xp
        self.out_block = out_block
        self.in_block = in_block
        self.deg = deg
        self.total_degree = int(deg.sum())
        self.n = out_block.shape[0]
        self.in_deg = None if in_deg is deg else in_deg
        self.m_in = self.total_degree

    def start(self, source: int) -> tuple[Any, int]:
        """:meth:`LocalEngine.start`, and the source's in-edges counted."""
        if self.in_deg is not None:
            self.m_in = self.total_degree - int(self.in_deg[source])
        return super().start(source)

    def unvisited_in_edges(self) -> int | None:
        """The in-edges of the unvisited vertices (None where every edge goes both ways)."""
        return None if self.in_deg is None else self.m_in

    def _count_in(self, new: Any) -> None:
        if self.in_deg is not None:
            self.m_in -= int(self.in_deg[new].sum())

    def bind(self, parents: Any, levels: Any, want_levels: bool) -> None:
        self.parents, self.levels, self.want = parents, levels, want_levels

    def topdown(self, frontier: Any, depth: int) -> tuple[Any, int, int, int]:
        new, scanned, degsum = vk.topdown_step(
            self.xp, self.out_block, frontier, self.parents, self.levels, self.want, depth,
            self.deg,
        )
        self._count_in(new)
        return new, int(new.shape[0]), scanned, degsum

    def bottomup(self, frontier: Any, depth: int) -> tuple[Any, int, int, int]:
        front = self.xp.zeros(self.n, dtype=bool)
        front[frontier] = True
        nxt, scanned, degsum = vk.bottomup_step(
            self.xp, self.in_block, front, self.parents, self.levels, self.want, depth, self.deg
        )
        new = self.xp.flatnonzero(nxt).astype(np.int64)
        self._count_in(new)
        return new, int(new.shape[0]), scanned, degsum
