"""networkx's functions run by networkx and by the spbfs backend (``backend="spbfs"``).

For each graph, each function is called once by networkx and once with
``backend="spbfs"`` per round, the two interleaved (the round's first one
alternating), so load changes on a shared machine hit both alike; the table
gives the median over the rounds. The backend's conversion of the graph
(``convert_from_nx``: node labels, adjacency in networkx's order, spbfs graph)
is cached on the networkx graph after the first call, as networkx does by
default; "first call" is the first ``bfs_edges`` on a graph, conversion
included (the numba kernels are compiled beforehand on a small graph).
Results are checked against networkx's before timing. ``SPBFS_THREADS``
sets spbfs's threads (networkx runs on one).

Graphs (networkx generators, seeded): ``gnp`` (undirected G(n, p), average
degree 10), ``grid`` (a 2-D grid, a high-diameter graph), ``scalefree``
(a directed scale-free graph), each with random float ``weight`` attributes;
or, with ``--graphs``, the data sets that ship with spbfs (``spbfs.datasets``:
karate, west0067, luxembourg_osm, p2p_gnutella31, musae_git), as networkx graphs
directed as the data set is, with the same random weights. Graphs below the
backend's ``min_edges`` are left to networkx by the backend itself
(``should_run``): their cells measure what a user gets, dispatch included.

Needs the ``networkx.backends`` entry point (``pip install -e .``).
Run ``python benchmarks/networkx_backend.py --help``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from typing import Any

import networkx as nx
from _common import format_table, load_average, machine_line


def _graphs(n: int, seed: int) -> dict[str, nx.Graph]:
    side = int(n ** 0.5)
    out = {
        "gnp": nx.fast_gnp_random_graph(n, 10 / n, seed=seed),
        "grid": nx.convert_node_labels_to_integers(nx.grid_2d_graph(side, side)),
        "scalefree": nx.DiGraph(nx.scale_free_graph(n, seed=seed)),
    }
    return _weighted(out, seed)


def _weighted(graphs: dict[str, nx.Graph], seed: int) -> dict[str, nx.Graph]:
    rng = random.Random(seed)
    for g in graphs.values():
        for _, _, d in g.edges(data=True):
            d["weight"] = rng.uniform(0.5, 2.0)
    return graphs


def _bundled(names: list[str], seed: int) -> dict[str, nx.Graph]:
    """The named ``spbfs.datasets`` as networkx graphs (their own weights replaced,
    self-loops dropped)."""
    from spbfs import datasets

    out = {}
    for name in names:
        e = datasets.edges(name)
        g = nx.DiGraph() if e.directed else nx.Graph()
        g.add_nodes_from(range(e.n))
        g.add_edges_from(zip(e.src.tolist(), e.dst.tolist(), strict=True))
        g.remove_edges_from(nx.selfloop_edges(g))
        out[name] = g
    return _weighted(out, seed)


def _functions(g: nx.Graph) -> dict[str, Callable[..., Any]]:
    s = next(iter(g))
    f: dict[str, Callable[..., Any]] = {
        "bfs_edges": lambda **kw: list(nx.bfs_edges(g, s, **kw)),
        "single_source_shortest_path_length":
            lambda **kw: nx.single_source_shortest_path_length(g, s, **kw),
        "single_source_dijkstra_path_length":
            lambda **kw: nx.single_source_dijkstra_path_length(g, s, **kw),
        "shortest_path_length (weight, source)":
            lambda **kw: nx.shortest_path_length(g, s, weight="weight", **kw),
        "shortest_path_length (source)": lambda **kw: nx.shortest_path_length(g, s, **kw),
        "pagerank": lambda **kw: nx.pagerank(g, tol=1e-8, **kw),
        "betweenness_centrality (k=16)":
            lambda **kw: nx.betweenness_centrality(g, k=16, seed=1, **kw),
    }
    if not g.is_directed():
        f["connected_components"] = lambda **kw: list(nx.connected_components(g, **kw))
        f["triangles"] = lambda **kw: nx.triangles(g, **kw)
    else:
        f["weakly_connected_components"] = \
            lambda **kw: list(nx.weakly_connected_components(g, **kw))
        f["strongly_connected_components"] = \
            lambda **kw: list(nx.strongly_connected_components(g, **kw))
    return f


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(abs(a[k] - b[k]) <= 1e-6 * max(1, abs(a[k]))
                                            for k in a)
    return a == b


def _timed(fn: Callable[[], Any]) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=20000, help="vertices per graph")
    ap.add_argument("--rounds", type=int, default=3, help="interleaved rounds (median)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--graphs", default="",
                    help="comma-separated spbfs.datasets names to run instead of the "
                         "generated graphs")
    ap.add_argument("--functions", default="",
                    help="comma-separated substrings of the function names to run (default: all)")
    args = ap.parse_args()
    wanted = [x for x in args.functions.split(",") if x]
    nx.config.warnings_to_ignore.add("cache")
    rows = []
    for fn in _functions(_graphs(400, args.seed)["gnp"]).values():  # compile the kernels
        fn(backend="spbfs")
    print(machine_line())
    print(f"load before: {load_average()}")
    names = [x for x in args.graphs.split(",") if x]
    graphs = _bundled(names, args.seed) if names else _graphs(args.n, args.seed)
    for gname, g in graphs.items():
        t = time.perf_counter()
        nx.bfs_edges(g, next(iter(g)), backend="spbfs")  # converts (cached) and compiles
        convert = time.perf_counter() - t
        for fname, fn in _functions(g).items():
            if wanted and not any(x in fname for x in wanted):
                continue
            want, got = fn(), fn(backend="spbfs")  # also the untimed warm-up round
            if not _same(want, got):
                raise SystemExit(f"{gname} {fname}: spbfs differs from networkx")
            times: dict[str, list[float]] = {"networkx": [], "spbfs": []}
            for r in range(args.rounds):
                order = ["networkx", "spbfs"] if r % 2 == 0 else ["spbfs", "networkx"]
                for who in order:
                    kw = {} if who == "networkx" else {"backend": "spbfs"}
                    times[who].append(_timed(lambda kw=kw, fn=fn: fn(**kw)))
            a, b = (statistics.median(times[w]) for w in ("networkx", "spbfs"))
            rows.append([f"{gname} (n={g.number_of_nodes():,}, m={g.number_of_edges():,})",
                         fname, f"{a * 1e3:.1f}", f"{b * 1e3:.1f}", f"{a / b:.1f}x",
                         f"{convert * 1e3:.0f}"])
    print(format_table(["graph", "function", "networkx ms", "spbfs ms", "speedup",
                        "first call ms"], rows, markdown=True))
    print(f"load after: {load_average()}")


if __name__ == "__main__":
    main()
