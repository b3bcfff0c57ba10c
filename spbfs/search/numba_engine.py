"""The numba engine: one process on the CPU, the kernels of :mod:`spbfs.kernels.bfs_numba`.

Frontiers are sorted id arrays (sorted frontiers keep the smallest parent
without atomics and make the next gather stream); the bottom-up step keeps its
own bitmap of the frontier and the list of candidates still without a parent,
so a later sweep touches only what is left.
"""

from __future__ import annotations

import threading
from typing import Any

import numpy as np

from spbfs.direction import DirectionPolicy
from spbfs.kernels import bfs_numba as nbk
from spbfs.search.driver import LocalEngine

__all__ = ["NumbaEngine", "ScratchPool", "nonempty_columns"]


def nonempty_columns(block: Any) -> np.ndarray:
    """Columns of a csr block that have entries: the first bottom-up sweep's candidates.

    Kept per graph (4 bytes per non-isolated vertex below 2**31 vertices) so
    that sweep never tests an isolated vertex.
    """
    ptr = block.ptr
    dt = np.int32 if ptr.shape[0] <= 2**31 else np.int64
    return np.flatnonzero(ptr[1:] != ptr[:-1]).astype(dt)


class ScratchPool:
    """The scratch arrays of a graph's last finished search, for its next search.

    Fresh n-long arrays cost a page fault per 4 KiB the first time they are
    written (milliseconds at a million vertices, taken inside the parallel
    sweep); repeated searches on one graph reuse them. One set is kept per
    graph, and none above ``max_bytes``: next to such searches the faults are cheap.
    """

    max_bytes = 1 << 28

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._item: tuple[np.ndarray, ...] | None = None

    def take(self, n: int, nc: int) -> tuple[np.ndarray, ...]:
        """Four int64 arrays of lengths ``n, n, nc, nc`` (reused when they fit)."""
        with self._lock:
            item, self._item = self._item, None
        if item is not None and item[0].shape[0] == n and item[2].shape[0] == nc:
            return item
        return (np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
                np.empty(nc, dtype=np.int64), np.empty(nc, dtype=np.int64))

    def give(self, item: tuple[np.ndarray, ...]) -> None:
        """Keep ``item`` for the next :meth:`take`."""
        if sum(a.nbytes for a in item) <= self.max_bytes:
            with self._lock:
                self._item = item


class NumbaEngine(LocalEngine):
    xp = np

    def __init__(self, out_block: Any, in_block: Any, deg: np.ndarray,
                 pool: ScratchPool, slots: np.ndarray | None = None) -> None:
        import numba

        self.out = out_block.kernel_view
        self.inn = in_block.kernel_view
        self.deg = deg
        # Undirected: the degree bottom-up needs is the in-block's own hi - lo (empty = use it).
        self.in_deg = deg[:0] if in_block is out_block else deg
        # deg counts the columns of the out-block: its sum is the block's nonzero count,
        # read off the pointers instead of summing n degrees on every search.
        ptr = self.out[0]
        self.total_degree = int(ptr[-1]) - int(ptr[0]) if ptr.shape[0] else int(deg.sum())
        n = self.n = out_block.shape[0]
        nc = in_block.nzc if in_block.format == "dcsc" else n
        self.pool = pool
        self.buf, self.found, self.cand, self.cand2 = pool.take(n, nc)
        self.ncand = -1  # the first bottom-up level lists the candidates as it goes
        self.slots = slots
        # The frontier as a bitmap: 1 bit per vertex stays in cache where a byte map would not.
        self.bits = np.zeros((n + 63) // 64, dtype=np.uint64)
        # Top-down marks its new vertices here to hand them on sorted without a sort.
        self.mark = np.zeros((n + 63) // 64, dtype=np.uint64)
        self.in_bits: np.ndarray = self.buf[:0].copy()  # ids whose bits are set
        # Per-level statistics of fused top-down runs (frontier, new, edges, seconds).
        self.stats = (np.empty(4096, np.int64), np.empty(4096, np.int64),
                      np.empty(4096, np.int64), np.empty(4096, np.float64))
        # A few chunks per thread balance the skewed degrees of power-law graphs.
        self.nchunks = 4 * numba.get_num_threads()
        self.nparts = numba.get_num_threads()

    def bind(self, parents: np.ndarray, levels: np.ndarray, want_levels: bool) -> None:
        self.parents, self.levels, self.want = parents, levels, want_levels

    def release(self) -> None:
        """Hand the scratch arrays back for the graph's next search."""
        self.pool.give((self.buf, self.found, self.cand, self.cand2))

    def topdown(self, frontier: np.ndarray, depth: int) -> tuple[Any, int, int, int]:
        ptr, ind, jc, dcsc = self.out
        k, scanned, degsum = nbk.topdown_step(
            ptr, ind, jc, dcsc, frontier, self.parents, self.levels, self.want, depth,
            self.deg, self.buf, self.mark, self.nparts,
        )
        # Sorted frontiers keep min-parent semantics and make the next gather stream.
        return nbk.sorted_new(self.buf, k, self.mark), k, scanned, degsum

    def topdown_levels(
        self, frontier: np.ndarray, depth: int, m_u: int, m_f: int, policy: DirectionPolicy,
        max_depth: int | None, target: int | None,
    ) -> tuple[np.ndarray, tuple[Any, ...], int, int, int, bool]:
        """Several top-down levels in one compiled call (see ``topdown_levels``).

        ``m_f`` is the degree sum of ``frontier``.
        """
        ptr, ind, jc, dcsc = self.out
        st = self.stats
        cur, nlev, depth, m_u, m_f, reason = nbk.topdown_levels(
            ptr, ind, jc, dcsc, frontier, self.parents, self.levels, self.want, depth, self.deg,
            self.buf, self.mark, self.nparts, m_u, m_f, *policy.fused_switch,
            -1 if max_depth is None else max_depth, -1 if target is None else target,
            st[0], st[1], st[2], st[3],
        )
        run = tuple(a[:nlev].tolist() for a in st)
        return cur, run, depth, m_u, m_f, reason == 1

    def bottomup(self, frontier: np.ndarray, depth: int) -> tuple[Any, int, int, int]:
        ptr, ind, jc, dcsc = self.inn
        if frontier is not self.in_bits:
            # Words are cleared whole, so clear the old frontier before setting the new one.
            nbk.clear_bits(self.in_bits, self.bits, self.nparts)
            nbk.set_bits(frontier, self.bits, self.nparts)
            self.in_bits = frontier
        nxt, self.ncand, scanned, degsum, cand = nbk.bottomup_step(
            ptr, ind, jc, dcsc, self.bits, self.parents, self.levels, self.want, depth,
            self.in_deg, self.cand, self.ncand, self.found, self.nchunks, self.cand2, self.slots,
        )
        if cand is not self.cand:
            self.cand, self.cand2 = cand, self.cand
        # The bitmap of nxt is made when a bottom-up level needs it, not before.
        return nxt, int(nxt.shape[0]), scanned, degsum


