"""Tests of the butterfly exchanges (:mod:`spbfs.mpi.butterfly`).

Under ``mpiexec``, on the first 1 to 9 ranks of two jobs, ``tests/mpi/butterfly_cases.py`` compares
:meth:`~spbfs.mpi.butterfly.Butterfly.allgather` and
:meth:`~spbfs.mpi.butterfly.Butterfly.alltoall` with mpi4py's pickle-based
``allgather`` and ``alltoall`` on the world, its halves and a grid's rows and
columns, fanouts 2, 3, 4 and one at least the size, and checks the counters
against :func:`~spbfs.mpi.butterfly.predict` and closed forms (see its
docstring).

In this process, without MPI: :func:`~spbfs.mpi.butterfly.predict` against
counts derived another way (base-``f`` digits, the paper's totals) and its
argument checks.
"""

from __future__ import annotations

import numpy as np
import pytest
from mpi_launch import SharedJobs, needs_mpi, shared_args

from spbfs.mpi.butterfly import Butterfly, predict

# --------------------------------------------------------------------------- under mpiexec


@pytest.mark.mpi
@needs_mpi
# Worlds of 1 to 9 ranks, each the first ranks of a job (case_runner.each_first_ranks):
# two jobs start fewer ranks; test_mpi_exchange.py's cases share them (mpi_launch.SHARED).
@pytest.mark.parametrize(("nranks", "sizes"), list(shared_args("butterfly_cases.py").items()),
                         ids=["1-4", "5-9"])
def test_butterfly_matches_mpi_collectives(nranks: int, sizes: list[str],
                                           shared_jobs: SharedJobs) -> None:
    """Same results as comm.allgather / comm.alltoall on every communicator and
    fanout; counters equal predict and the closed forms on every rank."""
    ended, out, err = shared_jobs.part(nranks, "butterfly_cases.py", sizes)
    assert ended, f"stdout:\n{out}\nstderr:\n{err}"
    for q in sizes:
        assert f"on {q} ranks" in out, (q, out)
    assert out.count("BUTTERFLY OK") == len(sizes), out


# --------------------------------------------------------------------------- in process


def nonzero_digits(x: int, f: int) -> int:
    return sum(c != "0" for c in np.base_repr(x, f))


QS = range(1, 41)
FANOUTS = range(2, 7)


@pytest.mark.parametrize("f", FANOUTS)
def test_rounds_are_the_digits_of_q_minus_1(f: int) -> None:
    """ceil(log_f q) rounds: as many as q - 1 has digits in base f (0 for one rank)."""
    for q in QS:
        want = 0 if q == 1 else len(np.base_repr(q - 1, f))
        assert predict(q, f)["rounds"] == want, q


@pytest.mark.parametrize("f", FANOUTS)
def test_messages(f: int) -> None:
    """f - 1 a round for q a power of f; q - 1 (point to point) once f >= q; never
    more than q - 1; the same for both exchanges."""
    for q in QS:
        p = predict(q, f)
        m = p["allgather"]["messages"]
        assert m == p["alltoall"]["messages"] == sum(p["alltoall"]["round_messages"])
        assert p["p2p_messages"] == q - 1
        assert m <= q - 1, q
        if f >= q:
            assert m == q - 1 and p["rounds"] == (q > 1), q
    for k in range(4):
        assert predict(f**k, f)["allgather"]["messages"] == (f - 1) * k


def test_fewer_messages_than_p2p_with_fanout_2() -> None:
    for q in range(5, 65):
        assert predict(q, 2)["allgather"]["messages"] < q - 1, q
    assert predict(9, 2)["allgather"]["messages"] == 4  # 1, 2, 4, 8 apart


def test_paper_totals_for_16_nodes() -> None:
    """Section 3: 16 compute nodes send 64 messages in all with one partner a round
    (fanout 2 here) and 128 with fanout 4, where the paper counts f messages a
    round, the node's own share included."""
    p2, p4 = predict(16, 2), predict(16, 4)
    assert (p2["rounds"], p4["rounds"]) == (4, 2)
    assert 16 * p2["allgather"]["messages"] == 64
    assert 16 * (p4["allgather"]["messages"] + p4["rounds"]) == 128


@pytest.mark.parametrize("f", FANOUTS)
@pytest.mark.parametrize("block", [0, 1, 5])
def test_words(f: int, block: int) -> None:
    """Allgather: q - 1 contributions and their length words, whatever the fanout.
    All-to-all: every piece and its 2 header words forwarded once per non-zero
    base-f digit of its offset (nothing for empty pieces)."""
    for q in QS:
        p = predict(q, f, block=block)
        assert p["allgather"]["words"] == (q - 1) * (block + 1), q
        want = sum(nonzero_digits(j, f) for j in range(1, q)) * (block + 2) if block else 0
        assert p["alltoall"]["words"] == want, q
        assert sum(p["alltoall"]["round_words"]) == want


@pytest.mark.parametrize("f", [2, 3, 4])
def test_buffers_for_powers_of_the_fanout(f: int) -> None:
    """q = f**K (Section 3's case): an allgather message carries at most half the
    data (f = 2) or the s = q / f contributions of the last round; a round receives
    (f - 1) / f of the data; an all-to-all message carries q / f pieces."""
    for k in range(1, 4):
        q = f**k
        g, a = predict(q, f)["allgather"], predict(q, f)["alltoall"]
        assert g["largest_message"] == pytest.approx(1 / f)
        assert g["largest_round"] == pytest.approx((f - 1) / f)
        assert a["largest_message"] == pytest.approx(1 / f)
        assert a["largest_round"] == pytest.approx((f - 1) / f)
        assert g["peak"] == pytest.approx(1 + 1 / f)
        # own pieces, all received ((f - 1) / f of them each round), one round's sends
        assert a["peak"] == pytest.approx(1 + k * (f - 1) / f + (f - 1) / f)


def test_one_rank_and_fanout_at_least_q() -> None:
    one = predict(1, 2)
    assert one["rounds"] == 0 and one["allgather"]["messages"] == 0
    assert one["allgather"]["words"] == one["alltoall"]["words"] == 0
    p = predict(7, 9, block=2)
    assert p["rounds"] == 1 and p["alltoall"]["round_messages"] == [6]
    assert p["alltoall"]["words"] == 6 * 4 and p["allgather"]["words"] == 6 * 3


@pytest.mark.parametrize(("args", "exc", "words"), [
    ((0, 2), ValueError, "q must be an integer >= 1"),
    ((4, 1), ValueError, "fanout must be >= 2"),
    ((4, 2.5), TypeError, "fanout must be an integer"),
    ((4, 2, -1), ValueError, "block must be an integer >= 0"),
    ((3.0, 2), ValueError, "q must be an integer"),
])
def test_predict_rejects_bad_arguments(args: tuple, exc: type, words: str) -> None:
    q, f, *rest = args
    with pytest.raises(exc, match=words):
        predict(q, f, **({"block": rest[0]} if rest else {}))


def test_fanout_checked_before_the_communicator() -> None:
    with pytest.raises(ValueError, match="fanout must be >= 2"):
        Butterfly(None, 1)
    with pytest.raises(TypeError, match="fanout must be an integer"):
        Butterfly(None, "4")
