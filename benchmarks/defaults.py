"""Is the default the fast choice? ``spbfs.bfs`` as called, against its own best and scipy.

Two tables, from one interleaved run (every setting searches the same sources,
in a random order each round, source by source, so load changes hit every setting alike):

**Per call**: microseconds of one search on small inputs, where fixed costs
rule: the prebuilt karate graph (source 0), a vertex without edges of the
largest graph given (or of a generated one), a 100-vertex path (end vertex),
each as ``spbfs.bfs(g, s)`` against ``scipy.sparse.csgraph.breadth_first_order``
on the graph's csr matrix (float64 data, int32 indices: nothing for scipy to
convert); and ``list(nx.bfs_edges(G, 0, backend="spbfs"))``, and the same call
with ``nx.config.backend_priority.algos = ["spbfs"]``, against networkx's own on
karate and on a random graph of 10^4 edges (2,500 nodes).

**Per graph**: median milliseconds (median over the sources of each source's
median) of the default (``spbfs.bfs(g, s)``, nothing set), ``threads=1``, every
setting of threads (1, 2) x direction (auto, top-down) with the best of them
named, and scipy; quiet and with ``--busy`` processes (``while True: pass``)
beside it. The ratios: default / best setting and default / scipy. ``uptime``
is printed before each pass.

Graphs: the files given (``--gnutella``, ``--osm``: SNAP edge list, Matrix
Market; skipped when absent), a wiki-Vote-like and a pgp-like directed graph
(R-MAT, :func:`spbfs.generators.rmat`, directed: scale 13 / edge factor 13,
8,192 vertices and 106 k arcs, against wiki-Vote's 7,115 and 104 k; scale 14 /
edge factor 2, 16,384 vertices and 33 k arcs, against the PGP network's 10,680
and 24 k edges), the 1000 x 1000 grid (corner and centre sources), a 2-D
finite-element mesh (:func:`spbfs.generators.fe_mesh`), Kronecker at the
``--scales`` given (Graph500 parameters, undirected).

Usage (repository root, venv active)::

    python benchmarks/defaults.py --gnutella /path/p2p-Gnutella31.txt \\
        --osm /path/luxembourg_osm.mtx --busy 0 1
    python benchmarks/defaults.py --per-call-only
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
from _common import format_table, machine_line, set_omp_wait, start_busy, stop_busy, uptime

SETTINGS = [(t, d) for t in (1, 2) for d in ("auto", "top-down")]


def _interleaved(calls: dict[str, Callable[[], Any]], repeat: int) -> dict[str, float]:
    """Median seconds of each call over ``repeat`` rounds, in a new random order each round.

    Not a rotation: with one, a call always follows the same other call, and the
    two-thread settings' workers, still spinning or queued after their search on
    a busy machine, slowed the call after them in every round (scipy and the
    default after ``t2 top-down``, 20x on luxembourg_osm).
    """
    names = list(calls)
    for f in calls.values():  # warm: compilation, caches, kept scratch arrays
        f()
    times: dict[str, list[float]] = {k: [] for k in names}
    clock = time.perf_counter
    rng = np.random.default_rng(len(names) * 7919 + repeat)
    for _ in range(repeat):
        for i in rng.permutation(len(names)):
            k = names[i]
            f = calls[k]
            t0 = clock()
            f()
            times[k].append(clock() - t0)
    return {k: float(np.median(v)) for k, v in times.items()}


def _scipy_matrix(g: Any) -> Any:
    import scipy.sparse as sp

    a = sp.csr_matrix(g.to_scipy(), dtype=np.float64)
    a.indices = a.indices.astype(np.int32)
    a.indptr = a.indptr.astype(np.int32)
    return a


def _scipy_bfs(a: Any, s: int) -> Callable[[], Any]:
    from scipy.sparse.csgraph import breadth_first_order

    return lambda: breadth_first_order(a, s, directed=True, return_predecessors=True)


def per_call(big: Any, repeat: int, markdown: bool) -> None:
    """The per-call table (microseconds)."""
    import networkx as nx

    import spbfs
    from spbfs.generators import path

    karate = spbfs.datasets.karate()
    line = spbfs.Graph.from_edgelist(path(100))
    iso = int(np.flatnonzero(np.asarray(big.out_degree) == 0)[0])
    rows = []
    for name, g, s in (("karate, source 0", karate, 0),
                       (f"isolated vertex ({big.n} vertices)", big, iso),
                       ("100-vertex path, end", line, 0)):
        a = _scipy_matrix(g)
        t = _interleaved({"spbfs": lambda g=g, s=s: spbfs.bfs(g, s),
                          "scipy": _scipy_bfs(a, s)}, repeat)
        rows.append([name, "spbfs.bfs (prebuilt)", f"{t['spbfs'] * 1e6:.1f}",
                     f"{t['scipy'] * 1e6:.1f}", f"{t['spbfs'] / t['scipy']:.2f}"])
    for name, G in (("karate", nx.karate_club_graph()),
                    ("random, 10^4 edges", nx.gnm_random_graph(2500, 10_000, seed=1))):
        t = _interleaved({"spbfs": lambda G=G: list(nx.bfs_edges(G, 0, backend="spbfs")),
                          "networkx": lambda G=G: list(nx.bfs_edges(G, 0))}, repeat)
        rows.append([name, "nx.bfs_edges backend=spbfs", f"{t['spbfs'] * 1e6:.1f}",
                     f"{t['networkx'] * 1e6:.1f}", f"{t['spbfs'] / t['networkx']:.2f}"])
        nx.config.backend_priority.algos = ["spbfs"]
        try:
            t = _interleaved({"spbfs": lambda G=G: list(nx.bfs_edges(G, 0)),
                              "networkx": lambda G=G: list(nx.bfs_edges(G, 0, backend="networkx"))},
                             repeat)
        finally:
            nx.config.backend_priority.algos = []
        rows.append([name, "nx.bfs_edges, backend_priority", f"{t['spbfs'] * 1e6:.1f}",
                     f"{t['networkx'] * 1e6:.1f}", f"{t['spbfs'] / t['networkx']:.2f}"])
    print(f"\nper call, median µs of {repeat} ({uptime()})")
    print(format_table(["input", "spbfs call", "spbfs µs", "peer µs (scipy / networkx)",
                        "ratio"], rows, markdown=markdown))


def _graphs(args: argparse.Namespace) -> list[tuple[str, Any, list[int]]]:
    """``(name, graph, sources)`` of every graph of the per-graph table."""
    import spbfs
    from spbfs.generators import fe_mesh, grid2d, kronecker, rmat

    rng = np.random.default_rng(args.seed)

    def roots(g: Any) -> list[int]:
        deg = np.asarray(g.out_degree)
        have = np.flatnonzero(deg > 0)
        return rng.choice(have, size=min(args.roots, have.shape[0]), replace=False).tolist()

    out = []
    if args.gnutella and Path(args.gnutella).exists():
        g = spbfs.Graph.load(args.gnutella, directed=True)
        out.append(("p2p-Gnutella31", g, [0, *roots(g)[:args.roots - 1]]))
    for name, scale, ef in (("wiki-Vote-like (R-MAT 13/13)", 13, 13),
                            ("pgp-like (R-MAT 14/2)", 14, 2)):
        g = spbfs.Graph.from_edgelist(rmat(scale, ef, seed=args.seed), directed=True)
        out.append((name, g, roots(g)))
    if args.osm and Path(args.osm).exists():
        g = spbfs.Graph.load(args.osm)
        out.append(("luxembourg_osm", g, roots(g)))
    if args.small_only:
        return out
    grid = spbfs.Graph.from_edgelist(grid2d(1000, 1000))
    out.append(("grid 1000x1000, corner", grid, [0]))
    out.append(("grid 1000x1000, centre", grid, [500 * 1000 + 500]))
    g = spbfs.Graph.from_edgelist(fe_mesh(args.mesh, seed=args.seed))
    out.append((f"fe_mesh {args.mesh}", g, roots(g)))
    for scale in args.scales:
        g = spbfs.Graph.from_edgelist(kronecker(scale, 16, seed=args.seed))
        out.append((f"Kronecker {scale}", g, roots(g)))
    return out


def per_graph(graphs: list[tuple[str, Any, list[int]]], busy: int, repeat: int,
              markdown: bool) -> None:
    """The per-graph table (milliseconds) with ``busy`` competing processes."""
    import spbfs

    hogs = start_busy(busy)
    try:
        print(f"\nper graph, {busy} busy process(es), median over sources of the median of "
              f"{repeat} ({uptime()})")
        rows = []
        for name, g, sources in graphs:
            variants = {"default": g}
            for t, d in SETTINGS:
                variants[f"t{t} {d}"] = g.with_config(g.config.replace(threads=t, direction=d))
            a = _scipy_matrix(g)
            per: dict[str, list[float]] = {}
            for s in sources:
                calls = {k: (lambda v=v, s=s: spbfs.bfs(v, s)) for k, v in variants.items()}
                calls["scipy"] = _scipy_bfs(a, s)
                for k, v in _interleaved(calls, repeat).items():
                    per.setdefault(k, []).append(v)
            med = {k: float(np.median(v)) for k, v in per.items()}
            best = min((k for k in med if k.startswith("t")), key=med.__getitem__)
            sched = spbfs.bfs(g, sources[0]).stats.direction
            rows.append([name, f"{g.n}/{g.nnz}", f"{med['default'] * 1e3:.2f}",
                         f"{med['t1 auto'] * 1e3:.2f}", f"{best} {med[best] * 1e3:.2f}",
                         f"{med['scipy'] * 1e3:.2f}", f"{med['default'] / med[best]:.2f}",
                         f"{med['default'] / med['scipy']:.2f}",
                         f"{int(sched.sum())}/{sched.shape[0]}"])
        print(format_table(["graph", "n/arcs", "default ms", "threads=1 ms", "best setting ms",
                            "scipy ms", "default/best", "default/scipy",
                            "bottom-up levels (1st source)"], rows, markdown=markdown))
    finally:
        stop_busy(hogs)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--gnutella", help="p2p-Gnutella31.txt (SNAP edge list)")
    p.add_argument("--osm", help="luxembourg_osm.mtx (Matrix Market)")
    p.add_argument("--scales", type=int, nargs="*", default=[18, 20])
    p.add_argument("--mesh", type=int, default=500_000, help="fe_mesh points")
    p.add_argument("--busy", type=int, nargs="*", default=[0, 1])
    p.add_argument("--roots", type=int, default=4)
    p.add_argument("--repeat", type=int, default=9)
    p.add_argument("--call-repeat", type=int, default=500)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--per-call-only", action="store_true")
    p.add_argument("--per-graph-only", action="store_true")
    p.add_argument("--small-only", action="store_true",
                   help="per graph: the files and the R-MAT graphs only")
    p.add_argument("--omp-wait", choices=["active", "passive"],
                   help="OMP_WAIT_POLICY for numba's omp workers (default: unset)")
    p.add_argument("--markdown", action="store_true")
    args = p.parse_args(argv)
    set_omp_wait(args.omp_wait)

    import spbfs
    from spbfs.generators import erdos_renyi

    print(machine_line())
    if args.gnutella and Path(args.gnutella).exists():
        big = spbfs.Graph.load(args.gnutella, directed=True)
    else:
        big = spbfs.Graph.from_edgelist(erdos_renyi(60_000, m=60_000, seed=args.seed))
    if not args.per_graph_only:
        per_call(big, args.call_repeat, args.markdown)
    if args.per_call_only:
        return
    graphs = _graphs(args)
    for busy in args.busy:
        per_graph(graphs, busy, args.repeat, args.markdown)


if __name__ == "__main__":
    main()
