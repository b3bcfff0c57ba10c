"""Traversals over any semiring on one process: ``spbfs.bfs(g, s, semiring=...)``.

Shortest-path counts (``plus_second``) against networkx and a brute-force count,
user semirings (``Semiring.from_callables``) against a plain Python traversal,
the dispatch of ``min_second`` / ``any_pair`` to the fused kernels, the stops,
the edge counts, and the argument errors.
"""

from __future__ import annotations

import functools
import importlib
from collections import deque

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from conftest import CPU_BACKENDS, DIRECTIONS, FORMATS

import spbfs
from semirings import Semiring
from semirings import semiring as sr
from spbfs import generators as gen
from spbfs.direction import BOTTOM_UP, TOP_DOWN
from spbfs.edges import EdgeList
from spbfs.search.semiring_engine import merge_duplicates, traversal_policy, value_dtype

BIG = np.iinfo(np.int64).max

# User semirings, made once: the numba backend compiles their kernels per object.
#: min over the frontier's values, plus one: the levels again (plus the source's value).
MIN_PLUS1 = Semiring.from_callables(add=lambda a, b: min(a, b), identity=BIG,
                                    mul=lambda a, b: b + 1, name="min_plus1", vectorize=True)
P = 1_000_003
#: Path counts modulo a prime: a monoid no built-in has (merged, never compiled here).
PLUS_MOD = Semiring.from_callables(add=lambda a, b: (a + b) % P, identity=0,
                                   mul=lambda a, b: b, name="plus_mod", vectorize=True)
#: A product over the frontier of (value + 1), modulo P: values differ within a level.
TIMES_INC = Semiring.from_callables(add=lambda a, b: (a * b) % P, identity=1,
                                    mul=lambda a, b: (b + 1) % P, name="times_inc",
                                    vectorize=True)
USER = {"min_plus1": (MIN_PLUS1, min, BIG, lambda b: b + 1),
        "times_inc": (TIMES_INC, lambda a, b: (a * b) % P, 1, lambda b: (b + 1) % P)}


# ----------------------------------------------------------------------------- references


def _adjacency(g: spbfs.Graph, reverse: bool = False) -> sp.csr_matrix:
    """``A[u, v] != 0`` for the arcs ``u -> v`` the search follows, as ``g`` stores them."""
    a = g.to_scipy().tocsr()
    return a.T.tocsr() if reverse else a


def _bfs_levels(a: sp.csr_matrix, source: int) -> np.ndarray:
    levels = np.full(a.shape[0], -1, dtype=np.int64)
    levels[source] = 0
    queue = deque([source])
    while queue:
        u = queue.popleft()
        for v in a.indices[a.indptr[u]:a.indptr[u + 1]]:
            if levels[v] < 0:
                levels[v] = levels[u] + 1
                queue.append(v)
    return levels


def reference(a: sp.csr_matrix, source: int, add, identity, mul, source_value=1) -> tuple:
    """Levels and values of a traversal: ``value[v] = add`` over the in-neighbours a level up."""
    levels = _bfs_levels(a, source)
    values = np.full(a.shape[0], identity, dtype=object)
    values[source] = source_value
    at = a.T.tocsr()  # row v: the in-neighbours of v
    for v in np.argsort(levels, kind="stable"):
        if levels[v] <= 0:
            continue
        ins = [u for u in at.indices[at.indptr[v]:at.indptr[v + 1]]
               if levels[u] == levels[v] - 1]
        values[v] = functools.reduce(add, [mul(values[u]) for u in ins])
    return levels, values


def path_counts(a: sp.csr_matrix, source: int) -> np.ndarray:
    """Brute force: the number of shortest paths from ``source`` to every vertex."""
    _, values = reference(a, source, lambda x, y: x + y, 0, lambda b: b)
    return values.astype(np.int64)


def nx_path_counts(G: nx.Graph, source: int, targets) -> list[int]:
    return [len(list(nx.all_shortest_paths(G, source, t))) if nx.has_path(G, source, t) else 0
            for t in targets]


def _graph(el: EdgeList, directed: bool, fmt: str = "csr", backend: str = "numba",
           **kw) -> spbfs.Graph:
    cfg = spbfs.Config(format=fmt, backend=backend, **kw)
    return spbfs.Graph.from_edgelist(el, directed=directed, config=cfg)


KRON = gen.kronecker(8, 8, seed=1)
LATTICE = gen.grid2d(7, 6)
ER_DIRECTED = gen.erdos_renyi(150, m=600, seed=4, directed=True)

CASES = [pytest.param(fmt, be, d, id=f"{fmt}-{be}-{d}")
         for fmt in FORMATS for be in CPU_BACKENDS for d in DIRECTIONS]
#: The lattice also on a GPU (cupy: the vectorized kernels on the device; skipped without one).
GPU_CASES = [pytest.param(fmt, "cupy", d, id=f"{fmt}-cupy-{d}", marks=pytest.mark.gpu)
             for fmt in FORMATS for d in DIRECTIONS]


# ----------------------------------------------------------------------------- path counts


@pytest.mark.parametrize(("fmt", "backend", "direction"), CASES + GPU_CASES)
def test_path_counts_on_a_lattice_match_networkx(fmt, backend, direction):
    g = _graph(LATTICE, False, fmt, backend)
    G = nx.Graph(list(zip(LATTICE.src.tolist(), LATTICE.dst.tolist(), strict=True)))
    for source in (0, 17):
        r = spbfs.bfs(g, source, semiring="plus_second", direction=direction)
        assert r.parents is None and r.values.dtype == np.int64
        assert r.values.tolist() == nx_path_counts(G, source, range(g.n))
        assert r.levels.tolist() == [nx.shortest_path_length(G, source, t) for t in range(g.n)]
    # The corner-to-corner count of a 7 x 6 lattice is C(11, 5).
    assert spbfs.bfs(g, 0, semiring="plus_second").values[-1] == 462


@pytest.mark.parametrize(("fmt", "backend", "direction"), CASES)
@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_path_counts_on_kronecker(fmt, backend, direction, directed):
    g = _graph(KRON, directed, fmt, backend)
    a = _adjacency(g)
    deg = np.asarray(a.sum(axis=1)).ravel()
    for source in (int(np.argmax(deg)), 5):
        r = spbfs.bfs(g, source, semiring="plus_second", direction=direction)
        np.testing.assert_array_equal(r.levels, _bfs_levels(a, source))
        np.testing.assert_array_equal(r.values, path_counts(a, source))
        fast = spbfs.bfs(g, source, direction=direction)
        np.testing.assert_array_equal(r.levels, fast.levels)


def test_brute_force_counts_agree_with_networkx():
    """The reference itself, on graphs with many shortest paths, directed and not."""
    for el, directed in ((KRON, False), (ER_DIRECTED, True)):
        g = _graph(el, directed)
        a = _adjacency(g)
        G = nx.from_scipy_sparse_array(a, create_using=nx.DiGraph if directed else nx.Graph)
        G.remove_edges_from(nx.selfloop_edges(G))
        source = int(np.argmax(np.asarray(a.sum(axis=1)).ravel()))
        targets = np.random.default_rng(0).choice(g.n, 25, replace=False)
        want = nx_path_counts(G, source, targets)
        assert path_counts(a, source)[targets].tolist() == want
        assert spbfs.bfs(g, source, semiring="plus_second").values[targets].tolist() == want
        assert max(want) > 3  # paths do multiply here


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_directed_counts_and_reverse(backend):
    g = _graph(ER_DIRECTED, True, "dcsc", backend)
    G = nx.DiGraph(list(zip(ER_DIRECTED.src.tolist(), ER_DIRECTED.dst.tolist(), strict=True)))
    G.add_nodes_from(range(g.n))
    r = spbfs.bfs(g, 3, semiring="plus_second")
    assert r.values.tolist() == nx_path_counts(G, 3, range(g.n))
    back = spbfs.bfs(g, 3, semiring="plus_second", reverse=True)
    assert back.values.tolist() == nx_path_counts(G.reverse(), 3, range(g.n))
    assert not np.array_equal(back.values, r.values)


def test_plus_times_on_the_pattern_counts_paths_too():
    g = _graph(KRON, False, "csr")
    a = spbfs.bfs(g, 1, semiring=sr.plus_times)
    b = spbfs.bfs(g, 1, semiring="plus_second")
    np.testing.assert_array_equal(a.values, b.values)
    np.testing.assert_array_equal(a.levels, b.levels)


def test_source_value_scales_the_counts_and_sets_the_dtype():
    g = _graph(LATTICE, False)
    ones = spbfs.bfs(g, 0, semiring="plus_second").values
    r = spbfs.bfs(g, 0, semiring="plus_second", source_value=2.5)
    assert r.values.dtype == np.float64
    np.testing.assert_array_equal(r.values, 2.5 * ones)
    r = spbfs.bfs(g, 0, semiring="plus_second", source_value=np.int32(3))
    assert r.values.dtype == np.int64
    np.testing.assert_array_equal(r.values, 3 * ones)


# ----------------------------------------------------------------------------- user semirings


@pytest.mark.parametrize("name", list(USER))
@pytest.mark.parametrize("backend", CPU_BACKENDS)
@pytest.mark.parametrize("direction", DIRECTIONS)
def test_user_semiring_matches_a_python_traversal(name, backend, direction):
    s, add, identity, mul = USER[name]
    for el, directed, fmt in ((KRON, False, "dcsc"), (ER_DIRECTED, True, "csr")):
        g = _graph(el, directed, fmt, backend)
        a = _adjacency(g)
        source = int(np.argmax(np.asarray(a.sum(axis=1)).ravel()))
        r = spbfs.bfs(g, source, semiring=s, source_value=4, direction=direction)
        levels, values = reference(a, source, add, identity, mul, source_value=4)
        np.testing.assert_array_equal(r.levels, levels)
        assert r.values.tolist() == values.tolist()
        if name == "min_plus1":  # min over the frontier + 1: the level, plus 4
            np.testing.assert_array_equal(r.values[levels >= 0], levels[levels >= 0] + 4)
        if name == "times_inc":  # the values differ within a level
            assert len(set(r.values[levels == 2].tolist())) > 1


def test_user_semiring_without_a_vectorized_form():
    """numba compiles plain callables; numpy refuses them before the search, naming them."""
    s = Semiring.from_callables(add=lambda a, b: max(a, b), identity=-1,
                                mul=lambda a, b: 2 * b, name="max_double")
    g = _graph(LATTICE, False, backend="numba")
    r = spbfs.bfs(g, 0, semiring=s)
    np.testing.assert_array_equal(r.values, 2 ** r.levels)
    with pytest.raises(TypeError, match=r"max_double.*no vectorized form"):
        spbfs.bfs(_graph(LATTICE, False, backend="numpy"), 0, semiring=s)


# ----------------------------------------------------------------------------- the fast path


def test_min_second_and_any_pair_run_the_fused_kernels(monkeypatch):
    bfs_module = importlib.import_module("spbfs.bfs")

    def no_generic(*args, **kwargs):
        raise AssertionError("the generic engine ran")

    monkeypatch.setattr(bfs_module, "semiring_search", no_generic)
    g = _graph(KRON, False)
    base = spbfs.bfs(g, 7)
    for s in ("min_second", sr.min_second, Semiring("min", "second")):
        r = spbfs.bfs(g, 7, semiring=s)
        np.testing.assert_array_equal(r.parents, base.parents)
        np.testing.assert_array_equal(r.levels, base.levels)
        assert r.values is None
    r = spbfs.bfs(g, 7, semiring="any_pair")
    assert r.parents is None and r.values is None and r.config.output == "levels"
    np.testing.assert_array_equal(r.levels, base.levels)
    # The fused bottom-up stops at a parent: the same edge counts as min_second's.
    np.testing.assert_array_equal(r.stats.edges, base.stats.edges)
    r = spbfs.bfs(g, 7, semiring=Semiring("any", "pair"), output="levels")
    np.testing.assert_array_equal(r.levels, base.levels)
    with pytest.raises(AssertionError, match="generic engine"):
        spbfs.bfs(g, 7, semiring="plus_second")


def test_any_pair_refuses_parents_naming_both_arguments():
    g = _graph(LATTICE, False)
    for output in ("parents", "both"):
        with pytest.raises(ValueError, match=rf"semiring='any_pair'.*output='{output}'"):
            spbfs.bfs(g, 0, semiring="any_pair", output=output)
    cfg = g.config.replace(output="parents")
    with pytest.raises(ValueError, match=r"any_pair.*config's output='parents'"):
        spbfs.bfs(g, 0, semiring="any_pair", config=cfg)
    with pytest.raises(ValueError, match=r"plus_second.*output='parents'"):
        spbfs.bfs(g, 0, semiring="plus_second", output="parents")


def test_bad_semiring_arguments():
    g = _graph(LATTICE, False)
    with pytest.raises(ValueError, match=r"unknown semiring 'plus_secnd'.*'plus_second'"):
        spbfs.bfs(g, 0, semiring="plus_secnd")
    with pytest.raises(TypeError, match="semiring must be a Semiring or a name"):
        spbfs.bfs(g, 0, semiring=3)
    with pytest.raises(TypeError, match="source_value must be a real number"):
        spbfs.bfs(g, 0, semiring="plus_second", source_value="1")
    with pytest.raises(ValueError, match=r"source_value=2 is for semirings.*vertex ids"):
        spbfs.bfs(g, 0, source_value=2)
    with pytest.raises(ValueError, match=r"source_value=2 is for semirings.*no values"):
        spbfs.bfs(g, 0, semiring="any_pair", output="levels", source_value=2)
    with pytest.raises(TypeError, match="source_value must be a real number, got complex"):
        spbfs.bfs(g, 0, semiring="plus_second", source_value=1 + 2j)
    # The shared checks: the same words as the fast path.
    with pytest.raises(ValueError, match="source=99 is out of range"):
        spbfs.bfs(g, 99, semiring="plus_second")
    with pytest.raises(ValueError, match="max_depth must be >= 0"):
        spbfs.bfs(g, 0, semiring="plus_second", max_depth=-1)


# ----------------------------------------------------------------------------- stops, counts


@pytest.mark.parametrize("backend", CPU_BACKENDS)
def test_max_depth_target_and_unreached_values(backend):
    el = EdgeList(np.array([0, 1, 2, 5]), np.array([1, 2, 3, 6]), 7)  # 4 isolated from 5-6
    g = _graph(el, False, "dcsc", backend)
    r = spbfs.bfs(g, 0, semiring="plus_second", max_depth=2)
    assert r.stopped == "max_depth" and len(r.stats) == 2
    assert r.levels.tolist() == [0, 1, 2, -1, -1, -1, -1]
    assert r.values.tolist() == [1, 1, 1, 0, 0, 0, 0]  # unreached: plus's identity
    r = spbfs.bfs(g, 0, semiring="plus_second", target=2)
    assert r.stopped == "target" and r.levels[3] == -1
    r = spbfs.bfs(g, 0, semiring="plus_second", target=0)
    assert r.stopped == "target" and len(r.stats) == 0
    r = spbfs.bfs(g, 0, semiring=MIN_PLUS1, source_value=0)
    assert r.values.tolist() == [0, 1, 2, 3, BIG, BIG, BIG]  # unreached: min's identity
    assert r.stopped == "exhausted"


@pytest.mark.parametrize("direction", ["top-down", "bottom-up"])
@pytest.mark.parametrize("directed", [False, True], ids=["undirected", "directed"])
def test_edges_scanned_are_the_frontier_or_unvisited_degrees(direction, directed):
    """Push: out-edges of the frontier; pull: in-edges of the vertices not yet visited."""
    g = _graph(KRON, directed, "csr")
    r = spbfs.bfs(g, 9, semiring="plus_second", direction=direction)
    out_deg, in_deg = np.asarray(g.out_degree), np.asarray(g.in_degree)
    want = []
    for k in range(len(r.stats)):
        if direction == "top-down":
            want.append(int(out_deg[r.levels == k].sum()))
        else:
            want.append(int(in_deg[(r.levels < 0) | (r.levels > k)].sum()))
    assert r.stats.edges.tolist() == want
    assert r.stats.direction.tolist() == [TOP_DOWN if direction == "top-down" else BOTTOM_UP
                                          ] * len(r.stats)
    # The last level finds nothing and ends the search.
    assert r.stats.discovered.tolist() == [int(np.count_nonzero(r.levels == k + 1))
                                           for k in range(len(r.stats))]
    assert r.stats.discovered[-1] == 0


def test_policy_caps_alpha_unless_the_monoid_is_any():
    cfg = spbfs.Config()
    i64 = np.dtype(np.int64)
    assert traversal_policy(cfg, sr.plus_second, i64).alpha == 1.0
    assert traversal_policy(cfg, MIN_PLUS1, i64).alpha == 1.0  # no terminal was given
    assert traversal_policy(cfg, sr.min_plus, i64).alpha == 1.0  # min's terminal: rare
    assert traversal_policy(cfg, sr.any_second, i64).alpha == cfg.alpha
    forced = traversal_policy(cfg.replace(direction="bottom-up"), sr.plus_second, i64)
    assert forced.mode == "bottom-up"


def test_value_dtype():
    b = np.dtype(np.bool_)
    assert value_dtype(sr.plus_second, b, 1) == np.int64
    assert value_dtype(sr.plus_second, b, True) == np.int64
    assert value_dtype(sr.plus_second, b, np.float32(1)) == np.float64
    assert value_dtype(sr.lor_second, b, 1) == np.int64  # lor gives bool, kept as int64


@pytest.mark.parametrize("s", [sr.plus_second, sr.min_second, sr.any_second, PLUS_MOD],
                         ids=lambda s: s.name)
def test_merge_duplicates(s):
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 20, 200)
    vals = rng.integers(0, 1000, 200)
    got_ids, got = merge_duplicates(ids, vals, s.add, np.dtype(np.int64))
    assert got_ids.tolist() == sorted(set(ids.tolist()))
    for i, v in zip(got_ids.tolist(), got.tolist(), strict=True):
        group = vals[ids == i].tolist()
        if s is sr.any_second:
            assert v in group
        else:
            assert v == functools.reduce(s.add.op, group)


def test_save_writes_the_values(tmp_path):
    g = _graph(LATTICE, False)
    r = spbfs.bfs(g, 0, semiring="plus_second")
    r.save(tmp_path / "r.npz")
    with np.load(tmp_path / "r.npz") as f:
        assert "parents" not in f
        np.testing.assert_array_equal(f["values"], r.values)
