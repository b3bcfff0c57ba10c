"""spbfs.algorithms against scipy.sparse.csgraph and networkx, both formats, CPU backends."""

from __future__ import annotations

import functools
import os
import random
import subprocess
import sys
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from conftest import FORMATS
from scipy.sparse.csgraph import NegativeCycleError, bellman_ford, shortest_path
from scipy.sparse.csgraph import connected_components as sp_components

import spbfs
from spbfs import generators as gen
from spbfs.algorithms import (
    betweenness_centrality,
    connected_components,
    multi_source_bfs,
    pagerank,
    sssp,
    triangle_count,
)
from spbfs.algorithms.operations import LocalOps
from spbfs.algorithms.shortest_paths import bucket_width, delta_stepping, weighted_block
from spbfs.edges import EdgeList
from spbfs.io import read_graph

CPU = ["numba", "numpy"]
CONFIGS = [
    pytest.param(fmt, be, id=f"{fmt}-{be}") for fmt in FORMATS for be in CPU
] + [pytest.param("csr", "cupy", id="csr-cupy", marks=pytest.mark.gpu)]


def _disconnected() -> EdgeList:
    p, s = gen.path(20), gen.star(9)
    return EdgeList(
        np.concatenate([p.src, s.src + 20]),
        np.concatenate([p.dst, s.dst + 20]),
        20 + 9 + 4,  # four isolated vertices
        directed=False,
    )


def _triangles_and_tails() -> EdgeList:
    src = [0, 1, 2, 2, 3, 4, 5, 6, 6, 8, 9]
    dst = [1, 2, 0, 3, 4, 2, 6, 7, 5, 9, 10]
    return EdgeList(np.array(src), np.array(dst), 12, directed=False)


GRAPHS = {
    "kron8": gen.kronecker(8, 8, seed=3),  # skewed, isolated vertices
    "er_directed": gen.erdos_renyi(150, m=450, seed=5, directed=True),  # dangling, sinks
    "er_sparse_directed": gen.erdos_renyi(120, m=110, seed=6, directed=True),  # many pieces
    "disconnected": _disconnected(),
    "grid": gen.grid2d(9, 7),
    "triangles": _triangles_and_tails(),
}


def _graph(name: str, fmt: str, backend: str) -> spbfs.Graph:
    return spbfs.Graph.from_edgelist(GRAPHS[name], config=spbfs.Config(format=fmt,
                                                                      backend=backend))


def _nx(g: spbfs.Graph) -> nx.Graph:
    kind = nx.DiGraph if g.directed else nx.Graph
    G = nx.from_scipy_sparse_array(g.to_scipy(), create_using=kind)
    G.remove_edges_from(nx.selfloop_edges(G))
    return G


def _as_array(d: dict, n: int) -> np.ndarray:
    return np.array([d[i] for i in range(n)], dtype=np.float64)


@pytest.fixture(scope="module")
def karate(data_dir) -> EdgeList:
    return read_graph(data_dir / "karate.mtx")


# -- multi-source BFS -----------------------------------------------------------------
@pytest.mark.parametrize(("fmt", "backend"), CONFIGS)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_msbfs_matches_bfs_and_scipy(name: str, fmt: str, backend: str) -> None:
    g = _graph(name, fmt, backend)
    sources = np.array([0, 3, 3, g.n - 1, g.n // 2])  # a duplicate: two equal rows
    r = multi_source_bfs(g, sources)
    assert r.parents.shape == r.levels.shape == (5, g.n)
    ref = shortest_path(g.to_scipy(), directed=g.directed, unweighted=True, indices=sources)
    np.testing.assert_array_equal(np.where(r.levels < 0, np.inf, r.levels), ref)
    for i, s in enumerate(sources):
        one = spbfs.bfs(g, int(s))
        np.testing.assert_array_equal(r.parents[i], one.parents)  # same min-parent rule
    np.testing.assert_array_equal(r.levels[1], r.levels[2])
    levels_only = multi_source_bfs(g, sources, output="levels")
    assert levels_only.parents is None
    np.testing.assert_array_equal(levels_only.levels, r.levels)


@pytest.mark.parametrize(("fmt", "backend"), CONFIGS)
@pytest.mark.parametrize("name", ["kron8", "er_directed"])
def test_msbfs_more_than_64_sources(name: str, fmt: str, backend: str) -> None:
    # The numba backend packs 64 searches per word: 130 sources need three words.
    g = _graph(name, fmt, backend)
    sources = np.arange(g.n)[::-1][:130] if g.n >= 130 else np.arange(g.n)
    r = multi_source_bfs(g, sources)
    ref = shortest_path(g.to_scipy(), directed=g.directed, unweighted=True, indices=sources)
    np.testing.assert_array_equal(np.where(r.levels < 0, np.inf, r.levels), ref)
    for i in (0, 63, 64, 129):
        np.testing.assert_array_equal(r.parents[i], spbfs.bfs(g, int(sources[i])).parents)


@pytest.mark.parametrize("fmt", FORMATS)
def test_msbfs_options(fmt: str) -> None:
    g = _graph("er_directed", fmt, "numba")
    r = multi_source_bfs(g, [1, 2], max_depth=2, output="levels")
    assert r.depth <= 2 and r.levels.max() <= 2
    full = multi_source_bfs(g, [1, 2], output="levels")
    np.testing.assert_array_equal(np.where(full.levels <= 2, full.levels, -1), r.levels)
    rev = multi_source_bfs(g, [1], reverse=True)
    np.testing.assert_array_equal(rev.levels[0], spbfs.bfs(g, 1, reverse=True).levels)
    single = multi_source_bfs(g, 7)
    assert single.sources.tolist() == [7] and len(single) == 1


# -- shortest paths ---------------------------------------------------------------------
def _weights(el: EdgeList, seed: int, directed: bool) -> sp.csr_matrix:
    rng = np.random.default_rng(seed)
    w = rng.uniform(0.0, 10.0, el.num_edges)
    w[rng.random(el.num_edges) < 0.1] = 0.0  # zero-weight edges are edges
    m = sp.coo_matrix((w, (el.src, el.dst)), shape=(el.n, el.n)).tocsr()
    m.sum_duplicates()
    return m


@pytest.mark.parametrize(("fmt", "backend"), CONFIGS)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_sssp_matches_scipy(name: str, fmt: str, backend: str) -> None:
    g = _graph(name, fmt, backend)
    el = GRAPHS[name]
    w = _weights(el, 7, g.directed)
    for source in (0, g.n // 3):
        r = sssp(g, source, weights=w)
        # scipy: an undirected edge given with two weights may be used with the smaller.
        ref = shortest_path(w, directed=g.directed, indices=source)
        np.testing.assert_allclose(r.distances, ref)
        hops = sssp(g, source).distances  # no weights: every edge weighs 1
        np.testing.assert_array_equal(
            hops, shortest_path(g.to_scipy(), directed=g.directed, unweighted=True,
                                indices=source))


@pytest.mark.parametrize("fmt", FORMATS)
def test_sssp_weight_sources(fmt: str, data_dir) -> None:
    cfg = spbfs.Config(format=fmt, backend="numba")
    # A weighted scipy matrix as the graph: its values are the weights.
    w = _weights(GRAPHS["er_directed"], 3, True)
    r = sssp(w, 4, directed=True, config=cfg)
    np.testing.assert_allclose(r.distances, shortest_path(w, directed=True, indices=4))
    # An edge list read from a weighted file keeps its weights (west0067 has negative
    # values: Bellman-Ford as scipy's, then the absolute values).
    el = read_graph(data_dir / "west0067.mtx")
    g = spbfs.Graph.from_edgelist(el, config=cfg)
    a = sp.coo_matrix((el.weights, (el.src, el.dst)), shape=(el.n, el.n)).tocsr()
    try:
        want = bellman_ford(a, directed=True, indices=0)
    except NegativeCycleError:
        with pytest.raises(NegativeCycleError, match="Negative cycle detected on node"):
            sssp(g, 0)
    else:
        np.testing.assert_allclose(sssp(g, 0).distances, want)
    el.weights = np.abs(el.weights)
    g = spbfs.Graph.from_edgelist(el, config=cfg)
    a = sp.coo_matrix((el.weights, (el.src, el.dst)), shape=(el.n, el.n)).tocsr()
    a.setdiag(0)
    a.eliminate_zeros()
    np.testing.assert_allclose(sssp(g, 0).distances, shortest_path(a, directed=True, indices=0))


def test_sssp_prebuilt_weighted_block() -> None:
    from spbfs.algorithms.shortest_paths import weighted_block

    g = _graph("kron8", "dcsc", "numba")
    w = _weights(GRAPHS["kron8"], 2, False)
    block = weighted_block(g, w)
    for s in (0, 5, 9):
        np.testing.assert_allclose(sssp(g, s, weights=block).distances,
                                   shortest_path(w, directed=False, indices=s))
    with pytest.raises(ValueError, match="weights: a block must be a weighted block"):
        sssp(g, 0, weights=g.out_block)
    with pytest.raises(TypeError, match="weights must be a scipy sparse matrix"):
        weighted_block(g, None)


def test_sssp_errors() -> None:
    g = _graph("grid", "csr", "numba")
    w = _weights(GRAPHS["grid"], 1, False)
    neg = w.copy()
    neg.data[5] = -1.0
    with pytest.raises(NegativeCycleError, match=r"Negative cycle detected on node.*-1\.0"):
        sssp(g, 0, weights=neg)  # undirected: a negative edge is a negative cycle
    nan = w.copy()
    nan.data[0] = np.nan
    with pytest.raises(ValueError, match="weights must be non-negative"):
        sssp(g, 0, weights=nan)
    with pytest.raises(ValueError, match="weights has shape"):
        sssp(g, 0, weights=sp.eye(3, format="csr"))
    with pytest.raises(TypeError, match="weights must be a scipy sparse matrix"):
        sssp(g, 0, weights=w.toarray())
    with pytest.raises(ValueError, match=r"source=63 is out of range"):
        sssp(g, 63, weights=w)
    with pytest.raises(TypeError, match="source must be an integer"):
        sssp(g, 1.5)
    with pytest.raises(ValueError, match="graph is empty"):
        sssp(spbfs.Graph.from_edges([], [], n=0), 0)
    with pytest.raises(ValueError, match="max_rounds must be >= 0"):
        sssp(g, 0, max_rounds=-1)


# -- connected components ----------------------------------------------------------------
@pytest.mark.parametrize(("fmt", "backend"), CONFIGS)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_components_match_scipy(name: str, fmt: str, backend: str) -> None:
    g = _graph(name, fmt, backend)
    r = connected_components(g)
    count, labels = sp_components(g.to_scipy(), directed=True, connection="weak")
    assert r.n_components == count
    np.testing.assert_array_equal(r.labels, labels)  # same numbering: by smallest vertex
    assert (r.roots <= np.arange(g.n)).all()
    np.testing.assert_array_equal(r.roots[r.roots], r.roots)


@pytest.mark.parametrize("fmt", FORMATS)
def test_components_real_graphs(fmt: str, data_dir) -> None:
    cfg = spbfs.Config(format=fmt, backend="numba")
    for name in ("karate.mtx", "p2p-Gnutella31.txt", "luxembourg_osm.mtx"):
        g = spbfs.Graph.from_edgelist(read_graph(data_dir / name), config=cfg)
        r = connected_components(g)
        count, labels = sp_components(g.to_scipy(), directed=True, connection="weak")
        assert r.n_components == count, name
        np.testing.assert_array_equal(r.labels, labels)


def test_components_empty_and_isolated() -> None:
    r = connected_components(spbfs.Graph.from_edges([], [], n=0))
    assert r.n_components == 0 and r.labels.size == 0
    r = connected_components(spbfs.Graph.from_edges([], [], n=3))
    assert r.n_components == 3 and r.labels.tolist() == [0, 1, 2]


# -- betweenness ------------------------------------------------------------------------
@pytest.mark.parametrize(("fmt", "backend"), CONFIGS)
@pytest.mark.parametrize("name", ["kron8", "er_directed", "disconnected", "triangles"])
def test_betweenness_matches_networkx(name: str, fmt: str, backend: str) -> None:
    g = _graph(name, fmt, backend)
    G = _nx(g)
    for normalized in (True, False):
        ours = betweenness_centrality(g, normalized=normalized, batch_size=40)
        ref = _as_array(nx.betweenness_centrality(G, normalized=normalized), g.n)
        np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)
    # Sampled: the sources networkx draws for (k, seed), given explicitly.
    k, seed = 10, 11
    chosen = random.Random(seed).sample(list(G.nodes()), k)
    ours = betweenness_centrality(g, sources=chosen, batch_size=4)
    ref = _as_array(nx.betweenness_centrality(G, k=k, seed=seed), g.n)
    np.testing.assert_allclose(ours, ref, rtol=1e-9, atol=1e-12)


def test_betweenness_real_graph(karate) -> None:
    for fmt in FORMATS:
        g = spbfs.Graph.from_edgelist(karate, config=spbfs.Config(format=fmt))
        ref = _as_array(nx.betweenness_centrality(_nx(g)), g.n)
        np.testing.assert_allclose(betweenness_centrality(g), ref, rtol=1e-9)


def test_betweenness_sampling_and_errors() -> None:
    g = _graph("kron8", "csr", "numba")
    a = betweenness_centrality(g, k=20, seed=4)
    b = betweenness_centrality(g, k=20, seed=4)
    np.testing.assert_array_equal(a, b)
    exact = betweenness_centrality(g)
    np.testing.assert_allclose(betweenness_centrality(g, k=g.n, seed=1), exact)
    with pytest.raises(ValueError, match="k=257 exceeds"):
        betweenness_centrality(g, k=g.n + 1)
    with pytest.raises(ValueError, match="not both"):
        betweenness_centrality(g, k=3, sources=[1, 2, 3])
    with pytest.raises(ValueError, match="distinct"):
        betweenness_centrality(g, sources=[1, 1])
    with pytest.raises(ValueError, match=r"sources\[1\]=999 is out of range"):
        betweenness_centrality(g, sources=[1, 999])
    with pytest.raises(ValueError, match="batch_size must be >= 1"):
        betweenness_centrality(g, batch_size=0)
    assert betweenness_centrality(spbfs.Graph.from_edges([], [], n=0)).size == 0


# -- PageRank -----------------------------------------------------------------------------
@pytest.mark.parametrize(("fmt", "backend"), CONFIGS)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_pagerank_matches_networkx(name: str, fmt: str, backend: str) -> None:
    g = _graph(name, fmt, backend)
    r = pagerank(g, tol=1e-10, max_iter=500)
    assert r.converged
    ref = _as_array(nx.pagerank(_nx(g), tol=1e-10, max_iter=500), g.n)
    np.testing.assert_allclose(r.scores, ref, atol=1e-8)
    assert r.scores.sum() == pytest.approx(1.0)


def test_pagerank_real_graph_and_errors(karate) -> None:
    g = spbfs.Graph.from_edgelist(karate, config=spbfs.Config(format="dcsc"))
    ref = _as_array(nx.pagerank(_nx(g), alpha=0.9), g.n)
    np.testing.assert_allclose(pagerank(g, alpha=0.9).scores, ref, atol=1e-6)
    assert not pagerank(g, max_iter=1).converged
    with pytest.raises(ValueError, match="alpha must lie in"):
        pagerank(g, alpha=1.5)
    with pytest.raises(ValueError, match="tol must be > 0"):
        pagerank(g, tol=0)
    with pytest.raises(ValueError, match="max_iter must be >= 1"):
        pagerank(g, max_iter=0)
    assert pagerank(spbfs.Graph.from_edges([], [], n=0)).scores.size == 0


# -- triangles ------------------------------------------------------------------------------
@pytest.mark.parametrize(("fmt", "backend"), CONFIGS)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_triangles_match_networkx(name: str, fmt: str, backend: str) -> None:
    g = _graph(name, fmt, backend)
    r = triangle_count(g)
    ref = nx.triangles(_nx(g).to_undirected())
    np.testing.assert_array_equal(r.per_vertex, _as_array(ref, g.n))
    assert r.total == sum(ref.values()) // 3


def test_triangles_real_graph(karate) -> None:
    for fmt in FORMATS:
        for backend in CPU:
            g = spbfs.Graph.from_edgelist(karate, config=spbfs.Config(format=fmt,
                                                                      backend=backend))
            r = triangle_count(g)
            assert r.total == 45
            np.testing.assert_array_equal(r.per_vertex,
                                          _as_array(nx.triangles(_nx(g)), g.n))


def _dag_by_id(g: spbfs.Graph) -> tuple[np.ndarray, np.ndarray]:
    """Rows ``ptr``/``ind`` of an undirected graph oriented from lower to higher id."""
    b = g.out_block
    cols = b.column_ids()
    rows = b.ind.astype(np.int64)
    keep = cols < rows
    ptr = np.zeros(g.n + 1, np.int64)
    np.cumsum(np.bincount(cols[keep], minlength=g.n), out=ptr[1:])
    return ptr, rows[keep]


def test_triangles_large_chunks() -> None:
    # The vectorized kernel splits its wedges into chunks; force many small ones.
    from semirings.backend import get_backend
    from spbfs.algorithms import _ops

    g = _graph("kron8", "csr", "numpy")
    ref = triangle_count(g).per_vertex
    ptr, ind = _dag_by_id(g)
    small = _ops._dag_triangles_vectorized(ptr, ind, g.n, np, chunk=7)
    np.testing.assert_array_equal(small, ref)
    np.testing.assert_array_equal(_ops.dag_triangles(ptr, ind, g.n, get_backend("numba")), ref)


def test_dag_triangles_searches_the_rows_asked() -> None:
    # A rank of the grid searches its own rows, the first ones of its table, and only reads
    # the others: each triangle is found at its lowest vertex (here: by id), if searched.
    from semirings.backend import get_backend
    from spbfs.algorithms import _ops

    g = _graph("kron8", "csr", "numpy")
    ptr, ind = _dag_by_id(g)
    found = [c for c in nx.enumerate_all_cliques(_nx(g)) if len(c) == 3]
    assert len(found) > 50
    for searched in (0, 1, 40, g.n // 2, g.n):
        want = np.zeros(g.n, np.int64)
        for c in found:
            if min(c) < searched:
                want[c] += 1
        for backend in CPU:
            got = _ops.dag_triangles(ptr, ind, g.n, get_backend(backend), rows=searched)
            np.testing.assert_array_equal(got, want, err_msg=f"{backend} rows={searched}")
        small = _ops._dag_triangles_vectorized(ptr, ind, g.n, np, chunk=5, rows=searched)
        np.testing.assert_array_equal(small, want)


@pytest.mark.parametrize("backend", CPU)
def test_triangles_ignore_loops_repeats_and_directions(backend: str) -> None:
    el = GRAPHS["kron8"]
    loops = np.arange(0, el.n, 5)
    src = np.concatenate([el.src, loops, el.dst[:40], el.src[:9]])
    dst = np.concatenate([el.dst, loops, el.src[:40], el.dst[:9]])
    plain = spbfs.Graph.from_edges(src, dst, n=el.n)
    want = _as_array(nx.triangles(_nx(plain)), el.n)  # networkx drops loops and repeats
    assert want.sum() > 0
    for directed in (False, True):
        g = spbfs.Graph.from_edges(src, dst, n=el.n, directed=directed,
                                   config=spbfs.Config(backend=backend))
        r = triangle_count(g)
        np.testing.assert_array_equal(r.per_vertex, want, err_msg=f"directed={directed}")
        assert r.total == int(want.sum()) // 3


# -- bad input common to all ---------------------------------------------------------------
def test_source_errors_name_the_argument() -> None:
    g = _graph("grid", "dcsc", "numba")
    with pytest.raises(ValueError, match=r"sources\[1\]=-1 is out of range"):
        multi_source_bfs(g, [0, -1])
    with pytest.raises(ValueError, match="sources=63 is out of range"):
        multi_source_bfs(g, 63)
    with pytest.raises(ValueError, match="sources is empty"):
        multi_source_bfs(g, [])
    with pytest.raises(TypeError, match="sources must hold integer"):
        multi_source_bfs(g, [0.5])
    with pytest.raises(ValueError, match="output must be one of"):
        multi_source_bfs(g, [0], output="dist")
    with pytest.raises(ValueError, match="max_depth must be >= 0"):
        multi_source_bfs(g, [0], max_depth=-2)
    with pytest.raises(ValueError, match="graph is empty"):
        multi_source_bfs(spbfs.Graph.from_edges([], [], n=0), [0])


def test_importing_the_algorithms_does_not_start_mpi() -> None:
    """The grid twins sit in the same modules, yet MPI waits for a process grid."""
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    code = ("import sys, spbfs.algorithms, spbfs.algorithms.distributed; "
            "print('mpi4py' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True, timeout=120)
    assert out.stdout.strip() == "False", out.stdout + out.stderr


def test_top_level_algorithms_load_on_first_use() -> None:
    """``import spbfs`` does not load the algorithms; ``spbfs.pagerank`` and the rest do."""
    root = Path(__file__).resolve().parents[1]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH")]))
    code = ("import sys, spbfs; print('spbfs.algorithms' in sys.modules); "
            "import spbfs.algorithms as a; "
            "print(' '.join(sorted(k for k in spbfs.__all__ if getattr(spbfs, k) is "
            "getattr(a, k, None)))); "
            "print(hasattr(spbfs, 'weighted_block'), hasattr(spbfs, 'no_such_algorithm'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, check=True, timeout=120)
    loaded, names, others = out.stdout.splitlines()
    assert loaded == "False", out.stdout
    assert names.split() == ["betweenness_centrality", "connected_components",
                             "multi_source_bfs", "pagerank", "sssp", "triangle_count"]
    assert others == "False False"  # only the names of spbfs.__all__ are looked up there


def test_accepts_other_graph_inputs() -> None:
    el = GRAPHS["er_directed"]
    g = spbfs.Graph.from_edgelist(el)
    a = g.to_scipy()
    r1 = connected_components(a, directed=True)
    r2 = connected_components((el.src, el.dst), directed=True)
    np.testing.assert_array_equal(r1.labels, connected_components(g).labels)
    assert r2.n_components == r1.n_components
    np.testing.assert_allclose(pagerank(_nx(g)).scores, pagerank(g).scores)


# -- the SpGEMM helper itself ---------------------------------------------------------------
@functools.cache
def _user_semiring():
    # One object: numba compiles a user semiring's kernels once per object.
    from semirings import Semiring

    return Semiring.from_callables(add=np.maximum, identity=-np.inf, mul=np.add,
                                   name="maxplus_user")


@pytest.mark.parametrize(("fmt", "backend"), CONFIGS)
@pytest.mark.parametrize("semiring", ["plus_times", "min_plus", "min_second", "any_pair", "user"])
def test_spgemm_equals_one_spmsv_per_column(semiring: str, fmt: str, backend: str) -> None:
    from semirings import SparseVector, block_from_edges, spmsv
    from spbfs.algorithms._ops import SparseColumns, spgemm

    rng = np.random.default_rng(8)
    n, k = 60, 5
    el = gen.erdos_renyi(n, m=240, seed=9, directed=True)
    values = rng.integers(1, 9, el.num_edges).astype(np.float64)
    block = block_from_edges(fmt, el.dst, el.src, (n, n), values=values, backend=backend)
    if semiring == "user":
        semiring = _user_semiring()
    cols = [np.sort(rng.choice(n, size=c, replace=False)) for c in (0, 1, 4, 9, 30)]
    ptr = np.zeros(k + 1, np.int64)
    ptr[1:] = np.cumsum([c.size for c in cols])
    ind = np.concatenate(cols).astype(np.int64)
    val = rng.random(ind.size)
    mask = rng.random((k, n)) < 0.5
    xp = block.backend.xp
    x = SparseColumns(xp.asarray(ptr), xp.asarray(ind), xp.asarray(val), n)
    for m, comp in ((None, False), (mask, False), (mask, True)):
        c = spgemm(block, x, semiring, mask=None if m is None else xp.asarray(m),
                   complement=comp)
        to_host = block.backend.to_host
        cptr, cind, cval = to_host(c.ptr), to_host(c.ind), to_host(c.val)
        for s in range(k):
            lo, hi = ptr[s], ptr[s + 1]
            y = spmsv(block, SparseVector(xp.asarray(ind[lo:hi]), xp.asarray(val[lo:hi]), n),
                      semiring, mask=None if m is None else xp.asarray(m[s]),
                      complement=comp)
            np.testing.assert_array_equal(cind[cptr[s]:cptr[s + 1]], to_host(y.indices))
            if semiring != "any_pair":
                np.testing.assert_allclose(cval[cptr[s]:cptr[s + 1]], to_host(y.values))


def test_unweighted_algorithms_ignore_networkx_weights_and_take_a_config_mapping():
    nx = pytest.importorskip("networkx")
    from spbfs.algorithms import betweenness_centrality, connected_components, pagerank

    G = nx.Graph()
    G.add_edge("a", "b", weight="heavy")
    G.add_edge("b", "c", weight="light")
    cc = connected_components(G, config={"format": "dcsc"})
    assert cc.n_components == 1
    assert betweenness_centrality(G, normalized=False).tolist() == [0.0, 1.0, 0.0]
    with pytest.raises(TypeError, match="weight"):
        pagerank(G)  # PageRank reads weights: a non-numeric one is still refused
    with pytest.raises(ValueError, match="formt"):
        connected_components(G, config={"formt": "dcsc"})


def test_graph_load_passes_n_to_insist_on_a_declared_size(tmp_path, monkeypatch):
    # The sparse-ids rule's floor lowered: a declared size past it, without a graph of
    # 2**26 vertices to build (the rule itself: tests/test_io.py).
    monkeypatch.setattr(spbfs.edges, "SPARSE_IDS_MIN", 1 << 10)
    path = tmp_path / "big.mtx"
    path.write_text("%%MatrixMarket matrix coordinate pattern general\n"
                    f"{2**12} {2**12} 1\n1 2\n")
    with pytest.raises(ValueError, match="pass n=4096"):
        spbfs.Graph.load(path)
    assert spbfs.Graph.load(path, n=2**12).n == 2**12


# -- strong components ----------------------------------------------------------------
@pytest.mark.parametrize(("fmt", "backend"), CONFIGS)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_strong_components_match_scipy(name: str, fmt: str, backend: str) -> None:
    g = _graph(name, fmt, backend)
    r = connected_components(g, connection="strong")
    count, labels = sp_components(g.to_scipy(), directed=True,
                                  connection="strong" if g.directed else "weak")
    assert r.n_components == count
    # The same partition as scipy's, numbered by each component's smallest vertex.
    pairs = np.unique(np.stack([r.labels, labels]), axis=1)
    assert pairs.shape[1] == count and np.unique(pairs[1]).size == count
    np.testing.assert_array_equal(r.roots[r.roots], r.roots)
    first = np.full(count, g.n)
    np.minimum.at(first, r.labels, np.arange(g.n))
    np.testing.assert_array_equal(r.roots, first[r.labels])
    assert (np.diff(first) > 0).all()


def test_strong_components_of_a_real_directed_graph_match_networkx(data_dir) -> None:
    el = read_graph(data_dir / "p2p-Gnutella31.txt")
    for fmt in FORMATS:
        g = spbfs.Graph.from_edgelist(el, directed=True,
                                      config=spbfs.Config(format=fmt, backend="numba"))
        r = connected_components(g, connection="strong")
        assert r.n_components > 1
        want = {frozenset(c) for c in nx.strongly_connected_components(_nx(g))}
        got = {frozenset(np.flatnonzero(r.labels == k).tolist()) for k in range(r.n_components)}
        assert got == want, fmt


def test_components_connection_is_checked() -> None:
    g = spbfs.Graph.from_edges([0], [1], n=2, directed=True)
    with pytest.raises(ValueError, match="connection must be 'weak' or 'strong', got 'Strong'"):
        connected_components(g, connection="Strong")
    r = connected_components(spbfs.Graph.from_edges([], [], n=0, directed=True),
                             connection="strong")
    assert r.n_components == 0 and r.labels.size == 0


def test_strong_components_of_a_long_cycle_and_a_long_path() -> None:
    # 200,000 levels deep: the searches keep their own stacks, no recursion.
    n = 200_000
    rng = np.random.default_rng(3)
    ids = rng.permutation(n)
    cycle = spbfs.Graph.from_edges(ids, np.roll(ids, -1), n=n, directed=True)
    r = connected_components(cycle, connection="strong")
    assert r.n_components == 1 and not r.roots.any()
    chain = spbfs.Graph.from_edges(ids[:-1], ids[1:], n=n, directed=True)
    r = connected_components(chain, connection="strong")
    assert r.n_components == n and (r.roots == np.arange(n)).all()
    assert connected_components(chain).n_components == 1


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", ["kron8", "er_directed", "disconnected"])
def test_sssp_methods_agree_with_scipy(name: str, fmt: str) -> None:
    """Delta-stepping (any bucket width) and Bellman-Ford give scipy's distances."""
    g = _graph(name, fmt, "numba")
    w = _weights(GRAPHS[name], 11, g.directed)
    from spbfs.algorithms.shortest_paths import weighted_block

    block = weighted_block(g, w)
    for source in (0, g.n // 2):
        ref = shortest_path(w, directed=g.directed, indices=source)
        for method, delta in (("auto", None), ("delta-stepping", 0.1), ("delta-stepping", 50.0),
                              ("bellman-ford", None)):
            r = sssp(g, source, weights=w, method=method, delta=delta)
            np.testing.assert_allclose(r.distances, ref, err_msg=f"{method} {delta}")
            r = sssp(g, source, weights=block, method=method, delta=delta)  # dcsc or csr block
            np.testing.assert_allclose(r.distances, ref, err_msg=f"block {method} {delta}")
        bf = sssp(g, source, weights=w, method="bellman-ford")
        ds = sssp(g, source, weights=w)
        assert bf.rounds >= 1 and ds.rounds >= 1


def test_sssp_method_errors() -> None:
    g = _graph("grid", "csr", "numba")
    with pytest.raises(ValueError, match="method must be one of 'auto'"):
        sssp(g, 0, method="dijkstra")
    with pytest.raises(ValueError, match="method='delta-stepping' runs without max_rounds"):
        sssp(g, 0, method="delta-stepping", max_rounds=3)
    with pytest.raises(ValueError, match="delta must be a positive finite bucket width"):
        sssp(g, 0, weights=_weights(GRAPHS["grid"], 1, False), delta=0.0)
    # max_rounds keeps Bellman-Ford's rounds: upper bounds after one round
    w = _weights(GRAPHS["grid"], 1, False)
    one = sssp(g, 0, weights=w, max_rounds=1)
    assert one.rounds == 1 and np.all(one.distances >= sssp(g, 0, weights=w).distances)


@pytest.mark.parametrize("seed", range(4))
def test_sssp_negative_weights_as_scipy(seed: int) -> None:
    """Negative weights run Bellman-Ford: scipy's distances, or its NegativeCycleError."""
    rng = np.random.default_rng(seed)
    n = 40
    src, dst = rng.integers(0, n, 120), rng.integers(0, n, 120)
    keep = src != dst
    src, dst = src[keep], dst[keep]
    # a DAG (src < dst) with some negative arcs has no negative cycle
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    w = rng.uniform(-2.0, 10.0, lo.size)
    dag = sp.coo_matrix((w, (lo, hi)), shape=(n, n)).tocsr()
    for s in (0, 3):
        want = bellman_ford(dag, directed=True, indices=s)
        r = sssp(dag, s, directed=True)
        np.testing.assert_allclose(r.distances, want)
        np.testing.assert_allclose(sssp(dag, s, directed=True, method="bellman-ford",
                                        config={"format": "dcsc"}).distances, want)
    with pytest.raises(ValueError, match="method='delta-stepping' needs non-negative weights"):
        sssp(dag, 0, directed=True, method="delta-stepping")
    # a back arc closing a negative cycle reached from 0
    cyc = sp.csr_matrix(([1.0, 1.0, -5.0], ([0, 1, 2], [1, 2, 1])), shape=(n, n))
    with pytest.raises(NegativeCycleError, match="Negative cycle detected on node"):
        bellman_ford(cyc, directed=True, indices=0)
    with pytest.raises(NegativeCycleError, match="Negative cycle detected on node"):
        sssp(cyc, 0, directed=True)
    np.testing.assert_allclose(sssp(cyc, 3, directed=True).distances,  # unreached from 3
                               bellman_ford(cyc, directed=True, indices=3))
    loop = sp.csr_matrix(([1.0, -1.0], ([0, 1], [1, 1])), shape=(3, 3))
    with pytest.raises(NegativeCycleError, match="self-loop"):
        sssp(loop, 0, directed=True)
    np.testing.assert_allclose(sssp(loop, 2, directed=True).distances,
                               bellman_ford(loop, directed=True, indices=2))


# -- compiled loops: stopping rules, parallel chunks, long searches ---------------------------
def _power_iteration(a: sp.csr_matrix, alpha: float, tol: float) -> tuple[np.ndarray, int]:
    """PageRank to an L1 change of at most ``tol``, the loop written with scipy."""
    n = a.shape[0]
    deg = np.asarray(a.sum(axis=1)).ravel()
    inv = np.where(deg == 0, 0.0, 1.0 / np.where(deg == 0, 1.0, deg))
    at = a.T.tocsr()
    x = np.full(n, 1.0 / n)
    for it in range(1, 10_000):
        new = alpha * (at @ (x * inv) + x[deg == 0].sum() / n) + (1.0 - alpha) / n
        err = np.abs(new - x).sum()
        x = new
        if err <= tol:
            return x, it
    raise AssertionError("no convergence")


@pytest.mark.parametrize(("fmt", "backend"), CONFIGS)
@pytest.mark.parametrize("name", ["kron8", "er_directed", "disconnected"])
def test_pagerank_l1_stop_matches_a_power_iteration(name: str, fmt: str, backend: str) -> None:
    g = _graph(name, fmt, backend)
    a = g.to_scipy().astype(np.float64)
    ref, iterations = _power_iteration(a, 0.85, 1e-12)
    r = pagerank(g, tol=1e-12, stop="l1", max_iter=10_000)
    assert r.converged and r.iterations == iterations
    np.testing.assert_allclose(r.scores, ref, rtol=1e-12, atol=1e-15)
    # networkx's rule stops n times earlier in L1 change: fewer iterations, still close.
    loose = pagerank(g, tol=1e-12, max_iter=10_000)
    assert loose.iterations <= r.iterations
    np.testing.assert_allclose(loose.scores, ref, atol=1e-9)
    with pytest.raises(ValueError, match="stop must be one of networkx, l1; got 'l2'"):
        pagerank(g, stop="l2")


def test_pagerank_parallel_chunks_give_the_one_thread_result(monkeypatch) -> None:
    from spbfs.algorithms import ranking

    g = spbfs.Graph.from_edgelist(GRAPHS["er_directed"], config=spbfs.Config(threads=2))
    one = pagerank(g, tol=1e-12, stop="l1", max_iter=10_000)
    monkeypatch.setattr(ranking, "_PARALLEL_EDGES", 1)  # every graph cut into thread chunks
    two = pagerank(g, tol=1e-12, stop="l1", max_iter=10_000)
    assert two.iterations == one.iterations
    np.testing.assert_allclose(two.scores, one.scores, rtol=1e-13)



def test_pagerank_bits_do_not_depend_on_the_thread_count(monkeypatch) -> None:
    """On a graph that may run in parallel, one thread (a busy machine's count) and two
    add an iteration's sums over the same vertex ranges in the same order: same bits."""
    from spbfs.algorithms import ranking

    monkeypatch.setattr(ranking, "_PARALLEL_EDGES", 1)
    el = GRAPHS["er_directed"]  # dangling vertices: their rank is one of the sums
    out = [pagerank(spbfs.Graph.from_edgelist(el, config=spbfs.Config(threads=t)),
                    tol=1e-12, stop="l1", max_iter=10_000) for t in (1, 2)]
    assert out[0].iterations == out[1].iterations
    np.testing.assert_array_equal(out[0].scores, out[1].scores)

@pytest.mark.parametrize("directed", [False, True])
def test_weighted_pagerank_compiled_matches_networkx(directed: bool) -> None:
    G = nx.gnp_random_graph(80, 0.06, seed=4, directed=directed)
    G.add_nodes_from(range(80, 84))  # isolated, dangling
    for u, v in G.edges:
        G[u][v]["weight"] = 1.0 + (3 * u + v) % 4
    r = pagerank(G, tol=1e-12, max_iter=1000, config={"backend": "numba"})
    ref = nx.pagerank(G, tol=1e-12, max_iter=1000, weight="weight")
    np.testing.assert_allclose(r.scores, [ref[v] for v in G.nodes], atol=1e-10)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("share", [0.0, 1e9])  # every level pulls / every level pushes
def test_msbfs_long_path_in_either_direction(fmt: str, share: float, monkeypatch) -> None:
    from spbfs.algorithms import _ops

    monkeypatch.setattr(_ops, "PUSH_SHARE", share)
    p = gen.path(1500)
    el = EdgeList(p.src, p.dst, 1503, directed=True)  # a 1499-level chain, 3 isolated
    g = spbfs.Graph.from_edgelist(el, config=spbfs.Config(format=fmt, backend="numba"))
    sources = np.array([0, 700, 1501, 0, *range(3, 140, 2)])  # > 64: two words
    r = multi_source_bfs(g, sources)
    ref = shortest_path(g.to_scipy(), directed=True, unweighted=True, indices=sources)
    np.testing.assert_array_equal(np.where(r.levels < 0, np.inf, r.levels), ref)
    assert r.depth == 1499
    for i in (0, 1, 2, 40):
        np.testing.assert_array_equal(r.parents[i], spbfs.bfs(g, int(sources[i])).parents)
    # Levels only on so deep a graph: one queue per source (DEEP_LEVELS), same answer.
    levels = multi_source_bfs(g, sources, output="levels")
    np.testing.assert_array_equal(levels.levels, r.levels)
    assert levels.depth == 1499
    cut = multi_source_bfs(g, sources, output="levels", max_depth=600)
    assert cut.depth == 600
    np.testing.assert_array_equal(cut.levels, np.where(r.levels <= 600, r.levels, -1))
    back = multi_source_bfs(g, [1499, 3, 1501], output="levels", reverse=True)
    ref = shortest_path(g.to_scipy().T, directed=True, unweighted=True, indices=[1499, 3, 1501])
    np.testing.assert_array_equal(np.where(back.levels < 0, np.inf, back.levels), ref)


@pytest.mark.parametrize("fmt", FORMATS)
def test_betweenness_compiled_on_many_threads_matches_networkx(fmt: str) -> None:
    el = GRAPHS["er_sparse_directed"]
    g = spbfs.Graph.from_edgelist(el, config=spbfs.Config(format=fmt, backend="numba",
                                                           threads=2))
    G = _nx(g)
    src = [0, 5, 7, 19, 33, 60, 61, 119]  # more sources than chunks
    ours = betweenness_centrality(g, sources=src, normalized=False)
    raw = {v: 0.0 for v in G}
    for s in src:  # networkx's dependency sums, one source at a time
        sub = nx.betweenness_centrality_subset(G, [s], list(G), normalized=False)
        for v, x in sub.items():
            raw[v] += x
    scale = (g.n - 1) / len(src)
    want = np.array([raw[v] * (scale if v not in src else (g.n - 1) / (len(src) - 1))
                     for v in range(g.n)])
    np.testing.assert_allclose(ours, want, rtol=1e-12, atol=1e-12)



def test_betweenness_bits_do_not_depend_on_the_thread_count() -> None:
    """The sources' chunks are fixed per machine, not by the count a search runs on
    (which the load picks where none is given): one thread and two give the same bits."""
    g = spbfs.datasets.karate()  # fractional dependencies: the order of the sums shows
    src = list(range(8))
    out = [betweenness_centrality(g.with_config(g.config.replace(backend="numba", threads=t)),
                                  sources=src) for t in (1, 2)]
    np.testing.assert_array_equal(out[0], out[1])

@pytest.mark.parametrize("backend", CPU)
def test_betweenness_path_counts_past_float64(backend: str) -> None:
    # A chain of 1100 diamonds c_{i-1} -> {a_i, b_i} -> c_i: 2^1100 shortest paths from c_0
    # to the end, past float64's range. From c_0 every path crosses each c_i (dependency:
    # the 3 (L - i) vertices beyond it) and half of them cross a_i (half of 1 + 3 (L - i)).
    chain = 1100
    i = np.arange(1, chain + 1)
    c_prev, a, b, c = 3 * (i - 1), 3 * i - 2, 3 * i - 1, 3 * i
    src = np.concatenate([c_prev, c_prev, a, b])
    dst = np.concatenate([a, b, c, c])
    n = 3 * chain + 1
    g = spbfs.Graph.from_edges(src, dst, n=n, directed=True,
                               config=spbfs.Config(backend=backend))
    raw = betweenness_centrality(g, sources=[0], normalized=False) / (n - 1)  # k = 1 scaling
    assert np.isfinite(raw[1:]).all()
    np.testing.assert_allclose(raw[c], 3.0 * (chain - i), rtol=1e-12)
    np.testing.assert_allclose(raw[a], (1 + 3.0 * (chain - i)) / 2, rtol=1e-12)
    np.testing.assert_allclose(raw[b], raw[a], rtol=1e-12)


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("name", list(GRAPHS))
def test_array_loops_give_the_compiled_results(name: str, fmt: str) -> None:
    """The numpy backend's loops (spbfs.algorithms.operations) give the numba kernels' results."""
    el = GRAPHS[name]
    ref = spbfs.Graph.from_edgelist(el, config=spbfs.Config(backend="numba"))
    g = _graph(name, fmt, "numpy")
    a, b = pagerank(g, tol=1e-10), pagerank(ref, tol=1e-10)
    np.testing.assert_allclose(a.scores, b.scores, rtol=1e-9, atol=1e-15)
    assert a.iterations == b.iterations
    a, b = connected_components(g), connected_components(ref)
    assert np.array_equal(a.labels, b.labels) and np.array_equal(a.roots, b.roots)
    assert 1 <= a.rounds <= 2 * max(g.n, 2).bit_length() + 2  # FastSV: O(log n) rounds
    n = g.n
    w = _weights(el, 3, g.directed)
    for s in (0, n - 1):
        # The loop of products (delta-stepping as masked products) against the compiled one.
        block = weighted_block(g, w)
        ops = LocalOps(g)
        want = sssp(ref, s, weights=w)
        for delta in (None, 0.5):  # one bucket per weight span; narrow ones, heavy edges
            dist, buckets = delta_stepping(ops, s, block, bucket_width(ops, block, delta))
            assert np.array_equal(dist, want.distances), delta
            assert buckets >= 1
    srcs = [0, n - 1, 2, 0]
    for kw in ({}, {"output": "levels"}, {"reverse": True, "max_depth": 2}):
        a, b = multi_source_bfs(g, srcs, **kw), multi_source_bfs(ref, srcs, **kw)
        for attr in ("levels", "parents"):
            x, y = getattr(a, attr), getattr(b, attr)
            assert (x is None) == (y is None) and (x is None or np.array_equal(x, y)), (kw, attr)
        assert a.depth == b.depth
    np.testing.assert_allclose(betweenness_centrality(g, batch_size=7),
                               betweenness_centrality(ref), rtol=1e-9, atol=1e-12)
    assert np.array_equal(triangle_count(g).per_vertex, triangle_count(ref).per_vertex)
