"""spbfs.csgraph against scipy.sparse.csgraph: same signatures, same outputs, same errors.

Every comparison runs scipy on the same input. Orders, labels and distances
must be equal element for element; shortest-path predecessors, which may
legitimately differ where several shortest paths exist, must form a valid
shortest-path tree with scipy's distances (checked against a dense weight
matrix built here, independently of either implementation).
"""

from __future__ import annotations

import inspect
import warnings
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph as ref

from spbfs import csgraph

PUBLIC = ["breadth_first_order", "breadth_first_tree", "shortest_path", "dijkstra",
          "connected_components"]
NULL = -9999


# --------------------------------------------------------------------------- graphs


def random_graph(seed: int, n: int = 40, density: float = 0.06, *, integer: bool = True,
                 fmt: str = "csr") -> sp.csr_matrix:
    """A random weighted digraph with some explicit zeros, self-loops and isolated vertices."""
    rng = np.random.default_rng(seed)
    m = int(density * n * n)
    r = rng.integers(0, n, m)
    c = rng.integers(0, n, m)
    if integer:
        w = rng.integers(0, 6, m).astype(float)  # 0 is an explicit zero-weight edge
    else:
        w = rng.random(m) * rng.choice([1.0, 1e-3, 1e3], m)
    a = sp.coo_matrix((w, (r, c)), shape=(n, n))
    return a.asformat(fmt)


def non_canonical(seed: int, n: int = 30) -> sp.csr_matrix:
    """A csr matrix with unsorted rows and repeated entries (scipy keeps both in csr)."""
    rng = np.random.default_rng(seed)
    ptr = [0]
    ind: list[int] = []
    for _ in range(n):
        k = int(rng.integers(0, 5))
        row = list(rng.integers(0, n, k))
        if k:
            row.append(row[0])  # a repeat
        ind += row
        ptr.append(len(ind))
    data = rng.integers(1, 9, len(ind)).astype(float)
    a = sp.csr_matrix((data, np.array(ind, dtype=np.int32), np.array(ptr, dtype=np.int32)),
                      shape=(n, n))
    assert not a.has_canonical_format
    return a


def weight_matrix(graph, directed: bool, unweighted: bool) -> np.ndarray:
    """Dense effective weights (inf: no edge): the smallest stored entry per pair."""
    if sp.issparse(graph):
        a = graph.tocsr()
    else:
        a = ref.csgraph_from_dense(np.asarray(graph), null_value=0)
    n = a.shape[0]
    coo = a.tocoo()
    w = np.full((n, n), np.inf)
    vals = np.ones(coo.nnz) if unweighted else coo.data.astype(float)
    np.minimum.at(w, (coo.row, coo.col), vals)
    if not directed:
        w = np.minimum(w, w.T)
    return w


def check_tree(w: np.ndarray, dist: np.ndarray, pred: np.ndarray, sources) -> None:
    """``pred`` is a shortest-path forest for ``dist`` rooted at ``sources``."""
    n = dist.shape[0]
    sources = set(np.atleast_1d(sources).tolist())
    for v in range(n):
        p = int(pred[v])
        if v in sources or not np.isfinite(dist[v]):
            assert p == NULL, (v, p)
            continue
        assert p != NULL, f"reached vertex {v} has no predecessor"
        assert w[p, v] < np.inf, f"{p} -> {v} is not an edge"
        assert dist[p] + w[p, v] == dist[v], (p, v, dist[p], w[p, v], dist[v])
        x, steps = v, 0
        while x not in sources:
            x = int(pred[x])
            steps += 1
            assert x != NULL and steps <= n, f"the path back from {v} does not reach a source"


# --------------------------------------------------------------------------- signatures


@pytest.mark.parametrize("name", PUBLIC)
def test_signature_equals_scipy(name: str) -> None:
    ours = inspect.signature(getattr(csgraph, name)).parameters
    theirs = inspect.signature(getattr(ref, name)).parameters
    assert list(ours) == list(theirs)
    for p in theirs:
        assert ours[p].default == theirs[p].default, p
        assert ours[p].kind == theirs[p].kind, p


# --------------------------------------------------------------------------- traversal


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "lil", "dense", "array"])
def test_breadth_first_order_identical(seed: int, directed: bool, fmt: str) -> None:
    a = random_graph(seed)
    if fmt == "dense":
        g = a.toarray()
    elif fmt == "array":
        g = sp.csr_array(a)
    else:
        g = a.asformat(fmt)
    for start in (0, seed % 40, 39):
        o1, p1 = ref.breadth_first_order(g, start, directed)
        o2, p2 = csgraph.breadth_first_order(g, start, directed)
        assert o2.dtype == np.int32 and p2.dtype == np.int32
        np.testing.assert_array_equal(o2, o1)
        np.testing.assert_array_equal(p2, p1)
        only = csgraph.breadth_first_order(g, start, directed, return_predecessors=False)
        np.testing.assert_array_equal(only, o1)


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("directed", [True, False])
def test_breadth_first_order_follows_stored_order(seed: int, directed: bool) -> None:
    """Unsorted rows and repeats: scipy's order follows storage, and so does ours."""
    a = non_canonical(seed)
    for start in range(0, 30, 7):
        o1, p1 = ref.breadth_first_order(a, start, directed)
        o2, p2 = csgraph.breadth_first_order(a, start, directed)
        np.testing.assert_array_equal(o2, o1)
        np.testing.assert_array_equal(p2, p1)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("kind", ["matrix", "array", "dense"])
def test_breadth_first_tree_identical(seed: int, directed: bool, kind: str) -> None:
    a = random_graph(seed)
    g = {"matrix": a, "array": sp.csr_array(a), "dense": a.toarray()}[kind]
    t1 = ref.breadth_first_tree(g, 1, directed)
    t2 = csgraph.breadth_first_tree(g, 1, directed)
    assert type(t2) is type(t1)
    assert t2.shape == t1.shape and (t2 != t1).nnz == 0
    np.testing.assert_array_equal(t2.toarray(), t1.toarray())


def test_traversal_self_loop_at_start_and_explicit_zero() -> None:
    a = sp.csr_matrix(([0.0, 1.0, 5.0], ([0, 0, 1], [0, 1, 2])), shape=(4, 4))
    for d in (True, False):
        o1, p1 = ref.breadth_first_order(a, 0, d)
        o2, p2 = csgraph.breadth_first_order(a, 0, d)
        np.testing.assert_array_equal(o2, o1)
        np.testing.assert_array_equal(p2, p1)


# --------------------------------------------------------------------------- components


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("connection", ["weak", "strong", "WEAK"])
def test_connected_components_identical(seed: int, directed: bool, connection: str) -> None:
    a = random_graph(seed, density=0.02 + 0.01 * (seed % 4))
    for g in (a, a.tocsc(), a.toarray(), non_canonical(seed)):
        n1, l1 = ref.connected_components(_canonical(g), directed, connection)
        n2, l2 = csgraph.connected_components(g, directed, connection)
        assert type(n2) is int and n2 == n1
        assert l2.dtype == np.int32
        np.testing.assert_array_equal(l2, l1)
        assert csgraph.connected_components(g, directed, connection, False) == n1


def _canonical(g):
    """scipy 1.17.1's strong components do not return on a csr input with a repeated entry."""
    if sp.issparse(g) and g.format == "csr" and not g.has_canonical_format:
        g = g.copy()
        g.sum_duplicates()
    return g


def test_strong_components_with_repeats_returns() -> None:
    a = sp.csr_matrix((np.ones(4), np.array([1, 1, 0, 2]), np.array([0, 2, 3, 4])),
                      shape=(3, 3))
    n, labels = csgraph.connected_components(a, connection="strong")
    assert n == 2
    assert labels[0] == labels[1] != labels[2]


def test_connected_components_empty_and_isolated() -> None:
    for n in (0, 1, 5):
        a = sp.csr_matrix((n, n))
        n1, l1 = ref.connected_components(a)
        n2, l2 = csgraph.connected_components(a)
        assert n2 == n1 and np.array_equal(l2, l1) and l2.dtype == np.int32


# --------------------------------------------------------------------------- shortest paths


def _dijkstra_case(seed, directed, unweighted, integer, fmt="csr", **kw):
    a = random_graph(seed, integer=integer, fmt="csr")
    g = a.toarray() if fmt == "dense" else a.asformat(fmt)
    d1 = ref.dijkstra(g, directed, unweighted=unweighted, **kw)
    d2 = csgraph.dijkstra(g, directed, unweighted=unweighted, **kw)
    return g, d1, d2


@pytest.mark.parametrize("seed", range(10))
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("unweighted", [False, True])
@pytest.mark.parametrize("integer", [True, False])
def test_dijkstra_all_pairs_identical(seed, directed, unweighted, integer) -> None:
    """Distances equal scipy's bit for bit, float weights of mixed magnitudes included."""
    _g, d1, d2 = _dijkstra_case(seed, directed, unweighted, integer)
    assert d2.dtype == np.float64 and d2.shape == d1.shape
    np.testing.assert_array_equal(d2, d1)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("unweighted", [False, True])
@pytest.mark.parametrize("fmt", ["csr", "csc", "coo", "dense"])
@pytest.mark.parametrize("indices", [3, [0, 5, 5, -1], [[1, 2], [3, 4]], None, []])
def test_dijkstra_predecessors_valid(seed, directed, unweighted, fmt, indices) -> None:
    g, (d1, p1), (d2, p2) = _dijkstra_case(seed, directed, unweighted, True, fmt,
                                           indices=indices, return_predecessors=True)
    assert d2.shape == d1.shape and p2.shape == p1.shape and p2.dtype == np.int32
    np.testing.assert_array_equal(d2, d1)
    w = weight_matrix(g, directed, unweighted)
    n = w.shape[0]
    src = np.arange(n) if indices is None else np.asarray(indices, dtype=np.int64) % n
    for dist, pred, s in zip(d2.reshape(-1, n), p2.reshape(-1, n), src.reshape(-1),
                             strict=True):
        check_tree(w, dist, pred, [s])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("unweighted", [False, True])
@pytest.mark.parametrize("limit", [np.inf, 0.0, 2.0, 3.5, 7.0])
def test_dijkstra_limit(seed, directed, unweighted, limit) -> None:
    g, (d1, p1), (d2, p2) = _dijkstra_case(seed, directed, unweighted, True, indices=[0, 7],
                                           limit=limit, return_predecessors=True)
    np.testing.assert_array_equal(d2, d1)
    np.testing.assert_array_equal(p2 == NULL, p1 == NULL)
    w = weight_matrix(g, directed, unweighted)
    for dist, pred, s in zip(d2, p2, [0, 7], strict=True):
        check_tree(w, dist, pred, [s])


@pytest.mark.parametrize("seed", range(8))
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("unweighted", [False, True])
@pytest.mark.parametrize("indices", [[2, 9, 9], 4, [], None])
def test_dijkstra_min_only(seed, directed, unweighted, indices) -> None:
    g, (d1, _p1, s1), (d2, p2, s2) = _dijkstra_case(
        seed, directed, unweighted, False, indices=indices, min_only=True, limit=2.5,
        return_predecessors=True)
    np.testing.assert_array_equal(d2, d1)
    assert p2.dtype == s2.dtype == np.int32 and p2.shape == s2.shape == d1.shape
    np.testing.assert_array_equal(s2 == NULL, s1 == NULL)
    w = weight_matrix(g, directed, unweighted)
    n = w.shape[0]
    src = np.arange(n) if indices is None else np.atleast_1d(indices)
    check_tree(w, d2, p2, src)
    reached = s2 != NULL
    # Each vertex's source is a source at exactly its distance.
    assert set(s2[reached].tolist()) <= set(np.asarray(src).tolist())
    for v in np.flatnonzero(reached):
        s = int(s2[v])
        assert ref.dijkstra(g, directed, indices=s, unweighted=unweighted)[v] == d2[v]
    only = csgraph.dijkstra(g, directed, indices=indices, min_only=True, limit=2.5,
                            unweighted=unweighted)
    np.testing.assert_array_equal(only, d1)


@pytest.mark.parametrize("directed", [True, False])
def test_undirected_takes_the_smaller_weight(directed: bool) -> None:
    a = sp.csr_matrix(([5.0, 1.0, 2.0, 0.0], ([0, 1, 1, 2], [1, 0, 2, 1])), shape=(4, 4))
    for unweighted in (False, True):
        d1 = ref.dijkstra(a, directed, unweighted=unweighted)
        d2 = csgraph.dijkstra(a, directed, unweighted=unweighted)
        np.testing.assert_array_equal(d2, d1)


@pytest.mark.parametrize("seed", range(6))
def test_repeated_entries(seed: int) -> None:
    """csr repeats: scipy's Dijkstra sees both (the smaller counts); coo repeats add up."""
    a = non_canonical(seed)
    for g in (a, a.tocoo()):
        for d in (True, False):
            d1, _ = ref.dijkstra(g, d, return_predecessors=True)
            d2, p2 = csgraph.dijkstra(g, d, return_predecessors=True)
            np.testing.assert_array_equal(d2, d1)
            w = weight_matrix(g, d, False)
            for s in range(a.shape[0]):
                check_tree(w, d2[s], p2[s], [s])


def test_explicit_zero_is_an_edge_and_dense_zero_is_not() -> None:
    a = sp.csr_matrix(([0.0, 1.0], ([0, 1], [1, 2])), shape=(3, 3))
    d2, p2 = csgraph.dijkstra(a, indices=0, return_predecessors=True)
    np.testing.assert_array_equal(d2, [0.0, 0.0, 1.0])
    np.testing.assert_array_equal(p2, [NULL, 0, 1])
    dense = np.array([[0, 0, np.inf], [np.nan, 0, 1], [0, 0, 0]])
    np.testing.assert_array_equal(csgraph.dijkstra(dense, indices=0), ref.dijkstra(dense,
                                                                                   indices=0))
    masked = np.ma.masked_values(np.array([[0, 0, 2.0], [1, 0, 0], [0, 3, 0]]), 2.0)
    for d in (True, False):
        np.testing.assert_array_equal(csgraph.dijkstra(masked, d), ref.dijkstra(masked, d))


def test_inf_weight_edges() -> None:
    a = sp.csr_matrix(([np.inf, 1.0], ([0, 1], [1, 2])), shape=(3, 3))
    for unweighted in (False, True):
        d1, _p1 = ref.dijkstra(a, indices=0, unweighted=unweighted, return_predecessors=True)
        d2, p2 = csgraph.dijkstra(a, indices=0, unweighted=unweighted, return_predecessors=True)
        np.testing.assert_array_equal(d2, d1)
        check_tree(weight_matrix(a, True, unweighted), d2, p2, [0])


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("unweighted", [False, True])
def test_shortest_path_identical(seed, directed, unweighted) -> None:
    for density in (0.05, 0.4):  # sparse: scipy picks D (ours); dense: FW (scipy's)
        a = random_graph(seed, n=25, density=density, integer=False)
        for g in (a, a.toarray()):
            for method in ("auto", "D", "FW", "BF", "J"):
                try:
                    d1, p1 = ref.shortest_path(g, method, directed, True, unweighted)
                except ref.NegativeCycleError:
                    # scipy's BF/J see a negative cycle in some undirected graphs; so do we.
                    with pytest.raises(ref.NegativeCycleError):
                        csgraph.shortest_path(g, method, directed, True, unweighted)
                    continue
                d2, p2 = csgraph.shortest_path(g, method, directed, True, unweighted)
                np.testing.assert_array_equal(d2, d1)
                assert p2.dtype == np.int32 and p2.shape == p1.shape
                if method in ("FW", "BF", "J") or np.array_equal(p2, p1):
                    # scipy's own: Floyd-Warshall sums d[i,k] + d[k,j], so its trees
                    # need not pass the left-to-right check below.
                    np.testing.assert_array_equal(p2, p1)
                    continue
                w = weight_matrix(g, directed, unweighted)
                for s in range(25):
                    check_tree(w, d2[s], p2[s], [s])
            d1 = ref.shortest_path(g, directed=directed, unweighted=unweighted, indices=[3, 1])
            d2 = csgraph.shortest_path(g, directed=directed, unweighted=unweighted,
                                       indices=[3, 1])
            np.testing.assert_array_equal(d2, d1)


def test_larger_graph_exercises_bottom_up_and_chunks() -> None:
    """A Kronecker graph: direction-optimizing levels and several multi-source chunks."""
    from spbfs.generators import kronecker

    e = kronecker(10, 8, seed=3)
    n = e.n
    a = sp.csr_matrix((np.ones(e.src.size), (e.src, e.dst)), shape=(n, n))
    for d in (True, False):
        np.testing.assert_array_equal(csgraph.dijkstra(a, d, unweighted=True),
                                      ref.dijkstra(a, d, unweighted=True))
        d2, p2 = csgraph.dijkstra(a, d, indices=[0, 1, 2], unweighted=True,
                                  return_predecessors=True)
        w = weight_matrix(a, d, True)
        for s in range(3):
            check_tree(w, d2[s], p2[s], [s])
        n1, l1 = ref.connected_components(a, d)
        n2, l2 = csgraph.connected_components(a, d)
        assert n2 == n1 and np.array_equal(l2, l1)
        o1, q1 = ref.breadth_first_order(a, 5, d)
        o2, q2 = csgraph.breadth_first_order(a, 5, d)
        assert np.array_equal(o2, o1) and np.array_equal(q2, q1)


def test_environment_settings_keep_the_engines_on_host_csr(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """SPBFS_FORMAT / SPBFS_BACKEND choose other blocks elsewhere; here the kernels need csr."""
    monkeypatch.setenv("SPBFS_FORMAT", "dcsc")
    monkeypatch.setenv("SPBFS_BACKEND", "numpy")
    monkeypatch.setenv("SPBFS_THREADS", "1")
    a = random_graph(3)
    for d in (True, False):
        for unweighted in (False, True):
            d1 = ref.dijkstra(a, d, indices=[0, 1], unweighted=unweighted)
            d2, p2 = csgraph.dijkstra(a, d, indices=[0, 1], unweighted=unweighted,
                                      return_predecessors=True)
            np.testing.assert_array_equal(d2, d1)
            w = weight_matrix(a, d, unweighted)
            for s in range(2):
                check_tree(w, d2[s], p2[s], [s])
        n1, l1 = ref.connected_components(a, d)
        n2, l2 = csgraph.connected_components(a, d)
        assert n2 == n1 and np.array_equal(l2, l1)


# --------------------------------------------------------------------------- delegation


def test_negative_weights_go_to_scipy_with_its_warning() -> None:
    a = sp.csr_matrix(np.array([[0, -1.0, 4], [0, 0, 2], [0, 0, 0]]))
    with pytest.warns(UserWarning, match="negative weights"):
        d2 = csgraph.dijkstra(a, indices=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(d2, ref.dijkstra(a, indices=0))
    d1, p1 = ref.shortest_path(a, return_predecessors=True)  # auto: Johnson
    d2, p2 = csgraph.shortest_path(a, return_predecessors=True)
    np.testing.assert_array_equal(d2, d1)
    np.testing.assert_array_equal(p2, p1)
    cyc = sp.csr_matrix(np.array([[0, -1.0], [-1.0, 0]]))
    with pytest.raises(ref.NegativeCycleError):
        csgraph.shortest_path(cyc, method="BF")


def test_nan_weights_go_to_scipy() -> None:
    a = sp.csr_matrix(([np.nan, 1.0], ([0, 1], [1, 2])), shape=(3, 3))
    np.testing.assert_array_equal(csgraph.dijkstra(a, indices=0), ref.dijkstra(a, indices=0))


def test_fw_overwrite_passed_on() -> None:
    g = np.array([[0, 1.0, 0], [0, 0, 2.0], [0, 0, 0]])
    expect = ref.shortest_path(g.copy(), "FW")
    got = csgraph.shortest_path(g, "FW", overwrite=True)
    np.testing.assert_array_equal(got, expect)
    np.testing.assert_array_equal(g, expect)  # scipy's FW wrote into it


def test_empty_graph_shortest_paths() -> None:
    a = sp.csr_matrix((0, 0))
    assert csgraph.dijkstra(a).shape == ref.dijkstra(a).shape == (0, 0)
    assert csgraph.shortest_path(a).shape == (0, 0)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize("graph", [sp.csr_matrix((2, 3)), np.ones((3, 2)), np.ones(3),
                                   np.ones((2, 2, 2))])
@pytest.mark.parametrize("call", [
    lambda g: csgraph.breadth_first_order(g, 0),
    lambda g: csgraph.breadth_first_tree(g, 0),
    lambda g: csgraph.connected_components(g),
    lambda g: csgraph.dijkstra(g),
    lambda g: csgraph.shortest_path(g),
])
def test_shape_errors(graph, call) -> None:
    with pytest.raises(ValueError, match=r"square|2-D"):
        call(graph)


@pytest.mark.parametrize(("i_start", "exc", "match"), [
    (3, ValueError, "i_start=3 is out of range"),
    (-1, ValueError, "i_start=-1 is out of range"),
    (1.5, ValueError, "i_start must be a whole number"),
    (True, TypeError, "bool"),
    ("1", TypeError, "i_start"),
    (None, TypeError, "i_start"),
])
def test_i_start_errors(i_start, exc, match) -> None:
    a = sp.csr_matrix(np.eye(3, k=1))
    with pytest.raises(exc, match=match):
        csgraph.breadth_first_order(a, i_start)
    with pytest.raises(exc, match=match):
        csgraph.breadth_first_tree(a, i_start)


def test_i_start_whole_float_and_numpy_int_accepted() -> None:
    a = sp.csr_matrix(np.eye(3, k=1))
    for s in (1.0, np.int64(1), np.float32(1)):
        np.testing.assert_array_equal(csgraph.breadth_first_order(a, s)[0],
                                      ref.breadth_first_order(a, 1)[0])


def test_i_start_on_empty_graph() -> None:
    with pytest.raises(ValueError, match="out of range for a graph with 0 vertices"):
        csgraph.breadth_first_order(sp.csr_matrix((0, 0)), 0)


@pytest.mark.parametrize(("indices", "exc", "match"), [
    (3, ValueError, "indices: 3 is out of range"),
    ([0, -4], ValueError, "indices: -4 is out of range"),
    ([0.5], ValueError, "whole numbers"),
    ([True], TypeError, "bool"),
    (["a"], TypeError, "dtype"),
])
def test_indices_errors(indices, exc, match) -> None:
    a = sp.csr_matrix(np.eye(3, k=1))
    with pytest.raises(exc, match=match):
        csgraph.dijkstra(a, indices=indices)
    with pytest.raises(exc, match=match):
        csgraph.shortest_path(a, indices=indices)


@pytest.mark.parametrize(("limit", "exc", "match"), [
    (-1, ValueError, "limit must be >= 0"),
    (np.nan, ValueError, "limit must be >= 0, got nan"),
    ("1", TypeError, "limit must be a real number"),
])
def test_limit_errors(limit, exc, match) -> None:
    with pytest.raises(exc, match=match):
        csgraph.dijkstra(sp.csr_matrix(np.eye(3, k=1)), limit=limit)


def test_connection_and_method_errors() -> None:
    a = sp.csr_matrix(np.eye(3, k=1))
    with pytest.raises(ValueError, match="connection must be 'weak' or 'strong'"):
        csgraph.connected_components(a, connection="both")
    with pytest.raises(TypeError, match="connection"):
        csgraph.connected_components(a, connection=None)
    with pytest.raises(ValueError, match="unrecognized method 'd'"):
        csgraph.shortest_path(a, method="d")
    with pytest.raises(ValueError, match="Cannot specify indices with method == 'FW'"):
        csgraph.shortest_path(a, method="FW", indices=0)


# -------------------------------------------------------------- components by the kernels


def _random_csr(rng, n: int, m: int, index: type) -> sp.csr_matrix:
    """A directed graph with repeated entries, self-loops and (for m < n) isolated vertices."""
    a = sp.csr_matrix((rng.uniform(0.5, 2, m), (rng.integers(0, n, m), rng.integers(0, n, m))),
                      shape=(n, n))
    a.indptr, a.indices = a.indptr.astype(index), a.indices.astype(index)
    return a


@pytest.mark.parametrize("index", [np.int32, np.int64])
def test_components_run_the_kernels_and_equal_scipy(monkeypatch, index) -> None:
    rng = np.random.default_rng(11)
    graphs = [_random_csr(rng, n, m, index) for n, m in
              ((1, 0), (5, 0), (40, 30), (300, 250), (300, 600), (2000, 2400))]
    cycle = sp.csr_matrix(np.roll(np.eye(50), 1, axis=1))  # one strong component
    graphs += [cycle, cycle.tocsc(), cycle.toarray()]
    want = [[ref.connected_components(_canonical(g), d, c) for d, c in
             ((True, "weak"), (False, "weak"), (True, "strong"), (False, "strong"))]
            for g in graphs]
    # Every call below must run spbfs's kernels: the small-graph hand-over to scipy is off
    # (the kernels count as compiled) and scipy's function raises if reached.
    monkeypatch.setattr(csgraph, "ready", lambda kernel: True)

    def refuse(*args, **kwargs):
        raise AssertionError("handed to scipy")

    monkeypatch.setattr(csgraph._scipy, "connected_components", refuse)
    for g, expected in zip(graphs, want, strict=True):
        for (d, c), (n1, l1) in zip(((True, "weak"), (False, "weak"), (True, "strong"),
                                     (False, "strong")), expected, strict=True):
            n2, l2 = csgraph.connected_components(g, d, c)
            assert n2 == n1 and l2.dtype == np.int32, (g.shape, d, c)
            np.testing.assert_array_equal(l2, l1)  # scipy's numbering, element for element
            assert csgraph.connected_components(g, d, c, False) == n1


def test_components_of_small_graphs_go_to_scipy_until_compiled(monkeypatch) -> None:
    a = sp.csr_matrix(np.eye(6, k=1) + np.eye(6, k=-2))
    want = {conn: ref.connected_components(a, connection=conn) for conn in ("weak", "strong")}
    calls = []
    scipy_cc = csgraph._scipy.connected_components  # the module ref names: patched below

    def counted(*args, **kwargs):
        calls.append(args[2])
        return scipy_cc(*args, **kwargs)

    monkeypatch.setattr(csgraph._scipy, "connected_components", counted)
    monkeypatch.setattr(csgraph, "ready", lambda kernel: False)
    for conn in ("weak", "strong"):
        n, labels = csgraph.connected_components(a, connection=conn)
        n1, l1 = want[conn]
        assert n == n1 and (labels == l1).all()
    assert calls == ["weak", "strong"]


# --------------------------------------------------------------------------- engines per call

_SMALL_UNWEIGHTED = csgraph._SMALL_UNWEIGHTED


@pytest.fixture(autouse=True)
def _bfs_engines_on_small_graphs(monkeypatch: pytest.MonkeyPatch) -> None:
    """The graphs of this file are small enough for the unit-weight queue search: run the
    breadth-first engines on them instead, so that the tests cover those engines."""
    monkeypatch.setattr(csgraph, "_SMALL_UNWEIGHTED", 0)


def _scipy_dijkstra_calls(monkeypatch: pytest.MonkeyPatch) -> tuple[list, Any]:
    """A list that records every call to scipy's dijkstra, and the function unrecorded."""
    calls: list = []
    real = ref.dijkstra

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(csgraph._scipy, "dijkstra", spy)
    return calls, real


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("unweighted", [False, True])
def test_small_graphs_run_delta_stepping(monkeypatch: pytest.MonkeyPatch, seed, directed,
                                         unweighted) -> None:
    """Below _SMALL_UNWEIGHTED every call is delta-stepping's (unit weights if unweighted)."""
    monkeypatch.setattr(csgraph, "_SMALL_UNWEIGHTED", _SMALL_UNWEIGHTED)
    calls, real = _scipy_dijkstra_calls(monkeypatch)
    g = random_graph(seed)
    w = weight_matrix(g, directed, unweighted)
    for idx in (0, [0, 3, 3], None):
        d, p = csgraph.dijkstra(g, directed, indices=idx, unweighted=unweighted,
                                return_predecessors=True)
        np.testing.assert_array_equal(
            d, real(g, directed, indices=idx, unweighted=unweighted))
        rows = range(g.shape[0]) if idx is None else np.atleast_1d(idx)
        for dist, pred, s in zip(np.atleast_2d(d), np.atleast_2d(p), rows, strict=True):
            check_tree(w, dist, pred, [s])
    d = csgraph.dijkstra(g, directed, indices=[0, 3], unweighted=unweighted, min_only=True)
    np.testing.assert_array_equal(
        d, real(g, directed, indices=[0, 3], unweighted=unweighted, min_only=True))
    assert calls == []


def test_small_graphs_go_to_scipy_while_not_compiled(monkeypatch: pytest.MonkeyPatch) -> None:
    """A small call does not wait for a compilation: scipy answers it."""
    monkeypatch.setattr(csgraph, "_SMALL_UNWEIGHTED", _SMALL_UNWEIGHTED)
    monkeypatch.setattr(csgraph, "ready", lambda kernel: False)
    calls, real = _scipy_dijkstra_calls(monkeypatch)
    g = random_graph(2)
    for unweighted in (False, True):
        d = csgraph.dijkstra(g, False, indices=[0, 3], unweighted=unweighted)
        np.testing.assert_array_equal(d, real(g, False, indices=[0, 3],
                                              unweighted=unweighted))
    assert len(calls) == 2


@pytest.mark.parametrize("seed", range(3))
def test_transpose_as_scipy(seed) -> None:
    """The compiled transpose lists each row as scipy's ``A.T.tocsr()``: unsorted rows of
    the input and repeated entries included."""
    rng = np.random.default_rng(seed)
    n = 30
    indptr = np.concatenate([[0], np.cumsum(rng.integers(0, 8, n))]).astype(np.int32)
    indices = rng.integers(0, n, indptr[-1]).astype(np.int32)  # unsorted, repeats
    g = sp.csr_matrix((rng.random(indptr[-1]), indices, indptr), shape=(n, n))
    want = g.T.tocsr()
    ptr, ind, data = csgraph._transpose(g.indptr, g.indices, g.data)
    np.testing.assert_array_equal(ptr, want.indptr)
    np.testing.assert_array_equal(ind, want.indices)
    np.testing.assert_array_equal(data, want.data)
    ptr, ind, data = csgraph._transpose(g.indptr, g.indices, np.empty(0))
    np.testing.assert_array_equal(ind, want.indices)
    assert data.shape == (0,)


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("directed", [True, False])
def test_unweighted_deep_graphs_take_the_queue_search(monkeypatch: pytest.MonkeyPatch, seed,
                                                      directed) -> None:
    """Past _DEEP_LEVELS levels, rows with predecessors come from unit-weight delta-stepping."""
    monkeypatch.setattr(csgraph, "_DEEP_LEVELS", 0)
    g = random_graph(seed, n=60, density=0.03)
    idx = [0, 5, 5, 17]
    d1 = ref.dijkstra(g, directed, indices=idx, unweighted=True)
    d2, p2 = csgraph.dijkstra(g, directed, indices=idx, unweighted=True,
                              return_predecessors=True)
    np.testing.assert_array_equal(d2, d1)
    w = weight_matrix(g, directed, True)
    for dist, pred, s in zip(d2, p2, idx, strict=True):
        check_tree(w, dist, pred, [s])
    # a path graph: deep for any threshold, with the default one
    monkeypatch.undo()
    n = 600
    path = sp.csr_matrix((np.ones(n - 1), (np.arange(n - 1), np.arange(1, n))), shape=(n, n))
    np.testing.assert_array_equal(
        csgraph.shortest_path(path, directed=directed, unweighted=True, indices=[0, 299]),
        ref.shortest_path(path, directed=directed, unweighted=True, indices=[0, 299]))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("directed", [True, False])
@pytest.mark.parametrize("delta", [None, 1e-3, 0.5, 1.0, 3.0, 1e6])
def test_delta_stepping_any_bucket_width(seed, directed, delta) -> None:
    """Every bucket width gives scipy's distances: light edges (w < delta), heavy ones, zeros."""
    from spbfs.kernels import sssp_numba

    g = random_graph(seed, n=50, density=0.08).tocsr()  # weights 0..5, explicit zeros
    adj = csgraph._Adjacency(g, directed, False)
    sources = np.array([0, 7, 7, 31])
    for limit in (np.inf, 4.0):
        dist, buckets = sssp_numba.run(*adj.first, np.arange(5), sources, limit=limit,
                                       delta=delta, also=adj.second)
        want = ref.dijkstra(g, directed, indices=sources, limit=limit)
        np.testing.assert_array_equal(dist, want)
        assert buckets >= 4
    # min_only's one group of seeds
    dist, _ = sssp_numba.run(*adj.first, np.array([0, 4]), sources, delta=delta,
                             also=adj.second)
    np.testing.assert_array_equal(dist[0], ref.dijkstra(g, directed, indices=sources,
                                                        min_only=True))


def test_delta_stepping_bad_delta() -> None:
    from spbfs.kernels import sssp_numba

    g = random_graph(1).tocsr()
    adj = csgraph._Adjacency(g, True, False)
    for bad in (0.0, -1.0, np.inf, np.nan):
        with pytest.raises(ValueError, match="delta must be a positive finite bucket width"):
            sssp_numba.run(*adj.first, np.arange(2), np.array([0]), delta=bad)
    top = float(g.data.max())
    with pytest.raises(ValueError, match=rf"delta=1e-09 is too small for weights up to {top}"):
        sssp_numba.run(*adj.first, np.arange(2), np.array([0]), delta=1e-9)
