"""What a search on the grid returns on every rank: :class:`DistBFSResult`.

Its own module, below both grid engines (:mod:`spbfs.mpi.bfs`, the direction-optimizing
BFS, and :mod:`spbfs.mpi.semiring_engine`, any other semiring), which both return it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spbfs.direction import BOTTOM_UP
from spbfs.io.parallel_npz import save_npz
from spbfs.mpi import comm as C
from spbfs.mpi.graph import DistGraph
from spbfs.result import BFSResult, LevelStats, direction_string

__all__ = ["DistBFSResult"]


@dataclass
class DistBFSResult:
    """What :func:`spbfs.mpi.bfs` returns on every rank.

    Attributes
    ----------
    source : int
        The root.
    parents, levels : numpy.ndarray
        This rank's piece (vertices ``lo .. hi-1``), int64, ``-1`` where unreached;
        ``parents`` is None for ``semiring="any_pair"`` and generic semirings,
        ``levels`` None for :func:`spbfs.bfs`'s ``output="parents"``.
    lo, hi : int
        The global ids of the piece.
    n : int
        Number of vertices.
    stats : LevelStats
        Global per-level counts (the same on every rank); ``stats.extra`` holds
        ``"messages"`` and ``"words"``: per phase, per-level totals over all ranks.
    seconds : float
        Wall time of the search on this rank.
    stopped : str
        ``"exhausted"``, ``"max_depth"`` or ``"target"``.
    phase_seconds : dict
        Seconds per phase (communication and local), mean over the ranks.
    config : Config
        The configuration the search ran with.
    grid_shape : tuple of int
        ``(pr, pc)``.
    values : numpy.ndarray or None
        A generic semiring's values of this rank's piece (see
        :attr:`spbfs.BFSResult.values`: the additive identity where unreached);
        None for the fast searches. Such a search keeps no communication
        counters (``stats.extra`` holds empty ``"messages"`` and ``"words"``).
    exchange_log : list of dict
        This rank's record of what the cost model chose, one entry per
        exchange it decided (``exchange="auto"`` or ``frontier_encoding="auto"``
        where the model decides: across machines, on an emulated network or a
        given link; on one machine ``auto`` is the size rule and records nothing):
        ``level``, ``phase``, ``pattern``, ``encoding``, ``estimated_s`` (the
        model's seconds for the choice) and ``actual_s`` (the step's time).
        Empty when every choice was fixed.
    """

    source: int
    parents: np.ndarray | None
    levels: np.ndarray | None
    lo: int
    hi: int
    n: int
    stats: LevelStats
    seconds: float
    stopped: str
    phase_seconds: dict[str, float] = field(default_factory=dict)
    config: Any = None
    grid_shape: tuple[int, int] = (1, 1)
    values: np.ndarray | None = None
    exchange_log: list[dict[str, Any]] = field(default_factory=list)
    _comm: Any = None

    @property
    def reached(self) -> int:
        """Vertices reached over all ranks, the source included."""
        return 1 + int(self.stats.discovered.sum())

    @property
    def bottomup_levels(self) -> int:
        """Levels run bottom-up."""
        return int(np.count_nonzero(self.stats.direction == BOTTOM_UP))

    def words_by_phase(self) -> dict[str, int]:
        """64-bit words sent per communication phase, summed over levels and ranks."""
        return {ph: int(a.sum()) for ph, a in self.stats.extra["words"].items()}

    def messages_by_phase(self) -> dict[str, int]:
        """Messages sent per communication phase, summed over levels and ranks."""
        return {ph: int(a.sum()) for ph, a in self.stats.extra["messages"].items()}

    def seconds_by_phase(self) -> dict[str, float]:
        """Seconds per phase, mean over ranks (same as :attr:`phase_seconds`)."""
        return dict(self.phase_seconds)

    def summary(self) -> str:
        """A few lines describing the search (global numbers; no communication)."""
        dirs = direction_string(self.stats.direction)
        w = sum(self.words_by_phase().values())
        pr, pc = self.grid_shape
        return (
            f"BFS from {self.source}: reached {self.reached} of {self.n} vertices in "
            f"{len(self.stats)} levels ({self.stopped}), {int(self.stats.edges.sum())} edges "
            f"examined, {self.seconds * 1e3:.2f} ms on a {pr}x{pc} grid, {w} words sent; "
            f"directions {dirs or '-'}"
        )

    def gather(self, root: int = 0) -> BFSResult | None:
        """The whole result as a :class:`spbfs.BFSResult` on ``root`` (collective).

        Returns None on the other ranks.
        """
        # None or not is the same on every rank: the collectives match.
        parents = None if self.parents is None else C.gatherv(self._comm, self.parents, root=root)
        levels = None if self.levels is None else C.gatherv(self._comm, self.levels, root=root)
        values = None if self.values is None else C.gatherv(self._comm, self.values, root=root)
        if self._comm.Get_rank() != root:
            return None
        return BFSResult(source=self.source, parents=parents, levels=levels, stats=self.stats,
                         seconds=self.seconds, config=self.config, stopped=self.stopped,
                         values=values)

    def validate(self, graph: DistGraph) -> dict[str, Any]:
        """Check the Graph500 rules, distributed (collective).

        Returns
        -------
        dict
            ``reached``, ``max_level``, ``component_edges`` (input tuples inside
            the searched component, the TEPS edge count) and ``directed``, as
            :func:`spbfs.validate.validate_bfs_tree` returns them.

        Raises
        ------
        spbfs.validate.ValidationError
            On every rank, with the same message, when a rule is broken.
        """
        from spbfs.mpi.validate import validate_distributed

        if self.parents is None:
            raise ValueError("validate needs parents: search with semiring='min_second'")
        if self.levels is None:
            raise ValueError("validate needs levels: search with output='both'")
        return validate_distributed(graph, self)

    def save(self, path: str | os.PathLike[str]) -> None:
        """Write ``source``, ``parents``, ``levels`` and ``values`` (where computed) in parallel.

        Collective: every rank writes its pieces with MPI-IO into an
        uncompressed zip laid out by rank 0, which ``numpy.load`` reads like
        the output of :meth:`spbfs.BFSResult.save`.

        Raises
        ------
        ValueError
            For float values (the writer lays out int64 arrays).
        """
        if self.values is not None and self.values.dtype != np.int64:
            # The same dtype on every rank, so every rank raises.
            raise ValueError(f"save writes int64 arrays; these values are {self.values.dtype} "
                             "(gather() them and use BFSResult.save)")
        arrays = [("parents", self.parents), ("levels", self.levels), ("values", self.values)]
        save_npz(self._comm, os.fspath(path), self.source, self.n, self.lo,
                  [(name, a) for name, a in arrays if a is not None])

    def __repr__(self) -> str:
        return f"<DistBFSResult {self.summary()}>"
