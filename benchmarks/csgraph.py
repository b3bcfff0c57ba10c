"""spbfs.csgraph against scipy.sparse.csgraph on the bundled graphs.

Each graph becomes the scipy csr matrix a scipy user would hold: a directed
data set as its arcs, an undirected one with both directions stored; every
arc gets a seeded random integer weight in [1, 100) (the same for both
directions of an undirected edge; west0067's own values include negatives,
which would send the weighted rows to scipy on both sides). Undirected data
sets are run with ``directed=False``, directed ones with ``directed=True``.

=========================  ==================================================
row                        call (both sides, same arguments)
=========================  ==================================================
breadth_first_order        from vertex 0
breadth_first_tree         from vertex 0
connected_components       ``connection='weak'``
...strong                  ``connection='strong'``
dijkstra unweighted        ``indices=0, unweighted=True``
shortest_path unweighted   ``indices=`` the first ``--sources`` vertices,
                           ``unweighted=True``
dijkstra weighted          ``indices=0``
dijkstra weighted, k       ``indices=`` the first 4 vertices
dijkstra, min_only         the same, ``min_only=True``
dijkstra weighted, preds   ``indices=0, return_predecessors=True``
=========================  ==================================================

Every call includes its input conversion (neither side caches one). Both
sides are warmed up once (numba compiles), then ``--rounds`` interleaved
rounds, alternating which side runs first, each sample a call repeated for
at least 5 ms (the small graphs' calls take microseconds); the table shows medians, the
scipy/spbfs ratio (> 1: spbfs faster) and whether the outputs are identical
(orders, predecessors of the traversal, labels, trees, distances; shortest-path
predecessors may legitimately differ and are not compared).

A second table measures what matching scipy's breadth-first order costs:
the exact queue search :func:`spbfs.csgraph.breadth_first_order` runs,
against :func:`spbfs.bfs` (direction-optimizing, parents by smallest id) on
the same input, conversion included, ordered by level.

Run ``python benchmarks/csgraph.py`` (``--markdown`` for the docs' tables,
``--threads 1`` to keep spbfs's parallel kernels on one thread, ``--cpu-time``
on a loaded machine, ``--busy 1`` to run beside one process that keeps a core
busy, as ``benchmarks/busy.py`` does).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from typing import Any

import numpy as np
import scipy.sparse as sp
from scipy.sparse import csgraph as scipy_csgraph

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import format_table, machine_line, median, start_busy, stop_busy, uptime

import spbfs
from spbfs import csgraph
from spbfs.csgraph import _as_csr, _config, _pattern_graph

GRAPHS = ("karate", "west0067", "luxembourg_osm", "p2p_gnutella31", "musae_git")


def load_matrix(name: str, seed: int) -> tuple[sp.csr_matrix, bool]:
    """The data set as a weighted scipy csr matrix, and whether it is directed."""
    try:
        import spbfs.datasets as ds

        e = ds.edges(name)
    except ImportError:  # a checkout without spbfs.datasets: the shared copies
        from spbfs.io import read_graph

        files = {"karate": "karate.mtx", "west0067": "west0067.mtx",
                 "luxembourg_osm": "luxembourg_osm.mtx",
                 "p2p_gnutella31": "p2p-Gnutella31.txt", "musae_git": "musae_git_edges.csv"}
        directed = {"p2p_gnutella31": True, "musae_git": False}.get(name)
        e = read_graph(os.path.join("/work/shared/data", files[name]), directed=directed)
    directed = bool(e.directed)
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 100, e.src.size).astype(np.float64)
    src, dst = np.asarray(e.src), np.asarray(e.dst)
    if not directed:
        loops = src == dst
        src, dst, w = (np.concatenate([src, dst[~loops]]), np.concatenate([dst, src[~loops]]),
                       np.concatenate([w, w[~loops]]))
    a = sp.coo_matrix((w, (src, dst)), shape=(e.n, e.n)).tocsr()
    return a, directed


def same(x: Any, y: Any) -> bool:
    """Equal outputs: tuples element-wise, arrays exactly, sparse matrices by entries."""
    if isinstance(x, tuple):
        return len(x) == len(y) and all(same(a, b) for a, b in zip(x, y, strict=True))
    if sp.issparse(x):
        return type(x) is type(y) and x.shape == y.shape and (x != y).nnz == 0
    if isinstance(x, np.ndarray):
        return x.dtype == y.dtype and x.shape == y.shape and bool(np.array_equal(x, y))
    return bool(x == y)


def distances(r: Any) -> Any:
    return r[0] if isinstance(r, tuple) else r


# Seconds a timed sample lasts at least: a call of tens of microseconds is repeated
# that long, so a sample is not one timer tick or one preemption of the process.
SAMPLE_SECONDS = 0.005


def interleaved(calls: list[Callable[[], Any]], rounds: int,
                clock: Callable[[], float] = time.perf_counter) -> list[float]:
    """Median seconds per call over ``rounds`` rounds, rotating who goes first.

    Each sample repeats a call as often as its warm-up says fills
    :data:`SAMPLE_SECONDS` (once for a call that takes longer). ``clock``:
    wall time, or ``time.process_time`` (the CPU time of every thread of the
    process: a machine's other load does not enter it, and a parallel kernel
    is charged for all its threads).
    """
    times: list[list[float]] = [[] for _ in calls]
    reps = []
    for f in calls:
        f()  # warm-up: numba compilation, page faults
        t = time.perf_counter()
        f()
        reps.append(max(1, int(SAMPLE_SECONDS / max(time.perf_counter() - t, 1e-7))))
    for r in range(rounds):
        k = r % len(calls)
        for i in list(range(k, len(calls))) + list(range(k)):
            t = clock()
            for _ in range(reps[i]):
                calls[i]()
            times[i].append((clock() - t) / reps[i])
    return [median(t) for t in times]


def cases(a: sp.csr_matrix, directed: bool, sources: int) -> list[tuple[str, Callable, bool]]:
    """(row name, call on a module, compare predecessors too)."""
    n = a.shape[0]
    idx = np.arange(min(sources, n))
    idx4 = np.arange(min(4, n))
    return [
        ("breadth_first_order", lambda m: m.breadth_first_order(a, 0, directed), True),
        ("breadth_first_tree", lambda m: m.breadth_first_tree(a, 0, directed), True),
        ("connected_components", lambda m: m.connected_components(a, directed), True),
        ("connected_components strong",
         lambda m: m.connected_components(a, directed, connection="strong"), True),
        ("dijkstra unweighted", lambda m: m.dijkstra(a, directed, 0, unweighted=True), True),
        (f"shortest_path unweighted, {idx.size} sources",
         lambda m: m.shortest_path(a, directed=directed, unweighted=True, indices=idx), True),
        ("dijkstra weighted", lambda m: m.dijkstra(a, directed, 0), True),
        (f"dijkstra weighted, {idx4.size} sources", lambda m: m.dijkstra(a, directed, idx4),
         True),
        ("dijkstra weighted, min_only", lambda m: m.dijkstra(a, directed, idx4, min_only=True),
         True),
        ("dijkstra weighted, predecessors",
         lambda m: m.dijkstra(a, directed, 0, return_predecessors=True), False),
    ]


def bfs_order_via_spbfs(a: sp.csr_matrix, directed: bool) -> np.ndarray:
    """A breadth-first order from spbfs.bfs: by level, then by id (not scipy's order)."""
    g = _pattern_graph(_as_csr(a, directed), directed, _config())
    r = spbfs.bfs(g, 0)
    reached = np.flatnonzero(r.levels >= 0)
    return reached[np.argsort(r.levels[reached], kind="stable")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--graphs", nargs="+", default=list(GRAPHS), choices=GRAPHS)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--sources", type=int, default=64,
                    help="sources of the multi-source unweighted row")
    ap.add_argument("--seed", type=int, default=1, help="seed of the weights")
    ap.add_argument("--threads", type=int, default=None,
                    help="numba threads of the spbfs kernels (default: numba's)")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time by the process's CPU time, not wall time (a loaded machine)")
    ap.add_argument("--only", nargs="+", default=None,
                    help="rows whose name contains one of these words (default: every row)")
    ap.add_argument("--busy", type=int, default=0,
                    help="processes keeping a core busy each during the run")
    args = ap.parse_args()
    hogs = start_busy(args.busy)
    try:
        run(args)
    finally:
        stop_busy(hogs)


def run(args: argparse.Namespace) -> None:
    """Both tables for ``args`` (see :func:`main`)."""
    clock = time.process_time if args.cpu_time else time.perf_counter
    if args.threads is not None:
        import numba

        os.environ["SPBFS_THREADS"] = str(args.threads)  # read by every spbfs.csgraph call
        numba.set_num_threads(args.threads)

    print(machine_line())
    print(f"{uptime()}, {args.busy} busy")
    rows = []
    order_rows = []
    for name in args.graphs:
        a, directed = load_matrix(name, args.seed)
        kind = "directed" if directed else "undirected"
        label = f"{name} (n={a.shape[0]:,}, nnz={a.nnz:,}, {kind})"
        for what, call, full in cases(a, directed, args.sources):
            if args.only and not any(word in what for word in args.only):
                continue
            ours, theirs = call(csgraph), call(scipy_csgraph)
            ok = same(ours, theirs) if full else same(distances(ours), distances(theirs))
            t_ours, t_scipy = interleaved([lambda c=call: c(csgraph),
                                           lambda c=call: c(scipy_csgraph)], args.rounds, clock)
            rows.append([label, what, f"{t_scipy * 1e3:.2f}", f"{t_ours * 1e3:.2f}",
                         f"{t_scipy / t_ours:.2f}",
                         ("yes" if ok else "NO") + ("" if full else " (distances)")])
            label = ""
        t_exact, t_dobfs = interleaved(
            [lambda a=a, d=directed: csgraph.breadth_first_order(a, 0, d, False),
             lambda a=a, d=directed: bfs_order_via_spbfs(a, d)], args.rounds, clock)
        order_rows.append([name, f"{t_exact * 1e3:.2f}", f"{t_dobfs * 1e3:.2f}",
                           f"{t_dobfs / t_exact:.2f}"])
    print(format_table(["graph", "function", "scipy ms", "spbfs ms", "scipy/spbfs",
                        "identical"], rows, markdown=args.markdown, align="llrrrl"))
    print()
    print(format_table(["graph", "exact order ms", "spbfs.bfs order ms", "spbfs.bfs/exact"],
                       order_rows, markdown=args.markdown))
    print(machine_line())
    print(f"{uptime()}, {args.busy} busy")


if __name__ == "__main__":
    main()
