"""python-graphblas interop: ``Graph.from_graphblas`` and the results' ``to_graphblas``.

The references are independent of spbfs: a breadth-first search written in a few
GraphBLAS semiring operations (the frontier's values are its own ids, so
``min_first`` picks each new vertex's smallest frontier parent), and
``scipy.sparse.csgraph`` / networkx for levels, distances, components and
PageRank. Skipped where python-graphblas is not installed (``spbfs[graphblas]``),
except the test of the error that says how to install it.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import spbfs
from spbfs.algorithms import connected_components, pagerank, sssp
from spbfs.generators import kronecker
from spbfs.validate import validate_bfs_tree


@pytest.fixture(scope="module")
def gb() -> Any:
    return pytest.importorskip("graphblas")


def gb_bfs(gb: Any, A: Any, s: int) -> tuple[Any, Any]:
    """Parents and levels of a level-synchronous BFS, in GraphBLAS operations only."""
    from graphblas import Vector, dtypes, indexunary, semiring

    n = A.nrows
    levels = Vector(dtypes.INT64, n)
    parents = Vector(dtypes.INT64, n)
    parents[s] = s
    q = Vector(dtypes.INT64, n)
    q[s] = s
    depth = 0
    while q.nvals:
        levels(q.S) << depth
        depth += 1
        q(~parents.S, replace=True) << q.vxm(A, semiring.min_first)
        parents(q.S) << q
        q << q.apply(indexunary.rowindex)
    return parents, levels


def scipy_levels(A: sp.spmatrix, s: int, directed: bool) -> np.ndarray:
    d = csgraph.shortest_path(A, directed=directed, unweighted=True, indices=s)
    return np.where(np.isfinite(d), d, -1).astype(np.int64)


def random_weighted(n: int, m: int, seed: int, loops: bool = True) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    src, dst = rng.integers(0, n, m), rng.integers(0, n, m)
    if not loops:
        keep = src != dst
        src, dst = src[keep], dst[keep]
    a = sp.coo_matrix((rng.uniform(0.5, 4.0, src.size), (src, dst)), shape=(n, n)).tocsr()
    a.sum_duplicates()
    return a


def kron_matrix(gb: Any, scale: int = 9) -> tuple[Any, sp.csr_matrix]:
    e = kronecker(scale, 8, seed=3)
    a = sp.coo_matrix((np.ones(e.src.size, dtype=bool), (e.src, e.dst)), shape=(e.n, e.n))
    a = (a + a.T).tocsr()
    return gb.io.from_scipy_sparse(a), a


# ------------------------------------------------------------------------ from_graphblas


@pytest.mark.parametrize("fmt", ["csr", "dcsc"])
def test_bfs_levels_match_graphblas_and_scipy_undirected(gb: Any, fmt: str) -> None:
    M, a = kron_matrix(gb)
    g = spbfs.Graph.from_graphblas(M, config=spbfs.Config(format=fmt))
    assert not g.directed and g.n == M.nrows
    assert g.edges is None  # a BOOL matrix is unweighted
    for s in (0, 5, int(np.argmax(np.diff(a.indptr)))):
        r = spbfs.bfs(g, s)
        _, ref_levels = gb_bfs(gb, M, s)
        parents, levels = r.to_graphblas()
        assert levels.isequal(ref_levels)
        np.testing.assert_array_equal(r.levels, scipy_levels(a, s, directed=False))
        assert parents.nvals == levels.nvals == r.num_reached
        # The parent tree by the Graph500 rules, on the matrix's own edges.
        coo = a.tocoo()
        edges = spbfs.EdgeList(coo.row, coo.col, a.shape[0], directed=False)
        validate_bfs_tree(edges, s, r.parents, r.levels)


def test_directed_parents_match_graphblas_top_down(gb: Any) -> None:
    a = random_weighted(300, 900, seed=1)
    M = gb.io.from_scipy_sparse(a)
    g = spbfs.Graph.from_graphblas(M)
    assert g.directed
    for s in (0, 7, 123):
        # Top-down every level: each new vertex's parent is its smallest frontier in-neighbour.
        r = spbfs.bfs(g, s, direction="top-down")
        ref_parents, ref_levels = gb_bfs(gb, M, s)
        parents, levels = r.to_graphblas()
        assert levels.isequal(ref_levels)
        assert parents.isequal(ref_parents)
        np.testing.assert_array_equal(r.levels, scipy_levels(a, s, directed=True))
        # The direction-optimizing search reaches the same levels.
        assert spbfs.bfs(g, s).to_graphblas()[1].isequal(ref_levels)


def test_directed_false_makes_edges_go_both_ways(gb: Any) -> None:
    a = random_weighted(200, 500, seed=2)
    M = gb.io.from_scipy_sparse(a)
    g = spbfs.Graph.from_graphblas(M, directed=False)
    assert not g.directed
    sym = (a + a.T).tocsr()
    for s in (0, 50):
        np.testing.assert_array_equal(spbfs.bfs(g, s).levels, scipy_levels(sym, s, False))


def test_directed_true_follows_a_symmetric_matrix_as_arcs(gb: Any) -> None:
    M, a = kron_matrix(gb, 7)
    g = spbfs.Graph.from_graphblas(M, directed=True)
    assert g.directed and g.nnz == M.nvals  # each stored entry one arc, self-loops too
    np.testing.assert_array_equal(spbfs.bfs(g, 1).levels, scipy_levels(a, 1, True))


def test_transposed_matrix_is_the_reverse_graph(gb: Any) -> None:
    a = random_weighted(150, 400, seed=4)
    M = gb.io.from_scipy_sparse(a)
    g = spbfs.Graph.from_graphblas(M.T)
    np.testing.assert_array_equal(spbfs.bfs(g, 3).levels, scipy_levels(a.T.tocsr(), 3, True))
    assert M.nvals == a.nnz  # M itself untouched
    # Undirected, the transpose is the same graph, with the smaller of two weights.
    u = spbfs.Graph.from_graphblas(M.T, directed=False)
    np.testing.assert_allclose(sssp(u, 3).distances,
                               csgraph.dijkstra(a, directed=False, indices=3))
    assert M.nvals == a.nnz


def test_explicit_zeros_and_false_are_edges(gb: Any) -> None:
    # 0 -> 1 (weight 0), 1 -> 2 (False in the bool matrix)
    M = gb.Matrix.from_coo([0, 1], [1, 2], [0.0, 5.0], nrows=3, ncols=3)
    g = spbfs.Graph.from_graphblas(M)
    assert spbfs.bfs(g, 0).levels.tolist() == [0, 1, 2]
    assert sssp(g, 0).distances.tolist() == [0.0, 0.0, 5.0]
    B = gb.Matrix.from_coo([0, 1], [1, 2], [True, False], nrows=3, ncols=3)
    assert spbfs.bfs(spbfs.Graph.from_graphblas(B), 0).levels.tolist() == [0, 1, 2]


def test_graph_does_not_share_memory_with_m(gb: Any) -> None:
    M, _ = kron_matrix(gb, 7)
    before = M.dup()
    for config in (spbfs.Config(), spbfs.Config(format="csr", index_dtype="int64")):
        g = spbfs.Graph.from_graphblas(M, config=config)
        assert M.isequal(before)  # the export left M as it was
        levels = spbfs.bfs(g, 0).levels.copy()
        M.clear()  # GraphBLAS may reuse or free M's memory now
        M[0, 1] = True
        np.testing.assert_array_equal(spbfs.bfs(g, 0).levels, levels)
        M = before.dup()


def _root_base(a: np.ndarray) -> np.ndarray:
    while isinstance(a.base, np.ndarray):
        a = a.base
    return a


def test_no_copy_after_the_export_where_the_layouts_agree(gb: Any) -> None:
    M, _ = kron_matrix(gb, 8)
    assert M.ss.format == "csr"
    g = spbfs.Graph.from_graphblas(M, config=spbfs.Config(format="csr", index_dtype="int64"))
    # The block's arrays are the exported GraphBLAS buffers (uint64, seen as int64).
    assert _root_base(g.out_block.ptr).dtype == np.uint64
    assert _root_base(g.out_block.ind).dtype == np.uint64
    # int32 ids (the default where they fit) are a conversion: the block owns them.
    h = spbfs.Graph.from_graphblas(M)
    assert h.out_block.ind.dtype == np.int32 and _root_base(h.out_block.ind).dtype == np.int32


def test_iso_valued_matrix_keeps_its_one_value(gb: Any) -> None:
    M = gb.Matrix.from_coo([0, 1, 2], [1, 2, 3], 2.5, nrows=4, ncols=4)
    assert M.ss.is_iso
    g = spbfs.Graph.from_graphblas(M)
    np.testing.assert_array_equal(g.edges.weights, [2.5, 2.5, 2.5])
    assert sssp(g, 0).distances.tolist() == [0.0, 2.5, 5.0, 7.5]


@pytest.mark.parametrize("directed", [True, False])
def test_weights_reach_sssp_as_scipy_matrix_values_do(gb: Any, directed: bool) -> None:
    a = random_weighted(250, 1200, seed=5)
    M = gb.io.from_scipy_sparse(a)
    g = spbfs.Graph.from_graphblas(M, directed=directed)
    assert g.edges is not None and g.edges.weights.dtype == np.float64
    for s in (0, 17):
        ref = csgraph.dijkstra(a, directed=directed, indices=s)  # undirected: min(a_uv, a_vu)
        d = sssp(g, s)
        np.testing.assert_allclose(d.distances, ref)
        # The same as passing the scipy matrix itself.
        np.testing.assert_allclose(d.distances, sssp(a, s, directed=directed).distances)
        v = d.to_graphblas()
        idx, vals = v.to_coo()
        np.testing.assert_array_equal(idx, np.flatnonzero(np.isfinite(ref)))
        np.testing.assert_allclose(vals, ref[np.isfinite(ref)])


def test_integer_weights_are_kept(gb: Any) -> None:
    M = gb.Matrix.from_coo([0, 0, 1], [1, 2, 2], [7, 1, 2], nrows=3, ncols=3, dtype="INT32")
    g = spbfs.Graph.from_graphblas(M)
    assert g.edges.weights.dtype == np.int32
    assert sssp(g, 0).distances.tolist() == [0.0, 7.0, 1.0]


@pytest.mark.parametrize("directed", [True, False])
def test_weighted_pagerank_matches_networkx(gb: Any, directed: bool) -> None:
    nx = pytest.importorskip("networkx")
    a = random_weighted(120, 600, seed=6)  # self-loops included: they weigh once
    if not directed:
        a = (a + a.T).tocsr()  # a symmetric matrix: one weight per undirected edge
    M = gb.io.from_scipy_sparse(a)
    g = spbfs.Graph.from_graphblas(M, directed=directed)
    assert g.directed is directed
    G = nx.from_scipy_sparse_array(a, create_using=nx.DiGraph if directed else nx.Graph)
    ref = nx.pagerank(G, tol=1e-12, max_iter=500)
    pr = pagerank(g, tol=1e-12, max_iter=500)
    np.testing.assert_allclose(pr.scores, [ref[k] for k in range(a.shape[0])], atol=1e-9)
    v = pr.to_graphblas()
    assert v.nvals == a.shape[0] and v.dtype == gb.dtypes.FP64
    np.testing.assert_array_equal(v.to_dense(), pr.scores)


def test_components_to_graphblas_matches_scipy(gb: Any) -> None:
    a = random_weighted(400, 300, seed=7)
    M = gb.io.from_scipy_sparse(a)
    c = connected_components(spbfs.Graph.from_graphblas(M, directed=False))
    k, ref = csgraph.connected_components(a, directed=False)
    assert c.n_components == k
    labels = c.to_graphblas()
    assert labels.nvals == a.shape[0] and labels.dtype == gb.dtypes.INT64
    np.testing.assert_array_equal(labels.to_dense(), ref)
    roots = c.to_graphblas(roots=True).to_dense()
    # LAGraph's convention: each vertex names its component's smallest vertex.
    first = {lab: int(np.flatnonzero(ref == lab)[0]) for lab in np.unique(ref)}
    np.testing.assert_array_equal(roots, [first[lab] for lab in ref])


def test_levels_only_has_no_parents(gb: Any) -> None:
    M, _ = kron_matrix(gb, 6)
    parents, levels = spbfs.bfs(spbfs.Graph.from_graphblas(M), 0, output="levels").to_graphblas()
    assert parents is None and levels.nvals > 1


def test_vectors_are_copies(gb: Any) -> None:
    M, _ = kron_matrix(gb, 6)
    r = spbfs.bfs(spbfs.Graph.from_graphblas(M), 0)
    _, levels = r.to_graphblas()
    before = levels.dup()
    r.levels[:] = 99
    assert levels.isequal(before)


# ----------------------------------------------------------------------------- bad input


def test_bad_inputs_raise_clear_errors(gb: Any) -> None:
    with pytest.raises(ValueError, match="square"):
        spbfs.Graph.from_graphblas(gb.Matrix(gb.dtypes.FP64, 3, 4))
    A = gb.Matrix.from_coo([0], [1], [1.0], nrows=2, ncols=2)
    with pytest.raises(TypeError, match=r"\.new\(\)"):
        spbfs.Graph.from_graphblas(A @ A)
    with pytest.raises(TypeError, match=r"graphblas\.Matrix"):
        spbfs.Graph.from_graphblas(gb.Vector(gb.dtypes.FP64, 3))
    with pytest.raises(TypeError, match=r"graphblas\.Matrix"):
        spbfs.Graph.from_graphblas(sp.eye(3, format="csr"))
    C = gb.Matrix.from_coo([0], [1], [1 + 2j], nrows=2, ncols=2, dtype="FC64")
    with pytest.raises(TypeError, match="FC64"):
        spbfs.Graph.from_graphblas(C)


def test_missing_graphblas_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    # Runs without python-graphblas too: the message must say how to get it.
    monkeypatch.setitem(sys.modules, "graphblas", None)
    r = spbfs.bfs(spbfs.Graph.from_edges([0, 1], [1, 2]), 0)
    with pytest.raises(ImportError, match=r"spbfs\[graphblas\]"):
        r.to_graphblas()
    with pytest.raises(ImportError, match="ShortestPathsResult"):
        sssp(spbfs.Graph.from_edges([0, 1], [1, 2]), 0).to_graphblas()


def test_bfs_takes_a_graphblas_matrix(gb: Any) -> None:
    """spbfs.bfs(M, s) converts a graphblas.Matrix as it does a scipy matrix."""
    a = sp.random(60, 60, density=0.06, format="csr", random_state=5)
    a.data[:] = 1.0
    M = gb.io.from_scipy_sparse(a)
    r = spbfs.bfs(M, 0)
    want = csgraph.shortest_path(a, unweighted=True, directed=True, indices=0)
    np.testing.assert_array_equal(r.levels, np.where(np.isinf(want), -1, want).astype(np.int64))
