"""Weighted single-source shortest paths: spbfs against scipy, igraph and networkit.

Every graph of the comparison set (:data:`_common.PEER_GRAPHS`) gets seeded
integer weights uniform in ``[1, 100)``, one per edge (self-loops dropped, a
repeated edge keeping its smallest weight, both directions of an undirected
edge the same weight), so every system searches the same weighted graph.
Sources: ``--sources`` vertices of positive degree drawn with the seed; a
table for the first source alone and one for all of them.

===================  =========================================================
system               call (graph objects built once, outside the clock)
===================  =========================================================
scipy                ``scipy.sparse.csgraph.dijkstra(A, True, S)`` on the csr
                     matrix holding both directions of an undirected edge
spbfs csgraph        ``spbfs.csgraph.dijkstra(A, True, S)``: the same call,
                     conversion included (delta-stepping, all sources in one
                     compiled call)
spbfs sssp           :func:`spbfs.sssp` with a block from
                     :func:`spbfs.algorithms.weighted_block`, once per source
igraph               ``Graph.distances(S, weights="weight", mode="out")``
networkit            ``networkit.distance.Dijkstra(G, s, storePaths=False)``
                     ``.run()`` per source (distances read after the clock)
===================  =========================================================

Before timing, every system's distances are compared with scipy's (exactly:
integer weights sum exactly); a system that differs prints WRONG and is not
timed. Then ``--rounds`` rounds with the order rotated every round
(:func:`_common.interleaved`, one untimed warm call first); the table gives
medians in ms and, last, the fastest peer's time over spbfs's (csgraph
call): above 1 spbfs is faster.

Run ``python benchmarks/peers_sssp.py --graphs luxembourg_osm,kron18 --rounds 5
--markdown``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph as scipy_csgraph

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import format_table, interleaved, machine_line, median, peer_graphs, uptime

import spbfs
from spbfs import csgraph
from spbfs.algorithms import weighted_block

PEERS = ("scipy", "igraph", "networkit")


def weighted(edges: Any, seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, bool]:
    """The distinct arcs ``(u, v, w)`` of the weighted graph, its order and direction."""
    n, directed = int(edges.n), bool(edges.directed)
    u = np.asarray(edges.src, dtype=np.int64)
    v = np.asarray(edges.dst, dtype=np.int64)
    w = np.random.default_rng(seed).integers(1, 100, u.size).astype(np.float64)
    keep = u != v
    u, v, w = u[keep], v[keep], w[keep]
    if not directed:  # one weight per undirected edge, both directions
        u, v = np.minimum(u, v), np.maximum(u, v)
    key = u * n + v
    order = np.lexsort((w, key))  # by edge, smallest weight first
    key, w = key[order], w[order]
    first = np.ones(key.size, dtype=bool)
    first[1:] = key[1:] != key[:-1]
    key, w = key[first], w[first]
    u, v = key // n, key % n
    if not directed:
        u, v, w = np.concatenate([u, v]), np.concatenate([v, u]), np.concatenate([w, w])
    return u, v, w, n, directed


def systems(u: np.ndarray, v: np.ndarray, w: np.ndarray, n: int,
            directed: bool) -> dict[str, Callable[[np.ndarray], np.ndarray]]:
    """name -> call returning the ``(len(S), n)`` distances from sources ``S``."""
    a = sp.csr_matrix((w, (u, v)), shape=(n, n))
    g = spbfs.Graph.from_edges(u, v, n=n, directed=True)  # A holds both directions
    block = weighted_block(g, a)
    out: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "scipy": lambda s: scipy_csgraph.dijkstra(a, True, s),
        "spbfs csgraph": lambda s: csgraph.dijkstra(a, True, s),
        "spbfs sssp": lambda s: np.stack([spbfs.sssp(g, int(x), weights=block).distances
                                          for x in s]),
    }
    try:
        import igraph

        gi = igraph.Graph(n=n, edges=np.column_stack([u, v]).tolist(), directed=True)
        gi.es["weight"] = w.tolist()
        out["igraph"] = lambda s: np.array(gi.distances(source=s.tolist(), weights="weight",
                                                        mode="out"), dtype=np.float64)
    except ImportError:
        print("igraph not installed: skipped")
    try:
        import networkit as nk

        gk = nk.Graph(n, weighted=True, directed=True)
        gk.addEdges((w, (u, v)))

        def nk_run(s: np.ndarray) -> Any:
            runs = [nk.distance.Dijkstra(gk, int(x), storePaths=False) for x in s]
            for r in runs:
                r.run()
            return runs

        out["networkit"] = nk_run
    except ImportError:
        print("networkit not installed: skipped")
    return out


def distances(name: str, result: Any) -> np.ndarray:
    """A system's result as ``(k, n)`` float64 with ``inf`` where unreachable."""
    if name == "networkit":
        d = np.array([r.getDistances() for r in result], dtype=np.float64)
        d[d > 1e300] = np.inf  # networkit's "unreachable" is the largest double
        return d
    return np.asarray(result, dtype=np.float64)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default="", help="comma-separated names (default: all)")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sources", type=int, default=4)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--markdown", action="store_true")
    args = ap.parse_args()
    print(machine_line())
    print(uptime())
    names = ["scipy", "spbfs csgraph", "spbfs sssp", "igraph", "networkit"]
    tables: dict[int, list[list[str]]] = {1: [], args.sources: []}
    for gname, edges in peer_graphs(args.graphs):
        u, v, w, n, directed = weighted(edges, args.seed)
        del edges
        deg = np.bincount(u, minlength=n)
        rng = np.random.default_rng(args.seed)
        sources = rng.choice(np.flatnonzero(deg > 0), args.sources, replace=False)
        calls = systems(u, v, w, n, directed)
        label = f"{gname} (n={n:,}, arcs={u.size:,})"
        for k in tables:
            s = sources[:k]
            ref = calls["scipy"](s)
            timed = {}
            cells = {}
            for name, call in calls.items():
                ok = np.array_equal(distances(name, call(s)), ref)
                if ok:
                    timed[name] = lambda c=call, s=s: c(s)
                else:
                    cells[name] = "WRONG"
            times = interleaved(timed, args.rounds)
            for name, t in times.items():
                cells[name] = f"{median(t) * 1e3:.1f}"
            peer = min((median(times[p]) for p in PEERS if p in times), default=np.nan)
            ours = median(times["spbfs csgraph"]) if "spbfs csgraph" in times else np.nan
            tables[k].append([label] + [cells.get(x, "-") for x in names]
                             + [f"{peer / ours:.2f}"])
            print(f"{label}, {k} source(s): " + ", ".join(f"{x} {cells.get(x, '-')}"
                                                          for x in names), flush=True)
    for k, rows in tables.items():
        print(f"\nWeighted SSSP, {k} source(s), ms (median of {args.rounds} rounds)")
        print(format_table(["graph", *[f"{x}" for x in names], "best peer / spbfs"], rows,
                           markdown=args.markdown))
    print()
    print(machine_line())
    print(uptime())


if __name__ == "__main__":
    main()
