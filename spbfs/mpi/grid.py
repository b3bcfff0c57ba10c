"""The 2D distribution (plain arithmetic) and the MPI process grid.

``[0, n)`` is cut into ``p = pr * pc`` *pieces* of ``b = ceil(n / p)`` vertex
ids; piece ``k`` lives on world rank ``k = i * pc + j`` (grid position
``(i, j)``). Rank ``(i, j)`` holds the matrix block ``B[row chunk i, column
chunk j]`` with

* row chunk ``i``    = pieces ``[i * pc, (i + 1) * pc)``,
* column chunk ``j`` = pieces ``[j * pr, (j + 1) * pr)``,

as in Section 4 of the seed paper (Buluç et al.). Inside a chunk every piece is
padded to ``B64`` local ids (``b`` rounded up to a multiple of 64), so the
bitmap of a piece is a whole number of 64-bit words and chunk bitmaps are
plain concatenations of piece bitmaps. Global ids are int64 everywhere; local
ids are below ``max(pr, pc) * B64``.

:class:`Distribution` needs no MPI; :class:`ProcessGrid` imports ``mpi4py``
only when it is constructed.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

import numpy as np

from spbfs.config import Config, default_config
from spbfs.mpi.comm import (
    WaitPolicy,
    agree_call,
    install_excepthook,
    mpi,
    set_policy,
)

__all__ = ["Distribution", "ProcessGrid", "auto_grid_shape", "parse_grid"]


def auto_grid_shape(p: int) -> tuple[int, int]:
    """Grid shape for ``p`` ranks: square when possible, else slightly tall.

    Parameters
    ----------
    p : int
        Number of ranks (>= 1).

    Returns
    -------
    tuple of int
        ``(pr, pc)`` with ``pr * pc == p``, ``pc`` the largest divisor of ``p``
        not above ``sqrt(p)`` (so ``pr >= pc``, which Section 8.5 of the paper
        found best).

    Raises
    ------
    ValueError
        For ``p < 1``.

    Examples
    --------
    >>> [auto_grid_shape(p) for p in (1, 2, 4, 6, 8)]
    [(1, 1), (2, 1), (2, 2), (3, 2), (4, 2)]
    """
    if isinstance(p, bool) or not isinstance(p, int | np.integer) or p < 1:
        raise ValueError(f"the number of ranks must be a positive integer, got {p!r}")
    p = int(p)
    pc = math.isqrt(p)
    while p % pc:
        pc -= 1
    return p // pc, pc


def parse_grid(shape: Any) -> tuple[int, int]:
    """``"RxC"``, ``"R×C"`` or ``(R, C)`` as a pair of positive ints.

    Raises
    ------
    ValueError
        For anything else.
    """
    if isinstance(shape, str):
        parts: list[Any] = shape.lower().replace("×", "x").split("x")
    else:
        try:
            parts = list(shape)
        except TypeError:
            parts = []
    try:
        if len(parts) != 2:
            raise ValueError
        pr, pc = (int(x) for x in parts)
    except (TypeError, ValueError):
        raise ValueError(f"grid must look like 'RxC' (e.g. '2x3') or (R, C); got {shape!r}") \
            from None
    if pr < 1 or pc < 1:
        raise ValueError(f"grid dimensions must be positive; got {shape!r}")
    return pr, pc


class Distribution:
    """Which rank owns which vertex ids and matrix entries on a ``pr x pc`` grid.

    Parameters
    ----------
    n : int
        Number of vertices.
    pr, pc : int
        Grid dimensions.

    Attributes
    ----------
    n, pr, pc, p : int
        Vertices, grid rows, grid columns, ranks.
    b : int
        Ids per piece, ``ceil(n / p)`` (the last pieces may be shorter or empty).
    B64 : int
        Padded piece length in local ids: ``b`` rounded up to a multiple of 64.
    bw : int
        64-bit words in the bitmap of one piece (``B64 / 64``).

    Examples
    --------
    >>> d = Distribution(24, 2, 3)
    >>> d.b, list(d.row_chunk_pieces(1)), list(d.col_chunk_pieces(2))
    (4, [3, 4, 5], [4, 5])
    """

    def __init__(self, n: int, pr: int, pc: int) -> None:
        n, pr, pc = int(n), int(pr), int(pc)
        if n < 0 or pr < 1 or pc < 1:
            raise ValueError(f"need n >= 0 and a positive grid, got n={n}, grid {pr}x{pc}")
        self.n, self.pr, self.pc = n, pr, pc
        self.p = pr * pc
        self.b = max(1, -(-n // self.p))
        self.B64 = -(-self.b // 64) * 64
        self.bw = self.B64 // 64

    # -- pieces ------------------------------------------------------------------
    def piece_range(self, k: int) -> tuple[int, int]:
        """Global ids ``[lo, hi)`` of piece ``k`` (empty past ``n``)."""
        k = int(k)
        return min(k * self.b, self.n), min((k + 1) * self.b, self.n)

    def piece_sizes(self) -> np.ndarray:
        """Number of ids in every piece (int64, length ``p``)."""
        k = np.arange(self.p + 1, dtype=np.int64)
        edges = np.minimum(k * self.b, self.n)
        return np.diff(edges)

    def piece_of(self, v: Any) -> Any:
        """Piece (= owning rank) of global ids ``v``."""
        return np.asarray(v, dtype=np.int64) // self.b if not isinstance(v, int | np.integer) \
            else int(v) // self.b

    def row_chunk_pieces(self, i: int) -> range:
        """Pieces of row chunk ``i``: ``[i * pc, (i + 1) * pc)``."""
        return range(i * self.pc, (i + 1) * self.pc)

    def col_chunk_pieces(self, j: int) -> range:
        """Pieces of column chunk ``j``: ``[j * pr, (j + 1) * pr)``."""
        return range(j * self.pr, (j + 1) * self.pr)

    def row_chunk_of(self, v: Any) -> Any:
        """Row chunk (grid row) holding global ids ``v``."""
        return self.piece_of(v) // self.pc

    def col_chunk_of(self, v: Any) -> Any:
        """Column chunk (grid column) holding global ids ``v``."""
        return self.piece_of(v) // self.pr

    def block_owner(self, rows: Any, cols: Any) -> Any:
        """Rank holding the entries ``B[rows, cols]``."""
        return self.row_chunk_of(rows) * self.pc + self.col_chunk_of(cols)

    def column_layout_owner(self, k: int) -> int:
        """Rank that holds piece ``k`` in the column layout (the transpose partner).

        Piece ``k = j * pr + i`` of column chunk ``j`` goes to rank ``(i, j)``, so an
        Allgatherv down processor column ``j`` assembles column chunk ``j``.
        """
        k = int(k)
        return (k % self.pr) * self.pc + k // self.pr

    # -- local ids ---------------------------------------------------------------
    def local_rows(self, v: Any, i: int) -> np.ndarray:
        """Padded local ids, inside row chunk ``i``, of global ids ``v``."""
        v = np.asarray(v, dtype=np.int64)
        q, r = np.divmod(v, self.b)
        return (q - int(i) * self.pc) * self.B64 + r

    def local_cols(self, v: Any, j: int) -> np.ndarray:
        """Padded local ids, inside column chunk ``j``, of global ids ``v``."""
        v = np.asarray(v, dtype=np.int64)
        q, r = np.divmod(v, self.b)
        return (q - int(j) * self.pr) * self.B64 + r

    def global_rows(self, local: Any, i: int) -> np.ndarray:
        """Global ids of padded local ids of row chunk ``i``."""
        local = np.asarray(local, dtype=np.int64)
        q, r = np.divmod(local, self.B64)
        return (q + int(i) * self.pc) * self.b + r

    def global_cols(self, local: Any, j: int) -> np.ndarray:
        """Global ids of padded local ids of column chunk ``j``."""
        local = np.asarray(local, dtype=np.int64)
        q, r = np.divmod(local, self.B64)
        return (q + int(j) * self.pr) * self.b + r

    def local_dtype(self) -> np.dtype:
        """int32 when every local id and bit position fits, else int64."""
        big = max(self.pr, self.pc) * self.B64
        return np.dtype(np.int32 if big < 2**31 else np.int64)

    def __repr__(self) -> str:
        return (f"Distribution(n={self.n}, grid {self.pr}x{self.pc}, b={self.b}, "
                f"B64={self.B64})")


class ProcessGrid:
    """A ``pr x pc`` grid over an MPI communicator (collective).

    Parameters
    ----------
    shape : str or tuple of int, optional
        ``"RxC"`` or ``(R, C)``; default :func:`auto_grid_shape` of the rank count.
    comm : mpi4py.MPI.Comm, optional
        Defaults to ``MPI.COMM_WORLD``; the grid works on a duplicate.
    config : Config, optional
        Where the grid's :attr:`wait` policy comes from (its ``wait``);
        default :func:`spbfs.config.default_config` (the ``SPBFS_*`` environment).
    watchdog : float, optional
        Seconds one wait on the grid may last before it raises
        :class:`~spbfs.mpi.comm.WaitTimeout` (default
        :data:`~spbfs.mpi.comm.WATCHDOG_S`, an hour).

    Attributes
    ----------
    comm : mpi4py.MPI.Comm
        All ranks of the grid.
    row_comm, col_comm : mpi4py.MPI.Comm
        The ranks of this rank's processor row (``pc`` of them, ordered by ``j``)
        and processor column (``pr``, ordered by ``i``).
    rank, size, pr, pc : int
        This rank, the rank count and the grid dimensions.
    i, j : int
        This rank's grid row and column (``rank = i * pc + j``).
    transpose_dest, transpose_src : int
        Where this rank sends its vector piece for the column layout, and whose
        piece it receives.
    local_size, local_rank : int
        Ranks sharing this rank's machine, and this rank's number among them.
    cpu : int or None
        The core :meth:`bind_to_core` pinned this rank to.
    wait : WaitPolicy
        How this rank waits for communication on the grid's communicators.

    Notes
    -----
    Importing :mod:`spbfs.mpi` installed
    :func:`~spbfs.mpi.comm.install_excepthook` (a grid makes sure of it): an
    exception that no code catches, or the end of the script, on any rank
    ends the whole job instead of leaving the other ranks waiting in a
    collective.

    Raises
    ------
    CollectiveError
        On every rank alike when the shape is malformed or does not multiply to
        the rank count (``grid 2x3 needs 6 ranks, got 4``), or when ranks pass
        different shapes or configs.
    """

    def __init__(self, shape: str | tuple[int, int] | None = None, comm: Any = None, *,
                 config: Config | None = None, watchdog: float | None = None) -> None:
        MPI = mpi()
        # Before anything can fail on one rank only: uncaught, such an error would
        # leave the other ranks waiting in their next collective forever.
        install_excepthook()
        base = MPI.COMM_WORLD if comm is None else comm
        size = base.Get_size()
        problem = None
        try:
            pr, pc = auto_grid_shape(size) if shape is None else parse_grid(shape)
            if pr * pc != size:
                problem = f"grid {pr}x{pc} needs {pr * pc} ranks, got {size}"
            wait = WaitPolicy.from_config(default_config() if config is None else config)
            if watchdog is not None:
                if not watchdog > 0:
                    raise ValueError(f"watchdog must be a positive number of seconds, "
                                     f"got {watchdog!r}")
                wait = dataclasses.replace(wait, watchdog=float(watchdog))
        except (TypeError, ValueError) as exc:
            problem = str(exc)
        # A polled collective first (MPI's Dup and Split below wait without a watchdog):
        # a rank that raised or ended before this call ends the job here, and ranks
        # with different arguments get an error instead of different grids.
        agree_call(base, problem, shape=None if shape is None else str(shape),
                   config=config, watchdog=watchdog)
        if base is not MPI.COMM_WORLD:
            # A wait on this grid looks for ended ranks among its own members only.
            group, world = base.Get_group(), MPI.COMM_WORLD.Get_group()
            members = group.Translate_ranks(list(range(size)), world)
            group.Free()
            world.Free()
            wait = dataclasses.replace(wait, members=tuple(int(r) for r in members))
        self.comm = base.Dup()
        self.rank = self.comm.Get_rank()
        self.size = size
        self.pr, self.pc = pr, pc
        self.i, self.j = divmod(self.rank, pc)
        self.row_comm = self.comm.Split(self.i, self.j)
        self.col_comm = self.comm.Split(self.j, self.i)
        k = self.rank
        self.transpose_dest = (k % pr) * pc + k // pr
        self.transpose_src = self.j * pr + self.i
        shared = self.comm.Split_type(MPI.COMM_TYPE_SHARED, key=self.rank)
        self.local_size = shared.Get_size()
        self.local_rank = shared.Get_rank()
        shared.Free()
        self.cpu: int | None = None  # the core this rank is pinned to (bind_to_core)
        self.wait = wait
        for c in (self.comm, self.row_comm, self.col_comm):
            set_policy(c, self.wait)

    @property
    def shape(self) -> tuple[int, int]:
        """``(pr, pc)``."""
        return self.pr, self.pc

    def __str__(self) -> str:
        return f"{self.pr}x{self.pc}"

    def __repr__(self) -> str:
        return f"ProcessGrid({self.pr}x{self.pc}, rank {self.rank} at ({self.i}, {self.j}))"

    def bind_to_core(self, mode: str = "auto", threads: int = 1) -> int | None:
        """Pin this rank to one core per the ``bind`` setting of :class:`spbfs.Config`.

        The core is number ``local_rank`` (round robin) of those this process
        may use. ``auto`` pins only an oversubscribed machine's ranks running
        one thread each. Why: on 2 cores, 4 unpinned ranks often had two waiting
        ranks share one core while two working ranks shared the other; pinned,
        a waiting rank's yield always hands its core to a rank with work
        (benchmarks page, "Rank pinning"). Pin before numba starts
        its threads: they inherit the mask. Returns the core, or None.
        """
        import os

        allowed = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
        if mode == "none" or not allowed:
            return None
        if mode == "auto" and (self.local_size <= len(allowed) or threads != 1):
            return None
        cpu = allowed[self.local_rank % len(allowed)]
        os.sched_setaffinity(0, {cpu})
        self.cpu = cpu
        return cpu

    def free(self) -> None:
        """Release the communicators (collective); the grid is unusable afterwards."""
        for c in (self.row_comm, self.col_comm, self.comm):
            if c is not None:
                c.Free()
        self.row_comm = self.col_comm = self.comm = None


def as_grid(grid: Any, config: Any = None) -> ProcessGrid:
    """A :class:`ProcessGrid` from a grid, a shape, the config's grid or the rank count."""
    if isinstance(grid, ProcessGrid):
        return grid
    if grid is None and config is not None and getattr(config, "grid", None) is not None:
        grid = config.grid
    return ProcessGrid(grid, config=config)
