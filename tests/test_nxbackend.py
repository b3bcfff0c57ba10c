"""The networkx backend ``spbfs``: dispatch, labels, weights, fallbacks, networkx's own tests.

Every result is compared with networkx's own function on the same graph
(networkx is the reference), never with values spbfs computed. The backend
interface is used directly (``backend_interface.<function>``) where the
``networkx.backends`` entry point may not be installed for this checkout, and
through ``backend="spbfs"`` where it is.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import textwrap
from importlib.metadata import distributions, entry_points
from pathlib import Path

import networkx as nx
import numpy as np
import pytest
import scipy.sparse as sp

import spbfs
from _nx_spbfs import FUNCTIONS, get_info
from spbfs.algorithms import pagerank, sssp
from spbfs.nxbackend import BackendInterface, SpbfsGraph
from spbfs.nxbackend._algorithms import FAST_ON_SMALL_GRAPHS, IMPLEMENTED

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def be() -> BackendInterface:
    """A fresh interface (its own call counters) that runs spbfs on graphs of any size."""
    interface = BackendInterface()
    interface.min_edges = 0
    return interface


def _relabel(g: nx.Graph, seed: int) -> nx.Graph:
    """``g`` with hashable labels of mixed types, in a shuffled insertion order."""
    kinds = [lambda k: k * 7 + 3, lambda k: f"n{k}", lambda k: (k, "t"), lambda k: float(k) + 0.5,
             lambda k: frozenset({k, -1})]
    mapping = {v: kinds[v % len(kinds)](v) for v in g}
    h = g.__class__()
    nodes = list(g)
    random.Random(seed).shuffle(nodes)
    h.add_nodes_from(mapping[v] for v in nodes)
    edges = list(g.edges(data=True, keys=True) if g.is_multigraph() else g.edges(data=True))
    random.Random(seed + 1).shuffle(edges)
    for e in edges:
        h.add_edge(mapping[e[0]], mapping[e[1]], **e[-1])
    return h


def _graph(kind: str, seed: int, n: int = 80, p: float = 0.08, weights: str | None = None
           ) -> nx.Graph:
    directed = kind in ("directed", "multidirected")
    g = nx.gnp_random_graph(n, p, seed=seed, directed=directed)
    if kind.startswith("multi"):
        g = nx.MultiDiGraph(g) if directed else nx.MultiGraph(g)
        rng = random.Random(seed)
        for u, v in list(g.edges())[::3]:
            g.add_edge(u, v)  # parallel edges
        g.add_edge(0, 0)  # a self-loop
    rng = random.Random(seed + 5)
    if weights is not None:
        for e in (g.edges(keys=True, data=True) if g.is_multigraph() else g.edges(data=True)):
            if rng.random() < 0.85:  # some edges lack the attribute: they weigh 1
                e[-1]["weight"] = rng.randint(1, 9) if weights == "int" else rng.uniform(0.1, 5)
    return _relabel(g, seed)


KINDS = ["undirected", "directed", "multiundirected", "multidirected"]


def _sources(g: nx.Graph, k: int = 3) -> list:
    return list(g)[:: max(1, len(g) // k)][:k]


# ---------------------------------------------------------------------------- traversal


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("seed", [1, 2])
def test_bfs_functions_match_networkx_in_order(be: BackendInterface, kind: str, seed: int) -> None:
    g = _graph(kind, seed)
    sg = be.convert_from_nx(g)
    for s in _sources(g):
        for reverse in (False, True):
            for depth in (None, 0, 1, 2.5, 100):
                want = list(nx.bfs_edges(g, s, reverse=reverse, depth_limit=depth))
                assert list(be.bfs_edges(sg, s, reverse=reverse, depth_limit=depth)) == want
            t = be.bfs_tree(sg, s, reverse=reverse)
            ref = nx.bfs_tree(g, s, reverse=reverse)
            assert list(t.edges) == list(ref.edges) and list(t) == list(ref)
        assert list(be.bfs_layers(sg, s)) == list(nx.bfs_layers(g, s))
        for d in (0, 1, 2, 3, 50):
            assert be.descendants_at_distance(sg, s, d) == nx.descendants_at_distance(g, s, d)
        for cutoff in (None, 0, 1, 2.5):
            got = be.single_source_shortest_path_length(sg, s, cutoff)
            want = nx.single_source_shortest_path_length(g, s, cutoff)
            assert list(got.items()) == list(want.items())  # same keys in the same order
    for srcs in (_sources(g, 4), list(g)[:-3]):  # one multi-source BFS; a joined source
        assert list(be.bfs_layers(sg, srcs)) == list(nx.bfs_layers(g, srcs))
    assert be.stats.ran["bfs_edges"] > 0 and not be.stats.fell_back


def test_dispatch_through_networkx_keyword(monkeypatch: pytest.MonkeyPatch) -> None:
    """``nx.<f>(..., backend="spbfs")`` reaches the backend (needs the entry point)."""
    if not entry_points(group="networkx.backends", name="spbfs"):
        pytest.skip("the networkx.backends entry point is not installed (pip install -e .)")
    from spbfs.nxbackend import backend_interface

    monkeypatch.setattr(backend_interface, "min_edges", 0)  # spbfs itself, on a small graph
    g = _graph("undirected", 3)
    s = next(iter(g))
    assert list(nx.bfs_edges(g, s, backend="spbfs")) == list(nx.bfs_edges(g, s))
    assert nx.pagerank(g, backend="spbfs") == pytest.approx(nx.pagerank(g))
    # An argument spbfs leaves to networkx: the dispatcher refuses it when forced ...
    with pytest.raises(NotImplementedError, match="spbfs"):
        list(nx.bfs_edges(g, s, sort_neighbors=sorted, backend="spbfs"))
    # ... and a function spbfs does not implement, too.
    with pytest.raises(NotImplementedError, match="spbfs"):
        nx.is_bipartite(g, backend="spbfs")


def test_should_run_declines_small_graphs() -> None:
    """Fewer than ``min_edges`` edges: networkx's own function, with the reason; at
    ``min_edges`` and above: spbfs. The count follows the graph's changes."""
    be = BackendInterface()
    small = nx.path_graph(10)
    verdict = be.should_run("bfs_edges", (small, 0), {})
    assert isinstance(verdict, str) and "9 edges" in verdict
    big = nx.gnm_random_graph(3000, be.min_edges, seed=1)
    assert be.should_run("bfs_edges", (big, 0), {}) is True
    assert be.should_run("bfs_edges", (be.convert_from_nx(big), 0), {}) is True
    big.remove_edge(*next(iter(big.edges)))  # clears networkx's cache, the kept count with it
    assert isinstance(be.should_run("bfs_edges", (big, 0), {}), str)


def test_forced_backend_on_a_small_graph_runs_networkx_then_spbfs() -> None:
    """``backend="spbfs"`` skips should_run: on a small graph the backend itself runs
    networkx's function at the first call (counted as declined), and spbfs from the
    second on, for a function spbfs runs faster there (bfs_edges) and arguments it
    takes; always spbfs on a large graph."""
    be = BackendInterface()
    g = nx.karate_club_graph()
    want = list(nx.bfs_edges(g, 0))
    assert list(be.bfs_edges(be.convert_from_nx(g), 0)) == want
    assert be.stats.declined["bfs_edges"] == 1 and not be.stats.ran
    assert list(be.bfs_edges(be.convert_from_nx(g), 0)) == want
    assert be.stats.ran["bfs_edges"] == 1 and be.stats.declined["bfs_edges"] == 1
    # A function networkx runs faster on a small graph stays networkx's.
    assert "bfs_layers" not in FAST_ON_SMALL_GRAPHS
    assert list(be.bfs_layers(be.convert_from_nx(g), 0)) == list(nx.bfs_layers(g, 0))
    assert be.stats.declined["bfs_layers"] == 1 and not be.stats.ran["bfs_layers"]
    # Arguments spbfs leaves to networkx: can_run passes them on a small graph, which the
    # backend then hands to networkx, converted or not.
    assert be.can_run("bfs_edges", (g, 0), {"sort_neighbors": sorted}) is True
    key = lambda it: sorted(it, reverse=True)  # noqa: E731
    for _ in range(2):
        got = be.bfs_edges(be.convert_from_nx(g), 0, sort_neighbors=key)
        assert list(got) == list(nx.bfs_edges(g, 0, sort_neighbors=key))
        got = be.bfs_edges(be.convert_from_nx(g), 0, False, None, key)  # as networkx binds
        assert list(got) == list(nx.bfs_edges(g, 0, sort_neighbors=key))
    assert be.stats.ran["bfs_edges"] == 1 and be.stats.declined["bfs_edges"] == 5
    # A changed graph is converted anew: its first call is networkx's again.
    g.add_edge(0, 9)
    assert list(be.bfs_edges(be.convert_from_nx(g), 0)) == list(nx.bfs_edges(g, 0))
    assert be.stats.declined["bfs_edges"] == 6
    big = nx.gnm_random_graph(3000, be.min_edges, seed=2)
    assert list(be.bfs_edges(be.convert_from_nx(big), 0)) == list(nx.bfs_edges(big, 0))
    assert be.stats.ran["bfs_edges"] == 2


def test_small_graph_functions_listed_are_implemented() -> None:
    """Every function run on small graphs is one the backend implements."""
    assert FAST_ON_SMALL_GRAPHS <= set(IMPLEMENTED)


def test_converted_graph_kept_without_networkx_cache_warning() -> None:
    """The converted graph is kept on the networkx graph and reused, networkx's cache
    never serves it (so it never warns), and a change to the graph drops it."""
    if not entry_points(group="networkx.backends", name="spbfs"):
        pytest.skip("the networkx.backends entry point is not installed (pip install -e .)")
    import warnings

    from spbfs.nxbackend import backend_interface

    g = nx.gnm_random_graph(3000, backend_interface.min_edges, seed=3)
    assert nx.config.cache_converted_graphs
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        first = list(nx.bfs_edges(g, 0, backend="spbfs"))
        kept = backend_interface.convert_from_nx(g)
        second = list(nx.bfs_edges(g, 0, backend="spbfs"))
    assert first == second == list(nx.bfs_edges(g, 0))
    assert backend_interface.convert_from_nx(g) is kept
    g.add_edge(0, 2999)
    assert backend_interface.convert_from_nx(g) is not kept
    assert list(nx.bfs_edges(g, 0, backend="spbfs")) == list(nx.bfs_edges(g, 0))


def test_backend_priority_falls_back_to_networkx(monkeypatch: pytest.MonkeyPatch) -> None:
    if not entry_points(group="networkx.backends", name="spbfs"):
        pytest.skip("the networkx.backends entry point is not installed (pip install -e .)")
    monkeypatch.setattr(nx.config.backend_priority, "algos", ["spbfs"])
    g = nx.path_graph(6)
    # implemented, refused (sort_neighbors), and not implemented: all give networkx's answer
    assert list(nx.bfs_edges(g, 2)) == [(2, 1), (2, 3), (1, 0), (3, 4), (4, 5)]
    key = lambda it: sorted(it, reverse=True)  # noqa: E731
    assert list(nx.bfs_edges(g, 2, sort_neighbors=key)) == [(2, 3), (2, 1), (3, 4), (1, 0),
                                                             (4, 5)]
    assert nx.is_bipartite(g) is True


# ---------------------------------------------------------------------------- shortest paths


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("weights", ["int", "float"])
def test_weighted_shortest_paths_match_networkx(be: BackendInterface, kind: str,
                                                weights: str) -> None:
    g = _graph(kind, 11, weights=weights)
    sg = be.convert_from_nx(g)
    for s in _sources(g):
        for cutoff in (None, 4):
            got = be.single_source_dijkstra_path_length(sg, s, cutoff=cutoff)
            want = nx.single_source_dijkstra_path_length(g, s, cutoff=cutoff)
            assert got.keys() == want.keys()
            assert got == pytest.approx(want)
            if weights == "int":
                assert all(type(v) is int for v in got.values())  # sums of ints stay ints
        for method in ("dijkstra", "bellman-ford"):
            got = be.shortest_path_length(sg, s, weight="weight", method=method)
            assert got == pytest.approx(nx.shortest_path_length(g, s, weight="weight",
                                                                method=method))
        # to one target (in-edges of a directed graph) and source-target
        got = be.shortest_path_length(sg, target=s, weight="weight")
        assert got == pytest.approx(nx.shortest_path_length(g, target=s, weight="weight"))
        got = be.shortest_path_length(sg, target=s)
        assert got == nx.shortest_path_length(g, target=s)
        for t in _sources(g, 5):
            for w in (None, "weight"):
                try:
                    want = nx.shortest_path_length(g, s, t, weight=w)
                except nx.NetworkXNoPath:
                    with pytest.raises(nx.NetworkXNoPath):
                        be.shortest_path_length(sg, s, t, weight=w)
                    continue
                assert be.shortest_path_length(sg, s, t, weight=w) == pytest.approx(want)
    got = dict(be.shortest_path_length(sg, weight="weight"))
    want = dict(nx.shortest_path_length(g, weight="weight"))
    assert list(got) == list(want)
    assert all(got[u] == pytest.approx(want[u]) for u in want)


def test_weighted_and_labelled_digraph(be: BackendInterface) -> None:
    g = nx.DiGraph()
    g.add_edge(0, 1, weight=5)
    g.add_edge(1, 2, weight=0.5)
    g.add_edge(0, 2, weight=10)
    want = nx.single_source_dijkstra_path_length(g, 0)  # {0: 0, 1: 5, 2: 5.5}
    assert be.single_source_dijkstra_path_length(be.convert_from_nx(g), 0) == want
    # spbfs's own sssp on the networkx graph honours the weights ...
    assert sssp(g, 0).distances.tolist() == [want[0], want[1], want[2]]
    assert spbfs.Graph.from_networkx(g).edges.weights.tolist() == [5.0, 10.0, 0.5]
    # ... and takes and reports node labels
    h = nx.Graph([(10, 20), (20, 30)])
    r = sssp(h, 10)
    assert r.to_dict() == {k: float(v) for k, v in nx.single_source_dijkstra_path_length(
        h, 10).items()}
    with pytest.raises(ValueError, match="source=0 is not a node"):
        sssp(h, 0)
    # weight=None: structure only, as before
    assert sssp(spbfs.Graph.from_networkx(g, weight=None), 0).distances.tolist() == [0, 1, 1]


def test_from_networkx_weights_and_labels() -> None:
    g = nx.MultiGraph()
    g.add_edge(("a", 1), "b", weight=2.5)
    g.add_edge(("a", 1), "b", weight=1.0)  # parallel: sssp keeps the smaller
    g.add_edge("b", 3)  # no attribute: weighs 1
    G = spbfs.Graph.from_networkx(g)
    assert G.labelled and G.vertex_id(("a", 1)) == 0 and G.vertex_id(3) == 2
    assert sorted(G.edges.weights.tolist()) == [1.0, 1.0, 2.5]
    assert sssp(g, ("a", 1)).to_dict() == pytest.approx(
        nx.single_source_dijkstra_path_length(g, ("a", 1)))
    bad = nx.Graph()
    bad.add_edge(0, 1, weight="heavy")
    with pytest.raises(TypeError, match="not a real number"):
        spbfs.Graph.from_networkx(bad)
    # A graph that is not from networkx keeps taking ids.
    plain = spbfs.Graph.from_edges([0, 1], [1, 2])
    assert not plain.labelled and sssp(plain, 0).labels is None


@pytest.mark.parametrize("kind", KINDS)
def test_spbfs_pagerank_on_weighted_networkx_graph(kind: str) -> None:
    g = _graph(kind, 21, weights="float")
    got = pagerank(g, tol=1e-10, max_iter=500).to_dict()
    assert got == pytest.approx(nx.pagerank(g, tol=1e-10, max_iter=500), abs=1e-9)
    # weights passed explicitly override the graph's
    n = len(g)
    w = sp.csr_matrix(np.ones((n, n)) - np.eye(n))
    assert pagerank(g, weights=w).scores == pytest.approx(np.full(n, 1 / n))


# ---------------------------------------------------------------------------- the rest


@pytest.mark.parametrize("kind", KINDS)
def test_components_pagerank_betweenness_triangles(be: BackendInterface, kind: str) -> None:
    g = _graph(kind, 31, n=50, p=0.04, weights="float")
    sg = be.convert_from_nx(g)
    if not g.is_directed():
        assert list(be.connected_components(sg)) == list(nx.connected_components(g))
        assert be.number_connected_components(sg) == nx.number_connected_components(g)
        assert be.triangles(sg) == nx.triangles(g)
        some = list(g)[:5]
        if g.is_multigraph():  # networkx refuses nodes= on a multigraph, so does the backend
            with pytest.raises(nx.NetworkXNotImplemented):
                be.triangles(sg, some)
        else:
            assert be.triangles(sg, some) == nx.triangles(g, some)
            assert be.triangles(sg, some[0]) == nx.triangles(g, some[0])
    for weight in ("weight", None):
        got = be.pagerank(sg, weight=weight, tol=1e-10, max_iter=500)
        want = nx.pagerank(g, weight=weight, tol=1e-10, max_iter=500)
        assert list(got) == list(want) and got == pytest.approx(want, abs=1e-9)
    for normalized in (True, False):
        got = be.betweenness_centrality(sg, normalized=normalized)
        assert got == pytest.approx(nx.betweenness_centrality(g, normalized=normalized))
        got = be.betweenness_centrality(sg, k=7, normalized=normalized, seed=random.Random(4))
        want = nx.betweenness_centrality(g, k=7, normalized=normalized, seed=4)
        assert got == pytest.approx(want, nan_ok=True)
    assert sum(be.stats.fell_back.values()) == g.is_multigraph() * (not g.is_directed())


def test_pagerank_not_converging_raises_networkx_error(be: BackendInterface) -> None:
    g = nx.DiGraph([(0, 1), (1, 2), (2, 0), (2, 1)])
    with pytest.raises(nx.PowerIterationFailedConvergence):
        nx.pagerank(g, max_iter=2)
    with pytest.raises(nx.PowerIterationFailedConvergence):
        be.pagerank(be.convert_from_nx(g), max_iter=2)


# ---------------------------------------------------------------------------- fallbacks


def test_data_spbfs_does_not_take_falls_back_to_networkx(be: BackendInterface) -> None:
    g = nx.DiGraph()
    g.add_edge("a", "b", weight=-1.0)  # negative: networkx's answer, not spbfs's error
    g.add_edge("b", "c", weight=2.0)
    g.add_edge("a", "c", weight=3.0)
    sg = be.convert_from_nx(g)
    got = be.shortest_path_length(sg, "a", weight="weight", method="bellman-ford")
    assert got == nx.shortest_path_length(g, "a", weight="weight", method="bellman-ford")
    odd = nx.Graph()
    odd.add_edge(0, 1, weight="x")
    with pytest.raises(TypeError):  # networkx's own error for a string weight
        be.single_source_dijkstra_path_length(be.convert_from_nx(odd), 0)
    with pytest.raises(nx.NodeNotFound):  # networkx's exception for a missing node
        be.single_source_shortest_path_length(sg, "zz")
    with pytest.raises(nx.NetworkXNoPath):
        be.shortest_path_length(sg, "c", "a")
    assert be.stats.fell_back["shortest_path_length"] == 2
    assert be.stats.fell_back["single_source_dijkstra_path_length"] == 1
    assert be.stats.ran["shortest_path_length"] == 0


def test_can_run_refuses_what_it_does_not_implement(be: BackendInterface) -> None:
    g = nx.path_graph(4)
    assert be.can_run("bfs_edges", (g, 0), {}) is True
    assert isinstance(be.can_run("bfs_edges", (g, 0), {"sort_neighbors": sorted}), str)
    assert isinstance(be.can_run("pagerank", (g,), {"personalization": {0: 1}}), str)
    assert isinstance(be.can_run("betweenness_centrality", (g,), {"weight": "weight"}), str)
    assert isinstance(be.can_run("single_source_dijkstra_path_length", (g, 0),
                                 {"weight": lambda u, v, d: 1}), str)
    assert be.can_run("is_bipartite", (g,), {}) is False
    assert not hasattr(be, "is_bipartite") and be.stats.missing["is_bipartite"] == 1
    assert be.stats.refused["bfs_edges"] == 1


def test_info_lists_exactly_the_implemented_functions(be: BackendInterface) -> None:
    info = get_info()
    assert info["backend_name"] == "spbfs"
    assert set(info["functions"]) == set(FUNCTIONS)
    for name in FUNCTIONS:
        assert callable(getattr(be, name))
        assert name in nx.utils.backends._registered_algorithms  # a real networkx name
    g = nx.path_graph(3)
    sg = be.convert_from_nx(g)
    assert isinstance(sg, SpbfsGraph) and be.convert_to_nx(sg) is g
    assert be.convert_to_nx({1: 2}) == {1: 2}


def test_importing_networkx_loads_nothing_of_spbfs() -> None:
    """networkx reads every backend's info on import: spbfs's comes from a module outside
    the package, so a script that only imports networkx does not load spbfs (numba and
    the search: about half a second)."""
    info = [ep for ep in entry_points(group="networkx.backend_info") if ep.name == "spbfs"]
    if not info or info[0].value != "_nx_spbfs:get_info":
        pytest.skip("the environment's spbfs is installed without this checkout's entry points")
    code = ("import sys, networkx; assert 'spbfs' in networkx.utils.backends.backend_info; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('spbfs', 'numba')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=ROOT.parent, check=True).stdout
    assert out.strip() == "[]", out


# ---------------------------------------------------------------------------- networkx's tests

#: A subset of networkx's own test modules for the implemented functions (tens of seconds).
NX_SUBSET = [
    "networkx/algorithms/traversal/tests/test_bfs.py",
    "networkx/algorithms/components/tests/test_connected.py",
    "networkx/algorithms/shortest_paths/tests/test_generic.py",
    "networkx/algorithms/link_analysis/tests/test_pagerank.py",
]

#: networkx's test modules for the implemented functions (``networkx.algorithms.cluster``
#: keeps its tests in tests/test_cluster.py).
NX_FULL = [
    "networkx.algorithms.traversal", "networkx.algorithms.shortest_paths",
    "networkx.algorithms.components", "networkx.algorithms.link_analysis",
    "networkx.algorithms.centrality.tests.test_betweenness_centrality",
    "networkx.algorithms.tests.test_cluster",
]


def _run_networkx_tests(tmp_path: Path, targets: list[str], pyargs: bool) -> dict:
    """Run networkx's tests with NETWORKX_TEST_BACKEND=spbfs in a subprocess; the call counts."""
    env = dict(os.environ)
    path = [str(ROOT)]
    site = Path(nx.__file__).resolve().parents[1]
    installed = [d for d in distributions(path=[str(site)]) if d.metadata["Name"] == "spbfs"]
    if not any(ep.group == "networkx.backends" and ep.name == "spbfs"
               for d in installed for ep in d.entry_points):
        # Not installed with the entry points (a checkout without `pip install -e .`, or the
        # environment's spbfs is another checkout): pytest puts site-packages first on the
        # path for networkx's conftest, so register them for the subprocess with a metadata
        # directory of their own, under a name of its own.
        meta = tmp_path / "site" / "spbfs_nx_entry-0.dist-info"
        meta.mkdir(parents=True)
        (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: spbfs-nx-entry\n"
                                       "Version: 0\n")
        (meta / "entry_points.txt").write_text(textwrap.dedent("""\
            [networkx.backends]
            spbfs = spbfs.nxbackend:backend_interface

            [networkx.backend_info]
            spbfs = _nx_spbfs:get_info
            """))
        path.append(str(meta.parent))
    env["PYTHONPATH"] = os.pathsep.join([*path, env.get("PYTHONPATH", "")])
    stats = tmp_path / "stats.json"
    # networkx's test graphs are small: spbfs runs them all the same.
    env.update(NETWORKX_TEST_BACKEND="spbfs", NETWORKX_FALLBACK_TO_NX="True",
               NX_SPBFS_STATS=str(stats), NX_SPBFS_MIN_EDGES="0")
    args = ["--pyargs", *targets] if pyargs else [str(site / t) for t in targets]
    # Without our addopts: a .venv inside the checkout makes pyproject.toml networkx's
    # pytest config too, and its workers (-n 2) would each count, the last one writing.
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         "-x", *args],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=900,
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return json.loads(stats.read_text())


def test_networkx_own_tests_subset(tmp_path: Path) -> None:
    counts = _run_networkx_tests(tmp_path, NX_SUBSET, pyargs=False)
    ran = counts["ran"]
    for name in ("bfs_edges", "bfs_layers", "connected_components", "shortest_path_length",
                 "pagerank", "single_source_shortest_path_length"):
        assert ran.get(name, 0) > 0, f"networkx's tests never reached spbfs's {name}: {counts}"


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("NX_SPBFS_FULL_TESTS"),
                    reason="networkx's full test set takes minutes: set NX_SPBFS_FULL_TESTS=1")
def test_networkx_own_tests_full(tmp_path: Path) -> None:
    counts = _run_networkx_tests(tmp_path, NX_FULL, pyargs=True)
    assert set(counts["ran"]) == set(FUNCTIONS), counts


def test_spbfs_sources_are_node_labels_for_networkx_graphs() -> None:
    from spbfs.algorithms import betweenness_centrality, multi_source_bfs

    g = nx.Graph()
    g.add_nodes_from([2, 0, 1, "x"])  # ids 0..3 are not the labels
    g.add_edges_from([(2, 0), (0, 1), (1, "x")])
    r = multi_source_bfs(g, [0, "x"], output="levels")
    order = list(g)
    for row, s in zip(r.levels, [0, "x"], strict=True):
        want = nx.single_source_shortest_path_length(g, s)
        assert {order[k]: int(v) for k, v in enumerate(row)} == want
    assert multi_source_bfs(g, 1, output="levels").levels.shape == (1, 4)
    with pytest.raises(ValueError, match="sources=7 is not a node"):
        multi_source_bfs(g, [7])
    drawn = random.Random(5).sample(list(g), 2)  # what networkx draws for k=2, seed=5
    bc = betweenness_centrality(g, sources=drawn, normalized=False)
    want = nx.betweenness_centrality(g, k=2, seed=5, normalized=False)
    assert bc.tolist() == pytest.approx([want[v] for v in g], nan_ok=True)


# ---------------------------------------------------------------- weak and strong components


@pytest.mark.parametrize("kind", KINDS)
def test_weak_and_strong_component_functions_match_networkx(be: BackendInterface,
                                                            kind: str) -> None:
    # Sparse enough for many components, several of them strong cycles; plus isolated nodes.
    g = _graph(kind, 7, n=120, p=0.012)
    g.add_nodes_from(["lone", ("x", 1)])
    sg = be.convert_from_nx(g)
    if g.is_directed():
        for ours, theirs in ((be.weakly_connected_components, nx.weakly_connected_components),
                             (be.strongly_connected_components,
                              nx.strongly_connected_components)):
            assert list(ours(sg)) == list(theirs(g))  # the same sets in the same order
        assert be.number_weakly_connected_components(sg) == \
            nx.number_weakly_connected_components(g)
        assert be.number_strongly_connected_components(sg) == \
            nx.number_strongly_connected_components(g)
        assert be.is_weakly_connected(sg) is nx.is_weakly_connected(g) is False
        assert be.is_strongly_connected(sg) is nx.is_strongly_connected(g) is False
        cycle = be.convert_from_nx(nx.cycle_graph(9, create_using=type(g)))
        assert be.is_strongly_connected(cycle) is True and be.is_weakly_connected(cycle)
    else:
        assert be.is_connected(sg) is nx.is_connected(g) is False
        assert be.is_connected(be.convert_from_nx(nx.path_graph(9, create_using=type(g))))


def test_component_predicates_on_an_empty_graph_raise_as_networkx() -> None:
    for g, fn in ((nx.Graph(), nx.is_connected), (nx.DiGraph(), nx.is_weakly_connected),
                  (nx.DiGraph(), nx.is_strongly_connected)):
        with pytest.raises(nx.NetworkXPointlessConcept):
            fn(g, backend="spbfs")
    assert nx.number_strongly_connected_components(nx.DiGraph(), backend="spbfs") == 0


def test_networkx_own_component_tests(tmp_path: Path) -> None:
    base = "networkx/algorithms/components/tests/"
    counts = _run_networkx_tests(tmp_path, [base + "test_strongly_connected.py",
                                            base + "test_weakly_connected.py"], pyargs=False)
    ran = counts["ran"]
    for name in ("strongly_connected_components", "number_strongly_connected_components",
                 "is_strongly_connected", "weakly_connected_components",
                 "is_weakly_connected"):
        assert ran.get(name, 0) > 0, f"networkx's tests never reached spbfs's {name}: {counts}"


def test_should_run_answer_is_kept_per_graph_and_follows_min_edges() -> None:
    """The answer is made once per graph and limit: a new ``min_edges`` answers anew."""
    be = BackendInterface()
    g = nx.karate_club_graph()
    first = be.should_run("bfs_edges", (g, 0), {})
    assert isinstance(first, str) and "78 edges" in first
    assert be.should_run("bfs_edges", (g, 0), {}) is first  # kept, not formatted again
    be.min_edges = 78
    assert be.should_run("bfs_edges", (g, 0), {}) is True
    assert be.can_run("bfs_edges", (g, 0), {}) is True
    be.min_edges = 79
    assert "fewer than 79" in be.should_run("bfs_edges", (be.convert_from_nx(g), 0), {})


@pytest.mark.parametrize("seed", range(3))
def test_unweighted_lengths_in_networkx_order(seed) -> None:
    """The compiled queue search gives networkx's keys in networkx's order: from a source,
    towards a target (the predecessor rows), with a cutoff, and from a vertex that
    reaches few others."""
    g = nx.DiGraph(nx.scale_free_graph(300, seed=seed))
    be = BackendInterface()
    sg = be.convert_from_nx(g)
    for s in [*_sources(g), 0]:
        for cutoff in (None, 0, 1, 2.5):
            got = be.single_source_shortest_path_length(sg, s, cutoff)
            want = nx.single_source_shortest_path_length(g, s, cutoff)
            assert list(got.items()) == list(want.items())
        got = be.shortest_path_length(sg, source=s)
        assert list(got.items()) == list(nx.shortest_path_length(g, source=s).items())
        got = be.shortest_path_length(sg, target=s)
        assert list(got.items()) == list(nx.shortest_path_length(g, target=s).items())
