"""Tests of the 2D-distributed BFS (:mod:`spbfs.mpi`).

The MPI tests launch ``mpiexec -n P python ...`` in a subprocess with a
timeout and check the exit status and output; each launch runs many cases
(see ``tests/mpi/dist_cases.py``) to pay the start-up once per rank count.
The pure-arithmetic parts (distribution, grid shapes, the zip CRC) run in
this process without initializing MPI.
"""

from __future__ import annotations

import json
import re
import zlib
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from mpi_launch import SCRIPTS, SharedJobs, launch, needs_mpi, on_grids, shared_args

from spbfs.kernels.bfs_steps import NO_INDEX
from spbfs.mpi.grid import Distribution, auto_grid_shape

# --------------------------------------------------------------------------- under mpiexec


@pytest.mark.mpi
@needs_mpi
# The grids (mpi_launch.SHARED says why these), each on the first ranks of its job
# (case_runner.sub_grid): two jobs start fewer ranks, which the semiring and validator
# cases share.
@on_grids(shared_args("dist_cases.py"))
def test_cases_match_serial_and_scipy(nranks: int, grids: list[str],
                                      shared_jobs: SharedJobs) -> None:
    """Levels equal one-process spbfs.bfs and scipy; trees valid; same graph on every grid."""
    ended, out, err = shared_jobs.part(nranks, "dist_cases.py", grids)
    assert ended, f"stdout:\n{out}\nstderr:\n{err}"
    assert "ALL OK" in out
    # The sampled roots depend on the seed and the graph, never on the grid.
    roots = {line.split(":", 1)[1] for line in out.splitlines() if line.startswith("roots ")}
    assert len(roots) == 1, roots


@pytest.mark.mpi
@needs_mpi
def test_two_by_one_topdown_counts_without_allreduce(shared_jobs: SharedJobs) -> None:
    """On 2 x 1 each rank counts the partner's top-down level itself: the same levels,
    counts, parents, edges and stops as one process, with one Allreduce fewer per level."""
    ended, out, err = shared_jobs.part(2, "duo_cases.py", [])
    assert ended, f"stdout:\n{out}\nstderr:\n{err}"
    assert "DUO OK" in out


@pytest.mark.mpi
@needs_mpi
@pytest.mark.parametrize("entry", ["spbfs.mpi", "spbfs.cli"])
def test_failing_rank_ends_the_job(entry: str) -> None:
    """An exception on rank 1 mid-search aborts all 4 ranks promptly with its message,
    through ``python -m spbfs.mpi`` and through the ``spbfs`` command alike."""
    rc, _, err, secs = launch(
        4, [str(SCRIPTS / "failing_rank.py"), "1", "2", entry, "bench", "--scale", "10",
            "--roots", "2", "--no-validate", "--grid", "2x2"],
        timeout=60,
    )
    assert rc != 0
    assert "rank 1: Error: injected failure on rank 1 at level 2" in err, err
    assert secs < 60


@pytest.mark.mpi
@needs_mpi
def test_grid_shape_mismatch_on_every_rank() -> None:
    rc, out, err, _ = launch(4, [str(SCRIPTS / "dist_errors.py"), "2x3"], timeout=60)
    assert rc == 0, err
    for r in range(4):
        assert f"rank {r} caught: grid 2x3 needs 6 ranks, got 4" in out, out
    rc, out, err, _ = launch(4, ["-m", "spbfs.mpi", "bench", "--grid", "2x3", "--scale", "6"],
                             timeout=60)
    assert rc == 2
    assert err.count("Error: grid 2x3 needs 6 ranks, got 4") == 1, err
    assert "Traceback" not in err


@pytest.mark.mpi
@needs_mpi
def test_bench_main(tmp_path: Path) -> None:
    """Graph500-style output, validated roots, per-phase table and JSON."""
    js = tmp_path / "b.json"
    rc, out, err, _ = launch(
        2, ["-m", "spbfs.mpi", "bench", "--scale", "10", "--roots", "4", "--grid", "1x2",
            "--format", "dcsc", "--json", str(js)], timeout=120,
    )
    assert rc == 0, err
    for key in ("SCALE:", "graph_generation:", "construction_time:", "bfs  harmonic_mean_TEPS:",
                "bfs  mean_validate:", "per-search phase split", "parent_updates", "rotate"):
        assert key in out, out
    doc = json.loads(js.read_text())
    assert len(doc["teps"]) and doc["header"]["grid"] == "1x2"
    assert min(doc["nedges"]) > 0 and all(v is not None for v in doc["validate_times"])
    # The Kronecker graph is undirected: every rank stores its block once, transposed.
    assert doc["memory"]["tblock"] > 0 and doc["memory"]["block"] == 0
    # One int32 copy: two entries (an edge and its mirror) of 4 bytes per input edge at
    # most, with the pointers (the block and its transpose took 11.5 here).
    assert doc["header"]["bytes_per_edge"] < 8, doc["header"]
    # 2 ranks are pinned only where a rank may use fewer than 2 cores.
    import os

    if len(os.sched_getaffinity(0)) >= 2:
        assert doc["header"]["pinned_cores"] == "none", doc["header"]


@pytest.mark.mpi
@needs_mpi
def test_bfs_file_writes_npz(tmp_path: Path) -> None:
    """``bfs FILE --out`` writes one npz in parallel that matches the serial search."""
    from spbfs import Graph, bfs
    from spbfs.generators import grid2d
    from spbfs.io import write_edgelist

    el = grid2d(13, 11)
    path = tmp_path / "g.txt"
    write_edgelist(path, el)
    out_npz = tmp_path / "res.npz"
    rc, out, err, _ = launch(
        3, ["-m", "spbfs.mpi", "bfs", str(path), "--source", "5", "--grid", "1x3",
            "--out", str(out_npz), "--validate", "--stats"], timeout=120,
    )
    assert rc == 0, err
    assert "validation: passed" in out and "wrote" in out
    ref = bfs(Graph.from_edgelist(el), 5)
    with np.load(out_npz) as z:
        assert int(z["source"]) == 5
        assert np.array_equal(z["levels"], ref.levels)
        assert z["parents"].shape == (el.n,)
    rc, out, err, _ = launch(2, ["-m", "spbfs.mpi", "bfs", str(tmp_path / "missing.txt"),
                                 "--source", "0"], timeout=60)
    assert rc == 2 and "Error: cannot read" in err and "Traceback" not in err


@pytest.mark.mpi
@needs_mpi
def test_parallel_read_matches_serial_reader(data_dir: Path) -> None:
    """Every rank parses its byte range (of the decompressed stream for gzip files, which
    rank 0 hands out; or its slice of an .npz); together they are the serial reader's
    edges, and bad ids fail with its messages. On two ranks (one boundary) and six
    (ranges of a few lines, uneven over every file): the first two, then all six, of
    one launch."""
    rc, out, err, _ = launch(6, [str(SCRIPTS / "read_cases.py"), str(data_dir), "2", "6"],
                             timeout=180)
    assert rc == 0, err
    for nranks in (2, 6):
        assert f"READ OK 88 files on {nranks} ranks" in out, out


@pytest.mark.mpi
@needs_mpi
def test_parallel_read_refuses_a_different_file_on_one_rank(tmp_path: Path) -> None:
    """A rank whose copy of the file differs (same size, other ids; shorter; other gzip
    content) makes every rank raise, instead of building another graph."""
    nranks = 3
    rc, out, err, _ = launch(nranks, [str(SCRIPTS / "same_file_cases.py"), str(tmp_path)],
                             timeout=120)
    assert rc == 0, err
    for r in range(nranks):
        assert f"rank {r} SAME FILE OK" in out and f"rank {r} read same: n=99" in out, out
        for case, what in (("content", "content differs between ranks;"),
                           ("size", "size differs between ranks (11994 to 12000);"),
                           ("gzip", "content differs between ranks;")):
            assert re.search(f"rank {r} caught {case}: cannot read \\S+: the ranks do not "
                             f"see the same file, its {re.escape(what)}", out), out


# --------------------------------------------------------------------------- in process


def test_auto_grid_shape() -> None:
    assert [auto_grid_shape(p) for p in (1, 2, 3, 4, 6, 8, 9, 12)] == [
        (1, 1), (2, 1), (3, 1), (2, 2), (3, 2), (4, 2), (3, 3), (4, 3)]
    with pytest.raises(ValueError):
        auto_grid_shape(0)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 5000), pr=st.integers(1, 5), pc=st.integers(1, 5))
def test_distribution_round_trips(n: int, pr: int, pc: int) -> None:
    d = Distribution(n, pr, pc)
    sizes = d.piece_sizes()
    assert sizes.sum() == n and (sizes >= 0).all() and sizes.max() <= d.b
    assert d.B64 % 64 == 0 and d.B64 >= d.b
    v = np.arange(n, dtype=np.int64)
    owner = d.piece_of(v)
    for k in range(d.p):
        lo, hi = d.piece_range(k)
        assert np.array_equal(v[owner == k], np.arange(lo, hi))
    i, j = d.row_chunk_of(v), d.col_chunk_of(v)
    for ii in range(pr):
        sel = v[i == ii]
        assert np.array_equal(d.global_rows(d.local_rows(sel, ii), ii), sel)
        assert (d.local_rows(sel, ii) < pc * d.B64).all()
    for jj in range(pc):
        sel = v[j == jj]
        assert np.array_equal(d.global_cols(d.local_cols(sel, jj), jj), sel)
        assert (d.local_cols(sel, jj) < pr * d.B64).all()
    # The transpose permutation is a bijection over pieces.
    dest = {d.column_layout_owner(k) for k in range(d.p)}
    assert dest == set(range(d.p))
    assert np.array_equal(d.block_owner(v, v), i * pc + j)


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2**31, 2**42), pr=st.integers(1, 64), pc=st.integers(1, 64),
       seed=st.integers(0, 2**32 - 1))
def test_distribution_int64_ids(n: int, pr: int, pc: int, seed: int) -> None:
    """Ids past 2**31 map to padded local ids and back without overflow."""
    d = Distribution(n, pr, pc)
    v = np.random.default_rng(seed).integers(0, n, 1000, dtype=np.int64)
    v = np.concatenate([v, [0, n - 1, min(d.b, n - 1)]])
    i, j = d.row_chunk_of(v), d.col_chunk_of(v)
    assert ((i >= 0) & (i < pr) & (j >= 0) & (j < pc)).all()
    for ii in np.unique(i):
        sel = v[i == ii]
        assert np.array_equal(d.global_rows(d.local_rows(sel, int(ii)), int(ii)), sel)
    for jj in np.unique(j):
        sel = v[j == jj]
        assert np.array_equal(d.global_cols(d.local_cols(sel, int(jj)), int(jj)), sel)
    lo, hi = d.piece_range(int(d.piece_of(v[0])))
    assert lo <= v[0] < hi


def test_crc32_combine() -> None:
    from spbfs.io.parallel_npz import _crc32_combine

    rng = np.random.default_rng(1)
    a = rng.integers(0, 256, 1000, dtype=np.uint8).tobytes()
    b = rng.integers(0, 256, 777, dtype=np.uint8).tobytes()
    assert _crc32_combine(zlib.crc32(a), zlib.crc32(b), len(b)) == zlib.crc32(a + b)
    assert _crc32_combine(zlib.crc32(a), zlib.crc32(b""), 0) == zlib.crc32(a)


@pytest.mark.parametrize(
    ("mode", "local_size", "threads", "allowed", "local_rank", "want"),
    [
        ("auto", 4, 1, [0, 1], 2, 0),  # oversubscribed: round robin over the cores
        ("auto", 4, 1, [0, 1], 3, 1),
        ("auto", 3, 1, [4, 6], 1, 6),  # the cores this process may use, not 0..k
        ("auto", 2, 1, [0, 1], 1, None),  # one core per rank: left to the OS
        ("auto", 4, 2, [0, 1], 1, None),  # threads would share one core
        ("core", 2, 1, [0, 1], 1, 1),
        ("core", 1, 1, [5], 0, 5),
        ("none", 8, 1, [0, 1], 3, None),
    ],
)
def test_bind_to_core(monkeypatch: pytest.MonkeyPatch, mode: str, local_size: int, threads: int,
                      allowed: list[int], local_rank: int, want: int | None) -> None:
    import os
    from types import SimpleNamespace

    from spbfs.mpi.grid import ProcessGrid

    pinned: list[set[int]] = []
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: set(allowed), raising=False)
    monkeypatch.setattr(os, "sched_setaffinity", lambda pid, cpus: pinned.append(set(cpus)),
                        raising=False)
    grid = SimpleNamespace(local_size=local_size, local_rank=local_rank, cpu=None)
    assert ProcessGrid.bind_to_core(grid, mode, threads) == want  # type: ignore[arg-type]
    assert grid.cpu == want
    assert pinned == ([] if want is None else [{want}])


def test_wait_policy_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    from spbfs.mpi.comm import WaitPolicy

    # The variable's old name still works, and warns on every read that it is old.
    monkeypatch.setenv("SPBFS_DIST_WAIT", "busy")
    with pytest.warns(DeprecationWarning, match="SPBFS_DIST_WAIT is deprecated"):
        assert WaitPolicy.from_env().busy
    monkeypatch.setenv("SPBFS_DIST_WAIT", "1e-5:1e-3:2e-5:1e-3")
    with pytest.warns(DeprecationWarning, match="SPBFS_DIST_WAIT is deprecated"):
        p = WaitPolicy.from_env()
    assert (p.spin, p.yield_, p.min_sleep, p.max_sleep) == (1e-5, 1e-3, 2e-5, 1e-3)
    monkeypatch.setenv("SPBFS_DIST_WAIT", "fast")
    with (pytest.warns(DeprecationWarning, match="SPBFS_DIST_WAIT is deprecated"),
          pytest.raises(ValueError, match="SPBFS_DIST_WAIT")):
        WaitPolicy.from_env()


@pytest.mark.parametrize("nparts", [2, 3])
def test_topdown_own_parallel_rows_match_serial(nparts: int) -> None:
    """The grid-column top-down kernel split over row ranges gives the serial
    kernel's parents (the smallest), levels, visited bits and new rows."""
    import scipy.sparse as sp

    from spbfs.generators import kronecker
    from spbfs.mpi import _kernels as K

    el = kronecker(12, 16, seed=4)
    n = el.n
    # Rows are destinations, columns sources: B[v, u] for an edge u - v.
    a = sp.coo_matrix((np.ones(2 * el.src.size), (np.r_[el.dst, el.src], np.r_[el.src, el.dst])),
                      shape=(n, n)).tocsc()
    a.sum_duplicates()
    a.sort_indices()
    ptr, ind = a.indptr.astype(np.int64), a.indices.astype(np.int32)
    deg = np.diff(ptr)
    hub = int(np.argmax(deg))
    frontier = np.sort(np.r_[hub, a.indices[ptr[hub]:ptr[hub] + 40]]).astype(np.int64)
    out = []
    for parts in (1, nparts):
        visited = np.zeros(n // 64, np.uint64)
        K.set_bits(frontier, visited, 0)
        parents = np.full(n, -1, np.int64)
        levels = np.full(n, -1, np.int64)
        new = np.empty(n, np.int64)
        k, scanned, degsum = K.topdown_own(ptr, ind, ind[:0], NO_INDEX, 0, frontier, visited,
                                           parents, levels, 2, deg, 0, n, n, new, parts)
        out.append((k, scanned, degsum, np.sort(new[:k]), parents, levels, visited))
    (k1, s1, d1, new1, p1, l1, v1), (k2, s2, d2, new2, p2, l2, v2) = out
    assert k1 == k2 > 0 and s1 == s2 == deg[frontier].sum() and d1 == d2
    np.testing.assert_array_equal(new1, new2)
    np.testing.assert_array_equal(new1, np.flatnonzero(l1 == 2))
    np.testing.assert_array_equal(p1, p2)
    np.testing.assert_array_equal(l1, l2)
    np.testing.assert_array_equal(v1, v2)


def _row_block(scale: int, seed: int, nparts: int) -> tuple[int, int, int, int, Any, Any]:
    """A symmetric Kronecker graph's first ``nparts`` row chunks (column-major, sorted):
    ``(n, chunk B, bitmap words per chunk, rows, ptr, ind)``."""
    import scipy.sparse as sp

    from spbfs.generators import kronecker

    el = kronecker(scale, 8, seed=seed)
    n = el.n
    B = n // nparts // 64 * 64
    nrow = nparts * B
    a = sp.coo_matrix((np.ones(2 * el.src.size), (np.r_[el.dst, el.src], np.r_[el.src, el.dst])),
                      shape=(n, n)).tocsc()[:nrow, :]
    a.sum_duplicates()
    a.sort_indices()
    return n, B, B // 64, nrow, a.indptr.astype(np.int64), a.indices.astype(np.int32)


@pytest.mark.parametrize("packed", [False, True])
@pytest.mark.parametrize(("nparts", "cap", "own"),
                         [(2, 10**9, -1), (3, 7, -1), (2, 1, -1), (2, 10**9, 0), (3, 7, 1),
                          (2, 1, 1)])
def test_topdown_pairs_resume_after_a_full_part(nparts: int, cap: int, own: int,
                                                packed: bool) -> None:
    """The transposed top-down's kernel: every row reached by the frontier and not
    already sent goes out once, with its smallest frontier column (as a global id of
    the column chunk starting at piece 1) as the parent; a full part stops the call
    before any pair is lost, and the caller grows the parts and resumes there. Rows
    of part ``own`` (this rank's piece) are taken at once instead, as the one-column
    top-down takes them: not yet visited, the smallest parent, listed once. Packed,
    a pair is the one word ``row << 32 | parent``."""
    from spbfs.mpi import _kernels as K

    n, B, bw, nrow, ptr, ind = _row_block(10, 3, nparts)
    rng = np.random.default_rng(nparts + cap + 5 * (own + 1))
    frontier = np.sort(rng.choice(n, 50, replace=False)).astype(np.int32)
    sent = np.zeros(nparts * bw, np.uint64)
    already = rng.choice(nrow, 150, replace=False)
    K.set_bits(already.astype(np.int64), sent, 0)
    # The own piece's visited rows: its share of ``already`` (its bits in ``sent``
    # are not read), so the rows reached are the same either way.
    visited = np.zeros(bw, np.uint64)
    mine = already[(already // B) == own] - own * B if own >= 0 else already[:0]
    K.set_bits(mine.astype(np.int64), visited, 0)
    parents = np.full(B, -1, np.int64)
    levels = np.full(B, -1, np.int64)
    deg = rng.integers(1, 100, B).astype(np.int64)
    new = np.full(B, -9, np.int64)
    depth = 4
    b, piece0 = B - 3, 1  # local column u is global (piece0 + u // B) * b + u % B
    counts = np.zeros(nparts, np.int64)
    c = min(cap, B)
    w = 1 if packed else 2  # words per pair
    out = np.full(w * nparts * c, -9, np.int64)
    at, e, scanned, calls, k, degsum = 0, -1, 0, 0, 0, 0
    while True:
        at, e, sc, k, ds = K.topdown_pairs(ptr, ind, ind[:0], frontier, sent, counts, out, c,
                                           piece0, b, B, at, e, own, visited, parents, levels,
                                           depth, deg, new, k, packed)
        scanned += sc
        degsum += ds
        calls += 1
        if at == frontier.shape[0]:
            break
        assert counts.max() == c  # stopped only at a full part
        grown = np.full(w * nparts * 2 * c, -9, np.int64)
        for t in range(nparts):
            grown[2 * w * t * c:2 * w * t * c + w * counts[t]] = \
                out[w * t * c:w * t * c + w * counts[t]]
        out, c = grown, 2 * c
    best: dict[int, int] = {}
    for u in frontier.tolist():
        for v in ind[ptr[u]:ptr[u + 1]].tolist():
            if v not in set(already.tolist()) and v not in best:
                best[v] = (piece0 + u // B) * b + u % B
    paired = {v: p for v, p in best.items() if v // B != own}
    fullest = max(sum(1 for v in paired if v // B == t) for t in range(nparts))
    assert (calls > 1) == (fullest > min(cap, B))
    assert scanned == int(np.diff(ptr)[frontier].sum())
    assert int(counts.sum()) == len(paired) > 0
    for t in range(nparts):
        rows = sorted(v for v in paired if v // B == t)
        words = out[w * t * c:w * (t * c + counts[t])]
        part = np.stack([words >> 32, words & 0xFFFFFFFF], axis=1) if packed \
            else words.reshape(-1, 2)
        part = part[np.argsort(part[:, 0])]
        expect = np.array([[v - t * B, best[v]] for v in rows], dtype=np.int64).reshape(-1, 2)
        np.testing.assert_array_equal(part, expect)
    got = np.unpackbits(sent.view(np.uint8), bitorder="little")[:nrow].astype(bool)
    want = np.zeros(nrow, bool)
    want[list(set(already.tolist()) | set(paired))] = True
    np.testing.assert_array_equal(got, want)
    taken = sorted(v - own * B for v in best if v // B == own)
    assert sorted(new[:k].tolist()) == taken
    assert (own < 0) == (k == 0)
    reached = np.flatnonzero(parents != -1)
    np.testing.assert_array_equal(reached, taken)
    np.testing.assert_array_equal(parents[reached], [best[v + own * B] for v in taken])
    assert (levels[reached] == depth).all() and (levels[parents == -1] == -1).all()
    assert degsum == int(deg[reached].sum())
    got_v = np.unpackbits(visited.view(np.uint8), bitorder="little")[:B].astype(bool)
    want_v = np.zeros(B, bool)
    want_v[np.r_[mine, np.array(taken, np.int64)].astype(np.int64)] = True
    np.testing.assert_array_equal(got_v, want_v)


@pytest.mark.parametrize("packed", [False, True])
def test_merge_pairs_takes_new_children_with_the_smallest_parent(packed: bool) -> None:
    """*Merge*, plain and packed (one word a pair): a child not visited before takes
    the smallest parent offered and the level, is listed once and its degree counted;
    a child reached at an earlier level keeps its parent; one reached at this level
    (by the rank itself) takes a smaller parent but is not listed again. Checked
    against a dictionary built pair by pair."""
    from spbfs.mpi import _kernels as K
    from spbfs.mpi.spmsv import merge_pairs

    rng = np.random.default_rng(11 + packed)
    B, depth = 640, 3
    parents = np.full(B, -1, np.int64)
    levels = np.full(B, -1, np.int64)
    earlier = rng.choice(B, 60, replace=False)
    parents[earlier] = rng.integers(0, 2**31, 60)
    levels[earlier] = rng.integers(0, depth, 60)
    same = np.setdiff1d(rng.choice(B, 40, replace=False), earlier)
    parents[same] = rng.integers(0, 2**31, same.size)
    levels[same] = depth
    visited = np.zeros(B // 64, np.uint64)
    K.set_bits(np.r_[earlier, same].astype(np.int64), visited, 0)
    deg = rng.integers(1, 50, B).astype(np.int64)
    # Parents near 2**32 - 1: the packed word's low half is read unsigned.
    msgs = [np.stack([rng.integers(0, B, m), rng.integers(2**32 - 3000, 2**32, m)], axis=1)
            for m in (300, 0, 500)]
    want_par, want_lv = parents.copy(), levels.copy()
    listed: list[int] = []
    for v, p in np.concatenate(msgs).tolist():
        if want_par[v] == -1:
            want_par[v], want_lv[v] = p, depth
            listed.append(v)
        elif want_lv[v] == depth:
            want_par[v] = min(want_par[v], p)
    recv = [(m[:, 0] << 32) | m[:, 1] if packed else m.reshape(-1) for m in msgs]
    new = np.full(B, -9, np.int64)
    k, degsum = merge_pairs(recv, 1, parents, levels, depth, visited, new, 5, deg, packed)
    assert k == 5 + len(listed) and sorted(new[5:k].tolist()) == sorted(listed)
    assert (new[:5] == -9).all() and degsum == int(deg[listed].sum())
    np.testing.assert_array_equal(parents, want_par)
    np.testing.assert_array_equal(levels, want_lv)
    got_v = np.unpackbits(visited.view(np.uint8), bitorder="little").astype(bool)
    np.testing.assert_array_equal(got_v, want_par != -1)


def test_pack_fits_keeps_the_word_non_negative() -> None:
    """A pair packs into one word only while parents fit 32 bits and local ids 31."""
    from spbfs.mpi import _kernels as K

    assert K.pack_fits(2**32, 2**31)
    assert not K.pack_fits(2**32 + 1, 64)
    assert not K.pack_fits(2**32, 2**31 + 64)


@pytest.mark.parametrize("nparts", [2, 3])
def test_topdown_fold_pairs_against_numpy(nparts: int) -> None:
    """The fused fold kernel of a grid with ``pc > 1``: every row reached by the
    frontier and not already sent (or visited in the own part) is sent once, with
    its smallest frontier column as the parent, in its owner's region of the
    output; the sent bitmap then holds every row sent."""
    from spbfs.mpi import _kernels as K

    n, B, bw, nrow, ptr, ind = _row_block(11, 7, nparts)
    rng = np.random.default_rng(nparts)
    frontier = np.sort(rng.choice(n, 60, replace=False)).astype(np.int64)
    own = 1
    sent = np.zeros(nparts * bw, np.uint64)
    already = rng.choice(nrow, 200, replace=False)
    K.set_bits(already.astype(np.int64), sent, 0)
    visited = np.zeros(bw, np.uint64)
    seen = rng.choice(B, 100, replace=False).astype(np.int64)
    K.set_bits(seen, visited, 0)
    counts = np.full(nparts, -5, np.int64)
    out = np.full(2 * nrow, -9, np.int64)
    q, scanned, msgs = K.topdown_fold(ptr, ind, ind[:0], NO_INDEX, 0, frontier, sent, visited,
                                      own, bw, nparts, counts, out, 0, B, B)
    # Reference: smallest frontier column per row, minus rows already sent or seen.
    excluded = set(already.tolist()) | {own * B + int(v) for v in seen}
    best: dict[int, int] = {}
    for u in frontier.tolist():
        for v in ind[ptr[u]:ptr[u + 1]].tolist():
            if v not in excluded and v not in best:
                best[v] = u
    assert q == len(best) > 0 and scanned == int(np.diff(ptr)[frontier].sum())
    for t in range(nparts):
        rows = sorted(v for v in best if v // B == t)
        assert counts[t] == len(rows)
        part = out[2 * t * B:2 * (t * B + counts[t])].reshape(-1, 2)
        part = part[np.argsort(part[:, 0])]
        expect = np.array([[v - t * B, best[v]] for v in rows], dtype=np.int64).reshape(-1, 2)
        np.testing.assert_array_equal(part, expect)
    assert msgs == sum(1 for t in range(nparts) if t != own and counts[t])
    got = np.unpackbits(sent.view(np.uint8), bitorder="little")[:nrow].astype(bool)
    want = np.zeros(nrow, bool)
    want[list(excluded | set(best))] = True
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("density", [0.0, 0.3, 1.0])
def test_first_candidates_are_open_rows_with_entries(density: float) -> None:
    """The first bottom-up level's candidates (``ids_and_not``): rows with entries
    whose bit in ``comp`` is clear, as slots (``slot0`` + row) in increasing order."""
    from spbfs.kernels.bitmaps import ids_and_not, set_bits

    rng = np.random.default_rng(int(density * 10))
    nrows = 64 * 37
    has = rng.random(nrows) < 0.7
    done = rng.random(nrows) < density
    ne = np.zeros(nrows // 64, np.uint64)
    comp = np.zeros(nrows // 64, np.uint64)
    set_bits(np.flatnonzero(has), ne, 0)
    set_bits(np.flatnonzero(done), comp, 0)
    cand = np.full(nrows, -1, np.int32)
    k = ids_and_not(ne, comp, 5 * nrows, cand)
    np.testing.assert_array_equal(cand[:k], 5 * nrows + np.flatnonzero(has & ~done))
    assert (cand[k:] == -1).all()
