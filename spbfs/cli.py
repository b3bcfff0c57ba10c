"""The ``spbfs`` command line: ``bench``, ``bfs`` and ``info``.

Under ``mpiexec -n P`` (or with ``--grid``) ``bench`` and ``bfs`` run the 2D
distributed search of :mod:`spbfs.mpi`; otherwise they run in this process.
Errors are one line on stderr and a non-zero exit, never a traceback (set
``SPBFS_DEBUG=1`` to see one).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["main"]


def _mpi_world_size() -> int:
    """Ranks in the launch, read from the launcher's environment (no MPI init)."""
    for key in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS", "PMIX_SIZE"):
        if key in os.environ:
            try:
                return int(os.environ[key])
            except ValueError:
                pass
    return 1


def add_config_arguments(p: argparse.ArgumentParser) -> None:
    """Options that build the :class:`~spbfs.Config` (shared with ``python -m spbfs.mpi``)."""
    p.add_argument("--format", choices=("csr", "dcsc"), help="local block storage")
    p.add_argument("--backend", choices=("auto", "numpy", "numba", "cupy"),
                   help="kernels (a process grid runs numba)")
    p.add_argument("--direction", choices=("auto", "top-down", "bottom-up"))
    p.add_argument("--alpha", type=float, help="top-down -> bottom-up switch (Beamer alpha)")
    p.add_argument("--beta", type=float, help="bottom-up -> top-down switch (Beamer beta)")
    p.add_argument("--grid", help="process grid RxC for an MPI run, e.g. 2x2 "
                                  "(default: from the rank count)")
    p.add_argument("--config", help="TOML configuration file")
    p.add_argument("--threads", type=int, help="numba threads (per rank; default 1 when "
                                               "ranks share a machine)")
    p.add_argument("--bind", choices=("auto", "none", "core"),
                   help="pin MPI ranks to cores (auto: when a machine's ranks outnumber "
                        "its cores)")


def add_bench_arguments(p: argparse.ArgumentParser) -> None:
    """The Graph500 benchmark's graph and roots (shared with ``python -m spbfs.mpi``)."""
    p.add_argument("--scale", type=int, default=18, help="log2 of the vertex count (default 18)")
    p.add_argument("--edgefactor", type=int, default=16, help="edges per vertex (default 16)")
    p.add_argument("--roots", type=int, default=64, help="number of BFS roots (default 64)")
    p.add_argument("--seed", type=int, default=1, help="generator and root seed (default 1)")
    p.add_argument("--no-validate", action="store_true", help="skip Graph500 validation")


def add_bfs_arguments(p: argparse.ArgumentParser) -> None:
    """One search on a graph file (shared with ``python -m spbfs.mpi``)."""
    p.add_argument("graph", help="graph file (.mtx, edge list, .csv, .npz)")
    p.add_argument("--source", type=int, required=True, help="root vertex id (0-based)")
    p.add_argument("--out", help="output .npz with arrays parents and levels")
    p.add_argument("--directed", action="store_true", default=None, help="follow arcs")
    p.add_argument("--undirected", dest="directed", action="store_false",
                   help="treat every edge as two-way")
    p.add_argument("--reverse", action="store_true", help="follow in-edges")
    p.add_argument("--max-depth", type=int, help="stop after this many levels")
    p.add_argument("--target", type=int, help="stop once this vertex is reached")
    p.add_argument("--one-based", action="store_true", default=None,
                   help="edge-list ids start at 1")
    p.add_argument("--stats", action="store_true", help="print the per-level table")


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="spbfs",
        description="Direction-optimizing BFS as sparse linear algebra over semirings.",
    )
    sub = ap.add_subparsers(dest="command", required=True)

    b = sub.add_parser("bench", help="Graph500-style benchmark on a generated Kronecker graph")
    add_bench_arguments(b)
    b.add_argument("--plot", help="write per-level and TEPS plots to this PNG")
    add_config_arguments(b)

    f = sub.add_parser("bfs", help="BFS on a graph file, writing parents and levels")
    add_bfs_arguments(f)
    add_config_arguments(f)

    i = sub.add_parser("info", help="size, degrees and block memory of a graph file")
    i.add_argument("graph", help="graph file")
    i.add_argument("--directed", action="store_true", default=None)
    i.add_argument("--undirected", dest="directed", action="store_false")
    return ap


def _config(args: argparse.Namespace) -> Any:
    from spbfs.config import load_config

    return load_config(
        getattr(args, "config", None),
        format=getattr(args, "format", None),
        backend=getattr(args, "backend", None),
        direction=getattr(args, "direction", None),
        alpha=getattr(args, "alpha", None),
        beta=getattr(args, "beta", None),
        grid=getattr(args, "grid", None),
        threads=getattr(args, "threads", None),
        bind=getattr(args, "bind", None),
    )


def _cmd_bench(args: argparse.Namespace) -> int:
    from spbfs.bfs import bfs
    from spbfs.generators import kronecker
    from spbfs.graph import Graph
    from spbfs.graph500 import ProgressBar, progress_bar, run_benchmark, sample_roots

    cfg = _config(args)
    t0 = time.perf_counter()
    big = args.scale >= 20  # a few seconds or more: worth a bar on a terminal
    edges = kronecker(args.scale, args.edgefactor, seed=args.seed,
                      progress=ProgressBar(16, label="generate") if big else None)
    t_gen = time.perf_counter() - t0
    t0 = time.perf_counter()
    graph = Graph.from_edgelist(edges, config=cfg)
    t_build = time.perf_counter() - t0
    roots = sample_roots(graph.backend.to_host(graph.out_degree), args.roots, seed=args.seed)

    def one(root: int) -> tuple[np.ndarray, np.ndarray]:
        r = bfs(graph, int(root))
        return r.parents, r.levels

    header = {
        "SCALE": args.scale,
        "edgefactor": args.edgefactor,
        "graph_generation": t_gen,
        "construction_time": t_build,
        "format": cfg.format,
        "backend": graph.backend.name,
        "direction": cfg.direction,
        "grid": "1x1",
        "bytes_per_edge": graph.nbytes / max(edges.num_edges, 1),
    }
    # Untimed: a few levels in each direction, so that numba loads every kernel
    # signature before the timed loop (its own warm-up is one auto search, after
    # which a later search still loaded a bottom-up kernel: 7-9 ms inside its
    # timing). Three levels suffice and keep a forced direction cheap on big graphs.
    if len(roots):
        for direction in ("top-down", "bottom-up"):
            bfs(graph, int(roots[0]), direction=direction, max_depth=3)
    result = run_benchmark(
        one, edges, roots, validate=not args.no_validate,
        progress=progress_bar(len(roots)), header=header,
    )
    sys.stdout.write(result.format())
    if args.plot:
        from spbfs.plot import plot_benchmark

        sample = bfs(graph, int(roots[0]))
        plot_benchmark(result, sample, args.plot)
        print(f"plot: {args.plot}")
    return 0


def _cmd_bfs(args: argparse.Namespace) -> int:
    from spbfs.bfs import bfs
    from spbfs.graph import Graph
    from spbfs.io import read_graph

    cfg = _config(args)
    edges = read_graph(args.graph, directed=args.directed, one_based=args.one_based)
    graph = Graph.from_edgelist(edges, directed=args.directed, config=cfg)
    r = bfs(graph, args.source, max_depth=args.max_depth, target=args.target,
            reverse=args.reverse)
    print(r.summary())
    if args.stats:
        print(r.stats.table())
    if args.out:
        r.save(args.out)
        print(f"wrote {args.out}: parents, levels ({r.n} vertices)")
    return 0


def _cmd_info(args: argparse.Namespace) -> int:
    from semirings.blocks import block_from_edges
    from spbfs.io import read_graph

    edges = read_graph(args.graph, directed=args.directed)
    directed = bool(edges.directed) if args.directed is None else args.directed
    src, dst = edges.src, edges.dst
    loops = int(np.count_nonzero(src == dst))
    print(f"file:        {args.graph}")
    print(f"vertices:    {edges.n}")
    print(f"edge lines:  {edges.num_edges} ({loops} self-loops)")
    print(f"directed:    {directed}")
    for fmt in ("csr", "dcsc"):
        b = block_from_edges(fmt, dst, src, (edges.n, edges.n), symmetric=not directed,
                             drop_loops=True)
        if fmt == "csr":
            deg = np.diff(b.ptr)
            print(f"stored arcs: {b.nnz}")
            mean = deg.mean() if deg.size else 0.0
            print(f"out-degree:  max {deg.max(initial=0)}, mean {mean:.2f}, "
                  f"isolated {int(np.count_nonzero(deg == 0))}")
        print(f"{fmt:>4} block: {b.nbytes / 2**20:.2f} MiB ({b.index_dtype} local ids)")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``spbfs`` command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    # The distributed entry point has options of its own (--json, --frontier-encoding,
    # ...): decide where the run goes first, then let that side parse strictly.
    args, _ = parser.parse_known_args(argv)
    distributed = args.command in ("bench", "bfs") and bool(
        _mpi_world_size() > 1 or getattr(args, "grid", None)
    )
    if distributed:
        from spbfs.mpi import main as dist_main
        from spbfs.mpi.comm import install_excepthook

        # An error on one rank must end the job: uncaught, it reaches the hook,
        # which calls MPI_Abort (caught here, it left the other ranks waiting).
        install_excepthook()
        return int(dist_main(argv))
    args = parser.parse_args(argv)
    try:
        return {"bench": _cmd_bench, "bfs": _cmd_bfs, "info": _cmd_info}[args.command](args)
    except KeyboardInterrupt:
        print("spbfs: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if os.environ.get("SPBFS_DEBUG"):
            raise
        print(f"spbfs: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
