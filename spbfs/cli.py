"""The ``spbfs`` command line: ``bench``, ``bfs`` and ``info``, in one process or on a grid.

Two entry points share the commands and their options:

``spbfs`` (:func:`main`, also ``python -m spbfs``)
    ``bench`` and ``bfs`` run in this process, unless the launch has several
    MPI ranks (``mpiexec -n P`` with P > 1) or ``--grid`` is given: then they
    run the 2D search of :mod:`spbfs.mpi` as below. ``info`` always runs here.
    Errors are one line ``spbfs: error: ...`` on stderr and exit status 1.
``python -m spbfs.mpi`` (:func:`grid_main`, re-exported as ``spbfs.mpi.main``)
    ``bench`` and ``bfs`` on a process grid, with a few options of their own
    (``--frontier-encoding``, ``bench --json``, ``bfs --validate``). Errors
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
import json
import math
import os
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

import numpy as np

from spbfs.config import Config, load_config

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


def _add_config_arguments(p: argparse.ArgumentParser) -> None:
    """Options that build the :class:`~spbfs.Config`."""
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
    p.add_argument("--directed", action="store_true", default=None, help="follow arcs")
    p.add_argument("--undirected", dest="directed", action="store_false",
                   help="treat every edge as two-way")
    p.add_argument("--reverse", action="store_true", help="follow in-edges")
    p.add_argument("--max-depth", type=int, help="stop after this many levels")
    p.add_argument("--target", type=int, help="stop once this vertex is reached")
    p.add_argument("--one-based", action="store_true", default=None,
                   help="edge-list ids start at 1")
    p.add_argument("--stats", action="store_true", help="print the per-level table")


def _add_grid_arguments(p: argparse.ArgumentParser) -> None:
    """Options of both grid commands beyond those of one process."""
    _add_config_arguments(p)
    p.add_argument("--frontier-encoding", choices=("auto", "list", "bitmap", "compressed"),
                   help="frontier messages as id lists, bitmaps, compressed ids, or per "
                        "message the cheapest by the cost model (auto)")
    p.add_argument("--exchange", choices=("auto", "p2p", "collective", "butterfly"),
                   help="how messages move in a processor row or column: posted messages, "
                        "MPI collectives, a butterfly, or per phase by the cost model (auto)")
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
    _add_config_arguments(b)

    f = sub.add_parser("bfs", help="BFS on a graph file, writing parents and levels")
    _add_bfs_arguments(f)
    _add_config_arguments(f)

    i = sub.add_parser("info", help="size, degrees and block memory of a graph file")
    i.add_argument("graph", help="graph file")
    i.add_argument("--directed", action="store_true", default=None)
    i.add_argument("--undirected", dest="directed", action="store_false")
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
    _add_grid_arguments(b)
    f = sub.add_parser("bfs", rank=rank,
                       help="one search on a graph file (read in slices by all ranks)")
    _add_bfs_arguments(f)
    f.add_argument("--validate", action="store_true", help="run the Graph500 checks")
    _add_grid_arguments(f)
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


def _cmd_bench(args: argparse.Namespace, cfg: Config) -> int:
    from spbfs.bfs import bfs
    from spbfs.generators import kronecker
    from spbfs.graph import Graph
    from spbfs.graph500 import ProgressBar, progress_bar, run_benchmark, sample_roots

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
    # which a later search still loaded a bottom-up kernel inside its timing).
    # Three levels suffice and keep a forced direction cheap on big graphs.
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


def _cmd_bfs(args: argparse.Namespace, cfg: Config) -> int:
    from spbfs.bfs import bfs
    from spbfs.graph import Graph
    from spbfs.io import read_graph

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


def _cmd_info(args: argparse.Namespace, cfg: Config) -> int:
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
        print(f"{fmt:>4} block: {b.nbytes / 2**20:.2f} MiB ({b.index_dtype} local ids)")
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
        raise CollectiveError("the distributed search runs the numba CPU kernels; "
                              "--backend cupy is not supported on a grid")
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

    rank = grid.rank
    comm = grid.comm
    if args.roots < 1:
        raise CollectiveError(f"--roots must be at least 1, got {args.roots}")
    g = DistGraph.kronecker(args.scale, args.edgefactor, seed=args.seed, grid=grid, config=cfg)
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
    bfs(g, int(roots[0]), out=out)
    warm = [("top-down", "bitmap"), ("bottom-up", "list")]
    if cfg.frontier_encoding in ("auto", "compressed"):  # the codec's kernels too
        warm += [("top-down", "compressed"), ("bottom-up", "compressed")]
    for direction, encoding in warm:
        bfs(g, int(roots[0]), direction=direction, frontier_encoding=encoding, max_depth=3,
            out=out)
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
        "backend": "numba",
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
        "bench": _grid_bench, "bfs": _grid_bfs}
    try:
        try:
            args = _grid_parser(rank).parse_args(argv)
        except _UsageError as exc:
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
            sys.stderr.write(f"Error: {exc}\n")
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
    if args.command in ("bench", "bfs") and bool(
        _launcher_world_size() > 1 or getattr(args, "grid", None)
    ):
        return _on_grid(argv)
    args = parser.parse_args(argv)
    commands: dict[str, Callable[[argparse.Namespace, Config], int]] = {
        "bench": _cmd_bench, "bfs": _cmd_bfs, "info": _cmd_info}
    cfg = None
    try:
        cfg = _config(args)
        return commands[args.command](args, cfg)
    except KeyboardInterrupt:
        print("spbfs: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:
        if cfg is not None and cfg.debug:
            raise
        print(f"spbfs: error: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
