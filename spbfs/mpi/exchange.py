"""Exchange patterns: how a set of messages moves inside one processor row or column.

Two shapes of exchange occur on the grid (:mod:`spbfs.mpi.spmsv`): an
*allgather* (every rank's message reaches every rank of the communicator: the
frontier *expand* down a processor column, the bottom-up frontier *gather*)
and a *personalized all-to-all* (``sends[t]`` reaches rank ``t``: the *fold*
along a processor row, the bottom-up parent updates). Each runs by one of
the patterns registered in :mod:`spbfs.patterns` (the ``exchange`` setting of
:class:`~spbfs.Config`):

``"p2p"``
    Every rank posts one message to each partner (``q - 1`` messages, one
    round; the receiver learns the length from the message's status). The
    pattern of Bisson, Bernaschi and Mastrostefano's 2D BFS.
``"collective"``
    MPI's own collectives, as Buluç et al. (Algorithms 3 and 4) describe the
    phases: the lengths first (Allgather / Alltoall of the counts), then
    Allgatherv / Alltoallv of the data. MPICH picks the algorithm (recursive
    doubling, ring, pairwise); the counters charge the rounds that the cost
    model (:mod:`spbfs.mpi.costmodel`) assumes for it.
``"butterfly"``
    Green's butterfly network with fanout ``f`` (:mod:`spbfs.mpi.butterfly`):
    ``ceil(log_f q)`` rounds of ``f - 1`` messages each.

Each pattern is one module (:mod:`spbfs.mpi.p2p`, :mod:`spbfs.mpi.collective`,
:mod:`spbfs.mpi.butterfly`) whose object both moves and prices it, found
through the registry (:func:`spbfs.patterns.implementation`).

Messages are 1-D int64 arrays of any length (frontier ids, bitmaps viewed as
int64, compressed messages, packed pairs). Every call returns the messages
received by source rank (its own message at its own rank, not copied) and
what this rank sent (messages, 64-bit words) for the phase counters.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spbfs.patterns import PATTERNS, ExchangePattern, implementation

__all__ = ["PATTERNS", "Exchange"]


class Exchange:
    """Allgather and personalized all-to-all in one communicator, by pattern.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        A processor row or column (or any communicator).
    fanout : int
        The butterfly's fanout (``butterfly_fanout``).
    bufs : list of numpy.ndarray, optional
        Receive buffers of the ``p2p`` pattern, one per rank of ``comm``
        (each as long as the longest message that rank can send here);
        without them a call allocates its buffers, sized by ``maxlen`` or,
        without that, by the lengths exchanged first (one small collective).
    tag : int
        Message tag of the ``p2p`` pattern.
    """

    __slots__ = ("_butterfly", "_patterns", "bufs", "comm", "fanout", "q", "rank", "tag")

    def __init__(self, comm: Any, fanout: int = 2, bufs: list[np.ndarray] | None = None,
                 tag: int = 16) -> None:
        self.comm = comm
        self.q = comm.Get_size()
        self.rank = comm.Get_rank()
        self.fanout = fanout
        self.bufs = bufs
        self.tag = tag
        self._butterfly: Any = None
        self._patterns: dict[str, ExchangePattern] = {}

    def _pattern(self, name: str) -> ExchangePattern:
        """The registered pattern ``name`` (looked up once per exchange object)."""
        got = self._patterns.get(name)
        if got is None:
            got = self._patterns[name] = implementation(name)
        return got

    def butterfly(self) -> Any:
        """The communicator's :class:`~spbfs.mpi.butterfly.Butterfly` (built on first use)."""
        if self._butterfly is None:
            from spbfs.mpi.butterfly import Butterfly

            self._butterfly = Butterfly(self.comm, self.fanout)
        return self._butterfly

    # -- allgather -------------------------------------------------------------------
    def allgather(self, pattern: str, msg: np.ndarray,
                  maxlen: int | None = None) -> tuple[list[np.ndarray], int, int]:
        """Every rank's ``msg``, by rank; and (messages, words) this rank sent.

        ``maxlen`` bounds every rank's message (sizes the ``p2p`` receive
        buffers when none were given).
        """
        if self.q == 1:
            return [msg], 0, 0
        return self._pattern(pattern).allgather(self, msg, maxlen)

    # -- personalized all-to-all -------------------------------------------------------
    def alltoall(self, pattern: str, sends: list[np.ndarray | None],
                 maxlen: int | None = None) -> tuple[list[np.ndarray], int, int]:
        """What every rank sent here, by rank; and (messages, words) this rank sent.

        ``sends[t]`` goes to rank ``t`` (None: nothing); ``sends[rank]`` is
        returned as is.
        """
        if self.q == 1:
            return [sends[0] if sends[0] is not None else np.zeros(0, np.int64)], 0, 0
        return self._pattern(pattern).alltoall(self, sends, maxlen)
