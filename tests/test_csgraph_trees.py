"""spbfs.csgraph's compiled tree matrix, symmetry shortcut and parallel sources, against scipy.

``breadth_first_tree`` is compared whole with scipy's: type, shape, dtype,
index dtypes, row pointers, and each row's entries (scipy's order within a
row comes from an unstable argsort, so both are compared with sorted rows).
The symmetry check is compared with scipy's own transpose; searches that use
it, and delta-stepping split over parallel chunks, with scipy's distances.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph as ref

from spbfs import csgraph, datasets
from spbfs.csgraph import _mirrored, _symmetric
from spbfs.kernels import sssp_numba

BUNDLED = ["karate", "west0067", "luxembourg_osm", "p2p_gnutella31", "musae_git"]


def bundled(name: str) -> tuple[sp.csr_matrix, bool]:
    """The data set as the weighted csr matrix a scipy user holds, and whether it is directed.

    Undirected: both directions stored with the same weight (integers in [1, 100)).
    """
    e = datasets.edges(name)
    src, dst = np.asarray(e.src), np.asarray(e.dst)
    w = np.random.default_rng(7).integers(1, 100, src.size).astype(np.float64)
    if not e.directed:
        loops = src == dst
        src, dst, w = (np.concatenate([src, dst[~loops]]), np.concatenate([dst, src[~loops]]),
                       np.concatenate([w, w[~loops]]))
    return sp.coo_matrix((w, (src, dst)), shape=(e.n, e.n)).tocsr(), bool(e.directed)


def assert_same_tree(ours, theirs) -> None:
    """The whole tree matrix equal to scipy's (rows compared sorted)."""
    assert type(ours) is type(theirs)
    assert ours.shape == theirs.shape
    assert ours.dtype == theirs.dtype
    assert ours.indptr.dtype == theirs.indptr.dtype
    assert ours.indices.dtype == theirs.indices.dtype
    assert ours.has_sorted_indices
    theirs = theirs.sorted_indices()
    np.testing.assert_array_equal(ours.indptr, theirs.indptr)
    np.testing.assert_array_equal(ours.indices, theirs.indices)
    np.testing.assert_array_equal(ours.data, theirs.data)  # NaN equal to NaN


def messy(seed: int, n: int, m: int) -> tuple[sp.csr_matrix, sp.csr_matrix]:
    """A graph as csr with its repeats summed, and as csr keeping repeats in unsorted rows.

    Weights include explicit zeros, negatives (their sum can be 0) and NaN.
    """
    rng = np.random.default_rng(seed)
    r, c = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.choice([0.0, 1.0, 2.0, -1.0, np.nan, 3.5], m)
    summed = sp.csr_matrix((w, (r, c)), shape=(n, n))
    order = np.argsort(r, kind="stable")
    ptr = np.r_[0, np.cumsum(np.bincount(r, minlength=n))].astype(np.int32)
    kept = sp.csr_matrix((w[order], c[order].astype(np.int32), ptr), shape=(n, n))
    return summed, kept


@pytest.mark.parametrize("name", BUNDLED)
@pytest.mark.parametrize("directed", [True, False])
def test_breadth_first_tree_whole_on_bundled_graphs(name: str, directed: bool) -> None:
    a, _ = bundled(name)
    for start in (0, a.shape[0] // 2):
        assert_same_tree(csgraph.breadth_first_tree(a, start, directed),
                         ref.breadth_first_tree(a, start, directed))


@pytest.mark.parametrize("seed", range(40))
@pytest.mark.parametrize("directed", [True, False])
def test_breadth_first_tree_whole_on_messy_input(seed: int, directed: bool) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 14))
    summed, kept = messy(seed, n, int(rng.integers(0, 3 * n + 1)))
    start = int(rng.integers(0, n))
    for g in (summed, kept, sp.csr_array(summed), summed.tocsc(), summed.tocoo(),
              summed.toarray(), np.ma.masked_array(summed.toarray(), summed.toarray() == 0)):
        assert_same_tree(csgraph.breadth_first_tree(g, start, directed),
                         ref.breadth_first_tree(g, start, directed))


def test_breadth_first_tree_hub_with_many_children() -> None:
    # A star: one parent with every other vertex a child (each child's weight found once).
    n = 5000
    leaves = np.arange(1, n)
    a = sp.csr_matrix((leaves.astype(float), (np.zeros(n - 1, int), leaves)), shape=(n, n))
    for directed in (True, False):
        assert_same_tree(csgraph.breadth_first_tree(a, 0, directed),
                         ref.breadth_first_tree(a, 0, directed))


def test_breadth_first_tree_errors_as_order() -> None:
    a = sp.csr_matrix(np.eye(3))
    with pytest.raises(ValueError, match="i_start=3 is out of range"):
        csgraph.breadth_first_tree(a, 3)
    with pytest.raises(ValueError, match="square"):
        csgraph.breadth_first_tree(sp.csr_matrix((2, 3)), 0)


@pytest.mark.parametrize("seed", range(30))
def test_symmetric_is_the_transpose_compared(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 12))
    summed, kept = messy(seed, n, int(rng.integers(0, 3 * n + 1)))
    summed.data[np.isnan(summed.data)] = 4.0  # NaN never equals itself: kept out here
    sym = (summed + summed.T).tocsr()
    # Symmetric with repeats: each entry twice, both copies of a pair in the same order.
    doubled = sp.csr_matrix((np.repeat(sym.data, 2), np.repeat(sym.indices, 2), sym.indptr * 2),
                            shape=sym.shape)
    for a in (summed, sym, doubled, kept.sorted_indices()):
        t = a.T.tocsr()
        expect = (np.array_equal(a.indptr, t.indptr) and np.array_equal(a.indices, t.indices)
                  and np.array_equal(a.data, t.data))
        assert bool(_symmetric(a.indptr, a.indices, a.data)) == expect
        pattern = np.array_equal(a.indptr, t.indptr) and np.array_equal(a.indices, t.indices)
        assert bool(_symmetric(a.indptr, a.indices, np.empty(0))) == pattern
    assert _mirrored(sym, sym.data.astype(np.float64))
    rows = np.repeat(np.arange(n), np.diff(sym.indptr))
    off = np.flatnonzero(rows != sym.indices)
    if off.size:
        sym.data[off[0]] += 1.0  # one weight off the diagonal: the pattern stays symmetric
        assert not _symmetric(sym.indptr, sym.indices, sym.data)
        assert _symmetric(sym.indptr, sym.indices, np.empty(0))


def test_unsorted_rows_are_not_taken_for_symmetric() -> None:
    a = sp.csr_matrix(([1.0, 1.0, 1.0, 1.0], [2, 1, 0, 0], [0, 2, 3, 4]), shape=(3, 3))
    assert not a.has_sorted_indices
    assert not _mirrored(a, np.empty(0))


@pytest.mark.parametrize("seed", range(12))
@pytest.mark.parametrize("doubled", [False, True])
def test_searches_of_symmetric_input_equal_scipy(seed: int, doubled: bool) -> None:
    rng = np.random.default_rng(seed)
    n = 60
    m = 150
    r, c = rng.integers(0, n, m), rng.integers(0, n, m)
    w = rng.integers(0, 9, m).astype(float)
    a = sp.coo_matrix((w, (r, c)), shape=(n, n)).tocsr()
    sym = (a + a.T).tocsr()
    if doubled:
        sym = sp.csr_matrix((np.repeat(sym.data, 2), np.repeat(sym.indices, 2), sym.indptr * 2),
                            shape=sym.shape)
    assert _mirrored(sym, sym.data)
    src = [0, 7, 7, 31]
    for unweighted in (False, True):
        np.testing.assert_array_equal(
            csgraph.dijkstra(sym, False, src, unweighted=unweighted),
            ref.dijkstra(sym, False, src, unweighted=unweighted))
        np.testing.assert_array_equal(
            csgraph.dijkstra(sym, False, src, min_only=True, unweighted=unweighted),
            ref.dijkstra(sym, False, src, min_only=True, unweighted=unweighted))
    o1, p1 = csgraph.breadth_first_order(sym, 3, False)
    o2, p2 = ref.breadth_first_order(sym, 3, False)
    np.testing.assert_array_equal(o1, o2)
    np.testing.assert_array_equal(p1, p2)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("parts", [2, 3, 7])
def test_delta_stepping_parallel_chunks_equal_one_after_the_other(seed: int, parts: int) -> None:
    rng = np.random.default_rng(seed)
    n, m = 300, 1500
    a = sp.coo_matrix((rng.integers(1, 20, m).astype(float),
                       (rng.integers(0, n, m), rng.integers(0, n, m))), shape=(n, n)).tocsr()
    groups = 5
    seeds = rng.integers(0, n, 9)
    seeds_ptr = np.array([0, 1, 3, 3, 6, 9])
    args = (a.indptr, a.indices, a.data, seeds_ptr, seeds)
    for delta in (None, 7.0):  # Dial's buckets, and light edges with a heavy pass
        pred1 = np.full((groups, n), -1, dtype=np.int32)
        pred2 = pred1.copy()
        d1, b1 = sssp_numba.run(*args, delta=delta, pred=pred1)
        d2, b2 = sssp_numba.run(*args, delta=delta, pred=pred2, parts=parts)
        np.testing.assert_array_equal(d2, d1)
        np.testing.assert_array_equal(pred2, pred1)  # each search alone: the same records
        assert b2 == b1


def test_many_sources_on_a_large_graph_equal_scipy() -> None:
    # Enough entries for the parallel path (at least PARALLEL_GROUPS_ENTRIES).
    a, _ = bundled("luxembourg_osm")
    assert a.nnz >= csgraph.PARALLEL_GROUPS_ENTRIES
    src = np.array([5, 0, 70_000, 114_000, 5])
    for directed in (True, False):
        d1, p1 = csgraph.dijkstra(a, directed, src, return_predecessors=True)
        d2 = ref.dijkstra(a, directed, src)
        np.testing.assert_array_equal(d1, d2)
        # Each predecessor lies on a shortest path: dist[p] + w(p, v) == dist[v].
        rows, cols = np.nonzero(p1 >= 0)
        parents = p1[rows, cols]
        w = np.asarray(a[parents, cols]).ravel()
        np.testing.assert_array_equal(d1[rows, parents] + w, d1[rows, cols])
