"""The ``spbfs`` command line, in one process or on a grid.

Commands: ``bench`` (Graph500 on a Kronecker graph), ``bfs``, ``info``, ``warmup``, and the
algorithms of :mod:`spbfs.algorithms` on a graph file: ``cc``, ``sssp``,
``pagerank``, ``bc``, ``triangles``. Two entry points share the commands and
their options:

``spbfs`` (:func:`main`, also ``python -m spbfs``)
    Every command but ``info`` runs in this process, unless the launch has
    several MPI ranks (``mpiexec -n P`` with P > 1) or ``--grid`` is given:
    then it runs on a process grid as below (``bench`` and ``bfs`` the 2D
    search of :mod:`spbfs.mpi`, the others their twins of
    :mod:`spbfs.algorithms.distributed`). ``info`` always runs here. Errors
    are one line ``spbfs: error: ...`` on stderr and exit status 1. The slow
    steps (generating, reading, building, searching) draw their progress on
    stderr when it is a terminal, or with ``--progress``
    (:class:`spbfs._progress.Progress`); ``bench`` reports its phases always,
    also into a log file. ``warmup`` compiles every kernel ahead
    (:func:`spbfs.warmup.warmup`).
``python -m spbfs.mpi`` (:func:`grid_main`, re-exported as ``spbfs.mpi.main``)
    The commands on a process grid, with a few options of their own
    (``--frontier-encoding``, ``bench --json``, ``bfs --validate``). ``bfs``
    reads the file in parallel (:mod:`spbfs.mpi.read`), except with
    ``--renumber``, which needs every id: then rank 0 reads it, as it does for
    the algorithm commands (the serial reader also keeps the file's values,
    the weights of ``sssp``). Errors
    every rank sees alike (a bad option, a grid that does not match the rank
    count, an unreadable file) print one line ``Error: ...`` from rank 0 and
    exit with status 2 on every rank; a failed validation exits with 1.
    Anything else raised on a single rank goes to the hook of
    :func:`~spbfs.mpi.comm.install_excepthook`, which aborts the job.

The ``debug`` setting (``SPBFS_DEBUG=1``) shows tracebacks. :mod:`spbfs.mpi`
is imported only on the grid path, so the one-process commands never load MPI.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import os
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np

from spbfs import patterns
from spbfs._progress import Progress
from spbfs.config import Config, load_config
from spbfs.edges import EdgeList
from spbfs.patterns import PATTERN_HELP, PATTERNS

__all__ = ["grid_main", "main", "run_grid_main"]

_GRID_PROG = "python -m spbfs.mpi"


def _launcher_world_size() -> int:
    """Ranks in the launch, read from the launcher's environment (no MPI init).

    These variables are the launchers' (MPICH/Hydra, Open MPI, Intel MPI,
    PMIx), not spbfs settings, so :func:`spbfs.load_config` does not read them.
    """
    for key in ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "MPI_LOCALNRANKS", "PMIX_SIZE"):
        if key in os.environ:
            try:
                return int(os.environ[key])
            except ValueError:
                pass
    return 1


# --------------------------------------------------------------------------- options


def _add_config_arguments(p: argparse.ArgumentParser, *, search: bool = True) -> None:
    """Options that build the :class:`~spbfs.Config` (``search``: the BFS's direction too;
    the algorithm commands have none)."""
    p.add_argument("--format", choices=("csr", "dcsc"), help="local block storage")
    p.add_argument("--backend", choices=("auto", "numpy", "numba", "cupy"),
                   help="kernels (a process grid runs numba)")
    if search:
        p.add_argument("--direction", choices=("auto", "top-down", "bottom-up"))
        p.add_argument("--alpha", type=float,
                       help="top-down -> bottom-up switch (Beamer alpha)")
        p.add_argument("--beta", type=float, help="bottom-up -> top-down switch (Beamer beta)")
    p.add_argument("--grid", help="process grid RxC for an MPI run, e.g. 2x2 "
                                  "(default: from the rank count)")
    p.add_argument("--config", help="TOML configuration file")
    p.add_argument("--threads", type=int, help="numba threads (per rank; default 1 when "
                                               "ranks share a machine)")
    p.add_argument("--bind", choices=("auto", "none", "core"),
                   help="pin MPI ranks to cores (auto: when a machine's ranks outnumber "
                        "its cores)")


def _add_progress_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--progress", action="store_true",
                   help="draw the progress of the slow steps on stderr even when it is not "
                        "a terminal (on a terminal they are drawn anyway)")


def _add_file_arguments(p: argparse.ArgumentParser) -> None:
    """How a graph file is read: direction, id base, renumbering."""
    p.add_argument("--directed", action="store_true", default=None, help="follow arcs")
    p.add_argument("--undirected", dest="directed", action="store_false",
                   help="treat every edge as two-way")
    p.add_argument("--one-based", action="store_true", default=None,
                   help="edge-list ids start at 1")
    p.add_argument("--renumber", action="store_true",
                   help="number the file's ids 0..k-1 in order (sparse or negative labels); "
                        "vertex options take the file's ids, --out adds the array ids")
    p.add_argument("--n", type=int, default=None,
                   help="vertex count, to insist on one far larger than the edges warrant "
                        "(must equal the count the file declares)")


#: The algorithm commands: name -> help.
_ALGORITHMS = {
    "cc": "connected components (weakly connected for a directed graph)",
    "sssp": "shortest-path distances from one vertex (the file's values as weights)",
    "pagerank": "PageRank by power iteration",
    "bc": "betweenness centrality, exact or from sampled sources",
    "triangles": "triangles through every vertex and in all",
}


def _add_algorithm_arguments(name: str, p: argparse.ArgumentParser) -> None:
    """The graph file and the options of algorithm command ``name``."""
    p.add_argument("graph", help="graph file (.mtx, edge list, .csv, .npz)")
    p.add_argument("--out", help="output .npz with the result arrays")
    _add_file_arguments(p)
    if name == "sssp":
        p.add_argument("--source", type=int, required=True, help="source vertex id (0-based)")
        p.add_argument("--unweighted", action="store_true",
                       help="every edge has length 1, whatever values the file holds")
    elif name == "pagerank":
        # Not Config.alpha (the BFS direction switch): a dest of its own.
        p.add_argument("--alpha", dest="damping", type=float, default=0.85,
                       help="damping factor (default 0.85)")
        p.add_argument("--tol", type=float, default=1e-6,
                       help="stop once the L1 change is below n * tol (default 1e-6)")
        p.add_argument("--max-iter", type=int, default=100,
                       help="iteration limit (default 100)")
        p.add_argument("--unweighted", action="store_true",
                       help="ignore the file's values (by default they weight the out-edges)")
    elif name == "bc":
        p.add_argument("-k", "--samples", type=int,
                       help="estimate from this many sampled sources (default: exact)")
        p.add_argument("--seed", type=int, help="seed of the source sample")
        p.add_argument("--normalized", action=argparse.BooleanOptionalAction, default=True,
                       help="divide by (n-1)(n-2) (default: yes)")


def _add_bench_arguments(p: argparse.ArgumentParser) -> None:
    """The Graph500 benchmark's graph and roots."""
    p.add_argument("--scale", type=int, default=18, help="log2 of the vertex count (default 18)")
    p.add_argument("--edgefactor", type=int, default=16, help="edges per vertex (default 16)")
    p.add_argument("--roots", type=int, default=64, help="number of BFS roots (default 64)")
    p.add_argument("--seed", type=int, default=1, help="generator and root seed (default 1)")
    p.add_argument("--no-validate", action="store_true", help="skip Graph500 validation")


def _add_bfs_arguments(p: argparse.ArgumentParser) -> None:
    """One search on a graph file."""
    p.add_argument("graph", help="graph file (.mtx, edge list, .csv, .npz)")
    p.add_argument("--source", type=int, required=True, help="root vertex id (0-based)")
    p.add_argument("--out", help="output .npz with arrays parents and levels")
    _add_file_arguments(p)
    p.add_argument("--reverse", action="store_true", help="follow in-edges")
    p.add_argument("--max-depth", type=int, help="stop after this many levels")
    p.add_argument("--target", type=int, help="stop once this vertex is reached")
    p.add_argument("--stats", action="store_true", help="print the per-level table")


def _add_grid_arguments(p: argparse.ArgumentParser) -> None:
    """Options of both grid commands beyond those of one process."""
    _add_config_arguments(p)
    p.add_argument("--frontier-encoding", choices=("auto", *patterns.ENCODINGS),
                   help="how frontier messages travel: "
                        + "; ".join(f"{k}: {v}" for k, v in patterns.ENCODING_HELP.items())
                        + "; auto: per message the cheapest by the cost model")
    p.add_argument("--exchange", choices=("auto", *PATTERNS),
                   help="how messages move in a processor row or column: "
                        + "; ".join(f"{k}: {v}" for k, v in PATTERN_HELP.items())
                        + "; auto: per phase by the cost model")
    p.add_argument("--butterfly-fanout", type=int, help="partners per butterfly round (>= 2)")
    p.add_argument("--network", help="emulated link: native, 1gbe, 10gbe, ib or "
                                     "LATENCY_US:GBPS (holds every message)")
    p.add_argument("--link-latency-us", type=float,
                   help="the cost model's link latency (default: measured, or --network's)")
    p.add_argument("--link-gbps", type=float,
                   help="the cost model's link bandwidth in Gbit/s")


def _parser() -> argparse.ArgumentParser:
    """The ``spbfs`` command (one process)."""
    ap = argparse.ArgumentParser(
        prog="spbfs",
        description="Direction-optimizing BFS as sparse linear algebra over semirings.",
    )
    from spbfs import __version__

    ap.add_argument("--version", action="version", version=f"spbfs {__version__}")
    sub = ap.add_subparsers(dest="command", required=True)

    b = sub.add_parser("bench", help="Graph500-style benchmark on a generated Kronecker graph")
    _add_bench_arguments(b)
    b.add_argument("--plot", help="write per-level and TEPS plots to this PNG")
    _add_progress_argument(b)
    _add_config_arguments(b)

    f = sub.add_parser("bfs", help="BFS on a graph file, writing parents and levels")
    _add_bfs_arguments(f)
    _add_progress_argument(f)
    _add_config_arguments(f)

    i = sub.add_parser("info", help="size, degrees and block memory of a graph file")
    i.add_argument("graph", help="graph file")
    _add_file_arguments(i)
    _add_progress_argument(i)

    for name, text in _ALGORITHMS.items():
        a = sub.add_parser(name, help=text)
        _add_algorithm_arguments(name, a)
        _add_progress_argument(a)
        _add_config_arguments(a, search=False)

    sub.add_parser("warmup", help="compile every kernel ahead into numba's on-disk cache "
                                  "(for images and clusters)")
    return ap


class _UsageError(Exception):
    """A command-line error on a grid (the same on every rank)."""


class _GridParser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, and prints help on rank 0 only."""

    def __init__(self, *args: Any, rank: int = 0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.rank = rank

    def error(self, message: str) -> NoReturn:
        raise _UsageError(message)

    def _print_message(self, message: str, file: Any = None) -> None:
        if self.rank == 0:
            super()._print_message(message, file)


def _grid_parser(rank: int) -> argparse.ArgumentParser:
    """``python -m spbfs.mpi`` (a process grid), printing on ``rank`` 0 only."""
    ap = _GridParser(prog=_GRID_PROG, rank=rank,
                     description="2D-distributed direction-optimizing BFS (run under mpiexec).")
    sub = ap.add_subparsers(dest="command", required=True, parser_class=_GridParser)
    b = sub.add_parser("bench", rank=rank,
                       help="Graph500-style benchmark on a Kronecker graph")
    _add_bench_arguments(b)
    b.add_argument("--validate-roots", type=int,
                   help="validate only the first K searches (default: all)")
    b.add_argument("--json", help="also write every measurement to this JSON file (rank 0)")
    _add_progress_argument(b)
    _add_grid_arguments(b)
    f = sub.add_parser("bfs", rank=rank,
                       help="one search on a graph file (read in slices by all ranks)")
    _add_bfs_arguments(f)
    f.add_argument("--validate", action="store_true", help="run the Graph500 checks")
    _add_progress_argument(f)
    _add_grid_arguments(f)
    for name, text in _ALGORITHMS.items():
        a = sub.add_parser(name, rank=rank, help=f"{text} (the file is read on rank 0)")
        _add_algorithm_arguments(name, a)
        _add_progress_argument(a)
        _add_config_arguments(a, search=False)
    return ap


def _config(args: argparse.Namespace) -> Config:
    """Defaults, the TOML file, the ``SPBFS_*`` environment, then the options given."""
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
        frontier_encoding=getattr(args, "frontier_encoding", None),
        exchange=getattr(args, "exchange", None),
        butterfly_fanout=getattr(args, "butterfly_fanout", None),
        network=getattr(args, "network", None),
        link_latency_us=getattr(args, "link_latency_us", None),
        link_gbps=getattr(args, "link_gbps", None),
    )


# --------------------------------------------------------------------------- one process


def _progress(args: argparse.Namespace, rank: int = 0) -> Progress:
    """Drawn on stderr when it is a terminal or ``--progress`` asks for it (by rank 0)."""
    if rank != 0:
        return Progress(False)
    return Progress.for_terminal(getattr(args, "progress", False))


def _read(args: argparse.Namespace, progress: Progress) -> EdgeList:
    """The graph file of a command, as its options say to read it."""
    from spbfs.io import read_graph

    with progress.step("read"):
        return read_graph(args.graph, directed=args.directed, one_based=args.one_based,
                          renumber=args.renumber, n=args.n)


def _vertex(label: int, ids: np.ndarray | None, n: int, name: str) -> int:
    """The vertex id of option ``name``: a file id, looked up when renumbered."""
    if ids is None:
        return label
    hits = np.flatnonzero(ids == label)
    if hits.size == 0:
        raise ValueError(f"--{name} {label} is not a vertex id of the file ({n} vertices "
                         f"after --renumber)")
    return int(hits[0])


def _cmd_bench(args: argparse.Namespace, cfg: Config) -> int:
    import numba

    from spbfs.bfs import bfs
    from spbfs.generators import KroneckerSource
    from spbfs.graph import Graph
    from spbfs.graph500 import run_benchmark, sample_roots
    from spbfs.warmup import warm_bench

    # Streamed: the generator is read twice, slice by slice, and the int64 edge list
    # (16 bytes per edge) never exists; validation checks the graph's own blocks.
    # Made first: it checks the options before anything runs.
    source = KroneckerSource(args.scale, args.edgefactor, seed=args.seed)
    if args.roots < 0:
        raise ValueError(f"--roots must be non-negative, got {args.roots}")
    # Every phase is reported, also into a log file or a pipe: a first run compiles
    # for a minute, and a long one runs for many.
    progress = Progress(True)
    # The kernels are compiled (or loaded from numba's cache) on a small graph through
    # the same path first, so that no time below counts compilation.
    with progress.step("warm up"):
        t_warm = warm_bench(cfg, validate=not args.no_validate)
    t0 = time.perf_counter()
    graph = Graph.from_source(source, config=cfg,
                              progress=_two_bars(progress.bar("generate"), progress.bar("build")))
    t_gen = source.seconds
    t_build = time.perf_counter() - t0 - t_gen
    m = source.num_edges
    roots = sample_roots(graph.backend.to_host(graph.out_degree), args.roots, seed=args.seed)

    ran: Counter[int] = Counter()  # the thread counts the searches ran on

    def one(root: int) -> tuple[np.ndarray, np.ndarray]:
        r = bfs(graph, int(root))
        ran[r.threads or 0] += 1
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
        "construction": "streamed",
        "bytes_per_edge": graph.nbytes / max(m, 1),
        "warmup_time": t_warm,
    }
    # Untimed: a few levels in each direction on this graph, so that numba loads
    # every kernel signature its size needs (the state's dtype) before the timed
    # loop. Three levels suffice and keep a forced direction cheap on big graphs.
    if len(roots):
        with progress.step("untimed"):
            for direction in ("top-down", "bottom-up"):
                bfs(graph, int(roots[0]), direction=direction, max_depth=3)
    header["threads"] = numba.get_num_threads()  # as the command set it (--threads)
    if len(roots):
        one(int(roots[0]))  # run_benchmark's untimed warm-up, run here to be left uncounted
    ran.clear()
    result = run_benchmark(
        one, graph, roots, validate=not args.no_validate,
        progress=progress.bar("BFS"), header=header, warmup=False,
    )
    peak = _peak_rss_bytes()  # generation, build, searches and validation
    sys.stdout.write(result.format({
        # The counts the timed searches' parallel levels ran on ("-": none ran).
        "threads_ran": " ".join(f"{k or '-'}:{c}" for k, c in sorted(ran.items())),
        "peak_rss_bytes": peak, "peak_bytes_per_edge": peak / max(m, 1)}))
    if args.plot:
        from spbfs.plot import plot_benchmark

        sample = bfs(graph, int(roots[0]))
        plot_benchmark(result, sample, args.plot)
        print(f"plot: {args.plot}")
    return 0


def _cmd_warmup(args: argparse.Namespace, cfg: Config) -> int:
    from spbfs.warmup import warmup

    warmup(sys.stdout)
    return 0


def _cmd_bfs(args: argparse.Namespace, cfg: Config) -> int:
    from spbfs.bfs import bfs
    from spbfs.graph import Graph

    progress = _progress(args)
    edges = _read(args, progress)
    graph = Graph.from_edgelist(edges, directed=args.directed, config=cfg,
                                progress=progress.bar("build"), copy=False)  # read here
    source = _vertex(args.source, edges.ids, edges.n, "source")
    target = None if args.target is None else _vertex(args.target, edges.ids, edges.n,
                                                      "target")
    r = bfs(graph, source, max_depth=args.max_depth, target=target, reverse=args.reverse)
    print(r.summary())
    if edges.ids is not None:
        print(f"renumbered: vertex k is id ids[k] of {args.graph}; --source {args.source} "
              f"is vertex {source}")
    if args.stats:
        print(r.stats.table())
    if args.out:
        _save(args.out, r.n, {"source": np.int64(source), "parents": r.parents,
                              "levels": r.levels}, edges.ids)
    return 0


def _out_path(path: str | None) -> str | None:
    """The file ``--out PATH`` writes, checked writable before any work is done.

    numpy adds ``.npz`` to a name without it, so the name is completed here
    and the message says what was really written. A run of minutes must not
    end in "No such file or directory": the folder must exist and be writable,
    and an existing file must be a writable file.

    Raises
    ------
    ValueError
        Naming ``--out`` and the problem.
    """
    if path is None:
        return None
    if not path.endswith(".npz"):
        path += ".npz"
    folder = os.path.dirname(os.path.abspath(path))
    if os.path.isdir(path):
        raise ValueError(f"--out {path}: is a directory")
    if not os.path.isdir(folder):
        raise ValueError(f"--out {path}: folder {folder} does not exist")
    if os.path.exists(path):
        if not os.access(path, os.W_OK):
            raise ValueError(f"--out {path}: the file is not writable")
    elif not os.access(folder, os.W_OK | os.X_OK):
        raise ValueError(f"--out {path}: folder {folder} is not writable")
    return path


def _save(path: str, n: int, arrays: dict[str, Any], ids: np.ndarray | None) -> None:
    """Write the result arrays that exist (and ``ids`` when renumbered) to ``path``."""
    arrays = {k: v for k, v in arrays.items() if v is not None}
    if ids is not None:
        arrays["ids"] = ids
    np.savez(path, **arrays)
    names = ", ".join(k for k in arrays if k != "source")
    print(f"wrote {path}: {names} ({n} vertices)")


def _cmd_info(args: argparse.Namespace, cfg: Config) -> int:
    from semirings.blocks import block_from_edges

    progress = _progress(args)
    edges = _read(args, progress)
    directed = bool(edges.directed) if args.directed is None else args.directed
    src, dst = edges.src, edges.dst
    loops = int(np.count_nonzero(src == dst))
    print(f"file:        {args.graph}")
    print(f"vertices:    {edges.n}")
    if edges.ids is not None:
        print(f"renumbered:  ids {edges.ids.min(initial=0)} .. {edges.ids.max(initial=0)} "
              f"as 0 .. {edges.n - 1}")
    if "count_line" in edges.meta:  # the reader took a first line as counts, not an edge
        print(f"count line:  line {edges.meta['count_line_at']}, "
              f"{' '.join(map(str, edges.meta['count_line']))} (vertices, edges)")
    if "columns" in edges.meta:
        print(f"header:      {', '.join(edges.meta['columns'])}")
    print(f"edge lines:  {edges.num_edges} ({loops} self-loops)")
    print(f"directed:    {directed}")
    for fmt in ("csr", "dcsc"):
        b = block_from_edges(fmt, dst, src, (edges.n, edges.n), symmetric=not directed,
                             drop_loops=True, index_dtype=cfg.index_dtype)
        if fmt == "csr":
            deg = np.diff(b.ptr)
            indeg = np.bincount(b.ind, minlength=edges.n)
            print(f"stored arcs: {b.nnz}")
            mean = deg.mean() if deg.size else 0.0
            # Directed, a vertex without out-edges may still be reached: not "isolated".
            print(f"out-degree:  max {deg.max(initial=0)}, mean {mean:.2f}, "
                  f"no out-edges {int(np.count_nonzero(deg == 0))}")
            if directed:
                print(f"in-degree:   max {indeg.max(initial=0)}, "
                      f"no in-edges {int(np.count_nonzero(indeg == 0))}")
            print(f"isolated:    {int(np.count_nonzero((deg == 0) & (indeg == 0)))} "
                  f"(no edges but self-loops)")
        print(f"{fmt:>4} block: {b.nbytes / 2**20:.2f} MiB ({b.index_dtype} local ids), "
              f"{b.nbytes / max(edges.num_edges, 1):.2f} B per input edge")
        del b
    peak = _peak_rss_bytes()
    print(f"peak RSS:    {peak / 2**20:.1f} MiB, {peak / max(edges.num_edges, 1):.2f} B per "
          f"input edge (reading, both blocks)")
    return 0


def _two_bars(first: Callable[[int, int], Any] | None,
              second: Callable[[int, int], Any] | None) -> Callable[[int, int], Any] | None:
    """One ``progress(i, n)`` over two bars: the first half of the steps, then the second.

    The streamed build's first pass generates and counts, its second generates again
    and places: drawn as "generate" and "build".
    """
    if first is None or second is None:
        return None

    def progress(i: int, n: int) -> None:
        half = n // 2
        if i <= half:
            first(i, half)
        else:
            second(i - half, n - half)

    return progress


def _peak_rss_bytes() -> int:
    """This process's peak resident set size so far (``ru_maxrss``), in bytes."""
    import resource

    peak = int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
    return peak if sys.platform == "darwin" else peak * 1024  # Linux counts KiB


# --------------------------------------------------------------------------- algorithms


def _without_weights(edges: EdgeList, args: argparse.Namespace) -> EdgeList:
    """The edges ``--unweighted`` leaves (sssp and pagerank read the file's values)."""
    if getattr(args, "unweighted", False) and edges.weights is not None:
        return dataclasses.replace(edges, weights=None)
    return edges


def _run_algorithm(args: argparse.Namespace, graph: Any, source: int | None) -> Any:
    """The one-process algorithm of command ``args.command`` on ``graph``."""
    from spbfs import algorithms as A

    name = args.command
    if name == "cc":
        return A.connected_components(graph)
    if name == "sssp":
        return A.sssp(graph, source)
    if name == "pagerank":
        return A.pagerank(graph, alpha=args.damping, tol=args.tol, max_iter=args.max_iter)
    if name == "bc":
        return A.betweenness_centrality(graph, k=args.samples, seed=args.seed,
                                        normalized=args.normalized)
    return A.triangle_count(graph)


def _report(args: argparse.Namespace, result: Any, n: int, ids: np.ndarray | None,
            weighted: bool, source: int | None) -> dict[str, Any]:
    """Print the summary of an algorithm's result; return the arrays ``--out`` writes."""

    def name(v: int) -> str:  # a vertex as the file names it
        return str(v if ids is None else ids[v])

    cmd = args.command
    if cmd == "cc":
        sizes = np.bincount(result.labels, minlength=result.n_components)
        big = int(sizes.argmax()) if sizes.size else 0
        print(f"connected components: {result.n_components} of {n} vertices; largest "
              f"{int(sizes.max(initial=0))} vertices (contains vertex "
              f"{name(int(result.roots[result.labels == big][0])) if n else '-'}), "
              f"{int(np.count_nonzero(sizes == 1))} single vertices; {result.rounds} rounds")
        return {"labels": result.labels, "roots": result.roots}
    if cmd == "sssp":
        d = result.distances
        reached = np.isfinite(d)
        far = int(np.flatnonzero(reached)[d[reached].argmax()])
        print(f"SSSP from {name(int(source))}: reached {int(reached.sum())} of {n} vertices, "
              f"largest distance {d[far]:g} (vertex {name(far)}), {result.rounds} rounds, "
              f"{'weighted by the file values' if weighted else 'unweighted'}")
        return {"source": np.int64(source), "distances": d}
    if cmd == "pagerank":
        sc = result.scores
        top = np.argsort(-sc, kind="stable")[:5]
        state = "converged" if result.converged else "did not converge"
        print(f"PageRank (alpha {args.damping:g}, tol {args.tol:g}, "
              f"{'weighted' if weighted else 'unweighted'}): {state} after "
              f"{result.iterations} iterations; top: "
              + ", ".join(f"{name(int(v))} {sc[v]:.6g}" for v in top))
        return {"scores": sc}
    if cmd == "bc":
        bc = result
        how = "exact" if args.samples is None else f"{args.samples} sampled sources"
        norm = "normalized" if args.normalized else "not normalized"
        top = int(np.nanargmax(bc)) if n and not np.isnan(bc).all() else 0
        print(f"betweenness ({how}, {norm}): largest {bc[top]:.6g} at vertex {name(top)}"
              if n else f"betweenness ({how}, {norm}): empty graph")
        return {"betweenness": bc}
    pv = result.per_vertex
    top = int(pv.argmax()) if n else 0
    print(f"triangles: {result.total}; most through vertex {name(top)} "
          f"({int(pv[top]) if n else 0})")
    return {"triangles": pv}


def _cmd_algorithm(args: argparse.Namespace, cfg: Config) -> int:
    from spbfs.graph import Graph

    progress = _progress(args)
    edges = _without_weights(_read(args, progress), args)
    source = (_vertex(args.source, edges.ids, edges.n, "source") if args.command == "sssp"
              else None)
    graph = Graph.from_edgelist(edges, directed=args.directed, config=cfg,
                                progress=progress.bar("build"), copy=False)  # read here
    with progress.step(args.command):
        result = _run_algorithm(args, graph, source)
    arrays = _report(args, result, graph.n, edges.ids, edges.weights is not None, source)
    if args.out:
        _save(args.out, graph.n, arrays, edges.ids)
    return 0


# --------------------------------------------------------------------------- process grid


def _out(rank: int, text: str) -> None:
    if rank == 0:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        sys.stdout.flush()


def _clean(x: Any) -> Any:
    """JSON-safe: numpy scalars to Python, NaN/inf to None."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_clean(v) for v in x]
    if isinstance(x, np.ndarray):
        return _clean(x.tolist())
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, float | np.floating):
        x = float(x)
        return None if math.isnan(x) or math.isinf(x) else x
    return x


def _phase_table(seconds: dict[str, float], messages: dict[str, float],
                 words: dict[str, float], nsearch: int) -> str:
    total = sum(seconds.values()) or 1.0
    lines = [f"per-search phase split (mean of {nsearch} searches; ms are the mean over "
             f"ranks, messages and words the sum over ranks)",
             f"{'phase':<16}{'ms/search':>11}{'share':>8}{'messages':>11}{'words':>14}"]
    for ph, s in seconds.items():
        m = f"{messages[ph]:.0f}" if ph in messages else "-"
        w = f"{words[ph]:.0f}" if ph in words else "-"
        lines.append(f"{ph:<16}{s * 1e3:>11.3f}{100 * s / total:>7.1f}%{m:>11}{w:>14}")
    lines.append(f"{'total':<16}{total * 1e3:>11.3f}{100.0:>7.1f}%"
                 f"{sum(messages.values()):>11.0f}{sum(words.values()):>14.0f}")
    return "\n".join(lines)


def _grid_config(args: argparse.Namespace) -> Config:
    """The config of a grid command; its problems are the same on every rank."""
    from spbfs.mpi import CollectiveError

    try:
        cfg = _config(args)
    except (OSError, ValueError) as exc:
        raise CollectiveError(str(exc)) from None
    if cfg.backend == "cupy":
        from spbfs.mpi.local import bfs_backend

        bfs_backend(cfg)  # the GPU grid where every rank has one, else a CollectiveError
    return cfg


def _pinned(grid: Any) -> str:
    """The core of every rank (``-`` where unpinned), gathered on rank 0."""
    from spbfs.mpi import comm as C

    cpus = C.gatherv(grid.comm, np.array([-1 if grid.cpu is None else grid.cpu]))
    if grid.rank != 0:
        return ""
    return "none" if (cpus < 0).all() else ",".join("-" if c < 0 else str(c) for c in cpus)


def _grid_bench(args: argparse.Namespace, cfg: Config, grid: Any) -> int:
    import numba

    from spbfs.graph500 import BenchmarkResult
    from spbfs.mpi import CollectiveError, DistGraph, bfs, traversed_edges
    from spbfs.mpi import comm as C
    from spbfs.mpi.bfs import COMM_PHASES, LOCAL_PHASES
    from spbfs.mpi.local import bfs_backend

    rank = grid.rank
    comm = grid.comm
    if args.roots < 1:
        raise CollectiveError(f"--roots must be at least 1, got {args.roots}")
    progress = _progress(args, rank)
    with progress.step("generate and build"):
        g = DistGraph.kronecker(args.scale, args.edgefactor, seed=args.seed, grid=grid,
                                config=cfg)
    roots = g.sample_roots(args.roots, seed=args.seed)
    if roots.size == 0:
        raise CollectiveError("no vertex has an edge: nothing to search")
    nval = 0 if args.no_validate else (roots.size if args.validate_roots is None
                                       else max(0, min(args.validate_roots, roots.size)))
    # Warm-up, untimed: first touch, and numba loading each kernel on its first
    # call with a type signature (milliseconds per kernel and rank). A few levels
    # of both directions and both frontier encodings besides, so that no load
    # falls inside a timed search: with one warm-up search, a later root whose
    # top-down level received a bitmap piece loaded ids_from_bits in its timing.
    # Each result is validated or counted before the next search, so the searches
    # share one pair of output arrays (as Graph500's reference does).
    out = (np.empty(g.hi - g.lo, np.int64), np.empty(g.hi - g.lo, np.int64))
    with progress.step("warm up"):
        bfs(g, int(roots[0]), out=out)
        warm = [("top-down", "bitmap"), ("bottom-up", "list")]
        if cfg.frontier_encoding in ("auto", "compressed"):  # the codec's kernels too
            warm += [("top-down", "compressed"), ("bottom-up", "compressed")]
        for direction, encoding in warm:
            bfs(g, int(roots[0]), direction=direction, frontier_encoding=encoding,
                max_depth=3, out=out)
    bar = progress.bar("BFS")
    nb = roots.size
    times = np.zeros(nb)
    nedges = np.zeros(nb, dtype=np.int64)
    vtimes = np.full(nb, np.nan)
    cpu = 0.0
    wall = 0.0
    bu_levels = []
    nlevels = []
    phases = COMM_PHASES + LOCAL_PHASES
    sec = dict.fromkeys(phases, 0.0)
    msgs = dict.fromkeys(COMM_PHASES, 0)
    words = dict.fromkeys(COMM_PHASES, 0)
    for k, root in enumerate(roots.tolist()):
        C.wait_barrier(comm)
        c0 = time.process_time()
        t0 = time.perf_counter()
        r = bfs(g, root, out=out)
        el = time.perf_counter() - t0
        dc = time.process_time() - c0
        red = C.allreduce(comm, np.array([el, dc]))
        times[k] = float(C.allreduce(comm, np.array([el]), "max")[0])
        cpu += float(red[1])
        wall += times[k]
        if k < nval:
            t0 = time.perf_counter()
            info = r.validate(g)
            vtimes[k] = float(C.allreduce(comm, np.array([time.perf_counter() - t0]),
                                          "max")[0])
            nedges[k] = info["component_edges"]
        else:
            nedges[k] = traversed_edges(g, r)
        bu_levels.append(r.bottomup_levels)
        nlevels.append(len(r.stats))
        for ph, s in r.phase_seconds.items():
            sec[ph] += s / nb
        for ph, v in r.messages_by_phase().items():
            msgs[ph] += v / nb
        for ph, v in r.words_by_phase().items():
            words[ph] += v / nb
        if bar is not None:
            bar(k + 1, nb)
    with np.errstate(divide="ignore"):
        teps = nedges / times
    mem = g.memory()
    stored = g.stored_entries
    header = {
        "SCALE": args.scale,
        "edgefactor": args.edgefactor,
        "graph_generation": g.generation_time,
        "num_mpi_processes": grid.size,
        "construction_time": g.construction_time,
        "grid": f"{grid.pr}x{grid.pc}",
        "format": cfg.format,
        "backend": bfs_backend(cfg),
        "direction": cfg.direction,
        "frontier_encoding": cfg.frontier_encoding,
        "exchange": cfg.exchange,
        "network": cfg.network,
        "threads_per_rank": numba.get_num_threads(),
        "pinned_cores": _pinned(grid),
        "bytes_per_edge": (mem["block"] + mem["tblock"]) / max(g.input_edges, 1),
        "cpu_seconds_per_search": cpu / nb,
        "cores_busy_during_search": cpu / wall if wall > 0 else 0.0,
    }
    # Peak resident set over all ranks (the sum: they share the machine's memory when
    # on one node), generation to the last validation.
    peak = float(C.allreduce(comm, np.array([float(_peak_rss_bytes())]))[0])
    header["peak_rss_bytes"] = int(peak)
    header["peak_bytes_per_edge"] = peak / max(g.input_edges, 1)
    result = BenchmarkResult(roots=roots, times=times, nedges=nedges, teps=teps,
                             validate_times=vtimes, header=header)
    if rank == 0:
        st = result.statistics()
        _out(rank, result.format())
        _out(rank, "\n" + _phase_table(sec, msgs, words, nb))
        if args.json:
            doc = {
                "teps": st["teps"], "time": st["time"], "nedge": st["nedge"],
                "validate": st.get("validate"), "header": {**header, "NBFS": nb},
                "phase_seconds": sec, "phase_words": words, "phase_messages": msgs,
                "n": g.n, "input_edges": g.input_edges, "bottomup_levels": bu_levels,
                "levels": nlevels, "memory": mem, "stored_entries": stored,
                "nedges": nedges, "times": times, "teps_per_search": teps,
                "validate_times": [None if math.isnan(v) else float(v) for v in vtimes],
                "roots": roots,
            }
            with open(args.json, "w", encoding="utf-8") as fh:
                json.dump(_clean(doc), fh, indent=1)
            _out(rank, f"wrote {args.json}")
    return 0


def _grid_bfs(args: argparse.Namespace, cfg: Config, grid: Any) -> int:
    from spbfs.mpi import DistGraph, bfs

    rank = grid.rank
    if args.renumber or args.n is not None:  # the parallel reader takes neither
        return _grid_bfs_renumbered(args, cfg, grid)
    with _progress(args, rank).step("read and build"):
        g = DistGraph.from_file(args.graph, directed=args.directed, one_based=args.one_based,
                                reverse=args.reverse, grid=grid, config=cfg)
    r = bfs(g, args.source, max_depth=args.max_depth, target=args.target)
    _out(rank, r.summary())
    if args.stats:
        _out(rank, r.stats.table())
    if args.validate:
        info = r.validate(g)
        _out(rank, f"validation: passed ({info['reached']} vertices reached, "
                   f"{info['component_edges']} input edges in the component)")
    if args.out:
        r.save(args.out)
        _out(rank, f"wrote {args.out}: parents, levels ({g.n} vertices)")
    return 0


def _rank0_edges(args: argparse.Namespace, grid: Any) -> tuple[EdgeList | None, int, bool]:
    """The file read by rank 0 as the options say: (its edges there, n, directed) everywhere.

    The serial reader keeps the file's values and can renumber, which the
    parallel one (:mod:`spbfs.mpi.read`) does not.
    """
    from spbfs.io import read_graph
    from spbfs.mpi import CollectiveError
    from spbfs.mpi import comm as C

    edges = None
    msg = None
    info = (0, False)
    if grid.rank == 0:
        try:
            edges = read_graph(args.graph, directed=args.directed, one_based=args.one_based,
                               renumber=args.renumber, n=args.n)
            if edges.n < 1:
                raise ValueError("the graph has no vertices")
            info = (edges.n, bool(edges.directed) if args.directed is None else args.directed)
        except (OSError, ValueError, TypeError) as exc:
            msg = f"cannot read {args.graph}: {exc}"
    C.agree(grid.comm, msg, CollectiveError)
    n, directed = C.bcast_obj(grid.comm, info)
    return edges, n, directed


def _rank0_vertex(args: argparse.Namespace, grid: Any, edges: EdgeList | None, n: int,
                  name: str) -> int | None:
    """Option ``name`` as a vertex id (looked up by rank 0 when renumbered), on every rank."""
    from spbfs.mpi import CollectiveError
    from spbfs.mpi import comm as C

    label = getattr(args, name)
    if label is None:
        return None
    msg = None
    v = label
    if grid.rank == 0 and edges is not None:
        try:
            v = _vertex(label, edges.ids, n, name)
        except ValueError as exc:
            msg = str(exc)
    C.agree(grid.comm, msg, CollectiveError)
    return int(C.bcast_obj(grid.comm, v))


def _grid_algorithm(args: argparse.Namespace, cfg: Config, grid: Any) -> int:
    """An algorithm command on the grid: its distributed twin, gathered on rank 0."""
    from spbfs.algorithms import distributed as D
    from spbfs.mpi import CollectiveError, DistGraph
    from spbfs.mpi import comm as C

    rank = grid.rank
    name = args.command
    progress = _progress(args, rank)
    with progress.step("read"):
        edges, n, directed = _rank0_edges(args, grid)
    if edges is not None:
        edges = _without_weights(edges, args)
    weighted = bool(C.bcast_obj(grid.comm, edges is not None and edges.weights is not None))
    if name == "pagerank" and weighted:
        raise CollectiveError("pagerank on a grid is unweighted: pass --unweighted to ignore "
                              "the file's values, or run it in one process")
    src = edges.src if edges is not None else np.zeros(0, np.int64)
    dst = edges.dst if edges is not None else np.zeros(0, np.int64)
    with progress.step("build"):
        g = DistGraph.from_edges(src, dst, n, directed=directed, grid=grid, config=cfg)
    source = _rank0_vertex(args, grid, edges, n, "source") if name == "sssp" else None
    with progress.step(name):
        if name == "cc":
            res = D.dist_connected_components(g)
        elif name == "sssp":
            w = None
            if weighted:
                ew = (np.asarray(edges.weights, np.float64) if edges is not None
                      and edges.weights is not None else np.zeros(0, np.float64))
                w = D.dist_weighted_block(g, src, dst, ew)
            res = D.dist_sssp(g, int(source or 0), weights=w)
        elif name == "pagerank":
            res = D.dist_pagerank(g, alpha=args.damping, tol=args.tol, max_iter=args.max_iter)
        elif name == "bc":
            res = D.dist_betweenness_centrality(g, k=args.samples, seed=args.seed,
                                                normalized=args.normalized)
        else:
            res = D.dist_triangle_count(g)
        whole = res.gather()
    if rank == 0:
        ids = edges.ids if edges is not None else None
        arrays = _report(args, whole, n, ids, weighted, source)
        if args.out:
            _save(args.out, n, arrays, ids)
    sys.stdout.flush()
    return 0


def _grid_bfs_renumbered(args: argparse.Namespace, cfg: Config, grid: Any) -> int:
    """``bfs --renumber`` (or ``--n``) on a grid: rank 0 reads and renumbers, gathers and writes.

    The parallel reader keeps the file's ids (each rank sees only its lines, and
    renumbering needs them all), so here the file goes through the serial reader.
    """
    from spbfs.mpi import DistGraph, bfs

    edges, n, directed = _rank0_edges(args, grid)
    src = edges.src if edges is not None else np.zeros(0, np.int64)
    dst = edges.dst if edges is not None else np.zeros(0, np.int64)
    if args.reverse and directed:
        src, dst = dst, src
    g = DistGraph.from_edges(src, dst, n, directed=directed, grid=grid, config=cfg)
    source = _rank0_vertex(args, grid, edges, n, "source")
    target = _rank0_vertex(args, grid, edges, n, "target")
    r = bfs(g, source, max_depth=args.max_depth, target=target)
    _out(grid.rank, r.summary())
    if args.stats:
        _out(grid.rank, r.stats.table())
    if args.validate:
        info = r.validate(g)
        _out(grid.rank, f"validation: passed ({info['reached']} vertices reached, "
                        f"{info['component_edges']} input edges in the component)")
    whole = r.gather() if args.out else None
    if whole is not None and edges is not None:
        _save(args.out, n, {"source": np.int64(source), "parents": whole.parents,
                            "levels": whole.levels}, edges.ids)
    return 0


def _cli_words(message: str) -> str:
    """A library message as the command line says it (``renumber=True`` is ``--renumber``)."""
    return message.replace("renumber=True", "--renumber")


# --------------------------------------------------------------------------- entry points


def grid_main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``python -m spbfs.mpi``; returns the exit status (collective).

    ``bench`` or ``bfs`` on a :class:`~spbfs.mpi.ProcessGrid` over all ranks,
    whatever their number (``spbfs.mpi.main`` is this function).

    Parameters
    ----------
    argv : sequence of str, optional
        ``["bench", ...]`` or ``["bfs", FILE, ...]``; default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 2 for an error every rank sees alike (printed once, by
        rank 0), 1 when a search fails validation.
    """
    from spbfs.mpi import CollectiveError, ProcessGrid
    from spbfs.mpi import comm as C
    from spbfs.validate import ValidationError

    argv = list(sys.argv[1:] if argv is None else argv)
    rank = C.mpi().COMM_WORLD.Get_rank()
    cfg = None
    commands: dict[str, Callable[[argparse.Namespace, Config, Any], int]] = {
        "bench": _grid_bench, "bfs": _grid_bfs, **dict.fromkeys(_ALGORITHMS, _grid_algorithm)}
    try:
        try:
            args = _grid_parser(rank).parse_args(argv)
        except _UsageError as exc:
            raise CollectiveError(str(exc)) from None
        try:
            args.out = _out_path(getattr(args, "out", None))
        except ValueError as exc:  # every rank checks the same path, so every rank raises
            raise CollectiveError(str(exc)) from None
        cfg = _grid_config(args)
        # One-line errors unless debugging, also for those the abort hook reports.
        C.install_excepthook(show_traceback=cfg.debug)
        grid = ProcessGrid(cfg.grid, config=cfg)
        return commands[args.command](args, cfg, grid)
    except SystemExit as exc:  # --help
        return int(exc.code or 0)
    except (CollectiveError, ValidationError) as exc:
        if rank == 0:
            if cfg is not None and cfg.debug:
                traceback.print_exc()
            sys.stderr.write(f"Error: {_cli_words(str(exc))}\n")
            sys.stderr.flush()
        return 1 if isinstance(exc, ValidationError) else 2
    finally:
        sys.stdout.flush()


def run_grid_main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run :func:`grid_main` with the abort-on-error hook and exit with its status.

    ``spbfs.mpi.run_main`` is this function.
    """
    sys.exit(_on_grid(argv))


def _on_grid(argv: Sequence[str] | None) -> int:
    from spbfs.mpi.comm import install_excepthook

    # An error on one rank must end the job: uncaught, it reaches the hook, which
    # calls MPI_Abort (caught and returned, it left the other ranks waiting). Installed
    # before the options are read, so that a failure there is one line too.
    install_excepthook(show_traceback=False)
    return int(grid_main(argv))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``spbfs`` command; returns the exit status.

    Parameters
    ----------
    argv : sequence of str, optional
        ``["bench", ...]``, ``["bfs", FILE, ...]`` or ``["info", FILE]``;
        default ``sys.argv[1:]``.

    Returns
    -------
    int
        0 on success, 1 after an error (one line on stderr), 130 when
        interrupted; on a grid, those of :func:`grid_main`.
    """
    argv = list(sys.argv[1:] if argv is None else argv)
    parser = _parser()
    # The grid commands have options of their own (--json, --frontier-encoding, ...):
    # decide where the run goes first, then let that side parse strictly.
    args, _ = parser.parse_known_args(argv)
    if args.command not in ("info", "warmup") and bool(
        _launcher_world_size() > 1 or getattr(args, "grid", None)
    ):
        return _on_grid(argv)
    args = parser.parse_args(argv)
    commands: dict[str, Callable[[argparse.Namespace, Config], int]] = {
        "bench": _cmd_bench, "bfs": _cmd_bfs, "info": _cmd_info, "warmup": _cmd_warmup,
        **dict.fromkeys(_ALGORITHMS, _cmd_algorithm)}
    cfg = None
    try:
        if hasattr(args, "out"):
            args.out = _out_path(args.out)
        cfg = _config(args)
        if cfg.threads is not None:
            import numba

            # The command's count for its whole run (a search restores its caller's count,
            # and the reports read this one).
            numba.set_num_threads(min(cfg.threads, numba.config.NUMBA_NUM_THREADS))
        return commands[args.command](args, cfg)
    except KeyboardInterrupt:
        print("spbfs: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if cfg is not None and cfg.debug:
            raise
        print(f"spbfs: error: {_cli_words(str(exc))}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
