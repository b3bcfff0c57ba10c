"""spbfs.bfs on raw scipy matrices: the one-off search, the cached Graph, never stale.

Every result is checked against scipy's own ``breadth_first_order`` on the
same matrix (levels derived from its order and predecessors) and the parents
against the spbfs rule, computed here with numpy from the matrix's entries:
``parents[v]`` is the smallest vertex one level above ``v`` with an edge to it.
"""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import spbfs
from spbfs.generators import kronecker
from spbfs.matrix_cache import MatrixCache, RowsInput, process_cache
from spbfs.matrix_structure import (
    CANONICAL,
    DUPLICATES,
    UNSORTED,
    check_compressed,
    fingerprint,
    row_order,
    structurally_symmetric,
)

# --------------------------------------------------------------------------- references


def scipy_levels(a, source: int, directed: bool = True) -> np.ndarray:
    """Levels from scipy's breadth-first order and predecessors (-1 where unreached)."""
    order, pred = csgraph.breadth_first_order(a, source, directed=directed,
                                              return_predecessors=True)
    levels = np.full(a.shape[0], -1, dtype=np.int64)
    levels[source] = 0
    for v in order[1:]:  # a predecessor comes before its successors in the order
        levels[v] = levels[pred[v]] + 1
    return levels


def min_parents(a, levels: np.ndarray, source: int) -> np.ndarray:
    """The smallest in-neighbour one level up, from the entries of ``a`` (-1 where unreached)."""
    c = sp.coo_array(a)
    r, k = c.row.astype(np.int64), c.col.astype(np.int64)
    keep = (levels[r] >= 0) & (levels[k] == levels[r] + 1)
    best = np.full(a.shape[0], np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(best, k[keep], r[keep])
    out = np.where(levels >= 0, best, -1)
    out[source] = source
    return out


def check_result(r, a, source: int, directed: bool = True) -> None:
    """Levels equal scipy's on ``a``; parents are the smallest one level up."""
    ref = scipy_levels(a, source, directed)
    np.testing.assert_array_equal(r.levels, ref)
    pattern = a if directed else (abs(sp.csr_array(a)) + abs(sp.csr_array(a)).T)
    if not directed:
        pattern = sp.csr_array((np.ones(pattern.nnz), pattern.indices, pattern.indptr),
                               shape=pattern.shape)
    np.testing.assert_array_equal(r.parents, min_parents(pattern, ref, source))


# --------------------------------------------------------------------------- matrices


def directed_matrix(seed: int = 1, n: int = 300, density: float = 0.01) -> sp.csr_array:
    rng = np.random.default_rng(seed)
    m = int(density * n * n)
    a = sp.coo_array((rng.random(m), (rng.integers(0, n, m), rng.integers(0, n, m))),
                     shape=(n, n)).tocsr()
    a.sum_duplicates()
    return a


def kron_matrix(scale: int = 10, seed: int = 3) -> sp.csr_array:
    """A symmetric Kronecker matrix (self-loops and duplicates dropped)."""
    return sp.csr_array(spbfs.Graph.from_edgelist(kronecker(scale, 16, seed=seed)).to_scipy())


def hub(a) -> int:
    return int(np.argmax(np.diff(sp.csr_array(a).indptr)))


@pytest.fixture
def cache() -> MatrixCache:
    return MatrixCache()


# --------------------------------------------------------------------------- paths


@pytest.mark.parametrize("make", [directed_matrix, kron_matrix], ids=["directed", "symmetric"])
def test_one_off_then_cached_equal_scipy(make, cache: MatrixCache) -> None:
    a = make()
    s = hub(a)
    kinds = []
    for _ in range(4):
        kinds.append(type(cache.prepare(a, directed=None, config=spbfs.Config(),
                                        rows_ok=True)).__name__)
    # prepare itself advances the policy: one-off, then Graph built, then the Graph kept.
    assert kinds == ["RowsInput", "Graph", "Graph", "Graph"]
    cache.clear()
    for k in range(3):
        r = spbfs.bfs(a, s, cache=cache)
        check_result(r, a, s)
        assert cache.num_graphs == (0 if k == 0 else 1)
        if k == 0:
            assert set(r.stats.direction.tolist()) == {0}  # a one-off is top-down only


def test_kept_graph_is_the_same_object(cache: MatrixCache) -> None:
    a = kron_matrix(9)
    cfg = spbfs.Config()
    first = cache.prepare(a, directed=None, config=cfg, rows_ok=True)
    assert isinstance(first, RowsInput)
    assert first.indices is a.indices and first.indptr is a.indptr  # zero-copy rows
    g2 = cache.prepare(a, directed=None, config=cfg, rows_ok=True)
    g3 = cache.prepare(a, directed=None, config=cfg, rows_ok=True)
    assert isinstance(g2, spbfs.Graph) and g3 is g2
    assert not g2.directed  # a symmetric matrix is undirected under directed=None
    # Another storage is another Graph; directed=True is another Graph too.
    g4 = cache.prepare(a, directed=None, config=cfg.replace(format="dcsc"), rows_ok=True)
    assert g4 is not g2 and g4.config.format == "dcsc"
    assert cache.prepare(a, directed=True, config=cfg, rows_ok=True).directed


@pytest.mark.parametrize("fmt", ["csr", "csc", "coo"])
@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_formats_and_index_dtypes(fmt: str, index, cache: MatrixCache) -> None:
    a = directed_matrix(2).asformat(fmt)
    if fmt == "coo":
        a = sp.coo_array((a.data, (a.row.astype(index), a.col.astype(index))), shape=a.shape)
    else:
        a = type(a)((a.data, a.indices.astype(index), a.indptr.astype(index)), shape=a.shape)
    assert (a.coords[0] if fmt == "coo" else a.indices).dtype == index
    s = hub(a.tocsr())
    for _ in range(3):
        check_result(spbfs.bfs(a, s, cache=cache), a, s)
    check_result(spbfs.bfs(a, s, cache=False), a, s)
    assert cache.num_graphs == 1


def test_sparse_matrix_classes_and_no_cache(cache: MatrixCache) -> None:
    a = sp.csr_matrix(directed_matrix(4))
    s = hub(a)
    for _ in range(3):
        check_result(spbfs.bfs(a, s, cache=False), a, s)
    assert not process_cache().forget(a)  # cache=False fills no cache
    check_result(spbfs.bfs(a, s), a, s)  # the default: the process's cache
    assert process_cache().forget(a)
    for _ in range(3):
        check_result(spbfs.bfs(a, s, cache=cache), a, s)
    assert len(cache) == 1


def test_non_canonical_rows_duplicates_self_loops_explicit_zeros(cache: MatrixCache) -> None:
    rng = np.random.default_rng(7)
    n = 60
    ptr = [0]
    ind: list[int] = []
    for i in range(n):
        row = list(rng.integers(0, n, int(rng.integers(0, 6))))
        if row:
            row += [row[0], i]  # a repeat and a self-loop, rows left unsorted
        ind += row
        ptr.append(len(ind))
    data = rng.integers(0, 3, len(ind)).astype(float)  # explicit zeros are edges
    a = sp.csr_array((data, np.array(ind, np.int32), np.array(ptr, np.int32)), shape=(n, n))
    assert not a.has_canonical_format and np.count_nonzero(a.data == 0)
    for s in (0, 5, 17):
        for _ in range(3):
            check_result(spbfs.bfs(a, s, cache=cache), a, s)


# --------------------------------------------------------------------------- never stale


def _three(a, s, cache: MatrixCache) -> None:
    for _ in range(3):
        check_result(spbfs.bfs(a, s, cache=cache), a, s)


def test_inplace_indices_edit(cache: MatrixCache) -> None:
    a = kron_matrix(9)
    s = hub(a)
    _three(a, s, cache)
    assert cache.num_graphs == 1
    # Cut the hub off: every edge out of it now points at itself.
    lo, hi = a.indptr[s], a.indptr[s + 1]
    a.indices[lo:hi] = s
    r = spbfs.bfs(a, s, cache=cache)
    check_result(r, a, s)
    assert np.count_nonzero(r.levels >= 0) == 1
    assert cache.num_graphs == 0  # the stale Graph is dropped, not searched
    _three(a, s, cache)


def test_first_search_reads_no_digest_and_second_builds_from_now(
        cache: MatrixCache, monkeypatch: pytest.MonkeyPatch) -> None:
    """A one-off digests nothing; an edit between the first and second search is built from."""
    import spbfs.matrix_cache as mc

    calls = []
    real = mc.fingerprint

    def counting(*arrs):
        calls.append([arr.shape for arr in arrs])
        return real(*arrs)

    monkeypatch.setattr(mc, "fingerprint", counting)
    a = kron_matrix(9)
    s = hub(a)
    check_result(spbfs.bfs(a, s, cache=cache), a, s)
    assert calls == [] and cache.num_graphs == 0
    lo, hi = a.indptr[s], a.indptr[s + 1]
    a.indices[lo:hi] = s  # edited before the second search: its Graph must see the edit
    r = spbfs.bfs(a, s, cache=cache)
    check_result(r, a, s)
    assert np.count_nonzero(r.levels >= 0) == 1
    # indptr and indices, once, in one digest
    assert cache.num_graphs == 1 and calls == [[a.indptr.shape, a.indices.shape]]
    a.indices[lo:hi] = (np.arange(hi - lo) + s + 1) % a.shape[0]  # changed again
    check_result(spbfs.bfs(a, s, cache=cache), a, s)
    assert cache.num_graphs == 0  # changed: back to one-off searches...
    check_result(spbfs.bfs(a, s, cache=cache), a, s)
    assert cache.num_graphs == 1  # ...until it is searched unchanged


def test_inplace_single_index_edit(cache: MatrixCache) -> None:
    """One changed id, in a row far from the source, changes the answer and is seen."""
    n = 200
    a = sp.csr_array(sp.diags_array(np.ones(n - 1), offsets=1, shape=(n, n), format="csr"))
    _three(a, 0, cache)
    a.indices[150] = 10  # the path 0 -> 1 -> ... now goes 150 -> 10: 151.. unreachable
    r = spbfs.bfs(a, 0, cache=cache)
    check_result(r, a, 0)
    assert r.levels[151] == -1


def test_inplace_indptr_edit(cache: MatrixCache) -> None:
    a = directed_matrix(5)
    s = hub(a)
    _three(a, s, cache)
    # Move every entry of row s into row s + 1 (pointers stay valid).
    a.indptr[s + 1] = a.indptr[s]
    _three(a, s, cache)


def test_inplace_data_edit_keeps_edges(cache: MatrixCache) -> None:
    a = kron_matrix(9)
    s = hub(a)
    _three(a, s, cache)
    a.data[:] = 0.0  # explicit zeros: still edges, for scipy and for spbfs
    _three(a, s, cache)
    a.eliminate_zeros()  # now they are gone: the structure changed
    assert a.nnz == 0
    r = spbfs.bfs(a, s, cache=cache)
    check_result(r, a, s)
    assert np.count_nonzero(r.levels >= 0) == 1


def test_resize_and_reshape(cache: MatrixCache) -> None:
    a = directed_matrix(6, n=100)
    s = hub(a)
    _three(a, s, cache)
    a.resize((150, 150))
    r = spbfs.bfs(a, s, cache=cache)
    assert r.levels.shape == (150,)
    check_result(r, a, s)
    _three(a, s, cache)
    a.resize((80, 80))  # drops the entries beyond 80
    _three(a, min(s, 79), cache)
    b = sp.csr_matrix(directed_matrix(7, n=64))
    _three(b, 0, cache)
    b.shape = (64, 64)  # a no-op reshape in place
    _three(b, 0, cache)


def test_new_arrays_then_old_array_edited(cache: MatrixCache) -> None:
    """A Graph sharing the old arrays is not served once the matrix holds new ones."""
    a = kron_matrix(9)
    s = hub(a)
    _three(a, s, cache)
    old = a.indices
    a.indices = old.copy()
    old[:] = s  # the kept Graph shares ``old``: searching it would be wrong
    _three(a, s, cache)


def test_sort_indices_and_sum_duplicates_in_place(cache: MatrixCache) -> None:
    a = sp.csr_array((np.ones(6), np.array([2, 1, 1, 0, 2, 2]), np.array([0, 3, 4, 6])),
                     shape=(3, 3))
    _three(a, 0, cache)
    a.sum_duplicates()
    _three(a, 0, cache)
    a.indices[:] = 0  # every edge into vertex 0, two in row 0
    _three(a, 0, cache)


def test_stale_canonical_flag_is_not_trusted() -> None:
    a = kron_matrix(8)
    assert a.has_canonical_format
    s = hub(a)
    row = a.indices[a.indptr[s]:a.indptr[s + 1]]
    row[:] = row[::-1].copy()  # unsorted now; scipy's flag still says canonical
    a.indices[a.indptr[s + 1] - 1] = a.indices[a.indptr[s]]  # and a duplicate
    assert a.has_canonical_format
    for directed in (None, True, False):
        g = spbfs.Graph.from_matrix(a, directed=directed)
        r = spbfs.bfs(g, s)
        check_result(r, a, s, directed is not False)


def test_new_matrix_with_a_collected_ones_id(cache: MatrixCache) -> None:
    """An id reused after garbage collection never finds the old matrix's Graph."""
    n = 50
    reused = 0
    for _ in range(40):
        a = sp.csr_array(sp.diags_array(np.ones(n - 1), offsets=1, shape=(n, n), format="csr"))
        _three(a, 0, cache)
        old = id(a)
        # Reference counting frees it here. No gc.collect(): a full collection in the
        # suite's process costs about a second and makes the id's reuse rarer.
        del a
        # Same class, same shape, other content: the likeliest to land on the freed id.
        b = sp.csr_array(sp.diags_array(np.ones(n - 1), offsets=-1, shape=(n, n),
                                        format="csr"))
        reused += id(b) == old
        r = spbfs.bfs(b, n - 1, cache=cache)
        check_result(r, b, n - 1)
        r = spbfs.bfs(b, 0, cache=cache)
        assert np.count_nonzero(r.levels >= 0) == 1
        del b
    gc.collect()
    assert len(cache) == 0
    if not reused:
        pytest.skip("the interpreter never reused a freed id here; content checks were run")


def test_cache_does_not_keep_matrices_alive(cache: MatrixCache) -> None:
    a = kron_matrix(9)
    ref = weakref.ref(a)
    indices_ref = weakref.ref(a.indices)
    _three(a, hub(a), cache)
    assert len(cache) == 1 and cache.num_graphs == 1
    del a
    gc.collect()
    assert ref() is None
    assert indices_ref() is None  # the kept Graph (which shared it) went with the matrix
    assert len(cache) == 0


def test_lru_bound() -> None:
    cache = MatrixCache(max_matrices=2)
    mats = [directed_matrix(k) for k in range(3)]
    for m in mats:
        _three(m, 0, cache)
    assert len(cache) == 2
    assert not cache.forget(mats[0]) and cache.forget(mats[2])
    assert len(cache) == 1
    with pytest.raises(ValueError, match="max_matrices"):
        MatrixCache(0)
    with pytest.raises(TypeError, match="max_matrices"):
        MatrixCache(2.5)


# --------------------------------------------------------------------------- options


def test_reverse_builds_what_it_needs(cache: MatrixCache) -> None:
    a = directed_matrix(8)
    s = hub(a.T.tocsr())
    r = spbfs.bfs(a, s, reverse=True, cache=cache)  # a first call: in-edges built
    check_result(r, sp.csr_array(a.T), s)
    assert cache.num_graphs == 1
    r = spbfs.bfs(a, s, reverse=True, cache=False)
    check_result(r, sp.csr_array(a.T), s)


def test_directed_false_symmetrizes(cache: MatrixCache) -> None:
    a = directed_matrix(9)
    s = hub(a)
    for c in (cache, cache, False):
        r = spbfs.bfs(a, s, directed=False, cache=c)
        check_result(r, a, s, directed=False)
        # Same matrix, directed=None: the directed answer (the cache keys by directed).
        check_result(spbfs.bfs(a, s, cache=c), a, s)


def test_directed_false_keeps_explicit_zeros() -> None:
    a = sp.csr_array((np.array([0.0, 1.0, -1.0]), np.array([1, 2, 1]), np.array([0, 1, 2, 3])),
                     shape=(3, 3))  # 0 -> 1 (value 0), 1 -> 2 (1), 2 -> 1 (-1)
    r = spbfs.bfs(a, 2, directed=False, cache=False)
    assert r.levels.tolist() == [2, 1, 0]  # 1 -> 0 exists both ways; 1 + (-1) drops nothing


@pytest.mark.parametrize("direction", ["top-down", "bottom-up", "auto"])
def test_forced_direction(direction: str, cache: MatrixCache) -> None:
    a = kron_matrix(10)
    s = hub(a)
    for _ in range(3):
        r = spbfs.bfs(a, s, direction=direction, cache=cache)
        check_result(r, a, s)
        dirs = set(r.stats.direction.tolist())
        if direction == "top-down":
            assert dirs == {0}
        elif direction == "bottom-up":
            assert dirs == {1}


def test_config_output_stops_and_semirings(cache: MatrixCache) -> None:
    a = kron_matrix(10)
    s = hub(a)
    ref = scipy_levels(a, s)
    far = int(np.argmax(ref))
    for c in (False, cache, cache, cache):
        cfg = spbfs.Config(format="dcsc", output="levels")
        r = spbfs.bfs(a, s, config=cfg, cache=c)
        assert r.parents is None and r.config.format == "dcsc"
        np.testing.assert_array_equal(r.levels, ref)
        r = spbfs.bfs(a, s, output="parents", cache=c)
        assert r.levels is None
        r = spbfs.bfs(a, s, max_depth=2, cache=c)
        np.testing.assert_array_equal(r.levels, np.where(ref <= 2, ref, -1))
        assert r.stopped == "max_depth" and len(r.stats) == 2
        r = spbfs.bfs(a, s, target=far, cache=c)
        assert r.stopped == "target" and r.levels[far] == ref[far]
        assert np.all(r.levels <= ref[far])
        r = spbfs.bfs(a, s, semiring="any_pair", cache=c)
        np.testing.assert_array_equal(r.levels, ref)
        r = spbfs.bfs(a, s, semiring="plus_second", cache=c)
        np.testing.assert_array_equal(r.levels, ref)
        assert r.values[s] == 1 and np.all(r.values[ref > 0] >= 1)
    r = spbfs.bfs(a, s, target=s, cache=False)
    assert r.stopped == "target" and len(r.stats) == 0


def test_one_off_matches_graph_search_stats() -> None:
    a = kron_matrix(10)
    s = hub(a)
    one = spbfs.bfs(a, s, cache=False)
    full = spbfs.bfs(spbfs.Graph.from_matrix(a), s, direction="top-down")
    np.testing.assert_array_equal(one.parents, full.parents)
    np.testing.assert_array_equal(one.stats.frontier, full.stats.frontier)
    np.testing.assert_array_equal(one.stats.discovered, full.stats.discovered)
    np.testing.assert_array_equal(one.stats.edges, full.stats.edges)
    assert one.stopped == full.stopped == "exhausted"


# --------------------------------------------------------------------------- bad input


def test_bad_input_raises(cache: MatrixCache) -> None:
    a = directed_matrix(10)
    with pytest.raises(TypeError, match="cache"):
        spbfs.bfs(a, 0, cache="yes")
    with pytest.raises(ValueError, match="square"):
        spbfs.bfs(sp.csr_array((3, 4)), 0, cache=cache)
    with pytest.raises(ValueError, match="square"):
        spbfs.bfs(sp.csr_array((3, 4)), 0, cache=False)
    with pytest.raises(ValueError, match="empty"):
        spbfs.bfs(sp.csr_array((0, 0)), 0, cache=False)
    with pytest.raises(ValueError, match="source"):
        spbfs.bfs(a, a.shape[0], cache=False)
    with pytest.raises(ValueError, match="target"):
        spbfs.bfs(a, 0, target=-1, cache=False)
    b = a.copy()
    b.indices[3] = b.shape[0] + 5  # edited in place past n: a kernel would read out of bounds
    for c in (False, cache):
        with pytest.raises(ValueError, match="out of range"):
            spbfs.bfs(b, 0, cache=c)
    with pytest.raises(ValueError, match="out of range"):
        spbfs.Graph.from_matrix(b)
    b = a.copy()
    b.indptr[4] = b.indptr[5] + 1
    with pytest.raises(ValueError, match="indptr"):
        spbfs.bfs(b, 0, cache=False)


# --------------------------------------------------------------------------- structure checks


def test_row_order_and_symmetry_against_scipy() -> None:
    rng = np.random.default_rng(11)
    for k in range(20):
        n = int(rng.integers(1, 40))
        m = int(rng.integers(0, 3 * n))
        a = sp.coo_array((np.ones(m), (rng.integers(0, n, m), rng.integers(0, n, m))),
                         shape=(n, n)).tocsr()
        a.sum_duplicates()
        if k % 2:
            a = sp.csr_array(a + a.T)
        check_compressed(a.indptr, a.indices, n)
        assert row_order(a.indptr, a.indices) == CANONICAL
        pat = sp.csr_array((np.ones(a.nnz), a.indices, a.indptr), shape=a.shape)
        assert structurally_symmetric(a.indptr, a.indices) == ((pat != pat.T).nnz == 0)
        if a.nnz >= 2:
            i = int(np.argmax(np.diff(a.indptr)))
            lo, hi = a.indptr[i], a.indptr[i + 1]
            if hi - lo >= 2:
                b = a.copy()
                b.indices[lo + 1] = b.indices[lo]
                assert row_order(b.indptr, b.indices) == DUPLICATES
                b.indices[lo:hi] = b.indices[lo:hi][::-1].copy()
                b.indices[lo] = n - 1
                b.indices[lo + 1] = 0
                assert row_order(b.indptr, b.indices) == UNSORTED


def test_fingerprint_sees_every_single_word_change() -> None:
    rng = np.random.default_rng(12)
    for dtype, size in ((np.int32, 1001), (np.int64, 300_000), (np.uint8, 13)):
        x = rng.integers(0, 100, size).astype(dtype)
        base = fingerprint(x)
        assert fingerprint(x.copy()) == base
        for pos in (0, size // 2, size - 1):
            y = x.copy()
            y[pos] += 1
            assert fingerprint(y) != base
        y = x.copy()
        y[[0, -1]] = y[[-1, 0]]  # a swap: same bytes, other places
        if y[0] != y[-1]:
            assert fingerprint(y) != base
        assert fingerprint(x[:-1]) != base
    # Every 8-byte word of a chunk changed alone (each lane, both words of a round, the
    # tail), and swaps of words one round consumes together or one lane takes in turn.
    words = rng.integers(0, 1 << 62, 16 * 9 + 5, dtype=np.int64).view(np.uint64)
    base = fingerprint(words)
    for pos in range(words.shape[0]):
        y = words.copy()
        y[pos] ^= np.uint64(1) << np.uint64(pos % 64)
        assert fingerprint(y) != base, pos
    for i, j in ((0, 1), (2, 3), (0, 16), (1, 17), (14, 15), (0, 2)):
        y = words.copy()
        y[[i, j]] = y[[j, i]]
        assert fingerprint(y) != base, (i, j)


def test_fingerprint_does_not_depend_on_the_thread_count() -> None:
    """Arrays of 8 MiB and more are digested in parallel, over fixed chunks."""
    import numba

    x = np.random.default_rng(3).integers(0, 1 << 40, (1 << 20) + 7, dtype=np.int64)
    old = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = fingerprint(x)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        assert fingerprint(x) == one
    finally:
        numba.set_num_threads(old)
    y = x.copy()
    y[(1 << 19) + 3] += 1
    assert fingerprint(y) != one


def test_threads_share_a_cache(cache: MatrixCache) -> None:
    """Searches from several threads on one matrix and one cache all get scipy's answer."""
    from concurrent.futures import ThreadPoolExecutor

    a = kron_matrix(9)
    b = directed_matrix(13)
    jobs = [(m, s) for m in (a, b) for s in (0, 1, 2, hub(m))] * 3

    def run(job):
        m, s = job
        return spbfs.bfs(m, s, cache=cache), m, s

    with ThreadPoolExecutor(4) as pool:
        for r, m, s in pool.map(run, jobs):
            check_result(r, m, s)
    assert len(cache) == 2 and cache.num_graphs >= 2


def test_fingerprint_of_several_arrays_sees_each_and_their_order() -> None:
    """One digest of several arrays (a matrix's pointers and ids, in one parallel region)."""
    import numba

    rng = np.random.default_rng(4)
    # A large pair (digested in parallel) and a small one (on one thread).
    for size in ((1 << 21) + 3, 1001):
        x = rng.integers(0, 1 << 30, size).astype(np.int32)
        y = rng.integers(0, 1 << 30, size // 3 + 1).astype(np.int64)
        base = fingerprint(x, y)
        assert fingerprint(x.copy(), y.copy()) == base
        assert fingerprint(y, x) != base
        assert fingerprint(x) != base and fingerprint(x, y[:-1]) != base
        assert fingerprint(x, np.zeros(0, np.int8), y) != base
        for pos in (0, x.shape[0] // 2, x.shape[0] - 1):
            x2 = x.copy()
            x2[pos] ^= 1
            assert fingerprint(x2, y) != base
        for pos in (0, y.shape[0] - 1):
            y2 = y.copy()
            y2[pos] ^= 1 << 40
            assert fingerprint(x, y2) != base
        old = numba.get_num_threads()
        try:
            numba.set_num_threads(1)
            assert fingerprint(x, y) == base
        finally:
            numba.set_num_threads(old)


def test_check_compressed_finds_every_bad_id() -> None:
    """A negative id or one past the columns, anywhere (in a parallel chunk's last slot
    too), in int32 and int64 structures; ids past ``indptr[-1]`` are not the structure's."""
    import numba

    for dtype in (np.int32, np.int64):
        for nnz in (1000, (1 << 22) + 5):  # one thread below 8 MiB, chunks in parallel above
            n = 1 << 20
            ind = np.random.default_rng(nnz).integers(0, n, nnz + 7).astype(dtype)
            ind[nnz:] = -3  # beyond the structure: never read
            ptr = np.array([0, nnz // 2, nnz], dtype=dtype)
            check_compressed(ptr, ind, n)
            for pos in sorted({0, nnz // 3, (1 << 18) - 1, nnz - 1} & set(range(nnz))):
                for bad in (-1, n, np.iinfo(dtype).min, np.iinfo(dtype).max):
                    b = ind.copy()
                    b[pos] = bad
                    with pytest.raises(ValueError, match="out of range"):
                        check_compressed(ptr, b, n)
            old = numba.get_num_threads()
            try:
                numba.set_num_threads(1)
                b = ind.copy()
                b[nnz - 1] = -1
                with pytest.raises(ValueError, match="out of range"):
                    check_compressed(ptr, b, n)
            finally:
                numba.set_num_threads(old)
    with pytest.raises(TypeError, match="integers"):
        check_compressed(np.array([0, 1]), np.array([0.5]), 2)
