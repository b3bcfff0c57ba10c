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

Messages are 1-D int64 arrays of any length (frontier ids, bitmaps viewed as
int64, compressed messages, packed pairs). Every call returns the messages
received by source rank (its own message at its own rank, not copied) and
what this rank sent (messages, 64-bit words) for the phase counters.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spbfs.mpi import comm as C
from spbfs.patterns import PATTERNS

__all__ = ["PATTERNS", "Exchange"]


def _rounds_log2(q: int) -> int:
    return (q - 1).bit_length()


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

    __slots__ = ("_butterfly", "bufs", "comm", "fanout", "q", "rank", "tag")

    def __init__(self, comm: Any, fanout: int = 2, bufs: list[np.ndarray] | None = None,
                 tag: int = 16) -> None:
        self.comm = comm
        self.q = comm.Get_size()
        self.rank = comm.Get_rank()
        self.fanout = fanout
        self.bufs = bufs
        self.tag = tag
        self._butterfly: Any = None

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
        run = _ALLGATHER.get(pattern)
        if run is None:
            raise ValueError(f"exchange pattern must be one of {PATTERNS}; got {pattern!r}")
        return run(self, msg, maxlen)

    def _allgather_p2p(self, msg: np.ndarray,
                       maxlen: int | None) -> tuple[list[np.ndarray], int, int]:
        q = self.q
        n = msg.shape[0]
        bufs = self.bufs
        if bufs is None:
            lens = [maxlen] * q if maxlen is not None else \
                C.allgather_int(self.comm, n).tolist()
            bufs = [np.empty(k, np.int64) for k in lens]
        got = C.exchange(self.comm, [msg] * q, bufs, tag=self.tag)
        return got, q - 1, (q - 1) * n

    def _allgather_collective(self, msg: np.ndarray,
                              maxlen: int | None) -> tuple[list[np.ndarray], int, int]:
        q = self.q
        n = msg.shape[0]
        sizes = C.allgather_int(self.comm, n)
        flat = C.allgatherv(self.comm, msg, sizes)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
        parts = [msg if r == self.rank else flat[bounds[r]:bounds[r + 1]] for r in range(q)]
        # Recursive doubling: log2 q rounds for the counts and for the data.
        return parts, 2 * _rounds_log2(q), int(sizes.sum()) - n

    def _allgather_butterfly(self, msg: np.ndarray,
                             maxlen: int | None) -> tuple[list[np.ndarray], int, int]:
        bf = self.butterfly()
        parts = bf.allgather(msg)
        return parts, bf.messages, bf.words  # the counters cover the latest call

    # -- personalized all-to-all -------------------------------------------------------
    def alltoall(self, pattern: str, sends: list[np.ndarray | None],
                 maxlen: int | None = None) -> tuple[list[np.ndarray], int, int]:
        """What every rank sent here, by rank; and (messages, words) this rank sent.

        ``sends[t]`` goes to rank ``t`` (None: nothing); ``sends[rank]`` is
        returned as is.
        """
        if self.q == 1:
            return [sends[0] if sends[0] is not None else np.zeros(0, np.int64)], 0, 0
        run = _ALLTOALL.get(pattern)
        if run is None:
            raise ValueError(f"exchange pattern must be one of {PATTERNS}; got {pattern!r}")
        return run(self, sends, maxlen)

    def _alltoall_p2p(self, sends: list[np.ndarray | None],
                      maxlen: int | None) -> tuple[list[np.ndarray], int, int]:
        q, rank = self.q, self.rank
        lens = [0 if s is None else s.shape[0] for s in sends]
        bufs = self.bufs
        if bufs is None:
            if maxlen is not None:
                rlens = [maxlen] * q
            else:
                got_lens, _ = C.alltoallv(self.comm, np.array(lens, np.int64),
                                          np.ones(q, np.int64))
                rlens = got_lens.tolist()
            bufs = [np.empty(k, np.int64) for k in rlens]
        got = C.exchange(self.comm, sends, bufs, tag=self.tag)
        return got, sum(1 for t in range(q) if t != rank and lens[t]), sum(lens) - lens[rank]

    def _alltoall_collective(self, sends: list[np.ndarray | None],
                             maxlen: int | None) -> tuple[list[np.ndarray], int, int]:
        q, rank = self.q, self.rank
        lens = [0 if s is None else s.shape[0] for s in sends]
        data = np.concatenate([np.zeros(0, np.int64) if s is None else s for s in sends])
        recv, rcounts = C.alltoallv(self.comm, data, np.array(lens, np.int64))
        bounds = np.concatenate([[0], np.cumsum(rcounts)]).tolist()
        own = sends[rank]
        parts = [(own if own is not None else np.zeros(0, np.int64)) if r == rank
                 else recv[bounds[r]:bounds[r + 1]] for r in range(q)]
        # Pairwise exchange: q - 1 rounds of counts and of data.
        return parts, 2 * (q - 1), sum(lens) - lens[rank]

    def _alltoall_butterfly(self, sends: list[np.ndarray | None],
                            maxlen: int | None) -> tuple[list[np.ndarray], int, int]:
        bf = self.butterfly()
        parts = bf.alltoall(sends)
        return parts, bf.messages, bf.words


#: Each registered pattern's allgather and all-to-all (``tests/test_patterns.py`` checks
#: that every name of :data:`spbfs.patterns.PATTERNS` has both).
_ALLGATHER = {"p2p": Exchange._allgather_p2p, "collective": Exchange._allgather_collective,
              "butterfly": Exchange._allgather_butterfly}
_ALLTOALL = {"p2p": Exchange._alltoall_p2p, "collective": Exchange._alltoall_collective,
             "butterfly": Exchange._alltoall_butterfly}
