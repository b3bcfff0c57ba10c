"""The collective exchange pattern: MPI's Allgatherv and Alltoallv after the lengths.

As Buluç et al. (Algorithms 3 and 4) describe the phases: the lengths first
(Allgather / Alltoall of the counts), then Allgatherv / Alltoallv of the
data. MPICH picks the algorithm (recursive doubling, ring, pairwise); the
counters charge the rounds that the price below assumes for it. Registered
as ``"collective"`` in :mod:`spbfs.patterns`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spbfs.mpi import comm as C
from spbfs.mpi.pricing import RING_BYTES, CodecSpeed, Estimate, MessageSizes, log_rounds, priced
from spbfs.patterns import encoding

__all__ = ["COLLECTIVE", "Collective"]


class Collective:
    """The ``collective`` pattern (:class:`spbfs.patterns.ExchangePattern`)."""

    def allgather(self, ex: Any, msg: np.ndarray,
                  maxlen: int | None) -> tuple[list[np.ndarray], int, int]:
        """Every rank's ``msg`` by rank; (messages, words) sent."""
        q = ex.q
        n = msg.shape[0]
        sizes = C.allgather_int(ex.comm, n)
        flat = C.allgatherv(ex.comm, msg, sizes)
        bounds = np.concatenate([[0], np.cumsum(sizes)]).tolist()
        parts = [msg if r == ex.rank else flat[bounds[r]:bounds[r + 1]] for r in range(q)]
        # Recursive doubling: log2 q rounds for the counts and for the data.
        return parts, 2 * (q - 1).bit_length(), int(sizes.sum()) - n

    def alltoall(self, ex: Any, sends: list[np.ndarray | None],
                 maxlen: int | None) -> tuple[list[np.ndarray], int, int]:
        """What every rank sent here, by rank; (messages, words) sent."""
        q, rank = ex.q, ex.rank
        lens = [0 if s is None else s.shape[0] for s in sends]
        data = np.concatenate([np.zeros(0, np.int64) if s is None else s for s in sends])
        recv, rcounts = C.alltoallv(ex.comm, data, np.array(lens, np.int64))
        bounds = np.concatenate([[0], np.cumsum(rcounts)]).tolist()
        own = sends[rank]
        parts = [(own if own is not None else np.zeros(0, np.int64)) if r == rank
                 else recv[bounds[r]:bounds[r + 1]] for r in range(q)]
        # Pairwise exchange: q - 1 rounds of counts and of data.
        return parts, 2 * (q - 1), sum(lens) - lens[rank]

    def gather_cost(self, q: int, enc: str, mx: float, span: int, lat: float, bw: float,
                    f: int, psp: int, codec: CodecSpeed, z: MessageSizes) -> Estimate:
        """The price of an allgather (:class:`spbfs.patterns.ExchangePattern`)."""
        lg = log_rounds(q, 2)
        # Messages of a fixed length (a bitmap's) need no counts.
        counts_rounds = 0 if encoding(enc).bitmap_sized else lg
        if q * z.s_avg < RING_BYTES:  # recursive doubling / Bruck
            msgs = lg
            sent = max((q - 1) * z.s_avg, z.s_max)
            wire = lg * lat + max(sent, (q - 1) * z.s_recv) / bw
        else:  # ring: every round waits for the largest piece
            msgs = q - 1
            sent = (q - 1) * z.s_avg
            wire = (q - 1) * (lat + z.s_max / bw)
        msgs += counts_rounds
        wire += counts_rounds * lat + 8 * (q - 1) / bw
        sent += 8 * counts_rounds
        return priced(wire, z.codec_s, msgs, sent, msgs, codec)

    def alltoall_cost(self, q: int, enc: str, mx: float, span: int, lat: float, bw: float,
                      f: int, psp: int, codec: CodecSpeed, z: MessageSizes) -> Estimate:
        """The price of a personalized all-to-all (:class:`spbfs.patterns.ExchangePattern`)."""
        lg = log_rounds(q, 2)
        msgs = (q - 1) + lg
        sent = (q - 1) * z.s_max + 8 * (q - 1)
        wire = lg * lat + 8 * (q - 1) / bw + (q - 1) * (lat + max(z.s_max, z.s_recv) / bw)
        return priced(wire, z.codec_s, msgs, sent, msgs, codec)


#: The registered object (``spbfs.patterns.PATTERN_CODE["collective"]``).
COLLECTIVE = Collective()
