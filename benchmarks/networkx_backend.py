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

``--small``: microseconds per call of every implemented function on small
graphs (karate, a 10-vertex path, both also directed), where networkx's
dispatch is a large part of a call: networkx's own function; the call with
``backend="spbfs"`` as a user gets it (the backend runs its own code on a small
graph from the second call on only for the functions in
``spbfs.nxbackend._algorithms.FAST_ON_SMALL_GRAPHS``, networkx's otherwise);
and spbfs's implementation with ``min_edges`` 0, what the list is chosen by
(a ratio below 1 on every graph).

Needs the ``networkx.backends`` entry point (``pip install -e .``).
Run ``python benchmarks/networkx_backend.py --help``.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Callable
from functools import partial
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


def _small_calls(directed: bool) -> dict[str, Callable[[Any, Any], Any]]:
    """Every function the backend implements, as ``call(function, graph)`` with plain
    arguments (source 0)."""
    from _nx_spbfs import FUNCTIONS

    f: dict[str, Callable[[Any, Any], Any]] = {
        "bfs_edges": lambda fn, g: list(fn(g, 0)),
        "bfs_tree": lambda fn, g: sorted(fn(g, 0).edges),
        "bfs_layers": lambda fn, g: list(fn(g, 0)),
        "descendants_at_distance": lambda fn, g: fn(g, 0, 2),
        "single_source_shortest_path_length": lambda fn, g: fn(g, 0),
        "single_source_dijkstra_path_length": lambda fn, g: fn(g, 0),
        "shortest_path_length": lambda fn, g: fn(g, 0),
        "pagerank": lambda fn, g: fn(g),
        "betweenness_centrality": lambda fn, g: fn(g),
    }
    kinds = ["weakly_connected", "strongly_connected"] if directed else ["connected"]
    for kind in kinds:
        f[f"{kind}_components"] = lambda fn, g: list(fn(g))
        f[f"number_{kind}_components"] = f[f"is_{kind}"] = lambda fn, g: fn(g)
    if not directed:
        f["triangles"] = lambda fn, g: fn(g)
    unknown = set(f) - set(FUNCTIONS)
    if unknown:
        raise SystemExit(f"not implemented by the backend: {sorted(unknown)}")
    return f


def _per_call(fn: Callable[[], Any], budget: float = 2e-3) -> float:
    """Seconds of one call of ``fn``, from as many calls as fill ``budget``."""
    k = 1
    while True:
        t = time.perf_counter()
        for _ in range(k):
            fn()
        spent = time.perf_counter() - t
        if spent >= budget:
            return spent / k
        k *= 2


def small(rounds: int) -> None:
    """The ``--small`` table (microseconds per call)."""
    from networkx.utils.backends import _registered_algorithms

    from spbfs.nxbackend import backend_interface as be
    from spbfs.nxbackend._algorithms import FAST_ON_SMALL_GRAPHS

    graphs = {"karate": nx.karate_club_graph(), "path 10": nx.path_graph(10)}
    graphs |= {f"{name}, directed": nx.DiGraph(g) for name, g in list(graphs.items())}
    limit = be.min_edges
    print(machine_line())
    print(f"load before: {load_average()}")
    rows = []
    for gname, g in graphs.items():
        for fname, call in _small_calls(g.is_directed()).items():
            dispatched = getattr(nx, fname)
            runs = {
                "networkx": partial(call, dispatched, g),
                "forced": partial(call, partial(dispatched, backend="spbfs"), g),
                # Both codes alone, without networkx's dispatch: what the list is chosen by.
                "networkx code": partial(call, _registered_algorithms[fname].orig_func, g),
                "spbfs code": partial(call, getattr(be, fname), be.convert_from_nx(g)),
            }
            times: dict[str, list[float]] = {k: [] for k in runs}
            for r in range(rounds + 1):  # the first round untimed: conversion, compiling
                for who in list(runs)[r % 4:] + list(runs)[:r % 4]:
                    be.min_edges = 0 if who == "spbfs code" else limit
                    try:
                        t = _per_call(runs[who]) if r else runs[who]()
                    finally:
                        be.min_edges = limit
                    if r:
                        times[who].append(t)
            nx_us, forced, own, code = (statistics.median(times[k]) * 1e6 for k in runs)
            rows.append([gname, fname, "yes" if fname in FAST_ON_SMALL_GRAPHS else "",
                         f"{nx_us:.1f}", f"{forced:.1f}", f"{forced / nx_us:.2f}",
                         f"{code / own:.2f}"])
    print(format_table(["graph", "function", "spbfs code runs", "networkx µs",
                        "backend=spbfs µs", "ratio", "spbfs code / networkx code"],
                       rows, markdown=True))
    print(f"load after: {load_average()}")


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
    ap.add_argument("--small", action="store_true",
                    help="per-call microseconds of every implemented function on small graphs")
    args = ap.parse_args()
    if args.small:
        nx.config.warnings_to_ignore.add("cache")
        small(args.rounds)
        return
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
