"""Butterfly exchanges: allgather and personalized all-to-all in ``ceil(log_f q)`` rounds.

Oded Green's *ButterFly BFS: An Efficient Communication Pattern for Multi Node
Traversals* (Section 3) replaces the all-to-all of a
frontier synchronization with a butterfly network: in round ``k`` a rank
exchanges with the ranks ``f**k`` apart, so after round ``k`` it holds the data
of ``f**(k+1)`` ranks, and ``q`` ranks are synchronized in ``ceil(log_f q)``
rounds of ``f - 1`` messages each instead of one round of ``q - 1``
("Fanout & Trade-offs": depth ``log_f(CN)``, about ``f log_f(CN)`` messages per
compute node).

Fanout
    ``fanout`` here is the radix of the network: the number of ranks whose data
    merges in one round, the rank itself included, so a rank sends ``f - 1``
    messages a round. The paper's "fanout of one" (one partner a round,
    ``log_2`` rounds) is ``fanout=2`` here; its "fanout of four" (ranks 0-3
    synchronized after the first round, ``log_4`` rounds) is ``fanout=4``, for
    which the paper counts four messages a round where this module counts the
    three that leave the rank. ``fanout >= q`` is one round of ``q - 1``
    messages: the point-to-point exchange.

Rounds and messages
    Round ``k`` (step ``s = f**k``) uses the partners ``d * s`` apart for
    ``d = 1 .. min(f - 1, (q - 1) // s)``; every rank sends (and receives)
    that many messages, so a call costs ``sum_k min(f - 1, ceil(q / f**k) - 1)``
    messages per rank, ``(f - 1) log_f q`` for ``q`` a power of ``f`` (and
    always at most ``q - 1``). :func:`predict` gives the rounds, the messages
    and words of every round and the buffer sizes without MPI.

Any number of ranks
    The paper states its pseudo-code and analysis for ``q`` a power of two and
    notes that other counts only add bookkeeping. Here the partners are taken
    modulo ``q`` (the dissemination form of the butterfly, Bruck et al. 1997):
    rank ``r`` sends to ``r - d s`` and receives from ``r + d s`` (mod ``q``),
    and the last round only sends what the receiver still lacks. For
    ``q = f**K`` this has the butterfly's rounds, partners per round and
    per-round volumes (only the partner labels differ: ``r ± d s`` instead of
    replacing digit ``k`` of ``r``); for other ``q`` it needs no extra rounds
    and no idle ranks, and every rank sends the same number of messages.

:meth:`Butterfly.allgather` (the frontier *expand* down a processor column, the
bottom-up frontier *gather*)
    Rank ``r`` holds the contributions of ranks ``r, r + 1, ...`` and forwards
    all it holds: in round ``k`` it sends its ``s`` contributions to
    ``r - d s`` (only the first ``q - d s`` in the last round). Every
    contribution reaches every other rank exactly once, so the words sent equal
    those of ``q - 1`` direct messages; the saving is in messages (and, as in
    the paper, in the buffers one round needs).

:meth:`Butterfly.alltoall` (the *fold* along a processor row)
    Bruck's personalized exchange in radix ``f``: a piece for rank ``t`` sits at
    position ``(t - r) mod q`` and, in round ``k``, moves ``d s`` ranks on when
    digit ``k`` of its position (base ``f``) is ``d``. A piece is forwarded
    once per non-zero digit of its offset, so messages drop from ``q - 1`` to
    ``O(f log_f q)`` at the price of forwarding words (:func:`predict`).

Message format
    Lengths are unknown to the receiver, so each message carries them: an
    allgather message is ``[len, data...]`` per contribution in source order;
    an all-to-all message is ``[source * q + dest, len, data...]`` per
    non-empty piece (empty pieces are not sent, their message may be empty).
    The receiver learns a message's length by probing (``MPI_Improbe`` then a
    matched receive), so one message per partner and round suffices and no
    counts are exchanged first.

Memory (Section 3, "Fanout & Trade-offs": a buffer for the incoming frontiers of
``f`` nodes, ``O(f V)``, allocatable in advance)
    In one round a rank receives at most ``f - 1`` messages; in the allgather
    each carries at most ``min(s, q - s) <= q / 2`` contributions, and
    the round's receipts together at most ``min((f - 1) s, q - s)`` of the
    ``q`` contributions (``(f - 1) / f`` of the data for ``q = f**K``). A rank
    never holds more than the ``q`` contributions it returns, plus one send
    buffer of at most ``min(s, q - s)`` of them. In the all-to-all a message
    carries about ``q / f`` pieces and a round ``(f - 1) q / f`` (uniform
    pieces); the received messages are kept (the results are views of them),
    so a rank's buffers reach its own pieces plus all it received, which
    :func:`predict` reports as ``peak``.

Every message is nonblocking and completes under the communicator's
:class:`~spbfs.mpi.comm.WaitPolicy` (:func:`spbfs.mpi.comm.policy`); the tags
(21 allgather, 22 all-to-all) differ from those of :mod:`spbfs.mpi.spmsv`.
Both calls are collective over the communicator.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from spbfs.mpi import comm as C
from spbfs.mpi.pricing import (
    CodecSpeed,
    Estimate,
    MessageSizes,
    codec_seconds,
    encoded_bytes,
    priced,
)

__all__ = ["BUTTERFLY", "Butterfly", "ButterflyPattern", "predict"]

_TAG_ALLGATHER = 21
_TAG_ALLTOALL = 22
_EMPTY = np.zeros(0, dtype=np.int64)


def _check_fanout(fanout: Any) -> int:
    if isinstance(fanout, bool) or not isinstance(fanout, int | np.integer):
        raise TypeError(f"fanout must be an integer >= 2, got {fanout!r}")
    if fanout < 2:
        raise ValueError(f"fanout must be >= 2 (ranks merged per round, the rank itself "
                         f"included), got {fanout}")
    return int(fanout)


def _schedule(q: int, fanout: int) -> list[tuple[int, int]]:
    """``(step, partners)`` of every round: step ``fanout**k``, partners ``d = 1 .. partners``."""
    rounds = []
    s = 1
    while s < q:
        rounds.append((s, min(fanout - 1, (q - 1) // s)))
        s *= fanout
    return rounds


def _int64_vector(a: Any, name: str) -> np.ndarray:
    if not isinstance(a, np.ndarray):
        raise TypeError(f"{name} must be a 1-D numpy int64 array, got {type(a).__name__}")
    if a.dtype != np.int64:
        raise TypeError(f"{name} must be an int64 array, got dtype {a.dtype} "
                        "(8-byte data can travel as a.view(np.int64))")
    if a.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {a.shape}")
    return a


class Butterfly:
    """The butterfly schedule of one communicator and fanout, and its two exchanges.

    Build it once per communicator (the schedule is computed here) and call
    :meth:`allgather` and :meth:`alltoall` collectively, any number of times.

    Parameters
    ----------
    comm : mpi4py.MPI.Comm
        The communicator, of any size ``q >= 1``. Its wait policy
        (:func:`spbfs.mpi.comm.policy`) is read once, here.
    fanout : int
        Ranks merged per round, the rank itself included (``>= 2``; see the
        module docstring for the paper's convention).

    Attributes
    ----------
    size, rank : int
        ``q`` and this rank.
    rounds : int
        ``ceil(log_fanout q)`` (0 for one rank).
    messages, words : int
        Messages and 8-byte words this rank sent in the latest call (headers
        included; nothing to itself).

    Raises
    ------
    TypeError, ValueError
        For a fanout that is not an integer ``>= 2``.
    """

    __slots__ = ("_byte", "_gather", "_route", "_status", "comm", "fanout", "messages",
                 "policy", "rank", "rounds", "size", "words")

    def __init__(self, comm: Any, fanout: int) -> None:
        self.fanout = f = _check_fanout(fanout)
        self.comm = comm
        self.size = q = comm.Get_size()
        self.rank = r = comm.Get_rank()
        self.policy = C.policy(comm)
        sched = _schedule(q, f)
        self.rounds = len(sched)
        # Allgather: send to r - d s the first min(s, q - d s) contributions held,
        # receive as many from r + d s.
        self._gather = [([(r - d * s) % q for d in range(1, dm + 1)],
                         [(r + d * s) % q for d in range(1, dm + 1)],
                         [min(s, q - d * s) for d in range(1, dm + 1)]) for s, dm in sched]
        # All-to-all: positions with digit k equal to d (lower digits already zero) go to
        # r + d s; pieces come from r - d s.
        self._route = [([(r + d * s) % q for d in range(1, dm + 1)],
                        [(r - d * s) % q for d in range(1, dm + 1)],
                        [range(d * s, q, f * s) for d in range(1, dm + 1)]) for s, dm in sched]
        self.messages = 0
        self.words = 0
        if q > 1:
            MPI = C.mpi()
            self._status = MPI.Status()
            self._byte = MPI.BYTE

    def __repr__(self) -> str:
        return f"Butterfly(size={self.size}, fanout={self.fanout}, rounds={self.rounds})"

    # -- one round -----------------------------------------------------------------------
    def _round(self, sends: list[tuple[int, np.ndarray]], srcs: list[int],
               tag: int) -> list[np.ndarray]:
        """Post the sends, receive one message of unknown length from each source."""
        comm = self.comm
        isend = comm.Isend
        reqs = []
        nbytes = 0
        for dst, buf in sends:
            reqs.append(isend(buf, dst, tag))
            nbytes += buf.nbytes
        self.messages += len(sends)
        self.words += nbytes >> 3
        got = []
        status, byte, improbe = self._status, self._byte, comm.Improbe
        pol = self.policy
        bulk = nbytes >= C.BULK_BYTES
        # The sources in turn: the round ends with its last message whatever the order.
        for src in srcs:
            msg = improbe(src, tag, status)
            if msg is None:
                found: list[Any] = []

                def probe(src: int = src, found: list[Any] = found) -> bool:
                    m = improbe(src, tag, status)
                    if m is None:
                        return False
                    found.append(m)
                    return True

                # Waiting for a partner's envelope is a wait like any other: the
                # policy's spin, yield and sleep (WaitPolicy has no public poll loop).
                pol.poll(probe, bulk)
                msg = found[0]
            buf = np.empty(status.Get_count(byte) >> 3, dtype=np.int64)
            reqs.append(msg.Irecv(buf))
            got.append(buf)
            nbytes += buf.nbytes
        # Sizes known now: a large transfer waits without sleeping.
        pol.wait(reqs, nbytes >= C.BULK_BYTES)
        return got

    # -- allgather -----------------------------------------------------------------------
    def allgather(self, msg: np.ndarray) -> list[np.ndarray]:
        """Every rank's 1-D int64 array, on every rank, in rank order.

        Parameters
        ----------
        msg : numpy.ndarray
            This rank's contribution (1-D int64, any length, empty included).

        Returns
        -------
        list of numpy.ndarray
            ``q`` arrays; entry ``rank`` is ``msg`` itself, the others are
            read-only-by-convention views of the received buffers.

        Raises
        ------
        TypeError, ValueError
            For a ``msg`` that is not a 1-D int64 array.
        """
        msg = _int64_vector(msg, "msg")
        self.messages = self.words = 0
        q, r = self.size, self.rank
        if q == 1:
            return [msg]
        n = msg.shape[0]
        own = np.empty(n + 1, dtype=np.int64)
        own[0] = n
        own[1:] = msg
        segs = [own]  # what this rank holds, contributions r, r + 1, ... in order
        ends = [0, n + 1]  # ends[c]: words of the first c contributions held
        views = [msg]  # the contributions, in the same order
        for dests, srcs, counts in self._gather:
            # One send buffer a round: the contributions the nearest partner lacks
            # (all held but in the last round); the farther ones take a prefix of it.
            need = ends[counts[0]]
            if segs[0].shape[0] >= need:
                held = segs[0]
            else:
                parts = []
                for seg in segs:
                    parts.append(seg[:need])
                    need -= parts[-1].shape[0]
                    if not need:
                        break
                held = np.concatenate(parts)
            got = self._round([(dst, held[:ends[c]]) for dst, c in zip(dests, counts,
                                                                        strict=True)],
                              srcs, _TAG_ALLGATHER)
            for buf, c in zip(got, counts, strict=True):
                base = ends[-1]
                pos = 0
                size = buf.shape[0]
                item = buf.item
                for _ in range(c):
                    if pos >= size:
                        raise RuntimeError(f"butterfly allgather: a message of {size} words "
                                           f"ends before its {c} contributions")
                    end = pos + 1 + item(pos)
                    views.append(buf[pos + 1:end])
                    pos = end
                    ends.append(base + pos)
                if pos != size:
                    raise RuntimeError(f"butterfly allgather: a message of {size} words "
                                       f"holds {pos} words of contributions")
                segs.append(buf)
        return views[q - r:] + views[:q - r]

    # -- personalized all-to-all ---------------------------------------------------------
    def alltoall(self, sends: list[np.ndarray | None]) -> list[np.ndarray]:
        """``sends[t]`` to every rank ``t``; returns what every rank sent here, by source.

        Parameters
        ----------
        sends : list of (numpy.ndarray or None)
            ``q`` entries, each a 1-D int64 array or None (nothing to send).

        Returns
        -------
        list of numpy.ndarray
            ``q`` arrays by source rank: ``sends[rank]`` itself (an empty array
            for None), views of received buffers, and fresh empty arrays where a
            rank sent nothing.

        Raises
        ------
        TypeError, ValueError
            For a ``sends`` that is not a list of ``q`` int64 arrays or Nones.
        """
        q, r = self.size, self.rank
        if not isinstance(sends, list | tuple) or len(sends) != q:
            raise ValueError(f"sends must be a list of {q} entries (one per rank), got "
                             f"{len(sends) if isinstance(sends, list | tuple) else type(sends)}")
        for t, a in enumerate(sends):
            if a is not None:
                _int64_vector(a, f"sends[{t}]")
        self.messages = self.words = 0
        mine = sends[r]
        if q == 1:
            return [np.zeros(0, dtype=np.int64) if mine is None else mine]
        # held[j]: contiguous runs of pieces ([key, len, data...]) for rank r + j.
        held: list[list[np.ndarray]] = [[] for _ in range(q)]
        hdr = np.empty((q, 2), dtype=np.int64)
        parts = []
        spans = []  # (position, start, end) in the formatted buffer
        pos = 0
        for j in range(1, q):
            t = (r + j) % q
            a = sends[t]
            if a is None or not a.shape[0]:
                continue
            h = hdr[t]
            h[0] = r * q + t
            h[1] = a.shape[0]
            parts.append(h)
            parts.append(a)
            spans.append((j, pos, pos + 2 + a.shape[0]))
            pos += 2 + a.shape[0]
        if parts:
            first = np.concatenate(parts)
            for j, lo, hi in spans:
                held[j].append(first[lo:hi])
        for dests, srcs, positions in self._route:
            out = []
            for dst, pset in zip(dests, positions, strict=True):
                runs = []
                for j in pset:
                    if held[j]:
                        runs += held[j]
                        held[j] = []
                out.append((dst, runs[0] if len(runs) == 1
                            else np.concatenate(runs) if runs else _EMPTY))
            for buf in self._round(out, srcs, _TAG_ALLTOALL):
                self._file(buf, held)
        result: list[Any] = [None] * q
        result[r] = np.zeros(0, dtype=np.int64) if mine is None else mine
        for run in held[0]:
            item = run.item
            p, size = 0, run.shape[0]
            while p < size:
                end = p + 2 + item(p + 1)
                result[item(p) // q] = run[p + 2:end]
                p = end
        return [np.zeros(0, dtype=np.int64) if x is None else x for x in result]

    def _file(self, buf: np.ndarray, held: list[list[np.ndarray]]) -> None:
        """Split a received all-to-all message into runs of pieces by position."""
        q, r = self.size, self.rank
        item = buf.item
        size = buf.shape[0]
        p = start = 0
        cur = -1
        while p < size:
            if p + 2 > size:
                raise RuntimeError(f"butterfly alltoall: a message of {size} words ends "
                                   "inside a piece header")
            j = (item(p) % q - r) % q
            if j != cur:
                if cur >= 0:
                    held[cur].append(buf[start:p])
                cur, start = j, p
            p += 2 + item(p + 1)
        if p != size:
            raise RuntimeError(f"butterfly alltoall: a message of {size} words ends inside "
                               "a piece")
        if cur >= 0:
            held[cur].append(buf[start:p])


def predict(q: int, fanout: int, *, block: int = 1) -> dict[str, Any]:
    """Rounds, messages, words and buffer sizes of the exchanges, without MPI.

    Words assume every contribution (allgather) and every piece (all-to-all)
    has ``block`` int64 entries; message counts do not depend on the data.

    Parameters
    ----------
    q : int
        Ranks of the communicator (``>= 1``).
    fanout : int
        As for :class:`Butterfly`.
    block : int
        Entries per contribution or piece (``>= 0``); an empty piece is not
        sent by the all-to-all.

    Returns
    -------
    dict
        ``q``, ``fanout``, ``rounds``, ``p2p_messages`` (``q - 1``, what a
        point-to-point exchange sends per rank), and for ``"allgather"`` and
        ``"alltoall"`` each a dict of this rank's (every rank's, they are
        equal) ``messages``, ``words`` (headers included), ``round_messages``
        and ``round_words`` (lists per round), and buffer sizes as fractions
        of the ``q`` contributions (allgather: the result) or ``q`` pieces
        (all-to-all: what a rank sends, its own included), counted in
        contributions or pieces: ``largest_message``, ``largest_round`` (all
        received in one round) and ``peak`` (what a rank holds at most:
        allgather, the result plus one send buffer; all-to-all, its own
        pieces, everything received and the largest round's send buffers).

    Raises
    ------
    TypeError, ValueError
        For a bad ``q``, ``fanout`` or ``block``.
    """
    f = _check_fanout(fanout)
    for name, v, least in (("q", q, 1), ("block", block, 0)):
        if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < least:
            raise ValueError(f"{name} must be an integer >= {least}, got {v!r}")
    q, block = int(q), int(block)
    sched = _schedule(q, f)
    # Allgather: the first min(s, q - d s) contributions to each partner d.
    g_msgs, g_words, g_big, g_round = [], [], 0, 0
    for s, dm in sched:
        counts = [min(s, q - d * s) for d in range(1, dm + 1)]
        g_msgs.append(dm)
        g_words.append(sum(counts) * (block + 1))
        g_big = max(g_big, max(counts))
        g_round = max(g_round, sum(counts))
    # All-to-all: pieces per position (offset of the destination from the holder).
    pieces = [1 if block else 0] * q
    pieces[0] = 1  # the rank's own piece, never sent
    a_msgs, a_words, a_big, a_round = [], [], 0, 0
    for s, dm in sched:
        moved = []
        for d in range(1, dm + 1):
            n = 0
            for j in range(d * s, q, f * s):
                n += pieces[j]
                pieces[j - d * s] += pieces[j]
                pieces[j] = 0
            moved.append(n)
        a_msgs.append(dm)
        a_words.append(sum(moved) * (block + 2))
        a_big = max(a_big, max(moved))
        a_round = max(a_round, sum(moved))
    g_send = max((min(s, q - s) for s, _ in sched), default=0)
    return {
        "q": q,
        "fanout": f,
        "rounds": len(sched),
        "p2p_messages": q - 1,
        "allgather": {
            "messages": sum(g_msgs), "words": sum(g_words),
            "round_messages": g_msgs, "round_words": g_words,
            "largest_message": g_big / q, "largest_round": g_round / q,
            "peak": (q + g_send) / q,
        },
        "alltoall": {
            "messages": sum(a_msgs), "words": sum(a_words),
            "round_messages": a_msgs, "round_words": a_words,
            "largest_message": a_big / q, "largest_round": a_round / q,
            "peak": (q + sum(a_words) / (block + 2) + a_round) / q,
        },
    }


class ButterflyPattern:
    """The ``butterfly`` pattern (:class:`spbfs.patterns.ExchangePattern`) over :class:`Butterfly`.

    Prices: an allgather's messages grow (round ``r`` forwards the ``f^r``
    pieces gathered so far, as they came: no re-encoding); an all-to-all
    forwards each pair once per base-``f`` digit in which its source and
    destination differ, ``(f - 1) / f`` of what a rank holds per round,
    decoded and re-encoded at each hop.
    """

    def allgather(self, ex: Any, msg: np.ndarray,
                  maxlen: int | None) -> tuple[list[np.ndarray], int, int]:
        """Every rank's ``msg`` by rank; (messages, words) sent in this call."""
        bf = ex.butterfly()
        parts = bf.allgather(msg)
        return parts, bf.messages, bf.words  # the counters cover the latest call

    def alltoall(self, ex: Any, sends: list[np.ndarray | None],
                 maxlen: int | None) -> tuple[list[np.ndarray], int, int]:
        """What every rank sent here, by rank; (messages, words) sent in this call."""
        bf = ex.butterfly()
        parts = bf.alltoall(sends)
        return parts, bf.messages, bf.words

    def gather_cost(self, q: int, enc: str, mx: float, span: int, lat: float, bw: float,
                    f: int, psp: int, codec: CodecSpeed, z: MessageSizes) -> Estimate:
        """The price of an allgather (:class:`spbfs.patterns.ExchangePattern`)."""
        # Round r forwards the pieces gathered so far.
        msgs = rounds = 0
        sent = wire = 0.0
        known = 1
        while known < q:
            partners = min(f - 1, -(-q // known) - 1)
            got = min(q, known * (partners + 1)) - known
            # The first round sends the own piece (the largest at worst).
            b = partners * z.s_max if known == 1 else got * z.s_avg
            msgs += partners
            rounds += 1
            sent += b
            wire += partners * lat + max(b, got * z.s_avg) / bw
            known += got
        return priced(wire, z.codec_s, msgs, sent, rounds, codec)

    def alltoall_cost(self, q: int, enc: str, mx: float, span: int, lat: float, bw: float,
                      f: int, psp: int, codec: CodecSpeed, z: MessageSizes) -> Estimate:
        """The price of a personalized all-to-all (:class:`spbfs.patterns.ExchangePattern`)."""
        # Each round sends (f-1)/f of what the rank holds, re-encoded.
        held = mx * q / (q - 1)  # its pairs, with the share that stays on the rank
        msgs = rounds = 0
        sent = wire = 0.0
        codec_s = 0.0
        known = 1
        last = -1.0
        one = cod = 0.0
        while known < q:
            partners = min(f - 1, -(-q // known) - 1)
            each = held / (partners + 1)
            if each != last:  # full rounds repeat the same message
                one = encoded_bytes(enc, each, span, pairs=True, parent_span=psp)
                cod = (codec_seconds(enc, each, span, True, codec, True)
                       + codec_seconds(enc, each, span, True, codec, False))
                last = each
            msgs += partners
            rounds += 1
            sent += partners * one
            wire += partners * (lat + one / bw)
            codec_s += partners * cod
            known *= partners + 1
        return priced(wire, codec_s, msgs, sent, rounds, codec)


#: The registered object (``spbfs.patterns.PATTERN_CODE["butterfly"]``).
BUTTERFLY = ButterflyPattern()
