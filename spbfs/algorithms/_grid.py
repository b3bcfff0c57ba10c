"""What the algorithms' grid twins share: result pieces, collective checks, routing.

Each ``dist_*`` function lives next to its one-process twin (``dist_pagerank``
in :mod:`~spbfs.algorithms.ranking`, ...; the conventions they follow are in
:mod:`spbfs.algorithms.distributed`). This module holds the pieces they have
in common:

:class:`Pieces`
    Base of the ``Dist*Result`` classes: this rank's vertices ``lo .. hi-1``
    and the collective gather into the one-process result on a root rank.
:func:`collective`, :func:`check_graph`
    Argument checks that raise :class:`~spbfs.mpi.CollectiveError` on every
    rank, with the one-process function's message, also when only one rank's
    argument is bad or the ranks' arguments differ (one small Allreduce).
:func:`first_by_key`, :func:`route_rows`
    Keep one entry per key; send rows of int64 arrays to their owners.

The grid's vector movement itself (expand, fold, lookup) is
:class:`spbfs.mpi.spmsv.GridOps`. Importing this module imports the
:mod:`spbfs.mpi` package but not mpi4py: MPI starts with the first grid.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np

from spbfs.mpi import comm as C
from spbfs.mpi.comm import CollectiveError
from spbfs.mpi.graph import DistGraph

__all__ = [
    "Pieces",
    "check_graph",
    "collective",
    "first_by_key",
    "route_rows",
]

_T = TypeVar("_T")


@dataclass
class Pieces:
    """This rank's piece ``lo .. hi-1`` of a result over ``n`` vertices."""

    lo: int
    hi: int
    n: int
    _comm: Any = field(default=None, repr=False)

    def _gather(self, piece: np.ndarray, root: int) -> np.ndarray | None:
        return C.gatherv(self._comm, piece, root=root)

    def _gather_rows(self, rows: np.ndarray, root: int) -> np.ndarray | None:
        """A ``(k, hi - lo)`` piece gathered into ``(k, n)`` on ``root``."""
        k = rows.shape[0]
        flat = C.gatherv(self._comm, np.ascontiguousarray(rows.T).reshape(-1), root=root)
        if flat is None or self._comm.Get_rank() != root:
            return None
        return np.ascontiguousarray(flat.reshape(self.n, k).T)

    def _assemble(self, root: int, make: Callable[..., _T], pieces: dict[str, Any], *,
                  rows: bool = False, **scalars: Any) -> _T | None:
        """``make(**whole arrays, **scalars)`` on ``root``, None elsewhere (collective).

        ``pieces`` maps ``make``'s argument names to this rank's pieces (a None
        piece stays None), ``(k, hi - lo)`` ones when ``rows``. They are
        gathered in the dict's order, which is the same on every rank.
        """
        gather = self._gather_rows if rows else self._gather
        whole = {name: None if p is None else gather(p, root) for name, p in pieces.items()}
        if self._comm.Get_rank() != root:
            return None
        return make(**whole, **scalars)


def collective(g: DistGraph, fn: Callable[..., _T], *args: Any) -> _T:
    """Run a local argument check on every rank of ``g``'s grid and agree on it (collective).

    One small Allreduce (:func:`spbfs.mpi.comm.agree_call`): when the check's
    TypeError/ValueError fires on any rank, every rank raises it as a
    :class:`~spbfs.mpi.CollectiveError` (the lowest failing rank's message), so a
    script that catches it goes on with all ranks in step; arguments that differ
    between ranks raise an error naming the check's parameter.
    """
    problem, out = None, None
    try:
        out = fn(*args)
    except (TypeError, ValueError) as exc:
        problem = str(exc)
    names = list(inspect.signature(fn).parameters)
    C.agree_call(g.grid.comm, problem, **dict(zip(names, args, strict=False)))
    return out  # type: ignore[return-value]


def check_graph(g: Any) -> DistGraph:
    """``g`` itself, after checking (on every rank) that it is a :class:`~spbfs.mpi.DistGraph`.

    Raises
    ------
    CollectiveError
        For anything else.
    """
    if not isinstance(g, DistGraph):
        raise CollectiveError(f"g must be a spbfs.mpi.DistGraph, got {type(g).__name__}")
    return g


def first_by_key(key: np.ndarray, val: np.ndarray | None) -> np.ndarray:
    """Indices of one entry per distinct key: the one with the smallest ``val``."""
    order = np.lexsort((val, key)) if val is not None else np.argsort(key, kind="stable")
    ks = key[order]
    first = np.ones(ks.shape[0], dtype=bool)
    first[1:] = ks[1:] != ks[:-1]
    return order[first]


def route_rows(comm: Any, owner: np.ndarray, cols: list[np.ndarray]) -> list[np.ndarray]:
    """Send row ``x`` of the int64 arrays ``cols`` to rank ``owner[x]``; return what arrived."""
    size = comm.Get_size()
    order = np.argsort(owner, kind="stable")
    counts = np.bincount(owner, minlength=size).astype(np.int64)
    buf = np.empty((owner.shape[0], len(cols)), dtype=np.int64)
    for c, a in enumerate(cols):
        buf[:, c] = a[order]
    recv, _ = C.alltoallv(comm, buf.reshape(-1), counts * len(cols))
    recv = recv.reshape(-1, len(cols))
    return [np.ascontiguousarray(recv[:, c]) for c in range(len(cols))]
