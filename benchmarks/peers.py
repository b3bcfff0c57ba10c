"""spbfs against other BFS implementations, in one process, on one graph and one set of roots.

Peers (each skipped with a printed note when its package is missing):

``spbfs csr`` / ``spbfs dcsc``
    :func:`spbfs.bfs`, numba backend, parents and levels.
``scipy``
    ``scipy.sparse.csgraph.breadth_first_order(A, root, directed=True,
    return_predecessors=True)`` on the symmetric csr matrix (float64 data,
    int32 indices, so scipy's input validation copies nothing).
``graphblas``
    LAGraph's push-pull BFS (``LG_BreadthFirstSearch_SSGrB``) written with
    python-graphblas (:mod:`_lagraph_bfs`), parents and levels.
``igraph``
    ``igraph.Graph.bfs(root, mode="all")``: one C call returning the visit
    order, layer boundaries and parents as Python lists.
``networkit``
    ``networkit.distance.BFS(G, root, storePaths=False).run()`` (the
    distances are read after the clock stops).

Every peer is built once (build time reported, not part of the search time),
warmed up once on the first root (numba compilation, GraphBLAS
initialization), and its levels on that root are compared exactly with
spbfs's (``--check-all``: on every root); a peer that disagrees is reported as
WRONG and not timed. Then the roots are searched ``--repeat`` times, peers
interleaved round by round (each round starting with another peer) so load
changes on a shared machine hit every peer alike; a root's time is its median
over the repeats.

Reported per peer: median search time over the roots (ms), harmonic-mean TEPS
with the Graph500 edge count (:func:`spbfs.graph500.traversed_edges`: input
edge tuples inside the searched component, same count for every peer), and
the speedup of spbfs (csr) over the peer (peer median / spbfs median).

Run ``python benchmarks/peers.py --help``; see ``benchmarks/README.md``.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from _common import format_ms, format_table, load_edges, machine_line, median, set_omp_wait

PEERS = ("spbfs-csr", "spbfs-dcsc", "scipy", "graphblas", "igraph", "networkit")

#: Quoted, not measured by this script (see benchmarks/README.md).
REFERENCE_NOTE = (
    "Reference figures quoted for context (measured earlier on this machine, Kronecker scale 20, "
    "edge factor 16, 2 cores; not measured by this script): GAP (C++/OpenMP) 1.15 GTEPS "
    "(13.6 ms); direction-optimizing python-graphblas ~0.45 GTEPS (34 ms); scipy 0.08 GTEPS "
    "(200 ms)."
)


@dataclass
class Peer:
    """One BFS implementation under test.

    Attributes
    ----------
    name : str
        Row label.
    prepare : callable
        Builds the peer's own graph structure; returns the search function
        ``search(root) -> raw result``. ImportError means "not installed".
    levels : callable
        ``levels(raw result, root) -> int64 numpy levels`` (``-1`` unreached),
        called outside the timed region.
    note : str
        What exactly is timed.
    """

    name: str
    prepare: Callable[[], Callable[[int], Any]]
    levels: Callable[[Any, int], np.ndarray]
    note: str = ""
    build_s: float = float("nan")
    search: Callable[[int], Any] | None = None
    times: list[list[float]] = field(default_factory=list)  # [root][repeat]
    status: str = ""
    levels_per_search: str = ""


# --------------------------------------------------------------------------- peers


def make_peers(edges: Any, graphs: dict[str, Any], matrix: Any, directed: bool,
               semiring: str, threads: int | None = None) -> list[Peer]:
    """The peer list; heavy imports happen inside each ``prepare``."""
    import spbfs
    from spbfs.validate import tree_levels

    n = edges.n

    def spbfs_peer(fmt: str) -> Peer:
        def prepare() -> Callable[[int], Any]:
            g = graphs[fmt]
            return lambda root: spbfs.bfs(g, root)

        return Peer(f"spbfs-{fmt}", prepare, lambda r, root: r.levels,
                    note="numba, parents + levels")

    def scipy_prepare() -> Callable[[int], Any]:
        from scipy.sparse import csgraph

        return lambda root: csgraph.breadth_first_order(
            matrix, root, directed=True, return_predecessors=True)

    def scipy_levels(out: Any, root: int) -> np.ndarray:
        pred = np.asarray(out[1], dtype=np.int64)
        pred[pred < 0] = -1
        pred[root] = root
        return tree_levels(pred, root)

    def gb_prepare() -> Callable[[int], Any]:
        from _lagraph_bfs import LAGraphBFS

        if threads:
            import graphblas as gb

            gb.ss.config["nthreads"] = threads
        bfs = LAGraphBFS(matrix, symmetric=not directed, semiring=semiring)
        gb_prepare.bfs = bfs  # type: ignore[attr-defined]
        return lambda root: bfs.run(root)

    def gb_levels(out: Any, root: int) -> np.ndarray:
        return gb_prepare.bfs.levels_array(out[0])  # type: ignore[attr-defined]

    def pairs() -> tuple[np.ndarray, np.ndarray]:
        import scipy.sparse as sp

        coo = (matrix if directed else sp.triu(matrix, k=1)).tocoo()
        return coo.row.astype(np.int64), coo.col.astype(np.int64)

    def igraph_prepare() -> Callable[[int], Any]:
        import igraph

        u, v = pairs()
        g = igraph.Graph(n=n, directed=directed)
        chunk = 1 << 22
        for lo in range(0, u.size, chunk):  # bounded memory for the Python tuples
            g.add_edges(list(zip(u[lo:lo + chunk].tolist(), v[lo:lo + chunk].tolist(),
                                 strict=True)))
        mode = "out" if directed else "all"
        return lambda root: g.bfs(root, mode=mode)

    def igraph_levels(out: Any, root: int) -> np.ndarray:
        vids, layers, _ = out
        lv = np.full(n, -1, dtype=np.int64)
        layers = np.asarray(layers, dtype=np.int64)
        lv[np.asarray(vids, dtype=np.int64)] = np.repeat(np.arange(layers.size - 1),
                                                          np.diff(layers))
        return lv

    def nk_prepare() -> Callable[[int], Any]:
        import networkit as nk

        if threads:
            nk.setNumberOfThreads(threads)
        u, v = pairs()
        g = nk.Graph(n, weighted=False, directed=directed)
        g.addEdges((u, v))

        def search(root: int) -> Any:
            b = nk.distance.BFS(g, root, storePaths=False)
            b.run()
            return b

        return search

    def nk_levels(out: Any, root: int) -> np.ndarray:
        d = np.asarray(out.getDistances(), dtype=np.float64)
        return np.where(d > 1e300, -1, d).astype(np.int64)

    return [
        spbfs_peer("csr"),
        spbfs_peer("dcsc"),
        Peer("scipy", scipy_prepare, scipy_levels,
             note="csgraph.breadth_first_order, predecessors"),
        Peer("graphblas", gb_prepare, gb_levels,
             note=f"LAGraph push-pull, {semiring}_secondi, parents + levels"),
        Peer("igraph", igraph_prepare, igraph_levels, note="Graph.bfs (C), lists"),
        Peer("networkit", nk_prepare, nk_levels, note="distance.BFS(storePaths=False).run()"),
    ]


def _version(peer: str) -> str:
    mod = {"scipy": "scipy", "graphblas": "graphblas", "igraph": "igraph",
           "networkit": "networkit"}.get(peer, "spbfs")
    try:
        m = __import__(mod)
        v = getattr(m, "__version__", "?")
        if mod == "graphblas":
            try:
                import suitesparse_graphblas as ssgb

                v += f"/SS {ssgb.__version__}"
            except Exception:  # version string only
                pass
        return str(v)
    except ImportError:
        return "-"


# --------------------------------------------------------------------------- driver


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        description="Time spbfs and peer BFS implementations on the same graph and roots.")
    p.add_argument("--scale", type=int, default=20, help="Kronecker scale (default 20)")
    p.add_argument("--edgefactor", type=int, default=16, help="edges per vertex (default 16)")
    p.add_argument("--seed", type=int, default=1, help="Kronecker generator seed (default 1)")
    p.add_argument("--graph", metavar="FILE",
                   help="read this graph file instead of generating (e.g. a .mtx)")
    p.add_argument("--roots", type=int, default=16, help="search keys (default 16)")
    p.add_argument("--root-seed", type=int, default=0, help="seed of sample_roots (default 0)")
    p.add_argument("--repeat", type=int, default=1,
                   help="searches per root and peer; a root's time is the median (default 1)")
    p.add_argument("--peers", default=",".join(PEERS),
                   help=f"comma-separated subset of {', '.join(PEERS)}")
    p.add_argument("--semiring", choices=("any", "min"), default="any",
                   help="graphblas parent semiring: any_secondi (LAGraph) or min_secondi")
    p.add_argument("--check-all", action="store_true",
                   help="compare every peer's levels with spbfs's on every root, not just the "
                        "first")
    p.add_argument("--threads", type=int, default=None,
                   help="threads for numba (spbfs) and GraphBLAS/networkit (default: all cores)")
    p.add_argument("--omp-wait", choices=("unset", "passive", "active"), default="unset",
                   help="set OMP_WAIT_POLICY for numba's and GraphBLAS's OpenMP (default: leave "
                        "the environment alone); passive helps on an oversubscribed machine")
    p.add_argument("--markdown", action="store_true", help="print a markdown table")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Run the comparison and print the table; returns the exit status."""
    args = _parser().parse_args(argv)
    wanted = [p.strip() for p in args.peers.split(",") if p.strip()]
    unknown = sorted(set(wanted) - set(PEERS))
    if unknown:
        print(f"unknown peer(s) {', '.join(unknown)}; choose from {', '.join(PEERS)}",
              file=sys.stderr)
        return 2
    if args.roots < 1 or args.repeat < 1 or (args.threads is not None and args.threads < 1):
        print("--roots, --repeat and --threads must be positive", file=sys.stderr)
        return 2

    set_omp_wait(args.omp_wait)  # before numba's OpenMP layer or graphblas load

    import scipy.sparse as sp

    import spbfs
    from spbfs.graph500 import sample_roots, teps_statistics, traversed_edges

    if args.threads:
        import numba

        numba.set_num_threads(min(args.threads, numba.config.NUMBA_NUM_THREADS))
    print(machine_line())
    t0 = time.perf_counter()
    edges, desc = load_edges(args.scale, args.edgefactor, args.seed, args.graph)
    print(f"graph: {desc} (loaded in {time.perf_counter() - t0:.2f} s)")
    directed = bool(edges.directed)

    graphs: dict[str, Any] = {}
    build: dict[str, float] = {}
    for fmt in ("csr", "dcsc"):
        t0 = time.perf_counter()
        graphs[fmt] = spbfs.Graph.from_edgelist(
            edges, config=spbfs.Config(format=fmt, backend="numba"))
        build[fmt] = time.perf_counter() - t0
    gcsr = graphs["csr"]
    print(f"spbfs: {gcsr.nnz:,} stored arcs; blocks csr {gcsr.nbytes / 2**20:.1f} MiB, "
          f"dcsc {graphs['dcsc'].nbytes / 2**20:.1f} MiB, index {gcsr.out_block.index_dtype}; "
          f"built in csr {build['csr']:.2f} s, dcsc {build['dcsc']:.2f} s")
    n = gcsr.n
    # A as scipy csr sharing the csr block's arrays (float64 data, int32 indices: no copies
    # inside csgraph). The csr block of B stores B.T = A row-major.
    blk = gcsr.out_block
    matrix = sp.csr_matrix((np.ones(blk.nnz), blk.ind, blk.ptr), shape=(n, n))

    roots = sample_roots(np.asarray(gcsr.out_degree), args.roots, seed=args.root_seed)
    roots = [int(r) for r in roots]
    if not roots:
        print("no vertex has an edge: nothing to search", file=sys.stderr)
        return 1

    # Reference levels, Graph500 edge counts and level counts: from spbfs csr (also warms it).
    ref: list[np.ndarray] = []
    nedges: list[int] = []
    steps: list[int] = []
    for root in roots:
        r = spbfs.bfs(gcsr, root)
        ref.append(r.levels)
        nedges.append(traversed_edges(edges, r.levels))
        steps.append(len(r.stats))
    depth = [int(lv.max()) for lv in ref]
    print(f"roots: {len(roots)} (sample_roots seed {args.root_seed}); BFS depth "
          f"min/median/max {min(depth)}/{int(np.median(depth))}/{max(depth)}; "
          f"Graph500 edges per search median {int(np.median(nedges)):,}")

    peers = [p for p in make_peers(edges, graphs, matrix, directed, args.semiring, args.threads)
             if p.name in wanted]
    skipped: list[str] = []
    active: list[Peer] = []
    for p in peers:
        try:
            t0 = time.perf_counter()
            p.search = p.prepare()
            p.build_s = time.perf_counter() - t0
            if p.name.startswith("spbfs-"):  # its graph was built above, from the edge list
                p.build_s = build[p.name.removeprefix("spbfs-")]
        except ImportError as exc:
            skipped.append(f"{p.name}: skipped, not installed ({exc})")
            print(f"note: {p.name} skipped: cannot import ({exc})")
            continue
        except Exception as exc:  # a peer that cannot even build is reported, not fatal
            skipped.append(f"{p.name}: skipped, build failed ({type(exc).__name__}: {exc})")
            print(f"note: {p.name} skipped: build failed ({type(exc).__name__}: {exc})")
            continue
        # warm-up + correctness on the first root
        out = p.search(roots[0])
        lv = p.levels(out, roots[0])
        if not np.array_equal(lv, ref[0]):
            bad = int(np.count_nonzero(lv != ref[0]))
            p.status = f"WRONG ({bad} levels differ on root {roots[0]})"
            print(f"note: {p.name}: {p.status}; not timed")
            continue
        p.status = "ok"
        p.times = [[] for _ in roots]
        active.append(p)
        gc.collect()

    for rep in range(args.repeat):
        # Each peer searches all roots in a row, as a user would; the peers take
        # turns round by round, starting with a different one each round, so a
        # slow spell of a shared machine does not always hit the same peer.
        # (Alternating peers search by search measured spbfs 30% slower: the
        # other libraries' OpenMP threads still spin when it starts.)
        for j in range(len(active)):
            p = active[(rep + j) % len(active)]
            for i, root in enumerate(roots):
                assert p.search is not None
                t0 = time.perf_counter()
                out = p.search(root)
                p.times[i].append(time.perf_counter() - t0)
                if args.check_all and p.status == "ok":
                    lv = p.levels(out, root)
                    if not np.array_equal(lv, ref[i]):
                        p.status = f"WRONG on root {root}"
                del out
    print(f"after timing: {machine_line()}")

    base = next((p for p in active if p.name == "spbfs-csr"), None)
    base_median = median([median(t) for t in base.times]) if base else float("nan")
    high_diameter = bool(args.graph) or median(depth) >= 100
    headers = ["peer", "version", "build s", "median ms", "min ms", "hmean GTEPS",
               "spbfs-csr speedup", "levels"]
    if high_diameter:
        headers.insert(6, "us/level")
    rows: list[list[str]] = []
    for p in peers:
        if p not in active:
            continue
        per_root = np.array([median(t) for t in p.times])
        teps = np.array(nedges, dtype=np.float64) / per_root
        hmean = teps_statistics(teps)["harmonic_mean"]
        med = float(np.median(per_root))
        row = [p.name, _version(p.name), f"{p.build_s:.2f}", format_ms(med),
               format_ms(float(per_root.min())), f"{hmean / 1e9:.4f}",
               f"{med / base_median:.2f}x" if base else "-", p.status]
        if high_diameter:
            row.insert(6, f"{np.mean(per_root / np.array(steps)) * 1e6:.1f}")
        rows.append(row)
    print()
    print(format_table(headers, rows, markdown=args.markdown))
    print()
    for p in active:
        print(f"  {p.name}: {p.note}")
    for s in skipped:
        print(f"  {s}")
    for p in peers:
        if p.status.startswith("WRONG") and p not in active:
            print(f"  {p.name}: {p.status}")
    if high_diameter:
        print(f"  us/level = mean over roots of (search time / BFS levels); spbfs runs "
              f"{int(np.median(steps))} levels per search (median), depth + 1 counting the "
              f"final empty expansion.")
    gb = next((p for p in active if p.name == "graphblas"), None)
    if gb is not None:
        dirs = getattr(gb.prepare, "bfs", None)
        if dirs is not None:
            d = dirs.directions_of_last_run
            print(f"  graphblas directions on the last root (T push, B pull): "
                  f"{d if len(d) <= 40 else d[:40] + '...'}")
    r0 = spbfs.bfs(gcsr, roots[0])
    d = "".join("TB"[x] for x in r0.stats.direction)
    print(f"  spbfs directions on the first root: {d if len(d) <= 40 else d[:40] + '...'}")
    print(f"  speedup = peer median time / spbfs-csr median time; TEPS = Graph500 edge count "
          f"(input tuples in the component) / time, harmonic mean over {len(roots)} roots; "
          f"{args.repeat} search(es) per root.")
    print()
    print(REFERENCE_NOTE)
    return 0


if __name__ == "__main__":
    sys.exit(main())
