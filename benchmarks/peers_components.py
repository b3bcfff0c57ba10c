"""Connected components: spbfs against scipy, igraph and networkit on the comparison graphs.

Two tables, one per algorithm, on the graphs of ``_common.PEER_GRAPHS``:

``weak``
    Weakly connected components (connected components of an undirected
    graph) on every graph: :func:`spbfs.connected_components` on a
    :class:`spbfs.Graph` (numba backend), ``scipy.sparse.csgraph.connected_components(A,
    directed=True, connection='weak')`` on the csr matrix of the stored arcs,
    ``igraph.Graph.connected_components(mode='weak')`` and networkit's
    ``ConnectedComponents`` (undirected) or ``WeaklyConnectedComponents``
    (directed).
``strong``
    Strongly connected components of the directed graphs: p2p-Gnutella31 and a
    directed Kronecker graph (``--strong-scale``, edge factor 16, seed 1):
    ``connection='strong'`` in spbfs and scipy, igraph's ``mode='strong'``,
    networkit's ``StronglyConnectedComponents``.

Every system gets its own graph object, built before the clock (not timed);
a call is the computation of the component of every vertex, as the system
returns it. The results are compared before timing, as partitions (labels up
to renumbering): a system that disagrees with scipy prints WRONG and is not
timed. Then ``--rounds`` rounds, the systems interleaved and rotated
(:func:`_common.interleaved`, after one untimed warm call each: numba
compilation is not timed); the table gives the median milliseconds and
``peer / spbfs`` (below 1: the peer is faster). ``uptime`` is printed with
each table: the machine is shared.

Run ``python benchmarks/peers_components.py --help``.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import format_table, interleaved, median, peer_graphs, uptime

SYSTEMS = ("spbfs", "scipy", "igraph", "networkit")


def canonical(labels: Any) -> np.ndarray:
    """Labels renumbered by first appearance: equal for equal partitions."""
    labels = np.asarray(labels, dtype=np.int64)
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first, kind="stable")] = np.arange(first.size)
    return rank[inverse]


def systems(src: np.ndarray, dst: np.ndarray, n: int, directed: bool,
            connection: str) -> dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]]:
    """name -> (call, labels of its result); each system's graph built here, untimed."""
    from scipy.sparse import csgraph

    import spbfs

    out: dict[str, tuple[Callable[[], Any], Callable[[Any], Any]]] = {}
    g = spbfs.Graph.from_edges(src, dst, n=n, directed=directed,
                               config=spbfs.Config(backend="numba"))
    out["spbfs"] = (lambda: spbfs.connected_components(g, connection=connection),
                    lambda r: r.labels)
    a = sp.csr_matrix((np.ones(src.shape[0]), (src, dst)), shape=(n, n))
    if not directed:
        a = (a + a.T).tocsr()
    a.sum_duplicates()
    out["scipy"] = (lambda: csgraph.connected_components(a, True, connection),
                    lambda r: r[1])
    # The peers get each edge once (the upper triangle of an undirected graph).
    coo = (a if directed else sp.triu(a)).tocoo()
    u, v = coo.row.astype(np.int64), coo.col.astype(np.int64)
    try:
        import igraph

        ig = igraph.Graph(n=n, directed=directed)
        chunk = 1 << 22
        for lo in range(0, u.size, chunk):  # bounded memory for the Python tuples
            ig.add_edges(list(zip(u[lo:lo + chunk].tolist(), v[lo:lo + chunk].tolist(),
                                  strict=True)))
        out["igraph"] = (lambda: ig.connected_components(mode=connection),
                         lambda r: r.membership)
    except ImportError:
        print("# igraph not installed: skipped")
    try:
        import networkit as nk

        nkg = nk.Graph(n, directed=directed)
        nkg.addEdges((u.astype(np.uint64), v.astype(np.uint64)))
        if connection == "strong":
            kind = nk.components.StronglyConnectedComponents
        elif directed:
            kind = nk.components.WeaklyConnectedComponents
        else:
            kind = nk.components.ConnectedComponents

        def run_nk() -> Any:
            c = kind(nkg)
            c.run()
            return c

        out["networkit"] = (run_nk, lambda c: c.getPartition().getVector())
    except ImportError:
        print("# networkit not installed: skipped")
    return out


def table(title: str, graphs: list[tuple[str, np.ndarray, np.ndarray, int, bool]],
          connection: str, rounds: int, markdown: bool) -> None:
    rows = []
    for name, src, dst, n, directed in graphs:
        calls = systems(src, dst, n, directed, connection)
        want = canonical(calls["scipy"][1](calls["scipy"][0]()))
        ok, wrong = {}, []
        for sysname, (call, labels) in calls.items():
            if np.array_equal(canonical(labels(call())), want):
                ok[sysname] = call
            else:
                wrong.append(sysname)
        times = {k: median(v) for k, v in interleaved(ok, rounds).items()}
        base = times.get("spbfs", float("nan"))
        row: list[Any] = [name, f"{n:,}", f"{src.shape[0]:,}"]
        for sysname in SYSTEMS:
            if sysname in wrong:
                row += ["WRONG", ""]
            elif sysname not in times:
                row += ["-", ""]
            else:
                t = times[sysname]
                row += [f"{t * 1e3:.2f}", "" if sysname == "spbfs" else f"{t / base:.2f}"]
        rows.append(row)
    heads = ["graph", "n", "arcs"]
    for sysname in SYSTEMS:
        heads += [f"{sysname} ms", "" if sysname == "spbfs" else f"{sysname}/spbfs"]
    keep = [k for k, h in enumerate(heads) if h]
    print(f"\n{title} ({uptime()})")
    print(format_table([heads[k] for k in keep], [[r[k] for k in keep] for r in rows],
                       markdown=markdown))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--graphs", default=None,
                   help="comma-separated names from benchmarks/_common.PEER_GRAPHS (default all)")
    p.add_argument("--rounds", type=int, default=7, help="interleaved rounds (median)")
    p.add_argument("--strong-scale", type=int, default=18,
                   help="scale of the directed Kronecker graph of the strong table")
    p.add_argument("--markdown", action="store_true")
    args = p.parse_args()

    weak, strong = [], []
    for name, el in peer_graphs(args.graphs):
        directed = bool(el.directed)
        item = (name, el.src.astype(np.int64), el.dst.astype(np.int64), el.n, directed)
        weak.append(item)
        if directed:
            strong.append(item)
    table("weak components", weak, "weak", args.rounds, args.markdown)
    from spbfs.generators import kronecker

    el = kronecker(args.strong_scale, 16, seed=1)
    strong.append((f"kron{args.strong_scale} directed", el.src.astype(np.int64),
                   el.dst.astype(np.int64), el.n, True))
    table("strong components", strong, "strong", args.rounds, args.markdown)


if __name__ == "__main__":
    main()
