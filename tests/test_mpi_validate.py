"""Tests of the distributed Graph500 validator and of 64-bit ids on the grid.

Under ``mpiexec``, ``tests/mpi/validate_cases.py`` breaks correct distributed
results in every way the Graph500 rules forbid and checks that
:meth:`~spbfs.mpi.bfs.DistBFSResult.validate` rejects each on every rank, as
the serial validator does; it also runs the search with 64-bit local indices.

In this process, without MPI: the id arithmetic past ``2**31`` and ``2**32``.
A graph with ``n > 2**31`` cannot run here: every rank holds its piece of
``parents`` and ``levels`` and row-chunk buffers of ``pc * B64`` int64 slots,
so ``n = 2**31 + 1`` needs over 30 GiB on any grid that fits this machine's
cores. What such a graph exercises, the translation between global and local
ids and the kernels that write global ids, is tested with the parameters of
huge distributions on blocks holding a few entries.
"""

from __future__ import annotations

import numpy as np
import pytest
from mpi_launch import SharedJobs, needs_mpi, on_grids, shared_args

from spbfs.kernels.bfs_steps import search_index
from spbfs.mpi import _kernels as K
from spbfs.mpi.grid import Distribution

# --------------------------------------------------------------------------- under mpiexec


@pytest.mark.mpi
@needs_mpi
# A grid runs on the first ranks of its launch (case_runner.sub_grid); the six-rank
# grids in the job that test_mpi.py's and the semiring cases share (mpi_launch.SHARED).
@on_grids({3: ["1x1", "1x2", "2x1", "1x3"], **shared_args("validate_cases.py")})
def test_distributed_validator_rejects_broken_results(nranks: int, grids: list[str],
                                                      shared_jobs: SharedJobs) -> None:
    """Every break raises the same ValidationError on every rank, with the serial
    validator's rule (and message, for the vertex rules); int64 blocks search right."""
    ended, out, err = shared_jobs.part(nranks, "validate_cases.py", grids)
    assert ended, f"stdout:\n{out}\nstderr:\n{err}"
    assert "VALIDATE OK" in out and " ".join(grids) in out, out


# --------------------------------------------------------------------------- in process

#: Distributions whose global ids pass 2**31 or 2**32: (n, pr, pc).
BIG = [
    (2**31 + 1, 1, 1),  # one piece: local ids are the global ids, past 2**31
    (2**32 + 3, 3, 2),  # 3 * B64 > 2**31: 64-bit local column ids
    (2**33 + 3, 2048, 2048),  # 32-bit local ids, global ids near 2**33
    (2**40 + 7, 64, 64),  # local ids past 2**32 too
]


def _slots(d: Distribution, pieces: int) -> np.ndarray:
    """Local ids across a chunk of ``pieces`` pieces: each piece's first, second,
    last real and last padded slot, for the first, second and last pieces."""
    qs = sorted({0, min(1, pieces - 1), pieces - 1})
    rs = sorted({0, 1, d.b - 1, d.B64 - 1})
    return np.array([q * d.B64 + r for q in qs for r in rs], dtype=np.int64)


@pytest.mark.parametrize(("n", "pr", "pc"), BIG)
def test_global_id_past_int32(n: int, pr: int, pc: int) -> None:
    """The kernels' ``global_id`` equals :meth:`Distribution.global_cols`, which
    round-trips with ``local_cols``, for ids past 2**31 and 2**32, 32-bit local
    ids (where they fit) and 64-bit ones alike."""
    d = Distribution(n, pr, pc)
    u = _slots(d, pr)
    widths = [np.int64] + ([np.int32] if d.local_dtype() == np.int32 else [])
    seen = 0
    for j in sorted({0, pc - 1}):
        want = d.global_cols(u, j)
        # Padding slots, and slots of pieces past n, have no vertex to come back from.
        real = ((u % d.B64) < d.b) & (want < n)
        assert real.any()
        assert np.array_equal(d.local_cols(want[real], j), u[real])
        assert (d.col_chunk_of(want[real]) == j).all()
        for dt in widths:
            got = [K.global_id(dt(x), j * pr, d.b, d.B64) for x in u]
            assert got == want.tolist(), (dt, j)
        seen = max(seen, int(want.max()))
    # The cases are there to reach these ranges; make sure they do.
    assert seen >= 2**31 and (n < 2**32 or seen >= 2**32), seen


def test_distribution_at_the_int32_boundaries() -> None:
    """Pieces, owners and local ids of the ids around 2**31 and 2**32, and the
    local index width switching exactly where local ids stop fitting int32."""
    n = 2**32 + 2**20
    d = Distribution(n, 3, 2)
    ids = np.array([2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**32 + 1, n - 1], dtype=np.int64)
    for v in ids.tolist():
        k = d.piece_of(v)
        assert isinstance(k, int) and k == d.piece_of(np.array([v]))[0]
        lo, hi = d.piece_range(k)
        assert lo <= v < hi
        i, j = d.row_chunk_of(v), d.col_chunk_of(v)
        assert d.block_owner(v, v) == i * d.pc + j
        assert int(d.global_rows(d.local_rows(v, i), i)) == v
        assert int(d.global_cols(d.local_cols(v, j), j)) == v
        assert 0 <= int(d.local_rows(v, i)) < d.pc * d.B64
        assert 0 <= int(d.local_cols(v, j)) < d.pr * d.B64
    # int32 while the longest chunk, max(pr, pc) * B64 slots (a length the search
    # also stores), stays below 2**31; int64 from there.
    assert Distribution(2 * (2**30 - 64), 2, 1).local_dtype() == np.int32
    assert Distribution(2 * 2**30, 2, 1).local_dtype() == np.int64
    assert d.local_dtype() == np.int64


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("width", [np.int32, np.int64])
def test_check_tuples_past_int32(directed: bool, width: type) -> None:
    """The validation's edge pass on rank (2047, 2045) of a 2048 x 2048 grid over
    ``2**33 + 3`` vertices: 32-bit local ids, global ids near 2**33. Tree edges are
    confirmed by their global parent ids; a parent equal to the id wrapped to
    int32 is not; a tuple two levels apart is the first bad one."""
    d = Distribution(2**33 + 3, 2048, 2048)
    assert d.local_dtype() == np.int32  # what DistGraph keeps its tuples in
    i, j = 2047, 2045
    unreached = np.int64(2**62)
    size = 2 * d.B64  # the first two pieces of each chunk: enough slots for the tuples
    row_key = np.full(size, unreached)
    col_key = np.full(size, unreached)
    row_par = np.full(size, -1, dtype=np.int64)
    col_par = np.full(size, -1, dtype=np.int64)

    def vrow(q: int, r: int) -> tuple[int, int]:  # local row, global id
        return q * d.B64 + r, int(d.global_rows(q * d.B64 + r, i))

    def ucol(q: int, r: int) -> tuple[int, int]:  # local column, global id
        return q * d.B64 + r, int(d.global_cols(q * d.B64 + r, j))

    (v0, _), (u0, gu0) = vrow(1, 5), ucol(0, 7)  # tree edge u0 -> v0
    row_key[v0], col_key[u0], row_par[v0] = 4, 3, gu0
    (v1, gv1), (u1, _) = vrow(0, 9), ucol(1, d.b - 1)  # tree edge v1 -> u1 (the mirror)
    row_key[v1], col_key[u1], col_par[u1] = 6, 7, gv1
    # A parent id wrapped to int32, as 32-bit arithmetic would compute it: no tree edge.
    (v2, _), (u2, gu2) = vrow(1, 11), ucol(1, 13)
    row_key[v2], col_key[u2], row_par[v2] = 4, 3, int(np.array(gu2).astype(np.int32))
    (v3, _), (u3, _) = vrow(0, 20), ucol(0, 21)  # levels 2 apart: rule 3 (either way)
    row_key[v3], col_key[u3] = 5, 3
    (v4, _), (u4, _) = vrow(0, 30), ucol(0, 31)  # both unreached: fine, not in the component
    assert min(gu0, gv1, gu2) > 2**32
    rows = np.array([v0, v1, v2, v3, v4], dtype=width)
    cols = np.array([u0, u1, u2, u3, u4], dtype=width)
    row_conf = np.zeros(size, dtype=np.bool_)
    col_conf = np.zeros(size, dtype=np.bool_)
    bad_first, nbad, comp = K.check_tuples(rows, cols, directed, row_key, col_key, row_par,
                                           col_par, i * d.pc, j * d.pr, d.b, d.B64, unreached,
                                           row_conf, col_conf)
    assert (bad_first, nbad, comp) == (3, 1, 4)
    assert np.flatnonzero(row_conf).tolist() == [v0]
    assert np.flatnonzero(col_conf).tolist() == ([] if directed else [u1])


@pytest.mark.parametrize("nparts", [1, 2])
def test_topdown_parents_past_int32(nparts: int) -> None:
    """A top-down step with 64-bit local column ids past 2**31 and 2**32 (grid
    2**21 x 1 over ``2**33 + 3`` vertices, the last rank's dcsc block): every new
    row's parent is the global id of its smallest frontier column."""
    d = Distribution(2**33 + 3, 2**21, 1)
    assert d.local_dtype() == np.int64
    # Frontier columns at local ids 5, ~2.5e9, ~6.2e9 and the slot of vertex n - 1
    # (the last pieces are empty: b * pr > n).
    q, r = divmod(d.n - 1, d.b)
    cols = np.array([5, 600_000 * d.B64 + 17, 1_500_000 * d.B64 + 3, q * d.B64 + r],
                    dtype=np.int64)
    assert cols[1] > 2**31 and cols[2] > 2**32
    entries = {cols[0]: [3, 40], cols[1]: [3, 7, 63], cols[2]: [1, 7], cols[3]: [1, 2]}
    jc = np.array(sorted(entries), dtype=np.int64)
    ptr = np.concatenate([[0], np.cumsum([len(entries[c]) for c in jc])]).astype(np.int64)
    ind = np.concatenate([entries[c] for c in jc]).astype(np.int64)
    frontier = cols[1:]  # column 5 is not in the frontier: rows 3 and 40 wait
    visited = np.zeros(1, dtype=np.uint64)
    parents = np.full(64, -1, dtype=np.int64)
    levels = np.full(64, -1, dtype=np.int64)
    new = np.empty(64, dtype=np.int64)
    deg = np.ones(64, dtype=np.int64)
    aux, shift = search_index(jc)
    k, scanned, _ = K.topdown_own(ptr, ind, jc, aux, shift, frontier, visited, parents, levels,
                                  3, deg, 0, d.b, d.B64, new, nparts, dcsc=True)
    g = d.global_cols(cols, 0)
    want = {3: g[1], 7: g[1], 63: g[1], 1: g[2], 2: g[3]}
    assert k == len(want) and scanned == 7
    assert sorted(new[:k].tolist()) == sorted(want)
    assert {v: int(parents[v]) for v in want} == {v: int(p) for v, p in want.items()}
    assert g[3] == d.n - 1 and (parents[[0, 40]] == -1).all()
    assert (levels[list(want)] == 3).all()
