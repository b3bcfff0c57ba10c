"""The vectorized engine: whole-array steps for numpy (the reference) and cupy alike."""

from __future__ import annotations

from typing import Any

import numpy as np

from spbfs.kernels import bfs_vectorized as vk
from spbfs.search.driver import LocalEngine

__all__ = ["VectorizedEngine"]


class VectorizedEngine(LocalEngine):
    def __init__(self, xp: Any, out_block: Any, in_block: Any, deg: Any) -> None:
        self.xp = xp
        self.out_block = out_block
        self.in_block = in_block
        self.deg = deg
        self.total_degree = int(deg.sum())
        self.n = out_block.shape[0]

    def bind(self, parents: Any, levels: Any, want_levels: bool) -> None:
        self.parents, self.levels, self.want = parents, levels, want_levels

    def topdown(self, frontier: Any, depth: int) -> tuple[Any, int, int, int]:
        new, scanned, degsum = vk.topdown_step(
            self.xp, self.out_block, frontier, self.parents, self.levels, self.want, depth,
            self.deg,
        )
        return new, int(new.shape[0]), scanned, degsum

    def bottomup(self, frontier: Any, depth: int) -> tuple[Any, int, int, int]:
        front = self.xp.zeros(self.n, dtype=bool)
        front[frontier] = True
        nxt, scanned, degsum = vk.bottomup_step(
            self.xp, self.in_block, front, self.parents, self.levels, self.want, depth, self.deg
        )
        new = self.xp.flatnonzero(nxt).astype(np.int64)
        return new, int(new.shape[0]), scanned, degsum
