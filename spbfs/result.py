"""Self-describing BFS results."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from spbfs.search.checks import check_vertex

__all__ = ["BFSResult", "LevelStats", "RecordStats", "direction_string"]

DIRECTION_NAMES = ("top-down", "bottom-up")


@dataclass
class LevelStats:
    """Per-level statistics, one entry per BFS level (level 1 is the first expansion).

    Attributes
    ----------
    frontier : numpy.ndarray
        Vertices in the frontier the level started from.
    discovered : numpy.ndarray
        Vertices reached for the first time in the level.
    edges : numpy.ndarray
        Edges examined (bottom-up counts stop at the first parent found).
    direction : numpy.ndarray
        0 = top-down, 1 = bottom-up.
    seconds : numpy.ndarray
        Wall time of the level. In a search run top-down over csr rows (small
        graphs), consecutive levels of little work share one clock reading, split
        in proportion to their edges and frontier vertices: reading the clock costs
        more than such a level.
    extra : dict
        Other per-level arrays (e.g. communication counters on a grid).
    """

    frontier: np.ndarray
    discovered: np.ndarray
    edges: np.ndarray
    direction: np.ndarray
    seconds: np.ndarray
    extra: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(self.frontier.shape[0])

    def table(self) -> str:
        """The statistics as a fixed-width text table."""
        lines = [f"{'level':>5} {'dir':>9} {'frontier':>10} {'new':>10} {'edges':>12} {'ms':>9}"]
        for i in range(len(self)):
            lines.append(
                f"{i + 1:>5} {DIRECTION_NAMES[self.direction[i]]:>9} {self.frontier[i]:>10} "
                f"{self.discovered[i]:>10} {self.edges[i]:>12} {self.seconds[i] * 1e3:>9.3f}"
            )
        return "\n".join(lines)


#: The :class:`RecordStats` columns cut from the record when first read.
_LAZY_COLUMNS = frozenset(("frontier", "edges", "direction"))


class RecordStats(LevelStats):
    """:class:`LevelStats` of a compiled loop's record, kept as its copy until read.

    ``discovered``, ``seconds`` and ``extra`` are set at once (the search reads
    the first); ``frontier``, ``edges`` and ``direction`` (an int8 copy) are cut
    from the record's columns the first time one of them is read. The search of
    a few thousand vertices whose statistics nobody reads then saves their
    conversion, a microsecond of a 50 µs call. Built by :meth:`from_columns`;
    otherwise a :class:`LevelStats` like any: equality, ``repr``, copies,
    pickles and ``dataclasses.replace`` read its fields (only its ``__dict__``
    holds the record's copy instead of the three until they are read).
    """

    @classmethod
    def from_columns(cls, cols: np.ndarray, seconds: np.ndarray,
                     extra: dict[str, Any]) -> RecordStats:
        """The statistics of ``cols`` (int64 rows frontier, discovered, edges and
        direction, or the first three alone where every level ran top-down) and
        ``seconds``; ``cols`` is the caller's copy, kept."""
        stats = cls.__new__(cls)
        stats._cols = cols
        stats.discovered = cols[1]
        stats.seconds = seconds
        stats.extra = extra
        return stats

    def __getattr__(self, name: str) -> Any:
        # Called only for what the instance lacks: a column not cut yet (or no attribute).
        if name not in _LAZY_COLUMNS:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        d = self.__dict__
        cols = d.get("_cols")
        if cols is not None:
            d["frontier"], d["edges"] = cols[0], cols[2]
            d["direction"] = (cols[3].astype(np.int8) if cols.shape[0] > 3
                              else np.zeros(cols.shape[1], np.int8))
            # Dropped after the columns are set: a thread reading at the same time finds
            # the one or the others.
            d.pop("_cols", None)
        try:
            return d[name]
        except KeyError:
            raise AttributeError(f"{type(self).__name__!r} object has no attribute "
                                 f"{name!r}") from None


def direction_string(direction: np.ndarray, limit: int = 40) -> str:
    """Level directions as ``T``/``B`` letters, in runs (``T×1030 B×2``) beyond ``limit`` levels.

    A road network has a thousand levels: one letter each would fill the screen.
    """
    letters = "".join("TB"[d] for d in direction)
    if len(letters) <= limit:
        return letters
    runs: list[str] = []
    k = 0
    while k < len(letters):
        e = k
        while e < len(letters) and letters[e] == letters[k]:
            e += 1
        runs.append(f"{letters[k]}×{e - k}")
        k = e
    return " ".join(runs)


class LevelLog:
    """What the BFS drivers (one process and grid) record per level, for :class:`LevelStats`."""

    __slots__ = ("direction", "discovered", "edges", "frontier", "seconds")

    def __init__(self) -> None:
        self.frontier: list[int] = []
        self.discovered: list[int] = []
        self.edges: list[int] = []
        self.direction: list[int] = []
        self.seconds: list[float] = []

    def add(self, frontier: int, discovered: int, edges: int, direction: int,
            seconds: float) -> None:
        """One level."""
        self.frontier.append(frontier)
        self.discovered.append(discovered)
        self.edges.append(edges)
        self.direction.append(direction)
        self.seconds.append(seconds)

    def extend(self, run: tuple[list, list, list, list], direction: int) -> None:
        """Consecutive levels of one direction: (frontiers, discovered, edges, seconds)."""
        self.frontier.extend(run[0])
        self.discovered.extend(run[1])
        self.edges.extend(run[2])
        self.seconds.extend(run[3])
        self.direction.extend([direction] * len(run[0]))

    def stats(self, extra: dict[str, Any] | None = None) -> LevelStats:
        """The record as arrays."""
        return LevelStats(
            frontier=np.array(self.frontier, dtype=np.int64),
            discovered=np.array(self.discovered, dtype=np.int64),
            edges=np.array(self.edges, dtype=np.int64),
            direction=np.array(self.direction, dtype=np.int8),
            seconds=np.array(self.seconds, dtype=np.float64),
            extra={} if extra is None else extra,
        )


@dataclass
class BFSResult:
    """What :func:`spbfs.bfs` returns.

    Attributes
    ----------
    source : int
        The root.
    parents : numpy.ndarray or None
        int64; ``parents[source] == source``, ``-1`` where unreached. None when
        only levels were asked for.
    levels : numpy.ndarray or None
        int64 hop distance from the source, ``-1`` where unreached. None when
        only parents were asked for.
    stats : LevelStats
        Per-level frontier sizes, edges examined, direction and time.
    seconds : float
        Wall time of the whole search.
    config : Any
        The :class:`~spbfs.config.Config` used.
    stopped : str
        Why the search ended: ``"exhausted"``, ``"max_depth"`` or ``"target"``.
    values : numpy.ndarray or None
        A traversal over a semiring other than ``min_second`` / ``any_pair``
        (``bfs(..., semiring=...)``): each reached vertex's value at its level
        (int64 or float64); unreached vertices hold the semiring's additive
        identity for that dtype (0 for ``plus``, the largest value for ``min``).
        None for the fast searches.
    threads : int or None
        The numba threads the one-process search's parallel levels ran on
        (``Config.threads``, or what :mod:`spbfs.threads` picked for the
        moment's load); None where no such level ran (or another engine
        searched).
    """

    source: int
    parents: np.ndarray | None
    levels: np.ndarray | None
    stats: LevelStats
    seconds: float
    config: Any = None
    stopped: str = "exhausted"
    values: np.ndarray | None = None
    threads: int | None = None

    @property
    def n(self) -> int:
        """Number of vertices."""
        arr = self.parents if self.parents is not None else self.levels
        return int(arr.shape[0])

    @property
    def reached(self) -> np.ndarray:
        """Bool mask of the vertices reached."""
        if self.levels is not None:
            return self.levels >= 0
        return self.parents >= 0

    @property
    def num_reached(self) -> int:
        """Number of vertices reached (the source included)."""
        return int(np.count_nonzero(self.reached))

    @property
    def depth(self) -> int:
        """Largest level reached."""
        if self.levels is not None:
            return int(self.levels.max(initial=0))
        return int(np.count_nonzero(self.stats.discovered))

    @property
    def edges_examined(self) -> int:
        """Edges examined over all levels."""
        return int(self.stats.edges.sum())

    def path(self, target: int) -> np.ndarray:
        """Vertices on the tree path from the source to ``target`` (both included).

        Raises
        ------
        ValueError
            When parents were not computed, ``target`` is out of range, or
            ``target`` was not reached.
        """
        if self.parents is None:
            raise ValueError("path needs parents: run bfs with output='both' or 'parents'")
        target = check_vertex(target, self.n, "target")
        if self.parents[target] < 0:
            raise ValueError(f"target={target} was not reached from source {self.source}")
        out = [target]
        v = target
        while v != self.source:
            v = int(self.parents[v])
            out.append(v)
            if len(out) > self.n:
                raise RuntimeError("parent array has a cycle")
        return np.array(out[::-1], dtype=np.int64)

    def teps(self, nedges: int) -> float:
        """Traversed edges per second for a given edge count (Graph500 counts input edges)."""
        return nedges / self.seconds if self.seconds > 0 else float("inf")

    def summary(self) -> str:
        """A few lines describing the search."""
        dirs = direction_string(self.stats.direction)
        return (
            f"BFS from {self.source}: reached {self.num_reached} of {self.n} vertices in "
            f"{len(self.stats)} levels ({self.stopped}), {self.edges_examined} edges examined, "
            f"{self.seconds * 1e3:.2f} ms{self._on_threads()}; directions {dirs or '-'}"
        )

    def _on_threads(self) -> str:
        t = self.threads
        return "" if t is None else f" on {t} thread{'s' if t > 1 else ''}"

    def __repr__(self) -> str:
        return f"<BFSResult {self.summary()}>"

    def _repr_html_(self) -> str:
        rows = "".join(
            f"<tr><td>{i + 1}</td><td>{DIRECTION_NAMES[self.stats.direction[i]]}</td>"
            f"<td>{self.stats.frontier[i]}</td><td>{self.stats.discovered[i]}</td>"
            f"<td>{self.stats.edges[i]}</td><td>{self.stats.seconds[i] * 1e3:.3f}</td></tr>"
            for i in range(min(len(self.stats), 50))
        )
        more = "" if len(self.stats) <= 50 else f"<p>… {len(self.stats) - 50} more levels</p>"
        return (
            f"<p>{self.summary()}</p><table><tr><th>level</th><th>direction</th>"
            f"<th>frontier</th><th>new</th><th>edges</th><th>ms</th></tr>{rows}</table>{more}"
        )

    def to_graphblas(self) -> tuple[Any, Any]:
        """``(parents, levels)`` as sparse ``graphblas.Vector`` s (INT64), unreached left out.

        As LAGraph's BFS returns them: only the reached vertices are stored.
        Either is None when the search did not compute it (``output=``).
        Needs python-graphblas (``pip install 'spbfs[graphblas]'``).
        """
        from spbfs.interop import import_graphblas, to_vector

        what = "BFSResult.to_graphblas"
        import_graphblas(what)
        parents = None if self.parents is None else to_vector(self.parents, -1, what=what)
        levels = None if self.levels is None else to_vector(self.levels, -1, what=what)
        return parents, levels

    def save(self, path: str) -> None:
        """Write ``parents``, ``levels`` and ``values`` (where computed) to an ``.npz`` file."""
        arrays: dict[str, Any] = {"source": np.int64(self.source)}
        if self.parents is not None:
            arrays["parents"] = self.parents
        if self.levels is not None:
            arrays["levels"] = self.levels
        if self.values is not None:
            arrays["values"] = self.values
        np.savez(path, **arrays)
