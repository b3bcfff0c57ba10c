"""Butterfly exchanges against mpi4py's own collectives.

``mpiexec -n P python butterfly_cases.py [Q ...]``:

For each ``Q`` named (default: ``P``), on the job's first ``Q`` ranks (a
"world" of ``Q``), on every communicator of it (the world, its two halves, and
the row and column communicators of a :class:`~spbfs.mpi.ProcessGrid`, so
sizes that are not powers of the fanout come up on every ``Q``) and for
fanouts 2, 3, 4 and one at least the communicator's size:

* :meth:`~spbfs.mpi.butterfly.Butterfly.allgather` must return exactly what
  ``comm.allgather`` (pickled Python objects, a different code path) returns,
  and :meth:`~spbfs.mpi.butterfly.Butterfly.alltoall` what ``comm.alltoall``
  returns (``None`` read as empty): for tiny, empty, uneven, extreme-valued,
  strided and large (>= 64 KiB, past MPICH's eager limit) data, and for a run
  of calls issued back to back with no collective in between (results checked
  afterwards), so that fast ranks run ahead into the next call;
* the rounds equal ``ceil(log_f q)`` computed here, the messages of every call
  :func:`~spbfs.mpi.butterfly.predict`'s and the closed form
  ``sum_k min(f - 1, ceil(q / f**k) - 1)``, fewer than ``q - 1`` for
  ``q >= 5`` and fanout 2;
* the words: with uniform lengths, ``predict``'s; with any data, summed over
  the ranks, the allgather's equal every contribution delivered once to every
  other rank (plus one length word each), and the all-to-all's every piece
  (plus two header words) forwarded once per non-zero base-``f`` digit of
  ``(dest - source) mod q``.

Then bad input raises on every rank. Rank 0 prints ``BUTTERFLY OK <cases>`` per ``Q``.
Any failure raises, and the installed excepthook ends the job.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
from case_runner import each_first_ranks

from spbfs.mpi import ProcessGrid, install_excepthook
from spbfs.mpi.butterfly import Butterfly, predict
from spbfs.mpi.comm import WaitPolicy, policy, set_policy

#: Entries of a "large" message: 10,000 int64 = 80 KB, past MPICH's 64 KiB eager limit.
LARGE = 10_000


def ceil_log(q: int, f: int) -> int:
    """The least ``K`` with ``f**K >= q``."""
    k = 0
    while f**k < q:
        k += 1
    return k


def digits(x: int, f: int) -> int:
    """Non-zero digits of ``x`` in base ``f``."""
    n = 0
    while x:
        n += x % f != 0
        x //= f
    return n


def total(comm: Any, value: int) -> int:
    """Sum of one integer over the communicator (mpi4py's own reduction)."""
    return int(comm.allreduce(int(value)))


def same(got: list[np.ndarray], want: list[Any], where: str) -> None:
    """Equal lists of int64 arrays (``None`` in ``want`` reads as empty)."""
    assert len(got) == len(want), (where, len(got), len(want))
    for t, (a, b) in enumerate(zip(got, want, strict=True)):
        b = np.zeros(0, dtype=np.int64) if b is None else b
        assert isinstance(a, np.ndarray) and a.dtype == np.int64 and a.ndim == 1, \
            (where, t, type(a), getattr(a, "dtype", None))
        assert np.array_equal(a, b), (where, t, a[:8], b[:8], a.shape, b.shape)


# --------------------------------------------------------------------------- data


def gather_cases(rng: np.random.Generator, q: int, r: int) -> list[tuple[str, np.ndarray]]:
    """(name, this rank's contribution) pairs; every rank draws its own."""
    big = np.iinfo(np.int64)
    extremes = np.array([big.min, big.max, -1, 0, q, r], dtype=np.int64)
    return [
        ("tiny", rng.integers(-10**18, 10**18, size=int(rng.integers(0, 6)))),
        ("empty", np.zeros(0, dtype=np.int64)),
        ("uneven", np.arange((r * 37) % 11, dtype=np.int64) * (r + 1)),
        ("extremes", extremes[: 1 + r % len(extremes)].copy()),
        ("strided", np.arange(3 * (r + 2), dtype=np.int64)[::3]),
        ("large-some", rng.integers(0, 2**40, size=LARGE + 97 * r if r % 2 == 0 else r)),
        ("large-all", rng.integers(-(2**62), 2**62, size=LARGE + r)),
    ]


def alltoall_cases(rng: np.random.Generator, q: int,
                   r: int) -> list[tuple[str, list[np.ndarray | None]]]:
    """(name, sends) pairs; every rank draws its own."""

    def some(t: int) -> np.ndarray | None:
        k = (r * 7 + t * 3) % 5
        if k == 0:
            return None
        if k == 1:
            return np.zeros(0, dtype=np.int64)
        return rng.integers(-10**15, 10**15, size=int(rng.integers(1, 9)))

    return [
        ("mixed", [some(t) for t in range(q)]),
        ("none", [None] * q),
        ("empty", [np.zeros(0, dtype=np.int64) for _ in range(q)]),
        ("self-only", [np.arange(4, dtype=np.int64) + r if t == r else None for t in range(q)]),
        ("keys", [np.array([r, t, r * q + t], dtype=np.int64) for t in range(q)]),
        ("large-one-pair", [rng.integers(0, 2**50, size=LARGE) if t == (r + 1) % q else
                            np.array([t], dtype=np.int64) for t in range(q)]),
        ("large-all", [rng.integers(-(2**62), 2**62, size=LARGE // 8 + t + r)
                       for t in range(q)]),
    ]


# --------------------------------------------------------------------------- checks


def check_counts(b: Butterfly, q: int, f: int, where: str) -> None:
    """Rounds and per-call message counts against predict and the closed forms."""
    p = predict(q, f)
    assert b.rounds == p["rounds"] == ceil_log(q, f), (where, b.rounds, p["rounds"])
    closed = sum(min(f - 1, -(-q // f**k) - 1) for k in range(ceil_log(q, f)))
    assert p["allgather"]["messages"] == p["alltoall"]["messages"] == closed, (where, p)
    assert closed <= q - 1, (where, closed)
    if f >= q:
        assert closed == q - 1, (where, closed)
    if f == 2 and q >= 5:
        assert closed < q - 1, (where, closed)


def check_exchange(comm: Any, b: Butterfly, f: int, rng: np.random.Generator, where: str,
                   kind: Literal["allgather", "alltoall"]) -> int:
    """One exchange against mpi4py's on every case, then its words with uniform lengths.

    Both exchanges take the same checks; what differs is the shape of the data
    (one array, or one per destination) and how many words the data must cost.
    """
    q, r = comm.Get_size(), comm.Get_rank()
    gather = kind == "allgather"
    ours, theirs = getattr(b, kind), getattr(comm, kind)
    want_msgs = predict(q, f)[kind]["messages"]
    n = 0
    for name, data in (gather_cases if gather else alltoall_cases)(rng, q, r):
        got = ours(data)
        own = data if gather else data[r]
        if own is not None:
            assert got[r] is own, (where, name)  # its own, as is
        ref = theirs(data)
        same(got, ref, f"{where} {kind} {name}")
        assert b.messages == want_msgs, (where, name, b.messages, want_msgs)
        if gather:
            # Every contribution delivered once to every other rank, plus its length word.
            lens = [a.shape[0] for a in ref]
            want_words = sum(sum(lens) - lens[k] + (q - 1) for k in range(q))
        else:
            # Every piece, plus two header words, forwarded once per non-zero digit of the hop.
            want_words = total(comm, sum(
                (a.shape[0] + 2) * digits((t - r) % q, f)
                for t, a in enumerate(data) if a is not None and a.shape[0] and t != r))
        assert total(comm, b.words) == want_words, (where, name, b.words)
        n += 1
    for m in (0, 3):  # uniform lengths: words as predicted, on every rank
        if gather:
            ours(rng.integers(0, 9, size=m))
        else:
            ours([rng.integers(0, 9, size=m) for _ in range(q)])
        assert b.words == predict(q, f, block=m)[kind]["words"], (where, m, b.words)
        n += 1
    return n


def check_back_to_back(comm: Any, b: Butterfly, rng: np.random.Generator,
                       where: str) -> int:
    """Twenty calls with no collective between them; references afterwards."""
    q, r = comm.Get_size(), comm.Get_rank()
    inputs, outputs = [], []
    for k in range(20):
        big = k % 7 == 3  # now and then a message past the eager limit
        if k % 2:
            x = rng.integers(0, 100, size=LARGE if big and r == k % q else k % 4)
            inputs.append(("g", x))
            outputs.append(b.allgather(x))
        else:
            s = [rng.integers(0, 100, size=LARGE if big and t == (r + k) % q else (t + k) % 3)
                 if (t + k) % 4 else None for t in range(q)]
            inputs.append(("a", s))
            outputs.append(b.alltoall(s))
    for k, ((kind, x), got) in enumerate(zip(inputs, outputs, strict=True)):
        ref = comm.allgather(x) if kind == "g" else comm.alltoall(x)
        same(got, ref, f"{where} back-to-back call {k}")
    return 20


def check_comm(comm: Any, where: str, cases: list[int]) -> None:
    q, r = comm.Get_size(), comm.Get_rank()
    for f in sorted({2, 3, 4, q + 1}):
        b = Butterfly(comm, f)
        assert (b.size, b.rank, b.fanout) == (q, r, f)
        assert b.policy is policy(comm), where  # the communicator's wait policy
        here = f"{where} q={q} f={f} rank {r}"
        check_counts(b, q, f, here)
        # Every rank draws different data, the same on every run.
        rng = np.random.default_rng([q, f, r, len(where)])
        cases[0] += check_exchange(comm, b, f, rng, here, "allgather")
        cases[0] += check_exchange(comm, b, f, rng, here, "alltoall")
        if f in (2, q + 1):
            cases[0] += check_back_to_back(comm, b, rng, here)


def expect(exc: type[BaseException], words: str, fn: Callable[..., Any], *args: Any) -> None:
    try:
        fn(*args)
    except exc as e:
        assert words in str(e), (str(e), words)
    else:
        raise AssertionError(f"{fn} {args!r} did not raise {exc.__name__}")


def check_bad_input(comm: Any, cases: list[int]) -> None:
    q = comm.Get_size()
    expect(ValueError, "fanout must be >= 2", Butterfly, comm, 1)
    expect(ValueError, "fanout must be >= 2", Butterfly, comm, 0)
    expect(TypeError, "fanout must be an integer", Butterfly, comm, 2.0)
    expect(TypeError, "fanout must be an integer", Butterfly, comm, True)
    b = Butterfly(comm, 2)
    expect(TypeError, "msg must be an int64 array", b.allgather, np.zeros(3))
    expect(TypeError, "msg must be an int64 array", b.allgather, np.zeros(3, np.int32))
    expect(TypeError, "msg must be a 1-D numpy int64 array", b.allgather, [1, 2])
    expect(ValueError, "msg must be 1-D", b.allgather, np.zeros((2, 2), np.int64))
    expect(ValueError, f"sends must be a list of {q} entries", b.alltoall, [None] * (q + 1))
    expect(ValueError, f"sends must be a list of {q} entries", b.alltoall, None)
    bad = [None] * q
    bad[q - 1] = np.zeros(2, dtype=np.float64)
    expect(TypeError, f"sends[{q - 1}] must be an int64 array", b.alltoall, bad)
    # A communicator's own policy is the one its waits use.
    dup = comm.Dup()
    busy = WaitPolicy(busy=True)
    set_policy(dup, busy)
    bb = Butterfly(dup, 3)
    assert bb.policy is busy
    same(bb.allgather(np.array([comm.Get_rank()], dtype=np.int64)),
         [np.array([k], dtype=np.int64) for k in range(q)], "busy policy")
    dup.Free()
    cases[0] += 13


def check_world(world: Any) -> None:
    """Every case on the communicators of ``world``."""
    size, rank = world.Get_size(), world.Get_rank()
    cases = [0]
    check_comm(world, "world", cases)
    if size > 2:  # two halves of different sizes when size is odd
        half = world.Split(int(rank >= size // 2), rank)
        check_comm(half, f"half{int(rank >= size // 2)}", cases)
        half.Free()
    grid = ProcessGrid(comm=world)
    if grid.pr > 1 and grid.pc > 1:  # 1-wide grids: row or column is the world again
        check_comm(grid.col_comm, "col", cases)
        check_comm(grid.row_comm, "row", cases)
    grid.free()
    check_bad_input(world, cases)
    every = world.allreduce(cases[0])
    if rank == 0:
        print(f"BUTTERFLY OK {every} checks (summed over the ranks) on {size} ranks", flush=True)


def main() -> None:
    install_excepthook()
    each_first_ranks(check_world, sys.argv[1:])


if __name__ == "__main__":
    main()
