"""The point-to-point exchange pattern: one round, a message to each partner.

Every rank posts one message to each of the ``q - 1`` others of its group
(the receiver learns the length from the message's status): the pattern of
Bisson, Bernaschi and Mastrostefano's 2D BFS. Registered as ``"p2p"`` in
:mod:`spbfs.patterns`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spbfs.mpi import comm as C
from spbfs.mpi.pricing import CodecSpeed, Estimate, MessageSizes, priced

__all__ = ["POINT_TO_POINT", "PointToPoint"]


class PointToPoint:
    """The ``p2p`` pattern (:class:`spbfs.patterns.ExchangePattern`)."""

    def allgather(self, ex: Any, msg: np.ndarray,
                  maxlen: int | None) -> tuple[list[np.ndarray], int, int]:
        """Every rank's ``msg`` by rank; (messages, words) sent."""
        q = ex.q
        n = msg.shape[0]
        bufs = ex.bufs
        if bufs is None:
            lens = [maxlen] * q if maxlen is not None else C.allgather_int(ex.comm, n).tolist()
            bufs = [np.empty(k, np.int64) for k in lens]
        got = C.exchange(ex.comm, [msg] * q, bufs, tag=ex.tag)
        return got, q - 1, (q - 1) * n

    def alltoall(self, ex: Any, sends: list[np.ndarray | None],
                 maxlen: int | None) -> tuple[list[np.ndarray], int, int]:
        """What every rank sent here, by rank; (messages, words) sent."""
        q, rank = ex.q, ex.rank
        lens = [0 if s is None else s.shape[0] for s in sends]
        bufs = ex.bufs
        if bufs is None:
            if maxlen is not None:
                rlens = [maxlen] * q
            else:
                got_lens, _ = C.alltoallv(ex.comm, np.array(lens, np.int64),
                                          np.ones(q, np.int64))
                rlens = got_lens.tolist()
            bufs = [np.empty(k, np.int64) for k in rlens]
        got = C.exchange(ex.comm, sends, bufs, tag=ex.tag)
        return got, sum(1 for t in range(q) if t != rank and lens[t]), sum(lens) - lens[rank]

    def gather_cost(self, q: int, enc: str, mx: float, span: int, lat: float, bw: float,
                    f: int, psp: int, codec: CodecSpeed, z: MessageSizes) -> Estimate:
        """The price of an allgather (:class:`spbfs.patterns.ExchangePattern`)."""
        # One round of a message to each partner: an allgather and an all-to-all alike.
        msgs = q - 1
        sent = (q - 1) * z.s_max
        wire = max(msgs * lat + sent / bw, msgs * lat + (q - 1) * z.s_recv / bw)
        return priced(wire, z.codec_s, msgs, sent, 1, codec)

    alltoall_cost = gather_cost  # one round of a message to each partner either way


#: The registered object (``spbfs.patterns.PATTERN_CODE["p2p"]``).
POINT_TO_POINT = PointToPoint()
