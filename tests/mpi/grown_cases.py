"""Pair channels with grown receive buffers: ``mpiexec -n P python grown_cases.py [Q ...]``.

:class:`~spbfs.mpi.spmsv.GrownReceives` posts each receive into a buffer of
``cap + 1`` words and sends a longer message in two parts; both sides must
keep ``cap`` alike. Over many rounds, every rank sends every other rank (in
an order that changes) a message whose length and content both ends compute
independently from (source, destination, round): empty, exactly ``cap``,
``cap + 1``, many times ``cap``, past MPICH's eager limit, and a run of short
ones after a long one. Every message must arrive whole and exact, and a
source's buffer must never grow beyond an eighth over the longest message it
sent (plus one word). Also an exchange between two rank sets (a rank that
only sends, one that only receives, one that does neither), as the
transposed top-down's fold runs it. Rank 0 prints ``GROWN OK <checks>`` for each
communicator: the job's first ``Q`` ranks for each ``Q`` named (default: all ``P``).
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
from case_runner import each_first_ranks

from spbfs.mpi import install_excepthook
from spbfs.mpi.spmsv import GrownReceives

FIRST = 5  # a small first cap: the long-message path runs in most rounds


def length(src: int, dst: int, rnd: int, longest: dict[tuple[int, int], int]) -> int:
    """A message's length, the same on both ends (no knowledge of the cap used)."""
    rng = np.random.default_rng([src, dst, rnd])
    kind = rnd % 6
    if kind == 0:
        return 0
    if kind == 1:
        return int(rng.integers(1, 2 * FIRST))
    if kind == 2:
        return int(rng.integers(3, 40)) * FIRST
    if kind == 3:  # around the largest so far: cap's edges (n = cap, cap + 1) come up
        base = longest.get((src, dst), FIRST)
        return max(0, base + base // 8 + int(rng.integers(-1, 2)))
    if kind == 4:
        return 12_000 if rnd % 12 == 4 else int(rng.integers(1, 4))  # 96 KB: rendezvous
    return int(rng.integers(0, 3))


def content(src: int, dst: int, rnd: int, n: int) -> np.ndarray:
    return np.arange(n, dtype=np.int64) * 7 + (src * 1_000_003 + dst * 10_007 + rnd * 101)


def check(world: Any) -> None:
    """Every case on communicator ``world``."""
    size, rank = world.Get_size(), world.Get_rank()
    ch = GrownReceives(world, tag=33, first=FIRST)
    longest: dict[tuple[int, int], int] = {}
    checks = 0
    for rnd in range(60):
        others = [r for r in range(size) if r != rank]
        if rnd % 2:  # the order of the partners is the caller's
            others.reverse()
        sends = [content(rank, d, rnd, length(rank, d, rnd, longest)) for d in others]
        got = ch.exchange(others, sends, others)
        assert len(got) == len(others), (rnd, len(got))
        for s, msg in zip(others, got, strict=True):
            n = length(s, rank, rnd, longest)
            np.testing.assert_array_equal(msg, content(s, rank, rnd, n),
                                          err_msg=f"round {rnd}: from {s} to {rank}")
            checks += 1
        for s in range(size):
            for d in range(size):
                n = length(s, d, rnd, longest)
                if n > longest.get((s, d), FIRST):
                    longest[s, d] = n
        for s, buf in ch.rbufs.items():
            most = longest.get((s, rank), FIRST)
            assert buf.shape[0] <= most + most // 8 + 1, (rnd, s, buf.shape[0], most)
    # Two rank sets: everyone sends to rank 0 and rank size-1; only those two receive,
    # from the even ranks (the others send nothing to them).
    ch2 = GrownReceives(world, tag=34, first=FIRST)
    receivers = sorted({0, size - 1})
    senders = list(range(0, size, 2))
    for rnd in range(8):
        dests = [d for d in receivers if d != rank] if rank in senders else []
        srcs = [s for s in senders if s != rank] if rank in receivers else []
        got = ch2.exchange(dests, [content(rank, d, rnd, 3 * rnd * FIRST + rank) for d in dests],
                           srcs)
        assert len(got) == len(srcs), (rnd, len(got))
        for s, msg in zip(srcs, got, strict=True):
            np.testing.assert_array_equal(msg, content(s, rank, rnd, 3 * rnd * FIRST + s))
            checks += 1
    every = world.allreduce(checks)
    if rank == 0:
        print(f"GROWN OK {every} checks on {size} ranks", flush=True)


def main() -> None:
    install_excepthook()
    each_first_ranks(check, sys.argv[1:])


if __name__ == "__main__":
    main()
