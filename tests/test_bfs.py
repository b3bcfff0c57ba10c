"""One-process BFS: levels against scipy, parents by Graph500 rules, options, errors."""

from __future__ import annotations

import os
import subprocess
import sys

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp
from conftest import BACKENDS, DIRECTIONS, FORMATS

import spbfs
from spbfs import generators as gen
from spbfs.edges import EdgeList
from spbfs.io import read_graph
from spbfs.validate import reference_levels, validate_bfs_tree


def _check(edges: EdgeList, graph: spbfs.Graph, source: int, **kw) -> spbfs.BFSResult:
    r = spbfs.bfs(graph, source, **kw)
    ref = reference_levels(edges.src, edges.dst, edges.n, source, directed=graph.directed)
    np.testing.assert_array_equal(r.levels, ref)
    validate_bfs_tree(edges, source, r.parents, r.levels, directed=graph.directed)
    return r


def _all_configs():
    for fmt in FORMATS:
        for backend in BACKENDS:
            name = getattr(backend, "values", [backend])[0]
            marks = getattr(backend, "marks", ())
            for direction in DIRECTIONS:
                yield pytest.param(fmt, name, direction, marks=marks,
                                   id=f"{fmt}-{name}-{direction}")


CONFIGS = list(_all_configs())


def _graphs() -> dict[str, EdgeList]:
    two = gen.path(30)
    other = gen.star(12)
    disconnected = EdgeList(
        np.concatenate([two.src, other.src + 30]),
        np.concatenate([two.dst, other.dst + 30]),
        30 + 12 + 5,  # five isolated vertices too
        directed=False,
    )
    return {
        "kron10": gen.kronecker(10, 16, seed=3),
        "kron12": gen.kronecker(12, 8, seed=4),
        "grid2d": gen.grid2d(23, 17),
        "grid3d": gen.grid3d(7, 6, 5),
        "star": gen.star(200),
        "path": gen.path(300),
        "disconnected": disconnected,
        "er_directed": gen.erdos_renyi(800, m=2400, seed=5, directed=True),
    }


GRAPHS = _graphs()


@pytest.mark.parametrize("name", sorted(GRAPHS))
@pytest.mark.parametrize(("fmt", "backend", "direction"), CONFIGS)
def test_levels_and_parents_agree_everywhere(name, fmt, backend, direction):
    edges = GRAPHS[name]
    cfg = spbfs.Config(format=fmt, backend=backend, direction=direction)
    g = spbfs.Graph.from_edgelist(edges, config=cfg)
    base = spbfs.Graph.from_edgelist(edges, config=spbfs.Config(backend="numpy"))
    rng = np.random.default_rng(len(name))
    sources = {0, edges.n - 1, *rng.integers(0, edges.n, 3).tolist()}
    for s in sorted(sources):
        r = _check(edges, g, s)
        # min_second semantics make parents unique: every path computes the same tree.
        np.testing.assert_array_equal(r.parents, spbfs.bfs(base, s).parents)


@pytest.mark.parametrize("fmt", FORMATS)
def test_real_graphs(data_dir, fmt):
    cfg = spbfs.Config(format=fmt, backend="numba")
    for fname in ("karate.mtx", "west0067.mtx", "luxembourg_osm.mtx", "musae_git_edges.csv",
                  "p2p-Gnutella31.txt"):
        edges = read_graph(data_dir / fname)
        g = spbfs.Graph.from_edgelist(edges, config=cfg)
        deg = g.out_degree
        depths = []
        for s in (0, int(np.argmax(deg)), edges.n // 2):
            r = _check(edges, g, s)
            assert r.levels[s] == 0 and r.parents[s] == s
            depths.append(len(r.stats))
        if fname == "luxembourg_osm.mtx":
            assert max(depths) > 900  # the high-diameter case really is one


@pytest.mark.parametrize("scale", [14, 16])
def test_kronecker_larger(scale):
    edges = gen.kronecker(scale, 16, seed=scale)
    g = spbfs.Graph.from_edgelist(edges, config=spbfs.Config(backend="numba"))
    s = int(np.argmax(g.out_degree))
    r = _check(edges, g, s)
    assert 1 in r.stats.direction  # direction optimization kicked in


def test_output_choices_and_stats():
    edges = gen.kronecker(10, 16, seed=9)
    g = spbfs.Graph.from_edgelist(edges)
    both = spbfs.bfs(g, 1)
    lv = spbfs.bfs(g, 1, output="levels")
    pa = spbfs.bfs(g, 1, output="parents")
    assert lv.parents is None and pa.levels is None
    np.testing.assert_array_equal(lv.levels, both.levels)
    np.testing.assert_array_equal(pa.parents, both.parents)
    st = both.stats
    assert st.discovered.sum() == both.num_reached - 1
    assert st.frontier[0] == 1
    np.testing.assert_array_equal(st.frontier[1:], st.discovered[:-1])
    assert len(st) == both.depth + 1  # the last level finds nothing and ends the search
    assert "level" in st.table() and "BFS from 1" in both.summary()


BACKEND_NAMES = [
    pytest.param(getattr(b, "values", [b])[0], marks=getattr(b, "marks", ())) for b in BACKENDS
]


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_max_depth_cuts_work(backend):
    edges = gen.path(100)
    g = spbfs.Graph.from_edgelist(edges, config=spbfs.Config(backend=backend))
    r = spbfs.bfs(g, 0, max_depth=5)
    assert r.stopped == "max_depth"
    assert len(r.stats) == 5
    assert r.levels.max() == 5 and r.num_reached == 6
    assert r.edges_examined < 20
    assert spbfs.bfs(g, 0, max_depth=0).num_reached == 1


@pytest.mark.parametrize("backend", BACKEND_NAMES)
def test_target_early_exit(backend):
    edges = gen.path(1000)
    g = spbfs.Graph.from_edgelist(edges, config=spbfs.Config(backend=backend))
    r = spbfs.bfs(g, 0, target=10)
    assert r.stopped == "target" and len(r.stats) == 10
    assert r.levels[10] == 10 and r.levels[11] == -1
    np.testing.assert_array_equal(r.path(10), np.arange(11))
    unreachable = spbfs.Graph.from_edgelist(EdgeList([0], [1], 3))
    assert spbfs.bfs(unreachable, 0, target=2).stopped == "exhausted"


def test_directed_and_reverse():
    # 0 -> 1 -> 2, 3 -> 2
    edges = EdgeList([0, 1, 3], [1, 2, 2], 4, directed=True)
    g = spbfs.Graph.from_edgelist(edges)
    assert spbfs.bfs(g, 0).levels.tolist() == [0, 1, 2, -1]
    assert spbfs.bfs(g, 2).levels.tolist() == [-1, -1, 0, -1]
    back = spbfs.bfs(g, 2, reverse=True)
    assert back.levels.tolist() == [2, 1, 0, 1]
    assert back.parents.tolist() == [1, 2, 2, 2]


def test_undirected_versus_symmetric_matrix():
    a = sp.csr_matrix(np.array([[0, 1, 0], [0, 0, 1], [0, 0, 0]]))
    assert spbfs.Graph.from_matrix(a).directed  # not symmetric: arcs as given
    assert spbfs.bfs(a, 2).num_reached == 1
    undirected = spbfs.Graph.from_matrix(a, directed=False)  # each edge both ways
    assert spbfs.bfs(undirected, 2).levels.tolist() == [2, 1, 0]
    sym = a + a.T
    assert not spbfs.Graph.from_matrix(sym).directed
    assert spbfs.Graph.from_matrix(sym, directed=True).directed


def test_explicit_zeros_and_weights_are_edges():
    a = sp.csr_matrix((np.array([0.0, 5.0]), np.array([1, 2]), np.array([0, 1, 2, 2])),
                      shape=(3, 3))
    assert a.nnz == 2  # the explicit zero is stored
    assert spbfs.bfs(a, 0).levels.tolist() == [0, 1, 2]


def test_inputs_networkx_and_arrays():
    g = nx.karate_club_graph()
    r = spbfs.bfs(g, 0)
    ref = nx.single_source_shortest_path_length(g, 0)
    assert all(r.levels[v] == d for v, d in ref.items())
    r2 = spbfs.bfs((np.array([0, 1]), np.array([1, 2])), 0)
    assert r2.levels.tolist() == [0, 1, 2]


def test_self_loops_and_duplicates():
    edges = EdgeList([0, 0, 0, 1, 1, 2], [0, 1, 1, 2, 2, 2], 3)
    g = spbfs.Graph.from_edgelist(edges)
    assert g.nnz == 4 and g.num_edges == 2
    r = _check(edges, g, 0)
    assert r.parents.tolist() == [0, 0, 1]


def test_large_original_ids_renumbered():
    labels = np.array([2**40 + 7, 2**31 + 1, 3, 2**62], dtype=np.int64)
    src = labels[[0, 1, 2]]
    dst = labels[[1, 2, 3]]
    from spbfs.io import renumber

    s, d, ids = renumber(src, dst)
    g = spbfs.Graph.from_edgelist(EdgeList(s, d, len(ids), ids=ids))
    r = spbfs.bfs(g, g.vertex_id(2**40 + 7))
    order = ids[np.argsort(r.levels)]
    assert order.tolist() == [2**40 + 7, 2**31 + 1, 3, 2**62]


def test_path_errors():
    g = spbfs.Graph.from_edgelist(EdgeList([0], [1], 3))
    r = spbfs.bfs(g, 0)
    assert r.path(1).tolist() == [0, 1]
    with pytest.raises(ValueError, match="not reached"):
        r.path(2)
    with pytest.raises(ValueError, match="out of range"):
        r.path(5)
    with pytest.raises(ValueError, match="needs parents"):
        spbfs.bfs(g, 0, output="levels").path(1)


@pytest.mark.parametrize(
    ("source", "exc", "match"),
    [(-1, ValueError, "source=-1 is out of range"), (10, ValueError, "source=10 is out of range"),
     (1.5, TypeError, "source must be an integer"), ("0", TypeError, "source must be")],
)
def test_bad_source(source, exc, match):
    g = spbfs.Graph.from_edgelist(gen.path(10))
    with pytest.raises(exc, match=match):
        spbfs.bfs(g, source)


def test_bad_inputs():
    with pytest.raises(ValueError, match="empty"):
        spbfs.bfs(spbfs.Graph.from_edgelist(EdgeList([], [], 0)), 0)
    with pytest.raises(ValueError, match="square"):
        spbfs.Graph.from_matrix(sp.csr_matrix((3, 4)))
    with pytest.raises(ValueError, match="target=7 is out of range"):
        spbfs.bfs(gen.path(5), 0, target=7)
    with pytest.raises(ValueError, match="max_depth must be >= 0"):
        spbfs.bfs(gen.path(5), 0, max_depth=-1)
    with pytest.raises(ValueError, match="'direction' must be one of"):
        spbfs.bfs(gen.path(5), 0, direction="sideways")
    with pytest.raises(TypeError, match="cannot make a graph"):
        spbfs.bfs([1, 2, 3], 0)
    with pytest.raises(ValueError, match="vertex id 5, out of range"):
        EdgeList([0], [5], 3)


def test_save_roundtrip(tmp_path):
    r = spbfs.bfs(gen.grid2d(4, 4), 0)
    r.save(tmp_path / "out.npz")
    z = np.load(tmp_path / "out.npz")
    np.testing.assert_array_equal(z["parents"], r.parents)
    np.testing.assert_array_equal(z["levels"], r.levels)


@pytest.mark.parametrize("fmt", ["csr", "dcsc"])
def test_large_levels_take_the_parallel_paths(fmt: str) -> None:
    """Scale 18 from the hub: a level of > 131,072 new vertices, so the parallel
    gather and bitmap paths of the numba engine run (small graphs never reach them)."""
    el = gen.kronecker(18, 16, seed=2)
    g = spbfs.Graph.from_edgelist(el, config=spbfs.Config(format=fmt, backend="numba"))
    source = int(np.argmax(np.asarray(g.out_degree)))
    for _ in range(2):  # the second search reuses the first one's scratch arrays
        r = spbfs.bfs(g, source)
        assert r.stats.discovered.max() > 1 << 17
        np.testing.assert_array_equal(r.levels, reference_levels(el.src, el.dst, el.n, source))
        validate_bfs_tree(el, source, r.parents, r.levels)
    # Top-down levels of more than 2**15 edges split the destinations over the
    # threads; each part still takes its frontier in order, so the parents stay
    # the smallest ones: equal to those of a bottom-up search.
    td = spbfs.bfs(g, source, direction="top-down")
    bu = spbfs.bfs(g, source, direction="bottom-up")
    assert td.stats.edges.max() > 1 << 15
    np.testing.assert_array_equal(td.parents, bu.parents)
    np.testing.assert_array_equal(td.parents, r.parents)


def test_direction_policy_guard_against_tiny_bottom_up_switches() -> None:
    """Beamer's test alone fires at the tail of a long path (``m_u`` tiny); the
    ``n / gamma`` guard keeps such levels top-down, while a Kronecker graph
    still goes bottom-up."""
    from spbfs.direction import BOTTOM_UP, TOP_DOWN, DirectionPolicy

    pol = DirectionPolicy()
    assert pol.choose(TOP_DOWN, 20, 50, 100, 115_000, True) == TOP_DOWN
    assert pol.choose(TOP_DOWN, 20, 4_000, 100, 1_000, True) == BOTTOM_UP
    unguarded = DirectionPolicy(gamma=float("inf"))
    assert unguarded.choose(TOP_DOWN, 20, 50, 100, 115_000, True) == BOTTOM_UP
    n = 1 << 15
    path = spbfs.Graph.from_edges(np.arange(n - 1), np.arange(1, n))
    r = spbfs.bfs(path, 0)
    assert len(r.stats) == n and not np.any(r.stats.direction == BOTTOM_UP)
    el = gen.kronecker(14, 16, seed=3)
    g = spbfs.Graph.from_edgelist(el)
    r = spbfs.bfs(g, int(np.argmax(np.asarray(g.out_degree))))
    assert np.any(r.stats.direction == BOTTOM_UP)


def test_direction_policy_guess_before_the_counts() -> None:
    """The grid's guess of the next direction: the documented rule, on numbers where it
    differs from "the direction just run", and the forced modes."""
    from spbfs.direction import BOTTOM_UP, TOP_DOWN, DirectionPolicy

    pol = DirectionPolicy()
    n, m_u = 1 << 18, 7_600_000
    # A frontier of 1,828 edges after one of 2 (a Kronecker root's second level): grown
    # as it grew, 1.67 M edges pass 7.6 M / 14 -> bottom-up next.
    assert pol.guess(TOP_DOWN, 2, 1_828, m_u, n, True, 2) == BOTTOM_UP
    assert pol.choose(TOP_DOWN, 2, 1_828, m_u, n, True) == TOP_DOWN  # the counts alone
    # The source's level, and a road network's steady frontier, stay top-down.
    assert pol.guess(TOP_DOWN, 1, 7, m_u, n, True, 0) == TOP_DOWN
    assert pol.guess(TOP_DOWN, 120, 300, 200_000, 114_599, True, 290) == TOP_DOWN
    # A long path's tail: the n / gamma guard holds, as in choose.
    assert pol.guess(TOP_DOWN, 20, 50, 100, 115_000, False, 50) == TOP_DOWN
    # Bottom-up: back to top-down only once the frontier stopped growing and is small.
    assert pol.guess(BOTTOM_UP, 29_002, 0, m_u, n, False, 0) == TOP_DOWN
    assert pol.guess(BOTTOM_UP, 29_002, 0, m_u, n, True, 0) == BOTTOM_UP
    assert pol.guess(BOTTOM_UP, 139_955, 0, m_u, n, False, 0) == BOTTOM_UP
    for mode, want in (("top-down", TOP_DOWN), ("bottom-up", BOTTOM_UP)):
        forced = DirectionPolicy(mode)
        assert {forced.guess(c, 1, 10**6, 1, n, g, 1) for c in (TOP_DOWN, BOTTOM_UP)
                for g in (True, False)} == {want}


def test_direction_string_runs() -> None:
    from spbfs.result import direction_string

    assert direction_string(np.array([0, 0, 1, 1, 1, 0])) == "TTBBBT"
    many = np.array([0] * 1030 + [1, 1] + [0] * 3)
    assert direction_string(many) == "T×1030 B×2 T×3"
    assert direction_string(np.array([], dtype=np.int8)) == ""


def test_fused_topdown_loop_loads_from_the_cache() -> None:
    """A new process loads the compiled search loop from numba's cache.

    It read the clock through a ctypes pointer, which numba cannot cache: every
    process compiled it again, 0.9 s before its first search. The first process
    here uses the suite's own cache (it loads the loop, or compiles and saves
    it for the tests after it: a fresh cache would compile it once more, about
    40 s); the second must load it.
    """
    code = ("import spbfs\n"
            "from spbfs.kernels import bfs_numba as k\n"
            "from spbfs.generators import grid2d\n"
            # past spbfs.search.small: a path's 2 (n - 1) edges stay below n / gamma
            "r = spbfs.bfs(spbfs.Graph.from_edgelist(grid2d(40, 50)), 0)\n"
            "assert r.levels[1999] == 88 and r.stats.seconds.min() >= 0\n"
            "print(sum(k.search_levels.stats.cache_hits.values()),\n"
            "      sum(k.search_levels.stats.cache_misses.values()))\n")
    env = {**os.environ, "SPBFS_BACKEND": "numba"}
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, check=True, timeout=300).stdout.split()[-2:]
            for _ in range(2)]
    (hits1, misses1), (hits2, misses2) = ((int(h), int(m)) for h, m in runs)
    assert hits1 + misses1 == 1  # the first loaded the loop or compiled it
    assert (hits2, misses2) == (1, 0)


def test_sparse_ids_are_refused_not_allocated():
    """Three edges with an id of 2**32 would mean per-vertex arrays of 4 G entries:
    refused before any of them exists, naming the id and the way out."""
    src, dst = np.array([0, 1, 2]), np.array([1, 2, 2**32])
    with pytest.raises(ValueError, match=r"largest vertex id is 4294967296.*renumber=True"):
        spbfs.bfs((src, dst), 0)
    # The limit: up to 2**24 vertices, or 16 per edge, whatever the ids.
    assert spbfs.Graph.from_edges([0], [2**24 - 1]).n == 2**24
    with pytest.raises(ValueError, match="give n explicitly"):
        spbfs.Graph.from_edges([0], [2**24])
    assert spbfs.Graph.from_edges([0], [2**24], n=2**24 + 1).n == 2**24 + 1


@pytest.mark.parametrize("dtype", [np.uint8, np.uint16, np.uint32, np.uint64])
def test_unsigned_id_arrays(dtype):
    r = spbfs.bfs((np.array([0, 1, 2], dtype), np.array([1, 2, 3], dtype)), 0)
    assert r.levels.tolist() == [0, 1, 2, 3] and r.parents.tolist() == [0, 0, 1, 2]


def test_networkx_graph_takes_node_labels() -> None:
    """A networkx graph's vertices are its labels, as in spbfs.sssp."""
    G = nx.Graph([(10, 20), (20, 30), ("a", 30)])
    r = spbfs.bfs(G, 10, target=30)
    g = spbfs.Graph.from_networkx(G)
    want = nx.single_source_shortest_path_length(G, 10, cutoff=2)  # stopped at 30
    assert {g.ids[v]: int(lv) for v, lv in enumerate(r.levels) if lv >= 0} == want
    assert r.stopped == "target"
    with pytest.raises(ValueError, match="source=11 is not a node"):
        spbfs.bfs(G, 11)


def test_bfs_ignores_networkx_weights_that_are_no_numbers():
    G = nx.Graph()
    G.add_edge("a", "b", weight="heavy")
    G.add_edge("b", "c", weight=None)
    r = spbfs.bfs(G, "a")
    assert r.levels.tolist() == [0, 1, 2]
    # What needs weights still refuses them, naming the edge.
    with pytest.raises(TypeError, match=r"weight: edge \('a', 'b'\) has weight='heavy', "
                                        "not a real number"):
        spbfs.Graph.from_networkx(G)
    with pytest.raises(TypeError, match="not a real number"):
        spbfs.algorithms.sssp(G, "a")


def test_unsigned_ids_above_int64_are_too_large_not_negative():
    big = np.array([2**63 + 5, 1], dtype=np.uint64)
    small = np.array([0, 2], dtype=np.uint64)
    with pytest.raises(ValueError, match=r"src holds vertex id 9223372036854775813, too "
                                         r"large: vertex ids are int64 \(at most 2\*\*63 - 1"):
        EdgeList(big, small, 10)
    with pytest.raises(ValueError, match="too large"):
        spbfs.Graph.from_edges(big, small, 10)
    # Narrow signed ids are not read as unsigned: int8 -1 is negative, not 255.
    with pytest.raises(ValueError, match=r"negative vertex id \(-1\)"):
        EdgeList(np.array([-1], np.int8), np.array([0], np.int8), 300)


@pytest.mark.parametrize("n", [3.7, float("nan"), "3", True])
def test_a_vertex_count_that_is_not_whole_is_refused(n):
    with pytest.raises((TypeError, ValueError), match=r"^n must be"):
        EdgeList([0, 1], [1, 2], n)
    with pytest.raises((TypeError, ValueError), match=r"^n must be"):
        spbfs.Graph.from_edges([0, 1], [1, 2], n)


def test_a_whole_float_vertex_count_is_taken():
    assert EdgeList([0, 1], [1, 2], 3.0).n == 3
    assert spbfs.Graph.from_edges([0, 1], [1, 2], 1e1).n == 10


def test_a_depth_beyond_int64_is_no_limit_not_a_typing_error():
    g = spbfs.Graph.from_edges([0, 1, 2], [1, 2, 3])
    for depth in (2**70, np.uint64(2**64 - 1)):
        assert spbfs.bfs(g, 0, max_depth=depth).levels.tolist() == [0, 1, 2, 3]
        assert spbfs.bfs(g.to_scipy(), 0, max_depth=depth).levels.tolist() == [0, 1, 2, 3]
    assert spbfs.bfs(g, 0, max_depth=1).levels.tolist() == [0, 1, -1, -1]


def test_the_plain_call_on_a_small_graph_answers_as_the_configured_call():
    # bfs(g, s) on a Graph takes a shorter way to the small search than a call with options.
    from scipy.sparse.csgraph import breadth_first_order

    g = spbfs.datasets.karate()
    for s in (0, 16, 33):
        plain = spbfs.bfs(g, s)
        configured = spbfs.bfs(g, s, config={"direction": "auto"}, output="both")
        np.testing.assert_array_equal(plain.parents, configured.parents)
        np.testing.assert_array_equal(plain.levels, configured.levels)
        np.testing.assert_array_equal(plain.stats.edges, configured.stats.edges)
        assert plain.stats.seconds.dtype == np.float64 and (plain.stats.seconds >= 0).all()
        order = breadth_first_order(g.to_scipy(), s, directed=True, return_predecessors=False)
        assert set(np.flatnonzero(plain.levels >= 0).tolist()) == set(order.tolist())
    with pytest.raises(ValueError, match="source=34 is out of range"):
        spbfs.bfs(g, 34)
    with pytest.raises(TypeError, match="source must be an integer vertex id"):
        spbfs.bfs(g, 1.0)
