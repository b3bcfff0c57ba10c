"""PageRank, sampled betweenness and 64-source distances: spbfs against scipy, igraph, networkit.

Every system runs on the same graph: spbfs's own adjacency of each graph of
``benchmarks/_common.PEER_GRAPHS`` (repeated edges merged, self-loops
dropped, an undirected graph as both arcs), handed to each peer. Results are
compared before anything is timed; a cell whose result differs prints WRONG.
Times are medians of ``--rounds`` interleaved rounds (rotated order) after an
untimed warm call; the last column is the fastest peer's time over spbfs's
(above 1: spbfs faster).

PageRank (damping 0.85, to an L1 change of at most 1e-9, dangling rank spread evenly)
    spbfs ``pagerank(stop="l1", tol=1e-9)``; scipy: the same power iteration written
    with ``csr @ x`` (the loop a user writes); igraph ``Graph.pagerank`` (PRPACK, its
    own solver and tolerance); networkit ``centrality.PageRank`` (L1 norm,
    ``DistributeSinks``). Equal: L1 distance to spbfs below 1e-6.
Betweenness from 4 and 64 sampled sources (non-isolated vertices, seed 1)
    spbfs ``betweenness_centrality(sources=S)``; igraph ``Graph.betweenness(sources=S)``
    (the same sums, compared up to networkx's sample scaling). networkit has no call
    for given sources: ``EstimateBetweenness(G, k)`` does the same work (k full
    sweep pairs) from its own sample, so its time is shown (marked ``*``) but its
    values are not compared and it does not enter the ratio.
Distances from 64 sources (hops, the sources drawn as above)
    spbfs ``multi_source_bfs(output="levels")``; scipy
    ``shortest_path(unweighted=True, indices=S)``; igraph ``Graph.distances(S)``
    (lists of floats: skipped above ``--igraph-cells`` entries); networkit
    ``distance.BFS`` per source. Equal: every distance, unreachable alike.

``--once`` times the betweenness tables by the checking call itself (each system once,
spbfs warmed by a one-source call first): Kronecker 20 from 64 sources takes about a
minute per system, so interleaved rounds after a warm call took three times as long and
more than 50 minutes on a loaded machine.

Example: ``python benchmarks/peers_ranking.py --graphs luxembourg_osm,kron18 --rounds 3 --markdown``
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import format_table, interleaved, median, peer_graphs, uptime

ALPHA = 0.85
TOL = 1e-9


def adjacency(edges: Any) -> tuple[sp.csr_matrix, bool]:
    """The 0/1 csr adjacency (``A[u, v]`` for ``u -> v``) every system runs on."""
    n = int(edges.n)
    a = sp.csr_matrix((np.ones(edges.src.shape[0]), (edges.src, edges.dst)), shape=(n, n))
    if not edges.directed:
        a = a + a.T
    a.setdiag(0)
    a.eliminate_zeros()
    a.data[:] = 1.0
    a.sort_indices()
    return a.tocsr(), bool(edges.directed)


def scipy_pagerank(a: sp.csr_matrix) -> np.ndarray:
    """Power iteration with ``csr @ x`` to an L1 change of at most ``TOL``."""
    n = a.shape[0]
    at = a.T.tocsr()
    deg = np.asarray(a.sum(axis=1)).ravel()
    dangling = deg == 0
    inv = np.where(dangling, 0.0, 1.0 / np.where(dangling, 1.0, deg))
    x = np.full(n, 1.0 / n)
    for _ in range(1000):
        new = ALPHA * (at @ (x * inv) + x[dangling].sum() / n) + (1.0 - ALPHA) / n
        err = np.abs(new - x).sum()
        x = new
        if err <= TOL:
            break
    return x


def sample_sources(a: sp.csr_matrix, k: int) -> np.ndarray:
    """``k`` distinct vertices with an out-edge, drawn with seed 1."""
    cand = np.flatnonzero(np.diff(a.indptr) > 0)
    return np.sort(np.random.default_rng(1).choice(cand, size=min(k, cand.shape[0]),
                                                   replace=False)).astype(np.int64)


def to_igraph(a: sp.csr_matrix, directed: bool) -> Any:
    import igraph

    c = a.tocoo() if directed else sp.triu(a).tocoo()
    return igraph.Graph(n=a.shape[0], edges=np.column_stack([c.row, c.col]), directed=directed)


def to_networkit(a: sp.csr_matrix, directed: bool) -> Any:
    import networkit as nk

    c = a.tocoo() if directed else sp.triu(a).tocoo()
    g = nk.Graph(a.shape[0], weighted=False, directed=directed)
    g.addEdges((c.row.astype(np.uint64), c.col.astype(np.uint64)))
    return g


def brandes_scale(n: int, src: np.ndarray, directed: bool) -> np.ndarray:
    """What spbfs multiplies the raw dependency sums by (``normalized=False``, a sample)."""
    from spbfs.algorithms.betweenness import _rescale

    return _rescale(np.ones(n), src, n, normalized=False, directed=directed)


class Table:
    """Rows of one algorithm: graph, one time per system, ratio of the fastest peer."""

    def __init__(self, title: str, systems: list[str]) -> None:
        self.title, self.systems, self.rows = title, systems, []

    def add(self, graph: str, times: dict[str, float | str], peers: list[str]) -> None:
        ours = times.get("spbfs")
        peer_t = [t for p, t in times.items() if p in peers and isinstance(t, float)]
        ratio = (f"{min(peer_t) / ours:.2f}" if peer_t and isinstance(ours, float) else "-")
        cells = [times.get(s, "-") for s in self.systems]
        self.rows.append([graph, *[f"{c * 1e3:.1f}" if isinstance(c, float) else c
                                   for c in cells], ratio])
        # Each row as soon as it is measured: a long run cut short keeps what it has.
        print(f"  {self.title}: " + "  ".join(
            f"{s} {c}" for s, c in zip([*self.systems, "ratio"], self.rows[-1][1:],
                                       strict=True)), flush=True)

    def render(self, markdown: bool) -> str:
        head = ["graph", *[f"{s} ms" for s in self.systems], "best peer / spbfs"]
        return f"\n{self.title}\n\n" + format_table(head, self.rows, markdown=markdown)


def timed(calls: dict[str, Callable[[], Any]], wrong: set[str], rounds: int) -> dict[str, Any]:
    t = interleaved(calls, rounds, warm=False)  # each was called once already, for checking
    return {k: ("WRONG" if k in wrong else median(v)) for k, v in t.items()}


def first_calls(calls: dict[str, Callable[[], Any]]) -> tuple[dict[str, Any], dict[str, float]]:
    """Each call once, in the given order: its result and its seconds."""
    results, seconds = {}, {}
    for k, f in calls.items():
        t0 = time.perf_counter()
        results[k] = f()
        seconds[k] = time.perf_counter() - t0
        print(f"    {k}: {seconds[k]:.1f} s", flush=True)
    return results, seconds


def run_graph(name: str, edges: Any, args: argparse.Namespace, only: set[str],
              tables: dict[str, Table]) -> None:
    """Check, then time, every system on one graph; adds a row to each table."""
    import networkit as nk
    from scipy.sparse.csgraph import shortest_path

    import spbfs
    from spbfs.algorithms import betweenness_centrality, multi_source_bfs, pagerank

    a, directed = adjacency(edges)
    n = a.shape[0]
    g = spbfs.Graph.from_matrix(a, directed=directed)
    ig_g, nk_g = to_igraph(a, directed), to_networkit(a, directed)
    print(f"{name}: n={n:,} arcs={a.nnz:,} {'directed' if directed else 'undirected'}",
          flush=True)

    if "pagerank" in only:
        def sp_pr() -> np.ndarray:
            return scipy_pagerank(a)

        def ig_pr() -> np.ndarray:
            return np.asarray(ig_g.pagerank(damping=ALPHA, directed=directed))

        def nk_pr() -> np.ndarray:
            pr = nk.centrality.PageRank(nk_g, damp=ALPHA, tol=TOL,
                                        distributeSinks=nk.centrality.SinkHandling
                                        .DistributeSinks)
            pr.norm = nk.centrality.Norm.L1_NORM
            pr.run()
            x = np.asarray(pr.scores())
            return x / x.sum()

        calls = {"spbfs": lambda: pagerank(g, tol=TOL, stop="l1", max_iter=1000).scores,
                 "scipy": sp_pr, "igraph": ig_pr, "networkit": nk_pr}
        ref = calls["spbfs"]()
        wrong = {k for k, f in calls.items() if np.abs(f() - ref).sum() > 1e-6}
        tables["pagerank"].add(name, timed(calls, wrong, args.rounds),
                               ["scipy", "igraph", "networkit"])

    for key, k in (("bc4", 4), ("bc64", 64)):
        if key not in only:
            continue
        src = sample_sources(a, k)
        scale = brandes_scale(n, src, directed)
        # igraph counts an undirected pair once from each end it is a source of: x2 raw.
        ig_factor = 1.0 if directed else 2.0

        def ours(src: np.ndarray = src) -> np.ndarray:
            return betweenness_centrality(g, sources=src, normalized=False)

        def ig_bc(src: np.ndarray = src) -> np.ndarray:
            return np.asarray(ig_g.betweenness(directed=directed, sources=src.tolist()))

        def nk_bc(k: int = k) -> Any:
            return nk.centrality.EstimateBetweenness(nk_g, k, False, True).run()

        calls = {"spbfs": ours, "igraph": ig_bc, "networkit*": nk_bc}
        if args.once:
            ours(src[:1])  # compiles (or loads) the kernels outside the clock
        results, once = first_calls(calls)
        ref = results["spbfs"]
        got = results["igraph"] * ig_factor * scale
        tol = 1e-9 * max(1.0, float(np.abs(ref).max()))
        wrong = set() if np.allclose(got, ref, rtol=1e-9, atol=tol) else {"igraph"}
        times = ({k: ("WRONG" if k in wrong else t) for k, t in once.items()} if args.once
                 else timed(calls, wrong, args.rounds))
        tables[key].add(name, times, ["igraph"])

    if "dist64" in only:
        src = sample_sources(a, 64)

        def ours_d() -> np.ndarray:
            return multi_source_bfs(g, src, output="levels").levels

        def sp_d() -> np.ndarray:
            return shortest_path(a, directed=directed, unweighted=True, indices=src)

        def ig_d() -> Any:
            return ig_g.distances(source=src.tolist(), mode="out")

        def nk_d() -> list[Any]:
            out = []
            for s in src.tolist():
                b = nk.distance.BFS(nk_g, s, storePaths=False)
                b.run()
                out.append(b.getDistances())
            return out

        calls = {"spbfs": ours_d, "scipy": sp_d, "networkit": nk_d}
        if src.shape[0] * n <= args.igraph_cells:
            calls["igraph"] = ig_d
        ref = ours_d()
        wrong = set()
        for key2, f in calls.items():
            d = np.asarray(f(), dtype=np.float64)
            d[~np.isfinite(d) | (d > n)] = -1
            if not np.array_equal(d, ref):
                wrong.add(key2)
        times = timed(calls, wrong, args.rounds)
        if "igraph" not in calls:
            times["igraph"] = "skipped"
        tables["dist64"].add(name, times, ["scipy", "igraph", "networkit"])


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", default=None, help="comma-separated names (default: all)")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--only", default="pagerank,bc4,bc64,dist64",
                    help="tables to run: pagerank, bc4, bc64, dist64")
    ap.add_argument("--once", action="store_true",
                    help="betweenness: time the checking call itself, one per system")
    ap.add_argument("--igraph-cells", type=float, default=2e7,
                    help="largest sources x n for igraph's list-of-lists distances")
    args = ap.parse_args(argv)
    only = set(args.only.split(","))
    tables = {
        "pagerank": Table("PageRank, L1 change <= 1e-9", ["spbfs", "scipy", "igraph",
                                                          "networkit"]),
        "bc4": Table("Betweenness, 4 sampled sources", ["spbfs", "igraph", "networkit*"]),
        "bc64": Table("Betweenness, 64 sampled sources", ["spbfs", "igraph", "networkit*"]),
        "dist64": Table("Distances from 64 sources (hops)", ["spbfs", "scipy", "igraph",
                                                             "networkit"]),
    }
    print(uptime())
    for name, edges in peer_graphs(args.graphs):
        run_graph(name, edges, args, only, tables)

    for key in ("pagerank", "bc4", "bc64", "dist64"):
        if key in only:
            print(tables[key].render(args.markdown))
    print(f"\n{uptime()}  ({time.strftime('%H:%M:%S')})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
