"""The distributed graph's construction kernels and the host transpose, in one process.

:mod:`spbfs.mpi._construct` routes edges as local-id records, builds a
rank's block from them and keeps its input tuples as counts on the block's
entries; :meth:`semirings.blocks.Block.transpose` transposes a host block in
one counting pass. Each is checked here against plain numpy / the generic path
(the MPI side runs in ``tests/mpi/dist_cases.py``).
"""

from __future__ import annotations

import numpy as np
import pytest

from semirings.blocks import block_from_edges
from spbfs.mpi import _construct as K
from spbfs.mpi import _kernels as DK
from spbfs.mpi.grid import Distribution


def _generic_transpose(block):  # type: ignore[no-untyped-def]
    return block_from_edges(block.format, np.asarray(block.column_ids()),
                            np.asarray(block.ind, dtype=np.int64),
                            (block.shape[1], block.shape[0]), values=block.data,
                            index_dtype=block.index_dtype, dedup=False)


@pytest.mark.parametrize("fmt", ["csr", "dcsc"])
@pytest.mark.parametrize("values", [False, True])
@pytest.mark.parametrize("shape", [(7, 5), (40, 90), (300, 2)])
def test_host_transpose_matches_generic(fmt: str, values: bool, shape: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(shape))
    k = 3 * max(shape)
    rows = rng.integers(0, shape[0], k)
    cols = rng.integers(0, shape[1], k)
    vals = rng.random(k) if values else None
    # dedup=False keeps repeated entries: their order must survive the transpose.
    b = block_from_edges(fmt, rows, cols, shape, values=vals, dedup=False)
    t = b.transpose()
    want = _generic_transpose(b)
    assert t.shape == want.shape and t.format == fmt
    assert t.index_dtype == b.index_dtype
    assert np.array_equal(t.ptr, want.ptr) and np.array_equal(t.ind, want.ind)
    if fmt == "dcsc":
        assert np.array_equal(t.jc, want.jc)
    if values:
        assert np.array_equal(t.data, want.data)
    assert t.transpose() is b


def test_hypersparse_dcsc_transpose_takes_generic_path() -> None:
    b = block_from_edges("dcsc", [10**6 - 1, 3], [0, 1], (10**6, 2))
    t = b.transpose()
    assert t.shape == (2, 10**6)
    assert np.array_equal(np.asarray(t.jc), [3, 10**6 - 1])
    assert np.array_equal(np.asarray(t.ind), [1, 0])


def test_int32_ids_build_the_same_block() -> None:
    rng = np.random.default_rng(3)
    rows = rng.integers(0, 50, 400)
    cols = rng.integers(0, 60, 400)
    for fmt in ("csr", "dcsc"):
        a = block_from_edges(fmt, rows, cols, (50, 60))
        b = block_from_edges(fmt, rows.astype(np.int32), cols.astype(np.int32), (50, 60))
        assert np.array_equal(a.ptr, b.ptr) and np.array_equal(a.ind, b.ind)
    with pytest.raises(ValueError, match="out of range"):
        block_from_edges("csr", np.array([50], np.int32), np.array([0], np.int32), (50, 60))


@pytest.mark.parametrize(("n", "pr", "pc"), [(1000, 2, 3), (64, 1, 1), (97, 4, 1), (500, 3, 3)])
def test_routing_records_follow_the_distribution(n: int, pr: int, pc: int) -> None:
    d = Distribution(n, pr, pc)
    rng = np.random.default_rng(n)
    rows = rng.integers(0, n, 3000)
    cols = rng.integers(0, n, 3000)
    counts = np.zeros(d.p, np.int64)
    K.count_global(rows, cols, d.b, d.B64, pr, pc, counts)
    owner = d.block_owner(rows, cols)
    assert np.array_equal(counts, np.bincount(owner, minlength=d.p))
    pos = np.concatenate([[0], np.cumsum(counts)[:-1]])
    out = np.empty(2 * rows.size, np.int32)
    K.fill_global(rows, cols, d.b, d.B64, pr, pc, pos, out)
    order = np.argsort(owner, kind="stable")
    for r in range(d.p):
        i, j = divmod(r, pc)
        mine = order[np.searchsorted(owner[order], r):np.searchsorted(owner[order], r + 1)]
        lo = 2 * int(np.sum(counts[:r]))
        got = out[lo:lo + 2 * mine.size]
        assert np.array_equal(got[0::2], d.local_rows(rows[mine], i))
        assert np.array_equal(got[1::2], d.local_cols(cols[mine], j))
        # The mirrors of these records, B[u, v], go where block_owner(u, v) says.
        mc = np.zeros(d.p, np.int64)
        K.count_mirrors(got, i * pc, j * pr, d.b, d.B64, pr, pc, mc)
        keep = rows[mine] != cols[mine]
        want = np.bincount(d.block_owner(cols[mine][keep], rows[mine][keep]), minlength=d.p)
        assert np.array_equal(mc, want)


def _records(d: Distribution, i: int, j: int, k: int, seed: int) -> np.ndarray:
    """Random records of rank (i, j): local ids of its row and column chunks, some loops."""
    rng = np.random.default_rng(seed)
    rows_g = np.concatenate([rng.integers(p * d.b, min((p + 1) * d.b, d.n), k)
                             for p in range(i * d.pc, (i + 1) * d.pc) if p * d.b < d.n])
    cols_g = np.concatenate([rng.integers(p * d.b, min((p + 1) * d.b, d.n), k)
                             for p in range(j * d.pr, (j + 1) * d.pr) if p * d.b < d.n])
    m = min(rows_g.size, cols_g.size)
    rows_g, cols_g = rng.permutation(rows_g)[:m], rng.permutation(cols_g)[:m]
    rec = np.empty(2 * m, np.int32)
    rec[0::2] = d.local_rows(rows_g, i)
    rec[1::2] = d.local_cols(cols_g, j)
    return rec


@pytest.mark.parametrize("transpose", [False, True])
@pytest.mark.parametrize(("n", "pr", "pc", "i", "j"),
                         [(300, 1, 1, 0, 0), (300, 2, 2, 1, 1), (1000, 2, 3, 1, 0),
                          (200, 3, 1, 2, 0)])
def test_block_and_tuple_counts_rebuild_the_tuples(n: int, pr: int, pc: int, i: int,
                                                   j: int, transpose: bool) -> None:
    d = Distribution(n, pr, pc)
    row0, col0 = i * pc, j * pr
    tup = _records(d, i, j, 400, n + i)
    # Repeat some records and add loops where the block holds diagonal ids.
    tup = np.concatenate([tup, tup[:200], tup[:40]])
    mir = _records(d, i, j, 100, n + 7)
    gr = d.global_rows(tup[0::2].astype(np.int64), i)
    gc = d.global_cols(tup[1::2].astype(np.int64), j)
    loop = gr == gc
    nrows, ncols = pc * d.B64, pr * d.B64
    # The stored block's (slot, entry) words of a record: (column, row) of B_ij, or
    # (row, column) of its transpose.
    sw, ew = (0, 1) if transpose else (1, 0)
    nslots, nind = (nrows, ncols) if transpose else (ncols, nrows)
    tup_box, mir_box = [tup.copy()], [mir.copy()]
    ptr, ind, counts, (lr, lc) = K.build_columns(tup_box, mir_box, row0, col0, d.b, d.B64,
                                                 nind, nslots, transpose=transpose)
    assert tup_box == [] and mir_box == []  # emptied: the caller's references are gone
    # The block: the distinct non-loop tuple entries and mirrors, sorted by (slot, entry).
    es = np.concatenate([tup[sw::2][~loop], mir[sw::2]]).astype(np.int64)
    ee = np.concatenate([tup[ew::2][~loop], mir[ew::2]]).astype(np.int64)
    key = np.unique(es * nind + ee)
    assert np.array_equal(np.repeat(np.arange(nslots), np.diff(ptr)), key // nind)
    assert np.array_equal(ind, key % nind)
    assert counts.dtype == np.uint8 and lr.size == int(loop.sum())
    # Every entry counts the non-loop tuples on it.
    tk = np.sort(tup[sw::2][~loop].astype(np.int64) * nind + tup[ew::2][~loop])
    want_counts = np.searchsorted(tk, key, side="right") - np.searchsorted(tk, key, side="left")
    assert np.array_equal(counts, want_counts)
    rows = np.empty(int(counts.sum()), np.int32)
    cols = np.empty_like(rows)
    # expand_tuples writes (entry, slot): a transposed block's are (column, row).
    out = (cols, rows) if transpose else (rows, cols)
    k, s, e = K.expand_tuples(ptr, ind, ind[:0], False, counts, 0, 0, *out)
    assert (k, s, e) == (rows.size, nslots, ind.size)
    got = np.sort(np.concatenate([cols, lc]).astype(np.int64) * nrows
                  + np.concatenate([rows, lr]))
    want = np.sort(tup[1::2].astype(np.int64) * nrows + tup[0::2])
    assert np.array_equal(got, want)
    # In pieces: stops before an entry whose copies do not fit, resumes there.
    parts, s, e = [], 0, 0
    while s < nslots:
        r2, c2 = np.empty(5, np.int32), np.empty(5, np.int32)
        k, s, e = K.expand_tuples(ptr, ind, ind[:0], False, counts, s, e, r2, c2)
        parts.append(c2[:k])
    assert np.array_equal(np.concatenate(parts), out[1])
    lev = np.where(np.arange(ncols) % 3 == 0, -1, 2)
    allc = np.concatenate([cols, lc])
    assert K.reached_tuples(ptr, ind, ind[:0], False, counts, lc, lev, transpose) == \
        np.count_nonzero(lev[allc] >= 0)


def test_tuple_counts_widen_past_255() -> None:
    d = Distribution(64, 1, 1)
    rec = np.tile(np.array([3, 5], np.int32), 300)
    mirrors = np.tile(np.array([3, 5, 4, 5], np.int32), 7)
    ptr, ind, counts, loops = K.build_columns([rec], [mirrors], 0, 0, d.b, d.B64, d.B64, d.B64)
    assert loops[0].size == 0 and counts.dtype == np.uint16
    assert ind.tolist() == [3, 4] and counts.tolist() == [300, 0] and ptr[5:7].tolist() == [0, 2]


@pytest.mark.parametrize("directed", [False, True])
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("transpose", [False, True])
def test_check_entries_equals_checking_the_rebuilt_tuples(directed: bool, seed: int,
                                                          transpose: bool) -> None:
    d = Distribution(400, 2, 2)
    i, j = 1, 0
    row0, col0 = i * d.pc, j * d.pr
    tup = _records(d, i, j, 300, seed)
    tup = np.concatenate([tup, tup[:100]])
    nrows, ncols = d.pc * d.B64, d.pr * d.B64
    shape = (ncols, nrows) if transpose else (nrows, ncols)
    ptr, ind, counts, _ = K.build_columns([tup], [], row0, col0, d.b, d.B64, *shape,
                                          transpose=transpose)
    rows = np.empty(int(counts.sum()), np.int32)
    cols = np.empty_like(rows)
    # In the order check_entries visits the entries (a transposed block's: by row).
    K.expand_tuples(ptr, ind, ind[:0], False, counts, 0, 0,
                    *((cols, rows) if transpose else (rows, cols)))
    rng = np.random.default_rng(seed)
    unreached = np.int64(2**62)
    # Levels mostly one apart along tuples, some far apart (bad) and some unreached.
    row_key = np.where(rng.random(nrows) < 0.2, unreached, rng.integers(0, 3 + 2 * seed, nrows))
    col_key = np.where(rng.random(ncols) < 0.2, unreached, rng.integers(0, 3, ncols))
    row_par = d.global_cols(rng.integers(0, ncols, nrows), j)
    col_par = d.global_rows(rng.integers(0, nrows, ncols), i)
    want_rc, want_cc = np.zeros(nrows, bool), np.zeros(ncols, bool)
    got_rc, got_cc = np.zeros(nrows, bool), np.zeros(ncols, bool)
    # Make some tree edges real, so that confirmations happen.
    some = rng.choice(rows.size, 50, replace=False)
    row_par[rows[some]] = d.global_cols(cols[some].astype(np.int64), j)
    bad_at, nbad, comp = DK.check_tuples(rows, cols, directed, row_key, col_key, row_par,
                                         col_par, row0, col0, d.b, d.B64, unreached, want_rc,
                                         want_cc)
    br, bc, nbad2, comp2 = K.check_entries(ptr, ind, ind[:0], False, counts, directed, row_key,
                                           col_key, row_par, col_par, row0, col0, d.b, d.B64,
                                           unreached, got_rc, got_cc, transpose)
    assert (nbad2, comp2) == (nbad, comp)
    assert np.array_equal(got_rc, want_rc) and np.array_equal(got_cc, want_cc)
    assert want_rc.any()
    if bad_at >= 0:
        assert (br, bc) == (rows[bad_at], cols[bad_at])
    else:
        assert (br, bc) == (-1, -1)


def test_column_groups_sort_alike_on_one_thread_and_in_parallel(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Small groups sort and merge on one thread (a parallel region per group costs more
    than their work), large ones in parallel: the same block either way, repeated
    tuples (counts past 255 too), mirrors and self-loops included."""
    rng = np.random.default_rng(11)
    d = Distribution(300, 1, 1)
    rows, cols = rng.integers(0, 300, 5000), rng.integers(0, 300, 5000)
    rows[:600], cols[:600] = 7, 9  # one entry standing for 600 tuples
    tup = np.stack([rows, cols], axis=1).reshape(-1).astype(np.int32)
    mir = np.stack([cols[rows != cols], rows[rows != cols]], axis=1).reshape(-1).astype(np.int32)
    ran: list[str] = []
    for name in ("_sort_runs_parallel", "_sort_runs_serial", "_merge_runs_parallel",
                 "_merge_runs_serial"):
        kernel = getattr(K, name)
        monkeypatch.setattr(K, name, lambda *a, _k=kernel, _n=name: (ran.append(_n), _k(*a)))
    built = {}
    for entries in (1, 1 << 40):
        monkeypatch.setattr(K, "PAR_ENTRIES", entries)
        built[entries] = K.build_columns([tup.copy()], [mir.copy()], 0, 0, d.b, d.B64, d.B64,
                                         d.B64, nbuckets=3)
    par, ser = built[1], built[1 << 40]
    for a, b in zip([*par[:3], *par[3]], [*ser[:3], *ser[3]], strict=True):
        assert np.array_equal(a, b)
    assert int(par[2].max()) == 600
    # Against the symmetric block of the edges but their self-loops (put aside).
    r, c = rows[rows != cols], cols[rows != cols]
    want = block_from_edges("csr", np.concatenate([c, r]), np.concatenate([r, c]),
                            (d.B64, d.B64))
    assert np.array_equal(par[0], want.ptr) and np.array_equal(par[1], want.ind)
    assert par[3][0].shape[0] == int((rows == cols).sum())
    import numba

    if numba.get_num_threads() > 1:
        assert ran.count("_sort_runs_parallel") == 3 and ran.count("_sort_runs_serial") == 3
        assert ran.count("_merge_runs_parallel") >= 3 and ran.count("_merge_runs_serial") >= 3
